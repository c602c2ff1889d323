package oracletest

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/ggsim/ggsim/quant"
)

// The realistic generators make operands with the statistics of a trained transformer's
// matmuls, rather than the uniform and adversarial data of the conformance cases: what a
// user's model will feed the kernels. They are deterministic in (seed, sizes) and
// independent of the conformance suite's rapid draws.
//
// Weights (RealisticFloats, RealisticWeights): row i, column k is
//
//	w[i][k] = 0.02 · r_i · c_k · t_ik
//
// where t_ik is Student-t with 5 degrees of freedom scaled to unit variance (heavy tails:
// a few weights per row many standard deviations out, as in trained LLM layers), r_i a
// per-row scale spread exp(N(0, 0.35²)) (output channels differ in norm by about 2x either
// way), and c_k a per-input-channel gain that is 1 except on the outlier channels: one in
// 256 input channels (at least one), chosen from the seed, with c_k drawn in [4, 12)
// (the channels that meet the activations' outlier dimensions carry large weights in
// real models). 0.02 is the usual initialisation standard deviation of LLaMA-style
// layers. The floats are quantized with ggml's reference quantizer of the type
// (quant.QuantizeRowRef, byte-exact with ggml_quantize_chunk without an importance
// matrix); a type without one (the IQ types) gets random blocks whose binary16 scales
// are moderate (2^-12..2^-5) and whose other bytes are random: valid blocks of the
// format, not the image of realistic floats.
//
// Activations (RealisticActivations): column j (a token) is what an RMS norm with a
// learned gain hands a projection:
//
//	x[j][k] = g_k · z_jk / rms(z_j)
//
// with z_jk standard normal, g_k a per-channel gain |N(1, 0.2²)|, and on the outlier
// dimensions (one in 512, at least one, the same for every token: the "massive
// activations" of LLaMA-like models) g_k drawn in [20, 100) with a random sign.
const (
	realisticWeightStd   = 0.02
	realisticRowSpread   = 0.35
	realisticTailDOF     = 5
	realisticOutlierW    = 256 // one input channel in realisticOutlierW is an outlier channel
	realisticOutlierA    = 512 // one activation dimension in realisticOutlierA is an outlier
	realisticGainSpread  = 0.2
	realisticOutlierAMin = 20
	realisticOutlierAMax = 100
)

// studentT returns a Student-t variate with dof degrees of freedom scaled to unit
// variance (dof > 2).
func studentT(r *rand.Rand, dof int) float64 {
	var chi2 float64
	for range dof {
		g := r.NormFloat64()
		chi2 += float64(g * g)
	}
	t := r.NormFloat64() / math.Sqrt(chi2/float64(dof))
	return t * math.Sqrt(float64(dof-2)/float64(dof))
}

// outlierSet returns a deterministic set of n/every (at least one) distinct indices in
// [0, n).
func outlierSet(r *rand.Rand, n, every int) []int {
	c := max(1, n/every)
	return r.Perm(n)[:c]
}

// RealisticFloats returns rows·K float32 weights (row i at [i*K, (i+1)*K)) distributed
// as the doc of RealisticWeights says, from seed.
func RealisticFloats(K, rows int, seed uint64) []float32 {
	g := newWeightRows(K, seed)
	w := make([]float32, K*rows)
	for i := 0; i < rows; i++ {
		g.next(w[i*K : (i+1)*K])
	}
	return w
}

// weightRows draws RealisticFloats one row at a time: the draws are sequential in the
// row index, so row i is the same whether the whole matrix or one row buffer is filled,
// and RealisticWeights never holds more than one row of floats (K·4 bytes, not K·rows·4).
type weightRows struct {
	r    *rand.Rand
	gain []float64
}

func newWeightRows(K int, seed uint64) *weightRows {
	r := rand.New(rand.NewPCG(seed, 0x7765_6967_6874)) // "weight"
	gain := make([]float64, K)
	for k := range gain {
		gain[k] = 1
	}
	for _, k := range outlierSet(r, K, realisticOutlierW) {
		gain[k] = 4 + float64(8*r.Float64())
	}
	return &weightRows{r: r, gain: gain}
}

// next fills row (K values) with the next row's weights.
func (g *weightRows) next(row []float32) {
	rowScale := realisticWeightStd * math.Exp(realisticRowSpread*g.r.NormFloat64())
	for k := range row {
		row[k] = float32(rowScale * g.gain[k] * studentT(g.r, realisticTailDOF))
	}
}

// RealisticWeights returns rows rows of K values of type t, quantized from RealisticFloats
// by quant.QuantizeRowRef, or random valid blocks with moderate scales where t has no
// reference quantizer (see the comment on the realistic generators). It returns an error
// if K is not a whole number of t's blocks or ggsim does not know t's block layout.
func RealisticWeights(t quant.Type, K, rows int, seed uint64) ([]byte, error) {
	rs, err := t.RowSize(int64(K))
	if err != nil {
		return nil, err
	}
	if K <= 0 || rows <= 0 {
		return nil, fmt.Errorf("oracletest: %d rows of %d values: both must be positive", rows, K)
	}
	a := make([]byte, int(rs)*rows)
	if _, ok := quantizer(t); ok {
		g := newWeightRows(K, seed)
		x := make([]float32, K) // one row at a time (weightRows)
		for i := 0; i < rows; i++ {
			g.next(x)
			if err := quant.QuantizeRowRef(t, x, a[i*int(rs):(i+1)*int(rs)]); err != nil {
				return nil, err
			}
		}
		return a, nil
	}
	if halfScaleOffsets(t) == nil && t != quant.IQ1_M && t != quant.MXFP4 && t != quant.NVFP4 {
		return nil, fmt.Errorf("oracletest: no reference quantizer and no known scale layout for %v: %w", t, quant.ErrUnsupported)
	}
	randomValidBlocks(t, a, rand.New(rand.NewPCG(seed, 0x626c_6f63_6b73))) // "blocks"
	return a, nil
}

// RealisticActivations returns M columns of K float32 activations (column j at
// [j*K, (j+1)*K)) distributed like the output of an RMS norm with outlier dimensions (see
// the comment on the realistic generators), from seed.
func RealisticActivations(K, M int, seed uint64) []float32 {
	r := rand.New(rand.NewPCG(seed, 0x6163_7473)) // "acts"
	gain := make([]float64, K)
	for k := range gain {
		gain[k] = math.Abs(1 + float64(realisticGainSpread*r.NormFloat64()))
	}
	for _, k := range outlierSet(r, K, realisticOutlierA) {
		g := realisticOutlierAMin + float64((realisticOutlierAMax-realisticOutlierAMin)*r.Float64())
		if r.IntN(2) == 0 {
			g = -g
		}
		gain[k] = g
	}
	x := make([]float32, K*M)
	z := make([]float64, K)
	for j := 0; j < M; j++ {
		var ss float64
		for k := range z {
			z[k] = r.NormFloat64()
			ss += float64(z[k] * z[k])
		}
		rms := math.Sqrt(ss / float64(K))
		for k := range z {
			x[j*K+k] = float32(gain[k] * z[k] / rms)
		}
	}
	return x
}
