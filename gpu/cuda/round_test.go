package cuda

import (
	"flag"
	"math"
	"testing"
)

var long = flag.Bool("long", false, "run long sweeps (every float32 for RoundHalfAway)")

func roundRefMath(u uint32) uint32 {
	x := math.Float32frombits(u)
	if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
		return u
	}
	// math.Round rounds half away from zero and keeps the sign of zero; float64 holds
	// every float32 exactly, and the integral result converts back exactly.
	return math.Float32bits(float32(math.Round(float64(x))))
}

func TestRoundHalfAway(t *testing.T) {
	check := func(u uint32) {
		if got, want := RoundHalfAway(u), roundRefMath(u); got != want {
			t.Fatalf("RoundHalfAway(%#08x = %g) = %#08x, want %#08x", u, math.Float32frombits(u), got, want)
		}
	}
	if *long {
		for u := uint64(0); u < 1<<32; u++ {
			check(uint32(u))
		}
		return
	}
	// Every float32 with |x| in [0.25, 2^24) at a stride, both signs, plus the sweep.
	for u := uint32(0x3e800000); u < 0x4b800000; u += 97 {
		check(u)
		check(u | 0x80000000)
	}
	for _, x := range RoundSweep(1<<16, 1) {
		check(math.Float32bits(x))
	}
}

func TestInt8Conversions(t *testing.T) {
	for _, c := range []struct {
		r                    float32
		sat8, wrap16, wrap32 int8
	}{
		{0, 0, 0, 0}, {127, 127, 127, 127}, {128, 127, -128, -128}, {-128, -128, -128, -128},
		{-129, -128, 127, 127}, {200, 127, -56, -56}, {40000, 127, -1, 64}, {-40000, -128, 0, -64},
		{float32(math.Inf(1)), 127, -1, -1}, {float32(math.Inf(-1)), -128, 0, 0}, {float32(math.NaN()), 0, 0, 0},
		{1e10, 127, -1, -1},
	} {
		if g := Sat8.ToInt8(c.r); g != c.sat8 {
			t.Errorf("sat8(%g) = %d, want %d", c.r, g, c.sat8)
		}
		if g := Wrap16.ToInt8(c.r); g != c.wrap16 {
			t.Errorf("wrap16(%g) = %d, want %d", c.r, g, c.wrap16)
		}
		if g := Wrap32.ToInt8(c.r); g != c.wrap32 {
			t.Errorf("wrap32(%g) = %d, want %d", c.r, g, c.wrap32)
		}
	}
}

func TestRoundSweepContents(t *testing.T) {
	s := RoundSweep(10, 7)
	has := map[float32]bool{}
	nan := 0
	for _, x := range s {
		if x != x {
			nan++
		}
		has[x] = true
	}
	for _, v := range []float32{127.5, -127.5, 128, -128, float32(math.Inf(1)), float32(math.Inf(-1)), 0.5, -0.5, math.Nextafter32(0.5, 0)} {
		if !has[v] {
			t.Errorf("sweep lacks %g", v)
		}
	}
	if nan < 4 {
		t.Errorf("sweep has %d NaNs", nan)
	}
	if len(RoundSweep(10, 7)) != len(s) || RoundSweep(10, 7)[len(s)-1] != s[len(s)-1] {
		t.Error("sweep is not deterministic")
	}
}
