package ggml

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/ggsim/ggsim/oracle"
	"github.com/ggsim/ggsim/quant"
	"github.com/ggsim/ggsim/sim"
)

// TestUnsupportedErrors: a refused operation and a build without the backend wrap
// oracle.ErrUnsupported; argument errors do not.
func TestUnsupportedErrors(t *testing.T) {
	if unsupported(nil) != nil {
		t.Fatal("nil error wrapped")
	}
	for _, err := range []error{
		fmt.Errorf("ggml: mul_mat q4_0 K=32 N=1 M=1: backend CPU %s", unsupportedMsg),
		fmt.Errorf("x: %w", ErrNotBuilt),
	} {
		if e := unsupported(err); !errors.Is(e, oracle.ErrUnsupported) || !errors.Is(e, err) {
			t.Fatalf("%v: %v", err, e)
		}
	}
	if e := unsupported(errors.New("ggml: mul_mat q4_0: a has 3 bytes")); errors.Is(e, oracle.ErrUnsupported) {
		t.Fatalf("an argument error became unsupported: %v", e)
	}
}

// TestUnsupportedMessage: the message unsupported matches must be the one
// Backend.compute writes when ggml_backend_supports_op refuses a node.
func TestUnsupportedMessage(t *testing.T) {
	src, err := os.ReadFile("lib.go")
	if errors.Is(err, os.ErrNotExist) {
		t.Skip("SKIP (not a pass): lib.go is not in the working directory (a test binary run elsewhere)")
	}
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(src), unsupportedMsg) {
		t.Fatalf("lib.go no longer says %q when supports_op refuses a node", unsupportedMsg)
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
