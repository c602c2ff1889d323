package main

import (
	"cmp"
	"encoding/binary"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strings"

	"github.com/ggsim/ggsim"
	"github.com/ggsim/ggsim/gguf"
	"github.com/ggsim/ggsim/oracle"
	"github.com/ggsim/ggsim/oracle/oracletest"
	"github.com/ggsim/ggsim/quant"
	"github.com/ggsim/ggsim/sim"
	"github.com/ggsim/ggsim/tiling"
)

const runHelp = `usage: simrun run --type T --shape K,N,M [--seed S] [--device NAME] [--experts E,U [--routing R]] [--json]
       simrun run --gguf MODEL.gguf (--tensor NAME | --all-tensors) [--batch M] [--acts FILE]
                  [--used U] [--routing R] [--seed S] [--device NAME] [--json]

run computes one matmul the way ggml's CUDA backend (commit d99724f2b141) would on the
device, through ggsim's front door (ggsim.MulMat, ggsim.MulMatID), and judges the result
against the fp64 reference of package oracle: NMSE, relative RMS, the largest distance in
float32 ulps from the fp64 value rounded to float32, the bound a correct kernel must stay
within (oracle.MulMatRefOn: the kernel bound of docs/bounds.md) and whether every output
is within it. It also prints the
kernel ggml dispatches to and why.

The weights are either generated with the statistics of a trained model (heavy-tailed,
per-row scale spread, outlier input channels; quantized by ggml's reference quantizer of
the type, random valid blocks for types without one) or read from a GGUF model file. The
activations are generated like an RMS norm's output with outlier dimensions, or read with
--acts. The generators are documented in package oracle/oracletest (RealisticWeights,
RealisticActivations).

flags:
  --type T         ggml type of the generated weights: {{types}}  [q4_K]
  --shape K,N,M    K values per weight row, N rows, M activation columns (tokens)
                   [4096,4096,1]
  --seed S         seed of the generated weights, activations and routing  [1]
  --device NAME    a device of the catalog (simrun devices): {{devices}}
                   (case, spaces, '-' and '_' ignored)  [H200]
  --experts E,U    MUL_MAT_ID: E experts of N rows each, U used per token (activations
                   broadcast to every slot)
  --routing R      how tokens pick experts: uniform, hot, sparse, all-to-one  [uniform]
  --acts FILE      activations: raw little-endian float32, K*M values, column after column
                   (a token after token)  [generated]
  --gguf FILE      read the weights from this GGUF model file (v2 or v3)
  --tensor NAME    the weight tensor of --gguf to run: a 2-D matrix (K = ne0, N = ne1) as a
                   MUL_MAT, a 3-D expert tensor (E = ne2) as a MUL_MAT_ID
  --all-tensors    run every 2-D and 3-D quantized weight tensor of --gguf, one line each,
                   then a summary (progress on stderr when it is a terminal)
  --batch M        activation columns (tokens) with --gguf  [1]
  --used U         experts used per token for a 3-D expert tensor  [the model's
                   <arch>.expert_used_count]
  --json           one JSON object (schema: docs/run-json.md)

example:
  simrun run --type q4_K --shape 4096,4096,16 --seed 1
  simrun run --type q6_K --shape 4096,14336,1 --device "RTX 4090"
  simrun run --type q4_K --shape 2048,768,64 --experts 8,2 --routing hot
  simrun run --gguf model.gguf --tensor blk.0.attn_q.weight --batch 8
  simrun run --gguf model.gguf --tensor blk.0.ffn_up_exps.weight --batch 32 --routing hot
  simrun run --gguf model.gguf --all-tensors --batch 1

Exit status: 0 when every output is within its bound, 1 when one is not or the case is not
simulated (an unsupported type or kernel), 2 for a usage error, 3 when an input file is
missing or unreadable (not GGUF, corrupt, wrong size).
`

func runHelpText() string {
	var devs, types []string
	for _, d := range sim.Catalog() {
		n := d.Name
		if strings.Contains(n, " ") {
			n = `"` + n + `"`
		}
		devs = append(devs, n)
	}
	for t := quant.Type(0); t < quant.TypeCount; t++ {
		if t.Valid() && tiling.SupportsMulMat(t) && t.BlockSize() > 1 {
			types = append(types, t.String())
		}
	}
	r := strings.NewReplacer("{{devices}}", wrap(devs, 62), "{{types}}", wrap(types, 56))
	return r.Replace(runHelp)
}

type runArgs struct {
	dev              sim.Device
	typ              quant.Type
	k, n, m          int
	seed             uint64
	experts, used    int
	routing          string
	ggufPath, tensor string
	allTensors       bool
	actsPath         string
	json             bool
}

func parseRun(args []string) (*runArgs, error) {
	fl := flag.NewFlagSet("run", flag.ContinueOnError)
	fl.SetOutput(io.Discard)
	devName := fl.String("device", "H200", "")
	typName := fl.String("type", "q4_K", "")
	shape := fl.String("shape", "4096,4096,1", "")
	seed := fl.Uint64("seed", 1, "")
	experts := fl.String("experts", "", "")
	routing := fl.String("routing", "uniform", "")
	ggufPath := fl.String("gguf", "", "")
	tensor := fl.String("tensor", "", "")
	all := fl.Bool("all-tensors", false, "")
	batch := fl.Int("batch", 1, "")
	used := fl.Int("used", 0, "")
	acts := fl.String("acts", "", "")
	asJSON := fl.Bool("json", false, "")
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
	a := &runArgs{seed: *seed, routing: *routing, ggufPath: *ggufPath, tensor: *tensor,
		allTensors: *all, actsPath: *acts, json: *asJSON}
	if a.dev, err = sim.Lookup(*devName); err != nil {
		return nil, usageErr{"--device: " + err.Error()}
	}
	if a.ggufPath != "" {
		for _, f := range []string{"type", "shape", "experts"} {
			if set[f] {
				return nil, usagef("--%s is for generated weights; with --gguf the file gives the type and shape (--batch sets M)", f)
			}
		}
		if _, err := routeIDs(a.routing, 0, 1, 1, 1); err != nil {
			return nil, usageErr{"--routing: " + err.Error()}
		}
		if set["used"] && (*used < 1 || *used > 1024) {
			return nil, usagef("--used %d: want 1..1024", *used)
		}
		a.used = *used
		if (a.tensor != "") == a.allTensors {
			return nil, usagef("--gguf needs exactly one of --tensor NAME and --all-tensors")
		}
		if *batch < 1 || *batch > 1<<16 {
			return nil, usagef("--batch %d: want 1..65536", *batch)
		}
		if a.allTensors && a.actsPath != "" {
			return nil, usagef("--acts fits one tensor's K: use it with --tensor, not --all-tensors")
		}
		a.m = *batch
		return a, nil
	}
	for _, f := range []string{"tensor", "all-tensors", "batch", "used"} {
		if set[f] {
			return nil, usagef("--%s needs --gguf FILE", f)
		}
	}
	if a.typ, err = quant.ParseType(*typName); err != nil {
		return nil, usageErr{"--type: " + err.Error()}
	}
	v, err := parseInts(*shape, 3)
	if err != nil {
		return nil, usagef("--shape %q: %v (want K,N,M, e.g. 4096,4096,16)", *shape, err)
	}
	if v[0] <= 0 || v[1] <= 0 || v[2] <= 0 || v[0] > 1<<20 || v[1] > 1<<20 || v[2] > 1<<16 {
		return nil, usagef("--shape %q: want 0 < K, N <= 1048576 and 0 < M <= 65536", *shape)
	}
	a.k, a.n, a.m = int(v[0]), int(v[1]), int(v[2])
	if _, err := a.typ.RowSize(int64(a.k)); err != nil {
		return nil, usagef("--shape: K=%d: %v", a.k, err)
	}
	if *experts != "" {
		e, err := parseInts(*experts, -1)
		if err != nil || len(e) > 2 {
			return nil, usagef("--experts %q: want E,U (experts, experts used per token) or E", *experts)
		}
		a.experts, a.used = int(e[0]), 1
		if len(e) == 2 {
			a.used = int(e[1])
		}
		if a.experts < 1 || a.used < 1 || a.used > a.experts || a.experts > 1024 {
			return nil, usagef("--experts %q: want 1 <= U <= E <= 1024", *experts)
		}
		if _, err := routeIDs(a.routing, 0, 1, 1, 1); err != nil {
			return nil, usageErr{"--routing: " + err.Error()}
		}
	} else if set["routing"] {
		return nil, usagef("--routing needs --experts E,U")
	}
	if int64(a.k)*int64(a.n)*int64(max(a.experts, 1)) > 1<<28 {
		return nil, usagef("--shape %q: K*N*E above 2^28 weights is too large to generate", *shape)
	}
	return a, nil
}

// inputErr is an input file that cannot be read or is not what it must be: exit 3.
type inputErr struct{ err error }

func (e inputErr) Error() string { return e.err.Error() }
func (e inputErr) Unwrap() error { return e.err }

// runResult is one verdict; its JSON form is documented in docs/run-json.md.
type runResult struct {
	Device  string   `json:"device"`
	Op      string   `json:"op"`
	Tensor  string   `json:"tensor,omitempty"`
	Type    string   `json:"type"`
	K       int      `json:"k"`
	N       int      `json:"n"`
	M       int      `json:"m"`
	Experts int      `json:"experts,omitempty"`
	Used    int      `json:"used,omitempty"`
	Routing string   `json:"routing,omitempty"`
	Seed    uint64   `json:"seed"`
	Acts    string   `json:"acts"`
	Kernel  string   `json:"kernel,omitempty"`
	Reason  string   `json:"reason,omitempty"`
	Status  string   `json:"status"`
	Error   string   `json:"error,omitempty"`
	Verdict *verdict `json:"verdict,omitempty"`
}

// verdict is the output against the fp64 reference. Non-finite values are null in JSON.
type verdict struct {
	N          int      `json:"n"`
	Outside    int      `json:"outside"`
	FirstOut   int      `json:"first_outside"`
	Within     bool     `json:"within_bound"`
	NMSE       *float64 `json:"nmse"`
	RelRMS     *float64 `json:"rel_rms"`
	MaxAbs     *float64 `json:"max_abs"`
	MaxULP     int64    `json:"max_ulp"`
	MedianULP  int64    `json:"median_ulp"`
	MaxBound   *float64 `json:"max_bound"`
	WorstRatio *float64 `json:"worst_bound_ratio"`
	NonFinite  int      `json:"non_finite"`
}

func finite(x float64) *float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return nil
	}
	return &x
}

const (
	statusWithin      = "within-bound"
	statusOutside     = "OUTSIDE-BOUND"
	statusUnsupported = "UNSUPPORTED"
	statusError       = "ERROR"
)

func cmdRun(args []string, stdout, stderr io.Writer) int {
	a, err := parseRun(args)
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprint(stdout, runHelpText())
		return 0
	}
	if err != nil {
		fmt.Fprintf(stderr, "simrun run: %v\nrun 'simrun run -h' for the flags\n", err)
		return 2
	}
	if a.ggufPath != "" {
		return runGGUF(a, stdout, stderr)
	}
	var acts []float32
	if a.actsPath != "" {
		if acts, err = readActs(a.actsPath, a.k, a.m); err != nil {
			fmt.Fprintf(stderr, "simrun run: %v\n", err)
			return 3
		}
	}
	w, err := oracletest.RealisticWeights(a.typ, a.k, a.n*max(a.experts, 1), a.seed)
	if err != nil {
		fmt.Fprintf(stderr, "simrun run: %v\n", err)
		return 1
	}
	res, _ := runOne(a, "", a.typ, w, a.k, a.n, acts)
	return report(a, []*runResult{res}, stdout, stderr)
}

// runOne runs weights w (N rows of K values of t, times a.experts) with activations from
// acts (nil: generated from a.seed) and judges the result. A case that cannot be run or
// judged has status UNSUPPORTED (err wraps errors.ErrUnsupported: a type or kernel ggsim
// does not simulate) or ERROR, and err is also returned.
func runOne(a *runArgs, name string, t quant.Type, w []byte, K, N int, acts []float32) (*runResult, error) {
	r := &runResult{Device: a.dev.Name, Op: "MUL_MAT", Tensor: name, Type: t.String(), K: K, N: N, M: a.m, Seed: a.seed, Acts: "generated"}
	if acts == nil {
		acts = oracletest.RealisticActivations(K, a.m, a.seed)
	} else {
		r.Acts = a.actsPath
	}
	var (
		res ggsim.Result
		err error
		ids []int32
	)
	weights := ggsim.Weights{Type: t, K: K, N: N, Data: w}
	if a.experts > 0 {
		r.Op, r.Experts, r.Used, r.Routing = "MUL_MAT_ID", a.experts, a.used, a.routing
		ids, err = routeIDs(a.routing, a.seed, a.experts, a.used, a.m)
		if err == nil {
			weights.E = a.experts
			res, err = ggsim.MulMatID(a.dev, weights, acts, 1, a.m, ids, a.used)
		}
	} else {
		res, err = ggsim.MulMat(a.dev, weights, acts, a.m)
	}
	r.Kernel, r.Reason = res.Decision.Kernel.String(), res.Decision.Reason
	if err != nil {
		err = fmt.Errorf("%s weights: %w", t, err)
		r.Status, r.Error = statusError, err.Error()
		if errors.Is(err, errors.ErrUnsupported) {
			r.Status = statusUnsupported
		}
		return r, err
	}
	v, err := judgeRun(a.dev, t, w, K, N, acts, a.m, res.Out, ids, a.used)
	if err != nil {
		err = fmt.Errorf("fp64 reference of %s weights: %w", t, err)
		r.Status, r.Error = statusError, err.Error()
		if errors.Is(err, errors.ErrUnsupported) {
			r.Status = statusUnsupported
		}
		return r, err
	}
	r.Verdict = v
	r.Status = statusWithin
	if !v.Within {
		r.Status = statusOutside
	}
	return r, nil
}

// judgeRun compares out with the fp64 reference and the kernel bound of the path ggml
// takes on dev (oracle.MulMatRefOn; for MUL_MAT_ID, ids != nil, oracle.MulMatIDRefOn
// with the activations broadcast, B1 = 1). It judges a block of columns (tokens) at a
// time (oracle.MulMatRefOnCols, MulMatIDRefOnTokens): the reference is three float64 per
// output, six times the outputs' own size, and is never held whole. out is overwritten: each element, once
// judged, holds its ulp distance (see ulpBits).
func judgeRun(dev sim.Device, t quant.Type, w []byte, K, N int, acts []float32, M int, out []float32, ids []int32, U int) (*verdict, error) {
	j := newJudge(len(out))
	if ids == nil {
		cols := max(1, judgeBlock/N)
		err := oracle.MulMatRefOnCols(dev, t, w, K, N, acts, M, cols, func(j0, j1 int, ref *oracle.Reference) error {
			j.add(j0*N, out[j0*N:j1*N], ref)
			return nil
		})
		if err != nil {
			return nil, err
		}
		return j.verdict(out), nil
	}
	rs, err := t.RowSize(int64(K))
	if err != nil {
		return nil, err
	}
	toks := max(1, judgeBlock/(U*N))
	err = oracle.MulMatIDRefOnTokens(dev, t, w, K, N, len(w)/(int(rs)*N), acts, 1, len(ids)/U, ids, U, toks, func(t0, t1 int, ref *oracle.Reference) error {
		j.add(t0*U*N, out[t0*U*N:t1*U*N], ref)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return j.verdict(out), nil
}

// judgeBlock is the number of outputs whose reference judgeRun holds at a time (6 MB).
const judgeBlock = 1 << 18

// judge accumulates a verdict over consecutive parts of a result, in order.
type judge struct {
	v               verdict
	errs            oracle.ErrorSums
	maxBound, worst float64
}

func newJudge(n int) *judge { return &judge{v: verdict{N: n, FirstOut: -1}} }

// add judges out, the outputs from index off on, against ref (the same length), and
// overwrites each with its ulp distance from the fp64 value rounded to float32.
func (j *judge) add(off int, out []float32, ref *oracle.Reference) {
	outside, first := ref.WithinBound(out)
	if outside > 0 && j.v.Outside == 0 {
		j.v.FirstOut = off + first
	}
	j.v.Outside += outside
	j.errs.Add(out, ref.Value)
	center := ref.Value // |out - center| is what the bound bounds
	if ref.Center != nil {
		center = ref.Center
	}
	for i, g := range out {
		u := oracle.ULPDistance(g, float32(ref.Value[i]))
		j.v.MaxULP = max(j.v.MaxULP, u)
		j.maxBound = max(j.maxBound, ref.Bound[i])
		d := math.Abs(float64(g) - center[i])
		if ref.Bound[i] > 0 {
			j.worst = max(j.worst, d/ref.Bound[i])
		} else if d > 0 {
			j.worst = math.Inf(1)
		}
		out[i] = math.Float32frombits(ulpBits(u))
	}
}

// ulpBits stores an ulp distance in 32 bits: distances between float32 values are below
// 2^32-1 (at most 2·0x7f7fffff+1 from -Inf to +Inf), and math.MaxInt64 (a NaN) becomes
// 2^32-1.
func ulpBits(u int64) uint32 { return uint32(min(u, math.MaxUint32)) }

// verdict finishes the verdict; ulps is the judged output, holding ulp distances (add).
// Its order is lost: the median is taken by sorting it in place.
func (j *judge) verdict(ulps []float32) *verdict {
	v := j.v
	v.Within = v.Outside == 0
	e := j.errs.Errors()
	v.NMSE, v.RelRMS, v.MaxAbs, v.NonFinite = finite(e.NMSE), finite(e.RelRMS), finite(e.MaxAbs), e.NonFinite
	v.MaxBound, v.WorstRatio = finite(j.maxBound), finite(j.worst)
	// Sorted by bits: a float32 copy keeps its bits, NaN patterns included.
	slices.SortFunc(ulps, func(a, b float32) int { return cmp.Compare(math.Float32bits(a), math.Float32bits(b)) })
	med := int64(math.Float32bits(ulps[len(ulps)/2]))
	if med == math.MaxUint32 {
		med = math.MaxInt64
	}
	v.MedianULP = med
	return &v
}

// runGGUF runs --tensor or --all-tensors of a model file.
func runGGUF(a *runArgs, stdout, stderr io.Writer) int {
	f, err := gguf.Open(a.ggufPath)
	if err != nil {
		fmt.Fprintf(stderr, "simrun run: %v\n", err)
		return 3
	}
	defer f.Close()
	if !a.allTensors {
		ti, ok := f.Tensor(a.tensor)
		if !ok {
			fmt.Fprintf(stderr, "simrun run: %s has no tensor %q\n", a.ggufPath, a.tensor)
			return 2
		}
		res, err := runTensor(a, f, ti)
		if err != nil {
			fmt.Fprintf(stderr, "simrun run: %v\n", err)
			var ie inputErr
			if errors.As(err, &ie) {
				return 3
			}
			return 1
		}
		return report(a, []*runResult{res}, stdout, stderr)
	}
	var todo []gguf.TensorInfo
	for _, ti := range f.Tensors {
		if (len(ti.Dims) == 2 || len(ti.Dims) == 3) && ti.Type.BlockSize() > 1 {
			todo = append(todo, ti)
		}
	}
	if len(todo) == 0 {
		fmt.Fprintf(stderr, "simrun run: %s has no 2-D or 3-D quantized weight tensor\n", a.ggufPath)
		return 1
	}
	progress := isTerminal(stderr)
	var results []*runResult
	for i, ti := range todo {
		if progress {
			fmt.Fprintf(stderr, "\r\033[K[%d/%d] %s %v %dx%d", i+1, len(todo), ti.Name, ti.Type, ti.Dims[0], ti.Dims[1])
		}
		res, err := runTensor(a, f, ti)
		if err != nil {
			var ie inputErr
			if errors.As(err, &ie) {
				if progress {
					fmt.Fprint(stderr, "\r\033[K")
				}
				fmt.Fprintf(stderr, "simrun run: %v\n", err)
				return 3
			}
			// Not runnable (too large, no expert count): a result line, and the rest go on.
			res = &runResult{Device: a.dev.Name, Op: "MUL_MAT", Tensor: ti.Name, Type: ti.Type.String(), K: int(ti.Dims[0]), N: int(ti.Dims[1]),
				M: a.m, Seed: a.seed, Status: statusError, Error: err.Error()}
			if len(ti.Dims) == 3 {
				res.Op, res.Experts = "MUL_MAT_ID", int(ti.Dims[2])
			}
			if errors.Is(err, errors.ErrUnsupported) {
				res.Status = statusUnsupported
			}
		}
		results = append(results, res)
		if !a.json {
			if progress {
				fmt.Fprint(stderr, "\r\033[K")
			}
			fmt.Fprintln(stdout, resultLine(res))
		}
	}
	if progress {
		fmt.Fprint(stderr, "\r\033[K")
	}
	return report(a, results, stdout, stderr)
}

// runTensor runs one tensor of f: a 2-D matrix as a MUL_MAT, a 3-D expert tensor as a
// MUL_MAT_ID. Another tensor is an error wrapping ErrUnsupported; unreadable data or
// activations an inputErr. A type the simulator does not run is a result with status
// UNSUPPORTED (see runOne), not an error.
func runTensor(a *runArgs, f *gguf.File, ti gguf.TensorInfo) (*runResult, error) {
	if len(ti.Dims) != 2 && len(ti.Dims) != 3 {
		return nil, fmt.Errorf("tensor %q has %d dimensions %v: run takes a 2-D weight matrix (K = ne0, N = ne1) or a 3-D expert tensor (E = ne2): %w", ti.Name, len(ti.Dims), ti.Dims, errors.ErrUnsupported)
	}
	K, N := ti.Dims[0], ti.Dims[1]
	a2 := *a
	a2.experts = 0
	if len(ti.Dims) == 3 {
		E := ti.Dims[2]
		U := int64(a.used)
		if U == 0 {
			var err error
			if U, err = expertUsedCount(f); err != nil {
				return nil, fmt.Errorf("tensor %q holds %d experts: %v; give --used U", ti.Name, E, err)
			}
		}
		if E < 1 || E > 1024 || U < 1 || U > E {
			return nil, fmt.Errorf("tensor %q: %d experts, %d used per token: want 1 <= used <= experts <= 1024", ti.Name, E, U)
		}
		a2.experts, a2.used = int(E), int(U)
	}
	a = &a2
	if K > math.MaxInt32 || N > math.MaxInt32 || K*int64(a.m) > 1<<31 {
		return nil, fmt.Errorf("tensor %q: %dx%d with batch %d is too large", ti.Name, K, N, a.m)
	}
	var acts []float32
	if a.actsPath != "" {
		var err error
		if acts, err = readActs(a.actsPath, int(K), a.m); err != nil {
			return nil, inputErr{err}
		}
	}
	data, err := f.TensorData(ti.Name)
	if err != nil {
		return nil, inputErr{fmt.Errorf("%s: tensor %q: %w", a.ggufPath, ti.Name, err)}
	}
	res, _ := runOne(a, ti.Name, ti.Type, data, int(K), int(N), acts)
	return res, nil
}

// expertUsedCount returns the model's <general.architecture>.expert_used_count.
func expertUsedCount(f *gguf.File) (int64, error) {
	arch, err := gguf.Get[string](f, "general.architecture")
	if err != nil {
		return 0, fmt.Errorf("general.architecture: %w", err)
	}
	key := arch + ".expert_used_count"
	v, ok := f.Lookup(key)
	if !ok {
		return 0, fmt.Errorf("the file has no %s", key)
	}
	for _, u := range []func(gguf.Value) (int64, bool){
		func(v gguf.Value) (int64, bool) { x, ok := gguf.As[uint32](v); return int64(x), ok },
		func(v gguf.Value) (int64, bool) { x, ok := gguf.As[int32](v); return int64(x), ok },
		func(v gguf.Value) (int64, bool) { x, ok := gguf.As[uint64](v); return int64(x), ok },
	} {
		if x, ok := u(v); ok {
			return x, nil
		}
	}
	return 0, fmt.Errorf("%s is not an integer", key)
}

// readActs reads K*M little-endian float32 values.
func readActs(path string, K, M int) ([]float32, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if want := 4 * K * M; len(b) != want {
		return nil, fmt.Errorf("--acts %s: %d bytes, want %d (K=%d times M=%d float32)", path, len(b), want, K, M)
	}
	x := make([]float32, K*M)
	for i := range x {
		x[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return x, nil
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// resultLine is the one-line report of r.
func resultLine(r *runResult) string {
	var b strings.Builder
	if r.Tensor != "" {
		fmt.Fprintf(&b, "%s: ", r.Tensor)
	}
	fmt.Fprintf(&b, "%s %s K=%d N=%d M=%d", r.Op, r.Type, r.K, r.N, r.M)
	if r.Experts > 0 {
		fmt.Fprintf(&b, " E=%d", r.Experts)
	}
	if r.Used > 0 {
		fmt.Fprintf(&b, " U=%d %s", r.Used, r.Routing)
	}
	if r.Kernel != "" {
		fmt.Fprintf(&b, " [%s]", r.Kernel)
	}
	fmt.Fprintf(&b, ": %s", r.Status)
	if v := r.Verdict; v != nil {
		fmt.Fprintf(&b, " (%d/%d outside; nmse %s, rel rms %s, ulp max %d median %d, worst |err|/bound %s)",
			v.Outside, v.N, num(v.NMSE), num(v.RelRMS), v.MaxULP, v.MedianULP, num(v.WorstRatio))
	}
	if r.Error != "" {
		fmt.Fprintf(&b, ": %s", r.Error)
	}
	return b.String()
}

func num(p *float64) string {
	if p == nil {
		return "non-finite"
	}
	return fmt.Sprintf("%.3g", *p)
}

// runSummary is the --all-tensors summary.
type runSummary struct {
	Tensors     int  `json:"tensors"`
	Within      int  `json:"within_bound"`
	Outside     int  `json:"outside_bound"`
	Unsupported int  `json:"unsupported"`
	Errors      int  `json:"errors"`
	OK          bool `json:"ok"`
}

// report prints the results (one verbose verdict, or with --all-tensors the summary;
// --json one object) and returns the exit status.
func report(a *runArgs, results []*runResult, stdout, stderr io.Writer) int {
	var s runSummary
	for _, r := range results {
		s.Tensors++
		switch r.Status {
		case statusWithin:
			s.Within++
		case statusOutside:
			s.Outside++
		case statusUnsupported:
			s.Unsupported++
		default:
			s.Errors++
		}
	}
	s.OK = s.Within == s.Tensors
	code := 0
	if !s.OK {
		code = 1
	}
	if a.json {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		var v any = results[0]
		if a.allTensors {
			v = struct {
				Model   string       `json:"model"`
				Results []*runResult `json:"results"`
				Summary runSummary   `json:"summary"`
			}{a.ggufPath, results, s}
		}
		if err := enc.Encode(v); err != nil {
			fmt.Fprintf(stderr, "simrun run: %v\n", err)
			return 1
		}
		if !a.allTensors && results[0].Error != "" {
			fmt.Fprintf(stderr, "simrun run: %s\n", results[0].Error)
		}
		return code
	}
	if a.allTensors {
		fmt.Fprintf(stdout, "run: %d/%d tensors within their bound (%d outside, %d unsupported, %d errors)\n",
			s.Within, s.Tensors, s.Outside, s.Unsupported, s.Errors)
		return code
	}
	writeRunText(stdout, results[0])
	if code != 0 && results[0].Error != "" {
		fmt.Fprintf(stderr, "simrun run: %s\n", results[0].Error)
	}
	return code
}

func writeRunText(w io.Writer, r *runResult) {
	fmt.Fprintf(w, "device:  %s\n", r.Device)
	if r.Tensor != "" {
		fmt.Fprintf(w, "tensor:  %s\n", r.Tensor)
	}
	fmt.Fprintf(w, "op:      %s %s, K=%d, N=%d, M=%d", r.Op, r.Type, r.K, r.N, r.M)
	if r.Experts > 0 {
		fmt.Fprintf(w, ", %d experts, %d used per token, routing %s", r.Experts, r.Used, r.Routing)
	}
	fmt.Fprintf(w, "\ndata:    weights %s, activations %s, seed %d\n", map[bool]string{true: "from the file", false: "generated (model-like)"}[r.Tensor != ""], r.Acts, r.Seed)
	if r.Kernel != "" {
		fmt.Fprintf(w, "kernel:  %s: %s\n", r.Kernel, r.Reason)
	}
	if v := r.Verdict; v != nil {
		fmt.Fprintf(w, "fp64:    nmse %s, relative rms %s, max |err| %s\n", num(v.NMSE), num(v.RelRMS), num(v.MaxAbs))
		fmt.Fprintf(w, "ulp:     max %d, median %d vs fp64 rounded to float32 (the max is large where an output is near 0)\n", v.MaxULP, v.MedianULP)
		fmt.Fprintf(w, "bound:   largest %s, worst |err|/bound %s; %d of %d outputs outside\n", num(v.MaxBound), num(v.WorstRatio), v.Outside, v.N)
	}
	fmt.Fprintf(w, "verdict: %s", r.Status)
	if r.Error != "" {
		fmt.Fprintf(w, ": %s", r.Error)
	}
	fmt.Fprintln(w)
}
