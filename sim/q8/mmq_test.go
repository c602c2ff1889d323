package q8

import (
	"math"
	"testing"

	"github.com/ggsim/ggsim/f16"
	"github.com/ggsim/ggsim/sim"
	"pgregory.net/rapid"
)

func TestQuantizeBlockMMQHand(t *testing.T) {
	var zero [128]float32
	for _, l := range []Layout{D4, DS4, D2S6} {
		if b := QuantizeBlockMMQ(&zero, l); b != (BlockMMQ{}) {
			t.Errorf("%v: zero block gives %+v", l, b)
		}
	}
	// Values 0..127 scaled: group g of 32 has amax = 32g+31.
	var x [128]float32
	for i := range x {
		x[i] = float32(i)
	}
	d4 := QuantizeBlockMMQ(&x, D4)
	ds4 := QuantizeBlockMMQ(&x, DS4)
	d2 := QuantizeBlockMMQ(&x, D2S6)
	for g := 0; g < 4; g++ {
		amax := float32(32*g + 31)
		dinv := sim.Mul(sim.Rcp(amax), 127)
		if got, want := d4.D4(g), sim.Rcp(dinv); got != want {
			t.Errorf("D4 d[%d] = %v, want %v", g, got, want)
		}
		d, s := ds4.DS4(g)
		var sum float32
		for i := 32 * g; i < 32*g+32; i++ {
			sum += float32(i) // exact: integers below 2^24
		}
		if d != f16.FromFloat32(d4.D4(g)) || s != f16.FromFloat32(sum) {
			t.Errorf("DS4[%d] = {%#04x, %#04x}, want {%#04x, %#04x}", g, uint16(d), uint16(s),
				uint16(f16.FromFloat32(d4.D4(g))), uint16(f16.FromFloat32(sum)))
		}
		// The top value of each group quantizes to 127.
		if d4.Qs[32*g+31] != 127 || ds4.Qs != d4.Qs {
			t.Errorf("group %d: top quant %d (DS4 and D4 quants equal: %v)", g, d4.Qs[32*g+31], ds4.Qs == d4.Qs)
		}
	}
	// D2S6: scales of 64-value groups, sums of 16-value groups 0..5 (values 0..95).
	for g := 0; g < 2; g++ {
		amax := float32(64*g + 63)
		want := f16.FromFloat32(sim.Rcp(sim.Mul(sim.Rcp(amax), 127)))
		if d2.D2S6(g) != want {
			t.Errorf("D2S6 d[%d] = %#04x, want %#04x", g, uint16(d2.D2S6(g)), uint16(want))
		}
	}
	for g := 0; g < 6; g++ {
		var sum float32
		for i := 16 * g; i < 16*g+16; i++ {
			sum += float32(i)
		}
		if d2.D2S6(2+g) != f16.FromFloat32(sum) {
			t.Errorf("D2S6 sum[%d] = %#04x, want %#04x", g, uint16(d2.D2S6(2+g)), uint16(f16.FromFloat32(sum)))
		}
	}
	if d2.Qs[63] != 127 || d2.Qs[127] != 127 {
		t.Errorf("D2S6 top quants %d %d", d2.Qs[63], d2.Qs[127])
	}
}

// TestQuantizeBlockMMQFlush: amax < 127*2^-128 makes d_inv = 127*rcp(amax) overflow to
// +Inf: q = ±Inf -> low byte of 0x7fffffff / 0x80000000, d = rcp(Inf) = 0 (model
// prediction from the SASS instruction sequence).
func TestQuantizeBlockMMQFlush(t *testing.T) {
	var x [128]float32
	x[0], x[1] = 2e-37, -2e-37
	b := QuantizeBlockMMQ(&x, D4)
	if b.Qs[0] != -1 || b.Qs[1] != 0 || b.Qs[2] != 0 || b.D4(0) != 0 {
		t.Errorf("q = %d %d %d, d = %v", b.Qs[0], b.Qs[1], b.Qs[2], b.D4(0))
	}
	x[5] = float32(math.NaN())
	x[40] = float32(math.Inf(-1))
	b = QuantizeBlockMMQ(&x, DS4)
	if b.Qs[5] != 0 {
		t.Errorf("NaN quant %d", b.Qs[5])
	}
	// Group 1: amax = Inf, d_inv = 127*rcp(Inf) = 0, q = roundf(-Inf*0 = NaN) = 0, d = rcp(0) = Inf.
	d, s := b.DS4(1)
	if b.Qs[40] != 0 || d != 0x7c00 || s != 0xfc00 {
		t.Errorf("Inf group: q %d, ds {%#04x, %#04x}", b.Qs[40], uint16(d), uint16(s))
	}
}

func TestQuantizeMMQ8_1Order(t *testing.T) {
	const k, ncols, nch = 200, 3, 2 // padded to 512: 4 k-blocks per column
	x := make([]float32, k*ncols*nch)
	for i := range x {
		x[i] = float32(math.Sin(float64(i)))
	}
	for _, l := range []Layout{D4, DS4, D2S6} {
		bs, err := QuantizeMMQ8_1(x, k, ncols, nch, l)
		if err != nil {
			t.Fatal(err)
		}
		if len(bs) != nch*ncols*4 {
			t.Fatalf("%d blocks", len(bs))
		}
		for c := 0; c < nch; c++ {
			for j := 0; j < ncols; j++ {
				row := x[(c*ncols+j)*k:][:k]
				for kb := 0; kb < 4; kb++ {
					var v [128]float32
					if kb*128 < k {
						copy(v[:], row[kb*128:])
					}
					if got, want := bs[c*ncols*4+kb*ncols+j], QuantizeBlockMMQ(&v, l); got != want {
						t.Errorf("%v: channel %d column %d k-block %d misplaced", l, c, j, kb)
					}
				}
			}
		}
		offs := []int{0, k, 2 * k}
		g, err := QuantizeMMQ8_1Gather(x, k, offs, l)
		if err != nil {
			t.Fatal(err)
		}
		for i := range g {
			if g[i] != bs[i] {
				t.Fatalf("%v: gather differs at block %d", l, i)
			}
		}
	}
	if _, err := QuantizeMMQ8_1(x, 6, 1, 1, D4); err == nil {
		t.Error("no error for k not a multiple of 4 / wrong length")
	}
	if _, err := QuantizeMMQ8_1Gather(x, k, []int{len(x) - k + 1}, D4); err == nil {
		t.Error("no error for a gather offset past the end")
	}
	if _, err := QuantizeMMQ8_1(x[:8], 8, 1, 1, Layout(7)); err == nil {
		t.Error("no error for an unknown layout")
	}
}

func TestQuantizeBlockMMQProperties(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		scale := float32(math.Pow(2, float64(rapid.IntRange(-100, 60).Draw(t, "exp"))))
		var x [128]float32
		for i := range x {
			x[i] = rapid.Float32Range(-1, 1).Draw(t, "x") * scale
		}
		l := Layout(rapid.IntRange(0, 2).Draw(t, "layout"))
		b := QuantizeBlockMMQ(&x, l)
		for i, q := range b.Qs {
			if q == -128 { // the only int8 outside [-127, 127]
				t.Fatalf("q[%d] = %d", i, q)
			}
		}
		if l == D4 {
			for g := 0; g < 4; g++ {
				var amax float64
				for _, v := range x[32*g : 32*g+32] {
					amax = math.Max(amax, math.Abs(float64(sim.FTZ(v))))
				}
				if amax < 1e-30 {
					continue
				}
				d := float64(b.D4(g))
				if math.Abs(d-amax/127) > 4*math.Pow(2, -23)*amax/127 {
					t.Fatalf("d[%d] = %v, amax/127 = %v", g, d, amax/127)
				}
				for i := 32 * g; i < 32*g+32; i++ {
					xi := float64(sim.FTZ(x[i]))
					if e := math.Abs(xi - float64(b.Qs[i])*d); e > d*(0.5+1e-5) {
						t.Fatalf("x[%d] = %v, q = %d, d = %v", i, xi, b.Qs[i], d)
					}
				}
			}
		}
		w := b.AppendBytes(nil)
		if len(w) != BlockMMQBytes || MMQFromBytes(w) != b {
			t.Fatalf("wire form does not round-trip")
		}
	})
}
