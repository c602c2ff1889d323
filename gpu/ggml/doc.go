// Package ggml runs matrix products and quantization through a user's build of ggml
// (the library under llama.cpp), loaded at run time, and captures golden files from it.
//
// Model: a ggml build directory holds libggml-base.so, libggml.so, libggml-cpu.so and,
// for GPU runs, libggml-cuda.so. Load opens them with dlopen (base first, with
// RTLD_GLOBAL, so the backends resolve against it even when their RUNPATH does not name
// the directory), resolves the few C entry points used (declared by hand after
// include/ggml.h, ggml-backend.h, ggml-alloc.h, ggml-cpu.h and ggml-cuda.h at ggml
// d99724f2b141) and checks that the library's type table (ggml_type_name,
// ggml_type_size, ggml_blck_size) agrees with quant's for every type id ggsim knows, so
// a build whose enum differs is refused instead of misread.
//
// Each MulMat/MulMatID call builds a fresh ggml context with no_alloc, one MUL_MAT or
// MUL_MAT_ID node and its inputs, allocates them in the backend's buffer
// (ggml_backend_alloc_ctx_tensors), uploads the inputs (ggml_backend_tensor_set),
// checks ggml_backend_supports_op, computes the one-node graph
// (ggml_backend_graph_compute), reads the result (ggml_backend_tensor_get) and frees
// everything. That is exactly how the shared golden files were made. No field of struct
// ggml_tensor is read or written: shapes are set by ggml_new_tensor_{2,3}d and checked
// with ggml_nelements and ggml_nbytes.
//
// Invariants: inputs are validated (types, block multiples, lengths, expert ids) before
// any ggml call, because ggml aborts the process on a failed assertion; a Backend's
// calls are serialised; outputs are fresh slices.
//
// Built without the cuda tag (or without cgo), Load returns an error saying so; the
// capture logic (Capture, DefaultCases, the input generator) is pure Go and works in
// every build, against any Runner.
package ggml
