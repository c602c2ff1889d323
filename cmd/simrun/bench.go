package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/ggsim/ggsim"
	"github.com/ggsim/ggsim/gpu/ggml"
	"github.com/ggsim/ggsim/quant"
	"github.com/ggsim/ggsim/sim"
)

const benchHelp = `usage: simrun bench [--ggml DIR] [--threads N] [--reps R] [--only REGEXP] [--k K --n N] [--json]

bench times the simulator (ggsim.MulMat / ggsim.MulMatID on the H200 model, bit-exact)
and, with --ggml, the same matmuls through ggml's own CPU backend loaded at run time
from a ggml build, on the same data and the same number of threads, repetitions of the
two interleaved (ggml, simulator, ggml, simulator, ...). It prints per shape the median
and the spread (min-max) of each, the ratio of the medians (simulator / ggml) and the
ratio of the fastest runs (min/min: the least disturbed, on a shared machine).

Shapes (the names of the Go benchmarks in sim/mmvq and sim/mmq): MUL_MAT of N rows of K
weights of q4_K, q6_K, q8_0 and iq4_xs by M = 1 and 8 columns (mul_mat_vec_q on the
GPU) and M = 512 (mul_mat_q), and a MUL_MAT_ID of 8 experts of N x K q4_K weights, 512
tokens each routed to 2 experts (uniform, seeded). The weights are 16 distinct
reference-quantized Gaussian rows repeated, the activations Gaussian.

ggml's time is ggml_backend_graph_compute of a graph built and uploaded once (its
quantization of the activations included; allocation and upload not); one untimed ggml
run comes first. The simulator's time is the whole front-door call.

The ggml backend needs a simrun built with -tags cuda and cgo (gpu/ggml loads ggml with
dlopen through cgo; no CUDA is needed for the CPU backend):
  go build -tags cuda -o simrun ./cmd/simrun

flags:
  --ggml DIR      a ggml build's library directory (libggml-base.so, libggml-cpu.so,
                  libggml.so); without it only the simulator runs
  --threads N     ggml's CPU threads and the simulator's GOMAXPROCS and workers
                  [the number of CPUs]
  --reps R        repetitions of each side per shape  [3]
  --only REGEXP   run only the shapes whose name matches
  --k K, --n N    the weights' shape  [4096, 14336]
  --json          one JSON object instead of the table

example:
  go build -tags cuda -o simrun ./cmd/simrun
  simrun bench --ggml ../ggml/build/bin --threads 2 --reps 3 --only 'q4_K.*m=(1|8)$'

Exit status: 0 when every shape ran, 1 when one failed (or --ggml in a build without the
cuda tag), 2 for a usage error.
`

type benchArgs struct {
	ggmlDir       string
	threads, reps int
	only          *regexp.Regexp
	k, n          int
	json          bool
}

func parseBench(args []string) (*benchArgs, error) {
	fl := flag.NewFlagSet("bench", flag.ContinueOnError)
	fl.SetOutput(io.Discard)
	a := &benchArgs{}
	only := fl.String("only", "", "")
	fl.StringVar(&a.ggmlDir, "ggml", "", "")
	fl.IntVar(&a.threads, "threads", runtime.NumCPU(), "")
	fl.IntVar(&a.reps, "reps", 3, "")
	fl.IntVar(&a.k, "k", 4096, "")
	fl.IntVar(&a.n, "n", 14336, "")
	fl.BoolVar(&a.json, "json", false, "")
	if err := fl.Parse(args); err != nil {
		return nil, err
	}
	if fl.NArg() > 0 {
		return nil, fmt.Errorf("unexpected argument %q", fl.Arg(0))
	}
	if a.threads < 1 || a.threads > 1024 {
		return nil, fmt.Errorf("--threads %d: want 1 to 1024", a.threads)
	}
	if a.reps < 1 || a.reps > 1000 {
		return nil, fmt.Errorf("--reps %d: want 1 to 1000", a.reps)
	}
	if a.k < 256 || a.k%256 != 0 || a.k > 1<<16 {
		return nil, fmt.Errorf("--k %d: want a multiple of 256 up to 65536 (the k-quants' block)", a.k)
	}
	if a.n < 1 || a.n > 1<<17 {
		return nil, fmt.Errorf("--n %d: want 1 to 131072", a.n)
	}
	var err error
	if a.only, err = regexp.Compile(*only); err != nil {
		return nil, fmt.Errorf("--only: %v", err)
	}
	var names []string
	for _, s := range benchShapes(a.k, a.n) {
		if a.only.MatchString(s.name()) {
			return a, nil
		}
		names = append(names, s.name())
	}
	return nil, fmt.Errorf("--only %q matches no shape; the shapes are %s", *only, strings.Join(names, ", "))
}

// benchShape is one matmul of the table: a MUL_MAT (e == 0) or a MUL_MAT_ID.
type benchShape struct {
	t          quant.Type
	k, n, m    int
	e, u, toks int
}

func (s benchShape) name() string {
	if s.e > 0 {
		return fmt.Sprintf("type=%v/k=%d/n=%d/experts=%d/used=%d/tokens=%d", s.t, s.k, s.n, s.e, s.u, s.toks)
	}
	return fmt.Sprintf("type=%v/k=%d/n=%d/m=%d", s.t, s.k, s.n, s.m)
}

func (s benchShape) macs() float64 {
	if s.e > 0 {
		return float64(s.k) * float64(s.n) * float64(s.toks) * float64(s.u)
	}
	return float64(s.k) * float64(s.n) * float64(s.m)
}

func benchShapes(k, n int) []benchShape {
	var ss []benchShape
	for _, m := range []int{1, 8, 512} {
		for _, t := range []quant.Type{quant.Q4_K, quant.Q6_K, quant.Q8_0, quant.IQ4_XS} {
			ss = append(ss, benchShape{t: t, k: k, n: n, m: m})
		}
	}
	return append(ss, benchShape{t: quant.Q4_K, k: k, n: n, e: 8, u: 2, toks: 512})
}

// benchData returns the shape's weights (16 distinct reference-quantized Gaussian rows
// repeated over every expert's rows), activations and, for MUL_MAT_ID, expert ids.
func benchData(s benchShape) ([]byte, []float32, []int32, error) {
	r := rand.New(rand.NewPCG(12, uint64(s.t)))
	rs, err := s.t.RowSize(int64(s.k))
	if err != nil {
		return nil, nil, nil, err
	}
	const distinct = 16
	proto := make([]byte, distinct*int(rs))
	row := make([]float32, s.k)
	for i := range distinct {
		sc := float32(math.Exp2(float64(r.IntN(8) - 4)))
		for j := range row {
			row[j] = sc * float32(r.NormFloat64())
		}
		if err := quant.QuantizeRowRef(s.t, row, proto[i*int(rs):(i+1)*int(rs)]); err != nil {
			return nil, nil, nil, err
		}
	}
	rows := s.n * max(s.e, 1)
	w := make([]byte, rows*int(rs))
	for i := range rows {
		copy(w[i*int(rs):], proto[(i%distinct)*int(rs):(i%distinct+1)*int(rs)])
	}
	cols := s.m
	var ids []int32
	if s.e > 0 {
		cols = s.toks
		if ids, err = routeIDs("uniform", 12, s.e, s.u, s.toks); err != nil {
			return nil, nil, nil, err
		}
	}
	x := make([]float32, s.k*cols)
	for i := range x {
		x[i] = float32(r.NormFloat64())
	}
	return w, x, ids, nil
}

// benchRow is one shape's result; times in seconds.
type benchRow struct {
	Shape  string    `json:"shape"`
	Kernel string    `json:"kernel"`
	MACs   float64   `json:"macs"`
	Sim    []float64 `json:"sim_s"`
	GGML   []float64 `json:"ggml_s,omitempty"`
	// SimMedian, GGMLMedian and Ratio (SimMedian / GGMLMedian) are the table's columns.
	SimMedian  float64  `json:"sim_median_s"`
	GGMLMedian *float64 `json:"ggml_median_s,omitempty"`
	Ratio      *float64 `json:"ratio,omitempty"`
	// RatioMin is the ratio of the fastest runs (the least disturbed on a shared machine).
	RatioMin *float64 `json:"ratio_min,omitempty"`
	SimMACs  float64  `json:"sim_mac_per_s"`
	Error    string   `json:"error,omitempty"`
}

type benchReport struct {
	Date        string     `json:"date"`
	Machine     string     `json:"machine"`
	GOOS        string     `json:"goos"`
	GOARCH      string     `json:"goarch"`
	Go          string     `json:"go"`
	Threads     int        `json:"threads"`
	Reps        int        `json:"reps"`
	Device      string     `json:"device"`
	GGMLDir     string     `json:"ggml_dir,omitempty"`
	GGMLVersion string     `json:"ggml_version,omitempty"`
	GGMLCommit  string     `json:"ggml_commit,omitempty"`
	GGMLBackend string     `json:"ggml_backend,omitempty"`
	Rows        []benchRow `json:"rows"`
}

// cpuModel returns the first "model name" of /proc/cpuinfo, or "" where there is none.
func cpuModel() string {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return ""
	}
	for _, l := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(l, ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func cmdBench(args []string, stdout, stderr io.Writer) int {
	a, err := parseBench(args)
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprint(stdout, benchHelp)
		return 0
	}
	if err != nil {
		fmt.Fprintln(stderr, "simrun bench:", err)
		fmt.Fprint(stderr, benchHelp)
		return 2
	}
	dev, err := sim.Lookup("H200")
	if err != nil {
		fmt.Fprintln(stderr, "simrun bench:", err)
		return 1
	}
	rep := &benchReport{
		Date: time.Now().UTC().Format(time.RFC3339), Machine: cpuModel(), GOOS: runtime.GOOS, GOARCH: runtime.GOARCH,
		Go: runtime.Version(), Threads: a.threads, Reps: a.reps, Device: dev.Name, GGMLDir: a.ggmlDir,
	}
	var be *ggml.Backend
	if a.ggmlDir != "" {
		lib, err := ggml.Load(a.ggmlDir)
		if err != nil {
			if errors.Is(err, ggml.ErrNotBuilt) {
				err = fmt.Errorf("%w (build simrun with -tags cuda and cgo: go build -tags cuda ./cmd/simrun)", err)
			}
			fmt.Fprintln(stderr, "simrun bench:", err)
			return 1
		}
		be, err = lib.NewBackend(ggml.BackendSpec{Kind: ggml.CPU, Threads: a.threads})
		if err != nil {
			fmt.Fprintln(stderr, "simrun bench:", err)
			return 1
		}
		defer be.Close()
		rep.GGMLVersion, rep.GGMLCommit = lib.Version()
		if info, err := be.Info(); err == nil {
			rep.GGMLBackend = strings.TrimSpace(info.Backend + " " + info.Description)
		}
	}
	old := runtime.GOMAXPROCS(a.threads)
	defer runtime.GOMAXPROCS(old)
	if !a.json {
		writeBenchHead(stdout, rep)
	}
	failed := false
	for _, s := range benchShapes(a.k, a.n) {
		if !a.only.MatchString(s.name()) {
			continue
		}
		row := benchOne(dev, be, s, a)
		if row.Error != "" {
			failed = true
		}
		rep.Rows = append(rep.Rows, row)
		if !a.json {
			writeBenchRow(stdout, &row)
		}
	}
	if a.json {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rep); err != nil {
			fmt.Fprintln(stderr, "simrun bench:", err)
			return 1
		}
	}
	if failed {
		return 1
	}
	return 0
}

// benchOne runs one shape: an untimed ggml run, then a.reps of ggml and simulator in
// turn. A failure is recorded in the row.
func benchOne(dev sim.Device, be *ggml.Backend, s benchShape, a *benchArgs) (row benchRow) {
	row = benchRow{Shape: s.name(), MACs: s.macs()}
	w, x, ids, err := benchData(s)
	if err != nil {
		row.Error = err.Error()
		return row
	}
	wts := ggsim.Weights{Type: s.t, K: s.k, N: s.n, E: s.e, Data: w}
	simRun := func() (time.Duration, string, error) {
		t0 := time.Now()
		var res ggsim.Result
		var err error
		if s.e > 0 {
			res, err = ggsim.MulMatID(dev, wts, x, 1, s.toks, ids, s.u, ggsim.Workers(a.threads))
		} else {
			res, err = ggsim.MulMat(dev, wts, x, s.m, ggsim.Workers(a.threads))
		}
		return time.Since(t0), res.Decision.Kernel.String(), err
	}
	var tm *ggml.Timed
	if be != nil {
		if s.e > 0 {
			tm, err = be.TimedMulMatID(s.t, w, s.k, s.n, s.e, x, 1, s.toks, ids, s.u)
		} else {
			tm, err = be.TimedMulMat(s.t, w, s.k, s.n, x, s.m)
		}
		if err == nil {
			defer tm.Close()
			_, err = tm.Run()
		}
		if err != nil {
			row.Error = err.Error()
			return row
		}
	}
	for range a.reps {
		if tm != nil {
			d, err := tm.Run()
			if err != nil {
				row.Error = err.Error()
				return row
			}
			row.GGML = append(row.GGML, d.Seconds())
		}
		d, kern, err := simRun()
		row.Kernel = kern
		if err != nil {
			row.Error = err.Error()
			return row
		}
		row.Sim = append(row.Sim, d.Seconds())
	}
	row.SimMedian = median(row.Sim)
	row.SimMACs = row.MACs / row.SimMedian
	if len(row.GGML) > 0 {
		g := median(row.GGML)
		r, rm := row.SimMedian/g, slices.Min(row.Sim)/slices.Min(row.GGML)
		row.GGMLMedian, row.Ratio, row.RatioMin = &g, &r, &rm
	}
	return row
}

func writeBenchHead(w io.Writer, r *benchReport) {
	fmt.Fprintf(w, "bench: %s, %s/%s, %s, %d threads, %d interleaved repetitions; simulator of %s\n", r.Date, r.GOOS, r.GOARCH, r.Machine, r.Threads, r.Reps, r.Device)
	if r.GGMLDir != "" {
		fmt.Fprintf(w, "ggml: %s (version %s, commit %s), backend %s\n", r.GGMLDir, r.GGMLVersion, r.GGMLCommit, r.GGMLBackend)
	}
	fmt.Fprintf(w, "%-48s %-7s %-30s %-30s %8s %8s %10s\n", "shape", "kernel", "ggml CPU ms: median (min-max)", "simulator ms: median (min-max)", "ratio", "min/min", "sim MAC/s")
}

func spread(xs []float64) string {
	if len(xs) == 0 {
		return "-"
	}
	return fmt.Sprintf("%.4g (%.4g-%.4g)", 1e3*median(xs), 1e3*slices.Min(xs), 1e3*slices.Max(xs))
}

func writeBenchRow(w io.Writer, r *benchRow) {
	if r.Error != "" {
		fmt.Fprintf(w, "%-48s error: %s\n", r.Shape, r.Error)
		return
	}
	ratio, rmin := "-", "-"
	if r.Ratio != nil {
		ratio, rmin = fmt.Sprintf("%.1fx", *r.Ratio), fmt.Sprintf("%.1fx", *r.RatioMin)
	}
	fmt.Fprintf(w, "%-48s %-7s %-30s %-30s %8s %8s %9.3gG\n", r.Shape, r.Kernel, spread(r.GGML), spread(r.Sim), ratio, rmin, r.SimMACs/1e9)
}
