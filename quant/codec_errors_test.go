package quant

import (
	"errors"
	"testing"
)

// TestUnsupportedClassifies: only "ggsim does not model this valid type" wraps
// errors.ErrUnsupported; an invalid type and sizes that are not whole blocks are bad
// input and do not.
func TestUnsupportedClassifies(t *testing.T) {
	src := make([]float32, 256)
	for _, c := range []struct {
		what        string
		err         error
		unsupported bool
	}{
		{"no reference quantizer (iq2_xxs)", QuantizeRowRef(IQ2_XXS, src, make([]byte, 66)), true},
		{"no codec (f32)", QuantizeRowRef(F32, src, make([]byte, 1024)), true},
		{"not a ggml type", QuantizeRowRef(Type(200), src, make([]byte, 66)), false},
		{"not whole blocks", QuantizeRowRef(Q4_0, src[:48], make([]byte, 27)), false},
		{"wrong destination size", QuantizeRowRef(Q4_0, src, make([]byte, 143)), false},
		{"dequantize: wrong source size", DequantizeRow(Q4_0, make([]byte, 17), make([]float32, 32)), false},
		{"dequantize: no codec (f32)", DequantizeRow(F32, make([]byte, 128), make([]float32, 32)), true},
	} {
		if c.err == nil {
			t.Errorf("%s: no error", c.what)
			continue
		}
		if errors.Is(c.err, errors.ErrUnsupported) != c.unsupported || errors.Is(c.err, ErrUnsupported) != c.unsupported {
			t.Errorf("%s: %v: unsupported = %v, want %v", c.what, c.err, !c.unsupported, c.unsupported)
		}
	}
	if err := QuantizeRowRef(Q4_0, src, make([]byte, 144)); err != nil {
		t.Fatalf("valid call: %v", err)
	}
}
