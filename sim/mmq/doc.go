// Package mmq simulates ggml's mul_mat_q (MMQ) CUDA kernels bit for bit: MUL_MAT of a
// quantized matrix by more than 8 float32 columns on NVIDIA GPUs with int8 MMA (Turing
// and later), src/ggml-cuda/mmq.cuh, mmq-load-tiles.cuh and mmq-vec-dot.cuh at ggml
// commit d99724f2b141.
//
// MulMatDP4A is the dp4a path of the same kernel (ggml_cuda_mmq_get_util_funcs' first
// switch: the load_tiles `#else` branches, the *_dp4a vec_dots with the vec_dot_*_impl
// functions of vecdotq.cuh, ggml_cuda_mmq_write_back_dp4a), which ggml runs where the
// int8-MMA data layout is not used; it models the H200 build without
// TURING_MMA_AVAILABLE (ampere config table, FAST_FP16_AVAILABLE). Its float orders
// are predicted from the source by LLVM's contraction rule and not yet checked against
// GPU output.
//
// MulMatID is mul_mat_q in MUL_MAT_ID mode (ggml_cuda_mul_mat_q with ids, more than 8
// tokens), on either path: the routing of package moe (mm_ids_helper), the activations
// quantized in the compact expert-sorted column order, one launch channel per expert,
// tiles (it, jt, expert) over the expert's columns, empty tiles skipped in place in the
// stream-K partition (streamk's ExpertCols), the stores and fixup adds through ids_dst.
// Checked against the H200 golden MUL_MAT_ID cases of 40 tokens (int8-MMA path) and 500
// random cases of the H200 dp4a build (gpu/testdata/h200-cuda13-sweep). Not modelled:
// native FP4 (Blackwell) and non-contiguous tensors.
package mmq
