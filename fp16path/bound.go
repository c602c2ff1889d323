package fp16path

import (
	"fmt"
	"math"

	"github.com/ggsim/ggsim/quant"
)

// Bound returns, for each of the N rows of x (type t, K values each), a bound on |out -
// R| where out is MulMat's output with opt and R = Σ_k W_k·y_k in exact arithmetic (W the
// dequantized weights, exact in float64). It adds, per 16-value group g of block b (scale
// D, min Mmin, offset off, codes c_k, halves h_k, u = 2^(24-e_b)):
//
//	conversion  Σ_k |W_k|·max(2^-11·|y_k|, 2^-25·2^-e_b)  (h_k = RN16(y_k·2^e_b); the
//	            offset and the codes meet the same h_k, so only W_k multiplies the error)
//	HFMA2 loop  u·|D|·(8·2^-11·(1+2^-8)·G + 2^-20)        G = Σ_k c_k·|h_k|·2^-24 bounds
//	            every partial sum of either half; 8 roundings of at most 2^-11 of it or
//	            2^-25 (subnormal) each, per half
//	float32     u·(4 + n + 5)·2^-24·(1+2^-8)·M             M = |D|·G + (off·|D| + Mmin)·
//	            2^-24·Σ|h_k| bounds every float32 value of the epilogue (lo+hi, the offset
//	            or min FFMA, the product by D, the rounded S_g) in the group; n = the
//	            lane's FFMA chain length K/16/L, 5 the butterfly levels
//
// plus K·2^-125 for flushes to zero. The proofs are in the package documentation; the
// bound is what TestWithinBound checks every output against.
func Bound(t quant.Type, x []byte, K, N int, y []float32, opt *Options) ([]float64, error) {
	kr, rs, err := checkCall(t, x, K, N, y, 1, opt)
	if err != nil {
		return nil, err
	}
	act, err := ConvertActivations(y)
	if err != nil {
		return nil, err
	}
	lanes := opt.lanes(N)
	n := float64((K/16 + lanes - 1) / lanes)
	w := make([]float32, K)
	out := make([]float64, N)
	bs := rs / (K / kr.qk)
	gpb := kr.qk / 16
	var gr group
	for i := 0; i < N; i++ {
		row := x[i*rs : (i+1)*rs]
		if err := quant.DequantizeRow(t, row, w); err != nil {
			return nil, fmt.Errorf("fp16path: row %d: %w", i, err)
		}
		b := float64(K) * 0x1p-125
		for g := 0; g < K/16; g++ {
			e := act.Exp[g/2]
			blk := g / gpb
			kr.load(row[blk*bs:(blk+1)*bs], g%gpb, &gr)
			var G, H float64
			for k := 0; k < 16; k++ {
				idx := 16*g + k
				h := math.Abs(float64(act.H[idx].ToFloat32()))
				G += float64(float64(gr.codes[k]) * h * 0x1p-24) // float64(...): no fused multiply-add, the same bound everywhere
				H += h
				b += float64(math.Abs(float64(w[idx])) * math.Max(0x1p-11*math.Abs(float64(y[idx])), math.Ldexp(0x1p-25, -e)))
			}
			d := math.Abs(float64(gr.d))
			M := float64(d*G) + float64((float64(float64(kr.off)*d)+float64(gr.m))*0x1p-24*H)
			u := math.Ldexp(1, 24-e)
			b += float64(u * d * (float64(8*0x1p-11*(1+0x1p-8)*G) + 0x1p-20))
			b += float64(u * (4 + n + 5) * 0x1p-24 * (1 + 0x1p-8) * M)
		}
		out[i] = b
	}
	return out, nil
}
