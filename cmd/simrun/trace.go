package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/ggsim/ggsim/gguf/golden"
	"github.com/ggsim/ggsim/moe"
	"github.com/ggsim/ggsim/oracle"
	"github.com/ggsim/ggsim/oracle/oracletest"
	"github.com/ggsim/ggsim/quant"
	"github.com/ggsim/ggsim/sim"
	"github.com/ggsim/ggsim/sim/glu"
	"github.com/ggsim/ggsim/sim/mmq"
	"github.com/ggsim/ggsim/sim/mmvq"
	"github.com/ggsim/ggsim/sim/q8"
	"github.com/ggsim/ggsim/tiling"
)

const traceHelp = `usage: simrun trace --type T --shape K,N,M --row R --col C [--seed S] [--device NAME]
                    [--experts E,U [--routing R | --ids I,I,...]] [--blocks N] [--steps N] [--json]
                    [--glu swiglu|geglu|swiglu_oai [--fusion=false] [--alpha A --limit L]]
       simrun trace --golden FILE.gguf --case I --row R --col C [--blocks N] [--steps N] [--json]

trace shows how the bits of one output dst[C*N+R] of a MUL_MAT (or MUL_MAT_ID) are made,
step by step, as ggml's kernel makes them on the device (decimal and, in brackets, the
float32 bits):

  mul_mat_vec_q  the activation column's q8_1 blocks (d, s and the 32 int8 values);
                 every lane's vec_dot calls (x block kbx, int offset iqs, the thread's
                 running sum before and after) and, for the first --steps lanes, each
                 call's steps inside: every dp4a with its x and y ints and int32 result,
                 the integer scale steps, and every float operation (FMUL, FFMA, FADD in
                 the order of the type's SASS, FMA-SITES.md) with its operands; warp 0's
                 adds of the other warps' sums from shared memory; the 5 steps of the xor
                 butterfly for every lane; the store
  mul_mat_q      the tile and the K range of each CUDA block that works on it (stream-K);
                 every iteration of each range: the exact int32 dots of 16 values each
                 and the scale arithmetic's running sum, and for the first --steps
                 iterations every scale step inside (int adds and products, i2f, FMUL,
                 FFMA in the kernel's order); the partial sums; the fixup's
                 additions in its order

With --experts (or a golden mul_mat_id case), the output is one of MUL_MAT_ID's (M tokens,
U expert slots each; dst has M*U columns, column C = token C/U, slot C%U, computed by the
expert ids[C]): trace says which expert, token and slot, and follows the kernel ggml
dispatches: mul_mat_vec_q with ids (1 token), mul_mat_vec_q_moe (up to 8 tokens) or
mul_mat_q's MUL_MAT_ID mode (the tokens sorted by expert: the output's compact column
and its expert's tiles).

With --glu (or a golden mul_mat_glu or mul_mat_id_glu case), the output is one of
GLU(gate, up) of the graph {MUL_MAT gate, MUL_MAT up, GLU}: trace says whether ggml fuses
it (tiling.FuseGLU: one column, or one token, of a quantized type; never with
--fusion=false, as GGML_CUDA_DISABLE_FUSION=1), traces the gate's output as above (in
the fused launch's mul_mat_vec_q, or the kernel the unfused matmul runs), the up's the
same way without steps inside the vec_dot calls, then the GLU epilogue instruction by
instruction: mul_mat_vec_q's fused epilogue (the 0.0f bias adds, then silu, gelu or
swiglu_oai with ggml's default alpha and limit) or unary.cu's kernel, the MUFU EX2, RCP
and TANH steps included; the end check is ggsim.MulMatGLU (MulMatIDGLU).

Last it runs the fast simulator on the whole shape and says whether it gives the same
bits (and, for a golden case, whether the GPU did); every step-through must end with the
lane's bits as well.

flags:
  --type T         ggml type of the generated weights: {{types}}  [q4_K]
  --shape K,N,M    K values per row, N rows, M columns (tokens with --experts)  [256,8,1]
  --row R, --col C the output (0-based: 0 <= R < N, 0 <= C < M, or < M*U with --experts)  [0, 0]
  --experts E,U    MUL_MAT_ID: E experts of N rows, U used per token
  --routing R      how tokens pick experts: uniform, hot, sparse, all-to-one  [uniform]
  --ids I,I,...    the expert ids instead of --routing: M*U integers, token after token
  --seed S         seed of the generated weights and activations (as simrun run)  [1]
  --device NAME    a device of the catalog: {{devices}}  [H200]
  --golden FILE    take the weights, activations and device from a golden file's case
  --case I         the mul_mat or mul_mat_id case of --golden (simrun verify FILE lists them)
  --blocks N       show at most N q8_1 blocks of the column (0: all)  [2]
  --steps N        show the steps inside the vec_dot calls of the first N lanes that
                   call vec_dot for the output (mul_mat_q: inside its first N
                   iterations; 0: none, -1: all)  [2]
  --glu OP         trace GLU(gate, up) with generated up weights (the next seed): swiglu,
                   geglu or swiglu_oai
  --fusion=false   run the GLU unfused, as with GGML_CUDA_DISABLE_FUSION=1  [true]
  --alpha A        swiglu_oai's alpha  [1.702]
  --limit L        swiglu_oai's limit  [7]
  --json           one JSON object (docs/json.md); every value is {"value", "bits"}

example:
  simrun trace --type q4_0 --shape 256,8,1 --row 3 --col 0
  simrun trace --type q4_K --shape 1024,256,20 --row 5 --col 7
  simrun trace --type iq2_xxs --shape 512,8,1 --row 3 --steps 1
  simrun trace --type q4_K --shape 512,16,3 --experts 8,2 --ids 0,5,5,1,7,0 --row 4 --col 3
  simrun trace --golden testdata/golden/ggml-h200-dev-mmq.slice.gguf --case 0 --row 1 --col 2
  simrun trace --type q4_K --shape 1024,64,1 --glu swiglu --row 5 --steps 0

Exit status: 0 when the traced bits equal the fast simulator's (and the GPU's for a golden
case), 1 when they do not or ggml runs a kernel trace does not follow, 2 for a usage
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
	// Steps is the step-through of the call (--steps lanes only).
	Steps []stepJSON `json:"steps,omitempty"`
}

// stepJSON is one sim.Step: an int result (dp4a, imul, iadd, idiv) in int, a float one
// in value.
type stepJSON struct {
	Op    string        `json:"op"`
	What  string        `json:"what"`
	Args  []stepArgJSON `json:"args"`
	Int   *int32        `json:"int,omitempty"`
	Value *f32v         `json:"value,omitempty"`
}

// stepArgJSON is one operand: the result of step ref, or an input named name.
type stepArgJSON struct {
	Ref   *int   `json:"ref,omitempty"`
	Name  string `json:"name,omitempty"`
	Int   *int32 `json:"int,omitempty"`
	Value *f32v  `json:"value,omitempty"`
}

// stepsJSON is a step-through (package sim's step model: vec_dot, mmq scale or GLU
// epilogue steps) as trace's JSON steps.
func stepsJSON(steps []sim.Step) []stepJSON {
	out := make([]stepJSON, len(steps))
	for i, s := range steps {
		j := stepJSON{Op: s.Op.String(), What: s.What, Args: make([]stepArgJSON, len(s.Args))}
		if s.Op.IntResult() {
			j.Int = &s.Int
		} else {
			v := f32v(s.Float)
			j.Value = &v
		}
		for k, a := range s.Args {
			aj := stepArgJSON{Name: a.Name}
			if a.Ref >= 0 {
				aj.Ref = &a.Ref
			}
			if s.Op.IntArgs() {
				aj.Int = &a.Int
			} else {
				v := f32v(a.Float)
				aj.Value = &v
			}
			j.Args[k] = aj
		}
		out[i] = j
	}
	return out
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
	// StepLanes is the number of lanes whose calls have steps, StepsMatch whether every
	// step-through ended with the bits of the lane-by-lane call.
	StepLanes  int  `json:"step_lanes"`
	StepsMatch bool `json:"steps_match"`
}

// traceIDJSON says which MUL_MAT_ID output is traced.
type traceIDJSON struct {
	Experts int    `json:"experts"`
	Used    int    `json:"used"`
	Routing string `json:"routing"`
	Rows    int    `json:"rows"` // B1: activation rows per token
	Token   int    `json:"token"`
	Slot    int    `json:"slot"`
	// ActRow is the activation row the output reads, token*rows + slot%rows.
	ActRow   int     `json:"activation_row"`
	Expert   int     `json:"expert"`
	TokenIDs []int32 `json:"token_ids"`
	// CompactColumn is the output's column in mul_mat_q's expert-sorted order (mmq only).
	CompactColumn *int `json:"compact_column,omitempty"`
}

type mmqStepJSON struct {
	Range int       `json:"range"`
	Block int       `json:"block"`
	KB0   int       `json:"kb0"`
	Dots  [16]int32 `json:"dots"`
	In    f32v      `json:"in"`
	Out   f32v      `json:"out"`
	// Scale is the iteration's scale arithmetic step by step (the first --steps
	// iterations).
	Scale []stepJSON `json:"scale,omitempty"`
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
	// ScaleIters is the number of iterations with scale steps, ScaleMatch whether each
	// ended with the iteration's bits.
	ScaleIters int  `json:"scale_iterations"`
	ScaleMatch bool `json:"scale_match"`
}

// traceReport is simrun trace's result (--json: this).
type traceReport struct {
	Device    string         `json:"device"`
	Source    string         `json:"source"`
	Op        string         `json:"op"`
	Type      string         `json:"type"`
	K         int            `json:"k"`
	N         int            `json:"n"`
	M         int            `json:"m"`
	Row       int            `json:"row"`
	Col       int            `json:"col"`
	Kernel    string         `json:"kernel"`
	Reason    string         `json:"reason"`
	ID        *traceIDJSON   `json:"mul_mat_id,omitempty"`
	MMVQ      *mmvqTraceJSON `json:"mmvq,omitempty"`
	MMQ       *mmqTraceJSON  `json:"mmq,omitempty"`
	GLU       *gluTraceJSON  `json:"glu,omitempty"`
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
	// MUL_MAT_ID (E > 0): w holds E experts of N rows, b M tokens of B1 activation rows
	// (slot u reads row u % B1), ids M tokens of U expert ids.
	E, U, B1 int
	ids      []int32
	routing  string
	// GLU (glu != nil): w is the gate, up the up weights of the same type and shape,
	// fusion whether ggml may fuse the graph (false: GGML_CUDA_DISABLE_FUSION=1).
	glu    *glu.Spec
	up     []byte
	fusion bool
	// forced, when set, is the kernel trace follows instead of tiling.Decide's (the
	// fused GLU's mul_mat_vec_q).
	forced *tiling.Decision
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
	steps := fl.Int("steps", 2, "")
	experts := fl.String("experts", "", "")
	routing := fl.String("routing", "uniform", "")
	idsFlag := fl.String("ids", "", "")
	asJSON := fl.Bool("json", false, "")
	gluFlag := fl.String("glu", "", "")
	fusion := fl.Bool("fusion", true, "")
	alpha := fl.Float64("alpha", 1.702, "")
	limit := fl.Float64("limit", 7, "")
	if _, code, ok := c.parse(fl, args, stdout, stderr); !ok {
		return code
	}
	set := map[string]bool{}
	fl.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if *blocks < 0 {
		return c.usage(stderr, fmt.Errorf("--blocks %d: want >= 0", *blocks))
	}
	if *steps < -1 {
		return c.usage(stderr, fmt.Errorf("--steps %d: want a lane count, 0 (none) or -1 (all)", *steps))
	}
	var in *traceInput
	if *goldenPath != "" {
		for _, f := range []string{"type", "shape", "seed", "device", "experts", "routing", "ids", "glu", "fusion", "alpha", "limit"} {
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
		if *experts != "" {
			in.B1 = 1
			if in.E, in.U, in.ids, in.routing, err = parseExperts(*experts, *routing, *idsFlag, set, *seed, in.M); err != nil {
				return c.usage(stderr, err)
			}
			if int64(in.K)*int64(in.N)*int64(in.E) > 1<<26 {
				return c.usage(stderr, fmt.Errorf("--shape %q --experts %q: K*N*E above 2^26 weights is too large to generate", *shape, *experts))
			}
		} else if set["routing"] || set["ids"] {
			return c.usage(stderr, errors.New("--routing and --ids need --experts E,U"))
		}
		if in.w, err = oracletest.RealisticWeights(typ, in.K, in.N*max(in.E, 1), *seed); err != nil {
			return c.fail(stderr, exitFail, err)
		}
		if *gluFlag != "" {
			g := glu.Spec{Op: glu.Op(*gluFlag)}
			if g.Op == glu.SwiGLUOAI {
				g.Alpha, g.Limit = float32(*alpha), float32(*limit)
			} else if set["alpha"] || set["limit"] {
				return c.usage(stderr, fmt.Errorf("--alpha and --limit are swiglu_oai's, not %s's", g.Op))
			}
			if err := glu.Check(g); err != nil {
				return c.usage(stderr, fmt.Errorf("--glu: %w", err))
			}
			in.glu, in.fusion = &g, *fusion
			// the up weights: the gate's profile, the next seed
			if in.up, err = oracletest.RealisticWeights(typ, in.K, in.N*max(in.E, 1), *seed+1); err != nil {
				return c.fail(stderr, exitFail, err)
			}
		} else if set["fusion"] || set["alpha"] || set["limit"] {
			return c.usage(stderr, errors.New("--fusion, --alpha and --limit need --glu"))
		}
		in.b = oracletest.RealisticActivations(in.K, in.M, *seed)
	}
	if cols := in.M * max(in.U, 1); *row < 0 || *row >= in.N || *col < 0 || *col >= cols {
		what := fmt.Sprintf("M=%d", in.M)
		if in.E > 0 {
			what = fmt.Sprintf("M*U=%d", cols)
		}
		return c.usage(stderr, fmt.Errorf("--row %d --col %d: want 0 <= row < N=%d and 0 <= col < %s", *row, *col, in.N, what))
	}
	var rep *traceReport
	var err error
	if in.glu != nil {
		rep, err = traceGLU(in, *row, *col, *blocks, *steps)
	} else {
		rep, err = trace(in, *row, *col, *blocks, *steps)
	}
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
	if rep.GLU != nil {
		writeGLUText(stdout, rep)
	} else {
		writeTraceText(stdout, rep)
	}
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
	if cs.Op == golden.OpQuantize || !cs.Op.Known() {
		return nil, c.usage(stderr, fmt.Errorf("--case %d is %s: trace follows mul_mat, mul_mat_id, mul_mat_glu and mul_mat_id_glu cases", i, cs.Op))
	}
	if cs.Op.IsID() {
		if err := f.CheckIDs(cs); err != nil {
			return nil, c.fail(stderr, exitInput, err)
		}
	}
	dev, err := oracle.DeviceOf(f.Meta)
	if err != nil {
		return nil, c.fail(stderr, exitFail, err)
	}
	a, err := f.Tensor(cs.Src[0])
	if err != nil {
		return nil, c.fail(stderr, exitInput, err)
	}
	nw := 1 // weight tensors before b: gate and up for a GLU
	if cs.Op.IsGLU() {
		nw = 2
	}
	bt, err := f.Tensor(cs.Src[nw])
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
	in := &traceInput{dev: dev, typ: a.Type, w: a.Data, b: b, K: int(cs.Shape.K), N: int(cs.Shape.N), M: int(cs.Shape.M),
		source: fmt.Sprintf("%s case %d", path, i), gpu: dst}
	if cs.Op.IsGLU() {
		ut, err := f.Tensor(cs.Src[1])
		if err != nil {
			return nil, c.fail(stderr, exitInput, err)
		}
		in.up, in.fusion = ut.Data, cs.Fusion != golden.FusionDisabled
		in.glu = &glu.Spec{Op: glu.Op(cs.GLU), Alpha: cs.GLUAlpha, Limit: cs.GLULimit}
	}
	if cs.Op.IsID() {
		it, err := f.Tensor(cs.Src[nw+1])
		if err != nil {
			return nil, c.fail(stderr, exitInput, err)
		}
		if in.ids, err = it.I32(); err != nil {
			return nil, c.fail(stderr, exitInput, err)
		}
		in.M, in.E, in.U, in.B1, in.routing = int(cs.Shape.T), int(cs.Shape.E), int(cs.Shape.U), int(cs.Shape.B1), "golden ids"
	}
	return in, exitOK
}

// trace runs the step-through of output (row, col) and the fast simulator.
func trace(in *traceInput, row, col, maxBlocks, stepLanes int) (*traceReport, error) {
	s := tiling.Shape{K: int64(in.K), N: int64(in.N), M: int64(in.M), Experts: int64(in.E)}
	d, err := tiling.Decide(in.dev, in.typ, s)
	if err != nil {
		return nil, err
	}
	if in.forced != nil {
		d = *in.forced
	}
	rep := &traceReport{Device: in.dev.Name, Source: in.source, Op: "MUL_MAT", Type: in.typ.String(), K: in.K, N: in.N, M: in.M,
		Row: row, Col: col, Kernel: d.Kernel.String(), Reason: d.Reason}
	if in.E > 0 {
		tok := col / in.U
		rep.Op = "MUL_MAT_ID"
		rep.ID = &traceIDJSON{Experts: in.E, Used: in.U, Routing: in.routing, Rows: in.B1, Token: tok, Slot: col % in.U,
			ActRow: tok*in.B1 + col%in.U%in.B1, Expert: int(in.ids[col]), TokenIDs: in.ids[tok*in.U : (tok+1)*in.U]}
	}
	var fast []float32
	switch {
	case d.Kernel.IsMMVQ():
		if rep.MMVQ, err = traceMMVQ(in, row, col, maxBlocks, stepLanes); err != nil {
			return nil, err
		}
		rep.Value = rep.MMVQ.Store
		if in.E > 0 {
			fast, err = mmvq.MulMatID(in.dev, in.typ, in.w, in.K, in.N, in.E, in.b, in.B1, in.M, in.ids, in.U)
		} else {
			fast, err = mmvq.MulMat(in.dev, in.typ, in.w, in.K, in.N, in.b, in.M)
		}
	case d.Kernel == tiling.KernelMMQ && in.E > 0:
		var r *moe.Routing
		if r, err = moe.Route(in.ids, in.M, in.U, in.E, in.B1); err != nil {
			return nil, err
		}
		var p *mmq.Plan
		if p, err = mmq.MakePlanID(in.dev, in.typ, in.K, in.N, r); err != nil {
			return nil, err
		}
		var tr *mmq.OutputTrace
		if tr, err = mmq.TraceOutputID(in.dev, in.typ, in.w, in.K, in.N, in.E, in.b, in.B1, in.M, in.ids, in.U, p, row, col); err != nil {
			return nil, err
		}
		rep.MMQ = mmqTrace(p, tr, stepLanes)
		rep.ID.CompactColumn = &tr.Column
		rep.Value = f32v(tr.Value)
		fast, err = mmq.MulMatID(in.dev, in.typ, in.w, in.K, in.N, in.E, in.b, in.B1, in.M, in.ids, in.U, p)
	case d.Kernel == tiling.KernelMMQ:
		var p *mmq.Plan
		if p, err = mmq.MakePlan(in.dev, in.typ, in.K, in.N, in.M); err != nil {
			return nil, err
		}
		var tr *mmq.OutputTrace
		if tr, err = mmq.TraceOutput(in.dev, in.typ, in.w, in.K, in.N, in.b, in.M, p, row, col); err != nil {
			return nil, err
		}
		rep.MMQ = mmqTrace(p, tr, stepLanes)
		rep.Value = f32v(tr.Value)
		fast, err = mmq.MulMat(in.dev, in.typ, in.w, in.K, in.N, in.b, in.M, p)
	default:
		return nil, fmt.Errorf("ggml runs %s for this shape, which trace does not follow (mul_mat_vec_q and mul_mat_q only): %w", d.Kernel, errors.ErrUnsupported)
	}
	if err != nil {
		return nil, err
	}
	idx := col*in.N + row // MUL_MAT_ID: dst[(token*U + slot)*N + row]
	rep.Fast = f32v(fast[idx])
	rep.MatchFast = math.Float32bits(fast[idx]) == math.Float32bits(float32(rep.Value))
	rep.OK = rep.MatchFast && (rep.MMVQ == nil || rep.MMVQ.StepsMatch) && (rep.MMQ == nil || rep.MMQ.ScaleMatch)
	if in.gpu != nil {
		g := f32v(in.gpu[idx])
		m := math.Float32bits(in.gpu[idx]) == math.Float32bits(float32(rep.Value))
		rep.GPU, rep.MatchGPU = &g, &m
		rep.OK = rep.OK && m
	}
	return rep, nil
}

// traceMMVQ runs mul_mat_vec_q (with ids, or mul_mat_vec_q_moe, for MUL_MAT_ID) lane by
// lane on the CUDA block of output row and keeps the steps of (row, col); the vec_dot
// calls of the first stepLanes lanes (all for -1) get their step-through
// (mmvq.ExplainVecDot), which must end with the lane's bits. An output depends only on
// its row, its column (token and slot) and the launch (which N does not change), so the
// block's rows of every expert alone give its bits.
func traceMMVQ(in *traceInput, row, col, maxBlocks, stepLanes int) (*mmvqTraceJSON, error) {
	id := in.E > 0
	tok, slot := col, -1
	if id {
		tok, slot = col/in.U, col%in.U
	}
	p, err := tiling.MakeMMVQPlan(&in.dev, in.typ, in.K, in.M, id)
	if err != nil {
		return nil, err
	}
	rpb := p.RowsPerBlock
	row0 := row / rpb * rpb
	nrows := min(rpb, in.N-row0)
	rs64, err := in.typ.RowSize(int64(in.K))
	if err != nil {
		return nil, err
	}
	rs := int(rs64)
	nmat, expert := max(in.E, 1), 0
	if id {
		expert = int(in.ids[col])
	}
	var sub []byte
	for e := 0; e < nmat; e++ {
		sub = append(sub, in.w[(e*in.N+row0)*rs:(e*in.N+row0+nrows)*rs]...)
	}
	xrow := in.w[(expert*in.N+row)*rs : (expert*in.N+row+1)*rs]
	yrow := tok // the activation row the output's column reads
	nb := in.M
	if id {
		yrow, nb = tok*in.B1+slot%in.B1, in.M*in.B1
	}
	yq, err := q8.QuantizeQ8_1(in.b, in.K, nb)
	if err != nil {
		return nil, err
	}
	per := q8.PaddedLen(in.K) / 32
	ycol := yq[yrow*per : (yrow+1)*per]
	ybl := p.QK / 32

	t := &mmvqTraceJSON{Plan: p.String(), BlockX: row / rpb, StepsMatch: true}
	type laneKey struct{ warp, lane int }
	stepped := map[laneKey]bool{}
	var werr error
	watch := func(e mmvq.Event) {
		if e.Row != row-row0 || e.Col != tok || e.Slot != slot || werr != nil {
			return
		}
		switch e.Kind {
		case mmvq.EvVecDot:
			v := vecDotJSON{Warp: e.Warp, Lane: e.Lane, KBX: e.Block, Iqs: e.Iqs, In: f32v(e.In), Out: f32v(e.Out)}
			k := laneKey{e.Warp, e.Lane}
			if _, seen := stepped[k]; !seen {
				stepped[k] = stepLanes < 0 || len(stepped) < stepLanes
				if stepped[k] {
					t.StepLanes++
				}
			}
			if stepped[k] {
				st, err := mmvq.ExplainVecDot(in.typ, e.In, xrow, e.Block, e.Iqs, ycol[e.Block*ybl:])
				if err != nil {
					werr = err
					return
				}
				if math.Float32bits(st.Out) != math.Float32bits(e.Out) {
					t.StepsMatch = false
				}
				v.Steps = stepsJSON(st.Steps)
			}
			t.VecDots = append(t.VecDots, v)
		case mmvq.EvCrossWarp:
			t.CrossWarp = append(t.CrossWarp, addJSON{Step: e.Offset, Lane: e.Lane, In: f32v(e.In), Addend: f32v(e.Addend), Out: f32v(e.Out)})
		case mmvq.EvShuffle:
			t.Butterfly = append(t.Butterfly, addJSON{Step: e.Offset, Lane: e.Lane, In: f32v(e.In), Addend: f32v(e.Addend), Out: f32v(e.Out)})
		case mmvq.EvStore:
			t.Store = f32v(e.Out)
		}
	}
	opt := &mmvq.Options{Trace: true, Watch: watch, Workers: 1}
	if id {
		_, err = mmvq.MulMatIDOpts(in.dev, in.typ, sub, in.K, nrows, in.E, in.b, in.B1, in.M, in.ids, in.U, opt)
	} else {
		_, err = mmvq.MulMatOpts(in.dev, in.typ, sub, in.K, nrows, in.b, in.M, opt)
	}
	if err == nil {
		err = werr
	}
	if err != nil {
		return nil, err
	}
	colBlocks := ycol[:in.K/32]
	t.Q8Total = len(colBlocks)
	for i, blk := range colBlocks {
		if maxBlocks > 0 && i >= maxBlocks {
			break
		}
		t.Q8Blocks = append(t.Q8Blocks, q8BlockJSON{Index: i, D: f32v(sim.H2F(blk.D)), S: f32v(sim.H2F(blk.S)), Qs: blk.Qs[:]})
	}
	return t, nil
}

// mmqTrace is tr as JSON, the first stepIters iterations (all for -1) with their scale
// steps, each of which must end with the iteration's bits.
func mmqTrace(p *mmq.Plan, tr *mmq.OutputTrace, stepIters int) *mmqTraceJSON {
	t := &mmqTraceJSON{Plan: p.Launch.String(), Tile: tr.Tile, It: tr.It, Jt: tr.Jt, I: tr.I, J: tr.J, Stored: f32v(tr.Stored), ScaleMatch: true}
	for r, rg := range tr.Ranges {
		t.Ranges = append(t.Ranges, mmqRangeJSON{Block: rg.Block, Start: rg.Start, Stop: rg.Stop, Partial: f32v(tr.Partials[r])})
	}
	for i, s := range tr.Steps {
		j := mmqStepJSON{Range: s.Range, Block: s.Block, KB0: s.KB0, Dots: s.Dots, In: f32v(s.In), Out: f32v(s.Out)}
		if len(s.Scale) > 0 && (stepIters < 0 || i < stepIters) {
			j.Scale = stepsJSON(s.Scale)
			t.ScaleIters++
			if last := s.Scale[len(s.Scale)-1]; math.Float32bits(last.Float) != math.Float32bits(s.Out) {
				t.ScaleMatch = false
			}
		}
		t.Steps = append(t.Steps, j)
	}
	for _, f := range tr.Fixup {
		t.Fixup = append(t.Fixup, fixupStepJSON{Block: f.Block, In: f32v(f.In), Addend: f32v(f.Addend), Out: f32v(f.Out)})
	}
	return t
}

func writeTraceText(w io.Writer, r *traceReport) {
	if id := r.ID; id != nil {
		fmt.Fprintf(w, "trace: dst[%d] = row %d of expert %d . token %d of MUL_MAT_ID %s K=%d N=%d, %d tokens, %d experts, %d used per token (%s) on %s (%s)\n",
			r.Col*r.N+r.Row, r.Row, id.Expert, id.Token, r.Type, r.K, r.N, r.M, id.Experts, id.Used, id.Routing, r.Device, r.Source)
		fmt.Fprintf(w, "output: column %d of dst = token %d, slot %d; token %d's experts %v\n", r.Col, id.Token, id.Slot, id.Token, id.TokenIDs)
	} else {
		fmt.Fprintf(w, "trace: dst[%d] = row %d . column %d of MUL_MAT %s K=%d N=%d M=%d on %s (%s)\n",
			r.Col*r.N+r.Row, r.Row, r.Col, r.Type, r.K, r.N, r.M, r.Device, r.Source)
	}
	fmt.Fprintf(w, "kernel: %s: %s\n", r.Kernel, r.Reason)
	if t := r.MMVQ; t != nil {
		fmt.Fprintf(w, "launch: %s; the row is in block.x %d\n", t.Plan, t.BlockX)
		what := fmt.Sprintf("column %d", r.Col)
		if r.ID != nil {
			what = fmt.Sprintf("row %d (token %d's row %d)", r.ID.ActRow, r.ID.Token, r.ID.ActRow-r.ID.Token*r.ID.Rows)
		}
		fmt.Fprintf(w, "\nactivations: %s quantized by quantize_q8_1 (%d blocks of 32):\n", what, t.Q8Total)
		for _, b := range t.Q8Blocks {
			fmt.Fprintf(w, "  block %d: d %v, s %v\n    qs %v\n", b.Index, b.D, b.S, b.Qs)
		}
		if len(t.Q8Blocks) < t.Q8Total {
			fmt.Fprintf(w, "  ... %d more (--blocks 0 shows all)\n", t.Q8Total-len(t.Q8Blocks))
		}
		fmt.Fprintf(w, "\nvec_dot calls (each thread's running sum: tmp = vec_dot(x block kbx, int offset iqs) + tmp):\n")
		if t.StepLanes > 0 {
			fmt.Fprintf(w, "(inside the calls of the first %d lane(s), every step: #i op what = result, then its operands;\n"+
				" #j is step j's result, y[j] the q8_1 block kbx*QK/32+j of the column, int8x4 words in hex and as 4 ints)\n", t.StepLanes)
		}
		for _, v := range t.VecDots {
			fmt.Fprintf(w, "  warp %d lane %2d kbx %4d iqs %2d: %v -> %v\n", v.Warp, v.Lane, v.KBX, v.Iqs, v.In, v.Out)
			for i, st := range v.Steps {
				fmt.Fprintf(w, "      %s\n", stepText(i, st))
			}
		}
		if !t.StepsMatch {
			fmt.Fprintln(w, "  STEP-THROUGH DIFFERS: a call's steps do not end with the lane's bits")
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
		if r.ID != nil && r.ID.CompactColumn != nil {
			fmt.Fprintf(w, "the tokens sorted by expert (mm_ids_helper): the output is compact column %d, in expert %d's tiles\n", *r.ID.CompactColumn, r.ID.Expert)
		}
		fmt.Fprintf(w, "tile %d (row tile %d, column tile %d; %d x %d), K ranges in weight blocks:\n", t.Tile, t.It, t.Jt, t.I, t.J)
		for i, rg := range t.Ranges {
			what := "to its fixup slot"
			if i == len(t.Ranges)-1 {
				what = "stored to dst (the end segment)"
			}
			fmt.Fprintf(w, "  range %d: CUDA block %d, blocks [%d, %d): partial %v, %s\n", i, rg.Block, rg.Start, rg.Stop, rg.Partial, what)
		}
		fmt.Fprintf(w, "\niterations (exact int32 dots of 16 values each, then the type's scale arithmetic: sum -> sum):\n")
		if t.ScaleIters > 0 {
			fmt.Fprintf(w, "(inside the first %d iteration(s), every scale step in the kernel's order: #i op what = result, then its operands;\n"+
				" C[h] is the dot of values 16h..16h+15, x_df/x_dm/x_sc the weight row's scales in shared memory, y0/y1 the q8_1_mmq blocks)\n", t.ScaleIters)
		}
		for _, s := range t.Steps {
			fmt.Fprintf(w, "  range %d block %d kb0 %4d: dots %v\n      %v -> %v\n", s.Range, s.Block, s.KB0, s.Dots, s.In, s.Out)
			for i, st := range s.Scale {
				fmt.Fprintf(w, "      %s\n", stepText(i, st))
			}
		}
		if !t.ScaleMatch {
			fmt.Fprintln(w, "  SCALE STEPS DIFFER: an iteration's steps do not end with its bits")
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

// stepText is one step of a vec_dot: "#i op what = result: operands".
func stepText(i int, s stepJSON) string {
	res := ""
	if s.Int != nil {
		res = fmt.Sprint(*s.Int)
	} else {
		res = s.Value.String()
	}
	args := make([]string, len(s.Args))
	for k, a := range s.Args {
		var v string
		switch {
		case a.Int != nil && s.Op == "dp4a" && k < 2:
			u := uint32(*a.Int)
			v = fmt.Sprintf("0x%08x (%d %d %d %d)", u, int8(u), int8(u>>8), int8(u>>16), int8(u>>24))
		case a.Int != nil:
			v = fmt.Sprint(*a.Int)
		default:
			v = a.Value.String()
		}
		switch {
		case a.Ref != nil:
			args[k] = fmt.Sprintf("#%d", *a.Ref)
		case isConst(a):
			args[k] = v
		default:
			args[k] = a.Name + " " + v
		}
	}
	var expr string
	switch s.Op {
	case "dp4a":
		expr = fmt.Sprintf("%s . %s + %s", args[0], args[1], args[2])
	case "ffma":
		expr = fmt.Sprintf("%s * %s + %s", args[0], args[1], args[2])
	case "imul", "fmul", "hmul":
		expr = args[0] + " * " + args[1]
	case "iadd", "fadd":
		expr = args[0] + " + " + args[1]
	case "fsub":
		expr = args[0] + " - " + args[1]
	case "idiv":
		expr = args[0] + " / " + args[1]
	case "i2f":
		expr = "float(" + args[0] + ")"
	case "fneg":
		expr = "-" + args[0]
	case "ex2", "rcp", "tanh":
		expr = map[string]string{"ex2": "MUFU.EX2", "rcp": "MUFU.RCP", "tanh": "MUFU.TANH"}[s.Op] + "(" + args[0] + ")"
	case "fmin", "fmax":
		expr = s.Op + "f(" + args[0] + ", " + args[1] + ")"
	}
	return fmt.Sprintf("#%-2d %-4s %s = %s: %s", i, s.Op, s.What, res, expr)
}

// isConst reports whether an input operand is a constant whose name is its value.
func isConst(a stepArgJSON) bool {
	if a.Int != nil {
		return a.Name == strconv.Itoa(int(*a.Int))
	}
	f, err := strconv.ParseFloat(a.Name, 32)
	return err == nil && a.Value != nil && math.Float32bits(float32(f)) == math.Float32bits(float32(*a.Value))
}
