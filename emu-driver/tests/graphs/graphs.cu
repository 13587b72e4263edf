// Kernels of the graph tests (tests/graphs.rs): a diamond of integer work, so that every
// way of running it (directly, a graph built by hand, a captured graph) must give the
// same bytes.
extern "C" __global__ void scale(const int *in, int *x, int k, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = in[i] * k;
}

extern "C" __global__ void offset(const int *in, int *y, int k, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = in[i] + k;
}

extern "C" __global__ void combine(const int *x, const int *y, const int *z, int *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = x[i] * y[i] + z[i];
}
