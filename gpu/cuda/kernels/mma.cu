// One mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 per warp (sm_80+), written as
// ggml's mma.cuh writes it. Each lane passes its raw fragment registers: A 4 x b32,
// B 2 x b32, C 4 x s32, and gets D 4 x s32 back, so the host can probe the layout.
extern "C" __global__ void mma_s8_m16n8k32(const unsigned int *A, const unsigned int *B, const int *C,
                                           int *D, unsigned int nwarps) {
    unsigned int gt = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned int w = gt / 32, lane = gt % 32;
    if (w >= nwarps) return; // blockDim.x is a multiple of 32: whole warps return together
    const unsigned int *a = A + (w * 32 + lane) * 4;
    const unsigned int *b = B + (w * 32 + lane) * 2;
    const int *c = C + (w * 32 + lane) * 4;
    int d0 = c[0], d1 = c[1], d2 = c[2], d3 = c[3];
    asm("mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};"
        : "+r"(d0), "+r"(d1), "+r"(d2), "+r"(d3)
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
    int *d = D + (w * 32 + lane) * 4;
    d[0] = d0; d[1] = d1; d[2] = d2; d[3] = d3;
}
