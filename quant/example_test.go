package quant_test

import (
	"fmt"

	"github.com/ggsim/ggsim/quant"
)

// Example quantizes a row of 64 values to Q8_0 with ggml's reference quantizer
// (quantize_row_q8_0_ref) and decodes it back (dequantize_row_q8_0): two blocks of 32,
// each a binary16 scale d = amax/127 and 32 int8 quants, so each value comes back to
// within d/2.
func Example() {
	const k = 64
	x := make([]float32, k)
	for i := range x {
		x[i] = float32(i-32) / 16 // -2 .. 1.9375
	}
	rs, err := quant.Q8_0.RowSize(k)
	if err != nil {
		fmt.Println(err)
		return
	}
	row := make([]byte, rs)
	if err := quant.QuantizeRowRef(quant.Q8_0, x, row); err != nil {
		fmt.Println(err)
		return
	}
	y := make([]float32, k)
	if err := quant.DequantizeRow(quant.Q8_0, row, y); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%d values in %d bytes (%d blocks of %d bytes)\n", k, rs, k/quant.Q8_0.BlockSize(), quant.Q8_0.TypeSize())
	for _, i := range []int{0, 1, 33, 63} {
		fmt.Printf("x[%d] = %-8v -> %v\n", i, x[i], y[i])
	}
	// Output:
	// 64 values in 68 bytes (2 blocks of 34 bytes)
	// x[0] = -2       -> -1.9998779
	// x[1] = -1.9375  -> -1.9368896
	// x[33] = 0.0625   -> 0.061035156
	// x[63] = 1.9375   -> 1.9378662
}
