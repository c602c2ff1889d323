package quant

import (
	"fmt"
	"sync"
)

// Codec holds the row functions of one block type. Each type's file registers its codec
// in an init function; a nil function means ggml has none (or ggsim does not model it).
type Codec struct {
	// Dequantize writes len(dst) values decoded from the whole blocks in src, bit-exact
	// with ggml's dequantize_row_* on x86-64. len(dst) is a multiple of the block size and
	// len(src) is exactly the row size (callers check; see DequantizeRow).
	Dequantize func(src []byte, dst []float32)
	// QuantizeRef writes the blocks for len(src) values, byte-exact with ggml's
	// quantize_row_*_ref (= ggml_quantize_chunk without an importance matrix).
	QuantizeRef func(src []float32, dst []byte)
	// Kernel constants as the CUDA kernels use them (ggml-common.h): QR values per
	// byte-lane position and QI 32-bit ints of quant data per block.
	QR, QI int
}

var (
	codecMu sync.RWMutex
	codecs  = map[Type]Codec{}
)

// register installs the codec of t. It panics on a duplicate: that is a programming error.
func register(t Type, c Codec) {
	codecMu.Lock()
	defer codecMu.Unlock()
	if _, dup := codecs[t]; dup {
		panic(fmt.Sprintf("quant: codec for %v registered twice", t))
	}
	codecs[t] = c
}

// CodecOf returns the codec of t, or an error naming the type if ggsim has none.
func CodecOf(t Type) (Codec, error) {
	codecMu.RLock()
	c, ok := codecs[t]
	codecMu.RUnlock()
	if !ok {
		if !t.Valid() {
			return Codec{}, fmt.Errorf("quant: %v is not a ggml type", t)
		}
		return Codec{}, fmt.Errorf("quant: type %v is not supported by ggsim", t)
	}
	return c, nil
}

// DequantizeRow decodes n = len(dst) values of type t from src. It returns an error if the
// type is unsupported or the lengths do not describe whole blocks exactly.
func DequantizeRow(t Type, src []byte, dst []float32) error {
	c, err := CodecOf(t)
	if err != nil {
		return err
	}
	if c.Dequantize == nil {
		return fmt.Errorf("quant: ggsim cannot dequantize %v", t)
	}
	rs, err := t.RowSize(int64(len(dst)))
	if err != nil {
		return err
	}
	if int64(len(src)) != rs {
		return fmt.Errorf("quant: %d values of %v need %d bytes, have %d", len(dst), t, rs, len(src))
	}
	c.Dequantize(src, dst)
	return nil
}

// QuantizeRowRef encodes src with ggml's reference quantizer of t into dst.
func QuantizeRowRef(t Type, src []float32, dst []byte) error {
	c, err := CodecOf(t)
	if err != nil {
		return err
	}
	if c.QuantizeRef == nil {
		return fmt.Errorf("quant: ggsim has no reference quantizer for %v", t)
	}
	rs, err := t.RowSize(int64(len(src)))
	if err != nil {
		return err
	}
	if int64(len(dst)) != rs {
		return fmt.Errorf("quant: %d values of %v need %d bytes, have %d", len(src), t, rs, len(dst))
	}
	c.QuantizeRef(src, dst)
	return nil
}
