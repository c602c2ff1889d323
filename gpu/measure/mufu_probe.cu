// mufu_probe: measures on the GPU at hand what ggml's -use_fast_math build computes for
// exp and tanh, the functions of the GLU epilogues (SWIGLU, GEGLU, SWIGLU_OAI):
//
//  1. MUFU.EX2 (ex2.approx.ftz.f32) on the grids x = j*2^-24 and x = -j*2^-24, j < 2^24
//     (the tables T24 and TN24, the latter in ex2_tn24.u8 coded likewise with decreasing steps),
//     written as byte deltas between consecutive outputs (ex2_t24.u8: byte 0..3 = bits of
//     T24[0] little endian, then one byte per j >= 1: T24[j]-T24[j-1], 255 = escape; the
//     escapes are listed in the log);
//  2. a check of the sign-magnitude model of ex2 against the hardware for all 2^32 inputs
//     (input flushed; K = |x|*2^F truncated or rounded, n = K >> F, g = K mod 2^F;
//     ex2(x) = T24[g] * 2^n for x >= 0 (F = 23, truncation), TN24[g] * 2^-n for x < 0,
//     flushed below 2^-126), mismatches counted per variant and (sign, exponent) of the
//     input. (Run 1 of 2026-12-02 had tested two's-complement fixed-point models instead:
//     F = 22..24 with floor, nearest or truncation; none fitted the negative inputs.)
//  3. expf (as -use_fast_math compiles it) against ex2.approx.ftz(x *rn.ftz 1.4426950f),
//     and tanhf against tanh.approx.f32, for all 2^32 inputs;
//  4. tanh.approx.f32 on [2^-8, 8], run-length coded (tanh_rle_in.u32 / tanh_rle_out.u32:
//     the input bits where the output changes and the new output bits, each column
//     delta-coded), the identity below 2^-8 and 1.0 above 8 checked for every input, and
//     its odd symmetry;
//  5. MUFU.RSQ (rsqrt.approx.ftz.f32) on [1, 4) (rsq_14.i8: int8 hardware bits minus the bits of
//     float(1/sqrt(double(x))) for x = bits 0x3f800000 + j) and a check of R(m)*2^-k for all
//     positive normal inputs;
//  6. samples of ggml's three GLU formulas (their arithmetic copied from ggml-cuda's
//     unary.cuh at d99724f2b141) on random inputs (glu_samples.f32).
//
// Build and run (on the device, CUDA 13, the flags ggml's CMakeLists gives nvcc):
//   nvcc -O3 -arch=sm_90 -use_fast_math -o mufu_probe mufu_probe.cu && ./mufu_probe OUTDIR
//   cuobjdump -sass mufu_probe > OUTDIR/mufu_probe.sass
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#define CK(x)                                                                              \
    do {                                                                                   \
        cudaError_t e_ = (x);                                                              \
        if (e_ != cudaSuccess) {                                                           \
            fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(e_)); \
            exit(1);                                                                       \
        }                                                                                  \
    } while (0)

__device__ __forceinline__ float ex2a(float x) {
    float r;
    asm volatile("ex2.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(x));
    return r;
}
__device__ __forceinline__ float tanha(float x) {
    float r;
    asm volatile("tanh.approx.f32 %0, %1;" : "=f"(r) : "f"(x));
    return r;
}
__device__ __forceinline__ float rsqa(float x) {
    float r;
    asm volatile("rsqrt.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(x));
    return r;
}
__device__ __forceinline__ float mulftz(float a, float b) {
    float r;
    asm volatile("mul.rn.ftz.f32 %0, %1, %2;" : "=f"(r) : "f"(a), "f"(b));
    return r;
}

__global__ void k_t24(unsigned *out) {
    unsigned j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j < (1u << 24)) out[j] = __float_as_uint(ex2a((float)j * 0x1p-24f));
}

// MUFU.RSQ on [1, 4): the 2^24 inputs with bits 0x3f800000 + j.
__global__ void k_rsq(unsigned *out) {
    unsigned j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j < (1u << 24)) out[j] = __float_as_uint(rsqa(__uint_as_float(0x3f800000u + j)));
}
// rsq model: x = m * 4^k with m in [1, 4) -> R[m] * 2^-k (positive normal x only).
__device__ unsigned rsq_model(unsigned xb, const unsigned *R) {
    int e = (int)((xb >> 23) & 0xff);
    int base = ((e - 127) & 1) ? 128 : 127;
    int k = (e - base) / 2;
    unsigned r = R[((unsigned)(base - 127) << 23) | (xb & 0x7fffffu)];
    int re = (int)((r >> 23) & 0xff) - k;
    if (re <= 0) return 0u;
    if (re >= 255) return 0x7f800000u;
    return (r & 0x807fffffu) | ((unsigned)re << 23);
}

// MUFU.EX2 on the negative grid x = -k*2^-24, k < 2^24 (the table TN24).
__global__ void k_tn24(unsigned *out) {
    unsigned k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k < (1u << 24)) out[k] = __float_as_uint(ex2a(-(float)k * 0x1p-24f));
}
// Sign-magnitude model: |x|*2^F truncated (mode 0) or rounded to nearest even (mode 1) to
// an integer K; n = K >> F, g = K mod 2^F; result = (x >= 0 ? TP : TN)[g at 24 bits] scaled
// by 2^(x >= 0 ? n : -n), flushed below 2^-126. Positive inputs use F = 23, truncation.
__device__ unsigned model_sm(unsigned xb, const unsigned *TP, const unsigned *TN, int F, int mode) {
    if ((xb & 0x7f800000u) == 0) xb &= 0x80000000u;  // FTZ input
    bool neg = xb >> 31;
    float ax = __uint_as_float(xb & 0x7fffffffu);
    if (!neg && ax >= 128.f) return 0x7f800000u;
    if (neg && ax >= 256.f) return 0u;
    int Fx = neg ? F : 23;
    double m = (double)ax * (double)(1 << Fx);
    long long K = (long long)((neg && mode == 1) ? rint(m) : trunc(m));
    long long n = K >> Fx;
    unsigned g = (unsigned)(K & ((1LL << Fx) - 1));
    unsigned t = (neg ? TN : TP)[g << (24 - Fx)];
    long long e = (long long)((t >> 23) & 0xff) + (neg ? -n : n);
    if (e >= 255) return 0x7f800000u;
    if (e <= 0) return 0u;
    return (t & 0x807fffffu) | ((unsigned)e << 23);
}

#define NF 2   // F = 23, 24 for negative inputs (positive: 23)
#define NM 2   // trunc, nearest-even
#define NV (NF * NM)
#define NEX 16
#define NX 5   // + rsq.approx != rsq model (positive normal inputs); extra counters: expf!=ex2(x*log2e), tanhf!=tanh.approx, tanh odd, NaN-in non-NaN-out

// Each thread: 64 consecutive inputs of one (sign, exponent) bucket.
__global__ void k_check(const unsigned *T, const unsigned *TN, const unsigned *RS, unsigned long long *cnt, unsigned *ex, unsigned *exn,
                        unsigned long long *xcnt, unsigned *xex, unsigned *xexn) {
    unsigned long long t = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
    unsigned long long first = t * 64ull;
    if (first >= (1ull << 32)) return;
    unsigned bucket = (unsigned)(first >> 23);
    unsigned c[NV];
    unsigned xc[NX];
    for (int v = 0; v < NV; v++) c[v] = 0;
    for (int v = 0; v < NX; v++) xc[v] = 0;
    for (unsigned k = 0; k < 64; k++) {
        unsigned xb = (unsigned)(first + k);
        float x = __uint_as_float(xb);
        unsigned hw = __float_as_uint(ex2a(x));
        bool isnan_in = (xb & 0x7fffffffu) > 0x7f800000u;
        // extra 0: expf as the compiler builds it vs ex2(x*log2e)
        unsigned e1 = __float_as_uint(expf(x));
        unsigned e2 = __float_as_uint(ex2a(mulftz(x, 1.4426950408889634f)));
        unsigned th = __float_as_uint(tanhf(x));
        unsigned ta = __float_as_uint(tanha(x));
        unsigned tn = __float_as_uint(tanha(__uint_as_float(xb ^ 0x80000000u)));
        unsigned rq = __float_as_uint(rsqa(x));
        bool posnorm = xb >= 0x00800000u && xb < 0x7f800000u;
        unsigned rm = posnorm ? rsq_model(xb, RS) : rq;
        unsigned xv[NX] = {e1 != e2, th != ta, (tn ^ 0x80000000u) != ta, isnan_in && ((hw & 0x7fffffffu) <= 0x7f800000u), rq != rm};
        if (isnan_in) { xv[0] = xv[1] = xv[2] = 0; }
        for (int v = 0; v < NX; v++) {
            if (xv[v]) {
                xc[v]++;
                unsigned i = atomicAdd(&xexn[v], 1u);
                if (i < NEX) {
                    unsigned a = v == 0 ? e1 : (v == 1 ? th : (v == 4 ? rq : tn));
                    unsigned b = v == 0 ? e2 : (v == 4 ? rm : ta);
                    xex[(v * NEX + i) * 3 + 0] = xb;
                    xex[(v * NEX + i) * 3 + 1] = v == 3 ? hw : a;
                    xex[(v * NEX + i) * 3 + 2] = b;
                }
            }
        }
        if (isnan_in) continue;
        for (int f = 0; f < NF; f++) {
            for (int m = 0; m < NM; m++) {
                int v = f * NM + m;
                unsigned p = model_sm(xb, T, TN, 23 + f, m);
                if (p != hw) {
                    c[v]++;
                    unsigned i = atomicAdd(&exn[v], 1u);
                    if (i < NEX) {
                        ex[(v * NEX + i) * 3 + 0] = xb;
                        ex[(v * NEX + i) * 3 + 1] = hw;
                        ex[(v * NEX + i) * 3 + 2] = p;
                    }
                }
            }
        }
    }
    for (int v = 0; v < NV; v++)
        if (c[v]) atomicAdd(&cnt[v * 512 + bucket], (unsigned long long)c[v]);
    for (int v = 0; v < NX; v++)
        if (xc[v]) atomicAdd(&xcnt[v], (unsigned long long)xc[v]);
}

// tanh.approx: run-length code over the inputs [TLO, THI] = [2^-8, 8] (outside it the
// function is the identity below and 1.0 above: k_tanh_edges counts exceptions).
#define TCH 4096u
#define TLO 0x3b800000u
#define THI 0x41000000u
#define TN (THI - TLO + 1u)
__global__ void k_tanh_count(unsigned *counts) {
    unsigned ch = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned long long lo = (unsigned long long)ch * TCH;
    if (lo >= TN) return;
    unsigned long long hi = lo + TCH < TN ? lo + TCH : TN;
    unsigned n = 0;
    unsigned prev = lo == 0 ? 0xffffffffu : __float_as_uint(tanha(__uint_as_float((unsigned)(TLO + lo - 1))));
    for (unsigned long long i = lo; i < hi; i++) {
        unsigned o = __float_as_uint(tanha(__uint_as_float((unsigned)(TLO + i))));
        if (o != prev) n++;
        prev = o;
    }
    counts[ch] = n;
}
__global__ void k_tanh_write(const unsigned long long *off, unsigned *pairs) {
    unsigned ch = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned long long lo = (unsigned long long)ch * TCH;
    if (lo >= TN) return;
    unsigned long long hi = lo + TCH < TN ? lo + TCH : TN;
    unsigned long long w = off[ch];
    unsigned prev = lo == 0 ? 0xffffffffu : __float_as_uint(tanha(__uint_as_float((unsigned)(TLO + lo - 1))));
    for (unsigned long long i = lo; i < hi; i++) {
        unsigned o = __float_as_uint(tanha(__uint_as_float((unsigned)(TLO + i))));
        if (o != prev) {
            pairs[2 * w] = (unsigned)(TLO + i);
            pairs[2 * w + 1] = o;
            w++;
        }
        prev = o;
    }
}
// e[0]: x in [0, TLO) with tanh(x) != x; e[1]: x in (THI, +Inf] with tanh(x) != 1.0;
// ex[]: up to 8 examples of each (x, out).
__global__ void k_tanh_edges(unsigned long long *e, unsigned *ex, unsigned *exn) {
    unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i > 0x7f800000ull) return;
    unsigned xb = (unsigned)i;
    if (xb >= TLO && xb <= THI) return;
    unsigned o = __float_as_uint(tanha(__uint_as_float(xb)));
    int k = xb < TLO ? 0 : 1;
    if ((k == 0 && o != xb) || (k == 1 && o != 0x3f800000u)) {
        atomicAdd(&e[k], 1ull);
        unsigned j = atomicAdd(&exn[k], 1u);
        if (j < 8) {
            ex[(k * 8 + j) * 2] = xb;
            ex[(k * 8 + j) * 2 + 1] = o;
        }
    }
}

// ggml's GLU arithmetic (unary.cuh at d99724f2b141, copied as formulas) and the fused
// epilogue's use of it (mmvq.cu: result *= silu(gate); result *= gelu(gate);
// result = swiglu_oai(gate, result)).
__device__ __forceinline__ float silu1(float x) { return x / (1.0f + expf(-x)); }
__device__ __forceinline__ float gelu1(float x) {
    const float GELU_COEF_A = 0.044715f;
    const float SQRT_2_OVER_PI = 0.79788456080286535587989211986876f;
    return 0.5f * x * (1.0f + tanhf(SQRT_2_OVER_PI * x * (1.0f + GELU_COEF_A * x * x)));
}
__device__ __forceinline__ float oai1(float x, float g, float alpha, float limit) {
    x = fminf(x, limit);
    g = fmaxf(fminf(g, limit), -limit);
    float out_glu = x / (1.0f + expf(-x * alpha));
    out_glu = out_glu * (1.0f + g);
    return out_glu;
}
// rec: x, g, alpha, limit, silu(x), gelu(x), oai(x,g,alpha,limit), g*silu(x), g*gelu(x), ex2a(x), tanha(x)
#define REC 11
__global__ void k_glu(float *rec, unsigned n) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float *r = rec + (size_t)i * REC;
    float x = r[0], g = r[1], alpha = r[2], limit = r[3];
    r[4] = silu1(x);
    r[5] = gelu1(x);
    r[6] = oai1(x, g, alpha, limit);
    float res = g;
    res *= silu1(x);
    r[7] = res;
    res = g;
    res *= gelu1(x);
    r[8] = res;
    r[9] = ex2a(x);
    r[10] = tanha(x);
}

static uint64_t rng = 0x9E3779B97F4A7C15ull;
static uint64_t next() {
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}
static float unif() { return (float)((next() >> 40) * 0x1p-24); }
static float normal() {
    float u = unif() + 1e-7f, v = unif();
    return sqrtf(-2.f * logf(u)) * cosf(6.2831853f * v);
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: mufu_probe OUTDIR\n");
        return 2;
    }
    const char *dir = argv[1];
    char path[4096];
    FILE *log = stdout;
    cudaDeviceProp prop;
    CK(cudaGetDeviceProperties(&prop, 0));
    int drv = 0, rt = 0;
    cudaDriverGetVersion(&drv);
    cudaRuntimeGetVersion(&rt);
    fprintf(log, "device %s sm_%d%d, driver API %d, runtime %d\n", prop.name, prop.major, prop.minor, drv, rt);

    // 1. T24
    unsigned *dT;
    CK(cudaMalloc(&dT, (1u << 24) * 4));
    k_t24<<<(1u << 24) / 256, 256>>>(dT);
    CK(cudaDeviceSynchronize());
    std::vector<unsigned> T(1u << 24);
    CK(cudaMemcpy(T.data(), dT, T.size() * 4, cudaMemcpyDeviceToHost));
    {
        snprintf(path, sizeof path, "%s/ex2_t24.u8", dir);
        FILE *f = fopen(path, "wb");
        unsigned char h[4] = {(unsigned char)T[0], (unsigned char)(T[0] >> 8), (unsigned char)(T[0] >> 16), (unsigned char)(T[0] >> 24)};
        fwrite(h, 1, 4, f);
        std::vector<unsigned char> d(T.size() - 1);
        unsigned esc = 0, dec = 0, maxd = 0;
        for (size_t j = 1; j < T.size(); j++) {
            long long dd = (long long)T[j] - (long long)T[j - 1];
            if (dd < 0) dec++;
            if (dd >= 0 && (unsigned long long)dd > maxd) maxd = (unsigned)dd;
            if (dd < 0 || dd >= 255) {
                d[j - 1] = 255;
                if (esc++ < 64) fprintf(log, "t24 escape j=%zu T=%08x prev=%08x\n", j, T[j], T[j - 1]);
            } else
                d[j - 1] = (unsigned char)dd;
        }
        fwrite(d.data(), 1, d.size(), f);
        fclose(f);
        fprintf(log, "T24: T[0]=%08x T[2^23]=%08x T[max]=%08x, decreasing steps %u, escapes %u, max step %u\n", T[0], T[1u << 23], T.back(), dec, esc, maxd);
        // how far from correctly rounded exp2 (host double)
        long long hist[9] = {0};
        for (size_t j = 0; j < T.size(); j++) {
            float ref = (float)exp2((double)j * 0x1p-24);
            long long dd = (long long)T[j] - (long long)*(unsigned *)&ref;
            if (dd < -4) dd = -4;
            if (dd > 4) dd = 4;
            hist[dd + 4]++;
        }
        fprintf(log, "T24 - correctly rounded exp2 (ulp, clamped at +-4):");
        for (int k = 0; k < 9; k++) fprintf(log, " %d:%lld", k - 4, hist[k]);
        fprintf(log, "\n");
    }

    // 1b. TN24
    unsigned *dTN;
    CK(cudaMalloc(&dTN, (1u << 24) * 4));
    k_tn24<<<(1u << 24) / 256, 256>>>(dTN);
    CK(cudaDeviceSynchronize());
    {
        std::vector<unsigned> N(1u << 24);
        CK(cudaMemcpy(N.data(), dTN, N.size() * 4, cudaMemcpyDeviceToHost));
        // ex2_tn24.u8: bytes 0..3 = bits of TN24[0], then one byte per k >= 1:
        // TN24[k-1]-TN24[k] (the table decreases), 255 = escape (listed in the log).
        snprintf(path, sizeof path, "%s/ex2_tn24.u8", dir);
        FILE *f = fopen(path, "wb");
        unsigned char h[4] = {(unsigned char)N[0], (unsigned char)(N[0] >> 8), (unsigned char)(N[0] >> 16), (unsigned char)(N[0] >> 24)};
        fwrite(h, 1, 4, f);
        std::vector<unsigned char> d(N.size() - 1);
        unsigned esc = 0, odd = 0;
        for (size_t k = 1; k < N.size(); k++) {
            long long dd = (long long)N[k - 1] - (long long)N[k];
            if (dd < 0 || dd >= 255) {
                d[k - 1] = 255;
                if (esc++ < 64) fprintf(log, "tn24 escape k=%zu TN=%08x prev=%08x\n", k, N[k], N[k - 1]);
            } else
                d[k - 1] = (unsigned char)dd;
            if ((k & 1) && N[k] != N[k - 1]) odd++;
        }
        fwrite(d.data(), 1, d.size(), f);
        fclose(f);
        fprintf(log, "TN24: TN[0]=%08x TN[2^23]=%08x TN[max]=%08x, escapes %u, TN[2k+1] != TN[2k] for %u k\n", N[0], N[1u << 23], N.back(), esc, odd);
    }
    // MUFU.RSQ table on [1, 4)
    unsigned *dR;
    CK(cudaMalloc(&dR, (1u << 24) * 4));
    k_rsq<<<(1u << 24) / 256, 256>>>(dR);
    CK(cudaDeviceSynchronize());
    {
        std::vector<unsigned> Rh(1u << 24);
        CK(cudaMemcpy(Rh.data(), dR, Rh.size() * 4, cudaMemcpyDeviceToHost));
        // rsq_14.i8: per input j, (int8) (hardware bits - bits of float(1/sqrt(double(x)))),
        // -128 = escape (listed in the log).
        std::vector<signed char> dl(Rh.size());
        long long hist[9] = {0};
        for (size_t j = 0; j < Rh.size(); j++) {
            float xx;
            unsigned xb = 0x3f800000u + (unsigned)j;
            memcpy(&xx, &xb, 4);
            float ref = (float)(1.0 / sqrt((double)xx));
            unsigned rb;
            memcpy(&rb, &ref, 4);
            long long dd = (long long)Rh[j] - (long long)rb;
            if (dd < -127 || dd > 127) {
                dl[j] = -128;
                fprintf(log, "rsq escape j=%zu hw=%08x ref=%08x\n", j, Rh[j], rb);
            } else
                dl[j] = (signed char)dd;
            if (dd < -4) dd = -4;
            if (dd > 4) dd = 4;
            hist[dd + 4]++;
        }
        snprintf(path, sizeof path, "%s/rsq_14.i8", dir);
        FILE *f = fopen(path, "wb");
        fwrite(dl.data(), 1, dl.size(), f);
        fclose(f);
        fprintf(log, "rsqrt.approx.ftz on [1,4) - correctly rounded (ulp, clamped at +-4):");
        for (int k = 0; k < 9; k++) fprintf(log, " %d:%lld", k - 4, hist[k]);
        fprintf(log, "\n");
    }
    // 2, 3. all inputs
    {
        unsigned long long *dcnt, *dx;
        unsigned *dex, *dexn, *dxex, *dxexn;
        CK(cudaMalloc(&dcnt, NV * 512 * 8));
        CK(cudaMemset(dcnt, 0, NV * 512 * 8));
        CK(cudaMalloc(&dex, NV * NEX * 3 * 4));
        CK(cudaMalloc(&dexn, NV * 4));
        CK(cudaMemset(dexn, 0, NV * 4));
        CK(cudaMalloc(&dx, NX * 8));
        CK(cudaMemset(dx, 0, NX * 8));
        CK(cudaMalloc(&dxex, NX * NEX * 3 * 4));
        CK(cudaMalloc(&dxexn, NX * 4));
        CK(cudaMemset(dxexn, 0, NX * 4));
        unsigned threads = (unsigned)((1ull << 32) / 64);
        k_check<<<threads / 256, 256>>>(dT, dTN, dR, dcnt, dex, dexn, dx, dxex, dxexn);
        CK(cudaDeviceSynchronize());
        std::vector<unsigned long long> cnt(NV * 512), xc(NX);
        std::vector<unsigned> ex(NV * NEX * 3), exn(NV), xex(NX * NEX * 3), xexn(NX);
        CK(cudaMemcpy(cnt.data(), dcnt, cnt.size() * 8, cudaMemcpyDeviceToHost));
        CK(cudaMemcpy(ex.data(), dex, ex.size() * 4, cudaMemcpyDeviceToHost));
        CK(cudaMemcpy(exn.data(), dexn, exn.size() * 4, cudaMemcpyDeviceToHost));
        CK(cudaMemcpy(xc.data(), dx, xc.size() * 8, cudaMemcpyDeviceToHost));
        CK(cudaMemcpy(xex.data(), dxex, xex.size() * 4, cudaMemcpyDeviceToHost));
        CK(cudaMemcpy(xexn.data(), dxexn, xexn.size() * 4, cudaMemcpyDeviceToHost));
        const char *mn[NM] = {"trunc", "nearest"};
        for (int v = 0; v < NV; v++) {
            unsigned long long tot = 0;
            for (int b = 0; b < 512; b++) tot += cnt[v * 512 + b];
            fprintf(log, "sign-magnitude model, x >= 0: TP, F=23, trunc; x < 0: TN, F=%d, %s: %llu mismatches of 2^32 inputs (NaN inputs skipped)\n", 23 + v / NM, mn[v % NM], tot);
            int shown = 0;
            for (int b = 0; b < 512 && shown < 40; b++)
                if (cnt[v * 512 + b]) {
                    fprintf(log, "   sign %d exp %3d: %llu\n", b >> 8, b & 255, cnt[v * 512 + b]);
                    shown++;
                }
            for (unsigned i = 0; i < exn[v] && i < NEX; i++)
                fprintf(log, "   e.g. x=%08x (%.9g) hw=%08x model=%08x\n", ex[(v * NEX + i) * 3], *(float *)&ex[(v * NEX + i) * 3], ex[(v * NEX + i) * 3 + 1], ex[(v * NEX + i) * 3 + 2]);
        }
        const char *xn[NX] = {"expf (fast-math) != ex2.approx.ftz(x*rn.ftz log2e)", "tanhf (fast-math) != tanh.approx", "tanh.approx(-x) != -tanh.approx(x)", "ex2(NaN) not NaN", "rsqrt.approx != R[m]*2^-k"};
        for (int v = 0; v < NX; v++) {
            fprintf(log, "%s: %llu of 2^32\n", xn[v], xc[v]);
            for (unsigned i = 0; i < xexn[v] && i < NEX; i++)
                fprintf(log, "   e.g. x=%08x (%.9g) a=%08x (%.9g) b=%08x (%.9g)\n", xex[(v * NEX + i) * 3], *(float *)&xex[(v * NEX + i) * 3], xex[(v * NEX + i) * 3 + 1], *(float *)&xex[(v * NEX + i) * 3 + 1], xex[(v * NEX + i) * 3 + 2], *(float *)&xex[(v * NEX + i) * 3 + 2]);
        }
    }
    // specials
    {
        unsigned sp[] = {0x00000000, 0x80000000, 0x00000001, 0x807fffff, 0x7f800000, 0xff800000, 0x7fc00000, 0xffc00000, 0x7f800001,
                         0x43000000, 0x42fffffe, 0x42ffffff, 0xc2fc0000, 0xc2fe0000, 0xc2fc0001, 0xc3000000, 0xc3160000, 0x3f800000, 0xbf800000,
                         0x33800000, 0xb3800000, 0x33000000, 0xb3000000, 0x2f800000, 0xaf800000};
        unsigned n = sizeof sp / sizeof sp[0];
        float *d;
        CK(cudaMalloc(&d, n * REC * 4));
        std::vector<float> r(n * REC, 0.f);
        for (unsigned i = 0; i < n; i++) {
            memcpy(&r[i * REC], &sp[i], 4);
            r[i * REC + 1] = 1.f;
            r[i * REC + 2] = 1.702f;
            r[i * REC + 3] = 7.f;
        }
        CK(cudaMemcpy(d, r.data(), r.size() * 4, cudaMemcpyHostToDevice));
        k_glu<<<1, 64>>>(d, n);
        CK(cudaDeviceSynchronize());
        CK(cudaMemcpy(r.data(), d, r.size() * 4, cudaMemcpyDeviceToHost));
        for (unsigned i = 0; i < n; i++) {
            unsigned e, t, s;
            memcpy(&e, &r[i * REC + 9], 4);
            memcpy(&t, &r[i * REC + 10], 4);
            memcpy(&s, &r[i * REC + 4], 4);
            fprintf(log, "special x=%08x: ex2=%08x tanh.approx=%08x silu=%08x\n", sp[i], e, t, s);
        }
        cudaFree(d);
    }
    // 4. tanh RLE on [2^-8, 8] and its edges
    {
        unsigned long long *de;
        unsigned *dex, *dexn;
        CK(cudaMalloc(&de, 16));
        CK(cudaMemset(de, 0, 16));
        CK(cudaMalloc(&dex, 32 * 4));
        CK(cudaMalloc(&dexn, 8));
        CK(cudaMemset(dexn, 0, 8));
        k_tanh_edges<<<(unsigned)((0x7f800001ull + 255) / 256), 256>>>(de, dex, dexn);
        CK(cudaDeviceSynchronize());
        unsigned long long e[2];
        unsigned ex[32], exn[2];
        CK(cudaMemcpy(e, de, 16, cudaMemcpyDeviceToHost));
        CK(cudaMemcpy(ex, dex, 128, cudaMemcpyDeviceToHost));
        CK(cudaMemcpy(exn, dexn, 8, cudaMemcpyDeviceToHost));
        fprintf(log, "tanh.approx(x) != x for x in [+0, 2^-8): %llu; != 1.0 for x in (8, +Inf]: %llu\n", e[0], e[1]);
        for (int k = 0; k < 2; k++)
            for (unsigned j = 0; j < exn[k] && j < 8; j++) fprintf(log, "   e.g. x=%08x out=%08x\n", ex[(k * 8 + j) * 2], ex[(k * 8 + j) * 2 + 1]);
        unsigned nch = (unsigned)((TN + TCH - 1) / TCH);
        unsigned *dc;
        CK(cudaMalloc(&dc, nch * 4));
        k_tanh_count<<<(nch + 255) / 256, 256>>>(dc);
        CK(cudaDeviceSynchronize());
        std::vector<unsigned> c(nch);
        CK(cudaMemcpy(c.data(), dc, nch * 4, cudaMemcpyDeviceToHost));
        std::vector<unsigned long long> off(nch);
        unsigned long long tot = 0;
        for (unsigned i = 0; i < nch; i++) {
            off[i] = tot;
            tot += c[i];
        }
        fprintf(log, "tanh.approx on [2^-8, 8]: %llu output changes over %u inputs\n", tot, TN);
        const unsigned long long cap = 12000000ull;
        if (tot <= cap) {
            unsigned long long *doff;
            unsigned *dp;
            CK(cudaMalloc(&doff, nch * 8));
            CK(cudaMemcpy(doff, off.data(), nch * 8, cudaMemcpyHostToDevice));
            CK(cudaMalloc(&dp, tot * 8));
            k_tanh_write<<<(nch + 255) / 256, 256>>>(doff, dp);
            CK(cudaDeviceSynchronize());
            std::vector<unsigned> p(tot * 2);
            CK(cudaMemcpy(p.data(), dp, tot * 8, cudaMemcpyDeviceToHost));
            // two files, each column delta-coded from the previous pair (first from 0)
            std::vector<unsigned> qi(tot), qo(tot);
            unsigned pi = 0, po = 0;
            for (unsigned long long i = 0; i < tot; i++) {
                qi[i] = p[2 * i] - pi;
                qo[i] = p[2 * i + 1] - po;
                pi = p[2 * i];
                po = p[2 * i + 1];
            }
            snprintf(path, sizeof path, "%s/tanh_rle_in.u32", dir);
            FILE *f = fopen(path, "wb");
            fwrite(qi.data(), 4, qi.size(), f);
            fclose(f);
            snprintf(path, sizeof path, "%s/tanh_rle_out.u32", dir);
            f = fopen(path, "wb");
            fwrite(qo.data(), 4, qo.size(), f);
            fclose(f);
            fprintf(log, "tanh_rle_in.u32 / tanh_rle_out.u32: %llu pairs (input bits where the output changes, the new output bits), each column delta-coded from 0\n", tot);
        } else {
            fprintf(log, "tanh.approx has more than %llu changes: not written\n", cap);
        }
    }
    // 5. GLU samples
    {
        const unsigned n = 1u << 17;
        std::vector<float> r((size_t)n * REC, 0.f);
        const float scales[] = {0.01f, 0.3f, 1.f, 3.f, 8.f, 30.f, 100.f};
        for (unsigned i = 0; i < n; i++) {
            float *q = &r[(size_t)i * REC];
            float s = scales[next() % 7];
            q[0] = normal() * s;
            q[1] = normal() * scales[next() % 7];
            bool dflt = next() % 2;
            q[2] = dflt ? 1.702f : 0.5f + 3.f * unif();
            q[3] = dflt ? 7.f : 1.f + 15.f * unif();
        }
        float *d;
        CK(cudaMalloc(&d, r.size() * 4));
        CK(cudaMemcpy(d, r.data(), r.size() * 4, cudaMemcpyHostToDevice));
        k_glu<<<n / 256, 256>>>(d, n);
        CK(cudaDeviceSynchronize());
        CK(cudaMemcpy(r.data(), d, r.size() * 4, cudaMemcpyDeviceToHost));
        snprintf(path, sizeof path, "%s/glu_samples.f32", dir);
        FILE *f = fopen(path, "wb");
        fwrite(r.data(), 4, r.size(), f);
        fclose(f);
        fprintf(log, "glu_samples.f32: %u records of %d float32 (x, g, alpha, limit, silu(x), gelu(x), oai(x,g,alpha,limit), g*=silu(x), g*=gelu(x), ex2.approx(x), tanh.approx(x))\n", n, REC);
    }
    fprintf(log, "done\n");
    return 0;
}
