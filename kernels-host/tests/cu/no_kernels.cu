// A module with no kernels: only device variables (nvcc emits a PTX with no .entry).
#include <cuda_runtime.h>
__device__ int counter = 3;
__constant__ float coeffs[4] = {0.5f, 1.5f, 2.5f, 3.5f};
