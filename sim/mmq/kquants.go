package mmq

import (
	"github.com/ggsim/ggsim/f16"
	"github.com/ggsim/ggsim/quant"
	"github.com/ggsim/ggsim/sim"
	"github.com/ggsim/ggsim/sim/q8"
)

// The k-quants other than Q4_K on the int8-MMA path: ggml_cuda_mmq_load_tiles_q2_K,
// _q3_K, _q5_K and _q6_K (mmq-load-tiles.cuh, TURING_MMA_AVAILABLE branches) with their vec_dot functions
// (mmq-vec-dot.cuh, the TURING_MMA_AVAILABLE branch, which sm_90 compiles). Every
// load leaves the values of one super-block (one iteration: MMQ_ITER_K = QK_K) in value
// order in x.qs, which is what the source's int indices (kq0/kq1 and k) work out to.

func init() {
	kernels[quant.Q5_K] = &kernel{layout: q8.DS4, load: loadQ5_K, dot: dotQ8_1Q8_1}
	kernels[quant.Q6_K] = &kernel{layout: q8.D4, load: loadQ6_K, dot: dotQ6_K}
	kernels[quant.Q3_K] = &kernel{layout: q8.D4, load: loadQ3_K, dot: dotQ8_0_16Q8_1}
	kernels[quant.Q2_K] = &kernel{layout: q8.D2S6, load: loadQ2_K, dot: dotQ2_K}
}

// loadQ5_K: x_qs = the unsigned 5-bit values (ql nibble | qh bit << 4) in value order
// (kq0 = 16c + r holds values 64c+4r..64c+4r+3, kq1 = kq0+8 the 32 after them), x_dm as
// Q4_K: (dm * make_half2(1, -1)) * make_half2(sc_s, m_s) in half per 32 values.
func loadQ5_K(m *matrix, i, kb0 int, x *xTile) {
	blk := quant.BlockQ5_K(m.block(i, kb0))
	qs, qh := blk.Qs(), blk.Qh()
	for c := 0; c < 4; c++ {
		for l := 0; l < 32; l++ {
			x.qs[64*c+l] = int8(qs[32*c+l]&0xF | (qh[l]>>(2*c)&1)<<4)
			x.qs[64*c+32+l] = int8(qs[32*c+l]>>4 | (qh[l]>>(2*c+1)&1)<<4)
		}
	}
	d, dmin := blk.DM()
	loadDMK45(x, d, dmin, blk.ScaleMin)
}

// loadDMK45 is the x_dm half of load_tiles_q4_K/q5_K: dm = bxi->dm * make_half2(1, -1),
// x_dm[s] = dm * make_half2(sc8[s], m8[s]), both half2 multiplies (RN to binary16).
func loadDMK45(x *xTile, d, dmin f16.Half, scaleMin func(int) (uint8, uint8)) {
	dm := f16.Mul2(f16.Half2{Lo: d, Hi: dmin}, f16.MakeHalf2(1, -1))
	for s := 0; s < 8; s++ {
		sc, mn := scaleMin(s)
		p := f16.Mul2(dm, f16.MakeHalf2(float32(sc), float32(mn)))
		x.dm[s] = [2]float32{sim.H2F(p.Lo), sim.H2F(p.Hi)}
	}
}

// loadQ6_K: x_qs = __vsubss4(ql | qh, 0x20202020), the signed 6-bit values in value order
// (kq0 = 32n + 8h + r holds values 128n+32h+4r.., kq1 = kq0+16 the values 64 later),
// x_df = d (one per super-block, half to float), x_sc = the 16 int8 scales.
func loadQ6_K(m *matrix, i, kb0 int, x *xTile) {
	blk := quant.BlockQ6_K(m.block(i, kb0))
	ql, qh := blk.Ql(), blk.Qh()
	for n := 0; n < 2; n++ {
		l4, h2, v := ql[64*n:], qh[32*n:], x.qs[128*n:]
		for l := 0; l < 32; l++ {
			v[l] = int8(l4[l]&0xF|(h2[l]&3)<<4) - 32
			v[l+32] = int8(l4[l+32]&0xF|(h2[l]>>2&3)<<4) - 32
			v[l+64] = int8(l4[l]>>4|(h2[l]>>4&3)<<4) - 32
			v[l+96] = int8(l4[l+32]>>4|(h2[l]>>6&3)<<4) - 32
		}
	}
	x.df[0] = sim.H2F(blk.D())
	for s := 0; s < 16; s++ {
		x.sc[s] = int32(blk.Scale(s))
	}
}

// dotQ6_K is ggml_cuda_mmq_vec_dot_q6_K_q8_1_mma: per vec_dot call (128 values, against
// y) a float tmp starts at 0; per 32-value block q with C0, C1 the exact dots of its two
// 16-value halves and sc0, sc1 their scales,
//
//	tmp += (C0*sc0 + C1*sc1)*dB  ->  tmp = fma(float(C0*sc0 + C1*sc1), dB, tmp)
//
// (the scale products and their sum are int32, |.| < 2^24, so the conversion is exact;
// dB = y.d4[q]); then
//
//	sum += tmp*dA  ->  sum = fma(tmp, dA, sum)
//
// with dA = x_df = d of the super-block.
func dotQ6_K(x *xTile, hd *halfDots, y0, y1 *q8.BlockMMQ, sum float32) float32 {
	for h, y := range [2]*q8.BlockMMQ{y0, y1} {
		var tmp float32
		for q := 0; q < 4; q++ {
			b := 4*h + q
			c0 := hd[2*b]
			c1 := hd[2*b+1]
			tmp = sim.FMA(sim.I2F(c0*x.sc[2*b]+c1*x.sc[2*b+1]), y.D4(q), tmp)
		}
		sum = sim.FMA(tmp, x.df[0], sum)
	}
	return sum
}

// loadQ3_K: x_qs = __vsubss4(low 2 bits | hmask bit << 2, 0x04040404), the signed 3-bit
// values in value order (int k = 32(kqsx/8) + 8l + kqsx%8 holds values 4k..4k+3),
// x_df[s] = d*sc8[s] per 16 values: float(d) times the int8 scale sc-32 as float, one
// float32 multiply (FMUL.FTZ).
func loadQ3_K(m *matrix, i, kb0 int, x *xTile) {
	blk := quant.BlockQ3_K(m.block(i, kb0))
	for k := 0; k < iterK; k++ {
		x.qs[k] = blk.Q(k)
	}
	d := sim.H2F(blk.D())
	for s := 0; s < 16; s++ {
		x.df[s] = sim.Mul(d, sim.I2F(int32(blk.Scale(s))))
	}
}

// loadQ2_K: x_qs = the unsigned 2-bit values in value order (int k = 32(kqsx/8) + 8l +
// kqsx%8 holds values 4k..4k+3), x_dm[s] = __hmul2(dm, make_half2(sc&15, sc>>4)) per 16
// values (FAST_FP16_AVAILABLE: a half2 multiply, RN to binary16), kept as floats in
// x.mA[s] = {d·sc, dmin·m}.
func loadQ2_K(m *matrix, i, kb0 int, x *xTile) {
	blk := quant.BlockQ2_K(m.block(i, kb0))
	for k := 0; k < iterK; k++ {
		x.qs[k] = int8(blk.Q(k))
	}
	d, dmin := blk.DM()
	dm := f16.Half2{Lo: d, Hi: dmin}
	for s := 0; s < 16; s++ {
		sc, mn := blk.ScaleMin(s)
		p := f16.Mul2(dm, f16.MakeHalf2(float32(sc), float32(mn)))
		x.mA[s] = [2]float32{sim.H2F(p.Lo), sim.H2F(p.Hi)}
	}
}

// dotQ2_K is ggml_cuda_mmq_vec_dot_q2_K_q8_1_mma (TURING_MMA_AVAILABLE branch) with the
// D2S6 activations: per vec_dot call (128 values against y, sub-blocks s = 8h..8h+7),
// first per 32-value block q = 0..3 with Cd0, Cd1 the exact dots of its 16-value halves
// (sub-blocks s0 = 8h+2q, s1 = s0+1), dA = x_dm.x, mA = x_dm.y:
//
//	tmp  = Cd0*dA0 + Cd1*dA1          ->  tmp = fma(float(Cd0), dA0, float(Cd1)*dA1)
//	q==3: tmp -= Cm0*mA0 + Cm1*mA1    ->  tmp = tmp - fma(float(Cm0), mA0, float(Cm1)*mA1)
//	sum += tmp*dB                     ->  sum = fma(tmp, dB, sum)
//
// where Cm0, Cm1 are the MMA of 0x01010101 with y (the exact sums of the 16 int8 values
// of each half; the D2S6 header holds no sums of the last 32 values) and dB is d2s6[0]
// for q < 2 and d2s6[1] for q >= 2; then, in a second loop over q = 0..2 with sB the
// half2 d2s6[2+2q], d2s6[3+2q] (the float sums of the 16-value groups, half-rounded):
//
//	sum -= mA0*sB.x  ->  sum = fma(-mA0, sB.x, sum)
//	sum -= mA1*sB.y  ->  sum = fma(-mA1, sB.y, sum)
//
// The products inside tmp are exact (|C| <= 6144 has 13 bits, dA and mA are halves with
// 11), so how their sums contract cannot matter: fusing either product, or none, gives
// the same bits. What the H200 golden cases do tell apart is the q==3 step: the LLVM
// aggressive form tmp = fma(-Cm0, mA0, fma(-Cm1, mA1, tmp)) differs from the GPU on 2
// and 12 outputs of the batch-33 and batch-130 cases; the subtraction of the fused sum
// above reproduces all three.
func dotQ2_K(x *xTile, hd *halfDots, y0, y1 *q8.BlockMMQ, sum float32) float32 {
	for h, y := range [2]*q8.BlockMMQ{y0, y1} {
		dB := [2]float32{sim.H2F(y.D2S6(0)), sim.H2F(y.D2S6(1))}
		for q := 0; q < 4; q++ {
			s0 := 8*h + 2*q
			b := 4*h + q
			c0 := hd[2*b]
			c1 := hd[2*b+1]
			tmp := sim.FMA(sim.I2F(c0), x.mA[s0][0], sim.Mul(sim.I2F(c1), x.mA[s0+1][0]))
			if q == 3 {
				m0, m1 := sumI8(y.Qs[96:112]), sumI8(y.Qs[112:128])
				tmp = sim.Sub(tmp, sim.FMA(sim.I2F(m0), x.mA[s0][1], sim.Mul(sim.I2F(m1), x.mA[s0+1][1])))
			}
			sum = sim.FMA(tmp, dB[q/2], sum)
		}
		for q := 0; q < 3; q++ {
			s0 := 8*h + 2*q
			sum = sim.FMA(sim.Neg(x.mA[s0][1]), sim.H2F(y.D2S6(2+2*q)), sum)
			sum = sim.FMA(sim.Neg(x.mA[s0+1][1]), sim.H2F(y.D2S6(3+2*q)), sum)
		}
	}
	return sum
}

// sumI8 is the exact sum of int8 values (the MMA of a tile of ones with them).
func sumI8(v []int8) int32 {
	var s int32
	for _, q := range v {
		s += int32(q)
	}
	return s
}
