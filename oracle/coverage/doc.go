// Package coverage says which kernel paths of ggml's CUDA matmuls a set of cases
// exercised, and which ones the device could take but the cases did not: coverage by
// kernel path, not by line.
//
// A path is a Feature: the dispatch branch (op and tiling.Kernel, which covers the MoE
// modes: MUL_MAT_ID through mul_mat_vec_q with ids, mul_mat_vec_q_moe, mul_mat_q, the
// host fallback), the MMVQ launch (kernel, warps, rows per block, small_k, halve_iters:
// tiling.MakeMMVQPlan), the MMQ J (tiling.MMQSearchJ), full or fallback tiles
// (tiling.MMQFallback), the MMA or dp4a data layout, the stream-K launch with or
// without a fixup (streamk.Plan), and MUL_MAT_ID's routing modes for mul_mat_q (the
// inverse or forward id map of moe.Route, tiles empty for their expert).
//
// What a case exercised is computed from its device, type and shape with the same pure
// functions ggml's host code is modelled by (packages tiling, streamk, moe): a Recorder
// wraps an oracle.Impl and records every MulMat and MulMatID that goes through it, so
// `simrun verify --coverage` and a test (Recorder, Report) see exactly the launches the
// verifier ran. What a device can take (Possible) is enumerated with the same functions
// over every type the CUDA backend accepts and a grid of shapes (columns 1..260, 512,
// 1024; row counts that are and are not multiples of 128; K from one block to 256
// blocks; 8 and 128 experts): nothing is listed by hand, so a feature appears exactly
// when the modelled dispatch can reach it. The grid is coarse in K and N: a path reached
// only by a shape outside it is not listed as possible (it is still recorded when a case
// exercises it).
//
// Sources: ggml-cuda.cu (ggml_cuda_mul_mat, ggml_cuda_mul_mat_id), mmvq.cu
// (mul_mat_vec_q_switch_ncols_dst), mmq.cuh (mul_mat_q_switch_J, launch_mul_mat_q),
// mmid.cu (mm_ids_helper), as modelled by tiling, streamk and moe.
package coverage
