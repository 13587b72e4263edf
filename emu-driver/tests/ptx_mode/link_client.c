/* The JIT linker and libraries through the driver (emu-driver/tests/ptx_mode.rs):
 *   link_client A.ptx B.ptx FEATURES.ptx
 * links A and B (B added from its file), runs `apply`, then checks the error paths
 * (invalid PTX with the error log, a cubin input), then loads FEATURES.ptx as a library
 * with no context current and launches its kernel through the CUkernel handle. Prints
 * `key=value` lines. */
#include "../client_support/client.h"
#include <string.h>

typedef int CUjit_option;
static CUresult (*cuLinkCreate_v2)(unsigned, CUjit_option *, void **, void **);
static CUresult (*cuLinkAddData_v2)(void *, int, void *, size_t, const char *, unsigned, CUjit_option *, void **);
static CUresult (*cuLinkAddFile_v2)(void *, int, const char *, unsigned, CUjit_option *, void **);
static CUresult (*cuLinkComplete)(void *, void **, size_t *);
static CUresult (*cuLinkDestroy)(void *);
static CUresult (*cuMemcpyHtoD_v2)(CUdeviceptr, const void *, size_t);
static CUresult (*cuLibraryLoadData)(void **, const void *, CUjit_option *, void **, unsigned, int *, void **, unsigned);
static CUresult (*cuLibraryGetKernel)(void **, void *, const char *);
static CUresult (*cuLibraryGetKernelCount)(unsigned *, void *);
static CUresult (*cuKernelGetFunction)(void **, void *);
static CUresult (*cuKernelGetParamInfo)(void *, size_t, size_t *, size_t *);
static CUresult (*cuLibraryUnload)(void *);
static CUresult (*cuLinkCreate)(unsigned, CUjit_option *, void **, void **);
static CUresult (*cuLinkAddData)(void *, int, void *, size_t, const char *, unsigned, CUjit_option *, void **);
static CUresult (*cuLinkAddFile)(void *, int, const char *, unsigned, CUjit_option *, void **);
static CUresult (*cuLibraryLoadFromFile)(void **, const char *, CUjit_option *, void **, unsigned, int *, void **, unsigned);
static CUresult (*cuLibraryEnumerateKernels)(void **, unsigned, void *);
static CUresult (*cuLibraryGetModule)(void **, void *);
static CUresult (*cuLibraryGetGlobal)(CUdeviceptr *, size_t *, void *, const char *);
static CUresult (*cuKernelGetLibrary)(void **, void *);
static CUresult (*cuKernelGetName)(const char **, void *);
static CUresult (*cuKernelGetAttribute)(int *, int, void *, int);
static CUresult (*cuKernelSetAttribute)(int, int, void *, int);

int main(int argc, char **argv) {
    if (argc < 4 || open_driver()) return 2;
    LOOKUP(cuLinkCreate_v2); LOOKUP(cuLinkAddData_v2); LOOKUP(cuLinkAddFile_v2); LOOKUP(cuLinkComplete);
    LOOKUP(cuLinkDestroy); LOOKUP(cuMemcpyHtoD_v2); LOOKUP(cuLibraryLoadData); LOOKUP(cuLibraryGetKernel);
    LOOKUP(cuLibraryGetKernelCount); LOOKUP(cuKernelGetFunction); LOOKUP(cuKernelGetParamInfo); LOOKUP(cuLibraryUnload);
    LOOKUP(cuLinkCreate); LOOKUP(cuLinkAddData); LOOKUP(cuLinkAddFile); LOOKUP(cuLibraryLoadFromFile);
    LOOKUP(cuLibraryEnumerateKernels); LOOKUP(cuLibraryGetModule); LOOKUP(cuLibraryGetGlobal); LOOKUP(cuKernelGetLibrary);
    LOOKUP(cuKernelGetName); LOOKUP(cuKernelGetAttribute); LOOKUP(cuKernelSetAttribute);
    char *a = read_image(argv[1]), *features = read_image(argv[3]);
    if (!a || !features || cuInit(0)) return 2;

    /* A library with no context current: loaded into the primary context. */
    void *lib, *kern, *fn;
    unsigned count = 0;
    CUresult r;
    size_t off = 9, size = 9;
    printf("library_load=%d\n", cuLibraryLoadData(&lib, features, 0, 0, 0, 0, 0, 0));
    r = cuLibraryGetKernelCount(&count, lib);
    printf("library_kernels=%d,%u\n", r, count);
    printf("library_get_kernel=%d\n", cuLibraryGetKernel(&kern, lib, "local_array"));
    printf("library_missing_kernel=%d\n", cuLibraryGetKernel(&fn, lib, "nope"));
    r = cuKernelGetParamInfo(kern, 2, &off, &size);
    printf("param_info=%d,%zu,%zu\n", r, off, size);

    void *ctx;
    if (cuDevicePrimaryCtxRetain(&ctx, 0) || cuCtxSetCurrent(ctx)) return 2;
    enum { N = 64 };
    int in[N], out[N];
    for (int i = 0; i < N; ++i) in[i] = i * 5 - 100;
    CUdeviceptr din, dout;
    cuMemAlloc_v2(&din, sizeof in);
    cuMemAlloc_v2(&dout, sizeof out);
    cuMemcpyHtoD_v2(din, in, sizeof in);
    int n = N;
    void *args[] = {&din, &dout, &n};
    /* A CUkernel stands for its function in cuLaunchKernel. */
    r = cuLaunchKernel(kern, 1, 1, 1, N, 1, 1, 0, 0, args, 0);
    if (!r) r = cuCtxSynchronize();
    cuMemcpyDtoH_v2(out, dout, sizeof out);
    int ok = !r;
    for (int i = 0; i < N && ok; ++i) {
        int arr[32], s = 0;
        for (int k = 0; k < 32; ++k) arr[k] = in[i] * k + (k ^ i);
        for (int k = 0; k < 32; ++k) s += arr[(k * 7 + in[i]) & 31];
        ok = out[i] == s;
    }
    printf("library_launch=%s\n", ok ? "ok" : "bad");
    printf("kernel_get_function=%d\n", cuKernelGetFunction(&fn, kern));
    {
        void *all[10], *back, *m;
        const char *name = 0;
        int v = -1;
        CUdeviceptr g = 0;
        size_t gsz = 0;
        r = cuLibraryEnumerateKernels(all, 10, lib);
        printf("enumerate=%d,%d\n", r, r == 0 && all[0] != 0);
        printf("enumerate_wrong_count=%d\n", cuLibraryEnumerateKernels(all, 3, lib));
        r = cuKernelGetLibrary(&back, kern);
        printf("kernel_library=%d,%d\n", r, back == lib);
        r = cuKernelGetName(&name, kern);
        printf("kernel_name=%d,%s\n", r, name ? name : "-");
        r = cuKernelGetAttribute(&v, 0 /* MAX_THREADS_PER_BLOCK */, kern, 0);
        printf("kernel_attribute=%d,%d\n", r, v);
        printf("kernel_set_attribute=%d\n", cuKernelSetAttribute(8 /* MAX_DYNAMIC_SHARED */, 1024, kern, 0));
        printf("library_module=%d\n", cuLibraryGetModule(&m, lib));
        r = cuLibraryGetGlobal(&g, &gsz, lib, "ops");
        printf("library_global=%d,%zu\n", r, gsz);
    }
    printf("library_unload=%d\n", cuLibraryUnload(lib));
    {
        void *lib2;
        r = cuLibraryLoadFromFile(&lib2, argv[3], 0, 0, 0, 0, 0, 0);
        printf("library_from_file=%d\n", r);
        if (!r) cuLibraryUnload(lib2);
    }

    /* The JIT linker: A from memory, B from its file. */
    void *st, *img;
    size_t img_size = 0;
    printf("link_create=%d\n", cuLinkCreate_v2(0, 0, 0, &st));
    printf("link_add_a=%d\n", cuLinkAddData_v2(st, 1 /* PTX */, a, strlen(a) + 1, "link_a.ptx", 0, 0, 0));
    printf("link_add_b=%d\n", cuLinkAddFile_v2(st, 1, argv[2], 0, 0, 0));
    printf("link_complete=%d\n", cuLinkComplete(st, &img, &img_size));
    void *mod;
    r = cuModuleLoadData(&mod, img);
    printf("link_load=%d\n", r);
    void *apply;
    if (!r) r = cuModuleGetFunction(&apply, mod, "apply");
    if (!r) r = cuLaunchKernel(apply, 1, 1, 1, N, 1, 1, 0, 0, args, 0);
    if (!r) r = cuCtxSynchronize();
    cuMemcpyDtoH_v2(out, dout, sizeof out);
    ok = !r;
    for (int i = 0; i < N && ok; ++i) ok = out[i] == 3 * in[i] - 7 + 1000;
    printf("link_run=%s\n", ok ? "ok" : "bad");
    printf("link_destroy=%d\n", cuLinkDestroy(st));
    printf("link_destroy_twice=%d\n", cuLinkDestroy(st));

    /* Errors: invalid PTX (with the program's error log), a cubin input. */
    char log[512] = {0};
    CUjit_option opts[] = {5 /* CU_JIT_ERROR_LOG_BUFFER */, 6 /* ..._SIZE_BYTES */};
    void *vals[] = {log, (void *)(size_t)sizeof log};
    /* The legacy names take the same arguments. */
    {
        CUresult c1 = cuLinkCreate(0, 0, 0, &st);
        CUresult c2 = cuLinkAddData(st, 1, a, 0, "a", 0, 0, 0);
        CUresult c3 = cuLinkAddFile(st, 1, argv[2], 0, 0, 0);
        printf("legacy_link=%d,%d,%d\n", c1, c2, c3);
    }
    cuLinkDestroy(st);
    cuLinkCreate_v2(0, 0, 0, &st);
    const char *bad = ".version 7.0\n.target sm_80\n.address_size 64\n.visible .entry k()\n{\n  .reg .b32 %r<2>;\n  add.s32 %r1, ;\n}\n";
    printf("link_add_invalid=%d\n", cuLinkAddData_v2(st, 1, (void *)bad, strlen(bad), "bad.ptx", 2, opts, vals));
    printf("error_log=%s\n", log);
    printf("link_add_cubin=%d\n", cuLinkAddData_v2(st, 0 /* CUBIN */, a, 16, "x.cubin", 0, 0, 0));
    printf("link_complete_empty=%d\n", cuLinkComplete(st, &img, &img_size));
    cuLinkDestroy(st);
    return 0;
}
