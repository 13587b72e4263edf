// A program on the CUDA runtime API. Linked statically with NVIDIA's cudart (nvcc's
// default), its first runtime call fails: simtwin does not emulate the driver's private
// export tables NVIDIA's runtime needs, and emu-driver/tests/clients.rs checks that simtwin
// says why and what to do. Built with `-cudart shared` it runs on simtwin's own
// libcudart.so.13 (cudart/tests/runtime.rs).
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
