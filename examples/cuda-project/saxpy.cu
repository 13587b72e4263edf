// The kernel of the example project: y = a*x + y, fused as the device does it.
extern "C" __global__ void saxpy(int n, float a, const float *x, float *y) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        y[i] = fmaf(a, x[i], y[i]);
    }
}

// Sum of a vector, one block: a shared-memory tree and a warp-shuffle tail.
extern "C" __global__ void block_sum(int n, const float *x, float *out) {
    __shared__ float s[256];
    float v = 0.0f;
    for (int i = threadIdx.x; i < n; i += blockDim.x) {
        v += x[i];
    }
    s[threadIdx.x] = v;
    __syncthreads();
    for (int w = blockDim.x / 2; w >= 32; w /= 2) {
        if (threadIdx.x < w) {
            s[threadIdx.x] += s[threadIdx.x + w];
        }
        __syncthreads();
    }
    if (threadIdx.x < 32) {
        v = s[threadIdx.x];
        for (int o = 16; o > 0; o /= 2) {
            v += __shfl_down_sync(0xffffffffu, v, o);
        }
        if (threadIdx.x == 0) {
            *out = v;
        }
    }
}
