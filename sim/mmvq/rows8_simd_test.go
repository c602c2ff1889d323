//go:build goexperiment.simd && amd64

package mmvq

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"simd/archsimd"
	"testing"
	"unsafe"

	"github.com/ggsim/ggsim/f16"
	"github.com/ggsim/ggsim/quant"
	"github.com/ggsim/ggsim/sim"
	"github.com/ggsim/ggsim/sim/q8"
)

// scalarToo runs f with the 8-row path off and on and returns both results; ok is false
// when both refuse the shape as a write race (ErrWriteRace).
func scalarToo(t *testing.T, f func() ([]float32, error)) (scalar, rows8 []float32, ok bool) {
	t.Helper()
	useRows8 = false
	scalar, err := f()
	useRows8 = true
	rows8, err2 := f()
	if errors.Is(err, ErrWriteRace) && errors.Is(err2, ErrWriteRace) {
		return nil, nil, false
	}
	if err != nil || err2 != nil {
		t.Fatal(err, err2)
	}
	return scalar, rows8, true
}

// rows8Types are the types with an 8-row kernel; halfAt gives the byte offsets of each
// block's float16 scales (d, and dmin for Q4_K) that edgeWeights overwrites.
var rows8Types = []struct {
	t      quant.Type
	halfAt []int
}{
	{quant.Q4_K, []int{0, 2}},
	{quant.Q6_K, []int{208}},
	{quant.Q8_0, []int{0}},
	{quant.IQ4_XS, []int{0}},
	{quant.Q5_K, []int{0, 2}},
	{quant.Q4_0, []int{0}},
	{quant.Q5_0, []int{0}},
	{quant.Q4_1, []int{0, 2}},
	{quant.Q5_1, []int{0, 2}},
}

// edgeWeights is weights() of type t with a quarter of the blocks' scales (the halves at
// halfAt) set to zero, subnormal, tiny, huge, infinite and NaN halves, so that the 8-lane
// functions take their scalar lanes (flushed products, Inf, NaN).
func edgeWeights(t *testing.T, ty quant.Type, halfAt []int, k, n int, rng *rand.Rand) []byte {
	x, _ := weights(t, ty, k, n, rng)
	rs, _ := ty.RowSize(int64(k))
	bs, _ := ty.RowSize(int64(ty.BlockSize()))
	halves := []f16.Half{0x0000, 0x8000, 0x0001, 0x03ff, 0x0400, 0x7bff, 0xfbff, 0x1000, 0x7c00, 0xfc00, 0x7e01}
	for r := 0; r < n; r++ {
		for b := 0; b < k/ty.BlockSize(); b++ {
			if rng.IntN(4) != 0 {
				continue
			}
			o := r*int(rs) + b*int(bs) + halfAt[rng.IntN(len(halfAt))]
			h := halves[rng.IntN(len(halves))]
			x[o], x[o+1] = byte(h), byte(h>>8)
		}
	}
	return x
}

// The 8-row path gives the scalar path's bits: MUL_MAT with 1..8 columns (row counts
// that leave short groups), MUL_MAT_ID with one token (rows read through ids) and with
// 2..8 tokens, ordinary and edge-case weights and activations (seed printed).
func TestRows8MatchesScalar(t *testing.T) {
	if !sim.Vec8 {
		t.Skip("SKIP (not a pass): this CPU lacks AVX2 or FMA")
	}
	dev := h200(t)
	const seed = 1212
	t.Logf("seed %d", seed)
	for _, tc := range rows8Types {
		if rows8For(tc.t, 0, 1) == nil {
			t.Fatalf("no 8-row kernel for %v", tc.t)
		}
		rng := rand.New(rand.NewPCG(seed, 1))
		ty := tc.t
		races := 0
		for _, k := range []int{256, 1024, 4096} {
			for _, n := range []int{1, 13, 64} {
				x := edgeWeights(t, ty, tc.halfAt, k, n, rng)
				for _, m := range []int{1, 2, 5, 8} {
					y := acts(k, m, rng)
					if m == 5 {
						for i := range y {
							y[i] *= float32(math.Ldexp(1, rng.IntN(200)-100))
						}
					}
					s, v, _ := scalarToo(t, func() ([]float32, error) { return MulMat(dev, ty, x, k, n, y, m) })
					sameBits(t, fmt.Sprintf("%v MulMat k=%d n=%d m=%d", ty, k, n, m), s, v)
				}
				const E, U = 3, 2
				as := edgeWeights(t, ty, tc.halfAt, k, n*E, rng)
				for _, T := range []int{1, 3, 8} {
					b := acts(k, T, rng)
					ids := make([]int32, U*T)
					for tk := 0; tk < T; tk++ {
						ids[tk*U], ids[tk*U+1] = int32(tk%E), int32((tk+1)%E)
					}
					s, v, ok := scalarToo(t, func() ([]float32, error) { return MulMatID(dev, ty, as, k, n, E, b, 1, T, ids, U) })
					if !ok {
						races++
						continue
					}
					sameBits(t, fmt.Sprintf("%v MulMatID k=%d n=%d T=%d", ty, k, n, T), s, v)
				}
			}
		}
		t.Logf("%v: %d MUL_MAT_ID shapes refused as write races by both paths", ty, races)
	}
}

// The SIMD paths' bits do not depend on GOMAXPROCS: edge-case weights (mostly the
// checked 8-row path) and plain ones (the thread-lane path).
func TestRows8GOMAXPROCS(t *testing.T) {
	if !sim.Vec8 {
		t.Skip("SKIP (not a pass): this CPU lacks AVX2 or FMA")
	}
	dev := h200(t)
	for _, tc := range rows8Types {
		rng := rand.New(rand.NewPCG(7, 7))
		const k, n, m = 2048, 203, 3
		plain, _ := weights(t, tc.t, k, n, rng)
		for _, x := range [][]byte{edgeWeights(t, tc.t, tc.halfAt, k, n, rng), plain} {
			y := acts(k, m, rng)
			var outs [2][]float32
			for i, procs := range []int{1, 2} {
				old := runtime.GOMAXPROCS(procs)
				var err error
				outs[i], err = MulMat(dev, tc.t, x, k, n, y, m)
				runtime.GOMAXPROCS(old)
				if err != nil {
					t.Fatal(err)
				}
			}
			sameBits(t, fmt.Sprintf("%v GOMAXPROCS 1 vs 2", tc.t), outs[0], outs[1])
		}
	}
}

// rows8Lanes makes each type's lanes value (the kernels of rows8Kernels).
var rows8Lanes = map[quant.Type]func() lanes8{
	quant.Q4_K:   func() lanes8 { return new(q4KLanes) },
	quant.Q6_K:   func() lanes8 { return new(q6KLanes) },
	quant.Q8_0:   func() lanes8 { return new(q80Lanes) },
	quant.IQ4_XS: func() lanes8 { return new(iq4XSLanes) },
	quant.Q5_K:   func() lanes8 { return new(q5KLanes) },
	quant.Q4_0:   func() lanes8 { return new(q40Lanes) },
	quant.Q5_0:   func() lanes8 { return new(q50Lanes) },
	quant.Q4_1:   func() lanes8 { return new(q41Lanes) },
	quant.Q5_1:   func() lanes8 { return new(q51Lanes) },
}

// Each lane of every 8-row dot (prep, load, then dot) is the scalar vec_dot with its
// accumulation, bit for bit, before any reduction: every block and iqs of eight edge
// weight rows, activations with zero, subnormal, infinite and NaN scales, running sums
// (tmp) of every kind the scalar path produces (zero, normal, Inf, NaN). Through the
// whole kernel the final adds canonicalise NaN, so a dot whose scalar recomputation of
// rejected lanes (src.done) were dropped would still pass TestRows8MatchesScalar with
// half-precision scales (their products never reach the flush range); it fails here, on
// the NaN bits of Inf-Inf and 0*Inf (seed printed).
func TestRows8Dots(t *testing.T) {
	if !sim.Vec8 {
		t.Skip("SKIP (not a pass): this CPU lacks AVX2 or FMA")
	}
	const seed = 1213
	t.Logf("seed %d", seed)
	halves := []f16.Half{0x0000, 0x8000, 0x0001, 0x03ff, 0x0400, 0x7bff, 0xfbff, 0x1000, 0x7c00, 0xfc00, 0x7e01}
	tmps := []float32{0, float32(math.Copysign(0, -1)), 0x1p-126, -0x1.8p-126, 1.5, -3.25e7, 3e38, float32(math.Inf(1)), float32(math.Inf(-1)), math.Float32frombits(sim.CanonicalNaN32)}
	for _, tc := range rows8Types {
		newW := rows8Lanes[tc.t]
		if newW == nil {
			t.Fatalf("no lanes type for %v", tc.t)
		}
		rng := rand.New(rand.NewPCG(seed, uint64(tc.t)))
		tk := mustKernel(tc.t)
		const k = 1024
		x := edgeWeights(t, tc.t, tc.halfAt, k, 8, rng)
		rs, _ := tc.t.RowSize(k)
		var rows [8][]byte
		for q := range rows {
			rows[q] = x[q*int(rs) : (q+1)*int(rs)]
		}
		y, err := q8.QuantizeQ8_1(acts(k, 1, rng), k, 1)
		if err != nil {
			t.Fatal(err)
		}
		for i := range y {
			if rng.IntN(4) == 0 {
				y[i].D = halves[rng.IntN(len(halves))]
			}
			if rng.IntN(4) == 0 {
				y[i].S = halves[rng.IntN(len(halves))]
			}
		}
		w := newW()
		if pp, ok := w.(prepper); ok {
			pp.prep(&rows, k/tk.QK)
		}
		if cp, ok := w.(colPrepper); ok {
			cp.cols([][]q8.Block{y})
		}
		ybl := tk.QK / 32
		var tmp, got [8]float32
		for kbx := 0; kbx < k/tk.QK; kbx++ {
			for iqs := 0; iqs < tk.QI; iqs += tk.VDR {
				w.load(&rows, kbx, iqs)
				for q := range tmp {
					tmp[q] = tmps[rng.IntN(len(tmps))]
					if rng.IntN(2) == 0 {
						tmp[q] = float32(rng.NormFloat64())
					}
				}
				w.dot(archsimd.LoadFloat32x8(&tmp), iqs, 0, y[kbx*ybl:]).Store(&got)
				for q := range got {
					want := tk.Dot(tmp[q], rows[q], kbx, iqs, y[kbx*ybl:])
					if math.Float32bits(got[q]) != math.Float32bits(want) {
						t.Fatalf("%v kbx %d iqs %d lane %d, tmp %v: got %#08x, want %#08x", tc.t, kbx, iqs, q, tmp[q], math.Float32bits(got[q]), math.Float32bits(want))
					}
				}
			}
		}
	}
}

// The thread-lane kernels (Q4_K, Q5_K, Q6_K, Q8_0, IQ4_XS, Q4_0, Q5_0, Q4_1, Q5_1) give
// the scalar path's bits where they run without lane checks (finite halves: zero,
// ±subnormal, the smallest normal, the largest, on a quarter of the weight blocks;
// activations from 2^-60 to 2^12, so d8 from subnormal halves to large ones) and where
// they hand a group to the checked 8-row path (an Inf or NaN weight scale, activations
// whose d8 overflows the half, a q8_1 value of -128, a binary16 product that overflows):
// K with a block count that is and is not a multiple of the blocks per iteration (and not
// a multiple of 2 or 4, for the vectors of Q8_0's and the other legacy types' blocks),
// row counts with short groups, 1..8 columns, MUL_MAT_ID with 1 token and with 3 and 8
// (the MoE kernel's 32 threads per row). Both sides must be taken (counted), or the test
// fails (seed printed).
func TestThreads8MatchesScalar(t *testing.T) {
	if !sim.Vec8 {
		t.Skip("SKIP (not a pass): this CPU lacks AVX2 or FMA")
	}
	t.Run("lanes=8", func(t *testing.T) {
		useLanes16 = false
		defer func() { useLanes16 = true }()
		threads8MatchesScalar(t, nil)
	})
	t.Run("lanes=16", func(t *testing.T) {
		if !archsimd.X86.AVX512() {
			t.Skip("SKIP (not a pass): this CPU lacks AVX-512; the 16-lane Q4_K kernel is untested here")
		}
		n0 := threads16Groups.Load()
		threads8MatchesScalar(t, func(ty quant.Type) bool { return ty == quant.Q4_K })
		if n := threads16Groups.Load() - n0; n == 0 {
			t.Fatal("the 16-lane kernel took no row group")
		} else {
			t.Logf("16-lane kernel: %d row groups", n)
		}
	})
}

// threads8MatchesScalar is TestThreads8MatchesScalar on the types only accepts (nil: all).
func threads8MatchesScalar(t *testing.T, only func(quant.Type) bool) {
	dev := h200(t)
	const seed = 1214
	t.Logf("seed %d", seed)
	finite := []f16.Half{0x0000, 0x8000, 0x0001, 0x8001, 0x03ff, 0x0400, 0x7bff, 0xfbff, 0x1000}
	nonFinite := []f16.Half{0x7c00, 0xfc00, 0x7e01}
	for _, tc := range []struct {
		ty     quant.Type
		halfAt []int
		ks     []int
	}{
		{quant.Q4_K, []int{0, 2}, []int{256, 1024, 2304, 4096}},
		{quant.Q8_0, []int{0}, []int{32, 96, 1024, 1056, 4096}},
		{quant.Q6_K, []int{208}, []int{256, 1024, 2304, 4096}},
		{quant.IQ4_XS, []int{0}, []int{256, 1024, 2304, 4096}},
		{quant.Q5_K, []int{0, 2}, []int{256, 1024, 2304, 4096}},
		{quant.Q4_0, []int{0}, []int{32, 96, 160, 1024, 4096}},
		{quant.Q5_0, []int{0}, []int{32, 96, 160, 1024, 4096}},
		{quant.Q4_1, []int{0, 2}, []int{32, 96, 160, 1024, 4096}},
		{quant.Q5_1, []int{0, 2}, []int{32, 96, 160, 1024, 4096}},
	} {
		if only != nil && !only(tc.ty) {
			continue
		}
		rng := rand.New(rand.NewPCG(seed, uint64(tc.ty)))
		ty := tc.ty
		bs, _ := ty.RowSize(int64(ty.BlockSize()))
		f0, c0 := threads8Groups.fast.Load(), threads8Groups.checked.Load()
		for _, k := range tc.ks {
			for _, n := range []int{1, 13, 64} {
				x, _ := weights(t, ty, k, n, rng)
				for o := 0; o < len(x); o += int(bs) {
					if rng.IntN(4) == 0 {
						h := finite[rng.IntN(len(finite))]
						at := o + tc.halfAt[rng.IntN(len(tc.halfAt))]
						x[at], x[at+1] = byte(h), byte(h>>8)
					}
				}
				xbad := append([]byte(nil), x...)
				at := int(bs)*rng.IntN(len(x)/int(bs)) + tc.halfAt[rng.IntN(len(tc.halfAt))]
				h := nonFinite[rng.IntN(len(nonFinite))]
				xbad[at], xbad[at+1] = byte(h), byte(h>>8)
				for m := 1; m <= 8; m++ {
					y := acts(k, m, rng)
					for j := 0; j < m; j++ {
						sc := float32(math.Ldexp(1, rng.IntN(72)-60))
						if rng.IntN(8) == 0 {
							sc = 1e7 // d8 = amax/127 overflows the half (above 65504) for amax ≥ 0.84: Inf
						}
						for i := j * k; i < (j+1)*k; i++ {
							y[i] *= sc
						}
					}
					for _, xx := range [][]byte{x, xbad} {
						s, v, _ := scalarToo(t, func() ([]float32, error) { return MulMat(dev, ty, xx, k, n, y, m) })
						sameBits(t, fmt.Sprintf("%v MulMat k=%d n=%d m=%d", ty, k, n, m), s, v)
					}
					// a q8_1 value of -128 (y carrying x's sign would wrap)
					yq, err := q8.QuantizeQ8_1(y, k, m)
					if err != nil {
						t.Fatal(err)
					}
					yq[rng.IntN(len(yq))].Qs[rng.IntN(32)] = -128
					s, v, _ := scalarToo(t, func() ([]float32, error) { return MulMatQ8(dev, ty, x, k, n, yq, m, nil) })
					sameBits(t, fmt.Sprintf("%v MulMatQ8 with -128 k=%d n=%d m=%d", ty, k, n, m), s, v)
				}
				// MUL_MAT_ID, one token (rows through ids) and 3 or 8 tokens (mul_mat_vec_q_moe,
				// 32 threads per row): experts x, xbad, x, so some slots take each side
				const E, U = 3, 2
				as := append(append(append([]byte(nil), x...), xbad...), x...)
				for _, T := range []int{1, 3, 8} {
					b := acts(k, T, rng)
					ids := make([]int32, U*T)
					for tk := range T {
						ids[tk*U], ids[tk*U+1] = int32(tk%E), int32((tk+1)%E)
					}
					s, v, ok := scalarToo(t, func() ([]float32, error) { return MulMatID(dev, ty, as, k, n, E, b, 1, T, ids, U) })
					if ok {
						sameBits(t, fmt.Sprintf("%v MulMatID k=%d n=%d T=%d", ty, k, n, T), s, v)
					}
				}
			}
		}
		fast, checked := threads8Groups.fast.Load()-f0, threads8Groups.checked.Load()-c0
		t.Logf("%v: row groups: %d without lane checks, %d given to the checked 8-row path", ty, fast, checked)
		if fast == 0 || checked == 0 {
			t.Fatalf("%v: both sides must be taken: %d fast, %d checked", ty, fast, checked)
		}
	}
}

// The block offsets the thread-lane kernels read (their constants: q4KThreads,
// q80Threads, q40Threads, q50Threads, q41Threads, q51Threads) are those of quant's block
// views.
func TestThreads8Layouts(t *testing.T) {
	off := func(base, sub []byte) int {
		return int(uintptr(unsafe.Pointer(&sub[0])) - uintptr(unsafe.Pointer(&base[0])))
	}
	half := func(b []byte, o int) f16.Half {
		b[o], b[o+1] = 0x34, 0x12
		return 0x1234
	}
	for _, tc := range []struct {
		ty                                     quant.Type
		size, dOff, d2Off, scOff, qhOff, qsOff int
	}{
		{quant.Q4_K, 144, 0, 2, 4, -1, 16},
		{quant.Q8_0, 34, 0, -1, -1, -1, 2},
		{quant.Q4_0, 18, 0, -1, -1, -1, 2},
		{quant.Q5_0, 22, 0, -1, -1, 2, 6},
		{quant.Q4_1, 20, 0, 2, -1, -1, 4},
		{quant.Q5_1, 24, 0, 2, -1, 4, 8},
	} {
		if got := tc.ty.TypeSize(); got != tc.size {
			t.Errorf("%v: block of %d bytes, the kernel reads %d", tc.ty, got, tc.size)
		}
		b := make([]byte, tc.size)
		var d, d2 f16.Half
		var qs, sc []byte
		var qh uint32
		want := half(b, tc.dOff)
		switch tc.ty {
		case quant.Q4_K:
			want2 := half(b, tc.d2Off)
			v := quant.Q4_KBlock(b, 0)
			d, d2 = v.DM()
			qs, sc = v.Qs(), v.Scales()
			if d2 != want2 || off(b, sc) != tc.scOff {
				t.Errorf("%v: dmin or scales elsewhere", tc.ty)
			}
		case quant.Q8_0:
			v := quant.Q8_0Block(b, 0)
			d, qs = v.D(), v.Qs()
		case quant.Q4_0:
			v := quant.Q4_0Block(b, 0)
			d, qs = v.D(), v.Qs()
		case quant.Q5_0:
			b[tc.qhOff], b[tc.qhOff+3] = 0x5a, 0xa5
			v := quant.Q5_0Block(b, 0)
			d, qs, qh = v.D(), v.Qs(), v.Qh()
			if qh != 0xa500005a {
				t.Errorf("%v: qh elsewhere (%#x)", tc.ty, qh)
			}
		case quant.Q4_1:
			want2 := half(b, tc.d2Off)
			v := quant.Q4_1Block(b, 0)
			d, d2, qs = v.D(), v.M(), v.Qs()
			if d2 != want2 {
				t.Errorf("%v: m elsewhere", tc.ty)
			}
		case quant.Q5_1:
			want2 := half(b, tc.d2Off)
			b[tc.qhOff], b[tc.qhOff+3] = 0x5a, 0xa5
			v := quant.Q5_1Block(b, 0)
			d, d2, qs, qh = v.D(), v.M(), v.Qs(), v.Qh()
			if d2 != want2 || qh != 0xa500005a {
				t.Errorf("%v: m or qh elsewhere", tc.ty)
			}
		}
		if d != want || off(b, qs) != tc.qsOff || len(qs) != tc.size-tc.qsOff {
			t.Errorf("%v: d %#x (want %#x), qs at %d (kernel: %d)", tc.ty, d, want, off(b, qs), tc.qsOff)
		}
	}
}

// The offsets of Q5_K, Q6_K and IQ4_XS that q45KThreads, q6KThreads and iq4XSThreads
// read are those of quant's views (see TestThreads8Layouts).
func TestThreads8LayoutsK(t *testing.T) {
	off := func(base, sub []byte) int {
		return int(uintptr(unsafe.Pointer(&sub[0])) - uintptr(unsafe.Pointer(&base[0])))
	}
	b := make([]byte, 210)
	b[0], b[1], b[2], b[3] = 0x01, 0x02, 0x03, 0x04
	b[208], b[209] = 0x05, 0x06
	q5 := quant.Q5_KBlock(b[:176], 0)
	d, dmin := q5.DM()
	q6 := quant.Q6_KBlock(b, 0)
	iq := quant.IQ4_XSBlock(b[:136], 0)
	for _, c := range []struct {
		what      string
		got, want int
	}{
		{"q5_K size", quant.Q5_K.TypeSize(), 176},
		{"q5_K d", int(d), 0x0201},
		{"q5_K dmin", int(dmin), 0x0403},
		{"q5_K scales", off(b, q5.Scales()), 4},
		{"q5_K qh", off(b, q5.Qh()), 16},
		{"q5_K qs", off(b, q5.Qs()), 48},
		{"q6_K size", quant.Q6_K.TypeSize(), 210},
		{"q6_K ql", off(b, q6.Ql()), 0},
		{"q6_K qh", off(b, q6.Qh()), 128},
		{"q6_K scales", off(b, q6.Scales()), 192},
		{"q6_K d", int(q6.D()), 0x0605},
		{"iq4_xs size", quant.IQ4_XS.TypeSize(), 136},
		{"iq4_xs d", int(iq.D()), 0x0201},
		{"iq4_xs scales_h", int(iq.ScalesH()), 0x0403},
		{"iq4_xs scales_l", off(b, iq.ScalesL()), 4},
		{"iq4_xs qs", off(b, iq.Qs()), 8},
	} {
		if c.got != c.want {
			t.Errorf("%s: quant has %#x, the kernel reads %#x", c.what, c.got, c.want)
		}
	}
}
