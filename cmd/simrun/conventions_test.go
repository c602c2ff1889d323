package main

import (
	"encoding/json"
	"flag"
	"io"
	"math"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/ggsim/ggsim/oracle"
)

// convention is one command of TestConventions: its words, and a quick argument list
// with --json (nil: the command cannot print JSON in this build). positional commands
// take files, so a stray argument is not a usage error there.
type convention struct {
	cmd        []string
	jsonArgs   func(t *testing.T) []string
	positional bool
	// dataMaps are JSON keys whose object values are keyed by data (type names,
	// profiles), not by the schema: their keys keep the data's spelling.
	dataMaps []string
}

const mmvqSlice = "../../testdata/golden/ggml-h200-dev-mmvq.slice.gguf"

func conventions() []convention {
	return []convention{
		{cmd: []string{"verify"}, positional: true, jsonArgs: func(*testing.T) []string {
			return []string{mmvqSlice, "--json", "--no-fp64"} // flags after the file
		}},
		{cmd: []string{"explain"}, jsonArgs: func(*testing.T) []string {
			return []string{"--type", "q4_K", "--shape", "256,8,16", "--json"}
		}},
		{cmd: []string{"run"}, jsonArgs: func(*testing.T) []string {
			return []string{"--type", "q4_0", "--shape", "256,4,2", "--json"}
		}},
		{cmd: []string{"capture"}}, // --json needs a GPU build
		{cmd: []string{"sweep", "verify"}, positional: true, dataMaps: []string{"by_kind", "by_type", "by_profile", "by_launch"},
			jsonArgs: func(t *testing.T) []string { return []string{recordSlice(t, "mmq", 2, nil), "--no-int8-mma", "--json"} }},
		{cmd: []string{"sweep", "run"}, jsonArgs: func(t *testing.T) []string {
			return []string{"--kind", "mmq", "--seed", "1", "--range", "0-2", "--out", filepath.Join(t.TempDir(), "r.tsv"), "--json"}
		}},
		{cmd: []string{"check"}, jsonArgs: func(*testing.T) []string {
			return []string{"--type", "q4_0", "--shape", "256,8,2", "--json"}
		}},
		{cmd: []string{"trace"}, jsonArgs: func(*testing.T) []string {
			return []string{"--type", "q4_0", "--shape", "256,8,1", "--row", "3", "--json"}
		}},
		{cmd: []string{"sweep", "digest"}, jsonArgs: func(*testing.T) []string {
			return []string{"--kind", "q8_1", "--chunks", "1", "--json"}
		}},
		{cmd: []string{"digest", "combine"}, positional: true, jsonArgs: func(t *testing.T) []string {
			p := filepath.Join(t.TempDir(), "p")
			if code, _, errs := runCmd(t, "sweep", "digest", "--kind", "q8_1", "--chunks", "1", "--out", p); code != 0 {
				t.Fatalf("exit %d %s", code, errs)
			}
			return []string{p, "--json"}
		}},
		{cmd: []string{"fp16", "cost"}, jsonArgs: func(*testing.T) []string {
			return []string{"--shape", "512,256", "--batch", "1", "--json"}
		}},
		{cmd: []string{"fp16", "accuracy"}, jsonArgs: func(*testing.T) []string {
			return []string{"--k", "256", "--n", "4", "--seeds", "1", "--types", "q4_K", "--json"}
		}},
		{cmd: []string{"bench"}},
		{cmd: []string{"bounds"}, jsonArgs: func(*testing.T) []string {
			return []string{"--study", "false-alarms", "--cases", "2", "--k", "256", "--mmvq-only", "--json"}
		}}, // --json times 4096x14336 matmuls: bench_test.go checks its JSON
		{cmd: []string{"devices"}, jsonArgs: func(*testing.T) []string { return []string{"--json"} }},
		{cmd: []string{"version"}, jsonArgs: func(*testing.T) []string { return []string{"--json"} }},
	}
}

var snake = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)

// checkKeys reports every object key of v that is not lower-case snake_case, outside
// the data-keyed maps.
func checkKeys(t *testing.T, v any, path string, dataMaps []string) {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if !snake.MatchString(k) {
				t.Errorf("%s: key %q is not lower-case snake_case", path, k)
			}
			if slices.Contains(dataMaps, k) {
				continue
			}
			checkKeys(t, e, path+"."+k, dataMaps)
		}
	case []any:
		for i, e := range x {
			checkKeys(t, e, path+"["+string(rune('0'+i%10))+"]", dataMaps)
		}
	}
}

// TestConventions checks the CLI conventions of main.go's comment on every command:
// -h prints a description, flags, an example and the exit statuses on stdout with exit
// 0; an unknown flag and a stray argument are usage errors (exit 2, message on stderr);
// --json prints one JSON object of lower-case keys, also with flags after files.
func TestConventions(t *testing.T) {
	for _, c := range conventions() {
		name := strings.Join(c.cmd, " ")
		t.Run(strings.ReplaceAll(name, " ", "_"), func(t *testing.T) {
			args := func(extra ...string) []string { return append(slices.Clone(c.cmd), extra...) }
			for _, h := range []string{"-h", "--help"} {
				code, out, errs := runCmd(t, args(h)...)
				if code != 0 || errs != "" {
					t.Errorf("%s %s: exit %d, stderr %q", name, h, code, errs)
				}
				for _, want := range []string{"usage: simrun " + name, "example:", "simrun " + name + " ", "Exit status"} {
					if !strings.Contains(out, want) {
						t.Errorf("%s %s: no %q in\n%s", name, h, want, out)
					}
				}
			}
			if code, out, errs := runCmd(t, "help", name); code != 0 || !strings.HasPrefix(out, "usage: simrun "+name) {
				if len(c.cmd) == 1 {
					t.Errorf("help %s: exit %d %q %q", name, code, out, errs)
				}
			}
			code, out, errs := runCmd(t, args("--no-such-flag")...)
			if code != 2 || !strings.Contains(errs, "no-such-flag") || out != "" {
				t.Errorf("%s --no-such-flag: exit %d, stdout %q, stderr %q", name, code, out, errs)
			}
			if !c.positional {
				var extra []string
				if c.jsonArgs != nil {
					extra = c.jsonArgs(t)
				}
				code, out, errs := runCmd(t, args(append(extra, "stray")...)...)
				if code != 2 || !strings.Contains(errs, `"stray"`) || out != "" {
					t.Errorf("%s ... stray: exit %d, stdout %q, stderr %q", name, code, out, errs)
				}
			}
			if c.jsonArgs == nil {
				return
			}
			a := c.jsonArgs(t)
			code, out, errs = runCmd(t, args(a...)...)
			if code != 0 {
				t.Errorf("%s %q: exit %d, stderr %q", name, a, code, errs)
			}
			var v any
			dec := json.NewDecoder(strings.NewReader(out))
			if err := dec.Decode(&v); err != nil {
				t.Fatalf("%s %q: not JSON: %v\n%s", name, a, err, out)
			}
			if dec.More() {
				t.Errorf("%s %q: more than one JSON value", name, a)
			}
			if _, ok := v.(map[string]any); !ok {
				t.Errorf("%s %q: %T, want one object", name, a, v)
			}
			checkKeys(t, v, name, c.dataMaps)
		})
	}
}

// The usage text documents the exit statuses and the JSON convention.
func TestUsageDocumentsConventions(t *testing.T) {
	code, out, _ := runCmd(t, "-h")
	if code != 0 {
		t.Errorf("-h: exit %d", code)
	}
	for _, want := range []string{"0 all good", "1 a verdict failed", "2 a usage error", "3 an input file", "docs/json.md", "snake_case"} {
		if !strings.Contains(out, want) {
			t.Errorf("simrun -h lacks %q", want)
		}
	}
}

func TestParseFlags(t *testing.T) {
	for _, c := range []struct {
		args []string
		pos  []string
		json bool
		out  string
	}{
		{[]string{"a", "--json", "b"}, []string{"a", "b"}, true, ""},
		{[]string{"--out", "--", "a"}, []string{"a"}, false, "--"}, // "--" as a flag's value
		{[]string{"a", "--", "--json"}, []string{"a", "--json"}, false, ""},
		{[]string{"-", "--json=true"}, []string{"-"}, true, ""},
		{[]string{"--json", "--", "x"}, []string{"x"}, true, ""},
	} {
		fl := flag.NewFlagSet("t", flag.ContinueOnError)
		fl.SetOutput(io.Discard)
		j := fl.Bool("json", false, "")
		o := fl.String("out", "", "")
		pos, err := parseFlags(fl, c.args)
		if err != nil || !slices.Equal(pos, c.pos) || *j != c.json || *o != c.out {
			t.Errorf("%q: pos %q json %v out %q err %v; want %q %v %q", c.args, pos, *j, *o, err, c.pos, c.json, c.out)
		}
	}
}

func TestShardFrom(t *testing.T) {
	env := func(kv ...string) func(string) string {
		return func(k string) string {
			for i := 0; i < len(kv); i += 2 {
				if kv[i] == k {
					return kv[i+1]
				}
			}
			return ""
		}
	}
	for _, c := range []struct {
		flag string
		env  func(string) string
		i, n int
		bad  bool
	}{
		{"", env(), 0, 1, false},
		{"2/5", env("GGSIM_SHARD", "1/3"), 2, 5, false},
		{"", env("GGSIM_SHARD", "1/3"), 1, 3, false},
		{"", env("JOB_COMPLETION_INDEX", "3", "GGSIM_SHARDS", "4"), 3, 4, false},
		{"", env("JOB_COMPLETION_INDEX", "3"), 0, 0, true},
		{"", env("JOB_COMPLETION_INDEX", "4", "GGSIM_SHARDS", "4"), 0, 0, true},
		{"1/0", env(), 0, 0, true},
		{"x", env(), 0, 0, true},
	} {
		i, n, err := shardFrom(c.flag, c.env)
		if (err != nil) != c.bad || i != c.i || n != c.n {
			t.Errorf("%q: %d/%d %v", c.flag, i, n, err)
		}
	}
}

// A non-finite fp64 metric is null in verify's JSON, not an encoding error.
func TestFP64CheckJSON(t *testing.T) {
	c := oracle.FP64Check{Errors: oracle.Errors{NMSE: math.Inf(1), RelRMS: math.NaN(), MaxAbs: 2}, Outside: 1, N: 3}
	b, err := json.Marshal(c)
	if err != nil || string(b) != `{"nmse":null,"rel_rms":null,"max_abs":2,"non_finite":0,"outside":1,"n":3}` {
		t.Errorf("%s, %v", b, err)
	}
}
