package glu

import (
	"errors"
	"math"
	"testing"
)

// An unknown GLU is refused with ErrUnsupported, bad lengths with a plain error.
func TestRefusals(t *testing.T) {
	out := make([]float32, 1)
	for name, err := range map[string]error{
		"fused":   Fused(Spec{Op: "reglu"}, []float32{1}, []float32{1}, out),
		"unfused": Unfused(Spec{Op: "reglu"}, []float32{1}, []float32{1}, out),
		"check":   Check(Spec{Op: "geglu_quick"}),
	} {
		if !errors.Is(err, errors.ErrUnsupported) || !errors.Is(err, ErrUnsupported) {
			t.Errorf("%s of an unmodelled GLU: %v, want ErrUnsupported", name, err)
		}
	}
	if err := Fused(Spec{Op: SwiGLU}, []float32{1, 2}, []float32{1}, out); err == nil || errors.Is(err, errors.ErrUnsupported) {
		t.Errorf("length mismatch: %v, want a plain error", err)
	}
}

func one(t *testing.T, fused bool, s Spec, g, u float32) float32 {
	t.Helper()
	var o [1]float32
	f := Unfused
	if fused {
		f = Fused
	}
	if err := f(s, []float32{g}, []float32{u}, o[:]); err != nil {
		t.Fatal(err)
	}
	return o[0]
}

// ref is the GLU in float64 (the textbook formulas, not the GPU's order).
func ref(s Spec, g, u float64) float64 {
	switch s.Op {
	case SwiGLU:
		return g / (1 + math.Exp(-g)) * u
	case GeGLU:
		return 0.5 * g * (1 + math.Tanh(math.Sqrt(2/math.Pi)*g*(1+0.044715*g*g))) * u
	}
	a, l := float64(s.Alpha), float64(s.Limit)
	g = math.Min(g, l)
	u = math.Max(math.Min(u, l), -l)
	return g / (1 + math.Exp(-g*a)) * (1 + u)
}

// The gate is the first operand: both paths follow the textbook GLUs of (gate, up) to
// the accuracy of the fast-math functions (tanh.approx: about 2^-11 relative), and agree
// with each other for ggml's default swiglu_oai parameters.
func TestGateFirst(t *testing.T) {
	for _, s := range []Spec{{Op: SwiGLU}, {Op: GeGLU}, {Op: SwiGLUOAI, Alpha: 1.702, Limit: 7}} {
		for _, g := range []float32{-30, -5, -1.5, -0.25, 0.1, 0.7, 2, 6.5, 9, 40} {
			for _, u := range []float32{-12, -1, 0.3, 3, 8} {
				f, uf := one(t, true, s, g, u), one(t, false, s, g, u)
				want := ref(s, float64(g), float64(u))
				if d := math.Abs(float64(f) - want); d > 2e-3*math.Abs(want)+1e-6*math.Abs(float64(g)*float64(u)) {
					t.Errorf("%v gate %g up %g: %g, float64 %g", s, g, u, f, want)
				}
				if f != uf {
					t.Errorf("%v gate %g up %g: fused %g, unfused %g", s, g, u, f, uf)
				}
			}
		}
	}
}

// The fused epilogue adds the zero bias (FADD with +0.0f): a -0 gate becomes +0 there
// and not in the unfused kernel.
func TestFusedBiasAddClearsNegativeZero(t *testing.T) {
	negZero := float32(math.Copysign(0, -1))
	s := Spec{Op: SwiGLU}
	if f, u := one(t, true, s, negZero, 5), one(t, false, s, negZero, 5); math.Float32bits(f) != 0 || math.Float32bits(u) != 0x80000000 {
		t.Errorf("silu(-0)*5: fused %#x, unfused %#x; want +0 and -0", math.Float32bits(f), math.Float32bits(u))
	}
}

// The fused swiglu_oai ignores the op's alpha and limit (ggml calls it with its
// defaults); the unfused kernel uses them.
func TestFusedSwiGLUOAIUsesDefaults(t *testing.T) {
	custom := Spec{Op: SwiGLUOAI, Alpha: 0.5, Limit: 2}
	dflt := Spec{Op: SwiGLUOAI, Alpha: 1.702, Limit: 7}
	g, u := float32(3.25), float32(5.5)
	if one(t, true, custom, g, u) != one(t, false, dflt, g, u) {
		t.Error("fused swiglu_oai with alpha 0.5, limit 2 differs from the unfused one with 1.702, 7")
	}
	if one(t, false, custom, g, u) == one(t, false, dflt, g, u) {
		t.Error("unfused swiglu_oai ignores its parameters")
	}
}

// Saturation: expf of a large argument overflows to +Inf and silu(x) = x·rcp(Inf) = -0
// for very negative x (no NaN); swiglu_oai clamps the gate from above and the up value
// both ways.
func TestSaturationAndClamps(t *testing.T) {
	if v := one(t, false, Spec{Op: SwiGLU}, -200, 3); math.Float32bits(v) != 0x80000000 {
		t.Errorf("silu(-200)*3 = %g (%#x), want -0", v, math.Float32bits(v))
	}
	oai := Spec{Op: SwiGLUOAI, Alpha: 1.702, Limit: 7}
	if a, b := one(t, false, oai, 1e6, 1e6), one(t, false, oai, 7, 7); a != b {
		t.Errorf("swiglu_oai(1e6, 1e6) = %g, want swiglu_oai(7, 7) = %g", a, b)
	}
	if a, b := one(t, false, oai, 1, -50), one(t, false, oai, 1, -7); a != b {
		t.Errorf("up -50 gives %g, up -limit %g", a, b)
	}
}
