// (k) Not one of the project's shapes: a 256-bin byte histogram with a per-block
// sub-histogram in shared memory (the CUDA samples' histogram256 idea): clear the bins,
// __syncthreads, a grid-stride loop of shared-memory atomicAdd, __syncthreads, then each
// thread adds one bin to the global histogram with a global atomicAdd.
#include "bench.cuh"

extern "C" __global__ void histogram(const unsigned char *data, unsigned n, unsigned *bins)
{
    __shared__ unsigned h[BENCH_HIST_BINS];
    const unsigned t = threadIdx.x;
    h[t] = 0;
    __syncthreads();
    for (unsigned i = blockIdx.x * blockDim.x + t; i < n; i += gridDim.x * blockDim.x) atomicAdd(&h[data[i]], 1u);
    __syncthreads();
    if (h[t] != 0) atomicAdd(&bins[t], h[t]);
}
