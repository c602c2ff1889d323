package cuda

import (
	"math"
	"testing"

	"github.com/x448/float16"
	"pgregory.net/rapid"
)

func h2f(h uint16) float64 { return float64(float16.Frombits(h).Float32()) }

// Products of two halves have at most 22 significant bits, so float32(a*b) is exact and
// float16.Fromfloat32 (correctly rounded, checked exhaustively by x448) rounds it once:
// an independent reference for halfMul over every finite and special operand.
func TestHalfMulAgainstFloat32(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		a := rapid.Uint16().Draw(t, "a")
		b := rapid.Uint16().Draw(t, "b")
		want := float16.Fromfloat32(float32(h2f(a) * h2f(b))).Bits()
		if got := halfMul(a, b); !sameHalf(got, want) {
			t.Fatalf("halfMul(%#04x, %#04x) = %#04x, want %#04x", a, b, got, want)
		}
	})
}

// A sum of halves whose exponents differ by at most 13 fits in 24 bits: float32 is
// exact there, and Fromfloat32 rounds once.
func TestHalfAddAgainstFloat32(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		a := rapid.Uint16().Draw(t, "a")
		ea := int(a>>10) & 0x1f
		eb := rapid.IntRange(max(ea-13, 0), min(ea+13, 31)).Draw(t, "eb")
		b := uint16(eb)<<10 | rapid.Uint16Range(0, 0x3ff).Draw(t, "mb") | rapid.Uint16Range(0, 1).Draw(t, "sb")<<15
		want := float16.Fromfloat32(float32(h2f(a) + h2f(b))).Bits()
		if got := halfAdd(a, b); !sameHalf(got, want) {
			t.Fatalf("halfAdd(%#04x, %#04x) = %#04x, want %#04x", a, b, got, want)
		}
	})
}

// fma against float64 where float64 is exact: |a*b| and |c| within 2^29 of each other
// (22 + 29 < 53 bits), and the rounding to half then happens once via a float32 that is
// exact too when the sum has at most 24 significant bits; otherwise compare the value
// of the result with the float64 sum within half an ulp, strictly below ties.
func TestHalfFMAAgainstFloat64(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		a := rapid.Uint16().Draw(t, "a")
		b := rapid.Uint16().Draw(t, "b")
		c := rapid.Uint16().Draw(t, "c")
		got := halfFMA(a, b, c)
		x := float64(h2f(a)*h2f(b)) + h2f(c) // not always exact: checked by the bound below
		if math.IsNaN(x) {
			if !halfIsNaN(got) {
				t.Fatalf("fma(%#04x,%#04x,%#04x) = %#04x, want NaN", a, b, c, got)
			}
			return
		}
		if math.IsInf(x, 0) || math.Abs(x) >= 65520 {
			if !halfIsInf(got) || (got&0x8000 != 0) != (x < 0) {
				t.Fatalf("fma(%#04x,%#04x,%#04x) = %#04x, want %v Inf", a, b, c, got, x)
			}
			return
		}
		g := h2f(got)
		// ulp of the result's binade (2^-24 for subnormals).
		e := math.Max(math.Floor(math.Log2(math.Abs(g))), -14)
		if g == 0 {
			e = -14
		}
		ulp := math.Ldexp(1, int(e)-10)
		if d := math.Abs(g - x); d > ulp/2*(1+1e-9) {
			t.Fatalf("fma(%#04x,%#04x,%#04x) = %#04x (%g), exact ~ %g: off by %g ulp", a, b, c, got, g, x, d/ulp)
		}
	})
}

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
