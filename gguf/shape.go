package gguf

import (
	"fmt"
	"math"
	"strings"

	"github.com/ggsim/ggsim/quant"
)

// The shape rules of a tensor, as ggml's reader applies them (src/gguf.cpp,
// gguf_init_from_file_impl, at d99724f2b141), in one place for Read and Writer.
// shape_test.go holds one table row per rule, each citing its line of gguf.cpp.

// Limits of ggml's reader on metadata (src/gguf.cpp: GGUF_MAX_STRING_LENGTH and
// GGUF_MAX_ARRAY_ELEMENTS).
const (
	MaxStringLen = 1 << 30 // the longest string ggml reads, in bytes
	MaxArrayLen  = 1 << 30 // the most elements of an array ggml reads
)

// ggmlName is the name ggml gives a tensor called name in the file: ggml_set_name copies
// it into a C string, so it ends at the first NUL byte.
func ggmlName(name string) string {
	if i := strings.IndexByte(name, 0); i >= 0 {
		return name[:i]
	}
	return name
}

// checkNameLen: a tensor name of MaxNameLen+1 (GGML_MAX_NAME) bytes or more is refused;
// the length is the stored one, NUL bytes included.
func checkNameLen(name string) error {
	if len(name) > MaxNameLen {
		return fmt.Errorf("tensor name of %d bytes is longer than ggml's limit of %d", len(name), MaxNameLen)
	}
	return nil
}

// numElements returns ne[0]·ne[1]·ne[2]·ne[3] of the non-negative dims (at most MaxDims,
// the rest taken as 1), or an error where ggml refuses the shape as too many elements.
// ggml's test is stricter than overflow: it refuses when INT64_MAX/ne[k] <= the product of
// ne[0..k-1] for k = 1, 2, 3, so a product within a factor ne[k] of INT64_MAX is refused
// too. It skips the test when the product is 0: a tensor with a zero dimension has no
// elements whatever its other dimensions.
//
// ggml guards the test with ggml_nelements > 0, a product that wraps in int64; where it
// wraps to 0 or below without a zero dimension (say [2^32, 2^32]) ggml skips the test on
// an overflowed value (undefined behaviour in C). The test here does not wrap: such a
// shape is refused.
var prefixName = [MaxDims]string{"", "ne[0]", "ne[0]·ne[1]", "ne[0]·ne[1]·ne[2]"}

func numElements(dims []int64) (int64, error) {
	ne := [MaxDims]int64{1, 1, 1, 1}
	copy(ne[:], dims)
	for _, d := range ne {
		if d == 0 {
			return 0, nil
		}
	}
	p := ne[0]
	for k := 1; k < MaxDims; k++ {
		if math.MaxInt64/ne[k] <= p {
			return 0, fmt.Errorf("shape %v has too many elements: INT64_MAX/ne[%d] <= %s (ggml's test)", dims, k, prefixName[k])
		}
		p *= ne[k]
	}
	return p, nil
}

// typeError says why ggml refuses type id typ, or is nil: an id outside ggml's enum, or a
// type ggml removed (its block size is 0 in ggml.c's type_traits, which the block-size
// test of ggml's reader refuses).
func typeError(typ quant.Type) error {
	if typ >= quant.TypeCount {
		return fmt.Errorf("unknown ggml type %d (ggml defines 0..%d)", uint32(typ), quant.TypeCount-1)
	}
	if !typ.Valid() {
		return fmt.Errorf("ggml type %d (%v) was removed from ggml", uint32(typ), typ)
	}
	return nil
}

// tensorBytes returns the size in bytes of nel elements of the valid type typ whose first
// dimension is ne0, or an error where ggml refuses it: ne0 not a multiple of the block
// size, or a byte size that does not fit. ggml allows byte sizes up to SIZE_MAX (2^64-1);
// here they must fit an int64, as every file's size does, so a larger tensor, which ggml
// would refuse later when its data does not fit in the file, is refused here.
func tensorBytes(nel, ne0 int64, typ quant.Type) (int64, error) {
	bs, ts := int64(typ.BlockSize()), int64(typ.TypeSize())
	if ne0%bs != 0 {
		return 0, fmt.Errorf("ne[0] = %d is not a multiple of the %v block size %d", ne0, typ, bs)
	}
	if nel/bs > math.MaxInt64/ts {
		return 0, fmt.Errorf("%d elements of %v are more than 2^63-1 bytes", nel, typ)
	}
	return nel / bs * ts, nil
}

// paddedSize is size rounded up to the alignment a (a power of two), as GGML_PAD, or false
// if that does not fit an int64.
func paddedSize(size, a int64) (int64, bool) {
	if size > math.MaxInt64-(a-1) {
		return 0, false
	}
	return (size + a - 1) &^ (a - 1), true
}
