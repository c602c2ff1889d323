package fp16path_test

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/ggsim/ggsim/fp16path"
	"github.com/ggsim/ggsim/quant"
)

// TestBoundTightness measures Bound against the observed error |out - R| (R the exact
// Σ W·y) per type on the realistic generator at K = 4096, and on coherent data (every
// weight and activation positive: no cancellation); docs/bounds.md quotes the numbers
// (go test -run TestBoundTightness -v ./fp16path). It fails if an output is outside or
// the worst ratio is below 1.
func TestBoundTightness(t *testing.T) {
	const K, N = 4096, 64
	for _, kind := range []string{"realistic", "coherent"} {
		for _, typ := range fp16path.Types() {
			r := rand.New(rand.NewPCG(5, uint64(typ)))
			x, y := realistic(r, typ, K, N)
			if kind == "coherent" {
				rs, _ := typ.RowSize(K)
				row := make([]float32, K)
				for i := 0; i < N; i++ {
					for k := range row {
						row[k] = float32(0.02 * r.Float64())
					}
					if err := quant.QuantizeRowRef(typ, row, x[i*int(rs):(i+1)*int(rs)]); err != nil {
						t.Fatal(err)
					}
				}
				for k := range y {
					y[k] = float32(math.Abs(float64(y[k])))
				}
			}
			opt := &fp16path.Options{}
			got, err := fp16path.MulMat(typ, x, K, N, y, 1, opt)
			if err != nil {
				t.Fatal(err)
			}
			bound, err := fp16path.Bound(typ, x, K, N, y, opt)
			if err != nil {
				t.Fatal(err)
			}
			w := make([]float32, K)
			rs := len(x) / N
			var ratios, rel []float64
			for i := range got {
				if err := quant.DequantizeRow(typ, x[i*rs:(i+1)*rs], w); err != nil {
					t.Fatal(err)
				}
				var ref float64
				for k := range w {
					ref += float64(w[k]) * float64(y[k])
				}
				d := math.Abs(float64(got[i]) - ref)
				if !(d <= bound[i]) {
					t.Fatalf("%v row %d: |%g - %g| = %g above the bound %g", typ, i, got[i], ref, d, bound[i])
				}
				if d > 0 {
					ratios = append(ratios, bound[i]/d)
				}
				rel = append(rel, bound[i]/math.Abs(ref))
			}
			slices.Sort(ratios)
			slices.Sort(rel)
			t.Logf("| %v | fp16 | %s | %d | %.3g | %.3g | %.2g |", typ, kind, len(got), ratios[len(ratios)/2], ratios[0], rel[len(rel)/2])
		}
	}
}
