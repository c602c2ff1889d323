// Package cuda is ggsim's own CUDA backend: the CUDA driver API and NVRTC, loaded at
// run time with dlopen, and the probes that measure the GPU arithmetic the simulator
// models.
//
// Model. No CUDA header or library is needed to build: the few driver entry points
// (cuInit ... cuLaunchKernel, the _v2 ABI of CUDA 12/13) and NVRTC entry points are
// declared by hand and called through small C trampolines. Open loads libcuda.so.1,
// retains device o.Device's primary context and loads NVRTC (NVRTCCandidates says
// where it looks). The probes' sources are embedded (kernels/*.cu) and compiled with
// NVRTC for the device at hand (--gpu-architecture=sm_XY from its compute capability)
// with -use_fast_math, because every ggml CUDA build uses it; the cubin is loaded with
// cuModuleLoadData and launched with cuLaunchKernel on the default stream, followed by
// cuCtxSynchronize so that a faulting kernel is reported by the launch that ran it. A
// Module keeps its PTX and cubin: they are the record of which instructions a probe
// measured.
//
// Probes (each returns Go slices; the pure-Go halves are in mufu.go, half.go, mma.go,
// round.go and are tested without a GPU):
//
//   - ProbeRcpBinade / ProbeRcpList: rcp.approx.ftz.f32 (MUFU.RCP), all 2^23 mantissas
//     of a binade; EncodeRcpDelta2 writes the shared 2-bit table format of
//     shared/mufu/README.md, CompareBinade tests rcp(m·2^e) = rcp(m)·2^-e.
//   - ProbeDiv / ProbeDiv127: a/b, x/127.0f and 127.0f/x as -use_fast_math compiles them.
//   - ProbeHalf2 / ProbeHalf2Intrinsics: add/mul/fma on half2 (inline PTX .rn, and
//     cuda_fp16.h's __hadd2/__hmul2/__hfma2), compared with exact binary16 arithmetic.
//   - ProbeDp4a: dp4a.s32.s32.
//   - ProbeMMA with MmaLayoutExperiments/CheckMmaLayout: the fragment layout of
//     mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32.
//   - ProbeRound / ProbeRoundAll: roundf and (int8_t) roundf as ggml's activation
//     quantizers write them, on a sweep and over all 2^32 float32.
//   - ProbeRcpAll, ProbeDiv127All, ProbeDivAll, ProbeDiv127NumAll, ProbeF2HAll: all 2^32
//     inputs of rcp, x/127.0f, a/b, 127.0f/b and __float2half against the modelled PTX
//     computed on the device (a Sweep: mismatch count and examples).
//   - ProbeHalfOps, ProbeH2FAll, ProbeHalfSpecials: cuda_fp16.h's scalar __hadd, __hsub,
//     __hmul, __hfma, __hmul2 for every half against HalfOpsB/HalfOpsC, __half2float of
//     every half, and NaN cases (reference: HalfOpsRef, package f16).
//   - ProbeFloatSpecials (FloatSpecials), ProbeBytePerm, ProbeTiny: fmaxf/fminf/fabsf and
//     NaN arithmetic, __byte_perm, mul.ftz/fma.rn.ftz next to 2^-126 (compared with
//     package sim by the device tests).
//
// These last three groups were ported on 2026-12-02 from the project's former nvcc probe
// (sim/testdata/devprobe/probe.cu) and have not run on a device yet; the nvcc probe's H200
// results and the map from each of its checks to the probe here are in
// sim/testdata/h200-probes/README.md. What the other probes measured on an H200 (driver
// 580.159.04, CUDA 13.0) is recorded in gpu/testdata/README.md; MeasuredInt8 and the doc
// comments cite it.
//
// The fp16 path (package fp16path, the GP100 matrix-vector path of seed note 002) as real
// kernels: FP16Path runs kernels/fp16path.cu, a line-by-line mirror of the simulator
// (each function names its Go twin): fp16_convert (ConvertActivations), fp16_mmv_TYPE for
// the seven types at 1..8 columns (MulMat), fp16_glu_TYPE (MulMatSwiGLU) and
// fp16_rmsnorm_convert (RMSNormMul writing the conversion). The path's float32 and half
// arithmetic is inline PTX (the instructions package sim models); only the ggml code the
// fused epilogues copy (expf, rsqrtf, the divisions) is plain C under -use_fast_math, and
// the kernels return what those evaluated (FP16GLUTrace, FP16Norm) so that the tests can
// compare everything else bit for bit while MUFU.EX2 and MUFU.RSQ are not modelled.
// TestFP16PathMatchesSimulator is the device check (GGSIM_FP16_CASES, GGSIM_FP16_SEED).
// sm_60 is not a target of CUDA 13: the kernels are compiled for the device at hand,
// whose half2 FMA is the same IEEE binary16 arithmetic.
//
// Errors. A failed driver call is a *DriverError naming the entry point and the
// CUresult with its cuGetErrorName/cuGetErrorString; it matches ErrOutOfMemory,
// ErrNoDevice and ErrNoDriver with errors.Is. A failed NVRTC call is an *NVRTCError with
// the compile log. A missing library or symbol names the library and the loader's
// message.
//
// Invariants: a Context serialises its calls and makes its context current on a locked
// OS thread for each; device addresses passed to copies must lie inside one of the
// Context's allocations (checked); Close frees what is still allocated.
//
// Built without the cuda tag (or without cgo), Open and every method return an error
// ("ggsim built without the cuda tag"); the pure-Go parts work in every build.
package cuda
