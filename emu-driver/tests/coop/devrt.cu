// A kernel that calls the CUDA device runtime's cooperative-groups entry points itself,
// as numba-cuda's grid groups do: compiled with -rdc=true, they stay undefined in its PTX
// until the link finds them in libcudadevrt.a (tests/coop.rs, client.c `link`). The
// CUDA headers declare both (cuda_device_runtime_api.h).

extern "C" __global__ void devrt_rotate(unsigned *data, unsigned *out, int *status) {
    unsigned long long h = cudaCGGetIntrinsicHandle(cudaCGScopeGrid);
    unsigned n = gridDim.x * blockDim.x, r = blockIdx.x * blockDim.x + threadIdx.x;
    data[r] = r * 3u + 1u;
    int s = (int)cudaCGSynchronize(h, 0);
    out[r] = data[(r + blockDim.x) % n];
    if (r == 0) *status = s;
}
