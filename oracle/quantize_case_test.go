package oracle

import (
	"encoding/binary"
	"math"
	"testing"

	"github.com/ggsim/ggsim/gguf/golden"
	"github.com/ggsim/ggsim/quant"
)

func f32Tensor(name string, v []float32) *golden.Tensor {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return &golden.Tensor{Name: name, Type: quant.F32, Data: b}
}

// TestVerifyQuantizeStatus: a quantize case is UNSUPPORTED only where ggsim has no
// reference quantizer for its type; a case whose sizes do not fit (a corrupt golden file)
// is an ERROR, and a wrong byte a MISMATCH. (Every quantizer error used to be reported
// UNSUPPORTED.)
func TestVerifyQuantizeStatus(t *testing.T) {
	x := make([]float32, 64)
	for i := range x {
		x[i] = float32(i%13) - 6
	}
	good := make([]byte, 36) // 2 blocks of q4_0
	if err := quant.QuantizeRowRef(quant.Q4_0, x, good); err != nil {
		t.Fatal(err)
	}
	flipped := append([]byte(nil), good...)
	flipped[20] ^= 1
	for _, c := range []struct {
		what string
		typ  quant.Type
		k, r int64
		src  []float32
		dst  []byte
		want Status
	}{
		{"correct", quant.Q4_0, 64, 1, x, good, StatusBitExact},
		{"one bit flipped", quant.Q4_0, 64, 1, x, flipped, StatusMismatch},
		{"no reference quantizer (iq2_xxs)", quant.IQ2_XXS, 256, 1, make([]float32, 256), make([]byte, 66), StatusUnsupported},
		{"source shorter than the shape", quant.Q4_0, 64, 2, x, append(good, good...), StatusError},
		{"destination shorter than the shape", quant.Q4_0, 64, 1, x, good[:18], StatusError},
		{"K not a whole number of blocks", quant.Q4_0, 48, 1, x[:48], good[:27], StatusError},
		{"not a ggml type", quant.Type(200), 64, 1, x, good, StatusError},
	} {
		var r CaseResult
		cs := &golden.Case{Op: golden.OpQuantize, WeightType: c.typ, Shape: golden.Shape{K: c.k, R: c.r}}
		verifyQuantize(cs, f32Tensor("src", c.src), &golden.Tensor{Name: "dst", Type: c.typ, Data: c.dst}, &r)
		if r.Status != c.want {
			t.Errorf("%s: %s (%s), want %s", c.what, r.Status, r.Detail, c.want)
		}
	}
}
