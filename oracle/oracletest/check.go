package oracletest

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"runtime/debug"
	"slices"

	"pgregory.net/rapid"

	"github.com/ggsim/ggsim/oracle"
	"github.com/ggsim/ggsim/quant"
	"github.com/ggsim/ggsim/sim"
	"github.com/ggsim/ggsim/sim/mmvq"
	"github.com/ggsim/ggsim/tiling"
)

// suite is one Run.
type suite struct {
	tb    rapid.TB
	impl  oracle.Impl
	ref   oracle.Impl
	dev   sim.Device
	props Property
	skip  bool
	maxK  int
	types []quant.Type
	mm    map[quant.Type][]int // MUL_MAT column counts dispatched to MMVQ
	id    map[quant.Type][]int // MUL_MAT_ID token counts dispatched to MMVQ
	mmq   map[quant.Type]int   // largest M of MUL_MAT dispatched to MMQ for every M in 9..M (absent: none, or Options.NoMMQ)
	mmqID map[quant.Type]int   // largest T of MUL_MAT_ID dispatched to MMQ for every T in 9..T (absent: none, or Options.NoMMQ)
	// large: ChecksEnv is set (a long run): larger MMQ MUL_MAT_ID shapes.
	large bool
	// generic: the device uses MMVQ's GENERIC parameter table (Columns for MUL_MAT).
	generic bool
	rep     *Report
	failed  bool  // a case failed: rapid is shrinking, stop counting
	ops     []int // Options.ops
}

func newSuite(impl oracle.Impl, dev sim.Device, opt Options) (*suite, error) {
	if impl == nil {
		return nil, errors.New("no implementation to test")
	}
	s := &suite{
		impl: impl, ref: opt.Reference, dev: dev, props: opt.Properties, skip: opt.SkipUnsupported,
		maxK: opt.MaxK, ops: opt.ops, mm: map[quant.Type][]int{}, id: map[quant.Type][]int{}, mmq: map[quant.Type]int{},
		mmqID: map[quant.Type]int{}, large: os.Getenv(ChecksEnv) != "",
		generic: tiling.MMVQTableOf(&dev) == tiling.TableGeneric,
	}
	if s.props == 0 {
		s.props = AllProperties
	}
	if s.maxK <= 0 {
		s.maxK = DefaultMaxK
	}
	types := opt.Types
	if types == nil {
		types = mmvq.Types()
	}
	for _, t := range types {
		if _, ok := mmvq.KernelOf(t); !ok {
			return nil, fmt.Errorf("type %v has no MMVQ kernel in ggsim (the generators need its block layout)", t)
		}
		if setScaleCheck(t) != nil {
			return nil, fmt.Errorf("type %v: no scale layout", t)
		}
		mm, id := mmvqBatches(dev, t, false), mmvqBatches(dev, t, true)
		mq, mqID := 0, 0
		if !opt.NoMMQ {
			mq, mqID = mmqMaxM(dev, t), mmqIDMaxT(dev, t)
		}
		if len(mm) == 0 && len(id) == 0 && mq == 0 && mqID == 0 {
			continue // ggml never uses MMVQ or MMQ for t on dev
		}
		s.types = append(s.types, t)
		s.mm[t], s.id[t] = mm, id
		if mq > 0 {
			s.mmq[t] = mq
		}
		if mqID > 0 {
			s.mmqID[t] = mqID
		}
	}
	if len(s.types) == 0 {
		return nil, fmt.Errorf("none of the types %v is dispatched to MMVQ or MMQ on %s", types, dev.Name)
	}
	s.rep = &Report{
		Impl: impl.Name(), Device: fmt.Sprintf("%s (cc %d, %d SMs, MMVQ table %v)", dev.Name, dev.CC, dev.SMCount, tiling.MMVQTableOf(&dev)),
		ByType: map[quant.Type]int{}, Checked: map[Property]int{}, ByMMQClass: map[string]int{}, ByMMQLaunch: map[string]int{},
		ByRouting: map[string]int{},
	}
	if s.ref != nil {
		s.rep.Reference = s.ref.Name()
	}
	return s, nil
}

// setScaleCheck returns an error if setScale has no layout for t.
func setScaleCheck(t quant.Type) (err error) {
	defer func() {
		if recover() != nil {
			err = fmt.Errorf("no scale layout for %v", t)
		}
	}()
	setScale(t, make([]byte, t.TypeSize()), scaleModerate, false, rand.New(rand.NewPCG(1, 1)))
	return nil
}

// caseRun is one random case.
type caseRun struct {
	s       *suite
	rt      *rapid.T
	t       quant.Type
	calls   int
	outputs int64
	checked Property
	// launch: the MMQ launch of an MMQ case (mmqLaunch).
	launch string
	// raceAvoided: N was rounded up to avoid ggml's write race (see mulMatIDCase).
	raceAvoided bool
}

// check is rapid's property: one random case.
func (s *suite) check(rt *rapid.T) {
	t := s.types[uniform(rapid.Uint64().Draw(rt, "type draw"), rapid.Uint64().Draw(rt, "type draw"), len(s.types))]
	rapid.Just(t.String()).Draw(rt, "type")
	c := &caseRun{s: s, rt: rt, t: t}
	done := false
	defer func() {
		if !done {
			s.failed = true
		}
	}()
	var ok, adv bool
	var m int
	var class mmqClass
	var routing routingKind
	// The op: 0, 1 MUL_MAT on MMVQ, 2 MUL_MAT_ID on MMVQ, 3 MUL_MAT on MMQ, 4 MUL_MAT_ID
	// on MMQ; one the type does not have on the device becomes the first it has of
	// MUL_MAT, MUL_MAT_ID, MMQ, MMQ MUL_MAT_ID.
	op := rapid.IntRange(0, 4).Draw(rt, "op (0,1: MUL_MAT on MMVQ, 2: MUL_MAT_ID, 3: MUL_MAT on MMQ, 4: MUL_MAT_ID on MMQ)")
	if op < 2 {
		op = 0
	}
	if s.ops != nil {
		op = s.ops[op%len(s.ops)]
	}
	has := [5]bool{len(s.mm[t]) > 0, false, len(s.id[t]) > 0, s.mmq[t] > 0, s.mmqID[t] > 0}
	if !has[op] {
		for _, o := range []int{0, 2, 3, 4} {
			if has[o] {
				op = o
				break
			}
		}
	}
	isID, isMMQ, isMMQID := op == 2, op == 3, op == 4
	switch {
	case isMMQID:
		routing, adv, ok = c.mmqIDCase()
	case isID:
		m, adv, ok = c.mulMatIDCase()
	case isMMQ:
		m, class, adv, ok = c.mmqCase()
	default:
		m, adv, ok = c.mulMatCase()
	}
	done = true
	if s.failed {
		return
	}
	r := s.rep
	r.Calls += c.calls
	if !ok {
		r.Unsupported++
		return
	}
	r.Cases++
	r.ByType[t]++
	switch {
	case isMMQID:
		r.MMQID++
		r.ByRouting[routing.String()]++
	case isID:
		r.MulMatID++
		r.ByTokens[m]++
	case isMMQ:
		r.MMQ++
		r.ByMMQClass[class.String()]++
		r.ByMMQLaunch[c.launch]++
	default:
		r.MulMat++
		r.ByBatch[m]++
	}
	if adv {
		r.Adversarial++
	}
	if c.raceAvoided {
		r.RaceAvoided++
	}
	for _, n := range propertyNames {
		if c.checked&n.p != 0 {
			r.Checked[n.p]++
		}
	}
	if s.ref != nil {
		r.BitExact++
		r.Outputs += c.outputs
	}
	if n := r.Requested; n >= 1000 && r.Cases%(n/10) == 0 {
		s.tb.Logf("oracletest: %d/%d cases", r.Cases, n)
	}
}

func (c *caseRun) has(p Property) bool { return c.s.props&p != 0 }

// drawData draws a case's data in the suite's order (adversarial or not, the weights'
// and the activations' specs, the data seed) and makes rows weight rows and cols
// activation rows of K values; it notes a case with non-finite inputs and says whether
// the data are adversarial.
func (c *caseRun) drawData(rt *rapid.T, t quant.Type, K, rows, cols int) (adv bool, a []byte, prow []bool, b []float32) {
	adv = rapid.Bool().Draw(rt, "adversarial data")
	w := drawWeights(rt, t, rows, K/t.BlockSize(), adv, c.has(NonFiniteInputs))
	as := drawActs(rt, cols, K, adv, c.has(NonFiniteInputs))
	r := rand.New(rand.NewPCG(rapid.Uint64().Draw(rt, "data seed"), 0x6767))
	a, prow = makeWeights(t, K, rows, w, r)
	b = makeActs(cols, K, as, r)
	if c.has(NonFiniteInputs) && hasNonFinite(w, as) {
		c.checked |= NonFiniteInputs
	}
	return adv, a, prow, b
}

// mulMatCase draws and checks one MUL_MAT case. It returns the column count, whether
// the data were adversarial, and false if the case was unsupported (and skipped).
func (c *caseRun) mulMatCase() (int, bool, bool) {
	rt, s, t := c.rt, c.s, c.t
	K := drawShapeK(rt, t, s.maxK)
	nmax := 40
	if K > 4096 {
		nmax = 8
	}
	N := rapid.IntRange(1, nmax).Draw(rt, "N (rows)")
	M := rapid.SampledFrom(s.mm[t]).Draw(rt, "M (columns)")
	adv, a, prow, b := c.drawData(rt, t, K, N, M)
	pcol := poisonedRows(b, K, M)

	shape := fmt.Sprintf("MUL_MAT %v K=%d N=%d M=%d", t, K, N, M)
	out, ok := c.mulMat(shape, a, K, N, b, M)
	if !ok {
		return M, adv, false
	}
	at := func(idx int) string { return fmt.Sprintf("row %d, column %d", idx%N, idx/N) }
	if c.has(Determinism) {
		c.checked |= Determinism
		again, ok := c.mulMat(shape+" (second call)", a, K, N, b, M)
		if !ok {
			return M, adv, false
		}
		c.sameBits(shape+": two calls", out, again, at)
	}
	if c.has(Bound) && !adv {
		c.checked |= Bound
		ref, err := oracle.MulMatRefOn(c.s.dev, t, a, K, N, b, M)
		if err != nil {
			rt.Fatalf("%s: fp64 reference: %v", shape, err)
		}
		c.withinBound(shape, ref, out, at)
	}
	if c.has(Columns) && s.generic {
		switch {
		case M >= 2 && M <= 4 && slices.Contains(s.mm[t], 1):
			c.checked |= Columns
			for j := 0; j < M; j++ {
				one, ok := c.mulMat(fmt.Sprintf("%s, column %d alone (M=1)", shape, j), a, K, N, b[j*K:(j+1)*K], 1)
				if !ok {
					return M, adv, false
				}
				c.sameBits(fmt.Sprintf("%s: column %d against M=1", shape, j), out[j*N:(j+1)*N], one,
					func(i int) string { return fmt.Sprintf("row %d", i) })
			}
		case M >= 5 && slices.Contains(s.mm[t], 5):
			c.checked |= Columns
			groups := [][]int{{0, 1, 2, 3, 4}, {M - 5, M - 4, M - 3, M - 2, M - 1}}
			if M == 5 {
				groups = [][]int{{4, 3, 2, 1, 0}}
			}
			for _, cols := range groups {
				b5 := make([]float32, 0, 5*K)
				for _, j := range cols {
					b5 = append(b5, b[j*K:(j+1)*K]...)
				}
				five, ok := c.mulMat(fmt.Sprintf("%s, columns %v (M=5)", shape, cols), a, K, N, b5, 5)
				if !ok {
					return M, adv, false
				}
				for g, j := range cols {
					c.sameBits(fmt.Sprintf("%s: column %d against column %d of M=5 of columns %v", shape, j, g, cols),
						out[j*N:(j+1)*N], five[g*N:(g+1)*N], func(i int) string { return fmt.Sprintf("row %d", i) })
				}
			}
		}
	}
	if c.has(NonFiniteOutputs) && (slices.Contains(prow, true) || slices.Contains(pcol, true)) {
		c.checked |= NonFiniteOutputs
		for j := 0; j < M; j++ {
			for i := 0; i < N; i++ {
				if (prow[i] || pcol[j]) && isFinite(out[j*N+i]) {
					rt.Fatalf("%s: output (row %d, column %d) = %v is finite, but it meets a non-finite scale (weight row poisoned %v, activation column poisoned %v)",
						shape, i, j, out[j*N+i], prow[i], pcol[j])
				}
			}
		}
	}
	return M, adv, true
}

// mulMatIDCase draws and checks one MUL_MAT_ID case (see mulMatCase).
func (c *caseRun) mulMatIDCase() (int, bool, bool) {
	rt, s, t := c.rt, c.s, c.t
	K := drawShapeK(rt, t, s.maxK)
	E := rapid.IntRange(1, 8).Draw(rt, "E (experts)")
	T := rapid.SampledFrom(s.id[t]).Draw(rt, "T (tokens)")
	U := rapid.IntRange(1, E).Draw(rt, "U (expert slots per token)")
	B1 := 1
	if rapid.Bool().Draw(rt, "B1 = U (one activation row per slot; else 1, broadcast)") {
		B1 = U
	}
	nmax := 16
	if K > 4096 {
		nmax = 4
	}
	N := rapid.IntRange(1, nmax).Draw(rt, "N (rows per expert)")
	// ggml's one-token kernel races when rows_per_block does not divide N (mmvq.IDWriteRace):
	// its output is undefined there, so such an N is rounded up to a multiple of
	// rows_per_block (and counted).
	if p, err := tiling.MakeMMVQPlan(&s.dev, t, K, T, true); err == nil && mmvq.IDWriteRace(p, N, U) != "" {
		N = (N + p.RowsPerBlock - 1) / p.RowsPerBlock * p.RowsPerBlock
		c.raceAvoided = true
	}
	ids := make([]int32, T*U)
	for i := range ids {
		ids[i] = int32(rapid.IntRange(0, E-1).Draw(rt, "expert id"))
	}
	adv, a, prow, b := c.drawData(rt, t, K, E*N, T*B1)
	pact := poisonedRows(b, K, T*B1)
	rs := len(a) / (E * N)

	shape := fmt.Sprintf("MUL_MAT_ID %v K=%d N=%d E=%d T=%d U=%d B1=%d ids=%v", t, K, N, E, T, U, B1, ids)
	out, ok := c.mulMatID(shape, a, K, N, E, b, B1, T, ids, U)
	if !ok {
		return T, adv, false
	}
	at := func(idx int) string {
		return fmt.Sprintf("row %d, slot %d, token %d", idx%N, idx/N%U, idx/(N*U))
	}
	slot := func(tok, u int) (expert []byte, y []float32, o []float32) {
		e := int(ids[tok*U+u])
		r := tok*B1 + u%B1
		return a[e*N*rs : (e+1)*N*rs], b[r*K : (r+1)*K], out[(tok*U+u)*N : (tok*U+u+1)*N]
	}
	if c.has(Determinism) {
		c.checked |= Determinism
		again, ok := c.mulMatID(shape+" (second call)", a, K, N, E, b, B1, T, ids, U)
		if !ok {
			return T, adv, false
		}
		c.sameBits(shape+": two calls", out, again, at)
	}
	if c.has(Bound) && !adv {
		c.checked |= Bound
		for tok := 0; tok < T; tok++ {
			for u := 0; u < U; u++ {
				x, y, o := slot(tok, u)
				ref, err := oracle.MulMatRef(t, x, K, N, y, 1)
				if err != nil {
					rt.Fatalf("%s: fp64 reference: %v", shape, err)
				}
				c.withinBound(fmt.Sprintf("%s, token %d slot %d (expert %d)", shape, tok, u, ids[tok*U+u]), ref, o,
					func(i int) string { return fmt.Sprintf("row %d", i) })
			}
		}
	}
	if c.has(IDOneToken) && T == 1 && samePartition(&s.dev, t, K) && slices.Contains(s.mm[t], 1) {
		c.checked |= IDOneToken
		for u := 0; u < U; u++ {
			x, y, o := slot(0, u)
			one, ok := c.mulMat(fmt.Sprintf("%s, slot %d as MUL_MAT of expert %d", shape, u, ids[u]), x, K, N, y, 1)
			if !ok {
				return T, adv, false
			}
			c.sameBits(fmt.Sprintf("%s: slot %d against MUL_MAT of expert %d", shape, u, ids[u]), o, one,
				func(i int) string { return fmt.Sprintf("row %d", i) })
		}
	}
	if c.has(Columns) && T >= 2 {
		if p, err := tiling.MakeMMVQPlan(&s.dev, t, K, T, true); err == nil && p.Kernel == tiling.KernelMMVQMoE {
			c.checked |= Columns
			rb := make([]float32, 0, len(b))
			rids := make([]int32, 0, len(ids))
			for tok := T - 1; tok >= 0; tok-- {
				rb = append(rb, b[tok*B1*K:(tok+1)*B1*K]...)
				rids = append(rids, ids[tok*U:(tok+1)*U]...)
			}
			rev, ok := c.mulMatID(shape+" with the tokens reversed", a, K, N, E, rb, B1, T, rids, U)
			if !ok {
				return T, adv, false
			}
			for tok := 0; tok < T; tok++ {
				c.sameBits(fmt.Sprintf("%s: token %d against token %d of the reversed call", shape, tok, T-1-tok),
					out[tok*U*N:(tok+1)*U*N], rev[(T-1-tok)*U*N:(T-tok)*U*N],
					func(i int) string { return fmt.Sprintf("row %d, slot %d", i%N, i/N) })
			}
		}
	}
	if c.has(NonFiniteOutputs) && (slices.Contains(prow, true) || slices.Contains(pact, true)) {
		c.checked |= NonFiniteOutputs
		for tok := 0; tok < T; tok++ {
			for u := 0; u < U; u++ {
				e, ar := int(ids[tok*U+u]), tok*B1+u%B1
				for i := 0; i < N; i++ {
					v := out[(tok*U+u)*N+i]
					if (prow[e*N+i] || pact[ar]) && isFinite(v) {
						rt.Fatalf("%s: output (row %d, slot %d, token %d) = %v is finite, but it meets a non-finite scale (expert %d row poisoned %v, activation row %d poisoned %v)",
							shape, i, u, tok, v, e, prow[e*N+i], ar, pact[ar])
					}
				}
			}
		}
	}
	return T, adv, true
}

// hasNonFinite reports whether the case has a NaN or ±Inf input (weight scale or
// activation).
func hasNonFinite(w weightSpec, a actSpec) bool {
	for _, s := range w.Specials {
		if s.Kind == scaleNaN || s.Kind == scaleInf || s.Kind == scaleNegInf {
			return true
		}
	}
	for _, s := range a.Specials {
		if s.Kind == actNaN || s.Kind == actPosInf || s.Kind == actNegInf {
			return true
		}
	}
	return false
}

// samePartition reports whether ggml launches MUL_MAT_ID of one token and MUL_MAT of one
// column of t with the same per-output partition on dev.
func samePartition(dev *sim.Device, t quant.Type, K int) bool {
	p, err1 := tiling.MakeMMVQPlan(dev, t, K, 1, false)
	q, err2 := tiling.MakeMMVQPlan(dev, t, K, 1, true)
	return err1 == nil && err2 == nil && p.Kernel == q.Kernel && p.NWarps == q.NWarps &&
		p.BlocksPerIter == q.BlocksPerIter && p.WarpSize == q.WarpSize
}

// uniform maps two rapid draws to [0, n) about evenly: rapid favours small values (and
// repeats them), and the types should be drawn about equally often.
func uniform(v, w uint64, n int) int {
	// splitmix64's finaliser of v, then of that plus w
	return int(mix64(mix64(v)+w) % uint64(n))
}

func mix64(v uint64) uint64 {
	v ^= v >> 30
	v *= 0xbf58476d1ce4e5b9
	v ^= v >> 27
	v *= 0x94d049bb133111eb
	v ^= v >> 31
	return v
}

func isFinite(v float32) bool { return !math.IsNaN(float64(v)) && !math.IsInf(float64(v), 0) }

func (c *caseRun) mulMat(what string, a []byte, K, N int, b []float32, M int) ([]float32, bool) {
	return c.call(what, N*M, a, b, func(im oracle.Impl) ([]float32, error) {
		return im.MulMat(c.s.dev, c.t, a, K, N, b, M)
	}, func(idx int) string {
		s := fmt.Sprintf("row %d, column %d", idx%N, idx/N)
		if l, ok := c.s.ref.(oracle.Localizer); ok {
			if where := l.Locate(c.s.dev, c.t, K, N, M, idx); where != "" {
				s += "; the reference " + where
			}
		}
		return s
	})
}

func (c *caseRun) mulMatID(what string, as []byte, K, N, E int, b []float32, B1, T int, ids []int32, U int) ([]float32, bool) {
	ids0 := slices.Clone(ids)
	out, ok := c.call(what, T*U*N, as, b, func(im oracle.Impl) ([]float32, error) {
		return im.MulMatID(c.s.dev, c.t, as, K, N, E, b, B1, T, ids, U)
	}, func(idx int) string {
		return fmt.Sprintf("row %d, slot %d, token %d (expert %d)", idx%N, idx/N%U, idx/(N*U), ids[idx/N])
	})
	if !slices.Equal(ids, ids0) {
		c.rt.Fatalf("%s: the call modified its expert ids", what)
	}
	return out, ok
}

// call runs f on the implementation (and, concurrently, on the reference), checks that
// the inputs are unchanged and the output has n values and, with a reference, the
// reference's bits. It returns false if the case is to be skipped as unsupported.
func (c *caseRun) call(what string, n int, a []byte, b []float32, f func(oracle.Impl) ([]float32, error), at func(int) string) ([]float32, bool) {
	rt, s := c.rt, c.s
	a0, b0 := bytes.Clone(a), slices.Clone(b)
	var want []float32
	var refErr error
	done := make(chan struct{})
	if s.ref != nil {
		go func() {
			defer close(done)
			defer func() {
				if p := recover(); p != nil {
					refErr = fmt.Errorf("panic: %v\n%s", p, debug.Stack())
				}
			}()
			want, refErr = f(s.ref)
		}()
	} else {
		close(done)
	}
	c.calls++
	got, err := f(s.impl)
	<-done
	if !bytes.Equal(a, a0) {
		rt.Fatalf("%s: the call modified its weights", what)
	}
	if !sameFloatBits(b, b0) {
		rt.Fatalf("%s: the call modified its activations", what)
	}
	for _, e := range []struct {
		who string
		err error
	}{{s.impl.Name(), err}, {"reference " + s.rep.Reference, refErr}} {
		if e.err == nil {
			continue
		}
		if s.skip && errors.Is(e.err, oracle.ErrUnsupported) {
			return nil, false
		}
		rt.Fatalf("%s: %s: %v", what, e.who, e.err)
	}
	if len(got) != n {
		rt.Fatalf("%s: %s returned %d values, want %d", what, s.impl.Name(), len(got), n)
	}
	if s.ref != nil {
		if len(want) != n {
			rt.Fatalf("%s: reference %s returned %d values, want %d", what, s.rep.Reference, len(want), n)
		}
		cmp := oracle.CompareBits(got, want)
		if !cmp.BitExact() {
			i := cmp.First
			rt.Fatalf("%s: %d of %d outputs differ from reference %s (max %d ulp); first: output %d (%s): got %v (%#08x), reference %v (%#08x)",
				what, cmp.Differing, cmp.N, s.rep.Reference, cmp.MaxULP, i, at(i), got[i], math.Float32bits(got[i]), want[i], math.Float32bits(want[i]))
		}
		c.outputs += int64(n)
	}
	return got, true
}

// sameBits fails the case unless got and want have the same float32 bits.
func (c *caseRun) sameBits(what string, got, want []float32, at func(int) string) {
	cmp := oracle.CompareBits(got, want)
	if cmp.BitExact() {
		return
	}
	i := cmp.First
	c.rt.Fatalf("%s: %d of %d outputs differ (max %d ulp); first: %s: %v (%#08x) against %v (%#08x)",
		what, cmp.Differing, cmp.N, cmp.MaxULP, at(i), got[i], math.Float32bits(got[i]), want[i], math.Float32bits(want[i]))
}

// withinBound fails the case if an output lies outside the fp64 reference's bound.
func (c *caseRun) withinBound(what string, ref *oracle.Reference, got []float32, at func(int) string) {
	if out, i := ref.WithinBound(got); out > 0 {
		center, what2 := ref.Value, "fp64"
		if ref.Center != nil {
			center, what2 = ref.Center, "kernel formula in fp64"
		}
		c.rt.Fatalf("%s: %d of %d outputs outside the fp64 bound; first: %s: got %v, %s %v, |difference| %.3g > bound %.3g",
			what, out, len(got), at(i), got[i], what2, center[i], math.Abs(float64(got[i])-center[i]), ref.Bound[i])
	}
}

func sameFloatBits(a, b []float32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
			return false
		}
	}
	return true
}
