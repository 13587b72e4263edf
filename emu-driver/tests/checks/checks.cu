// Small kernels for the checking modes (tests/checks.rs): each one misbehaves in one way.

// Writes out[i] = i for i in [0, n + extra): `extra` elements past the end.
extern "C" __global__ void overrun(int *out, int n, int extra) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n + extra) out[i] = i;
}

// Reads a pointer the host passes (host memory, a freed buffer, anything).
extern "C" __global__ void read_at(const int *p, int *out) {
    if (threadIdx.x == 0 && blockIdx.x == 0) *out = *p;
}

// Doubles every element: used to see a result before and after synchronisation.
extern "C" __global__ void twice(int *v, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) v[i] = 2 * v[i];
}
