package sim_test

import (
	"fmt"

	"github.com/ggsim/ggsim/sim"
)

// The fused swiglu epilogue of gate sum -1.5 and up sum 2, one instruction a line.
func ExampleExplainGLUFused() {
	for i, s := range sim.ExplainGLUFused(sim.GLUSwiGLU, -1.5, 2, 0, 0) {
		fmt.Printf("#%d %-4v %-30s = %.9g\n", i, s.Op, s.What, s.Float)
	}
	fmt.Printf("GLUFused: %.9g\n", sim.GLUFused(sim.GLUSwiGLU, -1.5, 2, 0, 0))
	// Output:
	// #0 fadd result = up + bias             = 2
	// #1 fadd gate = gate + bias             = -1.5
	// #2 fmul t = x * -log2e                 = 2.16404247
	// #3 ex2  t = exp2(t) = expf(-x)         = 4.48168898
	// #4 fadd t = 1 + expf(-x)               = 5.48168898
	// #5 rcp  t = 1/t                        = 0.182425529
	// #6 fmul silu(x) = x * t                = -0.273638308
	// #7 fmul dst = result * silu(gate)      = -0.547276616
	// GLUFused: -0.547276616
}
