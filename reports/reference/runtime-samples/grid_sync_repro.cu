// A cooperative launch whose grid sync never completes on the emulated driver once the grid
// holds 32768 threads or more (127x256 passes, 128x256 and 64x512 time out with
// CUDA_ERROR_LAUNCH_TIMEOUT, EMU_CUDA_WATCHDOG=0: no end); the cause of the two
// cooperative samples' failures in results.md. Usage: grid_sync_repro BLOCKS THREADS.
// Build: nvcc -arch=sm_90 -cudart shared -L<dir with libcudart.so -> simtwin's> grid_sync_repro.cu
#include <cstdio>
#include <cstdlib>
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
__global__ void k(int *p) {
    cg::grid_group g = cg::this_grid();
    atomicAdd(p, 1);
    g.sync();
    if (g.thread_rank() == 0) p[1] = *p;
}
int main(int argc, char **argv) {
    int blocks = atoi(argv[1]), threads = atoi(argv[2]);
    int *d; cudaMalloc(&d, 8); cudaMemset(d, 0, 8);
    void *a[] = {&d};
    cudaError_t e = cudaLaunchCooperativeKernel((void *)k, blocks, threads, a, 0, 0);
    cudaError_t s = cudaDeviceSynchronize();
    int h[2]; cudaMemcpy(h, d, 8, cudaMemcpyDeviceToHost);
    printf("%d x %d: launch %s sync %s count %d seen %d\n", blocks, threads, cudaGetErrorName(e), cudaGetErrorName(s), h[0], h[1]);
}
