package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
)

// The exit statuses of every simrun command (main.go's comment, `simrun -h`).
const (
	exitOK    = 0 // done, every verdict passed
	exitFail  = 1 // a verdict failed: a mismatch, an output outside its bound, a case not simulated, a finding
	exitUsage = 2 // a command-line mistake: unknown command or flag, bad value, stray argument
	exitInput = 3 // an input file is missing, unreadable or not what it must be
)

// parseFlags parses args into fl the way a Go tool does: flags may come before, between
// or after the positional arguments (`simrun verify FILE --json`), and "--" ends the
// flags (everything after it is positional). It returns the positional arguments in
// order. The error is fl.Parse's (flag.ErrHelp for -h, -help, --help).
func parseFlags(fl *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fl.Parse(args); err != nil {
			return nil, err
		}
		rest := fl.Args()
		if len(rest) == 0 {
			return pos, nil
		}
		// Did fl.Parse stop at a "--" terminator (not a flag's value "--")?
		if n := len(args) - len(rest); n > 0 && args[n-1] == "--" && !flagTakesValue(fl, args, n-1) {
			return append(pos, rest...), nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

// flagTakesValue reports whether args[i] is the value of the flag args[i-1] (given as
// "-name" or "--name" without "=", of a non-boolean flag).
func flagTakesValue(fl *flag.FlagSet, args []string, i int) bool {
	if i == 0 {
		return false
	}
	name := strings.TrimLeft(args[i-1], "-")
	if !strings.HasPrefix(args[i-1], "-") || strings.Contains(name, "=") || name == "" {
		return false
	}
	f := fl.Lookup(name)
	if f == nil {
		return false
	}
	if b, ok := f.Value.(interface{ IsBoolFlag() bool }); ok && b.IsBoolFlag() {
		return false
	}
	return true
}

// cli is one command's front matter for parseCLI: its name as typed ("sweep run"), its
// -h text, and whether it takes positional arguments (files) at all.
type cli struct {
	name       string
	help       func() string
	positional bool
}

// parse parses args into fl (flags anywhere, see parseFlags; the FlagSet's own output is
// discarded). It returns ok == false with the exit status when the command is done:
// -h prints the help on stdout (exitOK); a flag error or a positional argument the
// command does not take is reported on stderr (exitUsage).
func (c cli) parse(fl *flag.FlagSet, args []string, stdout, stderr io.Writer) (pos []string, code int, ok bool) {
	fl.SetOutput(io.Discard)
	fl.Usage = func() {}
	pos, err := parseFlags(fl, args)
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprint(stdout, c.help())
		return nil, exitOK, false
	}
	if err != nil {
		return nil, c.usage(stderr, err), false
	}
	if !c.positional && len(pos) > 0 {
		return nil, c.usage(stderr, fmt.Errorf("unexpected argument %q", pos[0])), false
	}
	return pos, exitOK, true
}

// usage reports a command-line mistake on stderr and returns exitUsage.
func (c cli) usage(stderr io.Writer, err error) int {
	fmt.Fprintf(stderr, "simrun %s: %v\nrun 'simrun %s -h' for the flags\n", c.name, err, c.name)
	return exitUsage
}

// fail reports an error on stderr and returns code.
func (c cli) fail(stderr io.Writer, code int, err error) int {
	fmt.Fprintf(stderr, "simrun %s: %v\n", c.name, err)
	return code
}

// writeJSON prints v as one indented JSON object (the schema convention of docs/json.md)
// and returns code, or exitFail if it cannot be written.
func (c cli) writeJSON(stdout, stderr io.Writer, v any, code int) int {
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return c.fail(stderr, exitFail, err)
	}
	return code
}

// exitStatusHelp is the exit-status paragraph of `simrun -h`.
const exitStatusHelp = `Exit status (every command): 0 all good; 1 a verdict failed (a mismatch, an output
outside its bound, a case ggsim does not simulate, a sanitizer finding); 2 a usage error
(unknown command or flag, bad value, stray argument); 3 an input file missing or
unreadable. Errors go to stderr, results to stdout.`

// jsonHelp is the --json paragraph of `simrun -h`.
const jsonHelp = `--json (every command): one JSON object on stdout (docs/json.md): lower-case snake_case
keys (maps keyed by data, such as per-type counts, keep the data's spelling), counts and
metrics as JSON numbers, NaN and Inf as null, bits and digests as hex strings, keys that
do not apply left out.`

// Shards: every sweep splits its cases the same way, by index modulo n (shard i of n
// keeps the indices i, i+n, i+2n, ...), so that the parts of any split together are the
// whole and `simrun digest combine` can join them.

// shardEnv names the environment a sweep reads its shard from when --shard is not
// given: GGSIM_SHARD=i/n, or a Kubernetes Indexed Job's JOB_COMPLETION_INDEX=i with
// GGSIM_SHARDS=n (the Job's completions).
const shardEnv = "GGSIM_SHARD=i/n, or JOB_COMPLETION_INDEX=i with GGSIM_SHARDS=n"

// shardOf returns the shard (i of n) of flag value s ("i/n"; "" for the environment's,
// or 0/1 when the environment names none).
func shardOf(s string) (i, n int, err error) {
	return shardFrom(s, os.Getenv)
}

func shardFrom(s string, getenv func(string) string) (i, n int, err error) {
	if s != "" {
		return parseShard(s)
	}
	if v := getenv("GGSIM_SHARD"); v != "" {
		i, n, err = parseShard(v)
		if err != nil {
			return 0, 0, fmt.Errorf("GGSIM_SHARD: %w", err)
		}
		return i, n, nil
	}
	idx, cnt := getenv("JOB_COMPLETION_INDEX"), getenv("GGSIM_SHARDS")
	switch {
	case idx == "" && cnt == "":
		return 0, 1, nil
	case idx == "" || cnt == "":
		return 0, 0, fmt.Errorf("JOB_COMPLETION_INDEX=%q and GGSIM_SHARDS=%q: set both (the job's index and its completions) or neither", idx, cnt)
	}
	i, n, err = parseShard(idx + "/" + cnt)
	if err != nil {
		return 0, 0, fmt.Errorf("JOB_COMPLETION_INDEX and GGSIM_SHARDS: %w", err)
	}
	return i, n, nil
}

// parseShard parses "i/n" (0 <= i < n).
func parseShard(s string) (i, n int, err error) {
	a, b, ok := strings.Cut(s, "/")
	i, err1 := strconv.Atoi(a)
	n, err2 := strconv.Atoi(b)
	if !ok || err1 != nil || err2 != nil || n < 1 || i < 0 || i >= n {
		return 0, 0, fmt.Errorf("shard %q: want i/n with 0 <= i < n", s)
	}
	return i, n, nil
}
