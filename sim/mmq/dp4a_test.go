package mmq_test

import (
	"errors"
	"math"
	"testing"

	"github.com/ggsim/ggsim/oracle"
	"github.com/ggsim/ggsim/oracle/oracletest"
	"github.com/ggsim/ggsim/quant"
	"github.com/ggsim/ggsim/sim"
	"github.com/ggsim/ggsim/sim/mmq"
)

// TestDP4AWithinFP64Bound: every dp4a kernel's result lies within the oracle's bound of
// the fp64 product of the dequantized weights, on a shape with fallback rows (N = 130)
// and stream-K fixup (2 tiles on 132 SMs).
func TestDP4AWithinFP64Bound(t *testing.T) {
	dev, err := sim.Lookup("H200")
	if err != nil {
		t.Fatal(err)
	}
	const K, N, M = 1024, 130, 37
	for _, typ := range mmq.DP4ATypes() {
		a, b := mmq.RandomCase(t, typ, K, N, M, uint64(typ)+11)
		p := mmq.PlanFor(t, dev, typ, K, N, M)
		got, err := mmq.MulMatDP4A(dev, typ, a, K, N, b, M, p)
		if err != nil {
			t.Fatalf("%v: %v", typ, err)
		}
		ref, err := oracle.MulMatRef(typ, a, K, N, b, M)
		if err != nil {
			t.Fatal(err)
		}
		if out, first := ref.WithinBound(got); out > 0 {
			t.Errorf("%v: %d of %d outside the fp64 bound; first dst[%d] = %g, fp64 %g ± %g",
				typ, out, len(got), first, got[first], ref.Value[first], ref.Bound[first])
		}
	}
}

// TestDP4AVersusMMA: where both paths model a type they agree to within the difference
// of their float orders (the MMA path's per-32 products and, for Q4_K, its half-precision
// d*sc), and for Q4_K they differ somewhere.
func TestDP4AVersusMMA(t *testing.T) {
	dev, _ := sim.Lookup("H200")
	const K, N, M = 1024, 256, 40
	// Q4_0 on the dp4a path applies its -8 through the y block sums (ds4.y: the sum of
	// the unquantized activations, in half), the MMA path through the integers (q-8 times
	// the quantized activations): they differ by 8*d4 times the activations' quantization
	// error summed per block, about 1e-2 of the largest output here.
	limits := map[quant.Type]float64{quant.Q8_0: 1e-6, quant.Q4_0: 5e-2, quant.Q4_K: 1e-2}
	for typ, lim := range limits {
		p, err := mmq.MakePlan(dev, typ, K, N, M)
		if err != nil {
			continue // not on the MMA path
		}
		a, b := mmq.RandomCase(t, typ, K, N, M, uint64(typ)+23)
		d, err := mmq.MulMatDP4A(dev, typ, a, K, N, b, M, p)
		if err != nil {
			t.Fatal(err)
		}
		m, err := mmq.MulMat(dev, typ, a, K, N, b, M, p)
		if err != nil {
			t.Fatal(err)
		}
		var maxDiff, maxAbs float64
		differ := 0
		for i := range d {
			if d[i] != m[i] {
				differ++
			}
			maxDiff = math.Max(maxDiff, math.Abs(float64(d[i])-float64(m[i])))
			maxAbs = math.Max(maxAbs, math.Abs(float64(m[i])))
		}
		maxRel := maxDiff / maxAbs // normwise: near-zero outputs carry the others' rounding
		t.Logf("%v: %d of %d elements differ, max |dp4a-mma| / max |mma| = %.3g", typ, differ, len(d), maxRel)
		if maxRel > lim {
			t.Errorf("%v: dp4a and MMA differ by %.3g relative, more than %g", typ, maxRel, lim)
		}
		if typ == quant.Q4_K && differ == 0 {
			t.Errorf("q4_K: dp4a equals MMA everywhere; the half products of the MMA path should show")
		}
	}
}

func TestDP4AUnsupported(t *testing.T) {
	dev, _ := sim.Lookup("H200")
	p := mmq.PlanFor(t, dev, quant.Q8_0, 256, 1, 1)
	_, err := mmq.MulMatDP4A(dev, quant.F16, make([]byte, 512), 256, 1, make([]float32, 256), 1, p)
	if err == nil || !errors.Is(err, errors.ErrUnsupported) {
		t.Fatalf("F16 on the dp4a path: err = %v, want one wrapping errors.ErrUnsupported", err)
	}
}

// TestDP4ASweep runs the first cases of the GPU sweep (oracletest.Sweep "mmq": every MMQ
// type, shapes at tile, J and stream-K boundaries, K not a multiple of an iteration,
// adversarial and non-finite data) through MulMatDP4A: each must run, and give the same
// bits twice; on plain data every output must lie within the fp64 bound (adversarial
// data can overflow float32 on the way, as on the GPU: oracletest's property (a)).
func TestDP4ASweep(t *testing.T) {
	dev, _ := sim.Lookup("H200")
	n := 44 // two rounds of the 22 types
	if testing.Short() {
		n = 22
	}
	plain := 0
	for i := 0; i < n; i++ {
		c, err := oracletest.Sweep(oracletest.SweepMMQ, 1, i)
		if err != nil {
			t.Fatal(err)
		}
		p := mmq.PlanFor(t, dev, c.Type, c.K, c.N, c.M)
		got, err := mmq.MulMatDP4A(dev, c.Type, c.A, c.K, c.N, c.B, c.M, p)
		if err != nil {
			t.Fatalf("case %d (%v %s): %v", i, c.Type, c.Shape(), err)
		}
		again, _ := mmq.MulMatDP4A(dev, c.Type, c.A, c.K, c.N, c.B, c.M, p)
		if oracletest.Digest(got) != oracletest.Digest(again) {
			t.Errorf("case %d (%v %s): two runs differ", i, c.Type, c.Shape())
		}
		if c.Profile != "plain" {
			continue
		}
		plain++
		ref, err := oracle.MulMatRef(c.Type, c.A, c.K, c.N, c.B, c.M)
		if err != nil {
			t.Fatal(err)
		}
		if out, first := ref.WithinBound(got); out > 0 {
			t.Errorf("case %d (%v %s): %d of %d outside the bound; first dst[%d] = %g, fp64 %g ± %g",
				i, c.Type, c.Shape(), out, len(got), first, got[first], ref.Value[first], ref.Bound[first])
		}
	}
	t.Logf("%d sweep cases run, %d plain ones within the fp64 bound", n, plain)
}
