package mmq

import (
	"fmt"

	"github.com/ggsim/ggsim/quant"
	"github.com/ggsim/ggsim/sim"
	"github.com/ggsim/ggsim/sim/q8"
)

// The step-through of one iteration's scale arithmetic (Step.Scale): the same operations
// as the int8-MMA path's vec_dot families (vecdot.go, kquants.go: dotQ8_0Q8_1,
// dotQ8_1Q8_1, dotQ8_0_16Q8_1, dotQ6_K, dotQ2_K), written out one at a time with what
// each operand is, for the traced output only: MulMat does not run them.
// TestScaleStepsMatchDot checks, for every MMA-path type, that the steps end with the
// bits of the type's dot and recompute from their operands. The dp4a path's
// families are in trace_scale_dp4a.go.

// scaleExplainer records one iteration's scale steps (package sim's step model).
type scaleExplainer struct{ sim.Recorder }

func sIn(name string, v float32) sim.StepArg { return sim.In(name, v) }
func sInt(name string, v int32) sim.StepArg  { return sim.InInt(name, v) }

func (e *scaleExplainer) do(op sim.StepOp, what string, args ...sim.StepArg) sim.StepArg {
	return e.Do(op, what, args...)
}

// explainFn is the step-through of a kernel's dot (same arguments); the last step's
// Float is the new sum.
type explainFn func(x *xTile, hd *halfDots, y0, y1 *q8.BlockMMQ, sum float32) []sim.Step

// scaleExplainers are the step-throughs of the MMA path's kernels, by type (which dot
// family each type's kernel uses: legacy.go, legacy2.go, kquants.go, iq.go, iq4.go,
// nvfp4.go; TestScaleStepsMatchDot checks each against kernels[t].dot).
var scaleExplainers = map[quant.Type]explainFn{
	quant.Q4_0: explainQ8_0Q8_1(true),
	quant.Q8_0: explainQ8_0Q8_1(false), quant.Q5_0: explainQ8_0Q8_1(false), quant.Q1_0: explainQ8_0Q8_1(false),
	quant.Q2_0: explainQ8_0Q8_1(false), quant.IQ2_XXS: explainQ8_0Q8_1(false), quant.IQ3_XXS: explainQ8_0Q8_1(false),
	quant.IQ3_S: explainQ8_0Q8_1(false), quant.IQ4_NL: explainQ8_0Q8_1(false), quant.MXFP4: explainQ8_0Q8_1(false),
	quant.IQ4_XS: explainQ8_0Q8_1(false),
	quant.Q4_1:   explainQ8_1Q8_1, quant.Q5_1: explainQ8_1Q8_1, quant.Q4_K: explainQ8_1Q8_1, quant.Q5_K: explainQ8_1Q8_1,
	quant.IQ1_S: explainQ8_1Q8_1,
	quant.Q3_K:  explainQ8_0_16Q8_1, quant.IQ2_XS: explainQ8_0_16Q8_1, quant.IQ2_S: explainQ8_0_16Q8_1, quant.NVFP4: explainQ8_0_16Q8_1,
	quant.Q6_K: explainQ6_K,
	quant.Q2_K: explainQ2_K,
}

// explainerFor returns the step-through of t's dot on p's path, nil if there is none.
func explainerFor(p *Plan, t quant.Type) explainFn {
	if p.DP4A {
		return scaleExplainersDP4A[t]
	}
	return scaleExplainers[t]
}

func yName(b int) (string, int) {
	if b < 4 {
		return "y0", b
	}
	return "y1", b - 4
}

func explainQ8_0Q8_1(ds4 bool) explainFn {
	return func(x *xTile, hd *halfDots, y0, y1 *q8.BlockMMQ, sum float32) []sim.Step {
		e := &scaleExplainer{}
		s := sIn("sum", sum)
		for b := 0; b < 8; b++ {
			y, k := yHalf(y0, y1, b)
			yn, _ := yName(b)
			c := e.do(sim.StepIAdd, fmt.Sprintf("C of block %d", b), sInt(fmt.Sprintf("C[%d]", 2*b), hd[2*b]), sInt(fmt.Sprintf("C[%d]", 2*b+1), hd[2*b+1]))
			var dB sim.StepArg
			if ds4 {
				d, _ := y.DS4(k)
				dB = sIn(fmt.Sprintf("h2f(%s.ds4[%d].d)", yn, k), sim.H2F(d))
			} else {
				dB = sIn(fmt.Sprintf("%s.d4[%d]", yn, k), y.D4(k))
			}
			cf := e.do(sim.StepI2F, "float(C)", c)
			m := e.do(sim.StepFMul, "float(C)*dA", cf, sIn(fmt.Sprintf("x_df[%d]", b), x.df[b]))
			s = e.do(sim.StepFFMA, "sum += C*dA*dB", m, dB, s)
		}
		return e.Steps
	}
}

func explainQ8_1Q8_1(x *xTile, hd *halfDots, y0, y1 *q8.BlockMMQ, sum float32) []sim.Step {
	e := &scaleExplainer{}
	s := sIn("sum", sum)
	for b := 0; b < 8; b++ {
		y, k := yHalf(y0, y1, b)
		yn, _ := yName(b)
		c := e.do(sim.StepIAdd, fmt.Sprintf("C of block %d", b), sInt(fmt.Sprintf("C[%d]", 2*b), hd[2*b]), sInt(fmt.Sprintf("C[%d]", 2*b+1), hd[2*b+1]))
		d, ds := y.DS4(k)
		m := e.do(sim.StepFMul, "dmA.x*dsB.x", sIn(fmt.Sprintf("x_dm[%d].x", b), x.dm[b][0]), sIn(fmt.Sprintf("h2f(%s.ds4[%d].d)", yn, k), sim.H2F(d)))
		cf := e.do(sim.StepI2F, "float(C)", c)
		s = e.do(sim.StepFFMA, "sum += dmA.x*dsB.x*C", m, cf, s)
		s = e.do(sim.StepFFMA, "sum += dmA.y*dsB.y", sIn(fmt.Sprintf("x_dm[%d].y", b), x.dm[b][1]), sIn(fmt.Sprintf("h2f(%s.ds4[%d].s)", yn, k), sim.H2F(ds)), s)
	}
	return e.Steps
}

func explainQ8_0_16Q8_1(x *xTile, hd *halfDots, y0, y1 *q8.BlockMMQ, sum float32) []sim.Step {
	e := &scaleExplainer{}
	s := sIn("sum", sum)
	for b := 0; b < 8; b++ {
		y, k := yHalf(y0, y1, b)
		yn, _ := yName(b)
		c0 := e.do(sim.StepI2F, "float(C0)", sInt(fmt.Sprintf("C[%d]", 2*b), hd[2*b]))
		c1 := e.do(sim.StepI2F, "float(C1)", sInt(fmt.Sprintf("C[%d]", 2*b+1), hd[2*b+1]))
		m := e.do(sim.StepFMul, "C1*dA1", c1, sIn(fmt.Sprintf("x_df[%d]", 2*b+1), x.df[2*b+1]))
		in := e.do(sim.StepFFMA, "C0*dA0 + C1*dA1", c0, sIn(fmt.Sprintf("x_df[%d]", 2*b), x.df[2*b]), m)
		s = e.do(sim.StepFFMA, "sum += dB*(C0*dA0 + C1*dA1)", sIn(fmt.Sprintf("%s.d4[%d]", yn, k), y.D4(k)), in, s)
	}
	return e.Steps
}

func explainQ6_K(x *xTile, hd *halfDots, y0, y1 *q8.BlockMMQ, sum float32) []sim.Step {
	e := &scaleExplainer{}
	s := sIn("sum", sum)
	for h, y := range [2]*q8.BlockMMQ{y0, y1} {
		tmp := sIn("0", 0)
		for q := 0; q < 4; q++ {
			b := 4*h + q
			p0 := e.do(sim.StepIMul, "C0*sc0", sInt(fmt.Sprintf("C[%d]", 2*b), hd[2*b]), sInt(fmt.Sprintf("x_sc[%d]", 2*b), x.sc[2*b]))
			p1 := e.do(sim.StepIMul, "C1*sc1", sInt(fmt.Sprintf("C[%d]", 2*b+1), hd[2*b+1]), sInt(fmt.Sprintf("x_sc[%d]", 2*b+1), x.sc[2*b+1]))
			c := e.do(sim.StepIAdd, "C0*sc0 + C1*sc1", p0, p1)
			cf := e.do(sim.StepI2F, "float(C0*sc0 + C1*sc1)", c)
			tmp = e.do(sim.StepFFMA, "tmp += float(..)*dB", cf, sIn(fmt.Sprintf("y%d.d4[%d]", h, q), y.D4(q)), tmp)
		}
		s = e.do(sim.StepFFMA, "sum += tmp*dA", tmp, sIn("x_df[0]", x.df[0]), s)
	}
	return e.Steps
}

func explainQ2_K(x *xTile, hd *halfDots, y0, y1 *q8.BlockMMQ, sum float32) []sim.Step {
	e := &scaleExplainer{}
	s := sIn("sum", sum)
	for h, y := range [2]*q8.BlockMMQ{y0, y1} {
		dB := [2]sim.StepArg{sIn(fmt.Sprintf("h2f(y%d.d2s6[0])", h), sim.H2F(y.D2S6(0))), sIn(fmt.Sprintf("h2f(y%d.d2s6[1])", h), sim.H2F(y.D2S6(1)))}
		for q := 0; q < 4; q++ {
			s0 := 8*h + 2*q
			b := 4*h + q
			c0 := e.do(sim.StepI2F, "float(C0)", sInt(fmt.Sprintf("C[%d]", 2*b), hd[2*b]))
			c1 := e.do(sim.StepI2F, "float(C1)", sInt(fmt.Sprintf("C[%d]", 2*b+1), hd[2*b+1]))
			m := e.do(sim.StepFMul, "C1*dm1.x", c1, sIn(fmt.Sprintf("x_dm[%d].x", s0+1), x.mA[s0+1][0]))
			tmp := e.do(sim.StepFFMA, "tmp = C0*dm0.x + C1*dm1.x", c0, sIn(fmt.Sprintf("x_dm[%d].x", s0), x.mA[s0][0]), m)
			if q == 3 {
				m0 := e.do(sim.StepI2F, "float(sum of y values 96..111)", sInt(fmt.Sprintf("sum y%d.qs[96:112]", h), sumI8(y.Qs[96:112])))
				m1 := e.do(sim.StepI2F, "float(sum of y values 112..127)", sInt(fmt.Sprintf("sum y%d.qs[112:128]", h), sumI8(y.Qs[112:128])))
				mm := e.do(sim.StepFMul, "m1*dm1.y", m1, sIn(fmt.Sprintf("x_dm[%d].y", s0+1), x.mA[s0+1][1]))
				mf := e.do(sim.StepFFMA, "m0*dm0.y + m1*dm1.y", m0, sIn(fmt.Sprintf("x_dm[%d].y", s0), x.mA[s0][1]), mm)
				tmp = e.do(sim.StepFSub, "tmp -= mins", tmp, mf)
			}
			s = e.do(sim.StepFFMA, "sum += tmp*dB", tmp, dB[q/2], s)
		}
		for q := 0; q < 3; q++ {
			s0 := 8*h + 2*q
			n0 := e.do(sim.StepFNeg, "-dm0.y", sIn(fmt.Sprintf("x_dm[%d].y", s0), x.mA[s0][1]))
			s = e.do(sim.StepFFMA, "sum -= dm0.y*sB", n0, sIn(fmt.Sprintf("h2f(y%d.d2s6[%d])", h, 2+2*q), sim.H2F(y.D2S6(2+2*q))), s)
			n1 := e.do(sim.StepFNeg, "-dm1.y", sIn(fmt.Sprintf("x_dm[%d].y", s0+1), x.mA[s0+1][1]))
			s = e.do(sim.StepFFMA, "sum -= dm1.y*sB", n1, sIn(fmt.Sprintf("h2f(y%d.d2s6[%d])", h, 3+2*q), sim.H2F(y.D2S6(3+2*q))), s)
		}
	}
	return e.Steps
}
