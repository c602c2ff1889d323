package mmq_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/ggsim/ggsim/oracle/oracletest"
	"github.com/ggsim/ggsim/quant"
	"github.com/ggsim/ggsim/sim/mmq"
)

// TestTraceOutputIDMatchesFast: the traced value of a MUL_MAT_ID output has the bits
// MulMatID gives there, on the MMA and dp4a paths, with 1 and 2 activation rows per
// token, outputs in split tiles (stream-K fixups) and in the experts' partial column
// tiles; the trace names the output's expert and a compact column of it.
func TestTraceOutputIDMatchesFast(t *testing.T) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 5))
	fixups := 0
	for _, c := range []struct {
		dp4a          bool
		t             quant.Type
		K, N, E, U, T int
		B1            int
	}{
		{false, quant.Q4_K, 1024, 256, 8, 2, 40, 1},
		{false, quant.Q8_0, 512, 130, 4, 2, 33, 2},
		{true, quant.Q6_K, 512, 128, 6, 3, 20, 1},
		{false, quant.MXFP4, 512, 136, 8, 4, 48, 1},
	} {
		dev := devicePath(t, c.dp4a)
		w, err := oracletest.RealisticWeights(c.t, c.K, c.N*c.E, r.Uint64())
		if err != nil {
			t.Fatal(err)
		}
		b := oracletest.RealisticActivations(c.K, c.B1*c.T, r.Uint64())
		ids := make([]int32, 0, c.T*c.U)
		for range c.T {
			for _, e := range r.Perm(c.E)[:c.U] {
				ids = append(ids, int32(e))
			}
		}
		out, p, err := mulMatID(dev, c.t, w, c.K, c.N, c.E, b, c.B1, c.T, ids, c.U)
		if err != nil {
			t.Fatal(err)
		}
		for range 8 {
			row, col := r.IntN(c.N), r.IntN(c.T*c.U)
			tr, err := mmq.TraceOutputID(dev, c.t, w, c.K, c.N, c.E, b, c.B1, c.T, ids, c.U, p, row, col)
			if err != nil {
				t.Fatal(err)
			}
			if g, f := math.Float32bits(tr.Value), math.Float32bits(out[col*c.N+row]); g != f {
				t.Errorf("%v K=%d N=%d E=%d T=%d U=%d (%d,%d): traced 0x%08x, MulMatID 0x%08x", c.t, c.K, c.N, c.E, c.T, c.U, row, col, g, f)
			}
			if tr.Expert != int(ids[col]) || tr.Row != row || tr.Col != col || len(tr.Steps) == 0 {
				t.Errorf("%v (%d,%d): expert %d (ids %d), %d steps", c.t, row, col, tr.Expert, ids[col], len(tr.Steps))
			}
			if len(tr.Ranges) > 1 {
				fixups++
			}
		}
		if _, err := mmq.TraceOutputID(dev, c.t, w, c.K, c.N, c.E, b, c.B1, c.T, ids, c.U, p, 0, c.T*c.U); err == nil {
			t.Errorf("%v: column T*U: no error", c.t)
		}
	}
	if fixups == 0 {
		t.Error("no traced output had a fixup")
	}
}
