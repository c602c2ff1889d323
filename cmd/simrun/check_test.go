package main

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/ggsim/ggsim/quant"
	"github.com/ggsim/ggsim/sim"
	"github.com/ggsim/ggsim/sim/mmvq"
	"github.com/ggsim/ggsim/tiling"
)

func runCheckJSON(t *testing.T, args ...string) (int, checkReport) {
	t.Helper()
	code, out, errs := runCmd(t, append([]string{"check", "--json"}, args...)...)
	var r checkReport
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("check %q: exit %d, not JSON: %v\n%s\n%s", args, code, err, out, errs)
	}
	return code, r
}

func checkOf(r checkReport, name string) checkItem {
	for _, c := range r.Checks {
		if c.Name == name {
			return c
		}
	}
	return checkItem{}
}

// A clean MMVQ shape: every check runs and passes, exit 0.
func TestCheckClean(t *testing.T) {
	code, r := runCheckJSON(t, "--type", "q4_K", "--shape", "1024,40,2")
	if code != 0 || !r.OK || len(r.Findings) != 0 {
		t.Fatalf("exit %d: %+v", code, r)
	}
	for _, n := range []string{"dispatch", "dst_writes", "shared_memory", "lanes_vs_fast"} {
		if c := checkOf(r, n); !c.Ran || !c.OK {
			t.Errorf("%s: %+v", n, c)
		}
	}
	// mul_mat_vec_q_moe, and mul_mat_q in ID mode with every token on the same experts
	// (tiles empty for the other experts): nothing found.
	for _, args := range [][]string{
		{"--type", "q4_0", "--shape", "256,66,3", "--experts", "4,2"},
		{"--type", "q8_0", "--shape", "256,200,40", "--experts", "8,2", "--routing", "all-to-one"},
		{"--type", "q4_K", "--shape", "1024,300,100"},
	} {
		if code, r := runCheckJSON(t, args...); code != 0 || !r.OK || !checkOf(r, "dst_writes").Ran {
			t.Errorf("%q: exit %d %+v", args, code, r)
		}
	}
}

// The one-token MUL_MAT_ID race of mul_mat_vec_q (small_k, rows_per_block 4 not
// dividing N): found by the store replay and by sim/mmvq's detector, exit 1.
func TestCheckIDRace(t *testing.T) {
	code, r := runCheckJSON(t, "--type", "q4_0", "--shape", "256,66,1", "--experts", "4,2", "--ids", "0,1")
	if code != 1 || r.OK || len(r.Findings) != 2 {
		t.Fatalf("exit %d: %+v", code, r)
	}
	if c := checkOf(r, "dst_writes"); c.OK || !strings.Contains(c.Detail, "stored by two blocks") || !strings.Contains(c.Detail, "past dst") {
		t.Errorf("dst_writes: %+v", c)
	}
	if c := checkOf(r, "id_write_race"); c.OK || !strings.Contains(c.Detail, "stride_col_dst") {
		t.Errorf("id_write_race: %+v", c)
	}
	code, out, errs := runCmd(t, "check", "--type", "q4_0", "--shape", "256,66,1", "--experts", "4,2", "--ids", "0,1")
	if code != 1 || !strings.Contains(out, "FAIL dst_writes") || !strings.Contains(errs, "2 finding(s)") {
		t.Errorf("text: exit %d\n%s\n%s", code, out, errs)
	}
}

// The store replay (mmvqWrites) and sim/mmvq.IDWriteRace are two models of the same
// guard: they agree on every one-token MUL_MAT_ID shape of a grid.
func TestCheckWriteModelsAgree(t *testing.T) {
	dev, _ := sim.Lookup("H200")
	races := 0
	for _, typ := range []quant.Type{quant.Q4_0, quant.Q8_0, quant.Q4_K, quant.IQ3_S, quant.IQ2_XXS} {
		for _, k := range []int{256, 1024, 8192} {
			p, err := tiling.MakeMMVQPlan(&dev, typ, k, 1, true)
			if err != nil {
				t.Fatal(err)
			}
			for n := 1; n <= 40; n++ {
				for u := 1; u <= 4; u++ {
					w := mmvqWrites(p, n, 1, u, true)
					if race := mmvq.IDWriteRace(p, n, u) != ""; race == w.ok() {
						t.Errorf("%v K=%d N=%d U=%d: IDWriteRace %v, store replay %s", typ, k, n, u, race, w)
					} else if race {
						races++
					}
				}
			}
		}
	}
	if races == 0 {
		t.Error("no racing shape in the grid: the test checks nothing")
	}
}

// ggml aborts (q8_K through mmvq), and a token naming one expert twice on the mul_mat_q
// path: findings, exit 1. Bad ids are usage errors.
func TestCheckFindings(t *testing.T) {
	if code, r := runCheckJSON(t, "--type", "q8_K", "--shape", "256,4,1"); code != 1 || !strings.Contains(strings.Join(r.Findings, ""), "aborts") {
		t.Errorf("q8_K: exit %d %+v", code, r)
	}
	ids := strings.TrimSuffix(strings.Repeat("3,3,", 16), ",")
	if code, r := runCheckJSON(t, "--type", "q4_0", "--shape", "256,128,16", "--experts", "4,2", "--ids", ids, "--lanes=false"); code != 1 || checkOf(r, "routing").OK {
		t.Errorf("duplicate ids on mmq: exit %d %+v", code, r)
	}
	for _, args := range [][]string{
		{"--experts", "4,2", "--ids", "0,9", "--shape", "256,4,1"},
		{"--experts", "4,2", "--ids", "0", "--shape", "256,4,1"},
		{"--ids", "0,1"},
		{"--shape", "100,4,1", "--type", "q4_0"},
	} {
		if code, _, errs := runCmd(t, append([]string{"check"}, args...)...); code != 2 || errs == "" {
			t.Errorf("%q: exit %d %q", args, code, errs)
		}
	}
}

// mul_mat_q's shared memory: checked for a modelled type on both paths (it ran, found
// nothing, said which path), reported as not modelled (not ran, status "not_modelled",
// "n/m" in text) for a type without a model.
func TestCheckMMQSharedMemory(t *testing.T) {
	for _, args := range [][]string{
		{"--type", "q4_0", "--shape", "1024,200,40"},
		{"--type", "q4_0", "--shape", "1024,200,16", "--no-int8-mma"},
		{"--type", "q8_0", "--shape", "256,200,40", "--experts", "8,2"},
		{"--type", "q6_K", "--shape", "1024,200,40"},
		{"--type", "iq2_xs", "--shape", "1024,200,16", "--no-int8-mma"},
	} {
		code, r := runCheckJSON(t, args...)
		c := checkOf(r, "shared_memory")
		if code != 0 || !r.OK || !c.Ran || !c.OK || c.Status != "" || !strings.Contains(c.Detail, "path") {
			t.Errorf("%q: exit %d, shared_memory %+v", args, code, c)
		}
		if strings.Contains(r.Kernel, "mmq") == false {
			t.Errorf("%q: kernel %s, want mul_mat_q", args, r.Kernel)
		}
	}
	code, r := runCheckJSON(t, "--type", "q4_0", "--shape", "1024,200,40", "--device", "MI300X")
	// Not modelled is not a pass: exit 1, ok false, named in not_modelled.
	if c := checkOf(r, "shared_memory"); code != 1 || r.OK || !slices.Equal(r.NotModelled, []string{"shared_memory"}) || len(r.Findings) != 0 ||
		!strings.Contains(r.Kernel, "mmq") || c.Ran || c.Status != statusNotModelled || !strings.Contains(c.Detail, "not modelled") {
		t.Errorf("MI300X: exit %d, ok %v, not_modelled %q, kernel %s, shared_memory %+v", code, r.OK, r.NotModelled, r.Kernel, c)
	}
	code, out, errs := runCmd(t, "check", "--type", "q4_0", "--shape", "1024,200,40", "--device", "MI300X")
	if code != 1 || !strings.Contains(out, "n/m  shared_memory") || !strings.Contains(out, "not modelled: shared_memory") || !strings.Contains(errs, "not a pass") {
		t.Errorf("MI300X text: exit %d\n%s\nstderr: %s", code, out, errs)
	}
}
