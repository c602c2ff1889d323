package oracle_test

import (
	"bytes"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/ggsim/ggsim"
	"github.com/ggsim/ggsim/gguf/golden"
	"github.com/ggsim/ggsim/oracle"
	"github.com/ggsim/ggsim/quant"
	"github.com/ggsim/ggsim/sim"
	"github.com/ggsim/ggsim/sim/mmvq"
)

// The verdicts of the golden verifier on synthetic files, with the front door's simulator
// (ggsim.Simulator) as the implementation: an external test, since the oracle does not
// import the simulator.

var h200Meta = golden.Meta{
	Producer:   "oracle test",
	Device:     golden.Device{Name: "NVIDIA H200", CC: 900, SMCount: 132, Driver: "580.159.04"},
	GGMLCommit: oracle.GGMLCommit,
	GGMLBuild:  "test",
}

// synthetic builds a golden file with one mul_mat case of M columns whose expected
// output is what the simulator computes, optionally altered by edit.
func synthetic(t *testing.T, meta golden.Meta, typ quant.Type, M int, edit func([]float32)) *golden.File {
	t.Helper()
	return syntheticWith(t, meta, nil, typ, M, edit)
}

// syntheticWith is synthetic with keys added by keys (nil: none) before the case.
func syntheticWith(t *testing.T, meta golden.Meta, keys func(*golden.Writer) error, typ quant.Type, M int, edit func([]float32)) *golden.File {
	t.Helper()
	r := rand.New(rand.NewPCG(3, 4))
	const K, N = 512, 16
	a := oracle.QuantizeRows(t, typ, oracle.GoldenLike(r, K*N, 0.05), K, N)
	b := oracle.GoldenLike(r, K*M, 1)
	var dst []float32
	if M <= 8 {
		h200, _ := sim.Lookup("H200")
		var err error
		if dst, err = mmvq.MulMat(h200, typ, a, K, N, b, M); err != nil {
			t.Fatal(err)
		}
	} else {
		dst = make([]float32, N*M)
	}
	if edit != nil {
		edit(dst)
	}
	w := golden.NewWriter(meta)
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(w.AddTensor("a", typ, []int64{K, N}, a))
	must(w.AddF32("b", []int64{K, int64(M)}, b))
	must(w.AddF32("dst", []int64{N, int64(M)}, dst))
	if keys != nil {
		must(keys(w))
	}
	_, err := w.AddCase(golden.Case{Op: golden.OpMulMat, Src: []string{"a", "b"}, Dst: "dst"})
	must(err)
	var buf bytes.Buffer
	_, err = w.WriteTo(&buf)
	must(err)
	f, err := golden.New(bytes.NewReader(buf.Bytes()), int64(buf.Len()), "synthetic.gguf")
	must(err)
	return f
}

func verifyOne(t *testing.T, f *golden.File) oracle.CaseResult {
	t.Helper()
	res, err := oracle.VerifyFile(f, ggsim.NewSimulator(), oracle.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 1 {
		t.Fatalf("%d results, want 1", len(res))
	}
	return res[0]
}

func TestVerifyVerdicts(t *testing.T) {
	if r := verifyOne(t, synthetic(t, h200Meta, quant.Q4_K, 3, nil)); !r.OK() || r.Status != oracle.StatusBitExact || r.FP64 == nil {
		t.Errorf("simulator's own output: %s", r.Line())
	}
	r := verifyOne(t, synthetic(t, h200Meta, quant.Q4_K, 3, func(d []float32) {
		d[21] = math.Float32frombits(math.Float32bits(d[21]) ^ 1)
	}))
	if r.OK() || r.Status != oracle.StatusMismatch || r.Bits.First != 21 || r.Bits.Differing != 1 ||
		!strings.Contains(r.Detail, "row 5, column 1") || !strings.Contains(r.Detail, "block.x") {
		t.Errorf("one flipped bit: %s", r.Line())
	}
	r = verifyOne(t, synthetic(t, h200Meta, quant.Q8_0, 2, func(d []float32) {
		for i := range d {
			d[i] *= 2
		}
	}))
	if r.OK() || r.FP64 == nil || r.FP64.OK() {
		t.Errorf("doubled output must be outside the fp64 bound: %s", r.Line())
	}
	other := h200Meta
	other.GGMLCommit = "0123456789ab"
	if r := verifyOne(t, synthetic(t, other, quant.Q4_K, 1, nil)); r.OK() || r.Status != oracle.StatusUnsupported {
		t.Errorf("other ggml commit: %s", r.Line())
	}
	mi300 := h200Meta
	mi300.Device = golden.Device{Name: "AMD Instinct MI300X", CC: sim.CCCDNA3, SMCount: 304}
	if r := verifyOne(t, synthetic(t, mi300, quant.Q4_K, 9, nil)); r.OK() || r.Status != oracle.StatusUnsupported {
		t.Errorf("9 columns (MMQ) on an MI300X: %s", r.Line())
	}
	unknownDev := h200Meta
	unknownDev.Device.CC = 123
	if r := verifyOne(t, synthetic(t, unknownDev, quant.Q4_K, 1, nil)); r.OK() || r.Status != oracle.StatusUnsupported {
		t.Errorf("unknown device: %s", r.Line())
	}
}

// TestVerifyAMDUnsupported: a golden file of an AMD device (MI300X) is UNSUPPORTED, not
// ERROR: ggml dispatches MMVQ there, and the simulated kernel refuses AMD arithmetic with
// an error wrapping errors.ErrUnsupported (it was reported as ERROR when the refusal was
// a plain error).
func TestVerifyAMDUnsupported(t *testing.T) {
	amd := h200Meta
	amd.Device = golden.Device{Name: "MI300X", CC: sim.CCCDNA3, SMCount: 304}
	r := verifyOne(t, synthetic(t, amd, quant.Q4_K, 1, nil))
	if r.OK() || r.Status != oracle.StatusUnsupported || !strings.Contains(r.Detail, "NVIDIA") {
		t.Errorf("MI300X: %s", r.Line())
	}
}
