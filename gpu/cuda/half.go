package cuda

import (
	"fmt"
	"math/bits"
)

// IEEE binary16 arithmetic, exact, as the reference for the half2 probe: the result
// of a*b + c rounded once to nearest-even, with gradual underflow (no flush to zero),
// overflow to ±Inf, and IEEE signs of zero. NaN results are the canonical 0x7fff here;
// the probe compares NaN-ness, not payloads.
//
// Every finite binary16 is M·2^E with integer M < 2^11 and E >= -24, so a*b + c is an
// integer multiple of 2^-48 below 2^81 and is computed exactly in 128-bit integers.

const halfNaN = 0x7fff

func halfIsNaN(h uint16) bool { return h&0x7c00 == 0x7c00 && h&0x3ff != 0 }
func halfIsInf(h uint16) bool { return h&0x7fff == 0x7c00 }

// halfParts returns the sign, and M and E+48 (>= 0) with |h| = M·2^(E) for finite h.
func halfParts(h uint16) (neg bool, m uint64, sh uint) {
	neg = h&0x8000 != 0
	e := uint(h>>10) & 0x1f
	m = uint64(h & 0x3ff)
	if e == 0 {
		return neg, m, 48 - 24
	}
	return neg, m | 0x400, e - 25 + 48
}

// u128 is an unsigned 128-bit integer.
type u128 struct{ hi, lo uint64 }

func shl128(x uint64, s uint) u128 {
	if s == 0 {
		return u128{0, x}
	}
	if s >= 64 {
		return u128{x << (s - 64), 0}
	}
	return u128{x >> (64 - s), x << s}
}

func add128(a, b u128) u128 {
	lo, c := bits.Add64(a.lo, b.lo, 0)
	hi, _ := bits.Add64(a.hi, b.hi, c)
	return u128{hi, lo}
}

func sub128(a, b u128) u128 { // a >= b
	lo, br := bits.Sub64(a.lo, b.lo, 0)
	hi, _ := bits.Sub64(a.hi, b.hi, br)
	return u128{hi, lo}
}

func less128(a, b u128) bool { return a.hi < b.hi || (a.hi == b.hi && a.lo < b.lo) }

func len128(a u128) uint {
	if a.hi != 0 {
		return 64 + uint(bits.Len64(a.hi))
	}
	return uint(bits.Len64(a.lo))
}

// shr128 returns a >> s (s < 128) and whether the bits shifted out are above, at or
// below one half of the last kept unit: cmp = +1, 0, -1 (0 only when exactly half).
func shr128(a u128, s uint) (q uint64, cmp int, odd bool) {
	var hi, lo u128 // quotient and remainder
	switch {
	case s == 0:
		return a.lo, -1, a.lo&1 != 0
	case s < 64:
		hi = u128{a.hi >> s, a.lo>>s | a.hi<<(64-s)}
		lo = u128{0, a.lo & (1<<s - 1)}
	case s == 64:
		hi = u128{0, a.hi}
		lo = u128{0, a.lo}
	default:
		hi = u128{0, a.hi >> (s - 64)}
		lo = u128{a.hi & (1<<(s-64) - 1), a.lo}
	}
	half := shl128(1, s-1)
	switch {
	case less128(half, lo):
		cmp = 1
	case lo == half:
		cmp = 0
	default:
		cmp = -1
	}
	return hi.lo, cmp, hi.lo&1 != 0
}

// roundHalf rounds n·2^-48 (n != 0) to binary16, nearest-even, and applies the sign.
func roundHalf(neg bool, n u128) uint16 {
	l := len128(n)
	sh := uint(24) // the quantum is 2^(sh-48): 2^-24 for subnormals and the first binade
	if l > 35 {
		sh = l - 11
	}
	q, cmp, odd := shr128(n, sh)
	if cmp > 0 || (cmp == 0 && odd) {
		q++
	}
	var h uint64
	if sh == 24 {
		h = q // below 2^-13 the encoding is q·2^-24, including the carry into 2^-14
	} else {
		h = uint64(sh-23)<<10 + q - 0x400 // a carry to q = 2^11 moves into the exponent
	}
	if h >= 0x7c00 {
		h = 0x7c00
	}
	if neg {
		h |= 0x8000
	}
	return uint16(h)
}

// halfFMA returns a*b + c rounded once.
func halfFMA(a, b, c uint16) uint16 {
	if halfIsNaN(a) || halfIsNaN(b) || halfIsNaN(c) {
		return halfNaN
	}
	pneg := (a^b)&0x8000 != 0
	cneg := c&0x8000 != 0
	if halfIsInf(a) || halfIsInf(b) {
		if a&0x7fff == 0 || b&0x7fff == 0 {
			return halfNaN // 0 * Inf
		}
		if halfIsInf(c) && cneg != pneg {
			return halfNaN // Inf - Inf
		}
		if pneg {
			return 0xfc00
		}
		return 0x7c00
	}
	if halfIsInf(c) {
		return c
	}
	_, ma, sa := halfParts(a)
	_, mb, sb := halfParts(b)
	_, mc, sc := halfParts(c)
	p := shl128(ma*mb, sa+sb-48) // (E_a+48)+(E_b+48)-48 = E_a+E_b+48
	q := shl128(mc, sc)
	var n u128
	neg := pneg
	switch {
	case pneg == cneg:
		n = add128(p, q)
	case less128(p, q):
		n, neg = sub128(q, p), cneg
	default:
		n = sub128(p, q)
	}
	if n == (u128{}) {
		// Exact zero: -0 only if both addends are zeros of negative sign (or the product
		// and c are both -0); otherwise +0 under round-to-nearest.
		if p == (u128{}) && q == (u128{}) && pneg && cneg {
			return 0x8000
		}
		return 0
	}
	return roundHalf(neg, n)
}

// halfMul returns a*b rounded once (a*b + -0 is exactly a*b, including the sign of zero).
func halfMul(a, b uint16) uint16 { return halfFMA(a, b, 0x8000) }

// halfAdd returns a+b rounded once (a*1 + b).
func halfAdd(a, b uint16) uint16 { return halfFMA(a, 0x3c00, b) }

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
