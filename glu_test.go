package ggsim

import (
	"errors"
	"math"
	"testing"

	"github.com/ggsim/ggsim/gguf/golden"
	"github.com/ggsim/ggsim/quant"
	"github.com/ggsim/ggsim/sim"
	"github.com/ggsim/ggsim/sim/glu"
)

// Every GLU case of the committed golden slice gives the H200's bits both fused and
// unfused (the capture found the same bits with GGML_CUDA_DISABLE_FUSION=1).
func TestGLUGolden(t *testing.T) {
	f, err := golden.Open("testdata/golden/ggml-h200-dev-glu.slice.gguf")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	dev, err := sim.Lookup("H200")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for i := range f.Cases {
		c := &f.Cases[i]
		if c.Err != nil || !c.Op.IsGLU() {
			continue
		}
		n++
		src := make([][]byte, len(c.Src))
		for k, name := range c.Src {
			tn, err := f.Tensor(name)
			if err != nil {
				t.Fatal(err)
			}
			src[k] = tn.Data
		}
		bt, _ := f.Tensor(c.Src[2])
		b, err := bt.F32()
		if err != nil {
			t.Fatal(err)
		}
		dt, _ := f.Tensor(c.Dst)
		want, err := dt.F32()
		if err != nil {
			t.Fatal(err)
		}
		s := c.Shape
		g := glu.Spec{Op: glu.Op(c.GLU), Alpha: c.GLUAlpha, Limit: c.GLULimit}
		var outs [2][]float32
		for k, allowed := range []bool{true, false} {
			gate := Weights{Type: c.WeightType, K: int(s.K), N: int(s.N), E: int(s.E), Data: src[0]}
			up := gate
			up.Data = src[1]
			var r Result
			if c.Op.IsID() {
				it, _ := f.Tensor(c.Src[3])
				ids, ierr := it.I32()
				if ierr != nil {
					t.Fatal(ierr)
				}
				r, err = MulMatIDGLU(dev, gate, up, b, int(s.B1), int(s.T), ids, int(s.U), g, allowed)
			} else {
				r, err = MulMatGLU(dev, gate, up, b, int(s.M), g, allowed)
			}
			if err != nil {
				t.Fatalf("case %d %v fusion %v: %v", c.Index, g, allowed, err)
			}
			outs[k] = r.Out
		}
		for k, allowed := range []bool{true, false} {
			for j, w := range want {
				if math.Float32bits(outs[k][j]) != math.Float32bits(w) {
					t.Errorf("case %d %s %v %v fusion allowed %v: element %d is %#08x, golden %#08x",
						c.Index, c.Op, c.WeightType, g, allowed, j, math.Float32bits(outs[k][j]), math.Float32bits(w))
					break
				}
			}
		}
	}
	if n == 0 {
		t.Fatal("no GLU case in the slice")
	}
}

// A GLU ggsim does not model is refused before any matmul runs, with an error that
// matches errors.ErrUnsupported; mismatched gate and up weights are a plain error.
func TestGLURefusals(t *testing.T) {
	dev, _ := sim.Lookup("H200")
	w := Weights{Type: quant.Q8_0, K: 32, N: 1, Data: make([]byte, 34)}
	if _, err := MulMatGLU(dev, w, w, make([]float32, 32), 1, glu.Spec{Op: "reglu"}, true); !errors.Is(err, errors.ErrUnsupported) {
		t.Errorf("reglu: %v, want an error matching errors.ErrUnsupported", err)
	}
	up := w
	up.N, up.Data = 2, make([]byte, 68)
	if _, err := MulMatGLU(dev, w, up, make([]float32, 32), 1, glu.Spec{Op: glu.SwiGLU}, true); err == nil || errors.Is(err, errors.ErrUnsupported) {
		t.Errorf("gate N=1, up N=2: %v, want a plain error", err)
	}
}
