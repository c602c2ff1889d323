package ggml

import (
	"errors"
	"fmt"
	"testing"

	"github.com/ggsim/ggsim/gpu/internal/dl"
	"github.com/ggsim/ggsim/oracle"
	"github.com/ggsim/ggsim/quant"
	"github.com/ggsim/ggsim/sim"
)

// TestUnsupportedErrors: the sentinels of a refused operation, another device and a
// build without the backend match errors.ErrUnsupported (= oracle.ErrUnsupported), each
// its own; the verdict needs no text matching.
func TestUnsupportedErrors(t *testing.T) {
	for _, e := range []error{ErrUnsupportedOp, ErrOtherDevice, ErrNotBuilt, dl.ErrNoCgo} {
		err := fmt.Errorf("ggml: mul_mat q4_0 K=32 N=1 M=1: %w", e)
		if !errors.Is(err, oracle.ErrUnsupported) || !errors.Is(err, errors.ErrUnsupported) || !errors.Is(err, e) {
			t.Errorf("%v does not match errors.ErrUnsupported and its sentinel", err)
		}
	}
	if errors.Is(ErrUnsupportedOp, ErrOtherDevice) {
		t.Error("two sentinels match each other")
	}
}

// TestImplWithoutBackend: in a build without the ggml backend, the Impl of a Backend
// reports every call as unsupported.
func TestImplWithoutBackend(t *testing.T) {
	if Built {
		t.Skip("SKIP (not a pass): this build has the ggml backend; the stub's Impl is tested without the cuda tag")
	}
	dev, err := sim.Lookup("H200")
	if err != nil {
		t.Fatal(err)
	}
	var b Backend
	im := b.Impl()
	if im.Name() != "ggml CPU" {
		t.Fatalf("name %q", im.Name())
	}
	if _, err := im.MulMat(dev, quant.Q4_0, make([]byte, 18), 32, 1, make([]float32, 32), 1); !errors.Is(err, oracle.ErrUnsupported) {
		t.Fatalf("MulMat: %v", err)
	}
	if _, err := im.MulMatID(dev, quant.Q4_0, make([]byte, 18), 32, 1, 1, make([]float32, 32), 1, 1, []int32{0}, 1); !errors.Is(err, oracle.ErrUnsupported) {
		t.Fatalf("MulMatID: %v", err)
	}
}
