//go:build cuda && cgo

package dl

import (
	"strings"
	"testing"
)

// libc is on every Linux machine this builds on, so these tests run anywhere.
func TestOpenAndSym(t *testing.T) {
	l, err := Open("libc.so.6")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if l.Name() != "libc.so.6" {
		t.Fatalf("Name() = %q", l.Name())
	}
	p, err := l.Sym("strlen")
	if err != nil || p == nil {
		t.Fatalf("Sym(strlen) = %v, %v", p, err)
	}
	if _, err := l.Syms("strlen", "ggsim_no_such_symbol"); err == nil {
		t.Fatal("Syms with a missing symbol succeeded")
	}
}

func TestMissingLibrary(t *testing.T) {
	_, err := Open("libggsim-no-such-library.so.1", "/nonexistent/libx.so")
	if err == nil {
		t.Fatal("Open of missing libraries succeeded")
	}
	for _, want := range []string{"dlopen", "libggsim-no-such-library.so.1", "/nonexistent/libx.so"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name %q", err, want)
		}
	}
	if _, err := Open(); err == nil {
		t.Error("Open() with no names succeeded")
	}
	if _, err := Open(""); err == nil {
		t.Error(`Open("") succeeded`)
	}
}

func TestMissingSymbol(t *testing.T) {
	l, err := Open("libc.so.6")
	if err != nil {
		t.Fatal(err)
	}
	_, err = l.Sym("ggsim_no_such_symbol")
	if err == nil {
		t.Fatal("Sym of a missing symbol succeeded")
	}
	for _, want := range []string{"dlsym", "ggsim_no_such_symbol", "libc.so.6"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name %q", err, want)
		}
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if _, err := l.Sym("strlen"); err == nil || !strings.Contains(err.Error(), "closed") {
		t.Fatalf("Sym after Close: %v", err)
	}
}
