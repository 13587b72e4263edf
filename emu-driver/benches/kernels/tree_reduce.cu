// (b) 256-thread shared-memory tree reduction: each thread squares its element into a
// 64-bit slot, then 8 halving steps; 9 __syncthreads per thread. One sum per block.
#include "bench.cuh"

extern "C" __global__ void tree_reduce(const unsigned *in, unsigned long long *block_sums)
{
    __shared__ unsigned long long s[BENCH_TREE_THREADS];
    unsigned t = threadIdx.x;
    unsigned long long v = in[blockIdx.x * BENCH_TREE_THREADS + t];
    s[t] = v * v;
    __syncthreads();
    for (unsigned h = BENCH_TREE_THREADS / 2; h > 0; h >>= 1) {
        if (t < h) s[t] += s[t + h];
        __syncthreads();
    }
    if (t == 0) block_sums[blockIdx.x] = s[0];
}
