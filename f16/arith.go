package f16

import "math"

// Binary16 arithmetic as the GPU's half instructions compute it (HADD2, HMUL2, HFMA2, i.e.
// PTX add.rn.f16 / mul.rn.f16 / fma.rn.f16 and their .f16x2 forms, which cuda_fp16.hpp
// emits without .ftz):
//
//   - the result is the exact result rounded once to binary16, to nearest, ties to even;
//   - subnormal operands and results are kept (binary16 is never flushed);
//   - a result of magnitude >= 65520 (the midpoint between 65504 and 2^16) becomes ±Inf;
//   - every NaN result (a NaN operand, Inf-Inf, 0*Inf) is the canonical NaN 0x7fff;
//   - an exact zero result of x+y is +0 unless both are -0 (round to nearest), and
//     x*y+z follows the same rule with x*y as the first addend.
//
// Method: a binary16 value is exactly representable in float32 and float64. A product of
// two halves has at most 22 significant bits and lies in [2^-48, 2^32], so it is exact in
// float32; a sum of two halves spans at most 50 bits and is exact in float64. For FMA the
// product (exact in float64) and the addend are summed with TwoSum, which gives the exact
// result as an unevaluated pair s+e. The pair is rounded to float32 with round-to-odd,
// and that float32 (24 >= 11+2 bits) is rounded to binary16 by FromFloat32; rounding to
// odd first and to nearest second equals one rounding to nearest (Boldo and Melquiond,
// "Emulation of FMA and correctly rounded sums: proved algorithms using rounding to
// odd", IEEE TC 2008). Every value here is a normal float32 or zero, so the round-to-odd
// step is done at full float32 precision.

// CanonicalNaN is the NaN the GPU's half arithmetic returns for every NaN result.
const CanonicalNaN Half = 0x7fff

// Neg returns h with its sign flipped (also for NaN: it is a bit operation, as neg.f16).
func (h Half) Neg() Half { return h ^ 0x8000 }

// Abs returns h with its sign cleared.
func (h Half) Abs() Half { return h & 0x7fff }

// Add returns a+b rounded once to binary16 (HADD).
func Add(a, b Half) Half {
	if a.IsNaN() || b.IsNaN() {
		return CanonicalNaN
	}
	s := float64(a.ToFloat32()) + float64(b.ToFloat32()) // exact
	if s != s {
		return CanonicalNaN // Inf - Inf
	}
	return FromFloat32(roundOdd32(s, 0))
}

// Sub returns a-b rounded once to binary16 (HSUB).
func Sub(a, b Half) Half {
	if a.IsNaN() || b.IsNaN() {
		return CanonicalNaN
	}
	return Add(a, b.Neg())
}

// Mul returns a*b rounded once to binary16 (HMUL).
func Mul(a, b Half) Half {
	if a.IsNaN() || b.IsNaN() {
		return CanonicalNaN
	}
	p := a.ToFloat32() * b.ToFloat32() // exact: <= 22 significant bits, |p| in [2^-48, 2^32]
	if p != p {
		return CanonicalNaN // 0 * Inf
	}
	return FromFloat32(p)
}

// FMA returns a*b+c rounded once to binary16 (HFMA).
func FMA(a, b, c Half) Half {
	if a.IsNaN() || b.IsNaN() || c.IsNaN() {
		return CanonicalNaN
	}
	fa, fb, fc := float64(a.ToFloat32()), float64(b.ToFloat32()), float64(c.ToFloat32())
	p := float64(fa * fb) // exact
	if p != p {
		return CanonicalNaN // 0 * Inf
	}
	s := float64(p + fc)
	if math.IsInf(s, 0) || s != s {
		if s != s {
			return CanonicalNaN // Inf - Inf
		}
		return FromFloat32(float32(s))
	}
	// TwoSum: s + e == p + fc exactly.
	bb := float64(s - p)
	e := float64(p-float64(s-bb)) + float64(fc-bb)
	return FromFloat32(roundOdd32(s, e))
}

// roundOdd32 rounds the exact value s+e (s = RN64(s+e), so |e| <= ulp64(s)/2) to float32
// with round-to-odd: the result is s+e if representable, else whichever of its two float32
// neighbours has an odd significand. The value must be zero or within the normal float32
// range (true for every binary16 sum, product and fma).
func roundOdd32(s, e float64) float32 {
	f := float32(s)
	fs := float64(f)
	var dir float64 // sign of (s+e) - f
	switch {
	case fs != s:
		dir = s - fs
	case e != 0:
		dir = e
	default:
		return f // exact
	}
	u := math.Float32bits(f)
	if u&1 == 0 {
		if (dir > 0) == (f > 0) {
			u++ // away from zero
		} else {
			u--
		}
	}
	return math.Float32frombits(u)
}

// Half2 is a pair of binary16 values in one 32-bit register, as CUDA's half2: Lo is the
// .x half (bits 0..15), Hi the .y half (bits 16..31).
type Half2 struct {
	Lo, Hi Half
}

// MakeHalf2 returns the two float32 values converted as the GPU converts them for
// make_half2 of two floats or __floats2half2_rn (two cvt.rn.f16.f32): FromFloat32,
// except that every NaN becomes CanonicalNaN 0x7fff (measured for __float2half on an
// H200, see sim/testdata/h200-probes; FromFloat32 keeps a NaN's sign and payload).
func MakeHalf2(lo, hi float32) Half2 { return Half2{fromFloat32GPU(lo), fromFloat32GPU(hi)} }

func fromFloat32GPU(f float32) Half {
	if f != f {
		return CanonicalNaN
	}
	return FromFloat32(f)
}

// Half2FromBits splits a 32-bit register into its two halves.
func Half2FromBits(u uint32) Half2 { return Half2{Half(u), Half(u >> 16)} }

// Bits returns the 32-bit register holding h (Lo in the low 16 bits).
func (h Half2) Bits() uint32 { return uint32(h.Lo) | uint32(h.Hi)<<16 }

// Float2 returns the exact float32 values of both halves (__half22float2).
func (h Half2) Float2() (lo, hi float32) { return h.Lo.ToFloat32(), h.Hi.ToFloat32() }

// Add2 is the elementwise Add (__hadd2, HADD2).
func Add2(a, b Half2) Half2 { return Half2{Add(a.Lo, b.Lo), Add(a.Hi, b.Hi)} }

// Sub2 is the elementwise Sub (__hsub2).
func Sub2(a, b Half2) Half2 { return Half2{Sub(a.Lo, b.Lo), Sub(a.Hi, b.Hi)} }

// Mul2 is the elementwise Mul (__hmul2, half2 operator*, HMUL2).
func Mul2(a, b Half2) Half2 { return Half2{Mul(a.Lo, b.Lo), Mul(a.Hi, b.Hi)} }

// FMA2 is the elementwise FMA (__hfma2, HFMA2).
func FMA2(a, b, c Half2) Half2 { return Half2{FMA(a.Lo, b.Lo, c.Lo), FMA(a.Hi, b.Hi, c.Hi)} }
