package oracle

import (
	"math"
	"math/rand/v2"
	"testing"

	"pgregory.net/rapid"

	"github.com/ggsim/ggsim/quant"
	"github.com/ggsim/ggsim/sim"
	"github.com/ggsim/ggsim/sim/mmvq"
)

func TestULPDistance(t *testing.T) {
	one := float32(1)
	next := math.Float32frombits(math.Float32bits(one) + 1)
	cases := []struct {
		a, b float32
		want int64
	}{
		{one, one, 0},
		{one, next, 1},
		{next, one, 1},
		{0, float32(math.Copysign(0, -1)), 1},
		{math.Float32frombits(1), math.Float32frombits(0x80000001), 3},
		{float32(math.NaN()), 1, math.MaxInt64},
	}
	for _, c := range cases {
		if got := ULPDistance(c.a, c.b); got != c.want {
			t.Errorf("ULPDistance(%v, %v) = %d, want %d", c.a, c.b, got, c.want)
		}
	}
}

func TestCompareBits(t *testing.T) {
	got := []float32{1, 2, 3, 4}
	want := []float32{1, 2, math.Float32frombits(math.Float32bits(3) + 2), 4}
	c := CompareBits(got, want)
	if c.BitExact() || c.Differing != 1 || c.First != 2 || c.MaxULP != 2 {
		t.Fatalf("CompareBits = %+v", c)
	}
	if c := CompareBits(got, got); !c.BitExact() || c.First != -1 {
		t.Fatalf("CompareBits(equal) = %+v", c)
	}
}

func TestErrorsOf(t *testing.T) {
	e := ErrorsOf([]float32{1, 2}, []float64{1, 1})
	if e.NMSE != 0.5 || e.MaxAbs != 1 {
		t.Fatalf("ErrorsOf = %+v", e)
	}
	if e := ErrorsOf([]float32{0}, []float64{0}); e.NMSE != 0 {
		t.Fatalf("zero vs zero: %+v", e)
	}
	if e := ErrorsOf([]float32{float32(math.Inf(1))}, []float64{1}); e.NonFinite != 1 {
		t.Fatalf("Inf: %+v", e)
	}
}

// quantizeRows quantizes n rows of k values with ggml's reference quantizer.
type fataler interface{ Fatal(args ...any) }

func quantizeRows(t fataler, typ quant.Type, x []float32, k, n int) []byte {
	rs, err := typ.RowSize(int64(k))
	if err != nil {
		t.Fatal(err)
	}
	out := make([]byte, int(rs)*n)
	for i := 0; i < n; i++ {
		if err := quant.QuantizeRowRef(typ, x[i*k:(i+1)*k], out[i*int(rs):(i+1)*int(rs)]); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// goldenLike draws values as the golden files do: uniform [-1,1), one in 64 scaled by 8.
func goldenLike(r *rand.Rand, n int, scale float32) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = (2*r.Float32() - 1) * scale
		if r.IntN(64) == 0 {
			v[i] *= 8
		}
	}
	return v
}

func TestMulMatRefMatchesNaiveSum(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	const K, N, M = 512, 7, 3
	a := quantizeRows(t, quant.Q8_0, goldenLike(r, K*N, 0.05), K, N)
	b := goldenLike(r, K*M, 1)
	ref, err := MulMatRef(quant.Q8_0, a, K, N, b, M)
	if err != nil {
		t.Fatal(err)
	}
	row := make([]float32, K)
	rs, _ := quant.Q8_0.RowSize(K)
	for i := 0; i < N; i++ {
		if err := quant.DequantizeRow(quant.Q8_0, a[i*int(rs):(i+1)*int(rs)], row); err != nil {
			t.Fatal(err)
		}
		for j := 0; j < M; j++ {
			var s float64
			for k := 0; k < K; k++ {
				s += float64(row[k]) * float64(b[j*K+k])
			}
			if d := math.Abs(s - ref.Value[j*N+i]); d > 1e-12*math.Max(1, math.Abs(s)) {
				t.Fatalf("(%d,%d): gonum %v, naive %v", i, j, ref.Value[j*N+i], s)
			}
		}
	}
}

// TestSimulatorWithinBound is the second half of every verdict, as a property: the
// simulated MMVQ result of random quantized weights and activations lies within the fp64
// bound, for several types, shapes and column counts; and a wrong result (scaled by 1.25) does not.
func TestSimulatorWithinBound(t *testing.T) {
	h200, err := sim.Lookup("H200")
	if err != nil {
		t.Fatal(err)
	}
	types := []quant.Type{quant.Q4_0, quant.Q4_1, quant.Q5_0, quant.Q8_0, quant.Q2_K, quant.Q3_K, quant.Q4_K, quant.Q5_K, quant.Q6_K, quant.IQ4_XS, quant.IQ4_NL, quant.MXFP4}
	rapid.Check(t, func(rt *rapid.T) {
		typ := rapid.SampledFrom(types).Draw(rt, "type")
		K := 256 * rapid.IntRange(1, 6).Draw(rt, "k/256")
		N := rapid.IntRange(8, 40).Draw(rt, "n")
		M := rapid.IntRange(1, 8).Draw(rt, "m")
		seed := rapid.Uint64().Draw(rt, "seed")
		scale := rapid.SampledFrom([]float32{1, 1e-3, 100}).Draw(rt, "scale")
		r := rand.New(rand.NewPCG(seed, 7))
		a := quantizeRows(rt, typ, goldenLike(r, K*N, 0.05), K, N)
		b := goldenLike(r, K*M, scale)
		got, err := mmvq.MulMat(h200, typ, a, K, N, b, M)
		if err != nil {
			rt.Fatal(err)
		}
		ref, err := MulMatRef(typ, a, K, N, b, M)
		if err != nil {
			rt.Fatal(err)
		}
		if out, first := ref.WithinBound(got); out > 0 {
			rt.Fatalf("%d of %d outside the bound; first %d: got %v, ref %v, bound %v", out, len(got), first, got[first], ref.Value[first], ref.Bound[first])
		}
		// A kernel that is deterministic and wrong must be caught.
		wrong := append([]float32(nil), got...)
		for i := range wrong {
			wrong[i] *= 1.5
		}
		// (Not with tiny activations: their q8_1 scales are half subnormals and a correct
		// kernel's own error is of the order of its result.)
		if out, _ := ref.WithinBound(wrong); out == 0 && N*M >= 64 && scale >= 1 {
			rt.Fatalf("a result scaled by 1.5 stays inside the bound")
		}
	})
}
