// Kernels and device functions named like functions of the C and C++ libraries and of
// CUDA's own device API: nvcc compiles them (C++ linkage: overloads of the library's
// names), so kernels-host must too.
#include <cuda_runtime.h>

// Device functions overloading library names with signatures of their own.
__device__ int max(const int *a, int n) {
    int m = a[0];
    for (int i = 1; i < n; ++i) m = a[i] > m ? a[i] : m;
    return m;
}
__device__ float sqrt(int x) { return (float)x * 0.5f; }
__device__ int abs(const int *a) { return a[0] < 0 ? -a[0] : a[0]; }

__global__ void sqrt(float *p) { p[threadIdx.x] = sqrtf(p[threadIdx.x]) + sqrt(4); }
__global__ void max(int *p, int n) { p[n] = max((const int *)p, n); }
__global__ void memset(int *p, int v) { p[threadIdx.x] = v + abs((const int *)p); }
__global__ void memcpy(int *dst, const int *src) { dst[threadIdx.x] = src[threadIdx.x] * 3; }
__global__ void printf(int *p) {
    p[threadIdx.x] = (int)threadIdx.x + 1;
    if (threadIdx.x == 0) ::printf("libnames printf kernel ran\n");
}
__global__ void malloc(int *p) { p[threadIdx.x] = 2 * (int)threadIdx.x; }
__global__ void exp(float *p) { p[threadIdx.x] = expf(p[threadIdx.x]); }
__global__ void clock(long long *p) { p[threadIdx.x] = clock64() >= 0 ? 7 : 0; }
__global__ void free(int *p) { p[threadIdx.x] = -1; }
