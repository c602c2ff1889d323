package cuda

import (
	"fmt"

	"github.com/ggsim/ggsim/f16"
)

// The reference for the half2 probe is package f16 (exact IEEE binary16 arithmetic:
// one rounding to nearest-even, subnormals kept, overflow to ±Inf, canonical NaN 0x7fff,
// tested against math/big), on raw bits here because the probe moves packed uint32s. The
// probe compares NaN-ness, not payloads.

func halfIsNaN(h uint16) bool { return f16.Half(h).IsNaN() }

// halfFMA returns a*b + c rounded once (f16.FMA).
func halfFMA(a, b, c uint16) uint16 { return uint16(f16.FMA(f16.Half(a), f16.Half(b), f16.Half(c))) }

// halfMul returns a*b rounded once (f16.Mul).
func halfMul(a, b uint16) uint16 { return uint16(f16.Mul(f16.Half(a), f16.Half(b))) }

// halfAdd returns a+b rounded once (f16.Add).
func halfAdd(a, b uint16) uint16 { return uint16(f16.Add(f16.Half(a), f16.Half(b))) }

// half2 applies op to both halves of packed operands (low half = element 0).
func half2(op func(a, b, c uint16) uint16, a, b, c uint32) uint32 {
	lo := op(uint16(a), uint16(b), uint16(c))
	hi := op(uint16(a>>16), uint16(b>>16), uint16(c>>16))
	return uint32(hi)<<16 | uint32(lo)
}

// sameHalf reports whether two results agree: equal bits, or both NaN.
func sameHalf(x, y uint16) bool { return x == y || (halfIsNaN(x) && halfIsNaN(y)) }

// Dp4aRef is dp4a.s32.s32: c + Σ_k int8(a byte k)·int8(b byte k), with int32 wrap-around.
func Dp4aRef(a, b, c int32) int32 {
	s := c
	for k := 0; k < 4; k++ {
		s += int32(int8(a>>(8*k))) * int32(int8(b>>(8*k)))
	}
	return s
}

// Half2Sweep returns packed half2 operands (a, b, c) for the half2 probe, the low and
// high halves carrying different cases:
//   - every binary16 subnormal of both signs as a, against 32 multipliers b (±0, ±1,
//     ±0.5, ±2, ±2^-10, ±2^10, ±2^-14, ±max, ±Inf, NaN and random values) with c a
//     subnormal or zero, so that products, sums and fmas land on and across the
//     subnormal range;
//   - near cancellations: a + b with b = -a ± a few units in the last place;
//   - n random bit patterns of all three operands (every encoding, NaN and Inf too)
//     from seed.
func Half2Sweep(n int, seed uint64) (a, b, c []uint32) {
	s := seed | 1
	next := func() uint64 { s ^= s << 13; s ^= s >> 7; s ^= s << 17; return s }
	var ha, hb, hc []uint16
	push := func(x, y, z uint16) { ha, hb, hc = append(ha, x), append(hb, y), append(hc, z) }
	mults := []uint16{0x0000, 0x3c00, 0x3800, 0x4000, 0x1400, 0x6400, 0x0400, 0x7bff, 0x7c00, 0x7e00}
	for len(mults) < 16 {
		mults = append(mults, uint16(next())&0x7fff)
	}
	for sub := uint16(1); sub < 0x400; sub++ {
		for _, m := range mults {
			for _, sg := range []uint16{0, 0x8000} {
				push(sub|sg, m^uint16(next()&0x8000), uint16(next())&0x83ff)
			}
		}
	}
	for i := 0; i < 1<<14; i++ {
		x := uint16(next())
		d := uint16(next() % 5)
		push(x, (x^0x8000)+d-2, uint16(next()))
	}
	for i := 0; i < n; i++ {
		r := next()
		push(uint16(r), uint16(r>>16), uint16(r>>32))
	}
	if len(ha)%2 == 1 {
		push(0x3c00, 0x3c00, 0x3c00)
	}
	a, b, c = make([]uint32, len(ha)/2), make([]uint32, len(ha)/2), make([]uint32, len(ha)/2)
	for i := range a {
		// Element 0 from the first half of the list, element 1 from the second half.
		j := i + len(a)
		a[i] = uint32(ha[j])<<16 | uint32(ha[i])
		b[i] = uint32(hb[j])<<16 | uint32(hb[i])
		c[i] = uint32(hc[j])<<16 | uint32(hc[i])
	}
	return a, b, c
}

// HalfReport compares a device's half2 results with the exact reference.
type HalfReport struct {
	Op       string
	N        int            // scalar results compared (two per half2)
	Differ   int            // results that differ (bits, or NaN-ness)
	NaNBits  map[uint16]int // the device's NaN encodings and how often each appeared
	Examples [][4]uint16    // up to 8 of (a, b, c, device) that differ
}

func (r HalfReport) String() string {
	return fmt.Sprintf("%s: %d results, %d differ from exact IEEE binary16 (RNE, subnormals kept); NaN encodings seen %v",
		r.Op, r.N, r.Differ, r.NaNBits)
}

// CompareHalf2 checks got (one of the probe's outputs) against op on every element.
func CompareHalf2(name string, op func(a, b, c uint16) uint16, a, b, c, got []uint32) HalfReport {
	rep := HalfReport{Op: name, NaNBits: map[uint16]int{}}
	for i := range got {
		for sh := 0; sh < 32; sh += 16 {
			x, y, z := uint16(a[i]>>sh), uint16(b[i]>>sh), uint16(c[i]>>sh)
			g := uint16(got[i] >> sh)
			rep.N++
			if halfIsNaN(g) {
				rep.NaNBits[g]++
			}
			if !sameHalf(g, op(x, y, z)) {
				rep.Differ++
				if len(rep.Examples) < 8 {
					rep.Examples = append(rep.Examples, [4]uint16{x, y, z, g})
				}
			}
		}
	}
	return rep
}

// HalfOps are the reference operations of the half2 probe's three outputs.
var HalfOps = []struct {
	Name string
	Op   func(a, b, c uint16) uint16
}{
	{"add", func(a, b, _ uint16) uint16 { return halfAdd(a, b) }},
	{"mul", func(a, b, _ uint16) uint16 { return halfMul(a, b) }},
	{"fma", halfFMA},
}
