// binary16 x2 arithmetic through inline PTX (no header needed): add.rn.f16x2,
// mul.rn.f16x2, fma.rn.f16x2. .rn keeps ptxas from contracting a separate mul and add.
// Inputs and outputs are raw half2 register bits (low half = element 0).
extern "C" __global__ void half2_ops(const unsigned int *a, const unsigned int *b, const unsigned int *c,
                                     unsigned int n, unsigned int *add, unsigned int *mul, unsigned int *fma) {
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    unsigned int x = a[i], y = b[i], z = c[i], r;
    asm("add.rn.f16x2 %0, %1, %2;" : "=r"(r) : "r"(x), "r"(y));
    add[i] = r;
    asm("mul.rn.f16x2 %0, %1, %2;" : "=r"(r) : "r"(x), "r"(y));
    mul[i] = r;
    asm("fma.rn.f16x2 %0, %1, %2, %3;" : "=r"(r) : "r"(x), "r"(y), "r"(z));
    fma[i] = r;
}
