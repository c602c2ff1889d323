package mmq

import (
	"fmt"
	"slices"

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
	if row < 0 || row >= N || col < 0 || col >= T*U {
		return nil, fmt.Errorf("mmq: MUL_MAT_ID: output row %d, column %d outside N=%d, %d tokens of %d slots", row, col, N, T, U)
	}
	in, err := prepareID(dev, t, as, K, N, E, b, B1, T, ids, U, p)
	if err != nil {
		return nil, err
	}
	kn, r, y, qk, rs := in.kn, in.r, in.y, in.qk, in.rs
	c := slices.Index(r.IDsDst, int32(col))
	if c < 0 {
		return nil, fmt.Errorf("mmq: MUL_MAT_ID: dst column %d has no compact column", col)
	}
	e := int(ids[col])
	lo := int(r.ExpertBounds[e])
	ncolsY := r.Columns()
	it, jt := row/p.I, (c-lo)/p.J
	tr := &OutputTrace{Row: row, Col: col, Expert: e, Column: c, It: it, Jt: jt, I: p.I, J: p.J,
		Tile: p.Part.Params.TileIndex(streamk.TileCoord{It: it, Jt: jt, Channel: e})}
	mat := &matrix{data: as[e*N*rs:], bs: t.TypeSize(), stride: K / qk}
	if err := traceTile(kn, explainerFor(p, t), mat, p, tr, func(kb int) *q8.BlockMMQ { return &y[kb*ncolsY+c] }); err != nil {
		return nil, err
	}
	return tr, nil
}
