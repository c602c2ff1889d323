package mmq

import (
	"math/rand/v2"
	"testing"

	"github.com/ggsim/ggsim/sim/q8"
)

// TestPackedDotsExact: the packed half dots (three columns per int64) equal dotI8's for
// random int8 values and for the extremes that fill a 21-bit lane most (all -128 against
// all -128 or 127), for every column count 1..10 (partly filled last words).
func TestPackedDotsExact(t *testing.T) {
	seed := uint64(rand.Uint32())
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 3))
	fill := []func(i int) int8{
		func(int) int8 { return int8(r.Uint32()) },
		func(int) int8 { return -128 },
		func(int) int8 { return 127 },
		func(i int) int8 { return []int8{-128, 127}[r.IntN(2)] },
	}
	for ncol := 1; ncol <= 10; ncol++ {
		for fx := range fill {
			for fy := range fill {
				const nkb = 4
				y := make([]q8.BlockMMQ, nkb*ncol)
				for i := range y {
					for v := range y[i].Qs {
						y[i].Qs[v] = fill[fy](v)
					}
				}
				var x xTile
				for v := range x.qs {
					x.qs[v] = fill[fx](v)
				}
				pk := packColumns(1, nkb, ncol, func(kb, jj int) *q8.BlockMMQ { return &y[kb*ncol+jj] })
				for kb := 1; kb+1 < nkb; kb++ {
					pk.dots(&x, kb)
					for jj := 0; jj < ncol; jj++ {
						want := refHalfDots(&x, &y[kb*ncol+jj], &y[(kb+1)*ncol+jj])
						if pk.c[jj] != *want {
							t.Fatalf("ncol %d fill %d/%d kb %d column %d: packed %v, dotI8 %v", ncol, fx, fy, kb, jj, pk.c[jj], *want)
						}
					}
				}
				pk.release()
			}
		}
	}
}
