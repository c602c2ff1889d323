//go:build cuda && cgo

package cuda

import (
	"errors"
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
)

// TestFP16PathMatchesSimulator runs property-generated cases through the fp16 path's CUDA
// kernels (kernels/fp16path.cu) and through the simulator (package fp16path) in the same
// process and compares math.Float32bits of every output. GGSIM_FP16_CASES sets the number
// of cases (default 400; the device run uses 12000), GGSIM_FP16_SEED the seed (default:
// the clock; printed either way). Case i draws from PCG(seed, i), so one case can be
// replayed with GGSIM_FP16_SEED=s GGSIM_FP16_ONLY=i.
//
// Every case draws a type, a column count (1 for the types the simulator runs at batch 1
// only; 1..8 where it models more: fp16MaxCols), K, N, rows per warp, a weight kind
// (random bytes and scales; the largest codes and scales) and an activation kind (see
// fp16ActKinds: normal, subnormal blocks, tiny blocks clamped at 2^127, blocks at the
// 2^15 rounding edge, all at the largest prescaled value, huge). It reports the count per
// type × columns × variant and the first mismatch in detail.
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
	maxCols := fp16MaxCols(t)
	report(t, "seed %d (GGSIM_FP16_SEED=%d to replay), cases %d..%d, device %s", seed, seed, first, last-1, ctx.Info())
	report(t, "columns the simulator models per type: %v", maxCols)

	var (
		mu       sync.Mutex
		stats    = map[string]*[2]int{} // key -> {cases, cases with a mismatch}
		outputs  int64
		bad      int
		firstBad string
		simTime  atomic.Int64
		gpuTime  atomic.Int64
		next     atomic.Int64
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
				c := drawFP16Case(rand.New(rand.NewPCG(seed, uint64(i))), maxCols)
				t0 := time.Now()
				want, err := fp16path.MulMat(c.t, c.x, c.K, c.N, c.y, c.M, &fp16path.Options{RowsPerWarp: c.R})
				t1 := time.Now()
				simTime.Add(int64(t1.Sub(t0)))
				if err != nil {
					t.Errorf("case %d (%s): simulator: %v", i, c, err)
					continue
				}
				got, err := p.MulMat(c.t, c.x, c.K, c.N, c.y, c.M, &fp16path.Options{RowsPerWarp: c.R})
				gpuTime.Add(int64(time.Since(t1)))
				if err != nil {
					t.Errorf("case %d (%s): GPU: %v", i, c, err)
					continue
				}
				mis, at := 0, -1
				for k := range want {
					if math.Float32bits(got[k]) != math.Float32bits(want[k]) {
						if at < 0 {
							at = k
						}
						mis++
					}
				}
				mu.Lock()
				key := fmt.Sprintf("%-7v cols=%d %s", c.t, c.M, c.variant())
				s := stats[key]
				if s == nil {
					s = new([2]int)
					stats[key] = s
				}
				s[0]++
				outputs += int64(len(want))
				if mis > 0 {
					s[1]++
					bad++
					if firstBad == "" {
						col, row := at/c.N, at%c.N
						firstBad = fmt.Sprintf("case %d (%s): %d of %d outputs differ; first at row %d col %d: got %#08x (%g) want %#08x (%g)\n%s",
							i, c, mis, len(want), row, col, math.Float32bits(got[at]), got[at], math.Float32bits(want[at]), want[at],
							fp16ActDiff(p, c))
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
		fmt.Fprintf(&b, "\n  %-40s %6d cases %6d mismatched", k, stats[k][0], stats[k][1])
	}
	report(t, "%d cases, %d outputs, %d cases with a mismatch, in %v (simulator %v, GPU %v summed over %d workers); per type x columns x variant:%s",
		last-first, outputs, bad, elapsed.Round(time.Millisecond), time.Duration(simTime.Load()).Round(time.Millisecond),
		time.Duration(gpuTime.Load()).Round(time.Millisecond), runtime.GOMAXPROCS(0), b.String())
	if bad > 0 {
		t.Errorf("%d of %d cases differ from the simulator; the first: %s", bad, last-first, firstBad)
	}
}

// fp16MaxCols returns the largest column count the simulator models for each type:
// 1..8 where fp16path.MulMat accepts 8 columns, 1 where it answers ErrUnsupported.
func fp16MaxCols(t *testing.T) map[quant.Type]int {
	m := map[quant.Type]int{}
	for _, ty := range fp16path.Types() {
		bs, ok := fp16BlockValues[ty]
		if !ok {
			t.Fatalf("no block size for %v", ty)
		}
		rs, err := ty.RowSize(int64(bs))
		if err != nil {
			t.Fatal(err)
		}
		x := make([]byte, rs)
		_, err = fp16path.MulMat(ty, x, bs, 1, make([]float32, 8*bs), 8, nil)
		switch {
		case err == nil:
			m[ty] = 8
		case errors.Is(err, errors.ErrUnsupported):
			m[ty] = 1
		default:
			t.Fatalf("fp16path.MulMat(%v, 8 columns): %v", ty, err)
		}
	}
	return m
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
	t          quant.Type
	K, N, M, R int
	wKind      string
	aKind      string
	x          []byte
	y          []float32
}

func (c *fp16Case) variant() string { return c.wKind + "/" + c.aKind }

func (c *fp16Case) String() string {
	return fmt.Sprintf("%v K=%d N=%d cols=%d rows/warp=%d weights=%s activations=%s", c.t, c.K, c.N, c.M, c.R, c.wKind, c.aKind)
}

// fp16ActKinds are the activation generators; each fills one 32-value block.
var fp16ActKinds = []string{"normal", "subnormal", "tiny", "edge", "maxprescaled", "huge", "mixed"}

func drawFP16Case(r *rand.Rand, maxCols map[quant.Type]int) *fp16Case {
	types := fp16path.Types()
	c := &fp16Case{t: types[r.IntN(len(types))]}
	c.M = 1
	if mc := maxCols[c.t]; mc > 1 {
		c.M = 1 + r.IntN(mc)
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
	// but a finite output tells more): |W| <= 2^(dExp+12), |y| <= 2^40 (2^100 for huge),
	// K <= 2^12.
	dExp := 15
	if c.aKind == "huge" {
		dExp = -12
	}
	rs, _ := c.t.RowSize(int64(c.K))
	c.x = make([]byte, int(rs)*c.N)
	fillFP16Weights(r, c.t, c.x, c.wKind, dExp)
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
