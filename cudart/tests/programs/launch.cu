// The launch API (cudaLaunchKernel, cudaLaunchKernelEx, cudaLaunchCooperativeKernel),
// kernel attributes and occupancy.
#include "check.h"
#include <cooperative_groups.h>
namespace cg = cooperative_groups;

__global__ void __launch_bounds__(256) sum(const int *in, int *out, int n) {
    extern __shared__ int buf[];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    buf[threadIdx.x] = i < n ? in[i] : 0;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s) buf[threadIdx.x] += buf[threadIdx.x + s];
        __syncthreads();
    }
    if (threadIdx.x == 0) atomicAdd(out, buf[0]);
}

__global__ void two_phase(int *p, int *total, int n) {
    cg::grid_group g = cg::this_grid();
    int i = g.thread_rank();
    if (i < n) atomicAdd(total, p[i]);
    g.sync();
    if (i < n) p[i] = *total;
}

int main() {
    const int N = 10000;
    int *h = new int[N];
    long long want = 0;
    for (int i = 0; i < N; i++) { h[i] = i % 97; want += h[i]; }
    int *d, *out;
    CK(cudaMalloc(&d, N * sizeof(int)));
    CK(cudaMalloc(&out, sizeof(int)));
    CK(cudaMemcpy(d, h, N * sizeof(int), cudaMemcpyHostToDevice));

    // cudaLaunchKernel with an argument array.
    CK(cudaMemset(out, 0, 4));
    int n = N;
    void *args[] = {&d, &out, &n};
    CK(cudaLaunchKernel((const void *)sum, dim3((N + 255) / 256), dim3(256), args, 256 * sizeof(int), 0));
    int got = 0;
    CK(cudaMemcpy(&got, out, 4, cudaMemcpyDeviceToHost));
    printf("cudaLaunchKernel sum matches: %d\n", got == want);

    // cudaLaunchKernelEx (the header's template over cudaLaunchKernelExC).
    CK(cudaMemset(out, 0, 4));
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = dim3((N + 127) / 128);
    cfg.blockDim = dim3(128);
    cfg.dynamicSmemBytes = 128 * sizeof(int);
    cudaLaunchAttribute attr[1];
    attr[0].id = cudaLaunchAttributeCooperative;
    attr[0].val.cooperative = 0;
    cfg.attrs = attr;
    cfg.numAttrs = 1;
    CK(cudaLaunchKernelEx(&cfg, sum, (const int *)d, out, n));
    CK(cudaMemcpy(&got, out, 4, cudaMemcpyDeviceToHost));
    printf("cudaLaunchKernelEx sum matches: %d\n", got == want);

    // Attributes.
    cudaFuncAttributes fa;
    CK(cudaFuncGetAttributes(&fa, sum));
    printf("sum: maxThreadsPerBlock %d, ptxVersion>0 %d\n", fa.maxThreadsPerBlock, fa.ptxVersion > 0);
    CK(cudaFuncSetAttribute(sum, cudaFuncAttributeMaxDynamicSharedMemorySize, 64 * 1024));
    CK(cudaFuncGetAttributes(&fa, sum));
    printf("sum: maxDynamicSharedSizeBytes %d\n", fa.maxDynamicSharedSizeBytes);
    CK(cudaFuncSetCacheConfig(sum, cudaFuncCachePreferShared));
    SHOW("attributes of a host function", cudaFuncGetAttributes(&fa, (const void *)&main));
    cudaGetLastError();
    SHOW("launch beyond the kernel's launch bounds", cudaLaunchKernel((const void *)sum, dim3(1), dim3(512), args, 0, 0));
    cudaGetLastError();

    // Occupancy, and the header's block-size helper built on it.
    int blocks = 0;
    CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, sum, 256, 256 * sizeof(int)));
    printf("occupancy blocks > 0: %d\n", blocks > 0);
    int min_grid = 0, block = 0;
    CK(cudaOccupancyMaxPotentialBlockSize(&min_grid, &block, sum, 0, 256));
    printf("potential block size in (0, 256]: %d\n", block > 0 && block <= 256);

    // A cooperative launch with a grid-wide barrier.
    int *total;
    CK(cudaMalloc(&total, 4));
    CK(cudaMemset(total, 0, 4));
    int coop = 0;
    CK(cudaDeviceGetAttribute(&coop, cudaDevAttrCooperativeLaunch, 0));
    void *cargs[] = {&d, &total, &n};
    CK(cudaLaunchCooperativeKernel((const void *)two_phase, dim3((N + 255) / 256), dim3(256), cargs, 0, 0));
    CK(cudaDeviceSynchronize());
    CK(cudaMemcpy(h, d, N * sizeof(int), cudaMemcpyDeviceToHost));
    printf("cooperative launch: every element is the total: %d\n", h[0] == want && h[N - 1] == want);
    CK(cudaFree(d));
    CK(cudaFree(out));
    CK(cudaFree(total));
    delete[] h;
    printf("launch: done\n");
    return 0;
}
