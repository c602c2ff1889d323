package oracle_test

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"pgregory.net/rapid"

	"github.com/ggsim/ggsim"
	"github.com/ggsim/ggsim/oracle"
	"github.com/ggsim/ggsim/oracle/oracletest"
	"github.com/ggsim/ggsim/quant"
	"github.com/ggsim/ggsim/sim"
)

var kernelBoundTypes = []quant.Type{quant.Q4_0, quant.Q4_1, quant.Q5_0, quant.Q5_1, quant.Q8_0, quant.Q2_K, quant.Q3_K,
	quant.Q4_K, quant.Q5_K, quant.Q6_K, quant.IQ4_NL, quant.IQ4_XS, quant.MXFP4, quant.NVFP4, quant.IQ3_S}

func boundDevices(t *testing.T) []sim.Device {
	var devs []sim.Device
	for _, n := range []string{"H200", "RTX 4090", "A100", "RTX 5090"} {
		d, err := sim.Lookup(n)
		if err != nil {
			t.Fatal(err)
		}
		devs = append(devs, d)
	}
	dp := devs[0]
	dp.NoTuringMMA = true // the dp4a MMQ path
	return append(devs, dp)
}

// TestKernelBoundHoldsOnSimulator: every output of the simulator (MMVQ, MMQ on the MMA
// and the dp4a path, several devices) lies within MulMatRefOn's kernel bound, on weights
// quantized from floats and activations at several scales; and the bound is far
// tighter than MulMatRef's.
func TestKernelBoundHoldsOnSimulator(t *testing.T) {
	devs := boundDevices(t)
	impl := ggsim.NewSimulator()
	rapid.Check(t, func(rt *rapid.T) {
		typ := rapid.SampledFrom(kernelBoundTypes).Draw(rt, "type")
		dev := rapid.SampledFrom(devs).Draw(rt, "device")
		K := 256 * rapid.IntRange(1, 8).Draw(rt, "k/256")
		M := rapid.IntRange(1, 16).Draw(rt, "m")
		N := rapid.IntRange(1, 40).Draw(rt, "n")
		if M > 8 {
			N = rapid.SampledFrom([]int{64, 128, 200}).Draw(rt, "mmq n")
		}
		seed := rapid.Uint64().Draw(rt, "seed")
		scale := rapid.SampledFrom([]float32{1, 1e-3, 100}).Draw(rt, "scale")
		r := rand.New(rand.NewPCG(seed, 11))
		path := oracle.KernelPath(dev, typ, K, N, M)
		if path == "" {
			rt.Skip("no kernel bound for this dispatch")
		}
		a, err := oracletest.RealisticWeights(typ, K, N, seed) // random valid blocks for types without a quantizer
		if err != nil {
			rt.Fatal(err)
		}
		b := oracle.GoldenLike(r, K*M, scale)
		got, err := impl.MulMat(dev, typ, a, K, N, b, M)
		if err != nil {
			rt.Fatal(err)
		}
		ref, err := oracle.MulMatRefOn(dev, typ, a, K, N, b, M)
		if err != nil {
			rt.Fatal(err)
		}
		if out, first := ref.WithinBound(got); out > 0 {
			rt.Fatalf("%s: %d of %d outside; first %d: got %v, center %v, bound %v", path, out, len(got), first, got[first], ref.Center[first], ref.Bound[first])
		}
		old, err := oracle.MulMatRef(typ, a, K, N, b, M)
		if err != nil {
			rt.Fatal(err)
		}
		var tighter int
		for i := range got {
			if ref.Bound[i] <= old.Bound[i]/100 {
				tighter++
			}
		}
		if scale >= 1 && 10*tighter < 9*len(got) {
			rt.Fatalf("%s: the kernel bound is 100 times tighter than MulMatRef's on only %d of %d outputs", path, tighter, len(got))
		}
	})
}

// TestKernelBoundValueIsTruth: Value stays the fp64 truth (MulMatRef's), Center is the
// kernel's exact formula, close to it.
func TestKernelBoundValueIsTruth(t *testing.T) {
	h200, _ := sim.Lookup("H200")
	r := rand.New(rand.NewPCG(3, 4))
	const K, N, M = 1024, 8, 3
	a := oracle.QuantizeRows(t, quant.Q4_K, oracle.GoldenLike(r, K*N, 0.05), K, N)
	b := oracle.GoldenLike(r, K*M, 1)
	ref, err := oracle.MulMatRefOn(h200, quant.Q4_K, a, K, N, b, M)
	if err != nil {
		t.Fatal(err)
	}
	old, err := oracle.MulMatRef(quant.Q4_K, a, K, N, b, M)
	if err != nil {
		t.Fatal(err)
	}
	for i := range ref.Value {
		if math.Abs(ref.Value[i]-old.Value[i]) > 1e-9*math.Max(1, math.Abs(old.Value[i])) {
			t.Fatalf("output %d: Value %v, MulMatRef %v", i, ref.Value[i], old.Value[i])
		}
		if d := math.Abs(ref.Center[i] - ref.Value[i]); d > old.Bound[i] {
			t.Fatalf("output %d: the kernel's formula %v is %v from the truth %v, beyond MulMatRef's bound %v", i, ref.Center[i], d, ref.Value[i], old.Bound[i])
		}
	}
	if p := oracle.KernelPath(h200, quant.IQ1_M, K, 128, 16); p != "" { // no MMQ for IQ1_M
		t.Fatalf("IQ1_M with 16 columns has a kernel bound path %q; it should fall back", p)
	}
}

// TestKernelBoundID: MUL_MAT_ID on MMVQ (1..8 tokens) and MMQ (more) within
// MulMatIDRefOn's bound.
func TestKernelBoundID(t *testing.T) {
	types := []quant.Type{quant.Q4_0, quant.Q4_K, quant.Q8_0, quant.Q6_K, quant.Q5_1, quant.Q2_K}
	checkKernelBoundID(t, types, 12, func(rt *rapid.T, r *rand.Rand, typ quant.Type, K, rows, T int, _ uint64) ([]byte, []float32) {
		return oracle.QuantizeRows(rt, typ, oracle.GoldenLike(r, K*rows, 0.05), K, rows), oracle.GoldenLike(r, K*T, 1)
	})
}

// checkKernelBoundID draws MUL_MAT_ID cases of types (weights and activations from data,
// ids from a generator seeded with the case's seed and salt) and requires every output
// of the simulator within MulMatIDRefOn's kernel bound. A case the simulator refuses
// as not modelled (errors.ErrUnsupported: a shape ggml races on, a type without that
// kernel) is skipped.
func checkKernelBoundID(t *testing.T, types []quant.Type, salt uint64, data func(rt *rapid.T, r *rand.Rand, typ quant.Type, K, rows, T int, seed uint64) ([]byte, []float32)) {
	impl := ggsim.NewSimulator()
	devs := boundDevices(t)
	rapid.Check(t, func(rt *rapid.T) {
		typ := rapid.SampledFrom(types).Draw(rt, "type")
		dev := rapid.SampledFrom(devs).Draw(rt, "device")
		K := 256 * rapid.IntRange(1, 4).Draw(rt, "k/256")
		N := rapid.IntRange(1, 48).Draw(rt, "n")
		E := rapid.IntRange(2, 8).Draw(rt, "e")
		U := rapid.IntRange(1, 2).Draw(rt, "u")
		T := rapid.SampledFrom([]int{1, 3, 8, 12, 40}).Draw(rt, "tokens")
		seed := rapid.Uint64().Draw(rt, "seed")
		r := rand.New(rand.NewPCG(seed, salt))
		ids := make([]int32, T*U)
		for tok := 0; tok < T; tok++ {
			p := r.Perm(E)
			for u := 0; u < U; u++ {
				ids[tok*U+u] = int32(p[u])
			}
		}
		as, b := data(rt, r, typ, K, N*E, T, seed)
		got, err := impl.MulMatID(dev, typ, as, K, N, E, b, 1, T, ids, U)
		if errors.Is(err, oracle.ErrUnsupported) {
			rt.Skip(err)
		}
		if err != nil {
			rt.Fatal(err)
		}
		ref, err := oracle.MulMatIDRefOn(dev, typ, as, K, N, E, b, 1, T, ids, U)
		if err != nil {
			rt.Fatal(err)
		}
		if ref.Center == nil {
			rt.Fatalf("no kernel bound for %v with %d tokens on %s", typ, T, dev.Name)
		}
		if out, first := ref.WithinBound(got); out > 0 {
			rt.Fatalf("%d of %d outside; first %d: got %v, center %v, bound %v", out, len(got), first, got[first], ref.Center[first], ref.Bound[first])
		}
	})
}
