package compare_test

import (
	"fmt"

	"github.com/ggsim/ggsim/fp16path/compare"
	"github.com/ggsim/ggsim/quant"
)

// ExampleRealistic measures both paths on a model-like Q5_K matrix (the note's type) and
// says which error dominates the q8_1 path.
func ExampleRealistic() {
	a, err := compare.Realistic(quant.Q5_K, 2048, 64, 1)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("fp16 more accurate than q8_1:", a.FP16 < a.Q8_1)
	fmt.Println("q8_1 error within 5% of its activation quantization's:", a.Q8_1Quant > 0.95*a.Q8_1 && a.Q8_1Quant < 1.05*a.Q8_1)
	fmt.Println("q8_1 / fp16 at least 5:", a.Q8_1 > 5*a.FP16)
	// Output:
	// fp16 more accurate than q8_1: true
	// q8_1 error within 5% of its activation quantization's: true
	// q8_1 / fp16 at least 5: true
}

// ExamplePredict estimates a Q4_K FFN matrix of the note's model (5120 x 17408, halved by
// the two-GPU split) at batch 1 on the P100, both paths.
func ExamplePredict() {
	for _, p := range []compare.Path{compare.FP16, compare.Q8_1} {
		e, err := compare.Predict(compare.GP100, p, quant.Q4_K, 5120, 8704, 1)
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("%-4v %5.1f us, %s bound, %3.0f GB/s of weights\n", p, e.Sec*1e6, e.Bound(), e.GBs())
	}
	// Output:
	// fp16  83.1 us, issue bound, 302 GB/s of weights
	// q8_1 152.1 us, issue bound, 165 GB/s of weights
}
