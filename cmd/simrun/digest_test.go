package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// unsharded runs a digest sweep in one piece and returns its digest.
func unsharded(t *testing.T, sweep ...string) string {
	t.Helper()
	code, out, errs := runCmd(t, append([]string{"sweep", "digest", "--json"}, sweep...)...)
	var r digestRunJSON
	if err := json.Unmarshal([]byte(out), &r); code != 0 || err != nil || len(r.Digest) != 64 {
		t.Fatalf("%q: exit %d %v\n%s\n%s", sweep, code, err, out, errs)
	}
	return r.Digest
}

// parts runs every shard of n into a part file and returns the files in reverse order.
func parts(t *testing.T, n int, sweep ...string) []string {
	t.Helper()
	dir := t.TempDir()
	var files []string
	for i := n - 1; i >= 0; i-- {
		p := filepath.Join(dir, fmt.Sprintf("part%d.txt", i))
		args := append([]string{"sweep", "digest", "--shard", fmt.Sprintf("%d/%d", i, n), "--out", p}, sweep...)
		if code, _, errs := runCmd(t, args...); code != 0 {
			t.Fatalf("%q: exit %d %s", args, code, errs)
		}
		files = append(files, p)
	}
	return files
}

func combine(t *testing.T, files ...string) (int, combineJSON, string) {
	t.Helper()
	code, out, errs := runCmd(t, append([]string{"digest", "combine", "--json"}, files...)...)
	var r combineJSON
	if code == 0 {
		if err := json.Unmarshal([]byte(out), &r); err != nil {
			t.Fatalf("not JSON: %v\n%s", err, out)
		}
	}
	return code, r, errs
}

// The digest of the shards joined is the unsharded digest, for any number of shards,
// for both kinds of sweep.
func TestDigestCombinedEqualsUnsharded(t *testing.T) {
	for _, sweep := range [][]string{
		{"--kind", "q8_1", "--chunks", "5"},
		{"--kind", "blocks", "--type", "q4_0", "--seed", "3", "--chunks", "10"},
	} {
		whole := unsharded(t, sweep...)
		for _, n := range []int{1, 2, 3} {
			code, r, errs := combine(t, parts(t, n, sweep...)...)
			if code != 0 || r.Digest != whole || r.Parts != n {
				t.Errorf("%q in %d shards: exit %d, %+v %s; unsharded %s", sweep, n, code, r, errs, whole)
			}
		}
	}
}

// A Kubernetes Indexed Job's shard (JOB_COMPLETION_INDEX, GGSIM_SHARDS) is the flag's.
func TestDigestShardFromEnv(t *testing.T) {
	sweep := []string{"--kind", "q8_1", "--chunks", "4"}
	dir := t.TempDir()
	var files []string
	for i := range 2 {
		t.Setenv("JOB_COMPLETION_INDEX", fmt.Sprint(i))
		t.Setenv("GGSIM_SHARDS", "2")
		p := filepath.Join(dir, fmt.Sprintf("p%d", i))
		if code, _, errs := runCmd(t, append([]string{"sweep", "digest", "--out", p}, sweep...)...); code != 0 {
			t.Fatalf("exit %d %s", code, errs)
		}
		b, _ := os.ReadFile(p)
		if !strings.Contains(string(b), fmt.Sprintf("shard %d/2\n", i)) {
			t.Errorf("part %d:\n%s", i, b)
		}
		files = append(files, p)
	}
	t.Setenv("JOB_COMPLETION_INDEX", "")
	t.Setenv("GGSIM_SHARDS", "")
	if code, r, errs := combine(t, files...); code != 0 || r.Digest != unsharded(t, sweep...) {
		t.Errorf("exit %d %+v %s", code, r, errs)
	}
}

// Parts that do not make one whole sweep are refused: a missing shard, a shard twice,
// parts of different sweeps, a file that is not a part; --want says whether the digest
// is the expected one.
func TestDigestCombineRefuses(t *testing.T) {
	a := parts(t, 3, "--kind", "q8_1", "--chunks", "3")
	b := parts(t, 3, "--kind", "q8_1", "--chunks", "4")
	if code, _, errs := combine(t, a[0], a[1]); code != 1 || !strings.Contains(errs, "missing") {
		t.Errorf("missing shard: exit %d %s", code, errs)
	}
	if code, _, errs := combine(t, a[0], a[1], a[2], a[2]); code != 1 || !strings.Contains(errs, "two parts") {
		t.Errorf("shard twice: exit %d %s", code, errs)
	}
	if code, _, errs := combine(t, a[0], a[1], b[2]); code != 1 || !strings.Contains(errs, "different sweeps") {
		t.Errorf("mixed sweeps: exit %d %s", code, errs)
	}
	bad := filepath.Join(t.TempDir(), "bad")
	os.WriteFile(bad, []byte("# ggsim digest part v1\nspec q8_1 chunks=3\ndevice any\nshard 0/3\nchunk 1 "+strings.Repeat("a", 64)+"\n"), 0o644)
	if code, _, errs := combine(t, bad); code != 3 || !strings.Contains(errs, "bad:5: chunk 1 is not in shard 0/3") {
		t.Errorf("chunk outside its shard: exit %d %s", code, errs)
	}
	if code, _, errs := combine(t, filepath.Join(t.TempDir(), "absent")); code != 3 || errs == "" {
		t.Errorf("absent part: exit %d %s", code, errs)
	}
	whole := unsharded(t, "--kind", "q8_1", "--chunks", "3")
	if code, _, _ := runCmd(t, append([]string{"digest", "combine", "--want", whole}, a...)...); code != 0 {
		t.Errorf("--want the right digest: exit %d", code)
	}
	if code, _, errs := runCmd(t, append([]string{"digest", "combine", "--want", strings.Repeat("0", 64)}, a...)...); code != 1 || !strings.Contains(errs, "not --want") {
		t.Errorf("--want another digest: exit %d %s", code, errs)
	}
	for _, args := range [][]string{{"digest"}, {"digest", "merge"}, {"digest", "combine"}, {"sweep", "digest", "--kind", "q8_1", "--type", "q4_0"},
		{"sweep", "digest", "--kind", "blocks", "--type", "f32"}, {"sweep", "digest", "--kind", "q8_1", "--shard", "2/2"}} {
		if code, _, errs := runCmd(t, args...); code != 2 || errs == "" {
			t.Errorf("%q: exit %d %q", args, code, errs)
		}
	}
}
