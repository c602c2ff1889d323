package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/ggsim/ggsim/gguf/golden"
	"github.com/ggsim/ggsim/oracle"
	"github.com/ggsim/ggsim/oracle/oracletest"
	"github.com/ggsim/ggsim/quant"
	"github.com/ggsim/ggsim/sim"
	"github.com/ggsim/ggsim/sim/mmq"
	"github.com/ggsim/ggsim/sim/mmvq"
	"github.com/ggsim/ggsim/sim/q8"
	"github.com/ggsim/ggsim/tiling"
)

const traceHelp = `usage: simrun trace --type T --shape K,N,M --row R --col C [--seed S] [--device NAME] [--blocks N] [--json]
       simrun trace --golden FILE.gguf --case I --row R --col C [--blocks N] [--json]

trace shows how the bits of one output dst[C*N+R] of a MUL_MAT are made, step by step,
as ggml's kernel makes them on the device (decimal and, in brackets, the float32 bits):

  mul_mat_vec_q  the activation column's q8_1 blocks (d, s and the 32 int8 values);
                 every lane's vec_dot calls (x block kbx, int offset iqs, the thread's
                 running sum before and after: the dp4a sums and the scale FMAs of the
                 type's vec_dot, FMA-SITES.md); warp 0's adds of the other warps' sums
                 from shared memory; the 5 steps of the xor butterfly for every lane;
                 the store
  mul_mat_q      the tile and the K range of each CUDA block that works on it (stream-K);
                 every iteration of each range: the exact int32 dots of 16 values each
                 and the scale arithmetic's running sum; the partial sums; the fixup's
                 additions in its order

Last it runs the fast simulator on the whole shape and says whether it gives the same
bits (and, for a golden case, whether the GPU did).

flags:
  --type T         ggml type of the generated weights: {{types}}  [q4_K]
  --shape K,N,M    K values per row, N rows, M columns  [256,8,1]
  --row R, --col C the output (0-based: 0 <= R < N, 0 <= C < M)  [0, 0]
  --seed S         seed of the generated weights and activations (as simrun run)  [1]
  --device NAME    a device of the catalog: {{devices}}  [H200]
  --golden FILE    take the weights, activations and device from a golden file's case
  --case I         the mul_mat case of --golden (simrun verify FILE lists them)
  --blocks N       show at most N q8_1 blocks of the column (0: all)  [2]
  --json           one JSON object (docs/json.md); every value is {"value", "bits"}

example:
  simrun trace --type q4_0 --shape 256,8,1 --row 3 --col 0
  simrun trace --type q4_K --shape 1024,256,20 --row 5 --col 7
  simrun trace --golden testdata/golden/ggml-h200-dev-mmq.slice.gguf --case 0 --row 1 --col 2

Exit status: 0 when the traced bits equal the fast simulator's (and the GPU's for a golden
case), 1 when they do not or ggml runs a kernel ggsim does not simulate, 2 for a usage
error, 3 when the golden file is missing or unreadable.
`

var traceCLI = cli{name: "trace", help: func() string {
	var types []string
	for t := quant.Type(0); t < quant.TypeCount; t++ {
		if t.Valid() && tiling.SupportsMulMat(t) && t.BlockSize() > 1 {
			types = append(types, t.String())
		}
	}
	return strings.NewReplacer("{{types}}", wrap(types, 56), "{{devices}}", wrap(deviceNames(), 35)).Replace(traceHelp)
}}

// f32v is a float32 as trace prints it in JSON: {"value": number or null, "bits": hex}.
type f32v float32

func (v f32v) MarshalJSON() ([]byte, error) {
	var val *float64
	if x := float64(v); !math.IsNaN(x) && !math.IsInf(x, 0) {
		val = &x
	}
	return json.Marshal(struct {
		Value *float64 `json:"value"`
		Bits  string   `json:"bits"`
	}{val, fmt.Sprintf("0x%08x", math.Float32bits(float32(v)))})
}

func (v f32v) String() string {
	return fmt.Sprintf("%.9g [0x%08x]", float32(v), math.Float32bits(float32(v)))
}

type q8BlockJSON struct {
	Index int    `json:"index"`
	D     f32v   `json:"d"`
	S     f32v   `json:"s"`
	Qs    []int8 `json:"qs"`
}

type vecDotJSON struct {
	Warp int  `json:"warp"`
	Lane int  `json:"lane"`
	KBX  int  `json:"kbx"`
	Iqs  int  `json:"iqs"`
	In   f32v `json:"in"`
	Out  f32v `json:"out"`
}

type addJSON struct {
	Step   int  `json:"step"` // the warp added (cross-warp) or the xor offset (butterfly)
	Lane   int  `json:"lane"`
	In     f32v `json:"in"`
	Addend f32v `json:"addend"`
	Out    f32v `json:"out"`
}

type mmvqTraceJSON struct {
	Plan      string        `json:"plan"`
	BlockX    int           `json:"block_x"`
	Q8Blocks  []q8BlockJSON `json:"q8_1_blocks"`
	Q8Total   int           `json:"q8_1_total"`
	VecDots   []vecDotJSON  `json:"vec_dots"`
	CrossWarp []addJSON     `json:"cross_warp"`
	Butterfly []addJSON     `json:"butterfly"`
	Store     f32v          `json:"store"`
}

type mmqStepJSON struct {
	Range int       `json:"range"`
	Block int       `json:"block"`
	KB0   int       `json:"kb0"`
	Dots  [16]int32 `json:"dots"`
	In    f32v      `json:"in"`
	Out   f32v      `json:"out"`
}

type mmqRangeJSON struct {
	Block   int  `json:"block"`
	Start   int  `json:"start"`
	Stop    int  `json:"stop"`
	Partial f32v `json:"partial"`
}

// fixupStepJSON is one addition of the fixup; block -1 is the final dst += sum.
type fixupStepJSON struct {
	Block  int  `json:"block"`
	In     f32v `json:"in"`
	Addend f32v `json:"addend"`
	Out    f32v `json:"out"`
}

type mmqTraceJSON struct {
	Plan   string          `json:"plan"`
	Tile   int             `json:"tile"`
	It     int             `json:"it"`
	Jt     int             `json:"jt"`
	I      int             `json:"i"`
	J      int             `json:"j"`
	Ranges []mmqRangeJSON  `json:"ranges"`
	Steps  []mmqStepJSON   `json:"steps"`
	Stored f32v            `json:"stored"`
	Fixup  []fixupStepJSON `json:"fixup,omitempty"`
}

// traceReport is simrun trace's result (--json: this).
type traceReport struct {
	Device    string         `json:"device"`
	Source    string         `json:"source"`
	Type      string         `json:"type"`
	K         int            `json:"k"`
	N         int            `json:"n"`
	M         int            `json:"m"`
	Row       int            `json:"row"`
	Col       int            `json:"col"`
	Kernel    string         `json:"kernel"`
	Reason    string         `json:"reason"`
	MMVQ      *mmvqTraceJSON `json:"mmvq,omitempty"`
	MMQ       *mmqTraceJSON  `json:"mmq,omitempty"`
	Value     f32v           `json:"value"`
	Fast      f32v           `json:"fast"`
	MatchFast bool           `json:"match_fast"`
	GPU       *f32v          `json:"gpu,omitempty"`
	MatchGPU  *bool          `json:"match_gpu,omitempty"`
	OK        bool           `json:"ok"`
}

// traceInput is the matmul trace runs.
type traceInput struct {
	dev     sim.Device
	typ     quant.Type
	w       []byte
	b       []float32
	K, N, M int
	source  string
	gpu     []float32 // the golden dst, nil for generated data
}

func cmdTrace(args []string, stdout, stderr io.Writer) int {
	c := traceCLI
	fl := flag.NewFlagSet("trace", flag.ContinueOnError)
	typName := fl.String("type", "q4_K", "")
	shape := fl.String("shape", "256,8,1", "")
	row := fl.Int("row", 0, "")
	col := fl.Int("col", 0, "")
	seed := fl.Uint64("seed", 1, "")
	devName := fl.String("device", "H200", "")
	goldenPath := fl.String("golden", "", "")
	caseIdx := fl.Int("case", -1, "")
	blocks := fl.Int("blocks", 2, "")
	asJSON := fl.Bool("json", false, "")
	if _, code, ok := c.parse(fl, args, stdout, stderr); !ok {
		return code
	}
	set := map[string]bool{}
	fl.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if *blocks < 0 {
		return c.usage(stderr, fmt.Errorf("--blocks %d: want >= 0", *blocks))
	}
	var in *traceInput
	if *goldenPath != "" {
		for _, f := range []string{"type", "shape", "seed", "device"} {
			if set[f] {
				return c.usage(stderr, fmt.Errorf("--%s is for generated data; the golden case gives it", f))
			}
		}
		if *caseIdx < 0 {
			return c.usage(stderr, errors.New("--golden needs --case I"))
		}
		var code int
		if in, code = traceGolden(c, *goldenPath, *caseIdx, stderr); in == nil {
			return code
		}
	} else {
		if set["case"] {
			return c.usage(stderr, errors.New("--case needs --golden FILE"))
		}
		dev, err := sim.Lookup(*devName)
		if err != nil {
			return c.usage(stderr, fmt.Errorf("--device: %w", err))
		}
		typ, err := quant.ParseType(*typName)
		if err != nil {
			return c.usage(stderr, fmt.Errorf("--type: %w", err))
		}
		v, err := parseInts(*shape, 3)
		if err != nil || v[0] <= 0 || v[1] <= 0 || v[2] <= 0 || v[0] > 1<<20 || v[1] > 1<<16 || v[2] > 1<<12 || v[0]*v[1] > 1<<26 {
			return c.usage(stderr, fmt.Errorf("--shape %q: want K,N,M with 0 < K <= 1048576, 0 < N <= 65536, 0 < M <= 4096, K*N <= 2^26", *shape))
		}
		in = &traceInput{dev: dev, typ: typ, K: int(v[0]), N: int(v[1]), M: int(v[2]), source: fmt.Sprintf("generated, seed %d", *seed)}
		if _, err := typ.RowSize(int64(in.K)); err != nil {
			return c.usage(stderr, fmt.Errorf("--shape: K=%d: %w", in.K, err))
		}
		if in.w, err = oracletest.RealisticWeights(typ, in.K, in.N, *seed); err != nil {
			return c.fail(stderr, exitFail, err)
		}
		in.b = oracletest.RealisticActivations(in.K, in.M, *seed)
	}
	if *row < 0 || *row >= in.N || *col < 0 || *col >= in.M {
		return c.usage(stderr, fmt.Errorf("--row %d --col %d: want 0 <= row < N=%d and 0 <= col < M=%d", *row, *col, in.N, in.M))
	}
	rep, err := trace(in, *row, *col, *blocks)
	if err != nil {
		return c.fail(stderr, exitFail, err)
	}
	code := exitOK
	if !rep.OK {
		code = exitFail
	}
	if *asJSON {
		return c.writeJSON(stdout, stderr, rep, code)
	}
	writeTraceText(stdout, rep)
	if !rep.OK {
		fmt.Fprintln(stderr, "simrun trace: the traced bits differ (see the last lines)")
	}
	return code
}

// traceGolden reads case i of a golden file; nil and the exit status on failure.
func traceGolden(c cli, path string, i int, stderr io.Writer) (*traceInput, int) {
	f, err := golden.Open(path)
	if err != nil {
		return nil, c.fail(stderr, exitInput, err)
	}
	defer f.Close()
	if i >= len(f.Cases) {
		return nil, c.usage(stderr, fmt.Errorf("--case %d: %s has %d cases", i, path, len(f.Cases)))
	}
	cs := &f.Cases[i]
	if cs.Err != nil {
		return nil, c.fail(stderr, exitInput, cs.Err)
	}
	if cs.Op != golden.OpMulMat {
		return nil, c.usage(stderr, fmt.Errorf("--case %d is %s: trace follows mul_mat cases", i, cs.Op))
	}
	dev, err := oracle.DeviceOf(f.Meta)
	if err != nil {
		return nil, c.fail(stderr, exitFail, err)
	}
	a, err := f.Tensor(cs.Src[0])
	if err != nil {
		return nil, c.fail(stderr, exitInput, err)
	}
	bt, err := f.Tensor(cs.Src[1])
	if err != nil {
		return nil, c.fail(stderr, exitInput, err)
	}
	b, err := bt.F32()
	if err != nil {
		return nil, c.fail(stderr, exitInput, err)
	}
	dt, err := f.Tensor(cs.Dst)
	if err != nil {
		return nil, c.fail(stderr, exitInput, err)
	}
	dst, err := dt.F32()
	if err != nil {
		return nil, c.fail(stderr, exitInput, err)
	}
	return &traceInput{dev: dev, typ: a.Type, w: a.Data, b: b, K: int(cs.Shape.K), N: int(cs.Shape.N), M: int(cs.Shape.M),
		source: fmt.Sprintf("%s case %d", path, i), gpu: dst}, exitOK
}

// trace runs the step-through of output (row, col) and the fast simulator.
func trace(in *traceInput, row, col, maxBlocks int) (*traceReport, error) {
	s := tiling.Shape{K: int64(in.K), N: int64(in.N), M: int64(in.M)}
	d, err := tiling.Decide(in.dev, in.typ, s)
	if err != nil {
		return nil, err
	}
	rep := &traceReport{Device: in.dev.Name, Source: in.source, Type: in.typ.String(), K: in.K, N: in.N, M: in.M,
		Row: row, Col: col, Kernel: d.Kernel.String(), Reason: d.Reason}
	var fast []float32
	switch d.Kernel {
	case tiling.KernelMMVQ:
		if rep.MMVQ, err = traceMMVQ(in, row, col, maxBlocks); err != nil {
			return nil, err
		}
		rep.Value = rep.MMVQ.Store
		fast, err = mmvq.MulMat(in.dev, in.typ, in.w, in.K, in.N, in.b, in.M)
	case tiling.KernelMMQ:
		var p *mmq.Plan
		if p, err = mmq.MakePlan(in.dev, in.typ, in.K, in.N, in.M); err != nil {
			return nil, err
		}
		var tr *mmq.OutputTrace
		if tr, err = mmq.TraceOutput(in.dev, in.typ, in.w, in.K, in.N, in.b, in.M, p, row, col); err != nil {
			return nil, err
		}
		rep.MMQ = mmqTrace(p, tr)
		rep.Value = f32v(tr.Value)
		fast, err = mmq.MulMat(in.dev, in.typ, in.w, in.K, in.N, in.b, in.M, p)
	default:
		return nil, fmt.Errorf("ggml runs %s for this shape, which trace does not follow (mul_mat_vec_q and mul_mat_q only): %w", d.Kernel, errors.ErrUnsupported)
	}
	if err != nil {
		return nil, err
	}
	idx := col*in.N + row
	rep.Fast = f32v(fast[idx])
	rep.MatchFast = math.Float32bits(fast[idx]) == math.Float32bits(float32(rep.Value))
	rep.OK = rep.MatchFast
	if in.gpu != nil {
		g := f32v(in.gpu[idx])
		m := math.Float32bits(in.gpu[idx]) == math.Float32bits(float32(rep.Value))
		rep.GPU, rep.MatchGPU = &g, &m
		rep.OK = rep.OK && m
	}
	return rep, nil
}

// traceMMVQ runs mul_mat_vec_q lane by lane on the CUDA block of output row and keeps the
// steps of (row, col). An output depends only on its row, its column and the launch
// (which N does not change), so the block's rows alone give its bits.
func traceMMVQ(in *traceInput, row, col, maxBlocks int) (*mmvqTraceJSON, error) {
	p, err := tiling.MakeMMVQPlan(&in.dev, in.typ, in.K, in.M, false)
	if err != nil {
		return nil, err
	}
	rpb := p.RowsPerBlock
	row0 := row / rpb * rpb
	nrows := min(rpb, in.N-row0)
	rs, err := in.typ.RowSize(int64(in.K))
	if err != nil {
		return nil, err
	}
	sub := in.w[int64(row0)*rs : int64(row0+nrows)*rs]
	t := &mmvqTraceJSON{Plan: p.String(), BlockX: row / rpb}
	watch := func(e mmvq.Event) {
		if e.Row != row-row0 || e.Col != col {
			return
		}
		switch e.Kind {
		case mmvq.EvVecDot:
			t.VecDots = append(t.VecDots, vecDotJSON{Warp: e.Warp, Lane: e.Lane, KBX: e.Block, Iqs: e.Iqs, In: f32v(e.In), Out: f32v(e.Out)})
		case mmvq.EvCrossWarp:
			t.CrossWarp = append(t.CrossWarp, addJSON{Step: e.Offset, Lane: e.Lane, In: f32v(e.In), Addend: f32v(e.Addend), Out: f32v(e.Out)})
		case mmvq.EvShuffle:
			t.Butterfly = append(t.Butterfly, addJSON{Step: e.Offset, Lane: e.Lane, In: f32v(e.In), Addend: f32v(e.Addend), Out: f32v(e.Out)})
		case mmvq.EvStore:
			t.Store = f32v(e.Out)
		}
	}
	if _, err := mmvq.MulMatOpts(in.dev, in.typ, sub, in.K, nrows, in.b, in.M, &mmvq.Options{Trace: true, Watch: watch, Workers: 1}); err != nil {
		return nil, err
	}
	yq, err := q8.QuantizeQ8_1(in.b, in.K, in.M)
	if err != nil {
		return nil, err
	}
	per := q8.PaddedLen(in.K) / 32
	colBlocks := yq[col*per : col*per+in.K/32]
	t.Q8Total = len(colBlocks)
	for i, blk := range colBlocks {
		if maxBlocks > 0 && i >= maxBlocks {
			break
		}
		t.Q8Blocks = append(t.Q8Blocks, q8BlockJSON{Index: i, D: f32v(sim.H2F(blk.D)), S: f32v(sim.H2F(blk.S)), Qs: blk.Qs[:]})
	}
	return t, nil
}

func mmqTrace(p *mmq.Plan, tr *mmq.OutputTrace) *mmqTraceJSON {
	t := &mmqTraceJSON{Plan: p.Launch.String(), Tile: tr.Tile, It: tr.It, Jt: tr.Jt, I: tr.I, J: tr.J, Stored: f32v(tr.Stored)}
	for r, rg := range tr.Ranges {
		t.Ranges = append(t.Ranges, mmqRangeJSON{Block: rg.Block, Start: rg.Start, Stop: rg.Stop, Partial: f32v(tr.Partials[r])})
	}
	for _, s := range tr.Steps {
		t.Steps = append(t.Steps, mmqStepJSON{Range: s.Range, Block: s.Block, KB0: s.KB0, Dots: s.Dots, In: f32v(s.In), Out: f32v(s.Out)})
	}
	for _, f := range tr.Fixup {
		t.Fixup = append(t.Fixup, fixupStepJSON{Block: f.Block, In: f32v(f.In), Addend: f32v(f.Addend), Out: f32v(f.Out)})
	}
	return t
}

func writeTraceText(w io.Writer, r *traceReport) {
	fmt.Fprintf(w, "trace: dst[%d] = row %d . column %d of MUL_MAT %s K=%d N=%d M=%d on %s (%s)\n",
		r.Col*r.N+r.Row, r.Row, r.Col, r.Type, r.K, r.N, r.M, r.Device, r.Source)
	fmt.Fprintf(w, "kernel: %s: %s\n", r.Kernel, r.Reason)
	if t := r.MMVQ; t != nil {
		fmt.Fprintf(w, "launch: %s; the row is in block.x %d\n", t.Plan, t.BlockX)
		fmt.Fprintf(w, "\nactivations: column %d quantized by quantize_q8_1 (%d blocks of 32):\n", r.Col, t.Q8Total)
		for _, b := range t.Q8Blocks {
			fmt.Fprintf(w, "  block %d: d %v, s %v\n    qs %v\n", b.Index, b.D, b.S, b.Qs)
		}
		if len(t.Q8Blocks) < t.Q8Total {
			fmt.Fprintf(w, "  ... %d more (--blocks 0 shows all)\n", t.Q8Total-len(t.Q8Blocks))
		}
		fmt.Fprintf(w, "\nvec_dot calls (each thread's running sum: tmp = vec_dot(x block kbx, int offset iqs) + tmp):\n")
		for _, v := range t.VecDots {
			fmt.Fprintf(w, "  warp %d lane %2d kbx %4d iqs %2d: %v -> %v\n", v.Warp, v.Lane, v.KBX, v.Iqs, v.In, v.Out)
		}
		if len(t.CrossWarp) > 0 {
			fmt.Fprintf(w, "\ncross-warp adds (warp 0's lanes add the other warps' sums from shared memory, in warp order):\n")
			for _, a := range t.CrossWarp {
				fmt.Fprintf(w, "  lane %2d + warp %d: %v + %v = %v\n", a.Lane, a.Step, a.In, a.Addend, a.Out)
			}
		}
		fmt.Fprintf(w, "\nbutterfly (warp_reduce_sum: v += __shfl_xor_sync(v, offset)):\n")
		for _, a := range t.Butterfly {
			fmt.Fprintf(w, "  xor %2d lane %2d: %v + %v = %v\n", a.Step, a.Lane, a.In, a.Addend, a.Out)
		}
		fmt.Fprintf(w, "\nstore: %v\n", t.Store)
	}
	if t := r.MMQ; t != nil {
		fmt.Fprintf(w, "launch: %s\n", t.Plan)
		fmt.Fprintf(w, "tile %d (row tile %d, column tile %d; %d x %d), K ranges in weight blocks:\n", t.Tile, t.It, t.Jt, t.I, t.J)
		for i, rg := range t.Ranges {
			what := "to its fixup slot"
			if i == len(t.Ranges)-1 {
				what = "stored to dst (the end segment)"
			}
			fmt.Fprintf(w, "  range %d: CUDA block %d, blocks [%d, %d): partial %v, %s\n", i, rg.Block, rg.Start, rg.Stop, rg.Partial, what)
		}
		fmt.Fprintf(w, "\niterations (exact int32 dots of 16 values each, then the type's scale arithmetic: sum -> sum):\n")
		for _, s := range t.Steps {
			fmt.Fprintf(w, "  range %d block %d kb0 %4d: dots %v\n      %v -> %v\n", s.Range, s.Block, s.KB0, s.Dots, s.In, s.Out)
		}
		fmt.Fprintf(w, "\nmul_mat_q stores %v\n", t.Stored)
		if len(t.Fixup) > 0 {
			fmt.Fprintln(w, "fixup (mul_mat_q_stream_k_fixup: sum = 0.0f; sum += each block's partial; dst += sum):")
			for _, f := range t.Fixup {
				if f.Block < 0 {
					fmt.Fprintf(w, "  dst %v + sum %v = %v\n", f.In, f.Addend, f.Out)
				} else {
					fmt.Fprintf(w, "  sum %v + block %d's %v = %v\n", f.In, f.Block, f.Addend, f.Out)
				}
			}
		}
	}
	fmt.Fprintf(w, "\nvalue: %v\n", r.Value)
	fmt.Fprintf(w, "fast simulator: %v (%s)\n", r.Fast, map[bool]string{true: "same bits", false: "DIFFERENT BITS"}[r.MatchFast])
	if r.GPU != nil {
		fmt.Fprintf(w, "GPU (golden): %v (%s)\n", *r.GPU, map[bool]string{true: "same bits", false: "DIFFERENT BITS"}[*r.MatchGPU])
	}
}
