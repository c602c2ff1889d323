package main

import (
	"strings"
	"testing"
)

// TestExplainFP16Path: --fp16path on a P100 dispatches the covered shapes to the GP100
// fp16 path (kernel, check, launch, simulated by fp16path) and leaves the others on
// ggml's kernel with the reason; without the flag nothing changes.
func TestExplainFP16Path(t *testing.T) {
	rep := explainJSON(t, "--device", "P100", "--type", "q5_K", "--shape", "5120,17408,5", "--fp16path")
	if rep.Kernel != "gp100_fp16" || rep.FP16Path == nil || !rep.Simulated || rep.FP16Path.Columns != 5 || rep.FP16Path.GroupsPerLane != 10 {
		t.Fatalf("q5_K x5 on P100: %+v", rep)
	}
	last := rep.Checks[len(rep.Checks)-1]
	if last.Name != "gp100_fp16_path" || !last.Value || last.Rule != "true for ne11 <= 8" {
		t.Errorf("check %+v", last)
	}
	for _, args := range [][]string{
		{"--device", "P100", "--type", "q6_K", "--shape", "5120,5120,5", "--fp16path"},
		{"--device", "P40", "--type", "q4_K", "--shape", "4096,4096,1", "--fp16path"},
		{"--device", "P100", "--type", "q4_K", "--shape", "4096,4096,1"},
	} {
		rep := explainJSON(t, args...)
		if rep.Kernel != "mmvq" || rep.FP16Path != nil {
			t.Errorf("%v: %s", args, rep.Kernel)
		}
		if strings.Contains(strings.Join(args, " "), "--fp16path") != strings.Contains(rep.Reason, "patch 0007") {
			t.Errorf("%v: reason %q", args, rep.Reason)
		}
	}
	code, out, _ := runCmd(t, "explain", "--device", "P100", "--type", "iq4_xs", "--shape", "4096,4096,1", "--fp16path")
	if code != 0 || !strings.Contains(out, "kernel: gp100_fp16") || !strings.Contains(out, "simulated: yes (fp16path.MulMat") {
		t.Errorf("text output (exit %d):\n%s", code, out)
	}
}
