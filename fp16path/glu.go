package fp16path

import (
	"fmt"

	"github.com/ggsim/ggsim/quant"
	"github.com/ggsim/ggsim/sim"
)

// expf is expf(x) as the SWIGLU epilogue computes it under -use_fast_math: sim.Expf,
// MUFU.EX2 of x·log2(e) as measured on an H200 (gpu/testdata/h200-mufu). It is a variable
// (with an error result) so that tests can swap in a stand-in marked as not hardware.
var expf = func(x float32) (float32, error) { return sim.Expf(x), nil }

// silu is ggml_cuda_op_silu_single (unary.cuh), x / (1.0f + expf(-x)), under
// -use_fast_math: the argument -x is exact (FNEG), 1.0f + e is FADD.FTZ and the division
// is MUFU.RCP then FMUL.FTZ (sim.Div).
func silu(x float32) (float32, error) {
	e, err := expf(sim.Neg(x))
	if err != nil {
		return 0, err
	}
	return sim.Div(x, sim.Add(1, e)), nil
}

// swiglu is the fused epilogue for one output: up·silu(gate) (mmvq.cu's
// "result *= ggml_cuda_op_silu_single(gate_value)", one FMUL.FTZ), with no bias and no
// scale terms.
func swiglu(up, gate float32) (float32, error) {
	s, err := silu(gate)
	if err != nil {
		return 0, err
	}
	return sim.Mul(up, s), nil
}

// MulMatSwiGLU is the note's fused ffn gate/up/SWIGLU: for the N rows of the gate and up
// matrices (both of type t, K values per row) and the M columns of y, dst[j*N+i] =
// up_i·y_j · silu(gate_i·y_j), where each of the two dot products is exactly MulMat's
// output (same conversion of y, same lanes, rows per warp and order; the two matrices'
// weights are unpacked separately) and the epilogue is ggml's SWIGLU with fast-math
// expf, FADD, MUFU.RCP division and FMUL (see silu). Columns and types are MulMat's.
func MulMatSwiGLU(t quant.Type, gate, up []byte, K, N int, y []float32, M int, opt *Options) ([]float32, error) {
	var c *Cache
	return c.MulMatSwiGLU(t, gate, up, K, N, y, M, opt)
}

// MulMatSwiGLU is the package's MulMatSwiGLU with y's conversion through the cache c
// (converted once for both matrices in any case).
func (c *Cache) MulMatSwiGLU(t quant.Type, gate, up []byte, K, N int, y []float32, M int, opt *Options) ([]float32, error) {
	kr, rs, err := checkCall(t, gate, K, N, y, M, opt)
	if err != nil {
		return nil, err
	}
	if _, _, err := checkMatrix(t, up, K, N); err != nil {
		return nil, fmt.Errorf("%w (the up matrix)", err)
	}
	acts, err := c.columns(y, K, M, opt)
	if err != nil {
		return nil, err
	}
	dst := make([]float32, N*M)
	lanes := opt.lanes(N)
	errs := make([]error, N)
	parallelRows(N, func(i int) {
		var pg, pu [MaxColumns][sim.WarpSize]float32
		lanePartials(kr, gate[i*rs:(i+1)*rs], acts, lanes, &pg)
		lanePartials(kr, up[i*rs:(i+1)*rs], acts, lanes, &pu)
		for j := range acts {
			g := sim.ReduceSumTree(pg[j][:lanes])
			u := sim.ReduceSumTree(pu[j][:lanes])
			v, err := swiglu(u, g)
			if err != nil {
				errs[i] = err
				return
			}
			dst[j*N+i] = v
		}
	})
	for i, err := range errs {
		if err != nil {
			return nil, fmt.Errorf("fp16path: SWIGLU epilogue of row %d: %w", i, err)
		}
	}
	return dst, nil
}
