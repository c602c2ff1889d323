// ggmlrows runs ggml's CPU quantizers and dequantizers on rows given in a file, for the
// SHA-256 digests in quant's tests whose inputs are made by the Go tests themselves
// (TestKQuantSweep, TestQuantizeRefCSpot, TestDequantizeCSpot; see README.md in this
// folder). It uses ggml's public API (ggml.h), plus the two Q8_K functions libggml-base
// exports but declares only internally (as genvectors.c does).
//
// This is ggsim's program, not ggml code. Usage:
//
//   ggmlrows ggqv       TYPE NCOLS IN.f32 OUT   GGQV file (../README.md format): per row
//                                               the input, ggml_quantize_chunk's bytes (into
//                                               a zeroed buffer) and to_float of them
//   ggmlrows quantize   TYPE NCOLS IN.f32 OUT   the quantized bytes only
//   ggmlrows dequantize TYPE NCOLS IN.raw OUT   to_float of the raw blocks, float32 LE
//
// IN.f32 holds whole rows of NCOLS little-endian float32; IN.raw whole rows of blocks.

#include "ggml.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// Exported by libggml-base (GGML_API in ggml/src/ggml-quants.h).
void quantize_row_q8_K_ref(const float * x, void * y, int64_t k);
void dequantize_row_q8_K(const void * x, float * y, int64_t k);

static void die(const char * msg, const char * arg) {
    fprintf(stderr, "ggmlrows: %s%s\n", msg, arg ? arg : "");
    exit(1);
}

static unsigned char * slurp(const char * path, size_t * n) {
    FILE * f = fopen(path, "rb");
    if (!f) die("cannot open ", path);
    size_t cap = 1 << 20, len = 0;
    unsigned char * b = malloc(cap);
    size_t r;
    while ((r = fread(b + len, 1, cap - len, f)) > 0) {
        len += r;
        if (len == cap) b = realloc(b, cap *= 2);
    }
    fclose(f);
    *n = len;
    return b;
}

static void put_u32(FILE * f, uint32_t v) {
    unsigned char b[4] = {(unsigned char)v, (unsigned char)(v >> 8), (unsigned char)(v >> 16), (unsigned char)(v >> 24)};
    fwrite(b, 1, 4, f);
}

static void quantize(enum ggml_type t, const float * x, void * q, int n) {
    if (t == GGML_TYPE_Q8_K) {
        quantize_row_q8_K_ref(x, q, n);
    } else {
        ggml_quantize_chunk(t, x, q, 0, 1, n, NULL);
    }
}

static void dequantize(enum ggml_type t, const void * q, float * y, int n) {
    if (t == GGML_TYPE_Q8_K) {
        dequantize_row_q8_K(q, y, n);
    } else {
        ggml_get_type_traits(t)->to_float(q, y, n);
    }
}

int main(int argc, char ** argv) {
    if (argc != 6) {
        fprintf(stderr, "usage: ggmlrows ggqv|quantize|dequantize TYPE NCOLS IN OUT\n");
        return 2;
    }
    const char * mode = argv[1];
    enum ggml_type t = GGML_TYPE_COUNT;
    for (int i = 0; i < GGML_TYPE_COUNT; i++) {
        const char * name = ggml_type_name((enum ggml_type)i);
        if (name && strcmp(name, argv[2]) == 0) t = (enum ggml_type)i;
    }
    if (t == GGML_TYPE_COUNT) die("unknown type ", argv[2]);
    const int n = atoi(argv[3]);
    if (n <= 0 || n % ggml_blck_size(t) != 0) die("bad NCOLS ", argv[3]);
    const size_t rs = ggml_row_size(t, n);
    size_t len;
    unsigned char * in = slurp(argv[4], &len);
    FILE * out = fopen(argv[5], "wb");
    if (!out) die("cannot create ", argv[5]);
    void * q = malloc(rs);
    float * x = malloc(sizeof(float) * n);
    float * y = malloc(sizeof(float) * n);
    if (strcmp(mode, "dequantize") == 0) {
        if (len % rs != 0) die("input is not whole rows: ", argv[4]);
        for (size_t r = 0; r < len / rs; r++) {
            dequantize(t, in + r * rs, y, n);
            fwrite(y, sizeof(float), n, out); // x86-64: little-endian
        }
    } else {
        if (len % (4 * (size_t)n) != 0) die("input is not whole rows: ", argv[4]);
        const size_t nrows = len / (4 * (size_t)n);
        const int ggqv = strcmp(mode, "ggqv") == 0;
        if (!ggqv && strcmp(mode, "quantize") != 0) die("unknown mode ", mode);
        if (t != GGML_TYPE_Q8_K) ggml_quantize_init(t);
        if (ggqv) {
            fwrite("GGQV", 1, 4, out);
            put_u32(out, 1);
            put_u32(out, (uint32_t)t);
            put_u32(out, 0);
            put_u32(out, (uint32_t)nrows);
            put_u32(out, (uint32_t)n);
        }
        for (size_t r = 0; r < nrows; r++) {
            memcpy(x, in + r * 4 * (size_t)n, 4 * (size_t)n);
            memset(q, 0, rs);
            quantize(t, x, q, n);
            if (ggqv) {
                fwrite(x, sizeof(float), n, out);
                fwrite(q, 1, rs, out);
                dequantize(t, q, y, n);
                fwrite(y, sizeof(float), n, out);
            } else {
                fwrite(q, 1, rs, out);
            }
        }
        ggml_quantize_free();
    }
    if (fclose(out) != 0) die("write failed: ", argv[5]);
    free(in);
    free(q);
    free(x);
    free(y);
    return 0;
}
