package main

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ggsim/ggsim/gguf"
	"github.com/ggsim/ggsim/oracle/oracletest"
	"github.com/ggsim/ggsim/quant"
	"github.com/ggsim/ggsim/sim"
)

// Generated model-like shapes through MMVQ and MMQ (and MUL_MAT_ID, and an IQ type
// without a reference quantizer): the simulator's output is within the fp64 bound and
// the kernel line names the kernel ggml dispatches to.
func TestRunGenerated(t *testing.T) {
	for _, tc := range []struct {
		args   []string
		kernel string
	}{
		{[]string{"--type", "q4_K", "--shape", "512,64,4"}, "kernel:  mmvq"},
		{[]string{"--type", "q8_0", "--shape", "256,130,24", "--seed", "7"}, "kernel:  mmq"},
		{[]string{"--type", "iq2_xxs", "--shape", "256,16,2"}, "kernel:  mmvq"},
		{[]string{"--type", "q4_0", "--shape", "256,32,3", "--experts", "4,2", "--routing", "hot"}, "kernel:  mmvq"},
		{[]string{"--type", "q5_K", "--shape", "256,64,40", "--experts", "4,2", "--routing", "sparse"}, "kernel:  mmq"},
	} {
		code, out, errs := runCmd(t, append([]string{"run"}, tc.args...)...)
		if code != 0 || !strings.Contains(out, "verdict: within-bound") || !strings.Contains(out, tc.kernel) || errs != "" {
			t.Errorf("run %v: exit %d, want 0 and %q:\n%s%s", tc.args, code, tc.kernel, out, errs)
		}
	}
}

// A type ggml's CUDA backend does not take for MUL_MAT is reported UNSUPPORTED, exit 1.
func TestRunGeneratedUnsupported(t *testing.T) {
	code, out, errs := runCmd(t, "run", "--type", "tq1_0", "--shape", "256,4,1")
	if code != 1 || !strings.Contains(out, "verdict: UNSUPPORTED") || !strings.Contains(errs, "tq1_0") {
		t.Errorf("exit %d, want 1:\n%s%s", code, out, errs)
	}
}

func TestRunJSON(t *testing.T) {
	code, out, _ := runCmd(t, "run", "--type", "q6_K", "--shape", "256,40,2", "--json")
	if code != 0 {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(out), &m); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	if m["type"] != "q6_K" || m["kernel"] != "mmvq" || m["status"] != statusWithin || m["k"] != 256.0 || m["m"] != 2.0 {
		t.Errorf("report: %v", m)
	}
	v, ok := m["verdict"].(map[string]any)
	if !ok {
		t.Fatalf("no verdict object: %v", m)
	}
	for _, k := range []string{"n", "outside", "nmse", "rel_rms", "max_abs", "max_ulp", "max_bound", "worst_bound_ratio"} {
		if _, ok := v[k].(float64); !ok {
			t.Errorf("verdict.%s = %v (%T), want a number", k, v[k], v[k])
		}
	}
	if v["within_bound"] != true || v["n"] != 80.0 {
		t.Errorf("verdict: %v", v)
	}
}

func TestRunUsage(t *testing.T) {
	code, out, _ := runCmd(t, "run", "-h")
	if code != 0 || !strings.Contains(out, "example:") || !strings.Contains(out, "q4_K") || !strings.Contains(out, "RTX 4090") {
		t.Errorf("-h: exit %d:\n%s", code, out)
	}
	for _, args := range [][]string{
		{"--type", "q9_K"},
		{"--shape", "4096,4096"},
		{"--shape", "100,4,1"},
		{"--shape", "256,0,1"},
		{"--shape", "1048576,1048576,1"},
		{"--device", "nosuchgpu"},
		{"--experts", "2,3"},
		{"--routing", "hot"},
		{"--experts", "4,2", "--routing", "nosuch"},
		{"--tensor", "x"},
		{"--batch", "2"},
		{"--gguf", "m.gguf"},
		{"--gguf", "m.gguf", "--tensor", "x", "--all-tensors"},
		{"--gguf", "m.gguf", "--tensor", "x", "--type", "q4_0"},
		{"--gguf", "m.gguf", "--all-tensors", "--acts", "a.bin"},
		{"--gguf", "m.gguf", "--all-tensors", "--routing", "nosuch"},
		{"--gguf", "m.gguf", "--all-tensors", "--used", "0"},
		{"--used", "2"},
		{"--nosuchflag"},
		{"extra"},
	} {
		code, out, errs := runCmd(t, append([]string{"run"}, args...)...)
		if code != 2 || out != "" || !strings.HasPrefix(errs, "simrun run: ") {
			t.Errorf("run %v: exit %d, want 2 with the error on stderr:\nstdout %q\nstderr %q", args, code, out, errs)
		}
	}
}

// writeModel writes a tiny GGUF model: a q4_K and a q8_0 weight, a tq1_0 weight (a type
// ggml's CUDA backend does not take for MUL_MAT), a q4_0 expert tensor of 4 experts (2
// used per token, if usedCount) and a 1-D f32 norm.
func writeModel(t *testing.T, usedCount bool) string {
	t.Helper()
	w := gguf.NewWriter()
	if err := w.Add("general.architecture", gguf.ScalarOf("llama")); err != nil {
		t.Fatal(err)
	}
	if usedCount {
		if err := w.Add("llama.expert_used_count", gguf.ScalarOf(uint32(2))); err != nil {
			t.Fatal(err)
		}
	}
	add := func(name string, typ quant.Type, dims []int64, data []byte) {
		if err := w.AddTensor(name, typ, dims, data); err != nil {
			t.Fatal(err)
		}
	}
	for _, tt := range []struct {
		name string
		typ  quant.Type
		K, N int
	}{
		{"blk.0.attn_q.weight", quant.Q4_K, 512, 32},
		{"blk.0.ffn_down.weight", quant.Q8_0, 256, 48},
		{"blk.0.ffn_up.weight", quant.TQ1_0, 256, 16},
	} {
		data, err := oracletest.RealisticWeights(tt.typ, tt.K, tt.N, 3)
		if err != nil {
			t.Fatal(err)
		}
		add(tt.name, tt.typ, []int64{int64(tt.K), int64(tt.N)}, data)
	}
	exps, err := oracletest.RealisticWeights(quant.Q4_0, 256, 16*4, 4)
	if err != nil {
		t.Fatal(err)
	}
	add("blk.0.ffn_gate_exps.weight", quant.Q4_0, []int64{256, 16, 4}, exps)
	add("blk.0.attn_norm.weight", quant.F32, []int64{512}, make([]byte, 4*512))
	path := filepath.Join(t.TempDir(), "model.gguf")
	if err := w.WriteFile(path); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestRunGGUF(t *testing.T) {
	path := writeModel(t, true)
	code, out, errs := runCmd(t, "run", "--gguf", path, "--tensor", "blk.0.attn_q.weight", "--batch", "3")
	if code != 0 || !strings.Contains(out, "op:      MUL_MAT q4_K, K=512, N=32, M=3") || !strings.Contains(out, "verdict: within-bound") {
		t.Errorf("q4_K tensor: exit %d:\n%s%s", code, out, errs)
	}
	code, out, errs = runCmd(t, "run", "--gguf", path, "--tensor", "blk.0.ffn_down.weight", "--batch", "16", "--json")
	var r runResult
	if err := json.Unmarshal([]byte(out), &r); err != nil || code != 0 || r.Kernel != "mmq" || r.Tensor != "blk.0.ffn_down.weight" || r.Verdict == nil || !r.Verdict.Within {
		t.Errorf("q8_0 tensor: exit %d, %v:\n%s%s", code, err, out, errs)
	}
	// The unsupported type: exit 1 and an error naming it.
	code, out, errs = runCmd(t, "run", "--gguf", path, "--tensor", "blk.0.ffn_up.weight")
	if code != 1 || !strings.Contains(errs, "tq1_0") || !strings.Contains(out, "UNSUPPORTED") {
		t.Errorf("tq1_0 tensor: exit %d, want 1:\n%s%s", code, out, errs)
	}
	// A tensor that is not a matrix.
	code, _, errs = runCmd(t, "run", "--gguf", path, "--tensor", "blk.0.attn_norm.weight")
	if code != 1 || !strings.Contains(errs, "2-D") {
		t.Errorf("1-D tensor: exit %d, want 1: %s", code, errs)
	}
	code, _, errs = runCmd(t, "run", "--gguf", path, "--tensor", "nosuch")
	if code != 2 || !strings.Contains(errs, `"nosuch"`) {
		t.Errorf("missing tensor: exit %d, want 2: %s", code, errs)
	}
}

// The error of an unsupported type wraps errors.ErrUnsupported.
func TestRunOneUnsupported(t *testing.T) {
	data, err := oracletest.RealisticWeights(quant.TQ2_0, 256, 4, 1)
	if err != nil {
		t.Fatal(err)
	}
	a := &runArgs{dev: mustDevice(t, "H200"), m: 1, seed: 1}
	r, err := runOne(a, "w", quant.TQ2_0, data, 256, 4, nil)
	if !errors.Is(err, errors.ErrUnsupported) || r.Status != statusUnsupported || !strings.Contains(err.Error(), "tq2_0") {
		t.Errorf("status %s, err %v: want UNSUPPORTED wrapping errors.ErrUnsupported, naming tq2_0", r.Status, err)
	}
}

func mustDevice(t *testing.T, name string) sim.Device {
	t.Helper()
	d, err := sim.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func TestRunAllTensors(t *testing.T) {
	path := writeModel(t, true)
	code, out, errs := runCmd(t, "run", "--gguf", path, "--all-tensors", "--batch", "2")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if code != 1 || len(lines) != 5 {
		t.Fatalf("exit %d, want 1 (one unsupported tensor), 4 lines and a summary:\n%s", code, out)
	}
	if !strings.HasPrefix(lines[0], "blk.0.attn_q.weight: MUL_MAT q4_K") || !strings.Contains(lines[1], "within-bound") ||
		!strings.Contains(lines[2], "UNSUPPORTED") ||
		!strings.HasPrefix(lines[3], "blk.0.ffn_gate_exps.weight: MUL_MAT_ID q4_0 K=256 N=16 M=2 E=4 U=2 uniform") || !strings.Contains(lines[3], "within-bound") ||
		lines[4] != "run: 3/4 tensors within their bound (0 outside, 1 unsupported, 0 errors)" {
		t.Errorf("output:\n%s", out)
	}
	if errs != "" {
		t.Errorf("stderr is not a terminal: no progress expected, got %q", errs)
	}
	code, out, _ = runCmd(t, "run", "--gguf", path, "--all-tensors", "--json")
	var rep struct {
		Model   string       `json:"model"`
		Results []*runResult `json:"results"`
		Summary runSummary   `json:"summary"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil || code != 1 || len(rep.Results) != 4 || rep.Summary.Within != 3 || rep.Summary.Unsupported != 1 || rep.Summary.OK {
		t.Errorf("JSON: exit %d, %v:\n%s", code, err, out)
	}
}

func TestRunActs(t *testing.T) {
	path := writeModel(t, true)
	acts := make([]byte, 4*512*2)
	for i := 0; i < 512*2; i++ {
		binary.LittleEndian.PutUint32(acts[4*i:], math.Float32bits(float32(i%7)-3))
	}
	ap := filepath.Join(t.TempDir(), "acts.bin")
	if err := os.WriteFile(ap, acts, 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errs := runCmd(t, "run", "--gguf", path, "--tensor", "blk.0.attn_q.weight", "--batch", "2", "--acts", ap)
	if code != 0 || !strings.Contains(out, "activations "+ap) {
		t.Errorf("exit %d:\n%s%s", code, out, errs)
	}
	// Wrong size: K*M float32 are needed.
	code, _, errs = runCmd(t, "run", "--gguf", path, "--tensor", "blk.0.attn_q.weight", "--batch", "3", "--acts", ap)
	if code != 3 || !strings.Contains(errs, "want 6144") {
		t.Errorf("short acts: exit %d, want 3: %s", code, errs)
	}
}

// A 3-D expert tensor runs as a MUL_MAT_ID with the model's expert_used_count, or
// --used; without either it is an error.
func TestRunGGUFExperts(t *testing.T) {
	path := writeModel(t, true)
	code, out, errs := runCmd(t, "run", "--gguf", path, "--tensor", "blk.0.ffn_gate_exps.weight", "--batch", "40", "--routing", "hot")
	if code != 0 || !strings.Contains(out, "MUL_MAT_ID q4_0, K=256, N=16, M=40, 4 experts, 2 used per token, routing hot") ||
		!strings.Contains(out, "kernel:  mmq") || !strings.Contains(out, "verdict: within-bound") {
		t.Errorf("exit %d:\n%s%s", code, out, errs)
	}
	noCount := writeModel(t, false)
	code, out, errs = runCmd(t, "run", "--gguf", noCount, "--tensor", "blk.0.ffn_gate_exps.weight", "--used", "3")
	if code != 0 || !strings.Contains(out, "3 used per token") {
		t.Errorf("--used 3: exit %d:\n%s%s", code, out, errs)
	}
	code, _, errs = runCmd(t, "run", "--gguf", noCount, "--tensor", "blk.0.ffn_gate_exps.weight")
	if code != 1 || !strings.Contains(errs, "llama.expert_used_count") || !strings.Contains(errs, "--used") {
		t.Errorf("no expert count: exit %d, want 1: %s", code, errs)
	}
}

// --acts also feeds generated weights.
func TestRunGeneratedActs(t *testing.T) {
	ap := filepath.Join(t.TempDir(), "acts.bin")
	if err := os.WriteFile(ap, make([]byte, 4*256*2), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errs := runCmd(t, "run", "--type", "q4_0", "--shape", "256,8,2", "--acts", ap, "--json")
	var r runResult
	if err := json.Unmarshal([]byte(out), &r); err != nil || code != 0 || r.Acts != ap || r.Verdict == nil || r.Verdict.MaxULP != 0 {
		t.Errorf("zero activations: exit %d, %v:\n%s%s", code, err, out, errs)
	}
	code, _, errs = runCmd(t, "run", "--type", "q4_0", "--shape", "256,8,3", "--acts", ap)
	if code != 3 || !strings.Contains(errs, "want 3072") {
		t.Errorf("short acts: exit %d, want 3: %s", code, errs)
	}
}

// A missing or corrupt model file is exit 3.
func TestRunUnreadable(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.gguf")
	if err := os.WriteFile(bad, []byte("GGUF\x03\x00\x00\x00truncated"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{filepath.Join(dir, "missing.gguf"), bad} {
		code, out, errs := runCmd(t, "run", "--gguf", p, "--all-tensors")
		if code != 3 || out != "" || !strings.Contains(errs, filepath.Base(p)) {
			t.Errorf("%s: exit %d, want 3:\n%s%s", p, code, out, errs)
		}
	}
}
