// cudaGetDeviceProperties agrees with cudaDeviceGetAttribute field for field.
#include "check.h"
#include <cstring>

int main() {
    cudaDeviceProp p;
    memset(&p, 0xa5, sizeof p);
    CK(cudaGetDeviceProperties(&p, 0));
    int a = 0;
#define SAME(field, attr)                                       \
    CK(cudaDeviceGetAttribute(&a, attr, 0));                    \
    if ((long long)p.field != (long long)a) {                   \
        printf("FAIL %s = %lld, attribute %d\n", #field, (long long)p.field, a); \
        return 1;                                               \
    }
    SAME(maxThreadsPerBlock, cudaDevAttrMaxThreadsPerBlock);
    SAME(maxThreadsDim[2], cudaDevAttrMaxBlockDimZ);
    SAME(maxGridSize[1], cudaDevAttrMaxGridDimY);
    SAME(sharedMemPerBlock, cudaDevAttrMaxSharedMemoryPerBlock);
    SAME(warpSize, cudaDevAttrWarpSize);
    SAME(major, cudaDevAttrComputeCapabilityMajor);
    SAME(minor, cudaDevAttrComputeCapabilityMinor);
    SAME(multiProcessorCount, cudaDevAttrMultiProcessorCount);
    SAME(l2CacheSize, cudaDevAttrL2CacheSize);
    SAME(maxThreadsPerMultiProcessor, cudaDevAttrMaxThreadsPerMultiProcessor);
    SAME(sharedMemPerBlockOptin, cudaDevAttrMaxSharedMemoryPerBlockOptin);
    SAME(maxBlocksPerMultiProcessor, cudaDevAttrMaxBlocksPerMultiprocessor);
    SAME(cooperativeLaunch, cudaDevAttrCooperativeLaunch);
    SAME(pciBusID, cudaDevAttrPciBusId);
    SAME(maxSurface2D[1], cudaDevAttrMaxSurface2DHeight);
    SAME(memoryPoolsSupported, cudaDevAttrMemoryPoolsSupported);
    SAME(hostNumaMultinodeIpcSupported, cudaDevAttrHostNumaMultinodeIpcSupported);
    printf("name: %s\n", p.name);
    printf("compute capability: %d.%d, SMs: %d, warp: %d, totalGlobalMem > 0: %d\n", p.major, p.minor, p.multiProcessorCount, p.warpSize, p.totalGlobalMem > 0);
    SHOW("properties of device 7", cudaGetDeviceProperties(&p, 7));
    SHOW("attribute of device -1", cudaDeviceGetAttribute(&a, cudaDevAttrWarpSize, -1));
    CK(cudaDeviceReset());
    // The runtime starts again after a reset.
    int *d;
    CK(cudaMalloc(&d, 16));
    CK(cudaMemset(d, 1, 16));
    CK(cudaFree(d));
    printf("props: done\n");
    return 0;
}
