//go:build cuda && cgo

package cuda

/*
#include <stddef.h>
#include <stdlib.h>

// NVRTC entry points (nvrtc.h), declared by hand. nvrtcProgram is an opaque pointer,
// nvrtcResult an int enum.
typedef int nvrtcResult;
typedef nvrtcResult (*nvrtcVersion_t)(int *, int *);
typedef nvrtcResult (*nvrtcCreateProgram_t)(void **, const char *, const char *, int, const char * const *, const char * const *);
typedef nvrtcResult (*nvrtcDestroyProgram_t)(void **);
typedef nvrtcResult (*nvrtcCompileProgram_t)(void *, int, const char * const *);
typedef nvrtcResult (*nvrtcGetSize_t)(void *, size_t *);
typedef nvrtcResult (*nvrtcGetBuf_t)(void *, char *);
typedef const char *(*nvrtcGetErrorString_t)(nvrtcResult);

static nvrtcResult g_nvrtcVersion(void *f, int *a, int *b) { return ((nvrtcVersion_t)f)(a, b); }
static nvrtcResult g_nvrtcCreateProgram(void *f, void **p, const char *src, const char *name) {
	return ((nvrtcCreateProgram_t)f)(p, src, name, 0, NULL, NULL);
}
static nvrtcResult g_nvrtcDestroyProgram(void *f, void **p) { return ((nvrtcDestroyProgram_t)f)(p); }
static nvrtcResult g_nvrtcCompileProgram(void *f, void *p, int n, char **opts) {
	return ((nvrtcCompileProgram_t)f)(p, n, (const char * const *)opts);
}
static nvrtcResult g_nvrtcGetSize(void *f, void *p, size_t *n) { return ((nvrtcGetSize_t)f)(p, n); }
static nvrtcResult g_nvrtcGetBuf(void *f, void *p, char *buf) { return ((nvrtcGetBuf_t)f)(p, buf); }
static const char *g_nvrtcGetErrorString(void *f, nvrtcResult r) { return ((nvrtcGetErrorString_t)f)(r); }
*/
import "C"

import (
	"fmt"
	"strings"
	"sync"
	"unsafe"

	"github.com/ggsim/ggsim/gpu/internal/dl"
)

type nvrtc struct {
	lib     *dl.Library
	fn      map[string]unsafe.Pointer
	version [2]int
	mu      sync.Mutex
}

var nvrtcSyms = []string{
	"nvrtcVersion", "nvrtcCreateProgram", "nvrtcDestroyProgram", "nvrtcCompileProgram",
	"nvrtcGetPTXSize", "nvrtcGetPTX", "nvrtcGetCUBINSize", "nvrtcGetCUBIN",
	"nvrtcGetProgramLogSize", "nvrtcGetProgramLog", "nvrtcGetErrorString",
}

var nvrtcCache sync.Map // candidate list -> *nvrtcResult

type nvrtcLoad struct {
	once sync.Once
	n    *nvrtc
	err  error
}

func loadNVRTC(o Options) (*nvrtc, error) {
	cands := NVRTCCandidates(o)
	v, _ := nvrtcCache.LoadOrStore(fmt.Sprint(cands), &nvrtcLoad{})
	r := v.(*nvrtcLoad)
	r.once.Do(func() {
		lib, err := dl.Open(cands...)
		if err != nil {
			r.err = fmt.Errorf("%w: %w", ErrNoNVRTC, err)
			return
		}
		n := &nvrtc{lib: lib, fn: map[string]unsafe.Pointer{}}
		for _, s := range nvrtcSyms {
			p, err := lib.Sym(s)
			if err != nil {
				r.err = fmt.Errorf("%w: %w", ErrNoNVRTC, err)
				return
			}
			n.fn[s] = p
		}
		var a, b C.int
		if err := n.check("nvrtcVersion", "", C.g_nvrtcVersion(n.fn["nvrtcVersion"], &a, &b)); err != nil {
			r.err = err
			return
		}
		n.version = [2]int{int(a), int(b)}
		r.n = n
	})
	return r.n, r.err
}

func (n *nvrtc) check(call, unit string, r C.nvrtcResult) error {
	if r == 0 {
		return nil
	}
	e := &NVRTCError{Call: call, Code: int(r), Unit: unit}
	if s := C.g_nvrtcGetErrorString(n.fn["nvrtcGetErrorString"], r); s != nil {
		e.Name = C.GoString(s)
	}
	return e
}

// NVRTCVersion loads NVRTC (as Open would) and returns its version and path. It needs
// no GPU.
func NVRTCVersion(o Options) (major, minor int, path string, err error) {
	n, err := loadNVRTC(o)
	if err != nil {
		return 0, 0, "", err
	}
	return n.version[0], n.version[1], n.lib.Name(), nil
}

// CompileProgram compiles CUDA C++ source with NVRTC for arch (e.g. "sm_90") with the
// given extra options, without a GPU: the cubin for --gpu-architecture=arch, and the
// PTX (from a second compilation for compute_XY when the first yields none).
func CompileProgram(o Options, name, src, arch string, opts ...string) (Program, error) {
	n, err := loadNVRTC(o)
	if err != nil {
		return Program{}, err
	}
	return n.compile(name, src, arch, opts)
}

func (n *nvrtc) compile(name, src, arch string, opts []string) (Program, error) {
	if !strings.HasPrefix(arch, "sm_") {
		return Program{}, fmt.Errorf("cuda: compile %s: architecture %q is not sm_XY", name, arch)
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	all := append([]string{"--gpu-architecture=" + arch}, opts...)
	cubin, ptx, log, err := n.compile1(name, src, all, true)
	if err != nil {
		return Program{}, err
	}
	p := Program{Name: name, Arch: arch, Options: all, Cubin: cubin, PTX: ptx, Log: log}
	if ptx == "" {
		all[0] = "--gpu-architecture=compute_" + strings.TrimPrefix(arch, "sm_")
		if _, p.PTX, _, err = n.compile1(name, src, all, false); err != nil {
			return Program{}, fmt.Errorf("compiling %s to PTX for the record: %w", name, err)
		}
	}
	return p, nil
}

func (n *nvrtc) compile1(name, src string, opts []string, wantCubin bool) (cubin []byte, ptx, log string, err error) {
	csrc, cname := C.CString(src), C.CString(name)
	defer C.free(unsafe.Pointer(csrc))
	defer C.free(unsafe.Pointer(cname))
	var prog unsafe.Pointer
	if err = n.check("nvrtcCreateProgram", name, C.g_nvrtcCreateProgram(n.fn["nvrtcCreateProgram"], &prog, csrc, cname)); err != nil {
		return
	}
	defer C.g_nvrtcDestroyProgram(n.fn["nvrtcDestroyProgram"], &prog)

	copts := (**C.char)(C.malloc(C.size_t(len(opts)+1) * C.size_t(unsafe.Sizeof((*C.char)(nil)))))
	defer C.free(unsafe.Pointer(copts))
	optv := unsafe.Slice(copts, len(opts)+1)
	for i, o := range opts {
		optv[i] = C.CString(o)
	}
	defer func() {
		for i := range opts {
			C.free(unsafe.Pointer(optv[i]))
		}
	}()
	res := C.g_nvrtcCompileProgram(n.fn["nvrtcCompileProgram"], prog, C.int(len(opts)), copts)
	log = n.getString(prog, "nvrtcGetProgramLogSize", "nvrtcGetProgramLog")
	if err = n.check("nvrtcCompileProgram", name, res); err != nil {
		err.(*NVRTCError).Log = fmt.Sprintf("options %q\n%s", opts, log)
		return
	}
	ptx = n.getString(prog, "nvrtcGetPTXSize", "nvrtcGetPTX")
	if wantCubin {
		var size C.size_t
		if err = n.check("nvrtcGetCUBINSize", name, C.g_nvrtcGetSize(n.fn["nvrtcGetCUBINSize"], prog, &size)); err != nil {
			return
		}
		if size == 0 {
			err = fmt.Errorf("cuda: NVRTC produced no cubin for %s with options %q", name, opts)
			return
		}
		buf := make([]byte, int(size))
		if err = n.check("nvrtcGetCUBIN", name, C.g_nvrtcGetBuf(n.fn["nvrtcGetCUBIN"], prog, (*C.char)(unsafe.Pointer(&buf[0])))); err != nil {
			return
		}
		cubin = buf
	}
	return
}

// getString reads a NUL-terminated NVRTC output (log, PTX); "" if unavailable.
func (n *nvrtc) getString(prog unsafe.Pointer, sizeFn, getFn string) string {
	var size C.size_t
	if C.g_nvrtcGetSize(n.fn[sizeFn], prog, &size) != 0 || size <= 1 {
		return ""
	}
	buf := make([]byte, int(size))
	if C.g_nvrtcGetBuf(n.fn[getFn], prog, (*C.char)(unsafe.Pointer(&buf[0]))) != 0 {
		return ""
	}
	return strings.TrimRight(string(buf), "\x00")
}
