// FTZ near 2^-126: mul.ftz.f32 and fma.rn.ftz.f32 whose exact result is just below or
// just above the smallest normal (ported from the project's former nvcc probe,
// sim/testdata/devprobe/probe.cu; the same 147,456 cases). Each thread writes one
// (a, b, c, result) quadruple of bits; the host decides which flush model they follow
// (package sim's TestDeviceProbeTiny reads them as tiny.bin). No header.

// tiny_mul: 256*64 threads. For k < 256, b = 2^-126 * (1 + k*2^-23) and a one of the 64
// float32 next to 1/(1 + k*2^-23) (below 1), so a*b lies next to 2^-126. c is -0.
extern "C" __global__ void tiny_mul(unsigned int *out) {
    unsigned int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= 256 * 64) return;
    unsigned int k = t / 64, d = t % 64;
    double inv = 1.0 / (1.0 + k / 8388608.0); // k * 2^-23
    unsigned int ab = __float_as_uint((float)inv) - 32 + d;
    if (ab > 0x3f7fffffu) ab = 0x3f7fffffu - (ab - 0x3f7fffffu);
    float a = __uint_as_float(ab), b = __uint_as_float(0x00800000u | k), r;
    asm("mul.ftz.f32 %0, %1, %2;" : "=f"(r) : "f"(a), "f"(b));
    out[4 * t + 0] = ab;
    out[4 * t + 1] = 0x00800000u | k;
    out[4 * t + 2] = 0x80000000u;
    out[4 * t + 3] = __float_as_uint(r);
}

// tiny_fma: 64*64*32 threads. a in [1,2), b in 2^-125*[1,2), and c one of the 32 float32
// around RN(2^-126 - a*b), so that a*b + c lies next to 2^-126.
extern "C" __global__ void tiny_fma(unsigned int *out) {
    unsigned int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= 64 * 64 * 32) return;
    unsigned int ia = t / 2048, ib = (t / 32) % 64, dc = t % 32;
    unsigned int abits = 0x3f800000u | (ia * 0x1f3d5bu & 0x7fffff);
    unsigned int bbits = 0x01000000u | (ib * 0x2b9f1u & 0x7fffff);
    float a = __uint_as_float(abits), b = __uint_as_float(bbits);
    double p = (double)a * (double)b;
    float c0 = __double2float_rn(__longlong_as_double(0x3810000000000000LL) - p); // 2^-126 - a*b
    unsigned int cbits = __float_as_uint(c0) + dc - 16;
    float c = __uint_as_float(cbits), r;
    asm("fma.rn.ftz.f32 %0, %1, %2, %3;" : "=f"(r) : "f"(a), "f"(b), "f"(c));
    out[4 * t + 0] = abits;
    out[4 * t + 1] = bbits;
    out[4 * t + 2] = cbits;
    out[4 * t + 3] = __float_as_uint(r);
}
