//go:build cuda && cgo

package cuda

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// A fake libcuda.so.1, compiled with the system C compiler, lets the driver bindings
// (symbol names, argument marshalling, kernel parameters, error naming) be tested on a
// machine without a GPU: memory is host memory, and two "kernels" are computed on the
// host from the parameters cuLaunchKernel receives.
const fakeDriverC = `
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
typedef unsigned long long dptr;
int cuInit(unsigned f) { return f == 0 ? 0 : 1; }
int cuDriverGetVersion(int *v) { *v = 13000; return 0; }
int cuDeviceGetCount(int *n) { *n = 1; return 0; }
int cuDeviceGet(int *d, int o) { if (o != 0) return 101; *d = 0; return 0; }
int cuDeviceGetName(char *s, int n, int d) { strncpy(s, "Fake H200", n); return 0; }
int cuDeviceGetAttribute(int *v, int a, int d) {
	switch (a) { case 75: *v = 9; return 0; case 76: *v = 0; return 0; case 16: *v = 132; return 0; case 10: *v = 32; return 0; case 8: *v = 49152; return 0; case 97: *v = 232448; return 0; }
	return 1;
}
int cuDeviceTotalMem_v2(size_t *b, int d) { *b = (size_t)141 << 30; return 0; }
static int ctxv;
int cuDevicePrimaryCtxRetain(void **c, int d) { *c = &ctxv; return 0; }
int cuDevicePrimaryCtxRelease_v2(int d) { return 0; }
int cuCtxSetCurrent(void *c) { return c == &ctxv ? 0 : 201; }
int cuCtxSynchronize(void) { return 0; }
int cuModuleLoadData(void **m, const void *img) { *m = strdup((const char *)img); return 0; }
int cuModuleUnload(void *m) { free(m); return 0; }
int cuModuleGetFunction(void **f, void *m, const char *name) {
	if (strcmp(name, "dp4a_s32") && strcmp(name, "scale") && strcmp(name, "rcp_all")) return 500;
	*f = strdup(name); return 0;
}
int cuMemAlloc_v2(dptr *p, size_t n) { if (n > ((size_t)1 << 40)) return 2; *p = (dptr)(uintptr_t)malloc(n); return 0; }
int cuMemFree_v2(dptr p) { free((void *)(uintptr_t)p); return 0; }
int cuMemcpyHtoD_v2(dptr d, const void *s, size_t n) { memcpy((void *)(uintptr_t)d, s, n); return 0; }
int cuMemcpyDtoH_v2(void *d, dptr s, size_t n) { memcpy(d, (void *)(uintptr_t)s, n); return 0; }
int cuMemsetD8_v2(dptr d, unsigned char v, size_t n) { memset((void *)(uintptr_t)d, v, n); return 0; }
int cuLaunchKernel(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                   unsigned sh, void *st, void **p, void **extra) {
	unsigned n = gx * bx;
	if (!strcmp((const char *)f, "dp4a_s32")) {
		const int *a = *(const int **)p[0], *b = *(const int **)p[1], *c = *(const int **)p[2];
		unsigned cnt = *(unsigned *)p[3]; int *o = *(int **)p[4];
		if (cnt > n) return 1;
		for (unsigned i = 0; i < cnt; i++) {
			int s = c[i];
			for (int k = 0; k < 4; k++) s += (int)(signed char)(a[i] >> (8*k)) * (int)(signed char)(b[i] >> (8*k));
			o[i] = s;
		}
		return 0;
	}
	if (!strcmp((const char *)f, "scale")) { // scale(float *x, float f, unsigned long long n, int add)
		float *x = *(float **)p[0]; float fac = *(float *)p[1]; unsigned long long cnt = *(unsigned long long *)p[2]; int add = *(int *)p[3];
		for (unsigned long long i = 0; i < cnt; i++) x[i] = x[i] * fac + (float)add;
		return 0;
	}
	if (!strcmp((const char *)f, "rcp_all")) { // a sweep's statistics block (struct ggsim_stat)
		struct { unsigned long long mism, nan; unsigned ex_n, pad, ex[16][3]; } *st = *(void **)p[0];
		if (st->mism != 0 || st->ex_n != 0) return 1; // the probe must clear it
		st->mism = 3; st->nan = (1ULL << 32) | 0x7fffffffu; st->ex_n = 2;
		for (unsigned k = 0; k < 2; k++) for (unsigned j = 0; j < 3; j++) st->ex[k][j] = 10 * k + j;
		return 0;
	}
	return 98;
}
int cuGetErrorName(int r, const char **s) {
	switch (r) { case 2: *s = "CUDA_ERROR_OUT_OF_MEMORY"; return 0; case 500: *s = "CUDA_ERROR_NOT_FOUND"; return 0; case 98: *s = "CUDA_ERROR_INVALID_HANDLE"; return 0; }
	return 1;
}
int cuGetErrorString(int r, const char **s) { if (r == 2) { *s = "out of memory"; return 0; } return 1; }
`

func fakeDriver(t *testing.T) string {
	t.Helper()
	cc, err := exec.LookPath("gcc")
	if err != nil {
		if cc, err = exec.LookPath("cc"); err != nil {
			skipOrFail(t, "SKIP (not a pass): no C compiler to build the fake driver")
		}
	}
	dir := t.TempDir()
	src := filepath.Join(dir, "fake.c")
	if err := os.WriteFile(src, []byte(fakeDriverC), 0o644); err != nil {
		t.Fatal(err)
	}
	lib := filepath.Join(dir, "libcuda-fake.so")
	if out, err := exec.Command(cc, "-shared", "-fPIC", "-o", lib, src).CombinedOutput(); err != nil {
		t.Fatalf("building the fake driver: %v\n%s", err, out)
	}
	return lib
}

func TestFakeDriver(t *testing.T) {
	lib := fakeDriver(t)
	o := Options{DriverLib: lib, NoNVRTC: true}
	c, err := Open(o)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	d := c.Info()
	if d.Name != "Fake H200" || d.CC() != 900 || d.SMCount != 132 || d.WarpSize != 32 || d.DriverAPI != 13000 || d.TotalMem != 141<<30 ||
		d.SmemPerBlock != 49152 || d.SmemPerBlockOptin != 232448 {
		t.Fatalf("info %+v", d)
	}
	if _, err := QueryDevice(Options{DriverLib: lib, Device: 3}); !errors.Is(err, ErrNoDevice) {
		t.Fatalf("device 3: %v", err)
	}

	// Out of memory: the error names the call and the code's name and text.
	_, err = c.Alloc(1 << 50)
	var de *DriverError
	if !errors.As(err, &de) || !errors.Is(err, ErrOutOfMemory) || de.Call != "cuMemAlloc_v2" ||
		!strings.Contains(err.Error(), "CUDA_ERROR_OUT_OF_MEMORY (2): out of memory") {
		t.Fatalf("huge alloc: %v", err)
	}

	m, err := c.LoadModule("fake", []byte("fake image\x00"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Function("missing"); !errors.As(err, &de) || de.Name != "CUDA_ERROR_NOT_FOUND" {
		t.Fatalf("missing function: %v", err)
	}
	f, err := m.Function("dp4a_s32")
	if err != nil {
		t.Fatal(err)
	}
	a := []int32{0x01020304, -0x7f7f7f80, 0x7f7f7f7f, 5}
	b := []int32{0x01010101, -0x7f7f7f80, -0x7f7f7f80, -1}
	cc := []int32{10, 0, 2147483647, -3}
	pa, _ := upload(c, a)
	pb, _ := upload(c, b)
	pc, _ := upload(c, cc)
	po, _ := allocFor[int32](c, len(a))
	if err := f.Launch(Dim3{1, 1, 1}, Dim3{32, 1, 1}, 0, pa, pb, pc, uint32(len(a)), po); err != nil {
		t.Fatal(err)
	}
	out := make([]int32, len(a))
	if err := download(c, out, po); err != nil {
		t.Fatal(err)
	}
	for i := range out {
		if out[i] != Dp4aRef(a[i], b[i], cc[i]) {
			t.Fatalf("dp4a[%d] = %d, want %d", i, out[i], Dp4aRef(a[i], b[i], cc[i]))
		}
	}
	// float32, uint64 and int32 parameters.
	s, err := m.Function("scale")
	if err != nil {
		t.Fatal(err)
	}
	x := []float32{1, 2, 3}
	px, _ := upload(c, x)
	if err := s.Launch(Dim3{1, 1, 1}, Dim3{1, 1, 1}, 0, px, float32(2.5), uint64(2), int32(-1)); err != nil {
		t.Fatal(err)
	}
	if err := download(c, x, px); err != nil {
		t.Fatal(err)
	}
	if x[0] != 1.5 || x[1] != 4 || x[2] != 3 {
		t.Fatalf("scale: %v", x)
	}
	if err := s.Launch(Dim3{0, 1, 1}, Dim3{1, 1, 1}, 0); err == nil {
		t.Fatal("zero grid accepted")
	}
	if err := s.Launch(Dim3{1, 1, 1}, Dim3{1, 1, 1}, 0, "string"); err == nil {
		t.Fatal("string argument accepted")
	}
	if err := c.CopyToDevice(px+8, make([]byte, 8)); err == nil {
		t.Fatal("copy past an allocation accepted")
	}
	for _, p := range []DevPtr{pa, pb, pc, po, px} {
		if err := c.Free(p); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.Free(pa); err == nil {
		t.Fatal("double free accepted")
	}
	if _, err := c.Compile("x.cu", "", FastMath); !errors.Is(err, ErrNoNVRTC) {
		t.Fatalf("Compile without NVRTC: %v", err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Alloc(4); err == nil {
		t.Fatal("Alloc after Close accepted")
	}
}

// With NVRTC at hand, a probe runs end to end through Compile on the fake driver (its
// dp4a_s32 is computed on the host from the parameters the probe passes).
func TestFakeDriverProbeDp4a(t *testing.T) {
	nvrtcOrSkip(t)
	lib := fakeDriver(t)
	c, err := Open(Options{DriverLib: lib})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	a := []int32{1, 0x7f7f7f7f, -0x7f7f7f80}
	b := []int32{0x01010101, 0x7f7f7f7f, 0x7f7f7f7f}
	cc := []int32{0, 1, -1}
	got, err := c.ProbeDp4a(a, b, cc)
	if err != nil {
		t.Fatal(err)
	}
	for i := range got {
		if got[i] != Dp4aRef(a[i], b[i], cc[i]) {
			t.Fatalf("ProbeDp4a[%d] = %d", i, got[i])
		}
	}
	m, err := c.ProbeModule("dp4a.cu")
	if err != nil || !strings.Contains(m.PTX(), "dp4a.s32.s32") || len(m.Cubin()) == 0 {
		t.Fatalf("module record: %v", err)
	}
	if c.Info().NVRTCPath == "" || c.Info().NVRTC[0] == 0 {
		t.Fatalf("NVRTC not recorded: %+v", c.Info())
	}
}

// A sweep's statistics block travels from the (fake) device into a Sweep: the layout of
// struct ggsim_stat and sweepStat agree, and the block is cleared before the launch.
func TestFakeDriverProbeSweep(t *testing.T) {
	nvrtcOrSkip(t)
	c, err := Open(Options{DriverLib: fakeDriver(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	s, err := c.ProbeRcpAll()
	if err != nil {
		t.Fatal(err)
	}
	if s.Mismatches != 3 || !s.SawNaN || s.FirstNaN != 0x7fffffff || len(s.Examples) != 2 ||
		s.Examples[0] != [3]uint32{0, 1, 2} || s.Examples[1] != [3]uint32{10, 11, 12} {
		t.Fatalf("sweep %+v", s)
	}
}
