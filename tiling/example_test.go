package tiling_test

import (
	"fmt"

	"github.com/ggsim/ggsim/quant"
	"github.com/ggsim/ggsim/sim"
	"github.com/ggsim/ggsim/tiling"
)

func ExampleDecide() {
	h200, _ := sim.Lookup("H200")
	for _, m := range []int64{1, 8, 9} {
		d, err := tiling.Decide(h200, quant.Q4_K, tiling.Shape{K: 4096, N: 4096, M: m})
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println(m, d.Kernel, d.Kernel.GGMLName())
	}
	d, _ := tiling.Decide(h200, quant.TQ2_0, tiling.Shape{K: 4096, N: 4096, M: 1})
	fmt.Println(d.Kernel)
	// Output:
	// 1 mmvq mul_mat_vec_q
	// 8 mmvq mul_mat_vec_q
	// 9 mmq mul_mat_q
	// unsupported
}

func ExampleMMQSearchJ() {
	h200, _ := sim.Lookup("H200")
	s := tiling.MMQSearchJ(&h200, quant.Q4_K, 33, tiling.MMQFallback(4096))
	for _, st := range s.Steps {
		fmt.Println(st.J, st.NTilesX, st.Chosen, st.Source)
	}
	fmt.Println("J =", s.J)
	// Output:
	// 8 5 true mmq-config-ampere.cuh:162
	// 16 3 true mmq-config-ampere.cuh:163
	// 24 2 true mmq-config-ampere.cuh:164
	// 32 2 false mmq-config-ampere.cuh:165
	// 40 1 true mmq-config-ampere.cuh:166
	// J = 40
}

func ExampleMakeMMVQPlan() {
	h200, _ := sim.Lookup("H200")
	p, err := tiling.MakeMMVQPlan(&h200, quant.Q4_K, 4096, 1, false)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(p)
	// Output:
	// mul_mat_vec_q<q4_K, ncols=1, small_k=false, halve_iters=false> table=GENERIC nwarps=4 rows_per_block=1 blocks_per_iter=8
}

// Whether ggml fuses gate, up and a GLU into one mul_mat_vec_q launch: for one token
// only.
func ExampleFuseGLU() {
	dev, _ := sim.Lookup("H200")
	for _, m := range []int64{1, 2} {
		fused, why := tiling.FuseGLU(dev, quant.Q4_K, tiling.Shape{K: 4096, N: 14336, M: m}, 0)
		fmt.Println(fused, why)
	}
	// Output:
	// true ggml_cuda_try_fuse: {gate, up, GLU} as one mul_mat_vec_q with the GLU epilogue (ncols_dst = 1)
	// false MUL_MAT with 2 columns: fusion only for ncols_dst = 1
}
