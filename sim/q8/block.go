package q8

import "github.com/ggsim/ggsim/f16"

// Block is one block_q8_1 (ggml-common.h): 32 int8 quants with the half2 header
// {d, s}. As the CUDA quantize_q8_1 writes it, s is f2h of the float32 sum of the 32
// unquantized (FTZ) activations, not d times the sum of the quants (docs/arithmetic.md,
// "Activation quantizers").
// The wire form is 36 bytes: d, s (little-endian binary16), then qs.
type Block struct {
	D, S f16.Half
	Qs   [32]int8
}

// BlockBytes is sizeof(block_q8_1).
const BlockBytes = 36

// Int returns the i-th 32-bit little-endian word of qs (get_int_b4 on qs), i in 0..7.
func (b *Block) Int(i int) int32 {
	q := b.Qs[4*i : 4*i+4]
	return int32(uint32(uint8(q[0])) | uint32(uint8(q[1]))<<8 | uint32(uint8(q[2]))<<16 | uint32(uint8(q[3]))<<24)
}

// AppendBytes appends the 36-byte wire form of b.
func (b *Block) AppendBytes(dst []byte) []byte {
	dst = append(dst, byte(b.D), byte(b.D>>8), byte(b.S), byte(b.S>>8))
	for _, q := range b.Qs {
		dst = append(dst, byte(q))
	}
	return dst
}
