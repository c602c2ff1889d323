package oracletest

import (
	"errors"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/ggsim/ggsim"
	"github.com/ggsim/ggsim/oracle"
	"github.com/ggsim/ggsim/quant"
	"github.com/ggsim/ggsim/sim/mmvq"
)

// TestRoutingDistinct: every routing kind gives each token U distinct experts in [0, E)
// and the right number of ids; sparse names at most U+3 experts, same-experts exactly U,
// one-hot-expert one expert named by every token.
func TestRoutingDistinct(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for k := routingKind(0); k < nRoutingKinds; k++ {
		for trial := 0; trial < 200; trial++ {
			T, E := 9+r.IntN(100), 4+r.IntN(253)
			U := 1 + r.IntN(min(8, E))
			ids := drawRouting(k, T, U, E, r)
			if len(ids) != T*U {
				t.Fatalf("%v: %d ids for %d tokens of %d slots", k, len(ids), T, U)
			}
			if tok := distinctPerToken(ids, T, U); tok >= 0 {
				t.Fatalf("%v T=%d U=%d E=%d: token %d names an expert twice: %v", k, T, U, E, tok, ids[tok*U:(tok+1)*U])
			}
			count := map[int32]int{}
			for _, e := range ids {
				if e < 0 || int(e) >= E {
					t.Fatalf("%v: expert %d outside [0, %d)", k, e, E)
				}
				count[e]++
			}
			switch k {
			case routeSparse:
				if len(count) > U+3 {
					t.Fatalf("sparse: %d experts named, U=%d", len(count), U)
				}
			case routeSame:
				if len(count) != U {
					t.Fatalf("same-experts: %d experts named, U=%d", len(count), U)
				}
			case routeHot:
				hot := false
				for _, n := range count {
					hot = hot || n == T
				}
				if !hot {
					t.Fatalf("one-hot-expert: no expert named by all %d tokens: %v", T, count)
				}
			}
		}
	}
}

// TestMMQIDDuplicateUnsupported: a MUL_MAT_ID of more than 8 tokens where a token names
// one expert twice (mm_ids_helper races on it) is reported unsupported by the front door,
// not silently computed.
func TestMMQIDDuplicateUnsupported(t *testing.T) {
	dev := h200(t)
	const K, N, E, T, U = 256, 4, 4, 9, 2
	ids := make([]int32, T*U)
	for i := range ids {
		ids[i] = int32(i % U)
	}
	ids[5*U+1] = ids[5*U] // token 5: expert 0 twice
	a := make([]byte, 0)
	rs, _ := quant.Q8_0.RowSize(K)
	a = append(a, make([]byte, int(rs)*N*E)...)
	b := make([]float32, K*T)
	out, err := ggsim.NewSimulator().MulMatID(dev, quant.Q8_0, a, K, N, E, b, 1, T, ids, U)
	if !errors.Is(err, oracle.ErrUnsupported) || out != nil {
		t.Fatalf("a token naming expert 0 twice: out %d values, err %v; want an error wrapping ErrUnsupported", len(out), err)
	}
	ids[5*U+1] = 1
	if _, err := ggsim.NewSimulator().MulMatID(dev, quant.Q8_0, a, K, N, E, b, 1, T, ids, U); err != nil {
		t.Fatalf("the same call with distinct experts: %v", err)
	}
}

// TestSuiteMMQID: a run of MUL_MAT_ID cases of more than 8 tokens alone draws every
// routing kind, applies every property but the MMVQ ones (IDAsMulMat to some), and
// passes on the simulator.
func TestSuiteMMQID(t *testing.T) {
	n := 40
	if v, err := strconv.Atoi(os.Getenv("GGSIM_TEST_MMQID_CHECKS")); err == nil && v > 0 {
		n = v
	}
	rec, rep := runRecorded(t, ggsim.NewSimulator(), Options{Checks: n, ops: []int{4}, Types: mmqIDTypes(t)})
	if rec.Failed() {
		t.Fatalf("the simulator failed:\n%s", rec.output())
	}
	for k := routingKind(0); k < nRoutingKinds; k++ {
		if rep.ByRouting[k.String()] == 0 {
			t.Errorf("no MMQ MUL_MAT_ID case with %v routing in %d cases:\n%s", k, n, rep)
		}
	}
	for _, p := range []Property{Bound, Determinism, NonFiniteInputs, NonFiniteOutputs, IDAsMulMat} {
		if rep.Checked[p] == 0 {
			t.Errorf("%v never applied:\n%s", p, rep)
		}
	}
	if rep.MMQID != n || rep.Checked[Columns] != 0 || rep.Checked[IDOneToken] != 0 {
		t.Errorf("%d cases, not all MMQ MUL_MAT_ID, or an MMVQ property applied:\n%s", n, rep)
	}
	if !strings.Contains(rep.String(), "MUL_MAT_ID on MMQ per routing: uniform:") {
		t.Errorf("the report does not list the routings:\n%s", rep)
	}
	t.Log(rep)
}

// mmqIDTypes are the types ggml dispatches to MMQ in ID mode on the H200.
func mmqIDTypes(t *testing.T) []quant.Type {
	var ts []quant.Type
	for _, ty := range mmvq.Types() {
		if mmqIDMaxT(h200(t), ty) > 0 {
			ts = append(ts, ty)
		}
	}
	return ts
}

// hotSlot returns the dst column t*U+u of the first slot naming the expert with the most
// (token, slot) pairs (lowest id on ties).
func hotSlot(ids []int32) int {
	count := map[int32]int{}
	best := int32(-1)
	for _, e := range ids {
		count[e]++
		if best < 0 || count[e] > count[best] || count[e] == count[best] && e < best {
			best = e
		}
	}
	for d, e := range ids {
		if e == best {
			return d
		}
	}
	return 0
}

// TestSuiteCatchesMMQIDBitDifference: an implementation whose output of one MUL_MAT_ID
// call of more than 8 tokens differs from the simulator's by one ulp in one element fails
// the run with the simulator as the reference; one that does so on every such call passes
// with NoMMQ (so the MMQ MUL_MAT_ID cases are what catch it) and, without a reference,
// fails by IDAsMulMat alone when the element is one of the most used expert's.
func TestSuiteCatchesMMQIDBitDifference(t *testing.T) {
	var calls atomic.Int32
	once := &mutant{Simulator: ggsim.NewSimulator(), name: "one output of the third MMQ MUL_MAT_ID call one ulp off",
		idFull: func(o []float32, N, T, U int, ids []int32) {
			if T > 8 && calls.Add(1) == 3 {
				o[len(o)/2] = flip(o[len(o)/2])
			}
		}}
	opt := Options{Checks: 40, Properties: Determinism, Reference: ggsim.NewSimulator()}
	rec, _ := runRecorded(t, once, opt)
	out := rec.output()
	if !rec.Failed() || !strings.Contains(out, "differ from reference") || !strings.Contains(out, "(max 1 ulp)") || !strings.Contains(out, "(MMQ, ") {
		t.Fatalf("an MMQ MUL_MAT_ID output one ulp off passed or failed otherwise:\n%s", out)
	}
	bad := &mutant{Simulator: ggsim.NewSimulator(), name: "one output of every MMQ MUL_MAT_ID call one ulp off",
		idFull: func(o []float32, N, T, U int, ids []int32) {
			if T > 8 {
				i := hotSlot(ids)*N + N/2
				o[i] = flip(o[i])
			}
		}}
	opt.NoMMQ = true
	rec, rep := runRecorded(t, bad, opt)
	if rec.Failed() || rep.MMQID != 0 || rep.Cases != 40 {
		t.Fatalf("NoMMQ: failed %v, report %s\n%s", rec.Failed(), rep, rec.output())
	}
	rec, _ = runRecorded(t, bad, Options{Checks: 40, Properties: IDAsMulMat, ops: []int{4}, Types: mmqIDTypes(t)})
	if out := rec.output(); !rec.Failed() || !strings.Contains(out, "against column") || !strings.Contains(out, "unsplit MMQ") {
		t.Fatalf("IDAsMulMat did not catch an MMQ MUL_MAT_ID output one ulp off:\n%s", out)
	}
}
