package mmvq_test

import (
	"fmt"

	"github.com/ggsim/ggsim/quant"
	"github.com/ggsim/ggsim/sim/mmvq"
	"github.com/ggsim/ggsim/sim/q8"
)

// ExampleExplainVecDot steps through one Q8_0 vec_dot call: thread iqs = 2 of x block 0
// dots x ints 2 and 3 (values 8..15) with y ints 2 and 3, then scales and accumulates the sum.
func ExampleExplainVecDot() {
	x := make([]byte, 34) // one Q8_0 block: d = 1.0, values 0..31
	x[0], x[1] = 0x00, 0x3c
	for i := range 32 {
		x[2+i] = byte(i)
	}
	y := make([]q8.Block, 1) // one q8_1 block: d = 0.5, values all 1
	y[0].D = 0x3800
	for i := range y[0].Qs {
		y[0].Qs[i] = 1
	}
	st, err := mmvq.ExplainVecDot(quant.Q8_0, 1, x, 0, 2, y)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, s := range st.Steps {
		switch {
		case s.Op.IntResult():
			fmt.Printf("%-4v %-24s = %d\n", s.Op, s.What, s.Int)
		default:
			fmt.Printf("%-4v %-24s = %v\n", s.Op, s.What, s.Float)
		}
	}
	fmt.Println("tmp:", st.In, "->", st.Out, st.Check() == nil)
	// Output:
	// dp4a sumi                     = 38
	// dp4a sumi                     = 92
	// fmul d = dx*d8                = 0.5
	// i2f  float(sumi)              = 92
	// ffma tmp                      = 47
	// tmp: 1 -> 47 true
}
