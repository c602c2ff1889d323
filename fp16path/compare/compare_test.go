package compare_test

import (
	"bytes"
	"encoding/xml"
	"errors"
	"io"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/ggsim/ggsim/fp16path"
	"github.com/ggsim/ggsim/fp16path/compare"
	"github.com/ggsim/ggsim/oracle/oracletest"
	"github.com/ggsim/ggsim/quant"
)

// TestRealisticAccuracy checks, per type on the realistic generators at K = 2048: the
// fp16 path is more accurate than the q8_1 path by at least 3x; the q8_1 path's error is
// its activation quantization (the fp64 product with the quantized activations has the
// same error within 5%); the fp16 path's conversion alone costs less than its whole error.
func TestRealisticAccuracy(t *testing.T) {
	rows, err := compare.Table(fp16path.Types(), 2048, 32, 3)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range rows {
		t.Logf("%-7v fp16 %.2e (conv %.2e)  q8_1 %.2e (quant %.2e)", a.Type, a.FP16, a.FP16Conv, a.Q8_1, a.Q8_1Quant)
		if !(3*a.FP16 < a.Q8_1) {
			t.Errorf("%v: fp16 %.2e not 3x below q8_1 %.2e", a.Type, a.FP16, a.Q8_1)
		}
		if math.Abs(a.Q8_1Quant-a.Q8_1) > 0.05*a.Q8_1 {
			t.Errorf("%v: q8_1 error %.3e, its activation quantization alone %.3e: want within 5%%", a.Type, a.Q8_1, a.Q8_1Quant)
		}
		if !(a.FP16Conv > 0 && a.FP16Conv < a.FP16) {
			t.Errorf("%v: fp16 conversion error %.2e, whole %.2e", a.Type, a.FP16Conv, a.FP16)
		}
	}
}

// TestMeasureExact: activations that every format represents exactly and weights that make
// the sums exact give zero error for the formats, so the decomposition measures what it
// says.
func TestMeasureExact(t *testing.T) {
	const K, N = 256, 4
	rs, _ := quant.Q8_0.RowSize(K)
	x := make([]byte, int(rs)*N)
	w := make([]float32, K)
	for i := range w {
		w[i] = float32(i%7 - 3)
	}
	for i := 0; i < N; i++ {
		if err := quant.QuantizeRowRef(quant.Q8_0, w, x[i*int(rs):(i+1)*int(rs)]); err != nil {
			t.Fatal(err)
		}
	}
	y := make([]float32, K)
	for k := range y {
		y[k] = float32(k%3 - 1) // -1, 0, 1: exact in half and in q8_1 (d = 1/127 rounds, q = ±127)
	}
	a, err := compare.Measure(quant.Q8_0, x, K, N, y)
	if err != nil {
		t.Fatal(err)
	}
	if a.FP16Conv != 0 || a.FP16 != 0 {
		t.Errorf("small integers: fp16 error %g, conversion %g: want 0", a.FP16, a.FP16Conv)
	}
}

func TestMeasureErrors(t *testing.T) {
	if _, err := compare.Measure(quant.Q4_0, make([]byte, 18), 32, 1, make([]float32, 32)); !errors.Is(err, errors.ErrUnsupported) {
		t.Errorf("Q4_0: %v, want ErrUnsupported", err)
	}
	rs, _ := quant.Q8_0.RowSize(64)
	if _, err := compare.Measure(quant.Q8_0, make([]byte, rs), 64, 1, make([]float32, 32)); err == nil {
		t.Error("32 activations for K = 64: no error")
	}
	if _, err := compare.Measure(quant.Q8_0, make([]byte, rs-1), 64, 1, make([]float32, 64)); err == nil {
		t.Error("short weights: no error")
	}
}

// TestInstructions checks the model's structure: every covered type has both tables;
// weight work is once per block, column work m times; on sm_60 no DP4A is issued and each
// real dp4a became 4 + 4 byte extracts and 4 multiply-adds; on sm_61 it is one DP4A.
func TestInstructions(t *testing.T) {
	for _, ty := range fp16path.Types() {
		for _, p := range []compare.Path{compare.FP16, compare.Q8_1} {
			for _, a := range compare.Archs() {
				c1, err := compare.Instructions(a, p, ty, 1)
				if err != nil {
					t.Fatalf("%v %v %v: %v", a.Name, p, ty, err)
				}
				c2, _ := compare.Instructions(a, p, ty, 2)
				c3, _ := compare.Instructions(a, p, ty, 3)
				for k := range c1 {
					if d1, d2 := c2[k]-c1[k], c3[k]-c2[k]; d1 != d2 || d1 < 0 {
						t.Errorf("%v %v %v %v: m=1,2,3 give %g %g %g: not linear in m", a.Name, p, ty, compare.Class(k), c1[k], c2[k], c3[k])
					}
				}
				if p == compare.FP16 && c1[compare.HF2] != 16 {
					t.Errorf("%v: %g HFMA2 per 32 weights, want 16 (8 per group of 16)", ty, c1[compare.HF2])
				}
				// fp16path.Unpack: 2 PRMT per 4 codes, 16 per 32 weights; the IQ4 types
				// add ggml's table lookup, 8 PRMT per word of 8 indices.
				wantPRMT := 16.0
				if ty == quant.IQ4_XS || ty == quant.IQ4_NL {
					wantPRMT = 48
				}
				if p == compare.FP16 && c1[compare.PRMT] != wantPRMT {
					t.Errorf("%v: %g PRMT per 32 weights, want %g", ty, c1[compare.PRMT], wantPRMT)
				}
			}
			if p != compare.Q8_1 {
				continue
			}
			old, _ := compare.Instructions(compare.GP100, p, ty, 1)
			neu, _ := compare.Instructions(compare.GP102, p, ty, 1)
			if old[compare.DP4A] != 0 || neu[compare.DP4A] < 8 {
				t.Errorf("%v: DP4A on sm_60 %g, on sm_61 %g", ty, old[compare.DP4A], neu[compare.DP4A])
			}
			if d := old[compare.SHF] - neu[compare.SHF]; d != 8*8 {
				t.Errorf("%v: sm_60 adds %g byte extracts per 32 weights, want 64 (8 dp4a)", ty, d)
			}
		}
	}
	if _, err := compare.Instructions(compare.GP100, compare.FP16, quant.Q4_0, 1); !errors.Is(err, errors.ErrUnsupported) {
		t.Errorf("Q4_0: %v, want ErrUnsupported", err)
	}
	if _, err := compare.Instructions(compare.GP100, compare.FP16, quant.Q4_K, 9); err == nil {
		t.Error("9 columns: no error")
	}
}

// TestPredict checks the roofline's parts on numbers worked by hand.
func TestPredict(t *testing.T) {
	const K, N = 4096, 4096
	e, err := compare.Predict(compare.GP100, compare.FP16, quant.Q8_0, K, N, 1)
	if err != nil {
		t.Fatal(err)
	}
	// weights 34 B per 32, the column read as float32, written and read as halves with
	// sums and unscale factors, the output.
	want := int64(N*K/32*34) + K*4 + 2*(K*2+K/16*4+K/32*4) + N*4
	if e.Bytes != want {
		t.Errorf("bytes %d, want %d", e.Bytes, want)
	}
	if got := e.MemSec * 608e9; math.Abs(got-float64(want)) > 1 {
		t.Errorf("memory time %g s for %d bytes at 608 GB/s", e.MemSec, want)
	}
	if e.Sec != math.Max(e.IssueSec, e.MemSec) {
		t.Errorf("Sec %g is not the larger of %g and %g", e.Sec, e.IssueSec, e.MemSec)
	}
	// On GP100 the fp16 path wins for every type at batch 1 and 5; on the P40 (half2 at
	// 1/64 rate) it loses by at least 2x.
	for _, ty := range fp16path.Types() {
		for _, m := range []int{1, 5} {
			f, _ := compare.Predict(compare.GP100, compare.FP16, ty, K, N, m)
			q, _ := compare.Predict(compare.GP100, compare.Q8_1, ty, K, N, m)
			if !(f.Sec < q.Sec) {
				t.Errorf("P100 %v m=%d: fp16 %g s not below q8_1 %g s", ty, m, f.Sec, q.Sec)
			}
			f, _ = compare.Predict(compare.GP102, compare.FP16, ty, K, N, m)
			q, _ = compare.Predict(compare.GP102, compare.Q8_1, ty, K, N, m)
			if !(f.Sec > 2*q.Sec) {
				t.Errorf("P40 %v m=%d: fp16 %g s not far above q8_1 %g s", ty, m, f.Sec, q.Sec)
			}
		}
	}
	if _, err := compare.Predict(compare.GP100, compare.FP16, quant.Q4_K, 100, 1, 1); err == nil {
		t.Error("K = 100: no error")
	}
}

func TestCalibrateAndNote(t *testing.T) {
	cal, err := compare.Calibrate(compare.GP100)
	if err != nil {
		t.Fatal(err)
	}
	var bytes, sec float64
	for _, x := range compare.NoteModel {
		e, err := compare.Predict(cal, compare.Q8_1, x.Type, x.K, x.N, 1)
		if err != nil {
			t.Fatal(err)
		}
		rs, _ := x.Type.RowSize(int64(x.K))
		bytes += float64(x.Count) * float64(rs*int64(x.N))
		sec += float64(x.Count) * e.Sec
	}
	if g := bytes / sec / 1e9; math.Abs(g-compare.StockGBs) > 0.01*compare.StockGBs {
		t.Errorf("calibrated q8_1 bandwidth %.1f GB/s, want %.1f", g, compare.StockGBs)
	}
	claims, err := compare.NoteClaims()
	if err != nil {
		t.Fatal(err)
	}
	if len(claims) != 5 {
		t.Fatalf("%d claims, want 5", len(claims))
	}
	for _, c := range claims {
		if c.What == "" || c.Measured == "" || c.Predicted == "" || c.Calibrated == "" {
			t.Errorf("incomplete claim %+v", c)
		}
	}
}

func TestPlotSVG(t *testing.T) {
	mk := func(k int, f, q float64) []compare.Accuracy {
		return []compare.Accuracy{{Type: quant.Q4_K, K: k, FP16: f, Q8_1: q}, {Type: quant.Q6_K, K: k, FP16: f / 2, Q8_1: q / 2}}
	}
	sweep := [][]compare.Accuracy{mk(256, 1e-3, 1e-2), mk(1024, 1.2e-3, 1.3e-2), mk(16384, 1.5e-3, 1.5e-2)}
	var b bytes.Buffer
	if err := compare.PlotSVG(&b, sweep, "a <title> & more"); err != nil {
		t.Fatal(err)
	}
	d := xml.NewDecoder(bytes.NewReader(b.Bytes()))
	lines := 0
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("not well-formed XML: %v", err)
		}
		if s, ok := tok.(xml.StartElement); ok && s.Name.Local == "polyline" {
			lines++
		}
	}
	if lines != 4 {
		t.Errorf("%d polylines, want 4 (2 types x 2 paths)", lines)
	}
	if !strings.Contains(b.String(), "q6_K") {
		t.Error("no legend entry for q6_K")
	}
	if err := compare.PlotSVG(io.Discard, nil, ""); err == nil {
		t.Error("empty sweep: no error")
	}
	bad := [][]compare.Accuracy{mk(256, 0, 1e-2)}
	if err := compare.PlotSVG(io.Discard, bad, ""); err == nil {
		t.Error("zero error on a log axis: no error")
	}
	mixed := [][]compare.Accuracy{mk(256, 1e-3, 1e-2), mk(512, 1e-3, 1e-2)[:1]}
	if err := compare.PlotSVG(io.Discard, mixed, ""); err == nil {
		t.Error("rows with different types: no error")
	}
}

// TestKSweepPools checks that KSweep's errors are the root mean square over its seeds.
func TestKSweepPools(t *testing.T) {
	types := []quant.Type{quant.Q4_K}
	s, err := compare.KSweep(types, []int{256}, 8, 5, 2)
	if err != nil {
		t.Fatal(err)
	}
	a, _ := compare.Table(types, 256, 8, 5)
	b, _ := compare.Table(types, 256, 8, 6)
	rms := func(x, y float64) float64 { return math.Sqrt((x*x + y*y) / 2) }
	got, want := s[0][0], []float64{rms(a[0].FP16, b[0].FP16), rms(a[0].Q8_1, b[0].Q8_1), rms(a[0].FP16Conv, b[0].FP16Conv), rms(a[0].Q8_1Quant, b[0].Q8_1Quant)}
	for i, g := range []float64{got.FP16, got.Q8_1, got.FP16Conv, got.Q8_1Quant} {
		if math.Abs(g-want[i]) > 1e-12*want[i] {
			t.Errorf("error %d: pooled %g, want %g", i, g, want[i])
		}
	}
	if _, err := compare.KSweep(types, []int{256}, 8, 5, 0); err == nil {
		t.Error("0 repetitions: no error")
	}
}

// TestOutliersDominateQ8_1 shows what the q8_1 path's error is made of: on the same
// Q5_K matrix, damping the realistic activations' outlier dimensions (|y| > 8, the
// "massive activations", divided by 40) cuts the q8_1 error by more than 2x, while the
// fp16 path's error moves by less than 30%, and on Gaussian activations the q8_1 error is
// less than half of that on the realistic ones: a 32-block holding an outlier quantizes its
// other 31 values with a step of max/127, whereas binary16 keeps 11 bits for each value.
func TestOutliersDominateQ8_1(t *testing.T) {
	const K, N = 5120, 64
	x, err := oracletest.RealisticWeights(quant.Q5_K, K, N, 1)
	if err != nil {
		t.Fatal(err)
	}
	y := compare.RealisticColumn(K, 1)
	damped := append([]float32(nil), y...)
	n := 0
	for k, v := range damped {
		if math.Abs(float64(v)) > 8 {
			damped[k] = v / 40
			n++
		}
	}
	a, err := compare.Measure(quant.Q5_K, x, K, N, y)
	if err != nil {
		t.Fatal(err)
	}
	b, err := compare.Measure(quant.Q5_K, x, K, N, damped)
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(1, 2))
	gauss := make([]float32, K)
	for k := range gauss {
		gauss[k] = float32(r.NormFloat64())
	}
	c, err := compare.Measure(quant.Q5_K, x, K, N, gauss)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("realistic:        fp16 %.2e  q8_1 %.2e", a.FP16, a.Q8_1)
	t.Logf("%2d dims damped:   fp16 %.2e  q8_1 %.2e", n, b.FP16, b.Q8_1)
	t.Logf("gaussian N(0,1):  fp16 %.2e  q8_1 %.2e", c.FP16, c.Q8_1)
	if !(a.Q8_1 > 2*c.Q8_1) {
		t.Errorf("q8_1: %.2e on realistic activations, %.2e on Gaussian ones: want more than 2x", a.Q8_1, c.Q8_1)
	}
	if n == 0 || n > K/256 {
		t.Fatalf("%d outlier dimensions found, want 1..%d", n, K/256)
	}
	if !(a.Q8_1 > 2*b.Q8_1) {
		t.Errorf("q8_1: %.2e with outliers, %.2e without: want more than 2x", a.Q8_1, b.Q8_1)
	}
	if r := a.FP16 / b.FP16; r < 0.7 || r > 1.3 {
		t.Errorf("fp16: %.2e with outliers, %.2e without: want within 30%%", a.FP16, b.FP16)
	}
}
