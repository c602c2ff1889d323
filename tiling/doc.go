// Package tiling is the one home of "what ggml launches" for MUL_MAT and MUL_MAT_ID on a
// given device: which path the CUDA backend takes, and for the quantized kernels the
// launch configuration. Everything is a pure function of (device, type, shape); the
// package does no arithmetic and imports no kernel package (only quant and sim).
//
// # Model
//
//   - Decide (MulMat, MulMatID) names the path: KernelUnsupported when
//     ggml_backend_cuda_device_supports_op refuses the src0 type, then, in the order of
//     ggml_cuda_mul_mat, mul_mat_vec_f (ShouldUseMMVF, including the transposed-vector
//     case), mul_mat_f (ShouldUseMMF), mul_mat_vec_q (ShouldUseMMVQ), mul_mat_q
//     (ShouldUseMMQ), else cuBLAS; for MUL_MAT_ID, in the order of
//     ggml_cuda_mul_mat_id, mul_mat_vec_q / mul_mat_vec_q_moe up to
//     get_mmvq_mmid_max_batch tokens (MMVQMMIDMaxBatch), mul_mat_vec_f on AMD, MMQ,
//     MMF, else the host-synchronising fallback. q8_K, which the backend accepts but has
//     no MMVQ kernel nor cuBLAS converter, is KernelAbort. Every Decision carries the
//     reason in ggml's terms.
//   - MakeMMVQPlan is mul_mat_vec_q_switch_ncols_dst: the parameter table
//     (get_device_table_id), calc_nwarps, calc_rows_per_block, should_use_small_k,
//     should_halve_iters and the MoE kernel; MMVQConstsOf gives qk, qi and get_vdr_mmvq.
//     sim/mmvq executes such a plan.
//   - MMQ: MMQArchOf picks the mmq-config table as the host ggml_cuda_mmq_get_config does
//     (AMD family; blackwell_mma_available, falling through to ampere; highest compiled
//     arch >= 700 -> ampere; else pascal). MMQConfigOf returns a CASE row of that table
//     (generated from every mmq-config-*.cuh by gen_mmqconfig.go; each row cites
//     file:line), UseMMADataLayout is use_mma_data_layout(cc), MMQNBytesShared is
//     mmq_get_nbytes_shared, MMQSearchJ is mul_mat_q_switch_J with every step, and
//     MakeMMQPlan adds fallback (ne01 % 128 != 0) and the tile numbers nty, ntx, ntzw,
//     ntiles, blocks_per_ne00 and blocks_per_iter. The stream-K partition built on those
//     numbers (grid size, kbc ranges, fixup) belongs to package streamk.
//   - FuseGLU is ggml_cuda_try_fuse's {MUL_MAT(_ID) gate, MUL_MAT(_ID) up, GLU} branch:
//     whether the three nodes become one mul_mat_vec_q launch with the GLU epilogue
//     (ggml_cuda_should_fuse_mul_mat, ggml_cuda_should_fuse_mul_mat_vec_q).
//   - DecideWith adds choices that are not ggml's, off by default: Options.GP100FP16Path
//     opts in to the GP100 fp16 matrix-vector path of "patch 0007" (seed note 002, a
//     local llama.cpp patch, not in ggml), which on sm_60 replaces mul_mat_vec_q for
//     Q3_K..Q6_K, IQ4_XS, IQ4_NL, Q8_0 with one column and Q4_K/Q5_K/IQ4_XS with 2..8
//     (UseGP100FP16Path, KernelGP100FP16; package fp16path simulates it). Decide never
//     returns it.
//
// # Sources
//
// ggml commit d99724f2b141, src/ggml-cuda: ggml-cuda.cu (ggml_backend_cuda_device_supports_op,
// ggml_cuda_try_fuse, ggml_cuda_should_fuse_mul_mat, ggml_cuda_should_fuse_mul_mat_vec_q,
// ggml_cuda_mul_mat, ggml_cuda_mul_mat_id, ggml_cuda_mul_mat_cublas_impl), mmvq.cu
// (ggml_cuda_should_use_mmvq, get_mmvq_mmid_max_batch*, get_device_table_id, calc_nwarps,
// calc_rows_per_block, get_vdr_mmvq, mul_mat_vec_q_switch_ncols_dst), mmvf.cu
// (ggml_cuda_should_use_mmvf), mmf.cu (ggml_cuda_should_use_mmf), mmq.cu
// (ggml_cuda_should_use_mmq, ggml_cuda_mul_mat_q), mmq.cuh (ggml_cuda_mmq_config,
// ggml_cuda_mmq_get_config, ggml_cuda_mmq_get_sram_stride, mmq_get_dp4a_tile_x_sizes,
// mmq_get_nbytes_shared, launch_mul_mat_q, mul_mat_q_switch_J, mul_mat_q_case) and
// mmq-config-{pascal,ampere,blackwell,cdna,rdna2,rdna3,rdna3-5,rdna4}.cuh. The host
// feature predicates (turing_mma_available, ...) come from sim; a sim.Device with
// NoTuringMMA describes a build where turing_mma_available is false.
//
// # Limits
//
// The shape is what the golden files and the simulator use: src0 contiguous (2-D, or a
// batch of equal matrices), src1 and dst f32. GGML_CUDA_FORCE_MMQ is sim.Device.ForceMMQ.
// Not modelled: GGML_CUDA_FORCE_CUBLAS builds, GGML_HIP_NO_MMQ_MFMA, the Hadamard hint, "bad padding clear" (a
// src0 view in a compute buffer), non-contiguous or transposed operands other than the
// transposed-vector case, f16 src1, the MUSA exceptions of supports_op, and which
// kernels the per-expert calls of the MUL_MAT_ID host fallback then take.
// Regenerate the MMQ tables with `GGML_DIR=path/to/ggml go generate ./tiling`.
package tiling
