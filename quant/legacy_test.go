package quant

import (
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/ggsim/ggsim/f16"
	"pgregory.net/rapid"
)

// lgTypes are the types implemented in legacy.go.
var lgTypes = []Type{Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q8_1, IQ4_NL, MXFP4}

// lgVectorRow is one row of a vector file: input, ggml's bytes, ggml's dequantization.
type lgVectorRow struct {
	x []float32
	q []byte
	y []float32
}

// lgReadVectors parses testdata/vectors/<t>.bin (format in testdata/README.md). Any
// malformed or truncated file is an error saying what and where.
func lgReadVectors(t Type) (flags uint32, ncols int, rows []lgVectorRow, err error) {
	path := filepath.Join("testdata", "vectors", t.String()+".bin")
	data, err := os.ReadFile(path)
	if err != nil {
		return 0, 0, nil, err
	}
	if len(data) < 24 || string(data[:4]) != "GGQV" {
		return 0, 0, nil, fmt.Errorf("%s: no GGQV header", path)
	}
	u32 := func(off int) uint32 { return binary.LittleEndian.Uint32(data[off:]) }
	if v := u32(4); v != 1 {
		return 0, 0, nil, fmt.Errorf("%s: version %d, want 1", path, v)
	}
	if id := Type(u32(8)); id != t {
		return 0, 0, nil, fmt.Errorf("%s: type id %d, want %d", path, uint32(id), uint32(t))
	}
	flags, nrows, ncols := u32(12), int(u32(16)), int(u32(20))
	rs, err := t.RowSize(int64(ncols))
	if err != nil || ncols == 0 {
		return 0, 0, nil, fmt.Errorf("%s: bad ncols %d: %v", path, ncols, err)
	}
	per := 8*ncols + int(rs)
	if len(data)-24 != nrows*per {
		return 0, 0, nil, fmt.Errorf("%s: %d bytes of rows, want %d rows of %d", path, len(data)-24, nrows, per)
	}
	p := data[24:]
	f32s := func() []float32 {
		s := make([]float32, ncols)
		for i := range s {
			s[i] = math.Float32frombits(binary.LittleEndian.Uint32(p[4*i:]))
		}
		p = p[4*ncols:]
		return s
	}
	for r := 0; r < nrows; r++ {
		var row lgVectorRow
		row.x = f32s()
		row.q = p[:rs:rs]
		p = p[rs:]
		row.y = f32s()
		rows = append(rows, row)
	}
	return flags, ncols, rows, nil
}

// TestLegacyVectors checks every row of ggml's vectors for the eight types: QuantizeRowRef
// must give ggml's bytes, DequantizeRow of ggml's bytes ggml's float32 bits.
func TestLegacyVectors(t *testing.T) {
	for _, typ := range lgTypes {
		t.Run(typ.String(), func(t *testing.T) {
			flags, ncols, rows, err := lgReadVectors(typ)
			if err != nil {
				t.Fatal(err)
			}
			if flags != 0 {
				t.Fatalf("flags %#x: %v vectors must come from the reference quantizer", flags, typ)
			}
			if len(rows) < 10 {
				t.Fatalf("only %d rows", len(rows))
			}
			q := make([]byte, len(rows[0].q))
			y := make([]float32, ncols)
			for r, row := range rows {
				if err := QuantizeRowRef(typ, row.x, q); err != nil {
					t.Fatal(err)
				}
				for i := range q {
					if q[i] != row.q[i] {
						bs := typ.TypeSize()
						t.Fatalf("row %d: byte %d (block %d, offset %d) = %#02x, ggml %#02x\nggml block: % x\nours block: % x",
							r, i, i/bs, i%bs, q[i], row.q[i], row.q[i/bs*bs:(i/bs+1)*bs], q[i/bs*bs:(i/bs+1)*bs])
					}
				}
				if err := DequantizeRow(typ, row.q, y); err != nil {
					t.Fatal(err)
				}
				for i := range y {
					if math.Float32bits(y[i]) != math.Float32bits(row.y[i]) {
						t.Fatalf("row %d: value %d = %g (%#08x), ggml %g (%#08x)",
							r, i, y[i], math.Float32bits(y[i]), row.y[i], math.Float32bits(row.y[i]))
					}
				}
			}
			t.Logf("%d rows of %d values: bytes and bits equal", len(rows), ncols)
		})
	}
}

// lgHalf is the exact value of a binary16, decoded independently of package f16.
func lgHalf(h uint16) float32 {
	sign := 1.0
	if h&0x8000 != 0 {
		sign = -1
	}
	e, m := int(h>>10&0x1f), float64(h&0x3ff)
	switch {
	case e == 0x1f && m != 0:
		return f16.Half(h).ToFloat32() // NaN: payload checked in TestFP16ToFP32GGML
	case e == 0x1f:
		return float32(sign * math.Inf(1))
	case e == 0:
		return float32(sign * math.Ldexp(m, -24))
	}
	return float32(sign * math.Ldexp(1024+m, e-25))
}

// lgValue is value k of one block, computed straight from ggml-common.h's layout: an
// independent model of each type's dequantization.
func lgValue(t Type, b []byte, k int) float32 {
	nib := func(off int) int { return int(b[off+k%16]>>(4*(k/16))) & 15 }
	bit5 := func(off int) int { return int(binary.LittleEndian.Uint32(b[off:])>>k&1) << 4 }
	h := func(off int) float32 { return lgHalf(binary.LittleEndian.Uint16(b[off:])) }
	switch t {
	case Q4_0:
		return float32(nib(2)-8) * h(0)
	case Q4_1:
		return float32(float32(nib(4))*h(0)) + h(2)
	case Q5_0:
		return float32(nib(6)|bit5(2)-16) * h(0)
	case Q5_1:
		return float32(float32(nib(8)|bit5(4))*h(0)) + h(2)
	case Q8_0:
		return float32(int8(b[2+k])) * h(0)
	case Q8_1:
		return float32(int8(b[4+k])) * h(0)
	case IQ4_NL:
		return h(0) * float32([]int{-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113}[nib(2)])
	case MXFP4:
		e2m1 := []float64{0, 0.5, 1, 1.5, 2, 3, 4, 6}
		v := e2m1[nib(1)&7] * 2
		if nib(1)&8 != 0 && v != 0 { // code 8 is the int 0: +0, not -0
			v = -v
		}
		return float32(v) * float32(math.Ldexp(1, int(b[0])-128))
	}
	panic("lgValue: " + t.String())
}

// lgCheckFormula dequantizes raw and compares every value with lgValue (bits equal; a
// NaN must be a NaN).
func lgCheckFormula(t interface{ Fatalf(string, ...any) }, typ Type, raw []byte) {
	bs, ts := typ.BlockSize(), typ.TypeSize()
	y := make([]float32, len(raw)/ts*bs)
	if err := DequantizeRow(typ, raw, y); err != nil {
		t.Fatalf("%v", err)
	}
	for i := range y {
		want := lgValue(typ, raw[i/bs*ts:(i/bs+1)*ts], i%bs)
		if math.Float32bits(y[i]) != math.Float32bits(want) && !(y[i] != y[i] && want != want) {
			t.Fatalf("%v value %d: %g (%#08x), formula %g (%#08x), block % x",
				typ, i, y[i], math.Float32bits(y[i]), want, math.Float32bits(want), raw[i/bs*ts:(i/bs+1)*ts])
		}
	}
}

// lgSpecialHalves are scale bit patterns every type's raw-block test tries: NaN, ±Inf,
// ±0, subnormals, the largest finite.
var lgSpecialHalves = []uint16{0x7e00, 0xfe01, 0x7c00, 0xfc00, 0x0000, 0x8000, 0x0001, 0x83ff, 0x7bff, 0xfbff, 0x3c00}

// TestLegacyRawBlocks decodes random raw blocks (any bit pattern is a valid block) and
// blocks with special scales, and checks them against the per-value formula.
func TestLegacyRawBlocks(t *testing.T) {
	for _, typ := range lgTypes {
		t.Run(typ.String(), func(t *testing.T) {
			rapid.Check(t, func(rt *rapid.T) {
				nb := rapid.IntRange(1, 4).Draw(rt, "blocks")
				raw := rapid.SliceOfN(rapid.Byte(), nb*typ.TypeSize(), nb*typ.TypeSize()).Draw(rt, "raw")
				lgCheckFormula(rt, typ, raw)
			})
			blk := make([]byte, typ.TypeSize())
			for i := range blk {
				blk[i] = byte(i*37 + 11)
			}
			if typ == MXFP4 {
				for e := 0; e < 256; e++ {
					blk[0] = byte(e)
					lgCheckFormula(t, typ, blk)
				}
				return
			}
			for _, d := range lgSpecialHalves {
				for _, m := range lgSpecialHalves {
					binary.LittleEndian.PutUint16(blk, d)
					if typ == Q4_1 || typ == Q5_1 || typ == Q8_1 {
						binary.LittleEndian.PutUint16(blk[2:], m)
					}
					lgCheckFormula(t, typ, blk)
				}
			}
		})
	}
}

// lgRowGen draws rows of nb blocks of 32: each block at its own scale in [1e-2, 1e3] with
// max |x| at least that scale/2 (so every block scale is a normal binary16), in one of
// several shapes.
func lgRowGen(nb int) *rapid.Generator[[]float32] {
	return rapid.Custom(func(rt *rapid.T) []float32 {
		x := make([]float32, nb*32)
		for b := 0; b < nb; b++ {
			scale := float32(math.Pow(10, rapid.Float64Range(-2, 3).Draw(rt, "log10scale")))
			kind := rapid.IntRange(0, 4).Draw(rt, "kind")
			blk := x[b*32 : (b+1)*32]
			for i := range blk {
				switch kind {
				case 0: // uniform with an outlier, the golden files' distribution
					blk[i] = rapid.Float32Range(-1, 1).Draw(rt, "v") * scale
					if i == 7 {
						blk[i] *= 8
					}
				case 1: // one sign
					blk[i] = rapid.Float32Range(0.1, 1).Draw(rt, "v") * scale
				case 2: // ramp with offset
					blk[i] = (float32(i)/31 + 0.25) * scale
				case 3: // alternating
					blk[i] = rapid.Float32Range(0.5, 1).Draw(rt, "v") * scale
					if i%2 == 1 {
						blk[i] = -blk[i]
					}
				case 4: // one-hot
					if i == 13 {
						blk[i] = -scale
					}
				}
			}
			blk[rapid.IntRange(0, 31).Draw(rt, "big")] = scale
		}
		return x
	})
}

// lgBound returns the stated bound of |dequantize(quantize(x))[k] - x[k]| for value k of a
// block x of typ (the doc comments of the quantizers state them), given the block's bytes.
func lgBound(typ Type, x []float32, blk []byte, k int) float64 {
	var amax, mn, mx float64 = 0, math.Inf(1), math.Inf(-1)
	for _, v := range x {
		amax = math.Max(amax, math.Abs(float64(v)))
		mn = math.Min(mn, float64(v))
		mx = math.Max(mx, float64(v))
	}
	tiny := math.Abs(float64(x[k])) * 0x1p-22
	switch typ {
	case Q4_0:
		return 1.01*amax/8 + tiny
	case Q5_0:
		return 1.01*amax/16 + tiny
	case Q8_0, Q8_1:
		return 0.57*amax/127 + tiny
	case Q4_1:
		return 0.51*(mx-mn)/15 + math.Abs(mn)*0x1p-10 + tiny
	case Q5_1:
		return 0.52*(mx-mn)/31 + math.Abs(mn)*0x1p-10 + tiny
	case MXFP4:
		d := math.Ldexp(1, int(blk[0])-128)
		if math.Abs(float64(x[k])) <= 12*d {
			return 2 * d
		}
		return 4 * d
	case IQ4_NL:
		d := float64(lgHalf(binary.LittleEndian.Uint16(blk))) // may be negative
		lo, hi := math.Min(-127*d, 113*d), math.Max(-127*d, 113*d)
		v := float64(x[k])
		over := math.Max(0, math.Max(v-hi, lo-v))
		return 12.2*math.Abs(d) + over + tiny
	}
	panic("lgBound")
}

// TestLegacyRoundTrip checks dequantize(quantize(x)) against the stated bounds, and for
// Q8_1 that s is fp16(d*sum(qs)) within its rounding.
func TestLegacyRoundTrip(t *testing.T) {
	for _, typ := range lgTypes {
		t.Run(typ.String(), func(t *testing.T) {
			rapid.Check(t, func(rt *rapid.T) {
				nb := rapid.IntRange(1, 3).Draw(rt, "blocks")
				x := lgRowGen(nb).Draw(rt, "x")
				ts := typ.TypeSize()
				q := make([]byte, nb*ts)
				if err := QuantizeRowRef(typ, x, q); err != nil {
					rt.Fatalf("%v", err)
				}
				y := make([]float32, len(x))
				if err := DequantizeRow(typ, q, y); err != nil {
					rt.Fatalf("%v", err)
				}
				for k := range x {
					blk := q[k/32*ts : (k/32+1)*ts]
					xb := x[k/32*32 : (k/32+1)*32]
					err := math.Abs(float64(y[k]) - float64(x[k]))
					if b := lgBound(typ, xb, blk, k%32); !(err <= b) {
						rt.Fatalf("value %d: x %g y %g |error| %g > bound %g", k, x[k], y[k], err, b)
					}
				}
				if typ == Q8_1 {
					for i := 0; i < nb; i++ {
						b := Q8_1Block(q, i)
						sum := 0
						for j := 0; j < QK8_1; j++ {
							sum += int(b.Q(j))
						}
						d := float64(b.D().ToFloat32())
						s := float64(b.S().ToFloat32())
						if e := math.Abs(s - float64(sum)*d); e > math.Abs(float64(sum)*d)*0x1p-10*1.001 {
							rt.Fatalf("block %d: s %g, sum %d * d %g = %g", i, s, sum, d, float64(sum)*d)
						}
					}
				}
			})
		})
	}
}

// lgSpecialRows are inputs outside the normal range: ggml's C is undefined for some of them
// (see testdata/README.md); ggsim must not panic and must be deterministic.
func lgSpecialRows() map[string][]float32 {
	mk := func(f func(i int) float32) []float32 {
		x := make([]float32, 64)
		for i := range x {
			x[i] = f(i)
		}
		return x
	}
	nan := float32(math.NaN())
	inf := float32(math.Inf(1))
	return map[string][]float32{
		"zero":       mk(func(int) float32 { return 0 }),
		"negzero":    mk(func(int) float32 { return float32(math.Copysign(0, -1)) }),
		"const":      mk(func(int) float32 { return 3 }),
		"constneg":   mk(func(int) float32 { return -3 }),
		"allnan":     mk(func(int) float32 { return nan }),
		"somenan":    mk(func(i int) float32 { return map[bool]float32{true: nan, false: float32(i)}[i%5 == 0] }),
		"inf":        mk(func(i int) float32 { return map[bool]float32{true: inf, false: -inf}[i%2 == 0] }),
		"someinf":    mk(func(i int) float32 { return map[bool]float32{true: -inf, false: 1}[i == 9] }),
		"denormal":   mk(func(i int) float32 { return math.Float32frombits(uint32(i*7 + 1)) }),
		"minnormal":  mk(func(i int) float32 { return math.Float32frombits(0x00800000 + uint32(i)) }),
		"maxfloat":   mk(func(i int) float32 { return math.MaxFloat32 * float32(1-2*(i%2)) }),
		"halfmax":    mk(func(i int) float32 { return 65504 }),
		"overhalf":   mk(func(i int) float32 { return 70000 * float32(i%3-1) }),
		"tinyhalf":   mk(func(i int) float32 { return 1e-8 * float32(i) }),
		"hugerange":  mk(func(i int) float32 { return map[bool]float32{true: -3e38, false: 3e38}[i%2 == 0] }),
		"signedzero": mk(func(i int) float32 { return float32(math.Copysign(0, float64(i%2*2-1))) }),
	}
}

// TestLegacySpecialRows quantizes and dequantizes the special rows: no panic, the same
// bytes twice, and exact zeros for the all-zero row.
func TestLegacySpecialRows(t *testing.T) {
	for _, typ := range lgTypes {
		for name, x := range lgSpecialRows() {
			rs, _ := typ.RowSize(int64(len(x)))
			q1, q2 := make([]byte, rs), make([]byte, rs)
			if err := QuantizeRowRef(typ, x, q1); err != nil {
				t.Fatalf("%v %s: %v", typ, name, err)
			}
			if err := QuantizeRowRef(typ, x, q2); err != nil {
				t.Fatalf("%v %s: %v", typ, name, err)
			}
			if string(q1) != string(q2) {
				t.Fatalf("%v %s: quantization is not deterministic", typ, name)
			}
			y := make([]float32, len(x))
			if err := DequantizeRow(typ, q1, y); err != nil {
				t.Fatalf("%v %s: %v", typ, name, err)
			}
			lgCheckFormula(t, typ, q1)
			if name == "zero" {
				for i, v := range y {
					if v != 0 {
						t.Fatalf("%v zero row: value %d = %g", typ, i, v)
					}
				}
			}
		}
	}
}

// TestLegacyRowErrors checks that bad lengths are errors, not panics.
func TestLegacyRowErrors(t *testing.T) {
	for _, typ := range lgTypes {
		ts := typ.TypeSize()
		if err := DequantizeRow(typ, make([]byte, ts-1), make([]float32, 32)); err == nil {
			t.Errorf("%v: short source accepted", typ)
		}
		if err := DequantizeRow(typ, make([]byte, ts), make([]float32, 31)); err == nil {
			t.Errorf("%v: 31 values accepted", typ)
		}
		if err := QuantizeRowRef(typ, make([]float32, 32), make([]byte, ts+1)); err == nil {
			t.Errorf("%v: long destination accepted", typ)
		}
	}
}

// TestLegacyCodecs checks the registered kernel constants against ggml-common.h.
func TestLegacyCodecs(t *testing.T) {
	want := map[Type][2]int{
		Q4_0: {2, 4}, Q4_1: {2, 4}, Q5_0: {2, 4}, Q5_1: {2, 4},
		Q8_0: {1, 8}, Q8_1: {1, 8}, IQ4_NL: {2, 4}, MXFP4: {2, 4},
	}
	for typ, qrqi := range want {
		c, err := CodecOf(typ)
		if err != nil {
			t.Fatal(err)
		}
		if c.QR != qrqi[0] || c.QI != qrqi[1] || c.Dequantize == nil || c.QuantizeRef == nil {
			t.Errorf("%v: QR %d QI %d (want %v), functions %v %v", typ, c.QR, c.QI, qrqi,
				c.Dequantize != nil, c.QuantizeRef != nil)
		}
		if typ.BlockSize() != 32 {
			t.Errorf("%v: block size %d", typ, typ.BlockSize())
		}
	}
	sizes := map[Type]int{Q4_0: sizeQ4_0, Q4_1: sizeQ4_1, Q5_0: sizeQ5_0, Q5_1: sizeQ5_1,
		Q8_0: sizeQ8_0, Q8_1: sizeQ8_1, IQ4_NL: sizeIQ4_NL, MXFP4: sizeMXFP4}
	for typ, s := range sizes {
		if typ.TypeSize() != s {
			t.Errorf("%v: size %d, types.go says %d", typ, s, typ.TypeSize())
		}
	}
}

// TestLegacyBlockViews checks each accessor's offset on a row of two blocks whose bytes
// are their own indices.
func TestLegacyBlockViews(t *testing.T) {
	row := make([]byte, 2*36)
	for i := range row {
		row[i] = byte(i)
	}
	h := func(off int) f16.Half { return f16.Half(uint16(off) | uint16(off+1)<<8) }
	w := func(off int) uint32 { return binary.LittleEndian.Uint32(row[off:]) }
	eq := func(name string, got, want any) {
		t.Helper()
		if got != want {
			t.Errorf("%s = %v, want %v", name, got, want)
		}
	}
	{
		b := Q4_0Block(row, 1)
		eq("q4_0 D", b.D(), h(18))
		eq("q4_0 Qs", &b.Qs()[0], &row[20])
		eq("q4_0 len", len(b.Qs()), 16)
		eq("q4_0 cap", cap(b), 18)
	}
	{
		b := Q4_1Block(row, 1)
		eq("q4_1 D", b.D(), h(20))
		eq("q4_1 M", b.M(), h(22))
		eq("q4_1 DM", b.DM(), w(20))
		eq("q4_1 Qs", &b.Qs()[15], &row[39])
	}
	{
		b := Q5_0Block(row, 1)
		eq("q5_0 D", b.D(), h(22))
		eq("q5_0 Qh", b.Qh(), w(24))
		eq("q5_0 Qs", &b.Qs()[0], &row[28])
	}
	{
		b := Q5_1Block(row, 1)
		eq("q5_1 D", b.D(), h(24))
		eq("q5_1 M", b.M(), h(26))
		eq("q5_1 Qh", b.Qh(), w(28))
		eq("q5_1 Qs", &b.Qs()[15], &row[47])
	}
	{
		b := Q8_0Block(row, 1)
		eq("q8_0 D", b.D(), h(34))
		eq("q8_0 Q", b.Q(31), int8(row[67]))
		eq("q8_0 Qs", &b.Qs()[0], &row[36])
	}
	{
		b := Q8_1Block(row, 0)
		eq("q8_1 D", b.D(), h(0))
		eq("q8_1 S", b.S(), h(2))
		eq("q8_1 DS", b.DS(), w(0))
		eq("q8_1 Q", b.Q(0), int8(4))
		eq("q8_1 Qs", len(b.Qs()), 32)
	}
	{
		b := IQ4_NLBlock(row, 1)
		eq("iq4_nl D", b.D(), h(18))
		eq("iq4_nl Qs", &b.Qs()[0], &row[20])
	}
	{
		b := MXFP4Block(row, 1)
		eq("mxfp4 E", b.E(), uint8(17))
		eq("mxfp4 Qs", &b.Qs()[15], &row[33])
		eq("mxfp4 cap", cap(b), 17)
	}
	for _, f := range []func(){
		func() { Q4_0Block(row, 4) },
		func() { Q8_1Block(row, 2) },
		func() { MXFP4Block(row, -1) },
	} {
		func() {
			defer func() {
				if r := recover(); r == nil {
					t.Error("block outside the row did not panic")
				}
			}()
			f()
		}()
	}
}

// FuzzDequantize decodes arbitrary bytes as blocks of the legacy types: DequantizeRow must
// accept whole blocks, reject a ragged length with an error, never panic, and agree with
// the per-value formula. The first byte picks the type.
func FuzzDequantize(f *testing.F) {
	f.Add([]byte{0})
	f.Add(append([]byte{7}, make([]byte, 17)...))
	ff := make([]byte, 1+36*2)
	for i := range ff {
		ff[i] = 0xff
	}
	f.Add(ff)
	for i, typ := range lgTypes {
		if _, _, rows, err := lgReadVectors(typ); err == nil && len(rows) > 0 {
			f.Add(append([]byte{byte(i)}, rows[len(rows)/2].q...))
			f.Add(append([]byte{byte(i)}, rows[0].q[:typ.TypeSize()+3]...))
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) == 0 {
			return
		}
		typ := lgTypes[int(data[0])%len(lgTypes)]
		raw := data[1:]
		ts := typ.TypeSize()
		n := len(raw) / ts
		if len(raw)%ts != 0 {
			if err := DequantizeRow(typ, raw, make([]float32, n*32)); err == nil {
				t.Fatalf("%v: %d bytes accepted for %d values", typ, len(raw), n*32)
			}
		}
		lgCheckFormula(t, typ, raw[:n*ts])
	})
}
