// Relocatable device code (-rdc=true): a kernel here calls a __device__ function and
// reads a __device__ variable defined in rdc_b.cu; nvcc's device link joins them.
#include "check.h"

extern __device__ int scale_of(int i);  // rdc_b.cu
extern __device__ int bias;              // rdc_b.cu

__global__ void apply(int *p, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) p[i] = scale_of(i) + bias;
}

void set_bias(int b);  // rdc_b.cu

int main() {
    const int N = 300;
    int *d, h[N];
    CK(cudaMalloc(&d, sizeof h));
    set_bias(7);
    apply<<<(N + 127) / 128, 128>>>(d, N);
    CK(cudaGetLastError());
    CK(cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost));
    int bad = 0;
    for (int i = 0; i < N; i++) bad += h[i] != i * 3 + 7;
    printf("relocatable device code: mismatches %d\n", bad);
    CK(cudaFree(d));
    return 0;
}
