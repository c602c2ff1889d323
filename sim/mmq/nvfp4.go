package mmq

import (
	"github.com/ggsim/ggsim/quant"
	"github.com/ggsim/ggsim/sim/q8"
)

// NVFP4 on the int8-MMA path of a non-Blackwell GPU (the H200): ggml_cuda_mul_mat_q
// (mmq.cu) takes use_native_fp4 = blackwell_mma_available(cc) && type is MXFP4/NVFP4,
// false on sm_90, so the activations are quantized by quantize_mmq_q8_1 in the D4
// layout (mmq_get_q8_1_ds_layout) and y_scale is nullptr: the write-back
// (ggml_cuda_mmq_write_back_mma) stores sum unscaled. The tiles come from
// ggml_cuda_mmq_load_tiles_nvfp4 and the dot is the q8_0_16 family.

func init() {
	kernels[quant.NVFP4] = &kernel{layout: q8.D4, load: loadNVFP4, dot: dotQ8_0_16Q8_1}
}

// loadNVFP4: four 64-value blocks per iteration; per 16-value sub-block sub of block kbx,
// get_int_from_table_16 on qs[8sub..8sub+3] and qs[8sub+4..8sub+7] gives the low nibbles
// (.x) and high nibbles (.y) mapped through kvalues_mxfp4 (the E2M1 values doubled),
// stored as ints q0.x, q1.x, q0.y, q1.y: the low nibbles of the 8 bytes then their high
// nibbles, which is value order. x_df[4kbx+sub] = ggml_cuda_ue4m3_to_fp32(d[sub]) (the
// FP8_AVAILABLE conversion, halved to undo the doubled table).
func loadNVFP4(m *matrix, i, kb0 int, x *xTile) {
	for kbx := 0; kbx < iterK/quant.QK_NVFP4; kbx++ {
		blk := quant.BlockNVFP4(m.block(i, kb0+kbx))
		qs := blk.Qs()
		for sub := 0; sub < quant.QK_NVFP4/quant.QKNVFP4Sub; sub++ {
			v := x.qs[quant.QK_NVFP4*kbx+quant.QKNVFP4Sub*sub:]
			for j := 0; j < 8; j++ {
				q := qs[8*sub+j]
				v[j] = quant.KValuesMXFP4[q&0xF]
				v[j+8] = quant.KValuesMXFP4[q>>4]
			}
			x.df[4*kbx+sub] = quant.UE4M3ToFP32CUDA(blk.Scale(sub))
		}
	}
}
