package fp16path_test

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"pgregory.net/rapid"

	"github.com/ggsim/ggsim/fp16path"
	"github.com/ggsim/ggsim/quant"
)

// TestMultiColumnIsColumnByColumn: the 2..8-column kernels of Q4_K, Q5_K and IQ4_XS give,
// for every column, the bits of the one-column kernel on that column (the weights are
// unpacked once, but each column's float order is the one-column order), for random
// column counts, rows per warp and per-column activation magnitudes (each column has its
// own prescales). rapid prints the seed of a failure.
func TestMultiColumnIsColumnByColumn(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		typ := rapid.SampledFrom([]quant.Type{quant.Q4_K, quant.Q5_K, quant.IQ4_XS}).Draw(rt, "type")
		M := rapid.IntRange(2, fp16path.MaxColumns).Draw(rt, "columns")
		K := 256 * rapid.IntRange(1, 3).Draw(rt, "K/256")
		rpw := rapid.SampledFrom([]int{1, 2, 8}).Draw(rt, "rows per warp")
		r := rand.New(rand.NewPCG(rapid.Uint64().Draw(rt, "seed"), 0))
		const N = 3
		x, _ := realistic(r, typ, K, N)
		y := make([]float32, 0, K*M)
		for j := 0; j < M; j++ {
			_, yj := realistic(r, typ, K, 0)
			s := float32(math.Ldexp(1, rapid.IntRange(-100, 90).Draw(rt, "log2 scale")))
			for k := range yj {
				yj[k] *= s
			}
			y = append(y, yj...)
		}
		opt := &fp16path.Options{RowsPerWarp: rpw}
		got, err := fp16path.MulMat(typ, x, K, N, y, M, opt)
		if err != nil {
			rt.Fatal(err)
		}
		for j := 0; j < M; j++ {
			one, err := fp16path.MulMat(typ, x, K, N, y[j*K:(j+1)*K], 1, opt)
			if err != nil {
				rt.Fatal(err)
			}
			for i := range one {
				if math.Float32bits(got[j*N+i]) != math.Float32bits(one[i]) {
					rt.Fatalf("%v, %d columns, column %d row %d: %g, one-column kernel %g", typ, M, j, i, got[j*N+i], one[i])
				}
			}
		}
	})
}

// TestColumnsPerType: every type runs one column; only Q4_K, Q5_K and IQ4_XS run 2..8
// (the others wrap errors.ErrUnsupported: the note keeps them on ggml's MMVQ); nobody
// runs 9.
func TestColumnsPerType(t *testing.T) {
	for _, typ := range fp16path.Types() {
		rs, _ := typ.RowSize(256)
		x := make([]byte, rs)
		for M := 1; M <= fp16path.MaxColumns+1; M++ {
			_, err := fp16path.MulMat(typ, x, 256, 1, make([]float32, 256*M), M, nil)
			want := M == 1 || (M <= fp16path.MaxColumns && fp16path.MultiColumn(typ))
			if (err == nil) != want {
				t.Errorf("%v, %d columns: err = %v, want supported = %v", typ, M, err, want)
			}
			if err != nil && !errors.Is(err, errors.ErrUnsupported) {
				t.Errorf("%v, %d columns: %v does not wrap errors.ErrUnsupported", typ, M, err)
			}
		}
	}
}
