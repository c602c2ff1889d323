//go:build goexperiment.simd && amd64

package sim

import "simd/archsimd"

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
