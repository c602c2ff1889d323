package mmq

import (
	"github.com/ggsim/ggsim/f16"
	"github.com/ggsim/ggsim/quant"
	"github.com/ggsim/ggsim/sim"
	"github.com/ggsim/ggsim/sim/q8"
)

// The i-quants on the int8-MMA path: ggml_cuda_mmq_load_tiles_<type> of
// mmq-load-tiles.cuh (the TURING_MMA_AVAILABLE branches) with the vec_dot and the
// activation layout that ggml_cuda_mmq_get_util_funcs (MMA switch) and
// mmq_get_q8_1_ds_layout of mmq.cuh give each type. Every type has QK_K = 256 values per
// block, so one iteration of the tile loop loads exactly one block per row.
//
// Layout: thread kqsx (0..7) of a row handles the 32-value group kqsx of the block and
// writes x_qs[8*kqsx + 2*l + {0,1}] for its grid entries l: the values land in k order,
// x.qs[32*kqsx .. 32*kqsx+31] = group kqsx. The scales go to x_df[kqsx] (one per 32
// values) or, for the types with 16-value scales, x_df[2*kqsx + {0,1}]; a type on the
// q8_1 vec_dot writes a half2 x_ds[kqsx] instead.
//
// Load-time float arithmetic, read literally (nvcc -use_fast_math; the divisions by a
// power of two are multiplications by its exact reciprocal; d = __half2float(bxi->d)):
//
//	IQ2_XXS  d * ls / 8, ls = 2*scale + 1: FMUL(FMUL(d, I2F(ls)), 0.125)
//	IQ2_XS   ((ls & 0x0F)*d + d/2)/4 and ((ls >> 4)*d + d/2)/4:
//	         FMUL(FFMA(I2F(nibble), d, FMUL(d, 0.5)), 0.25)
//	IQ2_S    as IQ2_XS
//	IQ3_XXS  (ls*d + d/2)/2: FMUL(FFMA(I2F(ls), d, FMUL(d, 0.5)), 0.5)
//	IQ3_S    ls*d, ls = 1 + 2*nibble: FMUL(I2F(ls), d)
//	IQ1_S    d1q = d * (((qh >> 11) & 0x0E) + 1): FMUL(d, I2F(...)); delta = -0.875 or
//	         -1.125; x_ds = make_half2(d1q, d1q*delta): two float->half conversions (RN)
//
// Every one of these float products and sums is exact in float32 (d has 11 significant
// bits, the integer factors at most 5, the deltas 4), so the contraction choice (FFMA or
// FMUL+FADD, which operand pair) cannot change a bit; the only roundings are the
// conversions to half of a half2 scale.
//
// dotQ8_0_16Q8_1 (vecdot.go) was a prediction when these types were added:
// sum = fma(dB, fma(float(C0), dA0, float(C1)*dA1), sum). It reproduces the H200's
// IQ2_XS and IQ2_S MMQ cases (ggml-h200-dev-extra.gguf, batch 40) bit for bit; each
// alternative fails them: the right product fused (fma(C1, dA1, C0*dA0)) 4846 and 4814
// of 10240 elements differ, no inner fusion 3742 and 3726, the outer step unfused
// (sum + dB*inner) 5733 and 5696 (IQ2_XS and IQ2_S).

func init() {
	kernels[quant.IQ2_XXS] = &kernel{layout: q8.D4, load: loadIQ2XXS, dot: dotQ8_0Q8_1(false)}
	kernels[quant.IQ2_XS] = &kernel{layout: q8.D4, load: loadIQ2XS, dot: dotQ8_0_16Q8_1}
	kernels[quant.IQ2_S] = &kernel{layout: q8.D4, load: loadIQ2S, dot: dotQ8_0_16Q8_1}
	kernels[quant.IQ3_XXS] = &kernel{layout: q8.D4, load: loadIQ3XXS, dot: dotQ8_0Q8_1(false)}
	kernels[quant.IQ3_S] = &kernel{layout: q8.D4, load: loadIQ3S, dot: dotQ8_0Q8_1(false)}
	kernels[quant.IQ1_S] = &kernel{layout: q8.DS4, load: loadIQ1S, dot: dotQ8_1Q8_1}
}

// putInt stores the int8x4 word w as x_qs[idx] (values 4*idx..4*idx+3, little-endian).
func putInt(x *xTile, idx int, w int32) {
	for b := 0; b < 4; b++ {
		x.qs[4*idx+b] = int8(w >> (8 * b))
	}
}

// halfPlusScale is ls*d + d/2 as compiled: FFMA(I2F(ls), d, FMUL(d, 0.5)) (LLVM fuses
// the left product of an fadd of two fmuls; exact here either way, see the file comment).
func halfPlusScale(ls int32, d float32) float32 {
	return sim.FMA(sim.I2F(ls), d, sim.Mul(d, 0.5))
}

// loadIQ2XXS: per group kqsx, q2 = qs int 2*kqsx (four iq2xxs_grid indices), aux32 = qs
// int 2*kqsx+1 (four 7-bit sign groups and the 4-bit scale); x_df = d * ls / 8.
func loadIQ2XXS(m *matrix, i, kb0 int, x *xTile) {
	blk := quant.BlockIQ2_XXS(m.block(i, kb0))
	qs := blk.QsBytes()
	d := sim.H2F(blk.D())
	for kqsx := 0; kqsx < 8; kqsx++ {
		q2 := u32(qs[8*kqsx:])
		aux32 := u32(qs[8*kqsx+4:])
		for l := 0; l < 4; l++ {
			s0, s1 := sim.KsignMasks(quant.UnpackKsigns(uint8(aux32 >> (7 * l))))
			g0, g1 := sim.SignedGrid(quant.IQ2XXSGrid(uint8(q2>>(8*l))), s0, s1)
			putInt(x, 8*kqsx+2*l, g0)
			putInt(x, 8*kqsx+2*l+1, g1)
		}
		ls := int32(aux32>>27 | 1)
		x.df[kqsx] = sim.Mul(sim.Mul(d, sim.I2F(ls)), 0.125)
	}
}

// loadIQ2XS: per group kqsx, the uint16 qs[4*kqsx+l] hold a 9-bit iq2xs_grid index and 7
// sign bits (>> 9); x_df[2*kqsx+h] = ((nibble h of scales[kqsx])*d + d/2)/4.
func loadIQ2XS(m *matrix, i, kb0 int, x *xTile) {
	blk := quant.BlockIQ2_XS(m.block(i, kb0))
	d := sim.H2F(blk.D())
	sc := blk.Scales()
	for kqsx := 0; kqsx < 8; kqsx++ {
		for l := 0; l < 4; l++ {
			q2 := blk.Qs(4*kqsx + l)
			s0, s1 := sim.KsignMasks(quant.UnpackKsigns(uint8(q2 >> 9)))
			g0, g1 := sim.SignedGrid(quant.IQ2XSGrid(int(q2&0x1FF)), s0, s1)
			putInt(x, 8*kqsx+2*l, g0)
			putInt(x, 8*kqsx+2*l+1, g1)
		}
		ls := int32(sc[kqsx])
		x.df[2*kqsx+0] = sim.Mul(halfPlusScale(ls&0x0F, d), 0.25)
		x.df[2*kqsx+1] = sim.Mul(halfPlusScale(ls>>4, d), 0.25)
	}
}

// loadIQ2S: per group kqsx, grid bytes qs[4*kqsx+l] extended by qh[kqsx] (bits 2l, 2l+1
// become index bits 8, 9) into iq2s_grid indices, sign bytes qs[32+4*kqsx+l]; scales as
// IQ2_XS.
func loadIQ2S(m *matrix, i, kb0 int, x *xTile) {
	blk := quant.BlockIQ2_S(m.block(i, kb0))
	d := sim.H2F(blk.D())
	qs := blk.Qs()
	sc := blk.Scales()
	for kqsx := 0; kqsx < 8; kqsx++ {
		qh := int32(blk.Qh()[kqsx])
		for l := 0; l < 4; l++ {
			idx := int32(qs[4*kqsx+l]) | ((qh << (8 - 2*l)) & 0x300)
			s0, s1 := sim.PackedSignMasks(qs[32+4*kqsx+l])
			g0, g1 := sim.SignedGrid(quant.IQ2SGrid(int(idx)), s0, s1)
			putInt(x, 8*kqsx+2*l, g0)
			putInt(x, 8*kqsx+2*l+1, g1)
		}
		ls := int32(sc[kqsx])
		x.df[2*kqsx+0] = sim.Mul(halfPlusScale(ls&0x0F, d), 0.25)
		x.df[2*kqsx+1] = sim.Mul(halfPlusScale(ls>>4, d), 0.25)
	}
}

// loadIQ3XXS: per group kqsx, grid bytes qs[8*kqsx+2l], qs[8*kqsx+2l+1] index iq3xxs_grid
// (4 values each), aux32 = the word at qs byte 64+4*kqsx holds four 7-bit sign groups
// and the scale ls = aux32 >> 28; x_df = (ls*d + d/2)/2.
func loadIQ3XXS(m *matrix, i, kb0 int, x *xTile) {
	blk := quant.BlockIQ3_XXS(m.block(i, kb0))
	d := sim.H2F(blk.D())
	qs := blk.Qs()
	for kqsx := 0; kqsx < 8; kqsx++ {
		aux32 := blk.ScalesAndSigns(kqsx)
		for l := 0; l < 4; l++ {
			g := uint64(quant.IQ3XXSGrid(qs[8*kqsx+2*l])) | uint64(quant.IQ3XXSGrid(qs[8*kqsx+2*l+1]))<<32
			s0, s1 := sim.KsignMasks(quant.UnpackKsigns(uint8(aux32 >> (7 * l))))
			g0, g1 := sim.SignedGrid(g, s0, s1)
			putInt(x, 8*kqsx+2*l, g0)
			putInt(x, 8*kqsx+2*l+1, g1)
		}
		ls := int32(aux32 >> 28)
		x.df[kqsx] = sim.Mul(halfPlusScale(ls, d), 0.5)
	}
}

// loadIQ3S: per group kqsx, grid bytes qs[8*kqsx+2l], qs[8*kqsx+2l+1] extended by bits 2l,
// 2l+1 of qh[kqsx] to 9-bit iq3s_grid indices, sign bytes signs[4*kqsx+l];
// ls = 1 + 2*((scales[kqsx/2] >> ((2*kqsx << 1) & 4)) & 0xF), x_df = ls*d.
func loadIQ3S(m *matrix, i, kb0 int, x *xTile) {
	blk := quant.BlockIQ3_S(m.block(i, kb0))
	d := sim.H2F(blk.D())
	qs := blk.Qs()
	signs := blk.Signs()
	for kqsx := 0; kqsx < 8; kqsx++ {
		qh := int32(blk.Qh()[kqsx])
		for l := 0; l < 4; l++ {
			i0 := int32(qs[8*kqsx+2*l]) | ((qh << (8 - 2*l)) & 0x100)
			i1 := int32(qs[8*kqsx+2*l+1]) | ((qh << (7 - 2*l)) & 0x100)
			g := uint64(quant.IQ3SGrid(int(i0))) | uint64(quant.IQ3SGrid(int(i1)))<<32
			s0, s1 := sim.PackedSignMasks(signs[4*kqsx+l])
			g0, g1 := sim.SignedGrid(g, s0, s1)
			putInt(x, 8*kqsx+2*l, g0)
			putInt(x, 8*kqsx+2*l+1, g1)
		}
		ls := 1 + 2*(int32(blk.Scales()[kqsx/2]>>(((2*kqsx)<<1)&0x04))&0x0F)
		x.df[kqsx] = sim.Mul(sim.I2F(ls), d)
	}
}

// iq1sDelta is -1.0f + IQ1S_DELTA - (qh & 0x8000) * (2.0f*IQ1S_DELTA/0x8000) as the
// compiler folds it: FFMA(I2F(qh & 0x8000), -2^-17, -0.875), exactly -0.875 or -1.125.
func iq1sDelta(bit int32) float32 {
	return sim.FMA(sim.I2F(bit), -float32(2*0.125/0x8000), float32(-1+0.125))
}

// loadIQ1S: per group kqsx, grid indices qs[4*kqsx+l] | ((qh >> 3l) & 7) << 8 into
// iq1s_grid_gpu (values g+1 in {0, 1, 2} as nibbles: low nibbles values 0..3, high 4..7),
// qh = qh[kqsx]; x_ds[kqsx] = make_half2(d1q, d1q*delta) with
// d1q = h2f(d) * I2F(((qh >> 11) & 0x0E) + 1).
func loadIQ1S(m *matrix, i, kb0 int, x *xTile) {
	blk := quant.BlockIQ1_S(m.block(i, kb0))
	d := sim.H2F(blk.D())
	qs := blk.Qs()
	for kqsx := 0; kqsx < 8; kqsx++ {
		qh := int32(blk.Qh(kqsx))
		for l := 0; l < 4; l++ {
			idx := int32(qs[4*kqsx+l]) | ((qh>>(3*l))&0x07)<<8
			g := int32(quant.IQ1SGridGPU(int(idx)))
			putInt(x, 8*kqsx+2*l, g&0x0F0F0F0F)
			putInt(x, 8*kqsx+2*l+1, (g>>4)&0x0F0F0F0F)
		}
		d1q := sim.Mul(d, sim.I2F(((qh>>11)&0x0E)+1))
		delta := iq1sDelta(qh & 0x8000)
		h := f16.MakeHalf2(d1q, sim.Mul(d1q, delta))
		x.dm[kqsx] = [2]float32{sim.H2F(h.Lo), sim.H2F(h.Hi)}
	}
}
