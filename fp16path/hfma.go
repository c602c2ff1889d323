package fp16path

import (
	"math"

	"github.com/ggsim/ggsim/f16"
	"github.com/ggsim/ggsim/sim"
)

// slowHFMA makes groupTerm use HalfDot (f16.FMA2) instead of the fast loop; the tests
// compare the two.
var slowHFMA = false

// halfDotCodes is HalfDot(unpack(codes), h) computed faster, for the path's own operands:
// weights c·2^-24 with c <= 255 and finite halves h. Each step acc = RN16(c·2^-24·h + acc)
// is computed as follows: c·h is exact in float64 (at most 8+11 bits), and so is the sum
// s = c·h·2^-24 + acc, because every term is a multiple of 2^-48 (h and acc are multiples
// of 2^-24) and |s| < 2^4 (the overflow argument of the package documentation bounds the
// partial sums by 8; a larger |s| falls back), so s needs at most 52 bits. s is then
// rounded once to binary16 (roundHalf). An exact zero (whose sign follows the IEEE rule),
// a non-finite h and a large |s| take f16.FMA. TestFastHFMA checks the two against each
// other.
func halfDotCodes(codes *[16]uint8, h []f16.Half) f16.Half2 {
	var acc [2]f16.Half
	for k := 0; k < 16; k++ {
		acc[k&1] = hfmaCode(codes[k], h[k], acc[k&1])
	}
	return f16.Half2{Lo: acc[0], Hi: acc[1]}
}

func hfmaCode(c uint8, h, acc f16.Half) f16.Half {
	hv := sim.H2F(h)
	p := float64(float64(c) * float64(hv)) // exact
	s := float64(p*0x1p-24) + float64(sim.H2F(acc))
	if s == 0 || !(math.Abs(s) < 16) || h.IsInf() || h.IsNaN() || acc.IsInf() || acc.IsNaN() {
		return f16.FMA(f16.Half(c), h, acc)
	}
	return roundHalf(s)
}

// roundHalf returns the binary16 nearest to s (ties to even), for finite nonzero s with
// 2^-48 <= |s| < 2^15: with the quantum 2^q of s's binade (q = e-10 for |s| in
// [2^e, 2^(e+1)), at least -24 for the subnormals), r = RoundToEven(|s|·2^-q) is an
// integer in [0, 2048] and the half is (q+24)·2^10 + r (bit pattern arithmetic: r = 2048
// carries into the next binade, and q = -24 gives the subnormals and 2^-14).
func roundHalf(s float64) f16.Half {
	b := math.Float64bits(s)
	sign := f16.Half(b>>48) & 0x8000
	e := int(b>>52&0x7ff) - 1023
	q := max(e-10, -24)
	r := math.RoundToEven(math.Abs(s) * math.Float64frombits(uint64(1023-q)<<52))
	return sign | f16.Half((q+24)<<10+int(r))
}
