package mmq_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/ggsim/ggsim/oracle/oracletest"
	"github.com/ggsim/ggsim/quant"
	"github.com/ggsim/ggsim/sim"
	"github.com/ggsim/ggsim/sim/mmq"
)

// TestTraceOutputMatchesFast: the traced value of an output has the bits MulMat gives
// there, on the MMA and dp4a paths, with stream-K fixups (several ranges per tile),
// fallback rows and tiles of one range; the steps chain (each In is the previous Out of
// its range) and the fixup adds in the plan's order.
func TestTraceOutputMatchesFast(t *testing.T) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 3))
	h200, err := sim.Lookup("H200")
	if err != nil {
		t.Fatal(err)
	}
	dp4a := h200
	dp4a.NoTuringMMA, dp4a.ForceMMQ = true, true
	dp4a.Int8MMA = dp4a.HasInt8MMA()
	fixups := 0
	for _, c := range []struct {
		dev     sim.Device
		t       quant.Type
		K, N, M int
	}{
		{h200, quant.Q4_K, 1024, 256, 20},
		{h200, quant.Q8_0, 512, 130, 40},
		{h200, quant.Q4_0, 4096, 128, 9},
		{dp4a, quant.Q6_K, 1024, 130, 33},
		{dp4a, quant.IQ2_XXS, 512, 64, 16},
		{h200, quant.MXFP4, 512, 200, 64},
	} {
		w, err := oracletest.RealisticWeights(c.t, c.K, c.N, r.Uint64())
		if err != nil {
			t.Fatal(err)
		}
		b := oracletest.RealisticActivations(c.K, c.M, r.Uint64())
		p, err := mmq.MakePlan(c.dev, c.t, c.K, c.N, c.M)
		if err != nil {
			t.Fatal(err)
		}
		out, err := mmq.MulMat(c.dev, c.t, w, c.K, c.N, b, c.M, p)
		if err != nil {
			t.Fatal(err)
		}
		for range 6 {
			row, col := r.IntN(c.N), r.IntN(c.M)
			tr, err := mmq.TraceOutput(c.dev, c.t, w, c.K, c.N, b, c.M, p, row, col)
			if err != nil {
				t.Fatal(err)
			}
			if g, f := math.Float32bits(tr.Value), math.Float32bits(out[col*c.N+row]); g != f {
				t.Errorf("%v K=%d N=%d M=%d (%d,%d): traced 0x%08x, MulMat 0x%08x", c.t, c.K, c.N, c.M, row, col, g, f)
			}
			prev := make([]float32, len(tr.Ranges))
			for _, s := range tr.Steps {
				if math.Float32bits(s.In) != math.Float32bits(prev[s.Range]) {
					t.Errorf("%v: step %+v does not continue its range", c.t, s)
				}
				prev[s.Range] = s.Out
			}
			if len(tr.Ranges) > 1 {
				fixups++
				if len(tr.Fixup) != len(tr.Ranges) || tr.Fixup[len(tr.Fixup)-1].Out != tr.Value {
					t.Errorf("%v: fixup %+v for %d ranges", c.t, tr.Fixup, len(tr.Ranges))
				}
			}
		}
	}
	if fixups == 0 {
		t.Error("no traced output had a fixup")
	}
}
