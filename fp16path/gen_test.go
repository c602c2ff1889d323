package fp16path_test

import (
	"math"
	"math/rand/v2"

	"github.com/ggsim/ggsim/quant"
)

// realistic draws a layer-like weight matrix (N rows of K values) and one activation
// column, heavy-tailed with outlier channels, as transformer layers have them:
//
//   - weights: Student-t with 5 degrees of freedom, a per-row scale uniform in
//     [0.01, 0.03], and 1% of the input channels (columns k) scaled by 6;
//   - activations: Student-t with 3 degrees of freedom, and 0.5% of the channels scaled
//     by 40 (the "massive activations" of LLM residual streams), so most 32-value blocks
//     of a q8_1 quantization hold one large value and 31 small ones.
//
// The weights are quantized to t with ggml's reference quantizer.
func realistic(r *rand.Rand, t quant.Type, K, N int) (x []byte, y []float32) {
	outW := make([]float64, K)
	outY := make([]float64, K)
	for k := range outW {
		outW[k], outY[k] = 1, 1
		if r.Float64() < 0.01 {
			outW[k] = 6
		}
		if r.Float64() < 0.005 {
			outY[k] = 40
		}
	}
	rs, err := t.RowSize(int64(K))
	if err != nil {
		panic(err)
	}
	x = make([]byte, int(rs)*N)
	row := make([]float32, K)
	for i := 0; i < N; i++ {
		s := 0.02 * (0.5 + r.Float64()) // no math.Exp: its assembly differs between GOARCHes
		for k := range row {
			row[k] = float32(s * outW[k] * studentT(r, 5))
		}
		if err := quant.QuantizeRowRef(t, row, x[i*int(rs):(i+1)*int(rs)]); err != nil {
			panic(err)
		}
	}
	y = make([]float32, K)
	for k := range y {
		y[k] = float32(outY[k] * studentT(r, 3))
	}
	return x, y
}

// studentT draws a Student-t variate with nu degrees of freedom.
func studentT(r *rand.Rand, nu int) float64 {
	var chi float64
	for i := 0; i < nu; i++ {
		z := r.NormFloat64()
		chi += float64(z * z) // no fused multiply-add: the same draw on every GOARCH/GOAMD64
	}
	return r.NormFloat64() / math.Sqrt(chi/float64(nu))
}
