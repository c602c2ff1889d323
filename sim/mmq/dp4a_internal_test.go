package mmq

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/ggsim/ggsim/f16"
	"github.com/ggsim/ggsim/quant"
	"github.com/ggsim/ggsim/sim"
	"github.com/ggsim/ggsim/sim/q8"
)

// Hand-computed cases in which the predicted float order of a dp4a vec_dot gives a
// result that every other order of the same operations does not. Values:
//
//	a = 2047/1024 (a binary16), C = 16385:  C*a = 33540095·2^-10 exactly, which float32
//	rounds (a tie, to even) to 32754; so fma(C, a, -32752) = 2047/1024 while
//	RN(C*a) - 32752 = 2.
//	p = 1+2^-10 (binary16), q = 1+2^-20 (float32): p*q = 1+2^-10+2^-20+2^-30 rounds to
//	1+2^-10+2^-20; so fma(p*q, 1, -(1+2^-10+2^-20)) = 0 while the product fused last
//	(fma(1*p, q, ·), the MMA order) leaves 2^-30.

const (
	handA    = float32(2047.0 / 1024)
	handC    = 16385
	handAC   = float32(32752)
	handP    = float32(1 + 0x1p-10)
	handQ    = float32(1 + 0x1p-20)
	handPQ   = float32(1 + 0x1p-10 + 0x1p-20)
	handTiny = float32(0x1p-30)
)

// setDot fills x and y (32 values each, x in 0..15, y in 0..127) so that their dot
// product is c (0 <= c <= 60960).
func setDot(x, y []int8, c int) {
	for j := range x {
		x[j], y[j] = 0, 0
	}
	for j := 0; c > 0; j++ {
		switch {
		case c >= 15*127:
			x[j], y[j] = 15, 127
		case c > 127:
			x[j], y[j] = int8(c/127), 127
		default:
			x[j], y[j] = 1, int8(c)
		}
		c -= int(x[j]) * int(y[j])
	}
}

func h(f float32) f16.Half { return f16.FromFloat32(f) }

func setD4(y *q8.BlockMMQ, k int, d float32) { y.Meta[k] = math.Float32bits(d) }

func setDS4(y *q8.BlockMMQ, k int, d, s float32) {
	y.Meta[k] = uint32(h(d)) | uint32(h(s))<<16
}

// setHalf sets the half d2s6[k] of a D2S6 block.
func setHalf(y *q8.BlockMMQ, k int, v f16.Half) {
	sh := 16 * uint(k%2)
	y.Meta[k/2] = y.Meta[k/2]&^(0xffff<<sh) | uint32(v)<<sh
}

func checkBits(t *testing.T, what string, got, want float32) {
	t.Helper()
	if math.Float32bits(got) != math.Float32bits(want) {
		t.Errorf("%s = %g (%#08x), want %g (%#08x)", what, got, math.Float32bits(got), want, math.Float32bits(want))
	}
}

func TestDP4AHandQ8_0(t *testing.T) {
	var x xTile
	var y0, y1 q8.BlockMMQ
	x.qs[0], y0.Qs[0] = 1, 1
	x.df[0] = handP
	setD4(&y0, 0, handQ)
	checkBits(t, "dp4a q8_0 (dA*dB first)", dp4aDotQ8_0(&x, refHalfDots(&x, &y0, &y1), &y0, &y1, -handPQ), 0)
	// The MMA order on the same tile keeps the 2^-30: the two paths differ by design.
	checkBits(t, "mma q8_0 (C*dA first)", dotQ8_0Q8_1(false)(&x, refHalfDots(&x, &y0, &y1), &y0, &y1, -handPQ), handTiny)
}

func TestDP4AHandQ3_K(t *testing.T) {
	var x xTile
	var y0, y1 q8.BlockMMQ
	// Block 5 (the second y block, group 1): C0 = 3 with scale 5, C1 = 2 with scale -7.
	x.qs[160], y1.Qs[32] = 3, 1
	x.qs[176], y1.Qs[48] = 2, 1
	x.sc[10], x.sc[11] = 5, -7
	x.df[0] = handP
	setD4(&y1, 1, handQ)
	checkBits(t, "dp4a q3_K", dp4aDotQ3_K(&x, refHalfDots(&x, &y0, &y1), &y0, &y1, -handPQ), 0)
}

func TestDP4AHandQ5_1(t *testing.T) {
	var x xTile
	var y0, y1 q8.BlockMMQ
	// r = fma(C, d*d8, m*s8): fused, 2047/1024; the unfused sum would give 2.
	setDot(x.qs[64:96], y0.Qs[64:96], handC)
	x.dmh[2] = f16.Half2{Lo: h(handA), Hi: h(-1)}
	setDS4(&y0, 2, 1, handAC)
	checkBits(t, "dp4a q5_1 fma", dp4aDotQ8_1(&x, refHalfDots(&x, &y0, &y1), &y0, &y1, 0), handA)

	// __hmul2 rounds d*d8 to half: (1+2^-10)^2 = 1+2^-9+2^-20 becomes 1+2^-9.
	var x2 xTile
	x2.qs[224], y1.Qs[96] = 1, 1
	x2.dmh[7] = f16.Half2{Lo: h(handP), Hi: 0}
	setDS4(&y1, 3, handP, 0)
	checkBits(t, "dp4a q5_1 half product", dp4aDotQ8_1(&x2, refHalfDots(&x2, &y0, &y1), &y0, &y1, 0), 1+0x1p-9)
}

func TestDP4AHandQ4_0(t *testing.T) {
	var x xTile
	var y0, y1 q8.BlockMMQ
	// inner = fma(C, d8, -(8*s8)) with 8*s8 = 32752; sum = fma(d4, inner, sum).
	setDot(x.qs[0:32], y0.Qs[0:32], handC)
	x.df[0] = 1
	setDS4(&y0, 0, handA, handAC/8)
	checkBits(t, "dp4a q4_0 inner", dp4aDotQ4_0(&x, refHalfDots(&x, &y0, &y1), &y0, &y1, 0), handA)
	// d4*inner fused into the sum: fma(q, 2047/1024, -RN(q*2047/1024)) is the product's
	// rounding error, nonzero only if fused.
	x.df[0] = handQ
	pa := float32(float64(handQ) * float64(handA)) // RN of the exact product
	want := float32(float64(handQ)*float64(handA) - float64(pa))
	if want == 0 {
		t.Fatal("test values: p*a must be inexact in float32")
	}
	checkBits(t, "dp4a q4_0 outer", dp4aDotQ4_0(&x, refHalfDots(&x, &y0, &y1), &y0, &y1, -pa), want)
}

func TestDP4AHandQ4_K(t *testing.T) {
	var x xTile
	var y0, y1 q8.BlockMMQ
	// Sub-block 4 (y1 group 0): sumf_d = d8*(sc*C) = 1*(1*16385), sumf_m = s8*m = 1*1;
	// r = fma(dm.x, sumf_d, -(dm.y*sumf_m)) = fma(2047/1024, 16385, -32752) = 2047/1024.
	// Fusing the right product instead, or neither, gives 2.
	setDot(x.qs[128:160], y1.Qs[0:32], handC)
	x.sc[4], x.sc[12] = 1, 1
	x.dmh[0] = f16.Half2{Lo: h(handA), Hi: h(handAC)}
	setDS4(&y1, 0, 1, 1)
	checkBits(t, "dp4a q4_K", dp4aDotQ4_K(&x, refHalfDots(&x, &y0, &y1), &y0, &y1, 0), handA)
	// r is added to the sum, not fused: 0.5 + r rounds once.
	checkBits(t, "dp4a q4_K sum", dp4aDotQ4_K(&x, refHalfDots(&x, &y0, &y1), &y0, &y1, 0.5), 0.5+handA)
}

// TestDP4AMXFP4EqualsMMA: MXFP4's x_df is a power of two, so (dA*dB)*C and (C*dA)*dB are
// the same product and the dp4a path must equal the MMA path's vec_dot on every bit.
func TestDP4AMXFP4EqualsMMA(t *testing.T) {
	dev, _ := sim.Lookup("H200")
	const K, N, M = 512, 130, 40
	a, b := randomCase(t, quant.MXFP4, K, N, M, 7)
	p := planFor(t, dev, quant.MXFP4, K, N, M)
	got, err := MulMatDP4A(dev, quant.MXFP4, a, K, N, b, M, p)
	if err != nil {
		t.Fatal(err)
	}
	mma := map[quant.Type]*kernel{quant.MXFP4: {layout: q8.D4, load: loadMXFP4, dot: dotQ8_0Q8_1(false)}}
	if kn, ok := kernels[quant.MXFP4]; ok { // the MMA path's own kernel, once registered
		mma[quant.MXFP4] = kn
	}
	want, err := mulMat(mma, "MMA", quant.MXFP4, a, K, N, b, M, p)
	if err != nil {
		t.Fatal(err)
	}
	for i := range want {
		if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
			t.Fatalf("dst[%d] = %g, MMA path %g", i, got[i], want[i])
		}
	}
}

// planFor is MakePlan for t: the partition depends on the block size only, so it is
// MakePlan's for Q8_0 (32 values a block) with every range rescaled to t's blocks. The
// ranges are whole iterations (256 values) of the same K positions for any block size
// dividing 256 (kbc is floored to whole iterations, and floor(floor(n/g)/c) =
// floor(n/(g*c))).
func planFor(t *testing.T, dev sim.Device, typ quant.Type, K, N, M int) *Plan {
	t.Helper()
	p, err := MakePlan(dev, typ, K, N, M)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// randomBlocks fills row with random blocks of typ whose scales are moderate (a binary16
// in [2^-12, 2^-5) or a UE4M3 of a similar size): for the types without a reference
// quantizer in quant (the IQ2/IQ3/IQ1 types).
func randomBlocks(r *rand.Rand, typ quant.Type, row []byte) {
	for k := range row {
		row[k] = byte(r.Uint32())
	}
	bs := typ.TypeSize()
	for o := 0; o < len(row); o += bs {
		if typ == quant.NVFP4 {
			for s := 0; s < 4; s++ {
				row[o+s] = byte(0x20 + r.IntN(0x20))
			}
			continue
		}
		h := uint16(3+r.IntN(8))<<10 | uint16(r.IntN(1024))
		row[o], row[o+1] = byte(h), byte(h>>8)
	}
}

// randomCase returns N rows of K weights of t quantized by ggml's reference quantizer
// from Gaussian values (with a per-row scale; random blocks with moderate scales where
// quant has no reference quantizer) and M columns of Gaussian activations.
func randomCase(t *testing.T, typ quant.Type, K, N, M int, seed uint64) ([]byte, []float32) {
	t.Helper()
	r := rand.New(rand.NewPCG(seed, 0xd9a4))
	rs := K / typ.BlockSize() * typ.TypeSize()
	a := make([]byte, N*rs)
	row := make([]float32, K)
	for i := 0; i < N; i++ {
		s := float32(math.Exp2(float64(r.IntN(8) - 4)))
		for k := range row {
			row[k] = s * float32(r.NormFloat64())
		}
		dst := a[i*rs : (i+1)*rs]
		if err := quant.QuantizeRowRef(typ, row, dst); err != nil {
			randomBlocks(r, typ, dst)
		}
	}
	b := make([]float32, K*M)
	for k := range b {
		b[k] = float32(r.NormFloat64())
	}
	return a, b
}

// tileValue is the weight the dp4a tile of each type represents at value v, from the
// tile's integers and scales (in float64, the load's own float arithmetic excepted).
func tileValue(typ quant.Type, x *xTile, v int) float64 {
	b := v / 32
	q := float64(x.qs[v])
	switch typ {
	case quant.Q4_0:
		return (q - 8) * float64(x.df[b])
	case quant.IQ2_XS, quant.IQ2_S, quant.NVFP4:
		return q * float64(x.df[v/16])
	case quant.Q4_1, quant.Q5_1, quant.IQ1_S:
		return q*float64(x.dmh[b].Lo.ToFloat32()) + float64(x.dmh[b].Hi.ToFloat32())
	case quant.Q3_K, quant.Q6_K:
		return float64(x.df[0]) * float64(x.sc[v/16]) * q
	case quant.Q2_K:
		return float64(x.mA[v/16][0])*q - float64(x.mA[v/16][1])
	case quant.Q4_K, quant.Q5_K:
		d, dmin := float64(x.dmh[0].Lo.ToFloat32()), float64(x.dmh[0].Hi.ToFloat32())
		return d*float64(x.sc[b])*q - dmin*float64(x.sc[8+b])
	default: // Q8_0, Q5_0, IQ4_XS, IQ4_NL, MXFP4: value times a per-32 float scale
		return q * float64(x.df[b])
	}
}

// TestDP4ALoadMatchesDequant: every dp4a load, read back through tileValue, gives
// quant.DequantizeRow's values (up to the float32 rounding both do in their own order).
func TestDP4ALoadMatchesDequant(t *testing.T) {
	for _, typ := range DP4ATypes() {
		const K, N = 512, 3
		a, _ := randomCase(t, typ, K, N, 1, uint64(typ)+1)
		kn := kernelsDP4A[typ]
		rs := K / typ.BlockSize() * typ.TypeSize()
		mat := &matrix{data: a, bs: typ.TypeSize(), stride: K / typ.BlockSize()}
		deq := make([]float32, K)
		bpi := iterK / typ.BlockSize()
		tol := 0x1p-22 // float32 roundings in a different order
		if typ == quant.Q2_K || typ == quant.IQ1_S {
			tol = 0x1p-9 // the load's scales are rounded to half (Q2_K: __hmul2, IQ1_S: make_half2)
		}
		for i := 0; i < N; i++ {
			if err := quant.DequantizeRow(typ, a[i*rs:(i+1)*rs], deq); err != nil {
				t.Fatal(err)
			}
			var amax float64
			for _, v := range deq {
				amax = math.Max(amax, math.Abs(float64(v)))
			}
			for kb0 := 0; kb0 < K/typ.BlockSize(); kb0 += bpi {
				var x xTile
				kn.load(mat, i, kb0, &x)
				for v := 0; v < iterK; v++ {
					k := kb0*typ.BlockSize() + v
					got, want := tileValue(typ, &x, v), float64(deq[k])
					if math.Abs(got-want) > tol*amax {
						t.Fatalf("%v row %d value %d: tile gives %g, DequantizeRow %g", typ, i, k, got, want)
					}
				}
			}
		}
	}
}

func TestDP4AHandQ2_K(t *testing.T) {
	var x xTile
	var y0, y1 q8.BlockMMQ
	// Half 0, part p = 0: sumf_d8 = 1*16385, sumf = -(32752*1) from the stored sum
	// d2s6[2]; r = fma(d8 = 2047/1024, 16385, -32752) = 2047/1024 (unfused: 2).
	setDot(x.qs[0:16], y0.Qs[0:16], handC)
	x.mA[0] = [2]float32{1, handAC}
	setHalf(&y0, 0, h(handA))
	setHalf(&y0, 2, h(1))
	// Part p = 1, values 96..127 (no stored sum): the kernel sums the q8 values (5) and
	// subtracts dmin*m (1) times that inside sumf_d8: r = fma(d8 = 1, -5, 0) = -5.
	y0.Qs[96] = 5
	x.mA[6] = [2]float32{0, 1}
	setHalf(&y0, 1, h(1))
	// The stored slots past d2s6[7] do not exist; a model reading them would see qs bytes.
	checkBits(t, "dp4a q2_K", dp4aDotQ2_K(&x, refHalfDots(&x, &y0, &y1), &y0, &y1, 0), handA-5)
}

func TestDP4AHandQ6_K(t *testing.T) {
	var x xTile
	var y0, y1 q8.BlockMMQ
	// Block 2 (p = 1, first of the pair): sumf_d = fma(d8, sc*C, 0) with d8 = 1+2^-10,
	// sc*C = 1; then sum = fma(d6, sumf_d, sum): d6 = 1+2^-20 and sum = -(p*q rounded):
	// fused, the product's rounding error 2^-30 survives.
	x.qs[64], y0.Qs[64] = 1, 1
	x.sc[4] = 1
	setD4(&y0, 2, handP)
	x.df[0] = handQ
	checkBits(t, "dp4a q6_K", dp4aDotQ6_K(&x, refHalfDots(&x, &y0, &y1), &y0, &y1, -handPQ), handTiny)
}

func TestDP4AHandQ8_0_16(t *testing.T) {
	var x xTile
	var y0, y1 q8.BlockMMQ
	// Block 3: C0 = -32752 with dA0 = 1, C1 = 16385 with dA1 = 2047/1024, dB = 1.
	// dp4a: sumf = fma(1, -32752, 0); sumf = fma(a, 16385, sumf) = a; sum = fma(1, a, 0).
	// The MMA order fma(C0, dA0, RN(C1*dA1)) gives 2.
	xs, ys := x.qs[96:112], y0.Qs[96:112]
	xs[0], ys[0], xs[1], ys[1] = -127, 127, -127, 127
	xs[2], ys[2], xs[3], ys[3] = -3, 127, -1, 113
	setDot(x.qs[112:128], y0.Qs[112:128], handC)
	x.df[6], x.df[7] = 1, handA
	setD4(&y0, 3, 1)
	checkBits(t, "dp4a q8_0_16", dp4aDotQ8_0_16(&x, refHalfDots(&x, &y0, &y1), &y0, &y1, 0), handA)
	checkBits(t, "mma q8_0_16", dotQ8_0_16Q8_1(&x, refHalfDots(&x, &y0, &y1), &y0, &y1, 0), 2)
}

// TestDP4AVersusMMAOrders compares the dp4a kernels with MMA-path kernels assembled here
// from the same tiles (the MMA loads of these types write the same values; their scale
// arithmetic is redone below) and the MMA vec_dots of vecdot.go. ggml's two builds on
// the H200 differ by about 1e-3 (relative to the largest output) for q5_1 and by about
// 1e-7 for q3_K and iq4_xs; the models must show the same sizes.
func TestDP4AVersusMMAOrders(t *testing.T) {
	dev, _ := sim.Lookup("H200")
	q5_1 := func(m *matrix, i, kb0 int, x *xTile) { // MMA: x_dm = bxi->dm, read as float2
		loadQ5_1DP4A(m, i, kb0, x)
		for b := range x.dmh {
			x.dm[b] = [2]float32{sim.H2F(x.dmh[b].Lo), sim.H2F(x.dmh[b].Hi)}
		}
	}
	q3_K := func(m *matrix, i, kb0 int, x *xTile) { // MMA: x_df[s] = d*sc8[s]
		loadQ3_KDP4A(m, i, kb0, x)
		d := x.df[0]
		for s := 0; s < 16; s++ {
			x.df[s] = sim.Mul(d, float32(x.sc[s]))
		}
	}
	cases := []struct {
		typ      quant.Type
		mma      *kernel
		min, max float64
	}{
		{quant.Q5_1, &kernel{layout: q8.DS4, load: q5_1, dot: dotQ8_1Q8_1}, 1e-5, 1e-2},
		{quant.Q3_K, &kernel{layout: q8.D4, load: q3_K, dot: dotQ8_0_16Q8_1}, 1e-9, 1e-6},
		{quant.IQ4_XS, &kernel{layout: q8.D4, load: loadIQ4_XS, dot: dotQ8_0Q8_1(false)}, 1e-9, 1e-6},
	}
	const K, N, M = 1024, 256, 40
	for _, c := range cases {
		a, b := randomCase(t, c.typ, K, N, M, uint64(c.typ)+5)
		p := planFor(t, dev, c.typ, K, N, M)
		d, err := MulMatDP4A(dev, c.typ, a, K, N, b, M, p)
		if err != nil {
			t.Fatal(err)
		}
		m, err := mulMat(map[quant.Type]*kernel{c.typ: c.mma}, "MMA model", c.typ, a, K, N, b, M, p)
		if err != nil {
			t.Fatal(err)
		}
		var maxDiff, maxAbs float64
		for i := range d {
			maxDiff = math.Max(maxDiff, math.Abs(float64(d[i])-float64(m[i])))
			maxAbs = math.Max(maxAbs, math.Abs(float64(m[i])))
		}
		rel := maxDiff / maxAbs
		t.Logf("%v: max |dp4a-mma| / max |mma| = %.3g", c.typ, rel)
		if rel < c.min || rel > c.max {
			t.Errorf("%v: dp4a and MMA differ by %.3g, want within [%g, %g]", c.typ, rel, c.min, c.max)
		}
	}
}

// TestDP4ATileRowsNoEffect: without stream-K splits, the tile height (128 on the ampere
// table, 64 on pascal's) and so which thread owns which row in write_back_dp4a, and the
// fallback rows of a partial last tile, change no bit.
func TestDP4ATileRowsNoEffect(t *testing.T) {
	dev, _ := sim.Lookup("H200")
	const K, N, M = 512, 200, 24
	a, b := randomCase(t, quant.Q4_K, K, N, M, 3)
	unsplit := func(I int) *Plan {
		p := &Plan{I: I, J: 16, BPN: K / 256, BPI: 1}
		p.NTX, p.NTY = (M+p.J-1)/p.J, (N+I-1)/I
		for tile := 0; tile < p.NTX*p.NTY; tile++ {
			p.Tiles = append(p.Tiles, TileWork{Ranges: []Range{{Start: 0, Stop: p.BPN, Block: tile}}, End: tile})
		}
		return p
	}
	r128, err := MulMatDP4A(dev, quant.Q4_K, a, K, N, b, M, unsplit(128))
	if err != nil {
		t.Fatal(err)
	}
	r64, err := MulMatDP4A(dev, quant.Q4_K, a, K, N, b, M, unsplit(64))
	if err != nil {
		t.Fatal(err)
	}
	for i := range r128 {
		if math.Float32bits(r128[i]) != math.Float32bits(r64[i]) {
			t.Fatalf("dst[%d]: I=128 gives %g, I=64 %g", i, r128[i], r64[i])
		}
	}
}
