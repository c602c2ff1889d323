package sim

import "fmt"

// The step-through of the GLU epilogues (ExplainGLUFused, ExplainGLUUnfused): the same
// instructions as GLUFused and GLUUnfused (glu.go), one GLUStep each, in the SASS order
// listed there, the MUFU ones (ex2, rcp, tanh) included. The fast functions are not
// touched; TestExplainGLU checks that the explained result has their bits on random and
// extreme inputs and that every step recomputes from its operands.

// GLUStepOp is the instruction of one GLUStep.
type GLUStepOp uint8

const (
	GLUFMul GLUStepOp = iota // FMUL.FTZ a, b (Mul)
	GLUFFMA                  // FFMA.FTZ a, b, c (FMA)
	GLUFAdd                  // FADD.FTZ a, b (Add)
	GLUEx2                   // MUFU.EX2 a (Ex2)
	GLURcp                   // MUFU.RCP a (Rcp)
	GLUTanh                  // MUFU.TANH a (Tanh)
	GLUFMin                  // FMNMX a, b as fminf (FMinf)
	GLUFMax                  // FMNMX a, b as fmaxf (FMaxf)
	GLUFNeg                  // -a (Neg, exact: an operand modifier on the GPU)
)

var gluOpNames = [...]string{"fmul", "ffma", "fadd", "ex2", "rcp", "tanh", "fmin", "fmax", "fneg"}

// GLUOpArity is the number of operands of each GLUStepOp.
var gluOpArity = [...]int{2, 3, 2, 1, 1, 1, 2, 2, 1}

func (o GLUStepOp) String() string {
	if int(o) < len(gluOpNames) {
		return gluOpNames[o]
	}
	return fmt.Sprintf("GLUStepOp(%d)", int(o))
}

// Arity returns the number of operands of o.
func (o GLUStepOp) Arity() int { return gluOpArity[o] }

// Eval computes o on args with the simulator's arithmetic (len(args) = o.Arity()).
func (o GLUStepOp) Eval(args ...float32) float32 {
	switch o {
	case GLUFMul:
		return Mul(args[0], args[1])
	case GLUFFMA:
		return FMA(args[0], args[1], args[2])
	case GLUFAdd:
		return Add(args[0], args[1])
	case GLUEx2:
		return Ex2(args[0])
	case GLURcp:
		return Rcp(args[0])
	case GLUTanh:
		return Tanh(args[0])
	case GLUFMin:
		return FMinf(args[0], args[1])
	case GLUFMax:
		return FMaxf(args[0], args[1])
	default:
		return Neg(args[0])
	}
}

// GLUArg is one operand of a GLUStep: the result of step Ref (>= 0) or an input or
// constant (Ref = -1) that Name describes ("gate", "up", "-log2e", "1").
type GLUArg struct {
	Ref  int
	Name string
	Val  float32
}

// GLUStep is one instruction: Op on Args gives Out, which What names in the terms of
// ggml's source ("result = up + bias", "silu(gate)").
type GLUStep struct {
	Op   GLUStepOp
	What string
	Args []GLUArg
	Out  float32
}

type gluExplainer struct{ steps []GLUStep }

// in is an input operand.
func gluIn(name string, v float32) GLUArg { return GLUArg{Ref: -1, Name: name, Val: v} }

// do records op on args and returns its result as an operand of later steps.
func (e *gluExplainer) do(op GLUStepOp, what string, args ...GLUArg) GLUArg {
	var vals [3]float32
	for i, a := range args {
		vals[i] = a.Val
	}
	out := op.Eval(vals[:len(args)]...)
	e.steps = append(e.steps, GLUStep{Op: op, What: what, Args: args, Out: out})
	return GLUArg{Ref: len(e.steps) - 1, Val: out}
}

func (e *gluExplainer) silu(x GLUArg) GLUArg {
	t := e.do(GLUFMul, "t = x * -log2e", x, gluIn("-log2e", negLog2e))
	t = e.do(GLUEx2, "t = exp2(t) = expf(-x)", t)
	t = e.do(GLUFAdd, "t = 1 + expf(-x)", t, gluIn("1", 1))
	t = e.do(GLURcp, "t = 1/t", t)
	return e.do(GLUFMul, "silu(x) = x * t", x, t)
}

func (e *gluExplainer) gelu(x GLUArg) GLUArg {
	a := e.do(GLUFMul, "a = x * 0.044715", x, gluIn("0.044715", geluCoefA))
	s := e.do(GLUFMul, "s = x * sqrt(2/pi)", x, gluIn("sqrt(2/pi)", sqrt2OverPi))
	a = e.do(GLUFFMA, "a = x * a + 1", x, a, gluIn("1", 1))
	s = e.do(GLUFMul, "s = a * s", a, s)
	s = e.do(GLUTanh, "s = tanhf(s)", s)
	s = e.do(GLUFAdd, "s = s + 1", s, gluIn("1", 1))
	h := e.do(GLUFMul, "h = x * 0.5", x, gluIn("0.5", 0.5))
	return e.do(GLUFMul, "gelu(x) = h * s", h, s)
}

func (e *gluExplainer) swigluOAI(x, g GLUArg, alpha, limit float32) GLUArg {
	lim := gluIn("limit", limit)
	x = e.do(GLUFMin, "x = fminf(gate, limit)", x, lim)
	g = e.do(GLUFMin, "g = fminf(up, limit)", g, lim)
	nl := e.do(GLUFNeg, "-limit", lim)
	g = e.do(GLUFMax, "g = fmaxf(g, -limit)", g, nl)
	t := e.do(GLUFMul, "t = x * alpha", x, gluIn("alpha", alpha))
	t = e.do(GLUFMul, "t = t * -log2e", t, gluIn("-log2e", negLog2e))
	t = e.do(GLUEx2, "t = exp2(t) = expf(-x*alpha)", t)
	t = e.do(GLUFAdd, "t = 1 + t", t, gluIn("1", 1))
	t = e.do(GLURcp, "t = 1/t", t)
	x = e.do(GLUFMul, "x = x * t", x, t)
	g = e.do(GLUFAdd, "g = g + 1", g, gluIn("1", 1))
	return e.do(GLUFMul, "swiglu_oai = x * g", x, g)
}

// ExplainGLUFused returns the steps of GLUFused(op, gate, up, gateBias, upBias); the
// last step's Out has its bits.
func ExplainGLUFused(op GLUOp, gate, up, gateBias, upBias float32) []GLUStep {
	e := &gluExplainer{steps: make([]GLUStep, 0, 16)}
	r := e.do(GLUFAdd, "result = up + bias", gluIn("up", up), gluIn("up bias", upBias))
	g := e.do(GLUFAdd, "gate = gate + bias", gluIn("gate", gate), gluIn("gate bias", gateBias))
	switch op {
	case GLUGeGLU:
		e.do(GLUFMul, "dst = result * gelu(gate)", r, e.gelu(g))
	case GLUSwiGLU:
		e.do(GLUFMul, "dst = result * silu(gate)", r, e.silu(g))
	default:
		e.swigluOAI(g, r, oaiAlphaDflt, oaiLimitDflt)
	}
	return e.steps
}

// ExplainGLUUnfused returns the steps of GLUUnfused(op, gate, up, alpha, limit); the
// last step's Out has its bits.
func ExplainGLUUnfused(op GLUOp, gate, up, alpha, limit float32) []GLUStep {
	e := &gluExplainer{steps: make([]GLUStep, 0, 16)}
	g, u := gluIn("gate", gate), gluIn("up", up)
	switch op {
	case GLUGeGLU:
		e.do(GLUFMul, "dst = gelu(gate) * up", e.gelu(g), u)
	case GLUSwiGLU:
		e.do(GLUFMul, "dst = silu(gate) * up", e.silu(g), u)
	default:
		e.swigluOAI(g, u, alpha, limit)
	}
	return e.steps
}
