package fp16path_test

import (
	"math"
	"testing"

	"pgregory.net/rapid"

	"github.com/ggsim/ggsim/f16"
	"github.com/ggsim/ggsim/fp16path"
	"github.com/ggsim/ggsim/quant"
	"github.com/ggsim/ggsim/sim"
)

// TestOverflowWorstCase proves "no overflow is possible" for every type by the
// monotonicity argument of the package documentation: binary16 round-to-nearest is
// monotone and odd, so with every term |c·2^-24·h| <= T = maxcode·2^-24·32752, each
// accumulator half satisfies |acc_p| <= A_p, where A_0 = 0 and A_{p+1} = RN16(A_p + T):
// the chain of HFMA2 steps with the largest code and the largest prescaled half. The test
// computes that chain with the hardware operation (f16.FMA on the operand bit patterns
// the kernel uses) for the 8 steps of a half, and for 16 (were one half to take all 16
// terms), and checks it stays finite and below 8 (16). It is the worst case over all
// inputs, not a sample.
func TestOverflowWorstCase(t *testing.T) {
	hmax := f16.FromFloat32(fp16path.MaxPrescaled)
	if hmax.ToFloat32() != fp16path.MaxPrescaled || f16.Half(hmax+1).ToFloat32() != 1<<15 {
		t.Fatalf("32752 is not the largest half below 2^15")
	}
	for _, typ := range fp16path.Types() {
		mc := fp16path.MaxCode(typ)
		var a f16.Half
		for p := 1; p <= 16; p++ {
			a = f16.FMA(f16.Half(mc), hmax, a)
			v := float64(a.ToFloat32())
			if a.IsInf() || a.IsNaN() || (p <= 8 && v >= 8) || v >= 16 {
				t.Fatalf("%v: A_%d = %g", typ, p, v)
			}
			if p == 8 {
				t.Logf("%-7v max code %3d: every accumulator half is at most A_8 = %g (exact 8·maxcode·32752·2^-24 = %g)", typ, mc, v, 8*float64(mc)*32752*0x1p-24)
			}
		}
	}
	// The same chain with code 255 (the largest any type has) and the negative half
	// gives -A: the bound is symmetric.
	var a, b f16.Half
	for p := 0; p < 8; p++ {
		a = f16.FMA(255, hmax, a)
		b = f16.FMA(255, hmax|0x8000, b)
	}
	if b != a|0x8000 {
		t.Fatalf("the negative chain ends at %#04x, not -%#04x", b, a)
	}
}

// TestEdgeGroups checks one lane's group (the HFMA2 loop of 16 terms, 8 per half, and
// the float32 a = lo + hi) at the edges: codes at 0, at the type's maximum or anywhere;
// prescaled halves at ±32752, the smallest subnormal 2^-24, zero or anywhere. Both halves
// stay finite and below 8, and a is within the loop's rounding bound (8 steps per half,
// each at most 2^-11 of the half's Σ|c·h|·2^-24 or 2^-25, plus the FADD) of the exact
// Σ c·h·2^-24. rapid prints the seed of a failure.
func TestEdgeGroups(t *testing.T) {
	types := fp16path.Types()
	rapid.Check(t, func(rt *rapid.T) {
		typ := rapid.SampledFrom(types).Draw(rt, "type")
		mc := fp16path.MaxCode(typ)
		var codes [16]uint8
		h := make([]f16.Half, 16)
		for k := range codes {
			switch rapid.IntRange(0, 2).Draw(rt, "code kind") {
			case 0:
				codes[k] = uint8(mc)
			case 1:
				codes[k] = 0
			default:
				codes[k] = uint8(rapid.IntRange(0, mc).Draw(rt, "code"))
			}
			switch rapid.IntRange(0, 3).Draw(rt, "h kind") {
			case 0:
				h[k] = f16.FromFloat32(fp16path.MaxPrescaled)
			case 1:
				h[k] = 1 // 2^-24
			case 2:
				h[k] = 0
			default:
				h[k] = f16.FromFloat32(float32(rapid.Float64Range(0, fp16path.MaxPrescaled).Draw(rt, "h")))
			}
			if rapid.Bool().Draw(rt, "neg") {
				h[k] |= 0x8000
			}
		}
		acc := fp16path.HalfDot(fp16path.Unpack(codes), h)
		if acc.Lo.IsInf() || acc.Hi.IsInf() || acc.Lo.IsNaN() || acc.Hi.IsNaN() ||
			math.Abs(float64(acc.Lo.ToFloat32())) >= 8 || math.Abs(float64(acc.Hi.ToFloat32())) >= 8 {
			rt.Fatalf("accumulator %#08x out of range", acc.Bits())
		}
		var exact, l1 float64
		for k := range codes {
			p := float64(float64(codes[k]) * 0x1p-24 * float64(h[k].ToFloat32())) // exact
			exact += p
			l1 += math.Abs(p)
		}
		// The loop's rounding: 8 steps per half, each at most 2^-11 of a partial sum
		// (<= l1 of that half) or 2^-25.
		a := float64(sim.Add(sim.H2F(acc.Lo), sim.H2F(acc.Hi)))
		if d := math.Abs(a - exact); d > 8*(0x1p-11*l1+0x1p-25)+0x1p-24*math.Abs(a) {
			rt.Fatalf("lo+hi = %g, exact Σ c·h·2^-24 = %g: error %g above the bound", a, exact, d)
		}
	})
}

// TestEdgeMatMul runs whole matmuls at the edges of both operands: weight rows of one
// magnitude with random signs, per 16-value group all equal or mixed (the quantizers then
// use each type's extreme codes; the test checks that every type's maximum code occurs
// over the run) and activations
// all of one magnitude m·2^s with random signs, where m = 32752 (every half at the
// largest prescaled value) or 32760 - 1/64 (just below the rounding edge) and s from -100
// to 100, over 1..8 columns for the multi-column types. Every output is finite and within
// Bound of the fp64 value. rapid prints the seed of a failure.
func TestEdgeMatMul(t *testing.T) {
	drawn, maxSeen := map[quant.Type]bool{}, map[quant.Type]bool{}
	rapid.Check(t, func(rt *rapid.T) {
		typ := rapid.SampledFrom(fp16path.Types()).Draw(rt, "type")
		M := 1
		if fp16path.MultiColumn(typ) {
			M = rapid.IntRange(1, fp16path.MaxColumns).Draw(rt, "columns")
		}
		const K, N = 512, 2
		A := float32(math.Ldexp(1, rapid.IntRange(-10, 4).Draw(rt, "log2 weight")))
		w := make([]float32, K*N)
		for g := 0; g < K*N/16; g++ {
			mixed := rapid.Bool().Draw(rt, "mixed signs")
			neg := rapid.Bool().Draw(rt, "weight sign")
			for k := 0; k < 16; k++ {
				w[16*g+k] = A
				if neg != (mixed && k%3 == 0) {
					w[16*g+k] = -A
				}
			}
		}
		rs, _ := typ.RowSize(K)
		x := make([]byte, int(rs)*N)
		for i := 0; i < N; i++ {
			if err := quant.QuantizeRowRef(typ, w[i*K:(i+1)*K], x[i*int(rs):(i+1)*int(rs)]); err != nil {
				rt.Fatal(err)
			}
		}
		drawn[typ] = true
		bs := int(rs) / (K / typ.BlockSize())
		for i := 0; i < N; i++ {
			for g := 0; g < K/16; g++ {
				blk := g * 16 / typ.BlockSize()
				row := x[i*int(rs):]
				codes, _, _, _, _ := fp16path.GroupOf(typ, row[blk*bs:(blk+1)*bs], g%(typ.BlockSize()/16))
				for _, c := range codes {
					maxSeen[typ] = maxSeen[typ] || int(c) == fp16path.MaxCode(typ)
				}
			}
		}
		m := float64(fp16path.MaxPrescaled)
		if rapid.Bool().Draw(rt, "edge") {
			m = 32760 - 1.0/64
		}
		y := make([]float32, K*M)
		for k := range y {
			y[k] = float32(math.Ldexp(m, rapid.IntRange(-100, 100).Draw(rt, "log2 y")))
			if rapid.Bool().Draw(rt, "y sign") {
				y[k] = -y[k]
			}
		}
		got, err := fp16path.MulMat(typ, x, K, N, y, M, nil)
		if err != nil {
			rt.Fatal(err)
		}
		deq := make([]float32, K)
		for j := 0; j < M; j++ {
			yj := y[j*K : (j+1)*K]
			bound, err := fp16path.Bound(typ, x, K, N, yj, nil)
			if err != nil {
				rt.Fatal(err)
			}
			for i := 0; i < N; i++ {
				if err := quant.DequantizeRow(typ, x[i*int(rs):(i+1)*int(rs)], deq); err != nil {
					rt.Fatal(err)
				}
				var ref float64
				for k := range deq {
					ref += float64(float64(deq[k]) * float64(yj[k])) // no fused multiply-add
				}
				v := got[j*N+i]
				if math.IsInf(float64(v), 0) || math.IsNaN(float64(v)) || !(math.Abs(float64(v)-ref) <= bound[i]) {
					rt.Fatalf("%v column %d row %d: %g, fp64 %g, bound %g", typ, j, i, v, ref, bound[i])
				}
			}
		}
	})
	for typ := range drawn {
		if !maxSeen[typ] {
			t.Errorf("%v: the type's maximum code %d never occurred: the test did not reach the largest weights", typ, fp16path.MaxCode(typ))
		}
	}
}
