package glu

import (
	"fmt"

	"github.com/ggsim/ggsim/internal/errs"
	"github.com/ggsim/ggsim/sim"
)

// ErrUnsupported is wrapped by the error of a GLU ggsim does not model. It matches
// errors.ErrUnsupported.
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

// simOp returns package sim's GLUOp for s.
func (s Spec) simOp() (sim.GLUOp, error) {
	switch s.Op {
	case SwiGLU:
		return sim.GLUSwiGLU, nil
	case GeGLU:
		return sim.GLUGeGLU, nil
	case SwiGLUOAI:
		return sim.GLUSwiGLUOAI, nil
	}
	return 0, fmt.Errorf("%w: GLU %q (modelled: swiglu, geglu, swiglu_oai)", ErrUnsupported, s.Op)
}

// SimOp returns package sim's GLUOp for s (sim.GLUFused, sim.ExplainGLUFused and their
// unfused forms take it), or an error wrapping ErrUnsupported.
func (s Spec) SimOp() (sim.GLUOp, error) { return s.simOp() }

// Check returns an error wrapping ErrUnsupported unless s is a modelled GLU, so that a
// caller can refuse before computing the matmuls.
func Check(s Spec) error {
	_, err := s.simOp()
	return err
}

func checkLens(gate, up, out []float32) error {
	if len(gate) != len(up) || len(out) != len(up) {
		return fmt.Errorf("glu: %d gate, %d up and %d output values: want equal lengths", len(gate), len(up), len(out))
	}
	return nil
}

// Fused computes out[i] = the fused mul_mat_vec_q epilogue (sim.GLUFused) of the
// reduced gate and up sums gate[i], up[i], without bias tensors (ggml still adds a 0.0f
// bias: a -0 sum becomes +0). The fused swiglu_oai uses ggml's default alpha 1.702 and
// limit 7 whatever s says (the fused kernel calls ggml_cuda_op_swiglu_oai_single without
// them): fused and unfused swiglu_oai differ for other parameters.
func Fused(s Spec, gate, up, out []float32) error {
	op, err := s.simOp()
	if err != nil {
		return err
	}
	if err := checkLens(gate, up, out); err != nil {
		return err
	}
	for i := range out {
		out[i] = sim.GLUFused(op, gate[i], up[i], 0, 0)
	}
	return nil
}

// Unfused computes out[i] = GLU(gate[i], up[i]) as unary.cu's kernels do on the two
// matmul outputs (sim.GLUUnfused: op(gate)*up, or swiglu_oai with s.Alpha and s.Limit).
func Unfused(s Spec, gate, up, out []float32) error {
	op, err := s.simOp()
	if err != nil {
		return err
	}
	if err := checkLens(gate, up, out); err != nil {
		return err
	}
	for i := range out {
		out[i] = sim.GLUUnfused(op, gate[i], up[i], s.Alpha, s.Limit)
	}
	return nil
}
