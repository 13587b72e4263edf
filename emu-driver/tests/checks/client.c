/* Driver-API client for the checking-mode tests (tests/checks.rs): `client FATBIN MODE`
 * runs one scenario and prints `key=value` lines (codes are CUresults). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../client_support/client.h"

int main(int argc, char **argv) {
    setvbuf(stdout, NULL, _IONBF, 0);
    if (argc != 3) { printf("usage: client FATBIN MODE\n"); return 2; }
    if (open_driver()) return 2;
    SYM(CUresult (*)(CUdeviceptr, const void *, size_t), cuMemcpyHtoD_v2);
    SYM(CUresult (*)(void **, size_t, unsigned), cuMemHostAlloc);
    SYM(CUresult (*)(void **, unsigned), cuStreamCreate);
    SYM(CUresult (*)(void *), cuStreamSynchronize);
    SYM(CUresult (*)(void *), cuStreamQuery);
    SYM(CUresult (*)(void *, CUdeviceptr, size_t, void *), cuMemcpyDtoHAsync_v2);
    SYM(CUresult (*)(CUdeviceptr, const void *, size_t, void *), cuMemcpyHtoDAsync_v2);
    void *img = read_image(argv[1]);
    if (!img) return 2;
    void *ctx, *mod;
    if (cuInit(0) || cuDevicePrimaryCtxRetain(&ctx, 0) || cuCtxSetCurrent(ctx) || cuModuleLoadData(&mod, img)) {
        printf("setup=failed\n");
        return 2;
    }
    const char *mode = argv[2];
    if (strcmp(mode, "overrun") == 0 || strcmp(mode, "inbounds") == 0) {
        /* Two buffers of 1024 ints; the kernel writes 64 ints past the end of the first
           (or exactly to its end). The second must be intact either way. */
        int extra = strcmp(mode, "overrun") == 0 ? 64 : 0;
        CUdeviceptr a, b;
        cuMemAlloc_v2(&a, 4096);
        cuMemAlloc_v2(&b, 4096);
        int pattern[1024];
        for (int i = 0; i < 1024; i++) pattern[i] = 0x5a5a0000 + i;
        cuMemcpyHtoD_v2(b, pattern, sizeof pattern);
        void *f;
        cuModuleGetFunction(&f, mod, "overrun");
        int n = 1024;
        void *params[] = {&a, &n, &extra};
        printf("launch=%d\n", cuLaunchKernel(f, 5, 1, 1, 256, 1, 1, 0, 0, params, 0));
        printf("sync=%d\n", cuCtxSynchronize());
        printf("sync_again=%d\n", cuCtxSynchronize());
        return 0;
    }
    if (strcmp(mode, "early-read") == 0) {
        /* The classic missing synchronisation: launch, async copy into pinned memory, read
           the host buffer before cuStreamSynchronize. Prints what the host saw before and
           after synchronising (values are 2*i when the work has run, 0 before). */
        void *s, *f;
        int *pinned;
        CUdeviceptr v;
        cuStreamCreate(&s, 1);
        cuMemAlloc_v2(&v, 4096);
        cuMemHostAlloc((void **)&pinned, 4096, 0);
        int src[1024];
        for (int i = 0; i < 1024; i++) src[i] = i;
        memset(pinned, 0, 4096);
        cuMemcpyHtoDAsync_v2(v, src, sizeof src, s); /* pageable source: staged now */
        src[5] = 999;                                /* so this change is not copied */
        cuModuleGetFunction(&f, mod, "twice");
        int n = 1024;
        void *params[] = {&v, &n};
        printf("launch=%d\n", cuLaunchKernel(f, 4, 1, 1, 256, 1, 1, 0, s, params, 0));
        printf("copy=%d\n", cuMemcpyDtoHAsync_v2(pinned, v, 4096, s));
        printf("before=%d,%d\n", pinned[5], pinned[1023]);
        printf("query=%d\n", cuStreamQuery(s));
        printf("sync=%d\n", cuStreamSynchronize(s));
        printf("after=%d,%d\n", pinned[5], pinned[1023]);
        /* Work nobody waits for: reported at exit. */
        cuLaunchKernel(f, 4, 1, 1, 256, 1, 1, 0, s, params, 0);
        return 0;
    }
    if (strcmp(mode, "fault-then-work") == 0) {
        /* A kernel that faults (a read of address 0), then work queued behind it on the
           same stream: a kernel doubling v and a copy of v into pinned memory. A device
           runs neither once the context has failed: the pinned buffer keeps its -1s
           (H100, driver 580.159.04: reports/reference/device-records/queued-work-after-a-fault.md). */
        void *s, *f, *g;
        int *pinned;
        CUdeviceptr a, v;
        cuStreamCreate(&s, 1);
        cuMemAlloc_v2(&a, 4096);
        cuMemAlloc_v2(&v, 4096);
        cuMemHostAlloc((void **)&pinned, 4096, 0);
        int src[1024];
        for (int i = 0; i < 1024; i++) src[i] = i;
        cuMemcpyHtoD_v2(v, src, sizeof src);
        memset(pinned, 0xff, 4096);
        cuModuleGetFunction(&f, mod, "read_at");
        cuModuleGetFunction(&g, mod, "twice");
        int n = 1024;
        CUdeviceptr null_ptr = 0;
        void *fp[] = {&null_ptr, &a};
        void *gp[] = {&v, &n};
        printf("fault=%d\n", cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, s, fp, 0));
        CUresult l = cuLaunchKernel(g, 4, 1, 1, 256, 1, 1, 0, s, gp, 0);
        CUresult c = cuMemcpyDtoHAsync_v2(pinned, v, 4096, s);
        printf("sync=%d\n", cuStreamSynchronize(s));
        printf("queued=%s\n", l == 0 && c == 0 ? "accepted" : "refused");
        printf("pinned=%d,%d\n", pinned[5], pinned[1023]);
        return 0;
    }
    printf("mode=unknown\n");
    return 2;
}
