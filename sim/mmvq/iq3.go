package mmvq

import (
	"github.com/ggsim/ggsim/quant"
	"github.com/ggsim/ggsim/sim"
	"github.com/ggsim/ggsim/sim/q8"
)

// MMVQ vec_dots of IQ3_XXS and IQ3_S (vec_dot_iq3_*_q8_1 in ggml-cuda/vecdotq.cuh at
// d99724f2b141). QK = 256, QR = 4, QI = 16, VDR = 2: thread iqs (0, 2, ..., 14) handles
// group ib32 = iqs/2 (32 values, eight 4-value grid entries) against y[iqs/2]. Float part
// (FMA-SITES-IQ.md), as IQ2:
//
//	tmp = FFMA(FMUL(h2f(x.d), h2f(y.ds.x)), I2F(sumi), tmp)

func init() {
	register(TypeKernel{Type: quant.IQ3_XXS, Dot: vecDotIQ3XXS})
	register(TypeKernel{Type: quant.IQ3_S, Dot: vecDotIQ3S})
}

// iq3xxsSumi is the integer part of vec_dot_iq3_xxs_q8_1: grid bytes qs[4iqs..4iqs+7]
// index iq3xxs_grid (two entries = 8 values per sign group), aux32 = the word at qs byte
// 64+4ib32 holds four 7-bit sign groups (>> 7k) and the scale ls = aux32 >> 28. Returns
// (ls*sumi + sumi/2)/2 in C int arithmetic.
func iq3xxsSumi(b quant.BlockIQ3_XXS, iqs int, y *q8.Block) int32 {
	qs := b.Qs()
	aux32 := b.ScalesAndSigns(iqs / 2)
	var sumi int32
	for l0 := 0; l0 < 8; l0 += 2 {
		grid := uint64(quant.IQ3XXSGrid(qs[4*iqs+l0])) | uint64(quant.IQ3XXSGrid(qs[4*iqs+l0+1]))<<32
		signs0, signs1 := sim.KsignMasks(quant.UnpackKsigns(uint8(aux32 >> (7 * l0 / 2))))
		gl, gh := sim.SignedGrid(grid, signs0, signs1)
		sumi = sim.Dp4a(gl, y.Int(l0), sumi)
		sumi = sim.Dp4a(gh, y.Int(l0+1), sumi)
	}
	ls := int32(aux32 >> 28)
	return (ls*sumi + sumi/2) / 2
}

// vecDotIQ3XXS is vec_dot_iq3_xxs_q8_1 plus the accumulation (see the file comment).
func vecDotIQ3XXS(tmp float32, xrow []byte, kbx, iqs int, y []q8.Block) float32 {
	b := quant.IQ3_XXSBlock(xrow, kbx)
	yb := &y[iqs/2]
	sumi := iq3xxsSumi(b, iqs, yb)
	return sim.FMA(dxdy(sim.H2F(b.D()), yb), sim.I2F(sumi), tmp)
}

// iq3sSumi is the integer part of vec_dot_iq3_s_q8_1: grid bytes qs[4iqs..4iqs+7], each
// extended by bit k of qh[ib32] to a 9-bit iq3s_grid index, signs bytes
// signs[4ib32..4ib32+3] (one byte per 8 values); the result is multiplied by
// 1 + 2*nibble, the nibble ib32%2 of scales[ib32/2] (written
// (scales[iqs/4] >> ((iqs << 1) & 4)) & 0xF in the source).
func iq3sSumi(b quant.BlockIQ3_S, iqs int, y *q8.Block) int32 {
	qs := b.Qs()
	ib32 := iqs / 2
	qh := int32(b.Qh()[ib32])
	signs := b.Signs()
	var sumi int32
	for l0 := 0; l0 < 8; l0 += 2 {
		i0 := int32(qs[4*iqs+l0]) | ((qh << (8 - l0)) & 0x100)
		i1 := int32(qs[4*iqs+l0+1]) | ((qh << (7 - l0)) & 0x100)
		grid := uint64(quant.IQ3SGrid(int(i0))) | uint64(quant.IQ3SGrid(int(i1)))<<32
		signs0, signs1 := sim.PackedSignMasks(signs[4*ib32+l0/2])
		gl, gh := sim.SignedGrid(grid, signs0, signs1)
		sumi = sim.Dp4a(gl, y.Int(l0), sumi)
		sumi = sim.Dp4a(gh, y.Int(l0+1), sumi)
	}
	sc := int32(b.Scales()[iqs/4]>>((iqs<<1)&0x04)) & 0x0F
	return sumi * (1 + 2*sc)
}

// vecDotIQ3S is vec_dot_iq3_s_q8_1 plus the accumulation (see the file comment).
func vecDotIQ3S(tmp float32, xrow []byte, kbx, iqs int, y []q8.Block) float32 {
	b := quant.IQ3_SBlock(xrow, kbx)
	yb := &y[iqs/2]
	sumi := iq3sSumi(b, iqs, yb)
	return sim.FMA(dxdy(sim.H2F(b.D()), yb), sim.I2F(sumi), tmp)
}
