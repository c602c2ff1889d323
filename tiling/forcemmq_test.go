package tiling

import (
	"testing"

	"github.com/ggsim/ggsim/quant"
)

// GGML_CUDA_FORCE_MMQ (sim.Device.ForceMMQ): after the int8-MMA and dp4a checks,
// ggml_cuda_should_use_mmq answers true whatever the batch (mmq.cu); with int8 MMA it
// changes nothing, and a type without MMQ stays without.
func TestForceMMQ(t *testing.T) {
	d := dev(t, "H200")
	d.Name, d.NoTuringMMA, d.Int8MMA, d.ForceMMQ = "sm_90 without int8 MMA, FORCE_MMQ", true, false, true
	if err := d.Validate(); err != nil {
		t.Fatal(err)
	}
	for _, m := range []int64{9, 63, 64, 512} {
		if got := MulMat(d, quant.Q4_K, sq(m)).Kernel; got != KernelMMQ {
			t.Errorf("FORCE_MMQ without int8 MMA, %d columns: %v, want mmq", m, got)
		}
	}
	if ShouldUseMMQ(d, quant.IQ1_M, 64, 0) {
		t.Error("FORCE_MMQ: IQ1_M has no MMQ kernel")
	}
	mma := dev(t, "H200")
	mma.ForceMMQ = true
	if !ShouldUseMMQ(mma, quant.Q4_K, 4096, 0) {
		t.Error("FORCE_MMQ with int8 MMA: MMQ")
	}
}
