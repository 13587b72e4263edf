/* A driver-API client for the pass-through test: loads libcuda.so.1 (simtwin, with
 * EMU_CUDA_REAL set to the fake real driver), does copies, a memset, a launch, calls
 * entries simtwin forwards through trampolines, and leaves one allocation behind.
 * Prints one line per check; exit 0 if all pass. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

typedef int CUresult;
typedef unsigned long long CUdeviceptr;
static void *lib;
static int bad;
#define SYM(T, n) __typeof__(T) n = (__typeof__(T))dlsym(lib, #n); if (!n) { printf("missing %s\n", #n); return 2; }
#define CHECK(c, what) do { if (!(c)) { printf("FAIL %s\n", what); bad = 1; } else printf("ok %s\n", what); } while (0)

int main(void) {
    setvbuf(stdout, NULL, _IONBF, 0);
    lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) { printf("dlopen: %s\n", dlerror()); return 2; }
    SYM(CUresult (*)(unsigned), cuInit);
    SYM(CUresult (*)(int *), cuDriverGetVersion);
    SYM(CUresult (*)(void **, unsigned, int), cuCtxCreate_v2);
    SYM(CUresult (*)(CUdeviceptr *, size_t), cuMemAlloc_v2);
    SYM(CUresult (*)(CUdeviceptr), cuMemFree_v2);
    SYM(CUresult (*)(CUdeviceptr, const void *, size_t), cuMemcpyHtoD_v2);
    SYM(CUresult (*)(void *, CUdeviceptr, size_t), cuMemcpyDtoH_v2);
    SYM(CUresult (*)(CUdeviceptr, unsigned char, size_t), cuMemsetD8_v2);
    SYM(CUresult (*)(void **, unsigned), cuStreamCreate);
    SYM(CUresult (*)(void *), cuStreamSynchronize);
    SYM(CUresult (*)(void **, const void *), cuModuleLoadData);
    SYM(CUresult (*)(void **, void *, const char *), cuModuleGetFunction);
    SYM(CUresult (*)(void *, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, void *, void **, void **), cuLaunchKernel);
    SYM(CUresult (*)(void *, unsigned *), cuGraphGetId);
    SYM(CUresult (*)(void *, int, void *, size_t, const char *, unsigned, void *, void *), cuLinkAddData_v2);
    SYM(CUresult (*)(unsigned *, unsigned), cuMemAlloc);
    SYM(CUresult (*)(const char *, void **, int, unsigned long long, int *), cuGetProcAddress_v2);

    CHECK(cuInit(0) == 0, "cuInit");
    int v = 0;
    CHECK(cuDriverGetVersion(&v) == 0 && v == 4242, "driver version is the real driver's");
    void *ctx;
    CHECK(cuCtxCreate_v2(&ctx, 0, 0) == 0, "context");
    CUdeviceptr d, keep;
    CHECK(cuMemAlloc_v2(&d, 64) == 0, "alloc");
    CHECK(cuMemAlloc_v2(&keep, 1000) == 0, "alloc (leaked)");
    unsigned host[16], back[16];
    for (int i = 0; i < 16; i++) host[i] = 100 + i;
    CHECK(cuMemcpyHtoD_v2(d, host, sizeof host) == 0, "HtoD");
    CHECK(cuMemsetD8_v2(d, 0, 8) == 0, "memset");
    void *m, *f, *s;
    static const char img[] = "image";
    CHECK(cuModuleLoadData(&m, img) == 0 && cuModuleGetFunction(&f, m, "fill") == 0, "module and function");
    CHECK(cuModuleGetFunction(&f, m, "nope") == 500, "an error answer passes through");
    CHECK(cuModuleGetFunction(&f, m, "fill") == 0, "function again");
    unsigned n = 16, val = 7;
    void *params[] = {&d, &n, &val};
    CHECK(cuLaunchKernel(f, 2, 1, 1, 8, 1, 1, 0, 0, params, 0) == 0, "launch");
    CHECK(cuStreamCreate(&s, 0) == 0 && cuStreamSynchronize(s) == 0, "stream sync");
    CHECK(cuMemcpyDtoH_v2(back, d, sizeof back) == 0, "DtoH");
    int good = 1;
    for (unsigned i = 0; i < 16; i++) good &= back[i] == 7 + i;
    CHECK(good, "the real driver's kernel ran");
    unsigned gid = 0;
    CHECK(cuGraphGetId((void *)(uintptr_t)0xabc0, &gid) == 0 && gid == 0xabc5, "trampoline forwards an unimplemented entry");
    CHECK(cuLinkAddData_v2((void *)0x11, 3, (void *)0x22, 0x33, "lnk", 7, (void *)0x44, (void *)0x55) == 0,
          "trampoline keeps eight arguments");
    unsigned p32 = 0;
    CHECK(cuMemAlloc(&p32, 1234) == 0 && p32 == 1234, "legacy entry forwarded");
    void *fp = 0;
    int st = -1;
    CHECK(cuGetProcAddress_v2("cuMemcpyHtoD", &fp, 12000, 0, &st) == 0 && st == 0, "getProcAddress of a known name");
    Dl_info info;
    CHECK(fp && dladdr(fp, &info) && strstr(info.dli_fname, "fake_real") == 0, "... is simtwin's counted wrapper");
    CHECK(fp && ((CUresult (*)(CUdeviceptr, const void *, size_t))fp)(d, host, 4) == 0, "... which forwards");
    fp = 0;
    CHECK(cuGetProcAddress_v2("cuFakeOnly", &fp, 12000, 0, &st) == 0 && fp && st == 0, "getProcAddress of an unknown name");
    int x = 0;
    CHECK(fp && ((CUresult (*)(int *))fp)(&x) == 0 && x == 77, "... is the real driver's function");
    CHECK(cuMemFree_v2(d) == 0, "free");
    return bad;
}
