package mmvq

import (
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/ggsim/ggsim/quant"
	"github.com/ggsim/ggsim/sim"
	"github.com/ggsim/ggsim/tiling"
)

func h200(t testing.TB) sim.Device {
	d, err := sim.Lookup("H200")
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// weights returns n rows of k values of type t: ggml's reference quantization of random
// values where ggsim has it, otherwise random bytes with every 16-bit word that looks
// like a NaN/Inf half replaced (the scales stay finite).
func weights(t testing.TB, ty quant.Type, k, n int, rng *rand.Rand) ([]byte, []float32) {
	rs, err := ty.RowSize(int64(k))
	if err != nil {
		t.Fatal(err)
	}
	x := make([]byte, int(rs)*n)
	f := make([]float32, k*n)
	for i := range f {
		f[i] = float32(rng.NormFloat64() * 0.05)
	}
	ok := true
	for r := 0; r < n && ok; r++ {
		if err := quant.QuantizeRowRef(ty, f[r*k:(r+1)*k], x[r*int(rs):(r+1)*int(rs)]); err != nil {
			ok = false
		}
	}
	if !ok {
		for i := range x {
			x[i] = byte(rng.Uint32())
		}
	}
	deq := make([]float32, k*n)
	for r := 0; r < n; r++ {
		if err := quant.DequantizeRow(ty, x[r*int(rs):(r+1)*int(rs)], deq[r*k:(r+1)*k]); err != nil {
			return x, nil
		}
	}
	return x, deq
}

func acts(k, m int, rng *rand.Rand) []float32 {
	y := make([]float32, k*m)
	for i := range y {
		y[i] = float32(rng.Float64()*2 - 1)
		if rng.IntN(64) == 0 {
			y[i] *= 8
		}
	}
	return y
}

func sameBits(t *testing.T, what string, a, b []float32) {
	t.Helper()
	if len(a) != len(b) {
		t.Fatalf("%s: lengths %d, %d", what, len(a), len(b))
	}
	for i := range a {
		if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
			t.Fatalf("%s: element %d: %v (%#08x) vs %v (%#08x)", what, i, a[i], math.Float32bits(a[i]), b[i], math.Float32bits(b[i]))
		}
	}
}

// TestTraceMatchesFast runs every registered type through the fast mode and the
// lane-by-lane trace mode (shared memory, sim.Warp shuffles) and requires the same bits,
// for MUL_MAT with 1, 3, 5 and 8 columns (4 and 2 warps, small_k and not) and MUL_MAT_ID
// with 1 and 3 tokens. N is odd so the last 2-row block has a missing row.
func TestTraceMatchesFast(t *testing.T) {
	dev := h200(t)
	rng := rand.New(rand.NewPCG(1, 2))
	for _, ty := range Types() {
		tk, _ := KernelOf(ty)
		for _, k := range []int{2 * tk.QK * 256 / tk.QK, 8 * 256} { // small and large K
			if k%tk.QK != 0 {
				continue
			}
			const n = 5
			x, _ := weights(t, ty, k, n, rng)
			for _, m := range []int{1, 3, 5, 8} {
				y := acts(k, m, rng)
				fast, err := MulMat(dev, ty, x, k, n, y, m)
				if err != nil {
					t.Fatal(err)
				}
				var nev int
				tr, err := MulMatOpts(dev, ty, x, k, n, y, m, &Options{Trace: true, Watch: func(Event) { nev++ }})
				if err != nil {
					t.Fatal(err)
				}
				sameBits(t, ty.String()+" mul_mat trace vs fast", tr, fast)
				if nev == 0 {
					t.Fatalf("%v: no events", ty)
				}
			}
			// MUL_MAT_ID: 3 experts of n rows, 2 slots, B1 = 1 (n rounded up to a multiple
			// of 4: other row counts race in ggml's one-token kernel, see IDWriteRace).
			const nid = (n + 3) / 4 * 4
			as, _ := weights(t, ty, k, 3*nid, rng)
			for _, T := range []int{1, 3} {
				b := acts(k, T, rng)
				ids := make([]int32, 2*T)
				for i := range ids {
					ids[i] = int32(rng.IntN(3))
				}
				fast, err := MulMatID(dev, ty, as, k, nid, 3, b, 1, T, ids, 2)
				if err != nil {
					t.Fatal(err)
				}
				tr, err := MulMatIDOpts(dev, ty, as, k, nid, 3, b, 1, T, ids, 2, &Options{Trace: true})
				if err != nil {
					t.Fatal(err)
				}
				sameBits(t, ty.String()+" mul_mat_id trace vs fast", tr, fast)
			}
		}
	}
}

// TestTraceEvents follows one output through the events: the vec_dot calls of every
// thread, the cross-warp sums and the butterfly end in the stored value.
func TestTraceEvents(t *testing.T) {
	dev := h200(t)
	rng := rand.New(rand.NewPCG(3, 4))
	const k, n, m = 4096, 3, 2 // q4_K: 16 blocks, 4 warps, 8 blocks per iteration
	x, _ := weights(t, quant.Q4_K, k, n, rng)
	y := acts(k, m, rng)
	var evs []Event
	var ctr sim.Counters
	out, err := MulMatOpts(dev, quant.Q4_K, x, k, n, y, m, &Options{Trace: true, Counters: &ctr, Watch: func(e Event) {
		if e.Row == 1 && e.Col == 1 {
			evs = append(evs, e)
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	var vd, cw, sh int
	lastTmp := map[int]float32{} // per thread
	var store float32
	for _, e := range evs {
		switch e.Kind {
		case EvVecDot:
			tid := 32*e.Warp + e.Lane
			if math.Float32bits(lastTmp[tid]) != math.Float32bits(e.In) {
				t.Fatalf("thread %d: vec_dot input %v, previous output %v", tid, e.In, lastTmp[tid])
			}
			lastTmp[tid] = e.Out
			if e.Block%8 != tid/16 || e.Iqs != 2*(tid%16) {
				t.Fatalf("thread %d handles block %d iqs %d", tid, e.Block, e.Iqs)
			}
			vd++
		case EvCrossWarp:
			cw++
		case EvShuffle:
			sh++
		case EvStore:
			store = e.Out
		}
	}
	if vd != 16*16 || cw != 32*3 || sh != 32*5 {
		t.Errorf("events: %d vec_dot (want 256), %d cross-warp (want 96), %d shuffle (want 160)", vd, cw, sh)
	}
	if math.Float32bits(store) != math.Float32bits(out[1*n+1]) {
		t.Errorf("stored %v, output %v", store, out[1*n+1])
	}
	if ctr.Get(sim.OpSHFL) != int64(n*m*5) || ctr.Get(sim.OpBAR) != int64((n+1)/2) {
		t.Errorf("counters: %v", &ctr)
	}
}

// TestFP64Bound checks every registered type against the float64 dot product of the
// dequantized weights with the unquantized activations: the q8_1 quantization error is
// below 1/127 of each block's largest activation, so |sim - exact| is bounded by
// Σ|x_i|·(amax of y_i's block)/127 plus rounding.
func TestFP64Bound(t *testing.T) {
	dev := h200(t)
	rng := rand.New(rand.NewPCG(5, 6))
	const k, n, m = 1024, 4, 2
	for _, ty := range Types() {
		x, deq := weights(t, ty, k, n, rng)
		if deq == nil {
			t.Logf("%v: no dequantizer; skipped", ty)
			continue
		}
		y := acts(k, m, rng)
		out, err := MulMat(dev, ty, x, k, n, y, m)
		if err != nil {
			t.Fatal(err)
		}
		for j := 0; j < m; j++ {
			for i := 0; i < n; i++ {
				var exact, bound float64
				for b := 0; b < k; b += 32 {
					var amax float64
					for l := b; l < b+32; l++ {
						amax = math.Max(amax, math.Abs(float64(y[j*k+l])))
					}
					for l := b; l < b+32; l++ {
						xv := float64(deq[i*k+l])
						exact += xv * float64(y[j*k+l])
						bound += math.Abs(xv) * (amax/127*0.51 + math.Abs(float64(y[j*k+l]))*1e-3)
					}
				}
				if got := float64(out[j*n+i]); math.Abs(got-exact) > bound+1e-6 {
					t.Errorf("%v row %d col %d: sim %v, fp64 %v, bound %v", ty, i, j, got, exact, bound)
				}
			}
		}
	}
}

func TestMulMatRefusesAMD(t *testing.T) {
	mi300 := sim.Device{Name: "MI300X", Vendor: sim.AMD, CC: sim.CCCDNA3, SMCount: 304, WarpSize: 64}
	// AMD arithmetic is not modelled: an error that classifies itself as unsupported
	// (simrun verify reports UNSUPPORTED, not ERROR).
	if _, err := MulMat(mi300, quant.Q4_0, make([]byte, 18), 32, 1, make([]float32, 32), 1); !errors.Is(err, errors.ErrUnsupported) || !errors.Is(err, sim.ErrUnsupported) {
		t.Errorf("AMD device: %v, want an error wrapping sim.ErrUnsupported", err)
	}
	if _, err := MulMatID(mi300, quant.Q4_0, make([]byte, 18), 32, 1, 1, make([]float32, 32), 1, 1, []int32{0}, 1); !errors.Is(err, errors.ErrUnsupported) {
		t.Errorf("AMD device, MUL_MAT_ID: %v, want an error wrapping errors.ErrUnsupported", err)
	}
	h := h200(t)
	// Bad input is not "unsupported".
	if _, err := MulMat(h, quant.Q4_0, make([]byte, 17), 32, 1, make([]float32, 32), 1); err == nil || errors.Is(err, errors.ErrUnsupported) {
		t.Errorf("17 bytes of q4_0: %v, want an error that is not ErrUnsupported", err)
	}
}

func TestErrors(t *testing.T) {
	dev := h200(t)
	x := make([]byte, 2*144)
	y := make([]float32, 256)
	if _, err := MulMat(dev, quant.Q4_K, x, 256, 2, y, 1); err != nil {
		t.Fatal(err)
	}
	for name, f := range map[string]func() error{
		"short x":  func() error { _, err := MulMat(dev, quant.Q4_K, x[:200], 256, 2, y, 1); return err },
		"short y":  func() error { _, err := MulMat(dev, quant.Q4_K, x, 256, 2, y[:100], 1); return err },
		"9 cols":   func() error { _, err := MulMat(dev, quant.Q4_K, x, 256, 2, make([]float32, 9*256), 9); return err },
		"bad type": func() error { _, err := MulMat(dev, quant.Type(99), x, 256, 2, y, 1); return err },
	} {
		if f() == nil {
			t.Errorf("%s: no error", name)
		}
	}
	// An out-of-range expert id names its token, slot and id.
	as := make([]byte, 2*2*144)
	b := make([]float32, 256*2)
	_, err := MulMatID(dev, quant.Q4_K, as, 256, 2, 2, b, 1, 2, []int32{0, 1, 1, 5}, 2)
	if err == nil || !strings.Contains(err.Error(), "expert id 5 of token 1, slot 1") {
		t.Errorf("bad id: %v", err)
	}
	_, err = MulMatID(dev, quant.Q4_K, as, 256, 2, 2, b, 1, 2, []int32{0, -1, 1, 0}, 2)
	if err == nil || !strings.Contains(err.Error(), "expert id -1 of token 0, slot 1") {
		t.Errorf("negative id: %v", err)
	}
	if _, err := MulMatID(dev, quant.Q4_K, as, 256, 2, 2, b, 2, 1, []int32{0, 1, 1}, 3); err == nil {
		t.Error("no error for slots not a multiple of B1")
	}
}

// TestIDWriteRace: the one-token MUL_MAT_ID launch with small_k (rows_per_block 4) and a
// row count that 4 does not divide races in ggml (IDWriteRace); the simulator refuses it
// with ErrWriteRace, and not the shapes that do not race.
func TestIDWriteRace(t *testing.T) {
	dev, _ := sim.Lookup("H200")
	rng := rand.New(rand.NewPCG(5, 6))
	const K = 256 // q4_K: 1 block < 8 = nwarps*vdr*32/qi: small_k
	for _, c := range []struct {
		n, u, tokens int
		race         bool
	}{{17, 2, 1, true}, {1, 2, 1, true}, {16, 2, 1, false}, {17, 1, 1, false}, {17, 2, 2, false}} {
		as, _ := weights(t, quant.Q4_K, K, 4*c.n, rng)
		b := acts(K, c.tokens, rng)
		ids := make([]int32, c.u*c.tokens)
		for i := range ids {
			ids[i] = int32(i % 4)
		}
		_, err := MulMatID(dev, quant.Q4_K, as, K, c.n, 4, b, 1, c.tokens, ids, c.u)
		if got := errors.Is(err, ErrWriteRace); got != c.race {
			t.Errorf("N=%d U=%d T=%d: race error %v (%v), want %v", c.n, c.u, c.tokens, got, err, c.race)
		}
		if c.race && !errors.Is(err, errors.ErrUnsupported) {
			t.Errorf("N=%d U=%d T=%d: %v does not match errors.ErrUnsupported", c.n, c.u, c.tokens, err)
		}
		if !c.race && err != nil {
			t.Errorf("N=%d U=%d T=%d: %v", c.n, c.u, c.tokens, err)
		}
	}
}

// Every type tiling plans a mul_mat_vec_q for has a simulated kernel (else MulMat would
// reach mustKernel's panic), and every registered kernel took ggml's constants.
func TestEveryPlannedTypeHasKernel(t *testing.T) {
	for typ := quant.Type(0); typ < quant.TypeCount; typ++ {
		k, ok := KernelOf(typ)
		if tiling.HasMMVQKernel(typ) != ok {
			t.Errorf("%v: tiling.HasMMVQKernel %v, registered %v", typ, tiling.HasMMVQKernel(typ), ok)
		}
		if c, _ := tiling.MMVQConstsOf(typ); ok && (k.QK != c.QK || k.QI != c.QI || k.VDR != c.VDR) {
			t.Errorf("%v: registered %d/%d/%d, tiling %+v", typ, k.QK, k.QI, k.VDR, c)
		}
	}
}
