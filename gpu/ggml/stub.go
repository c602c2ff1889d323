//go:build !cuda || !cgo

package ggml

import (
	"github.com/ggsim/ggsim/gpu/internal/dl"
	"github.com/ggsim/ggsim/quant"
)

// Built reports whether this build has the ggml backend (the cuda tag and cgo).
const Built = false

func notBuilt() error {
	_, err := dl.Open("libggml-base.so") // the dl stub's error says which of tag or cgo is missing
	return err
}

// Lib is a loaded ggml build; this build cannot load one.
type Lib struct{}

// Backend is a ggml backend; this build cannot make one.
type Backend struct{}

// Load returns ErrNotBuilt: this build has no ggml backend.
func Load(dir string) (*Lib, error) { return nil, notBuilt() }

// HasCUDA returns false.
func (l *Lib) HasCUDA() bool { return false }

// Version returns "", "".
func (l *Lib) Version() (version, commit string) { return "", "" }

// CUDADeviceCount returns 0.
func (l *Lib) CUDADeviceCount() int { return 0 }

// Quantize returns ErrNotBuilt.
func (l *Lib) Quantize(t quant.Type, x []float32, rows, k int, imatrix []float32) ([]byte, error) {
	return nil, notBuilt()
}

// NewBackend returns ErrNotBuilt.
func (l *Lib) NewBackend(spec BackendSpec) (*Backend, error) { return nil, notBuilt() }

// Close returns nil.
func (b *Backend) Close() error { return nil }

// Spec returns the zero spec.
func (b *Backend) Spec() BackendSpec { return BackendSpec{} }

// Info returns ErrNotBuilt.
func (b *Backend) Info() (DeviceInfo, error) { return DeviceInfo{}, notBuilt() }

// MulMat returns ErrNotBuilt.
func (b *Backend) MulMat(t quant.Type, a []byte, k, n int, x []float32, m int) ([]float32, error) {
	return nil, notBuilt()
}

// MulMatID returns ErrNotBuilt.
func (b *Backend) MulMatID(t quant.Type, as []byte, k, n, e int, x []float32, b1, tok int, ids []int32, u int) ([]float32, error) {
	return nil, notBuilt()
}

// MulMatGLU returns ErrNotBuilt.
func (b *Backend) MulMatGLU(t quant.Type, gate, up []byte, k, n int, x []float32, m int, glu GLU) ([]float32, error) {
	return nil, notBuilt()
}

// MulMatIDGLU returns ErrNotBuilt.
func (b *Backend) MulMatIDGLU(t quant.Type, gate, up []byte, k, n, e int, x []float32, b1, tok int, ids []int32, u int, glu GLU) ([]float32, error) {
	return nil, notBuilt()
}
