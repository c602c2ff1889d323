// Package ggmlsrc says which ggml ggsim models: the commit, the build its arithmetic was
// read and measured from, and a fingerprint of the kernel sources the models follow, so
// that a golden file made with another ggml commit can be accepted when those sources
// did not change.
//
// # Model
//
// Paths is a fixed list of files of a ggml source tree (paths relative to the ggml
// directory, the one holding src/ and include/; in llama.cpp that is its ggml/
// folder). Each is hashed as SHA-256 of its bytes as they are on disk (no line-ending or
// whitespace normalisation). A FileHash is written as one line "PATH HEX" (HEX the 64
// lowercase hex digits), or "PATH absent" for a listed file the tree does not have. The
// fingerprint of a set of FileHashes is the SHA-256, in lowercase hex, of their lines
// sorted by path, each followed by "\n". Modelled is the set of ggml at Commit, generated
// by gen_hashes.go from a ggml tree at that commit:
//
//	GGML_DIR=path/to/ggml go generate ./ggmlsrc
//
// Two trees with the same fingerprint have byte-identical listed files; a golden file
// that records the fingerprint of its ggml tree (golden.ggml.kernel_fingerprint, written
// by simrun capture --ggml-src) can thus be verified against ggsim when it equals
// ModelledFingerprint, whatever its commit (oracle.VerifyFile).
//
// # Sources
//
// The list is what the models in sim/, tiling/, streamk/, moe/ and quant/ cite, with the
// headers those files include from the same tree (ggml commit d99724f2b141):
//
//   - src/ggml-cuda/mmq.cuh, mmq.cu, mmq-load-tiles.cuh, mmq-vec-dot.cuh,
//     mmq-config-*.cuh (all eight architectures: tiling's tables hold all of them),
//     mma.cuh (the MMA tiles mmq-vec-dot.cuh uses on sm_90): sim/mmq, tiling, streamk;
//   - src/ggml-cuda/mmvq.cu, mmvq.cuh, vecdotq.cuh: sim/mmvq, tiling;
//   - src/ggml-cuda/quantize.cu, quantize.cuh: sim/q8;
//   - src/ggml-cuda/mmid.cu, mmid.cuh: moe;
//   - src/ggml-cuda/ggml-cuda.cu (supports_op, ggml_cuda_mul_mat, ggml_cuda_mul_mat_id),
//     mmvf.cu, mmvf.cuh, mmf.cu, mmf.cuh (the float kernels' should_use predicates),
//     convert.cu (which types have a converter for cuBLAS): tiling's dispatch;
//   - src/ggml-cuda/common.cuh (feature predicates, warp reductions),
//     src/ggml-cuda/vendors/cuda.h (what common.cuh includes on NVIDIA): sim;
//   - src/ggml-cuda/CMakeLists.txt (-use_fast_math and the other CUDA flags): sim;
//   - src/ggml-common.h (block layouts, grids), src/ggml-quants.c (reference quantizers),
//     src/ggml-impl.h (fp16 and e8m0 conversions), src/ggml.c (type_traits,
//     ggml_quantize_chunk, ggml_mul_mat_id), include/ggml.h (enum ggml_type): quant, moe.
//
// # Limits
//
// The fingerprint is conservative for what it lists and blind to what it does not: the
// generated template instances (src/ggml-cuda/template-instances), other CMake files,
// the toolkit, compiler and driver are not in it (the toolkit is recorded in
// golden.ggml.build, free text that the verifier does not judge: a build with another
// nvcc may fuse other multiply-adds, and then shows as MISMATCH, not as UNSUPPORTED). ggml.c, ggml.h and ggml-cuda.cu change with most ggml commits for reasons
// unrelated to the kernels, so most other commits differ in those files; the per-file
// hashes let a reader see which files differ and judge. A tree whose listed files were
// checked out with converted line endings has other hashes.
package ggmlsrc
