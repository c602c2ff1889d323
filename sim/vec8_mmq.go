//go:build goexperiment.simd && amd64

package sim

import (
	"simd/archsimd"

	"github.com/ggsim/ggsim/f16"
)

// FMA8F is FMA8 for operands already flushed (no subnormal lanes: results of FTZ8 and
// of the 8-lane functions, converted integers, halves converted to float32), as the
// MMQ kernels' float chains have them. It skips FMA8's operand flush, and it also keeps
// the lanes whose result is ±0: the CPU's fused result is then the IEEE fma's (an exact
// zero with IEEE's sign rules, or a nonzero exact result below 2^-150 rounded to a
// zero of its sign), which is what FMA returns for a zero result. Lanes whose result is
// subnormal, 2^-126 or below 2^-125 in magnitude, Inf or NaN are recomputed by FMA.
// With a subnormal operand lane the result is undefined (TestVec8F).
func FMA8F(a, b, c archsimd.Float32x8) archsimd.Float32x8 {
	r := a.MulAdd(b, c)
	ri := r.AsInt32x8().And(v8AbsMask)
	ok := ri.GreaterEqual(v8Tiny).And(ri.Less(v8Inf)).Or(ri.Equal(v8Zero))
	if ok.ToBits() == 0xff {
		return r
	}
	return lanes3(FMA, a, b, c, r, ok)
}

// Mul8F is Mul8 for operands already flushed (see FMA8F): no operand flush.
func Mul8F(a, b archsimd.Float32x8) archsimd.Float32x8 {
	r := a.Mul(b)
	ri := r.AsInt32x8().And(v8AbsMask)
	ok := ri.Greater(v8Two126).And(ri.Less(v8Inf)).Or(ri.Equal(v8Zero))
	if ok.ToBits() == 0xff {
		return r
	}
	var x, y, z [8]float32
	a.Store(&x)
	b.Store(&y)
	r.Store(&z)
	bits := ok.ToBits()
	for l := range 8 {
		if bits&(1<<l) == 0 {
			z[l] = Mul(x[l], y[l])
		}
	}
	return archsimd.LoadFloat32x8(&z)
}

var (
	v8HalfNaN  = archsimd.BroadcastFloat32x8(H2F(f16.CanonicalNaN)).AsInt32x8()
	v8HalfMin  = archsimd.BroadcastInt32x8(0x38800000) // 2^-14, the least normal half
	v8HalfOvf  = archsimd.BroadcastInt32x8(0x47800000) // 2^16: rounded results from it on overflow
	v8Round    = archsimd.BroadcastInt32x8(0xfff)
	v8Keep     = archsimd.BroadcastInt32x8(0x1fff)
	v8HalfBias = archsimd.BroadcastFloat32x8(0.5)
)

// hmul8 is H2F(f16.Mul(a, b)) on each lane for a and b holding halves as float32
// (H2F values). The product is exact in float32 (at most 22 significant bits, 0 or
// |p| in [2^-48, 2^32], Inf); it is rounded to binary16 as f16.FromFloat32 does: to
// nearest even at 11 bits (add 0xfff plus the lowest kept bit, clear the 13 dropped
// bits) where |p| >= 2^-14, overflowing to Inf from 65520 (the rounded 2^16); below
// 2^-14 to a multiple of 2^-24 ((|p| + 0.5) - 0.5: the ulp of [0.5, 1) is 2^-24, and
// its even ties are the half subnormal's); the sign kept. A NaN operand or 0·Inf gives
// the canonical half NaN, as f16.Mul.
func HMul8(a, b archsimd.Float32x8) archsimd.Float32x8 {
	p := a.Mul(b)
	pi := p.AsInt32x8()
	ab := pi.And(v8AbsMask)
	nr := ab.Add(v8Round).Add(ab.ShiftAllRight(13).And(v8One)).AndNot(v8Keep)
	nr = v8Inf.Merge(nr, nr.GreaterEqual(v8HalfOvf))
	sr := ab.AsFloat32x8().Add(v8HalfBias).Sub(v8HalfBias).AsInt32x8()
	r := sr.Merge(nr, ab.Less(v8HalfMin)).Or(pi.And(v8SignMask))
	return v8HalfNaN.Merge(r, p.IsNaN()).AsFloat32x8()
}
