package main

import (
	"encoding/json"
	"encoding/xml"
	"errors"
	"github.com/ggsim/ggsim/moe"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/ggsim/ggsim/sim"
)

func explainJSON(t *testing.T, args ...string) explainReport {
	t.Helper()
	code, out, errs := runCmd(t, append([]string{"explain", "--json"}, args...)...)
	if code != 0 {
		t.Fatalf("explain %v: exit %d\n%s", args, code, errs)
	}
	var rep explainReport
	dec := json.NewDecoder(strings.NewReader(out))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&rep); err != nil {
		t.Fatalf("explain %v: not the documented JSON: %v\n%s", args, err, out)
	}
	return rep
}

// The text and JSON of explain on the shapes that exercise each branch of the launch.
func TestExplainShapes(t *testing.T) {
	tests := []struct {
		name  string
		args  []string
		text  []string // substrings of the text output
		check func(t *testing.T, r explainReport)
	}{{
		name: "H200 stream-K with fixup",
		args: []string{"--device", "H200", "--type", "q4_K", "--shape", "4096,4096,64"},
		text: []string{
			"kernel: mmq (mul_mat_q)",
			"ggml_cuda_should_use_mmvq(q4_K, cc=900, ne11=64) -> false; true for ne11 <= 8",
			"J=56  no CASE in the table: skipped",
			"J=64  mmq-config-ampere.cuh:168  smem 48384 B  ntx 1  best so far",
			"=> J = 64",
			"config: mmq-config-ampere.cuh:168: CASE(q4_K, nthreads 256 = 8 warps, occupancy 1, I 128, J 64",
			"tiles: nty = ceil(4096/128) = 32, ntx = ceil(64/64) = 1, ntzw = 1: ntiles = 32; blocks_per_ne00 = 4096/256 = 16, blocks_per_iter = 256/256 = 1",
			"efficiency = 100*32/(132*1) = 24%; NVIDIA and efficiency < 90%: grid = nsm: grid 132",
			"32 of 32 tiles split over several blocks",
			"block 4: kbc [15,19) tile 0 (it=0 jt=0 ch=0 s=0) k [15,16) -> dst; tile 1 (it=1 jt=0 ch=0 s=0) k [0,3) -> fixup",
			"fixup block 4: tile 0: dst = P4 + ((((0 + P3) + P2) + P1) + P0)",
			"simulated: yes (sim/mmq, int8-MMA path)",
		},
		check: func(t *testing.T, r explainReport) {
			m := r.MMQ
			if m == nil || m.Launch == nil || m.Config == nil {
				t.Fatalf("no mmq launch: %+v", r)
			}
			if m.J != 64 || len(m.JSearch) != 8 || !m.JSearch[7].Chosen || m.JSearch[7].NTX != 1 {
				t.Errorf("J search: J=%d, steps %+v", m.J, m.JSearch)
			}
			if l := m.Launch; !l.StreamK || l.Grid != 132 || l.Waves != 1 || l.EfficiencyPercent != 24 || !l.FixupNeeded || l.FixupBlocks != 32 || l.IdleBlocks != 0 {
				t.Errorf("launch %+v", l)
			}
			if f := m.Fixups[0]; f.Block != 4 || f.Tile != 0 || !reflect.DeepEqual(f.Adds, []int{3, 2, 1, 0}) || !f.Writes {
				t.Errorf("first fixup %+v", f)
			}
			if len(m.Blocks) != 132 || m.Blocks[4].KBC != 15 || m.Blocks[4].KBCStop != 19 || len(m.Blocks[4].Segments) != 2 ||
				m.Blocks[4].Segments[1] != (segmentJSON{Tile: 1, It: 1, KB0Start: 0, KB0Stop: 3, Out: "fixup"}) {
				t.Errorf("blocks: %d, block 4 %+v", len(m.Blocks), m.Blocks[4])
			}
			if !r.Simulated || r.NotSimulated != "" {
				t.Errorf("simulated %v %q", r.Simulated, r.NotSimulated)
			}
		},
	}, {
		// 30 x 4 = 120 tiles on 132 SMs: efficiency 100*120/132 = 90%, so ggml launches
		// one block per tile and needs no fixup.
		name: "H200 90% efficiency: grid = ntiles",
		args: []string{"--device", "H200", "--type", "q4_K", "--shape", "4096,3840,512", "--blocks", "2"},
		text: []string{
			"efficiency = 100*120/(132*1) = 90%; NVIDIA and efficiency >= 90%: grid = ntiles: grid 120",
			"fixup: no fixup kernel (ntiles % grid == 0)",
			"block 1: kbc [16,32) tile 1 (it=0 jt=1 ch=0 s=0) k [0,16) -> dst",
			"... 118 more block(s)",
		},
		check: func(t *testing.T, r explainReport) {
			l := r.MMQ.Launch
			if l.Grid != 120 || l.EfficiencyPercent != 90 || l.FixupNeeded || len(r.MMQ.Fixups) != 0 || r.MMQ.Tiles.SplitTiles != 0 {
				t.Errorf("launch %+v", l)
			}
			for i, b := range r.MMQ.Blocks {
				if len(b.Segments) != 1 || b.Segments[0].Tile != i || b.Segments[0].KB0Start != 0 || b.Segments[0].KB0Stop != 16 || b.Segments[0].Out != "dst" {
					t.Fatalf("block %d: %+v", i, b)
				}
			}
		},
	}, {
		// One row tile less: 116 tiles, 87%: back to nsm blocks and a fixup.
		name: "H200 87% efficiency: grid = nsm",
		args: []string{"--device", "H200", "--type", "q4_K", "--shape", "4096,3712,512"},
		text: []string{"= 87%; NVIDIA and efficiency < 90%: grid = nsm: grid 132", "fixup kernel launched"},
	}, {
		name: "P40 conventional tiling",
		args: []string{"--device", "P40", "--type", "q4_K", "--shape", "4096,14336,512", "--blocks", "3"},
		text: []string{
			"mmq table: mmq-config-pascal.cuh",
			"stream_k false",
			"dp4a data layout",
			"launch: config.stream_k is false: conventional grid (nty, ntx, ntzw), one block per tile over the whole K range: grid (224, 8, 1)",
			"block 1: tile 8 (it=1 jt=0 ch=0 s=0) k [0,16) -> dst",
			"... 1789 more block(s)",
			"simulated: yes (sim/mmq, dp4a path)",
		},
		check: func(t *testing.T, r explainReport) {
			l := r.MMQ.Launch
			if l.StreamK || l.GridDim != [3]int{224, 8, 1} || l.Grid != 1792 || l.FixupNeeded || l.Waves != 0 {
				t.Errorf("launch %+v", l)
			}
		},
	}, {
		// P100 (cc 6.0) has no dp4a: should_use_mmq is false for every batch and ggml
		// dequantizes for cuBLAS.
		name: "P100 cuBLAS",
		args: []string{"--device", "P100", "--type", "q4_K", "--shape", "4096,14336,512"},
		text: []string{
			"kernel: cublas",
			"ggml_cuda_should_use_mmq(q4_K, cc=600, ne11=512, n_experts=0) -> false; false for every ne11",
			"highest compiled arch 600 (dp4a from 610)",
			"simulated: no",
		},
		check: func(t *testing.T, r explainReport) {
			if r.MMQ != nil || r.Simulated || !strings.Contains(r.NotSimulated, "not simulated") {
				t.Errorf("mmq %v, simulated %v %q", r.MMQ, r.Simulated, r.NotSimulated)
			}
		},
	}, {
		name: "RTX 4090 thresholds",
		args: []string{"--device", "rtx4090", "--type", "q4_K", "--shape", "4096,14336,512"},
		text: []string{"ggml_cuda_should_use_mmvq(q4_K, cc=890, ne11=512) -> false; true for ne11 <= 7", "grid 128"},
		check: func(t *testing.T, r explainReport) {
			if c := r.Checks[0]; c.Name != "should_use_mmvq" || !reflect.DeepEqual(c.TrueFor, [][2]int64{{1, 7}}) {
				t.Errorf("check %+v", c)
			}
		},
	}, {
		name: "MI300X planned, not simulated",
		args: []string{"--device", "MI300X", "--type", "q4_K", "--shape", "4096,14336,512"},
		text: []string{
			"cc 16779586 = 0x1000942",
			"ggml_cuda_should_use_mmvq(q4_K, cc=16779586, ne11=512) -> false; true for ne11 <= 3",
			"mmq table: mmq-config-cdna.cuh",
			"= 98%; not NVIDIA: grid = nsm: grid 304",
			"simulated: no (the plan above is ggml's; ggsim does not compute these bits): mmq: unsupported operation: mul_mat_q on MI300X",
		},
		check: func(t *testing.T, r explainReport) {
			if r.Simulated || r.MMQ.Launch.Grid != 304 || r.MMQ.Config.NThreads != 512 || r.MMQ.Config.NWarps != 8 {
				t.Errorf("simulated %v, launch %+v, config %+v", r.Simulated, r.MMQ.Launch, r.MMQ.Config)
			}
		},
	}, {
		name: "RTX 5090 native FP4 not simulated",
		args: []string{"--device", "RTX 5090", "--type", "mxfp4", "--shape", "4096,4096,64"},
		text: []string{"mmq-config-blackwell.cuh", "native FP4 activations", "Blackwell's native FP4 MMA, which is not simulated"},
	}, {
		// sparse routing with 8 experts, 2 used: every token picks experts 0 and 1.
		name: "MoE sparse routing",
		args: []string{"--device", "H200", "--type", "q4_K", "--shape", "2048,768,64", "--experts", "8,2", "--routing", "sparse", "--blocks", "0"},
		text: []string{
			"op: MUL_MAT_ID q4_K, K=2048, N=768, 8 experts, 2 used per token, 64 tokens",
			"routing: sparse, seed 1 (given)",
			"e0=64(1/1) e1=64(1/1) e2=0(0/1)",
			"6 of 8 experts get no token",
			"ntzw = 8 experts: ntiles = 48",
			"empty tiles (no token of their expert in columns jt*J..): 36 of 48",
			"-> skipped",
			"stores nothing",
			"simulated: yes",
		},
		check: func(t *testing.T, r explainReport) {
			if r.Op != "mul_mat_id" || r.Shape.Experts != 8 || r.Shape.ExpertsUsed != 2 {
				t.Errorf("op %q shape %+v", r.Op, r.Shape)
			}
			if ro := r.Routing; ro == nil || ro.Assumed || !reflect.DeepEqual(ro.ExpertCols, []int{64, 64, 0, 0, 0, 0, 0, 0}) || ro.EmptyExperts != 6 {
				t.Errorf("routing %+v", r.Routing)
			}
			if r.MMQ.Tiles.EmptyTiles != 36 {
				t.Errorf("empty tiles %d", r.MMQ.Tiles.EmptyTiles)
			}
			silent := 0
			for _, f := range r.MMQ.Fixups {
				if !f.Writes {
					silent++
				}
			}
			if silent == 0 {
				t.Error("no fixup of an empty tile")
			}
		},
	}, {
		name: "MoE assumed uniform routing",
		args: []string{"--device", "H200", "--type", "q6_K", "--shape", "1024,256,100", "--experts", "16,4"},
		text: []string{"routing: uniform, seed 1 (assumed: no --routing given)", "e15="},
		check: func(t *testing.T, r explainReport) {
			sum := 0
			for _, c := range r.Routing.ExpertCols {
				if c > 100 {
					t.Errorf("expert with %d columns > 100 tokens", c)
				}
				sum += c
			}
			if !r.Routing.Assumed || r.Routing.Kind != "uniform" || sum != 400 {
				t.Errorf("routing %+v (sum %d)", r.Routing, sum)
			}
		},
	}, {
		name: "MoE few tokens: mul_mat_vec_q_moe",
		args: []string{"--device", "H200", "--type", "q4_K", "--shape", "2048,768,4", "--experts", "8,2", "--routing", "all-to-one"},
		text: []string{"kernel: mmvq_moe", "e6=4 e7=4", "mmvq plan: mul_mat_vec_q_moe<q4_K, ncols=4", "simulated: yes",
			"as gate/up of {gate, up, GLU} with fusion allowed: not fused: MUL_MAT_ID with 4 tokens"},
		check: func(t *testing.T, r explainReport) {
			if g := r.GLUFusion; g == nil || g.Fused {
				t.Errorf("glu_fusion %+v", g)
			}
		},
	}, {
		// One token, small K (small_k: rows_per_block 4): N = 32 is simulated and fused
		// with a GLU; N = 30 races in ggml (rows 30, 31 of slot 0 land in slot 1).
		name: "MoE one token: GLU fusion, no race",
		args: []string{"--device", "H200", "--type", "q4_K", "--shape", "256,32,1", "--experts", "8,2"},
		text: []string{"kernel: mmvq", "small_k=true", "with fusion allowed: fused", "simulated: yes"},
		check: func(t *testing.T, r explainReport) {
			if g := r.GLUFusion; g == nil || !g.Fused || r.MMVQ.WriteRace != "" || !r.Simulated {
				t.Errorf("glu_fusion %+v, mmvq %+v, simulated %v", g, r.MMVQ, r.Simulated)
			}
		},
	}, {
		name: "MoE one token: write race",
		args: []string{"--device", "H200", "--type", "q4_K", "--shape", "256,30,1", "--experts", "8,2"},
		text: []string{"ggml races here (result undefined; ggsim refuses)", "simulated: no", "does not divide N=30"},
		check: func(t *testing.T, r explainReport) {
			if r.MMVQ.WriteRace == "" || r.Simulated {
				t.Errorf("mmvq %+v, simulated %v", r.MMVQ, r.Simulated)
			}
		},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errs := runCmd(t, append([]string{"explain"}, tc.args...)...)
			if code != 0 || errs != "" {
				t.Fatalf("exit %d, stderr %q", code, errs)
			}
			for _, s := range tc.text {
				if !strings.Contains(out, s) {
					t.Errorf("text lacks %q:\n%s", s, out)
				}
			}
			if tc.check != nil {
				tc.check(t, explainJSON(t, tc.args...))
			}
		})
	}
}

// Every device of the catalog is explained, NVIDIA and AMD alike; JSON keys are lower
// case and the numbers are numbers.
func TestExplainEveryDevice(t *testing.T) {
	key := regexp.MustCompile(`^[a-z][a-z0-9_]*$`)
	var walk func(path string, v any)
	walk = func(path string, v any) {
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				if !key.MatchString(k) {
					t.Errorf("%s: key %q is not lower-case snake case", path, k)
				}
				walk(path+"."+k, e)
			}
		case []any:
			for _, e := range x {
				walk(path+"[]", e)
			}
		case string:
			if regexp.MustCompile(`^-?[0-9]+$`).MatchString(x) {
				t.Errorf("%s: number %q written as a string", path, x)
			}
		}
	}
	for _, d := range sim.Catalog() {
		for _, m := range []string{"1", "16", "512"} {
			code, out, errs := runCmd(t, "explain", "--json", "--device", d.Name, "--type", "q4_K", "--shape", "4096,14336,"+m)
			if code != 0 {
				t.Errorf("%s m=%s: exit %d: %s", d.Name, m, code, errs)
				continue
			}
			var v map[string]any
			if err := json.Unmarshal([]byte(out), &v); err != nil {
				t.Fatalf("%s: %v", d.Name, err)
			}
			walk(d.Name, v)
			rep := explainJSON(t, "--device", d.Name, "--type", "q4_K", "--shape", "4096,14336,"+m)
			if d.Vendor == sim.AMD && rep.Simulated {
				t.Errorf("%s m=%s: AMD arithmetic reported as simulated", d.Name, m)
			}
			if rep.Simulated == (rep.NotSimulated != "") {
				t.Errorf("%s m=%s: simulated %v with reason %q", d.Name, m, rep.Simulated, rep.NotSimulated)
			}
		}
	}
}

// --svg writes the partition as well-formed XML with one rectangle per segment.
func TestExplainSVG(t *testing.T) {
	path := filepath.Join(t.TempDir(), "p.svg")
	code, _, errs := runCmd(t, "explain", "--type", "q4_K", "--shape", "4096,4096,64", "--svg", path)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	dec := xml.NewDecoder(f)
	rects, root := 0, ""
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("not well-formed XML: %v", err)
		}
		if se, ok := tok.(xml.StartElement); ok {
			if root == "" {
				root = se.Name.Local
			}
			if se.Name.Local == "rect" {
				rects++
			}
		}
	}
	// 132 blocks over 32 tiles: 132 segments plus one per tile boundary inside a block.
	if root != "svg" || rects < 132 {
		t.Errorf("root %q, %d rects", root, rects)
	}

	// MMVQ has no partition: --svg is an error (exit 1) and leaves no file.
	path2 := filepath.Join(t.TempDir(), "none.svg")
	code, _, errs = runCmd(t, "explain", "--type", "q4_K", "--shape", "4096,4096,4", "--svg", path2)
	if code != 1 || !strings.Contains(errs, "only a mul_mat_q launch has a partition") {
		t.Errorf("mmvq --svg: exit %d, %q", code, errs)
	}
	if _, err := os.Stat(path2); err == nil {
		t.Error("file written for mmvq")
	}
}

func TestExplainUsage(t *testing.T) {
	code, out, _ := runCmd(t, "explain", "-h")
	if code != 0 || !strings.Contains(out, "example:") || !strings.Contains(out, "all-to-one") || !strings.Contains(out, "--shape K,N,M") {
		t.Errorf("-h: exit %d\n%s", code, out)
	}
	for _, d := range sim.Catalog() {
		if !strings.Contains(out, d.Name) {
			t.Errorf("-h does not list device %q", d.Name)
		}
	}
	for _, args := range [][]string{
		{"--shape", "4096,14336"},
		{"--shape", "4096,x,8"},
		{"--shape", "4096,14336,0"},
		{"--shape", "4096,1,1", "--m", "8"},
		{"--shape", "100,1,1"},
		{"--device", "nosuch"},
		{"--type", "nosuch"},
		{"--experts", "2,3"},
		{"--experts", "8,2", "--routing", "zipf"},
		{"--routing", "hot"},
		{"--blocks", "-1"},
		{"extra"},
		{"--bogus"},
	} {
		code, out, errs := runCmd(t, append([]string{"explain"}, args...)...)
		if code != 2 || out != "" || !strings.HasPrefix(errs, "simrun explain: ") {
			t.Errorf("%v: exit %d, stdout %q, stderr %q", args, code, out, errs)
		}
	}
}

// The routings: token counts add up to T*U, each token's experts are distinct, and
// the same seed gives the same ids.
func TestRouteIDs(t *testing.T) {
	for _, r := range routingNames {
		ids, err := routeIDs(r, 7, 16, 3, 50)
		if err != nil {
			t.Fatal(err)
		}
		again, _ := routeIDs(r, 7, 16, 3, 50)
		if !reflect.DeepEqual(ids, again) {
			t.Errorf("%s: not reproducible", r)
		}
		for tok := 0; tok < 50; tok++ {
			seen := map[int32]bool{}
			for _, e := range ids[tok*3 : tok*3+3] {
				if seen[e] || e < 0 || e >= 16 {
					t.Fatalf("%s: token %d ids %v", r, tok, ids[tok*3:tok*3+3])
				}
				seen[e] = true
			}
		}
		rt, err := moe.Route(ids, 50, 3, 16, 3)
		if err != nil {
			t.Fatal(err)
		}
		cols := rt.ExpertCols()
		sum := 0
		for _, c := range cols {
			sum += c
		}
		if sum != 150 {
			t.Errorf("%s: %d columns", r, sum)
		}
		switch r {
		case "hot":
			if cols[0] != 50 {
				t.Errorf("hot: expert 0 has %d tokens", cols[0])
			}
		case "sparse":
			for e := 4; e < 16; e++ {
				if cols[e] != 0 {
					t.Errorf("sparse: expert %d has %d tokens", e, cols[e])
				}
			}
		case "all-to-one":
			if cols[15] != 50 || cols[14] != 50 || cols[13] != 50 {
				t.Errorf("all-to-one: %v", cols)
			}
		}
	}
	if _, err := routeIDs("uniform", 1, 2, 3, 1); err == nil {
		t.Error("U > E accepted")
	}
}

// The explain output quoted in README.md is the real output: every quoted line (the
// excerpts leave lines out, never change them) appears, in order, in what the quoted
// command prints now. The committed SVG is what --svg writes.
func TestExplainREADME(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	var cmd []string
	var quoted []string
	n := 0
	flush := func() {
		if cmd == nil {
			return
		}
		n++
		code, out, errs := runCmd(t, cmd...)
		if code != 0 {
			t.Errorf("%v: exit %d: %s", cmd, code, errs)
		}
		lines := strings.Split(out, "\n")
		i := 0
		for _, q := range quoted {
			for i < len(lines) && lines[i] != q {
				i++
			}
			if i == len(lines) {
				t.Errorf("README quotes %q under %v; not in the output (in this order):\n%s", q, cmd, out)
				break
			}
		}
		cmd, quoted = nil, nil
	}
	inBlock := false
	for _, line := range strings.Split(string(readme), "\n") {
		switch {
		case strings.HasPrefix(line, "```"):
			flush()
			inBlock = !inBlock
		case inBlock && strings.HasPrefix(line, "$ simrun explain "):
			flush()
			cmd = splitArgs(strings.TrimPrefix(line, "$ simrun "))
		case inBlock && cmd != nil && line != "":
			quoted = append(quoted, line)
		}
	}
	flush()
	if n < 5 {
		t.Errorf("%d explain commands quoted in README.md, want at least 5", n)
	}

	want, err := os.ReadFile("../../docs/streamk-q4K-h200.svg")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "p.svg")
	if code, _, errs := runCmd(t, "explain", "--device", "H200", "--type", "q4_K", "--shape", "4096,4096,64", "--svg", path); code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Error("docs/streamk-q4K-h200.svg is not what explain --svg writes now; regenerate it (README.md says how)")
	}
	if len(want) > 200<<10 {
		t.Errorf("docs/streamk-q4K-h200.svg has %d bytes, keep it under 200 KiB", len(want))
	}
}

// splitArgs splits a command line at spaces, keeping double-quoted words together.
func splitArgs(s string) []string {
	var args []string
	var cur strings.Builder
	quoted, inWord := false, false
	for _, r := range s {
		switch {
		case r == '"':
			quoted, inWord = !quoted, true
		case r == ' ' && !quoted:
			if inWord {
				args = append(args, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			cur.WriteRune(r)
			inWord = true
		}
	}
	if inWord {
		args = append(args, cur.String())
	}
	return args
}
