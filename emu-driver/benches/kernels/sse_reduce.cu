// (e) VMAF-like reduction (the shape of VMAF's PSNR / motion SAD kernels): per 16x16
// block, the sum of 64-bit squared differences of two 8-bit frames. Each thread takes one
// pixel (1-D blocks of 256 threads over 16x16 tiles); each 32-lane warp reduces with 5 __shfl_down_sync; lane 0 of each warp stores its
// sum in shared memory; after one __syncthreads the 8 warp sums are reduced with 3 more
// shuffles and thread 0 writes the block's sum.
//
// The second stage runs in every warp (lanes beyond the 8 sums reduce zeros) rather than
// under `if (warp == 0)`: HIP-CPU's shuffles are block-wide barriers, so a shuffle inside a
// warp-divergent branch is not defined there. The work is the same in every column.
// The blocks are 1-D because HIP-CPU numbers the fibers of a 2-D block with threadIdx.y
// varying fastest, so its shuffle lanes would not be CUDA's (x fastest).
#include "bench.cuh"

extern "C" __global__ void sse_reduce(const unsigned char *ref, const unsigned char *dis, int w, int h,
                                      unsigned long long *block_sums)
{
    __shared__ unsigned long long warp_sums[BENCH_TILE * BENCH_TILE / 32];
    const unsigned t = threadIdx.x;
    const int x = blockIdx.x * BENCH_TILE + (int)(t % BENCH_TILE);
    const int y = blockIdx.y * BENCH_TILE + (int)(t / BENCH_TILE);
    unsigned long long d2 = 0;
    if (x < w && y < h) {
        const int d = (int)ref[y * w + x] - (int)dis[y * w + x];
        d2 = (unsigned long long)(d * d);
    }
    for (int off = 16; off > 0; off >>= 1) d2 += __shfl_down_sync(0xffffffffu, d2, off, 32);
    if ((t & 31) == 0) warp_sums[t >> 5] = d2;
    __syncthreads();
    unsigned long long v = (t & 31) < BENCH_TILE * BENCH_TILE / 32 ? warp_sums[t & 31] : 0;
    for (int off = BENCH_TILE * BENCH_TILE / 64; off > 0; off >>= 1)
        v += __shfl_down_sync(0xffffffffu, v, off, 32);
    if (t == 0) block_sums[blockIdx.y * gridDim.x + blockIdx.x] = v;
}
