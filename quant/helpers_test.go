package quant

import (
	"math"
	"testing"

	"github.com/ggsim/ggsim/f16"
	"pgregory.net/rapid"
)

// lgGGMLFP16ToFP32 is ggml_compute_fp16_to_fp32 (ggml-impl.h) transcribed literally, to
// check fp16ToFP32 against.
func lgGGMLFP16ToFP32(h uint16) float32 {
	w := uint32(h) << 16
	sign := w & 0x80000000
	twoW := w + w
	const expOffset = uint32(0xE0) << 23
	const expScale float32 = 0x1.0p-112
	normalized := float32(math.Float32frombits((twoW>>4)+expOffset) * expScale)
	const magicMask = uint32(126) << 23
	denormalized := math.Float32frombits((twoW>>17)|magicMask) - 0.5
	var result uint32
	if twoW < 1<<27 {
		result = sign | math.Float32bits(denormalized)
	} else {
		result = sign | math.Float32bits(normalized)
	}
	return math.Float32frombits(result)
}

func TestFP16ToFP32GGML(t *testing.T) {
	for h := 0; h < 1<<16; h++ {
		got, want := fp16ToFP32(f16.Half(h)), lgGGMLFP16ToFP32(uint16(h))
		if math.Float32bits(got) != math.Float32bits(want) {
			t.Fatalf("%#04x: %#08x, ggml %#08x", h, math.Float32bits(got), math.Float32bits(want))
		}
	}
}

// TestFP32ToFP16GGML checks ggml's bit-trick conversion against x448/float16 (round to
// nearest even) on every 97th float32 and on every float32 next to a binary16 rounding
// boundary in the normal, subnormal and overflow ranges; NaNs must give 0x7e00 with sign.
func TestFP32ToFP16GGML(t *testing.T) {
	check := func(b uint32) {
		f := math.Float32frombits(b)
		got := fp32ToFP16(f)
		if f != f {
			if want := f16.Half(0x7e00 | (b>>16)&0x8000); got != want {
				t.Fatalf("NaN %#08x: %#04x, want %#04x", b, got, want)
			}
			return
		}
		if want := f16.FromFloat32(f); got != want {
			t.Fatalf("%g (%#08x): %#04x, want %#04x", f, b, got, want)
		}
	}
	for b := uint64(0); b < 1<<32; b += 97 {
		check(uint32(b))
	}
	// Every binary16 value and the float32 midpoints next to it, both signs.
	for h := uint32(0); h < 0x7c00; h++ {
		v := math.Float32bits(f16.Half(h).ToFloat32())
		w := math.Float32bits(f16.Half(h + 1).ToFloat32())
		if h+1 == 0x7c00 {
			w = v + (v - math.Float32bits(f16.Half(h-1).ToFloat32()))
		}
		mid := math.Float32bits((math.Float32frombits(v) + math.Float32frombits(w)) / 2)
		for _, b := range []uint32{v, v + 1, mid - 1, mid, mid + 1, w - 1} {
			check(b)
			check(b | 0x80000000)
		}
	}
	for _, b := range []uint32{0x7f800000, 0xff800000, 0x7fc00000, 0xffc00001, 0x7f800001, 0x477fefff, 0x477ff000, 0x7f7fffff} {
		check(b)
	}
}

func TestNearestInt(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		f := rapid.Float32Range(-4194303, 4194303).Draw(rt, "f")
		if got, want := nearestInt(f), int(math.RoundToEven(float64(f))); got != want {
			rt.Fatalf("nearestInt(%g) = %d, want %d", f, got, want)
		}
	})
	for f, want := range map[float32]int{0.5: 0, 1.5: 2, 2.5: 2, -0.5: 0, -1.5: -2, -2.5: -2, 4194303: 4194303, -4194303: -4194303} {
		if got := nearestInt(f); got != want {
			t.Errorf("nearestInt(%g) = %d, want %d", f, got, want)
		}
	}
}

func TestBestIndexInt8(t *testing.T) {
	brute := func(val []int8, x float32) int {
		best := 0
		for i := range val { // nearest; the upper one on a tie, as the bisection gives
			if math.Abs(float64(x)-float64(val[i])) <= math.Abs(float64(x)-float64(val[best])) {
				best = i
			}
		}
		return best
	}
	for _, val := range [][]int8{KValuesIQ4NL[:], {-3, -1, 0, 2, 5, 9}} {
		for i := -1400; i <= 1400; i++ {
			x := float32(i) / 10
			if got, want := bestIndexInt8(len(val), val, x), brute(val, x); got != want {
				t.Fatalf("%v: x=%g: %d, want %d", val, x, got, want)
			}
		}
		if got := bestIndexInt8(len(val), val, float32(math.NaN())); got != len(val)-1 {
			t.Errorf("NaN: %d, want %d (C's comparisons)", got, len(val)-1)
		}
	}
}

func TestCvttF32(t *testing.T) {
	for f, want := range map[float32]int32{
		0: 0, 1.99: 1, -1.99: -1, 2147483520: 2147483520, -2147483648: math.MinInt32,
		2147483648: math.MinInt32, float32(math.Inf(1)): math.MinInt32, float32(math.Inf(-1)): math.MinInt32,
		float32(math.NaN()): math.MinInt32, 300.7: 300,
	} {
		if got := cvttF32(f); got != want {
			t.Errorf("cvttF32(%g) = %d, want %d", f, got, want)
		}
	}
	if cToInt8(300.7) != 44 || cToUint8(-5) != 251 || cToInt8(float32(math.NaN())) != 0 {
		t.Errorf("low-byte truncation: %d %d %d", cToInt8(300.7), cToUint8(-5), cToInt8(float32(math.NaN())))
	}
}

func TestE8M0(t *testing.T) {
	for e := 0; e < 256; e++ {
		if got, want := e8m0ToFP32Half(uint8(e)), float32(math.Ldexp(1, e-128)); got != want {
			t.Errorf("e8m0ToFP32Half(%d) = %g, want %g", e, got, want)
		}
		want := float32(math.Ldexp(1, e-127))
		if e == 0 {
			want = float32(math.Ldexp(1, -127))
		}
		if got := e8m0ToFP32(uint8(e)); got != want {
			t.Errorf("e8m0ToFP32(%d) = %g, want %g", e, got, want)
		}
	}
}

func TestUE4M3(t *testing.T) {
	for x := 0; x < 256; x++ {
		e, m := (x>>3)&15, float64(x&7)
		var want float64
		switch {
		case x == 0, x == 0x7f:
			want = 0
		case e == 0:
			want = m * math.Ldexp(1, -9) / 2
		default:
			want = (1 + m/8) * math.Ldexp(1, e-7) / 2
		}
		if got := UE4M3ToFP32(uint8(x)); float64(got) != want {
			t.Errorf("UE4M3ToFP32(%#02x) = %g, want %g", x, got, want)
		}
	}
	// fp32ToUE4M3 of an exact code value returns that code for 0x01..0x77; ggml saturates
	// every value with exponent field 15 (codes 0x78..0x7e, 256..448) to 0x7e.
	for x := 1; x <= 0x7e; x++ {
		v := 2 * UE4M3ToFP32(uint8(x))
		want := x
		if x >= 0x78 {
			want = 0x7e
		}
		if got := fp32ToUE4M3(v); int(got) != want {
			t.Errorf("fp32ToUE4M3(%g) = %#02x, want %#02x", v, got, want)
		}
	}
	for _, v := range []float32{0, -1, float32(math.NaN()), 1e-9} {
		if got := fp32ToUE4M3(v); got != 0 {
			t.Errorf("fp32ToUE4M3(%g) = %#02x, want 0", v, got)
		}
	}
	if got := fp32ToUE4M3(1e9); got != 0x7e {
		t.Errorf("fp32ToUE4M3(1e9) = %#02x, want 0x7e", got)
	}
}

// TestFloorLog2f checks floorLog2f at points where glibc's log2f rounds up to the next
// integer (observed with glibc 2.36: floorf(log2f(x)) for every positive finite float32,
// see floorLog2f) and at the float32 just below each.
func TestFloorLog2f(t *testing.T) {
	cases := []struct {
		bits uint32
		want float32
	}{
		{0x007fffea, -126}, {0x007fffe9, -127},
		{0x003ffff5, -127}, {0x003ffff4, -128},
		{0x0003ffff, -131},
		{0x1dffffd4, -67}, {0x1dffffd3, -68},
		{0x3dffffff, -3}, {0x3dfffffe, -4},
		{0x40ffffff, 3}, {0x40fffffe, 2},
		{0x417fffff, 4}, {0x417ffffe, 3},
		{0x41fffffe, 5}, {0x41fffffd, 4},
		{0x427ffffe, 6}, {0x427ffffd, 5},
		{0x5fffffd4, 65}, {0x5fffffd3, 64},
		{0x7effffd4, 127}, {0x7effffd3, 126},
		{0x7f7fffd4, 128}, {0x7f7fffd3, 127}, {0x7f7fffff, 128},
		{0x3f800000, 0}, {0x3f7fffff, -1}, {0x00000001, -149}, {0x7f800000, float32(math.Inf(1))},
	}
	for _, c := range cases {
		if got := floorLog2f(math.Float32frombits(c.bits)); got != c.want {
			t.Errorf("floorLog2f(%#08x) = %g, want %g", c.bits, got, c.want)
		}
	}
}

// TestKernelConstantsInTraits checks that the block sizes of the type table agree with the
// named QK constants and that QI = QK/(4*QR) (ggml-common.h), except Q1_0 and Q2_0 whose
// QI ggml defines as QK/32; the MMVQ kernels take QK and QI from Traits.
func TestKernelConstantsInTraits(t *testing.T) {
	for _, c := range []struct {
		typ Type
		qk  int
	}{
		{Q4_0, QK4_0}, {Q4_1, QK4_1}, {Q5_0, QK5_0}, {Q5_1, QK5_1}, {Q8_0, QK8_0}, {Q8_1, QK8_1},
		{IQ4_NL, QK4_NL}, {MXFP4, QK_MXFP4}, {NVFP4, QK_NVFP4}, {Q1_0, QK1_0}, {Q2_0, QK2_0},
		{Q2_K, QK_K}, {Q3_K, QK_K}, {Q4_K, QK_K}, {Q5_K, QK_K}, {Q6_K, QK_K}, {IQ4_XS, QK_K},
		{IQ2_XXS, QK_K}, {IQ2_XS, QK_K}, {IQ2_S, QK_K}, {IQ3_XXS, QK_K}, {IQ3_S, QK_K},
		{IQ1_S, QK_K}, {IQ1_M, QK_K},
	} {
		tr, _ := c.typ.Traits()
		if tr.BlockSize != c.qk {
			t.Errorf("%v: BlockSize %d, QK constant %d", c.typ, tr.BlockSize, c.qk)
		}
		want := 0
		if tr.QR > 0 {
			want = tr.BlockSize / (4 * tr.QR)
			if c.typ == Q1_0 || c.typ == Q2_0 {
				want = tr.BlockSize / 32
			}
		}
		if tr.QR <= 0 || tr.QI != want {
			t.Errorf("%v: QR %d QI %d, want QR > 0 and QI %d", c.typ, tr.QR, tr.QI, want)
		}
	}
	for typ := Type(0); typ < TypeCount; typ++ {
		if tr, _ := typ.Traits(); (tr.QR == 0) != (tr.QI == 0) {
			t.Errorf("%v: QR %d and QI %d: both or neither must be set", typ, tr.QR, tr.QI)
		}
	}
}
