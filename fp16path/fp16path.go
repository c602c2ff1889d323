package fp16path

import (
	"errors"
	"fmt"
	"runtime"
	"sync"

	"github.com/ggsim/ggsim/f16"
	"github.com/ggsim/ggsim/quant"
	"github.com/ggsim/ggsim/sim"
	"github.com/ggsim/ggsim/tiling"
)

// MaxColumns is the most columns (ne11) the path computes in one launch: MMVQ's
// MMVQ_MAX_BATCH_SIZE, the range the note's multi-column kernels cover (2..8).
const MaxColumns = 8

// ErrDisabled is returned by every entry point when Options.Disabled is set (the note's
// kill switch GGML_CUDA_GP100_MMVQ_DISABLE=1): the path does not run and ggml's MMVQ
// does (tiling decides so). It is not a "not modelled" error.
var ErrDisabled = errors.New("fp16path: the path is off (GGML_CUDA_GP100_MMVQ_DISABLE)")

// MulMat computes dst = x·y for the N rows of x (type t, K values each) and M columns of
// y (y[j*K+k]), dst[j*N+i] as ggml lays out [N, M], through the fp16 path: each column is
// converted once (ConvertActivations) and every row is computed by RowDot, for all
// columns at once (see MulMatColumns in the package documentation).
//
// M = 1 is modelled for every type of Types; M = 2..MaxColumns for Q4_K, Q5_K and IQ4_XS
// only (the note's multi-column kernels; its other types stay on ggml's MMVQ at more
// than one column). Other M and types the path does not cover give an error wrapping
// errors.ErrUnsupported; inconsistent sizes are errors; opt.Disabled gives ErrDisabled.
//
// MulMat uses no activation cache: it is (*Cache)(nil).MulMat.
func MulMat(t quant.Type, x []byte, K, N int, y []float32, M int, opt *Options) ([]float32, error) {
	var c *Cache
	return c.MulMat(t, x, K, N, y, M, opt)
}

// MulMat is the package's MulMat with the columns' conversion taken from (and left in)
// the cache c: a src1 that an earlier matmul or RMSNormMul of this graph evaluation
// converted is not converted again. The bits are MulMat's. A nil c, or opt.NoActCache,
// converts every time.
func (c *Cache) MulMat(t quant.Type, x []byte, K, N int, y []float32, M int, opt *Options) ([]float32, error) {
	kr, rs, err := checkCall(t, x, K, N, y, M, opt)
	if err != nil {
		return nil, err
	}
	acts, err := c.columns(y, K, M, opt)
	if err != nil {
		return nil, err
	}
	dst := make([]float32, N*M)
	lanes := opt.lanes(N)
	parallelRows(N, func(i int) {
		var part [MaxColumns][sim.WarpSize]float32
		lanePartials(kr, x[i*rs:(i+1)*rs], acts, lanes, &part)
		for j := range acts {
			dst[j*N+i] = sim.ReduceSumTree(part[j][:lanes])
		}
	})
	return dst, nil
}

// parallelRows runs f(0..N-1) on GOMAXPROCS goroutines.
func parallelRows(N int, f func(i int)) {
	var wg sync.WaitGroup
	workers := min(runtime.GOMAXPROCS(0), N)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := w; i < N; i += workers {
				f(i)
			}
		}(w)
	}
	wg.Wait()
}

// RowDot returns one output: the dot product of a row of type t (K values, the row's
// bytes) with converted activations, computed as the warp of the path computes it with
// opt.RowsPerWarp rows per warp (opt.RowMap needs the matrix's row count: MulMat applies
// it).
func RowDot(t quant.Type, row []byte, act *Activations, opt *Options) (float32, error) {
	if act == nil {
		return 0, fmt.Errorf("fp16path: no activations")
	}
	if err := opt.check(); err != nil {
		return 0, err
	}
	kr, _, err := checkMatrix(t, row, act.K, 1)
	if err != nil {
		return 0, err
	}
	lanes := sim.WarpSize
	if opt != nil && opt.RowsPerWarp > 0 {
		lanes = sim.WarpSize / opt.RowsPerWarp
	}
	var part [MaxColumns][sim.WarpSize]float32
	lanePartials(kr, row, []*Activations{act}, lanes, &part)
	return sim.ReduceSumTree(part[0][:lanes]), nil
}

// checkCall checks a matmul call: options, columns for the type, the matrix and y.
func checkCall(t quant.Type, x []byte, K, N int, y []float32, M int, opt *Options) (kernel, int, error) {
	if err := opt.check(); err != nil {
		return kernel{}, 0, err
	}
	if opt != nil && opt.Disabled {
		return kernel{}, 0, ErrDisabled
	}
	if err := checkColumns(t, M); err != nil {
		return kernel{}, 0, err
	}
	kr, rs, err := checkMatrix(t, x, K, N)
	if err != nil {
		return kernel{}, 0, err
	}
	if len(y) != K*M {
		return kernel{}, 0, fmt.Errorf("fp16path: %d activations given for %d column(s) of %d", len(y), M, K)
	}
	return kr, rs, nil
}

// checkColumns says whether the path has a kernel for M columns of type t.
func checkColumns(t quant.Type, M int) error {
	switch {
	case M < 1:
		return fmt.Errorf("fp16path: %d columns: want at least 1", M)
	case M == 1:
		return nil
	case M > MaxColumns:
		return fmt.Errorf("fp16path: %d columns: the path runs 1..%d (MMVQ's range): %w", M, MaxColumns, sim.ErrUnsupported)
	case !MultiColumn(t):
		return fmt.Errorf("fp16path: %v with %d columns: the note's multi-column kernels are Q4_K, Q5_K and IQ4_XS only (%v stays on ggml's MMVQ): %w", t, M, t, sim.ErrUnsupported)
	}
	return nil
}

// MultiColumn reports whether the path has a 2..MaxColumns-column kernel for t (Q4_K,
// Q5_K, IQ4_XS): tiling.GP100FP16MultiColumn, the one home of the rule.
func MultiColumn(t quant.Type) bool { return tiling.GP100FP16MultiColumn(t) }

func checkMatrix(t quant.Type, x []byte, K, N int) (kernel, int, error) {
	kr, ok := kernels[t]
	if !ok {
		return kernel{}, 0, fmt.Errorf("fp16path: type %v: %w", t, sim.ErrUnsupported)
	}
	if K <= 0 || K%kr.qk != 0 || N <= 0 {
		return kernel{}, 0, fmt.Errorf("fp16path: shape K=%d N=%d: want N >= 1 and K a positive multiple of %d for %v", K, N, kr.qk, t)
	}
	rs64, err := t.RowSize(int64(K))
	if err != nil {
		return kernel{}, 0, fmt.Errorf("fp16path: %w", err)
	}
	rs := int(rs64)
	if len(x) != rs*N {
		return kernel{}, 0, fmt.Errorf("fp16path: weights: %d bytes, want %d rows of %d bytes (%v, K=%d)", len(x), N, rs, t, K)
	}
	return kr, rs, nil
}

// lanePartials is the warp's work for one row with the given number of lanes, for every
// column of acts at once: lane l takes the 16-value groups g = l, l+lanes, l+2·lanes, ...
// in ascending order; for each it loads and unpacks the group's weights once and then,
// for columns j = 0, 1, ..., len(acts)-1, accumulates GroupTerm of column j into its
// column-j float32 partial with one FFMA. Columns never meet, so each column's partials
// are those of a one-column launch. The caller sums each column's partials with the xor
// butterfly (sim.ReduceSumTree over part[j][:lanes]).
func lanePartials(kr kernel, row []byte, acts []*Activations, lanes int, part *[MaxColumns][sim.WarpSize]float32) {
	K := acts[0].K
	bs := len(row) / (K / kr.qk)
	gpb := kr.qk / 16
	var gr group
	for g := 0; g < K/16; g++ {
		l := g % lanes
		blk := g / gpb
		kr.load(row[blk*bs:(blk+1)*bs], g%gpb, &gr)
		for j, act := range acts {
			t := groupTerm(kr, &gr, act, g)
			part[j][l] = sim.FMA(t, pow2(24-act.Exp[g/2]), part[j][l])
		}
	}
}

// groupTerm returns the prescaled contribution of group g (values 16g..16g+15): the HFMA2
// loop (HalfDot), its two halves added in float32, then the type's scale and offset:
//
//	a = H2F(acc.lo) + H2F(acc.hi)                      ≈ Σ c_k·h_k·2^-24
//	offset types: t = D · fma(-off·2^-24, S16, a)      ≈ Σ D·(c_k - off)·h_k·2^-24
//	min types:    t = fma(-Mmin·2^-24, S16, a·D)       ≈ Σ (D·c_k - Mmin)·h_k·2^-24
//
// (FADD, FFMA, FMUL with FTZ). The caller multiplies by 2^(24-e_b).
func groupTerm(kr kernel, gr *group, act *Activations, g int) float32 {
	var acc f16.Half2
	if slowHFMA {
		acc = HalfDot(unpack(&gr.codes), act.H[16*g:16*g+16])
	} else {
		acc = halfDotCodes(&gr.codes, act.H[16*g:16*g+16])
	}
	a := sim.Add(sim.H2F(acc.Lo), sim.H2F(acc.Hi))
	s := act.Sum16[g]
	if kr.min {
		return sim.FMA(sim.Neg(sim.Mul(gr.m, 0x1p-24)), s, sim.Mul(a, gr.d))
	}
	return sim.Mul(sim.FMA(-float32(kr.off)*0x1p-24, s, a), gr.d)
}

// HalfDot is the HFMA2 loop of one lane over 16 values: with the activations paired as
// y2_p = (h[2p], h[2p+1]), acc = (+0, +0) and, for p = 0..7 in order,
//
//	acc = HFMA2(w[p], y2_p, acc)      (f16.FMA2: one binary16 rounding per half)
//
// so acc.Lo sums the 8 even-indexed terms and acc.Hi the 8 odd-indexed ones.
// It panics if len(h) != 16.
func HalfDot(w [8]f16.Half2, h []f16.Half) f16.Half2 {
	if len(h) != 16 {
		panic("fp16path: HalfDot of a group that is not 16 values")
	}
	var acc f16.Half2
	for p := 0; p < 8; p++ {
		acc = f16.FMA2(w[p], f16.Half2{Lo: h[2*p], Hi: h[2*p+1]}, acc)
	}
	return acc
}

// Unpack returns the 8 half2 weights of 16 unsigned codes as the kernel's PRMT builds them
// (each code c becomes the half with bit pattern c, whose value is c·2^-24).
func Unpack(codes [16]uint8) [8]f16.Half2 { return unpack(&codes) }
