package tiling

import (
	"testing"

	"github.com/ggsim/ggsim/quant"
	"github.com/ggsim/ggsim/sim"
)

func dev(t *testing.T, name string) sim.Device {
	t.Helper()
	d, err := sim.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// sq is a 4096x4096 src0 with m columns.
func sq(m int64) Shape { return Shape{K: 4096, N: 4096, M: m} }

func TestMulMatH200(t *testing.T) {
	h200 := dev(t, "H200")
	for _, typ := range []quant.Type{quant.Q4_0, quant.Q4_K, quant.Q6_K, quant.IQ2_XXS, quant.IQ1_M, quant.NVFP4} {
		for m := int64(1); m <= 8; m++ {
			if got := MulMat(h200, typ, sq(m)); got.Kernel != KernelMMVQ {
				t.Errorf("%v m=%d: %v (%s), want mmvq", typ, m, got.Kernel, got.Reason)
			}
		}
		want := KernelMMQ
		if typ == quant.IQ1_M { // no MMQ for IQ1_M: cuBLAS
			want = KernelCuBLAS
		}
		for _, m := range []int64{9, 33, 130, 4096} {
			if got := MulMat(h200, typ, sq(m)); got.Kernel != want {
				t.Errorf("%v m=%d: %v (%s), want %v", typ, m, got.Kernel, got.Reason, want)
			}
		}
	}
	// f16 with one column on an Ampere-MMA device: src0_small (ne02*ne03 == 1) && ne11 == 1
	// (mmvf.cu ggml_cuda_should_use_mmvf): mul_mat_vec_f, not cuBLAS.
	if got := MulMat(h200, quant.F16, Shape{K: 4096, N: 4096, M: 1}); got.Kernel != KernelMMVF {
		t.Errorf("f16: %v, want mmvf", got.Kernel)
	}
}

func TestMulMatAdaThresholds(t *testing.T) {
	ada := dev(t, "RTX 4090")
	cases := []struct {
		typ  quant.Type
		maxV int64
	}{{quant.Q2_K, 4}, {quant.Q3_K, 6}, {quant.Q4_K, 7}, {quant.Q5_K, 7}, {quant.Q6_K, 8}, {quant.Q4_0, 8}}
	for _, c := range cases {
		for m := int64(1); m <= 9; m++ {
			want := KernelMMVQ
			if m > c.maxV {
				want = KernelMMQ
			}
			if got := MulMat(ada, c.typ, sq(m)).Kernel; got != want {
				t.Errorf("%v m=%d on 4090: %v, want %v", c.typ, m, got, want)
			}
		}
	}
}

func TestMulMatIDH200(t *testing.T) {
	h200 := dev(t, "H200")
	for _, typ := range []quant.Type{quant.Q4_K, quant.Q8_0, quant.Q6_K, quant.MXFP4, quant.Q3_K} {
		for n := int64(1); n <= 8; n++ {
			want := KernelMMVQMoE
			if n == 1 {
				want = KernelMMVQ
			}
			if got := MulMatID(h200, typ, Shape{K: 4096, N: 4096, M: n, Experts: 4}); got.Kernel != want {
				t.Errorf("%v tokens=%d: %v, want %v", typ, n, got.Kernel, want)
			}
		}
		if got := MulMatID(h200, typ, Shape{K: 4096, N: 4096, M: 40, Experts: 4}); got.Kernel != KernelMMQ {
			t.Errorf("%v tokens=40: %v, want mmq", typ, got.Kernel)
		}
	}
}

func TestMMIDMaxBatchTuring(t *testing.T) {
	// Turing/Ampere (750 <= cc < 890) use the turing_plus table; Ada and Hopper always 8.
	if got := MMVQMMIDMaxBatch(quant.Q3_K, 800); got != 5 {
		t.Errorf("q3_K on cc 800: %d, want 5", got)
	}
	if got := MMVQMMIDMaxBatch(quant.Q3_K, 900); got != 8 {
		t.Errorf("q3_K on cc 900: %d, want 8", got)
	}
	if got := MMVQMMIDMaxBatch(quant.Q6_K, 610); got != 4 {
		t.Errorf("q6_K on cc 610: %d, want 4", got)
	}
}

// Spot values of the other architectures' tables (mmvq.cu get_mmvq_mmid_max_batch_* and
// ggml_cuda_should_use_mmvq).
func TestTablesOtherArchs(t *testing.T) {
	if MMVQMMIDMaxBatch(quant.Q4_0, sim.CCRDNA4) != 7 || MMVQMMIDMaxBatch(quant.Q4_0, sim.CCCDNA3) != 8 ||
		MMVQMMIDMaxBatch(quant.Q8_0, 610) != 4 || MMVQMMIDMaxBatch(quant.F16, 610) != 8 {
		t.Error("get_mmvq_mmid_max_batch")
	}
	if !ShouldUseMMVQ(quant.Q4_K, 900, 8) || ShouldUseMMVQ(quant.Q4_K, 900, 9) || ShouldUseMMVQ(quant.Q2_K, 890, 5) ||
		!ShouldUseMMVQ(quant.Q2_K, 890, 4) || ShouldUseMMVQ(quant.F32, 900, 1) || ShouldUseMMVQ(quant.Q4_K, sim.CCCDNA1, 3) {
		t.Error("ggml_cuda_should_use_mmvq")
	}
}
