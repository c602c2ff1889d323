package mmvq

import (
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/ggsim/ggsim/gguf/golden"
	"github.com/ggsim/ggsim/quant"
	"github.com/ggsim/ggsim/sim"
	"github.com/ggsim/ggsim/tiling"
)

var goldenTrace = flag.Bool("golden.trace", false, "run the golden cases in the lane-by-lane trace mode too (slow)")

var goldenDir = flag.String("golden", "", "directory with the full golden files (ggml-h200-dev-mmvq.gguf, ggml-h200-dev-moe.gguf); empty: the committed slices only")

// caseResult is the outcome of one golden case.
type caseResult struct {
	Index   int
	Op      golden.Op
	Type    quant.Type
	Batch   int // M (mul_mat) or T (mul_mat_id)
	N       int
	Diff    int // elements whose bits differ
	Total   int
	First   string // first divergence, "" if none
	Skipped string // why the case was not run ("" if run)
}

// runGolden runs every mul_mat and mul_mat_id case of the golden file at path that MMVQ
// handles (batch ≤ 8) through the simulator and compares every output's float32 bits.
// Cases of other ops, or with more than 8 tokens/columns, are reported as skipped with
// the reason (they are other kernels: MMQ).
func runGolden(t *testing.T, path string) []caseResult {
	t.Helper()
	f, err := golden.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if f.Meta.Device.CC != 900 {
		t.Fatalf("%s: device cc %d; the simulator is configured for the H200 (900)", path, f.Meta.Device.CC)
	}
	dev, err := sim.Lookup("H200")
	if err != nil {
		t.Fatal(err)
	}
	dev.SMCount = f.Meta.Device.SMCount
	var res []caseResult
	for i := range f.Cases {
		c := &f.Cases[i]
		r := caseResult{Index: c.Index, Op: c.Op, Type: c.WeightType}
		if c.Err != nil {
			t.Errorf("%s: %v", path, c.Err)
			continue
		}
		switch c.Op {
		case golden.OpMulMat, golden.OpMulMatID:
		default:
			r.Skipped = "op " + string(c.Op)
			res = append(res, r)
			continue
		}
		src := make([]*golden.Tensor, len(c.Src))
		for k, name := range c.Src {
			if src[k], err = f.Tensor(name); err != nil {
				t.Fatal(err)
			}
		}
		dt, err := f.Tensor(c.Dst)
		if err != nil {
			t.Fatal(err)
		}
		want, err := dt.F32()
		if err != nil {
			t.Fatal(err)
		}
		b, err := src[1].F32()
		if err != nil {
			t.Fatal(err)
		}
		s := c.Shape
		var got []float32
		if c.Op == golden.OpMulMat {
			r.Batch, r.N = int(s.M), int(s.N)
			if s.M > tiling.MMVQMaxBatchSize {
				r.Skipped = fmt.Sprintf("batch %d > 8 (MMQ)", s.M)
				res = append(res, r)
				continue
			}
			got, err = MulMat(dev, c.WeightType, src[0].Data, int(s.K), int(s.N), b, int(s.M))
			if err == nil && *goldenTrace {
				tr, err2 := MulMatOpts(dev, c.WeightType, src[0].Data, int(s.K), int(s.N), b, int(s.M), &Options{Trace: true})
				if err2 != nil {
					t.Fatal(err2)
				}
				sameBits(t, fmt.Sprintf("%s case %d trace vs fast", path, c.Index), tr, got)
			}
		} else {
			r.Batch, r.N = int(s.T), int(s.N)
			if s.T > tiling.MMVQMaxBatchSize {
				r.Skipped = fmt.Sprintf("%d tokens > 8 (MMQ)", s.T)
				res = append(res, r)
				continue
			}
			ids, err2 := src[2].I32()
			if err2 != nil {
				t.Fatal(err2)
			}
			got, err = MulMatID(dev, c.WeightType, src[0].Data, int(s.K), int(s.N), int(s.E), b, int(s.B1), int(s.T), ids, int(s.U))
			if err == nil && *goldenTrace {
				tr, err2 := MulMatIDOpts(dev, c.WeightType, src[0].Data, int(s.K), int(s.N), int(s.E), b, int(s.B1), int(s.T), ids, int(s.U), &Options{Trace: true})
				if err2 != nil {
					t.Fatal(err2)
				}
				sameBits(t, fmt.Sprintf("%s case %d trace vs fast", path, c.Index), tr, got)
			}
		}
		if err != nil {
			r.Diff, r.First = -1, "error: "+err.Error()
			res = append(res, r)
			continue
		}
		if len(got) != len(want) {
			t.Fatalf("%s case %d: %d outputs, golden has %d", path, c.Index, len(got), len(want))
		}
		r.Total = len(want)
		for k := range want {
			if math.Float32bits(got[k]) != math.Float32bits(want[k]) {
				if r.Diff == 0 {
					n := r.N
					r.First = fmt.Sprintf("dst[%d] (row %d, column %d): got %v (%#08x), want %v (%#08x)",
						k, k%n, k/n, got[k], math.Float32bits(got[k]), want[k], math.Float32bits(want[k]))
				}
				r.Diff++
			}
		}
		res = append(res, r)
	}
	return res
}

// report logs every case and a per-type summary, and fails the test for every case that
// is not bit-exact.
func report(t *testing.T, name string, res []caseResult) {
	t.Helper()
	type tally struct{ ok, n int }
	per := map[string]*tally{}
	run := 0
	for _, r := range res {
		if r.Skipped != "" {
			t.Logf("%s case %d: skipped: %s", name, r.Index, r.Skipped)
			continue
		}
		run++
		key := fmt.Sprintf("%s %v", r.Op, r.Type)
		if per[key] == nil {
			per[key] = &tally{}
		}
		per[key].n++
		if r.Diff == 0 {
			per[key].ok++
			continue
		}
		if r.Diff < 0 {
			t.Errorf("%s case %d (%s %v, batch %d): %s", name, r.Index, r.Op, r.Type, r.Batch, r.First)
			continue
		}
		t.Errorf("%s case %d (%s %v, batch %d): %d of %d outputs differ; first: %s", name, r.Index, r.Op, r.Type, r.Batch, r.Diff, r.Total, r.First)
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
	t.Logf("%s: %d/%d cases bit-exact\n%s", name, ok, run, b.String())
	if run == 0 {
		t.Errorf("%s: no case was run", name)
	}
}

func TestGoldenSlices(t *testing.T) {
	for _, name := range []string{"ggml-h200-dev-mmvq.slice.gguf", "ggml-h200-dev-moe.slice.gguf"} {
		path := filepath.Join("..", "..", "testdata", "golden", name)
		report(t, name, runGolden(t, path))
	}
}

func TestGoldenFull(t *testing.T) {
	if *goldenDir == "" {
		t.Skip("full golden files not requested (-golden=DIR)")
	}
	for _, name := range []string{"ggml-h200-dev-mmvq.gguf", "ggml-h200-dev-moe.gguf"} {
		path := filepath.Join(*goldenDir, name)
		if _, err := os.Stat(path); err != nil {
			t.Fatal(err)
		}
		report(t, name, runGolden(t, path))
	}
}
