package mmq

import (
	"github.com/ggsim/ggsim/f16"
	"github.com/ggsim/ggsim/quant"
	"github.com/ggsim/ggsim/sim"
	"github.com/ggsim/ggsim/sim/q8"
)

// Load-time arithmetic of the dp4a data layout (mmq-load-tiles.cuh, the `#else` branches
// of the TURING_MMA_AVAILABLE tests). The tile rows have stride 2*MMQ_TILE_NE_K+1 ints
// (MMQ_TILE_NE_K+1 for Q4_0, Q4_1, Q4_K, which keep the raw qs), the scales their own
// padded arrays (x_df[i*8 + i/4 + b], x_sc[i*4 + i/8 + ...], x_dm[i]); every index the
// load writes is the one the vec_dot reads for the same row and k, so here only the
// values matter: x.qs holds, in k order, the integer each dp4a multiplies with the y
// value at the same k (the raw nibbles where the vec_dot masks them itself).

func init() {
	kernelsDP4A[quant.Q8_0] = &kernel{layout: q8.D4, load: loadQ8_0, dot: dp4aDotQ8_0}
	kernelsDP4A[quant.Q4_0] = &kernel{layout: q8.DS4, load: loadQ4_0DP4A, dot: dp4aDotQ4_0}
	kernelsDP4A[quant.Q4_1] = &kernel{layout: q8.DS4, load: loadQ4_1DP4A, dot: dp4aDotQ8_1}
	kernelsDP4A[quant.Q5_0] = &kernel{layout: q8.D4, load: loadQ5_0DP4A, dot: dp4aDotQ8_0}
	kernelsDP4A[quant.Q5_1] = &kernel{layout: q8.DS4, load: loadQ5_1DP4A, dot: dp4aDotQ8_1}
	kernelsDP4A[quant.Q3_K] = &kernel{layout: q8.D4, load: loadQ3_KDP4A, dot: dp4aDotQ3_K}
	kernelsDP4A[quant.Q4_K] = &kernel{layout: q8.DS4, load: loadQ4_KDP4A, dot: dp4aDotQ4_K}
	kernelsDP4A[quant.Q5_K] = &kernel{layout: q8.DS4, load: loadQ5_KDP4A, dot: dp4aDotQ4_K}
	kernelsDP4A[quant.Q6_K] = &kernel{layout: q8.D4, load: loadQ6_KDP4A, dot: dp4aDotQ6_K}
	kernelsDP4A[quant.Q2_K] = &kernel{layout: q8.D2S6, load: loadQ2_KDP4A, dot: dp4aDotQ2_K}
	kernelsDP4A[quant.IQ4_XS] = &kernel{layout: q8.D4, load: loadIQ4_XS, dot: dp4aDotQ8_0}
	kernelsDP4A[quant.IQ4_NL] = &kernel{layout: q8.D4, load: loadIQ4_NL, dot: dp4aDotQ8_0}
	kernelsDP4A[quant.MXFP4] = &kernel{layout: q8.D4, load: loadMXFP4, dot: dp4aDotQ8_0}
}

// nibbles32 writes the 32 values of a 16-byte legacy nibble array in value order: low
// nibble of byte j is value j, high nibble value j+16.
func nibbles32(dst []int8, qs []byte, table *[16]int8) {
	for j := 0; j < 16; j++ {
		lo, hi := qs[j]&0xF, qs[j]>>4
		if table != nil {
			dst[j], dst[16+j] = table[lo], table[hi]
		} else {
			dst[j], dst[16+j] = int8(lo), int8(hi)
		}
	}
}

// loadQ4_0DP4A: x_qs = the raw qs ints (the nibbles, unsigned: the vec_dot subtracts 8
// through the y sum), x_df = d.
func loadQ4_0DP4A(m *matrix, i, kb0 int, x *xTile) {
	for b := 0; b < 8; b++ {
		blk := quant.BlockQ4_0(m.block(i, kb0+b))
		nibbles32(x.qs[32*b:32*b+32], blk.Qs(), nil)
		x.df[b] = sim.H2F(blk.D())
	}
}

// loadQ4_1DP4A: x_qs = the raw qs (unsigned nibbles), x_dm = the block's half2 dm.
func loadQ4_1DP4A(m *matrix, i, kb0 int, x *xTile) {
	for b := 0; b < 8; b++ {
		blk := quant.BlockQ4_1(m.block(i, kb0+b))
		nibbles32(x.qs[32*b:32*b+32], blk.Qs(), nil)
		x.dmh[b] = f16.Half2{Lo: blk.D(), Hi: blk.M()}
	}
}

// loadQ5_0DP4A: x_qs = __vsubss4(5-bit value, 16), x_df = d.
func loadQ5_0DP4A(m *matrix, i, kb0 int, x *xTile) {
	for b := 0; b < 8; b++ {
		blk := quant.BlockQ5_0(m.block(i, kb0+b))
		q5Values(x.qs[32*b:32*b+32], blk.Qs(), blk.Qh(), 16)
		x.df[b] = sim.H2F(blk.D())
	}
}

// loadQ5_1DP4A: x_qs = the 5-bit values (0..31), x_dm = the block's half2 dm.
func loadQ5_1DP4A(m *matrix, i, kb0 int, x *xTile) {
	for b := 0; b < 8; b++ {
		blk := quant.BlockQ5_1(m.block(i, kb0+b))
		q5Values(x.qs[32*b:32*b+32], blk.Qs(), blk.Qh(), 0)
		x.dmh[b] = f16.Half2{Lo: blk.D(), Hi: blk.M()}
	}
}

// loadQ4_KDP4A: x_qs = the raw qs (the vec_dot shifts and masks: value order is sub-block
// 2c from the low nibbles of bytes 32c.., 2c+1 from the high), x_dm[i] = the block's dm,
// x_sc = unpack_scales_q45_K: bytes 0..7 the scales, 8..15 the mins (6 bits each).
func loadQ4_KDP4A(m *matrix, i, kb0 int, x *xTile) {
	loadQ45_KDP4A(quant.BlockQ4_K(m.block(i, kb0)), x)
}

// loadQ5_KDP4A: x_qs = ql | qh bit << 4 (0..31) in value order, x_dm and x_sc as Q4_K.
func loadQ5_KDP4A(m *matrix, i, kb0 int, x *xTile) {
	loadQ45_KDP4A(quant.BlockQ5_K(m.block(i, kb0)), x)
}

// blockQ45 is what the dp4a loads of Q4_K and Q5_K read of a block.
type blockQ45 interface {
	Q(v int) uint8
	ScaleMin(s int) (sc, m uint8)
	DM() (d, dmin f16.Half)
}

func loadQ45_KDP4A[B blockQ45](blk B, x *xTile) {
	for v := 0; v < 256; v++ {
		x.qs[v] = int8(blk.Q(v))
	}
	for s := 0; s < 8; s++ {
		sc, mn := blk.ScaleMin(s)
		x.sc[s], x.sc[8+s] = int32(sc), int32(mn)
	}
	d, dmin := blk.DM()
	x.dmh[0] = f16.Half2{Lo: d, Hi: dmin}
}

// loadQ3_KDP4A: x_qs = __vsubss4(low 2 bits | hmask bit << 2, 4) in value order, x_sc =
// the 16 scales __vsubss4(6-bit scale, 32) as int8, x_df[0] = d (half to float): unlike
// the MMA path no d*sc product at load time.
func loadQ3_KDP4A(m *matrix, i, kb0 int, x *xTile) {
	loadQ36_KDP4A(quant.BlockQ3_K(m.block(i, kb0)), x)
}

// loadQ6_KDP4A: x_qs = __vsubss4(ql | qh << 4, 32) in value order, x_sc = the 16 int8
// scales as stored, x_df[0] = d.
func loadQ6_KDP4A(m *matrix, i, kb0 int, x *xTile) {
	loadQ36_KDP4A(quant.BlockQ6_K(m.block(i, kb0)), x)
}

// blockQ36 is what the dp4a loads of Q3_K and Q6_K read of a block: signed values, 16
// signed scales and d.
type blockQ36 interface {
	Q(v int) int8
	Scale(s int) int8
	D() f16.Half
}

func loadQ36_KDP4A[B blockQ36](blk B, x *xTile) {
	for v := 0; v < 256; v++ {
		x.qs[v] = blk.Q(v)
	}
	for s := 0; s < 16; s++ {
		x.sc[s] = int32(blk.Scale(s))
	}
	x.df[0] = sim.H2F(blk.D())
}

// loadQ2_KDP4A: x_qs = the 2-bit values (0..3) in value order, x_dm[s] per 16 values =
// __hmul2(dm, make_half2(sc & 15, sc >> 4)) (FAST_FP16_AVAILABLE): {d*sc, dmin*m}
// rounded to half, kept here as floats in x.mA.
func loadQ2_KDP4A(m *matrix, i, kb0 int, x *xTile) {
	blk := quant.BlockQ2_K(m.block(i, kb0))
	for v := 0; v < 256; v++ {
		x.qs[v] = int8(blk.Q(v))
	}
	d, dmin := blk.DM()
	for s := 0; s < 16; s++ {
		sc, mn := blk.ScaleMin(s)
		p := f16.Mul2(f16.Half2{Lo: d, Hi: dmin}, f16.MakeHalf2(float32(sc), float32(mn)))
		x.mA[s] = [2]float32{sim.H2F(p.Lo), sim.H2F(p.Hi)}
	}
}
