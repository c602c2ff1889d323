package coverage_test

import (
	"fmt"

	"github.com/ggsim/ggsim"
	"github.com/ggsim/ggsim/oracle/coverage"
	"github.com/ggsim/ggsim/quant"
	"github.com/ggsim/ggsim/sim"
)

// Wrap an implementation in a Recorder, run launches through it (here directly; the
// verifier or the conformance suite would), and read which kernel paths they took.
func ExampleRecorder() {
	dev, _ := sim.Lookup("H200")
	rec := coverage.NewRecorder(ggsim.NewSimulator())
	w := make([]byte, 2*18) // two rows of one q4_0 block, all zero
	if _, err := rec.MulMat(dev, quant.Q4_0, w, 32, 2, make([]float32, 32), 1); err != nil {
		fmt.Println(err)
	}
	for _, r := range rec.Report() {
		fmt.Println(r.Device, r.Cases, "launch")
		for _, c := range r.Exercised {
			fmt.Println(c.Feature)
		}
	}
	// Output:
	// H200 1 launch
	// dispatch: mul_mat mmvq
	// mmvq: mul_mat_vec_q nwarps=4 rows_per_block=4 small_k
}
