package oracle

import (
	"math"
)

// Compare holds the comparison of a result with the bits it should have and with the
// fp64 truth.
type Compare struct {
	N         int `json:"n"`         // elements compared
	Differing int `json:"differing"` // elements whose float32 bits differ from the expected bits
	First     int `json:"first"`     // index of the first differing element, -1 if none
	// MaxULP is the largest distance in units in the last place between got and want
	// (over finite pairs; a NaN/Inf mismatch counts as math.MaxInt64).
	MaxULP int64 `json:"max_ulp"`
}

// BitExact reports whether every element had the expected bits.
func (c Compare) BitExact() bool { return c.Differing == 0 }

// CompareBits compares got with want element by element on math.Float32bits.
// It panics if the lengths differ (a programming error).
func CompareBits(got, want []float32) Compare {
	if len(got) != len(want) {
		panic("oracle: CompareBits of slices of different lengths")
	}
	c := Compare{N: len(got), First: -1}
	for i := range got {
		if math.Float32bits(got[i]) == math.Float32bits(want[i]) {
			continue
		}
		c.Differing++
		if c.First < 0 {
			c.First = i
		}
		if u := ULPDistance(got[i], want[i]); u > c.MaxULP {
			c.MaxULP = u
		}
	}
	return c
}

// ULPDistance is the number of float32 values between a and b (0 if equal bits; ±0 are
// one apart). It is math.MaxInt64 if exactly one is NaN or the two NaNs differ.
func ULPDistance(a, b float32) int64 {
	if math.Float32bits(a) == math.Float32bits(b) {
		return 0
	}
	if a != a || b != b {
		return math.MaxInt64
	}
	return abs64(ordered(a) - ordered(b))
}

// ordered maps float32 bits to integers in the order of the values, with -0 just below +0.
func ordered(f float32) int64 {
	u := math.Float32bits(f)
	if u&0x80000000 != 0 {
		return -int64(u&0x7fffffff) - 1
	}
	return int64(u)
}

func abs64(x int64) int64 {
	if x < 0 {
		return -x
	}
	return x
}

// Errors are error metrics of a float32 result against an fp64 reference.
type Errors struct {
	// NMSE = Σ(got-ref)² / Σref² (test-backend-ops' measure; 0 when ref is all zero and
	// got equals it, +Inf when ref is all zero and got is not).
	NMSE float64 `json:"nmse"`
	// RelRMS = sqrt(NMSE).
	RelRMS float64 `json:"rel_rms"`
	// MaxAbs is max |got-ref|.
	MaxAbs float64 `json:"max_abs"`
	// NonFinite counts elements of got that are NaN or ±Inf.
	NonFinite int `json:"non_finite"`
}

// ErrorsOf computes Errors of got against ref. It panics if the lengths differ.
func ErrorsOf(got []float32, ref []float64) Errors {
	if len(got) != len(ref) {
		panic("oracle: ErrorsOf of slices of different lengths")
	}
	var s ErrorSums
	s.Add(got, ref)
	return s.Errors()
}

// ErrorSums accumulates Errors over consecutive parts of a result (for a reference
// computed a block at a time, MulMatRefOnCols): Add the parts in order and Errors gives
// ErrorsOf of the whole, bit for bit (the sums run in the same order).
type ErrorSums struct {
	num, den float64
	e        Errors
}

// Add adds the elements of got against ref. It panics if the lengths differ.
func (s *ErrorSums) Add(got []float32, ref []float64) {
	if len(got) != len(ref) {
		panic("oracle: ErrorSums.Add of slices of different lengths")
	}
	for i, g := range got {
		if math.IsNaN(float64(g)) || math.IsInf(float64(g), 0) {
			s.e.NonFinite++
			continue
		}
		d := float64(g) - ref[i]
		s.num += d * d
		s.den += ref[i] * ref[i]
		if a := math.Abs(d); a > s.e.MaxAbs {
			s.e.MaxAbs = a
		}
	}
}

// Errors returns the Errors of everything added.
func (s *ErrorSums) Errors() Errors {
	e := s.e
	switch {
	case s.den > 0:
		e.NMSE = s.num / s.den
	case s.num > 0:
		e.NMSE = math.Inf(1)
	}
	e.RelRMS = math.Sqrt(e.NMSE)
	return e
}
