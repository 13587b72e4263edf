// A header as real feature kernels have it: CUDA headers only under DEVICE_CODE.
#pragma once
#ifdef DEVICE_CODE
#include <cuda.h>
#include <cuda_runtime.h>
#endif
#include <stdint.h>

__constant__ uint16_t log2_table[4] = {0, 256, 406, 512};

__device__ __forceinline__ uint32_t warp_reduce(uint32_t v) {
    for (int off = 16; off > 0; off >>= 1) v += __shfl_down_sync(0xffffffffu, v, off);
    return v;
}
