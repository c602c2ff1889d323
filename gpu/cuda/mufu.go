package cuda

import (
	"fmt"
	"math"
)

// RcpTableLen is the number of float32 inputs in [1, 2): 2^23.
const RcpTableLen = 1 << 23

// RcpRef returns the bits of the reference reciprocal of the float32 with bits x, as the
// shared MUFU table defines it: 1/x computed in float64, then rounded once to float32.
func RcpRef(x uint32) uint32 {
	return math.Float32bits(float32(1 / float64(math.Float32frombits(x))))
}

// DeltaCounts counts the deltas of a MUFU.RCP table: hardware bits minus RcpRef bits.
type DeltaCounts struct{ Minus, Zero, Plus int }

func (c DeltaCounts) String() string {
	return fmt.Sprintf("delta -1: %d, 0: %d, +1: %d", c.Minus, c.Zero, c.Plus)
}

// EncodeRcpDelta2 encodes the hardware results for the 2^23 inputs 0x3f800000|i of [1,2)
// in the shared table format (shared/mufu/README.md): delta = got - RcpRef in {-1,0,+1},
// stored as delta+1 in 2 bits, input i in byte i/4 at bit offset 2*(i%4). It returns
// an error naming the first input whose delta is outside {-1, 0, +1}.
func EncodeRcpDelta2(got []uint32) ([]byte, DeltaCounts, error) {
	var c DeltaCounts
	if len(got) != RcpTableLen {
		return nil, c, fmt.Errorf("cuda: EncodeRcpDelta2: %d results, want %d", len(got), RcpTableLen)
	}
	tab := make([]byte, RcpTableLen/4)
	for i, g := range got {
		x := 0x3f800000 | uint32(i)
		d := int64(g) - int64(RcpRef(x))
		switch d {
		case -1:
			c.Minus++
		case 0:
			c.Zero++
		case 1:
			c.Plus++
		default:
			return nil, c, fmt.Errorf("cuda: rcp(%#08x) = %#08x is %d ulp from the reference %#08x", x, g, d, RcpRef(x))
		}
		tab[i/4] |= byte(d+1) << (2 * (i % 4))
	}
	return tab, c, nil
}

// DecodeRcpDelta2 returns the hardware results the table holds for [1, 2).
func DecodeRcpDelta2(tab []byte) ([]uint32, DeltaCounts, error) {
	var c DeltaCounts
	if len(tab) != RcpTableLen/4 {
		return nil, c, fmt.Errorf("cuda: DecodeRcpDelta2: table of %d bytes, want %d", len(tab), RcpTableLen/4)
	}
	out := make([]uint32, RcpTableLen)
	for i := range out {
		v := (tab[i/4] >> (2 * (i % 4))) & 3
		switch v {
		case 0:
			c.Minus++
		case 1:
			c.Zero++
		case 2:
			c.Plus++
		default:
			return nil, c, fmt.Errorf("cuda: table entry %d holds the invalid code 3", i)
		}
		out[i] = uint32(int64(RcpRef(0x3f800000|uint32(i))) + int64(v) - 1)
	}
	return out, c, nil
}

// CompareDelta2 compares two tables entry by entry and returns the number of inputs
// whose 2-bit codes differ and the first such input (-1 if none).
func CompareDelta2(a, b []byte) (differ, first int, err error) {
	if len(a) != len(b) {
		return 0, -1, fmt.Errorf("cuda: CompareDelta2: tables of %d and %d bytes", len(a), len(b))
	}
	first = -1
	for i := range a {
		if a[i] == b[i] {
			continue
		}
		for k := 0; k < 4; k++ {
			if (a[i]>>(2*k))&3 != (b[i]>>(2*k))&3 {
				differ++
				if first < 0 {
					first = 4*i + k
				}
			}
		}
	}
	return differ, first, nil
}

// Binade names one probed binade: every float32 whose bits are Base|i, i < 2^23.
type Binade struct {
	Name string
	Base uint32 // sign and exponent bits; the mantissa bits must be zero
}

// RcpBinades are the binades the MUFU probe measures besides [1, 2): the edges of the
// exponent range, both signs, and the subnormals (exponent field 0).
var RcpBinades = []Binade{
	{"[-2,-1)", 0xbf800000},
	{"2^-126 (min normal)", 0x00800000},
	{"2^-125", 0x01000000},
	{"2^-64", 0x1f800000},
	{"2^-2", 0x3e800000},
	{"2^-1", 0x3f000000},
	{"2^1", 0x40000000},
	{"2^2", 0x40800000},
	{"2^64", 0x5f800000},
	{"2^125", 0x7e000000},
	{"2^126", 0x7e800000},
	{"2^127 (max)", 0x7f000000},
	{"-2^-126", 0x80800000},
	{"-2^127", 0xff000000},
	{"subnormal", 0x00000000},
	{"-subnormal", 0x80000000},
}

// RcpSpecials are single inputs probed besides the binades: ±0, ±Inf, NaNs, the
// smallest and largest subnormals and normals, and 1, 2, 0.5.
var RcpSpecials = []uint32{
	0x00000000, 0x80000000, 0x7f800000, 0xff800000, 0x7fc00000, 0xffc00000, 0x7f800001, 0x7fffffff,
	0x00000001, 0x80000001, 0x007fffff, 0x807fffff, 0x00800000, 0x80800000, 0x7f7fffff, 0xff7fffff,
	0x3f800000, 0x40000000, 0x3f000000, 0x3fffffff,
}

// RcpScaled is the hypothesis the binade probe tests: rcp(m·2^e) = rcp(m)·2^-e with the
// sign carried, i.e. the [1,2) result r1 for the same mantissa scaled exactly by 2^-e
// and rounded once to float32 (results below 2^-126 become subnormal or zero here, so
// a flush to zero by the hardware shows as a difference). For a subnormal input the
// hypothesis is the FTZ one: the input is read as ±0 and the result is ±Inf.
func RcpScaled(base uint32, r1 uint32) uint32 {
	sign := base & 0x80000000
	e := int((base>>23)&0xff) - 127
	if e == -127 {
		return sign | 0x7f800000
	}
	v := math.Ldexp(float64(math.Float32frombits(r1)), -e)
	return sign | math.Float32bits(float32(v))
}

// BinadeReport compares a binade's results with RcpScaled.
type BinadeReport struct {
	Binade
	N        int         // inputs
	Differ   int         // results whose bits differ from the hypothesis
	Flushed  int         // of those, results ±0 where the hypothesis is a nonzero subnormal
	NaN      int         // results that are NaN
	Examples [][3]uint32 // up to 8 of (input, result, hypothesis) that differ
}

func (r BinadeReport) String() string {
	return fmt.Sprintf("%-20s base %#08x: %d inputs, %d differ from rcp([1,2))*2^-e (%d of them flushed to zero), %d NaN",
		r.Name, r.Base, r.N, r.Differ, r.Flushed, r.NaN)
}

// CompareBinade compares got (results for inputs b.Base|i) with RcpScaled of r1 (the
// [1, 2) results).
func CompareBinade(b Binade, got, r1 []uint32) (BinadeReport, error) {
	rep := BinadeReport{Binade: b, N: len(got)}
	if len(got) != RcpTableLen || len(r1) != RcpTableLen {
		return rep, fmt.Errorf("cuda: CompareBinade %s: %d and %d results, want %d", b.Name, len(got), len(r1), RcpTableLen)
	}
	for i, g := range got {
		if g&0x7fffffff > 0x7f800000 {
			rep.NaN++
		}
		want := RcpScaled(b.Base, r1[i])
		if g == want {
			continue
		}
		rep.Differ++
		if g&0x7fffffff == 0 && want&0x7fffffff != 0 && want&0x7f800000 == 0 {
			rep.Flushed++
		}
		if len(rep.Examples) < 8 {
			rep.Examples = append(rep.Examples, [3]uint32{b.Base | uint32(i), g, want})
		}
	}
	return rep, nil
}
