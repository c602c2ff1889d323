//go:build cuda && cgo

package cuda

/*
#include <stdint.h>
#include <stddef.h>
#include <stdlib.h>

// The CUDA driver API signatures ggsim uses, declared by hand (cuda.h, CUDA 12/13 ABI;
// no CUDA header is needed to build). CUdevice is int, CUdeviceptr is 64 bits,
// CUcontext/CUmodule/CUfunction/CUstream are opaque pointers, CUresult is an int enum.
typedef int CUresult;
typedef int CUdevice;
typedef unsigned long long CUdeviceptr;

typedef CUresult (*cuInit_t)(unsigned int);
typedef CUresult (*cuDriverGetVersion_t)(int *);
typedef CUresult (*cuDeviceGetCount_t)(int *);
typedef CUresult (*cuDeviceGet_t)(CUdevice *, int);
typedef CUresult (*cuDeviceGetName_t)(char *, int, CUdevice);
typedef CUresult (*cuDeviceGetAttribute_t)(int *, int, CUdevice);
typedef CUresult (*cuDeviceTotalMem_t)(size_t *, CUdevice);
typedef CUresult (*cuDevicePrimaryCtxRetain_t)(void **, CUdevice);
typedef CUresult (*cuDevicePrimaryCtxRelease_t)(CUdevice);
typedef CUresult (*cuCtxSetCurrent_t)(void *);
typedef CUresult (*cuCtxSynchronize_t)(void);
typedef CUresult (*cuModuleLoadData_t)(void **, const void *);
typedef CUresult (*cuModuleUnload_t)(void *);
typedef CUresult (*cuModuleGetFunction_t)(void **, void *, const char *);
typedef CUresult (*cuMemAlloc_t)(CUdeviceptr *, size_t);
typedef CUresult (*cuMemFree_t)(CUdeviceptr);
typedef CUresult (*cuMemcpyHtoD_t)(CUdeviceptr, const void *, size_t);
typedef CUresult (*cuMemcpyDtoH_t)(void *, CUdeviceptr, size_t);
typedef CUresult (*cuMemsetD8_t)(CUdeviceptr, unsigned char, size_t);
typedef CUresult (*cuLaunchKernel_t)(void *, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                                     unsigned, void *, void **, void **);
typedef CUresult (*cuGetErrorString_t)(CUresult, const char **);

static CUresult g_cuInit(void *f, unsigned flags) { return ((cuInit_t)f)(flags); }
static CUresult g_cuDriverGetVersion(void *f, int *v) { return ((cuDriverGetVersion_t)f)(v); }
static CUresult g_cuDeviceGetCount(void *f, int *n) { return ((cuDeviceGetCount_t)f)(n); }
static CUresult g_cuDeviceGet(void *f, CUdevice *d, int ord) { return ((cuDeviceGet_t)f)(d, ord); }
static CUresult g_cuDeviceGetName(void *f, char *name, int len, CUdevice d) { return ((cuDeviceGetName_t)f)(name, len, d); }
static CUresult g_cuDeviceGetAttribute(void *f, int *v, int attr, CUdevice d) { return ((cuDeviceGetAttribute_t)f)(v, attr, d); }
static CUresult g_cuDeviceTotalMem(void *f, size_t *b, CUdevice d) { return ((cuDeviceTotalMem_t)f)(b, d); }
static CUresult g_cuDevicePrimaryCtxRetain(void *f, void **ctx, CUdevice d) { return ((cuDevicePrimaryCtxRetain_t)f)(ctx, d); }
static CUresult g_cuDevicePrimaryCtxRelease(void *f, CUdevice d) { return ((cuDevicePrimaryCtxRelease_t)f)(d); }
static CUresult g_cuCtxSetCurrent(void *f, void *ctx) { return ((cuCtxSetCurrent_t)f)(ctx); }
static CUresult g_cuCtxSynchronize(void *f) { return ((cuCtxSynchronize_t)f)(); }
static CUresult g_cuModuleLoadData(void *f, void **m, const void *img) { return ((cuModuleLoadData_t)f)(m, img); }
static CUresult g_cuModuleUnload(void *f, void *m) { return ((cuModuleUnload_t)f)(m); }
static CUresult g_cuModuleGetFunction(void *f, void **fn, void *m, const char *name) { return ((cuModuleGetFunction_t)f)(fn, m, name); }
static CUresult g_cuMemAlloc(void *f, CUdeviceptr *p, size_t n) { return ((cuMemAlloc_t)f)(p, n); }
static CUresult g_cuMemFree(void *f, CUdeviceptr p) { return ((cuMemFree_t)f)(p); }
static CUresult g_cuMemcpyHtoD(void *f, CUdeviceptr dst, const void *src, size_t n) { return ((cuMemcpyHtoD_t)f)(dst, src, n); }
static CUresult g_cuMemcpyDtoH(void *f, void *dst, CUdeviceptr src, size_t n) { return ((cuMemcpyDtoH_t)f)(dst, src, n); }
static CUresult g_cuMemsetD8(void *f, CUdeviceptr p, unsigned char v, size_t n) { return ((cuMemsetD8_t)f)(p, v, n); }

// g_cuGetErrorString calls cuGetErrorName or cuGetErrorString (same signature).
static CUresult g_cuGetErrorString(void *f, CUresult r, const char **s) { *s = NULL; return ((cuGetErrorString_t)f)(r, s); }

// g_cuLaunchKernel builds the kernelParams array on the C stack from n argument
// values (each stored in the low bytes of a uint64, little-endian) and launches on the
// default stream. cuLaunchKernel copies the values before it returns.
static CUresult g_cuLaunchKernel(void *f, void *fn, unsigned gx, unsigned gy, unsigned gz,
                                 unsigned bx, unsigned by, unsigned bz, unsigned shmem,
                                 int n, const uint64_t *vals) {
	uint64_t store[32];
	void *params[32];
	if (n > 32) return 1; // CUDA_ERROR_INVALID_VALUE
	for (int i = 0; i < n; i++) { store[i] = vals[i]; params[i] = &store[i]; }
	return ((cuLaunchKernel_t)f)(fn, gx, gy, gz, bx, by, bz, shmem, NULL, params, NULL);
}

// NVML, only for the driver's version string.
typedef int (*nvmlInit_t)(void);
typedef int (*nvmlSystemGetDriverVersion_t)(char *, unsigned);
static int g_nvmlInit(void *f) { return ((nvmlInit_t)f)(); }
static int g_nvmlSystemGetDriverVersion(void *f, char *buf, unsigned n) { return ((nvmlSystemGetDriverVersion_t)f)(buf, n); }
*/
import "C"

import (
	"fmt"
	"math"
	"os"
	"runtime"
	"sync"
	"unsafe"

	"github.com/ggsim/ggsim/gpu/internal/dl"
)

// Built reports whether this build has the GPU backend (the cuda tag and cgo).
const Built = true

// CUdevice_attribute values (cuda.h).
const (
	attrSmemPerBlock      = 8 // CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK
	attrWarpSize          = 10
	attrSMCount           = 16
	attrCCMajor           = 75
	attrCCMinor           = 76
	attrSmemPerBlockOptin = 97 // CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN
)

// driver holds the resolved driver entry points.
type driver struct {
	lib *dl.Library
	fn  map[string]unsafe.Pointer
}

var driverSyms = []string{
	"cuInit", "cuDriverGetVersion", "cuDeviceGetCount", "cuDeviceGet", "cuDeviceGetName",
	"cuDeviceGetAttribute", "cuDeviceTotalMem_v2", "cuDevicePrimaryCtxRetain",
	"cuDevicePrimaryCtxRelease_v2", "cuCtxSetCurrent", "cuCtxSynchronize", "cuModuleLoadData",
	"cuModuleUnload", "cuModuleGetFunction", "cuMemAlloc_v2", "cuMemFree_v2",
	"cuMemcpyHtoD_v2", "cuMemcpyDtoH_v2", "cuMemsetD8_v2", "cuLaunchKernel",
	"cuGetErrorName", "cuGetErrorString",
}

var (
	drvOnce sync.Map // driver library name -> *driverResult
)

type driverResult struct {
	once sync.Once
	d    *driver
	err  error
}

// loadDriver opens the driver library once per candidate list and calls cuInit(0).
func loadDriver(o Options) (*driver, error) {
	cands := DriverCandidates(o)
	key := fmt.Sprint(cands)
	v, _ := drvOnce.LoadOrStore(key, &driverResult{})
	r := v.(*driverResult)
	r.once.Do(func() {
		lib, err := dl.Open(cands...)
		if err != nil {
			r.err = fmt.Errorf("%w: %w", ErrNoDriver, err)
			return
		}
		d := &driver{lib: lib, fn: map[string]unsafe.Pointer{}}
		for _, s := range driverSyms {
			p, err := lib.Sym(s)
			if err != nil {
				r.err = fmt.Errorf("%w: %w", ErrNoDriver, err)
				return
			}
			d.fn[s] = p
		}
		if err := d.check("cuInit", C.g_cuInit(d.fn["cuInit"], 0)); err != nil {
			r.err = err
			return
		}
		r.d = d
	})
	return r.d, r.err
}

// check turns a CUresult into nil or a *DriverError with the code's name and text.
func (d *driver) check(call string, r C.CUresult) error {
	if r == cudaSuccess {
		return nil
	}
	e := &DriverError{Call: call, Code: int(r)}
	var s *C.char
	if C.g_cuGetErrorString(d.fn["cuGetErrorName"], r, &s) == 0 && s != nil {
		e.Name = C.GoString(s)
	}
	if C.g_cuGetErrorString(d.fn["cuGetErrorString"], r, &s) == 0 && s != nil {
		e.Desc = C.GoString(s)
	}
	return e
}

// QueryDevice returns the DeviceInfo of device ordinal o.Device without creating a
// context (NVRTC fields are left empty). It is what gpu/ggml uses for the SM count.
func QueryDevice(o Options) (DeviceInfo, error) {
	d, err := loadDriver(o)
	if err != nil {
		return DeviceInfo{}, err
	}
	return d.deviceInfo(o.Device)
}

func (d *driver) deviceInfo(ordinal int) (DeviceInfo, error) {
	info := DeviceInfo{Ordinal: ordinal}
	var n C.int
	if err := d.check("cuDeviceGetCount", C.g_cuDeviceGetCount(d.fn["cuDeviceGetCount"], &n)); err != nil {
		return info, err
	}
	if n == 0 {
		return info, fmt.Errorf("%w: cuDeviceGetCount reports 0 devices", ErrNoDevice)
	}
	if ordinal < 0 || ordinal >= int(n) {
		return info, fmt.Errorf("%w: device %d requested, %d present", ErrNoDevice, ordinal, int(n))
	}
	var dev C.CUdevice
	if err := d.check("cuDeviceGet", C.g_cuDeviceGet(d.fn["cuDeviceGet"], &dev, C.int(ordinal))); err != nil {
		return info, err
	}
	var name [256]C.char
	if err := d.check("cuDeviceGetName", C.g_cuDeviceGetName(d.fn["cuDeviceGetName"], &name[0], C.int(len(name)), dev)); err != nil {
		return info, err
	}
	info.Name = C.GoString(&name[0])
	for _, a := range []struct {
		attr int
		dst  *int
	}{{attrCCMajor, &info.Major}, {attrCCMinor, &info.Minor}, {attrSMCount, &info.SMCount}, {attrWarpSize, &info.WarpSize},
		{attrSmemPerBlock, &info.SmemPerBlock}, {attrSmemPerBlockOptin, &info.SmemPerBlockOptin}} {
		var v C.int
		if err := d.check("cuDeviceGetAttribute", C.g_cuDeviceGetAttribute(d.fn["cuDeviceGetAttribute"], &v, C.int(a.attr), dev)); err != nil {
			return info, fmt.Errorf("attribute %d: %w", a.attr, err)
		}
		*a.dst = int(v)
	}
	var mem C.size_t
	if err := d.check("cuDeviceTotalMem_v2", C.g_cuDeviceTotalMem(d.fn["cuDeviceTotalMem_v2"], &mem, dev)); err != nil {
		return info, err
	}
	info.TotalMem = uint64(mem)
	var ver C.int
	if err := d.check("cuDriverGetVersion", C.g_cuDriverGetVersion(d.fn["cuDriverGetVersion"], &ver)); err != nil {
		return info, err
	}
	info.DriverAPI = int(ver)
	info.Driver = driverVersionString()
	return info, nil
}

// driverVersionString asks NVML, then /proc; "" if neither answers.
func driverVersionString() string {
	if lib, err := dl.Open("libnvidia-ml.so.1", "libnvidia-ml.so"); err == nil {
		initp, e1 := lib.Sym("nvmlInit_v2")
		getp, e2 := lib.Sym("nvmlSystemGetDriverVersion")
		if e1 == nil && e2 == nil && C.g_nvmlInit(initp) == 0 {
			var buf [96]C.char
			if C.g_nvmlSystemGetDriverVersion(getp, &buf[0], C.uint(len(buf))) == 0 {
				return C.GoString(&buf[0])
			}
		}
		// NVML is left loaded and initialised: nvmlShutdown is not needed for a query.
	}
	return procDriverVersion()
}

// Context is one device's primary context with NVRTC loaded, ready to compile and
// launch kernels. Its methods may be called from any goroutine; calls are serialised.
type Context struct {
	mu      sync.Mutex
	d       *driver
	nv      *nvrtc // nil when Options.NoNVRTC
	dev     C.CUdevice
	ctx     unsafe.Pointer
	info    DeviceInfo
	allocs  map[DevPtr]int
	modules map[string]*Module // probe modules, compiled once
	closed  bool
}

// DevPtr is a device address (CUdeviceptr).
type DevPtr uint64

// Open loads the driver (and NVRTC unless o.NoNVRTC), retains device o.Device's
// primary context and returns a Context. Errors say which library, call or device
// failed: ErrNoDriver, ErrNoDevice and ErrNoNVRTC match with errors.Is.
func Open(o Options) (*Context, error) {
	d, err := loadDriver(o)
	if err != nil {
		return nil, err
	}
	info, err := d.deviceInfo(o.Device)
	if err != nil {
		return nil, err
	}
	c := &Context{d: d, info: info, allocs: map[DevPtr]int{}}
	if err := d.check("cuDeviceGet", C.g_cuDeviceGet(d.fn["cuDeviceGet"], &c.dev, C.int(o.Device))); err != nil {
		return nil, err
	}
	if !o.NoNVRTC {
		nv, err := loadNVRTC(o)
		if err != nil {
			return nil, err
		}
		c.nv = nv
		c.info.NVRTC = nv.version
		c.info.NVRTCPath = nv.lib.Name()
	}
	var ctx unsafe.Pointer
	if err := d.check("cuDevicePrimaryCtxRetain", C.g_cuDevicePrimaryCtxRetain(d.fn["cuDevicePrimaryCtxRetain"], &ctx, c.dev)); err != nil {
		return nil, err
	}
	c.ctx = ctx
	return c, nil
}

// Info returns the device description.
func (c *Context) Info() DeviceInfo { return c.info }

// do runs f with the context current on a locked OS thread (a CUDA context is
// current per thread, and a goroutine may otherwise move between threads).
func (c *Context) do(f func() error) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return fmt.Errorf("cuda: context of device %d is closed", c.info.Ordinal)
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := c.d.check("cuCtxSetCurrent", C.g_cuCtxSetCurrent(c.d.fn["cuCtxSetCurrent"], c.ctx)); err != nil {
		return err
	}
	return f()
}

// Close frees every allocation still held and releases the primary context.
func (c *Context) Close() error {
	var first error
	err := c.do(func() error {
		for p := range c.allocs {
			if err := c.d.check("cuMemFree_v2", C.g_cuMemFree(c.d.fn["cuMemFree_v2"], C.CUdeviceptr(p))); err != nil && first == nil {
				first = err
			}
		}
		c.allocs = nil
		return c.d.check("cuDevicePrimaryCtxRelease_v2", C.g_cuDevicePrimaryCtxRelease(c.d.fn["cuDevicePrimaryCtxRelease_v2"], c.dev))
	})
	c.mu.Lock()
	c.closed = true
	c.mu.Unlock()
	if first != nil {
		return first
	}
	return err
}

// Alloc allocates n bytes of device memory (n > 0). A failure for lack of memory
// matches ErrOutOfMemory.
func (c *Context) Alloc(n int) (DevPtr, error) {
	if n <= 0 {
		return 0, fmt.Errorf("cuda: Alloc(%d): size must be positive", n)
	}
	var p C.CUdeviceptr
	err := c.do(func() error {
		if err := c.d.check("cuMemAlloc_v2", C.g_cuMemAlloc(c.d.fn["cuMemAlloc_v2"], &p, C.size_t(n))); err != nil {
			return fmt.Errorf("allocating %d bytes: %w", n, err)
		}
		c.allocs[DevPtr(p)] = n
		return nil
	})
	return DevPtr(p), err
}

// Free frees an allocation made by Alloc.
func (c *Context) Free(p DevPtr) error {
	return c.do(func() error {
		if _, ok := c.allocs[p]; !ok {
			return fmt.Errorf("cuda: Free(%#x): not an allocation of this context", uint64(p))
		}
		delete(c.allocs, p)
		return c.d.check("cuMemFree_v2", C.g_cuMemFree(c.d.fn["cuMemFree_v2"], C.CUdeviceptr(p)))
	})
}

// checkRange verifies that [p, p+n) lies inside one allocation.
func (c *Context) checkRange(p DevPtr, n int) error {
	for base, size := range c.allocs {
		if p >= base && uint64(p)+uint64(n) <= uint64(base)+uint64(size) {
			return nil
		}
	}
	return fmt.Errorf("cuda: %d bytes at %#x are not inside an allocation of this context", n, uint64(p))
}

// CopyToDevice copies len(src) bytes to device address dst.
func (c *Context) CopyToDevice(dst DevPtr, src []byte) error {
	if len(src) == 0 {
		return nil
	}
	return c.do(func() error {
		if err := c.checkRange(dst, len(src)); err != nil {
			return err
		}
		return c.d.check("cuMemcpyHtoD_v2", C.g_cuMemcpyHtoD(c.d.fn["cuMemcpyHtoD_v2"], C.CUdeviceptr(dst), unsafe.Pointer(&src[0]), C.size_t(len(src))))
	})
}

// CopyFromDevice copies len(dst) bytes from device address src; it waits for work
// launched before it (the default stream is synchronous with respect to the copy).
func (c *Context) CopyFromDevice(dst []byte, src DevPtr) error {
	if len(dst) == 0 {
		return nil
	}
	return c.do(func() error {
		if err := c.checkRange(src, len(dst)); err != nil {
			return err
		}
		return c.d.check("cuMemcpyDtoH_v2", C.g_cuMemcpyDtoH(c.d.fn["cuMemcpyDtoH_v2"], unsafe.Pointer(&dst[0]), C.CUdeviceptr(src), C.size_t(len(dst))))
	})
}

// Memset sets n bytes at p to v.
func (c *Context) Memset(p DevPtr, v byte, n int) error {
	return c.do(func() error {
		if err := c.checkRange(p, n); err != nil {
			return err
		}
		return c.d.check("cuMemsetD8_v2", C.g_cuMemsetD8(c.d.fn["cuMemsetD8_v2"], C.CUdeviceptr(p), C.uchar(v), C.size_t(n)))
	})
}

// Synchronize waits for all work on the context and reports a kernel's failure.
func (c *Context) Synchronize() error {
	return c.do(func() error {
		return c.d.check("cuCtxSynchronize", C.g_cuCtxSynchronize(c.d.fn["cuCtxSynchronize"]))
	})
}

// Module is a compiled and loaded CUDA module.
type Module struct {
	c     *Context
	name  string
	mod   unsafe.Pointer
	ptx   string
	log   string
	cubin []byte
}

// Function is a kernel of a Module.
type Function struct {
	m    *Module
	name string
	fn   unsafe.Pointer
}

// Compile compiles CUDA C++ source with NVRTC for the device's architecture
// (--gpu-architecture=sm_XY from its compute capability, plus opts, e.g.
// "-use_fast_math") and loads the resulting cubin with cuModuleLoadData.
func (c *Context) Compile(name, src string, opts ...string) (*Module, error) {
	if c.nv == nil {
		return nil, fmt.Errorf("cuda: Compile(%s): %w (context opened with NoNVRTC)", name, ErrNoNVRTC)
	}
	p, err := c.nv.compile(name, src, c.info.Arch(), opts)
	if err != nil {
		return nil, err
	}
	m := &Module{c: c, name: name, ptx: p.PTX, log: p.Log, cubin: p.Cubin}
	err = c.do(func() error {
		return c.d.check("cuModuleLoadData", C.g_cuModuleLoadData(c.d.fn["cuModuleLoadData"], &m.mod, unsafe.Pointer(&p.Cubin[0])))
	})
	if err != nil {
		return nil, fmt.Errorf("loading module %s: %w", name, err)
	}
	return m, nil
}

// LoadModule loads a module image (a cubin, fatbin or NUL-terminated PTX) compiled
// elsewhere with cuModuleLoadData.
func (c *Context) LoadModule(name string, image []byte) (*Module, error) {
	if len(image) == 0 {
		return nil, fmt.Errorf("cuda: LoadModule(%s): empty image", name)
	}
	m := &Module{c: c, name: name, cubin: image}
	err := c.do(func() error {
		return c.d.check("cuModuleLoadData", C.g_cuModuleLoadData(c.d.fn["cuModuleLoadData"], &m.mod, unsafe.Pointer(&image[0])))
	})
	if err != nil {
		return nil, fmt.Errorf("loading module %s: %w", name, err)
	}
	return m, nil
}

// PTX returns the PTX NVRTC produced (for the record: it shows the instructions a
// probe measured).
func (m *Module) PTX() string { return m.ptx }

// Cubin returns the machine code that was loaded (disassemble it with cuobjdump -sass).
func (m *Module) Cubin() []byte { return m.cubin }

// Log returns NVRTC's compile log (warnings), often empty.
func (m *Module) Log() string { return m.log }

// Unload unloads the module.
func (m *Module) Unload() error {
	return m.c.do(func() error {
		return m.c.d.check("cuModuleUnload", C.g_cuModuleUnload(m.c.d.fn["cuModuleUnload"], m.mod))
	})
}

// Function looks up an extern "C" kernel by name.
func (m *Module) Function(name string) (*Function, error) {
	f := &Function{m: m, name: name}
	cs := C.CString(name)
	defer C.free(unsafe.Pointer(cs))
	err := m.c.do(func() error {
		return m.c.d.check("cuModuleGetFunction", C.g_cuModuleGetFunction(m.c.d.fn["cuModuleGetFunction"], &f.fn, m.mod, cs))
	})
	if err != nil {
		return nil, fmt.Errorf("kernel %s in module %s: %w", name, m.name, err)
	}
	return f, nil
}

// Dim3 is a grid or block shape.
type Dim3 struct{ X, Y, Z uint32 }

// Launch launches f on the default stream and waits for it (cuCtxSynchronize), so a
// fault in the kernel is reported here, naming the kernel. Arguments may be DevPtr,
// int32, uint32, int64, uint64, float32 or float64, in the kernel's parameter order.
func (f *Function) Launch(grid, block Dim3, sharedMem uint32, args ...any) error {
	if len(args) > 32 {
		return fmt.Errorf("cuda: launch %s: %d arguments, at most 32", f.name, len(args))
	}
	vals := make([]uint64, len(args)+1) // +1: never pass a nil pointer for zero arguments
	for i, a := range args {
		switch v := a.(type) {
		case DevPtr:
			vals[i] = uint64(v)
		case int32:
			vals[i] = uint64(uint32(v))
		case uint32:
			vals[i] = uint64(v)
		case int64:
			vals[i] = uint64(v)
		case uint64:
			vals[i] = v
		case float32:
			vals[i] = uint64(math.Float32bits(v))
		case float64:
			vals[i] = math.Float64bits(v)
		default:
			return fmt.Errorf("cuda: launch %s: argument %d has unsupported type %T", f.name, i, a)
		}
	}
	for _, d := range []Dim3{grid, block} {
		if d.X == 0 || d.Y == 0 || d.Z == 0 {
			return fmt.Errorf("cuda: launch %s: zero grid or block dimension %+v", f.name, d)
		}
	}
	c := f.m.c
	return c.do(func() error {
		r := C.g_cuLaunchKernel(c.d.fn["cuLaunchKernel"], f.fn,
			C.uint(grid.X), C.uint(grid.Y), C.uint(grid.Z), C.uint(block.X), C.uint(block.Y), C.uint(block.Z),
			C.uint(sharedMem), C.int(len(args)), (*C.uint64_t)(unsafe.Pointer(&vals[0])))
		if err := c.d.check("cuLaunchKernel", r); err != nil {
			return fmt.Errorf("kernel %s: %w", f.name, err)
		}
		if err := c.d.check("cuCtxSynchronize", C.g_cuCtxSynchronize(c.d.fn["cuCtxSynchronize"])); err != nil {
			return fmt.Errorf("kernel %s: %w", f.name, err)
		}
		return nil
	})
}

// procDriverVersion reads the driver version from /proc; "" if it cannot.
func procDriverVersion() string {
	b, err := os.ReadFile("/proc/driver/nvidia/version")
	if err != nil {
		return ""
	}
	return parseProcDriverVersion(string(b))
}
