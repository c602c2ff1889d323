package mmq_test

import (
	"os"
	"sort"
	"strings"
	"testing"

	"github.com/ggsim/ggsim/moe"
	"github.com/ggsim/ggsim/oracle/oracletest"
	"github.com/ggsim/ggsim/sim"
	"github.com/ggsim/ggsim/sim/mmq"
)

// runSweepCase runs a mul_mat case (kind mmq) through MulMat or a mul_mat_id case (kind
// mmqid: MUL_MAT_ID with more than 8 tokens) through MulMatID, with the plan of dev.
func runSweepCase(dev sim.Device, c *oracletest.SweepCase) ([]float32, error) {
	if c.Op == "mul_mat_id" {
		r, err := moe.Route(c.IDs, c.T, c.U, c.E, c.B1)
		if err != nil {
			return nil, err
		}
		p, err := mmq.MakePlanID(dev, c.Type, c.K, c.N, r)
		if err != nil {
			return nil, err
		}
		return mmq.MulMatID(dev, c.Type, c.A, c.K, c.N, c.E, c.B, c.B1, c.T, c.IDs, c.U, p)
	}
	p, err := mmq.MakePlan(dev, c.Type, c.K, c.N, c.M)
	if err != nil {
		return nil, err
	}
	return mmq.MulMat(dev, c.Type, c.A, c.K, c.N, c.B, c.M, p)
}

// TestSweepRecord verifies a sweep record made on a GPU (gpu/ggml TestSweepCUDA) with
// the MMQ simulation of one path, for kernel work:
//
//	GGSIM_SWEEP_FILE=record.tsv GGSIM_SWEEP_PATH=mma|dp4a [GGSIM_SWEEP_TYPES=q4_K,q8_0] [GGSIM_SWEEP_KINDS=mmq,mmqid] go test -run TestSweepRecord ./sim/mmq
//
// Only MUL_MAT (mmq) and MUL_MAT_ID (mmqid) cases of the listed (default: every registered) types are run; the
// others are counted as not run and named in the log. Every run case must match.
func TestSweepRecord(t *testing.T) {
	path := os.Getenv("GGSIM_SWEEP_FILE")
	if path == "" {
		t.Skip("SKIP (not a pass): GGSIM_SWEEP_FILE is not set")
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	dev, err := sim.Lookup("H200")
	if err != nil {
		t.Fatal(err)
	}
	switch p := os.Getenv("GGSIM_SWEEP_PATH"); p {
	case "", "mma":
	case "dp4a": // ggml built without int8 MMA (TURING_MMA_AVAILABLE removed)
		dev.NoTuringMMA = true
		dev.Name += " (no int8 MMA)"
	default:
		t.Fatalf("GGSIM_SWEEP_PATH=%q: want mma or dp4a", p)
	}
	only := map[string]bool{}
	for _, s := range strings.Split(os.Getenv("GGSIM_SWEEP_TYPES"), ",") {
		if s != "" {
			only[strings.ToLower(s)] = true
		}
	}
	kinds := map[string]bool{}
	for _, s := range strings.Split(os.Getenv("GGSIM_SWEEP_KINDS"), ",") {
		if s != "" {
			kinds[s] = true
		}
	}
	notRun := map[string]int{}
	skip := func(r oracletest.SweepResult) bool {
		mmqKind := r.Kind == oracletest.SweepMMQ || r.Kind == oracletest.SweepMMQID
		mmqKind = mmqKind && (len(kinds) == 0 || kinds[r.Kind])
		if !mmqKind || (len(only) > 0 && !only[strings.ToLower(r.Type.String())]) {
			notRun[r.Kind+" "+r.Type.String()]++
			return true
		}
		return false
	}
	rep, err := oracletest.VerifySweep(f, skip, func(c *oracletest.SweepCase) ([]float32, error) {
		return runSweepCase(dev, c)
	})
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for k := range rep.ByType {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v := rep.ByType[k]
		t.Logf("%-8s %d/%d", k, v[0], v[1])
	}
	t.Logf("not run: %v", notRun)
	for _, m := range rep.Mismatch {
		t.Errorf("mismatch: %s", m)
	}
	for _, e := range rep.Errors {
		t.Errorf("not verified: %s", e)
	}
	t.Logf("%d of %d cases matched; %d mismatches; %d errors or not run", rep.Match, rep.Cases, len(rep.Mismatch), len(rep.Errors))
}
