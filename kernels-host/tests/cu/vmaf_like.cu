// The patterns of real VMAF CUDA kernels: own header, templates behind extern "C"
// wrappers, double precision, __log2f, __float2uint_ru, __clz/__clzll, 64-bit atomicAdd,
// warp shuffles and block barriers routed through the runtime.
#include "vmaf_like/common.cuh"

template <int BPC>
__device__ void sse_line(const uint16_t *ref, const uint16_t *dis, unsigned long long *sse, int w) {
    uint32_t acc = 0;
    for (int x = 0; x < w; ++x) {
        int32_t d = (int32_t)ref[x] - (int32_t)dis[x];
        acc += (uint32_t)(d * d) >> (BPC - 8);
    }
    acc = warp_reduce(acc);
    __syncthreads();
    if (threadIdx.x % 32 == 0) atomicAdd(sse, (unsigned long long)acc);
}

extern "C" {
__global__ void sse_8bpc(const uint16_t *ref, const uint16_t *dis, unsigned long long *sse, int w) {
    sse_line<8>(ref, dis, sse, w);
}
__global__ void sse_10bpc(const uint16_t *ref, const uint16_t *dis, unsigned long long *sse, int w) {
    sse_line<10>(ref, dis, sse, w);
}
__global__ void stats(float x, double y, unsigned *out) {
    out[0] = __float2uint_ru(__log2f(x) * 256.0f);
    out[1] = (unsigned)__clz((int)out[0]) + (unsigned)__clzll(0ll) + log2_table[3];
    double r = y * y + 1.0 / 3.0;
    unsigned long long b = (unsigned long long)__double_as_longlong(r);
    out[2] = (unsigned)(b >> 32);
    out[3] = (unsigned)__syncthreads_count(1) + __ballot_sync(0xffffffffu, 1) + __activemask();
}
}
