package streamk

import (
	"errors"
	"fmt"
	"math"

	"github.com/ggsim/ggsim/internal/bugs"
)

// Params are the plain numbers launch_mul_mat_q and mul_mat_q derive the partition from.
// Nothing here names a quantization type or a config table: the caller (tiling, the
// command line) looks those up and passes the numbers.
type Params struct {
	// NSM is the device's multiProcessorCount (ggml_cuda_info().devices[id].nsm).
	NSM int
	// NVIDIA is GGML_CUDA_CC_IS_NVIDIA(cc). Only NVIDIA devices may switch the stream-K
	// kernel to one block per tile when tiling is efficient; AMD (HIP) and other
	// vendors always launch NSM blocks.
	NVIDIA bool
	// StreamK is config.stream_k of the selected MMQ config. False selects the
	// conventional 3-D grid (nty, ntx, nchannels*nsamples): one block per tile over the
	// whole K range, no fixup.
	StreamK bool

	// NTilesX is ntx = ceil(ncols_max/J): tiles along the dst columns (src1 columns,
	// tokens in MUL_MAT_ID).
	NTilesX int
	// NTilesY is nty = ceil(nrows_x/I): tiles along the dst rows (src0 rows).
	NTilesY int
	// NChannels is nchannels_y (ne12 for MUL_MAT; the number of experts ne02 for
	// MUL_MAT_ID).
	NChannels int
	// NSamples is nsamples_y (ne13).
	NSamples int

	// BlocksPerTile is blocks_per_ne00 = ncols_x/qk: the K extent of one tile in weight
	// blocks.
	BlocksPerTile int
	// BlocksPerIter is blocks_per_iter = K_vram/qk: weight blocks per iteration of the
	// kernel's K loop (8 for qk 32 and K_vram 256, 1 for the k-quants).
	BlocksPerIter int

	// ExpertCols, when not nil, selects MUL_MAT_ID: ExpertCols[e] is the number of
	// dst columns routed to expert (channel) e, that is col_diff =
	// expert_bounds[e+1] - expert_bounds[e]. A tile (jt, e) with jt*J >= ExpertCols[e]
	// is empty: it keeps its place in the kbc space but no block computes or writes it.
	// Its length must be NChannels.
	ExpertCols []int
	// J is the tile width in columns (config.J); used only with ExpertCols.
	J int
}

// TileCoord names one output tile as the kernel decomposes it.
type TileCoord struct {
	It      int // tile index along dst rows (src0 rows), 0..NTilesY-1
	Jt      int // tile index along dst columns, 0..NTilesX-1
	Channel int // zt: channel (expert in MUL_MAT_ID), 0..NChannels-1
	Sample  int // wt: sample, 0..NSamples-1
}

// String renders the coordinate as "it=.. jt=.. ch=.. s=..".
func (c TileCoord) String() string {
	return fmt.Sprintf("it=%d jt=%d ch=%d s=%d", c.It, c.Jt, c.Channel, c.Sample)
}

// Output says where a segment's partial sum goes.
type Output int

const (
	// ToDst: the segment reaches its tile's end (kb0_stop == blocks_per_ne00) and
	// write_back stores its sum directly into dst (a plain store, not an add).
	ToDst Output = iota
	// ToFixup: the block's last segment ends inside its tile; write_back stores the
	// whole I x J tile into the block's slot tmp_fixup + blockIdx.x*(J*I).
	ToFixup
	// Skipped: MUL_MAT_ID, the tile is empty for its expert (jt*J >= col_diff); the
	// block neither computes nor writes anything for it (and, when this was the block's
	// last segment, its fixup slot stays unwritten).
	Skipped
)

func (o Output) String() string {
	switch o {
	case ToDst:
		return "dst"
	case ToFixup:
		return "fixup"
	case Skipped:
		return "skipped"
	}
	return fmt.Sprintf("Output(%d)", int(o))
}

// Segment is one call of mul_mat_q_process_tile by a block (or one skipped tile): the
// tile and the K range [KB0Start, KB0Stop) in weight blocks.
type Segment struct {
	Tile      TileCoord
	TileIndex int // linear tile index kbc/blocks_per_ne00 (stream-K order; see Params.TileIndex)
	KB0Start  int
	KB0Stop   int
	Out       Output
}

// Steps returns the kb0 values of the kernel's K loop over the segment,
// for (kb0 = KB0Start; kb0 < KB0Stop; kb0 += bpi). When blocks_per_ne00 is not a
// multiple of bpi the last step of an end segment reaches past the row end (ggml reads
// the row padding against zero activations there).
func (s Segment) Steps(bpi int) []int {
	if bpi < 1 {
		panic("streamk: Segment.Steps: bpi < 1")
	}
	var ks []int
	for kb0 := s.KB0Start; kb0 < s.KB0Stop; kb0 += bpi {
		ks = append(ks, kb0)
	}
	return ks
}

// Block is one CUDA block of the mul_mat_q launch.
type Block struct {
	// Index is blockIdx.x for the stream-K kernel; for the conventional grid it is the
	// linear block index x + nty*(y + ntx*z) of blockIdx (it, jt, wt*nchannels+zt).
	Index int
	// KBC and KBCStop are the block's aligned range [kbc, kbc_stop) in the continuous
	// (tile, k-block) space. Both are 0 for the conventional grid, which has no kbc.
	KBC, KBCStop int
	// Segments in the order the block processes them (ascending kbc). Empty when the
	// block has no data (KBC == KBCStop).
	Segments []Segment
}

// Fixup is the work of one block of mul_mat_q_stream_k_fixup that gets past its early
// returns: the block Block wrote the end segment of Tile to dst, and the fixup kernel
// computes sum = 0.0f + P[Adds[0]] + P[Adds[1]] + ... (left to right, float32) from the
// predecessors' fixup slots, then dst += sum.
type Fixup struct {
	Block     int
	Tile      TileCoord
	TileIndex int
	// Adds lists the predecessor blocks whose slots are read, in the order their partial
	// sums are added; it is strictly decreasing (blocks without data are passed over).
	Adds []int
	// Writes is false when the tile is empty for its expert (MUL_MAT_ID): the kernel still
	// reads the slots and forms sum, but j_max < 0 makes it return before any store.
	Writes bool
	// Stale lists the blocks of Adds whose slot this launch never wrote (their last
	// segment was a skipped empty tile). The kernel reads them anyway; it happens only
	// together with Writes == false, so the stale values reach no output.
	Stale []int
}

// Partition is the complete plan of one mul_mat_q launch (and its fixup launch).
type Partition struct {
	Params Params
	// NTiles is ntiles_dst = ntx*nty*nchannels*nsamples.
	NTiles int
	// StreamK says the stream-K kernel runs (config.stream_k); false: conventional grid.
	StreamK bool
	// Waves and EfficiencyPercent are tiles_nwaves and tiles_efficiency_percent
	// (stream-K only; 0 otherwise).
	Waves, EfficiencyPercent int
	// Grid is the number of CUDA blocks of mul_mat_q (the product of GridDim).
	Grid int
	// GridDim is the launch grid: {Grid, 1, 1} for stream-K, {nty, ntx, ntzw} otherwise.
	GridDim [3]int
	// FixupNeeded is fixup_needed = ntiles_dst % grid != 0: the host allocates
	// tmp_fixup (Grid*J*I floats) and launches mul_mat_q_stream_k_fixup with Grid blocks.
	// It can be true while Fixups is empty (for example blocks_per_ne00 <
	// blocks_per_iter: every block starts at a tile start; the fixup kernel then returns
	// at once in every block).
	FixupNeeded bool
	// Blocks has Grid entries, indexed by Block.Index.
	Blocks []Block
	// Fixups lists, in ascending block order, the fixup-kernel blocks that combine
	// partial sums.
	Fixups []Fixup
}

// MaxTiles bounds the partitions Plan materialises (about 100 bytes per block and
// segment); realistic MMQ launches have at most tens of thousands of tiles.
const MaxTiles = 1 << 22

// MaxSMs bounds Params.NSM: a stream-K launch has NSM blocks, each materialised. The
// largest GPUs have a few hundred SMs (CUs); a larger count is bad input (a golden file
// or sweep record that says so), refused before it allocates.
const MaxSMs = 1 << 12

// kbcLimit is ggml's GGML_ASSERT(ntiles_dst * blocks_per_ne00 < (1 << 30)).
const kbcLimit = 1 << 30

// CUDA grid limits for the conventional launch (gridDim.y, gridDim.z <= 65535).
const maxGridYZ = 65535

// Efficiency returns tiles_nwaves and tiles_efficiency_percent of launch_mul_mat_q:
// waves = ceil(ntiles/nsm), percent = 100*ntiles / (nsm*waves) in integer division.
func Efficiency(ntiles, nsm int) (waves, percent int) {
	waves = (ntiles + nsm - 1) / nsm
	percent = 100 * ntiles / (nsm * waves)
	return waves, percent
}

// TileIndex returns the linear tile index of c in the stream-K kbc space:
// ((It*NSamples + Sample)*NChannels + Channel)*NTilesX + Jt. mul_mat_q decomposes
// kbc/blocks_per_ne00 in the inverse order: jt fastest, then channel, sample, it.
func (p Params) TileIndex(c TileCoord) int {
	return ((c.It*p.NSamples+c.Sample)*p.NChannels+c.Channel)*p.NTilesX + c.Jt
}

// Tile returns the coordinate of linear tile index t (the inverse of TileIndex), as
// mul_mat_q computes it with fast_div_modulo.
func (p Params) Tile(t int) TileCoord {
	jt := t % p.NTilesX
	t /= p.NTilesX
	zt := t % p.NChannels
	t /= p.NChannels
	wt := t % p.NSamples
	it := t / p.NSamples
	return TileCoord{It: it, Jt: jt, Channel: zt, Sample: wt}
}

// empty reports whether tile c is skipped in MUL_MAT_ID (jt*J >= col_diff of its channel).
func (p Params) empty(c TileCoord) bool {
	return p.ExpertCols != nil && c.Jt*p.J >= p.ExpertCols[c.Channel]
}

func (p Params) validate() error {
	pos := []struct {
		name string
		v    int
	}{
		{"NSM", p.NSM}, {"NTilesX", p.NTilesX}, {"NTilesY", p.NTilesY},
		{"NChannels", p.NChannels}, {"NSamples", p.NSamples},
		{"BlocksPerTile", p.BlocksPerTile}, {"BlocksPerIter", p.BlocksPerIter},
	}
	for _, f := range pos {
		if f.v < 1 {
			return fmt.Errorf("streamk: Params.%s = %d, want >= 1", f.name, f.v)
		}
		if f.v > math.MaxInt32 {
			return fmt.Errorf("streamk: Params.%s = %d does not fit ggml's int", f.name, f.v)
		}
	}
	if p.NSM > MaxSMs {
		return fmt.Errorf("streamk: Params.NSM = %d SMs, more than MaxSMs = %d", p.NSM, MaxSMs)
	}
	if p.ExpertCols != nil {
		if p.J < 1 {
			return fmt.Errorf("streamk: Params.J = %d, want >= 1 with ExpertCols", p.J)
		}
		if len(p.ExpertCols) != p.NChannels {
			return fmt.Errorf("streamk: len(Params.ExpertCols) = %d, want NChannels = %d", len(p.ExpertCols), p.NChannels)
		}
		maxCols := int64(p.NTilesX) * int64(p.J)
		for e, c := range p.ExpertCols {
			if c < 0 || int64(c) > maxCols {
				return fmt.Errorf("streamk: Params.ExpertCols[%d] = %d, want 0..NTilesX*J = %d", e, c, maxCols)
			}
		}
	}
	return nil
}

// Plan returns the partition launch_mul_mat_q and mul_mat_q (with
// mul_mat_q_stream_k_fixup) produce for p. It returns an error for parameters that are
// not positive, for sizes where ggml's GGML_ASSERT on the kbc range fails, for a
// conventional grid CUDA cannot launch, and an error wrapping errors.ErrUnsupported
// where ggml's own 32-bit arithmetic would overflow (behaviour not modelled).
func Plan(p Params) (Partition, error) {
	if err := p.validate(); err != nil {
		return Partition{}, err
	}
	ntzw := int64(p.NChannels) * int64(p.NSamples)
	ntiles := int64(p.NTilesX) * int64(p.NTilesY) * ntzw
	if ntzw > math.MaxInt32 || ntiles > math.MaxInt32 {
		return Partition{}, fmt.Errorf("streamk: %d tiles overflow ggml's int ntiles_dst: %w", ntiles, errors.ErrUnsupported)
	}
	if ntiles > MaxTiles {
		return Partition{}, fmt.Errorf("streamk: %d tiles: Plan materialises every block and segment and stops at MaxTiles = %d", ntiles, MaxTiles)
	}
	part := Partition{Params: p, NTiles: int(ntiles), StreamK: p.StreamK}
	if !p.StreamK {
		return planTiling(part)
	}

	// launch_mul_mat_q: 100*ntiles_dst is evaluated in int.
	if 100*ntiles > math.MaxInt32 {
		return Partition{}, fmt.Errorf("streamk: 100*ntiles_dst = %d overflows ggml's int efficiency computation: %w", 100*ntiles, errors.ErrUnsupported)
	}
	part.Waves, part.EfficiencyPercent = Efficiency(part.NTiles, p.NSM)
	part.Grid = p.NSM
	if p.NVIDIA && part.EfficiencyPercent >= 90 {
		part.Grid = part.NTiles
	}
	part.GridDim = [3]int{part.Grid, 1, 1}

	// GGML_ASSERT(ntiles_dst * blocks_per_ne00_fd.z < (1 << 30)): the product is unsigned
	// 32-bit (int times uint32_t), and the kernel forms the same product in uint32_t.
	total := ntiles * int64(p.BlocksPerTile)
	if total >= kbcLimit {
		if total%(1<<32) < kbcLimit {
			return Partition{}, fmt.Errorf("streamk: ntiles*blocks_per_ne00 = %d wraps in ggml's 32-bit check and kernel: %w", total, errors.ErrUnsupported)
		}
		return Partition{}, fmt.Errorf("streamk: ntiles*blocks_per_ne00 = %d >= 2^30: ggml's GGML_ASSERT (kbc overflow) fails", total)
	}
	part.FixupNeeded = part.NTiles%part.Grid != 0

	part.Blocks = make([]Block, part.Grid)
	for b := range part.Blocks {
		part.Blocks[b] = runBlock(p, b, part.Grid, int(total))
	}
	for b := range part.Blocks {
		f, ok, err := runFixup(p, part.Blocks, b, part.Grid, int(total))
		if err != nil {
			return Partition{}, err
		}
		if ok {
			part.Fixups = append(part.Fixups, f)
		}
	}
	return part, nil
}

// planTiling is the conventional launch: grid (nty, ntx, nchannels*nsamples),
// blockIdx.x = it, blockIdx.y = jt, blockIdx.z = wt*nchannels + zt.
func planTiling(part Partition) (Partition, error) {
	p := part.Params
	ntzw := p.NChannels * p.NSamples
	if p.NTilesX > maxGridYZ || ntzw > maxGridYZ {
		return Partition{}, fmt.Errorf("streamk: conventional grid (%d, %d, %d) exceeds CUDA's gridDim.y/z limit %d: the launch fails",
			p.NTilesY, p.NTilesX, ntzw, maxGridYZ)
	}
	part.GridDim = [3]int{p.NTilesY, p.NTilesX, ntzw}
	part.Grid = part.NTiles
	part.Blocks = make([]Block, part.Grid)
	for z := 0; z < ntzw; z++ {
		for y := 0; y < p.NTilesX; y++ {
			for x := 0; x < p.NTilesY; x++ {
				c := TileCoord{It: x, Jt: y, Channel: z % p.NChannels, Sample: z / p.NChannels}
				idx := x + p.NTilesY*(y+p.NTilesX*z)
				s := Segment{Tile: c, TileIndex: p.TileIndex(c), KB0Start: 0, KB0Stop: p.BlocksPerTile, Out: ToDst}
				if p.empty(c) {
					s.Out = Skipped
				}
				part.Blocks[idx] = Block{Index: idx, Segments: []Segment{s}}
			}
		}
	}
	return part, nil
}

// alignedKBC is the kernel's
//
//	kbc  = int64_t(b)*total / gridDim.x;
//	kbc -= (kbc % blocks_per_ne00) % blocks_per_iter;
func alignedKBC(p Params, b, grid, total int) int {
	kbc := int(int64(b) * int64(total) / int64(grid))
	if bugs.StreamKUnaligned.Load() { // a test re-injecting llama.cpp PR 8311's bug: rounded to
		return kbc - kbc%p.BlocksPerIter // whole iterations of kbc, not of the tile's k
	}
	return kbc - (kbc%p.BlocksPerTile)%p.BlocksPerIter
}

// runBlock follows mul_mat_q's stream-K branch for block b.
func runBlock(p Params, b, grid, total int) Block {
	bpn := p.BlocksPerTile
	kbc := alignedKBC(p, b, grid, total)
	kbcStop := alignedKBC(p, b+1, grid, total)
	blk := Block{Index: b, KBC: kbc, KBCStop: kbcStop}

	kb0Start := kbc % bpn
	kb0Stop := min(bpn, kb0Start+kbcStop-kbc)
	for kbc < kbcStop && kb0Stop == bpn {
		t := kbc / bpn
		c := p.Tile(t)
		s := Segment{Tile: c, TileIndex: t, KB0Start: kb0Start, KB0Stop: kb0Stop, Out: ToDst}
		if p.empty(c) {
			s.Out = Skipped
		}
		blk.Segments = append(blk.Segments, s)
		kbc += bpn
		kbc -= kbc % bpn
		kb0Start = 0
		// uint32_t(kbc_stop - kbc): negative differences become huge, min gives bpn,
		// and the loop condition kbc < kbc_stop ends the loop anyway.
		if d := kbcStop - kbc; d < 0 {
			kb0Stop = bpn
		} else {
			kb0Stop = min(bpn, d)
		}
	}
	if kbc >= kbcStop {
		return blk
	}
	t := kbc / bpn
	c := p.Tile(t)
	s := Segment{Tile: c, TileIndex: t, KB0Start: kb0Start, KB0Stop: kb0Stop, Out: ToFixup}
	if p.empty(c) {
		s.Out = Skipped
	}
	blk.Segments = append(blk.Segments, s)
	return blk
}

// runFixup follows mul_mat_q_stream_k_fixup for block b0; ok is false where the kernel
// returns before combining anything.
func runFixup(p Params, blocks []Block, b0, grid, total int) (f Fixup, ok bool, err error) {
	bpn := p.BlocksPerTile
	kbc0 := alignedKBC(p, b0, grid, total)
	kbc0Stop := alignedKBC(p, b0+1, grid, total)

	didNotHaveAnyData := kbc0 == kbc0Stop
	wroteBeginningOfTile := kbc0%bpn == 0
	didNotWriteLast := kbc0/bpn == kbc0Stop/bpn && kbc0Stop%bpn != 0
	if didNotHaveAnyData || wroteBeginningOfTile || didNotWriteLast {
		return Fixup{}, false, nil
	}

	anyFixup := false
	bidx := b0 - 1
	kbcStop := kbc0
	for {
		if bidx < 0 {
			// Unreachable: block 0 starts at kbc 0, a tile start, which ends the walk.
			return Fixup{}, false, fmt.Errorf("streamk: internal error: fixup walk of block %d passed block 0", b0)
		}
		kbc := alignedKBC(p, bidx, grid, total)
		if kbc == kbcStop { // did not have any data
			bidx--
			kbcStop = kbc
			continue
		}
		anyFixup = true
		f.Adds = append(f.Adds, bidx)
		if segs := blocks[bidx].Segments; segs[len(segs)-1].Out != ToFixup {
			f.Stale = append(f.Stale, bidx)
		}
		if kbc%bpn == 0 || kbc/bpn < kbc0/bpn {
			break
		}
		bidx--
		kbcStop = kbc
	}
	if !anyFixup {
		return Fixup{}, false, nil
	}
	f.Block = b0
	f.TileIndex = kbc0 / bpn
	f.Tile = p.Tile(f.TileIndex)
	f.Writes = !p.empty(f.Tile)
	return f, true, nil
}
