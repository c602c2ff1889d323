package fp16path

import (
	"fmt"
	"runtime"
	"sync"

	"github.com/ggsim/ggsim/f16"
	"github.com/ggsim/ggsim/quant"
	"github.com/ggsim/ggsim/sim"
)

// Options are the path's launch choices.
type Options struct {
	// RowsPerWarp is the number of rows one warp computes (1, 2, 4, 8, 16 or 32; 0 means
	// 1): each row gets 32/RowsPerWarp lanes and a butterfly of that width. It changes
	// the bits (the lanes' partition of the row), as the note's GP100_RMAP tuning knob
	// would.
	RowsPerWarp int
}

// MulMat computes dst = x·y for the N rows of x (type t, K values each) and M columns of
// y (y[j*K+k]), dst[j*N+i] as ggml lays out [N, M], through the fp16 path: each column is
// converted once (ConvertActivations) and every row is computed by RowDot.
//
// Only batch 1 (M = 1) is modelled; other M, and types the path does not cover, give an
// error wrapping errors.ErrUnsupported. Inconsistent sizes are errors.
func MulMat(t quant.Type, x []byte, K, N int, y []float32, M int, opt *Options) ([]float32, error) {
	if M != 1 {
		return nil, fmt.Errorf("fp16path: %d columns: only batch 1 is modelled: %w", M, sim.ErrUnsupported)
	}
	if len(y) != K {
		return nil, fmt.Errorf("fp16path: %d activations given for one column of %d", len(y), K)
	}
	kr, rs, err := check(t, x, K, N, opt)
	if err != nil {
		return nil, err
	}
	act, err := ConvertActivations(y)
	if err != nil {
		return nil, err
	}
	lanes := lanesPerRow(opt)
	dst := make([]float32, N)
	var wg sync.WaitGroup
	workers := min(runtime.GOMAXPROCS(0), N)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := w; i < N; i += workers {
				dst[i] = rowDot(kr, x[i*rs:(i+1)*rs], act, lanes)
			}
		}(w)
	}
	wg.Wait()
	return dst, nil
}

// RowDot returns one output: the dot product of a row of type t (K values, the row's
// bytes) with converted activations, computed as the warp of the path computes it with
// opt's rows per warp.
func RowDot(t quant.Type, row []byte, act *Activations, opt *Options) (float32, error) {
	if act == nil {
		return 0, fmt.Errorf("fp16path: no activations")
	}
	kr, _, err := check(t, row, act.K, 1, opt)
	if err != nil {
		return 0, err
	}
	return rowDot(kr, row, act, lanesPerRow(opt)), nil
}

func check(t quant.Type, x []byte, K, N int, opt *Options) (kernel, int, error) {
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
	if opt != nil {
		switch opt.RowsPerWarp {
		case 0, 1, 2, 4, 8, 16, 32:
		default:
			return kernel{}, 0, fmt.Errorf("fp16path: %d rows per warp: want 1, 2, 4, 8, 16 or 32", opt.RowsPerWarp)
		}
	}
	return kr, rs, nil
}

func lanesPerRow(opt *Options) int {
	if opt == nil || opt.RowsPerWarp == 0 {
		return sim.WarpSize
	}
	return sim.WarpSize / opt.RowsPerWarp
}

// rowDot is the warp's work for one row with the given number of lanes: lane l takes the
// 16-value groups g = l, l+lanes, l+2·lanes, ... in ascending order, accumulating
// GroupTerm into its float32 partial with one FFMA each; the lanes' partials are summed by
// the xor butterfly (sim.ReduceSumTree).
func rowDot(kr kernel, row []byte, act *Activations, lanes int) float32 {
	part := lanePartials(kr, row, act, lanes)
	return sim.ReduceSumTree(part[:lanes])
}

// lanePartials returns the float32 partials of the row's lanes before the butterfly.
func lanePartials(kr kernel, row []byte, act *Activations, lanes int) (part [sim.WarpSize]float32) {
	bs := len(row) / (act.K / kr.qk)
	gpb := kr.qk / 16
	var gr group
	for g := 0; g < act.K/16; g++ {
		l := g % lanes
		blk := g / gpb
		kr.load(row[blk*bs:(blk+1)*bs], g%gpb, &gr)
		t := groupTerm(kr, &gr, act, g)
		part[l] = sim.FMA(t, pow2(24-act.Exp[g/2]), part[l])
	}
	return part
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
