package ggml

import (
	"bytes"
	"errors"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/ggsim/ggsim/ggmlsrc"
	"github.com/ggsim/ggsim/gguf"
	"github.com/ggsim/ggsim/gguf/golden"
	"github.com/ggsim/ggsim/quant"
)

// fakeRunner computes a cheap deterministic function of its inputs, so that the
// capture's bookkeeping (which inputs and outputs go together) can be checked.
type fakeRunner struct {
	calls int
	flaky bool // change one output bit on every second call
	fail  error
}

func fakeOut(a []byte, b []float32, rows, cols int) []float32 {
	y := make([]float32, rows*cols)
	for i := range y {
		n, m := i%rows, i/rows
		y[i] = float32(a[n%len(a)]) + b[(m*7)%len(b)]
	}
	return y
}

func (f *fakeRunner) MulMat(t quant.Type, a []byte, k, n int, b []float32, m int) ([]float32, error) {
	if err := checkMulMat(t, a, k, n, b, m); err != nil {
		return nil, err
	}
	if f.fail != nil {
		return nil, f.fail
	}
	f.calls++
	y := fakeOut(a, b, n, m)
	if f.flaky && f.calls%2 == 0 {
		y[len(y)-1] = math.Float32frombits(math.Float32bits(y[len(y)-1]) ^ 1)
	}
	return y, nil
}

func (f *fakeRunner) MulMatID(t quant.Type, as []byte, k, n, e int, b []float32, b1, tok int, ids []int32, u int) ([]float32, error) {
	if err := checkMulMatID(t, as, k, n, e, b, b1, tok, ids, u); err != nil {
		return nil, err
	}
	f.calls++
	return fakeOut(as, b, n, u*tok), nil
}

func (f *fakeRunner) Info() (DeviceInfo, error) {
	return DeviceInfo{Backend: "FAKE0", Name: "Fake GPU", CC: 900, SMCount: 132, Driver: "1.2.3", GGMLVersion: "0.0.0", GGMLCommit: "unknown"}, nil
}

// fakeQuantizer returns the right number of bytes, derived from the input.
type fakeQuantizer struct{ imatrixSeen []quant.Type }

func (q *fakeQuantizer) Quantize(t quant.Type, x []float32, rows, k int, im []float32) ([]byte, error) {
	size, err := checkQuantize(t, x, rows, k, im)
	if err != nil {
		return nil, err
	}
	if im != nil {
		q.imatrixSeen = append(q.imatrixSeen, t)
	}
	out := make([]byte, size)
	for i := range out {
		out[i] = byte(math.Float32bits(x[i%len(x)]) >> 16)
	}
	return out, nil
}

func capture(t *testing.T, p Plan) (*gguf.File, Summary) {
	t.Helper()
	w, sum, err := Capture(p, &fakeRunner{}, &fakeQuantizer{}, Meta{Build: "fake build", Commit: "d99724f2b141"})
	if err != nil {
		t.Fatal(err)
	}
	return readBack(t, w), sum
}

// readBack writes w, reads it with gguf/golden (every case must be valid) and returns the
// GGUF view.
func readBack(t *testing.T, w *golden.Writer) *gguf.File {
	t.Helper()
	var buf bytes.Buffer
	if _, err := w.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	gf, err := golden.New(bytes.NewReader(buf.Bytes()), int64(buf.Len()), "capture")
	if err != nil {
		t.Fatal(err)
	}
	if err := gf.Err(); err != nil {
		t.Fatalf("the golden reader rejects the capture: %v", err)
	}
	for i := range gf.Cases {
		if gf.Cases[i].Err != nil {
			t.Fatalf("case %d: %v", i, gf.Cases[i].Err)
		}
	}
	return gf.GGUF
}

func getF32(t *testing.T, f *gguf.File, name string) []float32 {
	t.Helper()
	b, err := f.TensorData(name)
	if err != nil {
		t.Fatal(err)
	}
	v := make([]float32, len(b)/4)
	for i := range v {
		v[i] = math.Float32frombits(uint32(b[4*i]) | uint32(b[4*i+1])<<8 | uint32(b[4*i+2])<<16 | uint32(b[4*i+3])<<24)
	}
	return v
}

// The default plan gives the shared MMVQ file's layout: 13 types x 8 batches of
// mul_mat, then 13 quantize cases, with the schema's keys, and every output is the
// runner's output for the inputs its case names.
func TestCaptureDefaultPlan(t *testing.T) {
	p := DefaultPlan(1)
	p.K, p.N = 256, 16 // small, same structure
	p.QuantRows = 4
	f, sum := capture(t, p)
	if sum.MulMat != 104 || sum.Quantize != 13 || sum.MulMatID != 0 {
		t.Fatalf("summary %+v", sum)
	}
	for key, want := range map[string]string{
		"general.architecture": "golden", "golden.device.name": "Fake GPU", "golden.device.driver": "1.2.3",
		"golden.ggml.commit": "d99724f2b141", "golden.ggml.build": "fake build", "golden.backend": "FAKE0",
	} {
		if got, err := gguf.Get[string](f, key); err != nil || got != want {
			t.Errorf("%s = %q, %v; want %q", key, got, err, want)
		}
	}
	for key, want := range map[string]uint32{"golden.version": 1, "golden.device.cc": 900, "golden.device.sm_count": 132, "golden.case.count": 117} {
		if got, err := gguf.Get[uint32](f, key); err != nil || got != want {
			t.Errorf("%s = %d, %v; want %d", key, got, err, want)
		}
	}
	if p, _ := gguf.Get[string](f, "golden.producer"); !strings.Contains(p, "ggml_backend_graph_compute") {
		t.Errorf("producer %q", p)
	}
	for i := 0; i < 117; i++ {
		pre := "golden.case." + strconv.Itoa(i) + "."
		op, err1 := gguf.Get[string](f, pre+"op")
		src, err2 := gguf.GetArray[string](f, pre+"src")
		dst, err3 := gguf.Get[string](f, pre+"dst")
		if err1 != nil || err2 != nil || err3 != nil {
			t.Fatalf("case %d: %v %v %v", i, err1, err2, err3)
		}
		switch {
		case i < 104:
			if op != "mul_mat" || len(src) != 2 {
				t.Fatalf("case %d: %s %v", i, op, src)
			}
			wi, _ := f.Tensor(src[0])
			xi, _ := f.Tensor(src[1])
			yi, _ := f.Tensor(dst)
			if wi.Type != MMVQTypes[i/8] || wi.NE() != [4]int64{256, 16, 1, 1} {
				t.Fatalf("case %d weights %+v", i, wi)
			}
			m := int64(i%8 + 1)
			if xi.Type != quant.F32 || xi.NE() != [4]int64{256, m, 1, 1} || yi.NE() != [4]int64{16, m, 1, 1} {
				t.Fatalf("case %d shapes x %v y %v", i, xi.NE(), yi.NE())
			}
			w, _ := f.TensorData(src[0])
			want := fakeOut(w, getF32(t, f, src[1]), 16, int(m))
			if _, ok := sameBits(want, getF32(t, f, dst)); !ok {
				t.Fatalf("case %d: output is not the runner's output for the named inputs", i)
			}
		default:
			if op != "quantize" || len(src) != 1 {
				t.Fatalf("case %d: %s %v", i, op, src)
			}
			si, _ := f.Tensor(src[0])
			di, _ := f.Tensor(dst)
			if si.Type != quant.F32 || si.NE() != [4]int64{256, 4, 1, 1} || di.Type != MMVQTypes[i-104] || di.NE() != si.NE() {
				t.Fatalf("case %d: %+v %+v", i, si, di)
			}
		}
	}
	// The activations follow the README's description: uniform [-1,1) with outliers x8.
	x := getF32(t, f, "x.7")
	big := 0
	for _, v := range x {
		if v < -8 || v >= 8 {
			t.Fatalf("activation %g outside [-8, 8)", v)
		}
		if v < -1 || v > 1 {
			big++
		}
	}
	if big == 0 || big > len(x)/16 {
		t.Errorf("%d of %d activations are outliers, expected about 1/64", big, len(x))
	}
}

func TestCaptureMoEAndImatrix(t *testing.T) {
	p := Plan{Types: []quant.Type{quant.Q4_K, quant.IQ2_XXS}, K: 256, N: 8, Batches: []int{1},
		QuantRows: 2, MoE: []MoEShape{{E: 4, U: 2, T: 3, B1: 1}, {E: 4, U: 2, T: 5, B1: 2}}, Seed: 9, Repeat: 3}
	q := &fakeQuantizer{}
	w, sum, err := Capture(p, &fakeRunner{}, q, Meta{})
	if err != nil {
		t.Fatal(err)
	}
	// iq2_xxs needs an importance matrix and gets ones; it has no quantize case.
	if sum.MulMat != 2 || sum.MulMatID != 4 || sum.Quantize != 1 {
		t.Fatalf("summary %+v", sum)
	}
	if len(q.imatrixSeen) == 0 || q.imatrixSeen[0] != quant.IQ2_XXS {
		t.Fatalf("imatrix given for %v", q.imatrixSeen)
	}
	f := readBack(t, w)
	ids, _ := f.Tensor("ids.1")
	if ids.Type != quant.I32 || ids.NE() != [4]int64{2, 5, 1, 1} {
		t.Fatalf("ids.1 %+v", ids)
	}
	if ym, _ := f.Tensor("ym.1"); ym.NE() != [4]int64{8, 2, 5, 1} {
		t.Fatalf("ym.1 %v", ym.NE())
	}
	if c, _ := gguf.Get[string](f, "golden.ggml.commit"); c != "unknown" {
		t.Fatalf("commit defaults to ggml_commit(): %q", c)
	}
}

func TestCaptureErrors(t *testing.T) {
	p := DefaultPlan(1)
	p.K, p.N, p.QuantRows = 256, 4, 2
	_, _, err := Capture(p, &fakeRunner{flaky: true}, &fakeQuantizer{}, Meta{})
	if err == nil || !strings.Contains(err.Error(), "not deterministic") {
		t.Fatalf("flaky runner: %v", err)
	}
	boom := errors.New("boom")
	if _, _, err := Capture(p, &fakeRunner{fail: boom}, &fakeQuantizer{}, Meta{}); !errors.Is(err, boom) {
		t.Fatalf("failing runner: %v", err)
	}
	for _, bad := range []Plan{
		{},
		{Types: []quant.Type{quant.Q4_K}, K: 100, N: 4},
		{Types: []quant.Type{quant.Q8_1}, K: 256, N: 4},
		{Types: []quant.Type{quant.Q4_0}, K: 256, N: 4, Batches: []int{0}},
		{Types: []quant.Type{quant.Q4_0}, K: 256, N: 4, MoE: []MoEShape{{E: 2, U: 3, T: 1, B1: 1}}},
		{Types: []quant.Type{quant.Q4_0}, K: 256, N: 4, QuantRows: 5},
	} {
		if _, _, err := Capture(bad, &fakeRunner{}, &fakeQuantizer{}, Meta{}); err == nil {
			t.Errorf("plan %+v accepted", bad)
		}
	}
}

func TestGen(t *testing.T) {
	g1, g2 := NewGen(5), NewGen(5)
	a, b := g1.Values(1000), g2.Values(1000)
	if _, ok := sameBits(a, b); !ok {
		t.Fatal("same seed, different values")
	}
	for i := 0; i < 100000; i++ {
		if u := g1.Uniform(); u < -1 || u >= 1 || float32(u*(1<<23)) != float32(math.Round(float64(u)*(1<<23))) {
			t.Fatalf("Uniform gave %g", u)
		}
	}
	ids := NewGen(1).Experts(8, 3, 50)
	for tok := 0; tok < 50; tok++ {
		seen := map[int32]bool{}
		for _, id := range ids[3*tok : 3*tok+3] {
			if id < 0 || id >= 8 || seen[id] {
				t.Fatalf("token %d experts %v", tok, ids[3*tok:3*tok+3])
			}
			seen[id] = true
		}
	}
	if NewGen(0).s == 0 {
		t.Fatal("seed 0 not replaced")
	}
}

func TestArgumentChecks(t *testing.T) {
	rs := 144 // q4_K row of 256
	a := make([]byte, 2*rs)
	b := make([]float32, 256*3)
	if err := checkMulMat(quant.Q4_K, a, 256, 2, b, 3); err != nil {
		t.Fatal(err)
	}
	for name, err := range map[string]error{
		"short a":     checkMulMat(quant.Q4_K, a[:10], 256, 2, b, 3),
		"short b":     checkMulMat(quant.Q4_K, a, 256, 2, b[:5], 3),
		"K not block": checkMulMat(quant.Q4_K, a, 100, 2, b, 3),
		"zero M":      checkMulMat(quant.Q4_K, a, 256, 2, b, 0),
		"i32 weights": checkMulMat(quant.I32, a, 256, 2, b, 3),
		"removed":     checkMulMat(quant.Q4_2, a, 256, 2, b, 3),
		"bad id":      checkMulMatID(quant.Q4_K, make([]byte, 2*rs*4), 256, 2, 4, make([]float32, 256*2), 1, 2, []int32{0, 4, 1, 2}, 2),
		"U not B1":    checkMulMatID(quant.Q4_K, make([]byte, 2*rs*4), 256, 2, 4, make([]float32, 256*2*2), 2, 2, []int32{0, 1, 2}, 3),
		"q8_1 quant":  func() error { _, err := checkQuantize(quant.Q8_1, make([]float32, 64), 2, 32, nil); return err }(),
		"no imatrix":  func() error { _, err := checkQuantize(quant.IQ2_XXS, make([]float32, 256), 1, 256, nil); return err }(),
		"short x":     func() error { _, err := checkQuantize(quant.Q8_0, make([]float32, 63), 2, 32, nil); return err }(),
	} {
		if err == nil {
			t.Errorf("%s: accepted", name)
		}
		// Only what ggml cannot do is unsupported; bad arguments are not.
		if unsup := name == "q8_1 quant"; errors.Is(err, errors.ErrUnsupported) != unsup || errors.Is(err, ErrUnsupportedOp) != unsup {
			t.Errorf("%s: %v: unsupported = %v, want %v", name, err, !unsup, unsup)
		}
	}
	if err := checkMulMatID(quant.Q4_K, make([]byte, 2*rs*4), 256, 2, 4, make([]float32, 256*2), 1, 2, []int32{0, 3, 1, 2}, 2); err != nil {
		t.Fatal(err)
	}
	if n, err := checkQuantize(quant.Q8_0, make([]float32, 64), 2, 32, nil); err != nil || n != 68 {
		t.Fatalf("checkQuantize = %d, %v", n, err)
	}
}

// The kernel sources given in Meta are recorded, and read back by gguf/golden; none given,
// none recorded.
func TestCaptureKernel(t *testing.T) {
	p := DefaultPlan(1)
	p.Types, p.Batches, p.QuantRows = p.Types[:1], []int{1}, 0
	for _, k := range []ggmlsrc.Set{nil, ggmlsrc.Modelled()} {
		w, _, err := Capture(p, &fakeRunner{}, &fakeQuantizer{}, Meta{Commit: "0123456789ab", Kernel: k})
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		if _, err := w.WriteTo(&buf); err != nil {
			t.Fatal(err)
		}
		f, err := golden.New(bytes.NewReader(buf.Bytes()), int64(buf.Len()), "capture")
		if err != nil {
			t.Fatal(err)
		}
		want := golden.Kernel{}
		if k != nil {
			want = golden.Kernel{Fingerprint: ggmlsrc.ModelledFingerprint(), Files: k}
		}
		if f.Kernel.Fingerprint != want.Fingerprint || !slices.Equal(f.Kernel.Files, want.Files) {
			t.Errorf("recorded %+v, want %+v", f.Kernel, want)
		}
	}
	bad := ggmlsrc.Set{{Path: "src/x.c", SHA256: "nope"}}
	if _, _, err := Capture(p, &fakeRunner{}, &fakeQuantizer{}, Meta{Kernel: bad}); err == nil || !strings.Contains(err.Error(), "src/x.c") {
		t.Errorf("malformed kernel hashes: %v", err)
	}
}
