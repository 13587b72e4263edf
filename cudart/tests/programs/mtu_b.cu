#include "check.h"

__constant__ int offset_b;
__global__ void add_b(int *p, int n) {
    int i = threadIdx.x;
    if (i < n) p[i] = (p[i] + offset_b) * 3 + i;
}

void run_b(int *d, int n) {
    int off = 1000;
    CK(cudaMemcpyToSymbol(offset_b, &off, sizeof off));
    add_b<<<1, n>>>(d, n);
    CK(cudaGetLastError());
}
