// 48 KiB of static shared memory: the kernel library's own TLS block is that large, which
// must not keep it from loading (the context slot's initial-exec TLS lives elsewhere).
#include <cuda_runtime.h>
extern "C" __global__ void big(float *out) {
    __shared__ float tile[12288];
    tile[threadIdx.x] = (float)threadIdx.x;
    tile[12287 - threadIdx.x] = 1.0f;
    out[threadIdx.x] = tile[threadIdx.x] * 2.0f + tile[12287 - threadIdx.x];
}
