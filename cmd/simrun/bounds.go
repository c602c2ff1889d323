package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"strings"
	"time"

	"github.com/ggsim/ggsim"
	"github.com/ggsim/ggsim/oracle/oracletest"
	"github.com/ggsim/ggsim/quant"
	"github.com/ggsim/ggsim/sim"
)

const boundsHelp = `usage: simrun bounds --study tightness|power|false-alarms [flags]

Measures the fp64 check's kernel bound (oracle.MulMatRefOn, docs/bounds.md) on the
simulator: tightness (bound / observed error per type, path and data kind), power (six
injected kernel bugs must leave an output outside the bound in >= 99% of cases) or false
alarms (n correct generated cases: no output may be outside). Prints markdown tables;
exit status 1 if a correct output is outside its bound or a bug is caught in fewer than
99% of its cases.

flags:
  --study S        tightness, power or false-alarms
  --types T,...    types (default: every type the kernel bound models)
  --k K            row length (default 4096; false-alarms: the largest K, default 1024)
  --cases N        cases per type/path/kind or bug (default 20; false-alarms: 10000)
  --seed S         seed of the generated data (false-alarms: case c uses seed S+c)
  --device NAME    device from the catalog (default H200)
  --no-int8-mma    a build without int8 MMA (the dp4a MMQ path)
  --mmvq-only      false-alarms: MMVQ shapes only
  --json           JSON instead of tables

example:
  simrun bounds --study power --types q4_K,q8_0 --cases 100

Exit status: 0 when the bound holds and catches every bug, 1 when it does not (a correct
output outside, a bug caught in fewer than 99% of cases), 2 for a usage error.
`

// boundsJSON turns a study's rows or report into the CLI's JSON convention: one object,
// types and bugs by name, a NaN statistic (no output to measure) as null.
func boundsJSON(v any) (any, error) {
	var rows []map[string]any
	add := func(r any, typ quant.Type, bug string, nan map[string]float64) error {
		m := map[string]any{}
		raw, err := marshalNoNaN(r, nan)
		if err != nil {
			return err
		}
		if err := json.Unmarshal(raw, &m); err != nil {
			return err
		}
		m["type"] = typ.String()
		if bug != "" {
			m["bug"] = bug
		}
		rows = append(rows, m)
		return nil
	}
	switch x := v.(type) {
	case []oracletest.TightnessRow:
		for _, r := range x {
			nan := map[string]float64{"median": r.Median, "worst": r.Worst, "rel_bound": r.RelBound, "old_rel_bound": r.OldRelBound}
			r.Median, r.Worst, r.RelBound, r.OldRelBound = 0, 0, 0, 0
			if err := add(r, r.Type, "", nan); err != nil {
				return nil, err
			}
		}
		return map[string]any{"study": "tightness", "rows": rows}, nil
	case []oracletest.PowerRow:
		for _, r := range x {
			if err := add(r, r.Type, r.Bug.String(), nil); err != nil {
				return nil, err
			}
		}
		return map[string]any{"study": "power", "rows": rows}, nil
	case oracletest.FalseAlarmReport:
		return map[string]any{"study": "false-alarms", "report": x}, nil
	}
	return v, nil
}

// marshalNoNaN marshals r and then sets the fields of nan, a NaN or ±Inf as null.
func marshalNoNaN(r any, nan map[string]float64) ([]byte, error) {
	raw, err := json.Marshal(r)
	if err != nil || len(nan) == 0 {
		return raw, err
	}
	m := map[string]any{}
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, err
	}
	for k, f := range nan {
		if math.IsNaN(f) || math.IsInf(f, 0) {
			m[k] = nil
		} else {
			m[k] = f
		}
	}
	return json.Marshal(m)
}

func cmdBounds(args []string, stdout, stderr io.Writer) int {
	fl := flag.NewFlagSet("bounds", flag.ContinueOnError)
	fl.SetOutput(io.Discard)
	study := fl.String("study", "", "")
	types := fl.String("types", "", "")
	k := fl.Int("k", 0, "")
	cases := fl.Int("cases", 0, "")
	seed := fl.Uint64("seed", 1, "")
	device := fl.String("device", "H200", "")
	noMMA := fl.Bool("no-int8-mma", false, "")
	mmvqOnly := fl.Bool("mmvq-only", false, "")
	asJSON := fl.Bool("json", false, "")
	if err := fl.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(stdout, boundsHelp)
			return 0
		}
		fmt.Fprintf(stderr, "simrun bounds: %v\nrun 'simrun bounds -h' for the flags\n", err)
		return 2
	}
	if fl.NArg() > 0 {
		fmt.Fprintf(stderr, "simrun bounds: unexpected argument %q\n", fl.Arg(0))
		return 2
	}
	dev, err := sim.Lookup(*device)
	if err != nil {
		fmt.Fprintf(stderr, "simrun bounds: %v\n", err)
		return 2
	}
	dev.NoTuringMMA = *noMMA
	opt := oracletest.StudyOptions{K: *k, Cases: *cases, Seed: *seed, MMVQOnly: *mmvqOnly,
		Progress: func(s string) { fmt.Fprintln(stderr, s) }}
	if *types != "" {
		for _, s := range strings.Split(*types, ",") {
			t, err := quant.ParseType(strings.TrimSpace(s))
			if err != nil {
				fmt.Fprintf(stderr, "simrun bounds: --types: %v\n", err)
				return 2
			}
			opt.Types = append(opt.Types, t)
		}
	}
	if *k != 0 && (*k < 256 || *k%256 != 0) {
		fmt.Fprintf(stderr, "simrun bounds: --k %d: want a positive multiple of 256\n", *k)
		return 2
	}
	impl := ggsim.NewSimulator()
	start := time.Now()
	cmdline := "simrun bounds " + strings.Join(args, " ")
	emit := func(v any) int {
		v, err := boundsJSON(v)
		if err != nil {
			fmt.Fprintln(stderr, "simrun bounds:", err)
			return 1
		}
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(v); err != nil {
			fmt.Fprintln(stderr, "simrun bounds:", err)
			return 1
		}
		return 0
	}
	status := 0
	switch *study {
	case "tightness":
		rows, err := oracletest.Tightness(impl, dev, opt)
		if err != nil {
			fmt.Fprintln(stderr, "simrun bounds:", err)
			return 1
		}
		for _, r := range rows {
			if r.Outside > 0 {
				status = 1
			}
		}
		if *asJSON {
			return max(status, emit(rows))
		}
		fmt.Fprintf(stdout, "`%s` on %s (%s)\n\n", cmdline, dev.Name, time.Since(start).Round(time.Second))
		fmt.Fprintln(stdout, "| type | path | data | outputs | exact | bound/err median | bound/err worst | outside | bound/|value| median | old bound/|value| mean |")
		fmt.Fprintln(stdout, "|---|---|---|---|---|---|---|---|---|---|")
		for _, r := range rows {
			old := ""
			if r.OldRelBound > 0 {
				old = fmt.Sprintf("%.3g", r.OldRelBound)
			}
			med, worst := fmt.Sprintf("%.3g", r.Median), fmt.Sprintf("%.3g", r.Worst)
			if math.IsNaN(r.Median) {
				med, worst = "all exact", "all exact"
			}
			fmt.Fprintf(stdout, "| %v | %s | %s | %d | %d | %s | %s | %d | %.2g | %s |\n", r.Type, r.Path, r.Data, r.Outputs, r.Exact, med, worst, r.Outside, r.RelBound, old)
		}
	case "power":
		rows, err := oracletest.Power(impl, dev, opt)
		if err != nil {
			fmt.Fprintln(stderr, "simrun bounds:", err)
			return 1
		}
		for _, r := range rows {
			if r.FalseAlarms > 0 || 100*r.Caught < 99*r.Cases {
				status = 1
			}
		}
		if *asJSON {
			return max(status, emit(rows))
		}
		fmt.Fprintf(stdout, "`%s` on %s (%s)\n\n", cmdline, dev.Name, time.Since(start).Round(time.Second))
		fmt.Fprintln(stdout, "| bug | type | path | cases caught | outputs caught | false alarms (correct outputs) |")
		fmt.Fprintln(stdout, "|---|---|---|---|---|---|")
		for _, r := range rows {
			fmt.Fprintf(stdout, "| %v | %v | %s | %d/%d | %d/%d (%.1f%%) | %d (%d) |\n", r.Bug, r.Type, r.Path, r.Caught, r.Cases,
				r.OutputsCaught, r.Outputs, 100*float64(r.OutputsCaught)/float64(max(1, r.Outputs)), r.FalseAlarms, r.CorrectOutputs)
		}
	case "false-alarms":
		n := *cases
		if n == 0 {
			n = 10000
		}
		opt.Cases = n
		rep, err := oracletest.FalseAlarms(impl, dev, n, opt)
		if err != nil {
			fmt.Fprintln(stderr, "simrun bounds:", err)
			return 1
		}
		if rep.Outside > 0 {
			status = 1
		}
		if *asJSON {
			return max(status, emit(rep))
		}
		fmt.Fprintf(stdout, "`%s` on %s: %d correct cases (%v; %d drawn cases not modelled, skipped), %d outputs, %d outside the bound, %s\n",
			cmdline, dev.Name, rep.Cases, rep.PerPath, rep.Skipped, rep.Outputs, rep.Outside, time.Since(start).Round(time.Second))
		if rep.First != "" {
			fmt.Fprintln(stdout, "first:", rep.First)
		}
	default:
		fmt.Fprintf(stderr, "simrun bounds: --study %q: want tightness, power or false-alarms\n", *study)
		return 2
	}
	return status
}
