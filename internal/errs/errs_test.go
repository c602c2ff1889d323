package errs

import (
	"errors"
	"fmt"
	"testing"
)

func TestUnsupported(t *testing.T) {
	a, b := Unsupported("a: not modelled"), Unsupported("b: not modelled")
	err := fmt.Errorf("x: %w: type q4_0", a)
	if !errors.Is(err, errors.ErrUnsupported) || !errors.Is(err, a) {
		t.Fatalf("%v does not match errors.ErrUnsupported and its sentinel", err)
	}
	if errors.Is(err, b) {
		t.Fatal("one package's sentinel matches another's")
	}
	if errors.Is(errors.New("a: not modelled"), errors.ErrUnsupported) {
		t.Fatal("a plain error with the same text matches")
	}
	if err.Error() != "x: a: not modelled: type q4_0" {
		t.Fatalf("text %q", err.Error())
	}
}
