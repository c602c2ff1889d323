package tiling

import (
	"fmt"

	"github.com/ggsim/ggsim/quant"
	"github.com/ggsim/ggsim/sim"
)

// MMVQMaxBatchSize is MMVQ_MAX_BATCH_SIZE (mmvq.cuh).
const MMVQMaxBatchSize = 8

// MMQDP4AMaxBatchSize is MMQ_DP4A_MAX_BATCH_SIZE (mmq.cuh).
const MMQDP4AMaxBatchSize = 64

// MMVFMaxBatchSize is MMVF_MAX_BATCH_SIZE (mmvf.cuh).
const MMVFMaxBatchSize = 8

// MMF rows per block (mmf.cuh MMF_ROWS_PER_BLOCK, MMF_ROWS_PER_BLOCK_CDNA).
const (
	MMFRowsPerBlock     = 32
	MMFRowsPerBlockCDNA = 64
)

// Shape is what ggml's dispatch reads of a MUL_MAT or MUL_MAT_ID. The model assumes
// what the golden files and the simulator assume: src0 contiguous (nb[0] = type size,
// rows packed), src1 and dst f32, no FORCE_CUBLAS build option (GGML_CUDA_FORCE_MMQ is
// sim.Device.ForceMMQ), no
// Hadamard hint, no "bad padding clear" (a src0 view in a compute buffer), no
// GGML_PREC_F32 or cuBLAS compute-type override (they change nothing here).
type Shape struct {
	// K is ne00: values per src0 row.
	K int64
	// N is ne01: src0 rows (outputs per column).
	N int64
	// M is ne11 (columns of src1) for MUL_MAT, and the number of tokens ne12 (= ne2 of
	// dst) for MUL_MAT_ID.
	M int64
	// Experts is ne02 of src0 for MUL_MAT_ID; 0 means MUL_MAT.
	Experts int64
	// Batch is ne02*ne03 of src0 for MUL_MAT (0 is taken as 1), taken to equal
	// ne12*ne13 of src1 (no broadcasting); ignored for MUL_MAT_ID.
	Batch int64
}

// ID reports whether the shape is a MUL_MAT_ID.
func (s Shape) ID() bool { return s.Experts > 0 }

func (s Shape) batch() int64 {
	if s.Batch <= 0 {
		return 1
	}
	return s.Batch
}

// Check returns an error saying what is wrong with s for a src0 of type t, or nil.
func (s Shape) Check(t quant.Type) error {
	if !t.Valid() {
		return fmt.Errorf("tiling: %v is not a ggml tensor type", t)
	}
	if s.K <= 0 || s.N <= 0 || s.M <= 0 || s.Experts < 0 || s.Batch < 0 {
		return fmt.Errorf("tiling: shape K=%d N=%d M=%d experts=%d batch=%d: K, N, M must be positive, experts and batch non-negative", s.K, s.N, s.M, s.Experts, s.Batch)
	}
	if _, err := t.RowSize(s.K); err != nil {
		return fmt.Errorf("tiling: %w", err)
	}
	return nil
}

// Decision is a dispatch decision with the reason, in words, that ggml's code gives.
type Decision struct {
	Kernel Kernel
	Reason string
}

// SupportsMulMat is the MUL_MAT / MUL_MAT_ID case of ggml_backend_cuda_device_supports_op
// (ggml-cuda.cu) for a src0 of type t and an f32 src1 with contiguous rows: true for
// f32, f16, bf16, q1_0, q2_0, q4_0, q4_1, q5_0, q5_1, q8_0, mxfp4, nvfp4, q2_K..q6_K,
// q8_K and the iq types; false for q8_1, tq1_0, tq2_0, the integer types, f64 and
// removed ids. (The MUSA-only exceptions are not modelled.)
func SupportsMulMat(t quant.Type) bool {
	return supportedTypes[t]
}

var supportedTypes = map[quant.Type]bool{
	quant.F32: true, quant.F16: true, quant.Q1_0: true, quant.Q2_0: true, quant.Q4_0: true,
	quant.Q4_1: true, quant.Q5_0: true, quant.Q5_1: true, quant.Q8_0: true, quant.MXFP4: true,
	quant.NVFP4: true, quant.Q2_K: true, quant.Q3_K: true, quant.Q4_K: true, quant.Q5_K: true,
	quant.Q6_K: true, quant.Q8_K: true, quant.IQ1_M: true, quant.IQ1_S: true, quant.IQ2_S: true,
	quant.IQ2_XS: true, quant.IQ2_XXS: true, quant.IQ3_S: true, quant.IQ3_XXS: true,
	quant.IQ4_NL: true, quant.IQ4_XS: true, quant.BF16: true,
}

// hasConverter reports whether convert.cu's ggml_get_to_fp16_cuda / ggml_get_to_fp32_cuda
// have a converter for t: every supported type but q8_K.
func hasConverter(t quant.Type) bool { return supportedTypes[t] && t != quant.Q8_K }

// Decide returns the path ggml's CUDA backend takes for a MUL_MAT (s.Experts == 0) or
// MUL_MAT_ID of a src0 of type t on dev. A shape that fails Check is an error.
func Decide(dev sim.Device, t quant.Type, s Shape) (Decision, error) {
	if err := s.Check(t); err != nil {
		return Decision{}, err
	}
	if s.ID() {
		return mulMatID(dev, t, s), nil
	}
	return mulMat(dev, t, s), nil
}

// MulMat is Decide for MUL_MAT: ggml_cuda_mul_mat (ggml-cuda.cu) with
// should_use_mmvf, the transposed-vector case, should_use_mmf, should_use_mmvq,
// should_use_mmq, else cuBLAS. s.Experts is ignored.
func MulMat(dev sim.Device, t quant.Type, s Shape) Decision {
	s.Experts = 0
	return mulMat(dev, t, s)
}

// MulMatID is Decide for MUL_MAT_ID: ggml_cuda_mul_mat_id (ggml-cuda.cu) with
// s.M tokens and s.Experts experts (taken as 1 if not positive).
func MulMatID(dev sim.Device, t quant.Type, s Shape) Decision {
	if s.Experts <= 0 {
		s.Experts = 1
	}
	return mulMatID(dev, t, s)
}

func unsupported(t quant.Type) Decision {
	return Decision{KernelUnsupported, fmt.Sprintf("ggml_backend_cuda_device_supports_op: src0 type %v is not in the MUL_MAT / MUL_MAT_ID list (ggml-cuda.cu); the scheduler runs the op elsewhere", t)}
}

func mulMat(dev sim.Device, t quant.Type, s Shape) Decision {
	if !SupportsMulMat(t) {
		return unsupported(t)
	}
	cc := dev.CC
	if ShouldUseMMVF(dev, t, s.K, s.N, s.batch(), s.M) {
		return Decision{KernelMMVF, fmt.Sprintf("ggml_cuda_should_use_mmvf(%v, cc=%d, ne11=%d) is true: mul_mat_vec_f", t, cc, s.M)}
	}
	if s.N == 1 && s.M > MMVFMaxBatchSize && s.batch() == 1 && t == quant.F32 && ShouldUseMMVF(dev, quant.F32, s.K, s.M, 1, 1) {
		return Decision{KernelMMVF, fmt.Sprintf("ne01 == 1 and ne11=%d > MMVF_MAX_BATCH_SIZE: the transposed vector case, mul_mat_vec_f with src0 and src1 swapped", s.M)}
	}
	if ShouldUseMMF(dev, t, dev.WarpSize, s.K, s.N, s.M, false) {
		return Decision{KernelMMF, fmt.Sprintf("ggml_cuda_should_use_mmf(%v, cc=%d, ne11=%d) is true: mul_mat_f", t, cc, s.M)}
	}
	if ShouldUseMMVQ(t, cc, s.M) {
		if !HasMMVQKernel(t) {
			return Decision{KernelAbort, fmt.Sprintf("ggml_cuda_should_use_mmvq(%v, ne11=%d) is true but mul_mat_vec_q_switch_type has no case for %v: GGML_ABORT (mmvq.cu)", t, s.M, t)}
		}
		return Decision{KernelMMVQ, fmt.Sprintf("ggml_cuda_should_use_mmvq(%v, cc=%d, ne11=%d) is true", t, cc, s.M)}
	}
	if ShouldUseMMQ(dev, t, s.M, 0) {
		return Decision{KernelMMQ, fmt.Sprintf("should_use_mmvq is false for ne11=%d; ggml_cuda_should_use_mmq(%v, cc=%d) is true", s.M, t, cc)}
	}
	if !hasConverter(t) {
		return Decision{KernelAbort, fmt.Sprintf("%v falls through to cuBLAS, which has no converter for it: GGML_ASSERT(convert_func != nullptr) in ggml_cuda_mul_mat_cublas_impl", t)}
	}
	if isQuantized(t) {
		return Decision{KernelCuBLAS, fmt.Sprintf("neither MMVQ nor MMQ for %v with ne11=%d on cc=%d: ggml dequantizes and calls cuBLAS", t, s.M, cc)}
	}
	return Decision{KernelCuBLAS, fmt.Sprintf("neither mul_mat_vec_f nor mul_mat_f for %v with ne11=%d on cc=%d: cuBLAS GEMM", t, s.M, cc)}
}

func mulMatID(dev sim.Device, t quant.Type, s Shape) Decision {
	if !SupportsMulMat(t) {
		return unsupported(t)
	}
	cc, nTokens := dev.CC, s.M
	if nTokens <= MMVQMaxBatchSize {
		if isQuantized(t) {
			if max := MMVQMMIDMaxBatch(t, cc); nTokens <= int64(max) {
				if !HasMMVQKernel(t) {
					return Decision{KernelAbort, fmt.Sprintf("%d tokens <= get_mmvq_mmid_max_batch: mul_mat_vec_q_switch_type has no case for %v: GGML_ABORT (mmvq.cu)", nTokens, t)}
				}
				if nTokens == 1 {
					return Decision{KernelMMVQ, "one token: mul_mat_vec_q with ids, one channel per expert slot"}
				}
				return Decision{KernelMMVQMoE, fmt.Sprintf("%d tokens <= get_mmvq_mmid_max_batch(%v, cc=%d) = %d: mul_mat_vec_q_moe", nTokens, t, cc, max)}
			}
		} else if sim.CCIsAMD(cc) {
			return Decision{KernelMMVF, fmt.Sprintf("%d tokens <= MMVQ_MAX_BATCH_SIZE of float %v on AMD: mul_mat_vec_f with ids", nTokens, t)}
		}
	}
	if ShouldUseMMQ(dev, t, nTokens, s.Experts) {
		return Decision{KernelMMQ, fmt.Sprintf("%d tokens: ggml_cuda_should_use_mmq(%v, cc=%d, n_experts=%d) is true: MMQ in ID mode", nTokens, t, cc, s.Experts)}
	}
	if ShouldUseMMF(dev, t, 32, s.K, s.N, nTokens, true) {
		return Decision{KernelMMF, fmt.Sprintf("%d tokens: ggml_cuda_should_use_mmf(%v, cc=%d, mul_mat_id) is true: mul_mat_f with ids", nTokens, t, cc)}
	}
	return Decision{KernelMMIDHostFallback, fmt.Sprintf("%d tokens of %v on cc=%d: neither MMVQ, MMQ nor MMF: ggml's host-synchronising fallback (one ggml_cuda_mul_mat per expert)", nTokens, t, cc)}
}

// ShouldUseMMVF is ggml_cuda_should_use_mmvf (mmvf.cu) for a contiguous src0 of type t
// with ne00 = k, ne01 = n and ne02*ne03 = batch.
func ShouldUseMMVF(dev sim.Device, t quant.Type, k, n, batch, ne11 int64) bool {
	if k%2 != 0 { // src0_ne[0] % 2; contiguous rows of even length are then 2*ts aligned
		return false
	}
	cc := dev.CC
	hc := dev.HighestCompiledArch()
	ampere := sim.AmpereMMAAvailable(cc, hc)
	small := n <= 512 || batch == 1
	switch t {
	case quant.F32:
		if sim.CCIsNVIDIA(cc) {
			if ampere {
				return ne11 <= 3
			}
			if cc >= sim.CCTuring {
				return ne11 <= 4
			}
			return ne11 <= 3
		} else if sim.CCIsAMD(cc) {
			if sim.FP32MMAHardwareAvailable(cc) {
				return ne11 <= 3
			}
			return ne11 <= 8
		}
		return ne11 <= 8
	case quant.F16:
		if sim.CCIsNVIDIA(cc) {
			if ampere {
				return small && ne11 == 1
			}
			if cc >= sim.CCAdaLovelace {
				return small && ne11 <= 4
			}
			if sim.FP16MMAHardwareAvailable(cc) {
				return small && ne11 <= 3
			}
			return ne11 <= 8
		} else if sim.CCIsAMD(cc) {
			if sim.FP16MMAHardwareAvailable(cc) {
				if sim.CCIsRDNA3(cc) {
					return ne11 <= 3
				}
				if sim.CCIsRDNA4(cc) {
					return ne11 <= 5
				}
				return ne11 <= 2
			}
			return ne11 <= 8
		}
		return ne11 <= 8
	case quant.BF16:
		if sim.CCIsNVIDIA(cc) {
			if ampere {
				return small && ne11 == 1
			}
			if cc >= sim.CCAdaLovelace {
				return small && ne11 <= 4
			}
			if sim.BF16MMAHardwareAvailable(cc) {
				return small && ne11 <= 3
			}
			return ne11 <= 8
		} else if sim.CCIsAMD(cc) {
			if sim.BF16MMAHardwareAvailable(cc) {
				return ne11 <= 3
			}
			return ne11 <= 8
		}
		return ne11 <= 8
	}
	return false
}

// ShouldUseMMF is ggml_cuda_should_use_mmf (mmf.cu) for a contiguous src0 of type t with
// ne00 = k, ne01 = n, src1_ncols columns (MUL_MAT) or tokens (MUL_MAT_ID), with the warp
// size ggml passes (the device's for MUL_MAT, WARP_SIZE = 32 for MUL_MAT_ID).
func ShouldUseMMF(dev sim.Device, t quant.Type, warpSize int, k, n, src1Ncols int64, mulMatID bool) bool {
	if isQuantized(t) || !t.Valid() {
		return false
	}
	ts := int64(t.TypeSize())
	if ts == 0 || ts > 4 || k%(int64(warpSize)*(4/ts)) != 0 {
		return false
	}
	if k%2 != 0 { // nb[1] % (2*ts) for contiguous rows
		return false
	}
	cc := dev.CC
	rpb := int64(MMFRowsPerBlock)
	if sim.CCIsCDNA(cc) {
		rpb = MMFRowsPerBlockCDNA
	}
	if n%rpb != 0 {
		return false
	}
	if sim.CCIsCDNA3(cc) && t == quant.BF16 {
		return false
	}
	if mulMatID {
		if n <= 1024 && src1Ncols > 512 {
			return false
		} else if n > 1024 && src1Ncols > 128 {
			return false
		}
	} else {
		switch {
		case sim.CCIsRDNA3_0(cc) && src1Ncols > 8:
			return false
		case sim.CCIsCDNA2(cc) && (t == quant.F16 || t == quant.BF16):
			return false
		case sim.CCIsCDNA1(cc) && (t == quant.F16 || t == quant.BF16):
			return false
		case src1Ncols > 16:
			return false
		}
	}
	hc := dev.HighestCompiledArch()
	switch t {
	case quant.F32:
		return sim.AmpereMMAAvailable(cc, hc) || sim.AMDMFMAAvailable(cc)
	case quant.F16:
		return sim.VoltaMMAAvailable(cc, hc) || dev.TuringMMA() || sim.AMDWMMAAvailable(cc) || sim.AMDMFMAAvailable(cc)
	case quant.BF16:
		return sim.AmpereMMAAvailable(cc, hc) || sim.AMDWMMAAvailable(cc) || sim.AMDMFMAAvailable(cc)
	}
	return false
}

// ShouldUseMMVQ is ggml_cuda_should_use_mmvq (mmvq.cu).
func ShouldUseMMVQ(t quant.Type, cc int, ne11 int64) bool {
	if !isQuantized(t) {
		return false
	}
	switch {
	case sim.CCIsNVIDIA(cc) && cc == sim.CCAdaLovelace: // tuned on RTX 4090
		switch t {
		case quant.Q2_K:
			return ne11 <= 4
		case quant.Q3_K:
			return ne11 <= 6
		case quant.Q4_K, quant.Q5_K:
			return ne11 <= 7
		}
	case sim.CCIsNVIDIA(cc) && cc == sim.CCBlackwell: // tuned on RTX 5090
		switch t {
		case quant.Q2_K, quant.Q3_K, quant.Q4_K, quant.Q5_K:
			return ne11 <= 5
		case quant.Q6_K:
			return ne11 <= 7
		}
	case sim.CCIsNVIDIA(cc) && cc == sim.CCDGXSpark: // tuned on GB10
		if t == quant.Q2_K {
			return ne11 <= 6
		}
	case sim.CCIsCDNA(cc):
		if sim.CCIsCDNA1(cc) {
			switch t {
			case quant.Q4_0, quant.Q4_1, quant.Q5_1:
				return ne11 <= 7
			case quant.Q8_0:
				return ne11 <= 6
			case quant.Q2_K:
				return ne11 <= 4
			case quant.Q3_K:
				return ne11 <= 3
			case quant.Q4_K:
				return ne11 <= 2
			case quant.Q5_K:
				return ne11 <= 3
			case quant.Q6_K:
				return ne11 <= 4
			case quant.IQ1_S:
				return ne11 <= 5
			case quant.IQ2_XXS, quant.IQ3_S, quant.IQ4_XS:
				return ne11 <= 6
			}
			return ne11 <= MMVQMaxBatchSize
		}
		switch t { // tuned for CDNA2
		case quant.Q2_K:
			return ne11 <= 5
		case quant.Q3_K, quant.Q4_K, quant.Q5_K:
			return ne11 <= 3
		case quant.Q6_K:
			return ne11 <= 5
		}
	}
	return ne11 <= MMVQMaxBatchSize
}

// MMVQMMIDMaxBatch is the host function get_mmvq_mmid_max_batch (mmvq.cu): the largest
// token count for which MUL_MAT_ID uses MMVQ.
func MMVQMMIDMaxBatch(t quant.Type, cc int) int {
	if sim.CCIsNVIDIA(cc) {
		if cc == sim.CCVolta || cc >= sim.CCAdaLovelace {
			return MMVQMaxBatchSize
		}
		if cc >= sim.CCTuring {
			return lookup(t, mmidTuringPlus)
		}
		return lookup(t, mmidPascalOlder)
	}
	if sim.CCIsAMD(cc) {
		switch {
		case sim.CCIsRDNA4(cc):
			return lookup(t, mmidRDNA4)
		case sim.CCIsRDNA3(cc):
			return lookup(t, mmidRDNA3)
		case sim.CCIsRDNA1(cc) || sim.CCIsRDNA2(cc):
			return lookup(t, mmidRDNA12)
		case sim.CCIsCDNA(cc):
			return lookup(t, mmidCDNA)
		case sim.CCIsGCN(cc):
			return lookup(t, mmidGCN)
		}
	}
	return MMVQMaxBatchSize
}

func lookup(t quant.Type, m map[quant.Type]int) int {
	if v, ok := m[t]; ok {
		return v
	}
	return MMVQMaxBatchSize
}

// The get_mmvq_mmid_max_batch_* tables of mmvq.cu; types not listed use MMVQMaxBatchSize.
var (
	mmidPascalOlder = map[quant.Type]int{
		quant.IQ1_S: 6, quant.IQ1_M: 6, quant.IQ2_S: 4, quant.IQ2_XS: 5, quant.IQ2_XXS: 5,
		quant.IQ3_S: 4, quant.IQ3_XXS: 4, quant.IQ4_NL: 6, quant.IQ4_XS: 5, quant.MXFP4: 4,
		quant.NVFP4: 4, quant.Q2_K: 4, quant.Q3_K: 4, quant.Q4_0: 6, quant.Q4_1: 6,
		quant.Q4_K: 5, quant.Q5_0: 6, quant.Q5_1: 6, quant.Q5_K: 5, quant.Q6_K: 4, quant.Q8_0: 4,
	}
	mmidTuringPlus = map[quant.Type]int{
		quant.IQ2_S: 7, quant.IQ3_S: 6, quant.IQ3_XXS: 7, quant.MXFP4: 7, quant.NVFP4: 8,
		quant.Q2_K: 7, quant.Q3_K: 5,
	}
	mmidGCN = map[quant.Type]int{
		quant.IQ1_S: 5, quant.IQ1_M: 5, quant.IQ2_S: 4, quant.IQ2_XS: 4, quant.IQ2_XXS: 4,
		quant.IQ3_S: 4, quant.IQ3_XXS: 4, quant.IQ4_NL: 6, quant.IQ4_XS: 4, quant.Q2_K: 4,
		quant.Q3_K: 4, quant.Q4_0: 5, quant.Q4_1: 5, quant.Q4_K: 4, quant.Q5_K: 4,
		quant.Q6_K: 4, quant.Q8_0: 4,
	}
	mmidCDNA = map[quant.Type]int{
		quant.IQ2_S: 5, quant.IQ2_XS: 5, quant.IQ2_XXS: 5, quant.IQ3_S: 4, quant.IQ3_XXS: 5,
	}
	mmidRDNA12 = map[quant.Type]int{
		quant.IQ2_S: 4, quant.IQ2_XS: 4, quant.IQ2_XXS: 4, quant.IQ3_S: 4, quant.IQ3_XXS: 4,
		quant.Q2_K: 7, quant.Q3_K: 4, quant.Q4_K: 5, quant.Q5_K: 6, quant.Q6_K: 5,
	}
	mmidRDNA3 = map[quant.Type]int{
		quant.IQ1_S: 6, quant.IQ1_M: 6, quant.IQ2_S: 4, quant.IQ2_XS: 4, quant.IQ2_XXS: 4,
		quant.IQ3_S: 4, quant.IQ3_XXS: 4, quant.IQ4_NL: 6, quant.IQ4_XS: 6, quant.Q4_K: 4,
		quant.Q5_K: 4, quant.Q6_K: 4,
	}
	mmidRDNA4 = map[quant.Type]int{
		quant.IQ1_S: 7, quant.IQ1_M: 7, quant.IQ2_S: 4, quant.IQ2_XS: 4, quant.IQ2_XXS: 4,
		quant.IQ3_S: 4, quant.IQ3_XXS: 4, quant.IQ4_NL: 7, quant.IQ4_XS: 5, quant.MXFP4: 5,
		quant.NVFP4: 5, quant.Q3_K: 4, quant.Q4_0: 7, quant.Q4_1: 7, quant.Q4_K: 4,
		quant.Q5_0: 7, quant.Q5_1: 7, quant.Q5_K: 5, quant.Q6_K: 5, quant.Q8_0: 7,
	}
)

// mmqTypes are the types ggml_cuda_should_use_mmq accepts (IQ1_M has no MMQ).
var mmqTypes = map[quant.Type]bool{
	quant.Q1_0: true, quant.Q2_0: true, quant.Q4_0: true, quant.Q4_1: true, quant.Q5_0: true,
	quant.Q5_1: true, quant.Q8_0: true, quant.Q2_K: true, quant.Q3_K: true, quant.Q4_K: true,
	quant.Q5_K: true, quant.Q6_K: true, quant.IQ1_S: true, quant.IQ2_XXS: true,
	quant.IQ2_XS: true, quant.IQ2_S: true, quant.IQ3_XXS: true, quant.IQ3_S: true,
	quant.IQ4_XS: true, quant.IQ4_NL: true, quant.MXFP4: true, quant.NVFP4: true,
}

// ShouldUseMMQ is ggml_cuda_should_use_mmq (mmq.cu) without the FORCE_CUBLAS build
// option; GGML_CUDA_FORCE_MMQ is dev.ForceMMQ.
func ShouldUseMMQ(dev sim.Device, t quant.Type, ne11, nExperts int64) bool {
	if !mmqTypes[t] {
		return false
	}
	if dev.SmemPerBlockOptin < 48*1024 {
		return false
	}
	cc := dev.CC
	hc := dev.HighestCompiledArch()
	if dev.TuringMMA() {
		return true
	}
	if hc < sim.CCDP4A {
		return false
	}
	if dev.ForceMMQ {
		return true
	}
	if sim.CCIsNVIDIA(cc) {
		return !sim.FP16MMAHardwareAvailable(cc) || ne11 < MMQDP4AMaxBatchSize
	}
	if sim.AMDMFMAAvailable(cc) {
		if sim.CCIsCDNA3(cc) {
			return true
		}
		if nExperts > 64 || ne11 <= 128 {
			return true
		}
		switch t {
		case quant.Q4_0, quant.Q4_1, quant.Q5_0, quant.Q5_1:
			return true
		case quant.Q4_K, quant.Q5_K:
			return ne11 <= 256
		}
		return false
	}
	if sim.AMDWMMAAvailable(cc) {
		if sim.CCIsRDNA3(cc) {
			if nExperts >= 64 {
				return true
			}
			switch t {
			case quant.Q2_K:
				return ne11 <= 128
			case quant.Q6_K:
				if sim.CCIsRDNA3_0(cc) {
					return ne11 <= 128
				}
				return ne11 <= 256
			case quant.IQ2_XS, quant.IQ2_S:
				return sim.CCIsRDNA3_5(cc) || ne11 <= 128
			}
			return true
		}
		return true // RDNA4
	}
	if cc == sim.CCVega {
		return nExperts > 0
	}
	return !sim.CCIsCDNA(cc) || ne11 < MMQDP4AMaxBatchSize
}

// isQuantized is ggml_is_quantized for a valid type.
func isQuantized(t quant.Type) bool {
	tr, ok := t.Traits()
	return ok && tr.Quantized && !tr.Removed
}
