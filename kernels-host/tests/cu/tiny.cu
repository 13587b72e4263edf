// Minimal kernel for the CLI tests; EXPECT_ARCH checks that --arch reaches __CUDA_ARCH__.
#include <cuda_runtime.h>
#ifdef EXPECT_ARCH
static_assert(__CUDA_ARCH__ == EXPECT_ARCH, "__CUDA_ARCH__ follows --arch");
#endif
#ifndef DEVICE_CODE
#error "DEVICE_CODE comes from the nvcc flags"
#endif
__constant__ double lut[3] = {1.0, 2.0, 3.0};
extern "C" __global__ void axpy(float a, const float *__restrict__ x, float *__restrict__ y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i] + (float)lut[i % 3];
}
