package oracletest

import (
	"bufio"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ggsim/ggsim/gguf/golden"
	"github.com/ggsim/ggsim/quant"
)

// A sweep is a numbered, reproducible family of generated cases: case i of sweep
// (kind, seed) is a pure function of (kind, seed, i), made with math/rand/v2's PCG
// seeded by (seed, i). A GPU run computes each case on the device and records only the
// SHA-256 of its output bits (Digest); the simulator regenerates the same case anywhere
// and must give the same digest. So a run of ten thousand cases on a GPU comes back as
// a few hundred kilobytes of text, and is verified on any machine.
//
// The generator is frozen: changing what case i is (its type, shape or bytes) breaks
// every recorded sweep. TestSweepFrozen pins the inputs of a few cases by their hash.

// Sweep kinds.
const (
	// SweepMMQ: MUL_MAT with more than 8 columns (ggml's mul_mat_q on NVIDIA from
	// Turing on), every MMQ type, shapes biased to tile, J and stream-K boundaries.
	SweepMMQ = "mmq"
	// SweepMMQID: MUL_MAT_ID with more than 8 tokens (MMQ in ID mode), every MMQ
	// type, routings uniform, hot, sparse (empty experts) and all-to-one.
	SweepMMQID = "mmqid"
)

// SweepMMQTypes are the types ggml_cuda_should_use_mmq accepts (mmq.cu), in the order
// sweeps cycle through them.
var SweepMMQTypes = []quant.Type{
	quant.Q4_0, quant.Q4_1, quant.Q5_0, quant.Q5_1, quant.Q8_0, quant.MXFP4, quant.NVFP4,
	quant.Q2_K, quant.Q3_K, quant.Q4_K, quant.Q5_K, quant.Q6_K,
	quant.IQ2_XXS, quant.IQ2_XS, quant.IQ2_S, quant.IQ3_XXS, quant.IQ3_S, quant.IQ1_S,
	quant.IQ4_NL, quant.IQ4_XS, quant.Q1_0, quant.Q2_0,
}

// SweepCase is one generated case. For mul_mat: A holds N rows of K values of Type
// (ggml [K, N]), B holds M columns of K float32 ([K, M]); the output is [N, M]. For
// mul_mat_id: A holds E experts of N rows ([K, N, E]), B is [K, B1, T], IDs is [U, T];
// the output is [N, U, T].
type SweepCase struct {
	Kind  string
	Seed  uint64
	Index int
	Op    string // "mul_mat" or "mul_mat_id"
	Type  quant.Type
	K, N  int
	M     int // mul_mat columns
	E, U  int // mul_mat_id experts and experts per token
	T, B1 int // mul_mat_id tokens and activation rows per token (1 or U)
	A     []byte
	B     []float32
	IDs   []int32
	// GLU cases (Op mul_mat_glu, mul_mat_id_glu; kinds glu, gluid): A is the gate's
	// weights, Up the up weights (same type and shape); GLU is golden's GLU kind,
	// GLUAlpha and GLULimit swiglu_oai's parameters, Fusion golden.FusionAllowed or
	// golden.FusionDisabled.
	Up                 []byte
	GLU                string
	GLUAlpha, GLULimit float32
	Fusion             string
	// Profile says how the data were made (for reports and counts).
	Profile string
}

// Shape is the case's shape as "K=.. N=.. M=.." or "K=.. N=.. E=.. U=.. T=.. B1=..",
// followed for a GLU case by the GLU and the fusion setting ("swiglu allowed",
// "swiglu_oai(1.702,7) disabled").
func (c *SweepCase) Shape() string {
	var s string
	if c.Op == "mul_mat" || c.Op == string(golden.OpMulMatGLU) {
		s = fmt.Sprintf("K=%d N=%d M=%d", c.K, c.N, c.M)
	} else {
		s = fmt.Sprintf("K=%d N=%d E=%d U=%d T=%d B1=%d", c.K, c.N, c.E, c.U, c.T, c.B1)
	}
	if c.IsGLU() {
		s += " " + c.gluShape()
	}
	return s
}

// OutLen is the number of output floats.
func (c *SweepCase) OutLen() int {
	if c.Op == "mul_mat" || c.Op == string(golden.OpMulMatGLU) {
		return c.N * c.M
	}
	return c.N * c.U * c.T
}

// Digest is the hex SHA-256 of the little-endian bits of out: what a sweep records.
func Digest(out []float32) string {
	h := sha256.New()
	var b [4]byte
	for _, v := range out {
		binary.LittleEndian.PutUint32(b[:], math.Float32bits(v))
		h.Write(b[:])
	}
	return hex.EncodeToString(h.Sum(nil))
}

// InputDigest is the hex SHA-256 of a case's inputs and shape (TestSweepFrozen).
func (c *SweepCase) InputDigest() string {
	h := sha256.New()
	fmt.Fprintf(h, "%s %s %v %s|", c.Kind, c.Op, c.Type, c.Shape())
	h.Write(c.A)
	var b [4]byte
	for _, v := range c.B {
		binary.LittleEndian.PutUint32(b[:], math.Float32bits(v))
		h.Write(b[:])
	}
	for _, v := range c.IDs {
		binary.LittleEndian.PutUint32(b[:], uint32(v))
		h.Write(b[:])
	}
	if c.IsGLU() { // after the fields of the MMQ kinds, whose digests are pinned
		h.Write(c.Up)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// Sweep returns case i of the sweep (kind, seed).
func Sweep(kind string, seed uint64, i int) (SweepCase, error) {
	if i < 0 {
		return SweepCase{}, fmt.Errorf("oracletest: sweep case index %d is negative", i)
	}
	r := rand.New(rand.NewPCG(seed, uint64(i)))
	c := SweepCase{Kind: kind, Seed: seed, Index: i, Type: SweepMMQTypes[i%len(SweepMMQTypes)]}
	switch kind {
	case SweepMMQ:
		sweepMMQ(&c, r)
	case SweepMMQID:
		sweepMMQID(&c, r)
	case SweepGLU:
		sweepGLUDense(&c, r)
	case SweepGLUID:
		sweepGLUID(&c, r, false)
	case SweepGLUID2:
		sweepGLUID(&c, r, true)
	default:
		return SweepCase{}, fmt.Errorf("oracletest: unknown sweep kind %q (want %q, %q, %q, %q or %q)", kind, SweepMMQ, SweepMMQID, SweepGLU, SweepGLUID, SweepGLUID2)
	}
	return c, nil
}

// pick returns one of vs.
func pick[T any](r *rand.Rand, vs ...T) T { return vs[r.IntN(len(vs))] }

// sweepK draws K: a multiple of the block size, mostly at most 2048; for 32-value types
// often a number of blocks that is not a multiple of the 8 blocks of one MMQ iteration.
func sweepK(r *rand.Rand, t quant.Type) int {
	qk := t.BlockSize()
	var hi int
	switch p := r.IntN(10); {
	case p < 4:
		hi = 1024
	case p < 8:
		hi = 2048
	case p < 9:
		hi = 4096
	default:
		hi = 8192
	}
	return qk * (1 + r.IntN(max(1, hi/qk)))
}

// sweepM draws a column (token) count above 8, biased to J boundaries.
func sweepM(r *rand.Rand) int {
	switch p := r.IntN(20); {
	case p < 6:
		return 9 + r.IntN(8) // 9..16
	case p < 11:
		return 17 + r.IntN(48) // 17..64
	case p < 15:
		j := pick(r, 16, 24, 32, 40, 48, 56, 64, 72, 80, 88, 96, 104, 112, 120, 128, 256)
		return j + pick(r, -1, 0, 1)
	case p < 19:
		return 129 + r.IntN(200)
	default:
		return 329 + r.IntN(300)
	}
}

// sweepN draws a row count: multiples of 128 (the MMQ tile height, no fallback) or not.
func sweepN(r *rand.Rand) int {
	switch p := r.IntN(10); {
	case p < 4:
		return 128 * (1 + r.IntN(6))
	case p < 8:
		return 1 + r.IntN(700)
	default:
		return 128*(1+r.IntN(6)) + pick(r, -1, 1, 64)
	}
}

// sweepData makes the weights and activations: "plain" (golden-like floats, quantized
// where ggsim has the reference quantizer, else random blocks with moderate scales),
// "adversarial" (finite special blocks and activation kinds), "non-finite" (NaN/Inf
// too).
func sweepData(c *SweepCase, r *rand.Rand, rows, nact int) {
	_, hasQ := quantizer(c.Type)
	// Half of the plain cases quantize floats (ggsim's reference quantizers are slow
	// for some types); the others are random blocks with moderate scales.
	w := weightSpec{Quantized: hasQ && r.IntN(2) == 0, Scale: 0.05}
	a := actSpec{Kind: actNormal, Scale: 1}
	nb := c.K / c.Type.BlockSize()
	switch p := r.IntN(20); {
	case p < 14:
		c.Profile = "plain"
		a.Scale = pick(r, float32(1), 1e-3, 100)
	default:
		nonFinite := p == 19
		c.Profile = "adversarial"
		kinds := finiteScaleKinds
		akinds := []actSpecialKind{actZeroBlock, actMaxFloat}
		if nonFinite {
			c.Profile = "non-finite"
			kinds = allScaleKinds
			akinds = append(akinds, actNaN, actPosInf, actNegInf)
		}
		if hasQ {
			w.Quantized = r.IntN(2) == 0
			w.Scale = pick(r, float32(0.05), 1, 1e-4, 3e4)
		}
		for n := r.IntN(5); n > 0; n-- {
			s := weightSpecial{Row: r.IntN(rows), Block: r.IntN(nb), Kind: pick(r, kinds...)}
			if len(halfScaleOffsets(c.Type)) == 2 && s.Kind != zeroBlock {
				s.Min = r.IntN(4) == 3
			}
			w.Specials = append(w.Specials, s)
		}
		a.Kind = pick(r, actNormal, actTiny, actEqual, actBigSum)
		switch a.Kind {
		case actNormal:
			a.Scale = pick(r, float32(1), 1e-3, 100)
		case actTiny:
			a.Scale = pick(r, float32(1e-5), 1e-7, 1e-9, 3e-39)
		}
		for n := r.IntN(5); n > 0; n-- {
			a.Specials = append(a.Specials, actSpecial{Row: r.IntN(nact), Index: r.IntN(c.K), Kind: pick(r, akinds...)})
		}
	}
	c.A, _ = makeWeights(c.Type, c.K, rows, w, r)
	c.B = makeActs(nact, c.K, a, r)
}

// sweepMACs bounds a case's multiply-accumulates (K·N·M, or K·N·U·T), so that the
// simulator verifies a sweep of ten thousand cases in minutes.
const sweepMACs = 12 << 20

func sweepMMQ(c *SweepCase, r *rand.Rand) {
	c.Op = "mul_mat"
	qk := c.Type.BlockSize()
	c.K = sweepK(r, c.Type)
	c.M = sweepM(r)
	c.N = sweepN(r)
	if r.IntN(20) == 0 {
		// Whole waves of tiles: about one tile per SM of a 132-SM H200 (or two), one
		// column tile, one or two weight blocks per row so the case stays small.
		c.N = 128 * pick(r, 110+r.IntN(31), 230+r.IntN(41))
		c.M = 9 + r.IntN(8)
		c.K = qk * (1 + r.IntN(max(1, 256/qk)))
	}
	for c.K > qk && c.K*c.N*c.M > sweepMACs {
		c.K = max(qk, c.K/2/qk*qk)
	}
	for c.N > 1 && c.K*c.N*c.M > sweepMACs {
		c.N = c.N * 3 / 4
	}
	sweepData(c, r, c.N, c.M)
}

func sweepMMQID(c *SweepCase, r *rand.Rand) {
	c.Op = "mul_mat_id"
	c.E = pick(r, 4, 8, 16, 32, 64, 128)
	c.U = 1 + r.IntN(min(8, c.E))
	c.T = sweepM(r)
	if r.IntN(3) == 0 {
		c.B1 = 1 // one activation row per token, broadcast to every slot
	} else {
		c.B1 = c.U
	}
	c.K = sweepK(r, c.Type)
	c.N = pick(r, 128*(1+r.IntN(4)), 1+r.IntN(400))
	qk := c.Type.BlockSize()
	for c.K > qk && (c.K*c.N*c.U*c.T > sweepMACs || c.K*c.N*c.E > 3<<19) {
		c.K = max(qk, c.K/2/qk*qk)
	}
	for c.N > 1 && (c.K*c.N*c.U*c.T > sweepMACs || c.K*c.N*c.E > 3<<19) {
		c.N = c.N * 3 / 4
	}
	routing := pick(r, "uniform", "uniform", "hot", "sparse", "all-to-one")
	c.IDs = make([]int32, c.U*c.T)
	for t := 0; t < c.T; t++ {
		var set []int
		switch routing {
		case "uniform":
			set = r.Perm(c.E)[:c.U]
		case "hot": // expert 0 in every token, the others at random
			set = append([]int{0}, r.Perm(c.E - 1)[:c.U-1]...)
			for k := 1; k < len(set); k++ {
				set[k]++
			}
			r.Shuffle(len(set), func(a, b int) { set[a], set[b] = set[b], set[a] })
		case "sparse": // only the first max(U, E/4) experts are used: the others are empty
			n := max(c.U, c.E/4)
			set = r.Perm(n)[:c.U]
		case "all-to-one": // every token the same experts, in the same order
			set = make([]int, c.U)
			for k := range set {
				set[k] = (c.E - 1 - k) % c.E
			}
		}
		for k, e := range set {
			c.IDs[t*c.U+k] = int32(e)
		}
	}
	sweepData(c, r, c.N*c.E, c.B1*c.T)
	c.Profile += "/" + routing
}

// SweepResult is one line of a sweep record: a case and the digest of its output (or
// the error the implementation returned).
type SweepResult struct {
	Kind    string
	Seed    uint64
	Index   int
	Type    quant.Type
	Shape   string
	Profile string
	Digest  string // "" when Err is set
	Err     string
}

// String formats the result as one tab-separated line, the record format of a sweep:
// kind, seed, index, type, shape, profile, digest or "error: ...".
func (s SweepResult) String() string {
	d := s.Digest
	if s.Err != "" {
		d = "error: " + strings.ReplaceAll(s.Err, "\t", " ")
	}
	return strings.Join([]string{s.Kind, strconv.FormatUint(s.Seed, 10), strconv.Itoa(s.Index), s.Type.String(), s.Shape, s.Profile, d}, "\t")
}

// ParseSweepResult parses one line written by SweepResult.String.
func ParseSweepResult(line string) (SweepResult, error) {
	f := strings.Split(strings.TrimRight(line, "\r\n"), "\t")
	if len(f) != 7 {
		return SweepResult{}, fmt.Errorf("sweep record: %d tab-separated fields, want 7", len(f))
	}
	seed, err := strconv.ParseUint(f[1], 10, 64)
	if err != nil {
		return SweepResult{}, fmt.Errorf("sweep record: seed %q: %v", f[1], err)
	}
	idx, err := strconv.Atoi(f[2])
	if err != nil || idx < 0 {
		return SweepResult{}, fmt.Errorf("sweep record: index %q is not a case number", f[2])
	}
	t, err := quant.ParseType(f[3])
	if err != nil {
		return SweepResult{}, fmt.Errorf("sweep record: %v", err)
	}
	s := SweepResult{Kind: f[0], Seed: seed, Index: idx, Type: t, Shape: f[4], Profile: f[5]}
	if e, ok := strings.CutPrefix(f[6], "error: "); ok {
		s.Err = e
	} else {
		if len(f[6]) != 64 {
			return SweepResult{}, fmt.Errorf("sweep record: digest %q is not a hex SHA-256", f[6])
		}
		s.Digest = f[6]
	}
	return s, nil
}

// SweepReport counts a verified sweep record.
type SweepReport struct {
	Cases    int               // lines verified
	NotRun   int               // lines skipped
	Match    int               // same digest
	Mismatch []SweepResult     // the recorded result of each case whose digest differed
	Errors   []string          // cases the implementation refused or the recording failed, with why
	ByType   map[string][2]int // per type: [matched, cases]
	ByPath   map[string][2]int // per profile: [matched, cases]
	// Verdicts has one entry per verified line, in the record's order.
	Verdicts []SweepVerdict
}

// SweepVerdict is the outcome of one verified record line.
type SweepVerdict struct {
	Line int         // line number in the record (1-based)
	Want SweepResult // what the record says
	// Got is the digest of the implementation's output ("" if it returned an error).
	Got string
	// Err is the implementation's error (nil if it returned an output); it wraps
	// errors.ErrUnsupported for a case it does not model.
	Err error
	// Match: Got equals the recorded digest (a recorded error never matches).
	Match bool
}

// VerifySweep reads a sweep record (lines of SweepResult.String; lines starting with #
// are comments), regenerates every case and compares the digest of run's output with
// the recorded one. A case that run refuses or that the recording marks as an error
// counts as not matched (an unsupported case is never a pass). It returns an error
// only for an unreadable record.
//
// If skip is not nil, a record line for which it returns true is not regenerated or
// run, and is counted in NotRun.
func VerifySweep(r io.Reader, skip func(SweepResult) bool, run func(c *SweepCase) ([]float32, error)) (*SweepReport, error) {
	return VerifySweepParallel(r, skip, run, 1)
}

// VerifySweepParallel is VerifySweep with the cases regenerated and run on workers
// goroutines (workers < 1: GOMAXPROCS); run must then be safe for concurrent use. The
// report is the same as VerifySweep's, in the record's order.
func VerifySweepParallel(r io.Reader, skip func(SweepResult) bool, run func(c *SweepCase) ([]float32, error), workers int) (*SweepReport, error) {
	rep := &SweepReport{ByType: map[string][2]int{}, ByPath: map[string][2]int{}}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<16), 1<<20)
	line := 0
	var todo []SweepVerdict
	for sc.Scan() {
		line++
		txt := sc.Text()
		if txt == "" || strings.HasPrefix(txt, "#") {
			continue
		}
		want, err := ParseSweepResult(txt)
		if err != nil {
			return rep, fmt.Errorf("line %d: %v", line, err)
		}
		if skip != nil && skip(want) {
			rep.NotRun++
			continue
		}
		todo = append(todo, SweepVerdict{Line: line, Want: want})
	}
	if err := sc.Err(); err != nil {
		return rep, err
	}
	if workers < 1 {
		workers = runtime.GOMAXPROCS(0)
	}
	cases := make([]SweepCase, len(todo))
	genErr := make([]error, len(todo))
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(workers, max(1, len(todo))) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				k := int(next.Add(1) - 1)
				if k >= len(todo) {
					return
				}
				v := &todo[k]
				c, err := Sweep(v.Want.Kind, v.Want.Seed, v.Want.Index)
				if err == nil && (c.Type != v.Want.Type || c.Shape() != v.Want.Shape) {
					err = fmt.Errorf("case %s/%d/%d regenerates as %v %s, recorded as %v %s: the generator changed since the record was made",
						v.Want.Kind, v.Want.Seed, v.Want.Index, c.Type, c.Shape(), v.Want.Type, v.Want.Shape)
				}
				if err != nil {
					genErr[k] = fmt.Errorf("line %d: %v", v.Line, err)
					continue
				}
				cases[k] = SweepCase{Kind: c.Kind, Index: c.Index, Type: c.Type, Op: c.Op, Profile: c.Profile}
				out, err := run(&c)
				v.Err = err
				if err == nil {
					v.Got = Digest(out)
					v.Match = v.Want.Err == "" && v.Got == v.Want.Digest
				}
			}
		}()
	}
	wg.Wait()
	for k := range todo {
		if genErr[k] != nil {
			return rep, genErr[k]
		}
	}
	for k, v := range todo {
		c, want := &cases[k], v.Want
		rep.Cases++
		switch {
		case want.Err != "":
			rep.Errors = append(rep.Errors, fmt.Sprintf("%s/%d: recorded error: %s", want.Kind, want.Index, want.Err))
		case v.Err != nil:
			rep.Errors = append(rep.Errors, fmt.Sprintf("%s/%d %v %s: %v", want.Kind, want.Index, c.Type, want.Shape, v.Err))
		case !v.Match:
			rep.Mismatch = append(rep.Mismatch, want)
		}
		tk, pk := c.Type.String(), strings.SplitN(c.Profile, "/", 2)[0]
		t, p := rep.ByType[tk], rep.ByPath[pk]
		t[1]++
		p[1]++
		if v.Match {
			rep.Match++
			t[0]++
			p[0]++
		}
		rep.ByType[tk], rep.ByPath[pk] = t, p
	}
	rep.Verdicts = todo
	return rep, nil
}

// SweepHeader is the first line of a sweep record: "# PRODUCER on DEVICE (cc CC, SMS
// SMs, driver DRIVER), TIME" (gpu/ggml TestSweepCUDA, simrun sweep run).
func SweepHeader(producer string, dev golden.Device, when time.Time) string {
	return fmt.Sprintf("# %s on %s (cc %d, %d SMs, driver %s), %s", producer, dev.Name, dev.CC, dev.SMCount, dev.Driver, when.UTC().Format(time.RFC3339))
}

var sweepHeaderRE = regexp.MustCompile(`^# (.*) on (.+) \(cc (\d+), (\d+) SMs, driver ([^)]*)\)`)

// ParseSweepHeader reads the device a sweep record was made on from its header line
// (SweepHeader's format). It returns false if line is not such a header.
func ParseSweepHeader(line string) (producer string, dev golden.Device, ok bool) {
	m := sweepHeaderRE.FindStringSubmatch(line)
	if m == nil {
		return "", golden.Device{}, false
	}
	cc, err1 := strconv.Atoi(m[3])
	sms, err2 := strconv.Atoi(m[4])
	if err1 != nil || err2 != nil {
		return "", golden.Device{}, false
	}
	return m[1], golden.Device{Name: m[2], CC: cc, SMCount: sms, Driver: m[5]}, true
}
