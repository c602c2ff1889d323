package streamk

import (
	"errors"
	"reflect"
	"testing"
)

// seg is a compact expected segment: block, tile, k range, output.
type seg struct {
	block, tile, k0, k1 int
	out                 Output
}

// dataSegments lists the segments of blocks with data, in block order.
func dataSegments(part Partition) []seg {
	var got []seg
	for _, b := range part.Blocks {
		for _, s := range b.Segments {
			got = append(got, seg{b.Index, s.TileIndex, s.KB0Start, s.KB0Stop, s.Out})
		}
	}
	return got
}

type fix struct {
	block, tile int
	adds        []int
}

func fixups(part Partition) []fix {
	var got []fix
	for _, f := range part.Fixups {
		got = append(got, fix{f.Block, f.TileIndex, f.Adds})
	}
	return got
}

// The H200 golden cases (132 SMs, I = 128, N = 256 rows -> nty = 2, K = 1024):
// Q8_0 has blocks_per_ne00 = 1024/32 = 32, blocks_per_iter = 256/32 = 8; Q4_K has
// blocks_per_ne00 = 1024/256 = 4, blocks_per_iter = 1. M = 9 and 33 columns give one
// column tile (J = 16, 40), M = 130 gives two (J = 80). Worked by hand:
//
// 2 tiles, Q8_0: total = 64, kbc(b) = floor(64b/132) rounded down to a multiple of 8
// (bpn is a multiple of 8). kbc reaches 8c first at b = ceil(16.5c): 17, 33, 50, 66,
// 83, 99, 116, 132; so blocks 16, 32, 49, 65 each own 8 k-blocks of tile 0 and 82, 98,
// 115, 131 those of tile 1; every other block is empty. Q4_K: total = 8, kbc(b) =
// floor(8b/132) reaches c at the same b = ceil(16.5c): the same blocks, 1 k-block each.
//
// 4 tiles: total = 128 (Q8_0) or 16 (Q4_K); chunk c starts at b = ceil(8.25c):
// 9, 17, 25, 33, 42, 50, 58, 66, 75, 83, 91, 99, 108, 116, 124, 132.
func TestH200GoldenPartitions(t *testing.T) {
	twoTileBlocks := []int{16, 32, 49, 65, 82, 98, 115, 131}
	fourTileBlocks := []int{8, 16, 24, 32, 41, 49, 57, 65, 74, 82, 90, 98, 107, 115, 123, 131}
	expect := func(blocks []int, perTile, chunk int) ([]seg, []fix) {
		var segs []seg
		var fixes []fix
		for i, b := range blocks {
			tile, pos := i/perTile, i%perTile
			out := ToFixup
			if pos == perTile-1 {
				out = ToDst
				var adds []int
				for j := i - 1; j >= i-pos; j-- {
					adds = append(adds, blocks[j])
				}
				fixes = append(fixes, fix{b, tile, adds})
			}
			segs = append(segs, seg{b, tile, pos * chunk, (pos + 1) * chunk, out})
		}
		return segs, fixes
	}
	for _, tc := range []struct {
		name     string
		ntx      int
		bpn, bpi int
		blocks   []int
	}{
		{"q8_0/M=9,33", 1, 32, 8, twoTileBlocks},
		{"q8_0/M=130", 2, 32, 8, fourTileBlocks},
		{"q4_K/M=9,33", 1, 4, 1, twoTileBlocks},
		{"q4_K/M=130", 2, 4, 1, fourTileBlocks},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := Params{NSM: 132, NVIDIA: true, StreamK: true, NTilesX: tc.ntx, NTilesY: 2, NChannels: 1, NSamples: 1,
				BlocksPerTile: tc.bpn, BlocksPerIter: tc.bpi}
			part, err := Plan(p)
			if err != nil {
				t.Fatal(err)
			}
			if part.Grid != 132 || !part.FixupNeeded || !part.StreamK {
				t.Fatalf("grid %d fixup %v streamK %v, want 132 true true", part.Grid, part.FixupNeeded, part.StreamK)
			}
			perTile := len(tc.blocks) / part.NTiles
			wantSegs, wantFix := expect(tc.blocks, perTile, tc.bpn/perTile)
			if got := dataSegments(part); !reflect.DeepEqual(got, wantSegs) {
				t.Errorf("segments\n got %v\nwant %v", got, wantSegs)
			}
			if got := fixups(part); !reflect.DeepEqual(got, wantFix) {
				t.Errorf("fixups\n got %v\nwant %v", got, wantFix)
			}
		})
	}
	// The tile order: jt fastest, then it (one channel, one sample).
	p := Params{NSM: 132, NVIDIA: true, StreamK: true, NTilesX: 2, NTilesY: 2, NChannels: 1, NSamples: 1, BlocksPerTile: 32, BlocksPerIter: 8}
	part, _ := Plan(p)
	tiles := part.Tiles()
	wantCoords := []TileCoord{{It: 0, Jt: 0}, {It: 0, Jt: 1}, {It: 1, Jt: 0}, {It: 1, Jt: 1}}
	for i, tp := range tiles {
		if tp.Tile != wantCoords[i] {
			t.Errorf("tile %d is %v, want %v", i, tp.Tile, wantCoords[i])
		}
	}
	if got, want := tiles[0].Formula(), "dst = P32 + (((0 + P24) + P16) + P8)"; got != want {
		t.Errorf("tile 0 formula %q, want %q", got, want)
	}
}

func TestTileOrder(t *testing.T) {
	p := Params{NTilesX: 3, NTilesY: 2, NChannels: 4, NSamples: 5}
	n := p.NTilesX * p.NTilesY * p.NChannels * p.NSamples
	seen := map[TileCoord]bool{}
	for i := 0; i < n; i++ {
		c := p.Tile(i)
		if p.TileIndex(c) != i {
			t.Fatalf("TileIndex(Tile(%d)) = %d", i, p.TileIndex(c))
		}
		seen[c] = true
	}
	if len(seen) != n {
		t.Fatalf("%d distinct coords, want %d", len(seen), n)
	}
	// jt fastest, then channel, then sample, then it.
	want := TileCoord{It: 1, Jt: 2, Channel: 3, Sample: 4}
	if got := p.Tile(((1*5+4)*4+3)*3 + 2); got != want {
		t.Errorf("Tile = %v, want %v", got, want)
	}
}

func TestEfficiencyRule(t *testing.T) {
	type want struct {
		grid, eff int
		fixup     bool
	}
	for _, tc := range []struct {
		nsm, ntiles int
		nvidia      bool
		want        want
	}{
		{132, 118, true, want{132, 89, true}},
		{132, 119, true, want{119, 90, false}},
		{132, 132, true, want{132, 100, false}},
		{132, 133, true, want{132, 50, true}},
		{132, 237, true, want{132, 89, true}},
		{132, 238, true, want{238, 90, false}},
		{132, 264, true, want{264, 100, false}},
		{132, 265, true, want{132, 66, true}},
		{132, 357, true, want{357, 90, false}},
		{132, 32, true, want{132, 24, true}},
		{132, 264, false, want{132, 100, false}}, // AMD: always nsm; 264 % 132 == 0
		{132, 119, false, want{132, 90, true}},
		{108, 100, true, want{100, 92, false}}, // the MMQ article's examples
		{108, 120, true, want{108, 55, true}},
	} {
		p := Params{NSM: tc.nsm, NVIDIA: tc.nvidia, StreamK: true, NTilesX: tc.ntiles, NTilesY: 1, NChannels: 1, NSamples: 1,
			BlocksPerTile: 32, BlocksPerIter: 8}
		part, err := Plan(p)
		if err != nil {
			t.Fatal(err)
		}
		got := want{part.Grid, part.EfficiencyPercent, part.FixupNeeded}
		if got != tc.want {
			t.Errorf("nsm %d ntiles %d nvidia %v: got %+v, want %+v", tc.nsm, tc.ntiles, tc.nvidia, got, tc.want)
		}
	}
	// The 90% switch over a range: with nsm = 132 the grid is ntiles exactly on
	// [119,132], [238,264], [357,396], ...
	for n := 1; n <= 593; n++ {
		in := (n >= 119 && n <= 132) || (n >= 238 && n <= 264) || (n >= 357 && n <= 396) || (n >= 476 && n <= 528)
		_, eff := Efficiency(n, 132)
		if (eff >= 90) != in {
			t.Errorf("ntiles %d: efficiency %d%%, in window %v", n, eff, in)
		}
	}
}

func TestSmallHandWorked(t *testing.T) {
	// 4 tiles, bpn 8, bpi 4, 3 blocks: total 32, kbc raw 0, 10, 21, 32 -> aligned 0, 8, 20, 32.
	part, err := Plan(Params{NSM: 3, NVIDIA: true, StreamK: true, NTilesX: 4, NTilesY: 1, NChannels: 1, NSamples: 1, BlocksPerTile: 8, BlocksPerIter: 4})
	if err != nil {
		t.Fatal(err)
	}
	want := []seg{
		{0, 0, 0, 8, ToDst},
		{1, 1, 0, 8, ToDst}, {1, 2, 0, 4, ToFixup},
		{2, 2, 4, 8, ToDst}, {2, 3, 0, 8, ToDst},
	}
	if got := dataSegments(part); !reflect.DeepEqual(got, want) {
		t.Errorf("segments\n got %v\nwant %v", got, want)
	}
	if got, want := fixups(part), []fix{{2, 2, []int{1}}}; !reflect.DeepEqual(got, want) {
		t.Errorf("fixups %v, want %v", got, want)
	}
	// bpn not a multiple of bpi: bpn 12, bpi 8, 2 tiles, 3 blocks: raw 0, 8, 16 ->
	// 0, 8, 16 (16 = tile 1 pos 4 -> aligned 12), 24.
	part, err = Plan(Params{NSM: 3, NVIDIA: true, StreamK: true, NTilesX: 2, NTilesY: 1, NChannels: 1, NSamples: 1, BlocksPerTile: 12, BlocksPerIter: 8})
	if err != nil {
		t.Fatal(err)
	}
	want = []seg{{0, 0, 0, 8, ToFixup}, {1, 0, 8, 12, ToDst}, {2, 1, 0, 12, ToDst}}
	if got := dataSegments(part); !reflect.DeepEqual(got, want) {
		t.Errorf("segments\n got %v\nwant %v", got, want)
	}
	if got := part.Blocks[1].Segments[0].Steps(8); !reflect.DeepEqual(got, []int{8}) {
		t.Errorf("steps %v, want [8] (one step reaching past the row end)", got)
	}
	// bpn < bpi: every block starts at a tile start; the fixup kernel is launched
	// (2 % 3 != 0) but has nothing to combine.
	part, err = Plan(Params{NSM: 3, NVIDIA: true, StreamK: true, NTilesX: 2, NTilesY: 1, NChannels: 1, NSamples: 1, BlocksPerTile: 4, BlocksPerIter: 8})
	if err != nil {
		t.Fatal(err)
	}
	want = []seg{{1, 0, 0, 4, ToDst}, {2, 1, 0, 4, ToDst}}
	if got := dataSegments(part); !reflect.DeepEqual(got, want) || !part.FixupNeeded || len(part.Fixups) != 0 {
		t.Errorf("segments %v fixupNeeded %v fixups %v", got, part.FixupNeeded, part.Fixups)
	}
}

func TestMulMatIDEmptyTile(t *testing.T) {
	// Two experts, J = 8, ntx = 2: expert 0 has 9 columns (tiles jt 0 and 1), expert 1
	// has 3 (tile jt 1 is empty). Tiles: 0 = (jt0,e0), 1 = (jt1,e0), 2 = (jt0,e1),
	// 3 = (jt1,e1) empty. bpn 4, bpi 1, 6 blocks: kbc = floor(16b/6) = 0,2,5,8,10,13,16.
	p := Params{NSM: 6, NVIDIA: true, StreamK: true, NTilesX: 2, NTilesY: 1, NChannels: 2, NSamples: 1,
		BlocksPerTile: 4, BlocksPerIter: 1, ExpertCols: []int{9, 3}, J: 8}
	part, err := Plan(p)
	if err != nil {
		t.Fatal(err)
	}
	want := []seg{
		{0, 0, 0, 2, ToFixup},
		{1, 0, 2, 4, ToDst}, {1, 1, 0, 1, ToFixup},
		{2, 1, 1, 4, ToDst},
		{3, 2, 0, 2, ToFixup},
		{4, 2, 2, 4, ToDst}, {4, 3, 0, 1, Skipped},
		{5, 3, 1, 4, Skipped},
	}
	if got := dataSegments(part); !reflect.DeepEqual(got, want) {
		t.Errorf("segments\n got %v\nwant %v", got, want)
	}
	wantFix := []Fixup{
		{Block: 1, Tile: TileCoord{}, TileIndex: 0, Adds: []int{0}, Writes: true},
		{Block: 2, Tile: TileCoord{Jt: 1}, TileIndex: 1, Adds: []int{1}, Writes: true},
		{Block: 4, Tile: TileCoord{Channel: 1}, TileIndex: 2, Adds: []int{3}, Writes: true},
		// Block 4 skipped tile 3 and never wrote slot 4; the fixup kernel reads it anyway
		// and stores nothing.
		{Block: 5, Tile: TileCoord{Jt: 1, Channel: 1}, TileIndex: 3, Adds: []int{4}, Writes: false, Stale: []int{4}},
	}
	if !reflect.DeepEqual(part.Fixups, wantFix) {
		t.Errorf("fixups\n got %+v\nwant %+v", part.Fixups, wantFix)
	}
	tiles := part.Tiles()
	if !tiles[3].Empty || tiles[3].Formula() != "empty tile: dst not written" {
		t.Errorf("tile 3: %+v %q", tiles[3], tiles[3].Formula())
	}
	// The same in the conventional grid: the empty tile's block returns at once.
	p.StreamK = false
	part, err = Plan(p)
	if err != nil {
		t.Fatal(err)
	}
	// blockIdx (x=it, y=jt, z=channel): linear index x + 1*(y + 2*z); tile 3 = (jt1,e1) -> block 3.
	if s := part.Blocks[3].Segments[0]; s.Out != Skipped || s.TileIndex != 3 {
		t.Errorf("conventional block 3: %+v", s)
	}
}

func TestConventionalGrid(t *testing.T) {
	p := Params{NSM: 132, NVIDIA: true, StreamK: false, NTilesX: 3, NTilesY: 2, NChannels: 2, NSamples: 2, BlocksPerTile: 7, BlocksPerIter: 8}
	part, err := Plan(p)
	if err != nil {
		t.Fatal(err)
	}
	if part.Grid != 24 || part.GridDim != [3]int{2, 3, 4} || part.FixupNeeded || part.StreamK || len(part.Fixups) != 0 {
		t.Fatalf("grid %d %v fixup %v streamK %v", part.Grid, part.GridDim, part.FixupNeeded, part.StreamK)
	}
	seen := make([]int, part.NTiles)
	for i, b := range part.Blocks {
		if b.Index != i || len(b.Segments) != 1 {
			t.Fatalf("block %d: %+v", i, b)
		}
		s := b.Segments[0]
		// blockIdx.x = it, .y = jt, .z = sample*nchannels + channel.
		x, y, z := i%2, i/2%3, i/6
		if s.Tile != (TileCoord{It: x, Jt: y, Channel: z % 2, Sample: z / 2}) || s.KB0Start != 0 || s.KB0Stop != 7 || s.Out != ToDst {
			t.Errorf("block %d: %+v", i, s)
		}
		seen[s.TileIndex]++
	}
	for ti, n := range seen {
		if n != 1 {
			t.Errorf("tile %d covered %d times", ti, n)
		}
	}
}

func TestPlanErrors(t *testing.T) {
	ok := Params{NSM: 132, NVIDIA: true, StreamK: true, NTilesX: 1, NTilesY: 1, NChannels: 1, NSamples: 1, BlocksPerTile: 1, BlocksPerIter: 1}
	for _, tc := range []struct {
		name        string
		mod         func(*Params)
		unsupported bool
	}{
		{"nsm0", func(p *Params) { p.NSM = 0 }, false},
		{"nsm-huge", func(p *Params) { p.NSM = 0x30000084 }, false}, // a mutated golden file's sm_count (FuzzVerifyMutated): was an out-of-memory crash
		{"ntx-neg", func(p *Params) { p.NTilesX = -1 }, false},
		{"bpn0", func(p *Params) { p.BlocksPerTile = 0 }, false},
		{"bpi0", func(p *Params) { p.BlocksPerIter = 0 }, false},
		{"assert", func(p *Params) { p.NTilesX = 1 << 10; p.BlocksPerTile = 1 << 20 }, false},
		{"wrap", func(p *Params) { p.NTilesX = 1 << 12; p.BlocksPerTile = 1 << 20 }, true},
		{"too-many-tiles", func(p *Params) { p.NTilesX = 1 << 25 }, false},
		{"ntiles-overflow", func(p *Params) { p.NTilesX = 1 << 20; p.NTilesY = 1 << 20 }, true},
		{"conventional-grid", func(p *Params) { p.StreamK = false; p.NTilesX = 70000 }, false},
		{"id-len", func(p *Params) { p.ExpertCols = []int{1, 2}; p.J = 8 }, false},
		{"id-J", func(p *Params) { p.ExpertCols = []int{1} }, false},
		{"id-cols", func(p *Params) { p.ExpertCols = []int{9}; p.J = 8 }, false},
	} {
		p := ok
		tc.mod(&p)
		_, err := Plan(p)
		if err == nil {
			t.Errorf("%s: no error", tc.name)
			continue
		}
		if errors.Is(err, errors.ErrUnsupported) != tc.unsupported {
			t.Errorf("%s: %v: ErrUnsupported %v, want %v", tc.name, err, !tc.unsupported, tc.unsupported)
		}
	}
	// The int overflows of ggml's efficiency computation lie beyond MaxTiles; check the guard directly.
	if MaxTiles*100 > 1<<31-1 {
		t.Errorf("MaxTiles %d lets 100*ntiles overflow int32 unchecked", MaxTiles)
	}
	if _, err := Plan(ok); err != nil {
		t.Errorf("valid params: %v", err)
	}
}

func TestTilePlanOutside(t *testing.T) {
	part, err := Plan(Params{NSM: 4, NVIDIA: true, StreamK: true, NTilesX: 2, NTilesY: 2, NChannels: 1, NSamples: 1, BlocksPerTile: 8, BlocksPerIter: 8})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []TileCoord{{It: 2}, {Jt: -1}, {Channel: 1}, {Sample: 1}} {
		if _, err := part.TilePlan(c); err == nil {
			t.Errorf("TilePlan(%v): no error", c)
		}
	}
	tp, err := part.TilePlan(TileCoord{It: 1, Jt: 1})
	if err != nil || tp.Index != 3 || tp.Formula() != "dst = P3" {
		t.Errorf("TilePlan: %+v %v %q", tp, err, tp.Formula())
	}
}
