package main

import (
	"fmt"
	"io"

	"github.com/ggsim/ggsim/fp16path"
	"github.com/ggsim/ggsim/quant"
	"github.com/ggsim/ggsim/sim"
	"github.com/ggsim/ggsim/tiling"
)

// fp16Check is the GP100 fp16 path's dispatch rule (tiling.UseGP100FP16Path) at every
// ne11, shown when --fp16path opts in.
func fp16Check(dev sim.Device, t quant.Type, s tiling.Shape) checkJSON {
	return check("gp100_fp16_path", fmt.Sprintf("UseGP100FP16Path(%v, cc=%d, ne11=%d) (patch 0007, opted in; not ggml)", t, dev.CC, s.M), s.M,
		func(n int64) bool { s.M = n; return tiling.UseGP100FP16Path(dev, t, s) },
		"sm_60 only; MUL_MAT where ggml runs mul_mat_vec_q; q3_K..q6_K, iq4_xs, iq4_nl, q8_0 at 1 column, q4_K/q5_K/iq4_xs at 2..8")
}

// explainFP16 is the fp16 path's launch with its default options (one row per warp).
func explainFP16(a *explainArgs) *fp16JSON {
	var o *fp16path.Options
	rpw := o.RowsPerWarpFor(int(a.n))
	lanes := sim.WarpSize / rpw
	groups := int(a.k / 16)
	return &fp16JSON{RowsPerWarp: rpw, LanesPerRow: lanes, Groups: groups, GroupsPerLane: (groups + lanes - 1) / lanes,
		Columns: int(a.m), Warps: int((a.n + int64(rpw) - 1) / int64(rpw)), MultiColumn: a.m > 1}
}

func writeFP16Text(w io.Writer, f *fp16JSON) {
	fmt.Fprintf(w, "fp16 path: %d row(s) per warp (GP100_RMAP can change it), %d lanes per row, %d warps; K/16 = %d groups of 16 values dealt round-robin to the lanes (up to %d per lane); %d column(s)",
		f.RowsPerWarp, f.LanesPerRow, f.Warps, f.Groups, f.GroupsPerLane, f.Columns)
	if f.MultiColumn {
		fmt.Fprint(w, ", each group's weights unpacked once for all columns")
	}
	fmt.Fprintln(w)
}

// fp16Simulated runs fp16path.MulMat on a small shape of the same type and columns.
func fp16Simulated(rep *explainReport, a *explainArgs) {
	K := a.typ.BlockSize()
	rs, err := a.typ.RowSize(int64(K))
	if err == nil {
		_, err = fp16path.MulMat(a.typ, make([]byte, rs), K, 1, make([]float32, K*int(a.m)), int(a.m), nil)
	}
	if err != nil {
		rep.NotSimulated = err.Error()
		return
	}
	rep.Simulated = true
	rep.SimulatedBy = "fp16path.MulMat: this project's kernel for the note (the patch's own source is not public), checked on a small shape"
}
