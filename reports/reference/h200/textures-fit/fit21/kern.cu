// Element-type reads with linear filtering (see probe.cpp).
#include <cstdint>
template <class T>
__device__ void fetch(cudaTextureObject_t t, const float2 *xy, long long *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = (long long)tex2D<T>(t, xy[i].x, xy[i].y);
}
extern "C" __global__ void f_u8(cudaTextureObject_t t, const float2 *xy, long long *o, int n) { fetch<unsigned char>(t, xy, o, n); }
extern "C" __global__ void f_s8(cudaTextureObject_t t, const float2 *xy, long long *o, int n) { fetch<signed char>(t, xy, o, n); }
extern "C" __global__ void f_u16(cudaTextureObject_t t, const float2 *xy, long long *o, int n) { fetch<unsigned short>(t, xy, o, n); }
extern "C" __global__ void f_s16(cudaTextureObject_t t, const float2 *xy, long long *o, int n) { fetch<short>(t, xy, o, n); }
extern "C" __global__ void f_u32(cudaTextureObject_t t, const float2 *xy, long long *o, int n) { fetch<unsigned int>(t, xy, o, n); }
extern "C" __global__ void f_s32(cudaTextureObject_t t, const float2 *xy, long long *o, int n) { fetch<int>(t, xy, o, n); }
