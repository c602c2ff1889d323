package main

import (
	"encoding/json"
	"fmt"
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

// traceStepsJSON is the step-through part of trace's JSON.
type traceStepsJSON struct {
	Op     string `json:"op"`
	Kernel string `json:"kernel"`
	Value  struct {
		Bits string `json:"bits"`
	} `json:"value"`
	OK bool `json:"ok"`
	ID *struct {
		Token, Slot, Expert int
		TokenIDs            []int32 `json:"token_ids"`
	} `json:"mul_mat_id"`
	MMVQ struct {
		StepLanes  int  `json:"step_lanes"`
		StepsMatch bool `json:"steps_match"`
		VecDots    []struct {
			Warp, Lane int
			Out        struct {
				Bits string `json:"bits"`
			} `json:"out"`
			Steps []struct {
				Op   string `json:"op"`
				Args []struct {
					Ref   *int   `json:"ref"`
					Name  string `json:"name"`
					Int   *int32 `json:"int"`
					Value *struct {
						Bits string `json:"bits"`
					} `json:"value"`
				} `json:"args"`
				Int   *int32 `json:"int"`
				Value *struct {
					Bits string `json:"bits"`
				} `json:"value"`
			} `json:"steps"`
		} `json:"vec_dots"`
	} `json:"mmvq"`
}

func runTraceSteps(t *testing.T, args ...string) (int, traceStepsJSON) {
	t.Helper()
	code, out, errs := runCmd(t, append([]string{"trace", "--json"}, args...)...)
	var r traceStepsJSON
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("trace %q: exit %d, not JSON: %v\n%s", args, code, err, errs)
	}
	return code, r
}

// checkSteps checks the step-throughs of a trace: exactly the calls of the first
// wantLanes lanes (-1: all) have steps, every operand that names a step has that step's
// result, dp4a and float steps are there, and each call's last step has the call's bits.
func checkSteps(t *testing.T, args []string, r traceStepsJSON, wantLanes int) {
	t.Helper()
	type lk struct{ w, l int }
	lanes := map[lk]bool{}
	for _, v := range r.MMVQ.VecDots {
		k := lk{v.Warp, v.Lane}
		if _, ok := lanes[k]; !ok {
			lanes[k] = wantLanes < 0 || len(lanes) < wantLanes
		}
		if lanes[k] != (len(v.Steps) > 0) {
			t.Fatalf("%q: warp %d lane %d: %d steps, stepped lane %v", args, v.Warp, v.Lane, len(v.Steps), lanes[k])
		}
		if len(v.Steps) == 0 {
			continue
		}
		var dp4a, float int
		for i, s := range v.Steps {
			switch {
			case s.Op == "dp4a":
				dp4a++
			case s.Value != nil:
				float++
			}
			for _, a := range s.Args {
				if a.Ref == nil {
					continue
				}
				ref := v.Steps[*a.Ref]
				if *a.Ref >= i || (ref.Int != nil) != (a.Int != nil) || ref.Int != nil && *ref.Int != *a.Int || ref.Value != nil && ref.Value.Bits != a.Value.Bits {
					t.Fatalf("%q: step %d: operand of step %d differs from its result", args, i, *a.Ref)
				}
			}
		}
		last := v.Steps[len(v.Steps)-1]
		if dp4a == 0 || float == 0 || last.Value == nil || last.Value.Bits != v.Out.Bits {
			t.Fatalf("%q: warp %d lane %d: %d dp4a, %d float steps, last step %+v, call out %s", args, v.Warp, v.Lane, dp4a, float, last.Value, v.Out.Bits)
		}
	}
	n := 0
	for _, s := range lanes {
		if s {
			n++
		}
	}
	if n != r.MMVQ.StepLanes || !r.MMVQ.StepsMatch || wantLanes >= 0 && n != min(wantLanes, len(lanes)) {
		t.Fatalf("%q: %d lanes with steps, step_lanes %d, steps_match %v, want %d", args, n, r.MMVQ.StepLanes, r.MMVQ.StepsMatch, wantLanes)
	}
}

// The steps inside the vec_dot calls, for a legacy type, a k-quant, an i-quant and
// NVFP4, with the default, none, one and every lane; and in text.
func TestTraceSteps(t *testing.T) {
	for _, c := range []struct {
		typ, shape, row, col, steps string
		lanes                       int
	}{
		{"q4_0", "256,8,1", "3", "0", "", 2},
		{"q6_K", "512,8,2", "5", "1", "1", 1},
		{"iq2_xxs", "512,8,1", "2", "0", "-1", -1},
		{"nvfp4", "256,4,1", "1", "0", "0", 0},
		{"q5_K", "1024,4,3", "0", "2", "3", 3},
	} {
		args := []string{"--type", c.typ, "--shape", c.shape, "--row", c.row, "--col", c.col}
		if c.steps != "" {
			args = append(args, "--steps", c.steps)
		}
		code, r := runTraceSteps(t, args...)
		if code != 0 || !r.OK || r.Op != "MUL_MAT" || r.ID != nil {
			t.Errorf("%q: exit %d, ok %v, op %s, steps_match %v", args, code, r.OK, r.Op, r.MMVQ.StepsMatch)
			continue
		}
		checkSteps(t, args, r, c.lanes)
	}
	code, out, _ := runCmd(t, "trace", "--type", "q4_K", "--shape", "256,4,1", "--steps", "1")
	for _, want := range []string{"(inside the calls of the first 1 lane(s)", "      #0  dp4a dot1 = ", "ffma sumf_d = ", "fadd tmp = ", "(same bits)"} {
		if code != 0 || !strings.Contains(out, want) {
			t.Errorf("text: exit %d, no %q in\n%s", code, want, out)
		}
	}
}

// MUL_MAT_ID outputs: the traced bits are ggsim.MulMatID's (computed here, through the
// front door) for one token (mul_mat_vec_q with ids), several (mul_mat_vec_q_moe) and
// many (mul_mat_q's ID mode, a k-quant and an i-quant), with --ids and --routing; the
// report names the expert, token and slot.
func TestTraceMulMatID(t *testing.T) {
	dev, _ := sim.Lookup("H200")
	for _, c := range []struct {
		typ         quant.Type
		K, N, M     int
		E, U        int
		ids         []int32 // nil: --routing hot
		row, col    int
		kernel      string
		steps       string
		stepLanes   int
		token, slot int
	}{
		{quant.Q4_K, 512, 16, 3, 8, 2, []int32{0, 5, 5, 1, 7, 0}, 4, 3, "mmvq_moe", "1", 1, 1, 1},
		{quant.IQ3_S, 512, 8, 1, 4, 2, []int32{3, 1}, 7, 1, "mmvq", "", 2, 0, 1},
		{quant.Q8_0, 256, 6, 5, 6, 3, nil, 5, 14, "mmvq_moe", "-1", -1, 4, 2},
		{quant.Q4_K, 512, 8, 64, 4, 2, nil, 3, 77, "mmq", "", 0, 38, 1},
		{quant.IQ2_XXS, 512, 130, 40, 8, 2, nil, 129, 11, "mmq", "", 0, 5, 1},
	} {
		const seed = 3
		args := []string{"--type", c.typ.String(), "--shape", fmt.Sprintf("%d,%d,%d", c.K, c.N, c.M), "--experts", fmt.Sprintf("%d,%d", c.E, c.U),
			"--row", strconv.Itoa(c.row), "--col", strconv.Itoa(c.col), "--seed", strconv.Itoa(seed)}
		ids := c.ids
		if ids == nil {
			args = append(args, "--routing", "hot")
			var err error
			if ids, err = routeIDs("hot", seed, c.E, c.U, c.M); err != nil {
				t.Fatal(err)
			}
		} else {
			s := make([]string, len(ids))
			for i, id := range ids {
				s[i] = strconv.Itoa(int(id))
			}
			args = append(args, "--ids", strings.Join(s, ","))
		}
		if c.steps != "" {
			args = append(args, "--steps", c.steps)
		}
		code, r := runTraceSteps(t, args...)
		if code != 0 || !r.OK || r.Op != "MUL_MAT_ID" || r.Kernel != c.kernel || r.ID == nil {
			t.Errorf("%q: exit %d, ok %v, op %s, kernel %s, steps_match %v", args, code, r.OK, r.Op, r.Kernel, r.MMVQ.StepsMatch)
			continue
		}
		if r.ID.Token != c.token || r.ID.Slot != c.slot || r.ID.Expert != int(ids[c.col]) || len(r.ID.TokenIDs) != c.U || r.ID.TokenIDs[c.slot] != ids[c.col] {
			t.Errorf("%q: token %d slot %d expert %d %v, want token %d slot %d expert %d", args, r.ID.Token, r.ID.Slot, r.ID.Expert, r.ID.TokenIDs, c.token, c.slot, ids[c.col])
		}
		if c.kernel != "mmq" {
			checkSteps(t, args, r, c.stepLanes)
		}
		w, err := oracletest.RealisticWeights(c.typ, c.K, c.N*c.E, seed)
		if err != nil {
			t.Fatal(err)
		}
		res, err := ggsim.MulMatID(dev, ggsim.Weights{Type: c.typ, K: c.K, N: c.N, E: c.E, Data: w}, oracletest.RealisticActivations(c.K, c.M, seed), 1, c.M, ids, c.U)
		if err != nil {
			t.Fatal(err)
		}
		if want := fmt.Sprintf("0x%08x", math.Float32bits(res.Out[c.col*c.N+c.row])); r.Value.Bits != want {
			t.Errorf("%q: traced %s, ggsim.MulMatID %s", args, r.Value.Bits, want)
		}
	}
	code, out, _ := runCmd(t, "trace", "--type", "q4_K", "--shape", "512,8,2", "--experts", "4,2", "--ids", "0,1,2,3", "--row", "1", "--col", "2")
	for _, want := range []string{"row 1 of expert 2 . token 1 of MUL_MAT_ID", "token 1, slot 0; token 1's experts [2 3]", "(same bits)"} {
		if code != 0 || !strings.Contains(out, want) {
			t.Errorf("text: exit %d, no %q in\n%s", code, want, out)
		}
	}
	code, out, _ = runCmd(t, "trace", "--type", "q4_K", "--shape", "512,8,64", "--experts", "4,2", "--row", "1", "--col", "2")
	for _, want := range []string{"kernel: mmq: ", "the tokens sorted by expert (mm_ids_helper): the output is compact column ", "fixup (", "(same bits)"} {
		if code != 0 || !strings.Contains(out, want) {
			t.Errorf("mmq text: exit %d, no %q in\n%s", code, want, out)
		}
	}
}

func TestTraceStepsUsage(t *testing.T) {
	for _, args := range [][]string{
		{"--steps", "-2"},
		{"--ids", "0"},                         // no --experts
		{"--routing", "hot"},                   // no --experts
		{"--experts", "4,5"},                   // U > E
		{"--experts", "4,2", "--ids", "0,4"},   // id out of range
		{"--experts", "4,2", "--ids", "0,1,2"}, // M*U = 2 ids
		{"--experts", "4,2", "--ids", "0,1", "--routing", "hot"},
		{"--experts", "4,2", "--col", "2"}, // M*U = 2 columns
		{"--experts", "4,2", "--routing", "nonesuch"},
	} {
		if code, _, errs := runCmd(t, append([]string{"trace", "--type", "q4_0", "--shape", "256,8,1"}, args...)...); code != 2 || errs == "" {
			t.Errorf("%q: exit %d %q", args, code, errs)
		}
	}
	code, _, errs := runCmd(t, "trace", "--golden", "../../testdata/golden/ggml-h200-dev-mmq.slice.gguf", "--case", "0", "--experts", "4,2")
	if code != 2 || !strings.Contains(errs, "--experts is for generated data") {
		t.Errorf("--golden with --experts: exit %d %q", code, errs)
	}
}

// A golden mul_mat_id case with 2 activation rows per token (mul_mat_vec_q_moe): the
// trace, its steps included, follows the GPU's bits.
func TestTraceGoldenID(t *testing.T) {
	const f = "../../testdata/golden/ggml-h200-dev-moe.slice.gguf"
	args := []string{"--golden", f, "--case", "1", "--row", "100", "--col", "3", "--steps", "1"}
	code, r := runTraceJSON(t, args...)
	if code != 0 || !r.OK || r.MatchGPU == nil || !*r.MatchGPU || r.Kernel != "mmvq_moe" {
		t.Errorf("%q: exit %d, ok %v, kernel %s", args, code, r.OK, r.Kernel)
	}
	code, s := runTraceSteps(t, args...)
	if code != 0 || s.ID == nil || s.ID.Token != 1 || s.ID.Slot != 1 || s.Op != "MUL_MAT_ID" {
		t.Fatalf("%q: exit %d, %+v", args, code, s.ID)
	}
	checkSteps(t, args, s, 1)
	code, out, _ := runCmd(t, "trace", "--golden", f, "--case", "1", "--row", "100", "--col", "3", "--steps", "0")
	if code != 0 || !strings.Contains(out, "activations: row 3 (token 1's row 1)") || !strings.Contains(out, "GPU (golden): ") {
		t.Errorf("text: exit %d\n%s", code, out)
	}
}
