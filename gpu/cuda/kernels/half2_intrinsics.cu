// The same half2 operations through cuda_fp16.h's intrinsics, as ggml writes them
// (__hadd2, __hmul2, __hfma2). Needs NVRTC's built-in cuda_fp16.h.
#include <cuda_fp16.h>

extern "C" __global__ void half2_intrinsics(const unsigned int *a, const unsigned int *b, const unsigned int *c,
                                            unsigned int n, unsigned int *add, unsigned int *mul, unsigned int *fma) {
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    __half2 x = *reinterpret_cast<const __half2 *>(&a[i]);
    __half2 y = *reinterpret_cast<const __half2 *>(&b[i]);
    __half2 z = *reinterpret_cast<const __half2 *>(&c[i]);
    __half2 s = __hadd2(x, y);
    __half2 p = __hmul2(x, y);
    __half2 f = __hfma2(x, y, z);
    add[i] = *reinterpret_cast<unsigned int *>(&s);
    mul[i] = *reinterpret_cast<unsigned int *>(&p);
    fma[i] = *reinterpret_cast<unsigned int *>(&f);
}
