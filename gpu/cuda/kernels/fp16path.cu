// The GP100 fp16 matrix-vector path (seed note 002, "patch 0007"), as package fp16path
// specifies it: a line-by-line mirror of fp16path/activations.go (fp16_convert_block:
// ConvertActivations, prescaleExp), fp16path/unpack.go (load_*: the loaders; the PRMT
// unpack), fp16path/fp16path.go (fp16_partials, fp16_reduce, fp16_mmv: lanePartials,
// groupTerm, MulMat), fp16path/glu.go (fp16_mmv_glu: MulMatSwiGLU) and fp16path/norm.go
// (fp16_rmsnorm_convert: RMSNormMul, SumSquares). Each function names its Go twin; change
// both together. Compiled with NVRTC and -use_fast_math for the GPU at hand (CUDA 13
// cannot target sm_60; half2 FMA is the same IEEE binary16 arithmetic on sm_90). No
// header: the path's float and half operations are inline PTX, so the instructions are
// the ones the simulator models whatever the compiler does (mul/add/fma .rn.ftz.f32 =
// sim.Mul/Add/FMA, fma.rn.f16x2 = f16.FMA2 without .ftz, cvt.rn.f16.f32 = sim.F2H,
// cvt.f32.f16 = sim.H2F) and no multiply and add can be contracted. Only the ggml code the
// fused epilogues copy (silu's expf and division, rms_norm's division and rsqrtf) is plain
// C, compiled as ggml's -use_fast_math build compiles it.

typedef unsigned char u8;
typedef unsigned short u16;
typedef unsigned int u32;

// fp16path.EMin, fp16path.EMax.
#define FP16_EMIN (-103)
#define FP16_EMAX 127
// 2^-24 (exact in decimal; no hexadecimal float literal before C++17).
#define FP16_2M24 5.9604644775390625e-08f
// The most columns a launch takes (the multi-column kernels: 2..8).
#define FP16_MAXCOLS 8

// Type ids (the host passes one; gpu/cuda/fp16path.go lists them in the same order as
// fp16path.Types()).
#define T_Q4_K 0
#define T_Q5_K 1
#define T_Q6_K 2
#define T_Q3_K 3
#define T_IQ4_XS 4
#define T_IQ4_NL 5
#define T_Q8_0 6

__device__ __forceinline__ float fmul(float a, float b) { float r; asm("mul.rn.ftz.f32 %0, %1, %2;" : "=f"(r) : "f"(a), "f"(b)); return r; }
__device__ __forceinline__ float fadd(float a, float b) { float r; asm("add.rn.ftz.f32 %0, %1, %2;" : "=f"(r) : "f"(a), "f"(b)); return r; }
__device__ __forceinline__ float ffma(float a, float b, float c) { float r; asm("fma.rn.ftz.f32 %0, %1, %2, %3;" : "=f"(r) : "f"(a), "f"(b), "f"(c)); return r; }
__device__ __forceinline__ float fneg(float a) { float r; asm("neg.ftz.f32 %0, %1;" : "=f"(r) : "f"(a)); return r; }
__device__ __forceinline__ float h2f(u16 h) { float r; asm("cvt.f32.f16 %0, %1;" : "=f"(r) : "h"(h)); return r; }
__device__ __forceinline__ u16 f2h(float f) { u16 r; asm("cvt.rn.f16.f32 %0, %1;" : "=h"(r) : "f"(f)); return r; }
__device__ __forceinline__ u32 hfma2(u32 a, u32 b, u32 c) { u32 r; asm("fma.rn.f16x2 %0, %1, %2, %3;" : "=r"(r) : "r"(a), "r"(b), "r"(c)); return r; }
__device__ __forceinline__ u32 prmt(u32 a, u32 b, u32 s) { u32 r; asm("prmt.b32 %0, %1, %2, %3;" : "=r"(r) : "r"(a), "r"(b), "r"(s)); return r; }

// pow2 (activations.go): 2^e as a float32, e in [-126, 127].
__device__ __forceinline__ float pow2(int e) { return __int_as_float((e + 127) << 23); }

__device__ __forceinline__ u16 le16(const u8 *p) { return (u16)(p[0] | (p[1] << 8)); }

// ---------------------------------------------------------------------------------------
// Step 1: ConvertActivations (activations.go). One warp per 32-value block: lane i holds
// y_{32b+i}. Column c of M is y[c*K ...]; its halves go to H[c*K ...], its exponents to
// E[c*K/32 ...], its sums to S16[c*K/16 ...]. *err gets 1 + the flat index of the first
// NaN/Inf activation seen (any), or -(1 + block) for a block that needs e_b < EMin (the Go
// side returns an error for both; the tests do not generate them).

// halfFixed returns h·2^24 as an exact integer (|h| < 2^16, a multiple of 2^-24).
__device__ __forceinline__ long long halfFixed(u16 h) {
    int e = (h >> 10) & 0x1f, m = h & 0x3ff;
    long long v = e == 0 ? (long long)m : ((long long)(m | 0x400) << (e - 1));
    return (h & 0x8000) ? -v : v;
}

// fp16_convert_block converts block b of one column (ConvertActivations' loop body and
// prescaleExp): v is the lane's value y_{32b+lane}; the block's half, exponent and two
// sums go to h[32b+lane], e[b], s16[2b], s16[2b+1]. All 32 lanes of the warp call it.
// *err as fp16_convert says (block index bi for the message).
__device__ __forceinline__ void fp16_convert_block(float v, int b, int flat, int bi, u16 *h, int *e_out, float *s16, int *err) {
    const int lane = threadIdx.x & 31;
    const u32 vb = __float_as_uint(v);
    if ((vb & 0x7f800000u) == 0x7f800000u) atomicCAS(err, 0, 1 + flat); // v != v || IsInf(v)
    // amax = FMaxf(amax, Abs(v)) over the block: Abs flushes subnormals (FTZ) and clears
    // the sign; for non-negative floats the integer order of the bits is the value order.
    u32 a = vb & 0x7fffffffu;
    if (a < 0x00800000u) a = 0;
    for (int off = 16; off > 0; off >>= 1) a = max(a, __shfl_xor_sync(0xffffffffu, a, off));
    // prescaleExp(amax)
    int e;
    if (a == 0) {
        e = 0;
    } else {
        e = 14 - ((int)(a >> 23) - 127); // frexp exponent x: amax in [2^(x-1), 2^x)
        if (e > FP16_EMAX) {
            e = FP16_EMAX;
        } else {
            if (f2h(fmul(__uint_as_float(a), pow2(e))) == 0x7800) e--; // rounds to 2^15
            if (e < FP16_EMIN) {
                if (lane == 0) atomicCAS(err, 0, -(1 + bi));
                e = FP16_EMIN; // keep pow2 in range; the result is refused anyway
            }
        }
    }
    if (lane == 0) e_out[b] = e;
    const u16 hv = f2h(fmul(v, pow2(e))); // a.H[32*b+i] = F2H(Mul(v, s))
    h[32 * b + lane] = hv;
    // Sum16: the exact sum of 16 halves (integers h·2^24, |sum| < 2^44), rounded once
    // (cvt.rn.f32.s64) and scaled back by 2^-24 (exact); lanes 0..15 hold group 2b, lanes
    // 16..31 group 2b+1.
    long long s = halfFixed(hv);
    for (int off = 8; off > 0; off >>= 1) s += __shfl_xor_sync(0xffffffffu, s, off);
    if ((lane & 15) == 0) s16[2 * b + (lane >> 4)] = fmul(__ll2float_rn(s), FP16_2M24);
}

extern "C" __global__ void fp16_convert(const float *y, int K, int M, u16 *H, int *E, float *S16, int *err) {
    const int lane = threadIdx.x & 31;
    const int w = (blockIdx.x * blockDim.x + threadIdx.x) >> 5; // global warp = (column, block)
    const int nb = K / 32;
    if (w >= M * nb) return; // whole warps only: blockDim.x is a multiple of 32
    const int col = w / nb, b = w % nb;
    fp16_convert_block(y[col * K + 32 * b + lane], b, col * K + 32 * b + lane, w, H + (size_t)col * K, E + (size_t)col * nb,
                       S16 + (size_t)col * (K / 16), err);
}

// ---------------------------------------------------------------------------------------
// Step 2: the weights of one 16-value group j of a block (unpack.go: loadQ4_K ...): the 16
// unsigned codes packed four to a word (c0 | c1<<8 | c2<<16 | c3<<24, as unpack reads
// them), the scale D and Mmin (0 for the offset types).

struct fp16_group {
    u32 w[4];
    float d, m;
};

__device__ __forceinline__ void putCode(fp16_group &g, int k, u32 c) { g.w[k >> 2] |= (c & 0xff) << (8 * (k & 3)); }

// getScaleMinK4 (quant.BlockQ4_K.ScaleMin): get_scale_min_k4 of ggml.
__device__ __forceinline__ void scaleMinK4(int j, const u8 *q, int &sc, int &m) {
    if (j < 4) {
        sc = q[j] & 63;
        m = q[j + 4] & 63;
    } else {
        sc = (q[j + 4] & 0xF) | ((q[j - 4] >> 6) << 4);
        m = (q[j + 4] >> 4) | ((q[j] >> 6) << 4);
    }
}

// loadQ4_K: d, dmin at 0, 2; scales[12] at 4; qs[128] at 16. Value i: c, h, l = i/64,
// (i%64)/32, i%32; q = qs[32c+l] >> 4h & 15 (quant.BlockQ4_K.Q).
__device__ __forceinline__ void load_q4_K(const u8 *b, int j, fp16_group &g) {
    int sc, m;
    scaleMinK4(j / 2, b + 4, sc, m);
    g.d = fmul(h2f(le16(b)), (float)sc);
    g.m = fmul(h2f(le16(b + 2)), (float)m);
    for (int k = 0; k < 16; k++) {
        const int i = 16 * j + k, c = i / 64, h = (i % 64) / 32, l = i % 32;
        putCode(g, k, (b[16 + 32 * c + l] >> (4 * h)) & 0xF);
    }
}

// loadQ5_K: as Q4_K with qh[32] at 16, qs[128] at 48; fifth bit qh[l] >> (2c+h)
// (quant.BlockQ5_K.Q).
__device__ __forceinline__ void load_q5_K(const u8 *b, int j, fp16_group &g) {
    int sc, m;
    scaleMinK4(j / 2, b + 4, sc, m);
    g.d = fmul(h2f(le16(b)), (float)sc);
    g.m = fmul(h2f(le16(b + 2)), (float)m);
    for (int k = 0; k < 16; k++) {
        const int i = 16 * j + k, c = i / 64, h = (i % 64) / 32, l = i % 32;
        const u32 lo = (b[48 + 32 * c + l] >> (4 * h)) & 0xF;
        const u32 hi = (b[16 + l] >> (2 * c + h)) & 1;
        putCode(g, k, lo | (hi << 4));
    }
}

// loadQ6_K: ql[128] at 0, qh[64] at 128, scales[16] (int8) at 192, d at 208; code q+32 =
// the unsigned 6-bit value (quant.BlockQ6_K.Q: n, r = i/128, i%128; g, l = r/32, r%32).
__device__ __forceinline__ void load_q6_K(const u8 *b, int j, fp16_group &g) {
    g.d = fmul(h2f(le16(b + 208)), (float)(signed char)b[192 + j]);
    g.m = 0.0f;
    for (int k = 0; k < 16; k++) {
        const int i = 16 * j + k, n = i / 128, r = i % 128, q = r / 32, l = r % 32;
        const u8 *ql = b + 64 * n, *qh = b + 128 + 32 * n;
        const u32 lo = (q & 1 ? ql[l + 32] : ql[l]) >> (q & 2 ? 4 : 0) & 0xF;
        const u32 hi = (qh[l] >> (2 * q)) & 3;
        putCode(g, k, lo | (hi << 4));
    }
}

// loadQ3_K: hmask[32] at 0, qs[64] at 32, scales[12] at 96, d at 108; code q+4 = the two
// low bits plus 4·(hmask bit) (quant.BlockQ3_K.Q, .Scale).
__device__ __forceinline__ void load_q3_K(const u8 *b, int j, fp16_group &g) {
    const u8 *sc = b + 96;
    const u32 lo = j < 8 ? sc[j] & 0xF : sc[j - 8] >> 4;
    const u32 hi = (sc[8 + j % 4] >> (2 * (j / 4))) & 3;
    g.d = fmul(h2f(le16(b + 108)), (float)((int)(lo | (hi << 4)) - 32));
    g.m = 0.0f;
    for (int k = 0; k < 16; k++) {
        const int i = 16 * j + k, n = i / 128, jj = (i % 128) / 32, l = i % 32;
        const u32 q = (b[32 + 32 * n + l] >> (2 * jj)) & 3;
        const u32 hb = (b[l] >> (4 * n + jj)) & 1;
        putCode(g, k, q + 4 * hb);
    }
}

// kvalues_iq4nl + 128 (quant.KValuesIQ4NL).
__constant__ u8 fp16_kv128[16] = {
    (u8)(-127 + 128), (u8)(-104 + 128), (u8)(-83 + 128), (u8)(-65 + 128),
    (u8)(-49 + 128), (u8)(-35 + 128), (u8)(-22 + 128), (u8)(-10 + 128),
    (u8)(1 + 128), (u8)(13 + 128), (u8)(25 + 128), (u8)(38 + 128),
    (u8)(53 + 128), (u8)(69 + 128), (u8)(89 + 128), (u8)(113 + 128)};

// loadIQ4_XS: d at 0, scales_h at 2, scales_l[4] at 4, qs[128] at 8; D = d·(ls-32)
// (quant.BlockIQ4_XS.Ls, .Code).
__device__ __forceinline__ void load_iq4_xs(const u8 *b, int j, fp16_group &g) {
    const int ib = j / 2;
    const int ls = ((b[4 + ib / 2] >> (4 * (ib % 2))) & 0xF) | (((le16(b + 2) >> (2 * ib)) & 3) << 4);
    g.d = fmul(h2f(le16(b)), (float)(ls - 32));
    g.m = 0.0f;
    for (int k = 0; k < 16; k++) {
        const int i = 16 * j + k, jb = i / 32, jj = i % 32;
        putCode(g, k, fp16_kv128[(b[8 + 16 * jb + jj % 16] >> (4 * (jj / 16))) & 0xF]);
    }
}

// loadIQ4_NL: d at 0, qs[16] at 2; group j takes nibble j of every byte.
__device__ __forceinline__ void load_iq4_nl(const u8 *b, int j, fp16_group &g) {
    g.d = h2f(le16(b));
    g.m = 0.0f;
    for (int k = 0; k < 16; k++) putCode(g, k, fp16_kv128[(b[2 + k] >> (4 * j)) & 0xF]);
}

// loadQ8_0: d at 0, qs[32] at 2; code = byte xor 0x80 = q+128.
__device__ __forceinline__ void load_q8_0(const u8 *b, int j, fp16_group &g) {
    g.d = h2f(le16(b));
    g.m = 0.0f;
    for (int k = 0; k < 16; k++) putCode(g, k, b[2 + 16 * j + k] ^ 0x80);
}

// The kernel table (unpack.go: kernels): values per block, bytes per block, offset, min.
template <int T> struct fp16_type;
template <> struct fp16_type<T_Q4_K> { enum { qk = 256, bs = 144, off = 0, min = 1 }; };
template <> struct fp16_type<T_Q5_K> { enum { qk = 256, bs = 176, off = 0, min = 1 }; };
template <> struct fp16_type<T_Q6_K> { enum { qk = 256, bs = 210, off = 32, min = 0 }; };
template <> struct fp16_type<T_Q3_K> { enum { qk = 256, bs = 110, off = 4, min = 0 }; };
template <> struct fp16_type<T_IQ4_XS> { enum { qk = 256, bs = 136, off = 128, min = 0 }; };
template <> struct fp16_type<T_IQ4_NL> { enum { qk = 32, bs = 18, off = 128, min = 0 }; };
template <> struct fp16_type<T_Q8_0> { enum { qk = 32, bs = 34, off = 128, min = 0 }; };

template <int T> __device__ __forceinline__ void load_group(const u8 *b, int j, fp16_group &g) {
    g.w[0] = g.w[1] = g.w[2] = g.w[3] = 0;
    switch (T) {
    case T_Q4_K: load_q4_K(b, j, g); break;
    case T_Q5_K: load_q5_K(b, j, g); break;
    case T_Q6_K: load_q6_K(b, j, g); break;
    case T_Q3_K: load_q3_K(b, j, g); break;
    case T_IQ4_XS: load_iq4_xs(b, j, g); break;
    case T_IQ4_NL: load_iq4_nl(b, j, g); break;
    default: load_q8_0(b, j, g); break;
    }
}

// ---------------------------------------------------------------------------------------
// Steps 3 and 4 (fp16path.go: MulMat, lanePartials, groupTerm). A warp computes R rows
// (rowsPerWarp = Options.RowsPerWarpFor(N)), L = 32/R lanes each: lane l of row i takes
// the groups g = l, l+L, ... in ascending order; for each, the weights are loaded and
// unpacked once and used for every column c < M. Each column's partials are summed by the
// xor butterfly of width L (sim.ReduceSumTree) and lane 0 of the row writes the output.

// fp16_partials is lanePartials for lane l of L of one row xr (row < N): part[c] for c < M.
template <int T>
__device__ __forceinline__ void fp16_partials(const u8 *xr, int K, int l, int L, const u32 *H2, const int *E,
                                              const float *S16, int M, float part[FP16_MAXCOLS]) {
    typedef fp16_type<T> ty;
    const int ng = K / 16, gpb = ty::qk / 16;
    for (int g = l; g < ng; g += L) {
        fp16_group gr;
        load_group<T>(xr + (g / gpb) * ty::bs, g % gpb, gr);
        // unpack: __byte_perm(w, 0, 0x4140) = c0 | c1<<16, 0x4342 = c2 | c3<<16.
        u32 w[8];
        for (int i = 0; i < 4; i++) {
            w[2 * i] = prmt(gr.w[i], 0, 0x4140);
            w[2 * i + 1] = prmt(gr.w[i], 0, 0x4342);
        }
#pragma unroll
        for (int c = 0; c < FP16_MAXCOLS; c++) {
            if (c >= M) break;
            // groupTerm: HalfDot (halfDotCodes), then the float32 epilogue.
            const u32 *y2 = H2 + (size_t)c * (K / 2) + 8 * g;
            u32 acc = 0; // (+0, +0)
            for (int p = 0; p < 8; p++) acc = hfma2(w[p], y2[p], acc);
            const float a = fadd(h2f((u16)(acc & 0xffff)), h2f((u16)(acc >> 16)));
            const float s = S16[(size_t)c * ng + g];
            float t;
            if (ty::min) {
                t = ffma(fneg(fmul(gr.m, FP16_2M24)), s, fmul(a, gr.d));
            } else {
                t = fmul(ffma(-(float)ty::off * FP16_2M24, s, a), gr.d);
            }
            part[c] = ffma(t, pow2(24 - E[(size_t)c * (K / 32) + g / 2]), part[c]);
        }
    }
}

// fp16_reduce is sim.ReduceSumTree over the L lanes of a row: the xor butterfly, offsets
// L/2 ... 1 (every lane of the warp calls it).
__device__ __forceinline__ float fp16_reduce(float v, int L) {
    for (int off = L / 2; off > 0; off >>= 1) v = fadd(v, __shfl_xor_sync(0xffffffffu, v, off, L));
    return v;
}

template <int T>
__device__ __forceinline__ void fp16_mmv(const u8 *x, int K, int N, int rs, const u32 *H2, const int *E,
                                         const float *S16, int M, int R, float *dst) {
    const int lane = threadIdx.x & 31;
    const int warp = (blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    const int L = 32 / R;
    const int row = warp * R + lane / L, l = lane % L;
    float part[FP16_MAXCOLS];
    for (int c = 0; c < FP16_MAXCOLS; c++) part[c] = 0.0f;
    if (row < N) fp16_partials<T>(x + (size_t)row * rs, K, l, L, H2, E, S16, M, part);
#pragma unroll
    for (int c = 0; c < FP16_MAXCOLS; c++) {
        if (c >= M) break;
        const float v = fp16_reduce(part[c], L);
        if (row < N && l == 0) dst[(size_t)c * N + row] = v;
    }
}

// ggml_cuda_op_silu_single (unary.cuh), as ggml writes it; with -use_fast_math expf is
// ex2.approx.ftz of x·log2(e) and the division MUFU.RCP then FMUL (fp16path/glu.go: silu).
__device__ __forceinline__ float fp16_silu(float x) { return x / (1.0f + expf(-x)); }

// fp16_mmv_glu is MulMatSwiGLU (glu.go): the gate and up dot products of each row, each
// exactly fp16_mmv's output, then dst = up · silu(gate) (swiglu: "result *=
// ggml_cuda_op_silu_single(gate_value)", no bias, no scale). dbg, when not null, gets
// (gate, up, expf(-gate)) per output for the tests (expf's bits are the device's).
template <int T>
__device__ __forceinline__ void fp16_mmv_glu(const u8 *gate, const u8 *up, int K, int N, int rs, const u32 *H2, const int *E,
                                             const float *S16, int M, int R, float *dst, float *dbg) {
    const int lane = threadIdx.x & 31;
    const int warp = (blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    const int L = 32 / R;
    const int row = warp * R + lane / L, l = lane % L;
    float pg[FP16_MAXCOLS], pu[FP16_MAXCOLS];
    for (int c = 0; c < FP16_MAXCOLS; c++) pg[c] = pu[c] = 0.0f;
    if (row < N) {
        fp16_partials<T>(gate + (size_t)row * rs, K, l, L, H2, E, S16, M, pg);
        fp16_partials<T>(up + (size_t)row * rs, K, l, L, H2, E, S16, M, pu);
    }
#pragma unroll
    for (int c = 0; c < FP16_MAXCOLS; c++) {
        if (c >= M) break;
        const float g = fp16_reduce(pg[c], L);
        const float u = fp16_reduce(pu[c], L);
        if (row < N && l == 0) {
            float result = u;
            result *= fp16_silu(g);
            const size_t o = (size_t)c * N + row;
            dst[o] = result;
            if (dbg) {
                dbg[3 * o] = g;
                dbg[3 * o + 1] = u;
                dbg[3 * o + 2] = expf(-g);
            }
        }
    }
}

#define FP16_MMV(name, T)                                                                                         \
    extern "C" __global__ void fp16_mmv_##name(const u8 *x, int K, int N, int rs, const u32 *H2, const int *E,    \
                                               const float *S16, int M, int R, float *dst) {                      \
        fp16_mmv<T>(x, K, N, rs, H2, E, S16, M, R, dst);                                                          \
    }                                                                                                             \
    extern "C" __global__ void fp16_glu_##name(const u8 *gate, const u8 *up, int K, int N, int rs, const u32 *H2, \
                                               const int *E, const float *S16, int M, int R, float *dst,          \
                                               float *dbg) {                                                      \
        fp16_mmv_glu<T>(gate, up, K, N, rs, H2, E, S16, M, R, dst, dbg);                                          \
    }
FP16_MMV(q4_K, T_Q4_K)
FP16_MMV(q5_K, T_Q5_K)
FP16_MMV(q6_K, T_Q6_K)
FP16_MMV(q3_K, T_Q3_K)
FP16_MMV(iq4_xs, T_IQ4_XS)
FP16_MMV(iq4_nl, T_IQ4_NL)
FP16_MMV(q8_0, T_Q8_0)

// ---------------------------------------------------------------------------------------
// The fused single-row RMS_NORM * weight writing the conversion (norm.go: RMSNormMul,
// SumSquares), one block of NormBlockSize(ncols) threads (256 below 1024 columns, else
// 1024), as ggml's rms_norm_f32<block_size, do_multiply = true> for one row:
//   tmp_t = fma(x_c, x_c, tmp_t) for c = t, t+block_size, ...; each warp's butterfly; the
//   warp sums padded with zeros to 32 lanes, one more butterfly; mean = tmp / ncols;
//   scale = rsqrtf(mean + eps); dst_c = (scale·x_c)·w_c;
// then, after a barrier, the block's warps convert dst (fp16_convert_block, warp w takes
// the 32-value blocks w, w + nwarps, ...) into H, E, S16: the cache entry. dbg, when not
// null, gets (mean + eps, scale) for the tests (rsqrtf's bits are the device's).
extern "C" __global__ void __launch_bounds__(1024) fp16_rmsnorm_convert(const float *x, const float *w, int ncols, float eps, float *dst, u16 *H,
                                                int *E, float *S16, int *err, float *dbg) {
    __shared__ float s_sum[32];
    __shared__ float s_scale;
    const int tid = threadIdx.x, lane = tid & 31, wid = tid >> 5, nw = blockDim.x / 32;
    float tmp = 0.0f;
    for (int col = tid; col < ncols; col += blockDim.x) tmp = ffma(x[col], x[col], tmp);
    for (int off = 16; off > 0; off >>= 1) tmp = fadd(tmp, __shfl_xor_sync(0xffffffffu, tmp, off));
    if (lane == 0) s_sum[wid] = tmp;
    __syncthreads();
    if (wid == 0) {
        float v = lane < nw ? s_sum[lane] : 0.0f;
        for (int off = 16; off > 0; off >>= 1) v = fadd(v, __shfl_xor_sync(0xffffffffu, v, off));
        if (lane == 0) {
            const float mean = v / ncols;
            const float arg = fadd(mean, eps);
            const float scale = rsqrtf(arg);
            s_scale = scale;
            if (dbg) {
                dbg[0] = arg;
                dbg[1] = scale;
            }
        }
    }
    __syncthreads();
    const float scale = s_scale;
    for (int col = tid; col < ncols; col += blockDim.x) dst[col] = fmul(fmul(scale, x[col]), w[col]);
    __syncthreads();
    for (int b = wid; b < ncols / 32; b += nw) fp16_convert_block(dst[32 * b + lane], b, 32 * b + lane, b, H, E, S16, err);
}
