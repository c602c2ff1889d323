package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// sweepRecord is the real H200 record (ggml built without int8 MMA, with FORCE_MMQ).
const sweepRecord = "../../gpu/testdata/h200-cuda13-sweep/sweep-dp4a.tsv"

// recordSlice writes the header and the first n lines of kind of the real record (n
// < 0: all of them, any kind) to a temporary file, with edit applied to each line.
func recordSlice(t *testing.T, kind string, n int, edit func(string) string) string {
	t.Helper()
	return recordSliceOf(t, sweepRecord, kind, n, edit)
}

// recordSliceOf is recordSlice of the record in file.
func recordSliceOf(t *testing.T, file, kind string, n int, edit func(string) string) string {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		l := sc.Text()
		switch {
		case strings.HasPrefix(l, "#"):
			out = append(out, l)
		case strings.HasPrefix(l, kind+"\t") && n != 0:
			if edit != nil {
				l = edit(l)
			}
			out = append(out, l)
			n--
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), kind+".tsv")
	if err := os.WriteFile(p, []byte(strings.Join(out, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// The first 50 MUL_MAT lines of the real H200 record verify through the front door on
// the device the header names, with the dp4a build's switches; without them the same
// lines fail (the int8-MMA path gives other bits, and 64+ columns go to cuBLAS).
func TestSweepVerifyRecord(t *testing.T) {
	p := recordSlice(t, "mmq", 50, nil)
	code, out, errs := runCmd(t, "sweep", "verify", "--no-int8-mma", p)
	if code != 0 || !strings.HasSuffix(out, "sweep verify: 50/50 cases match\n") || !strings.Contains(out, "H200 (cc 900, 132 SMs, no int8 MMA)") {
		t.Fatalf("exit %d:\n%s%s", code, out, errs)
	}
	if !strings.Contains(out, "per type:") || !strings.Contains(out, "per profile:") || !strings.Contains(out, "plain ") {
		t.Errorf("no per-type or per-profile counts:\n%s", out)
	}
	p10 := recordSlice(t, "mmq", 10, nil)
	code, out, _ = runCmd(t, "sweep", "verify", p10)
	if code != 1 || strings.Contains(out, "10/10") {
		t.Errorf("the int8-MMA build must not match the dp4a record: exit %d\n%s", code, out)
	}
}

// A changed digest is a MISMATCH, whatever the front door refuses is never a pass, the
// record's mmqid lines match, and --json says the same.
func TestSweepVerifyFailures(t *testing.T) {
	flipped := 0
	p := recordSlice(t, "mmq", 3, func(l string) string {
		if flipped > 0 {
			return l
		}
		flipped++
		f := strings.Split(l, "\t")
		d := []byte(f[6])
		d[0] = "01"[(d[0]-'0'+1)%2] // any other hex digit
		f[6] = string(d)
		return strings.Join(f, "\t")
	})
	code, out, _ := runCmd(t, "sweep", "verify", "--no-int8-mma", p)
	if code != 1 || strings.Count(out, "MISMATCH mmq/0 ") != 1 || !strings.Contains(out, "sweep verify: 2/3 cases match") {
		t.Errorf("changed digest: exit %d\n%s", code, out)
	}
	code, out, _ = runCmd(t, "sweep", "verify", "--no-int8-mma", "--json", p)
	var rep sweepVerifyJSON
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	if code != 1 || rep.OK || rep.Cases != 3 || rep.Match != 2 || len(rep.Files) != 1 || len(rep.Files[0].Failures) != 1 ||
		rep.Files[0].Failures[0].Status != "MISMATCH" || rep.Files[0].Failures[0].Got == "" {
		t.Errorf("JSON: exit %d %+v", code, rep)
	}
	id := recordSlice(t, "mmqid", 2, nil)
	code, out, _ = runCmd(t, "sweep", "verify", "--no-int8-mma", id)
	if code != 0 || !strings.Contains(out, "sweep verify: 2/2 cases match") {
		t.Errorf("mmqid: exit %d\n%s", code, out)
	}
	if code, _, _ := runCmd(t, "sweep", "verify", filepath.Join(t.TempDir(), "absent.tsv")); code != 3 {
		t.Errorf("absent file: exit %d", code)
	}
	bad := filepath.Join(t.TempDir(), "noheader.tsv")
	os.WriteFile(bad, []byte("mmq\t1\t0\tq4_0\tK=32 N=1 M=9\tplain\terror: x\n"), 0o644)
	if code, out, _ := runCmd(t, "sweep", "verify", bad); code != 3 || !strings.Contains(out, "not a sweep header") {
		t.Errorf("no header: exit %d\n%s", code, out)
	}
}

// sweep run writes the simulator's record: its lines equal the GPU record's for the
// same cases, the shards of a range together are the whole range, and the record
// verifies.
func TestSweepRun(t *testing.T) {
	dir := t.TempDir()
	whole := filepath.Join(dir, "whole.tsv")
	code, _, errs := runCmd(t, "sweep", "run", "--kind", "mmq", "--seed", "20261202", "--range", "0-6", "--no-int8-mma", "--out", whole)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	data, _ := os.ReadFile(whole)
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	if len(lines) != 8 || !strings.HasPrefix(lines[0], "# ggsim simulator") || !strings.HasPrefix(lines[1], "# simrun sweep run") {
		t.Fatalf("record:\n%s", data)
	}
	gpu, _ := os.ReadFile(recordSlice(t, "mmq", 6, nil))
	if g := strings.Split(strings.TrimSpace(string(gpu)), "\n")[1:]; strings.Join(g, "\n") != strings.Join(lines[2:], "\n") {
		t.Errorf("simulator's lines differ from the H200 record's:\n%s\n---\n%s", strings.Join(lines[2:], "\n"), strings.Join(g, "\n"))
	}
	var shards []string
	for _, s := range []string{"0/2", "1/2"} {
		code, out, errs := runCmd(t, "sweep", "run", "--kind", "mmq", "--seed", "20261202", "--range", "0-6", "--shard", s, "--no-int8-mma")
		if code != 0 {
			t.Fatalf("shard %s: exit %d: %s", s, code, errs)
		}
		sl := strings.Split(strings.TrimSpace(out), "\n")[2:]
		if len(sl) != 3 {
			t.Fatalf("shard %s: %d lines", s, len(sl))
		}
		shards = append(shards, sl...)
	}
	for _, l := range lines[2:] {
		found := 0
		for _, s := range shards {
			if s == l {
				found++
			}
		}
		if found != 1 {
			t.Errorf("line %q is in %d shards", l, found)
		}
	}
	code, out, _ := runCmd(t, "sweep", "verify", whole) // the header says --no-int8-mma
	if code != 0 || !strings.Contains(out, "6/6 cases match") {
		t.Errorf("verify of the simulator's record: exit %d\n%s", code, out)
	}
	for _, args := range [][]string{
		{"sweep", "run", "--kind", "mmq", "--seed", "1"},
		{"sweep", "run", "--kind", "x", "--seed", "1", "--range", "0-1"},
		{"sweep", "run", "--kind", "mmq", "--seed", "1", "--range", "5-1"},
		{"sweep", "run", "--kind", "mmq", "--seed", "1", "--range", "0-1", "--shard", "2/2"},
		{"sweep", "run", "--kind", "mmq", "--seed", "1", "--range", "0-1", "--device", "nonesuch"},
		{"sweep"}, {"sweep", "bogus"}, {"sweep", "verify"},
	} {
		if code, _, _ := runCmd(t, args...); code != 2 {
			t.Errorf("%v: exit %d, want 2", args, code)
		}
	}
}

// sweep verify --coverage: the dp4a build's record exercises mul_mat_q's dp4a layout,
// and the coverage is of the device the cases ran on (no int8 MMA: no mma layout).
func TestSweepVerifyCoverage(t *testing.T) {
	rec := recordSlice(t, "mmq", 4, nil)
	code, out, _ := runCmd(t, "sweep", "verify", "--no-int8-mma", rec, "--coverage")
	if code != 0 || !strings.Contains(out, "coverage on H200: 4 launches") || !strings.Contains(out, "  mmq_path:\n    dp4a") || strings.Contains(out, "mmq_path: mma") {
		t.Errorf("exit %d\n%s", code, out)
	}
}

// gluRecord is the real H200 record of GLU sweeps (ggml as shipped, fusion allowed and
// disabled per case).
const gluRecord = "../../gpu/testdata/h200-cuda13-sweep/sweep-glu.tsv"

// The first GLU lines of the real H200 record (dense: every MMVQ type, swiglu, geglu,
// swiglu_oai, fused and unfused; MoE with one token) verify through the simulator's GLU
// path, but for gluid/2, a shape on which ggml's kernel races (UNSUPPORTED, a failure).
func TestSweepVerifyGLURecord(t *testing.T) {
	for _, k := range []struct {
		kind  string
		n, ok int
	}{{"glu", 30, 30}, {"gluid", 6, 5}} {
		p := recordSliceOf(t, gluRecord, k.kind, k.n, nil)
		code, out, errs := runCmd(t, "sweep", "verify", p)
		want := fmt.Sprintf("sweep verify: %d/%d cases match\n", k.ok, k.n)
		if (code == 0) != (k.ok == k.n) || !strings.HasSuffix(out, want) {
			t.Errorf("%s: exit %d:\n%s%s", k.kind, code, out, errs)
		}
		if k.ok != k.n && (!strings.Contains(out, "UNSUPPORTED gluid/2 ") || !strings.Contains(out, "races on this shape")) {
			t.Errorf("%s: the racing case is not reported UNSUPPORTED:\n%s", k.kind, out)
		}
	}
}
