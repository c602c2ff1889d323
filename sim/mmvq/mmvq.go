package mmvq

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/ggsim/ggsim/internal/errs"
	"github.com/ggsim/ggsim/quant"
	"github.com/ggsim/ggsim/sim"
	"github.com/ggsim/ggsim/sim/q8"
	"github.com/ggsim/ggsim/tiling"
)

// Options control how MulMat and MulMatID run. The zero value (or nil) is the fast mode.
type Options struct {
	// Trace runs the kernel lane by lane: every CUDA block, warp and lane in launch order,
	// partial sums stored to and loaded from a simulated shared memory, the warp
	// reduction done with sim.Warp shuffles. It gives the same bits as the fast mode (a
	// test checks it) and is much slower.
	Trace bool
	// Watch, if not nil in Trace mode, receives every float step (see Event), in the
	// order the simulation performs them. It is called from one goroutine.
	Watch func(Event)
	// Counters, if not nil in Trace mode, counts the reduction's instructions (FADD,
	// SHFL, LDS, STS, BAR, STG). The vec_dots' own instructions are not counted.
	Counters *sim.Counters
	// Workers is the number of goroutines of the fast mode (0: GOMAXPROCS).
	Workers int
}

// EventKind says what an Event records.
type EventKind int

const (
	// EvVecDot: one vec_dot call and its accumulation: Out = VecDot(In, block Block, Iqs).
	EvVecDot EventKind = iota
	// EvCrossWarp: warp 0's lane adds the partial sum of warp Other (loaded from shared
	// memory): Out = In + Addend.
	EvCrossWarp
	// EvShuffle: one butterfly step: Out = In + Addend, Addend from lane Lane^Offset.
	EvShuffle
	// EvStore: the lane that writes the output (lane i of warp 0 for row i of the block)
	// stores Out.
	EvStore
)

func (k EventKind) String() string {
	switch k {
	case EvVecDot:
		return "vec_dot"
	case EvCrossWarp:
		return "cross_warp"
	case EvShuffle:
		return "shuffle"
	case EvStore:
		return "store"
	}
	return fmt.Sprintf("EventKind(%d)", int(k))
}

// Event is one float step of the simulated kernel, with where it happened.
type Event struct {
	Kind EventKind
	// Row is the output row (x row within the expert for MUL_MAT_ID); Col the output
	// column (MUL_MAT) or token (MUL_MAT_ID); Slot the expert slot (-1 for MUL_MAT).
	Row, Col, Slot int
	// CUDA coordinates: BlockX is blockIdx.x, Warp is threadIdx.y, Lane threadIdx.x.
	BlockX, Warp, Lane int
	// Block is the x block index kbx (EvVecDot), Iqs the thread's int offset.
	Block, Iqs int
	// Offset is the shuffle lane mask (EvShuffle) or the warp whose partial is added
	// (EvCrossWarp).
	Offset int
	// In is the value before the step, Addend what was added (EvCrossWarp, EvShuffle),
	// Out the value after.
	In, Addend, Out float32
}

func (e Event) String() string {
	switch e.Kind {
	case EvVecDot:
		return fmt.Sprintf("row %d col %d slot %d block.x %d warp %d lane %d: vec_dot(kbx=%d, iqs=%d): %v -> %v",
			e.Row, e.Col, e.Slot, e.BlockX, e.Warp, e.Lane, e.Block, e.Iqs, e.In, e.Out)
	case EvCrossWarp:
		return fmt.Sprintf("row %d col %d slot %d block.x %d lane %d: + warp %d (%v): %v -> %v",
			e.Row, e.Col, e.Slot, e.BlockX, e.Lane, e.Offset, e.Addend, e.In, e.Out)
	case EvShuffle:
		return fmt.Sprintf("row %d col %d slot %d block.x %d warp %d lane %d: shfl_xor %d (%v): %v -> %v",
			e.Row, e.Col, e.Slot, e.BlockX, e.Warp, e.Lane, e.Offset, e.Addend, e.In, e.Out)
	case EvStore:
		return fmt.Sprintf("row %d col %d slot %d block.x %d warp %d lane %d: store %v",
			e.Row, e.Col, e.Slot, e.BlockX, e.Warp, e.Lane, e.Out)
	}
	return "unknown event"
}

// MulMat simulates MUL_MAT of the quantized matrix x (N rows of K values of type t, as
// stored: N*RowSize(K) bytes) by the float32 activations y (M columns of K values,
// y[j*K+k]) for M = 1..8, as ggml's CUDA backend computes it on dev with MMVQ:
// quantize_q8_1 of y (sim/q8), then mul_mat_vec_q with the launch tiling.MakeMMVQPlan gives. The
// result has N*M values, dst[j*N+i] = row i · column j.
//
// Whether ggml would dispatch MMVQ for this shape is not checked (see tiling.MulMat; the
// root package ggsim's MulMat checks it). It returns an error for a type without a
// kernel, inconsistent sizes, M outside 1..8, or a device whose arithmetic is not
// modelled (wrapping sim.ErrUnsupported; see checkDevice).
func MulMat(dev sim.Device, t quant.Type, x []byte, K, N int, y []float32, M int) ([]float32, error) {
	return MulMatOpts(dev, t, x, K, N, y, M, nil)
}

// MulMatOpts is MulMat with options (nil: fast mode).
func MulMatOpts(dev sim.Device, t quant.Type, x []byte, K, N int, y []float32, M int, opt *Options) ([]float32, error) {
	if M < 1 || M > tiling.MMVQMaxBatchSize {
		return nil, fmt.Errorf("mmvq: %d columns: mul_mat_vec_q handles 1..%d", M, tiling.MMVQMaxBatchSize)
	}
	if K <= 0 || int64(K)*int64(M) != int64(len(y)) {
		return nil, fmt.Errorf("mmvq: activations: %d values given for %d columns of %d", len(y), M, K)
	}
	yq, err := q8.QuantizeQ8_1(y, K, M)
	if err != nil {
		return nil, fmt.Errorf("mmvq: %w", err)
	}
	return MulMatQ8(dev, t, x, K, N, yq, M, opt)
}

// MulMatQ8 is MulMat with the activations already quantized by quantize_q8_1: yq holds
// M columns of q8.PaddedLen(K)/32 blocks each.
func MulMatQ8(dev sim.Device, t quant.Type, x []byte, K, N int, yq []q8.Block, M int, opt *Options) ([]float32, error) {
	if err := checkDevice(&dev); err != nil {
		return nil, err
	}
	p, err := tiling.MakeMMVQPlan(&dev, t, K, M, false)
	if err != nil {
		return nil, err
	}
	rowBytes, err := checkX(t, x, K, N, 1)
	if err != nil {
		return nil, err
	}
	kpb := q8.PaddedLen(K) / 32
	if len(yq) != M*kpb {
		return nil, fmt.Errorf("mmvq: quantized activations: %d blocks given, want %d columns of %d", len(yq), M, kpb)
	}
	l := &launch{
		plan: p, dot: mustKernel(t).dotFor(p.Kernel, M), rows8: rows8For(t, p.Kernel, M), nblocks: K / p.QK, nrows: N, nchan: 1, ncols: M,
		xrow: func(_, i int) []byte { return x[i*rowBytes : (i+1)*rowBytes] },
		y:    func(_, j int) []q8.Block { return yq[j*kpb : (j+1)*kpb] },
		dst:  func(_, j, i int) int { return j*N + i },
		slot: func(int) int { return -1 },
	}
	return l.run(N*M, opt)
}

// MulMatID simulates MUL_MAT_ID (ggml_mul_mat_id(as, b, ids)) for T = 1..8 tokens as the
// CUDA backend computes it with MMVQ: as holds E experts of N rows of K values of type t
// (as[e] is rows e*N..e*N+N-1), b holds T tokens of B1 activation rows of K values
// (b[(tok*B1+r)*K+k]), ids holds T tokens of U expert ids (ids[tok*U+u]); U must be a
// multiple of B1 (slot u reads activation row u % B1). The result has T*U*N values,
// dst[(tok*U+u)*N+i].
//
// One token runs mul_mat_vec_q with ids (grid y = slot, channel_x = ids[slot], channel_y
// = slot % B1, the 1-column partition); 2..8 tokens run mul_mat_vec_q_moe (one warp per
// token and row, 1-warp partition), as ggml_cuda_mul_mat_vec_q does. An expert id outside
// [0, E) is an error naming its token, slot and id.
func MulMatID(dev sim.Device, t quant.Type, as []byte, K, N, E int, b []float32, B1, T int, ids []int32, U int) ([]float32, error) {
	return MulMatIDOpts(dev, t, as, K, N, E, b, B1, T, ids, U, nil)
}

// MulMatIDOpts is MulMatID with options.
func MulMatIDOpts(dev sim.Device, t quant.Type, as []byte, K, N, E int, b []float32, B1, T int, ids []int32, U int, opt *Options) ([]float32, error) {
	if T < 1 || T > tiling.MMVQMaxBatchSize {
		return nil, fmt.Errorf("mmvq: %d tokens: MMVQ handles MUL_MAT_ID for 1..%d tokens", T, tiling.MMVQMaxBatchSize)
	}
	if B1 < 1 || U < 1 || U%B1 != 0 {
		return nil, fmt.Errorf("mmvq: %d expert slots with %d activation rows per token: slots must be a positive multiple of rows", U, B1)
	}
	if K <= 0 || int64(K)*int64(B1)*int64(T) != int64(len(b)) {
		return nil, fmt.Errorf("mmvq: activations: %d values given for %d tokens of %d rows of %d", len(b), T, B1, K)
	}
	yq, err := q8.QuantizeQ8_1(b, K, B1*T)
	if err != nil {
		return nil, fmt.Errorf("mmvq: %w", err)
	}
	return MulMatIDQ8(dev, t, as, K, N, E, yq, B1, T, ids, U, opt)
}

// MulMatIDQ8 is MulMatID with the activations already quantized by quantize_q8_1: yq
// holds T*B1 rows of q8.PaddedLen(K)/32 blocks, row tok*B1+r.
func MulMatIDQ8(dev sim.Device, t quant.Type, as []byte, K, N, E int, yq []q8.Block, B1, T int, ids []int32, U int, opt *Options) ([]float32, error) {
	if err := checkDevice(&dev); err != nil {
		return nil, err
	}
	if T < 1 || T > tiling.MMVQMaxBatchSize {
		return nil, fmt.Errorf("mmvq: %d tokens: MMVQ handles MUL_MAT_ID for 1..%d tokens", T, tiling.MMVQMaxBatchSize)
	}
	if B1 < 1 || U < 1 || U%B1 != 0 {
		return nil, fmt.Errorf("mmvq: %d expert slots with %d activation rows per token: slots must be a positive multiple of rows", U, B1)
	}
	p, err := tiling.MakeMMVQPlan(&dev, t, K, T, true)
	if err != nil {
		return nil, err
	}
	if E < 1 {
		return nil, fmt.Errorf("mmvq: %d experts", E)
	}
	if why := IDWriteRace(p, N, U); why != "" {
		return nil, fmt.Errorf("%w: %s", ErrWriteRace, why)
	}
	rowBytes, err := checkX(t, as, K, N, E)
	if err != nil {
		return nil, err
	}
	kpb := q8.PaddedLen(K) / 32
	if len(yq) != T*B1*kpb {
		return nil, fmt.Errorf("mmvq: quantized activations: %d blocks given, want %d rows of %d", len(yq), T*B1, kpb)
	}
	if len(ids) != T*U {
		return nil, fmt.Errorf("mmvq: %d expert ids given for %d tokens of %d slots", len(ids), T, U)
	}
	for k, id := range ids {
		if id < 0 || int(id) >= E {
			return nil, fmt.Errorf("mmvq: expert id %d of token %d, slot %d is outside [0, %d)", id, k/U, k%U, E)
		}
	}
	ncols := 1
	if p.Kernel == tiling.KernelMMVQMoE {
		ncols = 0
	}
	l := &launch{
		plan: p, dot: mustKernel(t).dotFor(p.Kernel, ncols), rows8: rows8For(t, p.Kernel, ncols), nblocks: K / p.QK, nrows: N, nchan: U, ncols: T,
		xrow: func(c, i int) []byte { return nil }, // set per (slot, token) below
		y: func(c, j int) []q8.Block {
			r := j*B1 + c%B1
			return yq[r*kpb : (r+1)*kpb]
		},
		dst:  func(c, j, i int) int { return (j*U+c)*N + i },
		slot: func(c int) int { return c },
	}
	l.xrowTok = func(c, j, i int) []byte {
		e := int(ids[j*U+c])
		o := (e*N + i) * rowBytes
		return as[o : o+rowBytes]
	}
	return l.run(T*U*N, opt)
}

// checkDevice returns an error wrapping sim.ErrUnsupported unless dev is an NVIDIA device
// with 32-lane warps: the
// float sequences of the vec_dots were read from NVIDIA SASS (FMA-SITES.md), and AMD
// builds (64-lane warps on GCN/CDNA, HIP's own code generation) are not modelled.
// tiling.MakeMMVQPlan still describes AMD launches.
func checkDevice(dev *sim.Device) error {
	if !sim.CCIsNVIDIA(dev.CC) {
		return fmt.Errorf("mmvq: %w: device %q (cc %#x): only NVIDIA arithmetic is modelled", sim.ErrUnsupported, dev.Name, dev.CC)
	}
	if dev.WarpSize != 32 {
		return fmt.Errorf("mmvq: %w: device %q has warp size %d; only 32-lane warps are modelled", sim.ErrUnsupported, dev.Name, dev.WarpSize)
	}
	return nil
}

// checkX checks that x holds nmat matrices of n rows of k values of type t and returns
// the bytes per row.
func checkX(t quant.Type, x []byte, k, n, nmat int) (int, error) {
	if n < 1 {
		return 0, fmt.Errorf("mmvq: %d rows", n)
	}
	rs, err := t.RowSize(int64(k))
	if err != nil {
		return 0, fmt.Errorf("mmvq: %w", err)
	}
	if want := rs * int64(n) * int64(nmat); int64(len(x)) != want {
		return 0, fmt.Errorf("mmvq: weights: %d bytes given, want %d (%d×%d rows of %d %v values)", len(x), want, nmat, n, k, t)
	}
	return int(rs), nil
}

func mustKernel(t quant.Type) *TypeKernel {
	k, ok := kernels[t]
	if !ok {
		panic("mmvq: no kernel for " + t.String())
	}
	return &k
}

// launch describes one kernel launch over nchan channels (expert slots; 1 for MUL_MAT) of
// nrows rows and ncols columns (tokens).
type launch struct {
	plan    *tiling.MMVQPlan
	dot     VecDot
	rows8   rows8Factory // if not nil, the fast mode runs row groups of eight with it (SIMD build)
	nblocks int          // x blocks per row
	nrows   int
	nchan   int
	ncols   int
	xrow    func(c, i int) []byte
	xrowTok func(c, j, i int) []byte // if set, the x row depends on the column (ids)
	y       func(c, j int) []q8.Block
	dst     func(c, j, i int) int
	slot    func(c int) int
}

func (l *launch) rowOf(c, j, i int) []byte {
	if l.xrowTok != nil {
		return l.xrowTok(c, j, i)
	}
	return l.xrow(c, i)
}

func (l *launch) run(n int, opt *Options) ([]float32, error) {
	out := make([]float32, n)
	if opt != nil && opt.Trace {
		l.trace(out, opt)
		return out, nil
	}
	workers := runtime.GOMAXPROCS(0)
	if opt != nil && opt.Workers > 0 {
		workers = opt.Workers
	}
	total := l.nchan * l.nrows
	if workers > total {
		workers = total
	}
	// Workers take chunks of rows from a shared counter: no goroutine feeds them (a
	// feeder competing with the workers for the Ps was measured to idle one of two).
	var wg sync.WaitGroup
	var next atomic.Int64
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if l.rows8 != nil {
				l.runRows8(out, &next, total)
				return
			}
			acc := make([]float32, l.plan.ThreadsPerRow())
			for {
				r0 := int(next.Add(rowChunk)) - rowChunk
				if r0 >= total {
					return
				}
				for r := r0; r < r0+rowChunk && r < total; r++ {
					c, i := r/l.nrows, r%l.nrows
					for j := 0; j < l.ncols; j++ {
						out[l.dst(c, j, i)] = l.output(acc, l.rowOf(c, j, i), l.y(c, j))
					}
				}
			}
		}()
	}
	wg.Wait()
	return out, nil
}

const rowChunk = 16

// runRows8 is a worker of run on the 8-row path: the rows of each chunk in groups of up
// to eight of one channel (a short group repeats its last row in the spare lanes), all
// columns at once where the rows do not depend on the column.
func (l *launch) runRows8(out []float32, next *atomic.Int64, total int) {
	f := l.rows8(l)
	var rows [8][]byte
	var res [tiling.MMVQMaxBatchSize][8]float32
	ys := make([][]q8.Block, 0, tiling.MMVQMaxBatchSize)
	for {
		r0 := int(next.Add(rowChunk)) - rowChunk
		if r0 >= total {
			return
		}
		end := min(r0+rowChunk, total)
		for g := r0; g < end; {
			c, i0 := g/l.nrows, g%l.nrows
			n := min(8, end-g, l.nrows-i0)
			if l.xrowTok == nil {
				ys = ys[:0]
				for q := range 8 {
					rows[q] = l.xrow(c, i0+min(q, n-1))
				}
				for j := 0; j < l.ncols; j++ {
					ys = append(ys, l.y(c, j))
				}
				f(&rows, ys, res[:l.ncols])
				for j := 0; j < l.ncols; j++ {
					for q := 0; q < n; q++ {
						out[l.dst(c, j, i0+q)] = res[j][q]
					}
				}
			} else {
				for j := 0; j < l.ncols; j++ {
					for q := range 8 {
						rows[q] = l.xrowTok(c, j, i0+min(q, n-1))
					}
					f(&rows, append(ys[:0], l.y(c, j)), res[:1])
					for q := 0; q < n; q++ {
						out[l.dst(c, j, i0+q)] = res[0][q]
					}
				}
			}
			g += n
		}
	}
}

// output computes one output element the fast way: every thread's partial sum (from
// 0.0f, x blocks in ascending order), the cross-warp sums per lane, then the butterfly.
func (l *launch) output(acc []float32, xrow []byte, y []q8.Block) float32 {
	p := l.plan
	tpb := p.QI / p.VDR
	ybl := p.QK / 32
	for tid := range acc {
		tmp := float32(0)
		kqs := p.VDR * (tid % tpb)
		for kbx := tid / tpb; kbx < l.nblocks; kbx += p.BlocksPerIter {
			tmp = l.dot(tmp, xrow, kbx, kqs, y[kbx*ybl:])
		}
		acc[tid] = tmp
	}
	var lanes [32]float32
	nw := len(acc) / 32
	for L := range lanes {
		v := acc[L]
		for w := 1; w < nw; w++ {
			v = sim.Add(v, acc[w*32+L])
		}
		lanes[L] = v
	}
	return sim.ReduceSumTree(lanes[:])
}

// ErrWriteRace is wrapped by the error MulMatID returns for a launch in which ggml's
// kernel writes outputs of one CUDA block over those of another: ggml's result is then
// undefined (it depends on the order in which the GPU runs the blocks), so there are no
// bits to reproduce. Like every outcome ggsim does not model it matches
// errors.ErrUnsupported (as moe.Route's duplicate expert ids do).
var ErrWriteRace = errs.Unsupported("ggml's kernel races on this shape (result undefined)")

// IDWriteRace says why the MUL_MAT_ID launch p with N rows per expert and U expert slots
// races, or "" if it does not. mul_mat_vec_q with ids (one token) guards its store with
// row0+i < stride_col_dst (mmvq.cu, ggml d99724f2b141), and for MUL_MAT_ID stride_col_dst
// is the token stride N*U, not N. When rows_per_block > 1 (small_k: rows_per_block =
// nwarps) does not divide N, the last CUDA block of slot u computes rows past N from the
// next expert's weights and stores them over rows 0.. of slot u+1, which another block
// also writes (a race), and the last slot's stores land past the end of dst. Observed on
// an H200: repeated runs of such a shape gave different bits in slot 1, row 0.
// mul_mat_vec_q_moe (2..8 tokens) guards with nrows and does not race.
func IDWriteRace(p *tiling.MMVQPlan, N, U int) string {
	if p.Kernel != tiling.KernelMMVQ || p.RowsPerBlock <= 1 || N%p.RowsPerBlock == 0 || U < 2 {
		return ""
	}
	extra := p.RowsPerBlock - N%p.RowsPerBlock
	return fmt.Sprintf("mul_mat_vec_q with ids, rows_per_block=%d (small_k=%v) does not divide N=%d: the store guard compares with stride_col_dst=N*U=%d, so the last block of each slot writes %d rows over rows 0..%d of the next slot (and past dst for the last slot)",
		p.RowsPerBlock, p.SmallK, N, N*U, extra, extra-1)
}
