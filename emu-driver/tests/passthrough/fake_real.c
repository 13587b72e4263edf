/* A stand-in for a real libcuda.so.1 in pass-through tests (no GPU here): a few entry
 * points with real semantics on host memory, kernels dispatched by name in C. It does
 * not export simtwin's marker, so simtwin's EMU_CUDA_REAL accepts it. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef int CUresult;
typedef unsigned long long CUdeviceptr;
typedef struct { int tag; char name[32]; } Fn;

static int inited;
#define CK_INIT() do { if (!inited) return 3; } while (0)

CUresult cuInit(unsigned flags) { if (flags) return 1; inited = 1; return 0; }
CUresult cuDriverGetVersion(int *v) { *v = 4242; return 0; }
CUresult cuDeviceGet(int *d, int ord) { CK_INIT(); if (ord != 0) return 101; *d = 0; return 0; }
CUresult cuDeviceGetCount(int *n) { CK_INIT(); *n = 1; return 0; }
static int ctx_token;
CUresult cuCtxCreate_v2(void **ctx, unsigned f, int d) { (void)f; (void)d; CK_INIT(); *ctx = &ctx_token; return 0; }
CUresult cuCtxDestroy_v2(void *ctx) { return ctx == &ctx_token ? 0 : 201; }
CUresult cuMemAlloc_v2(CUdeviceptr *p, size_t n) { CK_INIT(); void *m = calloc(1, n); if (!m) return 2; *p = (CUdeviceptr)(uintptr_t)m; return 0; }
CUresult cuMemFree_v2(CUdeviceptr p) { free((void *)(uintptr_t)p); return 0; }
CUresult cuMemcpyHtoD_v2(CUdeviceptr d, const void *s, size_t n) { memcpy((void *)(uintptr_t)d, s, n); return 0; }
CUresult cuMemcpyDtoH_v2(void *d, CUdeviceptr s, size_t n) { memcpy(d, (void *)(uintptr_t)s, n); return 0; }
CUresult cuMemsetD8_v2(CUdeviceptr d, unsigned char v, size_t n) { memset((void *)(uintptr_t)d, v, n); return 0; }
CUresult cuStreamCreate(void **s, unsigned f) { (void)f; static int tok; *s = &tok; return 0; }
CUresult cuStreamSynchronize(void *s) { (void)s; return 0; }
static int mod_token;
CUresult cuModuleLoadData(void **m, const void *img) { if (!img) return 1; *m = &mod_token; return 0; }
CUresult cuModuleGetFunction(void **f, void *m, const char *name) {
    if (m != &mod_token) return 400;
    if (strcmp(name, "fill") != 0) return 500;
    static Fn fill = {1, "fill"};
    *f = &fill;
    return 0;
}
CUresult cuFuncGetName(const char **name, void *f) { *name = ((Fn *)f)->name; return 0; }
/* fill(unsigned *out, unsigned n, unsigned value): out[i] = value + i */
CUresult cuLaunchKernel(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                        unsigned sh, void *s, void **params, void **extra) {
    (void)gy; (void)gz; (void)by; (void)bz; (void)sh; (void)s; (void)extra;
    if (!f || ((Fn *)f)->tag != 1) return 400;
    if (gx * bx > 1u << 20) return 1;
    unsigned *out = *(unsigned **)params[0];
    unsigned n = *(unsigned *)params[1], v = *(unsigned *)params[2];
    for (unsigned i = 0; i < n; i++) out[i] = v + i;
    return 0;
}
CUresult cuGetErrorName(CUresult c, const char **s) { (void)c; *s = "FAKE"; return 0; }
/* Entry points simtwin exports without implementing them (forwarded by its trampolines):
   many arguments, some in vector registers' neighbourhood, to check none is lost. */
CUresult cuGraphGetId(void *g, unsigned *id) { *id = (unsigned)(uintptr_t)g + 5; return 0; }
CUresult cuLinkAddData_v2(void *st, int type, void *data, size_t size, const char *name, unsigned n, void *o, void *v) {
    (void)type;
    if (st != (void *)0x11 || data != (void *)0x22 || size != 0x33 || strcmp(name, "lnk") != 0 || n != 7 || o != (void *)0x44 || v != (void *)0x55) return 1;
    return 0;
}
/* A legacy (32-bit pointer) entry: the real driver answers it. */
CUresult cuMemAlloc(unsigned *p, unsigned n) { *p = n; return 0; }
/* Not exported by simtwin at all: reachable through cuGetProcAddress. */
CUresult cuFakeOnly(int *x) { *x = 77; return 0; }
CUresult cuGetProcAddress_v2(const char *name, void **p, int v, unsigned long long f, int *st) {
    (void)v; (void)f;
    if (strcmp(name, "cuFakeOnly") == 0) { *p = (void *)cuFakeOnly; if (st) *st = 0; return 0; }
    *p = 0; if (st) *st = 1; return 0;
}
