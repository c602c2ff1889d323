// Package mmvq simulates ggml's mul_mat_vec_q (MMVQ) CUDA kernels bit for bit:
// MUL_MAT of a quantized matrix by 1..8 float32 columns, and MUL_MAT_ID (mixture of
// experts) for 1..8 tokens, src/ggml-cuda/mmvq.cu and vecdotq.cuh at ggml commit
// d99724f2b141.
//
// # Model
//
// The activations are quantized by quantize_q8_1 (sim/q8). The launch is decided
// elsewhere: tiling.MakeMMVQPlan ports mul_mat_vec_q_switch_ncols_dst (the parameter
// table of the device, calc_nwarps, calc_rows_per_block, should_use_small_k,
// should_halve_iters, and for MUL_MAT_ID with 2..8 tokens the dedicated
// mul_mat_vec_q_moe kernel, one warp per token), and this package executes the plan it is
// given. The per-type constants QK, QI and VDR also come from tiling (MMVQConstsOf).
//
// For one output (row i, column j) the kernel's threads tid = 0..T-1 (T = nwarps·32, or
// 32 for the MoE kernel) each accumulate, from 0.0f and in ascending order, the x blocks
// kbx = tid/(qi/vdr) + n·(vdr·T/qi) at the int offset iqs = vdr·(tid mod qi/vdr):
//
//	tmp = VecDot(tmp, x row, kbx, iqs, y blocks from kbx·qk/32)
//
// then lane L of warp 0 adds the other warps' partials in warp order,
// R_L = ((P_L + P_{32+L}) + P_{64+L}) + P_{96+L}, and the xor butterfly (offsets 16, 8, 4,
// 2, 1) gives the value written. Each type's VecDot (files legacy.go, kquants.go,
// table16.go, and the IQ/extra types) contains the float sequence read from the SASS of
// every instantiation (mul_mat_vec_q<type, 1..8, ...> and mul_mat_vec_q_moe<type, 2>)
// built with CUDA 13.0.88 for sm_90 (FMA-SITES.md); the instantiations of each of the 13
// types in FMA-SITES.md compute the same sequence, so one function per type serves all.
// The integer dot products (dp4a, vsubss4) are exact.
//
// The vec_dots read the weight blocks through package quant's block views (quant.Q4_KBlock
// and friends), and qk and qi are the format's constants from quant.Type.Traits (QI, and
// BlockSize = qk); only vdr, a kernel parameter (VDR_<type>_Q8_1_MMVQ), is defined here.
// TestKernelConstantsFromQuant checks every registered kernel against quant's named
// constants. The arithmetic facts behind the float sequences, and where each was measured,
// are in docs/arithmetic.md.
//
// rows_per_block, small_k and the order of blocks in the grid have no numeric effect
// (every row is reduced on its own with the same partition); nwarps, halve_iters (GB10)
// and the MoE kernel change the partition and therefore the bits.
//
// # Modes
//
// The fast mode (MulMat, MulMatID) computes every output's per-thread partial sums
// directly, rows in parallel on GOMAXPROCS goroutines. Options{Trace: true} runs the
// launch lane by lane — CUDA block by block, warp by warp — through simulated shared
// memory and sim.Warp shuffles, and can report every float step with its row, column,
// slot, block, warp and lane (Event). Both give the same bits (TestTraceMatchesFast).
// ExplainVecDot goes one level further down: one vec_dot call's dp4a sums, integer scale
// steps and float operations, each with its operands (explain.go; it reuses the integer
// helpers of the fast vec_dots and ends with the fast function's bits,
// TestExplainMatchesVecDot).
//
// Built with GOEXPERIMENT=simd on amd64 (AVX2 and FMA at run time), the fast mode runs
// Q4_K, Q5_K, Q6_K, Q8_0, IQ4_XS, Q4_0, Q5_0, Q4_1 and Q5_1 on the thread-lane path
// (threads8_simd.go, threads8_legacy_simd.go): one row at a time, eight simulated threads
// of the row in the eight lanes of a vector, each lane doing its thread's float steps in
// the scalar order, then the cross-warp adds and the butterfly in the GPU's order. It
// uses the CPU's IEEE float32 operations without lane checks: in these vec_dots every
// value is a product of at most two binary16 values and integers, so a multiple of
// 2^-48 (2^-25 for Q4_1/Q5_1's halved mins), never in the flush range, and with finite
// halves nothing overflows; a row group in which a half is Inf or NaN (or a q8_1 value
// is -128 where the kernel carries x's sign on y, or a binary16 product overflows) goes
// to the checked 8-row path (rows8_simd.go and the files next to it), where each lane is
// one row and a lane that leaves the exact range is recomputed by the scalar vec_dot.
// Both give the scalar path's bits (TestThreads8MatchesScalar, TestRows8MatchesScalar,
// TestRows8Dots). Every other build and type runs the scalar vec_dots.
//
// # Scope and assumptions
//
//   - Only NVIDIA arithmetic (32-lane warps, -use_fast_math FTZ, MUFU tables of sm_90) is
//     modelled; tiling.MakeMMVQPlan also describes AMD launches, MulMat refuses them with an
//     error wrapping sim.ErrUnsupported (errors.ErrUnsupported).
//   - The vec_dot float sequences were read from sm_90 SASS; for other NVIDIA
//     architectures they are an assumption (ptxas could contract differently).
//   - Calling this package directly does not check the dispatch: MulMat and MulMatID
//     simulate MMVQ whenever they are asked to, also for a shape ggml would send to MMQ
//     or cuBLAS on the device. Whether ggml dispatches MMVQ (tiling.MulMat,
//     tiling.MulMatID) is checked by the front door, the root package ggsim (ggsim.MulMat,
//     ggsim.MulMatID), which is what users and the verifier call.
//   - Verified against the golden files of an H200 (ggml-h200-dev-mmvq.gguf: 104
//     mul_mat cases of 13 types, batch 1..8; ggml-h200-dev-moe.gguf: the mul_mat_id
//     cases with 1, 3 and 8 tokens): every output bit-exact.
package mmvq
