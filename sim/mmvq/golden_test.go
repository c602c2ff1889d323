package mmvq_test

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/ggsim/ggsim"
	"github.com/ggsim/ggsim/gguf/golden"
	"github.com/ggsim/ggsim/oracle"
	"github.com/ggsim/ggsim/quant"
	"github.com/ggsim/ggsim/sim/mmvq"
)

// The golden tests of the MMVQ kernels run real H200 outputs through the one golden
// verifier (oracle.VerifyFile) with the front door's simulator (ggsim.Simulator), which
// dispatches as ggml does: every case ggml sends to MMVQ must be bit-exact and within its
// fp64 bound. Cases of other kernels (MMQ: batch > 8) and other ops are the verifier's
// business (oracle, the root package's sample tests) and are only logged here.
//
// The committed slices (testdata/golden) always run; -golden=DIR runs the full files of
// the shared set (ggml-h200-dev-mmvq.gguf, ggml-h200-dev-moe.gguf,
// ggml-h200-dev-extra.gguf: the types of iq*.go and extra.go at batch 1 and 5), and
// -golden.trace runs every case again in the lane-by-lane mode.

var goldenTrace = flag.Bool("golden.trace", false, "run the golden cases in the lane-by-lane mode too (slow)")

var goldenDir = flag.String("golden", "", "directory with the full golden files (ggml-h200-dev-mmvq.gguf, ggml-h200-dev-moe.gguf, ggml-h200-dev-extra.gguf); empty: the committed slices only")

func slicePath(name string) string { return filepath.Join("..", "..", "testdata", "golden", name) }

// verifyGolden verifies the golden file at path with impl and returns one result per case.
func verifyGolden(t *testing.T, path string, impl oracle.Impl) []oracle.CaseResult {
	t.Helper()
	f, err := golden.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	res, err := oracle.VerifyFile(f, impl, oracle.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// isMMVQ reports whether ggml dispatched the case to MMVQ (the verifier's Kernel field).
func isMMVQ(r *oracle.CaseResult) bool {
	return (r.Op == golden.OpMulMat || r.Op == golden.OpMulMatID) && r.Kernel == "mmvq"
}

// checkGolden verifies the file at path with the fast simulator (and with -golden.trace
// the lane-by-lane one), fails the test for every MMVQ case that is not bit-exact and
// within its bound, and logs a per-type summary.
func checkGolden(t *testing.T, path string) {
	t.Helper()
	impls := []oracle.Impl{ggsim.NewSimulator()}
	if *goldenTrace {
		impls = append(impls, &ggsim.Simulator{LaneByLane: true})
	}
	name := filepath.Base(path)
	for _, impl := range impls {
		type tally struct{ ok, n int }
		per := map[string]*tally{}
		run := 0
		for _, r := range verifyGolden(t, path, impl) {
			if !isMMVQ(&r) {
				t.Logf("%s: not MMVQ, not judged here: %s", impl.Name(), r.Line())
				continue
			}
			run++
			key := fmt.Sprintf("%s %s", r.Op, r.Type)
			if per[key] == nil {
				per[key] = &tally{}
			}
			per[key].n++
			if r.OK() {
				per[key].ok++
			} else {
				t.Errorf("%s: %s", impl.Name(), r.Line())
			}
		}
		keys := make([]string, 0, len(per))
		for k := range per {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		var b strings.Builder
		ok := 0
		for _, k := range keys {
			fmt.Fprintf(&b, "  %-22s %d/%d bit-exact\n", k, per[k].ok, per[k].n)
			ok += per[k].ok
		}
		t.Logf("%s (%s): %d/%d MMVQ cases bit-exact\n%s", name, impl.Name(), ok, run, b.String())
		if run == 0 {
			t.Errorf("%s: no MMVQ case was run", name)
		}
	}
}

func TestGoldenSlices(t *testing.T) {
	for _, name := range []string{"ggml-h200-dev-mmvq.slice.gguf", "ggml-h200-dev-moe.slice.gguf", "ggml-h200-dev-extra.slice.gguf"} {
		checkGolden(t, slicePath(name))
	}
}

func TestGoldenFull(t *testing.T) {
	if *goldenDir == "" {
		t.Skip("SKIP (not a pass): full golden files not requested (-golden=DIR)")
	}
	for _, name := range []string{"ggml-h200-dev-mmvq.gguf", "ggml-h200-dev-moe.gguf", "ggml-h200-dev-extra.gguf"} {
		path := filepath.Join(*goldenDir, name)
		if _, err := os.Stat(path); err != nil {
			t.Fatal(err)
		}
		checkGolden(t, path)
	}
}

// TestGoldenDiscriminates shows that the golden comparison can fail: Q8_0 with the
// accumulation not fused (tmp = tmp + d*sumi, two roundings) differs from the GPU.
func TestGoldenDiscriminates(t *testing.T) {
	restore := mmvq.UseUnfusedQ8_0()
	defer restore()
	res := verifyGolden(t, slicePath("ggml-h200-dev-mmvq.slice.gguf"), ggsim.NewSimulator())
	// With K = 1024 (32 blocks) a batch-1 launch (128 threads, 4 per block) gives every
	// thread one block, so tmp = fma(d, sumi, 0) = d*sumi and the two models agree; with
	// 5..8 columns (2 warps) each thread accumulates 2 blocks and they must differ.
	n := 0
	for _, r := range res {
		var k, nrows, m int
		if r.Type != quant.Q8_0.String() || !isMMVQ(&r) || r.Op != golden.OpMulMat {
			continue
		}
		if _, err := fmt.Sscanf(r.Shape, "K=%d N=%d M=%d", &k, &nrows, &m); err != nil {
			t.Fatalf("shape %q: %v", r.Shape, err)
		}
		if m < 5 {
			continue
		}
		n++
		if r.Status != oracle.StatusMismatch || r.Bits == nil || r.Bits.Differing == 0 {
			t.Errorf("the unfused Q8_0 model is not detected: %s", r.Line())
		}
		t.Logf("%s", r.Line())
	}
	if n == 0 {
		t.Error("no q8_0 case with batch >= 5 in the slice")
	}
}
