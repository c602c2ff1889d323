package fp16path_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/ggsim/ggsim/fp16path"
	"github.com/ggsim/ggsim/quant"
)

// BenchmarkMulMat times the simulated path on one column of a layer-sized matrix.
func BenchmarkMulMat(b *testing.B) {
	const K, N = 4096, 1024
	for _, t := range []quant.Type{quant.Q4_K, quant.Q6_K, quant.Q8_0} {
		x, y := realistic(rand.New(rand.NewPCG(1, 1)), t, K, N)
		b.Run(fmt.Sprintf("type=%v/k=%d/n=%d", t, K, N), func(b *testing.B) {
			for b.Loop() {
				if _, err := fp16path.MulMat(t, x, K, N, y, 1, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkMulMatColumns times the multi-column kernel (each group unpacked once for
// all columns) at 5 columns, the note's speculative-verification batch.
func BenchmarkMulMatColumns(b *testing.B) {
	const K, N, M = 4096, 1024, 5
	r := rand.New(rand.NewPCG(1, 1))
	x, _ := realistic(r, quant.Q4_K, K, N)
	_, y := realistic(r, quant.Q4_K, K*M, 0)
	b.Run(fmt.Sprintf("type=%v/k=%d/n=%d/m=%d", quant.Q4_K, K, N, M), func(b *testing.B) {
		for b.Loop() {
			if _, err := fp16path.MulMat(quant.Q4_K, x, K, N, y, M, nil); err != nil {
				b.Fatal(err)
			}
		}
	})
}
