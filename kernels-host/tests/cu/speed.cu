// Code generation speed: barrier-free kernels whose cost is the generated runner's
// (thread indices, context reads, inlining), and a 3-D index check.
#include <cuda_runtime.h>

extern "C" __global__ void saxpy(const float *a, const float *b, float *c, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) c[i] = a[i] * 1.5f + b[i];
}

// Every thread writes its (x, y, z, linear) at its linear index.
extern "C" __global__ void ids(unsigned *out) {
    unsigned t = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
    out[4 * t + 0] = threadIdx.x;
    out[4 * t + 1] = threadIdx.y;
    out[4 * t + 2] = threadIdx.z;
    out[4 * t + 3] = t;
}
