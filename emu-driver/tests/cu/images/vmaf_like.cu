// A small module shaped like a VMAF CUDA feature module (extern "C" wrappers around a
// template, a __constant__ table, 64-bit atomics). Built into a 9-entry fatbin the way
// VMAF's build does: cubins sm_75..sm_120 plus zstd-compressed PTX for compute_80 and
// compute_120 (see build.sh).

__constant__ unsigned short c_gauss[5] = {1, 4, 6, 4, 1};

template <int SHIFT>
__device__ void sad_row(const unsigned char *a, const unsigned char *b, int w,
                        unsigned long long *sad)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    if (x < w) {
        int d = (int)a[x] - (int)b[x];
        atomicAdd(sad, (unsigned long long)((d < 0 ? -d : d) * c_gauss[x % 5]) >> SHIFT);
    }
}

extern "C" {
__global__ void calculate_motion_score_kernel_8bpc(const unsigned char *a, const unsigned char *b,
                                                   int w, unsigned long long *sad)
{
    sad_row<0>(a, b, w, sad);
}

__global__ void calculate_motion_score_kernel_16bpc(const unsigned char *a, const unsigned char *b,
                                                    int w, unsigned long long *sad)
{
    sad_row<2>(a, b, w, sad);
}
}
