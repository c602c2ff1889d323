package fp16path_test

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"pgregory.net/rapid"

	"github.com/ggsim/ggsim/fp16path"
	"github.com/ggsim/ggsim/quant"
	"github.com/ggsim/ggsim/sim"
)

func sameBits(a, b []float32) int {
	if len(a) != len(b) {
		return 0
	}
	for i := range a {
		if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
			return i
		}
	}
	return -1
}

// TestCacheSameBits: three matmuls sharing src1 (Q, K, V) through a Cache convert it once
// and give the bits of uncached MulMat; with NoActCache they convert three times, same
// bits; a src1 buffer whose values changed (a reused allocation) is converted again, not
// served stale; Reset forgets everything.
func TestCacheSameBits(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 21))
	const K, N, M = 512, 5, 3
	types := []quant.Type{quant.Q4_K, quant.Q5_K, quant.IQ4_XS}
	xs := make([][]byte, len(types))
	for i, typ := range types {
		xs[i], _ = realistic(r, typ, K, N)
	}
	_, y0 := realistic(r, quant.Q4_K, K*M, 0)
	for _, noCache := range []bool{false, true} {
		y := append([]float32(nil), y0...)
		opt := &fp16path.Options{NoActCache: noCache}
		var c fp16path.Cache
		for round := 0; round < 2; round++ {
			for i, typ := range types {
				got, err := c.MulMat(typ, xs[i], K, N, y, M, opt)
				if err != nil {
					t.Fatal(err)
				}
				want, err := fp16path.MulMat(typ, xs[i], K, N, y, M, nil)
				if err != nil {
					t.Fatal(err)
				}
				if i := sameBits(got, want); i >= 0 {
					t.Fatalf("noCache %v, %v: output %d cached %g, uncached %g", noCache, typ, i, got[i], want[i])
				}
			}
			wantConv, wantHits := M*(round+1), 2*M*(round+1)
			if noCache {
				wantConv, wantHits = 3*M*(round+1), 0
			}
			if c.Conversions() != wantConv || c.Hits() != wantHits {
				t.Fatalf("noCache %v, round %d: %d conversions, %d hits; want %d, %d", noCache, round, c.Conversions(), c.Hits(), wantConv, wantHits)
			}
			y[7] = -y[7] * 3 // the buffer now holds another tensor
		}
		c.Reset()
		if c.Conversions() != 0 || c.Hits() != 0 {
			t.Fatal("Reset kept counters")
		}
	}
}

// TestSwiGLUArguments: the fused gate/up/SWIGLU with the measured MUFU.EX2 gives
// up·sim.SiLU(gate) of the two plain matmuls' outputs (sim.SiLU is the SASS sequence of
// ggml's epilogue); bad arguments are plain errors.
func TestSwiGLUArguments(t *testing.T) {
	x := make([]byte, 144)
	for i := range x {
		x[i] = byte(i*37 + 11)
	}
	x[0], x[1], x[2], x[3] = 0x00, 0x3c, 0x00, 0x38 // d = 1, dmin = 0.5
	y := make([]float32, 256)
	for i := range y {
		y[i] = float32(i%17) - 8
	}
	got, err := fp16path.MulMatSwiGLU(quant.Q4_K, x, x, 256, 1, y, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	mm, err := fp16path.MulMat(quant.Q4_K, x, 256, 1, y, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := sim.Mul(mm[0], sim.SiLU(mm[0])); math.Float32bits(got[0]) != math.Float32bits(want) {
		t.Fatalf("fused %#08x, up·SiLU(gate) %#08x", math.Float32bits(got[0]), math.Float32bits(want))
	}
	if _, err := fp16path.MulMatSwiGLU(quant.Q4_K, x, x[:100], 256, 1, y, 1, nil); err == nil || errors.Is(err, errors.ErrUnsupported) {
		t.Fatalf("short up matrix: %v", err)
	}
	if _, err := fp16path.MulMatSwiGLU(quant.Q4_K, x, x, 256, 1, y, 1, &fp16path.Options{Disabled: true}); !errors.Is(err, fp16path.ErrDisabled) {
		t.Fatalf("disabled: %v", err)
	}
}

// TestSwiGLUStructure checks the fused epilogue's structure with the NOT HARDWARE expf
// stand-in: every output is FMUL(up, g / (1 + expf(-g))) of MulMat's up and gate outputs
// (the bits of the two plain matmuls), for one column of every type and 2..8 columns of
// the multi-column types, and the fused pair converts y once. rapid prints the seed of a
// failure.
func TestSwiGLUStructure(t *testing.T) {
	defer fp16path.SetStandInMUFU()()
	rapid.Check(t, func(rt *rapid.T) {
		typ := rapid.SampledFrom(fp16path.Types()).Draw(rt, "type")
		M := 1
		if fp16path.MultiColumn(typ) {
			M = rapid.IntRange(1, fp16path.MaxColumns).Draw(rt, "columns")
		}
		r := rand.New(rand.NewPCG(rapid.Uint64().Draw(rt, "seed"), 0))
		const K, N = 512, 4
		gate, _ := realistic(r, typ, K, N)
		up, _ := realistic(r, typ, K, N)
		_, y := realistic(r, typ, K*M, 0)
		opt := &fp16path.Options{RowsPerWarp: rapid.SampledFrom([]int{1, 4}).Draw(rt, "rows per warp")}
		var c fp16path.Cache
		got, err := c.MulMatSwiGLU(typ, gate, up, K, N, y, M, opt)
		if err != nil {
			rt.Fatal(err)
		}
		if c.Conversions() != M || c.Hits() != 0 {
			rt.Fatalf("%d conversions, %d hits for one fused pair of %d columns", c.Conversions(), c.Hits(), M)
		}
		g, err := fp16path.MulMat(typ, gate, K, N, y, M, opt)
		if err != nil {
			rt.Fatal(err)
		}
		u, err := fp16path.MulMat(typ, up, K, N, y, M, opt)
		if err != nil {
			rt.Fatal(err)
		}
		for i := range got {
			e, _ := fp16path.StandInExpf(-g[i])
			want := sim.Mul(u[i], sim.Mul(g[i], sim.Rcp(sim.Add(1, e))))
			if math.Float32bits(got[i]) != math.Float32bits(want) {
				rt.Fatalf("%v output %d: fused %g, up·silu(gate) %g", typ, i, got[i], want)
			}
		}
	})
}

// TestRMSNormArguments: with the measured MUFU.RSQ the norm gives bits; bad arguments are
// plain errors.
func TestRMSNormArguments(t *testing.T) {
	x := make([]float32, 64)
	for i := range x {
		x[i] = float32(i) - 20
	}
	if _, err := fp16path.RMSNormMul(x, x, 1e-6, nil); err != nil {
		t.Fatal(err)
	}
	var c fp16path.Cache
	for name, call := range map[string]func() error{
		"lengths": func() error { _, err := c.RMSNormMul(x, x[:63], 1e-6, nil); return err },
		"empty":   func() error { _, err := c.RMSNormMul(nil, nil, 1e-6, nil); return err },
		"eps":     func() error { _, err := c.RMSNormMul(x, x, -1, nil); return err },
		"NaN": func() error {
			_, err := c.RMSNormMul(append([]float32{float32(math.NaN())}, x[1:]...), x, 1e-6, nil)
			return err
		},
		"fused 48": func() error { _, err := c.RMSNormMul(x[:48], x[:48], 1e-6, nil); return err },
	} {
		if err := call(); err == nil || errors.Is(err, errors.ErrUnsupported) {
			t.Errorf("%s: %v, want a plain error", name, err)
		}
	}
}

// sumSquaresLanes recomputes rms_norm_f32's Σx² thread by thread with sim.Warp shuffles
// (warp_reduce_sum as __shfl_xor_sync steps, then the shared-memory pass of block_reduce):
// an implementation independent of fp16path.SumSquares.
func sumSquaresLanes(x []float32) float32 {
	bs := 256
	if len(x) >= 1024 {
		bs = 1024
	}
	var shared [32]float32
	for w := 0; w < bs/32; w++ {
		var wp sim.Warp
		for l := 0; l < 32; l++ {
			for col := 32*w + l; col < len(x); col += bs {
				wp[l] = sim.FMA(x[col], x[col], wp[l])
			}
		}
		wp.ReduceSum(32, nil)
		shared[w] = wp[0]
	}
	var wp sim.Warp
	copy(wp[:], shared[:])
	wp.ReduceSum(32, nil)
	return wp[0]
}

// TestRMSNormFusion checks, with the NOT HARDWARE rsqrtf stand-in, that RMSNormMul is
// ggml's rms_norm_f32 (Σx² recomputed lane by lane with warp shuffles, mean by MUFU.RCP
// division, (scale·x)·w), and that the fusion changes no bit: the matmuls reading its
// output give the same bits fused, unfused and uncached, while the fused norm's
// conversion is the only one (every matmul a cache hit). Row lengths around the block-size
// switch at 1024 and up to 5120; rapid prints the seed of a failure.
func TestRMSNormFusion(t *testing.T) {
	defer fp16path.SetStandInMUFU()()
	rapid.Check(t, func(rt *rapid.T) {
		n := 256 * rapid.SampledFrom([]int{1, 3, 4, 5, 20}).Draw(rt, "n/256")
		r := rand.New(rand.NewPCG(rapid.Uint64().Draw(rt, "seed"), 0))
		x := make([]float32, n)
		w := make([]float32, n)
		scale := math.Ldexp(1, rapid.IntRange(-30, 30).Draw(rt, "log2 scale"))
		for i := range x {
			x[i] = float32(scale * studentT(r, 3))
			w[i] = float32(1 + float64(0.1*r.NormFloat64())) // no fused multiply-add: the same data on every GOARCH
		}
		const eps = 1e-6
		plain, err := fp16path.RMSNormMul(x, w, eps, nil)
		if err != nil {
			rt.Fatal(err)
		}
		s, _ := fp16path.StandInRsqrtf(sim.Add(sim.Div(sumSquaresLanes(x), float32(n)), eps))
		for i := range x {
			if want := sim.Mul(sim.Mul(s, x[i]), w[i]); math.Float32bits(plain[i]) != math.Float32bits(want) {
				rt.Fatalf("value %d: %g, rms_norm_f32 recomputed %g", i, plain[i], want)
			}
		}
		typ := rapid.SampledFrom(fp16path.Types()).Draw(rt, "type")
		if n%typ.BlockSize() != 0 {
			typ = quant.Q8_0
		}
		mat, _ := realistic(r, typ, n, 3)
		want, err := fp16path.MulMat(typ, mat, n, 3, plain, 1, nil)
		if err != nil {
			rt.Fatal(err)
		}
		for _, opt := range []*fp16path.Options{nil, {NoNormFusion: true}, {NoActCache: true}} {
			var c fp16path.Cache
			dst, err := c.RMSNormMul(x, w, eps, opt)
			if err != nil {
				rt.Fatal(err)
			}
			if i := sameBits(dst, plain); i >= 0 {
				rt.Fatalf("%+v: norm output %d differs", opt, i)
			}
			for q := 0; q < 3; q++ { // Q, K, V
				got, err := c.MulMat(typ, mat, n, 3, dst, 1, opt)
				if err != nil {
					rt.Fatal(err)
				}
				if i := sameBits(got, want); i >= 0 {
					rt.Fatalf("%+v: matmul %d output %d: %g, unfused uncached %g", opt, q, i, got[i], want[i])
				}
			}
			wantConv, wantHits := 1, 3
			switch {
			case opt == nil:
			case opt.NoNormFusion:
				wantConv, wantHits = 1, 2
			case opt.NoActCache:
				wantConv, wantHits = 3, 0
			}
			if c.Conversions() != wantConv || c.Hits() != wantHits {
				rt.Fatalf("%+v: %d conversions, %d hits; want %d, %d", opt, c.Conversions(), c.Hits(), wantConv, wantHits)
			}
		}
	})
}
