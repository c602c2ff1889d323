package tiling

import (
	"strings"
	"testing"

	"github.com/ggsim/ggsim/quant"
)

// TestGP100FP16Dispatch: the fp16 path only with the opt-in, only on sm_60 (P100, not
// the P40's sm_61 nor the H200), only for MUL_MAT where ggml runs MMVQ, one column for
// the seven types and 2..8 for Q4_K/Q5_K/IQ4_XS.
func TestGP100FP16Dispatch(t *testing.T) {
	p100, p40, h200 := dev(t, "P100"), dev(t, "P40"), dev(t, "H200")
	on := Options{GP100FP16Path: true}
	for _, typ := range []quant.Type{quant.Q3_K, quant.Q4_K, quant.Q5_K, quant.Q6_K, quant.IQ4_XS, quant.IQ4_NL, quant.Q8_0, quant.Q4_0, quant.IQ2_XXS} {
		covered := typ != quant.Q4_0 && typ != quant.IQ2_XXS
		for m := int64(1); m <= 10; m++ {
			s := Shape{K: 4096, N: 4096, M: m}
			off, err := Decide(p100, typ, s)
			if err != nil {
				t.Fatal(err)
			}
			got, err := DecideWith(p100, typ, s, on)
			if err != nil {
				t.Fatal(err)
			}
			want := covered && m <= 8 && (m == 1 || GP100FP16MultiColumn(typ))
			if (got.Kernel == KernelGP100FP16) != want {
				t.Errorf("P100 %v m=%d: %v (%s), want fp16 path %v", typ, m, got.Kernel, got.Reason, want)
			}
			if !want && got.Kernel != off.Kernel {
				t.Errorf("P100 %v m=%d: opt-in changed ggml's %v to %v", typ, m, off.Kernel, got.Kernel)
			}
			if want && off.Kernel != KernelMMVQ {
				t.Errorf("P100 %v m=%d: replaces %v, not mmvq", typ, m, off.Kernel)
			}
			if off.Kernel == KernelGP100FP16 {
				t.Errorf("P100 %v m=%d: the fp16 path without the opt-in", typ, m)
			}
			for _, other := range []struct {
				name string
				got  Decision
			}{{"P40", must(DecideWith(p40, typ, s, on))}, {"H200", must(DecideWith(h200, typ, s, on))}} {
				if other.got.Kernel == KernelGP100FP16 {
					t.Errorf("%s %v m=%d: the fp16 path off sm_60", other.name, typ, m)
				}
			}
		}
	}
	got := must(DecideWith(p100, quant.Q4_K, Shape{K: 4096, N: 4096, M: 1, Experts: 8}, on))
	if got.Kernel == KernelGP100FP16 {
		t.Error("MUL_MAT_ID took the fp16 path")
	}
	got = must(DecideWith(p100, quant.Q6_K, Shape{K: 4096, N: 4096, M: 5}, on))
	if !strings.Contains(got.Reason, "multi-column kernels are Q4_K, Q5_K, IQ4_XS only") {
		t.Errorf("Q6_K at 5 columns: reason %q does not say why", got.Reason)
	}
	if KernelGP100FP16.String() != "gp100_fp16" || KernelGP100FP16.IsMMVQ() {
		t.Errorf("kernel name %q", KernelGP100FP16)
	}
}

func must(d Decision, err error) Decision {
	if err != nil {
		panic(err)
	}
	return d
}
