//go:build !cuda || !cgo

package dl

import "unsafe"

// Built reports whether this build can load libraries (built with the cuda tag and cgo).
const Built = false

// Library is a shared library; in this build none can be opened.
type Library struct{}

func notBuilt() error {
	if cudaTag {
		return ErrNoCgo
	}
	return ErrNotBuilt
}

// Open returns ErrNotBuilt (or ErrNoCgo): this build loads no libraries.
func Open(candidates ...string) (*Library, error) { return nil, notBuilt() }

// OpenGlobal returns ErrNotBuilt (or ErrNoCgo): this build loads no libraries.
func OpenGlobal(candidates ...string) (*Library, error) { return nil, notBuilt() }

// Name returns "".
func (l *Library) Name() string { return "" }

// Sym returns ErrNotBuilt (or ErrNoCgo).
func (l *Library) Sym(name string) (unsafe.Pointer, error) { return nil, notBuilt() }

// Syms returns ErrNotBuilt (or ErrNoCgo).
func (l *Library) Syms(names ...string) ([]unsafe.Pointer, error) { return nil, notBuilt() }

// Close returns nil.
func (l *Library) Close() error { return nil }
