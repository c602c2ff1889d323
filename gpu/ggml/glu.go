package ggml

import (
	"fmt"

	"github.com/ggsim/ggsim/gguf/golden"
)

// GLU selects the gated linear unit applied to a gate and an up matmul: Op is golden's
// GLU kind (golden.GLUSwiGLU: ggml_swiglu_split, golden.GLUGeGLU: ggml_geglu_split,
// golden.GLUSwiGLUOAI: ggml_swiglu_oai with Alpha and Limit), always with the gate as
// ggml's first argument.
//
// Fused selects how the graph runs. True: one graph of gate matmul, up matmul and GLU,
// which ggml's CUDA backend fuses into one mul_mat_vec_q launch with the GLU epilogue
// when ggml_cuda_should_fuse_mul_mat allows it (one token, MMVQ types; ggml-cuda.cu) and
// the process does not set GGML_CUDA_DISABLE_FUSION. False: three graphs (gate matmul,
// up matmul, the GLU of their outputs), so that the matmuls and the unfused GLU kernel
// (unary.cu) run as they do with GGML_CUDA_DISABLE_FUSION=1, which ggml reads once per
// process (ggml_cuda_try_fuse) and so cannot be switched per case.
type GLU struct {
	Op           string
	Alpha, Limit float32
	Fused        bool
}

func (g GLU) String() string {
	s := g.Op
	if g.Op == golden.GLUSwiGLUOAI {
		s = fmt.Sprintf("%s(alpha=%g, limit=%g)", g.Op, g.Alpha, g.Limit)
	}
	if g.Fused {
		return s + " fusion allowed"
	}
	return s + " fusion disabled"
}
