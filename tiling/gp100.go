package tiling

import (
	"fmt"

	"github.com/ggsim/ggsim/quant"
	"github.com/ggsim/ggsim/sim"
)

// Options are dispatch choices that are not ggml's. The zero value is ggml at the
// modelled commit: Decide is DecideWith(dev, t, s, Options{}).
type Options struct {
	// GP100FP16Path opts in to "patch 0007" (seed note 002: reference/seeds/
	// 002_770526410a4a2b1f.txt in the project's shared reference), a local patch to
	// llama.cpp that is NOT in ggml: on sm_60 it replaces mul_mat_vec_q by an fp16 HFMA2
	// kernel for some types and column counts (UseGP100FP16Path). Off by default; the
	// patch's own kill switch (GGML_CUDA_GP100_MMVQ_DISABLE=1) is this field left false.
	GP100FP16Path bool
}

// GP100FP16Types are the types the GP100 fp16 path covers with one column, in the note's
// order; GP100FP16MultiColumn reports those it also covers with 2..MMVQMaxBatchSize
// columns.
var GP100FP16Types = []quant.Type{quant.Q3_K, quant.Q4_K, quant.Q5_K, quant.Q6_K, quant.IQ4_XS, quant.IQ4_NL, quant.Q8_0}

// GP100FP16MultiColumn reports whether the fp16 path has a 2..8-column kernel for t: Q4_K,
// Q5_K and IQ4_XS (the note: "2-8 columns for Q4_K/Q5_K/IQ4_XS"; "Q6_K batches stay on
// the generic path").
func GP100FP16MultiColumn(t quant.Type) bool {
	return t == quant.Q4_K || t == quant.Q5_K || t == quant.IQ4_XS
}

// UseGP100FP16Path is the patch's dispatch rule as this project reads the note: the fp16
// path replaces the launch that ggml would make when all of these hold, and otherwise
// ggml's decision stands.
//
//   - the device is sm_60 exactly (cc 600, GP100: "device code is compiled for sm_60
//     only; everything else sees NO_DEVICE_CODE stubs and the existing path");
//   - the op is a MUL_MAT (the note names no MUL_MAT_ID kernel) of a 2-D src0 (batch 1);
//   - ggml itself would run mul_mat_vec_q (the patch replaces MMVQ; prefill is
//     untouched);
//   - the type is one of GP100FP16Types with one column, or GP100FP16MultiColumn with
//     2..8 columns.
func UseGP100FP16Path(dev sim.Device, t quant.Type, s Shape) bool {
	return gp100Reason(dev, t, s) == ""
}

// gp100Reason returns "" if the fp16 path runs, else why not.
func gp100Reason(dev sim.Device, t quant.Type, s Shape) string {
	covered := false
	for _, c := range GP100FP16Types {
		covered = covered || c == t
	}
	switch {
	case !sim.CCIsNVIDIA(dev.CC) || dev.CC != sim.CCPascal:
		return fmt.Sprintf("cc %d is not sm_60: the patch's kernels are NO_DEVICE_CODE stubs there", dev.CC)
	case s.ID():
		return "MUL_MAT_ID: the patch has no kernel for it"
	case s.batch() != 1:
		return fmt.Sprintf("src0 batch %d: the path is modelled for 2-D matrices only", s.batch())
	case mulMat(dev, t, s).Kernel != KernelMMVQ:
		return "ggml would not run mul_mat_vec_q here; the patch replaces only that"
	case !covered:
		return fmt.Sprintf("%v has no fp16 kernel (Q3_K, Q4_K, Q5_K, Q6_K, IQ4_XS, IQ4_NL, Q8_0 have)", t)
	case s.M > 1 && !GP100FP16MultiColumn(t):
		return fmt.Sprintf("%v with %d columns: the multi-column kernels are Q4_K, Q5_K, IQ4_XS only", t, s.M)
	}
	return ""
}

// DecideWith is Decide with the non-ggml options o: with o.GP100FP16Path and
// UseGP100FP16Path true, KernelGP100FP16 with the rule in the reason; otherwise Decide's
// decision (with, when the option is on, why the fp16 path does not run appended).
func DecideWith(dev sim.Device, t quant.Type, s Shape, o Options) (Decision, error) {
	d, err := Decide(dev, t, s)
	if err != nil || !o.GP100FP16Path {
		return d, err
	}
	if why := gp100Reason(dev, t, s); why != "" {
		d.Reason += "; GP100 fp16 path (patch 0007, opted in) not taken: " + why
		return d, nil
	}
	return Decision{KernelGP100FP16, fmt.Sprintf("patch 0007 opted in: sm_60, %v with %d column(s), where ggml runs mul_mat_vec_q: the fp16 HFMA2 path replaces it (not in ggml)", t, s.M)}, nil
}
