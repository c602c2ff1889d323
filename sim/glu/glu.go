package glu

import (
	"fmt"

	"github.com/ggsim/ggsim/internal/errs"
	"github.com/ggsim/ggsim/sim"
)

// ErrUnsupported is wrapped by the error of a GLU that needs a function ggsim has not
// measured, or of a GLU ggsim does not model. It matches errors.ErrUnsupported.
var ErrUnsupported = errs.Unsupported("glu: not modelled")

// Op is a GLU, spelled as the golden schema spells it.
type Op string

// The GLUs ggml's CUDA backend fuses into mul_mat_vec_q (ggml_cuda_should_fuse_mul_mat).
const (
	SwiGLU    Op = "swiglu"     // ggml_swiglu_split(gate, up): silu(gate) * up
	GeGLU     Op = "geglu"      // ggml_geglu_split(gate, up): gelu(gate) * up (tanh form)
	SwiGLUOAI Op = "swiglu_oai" // ggml_swiglu_oai(gate, up, alpha, limit)
)

// Spec is one GLU with its parameters (Alpha and Limit: swiglu_oai only).
type Spec struct {
	Op           Op
	Alpha, Limit float32
}

func (s Spec) String() string {
	if s.Op == SwiGLUOAI {
		return fmt.Sprintf("%s(alpha=%g, limit=%g)", s.Op, s.Alpha, s.Limit)
	}
	return string(s.Op)
}

// Math holds the transcendental functions the epilogues call, as the GPU computes them
// under -use_fast_math: Expf is expf, Tanhf is tanhf. A nil function is not modelled.
type Math struct {
	Expf, Tanhf func(float32) float32
}

// expf and tanhf are the GPU's functions once measured (package sim); nil until then.
// Plugging in sim's functions here is the one change that makes GLU cases run.
var (
	expf  func(float32) float32
	tanhf func(float32) float32
)

// Hardware returns the functions as measured on the GPU (nil where ggsim has not
// measured them: then the GLUs that need them return ErrUnsupported).
func Hardware() Math { return Math{Expf: expf, Tanhf: tanhf} }

// Check returns an error unless s is a modelled GLU whose functions m has (wrapping
// ErrUnsupported), so that a caller can refuse before computing the matmuls.
func (m Math) Check(s Spec) error {
	switch s.Op {
	case SwiGLU, SwiGLUOAI:
		if m.Expf == nil {
			return fmt.Errorf("%w: %s needs expf, which -use_fast_math compiles to MUFU.EX2: MUFU.EX2 not measured", ErrUnsupported, s.Op)
		}
	case GeGLU:
		if m.Tanhf == nil {
			return fmt.Errorf("%w: %s needs tanhf under -use_fast_math (MUFU.TANH or MUFU.EX2): not measured", ErrUnsupported, s.Op)
		}
	default:
		return fmt.Errorf("%w: GLU %q (modelled: swiglu, geglu, swiglu_oai)", ErrUnsupported, s.Op)
	}
	return nil
}

// Fused computes out[i] = the fused mul_mat_vec_q epilogue of gate[i] and up[i] (the
// gate's and the up matmul's sums), as mmvq.cu does without bias and scale tensors;
// nvfp4 selects the NVFP4 instantiation, which also multiplies both by a scale of 1.0f.
func Fused(m Math, s Spec, gate, up, out []float32, nvfp4 bool) error {
	if err := m.Check(s); err != nil {
		return err
	}
	if len(gate) != len(up) || len(out) != len(up) {
		return fmt.Errorf("glu: %d gate, %d up and %d output values: want equal lengths", len(gate), len(up), len(out))
	}
	for i := range out {
		result, g := up[i], gate[i]
		if nvfp4 {
			result = sim.Mul(result, 1) // result *= x_scales
			g = sim.Mul(g, 1)           // gate_value *= gate_scales
		}
		result = biasAdd(result) // result += x_biases[j]
		g = biasAdd(g)           // gate_value += gate_biases[j]
		switch s.Op {
		case SwiGLU:
			result = sim.Mul(result, m.silu(g))
		case GeGLU:
			result = sim.Mul(result, m.gelu(g))
		case SwiGLUOAI:
			result = m.swigluOAI(g, result, s.Alpha, s.Limit)
		}
		out[i] = result
	}
	return nil
}

// Unfused computes out[i] = GLU(gate[i], up[i]) as unary.cu's kernels do on the two
// matmul outputs: unary_gated_op_kernel dst = op(x) * g with x the gate, g the up value;
// swiglu_oai_kernel dst = ggml_cuda_op_swiglu_oai_single(x, g, alpha, limit).
func Unfused(m Math, s Spec, gate, up, out []float32) error {
	if err := m.Check(s); err != nil {
		return err
	}
	if len(gate) != len(up) || len(out) != len(up) {
		return fmt.Errorf("glu: %d gate, %d up and %d output values: want equal lengths", len(gate), len(up), len(out))
	}
	for i := range out {
		switch s.Op {
		case SwiGLU:
			out[i] = sim.Mul(m.silu(gate[i]), up[i])
		case GeGLU:
			out[i] = sim.Mul(m.gelu(gate[i]), up[i])
		case SwiGLUOAI:
			out[i] = m.swigluOAI(gate[i], up[i], s.Alpha, s.Limit)
		}
	}
	return nil
}

// biasAdd is `v += bias` of the fused epilogue with the zero-initialised bias register
// (no bias tensor): FADD.FTZ v, 0.0f, which turns -0 into +0. Not yet read from the SASS:
// if nvcc turns out to drop the add, this becomes the identity.
func biasAdd(v float32) float32 { return sim.Add(v, 0) }

// silu is ggml_cuda_op_silu_single: x / (1.0f + expf(-x)).
func (m Math) silu(x float32) float32 {
	return sim.Div(x, sim.Add(1, m.Expf(sim.Neg(x))))
}

// The constants of ggml_cuda_op_gelu_single, as float32.
const (
	geluCoefA    float32 = 0.044715
	sqrt2OverPi  float32 = 0.79788456080286535587989211986876
	contractGELU         = true // 1.0f + GELU_COEF_A*x*x as one FFMA (see geluInner)
)

// geluInner is 1.0f + GELU_COEF_A * x * x, i.e. (GELU_COEF_A*x)*x + 1.0f: with
// contractGELU one FFMA of (GELU_COEF_A*x, x, 1.0f), as nvcc's default -fmad=true
// contracts a product feeding an add; else FMUL then FADD. To be confirmed from the SASS.
func geluInner(x float32) float32 {
	ax := sim.Mul(geluCoefA, x)
	if contractGELU {
		return sim.FMA(ax, x, 1)
	}
	return sim.Add(sim.Mul(ax, x), 1)
}

// gelu is ggml_cuda_op_gelu_single:
// 0.5f * x * (1.0f + tanhf(SQRT_2_OVER_PI * x * (1.0f + GELU_COEF_A * x * x))),
// evaluated left to right: (0.5f*x) * (1 + tanhf((SQRT_2_OVER_PI*x) * inner)).
func (m Math) gelu(x float32) float32 {
	half := sim.Mul(0.5, x)
	arg := sim.Mul(sim.Mul(sqrt2OverPi, x), geluInner(x))
	return sim.Mul(half, sim.Add(1, m.Tanhf(arg)))
}

// swigluOAI is ggml_cuda_op_swiglu_oai_single(x, g, alpha, limit):
// x = fminf(x, limit); g = fmaxf(fminf(g, limit), -limit);
// out = x / (1.0f + expf(-x * alpha)); out = out * (1.0f + g).
func (m Math) swigluOAI(x, g, alpha, limit float32) float32 {
	x = sim.FMinf(x, limit)
	g = sim.FMaxf(sim.FMinf(g, limit), sim.Neg(limit))
	out := sim.Div(x, sim.Add(1, m.Expf(sim.Mul(sim.Neg(x), alpha))))
	return sim.Mul(out, sim.Add(1, g))
}
