package mmq

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/ggsim/ggsim/quant"
	"github.com/ggsim/ggsim/sim"
	"github.com/ggsim/ggsim/sim/q8"
)

// benchCase returns n rows of k weights of typ (16 distinct reference-quantized rows,
// repeated: quantizing 14336 rows would dominate the set-up) and m columns of Gaussian
// activations.
func benchCase(tb testing.TB, typ quant.Type, k, n, m int, seed uint64) ([]byte, []float32) {
	tb.Helper()
	r := rand.New(rand.NewPCG(seed, 0xbe4c))
	rs := k / typ.BlockSize() * typ.TypeSize()
	const distinct = 16
	proto := make([]byte, distinct*rs)
	row := make([]float32, k)
	for i := 0; i < distinct; i++ {
		s := float32(math.Exp2(float64(r.IntN(8) - 4)))
		for j := range row {
			row[j] = s * float32(r.NormFloat64())
		}
		if err := quant.QuantizeRowRef(typ, row, proto[i*rs:(i+1)*rs]); err != nil {
			tb.Fatalf("quantize a %v row: %v", typ, err)
		}
	}
	a := make([]byte, n*rs)
	for i := 0; i < n; i++ {
		copy(a[i*rs:], proto[(i%distinct)*rs:(i%distinct+1)*rs])
	}
	b := make([]float32, k*m)
	for j := range b {
		b[j] = float32(r.NormFloat64())
	}
	return a, b
}

func benchH200(tb testing.TB, dp4a bool) sim.Device {
	tb.Helper()
	dev, err := sim.Lookup("H200")
	if err != nil {
		tb.Fatal(err)
	}
	dev.NoTuringMMA = dp4a
	return dev
}

// BenchmarkMulMat measures MulMat (the H200's int8-MMA path, bit-exact against the
// GPU) on an FFN-sized layer (K=4096, N=14336, M=512) and reports int8
// multiply-accumulates per second (N·K·M per op). One op is tens of seconds of CPU:
// run it with -benchtime=1x.
func BenchmarkMulMat(b *testing.B) {
	const k, n, m = 4096, 14336, 512
	for _, typ := range []quant.Type{quant.Q4_K, quant.Q6_K, quant.Q8_0, quant.IQ4_XS, quant.Q2_K, quant.Q3_K} {
		b.Run(fmt.Sprintf("type=%v/k=%d/n=%d/m=%d", typ, k, n, m), func(b *testing.B) {
			benchMulMat(b, false, typ, k, n, m)
		})
	}
}

// BenchmarkMulMatDP4A is BenchmarkMulMat on the dp4a path (a build without int8 MMA).
func BenchmarkMulMatDP4A(b *testing.B) {
	const k, n, m = 4096, 14336, 512
	for _, typ := range []quant.Type{quant.Q4_K, quant.Q2_K, quant.Q3_K, quant.Q4_1} {
		b.Run(fmt.Sprintf("type=%v/k=%d/n=%d/m=%d", typ, k, n, m), func(b *testing.B) {
			benchMulMat(b, true, typ, k, n, m)
		})
	}
}

func benchMulMat(b *testing.B, dp4a bool, typ quant.Type, k, n, m int) {
	dev := benchH200(b, dp4a)
	a, x := benchCase(b, typ, k, n, m, 1)
	p, err := MakePlan(dev, typ, k, n, m)
	if err != nil {
		b.Fatal(err)
	}
	cpu0 := cpuSeconds()
	b.ResetTimer()
	for b.Loop() {
		if _, err := MulMat(dev, typ, a, k, n, x, m, p); err != nil {
			b.Fatal(err)
		}
	}
	cpu := cpuSeconds() - cpu0
	macs := float64(n) * float64(k) * float64(m)
	b.ReportMetric(macs*float64(b.N)/b.Elapsed().Seconds(), "MAC/s")
	b.ReportMetric(cpu/float64(b.N), "cpu-s/op")
}

// TestMulMatGOMAXPROCS: the output bits do not depend on how many goroutines compute
// the tiles, on a shape whose stream-K partition splits tiles over several CUDA blocks
// (partial sums and fixups), on both paths.
func TestMulMatGOMAXPROCS(t *testing.T) {
	const k, n, m = 4096, 256, 40
	for _, dp4a := range []bool{false, true} {
		for _, typ := range []quant.Type{quant.Q4_K, quant.Q8_0} {
			dev := benchH200(t, dp4a)
			p, err := MakePlan(dev, typ, k, n, m)
			if err != nil {
				t.Fatal(err)
			}
			split := 0
			for _, w := range p.Tiles {
				if len(w.Ranges) > 1 && w.Adds != nil {
					split++
				}
			}
			if split == 0 {
				t.Fatalf("%v (dp4a %v): K=%d N=%d M=%d has no tile split by stream-K", typ, dp4a, k, n, m)
			}
			a, x := benchCase(t, typ, k, n, m, 2)
			var outs [2][]float32
			for i, procs := range []int{1, 2} {
				old := runtime.GOMAXPROCS(procs)
				outs[i], err = MulMat(dev, typ, a, k, n, x, m, p)
				runtime.GOMAXPROCS(old)
				if err != nil {
					t.Fatal(err)
				}
			}
			for e := range outs[0] {
				if math.Float32bits(outs[0][e]) != math.Float32bits(outs[1][e]) {
					t.Fatalf("%v (dp4a %v): element %d: %#08x with GOMAXPROCS 1, %#08x with 2", typ, dp4a, e, math.Float32bits(outs[0][e]), math.Float32bits(outs[1][e]))
				}
			}
			t.Logf("%v (dp4a %v): %d of %d tiles split by stream-K, %d outputs identical", typ, dp4a, split, len(p.Tiles), len(outs[0]))
		}
	}
}

// BenchmarkPackedDots measures the integer half alone: the half dots of one loaded row
// (values in [-xmax, xmax]) with a tile's columns for one iteration (256 values), in MAC/s.
func BenchmarkPackedDots(b *testing.B) {
	for _, tc := range []struct{ ncol, xmax int }{{128, 127}, {40, 127}, {128, 15}} {
		ncol := tc.ncol
		b.Run(fmt.Sprintf("cols=%d/xmax=%d", ncol, tc.xmax), func(b *testing.B) {
			r := rand.New(rand.NewPCG(5, 6))
			y := make([]q8.BlockMMQ, 2*ncol)
			for i := range y {
				for v := range y[i].Qs {
					y[i].Qs[v] = int8(r.Uint32())
				}
			}
			var x xTile
			for v := range x.qs {
				x.qs[v] = int8(r.IntN(2*tc.xmax+1) - tc.xmax)
			}
			pk := packColumns(0, 2, ncol, func(kb, jj int) *q8.BlockMMQ { return &y[kb*ncol+jj] })
			defer pk.release()
			cpu0 := cpuSeconds()
			for b.Loop() {
				pk.dots(&x, 0)
			}
			b.ReportMetric(float64(256*ncol)*float64(b.N)/b.Elapsed().Seconds(), "MAC/s")
			b.ReportMetric((cpuSeconds()-cpu0)*1e9/float64(b.N), "cpu-ns/op")
		})
	}
}
