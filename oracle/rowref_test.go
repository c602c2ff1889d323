package oracle_test

import (
	"crypto/sha256"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/ggsim/ggsim/oracle"
	"github.com/ggsim/ggsim/oracle/oracletest"
	"github.com/ggsim/ggsim/quant"
	"github.com/ggsim/ggsim/sim"
)

// sameBits reports the first index where a and b differ in bits (-1 if none; a length
// difference is index -2).
func sameBits(a, b []float64) int {
	if len(a) != len(b) {
		return -2
	}
	for i := range a {
		if math.Float64bits(a[i]) != math.Float64bits(b[i]) {
			return i
		}
	}
	return -1
}

func sameRef(t *testing.T, what string, got, want *oracle.Reference) {
	t.Helper()
	for _, f := range []struct {
		name string
		g, w []float64
	}{{"Value", got.Value, want.Value}, {"Bound", got.Bound, want.Bound}, {"Center", got.Center, want.Center}} {
		if i := sameBits(f.g, f.w); i != -1 {
			if i == -2 {
				t.Errorf("%s: %s has %d values, the whole-matrix reference %d", what, f.name, len(f.g), len(f.w))
				continue
			}
			t.Errorf("%s: %s[%d] = %v, the whole-matrix reference had %v", what, f.name, i, f.g[i], f.w[i])
		}
	}
}

// The row-by-row references give the bits the whole-matrix ones gave: refDigest of
// MulMatRef (gonum's serial and blocked summation orders, K a multiple of 64 or not),
// MulMatRefOn on the MMVQ, MMQ-MMA and MMQ-DP4A paths and its fallback, and
// MulMatIDRefOn, recorded with the code of commit 47dbb87 (the same helper run in a
// worktree of that commit), before the references worked by rows. The float64 sums of
// the references are fused where Go fuses a*b+c, so the digest is one per build
// (rowref_digest_*_test.go: amd64 below v3, amd64 v3 and up); other architectures
// have none recorded and skip.
func TestRowReferencesSame(t *testing.T) {
	recorded := refDigestRecorded
	if recorded == "" {
		t.Skip("SKIP (not a pass): no digest of the references recorded for this architecture")
	}
	d, n := refDigest(t)
	if n != 131 {
		t.Fatalf("%d references, the recorded digest covers 131", n)
	}
	if d != recorded {
		t.Fatalf("references digest %s, recorded at 47dbb87 %s", d, recorded)
	}
}

// refDigest hashes the bits of Value, Center (with its presence) and Bound of
// MulMatRef, MulMatRefOn (H200 and RTX 3090: MMVQ, MMQ with the MMA and the dp4a layout,
// the fallback) and MulMatIDRefOn (H200) on the cases of TestRowReferencesSame; IQ2_XXS
// only through MulMatRef (its kernel bound came later than the recorded digest).
func refDigest(t *testing.T) (string, int) {
	h := sha256.New()
	put := func(what string, ref *oracle.Reference, err error) {
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		fmt.Fprintf(h, "%s %d %d %v\n", what, len(ref.Value), len(ref.Bound), ref.Center != nil)
		for _, s := range [][]float64{ref.Value, ref.Center, ref.Bound} {
			for _, v := range s {
				fmt.Fprintf(h, "%016x", math.Float64bits(v))
			}
		}
	}
	h200, err := sim.Lookup("H200")
	if err != nil {
		t.Fatal(err)
	}
	rtx, err := sim.Lookup("RTX 3090")
	if err != nil {
		t.Fatal(err)
	}
	types := []quant.Type{quant.Q4_0, quant.Q4_1, quant.Q5_1, quant.Q8_0, quant.Q2_K, quant.Q4_K, quant.Q6_K, quant.IQ2_XXS, quant.IQ4_XS}
	shapes := [][3]int{{256, 64, 1}, {256, 256, 1}, {512, 130, 3}, {768, 70, 70}, {256, 200, 16}}
	n := 0
	for ti, typ := range types {
		for si, sh := range shapes {
			K, N, M := sh[0], sh[1], sh[2]
			seed := uint64(10*ti + si + 1)
			a, err := oracletest.RealisticWeights(typ, K, N, seed)
			if err != nil {
				t.Fatal(err)
			}
			if si == 2 && (typ == quant.Q4_0 || typ == quant.Q4_1 || typ == quant.Q5_1 || typ == quant.Q4_K) {
				rs, _ := typ.RowSize(int64(K))
				a[rs], a[rs+1] = 0, 0
			}
			b := oracletest.RealisticActivations(K, M, seed)
			what := fmt.Sprintf("%v K=%d N=%d M=%d", typ, K, N, M)
			ref, err := oracle.MulMatRef(typ, a, K, N, b, M)
			put(what+" MulMatRef", ref, err)
			n++
			if typ == quant.IQ2_XXS {
				continue
			}
			for _, dev := range []sim.Device{h200, rtx} {
				ref, err := oracle.MulMatRefOn(dev, typ, a, K, N, b, M)
				put(what+" MulMatRefOn "+dev.Name, ref, err)
				n++
			}
		}
	}
	r := rand.New(rand.NewPCG(7, 7))
	for _, typ := range []quant.Type{quant.Q4_K, quant.Q4_0} {
		for _, c := range []struct{ K, N, E, B1, T, U int }{{256, 96, 4, 1, 3, 2}, {512, 256, 3, 2, 20, 2}, {256, 64, 8, 1, 40, 4}} {
			a, err := oracletest.RealisticWeights(typ, c.K, c.N*c.E, uint64(c.T))
			if err != nil {
				t.Fatal(err)
			}
			b := oracletest.RealisticActivations(c.K, c.B1*c.T, 3)
			ids := make([]int32, c.T*c.U)
			for i := range ids {
				ids[i] = int32(r.IntN(c.E))
			}
			ref, err := oracle.MulMatIDRefOn(h200, typ, a, c.K, c.N, c.E, b, c.B1, c.T, ids, c.U)
			put(fmt.Sprintf("%v %+v MulMatIDRefOn", typ, c), ref, err)
			n++
		}
	}
	return fmt.Sprintf("%x", h.Sum(nil)), n
}

// MulMatIDRefOnTokens's blocks are MulMatIDRefOn's reference cut by tokens, bit for bit.
func TestMulMatIDRefOnTokensSame(t *testing.T) {
	h200, err := sim.Lookup("H200")
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(7, 7))
	for _, typ := range []quant.Type{quant.Q4_K, quant.Q4_0, quant.IQ2_XXS} {
		for _, c := range []struct{ K, N, E, B1, T, U int }{{256, 96, 4, 1, 3, 2}, {512, 256, 3, 2, 20, 2}, {256, 64, 8, 1, 40, 4}} {
			a, err := oracletest.RealisticWeights(typ, c.K, c.N*c.E, uint64(c.T))
			if err != nil {
				t.Fatal(err)
			}
			b := oracletest.RealisticActivations(c.K, c.B1*c.T, 3)
			ids := make([]int32, c.T*c.U)
			for i := range ids {
				ids[i] = int32(r.IntN(c.E))
			}
			want, err := oracle.MulMatIDRefOn(h200, typ, a, c.K, c.N, c.E, b, c.B1, c.T, ids, c.U)
			if err != nil {
				t.Fatal(err)
			}
			for _, toks := range []int{1, 3} {
				j := &blockJoin{t: t, per: toks, stride: c.U * c.N}
				if err := oracle.MulMatIDRefOnTokens(h200, typ, a, c.K, c.N, c.E, b, c.B1, c.T, ids, c.U, toks, j.add); err != nil {
					t.Fatal(err)
				}
				sameRef(t, fmt.Sprintf("%v MulMatIDRefOnTokens by %d tokens", typ, toks), j.done(c.T), want)
			}
		}
	}
}

// The shapes above cover both of gonum's summation orders.
func TestGemmOrderCovered(t *testing.T) {
	if oracle.GemmParallelOrder(64, 1) || oracle.GemmParallelOrder(130, 3) || !oracle.GemmParallelOrder(256, 1) || !oracle.GemmParallelOrder(70, 70) {
		t.Fatal("gemmParallel does not split the shapes as gonum's dgemmParallel does")
	}
}

// MulMatRefOnCols's blocks are MulMatRefOn's reference cut by columns, bit for bit, on
// the MMVQ and MMQ paths (whose stream-K bound depends on the column's tile) and the
// fallback. The H200 here has 5 SMs, so that the stream-K split of these few tiles
// differs from tile to tile.
func TestMulMatRefOnColsSame(t *testing.T) {
	h200, err := sim.Lookup("H200")
	if err != nil {
		t.Fatal(err)
	}
	h200.SMCount = 5
	for _, c := range []struct {
		typ     quant.Type
		K, N, M int
	}{{quant.Q4_K, 512, 200, 5}, {quant.Q4_K, 512, 200, 300}, {quant.Q4_0, 256, 130, 33}, {quant.IQ2_XXS, 256, 300, 9}} {
		a, err := oracletest.RealisticWeights(c.typ, c.K, c.N, 5)
		if err != nil {
			t.Fatal(err)
		}
		b := oracletest.RealisticActivations(c.K, c.M, 5)
		want, err := oracle.MulMatRefOn(h200, c.typ, a, c.K, c.N, b, c.M)
		if err != nil {
			t.Fatal(err)
		}
		for _, cols := range []int{1, 4, c.M, c.M + 3} {
			j := &blockJoin{t: t, per: cols, stride: c.N}
			if err := oracle.MulMatRefOnCols(h200, c.typ, a, c.K, c.N, b, c.M, cols, j.add); err != nil {
				t.Fatal(err)
			}
			sameRef(t, fmt.Sprintf("%v K=%d N=%d M=%d (%s) by %d columns", c.typ, c.K, c.N, c.M, oracle.KernelPath(h200, c.typ, c.K, c.N, c.M), cols), j.done(c.M), want)
		}
	}
	if err := oracle.MulMatRefOnCols(h200, quant.Q4_0, make([]byte, 18), 32, 1, make([]float32, 32), 1, 0, nil); err == nil {
		t.Error("0 columns per block: no error")
	}
}

// blockJoin joins the blocks a blockwise reference (MulMatRefOnCols, MulMatIDRefOnTokens)
// hands to its callback, checking that they come in order, at most per units (columns
// or tokens) of stride values each.
type blockJoin struct {
	t           *testing.T
	per, stride int
	next        int
	got         oracle.Reference
}

func (j *blockJoin) add(i0, i1 int, ref *oracle.Reference) error {
	if i0 != j.next || i1 <= i0 || i1-i0 > j.per || len(ref.Value) != (i1-i0)*j.stride {
		j.t.Fatalf("block [%d, %d) of %d values after unit %d, %d units per block", i0, i1, len(ref.Value), j.next, j.per)
	}
	j.next = i1
	j.got.Value = append(j.got.Value, ref.Value...)
	j.got.Bound = append(j.got.Bound, ref.Bound...)
	if ref.Center != nil {
		j.got.Center = append(j.got.Center, ref.Center...)
	}
	return nil
}

// done checks that the blocks covered all total units and returns their join.
func (j *blockJoin) done(total int) *oracle.Reference {
	if j.next != total {
		j.t.Fatalf("blocks ended at unit %d of %d", j.next, total)
	}
	return &j.got
}
