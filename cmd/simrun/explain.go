package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"

	"github.com/ggsim/ggsim"
	"github.com/ggsim/ggsim/moe"
	"github.com/ggsim/ggsim/quant"
	"github.com/ggsim/ggsim/sim"
	"github.com/ggsim/ggsim/sim/mmq"
	"github.com/ggsim/ggsim/sim/mmvq"
	"github.com/ggsim/ggsim/streamk"
	"github.com/ggsim/ggsim/tiling"
)

const explainHelp = `usage: simrun explain --device NAME --type T --shape K,N,M [--experts E,U [--routing R] [--seed S]]
                      [--fp16path] [--json] [--svg FILE] [--blocks N]

explain says which kernel ggml's CUDA backend (commit d99724f2b141) dispatches a MUL_MAT
(or, with --experts, a MUL_MAT_ID) to on a device, and why: the thresholds of
ggml_cuda_should_use_mmvq / ggml_cuda_should_use_mmq for the device and type, not only the
verdict. For mul_mat_q it shows the J search step by step, the MMQ config row (file:line
of ggml's mmq-config table), the tiles (nty, ntx, ntzw), waves and efficiency, stream-K
or the conventional tiling, each CUDA block's tile(s) and k range, and which fixup block
adds which partial sums in which order. Last it says whether ggsim simulates the bits
(AMD arithmetic and Blackwell's native FP4 MMA are explained but not simulated).

flags:
  --device NAME    a device of the catalog (simrun devices): {{devices}}
                   (case, spaces, '-' and '_' ignored: rtx4090)  [H200]
  --type T         ggml type of the weights, one the CUDA backend takes for MUL_MAT:
                   {{types}}  [q4_K]
  --shape K,N,M    K values per weight row (ne00), N weight rows (ne01), M columns of
                   the activations (ne11; tokens for MUL_MAT_ID)  [4096,4096,1]
  --k, --n, --m    the same numbers one at a time (older spelling of --shape)
  --experts E,U    MUL_MAT_ID: E experts (ne02), U of them used per token (ids ne0);
                   "E" alone means U = 1
  --routing R      how the M tokens pick their U experts, which sets the per-expert
                   column counts of mul_mat_q: uniform, hot (expert 0 in every token),
                   sparse (only the first max(U, E/4) experts), all-to-one (every token
                   the same U experts)  [uniform, and the output says it was assumed]
  --seed S         seed of the routing's random choices  [1]
  --fp16path       opt in to the GP100 fp16 matrix-vector path of patch 0007 (seed note 002;
                   not in ggml): on sm_60 (P100) it replaces mul_mat_vec_q where it has a kernel
  --json           print the explanation as one JSON object (schema: docs/explain-json.md)
  --svg FILE       draw the mul_mat_q partition (tiles x k, blocks, fixup order) as SVG
  --blocks N       list at most N CUDA blocks and N fixup blocks in the text (0: all)  [64]

example:
  simrun explain --device H200 --type q4_K --shape 4096,14336,512
  simrun explain --device H200 --type q4_K --shape 4096,1024,64 --svg streamk.svg
  simrun explain --device H200 --type q4_K --shape 2048,768,64 --experts 8,2 --routing sparse --json

Exit status: 0 when explained (also when ggsim does not simulate the bits), 1 when the
launch cannot be planned or the SVG cannot be written, 2 for a usage error.
`

// helpText is explainHelp with the catalog's devices and the types ggml's CUDA backend
// accepts for MUL_MAT filled in.
func helpText() string {
	var devs, types []string
	for _, d := range sim.Catalog() {
		n := d.Name
		if strings.Contains(n, " ") {
			n = `"` + n + `"`
		}
		devs = append(devs, n)
	}
	for t := quant.Type(0); t < quant.TypeCount; t++ {
		if t.Valid() && tiling.SupportsMulMat(t) {
			types = append(types, t.String())
		}
	}
	r := strings.NewReplacer("{{devices}}", wrap(devs, 61), "{{types}}", wrap(types, 19))
	return r.Replace(explainHelp)
}

// wrap joins words with ", " into lines of at most 88 columns, the first starting at
// column first, the others indented to column 19.
func wrap(words []string, first int) string {
	var sb strings.Builder
	col := first
	for i, w := range words {
		if i > 0 {
			sb.WriteString(",")
			col++
			if col+1+len(w) > 88 {
				sb.WriteString("\n" + strings.Repeat(" ", 19))
				col = 19
			} else {
				sb.WriteString(" ")
				col++
			}
		}
		sb.WriteString(w)
		col += len(w)
	}
	return sb.String()
}

// probeLimit is the largest ne11 explain evaluates a dispatch predicate at to state its
// threshold. ggml's thresholds are at most 256 columns (ggml_cuda_should_use_mmq on
// CDNA); beyond probeLimit the predicates are constant.
const probeLimit = 4096

// explainReport is the JSON form of explain (docs/explain-json.md documents each key).
type explainReport struct {
	Device       deviceJSON   `json:"device"`
	Op           string       `json:"op"`
	Type         string       `json:"type"`
	Shape        shapeJSON    `json:"shape"`
	Kernel       string       `json:"kernel"`
	GGMLName     string       `json:"ggml_name"`
	Reason       string       `json:"reason"`
	Checks       []checkJSON  `json:"checks"`
	Routing      *routingJSON `json:"routing,omitempty"`
	MMVQ         *mmvqJSON    `json:"mmvq,omitempty"`
	MMQ          *mmqJSON     `json:"mmq,omitempty"`
	GLUFusion    *gluJSON     `json:"glu_fusion,omitempty"`
	FP16Path     *fp16JSON    `json:"fp16_path,omitempty"`
	Simulated    bool         `json:"simulated"`
	SimulatedBy  string       `json:"simulated_by,omitempty"`
	NotSimulated string       `json:"not_simulated,omitempty"`
}

type deviceJSON struct {
	Name                string `json:"name"`
	Vendor              string `json:"vendor"`
	CC                  int    `json:"cc"`
	SMs                 int    `json:"sms"`
	WarpSize            int    `json:"warp_size"`
	Smpbo               int    `json:"smpbo"`
	HighestCompiledArch int    `json:"highest_compiled_arch"`
	TuringMMA           bool   `json:"turing_mma"`
	FP16MMA             bool   `json:"fp16_mma"`
	AMDMFMA             bool   `json:"amd_mfma"`
	AMDWMMA             bool   `json:"amd_wmma"`
	BlackwellMMA        bool   `json:"blackwell_mma"`
}

type shapeJSON struct {
	K           int64 `json:"k"`
	N           int64 `json:"n"`
	M           int64 `json:"m"`
	Experts     int64 `json:"experts,omitempty"`
	ExpertsUsed int64 `json:"experts_used,omitempty"`
}

// checkJSON is one dispatch predicate of ggml at the shape, with the ne11 values (1 ..
// probeLimit) for which it is true on the device.
type checkJSON struct {
	Name    string     `json:"name"`
	Call    string     `json:"call"`
	Value   bool       `json:"value"`
	TrueFor [][2]int64 `json:"true_for"`
	Rule    string     `json:"rule"`
	Note    string     `json:"note,omitempty"`
}

type routingJSON struct {
	Kind         string `json:"kind"`
	Seed         uint64 `json:"seed"`
	Assumed      bool   `json:"assumed"`
	ExpertCols   []int  `json:"expert_cols"`
	EmptyExperts int    `json:"empty_experts"`
}

// gluJSON says whether ggml fuses this matmul, as the gate or up of a graph {gate, up,
// GLU} with fusion allowed, into one mul_mat_vec_q launch with the GLU epilogue
// (tiling.FuseGLU).
type gluJSON struct {
	Fused  bool   `json:"fused"`
	Reason string `json:"reason"`
}

type mmvqJSON struct {
	Plan          string `json:"plan"`
	Kernel        string `json:"kernel"`
	Table         string `json:"table"`
	NCols         int    `json:"ncols"`
	SmallK        bool   `json:"small_k"`
	HalveIters    bool   `json:"halve_iters"`
	NWarps        int    `json:"nwarps"`
	RowsPerBlock  int    `json:"rows_per_block"`
	BlocksPerIter int    `json:"blocks_per_iter"`
	// WriteRace is why ggml's one-token MUL_MAT_ID launch races on this shape
	// (sim/mmvq.IDWriteRace), "" if it does not.
	WriteRace string `json:"write_race,omitempty"`
}

// fp16JSON is the launch of the GP100 fp16 path (package fp16path's choices).
type fp16JSON struct {
	RowsPerWarp   int  `json:"rows_per_warp"`
	LanesPerRow   int  `json:"lanes_per_row"`
	Groups        int  `json:"groups"`
	GroupsPerLane int  `json:"groups_per_lane"`
	Columns       int  `json:"columns"`
	Warps         int  `json:"warps"`
	MultiColumn   bool `json:"multi_column"`
}

type mmqJSON struct {
	Table    string      `json:"table"`
	Fallback bool        `json:"fallback"`
	NColsMax int64       `json:"ncols_max"`
	JSearch  []jstepJSON `json:"j_search"`
	J        int         `json:"j"`
	Config   *configJSON `json:"config,omitempty"`
	Tiles    *tilesJSON  `json:"tiles,omitempty"`
	Launch   *launchJSON `json:"launch,omitempty"`
	Blocks   []blockJSON `json:"blocks,omitempty"`
	Fixups   []fixupJSON `json:"fixups,omitempty"`
	Error    string      `json:"error,omitempty"`
}

type jstepJSON struct {
	J            int    `json:"j"`
	Available    bool   `json:"available"`
	Source       string `json:"source,omitempty"`
	NBytesShared int    `json:"nbytes_shared"`
	OverSmpbo    bool   `json:"over_smpbo"`
	NTX          int    `json:"ntx"`
	Chosen       bool   `json:"chosen"`
}

type configJSON struct {
	Source        string `json:"source"`
	Arch          string `json:"arch"`
	NThreads      int    `json:"nthreads"`
	NWarps        int    `json:"nwarps"`
	Occupancy     int    `json:"occupancy"`
	I             int    `json:"i"`
	J             int    `json:"j"`
	SRAMLayout    string `json:"sram_layout"`
	SRAMStride    int    `json:"sram_stride"`
	KVRAM         int    `json:"k_vram"`
	StreamK       bool   `json:"stream_k"`
	Fallback      bool   `json:"fallback"`
	MMADataLayout bool   `json:"mma_data_layout"`
	NBytesShared  int    `json:"nbytes_shared"`
	NativeFP4     bool   `json:"native_fp4"`
}

type tilesJSON struct {
	NTY           int `json:"nty"`
	NTX           int `json:"ntx"`
	NTZW          int `json:"ntzw"`
	NTiles        int `json:"ntiles"`
	BlocksPerNe00 int `json:"blocks_per_ne00"`
	BlocksPerIter int `json:"blocks_per_iter"`
	SplitTiles    int `json:"split_tiles"`
	EmptyTiles    int `json:"empty_tiles"`
}

type launchJSON struct {
	StreamK           bool   `json:"stream_k"`
	Waves             int    `json:"waves"`
	EfficiencyPercent int    `json:"efficiency_percent"`
	Grid              int    `json:"grid"`
	GridDim           [3]int `json:"grid_dim"`
	GridRule          string `json:"grid_rule"`
	FixupNeeded       bool   `json:"fixup_needed"`
	FixupBlocks       int    `json:"fixup_blocks"`
	IdleBlocks        int    `json:"idle_blocks"`
}

type blockJSON struct {
	Index    int           `json:"index"`
	KBC      int           `json:"kbc"`
	KBCStop  int           `json:"kbc_stop"`
	Segments []segmentJSON `json:"segments"`
}

type segmentJSON struct {
	Tile     int    `json:"tile"`
	It       int    `json:"it"`
	Jt       int    `json:"jt"`
	Channel  int    `json:"channel"`
	Sample   int    `json:"sample"`
	KB0Start int    `json:"kb0_start"`
	KB0Stop  int    `json:"kb0_stop"`
	Out      string `json:"out"`
}

type fixupJSON struct {
	Block   int    `json:"block"`
	Tile    int    `json:"tile"`
	Adds    []int  `json:"adds"`
	Writes  bool   `json:"writes"`
	Stale   []int  `json:"stale,omitempty"`
	Formula string `json:"formula"`
}

// explainArgs are the parsed flags.
type explainArgs struct {
	dev          sim.Device
	typ          quant.Type
	k, n, m      int64
	experts      int64
	used         int64
	routing      string
	routingGiven bool
	seed         uint64
	json         bool
	svg          string
	blocks       int
	fp16         bool
}

// usageErr is a command-line mistake: explain prints it and exits 2.
type usageErr struct{ msg string }

func (e usageErr) Error() string { return e.msg }

func usagef(format string, a ...any) error { return usageErr{fmt.Sprintf(format, a...)} }

func parseExplain(args []string) (*explainArgs, error) {
	fl := flag.NewFlagSet("explain", flag.ContinueOnError)
	fl.SetOutput(io.Discard)
	devName := fl.String("device", "H200", "")
	typName := fl.String("type", "q4_K", "")
	shape := fl.String("shape", "", "")
	k := fl.Int64("k", 0, "")
	n := fl.Int64("n", 0, "")
	m := fl.Int64("m", 0, "")
	experts := fl.String("experts", "", "")
	routing := fl.String("routing", "", "")
	seed := fl.Uint64("seed", 1, "")
	asJSON := fl.Bool("json", false, "")
	svg := fl.String("svg", "", "")
	blocks := fl.Int("blocks", 64, "")
	fp16 := fl.Bool("fp16path", false, "")
	pos, err := parseFlags(fl, args)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil, err
		}
		return nil, usageErr{err.Error()}
	}
	if len(pos) > 0 {
		return nil, usagef("unexpected argument %q", pos[0])
	}
	set := map[string]bool{}
	fl.Visit(func(f *flag.Flag) { set[f.Name] = true })
	a := &explainArgs{seed: *seed, json: *asJSON, svg: *svg, blocks: *blocks, routing: *routing, routingGiven: set["routing"], fp16: *fp16}
	if a.dev, err = sim.Lookup(*devName); err != nil {
		return nil, usageErr{"--device: " + err.Error()}
	}
	if a.typ, err = quant.ParseType(*typName); err != nil {
		return nil, usageErr{"--type: " + err.Error()}
	}
	a.k, a.n, a.m = 4096, 4096, 1
	if *shape != "" {
		if set["k"] || set["n"] || set["m"] {
			return nil, usagef("give the shape either as --shape K,N,M or as --k, --n, --m, not both")
		}
		v, err := parseInts(*shape, 3)
		if err != nil {
			return nil, usagef("--shape %q: %v (want K,N,M, e.g. 4096,14336,512)", *shape, err)
		}
		a.k, a.n, a.m = v[0], v[1], v[2]
	}
	if set["k"] {
		a.k = *k
	}
	if set["n"] {
		a.n = *n
	}
	if set["m"] {
		a.m = *m
	}
	if a.k <= 0 || a.n <= 0 || a.m <= 0 {
		return nil, usagef("shape K=%d, N=%d, M=%d: all three must be positive", a.k, a.n, a.m)
	}
	if a.k > math.MaxInt32 || a.n > math.MaxInt32 || a.m > math.MaxInt32 {
		return nil, usagef("shape K=%d, N=%d, M=%d: each must fit ggml's int kernel arguments (at most %d)", a.k, a.n, a.m, math.MaxInt32)
	}
	if _, err := a.typ.RowSize(a.k); err != nil {
		return nil, usagef("--shape: K=%d: %v", a.k, err)
	}
	if *experts != "" {
		v, err := parseInts(*experts, -1)
		if err != nil || len(v) > 2 {
			return nil, usagef("--experts %q: want E,U (experts, experts used per token) or E", *experts)
		}
		a.experts, a.used = v[0], 1
		if len(v) == 2 {
			a.used = v[1]
		}
		if a.experts < 1 || a.used < 1 || a.used > a.experts {
			return nil, usagef("--experts %q: want 1 <= U <= E", *experts)
		}
		if a.experts > 1<<16 || a.m > 1<<24 || a.m*a.used > 1<<26 {
			return nil, usagef("--experts %q with %d tokens: too large for explain (at most 65536 experts and 2^26 token slots)", *experts, a.m)
		}
		if a.routing == "" {
			a.routing = "uniform"
		}
		if _, err := routeIDs(a.routing, 0, 1, 1, 1); err != nil {
			return nil, usageErr{"--routing: " + err.Error()}
		}
	} else if set["routing"] || set["seed"] {
		return nil, usagef("--routing and --seed need --experts E,U")
	}
	if a.blocks < 0 {
		return nil, usagef("--blocks %d: want >= 0", a.blocks)
	}
	return a, nil
}

// parseInts parses a comma-separated list of integers (want elements, or any
// number if want < 0).
func parseInts(s string, want int) ([]int64, error) {
	parts := strings.Split(s, ",")
	if want >= 0 && len(parts) != want {
		return nil, fmt.Errorf("%d numbers, want %d", len(parts), want)
	}
	v := make([]int64, len(parts))
	for i, p := range parts {
		x, err := strconv.ParseInt(strings.TrimSpace(p), 10, 64)
		if err != nil {
			return nil, fmt.Errorf("%q is not an integer", p)
		}
		v[i] = x
	}
	return v, nil
}

func cmdExplain(args []string, stdout, stderr io.Writer) int {
	a, err := parseExplain(args)
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprint(stdout, helpText())
		return 0
	}
	if err != nil {
		fmt.Fprintf(stderr, "simrun explain: %v\nrun 'simrun explain -h' for the flags\n", err)
		return 2
	}
	rep, part, err := explain(a)
	if err != nil {
		fmt.Fprintf(stderr, "simrun explain: %v\n", err)
		return 1
	}
	if a.json {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rep); err != nil {
			fmt.Fprintf(stderr, "simrun explain: %v\n", err)
			return 1
		}
	} else {
		writeExplainText(stdout, a, rep, part)
	}
	code := 0
	if rep.MMQ != nil && rep.MMQ.Error != "" {
		fmt.Fprintf(stderr, "simrun explain: %s\n", rep.MMQ.Error)
		code = 1
	}
	if a.svg != "" {
		if err := writeSVGFile(a.svg, rep, part); err != nil {
			fmt.Fprintf(stderr, "simrun explain: --svg: %v\n", err)
			return 1
		}
	}
	return code
}

func writeSVGFile(path string, rep *explainReport, part *streamk.Partition) error {
	if part == nil {
		return fmt.Errorf("ggml runs %s here: only a mul_mat_q launch has a partition to draw", rep.Kernel)
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := streamk.WriteSVG(f, *part); err != nil {
		f.Close()
		os.Remove(path)
		return err
	}
	return f.Close()
}

// explain builds the report and, for mul_mat_q, the partition.
func explain(a *explainArgs) (*explainReport, *streamk.Partition, error) {
	dev, t := a.dev, a.typ
	rep := &explainReport{
		Device: deviceJSON{
			Name: dev.Name, Vendor: string(dev.Vendor), CC: dev.CC, SMs: dev.SMCount, WarpSize: dev.WarpSize,
			Smpbo: dev.SmemPerBlockOptin, HighestCompiledArch: dev.HighestCompiledArch(),
			TuringMMA: dev.TuringMMA(), FP16MMA: dev.FP16MMA(), AMDMFMA: dev.AMDMFMA(), AMDWMMA: dev.AMDWMMA(),
			BlackwellMMA: dev.BlackwellMMA(),
		},
		Op:    "mul_mat",
		Type:  t.String(),
		Shape: shapeJSON{K: a.k, N: a.n, M: a.m},
	}
	shape := tiling.Shape{K: a.k, N: a.n, M: a.m}
	id := a.experts > 0
	if id {
		rep.Op = "mul_mat_id"
		rep.Shape.Experts, rep.Shape.ExpertsUsed = a.experts, a.used
		shape.Experts = a.experts
	}
	d, err := tiling.DecideWith(dev, t, shape, tiling.Options{GP100FP16Path: a.fp16})
	if err != nil {
		return nil, nil, err
	}
	rep.Kernel, rep.GGMLName, rep.Reason = d.Kernel.String(), d.Kernel.GGMLName(), d.Reason
	rep.Checks = dispatchChecks(dev, t, shape, a.used)
	if d.Kernel != tiling.KernelUnsupported {
		fused, why := tiling.FuseGLU(dev, t, shape, a.used) // B1 = U, as the routing below
		rep.GLUFusion = &gluJSON{Fused: fused, Reason: why}
	}
	if a.fp16 {
		rep.Checks = append(rep.Checks, fp16Check(dev, t, shape))
	}

	var cols []int
	if id {
		ids, err := routeIDs(a.routing, a.seed, int(a.experts), int(a.used), int(a.m))
		if err != nil {
			return nil, nil, err
		}
		rt, err := moe.Route(ids, int(a.m), int(a.used), int(a.experts), int(a.used))
		if err != nil {
			return nil, nil, err
		}
		cols = rt.ExpertCols()
		r := &routingJSON{Kind: a.routing, Seed: a.seed, Assumed: !a.routingGiven, ExpertCols: cols}
		for _, c := range cols {
			if c == 0 {
				r.EmptyExperts++
			}
		}
		rep.Routing = r
	}

	var part *streamk.Partition
	switch {
	case d.Kernel.IsMMVQ():
		p, err := tiling.MakeMMVQPlan(&dev, t, int(a.k), int(a.m), id)
		if err != nil {
			return nil, nil, err
		}
		rep.MMVQ = &mmvqJSON{Plan: p.String(), Kernel: p.Kernel.String(), Table: p.Table.String(), NCols: p.NCols,
			SmallK: p.SmallK, HalveIters: p.HalveIters, NWarps: p.NWarps, RowsPerBlock: p.RowsPerBlock, BlocksPerIter: p.BlocksPerIter}
		if id {
			rep.MMVQ.WriteRace = mmvq.IDWriteRace(p, int(a.n), int(a.used))
		}
	case d.Kernel == tiling.KernelMMQ:
		rep.MMQ, part = explainMMQ(dev, t, shape, cols)
	case d.Kernel == tiling.KernelGP100FP16:
		rep.FP16Path = explainFP16(a)
	}
	simulated(rep, a, d)
	return rep, part, nil
}

// explainMMQ is the mul_mat_q launch: J search, config, tiles and the partition. A launch
// ggml cannot make (no J fits, a partition ggml's arithmetic or assertion refuses) is
// reported in Error.
func explainMMQ(dev sim.Device, t quant.Type, s tiling.Shape, cols []int) (*mmqJSON, *streamk.Partition) {
	fallback := tiling.MMQFallback(s.N)
	m := &mmqJSON{Table: tiling.MMQArchOf(&dev).File(), Fallback: fallback, NColsMax: s.M}
	search := tiling.MMQSearchJ(&dev, t, s.M, fallback)
	for _, st := range search.Steps {
		m.JSearch = append(m.JSearch, jstepJSON{J: st.J, Available: st.Available, Source: st.Source,
			NBytesShared: st.NBytesShared, OverSmpbo: st.OverSmpbo, NTX: st.NTilesX, Chosen: st.Chosen})
	}
	m.J = search.J
	p, err := tiling.MakeMMQPlan(&dev, t, s)
	if err != nil {
		m.Error = err.Error()
		return m, nil
	}
	c := p.Config
	m.Config = &configJSON{Source: c.Source, Arch: c.Arch.String(), NThreads: c.NThreads, NWarps: p.NWarps,
		Occupancy: c.Occupancy, I: c.I, J: c.J, SRAMLayout: c.SRAM.String(), SRAMStride: c.SRAM.Stride(),
		KVRAM: c.KVRAM, StreamK: c.StreamK, Fallback: c.Fallback, MMADataLayout: c.UseMMADataLayout,
		NBytesShared: p.NBytesShared, NativeFP4: p.UseNativeFP4}
	m.Tiles = &tilesJSON{NTY: p.NTY, NTX: p.NTX, NTZW: p.NTZW, NTiles: p.NTiles,
		BlocksPerNe00: p.BlocksPerNe00, BlocksPerIter: p.BlocksPerIter}
	part, err := streamk.Plan(streamk.Params{
		NSM: dev.SMCount, NVIDIA: sim.CCIsNVIDIA(dev.CC), StreamK: c.StreamK,
		NTilesX: p.NTX, NTilesY: p.NTY, NChannels: p.NTZW, NSamples: 1,
		BlocksPerTile: p.BlocksPerNe00, BlocksPerIter: p.BlocksPerIter,
		ExpertCols: cols, J: c.J,
	})
	if err != nil {
		m.Error = err.Error()
		return m, nil
	}
	l := &launchJSON{StreamK: part.StreamK, Waves: part.Waves, EfficiencyPercent: part.EfficiencyPercent,
		Grid: part.Grid, GridDim: part.GridDim, GridRule: gridRule(part), FixupNeeded: part.FixupNeeded,
		FixupBlocks: len(part.Fixups)}
	for _, b := range part.Blocks {
		if len(b.Segments) == 0 {
			l.IdleBlocks++
			continue
		}
		bj := blockJSON{Index: b.Index, KBC: b.KBC, KBCStop: b.KBCStop}
		for _, sg := range b.Segments {
			bj.Segments = append(bj.Segments, segmentJSON{Tile: sg.TileIndex, It: sg.Tile.It, Jt: sg.Tile.Jt,
				Channel: sg.Tile.Channel, Sample: sg.Tile.Sample, KB0Start: sg.KB0Start, KB0Stop: sg.KB0Stop, Out: sg.Out.String()})
		}
		m.Blocks = append(m.Blocks, bj)
	}
	tiles := part.Tiles()
	for _, tp := range tiles {
		if tp.Empty {
			m.Tiles.EmptyTiles++
		}
		if tp.Fixup != nil {
			m.Tiles.SplitTiles++
		}
	}
	for _, f := range part.Fixups {
		m.Fixups = append(m.Fixups, fixupJSON{Block: f.Block, Tile: f.TileIndex, Adds: f.Adds, Writes: f.Writes,
			Stale: f.Stale, Formula: tiles[f.TileIndex].Formula()})
	}
	m.Launch = l
	return m, &part
}

// gridRule says in words how launch_mul_mat_q chose the grid.
func gridRule(part streamk.Partition) string {
	switch {
	case !part.StreamK:
		return "config.stream_k is false: conventional grid (nty, ntx, ntzw), one block per tile over the whole K range"
	case !part.Params.NVIDIA:
		return "not NVIDIA: grid = nsm"
	case part.EfficiencyPercent >= 90:
		return "NVIDIA and efficiency >= 90%: grid = ntiles"
	}
	return "NVIDIA and efficiency < 90%: grid = nsm"
}

// dispatchChecks evaluates the predicates ggml's dispatch consults for the op at every
// ne11 in 1..probeLimit, so that the report states the thresholds, not only the verdict.
func dispatchChecks(dev sim.Device, t quant.Type, s tiling.Shape, used int64) []checkJSON {
	tr, _ := t.Traits()
	quantized := tr.Quantized && !tr.Removed
	cc := dev.CC
	mmqNote := fmt.Sprintf("inputs: smpbo %d (MMQ needs >= %d), turing_mma_available %v, highest compiled arch %d (dp4a from %d), fp16 MMA hardware %v",
		dev.SmemPerBlockOptin, 48*1024, dev.TuringMMA(), dev.HighestCompiledArch(), sim.CCDP4A, dev.FP16MMA())
	if sim.CCIsAMD(cc) {
		mmqNote = fmt.Sprintf("inputs: smpbo %d (MMQ needs >= %d), amd_mfma %v (CDNA3: %v), amd_wmma %v (RDNA3: %v)",
			dev.SmemPerBlockOptin, 48*1024, dev.AMDMFMA(), sim.CCIsCDNA3(cc), dev.AMDWMMA(), sim.CCIsRDNA3(cc))
	}
	var cs []checkJSON
	if !s.ID() {
		if !quantized {
			cs = append(cs,
				check("should_use_mmvf", fmt.Sprintf("ggml_cuda_should_use_mmvf(%v, cc=%d, ne11=%d)", t, cc, s.M), s.M,
					func(n int64) bool { return tiling.ShouldUseMMVF(dev, t, s.K, s.N, 1, n) }, ""),
				check("should_use_mmf", fmt.Sprintf("ggml_cuda_should_use_mmf(%v, cc=%d, ne11=%d)", t, cc, s.M), s.M,
					func(n int64) bool { return tiling.ShouldUseMMF(dev, t, dev.WarpSize, s.K, s.N, n, false) }, ""))
		}
		cs = append(cs,
			check("should_use_mmvq", fmt.Sprintf("ggml_cuda_should_use_mmvq(%v, cc=%d, ne11=%d)", t, cc, s.M), s.M,
				func(n int64) bool { return tiling.ShouldUseMMVQ(t, cc, n) },
				fmt.Sprintf("MMVQ_MAX_BATCH_SIZE = %d; mmvq.cu lowers it per type on cc 890, 1200, GB10 and CDNA", tiling.MMVQMaxBatchSize)),
			check("should_use_mmq", fmt.Sprintf("ggml_cuda_should_use_mmq(%v, cc=%d, ne11=%d, n_experts=0)", t, cc, s.M), s.M,
				func(n int64) bool { return tiling.ShouldUseMMQ(dev, t, n, 0) }, mmqNote))
		return cs
	}
	if quantized {
		max := tiling.MMVQMMIDMaxBatch(t, cc)
		lim := int64(min(max, tiling.MMVQMaxBatchSize))
		cs = append(cs, check("mmvq_mmid", fmt.Sprintf("MMVQ for MUL_MAT_ID: tokens=%d <= min(MMVQ_MAX_BATCH_SIZE %d, get_mmvq_mmid_max_batch(%v, cc=%d) %d)", s.M, tiling.MMVQMaxBatchSize, t, cc, max), s.M,
			func(n int64) bool { return n <= lim }, "1 token: mul_mat_vec_q with ids; 2.. tokens: mul_mat_vec_q_moe"))
	}
	cs = append(cs,
		check("should_use_mmq", fmt.Sprintf("ggml_cuda_should_use_mmq(%v, cc=%d, ne11=%d, n_experts=%d)", t, cc, s.M, s.Experts), s.M,
			func(n int64) bool { return tiling.ShouldUseMMQ(dev, t, n, s.Experts) }, mmqNote),
		check("should_use_mmf", fmt.Sprintf("ggml_cuda_should_use_mmf(%v, cc=%d, tokens=%d, mul_mat_id)", t, cc, s.M), s.M,
			func(n int64) bool { return tiling.ShouldUseMMF(dev, t, 32, s.K, s.N, n, true) }, ""))
	return cs
}

// check evaluates pred at ne11 and over 1..probeLimit.
func check(name, call string, ne11 int64, pred func(int64) bool, note string) checkJSON {
	c := checkJSON{Name: name, Call: call, Value: pred(ne11), TrueFor: [][2]int64{}, Note: note}
	start := int64(0)
	for n := int64(1); n <= probeLimit+1; n++ {
		v := n <= probeLimit && pred(n)
		switch {
		case v && start == 0:
			start = n
		case !v && start != 0:
			c.TrueFor = append(c.TrueFor, [2]int64{start, n - 1})
			start = 0
		}
	}
	c.Rule = ruleText(c.TrueFor)
	return c
}

func ruleText(r [][2]int64) string {
	switch {
	case len(r) == 0:
		return "false for every ne11"
	case len(r) == 1 && r[0] == [2]int64{1, probeLimit}:
		return "true for every ne11 (no column threshold on this device)"
	case len(r) == 1 && r[0][0] == 1:
		return fmt.Sprintf("true for ne11 <= %d", r[0][1])
	case len(r) == 1 && r[0][1] == probeLimit:
		return fmt.Sprintf("true for ne11 >= %d", r[0][0])
	}
	var parts []string
	for _, x := range r {
		parts = append(parts, fmt.Sprintf("%d..%d", x[0], x[1]))
	}
	return "true for ne11 in " + strings.Join(parts, ", ")
}

// simulated fills in whether ggsim simulates the bits of the dispatched kernel. For a
// MUL_MAT on mul_mat_q it asks sim/mmq.MakePlan with the full shape; otherwise it asks
// the front door (ggsim.MulMat / MulMatID) with a small probe shape that ggml dispatches
// to the same kernel, zero weights and activations: its error says what is not
// simulated.
func simulated(rep *explainReport, a *explainArgs, d tiling.Decision) {
	if v := rep.MMVQ; v != nil && v.WriteRace != "" {
		rep.NotSimulated = fmt.Sprintf("%v: %s", mmvq.ErrWriteRace, v.WriteRace)
		return
	}
	if d.Kernel == tiling.KernelGP100FP16 {
		fp16Simulated(rep, a)
		return
	}
	if d.Kernel == tiling.KernelMMQ && a.experts == 0 {
		p, err := mmq.MakePlan(a.dev, a.typ, int(a.k), int(a.n), int(a.m))
		if err != nil {
			rep.NotSimulated = err.Error()
			return
		}
		rep.Simulated = true
		rep.SimulatedBy = "sim/mmq, int8-MMA path"
		if p.DP4A {
			rep.SimulatedBy = "sim/mmq, dp4a path"
		}
		return
	}
	err, ok := probe(a, d)
	switch {
	case !ok:
		rep.NotSimulated = fmt.Sprintf("not determined: no small probe shape dispatches to %s like this one", d.Kernel)
	case err == nil:
		rep.Simulated = true
		rep.SimulatedBy = "ggsim." + map[bool]string{false: "MulMat", true: "MulMatID"}[a.experts > 0] + " runs " + d.Kernel.String() + " (checked on a small shape of the same kernel)"
	default:
		rep.NotSimulated = err.Error()
	}
}

// probe runs the front door on a small shape of the same type, device, columns (tokens)
// and experts that ggml dispatches to the same kernel; ok is false if none does or the
// activations would be too large to allocate for a probe.
func probe(a *explainArgs, d tiling.Decision) (err error, ok bool) {
	qk := int64(a.typ.BlockSize())
	// N = 8: a multiple of every rows_per_block, so that the one-token MUL_MAT_ID probe
	// does not hit the shapes on which ggml's kernel races (sim/mmvq.IDWriteRace, which
	// the mmvq plan above reports for the real shape).
	for _, kn := range [][2]int64{{qk, 8}, {max(qk, 512) / qk * qk, 64}} {
		K, N := kn[0], kn[1]
		if K*a.m > 1<<23 || K%qk != 0 {
			continue
		}
		rs, rerr := a.typ.RowSize(K)
		if rerr != nil {
			continue
		}
		E := max(a.experts, 1)
		w := ggsim.Weights{Type: a.typ, K: int(K), N: int(N), Data: make([]byte, rs*N*E)}
		var res ggsim.Result
		if a.experts == 0 {
			res, err = ggsim.MulMat(a.dev, w, make([]float32, K*a.m), int(a.m))
		} else {
			w.E = int(E)
			ids, rerr := routeIDs("all-to-one", 0, int(E), int(a.used), int(a.m))
			if rerr != nil {
				continue
			}
			res, err = ggsim.MulMatID(a.dev, w, make([]float32, K*a.m), 1, int(a.m), ids, int(a.used))
		}
		if res.Decision.Kernel != d.Kernel {
			continue
		}
		return err, true
	}
	return nil, false
}

// writeExplainText prints the report for people.
func writeExplainText(w io.Writer, a *explainArgs, rep *explainReport, part *streamk.Partition) {
	dv := rep.Device
	cc := strconv.Itoa(dv.CC)
	if sim.CCIsAMD(dv.CC) {
		cc += fmt.Sprintf(" = %#x", dv.CC)
	}
	fmt.Fprintf(w, "device: %s (%s, cc %s, %d SMs, warp %d, smpbo %d KiB)\n", dv.Name, dv.Vendor, cc, dv.SMs, dv.WarpSize, dv.Smpbo/1024)
	if a.experts > 0 {
		fmt.Fprintf(w, "op: MUL_MAT_ID %s, K=%d, N=%d, %d experts, %d used per token, %d tokens\n",
			rep.Type, a.k, a.n, a.experts, a.used, a.m)
	} else {
		fmt.Fprintf(w, "op: MUL_MAT %s, K=%d, N=%d, M=%d\n", rep.Type, a.k, a.n, a.m)
	}
	fmt.Fprintf(w, "kernel: %s (%s)\nwhy: %s\n", rep.Kernel, rep.GGMLName, rep.Reason)
	fmt.Fprintf(w, "dispatch checks (each evaluated at ne11 = 1..%d on this device):\n", probeLimit)
	for _, c := range rep.Checks {
		fmt.Fprintf(w, "  %s -> %v; %s\n", c.Call, c.Value, c.Rule)
		if c.Note != "" {
			fmt.Fprintf(w, "      %s\n", c.Note)
		}
	}
	if r := rep.Routing; r != nil {
		how := "given"
		if r.Assumed {
			how = "assumed: no --routing given"
		}
		fmt.Fprintf(w, "routing: %s, seed %d (%s); tokens per expert (col_diff):\n", r.Kind, r.Seed, how)
		writeExpertCols(w, r.ExpertCols, rep.MMQ)
		fmt.Fprintf(w, "  %d of %d experts get no token\n", r.EmptyExperts, len(r.ExpertCols))
	}
	if v := rep.MMVQ; v != nil {
		fmt.Fprintf(w, "mmvq plan: %s\n", v.Plan)
		if v.WriteRace != "" {
			fmt.Fprintf(w, "  ggml races here (result undefined; ggsim refuses): %s\n", v.WriteRace)
		}
	}
	if f := rep.FP16Path; f != nil {
		writeFP16Text(w, f)
	}
	if m := rep.MMQ; m != nil {
		writeMMQText(w, a, rep, m, part)
	}
	if g := rep.GLUFusion; g != nil {
		verdict := "not fused"
		if g.Fused {
			verdict = "fused"
		}
		fmt.Fprintf(w, "as gate/up of {gate, up, GLU} with fusion allowed: %s: %s\n", verdict, g.Reason)
	}
	switch {
	case rep.Simulated:
		fmt.Fprintf(w, "simulated: yes (%s)\n", rep.SimulatedBy)
	case rep.MMQ == nil && rep.MMVQ == nil && rep.FP16Path == nil:
		fmt.Fprintf(w, "simulated: no: %s\n", rep.NotSimulated)
	default:
		fmt.Fprintf(w, "simulated: no (the plan above is ggml's; ggsim does not compute these bits): %s\n", rep.NotSimulated)
	}
}

// writeExpertCols prints col_diff per expert, eight to a line, with the expert's
// non-empty column tiles when mul_mat_q runs.
func writeExpertCols(w io.Writer, cols []int, m *mmqJSON) {
	J := 0
	if m != nil && m.Config != nil {
		J = m.Config.J
	}
	for e := 0; e < len(cols); e += 8 {
		fmt.Fprint(w, " ")
		for i := e; i < min(e+8, len(cols)); i++ {
			if J > 0 {
				fmt.Fprintf(w, " e%d=%d(%d/%d)", i, cols[i], (cols[i]+J-1)/J, m.Tiles.NTX)
			} else {
				fmt.Fprintf(w, " e%d=%d", i, cols[i])
			}
		}
		fmt.Fprintln(w)
	}
	if J > 0 {
		fmt.Fprintf(w, "  (n/ntx: column tiles of J=%d holding tokens out of ntx=%d; the others are empty and skipped)\n", J, m.Tiles.NTX)
	}
}

func writeMMQText(w io.Writer, a *explainArgs, rep *explainReport, m *mmqJSON, part *streamk.Partition) {
	fb := "ne01 % 128 == 0"
	if m.Fallback {
		fb = "ne01 % 128 != 0"
	}
	fmt.Fprintf(w, "mmq table: %s (ggml_cuda_mmq_get_config), fallback=%v (%s), ncols_max=%d\n", m.Table, m.Fallback, fb, m.NColsMax)
	fmt.Fprintf(w, "J search (mul_mat_q_switch_J: J = 8, 16, ..., 128 while the best ntx > 1; keep a J that lowers ntx = ceil(%d/J)):\n", m.NColsMax)
	for _, st := range m.JSearch {
		switch {
		case !st.Available:
			fmt.Fprintf(w, "  J=%-3d no CASE in the table: skipped\n", st.J)
		case st.OverSmpbo:
			fmt.Fprintf(w, "  J=%-3d %s  smem %d B > smpbo %d B: skipped\n", st.J, st.Source, st.NBytesShared, rep.Device.Smpbo)
		default:
			verdict := "not better"
			if st.Chosen {
				verdict = "best so far"
			}
			fmt.Fprintf(w, "  J=%-3d %s  smem %d B  ntx %d  %s\n", st.J, st.Source, st.NBytesShared, st.NTX, verdict)
		}
	}
	if m.J == 0 {
		fmt.Fprintln(w, "  no usable J: ggml aborts (J_best = 0)")
	} else {
		fmt.Fprintf(w, "  => J = %d\n", m.J)
	}
	if c := m.Config; c != nil {
		layout := "dp4a data layout"
		if c.MMADataLayout {
			layout = "MMA data layout"
		}
		fmt.Fprintf(w, "config: %s: CASE(%s, nthreads %d = %d warps, occupancy %d, I %d, J %d, sram %s (stride %d), K_vram %d, stream_k %v, fallback %v); %s; shared memory %d B",
			c.Source, rep.Type, c.NThreads, c.NWarps, c.Occupancy, c.I, c.J, c.SRAMLayout, c.SRAMStride, c.KVRAM, c.StreamK, c.Fallback, layout, c.NBytesShared)
		if c.NativeFP4 {
			fmt.Fprint(w, "; native FP4 activations (block_fp4_mmq)")
		}
		fmt.Fprintln(w)
		t := m.Tiles
		ntzw := "1"
		if a.experts > 0 {
			ntzw = fmt.Sprintf("%d experts", a.experts)
		}
		fmt.Fprintf(w, "tiles: nty = ceil(%d/%d) = %d, ntx = ceil(%d/%d) = %d, ntzw = %s: ntiles = %d; blocks_per_ne00 = %d/%d = %d, blocks_per_iter = %d/%d = %d\n",
			a.n, c.I, t.NTY, m.NColsMax, c.J, t.NTX, ntzw, t.NTiles, a.k, a.typ.BlockSize(), t.BlocksPerNe00, c.KVRAM, a.typ.BlockSize(), t.BlocksPerIter)
	}
	if l := m.Launch; l != nil {
		if l.StreamK {
			fmt.Fprintf(w, "launch: stream-K: waves = ceil(%d/%d) = %d, efficiency = 100*%d/(%d*%d) = %d%%; %s: grid %d\n",
				m.Tiles.NTiles, rep.Device.SMs, l.Waves, m.Tiles.NTiles, rep.Device.SMs, l.Waves, l.EfficiencyPercent, l.GridRule, l.Grid)
		} else {
			fmt.Fprintf(w, "launch: %s: grid (%d, %d, %d)\n", l.GridRule, l.GridDim[0], l.GridDim[1], l.GridDim[2])
		}
		fix := "no fixup kernel (ntiles % grid == 0)"
		if l.FixupNeeded {
			fix = fmt.Sprintf("fixup kernel launched (ntiles %% grid != 0): %d of %d tiles split over several blocks, %d fixup block(s) add partials", m.Tiles.SplitTiles, m.Tiles.NTiles, l.FixupBlocks)
		}
		if !l.StreamK {
			fix = "no fixup"
		}
		fmt.Fprintf(w, "fixup: %s\n", fix)
		if a.experts > 0 {
			fmt.Fprintf(w, "empty tiles (no token of their expert in columns jt*J..): %d of %d, skipped but keeping their place in the kbc space\n", m.Tiles.EmptyTiles, m.Tiles.NTiles)
		}
	}
	if m.Error != "" {
		fmt.Fprintf(w, "launch: cannot be planned: %s\n", m.Error)
	}
	if part != nil {
		fmt.Fprintln(w, "partition (P<b>: block b's partial sum over its k range; k in weight blocks):")
		writeTrimmed(w, part.String(), a.blocks)
	}
}

// writeTrimmed indents the partition's text and lists at most limit "block" and limit
// "fixup block" lines (0: all), saying how many were left out.
func writeTrimmed(w io.Writer, s string, limit int) {
	var blocks, fixups, leftBlocks, leftFixups int
	flush := func() {
		if leftBlocks > 0 {
			fmt.Fprintf(w, "  ... %d more block(s) (--blocks 0 lists all, --json has every one)\n", leftBlocks)
			leftBlocks = 0
		}
	}
	for _, line := range strings.Split(strings.TrimRight(s, "\n"), "\n") {
		switch {
		case strings.HasPrefix(line, "block "):
			blocks++
			if limit > 0 && blocks > limit {
				leftBlocks++
				continue
			}
		case strings.HasPrefix(line, "fixup block "):
			flush()
			fixups++
			if limit > 0 && fixups > limit {
				leftFixups++
				continue
			}
		default:
			flush()
		}
		fmt.Fprintln(w, "  "+line)
	}
	flush()
	if leftFixups > 0 {
		fmt.Fprintf(w, "  ... %d more fixup block(s)\n", leftFixups)
	}
}

const devicesHelp = `usage: simrun devices [--json]

devices lists the device catalog (package sim): the names --device takes, each device's
vendor, compute capability as ggml computes it, SM count, warp size, shared memory per
block (opt-in), whether it has dp4a and int8 MMA, and where the numbers come from.

flags:
  --json    one JSON object {"devices": [...]} (docs/json.md)

example:
  simrun devices
  simrun devices --json

Exit status: 0 (2 for a usage error).
`

var devicesCLI = cli{name: "devices", help: func() string { return devicesHelp }}

type deviceEntry struct {
	Name     string `json:"name"`
	Vendor   string `json:"vendor"`
	CC       int    `json:"cc"`
	SMs      int    `json:"sms"`
	WarpSize int    `json:"warp_size"`
	Smpbo    int    `json:"smpbo"`
	DP4A     bool   `json:"dp4a"`
	Int8MMA  bool   `json:"int8_mma"`
	Source   string `json:"source"`
}

func cmdDevices(args []string, stdout, stderr io.Writer) int {
	fl := flag.NewFlagSet("devices", flag.ContinueOnError)
	asJSON := fl.Bool("json", false, "")
	if _, code, ok := devicesCLI.parse(fl, args, stdout, stderr); !ok {
		return code
	}
	if *asJSON {
		var r struct {
			Devices []deviceEntry `json:"devices"`
		}
		for _, d := range sim.Catalog() {
			r.Devices = append(r.Devices, deviceEntry{d.Name, string(d.Vendor), d.CC, d.SMCount, d.WarpSize,
				d.SmemPerBlockOptin, d.DP4A, d.Int8MMA, d.Source})
		}
		return devicesCLI.writeJSON(stdout, stderr, r, exitOK)
	}
	for _, d := range sim.Catalog() {
		fmt.Fprintf(stdout, "%-14s %-8s cc %-8d %4d SMs  warp %2d  smpbo %3d KiB  dp4a=%-5v int8mma=%-5v  %s\n",
			d.Name, d.Vendor, d.CC, d.SMCount, d.WarpSize, d.SmemPerBlockOptin/1024, d.DP4A, d.Int8MMA, d.Source)
	}
	return exitOK
}
