package ggsim

import (
	"fmt"

	"github.com/ggsim/ggsim/oracle"
	"github.com/ggsim/ggsim/quant"
	"github.com/ggsim/ggsim/sim"
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

// Locate implements oracle.Localizer for MUL_MAT on MMVQ: which CUDA block, warp and
// lane wrote output index (dst[j*N+i]) and how its K range was split ("" where it cannot
// say).
func (s *Simulator) Locate(dev sim.Device, t quant.Type, K, N, M int, index int) string {
	if tiling.MulMat(dev, t, tiling.Shape{K: int64(K), N: int64(N), M: int64(M)}).Kernel != tiling.KernelMMVQ {
		return ""
	}
	p, err := tiling.MakeMMVQPlan(&dev, t, K, M, false)
	if err != nil || N <= 0 {
		return ""
	}
	i, j := index%N, index/N
	nblocks := K / p.QK
	tpb := p.QI / p.VDR // threads per x block
	return fmt.Sprintf("computed by %v: block.x %d, stored by warp 0 lane %d for column %d; its %d x blocks were split over %d threads (%d per x block, x blocks kbx = tid/%d + n*%d), then %d warps added in order, then the 32-lane butterfly",
		p, i/p.RowsPerBlock, i%p.RowsPerBlock, j, nblocks, p.ThreadsPerRow(), tpb, tpb, p.BlocksPerIter, p.WarpsPerRow())
}
