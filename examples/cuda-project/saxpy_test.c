/* The example project's test program: a plain CUDA driver-API client (as VMAF, FFmpeg
 * and most C projects are). It loads build/saxpy.fatbin (nvcc's output), runs saxpy and
 * block_sum on N elements, and checks every result against the same arithmetic on the
 * CPU: exit 0 when all match, 1 otherwise, 2 on a CUDA error.
 *   usage: saxpy_test FATBIN N  */
#include <cuda.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define CHECK(call)                                                                  \
    do {                                                                             \
        CUresult r_ = (call);                                                        \
        if (r_ != CUDA_SUCCESS) {                                                    \
            const char *s_ = "?";                                                    \
            cuGetErrorName(r_, &s_);                                                 \
            fprintf(stderr, "%s:%d: %s failed: %s (%d)\n", __FILE__, __LINE__, #call, s_, (int)r_); \
            return 2;                                                                \
        }                                                                            \
    } while (0)

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: %s FATBIN N\n", argv[0]);
        return 2;
    }
    int n = atoi(argv[2]);
    if (n < 1) {
        fprintf(stderr, "N must be at least 1\n");
        return 2;
    }
    size_t bytes = (size_t)n * sizeof(float);
    float *x = malloc(bytes), *y = malloc(bytes), *out = malloc(bytes);
    for (int i = 0; i < n; i++) {
        x[i] = (float)(i % 97) * 0.25f;
        y[i] = (float)(i % 13) - 6.0f;
    }
    CUdevice dev;
    CUcontext ctx;
    CUmodule mod;
    CUfunction saxpy, block_sum;
    CUdeviceptr dx, dy, dsum;
    CHECK(cuInit(0));
    CHECK(cuDeviceGet(&dev, 0));
    CHECK(cuDevicePrimaryCtxRetain(&ctx, dev));
    CHECK(cuCtxSetCurrent(ctx));
    CHECK(cuModuleLoad(&mod, argv[1]));
    CHECK(cuModuleGetFunction(&saxpy, mod, "saxpy"));
    CHECK(cuModuleGetFunction(&block_sum, mod, "block_sum"));
    CHECK(cuMemAlloc(&dx, bytes));
    CHECK(cuMemAlloc(&dy, bytes));
    CHECK(cuMemAlloc(&dsum, sizeof(float)));
    CHECK(cuMemcpyHtoD(dx, x, bytes));
    CHECK(cuMemcpyHtoD(dy, y, bytes));
    float a = 1.5f;
    void *args1[] = {&n, &a, &dx, &dy};
    CHECK(cuLaunchKernel(saxpy, (unsigned)((n + 255) / 256), 1, 1, 256, 1, 1, 0, NULL, args1, NULL));
    void *args2[] = {&n, &dx, &dsum};
    CHECK(cuLaunchKernel(block_sum, 1, 1, 1, 256, 1, 1, 0, NULL, args2, NULL));
    float sum;
    CHECK(cuMemcpyDtoH(out, dy, bytes));
    CHECK(cuMemcpyDtoH(&sum, dsum, sizeof(float)));
    int bad = 0;
    for (int i = 0; i < n; i++) {
        if (out[i] != fmaf(a, x[i], y[i])) {
            if (bad++ < 5) fprintf(stderr, "y[%d] = %.9g, expected %.9g\n", i, out[i], fmaf(a, x[i], y[i]));
        }
    }
    /* block_sum's order: per-thread strided sums, a tree over 256 partials, then the
     * shuffle tail, done the same way here. */
    float part[256];
    for (int t = 0; t < 256; t++) {
        part[t] = 0.0f;
        for (int i = t; i < n; i += 256) part[t] += x[i];
    }
    for (int w = 128; w >= 32; w /= 2)
        for (int t = 0; t < w; t++) part[t] += part[t + w];
    for (int o = 16; o > 0; o /= 2)
        for (int t = 0; t < 32; t++) part[t] += (t + o < 32) ? part[t + o] : part[t];
    if (sum != part[0]) {
        fprintf(stderr, "block_sum = %.9g, expected %.9g\n", sum, part[0]);
        bad++;
    }
    CHECK(cuMemFree(dx));
    CHECK(cuMemFree(dy));
    CHECK(cuMemFree(dsum));
    CHECK(cuModuleUnload(mod));
    CHECK(cuDevicePrimaryCtxRelease(dev));
    printf("saxpy_test n=%d: %s\n", n, bad ? "FAIL" : "ok");
    return bad ? 1 : 0;
}
