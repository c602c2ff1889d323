// binary16 scalar arithmetic and conversions through cuda_fp16.h, as ggml writes them
// (ported from the project's former nvcc probe, sim/testdata/devprobe/probe.cu). Needs
// cuda_fp16.h (gpu/cuda passes the CUDA include directory to NVRTC).
#include <cuda_fp16.h>

// half_ops: for every half a (65536 threads) and each j < nb, with b = bs[j], c = cs[j],
// writes out[(j*65536 + a)*5 + k] for k = __hadd(a,b), __hsub(a,b), __hmul(a,b),
// __hfma(a,b,c) and the high half of __hmul2({a,b}, {b,c}), i.e. b*c through half2.
extern "C" __global__ void half_ops(unsigned short *out, const unsigned short *bs, const unsigned short *cs, int nb) {
    unsigned int a = blockIdx.x * blockDim.x + threadIdx.x;
    if (a >= 65536) return;
    for (int j = 0; j < nb; j++) {
        __half ha = __ushort_as_half((unsigned short)a), hb = __ushort_as_half(bs[j]), hc = __ushort_as_half(cs[j]);
        size_t base = ((size_t)j * 65536 + a) * 5;
        out[base + 0] = __half_as_ushort(__hadd(ha, hb));
        out[base + 1] = __half_as_ushort(__hsub(ha, hb));
        out[base + 2] = __half_as_ushort(__hmul(ha, hb));
        out[base + 3] = __half_as_ushort(__hfma(ha, hb, hc));
        __half2 p = __hmul2(__halves2half2(ha, hb), __halves2half2(hb, hc)); // {a*b, b*c}
        out[base + 4] = __half_as_ushort(__high2half(p));
    }
}

// h2f_all: out[h] = bits of __half2float(h) for every half h.
extern "C" __global__ void h2f_all(unsigned int *out) {
    unsigned int a = blockIdx.x * blockDim.x + threadIdx.x;
    if (a >= 65536) return;
    out[a] = __float_as_uint(__half2float(__ushort_as_half((unsigned short)a)));
}

// half_specials: o[0] = __float2half(in[0]), o[1] = __float2half(-in[0]) (in[0] a NaN),
// o[2] = __hadd(NaN 0x7e01, 1), o[3] = __hmul(0, __float2half(in[1])) (in[1] = +Inf).
extern "C" __global__ void half_specials(unsigned short *o, const float *in) {
    o[0] = __half_as_ushort(__float2half(in[0]));
    o[1] = __half_as_ushort(__float2half(-in[0]));
    o[2] = __half_as_ushort(__hadd(__ushort_as_half(0x7e01), __ushort_as_half(0x3c00)));
    o[3] = __half_as_ushort(__hmul(__ushort_as_half(0x0000), __float2half(in[1])));
}

// f2h_all: __float2half (cvt.rn.f16.f32) of every float32 against round to nearest even
// with binary16 subnormals, overflow to Inf and every NaN -> 0x7fff (sim.F2H). The
// statistics block is the one of sweep.cu.
struct ggsim_stat {
    unsigned long long mism;
    unsigned long long nan;
    unsigned int ex_n;
    unsigned int pad;
    unsigned int ex[16][3];
};

__device__ unsigned short ggsim_model_f2h(unsigned int f) {
    unsigned short sign = (f >> 16) & 0x8000;
    int exp = (f >> 23) & 0xff;
    unsigned long long man = f & 0x7fffff;
    if (exp == 0xff) return man ? 0x7fff : (sign | 0x7c00);
    unsigned long long m;
    int e;
    if (exp == 0) { m = man; e = -149; } else { m = man | (1u << 23); e = exp - 150; }
    if (m == 0) return sign;
    int msb = 63 - __clzll(m) + e;
    int q = msb - 10;
    if (q < -24) q = -24;
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

extern "C" __global__ void f2h_all(ggsim_stat *s) {
    unsigned long long n_ = 0, stride = (unsigned long long)gridDim.x * blockDim.x;
    for (unsigned long long k = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; k < (1ULL << 32); k += stride) {
        const unsigned int u = (unsigned int)k;
        unsigned short got = __half_as_ushort(__float2half(__uint_as_float(u)));
        unsigned short want = ggsim_model_f2h(u);
        if (got == want) continue;
        n_++;
        if (*(volatile unsigned int *)&s->ex_n < 16) {
            unsigned int j = atomicAdd(&s->ex_n, 1u);
            if (j < 16) { s->ex[j][0] = u; s->ex[j][1] = got; s->ex[j][2] = want; }
        }
    }
    atomicAdd(&s->mism, n_);
}
