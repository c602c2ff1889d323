package mmvq_test

import (
	"fmt"

	"github.com/ggsim/ggsim/quant"
	"github.com/ggsim/ggsim/sim"
	"github.com/ggsim/ggsim/sim/mmvq"
)

// ExampleMulMatOpts follows one output of a Q8_0 matrix-vector product through the
// lane-by-lane trace: which thread accumulated which block, the cross-warp sums and the
// butterfly.
func ExampleMulMatOpts() {
	dev, _ := sim.Lookup("H200")
	const k, n = 2048, 2
	x := make([]byte, n*k/32*34)
	y := make([]float32, k)
	for i := range y {
		y[i] = float32(i%7) - 3
	}
	_ = quant.QuantizeRowRef(quant.Q8_0, y, x[:k/32*34]) // row 0 = y, row 1 = 0
	count := map[mmvq.EventKind]int{}
	out, err := mmvq.MulMatOpts(dev, quant.Q8_0, x, k, n, y, 1, &mmvq.Options{Trace: true, Watch: func(e mmvq.Event) {
		if e.Row == 0 {
			count[e.Kind]++
			if e.Kind == mmvq.EvVecDot && e.Warp == 3 && e.Lane == 31 {
				fmt.Printf("warp 3 lane 31: block %d iqs %d\n", e.Block, e.Iqs)
			}
		}
	}})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(count[mmvq.EvVecDot], "vec_dot calls,", count[mmvq.EvCrossWarp], "cross-warp adds,", count[mmvq.EvShuffle], "shuffle adds")
	fmt.Println(out[0] > 0, out[1] == 0)
	// Output:
	// warp 3 lane 31: block 31 iqs 6
	// warp 3 lane 31: block 63 iqs 6
	// 256 vec_dot calls, 96 cross-warp adds, 160 shuffle adds
	// true true
}
