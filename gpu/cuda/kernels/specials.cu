// Single operations on special values, and __byte_perm, whose results gpu/cuda compares
// with package sim's model on the host (ported from the project's former nvcc probe,
// sim/testdata/devprobe/probe.cu). No header.

// float_specials: in[] holds values the compiler cannot fold:
//   in[0] +0, in[1] -0, in[2] NaN 0x7fc00001, in[3] 1, in[4] +Inf, in[5] 1-2^-24,
//   in[6] 2^-126, in[7] NaN 0xffc00002, in[8] the subnormal 0x00000005, in[9] NaN 0x7fc00001
//   again (fmaxf(n1, n1) of one register is folded to n1 by NVVM: the PTX of 2026-12-02
//   had no max.f32 for it, so the device gave n1's payload; two loads keep the max).
// o[k] is the bits of the k-th expression below (FloatSpecials in specials.go names them).
extern "C" __global__ void float_specials(unsigned int *o, const float *in) {
    float pz = in[0], nz = in[1], n1 = in[2], one = in[3], inf = in[4], t1 = in[5], t2 = in[6], n2 = in[7], sub = in[8], n1b = in[9];
    float f;
    o[0] = __float_as_uint(fmaxf(pz, nz));
    o[1] = __float_as_uint(fmaxf(nz, pz));
    o[2] = __float_as_uint(fmaxf(n1, n1b));
    o[3] = __float_as_uint(fminf(pz, nz));
    o[4] = __float_as_uint(fminf(nz, pz));
    o[5] = __float_as_uint(n1 + one);
    o[6] = __float_as_uint(inf - inf);
    // (1-2^-24)*2^-126 = 2^-126 - 2^-150: with gradual underflow a tie that rounds to
    // 2^-126 (normal); rounded to 24 bits first it stays below 2^-126 and is flushed (sim).
    asm("mul.ftz.f32 %0, %1, %2;" : "=f"(f) : "f"(t1), "f"(t2));
    o[7] = __float_as_uint(f);
    asm("fma.rn.ftz.f32 %0, %1, %2, %3;" : "=f"(f) : "f"(t1), "f"(t2), "f"(nz));
    o[8] = __float_as_uint(f);
    o[9] = __float_as_uint(fmaxf(n1, n2));
    o[10] = __float_as_uint(fmaxf(n2, n1));
    o[11] = __float_as_uint(fmaxf(sub, pz));
    o[12] = __float_as_uint(fmaxf(n1, one));
    o[13] = __float_as_uint(fabsf(sub));
    o[14] = __float_as_uint(fabsf(n2));
    o[15] = __float_as_uint(fminf(n2, n1));
    o[16] = __float_as_uint(fminf(n1, n2));
}

// byte_perm_list: out[i] = __byte_perm(x[i], y[i], s[i]).
extern "C" __global__ void byte_perm_list(const unsigned int *x, const unsigned int *y, const unsigned int *s,
                                          unsigned int n, unsigned int *out) {
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    out[i] = __byte_perm(x[i], y[i], s[i]);
}
