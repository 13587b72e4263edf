// (c) 32-lane shuffle reduction. Launched with blocks of exactly 32 threads, so every
// shuffle has 32 participating lanes in simtwin (CUDA's warp) and in HIP-CPU (whose
// shuffles rendezvous the whole block). Each round reduces the lanes' values (v0 + r) with
// 5 __shfl_down_sync; lane 0 accumulates the rounds' sums. 5 * rounds shuffles per lane.
#include "bench.cuh"

extern "C" __global__ void shfl_reduce(const unsigned *in, unsigned *warp_sums, int rounds)
{
    unsigned v0 = in[blockIdx.x * BENCH_WARP_LANES + threadIdx.x];
    unsigned acc = 0;
    for (int r = 0; r < rounds; ++r) {
        unsigned v = v0 + (unsigned)r;
        for (int off = BENCH_WARP_LANES / 2; off > 0; off >>= 1)
            v += __shfl_down_sync(0xffffffffu, v, off, BENCH_WARP_LANES);
        acc += v;
    }
    if (threadIdx.x == 0) warp_sums[blockIdx.x] = acc;
}
