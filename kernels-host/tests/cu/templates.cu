// Kernel naming: templates with explicit instantiations, extern "C" wrappers, namespaces,
// static kernels, launch bounds from template arguments.
#include <cuda_runtime.h>
#include <cuda_fp16.h>

template <typename T, int BLOCK>
__global__ void __launch_bounds__(BLOCK, 2) fill(T *p, T v, int n) {
    int i = blockIdx.x * BLOCK + threadIdx.x;
    if (i < n) p[i] = v;
}
template __global__ void fill<float, 128>(float *, float, int);
template __global__ void fill<unsigned short, 64>(unsigned short *, unsigned short, int);

template <int CHROMA> __device__ void body(unsigned *out) { out[0] = CHROMA * 10 + __popc(0xffu); }
extern "C" {
__global__ void body_luma(unsigned *out) { body<0>(out); }
__global__ void __launch_bounds__(256) body_chroma(unsigned *out) { body<1>(out); }
}
namespace feat {
namespace detail {
__global__ void vec(float4 *a, const uchar2 *b, dim3 d, __half h) { a[0].x = (float)b[0].x + d.x + __half2float(h); }
}
}
static __global__ void hidden_kernel(int *p) { *p = 5; }
__global__ void overloaded(int *p) { *p = 1; }
__global__ void overloaded(float *p) { *p = 2.0f; }
