package mmq_test

import (
	"fmt"
	"math"

	"github.com/ggsim/ggsim/oracle/oracletest"
	"github.com/ggsim/ggsim/quant"
	"github.com/ggsim/ggsim/sim"
	"github.com/ggsim/ggsim/sim/mmq"
)

// Follow one output of a mul_mat_q launch: the K ranges of the CUDA blocks that work on
// its tile, and the fixup that adds their partial sums.
func ExampleTraceOutput() {
	dev, _ := sim.Lookup("H200")
	const K, N, M = 1024, 256, 20
	w, _ := oracletest.RealisticWeights(quant.Q4_K, K, N, 1)
	b := oracletest.RealisticActivations(K, M, 1)
	p, _ := mmq.MakePlan(dev, quant.Q4_K, K, N, M)
	tr, err := mmq.TraceOutput(dev, quant.Q4_K, w, K, N, b, M, p, 5, 7)
	if err != nil {
		fmt.Println(err)
		return
	}
	out, _ := mmq.MulMat(dev, quant.Q4_K, w, K, N, b, M, p)
	fmt.Println("tile", tr.Tile, "ranges", len(tr.Ranges), "iterations", len(tr.Steps), "fixup adds", len(tr.Fixup))
	fmt.Println("same bits as MulMat:", math.Float32bits(tr.Value) == math.Float32bits(out[7*N+5]))
	// Output:
	// tile 0 ranges 4 iterations 4 fixup adds 4
	// same bits as MulMat: true
}
