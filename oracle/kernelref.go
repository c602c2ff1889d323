package oracle

import (
	"fmt"
	"math"

	"github.com/ggsim/ggsim/f16"
	"github.com/ggsim/ggsim/quant"
	"github.com/ggsim/ggsim/sim"
	"github.com/ggsim/ggsim/sim/q8"
	"github.com/ggsim/ggsim/streamk"
	"github.com/ggsim/ggsim/tiling"
)

// The kernel bound (docs/bounds.md has the derivation and the measurements).
//
// MulMatRef's bound covers the activations' quantization error with a probabilistic
// term and is larger than the result itself on average. The kernel bound removes that
// term: it quantizes the activations as the kernel does (sim/q8: quantize_q8_1 for
// MMVQ, quantize_mmq_q8_1 in the type's layout for MMQ) and computes in fp64 the value
// the kernel's own formula gives in exact arithmetic (Reference.Center): the weights as
// the kernel's load stage holds them (with the binary16 products HMUL2 makes there),
// the activations d8·q8, the offsets through the activation sums the kernel reads (the
// stored binary16 sums of the raw activations, or the exact Σq8), and the __hmul2
// products of Q4_1/Q5_1. What is left between a correct kernel and Center is the
// rounding of its float32 arithmetic, which a running error bound computed alongside
// bounds rigorously:
//
//	|gpu - Center| ≤ (1+ε)·u·[ r·Σ_pieces |t_p| + accumulation ] + ftz
//
// u = 2^-24; t_p the exact terms of the integer-dot pieces (4 values in MMVQ, 16 in
// MMQ: every dp4a or mma result covers whole pieces, so |each float operand| ≤ Σ|t_p|
// beneath it); r the longest chain of roundings a term passes inside one vec_dot call
// (per type and path, from the float sequences of FMA-SITES*.md); accumulation the
// nodes after that: MMVQ (a Wilkinson bound over the thread's chain, the cross-warp adds
// and the butterfly: depth D = iterations + warps - 1 + 5, each node ≤ Σ|t_p| beneath
// it), MMQ (a running bound over the actual partial sums: per 128-value vec_dot call,
// adds(type,path) accumulator nodes each ≤ |P(call start)| + Σ|t_p| of the call, with
// P the exact partial sum of the stream-K range, then the fixup's running sums).
// ftz adds 2^-126 per float operation (flushed subnormal results).

// kpath is the kernel family whose arithmetic the bound follows.
type kpath int

const (
	pathMMVQ kpath = iota // quantize_q8_1 + mul_mat_vec_q
	pathMMA               // quantize_mmq_q8_1 + mul_mat_q, int8-MMA data layout
	pathDP4A              // quantize_mmq_q8_1 + mul_mat_q, dp4a data layout
)

func (p kpath) String() string {
	return [...]string{"mmvq", "mmq-mma", "mmq-dp4a"}[p]
}

// kmodel says how a type's kernel on a path meets its activations.
type kmodel struct {
	// offset: the weights are A·a + B per group (a an unsigned code) and the kernel
	// applies B through a sum of the activations; otherwise the kernel's int dot runs on
	// signed values and the exact value is Σ x·y'.
	offset bool
	group  int  // values per (A, B): 32 or 16
	stored bool // the sum is the stored binary16 sum of the raw activations, else Σ d8·q8
	// roundAB: the MMQ load holds h(A), h(B) (HMUL2 of Q4_K, Q5_K, Q2_K; make_half2 of
	// IQ1_S); roundProd: the vec_dot uses h(A·d8), h(B·s8) (__hmul2(dm, ds) of Q4_1,
	// Q5_1, and IQ1_S on dp4a).
	roundAB, roundProd bool
	r                  int // roundings inside one vec_dot call on a term's path
	adds               int // MMQ: accumulator nodes per 128-value vec_dot call
	// trunc: the MMVQ vec_dot of IQ2_XXS, IQ2_XS, IQ2_S, IQ3_XXS returns d·d8·T per
	// 32-value call, T an integer expression of the int dots with C's truncating
	// divisions (sumi*ls/8 and the like); the exact value applies the same truncation
	// (loadTrunc) and the only term of the call is d·d8·T.
	trunc bool
	// callExact: the vec_dot forms its 32-value result exactly but for one rounding of
	// at most u·|result| before the fused add into tmp (IQ1_S's X, IQ1_M's R on MMVQ,
	// FMA-SITES-IQ.md), so a call's magnitude is |its exact value|, not Σ|t_p|.
	callExact bool
}

// kernelModels: ggml d99724f2b141, vecdotq.cuh / mmq-vec-dot.cuh / mmq-load-tiles.cuh
// as FMA-SITES.md, FMA-SITES-IQ.md (sim/mmvq) and FMA-SITES-MMQ.md, FMA-SITES-DP4A.md
// (sim/mmq) record them; mmq_get_q8_1_ds_layout for the stored sums (DS4: Q4_0, Q4_1,
// Q5_1, Q4_K, Q5_K; D2S6: Q2_K, sums of values 0..95 of each 128; D4 otherwise).
// The i-quants with integer divisions (IQ2_XXS, IQ2_XS, IQ2_S, IQ3_XXS) are trunc on
// MMVQ; on MMQ their loads hold the dequantized values exactly (x_df = d·(2ls+1)/8 and
// the like are exact in float32, sim/mmq/iq.go), so they are symmetric there, on the
// q8_0 vec_dot (IQ2_XXS, IQ3_XXS: as IQ3_S) or the q8_0_16 one (IQ2_XS, IQ2_S: as
// NVFP4). IQ1_S is an offset type, x = d1q·(a + δ) with a ∈ {0, 1, 2} the GPU grid code:
// on MMVQ A = d1q, B = d1q·δ applied through the stored q8_1 sum (X = fma(d8, sumi,
// δ·s8) rounds once, then fma(d1q, X, tmp): callExact), on MMQ the load holds h(d1q),
// h(d1q·δ) (make_half2) and the q8_1 vec_dot runs as for Q4_1. IQ1_M (MMVQ only: no MMQ) is symmetric: its R
// is exact (sim/mmvq/FMA-SITES-IQ.md), so the vec_dot rounds only in tmp = fma(d, R, tmp)
// (callExact).
var kernelModels = map[kpath]map[quant.Type]kmodel{
	pathMMVQ: {
		quant.Q4_0:    {offset: true, group: 32, stored: true, r: 2},
		quant.Q5_0:    {offset: true, group: 32, stored: true, r: 2},
		quant.Q4_1:    {offset: true, group: 32, stored: true, roundProd: true, r: 1},
		quant.Q5_1:    {offset: true, group: 32, stored: true, roundProd: true, r: 1},
		quant.Q4_K:    {offset: true, group: 32, r: 4},
		quant.Q5_K:    {offset: true, group: 32, r: 4},
		quant.Q2_K:    {offset: true, group: 16, r: 6},
		quant.Q8_0:    {r: 1},
		quant.Q3_K:    {r: 4},
		quant.Q6_K:    {r: 2},
		quant.IQ4_NL:  {r: 1},
		quant.IQ4_XS:  {r: 1},
		quant.MXFP4:   {r: 1},
		quant.NVFP4:   {r: 2},
		quant.IQ3_S:   {r: 1},
		quant.Q1_0:    {r: 1},
		quant.Q2_0:    {r: 1},
		quant.IQ1_M:   {callExact: true, r: 1},
		quant.IQ1_S:   {offset: true, group: 32, stored: true, callExact: true, r: 1},
		quant.IQ2_XXS: {trunc: true, r: 1},
		quant.IQ2_XS:  {trunc: true, r: 1},
		quant.IQ2_S:   {trunc: true, r: 1},
		quant.IQ3_XXS: {trunc: true, r: 1},
	},
	pathMMA: {
		quant.Q4_0:    {r: 1, adds: 4},
		quant.Q5_0:    {r: 1, adds: 4},
		quant.Q8_0:    {r: 1, adds: 4},
		quant.IQ4_NL:  {r: 1, adds: 4},
		quant.IQ4_XS:  {r: 1, adds: 4},
		quant.MXFP4:   {r: 1, adds: 4},
		quant.IQ3_S:   {r: 1, adds: 4},
		quant.Q1_0:    {r: 1, adds: 4},
		quant.Q2_0:    {r: 1, adds: 4},
		quant.IQ2_XXS: {r: 1, adds: 4},
		quant.IQ3_XXS: {r: 1, adds: 4},
		quant.Q3_K:    {r: 2, adds: 4},
		quant.NVFP4:   {r: 2, adds: 4},
		quant.IQ2_XS:  {r: 2, adds: 4},
		quant.IQ2_S:   {r: 2, adds: 4},
		quant.Q6_K:    {r: 4, adds: 4},
		quant.IQ1_S:   {offset: true, group: 32, stored: true, roundAB: true, r: 1, adds: 8},
		quant.Q4_1:    {offset: true, group: 32, stored: true, r: 1, adds: 8},
		quant.Q5_1:    {offset: true, group: 32, stored: true, r: 1, adds: 8},
		quant.Q4_K:    {offset: true, group: 32, stored: true, roundAB: true, r: 1, adds: 8},
		quant.Q5_K:    {offset: true, group: 32, stored: true, roundAB: true, r: 1, adds: 8},
		quant.Q2_K:    {offset: true, group: 16, stored: true, roundAB: true, r: 3, adds: 10},
	},
	pathDP4A: {
		quant.Q5_0:    {r: 1, adds: 4},
		quant.Q8_0:    {r: 1, adds: 4},
		quant.IQ4_NL:  {r: 1, adds: 4},
		quant.IQ4_XS:  {r: 1, adds: 4},
		quant.MXFP4:   {r: 1, adds: 4},
		quant.IQ3_S:   {r: 1, adds: 4},
		quant.Q1_0:    {r: 1, adds: 4},
		quant.Q2_0:    {r: 1, adds: 4},
		quant.IQ2_XXS: {r: 1, adds: 4},
		quant.IQ3_XXS: {r: 1, adds: 4},
		quant.Q3_K:    {r: 1, adds: 4},
		quant.NVFP4:   {r: 2, adds: 4},
		quant.IQ2_XS:  {r: 2, adds: 4},
		quant.IQ2_S:   {r: 2, adds: 4},
		quant.Q6_K:    {r: 2, adds: 4},
		quant.IQ1_S:   {offset: true, group: 32, stored: true, roundAB: true, roundProd: true, r: 1, adds: 4},
		quant.Q4_0:    {offset: true, group: 32, stored: true, r: 2, adds: 4},
		quant.Q4_1:    {offset: true, group: 32, stored: true, roundProd: true, r: 1, adds: 4},
		quant.Q5_1:    {offset: true, group: 32, stored: true, roundProd: true, r: 1, adds: 4},
		quant.Q4_K:    {offset: true, group: 32, stored: true, r: 4, adds: 4},
		quant.Q5_K:    {offset: true, group: 32, stored: true, r: 4, adds: 4},
		quant.Q2_K:    {offset: true, group: 16, stored: true, roundAB: true, r: 7, adds: 4},
	},
}

// mmqLayout is mmq_get_q8_1_ds_layout (mmq.cuh).
func mmqLayout(t quant.Type) q8.Layout {
	switch t {
	case quant.Q4_0, quant.Q4_1, quant.Q5_1, quant.Q4_K, quant.Q5_K, quant.IQ1_S:
		return q8.DS4
	case quant.Q2_K:
		return q8.D2S6
	}
	return q8.D4
}

const (
	unitRound = 0x1p-24
	ftzAbs    = 0x1p-126
)

// KernelPath names the arithmetic MulMatRefOn follows for a MUL_MAT of t with M columns
// on dev: "mmvq", "mmq-mma", "mmq-dp4a", or "" where it falls back to MulMatRef's bound
// (a type or kernel the kernel bound does not model).
func KernelPath(dev sim.Device, t quant.Type, K, N, M int) string {
	p, ok := pathOf(dev, t, K, N, M)
	if !ok {
		return ""
	}
	return p.String()
}

func pathOf(dev sim.Device, t quant.Type, K, N, M int) (kpath, bool) {
	if !sim.CCIsNVIDIA(dev.CC) {
		return 0, false
	}
	d := tiling.MulMat(dev, t, tiling.Shape{K: int64(K), N: int64(N), M: int64(M)})
	var p kpath
	switch d.Kernel {
	case tiling.KernelMMVQ:
		p = pathMMVQ
	case tiling.KernelMMQ:
		mp, err := tiling.MakeMMQPlan(&dev, t, tiling.Shape{K: int64(K), N: int64(N), M: int64(M)})
		if err != nil || mp.UseNativeFP4 {
			return 0, false
		}
		p = pathDP4A
		if mp.Config.UseMMADataLayout {
			p = pathMMA
		}
	default:
		return 0, false
	}
	_, ok := kernelModels[p][t]
	return p, ok
}

// MulMatRefOn is MulMatRef for the kernel ggml runs on dev (tiling.MulMat): Value is the
// same fp64 truth; Center is the exact value of the kernel's formula on the activations
// as the kernel quantizes them, and Bound bounds |gpu - Center| by the float32 rounding
// of the kernel's arithmetic alone, a running error bound derived from the formats, K
// and the data (see the top of this file and docs/bounds.md). WithinBound then judges
// against Center. It assumes the device's MUFU.RCP is the H200's (the MMQ quantizer
// uses it) and finite inputs whose activation sums fit binary16. Where the kernel bound
// does not model the type or kernel (KernelPath is ""), it returns MulMatRef's result.
func MulMatRefOn(dev sim.Device, t quant.Type, a []byte, K, N int, b []float32, M int) (*Reference, error) {
	var out *Reference
	err := MulMatRefOnCols(dev, t, a, K, N, b, M, M, func(_, _ int, ref *Reference) error {
		out = ref
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// MulMatRefOnCols is MulMatRefOn a block of at most cols activation columns at a time:
// it calls fn for consecutive blocks [j0, j1) in order, with ref holding (j1-j0)·N
// values, element (i, j) at (j-j0)·N+i: the bits of MulMatRefOn's [j0·N, j1·N). ref's
// storage is reused from block to block (it is valid only during the call), so the
// reference of an N × M product holds N·cols outputs and cols quantized columns at a
// time, not N·M (3·8 bytes each). An error from fn stops it and is returned.
func MulMatRefOnCols(dev sim.Device, t quant.Type, a []byte, K, N int, b []float32, M, cols int, fn func(j0, j1 int, ref *Reference) error) error {
	if _, err := checkShape(t, a, K, N, b, M); err != nil {
		return err
	}
	if cols < 1 {
		return fmt.Errorf("oracle: %d columns per block: want at least 1", cols)
	}
	p, ok := pathOf(dev, t, K, N, M)
	var acc *accumulation
	if ok {
		var err error
		if acc, err = newAccumulation(dev, t, p, K, N, M, false); err != nil {
			ok = false // a launch the plans do not describe: MulMatRef's bound
		}
	}
	n := min(cols, M)
	all := &Reference{Value: make([]float64, N*n), Bound: make([]float64, N*n)}
	if ok {
		all.Center = make([]float64, N*n)
	}
	cs := make([][]float32, n)
	base := make([]int, n)
	var qc []qcol
	if ok {
		qc = make([]qcol, n)
	}
	for j0 := 0; j0 < M; j0 += n {
		j1 := min(M, j0+n)
		w := j1 - j0
		ref := &Reference{Value: all.Value[:w*N], Bound: all.Bound[:w*N]}
		if ok {
			ref.Center = all.Center[:w*N]
		}
		for c := 0; c < w; c++ {
			cs[c], base[c] = b[(j0+c)*K:(j0+c+1)*K], c*N
		}
		var err error
		if ok {
			err = kernelRows(t, p, a, K, N, j0, cs[:w], base[:w], acc, ref, qc)
		} else {
			err = plainRows(t, a, K, N, cs[:w], base[:w], gemmParallel(N, M), ref)
		}
		if err != nil {
			return err
		}
		if err := fn(j0, j1, ref); err != nil {
			return err
		}
	}
	return nil
}

// MulMatIDRefOn is MulMatRefOn for MUL_MAT_ID (oracle.Impl's layouts): per token and
// slot, the one-column product of the slot's expert, on the path ggml takes for T tokens
// (tiling.MulMatID). MMQ's stream-K partition of an ID launch depends on the routing, so
// its accumulation term is bounded for any partition at iteration boundaries.
func MulMatIDRefOn(dev sim.Device, t quant.Type, as []byte, K, N, E int, b []float32, B1, T int, ids []int32, U int) (*Reference, error) {
	var out *Reference
	err := MulMatIDRefOnTokens(dev, t, as, K, N, E, b, B1, T, ids, U, max(T, 1), func(_, _ int, ref *Reference) error {
		out = ref
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// MulMatIDRefOnTokens is MulMatIDRefOn a block of at most toks tokens at a time: it calls
// fn for consecutive blocks [t0, t1) in order, with ref holding (t1-t0)·U·N values, those
// of MulMatIDRefOn's [t0·U·N, t1·U·N) bit for bit (the path and bound are those of all T
// tokens). ref's storage is reused from block to block (valid only during the call);
// each block dequantizes the experts its slots use once more. An error from fn stops it
// and is returned.
func MulMatIDRefOnTokens(dev sim.Device, t quant.Type, as []byte, K, N, E int, b []float32, B1, T int, ids []int32, U, toks int, fn func(t0, t1 int, ref *Reference) error) error {
	rs, err := t.RowSize(int64(K))
	if err != nil {
		return err
	}
	if K <= 0 || N <= 0 || E <= 0 || B1 <= 0 || T <= 0 || U <= 0 || len(ids) != T*U || len(b) != K*B1*T || int64(len(as)) != rs*int64(N*E) {
		return fmt.Errorf("oracle: MUL_MAT_ID shape K=%d N=%d E=%d B1=%d T=%d U=%d does not fit %d weight bytes, %d activations, %d ids", K, N, E, B1, T, U, len(as), len(b), len(ids))
	}
	d := tiling.MulMatID(dev, t, tiling.Shape{K: int64(K), N: int64(N), M: int64(T), Experts: int64(E)})
	var p kpath
	ok := sim.CCIsNVIDIA(dev.CC)
	switch d.Kernel {
	case tiling.KernelMMVQ, tiling.KernelMMVQMoE:
		p = pathMMVQ
	case tiling.KernelMMQ:
		mp, err := tiling.MakeMMQPlan(&dev, t, tiling.Shape{K: int64(K), N: int64(N), M: int64(T), Experts: int64(E)})
		ok = ok && err == nil && !mp.UseNativeFP4
		p = pathDP4A
		if ok && mp.Config.UseMMADataLayout {
			p = pathMMA
		}
	default:
		ok = false
	}
	if _, known := kernelModels[p][t]; !known {
		ok = false
	}
	var acc *accumulation
	if ok {
		if p == pathMMVQ {
			var aerr error
			if acc, aerr = newMMVQAccumulation(dev, t, K, T, true); aerr != nil {
				ok = false // a launch the MMVQ plan does not describe: MulMatRef's bound
			}
		} else {
			acc = &accumulation{path: p, qk: t.BlockSize(), agnostic: true, adds: kernelModels[p][t].adds}
		}
	}
	for tok := 0; tok < T; tok++ {
		for u := 0; u < U; u++ {
			if e := ids[tok*U+u]; e < 0 || int(e) >= E {
				return fmt.Errorf("oracle: ids[%d][%d] = %d, outside 0..%d", tok, u, e, E-1)
			}
		}
	}
	if toks < 1 {
		return fmt.Errorf("oracle: %d tokens per block: want at least 1", toks)
	}
	expBytes := int(rs) * N
	n := min(toks, T)
	all := &Reference{Value: make([]float64, N*U*n), Bound: make([]float64, N*U*n)}
	if ok {
		all.Center = make([]float64, N*U*n)
	}
	var qc []qcol
	if ok {
		qc = make([]qcol, n*U)
	}
	var cols [][]float32
	var base []int
	for t0 := 0; t0 < T; t0 += n {
		t1 := min(T, t0+n)
		w := (t1 - t0) * U * N
		ref := &Reference{Value: all.Value[:w], Bound: all.Bound[:w]}
		if ok {
			ref.Center = all.Center[:w]
		}
		// Expert by expert, one weight row at a time, against the block's slots routed to
		// it (each slot the one-column product it always was: M = 1 for the bound and
		// gonum's order). Every slot has one expert, so every output of the block is set.
		for e := 0; e < E; e++ {
			cols, base = cols[:0], base[:0]
			for tok := t0; tok < t1; tok++ {
				for u := 0; u < U; u++ {
					if int(ids[tok*U+u]) != e {
						continue
					}
					r := (tok*B1 + u%B1) * K
					cols = append(cols, b[r:r+K])
					base = append(base, ((tok-t0)*U+u)*N)
				}
			}
			if len(cols) == 0 {
				continue
			}
			ex := as[e*expBytes : (e+1)*expBytes]
			if ok {
				err = kernelRows(t, p, ex, K, N, 0, cols, base, acc, ref, qc)
			} else {
				err = plainRows(t, ex, K, N, cols, base, gemmParallel(N, 1), ref)
			}
			if err != nil {
				return fmt.Errorf("oracle: expert %d: %w", e, err)
			}
		}
		if err := fn(t0, t1, ref); err != nil {
			return err
		}
	}
	return nil
}

// accumulation describes how the kernel adds its vec_dot results for one output.
type accumulation struct {
	path kpath
	qk   int // weight block size (stream-K ranges are in weight blocks)
	// MMVQ: the depth of the accumulation tree (thread chain, cross-warp adds, butterfly).
	depth int
	// MMQ: the stream-K partition (nil: agnostic, any split at iteration boundaries).
	agnostic bool
	part     *streamk.Partition
	tiles    []streamk.TilePlan
	tileI    int // rows per tile (mmq_y)
	tileJ    int // columns per tile (mmq_x)
	adds     int // accumulator nodes per 128-value vec_dot call (kmodel.adds)
	// mmqNodes's scratch, reused from output to output (one reference at a time uses an
	// accumulation): the call sums and magnitudes, the partial sum of each stream-K block.
	callE, callM []float64
	partial      map[int]float64
}

func newAccumulation(dev sim.Device, t quant.Type, p kpath, K, N, M int, ids bool) (*accumulation, error) {
	if p == pathMMVQ {
		return newMMVQAccumulation(dev, t, K, M, ids)
	}
	s := tiling.Shape{K: int64(K), N: int64(N), M: int64(M)}
	mp, err := tiling.MakeMMQPlan(&dev, t, s)
	if err != nil {
		return nil, err
	}
	part, err := streamk.Plan(streamk.Params{
		NSM: dev.SMCount, NVIDIA: true, StreamK: mp.Config.StreamK,
		NTilesX: mp.NTX, NTilesY: mp.NTY, NChannels: mp.NTZW, NSamples: 1,
		BlocksPerTile: mp.BlocksPerNe00, BlocksPerIter: mp.BlocksPerIter, J: mp.Config.J,
	})
	if err != nil {
		return nil, err
	}
	return &accumulation{path: p, qk: t.BlockSize(), part: &part, tiles: part.Tiles(), tileI: mp.Config.I, tileJ: mp.Config.J, adds: kernelModels[p][t].adds}, nil
}

func newMMVQAccumulation(dev sim.Device, t quant.Type, K, M int, ids bool) (*accumulation, error) {
	mp, err := tiling.MakeMMVQPlan(&dev, t, K, M, ids)
	if err != nil {
		return nil, err
	}
	nb := K / mp.QK
	iters := (nb + mp.BlocksPerIter - 1) / mp.BlocksPerIter
	levels := 0
	for w := mp.WarpSize; w > 1; w >>= 1 {
		levels++
	}
	return &accumulation{path: pathMMVQ, qk: mp.QK, depth: iters + mp.WarpsPerRow() - 1 + levels}, nil
}

// checkShape checks a reference's operands: N rows of K values of t in a, M columns of K
// float32 in b. It returns t's row size.
func checkShape(t quant.Type, a []byte, K, N int, b []float32, M int) (int64, error) {
	if K <= 0 || N <= 0 || M <= 0 {
		return 0, fmt.Errorf("oracle: bad shape K=%d N=%d M=%d", K, N, M)
	}
	if len(b) != K*M {
		return 0, fmt.Errorf("oracle: b has %d values, want K*M = %d", len(b), K*M)
	}
	rs, err := t.RowSize(int64(K))
	if err != nil {
		return 0, err
	}
	if int64(len(a)) != rs*int64(N) {
		return 0, fmt.Errorf("oracle: a has %d bytes, want %d rows of %d", len(a), N, rs)
	}
	return rs, nil
}

// rowReader dequantizes weight rows one at a time (quant.DequantizeRow: float32 values,
// exact in float64) into one reused float64 row: the references hold K·8 bytes of fp64
// weights, not the K·N·8 of the whole matrix.
type rowReader struct {
	t   quant.Type
	a   []byte
	rs  int64
	f32 []float32
	x   []float64
}

func newRowReader(t quant.Type, a []byte, K, N int) (*rowReader, error) {
	rs, err := t.RowSize(int64(K))
	if err != nil {
		return nil, err
	}
	if K <= 0 || N <= 0 || int64(len(a)) != rs*int64(N) {
		return nil, fmt.Errorf("oracle: a has %d bytes, want %d rows of %d", len(a), N, rs)
	}
	return &rowReader{t: t, a: a, rs: rs, f32: make([]float32, K), x: make([]float64, K)}, nil
}

// row returns row i dequantized (valid until the next call) and its bytes.
func (r *rowReader) row(i int) ([]float64, []byte, error) {
	raw := r.a[int64(i)*r.rs : int64(i+1)*r.rs]
	if err := quant.DequantizeRow(r.t, raw, r.f32); err != nil {
		return nil, nil, fmt.Errorf("oracle: row %d: %w", i, err)
	}
	for k, v := range r.f32 {
		r.x[k] = float64(v)
	}
	return r.x, raw, nil
}

// qcol is one activation column as the kernel's quantizer leaves it.
type qcol struct {
	q  []float64 // the int8 values
	d  []float64 // the scale of each value's block (d8)
	dh []f16.Half
	// s[g] is the stored sum of group g (model.group values), NaN where the kernel
	// uses Σq8 instead; sh its binary16 bits.
	s  []float64
	sh []f16.Half
	// blks is the q8_1 blocks of quantize_q8_1 (MMVQ), kept for the next column.
	blks []q8.Block
}

// quantizeCol fills c with column y as the kernel's quantizer leaves it. c is reused from
// column to column of one reference (same K, path, type): its slices are made on the
// first call, and every entry a call reads is written for each column.
func quantizeCol(y []float32, K int, p kpath, t quant.Type, group int, c *qcol) error {
	kp := q8.PaddedLen(K)
	if len(c.q) != kp {
		*c = qcol{q: make([]float64, kp), d: make([]float64, kp), dh: make([]f16.Half, kp)}
		if group > 0 {
			c.s = make([]float64, kp/group)
			c.sh = make([]f16.Half, kp/group)
		}
		if p == pathMMVQ {
			c.blks = make([]q8.Block, kp/32)
		}
	}
	if p == pathMMVQ {
		blks := c.blks
		q8.QuantizeRow(y, blks)
		for bi, blk := range blks {
			d := float64(sim.H2F(blk.D))
			for l := 0; l < 32; l++ {
				k := 32*bi + l
				c.q[k], c.d[k], c.dh[k] = float64(blk.Qs[l]), d, blk.D
			}
			if group == 32 {
				c.s[bi], c.sh[bi] = float64(sim.H2F(blk.S)), blk.S
			}
		}
		return nil
	}
	layout := mmqLayout(t)
	blks, err := q8.QuantizeMMQ8_1(y, K, 1, 1, layout)
	if err != nil {
		return err
	}
	for bi := range blks {
		blk := &blks[bi]
		for l := 0; l < 128; l++ {
			k := 128*bi + l
			c.q[k] = float64(blk.Qs[l])
			switch layout {
			case q8.D4:
				c.d[k] = float64(blk.D4(l / 32))
			case q8.DS4:
				dh, _ := blk.DS4(l / 32)
				c.d[k], c.dh[k] = float64(sim.H2F(dh)), dh
			case q8.D2S6:
				dh := blk.D2S6(l / 64)
				c.d[k], c.dh[k] = float64(sim.H2F(dh)), dh
			}
		}
		switch {
		case group == 32 && layout == q8.DS4:
			for s := 0; s < 4; s++ {
				_, sh := blk.DS4(s)
				c.s[4*bi+s], c.sh[4*bi+s] = float64(sim.H2F(sh)), sh
			}
		case group == 16 && layout == q8.D2S6:
			for g := 0; g < 8; g++ {
				if g < 6 {
					sh := blk.D2S6(2 + g)
					c.s[8*bi+g], c.sh[8*bi+g] = float64(sim.H2F(sh)), sh
				} else {
					c.s[8*bi+g] = math.NaN()
				}
			}
		case group > 0:
			for g := 0; g < 128/group; g++ {
				c.s[128/group*bi+g] = math.NaN()
			}
		}
	}
	return nil
}

// qrow is one weight row as the kernel's load stage holds it.
type qrow struct {
	x []float64 // symmetric types: the dequantized values (exact)
	// offset types: x_k = A[g]·a[k] + B[g] as the kernel holds A and B (h(A), h(B) where
	// the load rounds them); Ah, Bh the binary16 A and B for roundProd.
	a      []float64
	A, B   []float64
	Ah, Bh []f16.Half
	// trunc types: the signed grid codes g (x = db·g), per 32-value block the binary16
	// d and the scale integers of the vec_dot, and its integer expression T(sumi0, sumi1)
	// over the int dots of the block's two 16-value halves.
	g    []float64
	d    []float64
	ls   [][2]int64
	tdot func(s0, s1 int64, ls [2]int64) int64
}

// loadRow fills r (reused from row to row: its slices are made on the first call) with
// row as the kernel holds it; x is the row dequantized.
func loadRow(t quant.Type, m kmodel, row []byte, x []float64, K int, r *qrow) error {
	if m.trunc {
		return loadTrunc(t, row, x, K, r)
	}
	if !m.offset {
		r.x = x
		return nil
	}
	ng := K / m.group
	if len(r.a) != K || len(r.A) != ng {
		*r = qrow{a: make([]float64, K), A: make([]float64, ng), B: make([]float64, ng), Ah: make([]f16.Half, ng), Bh: make([]f16.Half, ng)}
	}
	h := func(v f16.Half) float64 { return float64(v.ToFloat32()) }
	for g := 0; g < ng; g++ {
		var A, B float64
		var Ah, Bh f16.Half
		switch t {
		case quant.Q4_0:
			d := quant.Q4_0Block(row, g).D()
			A, B = h(d), -8*h(d)
		case quant.Q5_0:
			d := quant.Q5_0Block(row, g).D()
			A, B = h(d), -16*h(d)
		case quant.Q4_1:
			blk := quant.Q4_1Block(row, g)
			Ah, Bh = blk.D(), blk.M()
			A, B = h(Ah), h(Bh)
		case quant.Q5_1:
			blk := quant.Q5_1Block(row, g)
			Ah, Bh = blk.D(), blk.M()
			A, B = h(Ah), h(Bh)
		case quant.Q4_K, quant.Q5_K:
			var d, dmin f16.Half
			var sc, mn uint8
			if t == quant.Q4_K {
				sb := quant.Q4_KBlock(row, g/8)
				d, dmin = sb.DM()
				sc, mn = sb.ScaleMin(g % 8)
			} else {
				sb := quant.Q5_KBlock(row, g/8)
				d, dmin = sb.DM()
				sc, mn = sb.ScaleMin(g % 8)
			}
			A, B = h(d)*float64(sc), -h(dmin)*float64(mn)
			if m.roundAB { // HMUL2((d, -dmin), (sc, m))
				A = h(f16.Mul(d, f16.FromFloat32(float32(sc))))
				B = -h(f16.Mul(dmin, f16.FromFloat32(float32(mn))))
			}
		case quant.Q2_K:
			sb := quant.Q2_KBlock(row, g/16)
			d, dmin := sb.DM()
			sc, mn := sb.ScaleMin(g % 16)
			A, B = h(d)*float64(sc), -h(dmin)*float64(mn)
			if m.roundAB { // HMUL2(dm, (sc&15, sc>>4))
				A = h(f16.Mul(d, f16.FromFloat32(float32(sc))))
				B = -h(f16.Mul(dmin, f16.FromFloat32(float32(mn))))
			}
		case quant.IQ1_S:
			A, B = iq1sAB(row, g)
			Ah, Bh = f16.FromFloat32(float32(A)), f16.FromFloat32(float32(B)) // make_half2(d1q, d1q*delta)
			if m.roundAB {
				A, B = h(Ah), h(Bh)
			}
		default:
			return fmt.Errorf("oracle: internal error: no offset decomposition for %v", t)
		}
		// The codes from the dequantized values (exact to 2^-24 relative, far inside
		// half a code step): a = round((x - B_exact)/A_exact).
		Ae, Be := A, B
		if m.roundAB {
			Ae, Be = exactAB(t, row, g)
		}
		for k := g * m.group; k < (g+1)*m.group; k++ {
			r.a[k] = 0 // the code of a zero scale (r is reused)
			if Ae != 0 {
				r.a[k] = math.Round((x[k] - Be) / Ae)
			}
		}
		r.A[g], r.B[g], r.Ah[g], r.Bh[g] = A, B, Ah, Bh
	}
	return nil
}

// iq1sAB returns A = d1q and B = d1q·δ of 32-value group g of an IQ1_S row, the GPU's
// decomposition x = A·a + B with a = grid value + 1 ∈ {0, 1, 2} (iq1s_grid_gpu) and
// δ = -1 + IQ1S_DELTA - (qh & 0x8000)·2·IQ1S_DELTA/0x8000 (-0.875 or -1.125). Both are
// exact in float32 (11 + 4 and 15 + 4 significant bits).
func iq1sAB(row []byte, g int) (A, B float64) {
	blk := quant.IQ1_SBlock(row, g/8)
	qh := blk.Qh(g % 8)
	d1q := float64(blk.D().ToFloat32()) * float64(((qh>>11)&0x0E)+1)
	delta := -0.875
	if qh&0x8000 != 0 {
		delta = -1.125
	}
	return d1q, d1q * delta
}

// loadTrunc holds an IQ2_XXS, IQ2_XS, IQ2_S or IQ3_XXS row for the MMVQ vec_dots
// (vecdotq.cuh), which return per 32-value block h(d)·d8·T with T, in C's int arithmetic
// (division truncating toward zero, as Go's):
//
//	IQ2_XXS   T = sumi*ls/8, ls = 2·scale+1 (aux32>>27 | 1)
//	IQ2_XS    T = (sumi0*ls0 + sumi1*ls1 + (sumi0+sumi1)/2)/4, ls0, ls1 the nibbles of scales[ib]
//	IQ2_S     as IQ2_XS
//	IQ3_XXS   T = (ls*sumi + sumi/2)/2, ls = aux32>>28
//
// sumi the int dot of the signed grid values with the q8_1 codes (sumi0, sumi1 over the
// two 16-value halves). The dequantized value of value k is db·g_k with db = d·(2ls+1)/8
// (IQ2_XXS, IQ2_XS, IQ2_S: per half) or d·(2ls+1)/4 (IQ3_XXS), exact in float32, so the
// signed grid value is g_k = x_k/db exactly (x_k = 0 where d = 0: then every term is 0).
func loadTrunc(t quant.Type, row []byte, x []float64, K int, r *qrow) error {
	nb := K / 32
	if len(r.g) != K || len(r.d) != nb {
		*r = qrow{g: make([]float64, K), d: make([]float64, nb), ls: make([][2]int64, nb)}
	}
	clear(r.g)
	h := func(v f16.Half) float64 { return float64(v.ToFloat32()) }
	for bi := 0; bi < nb; bi++ {
		var d float64
		var ls [2]int64 // the vec_dot's integers
		var db [2]float64
		s := bi % 8
		switch t {
		case quant.IQ2_XXS:
			blk := quant.IQ2_XXSBlock(row, bi/8)
			aux32 := uint32(blk.Qs(4*s+2)) | uint32(blk.Qs(4*s+3))<<16
			d = h(blk.D())
			ls[0] = int64(aux32>>27 | 1)
			ls[1] = ls[0]
			db[0] = d * float64(ls[0]) / 8
			db[1] = db[0]
			r.tdot = func(s0, s1 int64, ls [2]int64) int64 { return (s0 + s1) * ls[0] / 8 }
		case quant.IQ2_XS, quant.IQ2_S:
			var sc byte
			if t == quant.IQ2_XS {
				blk := quant.IQ2_XSBlock(row, bi/8)
				d, sc = h(blk.D()), blk.Scales()[s]
			} else {
				blk := quant.IQ2_SBlock(row, bi/8)
				d, sc = h(blk.D()), blk.Scales()[s]
			}
			ls = [2]int64{int64(sc & 0x0F), int64(sc >> 4)}
			db = [2]float64{d * float64(2*ls[0]+1) / 8, d * float64(2*ls[1]+1) / 8}
			r.tdot = func(s0, s1 int64, ls [2]int64) int64 { return (s0*ls[0] + s1*ls[1] + (s0+s1)/2) / 4 }
		case quant.IQ3_XXS:
			blk := quant.IQ3_XXSBlock(row, bi/8)
			d = h(blk.D())
			ls[0] = int64(blk.ScalesAndSigns(s) >> 28)
			ls[1] = ls[0]
			db[0] = d * float64(2*ls[0]+1) / 4
			db[1] = db[0]
			r.tdot = func(s0, s1 int64, ls [2]int64) int64 { s := s0 + s1; return (ls[0]*s + s/2) / 2 }
		default:
			return fmt.Errorf("oracle: internal error: no truncating vec_dot for %v", t)
		}
		r.d[bi], r.ls[bi] = d, ls
		for k := 32 * bi; k < 32*bi+32; k++ {
			if b := db[(k%32)/16]; b != 0 {
				r.g[k] = math.Round(x[k] / b)
			}
		}
	}
	return nil
}

// exactAB returns the unrounded scale and offset of group g of a K-quant or IQ1_S row.
func exactAB(t quant.Type, row []byte, g int) (A, B float64) {
	h := func(v f16.Half) float64 { return float64(v.ToFloat32()) }
	switch t {
	case quant.IQ1_S:
		return iq1sAB(row, g)
	case quant.Q4_K:
		sb := quant.Q4_KBlock(row, g/8)
		d, dmin := sb.DM()
		sc, mn := sb.ScaleMin(g % 8)
		return h(d) * float64(sc), -h(dmin) * float64(mn)
	case quant.Q5_K:
		sb := quant.Q5_KBlock(row, g/8)
		d, dmin := sb.DM()
		sc, mn := sb.ScaleMin(g % 8)
		return h(d) * float64(sc), -h(dmin) * float64(mn)
	}
	sb := quant.Q2_KBlock(row, g/16)
	d, dmin := sb.DM()
	sc, mn := sb.ScaleMin(g % 16)
	return h(d) * float64(sc), -h(dmin) * float64(mn)
}

// kernelRows fills ref.Value (the fp64 truth, Σ_k x·y in order of k), ref.Center and
// ref.Bound (the kernel bound of path p) for weights a (N rows of K values of t) against
// the columns cols, output (row i, column c) at index base[c]+i, one weight row at a time.
// acc sees column c as column j0+c. qc is scratch for the quantized columns, reused from
// call to call (nil: made here).
func kernelRows(t quant.Type, p kpath, a []byte, K, N, j0 int, cols [][]float32, base []int, acc *accumulation, ref *Reference, qc []qcol) error {
	m := kernelModels[p][t]
	rows, err := newRowReader(t, a, K, N)
	if err != nil {
		return err
	}
	if len(qc) < len(cols) {
		qc = make([]qcol, len(cols))
	}
	qc = qc[:len(cols)]
	for c := range qc {
		g := 0
		if m.offset {
			g = m.group
		}
		if err := quantizeCol(cols[c], K, p, t, g, &qc[c]); err != nil {
			return err
		}
	}
	piece := 16
	if p == pathMMVQ {
		piece = 4
	}
	nb := (K + 31) / 32
	E := make([]float64, nb)  // exact kernel value per 32-value block
	Mg := make([]float64, nb) // Σ |t_p| per 32-value block
	var w qrow
	for i := 0; i < N; i++ {
		xi, xrow, err := rows.row(i)
		if err != nil {
			return err
		}
		for c, yj := range cols {
			var s float64
			for k, v := range xi {
				s += v * float64(yj[k])
			}
			ref.Value[base[c]+i] = s
		}
		if err := loadRow(t, m, xrow, xi, K, &w); err != nil {
			return err
		}
		for j := range qc {
			blockTerms(m, &w, &qc[j], K, piece, E, Mg)
			if m.callExact {
				for bi, e := range E {
					Mg[bi] = math.Abs(e)
				}
			}
			var center, mags float64
			for bi := range E {
				center += E[bi]
				mags += Mg[bi]
			}
			nodes, depth := acc.nodes(E, Mg, i, j0+j)
			ops := float64(m.r+depth) * float64(nb)
			bound := unitRound * (float64(m.r)*mags + nodes)
			bound *= 1 + 2*float64(m.r+depth+8)*unitRound
			bound += (4*float64(K) + ops + 64) * ftzAbs
			ref.Center[base[j]+i] = center
			ref.Bound[base[j]+i] = bound
		}
	}
	return nil
}

// blockTerms computes, per 32-value block, the exact kernel value E and Σ|t_p| over its
// pieces (T1: the scale part per piece; T2: the offset part per group, per piece where
// the kernel sums the activations in ints).
func blockTerms(m kmodel, w *qrow, c *qcol, K, piece int, E, Mg []float64) {
	for bi := range E {
		E[bi], Mg[bi] = 0, 0
	}
	if m.trunc { // one term per 32-value call: h(d)·d8·T (the product h(d)·d8 is exact)
		for bi := range E {
			var s [2]int64
			for k := 32 * bi; k < 32*bi+32; k++ {
				s[(k%32)/16] += int64(w.g[k]) * int64(c.q[k])
			}
			e := w.d[bi] * c.d[32*bi] * float64(w.tdot(s[0], s[1], w.ls[bi]))
			E[bi], Mg[bi] = e, math.Abs(e)
		}
		return
	}
	if !m.offset {
		for k0 := 0; k0 < K; k0 += piece {
			var s float64
			for k := k0; k < min(K, k0+piece); k++ {
				s += w.x[k] * (c.d[k] * c.q[k])
			}
			E[k0/32] += s
			Mg[k0/32] += math.Abs(s)
		}
		return
	}
	G := m.group
	for g := 0; g < K/G; g++ {
		k0 := g * G
		A, B := w.A[g], w.B[g]
		stored := m.stored && !math.IsNaN(c.s[g])
		var t1, t2, mag float64
		if m.roundProd { // h(A·d8)·Σ a·q + h(B·s8); G = 32 = one activation block
			ad := float64(f16.Mul(w.Ah[g], c.dh[k0]).ToFloat32())
			bs := float64(f16.Mul(w.Bh[g], c.sh[g]).ToFloat32())
			for p0 := k0; p0 < k0+G; p0 += piece {
				var s float64
				for k := p0; k < p0+piece; k++ {
					s += w.a[k] * c.q[k]
				}
				t1 += ad * s
				mag += math.Abs(ad * s)
			}
			t2 = bs
			mag += math.Abs(bs)
		} else {
			for p0 := k0; p0 < k0+G; p0 += piece {
				var s, sy float64
				for k := p0; k < p0+piece; k++ {
					y := c.d[k] * c.q[k]
					s += w.a[k] * y
					sy += y
				}
				t1 += A * s
				mag += math.Abs(A * s)
				if !stored {
					t2 += B * sy
					mag += math.Abs(B * sy)
				}
			}
			if stored {
				t2 = B * c.s[g]
				mag += math.Abs(t2)
			}
		}
		E[k0/32] += t1 + t2
		Mg[k0/32] += mag
	}
}

// nodes returns u⁻¹ times the accumulation part of the bound of output (i, j) (the sum
// over accumulator nodes of a bound on their values) and the number of nodes on the
// longest path, for the second-order and flush terms.
func (a *accumulation) nodes(E, Mg []float64, i, j int) (float64, int) {
	if a.path == pathMMVQ {
		var s float64
		for _, m := range Mg {
			s += m
		}
		return float64(a.depth) * s, a.depth
	}
	return a.mmqNodes(E, Mg, i, j)
}

// mmqNodes sums the accumulator node bounds of MMQ for output (i, j).
func (a *accumulation) mmqNodes(E, Mg []float64, i, j int) (float64, int) {
	adds := a.adds
	nb := len(E)
	// call sums and magnitudes per 128 values (4 blocks of 32)
	ncall := (nb + 3) / 4
	if len(a.callE) != ncall {
		a.callE, a.callM = make([]float64, ncall), make([]float64, ncall)
	}
	callE, callM := a.callE, a.callM // reused from output to output
	clear(callE)
	clear(callM)
	for bi := range E {
		callE[bi/4] += E[bi]
		callM[bi/4] += Mg[bi]
	}
	rangeNodes := func(c0, c1 int) (float64, float64) { // calls [c0, c1): node bound sum, partial
		var P, s float64
		for c := c0; c < min(c1, ncall); c++ {
			s += float64(adds) * (math.Abs(P) + callM[c])
			P += callE[c]
		}
		return s, P
	}
	valsPerBlock := a.qk
	if a.agnostic || a.part == nil {
		// Any partition into ranges at 256-value iteration boundaries, in any fixup order.
		var P, Pmax, sumIt, s float64
		itCalls := 2
		for c := 0; c < ncall; c++ {
			if c%itCalls == 0 {
				Pmax = max(Pmax, math.Abs(P))
			}
			P += callE[c]
		}
		P = 0
		var it float64
		for c := 0; c < ncall; c++ {
			s += float64(adds) * (math.Abs(P) + Pmax + callM[c])
			P += callE[c]
			it += callE[c]
			if c%itCalls == itCalls-1 || c == ncall-1 {
				sumIt += math.Abs(it)
				it = 0
			}
		}
		nIter := (ncall + itCalls - 1) / itCalls
		s += float64(nIter+1) * sumIt
		return s, adds*ncall + nIter + 1
	}
	tp := &a.tiles[a.part.Params.TileIndex(streamk.TileCoord{It: i / a.tileI, Jt: j / a.tileJ})]
	if a.partial == nil {
		a.partial = map[int]float64{}
	}
	partial := a.partial // reused from output to output
	clear(partial)
	var s float64
	for _, sg := range tp.Segments {
		c0 := sg.KB0Start * valsPerBlock / 128
		c1 := (sg.KB0Stop*valsPerBlock + 127) / 128
		ns, P := rangeNodes(c0, c1)
		s += ns
		partial[sg.Block] = P
	}
	depth := adds * ncall
	if tp.Fixup != nil {
		var f float64
		for _, b := range tp.Fixup.Adds {
			f += partial[b]
			s += math.Abs(f)
		}
		s += math.Abs(partial[tp.End] + f)
		depth += len(tp.Fixup.Adds) + 1
	}
	return s, depth
}
