// Exhaustive float32 sweeps of the fast-math arithmetic package sim models, each against a
// reference computed on the device from the PTX operation the model says the compiler
// emits (ported from the project's former nvcc probe, sim/testdata/devprobe/probe.cu).
// Every kernel runs a grid-stride loop over all 2^32 bit patterns u of one operand and
// writes into one ggsim_stat:
//   mism   the number of results whose bits differ from the reference (NaN against NaN
//          counts as equal where the kernel says so),
//   nan    (1 << 32) | bits of the first NaN result seen, 0 if none,
//   ex     up to 16 (input, device, reference) triples of mismatches, numbered by ex_n.
// Compiled with NVRTC and -use_fast_math (as ggml is built) by gpu/cuda; no header.
struct ggsim_stat {
    unsigned long long mism;
    unsigned long long nan;
    unsigned int ex_n;
    unsigned int pad;
    unsigned int ex[16][3];
};

__device__ __forceinline__ float ggsim_rcp(float x) { float r; asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(x)); return r; }
__device__ __forceinline__ float ggsim_mul_ftz(float a, float b) { float r; asm("mul.ftz.f32 %0, %1, %2;" : "=f"(r) : "f"(a), "f"(b)); return r; }
__device__ __forceinline__ bool ggsim_isnan(unsigned int u) { return (u & 0x7fffffffu) > 0x7f800000u; }

// ggsim_cmp compares one result; it returns 1 for a mismatch (the caller counts).
__device__ int ggsim_cmp(ggsim_stat *s, unsigned int in, unsigned int got, unsigned int want, bool nan_any) {
    if (ggsim_isnan(got) && *(volatile unsigned long long *)&s->nan == 0)
        atomicCAS(&s->nan, 0ULL, (1ULL << 32) | got);
    if (got == want || (nan_any && ggsim_isnan(got) && ggsim_isnan(want))) return 0;
    if (*(volatile unsigned int *)&s->ex_n < 16) {
        unsigned int k = atomicAdd(&s->ex_n, 1u);
        if (k < 16) { s->ex[k][0] = in; s->ex[k][1] = got; s->ex[k][2] = want; }
    }
    return 1;
}

// sim.Rcp's model: the [1,2) result of rcp.approx.ftz.f32 for the significand, scaled
// exactly by 2^-e, flushed to the signed zero below 2^-126; a subnormal or zero input
// gives the signed Inf, Inf the signed zero, NaN 0x7fffffff.
__device__ unsigned int ggsim_model_rcp(unsigned int b) {
    unsigned int e = (b >> 23) & 0xff, sign = b & 0x80000000u;
    if (e == 0) return sign | 0x7f800000u;
    if (e == 0xff) return (b & 0x7fffff) ? 0x7fffffffu : sign;
    unsigned int r = __float_as_uint(ggsim_rcp(__uint_as_float(0x3f800000u | (b & 0x7fffff))));
    int re = (int)(r >> 23) - ((int)e - 127);
    if (re <= 0) return sign;
    return sign | ((unsigned int)re << 23) | (r & 0x7fffff);
}

#define GGSIM_SWEEP_BEGIN                                                                       \
    unsigned long long n_ = 0, stride_ = (unsigned long long)gridDim.x * blockDim.x;           \
    for (unsigned long long k_ = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;     \
         k_ < (1ULL << 32); k_ += stride_) {                                                    \
        const unsigned int u = (unsigned int)k_;
#define GGSIM_SWEEP_END                                                                         \
    }                                                                                           \
    atomicAdd(&s->mism, n_);

// rcp_all: rcp.approx.ftz.f32(x) against ggsim_model_rcp, exact bits (NaN too).
extern "C" __global__ void rcp_all(ggsim_stat *s) {
    GGSIM_SWEEP_BEGIN
    n_ += ggsim_cmp(s, u, __float_as_uint(ggsim_rcp(__uint_as_float(u))), ggsim_model_rcp(u), false);
    GGSIM_SWEEP_END
}

// div127_all: x / 127.0f as -use_fast_math compiles it, against mul.ftz(x, 0x3C010204)
// (sim.Div127). NaN against NaN is equal.
extern "C" __global__ void div127_all(ggsim_stat *s) {
    GGSIM_SWEEP_BEGIN
    const float x = __uint_as_float(u);
    n_ += ggsim_cmp(s, u, __float_as_uint(x / 127.0f), __float_as_uint(ggsim_mul_ftz(x, __uint_as_float(0x3C010204u))), true);
    GGSIM_SWEEP_END
}

// div_all: a / b for a run-time numerator a and every b, against mul.ftz(a, rcp(b))
// (sim.Div). NaN against NaN is equal.
extern "C" __global__ void div_all(ggsim_stat *s, float a) {
    GGSIM_SWEEP_BEGIN
    const float y = __uint_as_float(u);
    n_ += ggsim_cmp(s, u, __float_as_uint(a / y), __float_as_uint(ggsim_mul_ftz(a, ggsim_rcp(y))), true);
    GGSIM_SWEEP_END
}

// div127num_all: 127.0f / b with the constant numerator (quantize_mmq_q8_1's d_inv),
// every b, against mul.ftz(127, rcp(b)).
extern "C" __global__ void div127num_all(ggsim_stat *s) {
    GGSIM_SWEEP_BEGIN
    const float y = __uint_as_float(u);
    n_ += ggsim_cmp(s, u, __float_as_uint(127.0f / y), __float_as_uint(ggsim_mul_ftz(127.0f, ggsim_rcp(y))), true);
    GGSIM_SWEEP_END
}
