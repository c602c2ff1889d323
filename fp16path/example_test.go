package fp16path_test

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/ggsim/ggsim/fp16path"
	"github.com/ggsim/ggsim/quant"
)

// Three matmuls that share src1 (attention's Q, K and V) through one Cache: src1 is
// converted once; the bits are those of uncached MulMat.
func ExampleCache() {
	r := rand.New(rand.NewPCG(1, 2))
	const K, N = 512, 4
	y := make([]float32, K)
	for k := range y {
		y[k] = float32(r.NormFloat64())
	}
	var c fp16path.Cache
	same := true
	for i := 0; i < 3; i++ {
		w := make([]float32, K*N)
		for k := range w {
			w[k] = float32(0.02 * r.NormFloat64())
		}
		x := make([]byte, 0, 288*N) // a Q4_K row of 512 values is two 144-byte blocks
		for row := 0; row < N; row++ {
			b := make([]byte, 288)
			if err := quant.QuantizeRowRef(quant.Q4_K, w[row*K:(row+1)*K], b); err != nil {
				fmt.Println(err)
				return
			}
			x = append(x, b...)
		}
		got, err := c.MulMat(quant.Q4_K, x, K, N, y, 1, nil)
		if err != nil {
			fmt.Println(err)
			return
		}
		want, _ := fp16path.MulMat(quant.Q4_K, x, K, N, y, 1, nil)
		for i := range got {
			same = same && math.Float32bits(got[i]) == math.Float32bits(want[i])
		}
	}
	fmt.Printf("conversions %d, hits %d, same bits as uncached: %v\n", c.Conversions(), c.Hits(), same)
	// Output: conversions 1, hits 2, same bits as uncached: true
}

// The note's environment variables as Options.
func ExampleOptionsFromEnv() {
	env := map[string]string{"GGML_CUDA_GP100_NO_ACT_CACHE": "1", "GP100_RMAP": "5120:2,17408:4"}
	o, err := fp16path.OptionsFromEnv(func(k string) string { return env[k] })
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(o.NoActCache, o.RowsPerWarpFor(5120), o.RowsPerWarpFor(17408), o.RowsPerWarpFor(4096))
	// Output: true 2 4 1
}

// The fused gate/up/SWIGLU needs expf under -use_fast_math (MUFU.EX2), which is not
// measured yet: the call says so with an error wrapping errors.ErrUnsupported.
func ExampleMulMatSwiGLU() {
	x := make([]byte, 144) // one Q4_K row with d = 1, dmin = 0 and small scales and codes
	x[1] = 0x3c
	for i := 4; i < 8; i++ {
		x[i] = 1
	}
	for i := 16; i < 144; i++ {
		x[i] = 0x11
	}
	y := make([]float32, 256)
	for i := range y {
		y[i] = 0.01
	}
	out, err := fp16path.MulMatSwiGLU(quant.Q4_K, x, x, 256, 1, y, 1, nil)
	fmt.Println(out, err)
	// Output: [1.2825898] <nil>
}
