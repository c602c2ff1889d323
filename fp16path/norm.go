package fp16path

import (
	"fmt"
	"math"

	"github.com/ggsim/ggsim/sim"
)

// rsqrtf is rsqrtf(x) as rms_norm_f32 computes it under -use_fast_math: sim.Rsqrt,
// MUFU.RSQ as measured on an H200 (gpu/testdata/h200-mufu); a variable for the same
// reason as expf (tests swap in a stand-in marked as not hardware).
var rsqrtf = func(x float32) (float32, error) { return sim.Rsqrt(x), nil }

// NormBlockSize is the CUDA block size ggml's rms_norm_f32 runs a row of ncols values
// with (rms_norm_mul_f32_cuda, norm.cu): 256 threads for ncols < 1024, else 1024.
func NormBlockSize(ncols int) int {
	if ncols < 1024 {
		return 256
	}
	return 1024
}

// RMSNormMul is the note's fused single-row RMS_NORM * weight: dst = rms_norm(x, eps) * w
// for one row x (ncols = len(x) = len(w)), with the arithmetic of ggml's
// rms_norm_f32<block_size, do_multiply = true> (norm.cu) for one row:
//
//   - thread t of NormBlockSize(ncols) threads: tmp_t = 0, then tmp_t = fma(x_c, x_c,
//     tmp_t) for c = t, t+block_size, ... (the "tmp += xi*xi" contracted to FFMA, as nvcc
//     does by default; FTZ);
//   - block_reduce<SUM>: each warp's xor butterfly (offsets 16..1) of its 32 threads'
//     tmp; the block_size/32 warp sums, padded with 0 to 32 lanes, by one more butterfly;
//   - mean = tmp / ncols (fast-math division: MUFU.RCP of float(ncols), FMUL; sim.Div),
//     scale = rsqrtf(mean + eps) (FADD, MUFU.RSQ: sim.Rsqrt, see rsqrtf);
//   - dst_c = (scale·x_c)·w_c (two FMUL.FTZ, left to right).
//
// The note's fusion (with the cache c non-nil and none of opt.Disabled, opt.NoNormFusion,
// opt.NoActCache: with the path off the norm is ggml's and nothing is converted) also converts dst for the fp16 path (ConvertActivations) and writes the
// conversion into c, keyed by the returned slice, so the matmuls that read dst (Q, K, V
// after attn_norm; gate and up after ffn_norm) do not convert it. The fused kernel uses
// the same reduction order as ggml's (our choice: the note leaves it open), so fused and
// unfused give the same bits: the fusion changes where the conversion runs, nothing else.
// Under the fusion len(x) must be a multiple of 32 (the conversion's block).
//
// x, w and eps must be finite, eps >= 0 (ggml asserts it), len(x) = len(w) >= 1.
func (c *Cache) RMSNormMul(x, w []float32, eps float32, opt *Options) ([]float32, error) {
	if err := opt.check(); err != nil {
		return nil, err
	}
	n := len(x)
	if n == 0 || len(w) != n {
		return nil, fmt.Errorf("fp16path: RMS_NORM row of %d values with %d weights: want equal, at least 1", n, len(w))
	}
	if n >= 1<<24 {
		return nil, fmt.Errorf("fp16path: RMS_NORM row of %d values: float(ncols) must be exact (below 2^24)", n)
	}
	if !(eps >= 0) || math.IsInf(float64(eps), 0) {
		return nil, fmt.Errorf("fp16path: RMS_NORM eps %v: want finite and >= 0", eps)
	}
	for i := range x {
		if !finite(x[i]) || !finite(w[i]) {
			return nil, fmt.Errorf("fp16path: RMS_NORM value %d: x = %v, w = %v: want finite", i, x[i], w[i])
		}
	}
	fuse := c != nil && (opt == nil || (!opt.Disabled && !opt.NoNormFusion && !opt.NoActCache))
	if fuse && n%32 != 0 {
		return nil, fmt.Errorf("fp16path: fused RMS_NORM row of %d values: the conversion needs a multiple of 32", n)
	}
	mean := sim.Div(SumSquares(x), float32(n))
	scale, err := rsqrtf(sim.Add(mean, eps))
	if err != nil {
		return nil, err
	}
	dst := make([]float32, n)
	for i := range x {
		dst[i] = sim.Mul(sim.Mul(scale, x[i]), w[i])
	}
	if fuse {
		a, err := ConvertActivations(dst)
		if err != nil {
			return nil, fmt.Errorf("fp16path: fused RMS_NORM output: %w", err)
		}
		c.put(cacheKey{&dst[0], n}, dst, []*Activations{a})
		c.conversions++
	}
	return dst, nil
}

// RMSNormMul is (*Cache)(nil).RMSNormMul: ggml's RMS_NORM*MUL of one row, no fusion.
func RMSNormMul(x, w []float32, eps float32, opt *Options) ([]float32, error) {
	var c *Cache
	return c.RMSNormMul(x, w, eps, opt)
}

// SumSquares is the block-reduced Σ x_c² of rms_norm_f32 for one row, in its order (see
// RMSNormMul): per-thread FFMA chains over the columns t, t+block_size, ...; the warps'
// butterflies; the butterfly of the warp sums padded with zeros to 32 lanes.
func SumSquares(x []float32) float32 {
	bs := NormBlockSize(len(x))
	var warps [sim.WarpSize]float32
	var lane [sim.WarpSize]float32
	for w := 0; w < bs/sim.WarpSize; w++ {
		for l := range lane {
			var tmp float32
			for col := w*sim.WarpSize + l; col < len(x); col += bs {
				tmp = sim.FMA(x[col], x[col], tmp)
			}
			lane[l] = tmp
		}
		warps[w] = sim.ReduceSumTree(lane[:])
	}
	return sim.ReduceSumTree(warps[:])
}

func finite(v float32) bool { return !math.IsNaN(float64(v)) && !math.IsInf(float64(v), 0) }
