package mmvq

import (
	"github.com/ggsim/ggsim/f16"
	"github.com/ggsim/ggsim/quant"
	"github.com/ggsim/ggsim/sim"
	"github.com/ggsim/ggsim/sim/q8"
)

// The legacy 32-value types: Q4_0, Q4_1, Q5_0, Q5_1, Q8_0 (vecdotq.cuh, ggml d99724f2b141).
// Each function is the vec_dot with its accumulation into the thread's tmp, with the
// float sequence read from the sm_90 SASS (FMA-SITES.md). "u" are ints of the q8_1 block,
// "v" ints of the x block; the integer dot products are exact.

// vecDotQ4_0 (VDR 2, iqs in {0,2}):
//
//	sumi = Σ_i sim.Dp4a(v_i & 0x0F0F0F0F, u[iqs+i], ·), sim.Dp4a((v_i>>4) & 0x0F0F0F0F, u[iqs+i+4], ·)
//	X    = FFMA(h2f(ds8.x), I2F(sumi), -FMUL(4, h2f(ds8.y)))
//	tmp  = FFMA(X, h2f(d4), tmp)
func vecDotQ4_0(tmp float32, xrow []byte, kbx, iqs int, y []q8.Block) float32 {
	b := quant.Q4_0Block(xrow, kbx)
	qs := b.Qs()
	yb := &y[0]
	var sumi int32
	for i := 0; i < vdrQ4_0; i++ {
		v := le32(qs[4*(iqs+i):])
		sumi = sim.Dp4a(v&0x0F0F0F0F, yb.Int(iqs+i), sumi)
		sumi = sim.Dp4a((v>>4)&0x0F0F0F0F, yb.Int(iqs+i+4), sumi)
	}
	x := sim.FMA(sim.H2F(yb.D), sim.I2F(sumi), sim.Neg(sim.Mul(4, sim.H2F(yb.S))))
	return sim.FMA(x, sim.H2F(b.D()), tmp)
}

// hmulDS returns __half22float2(__hmul2(dm, ds8)) for the block's d and m: the half
// products d*d8 and m*s8, each rounded to binary16 (HMUL2, no FTZ), converted exactly.
func hmulDS(d, m f16.Half, yb *q8.Block) (dd, ms float32) {
	return sim.H2F(f16Mul(d, yb.D)), sim.H2F(f16Mul(m, yb.S))
}

// vecDotQ4_1 (VDR 2, iqs in {0,2}):
//
//	sumi      = as Q4_0 (unsigned nibbles)
//	d4d8,m4s8 = h2f(HMUL2(dm4, ds8))
//	tmp       = FADD(tmp, FFMA(d4d8, I2F(sumi), FMUL(m4s8, 0.5)))
func vecDotQ4_1(tmp float32, xrow []byte, kbx, iqs int, y []q8.Block) float32 {
	b := quant.Q4_1Block(xrow, kbx)
	qs := b.Qs()
	yb := &y[0]
	var sumi int32
	for i := 0; i < vdrQ4_1; i++ {
		v := le32(qs[4*(iqs+i):])
		sumi = sim.Dp4a(v&0x0F0F0F0F, yb.Int(iqs+i), sumi)
		sumi = sim.Dp4a((v>>4)&0x0F0F0F0F, yb.Int(iqs+i+4), sumi)
	}
	dd, ms := hmulDS(b.D(), b.M(), yb)
	return sim.Add(tmp, sim.FMA(dd, sim.I2F(sumi), sim.Mul(ms, 0.5)))
}

// q5Ints returns the two 5-bit value ints (low and high nibbles with their 5th bits) of
// vec_dot_q5_{0,1}_q8_1_impl for one int of qs and the qh word shifted right by
// 4*(iqs+i) (arithmetic shift, as on the GPU's int).
func q5Ints(vl, vh int32) (vi0, vi1 int32) {
	vi0 = vl & 0x0F0F0F0F
	vi0 |= (vh << 4) & 0x00000010
	vi0 |= (vh << 11) & 0x00001000
	vi0 |= (vh << 18) & 0x00100000
	vi0 |= (vh << 25) & 0x10000000
	vi1 = (vl >> 4) & 0x0F0F0F0F
	vi1 |= (vh >> 12) & 0x00000010
	vi1 |= (vh >> 5) & 0x00001000
	vi1 |= (vh << 2) & 0x00100000
	vi1 |= (vh << 9) & 0x10000000
	return
}

// vecDotQ5_0 (VDR 2, iqs in {0,2}):
//
//	sumi = Σ dp4a of the 5-bit values (0..31) with u
//	X    = FFMA(h2f(ds8.x), I2F(sumi), -FMUL(8, h2f(ds8.y)))
//	tmp  = FFMA(X, h2f(d5), tmp)
func vecDotQ5_0(tmp float32, xrow []byte, kbx, iqs int, y []q8.Block) float32 {
	b := quant.Q5_0Block(xrow, kbx)
	qs := b.Qs()
	yb := &y[0]
	qh := int32(b.Qh())
	var sumi int32
	for i := 0; i < vdrQ5_0; i++ {
		vi0, vi1 := q5Ints(le32(qs[4*(iqs+i):]), qh>>(4*(iqs+i)))
		sumi = sim.Dp4a(vi0, yb.Int(iqs+i), sumi)
		sumi = sim.Dp4a(vi1, yb.Int(iqs+i+4), sumi)
	}
	x := sim.FMA(sim.H2F(yb.D), sim.I2F(sumi), sim.Neg(sim.Mul(8, sim.H2F(yb.S))))
	return sim.FMA(x, sim.H2F(b.D()), tmp)
}

// vecDotQ5_1 (VDR 2, iqs in {0,2}):
//
//	d5d8,m5s8 = h2f(HMUL2(dm5, ds8))
//	tmp       = FADD(tmp, FFMA(d5d8, I2F(sumi), FMUL(m5s8, 0.5)))
func vecDotQ5_1(tmp float32, xrow []byte, kbx, iqs int, y []q8.Block) float32 {
	b := quant.Q5_1Block(xrow, kbx)
	qs := b.Qs()
	yb := &y[0]
	qh := int32(b.Qh())
	var sumi int32
	for i := 0; i < vdrQ5_1; i++ {
		vi0, vi1 := q5Ints(le32(qs[4*(iqs+i):]), qh>>(4*(iqs+i)))
		sumi = sim.Dp4a(vi0, yb.Int(iqs+i), sumi)
		sumi = sim.Dp4a(vi1, yb.Int(iqs+i+4), sumi)
	}
	dd, ms := hmulDS(b.D(), b.M(), yb)
	return sim.Add(tmp, sim.FMA(dd, sim.I2F(sumi), sim.Mul(ms, 0.5)))
}

// vecDotQ8_0 (VDR 2, iqs in {0,2,4,6}):
//
//	sumi = sim.Dp4a(v[iqs+1], u[iqs+1], sim.Dp4a(v[iqs], u[iqs], 0))
//	tmp  = FFMA(FMUL(h2f(d_x), h2f(d_y)), I2F(sumi), tmp)
func vecDotQ8_0(tmp float32, xrow []byte, kbx, iqs int, y []q8.Block) float32 {
	b := quant.Q8_0Block(xrow, kbx)
	qs := b.Qs()
	yb := &y[0]
	var sumi int32
	for i := 0; i < vdrQ8_0; i++ {
		sumi = sim.Dp4a(le32(qs[4*(iqs+i):]), yb.Int(iqs+i), sumi)
	}
	d := sim.Mul(sim.H2F(b.D()), sim.H2F(yb.D))
	return sim.FMA(d, sim.I2F(sumi), tmp)
}

func init() {
	register(TypeKernel{Type: quant.Q4_0, Dot: vecDotQ4_0})
	register(TypeKernel{Type: quant.Q4_1, Dot: vecDotQ4_1})
	register(TypeKernel{Type: quant.Q5_0, Dot: vecDotQ5_0})
	register(TypeKernel{Type: quant.Q5_1, Dot: vecDotQ5_1})
	register(TypeKernel{Type: quant.Q8_0, Dot: vecDotQ8_0})
}
