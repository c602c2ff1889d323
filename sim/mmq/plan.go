package mmq

import (
	"fmt"

	"github.com/ggsim/ggsim/quant"
	"github.com/ggsim/ggsim/sim"
	"github.com/ggsim/ggsim/streamk"
	"github.com/ggsim/ggsim/tiling"
)

// Plan is what one launch of mul_mat_q computes, as the simulation executes it: the
// launch decisions of package tiling (config row, J, tile counts) and the stream-K
// partition of package streamk, flattened per output tile.
type Plan struct {
	Launch *tiling.MMQPlan
	Part   streamk.Partition

	I, J int  // tile rows (mmq_y) and columns (mmq_x)
	BPN  int  // weight blocks per row (blocks_per_ne00)
	BPI  int  // weight blocks per iteration (blocks_per_iter)
	NTX  int  // column tiles
	NTY  int  // row tiles
	DP4A bool // the dp4a data layout (no int8 MMA), else the MMA layout

	// Tiles holds, per linear tile index (jt fastest, then channel, then it), the
	// K ranges of the tile's partial sums in ascending k and how they combine.
	Tiles []TileWork
}

// TileWork is one output tile: the K ranges of its partial sums in ascending k (each
// accumulated from 0.0f by CUDA block Block), and the combination. With Adds == nil the
// last range's partial is the output; otherwise the output is
// P[End] + (((0 + P[Adds[0]]) + P[Adds[1]]) + ...), mul_mat_q_stream_k_fixup's order.
type TileWork struct {
	Ranges []Range
	End    int   // block of the end segment
	Adds   []int // blocks whose fixup slots the fixup kernel adds, in order; nil: none
	Empty  bool  // MUL_MAT_ID tile with no columns of its expert: nothing is written
}

// Range is the K range [Start, Stop) of one partial sum, in weight blocks, computed by
// CUDA block Block.
type Range struct{ Start, Stop, Block int }

// MakePlan returns the plan of a MUL_MAT of N rows of K values of t by M columns on dev
// (tiling.MakeMMQPlan and streamk.Plan). It returns an error wrapping ErrUnsupported
// for a device whose MMQ arithmetic the simulation does not model (AMD's MFMA/WMMA
// layouts, Blackwell's native FP4) or a type without a simulated kernel.
func MakePlan(dev sim.Device, t quant.Type, K, N, M int) (*Plan, error) {
	return makePlan(dev, t, tiling.Shape{K: int64(K), N: int64(N), M: int64(M)}, nil)
}

func makePlan(dev sim.Device, t quant.Type, s tiling.Shape, expertCols []int) (*Plan, error) {
	if !sim.CCIsNVIDIA(dev.CC) {
		return nil, fmt.Errorf("%w: mul_mat_q on %s (cc %d): only NVIDIA's MMA and dp4a layouts are simulated", ErrUnsupported, dev.Name, dev.CC)
	}
	mp, err := tiling.MakeMMQPlan(&dev, t, s)
	if err != nil {
		return nil, err
	}
	if mp.UseNativeFP4 {
		return nil, fmt.Errorf("%w: %v on %s uses Blackwell's native FP4 MMA, which is not simulated", ErrUnsupported, t, dev.Name)
	}
	p := &Plan{Launch: mp, I: mp.Config.I, J: mp.Config.J, BPN: mp.BlocksPerNe00, BPI: mp.BlocksPerIter,
		NTX: mp.NTX, NTY: mp.NTY, DP4A: !mp.Config.UseMMADataLayout}
	if _, ok := p.kernels()[t]; !ok {
		return nil, fmt.Errorf("%w: no MMQ kernel for %v on the %s path", ErrUnsupported, t, p.path())
	}
	part, err := streamk.Plan(streamk.Params{
		NSM: dev.SMCount, NVIDIA: true, StreamK: mp.Config.StreamK,
		NTilesX: mp.NTX, NTilesY: mp.NTY, NChannels: mp.NTZW, NSamples: 1,
		BlocksPerTile: mp.BlocksPerNe00, BlocksPerIter: mp.BlocksPerIter,
		ExpertCols: expertCols, J: mp.Config.J,
	})
	if err != nil {
		return nil, err
	}
	p.Part = part
	tiles := part.Tiles()
	p.Tiles = make([]TileWork, len(tiles))
	for i, tp := range tiles {
		w := TileWork{End: tp.End, Empty: tp.Empty}
		for _, sg := range tp.Segments {
			w.Ranges = append(w.Ranges, Range{Start: sg.KB0Start, Stop: sg.KB0Stop, Block: sg.Block})
		}
		if tp.Fixup != nil {
			w.Adds = tp.Fixup.Adds
		}
		p.Tiles[i] = w
	}
	return p, nil
}

func (p *Plan) path() string {
	if p.DP4A {
		return "dp4a"
	}
	return "int8-MMA"
}

// kernels returns the kernel table of the plan's path.
func (p *Plan) kernels() map[quant.Type]*kernel {
	if p.DP4A {
		return kernelsDP4A
	}
	return kernels
}
