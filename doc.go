// Package ggsim is the front door of ggsim, a pure-Go, bit-exact CPU simulator of
// ggml's quantized CUDA matmul kernels (ggml commit d99724f2b141, CUDA 13.0, sm_90,
// -use_fast_math).
//
// MulMat and MulMatID take a device (sim.Lookup("H200"), or any sim.Device), quantized
// weights as ggml stores them and float32 activations, decide the kernel exactly as
// ggml's CUDA backend would on that device (package tiling: MMVQ, MMQ or neither), run
// the simulated kernel and return the float32 output with the bits the GPU writes, the
// decision with ggml's reason and, with WithTrace, every float step of the kernel.
//
// Where ggml dispatches to a kernel ggsim does not simulate yet (today: MMQ, for more
// than 8 columns or tokens; cuBLAS after dequantization), the error wraps
// errors.ErrUnsupported and names the kernel and ggml's reason: a result is never
// computed with a kernel ggml would not use. Bad input (sizes that do not fit, expert
// ids out of range) is an error that is not ErrUnsupported.
//
// MulMatGLU and MulMatIDGLU run a feed-forward block's gate and up matmuls and a GLU
// (swiglu, geglu, swiglu_oai; package sim/glu) as ggml does for one graph {gate, up,
// GLU}: fused into one mul_mat_vec_q launch with the GLU epilogue where ggml fuses it
// (tiling.FuseGLU), else the two matmuls and unary.cu's GLU kernel, with the GPU's
// fast-math expf and tanhf (MUFU.EX2, MUFU.TANH; package sim). Another GLU is an error
// wrapping errors.ErrUnsupported.
//
// Simulator is the same front door as an oracle.Impl (and oracle.GLUImpl), which the golden verifier
// (oracle.VerifyFile, simrun verify) and the conformance suite (oracle/oracletest) run.
// Samples holds the golden files of real H200 outputs that simrun verifies when it is
// given no file.
//
// The packages below the front door can be used alone: quant (block formats, reference
// quantizers), gguf (GGUF files), sim/mmvq (the MMVQ kernels, without the dispatch
// check), tiling (the dispatch decisions), oracle (the fp64 reference and verdicts).
//
// # Adding a kernel
//
// The kernels ggsim simulates are listed in one table, simulated (mulmat.go): one entry
// per tiling.Kernel, with the functions that run MUL_MAT and MUL_MAT_ID. A new simulator
// (sim/mmq) is plugged in by adding its entry there; everything above (MulMat, MulMatID,
// Simulator, the verifier) then uses it.
package ggsim
