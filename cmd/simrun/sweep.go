package main

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/ggsim/ggsim"
	"github.com/ggsim/ggsim/gguf/golden"
	"github.com/ggsim/ggsim/oracle"
	"github.com/ggsim/ggsim/oracle/coverage"
	"github.com/ggsim/ggsim/oracle/oracletest"
	"github.com/ggsim/ggsim/sim"
	"github.com/ggsim/ggsim/sim/glu"
)

// cmdSweep is `simrun sweep verify|run`: sweep records (oracle/oracletest.Sweep) checked
// or made by the simulator through the front door.
func cmdSweep(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, "simrun sweep: want a subcommand\n"+sweepHelp)
		return exitUsage
	}
	switch args[0] {
	case "-h", "-help", "--help":
		fmt.Fprint(stdout, sweepHelp)
		return exitOK
	case "verify":
		return cmdSweepVerify(args[1:], stdout, stderr)
	case "run":
		return cmdSweepRun(args[1:], stdout, stderr)
	case "digest":
		return cmdSweepDigest(args[1:], stdout, stderr)
	}
	fmt.Fprintf(stderr, "simrun sweep: unknown command %q\n%s", args[0], sweepHelp)
	return exitUsage
}

const sweepHelp = `usage: simrun sweep verify [--json] [--no-int8-mma] [--workers N] FILE...
       simrun sweep run --kind mmq|mmqid --seed S --range FROM-TO [--shard i/n] [--out FILE] [--json]
       simrun sweep digest --kind q8_1|blocks [--type T] [--chunks N] [--shard i/n] [--out PART] [--json]

A sweep is a long list of random cases (oracle/oracletest.Sweep) whose outputs are recorded
as digests, one line per case: made on a GPU by gpu/ggml TestSweepCUDA, verified here.
A digest sweep (sweep digest) is too large even for that: it hashes the outputs of every
chunk into one digest (simrun digest combine joins sharded parts). simrun sweep verify -h,
simrun sweep run -h and simrun sweep digest -h list the flags.

example:
  simrun sweep verify --no-int8-mma gpu/testdata/h200-cuda13-sweep/sweep-dp4a.tsv
  simrun sweep run --kind mmq --seed 1 --range 0-100 --shard 0/4 --out part0.tsv

Exit status: 0 all cases match / no errors, 1 a case does not, 2 usage, 3 unreadable file.
`

const sweepVerifyHelp = `usage: simrun sweep verify [--json] [--no-int8-mma] [--coverage] [--workers N] FILE...

sweep verify regenerates every case of a sweep record (oracle/oracletest.Sweep; made on a
GPU by gpu/ggml TestSweepCUDA) and runs it through the simulator on the device the record's
header names, comparing the digest of its output bits; it prints every case that does not
match and counts per kind, type and profile.

flags:
  --json           one JSON object (docs/json.md): files, counts, failures
  --no-int8-mma    the record was made by a ggml build without int8 MMA and with
                   GGML_CUDA_FORCE_MMQ (sim.Device.NoTuringMMA, ForceMMQ)
  --coverage       also report which kernel paths the cases exercised and which ones
                   the device can take but no case did (as simrun verify --coverage)
  --workers N      goroutines across cases (0: GOMAXPROCS)  [0]

example:
  simrun sweep verify --no-int8-mma gpu/testdata/h200-cuda13-sweep/sweep-dp4a.tsv
  simrun sweep verify --coverage gpu/testdata/h200-cuda13-sweep/sweep-dp4a.tsv

Exit status: 0 when every case matches, 1 when one does not (an unsupported case
included), 2 for a usage error, 3 when a file is missing or unreadable.
`

var sweepVerifyCLI = cli{name: "sweep verify", help: func() string { return sweepVerifyHelp }, positional: true}

const sweepRunHelp = `usage: simrun sweep run --kind mmq|mmqid --seed S --range FROM-TO [--shard i/n] [--device NAME]
                        [--no-int8-mma] [--out FILE] [--workers N] [--json]

sweep run writes the simulator's own sweep record of cases FROM..TO-1 of a sweep, in the
format sweep verify reads. --shard i/n keeps the cases whose index is i modulo n; without
--shard, the environment's shard ({{shardenv}}).

flags:
  --kind K         mmq or mmqid
  --seed S         the sweep's seed  [0]
  --range FROM-TO  case indices (half-open: FROM..TO-1)
  --shard i/n      only the cases whose index is i modulo n  [0/1]
  --device NAME    a device of the catalog: {{devices}}  [H200]
  --no-int8-mma    simulate a ggml build without int8 MMA and with GGML_CUDA_FORCE_MMQ
  --out FILE       write the record to FILE  [standard output]
  --workers N      goroutines across cases (0: GOMAXPROCS)  [0]
  --json           print a summary object (cases, errors, out) instead of the count on
                   stderr; needs --out

example:
  simrun sweep run --kind mmq --seed 1 --range 0-20 --shard 1/4 --out part1.tsv

Exit status: 0 when every case ran, 1 when one could not, 2 for a usage error.
`

var sweepRunCLI = cli{name: "sweep run", help: func() string {
	return strings.NewReplacer("{{devices}}", wrap(deviceNames(), 35), "{{shardenv}}", shardEnv).Replace(sweepRunHelp)
}}

// deviceNames lists the catalog's device names, quoted where they hold a space.
func deviceNames() []string {
	var devs []string
	for _, d := range sim.Catalog() {
		n := d.Name
		if strings.Contains(n, " ") {
			n = `"` + n + `"`
		}
		devs = append(devs, n)
	}
	return devs
}

// sweepDevice is the simulated device of a record's header device, with the build's
// int8-MMA switch.
func sweepDevice(d golden.Device, noMMA bool) (sim.Device, error) {
	dev, err := oracle.DeviceOf(golden.Meta{Device: d})
	if err != nil {
		return sim.Device{}, err
	}
	if noMMA {
		if dev.Vendor != sim.NVIDIA {
			return sim.Device{}, fmt.Errorf("--no-int8-mma describes an NVIDIA build; the record's device %s is not one", d.Name)
		}
		noInt8MMA(&dev)
	}
	return dev, nil
}

// noInt8MMA makes dev the dp4a build the sweep records of gpu/testdata/h200-cuda13-sweep
// were made with: int8 MMA switched off (sim.Device.NoTuringMMA) and GGML_CUDA_FORCE_MMQ
// (sim.Device.ForceMMQ), without which such a build sends 64 and more columns to cuBLAS.
func noInt8MMA(dev *sim.Device) {
	dev.NoTuringMMA, dev.ForceMMQ = true, true
	dev.Int8MMA = dev.HasInt8MMA()
}

// runSweepCase runs one sweep case through the front door on dev.
func runSweepCase(impl oracle.Impl, dev sim.Device, c *oracletest.SweepCase) ([]float32, error) {
	switch c.Op {
	case "mul_mat":
		return impl.MulMat(dev, c.Type, c.A, c.K, c.N, c.B, c.M)
	case "mul_mat_id":
		return impl.MulMatID(dev, c.Type, c.A, c.K, c.N, c.E, c.B, c.B1, c.T, c.IDs, c.U)
	case string(golden.OpMulMatGLU), string(golden.OpMulMatIDGLU):
		gi, ok := impl.(oracle.GLUImpl)
		if !ok {
			return nil, fmt.Errorf("sweep case %s/%d: %w: the implementation has no GLU ops", c.Kind, c.Index, oracle.ErrUnsupported)
		}
		g := glu.Spec{Op: glu.Op(c.GLU), Alpha: c.GLUAlpha, Limit: c.GLULimit}
		allowed := c.Fusion != golden.FusionDisabled
		if c.Op == string(golden.OpMulMatGLU) {
			return gi.MulMatGLU(dev, c.Type, c.A, c.Up, c.K, c.N, c.B, c.M, g, allowed)
		}
		return gi.MulMatIDGLU(dev, c.Type, c.A, c.Up, c.K, c.N, c.E, c.B, c.B1, c.T, c.IDs, c.U, g, allowed)
	}
	return nil, fmt.Errorf("sweep case %s/%d: unknown op %q", c.Kind, c.Index, c.Op)
}

type sweepCaseJSON struct {
	Line    int    `json:"line"`
	Kind    string `json:"kind"`
	Index   int    `json:"index"`
	Type    string `json:"type"`
	Shape   string `json:"shape"`
	Profile string `json:"profile"`
	Status  string `json:"status"` // MATCH, MISMATCH, UNSUPPORTED, ERROR
	Want    string `json:"want,omitempty"`
	Got     string `json:"got,omitempty"`
	Error   string `json:"error,omitempty"`
}

type sweepFileJSON struct {
	File      string            `json:"file"`
	Producer  string            `json:"producer,omitempty"`
	Device    string            `json:"device,omitempty"`
	Error     string            `json:"error,omitempty"`
	Cases     int               `json:"cases"`
	Match     int               `json:"match"`
	ByKind    map[string][2]int `json:"by_kind,omitempty"`
	ByType    map[string][2]int `json:"by_type,omitempty"`
	ByProfile map[string][2]int `json:"by_profile,omitempty"`
	// ByLaunch counts the mmq cases by the launch ggml makes (oracletest.MMQLaunch: the
	// conventional grid, one block per tile, stream-K with or without fixup; fallback rows).
	ByLaunch map[string][2]int `json:"by_launch,omitempty"`
	Failures []sweepCaseJSON   `json:"failures,omitempty"`
}

type sweepVerifyJSON struct {
	Files []sweepFileJSON `json:"files"`
	Cases int             `json:"cases"`
	Match int             `json:"match"`
	OK    bool            `json:"ok"`
	// Coverage is the kernel paths of the cases per device (--coverage).
	Coverage []coverage.DeviceReport `json:"coverage,omitempty"`
}

func verdictStatus(v oracletest.SweepVerdict) string {
	switch {
	case v.Match:
		return "MATCH"
	case v.Want.Err != "":
		return "ERROR"
	case v.Err != nil && errors.Is(v.Err, oracle.ErrUnsupported):
		return "UNSUPPORTED"
	case v.Err != nil:
		return "ERROR"
	}
	return "MISMATCH"
}

func cmdSweepVerify(args []string, stdout, stderr io.Writer) int {
	fl := flag.NewFlagSet("sweep verify", flag.ContinueOnError)
	asJSON := fl.Bool("json", false, "")
	noMMA := fl.Bool("no-int8-mma", false, "")
	workers := fl.Int("workers", 0, "")
	withCoverage := fl.Bool("coverage", false, "")
	files, code, ok := sweepVerifyCLI.parse(fl, args, stdout, stderr)
	if !ok {
		return code
	}
	if len(files) == 0 {
		return sweepVerifyCLI.usage(stderr, errors.New("no record file given"))
	}
	var impl oracle.Impl = ggsim.NewSimulator()
	var rec *coverage.Recorder
	if *withCoverage {
		rec = coverage.NewRecorder(impl)
		impl = rec
	}
	all := sweepVerifyJSON{OK: true}
	unreadable := 0
	for _, path := range files {
		fr, readErr := verifySweepFile(path, impl, *noMMA, *workers)
		if readErr != nil {
			unreadable++
			fmt.Fprintf(stderr, "simrun sweep verify: %v\n", readErr)
		}
		all.Files = append(all.Files, fr)
		all.Cases += fr.Cases
		all.Match += fr.Match
		if fr.Error != "" || fr.Match != fr.Cases {
			all.OK = false
		}
		if !*asJSON {
			printSweepFile(stdout, fr)
		}
	}
	if all.Cases == 0 {
		all.OK = false
	}
	code = exitOK
	switch {
	case unreadable > 0:
		code = exitInput
	case !all.OK:
		code = exitFail
	}
	if rec != nil {
		all.Coverage = rec.Report()
	}
	if *asJSON {
		return sweepVerifyCLI.writeJSON(stdout, stderr, all, code)
	}
	if rec != nil {
		writeCoverage(stdout, all.Coverage)
	}
	fmt.Fprintf(stdout, "sweep verify: %d/%d cases match\n", all.Match, all.Cases)
	return code
}

// verifySweepFile verifies one record on the device its header names; readErr is
// not nil when the file cannot be opened.
func verifySweepFile(path string, impl oracle.Impl, noMMA bool, workers int) (fr sweepFileJSON, readErr error) {
	fr = sweepFileJSON{File: path}
	f, err := os.Open(path)
	if err != nil {
		fr.Error = err.Error()
		return fr, err
	}
	defer f.Close()
	br := bufio.NewReader(f)
	first, err := br.ReadString('\n')
	if err != nil && first == "" {
		fr.Error = fmt.Sprintf("%s: empty record: %v", path, err)
		return fr, errors.New(fr.Error)
	}
	producer, d, ok := oracletest.ParseSweepHeader(first)
	if !ok {
		fr.Error = fmt.Sprintf("first line %q is not a sweep header naming the device (# PRODUCER on DEVICE (cc CC, N SMs, driver D), TIME)", strings.TrimSpace(first))
		return fr, fmt.Errorf("%s: %s", path, fr.Error)
	}
	fr.Producer = producer
	// A record of `simrun sweep run --no-int8-mma` says so in its producer.
	noMMA = noMMA || strings.Contains(producer, simNoMMAProducer)
	dev, err := sweepDevice(d, noMMA)
	if err != nil {
		fr.Error = err.Error()
		return fr, nil
	}
	fr.Device = fmt.Sprintf("%s (cc %d, %d SMs%s)", dev.Name, dev.CC, dev.SMCount, map[bool]string{true: ", no int8 MMA"}[dev.NoTuringMMA])
	rep, err := oracletest.VerifySweepParallel(br, nil, func(c *oracletest.SweepCase) ([]float32, error) {
		return runSweepCase(impl, dev, c)
	}, workers)
	if err != nil {
		fr.Error = err.Error()
	}
	fr.Cases, fr.Match, fr.ByType, fr.ByProfile = rep.Cases, rep.Match, rep.ByType, rep.ByPath
	fr.ByKind = map[string][2]int{}
	for _, v := range rep.Verdicts {
		k := fr.ByKind[v.Want.Kind]
		k[1]++
		if v.Match {
			k[0]++
		}
		fr.ByKind[v.Want.Kind] = k
		var K, N, M int
		if v.Want.Kind != "mmq" {
			continue
		}
		if _, err := fmt.Sscanf(v.Want.Shape, "K=%d N=%d M=%d", &K, &N, &M); err != nil {
			continue
		}
		if fr.ByLaunch == nil {
			fr.ByLaunch = map[string][2]int{}
		}
		l := oracletest.MMQLaunch(dev, v.Want.Type, K, N, M)
		c := fr.ByLaunch[l]
		c[1]++
		if v.Match {
			c[0]++
		}
		fr.ByLaunch[l] = c
	}
	for _, v := range rep.Verdicts {
		if v.Match {
			continue
		}
		cj := sweepCaseJSON{Line: v.Line, Kind: v.Want.Kind, Index: v.Want.Index, Type: v.Want.Type.String(),
			Shape: v.Want.Shape, Profile: v.Want.Profile, Status: verdictStatus(v), Want: v.Want.Digest, Got: v.Got}
		switch {
		case v.Want.Err != "":
			cj.Error = "recorded error: " + v.Want.Err
		case v.Err != nil:
			cj.Error = v.Err.Error()
		}
		fr.Failures = append(fr.Failures, cj)
	}
	return fr, nil
}

func printSweepFile(w io.Writer, fr sweepFileJSON) {
	if fr.Device != "" {
		fmt.Fprintf(w, "%s: %s; simulated as %s\n", fr.File, fr.Producer, fr.Device)
	}
	if fr.Error != "" {
		fmt.Fprintf(w, "%s: ERROR: %s\n", fr.File, fr.Error)
	}
	for _, c := range fr.Failures {
		fmt.Fprintf(w, "%s:%d: %s %s/%d %s %s %s", fr.File, c.Line, c.Status, c.Kind, c.Index, c.Type, c.Shape, c.Profile)
		if c.Error != "" {
			fmt.Fprintf(w, ": %s\n", c.Error)
		} else {
			fmt.Fprintf(w, ": recorded %s, simulated %s\n", c.Want, c.Got)
		}
	}
	counts := func(what string, m map[string][2]int) {
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		fmt.Fprintf(w, "  per %s:", what)
		for _, k := range keys {
			fmt.Fprintf(w, " %s %d/%d", k, m[k][0], m[k][1])
		}
		fmt.Fprintln(w)
	}
	if fr.Cases > 0 {
		counts("kind", fr.ByKind)
		counts("type", fr.ByType)
		counts("profile", fr.ByProfile)
		if fr.ByLaunch != nil {
			counts("mmq launch", fr.ByLaunch)
		}
	}
	fmt.Fprintf(w, "%s: %d/%d cases match\n", fr.File, fr.Match, fr.Cases)
}

// parseRange parses "FROM-TO", the half-open range [FROM, TO) of case indices (as
// GGSIM_SWEEP of gpu/ggml TestSweepCUDA).
func parseRange(s string) (from, to int, err error) {
	a, b, ok := strings.Cut(s, "-")
	from, err1 := strconv.Atoi(a)
	to, err2 := strconv.Atoi(b)
	if !ok || err1 != nil || err2 != nil || from < 0 || to < from {
		return 0, 0, fmt.Errorf("--range %q: want FROM-TO with 0 <= FROM <= TO (cases FROM..TO-1)", s)
	}
	return from, to, nil
}

func cmdSweepRun(args []string, stdout, stderr io.Writer) int {
	c := sweepRunCLI
	fl := flag.NewFlagSet("sweep run", flag.ContinueOnError)
	kind := fl.String("kind", "", "")
	seed := fl.Uint64("seed", 0, "")
	rng := fl.String("range", "", "")
	shard := fl.String("shard", "", "")
	noMMA := fl.Bool("no-int8-mma", false, "")
	device := fl.String("device", "H200", "")
	outPath := fl.String("out", "", "")
	workers := fl.Int("workers", 0, "")
	asJSON := fl.Bool("json", false, "")
	if _, code, ok := c.parse(fl, args, stdout, stderr); !ok {
		return code
	}
	if *kind != oracletest.SweepMMQ && *kind != oracletest.SweepMMQID {
		return c.usage(stderr, fmt.Errorf("--kind %q: want mmq or mmqid", *kind))
	}
	if *rng == "" {
		return c.usage(stderr, errors.New("--range FROM-TO is required"))
	}
	if *asJSON && *outPath == "" {
		return c.usage(stderr, errors.New("--json prints a summary: give the record a file with --out"))
	}
	from, to, err := parseRange(*rng)
	if err != nil {
		return c.usage(stderr, err)
	}
	si, sn, err := shardOf(*shard)
	if err != nil {
		return c.usage(stderr, err)
	}
	dev, err := sim.Lookup(*device)
	if err != nil {
		return c.usage(stderr, fmt.Errorf("--device: %w", err))
	}
	if *noMMA {
		noInt8MMA(&dev)
	}
	if err := dev.Validate(); err != nil {
		return c.usage(stderr, err)
	}
	w := stdout
	if *outPath != "" {
		f, err := os.Create(*outPath)
		if err != nil {
			return c.fail(stderr, exitFail, err)
		}
		defer f.Close()
		w = f
	}
	bw := bufio.NewWriter(w)
	producer := "ggsim simulator"
	if dev.NoTuringMMA {
		producer = simNoMMAProducer
	}
	fmt.Fprintln(bw, oracletest.SweepHeader(producer, golden.Device{Name: dev.Name, CC: dev.CC, SMCount: dev.SMCount, Driver: "none"}, time.Now()))
	fmt.Fprintf(bw, "# simrun sweep run --kind %s --seed %d --range %d-%d --shard %d/%d --device %s%s\n",
		*kind, *seed, from, to, si, sn, *device, map[bool]string{true: " --no-int8-mma"}[dev.NoTuringMMA])
	var idx []int
	for i := from; i < to; i++ {
		if i%sn == si {
			idx = append(idx, i)
		}
	}
	impl := ggsim.NewSimulator()
	lines := make([]chan string, len(idx))
	for k := range lines {
		lines[k] = make(chan string, 1)
	}
	nw := *workers
	if nw < 1 {
		nw = runtime.GOMAXPROCS(0)
	}
	var mu sync.Mutex
	next := 0
	sem := make(chan struct{}, 4*nw) // bounds the finished lines waiting to be written
	var wg sync.WaitGroup
	for range nw {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				sem <- struct{}{}
				mu.Lock()
				k := next
				next++
				mu.Unlock()
				if k >= len(idx) {
					<-sem
					return
				}
				lines[k] <- sweepLine(impl, dev, *kind, *seed, idx[k])
			}
		}()
	}
	failed := 0
	for k := range idx {
		l := <-lines[k]
		<-sem
		if strings.Contains(l, "\terror: ") {
			failed++
		}
		fmt.Fprintln(bw, l)
	}
	wg.Wait()
	if err := bw.Flush(); err != nil {
		return c.fail(stderr, exitFail, err)
	}
	code := exitOK
	if failed > 0 {
		code = exitFail
	}
	if *asJSON {
		return c.writeJSON(stdout, stderr, struct {
			Kind   string `json:"kind"`
			Seed   uint64 `json:"seed"`
			From   int    `json:"from"`
			To     int    `json:"to"`
			Shard  int    `json:"shard"`
			Shards int    `json:"shards"`
			Cases  int    `json:"cases"`
			Errors int    `json:"errors"`
			Out    string `json:"out"`
		}{*kind, *seed, from, to, si, sn, len(idx), failed, *outPath}, code)
	}
	fmt.Fprintf(stderr, "sweep run: %d cases, %d errors\n", len(idx), failed)
	return code
}

// simNoMMAProducer is the producer of `simrun sweep run --no-int8-mma`'s header.
const simNoMMAProducer = "ggsim simulator (no int8 MMA, FORCE_MMQ)"

// sweepLine runs case i of the sweep and returns its record line.
func sweepLine(impl oracle.Impl, dev sim.Device, kind string, seed uint64, i int) string {
	c, err := oracletest.Sweep(kind, seed, i)
	if err != nil {
		return oracletest.SweepResult{Kind: kind, Seed: seed, Index: i, Err: err.Error()}.String()
	}
	r := oracletest.SweepResult{Kind: kind, Seed: seed, Index: i, Type: c.Type, Shape: c.Shape(), Profile: c.Profile}
	out, err := runSweepCase(impl, dev, &c)
	if err != nil {
		r.Err = err.Error()
	} else {
		r.Digest = oracletest.Digest(out)
	}
	return r.String()
}
