package sim

import (
	"bufio"
	"bytes"
	"compress/flate"
	"encoding/binary"
	"math"
	"testing"
)

func TestStepTableRoundTrip(t *testing.T) {
	for _, dir := range []int32{+1, -1} {
		v := make([]uint32, 1000)
		v[0] = 0x3f800000
		for k := 1; k < len(v); k++ {
			v[k] = uint32(int64(v[k-1]) + int64(dir)*int64(k*7%4))
		}
		raw, err := EncodeStepTable(v, dir)
		if err != nil {
			t.Fatal(err)
		}
		tab := &stepTable{name: "test", raw: string(raw), n: len(v), dir: dir}
		if err := tab.load(); err != nil {
			t.Fatal(err)
		}
		for k, want := range v {
			if got := tab.at(uint32(k)); got != want {
				t.Fatalf("dir %d: value[%d] = %#08x, want %#08x", dir, k, got, want)
			}
		}
	}
	if _, err := EncodeStepTable([]uint32{10, 14}, +1); err == nil {
		t.Error("a step of 4 was encoded")
	}
	if _, err := EncodeStepTable([]uint32{10, 9}, +1); err == nil {
		t.Error("a decreasing step was encoded in an increasing table")
	}
	bad := &stepTable{name: "short", raw: "abc", n: 10, dir: 1}
	if bad.load() == nil {
		t.Error("a short table loaded")
	}
}

// The special inputs mufu_probe printed on the H200 (gpu/testdata/h200-mufu/probe-run2.log).
func TestEx2TanhSpecialsH200(t *testing.T) {
	for _, c := range []struct{ x, ex2, tanh uint32 }{
		{0x00000000, 0x3f800000, 0x00000000}, {0x80000000, 0x3f800000, 0x80000000},
		{0x00000001, 0x3f800000, 0x00000001}, {0x807fffff, 0x3f800000, 0x807fffff},
		{0x7f800000, 0x7f800000, 0x3f800000}, {0xff800000, 0x00000000, 0xbf800000},
		{0x7fc00000, 0x7fffffff, 0x7fffffff}, {0xffc00000, 0x7fffffff, 0x7fffffff},
		{0x7f800001, 0x7fffffff, 0x7fffffff}, {0x43000000, 0x7f800000, 0x3f800000},
		{0x42fffffe, 0x7f7fff4f, 0x3f800000}, {0x42ffffff, 0x7f7fffa8, 0x3f800000},
		{0xc2fc0000, 0x00800000, 0xbf800000}, {0xc2fe0000, 0x00000000, 0xbf800000},
		{0xc2fc0001, 0x00000000, 0xbf800000}, {0xc3000000, 0x00000000, 0xbf800000},
		{0xc3160000, 0x00000000, 0xbf800000}, {0x3f800000, 0x40000000, 0x3f42f848},
		{0xbf800000, 0x3f000000, 0xbf42f848}, {0x33800000, 0x3f800000, 0x33800000},
		{0xb3800000, 0x3f800000, 0xb3800000}, {0x2f800000, 0x3f800000, 0x2f800000},
	} {
		x := math.Float32frombits(c.x)
		if got := math.Float32bits(Ex2(x)); got != c.ex2 {
			t.Errorf("Ex2(%#08x) = %#08x, H200 %#08x", c.x, got, c.ex2)
		}
		if got := math.Float32bits(Tanh(x)); got != c.tanh {
			t.Errorf("Tanh(%#08x) = %#08x, H200 %#08x", c.x, got, c.tanh)
		}
	}
}

// Properties the H200 showed for all inputs: Tanh is odd and ±1 from 8 on; Ex2 of a
// non-negative x is within 1 ulp of 2^x; the tables' ends.
func TestEx2TanhShape(t *testing.T) {
	for b := uint32(0); b < 0x7f800000; b += 0x1001 {
		x := math.Float32frombits(b)
		if math.Float32bits(Tanh(-x)) != math.Float32bits(Tanh(x))^0x80000000 {
			t.Fatalf("Tanh not odd at %#08x", b)
		}
		if x >= 8 && Tanh(x) != 1 {
			t.Fatalf("Tanh(%g) = %g", x, Tanh(x))
		}
		if x < 127 {
			ref := math.Float32bits(float32(math.Exp2(float64(FTZ(x)))))
			if d := int64(math.Float32bits(Ex2(x))) - int64(ref); d < -1 || d > 1 {
				t.Fatalf("Ex2(%#08x) = %#08x, %d ulp from 2^x", b, math.Float32bits(Ex2(x)), d)
			}
		}
	}
	if err := ex2Pos.load(); err != nil {
		t.Fatal(err)
	}
	if err := ex2Neg.load(); err != nil {
		t.Fatal(err)
	}
	if ex2Pos.at(0) != 0x3f800000 || ex2Pos.at(1<<23-1) != 0x3fffffff || ex2Neg.at(0) != 0x3f800000 || ex2Neg.at(1<<22) != 0x3f3504f2 {
		t.Errorf("table ends %#08x %#08x %#08x %#08x", ex2Pos.at(0), ex2Pos.at(1<<23-1), ex2Neg.at(0), ex2Neg.at(1<<22))
	}
}

func TestExpfIsEx2OfProduct(t *testing.T) {
	for _, x := range []float32{0, 1, -1, 88.7, -87.3, 1e-30, float32(math.Inf(-1))} {
		if Expf(x) != Ex2(Mul(x, math.Float32frombits(Log2eBits))) {
			t.Errorf("Expf(%g)", x)
		}
	}
}

func BenchmarkEx2(b *testing.B) {
	x := float32(-3.7)
	var s float32
	for i := 0; i < b.N; i++ {
		s += Ex2(x)
		x += 1e-3
	}
	_ = s
}

func BenchmarkTanh(b *testing.B) {
	x := float32(0.01)
	var s float32
	for i := 0; i < b.N; i++ {
		s += Tanh(x)
		x += 1e-4
	}
	_ = s
}

// Values of rsqrt.approx.ftz.f32 on [1, 4) recorded on the H200 (rsq_14.i8 of
// gpu/measure/mufu_probe.cu, 2026-12-02), and the scaling by 4^k the device showed for
// all inputs.
func TestRsqrtH200(t *testing.T) {
	for _, c := range [][2]uint32{
		{0x3f800000, 0x3f800000}, {0x3f800001, 0x3f7ffffe}, {0x3f803039, 0x3f7fcfd4},
		{0x3fc00000, 0x3f5105eb}, {0x3fffffff, 0x3f3504f4}, {0x40000000, 0x3f3504f2},
		{0x400bde31, 0x3f2d2b57}, {0x407fffff, 0x3f000000},
	} {
		for k := int32(-60); k <= 60; k += 7 {
			x := math.Float32frombits(uint32(int32(c[0]) + 2*k<<23))
			want := uint32(int32(c[1]) - k<<23)
			if got := math.Float32bits(Rsqrt(x)); got != want {
				t.Errorf("Rsqrt(%#08x) = %#08x, H200 %#08x", math.Float32bits(x), got, want)
			}
		}
	}
	for _, c := range [][2]uint32{{0, 0x7f800000}, {0x80000000, 0xff800000}, {0x00000003, 0x7f800000}, {0x7f800000, 0}, {0xbf800000, 0x7fffffff}, {0x7fc00000, 0x7fffffff}} {
		if got := math.Float32bits(Rsqrt(math.Float32frombits(c[0]))); got != c[1] {
			t.Errorf("Rsqrt(%#08x) = %#08x, want %#08x", c[0], got, c[1])
		}
	}
}

// TestTanhTableLayout decodes mufu_tanh_sm90.bin the plain way (every output as a
// uint32) and requires Tanh's two-level table (a base per chunk, 16-bit offsets) to give
// the same output bits for every entry.
func TestTanhTableLayout(t *testing.T) {
	if err := loadTanh(); err != nil {
		t.Fatal(err)
	}
	raw := []byte(tanhRaw)
	n := len(tanhTab.shift)
	body := bufio.NewReader(flate.NewReader(bytes.NewReader(raw[5+n:])))
	var v int64
	count := 0
	for e := 0; e < n; e++ {
		s := tanhTab.shift[e]
		for m := uint32(0); m < 1<<(23-s); m++ {
			d, err := binary.ReadVarint(body)
			if err != nil {
				t.Fatalf("value %d: %v", count, err)
			}
			v += d
			x := math.Float32frombits(uint32(tanhExpLo+e)<<23 | m<<s)
			if got := math.Float32bits(Tanh(x)); got != uint32(v) {
				t.Fatalf("tanh(%g [%#08x]): %#08x, the file says %#08x", x, math.Float32bits(x), got, uint32(v))
			}
			count++
		}
	}
	if count != len(tanhTab.lo) {
		t.Fatalf("%d entries checked, the table has %d", count, len(tanhTab.lo))
	}
}
