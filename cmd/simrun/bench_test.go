package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// bench on a small shape, simulator only: one row per shape with its kernel, times and
// no ratio; the table has the same rows.
func TestBenchSmall(t *testing.T) {
	code, out, errb := runCmd(t, "bench", "--k", "256", "--n", "64", "--reps", "2", "--threads", "1", "--only", "m=(1|8)$|experts", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errb)
	}
	var rep benchReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("%v:\n%s", err, out)
	}
	if len(rep.Rows) != 9 || rep.Threads != 1 || rep.Reps != 2 {
		t.Fatalf("%d rows, %d threads, %d reps:\n%s", len(rep.Rows), rep.Threads, rep.Reps, out)
	}
	for _, r := range rep.Rows {
		want := "mmvq"
		if strings.Contains(r.Shape, "experts") {
			want = "mmq"
		}
		if r.Error != "" || r.Kernel != want || len(r.Sim) != 2 || r.SimMedian <= 0 || r.Ratio != nil || r.GGML != nil {
			t.Errorf("row %+v", r)
		}
	}
	code, out, _ = runCmd(t, "bench", "--k", "256", "--n", "64", "--reps", "1", "--only", "q8_0.*m=1$")
	if lines := strings.Split(strings.TrimSpace(out), "\n"); code != 0 || len(lines) != 3 || !strings.HasPrefix(lines[2], "type=q8_0/k=256/n=64/m=1 ") {
		t.Errorf("exit %d:\n%s", code, out)
	}
}

func TestBenchErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--reps", "0"}, 2, "--reps"},
		{[]string{"--k", "100"}, 2, "--k 100"},
		{[]string{"--only", "("}, 2, "--only"},
		{[]string{"--only", "q4_K/m=1$"}, 2, "matches no shape; the shapes are type=q4_K/k=4096/n=14336/m=1,"},
		{[]string{"extra"}, 2, "unexpected argument"},
		{[]string{"--ggml", "/nonexistent/ggml-build", "--k", "256", "--n", "8"}, 1, "simrun bench:"},
	} {
		code, _, errb := runCmd(t, append([]string{"bench"}, tc.args...)...)
		if code != tc.code || !strings.Contains(errb, tc.want) {
			t.Errorf("bench %v: exit %d, stderr %q", tc.args, code, errb)
		}
	}
	if code, out, _ := runCmd(t, "bench", "-h"); code != 0 || !strings.Contains(out, "usage: simrun bench") {
		t.Errorf("bench -h: exit %d", code)
	}
}
