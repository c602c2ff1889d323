// Package oracle is ggsim's judge: it says whether an implementation of ggml's CUDA
// quantized matmuls computed what it must, and never computes a kernel's bits itself.
//
// It holds
//
//   - the fp64 reference (MulMatRef, with gonum's Ddot in the order of its Dgemm): the
//     exact product of the dequantized weights and the float32 activations, and per
//     element the bound within which a correct kernel's float32 result must lie (the
//     derivation is on MulMatRef);
//   - the kernel bound (MulMatRefOn, MulMatIDRefOn; docs/bounds.md): for the kernel ggml
//     runs on a device (MMVQ, MMQ on the int8-MMA or dp4a layout), the exact value of
//     the kernel's own formula on the activations quantized as the kernel does (Center)
//     and a running bound of its float32 rounding, about 10^-5 of the result where
//     MulMatRef's is about its size; the verifier judges with it;
//   - the metrics (CompareBits, ULPDistance, ErrorsOf, ErrorSums);
//   - the two-part verdict on a case: bit-exact against the expected bits, and within the
//     fp64 bound (CaseResult, Status);
//   - the golden verifier (VerifyFile), which reads the cases of a golden file
//     (gguf/golden) and runs each through an Impl;
//   - with oracle/oracletest, the exported conformance suite every implementation runs.
//
// The implementations it judges are behind one interface, Impl: the simulator is
// ggsim.Simulator in the root package (the front door, which decides the dispatch as
// ggml does and runs the simulated kernel), the GPU backends are gpu/ggml's. The oracle
// imports no implementation.
//
// # Verdicts
//
// A case is BIT-EXACT when every output's math.Float32bits equals the golden bits (the
// bytes, for quantize cases) and, unless skipped, no output is outside its fp64 bound;
// MISMATCH when some bits differ (the report names the first divergent element and,
// where the Impl is a Localizer, where in the kernel it was computed); UNSUPPORTED when
// the implementation or the verifier does not model the case, which is an error wrapping
// errors.ErrUnsupported (ErrUnsupported is that error) and is a failure, never a pass;
// ERROR for anything else (a corrupt file or case, inconsistent sizes, a failing
// backend). The classification uses errors.Is, never the text of an error.
//
// # Memory
//
// The references dequantize one weight row at a time into float64 and discard it: they
// hold K·8 bytes of fp64 weights, never the K·N·8 of the matrix, with results bit for bit
// those of the whole-matrix computation they replaced (MulMatRef's values keep the
// summation order of gonum's Dgemm on the whole product, gemmParallel). Their outputs
// are 2 or 3 float64 per element; MulMatRefOnCols hands them out a block of columns at a
// time for a caller that judges a large product (simrun run).
//
// # Limits
//
// The reference covers MUL_MAT and MUL_MAT_ID (per token and slot) of the quantized
// types quant can dequantize. GLU cases (mul_mat_glu, mul_mat_id_glu) run through an
// Impl's GLUImpl with the case's fusion setting and are judged on their bits only (no
// fp64 check); an Impl without GLUImpl has them UNSUPPORTED. A golden file of another
// ggml commit than GGMLCommit is UNSUPPORTED as
// a whole unless it records the kernel fingerprint of the modelled sources
// (golden.ggml.kernel_fingerprint, package ggmlsrc): then it is verified, and every case
// says so (CaseResult.Sources). A file whose fingerprint differs (even one that names
// GGMLCommit) is UNSUPPORTED, naming the files whose hashes differ where it records them
// (CheckSources).
package oracle
