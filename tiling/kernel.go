package tiling

import "fmt"

// Kernel is the path ggml's CUDA backend takes for one MUL_MAT or MUL_MAT_ID, named after
// the kernel (or host routine) it launches. ggsim simulates only some of them; the others
// are named so that a caller can say precisely what it does not model.
type Kernel int

const (
	// KernelUnsupported: ggml_backend_cuda_device_supports_op returns false, so the
	// scheduler never gives the op to the CUDA backend (ggml-cuda.cu, case
	// GGML_OP_MUL_MAT / GGML_OP_MUL_MAT_ID).
	KernelUnsupported Kernel = iota
	// KernelMMVQ: quantize_q8_1 + mul_mat_vec_q (mmvq.cu), for MUL_MAT with 1..8 columns
	// and for MUL_MAT_ID with one token.
	KernelMMVQ
	// KernelMMVQMoE: quantize_q8_1 + mul_mat_vec_q_moe (mmvq.cu), MUL_MAT_ID with 2..8
	// tokens.
	KernelMMVQMoE
	// KernelMMQ: quantize_mmq_q8_1 + mul_mat_q (+ mul_mat_q_stream_k_fixup) (mmq.cuh).
	KernelMMQ
	// KernelMMVF: mul_mat_vec_f (mmvf.cu), ggml's float (f32/f16/bf16) vector kernel.
	KernelMMVF
	// KernelMMF: mul_mat_f (mmf.cuh), ggml's float tensor-core kernel for few columns.
	KernelMMF
	// KernelCuBLAS: ggml_cuda_mul_mat_cublas: convert src0 (dequantize a quantized one)
	// and call cuBLAS GEMM.
	KernelCuBLAS
	// KernelMMIDHostFallback: the MUL_MAT_ID path of ggml_cuda_mul_mat_id that copies
	// the ids to the host, sorts the tokens by expert, and runs one ggml_cuda_mul_mat
	// per expert (it synchronises the stream; ggml_cuda_mul_mat_id_needs_sync).
	KernelMMIDHostFallback
	// KernelAbort: the backend accepts the op but the path it takes aborts: GGML_ABORT
	// in mul_mat_vec_q_switch_type (mmvq.cu) or GGML_ASSERT(convert_func != nullptr) in
	// ggml_cuda_mul_mat_cublas_impl (ggml-cuda.cu) for a type with no kernel (q8_K).
	KernelAbort
	// KernelGP100FP16: the fp16 matrix-vector path of "patch 0007" (seed note 002,
	// mmvq-gp100.cu; not in ggml): activations converted to prescaled fp16, HFMA2 dot
	// products. Only DecideWith with Options.GP100FP16Path returns it (UseGP100FP16Path);
	// package fp16path simulates it.
	KernelGP100FP16
)

var kernelNames = [...]struct{ short, ggml string }{
	KernelUnsupported:      {"unsupported", "not supported by the CUDA backend (ggml_backend_cuda_device_supports_op is false)"},
	KernelMMVQ:             {"mmvq", "mul_mat_vec_q"},
	KernelMMVQMoE:          {"mmvq_moe", "mul_mat_vec_q_moe"},
	KernelMMQ:              {"mmq", "mul_mat_q"},
	KernelMMVF:             {"mmvf", "mul_mat_vec_f"},
	KernelMMF:              {"mmf", "mul_mat_f"},
	KernelCuBLAS:           {"cublas", "ggml_cuda_mul_mat_cublas (convert src0, cuBLAS GEMM)"},
	KernelMMIDHostFallback: {"mmid_host_fallback", "ggml_cuda_mul_mat_id host fallback (sort by expert on the host, one ggml_cuda_mul_mat per expert)"},
	KernelAbort:            {"abort", "accepted by the backend, but ggml aborts on the path it takes"},
	KernelGP100FP16:        {"gp100_fp16", "mul_mat_vec_gp100 fp16 path (patch 0007, mmvq-gp100.cu; not in ggml)"},
}

// String returns the short name: "mmvq", "mmvq_moe", "mmq", "mmvf", "mmf", "cublas",
// "mmid_host_fallback", "unsupported", "abort" or "gp100_fp16".
func (k Kernel) String() string {
	if k >= 0 && int(k) < len(kernelNames) {
		return kernelNames[k].short
	}
	return fmt.Sprintf("Kernel(%d)", int(k))
}

// GGMLName returns the name of the ggml kernel or host routine, or a sentence for the
// paths that launch none.
func (k Kernel) GGMLName() string {
	if k >= 0 && int(k) < len(kernelNames) {
		return kernelNames[k].ggml
	}
	return k.String()
}

// IsMMVQ reports whether k is one of the two mul_mat_vec_q kernels.
func (k Kernel) IsMMVQ() bool { return k == KernelMMVQ || k == KernelMMVQMoE }
