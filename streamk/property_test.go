package streamk

import (
	"reflect"
	"slices"
	"testing"

	"pgregory.net/rapid"
)

// genParams draws small launches: random SM counts (including those of real GPUs), tile
// counts, K extents that are and are not multiples of the K step, and MUL_MAT_ID expert
// column counts.
func genParams(t *rapid.T) Params {
	p := Params{
		NSM: rapid.OneOf(rapid.IntRange(1, 200), rapid.SampledFrom([]int{132, 128, 170, 84, 108})).Draw(t, "nsm"),
		// Mostly NVIDIA stream-K, the case H200 runs.
		NVIDIA:        rapid.IntRange(0, 3).Draw(t, "vendor") > 0,
		StreamK:       rapid.IntRange(0, 5).Draw(t, "streamk") > 0,
		NTilesX:       rapid.IntRange(1, 6).Draw(t, "ntx"),
		NTilesY:       rapid.IntRange(1, 8).Draw(t, "nty"),
		NChannels:     rapid.IntRange(1, 4).Draw(t, "nchannels"),
		NSamples:      rapid.IntRange(1, 3).Draw(t, "nsamples"),
		BlocksPerIter: rapid.SampledFrom([]int{1, 8}).Draw(t, "bpi"),
	}
	p.BlocksPerTile = rapid.OneOf(
		rapid.IntRange(1, 12),
		rapid.SampledFrom([]int{16, 32, 64, 128}),
		rapid.IntRange(13, 100),
	).Draw(t, "bpn")
	if rapid.Bool().Draw(t, "id") {
		p.J = rapid.SampledFrom([]int{8, 16, 40}).Draw(t, "J")
		p.ExpertCols = rapid.SliceOfN(rapid.IntRange(0, p.NTilesX*p.J), p.NChannels, p.NChannels).Draw(t, "expertCols")
	}
	return p
}

// TestPartitionProperties checks Plan's literal port of the kernels against an
// independent statement of what they compute (reference §5.8 "emulator view"): block
// ranges by the aligned formula, split at tile boundaries, end segments to dst, last
// partial segments to fixup, fixups adding the other segments of a tile in decreasing
// block order. rapid prints the seed of a failing run.
func TestPartitionProperties(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		p := genParams(t)
		part, err := Plan(p)
		if err != nil {
			t.Fatalf("Plan(%+v): %v", p, err)
		}
		ntiles := p.NTilesX * p.NTilesY * p.NChannels * p.NSamples
		bpn, bpi := p.BlocksPerTile, p.BlocksPerIter
		if part.NTiles != ntiles || len(part.Blocks) != part.Grid {
			t.Fatalf("ntiles %d grid %d blocks %d", part.NTiles, part.Grid, len(part.Blocks))
		}
		empty := func(ti int) bool {
			c := p.Tile(ti)
			return p.ExpertCols != nil && c.Jt*p.J >= p.ExpertCols[c.Channel]
		}

		if !p.StreamK {
			checkConventional(t, p, part, empty)
			return
		}

		// Grid rule: 100*n/(nsm*waves) >= 90 <=> 100*n >= 90*nsm*waves.
		waves := (ntiles + p.NSM - 1) / p.NSM
		wantGrid := p.NSM
		if p.NVIDIA && 100*ntiles >= 90*p.NSM*waves {
			wantGrid = ntiles
		}
		if part.Grid != wantGrid || part.FixupNeeded != (ntiles%wantGrid != 0) {
			t.Fatalf("grid %d fixupNeeded %v, want %d %v", part.Grid, part.FixupNeeded, wantGrid, ntiles%wantGrid != 0)
		}

		// Block ranges: kbc(b) = floor(b*total/grid), then the start of its bpi step
		// inside the tile; consecutive ranges share boundaries and cover [0, total).
		total := ntiles * bpn
		start := func(b int) int {
			raw := b * total / part.Grid
			tile, pos := raw/bpn, raw%bpn
			return tile*bpn + pos/bpi*bpi
		}
		for b, blk := range part.Blocks {
			if blk.Index != b || blk.KBC != start(b) || blk.KBCStop != start(b+1) {
				t.Fatalf("block %d: index %d range [%d,%d), want [%d,%d)", b, blk.Index, blk.KBC, blk.KBCStop, start(b), start(b+1))
			}
			// Split the range at tile boundaries.
			var want []Segment
			for k := blk.KBC; k < blk.KBCStop; {
				ti := k / bpn
				end := min(blk.KBCStop, (ti+1)*bpn)
				s := Segment{Tile: p.Tile(ti), TileIndex: ti, KB0Start: k - ti*bpn, KB0Stop: end - ti*bpn, Out: ToDst}
				if end != (ti+1)*bpn {
					s.Out = ToFixup
				}
				if empty(ti) {
					s.Out = Skipped
				}
				want = append(want, s)
				k = end
			}
			if !reflect.DeepEqual(blk.Segments, want) && (len(blk.Segments) != 0 || len(want) != 0) {
				t.Fatalf("block %d segments\n got %+v\nwant %+v", b, blk.Segments, want)
			}
			for i, s := range blk.Segments {
				if s.KB0Start%bpi != 0 || (s.KB0Stop != bpn && s.KB0Stop%bpi != 0) || s.KB0Start >= s.KB0Stop {
					t.Fatalf("block %d segment %+v not aligned to bpi %d", b, s, bpi)
				}
				if s.KB0Stop != bpn && i != len(blk.Segments)-1 {
					t.Fatalf("block %d: partial segment %d is not its last", b, i)
				}
			}
		}

		// Coverage: every (tile, k-block) exactly once; per tile ascending k and block,
		// exactly one segment reaching the end, owned by the highest block.
		tiles := part.Tiles()
		wantFixups := map[int]Fixup{}
		for ti, tp := range tiles {
			owner := make([]int, bpn)
			for i := range owner {
				owner[i] = -1
			}
			k := 0
			for i, s := range tp.Segments {
				if s.KB0Start != k || (i > 0 && s.Block <= tp.Segments[i-1].Block) {
					t.Fatalf("tile %d: segments not contiguous ascending: %+v", ti, tp.Segments)
				}
				for kk := s.KB0Start; kk < s.KB0Stop; kk++ {
					if owner[kk] != -1 {
						t.Fatalf("tile %d k %d covered twice", ti, kk)
					}
					owner[kk] = s.Block
				}
				k = s.KB0Stop
				last := i == len(tp.Segments)-1
				if (s.KB0Stop == bpn) != last {
					t.Fatalf("tile %d: segment %d reaches end %v, last %v", ti, i, s.KB0Stop == bpn, last)
				}
				wantOut := ToFixup
				if last {
					wantOut = ToDst
				}
				if empty(ti) {
					wantOut = Skipped
				}
				if s.Out != wantOut {
					t.Fatalf("tile %d segment %d output %v, want %v", ti, i, s.Out, wantOut)
				}
			}
			if k != bpn || tp.End != tp.Segments[len(tp.Segments)-1].Block || tp.Empty != empty(ti) {
				t.Fatalf("tile %d: covered to %d of %d, end %d, empty %v", ti, k, bpn, tp.End, tp.Empty)
			}
			if len(tp.Segments) > 1 {
				f := Fixup{Block: tp.End, Tile: tp.Tile, TileIndex: ti, Writes: !empty(ti)}
				for i := len(tp.Segments) - 2; i >= 0; i-- {
					f.Adds = append(f.Adds, tp.Segments[i].Block)
				}
				if empty(ti) {
					f.Stale = f.Adds
				}
				wantFixups[tp.End] = f
			}
		}

		// Fixups: exactly the split tiles, one per end block, ascending blocks, adds
		// strictly decreasing.
		if len(part.Fixups) != len(wantFixups) {
			t.Fatalf("%d fixups, want %d", len(part.Fixups), len(wantFixups))
		}
		for i, f := range part.Fixups {
			if i > 0 && f.Block <= part.Fixups[i-1].Block {
				t.Fatalf("fixups not in ascending block order")
			}
			if !reflect.DeepEqual(f, wantFixups[f.Block]) {
				t.Fatalf("fixup\n got %+v\nwant %+v", f, wantFixups[f.Block])
			}
			if !slices.IsSortedFunc(f.Adds, func(a, b int) int { return b - a }) {
				t.Fatalf("fixup adds %v not decreasing", f.Adds)
			}
		}
		if len(part.Fixups) > 0 && !part.FixupNeeded {
			t.Fatalf("split tiles without the fixup launch")
		}
	})
}

func checkConventional(t *rapid.T, p Params, part Partition, empty func(int) bool) {
	if part.Grid != part.NTiles || part.FixupNeeded || len(part.Fixups) != 0 {
		t.Fatalf("conventional: grid %d fixup %v", part.Grid, part.FixupNeeded)
	}
	seen := make([]bool, part.NTiles)
	for _, b := range part.Blocks {
		s := b.Segments[0]
		if len(b.Segments) != 1 || s.KB0Start != 0 || s.KB0Stop != p.BlocksPerTile || seen[s.TileIndex] || (s.Out == Skipped) != empty(s.TileIndex) {
			t.Fatalf("conventional block %+v", b)
		}
		seen[s.TileIndex] = true
	}
}
