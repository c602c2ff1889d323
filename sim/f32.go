package sim

import (
	"math"

	"github.com/ggsim/ggsim/f16"
)

// CanonicalNaN32 is the bits of the NaN the GPU's float32 arithmetic returns for every
// NaN result (NVIDIA: 0x7fffffff; seen by testdata/h200-probes for FADD, rcp, division,
// roundf, fabsf, fmaxf of two NaNs and half->float). The functions here return it for
// every NaN result.
const CanonicalNaN32 uint32 = 0x7fffffff

var canonNaN = math.Float32frombits(CanonicalNaN32)

// FTZ returns x with a subnormal replaced by the zero of the same sign; every other value
// (normal, zero, Inf, NaN) is returned unchanged. This is what the .ftz modifier does to
// float32 operands and results under -use_fast_math.
func FTZ(x float32) float32 {
	b := math.Float32bits(x)
	if b&0x7f800000 == 0 {
		return math.Float32frombits(b & 0x80000000)
	}
	return x
}

// ftzNaN is FTZ that also canonicalises a NaN result.
func ftzNaN(x float32) float32 {
	b := math.Float32bits(x)
	switch {
	case b&0x7f800000 == 0:
		return math.Float32frombits(b & 0x80000000)
	case b&0x7fffffff > 0x7f800000:
		return canonNaN
	}
	return x
}

// Add returns FTZ(RN(FTZ(a) + FTZ(b))): add.ftz.f32 / FADD.FTZ. A NaN result is
// CanonicalNaN32. (A sum of float32 values below 2^-126 in magnitude is exact, so every
// flush model agrees on sums.)
func Add(a, b float32) float32 { return ftzNaN(FTZ(a) + FTZ(b)) }

// Sub returns FTZ(RN(FTZ(a) - FTZ(b))): sub.ftz.f32.
func Sub(a, b float32) float32 { return ftzNaN(FTZ(a) - FTZ(b)) }

// tinyEdge is 2^-126 - 2^-151: the exact results at or above it (in magnitude) round to
// 2^-126 with a 24-bit significand and unbounded exponent; those below it flush.
const tinyEdge = 0x1p-126 - 0x1p-151

// Mul returns mul.ftz.f32 / FMUL.FTZ of a and b: the operands are flushed, the exact
// product is rounded to nearest even with a 24-bit significand and unbounded exponent,
// and a rounded result below 2^-126 in magnitude becomes the zero of its sign (tininess
// after rounding). A NaN result is CanonicalNaN32.
//
// This differs from flushing Go's IEEE product only for exact products in
// [2^-126 - 2^-150, 2^-126 - 2^-151), which IEEE gradual underflow rounds up to 2^-126
// and the GPU flushes (e.g. (1-2^-24) * 2^-126 gives 0). Measured on an H200 with
// testdata/h200-probes (mul.ftz and fma.rn.ftz near 2^-126: 147,456 cases, all as modelled;
// flushing the exact value or the IEEE value each disagree with the GPU on hundreds).
func Mul(a, b float32) float32 {
	a, b = FTZ(a), FTZ(b)
	r := a * b
	if math.Float32bits(r)&0x7fffffff == 0x00800000 { // |r| == 2^-126: decide on the exact product
		if math.Abs(float64(a)*float64(b)) < tinyEdge {
			return math.Float32frombits(math.Float32bits(r) & 0x80000000)
		}
		return r
	}
	return ftzNaN(r)
}

// FMA returns fma.rn.ftz.f32 / FFMA.FTZ: FTZ(a)*FTZ(b) + FTZ(c) rounded once (to nearest
// even, 24-bit significand, unbounded exponent), a rounded result below 2^-126 in
// magnitude flushed to the zero of its sign, as Mul (same measurement). A NaN result is
// CanonicalNaN32.
//
// Method: with a, b, c flushed, p = a*b is exact in float64 and s = RN64(p+c). RN32(s)
// equals the once-rounded RN32(p+c) unless s lies exactly on a float32 rounding midpoint
// (the low 29 bits of its significand are 1 followed by zeros), because float32 midpoints
// in the normal range are float64 values and RN64 is monotonic. A midpoint s with |s| in
// [2^-125, 2^128) is settled with the exact error e of s (TwoSum, s+e = p+c): e = 0 makes
// s a true tie, which float32(s) rounds to even; otherwise p+c lies strictly on e's side
// of the midpoint, and so does s moved one float64 ulp that way (the low 29 bits become
// 0x0fffffff or 0x10000001: no carry, no other midpoint), which float32 then rounds the
// right way (to ±Inf past the largest float32, as RN does). The TwoSum is computed only
// for midpoints: in q4_K's MMQ dot about 14% of the second FMAs per block, many of them
// true ties, as a product of two halves has few significant bits. Results below 2^-125 in
// magnitude (FTZ territory), Inf and NaN take the exact path fmaSlow.
//
// (FMA cannot be inlined: three FTZ and a call already exceed the Go inliner's budget;
// a branch-free FTZ and a branch-free midpoint fix-up were measured slower.)
func FMA(a, b, c float32) float32 {
	a, b, c = FTZ(a), FTZ(b), FTZ(c)
	// The product is exact in float64; the conversion forbids fusion all the same.
	p, fc := float64(float64(a)*float64(b)), float64(c)
	s := float64(p + fc)
	u := math.Float64bits(s)
	if (u>>52)&0x7ff-(1023-125) >= 253 { // |s| outside [2^-125, 2^128), or NaN
		return fmaSlow(a, b, c)
	}
	if u&0x1fffffff == 0x10000000 { // a midpoint
		bb := float64(s - p)
		if e := float64(p-float64(s-bb)) + float64(fc-bb); e != 0 {
			if (e > 0) == (s > 0) {
				u++
			} else {
				u--
			}
		}
	}
	return float32(math.Float64frombits(u))
}

// fmaSlow is FMA's exact path for flushed operands.
func fmaSlow(a, b, c float32) float32 {
	r, s, e := fma32(a, b, c)
	if math.Float32bits(r)&0x7fffffff == 0x00800000 { // |r| == 2^-126: is |s+e| >= tinyEdge?
		as := math.Abs(s)
		if as < tinyEdge || (as == tinyEdge && (e < 0) == (s > 0) && e != 0) {
			return math.Float32frombits(math.Float32bits(r) & 0x80000000)
		}
		return r
	}
	return ftzNaN(r)
}

// FMA32 returns a*b+c rounded once to float32 (round to nearest even), with subnormal
// operands and results kept (no FTZ): fma.rn.f32. A NaN result is CanonicalNaN32.
//
// Method (docs/arithmetic.md, "float32 and FTZ"): the product of two float32 values is exact in float64; the sum
// p+c is computed as s = RN64(p+c) plus its exact error e (TwoSum); s is then rounded to
// odd using the sign of e, and the float64 result (53 >= 24+2 bits) is rounded once to
// float32. Rounding to odd and then to nearest equals one rounding to nearest. Every value
// involved is a normal float64 (|p| >= 2^-298), so the float64 steps are exact as stated,
// also when the float32 result is subnormal or overflows.
//
// math.FMA followed by a float32 conversion rounds twice and is wrong in rare cases.
func FMA32(a, b, c float32) float32 {
	r, _, _ := fma32(a, b, c)
	return r
}

// fma32 is FMA32 that also returns s and e with s+e = a*b+c exactly (s = RN64(a*b+c));
// s and e are meaningless when the result is not finite.
func fma32(a, b, c float32) (r float32, s, e float64) {
	fa, fb, fc := float64(a), float64(b), float64(c)
	p := float64(fa * fb) // exact (48-bit significand)
	s = float64(p + fc)
	if math.IsInf(s, 0) || s != s {
		// Only reachable with an Inf or NaN operand (finite |p| < 2^256).
		return ftzNaNKeepSub(float32(s)), s, 0
	}
	bb := float64(s - p)
	e = float64(p-float64(s-bb)) + float64(fc-bb)
	t := s
	if e != 0 {
		u := math.Float64bits(t)
		if u&1 == 0 {
			if (e > 0) == (t > 0) {
				u++
			} else {
				u--
			}
		}
		t = math.Float64frombits(u)
	}
	return float32(t), s, e
}

func ftzNaNKeepSub(x float32) float32 {
	if x != x {
		return canonNaN
	}
	return x
}

// FMaxf returns fmaxf(a, b) as max.ftz.f32 computes it: both operands are flushed, a NaN
// operand is ignored (IEEE 754-2008 maxNum), two NaNs give CanonicalNaN32, and +0 is taken
// as larger than -0 (all four seen on an H200 by testdata/h200-probes: fmaxf(±0, ∓0) = +0,
// fmaxf(subnormal, 0) = +0, fmaxf(NaN, 1) = 1, fmaxf(NaN, NaN') = 0x7fffffff).
//
// Go's math.Max propagates NaN and must not be used for fmaxf.
func FMaxf(a, b float32) float32 {
	a, b = FTZ(a), FTZ(b)
	switch {
	case a != a:
		if b != b {
			return canonNaN
		}
		return b
	case b != b:
		return a
	case a > b:
		return a
	case b > a:
		return b
	case a == 0: // both zero
		if math.Signbit(float64(a)) {
			return b
		}
		return a
	}
	return a
}

// FMinf returns fminf(a, b) as min.ftz.f32: the mirror of FMaxf (NaN operand ignored, -0
// taken as smaller than +0: fminf(±0, ∓0) = -0 and fminf(NaN, NaN') = 0x7fffffff seen).
func FMinf(a, b float32) float32 {
	a, b = FTZ(a), FTZ(b)
	switch {
	case a != a:
		if b != b {
			return canonNaN
		}
		return b
	case b != b:
		return a
	case a < b:
		return a
	case b < a:
		return b
	case a == 0:
		if math.Signbit(float64(a)) {
			return a
		}
		return b
	}
	return a
}

// Abs returns fabsf(x) as the GPU computes it under -use_fast_math: the sign bit cleared
// after FTZ; a NaN gives CanonicalNaN32 (measured with testdata/h200-probes: fabsf of
// 0xffc00002 gave 0x7fffffff).
func Abs(x float32) float32 {
	if x != x {
		return canonNaN
	}
	return math.Float32frombits(math.Float32bits(FTZ(x)) &^ 0x80000000)
}

// Neg returns -x as neg.ftz.f32: the sign bit flipped after FTZ; a NaN gives
// CanonicalNaN32 (assumed like Abs, not measured).
func Neg(x float32) float32 {
	if x != x {
		return canonNaN
	}
	return math.Float32frombits(math.Float32bits(FTZ(x)) ^ 0x80000000)
}

// RoundF returns roundf(x): the nearest integer, halfway cases away from zero, as CUDA
// documents roundf (exact). A subnormal x gives the zero of its sign (FTZ); ±0 and ±Inf
// are returned unchanged; a NaN gives CanonicalNaN32. testdata/h200-probes compared this with
// roundf compiled with -use_fast_math on an H200 for all 2^32 inputs: no mismatch.
func RoundF(x float32) float32 {
	x = FTZ(x)
	if x != x {
		return canonNaN
	}
	// math.Round is exact and rounds half away from zero; an integer-valued float64 with
	// |v| <= 2^24 or the input itself (|x| >= 2^23 is already an integer) is exact in float32.
	return float32(math.Round(float64(x)))
}

// I2F returns the int32 n converted to float32 with round to nearest even
// (cvt.rn.f32.s32 / I2F). Exact for |n| <= 2^24.
func I2F(n int32) float32 { return float32(n) }

// F2I8 returns the int8 that `int8_t q = v` (or char4's q.x = v) stores on the GPU, as
// quantize_q8_1 and quantize_mmq_q8_1 convert the value of roundf: nvcc converts to a
// 32-bit integer (cvt.rzi.s32.f32: truncation toward zero, clamped to the int32 range,
// NaN -> 0) and stores the low byte. So values in [-128, 127] convert exactly, larger
// values wrap (128 -> -128, 200 -> -56, +Inf -> -1, -Inf -> 0) and NaN gives 0.
// Measured with testdata/h200-probes on an H200 (nvcc 13.0, sm_90, -use_fast_math). The
// kernels only convert values in [-127, 127] or NaN.
func F2I8(v float32) int8 { return int8(F2I32RZ(v)) }

// F2I32RZ returns v truncated toward zero and clamped to the int32 range, NaN → 0, as
// cvt.rzi.s32.f32 (the C conversion (int)v on the GPU).
func F2I32RZ(v float32) int32 {
	switch {
	case v != v:
		return 0
	case v >= 2147483648:
		return math.MaxInt32
	case v <= -2147483648:
		return math.MinInt32
	}
	return int32(v)
}

// F2H returns f2h(x) = __float2half(x) (cvt.rn.f16.f32): round to nearest even, binary16
// subnormals produced, overflow to ±Inf (f16.FromFloat32), and every NaN (either sign,
// any payload) gives f16.CanonicalNaN 0x7fff — unlike f16.FromFloat32, which keeps the
// sign and payload. testdata/h200-probes compared this with __float2half on an H200 for all
// 2^32 inputs: no mismatch.
func F2H(x float32) f16.Half {
	if x != x {
		return f16.CanonicalNaN
	}
	return f16.FromFloat32(x)
}

// H2F returns the exact float32 value of h (__half2float, cvt.f32.f16). A NaN gives
// CanonicalNaN32 (all 65536 halves compared with __half2float on an H200 by
// testdata/h200-probes: no mismatch).
func H2F(h f16.Half) float32 { return h2fTab[h] }

// h2fTab[h] is H2F(h) for every binary16 h, tabulated because the kernels convert several
// halves per dot product.
var h2fTab = func() *[1 << 16]float32 {
	var t [1 << 16]float32
	for i := range t {
		h := f16.Half(i)
		if h.IsNaN() {
			t[i] = canonNaN
		} else {
			t[i] = h.ToFloat32()
		}
	}
	return &t
}()

// E8M0ToF32 is ggml_cuda_e8m0_to_fp32(e) as CUDA >= 12.8 compiles it
// (__nv_cvt_e8m0_to_bf16raw, read from the SASS of the sm_90 build): the bf16 bits
// e<<7, 0x0040 for e = 0 (2^-127, a float32 subnormal that the next FTZ multiply
// flushes) and 0x7fff (NaN) for e = 255, widened to float32. (quant's CPU conversion
// gives +Inf for 255: the GPU and the CPU differ there.)
func E8M0ToF32(e uint8) float32 {
	var h uint32
	switch e {
	case 0:
		h = 0x0040
	case 0xff:
		h = 0x7fff
	default:
		h = uint32(e) << 7
	}
	return math.Float32frombits(h << 16)
}
