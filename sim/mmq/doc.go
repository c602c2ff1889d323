// Package mmq simulates ggml's mul_mat_q (MMQ) CUDA kernels bit for bit: MUL_MAT of a
// quantized matrix by more than 8 float32 columns on NVIDIA GPUs with int8 MMA (Turing
// and later), src/ggml-cuda/mmq.cuh, mmq-load-tiles.cuh and mmq-vec-dot.cuh at ggml
// commit d99724f2b141.
package mmq
