// gridtables writes ggml's i-quant grid and sign tables, as they lie in memory, one file
// per table, so that their SHA-256 can be compared with the digests in quant's
// TestGridTablesSHA256 (see README.md in this folder). It includes ggml's
// src/ggml-common.h; compiled as C it writes the tables of GGML_COMMON_IMPL_C (the CPU's,
// with iq1s_grid), compiled as C++ those of GGML_COMMON_IMPL_CPP (with iq1s_grid_gpu, the
// table the CUDA kernels read).
//
// This is ggsim's program, not ggml code. Usage: gridtables OUTDIR

#ifdef __cplusplus
#define GGML_COMMON_DECL_CPP
#define GGML_COMMON_IMPL_CPP
#else
#define GGML_COMMON_DECL_C
#define GGML_COMMON_IMPL_C
#endif
#include "ggml-common.h"

#include <stdio.h>

static int dump(const char * dir, const char * name, const void * p, size_t n) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s.bin", dir, name);
    FILE * f = fopen(path, "wb");
    if (!f || fwrite(p, 1, n, f) != n || fclose(f) != 0) {
        fprintf(stderr, "gridtables: cannot write %s\n", path);
        return 1;
    }
    return 0;
}

#define DUMP(t) err |= dump(argv[1], #t, t, sizeof t)

int main(int argc, char ** argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: gridtables OUTDIR\n");
        return 2;
    }
    int err = 0;
#ifdef __cplusplus
    DUMP(iq1s_grid_gpu);
#else
    DUMP(kmask_iq2xs);
    DUMP(ksigns_iq2xs);
    DUMP(ksigns64);
    DUMP(iq2xxs_grid);
    DUMP(iq2xs_grid);
    DUMP(iq2s_grid);
    DUMP(iq3xxs_grid);
    DUMP(iq3s_grid);
    DUMP(iq1s_grid);
    DUMP(kvalues_fp4);
#endif
    return err;
}
