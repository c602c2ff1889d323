package oracletest_test

import (
	"fmt"

	"github.com/ggsim/ggsim"
	"github.com/ggsim/ggsim/oracle"
	"github.com/ggsim/ggsim/oracle/oracletest"
	"github.com/ggsim/ggsim/quant"
	"github.com/ggsim/ggsim/sim"
)

// Model-like operands through the front door, judged against the fp64 reference (what
// `simrun run` does).
func ExampleRealisticWeights() {
	const K, N, M = 1024, 64, 4
	w, err := oracletest.RealisticWeights(quant.Q4_K, K, N, 1)
	if err != nil {
		fmt.Println(err)
		return
	}
	x := oracletest.RealisticActivations(K, M, 1)
	dev, _ := sim.Lookup("H200")
	res, err := ggsim.MulMat(dev, ggsim.Weights{Type: quant.Q4_K, K: K, N: N, Data: w}, x, M)
	if err != nil {
		fmt.Println(err)
		return
	}
	ref, err := oracle.MulMatRef(quant.Q4_K, w, K, N, x, M)
	if err != nil {
		fmt.Println(err)
		return
	}
	outside, _ := ref.WithinBound(res.Out)
	fmt.Printf("%s: %d of %d outputs outside the fp64 bound\n", res.Decision.Kernel, outside, len(res.Out))
	// Output:
	// mmvq: 0 of 256 outputs outside the fp64 bound
}
