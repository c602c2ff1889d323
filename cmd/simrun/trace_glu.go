package main

import (
	"errors"
	"fmt"
	"io"
	"math"

	"github.com/ggsim/ggsim"
	"github.com/ggsim/ggsim/sim"
	"github.com/ggsim/ggsim/tiling"
)

// gluTraceJSON is the GLU part of a trace (--glu, or a golden mul_mat_glu /
// mul_mat_id_glu case): the gate's and the up's outputs traced as MUL_MAT(_ID) traces
// are, then the epilogue instruction by instruction.
type gluTraceJSON struct {
	GLU    string `json:"glu"`
	Alpha  *f32v  `json:"alpha,omitempty"` // swiglu_oai: the op's parameters
	Limit  *f32v  `json:"limit,omitempty"`
	Fused  bool   `json:"fused"`
	Reason string `json:"reason"`
	// Epilogue names the code of the steps: mmvq.cu's fused epilogue or unary.cu's kernel.
	Epilogue string       `json:"epilogue"`
	Gate     *traceReport `json:"gate"`
	Up       *traceReport `json:"up"`
	Steps    []stepJSON   `json:"steps"`
}

// traceGLU traces output (row, col) of {MUL_MAT(_ID) gate, MUL_MAT(_ID) up, GLU}: whether
// ggml fuses is tiling.FuseGLU's decision (or fusion disabled); the gate's output with
// every detail, the up's with stepLanes 0, both followed through the fused launch's
// mul_mat_vec_q or the unfused matmuls' kernels; then sim.ExplainGLUFused or
// ExplainGLUUnfused on their bits. The end check is ggsim.MulMatGLU (MulMatIDGLU).
func traceGLU(in *traceInput, row, col, maxBlocks, stepLanes int) (*traceReport, error) {
	if len(in.up) != len(in.w) {
		return nil, fmt.Errorf("trace: the up weights have %d bytes, the gate's %d: want the same type and shape", len(in.up), len(in.w))
	}
	s := tiling.Shape{K: int64(in.K), N: int64(in.N), M: int64(in.M), Experts: int64(in.E)}
	fused, why := tiling.FuseGLU(in.dev, in.typ, s, int64(in.B1))
	if !in.fusion {
		fused, why = false, "fusion disabled (GGML_CUDA_DISABLE_FUSION=1)"
	}
	g := &gluTraceJSON{GLU: string(in.glu.Op), Fused: fused, Reason: why,
		Epilogue: "unary.cu: the GLU kernel on the two matmuls' f32 outputs (sim.GLUUnfused)"}
	if in.glu.Op == "swiglu_oai" {
		a, l := f32v(in.glu.Alpha), f32v(in.glu.Limit)
		g.Alpha, g.Limit = &a, &l
	}
	sub := *in
	sub.glu, sub.up, sub.gpu = nil, nil, nil
	if fused {
		if !tiling.HasMMVQKernel(in.typ) {
			return nil, fmt.Errorf("ggml fuses the GLU of %v into mul_mat_vec_q, which has no kernel for it and aborts: %w", in.typ, errors.ErrUnsupported)
		}
		sub.forced = &tiling.Decision{Kernel: tiling.KernelMMVQ, Reason: why}
		g.Epilogue = "mmvq.cu: mul_mat_vec_q's fused epilogue, with the 0.0f biases (sim.GLUFused)"
	}
	gateIn, upIn := sub, sub
	upIn.w = in.up
	op, err := in.glu.SimOp()
	if err != nil {
		return nil, err
	}
	if g.Gate, err = trace(&gateIn, row, col, maxBlocks, stepLanes); err != nil {
		return nil, fmt.Errorf("gate: %w", err)
	}
	if g.Up, err = trace(&upIn, row, col, maxBlocks, 0); err != nil {
		return nil, fmt.Errorf("up: %w", err)
	}
	gv, uv := float32(g.Gate.Value), float32(g.Up.Value)
	var steps []sim.Step
	if fused {
		steps = sim.ExplainGLUFused(op, gv, uv, 0, 0)
	} else {
		steps = sim.ExplainGLUUnfused(op, gv, uv, in.glu.Alpha, in.glu.Limit)
	}
	g.Steps = stepsJSON(steps)

	gw := ggsim.Weights{Type: in.typ, K: in.K, N: in.N, E: in.E, Data: in.w}
	uw := gw
	uw.Data = in.up
	var res ggsim.Result
	if in.E > 0 {
		res, err = ggsim.MulMatIDGLU(in.dev, gw, uw, in.b, in.B1, in.M, in.ids, in.U, *in.glu, in.fusion)
	} else {
		res, err = ggsim.MulMatGLU(in.dev, gw, uw, in.b, in.M, *in.glu, in.fusion)
	}
	if err != nil {
		return nil, err
	}
	rep := &traceReport{Device: in.dev.Name, Source: in.source, Op: "MUL_MAT+GLU", Type: in.typ.String(), K: in.K, N: in.N, M: in.M,
		Row: row, Col: col, Kernel: g.Gate.Kernel, Reason: g.Gate.Reason, ID: g.Gate.ID, GLU: g}
	if in.E > 0 {
		rep.Op = "MUL_MAT_ID+GLU"
	}
	rep.Value = f32v(steps[len(steps)-1].Float)
	idx := col*in.N + row
	rep.Fast = f32v(res.Out[idx])
	rep.MatchFast = math.Float32bits(res.Out[idx]) == math.Float32bits(float32(rep.Value))
	rep.OK = rep.MatchFast && g.Gate.OK && g.Up.OK
	if in.gpu != nil {
		v := f32v(in.gpu[idx])
		m := math.Float32bits(in.gpu[idx]) == math.Float32bits(float32(rep.Value))
		rep.GPU, rep.MatchGPU = &v, &m
		rep.OK = rep.OK && m
	}
	return rep, nil
}

// writeGLUText writes a GLU trace: the gate's trace, the up's, the epilogue's steps.
func writeGLUText(w io.Writer, r *traceReport) {
	g := r.GLU
	what := fmt.Sprintf("row %d . column %d of MUL_MAT %s K=%d N=%d M=%d", r.Row, r.Col, r.Type, r.K, r.N, r.M)
	if id := r.ID; id != nil {
		what = fmt.Sprintf("row %d of expert %d . token %d of MUL_MAT_ID %s K=%d N=%d, %d tokens, %d experts, %d used per token (%s)",
			r.Row, id.Expert, id.Token, r.Type, r.K, r.N, r.M, id.Experts, id.Used, id.Routing)
	}
	params := ""
	if g.Alpha != nil {
		params = fmt.Sprintf(" with alpha %v, limit %v", *g.Alpha, *g.Limit)
	}
	fmt.Fprintf(w, "trace: dst[%d] = %s(gate, up)%s of %s on %s (%s)\n", r.Col*r.N+r.Row, g.GLU, params, what, r.Device, r.Source)
	fused := "not fused"
	if g.Fused {
		fused = "fused"
	}
	fmt.Fprintf(w, "GLU %s: %s\n", fused, g.Reason)
	if g.Fused && g.Alpha != nil {
		fmt.Fprintln(w, "(the fused epilogue calls ggml_cuda_op_swiglu_oai_single with its defaults alpha 1.702 and limit 7, whatever the op's)")
	}
	fmt.Fprintf(w, "\n=== gate: the gate weights' output\n")
	writeTraceText(w, g.Gate)
	fmt.Fprintf(w, "\n=== up: the up weights' output (no steps inside the vec_dot calls)\n")
	writeTraceText(w, g.Up)
	fmt.Fprintf(w, "\n=== epilogue: %s\n", g.Epilogue)
	for i, st := range g.Steps {
		fmt.Fprintf(w, "  %s\n", stepText(i, st))
	}
	fmt.Fprintf(w, "\nvalue: %v\n", r.Value)
	front := "ggsim.MulMatGLU"
	if r.ID != nil {
		front = "ggsim.MulMatIDGLU"
	}
	fmt.Fprintf(w, "%s: %v (%s)\n", front, r.Fast, map[bool]string{true: "same bits", false: "DIFFERENT BITS"}[r.MatchFast])
	if r.GPU != nil {
		fmt.Fprintf(w, "GPU (golden): %v (%s)\n", *r.GPU, map[bool]string{true: "same bits", false: "DIFFERENT BITS"}[*r.MatchGPU])
	}
}
