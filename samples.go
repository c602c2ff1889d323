// Package ggsim is the root of the ggsim module: a bit-exact CPU simulator of ggml's
// quantized CUDA matmul kernels (see README.md and the packages below it). The root
// package only carries the golden samples that simrun verifies when it is given no file.
package ggsim

import "embed"

// Samples holds the small committed golden files (testdata/golden/*.gguf: real H200
// outputs of ggml's kernels, cut from the project's full golden set; provenance in
// testdata/golden/README.md).
//
//go:embed testdata/golden/*.gguf
var Samples embed.FS
