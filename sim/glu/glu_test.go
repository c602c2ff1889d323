package glu

import (
	"errors"
	"math"
	"testing"
)

// standIn is NOT the hardware: Go's float64 exp and tanh rounded to float32. It lets the
// tests below check the structure of the epilogues (operand order, clamps, signed zeros,
// saturation); no bit of its results is a claim about the GPU.
var standIn = Math{
	Expf:  func(x float32) float32 { return float32(math.Exp(float64(x))) },
	Tanhf: func(x float32) float32 { return float32(math.Tanh(float64(x))) },
}

var specs = []Spec{{Op: SwiGLU}, {Op: GeGLU}, {Op: SwiGLUOAI, Alpha: 1.702, Limit: 7}}

// Without measured functions every GLU is refused with ErrUnsupported, never computed.
func TestUnmeasuredIsUnsupported(t *testing.T) {
	out := make([]float32, 1)
	for _, s := range append(specs, Spec{Op: "reglu"}) {
		for name, err := range map[string]error{
			"fused":   Fused(Math{}, s, []float32{1}, []float32{1}, out, false),
			"unfused": Unfused(Math{}, s, []float32{1}, []float32{1}, out),
		} {
			if !errors.Is(err, errors.ErrUnsupported) || !errors.Is(err, ErrUnsupported) {
				t.Errorf("%v %s without expf/tanhf: %v, want ErrUnsupported", s, name, err)
			}
		}
	}
	if m := Hardware(); m.Expf == nil {
		if err := Fused(m, specs[0], []float32{1}, []float32{1}, out, false); !errors.Is(err, errors.ErrUnsupported) {
			t.Errorf("Hardware() has no expf but swiglu gave %v", err)
		}
	}
	if err := Fused(standIn, specs[0], []float32{1, 2}, []float32{1}, out, false); err == nil || errors.Is(err, errors.ErrUnsupported) {
		t.Errorf("length mismatch: %v, want a plain error", err)
	}
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

// With the stand-in, both epilogues follow the textbook GLUs to float32 accuracy (a few
// ulps from fast-math division), take the gate first, and agree with each other.
func TestStructureAgainstFloat64(t *testing.T) {
	for _, s := range specs {
		for _, g := range []float32{-30, -5, -1.5, -0.25, 0.1, 0.7, 2, 6.5, 9, 40} {
			for _, u := range []float32{-12, -1, 0.3, 3, 8} {
				var f, uf [1]float32
				if err := Fused(standIn, s, []float32{g}, []float32{u}, f[:], false); err != nil {
					t.Fatal(err)
				}
				if err := Unfused(standIn, s, []float32{g}, []float32{u}, uf[:]); err != nil {
					t.Fatal(err)
				}
				want := ref(s, float64(g), float64(u))
				// float32 accuracy, plus the cancellation of 1 + tanhf(t) near -1 (gelu of a
				// very negative gate): an ulp of 1.0 times |gate*up|/2.
				if d := math.Abs(float64(f[0]) - want); d > 1e-5*math.Abs(want)+1.2e-7*math.Abs(float64(g)*float64(u)) {
					t.Errorf("%v gate %g up %g: fused %g, float64 %g", s, g, u, f[0], want)
				}
				if f[0] != uf[0] {
					t.Errorf("%v gate %g up %g: fused %g, unfused %g", s, g, u, f[0], uf[0])
				}
			}
		}
	}
}

// The fused epilogue adds the zero bias to both sums (FADD with +0.0f), so a -0 gate or
// up value becomes +0 there and not in the unfused kernel.
func TestFusedBiasAddClearsNegativeZero(t *testing.T) {
	negZero := float32(math.Copysign(0, -1))
	var f, uf [1]float32
	if err := Fused(standIn, specs[0], []float32{negZero}, []float32{5}, f[:], false); err != nil {
		t.Fatal(err)
	}
	if err := Unfused(standIn, specs[0], []float32{negZero}, []float32{5}, uf[:]); err != nil {
		t.Fatal(err)
	}
	if math.Float32bits(f[0]) != 0 || math.Float32bits(uf[0]) != 0x80000000 {
		t.Errorf("silu(-0)*5: fused %#x, unfused %#x; want +0 and -0", math.Float32bits(f[0]), math.Float32bits(uf[0]))
	}
}

// Saturation: expf overflowing to +Inf makes silu(x) = x * rcp(Inf) = -0 for very
// negative x (no NaN); swiglu_oai clamps the gate from above and the up value both ways.
func TestSaturationAndClamps(t *testing.T) {
	var o [1]float32
	if err := Unfused(standIn, specs[0], []float32{-200}, []float32{3}, o[:]); err != nil {
		t.Fatal(err)
	}
	if math.Float32bits(o[0]) != 0x80000000 {
		t.Errorf("silu(-200)*3 = %g (%#x), want -0", o[0], math.Float32bits(o[0]))
	}
	oai := specs[2]
	big, _ := func() (float32, error) {
		var b [1]float32
		err := Unfused(standIn, oai, []float32{1e6}, []float32{1e6}, b[:])
		return b[0], err
	}()
	var at [1]float32
	_ = Unfused(standIn, oai, []float32{7}, []float32{7}, at[:])
	if big != at[0] {
		t.Errorf("swiglu_oai(1e6, 1e6) = %g, want swiglu_oai(7, 7) = %g (both clamped to the limit)", big, at[0])
	}
	_ = Unfused(standIn, oai, []float32{1}, []float32{-50}, o[:])
	var lo [1]float32
	_ = Unfused(standIn, oai, []float32{1}, []float32{-7}, lo[:])
	if o[0] != lo[0] {
		t.Errorf("up -50 gives %g, up -limit %g: the up value is clamped from below too", o[0], lo[0])
	}
}
