package sim

import (
	"math"
	"math/rand/v2"
	"testing"
)

// fmaBenchInputs returns n operand triples for BenchmarkFMA. kind "random": float32
// operands with exponents in [-30, 30) and random significands (the float64 sum is almost
// never a float32 midpoint). kind "midpoint": operands with short significands, like the
// products of halves in the MMQ kernels, kept only where the float64 sum lies exactly on a
// float32 rounding midpoint; about half of them are exact ties, the others have a nonzero
// rounding error in float64.
func fmaBenchInputs(kind string, n int) (a, b, c []float32) {
	r := rand.New(rand.NewPCG(1, 2))
	short := func(bits int) float32 { // a float32 with a significand of at most bits bits
		m := uint32(r.IntN(1<<(bits-1))) | 1<<(bits-1)
		return float32(math.Ldexp(float64(m), r.IntN(16)-8-bits)) * float32(1-2*r.IntN(2))
	}
	for len(a) < n {
		var x, y, z float32
		switch kind {
		case "random":
			x = math.Float32frombits(r.Uint32()&0x807fffff | uint32(127-30+r.IntN(60))<<23)
			y = math.Float32frombits(r.Uint32()&0x807fffff | uint32(127-30+r.IntN(60))<<23)
			z = math.Float32frombits(r.Uint32()&0x807fffff | uint32(127-30+r.IntN(60))<<23)
		case "midpoint":
			x, y = short(11), short(11+r.IntN(14))
			z = short(24)
			s := float64(float64(x)*float64(y)) + float64(z)
			if math.Float64bits(s)&0x1fffffff != 0x10000000 {
				continue
			}
		default:
			panic(kind)
		}
		a, b, c = append(a, x), append(b, y), append(c, z)
	}
	return
}

var fmaSink float32

// BenchmarkFMA measures FMA per call on 4096 fixed triples (fmaBenchInputs).
func BenchmarkFMA(b *testing.B) {
	for _, kind := range []string{"random", "midpoint"} {
		b.Run("kind="+kind, func(b *testing.B) {
			const n = 4096
			xs, ys, zs := fmaBenchInputs(kind, n)
			var acc float32
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				j := i & (n - 1)
				acc += FMA(xs[j], ys[j], zs[j])
			}
			fmaSink = acc
		})
	}
}
