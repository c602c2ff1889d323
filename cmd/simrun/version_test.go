package main

import (
	"encoding/json"
	"flag"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/ggsim/ggsim/ggmlsrc"
	"github.com/ggsim/ggsim/gguf/golden"
	"github.com/ggsim/ggsim/oracle"
	"github.com/ggsim/ggsim/quant"
)

func TestVersion(t *testing.T) {
	fp := ggmlsrc.ModelledFingerprint()
	code, out, _ := runCmd(t, "version")
	for _, want := range []string{"ggml commit:        d99724f2b141", "kernel fingerprint: " + fp, "CUDA 13.0.88, sm_90, -use_fast_math", runtime.Version()} {
		if code != 0 || !strings.Contains(out, want) {
			t.Errorf("exit %d, output lacks %q:\n%s", code, want, out)
		}
	}
	if strings.Contains(out, "src/ggml-cuda/mmq.cuh") {
		t.Errorf("files listed without --files:\n%s", out)
	}
	if code, out, _ = runCmd(t, "version", "--files"); code != 0 || !strings.Contains(out, "  "+ggmlsrc.Modelled()[0].String()+"\n") {
		t.Errorf("--files: exit %d\n%s", code, out)
	}

	code, out, _ = runCmd(t, "version", "--json")
	var r versionReport
	if err := json.Unmarshal([]byte(out), &r); code != 0 || err != nil {
		t.Fatalf("--json: exit %d, %v\n%s", code, err, out)
	}
	s, err := ggmlsrc.ParseLines(r.KernelFiles)
	if err != nil || s.Fingerprint() != r.KernelFingerprint || r.KernelFingerprint != fp ||
		r.GGMLCommit != oracle.GGMLCommit || r.Toolkit != "CUDA 13.0.88" || r.Arch != "sm_90" || r.Flags != "-use_fast_math" || r.Go != runtime.Version() {
		t.Errorf("--json: %+v (%v)", r, err)
	}

	if code, out, _ = runCmd(t, "version", "-h"); code != 0 || !strings.Contains(out, "usage: simrun version [--json] [--files]") {
		t.Errorf("-h: exit %d\n%s", code, out)
	}
	if code, _, errs := runCmd(t, "version", "--nosuch"); code != 2 || !strings.Contains(errs, "simrun version -h") {
		t.Errorf("bad flag: exit %d, %q", code, errs)
	}
	if code, _, errs := runCmd(t, "version", "extra"); code != 2 || !strings.Contains(errs, `unexpected argument "extra"`) {
		t.Errorf("extra argument: exit %d, %q", code, errs)
	}
	if _, out, _ = runCmd(t, "help"); !strings.Contains(out, "simrun version") {
		t.Errorf("usage does not list version:\n%s", out)
	}
}

func TestBuildVersion(t *testing.T) {
	for _, c := range []struct {
		bi   debug.BuildInfo
		want string
	}{
		{debug.BuildInfo{Main: debug.Module{Version: "v1.2.3"}}, "v1.2.3"},
		{debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, ""},
		{debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "abc"}, {Key: "vcs.modified", Value: "true"}}}, "abc-modified"},
		{debug.BuildInfo{Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "abc"}, {Key: "vcs.modified", Value: "false"}}}, "abc"},
	} {
		if got := buildVersion(&c.bi); got != c.want {
			t.Errorf("%+v: %q, want %q", c.bi, got, c.want)
		}
	}
}

// writeZeroFile writes a golden file with one mul_mat of all-zero q4_0 weights (the
// output is zero, which the simulator computes too) of ggml commit commit, with the
// kernel sources k (nil: none).
func writeZeroFile(t *testing.T, commit string, k ggmlsrc.Set) string {
	t.Helper()
	const K, N = 32, 2
	w := golden.NewWriter(golden.Meta{
		Producer:   "simrun test",
		Device:     golden.Device{Name: "NVIDIA H200", CC: 900, SMCount: 132, Driver: "test"},
		GGMLCommit: commit,
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
	if k != nil {
		must(w.SetKernel(k))
	}
	_, err := w.AddCase(golden.Case{Op: golden.OpMulMat, Src: []string{"a", "b"}, Dst: "dst"})
	must(err)
	path := filepath.Join(t.TempDir(), "zero.gguf")
	must(w.WriteFile(path))
	return path
}

// verify of a file of another ggml commit: a pass that says why when the kernel
// fingerprint is the modelled one, UNSUPPORTED naming the files otherwise.
func TestVerifyOtherCommitCLI(t *testing.T) {
	const other = "0123456789abcdef0123"
	code, out, _ := runCmd(t, "verify", writeZeroFile(t, other, ggmlsrc.Modelled()))
	if code != 0 || !strings.Contains(out, "bit-exact") || !strings.Contains(out, "accepted: its kernel sources are those of d99724f2b141") {
		t.Errorf("modelled fingerprint: exit %d\n%s", code, out)
	}
	code, out, _ = runCmd(t, "verify", "--json", writeZeroFile(t, other, ggmlsrc.Modelled()))
	var rep verifyReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil || code != 0 || !rep.OK || !strings.Contains(rep.Files[0].Cases[0].Sources, "accepted") {
		t.Errorf("--json: exit %d, %v\n%s", code, err, out)
	}

	k := ggmlsrc.Modelled()
	k[len(k)-1].SHA256 = ggmlsrc.Absent // src/ggml.c
	code, out, _ = runCmd(t, "verify", writeZeroFile(t, other, k))
	if code != 1 || !strings.Contains(out, "UNSUPPORTED") || !strings.Contains(out, "differ from ggml d99724f2b141's in src/ggml.c\n") {
		t.Errorf("one file differs: exit %d\n%s", code, out)
	}
	code, out, _ = runCmd(t, "verify", writeZeroFile(t, other, nil))
	if code != 1 || !strings.Contains(out, "UNSUPPORTED") || !strings.Contains(out, "no kernel fingerprint is recorded") {
		t.Errorf("no fingerprint: exit %d\n%s", code, out)
	}
}

// capture --ggml-src hashes the tree while parsing its flags (no GPU needed), and
// refuses a directory that is not a ggml tree.
func TestCaptureGGMLSrc(t *testing.T) {
	dir := t.TempDir()
	for _, p := range ggmlsrc.Paths() {
		f := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f, []byte(p), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	fl := newFlagSet()
	a, err := parseCaptureArgs([]string{"--ggml", "d", "--out", "x", "--ggml-src", dir}, fl)
	if err != nil || len(a.kernel) != len(ggmlsrc.Paths()) || len(a.kernel.Diff(ggmlsrc.Modelled())) != len(ggmlsrc.Paths()) {
		t.Fatalf("%v, %v", a, err)
	}
	code, _, errs := runCmd(t, "capture", "--ggml", "d", "--out", "x", "--ggml-src", t.TempDir())
	if code != 3 || !strings.Contains(errs, "--ggml-src: ggmlsrc:") || !strings.Contains(errs, "not a ggml source tree") {
		t.Errorf("bad --ggml-src: exit %d, %q", code, errs)
	}
}

func newFlagSet() *flag.FlagSet {
	fl := flag.NewFlagSet("capture", flag.ContinueOnError)
	fl.SetOutput(io.Discard)
	return fl
}
