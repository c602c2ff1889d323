//go:build goexperiment.simd && amd64

package sim

import "simd/archsimd"

// Eight lanes of the float32 arithmetic of f32.go, for kernels that run eight simulated
// threads (eight weight rows) side by side: lane l of each result has the bits of the
// scalar function on lane l of the operands. Built only with GOEXPERIMENT=simd on amd64
// (the goexperiment.simd build tag); usable only where Vec8 is true (AVX2 and FMA). The
// scalar functions stay the definition: the lanes use the CPU's IEEE float32 operations
// where they agree with the GPU's (normal operands and results) and the scalar function
// where they might not (results below 2^-125 in magnitude, Inf and NaN). TestVec8 checks
// every function against its scalar one.

// Vec8 reports whether this CPU has what the 8-lane functions need (AVX2 and FMA).
var Vec8 = archsimd.X86.AVX2() && archsimd.X86.FMA()

var (
	v8ExpMask  = archsimd.BroadcastInt32x8(0x7f800000)
	v8SignMask = archsimd.BroadcastInt32x8(-0x80000000)
	v8AbsMask  = archsimd.BroadcastInt32x8(0x7fffffff)
	v8Zero     = archsimd.BroadcastInt32x8(0)
	v8Tiny     = archsimd.BroadcastInt32x8(0x01000000) // 2^-125
	v8Inf      = archsimd.BroadcastInt32x8(0x7f800000)
	v8Two126   = archsimd.BroadcastInt32x8(0x00800000) // 2^-126
	v8Canon    = archsimd.BroadcastInt32x8(int32(CanonicalNaN32))
)

// FTZ8 is FTZ on each lane.
func FTZ8(x archsimd.Float32x8) archsimd.Float32x8 {
	xi := x.AsInt32x8()
	sub := xi.And(v8ExpMask).Equal(v8Zero)
	return xi.And(v8SignMask).Merge(xi, sub).AsFloat32x8()
}

// Add8 is Add on each lane.
func Add8(a, b archsimd.Float32x8) archsimd.Float32x8 {
	r := FTZ8(FTZ8(a).Add(FTZ8(b)))
	return v8Canon.Merge(r.AsInt32x8(), r.IsNaN()).AsFloat32x8()
}

// FMA8 is FMA on each lane: the CPU's fused multiply-add of the flushed operands (one
// IEEE rounding, as the GPU's) where the result is a normal number of magnitude at least
// 2^-125; FMA on the other lanes (flush, tininess, Inf, NaN).
func FMA8(a, b, c archsimd.Float32x8) archsimd.Float32x8 {
	a, b, c = FTZ8(a), FTZ8(b), FTZ8(c)
	r := a.MulAdd(b, c)
	ri := r.AsInt32x8().And(v8AbsMask)
	ok := ri.GreaterEqual(v8Tiny).And(ri.Less(v8Inf))
	if ok.ToBits() == 0xff {
		return r
	}
	return lanes3(FMA, a, b, c, r, ok)
}

// Mul8 is Mul on each lane.
func Mul8(a, b archsimd.Float32x8) archsimd.Float32x8 {
	return Mul8F(FTZ8(a), FTZ8(b))
}

// Neg8 is Neg on each lane.
func Neg8(x archsimd.Float32x8) archsimd.Float32x8 {
	n := FTZ8(x).AsInt32x8().Xor(v8SignMask)
	return v8Canon.Merge(n, x.IsNaN()).AsFloat32x8()
}

// I2F8 is I2F on each lane.
func I2F8(n archsimd.Int32x8) archsimd.Float32x8 { return n.ConvertToFloat32() }

// ReduceSumTree8 is ReduceSumTree on each lane of x (overwritten).
func ReduceSumTree8(x []archsimd.Float32x8) archsimd.Float32x8 {
	checkWidth(len(x))
	for h := len(x) / 2; h > 0; h >>= 1 {
		for l := 0; l < h; l++ {
			x[l] = Add8(x[l], x[l+h])
		}
	}
	return x[0]
}

// lanes3 returns r with the lanes not set in ok replaced by f of the operands' lanes.
func lanes3(f func(a, b, c float32) float32, a, b, c, r archsimd.Float32x8, ok archsimd.Mask32x8) archsimd.Float32x8 {
	var x, y, z, w [8]float32
	a.Store(&x)
	b.Store(&y)
	c.Store(&z)
	r.Store(&w)
	bits := ok.ToBits()
	for l := range 8 {
		if bits&(1<<l) == 0 {
			w[l] = f(x[l], y[l], z[l])
		}
	}
	return archsimd.LoadFloat32x8(&w)
}

// The unflushed steps. FMA8U, Mul8U, Add8U and Neg8U are the CPU's IEEE float32
// operations without FTZ8 on the operands, without NaN canonicalisation and without any
// lane check: a kernel chains them through one vec_dot, ANDs Exact8 of every result
// into one mask, and recomputes the lanes left out of the mask with the scalar
// functions (the whole chain, from its inputs). Precondition: no operand lane is
// subnormal. That holds for values from H2F and I2F, for results that Exact8 accepted
// and for results of the scalar functions and of the checked 8-lane functions (they
// flush); an Inf or NaN operand gives an Inf or NaN result, which Exact8 rejects.
//
// Why the accepted lanes are the GPU's bits: with operands that are normal, zero, Inf
// or NaN, the GPU's FFMA/FMUL/FADD (FTZ on operands is then the identity) and IEEE's
// operations round the exact result the same way unless it lies below 2^-126 in
// magnitude (the GPU flushes, IEEE keeps a subnormal or rounds up to 2^-126; Mul's
// and FMA's comment) or is not finite (the GPU's NaN is canonical). Exact8 accepts a
// result only if it is zero (then IEEE and the GPU both give the zero of the exact
// result's sign, or +0 for an exact cancellation) or a finite number of magnitude at
// least 2^-125. TestVec8Unflushed checks this lane by lane against the scalar
// functions and that the rejected lanes are needed.

// FMA8U is a*b+c rounded once (the CPU's fused multiply-add) on each lane.
func FMA8U(a, b, c archsimd.Float32x8) archsimd.Float32x8 { return a.MulAdd(b, c) }

// Mul8U is a*b on each lane.
func Mul8U(a, b archsimd.Float32x8) archsimd.Float32x8 { return a.Mul(b) }

// Add8U is a+b on each lane.
func Add8U(a, b archsimd.Float32x8) archsimd.Float32x8 { return a.Add(b) }

// Neg8U is -x on each lane (the sign flipped).
func Neg8U(x archsimd.Float32x8) archsimd.Float32x8 {
	return x.AsInt32x8().Xor(v8SignMask).AsFloat32x8()
}

var v8TinyM1 = archsimd.BroadcastInt32x8(0x01000000 - 1)

// Exact8 reports the lanes of r, a result of FMA8U, Mul8U, Add8U or Neg8U on operands
// that are not subnormal, that equal the scalar function's result (FMA, Mul, Add, Neg):
// zero, or finite with magnitude at least 2^-125.
func Exact8(r archsimd.Float32x8) archsimd.Mask32x8 {
	ri := r.AsInt32x8().And(v8AbsMask)
	return ri.Greater(v8TinyM1).And(v8Inf.Greater(ri)).Or(ri.Equal(v8Zero))
}

// ExactAcc8 folds Exact8 of a chain of results into one test with fewer vector
// operations (four per result instead of seven): ExactStart8 of the first result, Add of
// each further one, then OK is the And of their Exact8 masks. With a = |r|'s bits - 1
// (wrapping: zero becomes 0xffffffff), a lane is exact iff a >= 0x00ffffff unsigned (not
// a nonzero value below 2^-125) and a < 0x7f7fffff signed (finite); hi keeps the signed
// maximum of a, lo the unsigned minimum.
type ExactAcc8 struct{ hi, lo archsimd.Int32x8 }

var (
	v8One     = archsimd.BroadcastInt32x8(1)
	v8AccTiny = archsimd.BroadcastUint32x8(0x00ffffff)
	v8AccInf  = archsimd.BroadcastInt32x8(0x7f7fffff)
)

func accBits8(r archsimd.Float32x8) archsimd.Int32x8 {
	return r.AsInt32x8().And(v8AbsMask).Sub(v8One)
}

// ExactStart8 starts an ExactAcc8 with the result r.
func ExactStart8(r archsimd.Float32x8) ExactAcc8 {
	a := accBits8(r)
	return ExactAcc8{a, a}
}

// Add folds the result r into e.
func (e ExactAcc8) Add(r archsimd.Float32x8) ExactAcc8 {
	a := accBits8(r)
	return ExactAcc8{e.hi.Max(a), e.lo.AsUint32x8().Min(a.AsUint32x8()).AsInt32x8()}
}

// OK is the And of Exact8 of every result folded into e.
func (e ExactAcc8) OK() archsimd.Mask32x8 {
	return v8AccInf.Greater(e.hi).And(e.lo.AsUint32x8().GreaterEqual(v8AccTiny))
}
