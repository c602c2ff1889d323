//go:build goexperiment.simd && amd64

package mmvq

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/ggsim/ggsim/f16"
	"github.com/ggsim/ggsim/quant"
	"github.com/ggsim/ggsim/sim"
)

// scalarToo runs f with the 8-row path off and on and returns both results; ok is false
// when both refuse the shape as a write race (ErrWriteRace).
func scalarToo(t *testing.T, f func() ([]float32, error)) (scalar, rows8 []float32, ok bool) {
	t.Helper()
	useRows8 = false
	scalar, err := f()
	useRows8 = true
	rows8, err2 := f()
	if errors.Is(err, ErrWriteRace) && errors.Is(err2, ErrWriteRace) {
		return nil, nil, false
	}
	if err != nil || err2 != nil {
		t.Fatal(err, err2)
	}
	return scalar, rows8, true
}

// q4KEdgeWeights is weights() of Q4_K with some blocks' d and dmin set to tiny, huge,
// zero, subnormal, infinite and NaN halves, so that the 8-lane functions take their
// scalar lanes (Inf and NaN; FMA results below 2^-125 cannot occur here: both scales are
// halves).
func q4KEdgeWeights(t *testing.T, k, n int, rng *rand.Rand) []byte {
	x, _ := weights(t, quant.Q4_K, k, n, rng)
	rs, _ := quant.Q4_K.RowSize(int64(k))
	halves := []f16.Half{0x0000, 0x8000, 0x0001, 0x03ff, 0x0400, 0x7bff, 0xfbff, 0x1000, 0x7c00, 0xfc00, 0x7e01}
	for r := 0; r < n; r++ {
		for b := 0; b < k/256; b++ {
			if rng.IntN(4) != 0 {
				continue
			}
			o := r*int(rs) + b*144 + 2*rng.IntN(2)
			h := halves[rng.IntN(len(halves))]
			x[o], x[o+1] = byte(h), byte(h>>8)
		}
	}
	return x
}

// The 8-row path gives the scalar path's bits: MUL_MAT with 1..8 columns (row counts
// that leave short groups), MUL_MAT_ID with one token (rows read through ids) and with
// 2..8 tokens, ordinary and edge-case weights and activations (seed printed).
func TestRows8MatchesScalar(t *testing.T) {
	if !sim.Vec8 {
		t.Skip("SKIP (not a pass): this CPU lacks AVX2 or FMA")
	}
	if rows8For(quant.Q4_K, 0, 1) == nil {
		t.Fatal("no 8-row kernel for q4_K")
	}
	dev := h200(t)
	const seed = 1212
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 1))
	races := 0
	defer func() { t.Logf("%d MUL_MAT_ID shapes refused as write races by both paths", races) }()
	for _, k := range []int{256, 1024, 4096} {
		for _, n := range []int{1, 13, 64} {
			x := q4KEdgeWeights(t, k, n, rng)
			for _, m := range []int{1, 2, 5, 8} {
				y := acts(k, m, rng)
				if m == 5 {
					for i := range y {
						y[i] *= float32(math.Ldexp(1, rng.IntN(200)-100))
					}
				}
				s, v, _ := scalarToo(t, func() ([]float32, error) { return MulMat(dev, quant.Q4_K, x, k, n, y, m) })
				sameBits(t, fmt.Sprintf("MulMat k=%d n=%d m=%d", k, n, m), s, v)
			}
			const E, U = 3, 2
			as := q4KEdgeWeights(t, k, n*E, rng)
			for _, T := range []int{1, 3, 8} {
				b := acts(k, T, rng)
				ids := make([]int32, U*T)
				for tk := 0; tk < T; tk++ {
					ids[tk*U], ids[tk*U+1] = int32(tk%E), int32((tk+1)%E)
				}
				s, v, ok := scalarToo(t, func() ([]float32, error) { return MulMatID(dev, quant.Q4_K, as, k, n, E, b, 1, T, ids, U) })
				if !ok {
					races++
					continue
				}
				sameBits(t, fmt.Sprintf("MulMatID k=%d n=%d T=%d", k, n, T), s, v)
			}
		}
	}
}

// The 8-row path's bits do not depend on GOMAXPROCS.
func TestRows8GOMAXPROCS(t *testing.T) {
	if !sim.Vec8 {
		t.Skip("SKIP (not a pass): this CPU lacks AVX2 or FMA")
	}
	dev := h200(t)
	rng := rand.New(rand.NewPCG(7, 7))
	const k, n, m = 2048, 203, 3
	x := q4KEdgeWeights(t, k, n, rng)
	y := acts(k, m, rng)
	var outs [2][]float32
	for i, procs := range []int{1, 2} {
		old := runtime.GOMAXPROCS(procs)
		var err error
		outs[i], err = MulMat(dev, quant.Q4_K, x, k, n, y, m)
		runtime.GOMAXPROCS(old)
		if err != nil {
			t.Fatal(err)
		}
	}
	sameBits(t, "GOMAXPROCS 1 vs 2", outs[0], outs[1])
}
