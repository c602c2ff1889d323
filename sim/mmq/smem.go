package mmq

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/ggsim/ggsim/quant"
	"github.com/ggsim/ggsim/sim"
	"github.com/ggsim/ggsim/streamk"
)

// The shared-memory sanitizer of mul_mat_q: CheckSharedMemory replays, thread by thread,
// every shared-memory store and load one CUDA block of the launch makes (mmq.cuh at
// ggml d99724f2b141) against a model of the kernel's dynamic allocation,
// mmq_get_nbytes_shared (mmq.cuh:1380): ids_dst_shared[J] at word 0, tile_y at word J
// (J*MMQ_TILE_Y_K words padded to a multiple of nthreads, mul_mat_q_process_tile:
// mmq.cuh:880-881), tile_x after it (I*sram_stride words on the MMA path,
// mmq_get_dp4a_tile_x_sizes' qs+dm+sc on the dp4a path).
//
// The block runs what mul_mat_q and mul_mat_q_process_tile (mmq.cuh:868-937,
// 946-1230) run, barrier by barrier:
//
//	ids_dst_shared[j] = j                  mmq.cuh:975-984, then __syncthreads
//	per segment (tile, K range) of the block in the stream-K partition (streamk):
//	  MUL_MAT_ID: [__syncthreads;] ids_dst_shared[j] = ids_dst[...]; __syncthreads
//	              (the end segment that goes to the fixup buffer: ids_dst_shared[j] = j)
//	  per iteration kb0: load_tiles (tile_x) + tile_y copy; __syncthreads;
//	                     vec_dot(k00 = 0); __syncthreads;
//	                     tile_y copy (second half); __syncthreads;
//	                     vec_dot(k00 = MMQ_TILE_NE_K); __syncthreads
//	  write_back: reads ids_dst_shared[j] of the stored columns
//
// Every word stored carries a value that names what the kernel put there (the source
// row, the iteration, which quantized word or scale of the 256 values), computed from
// the block format, not from the store's address; every load names the value it needs.
// So a load that reads a word of the right region but the wrong place is caught too,
// not only poison and races.
//
// Findings, per barrier interval (the time between two __syncthreads):
//
//   - out of range: an index outside the allocation;
//   - unwritten: a load of a word not written since the start of its phase (the word
//     is poisoned at each load_tiles / tile_y copy: a stale word of the previous
//     iteration counts as unwritten);
//   - wrong word: the word holds a value other than the one the load needs;
//   - races: a load of a word another thread stored in the same interval, a store to a
//     word another thread loaded, or two threads storing different values;
//   - misaligned: an ldmatrix row address not 16-byte aligned.
//
// Two things are information, not errors: loads of unwritten words whose results
// write_back discards (the rows past i_max with fallback: load_tiles clamps the source
// row to i_max, so the tile rows past it are never written, yet the vec_dot computes
// them), and words written but never read.

// SmemKind classifies a shared-memory problem of mul_mat_q.
type SmemKind int

// The problems CheckSharedMemory reports.
const (
	SmemUnwritten  SmemKind = iota // load of a word not written in the current phase
	SmemWrongWord                  // load of a word that holds another value than needed
	SmemRaceRAW                    // load of a word another thread stored since the last barrier
	SmemRaceWAR                    // store to a word another thread loaded since the last barrier
	SmemRaceWAW                    // two threads store different values since the last barrier
	SmemOutOfRange                 // index outside the dynamic allocation
	SmemMisaligned                 // ldmatrix row address not 16-byte aligned
)

func (k SmemKind) String() string {
	switch k {
	case SmemUnwritten:
		return sim.ErrUnwritten.String() + " (in this phase)"
	case SmemWrongWord:
		return "read of a word holding another value than the kernel needs"
	case SmemRaceRAW:
		return sim.ErrRaceRAW.String()
	case SmemRaceWAR:
		return sim.ErrRaceWAR.String()
	case SmemRaceWAW:
		return sim.ErrRaceWAW.String() + " (different values)"
	case SmemOutOfRange:
		return sim.ErrOutOfRange.String() + " (outside the dynamic allocation)"
	case SmemMisaligned:
		return "ldmatrix row address not 16-byte aligned"
	}
	return fmt.Sprintf("SmemKind(%d)", int(k))
}

// SmemProblem is one shared-memory problem: the word (32-bit index into the dynamic
// allocation) and its region, the kernel site, the thread (threadIdx.y*32 +
// threadIdx.x) and the other thread involved (-1 if none), the CUDA block, tile and
// barrier interval.
type SmemProblem struct {
	Kind     SmemKind
	Word     int
	Region   string
	Site     string
	Thread   int
	Other    int
	Block    int
	Tile     streamk.TileCoord
	Interval int
}

func (e *SmemProblem) Error() string {
	s := fmt.Sprintf("mmq: shared memory word %d (%s): %s by thread %d", e.Word, e.Region, e.Kind, e.Thread)
	if e.Other >= 0 {
		s += fmt.Sprintf(" (other thread %d)", e.Other)
	}
	return s + fmt.Sprintf(" at %s; block %d, tile %s, barrier interval %d", e.Site, e.Block, e.Tile, e.Interval)
}

// SmemReport is the result of CheckSharedMemory.
type SmemReport struct {
	Type       quant.Type
	Path       string // "int8-MMA" or "dp4a"
	Words      int    // the dynamic allocation in 32-bit words (mmq_get_nbytes_shared/4)
	Blocks     int    // CUDA blocks replayed
	AllBlocks  bool   // every block with work was replayed (else a sample)
	Sampled    bool   // some tiles of a block or iterations of a tile were not replayed
	Segments   int    // tile segments replayed
	Fixups     int    // CUDA blocks of mul_mat_q_stream_k_fixup replayed (MUL_MAT_ID)
	Iterations int    // K iterations replayed
	Loads      int64
	Stores     int64
	// DeadUnwritten counts loads of unwritten words whose results write_back discards
	// (rows past i_max with fallback). Information.
	DeadUnwritten int64
	// Unread counts words written at least once and never read; UnreadWhere names
	// the regions. Information.
	Unread      int
	UnreadWhere string
	fixupUnread int
	// Problems holds the first MaxSharedErrors problems; NProblems counts all.
	Problems  []error
	NProblems int
}

// Err returns nil when no problem was found, else the problems joined.
func (r *SmemReport) Err() error {
	if r.NProblems == 0 {
		return nil
	}
	errs := r.Problems
	if r.NProblems > len(errs) {
		errs = append(errs[:len(errs):len(errs)], fmt.Errorf("mmq: %d more shared memory problems not shown", r.NProblems-len(errs)))
	}
	return errors.Join(errs...)
}

// SmemOptions bound the replay: at most MaxBlocks CUDA blocks (0: 8; the first, the
// last, those that touch the last row tile, the last column tile and the fixup buffer,
// and one per tile not yet touched come first), at most MaxSegments tiles per block (0: 4; the first ones and
// the last) and at most MaxIters K iterations per segment (0: 2; the first and the
// last).
type SmemOptions struct {
	MaxBlocks   int
	MaxSegments int
	MaxIters    int
	inject      smemInjection
}

// smemInjection is a test-only switch that plants a bug in the model (smem_test.go
// checks that each is caught).
type smemInjection int

const (
	injNone           smemInjection = iota
	injXRowStride                   // load_tiles stores with row stride sram_stride-1
	injNoBarrier                    // the __syncthreads after the first vec_dot is missing
	injTileYOffset                  // the vec_dot reads y_qs at y+3 instead of y+4
	injYCopyShort                   // the tile_y copy stops one nthreads step early
	injTileXPastEnd                 // tile_x placed 32 words later (ends past the allocation)
	injIDsNoBarrier                 // MUL_MAT_ID: no __syncthreads before rewriting ids_dst_shared
	injScaleRowStride               // the scale store uses row stride+1
	injFixupNoBarrier               // the fixup kernel's __syncthreads after the ids stores is missing
)

// SmemTypes returns the types CheckSharedMemory models on the dp4a (dp4a true) or
// int8-MMA path.
func SmemTypes(dp4a bool) []quant.Type {
	m := smemKernelsMMA
	if dp4a {
		m = smemKernelsDP4A
	}
	var ts []quant.Type
	for t := range m {
		ts = append(ts, t)
	}
	slices.Sort(ts)
	return ts
}

// CheckSharedMemory replays the shared-memory accesses of the launch p of type t (see
// the comment at the top of smem.go) and reports every problem found. A type or path
// not modelled is an error wrapping ErrUnsupported.
func CheckSharedMemory(p *Plan, t quant.Type, opt SmemOptions) (*SmemReport, error) {
	kt := smemKernelsMMA
	if p.DP4A {
		kt = smemKernelsDP4A
	}
	k, ok := kt[t]
	if !ok {
		return nil, fmt.Errorf("%w: the shared memory of mul_mat_q for %v on the %s path is not modelled", ErrUnsupported, t, p.path())
	}
	cfg := p.Launch.Config
	if cfg.Type != t {
		return nil, fmt.Errorf("mmq: CheckSharedMemory: plan for %v, type %v", cfg.Type, t)
	}
	if opt.MaxBlocks <= 0 {
		opt.MaxBlocks = 8
	}
	if opt.MaxIters <= 0 {
		opt.MaxIters = 2
	}
	if opt.MaxSegments <= 0 {
		opt.MaxSegments = 4
	}
	b := &smemBlock{
		k: k, I: cfg.I, J: cfg.J, nw: p.Launch.NWarps, nthreads: cfg.NThreads, stride: cfg.SRAM.Stride(),
		dp4a: p.DP4A, fallback: cfg.Fallback, inj: opt.inject,
		nrows: int(p.Launch.NRowsX), ncols: int(p.Launch.NColsMax), expertCols: p.Part.Params.ExpertCols,
		streamK: p.Part.StreamK, bpi: max(1, p.BPI),
	}
	b.rowsPerWarp = 16 // rows_per_warp() (mmq.cuh:175-181)
	if b.J >= 48 && b.J%16 == 0 {
		b.rowsPerWarp = 32
	}
	b.ntx = b.rowsPerWarp / 16
	if b.nw*32 != b.nthreads {
		return nil, fmt.Errorf("mmq: CheckSharedMemory: %d threads with %d warps of 32", b.nthreads, b.nw)
	}
	nbytes := p.Launch.NBytesShared
	b.yLo = b.J
	b.xLo = b.yLo + pad(b.J*smemTileYK, b.nthreads)
	if b.inj == injTileXPastEnd {
		b.xLo += 32 // past the row padding; keeps ldmatrix's 16-byte alignment
	}
	b.c = newSmemChecker(nbytes/4, b)
	rep := &SmemReport{Type: t, Path: p.path(), Words: nbytes / 4}

	blocks := smemPickBlocks(&p.Part, opt.MaxBlocks, b.I, b.nrows)
	rep.AllBlocks = true
	for i := range p.Part.Blocks {
		if len(p.Part.Blocks[i].Segments) > 0 && !slices.Contains(blocks, i) {
			rep.AllBlocks = false
			break
		}
	}
	for _, bi := range blocks {
		blk := &p.Part.Blocks[bi]
		rep.Blocks++
		b.runBlock(blk, opt.MaxSegments, opt.MaxIters, rep)
	}
	if b.expertCols != nil {
		b.runFixups(&p.Part, opt.MaxBlocks, rep)
	}
	c := b.c
	rep.Loads += c.loads
	rep.Stores += c.stores
	rep.DeadUnwritten = c.deadUnwritten
	rep.Problems = append(c.problems, rep.Problems...)
	rep.NProblems += c.nProblems
	if len(rep.Problems) > sim.MaxSharedErrors {
		rep.Problems = rep.Problems[:sim.MaxSharedErrors]
	}
	regions := map[string]int{}
	for w := range c.written {
		if c.written[w] && !c.read[w] {
			rep.Unread++
			regions[b.region(w)]++
		}
	}
	var parts []string
	for _, r := range []string{"ids_dst", "tile_y", "tile_x"} {
		if n := regions[r]; n > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", r, n))
		}
	}
	if rep.fixupUnread > 0 {
		rep.Unread += rep.fixupUnread
		parts = append(parts, fmt.Sprintf("fixup ids_dst_shared %d", rep.fixupUnread))
	}
	rep.UnreadWhere = strings.Join(parts, ", ")
	return rep, nil
}

// MMQ_TILE_NE_K and MMQ_TILE_Y_K (mmq.cuh:116-119).
const (
	smemTileNeK = 32
	smemTileYK  = smemTileNeK + smemTileNeK/quant.QI8_1
)

func pad(x, n int) int { return (x + n - 1) / n * n }

// smemPickBlocks returns the blocks with work to replay: all when there are at most
// max, else the first and the last, the first blocks touching the last row tile, the
// last column tile and the fixup buffer, then one for each tile not yet touched, then
// others evenly spread. Blocks without a
// segment touch no shared memory past ids_dst_shared's initialisation.
func smemPickBlocks(part *streamk.Partition, max, I, nrows int) []int {
	var cand []int
	for i := range part.Blocks {
		if len(part.Blocks[i].Segments) > 0 {
			cand = append(cand, i)
		}
	}
	n := len(cand)
	if n <= max {
		return cand
	}
	seen := map[int]bool{}
	var out []int
	add := func(i int) {
		if !seen[i] && len(out) < max {
			seen[i] = true
			out = append(out, i)
		}
	}
	add(cand[0])
	add(cand[n-1])
	lastIt := (nrows+I-1)/I - 1
	first := func(want func(s streamk.Segment) bool) {
		for _, i := range cand {
			for _, s := range part.Blocks[i].Segments {
				if want(s) {
					add(i)
					return
				}
			}
		}
	}
	first(func(s streamk.Segment) bool { return s.Tile.It == lastIt })
	first(func(s streamk.Segment) bool { return s.Tile.Jt == part.Params.NTilesX-1 })
	first(func(s streamk.Segment) bool { return s.Out == streamk.ToFixup })
	// Then a block for every tile not yet touched, in tile order, while there is room.
	touched := map[int]bool{}
	for _, i := range out {
		for _, s := range part.Blocks[i].Segments {
			touched[s.TileIndex] = true
		}
	}
	for _, i := range cand {
		for _, s := range part.Blocks[i].Segments {
			if !touched[s.TileIndex] && len(out) < max {
				add(i)
				for _, s2 := range part.Blocks[i].Segments {
					touched[s2.TileIndex] = true
				}
			}
		}
	}
	for k := 1; len(out) < max && k < max; k++ {
		add(cand[k*n/max])
	}
	slices.Sort(out)
	return out
}

// smemChecker is the block's shared memory: values, the phase validity of each word
// and the per-interval access record of sim.SharedMem, plus value checks.
type smemChecker struct {
	b        *smemBlock
	val      []uint32
	valid    []bool // written since the word's region was last poisoned
	written  []bool
	read     []bool
	interval int32
	wStamp   []int32
	writer   []int32
	rStamp   []int32
	reader   []int32

	loads, stores, deadUnwritten int64
	problems                     []error
	nProblems                    int
}

func newSmemChecker(n int, b *smemBlock) *smemChecker {
	c := &smemChecker{b: b, val: make([]uint32, n), valid: make([]bool, n), written: make([]bool, n), read: make([]bool, n),
		wStamp: make([]int32, n), writer: make([]int32, n), rStamp: make([]int32, n), reader: make([]int32, n)}
	for i := range c.val {
		c.val[i] = sim.PoisonWord
	}
	return c
}

func (c *smemChecker) report(k SmemKind, w, tid, other int, site string) {
	c.nProblems++
	if len(c.problems) < sim.MaxSharedErrors {
		c.problems = append(c.problems, &SmemProblem{Kind: k, Word: w, Region: c.b.region(w), Site: site, Thread: tid, Other: other,
			Block: c.b.block, Tile: c.b.tile, Interval: int(c.interval)})
	}
}

// sync is __syncthreads().
func (c *smemChecker) sync() { c.interval++ }

// poison marks words [lo, hi) unwritten (the start of a load phase).
func (c *smemChecker) poison(lo, hi int) {
	lo, hi = max(lo, 0), min(hi, len(c.valid))
	if lo < hi {
		clear(c.valid[lo:hi])
	}
}

func (c *smemChecker) store(tid, w int, v uint32, site string) {
	c.stores++
	if w < 0 || w >= len(c.val) {
		c.report(SmemOutOfRange, w, tid, -1, site)
		return
	}
	cur := c.interval + 1
	if c.wStamp[w] == cur && c.writer[w] != int32(tid) && c.val[w] != v {
		c.report(SmemRaceWAW, w, tid, int(c.writer[w]), site)
	}
	if c.rStamp[w] == cur && c.reader[w] != int32(tid) {
		c.report(SmemRaceWAR, w, tid, int(c.reader[w]), site)
	}
	c.wStamp[w], c.writer[w] = cur, int32(tid)
	c.val[w], c.valid[w], c.written[w] = v, true, true
}

// load is a load by thread tid of word w that needs value want; live is false where
// the result is discarded (a tile row past i_max).
func (c *smemChecker) load(tid, w int, want uint32, live bool, site string) {
	c.loads++
	if w < 0 || w >= len(c.val) {
		c.report(SmemOutOfRange, w, tid, -1, site)
		return
	}
	cur := c.interval + 1
	if c.wStamp[w] == cur && c.writer[w] != int32(tid) {
		c.report(SmemRaceRAW, w, tid, int(c.writer[w]), site)
	}
	switch {
	case c.rStamp[w] != cur:
		c.rStamp[w], c.reader[w] = cur, int32(tid)
	case c.reader[w] >= 0 && c.reader[w] != int32(tid):
		c.reader[w] = -2
	}
	c.read[w] = true
	switch {
	case !c.valid[w] && live:
		c.report(SmemUnwritten, w, tid, -1, site)
	case !c.valid[w]:
		c.deadUnwritten++
	case live && c.val[w] != want:
		c.report(SmemWrongWord, w, tid, -1, site)
	}
}

// smemBlock is the state of the replayed CUDA block: the launch constants and the
// current block, tile, iteration and y half.
type smemBlock struct {
	k                       *smemKernel
	c                       *smemChecker
	I, J, nw, nthreads      int
	stride                  int // sram_stride (MMA path)
	dp4a, fallback, streamK bool
	inj                     smemInjection
	nrows, ncols            int
	expertCols              []int
	yLo, xLo                int
	block                   int
	tile                    streamk.TileCoord
	iMax, jMax              int
	kb0, half               int
	idsTag                  int // what ids_dst_shared holds: 0 = j, 1+e: expert e's columns
	idsBase                 int
	bpi                     int
	rowsPerWarp, ntx        int
}

func (b *smemBlock) region(w int) string {
	switch {
	case w < 0 || w >= len(b.c.val):
		return "outside"
	case w < b.yLo:
		return "ids_dst"
	case w < b.xLo:
		return "tile_y"
	}
	return "tile_x"
}

// value tags
const (
	tagIDs = iota + 1
	tagY
	tagXQ   // x int8 word w of the 256 values (values 4w..4w+3)
	tagXRaw // x raw quantized int (dp4a layouts that keep the packed nibbles)
	tagXD   // x scale of 32-value block b (d, dm, or d*sc per sub-block)
	tagXSC  // x packed int of scales (Q6_K: 4 int8 scales; dp4a K-quants)
)

func smemVal(tag, a, b, c, d int) uint32 {
	h := uint64(tag)*0x9E3779B97F4A7C15 ^ uint64(a+1)*0xC2B2AE3D27D4EB4F ^ uint64(b+7)*0x165667B19E3779F9 ^
		uint64(c+13)*0xD6E8FEB86659FD93 ^ uint64(d+29)*0xFF51AFD7ED558CCD
	h ^= h >> 33
	h *= 0xC4CEB9FE1A85EC53
	h ^= h >> 29
	v := uint32(h)
	if v == sim.PoisonWord {
		v++
	}
	return v
}

// xq is the value of x int8 word w (0..63) of source row r in the current iteration;
// xraw of raw int w; xd of scale b.
func (b *smemBlock) xq(r, w int) uint32   { return smemVal(tagXQ, b.kb0, r, w, 0) }
func (b *smemBlock) xraw(r, w int) uint32 { return smemVal(tagXRaw, b.kb0, r, w, 0) }
func (b *smemBlock) xd(r, s int) uint32   { return smemVal(tagXD, b.kb0, r, s, 0) }
func (b *smemBlock) xsc(r, s int) uint32  { return smemVal(tagXSC, b.kb0, r, s, 0) }

// yv is the value of word w (0..35) of column j's block_q8_1_mmq in the current half.
func (b *smemBlock) yv(j, w int) uint32 { return smemVal(tagY, b.kb0, b.half, j, w) }

// row returns the source row a load_tiles store for tile row i reads (fallback: i =
// min(i, i_max), mmq-load-tiles.cuh, every load).
func (b *smemBlock) row(i int) int {
	if b.fallback {
		return min(i, b.iMax)
	}
	return i
}

// live says a tile row's results reach dst (write_back skips i > i_max with fallback).
func (b *smemBlock) live(i int) bool { return !b.fallback || i <= b.iMax }

// threads calls f for every thread of the block (threadIdx.x = tx, threadIdx.y = ty).
func (b *smemBlock) threads(f func(tid, tx, ty int)) {
	for ty := 0; ty < b.nw; ty++ {
		for tx := 0; tx < 32; tx++ {
			f(32*ty+tx, tx, ty)
		}
	}
}

// runBlock replays one CUDA block of mul_mat_q (mmq.cuh:946-1230).
func (b *smemBlock) runBlock(blk *streamk.Block, maxSegs, maxIters int, rep *SmemReport) {
	c := b.c
	b.block = blk.Index
	b.tile = streamk.TileCoord{}
	// A new CUDA block: its own shared memory, uninitialised, no access before.
	c.sync()
	c.poison(0, len(c.val))
	// ids_dst_shared[j] = j for j < J (mmq.cuh:975-984), then __syncthreads.
	b.writeIDs(0, 0, "mul_mat_q ids_dst_shared[j] = j (mmq.cuh:975-984)")
	c.sync()
	id := b.expertCols != nil
	for si, s := range blk.Segments {
		if si >= maxSegs-1 && si < len(blk.Segments)-1 {
			rep.Sampled = true
			continue // not replayed: the same accesses as the ones before
		}
		b.tile = s.Tile
		if s.Out == streamk.Skipped {
			if !b.streamK {
				return // the conventional kernel returns (mmq.cuh:1017)
			}
			continue
		}
		rep.Segments++
		colDiff := b.ncols
		if id {
			colDiff = b.expertCols[s.Tile.Channel]
		}
		b.iMax = b.nrows - s.Tile.It*b.I - 1
		b.jMax = colDiff - s.Tile.Jt*b.J - 1
		last := si == len(blk.Segments)-1 && s.Out == streamk.ToFixup
		if id {
			switch {
			case last:
				// The fixup buffer is contiguous: ids reset (mmq.cuh:1169-1180).
				if b.inj != injIDsNoBarrier {
					c.sync()
				}
				b.writeIDs(0, 0, "mul_mat_q ids_dst_shared[j] = j before the fixup tile (mmq.cuh:1171-1180)")
				c.sync()
			default:
				// ids_dst_shared[j] = ids_dst[col_low + jt*J + j] (mmq.cuh:1020-1033,
				// 1114-1126); the conventional kernel has no barrier before.
				if b.streamK && b.inj != injIDsNoBarrier {
					c.sync()
				}
				b.writeIDs(1+s.Tile.Channel, s.Tile.Jt*b.J, "mul_mat_q ids_dst_shared[j] = ids_dst[col_low + jt*J + j] (mmq.cuh:1022-1031, 1116-1125)")
				c.sync()
			}
		}
		steps := s.Steps(b.bpi)
		if len(steps) > maxIters {
			rep.Sampled = true
			steps = append(steps[:maxIters-1:maxIters-1], steps[len(steps)-1])
		}
		for _, kb0 := range steps {
			rep.Iterations++
			b.iteration(kb0)
		}
		b.writeBack()
	}
}

// writeIDs stores ids_dst_shared[j] for j < J, thread j0 + threadIdx.y*32 + threadIdx.x.
func (b *smemBlock) writeIDs(tag, base int, site string) {
	b.idsTag, b.idsBase = tag, base
	for j0 := 0; j0 < b.J; j0 += b.nthreads {
		b.threads(func(tid, tx, ty int) {
			j := j0 + ty*32 + tx
			if j0+b.nthreads > b.J && j >= b.J {
				return
			}
			b.c.store(tid, j, smemVal(tagIDs, tag, base+j, 0, 0), site)
		})
	}
}

// iteration replays one kb0 step of mul_mat_q_process_tile (mmq.cuh:902-934).
func (b *smemBlock) iteration(kb0 int) {
	c := b.c
	b.kb0 = kb0
	c.poison(b.xLo, len(c.val))
	b.threads(func(tid, tx, ty int) { b.k.load(b, tid, tx, ty) })
	b.copyY(0)
	c.sync()
	b.threads(func(tid, tx, ty int) { b.k.dot(b, tid, tx, ty, 0) })
	if b.inj != injNoBarrier {
		c.sync()
	}
	b.copyY(1)
	c.sync()
	b.threads(func(tid, tx, ty int) { b.k.dot(b, tid, tx, ty, smemTileNeK) })
	c.sync()
}

// copyY is the tile_y copy (mmq.cuh:904-911 and 919-926): tile_y[l] = by0[l] for
// l = l0 + threadIdx.y*warp_size + threadIdx.x, l0 < J*MMQ_TILE_Y_K in steps of nthreads.
// by0 is column-major in block_q8_1_mmq (36 ints per column): word l is word l%36 of
// column l/36 (columns past the tile's end are the buffer's padding, still copied).
func (b *smemBlock) copyY(half int) {
	b.half = half
	b.c.poison(b.yLo, b.xLo)
	end := b.J * smemTileYK
	if b.inj == injYCopyShort {
		end -= b.nthreads
	}
	site := "mul_mat_q_process_tile tile_y[l] = by0[l] (mmq.cuh:905-910)"
	if half == 1 {
		site = "mul_mat_q_process_tile tile_y[l] = by0[l] (mmq.cuh:920-925)"
	}
	for l0 := 0; l0 < end; l0 += b.nthreads {
		b.threads(func(tid, tx, ty int) {
			l := l0 + ty*32 + tx
			b.c.store(tid, b.yLo+l, b.yv(l/smemTileYK, l%smemTileYK), site)
		})
	}
}

// writeBack replays the ids_dst_shared loads of write_back (the fixup or dst store of
// the tile): ggml_cuda_mmq_write_back_dp4a (mmq.cuh:428-465) or _mma (mmq.cuh:467-530).
func (b *smemBlock) writeBack() {
	c := b.c
	want := func(j int) uint32 { return smemVal(tagIDs, b.idsTag, b.idsBase+j, 0, 0) }
	if b.dp4a {
		site := "ggml_cuda_mmq_write_back_dp4a ids_dst[j] (mmq.cuh:456)"
		b.threads(func(tid, tx, ty int) {
			for j0 := 0; j0 < b.J; j0 += b.nw {
				j := j0 + ty
				if j > b.jMax {
					return
				}
				for i0 := 0; i0 < b.I; i0 += 32 {
					i := i0 + tx
					if b.fallback && i > b.iMax {
						continue
					}
					c.load(tid, j, want(j), true, site)
				}
			}
		})
		return
	}
	site := "ggml_cuda_mmq_write_back_mma ids_dst[j] (mmq.cuh:524)"
	b.threads(func(tid, tx, ty int) {
		i0 := (ty / b.ntx) * (b.ntx * 16)
		for j0 := 0; j0 < b.J; j0 += b.ntx * 8 {
			for n := 0; n < b.ntx; n++ {
				for l := 0; l < 4; l++ {
					j := j0 + (ty%b.ntx)*8 + cGetJ(tx, l)
					if j > b.jMax {
						continue
					}
					i := i0 + n*16 + cGetI(tx, l)
					if b.fallback && i > b.iMax {
						continue
					}
					c.load(tid, j, want(j), true, site)
				}
			}
		}
	})
}

// runFixups replays the static ids_dst_shared[J] of mul_mat_q_stream_k_fixup with ids
// (mmq.cuh:1340-1368; a separate launch and allocation of J words; the fixup without
// ids uses no shared memory): every thread j = threadIdx.y*warp_size + threadIdx.x ..
// (steps of nthreads/2) stores ids_dst[col_low + jt*J + j], __syncthreads, then, unless
// i = blockIdx.y*warp_size + threadIdx.x > i_max (fallback), the rows j = j0 +
// threadIdx.y (steps of nwarps/2) up to j_max load ids_dst_shared[j]. Each of the
// fixup's blockIdx.y (I/warp_size of them) is its own CUDA block.
func (b *smemBlock) runFixups(part *streamk.Partition, maxBlocks int, rep *SmemReport) {
	fb := *b
	fb.yLo, fb.xLo = b.J, b.J
	c := newSmemChecker(b.J, &fb)
	fb.c = c
	nw := b.nw / 2 // block_dims_fixup: block_dims.y/2
	site := "mul_mat_q_stream_k_fixup ids_dst_shared[j] = ids_dst[...] (mmq.cuh:1346)"
	siteR := "mul_mat_q_stream_k_fixup ids_dst_shared[j] (mmq.cuh:1367)"
	fixups := part.Fixups
	if len(fixups) > maxBlocks {
		fixups = append(fixups[:maxBlocks-1:maxBlocks-1], fixups[len(fixups)-1])
	}
	for _, f := range fixups {
		fb.block, fb.tile = f.Block, f.Tile
		colDiff := b.expertCols[f.Tile.Channel]
		iMax := b.nrows - f.Tile.It*b.I - 1
		jMax := colDiff - f.Tile.Jt*b.J - 1
		for by := 0; by < b.I/32; by++ {
			rep.Fixups++
			c.sync()
			c.poison(0, b.J)
			for ty := 0; ty < nw; ty++ {
				for tx := 0; tx < 32; tx++ {
					for j := ty*32 + tx; j < b.J; j += nw * 32 {
						c.store(32*ty+tx, j, smemVal(tagIDs, 1+f.Tile.Channel, f.Tile.Jt*b.J+j, 0, 0), site)
					}
				}
			}
			if b.inj != injFixupNoBarrier {
				c.sync()
			}
			for ty := 0; ty < nw; ty++ {
				for tx := 0; tx < 32; tx++ {
					if i := by*32 + tx; b.fallback && i > iMax {
						continue
					}
					for j0 := 0; j0 < b.J; j0 += nw {
						j := j0 + ty
						if j > jMax {
							break
						}
						c.load(32*ty+tx, j, smemVal(tagIDs, 1+f.Tile.Channel, f.Tile.Jt*b.J+j, 0, 0), true, siteR)
					}
				}
			}
		}
	}
	rep.Loads += c.loads
	rep.Stores += c.stores
	rep.Problems = append(rep.Problems, c.problems...)
	rep.NProblems += c.nProblems
	for w := range c.written {
		if c.written[w] && !c.read[w] {
			rep.fixupUnread++
		}
	}
}

// tile<16, 8, int> (mma.cuh:230-262, the NVIDIA branch): element l of lane tx is at
// row get_i(l) = (l/2)*8 + tx/4, column get_j(l) = (tx%4)*2 + l%2.
func cGetI(tx, l int) int { return (l/2)*8 + tx/4 }
func cGetJ(tx, l int) int { return (tx%4)*2 + l%2 }
