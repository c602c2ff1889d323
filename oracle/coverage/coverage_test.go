package coverage_test

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/ggsim/ggsim"
	"github.com/ggsim/ggsim/gguf/golden"
	"github.com/ggsim/ggsim/moe"
	"github.com/ggsim/ggsim/oracle"
	"github.com/ggsim/ggsim/oracle/coverage"
	"github.com/ggsim/ggsim/quant"
	"github.com/ggsim/ggsim/sim"
	"github.com/ggsim/ggsim/tiling"
)

func lookup(t *testing.T, name string) sim.Device {
	t.Helper()
	d, err := sim.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func has(fs []coverage.Feature, kind, value string) bool {
	return slices.Contains(fs, coverage.Feature{Kind: kind, Value: value})
}

// The paths of known launches on the H200, as explain reports them.
func TestFeatures(t *testing.T) {
	h200 := lookup(t, "H200")
	for _, c := range []struct {
		s    tiling.Shape
		want []coverage.Feature
	}{
		{tiling.Shape{K: 4096, N: 4096, M: 1}, []coverage.Feature{
			{Kind: coverage.KindDispatch, Value: "mul_mat mmvq"},
			{Kind: coverage.KindMMVQ, Value: "mul_mat_vec_q nwarps=4 rows_per_block=1"}}},
		{tiling.Shape{K: 4096, N: 4096, M: 9}, []coverage.Feature{
			{Kind: coverage.KindDispatch, Value: "mul_mat mmq"}, {Kind: coverage.KindMMQJ, Value: "J=16"},
			{Kind: coverage.KindMMQTiles, Value: coverage.TilesFull}, {Kind: coverage.KindMMQPath, Value: coverage.PathMMA},
			{Kind: coverage.KindStreamK, Value: coverage.StreamKFixup}}},
		{tiling.Shape{K: 4096, N: 4000, M: 100}, []coverage.Feature{
			{Kind: coverage.KindDispatch, Value: "mul_mat mmq"}, {Kind: coverage.KindMMQJ, Value: "J=128"}, // the fallback table has no J=112 (simrun explain)
			{Kind: coverage.KindMMQTiles, Value: coverage.TilesFallback}}},
	} {
		fs, err := coverage.Features(h200, quant.Q4_K, c.s, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range c.want {
			if !slices.Contains(fs, w) {
				t.Errorf("%+v: no %v in %v", c.s, w, fs)
			}
		}
	}
	// A MUL_MAT_ID through mul_mat_q with every token on one expert: the inverse map
	// (B1 = 1, U = 2) and tiles empty for their expert.
	ids := make([]int32, 2*64)
	for i := range ids {
		ids[i] = int32(i % 2)
	}
	r, err := moe.Route(ids, 64, 2, 8, 1)
	if err != nil {
		t.Fatal(err)
	}
	fs, err := coverage.Features(h200, quant.Q4_K, tiling.Shape{K: 4096, N: 1024, M: 64, Experts: 8}, r)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []string{coverage.MoEInverse, coverage.MoEEmptyTiles} {
		if !has(fs, coverage.KindMoE, v) {
			t.Errorf("MUL_MAT_ID: no %q in %v", v, fs)
		}
	}
	if !has(fs, coverage.KindDispatch, "mul_mat_id mmq") {
		t.Errorf("MUL_MAT_ID: %v", fs)
	}
}

// Possible is derived from the dispatch model, so it differs where the devices differ:
// the H200 has the MMA layout and both stream-K cases, a dp4a build of it (no int8
// MMA) the dp4a layout only, the P100 (no dp4a) no mul_mat_q at all.
func TestPossibleFollowsTheDevice(t *testing.T) {
	h200 := coverage.Possible(lookup(t, "H200"))
	for _, f := range []coverage.Feature{
		{Kind: coverage.KindMMQPath, Value: coverage.PathMMA}, {Kind: coverage.KindStreamK, Value: coverage.StreamKFixup},
		{Kind: coverage.KindStreamK, Value: coverage.StreamKNoFixup}, {Kind: coverage.KindMMQJ, Value: "J=128"},
		{Kind: coverage.KindDispatch, Value: "mul_mat_id mmvq_moe"}, {Kind: coverage.KindMoE, Value: coverage.MoEEmptyTiles},
	} {
		if !slices.Contains(h200, f) {
			t.Errorf("H200: %v not possible", f)
		}
	}
	if has(h200, coverage.KindMMQPath, coverage.PathDP4A) {
		t.Errorf("H200 (int8 MMA): dp4a layout possible")
	}
	dp4a := lookup(t, "H200")
	dp4a.NoTuringMMA, dp4a.ForceMMQ = true, true
	dp4a.Int8MMA = dp4a.HasInt8MMA()
	fs := coverage.Possible(dp4a)
	if !has(fs, coverage.KindMMQPath, coverage.PathDP4A) || has(fs, coverage.KindMMQPath, coverage.PathMMA) {
		t.Errorf("H200 without int8 MMA: %v", fs)
	}
	for _, f := range coverage.Possible(lookup(t, "P100")) {
		if f.Kind == coverage.KindMMQJ || f.Value == "mul_mat mmq" {
			t.Errorf("P100 (no dp4a): %v possible", f)
		}
	}
}

// Every path a launch inside Possible's grid of shapes takes is in Possible.
func TestExercisedWithinPossible(t *testing.T) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 1))
	dev := lookup(t, "H200")
	poss := coverage.Possible(dev)
	types := []quant.Type{quant.Q4_0, quant.Q8_0, quant.Q4_K, quant.Q6_K, quant.IQ2_XXS, quant.MXFP4, quant.F16}
	for range 300 {
		typ := types[r.IntN(len(types))]
		qk := int64(typ.BlockSize())
		s := tiling.Shape{K: qk << r.IntN(6), N: []int64{4096, 4000}[r.IntN(2)], M: 1 + r.Int64N(260)}
		fs, err := coverage.Features(dev, typ, s, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range fs {
			if !slices.Contains(poss, f) {
				t.Errorf("%v %+v: %v exercised but not in Possible", typ, s, f)
			}
		}
	}
}

// The recorder sees what the verifier runs: the golden MMQ slice exercises mul_mat_q
// with J = 16 and a fixup on the H200, and misses the fallback tiles.
func TestRecorderOnGolden(t *testing.T) {
	f, err := golden.Open("../../testdata/golden/ggml-h200-dev-mmq.slice.gguf")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rec := coverage.NewRecorder(ggsim.NewSimulator())
	res, err := oracle.VerifyFile(f, rec, oracle.Options{SkipFP64: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range res {
		if !c.OK() {
			t.Errorf("%s", c.Line())
		}
	}
	reps := rec.Report()
	if len(reps) != 1 || reps[0].Device != "H200" || reps[0].Cases == 0 {
		t.Fatalf("%+v", reps)
	}
	rep := reps[0]
	var ex []coverage.Feature
	for _, c := range rep.Exercised {
		ex = append(ex, c.Feature)
	}
	if !has(ex, coverage.KindDispatch, "mul_mat mmq") || !has(ex, coverage.KindMMQJ, "J=16") || !has(ex, coverage.KindStreamK, coverage.StreamKFixup) {
		t.Errorf("exercised %v", ex)
	}
	if !has(rep.Missed, coverage.KindMMQTiles, coverage.TilesFallback) || has(rep.Missed, coverage.KindMMQJ, "J=16") {
		t.Errorf("missed %v", rep.Missed)
	}
	if rep.Covered+len(rep.Missed) != rep.Possible {
		t.Errorf("covered %d + missed %d != possible %d", rep.Covered, len(rep.Missed), rep.Possible)
	}
}
