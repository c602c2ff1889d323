// Package mmq simulates ggml's mul_mat_q (MMQ) CUDA kernels bit for bit: MUL_MAT of a
// quantized matrix by more than 8 float32 columns, src/ggml-cuda/mmq.cuh,
// mmq-load-tiles.cuh and mmq-vec-dot.cuh at ggml commit d99724f2b141, for every type
// ggml's MMQ supports (IQ1_M has none).
//
// # Model
//
// A launch executes a Plan: the config row, J and tile counts decided by package
// tiling (MakeMMQPlan) and the stream-K partition of package streamk. The activations
// are quantized by quantize_mmq_q8_1 in the type's layout (D4, DS4 or D2S6; sim/q8).
// Each output element (row i, column j) of a tile is the sum, in the kernel's order, of
// its K range(s):
//
//   - per stream-K range [kb0_start, kb0_stop) of a CUDA block: a partial sum from
//     0.0f, one tile-loop iteration (256 values, blocks_per_iter weight blocks) at a
//     time; each iteration runs the type's load_tiles arithmetic (the int8 values and
//     the scales as shared memory holds them) and its vec_dot twice (values 0..127 and
//     128..255), whose float sequence per 32-value block is the source's with the
//     contractions nvcc makes (each kernel file names them);
//   - a tile covered by one range stores that sum; a split tile stores the end
//     segment's partial, and mul_mat_q_stream_k_fixup adds the others:
//     dst = P_end + (((0 + P_a) + P_b) + ...) in the partition's order.
//
// The integer dot products (mma.sync m16n8k32 / dp4a) are exact, so which thread owns
// which output (the fragment layout, write_back) has no numeric effect. A read past a
// row's end (blocks_per_ne00 not a multiple of blocks_per_iter) reads the next row's
// blocks, or zeros past the tensor, against zero activations, as on the GPU.
//
// Two data paths: the int8-MMA layout (ggml_cuda_mmq_get_util_funcs' second switch:
// Turing and later, what an H100/H200 runs) and the dp4a layout (the first switch: the
// load_tiles #else branches, the *_dp4a vec_dots with vecdotq.cuh's _impl functions),
// which ggml runs without int8 MMA — Pascal and Volta, or an H200 build with
// TURING_MMA_AVAILABLE removed (sim.Device.NoTuringMMA). The plan chooses the path from
// the device (tiling.UseMMADataLayout).
//
// MulMatID is mul_mat_q in MUL_MAT_ID mode (ggml_cuda_mul_mat_q with ids, more than 8
// tokens), on either path: the routing of package moe (mm_ids_helper), the activations
// quantized in the compact expert-sorted column order, one launch channel per expert,
// tiles (it, jt, expert) over the expert's columns, empty tiles skipped in place in the
// stream-K partition (streamk's ExpertCols), the stores and fixup adds through ids_dst.
//
// # Measured
//
// MMA path: every MMQ case of the shared H200 golden files (13 types at batch 9, 33,
// 130 and 9 more at batch 40; stream-K with 2..4 tiles over 132 blocks) bit-exact.
// dp4a path: 2000 of 2000 random MUL_MAT cases of a real H200 build without int8 MMA,
// all 22 types, plain, adversarial and non-finite data, and 500 of 500 random
// MUL_MAT_ID cases (9..600 tokens, 4..128 experts, uniform, hot, sparse and
// all-to-one routings) of the same build (gpu/testdata/h200-cuda13-sweep). MUL_MAT_ID on
// the MMA path: the H200 golden cases of 40 tokens (q4_K, q8_0, q6_K, mxfp4). The contraction sites were chosen by LLVM's rule
// and confirmed where a golden case could tell (e.g. dotQ8_0_16Q8_1, Q2_K's last
// quarter); some products are exact, where no test can tell.
// FMA-SITES-MMQ.md checks every site against the sm_90 SASS of ten types on both paths.
//
// # Speed
//
// Only the float sequence per output element is the GPU's; the exact int32 dots under it
// are computed for a whole tile's columns at once (dots.go: three columns per int64
// multiply, four for rows of small values), and tiles run on GOMAXPROCS goroutines;
// neither changes a bit (TestPackedDotsExact, TestMulMatGOMAXPROCS). BenchmarkMulMat
// measures an FFN-sized layer; docs/speed.md records its numbers and profile.
//
// Built with GOEXPERIMENT=simd on amd64 (AVX2 and FMA), tiles of every type with an MMQ
// kernel (both paths; TestTile8CoversEveryKernel), MUL_MAT and MUL_MAT_ID, run eight
// columns side by side
// (tile8_simd.go): the integer dots by VPMADDUBSW/VPMADDWD on y blocks transposed once
// per tile, each column's float sequence in its own lane with package sim's 8-lane
// functions. TestTile8MatchesScalar, TestTile8MatchesScalarID and TestTile8GOMAXPROCS
// require the scalar path's bits; every other build runs the scalar path.
//
// # Step-through
//
// TraceOutput follows one output through the same loads, integer dots and float
// sequence as MulMat: its tile, each CUDA block's K range and iterations (the 16 exact
// int32 dots of each and the running sum), the partial sums and the fixup's additions
// in order; its value has MulMat's bits (TestTraceOutputMatchesFast). TraceOutputID does
// the same for a MUL_MAT_ID output (its expert's channel and compact column;
// TestTraceOutputIDMatchesFast). Each iteration also carries its scale arithmetic one
// operation at a time (Step.Scale, trace_scale.go and trace_scale_dp4a.go: the vec_dot
// families' int adds and products, I2F, FMUL, FFMA, FADD, half products in the kernel's
// order, on the MMA and the dp4a path), computed for the traced output only and ending
// with the dot's bits (TestScaleStepsMatchDot). simrun trace prints them. The tile's
// shared memory is not modelled lane by lane there; see below.
//
// # Shared-memory sanitizer
//
// CheckSharedMemory (smem.go, smem_model.go) replays, thread by thread and barrier by
// barrier, the shared-memory stores and loads of CUDA blocks of a launch: mul_mat_q's
// ids_dst_shared (mmq.cuh:975-984, 1020-1033, 1114-1126, 1169-1180), load_tiles
// (mmq-load-tiles.cuh), the tile_y copy and the two vec_dot calls per iteration of
// mul_mat_q_process_tile (mmq.cuh:868-937) and write_back's ids_dst loads, with the
// index arithmetic of those functions, against the allocation mmq_get_nbytes_shared
// (mmq.cuh:1380; tile_y at J, tile_x after GGML_PAD(J*MMQ_TILE_Y_K, nthreads)). The
// values stored name what the kernel stores (source row, iteration, which 4 of the 256
// values or which scale), so a load finds the wrong word as well as poison, and a store
// of two threads to one word with the same value (fallback rows clamped to i_max) is
// no race. Reported: out of range, unwritten in the phase, wrong word, RAW/WAR/WAW
// races, misaligned ldmatrix; information: loads of unwritten rows past i_max whose
// results write_back discards, words written and never read.
//
// With MUL_MAT_ID the static ids_dst_shared[J] of mul_mat_q_stream_k_fixup
// (mmq.cuh:1340-1368) is replayed too, each fixup block on its own.
//
// Measured (2026-12-02, a throwaway sweep, not a test): 6644 launches on the H200's
// int8-MMA and dp4a paths, every type, M = 9..520 (616 distinct path, type, J and
// fallback configurations) and MUL_MAT_ID with 16 experts: no problem; every word
// written is read except tile_y's padding to nthreads and the columns past the last.
// The injected bugs of smem_test.go (a row stride off by one, a missing barrier, a
// tile_y offset, a short copy, a misplaced tile_x) are each caught on every type and
// path.
//
// Shared-memory limits: every type with an MMQ kernel is modelled on both NVIDIA paths:
// the int8-MMA path (the TURING_MMA_AVAILABLE branches; mma.cuh's NVIDIA fragment
// layouts: ldmatrix.x4 / .x2 for A, load_generic for B) and the dp4a path (the #else
// branches, vecdotq.cuh's _impl reads). AMD's MFMA/WMMA layouts and Blackwell's native
// FP4 path are not (MakePlan refuses them). The replay is a sample for large launches
// (SmemOptions: blocks, tiles per block, iterations per tile; every block with work for
// small ones); the data are symbolic, so two threads storing different values to one
// word in one interval is reported whatever the data. Values are derived from the
// block formats as ggsim's quant package documents them; a store and a load that agree
// on a wrong reading of a format would not be caught. Bank conflicts and performance
// are not modelled.
//
// # Limits
//
// AMD's MFMA/WMMA layouts (16x16 C tiles) and Blackwell's native FP4 MMA are not
// simulated (MakePlan returns an error wrapping ErrUnsupported). The float sequences of
// architectures other than sm_90 are assumed to be sm_90's. Calling MulMat directly
// does not check that ggml dispatches the shape to MMQ; the front door (package ggsim)
// does.
package mmq
