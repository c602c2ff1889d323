package oracletest

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/ggsim/ggsim/quant"
)

// realisticFloatsWhole is RealisticFloats as it was before the generator drew row by
// row (commit 47dbb87): the whole K·rows matrix in one loop. Kept to show the row-by-row
// generator is the same function.
func realisticFloatsWhole(K, rows int, seed uint64) []float32 {
	r := rand.New(rand.NewPCG(seed, 0x7765_6967_6874)) // "weight"
	gain := make([]float64, K)
	for k := range gain {
		gain[k] = 1
	}
	for _, k := range outlierSet(r, K, realisticOutlierW) {
		gain[k] = 4 + float64(8*r.Float64())
	}
	w := make([]float32, K*rows)
	for i := 0; i < rows; i++ {
		rowScale := realisticWeightStd * math.Exp(realisticRowSpread*r.NormFloat64())
		for k := 0; k < K; k++ {
			w[i*K+k] = float32(rowScale * gain[k] * studentT(r, realisticTailDOF))
		}
	}
	return w
}

// realisticWeightsWhole is RealisticWeights's quantizer branch before the change: the
// whole float matrix first, then quant.QuantizeRowRef row by row.
func realisticWeightsWhole(t quant.Type, K, rows int, seed uint64) ([]byte, error) {
	rs, err := t.RowSize(int64(K))
	if err != nil {
		return nil, err
	}
	a := make([]byte, int(rs)*rows)
	x := realisticFloatsWhole(K, rows, seed)
	for i := 0; i < rows; i++ {
		if err := quant.QuantizeRowRef(t, x[i*K:(i+1)*K], a[i*int(rs):(i+1)*int(rs)]); err != nil {
			return nil, err
		}
	}
	return a, nil
}

// The row-by-row generator gives the bytes the whole-matrix one gave, for every type
// with a reference quantizer, several shapes and seeds.
func TestRealisticWeightsRowByRowSame(t *testing.T) {
	shapes := [][2]int{{256, 1}, {256, 7}, {512, 3}, {1024, 5}, {4096, 2}}
	seeds := []uint64{1, 2, 0xdead_beef}
	n := 0
	for typ := quant.Type(0); typ < quant.TypeCount; typ++ {
		if !typ.Valid() || typ.BlockSize() <= 1 {
			continue
		}
		if _, ok := quantizer(typ); !ok {
			continue
		}
		for _, sh := range shapes {
			K, rows := sh[0], sh[1]
			if _, err := typ.RowSize(int64(K)); err != nil {
				continue
			}
			for _, seed := range seeds {
				want, err := realisticWeightsWhole(typ, K, rows, seed)
				if err != nil {
					t.Fatalf("%v K=%d rows=%d seed=%d: old generator: %v", typ, K, rows, seed, err)
				}
				got, err := RealisticWeights(typ, K, rows, seed)
				if err != nil {
					t.Fatalf("%v K=%d rows=%d seed=%d: %v", typ, K, rows, seed, err)
				}
				if !bytes.Equal(got, want) {
					t.Errorf("%v K=%d rows=%d seed=%d: row-by-row bytes differ from the whole-matrix generator's", typ, K, rows, seed)
				}
				n++
			}
		}
	}
	if n < 50 {
		t.Fatalf("only %d cases compared: the type list shrank?", n)
	}
	for _, sh := range shapes {
		if !slicesEqual(RealisticFloats(sh[0], sh[1], 3), realisticFloatsWhole(sh[0], sh[1], 3)) {
			t.Errorf("RealisticFloats(%d, %d, 3) differs from the whole-matrix loop", sh[0], sh[1])
		}
	}
}

// Digests of RealisticWeights recorded with the whole-matrix generator (commit 47dbb87),
// so the test above does not only compare the code with its own copy.
func TestRealisticWeightsRecordedDigests(t *testing.T) {
	for _, c := range []struct {
		t       quant.Type
		K, rows int
		seed    uint64
		sha     string
	}{
		{quant.Q4_K, 4096, 3, 1, "bd2fc2b49e5bb374eb1b9e0e54984ec213594107b9c316ae26977698a7312109"},
		{quant.Q6_K, 512, 5, 2, "bea2f7c0ddf688e570cf036c310c22de81096855c1c8e565e9dfc73c30c6cd01"},
		{quant.Q4_0, 256, 9, 7, "8f24e415ff8ebe250d279cb16420b153dc9e9d5e19a80f096409e510cd3c4b21"},
	} {
		a, err := RealisticWeights(c.t, c.K, c.rows, c.seed)
		if err != nil {
			t.Fatal(err)
		}
		if got := fmt.Sprintf("%x", sha256.Sum256(a)); got != c.sha {
			t.Errorf("RealisticWeights(%v, %d, %d, %d): sha256 %s, recorded %s", c.t, c.K, c.rows, c.seed, got, c.sha)
		}
	}
}
