package oracletest

import (
	"flag"
	"fmt"
	"hash/maphash"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/ggsim/ggsim/oracle"
	"github.com/ggsim/ggsim/quant"
	"github.com/ggsim/ggsim/sim"
	"github.com/ggsim/ggsim/tiling"
)

// Property selects the properties Run checks (see the package documentation).
type Property uint

const (
	// Bound: outputs of finite, quantized-from-floats, moderate inputs lie within
	// the fp64 bound (oracle.MulMatRefOn for MUL_MAT, oracle.MulMatRef per slot for
	// MUL_MAT_ID).
	Bound Property = 1 << iota
	// Determinism: a second call with the same inputs gives the same bits, and no call
	// modifies its inputs.
	Determinism
	// Columns: ggml's column structure. MUL_MAT on the GENERIC parameter table: with 2..4
	// columns each column's bits equal those of the 1-column product of that column; with
	// 5..8 columns, those of a 5-column product holding that column. MUL_MAT_ID with 2..8
	// tokens (mul_mat_vec_q_moe, every table): reversing the tokens reverses the result.
	Columns
	// IDOneToken: MUL_MAT_ID of one token equals, slot by slot, MUL_MAT of the chosen
	// expert's matrix by that slot's activation row, where ggml launches both with the
	// same partition (tiling.MakeMMVQPlan; every table but GB10's halved iterations).
	IDOneToken
	// NonFiniteInputs: NaN and ±Inf activations and weight scales are drawn; every call
	// returns without error or panic.
	NonFiniteInputs
	// NonFiniteOutputs: every output that meets a non-finite q8_1 scale (an activation
	// block holding ±Inf or a value >= 1e7) or a weight block with a non-finite scale is
	// NaN or ±Inf.
	NonFiniteOutputs
	// IDAsMulMat: MUL_MAT_ID of more than 8 tokens (mul_mat_q in ID mode) equals, slot by
	// slot, MUL_MAT (on MMQ) of the slot's expert matrix by that expert's activation rows,
	// where ggml computes both launches unsplit (no stream-K split or fixup) on the same
	// path with whole MMQ iterations.
	IDAsMulMat

	// AllProperties is every property; Options.Reference adds the bit comparison.
	AllProperties = Bound | Determinism | Columns | IDOneToken | NonFiniteInputs | NonFiniteOutputs | IDAsMulMat
)

var propertyNames = []struct {
	p    Property
	name string
}{
	{Bound, "bound"}, {Determinism, "determinism"}, {Columns, "columns"}, {IDOneToken, "id-one-token"},
	{NonFiniteInputs, "non-finite-inputs"}, {NonFiniteOutputs, "non-finite-outputs"}, {IDAsMulMat, "id-as-mul-mat"},
}

func (p Property) String() string {
	var names []string
	for _, n := range propertyNames {
		if p&n.p != 0 {
			names = append(names, n.name)
			p &^= n.p
		}
	}
	if p != 0 {
		names = append(names, fmt.Sprintf("Property(%#x)", uint(p)))
	}
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, "|")
}

// ChecksEnv is the environment variable that sets the number of random cases when
// Options.Checks is 0.
const ChecksEnv = "GGSIM_CONFORMANCE_CHECKS"

// DefaultChecks is the number of random cases when neither Options.Checks, ChecksEnv nor
// rapid's -rapid.checks (or RAPID_CHECKS) says otherwise.
const DefaultChecks = 100

// DefaultMaxK is the largest row length drawn when Options.MaxK is 0.
const DefaultMaxK = 16384

// Options control Run.
type Options struct {
	// Checks is the number of random cases (0: ChecksEnv, else -rapid.checks or
	// RAPID_CHECKS if given, else DefaultChecks). Run runs exactly that many under -short
	// too, unless the test's deadline stops rapid early (the report says so).
	Checks int
	// Properties selects what is checked (0: AllProperties). Without NonFiniteInputs no
	// NaN or ±Inf is drawn.
	Properties Property
	// Types are the weight types drawn (nil: mmvq.Types(), every type ggsim simulates in
	// MMVQ). Each must have an MMVQ kernel in ggsim.
	Types []quant.Type
	// Reference, if not nil, is called on every input the implementation is called on,
	// and every output must have its float32 bits. It runs concurrently with the
	// implementation (so it must be safe for that).
	Reference oracle.Impl
	// SkipUnsupported counts a case for which the implementation (or the reference)
	// returns an error wrapping oracle.ErrUnsupported and goes on; by default that fails
	// the test, since every case drawn is one ggml dispatches to MMVQ.
	SkipUnsupported bool
	// MaxK is the largest row length drawn (0: DefaultMaxK); K > 4096 is drawn in about
	// one case in ten.
	MaxK int
	// NoMMQ draws no MMQ shapes (MUL_MAT with more than 8 columns and MUL_MAT_ID with more
	// than 8 tokens, which ggml sends to mul_mat_q): for an implementation of MMVQ alone.
	// By default about one case in five or six is each, for every type ggml dispatches to MMQ on
	// the device.
	NoMMQ bool

	// ops, for the package's tests: draw only these ops (see suite.check); nil: all.
	ops []int
}

// Report counts what Run did. Cases counts the cases that ran to the end with every
// check passing (after a failure, rapid's shrinking runs are not counted).
type Report struct {
	Impl, Reference string // names; Reference "" if none
	Device          string
	Seed            uint64 // rapid's base seed: -rapid.seed=Seed replays the run
	Requested       int    // cases asked for
	Cases           int
	MulMat          int // MUL_MAT cases on MMVQ (1..8 columns)
	MulMatID        int
	MMQ             int            // MUL_MAT cases on MMQ (more than 8 columns)
	MMQID           int            // MUL_MAT_ID cases on MMQ (more than 8 tokens)
	ByRouting       map[string]int // MUL_MAT_ID cases on MMQ by routing kind (uniform, one-hot-expert, sparse, same-experts, top-k)
	ByMMQClass      map[string]int // MMQ cases by shape class (fallback-rows, J-boundary, ...)
	ByMMQLaunch     map[string]int // MMQ cases by launch (one block per tile, stream-K with fixup, ...; fallback rows)
	Adversarial     int            // cases with adversarial data (the rest: plain quantized data)
	ByType          map[quant.Type]int
	ByBatch         [tiling.MMVQMaxBatchSize + 1]int // MUL_MAT cases by columns M
	ByTokens        [tiling.MMVQMaxBatchSize + 1]int // MUL_MAT_ID cases by tokens T
	Checked         map[Property]int                 // cases on which each property applied (NonFiniteInputs: cases with a NaN or ±Inf input)
	Calls           int                              // calls of the implementation
	Unsupported     int                              // cases skipped (SkipUnsupported)
	RaceAvoided     int                              // MUL_MAT_ID cases whose N was rounded up to avoid ggml's write race (mmvq.IDWriteRace)
	BitExact        int                              // cases whose every output had the reference's bits
	Outputs         int64                            // outputs compared with the reference
	Elapsed         time.Duration
}

// String is the report in a few lines, as Run logs it.
func (r *Report) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "oracletest: %s on %s: %d of %d cases passed (MUL_MAT %d, MUL_MAT_ID %d, MUL_MAT on MMQ %d, MUL_MAT_ID on MMQ %d; %d with adversarial data), %d calls, %v\n",
		r.Impl, r.Device, r.Cases, r.Requested, r.MulMat, r.MulMatID, r.MMQ, r.MMQID, r.Adversarial, r.Calls, r.Elapsed.Round(time.Millisecond))
	fmt.Fprintf(&b, "  rapid seed %d (replay: -rapid.seed=%d; the cases follow from it in order)\n", r.Seed, r.Seed)
	ts := make([]quant.Type, 0, len(r.ByType))
	for t := range r.ByType {
		ts = append(ts, t)
	}
	slices.Sort(ts)
	b.WriteString("  per type:")
	for _, t := range ts {
		fmt.Fprintf(&b, " %v %d", t, r.ByType[t])
	}
	b.WriteString("\n  MUL_MAT per columns:")
	for m := 1; m <= tiling.MMVQMaxBatchSize; m++ {
		fmt.Fprintf(&b, " %d:%d", m, r.ByBatch[m])
	}
	b.WriteString("\n  MUL_MAT_ID per tokens:")
	for m := 1; m <= tiling.MMVQMaxBatchSize; m++ {
		fmt.Fprintf(&b, " %d:%d", m, r.ByTokens[m])
	}
	b.WriteString("\n  MUL_MAT on MMQ per shape class:")
	for c := mmqClass(0); c < nMMQClasses; c++ {
		fmt.Fprintf(&b, " %v:%d", c, r.ByMMQClass[c.String()])
	}
	b.WriteString("\n  MUL_MAT on MMQ per launch:")
	ls := make([]string, 0, len(r.ByMMQLaunch))
	for l := range r.ByMMQLaunch {
		ls = append(ls, l)
	}
	slices.Sort(ls)
	for _, l := range ls {
		fmt.Fprintf(&b, " %s:%d", l, r.ByMMQLaunch[l])
	}
	fmt.Fprintf(&b, "\n  MUL_MAT_ID on MMQ per routing: %s", r.RoutingCounts())
	b.WriteString("\n  cases per property:")
	for _, n := range propertyNames {
		fmt.Fprintf(&b, " %s %d", n.name, r.Checked[n.p])
	}
	if r.RaceAvoided > 0 {
		fmt.Fprintf(&b, "\n  MUL_MAT_ID cases with N rounded up to avoid ggml's write race (mmvq.IDWriteRace): %d", r.RaceAvoided)
	}
	if r.Unsupported > 0 {
		fmt.Fprintf(&b, "\n  UNSUPPORTED (skipped, not passed): %d cases", r.Unsupported)
	}
	if r.Reference != "" {
		fmt.Fprintf(&b, "\n  reference %s: %d of %d cases bit-exact, %d outputs compared", r.Reference, r.BitExact, r.Cases, r.Outputs)
	}
	return b.String()
}

// RoutingCounts lists the MUL_MAT_ID cases on MMQ per routing kind, every kind named
// ("uniform:3 one-hot-expert:0 ...").
func (r *Report) RoutingCounts() string {
	var b strings.Builder
	for k := routingKind(0); k < nRoutingKinds; k++ {
		if k > 0 {
			b.WriteString(" ")
		}
		fmt.Fprintf(&b, "%v:%d", k, r.ByRouting[k.String()])
	}
	return b.String()
}

// Run checks impl against the properties every implementation of ggml's MMVQ
// (mul_mat_vec_q, MUL_MAT with 1..8 columns and MUL_MAT_ID with 1..8 tokens) and MMQ
// (mul_mat_q, MUL_MAT with more than 8 columns and MUL_MAT_ID with more than 8 tokens)
// must have, on random cases drawn by rapid
// for the simulated device dev (which also decides what ggml dispatches to MMVQ and MMQ). It logs a Report and returns it. A failure reports rapid's seed
// and the shrunk case; -rapid.seed=N replays a run.
func Run(t *testing.T, impl oracle.Impl, dev sim.Device, opt Options) *Report {
	t.Helper()
	return run(t, impl, dev, opt)
}

// run is Run for any rapid.TB (the package's tests pass a recorder to see failures).
func run(tb rapid.TB, impl oracle.Impl, dev sim.Device, opt Options) *Report {
	tb.Helper()
	s, err := newSuite(impl, dev, opt)
	if err != nil {
		tb.Fatalf("oracletest: %v", err)
		return nil
	}
	s.tb = tb
	checks, err := checksFrom(opt.Checks)
	if err != nil {
		tb.Fatalf("oracletest: %v", err)
		return nil
	}
	s.rep.Requested = checks
	seed := rapidSeed()
	s.rep.Seed = seed
	restore := setRapidFlags(map[string]string{
		"rapid.checks": strconv.Itoa(checksForRapid(checks)),
		"rapid.seed":   strconv.FormatUint(seed, 10),
	})
	defer restore()
	start := time.Now()
	defer func() {
		s.rep.Elapsed = time.Since(start)
		tb.Logf("%s", s.rep)
	}()
	rapid.Check(tb, s.check)
	if s.rep.Cases == 0 && !tb.Failed() {
		tb.Errorf("oracletest: no case ran to the end (%d unsupported)", s.rep.Unsupported)
	}
	return s.rep
}

// checksFrom resolves the number of cases (see Options.Checks).
func checksFrom(n int) (int, error) {
	if n > 0 {
		return n, nil
	}
	if v := os.Getenv(ChecksEnv); v != "" {
		c, err := strconv.Atoi(v)
		if err != nil || c <= 0 {
			return 0, fmt.Errorf("%s=%q is not a positive number of cases", ChecksEnv, v)
		}
		return c, nil
	}
	explicit := os.Getenv("RAPID_CHECKS") != ""
	flag.Visit(func(f *flag.Flag) { explicit = explicit || f.Name == "rapid.checks" })
	if f := flag.Lookup("rapid.checks"); explicit && f != nil {
		if c, err := strconv.Atoi(f.Value.String()); err == nil && c > 0 {
			return c, nil
		}
	}
	return DefaultChecks, nil
}

// checksForRapid is the -rapid.checks value that makes rapid run n cases: rapid runs a
// fifth of its flag under -short.
func checksForRapid(n int) int {
	if testing.Short() {
		return 5 * n
	}
	return n
}

// rapidSeed is rapid's seed flag (-rapid.seed or RAPID_SEED) or, if that is 0, a random
// seed, which Run then passes to rapid so that it can report it.
func rapidSeed() uint64 {
	if f := flag.Lookup("rapid.seed"); f != nil {
		if v, err := strconv.ParseUint(f.Value.String(), 10, 64); err == nil && v != 0 {
			return v
		}
	}
	for {
		if v := new(maphash.Hash).Sum64(); v != 0 {
			return v
		}
	}
}

// setRapidFlags sets rapid's command-line flags (registered on flag.CommandLine by
// rapid's init) and returns a function that restores them. Value.Set is used so that
// flag.Visit still reports only what the command line set.
func setRapidFlags(vals map[string]string) (restore func()) {
	old := map[*flag.Flag]string{}
	for name, v := range vals {
		f := flag.Lookup(name)
		if f == nil {
			panic("oracletest: rapid's flag -" + name + " is not registered")
		}
		old[f] = f.Value.String()
		if err := f.Value.Set(v); err != nil {
			panic("oracletest: setting -" + name + ": " + err.Error())
		}
	}
	return func() {
		for f, v := range old {
			f.Value.Set(v)
		}
	}
}
