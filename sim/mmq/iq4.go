package mmq

import (
	"github.com/ggsim/ggsim/quant"
	"github.com/ggsim/ggsim/sim"
	"github.com/ggsim/ggsim/sim/q8"
)

// The 4-bit table types on the MMA data layout (mmq-load-tiles.cuh, the
// TURING_MMA_AVAILABLE branches of load_tiles_iq4_nl, load_tiles_iq4_xs and
// load_tiles_mxfp4; all three use vec_dot_q8_0_q8_1_mma with the D4 layout). Each
// nibble indexes a 16-entry int8 table (get_int_from_table_16: the __byte_perm
// construction selects exactly the table entries); of a block's 16 qs bytes the low
// nibbles are values 0..15 and the high nibbles 16..31, as the x_qs ints k0 and k0+4
// place them. The scales:
//
//	IQ4_NL  x_df = __half2float(d)
//	MXFP4   x_df = ggml_cuda_e8m0_to_fp32(e)*0.5f   (FMUL, FTZ)
//	IQ4_XS  x_df = d*(ls - 32) per 32 values        (FMUL of h2f(d) and I2F(ls-32))

func init() {
	kernels[quant.IQ4_NL] = &kernel{layout: q8.D4, load: loadIQ4_NL, dot: dotQ8_0Q8_1(false)}
	kernels[quant.MXFP4] = &kernel{layout: q8.D4, load: loadMXFP4, dot: dotQ8_0Q8_1(false)}
	kernels[quant.IQ4_XS] = &kernel{layout: q8.D4, load: loadIQ4_XS, dot: dotQ8_0Q8_1(false)}
}

// table16Values writes the 32 table values of 16 nibble-pair bytes into dst: dst[j] =
// tab[qs[j]&15], dst[j+16] = tab[qs[j]>>4].
func table16Values(dst []int8, qs []byte, tab *[16]int8) {
	for j := 0; j < 16; j++ {
		dst[j] = tab[qs[j]&0xF]
		dst[j+16] = tab[qs[j]>>4]
	}
}

// loadIQ4_NL: x_qs = kvalues_iq4nl of the nibbles, x_df = d.
func loadIQ4_NL(m *matrix, i, kb0 int, x *xTile) {
	for b := 0; b < 8; b++ {
		blk := quant.BlockIQ4_NL(m.block(i, kb0+b))
		table16Values(x.qs[32*b:32*b+32], blk.Qs(), &quant.KValuesIQ4NL)
		x.df[b] = sim.H2F(blk.D())
	}
}

// loadMXFP4: x_qs = kvalues_mxfp4 of the nibbles (twice the FP4 E2M1 values), x_df =
// e8m0(e)*0.5 in float32 with FTZ: 2^(e-128) for e in 2..254, 0 for e = 0 and 1 (the
// subnormal operand 2^-127 and product 2^-127 are flushed), NaN for e = 255.
func loadMXFP4(m *matrix, i, kb0 int, x *xTile) {
	for b := 0; b < 8; b++ {
		blk := quant.BlockMXFP4(m.block(i, kb0+b))
		table16Values(x.qs[32*b:32*b+32], blk.Qs(), &quant.KValuesMXFP4)
		x.df[b] = sim.Mul(sim.E8M0ToF32(blk.E()), 0.5)
	}
}

// loadIQ4_XS (one 256-value super-block per iteration): x_qs = kvalues_iq4nl of the
// nibbles (sub-block s = 32-value block s), x_df[s] = h2f(d) * float(ls_s - 32).
func loadIQ4_XS(m *matrix, i, kb0 int, x *xTile) {
	blk := quant.BlockIQ4_XS(m.block(i, kb0))
	qs := blk.Qs()
	d := sim.H2F(blk.D())
	for s := 0; s < 8; s++ {
		table16Values(x.qs[32*s:32*s+32], qs[16*s:16*s+16], &quant.KValuesIQ4NL)
		x.df[s] = sim.Mul(d, sim.I2F(int32(blk.Ls(s)-32)))
	}
}
