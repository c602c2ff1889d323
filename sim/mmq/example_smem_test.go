package mmq_test

import (
	"fmt"

	"github.com/ggsim/ggsim/quant"
	"github.com/ggsim/ggsim/sim"
	"github.com/ggsim/ggsim/sim/mmq"
)

// CheckSharedMemory replays the shared-memory accesses of mul_mat_q's CUDA blocks for a
// launch (here every block of a small one, on the int8-MMA path of an H200) and reports
// problems; N = 200 rows is not a multiple of 128, so the last row tile is short and the
// vec_dot computes rows that load_tiles never wrote, which write_back then discards.
func ExampleCheckSharedMemory() {
	dev, _ := sim.Lookup("H200")
	p, err := mmq.MakePlan(dev, quant.Q4_K, 1024, 200, 16)
	if err != nil {
		panic(err)
	}
	r, err := mmq.CheckSharedMemory(p, quant.Q4_K, mmq.SmemOptions{MaxBlocks: 1000})
	if err != nil {
		panic(err)
	}
	fmt.Println(r.Path, r.Words, "words;", r.Blocks, "blocks, all:", r.AllBlocks)
	fmt.Println("problems:", r.Err())
	fmt.Println("discarded loads of unwritten rows:", r.DeadUnwritten > 0)
	fmt.Println("written, never read:", r.Unread, r.UnreadWhere)
	// Output:
	// int8-MMA 10512 words; 8 blocks, all: true
	// problems: <nil>
	// discarded loads of unwritten rows: true
	// written, never read: 192 tile_y 192
}
