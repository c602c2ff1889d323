// Package glu is the gated-linear-unit epilogue of ggml's CUDA backend, bit for bit as a
// -use_fast_math build computes it on the GPU: the swiglu, geglu and swiglu_oai of one
// gate value and one up value, in the two places ggml computes them.
//
//   - Fused: the epilogue of mul_mat_vec_q with has_fusion (mmvq.cu), which runs when
//     ggml_cuda_try_fuse (ggml-cuda.cu) fuses {MUL_MAT gate, MUL_MAT up, GLU} or their
//     MUL_MAT_ID forms into one launch (tiling.FuseGLU). The gate and up sums are those
//     of two unfused launches (same launch plan, same reduction); the epilogue first
//     multiplies each by its scale (NVFP4 only: 1.0f without scale tensors) and adds its
//     bias (0.0f without bias tensors: a real FADD, which turns -0 into +0), then
//     result *= silu(gate) or gelu(gate), or result = swiglu_oai(gate, result).
//   - Unfused: unary_gated_op_kernel (dst = op(gate) * up) and swiglu_oai_kernel
//     (unary.cu), on the two matmul outputs.
//
// The per-value functions are ggml_cuda_op_silu_single, ggml_cuda_op_gelu_single and
// ggml_cuda_op_swiglu_oai_single (unary.cuh), written here one float operation at a time
// with package sim's arithmetic (FTZ adds and multiplies, fast-math division Div =
// MUFU.RCP then FMUL, fminf/fmaxf). Where nvcc may contract a*b+c into one FFMA the
// choice is a named constant per site (contractGELUInner), to be set from the SASS.
//
// # Limits
//
// expf and tanhf under -use_fast_math compile to MUFU instructions (ex2.approx, and
// tanh.approx or a sequence around ex2) that ggsim has not measured yet. Until package
// sim provides them, every GLU that needs one (swiglu and swiglu_oai: expf; geglu: tanhf)
// returns an error wrapping ErrUnsupported (errors.ErrUnsupported): Hardware() has nil
// functions. Math lets a test run the formulas with a stand-in (not the hardware's bits).
// Only swiglu, geglu and swiglu_oai are modelled (the GLUs ggml fuses); reglu, geglu_erf,
// geglu_quick and swapped operands are not.
package glu
