package fp16path_test

import (
	"errors"
	"math"
	"math/bits"
	"math/rand/v2"
	"testing"

	"pgregory.net/rapid"

	"github.com/ggsim/ggsim/f16"
	"github.com/ggsim/ggsim/fp16path"
	"github.com/ggsim/ggsim/quant"
	"github.com/ggsim/ggsim/sim"
)

// TestUnpackExact: the PRMT unpack puts code c into the half bit pattern c, and that half
// is c·2^-24 exactly for every c < 2048 (all codes the path uses are at most 255); 2048
// is the first pattern that is not (it is 2^-13, not 2048·2^-24 = 2^-13... but 2049 is not
// 2049·2^-24).
func TestUnpackExact(t *testing.T) {
	for c := 0; c < 2048; c++ {
		if got, want := f16.Half(c).ToFloat32(), float32(c)*0x1p-24; got != want {
			t.Fatalf("half bits %#x = %g, want %d·2^-24 = %g", c, got, c, want)
		}
	}
	if f16.Half(2049).ToFloat32() == 2049*0x1p-24 {
		t.Fatal("bit pattern 2049 should not be 2049·2^-24 (the identity stops at 2048)")
	}
	var codes [16]uint8
	for k := range codes {
		codes[k] = uint8(17*k + 3)
	}
	w := fp16path.Unpack(codes)
	for p := 0; p < 8; p++ {
		if w[p].Lo != f16.Half(codes[2*p]) || w[p].Hi != f16.Half(codes[2*p+1]) {
			t.Fatalf("pair %d = %#08x, want codes %d, %d", p, w[p].Bits(), codes[2*p], codes[2*p+1])
		}
	}
}

// TestGroupsMatchDequantize: every weight the path uses, D·(c - off) or D·c - Mmin
// evaluated as ggml's dequantize_row_* rounds it, equals quant.DequantizeRow bit for bit
// (so the codes, scales, mins and offsets are read from the right bits).
func TestGroupsMatchDequantize(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 7))
	const K, N = 512, 4
	for _, typ := range fp16path.Types() {
		x, _ := realistic(r, typ, K, N)
		rs := len(x) / N
		qk := typ.BlockSize()
		bs := rs / (K / qk)
		want := make([]float32, K)
		for i := 0; i < N; i++ {
			row := x[i*rs : (i+1)*rs]
			if err := quant.DequantizeRow(typ, row, want); err != nil {
				t.Fatal(err)
			}
			for g := 0; g < K/16; g++ {
				blk := g * 16 / qk
				codes, d, m, off, isMin := fp16path.GroupOf(typ, row[blk*bs:(blk+1)*bs], g%(qk/16))
				for k, c := range codes {
					var v float32
					if isMin {
						v = float32(d*float32(c)) - m
					} else {
						v = float32(d * float32(int(c)-off))
					}
					if math.Float32bits(v) != math.Float32bits(want[16*g+k]) {
						t.Fatalf("%v row %d value %d: code %d gives %g, dequantize %g", typ, i, 16*g+k, c, v, want[16*g+k])
					}
				}
			}
		}
	}
}

// drawBlock draws 32 activations, often at the edges: a block max just below, at or just
// above a power of two, at the rounding boundary 32760·2^-e of the 2^15 test, tiny and
// huge magnitudes, zeros.
func drawBlock(t *rapid.T) []float32 {
	e := rapid.IntRange(-126, 116).Draw(t, "exp")
	var amax float32
	switch rapid.IntRange(0, 4).Draw(t, "kind") {
	case 0:
		amax = float32(math.Ldexp(1, e))
	case 1:
		amax = math.Nextafter32(float32(math.Ldexp(1, e)), 0)
	case 2: // the midpoint 32760 and its neighbours, scaled
		amax = float32(math.Ldexp(32760+float64(rapid.IntRange(-2, 2).Draw(t, "d"))/64, e-15))
	case 3:
		amax = float32(math.Ldexp(1+rapid.Float64Range(0, 1).Draw(t, "f"), e))
	default:
		amax = 0
	}
	y := make([]float32, 32)
	for i := range y {
		switch rapid.IntRange(0, 3).Draw(t, "v") {
		case 0:
			y[i] = amax
		case 1:
			y[i] = -amax
		case 2:
			y[i] = 0
		default:
			y[i] = amax * float32(rapid.Float64Range(-1, 1).Draw(t, "u"))
		}
	}
	return y
}

// TestConvertActivations checks step 1 at the edges: every half is RN16 of the exact
// product y·2^e_b (no rounding before the conversion), |h| <= 32752 < 2^15, the block max
// lands in [2^13, 2^15) unless the block is zero or the prescale is clamped at 2^127, and
// Sum16 is the exact sum of the halves rounded once. rapid prints the seed of a failure.
func TestConvertActivations(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		y := append(drawBlock(t), drawBlock(t)...)
		a, err := fp16path.ConvertActivations(y)
		if err != nil {
			t.Fatal(err)
		}
		for b := 0; b < 2; b++ {
			e := a.Exp[b]
			if e < fp16path.EMin || e > fp16path.EMax {
				t.Fatalf("block %d: exponent %d outside [%d, %d]", b, e, fp16path.EMin, fp16path.EMax)
			}
			var hmax float64
			for k := 32 * b; k < 32*b+32; k++ {
				exact := math.Ldexp(float64(sim.FTZ(y[k])), e)
				if math.Abs(exact) < 0x1p-126 {
					// FMUL.FTZ flushes the product; its half would be ±0 anyway
					// (|exact| < 2^-25 rounds to zero in binary16).
					exact = math.Copysign(0, exact)
				}
				if float64(float32(exact)) != exact {
					t.Fatalf("value %d: y·2^e = %g is not exact in float32", k, exact)
				}
				if want := f16.FromFloat32(float32(exact)); a.H[k] != want {
					t.Fatalf("value %d: half %#04x, want RN16(%g) = %#04x", k, a.H[k], exact, want)
				}
				hmax = math.Max(hmax, math.Abs(float64(a.H[k].ToFloat32())))
			}
			if hmax > fp16path.MaxPrescaled {
				t.Fatalf("block %d: max |h| = %g above %d", b, hmax, fp16path.MaxPrescaled)
			}
			if hmax != 0 && e < fp16path.EMax && hmax < 1<<13 {
				t.Fatalf("block %d: max |h| = %g below 2^13 with e = %d (precision wasted)", b, hmax, e)
			}
		}
		for g := 0; g < 4; g++ {
			var s float64
			for _, h := range a.H[16*g : 16*g+16] {
				s += float64(h.ToFloat32())
			}
			if a.Sum16[g] != float32(s) {
				t.Fatalf("Sum16[%d] = %g, want RN32(%g)", g, a.Sum16[g], s)
			}
		}
	})
}

// TestNoOverflowAtEdges checks the overflow claim with the path's HFMA2 loop at the edges:
// codes at 0, at the type's maximum or anywhere below, activations at ±32752 (the largest
// prescaled half) or anywhere below, 16 terms. Every partial sum is finite and at most
// 16·255·32752·2^-24 < 8 (plus rounding) in magnitude, and each half of the accumulator is
// within its rounding bound of the exact sum: one binary16 rounding per step, at most
// max(2^-11·|partial|, 2^-25). rapid prints the seed of a failure.
func TestNoOverflowAtEdges(t *testing.T) {
	types := fp16path.Types()
	rapid.Check(t, func(t *rapid.T) {
		typ := rapid.SampledFrom(types).Draw(t, "type")
		mc := fp16path.MaxCode(typ)
		var codes [16]uint8
		h := make([]f16.Half, 16)
		for k := range codes {
			switch rapid.IntRange(0, 2).Draw(t, "c") {
			case 0:
				codes[k] = uint8(mc)
			case 1:
				codes[k] = 0
			default:
				codes[k] = uint8(rapid.IntRange(0, mc).Draw(t, "code"))
			}
			v := float32(fp16path.MaxPrescaled)
			if rapid.Bool().Draw(t, "any") {
				v = float32(rapid.Float64Range(0, fp16path.MaxPrescaled).Draw(t, "y"))
			}
			if rapid.Bool().Draw(t, "neg") {
				v = -v
			}
			h[k] = f16.FromFloat32(v)
		}
		acc := fp16path.HalfDot(fp16path.Unpack(codes), h)
		for par, got := range []f16.Half{acc.Lo, acc.Hi} {
			var exact, bound float64
			p := f16.Half(0)
			for i := par; i < 16; i += 2 {
				exact += float64(codes[i]) * 0x1p-24 * float64(h[i].ToFloat32())
				p = f16.FMA(f16.Half(codes[i]), h[i], p)
				bound += math.Max(0x1p-11*math.Abs(float64(p.ToFloat32())), 0x1p-25)
				if p.IsInf() || p.IsNaN() || math.Abs(float64(p.ToFloat32())) >= 8 {
					t.Fatalf("partial sum %g of %v codes out of range", p.ToFloat32(), typ)
				}
			}
			if p != got {
				t.Fatalf("HalfDot half %d = %#04x, step by step %#04x", par, got, p)
			}
			if d := math.Abs(float64(got.ToFloat32()) - exact); d > bound {
				t.Fatalf("half %d: |%g - exact %g| = %g above the rounding bound %g", par, got.ToFloat32(), exact, d, bound)
			}
		}
	})
	// The extreme: 16 terms of 255·2^-24 · 32752.
	var codes [16]uint8
	h := make([]f16.Half, 16)
	for k := range codes {
		codes[k], h[k] = 255, f16.FromFloat32(fp16path.MaxPrescaled)
	}
	acc := fp16path.HalfDot(fp16path.Unpack(codes), h)
	if s := float64(acc.Lo.ToFloat32()) + float64(acc.Hi.ToFloat32()); math.Abs(s-16*255*32752*0x1p-24) > 16*0x1p-11*4 {
		t.Fatalf("all-max group sums to %g, want about %g", s, 16*255*32752*0x1p-24)
	}
}

// productExact is the characterisation in doc.go: c·2^-24 · h (c > 0, h a finite nonzero
// half) is a binary16 exactly when, writing the exact product as o·2^z with o odd, o has at
// most 11 bits and z >= -24 (and the product is at most 65504).
func productExact(c int, h f16.Half) bool {
	p := float64(c) * 0x1p-24 * float64(h.ToFloat32()) // exact in float64
	if math.Abs(p) > 65504 {
		return false
	}
	frac, exp := math.Frexp(math.Abs(p)) // p = frac·2^exp, frac in [0.5, 1)
	m := uint64(frac * (1 << 53))        // p = m·2^(exp-53)
	tz := bits.TrailingZeros64(m)
	o, z := m>>tz, exp-53+tz
	return bits.Len64(o) <= 11 && z >= -24
}

// TestProductExactness checks when the product of a weight half c·2^-24 and an
// activation half is exact, against productExact: exhaustively over every finite half
// for the extreme and typical codes, and for random codes with rapid. The HFMA2 loop does
// not round the product on its own (one rounding per fused step), but this is the
// question "are the products exact": in general they are not.
func TestProductExactness(t *testing.T) {
	check := func(c int, h f16.Half) (exact bool, ok bool) {
		got := float64(f16.Mul(f16.Half(c), h).ToFloat32())
		want := float64(c) * 0x1p-24 * float64(h.ToFloat32())
		exact = got == want
		return exact, exact == productExact(c, h)
	}
	for _, c := range []int{1, 2, 3, 7, 15, 31, 63, 128, 241, 255} {
		var inexact int
		for u := 0; u < 1<<16; u++ {
			h := f16.Half(u)
			if h.IsNaN() || h.IsInf() || h.Abs() == 0 {
				continue
			}
			exact, ok := check(c, h)
			if !ok {
				t.Fatalf("c = %d, h = %#04x (%g): product exact = %v, characterisation says %v", c, u, h.ToFloat32(), exact, !exact)
			}
			if !exact {
				inexact++
			}
		}
		t.Logf("code %3d: %5d of 63488 nonzero finite halves give an inexact product", c, inexact)
	}
	rapid.Check(t, func(t *rapid.T) {
		c := rapid.IntRange(1, 255).Draw(t, "c")
		h := f16.Half(rapid.Uint16Range(1, 0x7bff).Draw(t, "h"))
		if exact, ok := check(c, h); !ok {
			t.Fatalf("c = %d, h = %g: product exact = %v, characterisation says %v", c, h.ToFloat32(), exact, !exact)
		}
	})
}

// TestErrors: bad shapes and inputs are errors; types and batch sizes the path does not
// cover wrap errors.ErrUnsupported.
func TestErrors(t *testing.T) {
	y := make([]float32, 256)
	x := make([]byte, 144)
	if _, err := fp16path.MulMat(quant.Q4_K, x, 256, 1, y, 1, nil); err != nil {
		t.Fatalf("valid call: %v", err)
	}
	cases := []struct {
		name        string
		err         error
		unsupported bool
	}{
		{"type", must(fp16path.MulMat(quant.Q4_0, make([]byte, 8*18), 256, 1, y, 1, nil)), true},
		{"Q6_K columns", must(fp16path.MulMat(quant.Q6_K, make([]byte, 210), 256, 1, append(y, y...), 2, nil)), true},
		{"9 columns", must(fp16path.MulMat(quant.Q4_K, x, 256, 1, make([]float32, 9*256), 9, nil)), true},
		{"0 columns", must(fp16path.MulMat(quant.Q4_K, x, 256, 1, nil, 0, nil)), false},
		{"y of 2 columns", must(fp16path.MulMat(quant.Q4_K, x, 256, 1, append(y, y[1:]...), 2, nil)), false},
		{"row map", must(fp16path.MulMat(quant.Q4_K, x, 256, 1, y, 1, &fp16path.Options{RowMap: map[int]int{1: 3}})), false},
		{"K", must(fp16path.MulMat(quant.Q4_K, x[:72], 128, 1, y[:128], 1, nil)), false},
		{"bytes", must(fp16path.MulMat(quant.Q4_K, x[:100], 256, 1, y, 1, nil)), false},
		{"y", must(fp16path.MulMat(quant.Q4_K, x, 256, 1, y[:255], 1, nil)), false},
		{"rows per warp", must(fp16path.MulMat(quant.Q4_K, x, 256, 1, y, 1, &fp16path.Options{RowsPerWarp: 3})), false},
		{"NaN", must(fp16path.MulMat(quant.Q4_K, x, 256, 1, append([]float32{float32(math.NaN())}, y[1:]...), 1, nil)), false},
		{"huge", must(fp16path.MulMat(quant.Q4_K, x, 256, 1, append([]float32{0x1p120}, y[1:]...), 1, nil)), true},
	}
	for _, c := range cases {
		if c.err == nil {
			t.Errorf("%s: no error", c.name)
			continue
		}
		if errors.Is(c.err, errors.ErrUnsupported) != c.unsupported {
			t.Errorf("%s: %v: errors.Is(ErrUnsupported) = %v, want %v", c.name, c.err, !c.unsupported, c.unsupported)
		}
	}
}

func must(_ []float32, err error) error { return err }

// TestPrescaleRangeEdge: the largest block max the prescale accepts is just below
// 32760·2^103 (e_b = -103, the half 32752); 32760·2^103 itself would round to 2^15 and need
// e_b = -104, and is refused with errors.ErrUnsupported.
func TestPrescaleRangeEdge(t *testing.T) {
	edge := float32(32760 * 0x1p103)
	y := make([]float32, 32)
	y[5] = math.Nextafter32(edge, 0)
	a, err := fp16path.ConvertActivations(y)
	if err != nil {
		t.Fatalf("just below the edge: %v", err)
	}
	if a.Exp[0] != fp16path.EMin || a.H[5].ToFloat32() != fp16path.MaxPrescaled {
		t.Fatalf("just below the edge: e = %d, h = %g; want %d, %d", a.Exp[0], a.H[5].ToFloat32(), fp16path.EMin, fp16path.MaxPrescaled)
	}
	y[5] = -edge
	if _, err := fp16path.ConvertActivations(y); !errors.Is(err, errors.ErrUnsupported) {
		t.Fatalf("at the edge: %v, want an error wrapping errors.ErrUnsupported", err)
	}
	// The clamp at the other end: a block of 2^-120 gets e_b = 127, not 134.
	y[5] = 0x1p-120
	a, err = fp16path.ConvertActivations(y)
	if err != nil {
		t.Fatalf("tiny block: %v", err)
	}
	if a.Exp[0] != fp16path.EMax || a.H[5].ToFloat32() != 0x1p7 {
		t.Fatalf("tiny block: e = %d, h = %g; want e = %d, h = 2^7", a.Exp[0], a.H[5].ToFloat32(), fp16path.EMax)
	}
}

// TestRowsPerWarp: RowDot gives MulMat's bits; with more rows per warp (fewer lanes per
// row, another partition) the bits may change but the error against fp64 stays small.
func TestRowsPerWarp(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 3))
	const K, N = 1024, 8
	x, y := realistic(r, quant.Q6_K, K, N)
	act, err := fp16path.ConvertActivations(y)
	if err != nil {
		t.Fatal(err)
	}
	one, err := fp16path.MulMat(quant.Q6_K, x, K, N, y, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	rs := len(x) / N
	for _, rpw := range []int{1, 2, 4, 32} {
		got, err := fp16path.MulMat(quant.Q6_K, x, K, N, y, 1, &fp16path.Options{RowsPerWarp: rpw})
		if err != nil {
			t.Fatal(err)
		}
		for i := range got {
			v, err := fp16path.RowDot(quant.Q6_K, x[i*rs:(i+1)*rs], act, &fp16path.Options{RowsPerWarp: rpw})
			if err != nil {
				t.Fatal(err)
			}
			if math.Float32bits(v) != math.Float32bits(got[i]) {
				t.Fatalf("rows per warp %d, row %d: RowDot %g, MulMat %g", rpw, i, v, got[i])
			}
			if rpw == 1 && got[i] != one[i] {
				t.Fatalf("row %d: RowsPerWarp 1 differs from the default", i)
			}
			if d := math.Abs(float64(got[i] - one[i])); d > 1e-3*math.Abs(float64(one[i]))+1e-3 {
				t.Fatalf("rows per warp %d, row %d: %g vs %g with one row per warp", rpw, i, got[i], one[i])
			}
		}
	}
}

// TestWarpButterfly runs the final reduction of a whole warp lane by lane with sim.Warp
// shuffles (__shfl_xor_sync of width 32/R, R rows per warp: row r in lanes r·L..r·L+L-1)
// and checks that the first lane of each row's segment holds MulMat's output bits.
func TestWarpButterfly(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 5))
	const K = 2048
	for _, rpw := range []int{1, 2, 4, 8} {
		L := 32 / rpw
		x, y := realistic(r, quant.IQ4_XS, K, rpw)
		want, err := fp16path.MulMat(quant.IQ4_XS, x, K, rpw, y, 1, &fp16path.Options{RowsPerWarp: rpw})
		if err != nil {
			t.Fatal(err)
		}
		act, err := fp16path.ConvertActivations(y)
		if err != nil {
			t.Fatal(err)
		}
		rs := len(x) / rpw
		var w sim.Warp
		for row := 0; row < rpw; row++ {
			p := fp16path.LanePartials(quant.IQ4_XS, x[row*rs:(row+1)*rs], act, L)
			copy(w[row*L:(row+1)*L], p[:L])
		}
		w.ReduceSum(L, nil)
		for row := 0; row < rpw; row++ {
			if math.Float32bits(w[row*L]) != math.Float32bits(want[row]) {
				t.Fatalf("%d rows per warp, row %d: warp lane %d holds %g, MulMat %g", rpw, row, row*L, w[row*L], want[row])
			}
		}
	}
}

// TestWithinBound checks every output against fp64 (oracle's reference value) within
// Bound, on the realistic generator with random types, K, rows per warp and activation
// magnitudes from 2^-60 to 2^60 (the prescale must absorb them), and checks that the bound
// is informative: below a quarter of Σ|W_k·y_k|. It is about 2% of it at K = 4096 on the
// realistic generator, and up to about 13% for rows whose small weights sit on large
// offset codes (the loop rounds relative to Σ c_k·|h_k|, several times Σ|W_k·h_k|/|D| when
// c_k - off is small): a worst case the design has, not slack. rapid prints the seed of a
// failure.
func TestWithinBound(t *testing.T) {
	types := fp16path.Types()
	rapid.Check(t, func(rt *rapid.T) {
		typ := rapid.SampledFrom(types).Draw(rt, "type")
		K := 256 * rapid.IntRange(1, 4).Draw(rt, "K/256")
		rpw := rapid.SampledFrom([]int{1, 2, 32}).Draw(rt, "rows per warp")
		scale := math.Ldexp(1, rapid.IntRange(-60, 60).Draw(rt, "log2 scale"))
		r := rand.New(rand.NewPCG(rapid.Uint64().Draw(rt, "seed"), 0))
		const N = 4
		x, y := realistic(r, typ, K, N)
		for k := range y {
			y[k] = float32(float64(y[k]) * scale)
		}
		opt := &fp16path.Options{RowsPerWarp: rpw}
		got, err := fp16path.MulMat(typ, x, K, N, y, 1, opt)
		if err != nil {
			rt.Fatal(err)
		}
		bound, err := fp16path.Bound(typ, x, K, N, y, opt)
		if err != nil {
			rt.Fatal(err)
		}
		w := make([]float32, K)
		rs := len(x) / N
		for i := range got {
			if err := quant.DequantizeRow(typ, x[i*rs:(i+1)*rs], w); err != nil {
				rt.Fatal(err)
			}
			var ref, l1 float64
			for k := range w {
				ref += float64(w[k]) * float64(y[k])
				l1 += math.Abs(float64(w[k]) * float64(y[k]))
			}
			if d := math.Abs(float64(got[i]) - ref); !(d <= bound[i]) {
				rt.Fatalf("%v row %d: |%g - %g| = %g above the bound %g", typ, i, got[i], ref, d, bound[i])
			}
			if l1 > 0 && bound[i] > 0x1p-2*l1 {
				rt.Fatalf("%v row %d: bound %g is not informative against Σ|w·y| = %g", typ, i, bound[i], l1)
			}
		}
	})
}

// TestEpilogueAsDocumented recomputes every group's float32 epilogue from the formulas of
// the package documentation (step 3), from the public pieces (GroupOf's codes, D and Mmin,
// Unpack, HalfDot, Sum16), and checks the bits of the lanes' partials: with K = 512 and 32
// lanes each lane holds exactly one group, partial = fma(t, 2^(24-e_b), 0).
func TestEpilogueAsDocumented(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 11))
	const K = 512
	for _, typ := range fp16path.Types() {
		x, y := realistic(r, typ, K, 1)
		act, err := fp16path.ConvertActivations(y)
		if err != nil {
			t.Fatal(err)
		}
		part := fp16path.LanePartials(typ, x, act, 32)
		qk := typ.BlockSize()
		bs := len(x) / (K / qk)
		for g := 0; g < 32; g++ {
			blk := g * 16 / qk
			codes, d, m, off, isMin := fp16path.GroupOf(typ, x[blk*bs:(blk+1)*bs], g%(qk/16))
			acc := fp16path.HalfDot(fp16path.Unpack(codes), act.H[16*g:16*g+16])
			a := sim.Add(sim.H2F(acc.Lo), sim.H2F(acc.Hi))
			var tg float32
			if isMin {
				tg = sim.FMA(-m*0x1p-24, act.Sum16[g], sim.Mul(a, d))
			} else {
				tg = sim.Mul(sim.FMA(-float32(off)*0x1p-24, act.Sum16[g], a), d)
			}
			want := sim.FMA(tg, float32(math.Ldexp(1, 24-act.Exp[g/2])), 0)
			if math.Float32bits(part[g]) != math.Float32bits(want) {
				t.Fatalf("%v group %d: lane partial %g, documented epilogue %g", typ, g, part[g], want)
			}
		}
	}
}

// TestFastHFMA: the fast HFMA step equals f16.FMA(c·2^-24 as the half with bits c, h, acc)
// bit for bit: exhaustively over every half h for a set of codes and accumulators
// (including values whose sums fall on binary16 ties and carries into the next binade),
// with rapid over all codes, halves and accumulators, and for whole matmuls of every type
// against the path run with HalfDot. rapid prints the seed of a failure.
func TestFastHFMA(t *testing.T) {
	accs := []f16.Half{0, 0x8000, 0x0001, 0x8001, 0x03ff, 0x0400, 0x3c00, 0xbc00, 0x4400, 0xc7ff, 0x47ff, 0x2e66, 0x9a3d}
	for _, c := range []uint8{0, 1, 2, 3, 15, 31, 63, 127, 128, 241, 255} {
		for u := 0; u < 1<<16; u++ {
			h := f16.Half(u)
			for _, acc := range accs {
				if got, want := fp16path.HFMACode(c, h, acc), f16.FMA(f16.Half(c), h, acc); got != want {
					t.Fatalf("c = %d, h = %#04x, acc = %#04x: fast %#04x, f16.FMA %#04x", c, u, acc, got, want)
				}
			}
		}
	}
	rapid.Check(t, func(rt *rapid.T) {
		c := uint8(rapid.IntRange(0, 255).Draw(rt, "c"))
		h := f16.Half(rapid.Uint16().Draw(rt, "h"))
		acc := f16.Half(rapid.Uint16().Draw(rt, "acc"))
		if got, want := fp16path.HFMACode(c, h, acc), f16.FMA(f16.Half(c), h, acc); got != want {
			rt.Fatalf("c = %d, h = %#04x, acc = %#04x: fast %#04x, f16.FMA %#04x", c, h, acc, got, want)
		}
	})
	r := rand.New(rand.NewPCG(13, 13))
	const K, N = 1024, 8
	for _, typ := range fp16path.Types() {
		x, y := realistic(r, typ, K, N)
		fast, err := fp16path.MulMat(typ, x, K, N, y, 1, nil)
		if err != nil {
			t.Fatal(err)
		}
		restore := fp16path.SetSlowHFMA()
		slow, err := fp16path.MulMat(typ, x, K, N, y, 1, nil)
		restore()
		if err != nil {
			t.Fatal(err)
		}
		for i := range fast {
			if math.Float32bits(fast[i]) != math.Float32bits(slow[i]) {
				t.Fatalf("%v row %d: fast loop %g, HalfDot %g", typ, i, fast[i], slow[i])
			}
		}
	}
}
