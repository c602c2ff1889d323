package main

import (
	"encoding/json"
	"math"
	"slices"
	"testing"

	"github.com/ggsim/ggsim"
	"github.com/ggsim/ggsim/oracle"
	"github.com/ggsim/ggsim/oracle/oracletest"
	"github.com/ggsim/ggsim/quant"
	"github.com/ggsim/ggsim/sim"
)

// judgeWhole is judgeRun for a MUL_MAT as it was before it judged a block of columns at
// a time (commit 47dbb87): the whole reference, then the statistics in one pass.
func judgeWhole(dev sim.Device, t quant.Type, w []byte, K, N int, acts []float32, M int, out []float32, ids []int32, U int) (*verdict, error) {
	var full *oracle.Reference
	var err error
	if ids == nil {
		full, err = oracle.MulMatRefOn(dev, t, w, K, N, acts, M)
	} else {
		rs, _ := t.RowSize(int64(K))
		full, err = oracle.MulMatIDRefOn(dev, t, w, K, N, len(w)/(int(rs)*N), acts, 1, len(ids)/U, ids, U)
	}
	if err != nil {
		return nil, err
	}
	value, bound := full.Value, full.Bound
	center := value
	if full.Center != nil {
		center = full.Center
	}
	outside, first := full.WithinBound(out)
	e := oracle.ErrorsOf(out, value)
	v := &verdict{N: len(out), Outside: outside, FirstOut: first, Within: outside == 0,
		NMSE: finite(e.NMSE), RelRMS: finite(e.RelRMS), MaxAbs: finite(e.MaxAbs), NonFinite: e.NonFinite}
	var maxBound, worst float64
	ulps := make([]int64, len(out))
	for i, g := range out {
		ulps[i] = oracle.ULPDistance(g, float32(value[i]))
		v.MaxULP = max(v.MaxULP, ulps[i])
		maxBound = max(maxBound, bound[i])
		d := math.Abs(float64(g) - center[i])
		if bound[i] > 0 {
			worst = max(worst, d/bound[i])
		} else if d > 0 {
			worst = math.Inf(1)
		}
	}
	v.MaxBound, v.WorstRatio = finite(maxBound), finite(worst)
	slices.Sort(ulps)
	v.MedianULP = ulps[len(ulps)/2]
	return v, nil
}

// judgeRun's verdict, a block of columns at a time, is the whole-reference one: on the
// MMVQ and MMQ paths and MulMatRef's fallback, with several blocks (N·M above
// judgeBlock), with outputs outside the bound, a NaN and an Inf among them.
func TestJudgeRunByBlocksSame(t *testing.T) {
	dev, err := sim.Lookup("H200")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		typ     quant.Type
		K, N, M int
		spoil   bool
	}{
		{quant.Q4_K, 256, 4096, 4, false},
		{quant.Q4_0, 64, 4096, 70, false},
		{quant.Q4_0, 64, 4096, 70, true},
		{quant.IQ2_XXS, 256, 2048, 140, true},
	} {
		if c.N*c.M <= judgeBlock && c.M > 8 {
			t.Fatalf("K=%d N=%d M=%d is one block", c.K, c.N, c.M)
		}
		w, err := oracletest.RealisticWeights(c.typ, c.K, c.N, 2)
		if err != nil {
			t.Fatal(err)
		}
		acts := oracletest.RealisticActivations(c.K, c.M, 2)
		res, err := ggsim.MulMat(dev, ggsim.Weights{Type: c.typ, K: c.K, N: c.N, Data: w}, acts, c.M)
		if err != nil {
			t.Fatal(err)
		}
		out := res.Out
		if c.spoil { // outside the bound in the second block, a NaN, an Inf
			i := len(out) - 3
			out[i] *= 1.5
			out[i+1] = float32(math.NaN())
			out[i+2] = float32(math.Inf(-1))
		}
		want, err := judgeWhole(dev, c.typ, w, c.K, c.N, acts, c.M, slices.Clone(out), nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		got, err := judgeRun(dev, c.typ, w, c.K, c.N, acts, c.M, slices.Clone(out), nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		gj, _ := json.Marshal(got)
		wj, _ := json.Marshal(want)
		if string(gj) != string(wj) {
			t.Errorf("%v K=%d N=%d M=%d: by blocks\n%s\nwhole\n%s", c.typ, c.K, c.N, c.M, gj, wj)
		}
		if c.spoil && got.Outside == 0 {
			t.Errorf("%v K=%d N=%d M=%d: the spoiled outputs are within the bound", c.typ, c.K, c.N, c.M)
		}
	}
}

// The MUL_MAT_ID verdict, a block of tokens at a time, is the whole-reference one.
func TestJudgeRunIDByBlocksSame(t *testing.T) {
	dev, err := sim.Lookup("H200")
	if err != nil {
		t.Fatal(err)
	}
	const K, N, E, U, T = 256, 2048, 4, 2, 150 // N·U·T above judgeBlock: 3 blocks
	w, err := oracletest.RealisticWeights(quant.Q4_0, K, N*E, 4)
	if err != nil {
		t.Fatal(err)
	}
	acts := oracletest.RealisticActivations(K, T, 4)
	ids, err := routeIDs("hot", 4, E, U, T)
	if err != nil {
		t.Fatal(err)
	}
	res, err := ggsim.MulMatID(dev, ggsim.Weights{Type: quant.Q4_0, K: K, N: N, E: E, Data: w}, acts, 1, T, ids, U)
	if err != nil {
		t.Fatal(err)
	}
	out := res.Out
	out[len(out)-1] *= 2 // outside the bound in the last block
	want, err := judgeWhole(dev, quant.Q4_0, w, K, N, acts, T, slices.Clone(out), ids, U)
	if err != nil {
		t.Fatal(err)
	}
	got, err := judgeRun(dev, quant.Q4_0, w, K, N, acts, T, slices.Clone(out), ids, U)
	if err != nil {
		t.Fatal(err)
	}
	gj, _ := json.Marshal(got)
	wj, _ := json.Marshal(want)
	if string(gj) != string(wj) || got.Outside == 0 {
		t.Errorf("by blocks\n%s\nwhole\n%s", gj, wj)
	}
}
