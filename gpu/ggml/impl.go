package ggml

import (
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/ggsim/ggsim/gpu/internal/dl"
	"github.com/ggsim/ggsim/oracle"
	"github.com/ggsim/ggsim/quant"
	"github.com/ggsim/ggsim/sim"
)

// Impl returns the backend as an oracle.Impl, so that the verifier and the conformance
// suite (oracle/oracletest) can run a user's ggml build like the simulator.
//
// For a CUDA backend the simulated device passed to MulMat and MulMatID must have the
// compute capability of the backend's GPU (the driver's, read once); otherwise the call
// returns an error wrapping oracle.ErrUnsupported, since the results would be another
// device's. A CPU backend ignores the device. An operation the backend refuses
// (ggml_backend_supports_op is false), and every call in a build without the cuda tag,
// return errors wrapping oracle.ErrUnsupported; invalid arguments and failures of ggml
// return the backend's other errors.
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
	out, err := x.b.MulMat(t, a, K, N, b, M)
	return out, unsupported(err)
}

// MulMatID implements oracle.Impl.
func (x *backendImpl) MulMatID(dev sim.Device, t quant.Type, as []byte, K, N, E int, b []float32, B1, T int, ids []int32, U int) ([]float32, error) {
	if err := x.checkDevice(dev); err != nil {
		return nil, err
	}
	out, err := x.b.MulMatID(t, as, K, N, E, b, B1, T, ids, U)
	return out, unsupported(err)
}

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
		return fmt.Errorf("%w: ggml backend %s runs on %s (cc %d); asked for %s (cc %d)",
			oracle.ErrUnsupported, x.b.Spec(), x.info.Name, x.info.CC, dev.Name, dev.CC)
	}
	return nil
}

// unsupportedMsg is how Backend.compute says ggml_backend_supports_op refused the node.
const unsupportedMsg = "does not support this operation"

// unsupported wraps oracle.ErrUnsupported around err where the backend refused the
// operation or the build has no backend.
func unsupported(err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, ErrNotBuilt) || errors.Is(err, dl.ErrNoCgo) || strings.Contains(err.Error(), unsupportedMsg) {
		return fmt.Errorf("%w: %w", oracle.ErrUnsupported, err)
	}
	return err
}
