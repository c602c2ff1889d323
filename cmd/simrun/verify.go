package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"

	"github.com/ggsim/ggsim"
	"github.com/ggsim/ggsim/gguf/golden"
	"github.com/ggsim/ggsim/oracle"
	"github.com/ggsim/ggsim/oracle/coverage"
)

type fileReport struct {
	File  string              `json:"file"`
	Error string              `json:"error,omitempty"`
	Cases []oracle.CaseResult `json:"cases,omitempty"`
}

type verifyReport struct {
	Files    []fileReport `json:"files"`
	Passed   int          `json:"passed"`
	Total    int          `json:"total"`
	BitExact int          `json:"bit_exact"`
	OK       bool         `json:"ok"`
	// Coverage is the kernel paths of the cases per device (--coverage).
	Coverage []coverage.DeviceReport `json:"coverage,omitempty"`
}

const verifyHelp = `usage: simrun verify [--json] [--no-fp64] [--coverage] [FILE.gguf ...]

verify runs every case of each golden file (real GPU outputs, schema gguf/golden) through
the simulator configured for the device and ggml commit the file names, compares every
output's float32 bits (the bytes, for quantize cases) and checks the GPU's output against
the fp64 truth within its bound. It prints one line per case and last "verify: N/M cases
bit-exact". With no file it verifies the golden samples embedded in the binary.

flags:
  --json        one JSON object (docs/json.md): files, their cases, counts
  --no-fp64     skip the fp64 part of the verdict (bits only)
  --coverage    also report which kernel paths the cases exercised and which ones the
                files' devices can take but no case did (docs/json.md)

example:
  simrun verify
  simrun verify testdata/golden/ggml-h200-dev-mmq.slice.gguf --coverage
  simrun verify --json --no-fp64 testdata/golden/*.gguf

Exit status: 0 when every case is bit-exact and within its bound, 1 when one is not or is
not simulated (UNSUPPORTED), 2 for a usage error, 3 when a file is missing or unreadable.
`

var verifyCLI = cli{name: "verify", help: func() string { return verifyHelp }, positional: true}

func cmdVerify(args []string, stdout, stderr io.Writer) int {
	fl := flag.NewFlagSet("verify", flag.ContinueOnError)
	asJSON := fl.Bool("json", false, "")
	noFP64 := fl.Bool("no-fp64", false, "")
	withCoverage := fl.Bool("coverage", false, "")
	files, code, ok := verifyCLI.parse(fl, args, stdout, stderr)
	if !ok {
		return code
	}
	type source struct {
		name string
		open func() (*golden.File, error)
	}
	var srcs []source
	if len(files) == 0 {
		names := ggsim.SampleFiles()
		if len(names) == 0 {
			return verifyCLI.fail(stderr, exitInput, fmt.Errorf("no embedded golden samples"))
		}
		for _, n := range names {
			n := n
			srcs = append(srcs, source{"embedded:" + n, func() (*golden.File, error) {
				data, err := ggsim.Samples.ReadFile(n)
				if err != nil {
					return nil, err
				}
				return golden.New(bytes.NewReader(data), int64(len(data)), "embedded:"+n)
			}})
		}
	} else {
		for _, p := range files {
			p := p
			srcs = append(srcs, source{p, func() (*golden.File, error) { return golden.Open(p) }})
		}
	}

	var impl oracle.Impl = ggsim.NewSimulator() // the front door, judged by the oracle
	var rec *coverage.Recorder
	if *withCoverage {
		rec = coverage.NewRecorder(impl)
		impl = rec
	}
	rep := verifyReport{OK: true}
	unreadable := 0
	for _, s := range srcs {
		fr := fileReport{File: s.name}
		f, err := s.open()
		if err != nil {
			fr.Error = err.Error()
			rep.OK = false
			rep.Files = append(rep.Files, fr)
			unreadable++
			fmt.Fprintf(stderr, "simrun verify: %v\n", err)
			if !*asJSON {
				fmt.Fprintf(stdout, "%s: ERROR: %v\n", s.name, err)
			}
			continue
		}
		res, err := oracle.VerifyFile(f, impl, oracle.Options{SkipFP64: *noFP64})
		f.Close()
		if err != nil {
			fr.Error = err.Error()
			rep.OK = false
		}
		fr.Cases = res
		for i := range res {
			rep.Total++
			if res[i].Status == oracle.StatusBitExact {
				rep.BitExact++
			}
			if res[i].OK() {
				rep.Passed++
			} else {
				rep.OK = false
			}
			if !*asJSON {
				fmt.Fprintln(stdout, res[i].Line())
			}
		}
		rep.Files = append(rep.Files, fr)
	}
	if rep.Total == 0 {
		rep.OK = false
	}
	code = exitOK
	switch {
	case unreadable > 0:
		code = exitInput
	case !rep.OK:
		code = exitFail
	}
	if rec != nil {
		rep.Coverage = rec.Report()
	}
	if *asJSON {
		return verifyCLI.writeJSON(stdout, stderr, rep, code)
	}
	if rec != nil {
		writeCoverage(stdout, rep.Coverage)
	}
	if rep.BitExact != rep.Passed {
		fmt.Fprintf(stdout, "(%d bit-exact cases fell outside their fp64 bound)\n", rep.BitExact-rep.Passed)
	}
	fmt.Fprintf(stdout, "verify: %d/%d cases bit-exact\n", rep.BitExact, rep.Total)
	return code
}

// writeCoverage prints the kernel paths exercised per device, and those the device can
// take that no case did.
func writeCoverage(w io.Writer, reps []coverage.DeviceReport) {
	for _, r := range reps {
		fmt.Fprintf(w, "coverage on %s: %d launches, %d of %d paths the device can take\n", r.Device, r.Cases, r.Covered, r.Possible)
		kind := ""
		for _, c := range r.Exercised {
			if c.Kind != kind {
				kind = c.Kind
				fmt.Fprintf(w, "  %s:\n", kind)
			}
			fmt.Fprintf(w, "    %-52s %d case(s)\n", c.Value, c.Cases)
		}
		if len(r.Missed) > 0 {
			fmt.Fprintln(w, "  not exercised (the device can take them):")
			for _, f := range r.Missed {
				fmt.Fprintf(w, "    %s\n", f)
			}
		}
	}
}
