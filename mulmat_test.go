package ggsim_test

import (
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/ggsim/ggsim"
	"github.com/ggsim/ggsim/quant"
	"github.com/ggsim/ggsim/sim"
	"github.com/ggsim/ggsim/sim/mmvq"
	"github.com/ggsim/ggsim/tiling"
)

func h200(t *testing.T) sim.Device {
	t.Helper()
	d, err := sim.Lookup("H200")
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// weights quantizes e*n random rows of k values of type typ with ggml's reference quantizer.
func weights(t *testing.T, typ quant.Type, k, n, e int, r *rand.Rand) ggsim.Weights {
	t.Helper()
	rs, err := typ.RowSize(int64(k))
	if err != nil {
		t.Fatal(err)
	}
	w := ggsim.Weights{Type: typ, K: k, N: n, E: e, Data: make([]byte, int(rs)*n*max(e, 1))}
	x := make([]float32, k)
	for row := 0; row < n*max(e, 1); row++ {
		for i := range x {
			x[i] = (2*r.Float32() - 1) * 0.05
		}
		if err := quant.QuantizeRowRef(typ, x, w.Data[row*int(rs):(row+1)*int(rs)]); err != nil {
			t.Fatal(err)
		}
	}
	return w
}

func acts(n int, r *rand.Rand) []float32 {
	b := make([]float32, n)
	for i := range b {
		b[i] = 2*r.Float32() - 1
	}
	return b
}

func sameBits(t *testing.T, what string, got, want []float32) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d values, want %d", what, len(got), len(want))
	}
	for i := range got {
		if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
			t.Fatalf("%s: element %d: %#08x, want %#08x", what, i, math.Float32bits(got[i]), math.Float32bits(want[i]))
		}
	}
}

// TestMulMatDispatches: the front door runs MMVQ where ggml does, with the bits of the
// kernel called directly, in both modes; the trace records the launch.
func TestMulMatDispatches(t *testing.T) {
	dev := h200(t)
	r := rand.New(rand.NewPCG(1, 2))
	w := weights(t, quant.Q4_K, 512, 5, 0, r)
	b := acts(512*3, r)
	res, err := ggsim.MulMat(dev, w, b, 3)
	if err != nil {
		t.Fatal(err)
	}
	if res.Decision.Kernel != tiling.KernelMMVQ || res.Trace != nil {
		t.Fatalf("decision %+v, trace %v", res.Decision, res.Trace != nil)
	}
	want, err := mmvq.MulMat(dev, w.Type, w.Data, w.K, w.N, b, 3)
	if err != nil {
		t.Fatal(err)
	}
	sameBits(t, "MulMat vs mmvq.MulMat", res.Out, want)
	tr, err := ggsim.MulMat(dev, w, b, 3, ggsim.WithTrace())
	if err != nil {
		t.Fatal(err)
	}
	sameBits(t, "WithTrace vs fast", tr.Out, want)
	if tr.Trace == nil || tr.Trace.Kernel != tiling.KernelMMVQ || len(tr.Trace.MMVQ) == 0 {
		t.Fatalf("trace: %+v", tr.Trace)
	}
	stores := 0
	for _, e := range tr.Trace.MMVQ {
		if e.Kind == mmvq.EvStore {
			stores++
		}
	}
	if stores != w.N*3 {
		t.Errorf("%d stores in the trace, want one per output (%d)", stores, w.N*3)
	}

	we := weights(t, quant.Q8_0, 256, 4, 3, r)
	ids := []int32{2, 0, 1, 1}
	bi := acts(256*2, r)
	got, err := ggsim.MulMatID(dev, we, bi, 1, 2, ids, 2)
	if err != nil {
		t.Fatal(err)
	}
	wantID, err := mmvq.MulMatID(dev, we.Type, we.Data, 256, 4, 3, bi, 1, 2, ids, 2)
	if err != nil {
		t.Fatal(err)
	}
	sameBits(t, "MulMatID vs mmvq.MulMatID", got.Out, wantID)
}

// TestMulMatUnsupported: where ggml dispatches to a kernel ggsim does not simulate
// (cuBLAS), for a routing or a device whose arithmetic it does not model, the error
// wraps errors.ErrUnsupported; the decision is still returned.
func TestMulMatUnsupported(t *testing.T) {
	dev := h200(t)
	r := rand.New(rand.NewPCG(3, 4))
	w := weights(t, quant.Q4_K, 256, 2, 0, r)
	// MMQ is simulated: 9 columns give bits and the decision.
	res, err := ggsim.MulMat(dev, w, acts(256*9, r), 9)
	if err != nil || res.Decision.Kernel != tiling.KernelMMQ || len(res.Out) != 2*9 {
		t.Errorf("9 columns: %v, decision %+v", err, res.Decision)
	}
	// MMQ in MUL_MAT_ID mode is simulated: 9 tokens give bits. A token that names one
	// expert in two slots (ggml's routing leaves a dst column unwritten) is not modelled.
	we := weights(t, quant.Q4_K, 256, 2, 4, r)
	ids := make([]int32, 9)
	res, err = ggsim.MulMatID(dev, we, acts(256*9, r), 1, 9, ids, 1)
	if err != nil || res.Decision.Kernel != tiling.KernelMMQ || len(res.Out) != 2*9 {
		t.Errorf("9 tokens: %v, decision %+v", err, res.Decision)
	}
	res, err = ggsim.MulMatID(dev, we, acts(256*9, r), 1, 9, make([]int32, 18), 2)
	if !errors.Is(err, errors.ErrUnsupported) || res.Decision.Kernel != tiling.KernelMMQ {
		t.Errorf("9 tokens naming expert 0 twice: %v, decision %+v", err, res.Decision)
	}
	f16 := ggsim.Weights{Type: quant.F16, K: 32, N: 1, Data: make([]byte, 64)}
	if _, err := ggsim.MulMat(dev, f16, make([]float32, 32), 1); !errors.Is(err, errors.ErrUnsupported) {
		t.Errorf("f16 weights (cuBLAS): %v", err)
	}
	mi300, err := sim.Lookup("MI300X")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ggsim.MulMat(mi300, w, acts(256, r), 1); !errors.Is(err, errors.ErrUnsupported) || !errors.Is(err, sim.ErrUnsupported) {
		t.Errorf("MI300X: %v", err)
	}
}

// TestMulMatBadInput: sizes that do not fit are errors that say what, and are not
// ErrUnsupported (also where ggml would dispatch MMQ).
func TestMulMatBadInput(t *testing.T) {
	dev := h200(t)
	r := rand.New(rand.NewPCG(5, 6))
	w := weights(t, quant.Q4_0, 64, 2, 0, r)
	short := w
	short.Data = w.Data[:len(w.Data)-1]
	we := weights(t, quant.Q4_0, 64, 2, 2, r)
	for _, c := range []struct {
		what string
		err  func() error
	}{
		{"short weights", func() error { _, err := ggsim.MulMat(dev, short, acts(64, r), 1); return err }},
		{"short weights, 9 columns", func() error { _, err := ggsim.MulMat(dev, short, acts(64*9, r), 9); return err }},
		{"K not whole blocks", func() error {
			_, err := ggsim.MulMat(dev, ggsim.Weights{Type: quant.Q4_0, K: 48, N: 1, Data: make([]byte, 27)}, acts(48, r), 1)
			return err
		}},
		{"activations of the wrong length", func() error { _, err := ggsim.MulMat(dev, w, acts(63, r), 1); return err }},
		{"no columns", func() error { _, err := ggsim.MulMat(dev, w, nil, 0); return err }},
		{"experts given to MulMat", func() error { _, err := ggsim.MulMat(dev, we, acts(64, r), 1); return err }},
		{"expert id out of range", func() error {
			_, err := ggsim.MulMatID(dev, we, acts(64, r), 1, 1, []int32{0, 2}, 2)
			return err
		}},
		{"slots not a multiple of rows", func() error {
			_, err := ggsim.MulMatID(dev, we, acts(64*2, r), 2, 1, []int32{0, 1, 1}, 3)
			return err
		}},
		{"ids of the wrong length", func() error {
			_, err := ggsim.MulMatID(dev, we, acts(64, r), 1, 1, []int32{0}, 2)
			return err
		}},
	} {
		err := c.err()
		if err == nil || errors.Is(err, errors.ErrUnsupported) || !strings.HasPrefix(err.Error(), "ggsim: ") {
			t.Errorf("%s: %v, want a ggsim error that is not ErrUnsupported", c.what, err)
		}
	}
}

// TestSimulatorLaneByLane: the oracle.Impl in its lane-by-lane mode gives the fast bits.
func TestSimulatorLaneByLane(t *testing.T) {
	dev := h200(t)
	r := rand.New(rand.NewPCG(7, 8))
	w := weights(t, quant.Q6_K, 512, 3, 0, r)
	b := acts(512*6, r)
	fast, err := ggsim.NewSimulator().MulMat(dev, w.Type, w.Data, w.K, w.N, b, 6)
	if err != nil {
		t.Fatal(err)
	}
	slow, err := (&ggsim.Simulator{LaneByLane: true}).MulMat(dev, w.Type, w.Data, w.K, w.N, b, 6)
	if err != nil {
		t.Fatal(err)
	}
	sameBits(t, "lane by lane vs fast", slow, fast)
}
