package oracletest_test

import (
	"math/rand/v2"
	"testing"

	"github.com/ggsim/ggsim"
	"github.com/ggsim/ggsim/internal/bugs"
	"github.com/ggsim/ggsim/oracle"
	"github.com/ggsim/ggsim/oracle/oracletest"
	"github.com/ggsim/ggsim/quant"
	"github.com/ggsim/ggsim/sim"
	"github.com/ggsim/ggsim/sim/mmq"
	"github.com/ggsim/ggsim/streamk"
	"github.com/ggsim/ggsim/tiling"
)

// The bugs of ggml's history, re-injected (package internal/bugs, or a model of the
// host/device mismatch below), must be caught by the fp64 kernel bound on the devices
// where they bit users, and must change nothing where they could not.

func lookup(t *testing.T, name string) sim.Device {
	t.Helper()
	d, err := sim.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// TestHistoryPR8311: stream-K boundaries not rounded to whole iterations. With K a
// multiple of the iteration (256 values) the bug changes no bit; with K = 4160 (130
// blocks of 32, 130 mod 8 = 2: DeepSeek's rows are multiples of 64 only) the fp64
// check catches it on every stream-K device tried.
func TestHistoryPR8311(t *testing.T) {
	impl := ggsim.NewSimulator()
	for _, name := range []string{"H200", "RTX 4090", "A100"} {
		dev := lookup(t, name)
		for _, typ := range []quant.Type{quant.Q4_0, quant.Q8_0} {
			for _, K := range []int{4096, 4160} {
				const N, M = 256, 16
				a, err := oracletest.RealisticWeights(typ, K, N, 3)
				if err != nil {
					t.Fatal(err)
				}
				b := oracletest.RealisticActivations(K, M, 4)
				good, err := impl.MulMat(dev, typ, a, K, N, b, M)
				if err != nil {
					t.Fatal(err)
				}
				ref, err := oracle.MulMatRefOn(dev, typ, a, K, N, b, M)
				if err != nil {
					t.Fatal(err)
				}
				if out, _ := ref.WithinBound(good); out > 0 {
					t.Fatalf("%s %v K=%d: %d correct outputs outside the bound", name, typ, K, out)
				}
				var bad []float32
				bugs.Do(&bugs.StreamKUnaligned, func() { bad, err = impl.MulMat(dev, typ, a, K, N, b, M) })
				if err != nil {
					t.Fatal(err)
				}
				out, _ := ref.WithinBound(bad)
				same := oracle.CompareBits(bad, good).BitExact()
				t.Logf("%s %v K=%d: with PR 8311's bug %d of %d outputs outside the bound (bit-identical: %v)", name, typ, K, out, len(bad), same)
				switch {
				case K%256 == 0 && !same:
					t.Errorf("%s %v K=%d: the bug changed bits although K is a whole number of iterations", name, typ, K)
				case K%256 != 0 && out == 0:
					t.Errorf("%s %v K=%d: the fp64 check missed PR 8311's bug", name, typ, K)
				}
			}
		}
	}
}

// TestHistoryPR17089: the MoE fixup added to the columns of the expert's first tile.
// Hot-expert routings (one expert with more than J columns, so tiles with jt > 0) on
// MMQ in MUL_MAT_ID mode; the fp64 check must catch every case where the bug changed
// an output, on the RTX 5090 (170 SMs: perplexity 15.5 instead of 10.1 in the PR) and
// the others.
func TestHistoryPR17089(t *testing.T) {
	impl := ggsim.NewSimulator()
	for _, name := range []string{"RTX 5090", "RTX 4090", "H200"} {
		dev := lookup(t, name)
		const cases = 2
		changed, caught := 0, 0
		for c := 0; c < cases; c++ {
			r := rand.New(rand.NewPCG(uint64(c), 17089))
			typ := []quant.Type{quant.Q4_0, quant.Q4_K}[c%2]
			const K, N, E, U = 512, 64, 4, 2
			T := 160 + r.IntN(64) // the hot expert has T columns: more than J, tiles with jt > 0
			ids := make([]int32, T*U)
			for tok := 0; tok < T; tok++ {
				ids[tok*U] = 0 // the hot expert
				ids[tok*U+1] = int32(1 + r.IntN(E-1))
			}
			as, err := oracletest.RealisticWeights(typ, K, N*E, uint64(c))
			if err != nil {
				t.Fatal(err)
			}
			b := oracletest.RealisticActivations(K, T, uint64(c)+1)
			good, err := impl.MulMatID(dev, typ, as, K, N, E, b, 1, T, ids, U)
			if err != nil {
				t.Fatal(err)
			}
			var bad []float32
			bugs.Do(&bugs.MoEFixupColumns, func() { bad, err = impl.MulMatID(dev, typ, as, K, N, E, b, 1, T, ids, U) })
			if err != nil {
				t.Fatal(err)
			}
			ref, err := oracle.MulMatIDRefOn(dev, typ, as, K, N, E, b, 1, T, ids, U)
			if err != nil {
				t.Fatal(err)
			}
			if out, _ := ref.WithinBound(good); out > 0 {
				t.Fatalf("%s case %d: %d correct outputs outside the bound", name, c, out)
			}
			cmp := oracle.CompareBits(bad, good)
			if cmp.BitExact() {
				continue
			}
			changed++
			out, _ := ref.WithinBound(bad)
			if out > 0 {
				caught++
			}
			t.Logf("%s case %d (%v, %d tokens): %d outputs changed, %d outside the bound", name, c, typ, T, cmp.Differing, out)
		}
		t.Logf("%s: the bug changed %d of %d cases, the fp64 check caught %d", name, changed, cases, caught)
		if caught != changed {
			t.Errorf("%s: the fp64 check caught %d of the %d cases PR 17089's bug changed", name, caught, changed)
		}
		if name == "RTX 5090" && changed == 0 {
			t.Errorf("RTX 5090: the bug changed no case: the test does not exercise it")
		}
	}
}

// hostCCOutput models issue 28018's bug: the host decides the MMQ launch from the
// device's cc (as if the build had the device's architecture) while the device runs the
// kernel compiled for the highest compiled architecture. Where the two configs differ,
// the device's conventional kernel (no stream-K below Volta) reads blockIdx.x as the row
// tile (of its own mmq_y rows) and blockIdx.y as the column tile (of the host's J, a
// template parameter), over the host's grid; outputs no block covers keep what dst held
// (0 here), and the fixup kernel the host launches adds nothing (its tmp_fixup, never
// written by a conventional kernel, is taken as zero: stale data there would only add
// errors). It returns nil where host and device agree (the bug cannot show).
func hostCCOutput(t *testing.T, dev sim.Device, typ quant.Type, a []byte, K, N int, b []float32, M int) []float32 {
	host := dev
	host.ArchList = nil
	s := tiling.Shape{K: int64(K), N: int64(N), M: int64(M)}
	if tiling.MulMat(host, typ, s).Kernel != tiling.KernelMMQ {
		return nil
	}
	hp, err := tiling.MakeMMQPlan(&host, typ, s)
	if err != nil {
		t.Fatal(err)
	}
	dp, err := mmq.MakePlan(dev, typ, K, N, M)
	if err != nil {
		t.Fatal(err)
	}
	dc, hc := dp.Launch.Config, hp.Config
	if dc.I == hc.I && dc.J == hc.J && dc.StreamK == hc.StreamK && dc.UseMMADataLayout == hc.UseMMADataLayout {
		return nil
	}
	vals, err := mmq.MulMat(dev, typ, a, K, N, b, M, dp)
	if err != nil {
		t.Fatal(err)
	}
	gx, gy := hp.NTY, hp.NTX
	if hc.StreamK {
		part, err := streamk.Plan(streamk.Params{NSM: host.SMCount, NVIDIA: true, StreamK: true,
			NTilesX: hp.NTX, NTilesY: hp.NTY, NChannels: hp.NTZW, NSamples: 1,
			BlocksPerTile: hp.BlocksPerNe00, BlocksPerIter: hp.BlocksPerIter, J: hc.J})
		if err != nil {
			t.Fatal(err)
		}
		gx, gy = part.GridDim[0], part.GridDim[1]
	}
	if dc.StreamK {
		t.Fatalf("%s: the device's kernel uses stream-K: this model covers a conventional device kernel only", dev.Name)
	}
	// J is the kernel's template parameter, the host's; I (mmq_y) is the device's.
	out := make([]float32, len(vals))
	for j := 0; j < M; j++ {
		for i := 0; i < N; i++ {
			if i/dc.I < gx && j/hc.J < gy {
				out[j*N+i] = vals[j*N+i]
			}
		}
	}
	return out
}

// TestHistoryIssue28018: a build whose highest compiled architecture is below the
// device's (a Pascal build run on Turing, Ampere, Ada or Hopper through PTX JIT), with
// the host deciding from the device's cc: the fp64 check catches it wherever the host's
// and the device's MMQ configs differ; where they agree (an sm_80 build on an H200, an
// sm_89 build on an RTX 5090 for non-FP4 types) the bug changes nothing.
func TestHistoryIssue28018(t *testing.T) {
	// Shapes whose host launch is one full wave (tiles_efficiency_percent >= 90: grid =
	// ntiles): N = 128 rows per SM, so the device's 64-row tiles cover half the rows.
	cases := []struct {
		dev   string
		archs []int
		bites bool
	}{
		{"A100", []int{610}, true}, {"RTX 4090", []int{610}, true}, {"T4", []int{610}, true},
		{"H200", []int{800}, false}, {"RTX 5090", []int{890}, false},
	}
	for _, c := range cases {
		dev := lookup(t, c.dev)
		dev.ArchList = c.archs
		for k, typ := range []quant.Type{quant.Q4_0, quant.Q4_K} {
			if k > 0 && c.dev != "T4" { // the larger devices: one type (128 rows per SM are many)
				continue
			}
			const K, M = 256, 16
			N := 128 * dev.SMCount
			a, err := oracletest.RealisticWeights(typ, K, N, 5)
			if err != nil {
				t.Fatal(err)
			}
			b := oracletest.RealisticActivations(K, M, 6)
			bad := hostCCOutput(t, dev, typ, a, K, N, b, M)
			if bad == nil {
				if c.bites {
					t.Errorf("%s %v %v: host and device configs agree", c.dev, c.archs, typ)
				}
				t.Logf("%s built for %v, %v: host and device agree, nothing to catch", c.dev, c.archs, typ)
				continue
			}
			if !c.bites {
				t.Errorf("%s %v %v: host and device configs differ, the test expected them equal", c.dev, c.archs, typ)
			}
			ref, err := oracle.MulMatRefOn(dev, typ, a, K, N, b, M)
			if err != nil {
				t.Fatal(err)
			}
			out, _ := ref.WithinBound(bad)
			t.Logf("%s built for %v, %v (kernel bound path %q): %d of %d outputs outside the bound", c.dev, c.archs, typ, oracle.KernelPath(dev, typ, K, N, M), out, len(bad))
			if out == 0 {
				t.Errorf("%s %v %v: the fp64 check missed issue 28018's bug", c.dev, c.archs, typ)
			}
		}
	}
}
