package oracletest

import (
	"fmt"
	"math/rand/v2"

	"github.com/ggsim/ggsim/gguf/golden"
	"github.com/ggsim/ggsim/quant"
)

// GLU sweeps: one token through a gate and an up matmul of the same weight type and
// shape, then a GLU of the two (ggml_swiglu_split, ggml_geglu_split, ggml_swiglu_oai
// with the gate first), as a transformer's feed-forward block computes it; with graph
// fusion allowed (ggml's fused mul_mat_vec_q epilogue, mmvq.cu) or disabled (two MMVQ
// launches and the unfused GLU kernel of unary.cu). The ops are the golden schema's
// mul_mat_glu and mul_mat_id_glu.
const (
	// SweepGLU: MUL_MAT gate and up [K, N] of every MMVQ type, one column b [K, 1].
	SweepGLU = "glu"
	// SweepGLUID: MUL_MAT_ID gate and up [K, N, E], one token b [K, B1, 1], U of E
	// experts (distinct, as ggml's top-k routing gives them). About 30% of its cases
	// have shapes on which ggml's one-token kernel races (sim/mmvq.IDWriteRace: the
	// simulator refuses them); the H200 record gpu/testdata/h200-cuda13-sweep/sweep-glu.tsv
	// was made with it.
	SweepGLUID = "gluid"
	// SweepGLUID2: SweepGLUID without the racing shapes (N a multiple of 8 when U > 1)
	// and with at most 2^19 expert weight values (faster to generate).
	SweepGLUID2 = "gluid2"
)

// SweepMMVQTypes are the types with a mul_mat_vec_q kernel (get_vec_dot_q_cuda in
// mmvq.cu; tiling.HasMMVQKernel), in the order GLU sweeps cycle through them.
var SweepMMVQTypes = []quant.Type{
	quant.Q4_0, quant.Q4_1, quant.Q5_0, quant.Q5_1, quant.Q8_0, quant.MXFP4, quant.NVFP4,
	quant.Q2_K, quant.Q3_K, quant.Q4_K, quant.Q5_K, quant.Q6_K,
	quant.IQ2_XXS, quant.IQ2_XS, quant.IQ2_S, quant.IQ3_XXS, quant.IQ3_S, quant.IQ1_S, quant.IQ1_M,
	quant.IQ4_NL, quant.IQ4_XS, quant.Q1_0, quant.Q2_0,
}

// The defaults of ggml_swiglu_oai's alpha and limit in llama.cpp's gpt-oss graph.
const (
	GLUDefaultAlpha = 1.702
	GLUDefaultLimit = 7.0
)

// IsGLU reports whether the case is a GLU case (mul_mat_glu or mul_mat_id_glu).
func (c *SweepCase) IsGLU() bool { return golden.Op(c.Op).IsGLU() }

// gluShape is the GLU part of Shape: "swiglu allowed", "swiglu_oai(1.702,7) disabled".
func (c *SweepCase) gluShape() string {
	g := c.GLU
	if c.GLU == golden.GLUSwiGLUOAI {
		g = fmt.Sprintf("%s(%g,%g)", c.GLU, c.GLUAlpha, c.GLULimit)
	}
	return g + " " + c.Fusion
}

// sweepGLUOp draws the GLU, its alpha and limit (swiglu_oai), and the fusion setting.
func sweepGLUOp(c *SweepCase, r *rand.Rand) {
	c.GLU = pick(r, golden.GLUSwiGLU, golden.GLUGeGLU, golden.GLUSwiGLUOAI)
	if c.GLU == golden.GLUSwiGLUOAI {
		switch p := r.IntN(10); {
		case p < 5:
			c.GLUAlpha, c.GLULimit = GLUDefaultAlpha, GLUDefaultLimit
		case p < 8: // around the defaults (float64(...): no fused multiply-add, the same bits on every GOARCH)
			c.GLUAlpha = float32(0.5 + float64(3*r.Float64()))
			c.GLULimit = float32(1 + float64(19*r.Float64()))
		default: // adversarial, finite
			c.GLUAlpha = pick(r, float32(0), -GLUDefaultAlpha, 1e-3, 100, 1e4)
			c.GLULimit = pick(r, float32(0), 1e-3, 88.72, 1e4, 3e38)
		}
	}
	c.Fusion = pick(r, golden.FusionAllowed, golden.FusionDisabled)
}

// sweepGLUShape draws K (a multiple of the block size, mostly at most 4096) and N rows.
func sweepGLUShape(c *SweepCase, r *rand.Rand) {
	qk := c.Type.BlockSize()
	c.K = qk * (1 + r.IntN(max(1, pick(r, 1024, 2048, 4096, 8192)/qk)))
	switch p := r.IntN(10); {
	case p < 3:
		c.N = 256
	case p < 6:
		c.N = 128 * (1 + r.IntN(8))
	default:
		c.N = 1 + r.IntN(1100)
	}
}

// sweepGLUData makes gate, up and the activations, all finite; the profile says how:
// "plain" (golden-like: weights 0.05, activations 1), "wide" (weights and activations
// scaled so that gate values reach far past ±88.7, where expf overflows or flushes), or
// "adversarial" (finite special weight blocks: max, subnormal and zero scales, zero
// blocks; tiny activations or zeroed activation blocks). Activation blocks stay below
// |sum| 65504 (no infinite q8_1 sums) and the products finite: no case is meant to give
// NaN or Inf in a matmul, only in the epilogue's expf.
func sweepGLUData(c *SweepCase, r *rand.Rand, rows, nact int) {
	_, hasQ := quantizer(c.Type)
	w := weightSpec{Quantized: hasQ, Scale: 0.05}
	a := actSpec{Kind: actNormal, Scale: 1}
	nb := c.K / c.Type.BlockSize()
	switch p := r.IntN(20); {
	case p < 8:
		c.Profile = "plain"
		w.Quantized = hasQ && r.IntN(2) == 0
	case p < 15:
		c.Profile = "wide"
		a.Scale = pick(r, float32(1), 10, 100)
		w.Scale = pick(r, float32(0.05), 1, 30)
	default:
		c.Profile = "adversarial"
		w.Quantized = hasQ && r.IntN(2) == 0
		w.Scale = pick(r, float32(0.05), 1, 1e-4)
		if r.IntN(3) == 0 {
			a.Kind, a.Scale = actTiny, pick(r, float32(1e-5), 1e-7, 3e-39)
		} else {
			a.Scale = pick(r, float32(1), 1e-3, 100)
		}
		for n := 1 + r.IntN(4); n > 0; n-- {
			s := weightSpecial{Row: r.IntN(rows), Block: r.IntN(nb), Kind: pick(r, finiteScaleKinds...)}
			if len(halfScaleOffsets(c.Type)) == 2 && s.Kind != zeroBlock {
				s.Min = r.IntN(4) == 3
			}
			w.Specials = append(w.Specials, s)
		}
		for n := r.IntN(3); n > 0; n-- {
			a.Specials = append(a.Specials, actSpecial{Row: r.IntN(nact), Index: r.IntN(c.K), Kind: actZeroBlock})
		}
	}
	// gate and up share the profile, not the bytes; their specials are drawn anew for up.
	c.A, _ = makeWeights(c.Type, c.K, rows, w, r)
	for i := range w.Specials {
		w.Specials[i].Row, w.Specials[i].Block = r.IntN(rows), r.IntN(nb)
	}
	c.Up, _ = makeWeights(c.Type, c.K, rows, w, r)
	c.B = makeActs(nact, c.K, a, r)
	c.Profile += "/" + c.GLU
}

// gluValues bounds a GLU case's weights per matmul (K·N, or K·N·E values), so that
// generating (quantizing) and simulating a sweep of thousands of cases takes minutes.
const gluValues = 1 << 20

// gluIDValues is gluValues for the E experts of a gluid2 case (gluid: gluValues).
const gluIDValues = 1 << 19

func sweepGLUDense(c *SweepCase, r *rand.Rand) {
	c.Op = string(golden.OpMulMatGLU)
	c.Type = SweepMMVQTypes[c.Index%len(SweepMMVQTypes)]
	c.M = 1
	sweepGLUShape(c, r)
	qk := c.Type.BlockSize()
	for c.K > qk && c.K*c.N > gluValues {
		c.K = max(qk, c.K/2/qk*qk)
	}
	sweepGLUOp(c, r)
	sweepGLUData(c, r, c.N, 1)
}

func sweepGLUID(c *SweepCase, r *rand.Rand, raceFree bool) {
	c.Op = string(golden.OpMulMatIDGLU)
	c.Type = SweepMMVQTypes[c.Index%len(SweepMMVQTypes)]
	c.T = 1
	c.E = pick(r, 4, 4, 8, 16, 32, 64, 128)
	c.U = 1 + r.IntN(min(8, c.E))
	if r.IntN(3) == 0 {
		c.B1 = 1
	} else {
		c.B1 = c.U
	}
	sweepGLUShape(c, r)
	qk := c.Type.BlockSize()
	bound := gluValues
	if raceFree {
		bound = gluIDValues
	}
	for c.K > qk && c.K*c.N*c.E > bound {
		c.K = max(qk, c.K/2/qk*qk)
	}
	for c.N > 1 && c.K*c.N*c.E > bound {
		c.N = c.N * 3 / 4
	}
	if raceFree && c.U > 1 {
		// ggml's one-token mul_mat_vec_q with ids races when rows_per_block (small_k:
		// nwarps, at most 8) does not divide N and there are several slots
		// (sim/mmvq.IDWriteRace): its result is undefined, so no such case is made.
		c.N = max(8, c.N/8*8)
	}
	routing := pick(r, "uniform", "uniform", "descending", "low")
	c.IDs = make([]int32, c.U)
	switch routing {
	case "uniform":
		for k, e := range r.Perm(c.E)[:c.U] {
			c.IDs[k] = int32(e)
		}
	case "descending": // the last U experts, highest first
		for k := range c.IDs {
			c.IDs[k] = int32(c.E - 1 - k)
		}
	case "low": // the first U experts in a random order
		for k, e := range r.Perm(c.U) {
			c.IDs[k] = int32(e)
		}
	}
	sweepGLUOp(c, r)
	sweepGLUData(c, r, c.N*c.E, c.B1)
	c.Profile += "/" + routing
}
