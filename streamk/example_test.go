package streamk_test

import (
	"fmt"

	"github.com/ggsim/ggsim/streamk"
)

// The H200 golden case Q8_0, K = 1024, 256 rows, 9 columns: I = 128 gives 2 row tiles,
// J = 16 one column tile; K is 32 weight blocks of 32 values, 8 per K-loop iteration.
// 2 tiles cannot fill 132 SMs, so each tile is split over 4 blocks.
func ExamplePlan() {
	part, err := streamk.Plan(streamk.Params{
		NSM: 132, NVIDIA: true, StreamK: true,
		NTilesX: 1, NTilesY: 2, NChannels: 1, NSamples: 1,
		BlocksPerTile: 32, BlocksPerIter: 8,
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Print(part)
	// Output:
	// 2 tiles (nty 2 x ntx 1 x channels 1 x samples 1), 32 k-blocks per tile, 8 per iteration
	// stream-K: nsm 132, 1 wave(s), efficiency 1% (< 90%: grid = nsm): grid 132; fixup kernel launched (2 blocks combine partials)
	// block 16: kbc [0,8) tile 0 (it=0 jt=0 ch=0 s=0) k [0,8) -> fixup
	// block 32: kbc [8,16) tile 0 (it=0 jt=0 ch=0 s=0) k [8,16) -> fixup
	// block 49: kbc [16,24) tile 0 (it=0 jt=0 ch=0 s=0) k [16,24) -> fixup
	// block 65: kbc [24,32) tile 0 (it=0 jt=0 ch=0 s=0) k [24,32) -> dst
	// block 82: kbc [32,40) tile 1 (it=1 jt=0 ch=0 s=0) k [0,8) -> fixup
	// block 98: kbc [40,48) tile 1 (it=1 jt=0 ch=0 s=0) k [8,16) -> fixup
	// block 115: kbc [48,56) tile 1 (it=1 jt=0 ch=0 s=0) k [16,24) -> fixup
	// block 131: kbc [56,64) tile 1 (it=1 jt=0 ch=0 s=0) k [24,32) -> dst
	// 124 block(s) without data
	// fixup block 65: tile 0: dst = P65 + (((0 + P49) + P32) + P16)
	// fixup block 131: tile 1: dst = P131 + (((0 + P115) + P98) + P82)
}

// The order of additions for one tile.
func ExamplePartition_TilePlan() {
	part, _ := streamk.Plan(streamk.Params{
		NSM: 132, NVIDIA: true, StreamK: true,
		NTilesX: 2, NTilesY: 2, NChannels: 1, NSamples: 1,
		BlocksPerTile: 4, BlocksPerIter: 1, // Q4_K, K = 1024
	})
	tp, _ := part.TilePlan(streamk.TileCoord{It: 1, Jt: 0})
	for _, s := range tp.Segments {
		fmt.Printf("block %d: k [%d,%d) -> %v\n", s.Block, s.KB0Start, s.KB0Stop, s.Out)
	}
	fmt.Println(tp.Formula())
	// Output:
	// block 74: k [0,1) -> fixup
	// block 82: k [1,2) -> fixup
	// block 90: k [2,3) -> fixup
	// block 98: k [3,4) -> dst
	// dst = P98 + (((0 + P90) + P82) + P74)
}
