package mmq

import (
	"github.com/ggsim/ggsim/f16"
	"github.com/ggsim/ggsim/quant"
	"github.com/ggsim/ggsim/sim"
	"github.com/ggsim/ggsim/sim/q8"
)

// Load-time arithmetic of the MMA data layout (mmq-load-tiles.cuh, the
// TURING_MMA_AVAILABLE branches). The int8 values are stored in k order; x_df/x_dm in
// 32-value blocks.

func init() {
	kernels[quant.Q4_0] = &kernel{layout: q8.DS4, load: loadQ4_0, dot: dotQ8_0Q8_1(true)}
	kernels[quant.Q8_0] = &kernel{layout: q8.D4, load: loadQ8_0, dot: dotQ8_0Q8_1(false)}
	kernels[quant.Q4_K] = &kernel{layout: q8.DS4, load: loadQ4_K, dot: dotQ8_1Q8_1}
}

// loadQ4_0: x_qs = __vsubss4(nibbles, 8) (low nibbles: values 0..15, high: 16..31),
// x_df = d (half to float).
func loadQ4_0(m *matrix, i, kb0 int, x *xTile) {
	for b := 0; b < 8; b++ {
		blk := quant.BlockQ4_0(m.block(i, kb0+b))
		qs := blk.Qs()
		for j := 0; j < 16; j++ {
			x.qs[32*b+j] = int8(qs[j]&0xF) - 8
			x.qs[32*b+16+j] = int8(qs[j]>>4) - 8
		}
		x.df[b] = sim.H2F(blk.D())
	}
}

// loadQ8_0: x_qs = qs, x_df = d.
func loadQ8_0(m *matrix, i, kb0 int, x *xTile) {
	for b := 0; b < 8; b++ {
		blk := m.block(i, kb0+b)
		for j := 0; j < 32; j++ {
			x.qs[32*b+j] = int8(blk[2+j])
		}
		x.df[b] = sim.H2F(h16(blk))
	}
}

// loadQ4_K: x_qs = the unsigned nibbles in value order (sub-block s = 32-value block s),
// x_dm[s] = (dm * make_half2(1, -1)) * make_half2(sc_s, m_s) computed in half:
// {f2h(d*sc), f2h(-dmin*m)}.
func loadQ4_K(m *matrix, i, kb0 int, x *xTile) {
	blk := quant.BlockQ4_K(m.block(i, kb0))
	qs := blk.Qs()
	for c := 0; c < 4; c++ {
		for l := 0; l < 32; l++ {
			x.qs[64*c+l] = int8(qs[32*c+l] & 0xF)
			x.qs[64*c+32+l] = int8(qs[32*c+l] >> 4)
		}
	}
	d, dmin := blk.DM()
	dm := f16.Mul2(f16.Half2{Lo: d, Hi: dmin}, f16.MakeHalf2(1, -1)) // bxi->dm * make_half2(1, -1)
	for s := 0; s < 8; s++ {
		sc, mn := blk.ScaleMin(s)
		p := f16.Mul2(dm, f16.MakeHalf2(float32(sc), float32(mn)))
		x.dm[s] = [2]float32{sim.H2F(p.Lo), sim.H2F(p.Hi)}
	}
}
