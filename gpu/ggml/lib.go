//go:build cuda && cgo

package ggml

/*
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

// The ggml C API as declared in include/ggml.h, ggml-backend.h, ggml-alloc.h, ggml-cpu.h
// and ggml-cuda.h at ggml d99724f2b141, by hand (no ggml header is needed to build).
// Contexts, tensors, graphs, backends, devices and buffers are opaque pointers here;
// enum ggml_type and enum ggml_status are int-sized enums.

// struct ggml_init_params is passed BY VALUE to ggml_init; this declaration must match
// ggml.h field for field: { size_t mem_size; void * mem_buffer; bool no_alloc; }.
struct ggml_init_params {
	size_t mem_size;
	void * mem_buffer;
	bool   no_alloc;
};

typedef void *      (*ggml_init_t)(struct ggml_init_params);
typedef void        (*ggml_free_t)(void *);
typedef size_t      (*size_void_t)(void);
typedef void *      (*new_tensor_2d_t)(void *, int, int64_t, int64_t);
typedef void *      (*new_tensor_3d_t)(void *, int, int64_t, int64_t, int64_t);
typedef void *      (*mul_mat_t)(void *, void *, void *);
typedef void *      (*mul_mat_id_t)(void *, void *, void *, void *);
typedef void *      (*glu_oai_t)(void *, void *, void *, float, float);
typedef void *      (*new_graph_t)(void *);
typedef void        (*build_forward_expand_t)(void *, void *);
typedef int64_t     (*nelements_t)(const void *);
typedef size_t      (*nbytes_t)(const void *);
typedef void *      (*backend_init_dev_t)(int);
typedef void *      (*backend_init_t)(void);
typedef void        (*backend_set_threads_t)(void *, int);
typedef void        (*ptr_void_t)(void *);
typedef const char *(*ptr_str_t)(void *);
typedef void *      (*ptr_ptr_t)(void *);
typedef void *      (*alloc_ctx_tensors_t)(void *, void *);
typedef void        (*tensor_set_t)(void *, const void *, size_t, size_t);
typedef void        (*tensor_get_t)(const void *, void *, size_t, size_t);
typedef int         (*graph_compute_t)(void *, void *);
typedef bool        (*supports_op_t)(void *, const void *);
typedef size_t      (*quantize_chunk_t)(int, const float *, void *, int64_t, int64_t, int64_t, const float *);
typedef bool        (*type_bool_t)(int);
typedef const char *(*str_void_t)(void);
typedef const char *(*int_str_t)(int);
typedef size_t      (*type_size_t)(int);
typedef int64_t     (*blck_size_t)(int);
typedef int         (*int_void_t)(void);
typedef void        (*dev_desc_t)(int, char *, size_t);
typedef void        (*dev_mem_t)(int, size_t *, size_t *);

static void *g_ggml_init(void *f, size_t mem_size, bool no_alloc) {
	struct ggml_init_params p = { mem_size, NULL, no_alloc };
	return ((ggml_init_t)f)(p);
}
static void    g_ptr_void(void *f, void *p) { ((ptr_void_t)f)(p); }
static const char *g_ptr_str(void *f, void *p) { return ((ptr_str_t)f)(p); }
static void   *g_ptr_ptr(void *f, void *p) { return ((ptr_ptr_t)f)(p); }
static size_t  g_size_void(void *f) { return ((size_void_t)f)(); }
static void   *g_new_tensor_2d(void *f, void *ctx, int t, int64_t a, int64_t b) { return ((new_tensor_2d_t)f)(ctx, t, a, b); }
static void   *g_new_tensor_3d(void *f, void *ctx, int t, int64_t a, int64_t b, int64_t c) { return ((new_tensor_3d_t)f)(ctx, t, a, b, c); }
static void   *g_mul_mat(void *f, void *ctx, void *a, void *b) { return ((mul_mat_t)f)(ctx, a, b); }
static void   *g_mul_mat_id(void *f, void *ctx, void *as, void *b, void *ids) { return ((mul_mat_id_t)f)(ctx, as, b, ids); }
static void   *g_glu_oai(void *f, void *ctx, void *a, void *b, float alpha, float limit) { return ((glu_oai_t)f)(ctx, a, b, alpha, limit); }
static void   *g_new_graph(void *f, void *ctx) { return ((new_graph_t)f)(ctx); }
static void    g_build_forward_expand(void *f, void *g, void *t) { ((build_forward_expand_t)f)(g, t); }
static int64_t g_nelements(void *f, void *t) { return ((nelements_t)f)(t); }
static size_t  g_nbytes(void *f, void *t) { return ((nbytes_t)f)(t); }
static void   *g_backend_init_dev(void *f, int dev) { return ((backend_init_dev_t)f)(dev); }
static void   *g_backend_init(void *f) { return ((backend_init_t)f)(); }
static void    g_backend_set_threads(void *f, void *b, int n) { ((backend_set_threads_t)f)(b, n); }
static void   *g_alloc_ctx_tensors(void *f, void *ctx, void *b) { return ((alloc_ctx_tensors_t)f)(ctx, b); }
static void    g_tensor_set(void *f, void *t, const void *d, size_t off, size_t n) { ((tensor_set_t)f)(t, d, off, n); }
static void    g_tensor_get(void *f, void *t, void *d, size_t off, size_t n) { ((tensor_get_t)f)(t, d, off, n); }
static int     g_graph_compute(void *f, void *b, void *g) { return ((graph_compute_t)f)(b, g); }
static bool    g_supports_op(void *f, void *b, void *t) { return ((supports_op_t)f)(b, t); }
static size_t  g_quantize_chunk(void *f, int t, const float *src, void *dst, int64_t start, int64_t nrows, int64_t k, const float *im) {
	return ((quantize_chunk_t)f)(t, src, dst, start, nrows, k, im);
}
static bool        g_type_bool(void *f, int t) { return ((type_bool_t)f)(t); }
static const char *g_str_void(void *f) { return ((str_void_t)f)(); }
static const char *g_int_str(void *f, int i) { return ((int_str_t)f)(i); }
static size_t      g_type_size(void *f, int t) { return ((type_size_t)f)(t); }
static int64_t     g_blck_size(void *f, int t) { return ((blck_size_t)f)(t); }
static int         g_int_void(void *f) { return ((int_void_t)f)(); }
static void        g_dev_desc(void *f, int d, char *buf, size_t n) { ((dev_desc_t)f)(d, buf, n); }
static void        g_dev_mem(void *f, int d, size_t *fr, size_t *tot) { ((dev_mem_t)f)(d, fr, tot); }
*/
import "C"

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"unsafe"

	"github.com/ggsim/ggsim/gguf/golden"
	"github.com/ggsim/ggsim/gpu/cuda"
	"github.com/ggsim/ggsim/gpu/internal/dl"
	"github.com/ggsim/ggsim/quant"
)

// Built reports whether this build has the ggml backend (the cuda tag and cgo).
const Built = true

// GGML_TYPE_I32 etc. are quant's ids; the enum is checked against the library at Load.

// Lib is a loaded ggml build. Its libraries stay loaded for the life of the process
// (unloading ggml's CUDA backend while its static state lives is not safe).
type Lib struct {
	dir  string
	libs []*dl.Library // base, cpu, cuda (or nil), ggml
	cuda bool
	fn   map[string]unsafe.Pointer
	qmu  sync.Mutex
}

// libFiles are the files Load opens, in order; cuda is optional.
var libFiles = []struct {
	file     string
	optional bool
}{{"libggml-base.so", false}, {"libggml-cpu.so", false}, {"libggml-cuda.so", true}, {"libggml.so", false}}

// required symbols, with the library that defines them at d99724f2b141.
var coreSyms = []string{
	"ggml_init", "ggml_free", "ggml_tensor_overhead", "ggml_graph_overhead", "ggml_new_tensor_2d",
	"ggml_new_tensor_3d", "ggml_mul_mat", "ggml_mul_mat_id", "ggml_new_graph", "ggml_build_forward_expand",
	"ggml_nelements", "ggml_nbytes", "ggml_quantize_chunk", "ggml_quantize_requires_imatrix",
	"ggml_type_name", "ggml_type_size", "ggml_blck_size", "ggml_status_to_string",
	"ggml_backend_alloc_ctx_tensors", "ggml_backend_buffer_free", "ggml_backend_tensor_set",
	"ggml_backend_tensor_get", "ggml_backend_graph_compute", "ggml_backend_supports_op",
	"ggml_backend_free", "ggml_backend_name", "ggml_backend_get_device", "ggml_backend_dev_description",
	"ggml_backend_cpu_init", "ggml_backend_cpu_set_n_threads",
}

var cudaSyms = []string{
	"ggml_backend_cuda_init", "ggml_backend_cuda_get_device_count",
	"ggml_backend_cuda_get_device_description", "ggml_backend_cuda_get_device_memory",
}

// optional symbols: absent in some builds; their absence is not an error (the GLU
// builders are needed only by MulMatGLU and MulMatIDGLU, which then say they are missing).
var optSyms = []string{"ggml_version", "ggml_commit", "ggml_swiglu_split", "ggml_geglu_split", "ggml_swiglu_oai"}

// Load opens the ggml build in dir (libggml-base.so, libggml-cpu.so, libggml.so and,
// if present, libggml-cuda.so; dir "" searches the loader's path) and checks its type
// table against quant's. Errors name the file and the loader's message.
func Load(dir string) (*Lib, error) {
	l := &Lib{dir: dir, fn: map[string]unsafe.Pointer{}}
	for _, f := range libFiles {
		path := f.file
		if dir != "" {
			path = filepath.Join(dir, f.file)
		}
		if dir != "" && f.optional {
			if _, err := os.Stat(path); err != nil {
				l.libs = append(l.libs, nil)
				continue
			}
		}
		lib, err := dl.OpenGlobal(path)
		if err != nil {
			if f.optional {
				l.libs = append(l.libs, nil)
				continue
			}
			return nil, fmt.Errorf("ggml: loading the ggml build in %q: %w", dir, err)
		}
		l.libs = append(l.libs, lib)
	}
	l.cuda = l.libs[2] != nil
	for _, s := range coreSyms {
		if err := l.resolve(s); err != nil {
			return nil, err
		}
	}
	if l.cuda {
		for _, s := range cudaSyms {
			if err := l.resolve(s); err != nil {
				return nil, err
			}
		}
	}
	for _, s := range optSyms {
		_ = l.resolve(s)
	}
	if err := l.checkTypes(); err != nil {
		return nil, err
	}
	return l, nil
}

// resolve finds a symbol in the first library that has it.
func (l *Lib) resolve(name string) error {
	var first error
	for _, lib := range l.libs {
		if lib == nil {
			continue
		}
		p, err := lib.Sym(name)
		if err == nil {
			l.fn[name] = p
			return nil
		}
		if first == nil {
			first = err
		}
	}
	return fmt.Errorf("ggml: the build in %q lacks %s: %w", l.dir, name, first)
}

// checkTypes compares ggml_type_name/size/blck_size with quant for every valid id.
func (l *Lib) checkTypes() error {
	for t := quant.Type(0); t < quant.TypeCount; t++ {
		if !t.Valid() {
			continue
		}
		cname := C.g_int_str(l.fn["ggml_type_name"], C.int(t))
		name := ""
		if cname != nil {
			name = C.GoString(cname)
		}
		ts := int(C.g_type_size(l.fn["ggml_type_size"], C.int(t)))
		bs := int(C.g_blck_size(l.fn["ggml_blck_size"], C.int(t)))
		if name != t.String() || ts != t.TypeSize() || bs != t.BlockSize() {
			return fmt.Errorf("ggml: the build in %q disagrees with ggsim about type id %d: it says %q, %d bytes per %d values; ggsim (ggml d99724f2b141) says %q, %d per %d",
				l.dir, int(t), name, ts, bs, t.String(), t.TypeSize(), t.BlockSize())
		}
	}
	return nil
}

// HasCUDA reports whether the build has the CUDA backend.
func (l *Lib) HasCUDA() bool { return l.cuda }

// Version returns ggml_version() and ggml_commit() ("" where the build lacks them).
func (l *Lib) Version() (version, commit string) {
	get := func(s string) string {
		if p := l.fn[s]; p != nil {
			if c := C.g_str_void(p); c != nil {
				return C.GoString(c)
			}
		}
		return ""
	}
	return get("ggml_version"), get("ggml_commit")
}

// CUDADeviceCount returns ggml_backend_cuda_get_device_count (0 without the CUDA backend).
func (l *Lib) CUDADeviceCount() int {
	if !l.cuda {
		return 0
	}
	return int(C.g_int_void(l.fn["ggml_backend_cuda_get_device_count"]))
}

// Quantize quantizes rows of K values with ggml_quantize_chunk on the host CPU (no
// importance matrix; types that require one are refused).
func (l *Lib) Quantize(t quant.Type, x []float32, rows, k int, imatrix []float32) ([]byte, error) {
	size, err := checkQuantize(t, x, rows, k, imatrix)
	if err != nil {
		return nil, err
	}
	if req := bool(C.g_type_bool(l.fn["ggml_quantize_requires_imatrix"], C.int(t))); req != requiresImatrix(t) {
		return nil, fmt.Errorf("ggml: quantize %v: the build's ggml_quantize_requires_imatrix says %v, ggsim says %v", t, req, requiresImatrix(t))
	}
	dst := make([]byte, size)
	var im *C.float
	if imatrix != nil {
		im = (*C.float)(unsafe.Pointer(&imatrix[0]))
	}
	l.qmu.Lock()
	n := C.g_quantize_chunk(l.fn["ggml_quantize_chunk"], C.int(t), (*C.float)(unsafe.Pointer(&x[0])), unsafe.Pointer(&dst[0]),
		0, C.int64_t(rows), C.int64_t(k), im)
	l.qmu.Unlock()
	if int64(n) != size {
		return nil, fmt.Errorf("ggml: ggml_quantize_chunk(%v, %d rows of %d) wrote %d bytes, expected %d", t, rows, k, int64(n), size)
	}
	return dst, nil
}

// Backend is one ggml backend (CUDA device or CPU) of a Lib.
type Backend struct {
	l    *Lib
	spec BackendSpec
	b    unsafe.Pointer
	mu   sync.Mutex
}

// NewBackend initialises a backend: ggml_backend_cuda_init(spec.Device) or
// ggml_backend_cpu_init (with spec.Threads threads if > 0).
func (l *Lib) NewBackend(spec BackendSpec) (*Backend, error) {
	var b unsafe.Pointer
	switch spec.Kind {
	case CUDA:
		if !l.cuda {
			return nil, fmt.Errorf("ggml: the build in %q has no CUDA backend (no libggml-cuda.so)", l.dir)
		}
		if n := l.CUDADeviceCount(); spec.Device < 0 || spec.Device >= n {
			return nil, fmt.Errorf("ggml: CUDA device %d requested, ggml sees %d: %w", spec.Device, n, cuda.ErrNoDevice)
		}
		b = C.g_backend_init_dev(l.fn["ggml_backend_cuda_init"], C.int(spec.Device))
	case CPU:
		b = C.g_backend_init(l.fn["ggml_backend_cpu_init"])
		if b != nil && spec.Threads > 0 {
			C.g_backend_set_threads(l.fn["ggml_backend_cpu_set_n_threads"], b, C.int(spec.Threads))
		}
	default:
		return nil, fmt.Errorf("ggml: unknown backend kind %d", spec.Kind)
	}
	if b == nil {
		return nil, fmt.Errorf("ggml: initialising backend %v failed (see ggml's log on stderr)", spec)
	}
	return &Backend{l: l, spec: spec, b: b}, nil
}

// Close frees the backend.
func (b *Backend) Close() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.b != nil {
		C.g_ptr_void(b.l.fn["ggml_backend_free"], b.b)
		b.b = nil
	}
	return nil
}

// Spec returns the backend's spec.
func (b *Backend) Spec() BackendSpec { return b.spec }

// Info describes the backend's device: ggml's names and, for CUDA, the driver API's
// compute capability, SM count and driver version.
func (b *Backend) Info() (DeviceInfo, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.b == nil {
		return DeviceInfo{}, errors.New("ggml: backend is closed")
	}
	var d DeviceInfo
	d.GGMLVersion, d.GGMLCommit = b.l.Version()
	if s := C.g_ptr_str(b.l.fn["ggml_backend_name"], b.b); s != nil {
		d.Backend = C.GoString(s)
	}
	if dev := C.g_ptr_ptr(b.l.fn["ggml_backend_get_device"], b.b); dev != nil {
		if s := C.g_ptr_str(b.l.fn["ggml_backend_dev_description"], dev); s != nil {
			d.Description = C.GoString(s)
		}
	}
	if b.spec.Kind != CUDA {
		d.Name = d.Description
		return d, nil
	}
	var buf [256]C.char
	C.g_dev_desc(b.l.fn["ggml_backend_cuda_get_device_description"], C.int(b.spec.Device), &buf[0], C.size_t(len(buf)))
	d.Description = C.GoString(&buf[0])
	var free, total C.size_t
	C.g_dev_mem(b.l.fn["ggml_backend_cuda_get_device_memory"], C.int(b.spec.Device), &free, &total)
	d.FreeMem, d.TotalMem = uint64(free), uint64(total)
	q, err := cuda.QueryDevice(cuda.Options{Device: b.spec.Device})
	if err != nil {
		return d, fmt.Errorf("ggml: device info for %s from the CUDA driver: %w", d.Backend, err)
	}
	d.Name, d.CC, d.SMCount, d.Driver, d.DriverAPI = q.Name, q.CC(), q.SMCount, q.Driver, q.DriverAPI
	return d, nil
}

// graphRun holds one computation's ggml objects.
type graphRun struct {
	l   *Lib
	ctx unsafe.Pointer
	buf unsafe.Pointer
}

func (g *graphRun) free() {
	if g.buf != nil {
		C.g_ptr_void(g.l.fn["ggml_backend_buffer_free"], g.buf)
	}
	if g.ctx != nil {
		C.g_ptr_void(g.l.fn["ggml_free"], g.ctx)
	}
}

func (g *graphRun) tensor2d(t quant.Type, ne0, ne1 int) unsafe.Pointer {
	return C.g_new_tensor_2d(g.l.fn["ggml_new_tensor_2d"], g.ctx, C.int(t), C.int64_t(ne0), C.int64_t(ne1))
}

func (g *graphRun) tensor3d(t quant.Type, ne0, ne1, ne2 int) unsafe.Pointer {
	return C.g_new_tensor_3d(g.l.fn["ggml_new_tensor_3d"], g.ctx, C.int(t), C.int64_t(ne0), C.int64_t(ne1), C.int64_t(ne2))
}

// input is a tensor and the bytes to upload into it.
type input struct {
	name string
	t    unsafe.Pointer
	data unsafe.Pointer
	n    int
}

// prepared is a one-node graph built, allocated and uploaded: compute runs it once,
// Timed many times.
type prepared struct {
	g      *graphRun
	graph  unsafe.Pointer
	out    unsafe.Pointer
	outLen int
	op     string
}

// compute builds a graph around the node that build returns, checks the backend
// supports it, allocates, uploads, computes and downloads outLen float32.
func (b *Backend) compute(op string, outLen int, build func(g *graphRun) (unsafe.Pointer, []input, error)) ([]float32, error) {
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
	defer p.g.free()
	if err := b.run(p); err != nil {
		return nil, err
	}
	return p.read(), nil
}

// prepare builds, checks, allocates and uploads (b.mu held, OS thread locked). On
// success the caller frees p.g.
func (b *Backend) prepare(op string, outLen int, build func(g *graphRun) (unsafe.Pointer, []input, error)) (p *prepared, err error) {
	l := b.l
	size := 8*C.g_size_void(l.fn["ggml_tensor_overhead"]) + C.g_size_void(l.fn["ggml_graph_overhead"])
	g := &graphRun{l: l}
	g.ctx = C.g_ggml_init(l.fn["ggml_init"], size, true)
	if g.ctx == nil {
		return nil, fmt.Errorf("ggml: %s: ggml_init failed", op)
	}
	defer func() {
		if err != nil {
			g.free()
		}
	}()
	out, ins, err := build(g)
	if err != nil {
		return nil, err
	}
	if out == nil {
		return nil, fmt.Errorf("ggml: %s: building the node failed", op)
	}
	if !bool(C.g_supports_op(l.fn["ggml_backend_supports_op"], b.b, out)) {
		return nil, fmt.Errorf("ggml: %s: %w: ggml_backend_supports_op is false on backend %v", op, ErrUnsupportedOp, b.spec)
	}
	graph := C.g_new_graph(l.fn["ggml_new_graph"], g.ctx)
	if graph == nil {
		return nil, fmt.Errorf("ggml: %s: ggml_new_graph failed", op)
	}
	C.g_build_forward_expand(l.fn["ggml_build_forward_expand"], graph, out)
	g.buf = C.g_alloc_ctx_tensors(l.fn["ggml_backend_alloc_ctx_tensors"], g.ctx, b.b)
	if g.buf == nil {
		return nil, fmt.Errorf("ggml: %s: ggml_backend_alloc_ctx_tensors failed on %v (out of memory?)", op, b.spec)
	}
	for _, in := range ins {
		if nb := int(C.g_nbytes(l.fn["ggml_nbytes"], in.t)); nb != in.n {
			return nil, fmt.Errorf("ggml: %s: tensor %s holds %d bytes, %d given: the declared ABI does not match this build", op, in.name, nb, in.n)
		}
		C.g_tensor_set(l.fn["ggml_backend_tensor_set"], in.t, in.data, 0, C.size_t(in.n))
	}
	if ne := int64(C.g_nelements(l.fn["ggml_nelements"], out)); ne != int64(outLen) {
		return nil, fmt.Errorf("ggml: %s: result has %d elements, expected %d", op, ne, outLen)
	}
	return &prepared{g: g, graph: graph, out: out, outLen: outLen, op: op}, nil
}

// run computes p's graph once (b.mu held, OS thread locked).
func (b *Backend) run(p *prepared) error {
	l := b.l
	if st := C.g_graph_compute(l.fn["ggml_backend_graph_compute"], b.b, p.graph); st != 0 {
		msg := ""
		if s := C.g_int_str(l.fn["ggml_status_to_string"], st); s != nil {
			msg = C.GoString(s)
		}
		return fmt.Errorf("ggml: %s: ggml_backend_graph_compute returned %d (%s)", p.op, int(st), msg)
	}
	return nil
}

// read downloads p's result.
func (p *prepared) read() []float32 {
	y := make([]float32, p.outLen)
	C.g_tensor_get(p.g.l.fn["ggml_backend_tensor_get"], p.out, unsafe.Pointer(&y[0]), 0, C.size_t(4*p.outLen))
	return y
}

// MulMat returns ggml_mul_mat(a, b) computed on the backend: a is N rows of K values of
// type t (ggml [K, N]), b is M columns of K float32 ([K, M]); the result is [N, M], N
// contiguous: y[n + N*m] = row n of a · column m of b, as the backend computes it.
func (b *Backend) MulMat(t quant.Type, a []byte, k, n int, x []float32, m int) ([]float32, error) {
	if err := checkMulMat(t, a, k, n, x, m); err != nil {
		return nil, err
	}
	op, build := mulMatGraph(t, a, k, n, x, m)
	return b.compute(op, n*m, build)
}

// mulMatGraph returns the name and the builder of a MulMat's graph.
func mulMatGraph(t quant.Type, a []byte, k, n int, x []float32, m int) (string, func(g *graphRun) (unsafe.Pointer, []input, error)) {
	op := fmt.Sprintf("mul_mat %v K=%d N=%d M=%d", t, k, n, m)
	return op, func(g *graphRun) (unsafe.Pointer, []input, error) {
		ta := g.tensor2d(t, k, n)
		tb := g.tensor2d(quant.F32, k, m)
		if ta == nil || tb == nil {
			return nil, nil, fmt.Errorf("ggml: %s: ggml_new_tensor_2d failed", op)
		}
		out := C.g_mul_mat(g.l.fn["ggml_mul_mat"], g.ctx, ta, tb)
		return out, []input{
			{"a", ta, unsafe.Pointer(&a[0]), len(a)},
			{"b", tb, unsafe.Pointer(&x[0]), 4 * len(x)},
		}, nil
	}
}

// MulMatID returns ggml_mul_mat_id(as, b, ids): as is E experts of N rows of K values
// of type t ([K, N, E]), b is [K, B1, T] float32, ids is [U, T] expert ids (each in
// [0, E)); the result is [N, U, T].
func (b *Backend) MulMatID(t quant.Type, as []byte, k, n, e int, x []float32, b1, tok int, ids []int32, u int) ([]float32, error) {
	if err := checkMulMatID(t, as, k, n, e, x, b1, tok, ids, u); err != nil {
		return nil, err
	}
	op, build := mulMatIDGraph(t, as, k, n, e, x, b1, tok, ids, u)
	return b.compute(op, n*u*tok, build)
}

// mulMatIDGraph returns the name and the builder of a MulMatID's graph.
func mulMatIDGraph(t quant.Type, as []byte, k, n, e int, x []float32, b1, tok int, ids []int32, u int) (string, func(g *graphRun) (unsafe.Pointer, []input, error)) {
	op := fmt.Sprintf("mul_mat_id %v K=%d N=%d E=%d B1=%d T=%d U=%d", t, k, n, e, b1, tok, u)
	return op, func(g *graphRun) (unsafe.Pointer, []input, error) {
		tas := g.tensor3d(t, k, n, e)
		tb := g.tensor3d(quant.F32, k, b1, tok)
		tid := g.tensor2d(quant.I32, u, tok)
		if tas == nil || tb == nil || tid == nil {
			return nil, nil, fmt.Errorf("ggml: %s: ggml_new_tensor failed", op)
		}
		out := C.g_mul_mat_id(g.l.fn["ggml_mul_mat_id"], g.ctx, tas, tb, tid)
		return out, []input{
			{"as", tas, unsafe.Pointer(&as[0]), len(as)},
			{"b", tb, unsafe.Pointer(&x[0]), 4 * len(x)},
			{"ids", tid, unsafe.Pointer(&ids[0]), 4 * len(ids)},
		}, nil
	}
}

// gluNode adds GLU(gate, up) to the graph (the gate first, as the golden schema says).
func (g *graphRun) gluNode(op string, glu GLU, gate, up unsafe.Pointer) (unsafe.Pointer, error) {
	sym := map[string]string{golden.GLUSwiGLU: "ggml_swiglu_split", golden.GLUGeGLU: "ggml_geglu_split", golden.GLUSwiGLUOAI: "ggml_swiglu_oai"}[glu.Op]
	f := g.l.fn[sym]
	if f == nil {
		return nil, fmt.Errorf("ggml: %s: the build in %q lacks %s: %w", op, g.l.dir, sym, ErrUnsupportedOp)
	}
	var out unsafe.Pointer
	if glu.Op == golden.GLUSwiGLUOAI {
		out = C.g_glu_oai(f, g.ctx, gate, up, C.float(glu.Alpha), C.float(glu.Limit))
	} else {
		out = C.g_mul_mat(f, g.ctx, gate, up) // the same C signature: (ctx, a, b) -> tensor
	}
	if out == nil {
		return nil, fmt.Errorf("ggml: %s: %s failed", op, sym)
	}
	return out, nil
}

// gluOf computes GLU(gate, up) of two f32 tensors [ne0, ne1, ne2] in a graph of its own
// (the unfused GLU kernel of unary.cu).
func (b *Backend) gluOf(glu GLU, gate, up []float32, ne0, ne1, ne2 int) ([]float32, error) {
	op := fmt.Sprintf("%s of [%d, %d, %d]", glu.Op, ne0, ne1, ne2)
	return b.compute(op, ne0*ne1*ne2, func(g *graphRun) (unsafe.Pointer, []input, error) {
		tg := g.tensor3d(quant.F32, ne0, ne1, ne2)
		tu := g.tensor3d(quant.F32, ne0, ne1, ne2)
		if tg == nil || tu == nil {
			return nil, nil, fmt.Errorf("ggml: %s: ggml_new_tensor_3d failed", op)
		}
		out, err := g.gluNode(op, glu, tg, tu)
		return out, []input{
			{"gate", tg, unsafe.Pointer(&gate[0]), 4 * len(gate)},
			{"up", tu, unsafe.Pointer(&up[0]), 4 * len(up)},
		}, err
	})
}

// MulMatGLU returns GLU(ggml_mul_mat(gate, x), ggml_mul_mat(up, x)) computed on the
// backend (the golden schema's mul_mat_glu): gate and up are N rows of K values of type
// t, x is M columns of K float32; the result is [N, M]. glu.Fused selects one graph
// (fusion allowed) or three (fusion disabled); see GLU.
func (b *Backend) MulMatGLU(t quant.Type, gate, up []byte, k, n int, x []float32, m int, glu GLU) ([]float32, error) {
	if err := checkMulMat(t, gate, k, n, x, m); err != nil {
		return nil, err
	}
	if err := checkGLU(glu, gate, up); err != nil {
		return nil, err
	}
	if !glu.Fused {
		g, err := b.MulMat(t, gate, k, n, x, m)
		if err != nil {
			return nil, err
		}
		u, err := b.MulMat(t, up, k, n, x, m)
		if err != nil {
			return nil, err
		}
		return b.gluOf(glu, g, u, n, m, 1)
	}
	op := fmt.Sprintf("mul_mat_glu %v K=%d N=%d M=%d %v", t, k, n, m, glu)
	return b.compute(op, n*m, func(g *graphRun) (unsafe.Pointer, []input, error) {
		tg := g.tensor2d(t, k, n)
		tu := g.tensor2d(t, k, n)
		tb := g.tensor2d(quant.F32, k, m)
		if tg == nil || tu == nil || tb == nil {
			return nil, nil, fmt.Errorf("ggml: %s: ggml_new_tensor_2d failed", op)
		}
		mg := C.g_mul_mat(g.l.fn["ggml_mul_mat"], g.ctx, tg, tb)
		mu := C.g_mul_mat(g.l.fn["ggml_mul_mat"], g.ctx, tu, tb)
		if mg == nil || mu == nil {
			return nil, nil, fmt.Errorf("ggml: %s: ggml_mul_mat failed", op)
		}
		out, err := g.gluNode(op, glu, mg, mu)
		return out, []input{
			{"gate", tg, unsafe.Pointer(&gate[0]), len(gate)},
			{"up", tu, unsafe.Pointer(&up[0]), len(up)},
			{"b", tb, unsafe.Pointer(&x[0]), 4 * len(x)},
		}, err
	})
}

// MulMatIDGLU returns GLU(ggml_mul_mat_id(gate, x, ids), ggml_mul_mat_id(up, x, ids))
// computed on the backend (the golden schema's mul_mat_id_glu): gate and up are [K, N, E]
// of type t, x is [K, B1, T] float32, ids [U, T]; the result is [N, U, T]. glu.Fused
// selects one graph or three; see GLU.
func (b *Backend) MulMatIDGLU(t quant.Type, gate, up []byte, k, n, e int, x []float32, b1, tok int, ids []int32, u int, glu GLU) ([]float32, error) {
	if err := checkMulMatID(t, gate, k, n, e, x, b1, tok, ids, u); err != nil {
		return nil, err
	}
	if err := checkGLU(glu, gate, up); err != nil {
		return nil, err
	}
	if !glu.Fused {
		g, err := b.MulMatID(t, gate, k, n, e, x, b1, tok, ids, u)
		if err != nil {
			return nil, err
		}
		v, err := b.MulMatID(t, up, k, n, e, x, b1, tok, ids, u)
		if err != nil {
			return nil, err
		}
		return b.gluOf(glu, g, v, n, u, tok)
	}
	op := fmt.Sprintf("mul_mat_id_glu %v K=%d N=%d E=%d B1=%d T=%d U=%d %v", t, k, n, e, b1, tok, u, glu)
	return b.compute(op, n*u*tok, func(g *graphRun) (unsafe.Pointer, []input, error) {
		tg := g.tensor3d(t, k, n, e)
		tu := g.tensor3d(t, k, n, e)
		tb := g.tensor3d(quant.F32, k, b1, tok)
		tid := g.tensor2d(quant.I32, u, tok)
		if tg == nil || tu == nil || tb == nil || tid == nil {
			return nil, nil, fmt.Errorf("ggml: %s: ggml_new_tensor failed", op)
		}
		mg := C.g_mul_mat_id(g.l.fn["ggml_mul_mat_id"], g.ctx, tg, tb, tid)
		mu := C.g_mul_mat_id(g.l.fn["ggml_mul_mat_id"], g.ctx, tu, tb, tid)
		if mg == nil || mu == nil {
			return nil, nil, fmt.Errorf("ggml: %s: ggml_mul_mat_id failed", op)
		}
		out, err := g.gluNode(op, glu, mg, mu)
		return out, []input{
			{"gate", tg, unsafe.Pointer(&gate[0]), len(gate)},
			{"up", tu, unsafe.Pointer(&up[0]), len(up)},
			{"b", tb, unsafe.Pointer(&x[0]), 4 * len(x)},
			{"ids", tid, unsafe.Pointer(&ids[0]), 4 * len(ids)},
		}, err
	})
}

// checkGLU checks a GLU request: a known GLU, gate and up of equal size.
func checkGLU(g GLU, gate, up []byte) error {
	switch g.Op {
	case golden.GLUSwiGLU, golden.GLUGeGLU, golden.GLUSwiGLUOAI:
	default:
		return fmt.Errorf("ggml: unknown GLU %q (want %s, %s or %s)", g.Op, golden.GLUSwiGLU, golden.GLUGeGLU, golden.GLUSwiGLUOAI)
	}
	if len(gate) != len(up) {
		return fmt.Errorf("ggml: GLU: gate weights hold %d bytes, up weights %d: they must have the same type and shape", len(gate), len(up))
	}
	return nil
}
