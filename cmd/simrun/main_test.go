package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ggsim/ggsim/gguf/golden"
	"github.com/ggsim/ggsim/oracle"
	"github.com/ggsim/ggsim/quant"
	"github.com/ggsim/ggsim/sim"
)

func runCmd(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(args, &out, &errb)
	return code, out.String(), errb.String()
}

// The embedded samples are cases ggsim simulates: verify passes them all, exit 0.
func TestVerifyEmbedded(t *testing.T) {
	code, out, _ := runCmd(t, "verify")
	if code != 0 {
		t.Errorf("exit %d, want 0:\n%s", code, out)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if last := lines[len(lines)-1]; last != "verify: 151/151 cases bit-exact" {
		t.Errorf("last line %q", last)
	}
}

// GLU cases (gate, up and a GLU in one graph) verify bit-exact.
func TestVerifyGLU(t *testing.T) {
	code, out, _ := runCmd(t, "verify", "../../testdata/golden/ggml-h200-dev-glu.slice.gguf")
	if code != 0 || strings.Count(out, "bit-exact") != 3 || !strings.Contains(out, "verify: 2/2 cases bit-exact") {
		t.Errorf("exit %d:\n%s", code, out)
	}
}

func TestVerifyJSON(t *testing.T) {
	code, out, _ := runCmd(t, "verify", "--json", "--no-fp64")
	if code != 0 {
		t.Errorf("exit %d, want 0", code)
	}
	var rep verifyReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	if !rep.OK || rep.Total != 151 || rep.BitExact != 151 || len(rep.Files) != 8 {
		t.Errorf("report: ok=%v total=%d bit_exact=%d files=%d", rep.OK, rep.Total, rep.BitExact, len(rep.Files))
	}
}

func TestVerifyBadFiles(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.gguf")
	if err := os.WriteFile(bad, []byte("GGUF\x03\x00\x00\x00garbage"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, _ := runCmd(t, "verify", bad, filepath.Join(dir, "missing.gguf"))
	if code != 3 || strings.Count(out, "ERROR") != 2 || !strings.Contains(out, "verify: 0/0 cases bit-exact") {
		t.Errorf("exit %d, output:\n%s", code, out)
	}
}

// A golden file with only MMVQ and quantize cases verifies with exit status 0.
func TestVerifyPassingFile(t *testing.T) {
	code, out, _ := runCmd(t, "verify", "../../testdata/golden/ggml-h200-dev-mmvq.slice.gguf")
	if code != 0 {
		t.Errorf("exit %d:\n%s", code, out)
	}
}

func TestExplain(t *testing.T) {
	code, out, _ := runCmd(t, "explain", "--device", "H200", "--type", "q4_K", "--m", "8")
	if code != 0 || !strings.Contains(out, "kernel: mmvq") {
		t.Errorf("exit %d:\n%s", code, out)
	}
	code, out, _ = runCmd(t, "explain", "--device", "H200", "--type", "q4_K", "--m", "9")
	if code != 0 || !strings.Contains(out, "kernel: mmq") {
		t.Errorf("exit %d:\n%s", code, out)
	}
	if code, _, _ = runCmd(t, "explain", "--device", "nosuch"); code != 2 {
		t.Errorf("unknown device: exit %d, want 2", code)
	}
	if code, _, _ = runCmd(t, "explain", "--type", "q4_K", "--k", "100"); code != 2 {
		t.Errorf("K not a multiple of the block: exit %d, want 2", code)
	}
}

func TestUsage(t *testing.T) {
	if code, _, _ := runCmd(t); code != 2 {
		t.Errorf("no args: exit %d", code)
	}
	if code, _, _ := runCmd(t, "frobnicate"); code != 2 {
		t.Errorf("unknown command: exit %d", code)
	}
	if code, out, _ := runCmd(t, "devices"); code != 0 || !strings.Contains(out, "H200") {
		t.Errorf("devices: exit %d\n%s", code, out)
	}
}

func TestCaptureArgs(t *testing.T) {
	code, _, errs := runCmd(t, "capture", "--out", "x.gguf")
	if code != 2 || !strings.Contains(errs, "--ggml and --out are required") {
		t.Errorf("missing --ggml: exit %d, %q", code, errs)
	}
	if code, _, errs = runCmd(t, "capture", "--ggml", "d", "--out", "x", "--moe", "4:2:x:1"); code != 2 || !strings.Contains(errs, "E:U:T:B1") {
		t.Errorf("bad --moe: exit %d, %q", code, errs)
	}
	if code, _, errs = runCmd(t, "capture", "--ggml", "d", "--out", "x", "--types", "q4_K,nosuch"); code != 2 {
		t.Errorf("bad --types: exit %d, %q", code, errs)
	}
}

// A golden file of an AMD device (MI300X): ggml dispatches MMVQ, whose AMD arithmetic
// ggsim does not model. verify must report the case UNSUPPORTED (not ERROR) and fail.
func TestVerifyAMDDevice(t *testing.T) {
	const K, N = 32, 2
	w := golden.NewWriter(golden.Meta{
		Producer:   "simrun test",
		Device:     golden.Device{Name: "MI300X", CC: sim.CCCDNA3, SMCount: 304},
		GGMLCommit: oracle.GGMLCommit,
		GGMLBuild:  "test",
	})
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(w.AddTensor("a", quant.Q4_0, []int64{K, N}, make([]byte, N*18)))
	must(w.AddF32("b", []int64{K, 1}, make([]float32, K)))
	must(w.AddF32("dst", []int64{N, 1}, make([]float32, N)))
	_, err := w.AddCase(golden.Case{Op: golden.OpMulMat, Src: []string{"a", "b"}, Dst: "dst"})
	must(err)
	path := filepath.Join(t.TempDir(), "mi300x.gguf")
	f, err := os.Create(path)
	must(err)
	_, err = w.WriteTo(f)
	must(err)
	must(f.Close())
	code, out, _ := runCmd(t, "verify", path)
	if code != 1 || !strings.Contains(out, "UNSUPPORTED") || strings.Contains(out, "ERROR") || !strings.Contains(out, "verify: 0/1 cases bit-exact") {
		t.Errorf("exit %d:\n%s", code, out)
	}
}

// verify --coverage reports the kernel paths of the cases and the ones missed, in text
// and in JSON, without changing the verdict.
func TestVerifyCoverage(t *testing.T) {
	code, out, _ := runCmd(t, "verify", "../../testdata/golden/ggml-h200-dev-mmq.slice.gguf", "--coverage", "--no-fp64")
	if code != 0 || !strings.Contains(out, "coverage on H200:") || !strings.Contains(out, "J=16") ||
		!strings.Contains(out, "not exercised (the device can take them):") || !strings.Contains(out, "mmq_tiles: fallback") {
		t.Errorf("exit %d:\n%s", code, out)
	}
	code, out, _ = runCmd(t, "verify", "--json", "--coverage", "--no-fp64", "../../testdata/golden/ggml-h200-dev-mmq.slice.gguf")
	var rep verifyReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil || code != 0 {
		t.Fatalf("exit %d, %v\n%s", code, err, out)
	}
	if len(rep.Coverage) != 1 || rep.Coverage[0].Device != "H200" || rep.Coverage[0].Covered == 0 || len(rep.Coverage[0].Missed) == 0 {
		t.Errorf("coverage %+v", rep.Coverage)
	}
}
