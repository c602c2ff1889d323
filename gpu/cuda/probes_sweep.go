//go:build cuda && cgo

package cuda

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
)

// fp16Include returns the NVRTC option naming the first of $CUDA_HOME/include,
// $CUDA_PATH/include and /usr/local/cuda/include that holds cuda_fp16.h, or nil (NVRTC
// then reports the missing header as a compile error).
func fp16Include() []string {
	for _, dir := range []string{os.Getenv("CUDA_HOME"), os.Getenv("CUDA_PATH"), "/usr/local/cuda"} {
		if dir == "" {
			continue
		}
		inc := filepath.Join(dir, "include")
		if _, err := os.Stat(filepath.Join(inc, "cuda_fp16.h")); err == nil {
			return []string{"--include-path=" + inc}
		}
	}
	return nil
}

// sweep runs one exhaustive kernel (a grid-stride loop over all 2^32 inputs) whose first
// parameter is a ggsim_stat and returns its result.
func (c *Context) sweep(name, file, kernel string, extra []string, args ...any) (Sweep, error) {
	f, err := c.kernel(file, kernel, extra...)
	if err != nil {
		return Sweep{}, err
	}
	ps, err := c.Alloc(sweepStatSize)
	if err != nil {
		return Sweep{}, err
	}
	defer c.freeAll(ps)
	if err := c.Memset(ps, 0, sweepStatSize); err != nil {
		return Sweep{}, err
	}
	grid := uint32(4 * max(c.info.SMCount, 1) * 8)
	if err := f.Launch(Dim3{grid, 1, 1}, Dim3{256, 1, 1}, 0, append([]any{ps}, args...)...); err != nil {
		return Sweep{}, err
	}
	st := make([]sweepStat, 1)
	if err := download(c, st, ps); err != nil {
		return Sweep{}, err
	}
	return st[0].sweep(name), nil
}

// ProbeRcpAll compares rcp.approx.ftz.f32 with package sim's Rcp model (the [1,2)
// result of the same significand scaled exactly, flushed below 2^-126, computed on the
// device) for all 2^32 inputs, NaN bits included.
func (c *Context) ProbeRcpAll() (Sweep, error) {
	return c.sweep("rcp.approx.ftz.f32 vs sim.Rcp's model", "sweep.cu", "rcp_all", nil)
}

// ProbeDiv127All compares x/127.0f (-use_fast_math) with mul.ftz(x, 0x3C010204) for
// every float32 x (NaN against NaN counts as equal).
func (c *Context) ProbeDiv127All() (Sweep, error) {
	return c.sweep("x/127.0f vs mul.ftz(x, 0x3C010204)", "sweep.cu", "div127_all", nil)
}

// ProbeDivAll compares a/b (-use_fast_math, a passed at run time) with
// mul.ftz(a, rcp.approx.ftz(b)) for every float32 b (NaN against NaN counts as equal).
func (c *Context) ProbeDivAll(a float32) (Sweep, error) {
	return c.sweep(fmt.Sprintf("a/b vs mul.ftz(a, rcp(b)), a = %g", a), "sweep.cu", "div_all", nil, a)
}

// ProbeDiv127NumAll compares 127.0f/b (constant numerator) with mul.ftz(127, rcp(b)) for
// every float32 b (NaN against NaN counts as equal).
func (c *Context) ProbeDiv127NumAll() (Sweep, error) {
	return c.sweep("127.0f/b vs mul.ftz(127, rcp(b))", "sweep.cu", "div127num_all", nil)
}

// ProbeF2HAll compares cuda_fp16.h's __float2half with round to nearest even (binary16
// subnormals, overflow to Inf, every NaN -> 0x7fff: sim.F2H) for all 2^32 inputs. It
// needs cuda_fp16.h (see ProbeHalf2Intrinsics).
func (c *Context) ProbeF2HAll() (Sweep, error) {
	return c.sweep("__float2half vs RN-even, NaN -> 0x7fff", "half.cu", "f2h_all", fp16Include())
}

// ProbeHalfOps runs kernel half_ops: for every half a and each j, with b = bs[j] and
// c = cs[j], the HalfOpsPerCase results of __hadd, __hsub, __hmul, __hfma and __hmul2
// (high half) at index (j*65536 + a)*HalfOpsPerCase — the layout of half_ops.bin. It
// needs cuda_fp16.h.
func (c *Context) ProbeHalfOps(bs, cs []uint16) ([]uint16, error) {
	if len(bs) != len(cs) || len(bs) == 0 {
		return nil, fmt.Errorf("cuda: ProbeHalfOps: %d b and %d c operands, want the same nonzero number", len(bs), len(cs))
	}
	f, err := c.kernel("half.cu", "half_ops", fp16Include()...)
	if err != nil {
		return nil, err
	}
	n := len(bs) * 65536 * HalfOpsPerCase
	var pb, pc, po DevPtr
	defer func() { c.freeAll(pb, pc, po) }()
	if pb, err = upload(c, bs); err != nil {
		return nil, err
	}
	if pc, err = upload(c, cs); err != nil {
		return nil, err
	}
	if po, err = allocFor[uint16](c, n); err != nil {
		return nil, err
	}
	g, bl := blocks(65536)
	if err := f.Launch(g, bl, 0, po, pb, pc, int32(len(bs))); err != nil {
		return nil, err
	}
	out := make([]uint16, n)
	return out, download(c, out, po)
}

// ProbeH2FAll returns the bits of __half2float(h) for every half h (index h). It needs
// cuda_fp16.h.
func (c *Context) ProbeH2FAll() ([]uint32, error) {
	f, err := c.kernel("half.cu", "h2f_all", fp16Include()...)
	if err != nil {
		return nil, err
	}
	po, err := allocFor[uint32](c, 65536)
	if err != nil {
		return nil, err
	}
	defer c.freeAll(po)
	g, bl := blocks(65536)
	if err := f.Launch(g, bl, 0, po); err != nil {
		return nil, err
	}
	out := make([]uint32, 65536)
	return out, download(c, out, po)
}

// ProbeHalfSpecials returns kernel half_specials' outputs (named by HalfSpecials). It
// needs cuda_fp16.h.
func (c *Context) ProbeHalfSpecials() ([]uint16, error) {
	f, err := c.kernel("half.cu", "half_specials", fp16Include()...)
	if err != nil {
		return nil, err
	}
	var pin, po DevPtr
	defer func() { c.freeAll(pin, po) }()
	if pin, err = upload(c, []uint32{0x7fc00001, math.Float32bits(float32(math.Inf(1)))}); err != nil {
		return nil, err
	}
	if po, err = allocFor[uint16](c, len(HalfSpecials)); err != nil {
		return nil, err
	}
	if err := f.Launch(Dim3{1, 1, 1}, Dim3{1, 1, 1}, 0, po, pin); err != nil {
		return nil, err
	}
	out := make([]uint16, len(HalfSpecials))
	return out, download(c, out, po)
}

// ProbeFloatSpecials returns kernel float_specials' outputs (named by FloatSpecials) on
// FloatSpecialInputs.
func (c *Context) ProbeFloatSpecials() ([]uint32, error) {
	f, err := c.kernel("specials.cu", "float_specials")
	if err != nil {
		return nil, err
	}
	var pin, po DevPtr
	defer func() { c.freeAll(pin, po) }()
	if pin, err = upload(c, FloatSpecialInputs); err != nil {
		return nil, err
	}
	if po, err = allocFor[uint32](c, len(FloatSpecials)); err != nil {
		return nil, err
	}
	if err := f.Launch(Dim3{1, 1, 1}, Dim3{1, 1, 1}, 0, po, pin); err != nil {
		return nil, err
	}
	out := make([]uint32, len(FloatSpecials))
	return out, download(c, out, po)
}

// ProbeBytePerm returns __byte_perm(x[i], y[i], s[i]).
func (c *Context) ProbeBytePerm(x, y, s []uint32) ([]uint32, error) {
	if len(x) != len(y) || len(x) != len(s) {
		return nil, fmt.Errorf("cuda: ProbeBytePerm: operand lengths %d, %d, %d", len(x), len(y), len(s))
	}
	f, err := c.kernel("specials.cu", "byte_perm_list")
	if err != nil {
		return nil, err
	}
	var px, py, ps, po DevPtr
	defer func() { c.freeAll(px, py, ps, po) }()
	if px, err = upload(c, x); err != nil {
		return nil, err
	}
	if py, err = upload(c, y); err != nil {
		return nil, err
	}
	if ps, err = upload(c, s); err != nil {
		return nil, err
	}
	if po, err = allocFor[uint32](c, len(x)); err != nil {
		return nil, err
	}
	g, bl := blocks(len(x))
	if err := f.Launch(g, bl, 0, px, py, ps, uint32(len(x)), po); err != nil {
		return nil, err
	}
	out := make([]uint32, len(x))
	return out, download(c, out, po)
}

// ProbeTiny runs kernels tiny_mul and tiny_fma and returns their (a, b, c, result)
// quadruples: TinyMulCases of mul.ftz.f32 (c = -0, unused) and TinyFMACases of
// fma.rn.ftz.f32, whose exact results lie next to 2^-126. Flattened in that order they
// are the content of tiny.bin.
func (c *Context) ProbeTiny() (mul, fma [][4]uint32, err error) {
	for _, k := range []struct {
		name string
		n    int
		dst  *[][4]uint32
	}{{"tiny_mul", TinyMulCases, &mul}, {"tiny_fma", TinyFMACases, &fma}} {
		f, err := c.kernel("tiny.cu", k.name)
		if err != nil {
			return nil, nil, err
		}
		po, err := allocFor[[4]uint32](c, k.n)
		if err != nil {
			return nil, nil, err
		}
		g, bl := blocks(k.n)
		if err := f.Launch(g, bl, 0, po); err != nil {
			c.freeAll(po)
			return nil, nil, err
		}
		*k.dst = make([][4]uint32, k.n)
		err = download(c, *k.dst, po)
		c.freeAll(po)
		if err != nil {
			return nil, nil, err
		}
	}
	return mul, fma, nil
}
