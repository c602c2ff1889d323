package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestFP16Accuracy(t *testing.T) {
	code, out, errs := runCmd(t, "fp16", "accuracy", "--types", "q4_K,q8_0", "--k", "512", "--n", "16")
	if code != 0 || errs != "" || !strings.Contains(out, "q4_K") || !strings.Contains(out, "q8_0") || !strings.Contains(out, "q8_1 quant") {
		t.Errorf("exit %d:\n%s%s", code, out, errs)
	}
	code, out, _ = runCmd(t, "fp16", "accuracy", "--types", "q6_K", "--k", "256", "--n", "8", "--json")
	var r struct {
		Rows []accuracyJSON `json:"rows"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &r) != nil || len(r.Rows) != 1 || r.Rows[0].Type != "q6_K" || !(r.Rows[0].FP16 > 0 && r.Rows[0].FP16 < r.Rows[0].Q8_1) {
		t.Errorf("--json: exit %d:\n%s", code, out)
	}
}

func TestFP16AccuracySweepSVG(t *testing.T) {
	svg := filepath.Join(t.TempDir(), "acc.svg")
	code, out, errs := runCmd(t, "fp16", "accuracy", "--types", "q5_K", "--k-sweep", "256,512", "--n", "8", "--seeds", "2", "--svg", svg)
	if code != 0 || strings.Count(out, "q5_K") != 2 {
		t.Fatalf("exit %d:\n%s%s", code, out, errs)
	}
	b, err := os.ReadFile(svg)
	if err != nil || !strings.HasPrefix(string(b), "<svg") || strings.Count(string(b), "<polyline") != 2 {
		t.Errorf("svg: %v\n%.200s", err, b)
	}
}

func TestFP16AccuracyGGUF(t *testing.T) {
	path := writeModel(t, true)
	code, out, errs := runCmd(t, "fp16", "accuracy", "--gguf", path, "--tensor", "blk.0.attn_q.weight", "--rows", "8")
	if code != 0 || !strings.Contains(out, "blk.0.attn_q.weight:") || !strings.Contains(out, "q4_K        512      8") {
		t.Errorf("q4_K tensor: exit %d:\n%s%s", code, out, errs)
	}
	for _, tc := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"--gguf", path, "--tensor", "blk.0.ffn_up.weight"}, 1, "tq1_0"},
		{[]string{"--gguf", path, "--tensor", "blk.0.ffn_gate_exps.weight"}, 1, "2-D"},
		{[]string{"--gguf", path, "--tensor", "nope"}, 3, "no tensor"},
		{[]string{"--gguf", filepath.Join(t.TempDir(), "missing.gguf"), "--tensor", "x"}, 3, "missing.gguf"},
		{[]string{"--gguf", path}, 2, "--tensor"},
		{[]string{"--gguf", path, "--tensor", "blk.0.attn_q.weight", "--k", "256"}, 2, "--k"},
		{[]string{"--gguf", path, "--tensor", "blk.0.attn_q.weight", "--acts", filepath.Join(t.TempDir(), "none")}, 3, "none"},
	} {
		code, out, errs := runCmd(t, append([]string{"fp16", "accuracy"}, tc.args...)...)
		if code != tc.code || !strings.Contains(errs, tc.msg) {
			t.Errorf("%v: exit %d, want %d and %q:\n%s%s", tc.args, code, tc.code, tc.msg, out, errs)
		}
	}
}

func TestFP16Cost(t *testing.T) {
	code, out, errs := runCmd(t, "fp16", "cost", "--types", "q4_K,q6_K", "--shape", "4096,4096", "--batch", "1,5")
	if code != 0 || errs != "" || strings.Count(out, "\nq4_K") != 2 || !strings.Contains(out, "fp16 x") {
		t.Errorf("exit %d:\n%s%s", code, out, errs)
	}
	code, out, _ = runCmd(t, "fp16", "cost", "--arch", "p40", "--types", "q8_0", "--batch", "1", "--json")
	var r struct {
		Rows []costJSON `json:"rows"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &r) != nil || len(r.Rows) != 1 || r.Rows[0].Arch != "P40" || !(r.Rows[0].Speedup < 1) {
		t.Errorf("P40 --json: exit %d:\n%s", code, out)
	}
	code, out, _ = runCmd(t, "fp16", "cost", "--note")
	if code != 0 || !strings.Contains(out, "25.04 -> 33.22") || !strings.Contains(out, "calibrated") {
		t.Errorf("--note: exit %d:\n%s", code, out)
	}
	code, out, _ = runCmd(t, "fp16", "cost", "--calibrated", "--batch", "1", "--types", "q4_K")
	if code != 0 || !strings.Contains(out, "fitted") {
		t.Errorf("--calibrated: exit %d:\n%s", code, out)
	}
}

func TestFP16Usage(t *testing.T) {
	for _, args := range [][]string{
		{"fp16"},
		{"fp16", "bogus"},
		{"fp16", "cost", "--arch", "H200"},
		{"fp16", "cost", "--batch", "9"},
		{"fp16", "cost", "--shape", "100,4"},
		{"fp16", "cost", "--types", "q4_0"},
		{"fp16", "cost", "--note", "--batch", "1"},
		{"fp16", "cost", "--arch", "P40", "--calibrated"},
		{"fp16", "accuracy", "--k", "300"},
		{"fp16", "accuracy", "--svg", "x.svg"},
		{"fp16", "accuracy", "--k", "256", "--k-sweep", "256,512"},
		{"fp16", "accuracy", "--rows", "3"},
		{"fp16", "accuracy", "extra"},
	} {
		if code, out, errs := runCmd(t, args...); code != 2 || errs == "" {
			t.Errorf("%v: exit %d, want 2 with a message:\n%s%s", args, code, out, errs)
		}
	}
	for _, args := range [][]string{{"fp16", "-h"}, {"fp16", "cost", "-h"}, {"fp16", "accuracy", "--help"}} {
		code, out, _ := runCmd(t, args...)
		if code != 0 || !strings.Contains(out, "example:") || !strings.Contains(out, "simrun fp16 cost --note") {
			t.Errorf("%v: exit %d:\n%s", args, code, out)
		}
	}
}
