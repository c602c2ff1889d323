package mmvq

import (
	"math"

	"github.com/ggsim/ggsim/f16"
	"github.com/ggsim/ggsim/sim"
)

func f32bits(f float32) uint32 { return math.Float32bits(f) }

// le32 returns the little-endian 32-bit word at b[0:4] (get_int_b1/b2/b4: the same value
// whatever the alignment the source assumes).
func le32(b []byte) int32 {
	_ = b[3]
	return int32(uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16 | uint32(b[3])<<24)
}

// h2f returns the float32 value of the little-endian binary16 at b[0:2] (__half2float,
// HADD2.F32: exact).
func h2f(b []byte) float32 { return h2fTab[uint16(b[0])|uint16(b[1])<<8] }

// half2 returns the little-endian half2 at b[0:4].
func half2(b []byte) f16.Half2 {
	return f16.Half2{Lo: f16.Half(uint16(b[0]) | uint16(b[1])<<8), Hi: f16.Half(uint16(b[2]) | uint16(b[3])<<8)}
}

// yd returns h2f(ds.x) of a q8_1 block (__low2float(ds)).
func yd(h f16.Half) float32 { return h2fTab[h] }

// f16Mul is __hmul (HMUL2 lane): the exact product rounded to binary16, no FTZ.
func f16Mul(a, b f16.Half) f16.Half { return f16.Mul(a, b) }

func f32frombits(u uint32) float32 { return math.Float32frombits(u) }

// h2fTab[h] = sim.H2F(h) for every binary16 h: the exact conversion, tabulated because the
// vec_dots convert several halves per call.
var h2fTab = func() *[1 << 16]float32 {
	var t [1 << 16]float32
	for i := range t {
		t[i] = sim.H2F(f16.Half(i))
	}
	return &t
}()

// ffma returns sim.FMA(a, b, c) (FFMA.FTZ) bit for bit, faster in the common case: with
// a, b, c flushed, p = a*b is exact in float64 and s = RN64(p + c); RN32(s) equals the
// once-rounded RN32(p + c) unless s lies exactly on a float32 rounding midpoint (the
// low 29 bits of its significand are 1 followed by zeros), because float32 midpoints in
// the normal range are float64 values and RN64 is monotonic. The rare midpoint case,
// other results below 2^-125 in magnitude (FTZ territory), Inf and NaN go to sim.FMA.
// TestFFMAMatchesSim checks it.
func ffma(a, b, c float32) float32 {
	a, b, c = sim.FTZ(a), sim.FTZ(b), sim.FTZ(c)
	// The product is exact in float64, so a fused float64 fma would give the same s; the
	// conversion still forbids fusion as the project's rule asks.
	s := float64(float64(a)*float64(b)) + float64(c)
	u := math.Float64bits(s)
	e := (u >> 52) & 0x7ff
	if e >= 1023-125 && e < 1023+128 && u&0x1fffffff != 0x10000000 {
		return float32(s)
	}
	if u<<1 == 0 {
		// An exact zero (p+c with |p| >= 2^-252 or p = 0 cannot round to zero
		// otherwise); its sign is the IEEE sum's, as fma's.
		return float32(s)
	}
	return sim.FMA(a, b, c)
}

// dp4a is __dp4a(a, b, c) = c + Σ_k int8(a_k)·int8(b_k) with int32 wrap-around (exact,
// equal to sim.Dp4a; written out so that it inlines).
func dp4a(a, b, c int32) int32 {
	return c + int32(int8(a))*int32(int8(b)) + int32(int8(a>>8))*int32(int8(b>>8)) +
		int32(int8(a>>16))*int32(int8(b>>16)) + int32(int8(a>>24))*int32(int8(b>>24))
}
