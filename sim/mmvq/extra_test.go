package mmvq

import (
	"testing"

	"pgregory.net/rapid"

	"github.com/ggsim/ggsim/quant"
	"github.com/ggsim/ggsim/sim"
	"github.com/ggsim/ggsim/sim/q8"
)

// Tests of the NVFP4, Q1_0 and Q2_0 vec_dots against the CPU dequantizers, as in
// iq_test.go.

func TestVecDotNVFP4(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		g := drawIQ(t, quant.NVFP4)
		// Scale bytes 0x38 (E4M3 1.0) decode to a known positive d on the CPU; the values
		// divided by it are the kvalues_mxfp4 codes.
		v := dequantOne(t, quant.NVFP4, g.blk, func(b []byte) { b[0], b[1], b[2], b[3] = 0x38, 0x38, 0x38, 0x38 })
		d1 := float64(quant.UE4M3ToFP32(0x38))
		var want [2]int32
		for i := 0; i < 2; i++ {
			is := (g.iqs + 2*i) / 2 // 16-value sub-block
			y := &g.y[is/2]
			var s float64
			for m := 0; m < 16; m++ {
				s += float64(v[16*is+m]) / d1 * float64(y.Qs[16*(is%2)+m])
			}
			want[i] = exactInt(t, s, "Σ code·y")
		}
		got := nvfp4Sumi(quant.BlockNVFP4(g.blk), g.iqs, g.y)
		if got != want {
			t.Fatalf("sumi = %v, want %v", got, want)
		}
		var sum float32 // +0
		for i := 0; i < 2; i++ {
			is := (g.iqs + 2*i) / 2
			d := sim.Mul(quant.UE4M3ToFP32CUDA(g.blk[is]), sim.H2F(g.y[is/2].D))
			sum = sim.FMA(d, sim.I2F(want[i]), sum)
		}
		checkBits(t, "vec_dot", g.kern.Dot(g.tmp, g.row, 1, g.iqs, g.y), sim.Add(sum, g.tmp))
	})
}

func TestVecDotQ1_0(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		g := drawIQ(t, quant.Q1_0)
		v := dequantOne(t, quant.Q1_0, g.blk, dOne) // ±1
		y := &g.y[g.iqs]
		want := exactInt(t, exactDot(v[32*g.iqs:], y), "Σ±y")
		if got := q1_0Sumi(quant.BlockQ1_0(g.blk), g.iqs, y); got != want {
			t.Fatalf("sumi = %d, want %d", got, want)
		}
		checkBits(t, "vec_dot", g.kern.Dot(g.tmp, g.row, 1, g.iqs, g.y), plainFloat(g.blk, y, want, g.tmp))
	})
}

func TestVecDotQ2_0(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		g := drawIQ(t, quant.Q2_0)
		v := dequantOne(t, quant.Q2_0, g.blk, dOne) // q-1 in -1..2
		y := &g.y[g.iqs]
		want := exactInt(t, exactDot(v[32*g.iqs:], y), "Σ(q-1)y")
		if got := q2_0Sumi(quant.BlockQ2_0(g.blk), g.iqs, y); got != want {
			t.Fatalf("sumi = %d, want %d", got, want)
		}
		checkBits(t, "vec_dot", g.kern.Dot(g.tmp, g.row, 1, g.iqs, g.y), plainFloat(g.blk, y, want, g.tmp))
	})
}

// TestNVFP4ScaleCodes checks the GPU decode of the scale bytes the CPU decodes
// differently (quant.UE4M3ToFP32CUDA): with every code 0xff (E4M3 NaN, replaced by 0 on
// the GPU) the vec_dot adds +0 products, so tmp comes back unchanged.
func TestNVFP4ScaleCodes(t *testing.T) {
	blk := make([]byte, 36)
	for i := range blk {
		blk[i] = 0xff
	}
	y := make([]q8.Block, 2)
	for i := range y {
		y[i].D = 0x3C00
		for j := range y[i].Qs {
			y[i].Qs[j] = int8(j - 16)
		}
	}
	const tmp = float32(1.5)
	if got := vecDotNVFP4(tmp, blk, 0, 0, y); got != tmp {
		t.Fatalf("vec_dot with NaN scale codes = %v, want %v", got, tmp)
	}
}
