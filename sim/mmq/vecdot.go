package mmq

import (
	"github.com/ggsim/ggsim/f16"
	"github.com/ggsim/ggsim/sim"
	"github.com/ggsim/ggsim/sim/q8"
)

// The vec_dot families of the int8-MMA path (mmq-vec-dot.cuh, NVIDIA branch). Each C is
// the exact int32 dot product the m16n8k32 (or k16) MMA gives for one (row, column);
// only the float order matters, and it is the source's, per 32-value block in
// ascending k (the fragment layout decides which thread owns an output, not the order).

// yHalf returns the block_q8_1_mmq holding values 32b..32b+31 of the iteration and the
// index of that 32-value group in it.
func yHalf(y0, y1 *q8.BlockMMQ, b int) (*q8.BlockMMQ, int) {
	if b < 4 {
		return y0, b
	}
	return y1, b - 4
}

// dotQ8_0Q8_1 is ggml_cuda_mmq_vec_dot_q8_0_q8_1_mma: per 32-value block b,
//
//	sum += C.x[l]*dA*dB  ->  sum = fma(float(C)*dA, dB, sum)
//
// with dA = x_df[b] and dB the block's d: y.d4 (D4 layout) or the half d of y.ds4
// (DS4, Q4_0).
func dotQ8_0Q8_1(ds4 bool) func(x *xTile, hd *halfDots, y0, y1 *q8.BlockMMQ, sum float32) float32 {
	return func(x *xTile, hd *halfDots, y0, y1 *q8.BlockMMQ, sum float32) float32 {
		for b := 0; b < 8; b++ {
			y, k := yHalf(y0, y1, b)
			c := hd[2*b] + hd[2*b+1]
			var dB float32
			if ds4 {
				d, _ := y.DS4(k)
				dB = sim.H2F(d)
			} else {
				dB = y.D4(k)
			}
			sum = sim.FMA(sim.Mul(sim.I2F(c), x.df[b]), dB, sum)
		}
		return sum
	}
}

// dotQ8_1Q8_1 is ggml_cuda_mmq_vec_dot_q8_1_q8_1_mma: per 32-value block b,
//
//	sum += dmA.x*dsB.x*C.x[l]  ->  sum = fma(dmA.x*dsB.x, float(C), sum)
//	sum += dmA.y*dsB.y         ->  sum = fma(dmA.y, dsB.y, sum)
//
// with dmA = x_dm[b] (a half2 as float2) and dsB = the DS4 {d, sum} of the y block.
func dotQ8_1Q8_1(x *xTile, hd *halfDots, y0, y1 *q8.BlockMMQ, sum float32) float32 {
	for b := 0; b < 8; b++ {
		y, k := yHalf(y0, y1, b)
		c := hd[2*b] + hd[2*b+1]
		d, s := y.DS4(k)
		sum = sim.FMA(sim.Mul(x.dm[b][0], sim.H2F(d)), sim.I2F(c), sum)
		sum = sim.FMA(x.dm[b][1], sim.H2F(s), sum)
	}
	return sum
}

// h16 reads a little-endian binary16 at p[0:2].
func h16(p []byte) f16.Half { return f16.Half(uint16(p[0]) | uint16(p[1])<<8) }

// u32 reads a little-endian uint32 at p[0:4].
func u32(p []byte) uint32 {
	return uint32(p[0]) | uint32(p[1])<<8 | uint32(p[2])<<16 | uint32(p[3])<<24
}

// dotQ8_0_16Q8_1 is ggml_cuda_mmq_vec_dot_q8_0_16_q8_1_mma (Q3_K, IQ2_XS, IQ2_S, NVFP4):
// x_df holds one scale per 16 values; per 32-value block b with C0, C1 the exact dots
// of its two 16-value halves,
//
//	sum += dB*(C0*dA0 + C1*dA1)  ->  sum = fma(dB, fma(float(C0), dA0, float(C1)*dA1), sum)
//
// (the inner contraction as NVVM's DAG combiner fuses the left product of an fadd of two
// fmuls) with dB = y.d4 of the block.
func dotQ8_0_16Q8_1(x *xTile, hd *halfDots, y0, y1 *q8.BlockMMQ, sum float32) float32 {
	for b := 0; b < 8; b++ {
		y, k := yHalf(y0, y1, b)
		c0 := hd[2*b]
		c1 := hd[2*b+1]
		in := sim.FMA(sim.I2F(c0), x.df[2*b], sim.Mul(sim.I2F(c1), x.df[2*b+1]))
		sum = sim.FMA(y.D4(k), in, sum)
	}
	return sum
}
