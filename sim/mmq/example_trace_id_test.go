package mmq_test

import (
	"fmt"
	"math"

	"github.com/ggsim/ggsim/moe"
	"github.com/ggsim/ggsim/oracle/oracletest"
	"github.com/ggsim/ggsim/quant"
	"github.com/ggsim/ggsim/sim"
	"github.com/ggsim/ggsim/sim/mmq"
)

// Follow one output of mul_mat_q's MUL_MAT_ID mode: 16 tokens, each routed to 2 of 4
// experts (token t to t%4 and (t+1)%4); dst column 5 is token 2's slot 1, expert 3,
// whose 8 compact columns (tokens 2, 3, 6, 7, ...) start at 24.
func ExampleTraceOutputID() {
	dev, _ := sim.Lookup("H200")
	const K, N, E, T, U = 512, 64, 4, 16, 2
	w, _ := oracletest.RealisticWeights(quant.Q4_0, K, N*E, 1)
	b := oracletest.RealisticActivations(K, T, 1)
	ids := make([]int32, T*U)
	for tok := range T {
		ids[tok*U], ids[tok*U+1] = int32(tok%E), int32((tok+1)%E)
	}
	r, _ := moe.Route(ids, T, U, E, 1)
	p, _ := mmq.MakePlanID(dev, quant.Q4_0, K, N, r)
	tr, err := mmq.TraceOutputID(dev, quant.Q4_0, w, K, N, E, b, 1, T, ids, U, p, 9, 5)
	if err != nil {
		fmt.Println(err)
		return
	}
	out, _ := mmq.MulMatID(dev, quant.Q4_0, w, K, N, E, b, 1, T, ids, U, p)
	fmt.Println("expert", tr.Expert, "compact column", tr.Column, "iterations", len(tr.Steps))
	fmt.Println("same bits as MulMatID:", math.Float32bits(tr.Value) == math.Float32bits(out[5*N+9]))
	// Output:
	// expert 3 compact column 24 iterations 2
	// same bits as MulMatID: true
}
