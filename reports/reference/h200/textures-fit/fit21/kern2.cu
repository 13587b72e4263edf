// Fit 21 extension: the whole result register of element-type reads (see probe2.cpp).
extern "C" __global__ void g_s(cudaTextureObject_t t, const float2 *xy, int4 *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = tex2D<int4>(t, xy[i].x, xy[i].y);
}
extern "C" __global__ void g_u(cudaTextureObject_t t, const float2 *xy, uint4 *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = tex2D<uint4>(t, xy[i].x, xy[i].y);
}
