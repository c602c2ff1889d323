package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"strings"

	"github.com/ggsim/ggsim/fp16path"
	"github.com/ggsim/ggsim/fp16path/compare"
	"github.com/ggsim/ggsim/gguf"
	"github.com/ggsim/ggsim/quant"
)

const fp16Help = `usage: simrun fp16 accuracy [--types T,...] [--k K | --k-sweep K,K,...] [--n N] [--seed S] [--seeds R] [--svg FILE] [--json]
       simrun fp16 accuracy --gguf MODEL.gguf --tensor NAME [--rows N] [--acts FILE] [--seed S] [--json]
       simrun fp16 cost [--arch P100|P40] [--calibrated] [--types T,...] [--shape K,N] [--batch M,...] [--json]
       simrun fp16 cost --note [--json]
       simrun fp16 cost --counts [--arch P100|P40] [--types T,...] [--json]

The GP100 fp16 matrix-vector path of patch 0007 (package fp16path) against ggml's q8_1
MMVQ path (sim/mmvq on the P100's launch plan), as package fp16path/compare measures and
models them.

accuracy prints, per type, the relative RMS error of both paths against the fp64
reference (oracle.MulMatRef: the exactly dequantized weights times the float32
activations), and what each path's activation format alone costs: the fp64 product with
the fp16 path's converted activations ("fp16 conv") and with the q8_1 quantized ones
("q8_1 quant"). The weights and activations are generated like a trained model's
(oracle/oracletest RealisticWeights, RealisticActivations) or read from a GGUF file.

cost prints the cost model's estimate per type and batch: issue time from instruction
counts per 32 weights and the architecture's issue rates (PRMT and shifts half rate on
GP100; no DP4A below sm_61, so the q8_1 path's int8 dots are scalar), DRAM time from the
bytes moved, the larger of the two, and which path is faster by how much. --note compares
the model with the note's measurements. The tables and their derivation:
docs/fp16-compare.md.

flags (accuracy):
  --types T,...    types: {{types}}  [all]
  --k K            values per row  [4096]
  --k-sweep K,...  several K (e.g. 256,512,1024,2048,4096,8192,16384): one table per K
  --n N            rows  [256]
  --seed S         seed of the generated data  [1]
  --seeds R        pool R seeds (S, S+1, ...): RMS of their errors  [1]
  --svg FILE       with --k-sweep: draw relative RMS error against K for both paths
  --gguf FILE      read the weights from this GGUF file (a 2-D tensor of a covered type)
  --tensor NAME    the tensor of --gguf (K = ne0, N = ne1)
  --rows N         with --gguf: the first N rows (0: all; the fp64 reference holds
                   N*K float64)  [1024]
  --acts FILE      with --gguf: activations, K raw little-endian float32  [generated]
flags (cost):
  --arch NAME      P100 (GP100, sm_60: the note's GPU) or P40 (GP102, sm_61)  [P100]
  --calibrated     the P100 with its clock fitted to the note's 246-298 GB/s stock kernels
  --types T,...    types  [all the path covers]
  --shape K,N      the matrix  [5120,17408]
  --batch M,...    columns  [1,2,5,8]
  --note           the note's measurements beside the model's predictions
  --counts         the instruction counts per 32 weights the model uses, per type and path
  --json           one JSON object

example:
  simrun fp16 accuracy --k 5120 --n 256
  simrun fp16 accuracy --types q4_K,q5_K,q6_K --k-sweep 256,1024,4096,16384 --seeds 4 --svg acc.svg
  simrun fp16 accuracy --gguf model.gguf --tensor blk.0.ffn_down.weight --rows 512
  simrun fp16 cost --shape 5120,17408 --batch 1,5
  simrun fp16 cost --note
  simrun fp16 cost --counts

Exit status: 0 on success, 1 when a case cannot be computed (an uncovered type), 2 for a
usage error, 3 when an input file is missing or unreadable.
`

func fp16HelpText() string {
	var types []string
	for _, t := range fp16path.Types() {
		types = append(types, t.String())
	}
	return strings.ReplaceAll(fp16Help, "{{types}}", wrap(types, 36))
}

func cmdFP16(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, fp16HelpText())
		return 2
	}
	switch args[0] {
	case "accuracy":
		return cmdFP16Accuracy(args[1:], stdout, stderr)
	case "cost":
		return cmdFP16Cost(args[1:], stdout, stderr)
	case "-h", "--help", "help":
		fmt.Fprint(stdout, fp16HelpText())
		return 0
	}
	fmt.Fprintf(stderr, "simrun fp16: unknown subcommand %q (want accuracy or cost)\nrun 'simrun fp16 -h' for the flags\n", args[0])
	return 2
}

func parseFP16Types(s string) ([]quant.Type, error) {
	if s == "" {
		return fp16path.Types(), nil
	}
	var out []quant.Type
	for _, f := range strings.Split(s, ",") {
		t, err := quant.ParseType(strings.TrimSpace(f))
		if err != nil {
			return nil, err
		}
		if !fp16path.Supported(t) {
			return nil, fmt.Errorf("%v: the fp16 path covers %v", t, fp16path.Types())
		}
		out = append(out, t)
	}
	return out, nil
}

// fp16Fail prints a failure: a usage error (exit 2), an input file (3) or another (1).
func fp16Fail(stderr io.Writer, cmd string, err error) int {
	var ue usageErr
	var ie inputErr
	switch {
	case errors.As(err, &ue):
		fmt.Fprintf(stderr, "simrun fp16 %s: %v\nrun 'simrun fp16 -h' for the flags\n", cmd, err)
		return 2
	case errors.As(err, &ie):
		fmt.Fprintf(stderr, "simrun fp16 %s: %v\n", cmd, err)
		return 3
	}
	fmt.Fprintf(stderr, "simrun fp16 %s: %v\n", cmd, err)
	return 1
}

// accuracyJSON is one row of the accuracy table.
type accuracyJSON struct {
	Tensor    string  `json:"tensor,omitempty"`
	Type      string  `json:"type"`
	K         int     `json:"k"`
	N         int     `json:"n"`
	FP16      float64 `json:"fp16_rel_rms"`
	Q8_1      float64 `json:"q8_1_rel_rms"`
	FP16Conv  float64 `json:"fp16_conversion_rel_rms"`
	Q8_1Quant float64 `json:"q8_1_quantization_rel_rms"`
	Ratio     float64 `json:"q8_1_over_fp16"`
}

func toAccuracyJSON(name string, a compare.Accuracy) accuracyJSON {
	return accuracyJSON{Tensor: name, Type: a.Type.String(), K: a.K, N: a.N, FP16: a.FP16, Q8_1: a.Q8_1,
		FP16Conv: a.FP16Conv, Q8_1Quant: a.Q8_1Quant, Ratio: a.Q8_1 / a.FP16}
}

func cmdFP16Accuracy(args []string, stdout, stderr io.Writer) int {
	fl := flag.NewFlagSet("fp16 accuracy", flag.ContinueOnError)
	fl.SetOutput(io.Discard)
	typesF := fl.String("types", "", "")
	k := fl.Int("k", 4096, "")
	sweepF := fl.String("k-sweep", "", "")
	n := fl.Int("n", 256, "")
	seed := fl.Uint64("seed", 1, "")
	seeds := fl.Int("seeds", 1, "")
	svg := fl.String("svg", "", "")
	ggufPath := fl.String("gguf", "", "")
	tensor := fl.String("tensor", "", "")
	rows := fl.Int("rows", 1024, "")
	acts := fl.String("acts", "", "")
	asJSON := fl.Bool("json", false, "")
	if err := fl.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(stdout, fp16HelpText())
			return 0
		}
		return fp16Fail(stderr, "accuracy", usageErr{err.Error()})
	}
	if fl.NArg() > 0 {
		return fp16Fail(stderr, "accuracy", usagef("unexpected argument %q", fl.Arg(0)))
	}
	set := map[string]bool{}
	fl.Visit(func(f *flag.Flag) { set[f.Name] = true })
	var rowsOut []accuracyJSON
	if *ggufPath != "" {
		for _, f := range []string{"types", "k", "k-sweep", "n", "svg", "seeds"} {
			if set[f] {
				return fp16Fail(stderr, "accuracy", usagef("--%s is for generated weights; with --gguf the tensor gives the type and shape", f))
			}
		}
		if *tensor == "" {
			return fp16Fail(stderr, "accuracy", usagef("--gguf needs --tensor NAME"))
		}
		if *rows < 0 {
			return fp16Fail(stderr, "accuracy", usagef("--rows %d: want a count of rows (0: all)", *rows))
		}
		a, err := fp16GGUFAccuracy(*ggufPath, *tensor, *rows, *acts, *seed)
		if err != nil {
			return fp16Fail(stderr, "accuracy", err)
		}
		rowsOut = append(rowsOut, toAccuracyJSON(*tensor, a))
	} else {
		for _, f := range []string{"tensor", "rows", "acts"} {
			if set[f] {
				return fp16Fail(stderr, "accuracy", usagef("--%s needs --gguf FILE", f))
			}
		}
		types, err := parseFP16Types(*typesF)
		if err != nil {
			return fp16Fail(stderr, "accuracy", usageErr{"--types: " + err.Error()})
		}
		ks := []int{*k}
		if *sweepF != "" {
			if set["k"] {
				return fp16Fail(stderr, "accuracy", usagef("give --k or --k-sweep, not both"))
			}
			v, err := parseInts(*sweepF, -1)
			if err != nil {
				return fp16Fail(stderr, "accuracy", usagef("--k-sweep %q: %v", *sweepF, err))
			}
			ks = ks[:0]
			for _, x := range v {
				ks = append(ks, int(x))
			}
		} else if *svg != "" {
			return fp16Fail(stderr, "accuracy", usagef("--svg needs --k-sweep"))
		}
		if *seeds < 1 || *seeds > 1000 {
			return fp16Fail(stderr, "accuracy", usagef("--seeds %d: want 1..1000", *seeds))
		}
		if *n < 1 || *n > 1<<16 {
			return fp16Fail(stderr, "accuracy", usagef("--n %d: want 1..65536", *n))
		}
		for _, kk := range ks {
			if kk < 256 || kk > 1<<18 || kk%256 != 0 {
				return fp16Fail(stderr, "accuracy", usagef("K=%d: want a multiple of 256 in 256..262144 (the K-quants' block)", kk))
			}
		}
		sweep, err := compare.KSweep(types, ks, *n, *seed, *seeds)
		if err != nil {
			return fp16Fail(stderr, "accuracy", err)
		}
		for _, r := range sweep {
			for _, a := range r {
				rowsOut = append(rowsOut, toAccuracyJSON("", a))
			}
		}
		if *svg != "" {
			f, err := os.Create(*svg)
			if err != nil {
				return fp16Fail(stderr, "accuracy", inputErr{err})
			}
			title := fmt.Sprintf("fp16 path vs q8_1 MMVQ: relative RMS error, %d rows, %d seeds from %d", *n, *seeds, *seed)
			err = compare.PlotSVG(f, sweep, title)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				return fp16Fail(stderr, "accuracy", err)
			}
		}
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(struct {
			Rows []accuracyJSON `json:"rows"`
		}{rowsOut}); err != nil {
			return fp16Fail(stderr, "accuracy", err)
		}
		return 0
	}
	fmt.Fprintf(stdout, "relative RMS error against fp64 (fp16 path; q8_1 MMVQ on the P100 plan)\n")
	fmt.Fprintf(stdout, "%-8s %6s %6s  %9s %9s %7s  %9s %10s\n", "type", "K", "N", "fp16", "q8_1", "q8/fp16", "fp16 conv", "q8_1 quant")
	for _, r := range rowsOut {
		if r.Tensor != "" {
			fmt.Fprintf(stdout, "%s:\n", r.Tensor)
		}
		fmt.Fprintf(stdout, "%-8s %6d %6d  %9.2e %9.2e %7.1f  %9.2e %10.2e\n", r.Type, r.K, r.N, r.FP16, r.Q8_1, r.Ratio, r.FP16Conv, r.Q8_1Quant)
	}
	return 0
}

// fp16GGUFAccuracy measures a tensor of a GGUF file.
func fp16GGUFAccuracy(path, name string, rows int, actsPath string, seed uint64) (compare.Accuracy, error) {
	f, err := gguf.Open(path)
	if err != nil {
		return compare.Accuracy{}, inputErr{err}
	}
	defer f.Close()
	ti, ok := f.Tensor(name)
	if !ok {
		return compare.Accuracy{}, inputErr{fmt.Errorf("%s has no tensor %q", path, name)}
	}
	if len(ti.Dims) != 2 {
		return compare.Accuracy{}, fmt.Errorf("tensor %q has dimensions %v: want a 2-D matrix: %w", name, ti.Dims, errors.ErrUnsupported)
	}
	if !fp16path.Supported(ti.Type) {
		return compare.Accuracy{}, fmt.Errorf("tensor %q is %v: the fp16 path covers %v: %w", name, ti.Type, fp16path.Types(), errors.ErrUnsupported)
	}
	K, N := ti.Dims[0], ti.Dims[1]
	if K > math.MaxInt32 || N > math.MaxInt32 {
		return compare.Accuracy{}, fmt.Errorf("tensor %q: %dx%d is too large", name, K, N)
	}
	data, err := f.TensorData(name)
	if err != nil {
		return compare.Accuracy{}, inputErr{fmt.Errorf("%s: tensor %q: %w", path, name, err)}
	}
	n := int(N)
	if rows > 0 && rows < n {
		n = rows
		data = data[:int64(n)*(int64(len(data))/N)]
	}
	var y []float32
	if actsPath != "" {
		if y, err = readActs(actsPath, int(K), 1); err != nil {
			return compare.Accuracy{}, inputErr{err}
		}
	} else {
		y = compare.RealisticColumn(int(K), seed)
	}
	return compare.Measure(ti.Type, data, int(K), n, y)
}

// costJSON is one row of the cost table.
type costJSON struct {
	Arch     string  `json:"arch"`
	Type     string  `json:"type"`
	K        int     `json:"k"`
	N        int     `json:"n"`
	M        int     `json:"m"`
	FP16us   float64 `json:"fp16_us"`
	FP16By   string  `json:"fp16_bound"`
	Q8us     float64 `json:"q8_1_us"`
	Q8By     string  `json:"q8_1_bound"`
	Speedup  float64 `json:"q8_1_over_fp16"`
	FP16GBs  float64 `json:"fp16_weight_gbs"`
	Q8GBs    float64 `json:"q8_1_weight_gbs"`
	FP16Issu float64 `json:"fp16_issue_us"`
	Q8Issu   float64 `json:"q8_1_issue_us"`
	MemUs    float64 `json:"fp16_memory_us"`
}

func cmdFP16Cost(args []string, stdout, stderr io.Writer) int {
	fl := flag.NewFlagSet("fp16 cost", flag.ContinueOnError)
	fl.SetOutput(io.Discard)
	archF := fl.String("arch", "P100", "")
	calib := fl.Bool("calibrated", false, "")
	typesF := fl.String("types", "", "")
	shape := fl.String("shape", "5120,17408", "")
	batch := fl.String("batch", "1,2,5,8", "")
	note := fl.Bool("note", false, "")
	counts := fl.Bool("counts", false, "")
	asJSON := fl.Bool("json", false, "")
	if err := fl.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(stdout, fp16HelpText())
			return 0
		}
		return fp16Fail(stderr, "cost", usageErr{err.Error()})
	}
	if fl.NArg() > 0 {
		return fp16Fail(stderr, "cost", usagef("unexpected argument %q", fl.Arg(0)))
	}
	if *note {
		set := false
		fl.Visit(func(f *flag.Flag) { set = set || (f.Name != "note" && f.Name != "json") })
		if set {
			return fp16Fail(stderr, "cost", usagef("--note takes no other flag than --json"))
		}
		claims, err := compare.NoteClaims()
		if err != nil {
			return fp16Fail(stderr, "cost", err)
		}
		if *asJSON {
			enc := json.NewEncoder(stdout)
			enc.SetIndent("", "  ")
			if err := enc.Encode(struct {
				Claims []compare.Claim `json:"claims"`
			}{claims}); err != nil {
				return fp16Fail(stderr, "cost", err)
			}
			return 0
		}
		for _, c := range claims {
			fmt.Fprintf(stdout, "%s\n  measured    %s\n  model       %s  [%s]\n  calibrated  %s  [%s]\n", c.What, c.Measured, c.Predicted, agree(c.Agrees), c.Calibrated, agree(c.AgreesCalib))
			if c.Note != "" {
				fmt.Fprintf(stdout, "  (%s)\n", c.Note)
			}
		}
		return 0
	}
	var arch compare.Arch
	found := false
	for _, a := range compare.Archs() {
		if strings.EqualFold(a.Name, strings.TrimSpace(*archF)) {
			arch, found = a, true
		}
	}
	if !found {
		return fp16Fail(stderr, "cost", usagef("--arch %q: want P100 or P40", *archF))
	}
	if *calib {
		if arch.CC != compare.GP100.CC {
			return fp16Fail(stderr, "cost", usagef("--calibrated is a fit to the note's P100 measurements: use it with --arch P100"))
		}
		var err error
		if arch, err = compare.Calibrate(arch); err != nil {
			return fp16Fail(stderr, "cost", err)
		}
	}
	types, err := parseFP16Types(*typesF)
	if err != nil {
		return fp16Fail(stderr, "cost", usageErr{"--types: " + err.Error()})
	}
	if *counts {
		return fp16Counts(arch, types, *asJSON, stdout, stderr)
	}
	v, err := parseInts(*shape, 2)
	if err != nil || v[0] <= 0 || v[1] <= 0 || v[0]%256 != 0 || v[0] > 1<<20 || v[1] > 1<<24 {
		return fp16Fail(stderr, "cost", usagef("--shape %q: want K,N with K a multiple of 256 (up to 2^20) and 0 < N <= 2^24", *shape))
	}
	ms, err := parseInts(*batch, -1)
	if err != nil {
		return fp16Fail(stderr, "cost", usagef("--batch %q: %v", *batch, err))
	}
	var out []costJSON
	for _, t := range types {
		for _, m := range ms {
			if m < 1 || m > 8 {
				return fp16Fail(stderr, "cost", usagef("--batch %d: want 1..8", m))
			}
			f, err := compare.Predict(arch, compare.FP16, t, int(v[0]), int(v[1]), int(m))
			if err != nil {
				return fp16Fail(stderr, "cost", err)
			}
			q, err := compare.Predict(arch, compare.Q8_1, t, int(v[0]), int(v[1]), int(m))
			if err != nil {
				return fp16Fail(stderr, "cost", err)
			}
			out = append(out, costJSON{Arch: arch.Name, Type: t.String(), K: int(v[0]), N: int(v[1]), M: int(m),
				FP16us: f.Sec * 1e6, FP16By: f.Bound(), Q8us: q.Sec * 1e6, Q8By: q.Bound(), Speedup: q.Sec / f.Sec,
				FP16GBs: f.GBs(), Q8GBs: q.GBs(), FP16Issu: f.IssueSec * 1e6, Q8Issu: q.IssueSec * 1e6, MemUs: f.MemSec * 1e6})
		}
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(struct {
			Rows []costJSON `json:"rows"`
		}{out}); err != nil {
			return fp16Fail(stderr, "cost", err)
		}
		return 0
	}
	fmt.Fprintf(stdout, "cost model on %s, K=%d N=%d (times in us; bound: issue or memory)\n", arch.Name, v[0], v[1])
	fmt.Fprintf(stdout, "%-8s %2s  %9s %-6s %9s %-6s  %-14s  %8s %8s\n", "type", "M", "fp16", "", "q8_1", "", "faster", "fp16GB/s", "q8GB/s")
	for _, r := range out {
		faster := fmt.Sprintf("fp16 x%.2f", r.Speedup)
		if r.Speedup < 1 {
			faster = fmt.Sprintf("q8_1 x%.2f", 1/r.Speedup)
		}
		fmt.Fprintf(stdout, "%-8s %2d  %9.1f %-6s %9.1f %-6s  %-14s  %8.0f %8.0f\n", r.Type, r.M, r.FP16us, r.FP16By, r.Q8us, r.Q8By, faster, r.FP16GBs, r.Q8GBs)
	}
	return 0
}

// countsJSON is one row of the instruction-count table.
type countsJSON struct {
	Arch   string             `json:"arch"`
	Path   string             `json:"path"`
	Type   string             `json:"type"`
	Counts map[string]float64 `json:"per_32_weights_one_column"`
	Cycles float64            `json:"sm_cycles_per_32_weights"`
}

// fp16Counts prints the model's instruction counts per 32 weights and one column.
func fp16Counts(a compare.Arch, types []quant.Type, asJSON bool, stdout, stderr io.Writer) int {
	var rows []countsJSON
	for _, t := range types {
		for _, p := range []compare.Path{compare.FP16, compare.Q8_1} {
			c, err := compare.Instructions(a, p, t, 1)
			if err != nil {
				return fp16Fail(stderr, "cost", err)
			}
			r := countsJSON{Arch: a.Name, Path: p.String(), Type: t.String(), Counts: map[string]float64{}}
			for k, n := range c {
				r.Counts[compare.Class(k).String()] = n
				if n != 0 {
					r.Cycles += n / a.Rate[k]
				}
			}
			rows = append(rows, r)
		}
	}
	if asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(struct {
			Rows []countsJSON `json:"rows"`
		}{rows}); err != nil {
			return fp16Fail(stderr, "cost", err)
		}
		return 0
	}
	fmt.Fprintf(stdout, "lane-instructions per 32 weights and one column on %s (rates: lanes/clock/SM)\n", a.Name)
	fmt.Fprintf(stdout, "%-8s %-5s", "type", "path")
	for k := compare.Class(0); k < compare.NumClasses; k++ {
		fmt.Fprintf(stdout, " %6s", k)
	}
	fmt.Fprintf(stdout, " %8s\n%-14s", "cycles", "rate")
	for k := compare.Class(0); k < compare.NumClasses; k++ {
		fmt.Fprintf(stdout, " %6g", a.Rate[k])
	}
	fmt.Fprintln(stdout)
	for _, r := range rows {
		fmt.Fprintf(stdout, "%-8s %-5s", r.Type, r.Path)
		for k := compare.Class(0); k < compare.NumClasses; k++ {
			fmt.Fprintf(stdout, " %6.4g", r.Counts[k.String()])
		}
		fmt.Fprintf(stdout, " %8.2f\n", r.Cycles)
	}
	return 0
}

func agree(ok bool) string {
	if ok {
		return "agrees"
	}
	return "DISAGREES"
}
