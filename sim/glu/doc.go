// Package glu applies the gated-linear-unit epilogues of ggml's CUDA backend to the
// outputs of a gate and an up matmul, in the two places ggml computes them:
//
//   - Fused: the epilogue of mul_mat_vec_q with has_fusion (mmvq.cu), which runs when
//     ggml_cuda_try_fuse (ggml-cuda.cu) fuses {MUL_MAT gate, MUL_MAT up, GLU} or their
//     MUL_MAT_ID forms into one launch (tiling.FuseGLU). The gate and up sums are those
//     of two unfused launches (same launch plan, same reduction); the epilogue adds the
//     zero bias to each (FADD: -0 becomes +0) and computes result·silu(gate),
//     result·gelu(gate) or swiglu_oai(gate, result) with ggml's default alpha and limit.
//   - Unfused: unary_gated_op_kernel (dst = op(gate)·up) and swiglu_oai_kernel
//     (unary.cu), on the two matmul outputs, with the op's alpha and limit.
//
// The per-value arithmetic is package sim's (sim.GLUFused, sim.GLUUnfused: the SASS
// sequences of the H200 build, with MUFU.EX2 and MUFU.TANH as measured); this package
// names the GLUs as the golden schema does (Spec) and runs them over slices.
//
// # Limits
//
// Only swiglu, geglu and swiglu_oai are modelled (the GLUs ggml fuses); reglu,
// geglu_erf, geglu_quick and swapped operands are not (ErrUnsupported). No bias or scale
// tensors (ggml's {mul_mat, add, mul_mat, add, glu} fusion).
package glu
