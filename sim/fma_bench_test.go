package sim

import (
	"math"
	"math/rand/v2"
	"testing"
)

// fmaBenchInputs returns n operand triples for BenchmarkFMA. kind "random": float32
// operands with exponents in [-30, 30) and random significands (the float64 sum is almost
// never a float32 midpoint). kind "midpoint": triples whose float64 sum lies exactly on a
// float32 rounding midpoint, alternately exact ties (short significands, like the products
// of halves in the MMQ kernels) and inexact sums (a nonzero TwoSum error).
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
			// Alternately an exact tie (short significands) and an inexact sum rounded onto
			// a midpoint (a*b = odd·h·(1-2^-2j) next to c, h half an ulp of c).
			want := len(a)%2 == 1
			if !want {
				x, y = short(11), short(11+r.IntN(14))
				z = short(24)
			} else {
				var ok bool
				j := 16 + r.IntN(8)
				x, y, z, ok = midpointTriple(r.Uint32(), r.IntN(60)-30, r.IntN(2) == 0, 2*r.IntN(8)+1, 1, j, -1, j, r.IntN(20)-10)
				if !ok {
					continue
				}
			}
			p := float64(float64(x) * float64(y))
			s := float64(p + float64(z))
			if math.Float64bits(s)&0x1fffffff != 0x10000000 {
				continue
			}
			bb := float64(s - p)
			if exact := float64(p-float64(s-bb))+float64(float64(z)-bb) == 0; exact == want {
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
