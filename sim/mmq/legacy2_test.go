package mmq

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"pgregory.net/rapid"

	"github.com/ggsim/ggsim/f16"
	"github.com/ggsim/ggsim/quant"
	"github.com/ggsim/ggsim/sim"
	"github.com/ggsim/ggsim/sim/q8"
)

// Tests of the loads of legacy2.go and iq4.go against quant's dequantizers, and of
// MulMat against the fp64 product of the dequantized weights. The weights are random
// bytes whose scale fields are set to moderate finite values, so that every product
// the comparison makes is exact or rounded the same way on both sides.

// typeCase says how to make random weights of one type and what value the kernel gives
// the loaded int8 at position k of an iteration.
type typeCase struct {
	t quant.Type
	// fix sets the scale fields of one block to moderate finite values.
	fix func(blk []byte, r *rand.Rand)
	// value is the dequantized weight the vec_dot's float math applies to x.qs[k]:
	// float(q)*x_df (D4 types) or float(q)*dm.x + dm.y (DS4 types), in float32.
	value func(x *xTile, k int) float32
	// ds4 reports whether the y layout is DS4 (x.dm holds {d, m}).
	ds4 bool
}

// randHalf returns a binary16 of random sign and mantissa with the biased exponent in
// [lo, hi] (15 is 2^0).
func randHalf(r *rand.Rand, lo, hi int) f16.Half {
	e := lo + r.IntN(hi-lo+1)
	return f16.Half(uint16(r.IntN(2))<<15 | uint16(e)<<10 | uint16(r.IntN(1024)))
}

func putHalf(p []byte, h f16.Half) { p[0], p[1] = byte(h), byte(h>>8) }

// fixD sets the half at offset 0 (d) and, with dm, the one at offset 2 (m).
func fixD(dm bool) func(blk []byte, r *rand.Rand) {
	return func(blk []byte, r *rand.Rand) {
		putHalf(blk, randHalf(r, 5, 20))
		if dm {
			putHalf(blk[2:], randHalf(r, 5, 20))
		}
	}
}

func valueDF(x *xTile, k int) float32 { return float32(x.qs[k]) * x.df[k/32] }

func valueDM(x *xTile, k int) float32 {
	dm := x.dm[k/32]
	return float32(float32(x.qs[k])*dm[0]) + dm[1]
}

var legacy2Cases = []typeCase{
	{t: quant.Q4_1, fix: fixD(true), value: valueDM, ds4: true},
	{t: quant.Q5_0, fix: fixD(false), value: valueDF},
	{t: quant.Q5_1, fix: fixD(true), value: valueDM, ds4: true},
	{t: quant.Q1_0, fix: fixD(false), value: valueDF},
	{t: quant.Q2_0, fix: fixD(false), value: valueDF},
}

// randomWeights returns n rows of K values of c.t: random bytes, scales fixed.
func randomWeights(c typeCase, r *rand.Rand, n, K int) []byte {
	bs := c.t.TypeSize()
	w := make([]byte, n*K/c.t.BlockSize()*bs)
	for i := range w {
		w[i] = byte(r.Uint32())
	}
	for o := 0; o < len(w); o += bs {
		c.fix(w[o:o+bs], r)
	}
	return w
}

// checkLoad loads every iteration of a few random rows and compares each loaded value,
// as the vec_dot scales it, with quant.DequantizeRow bit for bit.
func checkLoad(t *testing.T, c typeCase) {
	kn := kernels[c.t]
	if kn == nil {
		t.Fatalf("no kernel registered for %v", c.t)
	}
	rapid.Check(t, func(rt *rapid.T) {
		seed := rapid.Uint64().Draw(rt, "seed")
		r := rand.New(rand.NewPCG(seed, 0))
		const K, N = 512, 3
		qk := c.t.BlockSize()
		w := randomWeights(c, r, N, K)
		rs := len(w) / N
		m := &matrix{data: w, bs: c.t.TypeSize(), stride: K / qk}
		deq := make([]float32, K)
		for i := 0; i < N; i++ {
			if err := quant.DequantizeRow(c.t, w[i*rs:(i+1)*rs], deq); err != nil {
				rt.Fatal(err)
			}
			for kb0 := 0; kb0 < K/qk; kb0 += iterK / qk {
				var x xTile
				kn.load(m, i, kb0, &x)
				for k := 0; k < iterK; k++ {
					got, want := c.value(&x, k), deq[kb0*qk+k]
					if math.Float32bits(got) != math.Float32bits(want) {
						rt.Fatalf("row %d value %d: loaded q=%d gives %g, dequantized %g", i, kb0*qk+k, x.qs[k], got, want)
					}
				}
			}
		}
	})
}

// checkMulMatBound runs MulMat on the H200 (fallback tiles: N = 130, stream-K) and
// bounds each output's distance from the fp64 product of the dequantized weights and
// the float activations by what the q8_1 activations lose: per value |w - m|·|ŷ - b|
// ≤ |w - m|·0.51·d_y (d_y the activation block's scale; with the half d of DS4 the
// values are q·h(d) with |q| ≤ 127, which adds 127·2^-11·d, so d_y = 1.15·h(d) there), per 32-value block |m|·|s - Σb| ≤ |m|·(2^-10·|Σb| + 1e-6) (the half sum of DS4),
// plus 1e-5 of Σ|w·b| for float32 rounding.
func checkMulMatBound(t *testing.T, c typeCase) {
	dev, err := sim.Lookup("H200")
	if err != nil {
		t.Fatal(err)
	}
	const K, N, M = 512, 130, 20
	qk := c.t.BlockSize()
	for _, seed := range []uint64{1, 2, 3} {
		r := rand.New(rand.NewPCG(seed, 7))
		w := randomWeights(c, r, N, K)
		rs := len(w) / N
		b := make([]float32, K*M)
		for i := range b {
			b[i] = float32(r.NormFloat64())
		}
		p, err := MakePlan(dev, c.t, K, N, M)
		if err != nil {
			t.Fatal(err)
		}
		out, err := MulMat(dev, c.t, w, K, N, b, M, p)
		if err != nil {
			t.Fatal(err)
		}
		layout := q8.D4
		if c.ds4 {
			layout = q8.DS4
		}
		y, err := q8.QuantizeMMQ8_1(b, K, M, 1, layout)
		if err != nil {
			t.Fatal(err)
		}
		m := &matrix{data: w, bs: c.t.TypeSize(), stride: K / qk}
		deq := make([]float32, K)
		for i := 0; i < N; i++ {
			if err := quant.DequantizeRow(c.t, w[i*rs:(i+1)*rs], deq); err != nil {
				t.Fatal(err)
			}
			offs := make([]float64, K/32) // m of each 32-value block (DS4 types)
			if c.ds4 {
				for kb0 := 0; kb0 < K/qk; kb0 += iterK / qk {
					var x xTile
					kernels[c.t].load(m, i, kb0, &x)
					for s := 0; s < 8; s++ {
						offs[kb0*qk/32+s] = float64(x.dm[s][1])
					}
				}
			}
			for j := 0; j < M; j++ {
				var ref, bound, abs float64
				for g := 0; g < K/32; g++ {
					yb := &y[(g/4)*M+j]
					var dy float64
					if c.ds4 {
						d, _ := yb.DS4(g % 4)
						dy = float64(sim.H2F(d)) * 1.15
					} else {
						dy = float64(yb.D4(g % 4))
					}
					var sb float64
					for k := 32 * g; k < 32*g+32; k++ {
						wk, bk := float64(deq[k]), float64(b[j*K+k])
						ref += wk * bk
						abs += math.Abs(wk * bk)
						bound += math.Abs(wk-offs[g]) * 0.51 * dy
						sb += bk
					}
					bound += math.Abs(offs[g]) * (math.Abs(sb)*0x1p-10 + 1e-6)
				}
				bound += 1e-5 * abs
				if got := float64(out[j*N+i]); !(math.Abs(got-ref) <= bound) {
					t.Fatalf("seed %d: dst[%d,%d] = %g, fp64 %g, |diff| %g > bound %g", seed, i, j, got, ref, math.Abs(got-ref), bound)
				}
			}
		}
	}
}

func TestLoadLegacy2(t *testing.T) {
	for _, c := range legacy2Cases {
		t.Run(c.t.String(), func(t *testing.T) { checkLoad(t, c) })
	}
}

func TestMulMatBoundLegacy2(t *testing.T) {
	for _, c := range legacy2Cases {
		t.Run(c.t.String(), func(t *testing.T) { checkMulMatBound(t, c) })
	}
}

// ExampleMulMat_legacy multiplies 128 rows of a Q4_1 matrix by 16 columns as mul_mat_q
// does on an H200. The output differs from the fp64 product of the dequantized weights
// mostly by the q8_1 quantization of the activations.
func ExampleMulMat_legacy() {
	dev, err := sim.Lookup("H200")
	if err != nil {
		panic(err)
	}
	const K, N, M = 256, 128, 16
	w := make([]float32, N*K)
	for i := range w {
		w[i] = float32(math.Sin(float64(i) * 0.37))
	}
	a := make([]byte, N*K/quant.Q4_1.BlockSize()*quant.Q4_1.TypeSize())
	if err := quant.QuantizeRowRef(quant.Q4_1, w, a); err != nil {
		panic(err)
	}
	b := make([]float32, K*M)
	for i := range b {
		b[i] = float32(math.Cos(float64(i)*0.011)) + 0.5
	}
	p, err := MakePlan(dev, quant.Q4_1, K, N, M)
	if err != nil {
		panic(err)
	}
	dst, err := MulMat(dev, quant.Q4_1, a, K, N, b, M, p)
	if err != nil {
		panic(err)
	}
	deq := make([]float32, K)
	if err := quant.DequantizeRow(quant.Q4_1, a[:len(a)/N], deq); err != nil {
		panic(err)
	}
	var ref float64 // row 0 of the dequantized weights times column 0, in fp64
	for k := range deq {
		ref += float64(deq[k]) * float64(b[k])
	}
	fmt.Printf("tile %dx%d, dst[0,0] = %.6g (fp64 of the dequantized weights %.6g)\n", p.I, p.J, dst[0], ref)
	// Output:
	// tile 128x16, dst[0,0] = 4.78405 (fp64 of the dequantized weights 4.74019)
}
