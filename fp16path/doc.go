// Package fp16path models the fp16 matrix-vector path for GP100 (Tesla P100, sm_60) of
// "patch 0007" (seed note 002, reference/seeds/002_770526410a4a2b1f.txt in the project's
// shared reference): MUL_MAT of a quantized matrix by 1..8 float32 columns, computed with
// half2 FMA (HFMA2) instead of the int8 q8_1 dot products of ggml's mul_mat_vec_q, which
// sm_60 (below GGML_CUDA_CC_DP4A = 610) runs as scalar multiplies; with the note's fused
// gate/up/SWIGLU, activation-conversion cache and fused RMS_NORM * weight.
//
// The patch's source (mmvq-gp100.cu) is not public. The note fixes the numerics in three
// sentences; everything else here is a choice, listed below, so this package is the
// specification of one concrete kernel that follows the note, bit for bit in its own
// terms, not a simulation of the patch's binary. Types: Q4_K, Q5_K, Q6_K, Q3_K, IQ4_XS,
// IQ4_NL, Q8_0 at one column (all of the note's batch-1 coverage), Q4_K, Q5_K, IQ4_XS at
// 2..8 columns.
//
// # Model
//
// Step 1, activations, once per matmul input (ConvertActivations). For each 32-value block
// b of the column, with a = max|y_k| (FTZ, as the float32 arithmetic of the kernel):
//
//	e_b = 14 - floor(log2 a), minus 1 if RN16(a·2^e_b) = 2^15;  clamped to e_b <= 127
//	h_k = RN16(y_k · 2^e_b)                       (FMUL.FTZ, exact; then cvt.rn.f16.f32)
//	S_g = RN32(Σ_{k in g} h_k)                    for every 16-value group g
//
// so every |h_k| <= 32752 = 2^15 - 16 < 2^15 and the block's largest lands in [2^13, 2^15)
// (unless e_b is clamped, for a block below 2^-113).
//
// Step 2, weights (Unpack). Each weight is an unsigned code c in 0..255: the quant itself
// for Q4_K (0..15) and Q5_K (0..31), the biased quant for Q6_K (q+32, 0..63) and Q3_K
// (q+4, 0..7: the two low bits and the hmask bit), the codebook value plus 128 for IQ4_XS
// and IQ4_NL (kvalues_iq4nl + 128, 1..241) and q+128 for Q8_0 (0..255, the byte xor 0x80).
// Four codes in a word become two half2 with PRMT, __byte_perm(w, 0, 0x4140) and
// __byte_perm(w, 0, 0x4342): the half with bit pattern c, whose value is c·2^-24.
//
// Step 3, one lane, one 16-value group g (all of a group shares one scale: Q6_K's and
// Q3_K's scales cover 16 values, the others' 32). Values 2p and 2p+1 of the group form
// pair p; from acc = (+0, +0), for p = 0..7, acc = HFMA2(w_p, y2_p, acc) (HalfDot): each
// half of acc sums 8 terms, 16 per lane. Then in float32 (FTZ):
//
//	a = H2F(acc.lo) + H2F(acc.hi)                           ≈ 2^-24 Σ c_k h_k
//	offset types (Q6_K 32, Q3_K 4, IQ4_XS/IQ4_NL/Q8_0 128):
//	    t = D · fma(-off·2^-24, S_g, a)                     ≈ 2^-24 Σ D (c_k - off) h_k
//	Q4_K, Q5_K:
//	    t = fma(-Mmin·2^-24, S_g, a·D)                      ≈ 2^-24 Σ (D c_k - Mmin) h_k
//	partial_lane = fma(t, 2^(24 - e_b), partial_lane)
//
// where D is the group's scale (d·sc, d·(sc) signed for Q3_K/Q6_K, d·(ls-32) for IQ4_XS,
// d for IQ4_NL and Q8_0) and Mmin = dmin·m, both exact float32 products (an 11-bit half
// times a 6-bit integer).
//
// Step 4, the warp. One row per warp by default (Options.RowsPerWarp, or Options.RowMap
// per matrix row count as the note's GP100_RMAP: 1..32 rows, 32/R lanes each). Lane l of
// a row's L lanes takes the groups l, l+L, l+2L, ... in ascending order; the lanes'
// partials are summed by the xor butterfly of width L (sim.ReduceSumTree, offsets L/2 ...
// 1). The value of lane 0 is the output.
//
// Columns (MulMat with M = 2..8, Q4_K, Q5_K and IQ4_XS only). Each column j of src1 is
// converted on its own (step 1: its own e_b, halves and sums). The warp, lanes and groups
// are those of one column; a lane, for each of its groups in ascending order, loads the
// weights and unpacks them (PRMT) once, then runs, for j = 0, 1, ..., M-1 in order, that
// column's HFMA2 loop (step 3, with the same 8 half2 weights and column j's halves), its
// float32 epilogue and one FFMA into column j's own partial. The columns' partials are
// then summed by M independent butterflies. No value of one column enters another's
// arithmetic, so the float order per column is exactly the one-column order: output (i, j)
// has the bits of the one-column launch on column j (TestMultiColumnIsColumnByColumn).
// Other types with 2..8 columns are refused (errors.ErrUnsupported): the note keeps
// them on ggml's MMVQ ("Q6_K batches stay on the generic path"; its multi-column coverage
// is Q4_K/Q5_K/IQ4_XS), and tiling dispatches them there.
//
// Fused gate/up/SWIGLU (MulMatSwiGLU). The gate and up matrices (same type, same N and K)
// meet the same conversion of src1 (converted once for both). For row i and column j,
// g and u are exactly MulMat's outputs for the gate and the up matrix (each its own
// lanes, groups and butterfly, the weights unpacked per matrix), and the epilogue is
// ggml's SWIGLU of the fused MMVQ (mmvq.cu: "result *= ggml_cuda_op_silu_single(gate)";
// unary.cuh: silu(x) = x / (1.0f + expf(-x))) under -use_fast_math, without bias or
// scale terms:
//
//	e = expf(-g)          (FNEG exact; expf = MUFU.EX2 of x·log2e: sim.Expf, measured)
//	d = 1 + e             (FADD.FTZ)
//	s = g · rcp(d)        (fast-math division: MUFU.RCP, FMUL.FTZ; sim.Div)
//	out = u · s           (FMUL.FTZ)
//
// The expf step is sim.Expf (MUFU.EX2 as measured on an H200 for all 2^32 inputs); it is a
// function variable so that tests can also check the structure with a float64 stand-in
// marked NOT HARDWARE (export_test.go).
//
// Activation-conversion cache (Cache). One graph evaluation's cache maps a src1 (the
// slice's identity: its first element's address and length) to its columns' conversions.
// (*Cache).MulMat and (*Cache).MulMatSwiGLU take a cached conversion if the src1 values
// are still the same bits (a kept copy is compared: a reused buffer converts again) and
// otherwise convert and store. The conversion is a pure function of the column, so cached
// and uncached calls give the same bits (TestCacheSameBits); Conversions and Hits count
// the work saved. A nil *Cache or Options.NoActCache converts on every call.
//
// Fused single-row RMS_NORM * weight ((*Cache).RMSNormMul). The arithmetic is ggml's
// rms_norm_f32<block_size, do_multiply> for one row of ncols values (norm.cu): block_size
// 256 if ncols < 1024, else 1024 threads; thread t: tmp = fma(x_c, x_c, tmp) for c = t,
// t+block_size, ... ("tmp += xi*xi", contracted to FFMA by nvcc's default -fmad=true); each
// warp's xor butterfly (offsets 16..1) of its lanes' tmp; the block_size/32 warp sums
// padded with zeros to 32 lanes and one more butterfly (block_reduce); mean = tmp / ncols
// (MUFU.RCP of float(ncols), FMUL); scale = rsqrtf(mean + eps) (FADD, MUFU.RSQ: sim.Rsqrt,
// measured on an H200; a function variable like expf); dst_c =
// (scale·x_c)·w_c (two FMULs, left to right). The note's fusion then converts dst (step 1)
// and writes the conversion into the cache, keyed by dst, so the matmuls reading dst hit
// the cache. The reduction order is the choice the note leaves open: we keep ggml's
// exactly (each of the fused kernel's blocks may recompute the row's Σx² in that order
// to scale and convert its own 32-value blocks), so the fusion changes no bit: fused,
// unfused (Options.NoNormFusion) and uncached give the same matmul outputs
// (TestRMSNormFusion, which also recomputes Σx² lane by lane with warp shuffles).
//
// Options are the note's switches: Disabled (GGML_CUDA_GP100_MMVQ_DISABLE=1: every
// matmul entry returns ErrDisabled, RMSNormMul is ggml's norm without conversion),
// NoActCache, NoNormFusion, RowsPerWarp and RowMap (GP100_RMAP="nrows:R,...", rows per
// warp for a matrix of nrows rows; ParseRowMap, OptionsFromEnv). Only the rows per warp
// change bits.
//
// Dispatch lives in tiling (the one home of launch decisions): tiling.DecideWith with
// tiling.Options{GP100FP16Path: true}, off by default because the patch is not in ggml,
// returns tiling.KernelGP100FP16 on sm_60 (cc 600) only, for a MUL_MAT of a 2-D src0
// where ggml runs mul_mat_vec_q, for the seven types at one column and Q4_K/Q5_K/IQ4_XS at
// 2..8 (tiling.UseGP100FP16Path; TestTypesMatchTiling checks it agrees with what MulMat
// accepts). `simrun explain --device P100 --type q4_K --shape K,N,M --fp16path` shows it.
//
// The simulator runs the loop with a fast exact step (hfma.go: c·h·2^-24 + acc is exact in
// float64 for these operands and is rounded once to binary16); HalfDot, on f16.FMA2, is the
// reference beside it, and TestFastHFMA checks both give the same bits (exhaustively over
// all halves for a set of codes and accumulators, and for whole matmuls of every type).
// MulMat computes rows in parallel; a 4096 x 1024 Q4_K matrix takes about 80 ms on 2 cores.
//
// # Choices the note leaves open
//
//   - The prescale exponent: the largest s_b that keeps RN16(max|y|·s_b) below 2^15
//     (not merely max|y|·s_b < 2^15: 32760 ≤ x < 32768 rounds to 2^15). Clamped to 2^127
//     for tiny blocks (float32 range); a block with max|y| >= 32760·2^103 ≈ 2^118 (which
//     would need e_b < -103, 2^(24-e_b) > 2^127) is refused with an error wrapping errors.ErrUnsupported, and a
//     NaN or Inf activation is an error.
//   - Which block sum: the sum of the prescaled halves h_k (the values the HFMA2 loop
//     consumed), not of the float32 y_k, so that c·h and off·h refer to the same numbers
//     and the offset removal leaves only the loop's rounding, not the conversion's. The
//     sums are kept per 16 values (Q6_K and Q3_K change scale every 16 values), as the
//     exact sum rounded once to float32 (a CUDA kernel gets this with an integer sum of
//     h·2^24, < 2^44, and one cvt.rn.f32.s64).
//   - Lane mapping: 16 consecutive values per lane as 8 half2 pairs (2p, 2p+1), groups
//     dealt round-robin to the lanes; one row per warp.
//   - The epilogue order: a = lo + hi first; offsets removed in the prescaled domain
//     before the scale (one FFMA whose product off·2^-24·S_g is exact), the min term in
//     one FFMA after the scale; the unscale 2^(24-e_b) folded into the lane's FFMA.
//   - Columns: the weights unpacked once per group and reused for every column, each
//     column with its own accumulators in the one-column order (step 4 above).
//   - Rows per warp: 1 unless Options say otherwise; the same for every column count.
//   - SWIGLU: ggml's fused-MMVQ epilogue u·silu(g) with no bias terms; multi-column
//     fused launches for the multi-column types (each column independent).
//   - RMS_NORM fusion: ggml's reduction order (fusion changes no bit); the row length
//     must be a multiple of 32 under the fusion (the conversion's block); non-finite x, w
//     or eps are refused.
//   - Cache key: src1's identity, valid only while its bits are unchanged.
//
// # Proofs of the note's claims, for these choices
//
// "No overflow is possible." Every code is at most 255 (TestGroupsMatchDequantize checks
// the codes against quant's dequantizers) and every |h| at most 32752, so every product
// c·2^-24·h is below 255·32752·2^-24 < 0.498 and a sum of 16 is below 7.97 (the accumulator
// halves sum 8 each: below 3.99). Each HFMA2 rounding changes a partial sum by at most
// 2^-11 of it, so every partial sum stays below 8 ≪ 65504: no Inf in the loop, with 13
// binades to spare. Per type the bound is 16·maxcode·32752·2^-24: Q3_K 0.22, Q4_K 0.47,
// Q5_K 0.97, Q6_K 1.97, IQ4 7.52, Q8_0 7.97. (Without the 2^-24 of the subnormal weights the
// same sums would reach 16·255·32752 ≈ 2^27: the subnormal encoding is what makes the
// range fit.)
//
// The same bound without the rounding slack, over all inputs at once: binary16 rounding
// RN is monotone and odd, and every term satisfies |c·2^-24·h| <= T = maxcode·2^-24·32752,
// so by induction each accumulator half after p steps has |acc_p| <= A_p, where A_0 = 0
// and A_{p+1} = RN(A_p + T) (|RN(acc + t)| = RN(|acc + t|) <= RN(|acc| + |t|) <= RN(A_p +
// T)). A_8 is the HFMA2 chain with the largest code and the largest prescaled half; it is
// the exact worst case of the loop. TestOverflowWorstCase computes it with the hardware
// operation: A_8 = 0.234 (Q4_K), 0.484 (Q5_K), 0.984 (Q6_K), 0.109 (Q3_K), 3.76 (IQ4_XS,
// IQ4_NL), 3.98 (Q8_0), and A_16 < 8 even if one half took all 16 terms. The multi-column
// and fused launches run this same loop per column and per matrix, so the bound holds for
// them unchanged. TestNoOverflowAtEdges and TestEdgeGroups check the loop with codes and
// activations at their maxima, zero, the smallest subnormal and random values.
//
// In float32, the epilogue's values are the group's sums in units of 2^(e_b-24); they
// overflow only when the exact group sum Σ W·y exceeds the float32 range (about 2^128),
// since 2^(24-e_b) <= 2^127 by the prescale's range (EMin).
//
// "The value q becomes the half q·2^-24, exactly." True: a half with bit pattern c < 1024
// is the subnormal c·2^-24 and one with 1024 <= c < 2048 is 2^-14·(1 + (c-1024)/1024) =
// c·2^-24 (TestUnpackExact, all c < 2048; 2049 is the first that fails). All codes are
// <= 255.
//
// The prescale is exact (a power of two; FMUL.FTZ only flushes products below 2^-126,
// whose half would be 0 anyway); the conversion to half rounds (relative 2^-11, or
// absolute 2^-25 below 2^-14).
//
// The products are not exact in general. Write the exact product c·2^-24·h as o·2^z with o
// odd: it is a binary16 iff o has at most 11 bits and z >= -24 (TestProductExactness:
// exhaustive over every finite half for 10 codes, and rapid over all codes). For a block's
// large values (|h| in [2^13, 2^15), integers with odd part m) that is odd(c)·odd(m) <
// 2^11: always for c a power of two, for a third of the halves when c = 3, 6.6% for c = 15,
// 1.6% for c = 63, 0.4% for c = 241 or 255. Small values fare worse: with c = 1, every h
// that is not an integer (every |h| < 2^10 but the integers) gives an inexact product.
// That the product alone is inexact does not matter by itself — HFMA2 does not round it
// separately; each step rounds c·2^-24·h + acc once, with error at most
// max(2^-11·|result|, 2^-25) — but it means the fp16 sum is exact only when every partial
// sum happens to be a binary16. The note's "exact" holds for the weights, the prescale and
// (by construction) the block sums; the accumulation has the rounding error bounded above,
// which TestNoOverflowAtEdges checks step by step. In activation units the absolute error
// of a subnormal step, 2^-25·2^(24-e_b) = 2^(-1-e_b), is at most 2^-14·max|y| of the block
// (times |D|), against up to half a q8_1 step, max|y|/254, per value for ggml's path.
//
// The offset removal: off·2^-24·S_g is exact (a power of two times a float32 >= 2^-24), so
// fma(-off·2^-24, S_g, a) rounds once, the exact difference a - off·2^-24·S_g; S_g itself
// is the exact sum rounded once (relative error <= 2^-24), exact whenever the 16 halves'
// sum fits in 24 bits (e.g. all are integers, i.e. |h| >= 2^10 or integer-valued). The
// cancellation that the offset causes (Σ c h is dominated by off·Σ h when the quant values
// are small) amplifies the loop's rounding errors, which are relative to |Σ c h|: this is
// why the error does not shrink with the code width (Q8_0 is no better than Q4_K in the
// table below).
//
// # Accuracy
//
// Relative RMS error against the fp64 product of the dequantized weights and the float32
// activations (oracle.MulMatRef), K = 4096, 128 rows, a heavy-tailed generator with outlier
// channels (Student-t weights and activations, 1% weight channels x6, 0.5% activation
// channels x40), ggml's q8_1 MMVQ path simulated on an H200 (sim/mmvq) for comparison
// (Example; TestMoreAccurateThanQ8_1 asserts fp16 < q8_1 per type and a 4x margin on
// average):
//
//	type     fp16     q8_1
//	q4_K     2.1e-03  1.6e-02
//	q5_K     1.9e-03  1.6e-02
//	q6_K     1.1e-03  1.1e-02
//	q3_K     1.1e-03  1.1e-02
//	iq4_xs   1.9e-03  1.4e-02
//	iq4_nl   1.8e-03  1.3e-02
//	q8_0     2.0e-03  1.8e-02
//
// The note reports 1.1e-3 against 1.2e-2 on a real Q5_K tensor.
//
// Bound gives a worst-case bound on |out - exact| per output from the error terms above
// (conversion, 8 HFMA2 roundings per accumulator half, the float32 epilogue, the lane chain
// and the butterfly); TestWithinBound checks every output against it on random types,
// shapes, rows per warp and activation magnitudes from 2^-60 to 2^60. On the realistic
// generator it is about 2% of Σ|W_k·y_k| and the actual error about 1% of the bound.
//
// # Sources
//
// The note (above). ggml at d99724f2b141: the block layouts and dequantizers
// (ggml-common.h, ggml-quants.c dequantize_row_*; here through package quant's block
// views), the path it replaces (ggml-cuda/mmvq.cu mul_mat_vec_q, vecdotq.cuh, quantize.cu
// quantize_q8_1; here sim/mmvq and sim/q8). Half arithmetic: package f16 (HFMA2 =
// fma.rn.f16x2, subnormals kept: cuda_fp16.hpp emits no .ftz for half). float32: package
// sim (FTZ, as -use_fast_math). PRMT: sim.BytePerm. The fused epilogues follow ggml's
// own: ggml-cuda/mmvq.cu mul_mat_vec_q (the fused gate's "result *=
// ggml_cuda_op_silu_single(gate_value)"), unary.cuh ggml_cuda_op_silu_single, norm.cu
// rms_norm_f32 and rms_norm_mul_f32_cuda (block sizes), common.cuh block_reduce and
// warp_reduce_sum; the fast-math division is sim.Div (MUFU.RCP, measured on sm_90).
//
// # Limits
//
//   - No GPU has run this kernel: the bits are this model's; the measured claims of the
//     note (speed, KLD) are not modelled. The project's CUDA version of these kernels
//     (gpu/cuda) runs on the GPU at hand (an H200: CUDA 13 cannot target sm_60).
//   - expf (MUFU.EX2), rsqrtf (MUFU.RSQ) and the fast-math divisions (MUFU.RCP) are sim's
//     models measured on sm_90 (gpu/testdata/h200-mufu); sm_60's MUFU is not measured.
//     The FFMA contraction of rms_norm's "tmp += xi*xi" is nvcc's default, not read from
//     the SASS of norm.cu.
//   - Dispatched only through tiling.DecideWith with the opt-in; the root package's
//     MulMat (ggml's dispatch) never runs it. MUL_MAT_ID is not covered (the note names
//     no such kernel).
//   - 1 column for every type, 2..8 for Q4_K, Q5_K, IQ4_XS; K must be a multiple of the
//     type's block size; 2-D matrices only (no channels or samples).
//   - HFMA2 on sm_60 is taken to be IEEE binary16 fma, round to nearest, subnormals kept
//     (package f16, fma.rn.f16x2 without .ftz). The note's kernel depends on it: were half
//     subnormals flushed, every weight c·2^-24 would be zero. It is not measured here.
//   - The float32 epilogue is modelled with -use_fast_math FTZ (package sim), as ggml's
//     CUDA builds; the flushes only touch values below 2^-126.
package fp16path
