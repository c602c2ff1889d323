package mmq

import (
	"slices"

	"github.com/ggsim/ggsim/f16"
	"github.com/ggsim/ggsim/quant"
	"github.com/ggsim/ggsim/sim"
	"github.com/ggsim/ggsim/sim/q8"
)

// The dp4a path of mul_mat_q: what ggml runs where the int8-MMA data layout is not
// available (Pascal, Volta; a build without TURING_MMA_AVAILABLE on any NVIDIA GPU).
// ggml_cuda_mmq_get_util_funcs then takes its first switch: the load_tiles `#else`
// branches (mmq-load-tiles.cuh), the *_dp4a vec_dots (mmq-vec-dot.cuh, which call the
// vec_dot_*_impl functions of vecdotq.cuh) and ggml_cuda_mmq_write_back_dp4a.
//
// Partition, tile loop and stream-K fixup are the MMA path's (mulMat): per output
// element the float sum is a sequential fold over the K iterations, each calling the
// vec_dot twice (k00 = 0 and MMQ_TILE_NE_K). In a vec_dot each thread owns whole
// outputs: sum[(j0/nwarps)*(I/warp_size) + i0/warp_size] for i = i0 + threadIdx.x,
// j = j0 + threadIdx.y, and adds the impl's float result once per k01 step, so the order
// is the impl's and the k01 loop's (ascending k).
//
// Rows. With fallback (N % 128 != 0) load_tiles reads row min(i, i_max) for every tile
// row i, so a row past the end computes the last row's values again, and write_back_dp4a
// skips i > i_max (and returns at j > j_max); every existing (i, j) is written once, by
// the thread that computed it, from its own register: ownership has no numeric effect.
// computeTile computes the existing rows only, which is the same.
//
// Float order. Each contraction site follows LLVM's DAG rule under -use_fast_math
// (-fmad=true): (fadd (fmul x, y), z) -> fma(x, y, z) and (fadd z, (fmul x, y)) -> the
// same; (fsub (fmul x, y), (fmul u, v)) with single-use products -> fma(x, y, -(u*v)),
// the left product fused. A site whose addend is not an fmul (an fma, a sum) is a plain
// add. Predicted before any GPU output existed, then checked: 2500 of 2500 random cases
// of a real H200 dp4a build bit-exact (gpu/testdata/h200-cuda13-sweep).
//
// The half arithmetic of the q4_1/q5_1/q8_1 impls (__hmul2 of dm and ds) is the
// FAST_FP16_AVAILABLE branch, which every NVIDIA GPU of cc >= 600 but cc 610 compiles;
// on cc 610 (GP10x consumer Pascal) ggml multiplies in float32 instead, which is not
// modelled (MulMatDP4A models the H200 build).

// kernelsDP4A are the dp4a-path kernels by type.
var kernelsDP4A = map[quant.Type]*kernel{}

// MulMatDP4A is MulMat on the dp4a path: ggml_mul_mat(a, b) as mul_mat_q computes it on
// dev when the int8-MMA data layout is not used, with the plan p (the partition depends
// on the type's block size only; MakePlan's for a type of the same block size is the
// ampere table's). a holds N rows of K values of t, b holds M columns of K float32; the
// result is [N, M] (dst[j*N+i]). A type without a dp4a kernel is an error wrapping
// errors.ErrUnsupported.
func MulMatDP4A(dev sim.Device, t quant.Type, a []byte, K, N int, b []float32, M int, p *Plan) ([]float32, error) {
	return mulMat(kernelsDP4A, "dp4a MMQ", t, a, K, N, b, M, p)
}

// DP4ATypes returns the types MulMatDP4A models.
func DP4ATypes() []quant.Type {
	var ts []quant.Type
	for t := range kernelsDP4A {
		ts = append(ts, t)
	}
	slices.Sort(ts)
	return ts
}

// dp4aDotQ8_0 is ggml_cuda_mmq_vec_dot_q8_0_q8_1_dp4a (Q8_0, Q5_0, IQ4_XS, IQ4_NL,
// MXFP4, ...): per 32-value block b (k01 steps of VDR_Q8_0_Q8_1_MMQ = 8 ints) the impl
// vec_dot_q8_0_q8_1_impl<float> returns d8_0*d8_1 * (float)sumi, added to sum:
//
//	sum += (dA*dB)*float(C)  ->  sum = fma(dA*dB, float(C), sum)
//
// with dA = x_df[b] and dB = y.d4 of the block (D4 layout). The MMA path multiplies
// float(C)*dA first; where dA is a power of two (MXFP4) the two orders agree.
func dp4aDotQ8_0(x *xTile, hd *halfDots, y0, y1 *q8.BlockMMQ, sum float32) float32 {
	for b := 0; b < 8; b++ {
		y, k := yHalf(y0, y1, b)
		c := hd[2*b] + hd[2*b+1]
		sum = sim.FMA(sim.Mul(x.df[b], y.D4(k)), sim.I2F(c), sum)
	}
	return sum
}

// dp4aDotQ8_1 is ggml_cuda_mmq_vec_dot_q8_1_q8_1_dp4a (Q5_1) and, with the unsigned
// nibbles in x.qs, ggml_cuda_mmq_vec_dot_q4_1_q8_1_dp4a (Q4_1): per 32-value block b the
// impl (vec_dot_q8_1_q8_1_impl / vec_dot_q4_1_q8_1_impl, FAST_FP16_AVAILABLE) computes
//
//	tmp = __half22float2(__hmul2(dm, ds))   (both products rounded to half)
//	r   = sumi*tmp.x + tmp.y / 1            ->  r = fma(float(C), tmp.x, tmp.y)
//	sum += r                                ->  sum = sum + r
//
// (the divisor QI8_1/vdr, QI8_1/(vdr*QR4_1) is 1 for the MMQ vdr, and x/1 folds to x),
// with dm = x.dmh[b] and ds the DS4 {d, sum} of the y block.
func dp4aDotQ8_1(x *xTile, hd *halfDots, y0, y1 *q8.BlockMMQ, sum float32) float32 {
	for b := 0; b < 8; b++ {
		y, k := yHalf(y0, y1, b)
		c := hd[2*b] + hd[2*b+1]
		d, s := y.DS4(k)
		p := f16.Mul2(x.dmh[b], f16.Half2{Lo: d, Hi: s})
		r := sim.FMA(sim.I2F(c), sim.H2F(p.Lo), sim.H2F(p.Hi))
		sum = sim.Add(sum, r)
	}
	return sum
}

// dp4aDotQ4_0 is ggml_cuda_mmq_vec_dot_q4_0_q8_1_dp4a: x.qs holds the unsigned nibbles
// (the dp4a tile keeps the raw qs; vec_dot_q4_0_q8_1_impl masks them), and the -8 comes
// from the y block's sum. Per 32-value block b, with {d8, s8} = the DS4 of the y block
// as floats and d4 = x_df[b]:
//
//	inner = sumi*d8 - 8*s8   ->  inner = fma(float(C), d8, -(8*s8))   (8*s8 exact)
//	sum  += d4*inner         ->  sum   = fma(d4, inner, sum)
func dp4aDotQ4_0(x *xTile, hd *halfDots, y0, y1 *q8.BlockMMQ, sum float32) float32 {
	for b := 0; b < 8; b++ {
		y, k := yHalf(y0, y1, b)
		c := hd[2*b] + hd[2*b+1]
		d, s := y.DS4(k)
		inner := sim.FMA(sim.I2F(c), sim.H2F(d), -sim.Mul(8, sim.H2F(s)))
		sum = sim.FMA(x.df[b], inner, sum)
	}
	return sum
}

// dp4aDotQ4_K is ggml_cuda_mmq_vec_dot_q4_K_q8_1_dp4a and ..._q5_K_q8_1_dp4a (the same
// float order; x.qs holds the unsigned 4- or 5-bit values in k order). Per k01 step (64
// values, sub-blocks s and s+1 of 32, the y groups g, g+1) vec_dot_q4_K_q8_1_impl_mmq
// (_q5_K_) computes, from sumf_d = sumf_m = 0,
//
//	sumf_d += ds8.x * (sc[s]*sumi)   ->  sumf_d = fma(d8, float(sc*C), sumf_d)
//	sumf_m += ds8.y * m[s]           ->  sumf_m = fma(s8, float(m), sumf_m)
//	r = dm.x*sumf_d - dm.y*sumf_m    ->  r = fma(dm.x, sumf_d, -(dm.y*sumf_m))
//	sum += r                         ->  sum = sum + r
//
// with sc, m the 6-bit scales and mins (x.sc[0..7], x.sc[8..15]) as integers and dm the
// block's half2 {d, dmin} (x.dmh[0]) as floats: no half product, unlike the MMA path's
// dm*make_half2(sc, m).
func dp4aDotQ4_K(x *xTile, hd *halfDots, y0, y1 *q8.BlockMMQ, sum float32) float32 {
	dmx, dmy := sim.H2F(x.dmh[0].Lo), sim.H2F(x.dmh[0].Hi)
	for s0 := 0; s0 < 8; s0 += 2 {
		var sd, sm float32
		for s := s0; s < s0+2; s++ {
			y, k := yHalf(y0, y1, s)
			c := hd[2*s] + hd[2*s+1]
			d8, s8 := y.DS4(k)
			sd = sim.FMA(sim.H2F(d8), sim.I2F(x.sc[s]*c), sd)
			sm = sim.FMA(sim.H2F(s8), sim.I2F(x.sc[8+s]), sm)
		}
		r := sim.FMA(dmx, sd, -sim.Mul(dmy, sm))
		sum = sim.Add(sum, r)
	}
	return sum
}

// dp4aDotQ3_K is ggml_cuda_mmq_vec_dot_q3_K_q8_1_dp4a: per 32-value block b (k01 steps
// of QR3_K*VDR_Q3_K_Q8_1_MMQ = 8 ints) vec_dot_q3_K_q8_1_impl_mmq sums the two 16-value
// dots times their int8 scales in int32 and returns d3*d8 * sumi:
//
//	sumi = C0*sc[2b] + C1*sc[2b+1]      (exact)
//	sum += (d3*d8)*float(sumi)          ->  sum = fma(d3*d8, float(sumi), sum)
//
// with d3 = x_df[0] (the block's d as float), sc = x.sc (scale - 32) and d8 = y.d4.
func dp4aDotQ3_K(x *xTile, hd *halfDots, y0, y1 *q8.BlockMMQ, sum float32) float32 {
	for b := 0; b < 8; b++ {
		y, k := yHalf(y0, y1, b)
		c0 := hd[2*b]
		c1 := hd[2*b+1]
		sumi := c0*x.sc[2*b] + c1*x.sc[2*b+1]
		sum = sim.FMA(sim.Mul(x.df[0], y.D4(k)), sim.I2F(sumi), sum)
	}
	return sum
}

// dp4aDotQ6_K is ggml_cuda_mmq_vec_dot_q6_K_q8_1_dp4a: per k01 step (64 values: the
// 32-value blocks 2p, 2p+1 of the y block, 16-value sub-blocks 4p..4p+3)
// vec_dot_q6_K_q8_1_impl_mmq computes, from sumf_d = 0,
//
//	sumf_d += d8[0] * (sc[4p]*C0 + sc[4p+1]*C1)    ->  sumf_d = fma(d8[0], float(...), sumf_d)
//	sumf_d += d8[1] * (sc[4p+2]*C2 + sc[4p+3]*C3)  ->  sumf_d = fma(d8[1], float(...), sumf_d)
//	sum += d6 * sumf_d                             ->  sum = fma(d6, sumf_d, sum)
//
// with the int8 scales x.sc, d6 = x_df (the block's d as float) and d8 = y.d4.
func dp4aDotQ6_K(x *xTile, hd *halfDots, y0, y1 *q8.BlockMMQ, sum float32) float32 {
	for p := 0; p < 4; p++ {
		var sd float32
		for b := 2 * p; b < 2*p+2; b++ {
			y, k := yHalf(y0, y1, b)
			c0 := hd[2*b]
			c1 := hd[2*b+1]
			sd = sim.FMA(y.D4(k), sim.I2F(x.sc[2*b]*c0+x.sc[2*b+1]*c1), sd)
		}
		sum = sim.FMA(x.df[0], sd, sum)
	}
	return sum
}

// dp4aDotQ2_K is ggml_cuda_mmq_vec_dot_q2_K_q8_1_dp4a (D2S6 activations). Per y block
// and half p of it (k01 = 16p: values 64p..64p+63, d8 = d2s6[p]), with ns8 = 2-p,
// vec_dot_q2_K_q8_1_impl_mmq runs over its two 32-value parts q (i0 = 8q; 16-value
// groups G, G+1 with {dm.x, dm.y} = x.mA, the half products d*sc, dmin*m), from
// sumf = sumf_d8 = 0:
//
//	sumf_d8 += dm0.x*C0; sumf_d8 += dm1.x*C1   ->  fma(dm.x, float(C), sumf_d8) each
//	q < ns8 (the sums are in d2s6[2+4p+2q], [3+4p+2q]):
//	  sumf -= dm0.y*s0; sumf -= dm1.y*s1       ->  sumf = fma(-dm.y, s, sumf) each
//	else (values 96..127: no stored sum; the kernel sums the q8 values with dp4a):
//	  sumf_d8 -= dm0.y*S0; sumf_d8 -= dm1.y*S1 ->  sumf_d8 = fma(-dm.y, float(S), sumf_d8)
//	r = sumf + d8*sumf_d8                      ->  r = fma(d8, sumf_d8, sumf)
//	sum += r                                   ->  sum = sum + r
func dp4aDotQ2_K(x *xTile, hd *halfDots, y0, y1 *q8.BlockMMQ, sum float32) float32 {
	for h, y := range [2]*q8.BlockMMQ{y0, y1} {
		for p := 0; p < 2; p++ {
			var sumf, sumfD8 float32
			for q := 0; q < 2; q++ {
				base := 64*p + 32*q // within the y block
				g := 8*h + base/16  // 16-value group of the iteration
				c0 := hd[g]
				c1 := hd[g+1]
				sumfD8 = sim.FMA(x.mA[g][0], sim.I2F(c0), sumfD8)
				sumfD8 = sim.FMA(x.mA[g+1][0], sim.I2F(c1), sumfD8)
				if q < 2-p {
					s0, s1 := sim.H2F(y.D2S6(2+4*p+2*q)), sim.H2F(y.D2S6(3+4*p+2*q))
					sumf = sim.FMA(-x.mA[g][1], s0, sumf)
					sumf = sim.FMA(-x.mA[g+1][1], s1, sumf)
				} else {
					var m0, m1 int32
					for _, v := range y.Qs[base : base+16] {
						m0 += int32(v)
					}
					for _, v := range y.Qs[base+16 : base+32] {
						m1 += int32(v)
					}
					sumfD8 = sim.FMA(-x.mA[g][1], sim.I2F(m0), sumfD8)
					sumfD8 = sim.FMA(-x.mA[g+1][1], sim.I2F(m1), sumfD8)
				}
			}
			r := sim.FMA(sim.H2F(y.D2S6(p)), sumfD8, sumf)
			sum = sim.Add(sum, r)
		}
	}
	return sum
}
