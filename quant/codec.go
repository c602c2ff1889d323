package quant

import (
	"fmt"
	"sync"

	"github.com/ggsim/ggsim/internal/errs"
)

// ErrUnsupported is wrapped by the errors that say ggsim does not model something for a
// valid ggml type: no codec, no dequantizer or no reference quantizer. It matches
// errors.ErrUnsupported. Invalid types and sizes are other errors (bad input).
var ErrUnsupported = errs.Unsupported("quant: not modelled")

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

// CodecOf returns the codec of t, or an error naming the type if ggsim has none (wrapping
// ErrUnsupported for a valid ggml type).
func CodecOf(t Type) (Codec, error) {
	codecMu.RLock()
	c, ok := codecs[t]
	codecMu.RUnlock()
	if !ok {
		if !t.Valid() {
			return Codec{}, fmt.Errorf("quant: %v is not a ggml type", t)
		}
		return Codec{}, fmt.Errorf("%w: type %v has no codec in ggsim", ErrUnsupported, t)
	}
	return c, nil
}

// DequantizeRow decodes n = len(dst) values of type t from src. It returns an error if the
// type is unsupported (wrapping ErrUnsupported) or the lengths do not describe whole
// blocks exactly.
func DequantizeRow(t Type, src []byte, dst []float32) error {
	c, err := CodecOf(t)
	if err != nil {
		return err
	}
	if c.Dequantize == nil {
		return fmt.Errorf("%w: ggsim cannot dequantize %v", ErrUnsupported, t)
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

// QuantizeRowRef encodes src with ggml's reference quantizer of t into dst. It returns an
// error wrapping ErrUnsupported if ggsim has no reference quantizer for t, and another
// error if t is not a ggml type or the lengths do not describe whole blocks exactly.
func QuantizeRowRef(t Type, src []float32, dst []byte) error {
	c, err := CodecOf(t)
	if err != nil {
		return err
	}
	if c.QuantizeRef == nil {
		return fmt.Errorf("%w: ggsim has no reference quantizer for %v", ErrUnsupported, t)
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
