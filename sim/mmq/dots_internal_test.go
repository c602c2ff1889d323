package mmq

import (
	"math/rand/v2"
	"testing"

	"github.com/ggsim/ggsim/sim/q8"
)

// TestPackedDotsExact: the packed half dots (three columns per int64, or four for rows in
// [-15, 15]) equal dotI8's for random int8 values and for the extremes that fill a lane
// most (all -128 against all -128 or 127; all ±15 against them), for every column count
// 1..14 (partly filled last words and passes), also with rows of both layouts in turn.
func TestPackedDotsExact(t *testing.T) {
	seed := uint64(rand.Uint32())
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 3))
	fill := []func(i int) int8{
		func(int) int8 { return int8(r.Uint32()) },
		func(int) int8 { return -128 },
		func(int) int8 { return 127 },
		func(i int) int8 { return []int8{-128, 127}[r.IntN(2)] },
		func(int) int8 { return int8(r.IntN(31) - 15) },
		func(int) int8 { return -15 },
		func(int) int8 { return 15 },
		func(i int) int8 { return []int8{-15, 15}[r.IntN(2)] },
	}
	for ncol := 1; ncol <= 14; ncol++ {
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
				pk := packColumns(1, nkb, ncol, func(kb, jj int) *q8.BlockMMQ { return &y[kb*ncol+jj] })
				for kb := 1; kb+1 < nkb; kb++ {
					for pass, f := range []int{fx, (fx + 4) % len(fill)} {
						for v := range x.qs {
							x.qs[v] = fill[f](v)
						}
						pk.dots(&x, kb)
						for jj := 0; jj < ncol; jj++ {
							want := refHalfDots(&x, &y[kb*ncol+jj], &y[(kb+1)*ncol+jj])
							if pk.c[jj] != *want {
								t.Fatalf("ncol %d fill %d/%d kb %d pass %d column %d: packed %v, dotI8 %v", ncol, f, fy, kb, pass, jj, pk.c[jj], *want)
							}
						}
					}
				}
				pk.release()
			}
		}
	}
}
