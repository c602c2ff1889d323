package ggml

import (
	_ "embed"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/ggsim/ggsim/oracle"
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

// libSource is lib.go, embedded so that the test below runs wherever the test binary
// does (on the device it runs from the repository root, not this folder).
//
//go:embed lib.go
var libSource string

// TestUnsupportedMessage: the message unsupported matches must be the one
// Backend.compute writes when ggml_backend_supports_op refuses a node.
func TestUnsupportedMessage(t *testing.T) {
	if !strings.Contains(libSource, unsupportedMsg) {
		t.Fatalf("lib.go no longer says %q when supports_op refuses a node", unsupportedMsg)
	}
}
