package sim

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"
)

// exactRcpBits returns the bits of the correctly rounded float32 of 1/x for
// x = 1 + i*2^-23, by integer arithmetic: with j = 2^23 + i, 1/x = 2^23/j; for j > 2^23
// the result lies in (0.5, 1) and is r*2^-24 with r = RN(2^47 / j) (ties to even; r may
// round up to 2^24, i.e. 1.0).
func exactRcpBits(i uint32) uint32 {
	if i == 0 {
		return 0x3f800000
	}
	j := uint64(1<<23 + i)
	q, rem := (uint64(1)<<47)/j, (uint64(1)<<47)%j
	if 2*rem > j || (2*rem == j && q&1 == 1) {
		q++
	}
	if q == 1<<24 {
		return 0x3f800000
	}
	return 0x3f000000 + uint32(q-1<<23)
}

// TestRcpTableCounts: the embedded table has the README's counts (delta -1: 374,723;
// 0: 7,280,086; +1: 733,799) and only the codes 0, 1, 2.
func TestRcpTableCounts(t *testing.T) {
	if len(rcpDelta) != RcpTableLen/4 {
		t.Fatalf("table is %d bytes, want %d", len(rcpDelta), RcpTableLen/4)
	}
	var cnt [4]int
	for i := 0; i < len(rcpDelta); i++ {
		b := rcpDelta[i]
		for k := 0; k < 4; k++ {
			cnt[b>>(2*k)&3]++
		}
	}
	if cnt[3] != 0 {
		t.Errorf("%d entries with the invalid code 3", cnt[3])
	}
	if cnt[0] != 374723 || cnt[1] != 7280086 || cnt[2] != 733799 {
		t.Errorf("counts -1/0/+1 = %d/%d/%d, want 374723/7280086/733799", cnt[0], cnt[1], cnt[2])
	}
	if RcpTableDelta(0) < -1 || RcpTableDelta(RcpTableLen-1) > 1 {
		t.Error("RcpTableDelta out of range")
	}
}

// TestRcpWithinOneUlp: for all 2^23 inputs in [1,2), the reference the table is relative
// to (float32(1/float64(x))) is the correctly rounded reciprocal (integer arithmetic; a
// sample also against math/big), and Rcp(x) is ref + RcpTableDelta, so within 1 ulp.
func TestRcpWithinOneUlp(t *testing.T) {
	for i := uint32(0); i < RcpTableLen; i++ {
		x := math.Float32frombits(0x3f800000 | i)
		ex := exactRcpBits(i)
		if ref := math.Float32bits(float32(1 / float64(x))); ref != ex {
			t.Fatalf("x=%#08x: float64 reciprocal %#08x, correctly rounded %#08x", math.Float32bits(x), ref, ex)
		}
		got := int64(math.Float32bits(Rcp(x)))
		if d := got - int64(ex); d != int64(RcpTableDelta(int(i))) || d < -1 || d > 1 {
			t.Fatalf("Rcp(%#08x) = %#08x, correctly rounded %#08x, table delta %d", math.Float32bits(x), got, ex, RcpTableDelta(int(i)))
		}
	}
	r := rand.New(rand.NewPCG(31, 32))
	for n := 0; n < 20000; n++ {
		i := r.Uint32() & 0x7fffff
		x := math.Float32frombits(0x3f800000 | i)
		want, _ := new(big.Float).SetPrec(200).Quo(big.NewFloat(1), big.NewFloat(float64(x))).Float32()
		if math.Float32bits(want) != exactRcpBits(i) {
			t.Fatalf("exactRcpBits(%#x) = %#08x, math/big %#08x", i, exactRcpBits(i), math.Float32bits(want))
		}
	}
}

// TestRcpBinades: for normal x = m*2^e, Rcp(x) is Rcp(m) scaled by 2^-e (computed here in
// float64 with math.Ldexp), flushed to ±0 below 2^-126; checked on random x of every
// exponent and on every exponent for m in a fixed set.
func TestRcpBinades(t *testing.T) {
	want := func(x float32) float32 {
		b := math.Float32bits(x)
		m := math.Float32frombits(0x3f800000 | b&0x7fffff)
		e := int(b>>23&0xff) - 127
		v := math.Ldexp(float64(Rcp(m)), -e)
		if math.Abs(v) < 0x1p-126 {
			v = 0
		}
		return float32(math.Copysign(v, float64(x)))
	}
	r := rand.New(rand.NewPCG(33, 34))
	for n := 0; n < 300000; n++ {
		u := r.Uint32()
		if e := u >> 23 & 0xff; e == 0 || e == 0xff {
			continue
		}
		x := math.Float32frombits(u)
		if got := Rcp(x); !same(got, want(x)) {
			t.Fatalf("Rcp(%#08x) = %#08x, want %#08x", u, math.Float32bits(got), math.Float32bits(want(x)))
		}
	}
	for e := uint32(1); e < 255; e++ {
		for _, m := range []uint32{0, 1, 0x400000, 0x7fffff, 0x2aaaab} {
			x := math.Float32frombits(e<<23 | m)
			if got := Rcp(x); !same(got, want(x)) {
				t.Fatalf("Rcp(%#08x) = %#08x, want %#08x", e<<23|m, math.Float32bits(got), math.Float32bits(want(x)))
			}
		}
	}
}

func TestRcpSpecials(t *testing.T) {
	inf := float32(math.Inf(1))
	nz := float32(math.Copysign(0, -1))
	cases := []struct{ x, want float32 }{
		{0, inf}, {nz, -inf}, {math.Float32frombits(1), inf}, {math.Float32frombits(0x807fffff), -inf},
		{inf, 0}, {-inf, nz},
		{0x1p126, 0x1p-126},          // still normal
		{0x1p127, 0}, {-0x1p127, nz}, // 2^-127 is subnormal: flushed
		{0x1.8p126, 0}, {math.MaxFloat32, 0}, // below 2^-126: flushed
		{0x1p-126, 0x1p126}, {2, 0.5}, {-4, -0.25}, {1, 1},
	}
	for _, c := range cases {
		if got := Rcp(c.x); !same(got, c.want) {
			t.Errorf("Rcp(%g) = %g (%#08x), want %g", c.x, got, math.Float32bits(got), c.want)
		}
	}
	for _, u := range []uint32{0x7fc00000, 0xffc00001, 0x7f800001} {
		if got := Rcp(math.Float32frombits(u)); math.Float32bits(got) != CanonicalNaN32 {
			t.Errorf("Rcp(NaN %#08x) = %#08x", u, math.Float32bits(got))
		}
	}
}

// TestDiv: Div(1, b) is Rcp(b) (as measured for a = 1), Div is Mul(a, Rcp(b)), and on
// normal operands with a normal quotient it is within 2 ulp of the correctly rounded
// quotient (the documented bound of div.approx; a sanity check of the model).
func TestDiv(t *testing.T) {
	r := rand.New(rand.NewPCG(35, 36))
	maxUlps := int64(0)
	for n := 0; n < 200000; n++ {
		a := math.Float32frombits(r.Uint32()&0x807fffff | uint32(97+r.IntN(60))<<23)
		b := math.Float32frombits(r.Uint32()&0x807fffff | uint32(97+r.IntN(60))<<23)
		if !same(Div(1, b), Rcp(b)) || !same(Div(a, b), Mul(a, Rcp(b))) {
			t.Fatalf("Div(%g, %g)", a, b)
		}
		q, _ := new(big.Float).SetPrec(200).Quo(bf(a), bf(b)).Float32()
		d := int64(math.Float32bits(Div(a, b))) - int64(math.Float32bits(q))
		if d < 0 {
			d = -d
		}
		if d > maxUlps {
			maxUlps = d
		}
	}
	t.Logf("max |Div - RN(a/b)| = %d ulp", maxUlps)
	if maxUlps > 2 {
		t.Fatalf("Div is %d ulp from the quotient, the bound is 2", maxUlps)
	}
}

// TestDiv127: Inv127 is RN(1/127) (math/big), and over all 2^23 x in [1,2) Div127 is never
// above the correctly rounded x/127 and one ulp below it in 392,188 cases (4.68%; the
// README measured 4.7% for the compiled b/127). x/127 in float64 is never within 2^-53
// relative of a float32 midpoint (|x*2^k - 127*odd| >= 1), so float32(float64(x)/127) is
// the correctly rounded quotient.
func TestDiv127(t *testing.T) {
	k, _ := new(big.Float).SetPrec(200).Quo(big.NewFloat(1), big.NewFloat(127)).Float32()
	if math.Float32bits(k) != Inv127Bits || !same(Inv127, k) {
		t.Fatalf("RN(1/127) = %#08x, Inv127Bits = %#08x", math.Float32bits(k), Inv127Bits)
	}
	below := 0
	for i := uint32(0); i < RcpTableLen; i++ {
		x := math.Float32frombits(0x3f800000 | i)
		q := float32(float64(x) / 127)
		switch got := Div127(x); {
		case got > q:
			t.Fatalf("Div127(%g) = %g above RN(x/127) = %g", x, got, q)
		case got < q:
			if math.Float32bits(q)-math.Float32bits(got) != 1 {
				t.Fatalf("Div127(%g) = %g more than 1 ulp below %g", x, got, q)
			}
			below++
		}
	}
	frac := float64(below) / RcpTableLen
	t.Logf("Div127 one ulp below RN(x/127) for %d of 2^23 inputs in [1,2) (%.2f%%)", below, 100*frac)
	if below != 392188 || math.Round(1000*frac)/10 != 4.7 {
		t.Fatalf("below = %d (%.3f%%), want 392188 (README: 4.7%%)", below, 100*frac)
	}
}

func BenchmarkRcp(b *testing.B) {
	x := float32(1.2345)
	var s float32
	for i := 0; i < b.N; i++ {
		s += Rcp(x)
		x += 1e-7
	}
	_ = s
}
