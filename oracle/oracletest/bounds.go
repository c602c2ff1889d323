package oracletest

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/ggsim/ggsim/oracle"
	"github.com/ggsim/ggsim/quant"
	"github.com/ggsim/ggsim/sim"
	"github.com/ggsim/ggsim/streamk"
	"github.com/ggsim/ggsim/tiling"
)

// The bound study: how tight oracle.MulMatRefOn's kernel bound is (Tightness) and how
// much it catches (Power: injected kernel bugs, each applied to an implementation's
// inputs or outputs, must leave some output outside the bound; correct runs never).
// docs/bounds.md has the tables; simrun bounds and the tests run it.

// StudyOptions control Tightness and Power.
type StudyOptions struct {
	// Types to study; nil: BoundTypes().
	Types []quant.Type
	// K, the row length (multiple of 256); 0: 4096.
	K int
	// Cases per type, path and data kind (Tightness) or bug (Power); 0: 20.
	Cases int
	// Seed of the generated data.
	Seed uint64
	// Progress, if not nil, is called after each (type, path) with a short line.
	Progress func(string)
	// MMVQOnly (FalseAlarms): no MMQ shapes.
	MMVQOnly bool
}

func (o *StudyOptions) defaults() {
	if o.Types == nil {
		o.Types = BoundTypes()
	}
	if o.K == 0 {
		o.K = 4096
	}
	if o.Cases == 0 {
		o.Cases = 20
	}
}

// BoundTypes are the types whose kernel bound oracle.MulMatRefOn models on every path
// ggml runs them on (IQ1_M has MMVQ only: no MMQ).
func BoundTypes() []quant.Type {
	return []quant.Type{quant.Q4_0, quant.Q4_1, quant.Q5_0, quant.Q5_1, quant.Q8_0, quant.Q2_K, quant.Q3_K,
		quant.Q4_K, quant.Q5_K, quant.Q6_K, quant.IQ4_NL, quant.IQ4_XS, quant.MXFP4, quant.NVFP4, quant.IQ3_S,
		quant.IQ2_XXS, quant.IQ2_XS, quant.IQ2_S, quant.IQ3_XXS, quant.IQ1_S, quant.IQ1_M}
}

// studyShape is one shape class of the study.
type studyShape struct {
	name string
	n    int
	ms   []int // column counts drawn from
}

// studyShapes are the shapes per path: MMVQ (1..8 columns, 64 rows) and MMQ (9..16
// columns, 128 rows: one tile, which stream-K splits into many ranges on a GPU with
// more SMs than the tile has iterations).
func studyShapes(dev sim.Device, t quant.Type, K int) []studyShape {
	var out []studyShape
	var mv, mq []int
	for m := 1; m <= 16; m++ {
		switch oracle.KernelPath(dev, t, K, 128, m) {
		case "mmvq":
			mv = append(mv, m)
		case "mmq-mma", "mmq-dp4a":
			mq = append(mq, m)
		}
	}
	if len(mv) > 0 {
		out = append(out, studyShape{"mmvq", 64, mv})
	}
	if len(mq) > 0 {
		out = append(out, studyShape{oracle.KernelPath(dev, t, K, 128, mq[0]), 128, mq})
	}
	return out
}

// DataKinds of the tightness study.
var DataKinds = []string{"realistic", "uniform", "coherent", "cancel", "outlier"}

// studyData returns weights and activations of a data kind.
func studyData(kind string, t quant.Type, K, N, M int, seed uint64) ([]byte, []float32, error) {
	r := rand.New(rand.NewPCG(seed, 0x626f_756e_64)) // "bound"
	switch kind {
	case "realistic":
		a, err := RealisticWeights(t, K, N, seed)
		return a, RealisticActivations(K, M, seed+1), err
	}
	x := make([]float32, K*N)
	y := make([]float32, K*M)
	for i := range x {
		x[i] = 0.05 * (2*r.Float32() - 1) // 2x-1 is exact for x = k/2^24: fused or not, the same bits
	}
	for i := range y {
		y[i] = 2*r.Float32() - 1 // exact, as above
	}
	switch kind {
	case "coherent": // no cancellation: every product positive, the partial sums only grow
		for i := range x {
			x[i] = float32(math.Abs(float64(x[i])))
		}
		for i := range y {
			y[i] = float32(math.Abs(float64(y[i])))
		}
	case "cancel": // the exact result is 0: the second half of each row repeats the first, the activations negate it
		for i := 0; i < N; i++ {
			copy(x[i*K+K/2:(i+1)*K], x[i*K:i*K+K/2])
		}
		for j := 0; j < M; j++ {
			for k := 0; k < K/2; k++ {
				y[j*K+K/2+k] = -y[j*K+k]
			}
		}
	case "outlier": // one 32-value block 10^3 times the rest (its sum stays inside binary16)
		b := r.IntN(K / 32)
		for j := 0; j < M; j++ {
			for k := 0; k < K; k++ {
				if k/32 == b {
					y[j*K+k] *= 1e3
				}
			}
		}
	}
	a, err := quantizeOrRandom(t, x, K, N, seed)
	return a, y, err
}

func quantizeOrRandom(t quant.Type, x []float32, K, N int, seed uint64) ([]byte, error) {
	if _, ok := quantizer(t); !ok {
		return RealisticWeights(t, K, N, seed)
	}
	rs, err := t.RowSize(int64(K))
	if err != nil {
		return nil, err
	}
	a := make([]byte, int(rs)*N)
	for i := 0; i < N; i++ {
		if err := quant.QuantizeRowRef(t, x[i*K:(i+1)*K], a[i*int(rs):(i+1)*int(rs)]); err != nil {
			return nil, err
		}
	}
	return a, nil
}

// TightnessRow is the tightness of the bound on one type, path and data kind: over all
// outputs, bound / |got - center| (outputs whose error is 0 are counted apart).
type TightnessRow struct {
	Type    quant.Type `json:"type"`
	Path    string     `json:"path"`
	Data    string     `json:"data"`
	Outputs int        `json:"outputs"`
	Exact   int        `json:"exact"`   // outputs equal to the center
	Median  float64    `json:"median"`  // median of bound/|error| over the others (NaN if none)
	Worst   float64    `json:"worst"`   // smallest bound/|error|: < 1 would be a bound violation (NaN if none)
	Outside int        `json:"outside"` // outputs outside the bound (must be 0)
	// RelBound is the median of bound/|value| (value the fp64 truth), OldRelBound the
	// mean of MulMatRef's bound/|value| on the same outputs (realistic data only).
	RelBound    float64 `json:"rel_bound"`
	OldRelBound float64 `json:"old_rel_bound"`
}

// Tightness runs impl on generated cases and measures the kernel bound against the
// observed error of every output.
func Tightness(impl oracle.Impl, dev sim.Device, opt StudyOptions) ([]TightnessRow, error) {
	opt.defaults()
	var rows []TightnessRow
	for _, t := range opt.Types {
		for _, sh := range studyShapes(dev, t, opt.K) {
			for _, kind := range DataKinds {
				row := TightnessRow{Type: t, Path: sh.name, Data: kind}
				var ratios, rel []float64
				var oldRel float64
				for c := 0; c < opt.Cases; c++ {
					seed := opt.Seed*1_000_003 + uint64(c)
					M := sh.ms[int(seed%uint64(len(sh.ms)))]
					a, b, err := studyData(kind, t, opt.K, sh.n, M, seed)
					if err != nil {
						return nil, err
					}
					got, err := impl.MulMat(dev, t, a, opt.K, sh.n, b, M)
					if err != nil {
						return nil, fmt.Errorf("%v %s %s case %d: %w", t, sh.name, kind, c, err)
					}
					ref, err := oracle.MulMatRefOn(dev, t, a, opt.K, sh.n, b, M)
					if err != nil {
						return nil, err
					}
					if ref.Center == nil {
						return nil, fmt.Errorf("%v on %s: no kernel bound", t, sh.name)
					}
					out, _ := ref.WithinBound(got)
					row.Outside += out
					for i, g := range got {
						row.Outputs++
						e := math.Abs(float64(g) - ref.Center[i])
						if e == 0 {
							row.Exact++
						} else {
							ratios = append(ratios, ref.Bound[i]/e)
						}
						if ref.Value[i] != 0 {
							rel = append(rel, ref.Bound[i]/math.Abs(ref.Value[i]))
						}
					}
					if kind == "realistic" {
						old, err := oracle.MulMatRef(t, a, opt.K, sh.n, b, M)
						if err != nil {
							return nil, err
						}
						for i := range got {
							oldRel += old.Bound[i] / math.Abs(old.Value[i])
						}
					}
				}
				slices.Sort(ratios)
				slices.Sort(rel)
				row.Median, row.Worst = math.NaN(), math.NaN() // every output equal to the center
				if len(ratios) > 0 {
					row.Median, row.Worst = ratios[len(ratios)/2], ratios[0]
				}
				if len(rel) > 0 {
					row.RelBound = rel[len(rel)/2]
				}
				if kind == "realistic" {
					row.OldRelBound = oldRel / float64(row.Outputs)
				}
				rows = append(rows, row)
			}
			if opt.Progress != nil {
				opt.Progress(fmt.Sprintf("tightness %v %s done", t, sh.name))
			}
		}
	}
	return rows, nil
}

// Bug is a kernel bug the power study injects.
type Bug int

const (
	// BugDropBlock: one 32-value block of K skipped (its activations read as zero).
	BugDropBlock Bug = iota
	// BugScaleHalfULP: every weight block's binary16 scale d read half an ulp too large
	// (the mean of the outputs with d and with d one ulp up).
	BugScaleHalfULP
	// BugMinSign: the min (offset) term added with the wrong sign (dmin or m negated).
	BugMinSign
	// BugNeighbourBlock: one activation block read from its neighbour (block b+1 for b).
	BugNeighbourBlock
	// BugLostPartial: one stream-K partial of a split tile not added by the fixup.
	BugLostPartial
	// BugFixupTwice: the fixup of a split tile added twice.
	BugFixupTwice
	numBugs
)

// Bugs lists every injected bug.
func Bugs() []Bug {
	var b []Bug
	for i := Bug(0); i < numBugs; i++ {
		b = append(b, i)
	}
	return b
}

func (b Bug) String() string {
	return [...]string{"drop-block", "scale-half-ulp", "min-sign", "neighbour-block", "lost-partial", "fixup-twice"}[b]
}

// PowerRow is the power of the fp64 check against one bug on one type and path.
type PowerRow struct {
	Bug  Bug        `json:"bug"`
	Type quant.Type `json:"type"`
	Path string     `json:"path"`
	// Cases run (with the bug having an effect), Caught: cases with an output outside the
	// bound; Outputs / OutputsCaught the same per affected output.
	Cases         int `json:"cases"`
	Caught        int `json:"caught"`
	Outputs       int `json:"outputs"`
	OutputsCaught int `json:"outputs_caught"`
	// FalseAlarms counts outputs of the correct runs outside the bound (must be 0).
	FalseAlarms    int `json:"false_alarms"`
	CorrectOutputs int `json:"correct_outputs"`
}

// Power injects each bug into Cases generated realistic cases per type and path (the
// stream-K bugs on MMQ shapes whose tiles are split) and counts the cases the fp64 check
// (oracle.MulMatRefOn) catches; the correct runs count false alarms.
func Power(impl oracle.Impl, dev sim.Device, opt StudyOptions) ([]PowerRow, error) {
	opt.defaults()
	var rows []PowerRow
	for _, t := range opt.Types {
		for _, sh := range studyShapes(dev, t, opt.K) {
			for _, bug := range Bugs() {
				if !bugApplies(bug, t, sh.name) {
					continue
				}
				row := PowerRow{Bug: bug, Type: t, Path: sh.name}
				for c := 0; c < opt.Cases; c++ {
					seed := opt.Seed*1_000_003 + uint64(c)
					M := sh.ms[int(seed%uint64(len(sh.ms)))]
					if err := powerCase(impl, dev, t, opt.K, sh.n, M, seed, bug, &row); err != nil {
						return nil, fmt.Errorf("%v %s %v case %d: %w", t, sh.name, bug, c, err)
					}
				}
				rows = append(rows, row)
			}
			if opt.Progress != nil {
				opt.Progress(fmt.Sprintf("power %v %s done", t, sh.name))
			}
		}
	}
	return rows, nil
}

func bugApplies(b Bug, t quant.Type, path string) bool {
	switch b {
	case BugScaleHalfULP:
		return halfScaleOffsets(t) != nil
	case BugMinSign:
		return hasMin(t)
	case BugLostPartial, BugFixupTwice:
		return path != "mmvq"
	}
	return true
}

// hasMin reports whether t's blocks hold a min (m or dmin) the kernels add through the
// activation sums.
func hasMin(t quant.Type) bool {
	switch t {
	case quant.Q4_1, quant.Q5_1, quant.Q2_K, quant.Q4_K, quant.Q5_K:
		return true
	}
	return false
}

func powerCase(impl oracle.Impl, dev sim.Device, t quant.Type, K, N, M int, seed uint64, bug Bug, row *PowerRow) error {
	a, b, err := studyData("realistic", t, K, N, M, seed)
	if err != nil {
		return err
	}
	r := rand.New(rand.NewPCG(seed, uint64(bug)+1))
	got, err := impl.MulMat(dev, t, a, K, N, b, M)
	if err != nil {
		return err
	}
	ref, err := oracle.MulMatRefOn(dev, t, a, K, N, b, M)
	if err != nil {
		return err
	}
	out, _ := ref.WithinBound(got)
	row.FalseAlarms += out
	row.CorrectOutputs += len(got)

	bad := slices.Clone(got)
	affected := make([]bool, len(got)) // outputs the bug changes
	for i := range affected {
		affected[i] = true
	}
	switch bug {
	case BugDropBlock, BugNeighbourBlock:
		blk := r.IntN(K/32 - 1)
		b2 := slices.Clone(b)
		for j := 0; j < M; j++ {
			col := b2[j*K : (j+1)*K]
			if bug == BugDropBlock {
				clear(col[32*blk : 32*blk+32])
			} else {
				copy(col[32*blk:32*blk+32], col[32*blk+32:32*blk+64])
			}
		}
		if bad, err = impl.MulMat(dev, t, a, K, N, b2, M); err != nil {
			return err
		}
	case BugScaleHalfULP, BugMinSign:
		a2 := slices.Clone(a)
		offs := halfScaleOffsets(t)
		bs := t.TypeSize()
		for blk := 0; blk < len(a2)/bs; blk++ {
			p := a2[blk*bs:]
			if bug == BugScaleHalfULP {
				h := le16(p[offs[0]:])
				if h&0x7fff != 0 && h&0x7c00 != 0x7c00 && h&0x7fff != 0x7bff {
					put16(p[offs[0]:], h+1) // one ulp away from zero
				}
			} else {
				p[offs[1]+1] ^= 0x80 // the sign of m / dmin
			}
		}
		up, err := impl.MulMat(dev, t, a2, K, N, b, M)
		if err != nil {
			return err
		}
		for i := range bad {
			if bug == BugScaleHalfULP {
				bad[i] = float32((float64(got[i]) + float64(up[i])) / 2)
			} else {
				bad[i] = up[i]
			}
		}
	case BugLostPartial, BugFixupTwice:
		tiles, tileI, tileJ, qk, err := mmqTiles(dev, t, K, N, M)
		if err != nil {
			return err
		}
		var split []streamk.TilePlan
		for _, tp := range tiles {
			if tp.Fixup != nil && len(tp.Fixup.Adds) > 0 {
				split = append(split, tp)
			}
		}
		if len(split) == 0 {
			return nil // no split tile in this shape: the bug has nothing to act on
		}
		tp := split[r.IntN(len(split))]
		// The k range whose partial the bug loses (or adds again): one fixup add, or all.
		var lo, hi int
		if bug == BugLostPartial {
			add := tp.Fixup.Adds[r.IntN(len(tp.Fixup.Adds))]
			for _, s := range tp.Segments {
				if s.Block == add {
					lo, hi = s.KB0Start*qk, s.KB0Stop*qk
				}
			}
		} else {
			lo, hi = 0, K
			for _, s := range tp.Segments {
				if s.Block == tp.End {
					hi = s.KB0Start * qk
				}
			}
		}
		// The partial: the same launch on activations zeroed outside [lo, hi) (whole
		// 128-value quantization blocks: the ranges are whole iterations).
		b2 := make([]float32, len(b))
		for j := 0; j < M; j++ {
			copy(b2[j*K+lo:j*K+min(hi, K)], b[j*K+lo:j*K+min(hi, K)])
		}
		part, err := impl.MulMat(dev, t, a, K, N, b2, M)
		if err != nil {
			return err
		}
		for i := range affected {
			row, col := i%N, i/N
			affected[i] = row/tileI == tp.Tile.It && col/tileJ == tp.Tile.Jt
			if !affected[i] {
				continue
			}
			if bug == BugLostPartial {
				bad[i] = got[i] - part[i]
			} else {
				bad[i] = got[i] + part[i]
			}
		}
	}
	caught := false
	c := ref.Value
	if ref.Center != nil {
		c = ref.Center
	}
	for i := range bad {
		if !affected[i] {
			continue
		}
		row.Outputs++
		if d := math.Abs(float64(bad[i]) - c[i]); !(d <= ref.Bound[i]) {
			row.OutputsCaught++
			caught = true
		}
	}
	row.Cases++
	if caught {
		row.Caught++
	}
	return nil
}

// mmqTiles returns the stream-K tile plans of a MUL_MAT on MMQ (tiling.MakeMMQPlan and
// streamk.Plan, as the kernel runs them), the tile size and the weight block size.
func mmqTiles(dev sim.Device, t quant.Type, K, N, M int) ([]streamk.TilePlan, int, int, int, error) {
	mp, err := tiling.MakeMMQPlan(&dev, t, tiling.Shape{K: int64(K), N: int64(N), M: int64(M)})
	if err != nil {
		return nil, 0, 0, 0, err
	}
	part, err := streamk.Plan(streamk.Params{
		NSM: dev.SMCount, NVIDIA: true, StreamK: mp.Config.StreamK,
		NTilesX: mp.NTX, NTilesY: mp.NTY, NChannels: mp.NTZW, NSamples: 1,
		BlocksPerTile: mp.BlocksPerNe00, BlocksPerIter: mp.BlocksPerIter, J: mp.Config.J,
	})
	if err != nil {
		return nil, 0, 0, 0, err
	}
	return part.Tiles(), mp.Config.I, mp.Config.J, t.BlockSize(), nil
}

// FalseAlarmReport counts correct runs checked against the kernel bound.
type FalseAlarmReport struct {
	Cases   int `json:"cases"`
	Outputs int `json:"outputs"`
	// Outside counts outputs of correct runs outside the bound (must be 0); First
	// describes the first such case.
	Outside int    `json:"outside"`
	First   string `json:"first,omitempty"`
	// PerPath counts the cases per kernel path; Skipped the drawn cases the kernel bound
	// or the implementation does not model (not run).
	PerPath map[string]int `json:"per_path"`
	Skipped int            `json:"skipped"`
}

// FalseAlarms runs n generated correct cases (type from opt.Types, data kind from
// DataKinds, K a multiple of 256 up to opt.K, 1..16 rows, 1..8 columns: MMVQ on most
// devices, and one case in eight with 9..16 columns and 128 rows where that is MMQ) and
// checks every output against oracle.MulMatRefOn. Case c uses seed opt.Seed + c, so
// disjoint seed ranges split a run (shards).
func FalseAlarms(impl oracle.Impl, dev sim.Device, n int, opt StudyOptions) (FalseAlarmReport, error) {
	if opt.K == 0 {
		opt.K = 1024
	}
	opt.defaults()
	rep := FalseAlarmReport{PerPath: map[string]int{}}
	for c := 0; c < n; c++ {
		seed := opt.Seed + uint64(c)
		r := rand.New(rand.NewPCG(seed, 0x6661_6c73_65)) // "false"
		t := opt.Types[r.IntN(len(opt.Types))]
		K := 256 * (1 + r.IntN(opt.K/256))
		N, M := 1+r.IntN(16), 1+r.IntN(8)
		if r.IntN(8) == 0 && !opt.MMVQOnly {
			N, M = 128, 9+r.IntN(8)
		}
		kind := DataKinds[r.IntN(len(DataKinds))]
		a, b, err := studyData(kind, t, K, N, M, seed)
		if err != nil {
			return rep, err
		}
		if oracle.KernelPath(dev, t, K, N, M) == "" {
			rep.Skipped++ // a dispatch the kernel bound does not model (cuBLAS, native FP4)
			continue
		}
		got, err := impl.MulMat(dev, t, a, K, N, b, M)
		if errors.Is(err, oracle.ErrUnsupported) {
			rep.Skipped++
			continue
		}
		if err != nil {
			return rep, fmt.Errorf("case %d (%v K=%d N=%d M=%d %s): %w", c, t, K, N, M, kind, err)
		}
		ref, err := oracle.MulMatRefOn(dev, t, a, K, N, b, M)
		if err != nil {
			return rep, err
		}
		rep.Cases++
		rep.Outputs += len(got)
		rep.PerPath[oracle.KernelPath(dev, t, K, N, M)]++
		if out, first := ref.WithinBound(got); out > 0 {
			if rep.Outside == 0 {
				rep.First = fmt.Sprintf("seed %d: %v K=%d N=%d M=%d %s: output %d = %v, center %v, bound %v",
					seed, t, K, N, M, kind, first, got[first], ref.Center[first], ref.Bound[first])
			}
			rep.Outside += out
		}
		if opt.Progress != nil && (c+1)%10000 == 0 {
			opt.Progress(fmt.Sprintf("false alarms: %d cases, %d outputs, %d outside", rep.Cases, rep.Outputs, rep.Outside))
		}
	}
	return rep, nil
}
