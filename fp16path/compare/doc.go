// Package compare measures and models the GP100 fp16 matrix-vector path of patch 0007
// (package fp16path; seed note 002 in the project's shared reference) against the path it
// replaces, ggml's mul_mat_vec_q with q8_1 activations (package sim/mmvq): its accuracy
// against the fp64 truth, and its cost on the GPU the note measured.
//
// # Accuracy
//
// Measure runs both simulated paths on one matrix and one column and reports the relative
// RMS error of each against oracle.MulMatRef (the exactly dequantized weights times the
// float32 activations, in fp64), plus what each path's activation format alone costs:
// the fp64 product with the fp16 path's converted activations (h_k·2^-e_b) and with the
// q8_1 quantized ones (f2h(d_b)·q_k). The difference between a path's error and its
// format's error is its arithmetic (the HFMA2 loop and float32 epilogue; the float32
// scale arithmetic of vec_dot). Realistic, Table and KSweep run Measure on the model-like
// generators of oracle/oracletest; PlotSVG draws a sweep over K. The q8_1 path runs on
// the P100's MMVQ launch plan; its integer dot products are exact on every device.
//
// # Cost
//
// Predict estimates the time of one MUL_MAT through either path on an Arch (GP100, the
// note's P100; GP102, the P40, for contrast) as the larger of an issue time and a memory
// time (a roofline):
//
//	issue  = Σ_class count_class / (rate_class · SMs) / clock
//	memory = (weights + activations converted and read + output) / bandwidth
//
// The counts are per 32 weights, per lane, split into work on the weights (once per weight
// block, whatever the number of columns) and work per column, read from the structure of
// each path's source (fp16path's groups of 16 values: loads, PRMT, LOP3, SHF, HFMA2,
// conversions; ggml's vec_dot_*_q8_1 at their VDR), with the q8_1 path's dp4a expanded
// into byte extracts and 16-bit multiply-adds where the architecture has no DP4A (sm_60).
// docs/fp16-compare.md has the tables and what each entry counts. NoteClaims puts the
// predictions beside the note's measurements; Calibrate fits the one free parameter
// (the clock) to the note's stock-kernel bandwidth.
//
// # Limits
//
//   - The counts are estimates from the CUDA source, not from SASS: no sm_60 compiler is
//     at hand (CUDA 13 cannot target it), and the note's kernel is not public. Loop
//     overhead, address arithmetic and the shared-memory reduction across MMVQ's warps
//     are not counted. Classes are taken not to overlap (their times add), and the
//     issue and memory times to overlap fully: both are simplifications the note's
//     lesson ("several kernels were load-structure bound") warns about.
//   - Kernel launches, the activation conversion cache and the RMS_NORM fusion are not
//     modelled; the note's whole-model numbers are compared with one fitted constant for
//     everything outside the matmuls.
//   - NoteModel's shapes and types are assumptions (the note names the model, not its
//     tensors).
//
// # Sources
//
// The note (speed and accuracy tables, "PRMT and shifts are half rate; LOP3/HFMA2 are full
// rate", 608 GB/s, 14.98 TFLOP/s HFMA2). ggml at d99724f2b141: ggml-cuda/vecdotq.cuh
// (vec_dot_q4_K_q8_1, vec_dot_q5_K_q8_1, vec_dot_q6_K_q8_1, vec_dot_q3_K_q8_1,
// vec_dot_iq4_xs_q8_1, vec_dot_iq4_nl_q8_1, vec_dot_q8_0_q8_1, get_int_from_table_16),
// common.cuh (ggml_cuda_dp4a's fallback below GGML_CUDA_CC_DP4A = 610), mmvq.cu
// (mul_mat_vec_q). The CUDA C++ Programming Guide's arithmetic throughput table (cc 6.0,
// 6.1).
package compare
