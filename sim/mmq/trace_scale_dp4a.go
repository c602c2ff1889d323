package mmq

import (
	"fmt"

	"github.com/ggsim/ggsim/quant"
	"github.com/ggsim/ggsim/sim"
	"github.com/ggsim/ggsim/sim/q8"
)

// The step-throughs of the dp4a path's vec_dot families (dp4a.go, dp4a_iq.go:
// dp4aDotQ8_0, dp4aDotQ8_1, dp4aDotQ4_0, dp4aDotQ4_K, dp4aDotQ3_K, dp4aDotQ6_K,
// dp4aDotQ2_K, dp4aDotQ8_0_16), as trace_scale.go's for the MMA path. A negation the
// fast code writes as Go's -x is a sim.StepFNeg (sim.Neg): the two differ only on a NaN,
// which the following FFMA makes canonical either way.

// scaleExplainersDP4A are the step-throughs of the dp4a path's kernels, by type
// (dp4a_load.go, dp4a_iq.go; TestScaleStepsMatchDot checks each against
// kernelsDP4A[t].dot).
var scaleExplainersDP4A = map[quant.Type]explainFn{
	quant.Q8_0: explainDP4AQ8_0, quant.Q5_0: explainDP4AQ8_0, quant.IQ4_XS: explainDP4AQ8_0, quant.IQ4_NL: explainDP4AQ8_0,
	quant.MXFP4: explainDP4AQ8_0, quant.IQ2_XXS: explainDP4AQ8_0, quant.IQ3_XXS: explainDP4AQ8_0, quant.IQ3_S: explainDP4AQ8_0,
	quant.Q1_0: explainDP4AQ8_0, quant.Q2_0: explainDP4AQ8_0,
	quant.Q4_0: explainDP4AQ4_0,
	quant.Q4_1: explainDP4AQ8_1, quant.Q5_1: explainDP4AQ8_1, quant.IQ1_S: explainDP4AQ8_1,
	quant.Q3_K: explainDP4AQ3_K,
	quant.Q4_K: explainDP4AQ4_K, quant.Q5_K: explainDP4AQ4_K,
	quant.Q6_K:   explainDP4AQ6_K,
	quant.Q2_K:   explainDP4AQ2_K,
	quant.IQ2_XS: explainDP4AQ8_0_16, quant.IQ2_S: explainDP4AQ8_0_16, quant.NVFP4: explainDP4AQ8_0_16,
}

func (e *scaleExplainer) blockC(b int, hd *halfDots) sim.StepArg {
	return e.do(sim.StepIAdd, fmt.Sprintf("C of block %d", b), sInt(fmt.Sprintf("C[%d]", 2*b), hd[2*b]), sInt(fmt.Sprintf("C[%d]", 2*b+1), hd[2*b+1]))
}

func explainDP4AQ8_0(x *xTile, hd *halfDots, y0, y1 *q8.BlockMMQ, sum float32) []sim.Step {
	e := &scaleExplainer{}
	s := sIn("sum", sum)
	for b := 0; b < 8; b++ {
		y, k := yHalf(y0, y1, b)
		yn, _ := yName(b)
		c := e.blockC(b, hd)
		m := e.do(sim.StepFMul, "dA*dB", sIn(fmt.Sprintf("x_df[%d]", b), x.df[b]), sIn(fmt.Sprintf("%s.d4[%d]", yn, k), y.D4(k)))
		cf := e.do(sim.StepI2F, "float(C)", c)
		s = e.do(sim.StepFFMA, "sum += dA*dB*C", m, cf, s)
	}
	return e.Steps
}

func explainDP4AQ8_1(x *xTile, hd *halfDots, y0, y1 *q8.BlockMMQ, sum float32) []sim.Step {
	e := &scaleExplainer{}
	s := sIn("sum", sum)
	for b := 0; b < 8; b++ {
		y, k := yHalf(y0, y1, b)
		yn, _ := yName(b)
		c := e.blockC(b, hd)
		d, ds := y.DS4(k)
		px := e.do(sim.StepHMul, "tmp.x = dm.x*ds.x (half)", sIn(fmt.Sprintf("x_dm[%d].x", b), sim.H2F(x.dmh[b].Lo)), sIn(fmt.Sprintf("%s.ds4[%d].d", yn, k), sim.H2F(d)))
		py := e.do(sim.StepHMul, "tmp.y = dm.y*ds.y (half)", sIn(fmt.Sprintf("x_dm[%d].y", b), sim.H2F(x.dmh[b].Hi)), sIn(fmt.Sprintf("%s.ds4[%d].s", yn, k), sim.H2F(ds)))
		cf := e.do(sim.StepI2F, "float(C)", c)
		r := e.do(sim.StepFFMA, "r = C*tmp.x + tmp.y", cf, px, py)
		s = e.do(sim.StepFAdd, "sum += r", s, r)
	}
	return e.Steps
}

func explainDP4AQ4_0(x *xTile, hd *halfDots, y0, y1 *q8.BlockMMQ, sum float32) []sim.Step {
	e := &scaleExplainer{}
	s := sIn("sum", sum)
	for b := 0; b < 8; b++ {
		y, k := yHalf(y0, y1, b)
		yn, _ := yName(b)
		c := e.blockC(b, hd)
		d, ds := y.DS4(k)
		cf := e.do(sim.StepI2F, "float(C)", c)
		m := e.do(sim.StepFMul, "8*s8", sIn("8", 8), sIn(fmt.Sprintf("h2f(%s.ds4[%d].s)", yn, k), sim.H2F(ds)))
		n := e.do(sim.StepFNeg, "-(8*s8)", m)
		in := e.do(sim.StepFFMA, "inner = C*d8 - 8*s8", cf, sIn(fmt.Sprintf("h2f(%s.ds4[%d].d)", yn, k), sim.H2F(d)), n)
		s = e.do(sim.StepFFMA, "sum += d4*inner", sIn(fmt.Sprintf("x_df[%d]", b), x.df[b]), in, s)
	}
	return e.Steps
}

func explainDP4AQ4_K(x *xTile, hd *halfDots, y0, y1 *q8.BlockMMQ, sum float32) []sim.Step {
	e := &scaleExplainer{}
	s := sIn("sum", sum)
	dmx, dmy := sIn("h2f(x_dm.x)", sim.H2F(x.dmh[0].Lo)), sIn("h2f(x_dm.y)", sim.H2F(x.dmh[0].Hi))
	for s0 := 0; s0 < 8; s0 += 2 {
		sd, sm := sIn("0", 0), sIn("0", 0)
		for sb := s0; sb < s0+2; sb++ {
			y, k := yHalf(y0, y1, sb)
			yn, _ := yName(sb)
			c := e.blockC(sb, hd)
			d8, s8 := y.DS4(k)
			p := e.do(sim.StepIMul, "sc*C", sInt(fmt.Sprintf("x_sc[%d]", sb), x.sc[sb]), c)
			pf := e.do(sim.StepI2F, "float(sc*C)", p)
			sd = e.do(sim.StepFFMA, "sumf_d += d8*sc*C", sIn(fmt.Sprintf("h2f(%s.ds4[%d].d)", yn, k), sim.H2F(d8)), pf, sd)
			mf := e.do(sim.StepI2F, "float(m)", sInt(fmt.Sprintf("x_sc[%d]", 8+sb), x.sc[8+sb]))
			sm = e.do(sim.StepFFMA, "sumf_m += s8*m", sIn(fmt.Sprintf("h2f(%s.ds4[%d].s)", yn, k), sim.H2F(s8)), mf, sm)
		}
		mm := e.do(sim.StepFMul, "dm.y*sumf_m", dmy, sm)
		n := e.do(sim.StepFNeg, "-(dm.y*sumf_m)", mm)
		r := e.do(sim.StepFFMA, "r = dm.x*sumf_d - dm.y*sumf_m", dmx, sd, n)
		s = e.do(sim.StepFAdd, "sum += r", s, r)
	}
	return e.Steps
}

func explainDP4AQ3_K(x *xTile, hd *halfDots, y0, y1 *q8.BlockMMQ, sum float32) []sim.Step {
	e := &scaleExplainer{}
	s := sIn("sum", sum)
	for b := 0; b < 8; b++ {
		y, k := yHalf(y0, y1, b)
		yn, _ := yName(b)
		p0 := e.do(sim.StepIMul, "C0*sc0", sInt(fmt.Sprintf("C[%d]", 2*b), hd[2*b]), sInt(fmt.Sprintf("x_sc[%d]", 2*b), x.sc[2*b]))
		p1 := e.do(sim.StepIMul, "C1*sc1", sInt(fmt.Sprintf("C[%d]", 2*b+1), hd[2*b+1]), sInt(fmt.Sprintf("x_sc[%d]", 2*b+1), x.sc[2*b+1]))
		si := e.do(sim.StepIAdd, "sumi", p0, p1)
		m := e.do(sim.StepFMul, "d3*d8", sIn("x_df[0]", x.df[0]), sIn(fmt.Sprintf("%s.d4[%d]", yn, k), y.D4(k)))
		sf := e.do(sim.StepI2F, "float(sumi)", si)
		s = e.do(sim.StepFFMA, "sum += d3*d8*sumi", m, sf, s)
	}
	return e.Steps
}

func explainDP4AQ6_K(x *xTile, hd *halfDots, y0, y1 *q8.BlockMMQ, sum float32) []sim.Step {
	e := &scaleExplainer{}
	s := sIn("sum", sum)
	for p := 0; p < 4; p++ {
		sd := sIn("0", 0)
		for b := 2 * p; b < 2*p+2; b++ {
			y, k := yHalf(y0, y1, b)
			yn, _ := yName(b)
			p0 := e.do(sim.StepIMul, "sc0*C0", sInt(fmt.Sprintf("x_sc[%d]", 2*b), x.sc[2*b]), sInt(fmt.Sprintf("C[%d]", 2*b), hd[2*b]))
			p1 := e.do(sim.StepIMul, "sc1*C1", sInt(fmt.Sprintf("x_sc[%d]", 2*b+1), x.sc[2*b+1]), sInt(fmt.Sprintf("C[%d]", 2*b+1), hd[2*b+1]))
			si := e.do(sim.StepIAdd, "sc0*C0 + sc1*C1", p0, p1)
			sf := e.do(sim.StepI2F, "float(..)", si)
			sd = e.do(sim.StepFFMA, "sumf_d += d8*float(..)", sIn(fmt.Sprintf("%s.d4[%d]", yn, k), y.D4(k)), sf, sd)
		}
		s = e.do(sim.StepFFMA, "sum += d6*sumf_d", sIn("x_df[0]", x.df[0]), sd, s)
	}
	return e.Steps
}

func explainDP4AQ2_K(x *xTile, hd *halfDots, y0, y1 *q8.BlockMMQ, sum float32) []sim.Step {
	e := &scaleExplainer{}
	s := sIn("sum", sum)
	for h, y := range [2]*q8.BlockMMQ{y0, y1} {
		for p := 0; p < 2; p++ {
			sumf, sumfD8 := sIn("0", 0), sIn("0", 0)
			for q := 0; q < 2; q++ {
				base := 64*p + 32*q
				g := 8*h + base/16
				c0 := e.do(sim.StepI2F, "float(C0)", sInt(fmt.Sprintf("C[%d]", g), hd[g]))
				sumfD8 = e.do(sim.StepFFMA, "sumf_d8 += dm0.x*C0", sIn(fmt.Sprintf("x_dm[%d].x", g), x.mA[g][0]), c0, sumfD8)
				c1 := e.do(sim.StepI2F, "float(C1)", sInt(fmt.Sprintf("C[%d]", g+1), hd[g+1]))
				sumfD8 = e.do(sim.StepFFMA, "sumf_d8 += dm1.x*C1", sIn(fmt.Sprintf("x_dm[%d].x", g+1), x.mA[g+1][0]), c1, sumfD8)
				if q < 2-p {
					n0 := e.do(sim.StepFNeg, "-dm0.y", sIn(fmt.Sprintf("x_dm[%d].y", g), x.mA[g][1]))
					sumf = e.do(sim.StepFFMA, "sumf -= dm0.y*s0", n0, sIn(fmt.Sprintf("h2f(y%d.d2s6[%d])", h, 2+4*p+2*q), sim.H2F(y.D2S6(2+4*p+2*q))), sumf)
					n1 := e.do(sim.StepFNeg, "-dm1.y", sIn(fmt.Sprintf("x_dm[%d].y", g+1), x.mA[g+1][1]))
					sumf = e.do(sim.StepFFMA, "sumf -= dm1.y*s1", n1, sIn(fmt.Sprintf("h2f(y%d.d2s6[%d])", h, 3+4*p+2*q), sim.H2F(y.D2S6(3+4*p+2*q))), sumf)
				} else {
					m0 := e.do(sim.StepI2F, "float(S0)", sInt(fmt.Sprintf("sum y%d.qs[%d:%d]", h, base, base+16), sumI8(y.Qs[base:base+16])))
					n0 := e.do(sim.StepFNeg, "-dm0.y", sIn(fmt.Sprintf("x_dm[%d].y", g), x.mA[g][1]))
					sumfD8 = e.do(sim.StepFFMA, "sumf_d8 -= dm0.y*S0", n0, m0, sumfD8)
					m1 := e.do(sim.StepI2F, "float(S1)", sInt(fmt.Sprintf("sum y%d.qs[%d:%d]", h, base+16, base+32), sumI8(y.Qs[base+16:base+32])))
					n1 := e.do(sim.StepFNeg, "-dm1.y", sIn(fmt.Sprintf("x_dm[%d].y", g+1), x.mA[g+1][1]))
					sumfD8 = e.do(sim.StepFFMA, "sumf_d8 -= dm1.y*S1", n1, m1, sumfD8)
				}
			}
			r := e.do(sim.StepFFMA, "r = d8*sumf_d8 + sumf", sIn(fmt.Sprintf("h2f(y%d.d2s6[%d])", h, p), sim.H2F(y.D2S6(p))), sumfD8, sumf)
			s = e.do(sim.StepFAdd, "sum += r", s, r)
		}
	}
	return e.Steps
}

func explainDP4AQ8_0_16(x *xTile, hd *halfDots, y0, y1 *q8.BlockMMQ, sum float32) []sim.Step {
	e := &scaleExplainer{}
	s := sIn("sum", sum)
	for b := 0; b < 8; b++ {
		y, k := yHalf(y0, y1, b)
		yn, _ := yName(b)
		c0 := e.do(sim.StepI2F, "float(C0)", sInt(fmt.Sprintf("C[%d]", 2*b), hd[2*b]))
		sf := e.do(sim.StepFFMA, "sf = dA0*C0 + 0", sIn(fmt.Sprintf("x_df[%d]", 2*b), x.df[2*b]), c0, sIn("0", 0))
		c1 := e.do(sim.StepI2F, "float(C1)", sInt(fmt.Sprintf("C[%d]", 2*b+1), hd[2*b+1]))
		sf = e.do(sim.StepFFMA, "sf += dA1*C1", sIn(fmt.Sprintf("x_df[%d]", 2*b+1), x.df[2*b+1]), c1, sf)
		s = e.do(sim.StepFFMA, "sum += dB*sf", sIn(fmt.Sprintf("%s.d4[%d]", yn, k), y.D4(k)), sf, s)
	}
	return e.Steps
}
