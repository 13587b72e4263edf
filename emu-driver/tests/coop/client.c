/* The cooperative-launch client of emu-driver/tests/coop.rs: loads the PTX of coop.cu
 * (argv[1]) through the driver it dlopens and runs one case (argv[2]), printing
 * `key=value` lines:
 *   sync GX GY GZ BX BY BZ ROUNDS  cooperative launch of gridsum: `sync=ok` when every
 *                                  element equals what this client computes, else
 *                                  `sync=bad INDEX GOT WANT`; `ms=` the launch's time
 *   ex ...                         the same through cuLaunchKernelEx + COOPERATIVE
 *   plain ...                      gridsum by cuLaunchKernel: `launch=` and `sync=` codes
 *   after ...                      the same after a cooperative launch of one block made
 *                                  the context's grid workspace: `first=` its code
 *   limits                         `attr=` COOPERATIVE_LAUNCH, `sms=`, `occupancy=` of
 *                                  gridsum at 128 threads, `too_large=` / `too_large_2d=`
 *                                  the codes of cooperative launches over what fits (the
 *                                  second through cuLaunchCooperativeKernel_ptsz)
 *   env                            `coop=` / `plain=` the envregs (0..3) and workspace words
 *   deserter                       `launch=` and `sync=` codes
 *   link LIB PTX [MODE]            cuLink* of PTX (argv[1], the kernel) and the library LIB
 *                                  (CU_JIT_INPUT_LIBRARY): `complete=` the code and
 *                                  `log=` the error log; MODE run: argv[1] is devrt.cu's
 *                                  PTX, `rotate=ok|bad I GOT WANT` and `status=` of a
 *                                  cooperative launch of the linked kernel
 * Exit 0 when it ran, 2 when it could not. */
#include "../client_support/client.h"
#include <stdint.h>
#include <string.h>
#include <time.h>

typedef struct {
    unsigned id;
    unsigned pad;
    unsigned long long value[8];
} attr_t;
typedef struct {
    unsigned gx, gy, gz, bx, by, bz, shared;
    void *stream;
    attr_t *attrs;
    unsigned nattrs;
} config_t;

static CUresult (*cuMemcpyHtoD_v2)(CUdeviceptr, const void *, size_t);
static CUresult (*cuLaunchCooperativeKernel)(void *, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, void *, void **);
static CUresult (*cuLaunchCooperativeKernel_ptsz)(void *, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, void *, void **);
static CUresult (*cuLaunchKernelEx)(const config_t *, void *, void **, void **);
static CUresult (*cuDeviceGetAttribute)(int *, int, int);
static CUresult (*cuOccupancyMaxActiveBlocksPerMultiprocessor)(int *, void *, int, size_t);
static CUresult (*cuLinkCreate_v2)(unsigned, int *, void **, void **);
static CUresult (*cuLinkAddData_v2)(void *, int, void *, size_t, const char *, unsigned, int *, void **);
static CUresult (*cuLinkAddFile_v2)(void *, int, const char *, unsigned, int *, void **);
static CUresult (*cuLinkComplete)(void *, void **, size_t *);

/* cuLink* of the PTX `image` and the library at `lib`; the linked module in `mod`. */
static int link_case(void *image, const char *lib, int run) {
    char log[4096] = {0};
    int opts[] = {5 /* CU_JIT_ERROR_LOG_BUFFER */, 6 /* _SIZE_BYTES */};
    void *vals[] = {log, (void *)(size_t)sizeof log};
    void *st, *cubin, *mod, *f;
    size_t size;
    if (cuLinkCreate_v2(2, opts, vals, &st)) return 2;
    CUresult r = cuLinkAddData_v2(st, 1 /* PTX */, image, strlen(image) + 1, "kernel.ptx", 0, 0, 0);
    printf("add_ptx=%d\n", r);
    r = cuLinkAddFile_v2(st, 4 /* CU_JIT_INPUT_LIBRARY */, lib, 0, 0, 0);
    printf("add_library=%d\n", r);
    r = cuLinkComplete(st, &cubin, &size);
    printf("complete=%d\n", r);
    printf("log=%s\n", log);
    if (r || !run) return 0;
    if ((r = cuModuleLoadData(&mod, cubin)) || (r = cuModuleGetFunction(&f, mod, "devrt_rotate"))) {
        printf("load=%d\n", r);
        return 0;
    }
    enum { B = 8, T = 64, N = B * T };
    CUdeviceptr d, o, s;
    unsigned got[N];
    int status = -1;
    cuMemAlloc_v2(&d, N * 4);
    cuMemAlloc_v2(&o, N * 4);
    cuMemAlloc_v2(&s, 4);
    void *args[] = {&d, &o, &s};
    r = cuLaunchCooperativeKernel(f, B, 1, 1, T, 1, 1, 0, 0, args);
    if (r || (r = cuCtxSynchronize())) {
        printf("rotate=failed %d\n", r);
        return 0;
    }
    cuMemcpyDtoH_v2(got, o, sizeof got);
    cuMemcpyDtoH_v2(&status, s, 4);
    printf("status=%d\n", status);
    for (unsigned i = 0; i < N; i++) {
        unsigned want = ((i + T) % N) * 3u + 1u;
        if (got[i] != want) {
            printf("rotate=bad %u %u %u\n", i, got[i], want);
            return 0;
        }
    }
    printf("rotate=ok\n");
    return 0;
}

static double now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static int gridsum(void *f, const char *how, unsigned *d) {
    unsigned long long n = (unsigned long long)d[0] * d[1] * d[2] * d[3] * d[4] * d[5];
    int rounds = (int)d[6];
    unsigned *data = malloc(n * 4), *out = malloc(n * 4), *got = malloc(n * 4);
    for (unsigned long long i = 0; i < n; i++) {
        data[i] = (unsigned)(i * 2654435761u);
        out[i] = (unsigned)i;
    }
    CUdeviceptr dd, dout;
    if (cuMemAlloc_v2(&dd, n * 4) || cuMemAlloc_v2(&dout, n * 4) || cuMemcpyHtoD_v2(dd, data, n * 4) || cuMemcpyHtoD_v2(dout, out, n * 4)) {
        printf("setup=failed\n");
        return 2;
    }
    void *args[] = {&dd, &dout, &rounds};
    double t0 = now_ms();
    CUresult r;
    if (!strcmp(how, "plain")) {
        r = cuLaunchKernel(f, d[0], d[1], d[2], d[3], d[4], d[5], 0, 0, args, 0);
    } else if (!strcmp(how, "ex")) {
        attr_t a = {2, 0, {1}};
        config_t c = {d[0], d[1], d[2], d[3], d[4], d[5], 0, 0, &a, 1};
        r = cuLaunchKernelEx(&c, f, args, 0);
    } else {
        r = cuLaunchCooperativeKernel(f, d[0], d[1], d[2], d[3], d[4], d[5], 0, 0, args);
    }
    printf("launch=%d\n", r);
    CUresult s = cuCtxSynchronize();
    printf("ms=%.1f\n", now_ms() - t0);
    if (r || s) {
        printf("sync=%d\n", s);
        return 0;
    }
    /* What the kernel must give: the same rounds, one step at a time. */
    for (int k = 0; k < rounds; k++) {
        for (unsigned long long i = 0; i < n; i++) data[i] += (unsigned)k + 1;
        for (unsigned long long i = 0; i < n; i++) out[i] = out[i] * 31u + data[(i + 1 + 977ull * k) % n];
    }
    cuMemcpyDtoH_v2(got, dout, n * 4);
    for (unsigned long long i = 0; i < n; i++) {
        if (got[i] != out[i]) {
            printf("sync=bad %llu %u %u\n", i, got[i], out[i]);
            return 0;
        }
    }
    printf("sync=ok\n");
    return 0;
}

int main(int argc, char **argv) {
    if (argc < 3) return 2;
    if (open_driver()) return 2;
    LOOKUP(cuMemcpyHtoD_v2);
    LOOKUP(cuLaunchCooperativeKernel);
    LOOKUP(cuLaunchCooperativeKernel_ptsz);
    LOOKUP(cuLaunchKernelEx);
    LOOKUP(cuDeviceGetAttribute);
    LOOKUP(cuOccupancyMaxActiveBlocksPerMultiprocessor);
    LOOKUP(cuLinkCreate_v2);
    LOOKUP(cuLinkAddData_v2);
    LOOKUP(cuLinkAddFile_v2);
    LOOKUP(cuLinkComplete);
    void *image = read_image(argv[1]);
    if (!image) return 2;
    void *ctx, *mod, *f;
    if (cuInit(0) || cuDevicePrimaryCtxRetain(&ctx, 0) || cuCtxSetCurrent(ctx)) {
        printf("init=failed\n");
        return 2;
    }
    const char *mode = argv[2];
    if (!strcmp(mode, "link")) {
        if (argc < 4) return 2;
        return link_case(image, argv[3], argc > 4 && !strcmp(argv[4], "run"));
    }
    CUresult r = cuModuleLoadData(&mod, image);
    if (r) {
        printf("load=%d\n", r);
        return 0;
    }
    if (!strcmp(mode, "sync") || !strcmp(mode, "ex") || !strcmp(mode, "plain") || !strcmp(mode, "after")) {
        if (argc < 10) return 2;
        unsigned d[7];
        for (int i = 0; i < 7; i++) d[i] = (unsigned)strtoul(argv[3 + i], 0, 10);
        if (cuModuleGetFunction(&f, mod, "gridsum")) return 2;
        if (!strcmp(mode, "after")) {
            CUdeviceptr a, b;
            int one = 1;
            if (cuMemAlloc_v2(&a, 128) || cuMemAlloc_v2(&b, 128)) return 2;
            void *args[] = {&a, &b, &one};
            CUresult r = cuLaunchCooperativeKernel(f, 1, 1, 1, 32, 1, 1, 0, 0, args);
            printf("first=%d\n", r ? r : cuCtxSynchronize());
            return gridsum(f, "plain", d);
        }
        return gridsum(f, mode, d);
    }
    if (!strcmp(mode, "limits")) {
        int attr = -1, sms = -1, occ = -1;
        if (cuModuleGetFunction(&f, mod, "gridsum")) return 2;
        cuDeviceGetAttribute(&attr, 95, 0);
        cuDeviceGetAttribute(&sms, 16, 0);
        cuOccupancyMaxActiveBlocksPerMultiprocessor(&occ, f, 128, 0);
        printf("attr=%d\nsms=%d\noccupancy=%d\n", attr, sms, occ);
        CUdeviceptr dd, dout;
        unsigned long long n = (unsigned long long)occ * sms * 128;
        cuMemAlloc_v2(&dd, n * 4);
        cuMemAlloc_v2(&dout, n * 4);
        int rounds = 1;
        void *args[] = {&dd, &dout, &rounds};
        printf("too_large=%d\n", cuLaunchCooperativeKernel(f, occ * sms + 1, 1, 1, 128, 1, 1, 0, 0, args));
        printf("too_large_2d=%d\n", cuLaunchCooperativeKernel_ptsz(f, sms, occ + 1, 1, 128, 1, 1, 0, 0, args));
        return 0;
    }
    if (!strcmp(mode, "env")) {
        if (cuModuleGetFunction(&f, mod, "envregs")) return 2;
        CUdeviceptr o;
        unsigned h[6];
        cuMemAlloc_v2(&o, sizeof h);
        void *args[] = {&o};
        for (int coop = 1; coop >= 0; coop--) {
            memset(h, 0xab, sizeof h);
            cuMemcpyHtoD_v2(o, h, sizeof h);
            r = coop ? cuLaunchCooperativeKernel(f, 2, 1, 1, 32, 1, 1, 0, 0, args) : cuLaunchKernel(f, 2, 1, 1, 32, 1, 1, 0, 0, args, 0);
            if (r || cuCtxSynchronize() || cuMemcpyDtoH_v2(h, o, sizeof h)) {
                printf("%s=failed %d\n", coop ? "coop" : "plain", r);
                continue;
            }
            printf("%s=%08x %08x %08x %08x %08x %08x\n", coop ? "coop" : "plain", h[0], h[1], h[2], h[3], h[4], h[5]);
        }
        return 0;
    }
    if (!strcmp(mode, "deserter")) {
        if (cuModuleGetFunction(&f, mod, "deserter")) return 2;
        CUdeviceptr o;
        cuMemAlloc_v2(&o, 64);
        void *args[] = {&o};
        printf("launch=%d\n", cuLaunchCooperativeKernel(f, 4, 1, 1, 32, 1, 1, 0, 0, args));
        printf("sync=%d\n", cuCtxSynchronize());
        return 0;
    }
    return 2;
}
