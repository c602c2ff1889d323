//go:build cuda && cgo

package cuda

import (
	"fmt"
	"unsafe"
)

// bytesOf views a slice of fixed-size values as bytes (no copy).
func bytesOf[T any](s []T) []byte {
	if len(s) == 0 {
		return nil
	}
	var z T
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(s))), len(s)*int(unsafe.Sizeof(z)))
}

// upload allocates device memory for s and copies it there.
func upload[T any](c *Context, s []T) (DevPtr, error) {
	b := bytesOf(s)
	p, err := c.Alloc(max(len(b), 1))
	if err != nil {
		return 0, err
	}
	if err := c.CopyToDevice(p, b); err != nil {
		c.Free(p)
		return 0, err
	}
	return p, nil
}

// download copies len(dst) values from p.
func download[T any](c *Context, dst []T, p DevPtr) error { return c.CopyFromDevice(bytesOf(dst), p) }

// allocFor allocates room for n values of T.
func allocFor[T any](c *Context, n int) (DevPtr, error) {
	var z T
	return c.Alloc(max(n*int(unsafe.Sizeof(z)), 1))
}

// ProbeModule compiles (once per Context) the embedded probe source file with
// -use_fast_math for the device and returns it; its PTX and cubin are the record of
// what a probe ran. extra options are appended (used for include paths).
func (c *Context) ProbeModule(file string, extra ...string) (*Module, error) {
	c.mu.Lock()
	if c.modules == nil {
		c.modules = map[string]*Module{}
	}
	m, ok := c.modules[file]
	c.mu.Unlock()
	if ok {
		return m, nil
	}
	src, err := KernelSource(file)
	if err != nil {
		return nil, err
	}
	m, err = c.Compile(file, src, append([]string{FastMath}, extra...)...)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	c.modules[file] = m
	c.mu.Unlock()
	return m, nil
}

func (c *Context) kernel(file, name string, extra ...string) (*Function, error) {
	m, err := c.ProbeModule(file, extra...)
	if err != nil {
		return nil, err
	}
	return m.Function(name)
}

// blocks returns a 1-D launch shape of 256-thread blocks covering n threads.
func blocks(n int) (Dim3, Dim3) {
	return Dim3{uint32((n + 255) / 256), 1, 1}, Dim3{256, 1, 1}
}

// freeAll frees the given allocations, ignoring errors (used on every exit path).
func (c *Context) freeAll(ps ...DevPtr) {
	for _, p := range ps {
		if p != 0 {
			c.Free(p)
		}
	}
}

// ProbeRcpBinade returns rcp.approx.ftz.f32 of the 2^23 float32 with bits base|i.
// base must have zero mantissa bits.
func (c *Context) ProbeRcpBinade(base uint32) ([]uint32, error) {
	if base&0x7fffff != 0 {
		return nil, fmt.Errorf("cuda: ProbeRcpBinade(%#08x): base has mantissa bits", base)
	}
	f, err := c.kernel("rcp.cu", "rcp_binade")
	if err != nil {
		return nil, err
	}
	out := make([]uint32, RcpTableLen)
	d, err := allocFor[uint32](c, len(out))
	if err != nil {
		return nil, err
	}
	defer c.freeAll(d)
	g, b := blocks(len(out))
	if err := f.Launch(g, b, 0, base, uint32(len(out)), d); err != nil {
		return nil, err
	}
	return out, download(c, out, d)
}

// ProbeRcpList returns rcp.approx.ftz.f32 of each float32 with bits in x.
func (c *Context) ProbeRcpList(x []uint32) ([]uint32, error) {
	f, err := c.kernel("rcp.cu", "rcp_list")
	if err != nil {
		return nil, err
	}
	in, err := upload(c, x)
	if err != nil {
		return nil, err
	}
	out := make([]uint32, len(x))
	d, err := allocFor[uint32](c, len(x))
	if err != nil {
		c.freeAll(in)
		return nil, err
	}
	defer c.freeAll(in, d)
	g, b := blocks(len(x))
	if err := f.Launch(g, b, 0, in, uint32(len(x)), d); err != nil {
		return nil, err
	}
	return out, download(c, out, d)
}

// ProbeDiv returns, for each pair, a/b as -use_fast_math compiles it (q) and
// a * rcp.approx.ftz(b) with one FTZ multiply (m).
func (c *Context) ProbeDiv(a, b []float32) (q, m []float32, err error) {
	if len(a) != len(b) {
		return nil, nil, fmt.Errorf("cuda: ProbeDiv: %d numerators, %d denominators", len(a), len(b))
	}
	f, err := c.kernel("rcp.cu", "div_pairs")
	if err != nil {
		return nil, nil, err
	}
	var pa, pb, pq, pm DevPtr
	defer func() { c.freeAll(pa, pb, pq, pm) }()
	if pa, err = upload(c, a); err != nil {
		return
	}
	if pb, err = upload(c, b); err != nil {
		return
	}
	if pq, err = allocFor[float32](c, len(a)); err != nil {
		return
	}
	if pm, err = allocFor[float32](c, len(a)); err != nil {
		return
	}
	g, bl := blocks(len(a))
	if err = f.Launch(g, bl, 0, pa, pb, uint32(len(a)), pq, pm); err != nil {
		return
	}
	q, m = make([]float32, len(a)), make([]float32, len(a))
	if err = download(c, q, pq); err != nil {
		return nil, nil, err
	}
	return q, m, download(c, m, pm)
}

// ProbeDiv127 returns x/127.0f and 127.0f/x as -use_fast_math compiles them.
func (c *Context) ProbeDiv127(x []float32) (over, into []float32, err error) {
	f, err := c.kernel("rcp.cu", "div_127")
	if err != nil {
		return nil, nil, err
	}
	var px, po, pi DevPtr
	defer func() { c.freeAll(px, po, pi) }()
	if px, err = upload(c, x); err != nil {
		return
	}
	if po, err = allocFor[float32](c, len(x)); err != nil {
		return
	}
	if pi, err = allocFor[float32](c, len(x)); err != nil {
		return
	}
	g, bl := blocks(len(x))
	if err = f.Launch(g, bl, 0, px, uint32(len(x)), po, pi); err != nil {
		return
	}
	over, into = make([]float32, len(x)), make([]float32, len(x))
	if err = download(c, over, po); err != nil {
		return nil, nil, err
	}
	return over, into, download(c, into, pi)
}

// ProbeHalf2 runs add.rn.f16x2, mul.rn.f16x2 and fma.rn.f16x2 (inline PTX) on packed
// half2 operands and returns the raw result bits.
func (c *Context) ProbeHalf2(a, b, cc []uint32) (add, mul, fma []uint32, err error) {
	return c.half2("half2.cu", "half2_ops", nil, a, b, cc)
}

// ProbeHalf2Intrinsics is ProbeHalf2 through cuda_fp16.h's __hadd2, __hmul2 and
// __hfma2, as ggml writes them. NVRTC needs cuda_fp16.h: the first of
// $CUDA_HOME/include, $CUDA_PATH/include and /usr/local/cuda/include that holds it is
// passed as an include path; without one, the NVRTC compile error is returned.
func (c *Context) ProbeHalf2Intrinsics(a, b, cc []uint32) (add, mul, fma []uint32, err error) {
	return c.half2("half2_intrinsics.cu", "half2_intrinsics", fp16Include(), a, b, cc)
}

func (c *Context) half2(file, name string, extra []string, a, b, cc []uint32) (add, mul, fma []uint32, err error) {
	if len(a) != len(b) || len(a) != len(cc) {
		return nil, nil, nil, fmt.Errorf("cuda: %s: operand lengths %d, %d, %d", name, len(a), len(b), len(cc))
	}
	f, err := c.kernel(file, name, extra...)
	if err != nil {
		return nil, nil, nil, err
	}
	n := len(a)
	var pa, pb, pc, p1, p2, p3 DevPtr
	defer func() { c.freeAll(pa, pb, pc, p1, p2, p3) }()
	if pa, err = upload(c, a); err != nil {
		return
	}
	if pb, err = upload(c, b); err != nil {
		return
	}
	if pc, err = upload(c, cc); err != nil {
		return
	}
	if p1, err = allocFor[uint32](c, n); err != nil {
		return
	}
	if p2, err = allocFor[uint32](c, n); err != nil {
		return
	}
	if p3, err = allocFor[uint32](c, n); err != nil {
		return
	}
	g, bl := blocks(n)
	if err = f.Launch(g, bl, 0, pa, pb, pc, uint32(n), p1, p2, p3); err != nil {
		return
	}
	add, mul, fma = make([]uint32, n), make([]uint32, n), make([]uint32, n)
	for _, x := range []struct {
		dst []uint32
		p   DevPtr
	}{{add, p1}, {mul, p2}, {fma, p3}} {
		if err = download(c, x.dst, x.p); err != nil {
			return nil, nil, nil, err
		}
	}
	return
}

// ProbeDp4a returns dp4a.s32.s32(a[i], b[i], cc[i]).
func (c *Context) ProbeDp4a(a, b, cc []int32) ([]int32, error) {
	if len(a) != len(b) || len(a) != len(cc) {
		return nil, fmt.Errorf("cuda: ProbeDp4a: operand lengths %d, %d, %d", len(a), len(b), len(cc))
	}
	f, err := c.kernel("dp4a.cu", "dp4a_s32")
	if err != nil {
		return nil, err
	}
	var pa, pb, pc, po DevPtr
	defer func() { c.freeAll(pa, pb, pc, po) }()
	if pa, err = upload(c, a); err != nil {
		return nil, err
	}
	if pb, err = upload(c, b); err != nil {
		return nil, err
	}
	if pc, err = upload(c, cc); err != nil {
		return nil, err
	}
	if po, err = allocFor[int32](c, len(a)); err != nil {
		return nil, err
	}
	g, bl := blocks(len(a))
	if err := f.Launch(g, bl, 0, pa, pb, pc, uint32(len(a)), po); err != nil {
		return nil, err
	}
	out := make([]int32, len(a))
	return out, download(c, out, po)
}

// ProbeMMA runs one mma.sync m16n8k32 s8 per warp on the given fragment registers and
// returns each warp's D registers. It needs compute capability 8.0 or newer.
func (c *Context) ProbeMMA(ws []MmaWarp) ([]MmaOut, error) {
	if c.info.Major < 8 {
		return nil, fmt.Errorf("cuda: ProbeMMA: mma.m16n8k32 s8 needs sm_80 or newer, device is sm_%d%d", c.info.Major, c.info.Minor)
	}
	if len(ws) == 0 {
		return nil, nil
	}
	f, err := c.kernel("mma.cu", "mma_s8_m16n8k32")
	if err != nil {
		return nil, err
	}
	n := len(ws)
	A := make([][4]uint32, 0, 32*n)
	B := make([][2]uint32, 0, 32*n)
	C := make([][4]int32, 0, 32*n)
	for i := range ws {
		A = append(A, ws[i].A[:]...)
		B = append(B, ws[i].B[:]...)
		C = append(C, ws[i].C[:]...)
	}
	var pa, pb, pc, pd DevPtr
	defer func() { c.freeAll(pa, pb, pc, pd) }()
	if pa, err = upload(c, A); err != nil {
		return nil, err
	}
	if pb, err = upload(c, B); err != nil {
		return nil, err
	}
	if pc, err = upload(c, C); err != nil {
		return nil, err
	}
	if pd, err = allocFor[[4]int32](c, 32*n); err != nil {
		return nil, err
	}
	g, bl := blocks(32 * n)
	if err := f.Launch(g, bl, 0, pa, pb, pc, pd, uint32(n)); err != nil {
		return nil, err
	}
	out := make([]MmaOut, n)
	return out, download(c, out, pd)
}

// ProbeRound returns, for each x, roundf(x) and (int8_t) roundf(x) written both as
// ggml's quantize_q8_1 (q8) and quantize_mmq_q8_1 (q4, a char4 member) write it.
func (c *Context) ProbeRound(x []float32) (r []float32, q8, q4 []int8, err error) {
	f, err := c.kernel("round.cu", "round_i8")
	if err != nil {
		return nil, nil, nil, err
	}
	var px, pr, p8, p4 DevPtr
	defer func() { c.freeAll(px, pr, p8, p4) }()
	if px, err = upload(c, x); err != nil {
		return
	}
	if pr, err = allocFor[float32](c, len(x)); err != nil {
		return
	}
	if p8, err = allocFor[int8](c, len(x)); err != nil {
		return
	}
	if p4, err = allocFor[int8](c, len(x)); err != nil {
		return
	}
	g, bl := blocks(len(x))
	if err = f.Launch(g, bl, 0, px, uint32(len(x)), pr, p8, p4); err != nil {
		return
	}
	r, q8, q4 = make([]float32, len(x)), make([]int8, len(x)), make([]int8, len(x))
	if err = download(c, r, pr); err != nil {
		return
	}
	if err = download(c, q8, p8); err != nil {
		return
	}
	err = download(c, q4, p4)
	return
}

// ProbeRoundAll runs the exhaustive sweep (kernel round_all) on the device.
func (c *Context) ProbeRoundAll() (RoundAll, error) {
	var res RoundAll
	f, err := c.kernel("round.cu", "round_all")
	if err != nil {
		return res, err
	}
	var pc, pe, pn DevPtr
	defer func() { c.freeAll(pc, pe, pn) }()
	if pc, err = upload(c, make([]uint64, 4)); err != nil {
		return res, err
	}
	if pe, err = upload(c, make([]uint32, 4*64)); err != nil {
		return res, err
	}
	if pn, err = upload(c, make([]uint32, 1)); err != nil {
		return res, err
	}
	grid := uint32(4 * max(c.info.SMCount, 1) * 8)
	if err := f.Launch(Dim3{grid, 1, 1}, Dim3{256, 1, 1}, 0, uint64(0), uint64(1)<<32, pc, pe, pn); err != nil {
		return res, err
	}
	counts := make([]uint64, 4)
	ex := make([]uint32, 4*64)
	nex := make([]uint32, 1)
	if err := download(c, counts, pc); err != nil {
		return res, err
	}
	if err := download(c, ex, pe); err != nil {
		return res, err
	}
	if err := download(c, nex, pn); err != nil {
		return res, err
	}
	res.RoundDiffer, res.Sat8Differ, res.Wrap16Differ, res.Wrap32Differ = counts[0], counts[1], counts[2], counts[3]
	res.ExampleCount = nex[0]
	for i := 0; i < int(min(nex[0], 64)); i++ {
		res.Examples = append(res.Examples, [4]uint32{ex[4*i], ex[4*i+1], ex[4*i+2], ex[4*i+3]})
	}
	return res, nil
}
