package sim

import "math"

// The GLU epilogues of ggml's CUDA backend (ggml-cuda/unary.cuh: ggml_cuda_op_silu_single,
// ggml_cuda_op_gelu_single, ggml_cuda_op_swiglu_oai_single) as nvcc 13.0 -use_fast_math
// compiles them for sm_90. Every operation below is one SASS instruction of the fused
// MMVQ epilogue (mmvq.cu, mul_mat_vec_q<..., has_fusion=true>) and of the unfused kernels
// (unary.cu: unary_gated_op_kernel<op_silu/op_gelu>, swiglu_oai_kernel), which were read
// from the H200 build's objects and are the same sequence (gpu/testdata/h200-mufu/README.md):
//
//	silu(x)  FMUL.FTZ t, x, -log2e; MUFU.EX2 t; FADD.FTZ t, t, 1; MUFU.RCP t; FMUL.FTZ x, x, t
//	gelu(x)  FMUL.FTZ a, x, 0.044715; FMUL.FTZ s, x, sqrt(2/pi); FFMA.FTZ a, x, a, 1;
//	         FMUL.FTZ s, a, s; MUFU.TANH s; FADD.FTZ s, s, 1; FMUL.FTZ h, x, 0.5; FMUL.FTZ h, h, s
//	oai      FMNMX x = min(x, limit); FMNMX g = max(min(g, limit), -limit); FMUL.FTZ t, x, alpha;
//	         FMUL.FTZ t, t, -log2e; MUFU.EX2 t; FADD.FTZ t, t, 1; MUFU.RCP t; FMUL.FTZ x, x, t;
//	         FADD.FTZ g, g, 1; FMUL.FTZ out, x, g
var (
	negLog2e     = math.Float32frombits(Log2eBits | 0x80000000) // -1.4426950216293334961
	geluCoefA    = float32(0.044715)                            // 0.044714998453855514526
	sqrt2OverPi  = float32(0.79788456080286535587989211986876)  // 0.79788458347320556641
	oaiAlphaDflt = float32(1.702)
	oaiLimitDflt = float32(7)
)

// SiLU returns ggml_cuda_op_silu_single(x) = x / (1 + expf(-x)) as compiled (see above).
func SiLU(x float32) float32 {
	return Mul(x, Rcp(Add(Ex2(Mul(x, negLog2e)), 1)))
}

// GELU returns ggml_cuda_op_gelu_single(x) = 0.5x(1 + tanhf(sqrt(2/pi)·x·(1 + 0.044715x²)))
// as compiled: the inner 1 + 0.044715·x·x is one FFMA of x and 0.044715x.
func GELU(x float32) float32 {
	a := FMA(x, Mul(x, geluCoefA), 1)
	s := Mul(a, Mul(x, sqrt2OverPi))
	return Mul(Mul(x, 0.5), Add(Tanh(s), 1))
}

// SwiGLUOAI returns ggml_cuda_op_swiglu_oai_single(x, g, alpha, limit) as compiled:
// x = fminf(x, limit), g = fmaxf(fminf(g, limit), -limit), x/(1 + expf(-x·alpha))·(1 + g).
func SwiGLUOAI(x, g, alpha, limit float32) float32 {
	x = FMinf(x, limit)
	g = FMaxf(FMinf(g, limit), Neg(limit))
	t := Add(Ex2(Mul(Mul(x, alpha), negLog2e)), 1)
	return Mul(Mul(x, Rcp(t)), Add(g, 1))
}

// GLUOp names the GLU of a gate/up pair, as ggml_glu_op does.
type GLUOp int

// The GLU ops ggml's CUDA backend fuses into MMVQ (ggml-cuda.cu,
// ggml_cuda_should_fuse_mul_mat: valid_glu_ops), with ggml's enum values.
const (
	GLUGeGLU     GLUOp = 1 // GGML_GLU_OP_GEGLU: gelu(gate)·up
	GLUSwiGLU    GLUOp = 2 // GGML_GLU_OP_SWIGLU: silu(gate)·up
	GLUSwiGLUOAI GLUOp = 3 // GGML_GLU_OP_SWIGLU_OAI
)

// GLUUnfused returns what ggml's unfused GLU kernel writes for one output, from the f32
// outputs gate and up of the two matmuls: gelu(gate)·up, silu(gate)·up, or
// swiglu_oai(gate, up, alpha, limit) with the op's own alpha and limit.
func GLUUnfused(op GLUOp, gate, up, alpha, limit float32) float32 {
	switch op {
	case GLUGeGLU:
		return Mul(GELU(gate), up)
	case GLUSwiGLU:
		return Mul(SiLU(gate), up)
	default:
		return SwiGLUOAI(gate, up, alpha, limit)
	}
}

// GLUFused returns what the fused MMVQ epilogue (mmvq.cu, has_fusion) writes from the
// reduced sums of the up and gate rows: result = up + upBias, gate = gate + gateBias
// (two FADD.FTZ, executed with bias 0 when the graph has none: so a -0 sum becomes +0),
// then result·gelu(gate), result·silu(gate), or swiglu_oai(gate, result) — the last with
// its default alpha 1.702 and limit 7 whatever the op's parameters are, since the fused
// kernel calls ggml_cuda_op_swiglu_oai_single(gate_value, result) without them and
// ggml_cuda_should_fuse_mul_mat does not check them: fused and unfused SWIGLU_OAI differ
// when alpha or limit is not the default.
func GLUFused(op GLUOp, gate, up, gateBias, upBias float32) float32 {
	result := Add(up, upBias)
	g := Add(gate, gateBias)
	switch op {
	case GLUGeGLU:
		return Mul(result, GELU(g))
	case GLUSwiGLU:
		return Mul(result, SiLU(g))
	default:
		return SwiGLUOAI(g, result, oaiAlphaDflt, oaiLimitDflt)
	}
}
