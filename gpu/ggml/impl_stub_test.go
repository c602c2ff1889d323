//go:build !cuda || !cgo

package ggml

import (
	"errors"
	"testing"

	"github.com/ggsim/ggsim/oracle"
	"github.com/ggsim/ggsim/quant"
	"github.com/ggsim/ggsim/sim"
)

// This file is compiled only without the ggml backend (no cuda tag, or no cgo), the
// build whose Impl it tests; a cuda build has nothing here to run or skip.

// TestImplWithoutBackend: in a build without the ggml backend, the Impl of a Backend
// reports every call as unsupported.
func TestImplWithoutBackend(t *testing.T) {
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
