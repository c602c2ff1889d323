package main

import (
	"encoding/json"
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/ggsim/ggsim"
	"github.com/ggsim/ggsim/oracle/oracletest"
	"github.com/ggsim/ggsim/quant"
	"github.com/ggsim/ggsim/sim"
)

// traceJSON is the part of trace's JSON the tests read.
type traceJSON struct {
	Kernel string `json:"kernel"`
	Value  struct {
		Bits string `json:"bits"`
	} `json:"value"`
	MatchFast bool            `json:"match_fast"`
	MatchGPU  *bool           `json:"match_gpu"`
	MMVQ      json.RawMessage `json:"mmvq"`
	MMQ       *struct {
		Ranges []json.RawMessage `json:"ranges"`
		Steps  []json.RawMessage `json:"steps"`
		Fixup  []json.RawMessage `json:"fixup"`
	} `json:"mmq"`
	OK bool `json:"ok"`
}

func runTraceJSON(t *testing.T, args ...string) (int, traceJSON) {
	t.Helper()
	code, out, errs := runCmd(t, append([]string{"trace", "--json"}, args...)...)
	var r traceJSON
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("trace %q: exit %d, not JSON: %v\n%s\n%s", args, code, err, out, errs)
	}
	return code, r
}

// The traced value of an output has the bits of the front door's fast simulator
// (ggsim.MulMat, computed here independently of the command) for mul_mat_vec_q (several
// columns, a last block with fewer rows) and mul_mat_q (stream-K with a fixup).
func TestTraceMatchesFrontDoor(t *testing.T) {
	dev, _ := sim.Lookup("H200")
	for _, c := range []struct {
		typ      quant.Type
		K, N, M  int
		row, col int
		kernel   string
		fixup    bool
	}{
		{quant.Q4_0, 256, 10, 1, 9, 0, "mmvq", false},
		{quant.Q4_K, 1024, 33, 3, 17, 2, "mmvq", false},
		{quant.IQ2_XXS, 512, 16, 8, 5, 7, "mmvq", false},
		{quant.Q4_K, 1024, 256, 20, 130, 7, "mmq", true},
		{quant.Q6_K, 512, 130, 64, 129, 63, "mmq", true},
	} {
		const seed = 7
		args := []string{"--type", c.typ.String(), "--shape", strconv.Itoa(c.K) + "," + strconv.Itoa(c.N) + "," + strconv.Itoa(c.M),
			"--row", strconv.Itoa(c.row), "--col", strconv.Itoa(c.col), "--seed", strconv.Itoa(seed)}
		code, r := runTraceJSON(t, args...)
		if code != 0 || !r.OK || !r.MatchFast || r.Kernel != c.kernel {
			t.Errorf("%q: exit %d, %+v", args, code, r)
			continue
		}
		w, err := oracletest.RealisticWeights(c.typ, c.K, c.N, seed)
		if err != nil {
			t.Fatal(err)
		}
		res, err := ggsim.MulMat(dev, ggsim.Weights{Type: c.typ, K: c.K, N: c.N, Data: w}, oracletest.RealisticActivations(c.K, c.M, seed), c.M)
		if err != nil {
			t.Fatal(err)
		}
		want := "0x" + strconv.FormatUint(uint64(math.Float32bits(res.Out[c.col*c.N+c.row])), 16)
		want = "0x" + strings.Repeat("0", 10-len(want)) + want[2:]
		if r.Value.Bits != want {
			t.Errorf("%q: traced %s, ggsim.MulMat %s", args, r.Value.Bits, want)
		}
		if c.kernel == "mmq" && (r.MMQ == nil || len(r.MMQ.Steps) == 0 || (len(r.MMQ.Fixup) > 0) != c.fixup) {
			t.Errorf("%q: mmq trace present %v, fixup steps expected %v", args, r.MMQ != nil, c.fixup)
		}
		if c.kernel == "mmvq" && len(r.MMVQ) == 0 {
			t.Errorf("%q: no mmvq trace", args)
		}
	}
}

// A golden case: the trace follows the GPU's bits (and the text says so).
func TestTraceGolden(t *testing.T) {
	const f = "../../testdata/golden/ggml-h200-dev-mmq.slice.gguf"
	code, r := runTraceJSON(t, "--golden", f, "--case", "0", "--row", "1", "--col", "2")
	if code != 0 || r.MatchGPU == nil || !*r.MatchGPU || len(r.MMQ.Fixup) == 0 {
		t.Errorf("exit %d %+v", code, r)
	}
	code, out, _ := runCmd(t, "trace", "--golden", f, "--case", "0", "--row", "200", "--col", "8")
	if code != 0 || !strings.Contains(out, "GPU (golden): ") || !strings.Contains(out, "(same bits)") || !strings.Contains(out, "iterations (exact int32 dots") {
		t.Errorf("exit %d\n%s", code, out)
	}
	code, out, _ = runCmd(t, "trace", "--golden", "../../testdata/golden/ggml-h200-dev-mmvq.slice.gguf", "--case", "0", "--row", "3")
	if code != 0 || !strings.Contains(out, "butterfly") || !strings.Contains(out, "activations: column 0 quantized by quantize_q8_1") {
		t.Errorf("mmvq golden: exit %d\n%s", code, out)
	}
}

func TestTraceUsage(t *testing.T) {
	for _, args := range [][]string{
		{"--row", "8"},         // N = 8
		{"--col", "1"},         // M = 1
		{"--case", "0"},        // no --golden
		{"--golden", "x.gguf"}, // no --case
		{"--golden", "x", "--case", "0", "--type", "q4_0"},
		{"--shape", "100,8,1", "--type", "q4_0"},
		{"--golden", "../../testdata/golden/ggml-h200-dev-mmq.slice.gguf", "--case", "1"}, // a quantize case
	} {
		if code, _, errs := runCmd(t, append([]string{"trace"}, args...)...); code != 2 || errs == "" {
			t.Errorf("%q: exit %d %q", args, code, errs)
		}
	}
	if code, _, _ := runCmd(t, "trace", "--golden", "missing.gguf", "--case", "0"); code != 3 {
		t.Errorf("missing golden file: exit %d", code)
	}
}
