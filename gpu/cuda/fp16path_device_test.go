//go:build cuda && cgo

package cuda

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ggsim/ggsim/fp16path"
	"github.com/ggsim/ggsim/quant"
	"github.com/ggsim/ggsim/sim"
)

// TestFP16PathMatchesSimulator runs property-generated cases through the fp16 path's CUDA
// kernels (kernels/fp16path.cu) and through the simulator (package fp16path) in the same
// process and compares math.Float32bits of every output. GGSIM_FP16_CASES sets the number
// of cases (default 400; the device run uses 12000), GGSIM_FP16_SEED the seed (default:
// the clock; printed either way). Case i draws from PCG(seed, i), so one case can be
// replayed with GGSIM_FP16_SEED=s GGSIM_FP16_ONLY=i.
//
// A case is one of three operations:
//
//   - mmv: MulMat. A type, a column count (1..8 where fp16path.MultiColumn, else 1), K,
//     N, rows per warp, a weight kind (random bytes and scales; the largest codes and
//     scales) and an activation kind per column block (fp16ActKinds: normal, subnormal
//     blocks, tiny blocks clamped at 2^127, blocks at the 2^15 rounding edge, all at the
//     largest prescaled value, huge, mixed). Every output compared.
//   - glu: MulMatSwiGLU, the same draws with a second (up) matrix. The gate and up dot
//     products the kernel reduced are compared with fp16path.MulMat of each matrix, and
//     the output with up·silu(gate) as fp16path's epilogue computes it (sim.Div, sim.Add,
//     sim.Mul) from the device's expf(-gate); where fp16path.MulMatSwiGLU runs (once
//     MUFU.EX2 is modelled) the output is compared with it as well.
//   - norm: the fused RMS_NORM*weight writing the conversion. The argument of rsqrtf
//     (mean + eps, from fp16path.SumSquares), every output from the device's rsqrtf, and
//     the conversion (halves, exponents, sums) against fp16path.ConvertActivations of the
//     simulated output; with fp16path.RMSNormMul where it runs (once MUFU.RSQ is
//     modelled).
//
// It reports the count per operation × type × columns × variant and the first mismatch in
// detail.
func TestFP16PathMatchesSimulator(t *testing.T) {
	ctx := gpu(t)
	p, err := ctx.FP16Path()
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()

	cases := 400
	if s := os.Getenv("GGSIM_FP16_CASES"); s != "" {
		if cases, err = strconv.Atoi(s); err != nil || cases < 1 {
			t.Fatalf("GGSIM_FP16_CASES=%q: want a positive integer", s)
		}
	}
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("GGSIM_FP16_SEED"); s != "" {
		if seed, err = strconv.ParseUint(s, 0, 64); err != nil {
			t.Fatalf("GGSIM_FP16_SEED=%q: %v", s, err)
		}
	}
	first, last := 0, cases
	if s := os.Getenv("GGSIM_FP16_ONLY"); s != "" {
		if first, err = strconv.Atoi(s); err != nil {
			t.Fatalf("GGSIM_FP16_ONLY=%q: %v", s, err)
		}
		last = first + 1
	}
	_, gluErr := fp16path.MulMatSwiGLU(quant.Q8_0, make([]byte, 34), make([]byte, 34), 32, 1, make([]float32, 32), 1, nil)
	_, normErr := fp16path.RMSNormMul(make([]float32, 32), make([]float32, 32), 1e-6, nil)
	report(t, "seed %d (GGSIM_FP16_SEED=%d to replay), cases %d..%d, device %s", seed, seed, first, last-1, ctx.Info())
	report(t, "simulator: multi-column types %v; SWIGLU epilogue: %s; RMS_NORM: %s", multiColTypes(), modelled(gluErr), modelled(normErr))

	var (
		mu       sync.Mutex
		stats    = map[string]*[2]int{} // key -> {cases, cases with a mismatch}
		outputs  int64
		bad      int
		firstBad string
		simTime  atomic.Int64
		gpuTime  atomic.Int64
		next     atomic.Int64
		errCount atomic.Int64
		wg       sync.WaitGroup
	)
	next.Store(int64(first))
	start := time.Now()
	for w := 0; w < runtime.GOMAXPROCS(0); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= last {
					return
				}
				c := drawFP16Case(rand.New(rand.NewPCG(seed, uint64(i))))
				r := c.run(p, gluErr == nil, normErr == nil, false)
				simTime.Add(int64(r.sim))
				gpuTime.Add(int64(r.gpu))
				if r.err != nil {
					// A failed launch leaves the context unusable: stop after a few errors
					// rather than print one per case.
					if n := errCount.Add(1); n <= 5 {
						t.Errorf("case %d (%s): %v", i, c, r.err)
					} else if n == 6 {
						t.Errorf("more errors: stopping")
						next.Store(int64(last))
					}
					continue
				}
				mu.Lock()
				s := stats[c.key()]
				if s == nil {
					s = new([2]int)
					stats[c.key()] = s
				}
				s[0]++
				outputs += int64(r.outputs)
				if r.mismatches > 0 {
					s[1]++
					bad++
					if firstBad == "" {
						firstBad = fmt.Sprintf("case %d (%s): %d of %d compared values differ; first: %s", i, c, r.mismatches, r.outputs, r.first)
						if c.op != "norm" {
							firstBad += "\n" + fp16ActDiff(p, c)
						}
					}
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)

	keys := make([]string, 0, len(stats))
	for k := range stats {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "\n  %-46s %6d cases %6d mismatched", k, stats[k][0], stats[k][1])
	}
	// The same counts per operation × type × columns (summed over the variants).
	sum := map[string]*[2]int{}
	for k, v := range stats {
		f := strings.Fields(k)
		if len(f) > 3 {
			f = f[:3] // "mmv q4_K cols=3", "norm block=256 normal"
		}
		kk := strings.Join(f, " ")
		if f[0] == "norm" {
			kk = "norm " + f[1]
		}
		if sum[kk] == nil {
			sum[kk] = new([2]int)
		}
		sum[kk][0] += v[0]
		sum[kk][1] += v[1]
	}
	skeys := make([]string, 0, len(sum))
	for k := range sum {
		skeys = append(skeys, k)
	}
	slices.Sort(skeys)
	var bs strings.Builder
	for _, k := range skeys {
		fmt.Fprintf(&bs, "\n  %-30s %6d cases %6d mismatched", k, sum[k][0], sum[k][1])
	}
	report(t, "per op x type x columns:%s", bs.String())
	report(t, "%d cases, %d values compared, %d cases with a mismatch, in %v (simulator %v, GPU %v summed over %d workers); per op x type x columns x variant:%s",
		last-first, outputs, bad, elapsed.Round(time.Millisecond), time.Duration(simTime.Load()).Round(time.Millisecond),
		time.Duration(gpuTime.Load()).Round(time.Millisecond), runtime.GOMAXPROCS(0), b.String())
	if bad > 0 {
		t.Errorf("%d of %d cases differ from the simulator; the first: %s", bad, last-first, firstBad)
	}
}

func modelled(err error) string {
	if err == nil {
		return "modelled (full comparison)"
	}
	return fmt.Sprintf("not modelled (%v): compared up to the device's MUFU value", err)
}

func multiColTypes() []quant.Type {
	var ts []quant.Type
	for _, t := range fp16path.Types() {
		if fp16path.MultiColumn(t) {
			ts = append(ts, t)
		}
	}
	return ts
}

// fp16BlockValues is each type's block size in values.
var fp16BlockValues = map[quant.Type]int{
	quant.Q4_K: 256, quant.Q5_K: 256, quant.Q6_K: 256, quant.Q3_K: 256, quant.IQ4_XS: 256,
	quant.IQ4_NL: 32, quant.Q8_0: 32,
}

// fp16HalfFields lists the byte offsets of the half scales in a block of each type.
var fp16HalfFields = map[quant.Type][]int{
	quant.Q4_K: {0, 2}, quant.Q5_K: {0, 2}, quant.Q6_K: {208}, quant.Q3_K: {108},
	quant.IQ4_XS: {0}, quant.IQ4_NL: {0}, quant.Q8_0: {0},
}

type fp16Case struct {
	op         string // "mmv", "glu" or "norm"
	t          quant.Type
	K, N, M, R int
	wKind      string
	aKind      string
	x, up      []byte
	mats       [][]byte // norm: matrices that read the norm's cached conversion (may be none)
	y          []float32
	w          []float32 // norm: the weights (len K)
	eps        float32
}

func (c *fp16Case) variant() string { return c.wKind + "/" + c.aKind }

func (c *fp16Case) key() string {
	if c.op == "norm" {
		k := fmt.Sprintf("norm block=%d %s", fp16path.NormBlockSize(c.K), c.aKind)
		if len(c.mats) > 0 {
			k += fmt.Sprintf(" +cached mmv %v", c.t)
		}
		return k
	}
	return fmt.Sprintf("%s %-7v cols=%d %s", c.op, c.t, c.M, c.variant())
}

func (c *fp16Case) String() string {
	if c.op == "norm" {
		return fmt.Sprintf("norm ncols=%d eps=%g activations=%s, then %d matrices %v N=%d rows/warp=%d on the cached conversion", c.K, c.eps, c.aKind, len(c.mats), c.t, c.N, c.R)
	}
	return fmt.Sprintf("%s %v K=%d N=%d cols=%d rows/warp=%d weights=%s activations=%s", c.op, c.t, c.K, c.N, c.M, c.R, c.wKind, c.aKind)
}

// fp16ActKinds are the activation generators; each fills one 32-value block.
var fp16ActKinds = []string{"normal", "subnormal", "tiny", "edge", "maxprescaled", "huge", "mixed"}

func drawFP16Case(r *rand.Rand) *fp16Case {
	c := &fp16Case{op: "mmv"}
	switch r.IntN(8) {
	case 0, 1:
		c.op = "glu"
	case 2:
		return drawFP16Norm(r)
	}
	types := fp16path.Types()
	c.t = types[r.IntN(len(types))]
	c.M = 1
	if fp16path.MultiColumn(c.t) {
		c.M = 1 + r.IntN(fp16path.MaxColumns)
	}
	qk := fp16BlockValues[c.t]
	c.K = qk * (1 + r.IntN(4096/qk))
	if r.IntN(4) == 0 {
		c.K = qk * (1 + r.IntN(3)) // short rows: lanes without work
	}
	c.N = 1 + r.IntN(40)
	c.R = []int{1, 1, 1, 1, 2, 4, 8, 16, 32}[r.IntN(9)]
	c.aKind = fp16ActKinds[r.IntN(len(fp16ActKinds))]
	c.wKind = "random"
	if r.IntN(4) == 0 {
		c.wKind = "max"
	}
	// Scales: keep every output finite (the simulator's and the GPU's NaN would agree,
	// but a finite output tells more): |W| <= 2^(dExp+12), |y| <= 2^50 (2^100 for huge),
	// K <= 2^12.
	dExp := 15
	if c.aKind == "huge" {
		dExp = -12
	}
	rs, _ := c.t.RowSize(int64(c.K))
	c.x = make([]byte, int(rs)*c.N)
	fillFP16Weights(r, c.t, c.x, c.wKind, dExp)
	if c.op == "glu" {
		c.up = make([]byte, len(c.x))
		fillFP16Weights(r, c.t, c.up, c.wKind, dExp)
	}
	c.y = make([]float32, c.K*c.M)
	for b := 0; b < len(c.y)/32; b++ {
		kind := c.aKind
		if kind == "mixed" {
			kind = fp16ActKinds[r.IntN(len(fp16ActKinds)-2)]
		}
		fillFP16Acts(r, c.y[32*b:32*b+32], kind)
	}
	return c
}

// drawFP16Norm draws a fused RMS_NORM case: a row of 32..5120 values (both block sizes of
// rms_norm_f32) from the activation kinds that keep Σx² finite, weights Gaussian times
// 2^[-10, 10], eps > 0 (ggml's are 1e-5 and 1e-6; with eps = 0 a row that flushes to zero
// has no finite output).
func drawFP16Norm(r *rand.Rand) *fp16Case {
	c := &fp16Case{op: "norm", M: 1, N: 1, R: 1}
	c.K = 32 * (1 + r.IntN(160))
	kinds := []string{"normal", "subnormal", "tiny", "edge", "maxprescaled", "mixed"}
	c.aKind = kinds[r.IntN(len(kinds))]
	c.y = make([]float32, c.K)
	for b := 0; b < c.K/32; b++ {
		kind := c.aKind
		if kind == "mixed" {
			kind = kinds[r.IntN(len(kinds)-1)]
		}
		fillFP16Acts(r, c.y[32*b:32*b+32], kind)
	}
	c.w = make([]float32, c.K)
	s := math.Ldexp(1, r.IntN(21)-10)
	for i := range c.w {
		c.w[i] = float32(r.NormFloat64() * s)
	}
	c.eps = []float32{1e-5, 1e-6, 0x1p-126, 1}[r.IntN(4)]
	// Half the time, 1..3 matrices (as Q, K, V after attn_norm) read the conversion the
	// norm kernel wrote.
	var types []quant.Type
	for _, t := range fp16path.Types() {
		if c.K%fp16BlockValues[t] == 0 {
			types = append(types, t)
		}
	}
	if r.IntN(2) == 0 {
		c.t = types[r.IntN(len(types))]
		c.N = 1 + r.IntN(24)
		c.R = []int{1, 1, 2, 4, 8, 16, 32}[r.IntN(7)]
		rs, _ := c.t.RowSize(int64(c.K))
		for m := 0; m < 1+r.IntN(3); m++ {
			x := make([]byte, int(rs)*c.N)
			fillFP16Weights(r, c.t, x, "random", 15)
			c.mats = append(c.mats, x)
		}
	}
	return c
}

type fp16Result struct {
	outputs, mismatches int
	first               string
	sim, gpu            time.Duration
	err                 error
}

// cmp counts one compared value.
func (r *fp16Result) cmp(what string, got, want float32) {
	r.outputs++
	if math.Float32bits(got) != math.Float32bits(want) {
		if r.mismatches == 0 {
			r.first = fmt.Sprintf("%s: got %#08x (%g) want %#08x (%g)", what, math.Float32bits(got), got, math.Float32bits(want), want)
		}
		r.mismatches++
	}
}

// cmpInt counts one compared integer (a conversion's exponent or half).
func (r *fp16Result) cmpInt(what string, got, want int) {
	r.outputs++
	if got != want {
		if r.mismatches == 0 {
			r.first = fmt.Sprintf("%s: got %#x want %#x", what, got, want)
		}
		r.mismatches++
	}
}

// run computes the case on the device and in the simulator and compares.
//
// emulated (TestFP16PathHostEmulation: the kernels on the CPU) leaves out what the host
// cannot reproduce: the fused epilogues' divisions (MUFU.RCP), whose host stand-in is a
// correctly rounded division.
func (c *fp16Case) run(p *FP16Path, gluModelled, normModelled, emulated bool) (r fp16Result) {
	opt := &fp16path.Options{RowsPerWarp: c.R}
	t0 := time.Now()
	switch c.op {
	case "mmv":
		want, err := fp16path.MulMat(c.t, c.x, c.K, c.N, c.y, c.M, opt)
		t1 := time.Now()
		r.sim = t1.Sub(t0)
		if err != nil {
			r.err = fmt.Errorf("simulator: %w", err)
			return
		}
		got, err := p.MulMat(c.t, c.x, c.K, c.N, c.y, c.M, opt)
		r.gpu = time.Since(t1)
		if err != nil {
			r.err = fmt.Errorf("GPU: %w", err)
			return
		}
		for k := range want {
			r.cmp(fmt.Sprintf("row %d col %d", k%c.N, k/c.N), got[k], want[k])
		}
	case "glu":
		g, err := fp16path.MulMat(c.t, c.x, c.K, c.N, c.y, c.M, opt)
		if err != nil {
			r.err = fmt.Errorf("simulator (gate): %w", err)
			return
		}
		u, err := fp16path.MulMat(c.t, c.up, c.K, c.N, c.y, c.M, opt)
		if err != nil {
			r.err = fmt.Errorf("simulator (up): %w", err)
			return
		}
		var full []float32
		if gluModelled {
			if full, err = fp16path.MulMatSwiGLU(c.t, c.x, c.up, c.K, c.N, c.y, c.M, opt); err != nil {
				r.err = fmt.Errorf("simulator (SWIGLU): %w", err)
				return
			}
		}
		t1 := time.Now()
		r.sim = t1.Sub(t0)
		got, tr, err := p.MulMatSwiGLU(c.t, c.x, c.up, c.K, c.N, c.y, c.M, opt)
		r.gpu = time.Since(t1)
		if err != nil {
			r.err = fmt.Errorf("GPU: %w", err)
			return
		}
		for k := range got {
			at := fmt.Sprintf("row %d col %d", k%c.N, k/c.N)
			r.cmp(at+" gate", tr[k].Gate, g[k])
			r.cmp(at+" up", tr[k].Up, u[k])
			if emulated {
				continue
			}
			// silu(g) = g / (1 + expf(-g)) with the device's expf (glu.go: silu, swiglu).
			r.cmp(fmt.Sprintf("%s output (expf(-gate) on the device %#08x)", at, math.Float32bits(tr[k].Expf)),
				got[k], sim.Mul(u[k], sim.Div(g[k], sim.Add(1, tr[k].Expf))))
			if full != nil {
				r.cmp(at+" output against fp16path.MulMatSwiGLU", got[k], full[k])
			}
			if e := float64(tr[k].Expf); math.Abs(float64(g[k])) < 80 && math.Abs(e-math.Exp(-float64(g[k]))) > 1e-4*e {
				// Not a bit-exact comparison: a check that the trace holds expf(-gate) at all.
				r.err = fmt.Errorf("GPU: %s: expf(-gate) traced as %g for gate %g: not exp(-gate)", at, e, g[k])
				return
			}
		}
	case "norm":
		n := c.K
		arg := sim.Add(sim.Div(fp16path.SumSquares(c.y), float32(n)), c.eps)
		r.sim = time.Since(t0)
		t1 := time.Now()
		got, outs, err := p.RMSNormMulMat(c.y, c.w, c.eps, c.t, c.mats, c.N, opt)
		r.gpu = time.Since(t1)
		if err != nil {
			r.err = fmt.Errorf("GPU: %w", err)
			return
		}
		t2 := time.Now()
		if !emulated {
			r.cmp("rsqrtf argument (mean + eps)", got.RsqrtArg, arg)
		}
		want := make([]float32, n)
		for i := range want {
			want[i] = sim.Mul(sim.Mul(got.Scale, c.y[i]), c.w[i]) // RMSNormMul's dst with the device's rsqrtf
			r.cmp(fmt.Sprintf("value %d (rsqrtf on the device %#08x)", i, math.Float32bits(got.Scale)), got.Dst[i], want[i])
		}
		if normModelled {
			full, err := fp16path.RMSNormMul(c.y, c.w, c.eps, nil)
			if err != nil {
				r.err = fmt.Errorf("simulator (RMSNormMul): %w", err)
				return
			}
			for i := range full {
				r.cmp(fmt.Sprintf("value %d against fp16path.RMSNormMul", i), got.Dst[i], full[i])
			}
		}
		a, err := fp16path.ConvertActivations(want)
		if err != nil {
			r.err = fmt.Errorf("simulator (conversion of the norm's output): %w", err)
			return
		}
		for b, e := range a.Exp {
			r.cmpInt(fmt.Sprintf("conversion: block %d exponent", b), int(got.Act.Exp[b]), e)
		}
		for k, h := range a.H {
			r.cmpInt(fmt.Sprintf("conversion: value %d half", k), int(got.Act.H[k]), int(h))
		}
		for k, s := range a.Sum16 {
			r.cmp(fmt.Sprintf("conversion: group %d sum", k), got.Act.Sum16[k], s)
		}
		// The matrices that read the cached conversion: fp16path.MulMat of the norm's
		// output (the cache changes no bit).
		for m, x := range c.mats {
			want, err := fp16path.MulMat(c.t, x, n, c.N, got.Dst, 1, opt)
			if err != nil {
				r.err = fmt.Errorf("simulator (matrix %d after the norm): %w", m, err)
				return
			}
			for i := range want {
				r.cmp(fmt.Sprintf("matrix %d row %d (on the cached conversion)", m, i), outs[m][i], want[i])
			}
		}
		r.sim += time.Since(t2)
	}
	return
}

// randHalf returns a finite binary16 with a random sign, a random exponent field in
// 0..min(30, 15+maxExp) (0: subnormal) and a random mantissa.
func randHalf(r *rand.Rand, maxExp int) uint16 {
	e := r.IntN(min(30, 15+maxExp) + 1)
	return uint16(r.IntN(2))<<15 | uint16(e)<<10 | uint16(r.IntN(1024))
}

// fillFP16Weights fills rows of type t: random bytes (kind "random") or every code at its
// largest (kind "max": 0xFF everywhere but Q8_0's quants 0x7F = 127 and Q6_K's scales
// ±127/-128), then writes random finite half scales (kind "max": the largest half below
// 2^maxExp, half the time).
func fillFP16Weights(r *rand.Rand, t quant.Type, x []byte, kind string, maxExp int) {
	for i := range x {
		x[i] = byte(r.Uint32())
	}
	bs, _ := t.RowSize(int64(fp16BlockValues[t]))
	for o := 0; o+int(bs) <= len(x); o += int(bs) {
		blk := x[o : o+int(bs)]
		if kind == "max" {
			for i := range blk {
				blk[i] = 0xFF
			}
			switch t {
			case quant.Q8_0:
				for i := 2; i < 34; i++ {
					blk[i] = 0x7F
				}
			case quant.Q6_K:
				for i := 192; i < 208; i++ {
					blk[i] = []byte{0x7F, 0x80, 0x81}[r.IntN(3)]
				}
			}
		}
		for _, f := range fp16HalfFields[t] {
			h := randHalf(r, maxExp)
			if kind == "max" && r.IntN(2) == 0 {
				e := min(30, 15+maxExp-1)
				h = uint16(r.IntN(2))<<15 | uint16(e)<<10 | 0x3FF
			}
			blk[f], blk[f+1] = byte(h), byte(h>>8)
		}
	}
}

// fillFP16Acts fills one 32-value block of activations of the given kind.
func fillFP16Acts(r *rand.Rand, y []float32, kind string) {
	switch kind {
	case "normal": // Gaussian times 2^[-40, 40], sometimes a zero or an outlier
		s := math.Ldexp(1, r.IntN(81)-40)
		for i := range y {
			y[i] = float32(r.NormFloat64() * s)
			if r.IntN(16) == 0 {
				y[i] *= 40
			}
			if r.IntN(32) == 0 {
				y[i] = 0
			}
		}
	case "subnormal": // float32 subnormals (flushed: the block converts with e = 0 or by its normals)
		for i := range y {
			y[i] = math.Float32frombits(uint32(r.IntN(2))<<31 | uint32(r.IntN(1<<23)))
		}
		if r.IntN(2) == 0 {
			y[r.IntN(32)] = float32(math.Ldexp(1+r.Float64(), -126+r.IntN(4)))
		}
	case "tiny": // normals below 2^-113: e clamped at 127, halves subnormal
		for i := range y {
			y[i] = float32(math.Ldexp(r.Float64()*2-1, -113-r.IntN(13)))
		}
	case "edge": // the block max at the 2^15 rounding edge of its prescale
		k := r.IntN(61) - 30
		for i := range y {
			y[i] = float32(math.Ldexp(r.NormFloat64()*8000, k))
		}
		m := []float64{32752, 32759, 32759.998, 32760, 32760.002, 32764, 32767.998, 32768, 16383.998, 16384}[r.IntN(10)]
		y[r.IntN(32)] = float32(math.Ldexp(m, k)) * float32(1-2*r.IntN(2))
	case "maxprescaled": // every value ±32752·2^k: the largest prescaled half everywhere
		k := r.IntN(61) - 30
		for i := range y {
			y[i] = float32(math.Ldexp(32752, k)) * float32(1-2*r.IntN(2))
		}
	case "huge": // magnitudes up to 2^100 (the path refuses blocks from about 2^118)
		k := 60 + r.IntN(41)
		for i := range y {
			y[i] = float32(math.Ldexp(r.NormFloat64(), k))
		}
	default:
		panic("unknown activation kind " + kind)
	}
}

// fp16ActDiff compares the GPU's conversion of the case's columns with
// fp16path.ConvertActivations and describes the first difference (or says they agree).
func fp16ActDiff(p *FP16Path, c *fp16Case) string {
	g, err := p.Activations(c.y, c.K, c.M)
	if err != nil {
		return "GPU conversion: " + err.Error()
	}
	for col := 0; col < c.M; col++ {
		a, err := fp16path.ConvertActivations(c.y[col*c.K : (col+1)*c.K])
		if err != nil {
			return "simulator conversion: " + err.Error()
		}
		for b, e := range a.Exp {
			if int32(e) != g.Exp[col*c.K/32+b] {
				return fmt.Sprintf("activations differ: column %d block %d exponent GPU %d simulator %d", col, b, g.Exp[col*c.K/32+b], e)
			}
		}
		for k, h := range a.H {
			if uint16(h) != g.H[col*c.K+k] {
				return fmt.Sprintf("activations differ: column %d value %d (y %#08x) half GPU %#04x simulator %#04x", col, k,
					math.Float32bits(c.y[col*c.K+k]), g.H[col*c.K+k], uint16(h))
			}
		}
		for k, s := range a.Sum16 {
			if math.Float32bits(s) != math.Float32bits(g.Sum16[col*c.K/16+k]) {
				return fmt.Sprintf("activations differ: column %d group %d sum GPU %#08x simulator %#08x", col, k, math.Float32bits(g.Sum16[col*c.K/16+k]), math.Float32bits(s))
			}
		}
	}
	return "the converted activations (halves, exponents, sums) agree: the difference is in the dot product"
}
