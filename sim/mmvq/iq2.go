package mmvq

import (
	"github.com/ggsim/ggsim/quant"
	"github.com/ggsim/ggsim/sim"
	"github.com/ggsim/ggsim/sim/q8"
)

// MMVQ vec_dots of IQ2_XXS, IQ2_XS and IQ2_S (vec_dot_iq2_*_q8_1 in
// ggml-cuda/vecdotq.cuh at d99724f2b141). QK = QK_K = 256, QR = 4, QI = 16, VDR = 2:
// eight threads per super-block, thread iqs (0, 2, ..., 14) handles the 32 values of
// group ib32 = iqs/2 against the q8_1 block y[iqs/2].
//
// The integer part is exact; C's integer division truncates toward zero, as Go's does.
// The float part, read from the SASS of mul_mat_vec_q<type,1|5> and
// mul_mat_vec_q_moe<type,2> (FMA-SITES-IQ.md), is the same for the three types:
//
//	tmp = FFMA(FMUL(h2f(x.d), h2f(y.ds.x)), I2F(sumi), tmp)

func init() {
	register(TypeKernel{Type: quant.IQ2_XXS, Dot: vecDotIQ2XXS})
	register(TypeKernel{Type: quant.IQ2_XS, Dot: vecDotIQ2XS})
	register(TypeKernel{Type: quant.IQ2_S, Dot: vecDotIQ2S})
}

// iq2xxsSumi is the integer part of vec_dot_iq2_xxs_q8_1: the 32 values of group
// ib32 = iqs/2 are four grid entries iq2xxs_grid[aux8[k]] (aux8 = qs bytes 4iqs..4iqs+3)
// with 7-bit sign groups (aux32 >> 7k) & 127, aux32 = the qs word iqs+1, whose top 4 bits
// are the scale s. Returns (Σ grid·sign·y) * (2s+1) / 8 (C int arithmetic: the
// product, then a division truncating toward zero).
func iq2xxsSumi(b quant.BlockIQ2_XXS, iqs int, y *q8.Block) int32 {
	qs := b.QsBytes()
	q2 := uint32(le32(qs[4*iqs:]))
	aux32 := uint32(le32(qs[4*(iqs+1):]))
	var sumi int32
	for k0 := 0; k0 < 8; k0 += 2 {
		grid := quant.IQ2XXSGrid(uint8(q2 >> (8 * (k0 / 2))))
		signs0, signs1 := sim.KsignMasks(quant.UnpackKsigns(uint8(aux32 >> (7 * k0 / 2))))
		g0, g1 := sim.SignedGrid(grid, signs0, signs1)
		sumi = sim.Dp4a(g0, y.Int(k0), sumi)
		sumi = sim.Dp4a(g1, y.Int(k0+1), sumi)
	}
	ls := int32(aux32>>27 | 1) // scale*2 + 1
	return sumi * ls / 8
}

// vecDotIQ2XXS is vec_dot_iq2_xxs_q8_1 plus the accumulation (see the file comment).
func vecDotIQ2XXS(tmp float32, xrow []byte, kbx, iqs int, y []q8.Block) float32 {
	b := quant.IQ2_XXSBlock(xrow, kbx)
	yb := &y[iqs/2]
	sumi := iq2xxsSumi(b, iqs, yb)
	return sim.FMA(dxdy(sim.H2F(b.D()), yb), sim.I2F(sumi), tmp)
}

// iq2ScaleSums is the scale step shared by IQ2_XS and IQ2_S:
// (sumi0*ls0 + sumi1*ls1 + (sumi0 + sumi1)/2)/4 in C int arithmetic, with sumi0 the dot of
// values 0..15 of the group and sumi1 of values 16..31.
func iq2ScaleSums(sumi0, sumi1, ls0, ls1 int32) int32 {
	return (sumi0*ls0 + sumi1*ls1 + (sumi0+sumi1)/2) / 4
}

// iq2xsSumi is the integer part of vec_dot_iq2_xs_q8_1: the four uint16 qs[2iqs..2iqs+3]
// each hold a 9-bit iq2xs_grid index and 7 sign bits (>> 9); the scale byte
// scales[iqs/2] gives ls0 (low nibble, values 0..15) and ls1 (high, values 16..31).
func iq2xsSumi(b quant.BlockIQ2_XS, iqs int, y *q8.Block) int32 {
	sc := b.Scales()[iqs/2]
	ls0, ls1 := int32(sc&0x0F), int32(sc>>4)
	var sumi [2]int32
	for l0 := 0; l0 < 8; l0 += 2 {
		q2 := b.Qs(2*iqs + l0/2)
		grid := quant.IQ2XSGrid(int(q2 & 0x1FF))
		signs0, signs1 := sim.KsignMasks(quant.UnpackKsigns(uint8(q2 >> 9)))
		gl, gh := sim.SignedGrid(grid, signs0, signs1)
		h := l0 / 4
		sumi[h] = sim.Dp4a(gl, y.Int(l0), sumi[h])
		sumi[h] = sim.Dp4a(gh, y.Int(l0+1), sumi[h])
	}
	return iq2ScaleSums(sumi[0], sumi[1], ls0, ls1)
}

// vecDotIQ2XS is vec_dot_iq2_xs_q8_1 plus the accumulation (see the file comment).
func vecDotIQ2XS(tmp float32, xrow []byte, kbx, iqs int, y []q8.Block) float32 {
	b := quant.IQ2_XSBlock(xrow, kbx)
	yb := &y[iqs/2]
	sumi := iq2xsSumi(b, iqs, yb)
	return sim.FMA(dxdy(sim.H2F(b.D()), yb), sim.I2F(sumi), tmp)
}

// iq2sSumi is the integer part of vec_dot_iq2_s_q8_1: group ib32 = iqs/2 has the grid
// bytes qs[4ib32..4ib32+3], extended by 2 bits each from qh[ib32] (bits 2k, 2k+1 become
// index bits 8, 9 of entry k) into iq2s_grid indices, and the sign bytes
// qs[32+4ib32..32+4ib32+3] (bit j = value j of the entry negative); scales as IQ2_XS.
func iq2sSumi(b quant.BlockIQ2_S, iqs int, y *q8.Block) int32 {
	qs := b.Qs()
	ib32 := iqs / 2
	qh := int32(b.Qh()[ib32])
	sc := b.Scales()[ib32]
	ls0, ls1 := int32(sc&0x0F), int32(sc>>4)
	var sumi [2]int32
	for l0 := 0; l0 < 8; l0 += 2 {
		idx := int32(qs[4*ib32+l0/2]) | ((qh << (8 - l0)) & 0x300)
		grid := quant.IQ2SGrid(int(idx))
		signs0, signs1 := sim.PackedSignMasks(qs[32+4*ib32+l0/2])
		gl, gh := sim.SignedGrid(grid, signs0, signs1)
		h := l0 / 4
		sumi[h] = sim.Dp4a(gl, y.Int(l0), sumi[h])
		sumi[h] = sim.Dp4a(gh, y.Int(l0+1), sumi[h])
	}
	return iq2ScaleSums(sumi[0], sumi[1], ls0, ls1)
}

// vecDotIQ2S is vec_dot_iq2_s_q8_1 plus the accumulation (see the file comment).
func vecDotIQ2S(tmp float32, xrow []byte, kbx, iqs int, y []q8.Block) float32 {
	b := quant.IQ2_SBlock(xrow, kbx)
	yb := &y[iqs/2]
	sumi := iq2sSumi(b, iqs, yb)
	return sim.FMA(dxdy(sim.H2F(b.D()), yb), sim.I2F(sumi), tmp)
}
