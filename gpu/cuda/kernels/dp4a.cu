// dp4a.s32.s32: c + the sum of the four products of the signed bytes of a and b
// (ggml's ggml_cuda_dp4a is __dp4a, which is this instruction).
extern "C" __global__ void dp4a_s32(const int *a, const int *b, const int *c, unsigned int n, int *out) {
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    int r;
    asm("dp4a.s32.s32 %0, %1, %2, %3;" : "=r"(r) : "r"(a[i]), "r"(b[i]), "r"(c[i]));
    out[i] = r;
}
