// Sample module for the image-parser tests: the shapes a VMAF-style feature module has
// (extern "C" kernels, a C++ template kernel, __launch_bounds__, static shared memory,
// a by-value struct parameter, __constant__ tables and __device__ globals).
// Built into tests/corpus/image/ by tests/cu/images/build.sh.

struct Dims {
    int w, h, stride;
    float scale;
};

__constant__ float c_weights[16] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
__constant__ unsigned int c_lut[64];
__device__ unsigned long long d_total;
__device__ float d_hist[256];

// 64 registers at most per thread: __launch_bounds__(256) caps the block size.
extern "C" __global__ void __launch_bounds__(256)
feature_sum(const float *__restrict__ src, Dims dims, unsigned long long *out)
{
    __shared__ float tile[256];
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    float v = 0.f;
    if (x < dims.w * dims.h)
        v = src[x] * dims.scale * c_weights[x & 15];
    tile[threadIdx.x] = v;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s)
            tile[threadIdx.x] += tile[threadIdx.x + s];
        __syncthreads();
    }
    if (threadIdx.x == 0) {
        atomicAdd(out, (unsigned long long)tile[0]);
        atomicAdd(&d_total, 1ull);
    }
}

// A dynamically indexed local array keeps a local (stack) frame.
extern "C" __global__ void histogram(const unsigned char *src, int n, int pick)
{
    extern __shared__ unsigned int bins[];
    unsigned int local[32];
    for (int i = 0; i < 32; ++i)
        local[i] = c_lut[(i + pick) & 63];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        atomicAdd(&bins[src[i]], local[(src[i] + pick) & 31]);
        atomicAdd(&d_hist[src[i]], 1.0f);
    }
}

template <typename T, int N>
__global__ void scale_kernel(T *data, T factor, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        data[i] = data[i] * factor + (T)N;
}

template __global__ void scale_kernel<float, 2>(float *, float, int);
template __global__ void scale_kernel<double, 3>(double *, double, int);

// Fixed block size (.reqntid in PTX, EIATTR_REQNTID in the cubin).
extern "C" __global__ void __launch_bounds__(128, 4) bounded(int *p)
{
    p[threadIdx.x] += 1;
}
