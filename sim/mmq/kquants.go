package mmq

import (
	"github.com/ggsim/ggsim/f16"
	"github.com/ggsim/ggsim/quant"
	"github.com/ggsim/ggsim/sim"
	"github.com/ggsim/ggsim/sim/q8"
)

// The k-quants other than Q4_K on the int8-MMA path: ggml_cuda_mmq_load_tiles_q5_K
// (mmq-load-tiles.cuh, TURING_MMA_AVAILABLE branches) with the q8_1×q8_1 vec_dot. Every
// load leaves the values of one super-block (one iteration: MMQ_ITER_K = QK_K) in value
// order in x.qs, which is what the source's int indices (kq0/kq1 and k) work out to.

func init() {
	kernels[quant.Q5_K] = &kernel{layout: q8.DS4, load: loadQ5_K, dot: dotQ8_1Q8_1}
}

// loadQ5_K: x_qs = the unsigned 5-bit values (ql nibble | qh bit << 4) in value order
// (kq0 = 16c + r holds values 64c+4r..64c+4r+3, kq1 = kq0+8 the 32 after them), x_dm as
// Q4_K: (dm * make_half2(1, -1)) * make_half2(sc_s, m_s) in half per 32 values.
func loadQ5_K(m *matrix, i, kb0 int, x *xTile) {
	blk := quant.BlockQ5_K(m.block(i, kb0))
	qs, qh := blk.Qs(), blk.Qh()
	for c := 0; c < 4; c++ {
		for l := 0; l < 32; l++ {
			x.qs[64*c+l] = int8(qs[32*c+l]&0xF | (qh[l]>>(2*c)&1)<<4)
			x.qs[64*c+32+l] = int8(qs[32*c+l]>>4 | (qh[l]>>(2*c+1)&1)<<4)
		}
	}
	d, dmin := blk.DM()
	loadDMK45(x, d, dmin, blk.ScaleMin)
}

// loadDMK45 is the x_dm half of load_tiles_q4_K/q5_K: dm = bxi->dm * make_half2(1, -1),
// x_dm[s] = dm * make_half2(sc8[s], m8[s]), both half2 multiplies (RN to binary16).
func loadDMK45(x *xTile, d, dmin f16.Half, scaleMin func(int) (uint8, uint8)) {
	dm := f16.Mul2(f16.Half2{Lo: d, Hi: dmin}, f16.MakeHalf2(1, -1))
	for s := 0; s < 8; s++ {
		sc, mn := scaleMin(s)
		p := f16.Mul2(dm, f16.MakeHalf2(float32(sc), float32(mn)))
		x.dm[s] = [2]float32{sim.H2F(p.Lo), sim.H2F(p.Hi)}
	}
}
