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
// Speed. Only the float sequence per output element is the GPU's; the exact int32 dots
// under it are computed for a whole tile's columns at once (dots.go: three columns per
// int64 multiply, four for rows of small values), and tiles run on GOMAXPROCS
// goroutines; neither changes a bit (TestPackedDotsExact, TestMulMatGOMAXPROCS).
// BenchmarkMulMat measures an FFN-sized layer; docs/speed.md records its numbers and
// profile.
package mmq
