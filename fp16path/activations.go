package fp16path

import (
	"fmt"
	"math"

	"github.com/ggsim/ggsim/f16"
	"github.com/ggsim/ggsim/sim"
)

// MaxPrescaled is the largest magnitude a prescaled activation half can have: 32752 =
// 2^15 - 16, the largest binary16 below 2^15.
const MaxPrescaled = 32752

// Exponent limits of the prescale s_b = 2^e_b. e_b <= EMax keeps s_b a normal float32;
// e_b >= EMin keeps the unscale factor 2^(24-e_b) a normal float32 (at most 2^127).
const (
	EMin = -103
	EMax = 127
)

// Activations is one matmul input column converted for the fp16 path (step 1 of the
// note): per 32-value block b a power-of-two prescale s_b = 2^Exp[b], the prescaled values
// as binary16, and exact-then-rounded float32 sums of every 16 consecutive halves.
type Activations struct {
	// K is the number of values.
	K int
	// H[k] = RN16(y[k]·s_b) for k in block b = k/32 (sim.F2H of the exact product).
	H []f16.Half
	// Exp[b] is e_b: s_b = 2^e_b.
	Exp []int
	// Sum16[g] is Σ_{k=16g}^{16g+15} H[k]: the exact sum of the halves the HFMA2 loop
	// consumes, rounded once to float32 (round to nearest even).
	Sum16 []float32
}

// ConvertActivations converts one column y (len(y) = K, a positive multiple of 32) for the
// fp16 path. For each 32-value block b it takes a = max |FTZ(y_k)| and the exponent
//
//	e_b = 14 - floor(log2 a), minus one more if RN16(a·2^(14-floor(log2 a))) = 2^15,
//
// clamped to at most EMax, so that a·s_b lies in [2^13, 2^15) and every half is at most
// MaxPrescaled in magnitude (e_b = 0 for an all-zero block). Then H[k] = sim.F2H(sim.Mul(y_k,
// s_b)) (the product is exact: a power of two, no overflow, FTZ of a subnormal y_k), and
// Sum16 the rounded exact sums.
//
// A NaN or infinite activation, or a block whose max needs e_b < EMin (max|y| >=
// 32760·2^103, about 2^118), is an error; the latter wraps errors.ErrUnsupported (the
// prescale range is not modelled).
//
// CUDA twin: fp16_convert_block (and fp16_convert) in gpu/cuda/kernels/fp16path.cu.
func ConvertActivations(y []float32) (*Activations, error) {
	K := len(y)
	if K == 0 || K%32 != 0 {
		return nil, fmt.Errorf("fp16path: activations: %d values, want a positive multiple of 32", K)
	}
	a := &Activations{K: K, H: make([]f16.Half, K), Exp: make([]int, K/32), Sum16: make([]float32, K/16)}
	for b := 0; b < K/32; b++ {
		blk := y[32*b : 32*b+32]
		var amax float32
		for i, v := range blk {
			if v != v || math.IsInf(float64(v), 0) {
				return nil, fmt.Errorf("fp16path: activation %d is %v", 32*b+i, v)
			}
			amax = sim.FMaxf(amax, sim.Abs(v))
		}
		e, err := prescaleExp(amax)
		if err != nil {
			return nil, fmt.Errorf("fp16path: activation block %d (values %d..%d): %w", b, 32*b, 32*b+31, err)
		}
		a.Exp[b] = e
		s := pow2(e)
		for i, v := range blk {
			a.H[32*b+i] = sim.F2H(sim.Mul(v, s))
		}
	}
	for g := range a.Sum16 {
		// Every half is an integer multiple of 2^-24 below 2^15: the sum of 16 has at
		// most 44 significant bits and is exact in float64; the conversion rounds once.
		var s float64
		for _, h := range a.H[16*g : 16*g+16] {
			s += float64(h.ToFloat32())
		}
		a.Sum16[g] = float32(s)
	}
	return a, nil
}

// prescaleExp returns e_b for a block whose largest magnitude (after FTZ) is amax.
//
// CUDA twin: fp16_convert_block in gpu/cuda/kernels/fp16path.cu.
func prescaleExp(amax float32) (int, error) {
	if amax == 0 {
		return 0, nil
	}
	_, x := math.Frexp(float64(amax)) // amax in [2^(x-1), 2^x)
	e := 14 - (x - 1)                 // in [-113, 164]
	if e > EMax {
		return EMax, nil
	}
	if sim.F2H(sim.Mul(amax, pow2(e))) == f16.Half(0x7800) { // rounds to 2^15
		e--
	}
	if e < EMin {
		return 0, fmt.Errorf("max |y| = %g needs a prescale below 2^%d: %w", amax, EMin, sim.ErrUnsupported)
	}
	return e, nil
}

// pow2 returns 2^e as a float32; e must be in [-126, 127].
func pow2(e int) float32 { return math.Float32frombits(uint32(e+127) << 23) }
