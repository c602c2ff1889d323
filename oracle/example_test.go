package oracle_test

import (
	"fmt"
	"math"

	"github.com/ggsim/ggsim"
	"github.com/ggsim/ggsim/oracle"
	"github.com/ggsim/ggsim/quant"
	"github.com/ggsim/ggsim/sim"
)

// Example judges an implementation's output, as the verifier does, in two parts: the
// bits against the expected bits (here the simulator's, which equal the H200's), and
// every element against the fp64 truth within its bound. A result one unit in the last
// place off is caught by the bits only; one wrong by a factor of 1.5 is caught by the
// fp64 bound too, which needs no expected bits (a kernel deterministic and wrong).
func Example() {
	dev, _ := sim.Lookup("H200")
	const K, N, M = 1024, 16, 4
	rs, _ := quant.Q4_K.RowSize(K)
	a := make([]byte, N*rs)
	x := make([]float32, K)
	for i := 0; i < N; i++ {
		for k := range x {
			x[k] = float32(math.Sin(float64(i*K+k))) * 0.05
		}
		if err := quant.QuantizeRowRef(quant.Q4_K, x, a[i*int(rs):(i+1)*int(rs)]); err != nil {
			fmt.Println(err)
			return
		}
	}
	b := make([]float32, K*M)
	for k := range b {
		b[k] = float32(math.Cos(float64(k)))
	}
	want, err := ggsim.MulMat(dev, ggsim.Weights{Type: quant.Q4_K, K: K, N: N, Data: a}, b, M)
	if err != nil {
		fmt.Println(err)
		return
	}
	ref, err := oracle.MulMatRef(quant.Q4_K, a, K, N, b, M)
	if err != nil {
		fmt.Println(err)
		return
	}

	judge := func(what string, got []float32) {
		c := oracle.CompareBits(got, want.Out)
		outside, _ := ref.WithinBound(got)
		fmt.Printf("%-20s bit-exact %-5v differing %2d, outside the fp64 bound %2d\n", what, c.BitExact(), c.Differing, outside)
	}
	judge("the simulator:", want.Out)
	off := append([]float32(nil), want.Out...)
	off[5] = math.Float32frombits(math.Float32bits(off[5]) + 1)
	judge("one ulp off:", off)
	scaled := append([]float32(nil), want.Out...)
	for i := range scaled {
		scaled[i] *= 1.5
	}
	judge("every element x1.5:", scaled)
	// Output:
	// the simulator:       bit-exact true  differing  0, outside the fp64 bound  0
	// one ulp off:         bit-exact false differing  1, outside the fp64 bound  0
	// every element x1.5:  bit-exact false differing 64, outside the fp64 bound 60
}
