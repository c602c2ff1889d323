package ggml

import (
	"fmt"

	"github.com/ggsim/ggsim/gpu/internal/dl"
	"github.com/ggsim/ggsim/internal/errs"
	"github.com/ggsim/ggsim/quant"
)

// ErrNotBuilt is returned by Load in a build without the cuda tag. It matches
// errors.ErrUnsupported.
var ErrNotBuilt = dl.ErrNotBuilt

// ErrUnsupportedOp is wrapped by the error of an operation ggml refuses, made at the
// point it refuses: ggml_backend_supports_op is false for the node, or
// ggml_quantize_chunk cannot produce the type. It matches errors.ErrUnsupported, so the
// verifier reports such a case UNSUPPORTED.
var ErrUnsupportedOp = errs.Unsupported("not supported by ggml")

// ErrOtherDevice is wrapped by the error of a call of Backend.Impl for a simulated device
// other than the backend's GPU (its results would be another device's). It matches
// errors.ErrUnsupported.
var ErrOtherDevice = errs.Unsupported("the backend runs on another device")

// BackendKind selects a ggml backend.
type BackendKind int

const (
	CPU  BackendKind = iota // ggml_backend_cpu_init
	CUDA                    // ggml_backend_cuda_init(Device)
)

// BackendSpec names a backend: CUDA device i, or the CPU with a thread count.
type BackendSpec struct {
	Kind    BackendKind
	Device  int // CUDA device ordinal
	Threads int // CPU threads; 0 = ggml's default
}

func (s BackendSpec) String() string {
	if s.Kind == CUDA {
		return fmt.Sprintf("CUDA%d", s.Device)
	}
	return "CPU"
}

// DeviceInfo describes what a backend runs on, in the terms of the golden schema.
type DeviceInfo struct {
	Backend     string // ggml_backend_name, e.g. "CUDA0" or "CPU"
	Description string // ggml_backend_cuda_get_device_description, or the CPU's
	Name        string // driver device name ("NVIDIA H200"); "" for the CPU
	CC          int    // compute capability as ggml writes it (900); 0 for the CPU
	SMCount     int    // multiprocessors (the driver API's count); 0 for the CPU
	Driver      string // kernel driver version, e.g. "580.159.04"
	DriverAPI   int    // cuDriverGetVersion, e.g. 13000
	FreeMem     uint64 // ggml_backend_cuda_get_device_memory
	TotalMem    uint64
	GGMLVersion string // ggml_version()
	GGMLCommit  string // ggml_commit(): the commit the build says it is ("unknown" outside git)
}

// quantizable reports whether ggml_quantize_chunk handles t (ggml.c at d99724f2b141:
// every block type with a quantize_* function, plus f16, bf16 and f32); any other type
// makes ggml assert, so it is refused before the call.
func quantizable(t quant.Type) bool {
	switch t {
	case quant.Q1_0, quant.Q2_0, quant.Q4_0, quant.Q4_1, quant.Q5_0, quant.Q5_1, quant.Q8_0,
		quant.MXFP4, quant.NVFP4, quant.Q2_K, quant.Q3_K, quant.Q4_K, quant.Q5_K, quant.Q6_K,
		quant.TQ1_0, quant.TQ2_0, quant.IQ2_XXS, quant.IQ2_XS, quant.IQ3_XXS, quant.IQ3_S,
		quant.IQ2_S, quant.IQ1_S, quant.IQ1_M, quant.IQ4_NL, quant.IQ4_XS,
		quant.F16, quant.BF16, quant.F32:
		return true
	}
	return false
}

// requiresImatrix mirrors ggml_quantize_requires_imatrix.
func requiresImatrix(t quant.Type) bool {
	return t == quant.IQ2_XXS || t == quant.IQ2_XS || t == quant.IQ1_S
}

// checkQuantize validates Quantize's arguments and returns the output size.
func checkQuantize(t quant.Type, x []float32, rows, k int, imatrix []float32) (int64, error) {
	if !t.Valid() {
		return 0, fmt.Errorf("ggml: quantize: %v is not a ggml type", t)
	}
	if !quantizable(t) {
		return 0, fmt.Errorf("ggml: quantize: %w: ggml_quantize_chunk cannot produce %v", ErrUnsupportedOp, t)
	}
	if rows <= 0 || k <= 0 {
		return 0, fmt.Errorf("ggml: quantize %v: rows %d and row length %d must be positive", t, rows, k)
	}
	if int64(len(x)) != int64(rows)*int64(k) {
		return 0, fmt.Errorf("ggml: quantize %v: %d values given for %d rows of %d", t, len(x), rows, k)
	}
	if requiresImatrix(t) && imatrix == nil {
		return 0, fmt.Errorf("ggml: quantize %v: ggml requires an importance matrix for this type", t)
	}
	if imatrix != nil && len(imatrix) != k {
		return 0, fmt.Errorf("ggml: quantize %v: importance matrix of %d values, row length %d", t, len(imatrix), k)
	}
	rs, err := t.RowSize(int64(k))
	if err != nil {
		return 0, fmt.Errorf("ggml: quantize: %w", err)
	}
	return rs * int64(rows), nil
}

// checkMulMat validates MulMat's arguments: a is N rows of K values of type t, b is M
// columns of K float32.
func checkMulMat(t quant.Type, a []byte, k, n int, b []float32, m int) error {
	if err := checkWeightType(t); err != nil {
		return fmt.Errorf("ggml: mul_mat: %w", err)
	}
	if k <= 0 || n <= 0 || m <= 0 {
		return fmt.Errorf("ggml: mul_mat %v: K=%d N=%d M=%d must be positive", t, k, n, m)
	}
	rs, err := t.RowSize(int64(k))
	if err != nil {
		return fmt.Errorf("ggml: mul_mat: %w", err)
	}
	if int64(len(a)) != rs*int64(n) {
		return fmt.Errorf("ggml: mul_mat %v: a has %d bytes, %d rows of K=%d need %d", t, len(a), n, k, rs*int64(n))
	}
	if int64(len(b)) != int64(k)*int64(m) {
		return fmt.Errorf("ggml: mul_mat %v: b has %d values, K=%d by M=%d need %d", t, len(b), k, m, int64(k)*int64(m))
	}
	return nil
}

// checkMulMatID validates MulMatID's arguments (the shapes ggml_mul_mat_id asserts, and
// expert ids in [0, E), which ggml does not check).
func checkMulMatID(t quant.Type, as []byte, k, n, e int, b []float32, b1, tok int, ids []int32, u int) error {
	if err := checkWeightType(t); err != nil {
		return fmt.Errorf("ggml: mul_mat_id: %w", err)
	}
	if e <= 0 || b1 <= 0 || tok <= 0 || u <= 0 {
		return fmt.Errorf("ggml: mul_mat_id %v: E=%d B1=%d T=%d U=%d must be positive", t, e, b1, tok, u)
	}
	if u%b1 != 0 {
		return fmt.Errorf("ggml: mul_mat_id %v: U=%d experts per token is not a multiple of B1=%d", t, u, b1)
	}
	rs, err := t.RowSize(int64(k))
	if err != nil || k <= 0 || n <= 0 {
		return fmt.Errorf("ggml: mul_mat_id %v: K=%d N=%d: %v", t, k, n, err)
	}
	if int64(len(as)) != rs*int64(n)*int64(e) {
		return fmt.Errorf("ggml: mul_mat_id %v: as has %d bytes, E=%d experts of %d rows of K=%d need %d", t, len(as), e, n, k, rs*int64(n)*int64(e))
	}
	if int64(len(b)) != int64(k)*int64(b1)*int64(tok) {
		return fmt.Errorf("ggml: mul_mat_id %v: b has %d values, need K*B1*T = %d", t, len(b), int64(k)*int64(b1)*int64(tok))
	}
	if int64(len(ids)) != int64(u)*int64(tok) {
		return fmt.Errorf("ggml: mul_mat_id %v: ids has %d values, need U*T = %d", t, len(ids), int64(u)*int64(tok))
	}
	for i, id := range ids {
		if id < 0 || int(id) >= e {
			return fmt.Errorf("ggml: mul_mat_id %v: ids[%d] (slot %d of token %d) = %d is not an expert in [0, %d)", t, i, i%u, i/u, id, e)
		}
	}
	return nil
}

// checkWeightType accepts the types a matrix product's first operand may have: f32,
// f16, bf16 and the block types.
func checkWeightType(t quant.Type) error {
	tr, ok := t.Traits()
	if !ok || !t.Valid() {
		return fmt.Errorf("%v is not a ggml type", t)
	}
	if !tr.Quantized && t != quant.F32 && t != quant.F16 && t != quant.BF16 {
		return fmt.Errorf("%v cannot be a matrix product's weights", t)
	}
	return nil
}
