package ggml

import (
	"errors"
	"fmt"
	"testing"

	"github.com/ggsim/ggsim/gpu/internal/dl"
	"github.com/ggsim/ggsim/oracle"
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
