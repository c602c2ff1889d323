//go:build cuda && cgo

package cuda

import (
	"errors"
	"fmt"
	"sync"

	"github.com/ggsim/ggsim/fp16path"
	"github.com/ggsim/ggsim/quant"
)

// fp16Kernels names the kernel of kernels/fp16path.cu for each type; the order is the
// type ids T_Q4_K ... T_Q8_0 of the source.
var fp16Kernels = map[quant.Type]string{
	quant.Q4_K:   "fp16_mmv_q4_K",
	quant.Q5_K:   "fp16_mmv_q5_K",
	quant.Q6_K:   "fp16_mmv_q6_K",
	quant.Q3_K:   "fp16_mmv_q3_K",
	quant.IQ4_XS: "fp16_mmv_iq4_xs",
	quant.IQ4_NL: "fp16_mmv_iq4_nl",
	quant.Q8_0:   "fp16_mmv_q8_0",
}

// FP16Path runs the fp16 matrix-vector path of package fp16path as real CUDA kernels
// (kernels/fp16path.cu, compiled with NVRTC and -use_fast_math for the device at hand).
// It keeps its device buffers between calls (grown on demand); its methods may be called
// from several goroutines (they are serialised). Close frees the buffers.
type FP16Path struct {
	mu   sync.Mutex
	c    *Context
	conv *Function
	mmv  map[quant.Type]*Function
	bufs [fp16NBuf]fp16Buf
}

type fp16Buf struct {
	p DevPtr
	n int
}

const (
	bufX = iota
	bufY
	bufH
	bufE
	bufS
	bufDst
	bufErr
	fp16NBuf
)

// FP16Path compiles kernels/fp16path.cu for the device (once per Context) and returns a
// runner for it.
func (c *Context) FP16Path() (*FP16Path, error) {
	p := &FP16Path{c: c, mmv: map[quant.Type]*Function{}}
	var err error
	if p.conv, err = c.kernel("fp16path.cu", "fp16_convert"); err != nil {
		return nil, err
	}
	for t, name := range fp16Kernels {
		if p.mmv[t], err = c.kernel("fp16path.cu", name); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// buf returns buffer i with room for at least n bytes.
func (p *FP16Path) buf(i, n int) (DevPtr, error) {
	b := &p.bufs[i]
	if b.n >= n {
		return b.p, nil
	}
	if b.p != 0 {
		if err := p.c.Free(b.p); err != nil {
			return 0, err
		}
		b.p, b.n = 0, 0
	}
	n = max(n, 4096)
	q, err := p.c.Alloc(n)
	if err != nil {
		return 0, err
	}
	b.p, b.n = q, n
	return q, nil
}

// Close frees the device buffers.
func (p *FP16Path) Close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	var first error
	for i := range p.bufs {
		if p.bufs[i].p != 0 {
			if err := p.c.Free(p.bufs[i].p); err != nil && first == nil {
				first = err
			}
			p.bufs[i] = fp16Buf{}
		}
	}
	return first
}

// FP16Activations is what the conversion kernel wrote for M columns, laid out as
// fp16path.Activations for column c at [c*K/32 ...] (Exp), [c*K ...] (H), [c*K/16 ...]
// (Sum16).
type FP16Activations struct {
	K, M  int
	H     []uint16
	Exp   []int32
	Sum16 []float32
}

// MulMat computes dst[c*N+i] = Σ_k x[i][k]·y[c*K+k] for the N rows of x (type t) and
// the M columns of y with the fp16 path's kernels: fp16_convert for the columns, then one
// launch of the type's fp16_mmv. It is meant to give the bits of fp16path.MulMat with the
// same arguments. M may be 1..8; opt as fp16path (nil: one row per warp). A type the path
// does not cover wraps errors.ErrUnsupported; sizes are checked; an activation that
// fp16path refuses (NaN, Inf, a block beyond the prescale range) is an error.
func (p *FP16Path) MulMat(t quant.Type, x []byte, K, N int, y []float32, M int, opt *fp16path.Options) ([]float32, error) {
	out, _, err := p.run(t, x, K, N, y, M, opt, false)
	return out, err
}

// Activations runs only the conversion kernel on the M columns of y (K values each).
func (p *FP16Path) Activations(y []float32, K, M int) (*FP16Activations, error) {
	_, a, err := p.run(quant.Q8_0, nil, K, 0, y, M, nil, true)
	return a, err
}

func (p *FP16Path) run(t quant.Type, x []byte, K, N int, y []float32, M int, opt *fp16path.Options, convOnly bool) ([]float32, *FP16Activations, error) {
	if K <= 0 || K%32 != 0 || M < 1 || M > 8 || len(y) != K*M {
		return nil, nil, fmt.Errorf("cuda: fp16 path: %d activations for %d columns of K=%d: want K a positive multiple of 32, 1..8 columns", len(y), M, K)
	}
	R := 1
	var f *Function
	rs := 0
	if !convOnly {
		var ok bool
		if f, ok = p.mmv[t]; !ok {
			return nil, nil, fmt.Errorf("cuda: fp16 path: type %v: %w", t, errors.ErrUnsupported)
		}
		if opt != nil && opt.RowsPerWarp != 0 {
			R = opt.RowsPerWarp
		}
		switch R {
		case 1, 2, 4, 8, 16, 32:
		default:
			return nil, nil, fmt.Errorf("cuda: fp16 path: %d rows per warp: want 1, 2, 4, 8, 16 or 32", R)
		}
		rs64, err := t.RowSize(int64(K))
		if err != nil || N <= 0 {
			return nil, nil, fmt.Errorf("cuda: fp16 path: shape K=%d N=%d for %v: %v", K, N, t, err)
		}
		rs = int(rs64)
		if len(x) != rs*N {
			return nil, nil, fmt.Errorf("cuda: fp16 path: weights: %d bytes, want %d rows of %d bytes (%v, K=%d)", len(x), N, rs, t, K)
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	var ptr [fp16NBuf]DevPtr
	sizes := [fp16NBuf]int{bufX: len(x), bufY: 4 * K * M, bufH: 2 * K * M, bufE: 4 * K / 32 * M, bufS: 4 * K / 16 * M, bufDst: 4 * N * M, bufErr: 4}
	for i, n := range sizes {
		var err error
		if ptr[i], err = p.buf(i, max(n, 1)); err != nil {
			return nil, nil, err
		}
	}
	c := p.c
	if err := c.CopyToDevice(ptr[bufX], x); err != nil {
		return nil, nil, err
	}
	if err := c.CopyToDevice(ptr[bufY], bytesOf(y)); err != nil {
		return nil, nil, err
	}
	if err := c.Memset(ptr[bufErr], 0, 4); err != nil {
		return nil, nil, err
	}
	warps := M * K / 32
	if err := p.conv.Launch(Dim3{uint32((warps + 3) / 4), 1, 1}, Dim3{128, 1, 1}, 0,
		ptr[bufY], int32(K), int32(M), ptr[bufH], ptr[bufE], ptr[bufS], ptr[bufErr]); err != nil {
		return nil, nil, err
	}
	var cerr [1]int32
	if err := download(c, cerr[:], ptr[bufErr]); err != nil {
		return nil, nil, err
	}
	if e := cerr[0]; e > 0 {
		return nil, nil, fmt.Errorf("cuda: fp16 path: activation %d (column %d) is not finite", (e-1)%int32(K), (e-1)/int32(K))
	} else if e < 0 {
		b := int(-e - 1)
		return nil, nil, fmt.Errorf("cuda: fp16 path: activation block %d of column %d needs a prescale below 2^%d", b%(K/32), b/(K/32), fp16path.EMin)
	}
	if convOnly {
		a := &FP16Activations{K: K, M: M, H: make([]uint16, K*M), Exp: make([]int32, K/32*M), Sum16: make([]float32, K/16*M)}
		if err := download(c, a.H, ptr[bufH]); err != nil {
			return nil, nil, err
		}
		if err := download(c, a.Exp, ptr[bufE]); err != nil {
			return nil, nil, err
		}
		return nil, a, download(c, a.Sum16, ptr[bufS])
	}
	warps = (N + R - 1) / R
	if err := f.Launch(Dim3{uint32((warps + 3) / 4), 1, 1}, Dim3{128, 1, 1}, 0,
		ptr[bufX], int32(K), int32(N), int32(rs), ptr[bufH], ptr[bufE], ptr[bufS], int32(M), int32(R), ptr[bufDst]); err != nil {
		return nil, nil, err
	}
	out := make([]float32, N*M)
	return out, nil, download(c, out, ptr[bufDst])
}
