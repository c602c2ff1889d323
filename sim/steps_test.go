package sim

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/ggsim/ggsim/f16"
)

// TestStepOpEval compares every StepOp's Eval with a direct call of the arithmetic it
// names, on random bits (seed printed).
func TestStepOpEval(t *testing.T) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 1))
	f := func() float32 { return math.Float32frombits(r.Uint32()) }
	same := func(a, b float32) bool { return math.Float32bits(a) == math.Float32bits(b) }
	for n := 0; n < 20000; n++ {
		i0, i1, i2 := int32(r.Uint32()), int32(r.Uint32()), int32(r.Uint32())
		x, y, z := f(), f(), f()
		ints := []StepArg{{Int: i0}, {Int: i1}, {Int: i2}}
		fl := []StepArg{{Float: x}, {Float: y}, {Float: z}}
		div := i1
		if div == 0 || i0 == math.MinInt32 && div == -1 {
			div = 7
		}
		for _, c := range []struct {
			op   StepOp
			args []StepArg
			i    int32
			f    float32
		}{
			{StepDp4a, ints, Dp4a(i0, i1, i2), 0},
			{StepIMul, ints[:2], i0 * i1, 0},
			{StepIAdd, ints[:2], i0 + i1, 0},
			{StepIDiv, []StepArg{{Int: i0}, {Int: div}}, i0 / div, 0},
			{StepI2F, ints[:1], 0, I2F(i0)},
			{StepFMul, fl[:2], 0, Mul(x, y)},
			{StepFFMA, fl, 0, FMA(x, y, z)},
			{StepFAdd, fl[:2], 0, Add(x, y)},
			{StepFSub, fl[:2], 0, Sub(x, y)},
			{StepFNeg, fl[:1], 0, Neg(x)},
			{StepHMul, fl[:2], 0, H2F(f16.Mul(F2H(x), F2H(y)))},
			{StepEx2, fl[:1], 0, Ex2(x)},
			{StepRcp, fl[:1], 0, Rcp(x)},
			{StepTanh, fl[:1], 0, Tanh(x)},
			{StepFMin, fl[:2], 0, FMinf(x, y)},
			{StepFMax, fl[:2], 0, FMaxf(x, y)},
		} {
			if len(c.args) != c.op.Arity() {
				t.Fatalf("%v: arity %d, the test gives %d", c.op, c.op.Arity(), len(c.args))
			}
			gi, gf := c.op.Eval(c.args)
			if gi != c.i || !same(gf, c.f) {
				t.Fatalf("seed %d: %v(%v): %d/%#08x, want %d/%#08x", seed, c.op, c.args, gi, math.Float32bits(gf), c.i, math.Float32bits(c.f))
			}
		}
	}
}

// TestCheckSteps: a consistent list passes; each kind of inconsistency is refused.
func TestCheckSteps(t *testing.T) {
	build := func() []Step {
		var r Recorder
		d := r.Do(StepDp4a, "sumi", InInt("x", 0x01020304), InInt("y", 0x01010101), InInt("0", 0))
		v := r.Do(StepI2F, "float(sumi)", d)
		m := r.Do(StepFMul, "d*sumi", v, In("d", 0.5))
		r.Do(StepFFMA, "tmp", m, In("s", 3), In("tmp", 1))
		return r.Steps
	}
	if err := CheckSteps(build()); err != nil {
		t.Fatalf("consistent steps: %v", err)
	}
	for _, c := range []struct {
		name   string
		change func([]Step) []Step
		want   string
	}{
		{"empty", func([]Step) []Step { return nil }, "no steps"},
		{"dropped step", func(s []Step) []Step { return append(s[:1:1], s[2:]...) }, ""},
		{"wrong result", func(s []Step) []Step { s[2].Float = math.Nextafter32(s[2].Float, 10); return s }, "operands give"},
		{"operand not the result", func(s []Step) []Step { s[3].Args[0].Float++; return s }, "differs from step"},
		{"forward reference", func(s []Step) []Step { s[1].Args[0].Ref = 2; return s }, "not an earlier one"},
		{"wrong kind", func(s []Step) []Step { s[2].Args[0].Ref = 0; return s }, "wrong kind"},
		{"unused step", func(s []Step) []Step { s[3].Args[0] = In("m", s[2].Float); return s }, "used by no later step"},
		{"wrong arity", func(s []Step) []Step { s[2].Args = s[2].Args[:1]; return s }, "operands"},
	} {
		err := CheckSteps(c.change(build()))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: CheckSteps = %v, want an error containing %q", c.name, err, c.want)
		}
	}
}
