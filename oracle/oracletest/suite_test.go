package oracletest

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/ggsim/ggsim"
	"github.com/ggsim/ggsim/oracle"
	"github.com/ggsim/ggsim/quant"
	"github.com/ggsim/ggsim/sim"
	"github.com/ggsim/ggsim/sim/mmvq"
)

func h200(t *testing.T) sim.Device {
	t.Helper()
	d, err := sim.Lookup("H200")
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// doubleScales doubles every scale field of a block of t written by setScale with a
// moderate scale (binary16 exponent + 1, E8M0 + 1, UE4M3 exponent + 1).
func doubleScales(t quant.Type, b []byte) {
	switch {
	case halfScaleOffsets(t) != nil:
		for _, o := range halfScaleOffsets(t) {
			put16(b[o:], le16(b[o:])+0x400)
		}
	case t == quant.IQ1_M:
		setIQ1MScale(b, uint16(quant.BlockIQ1_M(b).D())+0x400)
	case t == quant.MXFP4:
		b[0]++
	case t == quant.NVFP4:
		for s := 0; s < 4; s++ {
			b[s] += 8
		}
	}
}

// TestScaleFields checks the scale layouts the generators write against quant's
// decoders: doubling the fields setScale wrote doubles every dequantized value of a
// random block (so the fields are the block's scales, and all of them), and a NaN or
// ±Inf d makes every value non-finite where dPoisons says the kernel's products are.
func TestScaleFields(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 9))
	for _, typ := range mmvq.Types() {
		bs, qk := typ.TypeSize(), typ.BlockSize()
		for trial := 0; trial < 50; trial++ {
			b := make([]byte, bs)
			for i := range b {
				b[i] = byte(r.Uint32())
			}
			setScale(typ, b, scaleModerate, false, r)
			setScale(typ, b, scaleModerate, true, r)
			v1 := make([]float32, qk)
			if err := quant.DequantizeRow(typ, b, v1); err != nil {
				t.Fatal(err)
			}
			doubleScales(typ, b)
			v2 := make([]float32, qk)
			if err := quant.DequantizeRow(typ, b, v2); err != nil {
				t.Fatal(err)
			}
			nonzero := false
			for i := range v1 {
				if v2[i] != 2*v1[i] {
					t.Fatalf("%v trial %d: value %d is %v with the scales doubled, %v before", typ, trial, i, v2[i], v1[i])
				}
				nonzero = nonzero || v1[i] != 0
			}
			if !nonzero {
				t.Fatalf("%v trial %d: a random block with moderate scales decodes to zeros", typ, trial)
			}
			for _, k := range []scaleKind{scaleNaN, scaleInf, scaleNegInf} {
				c := append([]byte(nil), b...)
				setScale(typ, c, k, false, r)
				if !dPoisons(typ, c) {
					if typ != quant.NVFP4 {
						t.Fatalf("%v: a %v d does not poison", typ, k)
					}
					continue
				}
				if typ == quant.MXFP4 {
					continue // the CPU decodes E8M0 255 as 2^127; the GPU as +Inf
				}
				if err := quant.DequantizeRow(typ, c, v1); err != nil {
					t.Fatal(err)
				}
				for i, v := range v1 {
					if isFinite(v) {
						t.Fatalf("%v: with a %v d value %d decodes to %v", typ, k, i, v)
					}
				}
			}
		}
	}
}

func TestPoisonedRows(t *testing.T) {
	K := 64
	b := make([]float32, 4*K)
	b[K+40] = float32(math.Inf(-1))
	b[2*K+3] = 1e7
	b[3*K+5] = float32(math.NaN()) // NaN: ignored by amax
	got := poisonedRows(b, K, 4)
	want := []bool{false, true, true, false}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("poisonedRows = %v, want %v", got, want)
		}
	}
}

// recorder is a rapid.TB that records a failure instead of failing the test, so that
// the suite can be run on implementations that must fail it.
type recorder struct {
	name   string
	mu     sync.Mutex
	failed bool
	logs   []string
}

func (r *recorder) Helper()      {}
func (r *recorder) Name() string { return r.name }
func (r *recorder) Logf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.logs = append(r.logs, fmt.Sprintf(format, args...))
}
func (r *recorder) Log(args ...any) { r.Logf("%s", fmt.Sprint(args...)) }
func (r *recorder) Skipf(format string, args ...any) {
	r.Logf("SKIP: "+format, args...)
	runtime.Goexit()
}
func (r *recorder) Skip(args ...any) { r.Log(args...); runtime.Goexit() }
func (r *recorder) SkipNow()         { runtime.Goexit() }
func (r *recorder) Errorf(format string, args ...any) {
	r.Logf(format, args...)
	r.Fail()
}
func (r *recorder) Error(args ...any) { r.Log(args...); r.Fail() }
func (r *recorder) Fatalf(format string, args ...any) {
	r.Errorf(format, args...)
	r.FailNow()
}
func (r *recorder) Fatal(args ...any) { r.Error(args...); r.FailNow() }
func (r *recorder) FailNow()          { r.Fail(); runtime.Goexit() }
func (r *recorder) Fail() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.failed = true
}
func (r *recorder) Failed() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.failed
}

func (r *recorder) output() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return strings.Join(r.logs, "\n")
}

// runRecorded runs the suite on impl with a fixed seed, without fail files and with a
// short shrinking time, and returns the recorder and the report.
func runRecorded(t *testing.T, impl oracle.Impl, opt Options) (*recorder, *Report) {
	t.Helper()
	restore := setRapidFlags(map[string]string{"rapid.seed": "12345", "rapid.nofailfile": "true", "rapid.shrinktime": "2s"})
	defer restore()
	rec := &recorder{name: t.Name()}
	dev := h200(t)
	var rep *Report
	done := make(chan struct{})
	go func() {
		defer close(done)
		rep = run(rec, impl, dev, opt)
	}()
	<-done
	return rec, rep
}

// mutant is the simulator with a defect.
type mutant struct {
	*ggsim.Simulator
	name string
	mm   func(out []float32, N, M int, calls int) // edits MulMat's output
	id   func(out []float32, T int)
	// idFull edits MulMatID's output knowing the whole call.
	idFull func(out []float32, N, T, U int, ids []int32)
	calls  int
	mu     sync.Mutex
}

func (m *mutant) Name() string { return m.name }

func (m *mutant) MulMat(dev sim.Device, t quant.Type, a []byte, K, N int, b []float32, M int) ([]float32, error) {
	out, err := m.Simulator.MulMat(dev, t, a, K, N, b, M)
	if err == nil && m.mm != nil {
		m.mu.Lock()
		m.calls++
		n := m.calls
		m.mu.Unlock()
		m.mm(out, N, M, n)
	}
	return out, err
}

func (m *mutant) MulMatID(dev sim.Device, t quant.Type, as []byte, K, N, E int, b []float32, B1, T int, ids []int32, U int) ([]float32, error) {
	out, err := m.Simulator.MulMatID(dev, t, as, K, N, E, b, B1, T, ids, U)
	if err == nil && m.id != nil {
		m.id(out, T)
	}
	if err == nil && m.idFull != nil {
		m.idFull(out, N, T, U, ids)
	}
	return out, err
}

func flip(v float32) float32 { return math.Float32frombits(math.Float32bits(v) ^ 1) }

// TestSuiteCatchesDefects runs the suite, one property at a time, on implementations
// with one defect each, and checks that it fails, saying which property failed.
func TestSuiteCatchesDefects(t *testing.T) {
	iq := []quant.Type{quant.IQ2_XXS, quant.IQ2_XS, quant.IQ2_S, quant.IQ3_XXS, quant.IQ3_S, quant.IQ1_S, quant.IQ1_M}
	cases := []struct {
		name  string
		impl  *mutant
		opt   Options
		wants string
	}{
		{"columns", &mutant{name: "column 1 off by one ulp", mm: func(o []float32, N, M, _ int) {
			if M >= 2 {
				o[N] = flip(o[N])
			}
		}}, Options{Properties: Columns}, "against"},
		{"determinism", &mutant{name: "every other call off", mm: func(o []float32, _, _, n int) {
			if n%2 == 0 {
				o[0] = flip(o[0])
			}
		}}, Options{Properties: Determinism}, "two calls"},
		{"bound", &mutant{name: "results times 1.5", mm: func(o []float32, _, _, _ int) {
			for i := range o {
				o[i] *= 1.5
			}
		}}, Options{Properties: Bound}, "outside the fp64 bound"},
		{"bound on raw IQ blocks", &mutant{name: "results times 1.5", mm: func(o []float32, _, _, _ int) {
			for i := range o {
				o[i] *= 1.5
			}
		}}, Options{Properties: Bound, Types: iq}, "outside the fp64 bound"},
		{"id one token", &mutant{name: "MUL_MAT_ID of one token off", id: func(o []float32, T int) {
			if T == 1 {
				o[len(o)-1] = flip(o[len(o)-1])
			}
		}}, Options{Properties: IDOneToken}, "against MUL_MAT of expert"},
		{"id tokens", &mutant{name: "MUL_MAT_ID token 0 off", id: func(o []float32, T int) {
			if T >= 2 {
				o[0] = flip(o[0])
			}
		}}, Options{Properties: Columns}, "reversed call"},
		{"non-finite outputs", &mutant{name: "NaN and Inf replaced by 0", mm: func(o []float32, _, _, _ int) {
			for i, v := range o {
				if !isFinite(v) {
					o[i] = 0
				}
			}
		}}, Options{Properties: NonFiniteInputs | NonFiniteOutputs}, "is finite"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.impl.Simulator = ggsim.NewSimulator()
			c.opt.Checks = 60
			rec, _ := runRecorded(t, c.impl, c.opt)
			if !rec.Failed() {
				t.Fatalf("the suite passed %s", c.impl.name)
			}
			if out := rec.output(); !strings.Contains(out, c.wants) {
				t.Fatalf("the failure of %s does not say %q:\n%s", c.impl.name, c.wants, out)
			}
		})
	}
}

// TestSuiteReference: with a reference, a one-ulp difference anywhere fails the run, and
// an identical reference passes with every case bit-exact.
func TestSuiteReference(t *testing.T) {
	bad := &mutant{Simulator: ggsim.NewSimulator(), name: "one ulp off in one call of seven",
		mm: func(o []float32, _, _, n int) {
			if n%7 == 3 {
				o[len(o)/2] = flip(o[len(o)/2])
			}
		}}
	rec, _ := runRecorded(t, ggsim.NewSimulator(), Options{Checks: 60, Properties: Determinism, Reference: bad})
	if !rec.Failed() || !strings.Contains(rec.output(), "differ from reference") {
		t.Fatalf("a reference one ulp off passed or failed otherwise:\n%s", rec.output())
	}
	rec, rep := runRecorded(t, ggsim.NewSimulator(), Options{Checks: 40, Reference: ggsim.NewSimulator()})
	if rec.Failed() {
		t.Fatalf("the simulator against itself failed:\n%s", rec.output())
	}
	if rep.Cases != 40 || rep.BitExact != 40 || rep.Outputs == 0 || rep.Seed != 12345 {
		t.Fatalf("report: %s", rep)
	}
	t.Log(rep)
}

// unsupported is the simulator refusing one type.
type unsupported struct{ *ggsim.Simulator }

func (u unsupported) MulMat(dev sim.Device, t quant.Type, a []byte, K, N int, b []float32, M int) ([]float32, error) {
	if t == quant.Q4_0 {
		return nil, fmt.Errorf("%w: q4_0", oracle.ErrUnsupported)
	}
	return u.Simulator.MulMat(dev, t, a, K, N, b, M)
}

func (u unsupported) MulMatID(dev sim.Device, t quant.Type, as []byte, K, N, E int, b []float32, B1, T int, ids []int32, U int) ([]float32, error) {
	if t == quant.Q4_0 {
		return nil, fmt.Errorf("%w: q4_0", oracle.ErrUnsupported)
	}
	return u.Simulator.MulMatID(dev, t, as, K, N, E, b, B1, T, ids, U)
}

// panicky panics on one type.
type panicky struct{ *ggsim.Simulator }

func (p panicky) MulMat(dev sim.Device, t quant.Type, a []byte, K, N int, b []float32, M int) ([]float32, error) {
	if t == quant.Q6_K {
		panic("boom")
	}
	return p.Simulator.MulMat(dev, t, a, K, N, b, M)
}

// TestSuiteUnsupportedAndPanics: an unsupported case fails the run unless
// SkipUnsupported, and is then counted, not passed; a panic fails the run.
func TestSuiteUnsupportedAndPanics(t *testing.T) {
	u := unsupported{ggsim.NewSimulator()}
	opt := Options{Checks: 40, Types: []quant.Type{quant.Q4_0, quant.Q8_0}, Properties: Determinism}
	rec, _ := runRecorded(t, u, opt)
	if !rec.Failed() || !strings.Contains(rec.output(), "unsupported") {
		t.Fatalf("an unsupported case did not fail the run:\n%s", rec.output())
	}
	opt.SkipUnsupported = true
	rec, rep := runRecorded(t, u, opt)
	if rec.Failed() || rep.Unsupported == 0 || rep.ByType[quant.Q4_0] != 0 || rep.Cases+rep.Unsupported != 40 {
		t.Fatalf("skipping unsupported cases: failed %v, report %s\n%s", rec.Failed(), rep, rec.output())
	}
	rec, _ = runRecorded(t, panicky{ggsim.NewSimulator()}, Options{Checks: 40, Types: []quant.Type{quant.Q6_K}, Properties: Determinism})
	if !rec.Failed() || !strings.Contains(rec.output(), "boom") {
		t.Fatalf("a panic did not fail the run:\n%s", rec.output())
	}
}

// TestTraceReference runs the suite on the fast simulator against its lane-by-lane
// trace mode on small shapes: the two must give the same bits on adversarial data too.
func TestTraceReference(t *testing.T) {
	trace := &ggsim.Simulator{LaneByLane: true}
	rep := Run(t, ggsim.NewSimulator(), h200(t), Options{Checks: 30, MaxK: 2048, Properties: Determinism | NonFiniteInputs, Reference: trace})
	if rep.BitExact != 30 {
		t.Fatalf("report: %s", rep)
	}
}

func TestOptionsErrors(t *testing.T) {
	dev := h200(t)
	for _, opt := range []Options{
		{Types: []quant.Type{quant.F16}},
		{Types: []quant.Type{quant.TQ1_0}},
	} {
		rec := &recorder{name: t.Name()}
		done := make(chan struct{})
		go func() {
			defer close(done)
			run(rec, ggsim.NewSimulator(), dev, opt)
		}()
		<-done
		if !rec.Failed() || !strings.Contains(rec.output(), "no MMVQ kernel") {
			t.Fatalf("types %v: %s", opt.Types, rec.output())
		}
	}
	t.Setenv(ChecksEnv, "many")
	if _, err := checksFrom(0); err == nil {
		t.Fatal("a bad " + ChecksEnv + " was accepted")
	}
	t.Setenv(ChecksEnv, "7")
	if n, err := checksFrom(0); n != 7 || err != nil {
		t.Fatalf("checksFrom = %d, %v", n, err)
	}
	if n, _ := checksFrom(3); n != 3 {
		t.Fatalf("Options.Checks ignored: %d", n)
	}
}

func TestPropertyString(t *testing.T) {
	if s := (Bound | Columns).String(); s != "bound|columns" {
		t.Fatal(s)
	}
	if s := Property(0).String(); s != "none" {
		t.Fatal(s)
	}
}

// TestSuiteCatchesMMQBitDifference: an implementation whose MMQ outputs (more than 8
// columns) differ from the simulator's in one bit of one element fails the run with the
// simulator as the reference, and the report locates the element in its MMQ tile; with
// NoMMQ (MMVQ shapes only) the same implementation passes, so the MMQ shapes are what
// catch it.
func TestSuiteCatchesMMQBitDifference(t *testing.T) {
	bad := &mutant{name: "one MMQ output one ulp off", mm: func(o []float32, N, M, _ int) {
		if M > 8 {
			o[len(o)/2] = flip(o[len(o)/2])
		}
	}}
	bad.Simulator = ggsim.NewSimulator()
	opt := Options{Checks: 40, Properties: Determinism, Reference: ggsim.NewSimulator()}
	rec, _ := runRecorded(t, bad, opt)
	out := rec.output()
	if !rec.Failed() || !strings.Contains(out, "differ from reference") || !strings.Contains(out, "(MMQ, ") || !strings.Contains(out, "output tile (it ") {
		t.Fatalf("an MMQ output one ulp off passed or failed otherwise:\n%s", out)
	}
	opt.NoMMQ = true
	rec, rep := runRecorded(t, bad, opt)
	if rec.Failed() || rep.MMQ != 0 || rep.Cases != 40 {
		t.Fatalf("NoMMQ: failed %v, report %s\n%s", rec.Failed(), rep, rec.output())
	}
}

// TestSuiteMMQShapes: the cases of a run of MUL_MAT on MMQ alone (one call each) cover
// every shape class and launch, are all dispatched to MMQ (Run fails otherwise), and the MMVQ-only column property is never applied to
// them (a defect only in MMQ's column structure passes the Columns property).
func TestSuiteMMQShapes(t *testing.T) {
	const n = 80
	rec, rep := runRecorded(t, ggsim.NewSimulator(), Options{Checks: n, Properties: NonFiniteInputs, ops: []int{3}})
	if rec.Failed() {
		t.Fatalf("the simulator failed:\n%s", rec.output())
	}
	for c := mmqClass(0); c < nMMQClasses; c++ {
		if rep.ByMMQClass[c.String()] == 0 {
			t.Errorf("no MMQ case of class %v in %d cases:\n%s", c, n, rep)
		}
	}
	launches := map[string]int{}
	for l, n := range rep.ByMMQLaunch {
		launches[strings.TrimSuffix(l, ", fallback rows")] += n
		if strings.HasSuffix(l, ", fallback rows") {
			launches["fallback rows"] += n
		}
	}
	for _, l := range []string{"one block per tile", "stream-K", "stream-K with fixup", "fallback rows"} {
		if launches[l] == 0 {
			t.Errorf("no MMQ case launched as %q in %d cases:\n%s", l, n, rep)
		}
	}
	t.Log(rep)
	swap := &mutant{name: "MMQ columns 0 and 1 swapped", mm: func(o []float32, N, M, _ int) {
		if M > 8 {
			for i := 0; i < N; i++ {
				o[i], o[N+i] = o[N+i], o[i]
			}
		}
	}}
	swap.Simulator = ggsim.NewSimulator()
	rec, rep = runRecorded(t, swap, Options{Checks: 40, Properties: Columns})
	if rec.Failed() || rep.MMQ == 0 {
		t.Fatalf("Columns applied to MMQ shapes (or none drawn): failed %v, %s\n%s", rec.Failed(), rep, rec.output())
	}
}
