// probe.cu: measures, on the GPU at hand, the assumptions package sim makes about the
// arithmetic of a -use_fast_math build (see README.md beside this file). Own code, not
// ggml's. Build and run:
//
//   nvcc -O3 -arch=sm_90 -use_fast_math -o probe probe.cu && ./probe OUTDIR [rcp_table.bin]
//
// It prints one line per check ("name: ..."), and writes OUTDIR/half_ops.bin (binary16
// results for comparison with package f16) and OUTDIR/h2f.bin.
#include <cuda_fp16.h>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
    printf("CUDA error %s at %s:%d\n", cudaGetErrorString(e_), __FILE__, __LINE__); exit(1); } } while (0)

struct Stat {
    unsigned long long mism;
    unsigned long long nan_bits_first;  // (flag<<32)|bits of the first NaN result seen
    unsigned int first[16][3];          // input, got, want of the first mismatches
};

__device__ void record(Stat *s, unsigned in, unsigned got, unsigned want) {
    unsigned long long k = atomicAdd(&s->mism, 1ULL);
    if (k < 16) { s->first[k][0] = in; s->first[k][1] = got; s->first[k][2] = want; }
}

__device__ __forceinline__ float rcp_ptx(float x) { float r; asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(x)); return r; }
__device__ __forceinline__ float mul_ftz(float a, float b) { float r; asm("mul.ftz.f32 %0, %1, %2;" : "=f"(r) : "f"(a), "f"(b)); return r; }

// sim.Rcp's model: table value for the significand, scaled exactly, flushed below 2^-126.
__device__ unsigned model_rcp(unsigned b) {
    unsigned e = (b >> 23) & 0xff, sign = b & 0x80000000u;
    if (e == 0) return sign | 0x7f800000u;
    if (e == 0xff) return (b & 0x7fffff) ? 0x7fffffffu : sign;
    unsigned r = __float_as_uint(rcp_ptx(__uint_as_float(0x3f800000u | (b & 0x7fffff))));
    int re = (int)(r >> 23) - ((int)e - 127);
    if (re <= 0) return sign;
    return sign | ((unsigned)re << 23) | (r & 0x7fffff);
}

__device__ bool isnan_bits(unsigned u) { return (u & 0x7fffffffu) > 0x7f800000u; }

__device__ void cmp(Stat *s, unsigned in, unsigned got, unsigned want, bool nan_any) {
    if (isnan_bits(got) && s->nan_bits_first == 0) atomicCAS(&s->nan_bits_first, 0ULL, (1ULL << 32) | got);
    bool ok = got == want || (nan_any && isnan_bits(got) && isnan_bits(want));
    if (!ok) record(s, in, got, want);
}

// 1. binade scaling of rcp.approx.ftz.f32 over all 2^32 inputs
__global__ void k_rcp(Stat *s, unsigned hi) {
    unsigned lo = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned b = (hi << 24) | lo;
    cmp(s, b, __float_as_uint(rcp_ptx(__uint_as_float(b))), model_rcp(b), false);
}

// rcp on [1,2) for comparison with the shipped table
__global__ void k_rcp_binade(unsigned *out) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    out[i] = __float_as_uint(rcp_ptx(__uint_as_float(0x3f800000u | i)));
}

// 2. x / 127.0f (compiled with -use_fast_math) against x * 0x3C010204 (mul.ftz)
__global__ void k_div127(Stat *s, unsigned hi, const float *dummy) {
    unsigned lo = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned b = (hi << 24) | lo;
    float x = __uint_as_float(b);
    float q = x / 127.0f;
    cmp(s, b, __float_as_uint(q), __float_as_uint(mul_ftz(x, __uint_as_float(0x3C010204u))), true);
}

// 3. a / b (runtime a) and 127.0f / b against mul.ftz(a, rcp(b))
__global__ void k_div(Stat *s, unsigned hi, float a) {
    unsigned lo = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned b = (hi << 24) | lo;
    float y = __uint_as_float(b);
    cmp(s, b, __float_as_uint(a / y), __float_as_uint(mul_ftz(a, rcp_ptx(y))), true);
}
__global__ void k_div127num(Stat *s, unsigned hi) {
    unsigned lo = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned b = (hi << 24) | lo;
    float y = __uint_as_float(b);
    cmp(s, b, __float_as_uint(127.0f / y), __float_as_uint(mul_ftz(127.0f, rcp_ptx(y))), true);
}

// 4. roundf over all 2^32 inputs against half-away-from-zero on the bits (sim.RoundF)
__device__ unsigned model_round(unsigned u) {
    unsigned sign = u & 0x80000000u;
    int e = (u >> 23) & 0xff;
    if (e == 0xff) return (u & 0x7fffff) ? 0x7fffffffu : u;
    if (e >= 150) return u;
    if (e < 126) return sign;
    unsigned long long m = (u & 0x7fffff) | 0x800000u;
    unsigned sh = 150 - e;
    unsigned long long n = m >> sh;
    if ((m & ((1ULL << sh) - 1)) >= (1ULL << (sh - 1))) n++;
    return sign | __float_as_uint((float)n);
}
__global__ void k_round(Stat *s, unsigned hi) {
    unsigned lo = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned b = (hi << 24) | lo;
    cmp(s, b, __float_as_uint(roundf(__uint_as_float(b))), model_round(b), true);
}

// 5. cvt.rn.f16.f32 (__float2half) over all 2^32 inputs against RN-even (NaN: record)
__device__ unsigned short model_f2h(unsigned f) {
    unsigned short sign = (f >> 16) & 0x8000;
    int exp = (f >> 23) & 0xff;
    unsigned long long man = f & 0x7fffff;
    if (exp == 0xff) return man ? 0x7fff : (sign | 0x7c00);  // NaN: canonical (model)
    unsigned long long m; int e;
    if (exp == 0) { m = man; e = -149; } else { m = man | (1u << 23); e = exp - 150; }
    if (m == 0) return sign;
    int msb = 63 - __clzll(m) + e;
    int q = msb - 10; if (q < -24) q = -24;
    int sh = q - e;
    unsigned long long n;
    if (sh <= 0) n = m << (-sh);
    else if (sh > 40) n = 0;
    else {
        n = m >> sh;
        unsigned long long rem = m & ((1ULL << sh) - 1), half = 1ULL << (sh - 1);
        if (rem > half || (rem == half && (n & 1))) n++;
    }
    unsigned long long bb = ((unsigned long long)(q + 24) << 10) + n;
    if (bb >= 0x7c00) return sign | 0x7c00;
    return sign | (unsigned short)bb;
}
__global__ void k_f2h(Stat *s, unsigned hi) {
    unsigned lo = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned b = (hi << 24) | lo;
    unsigned short got = __half_as_ushort(__float2half(__uint_as_float(b)));
    unsigned short want = model_f2h(b);
    if (got != want) record(s, b, got, want);
}

// 6. half ops: a = all 65536, b = bs[j], c = cs[j]: add, sub, mul, fma, and half2 mul
__global__ void k_half(unsigned short *out, const unsigned short *bs, const unsigned short *cs, int nb) {
    unsigned a = blockIdx.x * blockDim.x + threadIdx.x;
    for (int j = 0; j < nb; j++) {
        __half ha = __ushort_as_half((unsigned short)a), hb = __ushort_as_half(bs[j]), hc = __ushort_as_half(cs[j]);
        size_t base = ((size_t)j * 65536 + a) * 5;
        out[base + 0] = __half_as_ushort(__hadd(ha, hb));
        out[base + 1] = __half_as_ushort(__hsub(ha, hb));
        out[base + 2] = __half_as_ushort(__hmul(ha, hb));
        out[base + 3] = __half_as_ushort(__hfma(ha, hb, hc));
        half2 p = __hmul2(__halves2half2(ha, hb), __halves2half2(hb, hc)); // {a*b, b*c}
        out[base + 4] = __half_as_ushort(__high2half(p));                   // b*c
    }
}
__global__ void k_h2f(unsigned *out) {
    unsigned a = blockIdx.x * blockDim.x + threadIdx.x;
    out[a] = __float_as_uint(__half2float(__ushort_as_half((unsigned short)a)));
}

// 7. specials
__global__ void k_special(unsigned *o, const float *in) {
    // in[] holds values the compiler cannot fold
    float pz = in[0], nz = in[1], nan1 = in[2], one = in[3], inf = in[4], t1 = in[5], t2 = in[6];
    o[0] = __float_as_uint(fmaxf(pz, nz));
    o[1] = __float_as_uint(fmaxf(nz, pz));
    o[2] = __float_as_uint(fmaxf(nan1, nan1));
    o[3] = __float_as_uint(fminf(pz, nz));
    o[4] = __float_as_uint(fminf(nz, pz));
    o[5] = __float_as_uint(nan1 + one);
    o[6] = __float_as_uint(inf - inf);
    o[7] = __float_as_uint(mul_ftz(t1, t2));  // (1-2^-24) * 2^-126: tie at 2^-126
    float f; asm("fma.rn.ftz.f32 %0, %1, %2, %3;" : "=f"(f) : "f"(t1), "f"(t2), "f"(nz));
    o[8] = __float_as_uint(f);
    // (int8_t)roundf(x) as in quantize_q8_1, and char4 as in quantize_mmq_q8_1
    const float xs[8] = {nan1, inf, -inf, 127.5f * one, 128.0f * one, 200.0f * one, -129.0f * one, -300.0f * one};
    for (int i = 0; i < 8; i++) {
        const int8_t q = roundf(xs[i]);
        char4 c; c.x = roundf(xs[i]);
        o[9 + i] = (unsigned)(unsigned char)q | ((unsigned)(unsigned char)c.x << 8);
    }
    half h = __float2half(nan1);
    o[17] = __half_as_ushort(h);
    o[18] = __half_as_ushort(__float2half(-nan1));
    o[19] = __half_as_ushort(__hadd(__ushort_as_half(0x7e01), __ushort_as_half(0x3c00)));
    o[20] = __half_as_ushort(__hmul(__ushort_as_half(0x0000), __float2half(inf)));
}

// __byte_perm with selector nibbles >= 8 against the 3-bit model
__global__ void k_perm(Stat *s, unsigned seed) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned x = i * 2654435761u + seed, y = x * 2246822519u + 3266489917u, sel = i;
    unsigned got = __byte_perm(x, y, sel);
    unsigned long long v = (unsigned long long)x | ((unsigned long long)y << 32);
    unsigned want = 0;
    for (int n = 0; n < 4; n++) want |= (unsigned)((v >> (8 * ((sel >> (4 * n)) & 7))) & 0xff) << (8 * n);
    if (got != want) record(s, sel, got, want);
}

// 8. FTZ near 2^-126: mul.ftz and fma.rn.ftz where the exact result is just below or
// above 2^-126. Writes (a, b, c, result) quadruples; the Go side decides which flush model
// (exact value, 24-bit rounded value, or gradual-underflow value below 2^-126) they follow.
__global__ void k_tiny_mul(unsigned *out) {
    unsigned t = blockIdx.x * blockDim.x + threadIdx.x;  // 256 * 64
    unsigned k = t / 64, d = t % 64;
    // a near 1/(1+k*2^-23), just below 1
    double inv = 1.0 / (1.0 + k * 0x1p-23);
    unsigned ab = __float_as_uint((float)inv) - 32 + d;
    if (ab > 0x3f7fffffu) ab = 0x3f7fffffu - (ab - 0x3f7fffffu);
    float a = __uint_as_float(ab), b = __uint_as_float(0x00800000u | k);
    out[4 * t + 0] = ab; out[4 * t + 1] = 0x00800000u | k; out[4 * t + 2] = 0x80000000u;
    out[4 * t + 3] = __float_as_uint(mul_ftz(a, b));
}
__global__ void k_tiny_fma(unsigned *out) {
    unsigned t = blockIdx.x * blockDim.x + threadIdx.x;  // 64 * 64 * 32
    unsigned ia = t / 2048, ib = (t / 32) % 64, dc = t % 32;
    unsigned abits = 0x3f800000u | (ia * 0x1f3d5bu & 0x7fffff);
    unsigned bbits = 0x01000000u | (ib * 0x2b9f1u & 0x7fffff);   // 2^-125 * [1,2)
    float a = __uint_as_float(abits), b = __uint_as_float(bbits);
    double p = (double)a * (double)b;
    double target = 0x1p-126;
    float c0 = __double2float_rn(target - p);                   // normal, negative
    unsigned cbits = __float_as_uint(c0) + dc - 16;
    float c = __uint_as_float(cbits), r;
    asm("fma.rn.ftz.f32 %0, %1, %2, %3;" : "=f"(r) : "f"(a), "f"(b), "f"(c));
    out[4 * t + 0] = abits; out[4 * t + 1] = bbits; out[4 * t + 2] = cbits; out[4 * t + 3] = __float_as_uint(r);
}
__global__ void k_fmaxnan(unsigned *o, const float *in) {
    float n1 = in[0], n2 = in[1], sub = in[2], z = in[3], one = in[4];
    o[0] = __float_as_uint(fmaxf(n1, n2));
    o[1] = __float_as_uint(fmaxf(n2, n1));
    o[2] = __float_as_uint(fmaxf(sub, z));
    o[3] = __float_as_uint(fmaxf(n1, one));
    o[4] = __float_as_uint(fabsf(sub));
    o[5] = __float_as_uint(fabsf(n2));
    o[6] = __float_as_uint(fminf(n2, n1));
}

static Stat *dstat;
static void reset() { CK(cudaMemset(dstat, 0, sizeof(Stat))); }
static void report(const char *name) {
    Stat h; CK(cudaDeviceSynchronize()); CK(cudaMemcpy(&h, dstat, sizeof h, cudaMemcpyDeviceToHost));
    printf("%s: mismatches=%llu", name, h.mism);
    if (h.nan_bits_first) printf(" first_nan_result=0x%08x", (unsigned)h.nan_bits_first);
    for (unsigned k = 0; k < h.mism && k < 6; k++) printf(" [in=0x%08x got=0x%08x want=0x%08x]", h.first[k][0], h.first[k][1], h.first[k][2]);
    printf("\n");
    fflush(stdout);
}

int main(int argc, char **argv) {
    const char *outdir = argc > 1 ? argv[1] : ".";
    cudaDeviceProp p; CK(cudaGetDeviceProperties(&p, 0));
    int drv = 0, rt = 0; cudaDriverGetVersion(&drv); cudaRuntimeGetVersion(&rt);
    printf("device: %s cc=%d.%d sms=%d smpb=%zu smpbo=%zu warp=%d driver=%d runtime=%d\n", p.name, p.major, p.minor,
           p.multiProcessorCount, p.sharedMemPerBlock, p.sharedMemPerBlockOptin, p.warpSize, drv, rt);
    CK(cudaMalloc(&dstat, sizeof(Stat)));
    const int T = 256, B = (1 << 24) / T;

    reset(); for (unsigned hi = 0; hi < 256; hi++) k_rcp<<<B, T>>>(dstat, hi); report("rcp_binade_scaling_all_2^32");
    // compare [1,2) with the shipped table
    if (argc > 2) {
        std::vector<unsigned char> tab(1 << 21);
        FILE *f = fopen(argv[2], "rb");
        if (!f || fread(tab.data(), 1, tab.size(), f) != tab.size()) { printf("rcp_table: cannot read %s\n", argv[2]); }
        else {
            unsigned *d; std::vector<unsigned> h(1 << 23);
            CK(cudaMalloc(&d, 4u << 23)); k_rcp_binade<<<(1 << 23) / T, T>>>(d);
            CK(cudaMemcpy(h.data(), d, 4u << 23, cudaMemcpyDeviceToHost));
            unsigned long long bad = 0;
            for (unsigned i = 0; i < (1u << 23); i++) {
                float x; unsigned xb = 0x3f800000u | i; memcpy(&x, &xb, 4);
                float r = (float)(1.0 / (double)x); unsigned rb; memcpy(&rb, &r, 4);
                int delta = (int)((tab[i >> 2] >> (2 * (i & 3))) & 3) - 1;
                if (h[i] != rb + delta) bad++;
            }
            printf("rcp_table_vs_shipped_file: mismatches=%llu of 8388608\n", bad);
            fclose(f);
        }
    }
    reset(); for (unsigned hi = 0; hi < 256; hi++) k_div127<<<B, T>>>(dstat, hi, nullptr); report("div127_vs_mul_0x3C010204_all_2^32");
    const float as[] = {1.0f, 3.0f, 0.7f, 100.0f, -5.5f, 1e-30f, 1e30f, 127.0f};
    for (float a : as) {
        reset(); for (unsigned hi = 0; hi < 256; hi++) k_div<<<B, T>>>(dstat, hi, a);
        char name[64]; snprintf(name, sizeof name, "div_a=%g_vs_mul(a,rcp(b))_all_b", a); report(name);
    }
    reset(); for (unsigned hi = 0; hi < 256; hi++) k_div127num<<<B, T>>>(dstat, hi); report("div_127_over_b_const_numerator_all_b");
    reset(); for (unsigned hi = 0; hi < 256; hi++) k_round<<<B, T>>>(dstat, hi); report("roundf_all_2^32");
    reset(); for (unsigned hi = 0; hi < 256; hi++) k_f2h<<<B, T>>>(dstat, hi); report("float2half_all_2^32(NaN->0x7fff model)");
    reset(); k_perm<<<(1 << 24) / T, T>>>(dstat, 12345u); report("byte_perm_3bit_selector_model");

    // half ops dump
    const unsigned short bs[16] = {0x0000, 0x8000, 0x0001, 0x83ff, 0x0400, 0x3c00, 0xbc00, 0x3c01, 0x3800, 0x4200, 0x7bff, 0x5140, 0x1400, 0xc4d2, 0x7c00, 0x7e00};
    const unsigned short cs[16] = {0x8001, 0x0400, 0x3c00, 0xd140, 0x3555, 0x7bff, 0x0000, 0x8000, 0x0001, 0xbc00, 0xfbff, 0x1400, 0x3c01, 0x0200, 0xfc00, 0x3c00};
    unsigned short *dbs, *dcs, *dout; size_t nout = (size_t)16 * 65536 * 5;
    CK(cudaMalloc(&dbs, sizeof bs)); CK(cudaMalloc(&dcs, sizeof cs)); CK(cudaMalloc(&dout, nout * 2));
    CK(cudaMemcpy(dbs, bs, sizeof bs, cudaMemcpyHostToDevice)); CK(cudaMemcpy(dcs, cs, sizeof cs, cudaMemcpyHostToDevice));
    k_half<<<65536 / T, T>>>(dout, dbs, dcs, 16);
    std::vector<unsigned short> hout(nout); CK(cudaMemcpy(hout.data(), dout, nout * 2, cudaMemcpyDeviceToHost));
    char path[4096]; snprintf(path, sizeof path, "%s/half_ops.bin", outdir);
    FILE *fo = fopen(path, "wb"); fwrite(hout.data(), 2, nout, fo); fclose(fo);
    unsigned *dh2f; CK(cudaMalloc(&dh2f, 4 * 65536)); k_h2f<<<65536 / T, T>>>(dh2f);
    std::vector<unsigned> h2f(65536); CK(cudaMemcpy(h2f.data(), dh2f, 4 * 65536, cudaMemcpyDeviceToHost));
    snprintf(path, sizeof path, "%s/h2f.bin", outdir);
    fo = fopen(path, "wb"); fwrite(h2f.data(), 4, 65536, fo); fclose(fo);
    printf("half_ops: wrote %zu results, h2f: 65536\n", nout);

    float in[8]; unsigned u[8] = {0x00000000u, 0x80000000u, 0x7fc00001u, 0x3f800000u, 0x7f800000u, 0x3f7fffffu, 0x00800000u, 0};
    memcpy(in, u, sizeof in);
    float *din; unsigned *dsp; CK(cudaMalloc(&din, sizeof in)); CK(cudaMalloc(&dsp, 4 * 32));
    CK(cudaMemcpy(din, in, sizeof in, cudaMemcpyHostToDevice)); k_special<<<1, 1>>>(dsp, din);
    unsigned sp[32]; CK(cudaMemcpy(sp, dsp, sizeof sp, cudaMemcpyDeviceToHost));
    printf("fmaxf(+0,-0)=0x%08x fmaxf(-0,+0)=0x%08x fmaxf(NaN,NaN)=0x%08x fminf(+0,-0)=0x%08x fminf(-0,+0)=0x%08x\n", sp[0], sp[1], sp[2], sp[3], sp[4]);
    printf("NaN+1=0x%08x inf-inf=0x%08x mul.ftz(1-2^-24,2^-126)=0x%08x fma.rn.ftz(same,-0)=0x%08x\n", sp[5], sp[6], sp[7], sp[8]);
    printf("int8/char4 of roundf(NaN,Inf,-Inf,127.5,128,200,-129,-300):");
    for (int i = 0; i < 8; i++) printf(" %d/%d", (int)(signed char)(sp[9 + i] & 0xff), (int)(signed char)((sp[9 + i] >> 8) & 0xff));
    printf("\nfloat2half(NaN 0x7fc00001)=0x%04x float2half(-NaN)=0x%04x hadd(NaN 0x7e01,1)=0x%04x hmul(0,inf)=0x%04x\n", sp[17], sp[18], sp[19], sp[20]);

    {
        const int nm = 256 * 64, nf = 64 * 64 * 32;
        unsigned *dt; CK(cudaMalloc(&dt, 16u * (nm + nf)));
        k_tiny_mul<<<nm / T, T>>>(dt); k_tiny_fma<<<nf / T, T>>>(dt + 4 * nm);
        std::vector<unsigned> ht(4 * (nm + nf)); CK(cudaMemcpy(ht.data(), dt, 16u * (nm + nf), cudaMemcpyDeviceToHost));
        snprintf(path, sizeof path, "%s/tiny.bin", outdir);
        fo = fopen(path, "wb"); fwrite(ht.data(), 4, ht.size(), fo); fclose(fo);
        printf("tiny: wrote %d mul and %d fma cases\n", nm, nf);
        unsigned un[5] = {0x7fc00001u, 0xffc00002u, 0x00000005u, 0x00000000u, 0x3f800000u};
        float *dn; unsigned *dno; CK(cudaMalloc(&dn, sizeof un)); CK(cudaMalloc(&dno, 4 * 8));
        CK(cudaMemcpy(dn, un, sizeof un, cudaMemcpyHostToDevice)); k_fmaxnan<<<1, 1>>>(dno, dn);
        unsigned o[8]; CK(cudaMemcpy(o, dno, sizeof o, cudaMemcpyDeviceToHost));
        printf("fmaxf(0x7fc00001,0xffc00002)=0x%08x fmaxf(0xffc00002,0x7fc00001)=0x%08x fmaxf(sub,0)=0x%08x fmaxf(NaN,1)=0x%08x fabsf(sub)=0x%08x fabsf(-NaN)=0x%08x fminf(NaN2,NaN1)=0x%08x\n",
               o[0], o[1], o[2], o[3], o[4], o[5], o[6]);
    }
    return 0;
}
