package f16

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"flag"
	"math"
	"runtime"
	"sync"
	"testing"
)

var long = flag.Bool("long", false, "run the exhaustive 2^32 sweeps")

// refFromFloat32 is a hand-written binary32 -> binary16 conversion, round to nearest
// even, written independently of x448/float16: every float32 is exactly a float64, which
// refFromFloat64 (arith_test.go) rounds with integer arithmetic alone. NaNs follow
// FromFloat32's documented rule: sign kept, quiet bit set, top 10 payload bits kept.
func refFromFloat32(f uint32) uint16 {
	if f&0x7f800000 == 0x7f800000 && f&0x7fffff != 0 {
		return uint16(f>>16)&0x8000 | 0x7c00 | 0x200 | uint16(f&0x7fffff>>13)
	}
	return uint16(refFromFloat64(float64(math.Float32frombits(f))))
}

// TestRefFromFloat32Spots pins the hand-written reference on values known by hand.
func TestRefFromFloat32Spots(t *testing.T) {
	cases := []struct {
		f float32
		h uint16
	}{
		{0, 0}, {float32(math.Copysign(0, -1)), 0x8000}, {1, 0x3c00}, {-2, 0xc000},
		{65504, 0x7bff}, {65519.996, 0x7bff}, {65520, 0x7c00}, {1e9, 0x7c00},
		{float32(math.Inf(-1)), 0xfc00},
		{0x1p-14, 0x0400}, {0x1p-24, 0x0001}, {0x1p-25, 0x0000}, {0x1.000002p-25, 0x0001},
		{0x3p-25, 0x0002},                                                                                                 // 1.5 * 2^-24: tie, rounds to even 2
		{0x5p-25, 0x0002},                                                                                                 // 2.5 * 2^-24: tie, rounds to even 2
		{1 + 0x1p-11, 0x3c00}, {1 + 0x3p-11, 0x3c02}, {0x1.ff8p-15, 0x03ff}, {0x1.ffbp-15, 0x03ff}, {0x1.ffcp-15, 0x0400}, // max subnormal, below and at the tie to 2^-14
	}
	for _, c := range cases {
		if got := refFromFloat32(math.Float32bits(c.f)); got != c.h {
			t.Errorf("ref(%g) = %#04x, want %#04x", c.f, got, c.h)
		}
		if got := FromFloat32(c.f); uint16(got) != c.h {
			t.Errorf("FromFloat32(%g) = %#04x, want %#04x", c.f, got, c.h)
		}
	}
}

// TestFromFloat32Exhaustive compares FromFloat32 with refFromFloat32. Default mode: for
// every sign and exponent, all 2^13 patterns of the 13 mantissa bits that decide rounding
// combined with 8 patterns of the upper mantissa bits (2^25 inputs), plus every 251st
// bit pattern. With -long: all 2^32 inputs, in parallel, with a digest.
func TestFromFloat32Exhaustive(t *testing.T) {
	check := func(u uint32) bool { return uint16(FromFloat32(math.Float32frombits(u))) == refFromFloat32(u) }
	if !*long {
		bad := 0
		uppers := []uint32{0, 1, 0x155, 0x2aa, 0x3fe, 0x3ff, 0x200, 0x1ff}
		for se := uint32(0); se < 512; se++ {
			for _, up := range uppers {
				base := se<<23 | up<<13
				for lo := uint32(0); lo < 1<<13; lo++ {
					if u := base | lo; !check(u) {
						if bad++; bad < 10 {
							t.Errorf("FromFloat32(%#08x) = %#04x, ref %#04x", u, FromFloat32(math.Float32frombits(u)), refFromFloat32(u))
						}
					}
				}
			}
		}
		for u := uint64(0); u < 1<<32; u += 251 {
			if !check(uint32(u)) {
				if bad++; bad < 10 {
					t.Errorf("FromFloat32(%#08x) mismatch", u)
				}
			}
		}
		if bad > 0 {
			t.Fatalf("%d mismatches", bad)
		}
		return
	}
	workers := runtime.GOMAXPROCS(0)
	const chunks = 256
	digests := make([][32]byte, chunks) // per-chunk digests, combined in order
	refDigests := make([][32]byte, chunks)
	bad := make([]int, chunks)
	var wg sync.WaitGroup
	next := make(chan int)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			buf := make([]byte, 2<<16)
			rbuf := make([]byte, 2<<16)
			for c := range next {
				h, rh := sha256.New(), sha256.New()
				for hi := uint32(0); hi < 1<<8; hi++ {
					base := uint32(c)<<24 | hi<<16
					for lo := uint32(0); lo < 1<<16; lo++ {
						u := base | lo
						got := uint16(FromFloat32(math.Float32frombits(u)))
						want := refFromFloat32(u)
						if got != want {
							bad[c]++
						}
						binary.LittleEndian.PutUint16(buf[2*lo:], got)
						binary.LittleEndian.PutUint16(rbuf[2*lo:], want)
					}
					h.Write(buf)
					rh.Write(rbuf)
				}
				copy(digests[c][:], h.Sum(nil))
				copy(refDigests[c][:], rh.Sum(nil))
			}
		}()
	}
	for c := 0; c < chunks; c++ {
		next <- c
	}
	close(next)
	wg.Wait()
	total := 0
	for _, b := range bad {
		total += b
	}
	all, ref := sha256.New(), sha256.New()
	for c := range digests {
		all.Write(digests[c][:])
		ref.Write(refDigests[c][:])
	}
	got, want := hex.EncodeToString(all.Sum(nil)), hex.EncodeToString(ref.Sum(nil))
	t.Logf("all 2^32 inputs: %d mismatches; digest FromFloat32 %s, reference %s", total, got, want)
	if total != 0 || got != want {
		t.Fatalf("FromFloat32 differs from the reference on %d of 2^32 inputs", total)
	}
	if got != fullSweepDigestHex {
		t.Errorf("digest %s differs from the recorded %s", got, fullSweepDigestHex)
	}
}

// fullSweepDigestHex: SHA-256 over the 256 per-chunk SHA-256 digests (chunk c = inputs
// c<<24 .. c<<24|0xffffff, each output as 2 little-endian bytes), recorded from a -long
// run in which FromFloat32 and refFromFloat32 agreed on all 2^32 inputs.
const fullSweepDigestHex = "f2c4f4d18503dab595c817aad9b96ea7351b94d00070ae0e036e487c81add031"

// TestToFloat32AllHalves checks ToFloat32 on all 2^16 bit patterns against a direct
// decoding, and that FromFloat32 inverts it on every non-NaN half.
func TestToFloat32AllHalves(t *testing.T) {
	for u := 0; u < 1<<16; u++ {
		h := Half(u)
		e, m := u>>10&0x1f, u&0x3ff
		var want float64
		switch {
		case e == 0:
			want = math.Ldexp(float64(m), -24)
		case e == 31 && m == 0:
			want = math.Inf(1)
		case e == 31:
			want = math.NaN()
		default:
			want = math.Ldexp(float64(m|0x400), e-25)
		}
		if u&0x8000 != 0 {
			want = -want
		}
		got := h.ToFloat32()
		if h.IsNaN() {
			if got == got {
				t.Fatalf("%#04x: ToFloat32 = %g, want NaN", u, got)
			}
			continue
		}
		if float64(got) != want || math.Signbit(float64(got)) != (u&0x8000 != 0) {
			t.Fatalf("%#04x: ToFloat32 = %g, want %g", u, got, want)
		}
		if FromFloat32(got) != h {
			t.Fatalf("%#04x: FromFloat32(ToFloat32) = %#04x", u, FromFloat32(got))
		}
	}
}
