package gguf_test

import (
	"bytes"
	"fmt"

	"github.com/ggsim/ggsim/gguf"
	"github.com/ggsim/ggsim/quant"
)

// Example writes a small GGUF file in memory (one Q8_0 tensor of 2 rows of 64 values and
// a metadata key), then reads it back as a model file is read: the metadata, the tensor's
// description and its bytes, which quant decodes.
func Example() {
	// A tensor to store: ggml's reference quantization of 2 rows.
	const K, N = 64, 2
	rs, _ := quant.Q8_0.RowSize(K)
	data := make([]byte, N*rs)
	x := make([]float32, K)
	for row := 0; row < N; row++ {
		for i := range x {
			x[i] = float32(row+1) * float32(i) / K
		}
		if err := quant.QuantizeRowRef(quant.Q8_0, x, data[row*int(rs):(row+1)*int(rs)]); err != nil {
			fmt.Println(err)
			return
		}
	}
	w := gguf.NewWriter()
	if err := w.Add("general.name", gguf.ScalarOf("example")); err != nil {
		fmt.Println(err)
		return
	}
	if err := w.AddTensor("blk.0.ffn_down.weight", quant.Q8_0, []int64{K, N}, data); err != nil {
		fmt.Println(err)
		return
	}
	var buf bytes.Buffer
	if _, err := w.WriteTo(&buf); err != nil {
		fmt.Println(err)
		return
	}

	// Read it (gguf.Open does the same for a file on disk).
	f, err := gguf.Read(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	if err != nil {
		fmt.Println(err)
		return
	}
	name, err := gguf.Get[string](f, "general.name")
	if err != nil {
		fmt.Println(err)
		return
	}
	ti, ok := f.Tensor("blk.0.ffn_down.weight")
	if !ok {
		fmt.Println("no such tensor")
		return
	}
	raw, err := f.TensorData(ti.Name)
	if err != nil {
		fmt.Println(err)
		return
	}
	ne := ti.NE()
	row1 := make([]float32, ne[0])
	if err := quant.DequantizeRow(ti.Type, raw[rs:2*rs], row1); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("GGUF v%d %q: %d tensor(s)\n", f.Version, name, len(f.Tensors))
	fmt.Printf("%s: %v %v, %d bytes\n", ti.Name, ti.Type, ti.Dims, ti.Size)
	fmt.Printf("row 1: %v %v ... %v\n", row1[0], row1[1], row1[K-1])
	// Output:
	// GGUF v3 "example": 1 tensor(s)
	// blk.0.ffn_down.weight: q8_0 [64 2], 136 bytes
	// row 1: 0 0.030517578 ... 1.9688721
}
