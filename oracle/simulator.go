package oracle

import (
	"fmt"

	"github.com/ggsim/ggsim/quant"
	"github.com/ggsim/ggsim/sim"
	"github.com/ggsim/ggsim/sim/mmq"
	"github.com/ggsim/ggsim/sim/mmvq"
	"github.com/ggsim/ggsim/tiling"
)

// Simulator is the Impl backed by ggsim's simulated kernels: it decides the dispatch as
// ggml does (package tiling) and runs the simulated kernel, or returns an error wrapping
// ErrUnsupported for a kernel ggsim does not simulate yet.
type Simulator struct {
	// Opt is passed to the MMVQ simulation (nil: fast mode).
	Opt *mmvq.Options
}

// NewSimulator returns the simulator in its fast mode.
func NewSimulator() *Simulator { return &Simulator{} }

// Name implements Impl.
func (s *Simulator) Name() string { return "ggsim" }

// MulMat implements Impl.
func (s *Simulator) MulMat(dev sim.Device, t quant.Type, a []byte, K, N int, b []float32, M int) ([]float32, error) {
	d := tiling.MulMat(dev, t, tiling.Shape{K: int64(K), N: int64(N), M: int64(M)})
	if d.Kernel == tiling.KernelMMQ {
		p, err := mmq.MakePlan(dev, t, K, N, M)
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ErrUnsupported, err)
		}
		return mmq.MulMat(dev, t, a, K, N, b, M, p)
	}
	if !d.Kernel.IsMMVQ() {
		return nil, fmt.Errorf("%w: ggml dispatches %v with %d columns on %s to %s (%s); ggsim simulates only MMVQ so far",
			ErrUnsupported, t, M, dev.Name, d.Kernel, d.Reason)
	}
	if _, ok := mmvq.KernelOf(t); !ok {
		return nil, fmt.Errorf("%w: no MMVQ kernel for %v", ErrUnsupported, t)
	}
	return mmvq.MulMatOpts(dev, t, a, K, N, b, M, s.Opt)
}

// MulMatID implements Impl.
func (s *Simulator) MulMatID(dev sim.Device, t quant.Type, as []byte, K, N, E int, b []float32, B1, T int, ids []int32, U int) ([]float32, error) {
	d := tiling.MulMatID(dev, t, tiling.Shape{K: int64(K), N: int64(N), M: int64(T), Experts: int64(E)})
	if !d.Kernel.IsMMVQ() {
		return nil, fmt.Errorf("%w: ggml dispatches MUL_MAT_ID of %v with %d tokens on %s to %s (%s); ggsim simulates only MMVQ so far",
			ErrUnsupported, t, T, dev.Name, d.Kernel, d.Reason)
	}
	if _, ok := mmvq.KernelOf(t); !ok {
		return nil, fmt.Errorf("%w: no MMVQ kernel for %v", ErrUnsupported, t)
	}
	return mmvq.MulMatIDOpts(dev, t, as, K, N, E, b, B1, T, ids, U, s.Opt)
}

// Locate implements Localizer for MUL_MAT on MMVQ: which CUDA block, warp and lane wrote
// output index (dst[j*N+i]) and how its K range was split.
func (s *Simulator) Locate(dev sim.Device, t quant.Type, K, N, M int, index int) string {
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
