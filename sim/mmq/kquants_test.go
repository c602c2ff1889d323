package mmq

import (
	"math"
	"math/rand"
	"testing"

	"github.com/ggsim/ggsim/f16"
	"github.com/ggsim/ggsim/quant"
	"github.com/ggsim/ggsim/sim"
)

// Tests of the types of kquants.go and nvfp4.go that need no golden file:
//   - the load against quant's dequantization, value by value, on random blocks whose
//     scales are powers of two (so the half and float32 scale products of the load and
//     of dequantize_row_* are exact and must agree exactly);
//   - MulMat against the fp64 product of the dequantized weights (a loose bound: the
//     activations are quantized to 8 bits), which catches wrong layouts and scales.

// pow2Half returns the binary16 2^e (e in -14..15).
func pow2Half(e int) f16.Half { return f16.Half(uint16(e+15) << 10) }

// checkLoad fills one weight row of iterK values with random blocks from gen, runs t's
// load and compares value(x, k) with the dequantized value k of the row exactly.
func checkLoadPow2(t *testing.T, typ quant.Type, gen func(r *rand.Rand, blk []byte), value func(x *xTile, k int) float64) {
	t.Helper()
	kn := kernels[typ]
	if kn == nil {
		t.Fatalf("%v: no kernel registered", typ)
	}
	r := rand.New(rand.NewSource(int64(typ) + 1))
	bs, qk := typ.TypeSize(), typ.BlockSize()
	nb := iterK / qk
	row := make([]byte, nb*bs)
	deq := make([]float32, iterK)
	var x xTile
	for trial := 0; trial < 200; trial++ {
		r.Read(row)
		for b := 0; b < nb; b++ {
			gen(r, row[b*bs:(b+1)*bs])
		}
		if err := quant.DequantizeRow(typ, row, deq); err != nil {
			t.Fatal(err)
		}
		x = xTile{}
		kn.load(&matrix{data: row, bs: bs, stride: nb}, 0, 0, &x)
		for k := 0; k < iterK; k++ {
			if got, want := value(&x, k), float64(deq[k]); got != want {
				t.Fatalf("%v trial %d value %d: load gives %g, dequantize_row gives %g", typ, trial, k, got, want)
			}
		}
	}
}

// checkMulMat quantizes random weights with the reference quantizer and compares MulMat
// with the fp64 product of the dequantized weights and the float32 activations: the
// relative RMS error over all outputs must stay below 3% (8-bit activations give well
// under 1%; a misplaced value or scale gives about 100%).
func checkMulMat(t *testing.T, typ quant.Type) {
	t.Helper()
	const K, N, M = 768, 24, 19
	r := rand.New(rand.NewSource(int64(typ) + 100))
	w := make([]float32, K*N)
	for i := range w {
		w[i] = float32(r.NormFloat64() * 0.05)
	}
	b := make([]float32, K*M)
	for i := range b {
		b[i] = float32(r.Float64()*2 - 1)
	}
	rs := K / typ.BlockSize() * typ.TypeSize()
	a := make([]byte, rs*N)
	wd := make([]float32, K*N)
	for i := 0; i < N; i++ {
		if err := quant.QuantizeRowRef(typ, w[i*K:(i+1)*K], a[i*rs:(i+1)*rs]); err != nil {
			t.Fatal(err)
		}
		if err := quant.DequantizeRow(typ, a[i*rs:(i+1)*rs], wd[i*K:(i+1)*K]); err != nil {
			t.Fatal(err)
		}
	}
	dev, err := sim.Lookup("H200")
	if err != nil {
		t.Fatal(err)
	}
	p, err := MakePlan(dev, typ, K, N, M)
	if err != nil {
		t.Fatal(err)
	}
	got, err := MulMat(dev, typ, a, K, N, b, M, p)
	if err != nil {
		t.Fatal(err)
	}
	var se, sr float64
	for j := 0; j < M; j++ {
		for i := 0; i < N; i++ {
			var ref float64
			for k := 0; k < K; k++ {
				ref += float64(wd[i*K+k]) * float64(b[j*K+k])
			}
			d := float64(got[j*N+i]) - ref
			se += d * d
			sr += ref * ref
		}
	}
	if rel := math.Sqrt(se / sr); !(rel < 0.03) {
		t.Errorf("%v: MulMat relative RMS error %.4g against the fp64 dequantized product (want < 0.03)", typ, rel)
	} else {
		t.Logf("%v: relative RMS error %.4g", typ, rel)
	}
}

func TestLoadQ5_K(t *testing.T) {
	checkLoadPow2(t, quant.Q5_K, func(r *rand.Rand, blk []byte) {
		putHalf(blk[0:], pow2Half(-8+r.Intn(6)))
		putHalf(blk[2:], pow2Half(-10+r.Intn(6)))
	}, func(x *xTile, k int) float64 {
		dm := x.dm[k/32]
		return float64(x.qs[k])*float64(dm[0]) + float64(dm[1])
	})
}

func TestMulMatQ5_K(t *testing.T) { checkMulMat(t, quant.Q5_K) }

func TestLoadQ6_K(t *testing.T) {
	checkLoadPow2(t, quant.Q6_K, func(r *rand.Rand, blk []byte) {
		putHalf(blk[208:], pow2Half(-10+r.Intn(6)))
	}, func(x *xTile, k int) float64 {
		return float64(x.qs[k]) * float64(x.sc[k/16]) * float64(x.df[0])
	})
}

func TestMulMatQ6_K(t *testing.T) { checkMulMat(t, quant.Q6_K) }

func TestLoadQ3_K(t *testing.T) {
	checkLoadPow2(t, quant.Q3_K, func(r *rand.Rand, blk []byte) {
		putHalf(blk[108:], pow2Half(-10+r.Intn(6)))
	}, func(x *xTile, k int) float64 {
		return float64(x.qs[k]) * float64(x.df[k/16])
	})
}

func TestMulMatQ3_K(t *testing.T) { checkMulMat(t, quant.Q3_K) }

func TestLoadQ2_K(t *testing.T) {
	checkLoadPow2(t, quant.Q2_K, func(r *rand.Rand, blk []byte) {
		putHalf(blk[80:], pow2Half(-8+r.Intn(6)))
		putHalf(blk[82:], pow2Half(-10+r.Intn(6)))
	}, func(x *xTile, k int) float64 {
		mA := x.mA[k/16]
		return float64(x.qs[k])*float64(mA[0]) - float64(mA[1])
	})
}

func TestMulMatQ2_K(t *testing.T) { checkMulMat(t, quant.Q2_K) }
