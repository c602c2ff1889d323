//go:build !cuda || !cgo

package dl

import (
	"errors"
	"strings"
	"testing"
)

// Without the cuda tag (or without cgo) every entry point must say why it cannot work.
func TestNotBuiltErrors(t *testing.T) {
	if Built {
		t.Fatal("Built is true in the stub build")
	}
	_, err := Open("libc.so.6")
	if err == nil {
		t.Fatal("Open succeeded in a build without the cuda tag")
	}
	if !errors.Is(err, ErrNotBuilt) && !errors.Is(err, ErrNoCgo) {
		t.Fatalf("Open error %v is neither ErrNotBuilt nor ErrNoCgo", err)
	}
	if !strings.Contains(err.Error(), "cuda tag") {
		t.Fatalf("error %q does not mention the cuda tag", err)
	}
}
