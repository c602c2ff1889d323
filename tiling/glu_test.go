package tiling

import (
	"testing"

	"github.com/ggsim/ggsim/quant"
	"github.com/ggsim/ggsim/sim"
)

func TestFuseGLU(t *testing.T) {
	h200, err := sim.Lookup("H200")
	if err != nil {
		t.Fatal(err)
	}
	pascal := h200
	pascal.CC = sim.CCPascal
	for _, c := range []struct {
		dev  sim.Device
		t    quant.Type
		s    Shape
		b1   int64
		want bool
	}{
		{h200, quant.Q4_K, Shape{K: 256, N: 8, M: 1}, 0, true},
		{h200, quant.IQ1_M, Shape{K: 256, N: 8, M: 1}, 0, true},
		{h200, quant.Q4_K, Shape{K: 256, N: 8, M: 2}, 0, false},           // two columns
		{h200, quant.F16, Shape{K: 256, N: 8, M: 1}, 0, false},            // mul_mat_vec_f, not modelled
		{pascal, quant.Q4_K, Shape{K: 256, N: 8, M: 1}, 0, false},         // Pascal
		{h200, quant.Q8_0, Shape{K: 32, N: 8, M: 1, Experts: 4}, 8, true}, // one token, B1 = 8
		{h200, quant.Q8_0, Shape{K: 32, N: 8, M: 1, Experts: 16}, 9, false},
		{h200, quant.Q8_0, Shape{K: 32, N: 8, M: 2, Experts: 4}, 1, false}, // two tokens
	} {
		got, why := FuseGLU(c.dev, c.t, c.s, c.b1)
		if got != c.want || why == "" {
			t.Errorf("cc %d %v %+v B1=%d: %v (%s), want %v", c.dev.CC, c.t, c.s, c.b1, got, why, c.want)
		}
	}
}
