package sim

import "math/bits"

// Integer intrinsics of the quantized kernels. All are exact; packed operands follow
// CUDA: byte k of a 32-bit word is bits 8k..8k+7 (byte 0 is the lowest address in
// memory, little-endian). Arguments and results are int32 like ggml's `int` variables;
// the bit patterns are what matters.

// byteAt returns byte k of x as a signed value.
func sbyte(x int32, k uint) int32 { return int32(int8(x >> (8 * k))) }

// Dp4a returns c + sum_{k<4} int8(a_k)*int8(b_k) with 32-bit wrap-around (__dp4a with
// signed operands, IDP.4A.S8.S8; also AMD's sdot4/sudot4 as ggml_cuda_dp4a calls them,
// which give the same value for these ranges).
// It is written out so that it inlines.
func Dp4a(a, b, c int32) int32 {
	return c + int32(int8(a))*int32(int8(b)) + int32(int8(a>>8))*int32(int8(b>>8)) +
		int32(int8(a>>16))*int32(int8(b>>16)) + int32(int8(a>>24))*int32(int8(b>>24))
}

// Vsubss4 returns the per-byte signed saturating difference: byte k of the result is
// clamp(int8(a_k) - int8(b_k), -128, 127) (__vsubss4).
func Vsubss4(a, b int32) int32 {
	var r uint32
	for k := uint(0); k < 4; k++ {
		d := sbyte(a, k) - sbyte(b, k)
		if d > 127 {
			d = 127
		} else if d < -128 {
			d = -128
		}
		r |= uint32(uint8(d)) << (8 * k)
	}
	return int32(r)
}

// Vsub4 returns the per-byte wrap-around difference: byte k is (a_k - b_k) mod 256
// (__vsub4).
func Vsub4(a, b int32) int32 {
	// SWAR: subtract with the borrows between bytes suppressed.
	ua, ub := uint32(a), uint32(b)
	r := ((ua | 0x80808080) - (ub &^ 0x80808080)) ^ ((ua ^ ^ub) & 0x80808080)
	return int32(r)
}

// Vcmpne4 returns, per byte, 0xff where a_k != b_k and 0x00 where equal (__vcmpne4).
func Vcmpne4(a, b int32) int32 {
	x := uint32(a ^ b)
	var r uint32
	for k := uint(0); k < 4; k++ {
		if x>>(8*k)&0xff != 0 {
			r |= 0xff << (8 * k)
		}
	}
	return int32(r)
}

// BytePerm returns __byte_perm(x, y, s) (PRMT in its default mode): the 8 bytes of y:x
// are numbered 0..3 (x) and 4..7 (y); byte k of the result is byte (s >> 4k) & 7. The
// upper bit of each selector nibble (sign-replicate mode of the PTX prmt .default form) is
// ignored by __byte_perm, which only uses the low 3 bits of each nibble.
func BytePerm(x, y, s int32) int32 {
	v := uint64(uint32(x)) | uint64(uint32(y))<<32
	var r uint32
	for k := uint(0); k < 4; k++ {
		sel := uint(s>>(4*k)) & 7
		r |= uint32(v>>(8*sel)&0xff) << (8 * k)
	}
	return int32(r)
}

// Lop3 returns the bitwise function of a, b, c given by the 8-bit truth table lut
// (lop3.b32): result bit i is lut bit (a_i<<2 | b_i<<1 | c_i). With the constants
// ta=0xf0, tb=0xcc, tc=0xaa, lut = f(ta, tb, tc) encodes f.
func Lop3(a, b, c int32, lut uint8) int32 {
	ua, ub, uc := uint32(a), uint32(b), uint32(c)
	var r uint32
	for i := uint(0); i < 8; i++ {
		if lut>>i&1 == 0 {
			continue
		}
		m := ^uint32(0)
		if i&4 != 0 {
			m &= ua
		} else {
			m &^= ua
		}
		if i&2 != 0 {
			m &= ub
		} else {
			m &^= ub
		}
		if i&1 != 0 {
			m &= uc
		} else {
			m &^= uc
		}
		r |= m
	}
	return int32(r)
}

// Popc returns the number of set bits of x (__popc).
func Popc(x uint32) int32 { return int32(bits.OnesCount32(x)) }

// The sign handling of ggml's i-quant kernels (vecdotq.cuh, mmq-load-tiles.cuh), shared
// by MMVQ and MMQ.

// SignedGrid applies sign masks to the 8 unsigned grid bytes g (byte j = value j) as the
// kernels do: __vsub4(g.x ^ signs0, signs0), __vsub4(g.y ^ signs1, signs1), with signs0
// and signs1 the 0xff-per-byte masks of __vcmpne4 for values 0..3 and 4..7 (x ^ 0 - 0 =
// x; (x ^ 0xff) - 0xff = -x mod 256).
func SignedGrid(g uint64, signs0, signs1 int32) (lo, hi int32) {
	lo = Vsub4(int32(uint32(g))^signs0, signs0)
	hi = Vsub4(int32(uint32(g>>32))^signs1, signs1)
	return lo, hi
}

// KsignMasks returns the masks of an unpack_ksigns word (the 7 sign bits completed to
// even parity, times 0x01010101): signs0 = __vcmpne4(signs & 0x08040201, 0), signs1 =
// __vcmpne4(signs & 0x80402010, 0).
func KsignMasks(signs uint32) (signs0, signs1 int32) {
	signs0 = Vcmpne4(int32(signs&0x08040201), 0)
	signs1 = Vcmpne4(int32(signs&0x80402010), 0)
	return signs0, signs1
}

// PackedSignMasks returns the masks of an IQ2_S / IQ3_S sign byte s (bit j = value j
// negative): signs0 = __vcmpne4(((s & 0x03) << 7) | ((s & 0x0C) << 21), 0), signs1 =
// __vcmpne4(((s & 0x30) << 3) | ((s & 0xC0) << 17), 0).
func PackedSignMasks(s uint8) (signs0, signs1 int32) {
	v := int32(s)
	signs0 = Vcmpne4(((v&0x03)<<7)|((v&0x0C)<<21), 0)
	signs1 = Vcmpne4(((v&0x30)<<3)|((v&0xC0)<<17), 0)
	return signs0, signs1
}
