package sim

import (
	"math"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"
	"time"

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

// midpointTriple builds a*b + c whose main part lands on a float32 rounding midpoint of
// c's binade 2^ec, moved off it by the products' low terms: c has exponent ec (random
// significand, sign sc), a = odd·(1+σ1·2^-j)·2^x and b = (1+σ2·2^-k)·2^y with
// odd·2^(x+y) = odd·h, h = half an ulp of c. So a*b = odd·h·(1+σ1·2^-j)(1+σ2·2^-k): σ = 0
// gives exact ties, σ1 = -σ2, j = k the smallest offset below one (odd·h·2^-2j), and
// large j, k offsets that float64 rounds away (s on the midpoint, p+c inexact). ok is
// false when a factor is not a float32.
func midpointTriple(cm uint32, ec int, sc bool, odd int, s1, j, s2, k, split int) (a, b, c float32, ok bool) {
	c = math.Float32frombits(uint32(ec+127)<<23 | cm&0x7fffff)
	if sc {
		c = -c
	}
	h := ec - 24 // log2 of half an ulp of c
	af := math.Ldexp(float64(odd)*(1+float64(s1)*math.Ldexp(1, -j)), split)
	bf := math.Ldexp(1+float64(s2)*math.Ldexp(1, -k), h-split)
	a, b = float32(af), float32(bf)
	if float64(a) != af || float64(b) != bf || math.Abs(af) < 0x1p-126 || math.Abs(bf) < 0x1p-126 {
		return 0, 0, 0, false
	}
	return a, b, c, true
}

// TestFMAMidpoints checks FMA against its exact path and math/big where the float64 sum
// lies on a float32 rounding midpoint, as an exact tie or not, and next to one, over
// result exponents from the FTZ edge to overflow, both signs of each term. It counts both
// kinds of midpoint, so that it fails if the construction stops reaching them.
func TestFMAMidpoints(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	exps := []int{-126, -125, -124, -123, -120, -100, -60, -30, -1, 0, 1, 23, 24, 60, 100, 125, 126, 127}
	odds := []int{1, 3, 5, 7, 11, 63, 255, 1023, 4095, 65535}
	js := []int{1, 2, 8, 12, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24}
	if *long {
		exps = exps[:0]
		for e := -126; e <= 127; e++ {
			exps = append(exps, e)
		}
	}
	var ties, inexact, near, n int
	for _, ec := range exps {
		for _, odd := range odds {
			for _, j := range js {
				for _, k := range js {
					for s := 0; s < 9; s++ {
						s1, s2 := s%3-1, s/3-1
						cm := r.Uint32()
						if r.IntN(4) == 0 {
							cm = []uint32{0, 0x7fffff, 0x7ffffe, 1}[r.IntN(4)] // binade edges
						}
						sc, sa := r.IntN(2) == 0, r.IntN(2) == 0
						a, b, c, ok := midpointTriple(cm, ec, sc, odd, s1, j, s2, k, r.IntN(40)-20)
						if !ok {
							continue
						}
						if sa {
							a = -a
						}
						for _, cc := range []float32{c, math.Nextafter32(c, 0), math.Nextafter32(c, float32(math.Inf(1)))} {
							p := float64(float64(a) * float64(b))
							sum := float64(p + float64(cc))
							if math.Float64bits(sum)&0x1fffffff == 0x10000000 && math.Abs(sum) >= 0x1p-125 {
								bb := float64(sum - p)
								if float64(p-float64(sum-bb))+float64(float64(cc)-bb) == 0 {
									ties++
								} else {
									inexact++
								}
							} else {
								near++
							}
							checkFMAFast(t, a, b, cc)
							if got, want := FMA(a, b, cc), refFast('f', a, b, cc); !same(got, want) {
								t.Fatalf("FMA(%#08x, %#08x, %#08x) = %#08x, math/big %#08x", math.Float32bits(a), math.Float32bits(b),
									math.Float32bits(cc), math.Float32bits(got), math.Float32bits(want))
							}
							n++
						}
					}
				}
			}
		}
	}
	t.Logf("%d cases: %d exact ties, %d inexact float64 midpoints, %d off a midpoint", n, ties, inexact, near)
	if ties < 1000 || inexact < 1000 {
		t.Fatalf("too few midpoints constructed (%d ties, %d inexact)", ties, inexact)
	}
}

// TestFMARandomLong checks FMA against its exact path and math/big on random and
// adversarial triples (genTriple, and midpointTriple with random parameters): 200,000 by
// default, 5,000,000 with -long. The seed is printed; set GGSIM_FMA_SEED to replay one.
func TestFMARandomLong(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("GGSIM_FMA_SEED"); s != "" {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("GGSIM_FMA_SEED=%q: %v", s, err)
		}
		seed = v
	}
	t.Logf("seed %d (GGSIM_FMA_SEED=%d replays it)", seed, seed)
	r := rand.New(rand.NewPCG(seed, 23))
	edges := edgeF32()
	n := 200000
	if *long {
		n = 5000000
	}
	check := func(a, b, c float32) {
		checkFMAFast(t, a, b, c)
		if got, want := FMA(a, b, c), refFast('f', a, b, c); !same(got, want) {
			t.Fatalf("seed %d: FMA(%#08x, %#08x, %#08x) = %#08x, math/big %#08x", seed, math.Float32bits(a), math.Float32bits(b),
				math.Float32bits(c), math.Float32bits(got), math.Float32bits(want))
		}
	}
	for i := 0; i < n; i++ {
		if i%2 == 0 {
			check(genTriple(r, edges))
			continue
		}
		a, b, c, ok := midpointTriple(r.Uint32(), r.IntN(254)-126, r.IntN(2) == 0, 2*r.IntN(1<<r.IntN(18))+1,
			r.IntN(3)-1, 1+r.IntN(24), r.IntN(3)-1, 1+r.IntN(24), r.IntN(60)-30)
		if !ok {
			continue
		}
		if r.IntN(2) == 0 {
			a = -a
		}
		check(a, b, c)
		check(a, b, math.Nextafter32(c, 0))
	}
}
