package mmvq

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/ggsim/ggsim/quant"
)

// BenchmarkMulMatIQ measures the fast mode on the types of iq*.go and extra.go: a
// 4096×4096 matrix (random block bytes with finite scales, as weights() makes them
// where ggsim has no quantizer) by 1 column, reporting int8 multiply-accumulates per
// second.
func BenchmarkMulMatIQ(b *testing.B) {
	dev := h200(b)
	const n, k, m = 4096, 4096, 1
	for _, ty := range []quant.Type{quant.IQ2_XXS, quant.IQ2_XS, quant.IQ2_S, quant.IQ3_XXS,
		quant.IQ3_S, quant.IQ1_S, quant.IQ1_M, quant.NVFP4, quant.Q1_0, quant.Q2_0} {
		b.Run(fmt.Sprintf("type=%v/n=%d/k=%d/m=%d", ty, n, k, m), func(b *testing.B) {
			rng := rand.New(rand.NewPCG(3, 4))
			rs, _ := ty.RowSize(k)
			x := make([]byte, int(rs)*n)
			proto, _ := weights(b, ty, k, 16, rng)
			for r := 0; r < n; r++ {
				copy(x[r*int(rs):], proto[(r%16)*int(rs):(r%16+1)*int(rs)])
			}
			y := acts(k, m, rng)
			b.ResetTimer()
			for b.Loop() {
				if _, err := MulMat(dev, ty, x, k, n, y, m); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(n)*k*m*float64(b.N)/b.Elapsed().Seconds(), "MAC/s")
		})
	}
}
