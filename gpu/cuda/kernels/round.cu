// roundf and float -> int8 as ggml's activation quantizers write them, compiled with
// the module's options (-use_fast_math, as ggml is built):
//   quantize_q8_1:     const int8_t q = amax == 0.0f ? 0 : roundf(xi / d);
//   quantize_mmq_q8_1: char4 q; q.x = roundf(xi.x*d_inv);
// int8_t is signed char and char4's members are signed char; no header is needed.
struct __align__(4) ggsim_char4 { signed char x, y, z, w; };

extern "C" __global__ void round_i8(const float *x, unsigned int n, float *r, signed char *q8, signed char *q4) {
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const float v = x[i];
    r[i] = roundf(v);
    const signed char q = roundf(v);
    q8[i] = q;
    ggsim_char4 c;
    c.x = roundf(v);
    c.y = 0; c.z = 0; c.w = 0;
    q4[i] = c.x;
}

// round_all sweeps every float32 bit pattern u in [start, start+count) and compares the
// device's roundf(x) and (signed char) roundf(x) with integer-only references:
//   counts[0]: roundf bits differ from round-half-away-from-zero (NaN: both NaN is equal)
//   counts[1]: int8 differs from H_sat8  (NaN -> 0, saturate to [-128, 127])
//   counts[2]: int8 differs from H_wrap16 (NaN -> 0, saturate to [-32768, 32767], low byte)
//   counts[3]: int8 differs from H_wrap32 (NaN -> 0, saturate to int32, low byte)
// and records up to 64 examples (u, device roundf bits, device int8) of counts[0] or
// counts[1] mismatches in ex[4*k ..], numbered by ex_n.
__device__ unsigned int ggsim_ref_roundf(unsigned int u) {
    unsigned int e = (u >> 23) & 0xff;
    if (e >= 150) return u;                   // |x| >= 2^23, Inf, NaN: integral already
    if (e < 126) return u & 0x80000000u;      // |x| < 0.5: +-0
    unsigned int sh = 150 - e;                // 1..24 fraction bits
    unsigned int m = (u & 0x7fffffu) | 0x800000u;
    unsigned int v = (m + (1u << (sh - 1))) >> sh; // integer value, half away from zero
    // v <= 2^23 is exactly representable: build its bits without float arithmetic.
    if (v == 0) return u & 0x80000000u;
    unsigned int ex = 31 - __clz(v);               // v in [2^ex, 2^(ex+1)), ex <= 23
    unsigned int mant = (v ^ (1u << ex)) << (23 - ex); // drop the leading one
    return (u & 0x80000000u) | ((ex + 127) << 23) | mant;
}

__device__ long long ggsim_ref_int(unsigned int u, int *isnan_) {
    unsigned int e = (u >> 23) & 0xff;
    *isnan_ = (e == 0xff && (u & 0x7fffffu) != 0);
    int neg = (u >> 31) != 0;
    if (e == 0xff) return neg ? -(1LL << 40) : (1LL << 40); // Inf: far out of every range
    if (e < 126) return 0;
    if (e >= 150 + 17) return neg ? -(1LL << 40) : (1LL << 40); // |x| >= 2^40
    unsigned long long m = (u & 0x7fffffu) | 0x800000u;
    long long v;
    if (e >= 150) v = (long long)(m << (e - 150));
    else { unsigned int sh = 150 - e; v = (long long)((m + (1ull << (sh - 1))) >> sh); }
    return neg ? -v : v;
}

__device__ signed char ggsim_sat(long long v, long long lo, long long hi) {
    if (v < lo) v = lo;
    if (v > hi) v = hi;
    return (signed char)(unsigned char)(v & 0xff);
}

extern "C" __global__ void round_all(unsigned long long start, unsigned long long count,
                                     unsigned long long *counts, unsigned int *ex, unsigned int *ex_n) {
    // Per-thread counts, added once at the end: mismatches may number in the billions.
    unsigned long long c0 = 0, c1 = 0, c2 = 0, c3 = 0;
    unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
    for (unsigned long long k = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; k < count; k += stride) {
        unsigned int u = (unsigned int)(start + k);
        const float v = __uint_as_float(u);
        const float r = roundf(v);
        const signed char q = roundf(v);
        unsigned int rb = __float_as_uint(r);
        unsigned int want = ggsim_ref_roundf(u);
        int nan_;
        long long iv = ggsim_ref_int(u, &nan_);
        int bad0 = nan_ ? !(((rb >> 23) & 0xff) == 0xff && (rb & 0x7fffffu) != 0) : (rb != want);
        signed char s8 = nan_ ? 0 : ggsim_sat(iv, -128, 127);
        signed char w16 = nan_ ? 0 : ggsim_sat(iv, -32768, 32767);
        signed char w32 = nan_ ? 0 : ggsim_sat(iv, -2147483648LL, 2147483647LL);
        int bad1 = q != s8;
        c0 += bad0;
        c1 += bad1;
        c2 += q != w16;
        c3 += q != w32;
        // Examples: only while fewer than 64 are recorded (a plain read first, so that
        // billions of mismatches do not all hit the counter).
        if ((bad0 || bad1) && *(volatile unsigned int *)ex_n < 64) {
            unsigned int slot = atomicAdd(ex_n, 1u);
            if (slot < 64) {
                ex[4 * slot + 0] = u;
                ex[4 * slot + 1] = rb;
                ex[4 * slot + 2] = (unsigned int)(int)q;
                ex[4 * slot + 3] = (unsigned int)bad0 | ((unsigned int)bad1 << 1);
            }
        }
    }
    atomicAdd(&counts[0], c0);
    atomicAdd(&counts[1], c1);
    atomicAdd(&counts[2], c2);
    atomicAdd(&counts[3], c3);
}
