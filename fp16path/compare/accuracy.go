package compare

import (
	"fmt"
	"math"

	"github.com/ggsim/ggsim/fp16path"
	"github.com/ggsim/ggsim/oracle"
	"github.com/ggsim/ggsim/oracle/oracletest"
	"github.com/ggsim/ggsim/quant"
	"github.com/ggsim/ggsim/sim"
	"github.com/ggsim/ggsim/sim/mmvq"
	"github.com/ggsim/ggsim/sim/q8"
)

// Accuracy is the error of both paths on one matrix and one activation column, each
// against oracle.MulMatRef's fp64 value R_i = Σ_k W_ik·y_k (W the exactly dequantized
// weights, y the float32 activations), as relative RMS errors over the N outputs:
// sqrt(Σ_i (out_i - R_i)² / Σ_i R_i²) (oracle.ErrorsOf).
type Accuracy struct {
	Type quant.Type
	K, N int

	// FP16 is the fp16 path's error (fp16path.MulMat, one row per warp).
	FP16 float64
	// Q8_1 is ggml's q8_1 MMVQ path's error (sim/mmvq on the P100's launch plan:
	// quantize_q8_1, then mul_mat_vec_q).
	Q8_1 float64

	// FP16Conv is the error of Σ_k W_ik·ŷ_k computed in fp64, with ŷ_k = h_k·2^-e_b the
	// fp16 path's converted activations: what the conversion to half alone costs. The
	// rest of FP16 is the HFMA2 accumulation and the float32 epilogue.
	FP16Conv float64
	// Q8_1Quant is the error of Σ_k W_ik·ŷ_k in fp64 with ŷ_k = f2h(d_b)·q_k, the
	// activations as quantize_q8_1 leaves them: what the 8-bit activation quantization
	// alone costs. The rest of Q8_1 is the kernel's float32 arithmetic.
	Q8_1Quant float64
}

// MMVQDevice is the device whose launch plan the q8_1 path is simulated with (sim.Lookup
// "P100", cc 6.0, the note's GPU). The q8_1 path's integer dot products are exact on any
// device; its float32 steps follow the simulator's model of ggml's source.
var MMVQDevice = mustDevice("P100")

func mustDevice(name string) sim.Device {
	d, err := sim.Lookup(name)
	if err != nil {
		panic("compare: " + err.Error())
	}
	return d
}

// Measure runs both paths on x (N rows of K values of type t) and the column y (K
// values) and returns their errors against the fp64 reference. A type the fp16 path does
// not cover is an error wrapping errors.ErrUnsupported; bad sizes are errors.
func Measure(t quant.Type, x []byte, K, N int, y []float32) (Accuracy, error) {
	a := Accuracy{Type: t, K: K, N: N}
	if !fp16path.Supported(t) {
		return a, fmt.Errorf("compare: type %v: the fp16 path does not cover it: %w", t, sim.ErrUnsupported)
	}
	if len(y) != K {
		return a, fmt.Errorf("compare: %d activations given for one column of %d", len(y), K)
	}
	ref, err := oracle.MulMatRef(t, x, K, N, y, 1)
	if err != nil {
		return a, fmt.Errorf("compare: %w", err)
	}
	got, err := fp16path.MulMat(t, x, K, N, y, 1, nil)
	if err != nil {
		return a, fmt.Errorf("compare: fp16 path: %w", err)
	}
	a.FP16 = oracle.ErrorsOf(got, ref.Value).RelRMS
	yq, err := q8.QuantizeQ8_1(y, K, 1)
	if err != nil {
		return a, fmt.Errorf("compare: %w", err)
	}
	q, err := mmvq.MulMatQ8(MMVQDevice, t, x, K, N, yq, 1, nil)
	if err != nil {
		return a, fmt.Errorf("compare: q8_1 path: %w", err)
	}
	a.Q8_1 = oracle.ErrorsOf(q, ref.Value).RelRMS

	act, err := fp16path.ConvertActivations(y)
	if err != nil {
		return a, fmt.Errorf("compare: %w", err)
	}
	yh := make([]float64, K)
	ybar := make([]float64, K)
	for k := range yh {
		yh[k] = math.Ldexp(float64(act.H[k].ToFloat32()), -act.Exp[k/32])
		b := &yq[k/32]
		ybar[k] = float64(b.DF32()) * float64(b.Qs[k%32])
	}
	a.FP16Conv, err = relRMSWith(t, x, K, N, yh, ref.Value)
	if err != nil {
		return a, err
	}
	a.Q8_1Quant, err = relRMSWith(t, x, K, N, ybar, ref.Value)
	return a, err
}

// relRMSWith is the relative RMS difference between Σ_k W_ik·v_k (fp64) and ref.
func relRMSWith(t quant.Type, x []byte, K, N int, v []float64, ref []float64) (float64, error) {
	rs, err := t.RowSize(int64(K))
	if err != nil {
		return 0, err
	}
	w := make([]float32, K)
	var num, den float64
	for i := 0; i < N; i++ {
		if err := quant.DequantizeRow(t, x[i*int(rs):(i+1)*int(rs)], w); err != nil {
			return 0, fmt.Errorf("compare: row %d: %w", i, err)
		}
		var s float64
		for k, wk := range w {
			s += float64(float64(wk) * v[k])
		}
		d := s - ref[i]
		num += float64(d * d)
		den += float64(ref[i] * ref[i])
	}
	if den == 0 {
		if num == 0 {
			return 0, nil
		}
		return math.Inf(1), nil
	}
	return math.Sqrt(num / den), nil
}

// Realistic is Measure on model-like data from seed: oracletest.RealisticWeights (Student-t
// weights with a per-row scale spread and outlier input channels, quantized by ggml's
// reference quantizer) and one column of oracletest.RealisticActivations (an RMS norm's
// output with outlier dimensions).
func Realistic(t quant.Type, K, N int, seed uint64) (Accuracy, error) {
	x, err := oracletest.RealisticWeights(t, K, N, seed)
	if err != nil {
		return Accuracy{Type: t, K: K, N: N}, fmt.Errorf("compare: %w", err)
	}
	return Measure(t, x, K, N, oracletest.RealisticActivations(K, 1, seed))
}

// Table is Realistic for each type in types at one shape.
func Table(types []quant.Type, K, N int, seed uint64) ([]Accuracy, error) {
	out := make([]Accuracy, 0, len(types))
	for _, t := range types {
		a, err := Realistic(t, K, N, seed)
		if err != nil {
			return nil, err
		}
		out = append(out, a)
	}
	return out, nil
}

// KSweep is Table at each K in ks, pooled over reps seeds (seed, seed+1, ...): result[i]
// holds one Accuracy per type at K = ks[i], in the order of types, each error the root
// mean square of the per-seed relative RMS errors. Pooling matters: the realistic
// activations' outlier dimensions (one in 512, gains 20..100) are drawn anew for every K
// and seed, and one draw moves both paths' errors by a factor of two.
func KSweep(types []quant.Type, ks []int, N int, seed uint64, reps int) ([][]Accuracy, error) {
	if reps < 1 {
		return nil, fmt.Errorf("compare: %d repetitions", reps)
	}
	out := make([][]Accuracy, len(ks))
	for i, k := range ks {
		var sum []Accuracy
		for r := 0; r < reps; r++ {
			rows, err := Table(types, k, N, seed+uint64(r))
			if err != nil {
				return nil, err
			}
			if sum == nil {
				sum = make([]Accuracy, len(rows))
				for j := range rows {
					sum[j] = Accuracy{Type: rows[j].Type, K: k, N: N}
				}
			}
			for j, a := range rows {
				sum[j].FP16 += float64(a.FP16 * a.FP16)
				sum[j].Q8_1 += float64(a.Q8_1 * a.Q8_1)
				sum[j].FP16Conv += float64(a.FP16Conv * a.FP16Conv)
				sum[j].Q8_1Quant += float64(a.Q8_1Quant * a.Q8_1Quant)
			}
		}
		for j := range sum {
			n := float64(reps)
			sum[j].FP16 = math.Sqrt(sum[j].FP16 / n)
			sum[j].Q8_1 = math.Sqrt(sum[j].Q8_1 / n)
			sum[j].FP16Conv = math.Sqrt(sum[j].FP16Conv / n)
			sum[j].Q8_1Quant = math.Sqrt(sum[j].Q8_1Quant / n)
		}
		out[i] = sum
	}
	return out, nil
}

// RealisticColumn is one column of oracletest.RealisticActivations(K, 1, seed): the
// activations Realistic uses, for a matrix read from a file.
func RealisticColumn(K int, seed uint64) []float32 {
	return oracletest.RealisticActivations(K, 1, seed)
}
