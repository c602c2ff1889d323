package mmq

import (
	"fmt"

	"github.com/ggsim/ggsim/quant"
	"github.com/ggsim/ggsim/sim"
	"github.com/ggsim/ggsim/sim/q8"
)

// OutputTrace is how mul_mat_q computes one output dst[Col*N+Row] (TraceOutput): the
// tile that holds it, the partial sums of the tile's K ranges (one per CUDA block that
// works on the tile, ascending k), every iteration of each range with its exact integer
// dots, and the fixup that adds the other blocks' partials to the stored one.
type OutputTrace struct {
	Row, Col int
	// Expert is the expert (channel) of a MUL_MAT_ID output (TraceOutputID) and Column
	// its compact column (expert_bounds[Expert] + Jt*J + j); for MUL_MAT Expert is -1 and
	// Column is Col.
	Expert, Column int
	// Tile is the tile's linear index (it*NTX + jt for MUL_MAT; streamk.Params.TileIndex
	// with the expert's channel for MUL_MAT_ID), It and Jt its row and column tiles, I and
	// J the tile's size.
	Tile, It, Jt, I, J int
	// Ranges are the tile's partial sums in ascending k; the last is the end segment,
	// stored to dst by mul_mat_q, the others go to their blocks' fixup slots.
	Ranges []Range
	// Steps are the iterations of every range, in order.
	Steps []Step
	// Partials[r] is the partial sum of range r for this output.
	Partials []float32
	// Fixup are the additions of mul_mat_q_stream_k_fixup (sum = 0.0f, then sum += the
	// slot of each block in Adds order; last dst += sum), nil when the tile has one range.
	Fixup []FixupStep
	// Stored is what mul_mat_q stores (Partials of the end range); Value is dst after
	// the fixup, the output's final bits.
	Stored, Value float32
}

// Step is one iteration of mul_mat_q's K loop for the output: the weight blocks from
// KB0 (BlocksPerIter of them: K_vram values), the exact int32 dots of 16 consecutive
// values each (Dots[h]: values 16h..16h+15 of the iteration), and the float
// accumulation In -> Out of the type's vec_dot (the scales, as in FMA-SITES-MMQ.md).
type Step struct {
	Range, Block, KB0 int
	Dots              [16]int32
	In, Out           float32
	// Scale is the scale arithmetic In -> Out one operation at a time, in the kernel's
	// order (trace_scale.go, trace_scale_dp4a.go); its last step's Float is Out.
	Scale []sim.Step
}

// FixupStep is one float addition of the fixup: Out = In + Addend, Addend the partial of
// Block; the last step (Block -1) is dst += sum: In the stored value, Addend the sum.
type FixupStep struct {
	Block           int
	In, Addend, Out float32
}

// TraceOutput runs the part of MulMat that computes dst[col*N+row] and records how its
// bits are made. Its Value has the bits MulMat gives there (TestTraceOutputMatchesFast).
func TraceOutput(dev sim.Device, t quant.Type, a []byte, K, N int, b []float32, M int, p *Plan, row, col int) (*OutputTrace, error) {
	kn, ok := p.kernels()[t]
	if !ok {
		return nil, fmt.Errorf("%w: no MMQ kernel for %v on the %s path", ErrUnsupported, t, p.path())
	}
	qk := t.BlockSize()
	if K <= 0 || N <= 0 || M <= 0 || K%qk != 0 {
		return nil, fmt.Errorf("mmq: bad shape K=%d N=%d M=%d for %v (K must be a positive multiple of %d)", K, N, M, t, qk)
	}
	if row < 0 || row >= N || col < 0 || col >= M {
		return nil, fmt.Errorf("mmq: output row %d, column %d outside N=%d, M=%d", row, col, N, M)
	}
	rs := K / qk * t.TypeSize()
	if len(a) != rs*N || len(b) != K*M {
		return nil, fmt.Errorf("mmq: %d weight bytes and %d activations given for K=%d N=%d M=%d of %v", len(a), len(b), K, N, M, t)
	}
	y, err := q8.QuantizeMMQ8_1(b, K, M, 1, kn.layout)
	if err != nil {
		return nil, err
	}
	mat := &matrix{data: a, bs: t.TypeSize(), stride: K / qk}
	it, jt := row/p.I, col/p.J
	tr := &OutputTrace{Row: row, Col: col, Tile: it*p.NTX + jt, It: it, Jt: jt, I: p.I, J: p.J, Expert: -1, Column: col}
	if err := traceTile(kn, explainerFor(p, t), mat, p, tr, func(kb int) *q8.BlockMMQ { return &y[kb*M+col] }); err != nil {
		return nil, err
	}
	return tr, nil
}

// traceTile fills in tr's ranges, steps, partials, fixup and value for row tr.Row of
// mat in tile tr.Tile, reading the y column's block kb at yc(kb): computeTile for one row
// and one column. ex, when not nil, gives each step's Scale.
func traceTile(kn *kernel, ex explainFn, mat *matrix, p *Plan, tr *OutputTrace, yc func(kb int) *q8.BlockMMQ) error {
	row := tr.Row
	w := &p.Tiles[tr.Tile]
	tr.Ranges = w.Ranges
	if len(w.Ranges) == 0 || w.Empty {
		return fmt.Errorf("mmq: tile %d of output (%d, %d) has no K range", tr.Tile, row, tr.Col)
	}
	// As computeTile, for the one row and the one column.
	ybLo, ybHi := yBlockSpan(p, w.Ranges)
	cols := packColumns(ybLo, ybHi, 1, func(kb, _ int) *q8.BlockMMQ { return yc(kb) })
	defer cols.release()
	var x xTile
	tr.Partials = make([]float32, len(w.Ranges))
	for r, rg := range w.Ranges {
		for kb0 := rg.Start; kb0 < rg.Stop; kb0 += p.BPI {
			kn.load(mat, row, kb0, &x)
			kb := kb0 * (iterK / p.BPI) / 128
			cols.dots(&x, kb)
			in := tr.Partials[r]
			out := kn.dot(&x, &cols.c[0], yc(kb), yc(kb+1), in)
			tr.Partials[r] = out
			st := Step{Range: r, Block: rg.Block, KB0: kb0, Dots: cols.c[0], In: in, Out: out}
			if ex != nil {
				st.Scale = ex(&x, &cols.c[0], yc(kb), yc(kb+1), in)
			}
			tr.Steps = append(tr.Steps, st)
		}
	}
	v := tr.Partials[len(tr.Partials)-1]
	tr.Stored = v
	if w.Adds != nil {
		var s float32
		for _, blk := range w.Adds {
			a := tr.Partials[rangeOf(w.Ranges, blk)]
			o := sim.Add(s, a)
			tr.Fixup = append(tr.Fixup, FixupStep{Block: blk, In: s, Addend: a, Out: o})
			s = o
		}
		o := sim.Add(v, s)
		tr.Fixup = append(tr.Fixup, FixupStep{Block: -1, In: v, Addend: s, Out: o})
		v = o
	}
	tr.Value = v
	return nil
}
