package ggsim_test

import (
	"fmt"
	"math"

	"github.com/ggsim/ggsim"
	"github.com/ggsim/ggsim/quant"
	"github.com/ggsim/ggsim/sim"
)

// ExampleMulMat multiplies a 2×256 Q8_0 matrix by two columns on an H200: ggml
// dispatches MMVQ for 2 columns, and the result has the bits the GPU writes. With 9
// columns ggml dispatches MMQ, which ggsim does not simulate yet: the error wraps
// errors.ErrUnsupported.
func ExampleMulMat() {
	dev, err := sim.Lookup("H200")
	if err != nil {
		fmt.Println(err)
		return
	}
	const K, N = 256, 2
	rs, _ := quant.Q8_0.RowSize(K)
	w := ggsim.Weights{Type: quant.Q8_0, K: K, N: N, Data: make([]byte, N*rs)}
	x := make([]float32, K)
	for row := 0; row < N; row++ {
		for k := range x {
			x[k] = float32((k+row)%5-2) / 8
		}
		if err := quant.QuantizeRowRef(w.Type, x, w.Data[row*int(rs):(row+1)*int(rs)]); err != nil {
			fmt.Println(err)
			return
		}
	}
	const M = 2
	b := make([]float32, K*M)
	for i := range b {
		b[i] = float32(i%7-3) / 4
	}
	res, err := ggsim.MulMat(dev, w, b, M)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("kernel:", res.Decision.Kernel)
	for j := 0; j < M; j++ {
		for i := 0; i < N; i++ {
			v := res.Out[j*N+i]
			fmt.Printf("dst[%d][%d] = %v (%#08x)\n", j, i, v, math.Float32bits(v))
		}
	}

	r9, err := ggsim.MulMat(dev, w, make([]float32, K*9), 9)
	fmt.Println("9 columns:", r9.Decision.Kernel, err)
	// Output:
	// kernel: mmvq
	// dst[0][0] = -0.032476425 (0xbd050600)
	// dst[0][1] = -0.21995346 (0xbe613b7b)
	// dst[1][0] = 0.15500069 (0x3e1eb880)
	// dst[1][1] = 0.096196964 (0x3dc502ea)
	// 9 columns: mmq <nil>
}
