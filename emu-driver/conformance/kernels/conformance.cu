// Test kernels for driver-conformance. Built twice: by nvcc into a fatbin with an sm_90
// cubin (for the real driver, and as the module image the emulated driver parses), and by
// `kernels-host build` into a host kernel library (what the emulated driver runs).
//
// Every entry is extern "C" so the runner can look it up by a plain name.
#include <cassert>

// 32 words, initialised in the source: cuModuleGetGlobal_v2 reports 128 bytes.
__constant__ unsigned c_table[32] = {
    0x00000001u, 0x00000003u, 0x00000007u, 0x0000000fu, 0x0000001fu, 0x0000003fu, 0x0000007fu, 0x000000ffu,
    0x9e3779b9u, 0x7f4a7c15u, 0xf39cc060u, 0x5ced1ef2u, 0x85ebca6bu, 0xc2b2ae35u, 0x27d4eb2fu, 0x165667b1u,
    0xdeadbeefu, 0xcafebabeu, 0x0badf00du, 0xfeedfaceu, 0x12345678u, 0x9abcdef0u, 0x0f1e2d3cu, 0x4b5a6978u,
    0x80000000u, 0x40000000u, 0x20000000u, 0x10000000u, 0x08000000u, 0x04000000u, 0x02000000u, 0x01000000u,
};

// A __device__ variable the host writes through cuModuleGetGlobal_v2 + cuMemcpyHtoD.
__device__ unsigned d_bias;

// out[i] = i * 2654435761 + d_bias, for i < n.
extern "C" __global__ void fill_hash(unsigned *out, unsigned n)
{
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = i * 2654435761u + d_bias;
}

// Per-block sum of in[] through dynamic shared memory and a barrier tree.
// Needs blockDim.x a power of two and blockDim.x * 4 bytes of dynamic shared memory.
extern "C" __global__ void block_sum(const unsigned *in, unsigned *out)
{
    extern __shared__ unsigned s_buf[];
    unsigned t = threadIdx.x;
    s_buf[t] = in[blockIdx.x * blockDim.x + t];
    __syncthreads();
    for (unsigned half = blockDim.x / 2; half > 0; half /= 2) {
        if (t < half)
            s_buf[t] += s_buf[t + half];
        __syncthreads();
    }
    if (t == 0)
        out[blockIdx.x] = s_buf[0];
}

// out[i] = c_table[i % 32] ^ i.
extern "C" __global__ void const_lookup(unsigned *out, unsigned n)
{
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = c_table[i % 32] ^ i;
}

// At most 128 threads per block: cuFuncGetAttribute(MAX_THREADS_PER_BLOCK) answers 128;
// 2048 bytes of static shared memory: SHARED_SIZE_BYTES answers 2048.
extern "C" __global__ void __launch_bounds__(128) bounded(unsigned *out)
{
    __shared__ unsigned s_words[512];
    unsigned t = threadIdx.x;
    for (unsigned k = t; k < 512; k += blockDim.x)
        s_words[k] = k * 3u + 1u;
    __syncthreads();
    out[blockIdx.x * blockDim.x + t] = s_words[(t * 5u) % 512u];
}

// 40 KiB of static shared memory: with dynamic shared memory on top the 48 KiB limit
// is crossed sooner.
extern "C" __global__ void big_static(unsigned *out)
{
    __shared__ unsigned s_big[10240];
    unsigned t = threadIdx.x;
    for (unsigned k = t; k < 10240; k += blockDim.x)
        s_big[k] = k;
    __syncthreads();
    out[t] = s_big[(t * 37) % 10240];
}

// Uses whatever dynamic shared memory it is given: writes its size in words to out[0].
extern "C" __global__ void dyn_shared(unsigned *out, unsigned words)
{
    extern __shared__ unsigned s_dyn[];
    unsigned t = threadIdx.x;
    for (unsigned k = t; k < words; k += blockDim.x)
        s_dyn[k] = k;
    __syncthreads();
    if (t == 0) {
        unsigned acc = 0;
        for (unsigned k = 0; k < words; ++k)
            acc += s_dyn[k];
        out[0] = acc;
    }
}

// Mixed, differently aligned parameters: checks kernelParams and the `extra` buffer.
// out[0] = a, out[1..2] = bits of b, out[3] = c, out[4] = d.
extern "C" __global__ void mixed_params(char a, double b, short c, unsigned *out, unsigned d)
{
    if (threadIdx.x == 0 && blockIdx.x == 0) {
        unsigned long long bits = (unsigned long long)__double_as_longlong(b);
        out[0] = (unsigned)(int)a;
        out[1] = (unsigned)(bits & 0xffffffffu);
        out[2] = (unsigned)(bits >> 32);
        out[3] = (unsigned)(int)c;
        out[4] = d;
    }
}

// Device-side assert: fails when flag != 0 (-> CUDA_ERROR_ASSERT, sticky).
extern "C" __global__ void assert_kernel(int flag)
{
    assert(flag == 0);
}

// Writes through the pointer it is given (a wild one -> CUDA_ERROR_ILLEGAL_ADDRESS).
extern "C" __global__ void poke(unsigned *p)
{
    if (threadIdx.x == 0 && blockIdx.x == 0)
        *p = 0x600dcafeu;
}
