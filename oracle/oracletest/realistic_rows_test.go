package oracletest

import (
	"crypto/sha256"
	"fmt"
	"math"
	"testing"

	"github.com/ggsim/ggsim/quant"
)

// generatorDigest hashes gen's weights for every type with a reference quantizer, several
// shapes and seeds (each case headed by its parameters), and floats' values for the
// shapes; n is the number of weight cases.
func generatorDigest(t *testing.T, gen func(quant.Type, int, int, uint64) ([]byte, error), floats func(K, rows int, seed uint64) []float32) (string, int) {
	shapes := [][2]int{{256, 1}, {256, 7}, {512, 3}, {1024, 5}, {4096, 2}}
	seeds := []uint64{1, 2, 0xdead_beef}
	h := sha256.New()
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
				a, err := gen(typ, K, rows, seed)
				if err != nil {
					t.Fatalf("%v K=%d rows=%d seed=%d: %v", typ, K, rows, seed, err)
				}
				fmt.Fprintf(h, "%v %d %d %d %d\n", typ, K, rows, seed, len(a))
				h.Write(a)
				n++
			}
		}
	}
	for _, sh := range shapes {
		for _, v := range floats(sh[0], sh[1], 3) {
			fmt.Fprintf(h, "%08x", math.Float32bits(v))
		}
	}
	return fmt.Sprintf("%x", h.Sum(nil)), n
}

// The row-by-row generator gives the bytes the whole-matrix one gave: the digest of 300
// weight cases (every type with a reference quantizer, five shapes, three seeds) and of
// RealisticFloats was recorded with the code of commit 47dbb87, before the generator
// worked by rows (the same helper run in a worktree of that commit).
func TestRealisticWeightsRowByRowSame(t *testing.T) {
	const recorded = "e6527ee7001fa8d89631d24930f70675c3a6c2d23e2e6241b413565af4e69c51"
	d, n := generatorDigest(t, RealisticWeights, RealisticFloats)
	if n != 300 {
		t.Fatalf("%d weight cases, the recorded digest covers 300: the type list changed?", n)
	}
	if d != recorded {
		t.Fatalf("generator digest %s, recorded at 47dbb87 %s", d, recorded)
	}
}

// Digests of RealisticWeights recorded with the whole-matrix generator (commit 47dbb87),
// case by case.
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
