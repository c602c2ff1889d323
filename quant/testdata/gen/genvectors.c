// genvectors writes quant/testdata/vectors/<type>.bin: rows quantized and dequantized by
// ggml's own C code (see README.md in this folder and ../README.md for the format and
// the rows). It uses ggml's public API (ggml.h) only, except two functions that ggml-base
// exports but declares in its internal header ggml-quants.h (Q8_K has no type trait for
// them); they are declared below with ggml's own signatures.
//
// This is ggsim's program, not ggml code. Usage: genvectors OUTDIR

#include "ggml.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// Exported by libggml-base (GGML_API in ggml/src/ggml-quants.h).
void quantize_row_q8_K_ref(const float * x, void * y, int64_t k);
void dequantize_row_q8_K(const void * x, float * y, int64_t k);

// ---------------------------------------------------------------------------------------
// Random numbers: splitmix64.

static uint64_t rng_state;

static uint64_t next_u64(void) {
    uint64_t z = (rng_state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

// u is uniform in [-1, 1) with 24 random bits.
static float rand_u(void) { return (float)(int32_t)(next_u64() >> 40) * 0x1p-23f - 1.0f; }

// u01 is uniform in [0, 1) with 24 random bits.
static float rand_u01(void) { return (float)(next_u64() >> 40) * 0x1p-24f; }

// rand_row: v = u, times 8 with probability 1/64 (a second draw), x = v*s in float32.
static void rand_row(float * x, int n, float s) {
    for (int j = 0; j < n; j++) {
        float v = rand_u();
        if ((next_u64() & 63) == 0) {
            v *= 8.0f;
        }
        x[j] = v * s;
    }
}

// ---------------------------------------------------------------------------------------
// Recipes, in file order.

enum {
    R_RAND,  // rand*scale
    R_ZERO,
    R_CONST_07,
    R_CONST_M125,
    R_ONE_NONZERO,
    R_F32_SUBNORMAL,
    R_TINY,
    R_HALF_SUBNORMAL,
    R_HUGE,
    R_ALTERNATING,
    R_RAMP,
    R_NAN,
    R_INF,
};

static void make_row(int r, float s, float * x, int n) {
    switch (r) {
        case R_RAND: rand_row(x, n, s); break;
        case R_ZERO: for (int j = 0; j < n; j++) x[j] = 0.0f; break;
        case R_CONST_07: for (int j = 0; j < n; j++) x[j] = 0.7f; break;
        case R_CONST_M125: for (int j = 0; j < n; j++) x[j] = -1.25f; break;
        case R_ONE_NONZERO:
            for (int j = 0; j < n; j++) x[j] = 0.0f;
            x[5] = 0.9f;
            break;
        case R_F32_SUBNORMAL: rand_row(x, n, 1e-39f); break;
        case R_TINY: rand_row(x, n, 1e-20f); break;
        case R_HALF_SUBNORMAL: rand_row(x, n, 3e-4f); break;
        case R_HUGE:
            for (int j = 0; j < n; j++) {
                float m = 1e4f + 5e4f * rand_u01();
                x[j] = (next_u64() & 1) ? -m : m;
            }
            break;
        case R_ALTERNATING:
            for (int j = 0; j < n; j++) {
                float m = 0.25f + 0.75f * rand_u01();
                x[j] = (j % 2 == 0) ? m : -m;
            }
            break;
        case R_RAMP:
            for (int j = 0; j < n; j++) x[j] = -1.0f + 2.0f * (float)j / (float)(n - 1);
            break;
        case R_NAN:
            rand_row(x, n, 1.0f);
            x[3] = NAN;
            x[n / 2 + 1] = -NAN;
            break;
        case R_INF:
            rand_row(x, n, 1.0f);
            x[3] = INFINITY;
            x[n / 2 + 1] = -INFINITY;
            break;
    }
}

// ---------------------------------------------------------------------------------------
// Types.

struct type_spec {
    enum ggml_type type;
    int            ncols;
    int            dequant_only; // ggsim has no quantizer: fewer rows (see README)
    unsigned       skip;         // recipes left out (bit r): ggml's C has UB or aborts
};

#define B(r) (1u << (r))

static const struct type_spec types[] = {
    {GGML_TYPE_Q4_0, 64, 0, B(R_F32_SUBNORMAL) | B(R_NAN) | B(R_INF)},
    {GGML_TYPE_Q4_1, 64, 0, B(R_F32_SUBNORMAL) | B(R_NAN) | B(R_INF)},
    {GGML_TYPE_Q5_0, 64, 0, B(R_F32_SUBNORMAL) | B(R_NAN) | B(R_INF)},
    {GGML_TYPE_Q5_1, 64, 0, B(R_F32_SUBNORMAL) | B(R_NAN) | B(R_INF)},
    {GGML_TYPE_Q8_0, 64, 0, B(R_F32_SUBNORMAL) | B(R_NAN) | B(R_INF)},
    {GGML_TYPE_Q8_1, 64, 0, B(R_F32_SUBNORMAL) | B(R_NAN) | B(R_INF)},
    {GGML_TYPE_Q2_K, 256, 0, B(R_F32_SUBNORMAL)},
    {GGML_TYPE_Q3_K, 256, 0, 0},
    {GGML_TYPE_Q4_K, 256, 0, 0},
    {GGML_TYPE_Q5_K, 256, 0, 0},
    {GGML_TYPE_Q6_K, 256, 0, 0},
    {GGML_TYPE_Q8_K, 256, 0, 0},
    {GGML_TYPE_IQ2_XXS, 256, 1, 0},
    {GGML_TYPE_IQ2_XS, 256, 1, B(R_NAN) | B(R_INF)},
    {GGML_TYPE_IQ3_XXS, 256, 1, B(R_NAN)},
    {GGML_TYPE_IQ1_S, 256, 1, 0},
    {GGML_TYPE_IQ4_NL, 64, 0, 0},
    {GGML_TYPE_IQ3_S, 256, 1, B(R_NAN) | B(R_INF)},
    {GGML_TYPE_IQ2_S, 256, 1, B(R_NAN) | B(R_INF)},
    {GGML_TYPE_IQ4_XS, 256, 0, 0},
    {GGML_TYPE_IQ1_M, 256, 1, B(R_INF)},
    {GGML_TYPE_TQ1_0, 256, 1, 0},
    {GGML_TYPE_TQ2_0, 256, 1, 0},
    {GGML_TYPE_MXFP4, 64, 0, B(R_F32_SUBNORMAL) | B(R_INF)},
    {GGML_TYPE_NVFP4, 64, 0, 0},
    {GGML_TYPE_Q1_0, 128, 0, 0},
    {GGML_TYPE_Q2_0, 64, 0, B(R_NAN) | B(R_INF)},
};

// Recipes the dequantize-only types leave out (to keep their files small).
static const unsigned dequant_only_skip = B(R_CONST_M125) | B(R_F32_SUBNORMAL) | B(R_TINY) | B(R_RAMP);

static void put_u32(FILE * f, uint32_t v) {
    unsigned char b[4] = {(unsigned char)v, (unsigned char)(v >> 8), (unsigned char)(v >> 16), (unsigned char)(v >> 24)};
    fwrite(b, 1, 4, f);
}

static void put_f32s(FILE * f, const float * x, int n) {
    for (int j = 0; j < n; j++) {
        uint32_t u;
        memcpy(&u, &x[j], 4);
        put_u32(f, u);
    }
}

// quantize_and_dequantize fills q and y for one row x of n values.
static void quantize_and_dequantize(enum ggml_type t, const float * x, void * q, float * y, int n, const float * imatrix) {
    if (t == GGML_TYPE_Q8_1) {
        // ggml_quantize_chunk has no case for Q8_1, and there is no to_float: the bytes
        // come from the type's from_float_ref (quantize_row_q8_1_ref) and y is
        // dequantize_row_q8_0's formula on them (d, s, then 32 int8 per block).
        ggml_get_type_traits(t)->from_float_ref(x, q, n);
        const uint8_t * b = q;
        for (int i = 0; i < n / 32; i++) {
            ggml_fp16_t d;
            memcpy(&d, b + 36 * i, 2);
            const float df = ggml_fp16_to_fp32(d);
            for (int j = 0; j < 32; j++) {
                y[32 * i + j] = (float)(int8_t)b[36 * i + 4 + j] * df;
            }
        }
        return;
    }
    if (t == GGML_TYPE_Q8_K) {
        quantize_row_q8_K_ref(x, q, n);
        dequantize_row_q8_K(q, y, n);
        return;
    }
    ggml_quantize_chunk(t, x, q, 0, 1, n, imatrix);
    ggml_get_type_traits(t)->to_float(q, y, n);
}

static int write_type(const char * dir, const struct type_spec * ts) {
    const enum ggml_type t = ts->type;
    const int n = ts->ncols;
    const size_t rs = ggml_row_size(t, n);
    const int imat = ggml_quantize_requires_imatrix(t);

    float * ones = malloc(sizeof(float) * n);
    for (int j = 0; j < n; j++) ones[j] = 1.0f;

    // Build the rows first (the row count goes in the header).
    enum { MAXROWS = 32 };
    float * xs[MAXROWS];
    int nrows = 0;
    static const float scales[] = {1.0f, 0.05f, 1e-3f, 1e-6f, 300.0f};

    rng_state = 0x67677369ull * 1000 + (uint64_t)t;
    const int reps = n == 64 ? 2 : 1; // two rows per scale for the 64-value rows
    for (int si = 0; si < 5; si++) {
        if (ts->dequant_only && scales[si] == 1e-6f) {
            continue;
        }
        for (int k = 0; k < reps; k++) {
            xs[nrows] = malloc(sizeof(float) * n);
            make_row(R_RAND, scales[si], xs[nrows], n);
            nrows++;
        }
    }
    for (int r = R_ZERO; r <= R_INF; r++) {
        if (ts->dequant_only && (dequant_only_skip & B(r))) {
            continue; // not a row of these types: draws nothing
        }
        // A row left out for undefined behaviour was made (its random numbers drawn)
        // and then dropped, so the rows after it are those of the full list.
        xs[nrows] = malloc(sizeof(float) * n);
        make_row(r, 0, xs[nrows], n);
        if (ts->skip & B(r)) {
            free(xs[nrows]);
            continue;
        }
        nrows++;
    }

    char path[4096];
    snprintf(path, sizeof path, "%s/%s.bin", dir, ggml_type_name(t));
    FILE * f = fopen(path, "wb");
    if (!f) {
        fprintf(stderr, "genvectors: %s: %s\n", path, strerror(errno));
        return 1;
    }
    fwrite("GGQV", 1, 4, f);
    put_u32(f, 1);
    put_u32(f, (uint32_t)t);
    put_u32(f, imat ? 1u : 0u);
    put_u32(f, (uint32_t)nrows);
    put_u32(f, (uint32_t)n);

    if (t != GGML_TYPE_Q8_1 && t != GGML_TYPE_Q8_K) {
        ggml_quantize_init(t);
    }
    void * q = malloc(rs);
    float * y = malloc(sizeof(float) * n);
    for (int i = 0; i < nrows; i++) {
        // A sentinel: bytes ggml leaves unwritten keep it (quantize_row_q8_K_ref does not
        // write the bsums of an all-zero block).
        memset(q, 0xAA, rs);
        quantize_and_dequantize(t, xs[i], q, y, n, imat ? ones : NULL);
        put_f32s(f, xs[i], n);
        fwrite(q, 1, rs, f);
        put_f32s(f, y, n);
        free(xs[i]);
    }
    free(q);
    free(y);
    free(ones);
    if (fclose(f) != 0) {
        fprintf(stderr, "genvectors: %s: write failed\n", path);
        return 1;
    }
    printf("%-8s %2d rows of %3d values -> %s\n", ggml_type_name(t), nrows, n, path);
    return 0;
}

int main(int argc, char ** argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: genvectors OUTDIR\n");
        return 2;
    }
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++) {
        if (write_type(argv[1], &types[i]) != 0) {
            return 1;
        }
    }
    ggml_quantize_free();
    return 0;
}
