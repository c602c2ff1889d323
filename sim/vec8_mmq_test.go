//go:build goexperiment.simd && amd64

package sim

import (
	"math"
	"math/rand/v2"
	"testing"

	"simd/archsimd"

	"github.com/ggsim/ggsim/f16"
)

// vec8FlushedValue is vec8Value flushed, with more zeros and small exact values (so that
// products cancel exactly and zero results of every sign occur) and tiny normals (so
// that exact results underflow past the smallest subnormal).
func vec8FlushedValue(r *rand.Rand) float32 {
	switch r.IntN(5) {
	case 0:
		return []float32{0, float32(math.Copysign(0, -1))}[r.IntN(2)]
	case 1:
		return float32(math.Ldexp(float64(r.IntN(64)-32), r.IntN(8)-4))
	case 2:
		return float32(math.Ldexp(1+r.Float64(), -126+r.IntN(4)) * float64(1-2*r.IntN(2)))
	}
	return FTZ(vec8Value(r))
}

// TestVec8F checks FMA8F and Mul8F lane by lane against FMA and Mul on flushed operands
// (50,000 draws of eight lanes, seed printed), counting the zero results they keep.
func TestVec8F(t *testing.T) {
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
	var a, b, c, got [8]float32
	zeros, negZeros := 0, 0
	for it := 0; it < n; it++ {
		for l := range 8 {
			a[l], b[l], c[l] = vec8FlushedValue(r), vec8FlushedValue(r), vec8FlushedValue(r)
			if r.IntN(4) == 0 { // an exact cancellation
				c[l] = -float32(float64(a[l]) * float64(b[l]))
				if math.Float32bits(c[l])&0x7f800000 == 0 {
					c[l] = FTZ(c[l])
				}
			}
		}
		va, vb, vc := archsimd.LoadFloat32x8(&a), archsimd.LoadFloat32x8(&b), archsimd.LoadFloat32x8(&c)
		FMA8F(va, vb, vc).Store(&got)
		for l := range 8 {
			want := FMA(a[l], b[l], c[l])
			if !same32(got[l], want) {
				t.Fatalf("FMA8F lane %d: a=%#08x b=%#08x c=%#08x: got %#08x, want %#08x", l,
					math.Float32bits(a[l]), math.Float32bits(b[l]), math.Float32bits(c[l]), math.Float32bits(got[l]), math.Float32bits(want))
			}
			if want == 0 {
				zeros++
				if math.Signbit(float64(want)) {
					negZeros++
				}
			}
		}
		Mul8F(va, vb).Store(&got)
		for l := range 8 {
			if want := Mul(a[l], b[l]); !same32(got[l], want) {
				t.Fatalf("Mul8F lane %d: a=%#08x b=%#08x: got %#08x, want %#08x", l,
					math.Float32bits(a[l]), math.Float32bits(b[l]), math.Float32bits(got[l]), math.Float32bits(want))
			}
		}
	}
	t.Logf("%d draws of 8 lanes, %d zero FMA results (%d of them -0)", n, zeros, negZeros)
	if zeros == 0 || negZeros == 0 {
		t.Fatal("no zero results of both signs drawn")
	}
}

// HMul8 gives f16.Mul's bits (as H2F floats) for every half a against 64 random
// halves and the edge halves (zeros, subnormals, the least and largest normals, the
// overflow and rounding boundaries, Inf, NaN), seed printed.
func TestHMul8(t *testing.T) {
	const seed = 2414
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 10))
	bs := []f16.Half{0x0000, 0x8000, 0x0001, 0x8001, 0x03ff, 0x0400, 0x3c00, 0xbc00, 0x3c01, 0x3555, 0x7bff, 0xfbff, 0x5bff, 0x1000, 0x0c00, 0x7c00, 0xfc00, 0x7e00, 0x7e01, 0xfe01}
	for len(bs) < 88 { // a multiple of 8
		bs = append(bs, f16.Half(r.Uint32()))
	}
	var av, bv, got [8]float32
	var want [8]uint32
	n := 0
	for a := 0; a < 1<<16; a++ {
		for i, b := range bs {
			l := i % 8
			av[l], bv[l] = H2F(f16.Half(a)), H2F(b)
			want[l] = math.Float32bits(H2F(f16.Mul(f16.Half(a), b)))
			if l == 7 {
				HMul8(archsimd.LoadFloat32x8(&av), archsimd.LoadFloat32x8(&bv)).Store(&got)
				for k := range got {
					if math.Float32bits(got[k]) != want[k] {
						t.Fatalf("HMul8(%g, %g) = %#08x, f16.Mul gives %#08x", av[k], bv[k], math.Float32bits(got[k]), want[k])
					}
					n++
				}
			}
		}
	}
	t.Logf("%d products equal", n)
}
