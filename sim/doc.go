// Package sim is the simulated GPU on which ggsim's kernels (sim/q8, sim/mmvq, sim/mmq)
// run: the arithmetic of one thread, bit for bit as an NVIDIA GPU computes it for a ggml
// build with -use_fast_math, plus warps, shared memory, instruction counters and a device
// catalog.
//
// # Arithmetic model
//
// float32 (f32.go). ggml builds its CUDA code with -use_fast_math, which puts .ftz on
// every float32 instruction. Add, Sub, Mul and FMA flush subnormal operands to signed
// zero, round the exact result once to nearest even (FMA: one rounding of a*b+c), and
// flush a result whose 24-bit rounding (unbounded exponent) is below 2^-126 to the zero
// of its sign ("tininess after rounding"; this differs from flushing Go's IEEE result
// only for exact results in [2^-126 - 2^-150, 2^-126 - 2^-151)). FMA32 is the exact fma
// without the flush (fma.rn.f32), computed by the round-to-odd construction described in
// docs/arithmetic.md ("float32 and FTZ"). Every NaN result is the canonical NaN 0x7fffffff. FMaxf is IEEE maxNum (a NaN
// operand is ignored, +0 > -0). RoundF is roundf (half away from zero). F2I8 is the
// GPU's (int8_t) of a float: the low byte of a saturating int32 conversion, NaN -> 0.
// Nothing is fused implicitly: the Go compiler may fuse x*y+z (arm64, GOAMD64=v3), so
// the code writes explicit float conversions, and the tests run with GOAMD64=v1 and v3.
//
// Which source-level a*b+c the GPU compiler fuses into one FFMA is not decided here: the
// kernels choose Mul+Add or FMA per site, as read from the SASS (docs/arithmetic.md, "MMVQ
// float order").
//
// binary16 (package f16). Half arithmetic (HADD2, HMUL2, HFMA2) is never flushed; it is
// exact, RN-even, overflow to ±Inf, NaN results 0x7fff. F2H (float -> half, NaN -> 0x7fff)
// and H2F (half -> float, NaN -> 0x7fffffff) convert.
//
// MUFU.RCP (mufu.go). rcp.approx.ftz.f32 is not correctly rounded. Rcp reproduces it from
// the table measured on an NVIDIA H200 (sm_90), CUDA 13.0, driver 580.159.04, for every
// float32 in [1, 2) (shared/mufu/README.md; embedded as mufu_rcp_sm90.bin, 2 bits per
// input: delta -1 / 0 / +1 ulp from the correctly rounded reciprocal; counts 374,723 /
// 7,280,086 / 733,799). Other binades are the same significand scaled exactly, flushed
// below 2^-126. Div (a/b under fast math) is Mul(a, Rcp(b)); Div127 (x/127.0f) is a
// multiply by the constant 0x3C010204.
//
// Integers (intrin.go): Dp4a, Vsubss4, Vsub4, Vcmpne4, BytePerm, Lop3, Popc — exact.
//
// GLU epilogues (glu.go): SiLU, GELU, SwiGLUOAI, GLUFused (mul_mat_vec_q's epilogue) and
// GLUUnfused (unary.cu) as their SASS; ExplainGLUFused and ExplainGLUUnfused
// (glu_explain.go) return the same instructions one GLUStep each, MUFU ones included,
// ending with the same bits (TestExplainGLU).
//
// # Execution model
//
// Warp (warp.go) holds one register of 32 lanes; ShflXor and friends follow PTX
// shfl.sync semantics with a width. ReduceSum / ReduceMax follow ggml's xor butterfly
// (offsets width/2 ... 1) lane by lane; ReduceSumTree / ReduceMaxTree compute the value
// all lanes end with directly (the same bits; a test checks it).
//
// SharedMem (shared.go) is a block's shared memory of 32-bit words, poisoned with a NaN
// pattern; reads of unwritten words, and races (a word touched by two threads between two
// Sync calls with at least one write), are reported by Err, naming word and threads.
//
// Counters (counters.go) count instructions per kind; a nil *Counters counts nothing.
//
// # Devices
//
// Device (device.go) is what ggml knows of a GPU (cc in ggml's numbering, SM count, warp
// size, shared memory per block) plus derived feature flags; the CC constants and
// availability predicates are ported from ggml's src/ggml-cuda/common.cuh at commit
// d99724f2b141. Catalog lists common GPUs, each with its Source; Validate checks a
// hand-written Device.
//
// # Where each model comes from
//
//   - FTZ and fast-math division: nvcc's -use_fast_math as set in ggml's CMakeLists.txt
//     (set(CUDA_FLAGS -use_fast_math ...) in src/ggml-cuda/CMakeLists.txt;
//     docs/arithmetic.md, "Build flags") and PTX semantics.
//   - MUFU.RCP: the shared table, measured on an H200 (sm_90), CUDA 13.0, driver
//     580.159.04.
//   - Measured with the project's former nvcc probe on an H200 on 2026-11-29 (record and
//     the gpu/cuda probes that now measure each item: testdata/h200-probes), driver
//     580.159.04, nvcc 13.0 V13.0.88, -arch=sm_90 -use_fast_math: the Rcp model for all
//     2^32 inputs including other binades; x/127.0f = FMUL.FTZ by 0x3c010204 (SASS and all
//     2^32 inputs); a/b = MUFU.RCP + FMUL.FTZ (SASS; all b for eight a); roundf for all
//     2^32 inputs; __float2half for all 2^32 inputs (NaN -> 0x7fff); half add, sub, mul,
//     fma and half2 mul for every half against 16 operands, and __half2float for every
//     half; __byte_perm's 3-bit selectors; the FTZ flush near 2^-126 for mul and fma
//     (147,456 cases); fmaxf/fminf with ±0 and NaNs; fabsf(NaN); canonical NaNs; int8
//     conversion of out-of-range values.
//   - Not measured: Neg of a NaN (assumed canonical like fabsf); other architectures
//     (the catalog's non-Hopper devices use the same model: no table for their MUFU.RCP).
//
// # Errors
//
// A kernel of sim/... asked for what it does not model (an AMD device, a warp size other
// than 32) returns an error wrapping ErrUnsupported, which matches errors.ErrUnsupported;
// bad input (sizes that do not fit) is another error.
package sim
