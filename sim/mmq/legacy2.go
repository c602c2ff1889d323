package mmq

import (
	"github.com/ggsim/ggsim/quant"
	"github.com/ggsim/ggsim/sim"
	"github.com/ggsim/ggsim/sim/q8"
)

// The other legacy types and the 1- and 2-bit Q1_0 and Q2_0 on the MMA data layout
// (mmq-load-tiles.cuh, the TURING_MMA_AVAILABLE branches; the kernels and y layouts of
// ggml_cuda_mmq_get_util_funcs' MMA switch and mmq_get_q8_1_ds_layout):
//
//	Q4_1, Q5_1  load_tiles_q4_1 / q5_1, vec_dot_q8_1_q8_1_mma, DS4
//	Q5_0        load_tiles_q5_0,        vec_dot_q8_0_q8_1_mma, D4
//	Q1_0, Q2_0  load_tiles_q1_0 / q2_0, vec_dot_q8_0_q8_1_mma, D4
//
// No load of these types does float arithmetic: the scales are copied (half to float,
// or the half2 dm as is), so the model is the value layout alone.

func init() {
	kernels[quant.Q4_1] = &kernel{layout: q8.DS4, load: loadQ4_1, dot: dotQ8_1Q8_1}
	kernels[quant.Q5_0] = &kernel{layout: q8.D4, load: loadQ5_0, dot: dotQ8_0Q8_1(false)}
	kernels[quant.Q5_1] = &kernel{layout: q8.DS4, load: loadQ5_1, dot: dotQ8_1Q8_1}
	kernels[quant.Q1_0] = &kernel{layout: q8.D4, load: loadQ1_0, dot: dotQ8_0Q8_1(false)}
	kernels[quant.Q2_0] = &kernel{layout: q8.D4, load: loadQ2_0, dot: dotQ8_0Q8_1(false)}
}

// loadQ4_1: x_qs = the unsigned nibbles (low: values 0..15, high: 16..31), x_dm = dm
// (the half2 {d, m} read as float2 by the vec_dot).
func loadQ4_1(m *matrix, i, kb0 int, x *xTile) {
	for b := 0; b < 8; b++ {
		blk := quant.BlockQ4_1(m.block(i, kb0+b))
		qs := blk.Qs()
		for j := 0; j < 16; j++ {
			x.qs[32*b+j] = int8(qs[j] & 0xF)
			x.qs[32*b+16+j] = int8(qs[j] >> 4)
		}
		x.dm[b] = [2]float32{sim.H2F(blk.D()), sim.H2F(blk.M())}
	}
}

// q5Values writes the 32 five-bit values of a Q5_0/Q5_1 block into dst: value j<16 is
// the low nibble of qs[j] with bit j of qh as bit 4, value j+16 the high nibble with bit
// j+16 (the qs0/qs1 bit shuffles of load_tiles_q5_0/q5_1), minus off.
func q5Values(dst []int8, qs []byte, qh uint32, off int8) {
	for j := 0; j < 16; j++ {
		lo := qs[j]&0xF | byte(qh>>j&1)<<4
		hi := qs[j]>>4 | byte(qh>>(j+16)&1)<<4
		dst[j] = int8(lo) - off // __vsubss4: 0..31 - 16 never saturates
		dst[j+16] = int8(hi) - off
	}
}

// loadQ5_0: x_qs = __vsubss4(5-bit values, 16), x_df = d.
func loadQ5_0(m *matrix, i, kb0 int, x *xTile) {
	for b := 0; b < 8; b++ {
		blk := quant.BlockQ5_0(m.block(i, kb0+b))
		q5Values(x.qs[32*b:32*b+32], blk.Qs(), blk.Qh(), 16)
		x.df[b] = sim.H2F(blk.D())
	}
}

// loadQ5_1: x_qs = the unsigned 5-bit values, x_dm = dm.
func loadQ5_1(m *matrix, i, kb0 int, x *xTile) {
	for b := 0; b < 8; b++ {
		blk := quant.BlockQ5_1(m.block(i, kb0+b))
		q5Values(x.qs[32*b:32*b+32], blk.Qs(), blk.Qh(), 0)
		x.dm[b] = [2]float32{sim.H2F(blk.D()), sim.H2F(blk.M())}
	}
}

// loadQ1_0 (two 128-value blocks per iteration): the __byte_perm unpacking of
// load_tiles_q1_0 (3-bit selectors: 0x11100100 spreads bit pairs into nibbles, 0x01FF
// maps each to 0xFF or 0x01, 0x5410/0x7632 restore the order) leaves value k of a block
// = +1 if bit k of qs (little-endian, bit k%8 of byte k/8) is set, else -1, in k order;
// x_df = d for each of the block's four 32-value groups.
func loadQ1_0(m *matrix, i, kb0 int, x *xTile) {
	for b := 0; b < 2; b++ {
		blk := quant.BlockQ1_0(m.block(i, kb0+b))
		qs := blk.Qs()
		for k := 0; k < 128; k++ {
			v := int8(-1)
			if qs[k/8]>>(k%8)&1 != 0 {
				v = 1
			}
			x.qs[128*b+k] = v
		}
		d := sim.H2F(blk.D())
		for s := 0; s < 4; s++ {
			x.df[4*b+s] = d
		}
	}
}

// loadQ2_0 (four 64-value blocks per iteration): the __byte_perm unpacking of
// load_tiles_q2_0 (0x020100FF maps a 2-bit code c to c-1, 0x5140/0x7362 interleave the
// even and odd codes back) leaves value k of a block = ((qs[k/4] >> 2(k%4)) & 3) - 1 in
// k order; x_df = d for each of the block's two 32-value groups.
func loadQ2_0(m *matrix, i, kb0 int, x *xTile) {
	for b := 0; b < 4; b++ {
		blk := quant.BlockQ2_0(m.block(i, kb0+b))
		qs := blk.Qs()
		for k := 0; k < 64; k++ {
			x.qs[64*b+k] = int8(qs[k/4]>>(2*(k%4))&3) - 1
		}
		d := sim.H2F(blk.D())
		x.df[2*b] = d
		x.df[2*b+1] = d
	}
}
