// Package q8 simulates ggml's CUDA activation quantizers bit for bit: quantize_q8_1
// (block_q8_1, the activations of MMVQ) and quantize_mmq_q8_1 (block_q8_1_mmq in the D4,
// DS4 and D2S6 layouts, the activations of MMQ), src/ggml-cuda/quantize.cu at ggml
// commit d99724f2b141.
//
// # Model
//
// The float sequences are those of the sm_90 SASS of that commit built with CUDA 13.0.88
// and -use_fast_math, read with cuobjdump -sass (docs/arithmetic.md, "Activation
// quantizers", records them and what confirmed them):
//
//	quantize_q8_1, one warp per 32 values:
//	  amax = xor-butterfly max of |x| (FMNMX.FTZ; NaN operands ignored)
//	  sum  = xor-butterfly sum of x (FADD.FTZ, offsets 16, 8, 4, 2, 1)
//	  d    = FMUL.FTZ(amax, 0x3c010204)            amax/127.0f, constant confirmed in SASS
//	  q    = amax == 0 ? 0 : roundf(FMUL.FTZ(x, MUFU.RCP(d)))
//	  ds   = {f2h(d), f2h(sum)}                    F2FP.F16.F32.PACK_AB
//
//	quantize_mmq_q8_1, one lane per 4 values:
//	  amax = fmaxf over the lane's 4 values, then butterfly 4,2,1 (D2S6: 8,4,2,1)
//	  sum  = ((x0+x1)+x2)+x3, then butterfly 4,2,1 (D2S6: 2,1)
//	  d_inv = FMUL.FTZ(MUFU.RCP(amax), 127); q = roundf(x*d_inv); d = MUFU.RCP(d_inv)
//
// roundf compiles to FADD.FTZ.RZ(v, copysign(0.5, v)) and FRND.TRUNC (round half away
// from zero); the float→int8 conversion is F2I.FTZ.TRUNC.NTZ to int32 (saturating, NaN →
// 0) and a store of the low byte — a wrap, visible only when the scale flushes to zero
// and x·Inf = ±Inf becomes 0x7fffffff (stored −1) or 0x80000000 (stored 0). MUFU.RCP is
// sim.Rcp (the table measured on an H200). Every float32 operation flushes subnormal
// operands and results; binary16 conversions keep half subnormals and overflow to ±Inf.
//
// # Invariants
//
//   - Rows are padded to PaddedLen(k) = GGML_PAD(k, 512) values; the padding reads 0.0f,
//     so padding blocks are all zero (q = 0, d = 0, s = 0).
//   - |q| ≤ 127 for finite inputs whose scale does not flush (amax ≥ 127·2^-126 for
//     quantize_q8_1); d·q is then within half a quantisation step (plus the MUFU error) of
//     the FTZ'd input.
//   - The block_q8_1 s is the half-rounded float sum of the activations (not d·Σq): the
//     CUDA kernel stores it so, unlike the CPU's quantize_row_q8_1_ref.
//
// The golden quantize cases are ggml_quantize_chunk on the CPU, not these kernels; these
// quantizers are checked through the MMVQ matmul golden cases (sim/mmvq), which consume
// their output, and by unit and property tests here.
package q8
