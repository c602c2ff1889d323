package sim

import (
	"encoding/binary"
	"math/bits"
	"math/rand/v2"
	"testing"

	"pgregory.net/rapid"
)

// Byte-wise references: unpack with encoding/binary (little-endian, byte 0 = bits 0..7).

func bytesOf(x int32) [4]byte {
	var b [4]byte
	binary.LittleEndian.PutUint32(b[:], uint32(x))
	return b
}

func fromBytes(b [4]byte) int32 { return int32(binary.LittleEndian.Uint32(b[:])) }

func refDp4a(a, b, c int32) int32 {
	ba, bb := bytesOf(a), bytesOf(b)
	s := int64(c)
	for k := 0; k < 4; k++ {
		s += int64(int8(ba[k])) * int64(int8(bb[k]))
	}
	return int32(uint32(s)) // wrap to 32 bits
}

func refBytewise(a, b int32, f func(x, y byte) byte) int32 {
	ba, bb := bytesOf(a), bytesOf(b)
	var r [4]byte
	for k := range r {
		r[k] = f(ba[k], bb[k])
	}
	return fromBytes(r)
}

func subss(x, y byte) byte {
	d := int(int8(x)) - int(int8(y))
	d = max(-128, min(127, d))
	return byte(int8(d))
}

func sub(x, y byte) byte { return x - y }

func cmpne(x, y byte) byte {
	if x != y {
		return 0xff
	}
	return 0
}

func refBytePerm(x, y, s int32) int32 {
	var in [8]byte
	binary.LittleEndian.PutUint32(in[0:], uint32(x))
	binary.LittleEndian.PutUint32(in[4:], uint32(y))
	var r [4]byte
	for n := range r {
		r[n] = in[(uint32(s)>>(4*n))&7]
	}
	return fromBytes(r)
}

func refLop3(a, b, c int32, lut uint8) int32 {
	var r uint32
	for i := 0; i < 32; i++ {
		idx := (uint32(a)>>i&1)<<2 | (uint32(b)>>i&1)<<1 | uint32(c)>>i&1
		r |= uint32(lut>>idx&1) << i
	}
	return int32(r)
}

// TestBytewiseExhaustive: Dp4a, Vsubss4, Vsub4, Vcmpne4 on all 65536 byte pairs in each
// byte position, the other bytes random.
func TestBytewiseExhaustive(t *testing.T) {
	r := rand.New(rand.NewPCG(41, 42))
	for pos := uint(0); pos < 4; pos++ {
		for x := 0; x < 256; x++ {
			for y := 0; y < 256; y++ {
				a := int32(r.Uint32()&^(0xff<<(8*pos)) | uint32(x)<<(8*pos))
				b := int32(r.Uint32()&^(0xff<<(8*pos)) | uint32(y)<<(8*pos))
				c := int32(r.Uint32())
				if got, want := Dp4a(a, b, c), refDp4a(a, b, c); got != want {
					t.Fatalf("Dp4a(%#x, %#x, %d) = %d, want %d", a, b, c, got, want)
				}
				if got, want := Vsubss4(a, b), refBytewise(a, b, subss); got != want {
					t.Fatalf("Vsubss4(%#08x, %#08x) = %#08x, want %#08x", a, b, got, want)
				}
				if got, want := Vsub4(a, b), refBytewise(a, b, sub); got != want {
					t.Fatalf("Vsub4(%#08x, %#08x) = %#08x, want %#08x", a, b, got, want)
				}
				if got, want := Vcmpne4(a, b), refBytewise(a, b, cmpne); got != want {
					t.Fatalf("Vcmpne4(%#08x, %#08x) = %#08x, want %#08x", a, b, got, want)
				}
			}
		}
	}
}

func TestIntrinsicsSpots(t *testing.T) {
	// ggml idioms
	if got := Vsubss4(0x0f000f08, 0x08080808); got != 0x07f80700 {
		t.Errorf("Vsubss4 q4_0 idiom = %#08x", got)
	}
	if got := Vsubss4(int32(-0x7f7f7f80), 0x7f7f7f7f); uint32(got) != 0x80808080 { // 0x80808080 - 0x7f.. saturates
		t.Errorf("Vsubss4 saturation = %#08x", uint32(got))
	}
	if got := Dp4a(int32(-0x7f7f7f80), int32(-0x7f7f7f80), 0); got != 4*128*128 { // bytes 0x80 = -128
		t.Errorf("Dp4a(-128s) = %d", got)
	}
	if got := Dp4a(0x7f7f7f7f, int32(-0x7f7f7f80), 5); got != 5-4*127*128 {
		t.Errorf("Dp4a = %d", got)
	}
	if got := BytePerm(0x03020100, 0x07060504, 0x7531); got != 0x07050301 {
		t.Errorf("BytePerm = %#08x", got)
	}
	if got := BytePerm(0x11100100, 0x11100100, 0x3210); got != 0x11100100 {
		t.Errorf("BytePerm = %#08x", got)
	}
	// __byte_perm uses only 3 bits per selector nibble (libdevice): 0xf selects byte 7.
	if got := BytePerm(0x03020100, 0x07060504, 0xfedc); got != 0x07060504 {
		t.Errorf("BytePerm(selector 0xfedc) = %#08x", got)
	}
	const ta, tb, tc = 0xf0, 0xcc, 0xaa
	if got := Lop3(0x0f0f, 0x3333, 0x5555, ta&tb|tc); got != 0x0f0f&0x3333|0x5555 {
		t.Errorf("Lop3 = %#x", got)
	}
	if Popc(0) != 0 || Popc(0xffffffff) != 32 || Popc(0x80000001) != 2 {
		t.Error("Popc")
	}
}

// TestBytePermLop3Popc: property tests against the references (all 2^16 selector
// patterns of the low nibbles and all 256 truth tables appear across runs).
func TestBytePermLop3Popc(t *testing.T) {
	r := rand.New(rand.NewPCG(43, 44))
	for s := 0; s < 1<<16; s++ {
		x, y := int32(r.Uint32()), int32(r.Uint32())
		sel := int32(r.Uint32()&0xffff0000) | int32(s)
		if got, want := BytePerm(x, y, sel), refBytePerm(x, y, sel); got != want {
			t.Fatalf("BytePerm(%#08x, %#08x, %#08x) = %#08x, want %#08x", x, y, sel, got, want)
		}
	}
	for lut := 0; lut < 256; lut++ {
		for i := 0; i < 64; i++ {
			a, b, c := int32(r.Uint32()), int32(r.Uint32()), int32(r.Uint32())
			if got, want := Lop3(a, b, c, uint8(lut)), refLop3(a, b, c, uint8(lut)); got != want {
				t.Fatalf("Lop3(%#x, %#x, %#x, %#02x) = %#x, want %#x", a, b, c, lut, got, want)
			}
		}
	}
	rapid.Check(t, func(t *rapid.T) {
		x := rapid.Uint32().Draw(t, "x")
		n := int32(0)
		for i := 0; i < 32; i++ {
			n += int32(x >> i & 1)
		}
		if Popc(x) != n || int(n) != bits.OnesCount32(x) {
			t.Fatalf("Popc(%#x) = %d, want %d", x, Popc(x), n)
		}
	})
}
