package mmq_test

import (
	"fmt"
	"math"

	"github.com/ggsim/ggsim/quant"
	"github.com/ggsim/ggsim/sim"
	"github.com/ggsim/ggsim/sim/mmq"
)

// MulMat of a Q6_K weight matrix (N=4 rows of K=512) by M=9 activation columns, the
// smallest batch that ggml sends to mul_mat_q, as an H200 computes it.
func ExampleMulMat_q6K() {
	const K, N, M = 512, 4, 9
	w := make([]float32, K*N)
	for i := range w {
		w[i] = float32(math.Sin(float64(i))) * 0.05
	}
	b := make([]float32, K*M)
	for i := range b {
		b[i] = float32(math.Cos(float64(3 * i)))
	}
	rs := K / quant.Q6_K.BlockSize() * quant.Q6_K.TypeSize()
	a := make([]byte, rs*N)
	for i := 0; i < N; i++ {
		if err := quant.QuantizeRowRef(quant.Q6_K, w[i*K:(i+1)*K], a[i*rs:(i+1)*rs]); err != nil {
			fmt.Println(err)
			return
		}
	}
	dev, err := sim.Lookup("H200")
	if err != nil {
		fmt.Println(err)
		return
	}
	p, err := mmq.MakePlan(dev, quant.Q6_K, K, N, M)
	if err != nil {
		fmt.Println(err)
		return
	}
	dst, err := mmq.MulMat(dev, quant.Q6_K, a, K, N, b, M, p)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%d outputs, tile %d×%d, dst[0] = %.6f\n", len(dst), p.I, p.J, dst[0])
	// Output: 36 outputs, tile 128×16, dst[0] = -0.001273
}
