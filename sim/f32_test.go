package sim

import (
	"flag"
	"math"
	"math/big"
	"math/rand/v2"
	"testing"

	"github.com/ggsim/ggsim/f16"
	"github.com/ggsim/ggsim/internal/bigref"
	"pgregory.net/rapid"
)

var long = flag.Bool("long", false, "run long exhaustive sweeps")

// ---- references -------------------------------------------------------------------

func bf(x float32) *big.Float { return bigref.Float(float64(x)) }

// round32 rounds an exact value to float32: to nearest even, gradual underflow, overflow
// to ±Inf (math/big's Float32).
func round32(z *big.Float) float32 { f, _ := z.Float32(); return f }

// refFTZ is FTZ written from the definition: nonzero |x| < 2^-126 becomes ±0.
func refFTZ(x float32) float32 {
	if x != 0 && math.Abs(float64(x)) < 0x1p-126 {
		return float32(math.Copysign(0, float64(x)))
	}
	return x
}

func finite(xs ...float32) bool {
	for _, x := range xs {
		if math.IsInf(float64(x), 0) || x != x {
			return false
		}
	}
	return true
}

// refOp32 returns the exact-then-rounded result of op ('+', '-', '*', 'f') without FTZ,
// NaN canonical. Non-finite operands go through float64 (exact for such results).
func refOp32(op byte, a, b, c float32) float32 {
	if !finite(a, b, c) {
		r := bigref.NonFinite(op, float64(a), float64(b), float64(c))
		if r != r {
			return canonNaN
		}
		if !math.IsInf(r, 0) {
			panic("refOp32: finite result with a non-finite operand")
		}
		return float32(r)
	}
	return round32(bigref.Exact(op, float64(a), float64(b), float64(c)))
}

// refFast is the fast-math version: operands flushed; the exact result rounded to a
// 24-bit significand with unbounded exponent (math/big) and flushed to a signed zero if
// that is below 2^-126 (the GPU's tininess-after-rounding flush, measured by
// testdata/h200-probes), else rounded as IEEE (which then gives the same value, or ±Inf).
func refFast(op byte, a, b, c float32) float32 {
	a, b, c = refFTZ(a), refFTZ(b), refFTZ(c)
	if !finite(a, b, c) {
		return refOp32(op, a, b, c)
	}
	z := bigref.Exact(op, float64(a), float64(b), float64(c))
	r24 := new(big.Float).SetPrec(24).SetMode(big.ToNearestEven).Set(z) // unbounded exponent
	if r24.Sign() != 0 && new(big.Float).Abs(r24).Cmp(big.NewFloat(0x1p-126)) < 0 {
		if z.Signbit() {
			return float32(math.Copysign(0, -1))
		}
		return 0
	}
	return round32(z)
}

func same(a, b float32) bool { return math.Float32bits(a) == math.Float32bits(b) }

// ---- generators -------------------------------------------------------------------

func edgeF32() []float32 {
	var xs []float32
	for _, u := range []uint32{
		0, 1, 2, 3, 0x00400000, 0x007ffffe, 0x007fffff, // zero, subnormals
		0x00800000, 0x00800001, 0x00ffffff, 0x01000000, 0x0c800000, // smallest normals
		0x3f7fffff, 0x3f800000, 0x3f800001, 0x3f800002, 0x3fbfffff, 0x3fc00000, 0x40000000, 0x40400000,
		0x33800000, 0x34000000, 0x33ffffff, // 2^-24, 2^-23 (ulp of 1)
		0x5f800000, 0x1f800000, 0x20000000, 0x5f7fffff, // 2^64, 2^-64, 2^-63 (products reach the edges)
		0x7f000000, 0x7f7ffffe, 0x7f7fffff, // large, max finite
		0x42fe0000, 0x3c010204, // 127, 1/127
		0x7f800000, 0x7fc00000, 0x7f800001, 0x7fffffff, // Inf, NaNs
	} {
		xs = append(xs, math.Float32frombits(u), math.Float32frombits(u|0x80000000))
	}
	return xs
}

// genF32 draws a float32: uniform bits, an exponent near a chosen value, or an edge.
func genF32(r *rand.Rand, edges []float32) float32 {
	switch r.IntN(4) {
	case 0:
		return math.Float32frombits(r.Uint32())
	case 1:
		return edges[r.IntN(len(edges))]
	default:
		e := uint32(127 - 30 + r.IntN(60))
		return math.Float32frombits(r.Uint32()&0x807fffff | e<<23)
	}
}

// genTriple draws fma operands, often arranged so that the result lands near overflow,
// near or below 2^-126, or cancels heavily.
func genTriple(r *rand.Rand, edges []float32) (a, b, c float32) {
	a, b, c = genF32(r, edges), genF32(r, edges), genF32(r, edges)
	withExp := func(x float32, e int) float32 {
		if e < 1 || e > 254 {
			return x
		}
		return math.Float32frombits(math.Float32bits(x)&0x807fffff | uint32(e)<<23)
	}
	switch r.IntN(6) {
	case 0: // product near overflow
		ea := 1 + r.IntN(254)
		a = withExp(a, ea)
		b = withExp(b, 127+127+r.IntN(3)-ea+127)
		c = withExp(c, 250+r.IntN(5))
	case 1: // product near or below the normal range
		ea := 1 + r.IntN(254)
		a = withExp(a, ea)
		b = withExp(b, -126+127-r.IntN(30)+127-ea+3)
		c = withExp(c, 1+r.IntN(8))
		if r.IntN(3) == 0 {
			c = math.Float32frombits(r.Uint32() & 0x807fffff) // subnormal c
		}
	case 2: // cancellation: c close to -a*b
		p := float64(a) * float64(b)
		c = -float32(p)
		if r.IntN(2) == 0 {
			c = math.Float32frombits(math.Float32bits(c) + uint32(r.IntN(5)) - 2)
		}
	}
	return
}

// ---- tests ------------------------------------------------------------------------

func TestFTZ(t *testing.T) {
	for u := uint64(0); u < 1<<32; u += 4093 {
		x := math.Float32frombits(uint32(u))
		if got, want := FTZ(x), refFTZ(x); !same(got, want) && !(x != x && math.Float32bits(got) == uint32(u)) {
			t.Fatalf("FTZ(%#08x) = %#08x, want %#08x", u, math.Float32bits(got), math.Float32bits(want))
		}
	}
	for _, u := range []uint32{0x00000001, 0x807fffff, 0x00800000, 0x80000000, 0x7fc00001} {
		x := math.Float32frombits(u)
		if got, want := FTZ(x), refFTZ(x); math.Float32bits(got) != math.Float32bits(want) && x == x {
			t.Errorf("FTZ(%#08x) = %#08x, want %#08x", u, math.Float32bits(got), math.Float32bits(want))
		}
	}
	if math.Float32bits(FTZ(math.Float32frombits(0x807fffff))) != 0x80000000 {
		t.Error("FTZ does not keep the sign of a negative subnormal")
	}
}

// TestFastArith: Add, Sub, Mul, FMA (fast-math, FTZ) against math/big with FTZ applied
// by the reference, on edge pairs and random operands.
func TestFastArith(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	edges := edgeF32()
	check := func(op byte, a, b, c float32) {
		var got float32
		switch op {
		case '+':
			got = Add(a, b)
		case '-':
			got = Sub(a, b)
		case '*':
			got = Mul(a, b)
		case 'f':
			got = FMA(a, b, c)
		}
		if want := refFast(op, a, b, c); !same(got, want) {
			t.Fatalf("%c(%#08x, %#08x, %#08x) = %#08x, want %#08x", op,
				math.Float32bits(a), math.Float32bits(b), math.Float32bits(c), math.Float32bits(got), math.Float32bits(want))
		}
	}
	for _, a := range edges {
		for _, b := range edges {
			for _, op := range []byte{'+', '-', '*'} {
				check(op, a, b, 0)
			}
			for _, c := range edges[:24] {
				check('f', a, b, c)
			}
		}
	}
	// results next to 2^-126, where the flush model matters: products (1-2^-24)*2^-126
	// style, and fmas a*b + c with c ~ 2^-126 - a*b (c stepped by ulps).
	check('*', math.Float32frombits(0x3f7fffff), math.Float32frombits(0x00800000), 0)
	check('*', math.Float32frombits(0x3f7ffffe), math.Float32frombits(0x00800001), 0)
	for k := uint32(0); k < 256; k++ {
		b := math.Float32frombits(0x00800000 | k)
		inv := math.Float32bits(float32(1 / (1 + float64(k)*0x1p-23)))
		for d := uint32(0); d < 64; d++ {
			check('*', math.Float32frombits(min(inv-32+d, 0x3f7fffff)), b, 0)
		}
	}
	for i := 0; i < 20000; i++ {
		a := math.Float32frombits(0x3f800000 | r.Uint32()&0x7fffff)
		b := math.Float32frombits(0x01000000 | r.Uint32()&0x7fffff)
		c0 := float32(0x1p-126 - float64(a)*float64(b))
		c := math.Float32frombits(math.Float32bits(c0) + uint32(r.IntN(33)) - 16)
		check('f', a, b, c)
		check('f', -a, b, -c)
	}
	n := 100000
	if *long {
		n = 5000000
	}
	for i := 0; i < n; i++ {
		a, b, c := genTriple(r, edges)
		check('+', a, c, 0)
		check('-', c, a, 0)
		check('*', a, b, 0)
		check('f', a, b, c)
	}
}

// TestFMA32 checks the exact fma (no FTZ) against math/big on edge triples and about a
// million random triples (20 million with -long), many of them arranged to land near
// overflow, in or below the subnormal range, or to cancel.
func TestFMA32(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	edges := edgeF32()
	check := func(a, b, c float32) {
		if got, want := FMA32(a, b, c), refOp32('f', a, b, c); !same(got, want) {
			t.Fatalf("FMA32(%#08x, %#08x, %#08x) = %#08x, want %#08x (%g*%g+%g)",
				math.Float32bits(a), math.Float32bits(b), math.Float32bits(c), math.Float32bits(got), math.Float32bits(want), a, b, c)
		}
	}
	for _, a := range edges {
		for _, b := range edges {
			for _, c := range edges {
				check(a, b, c)
			}
		}
	}
	n := 1000000
	if *long {
		n = 20000000
	}
	for i := 0; i < n; i++ {
		check(genTriple(r, edges))
	}
}

// TestFMA32NearTies builds fmas whose exact result is within 2^-40 ulp of a float32
// rounding midpoint, where a float64 intermediate rounds to the midpoint (so a naive
// float32(math.FMA(...)) rounds the wrong way on some of them), in the normal range, in
// the subnormal range and next to overflow.
func TestFMA32NearTies(t *testing.T) {
	r := rand.New(rand.NewPCG(15, 16))
	naiveWrong, n := 0, 0
	for i := 0; i < 200000; i++ {
		// c = h; a*b = ulp(h)/2 * (1 ± 2^-k) with k in [30, 46] (a*b has 48 bits).
		var hb uint32
		switch i % 3 {
		case 0:
			hb = r.Uint32()&0x807fffff | uint32(10+r.IntN(235))<<23
		case 1:
			hb = r.Uint32() & 0x807fffff // subnormal h: ulp 2^-149
		default:
			hb = r.Uint32()&0x807fffff | 0x7f000000 // top binade
		}
		h := math.Float32frombits(hb)
		ue := int(hb>>23&0xff) - 150 // ulp(h) = 2^ue
		if hb>>23&0xff == 0 {
			ue = -149
		}
		// a0*b0 = (1+2^-j)(1-2^-j) = 1 - 2^-2j, or (1+2^-j)^2 = 1 + 2^(1-j) + 2^-2j,
		// scaled by 2^(ue-1) (half an ulp of h), the scale split between a and b.
		j := 12 + r.IntN(12)
		a0 := float32(1 + math.Ldexp(1, -j))
		b0 := float32(1 - math.Ldexp(1, -j))
		if r.IntN(2) == 0 {
			b0 = a0
		}
		s1 := (ue - 1) / 2
		s2 := ue - 1 - s1
		a := float32(math.Ldexp(float64(a0), s1))
		b := float32(math.Ldexp(float64(b0), s2))
		if float64(a) != math.Ldexp(float64(a0), s1) || float64(b) != math.Ldexp(float64(b0), s2) {
			continue // a scaled factor is not exact in float32
		}
		if r.IntN(2) == 0 {
			a = -a
		}
		want := refOp32('f', a, b, h)
		if got := FMA32(a, b, h); !same(got, want) {
			t.Fatalf("FMA32(%g, %g, %g) = %#08x, want %#08x", a, b, h, math.Float32bits(got), math.Float32bits(want))
		}
		if naive := float32(math.FMA(float64(a), float64(b), float64(h))); !same(naive, want) {
			naiveWrong++
		}
		n++
	}
	t.Logf("%d near-tie cases, naive float32(math.FMA) wrong on %d", n, naiveWrong)
	if naiveWrong == 0 {
		t.Fatal("no case distinguishes one rounding from two: the generator is broken")
	}
}

// TestArithRapid: property test of FMA32, FMA, Mul and Add against math/big on operands
// drawn by rapid (bit patterns, so every class of value appears).
func TestArithRapid(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		a := math.Float32frombits(rapid.Uint32().Draw(t, "a"))
		b := math.Float32frombits(rapid.Uint32().Draw(t, "b"))
		c := math.Float32frombits(rapid.Uint32().Draw(t, "c"))
		if got, want := FMA32(a, b, c), refOp32('f', a, b, c); !same(got, want) {
			t.Fatalf("FMA32 = %#08x, want %#08x", math.Float32bits(got), math.Float32bits(want))
		}
		if got, want := FMA(a, b, c), refFast('f', a, b, c); !same(got, want) {
			t.Fatalf("FMA = %#08x, want %#08x", math.Float32bits(got), math.Float32bits(want))
		}
		if got, want := Mul(a, b), refFast('*', a, b, 0); !same(got, want) {
			t.Fatalf("Mul = %#08x, want %#08x", math.Float32bits(got), math.Float32bits(want))
		}
		if got, want := Add(a, c), refFast('+', a, c, 0); !same(got, want) {
			t.Fatalf("Add = %#08x, want %#08x", math.Float32bits(got), math.Float32bits(want))
		}
	})
}

func TestFMaxfMinf(t *testing.T) {
	nan, pinf := canonNaN, float32(math.Inf(1))
	pz, nz := float32(0), float32(math.Copysign(0, -1))
	sub := math.Float32frombits(5)
	cases := []struct{ a, b, max, min float32 }{
		{1, 2, 2, 1}, {-1, -2, -1, -2}, {nan, 3, 3, 3}, {3, nan, 3, 3}, {nan, nan, nan, nan},
		{pz, nz, pz, nz}, {nz, pz, pz, nz}, {sub, nz, pz, nz}, {-sub, pz, pz, nz},
		{sub, 0, 0, 0}, {pinf, 1, pinf, 1}, {-pinf, nan, -pinf, -pinf},
		{math.Float32frombits(0x7f800001), 5, 5, 5},
	}
	for _, c := range cases {
		if got := FMaxf(c.a, c.b); !same(got, c.max) {
			t.Errorf("FMaxf(%#08x, %#08x) = %#08x, want %#08x", math.Float32bits(c.a), math.Float32bits(c.b), math.Float32bits(got), math.Float32bits(c.max))
		}
		if got := FMinf(c.a, c.b); !same(got, c.min) {
			t.Errorf("FMinf(%#08x, %#08x) = %#08x, want %#08x", math.Float32bits(c.a), math.Float32bits(c.b), math.Float32bits(got), math.Float32bits(c.min))
		}
	}
	r := rand.New(rand.NewPCG(17, 18))
	edges := edgeF32()
	for i := 0; i < 200000; i++ {
		a, b := genF32(r, edges), genF32(r, edges)
		fa, fb := refFTZ(a), refFTZ(b)
		got := FMaxf(a, b)
		switch {
		case fa != fa && fb != fb:
			if math.Float32bits(got) != CanonicalNaN32 {
				t.Fatalf("FMaxf(NaN, NaN) = %#08x", math.Float32bits(got))
			}
		case fa != fa:
			if !same(got, fb) {
				t.Fatalf("FMaxf(NaN, %g) = %g", fb, got)
			}
		case fb != fb:
			if !same(got, fa) {
				t.Fatalf("FMaxf(%g, NaN) = %g", fa, got)
			}
		default:
			if got < fa || got < fb || (!same(got, fa) && !same(got, fb)) {
				t.Fatalf("FMaxf(%g, %g) = %g", a, b, got)
			}
		}
	}
}

func TestAbsNeg(t *testing.T) {
	for u := uint64(0); u < 1<<32; u += 65537 {
		x := math.Float32frombits(uint32(u))
		f := refFTZ(x)
		if x != x {
			if math.Float32bits(Abs(x)) != CanonicalNaN32 || math.Float32bits(Neg(x)) != CanonicalNaN32 {
				t.Fatalf("Abs/Neg(%#08x) = %#08x/%#08x", u, math.Float32bits(Abs(x)), math.Float32bits(Neg(x)))
			}
			continue
		}
		if want := float32(math.Abs(float64(f))); !same(Abs(x), want) {
			t.Fatalf("Abs(%#08x) = %#08x, want %#08x", u, math.Float32bits(Abs(x)), math.Float32bits(want))
		}
		if want := -f; !same(Neg(x), want) {
			t.Fatalf("Neg(%#08x) = %#08x, want %#08x", u, math.Float32bits(Neg(x)), math.Float32bits(want))
		}
	}
}

// refRoundF is round-half-away-from-zero with math/big: the integer nearest to |x|, ties
// away, with x's sign.
func refRoundF(x float32) float32 {
	x = refFTZ(x)
	if x != x {
		return canonNaN
	}
	if math.IsInf(float64(x), 0) {
		return x
	}
	n := bigref.RoundInt(new(big.Float).Abs(bf(x)), true)
	v, _ := new(big.Float).SetInt(n).Float32()
	if math.Signbit(float64(x)) {
		v = float32(math.Copysign(float64(v), -1))
	}
	return v
}

// refRoundBits is round-half-away-from-zero on the bits: for 2^-1 <= |x| < 2^23 the
// significand m (with the implicit bit) is shifted right by 150-exp and incremented when
// the dropped bits are at least half; smaller |x| gives ±0 (or ±1 from 0.5 up), larger
// |x| is already an integer.
func refRoundBits(u uint32) uint32 {
	sign := u & 0x80000000
	exp := int(u >> 23 & 0xff)
	switch {
	case exp == 0xff:
		if u&0x7fffff != 0 {
			return CanonicalNaN32
		}
		return u
	case exp >= 150:
		return u
	case exp < 126: // |x| < 0.5 (subnormals included)
		return sign
	}
	m := uint64(u&0x7fffff | 1<<23)
	shift := uint(150 - exp)
	n := m >> shift
	if m&(1<<shift-1) >= 1<<(shift-1) {
		n++
	}
	return sign | math.Float32bits(float32(n))
}

// TestRoundF against math/big on every 7919th float32 bit pattern, every value near a
// half-integer in [-300, 300], and spot values; the bit-level reference is checked
// against math/big on the same inputs. With -long: all 2^32 inputs against the bit-level
// reference.
func TestRoundF(t *testing.T) {
	check := func(x float32) {
		got, want := RoundF(x), refRoundF(x)
		if !same(got, want) {
			t.Fatalf("RoundF(%#08x = %g) = %g, want %g", math.Float32bits(x), x, got, want)
		}
		if rb := refRoundBits(math.Float32bits(x)); rb != math.Float32bits(want) {
			t.Fatalf("refRoundBits(%#08x) = %#08x, math/big %#08x", math.Float32bits(x), rb, math.Float32bits(want))
		}
	}
	for u := uint64(0); u < 1<<32; u += 7919 {
		check(math.Float32frombits(uint32(u)))
	}
	for k := -300; k <= 300; k++ {
		h := float32(k) + 0.5
		for d := -3; d <= 3; d++ {
			check(math.Float32frombits(math.Float32bits(h) + uint32(d)))
		}
	}
	for _, x := range []float32{0.49999997, 0.5, -0.5, 1.5, 2.5, -2.5, 8388607.5, 8388608, 16777215} {
		check(x)
	}
	if RoundF(2.5) != 3 || RoundF(-2.5) != -3 || RoundF(0.49999997) != 0 {
		t.Error("RoundF is not half away from zero")
	}
	if *long {
		for u := uint64(0); u < 1<<32; u++ {
			if got := math.Float32bits(RoundF(math.Float32frombits(uint32(u)))); got != refRoundBits(uint32(u)) {
				t.Fatalf("RoundF(%#08x) = %#08x, want %#08x", u, got, refRoundBits(uint32(u)))
			}
		}
	}
}

func TestI2F(t *testing.T) {
	r := rand.New(rand.NewPCG(19, 20))
	check := func(n int32) {
		want, _ := new(big.Float).SetInt64(int64(n)).Float32() // math/big rounds to nearest even
		if got := I2F(n); !same(got, want) {
			t.Fatalf("I2F(%d) = %g, want %g", n, got, want)
		}
	}
	for _, n := range []int32{0, 1, -1, 1 << 24, 1<<24 + 1, 1<<24 + 3, -(1<<24 + 1), math.MaxInt32, math.MinInt32, 16777217, 33554434} {
		check(n)
	}
	for i := 0; i < 200000; i++ {
		check(int32(r.Uint32()))
		check(int32(r.Uint32() >> uint(r.IntN(32))))
	}
}

// TestF2I8: in range exact; out of range the low byte of the saturated int32 (values
// measured on the H200 by testdata/h200-probes for NaN, ±Inf, 127.5, 128, 200, -129, -300).
func TestF2I8(t *testing.T) {
	cases := []struct {
		v float32
		q int8
	}{
		{0, 0}, {1, 1}, {-1, -1}, {127, 127}, {-127, -127}, {-128, -128}, {126.9, 126}, {-126.9, -126},
		{math.Float32frombits(1), 0},
		// measured on the GPU (as roundf(v) then int8_t): NaN 0, Inf -1, -Inf 0, roundf(127.5)=128 -> -128,
		// 128 -> -128, 200 -> -56, -129 -> 127, -300 -> -44
		{canonNaN, 0}, {float32(math.Inf(1)), -1}, {float32(math.Inf(-1)), 0}, {RoundF(127.5), -128},
		{128, -128}, {200, -56}, {-129, 127}, {-300, -44},
		{math.Float32frombits(0xffc00000), 0}, {1e30, -1}, {-1e30, 0},
	}
	for _, c := range cases {
		if got := F2I8(c.v); got != c.q {
			t.Errorf("F2I8(%g) = %d, want %d", c.v, got, c.q)
		}
	}
	for k := -100000; k <= 100000; k++ {
		if got := F2I8(float32(k)); got != int8(k) { // two's complement low byte
			t.Fatalf("F2I8(%d) = %d", k, got)
		}
	}
	if F2I32RZ(canonNaN) != 0 || F2I32RZ(3e9) != math.MaxInt32 || F2I32RZ(-3e9) != math.MinInt32 || F2I32RZ(-2.7) != -2 {
		t.Error("F2I32RZ")
	}
}

func TestF2HH2F(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	for i := 0; i < 100000; i++ {
		x := math.Float32frombits(r.Uint32())
		h := F2H(x)
		if x != x {
			if h != f16.CanonicalNaN {
				t.Fatalf("F2H(NaN %#08x) = %#04x", math.Float32bits(x), h)
			}
			continue
		}
		if h != f16.FromFloat32(x) {
			t.Fatalf("F2H(%g) = %#04x, want %#04x", x, h, f16.FromFloat32(x))
		}
	}
	for u := 0; u < 1<<16; u++ {
		h := f16.Half(u)
		got := H2F(h)
		if h.IsNaN() {
			if math.Float32bits(got) != CanonicalNaN32 {
				t.Fatalf("H2F(%#04x) = %#08x", u, math.Float32bits(got))
			}
			continue
		}
		if !same(got, h.ToFloat32()) {
			t.Fatalf("H2F(%#04x) = %g", u, got)
		}
	}
}

// TestNoImplicitFusion: values where a*b+c with one rounding differs from two roundings,
// so a build that fuses Mul+Add (GOAMD64=v3, arm64) would fail.
func TestNoImplicitFusion(t *testing.T) {
	// (1+2^-12)^2 = 1 + 2^-11 + 2^-24 is a tie in float32 and rounds to 1 + 2^-11.
	a, b, c := float32(1+0x1p-12), float32(1+0x1p-12), float32(-1)
	two := Add(Mul(a, b), c) // 2^-11
	one := FMA(a, b, c)      // 2^-11 + 2^-24, exact
	if two == one {
		t.Fatalf("Mul+Add = FMA = %g: fusion not detectable with these values", one)
	}
	if two != 0x1p-11 || one != 0x1p-11+0x1p-24 {
		t.Fatalf("Add(Mul) = %g, FMA = %g", two, one)
	}
}
