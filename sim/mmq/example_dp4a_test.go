package mmq_test

import (
	"errors"
	"fmt"

	"github.com/ggsim/ggsim/quant"
	"github.com/ggsim/ggsim/sim"
	"github.com/ggsim/ggsim/sim/mmq"
)

// MulMatDP4A computes what a ggml build without int8 MMA (Pascal, Volta, or a build
// without TURING_MMA_AVAILABLE) returns for a quantized matmul, with the same stream-K
// plan as the MMA path.
func ExampleMulMatDP4A() {
	dev, _ := sim.Lookup("H200")
	const K, N, M = 256, 2, 9
	w := make([]float32, K)
	for k := range w {
		w[k] = float32(k%7) - 3
	}
	a := make([]byte, N*K/32*quant.Q8_0.TypeSize())
	for i := 0; i < N; i++ {
		row := a[i*len(a)/N : (i+1)*len(a)/N]
		if err := quant.QuantizeRowRef(quant.Q8_0, w, row); err != nil {
			panic(err)
		}
	}
	b := make([]float32, K*M)
	for k := range b {
		b[k] = 0.25
	}
	p, _ := mmq.MakePlan(dev, quant.Q8_0, K, N, M)
	dst, err := mmq.MulMatDP4A(dev, quant.Q8_0, a, K, N, b, M, p)
	fmt.Println(dst[0], dst[N*M-1], err) // the exact product is -1.5

	_, err = mmq.MulMatDP4A(dev, quant.BF16, make([]byte, 2*K), K, 1, make([]float32, K), 1, p)
	fmt.Println(errors.Is(err, errors.ErrUnsupported))
	// Output:
	// -1.4999084 -1.4999084 <nil>
	// true
}
