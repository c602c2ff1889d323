package cuda

import (
	"math"
	"testing"
)

func TestRcpDelta2RoundTrip(t *testing.T) {
	// A synthetic hardware: delta -1, 0, +1 by input index mod 3 (and mod 7 for variety).
	got := make([]uint32, RcpTableLen)
	var want DeltaCounts
	for i := range got {
		d := int64(i%3) - 1
		if i%7 == 0 {
			d = 0
		}
		switch d {
		case -1:
			want.Minus++
		case 0:
			want.Zero++
		case 1:
			want.Plus++
		}
		got[i] = uint32(int64(RcpRef(0x3f800000|uint32(i))) + d)
	}
	tab, c, err := EncodeRcpDelta2(got)
	if err != nil {
		t.Fatal(err)
	}
	if c != want {
		t.Fatalf("counts %v, want %v", c, want)
	}
	back, c2, err := DecodeRcpDelta2(tab)
	if err != nil || c2 != want {
		t.Fatalf("decode: %v, %v", c2, err)
	}
	for i := range back {
		if back[i] != got[i] {
			t.Fatalf("input %d: decoded %#x, encoded %#x", i, back[i], got[i])
		}
	}
	// Byte layout: input i in byte i/4 at bit 2*(i%4), code delta+1.
	// Inputs 0..3 have deltas 0 (i%7==0), 0, +1, -1: codes 1, 1, 2, 0.
	if tab[0] != 1|1<<2|2<<4|0<<6 {
		t.Fatalf("byte 0 = %08b", tab[0])
	}
	tab2 := append([]byte(nil), tab...)
	tab2[100] ^= 0x30 // flips input 402's code
	if n, first, _ := CompareDelta2(tab, tab2); n != 1 || first != 402 {
		t.Fatalf("CompareDelta2 = %d, %d", n, first)
	}
	got[5] += 2
	if _, _, err := EncodeRcpDelta2(got); err == nil {
		t.Fatal("a 2-ulp result was encoded")
	}
	if _, _, err := EncodeRcpDelta2(got[:10]); err == nil {
		t.Fatal("a short result slice was encoded")
	}
	bad := make([]byte, RcpTableLen/4)
	bad[7] = 3
	if _, _, err := DecodeRcpDelta2(bad); err == nil {
		t.Fatal("code 3 decoded")
	}
}

func TestRcpRef(t *testing.T) {
	for _, c := range []struct{ x, want float32 }{{1, 1}, {2, 0.5}, {4, 0.25}, {0.5, 2}} {
		if got := math.Float32frombits(RcpRef(math.Float32bits(c.x))); got != c.want {
			t.Errorf("RcpRef(%v) = %v", c.x, got)
		}
	}
	if RcpRef(0x3fc00000) != math.Float32bits(float32(2.0/3.0)) {
		t.Error("RcpRef(1.5) is not float32(2/3)")
	}
}

func TestRcpScaledAndCompareBinade(t *testing.T) {
	r1 := uint32(0x3f2aaaab) // rcp(1.5) ~ 0.6667
	if got := RcpScaled(0x40000000, r1); got != 0x3eaaaaab {
		t.Errorf("scaled by 2^-1: %#x", got)
	}
	if got := RcpScaled(0xbf800000, r1); got != 0xbf2aaaab {
		t.Errorf("negative: %#x", got)
	}
	if got := RcpScaled(0x00000000, r1); got != 0x7f800000 {
		t.Errorf("subnormal input (FTZ): %#x", got)
	}
	if got := RcpScaled(0x80000000, r1); got != 0xff800000 {
		t.Errorf("negative subnormal input (FTZ): %#x", got)
	}
	// 2^127 binade: results are below 2^-127, subnormal under the hypothesis.
	if got := RcpScaled(0x7f000000, r1); got&0x7f800000 != 0 || got == 0 {
		t.Errorf("2^127 binade: %#x is not a nonzero subnormal", got)
	}

	r1s := make([]uint32, RcpTableLen)
	for i := range r1s {
		r1s[i] = RcpRef(0x3f800000 | uint32(i))
	}
	b := Binade{"2^127", 0x7f000000}
	got := make([]uint32, RcpTableLen)
	for i := range got {
		got[i] = RcpScaled(b.Base, r1s[i])
	}
	got[3] = 0  // a flush
	got[9] ^= 1 // an ulp
	got[11] = 0x7fc00000
	rep, err := CompareBinade(b, got, r1s)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Differ != 3 || rep.Flushed != 1 || rep.NaN != 1 || len(rep.Examples) != 3 || rep.Examples[0][0] != 0x7f000003 {
		t.Fatalf("report %+v", rep)
	}
}
