package mmq

import (
	"errors"
	"fmt"
	"runtime"
	"sync"

	"github.com/ggsim/ggsim/f16"
	"github.com/ggsim/ggsim/internal/bugs"
	"github.com/ggsim/ggsim/quant"
	"github.com/ggsim/ggsim/sim"
	"github.com/ggsim/ggsim/sim/q8"
)

// ErrUnsupported is wrapped by every error that says the MMQ simulation does not model
// a type or a device.
var ErrUnsupported = fmt.Errorf("mmq: %w", errors.ErrUnsupported)

// iterK is MMQ_ITER_K: the values of one weight row one iteration of the tile loop
// loads (the K_vram of every NVIDIA config).
const iterK = 256

// xTile is one weight row's share of one iteration of the tile loop (iterK values) as
// the load_tiles function of its type leaves it in shared memory: the int8 values in k
// order and the scales the vec_dot reads. Which scale fields a type uses is its own.
type xTile struct {
	qs  [iterK]int8
	df  [16]float32    // one float32 scale per 32 values (per 16 for the q8_0_16 types)
	dm  [8][2]float32  // q8_1 types: {d, m} per 32 values, from a half2
	sc  [16]int32      // Q6_K: the 16 int8 scales; Q2_K: its packed scales
	mA  [16][2]float32 // Q2_K: {d·sc, dmin·m} per 16 values
	dmh [8]f16.Half2   // dp4a path: a half2 {d, m} as stored (Q4_1, Q5_1: per 32 values; Q4_K, Q5_K: [0] the block's dm)
}

// matrix is the weight tensor as the kernel reads it: rows of blocks, contiguous, with
// zeros past the end (ggml pads the allocation of a quantized src0 and the CUDA buffer
// clears the padding). A read past a row's end reads the next row's first blocks.
type matrix struct {
	data   []byte
	bs     int // bytes per block
	stride int // blocks per row
}

// block returns block kb of row i (kb may exceed the row: the next row's blocks).
func (m *matrix) block(i, kb int) []byte {
	o := (i*m.stride + kb) * m.bs
	if o+m.bs > len(m.data) {
		return zeroBlock[:m.bs]
	}
	return m.data[o : o+m.bs]
}

var zeroBlock [512]byte

// kernel is one type's MMQ implementation on the int8-MMA path.
type kernel struct {
	layout q8.Layout
	// load fills x with iterK values of row i starting at weight block kb0.
	load func(m *matrix, i, kb0 int, x *xTile)
	// dot runs vec_dot twice (k00 = 0 and 32): the values 0..127 of the iteration
	// against y0 and 128..255 against y1, adding to sum in the kernel's order. hd holds
	// the exact int32 dots of x with the column, 16 values each (dots.go).
	dot func(x *xTile, hd *halfDots, y0, y1 *q8.BlockMMQ, sum float32) float32
}

// kernels are the MMA-path kernels by type (kernelsDP4A, in dp4a.go, those of the dp4a
// path).
var kernels = map[quant.Type]*kernel{}

// dotI8 is the exact int32 dot product of n int8 pairs.
func dotI8(a, b []int8) int32 {
	var s int32
	b = b[:len(a)]
	for i, v := range a {
		s += int32(v) * int32(b[i])
	}
	return s
}

// MulMat returns ggml_mul_mat(a, b) as mul_mat_q computes it on dev with the plan p: a
// holds N rows of K values of t, b holds M columns of K float32; the result is [N, M]
// (dst[j*N+i]).
func MulMat(dev sim.Device, t quant.Type, a []byte, K, N int, b []float32, M int, p *Plan) ([]float32, error) {
	return mulMat(p.kernels(), p.path(), t, a, K, N, b, M, p)
}

// mulMat is MulMat with the kernels of table (path names it in errors): the stream-K
// partition, tile loop and fixup are the same on every path.
func mulMat(table map[quant.Type]*kernel, path string, t quant.Type, a []byte, K, N int, b []float32, M int, p *Plan) ([]float32, error) {
	kn, ok := table[t]
	if !ok {
		return nil, fmt.Errorf("%w: no MMQ kernel for %v on the %s path", ErrUnsupported, t, path)
	}
	qk := t.BlockSize()
	if K <= 0 || N <= 0 || M <= 0 || K%qk != 0 {
		return nil, fmt.Errorf("mmq: bad shape K=%d N=%d M=%d for %v (K must be a positive multiple of %d)", K, N, M, t, qk)
	}
	rs := K / qk * t.TypeSize()
	if len(a) != rs*N || len(b) != K*M {
		return nil, fmt.Errorf("mmq: %d weight bytes and %d activations given for K=%d N=%d M=%d of %v", len(a), len(b), K, N, M, t)
	}
	y, err := q8.QuantizeMMQ8_1(b, K, M, 1, kn.layout)
	if err != nil {
		return nil, err
	}
	if bugs.StreamKUnaligned.Load() {
		// A test re-injecting llama.cpp PR 8311: a block starting mid-iteration reads up
		// to one iteration past the activations; the allocation's padding reads as zero.
		y = append(y, make([]q8.BlockMMQ, 2*M)...)
	}
	mat := &matrix{data: a, bs: t.TypeSize(), stride: K / qk}
	dst := make([]float32, N*M)
	ncolsY := M
	run(len(p.Tiles), func(tile int) {
		it, jt := tile/p.NTX, tile%p.NTX
		computeTile(kn, mat, y, ncolsY, p, &p.Tiles[tile], it, jt, N, M, func(i, j int, v float32) { dst[j*N+i] = v }, nil)
	})
	return dst, nil
}

// run calls f for every tile, on GOMAXPROCS goroutines. Tiles are independent, so the
// bits do not depend on scheduling.
func run(n int, f func(tile int)) {
	workers := min(runtime.GOMAXPROCS(0), n)
	var wg sync.WaitGroup
	var mu sync.Mutex
	next := 0
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				mu.Lock()
				t := next
				next++
				mu.Unlock()
				if t >= n {
					return
				}
				f(t)
			}
		}()
	}
	wg.Wait()
}

// yBlockSpan returns the y blocks [lo, hi) that the iterations of ranges read (blocks kb
// and kb+1 of each iteration, as computeTile loads them).
func yBlockSpan(p *Plan, ranges []Range) (lo, hi int) {
	lo = -1
	for _, rg := range ranges {
		if rg.Start < rg.Stop {
			last := rg.Start + (rg.Stop-1-rg.Start)/p.BPI*p.BPI
			if lo < 0 {
				lo = rg.Start * (iterK / p.BPI) / 128
			}
			hi = last*(iterK/p.BPI)/128 + 2
		}
	}
	return max(lo, 0), hi
}

// computeTile computes the rows and columns of tile (it, jt) that exist and stores them.
// Row i of a fallback tile past the last row is never stored, so it is not computed.
//
// fixup, when not nil, receives the fixup's sum s of a split tile instead of adding it:
// then store gets the end segment's partial alone (a test re-injecting a fixup bug;
// nil in every normal run).
func computeTile(kn *kernel, mat *matrix, y []q8.BlockMMQ, ncolsY int, p *Plan, w *TileWork, it, jt, N, M int, store func(i, j int, v float32), fixup func(i, j int, s float32)) {
	ranges := w.Ranges
	if len(ranges) == 0 || w.Empty {
		return
	}
	if tile8 != nil && tile8(kn, mat, y, ncolsY, p, w, it, jt, N, M, store, fixup) {
		return
	}
	i0, j0 := it*p.I, jt*p.J
	imax, jmax := min(p.I, N-i0), min(p.J, M-j0)
	if imax <= 0 || jmax <= 0 {
		return
	}
	nb := len(ranges)
	partial := make([]float32, nb*p.J)
	var x xTile
	// The y blocks this tile's iterations read (kb and kb+1 of each, as below).
	ybLo, ybHi := yBlockSpan(p, ranges)
	cols := packColumns(ybLo, ybHi, jmax, func(kb, jj int) *q8.BlockMMQ { return &y[kb*ncolsY+j0+jj] })
	defer cols.release()
	for ii := 0; ii < imax; ii++ {
		i := i0 + ii
		clear(partial)
		for r, rg := range ranges {
			for kb0 := rg.Start; kb0 < rg.Stop; kb0 += p.BPI {
				kn.load(mat, i, kb0, &x)
				kb := kb0 * (iterK / p.BPI) / 128 // index of the first block_q8_1_mmq
				cols.dots(&x, kb)                 // the int32 dots of row i with every column
				for jj := 0; jj < jmax; jj++ {
					y0 := &y[kb*ncolsY+j0+jj]
					y1 := &y[(kb+1)*ncolsY+j0+jj]
					partial[r*p.J+jj] = kn.dot(&x, &cols.c[jj], y0, y1, partial[r*p.J+jj])
				}
			}
		}
		for jj := 0; jj < jmax; jj++ {
			v := partial[(nb-1)*p.J+jj] // the end segment, stored to dst by mul_mat_q
			if w.Adds != nil {
				var s float32 // mul_mat_q_stream_k_fixup: sum = 0.0f; sum += each slot; dst += sum
				for _, blk := range w.Adds {
					s = sim.Add(s, partial[rangeOf(ranges, blk)*p.J+jj])
				}
				if fixup != nil {
					fixup(i, j0+jj, s)
				} else {
					v = sim.Add(v, s)
				}
			}
			store(i, j0+jj, v)
		}
	}
}

// rangeOf returns the index of the range computed by block blk.
func rangeOf(ranges []Range, blk int) int {
	for r, rg := range ranges {
		if rg.Block == blk {
			return r
		}
	}
	panic(fmt.Sprintf("mmq: the fixup adds block %d, which has no range of this tile", blk))
}
