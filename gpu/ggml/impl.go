package ggml

import (
	"fmt"
	"sync"

	"github.com/ggsim/ggsim/oracle"
	"github.com/ggsim/ggsim/quant"
	"github.com/ggsim/ggsim/sim"
	"github.com/ggsim/ggsim/sim/glu"
)

// Impl returns the backend as an oracle.Impl, so that the verifier and the conformance
// suite (oracle/oracletest) can run a user's ggml build like the simulator.
//
// For a CUDA backend the simulated device passed to MulMat and MulMatID must have the
// compute capability of the backend's GPU (the driver's, read once); otherwise the call
// returns an error wrapping ErrOtherDevice, since the results would be another
// device's. A CPU backend ignores the device. An operation the backend refuses
// (ErrUnsupportedOp) and every call in a build without the cuda tag (ErrNotBuilt) return
// errors that match errors.ErrUnsupported (= oracle.ErrUnsupported) where they happen;
// invalid arguments and failures of ggml return the backend's other errors.
func (b *Backend) Impl() oracle.Impl { return &backendImpl{b: b} }

type backendImpl struct {
	b       *Backend
	once    sync.Once
	info    DeviceInfo
	infoErr error
}

// Name implements oracle.Impl: "ggml CUDA0" or "ggml CPU".
func (x *backendImpl) Name() string { return "ggml " + x.b.Spec().String() }

// MulMat implements oracle.Impl.
func (x *backendImpl) MulMat(dev sim.Device, t quant.Type, a []byte, K, N int, b []float32, M int) ([]float32, error) {
	if err := x.checkDevice(dev); err != nil {
		return nil, err
	}
	return x.b.MulMat(t, a, K, N, b, M)
}

// MulMatID implements oracle.Impl.
func (x *backendImpl) MulMatID(dev sim.Device, t quant.Type, as []byte, K, N, E int, b []float32, B1, T int, ids []int32, U int) ([]float32, error) {
	if err := x.checkDevice(dev); err != nil {
		return nil, err
	}
	return x.b.MulMatID(t, as, K, N, E, b, B1, T, ids, U)
}

// MulMatGLU implements oracle.GLUImpl with Backend.MulMatGLU.
func (x *backendImpl) MulMatGLU(dev sim.Device, t quant.Type, gate, up []byte, K, N int, b []float32, M int, g glu.Spec, fusionAllowed bool) ([]float32, error) {
	if err := x.checkDevice(dev); err != nil {
		return nil, err
	}
	return x.b.MulMatGLU(t, gate, up, K, N, b, M, GLU{Op: string(g.Op), Alpha: g.Alpha, Limit: g.Limit, Fused: fusionAllowed})
}

// MulMatIDGLU implements oracle.GLUImpl with Backend.MulMatIDGLU.
func (x *backendImpl) MulMatIDGLU(dev sim.Device, t quant.Type, gate, up []byte, K, N, E int, b []float32, B1, T int, ids []int32, U int, g glu.Spec, fusionAllowed bool) ([]float32, error) {
	if err := x.checkDevice(dev); err != nil {
		return nil, err
	}
	return x.b.MulMatIDGLU(t, gate, up, K, N, E, b, B1, T, ids, U, GLU{Op: string(g.Op), Alpha: g.Alpha, Limit: g.Limit, Fused: fusionAllowed})
}

var _ oracle.GLUImpl = (*backendImpl)(nil)

// checkDevice returns an error unless the backend computes what dev asks: any device for
// the CPU backend, dev's compute capability for a CUDA backend.
func (x *backendImpl) checkDevice(dev sim.Device) error {
	if x.b.Spec().Kind != CUDA {
		return nil
	}
	x.once.Do(func() { x.info, x.infoErr = x.b.Info() })
	if x.infoErr != nil {
		return fmt.Errorf("ggml: %s: %w", x.Name(), x.infoErr)
	}
	if x.info.CC != dev.CC {
		return fmt.Errorf("ggml: %w: backend %s runs on %s (cc %d); asked for %s (cc %d)",
			ErrOtherDevice, x.b.Spec(), x.info.Name, x.info.CC, dev.Name, dev.CC)
	}
	return nil
}
