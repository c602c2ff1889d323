// Package quant is ggml's block formats: the type table (every ggml_type id), the block
// layouts with accessors that kernel emulations read in place, dequantization bit-exact
// with ggml's dequantize_row_*, and the reference quantizers byte-exact with
// ggml_quantize_chunk without an importance matrix (ggml commit d99724f2b141).
//
// Where ggml's C computes in float32, the Go code does too, one rounding per operation:
// every product that feeds an addition is written float32(a*b) so that Go never fuses it
// (it would on arm64 and with GOAMD64=v3). ggml-base is compiled without FMA on x86-64,
// which is the behaviour reproduced here.
//
// A valid type that ggsim does not model (no codec, no reference quantizer: the IQ types
// have none) is an error wrapping ErrUnsupported, which matches errors.ErrUnsupported;
// an invalid type or sizes that are not whole blocks are other errors.
package quant
