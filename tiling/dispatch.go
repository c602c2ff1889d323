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

// Kernel is the kernel family a quantized matmul dispatches to.
type Kernel int

const (
	// KernelNone: ggml would use a path ggsim does not model (cuBLAS after
	// dequantization, or the host-synchronising MUL_MAT_ID fallback).
	KernelNone Kernel = iota
	// KernelMMVQ: quantize_q8_1 + mul_mat_vec_q (mul_mat_vec_q_moe for MUL_MAT_ID with
	// 2..8 tokens).
	KernelMMVQ
	// KernelMMQ: quantize_mmq_q8_1 + mul_mat_q (+ stream-K fixup).
	KernelMMQ
)

func (k Kernel) String() string {
	switch k {
	case KernelMMVQ:
		return "mmvq"
	case KernelMMQ:
		return "mmq"
	}
	return "none"
}

// Decision is a dispatch decision with the reason, in words, that ggml's code gives.
type Decision struct {
	Kernel Kernel
	Reason string
}

// MulMat decides ggml_cuda_mul_mat for a quantized src0 of type t and ne11 src1 columns:
// should_use_mmvq first, then should_use_mmq, else cuBLAS.
func MulMat(dev sim.Device, t quant.Type, ne11 int64) Decision {
	if ShouldUseMMVQ(t, dev.CC, ne11) {
		return Decision{KernelMMVQ, fmt.Sprintf("ggml_cuda_should_use_mmvq(%v, cc=%d, ne11=%d) is true", t, dev.CC, ne11)}
	}
	if ShouldUseMMQ(dev, t, ne11, 0) {
		return Decision{KernelMMQ, fmt.Sprintf("should_use_mmvq is false for ne11=%d; ggml_cuda_should_use_mmq(%v, cc=%d) is true", ne11, t, dev.CC)}
	}
	return Decision{KernelNone, fmt.Sprintf("neither MMVQ nor MMQ for %v with ne11=%d on cc=%d: ggml dequantizes and calls cuBLAS", t, ne11, dev.CC)}
}

// MulMatID decides ggml_cuda_mul_mat_id for a quantized src0 of type t with nExperts
// experts (ne02) and nTokens tokens (ne2 of dst, ne12 of src1).
func MulMatID(dev sim.Device, t quant.Type, nTokens, nExperts int64) Decision {
	if isQuantized(t) && nTokens <= MMVQMaxBatchSize {
		if max := MMVQMMIDMaxBatch(t, dev.CC); nTokens <= int64(max) {
			if nTokens == 1 {
				return Decision{KernelMMVQ, "one token: mul_mat_vec_q with ids, one channel per expert slot"}
			}
			return Decision{KernelMMVQ, fmt.Sprintf("%d tokens <= get_mmvq_mmid_max_batch(%v, cc=%d) = %d: mul_mat_vec_q_moe", nTokens, t, dev.CC, max)}
		}
	}
	if ShouldUseMMQ(dev, t, nTokens, nExperts) {
		return Decision{KernelMMQ, fmt.Sprintf("%d tokens: ggml_cuda_should_use_mmq(%v, cc=%d, n_experts=%d) is true: MMQ in ID mode", nTokens, t, dev.CC, nExperts)}
	}
	return Decision{KernelNone, fmt.Sprintf("%d tokens of %v on cc=%d: neither MMVQ nor MMQ (ggml's host-synchronising fallback)", nTokens, t, dev.CC)}
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

// ShouldUseMMQ is ggml_cuda_should_use_mmq (mmq.cu) without the FORCE_CUBLAS/FORCE_MMQ
// build options.
func ShouldUseMMQ(dev sim.Device, t quant.Type, ne11, nExperts int64) bool {
	if !mmqTypes[t] {
		return false
	}
	if dev.SmemPerBlockOptin < 48*1024 {
		return false
	}
	cc := dev.CC
	hc := dev.HighestCompiledArch()
	if sim.TuringMMAAvailable(cc, hc) {
		return true
	}
	if hc < sim.CCDP4A {
		return false
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
