// (j) Not one of the project's shapes: a tiled matrix transpose as in the CUDA samples'
// "coalesced, no bank conflicts" form. 32x32 tiles (a padded 32x33 shared array), blocks
// of 32x8 threads, each thread moves 4 elements in and 4 out around one __syncthreads.
#include "bench.cuh"

extern "C" __global__ void transpose(const float *in, float *out, int w, int h)
{
    __shared__ float tile[BENCH_TRANSPOSE_TILE][BENCH_TRANSPOSE_TILE + 1];
    int x = blockIdx.x * BENCH_TRANSPOSE_TILE + threadIdx.x;
    int y = blockIdx.y * BENCH_TRANSPOSE_TILE + threadIdx.y;
    for (int j = 0; j < BENCH_TRANSPOSE_TILE; j += BENCH_TRANSPOSE_ROWS)
        if (x < w && y + j < h) tile[threadIdx.y + j][threadIdx.x] = in[(y + j) * w + x];
    __syncthreads();
    x = blockIdx.y * BENCH_TRANSPOSE_TILE + threadIdx.x;
    y = blockIdx.x * BENCH_TRANSPOSE_TILE + threadIdx.y;
    for (int j = 0; j < BENCH_TRANSPOSE_TILE; j += BENCH_TRANSPOSE_ROWS)
        if (x < h && y + j < w) out[(y + j) * h + x] = tile[threadIdx.x][threadIdx.y + j];
}
