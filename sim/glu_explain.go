package sim

// The step-through of the GLU epilogues (ExplainGLUFused, ExplainGLUUnfused): the same
// instructions as GLUFused and GLUUnfused (glu.go), one Step each, in the SASS order
// listed there, the MUFU ones (ex2, rcp, tanh) included. The fast functions are not
// touched; TestExplainGLU checks that the explained result has their bits on random and
// extreme inputs and that every step recomputes from its operands.

// gluExplainer records the steps of one epilogue (the shared step model: steps.go).
type gluExplainer struct{ Recorder }

func (e *gluExplainer) do(op StepOp, what string, args ...StepArg) StepArg {
	return e.Do(op, what, args...)
}

func (e *gluExplainer) silu(x StepArg) StepArg {
	t := e.do(StepFMul, "t = x * -log2e", x, In("-log2e", negLog2e))
	t = e.do(StepEx2, "t = exp2(t) = expf(-x)", t)
	t = e.do(StepFAdd, "t = 1 + expf(-x)", t, In("1", 1))
	t = e.do(StepRcp, "t = 1/t", t)
	return e.do(StepFMul, "silu(x) = x * t", x, t)
}

func (e *gluExplainer) gelu(x StepArg) StepArg {
	a := e.do(StepFMul, "a = x * 0.044715", x, In("0.044715", geluCoefA))
	s := e.do(StepFMul, "s = x * sqrt(2/pi)", x, In("sqrt(2/pi)", sqrt2OverPi))
	a = e.do(StepFFMA, "a = x * a + 1", x, a, In("1", 1))
	s = e.do(StepFMul, "s = a * s", a, s)
	s = e.do(StepTanh, "s = tanhf(s)", s)
	s = e.do(StepFAdd, "s = s + 1", s, In("1", 1))
	h := e.do(StepFMul, "h = x * 0.5", x, In("0.5", 0.5))
	return e.do(StepFMul, "gelu(x) = h * s", h, s)
}

func (e *gluExplainer) swigluOAI(x, g StepArg, alpha, limit float32) StepArg {
	lim := In("limit", limit)
	x = e.do(StepFMin, "x = fminf(gate, limit)", x, lim)
	g = e.do(StepFMin, "g = fminf(up, limit)", g, lim)
	nl := e.do(StepFNeg, "-limit", lim)
	g = e.do(StepFMax, "g = fmaxf(g, -limit)", g, nl)
	t := e.do(StepFMul, "t = x * alpha", x, In("alpha", alpha))
	t = e.do(StepFMul, "t = t * -log2e", t, In("-log2e", negLog2e))
	t = e.do(StepEx2, "t = exp2(t) = expf(-x*alpha)", t)
	t = e.do(StepFAdd, "t = 1 + t", t, In("1", 1))
	t = e.do(StepRcp, "t = 1/t", t)
	x = e.do(StepFMul, "x = x * t", x, t)
	g = e.do(StepFAdd, "g = g + 1", g, In("1", 1))
	return e.do(StepFMul, "swiglu_oai = x * g", x, g)
}

// ExplainGLUFused returns the steps of GLUFused(op, gate, up, gateBias, upBias); the
// last step's Float has its bits.
func ExplainGLUFused(op GLUOp, gate, up, gateBias, upBias float32) []Step {
	e := &gluExplainer{Recorder{Steps: make([]Step, 0, 16)}}
	r := e.do(StepFAdd, "result = up + bias", In("up", up), In("up bias", upBias))
	g := e.do(StepFAdd, "gate = gate + bias", In("gate", gate), In("gate bias", gateBias))
	switch op {
	case GLUGeGLU:
		e.do(StepFMul, "dst = result * gelu(gate)", r, e.gelu(g))
	case GLUSwiGLU:
		e.do(StepFMul, "dst = result * silu(gate)", r, e.silu(g))
	default:
		e.swigluOAI(g, r, oaiAlphaDflt, oaiLimitDflt)
	}
	return e.Steps
}

// ExplainGLUUnfused returns the steps of GLUUnfused(op, gate, up, alpha, limit); the
// last step's Float has its bits.
func ExplainGLUUnfused(op GLUOp, gate, up, alpha, limit float32) []Step {
	e := &gluExplainer{Recorder{Steps: make([]Step, 0, 16)}}
	g, u := In("gate", gate), In("up", up)
	switch op {
	case GLUGeGLU:
		e.do(StepFMul, "dst = gelu(gate) * up", e.gelu(g), u)
	case GLUSwiGLU:
		e.do(StepFMul, "dst = silu(gate) * up", e.silu(g), u)
	default:
		e.swigluOAI(g, u, alpha, limit)
	}
	return e.Steps
}
