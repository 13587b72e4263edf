// (h) Block overhead with a barrier: thousands of 32-thread blocks, each thread stores its
// index in shared memory, one __syncthreads, then reads its neighbour's: the per-block
// cost of a block that reaches a barrier (every thread suspended once).
#include "bench.cuh"

extern "C" __global__ void block_cost(unsigned *out)
{
    __shared__ unsigned s[BENCH_SMALL_BLOCK];
    const unsigned t = threadIdx.x;
    const unsigned i = blockIdx.x * BENCH_SMALL_BLOCK + t;
    s[t] = i;
    __syncthreads();
    out[i] = s[(t + 1) % BENCH_SMALL_BLOCK] ^ 0x5a5a5a5au;
}
