/* Driver-API client for the pointer-confusion tests (tests/pointers.rs):
 * `client FATBIN MODE` runs one scenario and prints `key=value` lines (codes are
 * CUresults). Built with -rdynamic so that the driver's report can name `peek`/`poke`. */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../client_support/client.h"

/* Host code dereferencing a device pointer (the bug under test). */
__attribute__((noinline)) int peek(const volatile int *p, int i) { return p[i]; }
__attribute__((noinline)) void poke(volatile int *p, int i, int v) { p[i] = v; }

static void on_segv(int sig, siginfo_t *si, void *uc) {
    (void)sig; (void)si; (void)uc;
    static const char msg[] = "handler=called\n";
    write(1, msg, sizeof msg - 1);
    _exit(3);
}

struct Ref {
    int tag;
    const int *p;
};

int main(int argc, char **argv) {
    setvbuf(stdout, NULL, _IONBF, 0);
    if (argc != 3) { printf("usage: client FATBIN MODE\n"); return 2; }
    const char *mode = argv[2];
    if (strcmp(mode, "handler") == 0) {
        /* The program's own SIGSEGV handler, installed before the driver's. */
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_sigaction = on_segv;
        sa.sa_flags = SA_SIGINFO;
        sigaction(SIGSEGV, &sa, 0);
    }
    if (open_driver()) return 2;
    SYM(CUresult (*)(CUdeviceptr *, size_t *, size_t, size_t, unsigned), cuMemAllocPitch_v2);
    SYM(CUresult (*)(CUdeviceptr *, size_t, void *), cuMemAllocAsync);
    SYM(CUresult (*)(CUdeviceptr, void *), cuMemFreeAsync);
    SYM(CUresult (*)(CUdeviceptr *, size_t, unsigned), cuMemAllocManaged);
    SYM(CUresult (*)(CUdeviceptr), cuMemFree_v2);
    SYM(CUresult (*)(CUdeviceptr, const void *, size_t), cuMemcpyHtoD_v2);
    SYM(CUresult (*)(CUdeviceptr, CUdeviceptr, size_t), cuMemcpyDtoD_v2);
    SYM(CUresult (*)(CUdeviceptr, unsigned, size_t), cuMemsetD32_v2);
    SYM(CUresult (*)(CUdeviceptr, size_t, unsigned, size_t, size_t), cuMemsetD2D32_v2);
    SYM(CUresult (*)(CUdeviceptr, unsigned, size_t, void *), cuMemsetD32Async);
    SYM(CUresult (*)(void *, CUdeviceptr, size_t, void *), cuMemcpyDtoHAsync_v2);
    SYM(CUresult (*)(void *), cuStreamSynchronize);
    SYM(CUresult (*)(void **, size_t, unsigned), cuMemHostAlloc);
    void *img = read_image(argv[1]);
    if (!img) return 2;
    void *ctx, *mod;
    CUresult init = cuInit(0);
    if (init) { printf("init=%d\n", init); return 2; }
    if (cuDevicePrimaryCtxRetain(&ctx, 0) || cuCtxSetCurrent(ctx) || cuModuleLoadData(&mod, img)) {
        printf("setup=failed\n");
        return 2;
    }
    void *add_one, *add_row, *read_at, *read_struct, *fill;
    if (cuModuleGetFunction(&add_one, mod, "add_one") || cuModuleGetFunction(&add_row, mod, "add_row") ||
        cuModuleGetFunction(&read_at, mod, "read_at") || cuModuleGetFunction(&read_struct, mod, "read_struct") ||
        cuModuleGetFunction(&fill, mod, "fill")) {
        printf("functions=missing\n");
        return 2;
    }
    int n = 1024;
    if (strcmp(mode, "clean") == 0) {
        /* Device, pitched and stream-ordered memory: copies, memsets and kernels. */
        CUdeviceptr a, b;
        int src[1024], dst[1024];
        for (int i = 0; i < n; i++) src[i] = 3 * i;
        printf("alloc=%d,%d\n", cuMemAlloc_v2(&a, sizeof src), cuMemAlloc_v2(&b, sizeof src));
        printf("htod=%d\n", cuMemcpyHtoD_v2(a, src, sizeof src));
        void *p1[] = {&a, &n};
        printf("launch=%d,%d\n", cuLaunchKernel(add_one, 4, 1, 1, 256, 1, 1, 0, 0, p1, 0), cuLaunchKernel(add_one, 4, 1, 1, 256, 1, 1, 0, 0, p1, 0));
        printf("dtod=%d\n", cuMemcpyDtoD_v2(b, a, sizeof src));
        printf("memset=%d\n", cuMemsetD32_v2(a, 0x01010101u, 16));
        printf("dtoh=%d\n", cuMemcpyDtoH_v2(dst, b, sizeof dst));
        long sum = 0;
        for (int i = 0; i < n; i++) sum += dst[i];
        printf("b=%d,%d,%d sum=%ld\n", dst[0], dst[1], dst[1023], sum);
        printf("dtoh=%d\n", cuMemcpyDtoH_v2(dst, a, 32 * sizeof(int)));
        printf("a=%#x,%d\n", dst[15], dst[16]);
        /* Pitched: 100 x 8 ints set to 5, then + row index. */
        CUdeviceptr m;
        size_t pitch;
        int w = 100, h = 8;
        printf("pitch=%d\n", cuMemAllocPitch_v2(&m, &pitch, w * sizeof(int), h, 4));
        printf("memset2d=%d\n", cuMemsetD2D32_v2(m, pitch, 5, w, h));
        void *p2[] = {&m, &pitch, &w, &h};
        printf("launch=%d\n", cuLaunchKernel(add_row, 1, h, 1, 128, 1, 1, 0, 0, p2, 0));
        char *rows = malloc(pitch * h);
        printf("dtoh=%d\n", cuMemcpyDtoH_v2(rows, m, pitch * h));
        printf("m=%d,%d,%d\n", ((int *)rows)[0], ((int *)(rows + 3 * pitch))[99], ((int *)(rows + 7 * pitch))[50]);
        /* Stream-ordered, with a pinned destination. */
        CUdeviceptr c;
        int *pinned;
        printf("async=%d\n", cuMemAllocAsync(&c, sizeof src, 0));
        printf("host=%d\n", cuMemHostAlloc((void **)&pinned, sizeof src, 0));
        printf("memset=%d\n", cuMemsetD32Async(c, 7, n, 0));
        void *p3[] = {&c, &n};
        printf("launch=%d\n", cuLaunchKernel(add_one, 4, 1, 1, 256, 1, 1, 0, 0, p3, 0));
        printf("dtoh=%d\n", cuMemcpyDtoHAsync_v2(pinned, c, sizeof src, 0));
        printf("sync=%d\n", cuStreamSynchronize(0));
        printf("c=%d,%d\n", pinned[0], pinned[1023]);
        printf("free=%d,%d,%d,%d\n", cuMemFreeAsync(c, 0), cuMemFree_v2(a), cuMemFree_v2(b), cuMemFree_v2(m));
        /* A freed device pointer given to a copy is refused, never touched. */
        printf("stale=%d\n", cuMemcpyDtoH_v2(dst, a, 16));
        printf("sync=%d\n", cuCtxSynchronize());
        return 0;
    }
    if (strcmp(mode, "host-read") == 0 || strcmp(mode, "host-write") == 0 || strcmp(mode, "host-read-freed") == 0 ||
        strcmp(mode, "handler") == 0) {
        /* A kernel runs on the buffer (so a launch window opened and closed), then host
           code dereferences the device pointer. */
        CUdeviceptr a;
        int src[1024];
        for (int i = 0; i < n; i++) src[i] = 0x5a5a0000 + i;
        cuMemAlloc_v2(&a, sizeof src);
        cuMemcpyHtoD_v2(a, src, sizeof src);
        void *p1[] = {&a, &n};
        printf("launch=%d\n", cuLaunchKernel(add_one, 4, 1, 1, 256, 1, 1, 0, 0, p1, 0));
        printf("sync=%d\n", cuCtxSynchronize());
        if (strcmp(mode, "host-read-freed") == 0) printf("free=%d\n", cuMemFree_v2(a));
        if (strcmp(mode, "host-write") == 0) {
            poke((volatile int *)(uintptr_t)a, 7, 42);
            int back[8];
            cuMemcpyDtoH_v2(back, a, sizeof back);
            printf("wrote=%d\n", back[7]);
        } else {
            printf("read=%#x\n", peek((const volatile int *)(uintptr_t)a, 5));
        }
        return 0;
    }
    if (strcmp(mode, "zero-copy") == 0) {
        /* Kernel arguments pointing into pinned and managed host memory move data
           without a copy call; a device pointer does not. */
        int *pinned;
        CUdeviceptr managed, dev, out;
        int v = 33, got;
        cuMemHostAlloc((void **)&pinned, 64, 0);
        cuMemAllocManaged(&managed, 64, 1);
        cuMemAlloc_v2(&dev, 64);
        cuMemAlloc_v2(&out, 4);
        *pinned = 11;
        *(int *)(uintptr_t)managed = 22; /* managed memory stays host-accessible */
        cuMemcpyHtoD_v2(dev, &v, 4);
        const void *ptrs[] = {pinned, (void *)(uintptr_t)managed, (void *)(uintptr_t)dev};
        for (int i = 0; i < 3; i++) {
            void *p[] = {&ptrs[i], &out};
            cuLaunchKernel(read_at, 1, 1, 1, 32, 1, 1, 0, 0, p, 0);
            cuMemcpyDtoH_v2(&got, out, 4);
            printf("read_at=%d\n", got);
        }
        struct Ref refs[] = {{100, pinned}, {100, (const int *)(uintptr_t)dev}};
        for (int i = 0; i < 2; i++) {
            void *p[] = {&refs[i], &out};
            cuLaunchKernel(read_struct, 1, 1, 1, 32, 1, 1, 0, 0, p, 0);
            cuMemcpyDtoH_v2(&got, out, 4);
            printf("read_struct=%d\n", got);
        }
        printf("sync=%d\n", cuCtxSynchronize());
        return 0;
    }
    if (strcmp(mode, "overrun") == 0) {
        /* 64 ints past the end of a 4096-byte buffer: the guard page stays in the arena. */
        CUdeviceptr a;
        cuMemAlloc_v2(&a, 4096);
        int extra = 64;
        void *p[] = {&a, &n, &extra};
        printf("launch=%d\n", cuLaunchKernel(fill, 5, 1, 1, 256, 1, 1, 0, 0, p, 0));
        printf("sync=%d\n", cuCtxSynchronize());
        return 0;
    }
    printf("mode=unknown\n");
    return 2;
}
