package mmq_test

import (
	"fmt"

	"github.com/ggsim/ggsim/moe"
	"github.com/ggsim/ggsim/quant"
	"github.com/ggsim/ggsim/sim"
	"github.com/ggsim/ggsim/sim/mmq"
)

// MulMatID computes a MoE layer's expert matmul for more than 8 tokens as mul_mat_q does
// in MUL_MAT_ID mode: expert e's weights are all e+1 here, every token has one
// activation row of 0.5 broadcast to its two slots, and token t uses experts t%3 and 3.
func ExampleMulMatID() {
	dev, _ := sim.Lookup("H200")
	const K, N, E, T, U, B1 = 256, 2, 4, 12, 2, 1
	rs := K / 32 * quant.Q8_0.TypeSize()
	a := make([]byte, E*N*rs)
	for e := 0; e < E; e++ {
		w := make([]float32, K)
		for k := range w {
			w[k] = float32(e + 1)
		}
		for i := 0; i < N; i++ {
			if err := quant.QuantizeRowRef(quant.Q8_0, w, a[(e*N+i)*rs:(e*N+i+1)*rs]); err != nil {
				panic(err)
			}
		}
	}
	b := make([]float32, T*B1*K)
	for k := range b {
		b[k] = 0.5
	}
	ids := make([]int32, T*U)
	for t := 0; t < T; t++ {
		ids[t*U], ids[t*U+1] = int32(t%3), 3
	}
	r, err := moe.Route(ids, T, U, E, B1)
	if err != nil {
		panic(err)
	}
	p, err := mmq.MakePlanID(dev, quant.Q8_0, K, N, r)
	if err != nil {
		panic(err)
	}
	dst, err := mmq.MulMatID(dev, quant.Q8_0, a, K, N, E, b, B1, T, ids, U, p)
	if err != nil {
		panic(err)
	}
	fmt.Println("experts' columns:", r.ExpertCols())
	for t := 0; t < 3; t++ {
		// The exact products are 128*(e+1); the weights' half scale (e+1)/127 and the
		// activations' q8_1 scale round them a little.
		fmt.Printf("token %d: %v %v\n", t, dst[(t*U)*N], dst[(t*U+1)*N])
	}
	// Output:
	// experts' columns: [4 4 4 12]
	// token 0: 127.99219 511.96875
	// token 1: 255.98438 511.96875
	// token 2: 383.97656 511.96875
}
