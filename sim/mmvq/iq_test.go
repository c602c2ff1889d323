package mmvq

import (
	"math"
	"math/rand/v2"
	"testing"

	"pgregory.net/rapid"

	"github.com/ggsim/ggsim/f16"
	"github.com/ggsim/ggsim/quant"
	"github.com/ggsim/ggsim/sim"
	"github.com/ggsim/ggsim/sim/q8"
)

// Tests of the i-quant and extra-type vec_dots (iq*.go, extra.go) against ggsim's CPU
// dequantizers (quant.DequantizeRow, bit-exact with ggml's dequantize_row_*): a block is
// decoded with its scale set to 1, which gives the grid values times the sub-block scales
// (and deltas) as exact floats; the integer dot products the CUDA code computes from bit
// fields are recomputed from those values and the y quants, with the C integer rounding
// steps of each kernel written out. The expected float is built from those integers with
// the SASS sequence of FMA-SITES-IQ.md, so these tests check that the code computes that
// sequence; that the sequence is the GPU's is checked by the golden tests (partly: see
// FMA-SITES-IQ.md) and by the SASS reading.

// iqDraw is what one vec_dot call needs: a row of 3 blocks of type t (the tested one is
// kbx = 1, with a finite random scale where the type has a plain d field at offset 0), the
// q8_1 blocks of that x block, a thread offset iqs and an incoming tmp.
type iqDraw struct {
	row  []byte
	blk  []byte // row[size:2*size]
	y    []q8.Block
	iqs  int
	tmp  float32
	kern TypeKernel
}

// randHalf returns a finite binary16 with a uniformly random sign, exponent field (0..30,
// so subnormals included) and mantissa.
func randHalf(r *rand.Rand) f16.Half {
	return f16.Half(uint16(r.IntN(2))<<15 | uint16(r.IntN(31))<<10 | uint16(r.IntN(1024)))
}

// drawIQ draws a seed with rapid (so a failure prints and replays it) and builds the data
// from it with a uniform generator: rapid's own integer draws favour small values, which
// make most products exact and would hide rounding differences.
func drawIQ(t *rapid.T, typ quant.Type) iqDraw {
	k, ok := KernelOf(typ)
	if !ok {
		t.Fatalf("no kernel for %v", typ)
	}
	r := rand.New(rand.NewPCG(rapid.Uint64().Draw(t, "seed"), 0))
	size := typ.TypeSize()
	row := make([]byte, 3*size)
	for i := range row {
		row[i] = byte(r.Uint32())
	}
	blk := row[size : 2*size]
	switch typ {
	case quant.IQ1_M, quant.NVFP4: // no d field at offset 0
	default:
		d := randHalf(r)
		blk[0], blk[1] = byte(d), byte(d>>8)
	}
	y := make([]q8.Block, k.QK/32)
	for i := range y {
		y[i].D = randHalf(r)
		y[i].S = randHalf(r)
		for j := range y[i].Qs {
			y[i].Qs[j] = int8(r.Uint32())
		}
	}
	iqs := k.VDR * r.IntN(k.QI/k.VDR)
	var tmp float32
	switch r.IntN(4) {
	case 0: // +0, as in the first call of every thread
	case 1: // any finite float
		tmp = math.Float32frombits(r.Uint32()&^(0xff<<23) | uint32(r.IntN(255))<<23)
	default: // the magnitude of the products
		tmp = float32(math.Ldexp(r.Float64()*2-1, r.IntN(40)-25))
	}
	return iqDraw{row: row, blk: blk, y: y, iqs: iqs, tmp: tmp, kern: k}
}

// dequantOne returns the 32*len(y) values of blk decoded by the CPU dequantizer after
// setScaleOne has set the block's scale to 1.0 in a copy.
func dequantOne(t *rapid.T, typ quant.Type, blk []byte, setScaleOne func([]byte)) []float32 {
	c := append([]byte(nil), blk...)
	setScaleOne(c)
	v := make([]float32, typ.BlockSize())
	if err := quant.DequantizeRow(typ, c, v); err != nil {
		t.Fatalf("dequantize %v: %v", typ, err)
	}
	return v
}

// dOne sets a plain half d at offset 0 to 1.0.
func dOne(b []byte) { b[0], b[1] = 0x00, 0x3C }

// exactDot returns Σ v[j]*y.Qs[j] over 32 values, in float64 (exact for these dyadic values).
func exactDot(v []float32, y *q8.Block) float64 {
	var s float64
	for j := 0; j < 32; j++ {
		s += float64(v[j]) * float64(y.Qs[j])
	}
	return s
}

// exactInt returns f as an int32, failing unless it is an integer.
func exactInt(t *rapid.T, f float64, what string) int32 {
	if f != math.Trunc(f) || math.Abs(f) > 1<<30 {
		t.Fatalf("%s = %v is not an integer", what, f)
	}
	return int32(f)
}

// checkBits fails unless got and want have the same float32 bits.
func checkBits(t *rapid.T, what string, got, want float32) {
	if math.Float32bits(got) != math.Float32bits(want) {
		t.Fatalf("%s = %v (%#08x), want %v (%#08x)", what, got, math.Float32bits(got), want, math.Float32bits(want))
	}
}

// plainFloat is the SASS sequence shared by IQ2_*, IQ3_*, Q1_0 and Q2_0:
// FFMA(FMUL(h2f(d), h2f(y.d)), I2F(sumi), tmp).
func plainFloat(blk []byte, y *q8.Block, sumi int32, tmp float32) float32 {
	d := sim.H2F(f16.Half(uint16(blk[0]) | uint16(blk[1])<<8))
	return sim.FMA(sim.Mul(d, sim.H2F(y.D)), sim.I2F(sumi), tmp)
}

func TestVecDotIQ2XXS(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		g := drawIQ(t, quant.IQ2_XXS)
		v := dequantOne(t, quant.IQ2_XXS, g.blk, dOne)
		ib := g.iqs / 2
		y := &g.y[ib]
		// CPU: v = (0.5+s)/4 * grid*sign, so Σ v·y = raw*(2s+1)/8 exactly and the kernel's
		// int is that value truncated toward zero.
		want := exactInt(t, math.Trunc(exactDot(v[32*ib:], y)), "trunc(Σv·y)")
		if got := iq2xxsSumi(quant.BlockIQ2_XXS(g.blk), g.iqs, y); got != want {
			t.Fatalf("sumi = %d, want %d", got, want)
		}
		checkBits(t, "vec_dot", g.kern.Dot(g.tmp, g.row, 1, g.iqs, g.y), plainFloat(g.blk, y, want, g.tmp))
	})
}

// iq2HalfRaw recovers the raw grid·sign·y sums of the two 16-value halves of group ib of
// an IQ2_XS / IQ2_S block from the dequantized values (scale 1): v = (0.5+ls_h)/4 *
// grid*sign, with ls_h the nibble h of the group's scale byte sc.
func iq2HalfRaw(t *rapid.T, v []float32, y *q8.Block, sc byte) (raw [2]int32, ls [2]int32) {
	ls = [2]int32{int32(sc & 0xF), int32(sc >> 4)}
	for h := 0; h < 2; h++ {
		db := (0.5 + float64(ls[h])) * 0.25
		var s float64
		for j := 16 * h; j < 16*h+16; j++ {
			s += float64(v[j]) / db * float64(y.Qs[j])
		}
		raw[h] = exactInt(t, s, "raw half sum")
	}
	return raw, ls
}

func testIQ2Scaled(t *testing.T, typ quant.Type, scOff int, sumiOf func(blk []byte, iqs int, y *q8.Block) int32) {
	rapid.Check(t, func(t *rapid.T) {
		g := drawIQ(t, typ)
		v := dequantOne(t, typ, g.blk, dOne)
		ib := g.iqs / 2
		y := &g.y[ib]
		raw, ls := iq2HalfRaw(t, v[32*ib:], y, g.blk[scOff+ib])
		// C: (sumi0*ls0 + sumi1*ls1 + (sumi0 + sumi1)/2)/4, divisions truncating.
		want := (raw[0]*ls[0] + raw[1]*ls[1] + (raw[0]+raw[1])/2) / 4
		if got := sumiOf(g.blk, g.iqs, y); got != want {
			t.Fatalf("sumi = %d, want %d (raw %v, ls %v)", got, want, raw, ls)
		}
		checkBits(t, "vec_dot", g.kern.Dot(g.tmp, g.row, 1, g.iqs, g.y), plainFloat(g.blk, y, want, g.tmp))
	})
}

func TestVecDotIQ2XS(t *testing.T) {
	testIQ2Scaled(t, quant.IQ2_XS, 66, func(blk []byte, iqs int, y *q8.Block) int32 {
		return iq2xsSumi(quant.BlockIQ2_XS(blk), iqs, y)
	})
}

func TestVecDotIQ2S(t *testing.T) {
	testIQ2Scaled(t, quant.IQ2_S, 74, func(blk []byte, iqs int, y *q8.Block) int32 {
		return iq2sSumi(quant.BlockIQ2_S(blk), iqs, y)
	})
}

func TestVecDotIQ3XXS(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		g := drawIQ(t, quant.IQ3_XXS)
		v := dequantOne(t, quant.IQ3_XXS, g.blk, dOne)
		ib := g.iqs / 2
		y := &g.y[ib]
		// CPU: v = (0.5+ls)/2 * grid*sign, ls = top 4 bits of the group's 32-bit word.
		ls := int32(g.blk[2+64+4*ib+3] >> 4)
		raw := exactInt(t, exactDot(v[32*ib:], y)/((0.5+float64(ls))*0.5), "raw sum")
		want := (ls*raw + raw/2) / 2
		if got := iq3xxsSumi(quant.BlockIQ3_XXS(g.blk), g.iqs, y); got != want {
			t.Fatalf("sumi = %d, want %d", got, want)
		}
		checkBits(t, "vec_dot", g.kern.Dot(g.tmp, g.row, 1, g.iqs, g.y), plainFloat(g.blk, y, want, g.tmp))
	})
}

func TestVecDotIQ3S(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		g := drawIQ(t, quant.IQ3_S)
		v := dequantOne(t, quant.IQ3_S, g.blk, dOne)
		ib := g.iqs / 2
		y := &g.y[ib]
		// CPU: v = (1 + 2*nibble) * grid*sign: the kernel's int is Σ v·y exactly.
		want := exactInt(t, exactDot(v[32*ib:], y), "Σv·y")
		if got := iq3sSumi(quant.BlockIQ3_S(g.blk), g.iqs, y); got != want {
			t.Fatalf("sumi = %d, want %d", got, want)
		}
		checkBits(t, "vec_dot", g.kern.Dot(g.tmp, g.row, 1, g.iqs, g.y), plainFloat(g.blk, y, want, g.tmp))
	})
}

// iq1Split splits a dequantized IQ1 value (scale 1) v = dl*(g + delta), |delta| = 1/8,
// g in {-1, 0, 1}, into g+1 (what iq1s_grid_gpu holds) and delta.
func iq1Split(t *rapid.T, v float32, dl float64) (gp1 int32, delta float64) {
	q := float64(v) / dl
	g := math.Round(q)
	delta = q - g
	if math.Abs(delta) != 0.125 || math.Abs(g) > 1 {
		t.Fatalf("dequantized %v / %v is not g ± 1/8", v, dl)
	}
	return int32(g) + 1, delta
}

func TestVecDotIQ1S(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		g := drawIQ(t, quant.IQ1_S)
		v := dequantOne(t, quant.IQ1_S, g.blk, dOne)
		ib := g.iqs
		y := &g.y[ib]
		// dl = 2*((qh>>12)&7)+1 from the CPU's reading of qh[ib] (offset 34).
		qh := uint16(g.blk[34+2*ib]) | uint16(g.blk[35+2*ib])<<8
		dl := float64(2*((qh>>12)&7) + 1)
		var want int32
		var delta float64
		for j := 0; j < 32; j++ {
			gp1, dj := iq1Split(t, v[32*ib+j], dl)
			want += gp1 * int32(y.Qs[j])
			if j > 0 && dj != delta {
				t.Fatalf("delta changes inside a group")
			}
			delta = dj
		}
		if got := iq1sSumi(quant.BlockIQ1_S(g.blk), ib, y); got != want {
			t.Fatalf("sumi = %d, want %d", got, want)
		}
		// The kernel's delta is -1 + delta (the -1 turns g+1 back into g).
		d := sim.H2F(f16.Half(uint16(g.blk[0]) | uint16(g.blk[1])<<8))
		d1q := sim.Mul(d, float32(dl))
		x := sim.FMA(sim.H2F(y.D), sim.I2F(want), sim.Mul(float32(-1+delta), sim.H2F(y.S)))
		checkBits(t, "vec_dot", g.kern.Dot(g.tmp, g.row, 1, g.iqs, g.y), sim.FMA(d1q, x, g.tmp))
	})
}

// iq1mScaleOne sets the iq1m_scale_t half of a block_iq1_m (the top nibbles of the four
// uint16 scales, bytes 49, 51, 53, 55) to 1.0 = 0x3C00.
func iq1mScaleOne(b []byte) {
	b[49] &= 0x0F
	b[51] &= 0x0F
	b[53] = b[53]&0x0F | 0xC0
	b[55] = b[55]&0x0F | 0x30
}

func TestVecDotIQ1M(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		g := drawIQ(t, quant.IQ1_M)
		v := dequantOne(t, quant.IQ1_M, g.blk, iq1mScaleOne)
		ib := g.iqs
		y := &g.y[ib]
		// sc0, sc1: the 3-bit scales of the halves, as the CPU reads them.
		scw := int(uint16(g.blk[48+2*(ib/2)]) | uint16(g.blk[49+2*(ib/2)])<<8)
		var dl [2]float64
		for h := 0; h < 2; h++ {
			dl[h] = float64(2*((scw>>(6*(ib%2)+3*h))&7) + 1)
		}
		var sumi [2]int32
		var sumy [4]int32
		var delta [4]float64
		for k := 0; k < 4; k++ {
			for j := 8 * k; j < 8*k+8; j++ {
				gp1, dj := iq1Split(t, v[32*ib+j], dl[k/2])
				sumi[k/2] += gp1 * int32(y.Qs[j])
				sumy[k] += int32(y.Qs[j])
				if j > 8*k && dj != delta[k] {
					t.Fatalf("delta changes inside a grid entry")
				}
				delta[k] = dj
			}
		}
		p := iq1mIntParts(quant.BlockIQ1_M(g.blk), ib, y)
		if p.sumi != sumi || p.sumy != sumy {
			t.Fatalf("sumi, sumy = %v %v, want %v %v", p.sumi, p.sumy, sumi, sumy)
		}
		sc0, sc1 := iq1mScales(quant.BlockIQ1_M(g.blk), ib)
		if float64(sc0) != dl[0] || float64(sc1) != dl[1] {
			t.Fatalf("scales %d %d, want %v", sc0, sc1, dl)
		}
		var sumf [2]float32 // +0
		for k := 0; k < 4; k++ {
			sumf[k/2] = sim.FMA(float32(-1+delta[k]), sim.I2F(sumy[k]), sumf[k/2])
		}
		a0 := sim.Add(sumf[0], sim.I2F(sumi[0]))
		a1 := sim.Add(sumf[1], sim.I2F(sumi[1]))
		r := sim.FMA(a0, float32(dl[0]), sim.Mul(a1, float32(dl[1])))
		d := sim.Mul(sim.H2F(quant.BlockIQ1_M(g.blk).D()), sim.H2F(y.D))
		checkBits(t, "vec_dot", g.kern.Dot(g.tmp, g.row, 1, g.iqs, g.y), sim.FMA(d, r, g.tmp))
	})
}

// TestIQ1Delta checks the two values of the compiled delta expressions.
func TestIQ1Delta(t *testing.T) {
	for _, c := range []struct {
		bit  int32
		step float32
		want float32
	}{
		{0, iq1sDeltaStep, -0.875}, {0x8000, iq1sDeltaStep, -1.125},
		{0, iq1mDeltaStep, -0.875}, {0x08, iq1mDeltaStep, -1.125},
	} {
		if got := iq1Delta(c.bit, c.step); got != c.want {
			t.Errorf("iq1Delta(%#x, %v) = %v, want %v", c.bit, c.step, got, c.want)
		}
	}
}
