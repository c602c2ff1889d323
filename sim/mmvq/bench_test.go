package mmvq

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/ggsim/ggsim/quant"
)

// BenchmarkMulMat measures the fast mode on a realistic layer (a 14336×4096 FFN matrix
// of Q4_K, Q6_K, Q8_0, IQ4_XS and Q4_0) at batch 1 and 8 (the largest batch ggml sends to
// mul_mat_vec_q) and reports int8 multiply-accumulates per second (N·K·M per op) and
// getrusage CPU seconds per op (steadier than wall time on a shared machine).
func BenchmarkMulMat(b *testing.B) {
	dev := h200(b)
	for _, tc := range []struct {
		ty      quant.Type
		n, k, m int
	}{
		{quant.Q4_K, 14336, 4096, 1},
		{quant.Q4_K, 14336, 4096, 8},
		{quant.Q6_K, 14336, 4096, 1},
		{quant.Q6_K, 14336, 4096, 8},
		{quant.Q8_0, 14336, 4096, 1},
		{quant.Q8_0, 14336, 4096, 8},
		{quant.IQ4_XS, 14336, 4096, 1},
		{quant.IQ4_XS, 14336, 4096, 8},
		{quant.Q4_0, 14336, 4096, 1},
		{quant.Q4_0, 14336, 4096, 8},
	} {
		b.Run(fmt.Sprintf("type=%v/n=%d/k=%d/m=%d", tc.ty, tc.n, tc.k, tc.m), func(b *testing.B) {
			rng := rand.New(rand.NewPCG(7, 8))
			rs, _ := tc.ty.RowSize(int64(tc.k))
			x := make([]byte, int(rs)*tc.n)
			// A few distinct reference-quantized rows repeated (quantizing 14336 rows
			// would dominate the set-up).
			proto, _ := weights(b, tc.ty, tc.k, 16, rng)
			for r := 0; r < tc.n; r++ {
				copy(x[r*int(rs):], proto[(r%16)*int(rs):(r%16+1)*int(rs)])
			}
			y := acts(tc.k, tc.m, rng)
			cpu0 := cpuSeconds()
			b.ResetTimer()
			for b.Loop() {
				if _, err := MulMat(dev, tc.ty, x, tc.k, tc.n, y, tc.m); err != nil {
					b.Fatal(err)
				}
			}
			macs := float64(tc.n) * float64(tc.k) * float64(tc.m)
			b.ReportMetric(macs*float64(b.N)/b.Elapsed().Seconds(), "MAC/s")
			b.ReportMetric((cpuSeconds()-cpu0)/float64(b.N), "cpu-s/op")
		})
	}
}
