package ggsim

import (
	"fmt"
	"strings"

	"github.com/ggsim/ggsim/oracle"
	"github.com/ggsim/ggsim/quant"
	"github.com/ggsim/ggsim/sim"
	"github.com/ggsim/ggsim/sim/mmq"
	"github.com/ggsim/ggsim/streamk"
	"github.com/ggsim/ggsim/tiling"
)

// Simulator is the front door as an oracle.Impl (and oracle.Localizer): the golden
// verifier and the conformance suite run it like a GPU backend. Each call decides the
// dispatch as ggml does and runs the simulated kernel (MulMat, MulMatID); a kernel ggsim
// does not simulate is an error wrapping errors.ErrUnsupported.
type Simulator struct {
	// LaneByLane runs every kernel in its lane-by-lane mode (see the LaneByLane option).
	LaneByLane bool
}

var (
	_ oracle.Impl      = (*Simulator)(nil)
	_ oracle.Localizer = (*Simulator)(nil)
)

// NewSimulator returns the simulator in its fast mode.
func NewSimulator() *Simulator { return &Simulator{} }

// Name implements oracle.Impl: "simulator" (fast mode) or "simulator lane-by-lane".
func (s *Simulator) Name() string {
	if s.LaneByLane {
		return "simulator lane-by-lane"
	}
	return "simulator"
}

func (s *Simulator) options() []Option {
	if s.LaneByLane {
		return []Option{LaneByLane()}
	}
	return nil
}

// MulMat implements oracle.Impl with MulMat.
func (s *Simulator) MulMat(dev sim.Device, t quant.Type, a []byte, K, N int, b []float32, M int) ([]float32, error) {
	r, err := MulMat(dev, Weights{Type: t, K: K, N: N, Data: a}, b, M, s.options()...)
	return r.Out, err
}

// MulMatID implements oracle.Impl with MulMatID.
func (s *Simulator) MulMatID(dev sim.Device, t quant.Type, as []byte, K, N, E int, b []float32, B1, T int, ids []int32, U int) ([]float32, error) {
	r, err := MulMatID(dev, Weights{Type: t, K: K, N: N, E: E, Data: as}, b, B1, T, ids, U, s.options()...)
	return r.Out, err
}

// Locate implements oracle.Localizer for MUL_MAT: which part of the kernel computed
// output index (dst[j*N+i]) and how ("" where it cannot say). On MMVQ: the CUDA block,
// warp and lane and how the K range was split over threads and warps. On MMQ: the
// output tile (it, jt) and the element's place in it, the CUDA block(s) that computed
// the tile's partial sums over which K ranges (stream-K blocks or the conventional
// grid's block), and whether the stored value came from mul_mat_q_stream_k_fixup, with
// the order in which it added the partial sums.
func (s *Simulator) Locate(dev sim.Device, t quant.Type, K, N, M int, index int) string {
	if N <= 0 || M <= 0 || index < 0 || index >= N*M {
		return ""
	}
	switch tiling.MulMat(dev, t, tiling.Shape{K: int64(K), N: int64(N), M: int64(M)}).Kernel {
	case tiling.KernelMMVQ:
		return locateMMVQ(dev, t, K, N, M, index)
	case tiling.KernelMMQ:
		return locateMMQ(dev, t, K, N, M, index)
	}
	return ""
}

func locateMMVQ(dev sim.Device, t quant.Type, K, N, M int, index int) string {
	p, err := tiling.MakeMMVQPlan(&dev, t, K, M, false)
	if err != nil {
		return ""
	}
	i, j := index%N, index/N
	nblocks := K / p.QK
	tpb := p.QI / p.VDR // threads per x block
	return fmt.Sprintf("computed by %v: block.x %d, stored by warp 0 lane %d for column %d; its %d x blocks were split over %d threads (%d per x block, x blocks kbx = tid/%d + n*%d), then %d warps added in order, then the 32-lane butterfly",
		p, i/p.RowsPerBlock, i%p.RowsPerBlock, j, nblocks, p.ThreadsPerRow(), tpb, tpb, p.BlocksPerIter, p.WarpsPerRow())
}

// locateMMQ describes where mul_mat_q computed dst[j*N+i] (see Locate).
func locateMMQ(dev sim.Device, t quant.Type, K, N, M int, index int) string {
	p, err := mmq.MakePlan(dev, t, K, N, M)
	if err != nil {
		return ""
	}
	i, j := index%N, index/N
	c := streamk.TileCoord{It: i / p.I, Jt: j / p.J}
	ti := p.Part.Params.TileIndex(c)
	if ti < 0 || ti >= len(p.Tiles) {
		return ""
	}
	w := p.Tiles[ti]
	var sb strings.Builder
	fmt.Fprintf(&sb, "computed by mul_mat_q (%s path, tile %dx%d, %d x blocks per row, %d per iteration): output tile (it %d, jt %d) (tile %d of %d), row %d column %d of the tile",
		planPath(p), p.I, p.J, p.BPN, p.BPI, c.It, c.Jt, ti, len(p.Tiles), i%p.I, j%p.J)
	if (c.It+1)*p.I > N {
		fmt.Fprintf(&sb, " (the last row tile, partial: %d rows are past N)", (c.It+1)*p.I-N)
	}
	if p.Part.StreamK {
		sb.WriteString("; stream-K")
	} else {
		sb.WriteString("; conventional grid")
	}
	sb.WriteString(": x blocks")
	for k, r := range w.Ranges {
		if k > 0 {
			sb.WriteString(",")
		}
		fmt.Fprintf(&sb, " [%d, %d) by block %d", r.Start, r.Stop, r.Block)
	}
	if w.Adds == nil {
		fmt.Fprintf(&sb, "; stored by block %d, no fixup (dst = P%d)", w.End, w.End)
		return sb.String()
	}
	fmt.Fprintf(&sb, "; the value came from the fixup: block %d stored P%d, then mul_mat_q_stream_k_fixup block %d added dst = P%d + ",
		w.End, w.End, w.End, w.End)
	sb.WriteString(strings.Repeat("(", len(w.Adds)))
	sb.WriteString("0")
	for _, b := range w.Adds {
		fmt.Fprintf(&sb, " + P%d)", b)
	}
	sb.WriteString(" (the partial sums in that order, float32)")
	return sb.String()
}

// path names the MMQ plan's data path.
func planPath(p *mmq.Plan) string {
	if p.DP4A {
		return "dp4a"
	}
	return "int8-MMA"
}
