package quant

import (
	"math"

	"github.com/ggsim/ggsim/f16"
)

// Helpers shared by the block formats: ggml's rounding and table-lookup primitives, its
// float32<->binary16 and E8M0/UE4M3 scale conversions, and the non-linear value tables.
// Each is a port of the C at ggml commit d99724f2b141 (ggml/src/ggml-quants.c,
// ggml/src/ggml-impl.h, ggml/src/ggml-common.h) and keeps its float32 operation order.

// Group maxima below these are treated as all-zero groups by the quantizers
// (GROUP_MAX_EPS* in ggml-quants.c).
const (
	groupMaxEps       float32 = 1e-15
	groupMaxEpsIQ3XXS float32 = 1e-8
	groupMaxEpsIQ2S   float32 = 1e-8
	groupMaxEpsIQ1M   float32 = 1e-7
	groupMaxEpsIQ1S   float32 = 1e-12
)

// KValuesIQ4NL is kvalues_iq4nl (ggml-common.h): the 16 signed levels of IQ4_NL and
// IQ4_XS, indexed by the 4-bit code. It must not be modified.
var KValuesIQ4NL = [16]int8{-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113}

// KValuesMXFP4 is kvalues_mxfp4 = kvalues_fp4 (ggml-common.h): the E2M1 values doubled,
// shared by MXFP4 and NVFP4, indexed by the 4-bit code. It must not be modified.
var KValuesMXFP4 = [16]int8{0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12}

// nearestInt is ggml's nearest_int: round to nearest, ties to even, by adding 1.5*2^23
// in float32 and reading the low mantissa bits. ggml asserts |f| <= 4194303 (the assert
// is compiled out in release builds); outside that range (and for NaN and ±Inf) the
// result is what the bit trick gives, which is what ggml computes too.
func nearestInt(f float32) int {
	val := float32(f) + 12582912 // float32(f): no fusion with a product the caller passes
	i := int32(math.Float32bits(val))
	return int((i & 0x007fffff) - 0x00400000)
}

// bestIndexInt8 is ggml's best_index_int8: the index of the value of the sorted table
// val[:n] nearest to x (the upper one on a tie), by bisection. Differences are float32.
// A NaN x gives n-1, as in C.
func bestIndexInt8(n int, val []int8, x float32) int {
	x = float32(x) // round a product the caller passes before the subtractions below (no fusion)
	if x <= float32(val[0]) {
		return 0
	}
	if x >= float32(val[n-1]) {
		return n - 1
	}
	ml, mu := 0, n-1
	for mu-ml > 1 {
		mav := (ml + mu) / 2
		if x < float32(val[mav]) {
			mu = mav
		} else {
			ml = mav
		}
	}
	if x-float32(val[mu-1]) < float32(val[mu])-x {
		return mu - 1
	}
	return mu
}

// cvttF32 is C's conversion of a float to a 32-bit int as x86-64 compiles it (cvttss2si,
// cvttps2dq): truncation toward zero, and the "integer indefinite" value math.MinInt32
// for NaN and for values outside the int32 range. C leaves those cases undefined; this is
// what gcc's code for ggml-base does on x86-64, made independent of Go's own conversion
// (which differs between architectures).
func cvttF32(f float32) int32 {
	f = float32(f)
	if f != f || f >= 2147483648 || f < -2147483648 {
		return math.MinInt32
	}
	return int32(f)
}

// cToInt8 is C's (int8_t) of a float as gcc compiles it on x86-64: cvttF32, then the low
// byte.
func cToInt8(f float32) int8 { return int8(cvttF32(f)) }

// cToUint8 is C's (uint8_t) of a float as gcc compiles it on x86-64: cvttF32, then the low
// byte.
func cToUint8(f float32) uint8 { return uint8(cvttF32(f)) }

// roundf is C's roundf: round half away from zero, in float32 (exact via float64).
func roundf(f float32) float32 { return float32(math.Round(float64(float32(f)))) }

// fabsf is C's fabsf: clears the sign bit (also of a NaN).
func fabsf(f float32) float32 { return math.Float32frombits(math.Float32bits(f) &^ 0x80000000) }

// fp32ToFP16 is GGML_FP32_TO_FP16 as ggml-base computes it on x86-64 without F16C
// (ggml_compute_fp32_to_fp16 in ggml-impl.h, after Maratyszcza's FP16 library): round to
// nearest even with binary16 subnormals and overflow to ±Inf, the same as f16.FromFloat32
// for every non-NaN input; every NaN becomes the quiet NaN 0x7e00 with the input's sign.
func fp32ToFP16(f float32) f16.Half {
	const scaleToInf float32 = 0x1.0p+112
	const scaleToZero float32 = 0x1.0p-110
	base := float32(float32(fabsf(f)*scaleToInf) * scaleToZero)

	w := math.Float32bits(f)
	shl1w := w + w
	sign := w & 0x80000000
	bias := shl1w & 0xFF000000
	if bias < 0x71000000 {
		bias = 0x71000000
	}
	base = math.Float32frombits((bias>>1)+0x07800000) + base
	bits := math.Float32bits(base)
	expBits := (bits >> 13) & 0x00007C00
	mantissaBits := bits & 0x00000FFF
	nonsign := expBits + mantissaBits
	if shl1w > 0xFF000000 {
		nonsign = 0x7E00
	}
	return f16.Half(sign>>16 | nonsign)
}

// fp16ToFP32 is GGML_FP16_TO_FP32: the exact value of h (a NaN keeps its sign and payload
// and is quieted, as ggml's bit-trick conversion gives on x86-64).
func fp16ToFP32(h f16.Half) float32 { return h.ToFloat32() }

// e8m0ToFP32Half is ggml_e8m0_to_fp32_half (ggml-impl.h): 2^(e-128), the E8M0 scale
// halved because the MXFP4 value table is doubled. e = 0 and 1 give the float32
// subnormals 2^-128 and 2^-127; e = 255 gives 2^127 (ggml does not treat it as NaN).
func e8m0ToFP32Half(e uint8) float32 {
	var bits uint32
	if e < 2 {
		bits = 0x00200000 << e
	} else {
		bits = uint32(e-1) << 23
	}
	return math.Float32frombits(bits)
}

// e8m0ToFP32 is ggml_e8m0_to_fp32: 2^(e-127), with e = 0 giving 2^-127 and e = 255 giving
// +Inf (ggml's bit pattern 0xff<<23; it does not produce NaN).
func e8m0ToFP32(e uint8) float32 {
	if e == 0 {
		return math.Float32frombits(0x00400000)
	}
	return math.Float32frombits(uint32(e) << 23)
}

// UE4M3ToFP32 is ggml_ue4m3_to_fp32 (the NVFP4 sub-block scale): the unsigned E4M3 value
// (bias 7) halved, with 0 and 0x7f decoding to 0. The sign bit of x is ignored.
func UE4M3ToFP32(x uint8) float32 {
	if x == 0 || x == 0x7F {
		return 0
	}
	exp := int(x>>3) & 0xF
	man := int(x & 0x7)
	var raw float32
	if exp == 0 {
		raw = float32(math.Ldexp(float64(man), -9))
	} else {
		// ldexpf(1.0f + (float)man/8.0f, exp-7): all steps exact in float32.
		raw = float32(math.Ldexp(float64(1+float32(float32(man)/8)), exp-7))
	}
	return raw * 0.5
}

// fp32ToUE4M3 is ggml_fp32_to_ue4m3: the NVFP4 scale code of x > 0 (0 for x <= 0 or
// NaN), saturating at 0x7e = 448, rounding the mantissa half up on the bit pattern.
func fp32ToUE4M3(x float32) uint8 {
	if !(x > 0) {
		return 0
	}
	if x > 448 {
		x = 448
	}
	bits := math.Float32bits(x)
	fp32Exp := int((bits>>23)&0xFF) - 127
	fp32Man := int((bits >> 20) & 0x7)
	ue4m3Exp := fp32Exp + 7
	if ue4m3Exp <= 0 {
		man := int(cvttF32(float32(x*512) + 0.5))
		if man > 7 {
			man = 7
		}
		if man < 1 {
			return 0
		}
		return uint8(man)
	}
	if ue4m3Exp >= 15 {
		return 0x7E
	}
	roundBit := int((bits >> 19) & 1)
	ue4m3Man := fp32Man + roundBit
	if ue4m3Man > 7 {
		ue4m3Man = 0
		ue4m3Exp++
		if ue4m3Exp >= 15 {
			return 0x7E
		}
	}
	return uint8(ue4m3Exp<<3 | ue4m3Man)
}

// le16 and le32 read little-endian integers from b.
func le16(b []byte) uint16 { return uint16(b[0]) | uint16(b[1])<<8 }
func le32(b []byte) uint32 {
	return uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16 | uint32(b[3])<<24
}

// put16 and put32 write little-endian integers to b.
func put16(b []byte, v uint16) { b[0], b[1] = byte(v), byte(v>>8) }
func put32(b []byte, v uint32) {
	b[0], b[1], b[2], b[3] = byte(v), byte(v>>8), byte(v>>16), byte(v>>24)
}
