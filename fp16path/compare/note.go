package compare

import (
	"fmt"

	"github.com/ggsim/ggsim/quant"
)

// Matrix is one weight matrix of a model as the cost model sees it: Count matrices of
// N rows of K values of type Type per token.
type Matrix struct {
	Name  string
	Type  quant.Type
	K, N  int
	Count int
}

// NoteModel is the model of the note's measurements as far as the cost model needs it,
// per GPU: a dense 27B-class transformer with hidden size 5120 (the note's "5120-float
// row"), 64 layers, an FFN of 17408 and a 151936-token vocabulary, its matrices split by
// rows over the two P100s (-sm tensor), with the types of a Q4_K_M-like mix (UD-Q4_K_XL
// keeps most matrices Q4_K and gives attn_v, ffn_down and the output more bits). The
// note does not give the model's shapes or its per-tensor types: these are assumptions,
// and the predictions below that depend on them say so.
var NoteModel = []Matrix{
	{"attn_q", quant.Q4_K, 5120, 6144 / 2, 64},
	{"attn_k", quant.Q4_K, 5120, 1024 / 2, 64},
	{"attn_v", quant.Q6_K, 5120, 1024 / 2, 64},
	{"attn_output", quant.Q4_K, 6144, 5120 / 2, 64},
	{"ffn_gate", quant.Q4_K, 5120, 17408 / 2, 64},
	{"ffn_up", quant.Q4_K, 5120, 17408 / 2, 64},
	{"ffn_down", quant.Q5_K, 17408, 5120 / 2, 64},
	{"output", quant.Q6_K, 5120, 151936 / 2, 1},
}

// MultiColumnTypes are the types whose multi-column (2..8) fp16 kernels the note keeps;
// Q6_K batches stay on the generic (q8_1) path, the others have no multi-column kernel.
var MultiColumnTypes = []quant.Type{quant.Q4_K, quant.Q5_K, quant.IQ4_XS}

// ModelTime returns the predicted time of one token step (m = 1) or one batch of m
// columns for the matrices of model on arch a: every matrix through the q8_1 path
// (fp16 = false), or through the fp16 path where the note's patch would take it
// (batch 1: every covered type; m > 1: MultiColumnTypes), the rest through q8_1. If only
// is not nil, only matrices of that type count.
func ModelTime(a Arch, model []Matrix, m int, fp16 bool, only *quant.Type) (float64, error) {
	var s float64
	for _, x := range model {
		if only != nil && x.Type != *only {
			continue
		}
		p := Q8_1
		if fp16 && takesFP16(x.Type, m) {
			p = FP16
		}
		e, err := Predict(a, p, x.Type, x.K, x.N, m)
		if err != nil {
			return 0, fmt.Errorf("compare: %s: %w", x.Name, err)
		}
		s += float64(float64(x.Count) * e.Sec)
	}
	return s, nil
}

func takesFP16(t quant.Type, m int) bool {
	if _, ok := fp16Weight[t]; !ok {
		return false
	}
	if m == 1 {
		return true
	}
	for _, u := range MultiColumnTypes {
		if u == t {
			return true
		}
	}
	return false
}

// Claim is one of the note's measurements beside the cost model's prediction, on GP100
// as given (Predicted) and on GP100 with its clock calibrated (Calibrated; see
// Calibrate).
type Claim struct {
	What                string
	Measured            string
	Predicted           string
	Calibrated          string
	Agrees, AgreesCalib bool // the prediction has the measurement's direction and is within 25% of its ratio
	Note                string
}

// StockGBs is the middle of the note's 246-298 GB/s for the stock K-quant kernels on the
// P100 (after its patches 0001/0002).
const StockGBs = (246 + 298) / 2.0

// Calibrate returns a with its clock scaled so that the q8_1 path's weight bandwidth on
// NoteModel's K-quant matrices (time-weighted) is StockGBs: the one-parameter fit of the
// issue model to the note's measurement of the stock kernels. The fp16 path is not fitted.
func Calibrate(a Arch) (Arch, error) {
	var bytes, sec float64
	for _, x := range NoteModel {
		e, err := Predict(a, Q8_1, x.Type, x.K, x.N, 1)
		if err != nil {
			return a, err
		}
		rs, _ := x.Type.RowSize(int64(x.K))
		bytes += float64(float64(x.Count) * float64(rs*int64(x.N)))
		sec += float64(float64(x.Count) * e.Sec)
	}
	f := StockGBs / (bytes / sec / 1e9)
	a.ClockGHz *= f
	a.Name += fmt.Sprintf(" (clock x%.2f, fitted)", f)
	return a, nil
}

// NoteClaims compares the cost model on GP100 with the note's speed measurements.
//
//   - the stock K-quant kernels at 246-298 GB/s (40-49% of 608): the q8_1 path's weight
//     bandwidth for NoteModel's matrices (what Calibrate fits).
//   - tg128, 25.04 -> 33.22 tok/s: the time outside the matmuls (attention, norms,
//     launches) is not modelled, so it is fitted: t_other = 1/25.04 s - the q8_1 matmul
//     time of NoteModel (0 if negative); the prediction is 1/(t_other + the fp16 matmul
//     time).
//   - the 5-token verify batch, 88 -> 60 ms: fitted the same way at m = 5 (Q4_K, Q5_K on
//     the multi-column kernels, Q6_K on q8_1).
//   - "verifying 5 tokens cost ~3x a single-token step" with the int8 path: the ratio
//     of the q8_1 matmul times at m = 5 and m = 1 (no fit).
//   - Q6_K at 5 columns, fp16 multi-column 7.7 ms against the generic kernel's 6.2 ms:
//     NoteModel's Q6_K matrices at m = 5 on both paths (the absolute times depend on the
//     assumed shapes, the ratio hardly).
func NoteClaims() ([]Claim, error) {
	cal, err := Calibrate(GP100)
	if err != nil {
		return nil, err
	}
	var out []Claim
	for i, a := range []Arch{GP100, cal} {
		c, err := noteClaims(a)
		if err != nil {
			return nil, err
		}
		if i == 0 {
			out = c
			continue
		}
		for j := range out {
			out[j].Calibrated, out[j].AgreesCalib = c[j].Predicted, c[j].Agrees
		}
	}
	return out, nil
}

func noteClaims(a Arch) ([]Claim, error) {
	var q1, f1, q5, f5, q6q, q6f, wbytes, wsec float64
	for _, x := range NoteModel {
		n := float64(x.Count)
		rs, _ := x.Type.RowSize(int64(x.K))
		for _, m := range []int{1, 5} {
			q, err := Predict(a, Q8_1, x.Type, x.K, x.N, m)
			if err != nil {
				return nil, err
			}
			f := q
			if takesFP16(x.Type, m) {
				if f, err = Predict(a, FP16, x.Type, x.K, x.N, m); err != nil {
					return nil, err
				}
			}
			if m == 1 {
				q1 += float64(n * q.Sec)
				f1 += float64(n * f.Sec)
				wbytes += float64(n * float64(rs*int64(x.N)))
				wsec += float64(n * q.Sec)
				continue
			}
			q5 += float64(n * q.Sec)
			f5 += float64(n * f.Sec)
			if x.Type == quant.Q6_K {
				mf, err := Predict(a, FP16, x.Type, x.K, x.N, m)
				if err != nil {
					return nil, err
				}
				q6q += float64(n * q.Sec)
				q6f += float64(n * mf.Sec)
			}
		}
	}
	gbs := wbytes / wsec / 1e9
	other := max(0, 1/25.04-q1)
	tps0 := 1 / (other + q1)
	tps := 1 / (other + f1)
	other5 := max(0, 0.088-q5)
	b0, b1 := other5+q5, other5+f5
	return []Claim{{
		What:      "stock K-quant MMVQ weight bandwidth",
		Measured:  "246-298 GB/s",
		Predicted: fmt.Sprintf("%.0f GB/s", gbs),
		Agrees:    within(gbs, StockGBs, 0.25),
		Note:      "after the note's patches 0001/0002 (not public); the model counts ggml d99724f2b141",
	}, {
		What:      "tg128 tok/s",
		Measured:  "25.04 -> 33.22 (x1.33)",
		Predicted: fmt.Sprintf("%.2f -> %.2f (x%.2f); matmuls %.1f -> %.1f ms, rest %.1f ms", tps0, tps, tps/tps0, q1*1e3, f1*1e3, other*1e3),
		Agrees:    within(tps/tps0, 33.22/25.04, 0.25),
		Note:      "rest fitted to 25.04 tok/s; the act cache and norm fusion are not modelled",
	}, {
		What:      "5-token verify batch ms",
		Measured:  "88 -> 60 (x0.68)",
		Predicted: fmt.Sprintf("%.0f -> %.0f (x%.2f); matmuls %.1f -> %.1f ms", b0*1e3, b1*1e3, b1/b0, q5*1e3, f5*1e3),
		Agrees:    within(b1/b0, 60.0/88, 0.25),
		Note:      "rest fitted to 88 ms",
	}, {
		What:      "q8_1 5-token batch / 1-token step",
		Measured:  "~3x",
		Predicted: fmt.Sprintf("%.2fx (matmuls)", q5/q1),
		Agrees:    within(q5/q1, 3, 0.25),
	}, {
		What:      "Q6_K at 5 columns: fp16 multi-column vs q8_1",
		Measured:  "7.7 vs 6.2 ms (x1.24)",
		Predicted: fmt.Sprintf("%.1f vs %.1f ms (x%.2f)", q6f*1e3, q6q*1e3, q6f/q6q),
		Agrees:    within(q6f/q6q, 7.7/6.2, 0.25),
		Note:      "absolute times depend on NoteModel's assumed Q6_K matrices",
	}}, nil
}

func within(got, want, rel float64) bool { return got >= want*(1-rel) && got <= want*(1+rel) }
