// The example extractor's kernel: the luma plane's sum of squared and of absolute
// differences, 64-bit integers (exact, the same in any block order).
extern "C" __global__ void plane_diff(const unsigned char *a, const unsigned char *b, int n, unsigned long long *sse, unsigned long long *sad) {
    unsigned long long s2 = 0, s1 = 0;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        int d = (int)a[i] - (int)b[i];
        s2 += (unsigned long long)(d * d);
        s1 += (unsigned long long)(d < 0 ? -d : d);
    }
    for (int o = 16; o > 0; o /= 2) {
        s2 += __shfl_down_sync(0xffffffffu, s2, o);
        s1 += __shfl_down_sync(0xffffffffu, s1, o);
    }
    if ((threadIdx.x & 31) == 0) {
        atomicAdd(sse, s2);
        atomicAdd(sad, s1);
    }
}
