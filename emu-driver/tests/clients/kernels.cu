// Kernels shared by the client programs (ffnv_client.c, cudarc-client). Built by nvcc into
// a fatbin (the module image) and by kernels-host into a host library (what the emulated
// driver runs). Each client recomputes every result on the CPU and compares bit for bit.

// Weights initialised in the source; ffnv_client overwrites them through
// cuModuleGetGlobal_v2 + cuMemcpyHtoD_v2, cudarc-client uses them as they are.
__constant__ unsigned c_weights[16] = {
    3u, 5u, 7u, 11u, 13u, 17u, 19u, 23u, 29u, 31u, 37u, 41u, 43u, 47u, 53u, 59u,
};

// Per-warp inclusive prefix sum with __shfl_up_sync; out[i] = sum of in[warp start .. i].
extern "C" __global__ void warp_scan(const unsigned *in, unsigned *out, unsigned n)
{
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned lane = threadIdx.x & 31u;
    unsigned v = i < n ? in[i] : 0u;
    for (unsigned d = 1; d < 32; d *= 2) {
        unsigned up = __shfl_up_sync(0xffffffffu, v, d);
        if (lane >= d)
            v += up;
    }
    if (i < n)
        out[i] = v;
}

// Block sum through dynamic shared memory and __syncthreads, then a 64-bit atomicAdd
// into *total. Needs blockDim.x a power of two and blockDim.x * 4 bytes of dynamic shared.
extern "C" __global__ void block_total(const unsigned *in, unsigned long long *total, unsigned n)
{
    extern __shared__ unsigned s_part[];
    unsigned t = threadIdx.x;
    unsigned i = blockIdx.x * blockDim.x + t;
    s_part[t] = i < n ? in[i] : 0u;
    __syncthreads();
    for (unsigned half = blockDim.x / 2; half > 0; half /= 2) {
        if (t < half)
            s_part[t] += s_part[t + half];
        __syncthreads();
    }
    if (t == 0)
        atomicAdd(total, (unsigned long long)s_part[0]);
}

// counts[0] += number of odd inputs (ballot + popc per warp), counts[1] = max input
// (atomicMax), counts[2] = xor of butterfly-reduced warp maxima (__shfl_xor_sync).
extern "C" __global__ void ballot_stats(const unsigned *in, unsigned *counts, unsigned n)
{
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned v = i < n ? in[i] : 0u;
    unsigned odd = __ballot_sync(0xffffffffu, i < n && (v & 1u));
    unsigned m = v;
    for (unsigned d = 16; d > 0; d /= 2) {
        unsigned o = __shfl_xor_sync(0xffffffffu, m, d);
        m = o > m ? o : m;
    }
    if ((threadIdx.x & 31u) == 0) {
        atomicAdd(&counts[0], (unsigned)__popc(odd));
        atomicXor(&counts[2], m);
    }
    atomicMax(&counts[1], v);
}

// out[i] = in[i] * c_weights[i % 16] + (in[i] >> 3).
extern "C" __global__ void weigh(const unsigned *in, unsigned *out, unsigned n)
{
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = in[i] * c_weights[i % 16u] + (in[i] >> 3);
}
