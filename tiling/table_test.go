package tiling

import (
	"testing"

	"github.com/ggsim/ggsim/quant"
	"github.com/ggsim/ggsim/sim"
)

// This file checks Decide over every ggml type id x every catalog device x the batch sizes
// of tableBatches, for MUL_MAT and for MUL_MAT_ID with 8 and 128 experts. The
// expectations are written as facts per device, read off ggml's source at d99724f2b141
// (files and lines cited), and composed in the order of ggml_cuda_mul_mat
// (ggml-cuda.cu:1815-1869) and ggml_cuda_mul_mat_id (ggml-cuda.cu:1902-1944). The shape
// is a contiguous 4096 x 4096 src0 (one matrix per expert), so src0_small
// (mmvf.cu:822) holds by ne02*ne03 == 1 for MUL_MAT and mul_mat_f's MUL_MAT_ID limit is the
// ne01 > 1024 one (mmf.cu:165: tokens <= 128).

var tableBatches = []int64{1, 2, 3, 4, 5, 6, 7, 8, 9, 16, 33, 64, 65, 128, 129, 256, 512}

// ggml-cuda.cu:4945-4976, ggml_backend_cuda_device_supports_op, case GGML_OP_MUL_MAT(_ID).
var tblSupported = []quant.Type{quant.F32, quant.F16, quant.Q1_0, quant.Q2_0, quant.Q4_0, quant.Q4_1,
	quant.Q5_0, quant.Q5_1, quant.Q8_0, quant.MXFP4, quant.NVFP4, quant.Q2_K, quant.Q3_K, quant.Q4_K,
	quant.Q5_K, quant.Q6_K, quant.Q8_K, quant.IQ1_M, quant.IQ1_S, quant.IQ2_S, quant.IQ2_XS,
	quant.IQ2_XXS, quant.IQ3_S, quant.IQ3_XXS, quant.IQ4_NL, quant.IQ4_XS, quant.BF16}

// mmq.cu:271-297, the mmq_supported switch of ggml_cuda_should_use_mmq (no IQ1_M, no q8_K).
var tblMMQTypes = []quant.Type{quant.Q1_0, quant.Q2_0, quant.Q4_0, quant.Q4_1, quant.Q5_0,
	quant.Q5_1, quant.Q8_0, quant.Q2_K, quant.Q3_K, quant.Q4_K, quant.Q5_K, quant.Q6_K, quant.IQ1_S,
	quant.IQ2_XXS, quant.IQ2_XS, quant.IQ2_S, quant.IQ3_XXS, quant.IQ3_S, quant.IQ4_XS,
	quant.IQ4_NL, quant.MXFP4, quant.NVFP4}

func in(t quant.Type, ts []quant.Type) bool {
	for _, u := range ts {
		if u == t {
			return true
		}
	}
	return false
}

type lim = map[quant.Type]int64

// get_mmvq_mmid_max_batch tables (mmvq.cu); types not listed: MMVQ_MAX_BATCH_SIZE = 8.
var (
	tblMMIDPascal = lim{quant.IQ1_S: 6, quant.IQ1_M: 6, quant.IQ2_S: 4, quant.IQ2_XS: 5, quant.IQ2_XXS: 5, // mmvq.cu:121
		quant.IQ3_S: 4, quant.IQ3_XXS: 4, quant.IQ4_NL: 6, quant.IQ4_XS: 5, quant.MXFP4: 4, quant.NVFP4: 4,
		quant.Q2_K: 4, quant.Q3_K: 4, quant.Q4_0: 6, quant.Q4_1: 6, quant.Q4_K: 5, quant.Q5_0: 6,
		quant.Q5_1: 6, quant.Q5_K: 5, quant.Q6_K: 4, quant.Q8_0: 4}
	tblMMIDTuring = lim{quant.IQ2_S: 7, quant.IQ3_S: 6, quant.IQ3_XXS: 7, quant.MXFP4: 7, // mmvq.cu:148
		quant.Q2_K: 7, quant.Q3_K: 5}
	tblMMIDCDNA  = lim{quant.IQ2_S: 5, quant.IQ2_XS: 5, quant.IQ2_XXS: 5, quant.IQ3_S: 4, quant.IQ3_XXS: 5} // mmvq.cu:184
	tblMMIDRDNA3 = lim{quant.IQ1_S: 6, quant.IQ1_M: 6, quant.IQ2_S: 4, quant.IQ2_XS: 4, quant.IQ2_XXS: 4,   // mmvq.cu:211
		quant.IQ3_S: 4, quant.IQ3_XXS: 4, quant.IQ4_NL: 6, quant.IQ4_XS: 6, quant.Q4_K: 4, quant.Q5_K: 4,
		quant.Q6_K: 4}
)

// devFacts are one catalog device's answers to ggml's predicates for the 4096 x 4096
// shape. A limit of 0 means "never".
type devFacts struct {
	mmvq lim // ggml_cuda_should_use_mmvq: ne11 <= limit (8 if absent), mmvq.cu:289-372
	mmid lim // get_mmvq_mmid_max_batch (8 if absent), mmvq.cu:256
	// mmq is ggml_cuda_should_use_mmq (mmq.cu:259-384) for an MMQ type.
	mmq func(t quant.Type, ne11, nExperts int64) bool
	// mmvf: ggml_cuda_should_use_mmvf limit per float type (mmvf.cu:803-865).
	mmvf lim
	// mmf: ggml_cuda_should_use_mmf limit for MUL_MAT (mmf.cu:168-190); mmfID: whether
	// it holds for MUL_MAT_ID with <= 128 tokens (mmf.cu:162-167, 181-190).
	mmf   lim
	mmfID map[quant.Type]bool
	amd   bool // ggml-cuda.cu:1925: float MUL_MAT_ID with <= 8 tokens uses mul_mat_vec_f on AMD
}

func always(quant.Type, int64, int64) bool { return true }

var (
	// turing_mma_available: should_use_mmq is true (mmq.cu:311). Ampere MMA:
	// mmvf f32 <= 3 (mmvf.cu:806), f16/bf16 only ne11 == 1 (mmvf.cu:823, 849); mmf for
	// f32 (ampere), f16 (turing), bf16 (ampere) up to 16 columns (mmf.cu:176, 183-187).
	ampereMMVF = lim{quant.F32: 3, quant.F16: 1, quant.BF16: 1}
	ampereMMF  = lim{quant.F32: 16, quant.F16: 16, quant.BF16: 16}
	ampereMMFI = map[quant.Type]bool{quant.F32: true, quant.F16: true, quant.BF16: true}
)

var tblFacts = map[string]devFacts{
	"H200":      {mmq: always, mmvf: ampereMMVF, mmf: ampereMMF, mmfID: ampereMMFI}, // cc 900: generic mmvq, mmid 8 (cc >= ADA, mmvq.cu:259)
	"H100 SXM":  {mmq: always, mmvf: ampereMMVF, mmf: ampereMMF, mmfID: ampereMMFI},
	"H100 PCIe": {mmq: always, mmvf: ampereMMVF, mmf: ampereMMF, mmfID: ampereMMFI},
	// cc 800 / 860: turing_plus mmid table (750 <= cc < 890, mmvq.cu:262).
	"A100":     {mmid: tblMMIDTuring, mmq: always, mmvf: ampereMMVF, mmf: ampereMMF, mmfID: ampereMMFI},
	"RTX 3090": {mmid: tblMMIDTuring, mmq: always, mmvf: ampereMMVF, mmf: ampereMMF, mmfID: ampereMMFI},
	// cc 890: mmvq tuned on RTX 4090 (mmvq.cu:295-306).
	"RTX 4090": {mmvq: lim{quant.Q2_K: 4, quant.Q3_K: 6, quant.Q4_K: 7, quant.Q5_K: 7},
		mmq: always, mmvf: ampereMMVF, mmf: ampereMMF, mmfID: ampereMMFI},
	// cc 1200: mmvq tuned on RTX 5090 (mmvq.cu:308-319).
	"RTX 5090": {mmvq: lim{quant.Q2_K: 5, quant.Q3_K: 5, quant.Q4_K: 5, quant.Q5_K: 5, quant.Q6_K: 7},
		mmq: always, mmvf: ampereMMVF, mmf: ampereMMF, mmfID: ampereMMFI},
	// cc 750: not ampere_mma: mmvf f32 <= 4 (cc >= TURING, mmvf.cu:809), f16 <= 3
	// (fp16_mma_hardware, mmvf.cu:829), bf16 <= 8 (no bf16 MMA before Ampere,
	// mmvf.cu:858); mmf only f16 (turing_mma, mmf.cu:185).
	"T4": {mmid: tblMMIDTuring, mmq: always, mmvf: lim{quant.F32: 4, quant.F16: 3, quant.BF16: 8},
		mmf: lim{quant.F16: 16}, mmfID: map[quant.Type]bool{quant.F16: true}},
	// cc 700: no turing_mma; NVIDIA with fp16 MMA hardware: ne11 < 64 (mmq.cu:324-325);
	// mmid 8 (cc == VOLTA, mmvq.cu:259); mmvf f32 <= 3 (mmvf.cu:812), f16 <= 3, bf16 <= 8;
	// mmf f16 by volta_mma (mmf.cu:185).
	"V100": {mmq: func(_ quant.Type, ne11, _ int64) bool { return ne11 < 64 },
		mmvf: lim{quant.F32: 3, quant.F16: 3, quant.BF16: 8},
		mmf:  lim{quant.F16: 16}, mmfID: map[quant.Type]bool{quant.F16: true}},
	// cc 600: highest compiled arch < DP4A: no MMQ (mmq.cu:315-317).
	"P100": {mmid: tblMMIDPascal, mmq: func(quant.Type, int64, int64) bool { return false },
		mmvf: lim{quant.F32: 3, quant.F16: 8, quant.BF16: 8}},
	// cc 610: no fp16 MMA hardware: MMQ for every batch (mmq.cu:325).
	"P40": {mmid: tblMMIDPascal, mmq: always, mmvf: lim{quant.F32: 3, quant.F16: 8, quant.BF16: 8}},
	// gfx942 (CDNA3): mmvq tuned for CDNA2+ (mmvq.cu:357-369); MMQ always on CDNA3
	// (mmq.cu:332); mmvf f32 <= 3 (fp32 MMA), f16 <= 2, bf16 <= 3 (mmvf.cu:814, 841, 861);
	// mmf f32/f16 by MFMA, not bf16 on CDNA3 (mmf.cu:158).
	"MI300X": {mmvq: lim{quant.Q2_K: 5, quant.Q3_K: 3, quant.Q4_K: 3, quant.Q5_K: 3, quant.Q6_K: 5},
		mmid: tblMMIDCDNA, mmq: always, mmvf: lim{quant.F32: 3, quant.F16: 2, quant.BF16: 3},
		mmf: lim{quant.F32: 16, quant.F16: 16}, mmfID: map[quant.Type]bool{quant.F32: true, quant.F16: true}, amd: true},
	// gfx1100 (RDNA3.0, WMMA): MMQ rules of mmq.cu:347-368; mmvf f32 <= 8 (no fp32 MMA),
	// f16 <= 3 (RDNA3, mmvf.cu:836), bf16 <= 3; mmf f16/bf16 by WMMA, only up to 8
	// columns on RDNA3.0 (mmf.cu:169).
	"RX 7900 XTX": {mmid: tblMMIDRDNA3,
		mmq: func(t quant.Type, ne11, nExperts int64) bool {
			if nExperts >= 64 {
				return true
			}
			switch t {
			case quant.Q2_K, quant.Q6_K, quant.IQ2_XS, quant.IQ2_S:
				return ne11 <= 128
			}
			return true
		},
		mmvf: lim{quant.F32: 8, quant.F16: 3, quant.BF16: 3},
		mmf:  lim{quant.F16: 8, quant.BF16: 8}, mmfID: map[quant.Type]bool{quant.F16: true, quant.BF16: true}, amd: true},
}

func limit(l lim, t quant.Type, def int64) int64 {
	if v, ok := l[t]; ok {
		return v
	}
	return def
}

// expectMulMat composes the facts in the order of ggml_cuda_mul_mat.
func expectMulMat(f devFacts, t quant.Type, m int64) Kernel {
	isFloat := t == quant.F32 || t == quant.F16 || t == quant.BF16
	switch {
	case !in(t, tblSupported):
		return KernelUnsupported
	case isFloat && m <= f.mmvf[t]: // ggml-cuda.cu:1836
		return KernelMMVF
	case isFloat && m <= f.mmf[t]: // ggml-cuda.cu:1856
		return KernelMMF
	case isFloat:
		return KernelCuBLAS // ggml-cuda.cu:1868
	case m <= limit(f.mmvq, t, 8): // ggml-cuda.cu:1860
		if t == quant.Q8_K {
			return KernelAbort // mmvq.cu:1244: no mul_mat_vec_q for q8_K
		}
		return KernelMMVQ
	case in(t, tblMMQTypes) && f.mmq(t, m, 0): // ggml-cuda.cu:1864
		return KernelMMQ
	case t == quant.Q8_K:
		return KernelAbort // ggml-cuda.cu:1454: no converter for q8_K
	}
	return KernelCuBLAS
}

// expectMulMatID composes the facts in the order of ggml_cuda_mul_mat_id.
func expectMulMatID(f devFacts, t quant.Type, m, experts int64) Kernel {
	isFloat := t == quant.F32 || t == quant.F16 || t == quant.BF16
	switch {
	case !in(t, tblSupported):
		return KernelUnsupported
	case !isFloat && m <= 8 && m <= limit(f.mmid, t, 8): // ggml-cuda.cu:1917-1923
		if t == quant.Q8_K {
			return KernelAbort
		}
		if m == 1 {
			return KernelMMVQ
		}
		return KernelMMVQMoE
	case isFloat && m <= 8 && f.amd: // ggml-cuda.cu:1925-1928
		return KernelMMVF
	case in(t, tblMMQTypes) && f.mmq(t, m, experts): // ggml-cuda.cu:1932
		return KernelMMQ
	case isFloat && f.mmfID[t] && m <= 128: // ggml-cuda.cu:1937
		return KernelMMF
	}
	return KernelMMIDHostFallback // ggml-cuda.cu:1944
}

func TestDecideTable(t *testing.T) {
	devs := sim.Catalog()
	if len(devs) != len(tblFacts) {
		t.Fatalf("%d catalog devices, %d with facts: add the new device's facts", len(devs), len(tblFacts))
	}
	n := 0
	for _, d := range devs {
		f, ok := tblFacts[d.Name]
		if !ok {
			t.Errorf("no facts for catalog device %q", d.Name)
			continue
		}
		for typ := quant.Type(0); typ < quant.TypeCount; typ++ {
			for _, m := range tableBatches {
				n++
				s := Shape{K: 4096, N: 4096, M: m}
				if got, want := MulMat(d, typ, s).Kernel, expectMulMat(f, typ, m); got != want {
					t.Errorf("%s MUL_MAT %v m=%d: %v, want %v (%s)", d.Name, typ, m, got, want, MulMat(d, typ, s).Reason)
				}
				for _, e := range []int64{8, 128} {
					s.Experts = e
					if got, want := MulMatID(d, typ, s).Kernel, expectMulMatID(f, typ, m, e); got != want {
						t.Errorf("%s MUL_MAT_ID %v m=%d experts=%d: %v, want %v (%s)", d.Name, typ, m, e, got, want, MulMatID(d, typ, s).Reason)
					}
				}
				if typ.Valid() {
					if _, err := Decide(d, typ, Shape{K: 4096, N: 4096, M: m}); err != nil {
						t.Errorf("Decide(%s, %v, m=%d): %v", d.Name, typ, m, err)
					}
				}
			}
		}
	}
	if n != len(devs)*int(quant.TypeCount)*len(tableBatches) {
		t.Errorf("%d cases", n)
	}
}

// The paths the brief names explicitly: tq1_0, tq2_0, q8_1 are not supported (not MMVQ),
// q8_K is accepted but aborts, f16 goes to ggml's float kernels.
func TestDecideNamedPaths(t *testing.T) {
	h := dev(t, "H200")
	for _, c := range []struct {
		typ  quant.Type
		m    int64
		want Kernel
	}{
		{quant.TQ1_0, 1, KernelUnsupported}, {quant.TQ2_0, 4, KernelUnsupported}, {quant.Q8_1, 1, KernelUnsupported},
		{quant.I32, 1, KernelUnsupported}, {quant.Q8_K, 1, KernelAbort}, {quant.Q8_K, 100, KernelAbort},
		{quant.F16, 1, KernelMMVF}, {quant.F16, 2, KernelMMF}, {quant.F16, 17, KernelCuBLAS},
		{quant.IQ1_M, 9, KernelCuBLAS}, {quant.Q4_K, 9, KernelMMQ}, {quant.Q4_K, 8, KernelMMVQ},
	} {
		if got := MulMat(h, c.typ, sq(c.m)).Kernel; got != c.want {
			t.Errorf("%v m=%d: %v, want %v", c.typ, c.m, got, c.want)
		}
	}
	// The transposed vector (ne01 == 1, ggml-cuda.cu:1843): f32 src0 of one row, 9+ columns.
	if got := MulMat(h, quant.F32, Shape{K: 4096, N: 1, M: 100}).Kernel; got != KernelMMVF {
		t.Errorf("transposed vector: %v, want mmvf", got)
	}
	// mmf needs ne01 % 32 == 0 (mmf.cu:154) and ne00 % (32*4/ts) == 0 (mmf.cu:140).
	if got := MulMat(h, quant.F16, Shape{K: 4096, N: 4000 + 8, M: 4}).Kernel; got != KernelCuBLAS {
		t.Errorf("f16 with ne01 %% 32 != 0: %v, want cublas", got)
	}
	// src0_small (mmvf.cu:822): a batch of large f16 matrices is not small.
	if got := MulMat(h, quant.F16, Shape{K: 4096, N: 4096, M: 1, Batch: 4}).Kernel; got != KernelMMF {
		t.Errorf("f16 batch of 4 large matrices: %v, want mmf", got)
	}
	if _, err := Decide(h, quant.Q4_K, Shape{K: 100, N: 1, M: 1}); err == nil {
		t.Error("Decide accepts K not a multiple of 256")
	}
	if _, err := Decide(h, quant.Q4_2, sq(1)); err == nil {
		t.Error("Decide accepts a removed type")
	}
	if _, err := Decide(h, quant.Q4_K, Shape{K: 256, N: 1, M: 0}); err == nil {
		t.Error("Decide accepts M = 0")
	}
}
