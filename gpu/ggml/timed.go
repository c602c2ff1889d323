//go:build cuda && cgo

package ggml

import (
	"errors"
	"runtime"
	"time"
	"unsafe"

	"github.com/ggsim/ggsim/quant"
)

// Timed is one MUL_MAT or MUL_MAT_ID graph built, allocated and uploaded once, to be
// computed again and again: what a benchmark of the backend times (Run covers
// ggml_backend_graph_compute only, no allocation, upload or download). It holds its
// backend's buffer until Close.
type Timed struct {
	b *Backend
	p *prepared
}

// TimedMulMat prepares ggml_mul_mat(a, b) (arguments as MulMat) for Run.
func (b *Backend) TimedMulMat(t quant.Type, a []byte, k, n int, x []float32, m int) (*Timed, error) {
	if err := checkMulMat(t, a, k, n, x, m); err != nil {
		return nil, err
	}
	op, build := mulMatGraph(t, a, k, n, x, m)
	return b.timed(op, n*m, build)
}

// TimedMulMatID prepares ggml_mul_mat_id(as, b, ids) (arguments as MulMatID) for Run.
func (b *Backend) TimedMulMatID(t quant.Type, as []byte, k, n, e int, x []float32, b1, tok int, ids []int32, u int) (*Timed, error) {
	if err := checkMulMatID(t, as, k, n, e, x, b1, tok, ids, u); err != nil {
		return nil, err
	}
	op, build := mulMatIDGraph(t, as, k, n, e, x, b1, tok, ids, u)
	return b.timed(op, n*u*tok, build)
}

func (b *Backend) timed(op string, outLen int, build func(g *graphRun) (unsafe.Pointer, []input, error)) (*Timed, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.b == nil {
		return nil, errors.New("ggml: backend is closed")
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	p, err := b.prepare(op, outLen, build)
	if err != nil {
		return nil, err
	}
	return &Timed{b: b, p: p}, nil
}

// Run computes the graph once and returns the wall time of ggml_backend_graph_compute.
func (t *Timed) Run() (time.Duration, error) {
	b := t.b
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.b == nil || t.p == nil {
		return 0, errors.New("ggml: backend or timed graph is closed")
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	t0 := time.Now()
	err := b.run(t.p)
	return time.Since(t0), err
}

// Output returns the result of the last Run (zeros before the first).
func (t *Timed) Output() ([]float32, error) {
	t.b.mu.Lock()
	defer t.b.mu.Unlock()
	if t.b.b == nil || t.p == nil {
		return nil, errors.New("ggml: backend or timed graph is closed")
	}
	return t.p.read(), nil
}

// Close frees the graph's context and buffer (before its backend's Close).
func (t *Timed) Close() error {
	t.b.mu.Lock()
	defer t.b.mu.Unlock()
	if t.p != nil && t.b.b != nil {
		t.p.g.free()
	}
	t.p = nil
	return nil
}
