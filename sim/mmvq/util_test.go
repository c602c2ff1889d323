package mmvq

import (
	"math"
	"testing"

	"github.com/ggsim/ggsim/f16"
	"github.com/ggsim/ggsim/sim"
	"pgregory.net/rapid"
)

func TestH2FTable(t *testing.T) {
	for i := 0; i < 1<<16; i++ {
		if a, b := h2fTab[i], sim.H2F(f16.Half(i)); math.Float32bits(a) != math.Float32bits(b) {
			t.Fatalf("h2f(%#04x) = %v, sim.H2F %v", i, a, b)
		}
	}
}

func checkFFMA(t interface{ Fatalf(string, ...any) }, a, b, c float32) {
	if x, y := ffma(a, b, c), sim.FMA(a, b, c); math.Float32bits(x) != math.Float32bits(y) {
		t.Fatalf("ffma(%v, %v, %v) = %v (%#08x), sim.FMA %v (%#08x)", a, b, c, x, math.Float32bits(x), y, math.Float32bits(y))
	}
}

// TestFFMAMatchesSim checks ffma against sim.FMA on random operands and on operands whose
// float64 sum lands on (or next to) a float32 rounding midpoint.
func TestFFMAMatchesSim(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		a := math.Float32frombits(rapid.Uint32().Draw(t, "a"))
		b := math.Float32frombits(rapid.Uint32().Draw(t, "b"))
		c := math.Float32frombits(rapid.Uint32().Draw(t, "c"))
		checkFFMA(t, a, b, c)
		// Same-magnitude operands (cancellation, zeros, subnormal results).
		checkFFMA(t, a, b, -float32(float64(a)*float64(b)))
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
			checkFFMA(t, a, b, c)
			checkFFMA(t, -a, b, -c)
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
			checkFFMA(t, a, b, c)
			checkFFMA(t, -a, b, -c)
		}
	}
	if hits == 0 {
		t.Fatal("no double-rounding case constructed")
	}
	if x := ffma(a, b, 1<<24+2); x != 1<<24+2 {
		t.Fatalf("ffma(1+2^-23, 1-2^-23, 2^24+2) = %v, want 2^24+2", x)
	}
	// Exhaustive-ish: a = 1 + i*2^-23, b = 1 + j*2^-23 for small i, j, c from a grid.
	for i := 0; i < 64; i++ {
		for j := 0; j < 64; j++ {
			a := math.Float32frombits(0x3f800000 + uint32(i))
			b := math.Float32frombits(0x3f800000 + uint32(j)*997)
			for k := -40; k <= 40; k++ {
				checkFFMA(t, a, b, float32(math.Ldexp(float64(k), -30)))
				checkFFMA(t, a, b, -1+float32(math.Ldexp(float64(k), -24)))
			}
		}
	}
}

func TestDp4aMatchesSim(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		a, b, c := rapid.Int32().Draw(t, "a"), rapid.Int32().Draw(t, "b"), rapid.Int32().Draw(t, "c")
		if x, y := dp4a(a, b, c), sim.Dp4a(a, b, c); x != y {
			t.Fatalf("dp4a(%#x, %#x, %d) = %d, sim.Dp4a %d", a, b, c, x, y)
		}
	})
	for _, v := range []int32{0, -1, 0x7f7f7f7f, -0x7f7f7f80, 0x01010101} {
		for _, w := range []int32{0, -1, 0x7f7f7f7f, -0x7f7f7f80, 0x01010101} {
			if x, y := dp4a(v, w, 0x7fffffff), sim.Dp4a(v, w, 0x7fffffff); x != y {
				t.Fatalf("dp4a(%#x, %#x) = %d, sim.Dp4a %d", v, w, x, y)
			}
		}
	}
}
