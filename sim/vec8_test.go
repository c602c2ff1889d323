//go:build goexperiment.simd && amd64

package sim

import (
	"math"
	"math/rand/v2"
	"testing"

	"simd/archsimd"
)

// vec8Value draws a float32 from a mix meant to reach every branch of the 8-lane
// functions: random bits (subnormals, Inf, NaN payloads included), values near 2^-126
// and 2^-63 (products near the flush edge), small integers times powers of two (exact
// sums, ties) and ordinary magnitudes.
func vec8Value(r *rand.Rand) float32 {
	switch r.IntN(6) {
	case 0:
		return math.Float32frombits(r.Uint32())
	case 1:
		return math.Float32frombits(r.Uint32()&0x80ffffff | uint32(r.IntN(4))<<23)
	case 2:
		return float32(math.Ldexp(float64(r.IntN(1<<12)-1<<11), -63-r.IntN(8)))
	case 3:
		return float32(math.Ldexp(float64(r.IntN(1<<10)-1<<9), r.IntN(20)-10))
	case 4:
		return []float32{0, float32(math.Copysign(0, -1)), float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN()), 0x1p-126, -0x1p-126}[r.IntN(7)]
	}
	return float32(r.NormFloat64() * math.Exp2(float64(r.IntN(40)-20)))
}

func same32(a, b float32) bool { return math.Float32bits(a) == math.Float32bits(b) }

// TestVec8 checks FTZ8, Add8, FMA8, Mul8, Neg8, I2F8 and ReduceSumTree8 lane by lane
// against the scalar functions, on 50,000 draws of eight lanes (seed printed).
func TestVec8(t *testing.T) {
	if !Vec8 {
		t.Skip("SKIP (not a pass): this CPU lacks AVX2 or FMA")
	}
	seed := uint64(20261202)
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 8))
	n := 50000
	if testing.Short() {
		n = 5000
	}
	var a, b, c, got [8]float32
	var ni [8]int32
	fallbacks := 0
	for it := 0; it < n; it++ {
		for l := range 8 {
			a[l], b[l], c[l] = vec8Value(r), vec8Value(r), vec8Value(r)
			ni[l] = int32(r.Uint32()) >> r.IntN(32)
		}
		va, vb, vc := archsimd.LoadFloat32x8(&a), archsimd.LoadFloat32x8(&b), archsimd.LoadFloat32x8(&c)
		check := func(name string, v archsimd.Float32x8, want func(l int) float32) {
			v.Store(&got)
			for l := range 8 {
				if w := want(l); !same32(got[l], w) {
					t.Fatalf("%s lane %d: a=%#08x b=%#08x c=%#08x n=%d: got %#08x, want %#08x", name, l,
						math.Float32bits(a[l]), math.Float32bits(b[l]), math.Float32bits(c[l]), ni[l], math.Float32bits(got[l]), math.Float32bits(w))
				}
			}
		}
		check("FTZ8", FTZ8(va), func(l int) float32 { return FTZ(a[l]) })
		check("Add8", Add8(va, vb), func(l int) float32 { return Add(a[l], b[l]) })
		check("Mul8", Mul8(va, vb), func(l int) float32 { return Mul(a[l], b[l]) })
		check("FMA8", FMA8(va, vb, vc), func(l int) float32 { return FMA(a[l], b[l], c[l]) })
		check("Neg8", Neg8(va), func(l int) float32 { return Neg(a[l]) })
		check("I2F8", I2F8(archsimd.LoadInt32x8(&ni)), func(l int) float32 { return I2F(ni[l]) })
		// the edge of FMA's fast lanes: c = -a*b rounded, results near zero and 2^-125
		for l := range 8 {
			c[l] = -float32(float64(a[l]) * float64(b[l]) * (1 + math.Ldexp(float64(r.IntN(5)-2), -30)))
		}
		vc = archsimd.LoadFloat32x8(&c)
		check("FMA8 cancel", FMA8(va, vb, vc), func(l int) float32 {
			x := FMA(a[l], b[l], c[l])
			if math.Abs(float64(x)) < 0x1p-125 {
				fallbacks++
			}
			return x
		})
	}
	t.Logf("%d draws of 8 lanes, %d cancelling FMA lanes below 2^-125", n, fallbacks)
	var x [32]archsimd.Float32x8
	var xs [8][32]float32
	for it := 0; it < 2000; it++ {
		for i := range x {
			for l := range 8 {
				a[l] = vec8Value(r)
				xs[l][i] = a[l]
			}
			x[i] = archsimd.LoadFloat32x8(&a)
		}
		for _, w := range []int{32, 8, 1} {
			ys, xv := xs, x
			ReduceSumTree8(xv[:w]).Store(&got)
			for l := range 8 {
				if want := ReduceSumTree(ys[l][:w]); !same32(got[l], want) {
					t.Fatalf("ReduceSumTree8 width %d lane %d: %#08x, want %#08x", w, l, math.Float32bits(got[l]), math.Float32bits(want))
				}
			}
		}
	}
}

// FMA8U, Mul8U, Add8U and Neg8U give the scalar functions' bits on the lanes Exact8
// accepts, for operands that are not subnormal (the precondition), on 50,000 draws of
// eight lanes (seed printed); and the check is needed: it rejects lanes whose IEEE result
// differs from the GPU's both by flushing and by NaN, so the test fails if a kernel's
// scalar recomputation of rejected lanes were dropped (Exact8 returning all lanes).
func TestVec8Unflushed(t *testing.T) {
	if !Vec8 {
		t.Skip("SKIP (not a pass): this CPU lacks AVX2 or FMA")
	}
	seed := uint64(20261203)
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 9))
	n := 50000
	if testing.Short() {
		n = 5000
	}
	draw := func() float32 { return FTZ(vec8Value(r)) }
	var a, b, c, got [8]float32
	var rejected, neededFlush, neededNaN int
	check := func(name string, v archsimd.Float32x8, want func(l int) float32) {
		v.Store(&got)
		ok := Exact8(v).ToBits()
		for l := range 8 {
			w := want(l)
			if ok&(1<<l) != 0 {
				if !same32(got[l], w) {
					t.Fatalf("%s lane %d accepted: a=%#08x b=%#08x c=%#08x: got %#08x, want %#08x", name, l,
						math.Float32bits(a[l]), math.Float32bits(b[l]), math.Float32bits(c[l]), math.Float32bits(got[l]), math.Float32bits(w))
				}
				continue
			}
			rejected++
			switch {
			case same32(got[l], w):
			case w != w:
				neededNaN++
			default:
				neededFlush++
			}
		}
	}
	for it := 0; it < n; it++ {
		for l := range 8 {
			a[l], b[l], c[l] = draw(), draw(), draw()
		}
		va, vb, vc := archsimd.LoadFloat32x8(&a), archsimd.LoadFloat32x8(&b), archsimd.LoadFloat32x8(&c)
		check("Add8U", Add8U(va, vb), func(l int) float32 { return Add(a[l], b[l]) })
		check("Mul8U", Mul8U(va, vb), func(l int) float32 { return Mul(a[l], b[l]) })
		check("FMA8U", FMA8U(va, vb, vc), func(l int) float32 { return FMA(a[l], b[l], c[l]) })
		check("Neg8U", Neg8U(va), func(l int) float32 { return Neg(a[l]) })
		for l := range 8 { // cancelling FMAs: results near zero and the flush edge
			c[l] = FTZ(-float32(float64(a[l]) * float64(b[l]) * (1 + math.Ldexp(float64(r.IntN(5)-2), -30))))
		}
		vc = archsimd.LoadFloat32x8(&c)
		check("FMA8U cancel", FMA8U(va, vb, vc), func(l int) float32 { return FMA(a[l], b[l], c[l]) })
	}
	t.Logf("%d draws of 8 lanes: %d lanes rejected, of which %d differ by flushing and %d by NaN", n, rejected, neededFlush, neededNaN)
	if neededFlush == 0 || neededNaN == 0 {
		t.Fatal("no rejected lane differs from the GPU's result: the draws do not show that Exact8 is needed")
	}
}

// ExactAcc8 over a chain of one to six results is the And of their Exact8 masks, on
// edge bit patterns (zeros, the 2^-125 and 2^-126 edges, the largest finite, Inf, NaN,
// both signs) and random values (seed printed); every edge is both accepted and rejected
// somewhere.
func TestVec8ExactAcc(t *testing.T) {
	if !Vec8 {
		t.Skip("SKIP (not a pass): this CPU lacks AVX2 or FMA")
	}
	seed := uint64(20261204)
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 10))
	edges := []uint32{0, 1, 0x007fffff, 0x00800000, 0x00ffffff, 0x01000000, 0x01000001, 0x3f800000,
		0x7f7fffff, 0x7f800000, 0x7f800001, 0x7fc00000, 0x7fffffff}
	var acc, rej int
	for it := 0; it < 20000; it++ {
		n := 1 + r.IntN(6)
		var want archsimd.Mask32x8
		var e ExactAcc8
		for k := range n {
			var v [8]uint32
			for l := range v {
				if r.IntN(2) == 0 {
					v[l] = edges[r.IntN(len(edges))]
				} else {
					v[l] = r.Uint32() & 0x7fffffff
				}
				if r.IntN(8) == 0 && v[l]&0x7fffffff != 0 {
					v[l] = edges[r.IntN(len(edges))] // mostly-accepted chains
				}
				v[l] |= uint32(r.IntN(2)) << 31
			}
			x := archsimd.LoadUint32x8(&v).AsFloat32x8()
			if k == 0 {
				want, e = Exact8(x), ExactStart8(x)
			} else {
				want, e = want.And(Exact8(x)), e.Add(x)
			}
		}
		got, w := e.OK().ToBits(), want.ToBits()
		if got != w {
			t.Fatalf("draw %d, chain of %d: ExactAcc8 mask %08b, And of Exact8 %08b", it, n, got, w)
		}
		for l := range 8 {
			if w&(1<<l) != 0 {
				acc++
			} else {
				rej++
			}
		}
	}
	t.Logf("%d lanes accepted, %d rejected", acc, rej)
	if acc == 0 || rej == 0 {
		t.Fatal("draws do not exercise both outcomes")
	}
}
