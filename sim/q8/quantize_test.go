package q8

import (
	"math"
	"testing"

	"github.com/ggsim/ggsim/f16"
	"github.com/ggsim/ggsim/sim"
	"pgregory.net/rapid"
)

func h(b uint16) f16.Half { return f16.Half(b) }

// TestQuantizeBlockHand checks blocks whose results follow from the model by hand.
func TestQuantizeBlockHand(t *testing.T) {
	inf := float32(math.Inf(1))
	nan := float32(math.NaN())
	k := math.Float32frombits(0x3c010204) // RN(1/127)
	tests := []struct {
		name string
		x    map[int]float32 // other values 0
		d, s f16.Half
		q    map[int]int8 // other quants 0
	}{
		{name: "all zero", d: 0, s: 0},
		// amax = 1: d = 1*K = K exactly; x*rcp(K) ≈ 127.00000x rounds to 127.
		{name: "single one", x: map[int]float32{0: 1}, d: f16.FromFloat32(k), s: h(0x3c00), q: map[int]int8{0: 127}},
		// amax = 1e-4: d = 7.87e-7 is a binary16 subnormal: 7.87e-7/2^-24 = 13.2 -> 13.
		{name: "half-subnormal scale", x: map[int]float32{5: -1e-4}, d: h(0x000d), s: f16.FromFloat32(-1e-4), q: map[int]int8{5: -127}},
		// |sum| = 32*3000 = 96000 > 65504: s overflows to +Inf; d = 3000/127 = 23.6.
		{name: "sum beyond 65504", x: allOf(3000), d: f16.FromFloat32(sim.Mul(3000, k)), s: h(0x7c00), q: allQ(127)},
		{name: "negative sum beyond 65504", x: allOf(-3000), d: f16.FromFloat32(sim.Mul(3000, k)), s: h(0xfc00), q: allQ(-127)},
		// Subnormal inputs are flushed: amax = 0, everything 0.
		{name: "subnormal inputs", x: allOf(1e-40), d: 0, s: 0},
		// A NaN is ignored by fmaxf; its quant is roundf(NaN) -> 0; the sum is NaN.
		{name: "NaN input", x: map[int]float32{0: 2, 3: nan}, d: f16.FromFloat32(sim.Mul(2, k)), s: f16.CanonicalNaN, q: map[int]int8{0: 127}},
		// amax = +Inf: d = Inf, rcp(Inf) = 0: x*0 = 0 for finite x, Inf*0 = NaN -> 0.
		{name: "Inf input", x: map[int]float32{0: inf, 1: 1}, d: h(0x7c00), s: h(0x7c00)},
		// amax = 1e-37 (normal) but d = amax*K = 7.9e-40 is subnormal and flushed: rcp(0)
		// = +Inf, x*Inf = ±Inf, F2I saturates to 0x7fffffff (low byte 0xff = -1) or
		// 0x80000000 (low byte 0); 0*Inf = NaN -> 0. (Model prediction from the SASS
		// instruction sequence; not measured on the device.)
		{name: "scale flushes", x: map[int]float32{0: 1e-37, 1: -1e-37, 2: 5e-38}, d: 0, s: f16.FromFloat32(5e-38), q: map[int]int8{0: -1, 1: 0, 2: -1}},
	}
	for _, tc := range tests {
		var x [32]float32
		for i, v := range tc.x {
			x[i] = v
		}
		b := QuantizeBlock(&x)
		if b.D != tc.d || b.S != tc.s {
			t.Errorf("%s: ds = {%#04x, %#04x}, want {%#04x, %#04x}", tc.name, uint16(b.D), uint16(b.S), uint16(tc.d), uint16(tc.s))
		}
		for i := range b.Qs {
			if b.Qs[i] != tc.q[i] {
				t.Errorf("%s: q[%d] = %d, want %d", tc.name, i, b.Qs[i], tc.q[i])
			}
		}
	}
}

func allOf(v float32) map[int]float32 {
	m := map[int]float32{}
	for i := 0; i < 32; i++ {
		m[i] = v
	}
	return m
}

func allQ(v int8) map[int]int8 {
	m := map[int]int8{}
	for i := 0; i < 32; i++ {
		m[i] = v
	}
	return m
}

// TestSumTree checks that s is the xor-butterfly tree sum, not a sequential sum: with
// x = {1, 2^-24 ×31} the tree adds the small values among themselves first.
func TestSumTree(t *testing.T) {
	var x [32]float32
	x[0] = 1
	for i := 1; i < 32; i++ {
		x[i] = 1.0 / (1 << 24)
	}
	// Sequential: 1 + 2^-24 rounds back to 1 each time -> 1. Tree: level 1 pairs
	// (x_l, x_{l+16}) give 1+2^-24 -> 1 (tie to even) for l = 0 and 2^-23 for l = 1..15;
	// the 15 values 2^-23 sum exactly to 15*2^-23 before meeting 1, total
	// 1 + 15*2^-23 = 1.0000018; f2h of that is 1.
	b := QuantizeBlock(&x)
	var xs [32]float32 = x
	want := sim.ReduceSumTree(xs[:])
	if want != 1+15.0/(1<<23) {
		t.Fatalf("tree sum = %v", want)
	}
	if b.S != f16.FromFloat32(want) {
		t.Errorf("s = %#04x, want %#04x", uint16(b.S), uint16(f16.FromFloat32(want)))
	}
}

func TestQuantizeQ8_1Padding(t *testing.T) {
	const k, rows = 100, 3
	x := make([]float32, k*rows)
	for i := range x {
		x[i] = float32(i%17) - 8
	}
	bs, err := QuantizeQ8_1(x, k, rows)
	if err != nil {
		t.Fatal(err)
	}
	if len(bs) != rows*512/32 {
		t.Fatalf("%d blocks, want %d", len(bs), rows*16)
	}
	for r := 0; r < rows; r++ {
		for i := 0; i < 16; i++ {
			var v [32]float32
			if i*32 < k {
				copy(v[:], x[r*k+i*32:r*k+k])
			}
			if got, want := bs[r*16+i], QuantizeBlock(&v); got != want {
				t.Errorf("row %d block %d = %+v, want %+v", r, i, got, want)
			}
			if i >= 4 && bs[r*16+i] != (Block{}) {
				t.Errorf("row %d padding block %d not zero", r, i)
			}
		}
	}
	if _, err := QuantizeQ8_1(x, k, rows+1); err == nil {
		t.Error("no error for a short x")
	}
	if _, err := QuantizeQ8_1(nil, 0, 1); err == nil {
		t.Error("no error for k = 0")
	}
}

// genBlock draws 32 finite activations of a random magnitude.
func genBlock(t *rapid.T) [32]float32 {
	scale := float32(math.Pow(2, float64(rapid.IntRange(-100, 60).Draw(t, "exp"))))
	var x [32]float32
	for i := range x {
		x[i] = rapid.Float32Range(-1, 1).Draw(t, "x") * scale
	}
	return x
}

// TestQuantizeBlockProperties: |q| <= 127; q*d within half a step (plus the half
// rounding of d) of x when d is a normal binary16; the wire form round-trips.
func TestQuantizeBlockProperties(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		x := genBlock(t)
		b := QuantizeBlock(&x)
		var amax float64
		for _, v := range x {
			amax = math.Max(amax, math.Abs(float64(sim.FTZ(v))))
		}
		for i, q := range b.Qs {
			if q == -128 { // the only int8 outside [-127, 127]
				t.Fatalf("q[%d] = %d", i, q)
			}
		}
		dh := float64(b.D.ToFloat32())
		if amax > 127*math.Pow(2, -126) && dh >= math.Pow(2, -14) && !b.D.IsInf() {
			step := amax / 127
			for i, q := range b.Qs {
				xi := float64(sim.FTZ(x[i]))
				// |x/d - q| <= 0.5 (+ MUFU error), and |d_half - d| <= 2^-11 d.
				if err := math.Abs(xi - float64(q)*dh); err > step*(0.5+127*math.Pow(2, -11)+1e-5) {
					t.Fatalf("x[%d] = %v, q = %d, d = %v: error %v > bound", i, xi, q, dh, err)
				}
			}
		}
		if amax == 0 && (b.D != 0 || b.Qs != [32]int8{}) {
			t.Fatalf("zero block quantized to %+v", b)
		}
		w := b.AppendBytes(nil)
		if len(w) != BlockBytes || FromBytes(w) != b {
			t.Fatalf("wire form does not round-trip: %x", w)
		}
	})
}
