//go:build cuda && cgo

package ggml

import (
	"errors"
	"math"
	"testing"

	"github.com/ggsim/ggsim"
	"github.com/ggsim/ggsim/gguf/golden"
	"github.com/ggsim/ggsim/oracle"
	"github.com/ggsim/ggsim/quant"
	"github.com/ggsim/ggsim/sim"
	"github.com/ggsim/ggsim/sim/glu"
)

// gluRef is the GLU in float64 of a gate and an up value (the textbook formulas).
func gluRef(g GLU, x, u float64) float64 {
	switch g.Op {
	case golden.GLUSwiGLU:
		return x / (1 + math.Exp(-x)) * u
	case golden.GLUGeGLU:
		return 0.5 * x * (1 + math.Tanh(math.Sqrt(2/math.Pi)*x*(1+0.044715*x*x))) * u
	}
	a, l := float64(g.Alpha), float64(g.Limit)
	x = math.Min(x, l)
	u = math.Max(math.Min(u, l), -l)
	return x / (1 + math.Exp(-x*a)) * (1 + u)
}

// The harness builds the GLU graphs as the golden schema says: gate first, up second,
// alpha and limit passed through. On the CPU backend (and CUDA device 0 when there is
// one) MulMatGLU and MulMatIDGLU, fused and unfused, equal the GLU of the backend's own
// two matmuls to a tolerance (1e-5 normwise; geglu: 1e-4 on the CPU, which reads gelu
// from an fp16 table, 2e-3 on CUDA, whose fast-math tanhf is tanh.approx), and are at
// least ten times that far from the GLU with gate and up swapped. On CUDA, where the
// simulator models the GPU (oracle.DeviceOf of the GPU the driver reports), the outputs
// must also have ggsim.MulMatGLU's and MulMatIDGLU's bits exactly; a case the simulator
// refuses as not modelled (errors.ErrUnsupported: the one-token MUL_MAT_ID write race)
// is reported as such and not compared.
func TestGLUGraphs(t *testing.T) {
	l := ggmlLib(t)
	cpu, err := l.NewBackend(BackendSpec{Kind: CPU, Threads: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer cpu.Close()
	backends := []*Backend{cpu}
	if l.HasCUDA() && l.CUDADeviceCount() > 0 {
		backends = append(backends, cudaBackend(t))
	}
	const K, N, E, U = 256, 64, 4, 2
	g := NewGen(99)
	gate, err := l.Quantize(quant.Q8_0, g.Weights(K*N*E), N*E, K, nil)
	if err != nil {
		t.Fatal(err)
	}
	up, err := l.Quantize(quant.Q8_0, g.Weights(K*N*E), N*E, K, nil)
	if err != nil {
		t.Fatal(err)
	}
	x := g.Values(K * U)
	for i := range x {
		x[i] *= 40 // gate values of several units: the GLUs' curved part
	}
	ids := []int32{3, 1}
	rs, _ := quant.Q8_0.RowSize(K)
	dense := int(rs) * N
	for _, be := range backends {
		simDev, exact := gluSimDevice(t, be)
		for _, op := range []GLU{{Op: golden.GLUSwiGLU}, {Op: golden.GLUGeGLU}, {Op: golden.GLUSwiGLUOAI, Alpha: 1.702, Limit: 7}} {
			tol := 1e-5
			switch {
			case op.Op == golden.GLUGeGLU && be.Spec().Kind == CUDA:
				tol = 2e-3 // tanh.approx
			case op.Op == golden.GLUGeGLU:
				tol = 1e-4 // ggml's CPU gelu reads an fp16 table
			}
			for _, fused := range []bool{true, false} {
				op.Fused = fused
				gm, err := be.MulMat(quant.Q8_0, gate[:dense], K, N, x[:K], 1)
				if err != nil {
					t.Fatal(err)
				}
				um, err := be.MulMat(quant.Q8_0, up[:dense], K, N, x[:K], 1)
				if err != nil {
					t.Fatal(err)
				}
				y, err := be.MulMatGLU(quant.Q8_0, gate[:dense], up[:dense], K, N, x[:K], 1, op)
				if err != nil {
					t.Fatal(err)
				}
				checkGLUOut(t, be.Spec().String()+" mul_mat "+op.String(), op, gm, um, y, tol)
				if exact {
					gw := ggsim.Weights{Type: quant.Q8_0, K: K, N: N, Data: gate[:dense]}
					uw := ggsim.Weights{Type: quant.Q8_0, K: K, N: N, Data: up[:dense]}
					r, err := ggsim.MulMatGLU(simDev, gw, uw, x[:K], 1, gluSpec(op), op.Fused)
					checkGLUBits(t, be.Spec().String()+" mul_mat "+op.String(), y, r.Out, err)
				}
				gi, err := be.MulMatID(quant.Q8_0, gate, K, N, E, x, U, 1, ids, U)
				if err != nil {
					t.Fatal(err)
				}
				ui, err := be.MulMatID(quant.Q8_0, up, K, N, E, x, U, 1, ids, U)
				if err != nil {
					t.Fatal(err)
				}
				yi, err := be.MulMatIDGLU(quant.Q8_0, gate, up, K, N, E, x, U, 1, ids, U, op)
				if err != nil {
					t.Fatal(err)
				}
				checkGLUOut(t, be.Spec().String()+" mul_mat_id "+op.String(), op, gi, ui, yi, tol)
				if exact {
					gw := ggsim.Weights{Type: quant.Q8_0, K: K, N: N, E: E, Data: gate}
					uw := ggsim.Weights{Type: quant.Q8_0, K: K, N: N, E: E, Data: up}
					r, err := ggsim.MulMatIDGLU(simDev, gw, uw, x, U, 1, ids, U, gluSpec(op), op.Fused)
					checkGLUBits(t, be.Spec().String()+" mul_mat_id "+op.String(), yi, r.Out, err)
				}
			}
		}
	}
}

func checkGLUOut(t *testing.T, what string, op GLU, gate, up, got []float32, tol float64) {
	t.Helper()
	normwise := func(gate, up []float32) float64 {
		var e2, w2 float64
		for i := range got {
			w := gluRef(op, float64(gate[i]), float64(up[i]))
			d := float64(got[i]) - w
			e2, w2 = e2+d*d, w2+w*w
		}
		return math.Sqrt(e2 / w2)
	}
	rel, swapped := normwise(gate, up), normwise(up, gate)
	report(t, "%s: normwise %.3g from the GLU of the backend's own matmuls (%.3g with gate and up swapped)", what, rel, swapped)
	if !(rel < tol) || !(swapped > 10*tol) {
		t.Errorf("%s: normwise error %.3g (want < %g), swapped %.3g (want > %g)", what, rel, tol, swapped, 10*tol)
	}
}

// gluSimDevice returns the simulated device of a CUDA backend's GPU and true; false for
// the CPU backend (whose arithmetic ggsim does not model) or a GPU outside the catalog.
func gluSimDevice(t *testing.T, be *Backend) (sim.Device, bool) {
	t.Helper()
	if be.Spec().Kind != CUDA {
		return sim.Device{}, false
	}
	info, err := be.Info()
	if err != nil {
		t.Fatal(err)
	}
	dev, err := oracle.DeviceOf(golden.Meta{Device: golden.Device{Name: info.Name, CC: info.CC, SMCount: info.SMCount, Driver: info.Driver}})
	if err != nil {
		report(t, "%s: no simulated device (%v): the GLU outputs are not compared bit for bit", info.Name, err)
		return sim.Device{}, false
	}
	return dev, true
}

func gluSpec(g GLU) glu.Spec { return glu.Spec{Op: glu.Op(g.Op), Alpha: g.Alpha, Limit: g.Limit} }

// checkGLUBits requires the GPU's GLU outputs to have the simulator's bits; a simulator
// error wrapping errors.ErrUnsupported is reported (not modelled), any other fails.
func checkGLUBits(t *testing.T, what string, gpu, want []float32, err error) {
	t.Helper()
	if errors.Is(err, errors.ErrUnsupported) {
		report(t, "%s: not compared with ggsim: %v", what, err)
		return
	}
	if err != nil {
		t.Errorf("%s: ggsim: %v", what, err)
		return
	}
	if len(gpu) != len(want) {
		t.Errorf("%s: %d GPU outputs, ggsim %d", what, len(gpu), len(want))
		return
	}
	diff := 0
	for i := range want {
		if math.Float32bits(gpu[i]) != math.Float32bits(want[i]) {
			if diff == 0 {
				t.Errorf("%s: dst[%d] GPU %g [%#08x], ggsim %g [%#08x]", what, i, gpu[i], math.Float32bits(gpu[i]), want[i], math.Float32bits(want[i]))
			}
			diff++
		}
	}
	if diff > 0 {
		t.Errorf("%s: %d of %d outputs differ from ggsim's bits", what, diff, len(want))
		return
	}
	report(t, "%s: %d outputs, all with ggsim's bits", what, len(want))
}
