// Package dl opens shared libraries at run time (dlopen/dlsym) for ggsim's GPU
// backends, so that no CUDA or ggml header or library is needed to build ggsim.
//
// It uses <dlfcn.h> through cgo and only under the build tag cuda. Built without
// that tag (or without cgo) every function returns an error saying so, and the
// package still compiles, so the rest of the module builds with CGO_ENABLED=0.
//
// Invariants: a *Library is safe for concurrent Sym calls; Close may be called
// once; a symbol pointer must not be used after Close. Errors name the call
// (dlopen, dlsym), the library and the loader's message.
package dl
