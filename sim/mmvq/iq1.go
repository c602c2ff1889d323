package mmvq

import (
	"github.com/ggsim/ggsim/quant"
	"github.com/ggsim/ggsim/sim"
	"github.com/ggsim/ggsim/sim/q8"
)

// MMVQ vec_dots of IQ1_S and IQ1_M (vec_dot_iq1_*_q8_1 in ggml-cuda/vecdotq.cuh at
// d99724f2b141). QK = 256, QR = 8, QI = 8, VDR = 1: thread iqs (0..7) handles the 32
// values of group iqs against y[iqs]. The grid is iq1s_grid_gpu: values g+1 in {0,1,2}
// packed as nibbles; the -1 and the ±IQ1*_DELTA shift come back through a float delta
// times the y sum. Float sequences from the SASS (FMA-SITES-IQ.md).

const (
	vdrIQ1 = 1 // VDR_IQ1_S_Q8_1_MMVQ = VDR_IQ1_M_Q8_1_MMVQ (QK and QI: package quant)

	// iq1sDeltaStep is 2*IQ1S_DELTA/0x8000 = 2^-17 (the SASS immediate 0x37000000).
	iq1sDeltaStep = float32(2 * 0.125 / 0x8000)
	// iq1mDeltaStep is 2*IQ1M_DELTA/0x08 = 2^-5 (the SASS immediate 0x3d000000).
	iq1mDeltaStep = float32(2 * 0.125 / 0x08)
	// iq1DeltaBase is -1 + IQ1*_DELTA = -0.875, folded by the compiler.
	iq1DeltaBase = float32(-1 + 0.125)
)

func init() {
	register(newKernel(quant.IQ1_S, vdrIQ1, vecDotIQ1S))
	register(newKernel(quant.IQ1_M, vdrIQ1, vecDotIQ1M))
}

// iq1Grid returns the two int8x4 words of iq1s_grid_gpu[idx]: values 0..3 and 4..7 of
// the entry, each in {0, 1, 2}.
func iq1Grid(idx int) (g0, g1 int32) {
	g := int32(quant.IQ1SGridGPU(idx))
	return g & 0x0F0F0F0F, (g >> 4) & 0x0F0F0F0F
}

// iq1Delta is `-1.0f + DELTA - bit * (2.0f*DELTA/mask)` as compiled:
// FFMA.FTZ(I2F(bit), -step, -0.875), bit being qh & mask (0 or mask). The result is
// exactly -0.875 or -1.125.
func iq1Delta(bit int32, step float32) float32 {
	return sim.FMA(sim.I2F(bit), -step, iq1DeltaBase)
}

// iq1sSumi is the integer part of vec_dot_iq1_s_q8_1: Σ (g+1)·y over the 32 values of
// group iqs, the grid index of entry k being qs[4iqs+k] | ((qh[iqs] >> 3k) & 7) << 8.
func iq1sSumi(b quant.BlockIQ1_S, iqs int, y *q8.Block) int32 {
	qs := b.Qs()
	qh := int32(b.Qh(iqs))
	var sumi int32
	for l0 := 0; l0 < 8; l0 += 2 {
		idx := int32(qs[4*iqs+l0/2]) | ((qh>>(3*(l0/2)))&0x07)<<8
		g0, g1 := iq1Grid(int(idx))
		sumi = sim.Dp4a(g0, y.Int(l0), sumi)
		sumi = sim.Dp4a(g1, y.Int(l0+1), sumi)
	}
	return sumi
}

// vecDotIQ1S is vec_dot_iq1_s_q8_1 plus the accumulation. With qh = qh[iqs]:
//
//	d1q   = FMUL(h2f(x.d), I2F(((qh >> 11) & 0x0E) + 1))
//	delta = FFMA(I2F(qh & 0x8000), -2^-17, -0.875)
//	X     = FFMA(h2f(y.ds.x), I2F(sumi), FMUL(delta, h2f(y.ds.y)))
//	tmp   = FFMA(d1q, X, tmp)
func vecDotIQ1S(tmp float32, xrow []byte, kbx, iqs int, y []q8.Block) float32 {
	b := quant.IQ1_SBlock(xrow, kbx)
	yb := &y[iqs]
	sumi := iq1sSumi(b, iqs, yb)
	qh := int32(b.Qh(iqs))
	d1q := sim.Mul(sim.H2F(b.D()), sim.I2F(((qh>>11)&0x0E)+1))
	delta := iq1Delta(qh&0x8000, iq1sDeltaStep)
	x := sim.FMA(sim.H2F(yb.D), sim.I2F(sumi), sim.Mul(delta, sim.H2F(yb.S)))
	return sim.FMA(d1q, x, tmp)
}

// iq1mParts are the integer parts of vec_dot_iq1_m_q8_1 for group iqs: sumi[h] = Σ (g+1)·y
// over values 16h..16h+15; sumy[k] = the sum of the 8 y values of grid entry k
// (sim.Dp4a(u, 0x01010101)); bit[k] = qhl & 8 of entry k (the delta sign), qhl =
// qh[2iqs + k/2] >> 4(k%2), whose low 3 bits extend the grid index qs[4iqs+k].
type iq1mParts struct {
	sumi [2]int32
	sumy [4]int32
	bit  [4]int32
}

func iq1mIntParts(b quant.BlockIQ1_M, iqs int, y *q8.Block) iq1mParts {
	var p iq1mParts
	qs := b.Qs()
	qh := b.Qh()
	for l0 := 0; l0 < 8; l0 += 2 {
		k := l0 / 2
		qhl := int32(qh[2*iqs+l0/4]) >> (4 * (k % 2))
		idx := int32(qs[4*iqs+k]) | (qhl&0x07)<<8
		g0, g1 := iq1Grid(int(idx))
		u0, u1 := y.Int(l0), y.Int(l0+1)
		h := l0 / 4
		p.sumi[h] = sim.Dp4a(g0, u0, p.sumi[h])
		p.sumi[h] = sim.Dp4a(g1, u1, p.sumi[h])
		p.sumy[k] = sim.Dp4a(u1, 0x01010101, sim.Dp4a(u0, 0x01010101, 0))
		p.bit[k] = qhl & 0x08
	}
	return p
}

// iq1mScales returns sc0 and sc1 of group iqs: tmp = sc[iqs/2] >> 6(iqs%2),
// sc0 = 2*(tmp & 7) + 1, sc1 = 2*((tmp >> 3) & 7) + 1.
func iq1mScales(b quant.BlockIQ1_M, iqs int) (sc0, sc1 int32) {
	t := int32(b.Sc(iqs/2)) >> (6 * (iqs % 2))
	return 2*(t&0x07) + 1, 2*((t>>3)&0x07) + 1
}

// vecDotIQ1M is vec_dot_iq1_m_q8_1 plus the accumulation:
//
//	delta_k = FFMA(I2F(bit_k), -2^-5, -0.875)
//	sumf_h  = FFMA(delta_{2h+1}, I2F(sumy_{2h+1}), FFMA(delta_{2h}, I2F(sumy_{2h}), +0))
//	A_h     = FADD(sumf_h, I2F(sumi_h))
//	R       = FFMA(A_0, I2F(sc0), FMUL(A_1, I2F(sc1)))
//	tmp     = FFMA(FMUL(h2f(scale), h2f(y.ds.x)), R, tmp)
//
// where scale is the iq1m_scale_t half of the block (quant.BlockIQ1_M.D). The first step
// of sumf is an FFMA with +0 (sumf starts at 0.0f), not a multiplication: it differs
// only in the sign of a zero.
func vecDotIQ1M(tmp float32, xrow []byte, kbx, iqs int, y []q8.Block) float32 {
	b := quant.IQ1_MBlock(xrow, kbx)
	yb := &y[iqs]
	p := iq1mIntParts(b, iqs, yb)
	var sumf [2]float32
	for k := 0; k < 4; k++ {
		delta := iq1Delta(p.bit[k], iq1mDeltaStep)
		sumf[k/2] = sim.FMA(delta, sim.I2F(p.sumy[k]), sumf[k/2])
	}
	a0 := sim.Add(sumf[0], sim.I2F(p.sumi[0]))
	a1 := sim.Add(sumf[1], sim.I2F(p.sumi[1]))
	sc0, sc1 := iq1mScales(b, iqs)
	r := sim.FMA(a0, sim.I2F(sc0), sim.Mul(a1, sim.I2F(sc1)))
	d := sim.Mul(sim.H2F(b.D()), sim.H2F(yb.D))
	return sim.FMA(d, r, tmp)
}
