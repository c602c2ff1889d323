// Package f16 is IEEE 754 binary16 ("half", ggml_half) for the simulator: conversions
// that round exactly as the GPU and ggml do, and (see arith.go) exact arithmetic.
//
// Conversions: FromFloat32 rounds to nearest even, produces binary16 subnormals (never
// flushes) and overflows to ±Inf, as cvt.rn.f16.f32 on the GPU and GGML_FP32_TO_FP16 on
// the CPU do for every non-NaN input. ToFloat32 is exact. NaNs differ between the three:
// FromFloat32 keeps a NaN's sign and top payload bits (quieted); the GPU's __float2half
// gives 0x7fff for every NaN (sim.F2H models that, measured on an H200); ggml's CPU
// conversion gives 0x7e00 with the sign (quant's fp32ToFP16 models that).
package f16

import "github.com/x448/float16"

// Half is the bit pattern of a binary16 value.
type Half uint16

// FromFloat32 returns the binary16 nearest to f (ties to even), with subnormals and
// overflow to ±Inf.
func FromFloat32(f float32) Half { return Half(float16.Fromfloat32(f).Bits()) }

// ToFloat32 returns the exact float32 value of h.
func (h Half) ToFloat32() float32 { return float16.Frombits(uint16(h)).Float32() }

// Float32 is ToFloat32.
func (h Half) Float32() float32 { return h.ToFloat32() }

// Bits returns the raw bits.
func (h Half) Bits() uint16 { return uint16(h) }

// IsNaN reports whether h is a NaN.
func (h Half) IsNaN() bool { return h&0x7c00 == 0x7c00 && h&0x03ff != 0 }

// IsInf reports whether h is ±Inf.
func (h Half) IsInf() bool { return h&0x7fff == 0x7c00 }
