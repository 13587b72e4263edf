// Separate compilation (nvcc -rdc=true -ptx): the kernel calls a function defined in
// link_b.cu; cuLink* joins the two PTX modules (emu-driver/tests/ptx_mode.rs).
extern __device__ int scale(int x);
extern __device__ int bias;
extern "C" __global__ void apply(const int *in, int *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = scale(in[i]) + bias;
}
