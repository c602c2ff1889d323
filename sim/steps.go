package sim

import (
	"errors"
	"fmt"
	"math"

	"github.com/ggsim/ggsim/f16"
)

// The step-throughs (sim/mmvq.ExplainVecDot, sim/mmq's Step.Scale, ExplainGLUFused and
// ExplainGLUUnfused) record the GPU's operations one at a time as Steps: what each
// operand is and what each operation gives, with this package's arithmetic. This file is
// their one model: the operations, their evaluation and CheckSteps, which tests a list
// of steps for consistency.

// StepOp is the operation of one Step.
type StepOp uint8

const (
	StepDp4a StepOp = iota // Int = __dp4a(A, B, C): C plus the dot of the int8x4 words A and B (exact)
	StepIMul               // Int = A * B (int32)
	StepIAdd               // Int = A + B (int32)
	StepIDiv               // Int = A / B, C's integer division (truncating toward zero)
	StepI2F                // Float = I2F(A), rounded to nearest even
	StepFMul               // Float = FMUL.FTZ(A, B) (Mul)
	StepFFMA               // Float = FFMA.FTZ(A, B, C), one rounding (FMA)
	StepFAdd               // Float = FADD.FTZ(A, B) (Add)
	StepFSub               // Float = FADD.FTZ(A, -B) (Sub)
	StepFNeg               // Float = -A (Neg, exact: an operand modifier on the GPU)
	StepHMul               // Float = h2f(__hmul(A, B)): the half product of two halves, rounded to half
	StepEx2                // Float = MUFU.EX2(A) (Ex2)
	StepRcp                // Float = MUFU.RCP(A) (Rcp)
	StepTanh               // Float = MUFU.TANH(A) (Tanh)
	StepFMin               // Float = FMNMX(A, B) as fminf (FMinf)
	StepFMax               // Float = FMNMX(A, B) as fmaxf (FMaxf)
)

var stepOpNames = [...]string{"dp4a", "imul", "iadd", "idiv", "i2f", "fmul", "ffma", "fadd", "fsub", "fneg", "hmul", "ex2", "rcp", "tanh", "fmin", "fmax"}
var stepOpArity = [...]int{3, 2, 2, 2, 1, 2, 3, 2, 2, 1, 2, 1, 1, 1, 2, 2}

func (o StepOp) String() string {
	if int(o) < len(stepOpNames) {
		return stepOpNames[o]
	}
	return fmt.Sprintf("StepOp(%d)", int(o))
}

// IntResult reports whether o's result is an int (Step.Int); otherwise a float (Step.Float).
func (o StepOp) IntResult() bool { return o <= StepIDiv }

// IntArgs reports whether o's operands are ints (StepArg.Int).
func (o StepOp) IntArgs() bool { return o <= StepI2F }

// Arity returns the number of operands of o (0 for an unknown op).
func (o StepOp) Arity() int {
	if int(o) < len(stepOpArity) {
		return stepOpArity[o]
	}
	return 0
}

// Eval computes o on args (len(args) = o.Arity()) with this package's arithmetic; the
// result is the int or the float that o.IntResult says.
func (o StepOp) Eval(args []StepArg) (int32, float32) {
	a := args
	switch o {
	case StepDp4a:
		return Dp4a(a[0].Int, a[1].Int, a[2].Int), 0
	case StepIMul:
		return a[0].Int * a[1].Int, 0
	case StepIAdd:
		return a[0].Int + a[1].Int, 0
	case StepIDiv:
		return a[0].Int / a[1].Int, 0
	case StepI2F:
		return 0, I2F(a[0].Int)
	case StepFMul:
		return 0, Mul(a[0].Float, a[1].Float)
	case StepFFMA:
		return 0, FMA(a[0].Float, a[1].Float, a[2].Float)
	case StepFAdd:
		return 0, Add(a[0].Float, a[1].Float)
	case StepFSub:
		return 0, Sub(a[0].Float, a[1].Float)
	case StepFNeg:
		return 0, Neg(a[0].Float)
	case StepHMul:
		return 0, H2F(f16.Mul(F2H(a[0].Float), F2H(a[1].Float)))
	case StepEx2:
		return 0, Ex2(a[0].Float)
	case StepRcp:
		return 0, Rcp(a[0].Float)
	case StepTanh:
		return 0, Tanh(a[0].Float)
	case StepFMin:
		return 0, FMinf(a[0].Float, a[1].Float)
	case StepFMax:
		return 0, FMaxf(a[0].Float, a[1].Float)
	}
	panic(fmt.Sprintf("sim: StepOp.Eval: unknown op %d", int(o)))
}

// StepArg is one operand of a Step: the result of an earlier step (Ref >= 0) or an input
// or constant (Ref = -1) that Name describes. Int is the value of an int operand, Float
// of a float one (the op's IntArgs says which).
type StepArg struct {
	Ref   int
	Name  string
	Int   int32
	Float float32
}

// In is a float input operand; InInt an int one.
func In(name string, v float32) StepArg  { return StepArg{Ref: -1, Name: name, Float: v} }
func InInt(name string, v int32) StepArg { return StepArg{Ref: -1, Name: name, Int: v} }
func (a StepArg) isInput() bool          { return a.Ref < 0 }
func (a StepArg) sameAs(s Step, i bool) bool {
	return i && a.Int == s.Int || !i && math.Float32bits(a.Float) == math.Float32bits(s.Float)
}

// Step is one operation: Op on Args gives Int or Float (Op.IntResult says which). What
// names the result in the terms of ggml's source ("sumi", "sumf_d", "silu(x)").
type Step struct {
	Op    StepOp
	What  string
	Args  []StepArg
	Int   int32
	Float float32
}

// Recorder appends steps: Do evaluates op on args, records the step and returns its
// result as an operand of later steps.
type Recorder struct{ Steps []Step }

// Do records op on args (named what) and returns its result as an operand.
func (r *Recorder) Do(op StepOp, what string, args ...StepArg) StepArg {
	s := Step{Op: op, What: what, Args: args}
	s.Int, s.Float = op.Eval(args)
	r.Steps = append(r.Steps, s)
	return StepArg{Ref: len(r.Steps) - 1, Int: s.Int, Float: s.Float}
}

// CheckSteps reports whether steps are consistent: each has its op's number of operands;
// every operand that refers to a step refers to an earlier one of the right kind and
// carries its result's bits; every result is its op on its operands (Eval); every step
// but the last is used by a later one. A list that lost a step, or one whose recorded
// value differs from what its operands give, fails.
func CheckSteps(steps []Step) error {
	if len(steps) == 0 {
		return errors.New("no steps")
	}
	used := make([]bool, len(steps))
	for i, s := range steps {
		if n := s.Op.Arity(); n == 0 || len(s.Args) != n {
			return fmt.Errorf("step %d: %v with %d operands", i, s.Op, len(s.Args))
		}
		for j, a := range s.Args {
			if a.isInput() {
				if a.Ref != -1 {
					return fmt.Errorf("step %d operand %d refers to step %d", i, j, a.Ref)
				}
				continue
			}
			if a.Ref >= i {
				return fmt.Errorf("step %d operand %d refers to step %d, not an earlier one", i, j, a.Ref)
			}
			r := steps[a.Ref]
			if r.Op.IntResult() != s.Op.IntArgs() {
				return fmt.Errorf("step %d operand %d: step %d's result has the wrong kind", i, j, a.Ref)
			}
			if !a.sameAs(r, r.Op.IntResult()) {
				return fmt.Errorf("step %d operand %d differs from step %d's result", i, j, a.Ref)
			}
			used[a.Ref] = true
		}
		in, f := s.Op.Eval(s.Args)
		if !(Step{Int: in, Float: f}).sameResult(s) {
			return fmt.Errorf("step %d (%v %s): result %d/%v [%#08x], its operands give %d/%v [%#08x]",
				i, s.Op, s.What, s.Int, s.Float, math.Float32bits(s.Float), in, f, math.Float32bits(f))
		}
	}
	for i, u := range used[:len(used)-1] {
		if !u {
			return fmt.Errorf("step %d (%v %s) is used by no later step", i, steps[i].Op, steps[i].What)
		}
	}
	return nil
}

// sameResult reports whether s and t have the same result for t's op.
func (s Step) sameResult(t Step) bool {
	if t.Op.IntResult() {
		return s.Int == t.Int
	}
	return math.Float32bits(s.Float) == math.Float32bits(t.Float)
}
