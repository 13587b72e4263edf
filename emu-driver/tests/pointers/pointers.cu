// Kernels for the pointer-confusion tests (tests/pointers.rs): device memory under
// EMU_CUDA_CHECKS=pointers, zero-copy arguments, guard pages in the arena.

// v[i] += 1 for i < n.
extern "C" __global__ void add_one(int *v, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) v[i] += 1;
}

// Adds the row index to every element of a pitched w x h matrix of ints.
extern "C" __global__ void add_row(char *m, size_t pitch, int w, int h) {
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y;
    if (x < w && y < h) ((int *)(m + y * pitch))[x] += y;
}

// *out = *p: p may be device, pinned host or managed memory.
extern "C" __global__ void read_at(const int *p, int *out) {
    if (threadIdx.x == 0 && blockIdx.x == 0) *out = *p;
}

// A pointer inside a struct passed by value.
struct Ref {
    int tag;
    const int *p;
};
extern "C" __global__ void read_struct(Ref r, int *out) {
    if (threadIdx.x == 0 && blockIdx.x == 0) *out = *r.p + r.tag;
}

// Writes out[i] = i for i in [0, n + extra): `extra` elements past the end.
extern "C" __global__ void fill(int *out, int n, int extra) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n + extra) out[i] = i;
}
