package main

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"

	"github.com/ggsim/ggsim"
	"github.com/ggsim/ggsim/oracle/oracletest"
	"github.com/ggsim/ggsim/quant"
	"github.com/ggsim/ggsim/sim"
)

// A digest part is the text simrun sweep digest writes and simrun digest combine reads:
//
//	# ggsim digest part v1
//	spec blocks type=q4_K seed=1 chunks=1024
//	device H200
//	shard 0/4
//	chunk 0 <sha256 hex>
//	chunk 4 <sha256 hex>
//	...
const digestPartMagic = "# ggsim digest part v1"

// digestPart is one part: the sweep, the device, the shard and its chunk digests.
type digestPart struct {
	File   string
	Spec   oracletest.DigestSweep
	Device string
	Shard  [2]int
	Chunks map[int]string
}

func writeDigestPart(w io.Writer, p *digestPart, order []int) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "%s\nspec %s\ndevice %s\nshard %d/%d\n", digestPartMagic, p.Spec, p.Device, p.Shard[0], p.Shard[1])
	for _, c := range order {
		fmt.Fprintf(bw, "chunk %d %s\n", c, p.Chunks[c])
	}
	return bw.Flush()
}

// readDigestPart reads a part file; an error says what and where (file:line).
func readDigestPart(path string) (*digestPart, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	p := &digestPart{File: path, Chunks: map[int]string{}}
	sc := bufio.NewScanner(f)
	line := 0
	bad := func(format string, a ...any) error {
		return fmt.Errorf("%s:%d: %s", path, line, fmt.Sprintf(format, a...))
	}
	var haveSpec, haveDev, haveShard bool
	for sc.Scan() {
		line++
		l := sc.Text()
		if line == 1 {
			if l != digestPartMagic {
				return nil, bad("not a digest part (want %q)", digestPartMagic)
			}
			continue
		}
		key, rest, _ := strings.Cut(l, " ")
		switch key {
		case "spec":
			if p.Spec, err = oracletest.ParseDigestSweep(rest); err != nil {
				return nil, bad("%v", err)
			}
			haveSpec = true
		case "device":
			p.Device, haveDev = rest, true
		case "shard":
			if p.Shard[0], p.Shard[1], err = parseShard(rest); err != nil {
				return nil, bad("%v", err)
			}
			haveShard = true
		case "chunk":
			ix, d, ok := strings.Cut(rest, " ")
			c, err := strconv.Atoi(ix)
			if !ok || err != nil || len(d) != 64 || strings.Trim(d, "0123456789abcdef") != "" {
				return nil, bad("%q is not \"chunk INDEX SHA256\"", l)
			}
			if !haveSpec || !haveShard {
				return nil, bad("chunk before the spec and shard lines")
			}
			if c < 0 || c >= p.Spec.Chunks || c%p.Shard[1] != p.Shard[0] {
				return nil, bad("chunk %d is not in shard %d/%d of %d chunks", c, p.Shard[0], p.Shard[1], p.Spec.Chunks)
			}
			if _, dup := p.Chunks[c]; dup {
				return nil, bad("chunk %d twice", c)
			}
			p.Chunks[c] = d
		case "":
		default:
			if !strings.HasPrefix(l, "#") {
				return nil, bad("unknown line %q", l)
			}
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if line == 0 {
		return nil, fmt.Errorf("%s: empty file, not a digest part", path)
	}
	if !haveSpec || !haveDev || !haveShard {
		return nil, fmt.Errorf("%s: no spec, device or shard line", path)
	}
	return p, nil
}

const sweepDigestHelp = `usage: simrun sweep digest --kind q8_1|blocks [--type T --seed S] [--chunks N] [--shard i/n]
                           [--device NAME] [--out PART] [--workers N] [--json]

sweep digest runs a check too large to record case by case and hashes its outputs to one
digest that a GPU run must reproduce (oracle/oracletest, digest sweeps):

  q8_1     every float32 bit pattern through quantize_q8_1: 4096 chunks of 2^20
           patterns (all 2^32); --chunks N runs the first N
  blocks   random valid blocks of --type through MUL_MAT on --device: chunks of 1024
           blocks (one per row, K = the block size) by 1..24 model-like columns

Each chunk's outputs are hashed (SHA-256 of the bytes: q8_1 blocks as stored, float32
bits); the sweep's digest hashes the chunk digests in order. --shard i/n (or the
environment: {{shardenv}}) runs the chunks whose index is i modulo n and writes them as a
part; simrun digest combine joins the parts of every shard into the same digest an
unsharded run prints.

flags:
  --kind K        q8_1 or blocks
  --type T        blocks: the weight type: {{types}}
  --seed S        blocks: the seed  [1]
  --chunks N      chunks: q8_1 1..4096 [4096]; blocks: N*1024 blocks [1024, a million]
  --shard i/n     run only the chunks whose index is i modulo n  [0/1]
  --device NAME   blocks: the simulated device: {{devices}}  [H200]
  --out PART      write the part (chunk digests) to PART; without it and unsharded, only
                  the digest is printed
  --workers N     goroutines across chunks (0: GOMAXPROCS)  [0]
  --json          one JSON object: sweep, device, shard, chunks run, digest (unsharded)

example:
  simrun sweep digest --kind q8_1 --chunks 8
  simrun sweep digest --kind blocks --type q4_K --seed 1 --chunks 8 --shard 1/2 --out part1.txt
  simrun digest combine part0.txt part1.txt

Exit status: 0 when every chunk ran, 1 when one could not (a type or kernel not
simulated), 2 for a usage error.
`

var sweepDigestCLI = cli{name: "sweep digest", help: func() string {
	var types []string
	for t := quant.Type(0); t < quant.TypeCount; t++ {
		if t.Valid() && t.BlockSize() > 1 && (oracletest.DigestSweep{Kind: oracletest.DigestBlocks, Type: t, Chunks: 1}).Check() == nil {
			types = append(types, t.String())
		}
	}
	return strings.NewReplacer("{{types}}", wrap(types, 35), "{{devices}}", wrap(deviceNames(), 35), "{{shardenv}}", shardEnv).Replace(sweepDigestHelp)
}}

type digestRunJSON struct {
	Sweep  string `json:"sweep"`
	Device string `json:"device"`
	Shard  int    `json:"shard"`
	Shards int    `json:"shards"`
	Chunks int    `json:"chunks"`
	Out    string `json:"out,omitempty"`
	Digest string `json:"digest,omitempty"`
}

func cmdSweepDigest(args []string, stdout, stderr io.Writer) int {
	c := sweepDigestCLI
	fl := flag.NewFlagSet("sweep digest", flag.ContinueOnError)
	kind := fl.String("kind", "", "")
	typName := fl.String("type", "", "")
	seed := fl.Uint64("seed", 1, "")
	chunks := fl.Int("chunks", 0, "")
	shard := fl.String("shard", "", "")
	devName := fl.String("device", "H200", "")
	outPath := fl.String("out", "", "")
	workers := fl.Int("workers", 0, "")
	asJSON := fl.Bool("json", false, "")
	if _, code, ok := c.parse(fl, args, stdout, stderr); !ok {
		return code
	}
	set := map[string]bool{}
	fl.Visit(func(f *flag.Flag) { set[f.Name] = true })
	s := oracletest.DigestSweep{Kind: *kind, Chunks: *chunks}
	switch *kind {
	case oracletest.DigestQ8_1:
		if set["type"] || set["seed"] || set["device"] {
			return c.usage(stderr, errors.New("--type, --seed and --device are for --kind blocks"))
		}
		if !set["chunks"] {
			s.Chunks = oracletest.Q8_1Chunks
		}
	case oracletest.DigestBlocks:
		t, err := quant.ParseType(*typName)
		if err != nil {
			return c.usage(stderr, fmt.Errorf("--type: %w", err))
		}
		s.Type, s.Seed = t, *seed
		if !set["chunks"] {
			s.Chunks = 1024
		}
	default:
		return c.usage(stderr, fmt.Errorf("--kind %q: want q8_1 or blocks", *kind))
	}
	if err := s.Check(); err != nil {
		return c.usage(stderr, err)
	}
	si, sn, err := shardOf(*shard)
	if err != nil {
		return c.usage(stderr, err)
	}
	dev, err := sim.Lookup(*devName)
	if err != nil {
		return c.usage(stderr, fmt.Errorf("--device: %w", err))
	}
	devName2 := dev.Name
	if s.Kind == oracletest.DigestQ8_1 {
		devName2 = "any" // quantize_q8_1 is the same on every device ggsim models
	}
	var idx []int
	for i := si; i < s.Chunks; i += sn {
		idx = append(idx, i)
	}
	digests := make([]string, len(idx))
	errs := make([]error, len(idx))
	impl := ggsim.NewSimulator()
	nw := *workers
	if nw < 1 {
		nw = runtime.GOMAXPROCS(0)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	next := 0
	for range min(nw, len(idx)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				mu.Lock()
				k := next
				next++
				mu.Unlock()
				if k >= len(idx) {
					return
				}
				digests[k], errs[k] = s.RunChunk(idx[k], impl, dev)
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return c.fail(stderr, exitFail, err)
		}
	}
	part := &digestPart{Spec: s, Device: devName2, Shard: [2]int{si, sn}, Chunks: map[int]string{}}
	for k, i := range idx {
		part.Chunks[i] = digests[k]
	}
	rep := digestRunJSON{Sweep: s.String(), Device: devName2, Shard: si, Shards: sn, Chunks: len(idx), Out: *outPath}
	if sn == 1 {
		if rep.Digest, err = oracletest.CombineDigests(s, digests); err != nil {
			return c.fail(stderr, exitFail, err)
		}
	}
	if *outPath != "" {
		f, err := os.Create(*outPath)
		if err != nil {
			return c.fail(stderr, exitFail, err)
		}
		err = writeDigestPart(f, part, idx)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return c.fail(stderr, exitFail, err)
		}
	} else if sn > 1 {
		if err := writeDigestPart(stdout, part, idx); err != nil {
			return c.fail(stderr, exitFail, err)
		}
		return exitOK
	}
	if *asJSON {
		return c.writeJSON(stdout, stderr, rep, exitOK)
	}
	if rep.Digest != "" {
		fmt.Fprintf(stdout, "digest %s on %s: %s\n", rep.Sweep, rep.Device, rep.Digest)
	} else {
		fmt.Fprintf(stdout, "sweep digest: shard %d/%d of %s on %s: %d chunks -> %s\n", si, sn, rep.Sweep, rep.Device, len(idx), *outPath)
	}
	return exitOK
}

const digestHelp = `usage: simrun digest combine [--want HEX] [--json] PART...

digest combine joins the parts written by simrun sweep digest --shard i/n (on any
machines, in any order) into the digest of the whole sweep: the same digest an unsharded
run prints. Every part must name the same sweep and device, and together they must hold
every chunk exactly once.

flags:
  --want HEX   the digest the sweep must have (for example a GPU run's): exit 1 if not
  --json       one JSON object: sweep, device, parts, chunks, digest, match

example:
  simrun sweep digest --kind q8_1 --chunks 8 --shard 0/2 --out p0.txt
  simrun sweep digest --kind q8_1 --chunks 8 --shard 1/2 --out p1.txt
  simrun digest combine p0.txt p1.txt

Exit status: 0 when the parts join (and match --want), 1 when chunks are missing or
twice, the parts disagree, or the digest is not --want, 2 for a usage error, 3 when a
part is missing or unreadable.
`

var digestCLI = cli{name: "digest combine", help: func() string { return digestHelp }, positional: true}

type combineJSON struct {
	Sweep  string `json:"sweep"`
	Device string `json:"device"`
	Parts  int    `json:"parts"`
	Chunks int    `json:"chunks"`
	Digest string `json:"digest"`
	Want   string `json:"want,omitempty"`
	Match  *bool  `json:"match,omitempty"`
}

func cmdDigest(args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 && (args[0] == "-h" || args[0] == "--help" || args[0] == "-help") {
		fmt.Fprint(stdout, digestHelp)
		return exitOK
	}
	if len(args) == 0 || args[0] != "combine" {
		fmt.Fprint(stderr, "simrun digest: want the subcommand combine\n"+digestHelp)
		return exitUsage
	}
	c := digestCLI
	fl := flag.NewFlagSet("digest combine", flag.ContinueOnError)
	want := fl.String("want", "", "")
	asJSON := fl.Bool("json", false, "")
	files, code, ok := c.parse(fl, args[1:], stdout, stderr)
	if !ok {
		return code
	}
	if len(files) == 0 {
		return c.usage(stderr, errors.New("no part given"))
	}
	var parts []*digestPart
	for _, f := range files {
		p, err := readDigestPart(f)
		if err != nil {
			return c.fail(stderr, exitInput, err)
		}
		parts = append(parts, p)
	}
	first := parts[0]
	all := map[int]string{}
	for _, p := range parts {
		if p.Spec != first.Spec || p.Device != first.Device {
			return c.fail(stderr, exitFail, fmt.Errorf("%s is %s on %s, %s is %s on %s: parts of different sweeps", first.File, first.Spec, first.Device, p.File, p.Spec, p.Device))
		}
		for i, d := range p.Chunks {
			if _, dup := all[i]; dup {
				return c.fail(stderr, exitFail, fmt.Errorf("chunk %d is in two parts (%s among them): a shard given twice?", i, p.File))
			}
			all[i] = d
		}
	}
	ds := make([]string, first.Spec.Chunks)
	var missing []int
	for i := range ds {
		d, ok := all[i]
		if !ok {
			missing = append(missing, i)
		}
		ds[i] = d
	}
	if len(missing) > 0 {
		return c.fail(stderr, exitFail, fmt.Errorf("%d of %d chunks missing (first: %d): a shard not given?", len(missing), len(ds), missing[0]))
	}
	digest, err := oracletest.CombineDigests(first.Spec, ds)
	if err != nil {
		return c.fail(stderr, exitFail, err)
	}
	rep := combineJSON{Sweep: first.Spec.String(), Device: first.Device, Parts: len(parts), Chunks: len(ds), Digest: digest, Want: *want}
	code = exitOK
	if *want != "" {
		m := strings.EqualFold(*want, digest)
		rep.Match = &m
		if !m {
			code = exitFail
		}
	}
	if *asJSON {
		return c.writeJSON(stdout, stderr, rep, code)
	}
	fmt.Fprintf(stdout, "digest %s on %s: %s (%d parts)\n", rep.Sweep, rep.Device, digest, len(parts))
	if code != exitOK {
		fmt.Fprintf(stderr, "simrun digest combine: the digest is not --want %s\n", *want)
	}
	return code
}
