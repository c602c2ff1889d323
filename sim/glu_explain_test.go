package sim

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"os"
	"testing"
)

// gluInputs returns extreme values (signed zeros, subnormals, the FTZ boundary, the
// ex2/tanh saturation ranges, the swiglu_oai limit, huge values, Inf, NaN) and n random
// bit patterns and moderate values drawn from seed.
func gluInputs(seed uint64, n int) []float32 {
	vs := []float32{0, float32(math.Copysign(0, -1)), 1, -1, 0.5, -0.5, 7, -7, 7.0000005, -7.0000005, 1.702,
		1e-45, -1e-45, 1.1754942e-38, -1.1754942e-38, 1.1754944e-38, 3e-39, -3e-39,
		20, -20, 88, -88, 89, -89, 104, -104, 127, -127, 128, -128, 150, -150, 1e4, -1e4, 3.4028235e38, -3.4028235e38,
		float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN()), math.Float32frombits(0xffc00001)}
	r := rand.New(rand.NewPCG(seed, 1))
	for i := 0; i < n; i++ {
		vs = append(vs, math.Float32frombits(r.Uint32()), float32(r.NormFloat64()*4))
	}
	return vs
}

// replay checks the steps with CheckSteps (each recomputes from its operands, every
// step but the last used).
func replay(t *testing.T, what string, steps []Step) {
	t.Helper()
	if err := CheckSteps(steps); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// The instruction counts of glu.go's SASS listing: a dropped or added step fails here
// even where it does not change the bits.
var wantGLUSteps = map[GLUOp][2]int{ // fused, unfused
	GLUSwiGLU:    {2 + 5 + 1, 5 + 1},
	GLUGeGLU:     {2 + 8 + 1, 8 + 1},
	GLUSwiGLUOAI: {2 + 12, 12}, // 10 of the listing, the two halves of the gate's clamp and fneg
}

func TestExplainGLU(t *testing.T) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	vs := gluInputs(seed, 100)
	r := rand.New(rand.NewPCG(seed, 2))
	ops := []GLUOp{GLUSwiGLU, GLUGeGLU, GLUSwiGLUOAI}
	for _, op := range ops {
		n := 0
		for _, g := range vs {
			for k := 0; k < 6; k++ {
				u := vs[r.IntN(len(vs))]
				alpha, limit := vs[r.IntN(len(vs))], vs[r.IntN(len(vs))]
				if k < 2 {
					alpha, limit = 1.702, 7
				}
				var bias float32
				if k == 5 {
					bias = vs[r.IntN(len(vs))]
				}
				fs := ExplainGLUFused(op, g, u, bias, 0)
				us := ExplainGLUUnfused(op, g, u, alpha, limit)
				if len(fs) != wantGLUSteps[op][0] || len(us) != wantGLUSteps[op][1] {
					t.Fatalf("op %d: %d fused and %d unfused steps, want %v", op, len(fs), len(us), wantGLUSteps[op])
				}
				if n < 40 {
					replay(t, "fused", fs)
					replay(t, "unfused", us)
				}
				if want, got := GLUFused(op, g, u, bias, 0), fs[len(fs)-1].Float; math.Float32bits(got) != math.Float32bits(want) {
					t.Fatalf("seed %d: op %d fused(gate %#08x, up %#08x, bias %#08x): explained %#08x, GLUFused %#08x",
						seed, op, math.Float32bits(g), math.Float32bits(u), math.Float32bits(bias), math.Float32bits(got), math.Float32bits(want))
				}
				if want, got := GLUUnfused(op, g, u, alpha, limit), us[len(us)-1].Float; math.Float32bits(got) != math.Float32bits(want) {
					t.Fatalf("seed %d: op %d unfused(gate %#08x, up %#08x, alpha %g, limit %g): explained %#08x, GLUUnfused %#08x",
						seed, op, math.Float32bits(g), math.Float32bits(u), alpha, limit, math.Float32bits(got), math.Float32bits(want))
				}
				n++
			}
		}
	}
}

// TestExplainGLUBiasAdd: the fused epilogue's +0.0f bias add turns a -0 up sum into +0,
// so dropping it from the step-through changes the bits.
func TestExplainGLUBiasAdd(t *testing.T) {
	negZero := float32(math.Copysign(0, -1))
	s := ExplainGLUFused(GLUSwiGLU, 1, negZero, 0, 0)
	if got := s[len(s)-1].Float; math.Float32bits(got) != 0 {
		t.Fatalf("fused swiglu(gate 1, up -0) = %#08x, want +0", math.Float32bits(got))
	}
	u := ExplainGLUUnfused(GLUSwiGLU, 1, negZero, 0, 0)
	if got := u[len(u)-1].Float; math.Float32bits(got) != 0x80000000 {
		t.Fatalf("unfused swiglu(gate 1, up -0) = %#08x, want -0", math.Float32bits(got))
	}
}

// TestExplainGLUSamplesH200: the unfused step-throughs end with the H200's bits on the
// measured records (testdata/h200-glu-samples.f32, see TestGLUSamplesH200).
func TestExplainGLUSamplesH200(t *testing.T) {
	b, err := os.ReadFile("testdata/h200-glu-samples.f32")
	if err != nil {
		t.Fatal(err)
	}
	const rec = 11
	f := func(i, k int) float32 { return math.Float32frombits(binary.LittleEndian.Uint32(b[4*(rec*i+k):])) }
	n := len(b) / (4 * rec)
	for i := 0; i < n; i++ {
		x, g, alpha, limit := f(i, 0), f(i, 1), f(i, 2), f(i, 3)
		for _, c := range []struct {
			op   GLUOp
			want float32
		}{{GLUSwiGLU, f(i, 7)}, {GLUGeGLU, f(i, 8)}, {GLUSwiGLUOAI, f(i, 6)}} {
			s := ExplainGLUUnfused(c.op, x, g, alpha, limit)
			if got := s[len(s)-1].Float; math.Float32bits(got) != math.Float32bits(c.want) {
				t.Fatalf("record %d, op %d (x %#08x, g %#08x): explained %#08x, H200 %#08x", i, c.op, math.Float32bits(x), math.Float32bits(g), math.Float32bits(got), math.Float32bits(c.want))
			}
		}
	}
	t.Logf("%d records", n)
}
