// Two translation units, each with its own kernels and fatbin, linked into one program.
#include "check.h"

__constant__ int offset_a;
__global__ void add_a(int *p, int n) {
    int i = threadIdx.x;
    if (i < n) p[i] += offset_a;
}

void run_b(int *d, int n);  // mtu_b.cu

int main() {
    const int N = 32;
    int *d, h[N];
    CK(cudaMalloc(&d, sizeof h));
    CK(cudaMemset(d, 0, sizeof h));
    int off = 5;
    CK(cudaMemcpyToSymbol(offset_a, &off, sizeof off));
    add_a<<<1, N>>>(d, N);
    CK(cudaGetLastError());
    run_b(d, N);
    CK(cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost));
    int bad = 0;
    for (int i = 0; i < N; i++) if (h[i] != (5 + 1000) * 3 + i) bad++;
    printf("two translation units: mismatches %d\n", bad);
    return 0;
}
