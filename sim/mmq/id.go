package mmq

import (
	"fmt"
	"slices"
	"sync"

	"github.com/ggsim/ggsim/internal/bugs"
	"github.com/ggsim/ggsim/moe"
	"github.com/ggsim/ggsim/quant"
	"github.com/ggsim/ggsim/sim"
	"github.com/ggsim/ggsim/sim/q8"
	"github.com/ggsim/ggsim/tiling"
)

// MUL_MAT_ID mode of mul_mat_q (ggml_cuda_mul_mat_q with ids): the routing of package
// moe sorts the T*U (token, slot) pairs into compact columns by expert; the activations
// are quantized in that compact order (one channel of T*U columns: the ids gather, or
// for B1 = 1 and U > 1 the scatter of each token's one row, which puts the same values
// in the same columns); the launch has ne02 channels (one per expert), ncols_max = T
// (ntx = ceil(T/J)) and ncols_y = ncols_dst = T*U. Tile (it, jt, zt) of expert zt with
// col_low = expert_bounds[zt] and col_diff = expert_bounds[zt+1] - col_low reads the y
// columns col_low + jt*J + j and the weights of expert zt, and writes column j <
// col_diff - jt*J to dst[ids_dst[col_low + jt*J + j]*N + i]; a tile with jt*J >=
// col_diff is skipped but keeps its place in the stream-K partition (streamk's
// ExpertCols). The fixup adds the same way, through ids_dst. Columns j >= col_diff -
// jt*J of a tile (the next expert's columns, or the allocation's padding) are computed
// by the GPU but never stored, so they are not computed here.

// MakePlanID returns the plan of a MUL_MAT_ID of the weights t (E = r.Experts matrices
// of N rows of K values) with the routing r on dev: tiling.MakeMMQPlan of the ID shape
// (ncols_max = T tokens, E channels) and streamk.Plan with the experts' column counts.
func MakePlanID(dev sim.Device, t quant.Type, K, N int, r *moe.Routing) (*Plan, error) {
	if r == nil {
		return nil, fmt.Errorf("mmq: MakePlanID: no routing")
	}
	return makePlan(dev, t, tiling.Shape{K: int64(K), N: int64(N), M: int64(r.Tokens), Experts: int64(r.Experts)}, r.ExpertCols())
}

// idInput is a MUL_MAT_ID call checked against its plan: the kernel, the routing, the
// gathered and quantized activations, and the block and row sizes of t.
type idInput struct {
	kn     *kernel
	r      *moe.Routing
	y      []q8.BlockMMQ
	qk, rs int
}

// prepareID checks a MUL_MAT_ID call (shape, ids, shared memory of mm_ids_helper, the
// plan's routing) and quantizes its activations in the expert-sorted order; MulMatID and
// TraceOutputID share it.
func prepareID(dev sim.Device, t quant.Type, as []byte, K, N, E int, b []float32, B1, T int, ids []int32, U int, p *Plan) (*idInput, error) {
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
	rs := K / qk * t.TypeSize()
	if int64(len(as)) != int64(rs)*int64(N)*int64(E) || int64(len(b)) != int64(K)*int64(B1)*int64(T) {
		return nil, fmt.Errorf("mmq: MUL_MAT_ID: %d weight bytes and %d activations given for K=%d N=%d E=%d, %d tokens of %d rows of %v", len(as), len(b), K, N, E, T, B1, t)
	}
	if need := r.HelperSharedBytes(); dev.SmemPerBlockOptin > 0 && need > dev.SmemPerBlockOptin {
		return nil, fmt.Errorf("mmq: MUL_MAT_ID: %d tokens need %d bytes of shared memory in mm_ids_helper, %s has %d (GGML_ASSERT)", T, need, dev.Name, dev.SmemPerBlockOptin)
	}
	pp := p.Part.Params
	if pp.NChannels != E || p.Launch.NColsMax != int64(T) || p.Launch.NRowsX != int64(N) || p.BPN != K/qk || !slices.Equal(pp.ExpertCols, r.ExpertCols()) {
		return nil, fmt.Errorf("mmq: MUL_MAT_ID: the plan is for %d rows, %d tokens, %d blocks per row, experts' columns %v; the call has %d, %d, %d, %v",
			p.Launch.NRowsX, p.Launch.NColsMax, p.BPN, pp.ExpertCols, N, T, K/qk, r.ExpertCols())
	}

	offs := r.SrcRows()
	for c := range offs {
		offs[c] *= K
	}
	y, err := q8.QuantizeMMQ8_1Gather(b, K, offs, kn.layout)
	if err != nil {
		return nil, err
	}
	return &idInput{kn: kn, r: r, y: y, qk: qk, rs: rs}, nil
}

// MulMatID returns ggml_mul_mat_id(as, b, ids) as mul_mat_q computes it in MUL_MAT_ID
// mode on dev with the plan p (MakePlanID for the routing of ids): as holds E experts of
// N rows of K values of t (row i of expert e at row e*N+i), b holds T tokens of B1
// activation rows of K float32 (b[(t*B1+r)*K+k]), ids holds T tokens of U expert ids
// (ids[t*U+u]; slot u reads row u % B1). The result has T*U*N values,
// dst[(t*U+u)*N+i]. The path (int8 MMA or dp4a) is the plan's. Bad shapes, ids (see
// moe.Route) or a plan made for another routing are errors.
func MulMatID(dev sim.Device, t quant.Type, as []byte, K, N, E int, b []float32, B1, T int, ids []int32, U int, p *Plan) ([]float32, error) {
	in, err := prepareID(dev, t, as, K, N, E, b, B1, T, ids, U, p)
	if err != nil {
		return nil, err
	}
	kn, r, y, qk, rs, pp := in.kn, in.r, in.y, in.qk, in.rs, p.Part.Params
	ncolsY := r.Columns()
	dst := make([]float32, ncolsY*N)
	// bugs.MoEFixupColumns (a test re-injecting llama.cpp PR 17089): the fixup's sums,
	// added after the main kernel to the columns ids_dst[col_low + j].
	type fixupAdd struct {
		tile, idx int
		s         float32
	}
	var fixups []fixupAdd
	var fixupMu sync.Mutex
	buggy := bugs.MoEFixupColumns.Load()
	run(len(p.Tiles), func(tile int) {
		c := pp.Tile(tile)
		lo := int(r.ExpertBounds[c.Channel])
		diff := int(r.ExpertBounds[c.Channel+1]) - lo
		if c.Jt*p.J >= diff { // skipped by mul_mat_q (the plan says Empty)
			return
		}
		// The expert's weights to the end of the tensor: a read past its last row's end
		// (K not a multiple of the iteration) reads the next expert's first row, as on
		// the GPU. y from column col_low: computeTile reads y[kb*ncolsY + jt*J + j].
		mat := &matrix{data: as[c.Channel*N*rs:], bs: t.TypeSize(), stride: K / qk}
		var fixup func(i, j int, s float32)
		if buggy {
			fixup = func(i, j int, s float32) {
				fixupMu.Lock()
				fixups = append(fixups, fixupAdd{tile, int(r.IDsDst[lo+j-c.Jt*p.J])*N + i, s})
				fixupMu.Unlock()
			}
		}
		computeTile(kn, mat, y[lo:], ncolsY, p, &p.Tiles[tile], c.It, c.Jt, N, diff, func(i, j int, v float32) {
			dst[int(r.IDsDst[lo+j])*N+i] = v
		}, fixup)
	})
	slices.SortStableFunc(fixups, func(a, b fixupAdd) int { return a.tile - b.tile })
	for _, f := range fixups {
		dst[f.idx] = sim.Add(dst[f.idx], f.s)
	}
	return dst, nil
}
