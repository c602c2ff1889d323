package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/ggsim/ggsim/ggmlsrc"
	"github.com/ggsim/ggsim/quant"
)

// captureArgs are simrun capture's options; parsing them needs no GPU, so it is tested
// in every build.
type captureArgs struct {
	ggmlDir, out   string
	cpu            bool
	device         int
	types          []quant.Type
	k, n           int
	batches        []int
	quantRows      int
	moe            [][4]int // E, U, T, B1
	seed           uint64
	repeat         int
	commit, build  string
	ggmlSrc        string
	kernel         ggmlsrc.Set // the hashes of --ggml-src, nil without it
	defaultedTypes bool
	json           bool
}

const captureHelp = `usage: simrun capture --ggml DIR --out FILE.gguf [--types T,...] [--k K --n N] [--batches 1,2,...]
                      [--moe E:U:T:B1,...] [--quant-rows R] [--seed S] [--repeat R] [--cpu]
                      [--device I] [--commit C] [--build B] [--ggml-src DIR] [--json]

capture runs cases through a ggml build loaded at run time (its CUDA backend, or --cpu)
and writes a golden file that simrun verify reads. It needs a simrun built with the cuda
tag and cgo (go build -tags cuda ./cmd/simrun) on a machine with the GPU; without them it
checks its flags and exits 1.

flags:
  --ggml DIR        directory of a ggml build (libggml-base.so, libggml.so, libggml-cuda.so,
                    libggml-cpu.so)
  --out FILE        the golden file to write
  --types T,...     weight types (ggml names: q4_0, q4_K, iq2_xxs, ...)  [the 13 MMVQ
                    types quantized without an importance matrix]
  --k K, --n N      values per weight row, weight rows  [1024, 128]
  --batches B,...   batch sizes (columns of src1) of the mul_mat cases  [1,2,...,8]
  --moe E:U:T:B1,.. mul_mat_id shapes: experts, used per token, tokens, B1 (1 or U)
  --quant-rows R    rows of each type's quantize case (0: none)  [64]
  --seed S          input generator seed  [1]
  --repeat R        run each product R times and require identical bits  [2]
  --cpu             ggml's CPU backend instead of CUDA (for comparison)
  --device I        CUDA device ordinal  [0]
  --commit C        ggml commit to record  [what the build reports]
  --build B         toolkit and build options to record
  --ggml-src DIR    the ggml source tree of the build: record its kernel fingerprint
  --json            print the summary as one JSON object (docs/json.md)

example:
  simrun capture --ggml ../ggml/build/bin --out h200.gguf --types q4_0,q4_K --batches 1,8,16

Exit status: 0 when the file is written, 1 when ggml cannot be loaded or a case fails,
2 for a usage error, 3 when --ggml-src cannot be read.
`

var captureCLI = cli{name: "capture", help: func() string { return captureHelp }}

func parseCaptureArgs(args []string, fl *flag.FlagSet) (*captureArgs, error) {
	a := &captureArgs{}
	fl.StringVar(&a.ggmlDir, "ggml", "", "directory of a ggml build (libggml-base.so, libggml.so, libggml-cuda.so, libggml-cpu.so)")
	fl.StringVar(&a.out, "out", "", "golden file to write")
	fl.BoolVar(&a.cpu, "cpu", false, "use ggml's CPU backend instead of CUDA (for comparison; not what ggsim models)")
	fl.IntVar(&a.device, "device", 0, "CUDA device ordinal")
	typesS := fl.String("types", "", "comma-separated weight types (default: the 13 MMVQ types quantized without an importance matrix)")
	fl.IntVar(&a.k, "k", 1024, "K: values per weight row")
	fl.IntVar(&a.n, "n", 128, "N: weight rows")
	batchS := fl.String("batches", "1,2,3,4,5,6,7,8", "comma-separated batch sizes (columns of src1) of the mul_mat cases")
	fl.IntVar(&a.quantRows, "quant-rows", 64, "rows of each type's quantize case (0: none)")
	moeS := fl.String("moe", "", "comma-separated mul_mat_id shapes E:U:T:B1 (experts, experts per token, tokens, B1 = 1 or U)")
	fl.Uint64Var(&a.seed, "seed", 1, "input generator seed")
	fl.IntVar(&a.repeat, "repeat", 2, "run each product this many times and require identical bits")
	fl.StringVar(&a.commit, "commit", "", "ggml commit to record (default: what the build reports)")
	fl.StringVar(&a.build, "build", "", "toolkit and build options to record, e.g. \"CUDA 13.0.88, CMAKE_CUDA_ARCHITECTURES=90, GGML_CUDA_FA=OFF, Release\"")
	fl.StringVar(&a.ggmlSrc, "ggml-src", "", "ggml source tree the build was made from (the directory holding src/ and include/): record its kernel fingerprint, so that verify can accept the file if its ggml commit is not the modelled one")
	fl.BoolVar(&a.json, "json", false, "print the summary as JSON")
	pos, err := parseFlags(fl, args)
	if err != nil {
		return nil, err
	}
	if len(pos) > 0 {
		return nil, fmt.Errorf("unexpected argument %q", pos[0])
	}
	if a.ggmlDir == "" || a.out == "" {
		return nil, fmt.Errorf("--ggml and --out are required")
	}
	if *typesS == "" {
		a.defaultedTypes = true
	} else {
		for _, s := range strings.Split(*typesS, ",") {
			t, err := quant.ParseType(strings.TrimSpace(s))
			if err != nil {
				return nil, err
			}
			a.types = append(a.types, t)
		}
	}
	if a.batches, err = intList(*batchS); err != nil {
		return nil, fmt.Errorf("--batches: %w", err)
	}
	if *moeS != "" {
		for _, s := range strings.Split(*moeS, ",") {
			v, err := intListSep(s, ":")
			if err != nil || len(v) != 4 {
				return nil, fmt.Errorf("--moe: %q is not E:U:T:B1", s)
			}
			a.moe = append(a.moe, [4]int{v[0], v[1], v[2], v[3]})
		}
	}
	if a.ggmlSrc != "" {
		if a.kernel, err = ggmlsrc.HashDir(a.ggmlSrc); err != nil {
			return nil, inputErr{fmt.Errorf("--ggml-src: %w", err)}
		}
	}
	if a.k <= 0 || a.n <= 0 || a.repeat < 1 || a.quantRows < 0 {
		return nil, fmt.Errorf("--k, --n and --repeat must be positive, --quant-rows non-negative")
	}
	return a, nil
}

// parseCapture parses capture's flags; ok == false: done with the exit status code.
func parseCapture(args []string, stdout, stderr io.Writer) (a *captureArgs, code int, ok bool) {
	fl := flag.NewFlagSet("capture", flag.ContinueOnError)
	fl.SetOutput(io.Discard)
	a, err := parseCaptureArgs(args, fl)
	var ie inputErr
	switch {
	case errors.Is(err, flag.ErrHelp):
		fmt.Fprint(stdout, captureHelp)
		return nil, exitOK, false
	case errors.As(err, &ie):
		return nil, captureCLI.fail(stderr, exitInput, err), false
	case err != nil:
		return nil, captureCLI.usage(stderr, err), false
	}
	return a, exitOK, true
}

func intList(s string) ([]int, error) { return intListSep(s, ",") }

func intListSep(s, sep string) ([]int, error) {
	var v []int
	for _, f := range strings.Split(s, sep) {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n <= 0 {
			return nil, fmt.Errorf("%q is not a positive integer", f)
		}
		v = append(v, n)
	}
	return v, nil
}
