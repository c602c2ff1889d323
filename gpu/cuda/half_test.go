package cuda

import (
	"math"
	"testing"
)

// The arithmetic itself is package f16's, tested there against math/big on every pair of
// halves; TestHalfEdgeCases checks that the probe's reference is wired to it.

func TestHalfEdgeCases(t *testing.T) {
	for _, c := range []struct {
		name    string
		got     uint16
		want    uint16
		wantNaN bool
	}{
		{"min subnormal * 0.5 ties to even 0", halfMul(0x0001, 0x3800), 0x0000, false},
		{"3 min subnormal * 0.5 ties to even 2", halfMul(0x0003, 0x3800), 0x0002, false},
		{"-min subnormal * 0.5 -> -0", halfMul(0x8001, 0x3800), 0x8000, false},
		{"subnormal + subnormal carries into normal", halfAdd(0x03ff, 0x0001), 0x0400, false},
		{"x + -x = +0", halfAdd(0x3c00, 0xbc00), 0x0000, false},
		{"-0 + -0 = -0", halfAdd(0x8000, 0x8000), 0x8000, false},
		{"+0 + -0 = +0", halfAdd(0x0000, 0x8000), 0x0000, false},
		{"-0 * +1 = -0", halfMul(0x8000, 0x3c00), 0x8000, false},
		{"max * 2 = Inf", halfMul(0x7bff, 0x4000), 0x7c00, false},
		{"65504 + 8 = 65504", halfAdd(0x7bff, 0x4800), 0x7bff, false},
		{"65504 + 16 = 65520, a tie, to even: Inf", halfAdd(0x7bff, 0x4c00), 0x7c00, false},
		{"65504 + 32 = Inf", halfAdd(0x7bff, 0x5000), 0x7c00, false},
		{"0 * Inf = NaN", halfMul(0x0000, 0x7c00), 0, true},
		{"Inf - Inf = NaN", halfAdd(0x7c00, 0xfc00), 0, true},
		{"fma(-0, 1, -0) = -0", halfFMA(0x8000, 0x3c00, 0x8000), 0x8000, false},
		{"fma(1, 1, -1) = +0", halfFMA(0x3c00, 0x3c00, 0xbc00), 0x0000, false},
		{"fma(2^-14, 2^-10, 0) = 2^-24", halfFMA(0x0400, 0x1400, 0x0000), 0x0001, false},
	} {
		if c.wantNaN {
			if !halfIsNaN(c.got) {
				t.Errorf("%s: got %#04x, want NaN", c.name, c.got)
			}
		} else if c.got != c.want {
			t.Errorf("%s: got %#04x, want %#04x", c.name, c.got, c.want)
		}
	}
	if got := half2(halfFMA, 0x3c004000, 0x40003c00, 0x00000000); got != 0x40004000 {
		t.Errorf("half2 lanes: %#08x", got)
	}
}

func TestDp4aRef(t *testing.T) {
	if got := Dp4aRef(0x01020304, 0x01010101, 10); got != 20 {
		t.Errorf("Dp4aRef = %d", got)
	}
	if got := Dp4aRef(-0x7f7f7f80, -0x7f7f7f80, 0); got != 4*128*128 {
		t.Errorf("0x80808080^2 = %d", got)
	}
	if got := Dp4aRef(0x7f7f7f7f, 0x80808080-0x100000000, math.MaxInt32); got != math.MaxInt32-4*127*128 {
		t.Errorf("with c = MaxInt32: %d", got)
	}
	if got := Dp4aRef(0x7f, 0x7f, math.MaxInt32); got != math.MinInt32+127*127-1 {
		t.Errorf("wrap: %d", got)
	}
}

func TestHalf2SweepAndCompare(t *testing.T) {
	a, b, c := Half2Sweep(1000, 5)
	if len(a) < 20000 || len(a) != len(b) || len(b) != len(c) {
		t.Fatalf("sweep sizes %d %d %d", len(a), len(b), len(c))
	}
	for _, op := range HalfOps {
		got := make([]uint32, len(a))
		for i := range a {
			got[i] = half2(op.Op, a[i], b[i], c[i])
		}
		if r := CompareHalf2(op.Name, op.Op, a, b, c, got); r.Differ != 0 || r.N != 2*len(a) {
			t.Fatalf("%s: self-comparison %v", op.Name, r)
		}
		got[3] ^= 1 << 16
		if r := CompareHalf2(op.Name, op.Op, a, b, c, got); r.Differ != 1 || r.Examples[0][0] != uint16(a[3]>>16) {
			t.Fatalf("%s: one flipped bit gave %v", op.Name, r)
		}
	}
}
