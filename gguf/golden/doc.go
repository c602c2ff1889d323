// Package golden reads and writes golden files: GGUF files that record what a real GPU
// build of ggml computed for given inputs, so that the simulator can be checked bit for bit
// without a GPU. The schema (version 1) is described in the README of the full golden set
// (and copied in testdata/golden/README.md at the repository root):
//
//	general.architecture = "golden", golden.version = 1 (u32), golden.producer (str),
//	golden.device.{name (str), cc (u32), sm_count (u32), driver (str)},
//	golden.ggml.{commit, build} (str), golden.case.count (u32), and per case i:
//	golden.case.{i}.op (str), .src (array of str), .dst (str), and for GLU cases
//	.glu (str), .fusion (str), .glu_alpha and .glu_limit (f32, swiglu_oai only).
//
// Optional provenance keys (File.Kernel; package ggmlsrc defines them):
// golden.ggml.kernel_fingerprint (str, 64 lowercase hex digits: the SHA-256 fingerprint
// of the ggml kernel sources the outputs were computed with) and golden.ggml.kernel_files
// (array of str, "PATH SHA256" per file, or "PATH absent"; only with the fingerprint,
// which must be the fingerprint of these lines). A malformed or inconsistent pair makes
// the file unusable, like a bad file key.
//
// Shapes (ggml order, ne[0] contiguous; missing trailing dims are 1):
//
//	mul_mat         a quantized [K,N], b f32 [K,M]                       -> f32 [N,M]
//	mul_mat_id      as quantized [K,N,E], b f32 [K,B1,T], ids i32 [U,T]  -> f32 [N,U,T]
//	quantize        f32 [K,R]                                            -> quantized [K,R]
//	mul_mat_glu     gate, up quantized [K,N], b f32 [K,M]                -> f32 [N,M]
//	mul_mat_id_glu  gate, up [K,N,E], b [K,B1,T], ids [U,T]              -> f32 [N,U,T]
//
// with, as ggml_mul_mat_id asserts, U a multiple of B1 (B1 = 1 broadcasts b to every slot).
//
// Open (or New) fails only for what makes the whole file unusable: a GGUF error, a missing
// or mistyped file key, golden.version other than 1, a golden.case.count the file cannot
// hold, or a case key outside 0..count-1. Each case is then validated on its own and a
// problem goes into that Case's Err (a *CaseError naming the file, case index and what is
// wrong), so a verifier can report every case; a case whose op is not in the schema is
// listed with an Err wrapping ErrUnknownOp. Expert ids are data and are checked only when
// asked (File.CheckIDs, or OpenValid which checks everything).
//
// Writer writes the same schema (validating each case, ids included, as it is added) for
// capture tools and for tests that need synthetic golden files; internal/slice uses it to
// cut the committed test slices from the full set.
package golden
