package quant

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"math"
	"testing"

	"pgregory.net/rapid"
)

// The extra types share the harness of iquants_test.go (ixModel covers NVFP4, Q1_0, Q2_0,
// TQ1_0, TQ2_0); these are the tests specific to extra.go.

// TestUE4M3ToFP32CUDA checks the GPU decode of all 256 codes against the signed E4M3
// (e4m3fn) definition and OCP FP8 spot values, and against the CPU decode where the two
// agree by design (x < 0x80).
func TestUE4M3ToFP32CUDA(t *testing.T) {
	for x := 0; x < 256; x++ {
		var want float64
		if x&0x7f != 0x7f {
			mag := ixUE4M3CPU(byte(x & 0x7f)) // halved magnitude of the low 7 bits
			want = mag
			if x&0x80 != 0 {
				want = -mag
			}
		}
		got := UE4M3ToFP32CUDA(uint8(x))
		if math.Float32bits(got) != math.Float32bits(float32(want)) {
			t.Errorf("UE4M3ToFP32CUDA(%#02x) = %v, want %v", x, got, want)
		}
		if x < 0x80 && math.Float32bits(got) != math.Float32bits(UE4M3ToFP32(uint8(x))) {
			t.Errorf("UE4M3ToFP32CUDA(%#02x) = %v, CPU %v", x, got, UE4M3ToFP32(uint8(x)))
		}
	}
	// e4m3fn: 0x38 = 1, 0x7e = 448 (max), 0x08 = 2^-6 (min normal), 0x01 = 2^-9; all halved.
	for _, c := range []struct {
		x    uint8
		want float32
	}{{0x38, 0.5}, {0x7e, 224}, {0x08, 0x1p-7}, {0x01, 0x1p-10}, {0xb8, -0.5}, {0xfe, -224}, {0xff, 0}, {0x7f, 0}} {
		if got := UE4M3ToFP32CUDA(c.x); got != c.want {
			t.Errorf("UE4M3ToFP32CUDA(%#02x) = %v, want %v", c.x, got, c.want)
		}
	}
	if got := UE4M3ToFP32CUDA(0x80); got != 0 || !math.Signbit(float64(got)) {
		t.Errorf("UE4M3ToFP32CUDA(0x80) = %v, want -0", got)
	}
	// The CPU decode ignores the sign bit and keeps 0xff = 240.
	if got := UE4M3ToFP32(0xff); got != 240 {
		t.Errorf("UE4M3ToFP32(0xff) = %v, want 240", got)
	}
}

// TestTQ1Digits checks the TQ1_0 digit extraction against the base-3 encoding of ggml's
// quantize_row_tq1_0_ref: the digits t0..t4 in {0,1,2} (t0 most significant; for qh four
// digits and t4 = 0) are packed as q = ceil(w*256/243), w = sum t_i 3^(4-i), and
// digit i is read back as (uint8(q*3^i)*3)>>8.
func TestTQ1Digits(t *testing.T) {
	for _, n := range []int{5, 4} {
		p := 1
		for i := 0; i < n; i++ {
			p *= 3
		}
		for v := 0; v < p; v++ {
			w := v
			if n == 4 {
				w *= 3
			}
			q := uint8((w*256 + 242) / 243)
			for i := 0; i < n; i++ {
				want := w
				for j := 0; j < 4-i; j++ {
					want /= 3
				}
				want %= 3
				if got := tq1Digit(q, i); got != want {
					t.Fatalf("n=%d w=%d: digit %d of %#02x = %d, want %d", n, w, i, q, got, want)
				}
			}
		}
	}
}

// TestBlockViewsExtra checks the field offsets of the extra block views.
func TestBlockViewsExtra(t *testing.T) {
	blk := make([]byte, 66)
	for i := range blk {
		blk[i] = byte(i)
	}
	field := func(name string, got []byte, off, n int) {
		t.Helper()
		if len(got) != n || cap(got) != n || got[0] != byte(off) {
			t.Errorf("%s: len %d cap %d first %d, want len %d at offset %d", name, len(got), cap(got), got[0], n, off)
		}
	}
	eq := func(name string, got, want uint64) {
		t.Helper()
		if got != want {
			t.Errorf("%s = %#x, want %#x", name, got, want)
		}
	}
	nv := BlockNVFP4(blk[:36])
	eq("NVFP4.Scale(3)", uint64(nv.Scale(3)), 3)
	field("NVFP4.Qs", nv.Qs(), 4, 32)
	q1 := BlockQ1_0(blk[:18])
	eq("Q1_0.D", uint64(q1.D()), 0x0100)
	field("Q1_0.Qs", q1.Qs(), 2, 16)
	q2 := BlockQ2_0(blk[:18])
	eq("Q2_0.D", uint64(q2.D()), 0x0100)
	field("Q2_0.Qs", q2.Qs(), 2, 16)
	t1 := blockTQ1_0(blk[:54])
	field("TQ1_0.Qs", t1.Qs(), 0, 48)
	field("TQ1_0.Qh", t1.Qh(), 48, 4)
	eq("TQ1_0.D", uint64(t1.D()), 0x3534)
	t2 := blockTQ2_0(blk[:66])
	field("TQ2_0.Qs", t2.Qs(), 0, 64)
	eq("TQ2_0.D", uint64(t2.D()), 0x4140)
}

// ixQuantTypes are the extra types with a reference quantizer.
var ixQuantTypes = []Type{NVFP4, Q1_0, Q2_0, TQ1_0, TQ2_0}

// ixQuantSpecials are inputs that exercise the edges of the reference quantizers.
var ixQuantSpecials = []float32{0, float32(math.Copysign(0, -1)), float32(math.NaN()), float32(math.Inf(1)),
	float32(math.Inf(-1)), 1e-45, -1e-40, 3.4e38, 65504, 70000, 1e-8, 0.5, -0.25}

// ixQuantPattern is a deterministic input row of 8 blocks of type t: block b uses xorshift32
// values in [-1, 1) times a scale, and in blocks 4..7 every 7th value is replaced by one of
// ixQuantSpecials (block 7: every value).
func ixQuantPattern(t Type) []float32 {
	n := 8 * t.BlockSize()
	x := make([]float32, n)
	s := uint32(88172645) ^ uint32(t)<<8
	scales := []float32{1, 1e-3, 1e-6, 300, 1, 0.05, 1e4, 1}
	for i := range x {
		s ^= s << 13
		s ^= s >> 17
		s ^= s << 5
		b := i / t.BlockSize()
		x[i] = (float32(s>>8)/(1<<23) - 1) * scales[b]
		if b == 7 || (b >= 4 && i%7 == 0) {
			x[i] = ixQuantSpecials[int(s>>3)%len(ixQuantSpecials)]
		}
	}
	return x
}

// TestQuantizeRefCSpot checks the bytes that the reference quantizers write for
// ixQuantPattern against ggml's C: the digests are the sha256 of the row that
// quantize_row_<type>_ref (ggml-quants.c at d99724f2b141, gcc 12 -O3 -std=gnu11, x86-64,
// glibc lroundf) wrote for the same input, computed by testdata/gen/ggmlrows.c (mode
// quantize) on the row TestWriteCInputs writes; testdata/gen/check.sh recomputes them.
// The pattern includes NaN, ±Inf, subnormal and huge inputs.
func TestQuantizeRefCSpot(t *testing.T) {
	want := map[Type]string{
		NVFP4: "7904997adaa2276adfa98e9a0e808bd89ca08d8b88e44c663b4747756bd14457",
		Q1_0:  "99d9f3f7113cf304de28f75a35657a642b6c4800e7f7ef85ec7f3f7ba15251b5",
		Q2_0:  "a9aed11bf2a537c760fec587e0fe8f45b6cdb88beb13b49fb3a1e9a38116f2a6",
		TQ1_0: "2e9480fddcbae4fe64c00d8a28b9f101f21d2827405f4bb2c8280c59add8af54",
		TQ2_0: "66bf8e93a4260ebc961c1e1e86d1418af539974e505d603b9168c11d824f6ef4",
	}
	for _, typ := range ixQuantTypes {
		x := ixQuantPattern(typ)
		rs, _ := typ.RowSize(int64(len(x)))
		got := make([]byte, rs)
		if err := QuantizeRowRef(typ, x, got); err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(got)
		if h := hex.EncodeToString(sum[:]); h != want[typ] {
			t.Errorf("%v: sha256 of quantized row %s, want %s", typ, h, want[typ])
		}
	}
}

// TestQuantizeRefTernaryRoundTrip: a row of values in {-a, 0, +a} with a a power of two in
// binary16's normal range, and ±a present in every block, comes back exactly through
// QuantizeRowRef and Dequantize for the ternary-capable types (d = amax = a).
func TestQuantizeRefTernaryRoundTrip(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		typ := rapid.SampledFrom([]Type{Q2_0, TQ1_0, TQ2_0}).Draw(rt, "type")
		nb := rapid.IntRange(1, 3).Draw(rt, "blocks")
		bs := typ.BlockSize()
		x := make([]float32, nb*bs)
		for b := 0; b < nb; b++ {
			a := float32(math.Ldexp(1, rapid.IntRange(-14, 15).Draw(rt, "exp")))
			for j := 0; j < bs; j++ {
				x[b*bs+j] = float32(rapid.IntRange(-1, 1).Draw(rt, "t")) * a
			}
			x[b*bs+rapid.IntRange(0, bs-1).Draw(rt, "pos")] = a * float32(1-2*rapid.IntRange(0, 1).Draw(rt, "sign"))
		}
		rs, _ := typ.RowSize(int64(len(x)))
		q := make([]byte, rs)
		if err := QuantizeRowRef(typ, x, q); err != nil {
			rt.Fatal(err)
		}
		y := make([]float32, len(x))
		if err := DequantizeRow(typ, q, y); err != nil {
			rt.Fatal(err)
		}
		for i := range x {
			if math.Float32bits(y[i]) != math.Float32bits(x[i]+0) { // +0: a 0 input comes back as +0
				rt.Fatalf("%v value %d: %v came back as %v", typ, i, x[i], y[i])
			}
		}
	})
}

// TestQuantizeRefQ1_0Signs: Q1_0 stores the sign of each input (bit set iff x >= 0, so -0
// sets it and NaN does not), and d = float16(sum|x|/128), whatever the input bits.
func TestQuantizeRefQ1_0Signs(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		x := make([]float32, QK1_0)
		for i := range x {
			x[i] = math.Float32frombits(rapid.Uint32().Draw(rt, "bits"))
		}
		q := make([]byte, sizeQ1_0)
		if err := QuantizeRowRef(Q1_0, x, q); err != nil {
			rt.Fatal(err)
		}
		for i, v := range x {
			if got, want := q[2+i/8]>>(i%8)&1 == 1, v >= 0; got != want {
				rt.Fatalf("value %d = %v: bit %v", i, v, got)
			}
		}
	})
}

// TestQuantizeRefAnyBits: arbitrary float32 bit patterns quantize without panic, and the
// result is a function of the input (the same bytes twice).
func TestQuantizeRefAnyBits(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		typ := rapid.SampledFrom(ixQuantTypes).Draw(rt, "type")
		n := typ.BlockSize() * rapid.IntRange(1, 2).Draw(rt, "blocks")
		x := make([]float32, n)
		for i := range x {
			x[i] = math.Float32frombits(rapid.Uint32().Draw(rt, "bits"))
		}
		rs, _ := typ.RowSize(int64(n))
		q1, q2 := make([]byte, rs), make([]byte, rs)
		if err := QuantizeRowRef(typ, x, q1); err != nil {
			rt.Fatal(err)
		}
		if err := QuantizeRowRef(typ, x, q2); err != nil {
			rt.Fatal(err)
		}
		if !bytes.Equal(q1, q2) {
			rt.Fatal("two runs differ")
		}
	})
}
