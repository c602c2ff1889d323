package mmvq

import (
	"github.com/ggsim/ggsim/quant"
	"github.com/ggsim/ggsim/sim"
	"github.com/ggsim/ggsim/sim/q8"
)

// The K-quants Q2_K, Q3_K, Q4_K, Q5_K, Q6_K (vecdotq.cuh, *_impl_mmvq / _vmmq), with the
// float sequences read from the sm_90 SASS (FMA-SITES.md). The per-sub-block sums
// (sumf, sumf_d, sumf_m) start with an FFMA whose addend is +0 (not an FMUL: the two
// differ in the sign of a zero result); the integer products (dp4a·scale) are exact.

// vecDotQ2_K (VDR 1, iqs 0..15; x bytes: scales[16], qs[64], dm):
//
//	for i < 4: sumf_d = FFMA(d8[i], I2F(sim.Dp4a(vi, u[i], 0)*(sc&0xF)), sumf_d)
//	           sumf_m = FFMA(d8[i], I2F(sim.Dp4a(m4x, u[i], 0)), sumf_m)    (both from +0)
//	tmp = FADD(tmp, FFMA(sumf_d, h2f(dm.x), -FMUL(sumf_m, h2f(dm.y))))
func vecDotQ2_K(tmp float32, xrow []byte, kbx, iqs int, y []q8.Block) float32 {
	b := quant.Q2_KBlock(xrow, kbx)
	bq8 := 4 * (iqs / 8)
	scaleOff := iqs - iqs%8 + (iqs%8)/4
	scales := b.Scales()[scaleOff:]
	v := le32(b.Qs()[4*iqs:])
	var sumfD, sumfM float32
	for i := 0; i < 4; i++ {
		yb := &y[bq8+i]
		u := yb.Int(iqs % 8)
		d8 := sim.H2F(yb.D)
		sc := int32(scales[2*i])
		vi := (v >> (2 * i)) & 0x03030303
		sumfD = sim.FMA(d8, sim.I2F(sim.Dp4a(vi, u, 0)*(sc&0xF)), sumfD)
		m := sc >> 4
		m |= m << 8
		m |= m << 16
		sumfM = sim.FMA(d8, sim.I2F(sim.Dp4a(m, u, 0)), sumfM)
	}
	d, dmin := b.DM()
	r := sim.FMA(sumfD, sim.H2F(d), sim.Neg(sim.Mul(sumfM, sim.H2F(dmin))))
	return sim.Add(tmp, r)
}

// vecDotQ3_K (VDR 1, iqs 0..15; x bytes: hmask[32], qs[64], scales[12], d):
//
//	for i < 4: sumf = FFMA(d8[i], I2F(sim.Dp4a(vi, u[i], 0)*sc), sumf)   (from +0)
//	tmp = FFMA(sumf, h2f(d), tmp)
func vecDotQ3_K(tmp float32, xrow []byte, kbx, iqs int, y []q8.Block) float32 {
	b := quant.Q3_KBlock(xrow, kbx)
	bq8 := 4 * (iqs / 8)
	scaleOff := iqs - iqs%8 + (iqs%8)/4
	vl := le32(b.Qs()[4*iqs:])
	vh := ^le32(b.HMask()[4*(iqs%8):]) >> bq8
	scales := b.Scales()
	var sumf float32
	for i := 0; i < 4; i++ {
		yb := &y[bq8+i]
		isc := scaleOff + 2*i
		scLow := (int32(scales[isc%8]) >> (4 * (isc / 8))) & 0xF
		scHigh := ((int32(scales[8+isc%4]) >> (2 * (isc / 4))) & 3) << 4
		sc := (scLow | scHigh) - 32
		vil := (vl >> (2 * i)) & 0x03030303
		vih := ((vh >> i) << 2) & 0x04040404
		vi := sim.Vsubss4(vil, vih)
		sumf = sim.FMA(sim.H2F(yb.D), sim.I2F(sim.Dp4a(vi, yb.Int(iqs%8), 0)*sc), sumf)
	}
	return sim.FMA(sumf, sim.H2F(b.D()), tmp)
}

// q45KScales returns the scales and mins of the two sub-blocks 2j, 2j+1 of a Q4_K/Q5_K
// block (the 16-bit aux construction of vec_dot_q4_K_q8_1; equals get_scale_min_k4).
func q45KScales(scales []byte, j int) (sc, m [2]int32) {
	s16 := func(k int) uint16 { return uint16(scales[2*k]) | uint16(scales[2*k+1])<<8 }
	var aux0, aux1 uint16
	if j < 2 {
		aux0 = s16(j) & 0x3f3f
		aux1 = s16(j+2) & 0x3f3f
	} else {
		aux0 = (s16(j+2)>>0)&0x0f0f | (s16(j-2)&0xc0c0)>>2
		aux1 = (s16(j+2)>>4)&0x0f0f | (s16(j)&0xc0c0)>>2
	}
	return [2]int32{int32(aux0 & 0xff), int32(aux0 >> 8)}, [2]int32{int32(aux1 & 0xff), int32(aux1 >> 8)}
}

// vecDotQ4_K (VDR 2, iqs 0,2,..,30; x bytes: dm, scales[12], qs[128]):
//
//	for i < 2: sumf_d = FFMA(d8[i], I2F(dot1_i*sc[i]), sumf_d)
//	           sumf_m = FFMA(d8[i], I2F(dot2_i*m[i]), sumf_m)        (both from +0)
//	tmp = FADD(tmp, FFMA(sumf_d, h2f(dm.x), -FMUL(sumf_m, h2f(dm.y))))
//
// dot1 is the dp4a of the nibbles with the q8_1 ints, dot2 the sum of the q8_1 quants.
func vecDotQ4_K(tmp float32, xrow []byte, kbx, iqs int, y []q8.Block) float32 {
	b := quant.Q4_KBlock(xrow, kbx)
	bq8 := 2 * ((iqs / 2) / 4)
	q4 := b.Qs()[16*bq8+4*((iqs/2)%4):]
	v0, v1 := le32(q4), le32(q4[16:])
	sc, m := q45KScales(b.Scales(), bq8/2)
	var sumfD, sumfM float32
	for i := 0; i < 2; i++ {
		yb := &y[bq8+i]
		u0, u1 := yb.Int((iqs/2)%4), yb.Int((iqs/2)%4+4)
		v0i := (v0 >> (4 * i)) & 0x0F0F0F0F
		v1i := (v1 >> (4 * i)) & 0x0F0F0F0F
		dot1 := sim.Dp4a(v1i, u1, sim.Dp4a(v0i, u0, 0))
		dot2 := sim.Dp4a(0x01010101, u1, sim.Dp4a(0x01010101, u0, 0))
		d8 := sim.H2F(yb.D)
		sumfD = sim.FMA(d8, sim.I2F(dot1*sc[i]), sumfD)
		sumfM = sim.FMA(d8, sim.I2F(dot2*m[i]), sumfM)
	}
	d, dmin := b.DM()
	r := sim.FMA(sumfD, sim.H2F(d), sim.Neg(sim.Mul(sumfM, sim.H2F(dmin))))
	return sim.Add(tmp, r)
}

// vecDotQ5_K (VDR 2, iqs 0,2,..,30; x bytes: dm, scales[12], qh[32], qs[128]): as Q4_K
// with 5-bit values, dot1 = sim.Dp4a(v0i, u0, sim.Dp4a(v1i, u1, 0)) and dot2 likewise ordered.
func vecDotQ5_K(tmp float32, xrow []byte, kbx, iqs int, y []q8.Block) float32 {
	b := quant.Q5_KBlock(xrow, kbx)
	bq8 := 2 * ((iqs / 2) / 4)
	ql := b.Qs()[16*bq8+4*((iqs/2)%4):]
	qh := b.Qh()[4*((iqs/2)%4):]
	vl0, vl1 := le32(ql), le32(ql[16:])
	vh0, vh1 := le32(qh)>>bq8, le32(qh[16:])>>bq8
	sc, m := q45KScales(b.Scales(), bq8/2)
	var sumfD, sumfM float32
	for i := 0; i < 2; i++ {
		yb := &y[bq8+i]
		u0, u1 := yb.Int((iqs/2)%4), yb.Int((iqs/2)%4+4)
		v0i := (vl0>>(4*i))&0x0F0F0F0F | ((vh0>>i)<<4)&0x10101010
		v1i := (vl1>>(4*i))&0x0F0F0F0F | ((vh1>>i)<<4)&0x10101010
		dot1 := sim.Dp4a(v0i, u0, sim.Dp4a(v1i, u1, 0))
		dot2 := sim.Dp4a(0x01010101, u0, sim.Dp4a(0x01010101, u1, 0))
		d8 := sim.H2F(yb.D)
		sumfD = sim.FMA(d8, sim.I2F(dot1*sc[i]), sumfD)
		sumfM = sim.FMA(d8, sim.I2F(dot2*m[i]), sumfM)
	}
	d, dmin := b.DM()
	r := sim.FMA(sumfD, sim.H2F(d), sim.Neg(sim.Mul(sumfM, sim.H2F(dmin))))
	return sim.Add(tmp, r)
}

// vecDotQ6_K (VDR 1, iqs 0..31; x bytes: ql[128], qh[64], scales[16] int8, d):
//
//	for i < 2: sumf = FFMA(d8[i], I2F(sim.Dp4a(vi, u[i], 0)*sc[i]), sumf)   (from +0)
//	tmp = FFMA(sumf, h2f(d), tmp)
func vecDotQ6_K(tmp float32, xrow []byte, kbx, iqs int, y []q8.Block) float32 {
	b := quant.Q6_KBlock(xrow, kbx)
	bq8 := 4*(iqs/16) + (iqs%16)/8
	scaleOff := 8*(iqs/16) + (iqs%16)/4
	vhShift := 2 * ((iqs % 16) / 8)
	vl := le32(b.Ql()[4*iqs:])
	vh := le32(b.Qh()[4*(8*(iqs/16)+iqs%8):]) >> vhShift
	var sumf float32
	for i := 0; i < 2; i++ {
		yb := &y[bq8+2*i]
		sc := int32(b.Scale(scaleOff + 4*i))
		vil := (vl >> (4 * i)) & 0x0F0F0F0F
		vih := ((vh >> (4 * i)) << 4) & 0x30303030
		vi := sim.Vsubss4(vil|vih, 0x20202020)
		sumf = sim.FMA(sim.H2F(yb.D), sim.I2F(sim.Dp4a(vi, yb.Int(iqs%8), 0)*sc), sumf)
	}
	return sim.FMA(sumf, sim.H2F(b.D()), tmp)
}

func init() {
	register(TypeKernel{Type: quant.Q2_K, Dot: vecDotQ2_K})
	register(TypeKernel{Type: quant.Q3_K, Dot: vecDotQ3_K})
	register(TypeKernel{Type: quant.Q4_K, Dot: vecDotQ4_K})
	register(TypeKernel{Type: quant.Q5_K, Dot: vecDotQ5_K})
	register(TypeKernel{Type: quant.Q6_K, Dot: vecDotQ6_K})
}
