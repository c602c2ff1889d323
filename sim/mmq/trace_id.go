package mmq

import (
	"fmt"
	"slices"

	"github.com/ggsim/ggsim/moe"
	"github.com/ggsim/ggsim/quant"
	"github.com/ggsim/ggsim/sim"
	"github.com/ggsim/ggsim/sim/q8"
	"github.com/ggsim/ggsim/streamk"
)

// TraceOutputID is TraceOutput for MUL_MAT_ID (the arguments as MulMatID's): it records
// how mul_mat_q in MUL_MAT_ID mode computes dst[col*N+row], col = token*U + slot. The
// output's compact column c (IDsDst[c] = col, moe.Route) belongs to expert e =
// ids[col]; the tile is (row/I, (c - expert_bounds[e])/J) of channel e, whose K ranges,
// iterations (on the weights of expert e and the gathered y column c) and fixup are
// recorded as for MUL_MAT. Its Value has the bits MulMatID gives there
// (TestTraceOutputIDMatchesFast). The fixup bug that bugs.MoEFixupColumns re-injects is
// not traced: the trace is the kernel without it.
func TraceOutputID(dev sim.Device, t quant.Type, as []byte, K, N, E int, b []float32, B1, T int, ids []int32, U int, p *Plan, row, col int) (*OutputTrace, error) {
	kn, ok := p.kernels()[t]
	if !ok {
		return nil, fmt.Errorf("%w: no MMQ kernel for %v on the %s path", ErrUnsupported, t, p.path())
	}
	qk := t.BlockSize()
	if K <= 0 || N <= 0 || E <= 0 || K%qk != 0 {
		return nil, fmt.Errorf("mmq: MUL_MAT_ID: bad shape K=%d N=%d E=%d for %v (K must be a positive multiple of %d)", K, N, E, t, qk)
	}
	r, err := moe.Route(ids, T, U, E, B1)
	if err != nil {
		return nil, fmt.Errorf("mmq: MUL_MAT_ID: %w", err)
	}
	if row < 0 || row >= N || col < 0 || col >= T*U {
		return nil, fmt.Errorf("mmq: MUL_MAT_ID: output row %d, column %d outside N=%d, %d tokens of %d slots", row, col, N, T, U)
	}
	rs := K / qk * t.TypeSize()
	if int64(len(as)) != int64(rs)*int64(N)*int64(E) || int64(len(b)) != int64(K)*int64(B1)*int64(T) {
		return nil, fmt.Errorf("mmq: MUL_MAT_ID: %d weight bytes and %d activations given for K=%d N=%d E=%d, %d tokens of %d rows of %v", len(as), len(b), K, N, E, T, B1, t)
	}
	pp := p.Part.Params
	if pp.NChannels != E || p.Launch.NColsMax != int64(T) || p.Launch.NRowsX != int64(N) || p.BPN != K/qk || !slices.Equal(pp.ExpertCols, r.ExpertCols()) {
		return nil, fmt.Errorf("mmq: MUL_MAT_ID: the plan is for %d rows, %d tokens, %d blocks per row, experts' columns %v; the call has %d, %d, %d, %v",
			p.Launch.NRowsX, p.Launch.NColsMax, p.BPN, pp.ExpertCols, N, T, K/qk, r.ExpertCols())
	}
	c := slices.Index(r.IDsDst, int32(col))
	if c < 0 {
		return nil, fmt.Errorf("mmq: MUL_MAT_ID: dst column %d has no compact column", col)
	}
	e := int(ids[col])
	lo := int(r.ExpertBounds[e])
	offs := r.SrcRows()
	for i := range offs {
		offs[i] *= K
	}
	y, err := q8.QuantizeMMQ8_1Gather(b, K, offs, kn.layout)
	if err != nil {
		return nil, err
	}
	ncolsY := r.Columns()
	it, jt := row/p.I, (c-lo)/p.J
	tr := &OutputTrace{Row: row, Col: col, Expert: e, Column: c, It: it, Jt: jt, I: p.I, J: p.J,
		Tile: pp.TileIndex(streamk.TileCoord{It: it, Jt: jt, Channel: e})}
	mat := &matrix{data: as[e*N*rs:], bs: t.TypeSize(), stride: K / qk}
	if err := traceTile(kn, explainerFor(p, t), mat, p, tr, func(kb int) *q8.BlockMMQ { return &y[kb*ncolsY+c] }); err != nil {
		return nil, err
	}
	return tr, nil
}
