// (d) 3x3 binomial filter (1 2 1 / 2 4 2 / 1 2 1, /16) with clamp-to-edge: each 16x16
// block loads its tile plus a 1-pixel halo (18x18 floats) into shared memory, one
// __syncthreads, then each thread filters its pixel from the tile.
#include "bench.cuh"

extern "C" __global__ void stencil3x3(const float *in, float *out, int w, int h)
{
    __shared__ float tile[BENCH_TILE + 2][BENCH_TILE + 2];
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int x0 = blockIdx.x * BENCH_TILE, y0 = blockIdx.y * BENCH_TILE;
    for (int k = ty * BENCH_TILE + tx; k < (BENCH_TILE + 2) * (BENCH_TILE + 2);
         k += BENCH_TILE * BENCH_TILE) {
        const int ly = k / (BENCH_TILE + 2), lx = k % (BENCH_TILE + 2);
        const int gx = bench_clamp(x0 + lx - 1, 0, w - 1);
        const int gy = bench_clamp(y0 + ly - 1, 0, h - 1);
        tile[ly][lx] = in[gy * w + gx];
    }
    __syncthreads();
    const int x = x0 + tx, y = y0 + ty;
    if (x < w && y < h) {
        float s = tile[ty][tx] + 2.0f * tile[ty][tx + 1] + tile[ty][tx + 2]
                + 2.0f * tile[ty + 1][tx] + 4.0f * tile[ty + 1][tx + 1] + 2.0f * tile[ty + 1][tx + 2]
                + tile[ty + 2][tx] + 2.0f * tile[ty + 2][tx + 1] + tile[ty + 2][tx + 2];
        out[y * w + x] = s * 0.0625f;
    }
}
