package mmvq

import (
	"testing"

	"github.com/ggsim/ggsim/quant"
	"github.com/ggsim/ggsim/tiling"
)

// TestKernelConstantsFromQuant checks every registered kernel's QK, QI and VDR: QK and QI
// are facts of the block format and must be package quant's (its named ggml-common.h
// constants and its Traits), VDR is the kernel's own (VDR_<type>_Q8_1_MMVQ in
// vecdotq.cuh at d99724f2b141). It also checks that the table below names exactly the
// registered types, so a new kernel cannot be registered without its row here.
func TestKernelConstantsFromQuant(t *testing.T) {
	want := map[quant.Type]struct{ qk, qr, qi, vdr int }{
		quant.Q4_0:    {quant.QK4_0, quant.QR4_0, quant.QI4_0, 2},
		quant.Q4_1:    {quant.QK4_1, quant.QR4_1, quant.QI4_1, 2},
		quant.Q5_0:    {quant.QK5_0, quant.QR5_0, quant.QI5_0, 2},
		quant.Q5_1:    {quant.QK5_1, quant.QR5_1, quant.QI5_1, 2},
		quant.Q8_0:    {quant.QK8_0, quant.QR8_0, quant.QI8_0, 2},
		quant.MXFP4:   {quant.QK_MXFP4, quant.QR_MXFP4, quant.QI_MXFP4, 2},
		quant.NVFP4:   {quant.QK_NVFP4, quant.QR_NVFP4, quant.QI_NVFP4, 4},
		quant.Q1_0:    {quant.QK1_0, quant.QR1_0, quant.QI1_0, 1},
		quant.Q2_0:    {quant.QK2_0, quant.QR2_0, quant.QI2_0, 1},
		quant.Q2_K:    {quant.QK_K, quant.QR2_K, quant.QI2_K, 1},
		quant.Q3_K:    {quant.QK_K, quant.QR3_K, quant.QI3_K, 1},
		quant.Q4_K:    {quant.QK_K, quant.QR4_K, quant.QI4_K, 2},
		quant.Q5_K:    {quant.QK_K, quant.QR5_K, quant.QI5_K, 2},
		quant.Q6_K:    {quant.QK_K, quant.QR6_K, quant.QI6_K, 1},
		quant.IQ2_XXS: {quant.QK_K, quant.QR2_XXS, quant.QI2_XXS, 2},
		quant.IQ2_XS:  {quant.QK_K, quant.QR2_XS, quant.QI2_XS, 2},
		quant.IQ2_S:   {quant.QK_K, quant.QR2_S, quant.QI2_S, 2},
		quant.IQ3_XXS: {quant.QK_K, quant.QR3_XXS, quant.QI3_XXS, 2},
		quant.IQ3_S:   {quant.QK_K, quant.QR3_S, quant.QI3_S, 2},
		quant.IQ1_S:   {quant.QK_K, quant.QR1_S, quant.QI1_S, 1},
		quant.IQ1_M:   {quant.QK_K, quant.QR1_M, quant.QI1_M, 1},
		quant.IQ4_NL:  {quant.QK4_NL, quant.QR4_NL, quant.QI4_NL, 2},
		quant.IQ4_XS:  {quant.QK_K, quant.QR4_XS, quant.QI4_XS, 4},
	}
	for _, typ := range Types() {
		if _, ok := want[typ]; !ok {
			t.Errorf("%v has a kernel but no row in this test", typ)
		}
	}
	for typ, w := range want {
		k, ok := KernelOf(typ)
		if !ok {
			t.Errorf("%v: no kernel registered", typ)
			continue
		}
		tr, _ := typ.Traits()
		if k.Type != typ || k.QK != w.qk || k.QI != w.qi || k.VDR != w.vdr || k.Dot == nil {
			t.Errorf("%v: kernel {%v QK %d QI %d VDR %d}, want QK %d QI %d VDR %d",
				typ, k.Type, k.QK, k.QI, k.VDR, w.qk, w.qi, w.vdr)
		}
		if tr.BlockSize != w.qk || tr.QR != w.qr || tr.QI != w.qi {
			t.Errorf("%v: quant traits {BlockSize %d QR %d QI %d}, want quant's constants {%d %d %d}",
				typ, tr.BlockSize, tr.QR, tr.QI, w.qk, w.qr, w.qi)
		}
		// A thread reads VDR ints of one block, QI/VDR threads cover the block's QI ints,
		// and a block meets QK/32 q8_1 blocks of 32 values each.
		if k.QI%k.VDR != 0 || k.QK%32 != 0 {
			t.Errorf("%v: QI %d is not a multiple of VDR %d, or QK %d of 32", typ, k.QI, k.VDR, k.QK)
		}
	}
}

// TestVDRConstants: the VDR the vec_dot loops are written for equals the one the launch
// plan uses (tiling.MMVQConstsOf).
func TestVDRConstants(t *testing.T) {
	for typ, vdr := range map[quant.Type]int{
		quant.Q4_0: vdrQ4_0, quant.Q4_1: vdrQ4_1, quant.Q5_0: vdrQ5_0, quant.Q5_1: vdrQ5_1,
		quant.Q8_0: vdrQ8_0, quant.MXFP4: vdrMXFP4, quant.IQ4_NL: vdrIQ4_NL, quant.IQ4_XS: vdrIQ4_XS,
		quant.NVFP4: vdrNVFP4, quant.Q1_0: vdrQ1_0, quant.Q2_0: vdrQ2_0,
	} {
		if c, ok := tiling.MMVQConstsOf(typ); !ok || c.VDR != vdr {
			t.Errorf("%v: the vec_dot is written for VDR %d, tiling plans %+v", typ, vdr, c)
		}
	}
}
