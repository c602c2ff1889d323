package quant

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math"
	"math/bits"
	"os"
	"path/filepath"
	"testing"

	"pgregory.net/rapid"
)

// Tests of the i-quants (iquants.go) and of the extra types (extra.go) share this harness:
// test helpers are prefixed "ix".
//
// ixModel is an independent model of every dequantizer: value k of a block, computed in
// float64 straight from the byte offsets of ggml-common.h (not through the block views)
// and from the sign bits (not through ksigns_iq2xs). For a finite block scale every value
// of these formats is an exact product of small integers and a binary16 (or UE4M3) scale,
// so float32(model) must equal ggml's float32 result bit for bit; ixCheck asserts that the
// model's value is representable in float32 before comparing. For a NaN result only
// NaN-ness is compared (NaN bits are checked against ggml's C by TestDequantizeCSpot).

var ixTypes = []Type{IQ2_XXS, IQ2_XS, IQ2_S, IQ3_XXS, IQ3_S, IQ1_S, IQ1_M, NVFP4, Q1_0, Q2_0, TQ1_0, TQ2_0}

// ixHalf decodes binary16 bits to float64 from the format's definition.
func ixHalf(h uint16) float64 {
	s := 1.0
	if h&0x8000 != 0 {
		s = -1
	}
	e := int(h>>10) & 31
	m := float64(h & 1023)
	switch e {
	case 0:
		return s * math.Ldexp(m, -24)
	case 31:
		if m == 0 {
			return s * math.Inf(1)
		}
		return math.NaN()
	}
	return s * math.Ldexp(1024+m, e-25)
}

func ixLE16(b []byte, off int) uint16 { return binary.LittleEndian.Uint16(b[off:]) }
func ixLE32(b []byte, off int) uint32 { return binary.LittleEndian.Uint32(b[off:]) }

// ixSign7 returns the sign (+1/-1) of value j of an 8-value group whose sign group is the
// 7 bits s7: bit j for j < 7, and for j = 7 the parity of s7 (the 8 signs have even
// parity).
func ixSign7(s7 uint32, j int) float64 {
	var neg bool
	if j < 7 {
		neg = s7>>j&1 != 0
	} else {
		neg = bits.OnesCount32(s7&127)%2 == 1
	}
	if neg {
		return -1
	}
	return 1
}

func ixSignBit(b byte, j int) float64 {
	if b>>j&1 != 0 {
		return -1
	}
	return 1
}

// ixModel returns value k of block blk of type t.
func ixModel(t Type, blk []byte, k int) float64 {
	switch t {
	case IQ2_XXS:
		g, l, j := k/32, k%32/8, k%8
		aux0, aux1 := ixLE32(blk, 2+8*g), ixLE32(blk, 6+8*g)
		mag := float64(byte(IQ2XXSGrid(uint8(aux0>>(8*l))) >> (8 * j)))
		return ixHalf(ixLE16(blk, 0)) * (0.5 + float64(aux1>>28)) * 0.25 * mag * ixSign7(aux1>>(7*l), j)
	case IQ2_XS:
		q := ixLE16(blk, 2+2*(k/8))
		sc := blk[66+k/32]
		ls := sc & 15
		if k%32 >= 16 {
			ls = sc >> 4
		}
		mag := float64(byte(IQ2XSGrid(int(q&511)) >> (8 * (k % 8))))
		return ixHalf(ixLE16(blk, 0)) * (0.5 + float64(ls)) * 0.25 * mag * ixSign7(uint32(q>>9), k%8)
	case IQ2_S:
		n, g := k/8, k/32
		idx := int(blk[2+n]) | int(blk[66+g]>>(2*(n%4))&3)<<8
		sc := blk[74+g]
		ls := sc & 15
		if k%32 >= 16 {
			ls = sc >> 4
		}
		mag := float64(byte(IQ2SGrid(idx) >> (8 * (k % 8))))
		return ixHalf(ixLE16(blk, 0)) * (0.5 + float64(ls)) * 0.25 * mag * ixSignBit(blk[2+32+n], k%8)
	case IQ3_XXS:
		g := k / 32
		aux := ixLE32(blk, 2+64+4*g)
		mag := float64(byte(IQ3XXSGrid(blk[2+k/4]) >> (8 * (k % 4))))
		return ixHalf(ixLE16(blk, 0)) * (0.5 + float64(aux>>28)) * 0.5 * mag * ixSign7(aux>>(7*(k%32/8)), k%8)
	case IQ3_S:
		n4 := k / 4
		idx := int(blk[2+n4]) | int(blk[66+n4/8]>>(n4%8)&1)<<8
		sc := blk[106+k/64]
		ls := sc & 15
		if k%64 >= 32 {
			ls = sc >> 4
		}
		mag := float64(byte(IQ3SGrid(idx) >> (8 * (k % 4))))
		return ixHalf(ixLE16(blk, 0)) * float64(1+2*int(ls)) * mag * ixSignBit(blk[74+k/8], k%8)
	case IQ1_S:
		n8, g := k/8, k/32
		qh := ixLE16(blk, 34+2*g)
		idx := int(blk[2+n8]) | int(qh>>(3*(n8%4))&7)<<8
		v := float64(int8(iq1sGridAt(idx) >> (8 * (k % 8))))
		delta := 0.125
		if qh&0x8000 != 0 {
			delta = -0.125
		}
		return ixHalf(ixLE16(blk, 0)) * float64(2*int(qh>>12&7)+1) * (v + delta)
	case IQ1_M:
		n8, g := k/8, k/32
		nib := blk[32+n8/2] >> (4 * (n8 % 2)) & 15
		idx := int(blk[n8]) | int(nib&7)<<8
		v := float64(int8(iq1sGridAt(idx) >> (8 * (k % 8))))
		delta := 0.125
		if nib&8 != 0 {
			delta = -0.125
		}
		sc := ixLE16(blk, 48+2*(g/2))
		ls := sc >> (6*(g%2) + 3*(n8%4/2)) & 7
		var h uint16
		for i := 0; i < 4; i++ {
			h |= ixLE16(blk, 48+2*i) >> 12 << (4 * i)
		}
		return ixHalf(h) * float64(2*int(ls)+1) * (v + delta)
	case NVFP4:
		s, j := k/16, k%16
		q := blk[4+8*s+j%8]
		if j >= 8 {
			q >>= 4
		}
		return float64(ixFP4(q&15)) * ixUE4M3CPU(blk[s])
	case Q1_0:
		d := ixHalf(ixLE16(blk, 0))
		if blk[2+k/8]>>(k%8)&1 != 0 {
			return d
		}
		return -d
	case Q2_0:
		q := blk[2+k/4] >> (2 * (k % 4)) & 3
		return float64(int(q)-1) * ixHalf(ixLE16(blk, 0))
	case TQ1_0:
		var q byte
		var n int
		switch {
		case k < 160:
			q, n = blk[k%32], k/32
		case k < 240:
			q, n = blk[32+(k-160)%16], (k-160)/16
		default:
			q, n = blk[48+(k-240)%4], (k-240)/4
		}
		p := 1
		for i := 0; i < n; i++ {
			p *= 3
		}
		digit := (int(q)*p%256*3)>>8 - 1
		return float64(digit) * ixHalf(ixLE16(blk, 52))
	case TQ2_0:
		q := blk[32*(k/128)+k%32] >> (2 * (k % 128 / 32)) & 3
		return float64(int(q)-1) * ixHalf(ixLE16(blk, 64))
	}
	panic("ixModel: type " + t.String())
}

// ixFP4 is the E2M1 value of code q, doubled (kvalues_fp4), from the format: sign bit 3,
// exponent bits 1..2, mantissa bit 0, bias 1.
func ixFP4(q byte) float64 {
	e, m := int(q>>1&3), float64(q&1)
	v := m // subnormal: m * 2^0 * 0.5, doubled
	if e > 0 {
		v = math.Ldexp(2+m, e-1) // (1 + m/2) * 2^(e-1), doubled
	}
	if q&8 != 0 && v != 0 {
		v = -v // kvalues_fp4 is int8: code 8 is +0, not -0
	}
	return v
}

// ixUE4M3CPU is ggml_ue4m3_to_fp32 from its definition: the E4M3 magnitude of the low 7
// bits (bias 7, subnormal man*2^-9), halved; the byte 0x7f (only that byte: not 0xff)
// decodes to 0.
func ixUE4M3CPU(x byte) float64 {
	if x == 0x7f {
		return 0
	}
	e, m := int(x>>3&15), float64(x&7)
	if e == 0 {
		return math.Ldexp(m, -9) / 2
	}
	return math.Ldexp(8+m, e-10) / 2
}

// ixCheck compares a dequantized row with the model, value by value.
func ixCheck(t Type, raw []byte, got []float32) error {
	ts, bs := t.TypeSize(), t.BlockSize()
	for i := 0; i < len(got)/bs; i++ {
		blk := raw[i*ts : (i+1)*ts]
		for k := 0; k < bs; k++ {
			want := ixModel(t, blk, k)
			g := got[i*bs+k]
			if math.IsNaN(want) {
				if !math.IsNaN(float64(g)) {
					return fmt.Errorf("%v block %d value %d: got %v (%#08x), want NaN", t, i, k, g, math.Float32bits(g))
				}
				continue
			}
			if float64(float32(want)) != want {
				return fmt.Errorf("%v block %d value %d: model value %v is not a float32", t, i, k, want)
			}
			if math.Float32bits(g) != math.Float32bits(float32(want)) {
				return fmt.Errorf("%v block %d value %d: got %v (%#08x), want %v (%#08x)",
					t, i, k, g, math.Float32bits(g), float32(want), math.Float32bits(float32(want)))
			}
		}
	}
	return nil
}

// ixSetScale overwrites the block scale of blk with the binary16 bits h (for IQ1_M its
// scattered nibbles; for NVFP4, which has no binary16 scale, the four UE4M3 bytes
// byte(h), byte(h>>8), byte(h)^0x80, 0x7f).
func ixSetScale(t Type, blk []byte, h uint16) {
	switch t {
	case IQ1_M:
		for i := 0; i < 4; i++ {
			v := ixLE16(blk, 48+2*i)&0x0fff | (h>>(4*i)&15)<<12
			binary.LittleEndian.PutUint16(blk[48+2*i:], v)
		}
	case NVFP4:
		blk[0], blk[1], blk[2], blk[3] = byte(h), byte(h>>8), byte(h)^0x80, 0x7f
	case TQ1_0:
		binary.LittleEndian.PutUint16(blk[52:], h)
	case TQ2_0:
		binary.LittleEndian.PutUint16(blk[64:], h)
	default:
		binary.LittleEndian.PutUint16(blk[0:], h)
	}
}

// ixSpecialScales are binary16 scales that exercise the edges: ±NaN (quiet and
// signalling), ±Inf, ±0, subnormals, the largest finite, 1.
var ixSpecialScales = []uint16{0xfe00, 0x7c00, 0xfc00, 0x8000, 0x0000, 0x7e01, 0x7c01, 0x0001, 0x83ff, 0x7bff, 0x3c00, 0x3555}

// ixPatternRow is a deterministic row of len(ixSpecialScales) blocks of type t: xorshift32
// bytes, block i with scale ixSpecialScales[i].
func ixPatternRow(t Type) []byte {
	ts := t.TypeSize()
	raw := make([]byte, len(ixSpecialScales)*ts)
	x := uint32(2463534242) ^ uint32(t)
	for i := range raw {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		raw[i] = byte(x >> 24)
	}
	for i, h := range ixSpecialScales {
		ixSetScale(t, raw[i*ts:(i+1)*ts], h)
	}
	return raw
}

// TestDequantizeCSpot checks the float32 bits, NaNs included, of the dequantized
// ixPatternRow of each type against ggml's C. The digests are the sha256 of the
// little-endian float32 output of ggml's dequantize_row_* (ggml-quants.c at d99724f2b141,
// gcc 12 -O3 -std=gnu11, x86-64; the same with -O2) on the same bytes, computed by
// testdata/gen/ggmlrows.c (mode dequantize) on the blocks TestWriteCInputs writes;
// testdata/gen/check.sh recomputes them. They pin what ggml does with NaN scales: the C
// x * (neg ? -1.f : 1.f) flips a NaN's sign.
func TestDequantizeCSpot(t *testing.T) {
	want := map[Type]string{
		IQ2_XXS: "d3d6d3340a9d2072ddec2a89937d4a368a6cf441f446632c5743b1a98d26e79e",
		IQ2_XS:  "039275ece607e51c9cc50b2145e18271c78228168a5615b3cd79fd95d0418b70",
		IQ2_S:   "3939b0c410d4978d4e05f46c9504cf1e11b01edb04dbe345b9914dbacfbc7f31",
		IQ3_XXS: "e111684f5224ea42823642684982c8f6c20865f18b20d00a4387b2afa9a709b0",
		IQ3_S:   "262a6375b7270683564dbc84493e58045c26fd4946a56b7b27ec2a6a428e07cd",
		IQ1_S:   "aaf769b50d492d3079df5c87f500bf5e29dfbf2f2117a3d7a694ef8a01134a0f",
		IQ1_M:   "b78ade6a5fb209a26ecac9564d1c451e8e29afb2074795306b6430d2d9ae25c6",
		NVFP4:   "fea0d0490ff4dd1194338c570ffeb06461314f6bb89cf9ded30c53a5690b65b1",
		Q1_0:    "505f38728d70ceecd81f25c9a86918bd12ee4f7660e5f2648d63d61d50aa66ce",
		Q2_0:    "3d7fa3a9fb770dd827d7543f9aa83292955161b531b563edbd90069175ce1b2d",
		TQ1_0:   "cf86db55358e28438292c0aaff93fdba5a114fe7557c1f85bd01f965610e7f58",
		TQ2_0:   "e0667945fa70b805cdff417cdd9d64bd265667bdb0552a0ecea2ef14d8e014d4",
	}
	for _, typ := range ixTypes {
		raw := ixPatternRow(typ)
		got := make([]float32, len(ixSpecialScales)*typ.BlockSize())
		if err := DequantizeRow(typ, raw, got); err != nil {
			t.Fatal(err)
		}
		if err := ixCheck(typ, raw, got); err != nil {
			t.Error(err)
		}
		var buf bytes.Buffer
		if err := binary.Write(&buf, binary.LittleEndian, got); err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(buf.Bytes())
		if h := hex.EncodeToString(sum[:]); h != want[typ] {
			t.Errorf("%v: sha256 of output %s, want %s", typ, h, want[typ])
		}
	}
}

// TestDequantizeModelRapid: random raw blocks (any bytes, and scales from
// ixSpecialScales) dequantize without panic and agree with the model bit for bit.
func TestDequantizeModelRapid(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		typ := rapid.SampledFrom(ixTypes).Draw(rt, "type")
		nb := rapid.IntRange(1, 4).Draw(rt, "blocks")
		ts := typ.TypeSize()
		raw := rapid.SliceOfN(rapid.Byte(), nb*ts, nb*ts).Draw(rt, "raw")
		for i := 0; i < nb; i++ {
			if rapid.Bool().Draw(rt, fmt.Sprintf("special%d", i)) {
				ixSetScale(typ, raw[i*ts:(i+1)*ts], rapid.SampledFrom(ixSpecialScales).Draw(rt, fmt.Sprintf("scale%d", i)))
			}
		}
		got := make([]float32, nb*typ.BlockSize())
		if err := DequantizeRow(typ, raw, got); err != nil {
			rt.Fatal(err)
		}
		if err := ixCheck(typ, raw, got); err != nil {
			rt.Fatal(err)
		}
	})
}

// FuzzDequantizeIQExtra: data[0] picks the type, the rest are raw blocks (whole blocks
// only, at most 16); the result must match the model.
func FuzzDequantizeIQExtra(f *testing.F) {
	for i, typ := range ixTypes {
		ts := typ.TypeSize()
		f.Add(append([]byte{byte(i)}, make([]byte, ts)...))
		f.Add(append([]byte{byte(i)}, bytes.Repeat([]byte{0xff}, ts)...))
		f.Add(append([]byte{byte(i)}, ixPatternRow(typ)[:3*ts]...))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) == 0 {
			return
		}
		typ := ixTypes[int(data[0])%len(ixTypes)]
		raw := data[1:]
		ts := typ.TypeSize()
		nb := min(len(raw)/ts, 16)
		raw = raw[:nb*ts]
		got := make([]float32, nb*typ.BlockSize())
		if err := DequantizeRow(typ, raw, got); err != nil {
			t.Fatal(err)
		}
		if err := ixCheck(typ, raw, got); err != nil {
			t.Fatal(err)
		}
	})
}

// TestCodecsIQExtra checks the registered codecs: kernel constants as ggml-common.h and
// the reference brief's table give them, which types have a reference quantizer, length
// errors.
func TestCodecsIQExtra(t *testing.T) {
	want := map[Type][2]int{
		IQ2_XXS: {4, 16}, IQ2_XS: {4, 16}, IQ2_S: {4, 16}, IQ3_XXS: {4, 16}, IQ3_S: {4, 16},
		IQ1_S: {8, 8}, IQ1_M: {8, 8}, NVFP4: {2, 8}, Q1_0: {1, 4}, Q2_0: {1, 2},
		TQ1_0: {0, 0}, TQ2_0: {0, 0},
	}
	for _, typ := range ixTypes {
		c, err := CodecOf(typ)
		if err != nil {
			t.Fatal(err)
		}
		if got := [2]int{c.QR, c.QI}; got != want[typ] {
			t.Errorf("%v: QR, QI = %v, want %v", typ, got, want[typ])
		}
		// The i-quants have no reference quantizer in ggsim; the extra types do.
		hasRef := typ == NVFP4 || typ == Q1_0 || typ == Q2_0 || typ == TQ1_0 || typ == TQ2_0
		if c.Dequantize == nil || (c.QuantizeRef != nil) != hasRef {
			t.Errorf("%v: Dequantize set %v, QuantizeRef set %v", typ, c.Dequantize != nil, c.QuantizeRef != nil)
		}
		bs, ts := typ.BlockSize(), typ.TypeSize()
		if err := QuantizeRowRef(typ, make([]float32, bs), make([]byte, ts)); (err == nil) != hasRef {
			t.Errorf("%v: QuantizeRowRef error %v", typ, err)
		}
		if hasRef {
			if err := QuantizeRowRef(typ, make([]float32, bs), make([]byte, ts+1)); err == nil {
				t.Errorf("%v: QuantizeRowRef accepted a long destination", typ)
			}
		}
		if err := DequantizeRow(typ, make([]byte, ts-1), make([]float32, bs)); err == nil {
			t.Errorf("%v: short source accepted", typ)
		}
		if err := DequantizeRow(typ, make([]byte, ts), make([]float32, bs+1)); err == nil {
			t.Errorf("%v: partial block accepted", typ)
		}
	}
}

// TestBlockViewsIQ checks that each view's fields sit at ggml's offsets: a block whose
// byte i is i is read back through the accessors.
func TestBlockViewsIQ(t *testing.T) {
	blk := make([]byte, 110)
	for i := range blk {
		blk[i] = byte(i)
	}
	field := func(name string, got []byte, off, n int) {
		t.Helper()
		if len(got) != n || cap(got) != n || got[0] != byte(off) {
			t.Errorf("%s: len %d cap %d first %d, want len %d at offset %d", name, len(got), cap(got), got[0], n, off)
		}
	}
	eq := func(name string, got, want uint64) {
		t.Helper()
		if got != want {
			t.Errorf("%s = %#x, want %#x", name, got, want)
		}
	}
	b1 := BlockIQ2_XXS(blk[:66])
	eq("IQ2XXS.D", uint64(b1.D()), 0x0100)
	eq("IQ2XXS.Qs(31)", uint64(b1.Qs(31)), 0x4140)
	field("IQ2XXS.QsBytes", b1.QsBytes(), 2, 64)
	b2 := BlockIQ2_XS(blk[:74])
	eq("IQ2XS.Qs(0)", uint64(b2.Qs(0)), 0x0302)
	field("IQ2XS.QsBytes", b2.QsBytes(), 2, 64)
	field("IQ2XS.Scales", b2.Scales(), 66, 8)
	b3 := BlockIQ2_S(blk[:82])
	field("IQ2S.Qs", b3.Qs(), 2, 64)
	field("IQ2S.Qh", b3.Qh(), 66, 8)
	field("IQ2S.Scales", b3.Scales(), 74, 8)
	b4 := BlockIQ3_XXS(blk[:98])
	field("IQ3XXS.Qs", b4.Qs(), 2, 96)
	eq("IQ3XXS.ScalesAndSigns(7)", uint64(b4.ScalesAndSigns(7)), 0x61605f5e)
	b5 := BlockIQ3_S(blk[:110])
	field("IQ3S.Qs", b5.Qs(), 2, 64)
	field("IQ3S.Qh", b5.Qh(), 66, 8)
	field("IQ3S.Signs", b5.Signs(), 74, 32)
	field("IQ3S.Scales", b5.Scales(), 106, 4)
	b6 := BlockIQ1_S(blk[:50])
	field("IQ1S.Qs", b6.Qs(), 2, 32)
	eq("IQ1S.Qh(7)", uint64(b6.Qh(7)), 0x3130)
	b7 := BlockIQ1_M(blk[:56])
	field("IQ1M.Qs", b7.Qs(), 0, 32)
	field("IQ1M.Qh", b7.Qh(), 32, 16)
	field("IQ1M.Scales", b7.Scales(), 48, 8)
	eq("IQ1M.Sc(3)", uint64(b7.Sc(3)), 0x3736)
	// sc = 0x3130, 0x3332, 0x3534, 0x3736: top nibbles 3, 3, 3, 3.
	eq("IQ1M.D", uint64(b7.D()), 0x3333)
}

// ixVectors is one test-vector file (format in testdata/README.md / notes: magic GGQV).
type ixVectors struct {
	typ          Type
	flags        uint32
	nrows, ncols int
	in, deq      [][]float32
	q            [][]byte
}

func ixReadVectors(path string) (*ixVectors, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if len(data) < 24 || string(data[:4]) != "GGQV" {
		return nil, fmt.Errorf("%s: not a GGQV file", path)
	}
	if v := ixLE32(data, 4); v != 1 {
		return nil, fmt.Errorf("%s: version %d, want 1", path, v)
	}
	v := &ixVectors{typ: Type(ixLE32(data, 8)), flags: ixLE32(data, 12), nrows: int(ixLE32(data, 16)), ncols: int(ixLE32(data, 20))}
	rs, err := v.typ.RowSize(int64(v.ncols))
	if err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	per := 8*v.ncols + int(rs)
	if v.nrows <= 0 || len(data)-24 != v.nrows*per {
		return nil, fmt.Errorf("%s: %d bytes after the header, want %d rows of %d", path, len(data)-24, v.nrows, per)
	}
	f32s := func(b []byte) []float32 {
		out := make([]float32, len(b)/4)
		for i := range out {
			out[i] = math.Float32frombits(ixLE32(b, 4*i))
		}
		return out
	}
	off := 24
	for r := 0; r < v.nrows; r++ {
		v.in = append(v.in, f32s(data[off:off+4*v.ncols]))
		off += 4 * v.ncols
		v.q = append(v.q, data[off:off+int(rs)])
		off += int(rs)
		v.deq = append(v.deq, f32s(data[off:off+4*v.ncols]))
		off += 4 * v.ncols
	}
	return v, nil
}

// TestVectorsIQExtra: for every row of ggml's test vectors of these types, Dequantize of
// the stored bytes equals ggml's stored dequantization bit for bit (and the model too).
func TestVectorsIQExtra(t *testing.T) {
	for _, typ := range ixTypes {
		path := filepath.Join("testdata", "vectors", typ.String()+".bin")
		v, err := ixReadVectors(path)
		if err != nil {
			t.Errorf("%v: %v", typ, err)
			continue
		}
		if v.typ != typ {
			t.Errorf("%s: type %v, want %v", path, v.typ, typ)
			continue
		}
		for r := 0; r < v.nrows; r++ {
			got := make([]float32, v.ncols)
			if err := DequantizeRow(typ, v.q[r], got); err != nil {
				t.Fatalf("%s row %d: %v", path, r, err)
			}
			for k := range got {
				if math.Float32bits(got[k]) != math.Float32bits(v.deq[r][k]) {
					t.Errorf("%s row %d value %d: got %v (%#08x), ggml %v (%#08x)", path, r, k,
						got[k], math.Float32bits(got[k]), v.deq[r][k], math.Float32bits(v.deq[r][k]))
					break
				}
			}
			if err := ixCheck(typ, v.q[r], got); err != nil {
				t.Errorf("%s row %d: %v", path, r, err)
			}
			// Reference quantizer (the extra types): ggml quantized without an importance
			// matrix (flags bit 0 clear), and Q1_0/Q2_0 give the same bytes with one.
			if c, _ := CodecOf(typ); c.QuantizeRef != nil {
				q := make([]byte, len(v.q[r]))
				if err := QuantizeRowRef(typ, v.in[r], q); err != nil {
					t.Fatalf("%s row %d: %v", path, r, err)
				}
				if !bytes.Equal(q, v.q[r]) {
					t.Errorf("%s row %d: QuantizeRowRef differs from ggml's bytes (flags %#x)", path, r, v.flags)
				}
			}
		}
		t.Logf("%s: %d rows of %d values (flags %#x)", path, v.nrows, v.ncols, v.flags)
	}
}
