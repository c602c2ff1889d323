package oracle

import (
	"math"

	"gonum.org/v1/gonum/blas/blas64"

	"github.com/ggsim/ggsim/f16"

	"github.com/ggsim/ggsim/quant"
)

// Reference is the fp64 truth of a matmul and the bound within which a correct ggml
// kernel's float32 result must lie.
type Reference struct {
	// Value[j*N+i] = Σ_k x[i][k]·y[j][k] in float64, where x is the exactly dequantized
	// weight row i (quant.DequantizeRow: float32 values, exact in float64) and y column j
	// of the f32 activations.
	Value []float64
	// Bound[j*N+i] is the largest |gpu - Value| a correct kernel can produce; see
	// MulMatRef, or |gpu - Center| where Center is set (MulMatRefOn).
	Bound []float64
	// Center, when not nil, is the exact value of the kernel's own formula on the
	// activations as the kernel quantizes them (MulMatRefOn): a correct kernel differs
	// from it by its float32 rounding alone, and WithinBound judges against it.
	Center []float64
}

// MulMatRef computes the fp64 reference of ggml_mul_mat(a, b) for a of type t holding N
// rows of K values and b holding M columns of K float32 values (b[j*K+k]); dst index
// j*N+i, as ggml lays out [N, M].
//
// Bound. The CUDA kernels quantize each 32-value block of a column of b to q8_1 with
// d = amax/127 stored as binary16: each activation is replaced by a value within
//
//	e_b = 0.5·d·(1+2^-20) + 127·max(2^-11·d, 2^-25)
//
// of it (half a quantization step, plus the binary16 rounding of d: relative 2^-11, or
// absolute 2^-25 once d is a half subnormal, below 2^-14), and the weights' offsets (Q4_0's
// -8, Q4_1's min, the K-quants' mins) meet the activations through block sums kept in
// binary16 (error max(2^-11·|s|, 2^-25) per block). With w_k = |x_k| + O_b, where O_b is
// the offset the kernel applies to the 32 weights of block b (offsetMag), the activation
// errors contribute Σ_k w_k·δ_k with |δ_k| ≤ e_b. Taking the δ_k as independent and
// zero-mean (rounding errors of unrelated values), Hoeffding's inequality bounds that sum
// by
//
//	H = sqrt(ln(2/p)/2 · Σ_k (2·w_k·e_b)²)   except with probability p = 2^-40 per element,
//
// and the float32 accumulation of the kernel (per-thread chains of at most K/32 steps,
// then at most 16 tree and cross-warp additions) adds at most (K/32+16)·2^-24·Σ_k|x_k||y_k|
// (with a 10% margin for the activations' own error). So per element
//
//	Bound = H + Σ_b O_b·max(2^-11·Σ_{k∈b}|y_k|, 2^-25) + 1.1·(K/32+16)·2^-24·Σ_k|x_k||y_k|.
//
// Q4_1 and Q5_1 also round the products d4·d8 and m4·s8 to binary16 (__hmul2); their
// error, absolute once subnormal, is added per block.
//
// The stated failure probability is a model, not a proof: a correct kernel on adversarial
// data (activations placed exactly on rounding ties in one direction) can exceed it. It is
// tight enough to fail a result that is wrong by 50% somewhere among 64 outputs
// (TestSimulatorWithinBound); the bit comparison is what catches small errors.
func MulMatRef(t quant.Type, a []byte, K, N int, b []float32, M int) (*Reference, error) {
	if _, err := checkShape(t, a, K, N, b, M); err != nil {
		return nil, err
	}
	cols := make([][]float32, M)
	base := make([]int, M)
	for j := range cols {
		cols[j], base[j] = b[j*K:(j+1)*K], j*N
	}
	ref := &Reference{Value: make([]float64, N*M), Bound: make([]float64, N*M)}
	if err := plainRows(t, a, K, N, cols, base, gemmParallel(N, M), ref); err != nil {
		return nil, err
	}
	return ref, nil
}

// gemmParallel says whether gonum's Dgemm (blas/gonum dgemmParallel, v0.17.0) takes its
// blocked path for an N×K by K×M product: at least minParBlock = 4 blocks of
// blockSize = 64 in N and M together. The references are computed by rows (one row of
// fp64 weights at a time, not the K·N·8-byte matrix that one gonum product needed), and
// gemmDot reproduces the summation order that product had, so Value is what it was.
func gemmParallel(N, M int) bool {
	const blockSize, minParBlock = 64, 4
	return ((N+blockSize-1)/blockSize)*((M+blockSize-1)/blockSize) >= minParBlock
}

// gemmDot is element (i, j) of gonum's C = X·Yᵀ with beta = 0 and alpha = 1, x row i and
// y row j: serially one Ddot over K (dgemmSerialNotTrans); on the parallel path one Ddot
// per 64-value block of K added in order (dgemmParallel's loop over k blocks).
func gemmDot(x, y []float64, par bool) float64 {
	const alpha = 1.0
	var c float64
	if !par {
		c += alpha * blas64.Dot(blas64.Vector{N: len(x), Data: x, Inc: 1}, blas64.Vector{N: len(y), Data: y, Inc: 1})
		return c
	}
	for k := 0; k < len(x); k += 64 {
		e := min(len(x), k+64)
		c += alpha * blas64.Dot(blas64.Vector{N: e - k, Data: x[k:e], Inc: 1}, blas64.Vector{N: e - k, Data: y[k:e], Inc: 1})
	}
	return c
}

// plainCol is one activation column with what MulMatRef's bound needs of it.
type plainCol struct {
	y      []float64 // the activations in float64
	eb, es []float64 // per 32-value block: e_b and the binary16 error of the block sum
}

func newPlainCol(b []float32) plainCol {
	K := len(b)
	nb := (K + 31) / 32
	c := plainCol{y: make([]float64, K), eb: make([]float64, nb), es: make([]float64, nb)}
	for k, v := range b {
		c.y[k] = float64(v)
	}
	for blk := 0; blk < nb; blk++ {
		amax, s := 0.0, 0.0
		for k := blk * 32; k < min(K, blk*32+32); k++ {
			v := math.Abs(c.y[k])
			s += v
			amax = math.Max(amax, v)
		}
		d := amax / 127
		c.eb[blk] = 0.5*d*(1+0x1p-20) + 127*math.Max(0x1p-11*d, 0x1p-25)
		c.es[blk] = math.Max(0x1p-11*s, 0x1p-25)
	}
	return c
}

// plainRows fills ref.Value and ref.Bound (MulMatRef's) for weights a (N rows of K values
// of t) against the columns cols, output (row i, column c) at index base[c]+i, one weight
// row at a time. par is gemmParallel of the product whose summation order Value keeps.
func plainRows(t quant.Type, a []byte, K, N int, cols [][]float32, base []int, par bool, ref *Reference) error {
	rows, err := newRowReader(t, a, K, N)
	if err != nil {
		return err
	}
	pc := make([]plainCol, len(cols))
	for c, b := range cols {
		pc[c] = newPlainCol(b)
	}
	nb := (K + 31) / 32
	hoeffding := math.Log(2/0x1p-40) / 2
	gamma := 1.1 * (float64(K)/32 + 16) * 0x1p-24
	obs := make([]float64, nb)
	for i := 0; i < N; i++ {
		xi, xrow, err := rows.row(i)
		if err != nil {
			return err
		}
		for blk := 0; blk < nb; blk++ {
			var mx float64
			for k := blk * 32; k < min(K, blk*32+32); k++ {
				mx = math.Max(mx, math.Abs(xi[k]))
			}
			obs[blk] = offsetMag(t, xrow, blk, mx)
		}
		for c := range pc {
			col := &pc[c]
			yj := col.y
			var sq, sterm, l1 float64
			for blk := 0; blk < nb; blk++ {
				ob := obs[blk]
				e := col.eb[blk]
				for k := blk * 32; k < min(K, blk*32+32); k++ {
					w := 2 * (math.Abs(xi[k]) + ob) * e
					sq += w * w
					l1 += math.Abs(xi[k] * yj[k])
				}
				sterm += ob * col.es[blk]
				if t == quant.Q4_1 || t == quant.Q5_1 {
					// __hmul2(dm4, ds8): d4·d8 and m4·s8 rounded to binary16 (relative 2^-11
					// or absolute 2^-25 once subnormal): error ≤ Σ|q4||q8|·err(d4d8) + err(m4s8).
					d4 := math.Abs(float64(blockScale(t, xrow, blk).ToFloat32()))
					d8 := col.eb[blk] / 0.5 // ≥ d: a safe stand-in for the activation scale
					var sq8 float64         // Σ|q4|·|q8| ≤ 31·Σ|q8| ≤ 31·32·127
					for k := blk * 32; k < min(K, blk*32+32); k++ {
						sq8 += 31 * (math.Abs(yj[k])/math.Max(d8, 1e-300) + 1)
					}
					sterm += sq8*math.Max(0x1p-11*d4*d8, 0x1p-25) + math.Max(0x1p-11*ob*32*127*d8, 0x1p-25)
				}
			}
			ref.Value[base[c]+i] = gemmDot(xi, yj, par)
			ref.Bound[base[c]+i] = math.Sqrt(hoeffding*sq) + sterm + gamma*l1
		}
	}
	return nil
}

// WithinBound returns the number of elements of got outside ref's bound (a NaN or ±Inf
// counts as outside) and the index of the first, -1 if none. The bound is around Center
// where it is set, else around Value.
func (ref *Reference) WithinBound(got []float32) (outside, first int) {
	first = -1
	c := ref.Value
	if ref.Center != nil {
		c = ref.Center
	}
	for i, g := range got {
		d := math.Abs(float64(g) - c[i])
		if !(d <= ref.Bound[i]) {
			outside++
			if first < 0 {
				first = i
			}
		}
	}
	return outside, first
}

// offsetMag returns the magnitude of the offset that the kernels apply to the 32 weights
// of 32-value block blk of a row (row holds the row's bytes) through the activations'
// block sum, for the bound of MulMatRef. mx is max |x| over the block's dequantized
// values; types whose offset structure is not listed here (IQ1_S, IQ1_M) use it.
func offsetMag(t quant.Type, row []byte, blk int, mx float64) float64 {
	abs := func(h f16.Half) float64 { return math.Abs(float64(h.ToFloat32())) }
	switch t {
	case quant.Q8_0, quant.Q6_K, quant.Q3_K, quant.IQ4_NL, quant.IQ4_XS, quant.MXFP4, quant.NVFP4,
		quant.IQ2_XXS, quant.IQ2_XS, quant.IQ2_S, quant.IQ3_XXS, quant.IQ3_S:
		return 0 // symmetric: signed quants, no block-sum term
	case quant.Q4_0:
		return 8 * abs(quant.Q4_0Block(row, blk).D())
	case quant.Q5_0:
		return 16 * abs(quant.Q5_0Block(row, blk).D())
	case quant.Q4_1:
		return abs(quant.Q4_1Block(row, blk).M())
	case quant.Q5_1:
		return abs(quant.Q5_1Block(row, blk).M())
	case quant.Q4_K:
		sb := quant.Q4_KBlock(row, blk/8)
		_, dmin := sb.DM()
		_, m := sb.ScaleMin(blk % 8)
		return abs(dmin) * float64(m)
	case quant.Q5_K:
		sb := quant.Q5_KBlock(row, blk/8)
		_, dmin := sb.DM()
		_, m := sb.ScaleMin(blk % 8)
		return abs(dmin) * float64(m)
	case quant.Q2_K:
		sb := quant.Q2_KBlock(row, blk/8)
		_, dmin := sb.DM()
		_, m0 := sb.ScaleMin(2 * (blk % 8))
		_, m1 := sb.ScaleMin(2*(blk%8) + 1)
		return abs(dmin) * float64(max(m0, m1))
	}
	return mx
}

// blockScale returns d of 32-value block blk of a Q4_1 or Q5_1 row (the types whose
// d·d8 product the kernels round to binary16).
func blockScale(t quant.Type, row []byte, blk int) f16.Half {
	if t == quant.Q5_1 {
		return quant.Q5_1Block(row, blk).D()
	}
	return quant.Q4_1Block(row, blk).D()
}
