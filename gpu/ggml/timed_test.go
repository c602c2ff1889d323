//go:build cuda && cgo

package ggml

import (
	"math"
	"testing"

	"github.com/ggsim/ggsim/quant"
)

// A Timed graph computes what MulMat and MulMatID compute, bit for bit, run after run
// (on the CPU backend, so it runs wherever GGSIM_GGML_DIR names a build).
func TestTimedMatchesMulMat(t *testing.T) {
	l := ggmlLib(t)
	be, err := l.NewBackend(BackendSpec{Kind: CPU, Threads: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer be.Close()
	const K, N, M, E, U, T = 256, 8, 3, 3, 2, 4
	g := NewGen(5)
	w, err := l.Quantize(quant.Q8_0, g.Weights(K*N*E), N*E, K, nil)
	if err != nil {
		t.Fatal(err)
	}
	x := g.Values(K * T)
	ids := []int32{0, 2, 1, 0, 2, 1, 1, 2}
	same := func(what string, a, b []float32) {
		t.Helper()
		if len(a) != len(b) {
			t.Fatalf("%s: %d values, want %d", what, len(a), len(b))
		}
		for i := range a {
			if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
				t.Fatalf("%s: element %d: %v, want %v", what, i, a[i], b[i])
			}
		}
	}
	check := func(what string, tm *Timed, terr error, want []float32, werr error) {
		t.Helper()
		if terr != nil || werr != nil {
			t.Fatalf("%s: %v, %v", what, terr, werr)
		}
		defer tm.Close()
		for run := 0; run < 2; run++ {
			if d, err := tm.Run(); err != nil || d <= 0 {
				t.Fatalf("%s: run %d: %v, %v", what, run, d, err)
			}
			got, err := tm.Output()
			if err != nil {
				t.Fatal(err)
			}
			same(what, got, want)
		}
	}
	a := w[:len(w)/E]
	tm, terr := be.TimedMulMat(quant.Q8_0, a, K, N, x[:K*M], M)
	want, werr := be.MulMat(quant.Q8_0, a, K, N, x[:K*M], M)
	check("mul_mat", tm, terr, want, werr)
	tm, terr = be.TimedMulMatID(quant.Q8_0, w, K, N, E, x, 1, T, ids, U)
	want, werr = be.MulMatID(quant.Q8_0, w, K, N, E, x, 1, T, ids, U)
	check("mul_mat_id", tm, terr, want, werr)
	if _, err := be.TimedMulMat(quant.Q8_0, a, K, N, x[:10], M); err == nil {
		t.Fatal("short b accepted")
	}
}
