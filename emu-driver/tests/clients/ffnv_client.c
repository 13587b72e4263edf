/* A driver-API client written the way FFmpeg's CUDA code is: every entry point comes from
 * nv-codec-headers' cuda_load_functions (dlopen("libcuda.so.1") + dlsym), a few more are
 * looked up on the loader's handle, and cuda_free_functions dlcloses the library at the
 * end. Runs the kernels of kernels.cu from the fatbin given as argv[1] and checks every
 * result bit for bit against a CPU computation. Exit 0 only if everything matches. */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ffnvcodec/dynlink_loader.h>

#define N 4096u
#define BLOCK 256u

typedef CUresult CUDAAPI tStreamCreateWithPriority(CUstream *, unsigned, int);
typedef CUresult CUDAAPI tGetStreamPriorityRange(int *, int *);
typedef CUresult CUDAAPI tMemHostAlloc(void **, size_t, unsigned);
typedef CUresult CUDAAPI tMemFreeHost(void *);
typedef CUresult CUDAAPI tCtxSynchronize(void);
typedef CUresult CUDAAPI tStreamWaitEvent(CUstream, CUevent, unsigned);
typedef CUresult CUDAAPI tModuleGetGlobal_v2(CUdeviceptr *, size_t *, CUmodule, const char *);

static CudaFunctions *cu;
static int failures;

#define CK(call) do { CUresult r_ = (call); if (r_ != CUDA_SUCCESS) { \
    const char *n_ = "?"; cu->cuGetErrorName(r_, &n_); \
    fprintf(stderr, "ffnv_client: %s failed: %d %s (line %d)\n", #call, (int)r_, n_, __LINE__); \
    exit(2); } } while (0)

static void *sym(const char *name)
{
    void *p = dlsym(cu->lib, name);
    if (!p) {
        fprintf(stderr, "ffnv_client: %s not exported\n", name);
        exit(2);
    }
    return p;
}

static void check(const char *what, int ok)
{
    printf("%s: %s\n", what, ok ? "ok" : "MISMATCH");
    if (!ok)
        failures++;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: ffnv_client KERNELS.fatbin\n");
        return 2;
    }
    FILE *f = fopen(argv[1], "rb");
    if (!f) { perror(argv[1]); return 2; }
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *image = calloc(1, (size_t)len + 16);
    if (fread(image, 1, (size_t)len, f) != (size_t)len) { perror("read"); return 2; }
    fclose(f);

    if (cuda_load_functions(&cu, NULL) != 0) {
        fprintf(stderr, "ffnv_client: cuda_load_functions failed\n");
        return 2;
    }
    tStreamCreateWithPriority *StreamCreateWithPriority = sym("cuStreamCreateWithPriority");
    tGetStreamPriorityRange *GetStreamPriorityRange = sym("cuCtxGetStreamPriorityRange");
    tMemHostAlloc *MemHostAlloc = sym("cuMemHostAlloc");
    tMemFreeHost *MemFreeHost = sym("cuMemFreeHost");
    tCtxSynchronize *CtxSynchronize = sym("cuCtxSynchronize");
    tStreamWaitEvent *StreamWaitEvent = sym("cuStreamWaitEvent");
    tModuleGetGlobal_v2 *ModuleGetGlobal_v2 = sym("cuModuleGetGlobal_v2");

    CUdevice dev;
    CUcontext ctx, dummy;
    CK(cu->cuInit(0));
    CK(cu->cuDeviceGet(&dev, 0));
    char name[128];
    CK(cu->cuDeviceGetName(name, sizeof name, dev));
    int major = 0, minor = 0;
    CK(cu->cuDeviceComputeCapability(&major, &minor, dev));
    fprintf(stderr, "ffnv_client: device %s sm_%d%d\n", name, major, minor);
    CK(cu->cuCtxCreate(&ctx, 0, dev));

    int least, greatest;
    CK(GetStreamPriorityRange(&least, &greatest));
    CUstream s1, s2;
    CK(StreamCreateWithPriority(&s1, CU_STREAM_NON_BLOCKING, greatest));
    CK(cu->cuStreamCreate(&s2, CU_STREAM_NON_BLOCKING));
    CUevent done;
    CK(cu->cuEventCreate(&done, CU_EVENT_DISABLE_TIMING));

    CUmodule mod;
    CK(cu->cuModuleLoadData(&mod, image));
    CUfunction k_scan, k_total, k_stats, k_weigh;
    CK(cu->cuModuleGetFunction(&k_scan, mod, "warp_scan"));
    CK(cu->cuModuleGetFunction(&k_total, mod, "block_total"));
    CK(cu->cuModuleGetFunction(&k_stats, mod, "ballot_stats"));
    CK(cu->cuModuleGetFunction(&k_weigh, mod, "weigh"));

    /* The weights: read back as initialised in the source, then replaced. */
    CUdeviceptr d_w;
    size_t w_size = 0;
    CK(ModuleGetGlobal_v2(&d_w, &w_size, mod, "c_weights"));
    check("c_weights size", w_size == 64);
    unsigned w0[16], w[16];
    CK(cu->cuMemcpyDtoH(w0, d_w, sizeof w0));
    static const unsigned primes[16] = {3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41, 43, 47, 53, 59};
    check("c_weights initial", memcmp(w0, primes, sizeof w0) == 0);
    for (unsigned k = 0; k < 16; k++)
        w[k] = 0x9e3779b9u * (k + 1) ^ (k << 7);
    CK(cu->cuMemcpyHtoD(d_w, w, sizeof w));

    unsigned *in;
    CK(MemHostAlloc((void **)&in, N * 4, 0));
    uint32_t x = 12345;
    for (unsigned i = 0; i < N; i++) {
        x = x * 1664525u + 1013904223u;
        in[i] = x >> 8;
    }

    CUdeviceptr d_in, d_scan, d_total, d_counts, d_weigh;
    CK(cu->cuMemAlloc(&d_in, N * 4));
    CK(cu->cuMemAlloc(&d_scan, N * 4));
    CK(cu->cuMemAlloc(&d_total, 8));
    CK(cu->cuMemAlloc(&d_counts, 12));
    CK(cu->cuMemAlloc(&d_weigh, N * 4));
    CK(cu->cuMemcpyHtoDAsync(d_in, in, N * 4, s1));
    CK(cu->cuMemsetD8Async(d_total, 0, 8, s1));
    CK(cu->cuMemsetD8Async(d_counts, 0, 12, s1));

    unsigned n = N;
    void *p_scan[] = {&d_in, &d_scan, &n};
    void *p_total[] = {&d_in, &d_total, &n};
    void *p_stats[] = {&d_in, &d_counts, &n};
    void *p_weigh[] = {&d_in, &d_weigh, &n};
    CK(cu->cuLaunchKernel(k_scan, N / BLOCK, 1, 1, BLOCK, 1, 1, 0, s1, p_scan, NULL));
    CK(cu->cuLaunchKernel(k_total, N / BLOCK, 1, 1, BLOCK, 1, 1, BLOCK * 4, s1, p_total, NULL));
    CK(cu->cuLaunchKernel(k_stats, N / BLOCK, 1, 1, BLOCK, 1, 1, 0, s1, p_stats, NULL));
    CK(cu->cuLaunchKernel(k_weigh, N / BLOCK, 1, 1, BLOCK, 1, 1, 0, s1, p_weigh, NULL));
    CK(cu->cuEventRecord(done, s1));
    CK(StreamWaitEvent(s2, done, 0));

    unsigned *scan = malloc(N * 4), *weigh = malloc(N * 4), counts[3];
    unsigned long long total;
    CK(cu->cuMemcpyDtoHAsync(scan, d_scan, N * 4, s2));
    CK(cu->cuMemcpyDtoHAsync(&total, d_total, 8, s2));
    CK(cu->cuMemcpyDtoHAsync(counts, d_counts, 12, s2));
    CK(cu->cuMemcpyDtoHAsync(weigh, d_weigh, N * 4, s2));
    CK(cu->cuStreamSynchronize(s2));
    CK(CtxSynchronize());

    /* CPU reference. */
    int ok = 1;
    unsigned long long want_total = 0;
    unsigned odd = 0, mx = 0, xr = 0;
    for (unsigned i = 0; i < N; i += 32) {
        unsigned acc = 0, wm = 0;
        for (unsigned l = 0; l < 32; l++) {
            unsigned v = in[i + l];
            acc += v;
            if (scan[i + l] != acc)
                ok = 0;
            want_total += v;
            odd += v & 1u;
            if (v > mx) mx = v;
            if (v > wm) wm = v;
        }
        xr ^= wm;
    }
    check("warp_scan", ok);
    check("block_total", total == want_total);
    check("ballot_stats", counts[0] == odd && counts[1] == mx && counts[2] == xr);
    ok = 1;
    for (unsigned i = 0; i < N; i++)
        if (weigh[i] != in[i] * w[i % 16] + (in[i] >> 3))
            ok = 0;
    check("weigh", ok);

    CK(cu->cuMemFree(d_in));
    CK(cu->cuMemFree(d_scan));
    CK(cu->cuMemFree(d_total));
    CK(cu->cuMemFree(d_counts));
    CK(cu->cuMemFree(d_weigh));
    CK(MemFreeHost(in));
    CK(cu->cuEventDestroy(done));
    CK(cu->cuStreamDestroy(s1));
    CK(cu->cuStreamDestroy(s2));
    CK(cu->cuModuleUnload(mod));
    CK(cu->cuCtxPopCurrent(&dummy));
    CK(cu->cuCtxDestroy(ctx));
    cuda_free_functions(&cu);
    free(scan);
    free(weigh);
    free(image);
    printf("ffnv_client: %s\n", failures ? "FAILED" : "all results match");
    return failures ? 1 : 0;
}
