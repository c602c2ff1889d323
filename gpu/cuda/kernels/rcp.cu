// MUFU.RCP probes: rcp.approx.ftz.f32 through inline PTX, and how -use_fast_math
// compiles a float division. Compiled by gpu/cuda with NVRTC for the device at hand.

// rcp_binade: out[i] = bits of rcp.approx.ftz.f32(x), x = float with bits base | i,
// for i < n (base holds the sign and exponent, i the mantissa).
extern "C" __global__ void rcp_binade(unsigned int base, unsigned int n, unsigned int *out) {
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float x = __uint_as_float(base | i);
    float r;
    asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(x));
    out[i] = __float_as_uint(r);
}

// rcp_list: out[i] = bits of rcp.approx.ftz.f32 of the float with bits in[i].
extern "C" __global__ void rcp_list(const unsigned int *in, unsigned int n, unsigned int *out) {
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float r;
    asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(__uint_as_float(in[i])));
    out[i] = __float_as_uint(r);
}

// div_pairs: q[i] = a[i] / b[i] as the compiler builds it under the module's options
// (-use_fast_math), and m[i] = a[i] * rcp.approx.ftz(b[i]) with one FTZ multiply, for
// comparison.
extern "C" __global__ void div_pairs(const float *a, const float *b, unsigned int n, float *q, float *m) {
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float x = a[i], y = b[i];
    q[i] = x / y;
    float r, p;
    asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(y));
    asm("mul.rn.ftz.f32 %0, %1, %2;" : "=f"(p) : "f"(x), "f"(r));
    m[i] = p;
}

// div_127: the two divisions by and of the constant 127 in ggml's activation quantizers:
// d = amax / 127.0f (quantize_q8_1) and d_inv = 127.0f / amax (quantize_mmq_q8_1).
extern "C" __global__ void div_127(const float *a, unsigned int n, float *over127, float *into127) {
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float x = a[i];
    over127[i] = x / 127.0f;
    into127[i] = 127.0f / x;
}
