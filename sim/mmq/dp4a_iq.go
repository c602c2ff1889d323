package mmq

import (
	"github.com/ggsim/ggsim/f16"
	"github.com/ggsim/ggsim/quant"
	"github.com/ggsim/ggsim/sim"
	"github.com/ggsim/ggsim/sim/q8"
)

// The dp4a kernels of the IQ types, Q1_0, Q2_0 and NVFP4 (mmq-load-tiles.cuh `#else`
// branches; every one writes its int8 values in k order, 8 ints per 32-value sub-block,
// and its scales where ggml_cuda_mmq_vec_dot_q8_0_q8_1_dp4a,
// ..._q8_0_16_q8_1_dp4a or ..._q8_1_q8_1_dp4a read them).

func init() {
	kernelsDP4A[quant.IQ2_XXS] = &kernel{layout: q8.D4, load: loadIQ2_XXSDP4A, dot: dp4aDotQ8_0}
	kernelsDP4A[quant.IQ2_XS] = &kernel{layout: q8.D4, load: loadIQ2_XSDP4A, dot: dp4aDotQ8_0_16}
	kernelsDP4A[quant.IQ2_S] = &kernel{layout: q8.D4, load: loadIQ2_SDP4A, dot: dp4aDotQ8_0_16}
	kernelsDP4A[quant.IQ3_XXS] = &kernel{layout: q8.D4, load: loadIQ3_XXSDP4A, dot: dp4aDotQ8_0}
	kernelsDP4A[quant.IQ3_S] = &kernel{layout: q8.D4, load: loadIQ3_SDP4A, dot: dp4aDotQ8_0}
	kernelsDP4A[quant.IQ1_S] = &kernel{layout: q8.DS4, load: loadIQ1_SDP4A, dot: dp4aDotQ8_1}
	kernelsDP4A[quant.Q1_0] = &kernel{layout: q8.D4, load: loadQ1_0DP4A, dot: dp4aDotQ8_0}
	kernelsDP4A[quant.Q2_0] = &kernel{layout: q8.D4, load: loadQ2_0DP4A, dot: dp4aDotQ8_0}
	kernelsDP4A[quant.NVFP4] = &kernel{layout: q8.D4, load: loadNVFP4DP4A, dot: dp4aDotQ8_0_16}
}

// dp4aDotQ8_0_16 is ggml_cuda_mmq_vec_dot_q8_0_16_q8_1_dp4a (IQ2_XS, IQ2_S, NVFP4): per
// 32-value block b (k01 steps of QI8_0 ints) vec_dot_q8_0_16_q8_1_impl<QI8_0> computes,
// from sumf = 0, over the two 16-value halves
//
//	sumf += d8_0[h]*sumi_h   ->  sumf = fma(dA_h, float(C_h), sumf)
//	return d8_1*sumf; sum += ->  sum = fma(dB, sumf, sum)
//
// with dA = x_df per 16 values and dB = y.d4 of the block. (The MMA path instead fuses
// fma(float(C0), dA0, float(C1)*dA1) and then fma(dB, ·, sum).)
func dp4aDotQ8_0_16(x *xTile, hd *halfDots, y0, y1 *q8.BlockMMQ, sum float32) float32 {
	for b := 0; b < 8; b++ {
		y, k := yHalf(y0, y1, b)
		c0 := hd[2*b]
		c1 := hd[2*b+1]
		sf := sim.FMA(x.df[2*b], sim.I2F(c0), 0)
		sf = sim.FMA(x.df[2*b+1], sim.I2F(c1), sf)
		sum = sim.FMA(y.D4(k), sf, sum)
	}
	return sum
}

// signed8 writes the 8 int8 grid values of g (byte j = value j) negated where bit j of
// signs is set (__vsub4(grid ^ mask, mask) with mask = __vcmpne4(signs & bit, 0)).
func signed8(dst []int8, g uint64, signs uint32) {
	for j := 0; j < 8; j++ {
		v := int8(g >> (8 * j))
		if signs>>j&1 != 0 {
			v = -v
		}
		dst[j] = v
	}
}

// iqScale16 is ((ls*d + d/2)/4) of the IQ2_XS and IQ2_S loads: d/2 and /4 are exact
// multiplications by 0.5 and 0.25, and the sum of two products contracts its left one:
// fma(float(ls), d, d*0.5) * 0.25.
func iqScale16(ls int, d float32) float32 {
	return sim.Mul(sim.FMA(float32(ls), d, sim.Mul(d, 0.5)), 0.25)
}

// loadIQ2_XXSDP4A: per sub-block s (8 bytes of qs: 4 grid indices, then aux32 with four
// 7-bit sign groups and the 4-bit scale) the signed iq2xxs_grid values, and
// x_df[s] = d * ls / 8 with ls = 2*scale+1: (d*ls)*0.125.
func loadIQ2_XXSDP4A(m *matrix, i, kb0 int, x *xTile) {
	blk := quant.BlockIQ2_XXS(m.block(i, kb0))
	qs := blk.QsBytes()
	d := sim.H2F(blk.D())
	for s := 0; s < 8; s++ {
		aux32 := u32(qs[8*s+4:])
		for l := 0; l < 4; l++ {
			signed8(x.qs[32*s+8*l:32*s+8*l+8], quant.IQ2XXSGrid(qs[8*s+l]), quant.UnpackKsigns(uint8(aux32>>(7*l))))
		}
		ls := int(aux32>>27 | 1)
		x.df[s] = sim.Mul(sim.Mul(d, float32(ls)), 0.125)
	}
}

// loadIQ2_XSDP4A: q2 = the uint16 qs[4s+l]: grid iq2xs_grid[q2 & 511], signs
// ksigns(q2 >> 9); x_df per 16 values = iqScale16(scales[s] & 15 / >> 4, d).
func loadIQ2_XSDP4A(m *matrix, i, kb0 int, x *xTile) {
	blk := quant.BlockIQ2_XS(m.block(i, kb0))
	d := sim.H2F(blk.D())
	sc := blk.Scales()
	for s := 0; s < 8; s++ {
		for l := 0; l < 4; l++ {
			q2 := blk.Qs(4*s + l)
			signed8(x.qs[32*s+8*l:32*s+8*l+8], quant.IQ2XSGrid(int(q2&0x1FF)), quant.UnpackKsigns(uint8(q2>>9)))
		}
		x.df[2*s] = iqScale16(int(sc[s]&0xF), d)
		x.df[2*s+1] = iqScale16(int(sc[s]>>4), d)
	}
}

// loadIQ2_SDP4A: grid iq2s_grid[qs[4s+l] | (qh[s] >> 2l & 3) << 8], sign bits from the
// byte qs[32+4s+l] (bit j for value j), x_df as IQ2_XS.
func loadIQ2_SDP4A(m *matrix, i, kb0 int, x *xTile) {
	blk := quant.BlockIQ2_S(m.block(i, kb0))
	d := sim.H2F(blk.D())
	qs, qh, sc := blk.Qs(), blk.Qh(), blk.Scales()
	for s := 0; s < 8; s++ {
		for l := 0; l < 4; l++ {
			idx := int(qs[4*s+l]) | int(qh[s]>>(2*l)&3)<<8
			signed8(x.qs[32*s+8*l:32*s+8*l+8], quant.IQ2SGrid(idx), uint32(qs[32+4*s+l]))
		}
		x.df[2*s] = iqScale16(int(sc[s]&0xF), d)
		x.df[2*s+1] = iqScale16(int(sc[s]>>4), d)
	}
}

// grid2 is two 4-value grid entries as one 8-value group (byte j = value j).
func grid2(lo, hi uint32) uint64 { return uint64(lo) | uint64(hi)<<32 }

// loadIQ3_XXSDP4A: per sub-block s, grid values iq3xxs_grid[q3[2l]], [q3[2l+1]] (q3 =
// qs bytes 8s..8s+7), signs ksigns(aux32 >> 7l) with aux32 = the scales-and-signs word
// s; x_df[s] = (ls*d + d/2)/2 = fma(float(ls), d, d*0.5) * 0.5 with ls = aux32 >> 28.
func loadIQ3_XXSDP4A(m *matrix, i, kb0 int, x *xTile) {
	blk := quant.BlockIQ3_XXS(m.block(i, kb0))
	d := sim.H2F(blk.D())
	qs := blk.Qs()
	for s := 0; s < 8; s++ {
		aux32 := blk.ScalesAndSigns(s)
		for l := 0; l < 4; l++ {
			g := grid2(quant.IQ3XXSGrid(qs[8*s+2*l]), quant.IQ3XXSGrid(qs[8*s+2*l+1]))
			signed8(x.qs[32*s+8*l:32*s+8*l+8], g, quant.UnpackKsigns(uint8(aux32>>(7*l))))
		}
		ls := float32(aux32 >> 28)
		x.df[s] = sim.Mul(sim.FMA(ls, d, sim.Mul(d, 0.5)), 0.5)
	}
}

// loadIQ3_SDP4A: grid iq3s_grid[qs[8s+2l+h] | (qh[s] >> (2l+h) & 1) << 8], signs from
// signs[4s+l] (bit j for value j), x_df[s] = ls*d with ls = 1 + 2*(scale nibble s%2 of
// scales[s/2]).
func loadIQ3_SDP4A(m *matrix, i, kb0 int, x *xTile) {
	blk := quant.BlockIQ3_S(m.block(i, kb0))
	d := sim.H2F(blk.D())
	qs, qh, signs, sc := blk.Qs(), blk.Qh(), blk.Signs(), blk.Scales()
	for s := 0; s < 8; s++ {
		for l := 0; l < 4; l++ {
			lo := quant.IQ3SGrid(int(qs[8*s+2*l]) | int(qh[s]>>(2*l)&1)<<8)
			hi := quant.IQ3SGrid(int(qs[8*s+2*l+1]) | int(qh[s]>>(2*l+1)&1)<<8)
			signed8(x.qs[32*s+8*l:32*s+8*l+8], grid2(lo, hi), uint32(signs[4*s+l]))
		}
		ls := 1 + 2*int(sc[s/2]>>(4*(s%2))&0xF)
		x.df[s] = sim.Mul(float32(ls), d)
	}
}

// loadIQ1_SDP4A: the unsigned grid values (0..2) of iq1s_grid_gpu[qs[4s+l] | (qh[s] >>
// 3l & 7) << 8] (low nibble of byte j = value j, high nibble = value j+4) and
// x_dm[s] = make_half2(d1q, d1q*delta): d1q = d * (2*((qh >> 12) & 7) + 1),
// delta = -1 + IQ1S_DELTA - (qh & 0x8000)*(2*IQ1S_DELTA/0x8000) (-0.875 or -1.125, exact),
// both rounded to half; the vec_dot is q8_1's, the delta meeting the y sums.
func loadIQ1_SDP4A(m *matrix, i, kb0 int, x *xTile) {
	blk := quant.BlockIQ1_S(m.block(i, kb0))
	d := sim.H2F(blk.D())
	qs := blk.Qs()
	for s := 0; s < 8; s++ {
		qh := blk.Qh(s)
		for l := 0; l < 4; l++ {
			g := quant.IQ1SGridGPU(int(qs[4*s+l]) | int(qh>>(3*l)&7)<<8)
			for j := 0; j < 4; j++ {
				x.qs[32*s+8*l+j] = int8(g >> (8 * j) & 0xF)
				x.qs[32*s+8*l+4+j] = int8(g >> (8*j + 4) & 0xF)
			}
		}
		d1q := sim.Mul(d, float32((qh>>11)&0x0E+1))
		delta := float32(-0.875)
		if qh&0x8000 != 0 {
			delta = -1.125
		}
		x.dmh[s] = f16.MakeHalf2(d1q, sim.Mul(d1q, delta))
	}
}

// loadQ1_0DP4A: the bits as ±1 in value order (bit j of qs byte j/8: set +1, clear -1;
// the __byte_perm unpacking keeps that order), x_df per 32 values = d.
func loadQ1_0DP4A(m *matrix, i, kb0 int, x *xTile) {
	for b := 0; b < 2; b++ { // QK1_0 = 128: two blocks per iteration
		blk := quant.BlockQ1_0(m.block(i, kb0+b))
		qs := blk.Qs()
		for j := 0; j < 128; j++ {
			v := int8(-1)
			if qs[j/8]>>(j%8)&1 != 0 {
				v = 1
			}
			x.qs[128*b+j] = v
		}
		d := sim.H2F(blk.D())
		for s := 0; s < 4; s++ {
			x.df[4*b+s] = d
		}
	}
}

// loadQ2_0DP4A: the crumbs minus 1 (-1..2) in value order (crumb j%4 of qs byte j/4),
// x_df per 32 values = d.
func loadQ2_0DP4A(m *matrix, i, kb0 int, x *xTile) {
	for b := 0; b < 4; b++ { // QK2_0 = 64: four blocks per iteration
		blk := quant.BlockQ2_0(m.block(i, kb0+b))
		qs := blk.Qs()
		for j := 0; j < 64; j++ {
			x.qs[64*b+j] = int8(qs[j/4]>>(2*(j%4))&3) - 1
		}
		d := sim.H2F(blk.D())
		x.df[2*b], x.df[2*b+1] = d, d
	}
}

// loadNVFP4DP4A: per 16-value sub-block s of each block, kvalues_mxfp4[nibble] (low
// nibbles of the 8 bytes, then the high nibbles) and x_df per 16 values =
// ggml_cuda_ue4m3_to_fp32(d[s]) (the halved UE4M3 scale; the dp4a path has no per-column
// y_scale: that is the native-FP4 Blackwell path only).
func loadNVFP4DP4A(m *matrix, i, kb0 int, x *xTile) {
	for b := 0; b < 4; b++ { // QK_NVFP4 = 64
		blk := quant.BlockNVFP4(m.block(i, kb0+b))
		qs := blk.Qs()
		for s := 0; s < 4; s++ {
			for j := 0; j < 8; j++ {
				x.qs[64*b+16*s+j] = quant.KValuesMXFP4[qs[8*s+j]&0xF]
				x.qs[64*b+16*s+8+j] = quant.KValuesMXFP4[qs[8*s+j]>>4]
			}
			x.df[4*b+s] = quant.UE4M3ToFP32CUDA(blk.Scale(s))
		}
	}
}
