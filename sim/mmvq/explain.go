package mmvq

import (
	"errors"
	"fmt"
	"math"

	"github.com/ggsim/ggsim/f16"

	"github.com/ggsim/ggsim/quant"
	"github.com/ggsim/ggsim/sim"
	"github.com/ggsim/ggsim/sim/q8"
)

// The step-through of one vec_dot call (ExplainVecDot): the same arithmetic as the
// type's VecDot (legacy.go, kquants.go, table16.go, iq*.go, extra.go), written out one
// operation at a time with what each operand is. The fast functions are not touched;
// the explained ones reuse their integer helpers (q5Ints, q45KScales, table16, the grid
// lookups) for the bit fields and recompute every dp4a, integer scale step and float
// operation as a sim.Step. TestExplainMatchesVecDot checks, for every registered type, that
// the explained result has the bits of the fast VecDot and that the steps are consistent.

// VecDotSteps is one vec_dot call and its accumulation, step by step: In is the thread's
// running sum before the call, Steps the integer and float operations in the order of
// the simulation (which is the kernel's for the float ones), Out the running sum after
// (the last step's result).
//
// Input names use x for the type's weight block kbx and y[j] for the q8_1 block
// kbx*QK/32 + j of the column: "y[j] int i" is its int i (int8 values 4i..4i+3),
// "h2f(y[j].d)" its scale, "h2f(y[j].s)" the scaled sum of its values.
type VecDotSteps struct {
	Type    quant.Type
	KBX     int
	Iqs     int
	In, Out float32
	Steps   []sim.Step
}

// ExplainVecDot returns the steps of VecDot(tmp, xrow, kbx, iqs, y) of type t (see
// VecDot for the arguments), whose Out has the bits of KernelOf(t).Dot. A type without
// a registered kernel, or without a step-through, gives an error wrapping
// errors.ErrUnsupported; x or y too short for block kbx, or an iqs the kernel never
// uses, an error saying which.
func ExplainVecDot(t quant.Type, tmp float32, xrow []byte, kbx, iqs int, y []q8.Block) (*VecDotSteps, error) {
	k, ok := kernels[t]
	if !ok {
		return nil, fmt.Errorf("mmvq: ExplainVecDot: %w: no mul_mat_vec_q for %v", errors.ErrUnsupported, t)
	}
	f, ok := explainers[t]
	if !ok || k.DotFor != nil {
		return nil, fmt.Errorf("mmvq: ExplainVecDot: %w: no step-through of the %v vec_dot", errors.ErrUnsupported, t)
	}
	if kbx < 0 || int64(len(xrow)) < int64(kbx+1)*int64(t.TypeSize()) {
		return nil, fmt.Errorf("mmvq: ExplainVecDot: x block %d of %v is past the %d bytes given", kbx, t, len(xrow))
	}
	if len(y) < k.QK/32 {
		return nil, fmt.Errorf("mmvq: ExplainVecDot: %d q8_1 blocks given, the %v vec_dot reads %d", len(y), t, k.QK/32)
	}
	if iqs < 0 || iqs >= k.QI || iqs%k.VDR != 0 {
		return nil, fmt.Errorf("mmvq: ExplainVecDot: iqs %d: the %v kernel uses multiples of %d below %d", iqs, t, k.VDR, k.QI)
	}
	e := &explainer{}
	out := f(e, e.inF("tmp", tmp), xrow, kbx, iqs, y)
	return &VecDotSteps{Type: t, KBX: kbx, Iqs: iqs, In: tmp, Out: out.Float, Steps: e.Steps}, nil
}

// Check reports whether the steps are consistent: every operand that refers to a step
// refers to an earlier one and carries its result's bits, every step's result is its
// operation on its operands, every step but the last is used by a later one, the input
// "tmp" (In) is used exactly once, and Out is the last step's result.
func (v *VecDotSteps) Check() error {
	if err := sim.CheckSteps(v.Steps); err != nil {
		return err
	}
	tmpUses := 0
	for i, s := range v.Steps {
		for _, a := range s.Args {
			if a.Ref < 0 && a.Name == "tmp" {
				tmpUses++
				if math.Float32bits(a.Float) != math.Float32bits(v.In) {
					return fmt.Errorf("step %d: tmp operand %v is not In %v", i, a.Float, v.In)
				}
			}
		}
	}
	last := v.Steps[len(v.Steps)-1]
	if last.Op.IntResult() || math.Float32bits(last.Float) != math.Float32bits(v.Out) {
		return fmt.Errorf("the last step's result is not Out %v", v.Out)
	}
	if tmpUses != 1 {
		return fmt.Errorf("the incoming tmp is used %d times", tmpUses)
	}
	return nil
}

// explainer records the steps of one call.
type explainer struct{ sim.Recorder }

func (e *explainer) in(name string, v int32) sim.StepArg {
	return sim.StepArg{Ref: -1, Name: name, Int: v}
}

func (e *explainer) inF(name string, v float32) sim.StepArg {
	return sim.StepArg{Ref: -1, Name: name, Float: v}
}

// yInt is int i of q8_1 block y[j].
func (e *explainer) yInt(y []q8.Block, j, i int) sim.StepArg {
	return e.in(fmt.Sprintf("y[%d] int %d", j, i), y[j].Int(i))
}

func (e *explainer) yD(y []q8.Block, j int) sim.StepArg {
	return e.inF(fmt.Sprintf("h2f(y[%d].d)", j), sim.H2F(y[j].D))
}

func (e *explainer) yS(y []q8.Block, j int) sim.StepArg {
	return e.inF(fmt.Sprintf("h2f(y[%d].s)", j), sim.H2F(y[j].S))
}

func (e *explainer) op(op sim.StepOp, what string, args ...sim.StepArg) sim.StepArg {
	return e.Do(op, what, args...)
}

func (e *explainer) dp4a(what string, a, b, c sim.StepArg) sim.StepArg {
	return e.op(sim.StepDp4a, what, a, b, c)
}
func (e *explainer) i2f(what string, a sim.StepArg) sim.StepArg { return e.op(sim.StepI2F, what, a) }
func (e *explainer) mul(what string, a, b sim.StepArg) sim.StepArg {
	return e.op(sim.StepFMul, what, a, b)
}
func (e *explainer) fma(what string, a, b, c sim.StepArg) sim.StepArg {
	return e.op(sim.StepFFMA, what, a, b, c)
}
func (e *explainer) add(what string, a, b sim.StepArg) sim.StepArg {
	return e.op(sim.StepFAdd, what, a, b)
}
func (e *explainer) neg(what string, a sim.StepArg) sim.StepArg { return e.op(sim.StepFNeg, what, a) }
func (e *explainer) imul(what string, a, b sim.StepArg) sim.StepArg {
	return e.op(sim.StepIMul, what, a, b)
}
func (e *explainer) iadd(what string, a, b sim.StepArg) sim.StepArg {
	return e.op(sim.StepIAdd, what, a, b)
}
func (e *explainer) idiv(what string, a, b sim.StepArg) sim.StepArg {
	return e.op(sim.StepIDiv, what, a, b)
}

func (e *explainer) zero() sim.StepArg  { return e.in("0", 0) }
func (e *explainer) zeroF() sim.StepArg { return e.inF("+0", 0) }
func (e *explainer) c(v float32) sim.StepArg {
	return e.inF(fmt.Sprintf("%v", v), v)
}

type explainFunc func(e *explainer, tmp sim.StepArg, xrow []byte, kbx, iqs int, y []q8.Block) sim.StepArg

var explainers = map[quant.Type]explainFunc{
	quant.Q4_0: explainQ4_0, quant.Q4_1: explainQ4_1, quant.Q5_0: explainQ5_0, quant.Q5_1: explainQ5_1,
	quant.Q8_0: explainQ8_0, quant.Q2_K: explainQ2_K, quant.Q3_K: explainQ3_K, quant.Q4_K: explainQ4_K,
	quant.Q5_K: explainQ5_K, quant.Q6_K: explainQ6_K, quant.MXFP4: explainMXFP4, quant.IQ4_NL: explainIQ4_NL,
	quant.IQ4_XS: explainIQ4_XS, quant.NVFP4: explainNVFP4, quant.Q1_0: explainQ1_0, quant.Q2_0: explainQ2_0,
	quant.IQ1_S: explainIQ1S, quant.IQ1_M: explainIQ1M, quant.IQ2_XXS: explainIQ2XXS, quant.IQ2_XS: explainIQ2XS,
	quant.IQ2_S: explainIQ2S, quant.IQ3_XXS: explainIQ3XXS, quant.IQ3_S: explainIQ3S,
}

// Legacy types (legacy.go).

// nibbleSumi is the sumi of Q4_0/Q4_1 (and, with their 5-bit ints, Q5_0/Q5_1): for each
// of the vdr ints, the dp4a of the low values with y int iqs+i, then of the high ones
// with y int iqs+i+4.
func (e *explainer) nibbleSumi(y []q8.Block, iqs, vdr int, vals func(i int) (lo, hi int32, loName, hiName string)) sim.StepArg {
	sumi := e.zero()
	for i := 0; i < vdr; i++ {
		lo, hi, ln, hn := vals(i)
		sumi = e.dp4a("sumi", e.in(ln, lo), e.yInt(y, 0, iqs+i), sumi)
		sumi = e.dp4a("sumi", e.in(hn, hi), e.yInt(y, 0, iqs+i+4), sumi)
	}
	return sumi
}

func q4Vals(qs []byte, iqs int) func(i int) (int32, int32, string, string) {
	return func(i int) (int32, int32, string, string) {
		v := le32(qs[4*(iqs+i):])
		return v & 0x0F0F0F0F, (v >> 4) & 0x0F0F0F0F,
			fmt.Sprintf("x qs int %d & 0x0F0F0F0F", iqs+i), fmt.Sprintf("x qs int %d >> 4 & 0x0F0F0F0F", iqs+i)
	}
}

func q5Vals(qs []byte, qh int32, iqs int) func(i int) (int32, int32, string, string) {
	return func(i int) (int32, int32, string, string) {
		vi0, vi1 := q5Ints(le32(qs[4*(iqs+i):]), qh>>(4*(iqs+i)))
		return vi0, vi1, fmt.Sprintf("x 5-bit values of qs int %d (low nibbles | qh)", iqs+i),
			fmt.Sprintf("x 5-bit values of qs int %d (high nibbles | qh)", iqs+i)
	}
}

// offsetTail is X = FFMA(d8, I2F(sumi), -FMUL(c, s8)); tmp = FFMA(X, h2f(x.d), tmp) (Q4_0, Q5_0).
func (e *explainer) offsetTail(tmp, sumi sim.StepArg, y []q8.Block, c float32, d float32) sim.StepArg {
	d8 := e.yD(y, 0)
	fs := e.i2f("float(sumi)", sumi)
	m := e.mul(fmt.Sprintf("%v*s8", c), e.c(c), e.yS(y, 0))
	n := e.neg(fmt.Sprintf("-%v*s8", c), m)
	x := e.fma(fmt.Sprintf("d8*sumi - %v*s8", c), d8, fs, n)
	return e.fma("tmp", x, e.inF("h2f(x.d)", d), tmp)
}

// minTail is tmp = FADD(tmp, FFMA(d*d8, I2F(sumi), FMUL(m*s8, 0.5))) (Q4_1, Q5_1).
func (e *explainer) minTail(tmp, sumi sim.StepArg, y []q8.Block, d, m f16.Half) sim.StepArg {
	dd, ms := hmulDS(d, m, &y[0])
	ddo := e.inF("h2f(__hmul(x.d, y[0].d))", dd)
	mso := e.inF("h2f(__hmul(x.m, y[0].s))", ms)
	fs := e.i2f("float(sumi)", sumi)
	h := e.mul("m*s8/2", mso, e.c(0.5))
	r := e.fma("d*d8*sumi + m*s8/2", ddo, fs, h)
	return e.add("tmp", tmp, r)
}

func explainQ4_0(e *explainer, tmp sim.StepArg, xrow []byte, kbx, iqs int, y []q8.Block) sim.StepArg {
	b := quant.Q4_0Block(xrow, kbx)
	sumi := e.nibbleSumi(y, iqs, vdrQ4_0, q4Vals(b.Qs(), iqs))
	return e.offsetTail(tmp, sumi, y, 4, sim.H2F(b.D()))
}

func explainQ4_1(e *explainer, tmp sim.StepArg, xrow []byte, kbx, iqs int, y []q8.Block) sim.StepArg {
	b := quant.Q4_1Block(xrow, kbx)
	sumi := e.nibbleSumi(y, iqs, vdrQ4_1, q4Vals(b.Qs(), iqs))
	return e.minTail(tmp, sumi, y, b.D(), b.M())
}

func explainQ5_0(e *explainer, tmp sim.StepArg, xrow []byte, kbx, iqs int, y []q8.Block) sim.StepArg {
	b := quant.Q5_0Block(xrow, kbx)
	sumi := e.nibbleSumi(y, iqs, vdrQ5_0, q5Vals(b.Qs(), int32(b.Qh()), iqs))
	return e.offsetTail(tmp, sumi, y, 8, sim.H2F(b.D()))
}

func explainQ5_1(e *explainer, tmp sim.StepArg, xrow []byte, kbx, iqs int, y []q8.Block) sim.StepArg {
	b := quant.Q5_1Block(xrow, kbx)
	sumi := e.nibbleSumi(y, iqs, vdrQ5_1, q5Vals(b.Qs(), int32(b.Qh()), iqs))
	return e.minTail(tmp, sumi, y, b.D(), b.M())
}

// dTail is tmp = FFMA(FMUL(dx, h2f(y[j].d)), I2F(sumi), tmp), the end of the vec_dots
// that return d*sumi (Q8_0, IQ4_NL, IQ4_XS, IQ2/IQ3, Q1_0, Q2_0).
func (e *explainer) dTail(tmp, sumi, dx sim.StepArg, y []q8.Block, j int) sim.StepArg {
	d := e.mul("d = dx*d8", dx, e.yD(y, j))
	return e.fma("tmp", d, e.i2f("float(sumi)", sumi), tmp)
}

func explainQ8_0(e *explainer, tmp sim.StepArg, xrow []byte, kbx, iqs int, y []q8.Block) sim.StepArg {
	b := quant.Q8_0Block(xrow, kbx)
	qs := b.Qs()
	sumi := e.zero()
	for i := 0; i < vdrQ8_0; i++ {
		sumi = e.dp4a("sumi", e.in(fmt.Sprintf("x qs int %d", iqs+i), le32(qs[4*(iqs+i):])), e.yInt(y, 0, iqs+i), sumi)
	}
	return e.dTail(tmp, sumi, e.inF("h2f(x.d)", sim.H2F(b.D())), y, 0)
}

// K-quants (kquants.go).

// minMaxTail is tmp = FADD(tmp, FFMA(sumf_d, h2f(dm.x), -FMUL(sumf_m, h2f(dm.y)))).
func (e *explainer) minMaxTail(tmp, sumfD, sumfM sim.StepArg, d, dmin float32) sim.StepArg {
	m := e.mul("sumf_m*dmin", sumfM, e.inF("h2f(x.dmin)", dmin))
	n := e.neg("-sumf_m*dmin", m)
	r := e.fma("sumf_d*d - sumf_m*dmin", sumfD, e.inF("h2f(x.d)", d), n)
	return e.add("tmp", tmp, r)
}

func explainQ2_K(e *explainer, tmp sim.StepArg, xrow []byte, kbx, iqs int, y []q8.Block) sim.StepArg {
	b := quant.Q2_KBlock(xrow, kbx)
	bq8 := 4 * (iqs / 8)
	scaleOff := iqs - iqs%8 + (iqs%8)/4
	scales := b.Scales()[scaleOff:]
	v := le32(b.Qs()[4*iqs:])
	sumfD, sumfM := e.zeroF(), e.zeroF()
	for i := 0; i < 4; i++ {
		sc := int32(scales[2*i])
		d8 := e.yD(y, bq8+i)
		vi := e.in(fmt.Sprintf("x 2-bit values: qs int %d >> %d & 0x03030303", iqs, 2*i), (v>>(2*i))&0x03030303)
		dp := e.dp4a("dp4a(v, u)", vi, e.yInt(y, bq8+i, iqs%8), e.zero())
		p := e.imul("dp4a * sc", dp, e.in(fmt.Sprintf("x scale %d & 0xF", scaleOff+2*i), sc&0xF))
		sumfD = e.fma("sumf_d", d8, e.i2f("float(dp4a*sc)", p), sumfD)
		m := sc >> 4
		m |= m << 8
		m |= m << 16
		dm := e.dp4a("dp4a(m, u)", e.in(fmt.Sprintf("x min of scale %d (>> 4) in 4 bytes", scaleOff+2*i), m), e.yInt(y, bq8+i, iqs%8), e.zero())
		sumfM = e.fma("sumf_m", d8, e.i2f("float(dp4a(m, u))", dm), sumfM)
	}
	d, dmin := b.DM()
	return e.minMaxTail(tmp, sumfD, sumfM, sim.H2F(d), sim.H2F(dmin))
}

func explainQ3_K(e *explainer, tmp sim.StepArg, xrow []byte, kbx, iqs int, y []q8.Block) sim.StepArg {
	b := quant.Q3_KBlock(xrow, kbx)
	bq8 := 4 * (iqs / 8)
	scaleOff := iqs - iqs%8 + (iqs%8)/4
	vl := le32(b.Qs()[4*iqs:])
	vh := ^le32(b.HMask()[4*(iqs%8):]) >> bq8
	scales := b.Scales()
	sumf := e.zeroF()
	for i := 0; i < 4; i++ {
		isc := scaleOff + 2*i
		scLow := (int32(scales[isc%8]) >> (4 * (isc / 8))) & 0xF
		scHigh := ((int32(scales[8+isc%4]) >> (2 * (isc / 4))) & 3) << 4
		vil := (vl >> (2 * i)) & 0x03030303
		vih := ((vh >> i) << 2) & 0x04040404
		vi := e.in(fmt.Sprintf("x 3-bit values (qs int %d, hmask), -4..3", iqs), sim.Vsubss4(vil, vih))
		d8 := e.yD(y, bq8+i)
		dp := e.dp4a("dp4a(v, u)", vi, e.yInt(y, bq8+i, iqs%8), e.zero())
		p := e.imul("dp4a * sc", dp, e.in(fmt.Sprintf("x scale %d - 32", isc), (scLow|scHigh)-32))
		sumf = e.fma("sumf", d8, e.i2f("float(dp4a*sc)", p), sumf)
	}
	return e.fma("tmp", sumf, e.inF("h2f(x.d)", sim.H2F(b.D())), tmp)
}

func explainQ4_K(e *explainer, tmp sim.StepArg, xrow []byte, kbx, iqs int, y []q8.Block) sim.StepArg {
	return e.q45K(tmp, xrow, kbx, iqs, y, false)
}

func explainQ5_K(e *explainer, tmp sim.StepArg, xrow []byte, kbx, iqs int, y []q8.Block) sim.StepArg {
	return e.q45K(tmp, xrow, kbx, iqs, y, true)
}

// q45K is the Q4_K (q5 false) or Q5_K vec_dot: Q5_K dots the second int first.
func (e *explainer) q45K(tmp sim.StepArg, xrow []byte, kbx, iqs int, y []q8.Block, q5 bool) sim.StepArg {
	bq8 := 2 * ((iqs / 2) / 4)
	i0, i1 := (iqs/2)%4, (iqs/2)%4+4
	var v0, v1, vh0, vh1 int32
	var scales []byte
	var d, dmin f16.Half
	if q5 {
		b := quant.Q5_KBlock(xrow, kbx)
		ql := b.Qs()[16*bq8+4*((iqs/2)%4):]
		qh := b.Qh()[4*((iqs/2)%4):]
		v0, v1 = le32(ql), le32(ql[16:])
		vh0, vh1 = le32(qh)>>bq8, le32(qh[16:])>>bq8
		scales = b.Scales()
		d, dmin = b.DM()
	} else {
		b := quant.Q4_KBlock(xrow, kbx)
		q4 := b.Qs()[16*bq8+4*((iqs/2)%4):]
		v0, v1 = le32(q4), le32(q4[16:])
		scales = b.Scales()
		d, dmin = b.DM()
	}
	sc, m := q45KScales(scales, bq8/2)
	nib := "x 4-bit values"
	if q5 {
		nib = "x 5-bit values"
	}
	sumfD, sumfM := e.zeroF(), e.zeroF()
	ones := func() sim.StepArg { return e.in("ones", 0x01010101) }
	for i := 0; i < 2; i++ {
		v0i := (v0 >> (4 * i)) & 0x0F0F0F0F
		v1i := (v1 >> (4 * i)) & 0x0F0F0F0F
		if q5 {
			v0i |= ((vh0 >> i) << 4) & 0x10101010
			v1i |= ((vh1 >> i) << 4) & 0x10101010
		}
		x0 := e.in(fmt.Sprintf("%s %d..%d of sub-block %d", nib, 4*i0, 4*i0+3, bq8+i), v0i)
		x1 := e.in(fmt.Sprintf("%s %d..%d of sub-block %d", nib, 4*i1, 4*i1+3, bq8+i), v1i)
		var dot1, dot2 sim.StepArg
		if q5 {
			dot1 = e.dp4a("dot1", x0, e.yInt(y, bq8+i, i0), e.dp4a("dot1", x1, e.yInt(y, bq8+i, i1), e.zero()))
			dot2 = e.dp4a("dot2 (sum of u)", ones(), e.yInt(y, bq8+i, i0), e.dp4a("dot2 (sum of u)", ones(), e.yInt(y, bq8+i, i1), e.zero()))
		} else {
			dot1 = e.dp4a("dot1", x1, e.yInt(y, bq8+i, i1), e.dp4a("dot1", x0, e.yInt(y, bq8+i, i0), e.zero()))
			dot2 = e.dp4a("dot2 (sum of u)", ones(), e.yInt(y, bq8+i, i1), e.dp4a("dot2 (sum of u)", ones(), e.yInt(y, bq8+i, i0), e.zero()))
		}
		d8 := e.yD(y, bq8+i)
		p := e.imul("dot1 * sc", dot1, e.in(fmt.Sprintf("x scale of sub-block %d", bq8+i), sc[i]))
		sumfD = e.fma("sumf_d", d8, e.i2f("float(dot1*sc)", p), sumfD)
		q := e.imul("dot2 * m", dot2, e.in(fmt.Sprintf("x min of sub-block %d", bq8+i), m[i]))
		sumfM = e.fma("sumf_m", d8, e.i2f("float(dot2*m)", q), sumfM)
	}
	return e.minMaxTail(tmp, sumfD, sumfM, sim.H2F(d), sim.H2F(dmin))
}

func explainQ6_K(e *explainer, tmp sim.StepArg, xrow []byte, kbx, iqs int, y []q8.Block) sim.StepArg {
	b := quant.Q6_KBlock(xrow, kbx)
	bq8 := 4*(iqs/16) + (iqs%16)/8
	scaleOff := 8*(iqs/16) + (iqs%16)/4
	vhShift := 2 * ((iqs % 16) / 8)
	vl := le32(b.Ql()[4*iqs:])
	vh := le32(b.Qh()[4*(8*(iqs/16)+iqs%8):]) >> vhShift
	sumf := e.zeroF()
	for i := 0; i < 2; i++ {
		sc := int32(b.Scale(scaleOff + 4*i))
		vil := (vl >> (4 * i)) & 0x0F0F0F0F
		vih := ((vh >> (4 * i)) << 4) & 0x30303030
		vi := e.in(fmt.Sprintf("x 6-bit values - 32 (ql int %d, qh)", iqs), sim.Vsubss4(vil|vih, 0x20202020))
		d8 := e.yD(y, bq8+2*i)
		dp := e.dp4a("dp4a(v, u)", vi, e.yInt(y, bq8+2*i, iqs%8), e.zero())
		p := e.imul("dp4a * sc", dp, e.in(fmt.Sprintf("x scale %d", scaleOff+4*i), sc))
		sumf = e.fma("sumf", d8, e.i2f("float(dp4a*sc)", p), sumf)
	}
	return e.fma("tmp", sumf, e.inF("h2f(x.d)", sim.H2F(b.D())), tmp)
}

// Table types (table16.go).

// tableSumi is the sumi of MXFP4/IQ4_NL/IQ4_XS: for each of n ints of qs from int q0,
// the dp4a of the table values of the low nibbles with y[j] int i0+l, then of the high
// nibbles with y[j] int i0+l+4.
func (e *explainer) tableSumi(qs []byte, q0, n int, tab *[16]int8, y []q8.Block, j, i0 int) sim.StepArg {
	sumi := e.zero()
	for l := 0; l < n; l++ {
		vx, vy := table16(le32(qs[4*(q0+l):]), tab)
		sumi = e.dp4a("sumi", e.in(fmt.Sprintf("x table values of qs int %d low nibbles", q0+l), vx), e.yInt(y, j, i0+l), sumi)
		sumi = e.dp4a("sumi", e.in(fmt.Sprintf("x table values of qs int %d high nibbles", q0+l), vy), e.yInt(y, j, i0+l+4), sumi)
	}
	return sumi
}

func explainMXFP4(e *explainer, tmp sim.StepArg, xrow []byte, kbx, iqs int, y []q8.Block) sim.StepArg {
	b := quant.MXFP4Block(xrow, kbx)
	sumi := e.tableSumi(b.Qs(), iqs, vdrMXFP4, &quant.KValuesMXFP4, y, 0, iqs)
	h := e.mul("e8m0(x.e)/2", e.inF("e8m0(x.e)", sim.E8M0ToF32(b.E())), e.c(0.5))
	d := e.mul("d = e8m0/2*d8", h, e.yD(y, 0))
	return e.fma("tmp", d, e.i2f("float(sumi)", sumi), tmp)
}

func explainIQ4_NL(e *explainer, tmp sim.StepArg, xrow []byte, kbx, iqs int, y []q8.Block) sim.StepArg {
	b := quant.IQ4_NLBlock(xrow, kbx)
	sumi := e.tableSumi(b.Qs(), iqs, vdrIQ4_NL, &quant.KValuesIQ4NL, y, 0, iqs)
	return e.dTail(tmp, sumi, e.inF("h2f(x.d)", sim.H2F(b.D())), y, 0)
}

func explainIQ4_XS(e *explainer, tmp sim.StepArg, xrow []byte, kbx, iqs int, y []q8.Block) sim.StepArg {
	b := quant.IQ4_XSBlock(xrow, kbx)
	sumi := e.tableSumi(b.Qs(), iqs, vdrIQ4_XS, &quant.KValuesIQ4NL, y, iqs/4, 0)
	scalesH := int32(b.ScalesH())
	ls := (int32(b.ScalesL()[iqs/8])>>(iqs&4))&0x0F | ((scalesH>>(iqs/2))&0x03)<<4
	l := e.iadd("ls - 32", e.in(fmt.Sprintf("x 6-bit scale ls of sub-block %d", iqs/4), ls), e.in("-32", -32))
	sumi = e.imul("sumi * (ls - 32)", sumi, l)
	return e.dTail(tmp, sumi, e.inF("h2f(x.d)", sim.H2F(b.D())), y, iqs/4)
}

// Extra types (extra.go).

func explainNVFP4(e *explainer, tmp sim.StepArg, xrow []byte, kbx, iqs int, y []q8.Block) sim.StepArg {
	b := quant.NVFP4Block(xrow, kbx)
	qs := b.Qs()
	var sumi [2]sim.StepArg
	for i := 0; i < vdrNVFP4/2; i++ {
		iqs0 := iqs + 2*i
		is := iqs0 >> 1
		v0x, v0y := table16(le32(qs[4*iqs0:]), &quant.KValuesMXFP4)
		v1x, v1y := table16(le32(qs[4*(iqs0+1):]), &quant.KValuesMXFP4)
		i8 := (is & 1) << 2
		x := func(w int, hi bool, v int32) sim.StepArg {
			h := "low"
			if hi {
				h = "high"
			}
			return e.in(fmt.Sprintf("x e2m1 values of qs int %d %s nibbles", w, h), v)
		}
		what := fmt.Sprintf("sumi_%d", i)
		s := e.dp4a(what, x(iqs0, false, v0x), e.yInt(y, is>>1, i8+0), e.zero())
		s = e.dp4a(what, x(iqs0, true, v0y), e.yInt(y, is>>1, i8+2), s)
		s = e.dp4a(what, x(iqs0+1, false, v1x), e.yInt(y, is>>1, i8+1), s)
		sumi[i] = e.dp4a(what, x(iqs0+1, true, v1y), e.yInt(y, is>>1, i8+3), s)
	}
	sum := e.zeroF()
	for i := 0; i < vdrNVFP4/2; i++ {
		is := (iqs + 2*i) >> 1
		d := e.mul(fmt.Sprintf("d_%d", i), e.inF(fmt.Sprintf("ue4m3(x.d[%d])/2", is), quant.UE4M3ToFP32CUDA(b.Scale(is))), e.yD(y, is>>1))
		sum = e.fma("sum", d, e.i2f(fmt.Sprintf("float(sumi_%d)", i), sumi[i]), sum)
	}
	return e.add("tmp", sum, tmp)
}

func explainQ1_0(e *explainer, tmp sim.StepArg, xrow []byte, kbx, iqs int, y []q8.Block) sim.StepArg {
	b := quant.Q1_0Block(xrow, kbx)
	sumi := e.zero()
	for j := 0; j < 2; j++ {
		for k, vk := range q1_0Words(b, iqs, j) {
			sumi = e.dp4a("sumi", e.in(fmt.Sprintf("x ±1 values %d..%d (qs bits)", 32*iqs+16*j+4*k, 32*iqs+16*j+4*k+3), vk), e.yInt(y, iqs, 4*j+k), sumi)
		}
	}
	return e.dTail(tmp, sumi, e.inF("h2f(x.d)", sim.H2F(b.D())), y, iqs)
}

func explainQ2_0(e *explainer, tmp sim.StepArg, xrow []byte, kbx, iqs int, y []q8.Block) sim.StepArg {
	b := quant.Q2_0Block(xrow, kbx)
	sumi := e.zero()
	for j := 0; j < 4; j++ {
		qx, qy := q2_0Words(b, iqs, j)
		sumi = e.dp4a("sumi", e.yInt(y, iqs, 2*j), e.in(fmt.Sprintf("x values %d..%d (2-bit codes - 1)", 32*iqs+8*j, 32*iqs+8*j+3), qx), sumi)
		sumi = e.dp4a("sumi", e.yInt(y, iqs, 2*j+1), e.in(fmt.Sprintf("x values %d..%d (2-bit codes - 1)", 32*iqs+8*j+4, 32*iqs+8*j+7), qy), sumi)
	}
	return e.dTail(tmp, sumi, e.inF("h2f(x.d)", sim.H2F(b.D())), y, iqs)
}

// I-quants (iq1.go, iq2.go, iq3.go).

// iq1Delta is FFMA(I2F(bit), -step, -0.875).
func (e *explainer) iq1Delta(what string, bit sim.StepArg, step float32) sim.StepArg {
	return e.fma(what, e.i2f("float(delta bit)", bit), e.c(-step), e.c(iq1DeltaBase))
}

func explainIQ1S(e *explainer, tmp sim.StepArg, xrow []byte, kbx, iqs int, y []q8.Block) sim.StepArg {
	b := quant.IQ1_SBlock(xrow, kbx)
	qs := b.Qs()
	qh := int32(b.Qh(iqs))
	sumi := e.zero()
	for l0 := 0; l0 < 8; l0 += 2 {
		idx := int32(qs[4*iqs+l0/2]) | ((qh>>(3*(l0/2)))&0x07)<<8
		g0, g1 := iq1Grid(int(idx))
		sumi = e.dp4a("sumi", e.in(fmt.Sprintf("x grid %d values 0..3 (+1)", idx), g0), e.yInt(y, iqs, l0), sumi)
		sumi = e.dp4a("sumi", e.in(fmt.Sprintf("x grid %d values 4..7 (+1)", idx), g1), e.yInt(y, iqs, l0+1), sumi)
	}
	d1q := e.mul("d1q = d*(2*scale+1)", e.inF("h2f(x.d)", sim.H2F(b.D())),
		e.i2f("float(2*scale+1)", e.in(fmt.Sprintf("x qh[%d] >> 11 & 0x0E | 1", iqs), ((qh>>11)&0x0E)+1)))
	delta := e.iq1Delta("delta", e.in(fmt.Sprintf("x qh[%d] & 0x8000", iqs), qh&0x8000), iq1sDeltaStep)
	fs := e.i2f("float(sumi)", sumi)
	ds := e.mul("delta*s8", delta, e.yS(y, iqs))
	x := e.fma("d8*sumi + delta*s8", e.yD(y, iqs), fs, ds)
	return e.fma("tmp", d1q, x, tmp)
}

func explainIQ1M(e *explainer, tmp sim.StepArg, xrow []byte, kbx, iqs int, y []q8.Block) sim.StepArg {
	b := quant.IQ1_MBlock(xrow, kbx)
	qs := b.Qs()
	qh := b.Qh()
	sumi := [2]sim.StepArg{e.zero(), e.zero()}
	var sumy, bit [4]sim.StepArg
	for l0 := 0; l0 < 8; l0 += 2 {
		k := l0 / 2
		qhl := int32(qh[2*iqs+l0/4]) >> (4 * (k % 2))
		idx := int32(qs[4*iqs+k]) | (qhl&0x07)<<8
		g0, g1 := iq1Grid(int(idx))
		h := l0 / 4
		what := fmt.Sprintf("sumi_%d", h)
		sumi[h] = e.dp4a(what, e.in(fmt.Sprintf("x grid %d values 0..3 (+1)", idx), g0), e.yInt(y, iqs, l0), sumi[h])
		sumi[h] = e.dp4a(what, e.in(fmt.Sprintf("x grid %d values 4..7 (+1)", idx), g1), e.yInt(y, iqs, l0+1), sumi[h])
		ones := e.in("ones", 0x01010101)
		sw := fmt.Sprintf("sumy_%d (sum of u)", k)
		sumy[k] = e.dp4a(sw, e.yInt(y, iqs, l0+1), ones, e.dp4a(sw, e.yInt(y, iqs, l0), ones, e.zero()))
		bit[k] = e.in(fmt.Sprintf("x delta bit of entry %d (qh & 8)", k), qhl&0x08)
	}
	sumf := [2]sim.StepArg{e.zeroF(), e.zeroF()}
	for k := 0; k < 4; k++ {
		delta := e.iq1Delta(fmt.Sprintf("delta_%d", k), bit[k], iq1mDeltaStep)
		sumf[k/2] = e.fma(fmt.Sprintf("sumf_%d", k/2), delta, e.i2f(fmt.Sprintf("float(sumy_%d)", k), sumy[k]), sumf[k/2])
	}
	a0 := e.add("A_0 = sumf_0 + sumi_0", sumf[0], e.i2f("float(sumi_0)", sumi[0]))
	a1 := e.add("A_1 = sumf_1 + sumi_1", sumf[1], e.i2f("float(sumi_1)", sumi[1]))
	sc0, sc1 := iq1mScales(b, iqs)
	f0 := e.i2f("float(sc0)", e.in("x 2*scale_0+1", sc0))
	m := e.mul("A_1*sc1", a1, e.i2f("float(sc1)", e.in("x 2*scale_1+1", sc1)))
	r := e.fma("R = A_0*sc0 + A_1*sc1", a0, f0, m)
	d := e.mul("d = scale*d8", e.inF("h2f(x.scale)", sim.H2F(b.D())), e.yD(y, iqs))
	return e.fma("tmp", d, r, tmp)
}

// gridSumi dots four grid entries (8 values each as two signed int8x4 words) with
// y ints l0, l0+1 (entry l0/2) into sums[h(l0)].
func (e *explainer) gridSumi(y []q8.Block, j int, sums []sim.StepArg, h func(l0 int) int, entry func(l0 int) (gl, gh int32, name string)) {
	for l0 := 0; l0 < 8; l0 += 2 {
		gl, gh, name := entry(l0)
		k := h(l0)
		what := "sumi"
		if len(sums) > 1 {
			what = fmt.Sprintf("sumi_%d", k)
		}
		sums[k] = e.dp4a(what, e.in(name+" values 0..3 (signed)", gl), e.yInt(y, j, l0), sums[k])
		sums[k] = e.dp4a(what, e.in(name+" values 4..7 (signed)", gh), e.yInt(y, j, l0+1), sums[k])
	}
}

func one(int) int     { return 0 }
func half(l0 int) int { return l0 / 4 }

// scaleSums is (sumi0*ls0 + sumi1*ls1 + (sumi0 + sumi1)/2)/4 (IQ2_XS, IQ2_S).
func (e *explainer) scaleSums(s [2]sim.StepArg, sc byte) sim.StepArg {
	p0 := e.imul("sumi_0*ls0", s[0], e.in("x scale ls0 (low nibble)", int32(sc&0x0F)))
	p1 := e.imul("sumi_1*ls1", s[1], e.in("x scale ls1 (high nibble)", int32(sc>>4)))
	a := e.iadd("sumi_0*ls0 + sumi_1*ls1", p0, p1)
	t := e.iadd("sumi_0 + sumi_1", s[0], s[1])
	h := e.idiv("(sumi_0 + sumi_1)/2", t, e.in("2", 2))
	a = e.iadd("... + (sumi_0 + sumi_1)/2", a, h)
	return e.idiv("sumi = (...)/4", a, e.in("4", 4))
}

func explainIQ2XXS(e *explainer, tmp sim.StepArg, xrow []byte, kbx, iqs int, y []q8.Block) sim.StepArg {
	b := quant.IQ2_XXSBlock(xrow, kbx)
	qs := b.QsBytes()
	q2 := uint32(le32(qs[4*iqs:]))
	aux32 := uint32(le32(qs[4*(iqs+1):]))
	s := []sim.StepArg{e.zero()}
	e.gridSumi(y, iqs/2, s, one, func(k0 int) (int32, int32, string) {
		gi := uint8(q2 >> (8 * (k0 / 2)))
		signs0, signs1 := sim.KsignMasks(quant.UnpackKsigns(uint8(aux32 >> (7 * k0 / 2))))
		g0, g1 := sim.SignedGrid(quant.IQ2XXSGrid(gi), signs0, signs1)
		return g0, g1, fmt.Sprintf("x grid %d", gi)
	})
	p := e.imul("sumi * ls", s[0], e.in("x 2*scale+1 (aux32 >> 27 | 1)", int32(aux32>>27|1)))
	sumi := e.idiv("sumi*ls/8", p, e.in("8", 8))
	return e.dTail(tmp, sumi, e.inF("h2f(x.d)", sim.H2F(b.D())), y, iqs/2)
}

func explainIQ2XS(e *explainer, tmp sim.StepArg, xrow []byte, kbx, iqs int, y []q8.Block) sim.StepArg {
	b := quant.IQ2_XSBlock(xrow, kbx)
	s := []sim.StepArg{e.zero(), e.zero()}
	e.gridSumi(y, iqs/2, s, half, func(l0 int) (int32, int32, string) {
		q2 := b.Qs(2*iqs + l0/2)
		signs0, signs1 := sim.KsignMasks(quant.UnpackKsigns(uint8(q2 >> 9)))
		gl, gh := sim.SignedGrid(quant.IQ2XSGrid(int(q2&0x1FF)), signs0, signs1)
		return gl, gh, fmt.Sprintf("x grid %d", q2&0x1FF)
	})
	sumi := e.scaleSums([2]sim.StepArg{s[0], s[1]}, b.Scales()[iqs/2])
	return e.dTail(tmp, sumi, e.inF("h2f(x.d)", sim.H2F(b.D())), y, iqs/2)
}

func explainIQ2S(e *explainer, tmp sim.StepArg, xrow []byte, kbx, iqs int, y []q8.Block) sim.StepArg {
	b := quant.IQ2_SBlock(xrow, kbx)
	qs := b.Qs()
	ib32 := iqs / 2
	qh := int32(b.Qh()[ib32])
	s := []sim.StepArg{e.zero(), e.zero()}
	e.gridSumi(y, ib32, s, half, func(l0 int) (int32, int32, string) {
		idx := int32(qs[4*ib32+l0/2]) | ((qh << (8 - l0)) & 0x300)
		signs0, signs1 := sim.PackedSignMasks(qs[32+4*ib32+l0/2])
		gl, gh := sim.SignedGrid(quant.IQ2SGrid(int(idx)), signs0, signs1)
		return gl, gh, fmt.Sprintf("x grid %d", idx)
	})
	sumi := e.scaleSums([2]sim.StepArg{s[0], s[1]}, b.Scales()[ib32])
	return e.dTail(tmp, sumi, e.inF("h2f(x.d)", sim.H2F(b.D())), y, ib32)
}

func explainIQ3XXS(e *explainer, tmp sim.StepArg, xrow []byte, kbx, iqs int, y []q8.Block) sim.StepArg {
	b := quant.IQ3_XXSBlock(xrow, kbx)
	qs := b.Qs()
	aux32 := b.ScalesAndSigns(iqs / 2)
	s := []sim.StepArg{e.zero()}
	e.gridSumi(y, iqs/2, s, one, func(l0 int) (int32, int32, string) {
		grid := uint64(quant.IQ3XXSGrid(qs[4*iqs+l0])) | uint64(quant.IQ3XXSGrid(qs[4*iqs+l0+1]))<<32
		signs0, signs1 := sim.KsignMasks(quant.UnpackKsigns(uint8(aux32 >> (7 * l0 / 2))))
		gl, gh := sim.SignedGrid(grid, signs0, signs1)
		return gl, gh, fmt.Sprintf("x grids %d,%d", qs[4*iqs+l0], qs[4*iqs+l0+1])
	})
	ls := e.in("x scale ls (aux32 >> 28)", int32(aux32>>28))
	p := e.imul("ls*sumi", ls, s[0])
	h := e.idiv("sumi/2", s[0], e.in("2", 2))
	a := e.iadd("ls*sumi + sumi/2", p, h)
	sumi := e.idiv("(ls*sumi + sumi/2)/2", a, e.in("2", 2))
	return e.dTail(tmp, sumi, e.inF("h2f(x.d)", sim.H2F(b.D())), y, iqs/2)
}

func explainIQ3S(e *explainer, tmp sim.StepArg, xrow []byte, kbx, iqs int, y []q8.Block) sim.StepArg {
	b := quant.IQ3_SBlock(xrow, kbx)
	qs := b.Qs()
	ib32 := iqs / 2
	qh := int32(b.Qh()[ib32])
	signs := b.Signs()
	s := []sim.StepArg{e.zero()}
	e.gridSumi(y, ib32, s, one, func(l0 int) (int32, int32, string) {
		i0 := int32(qs[4*iqs+l0]) | ((qh << (8 - l0)) & 0x100)
		i1 := int32(qs[4*iqs+l0+1]) | ((qh << (7 - l0)) & 0x100)
		grid := uint64(quant.IQ3SGrid(int(i0))) | uint64(quant.IQ3SGrid(int(i1)))<<32
		signs0, signs1 := sim.PackedSignMasks(signs[4*ib32+l0/2])
		gl, gh := sim.SignedGrid(grid, signs0, signs1)
		return gl, gh, fmt.Sprintf("x grids %d,%d", i0, i1)
	})
	sc := int32(b.Scales()[iqs/4]>>((iqs<<1)&0x04)) & 0x0F
	sumi := e.imul("sumi * (1 + 2*scale)", s[0], e.in("x 1 + 2*scale nibble", 1+2*sc))
	return e.dTail(tmp, sumi, e.inF("h2f(x.d)", sim.H2F(b.D())), y, ib32)
}
