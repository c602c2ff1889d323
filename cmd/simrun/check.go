package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/ggsim/ggsim"
	"github.com/ggsim/ggsim/moe"
	"github.com/ggsim/ggsim/oracle/oracletest"
	"github.com/ggsim/ggsim/quant"
	"github.com/ggsim/ggsim/sim"
	"github.com/ggsim/ggsim/sim/mmq"
	"github.com/ggsim/ggsim/sim/mmvq"
	"github.com/ggsim/ggsim/streamk"
	"github.com/ggsim/ggsim/tiling"
)

const checkHelp = `usage: simrun check --type T --shape K,N,M [--device NAME] [--no-int8-mma] [--seed S]
                    [--experts E,U [--routing R | --ids I,I,...]] [--lanes=false] [--json]

check is a sanitizer for ggml's kernels without a GPU: it runs the launch ggml makes for
the shape on the device and reports what ggml would do wrong there, like
compute-sanitizer would on the GPU:

  dispatch       ggml aborts on the path it takes (GGML_ABORT, J_best = 0, a GGML_ASSERT
                 of launch_mul_mat_q)
  routing        a token names one expert twice (MUL_MAT_ID): ggml's result is undefined
  dst_writes     every dst element is stored exactly once, by one CUDA block, inside dst:
                 the stores are replayed from ggml's store guards (mmvq.cu: row0+i <
                 stride_col_dst; mmq.cuh: the stream-K tiles and their end blocks); two
                 blocks storing one element is a write race, a store past dst is out of
                 bounds (the one-token MUL_MAT_ID race of mul_mat_vec_q is one)
  id_write_race  sim/mmvq's detector of that race (IDWriteRace) agrees with dst_writes
  shared_memory  the kernel's shared memory, thread by thread, against its allocation:
                 mul_mat_vec_q run lane by lane (every block, warp and lane, its
                 cross-warp sums through a shared memory that flags a read of an
                 unwritten (poisoned) word and every read/write race between barriers);
                 mul_mat_q: one CUDA block's load_tiles, tile_y copy, vec_dot and
                 write_back accesses replayed barrier by barrier with mmq.cuh's index
                 arithmetic (sim/mmq CheckSharedMemory; a sample of blocks, tiles and
                 iterations): an index outside mmq_get_nbytes_shared, a read of a word
                 not written in its phase or holding another value than the kernel
                 needs, a race between barriers (info: reads of rows past i_max that
                 write_back discards, words written and never read)
  lanes_vs_fast  the lane-by-lane run gives the fast simulator's bits

mul_mat_q's shared memory is modelled on both paths, int8-MMA (what the device runs)
and dp4a (--no-int8-mma), for every type with an MMQ kernel; where no model applies
(AMD's MMQ layouts, Blackwell's FP4 MMA) shared_memory says "n/m" (JSON status
"not_modelled"): not checked, not passed (exit 1). Weights and activations are generated as
by simrun run (model-like, --seed).

flags:
  --type T         ggml type of the weights: {{types}}  [q4_K]
  --shape K,N,M    K values per row, N rows, M columns (tokens with --experts)  [4096,64,1]
  --device NAME    a device of the catalog: {{devices}}  [H200]
  --no-int8-mma    a build without int8 MMA (mul_mat_q's dp4a path)
  --seed S         seed of the weights, activations and routing  [1]
  --experts E,U    MUL_MAT_ID: E experts of N rows, U used per token
  --routing R      how tokens pick experts: uniform, hot, sparse, all-to-one  [uniform]
  --ids I,I,...    the expert ids instead of --routing: M*U integers, token after token
  --lanes          run the lane-by-lane checks (shared_memory, lanes_vs_fast)  [true]
  --json           one JSON object (docs/json.md)

example:
  simrun check --type q4_K --shape 4096,64,1
  simrun check --type q4_0 --shape 256,66,1 --experts 4,2 --ids 0,1
  simrun check --type q4_K --shape 4096,4096,128 --lanes=false --json
  simrun check --type q4_0 --shape 4096,200,64 --no-int8-mma

Exit status: 0 when nothing is found, 1 when something is (or a check cannot run: an
unsupported type; or a check applies but is not modelled, "n/m"), 2 for a usage error.
`

var checkCLI = cli{name: "check", help: func() string {
	var types []string
	for t := quant.Type(0); t < quant.TypeCount; t++ {
		if t.Valid() && tiling.SupportsMulMat(t) && t.BlockSize() > 1 {
			types = append(types, t.String())
		}
	}
	return strings.NewReplacer("{{types}}", wrap(types, 56), "{{devices}}", wrap(deviceNames(), 35)).Replace(checkHelp)
}}

// checkItem is one check of the sanitizer; Ran is false where it does not apply.
// Status is "not_modelled" where the check applies but ggsim has no model for it (the
// check did not run and passed nothing).
type checkItem struct {
	Name   string `json:"name"`
	Ran    bool   `json:"ran"`
	OK     bool   `json:"ok"`
	Status string `json:"status,omitempty"`
	Detail string `json:"detail"`
}

// checkReport is simrun check's result (--json: this).
type checkReport struct {
	Device    string      `json:"device"`
	NoInt8MMA bool        `json:"no_int8_mma,omitempty"`
	Op        string      `json:"op"`
	Type      string      `json:"type"`
	K         int         `json:"k"`
	N         int         `json:"n"`
	M         int         `json:"m"`
	Experts   int         `json:"experts,omitempty"`
	Used      int         `json:"used,omitempty"`
	Routing   string      `json:"routing,omitempty"`
	IDs       []int32     `json:"ids,omitempty"`
	Seed      uint64      `json:"seed"`
	Kernel    string      `json:"kernel"`
	Reason    string      `json:"reason"`
	Checks    []checkItem `json:"checks"`
	Findings  []string    `json:"findings"`
	// NotModelled names the checks that apply here but ggsim has no model for: the
	// run is then not a pass (ok false, exit 1) even with no finding.
	NotModelled []string `json:"not_modelled"`
	OK          bool     `json:"ok"`
}

func (r *checkReport) add(name string, ran, ok bool, format string, a ...any) {
	c := checkItem{Name: name, Ran: ran, OK: ok || !ran, Detail: fmt.Sprintf(format, a...)}
	r.Checks = append(r.Checks, c)
	if !c.OK {
		r.Findings = append(r.Findings, name+": "+c.Detail)
	}
}

func cmdCheck(args []string, stdout, stderr io.Writer) int {
	c := checkCLI
	fl := flag.NewFlagSet("check", flag.ContinueOnError)
	typName := fl.String("type", "q4_K", "")
	shape := fl.String("shape", "4096,64,1", "")
	devName := fl.String("device", "H200", "")
	noMMA := fl.Bool("no-int8-mma", false, "")
	seed := fl.Uint64("seed", 1, "")
	experts := fl.String("experts", "", "")
	routing := fl.String("routing", "uniform", "")
	idsFlag := fl.String("ids", "", "")
	lanes := fl.Bool("lanes", true, "")
	asJSON := fl.Bool("json", false, "")
	if _, code, ok := c.parse(fl, args, stdout, stderr); !ok {
		return code
	}
	set := map[string]bool{}
	fl.Visit(func(f *flag.Flag) { set[f.Name] = true })
	dev, err := sim.Lookup(*devName)
	if err != nil {
		return c.usage(stderr, fmt.Errorf("--device: %w", err))
	}
	dev.NoTuringMMA = *noMMA
	typ, err := quant.ParseType(*typName)
	if err != nil {
		return c.usage(stderr, fmt.Errorf("--type: %w", err))
	}
	v, err := parseInts(*shape, 3)
	if err != nil || v[0] <= 0 || v[1] <= 0 || v[2] <= 0 || v[0] > 1<<20 || v[1] > 1<<20 || v[2] > 1<<16 {
		return c.usage(stderr, fmt.Errorf("--shape %q: want K,N,M with 0 < K, N <= 1048576 and 0 < M <= 65536", *shape))
	}
	K, N, M := int(v[0]), int(v[1]), int(v[2])
	if _, err := typ.RowSize(int64(K)); err != nil {
		return c.usage(stderr, fmt.Errorf("--shape: K=%d: %w", K, err))
	}
	rep := &checkReport{Device: dev.Name, NoInt8MMA: *noMMA, Op: "MUL_MAT", Type: typ.String(), K: K, N: N, M: M, Seed: *seed, Findings: []string{}}
	E, U := 0, 0
	var ids []int32
	if *experts != "" {
		var err error
		if E, U, ids, rep.Routing, err = parseExperts(*experts, *routing, *idsFlag, set, *seed, M); err != nil {
			return c.usage(stderr, err)
		}
		rep.Op, rep.Experts, rep.Used, rep.IDs = "MUL_MAT_ID", E, U, ids
	} else if set["routing"] || set["ids"] {
		return c.usage(stderr, errors.New("--routing and --ids need --experts E,U"))
	}
	if int64(K)*int64(N)*int64(max(E, 1)) > 1<<28 {
		return c.usage(stderr, fmt.Errorf("--shape %q: K*N*E above 2^28 weights is too large to generate", *shape))
	}

	s := tiling.Shape{K: int64(K), N: int64(N), M: int64(M), Experts: int64(E)}
	d, err := tiling.Decide(dev, typ, s)
	if err != nil {
		return c.usage(stderr, err)
	}
	rep.Kernel, rep.Reason = d.Kernel.String(), d.Reason
	runChecks(rep, dev, typ, s, ids, U, *seed, *lanes)
	rep.NotModelled = []string{}
	for _, c := range rep.Checks {
		if c.Status == statusNotModelled {
			rep.NotModelled = append(rep.NotModelled, c.Name)
		}
	}
	rep.OK = len(rep.Findings) == 0 && len(rep.NotModelled) == 0
	code := exitOK
	if !rep.OK {
		code = exitFail
	}
	if *asJSON {
		return c.writeJSON(stdout, stderr, rep, code)
	}
	writeCheckText(stdout, rep)
	if len(rep.Findings) > 0 {
		fmt.Fprintf(stderr, "simrun check: %d finding(s)\n", len(rep.Findings))
	}
	if len(rep.NotModelled) > 0 {
		fmt.Fprintf(stderr, "simrun check: not modelled, so not a pass: %s\n", strings.Join(rep.NotModelled, ", "))
	}
	return code
}

// runChecks fills rep's checks for the launch of shape s (ids: MUL_MAT_ID).
func runChecks(rep *checkReport, dev sim.Device, typ quant.Type, s tiling.Shape, ids []int32, U int, seed uint64, lanes bool) {
	K, N, M := int(s.K), int(s.N), int(s.M)
	d, _ := tiling.Decide(dev, typ, s)
	var rt *moe.Routing
	if s.ID() {
		var err error
		rt, err = moe.Route(ids, M, U, int(s.Experts), 1)
		switch {
		case errors.Is(err, moe.ErrUnsupported) && d.Kernel == tiling.KernelMMQ:
			rep.add("routing", true, false, "%v: mul_mat_q's routing through mm_ids_helper is then undefined", err)
		case errors.Is(err, moe.ErrUnsupported):
			rep.add("routing", true, true, "%v; %s reads each slot's expert id directly, so it is harmless here", err, d.Kernel)
		case err != nil:
			rep.add("routing", true, false, "%v", err)
		default:
			rep.add("routing", true, true, "%d token(s) of %d distinct experts", M, U)
		}
	}
	switch d.Kernel {
	case tiling.KernelAbort:
		rep.add("dispatch", true, false, "ggml aborts: %s", d.Reason)
		return
	case tiling.KernelMMVQ, tiling.KernelMMVQMoE:
		p, err := tiling.MakeMMVQPlan(&dev, typ, K, M, s.ID())
		if err != nil {
			rep.add("dispatch", true, false, "%v", err)
			return
		}
		rep.add("dispatch", true, true, "%s", p)
		w := mmvqWrites(p, N, M, U, s.ID())
		rep.add("dst_writes", true, w.ok(), "%s", w)
		if s.ID() && d.Kernel == tiling.KernelMMVQ {
			why := mmvq.IDWriteRace(p, N, U)
			agree := (why == "") == w.ok()
			detail := "mul_mat_vec_q with ids: no race"
			if why != "" {
				detail = why
			}
			if !agree {
				detail += "; dst_writes disagrees: the two models of the store differ"
			}
			rep.add("id_write_race", true, why == "" && agree, "%s", detail)
		} else {
			rep.add("id_write_race", false, true, "applies to MUL_MAT_ID through mul_mat_vec_q (one token)")
		}
	case tiling.KernelMMQ:
		mp, err := tiling.MakeMMQPlan(&dev, typ, s)
		if err != nil {
			rep.add("dispatch", true, false, "%v", err)
			return
		}
		var cols []int
		if rt != nil {
			cols = rt.ExpertCols()
		}
		part, err := streamk.Plan(streamk.Params{
			NSM: dev.SMCount, NVIDIA: sim.CCIsNVIDIA(dev.CC), StreamK: mp.Config.StreamK,
			NTilesX: mp.NTX, NTilesY: mp.NTY, NChannels: mp.NTZW, NSamples: 1,
			BlocksPerTile: mp.BlocksPerNe00, BlocksPerIter: mp.BlocksPerIter,
			ExpertCols: cols, J: mp.Config.J,
		})
		if err != nil {
			rep.add("dispatch", true, false, "launch_mul_mat_q: %v", err)
			return
		}
		rep.add("dispatch", true, true, "%s", mp)
		if s.ID() && rt == nil {
			rep.add("dst_writes", false, true, "the routing is invalid")
		} else {
			w := mmqWrites(&part, mp.Config.I, mp.Config.J, N, M, U, rt)
			rep.add("dst_writes", true, w.ok(), "%s", w)
		}
		rep.add("id_write_race", false, true, "applies to MUL_MAT_ID through mul_mat_vec_q (one token)")
	default:
		rep.add("dispatch", true, true, "ggml runs %s, which ggsim does not simulate: nothing more to check", d.Kernel)
		return
	}
	if !lanes {
		rep.add("shared_memory", false, true, "skipped (--lanes=false)")
		rep.add("lanes_vs_fast", false, true, "skipped (--lanes=false)")
		return
	}
	if d.Kernel == tiling.KernelMMQ {
		checkMMQShared(rep, dev, typ, s, rt)
		rep.add("lanes_vs_fast", false, true, "mul_mat_q has no lane-by-lane mode")
		return
	}
	if int64(K)*int64(N)*int64(M)*int64(max(U, 1)) > 1<<26 {
		rep.add("shared_memory", false, true, "skipped: K*N*M*U above 2^26 is too slow lane by lane (use a smaller N)")
		rep.add("lanes_vs_fast", false, true, "skipped with shared_memory")
		return
	}
	w, err := oracletest.RealisticWeights(typ, K, N*max(int(s.Experts), 1), seed)
	if err != nil {
		rep.add("shared_memory", true, false, "generating %v weights: %v", typ, err)
		return
	}
	acts := oracletest.RealisticActivations(K, M, seed)
	weights := ggsim.Weights{Type: typ, K: K, N: N, E: int(s.Experts), Data: w}
	runIt := func(opts ...ggsim.Option) (res ggsim.Result, err error) {
		defer func() {
			// The lane-by-lane model panics on a shared-memory problem or lanes that
			// disagree after the butterfly: that is a finding, not a crash.
			if r := recover(); r != nil {
				err = fmt.Errorf("%v", r)
			}
		}()
		if s.ID() {
			return ggsim.MulMatID(dev, weights, acts, 1, M, ids, U, opts...)
		}
		return ggsim.MulMat(dev, weights, acts, M, opts...)
	}
	slow, err := runIt(ggsim.LaneByLane())
	switch {
	case errors.Is(err, mmvq.ErrWriteRace):
		rep.add("shared_memory", false, true, "not run: the simulator refuses the racing launch (%v)", err)
		rep.add("lanes_vs_fast", false, true, "not run")
		return
	case errors.Is(err, errors.ErrUnsupported):
		rep.add("shared_memory", true, false, "not simulated: %v", err)
		rep.add("lanes_vs_fast", false, true, "not run")
		return
	case err != nil:
		rep.add("shared_memory", true, false, "%v", err)
		rep.add("lanes_vs_fast", false, true, "not run")
		return
	}
	if d.Kernel == tiling.KernelMMVQMoE {
		rep.add("shared_memory", true, true, "mul_mat_vec_q_moe reduces each row in one warp (no shared memory): every lane agrees after the butterfly")
	} else {
		rep.add("shared_memory", true, true, "every block's cross-warp sums through shared memory: no poisoned read, no race; every lane agrees after the butterfly")
	}
	fast, err := runIt()
	if err != nil {
		rep.add("lanes_vs_fast", true, false, "fast run: %v", err)
		return
	}
	for i := range fast.Out {
		if math.Float32bits(fast.Out[i]) != math.Float32bits(slow.Out[i]) {
			rep.add("lanes_vs_fast", true, false, "output %d: lane by lane 0x%08x, fast 0x%08x (a simulator bug, not ggml's)", i,
				math.Float32bits(slow.Out[i]), math.Float32bits(fast.Out[i]))
			return
		}
	}
	rep.add("lanes_vs_fast", true, true, "all %d outputs bit-identical", len(fast.Out))
}

const statusNotModelled = "not_modelled"

// checkMMQShared adds the shared_memory check of a mul_mat_q launch: sim/mmq's
// CheckSharedMemory replays one CUDA block's shared-memory accesses (a sample of
// blocks, tiles and iterations for a large launch). A type or path without a model is
// reported as not modelled, never as passed.
func checkMMQShared(rep *checkReport, dev sim.Device, typ quant.Type, s tiling.Shape, rt *moe.Routing) {
	var p *mmq.Plan
	var err error
	switch {
	case s.ID() && rt == nil:
		rep.add("shared_memory", false, true, "the routing is invalid")
		return
	case s.ID():
		p, err = mmq.MakePlanID(dev, typ, int(s.K), int(s.N), rt)
	default:
		p, err = mmq.MakePlan(dev, typ, int(s.K), int(s.N), int(s.M))
	}
	var r *mmq.SmemReport
	if err == nil {
		r, err = mmq.CheckSharedMemory(p, typ, mmq.SmemOptions{})
	}
	switch {
	case errors.Is(err, errors.ErrUnsupported):
		rep.Checks = append(rep.Checks, checkItem{Name: "shared_memory", OK: true, Status: statusNotModelled,
			Detail: fmt.Sprintf("not modelled, not checked: %v", err)})
		return
	case err != nil:
		rep.add("shared_memory", true, false, "%v", err)
		return
	}
	scope := fmt.Sprintf("%s path, %d block(s)", r.Path, r.Blocks)
	if !r.AllBlocks || r.Sampled {
		scope += " (a sample)"
	}
	scope += fmt.Sprintf(", %d tile segment(s), %d iteration(s)", r.Segments, r.Iterations)
	if r.Fixups > 0 {
		scope += fmt.Sprintf(", %d stream-K fixup block(s)", r.Fixups)
	}
	scope += fmt.Sprintf(": %d loads, %d stores in %d words", r.Loads, r.Stores, r.Words)
	if err := r.Err(); err != nil {
		rep.add("shared_memory", true, false, "%s; %d problem(s), first: %v", scope, r.NProblems, r.Problems[0])
		return
	}
	info := ""
	if r.DeadUnwritten > 0 {
		info += fmt.Sprintf("; info: %d load(s) of unwritten rows past i_max, discarded by write_back", r.DeadUnwritten)
	}
	if r.Unread > 0 {
		info += fmt.Sprintf("; info: %d word(s) written, never read (%s)", r.Unread, r.UnreadWhere)
	}
	rep.add("shared_memory", true, true, "%s: no access outside the allocation, no unwritten or wrong word read, no race between barriers%s", scope, info)
}

// writeMap counts the stores of one launch per dst element.
type writeMap struct {
	n      []int // stores per element
	first  []int // the first storing block, -1
	race   int   // elements stored by two or more blocks
	oob    int   // stores past the end of dst
	missed int   // elements never stored
	what   []string
}

func newWriteMap(size int) *writeMap {
	w := &writeMap{n: make([]int, size), first: make([]int, size)}
	for i := range w.first {
		w.first[i] = -1
	}
	return w
}

func (w *writeMap) store(block, idx int, where string) {
	if idx < 0 || idx >= len(w.n) {
		if w.oob == 0 {
			w.what = append(w.what, fmt.Sprintf("block %d stores past dst (element %d of %d: %s)", block, idx, len(w.n), where))
		}
		w.oob++
		return
	}
	w.n[idx]++
	if w.n[idx] == 2 {
		w.race++
		if w.race == 1 {
			w.what = append(w.what, fmt.Sprintf("element %d stored by block %d and block %d (%s)", idx, w.first[idx], block, where))
		}
	}
	if w.first[idx] < 0 {
		w.first[idx] = block
	}
}

func (w *writeMap) finish(skip func(idx int) bool) {
	for i, c := range w.n {
		if c == 0 && (skip == nil || !skip(i)) {
			if w.missed == 0 {
				w.what = append(w.what, fmt.Sprintf("element %d never stored", i))
			}
			w.missed++
		}
	}
}

func (w *writeMap) ok() bool { return w.race == 0 && w.oob == 0 && w.missed == 0 }

func (w *writeMap) String() string {
	if w.ok() {
		return fmt.Sprintf("each of the %d dst elements stored once, by one block", len(w.n))
	}
	return fmt.Sprintf("%d element(s) stored by two blocks (a write race: the result depends on the blocks' order), %d store(s) past dst, %d element(s) never stored; first: %s",
		w.race, w.oob, w.missed, strings.Join(w.what, "; "))
}

// mmvqWrites replays the stores of mul_mat_vec_q / mul_mat_vec_q_moe (mmvq.cu): block
// (bx, channel) stores rows row0+i, i < rows_per_block, of its columns where
// rows_per_block == 1 || row0+i < stride_col_dst; with ids (one token) the channel is the
// slot u, its dst the column u*N, and stride_col_dst is N*U (ggml_cuda_mul_mat_vec_q:
// stride_col_dst = ids ? s2 : s1). The MoE kernel guards with nrows.
func mmvqWrites(p *tiling.MMVQPlan, N, M, U int, ids bool) *writeMap {
	rpb := p.RowsPerBlock
	nbx := (N + rpb - 1) / rpb
	if !ids {
		w := newWriteMap(N * M)
		for bx := range nbx {
			for j := range M {
				for i := range rpb {
					row := bx*rpb + i
					if rpb == 1 || row < N {
						w.store(bx, j*N+row, fmt.Sprintf("column %d, row %d", j, row))
					}
				}
			}
		}
		w.finish(nil)
		return w
	}
	w := newWriteMap(N * U * M)
	if p.Kernel == tiling.KernelMMVQMoE {
		for t := range M {
			for u := range U {
				for bx := range nbx {
					for i := range rpb {
						if row := bx*rpb + i; rpb == 1 || row < N {
							w.store(u*nbx+bx, (t*U+u)*N+row, fmt.Sprintf("token %d, slot %d, row %d", t, u, row))
						}
					}
				}
			}
		}
		w.finish(nil)
		return w
	}
	strideCol := N * U
	for u := range U * M {
		for bx := range nbx {
			for i := range rpb {
				row := bx*rpb + i
				if rpb == 1 || row < strideCol {
					w.store(u*nbx+bx, u*N+row, fmt.Sprintf("slot %d's block %d, row %d", u, bx, row))
				}
			}
		}
	}
	w.finish(nil)
	return w
}

// mmqWrites replays the stores of mul_mat_q (mmq.cuh): every non-empty tile of the
// stream-K partition is stored by the block of its end segment (the other segments go
// to that block's fixup slot; the fixup kernel adds them later, in its own launch), its
// rows it*I.. clipped to N, its columns jt*J.. clipped to M, or for MUL_MAT_ID to the
// expert's column count, mapped to dst through ids_dst.
func mmqWrites(part *streamk.Partition, I, J, N, M, U int, rt *moe.Routing) *writeMap {
	cols := M
	if rt != nil {
		cols = M * U
	}
	w := newWriteMap(N * cols)
	for _, tp := range part.Tiles() {
		if tp.Empty {
			continue
		}
		tc := tp.Tile
		j0, j1 := tc.Jt*J, min(tc.Jt*J+J, M)
		if rt != nil {
			e := tc.Channel
			diff := int(rt.ExpertBounds[e+1] - rt.ExpertBounds[e])
			j0, j1 = tc.Jt*J, min(tc.Jt*J+J, diff)
		}
		for j := j0; j < j1; j++ {
			col := j
			if rt != nil {
				col = int(rt.IDsDst[int(rt.ExpertBounds[tc.Channel])+j])
			}
			for i := tc.It * I; i < min(tc.It*I+I, N); i++ {
				w.store(tp.End, col*N+i, fmt.Sprintf("tile %s", tc))
			}
		}
	}
	w.finish(nil)
	return w
}

func writeCheckText(w io.Writer, r *checkReport) {
	fmt.Fprintf(w, "check: %s %s K=%d N=%d M=%d", r.Op, r.Type, r.K, r.N, r.M)
	if r.Experts > 0 {
		fmt.Fprintf(w, " E=%d U=%d routing %s", r.Experts, r.Used, r.Routing)
	}
	fmt.Fprintf(w, " on %s\nkernel: %s: %s\n", r.Device, r.Kernel, r.Reason)
	for _, c := range r.Checks {
		st := "ok  "
		switch {
		case c.Status == statusNotModelled:
			st = "n/m "
		case !c.Ran:
			st = "--  "
		case !c.OK:
			st = "FAIL"
		}
		fmt.Fprintf(w, "  %s %-14s %s\n", st, c.Name, c.Detail)
	}
	switch {
	case r.OK:
		fmt.Fprintln(w, "check: nothing found")
	case len(r.Findings) == 0:
		fmt.Fprintf(w, "check: nothing found in the checks that ran; not modelled: %s\n", strings.Join(r.NotModelled, ", "))
	default:
		fmt.Fprintf(w, "check: %d finding(s): what ggml does wrong here\n", len(r.Findings))
	}
}
