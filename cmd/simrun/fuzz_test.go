package main

import (
	"bytes"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// fuzzWords is the alphabet of FuzzRun's argument lists: the commands, their flags (also
// as -flag and --flag=value), and values valid and not. "@out" becomes a file in the
// test's temporary directory, "@golden" a committed golden slice, "@missing" a path that
// does not exist. Every shape and range is small, so that each run is quick.
var fuzzWords = []string{
	// commands
	"verify", "explain", "capture", "sweep", "run", "devices", "version", "help", "-h", "--help", "bogus", "",
	// flags
	"--json", "--no-fp64", "--files", "--device", "--type", "--shape", "--experts", "--routing", "--seed",
	"--svg", "--blocks", "--k", "--n", "--m", "--kind", "--range", "--shard", "--no-int8-mma", "--out",
	"--gguf", "--tensor", "--all-tensors", "--batch", "--acts", "--used", "--ggml", "--types", "--batches",
	"--moe", "--cpu", "-json", "-x", "--", "-", "--shape=256,4,2", "--device=t4", "--json=false",
	// values
	"H200", "t4", "mi300x", "rtx5090", "nope", "q4_0", "q4_K", "iq2_xxs", "f16", "nvfp4", "q8_0", "f32", "i32",
	"256,4,2", "256,8,16", "64,40,20", "0,0,0", "-1,2,3", "1e99", "256", "8,2", "4", "4,4", "2,3", "0", "-5",
	"9999999999999999999999", "uniform", "hot", "sparse", "all-to-one", "mmq", "mmqid", "0-2", "3-1", "5-6",
	"1/2", "3/2", "0/0", "w.0", "a,b,c", "4:2:8:1", "1,2,x", "@out", "@golden", "@missing",
	// later commands and flags (appended, so the indices above keep their words)
	"check", "trace", "digest", "combine", "--coverage", "--ids", "--lanes=false", "--row", "--col",
	"--golden", "--case", "--chunks", "--want", "q8_1", "blocks", "0,1", "3", "--kind=q8_1",
	"bounds", "fp16", "bench", "cost", "accuracy", "--study", "tightness", "power", "false-alarms",
	"--cases", "--mmvq-only", "--k-sweep", "--seeds", "--arch", "P100", "--note", "--counts",
	"--calibrated", "--only", "--reps", "--threads", "--rows", "--fp16path",
}

// heavy reports whether args would run a large default workload (seconds, not
// milliseconds): verify of the embedded samples, run of the default 4096×4096 shape.
// Only such argument lists are skipped.
func heavy(args []string) bool {
	if len(args) == 0 {
		return false
	}
	has := func(w string) bool {
		for _, a := range args[1:] {
			if a == w || strings.HasPrefix(a, w+"=") {
				return true
			}
		}
		return false
	}
	switch args[0] {
	case "verify":
		for _, a := range args[1:] {
			if !strings.HasPrefix(a, "-") {
				return false
			}
		}
		return true // no file: the embedded samples
	case "run":
		return !has("--shape") && !has("--gguf") && !has("-shape") && !has("-gguf")
	case "sweep":
		// sweep digest: the exhaustive q8_1 sweep or a million blocks unless --chunks.
		return len(args) > 1 && args[1] == "digest" && !has("--chunks") && !has("-chunks")
	case "check":
		return !has("--shape") && !has("-shape") // 4096 x 64 lane by lane
	case "bounds":
		// Studies run 20 cases (false-alarms 10000) at K = 4096 unless told less.
		return !small(args, "cases", 4) || !small(args, "k", 256)
	case "fp16":
		// accuracy: 256 rows of K = 4096 unless told less; cost is a formula.
		return len(args) > 1 && args[1] == "accuracy" && (!small(args, "k", 256) || !small(args, "n", 8) || has("--k-sweep") || has("-k-sweep"))
	case "bench":
		// Times 4096 x 14336 matmuls: only its flag errors and -h are quick.
		return !has("-h") && !has("--help") && !has("-x") && !has("--bogus")
	}
	return false
}

// small reports whether args set the numeric flag name (-name or --name, as the next word
// or after "=") to at most max every time it appears; false when the flag is absent (its
// default is large) or its value does not parse (then the command fails at once, but
// failing is not what small promises).
func small(args []string, name string, max int) bool {
	seen := false
	for i, a := range args {
		var v string
		switch {
		case a == "-"+name || a == "--"+name:
			if i+1 >= len(args) {
				return false
			}
			v = args[i+1]
		case strings.HasPrefix(a, "-"+name+"=") || strings.HasPrefix(a, "--"+name+"="):
			v = a[strings.Index(a, "=")+1:]
		default:
			continue
		}
		n, err := strconv.Atoi(v)
		if err != nil || n > max {
			return false
		}
		seen = true
	}
	return seen
}

// FuzzRun runs the CLI in-process on argument lists drawn from fuzzWords: it never
// panics, exits 0, 1, 2 or 3, and an exit status other than 0 comes with a message on
// stderr (usage errors there, never on stdout alone).
func FuzzRun(f *testing.F) {
	word := func(ws ...string) []byte {
		var b []byte
		for _, w := range ws {
			for i, v := range fuzzWords {
				if v == w {
					b = append(b, byte(i))
					break
				}
			}
		}
		return b
	}
	f.Add(word("explain", "--type", "q4_K", "--shape", "256,8,16"))
	f.Add(word("explain", "--experts", "8,2", "--routing", "hot", "--shape", "64,40,20", "--json"))
	f.Add(word("explain", "--svg", "@out", "--shape", "256,8,16", "--type", "q8_0"))
	f.Add(word("explain", "--svg", "--", "--shape", "256,8,16")) // writes a file "--" (in the test's directory)
	f.Add(word("run", "--type", "q4_0", "--shape", "256,4,2", "--seed", "4"))
	f.Add(word("run", "--gguf", "@golden", "--all-tensors", "--used", "2"))
	f.Add(word("verify", "--no-fp64", "@golden"))
	f.Add(word("verify", "@missing"))
	f.Add(word("sweep", "run", "--kind", "mmqid", "--seed", "2", "--range", "0-2", "--shard", "1/2"))
	f.Add(word("sweep", "verify", "@golden"))
	f.Add(word("capture", "--ggml", "@missing", "--out", "@out"))
	f.Add(word("version", "--json", "--files"))
	f.Add(word("devices"))
	f.Add(word("check", "--shape", "256,4,2", "--type", "q4_0", "--experts", "4,2", "--ids", "0,1"))
	f.Add(word("trace", "--golden", "@golden", "--case", "3", "--row", "1"))
	f.Add(word("verify", "@golden", "--coverage", "--json"))
	f.Add(word("sweep", "digest", "--kind=q8_1", "--chunks", "1", "--shard", "1/2", "--out", "@out"))
	f.Add(word("digest", "combine", "@out", "--want", "0"))
	f.Add(word("bounds", "--study", "false-alarms", "--cases", "2", "--k", "256", "--mmvq-only"))
	f.Add(word("bounds", "--study", "power", "--types", "q4_0", "--cases", "2", "--k", "256", "--json"))
	f.Add(word("fp16", "cost", "--arch", "P100", "--shape", "256,4,2", "--json"))
	f.Add(word("fp16", "accuracy", "--k", "256", "--n", "4", "--types", "q4_K", "--seeds", "2"))
	f.Add(word("explain", "--fp16path", "--shape", "256,8,16", "--device", "P100"))
	f.Add(word("bench", "-h"))
	f.Add(word("bogus", "--json"))
	f.Add([]byte{})
	golden, err := filepath.Abs(filepath.Join("..", "..", "testdata", "golden", "ggml-h200-dev-moe.slice.gguf"))
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, sel []byte) {
		// A flag's value may be any word (explain --svg --json writes a file "--json"):
		// run in a directory of the test's own.
		t.Chdir(t.TempDir())
		if len(sel) > 12 {
			sel = sel[:12]
		}
		args := make([]string, len(sel))
		for i, b := range sel {
			args[i] = fuzzWords[int(b)%len(fuzzWords)]
			switch args[i] {
			case "@out":
				args[i] = filepath.Join(t.TempDir(), "out")
			case "@golden":
				args[i] = golden
			case "@missing":
				args[i] = filepath.Join(t.TempDir(), "missing.gguf")
			}
		}
		if heavy(args) {
			t.Skip("a large default workload")
		}
		var out, errb bytes.Buffer
		code := run(args, &out, &errb)
		if code < 0 || code > 3 {
			t.Fatalf("simrun %q: exit %d\nstdout:\n%s\nstderr:\n%s", args, code, out.String(), errb.String())
		}
		if code == 2 && errb.Len() == 0 {
			t.Fatalf("simrun %q: exit 2 (usage) with nothing on stderr\nstdout:\n%s", args, out.String())
		}
		if code != 0 && errb.Len() == 0 && out.Len() == 0 {
			t.Fatalf("simrun %q: exit %d with no message at all", args, code)
		}
	})
}

// TestFuzzWordsCoverCommands keeps FuzzRun's alphabet in step with the CLI: every command
// word of the conventions table (cmd/simrun/conventions_test.go) is a fuzz word, so a new
// command is fuzzed from the day it lands.
func TestFuzzWordsCoverCommands(t *testing.T) {
	for _, c := range conventions() {
		for _, w := range c.cmd {
			if !slices.Contains(fuzzWords, w) {
				t.Errorf("command word %q (simrun %s) is not in fuzzWords", w, strings.Join(c.cmd, " "))
			}
		}
	}
	if len(fuzzWords) > 256 {
		t.Errorf("%d fuzz words: FuzzRun selects them with one byte each (at most 256)", len(fuzzWords))
	}
}
