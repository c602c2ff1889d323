package sim

import (
	"math"
	"testing"

	"pgregory.net/rapid"
)

func checkFMAFast(t interface{ Fatalf(string, ...any) }, a, b, c float32) {
	if x, y := FMA(a, b, c), fmaSlow(FTZ(a), FTZ(b), FTZ(c)); math.Float32bits(x) != math.Float32bits(y) {
		t.Fatalf("FMA(%v, %v, %v) = %v (%#08x), exact path %v (%#08x)", a, b, c, x, math.Float32bits(x), y, math.Float32bits(y))
	}
}

// TestFMAFastPath checks FMA's float64 fast path against its exact path on random operands and on operands whose
// float64 sum lands on (or next to) a float32 rounding midpoint.
func TestFMAFastPath(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		a := math.Float32frombits(rapid.Uint32().Draw(t, "a"))
		b := math.Float32frombits(rapid.Uint32().Draw(t, "b"))
		c := math.Float32frombits(rapid.Uint32().Draw(t, "c"))
		checkFMAFast(t, a, b, c)
		// Same-magnitude operands (cancellation, zeros, subnormal results).
		checkFMAFast(t, a, b, -float32(float64(a)*float64(b)))
	})
	rapid.Check(t, func(t *rapid.T) {
		// a*b has up to 48 significant bits; pick c so that a*b + c is a float32 midpoint
		// m plus a tiny residue r: p + c = m + r with r = 0 or ±(2^-k of the product's ulp).
		a := rapid.Float32Range(1, 2).Draw(t, "a")
		b := rapid.Float32Range(1, 2).Draw(t, "b")
		p := float64(a) * float64(b)
		m32 := float32(p)
		ulp := float64(math.Nextafter32(m32, 10) - m32)
		m := float64(m32) + ulp/2 // a midpoint
		for _, shift := range []int{-60, -50, -40, -30, -26, -25, -24, -20} {
			c := float32(m - p + math.Ldexp(float64(rapid.IntRange(-1, 1).Draw(t, "r")), shift))
			checkFMAFast(t, a, b, c)
			checkFMAFast(t, -a, b, -c)
		}
	})
	// Double rounding: (1+2^-23)(1-2^-23) = 1-2^-46, plus 2^k+2j·2^(k-23): the float64 sum
	// rounds up onto the float32 midpoint 2^k+(2j+1)·2^(k-23), the exact value is below it.
	a, b := math.Float32frombits(0x3f800001), math.Float32frombits(0x3f7ffffe)
	hits := 0
	for k := 24; k <= 40; k++ {
		for j := 0; j < 8; j++ {
			c := float32(math.Ldexp(1, k) + float64(2*j)*math.Ldexp(1, k-23))
			s := float64(float64(a)*float64(b)) + float64(c)
			if math.Float64bits(s)&0x1fffffff == 0x10000000 {
				hits++
			}
			checkFMAFast(t, a, b, c)
			checkFMAFast(t, -a, b, -c)
		}
	}
	if hits == 0 {
		t.Fatal("no double-rounding case constructed")
	}
	if x := FMA(a, b, 1<<24+2); x != 1<<24+2 {
		t.Fatalf("FMA(1+2^-23, 1-2^-23, 2^24+2) = %v, want 2^24+2", x)
	}
	// Exhaustive-ish: a = 1 + i*2^-23, b = 1 + j*2^-23 for small i, j, c from a grid.
	for i := 0; i < 64; i++ {
		for j := 0; j < 64; j++ {
			a := math.Float32frombits(0x3f800000 + uint32(i))
			b := math.Float32frombits(0x3f800000 + uint32(j)*997)
			for k := -40; k <= 40; k++ {
				checkFMAFast(t, a, b, float32(math.Ldexp(float64(k), -30)))
				checkFMAFast(t, a, b, -1+float32(math.Ldexp(float64(k), -24)))
			}
		}
	}
}
