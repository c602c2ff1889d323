// Package tiling holds ggml's pure launch decisions for quantized matmuls on a given
// device: which kernel a MUL_MAT or MUL_MAT_ID dispatches to (MMVQ, MMQ or neither), and
// why. It does no arithmetic. Every rule is ported from ggml's CUDA backend at commit
// d99724f2b141 (src/ggml-cuda/ggml-cuda.cu ggml_cuda_mul_mat / ggml_cuda_mul_mat_id,
// mmvq.cu ggml_cuda_should_use_mmvq / get_mmvq_mmid_max_batch, mmq.cu
// ggml_cuda_should_use_mmq) and names its source in its doc comment.
//
// The decisions assume what the golden files and the simulator assume: src0 quantized,
// src1 and dst f32, contiguous tensors, no GGML_CUDA_FORCE_MMQ / FORCE_CUBLAS build
// options and no "bad padding clear" (a src0 in a compute buffer).
package tiling
