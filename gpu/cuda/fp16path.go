//go:build cuda && cgo

package cuda

import (
	"errors"
	"fmt"
	"sync"

	"github.com/ggsim/ggsim/fp16path"
	"github.com/ggsim/ggsim/quant"
)

// fp16Kernels names the suffix of the kernels of kernels/fp16path.cu for each type
// (fp16_mmv_SUFFIX, fp16_glu_SUFFIX).
var fp16Kernels = map[quant.Type]string{
	quant.Q4_K:   "q4_K",
	quant.Q5_K:   "q5_K",
	quant.Q6_K:   "q6_K",
	quant.Q3_K:   "q3_K",
	quant.IQ4_XS: "iq4_xs",
	quant.IQ4_NL: "iq4_nl",
	quant.Q8_0:   "q8_0",
}

// FP16Path runs the fp16 matrix-vector path of package fp16path as real CUDA kernels
// (kernels/fp16path.cu, compiled with NVRTC and -use_fast_math for the device at hand).
// It keeps its device buffers between calls (grown on demand); its methods may be called
// from several goroutines (they are serialised). Close frees the buffers.
type FP16Path struct {
	mu   sync.Mutex
	c    *Context
	conv *Function
	norm *Function
	mmv  map[quant.Type]*Function
	glu  map[quant.Type]*Function
	bufs [fp16NBuf]fp16Buf
}

type fp16Buf struct {
	p DevPtr
	n int
}

const (
	bufX = iota
	bufUp
	bufY
	bufW
	bufH
	bufE
	bufS
	bufDst
	bufDbg
	bufErr
	fp16NBuf
)

// FP16Path compiles kernels/fp16path.cu for the device (once per Context) and returns a
// runner for it.
func (c *Context) FP16Path() (*FP16Path, error) {
	p := &FP16Path{c: c, mmv: map[quant.Type]*Function{}, glu: map[quant.Type]*Function{}}
	var err error
	if p.conv, err = c.kernel("fp16path.cu", "fp16_convert"); err != nil {
		return nil, err
	}
	if p.norm, err = c.kernel("fp16path.cu", "fp16_rmsnorm_convert"); err != nil {
		return nil, err
	}
	for t, name := range fp16Kernels {
		if p.mmv[t], err = c.kernel("fp16path.cu", "fp16_mmv_"+name); err != nil {
			return nil, err
		}
		if p.glu[t], err = c.kernel("fp16path.cu", "fp16_glu_"+name); err != nil {
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

// bufsFor returns the buffers with the given sizes in bytes (at least 1 each).
func (p *FP16Path) bufsFor(sizes [fp16NBuf]int) ([fp16NBuf]DevPtr, error) {
	var ptr [fp16NBuf]DevPtr
	for i, n := range sizes {
		var err error
		if ptr[i], err = p.buf(i, max(n, 1)); err != nil {
			return ptr, err
		}
	}
	return ptr, nil
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

// MulMat computes dst[c*N+i] = Σ_k x[i][k]·y[c*K+k] for the N rows of x (type t) and
// the M columns of y with the fp16 path's kernels: fp16_convert for the columns, then one
// launch of the type's fp16_mmv. It gives the bits of fp16path.MulMat with the same
// arguments, and accepts what it accepts: M = 1 for every type, 2..8 where
// fp16path.MultiColumn; rows per warp opt.RowsPerWarpFor(N); opt.Disabled gives
// fp16path.ErrDisabled. A type or column count the path does not cover wraps
// errors.ErrUnsupported; sizes are checked; an activation that fp16path refuses (NaN,
// Inf, a block beyond the prescale range) is an error.
func (p *FP16Path) MulMat(t quant.Type, x []byte, K, N int, y []float32, M int, opt *fp16path.Options) ([]float32, error) {
	out, _, err := p.mulMat(t, x, nil, K, N, y, M, opt)
	return out, err
}

// MulMatSwiGLU is fp16path.MulMatSwiGLU on the device (fp16_glu_*): dst[c*N+i] =
// up_i·y_c · silu(gate_i·y_c), and per output the trace of the epilogue's inputs.
func (p *FP16Path) MulMatSwiGLU(t quant.Type, gate, up []byte, K, N int, y []float32, M int, opt *fp16path.Options) ([]float32, []FP16GLUTrace, error) {
	if up == nil {
		return nil, nil, fmt.Errorf("cuda: fp16 path: SWIGLU without an up matrix")
	}
	return p.mulMat(t, gate, up, K, N, y, M, opt)
}

// Activations runs only the conversion kernel on the M columns of y (K values each).
func (p *FP16Path) Activations(y []float32, K, M int) (*FP16Activations, error) {
	if err := checkFP16Y(y, K, M); err != nil {
		return nil, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	ptr, err := p.convert(y, K, M)
	if err != nil {
		return nil, err
	}
	return p.readActs(ptr, K, M)
}

func checkFP16Y(y []float32, K, M int) error {
	if K <= 0 || K%32 != 0 || M < 1 || M > fp16path.MaxColumns || len(y) != K*M {
		return fmt.Errorf("cuda: fp16 path: %d activations for %d columns of K=%d: want K a positive multiple of 32, 1..%d columns", len(y), M, K, fp16path.MaxColumns)
	}
	return nil
}

func (p *FP16Path) readActs(ptr [fp16NBuf]DevPtr, K, M int) (*FP16Activations, error) {
	a := &FP16Activations{K: K, M: M, H: make([]uint16, K*M), Exp: make([]int32, K/32*M), Sum16: make([]float32, K/16*M)}
	if err := download(p.c, a.H, ptr[bufH]); err != nil {
		return nil, err
	}
	if err := download(p.c, a.Exp, ptr[bufE]); err != nil {
		return nil, err
	}
	return a, download(p.c, a.Sum16, ptr[bufS])
}

// convert uploads y and runs fp16_convert (p.mu held); the buffers hold at least what
// the conversion needs (the caller grows the others first).
func (p *FP16Path) convert(y []float32, K, M int) ([fp16NBuf]DevPtr, error) {
	c := p.c
	var sizes [fp16NBuf]int
	sizes[bufY], sizes[bufH], sizes[bufE], sizes[bufS], sizes[bufErr] = 4*K*M, 2*K*M, 4*K/32*M, 4*K/16*M, 4
	ptr, err := p.bufsFor(sizes)
	if err != nil {
		return ptr, err
	}
	if err := c.CopyToDevice(ptr[bufY], bytesOf(y)); err != nil {
		return ptr, err
	}
	if err := c.Memset(ptr[bufErr], 0, 4); err != nil {
		return ptr, err
	}
	warps := M * K / 32
	if err := p.conv.Launch(Dim3{uint32((warps + 3) / 4), 1, 1}, Dim3{128, 1, 1}, 0,
		ptr[bufY], int32(K), int32(M), ptr[bufH], ptr[bufE], ptr[bufS], ptr[bufErr]); err != nil {
		return ptr, err
	}
	return ptr, p.convErr(ptr, K)
}

// convErr reads the conversion's error word.
func (p *FP16Path) convErr(ptr [fp16NBuf]DevPtr, K int) error {
	var cerr [1]int32
	if err := download(p.c, cerr[:], ptr[bufErr]); err != nil {
		return err
	}
	if e := cerr[0]; e > 0 {
		return fmt.Errorf("cuda: fp16 path: activation %d (column %d) is not finite", (e-1)%int32(K), (e-1)/int32(K))
	} else if e < 0 {
		b := int(-e - 1)
		return fmt.Errorf("cuda: fp16 path: activation block %d of column %d needs a prescale below 2^%d: %w", b%(K/32), b/(K/32), fp16path.EMin, errors.ErrUnsupported)
	}
	return nil
}

func (p *FP16Path) mulMat(t quant.Type, x, up []byte, K, N int, y []float32, M int, opt *fp16path.Options) ([]float32, []FP16GLUTrace, error) {
	if opt != nil && opt.Disabled {
		return nil, nil, fp16path.ErrDisabled
	}
	name, ok := fp16Kernels[t]
	if !ok {
		return nil, nil, fmt.Errorf("cuda: fp16 path: type %v: %w", t, errors.ErrUnsupported)
	}
	if M > 1 && !fp16path.MultiColumn(t) {
		return nil, nil, fmt.Errorf("cuda: fp16 path: %v with %d columns: %w", t, M, errors.ErrUnsupported)
	}
	if err := checkFP16Y(y, K, M); err != nil {
		return nil, nil, err
	}
	R := opt.RowsPerWarpFor(N)
	switch R {
	case 1, 2, 4, 8, 16, 32:
	default:
		return nil, nil, fmt.Errorf("cuda: fp16 path: %d rows per warp: want 1, 2, 4, 8, 16 or 32", R)
	}
	rs64, err := t.RowSize(int64(K))
	if err != nil || N <= 0 {
		return nil, nil, fmt.Errorf("cuda: fp16 path: shape K=%d N=%d for %v: %v", K, N, t, err)
	}
	rs := int(rs64)
	if len(x) != rs*N || (up != nil && len(up) != rs*N) {
		return nil, nil, fmt.Errorf("cuda: fp16 path: weights: %d bytes, want %d rows of %d bytes (%v, K=%d)", len(x), N, rs, t, K)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	var sizes [fp16NBuf]int
	sizes[bufX], sizes[bufUp], sizes[bufDst], sizes[bufDbg] = len(x), len(up), 4*N*M, 12*N*M
	if _, err := p.bufsFor(sizes); err != nil {
		return nil, nil, err
	}
	ptr, err := p.convert(y, K, M)
	if err != nil {
		return nil, nil, err
	}
	c := p.c
	if err := c.CopyToDevice(ptr[bufX], x); err != nil {
		return nil, nil, err
	}
	grid := Dim3{uint32(((N+R-1)/R + 3) / 4), 1, 1}
	out := make([]float32, N*M)
	if up == nil {
		err := p.mmv[t].Launch(grid, Dim3{128, 1, 1}, 0,
			ptr[bufX], int32(K), int32(N), int32(rs), ptr[bufH], ptr[bufE], ptr[bufS], int32(M), int32(R), ptr[bufDst])
		if err != nil {
			return nil, nil, err
		}
		return out, nil, download(c, out, ptr[bufDst])
	}
	if err := c.CopyToDevice(ptr[bufUp], up); err != nil {
		return nil, nil, err
	}
	err = p.glu[t].Launch(grid, Dim3{128, 1, 1}, 0,
		ptr[bufX], ptr[bufUp], int32(K), int32(N), int32(rs), ptr[bufH], ptr[bufE], ptr[bufS], int32(M), int32(R), ptr[bufDst], ptr[bufDbg])
	if err != nil {
		return nil, nil, fmt.Errorf("fp16_glu_%s: %w", name, err)
	}
	tr := make([]FP16GLUTrace, N*M)
	if err := download(c, out, ptr[bufDst]); err != nil {
		return nil, nil, err
	}
	return out, tr, download(c, tr, ptr[bufDbg])
}

// RMSNormConvert runs the fused single-row RMS_NORM * weight kernel
// (fp16_rmsnorm_convert, fp16path.RMSNormMul with a cache): one block of
// fp16path.NormBlockSize(len(x)) threads normalises x, multiplies by w and converts the
// result for the fp16 path. len(x) = len(w) must be a positive multiple of 32 (the
// conversion's block) below 2^24.
func (p *FP16Path) RMSNormConvert(x, w []float32, eps float32) (*FP16Norm, error) {
	r, _, err := p.RMSNormMulMat(x, w, eps, quant.Q8_0, nil, 0, nil)
	return r, err
}

// RMSNormMulMat is RMSNormConvert followed by one matmul per matrix of mats (type t, N
// rows of len(x) values each, as the Q, K and V projections after attn_norm) that reads
// the conversion the norm kernel wrote — the note's activation cache: no matmul converts
// its input again. outs[m] is fp16path.MulMat of mats[m] with the norm's output as its one
// column (the cache does not change bits).
func (p *FP16Path) RMSNormMulMat(x, w []float32, eps float32, t quant.Type, mats [][]byte, N int, opt *fp16path.Options) (*FP16Norm, [][]float32, error) {
	n := len(x)
	if n == 0 || n%32 != 0 || n >= 1<<24 || len(w) != n {
		return nil, nil, fmt.Errorf("cuda: fp16 path: RMS_NORM row of %d values with %d weights: want equal, a positive multiple of 32 below 2^24", n, len(w))
	}
	rs, R := 0, 1
	if len(mats) > 0 {
		if opt != nil && opt.Disabled {
			return nil, nil, fp16path.ErrDisabled
		}
		if _, ok := p.mmv[t]; !ok {
			return nil, nil, fmt.Errorf("cuda: fp16 path: type %v: %w", t, errors.ErrUnsupported)
		}
		rs64, err := t.RowSize(int64(n))
		if err != nil || N <= 0 {
			return nil, nil, fmt.Errorf("cuda: fp16 path: shape K=%d N=%d for %v: %v", n, N, t, err)
		}
		rs = int(rs64)
		for m, x := range mats {
			if len(x) != rs*N {
				return nil, nil, fmt.Errorf("cuda: fp16 path: matrix %d: %d bytes, want %d rows of %d bytes (%v, K=%d)", m, len(x), N, rs, t, n)
			}
		}
		switch R = opt.RowsPerWarpFor(N); R {
		case 1, 2, 4, 8, 16, 32:
		default:
			return nil, nil, fmt.Errorf("cuda: fp16 path: %d rows per warp: want 1, 2, 4, 8, 16 or 32", R)
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	var sizes [fp16NBuf]int
	sizes[bufX], sizes[bufY], sizes[bufW], sizes[bufDst], sizes[bufH], sizes[bufE], sizes[bufS], sizes[bufDbg], sizes[bufErr] = rs*N, 4*n, 4*n, max(4*n, 4*N), 2*n, 4*n/32, 4*n/16, 8, 4
	ptr, err := p.bufsFor(sizes)
	if err != nil {
		return nil, nil, err
	}
	c := p.c
	if err := c.CopyToDevice(ptr[bufY], bytesOf(x)); err != nil {
		return nil, nil, err
	}
	if err := c.CopyToDevice(ptr[bufW], bytesOf(w)); err != nil {
		return nil, nil, err
	}
	if err := c.Memset(ptr[bufErr], 0, 4); err != nil {
		return nil, nil, err
	}
	bs := fp16path.NormBlockSize(n)
	if err := p.norm.Launch(Dim3{1, 1, 1}, Dim3{uint32(bs), 1, 1}, 0,
		ptr[bufY], ptr[bufW], int32(n), eps, ptr[bufDst], ptr[bufH], ptr[bufE], ptr[bufS], ptr[bufErr], ptr[bufDbg]); err != nil {
		return nil, nil, err
	}
	if err := p.convErr(ptr, n); err != nil {
		return nil, nil, err
	}
	r := &FP16Norm{Dst: make([]float32, n), BlockSize: bs}
	if err := download(c, r.Dst, ptr[bufDst]); err != nil {
		return nil, nil, err
	}
	var dbg [2]float32
	if err := download(c, dbg[:], ptr[bufDbg]); err != nil {
		return nil, nil, err
	}
	r.RsqrtArg, r.Scale = dbg[0], dbg[1]
	if r.Act, err = p.readActs(ptr, n, 1); err != nil {
		return nil, nil, err
	}
	outs := make([][]float32, len(mats))
	grid := Dim3{uint32(((N+R-1)/R + 3) / 4), 1, 1}
	for m, x := range mats {
		if err := c.CopyToDevice(ptr[bufX], x); err != nil {
			return nil, nil, err
		}
		err := p.mmv[t].Launch(grid, Dim3{128, 1, 1}, 0,
			ptr[bufX], int32(n), int32(N), int32(rs), ptr[bufH], ptr[bufE], ptr[bufS], int32(1), int32(R), ptr[bufDst])
		if err != nil {
			return nil, nil, err
		}
		outs[m] = make([]float32, N)
		if err := download(c, outs[m], ptr[bufDst]); err != nil {
			return nil, nil, err
		}
	}
	return r, outs, nil
}
