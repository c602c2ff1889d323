//go:build !cuda || !cgo

package ggml

import (
	"time"

	"github.com/ggsim/ggsim/quant"
)

// Timed is a prepared graph; this build cannot make one.
type Timed struct{}

// TimedMulMat returns ErrNotBuilt.
func (b *Backend) TimedMulMat(t quant.Type, a []byte, k, n int, x []float32, m int) (*Timed, error) {
	return nil, notBuilt()
}

// TimedMulMatID returns ErrNotBuilt.
func (b *Backend) TimedMulMatID(t quant.Type, as []byte, k, n, e int, x []float32, b1, tok int, ids []int32, u int) (*Timed, error) {
	return nil, notBuilt()
}

// Run returns ErrNotBuilt.
func (t *Timed) Run() (time.Duration, error) { return 0, notBuilt() }

// Output returns ErrNotBuilt.
func (t *Timed) Output() ([]float32, error) { return nil, notBuilt() }

// Close returns nil.
func (t *Timed) Close() error { return nil }
