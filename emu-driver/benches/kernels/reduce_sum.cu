// (i) Not one of the project's shapes: the classic CUDA-samples-style sum reduction
// ("reduce" with the first add during the load and a warp-shuffle tail). Blocks of 256
// threads, each thread loads two elements (i and i + 256 of its block's 512), a shared-
// memory tree down to 64 values (3 __syncthreads), then the last 64 are folded to 32 and
// reduced with 5 __shfl_down_sync; thread 0 writes the block's sum.
//
// The shuffle tail runs in every warp (only warp 0's result is used): HIP-CPU's shuffles
// are block-wide barriers and cannot sit in a warp-divergent branch (see sse_reduce.cu).
#include "bench.cuh"

extern "C" __global__ void reduce_sum(const unsigned *in, unsigned *block_sums)
{
    __shared__ unsigned s[BENCH_REDUCE_THREADS];
    const unsigned t = threadIdx.x;
    const unsigned base = blockIdx.x * (2 * BENCH_REDUCE_THREADS);
    s[t] = in[base + t] + in[base + t + BENCH_REDUCE_THREADS];
    __syncthreads();
    for (unsigned h = BENCH_REDUCE_THREADS / 2; h >= 64; h >>= 1) {
        if (t < h) s[t] += s[t + h];
        __syncthreads();
    }
    unsigned v = s[t & 31] + s[(t & 31) + 32];
    for (int off = 16; off > 0; off >>= 1) v += __shfl_down_sync(0xffffffffu, v, off, 32);
    if (t == 0) block_sums[blockIdx.x] = v;
}
