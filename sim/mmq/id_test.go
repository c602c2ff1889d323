package mmq_test

import (
	"bufio"
	"errors"
	"math"
	"os"
	"strings"
	"testing"

	"github.com/ggsim/ggsim/moe"
	"github.com/ggsim/ggsim/oracle/oracletest"
	"github.com/ggsim/ggsim/quant"
	"github.com/ggsim/ggsim/sim"
	"github.com/ggsim/ggsim/sim/mmq"
	"pgregory.net/rapid"
)

// devicePath returns the H200, or the H200 build without int8 MMA (the dp4a path).
func devicePath(t testing.TB, dp4a bool) sim.Device {
	dev, err := sim.Lookup("H200")
	if err != nil {
		t.Fatal(err)
	}
	dev.NoTuringMMA = dp4a
	return dev
}

// mulMatID routes ids, plans and runs MulMatID.
func mulMatID(dev sim.Device, typ quant.Type, a []byte, K, N, E int, b []float32, B1, T int, ids []int32, U int) ([]float32, *mmq.Plan, error) {
	r, err := moe.Route(ids, T, U, E, B1)
	if err != nil {
		return nil, nil, err
	}
	p, err := mmq.MakePlanID(dev, typ, K, N, r)
	if err != nil {
		return nil, nil, err
	}
	out, err := mmq.MulMatID(dev, typ, a, K, N, E, b, B1, T, ids, U, p)
	return out, p, err
}

// drawIDs draws T tokens of U distinct experts out of E.
func drawIDs(t *rapid.T, T, U, E int) []int32 {
	all := make([]int32, E)
	for e := range all {
		all[e] = int32(e)
	}
	ids := make([]int32, 0, T*U)
	for tok := 0; tok < T; tok++ {
		ids = append(ids, rapid.Permutation(all).Draw(t, "experts")[:U]...)
	}
	return ids
}

func sameBits(a, b float32) bool { return math.Float32bits(a) == math.Float32bits(b) }

// TestMulMatIDOneExpertIsMulMat: with one expert and one slot the compact columns are
// the tokens in order and the launch is MUL_MAT's (one channel, ncols_max = T, the same
// stream-K partition, splits and fixups included), so MulMatID must give MulMat's bits,
// on both paths, for every type and K. rapid prints the seed of a failing run.
func TestMulMatIDOneExpertIsMulMat(t *testing.T) {
	types := mmq.DP4ATypes()
	rapid.Check(t, func(rt *rapid.T) {
		dp4a := rapid.Bool().Draw(rt, "dp4a")
		typ := rapid.SampledFrom(types).Draw(rt, "type")
		qk := typ.BlockSize()
		K := qk * rapid.IntRange(1, max(1, 1024/qk)).Draw(rt, "blocks")
		N := rapid.IntRange(1, 160).Draw(rt, "N")
		T := rapid.IntRange(9, 64).Draw(rt, "T")
		dev := devicePath(t, dp4a)
		a, b := mmq.RandomCase(t, typ, K, N, T, uint64(K*N*T))
		p, err := mmq.MakePlan(dev, typ, K, N, T)
		if err != nil {
			rt.Fatal(err)
		}
		want, err := mmq.MulMat(dev, typ, a, K, N, b, T, p)
		if err != nil {
			rt.Fatal(err)
		}
		got, _, err := mulMatID(dev, typ, a, K, N, 1, b, 1, T, make([]int32, T), 1)
		if err != nil {
			rt.Fatal(err)
		}
		for k := range want {
			if !sameBits(got[k], want[k]) {
				rt.Fatalf("%v K=%d N=%d T=%d dp4a=%v: dst[%d] = %g, MulMat %g", typ, K, N, T, dp4a, k, got[k], want[k])
			}
		}
	})
}

// TestMulMatIDUnsplitIsPerExpertMulMat: with K one iteration (256 values) no tile is
// ever split, so every output is one vec_dot fold over K of its row and column, and
// MulMatID's dst[(t*U+u)*N+i] must equal, bit for bit, MulMat of expert ids[t*U+u] by
// all activation rows at row t*B1 + u%B1: a check of the routing, the gather or scatter
// quantization, the per-expert tiles (empty, partial, hot) and the store through
// ids_dst. rapid prints the seed of a failing run.
func TestMulMatIDUnsplitIsPerExpertMulMat(t *testing.T) {
	types := mmq.DP4ATypes()
	rapid.Check(t, func(rt *rapid.T) {
		dp4a := rapid.Bool().Draw(rt, "dp4a")
		typ := rapid.SampledFrom(types).Draw(rt, "type")
		const K = 256
		if K%typ.BlockSize() != 0 {
			rt.Skip("block larger than an iteration")
		}
		E := rapid.IntRange(1, 12).Draw(rt, "E")
		U := rapid.IntRange(1, min(E, 4)).Draw(rt, "U")
		B1 := rapid.SampledFrom([]int{1, U}).Draw(rt, "B1")
		T := rapid.IntRange(9, 60).Draw(rt, "T")
		N := rapid.IntRange(1, 200).Draw(rt, "N")
		ids := drawIDs(rt, T, U, E)
		if rapid.Bool().Draw(rt, "hot") { // every token also uses expert 0
			for tok := 0; tok < T; tok++ {
				row := ids[tok*U : (tok+1)*U]
				if !contains(row, 0) {
					row[rapid.IntRange(0, U-1).Draw(rt, "slot")] = 0
				}
			}
		}
		dev := devicePath(t, dp4a)
		a, b := mmq.RandomCase(t, typ, K, N*E, T*B1, uint64(N*E*T+U))
		got, p, err := mulMatID(dev, typ, a, K, N, E, b, B1, T, ids, U)
		if err != nil {
			rt.Fatal(err)
		}
		unsplit(rt, p)
		rs := len(a) / (N * E)
		for e := 0; e < E; e++ {
			pe, err := mmq.MakePlan(dev, typ, K, N, T*B1)
			if err != nil {
				rt.Fatal(err)
			}
			unsplit(rt, pe)
			ref, err := mmq.MulMat(dev, typ, a[e*N*rs:(e+1)*N*rs], K, N, b, T*B1, pe)
			if err != nil {
				rt.Fatal(err)
			}
			for k, id := range ids {
				if int(id) != e {
					continue
				}
				tok, u := k/U, k%U
				for i := 0; i < N; i++ {
					g, w := got[k*N+i], ref[(tok*B1+u%B1)*N+i]
					if !sameBits(g, w) {
						rt.Fatalf("%v dp4a=%v: token %d slot %d (expert %d) row %d: %g, MulMat of the expert %g", typ, dp4a, tok, u, e, i, g, w)
					}
				}
			}
		}
	})
}

func contains(s []int32, v int32) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// unsplit fails unless every tile of p is computed by one block over the whole K range
// (the premise of TestMulMatIDUnsplitIsPerExpertMulMat).
func unsplit(t *rapid.T, p *mmq.Plan) {
	for k, w := range p.Tiles {
		if !w.Empty && (len(w.Ranges) != 1 || w.Adds != nil) {
			t.Fatalf("tile %d is split: %+v", k, w)
		}
	}
}

// TestMulMatIDSweepRecordHead verifies the first mmqid cases (one per type) of the
// committed record of a real H200 running the dp4a build of ggml
// (gpu/testdata/h200-cuda13-sweep/sweep-dp4a.tsv; TestSweepRecord runs all of them).
func TestMulMatIDSweepRecordHead(t *testing.T) {
	f, err := os.Open("../../gpu/testdata/h200-cuda13-sweep/sweep-dp4a.tsv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var head strings.Builder
	n := 0
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<16), 1<<20)
	for sc.Scan() && n < len(mmq.DP4ATypes()) {
		if strings.HasPrefix(sc.Text(), oracletest.SweepMMQID+"\t") {
			head.WriteString(sc.Text() + "\n")
			n++
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	dev := devicePath(t, true)
	rep, err := oracletest.VerifySweep(strings.NewReader(head.String()), nil, func(c *oracletest.SweepCase) ([]float32, error) {
		return runSweepCase(dev, c)
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range rep.Mismatch {
		t.Errorf("mismatch: %s", m)
	}
	for _, e := range rep.Errors {
		t.Errorf("not verified: %s", e)
	}
	if rep.Cases != n || rep.Match != n || n == 0 {
		t.Errorf("%d of %d cases matched (%d lines)", rep.Match, rep.Cases, n)
	}
}

// TestMulMatIDErrors: bad ids and shapes are errors saying what and where; a token that
// names one expert twice is not modelled (ErrUnsupported); a plan made for another
// routing is refused.
func TestMulMatIDErrors(t *testing.T) {
	dev := devicePath(t, false)
	const K, N, E, T, U = 256, 4, 3, 9, 2
	a, b := mmq.RandomCase(t, quant.Q8_0, K, N*E, T, 1)
	ids := make([]int32, T*U)
	for k := range ids {
		ids[k] = int32(k % U)
	}
	r, err := moe.Route(ids, T, U, E, 1)
	if err != nil {
		t.Fatal(err)
	}
	p, err := mmq.MakePlanID(dev, quant.Q8_0, K, N, r)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := mmq.MulMatID(dev, quant.Q8_0, a, K, N, E, b, 1, T, ids, U, p); err != nil {
		t.Fatal(err)
	}
	bad := append([]int32(nil), ids...)
	bad[2*U+1] = E
	dup := append([]int32(nil), ids...)
	dup[3*U+1] = dup[3*U]
	other := append([]int32(nil), ids...)
	other[0] = 2
	for _, c := range []struct {
		what, want  string
		unsupported bool
		err         error
	}{
		{what: "id out of range", want: "token 2, slot 1",
			err: errOf(mmq.MulMatID(dev, quant.Q8_0, a, K, N, E, b, 1, T, bad, U, p))},
		{what: "duplicate expert", want: "token 3 names expert", unsupported: true,
			err: errOf(mmq.MulMatID(dev, quant.Q8_0, a, K, N, E, b, 1, T, dup, U, p))},
		{what: "plan of another routing", want: "the plan is for",
			err: errOf(mmq.MulMatID(dev, quant.Q8_0, a, K, N, E, b, 1, T, other, U, p))},
		{what: "short weights", want: "weight bytes",
			err: errOf(mmq.MulMatID(dev, quant.Q8_0, a[1:], K, N, E, b, 1, T, ids, U, p))},
		{what: "short activations", want: "activations",
			err: errOf(mmq.MulMatID(dev, quant.Q8_0, a, K, N, E, b[1:], 1, T, ids, U, p))},
	} {
		if c.err == nil || !strings.Contains(c.err.Error(), c.want) || errors.Is(c.err, errors.ErrUnsupported) != c.unsupported {
			t.Errorf("%s: %v, want an error containing %q (unsupported: %v)", c.what, c.err, c.want, c.unsupported)
		}
	}
}

func errOf(_ []float32, err error) error { return err }
