package ggsim

import (
	"fmt"

	"github.com/ggsim/ggsim/oracle"
	"github.com/ggsim/ggsim/quant"
	"github.com/ggsim/ggsim/sim"
	"github.com/ggsim/ggsim/sim/glu"
	"github.com/ggsim/ggsim/tiling"
)

// MulMatGLU computes GLU(ggml_mul_mat(gate, b), ggml_mul_mat(up, b)) as ggml's CUDA
// backend does on dev for the graph {MUL_MAT gate, MUL_MAT up, GLU} (the golden schema's
// mul_mat_glu): gate and up have the same type and shape, b holds M columns, the result
// has N*M values (dst[j*N+i]).
//
// With fusionAllowed (ggml's default) and where ggml fuses (tiling.FuseGLU: one column,
// an MMVQ type), the gate and up sums are those of the MMVQ kernel and the epilogue is
// mul_mat_vec_q's (glu.Fused). Otherwise (fusionAllowed false, as with
// GGML_CUDA_DISABLE_FUSION=1, or a shape ggml does not fuse) the two matmuls run as
// MulMat decides and the GLU is unary.cu's kernel (glu.Unfused). Result.Decision is the
// gate matmul's, its Reason saying whether and why the GLU was fused. WithTrace records
// the gate's launch, then the up's.
//
// The fused swiglu_oai uses ggml's default alpha and limit whatever g says (see
// glu.Fused). A GLU other than swiglu, geglu and swiglu_oai is an error wrapping
// glu.ErrUnsupported (errors.ErrUnsupported).
func MulMatGLU(dev sim.Device, gate, up Weights, b []float32, M int, g glu.Spec, fusionAllowed bool, opts ...Option) (Result, error) {
	if err := sameWeights(gate, up, false); err != nil {
		return Result{}, err
	}
	if M < 1 || int64(len(b)) != int64(gate.K)*int64(M) {
		return Result{}, fmt.Errorf("ggsim: MulMatGLU: activations: %d values given for %d columns of %d", len(b), M, gate.K)
	}
	if err := glu.Check(g); err != nil {
		return Result{}, fmt.Errorf("ggsim: MulMatGLU: %w", err)
	}
	shape := tiling.Shape{K: int64(gate.K), N: int64(gate.N), M: int64(M)}
	return runGLU(dev, gate.Type, shape, 0, fusionAllowed, g,
		func(w Weights, c *config, tr *Trace) ([]float32, error) {
			return simulated[tiling.KernelMMVQ].mulMat(dev, w, b, M, c, tr)
		},
		func(w Weights) (Result, error) { return MulMat(dev, w, b, M, opts...) },
		gate, up, opts)
}

// MulMatIDGLU is MulMatGLU for {MUL_MAT_ID gate, MUL_MAT_ID up, GLU} (the golden schema's
// mul_mat_id_glu): gate and up hold E experts, b, B1, T, ids and U are as for MulMatID,
// and the result has T*U*N values (dst[(t*U+u)*N+i]). ggml fuses one token (T = 1) with
// B1 <= 8.
func MulMatIDGLU(dev sim.Device, gate, up Weights, b []float32, B1, T int, ids []int32, U int, g glu.Spec, fusionAllowed bool, opts ...Option) (Result, error) {
	if err := sameWeights(gate, up, true); err != nil {
		return Result{}, err
	}
	if err := glu.Check(g); err != nil {
		return Result{}, fmt.Errorf("ggsim: MulMatIDGLU: %w", err)
	}
	if err := checkIDArgs(gate, b, B1, T, ids, U); err != nil {
		return Result{}, err
	}
	shape := tiling.Shape{K: int64(gate.K), N: int64(gate.N), M: int64(T), Experts: int64(gate.E)}
	return runGLU(dev, gate.Type, shape, int64(B1), fusionAllowed, g,
		func(w Weights, c *config, tr *Trace) ([]float32, error) {
			return simulated[tiling.KernelMMVQ].mulMatID(dev, w, b, B1, T, ids, U, c, tr)
		},
		func(w Weights) (Result, error) { return MulMatID(dev, w, b, B1, T, ids, U, opts...) },
		gate, up, opts)
}

// checkIDArgs checks the activations and expert ids as MulMatID does.
func checkIDArgs(w Weights, b []float32, B1, T int, ids []int32, U int) error {
	if T < 1 || B1 < 1 || U < 1 || U%B1 != 0 {
		return fmt.Errorf("ggsim: MulMatIDGLU: %d tokens of %d slots and %d activation rows: want T >= 1 and U a positive multiple of B1", T, U, B1)
	}
	if int64(len(b)) != int64(w.K)*int64(B1)*int64(T) {
		return fmt.Errorf("ggsim: MulMatIDGLU: activations: %d values given for %d tokens of %d rows of %d", len(b), T, B1, w.K)
	}
	if len(ids) != T*U {
		return fmt.Errorf("ggsim: MulMatIDGLU: %d expert ids given for %d tokens of %d slots", len(ids), T, U)
	}
	for i, id := range ids {
		if id < 0 || int(id) >= w.E {
			return fmt.Errorf("ggsim: MulMatIDGLU: expert id %d of token %d, slot %d is outside [0, %d)", id, i/U, i%U, w.E)
		}
	}
	return nil
}

// sameWeights checks gate and up: each valid, and of the same type and shape (ggml fuses
// only then; the golden schema requires it).
func sameWeights(gate, up Weights, id bool) error {
	if err := gate.check(id); err != nil {
		return fmt.Errorf("gate: %w", err)
	}
	if err := up.check(id); err != nil {
		return fmt.Errorf("up: %w", err)
	}
	if gate.Type != up.Type || gate.K != up.K || gate.N != up.N || gate.E != up.E {
		return fmt.Errorf("ggsim: GLU: gate is %v K=%d N=%d E=%d, up is %v K=%d N=%d E=%d: want the same type and shape",
			gate.Type, gate.K, gate.N, gate.E, up.Type, up.K, up.N, up.E)
	}
	return nil
}

// runGLU runs the fused or the unfused path: fusedMM is the MMVQ sum of one weight
// tensor (the fused launch computes the gate's and the up's sums as two unfused MMVQ
// launches would), plainMM the full matmul front door.
func runGLU(dev sim.Device, t quant.Type, shape tiling.Shape, b1 int64, fusionAllowed bool, g glu.Spec,
	fusedMM func(Weights, *config, *Trace) ([]float32, error), plainMM func(Weights) (Result, error),
	gate, up Weights, opts []Option) (Result, error) {
	fused, why := tiling.FuseGLU(dev, t, shape, b1)
	if !fusionAllowed {
		fused, why = false, "fusion disabled (GGML_CUDA_DISABLE_FUSION=1)"
	}
	if fused {
		d := tiling.Decision{Kernel: tiling.KernelMMVQ, Reason: why}
		if !tiling.HasMMVQKernel(t) {
			d.Kernel = tiling.KernelAbort
			return Result{Decision: d}, fmt.Errorf("%w: ggml fuses the GLU of %v into mul_mat_vec_q, which has no kernel for it and aborts", ErrNotSimulated, t)
		}
		c, tr := configure(opts, d)
		gv, err := fusedMM(gate, c, tr)
		if err != nil {
			return Result{Decision: d}, err
		}
		uv, err := fusedMM(up, c, tr)
		if err != nil {
			return Result{Decision: d}, err
		}
		out := make([]float32, len(uv))
		if err := glu.Fused(g, gv, uv, out); err != nil {
			return Result{Decision: d}, err
		}
		return Result{Out: out, Decision: d, Trace: tr}, nil
	}
	rg, err := plainMM(gate)
	rg.Decision.Reason += "; GLU not fused: " + why
	if err != nil {
		return Result{Decision: rg.Decision}, err
	}
	ru, err := plainMM(up)
	if err != nil {
		return Result{Decision: rg.Decision}, err
	}
	out := make([]float32, len(ru.Out))
	if err := glu.Unfused(g, rg.Out, ru.Out, out); err != nil {
		return Result{Decision: rg.Decision}, err
	}
	res := Result{Out: out, Decision: rg.Decision, Trace: rg.Trace}
	if res.Trace != nil && ru.Trace != nil {
		res.Trace.MMVQ = append(res.Trace.MMVQ, ru.Trace.MMVQ...)
	}
	return res, nil
}

// MulMatGLU implements oracle.GLUImpl with MulMatGLU.
func (s *Simulator) MulMatGLU(dev sim.Device, t quant.Type, gate, up []byte, K, N int, b []float32, M int, g glu.Spec, fusionAllowed bool) ([]float32, error) {
	r, err := MulMatGLU(dev, Weights{Type: t, K: K, N: N, Data: gate}, Weights{Type: t, K: K, N: N, Data: up}, b, M, g, fusionAllowed, s.options()...)
	return r.Out, err
}

// MulMatIDGLU implements oracle.GLUImpl with MulMatIDGLU.
func (s *Simulator) MulMatIDGLU(dev sim.Device, t quant.Type, gate, up []byte, K, N, E int, b []float32, B1, T int, ids []int32, U int, g glu.Spec, fusionAllowed bool) ([]float32, error) {
	r, err := MulMatIDGLU(dev, Weights{Type: t, K: K, N: N, E: E, Data: gate}, Weights{Type: t, K: K, N: N, E: E, Data: up}, b, B1, T, ids, U, g, fusionAllowed, s.options()...)
	return r.Out, err
}

var _ oracle.GLUImpl = (*Simulator)(nil)
