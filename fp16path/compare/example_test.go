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

// ExampleInstructions prints the model's instruction counts per 32 Q6_K weights and one
// column on the P100: the fp16 path's 16 HFMA2 and 16 PRMT against the q8_1 path's byte
// extracts (SHF) and multiply-adds (IALU) of its scalar dp4a.
func ExampleInstructions() {
	for _, p := range []compare.Path{compare.FP16, compare.Q8_1} {
		c, err := compare.Instructions(compare.GP100, p, quant.Q6_K, 1)
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("%-4v", p)
		for k := compare.Class(0); k < compare.NumClasses; k++ {
			if c[k] != 0 {
				fmt.Printf(" %v=%g", k, c[k])
			}
		}
		fmt.Println()
	}
	// Output:
	// fp16 LD=37.125 F32=10 HF2=16 IALU=24 SHF=12 PRMT=16 CVT=6.125
	// q8_1 LD=36 F32=16 IALU=112 SHF=108 CVT=28
}

// ExampleNoteClaims lists the note's measurements the cost model is compared with and
// whether the calibrated model agrees with each.
func ExampleNoteClaims() {
	claims, err := compare.NoteClaims()
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, c := range claims {
		fmt.Printf("%-45s %-24s calibrated model agrees: %v\n", c.What, c.Measured, c.AgreesCalib)
	}
	// Output:
	// stock K-quant MMVQ weight bandwidth           246-298 GB/s             calibrated model agrees: true
	// tg128 tok/s                                   25.04 -> 33.22 (x1.33)   calibrated model agrees: true
	// 5-token verify batch ms                       88 -> 60 (x0.68)         calibrated model agrees: true
	// q8_1 5-token batch / 1-token step             ~3x                      calibrated model agrees: true
	// Q6_K at 5 columns: fp16 multi-column vs q8_1  7.7 vs 6.2 ms (x1.24)    calibrated model agrees: false
}
