//go:build goexperiment.simd && amd64

package mmq

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/ggsim/ggsim/f16"
	"github.com/ggsim/ggsim/moe"
	"github.com/ggsim/ggsim/quant"
	"github.com/ggsim/ggsim/sim"
)

// tile8Types are the types with an 8-column dot on both paths; tile8MMATypes those
// with one on the MMA path only.
var (
	tile8Types = []quant.Type{quant.Q4_K, quant.Q6_K, quant.Q8_0, quant.IQ4_XS, quant.Q5_K, quant.Q5_0, quant.IQ4_NL, quant.MXFP4, quant.Q3_K, quant.Q2_K, quant.Q4_0, quant.Q4_1, quant.Q5_1,
		quant.IQ2_XXS, quant.IQ2_XS, quant.IQ2_S, quant.IQ3_XXS, quant.IQ3_S, quant.IQ1_S, quant.Q1_0, quant.Q2_0, quant.NVFP4}
	tile8MMATypes []quant.Type
)

// tile8TypesOf returns the types the 8-column path has on the MMA or the dp4a path.
func tile8TypesOf(dp4a bool) []quant.Type {
	if dp4a {
		return tile8Types
	}
	return append(append([]quant.Type(nil), tile8Types...), tile8MMATypes...)
}

// bothPaths runs f with the 8-column path off and on and returns both results.
func bothPaths(t *testing.T, f func() ([]float32, error)) (scalar, fast []float32) {
	t.Helper()
	useTile8 = false
	scalar, err := f()
	useTile8 = true
	fast, err2 := f()
	if err != nil || err2 != nil {
		t.Fatal(err, err2)
	}
	return scalar, fast
}

func requireSameBits(t *testing.T, what string, want, got []float32) {
	t.Helper()
	if len(want) != len(got) {
		t.Fatalf("%s: %d outputs scalar, %d fast", what, len(want), len(got))
	}
	for e := range want {
		if math.Float32bits(want[e]) != math.Float32bits(got[e]) {
			t.Fatalf("%s: element %d: scalar %#08x (%g), 8-column %#08x (%g)", what, e, math.Float32bits(want[e]), want[e], math.Float32bits(got[e]), got[e])
		}
	}
}

// edgeScaleOffsets are the byte offsets in a block of typ of its binary16 scales.
func edgeScaleOffsets(typ quant.Type) []int {
	switch typ {
	case quant.Q4_K, quant.Q5_K, quant.Q4_1, quant.Q5_1:
		return []int{0, 2}
	case quant.Q6_K:
		return []int{208}
	case quant.Q3_K:
		return []int{108}
	case quant.Q2_K:
		return []int{80, 82}
	}
	return []int{0} // Q8_0, Q4_0, Q5_0, IQ4_XS, IQ4_NL; MXFP4: its E8M0 scale and first values
}

// edgeWeights is randomCase's weights with a quarter of the blocks' scales set to zero,
// subnormal, tiny, huge, infinite and NaN halves, and (Q8_0) some values -128.
func edgeWeights(t *testing.T, typ quant.Type, K, N int, r *rand.Rand) []byte {
	a, _ := randomCase(t, typ, K, N, 1, r.Uint64())
	halves := []f16.Half{0x0000, 0x8000, 0x0001, 0x03ff, 0x0400, 0x7bff, 0xfbff, 0x1000, 0x7c00, 0xfc00, 0x7e01}
	bs := typ.TypeSize()
	for o := 0; o < len(a); o += bs {
		if r.IntN(4) != 0 {
			continue
		}
		offs := edgeScaleOffsets(typ)
		so := o + offs[r.IntN(len(offs))]
		h := halves[r.IntN(len(halves))]
		a[so], a[so+1] = byte(h), byte(h>>8)
		if typ == quant.Q8_0 {
			a[o+2+r.IntN(32)] = 0x80
		}
	}
	return a
}

// edgeActs scales M columns of Gaussian activations by 2^-100..2^100 (per column or
// per element) and, with nonFinite, puts an Inf and a NaN in some columns.
func edgeActs(K, M int, r *rand.Rand, perElement, nonFinite bool) []float32 {
	b := make([]float32, K*M)
	for j := 0; j < M; j++ {
		s := math.Ldexp(1, r.IntN(201)-100)
		for k := 0; k < K; k++ {
			if perElement {
				s = math.Ldexp(1, r.IntN(201)-100)
			}
			b[j*K+k] = float32(r.NormFloat64() * s)
		}
		if nonFinite && j%5 == 1 {
			b[j*K+r.IntN(K)] = float32(math.Inf(1 - 2*r.IntN(2)))
		}
		if nonFinite && j%7 == 2 {
			b[j*K+r.IntN(K)] = float32(math.NaN())
		}
	}
	return b
}

// The 8-column path gives the scalar path's bits, for every type it has, on both
// paths: MUL_MAT shapes with stream-K splits with and without fixup and partial tiles
// (N and M not multiples of the tile), ordinary and extreme weights and activations
// (seed printed).
func TestTile8MatchesScalar(t *testing.T) {
	if !sim.Vec8 {
		t.Skip("SKIP (not a pass): this CPU lacks AVX2 or FMA")
	}
	const seed = 2412
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 8))
	shapes := []struct{ K, N, M int }{{4096, 256, 40}, {256, 13, 5}, {1024, 130, 77}, {2048, 200, 9}, {512, 64, 128}}
	for _, dp4a := range []bool{false, true} {
		dev := benchH200(t, dp4a)
		for _, typ := range tile8TypesOf(dp4a) {
			split, fixups, partial := 0, 0, 0
			taken0 := tile8Taken.Load()
			for si, s := range shapes {
				p, err := MakePlan(dev, typ, s.K, s.N, s.M)
				if err != nil {
					t.Fatal(err)
				}
				for _, w := range p.Tiles {
					if len(w.Ranges) > 1 {
						split++
					}
					if w.Adds != nil {
						fixups++
					}
				}
				if s.N%p.I != 0 || s.M%p.J != 0 {
					partial++
				}
				var a []byte
				var b []float32
				switch si % 3 {
				case 0:
					a, b = randomCase(t, typ, s.K, s.N, s.M, r.Uint64())
				case 1:
					a, b = edgeWeights(t, typ, s.K, s.N, r), edgeActs(s.K, s.M, r, false, false)
				default:
					a, b = edgeWeights(t, typ, s.K, s.N, r), edgeActs(s.K, s.M, r, true, si == 4)
				}
				what := fmt.Sprintf("%v dp4a=%v K=%d N=%d M=%d", typ, dp4a, s.K, s.N, s.M)
				want, got := bothPaths(t, func() ([]float32, error) {
					if dp4a {
						return MulMatDP4A(dev, typ, a, s.K, s.N, b, s.M, p)
					}
					return MulMat(dev, typ, a, s.K, s.N, b, s.M, p)
				})
				requireSameBits(t, what, want, got)
			}
			taken := tile8Taken.Load() - taken0
			t.Logf("%v dp4a=%v: %d tiles with stream-K splits, %d with fixups, %d partial shapes, %d tiles by the 8-column path", typ, dp4a, split, fixups, partial, taken)
			if split == 0 || fixups == 0 || partial == 0 || taken == 0 {
				t.Fatalf("%v dp4a=%v: the shapes do not exercise splits (%d), fixups (%d), partial tiles (%d) or the 8-column path (%d)", typ, dp4a, split, fixups, partial, taken)
			}
		}
	}
}

// The 8-column path gives the scalar path's bits for MUL_MAT_ID (several experts, a
// token count that leaves partial tiles, extreme activations), on both paths.
func TestTile8MatchesScalarID(t *testing.T) {
	if !sim.Vec8 {
		t.Skip("SKIP (not a pass): this CPU lacks AVX2 or FMA")
	}
	const seed = 2413
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 9))
	const K, N, E, T, U = 1024, 72, 4, 37, 2
	ids := make([]int32, 0, T*U)
	for tok := 0; tok < T; tok++ {
		e := r.Perm(E)
		ids = append(ids, int32(e[0]), int32(e[1]))
	}
	for _, dp4a := range []bool{false, true} {
		dev := benchH200(t, dp4a)
		for _, typ := range tile8TypesOf(dp4a) {
			as := edgeWeights(t, typ, K, N*E, r)
			b := edgeActs(K, T, r, typ == quant.Q6_K || typ == quant.Q8_0, false)
			rt, err := moe.Route(ids, T, U, E, 1)
			if err != nil {
				t.Fatal(err)
			}
			p, err := MakePlanID(dev, typ, K, N, rt)
			if err != nil {
				t.Fatal(err)
			}
			want, got := bothPaths(t, func() ([]float32, error) {
				return MulMatID(dev, typ, as, K, N, E, b, 1, T, ids, U, p)
			})
			requireSameBits(t, fmt.Sprintf("MUL_MAT_ID %v dp4a=%v", typ, dp4a), want, got)
		}
	}
}

// The 8-column path's bits do not depend on GOMAXPROCS (1 or 2), on a shape with
// stream-K splits, for every type it has.
func TestTile8GOMAXPROCS(t *testing.T) {
	if !sim.Vec8 {
		t.Skip("SKIP (not a pass): this CPU lacks AVX2 or FMA")
	}
	const K, N, M = 4096, 256, 40
	for _, dp4a := range []bool{false, true} {
		dev := benchH200(t, dp4a)
		for _, typ := range tile8TypesOf(dp4a) {
			p, err := MakePlan(dev, typ, K, N, M)
			if err != nil {
				t.Fatal(err)
			}
			a, b := randomCase(t, typ, K, N, M, 77)
			var outs [2][]float32
			for i, procs := range []int{1, 2} {
				old := runtime.GOMAXPROCS(procs)
				if dp4a {
					outs[i], err = MulMatDP4A(dev, typ, a, K, N, b, M, p)
				} else {
					outs[i], err = MulMat(dev, typ, a, K, N, b, M, p)
				}
				runtime.GOMAXPROCS(old)
				if err != nil {
					t.Fatal(err)
				}
			}
			requireSameBits(t, fmt.Sprintf("%v dp4a=%v GOMAXPROCS 1 vs 2", typ, dp4a), outs[0], outs[1])
		}
	}
}

// Every kernel of either path has an 8-column dot, and the types the tests above run
// are exactly those: a kernel added without one, or one left out of tile8Types, fails.
func TestTile8CoversEveryKernel(t *testing.T) {
	for _, dp4a := range []bool{false, true} {
		ks := kernels
		if dp4a {
			ks = kernelsDP4A
		}
		tested := map[quant.Type]bool{}
		for _, typ := range tile8TypesOf(dp4a) {
			tested[typ] = true
		}
		for typ, kn := range ks {
			if dot8For(kn) == nil {
				t.Errorf("%v dp4a=%v: no 8-column dot", typ, dp4a)
			}
			if !tested[typ] {
				t.Errorf("%v dp4a=%v: not in the types TestTile8MatchesScalar runs", typ, dp4a)
			}
		}
		if len(tested) != len(ks) {
			t.Errorf("dp4a=%v: %d types tested, %d kernels", dp4a, len(tested), len(ks))
		}
	}
}
