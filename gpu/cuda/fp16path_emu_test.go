//go:build cuda && cgo

package cuda

import (
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ggsim/ggsim/fp16path"
	"github.com/ggsim/ggsim/quant"
)

// TestFP16PathHostEmulation runs kernels/fp16path.cu on the CPU, without a GPU, through
// FP16Path and compares it with the simulator on a fixed set of small cases: every type,
// 1 and 8 columns where the simulator has them, MulMat and the fused SWIGLU, every rows per
// warp, every activation kind, and the fused RMS_NORM at both block sizes with matrices
// reading its cached conversion.
//
// How: the kernel source, less its one-line inline-PTX primitives (each line holding an
// asm statement), is compiled with the system C++ compiler into a fake libcuda.so.1
// whose cuLaunchKernel runs one host thread per CUDA thread, with warp shuffles and
// __syncthreads emulated by barriers and the primitives by host code (float32 with FTZ,
// binary16 through _Float16, the half FMA rounded once from an exact double). Open loads
// it as the driver; NVRTC (needed, and GGSIM_NVRTC may name it) compiles the real source
// for sm_90 on the way, as on a device.
//
// What it checks is the kernels' structure — block layouts, codes, lane mapping, the
// order of every operation, the conversion, the reductions, the host side's launch
// shapes and buffers — not the GPU's arithmetic (the host stand-ins are IEEE, the
// simulator's models are the GPU's; TestFP16PathMatchesSimulator checks that on a
// device). The fused epilogues' divisions (MUFU.RCP on the GPU) are left out of the
// comparison.
func TestFP16PathHostEmulation(t *testing.T) {
	nvrtcOrSkip(t)
	cxx, err := exec.LookPath("g++")
	if err != nil {
		// A plain skip even with GGSIM_REQUIRE_GPU=1: this is the no-GPU stand-in, and a
		// device image need not have a C++ compiler.
		t.Skip("SKIP (not a pass): no g++ to build the emulated driver")
	}
	src, err := KernelSource("fp16path.cu")
	if err != nil {
		t.Fatal(err)
	}
	var kernel strings.Builder
	for _, line := range strings.Split(src, "\n") {
		if strings.Contains(line, "asm(") || strings.HasPrefix(line, "typedef ") {
			continue // the emulation's shim defines the primitives and the types
		}
		kernel.WriteString(line + "\n")
	}
	dir := t.TempDir()
	files := map[string]string{"shim.h": emuShim, "kernel.inc": kernel.String(), "emu.cc": emuDriver}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	lib := filepath.Join(dir, "libcuda.so.1")
	cmd := exec.Command(cxx, "-std=c++20", "-O1", "-ffp-contract=off", "-shared", "-fPIC", "-o", lib, "emu.cc", "-lpthread")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		if strings.Contains(string(out), "_Float16") || strings.Contains(string(out), "barrier") {
			t.Skipf("SKIP (not a pass): this g++ lacks _Float16 or std::barrier (C++20): %s", out)
		}
		t.Fatalf("building the emulated driver: %v\n%s", err, out)
	}
	ctx, err := Open(Options{DriverLib: lib})
	if err != nil {
		t.Fatal(err)
	}
	defer ctx.Close()
	p, err := ctx.FP16Path()
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()

	var cases []*fp16Case
	r := rand.New(rand.NewPCG(1, 2))
	rows := []int{1, 2, 4, 8, 16, 32}
	for i, ty := range fp16path.Types() {
		cols := []int{1}
		if fp16path.MultiColumn(ty) {
			cols = append(cols, 3, fp16path.MaxColumns)
		}
		for j, M := range cols {
			for k, op := range []string{"mmv", "glu"} {
				n := i*6 + j*2 + k
				c := &fp16Case{op: op, t: ty, M: M, N: 3 + n%5, R: rows[n%len(rows)], wKind: []string{"random", "max"}[n%2]}
				c.aKind = fp16ActKinds[n%len(fp16ActKinds)]
				qk := fp16BlockValues[ty]
				c.K = qk * 2
				if qk == 32 {
					c.K = qk * 9
				}
				fillEmuCase(r, c)
				cases = append(cases, c)
			}
		}
	}
	for _, n := range []int{96, 1056} {
		c := &fp16Case{op: "norm", M: 1, N: 1, R: 1, K: n, aKind: "normal", eps: 1e-6}
		c.y = make([]float32, n)
		c.w = make([]float32, n)
		for b := 0; b < n/32; b++ {
			fillFP16Acts(r, c.y[32*b:32*b+32], fp16ActKinds[b%(len(fp16ActKinds)-2)])
		}
		for i := range c.w {
			c.w[i] = float32(r.NormFloat64())
		}
		// Two matrices read the norm's cached conversion.
		c.t, c.N, c.R = quant.Q8_0, 5, 2
		if n > 1000 {
			c.t = quant.IQ4_NL
		}
		rs, _ := c.t.RowSize(int64(n))
		for m := 0; m < 2; m++ {
			x := make([]byte, int(rs)*c.N)
			fillFP16Weights(r, c.t, x, "random", 15)
			c.mats = append(c.mats, x)
		}
		cases = append(cases, c)
	}
	values := 0
	for i, c := range cases {
		res := c.run(p, false, false, true)
		if res.err != nil {
			t.Fatalf("case %d (%s): %v", i, c, res.err)
		}
		if res.mismatches > 0 {
			t.Errorf("case %d (%s): %d of %d values differ; first: %s\n%s", i, c, res.mismatches, res.outputs, res.first, fp16ActDiff(p, c))
		}
		values += res.outputs
	}
	t.Logf("%d cases, %d values compared", len(cases), values)
}

// fillEmuCase draws the weights and activations of a small case (as drawFP16Case does).
func fillEmuCase(r *rand.Rand, c *fp16Case) {
	dExp := 15
	if c.aKind == "huge" {
		dExp = -12
	}
	rs, _ := c.t.RowSize(int64(c.K))
	c.x = make([]byte, int(rs)*c.N)
	fillFP16Weights(r, c.t, c.x, c.wKind, dExp)
	if c.op == "glu" {
		c.up = make([]byte, len(c.x))
		fillFP16Weights(r, c.t, c.up, c.wKind, dExp)
	}
	c.y = make([]float32, c.K*c.M)
	for b := 0; b < len(c.y)/32; b++ {
		kind := c.aKind
		if kind == "mixed" {
			kind = fp16ActKinds[b%(len(fp16ActKinds)-2)]
		}
		fillFP16Acts(r, c.y[32*b:32*b+32], kind)
	}
}

// emuShim stands in for the CUDA built-ins and the kernel's inline-PTX primitives on the
// host (see TestFP16PathHostEmulation).
const emuShim = `
#include <cstring>
#include <cstdint>
#include <cstddef>
#include <cmath>
#include <math.h>
#include <thread>
#include <barrier>
#include <vector>
#include <memory>
#include <functional>
typedef unsigned char u8; typedef unsigned short u16; typedef unsigned int u32;
struct dim3s { unsigned x, y, z; };
thread_local dim3s threadIdx, blockIdx;
static dim3s blockDim, gridDim;
struct Warp { std::barrier<> bar{32}; uint64_t slot[32]; };
thread_local Warp *curWarp; thread_local int curLane;
static std::barrier<> *curBlockBar;
template <class T> T __shfl_xor_sync(unsigned, T v, int off, int width = 32) {
    uint64_t u = 0; memcpy(&u, &v, sizeof(T)); curWarp->slot[curLane] = u; curWarp->bar.arrive_and_wait();
    int src = (curLane & ~(width - 1)) | ((curLane ^ off) & (width - 1));
    uint64_t r = curWarp->slot[src]; curWarp->bar.arrive_and_wait(); T o; memcpy(&o, &r, sizeof(T)); return o;
}
static inline void __syncthreads() { curBlockBar->arrive_and_wait(); }
template <class T> static inline T max(T a, T b) { return a > b ? a : b; }
static inline float __int_as_float(int i) { float f; memcpy(&f, &i, 4); return f; }
static inline float __uint_as_float(u32 i) { float f; memcpy(&f, &i, 4); return f; }
static inline u32 __float_as_uint(float f) { u32 i; memcpy(&i, &f, 4); return i; }
static inline float __ll2float_rn(long long v) { return (float)v; }
static inline int atomicCAS(int *p, int c, int v) { return __sync_val_compare_and_swap(p, c, v); }
static inline float rsqrtf(float x) { return 1.0f / std::sqrt(x); }
static inline float ftz(float x) { u32 u = __float_as_uint(x); if ((u & 0x7f800000u) == 0) u &= 0x80000000u; return __uint_as_float(u); }
static inline float fmul(float a, float b) { return ftz(ftz(a) * ftz(b)); }
static inline float fadd(float a, float b) { return ftz(ftz(a) + ftz(b)); }
static inline float ffma(float a, float b, float c) { return ftz(std::fmaf(ftz(a), ftz(b), ftz(c))); }
static inline float fneg(float a) { return -ftz(a); }
static inline float h2f(u16 h) { _Float16 f; memcpy(&f, &h, 2); return (float)f; }
static inline u16 f2h(float x) { _Float16 f = (_Float16)x; u16 h; memcpy(&h, &f, 2); return h; }
// One binary16 FMA: the path's operands (c·2^-24 times a multiple of 2^-24, plus a
// multiple of 2^-24 below 2^4) are exact in double, so one rounding to _Float16 is the FMA.
static inline u16 hfma1(u16 a, u16 b, u16 c) { double r = (double)h2f(a) * (double)h2f(b) + (double)h2f(c); _Float16 f = (_Float16)r; u16 h; memcpy(&h, &f, 2); return h; }
static inline u32 hfma2(u32 a, u32 b, u32 c) { return hfma1(a & 0xffff, b & 0xffff, c & 0xffff) | ((u32)hfma1(a >> 16, b >> 16, c >> 16) << 16); }
static inline u32 prmt(u32 a, u32 b, u32 s) { uint64_t v = a | ((uint64_t)b << 32); u32 r = 0; for (int k = 0; k < 4; k++) r |= (u32)((v >> (8 * ((s >> (4 * k)) & 7))) & 0xff) << (8 * k); return r; }
#define __device__
#define __forceinline__ inline
#define __global__
#define __constant__
#define __shared__ static
#define __launch_bounds__(x)
`

// emuDriver is the fake driver: host memory, and cuLaunchKernel running the kernels of
// kernel.inc (fp16path.cu) with one host thread per CUDA thread.
const emuDriver = `
#include "shim.h"
#include "kernel.inc"
static void runKernel(unsigned gx, unsigned bx, std::function<void()> body) {
    blockDim = {bx, 1, 1}; gridDim = {gx, 1, 1};
    for (unsigned b = 0; b < gx; b++) {
        std::barrier<> bb(bx); curBlockBar = &bb;
        std::vector<std::unique_ptr<Warp>> warps;
        for (unsigned w = 0; w < bx / 32; w++) warps.emplace_back(new Warp);
        std::vector<std::thread> ts;
        for (unsigned t = 0; t < bx; t++)
            ts.emplace_back([&, t, b] { blockIdx = {b, 0, 0}; threadIdx = {t, 0, 0}; curWarp = warps[t / 32].get(); curLane = t % 32; body(); });
        for (auto &t : ts) t.join();
    }
}
template <class T> static T A(void **p, int i) { T v; memcpy(&v, p[i], sizeof(T)); return v; }
#define MMV(nm) \
  if (!strcmp(f, "fp16_mmv_" #nm)) { runKernel(gx, bx, [&] { fp16_mmv_##nm(A<const u8 *>(p,0), A<int>(p,1), A<int>(p,2), A<int>(p,3), A<const u32 *>(p,4), A<const int *>(p,5), A<const float *>(p,6), A<int>(p,7), A<int>(p,8), A<float *>(p,9)); }); return 0; } \
  if (!strcmp(f, "fp16_glu_" #nm)) { runKernel(gx, bx, [&] { fp16_glu_##nm(A<const u8 *>(p,0), A<const u8 *>(p,1), A<int>(p,2), A<int>(p,3), A<int>(p,4), A<const u32 *>(p,5), A<const int *>(p,6), A<const float *>(p,7), A<int>(p,8), A<int>(p,9), A<float *>(p,10), A<float *>(p,11)); }); return 0; }
static int emu_launch(const char *f, unsigned gx, unsigned bx, void **p) {
    if (!strcmp(f, "fp16_convert")) { runKernel(gx, bx, [&] { fp16_convert(A<const float *>(p,0), A<int>(p,1), A<int>(p,2), A<u16 *>(p,3), A<int *>(p,4), A<float *>(p,5), A<int *>(p,6)); }); return 0; }
    if (!strcmp(f, "fp16_rmsnorm_convert")) { runKernel(gx, bx, [&] { fp16_rmsnorm_convert(A<const float *>(p,0), A<const float *>(p,1), A<int>(p,2), A<float>(p,3), A<float *>(p,4), A<u16 *>(p,5), A<int *>(p,6), A<float *>(p,7), A<int *>(p,8), A<float *>(p,9)); }); return 0; }
    MMV(q4_K) MMV(q5_K) MMV(q6_K) MMV(q3_K) MMV(iq4_xs) MMV(iq4_nl) MMV(q8_0)
    return 500;
}
extern "C" {
typedef unsigned long long dptr;
int cuInit(unsigned f) { return f == 0 ? 0 : 1; }
int cuDriverGetVersion(int *v) { *v = 13000; return 0; }
int cuDeviceGetCount(int *n) { *n = 1; return 0; }
int cuDeviceGet(int *d, int o) { if (o != 0) return 101; *d = 0; return 0; }
int cuDeviceGetName(char *s, int n, int d) { strncpy(s, "host emulation of fp16path.cu", n); return 0; }
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
int cuModuleLoadData(void **m, const void *img) { *m = strdup("fp16path"); return 0; }
int cuModuleUnload(void *m) { free(m); return 0; }
int cuModuleGetFunction(void **f, void *m, const char *name) { *f = strdup(name); return 0; }
int cuMemAlloc_v2(dptr *p, size_t n) { *p = (dptr)(uintptr_t)malloc(n); return *p ? 0 : 2; }
int cuMemFree_v2(dptr p) { free((void *)(uintptr_t)p); return 0; }
int cuMemcpyHtoD_v2(dptr d, const void *s, size_t n) { memcpy((void *)(uintptr_t)d, s, n); return 0; }
int cuMemcpyDtoH_v2(void *d, dptr s, size_t n) { memcpy(d, (void *)(uintptr_t)s, n); return 0; }
int cuMemsetD8_v2(dptr d, unsigned char v, size_t n) { memset((void *)(uintptr_t)d, v, n); return 0; }
int cuLaunchKernel(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                   unsigned sh, void *st, void **p, void **extra) { return emu_launch((const char *)f, gx, bx, p); }
int cuGetErrorName(int r, const char **s) { if (r == 500) { *s = "CUDA_ERROR_NOT_FOUND"; return 0; } return 1; }
int cuGetErrorString(int r, const char **s) { return 1; }
}
`
