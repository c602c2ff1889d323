package oracletest

import (
	"fmt"
	"math"
	"slices"

	"pgregory.net/rapid"

	"github.com/ggsim/ggsim/oracle"
	"github.com/ggsim/ggsim/quant"
	"github.com/ggsim/ggsim/sim"
	"github.com/ggsim/ggsim/sim/mmq"
	"github.com/ggsim/ggsim/tiling"
)

// MMQ shapes: MUL_MAT with more than 8 columns, which ggml sends to mul_mat_q (package
// tiling decides), drawn in classes biased to the tile, J and stream-K boundaries.

// mmqClass is a family of MMQ shapes.
type mmqClass int

const (
	mmqFallback   mmqClass = iota // N not a multiple of 128: the need_check ("fallback") kernel and a partial last row tile
	mmqJustAbove8                 // M = 9..12: just past MMVQ
	mmqJBoundary                  // M = J-1, J, J+1 for J a multiple of 8 in 16..128 (and 256)
	mmqOneWave                    // about one tile per SM (NTiles near the SM count: both sides of the 90% efficiency rule)
	mmqLongK                      // long K with one or two row tiles: many stream-K blocks per tile, long fixups
	mmqGeneral                    // anything up to a few hundred rows and columns
	nMMQClasses
)

var mmqClassNames = [...]string{"fallback-rows", "M-just-above-8", "J-boundary", "one-tile-per-SM", "long-K", "general"}

func (c mmqClass) String() string { return mmqClassNames[c] }

// mmqMACs bounds the multiply-adds K·N·M of an MMQ case (but the one-tile-per-SM class,
// whose N is fixed by the SM count), so that the default run stays fast.
const mmqMACs = 1 << 20

// mmqBoundMACs: above it the fp64 bound is not computed (one-tile-per-SM cases of
// 256-value types, whose fp64 reference takes seconds).
const mmqBoundMACs = 6 << 20

// mmqMaxColumns is the largest column count drawn for MMQ.
const mmqMaxColumns = 320

// mmqMaxM returns the largest M such that ggml dispatches MUL_MAT of t with every column
// count in 9..M to MMQ on dev (0: none, e.g. a type without MMQ, or a device where 9
// columns already go elsewhere).
func mmqMaxM(dev sim.Device, t quant.Type) int {
	m := 0
	for c := tiling.MMVQMaxBatchSize + 1; c <= mmqMaxColumns; c++ {
		d := tiling.MulMat(dev, t, tiling.Shape{K: int64(t.BlockSize()), N: 128, M: int64(c)})
		if d.Kernel != tiling.KernelMMQ {
			break
		}
		m = c
	}
	return m
}

// drawMMQShape draws K, N, M and the class of an MMQ case of t (M <= maxM).
func (s *suite) drawMMQShape(rt *rapid.T, t quant.Type, maxM int) (K, N, M int, class mmqClass) {
	qk := t.BlockSize()
	class = mmqClass(rapid.IntRange(0, int(nMMQClasses)-1).Draw(rt, "MMQ shape class (0 fallback rows, 1 M 9..12, 2 J boundary, 3 one tile per SM, 4 long K, 5 general)"))
	kBlocks := func(lo, hi int) int { return qk * rapid.IntRange(max(1, lo/qk), max(1, hi/qk)).Draw(rt, "K blocks") }
	clampM := func(m int) int { return min(max(m, tiling.MMVQMaxBatchSize+1), maxM) }
	switch class {
	case mmqFallback:
		N = 128*rapid.IntRange(0, 3).Draw(rt, "N: whole row tiles") + rapid.IntRange(1, 127).Draw(rt, "N: rows of the partial tile")
		M = clampM(rapid.IntRange(9, 64).Draw(rt, "M (columns)"))
		K = kBlocks(qk, 2048)
	case mmqJustAbove8:
		N = rapid.IntRange(1, 300).Draw(rt, "N (rows)")
		M = clampM(rapid.IntRange(9, 12).Draw(rt, "M (columns)"))
		K = kBlocks(qk, 4096)
	case mmqJBoundary:
		j := rapid.SampledFrom([]int{16, 24, 32, 40, 48, 56, 64, 72, 80, 88, 96, 104, 112, 120, 128, 256}).Draw(rt, "J boundary")
		M = clampM(j + rapid.IntRange(-1, 1).Draw(rt, "M - J"))
		N = rapid.IntRange(1, 256).Draw(rt, "N (rows)")
		K = kBlocks(qk, 2048)
	case mmqOneWave:
		M = clampM(rapid.IntRange(9, 12).Draw(rt, "M (columns)"))
		K = qk * rapid.IntRange(1, 2).Draw(rt, "K blocks")
		// launch_mul_mat_q: stream-K unless 100*ntiles/(nsm*waves) >= 90 (NVIDIA).
		sm := s.dev.SMCount
		lo90 := (90*sm + 99) / 100 // the fewest tiles of one wave at >= 90%
		var target int
		switch rapid.IntRange(0, 2).Draw(rt, "tiles: 0 one wave >= 90% (one block per tile), 1 just below 90%, 2 just above one wave") {
		case 0:
			target = rapid.IntRange(lo90, sm).Draw(rt, "tiles")
		case 1:
			target = rapid.IntRange(max(1, lo90-8), max(1, lo90-1)).Draw(rt, "tiles")
		default:
			target = rapid.IntRange(sm+1, sm+8).Draw(rt, "tiles")
		}
		p, err := tiling.MakeMMQPlan(&s.dev, t, tiling.Shape{K: int64(K), N: 128, M: int64(M)})
		if err != nil {
			rt.Fatalf("MMQ plan of %v K=%d M=%d: %v", t, K, M, err)
		}
		nty := max(1, (target+p.NTX-1)/p.NTX)
		N = 128*nty - rapid.IntRange(0, 1).Draw(rt, "N: the last row tile partial (1) or whole (0)")*rapid.IntRange(1, 127).Draw(rt, "rows short of a whole tile")
		return K, N, M, class
	case mmqLongK:
		K = kBlocks(2048, s.maxK)
		N = rapid.IntRange(1, 256).Draw(rt, "N (rows)")
		M = clampM(rapid.IntRange(9, 24).Draw(rt, "M (columns)"))
		N = max(1, min(N, mmqMACs/(K*M)))
		return K, N, M, class
	default:
		N = rapid.IntRange(1, 400).Draw(rt, "N (rows)")
		M = clampM(rapid.IntRange(9, mmqMaxColumns).Draw(rt, "M (columns)"))
		K = kBlocks(qk, s.maxK)
	}
	for K > qk && K*N*M > mmqMACs {
		K = max(qk, K/2/qk*qk)
	}
	for N > 1 && K*N*M > mmqMACs {
		N = N * 3 / 4
	}
	return K, N, M, class
}

// MMQLaunch names the launch ggml makes for a MUL_MAT of the shape on MMQ (for reports):
// the same as mmqLaunch.
func MMQLaunch(dev sim.Device, t quant.Type, K, N, M int) string { return mmqLaunch(dev, t, K, N, M) }

// mmqLaunch names the launch ggml makes for the shape (for the report): the
// conventional grid (configs without stream-K), the stream-K kernel with one block per
// tile (efficiency >= 90%) or with SMCount blocks, with or without fixups, and the fallback kernel (N not
// a multiple of 128). It uses the simulator's plan (sim/mmq.MakePlan: tiling and
// streamk); "" if there is none.
func mmqLaunch(dev sim.Device, t quant.Type, K, N, M int) string {
	p, err := mmq.MakePlan(dev, t, K, N, M)
	if err != nil {
		return ""
	}
	var l string
	switch {
	case !p.Part.StreamK:
		l = "conventional grid"
	case p.Part.Grid == p.Part.NTiles:
		l = "one block per tile" // stream-K kernel at >= 90% efficiency: grid = ntiles
	default:
		l = "stream-K"
		if len(p.Part.Fixups) > 0 {
			l += " with fixup"
		}
	}
	if p.Launch.Config.Fallback {
		l += ", fallback rows"
	}
	return l
}

// infColumns reports, for each of the nrows activation rows, whether one of its 32-value
// blocks holds ±Inf. quantize_mmq_q8_1 then gives the block the scale amax/127 = Inf in
// every layout (float or binary16), and every product with it is ±Inf or NaN. Finite
// values >= 1e7 are not counted: MMQ's float-scale layouts keep them finite.
func infColumns(b []float32, K, nrows int) []bool {
	p := make([]bool, nrows)
	for j := 0; j < nrows; j++ {
		for _, v := range b[j*K : (j+1)*K] {
			if math.IsInf(float64(v), 0) {
				p[j] = true
				break
			}
		}
	}
	return p
}

// mmqCase draws and checks one MUL_MAT case that ggml dispatches to mul_mat_q: bound,
// determinism and non-finite handling (the column properties are MMVQ's and are not
// applied). It returns the column count, the class, whether the data were adversarial,
// and false if the case was unsupported (and skipped).
func (c *caseRun) mmqCase() (int, mmqClass, bool, bool) {
	rt, s, t := c.rt, c.s, c.t
	K, N, M, class := s.drawMMQShape(rt, t, s.mmq[t])
	rapid.Just(fmt.Sprintf("K=%d N=%d M=%d (%v)", K, N, M, class)).Draw(rt, "MMQ shape")
	if d := tiling.MulMat(s.dev, t, tiling.Shape{K: int64(K), N: int64(N), M: int64(M)}); d.Kernel != tiling.KernelMMQ {
		rt.Fatalf("oracletest: drew MUL_MAT %v K=%d N=%d M=%d for MMQ, but ggml dispatches it to %v (%s)", t, K, N, M, d.Kernel, d.Reason)
	}
	adv, a, prow, b := c.drawData(rt, t, K, N, M)
	pcol := infColumns(b, K, M)

	c.launch = mmqLaunch(s.dev, t, K, N, M)
	shape := fmt.Sprintf("MUL_MAT %v K=%d N=%d M=%d (MMQ, %v, %s)", t, K, N, M, class, c.launch)
	out, ok := c.mulMat(shape, a, K, N, b, M)
	if !ok {
		return M, class, adv, false
	}
	at := func(idx int) string { return fmt.Sprintf("row %d, column %d", idx%N, idx/N) }
	if c.has(Determinism) {
		c.checked |= Determinism
		again, ok := c.mulMat(shape+" (second call)", a, K, N, b, M)
		if !ok {
			return M, class, adv, false
		}
		c.sameBits(shape+": two calls", out, again, at)
	}
	if c.has(Bound) && !adv && K*N*M <= mmqBoundMACs {
		c.checked |= Bound
		ref, err := oracle.MulMatRefOn(c.s.dev, t, a, K, N, b, M)
		if err != nil {
			rt.Fatalf("%s: fp64 reference: %v", shape, err)
		}
		c.withinBound(shape, ref, out, at)
	}
	if c.has(NonFiniteOutputs) && (slices.Contains(prow, true) || slices.Contains(pcol, true)) {
		c.checked |= NonFiniteOutputs
		for j := 0; j < M; j++ {
			for i := 0; i < N; i++ {
				if (prow[i] || pcol[j]) && isFinite(out[j*N+i]) {
					rt.Fatalf("%s: output (row %d, column %d) = %v is finite, but it meets a non-finite scale (weight row poisoned %v, activation column holds ±Inf %v)",
						shape, i, j, out[j*N+i], prow[i], pcol[j])
				}
			}
		}
	}
	return M, class, adv, true
}
