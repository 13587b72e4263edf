// A program on the CUDA runtime API (cudart, linked statically as nvcc does by default):
// simtwin does not emulate the driver's private export tables the runtime needs, so its
// first runtime call fails; the test checks that simtwin says why.
#include <cstdio>
#include <cuda_runtime.h>

__global__ void fill(int *p) { p[threadIdx.x] = threadIdx.x; }

int main() {
    int *d = nullptr;
    cudaError_t e = cudaMalloc(&d, 64 * sizeof(int));
    if (e != cudaSuccess) {
        fprintf(stderr, "runtime_client: cudaMalloc: %s\n", cudaGetErrorString(e));
        return 3;
    }
    fill<<<1, 64>>>(d);
    e = cudaDeviceSynchronize();
    printf("runtime_client: %s\n", cudaGetErrorString(e));
    return e == cudaSuccess ? 0 : 4;
}
