// Type punning as real CUDA code does it (upstream-fork VMAF's filter1d.cu): a vector
// loaded as uint2 and read back through a uint16_t pointer, and a uint32_t array stored
// as uint2. C++ calls both undefined (strict aliasing) and g++ -O2 drops the punned
// reads; nvcc's device code reads the bytes that were stored, and so must the twin.
#include <cuda.h>
#include <stdint.h>

extern "C" __global__ void pun_load(const uint16_t *in, uint16_t *out) {
    const int i = threadIdx.x * 4;
    const uint2 v = *reinterpret_cast<const uint2 *>(&in[i]);
    const uint16_t *s = reinterpret_cast<const uint16_t *>(&v);
    for (int k = 0; k < 4; ++k)
        out[i + k] = (uint16_t)(s[k] + 1);
}

extern "C" __global__ void pun_store(uint32_t *out, int n) {
    __align__(8) uint32_t acc[2] = {0, 0};
    for (int k = 0; k < n; ++k) {
        acc[0] += (uint32_t)k + threadIdx.x;
        acc[1] += 3u * (uint32_t)k;
    }
    acc[0] = (acc[0] + 128) >> 1;
    *reinterpret_cast<uint2 *>(&out[2 * threadIdx.x]) = *reinterpret_cast<uint2 *>(&acc[0]);
}
