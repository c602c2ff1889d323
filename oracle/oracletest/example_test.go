package oracletest_test

import (
	"fmt"
	"strings"

	"github.com/ggsim/ggsim"
	"github.com/ggsim/ggsim/gguf/golden"
	"github.com/ggsim/ggsim/oracle"
	"github.com/ggsim/ggsim/oracle/oracletest"
)

// A sweep record: the header names the device, each line one case and the SHA-256 of
// its output bits. Here the simulator writes two lines and verifies them, as `simrun
// sweep run` and `simrun sweep verify` do.
func ExampleVerifySweepParallel() {
	_, dev, _ := oracletest.ParseSweepHeader("# ggml 0.21.0 on NVIDIA H200 (cc 900, 132 SMs, driver 580.159.04), 2026-12-02T01:06:58Z")
	h200, err := oracle.DeviceOf(golden.Meta{Device: dev})
	if err != nil {
		fmt.Println(err)
		return
	}
	sim := ggsim.NewSimulator()
	run := func(c *oracletest.SweepCase) ([]float32, error) {
		return sim.MulMat(h200, c.Type, c.A, c.K, c.N, c.B, c.M)
	}
	var rec strings.Builder
	for i := 2; i < 4; i++ {
		c, _ := oracletest.Sweep(oracletest.SweepMMQ, 7, i)
		out, err := run(&c)
		r := oracletest.SweepResult{Kind: c.Kind, Seed: 7, Index: i, Type: c.Type, Shape: c.Shape(), Profile: c.Profile}
		if err != nil {
			r.Err = err.Error()
		} else {
			r.Digest = oracletest.Digest(out)
		}
		fmt.Fprintln(&rec, r)
	}
	rep, err := oracletest.VerifySweepParallel(strings.NewReader(rec.String()), nil, run, 2)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, v := range rep.Verdicts {
		fmt.Println(v.Want.Kind, v.Want.Index, v.Want.Type, v.Want.Shape, v.Match)
	}
	fmt.Printf("%d/%d match\n", rep.Match, rep.Cases)
	// Output:
	// mmq 2 q5_0 K=256 N=679 M=13 true
	// mmq 3 q5_1 K=2016 N=512 M=12 true
	// 2/2 match
}

// The MUL_MAT_ID cases of more than 8 tokens (mul_mat_q in ID mode) that a run passed,
// per routing kind, as the report and the CUDA backend's summary line print them.
func ExampleReport_RoutingCounts() {
	rep := &oracletest.Report{MMQID: 4, ByRouting: map[string]int{"uniform": 3, "top-k": 1}}
	fmt.Println(rep.RoutingCounts())
	// Output:
	// uniform:3 one-hot-expert:0 sparse:0 same-experts:0 top-k:1
}
