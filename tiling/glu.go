package tiling

import (
	"fmt"

	"github.com/ggsim/ggsim/quant"
	"github.com/ggsim/ggsim/sim"
)

// FuseGLU decides whether ggml's CUDA backend, with graph fusion allowed (no
// GGML_CUDA_DISABLE_FUSION), runs a graph {MUL_MAT gate, MUL_MAT up, GLU} (or its
// MUL_MAT_ID form, s.Experts > 0) as one mul_mat_vec_q launch with the GLU epilogue, and
// why. b1 is ne11 of src1 for MUL_MAT_ID (activation rows per token), ignored for
// MUL_MAT. It is ggml_cuda_try_fuse's mul_mat/mul_mat_id + GLU branch (ggml-cuda.cu):
// ggml_cuda_should_fuse_mul_mat (same weight type and shape, shared src1 and ids, a
// swiglu/geglu/swiglu_oai GLU with the gate first: assumed here, as the golden schema
// builds it), then ggml_cuda_should_fuse_mul_mat_vec_f (float weights: never here, see
// below) or ggml_cuda_should_fuse_mul_mat_vec_q: a quantized src0, src1->ne[1] <= 8, a
// GPU newer than Pascal, and one output column (MUL_MAT: M = 1; MUL_MAT_ID: one token).
//
// Float weights (f32, f16, bf16) would fuse into mul_mat_vec_f, which ggsim does not
// model; FuseGLU reports them as not fused with that reason. When it returns false the
// three nodes run unfused: the two matmuls as MulMat/MulMatID decide, then unary.cu's
// GLU kernel.
func FuseGLU(dev sim.Device, t quant.Type, s Shape, b1 int64) (bool, string) {
	if !isQuantized(t) {
		return false, fmt.Sprintf("%v is not quantized: ggml_cuda_should_fuse_mul_mat_vec_q is false (float weights fuse into mul_mat_vec_f, not modelled)", t)
	}
	ne11 := s.M
	if s.ID() {
		ne11 = b1
	}
	switch {
	case ne11 > MMVQMaxBatchSize:
		return false, fmt.Sprintf("src1->ne[1] = %d > MMVQ_MAX_BATCH_SIZE", ne11)
	case dev.CC <= sim.CCPascal:
		return false, fmt.Sprintf("cc %d <= GGML_CUDA_CC_PASCAL: fusion is not universally faster on Pascal", dev.CC)
	case s.M != 1 && !s.ID():
		return false, fmt.Sprintf("MUL_MAT with %d columns: fusion only for ncols_dst = 1", s.M)
	case s.M != 1:
		return false, fmt.Sprintf("MUL_MAT_ID with %d tokens: fusion only for dst->ne[2] = 1", s.M)
	}
	return true, "ggml_cuda_try_fuse: {gate, up, GLU} as one mul_mat_vec_q with the GLU epilogue (ncols_dst = 1)"
}
