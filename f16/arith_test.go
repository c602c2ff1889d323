package f16

import (
	"math"
	"math/big"
	"math/bits"
	"math/rand/v2"
	"testing"

	"pgregory.net/rapid"

	"github.com/ggsim/ggsim/internal/bigref"
)

// bigHalf rounds the exact value x to binary16 (round to nearest even, subnormals,
// overflow to ±Inf) with math/big only: with q = max(floor(log2|x|) - 10, -24), n is
// |x|*2^-q rounded to an integer (ties to even) and the encoding is ((q+24)<<10) + n.
func bigHalf(x *big.Float) Half {
	var sign Half
	if x.Signbit() {
		sign = 0x8000
	}
	if x.IsInf() {
		return sign | 0x7c00
	}
	if x.Sign() == 0 {
		return sign
	}
	ax := new(big.Float).Abs(x)
	q := ax.MantExp(nil) - 1 - 10 // |x| = mant*2^exp with mant in [0.5, 1)
	if q < -24 {
		q = -24
	}
	n := bigref.RoundInt(new(big.Float).SetMantExp(ax, -q), false) // exact scaling, then RNE
	if !n.IsInt64() || n.Int64() > 2048 {
		panic("bigHalf: n out of range")
	}
	b := int64(q+24)<<10 + n.Int64()
	if b >= 0x7c00 {
		return sign | 0x7c00
	}
	return sign | Half(b)
}

func isSpecial(h Half) bool { return h&0x7c00 == 0x7c00 }

// refOp returns the expected result of op ('+', '-', '*', 'f' for fma) on halves: exact
// math/big arithmetic and bigHalf for finite operands; float64 arithmetic (exact for an
// Inf or NaN result) when an operand is Inf or NaN, with every NaN canonical.
func refOp(op byte, a, b, c Half) Half {
	fa, fb, fc := float64(a.ToFloat32()), float64(b.ToFloat32()), float64(c.ToFloat32())
	if isSpecial(a) || isSpecial(b) || (op == 'f' && isSpecial(c)) {
		r := bigref.NonFinite(op, fa, fb, fc)
		if math.IsNaN(r) {
			return CanonicalNaN
		}
		if math.IsInf(r, 0) {
			return FromFloat32(float32(r))
		}
		// an Inf operand always gives Inf or NaN; a NaN operand always gives NaN
		panic("refOp: finite result with a special operand")
	}
	return bigHalf(bigref.Exact(op, fa, fb, fc))
}

func doOp(op byte, a, b, c Half) Half {
	switch op {
	case '+':
		return Add(a, b)
	case '-':
		return Sub(a, b)
	case '*':
		return Mul(a, b)
	}
	return FMA(a, b, c)
}

// edgeHalves are the values where binary16 arithmetic goes wrong if it goes wrong at all.
func edgeHalves() []Half {
	var hs []Half
	for _, u := range []uint16{
		0x0000, 0x0001, 0x0002, 0x0003, 0x01ff, 0x0200, 0x03fe, 0x03ff, // zero, subnormals
		0x0400, 0x0401, 0x07ff, 0x0800, // smallest normals
		0x3bff, 0x3c00, 0x3c01, 0x3c02, 0x3dff, 0x3e00, 0x4000, 0x4001, 0x4200, // around 1
		0x1400, 0x1401, 0x13ff, // 2^-10 and neighbours (one ulp of 1)
		0x7800, 0x7801, 0x7bfe, 0x7bff, // large, max finite
		0x5bff, 0x5c00, 0x5801, // 255.9, 256, 128.1
		0x7c00, 0x7c01, 0x7e00, 0x7fff, // Inf, NaNs
	} {
		hs = append(hs, Half(u), Half(u|0x8000))
	}
	return hs
}

// operandSet is the edge values plus n random non-NaN halves.
func operandSet(r *rand.Rand, n int) []Half {
	hs := edgeHalves()
	for target := len(hs) + n; len(hs) < target; {
		if h := Half(r.IntN(1 << 16)); !h.IsNaN() {
			hs = append(hs, h)
		}
	}
	return hs
}

// TestBigHalfMatchesFromFloat32 cross-checks the two independent references: bigHalf of a
// float32 equals FromFloat32 (itself checked against refFromFloat32).
func TestBigHalfMatchesFromFloat32(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 200000; i++ {
		u := r.Uint32()
		if i%2 == 0 { // bias towards the binary16 range
			u = u&0x807fffff | uint32(100+r.IntN(50))<<23
		}
		f := math.Float32frombits(u)
		if f != f || math.IsInf(float64(f), 0) {
			continue
		}
		if got, want := bigHalf(new(big.Float).SetFloat64(float64(f))), FromFloat32(f); got != want {
			t.Fatalf("bigHalf(%g) = %#04x, FromFloat32 = %#04x", f, got, want)
		}
	}
}

// TestArithAllPairs: Add, Sub, Mul on all pairs of edge values and random halves (about
// 280^2 pairs) against math/big.
func TestArithAllPairs(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	hs := operandSet(r, 200)
	n := 0
	for _, a := range hs {
		for _, b := range hs {
			for _, op := range []byte{'+', '-', '*'} {
				if got, want := doOp(op, a, b, 0), refOp(op, a, b, 0); got != want {
					t.Fatalf("%#04x %c %#04x = %#04x, want %#04x (%g %c %g)", a, op, b, got, want, a.ToFloat32(), op, b.ToFloat32())
				}
				n++
			}
		}
	}
	t.Logf("%d cases", n)
}

// refFromFloat64 rounds a float64 to binary16 with integer arithmetic only: the value
// m*2^e is rounded to a multiple of 2^q, where q = max(floor(log2 v) - 10, -24); the
// encoding of n*2^q is then ((q+24)<<10) + n for every n in [0, 2048] (a carry to 2048
// moves to the next binade, n = 1024 at q = -24 is the smallest normal). For non-NaN
// input (±Inf gives ±Inf).
func refFromFloat64(f float64) Half {
	u := math.Float64bits(f)
	sign := Half(u>>48) & 0x8000
	exp := int(u>>52) & 0x7ff
	man := u & (1<<52 - 1)
	if exp == 0x7ff {
		return sign | 0x7c00 // Inf (callers pass no NaN)
	}
	var m uint64
	var e int
	if exp == 0 {
		m, e = man, -1074
	} else {
		m, e = man|1<<52, exp-1075
	}
	if m == 0 {
		return sign
	}
	q := bits.Len64(m) - 1 + e - 10
	if q < -24 {
		q = -24
	}
	shift := q - e
	var n uint64
	switch {
	case shift <= 0:
		if shift < -20 {
			return sign | 0x7c00
		}
		n = m << uint(-shift)
	case shift > 60:
		n = 0 // m < 2^53 < half of 2^shift
	default:
		n = m >> uint(shift)
		rem := m & (1<<uint(shift) - 1)
		half := uint64(1) << uint(shift-1)
		if rem > half || (rem == half && n&1 == 1) {
			n++
		}
	}
	b := uint64(q+24)<<10 + n
	if b >= 0x7c00 {
		return sign | 0x7c00
	}
	return sign | Half(b)
}

// TestRefFromFloat64MatchesBig cross-checks the integer float64 rounding with bigHalf.
func TestRefFromFloat64MatchesBig(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for i := 0; i < 200000; i++ {
		u := r.Uint64()
		if i%4 != 0 { // mostly near the binary16 range
			u = u&0x800fffffffffffff | uint64(1023-30+r.IntN(50))<<52
		}
		f := math.Float64frombits(u)
		if math.IsNaN(f) || math.IsInf(f, 0) {
			continue
		}
		if got, want := refFromFloat64(f), bigHalf(new(big.Float).SetFloat64(f)); got != want {
			t.Fatalf("refFromFloat64(%g) = %#04x, bigHalf = %#04x", f, got, want)
		}
	}
}

// TestArithAllHalves: every one of the 2^16 halves as either operand of Add, Sub and Mul
// against a set of other operands. The reference is the exact float64 sum or product (a
// sum of two halves spans at most 50 bits, a product 22) rounded by refFromFloat64, which
// TestRefFromFloat64MatchesBig ties to math/big; Inf/NaN cases go through refOp. FMA: every
// half as each operand with a few fixed pairs, against math/big (more pairs with -long).
func TestArithAllHalves(t *testing.T) {
	bs := []Half{0x0000, 0x8000, 0x0001, 0x83ff, 0x0400, 0x3c00, 0xbc00, 0x3c01, 0x3800, 0x4200, 0x7bff, 0x5140, 0x1400, 0xc4d2, 0x7c00}
	fmas := [][2]Half{{0x3c01, 0x8001}, {0xbbff, 0x0400}}
	if *long {
		fmas = append(fmas, [][2]Half{{0x3c00, 0x0000}, {0x3800, 0x3c00}, {0x4248, 0xd140}, {0x1401, 0x3555}, {0x7bff, 0x7bff}}...)
	}
	ref := func(op byte, a, b Half) Half {
		if isSpecial(a) || isSpecial(b) {
			return refOp(op, a, b, 0)
		}
		fa, fb := float64(a.ToFloat32()), float64(b.ToFloat32())
		switch op {
		case '+':
			return refFromFloat64(fa + fb)
		case '-':
			return refFromFloat64(fa - fb)
		}
		return refFromFloat64(fa * fb)
	}
	n := 0
	for u := 0; u < 1<<16; u++ {
		a := Half(u)
		for _, b := range bs {
			for _, op := range []byte{'+', '-', '*'} {
				if got, want := doOp(op, a, b, 0), ref(op, a, b); got != want {
					t.Fatalf("%#04x %c %#04x = %#04x, want %#04x", a, op, b, got, want)
				}
				if got, want := doOp(op, b, a, 0), ref(op, b, a); got != want {
					t.Fatalf("%#04x %c %#04x = %#04x, want %#04x", b, op, a, got, want)
				}
				n += 2
			}
		}
		for _, bc := range fmas {
			if got, want := FMA(a, bc[0], bc[1]), refOp('f', a, bc[0], bc[1]); got != want {
				t.Fatalf("fma(%#04x, %#04x, %#04x) = %#04x, want %#04x", a, bc[0], bc[1], got, want)
			}
			if got, want := FMA(bc[0], bc[1], a), refOp('f', bc[0], bc[1], a); got != want {
				t.Fatalf("fma(%#04x, %#04x, %#04x) = %#04x, want %#04x", bc[0], bc[1], a, got, want)
			}
			n += 2
		}
	}
	t.Logf("%d cases", n)
}

// TestFMATriples: FMA on random triples from the operand set (edges included) against
// math/big.
func TestFMATriples(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	hs := operandSet(r, 120)
	for i := 0; i < 300000; i++ {
		a, b, c := hs[r.IntN(len(hs))], hs[r.IntN(len(hs))], hs[r.IntN(len(hs))]
		if got, want := FMA(a, b, c), refOp('f', a, b, c); got != want {
			t.Fatalf("fma(%#04x, %#04x, %#04x) = %#04x, want %#04x", a, b, c, got, want)
		}
	}
}

// TestFMANearTies builds triples whose exact a*b+c lies within a tiny distance of a
// binary16 rounding midpoint (c = h, a*b = ulp(h)/2 * (1 ± 2^-20)), where rounding the
// exact result through float64 or float32 first would round the wrong way. It checks FMA
// against math/big, and that the naive double rounding does fail on some of them (so the
// cases have teeth).
func TestFMANearTies(t *testing.T) {
	naiveWrong := 0
	n := 0
	for u := 0x0400; u < 0x7bff; u += 7 { // normal h, both parities
		for _, sgn := range []Half{0, 0x8000} {
			h := Half(u) | sgn
			e := int(u>>10) - 15 // exponent of h
			ulpExp := e - 10     // ulp(h) = 2^ulpExp
			for _, pm := range []int{+1, -1} {
				// a = 1 + 2^-10, b = (1 + pm*... ) chosen so a*b = 1 ± 2^-20 (times scale)
				a := FromFloat32(1 + 0x1p-10)
				b := FromFloat32(float32(1 - 0x1p-10))
				if pm < 0 {
					b = FromFloat32(float32(1 + 0x1p-10)) // (1+2^-10)^2 = 1 + 2^-9 + 2^-20
				}
				// scale b by 2^(ulpExp-1) (half an ulp), if representable
				s := ulpExp - 1
				if s < -24 || s > 15 {
					continue
				}
				bs := FromFloat32(float32(math.Ldexp(float64(b.ToFloat32()), s)))
				if float64(bs.ToFloat32()) != math.Ldexp(float64(b.ToFloat32()), s) {
					continue // b*2^s not exact in binary16
				}
				for _, ab := range [][2]Half{{a, bs}, {a.Neg(), bs}} {
					got, want := FMA(ab[0], ab[1], h), refOp('f', ab[0], ab[1], h)
					if got != want {
						t.Fatalf("fma(%#04x, %#04x, %#04x) = %#04x, want %#04x", ab[0], ab[1], h, got, want)
					}
					naive := FromFloat32(float32(math.FMA(float64(ab[0].ToFloat32()), float64(ab[1].ToFloat32()), float64(h.ToFloat32()))))
					if naive != want {
						naiveWrong++
					}
					n++
				}
			}
		}
	}
	t.Logf("%d near-tie cases, naive double rounding wrong on %d", n, naiveWrong)
	if naiveWrong == 0 {
		t.Fatal("no case distinguishes single from double rounding: the generator is broken")
	}
}

// TestArithZeroSigns pins signed-zero results (round to nearest: x + (-x) = +0).
func TestArithZeroSigns(t *testing.T) {
	pz, nz, one := Half(0), Half(0x8000), Half(0x3c00)
	cases := []struct {
		got, want Half
	}{
		{Add(pz, nz), pz}, {Add(nz, nz), nz}, {Add(one, one.Neg()), pz}, {Sub(nz, pz), nz},
		{Sub(one, one), pz}, {Mul(nz, one), nz}, {Mul(nz, nz), pz},
		{FMA(nz, one, nz), nz}, {FMA(nz, one, pz), pz}, {FMA(one, one, Half(0xbc00)), pz},
		{Add(Half(0x7c00), Half(0xfc00)), CanonicalNaN}, {Mul(pz, Half(0x7c00)), CanonicalNaN},
		{Add(Half(0xfe01), one), CanonicalNaN}, {Mul(Half(0x7bff), Half(0x4000)), 0x7c00},
	}
	for i, c := range cases {
		if c.got != c.want {
			t.Errorf("case %d: got %#04x, want %#04x", i, c.got, c.want)
		}
	}
}

// TestHalf2 checks the packing and that the half2 operations are elementwise.
func TestHalf2(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		a := Half2FromBits(rapid.Uint32().Draw(t, "a"))
		b := Half2FromBits(rapid.Uint32().Draw(t, "b"))
		c := Half2FromBits(rapid.Uint32().Draw(t, "c"))
		if Half2FromBits(a.Bits()) != a || a.Bits()&0xffff != uint32(a.Lo) {
			t.Fatalf("packing of %#08x", a.Bits())
		}
		if Add2(a, b) != (Half2{refOp('+', a.Lo, b.Lo, 0), refOp('+', a.Hi, b.Hi, 0)}) {
			t.Fatalf("Add2(%#08x, %#08x)", a.Bits(), b.Bits())
		}
		if Sub2(a, b) != (Half2{refOp('-', a.Lo, b.Lo, 0), refOp('-', a.Hi, b.Hi, 0)}) {
			t.Fatalf("Sub2(%#08x, %#08x)", a.Bits(), b.Bits())
		}
		if Mul2(a, b) != (Half2{refOp('*', a.Lo, b.Lo, 0), refOp('*', a.Hi, b.Hi, 0)}) {
			t.Fatalf("Mul2(%#08x, %#08x)", a.Bits(), b.Bits())
		}
		if FMA2(a, b, c) != (Half2{refOp('f', a.Lo, b.Lo, c.Lo), refOp('f', a.Hi, b.Hi, c.Hi)}) {
			t.Fatalf("FMA2(%#08x, %#08x, %#08x)", a.Bits(), b.Bits(), c.Bits())
		}
		lo, hi := a.Float2()
		if !a.Lo.IsNaN() && FromFloat32(lo) != a.Lo || !a.Hi.IsNaN() && FromFloat32(hi) != a.Hi {
			t.Fatalf("Float2 of %#08x", a.Bits())
		}
		x, y := rapid.Float32().Draw(t, "x"), rapid.Float32().Draw(t, "y")
		if rapid.Bool().Draw(t, "nan") {
			x = math.Float32frombits(0xffc00123)
		}
		want := Half2{FromFloat32(x), FromFloat32(y)}
		if x != x {
			want.Lo = CanonicalNaN
		}
		if y != y {
			want.Hi = CanonicalNaN
		}
		if MakeHalf2(x, y) != want {
			t.Fatalf("MakeHalf2(%g, %g)", x, y)
		}
	})
}
