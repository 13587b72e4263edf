/* A client of simtwin's libnvJitLink.so.13 and the emulated libcuda.so.1, both opened
 * with dlopen (no toolkit headers: the few declarations are written out below).
 * argv: shim path, libcuda path, kernel PTX, helper PTX. Prints key=value lines that
 * nvjitlink/tests/link.rs checks. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef void *Link;
typedef int (*CreateFn)(Link *, uint32_t, const char **);
typedef int (*DestroyFn)(Link *);
typedef int (*AddDataFn)(Link, int, const void *, size_t, const char *);
typedef int (*AddFileFn)(Link, int, const char *);
typedef int (*OneFn)(Link);
typedef int (*SizeFn)(Link, size_t *);
typedef int (*GetFn)(Link, void *);
typedef int (*VersionFn)(unsigned *, unsigned *);

enum { IN_CUBIN = 1, IN_PTX = 2, IN_LTOIR = 3, IN_FATBIN = 4, IN_LIBRARY = 6, IN_ANY = 10 };

static void *shim;
static CreateFn create;
static DestroyFn destroy;
static AddDataFn add_data;
static AddFileFn add_file;
static OneFn complete;
static SizeFn cubin_size, ptx_size, err_size, info_size, ltoir_size;
static GetFn get_cubin, get_ptx, get_err, get_info;

static void *need(void *lib, const char *name) {
    void *p = dlsym(lib, name);
    if (!p) {
        fprintf(stderr, "missing symbol %s\n", name);
        exit(2);
    }
    return p;
}

static char *read_file(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) {
        perror(path);
        exit(2);
    }
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *b = calloc(1, (size_t)n + 1);
    if (fread(b, 1, (size_t)n, f) != (size_t)n) exit(2);
    fclose(f);
    *len = (size_t)n;
    return b;
}

/* The error log of `h`, one line (newlines turned into '|'), after checking that the size
 * counts the terminating NUL. */
static void print_log(const char *key, Link h, SizeFn size, GetFn get) {
    size_t n = 0;
    int rc = size(h, &n);
    char *b = malloc(n + 1);
    memset(b, 'x', n + 1);
    int rc2 = get(h, b);
    int nul_ok = n >= 1 && b[n - 1] == '\0' && strlen(b) == n - 1 && b[n] == 'x';
    for (char *p = b; *p; p++)
        if (*p == '\n') *p = '|';
    printf("%s=%d,%d,%d,%s\n", key, rc, rc2, nul_ok, b);
    free(b);
}

/* One link of `type` input `bytes` named `name` with `opts`: the AddData result and log. */
static void try_input(const char *key, const char **opts, int nopts, int type, const void *bytes, size_t len, const char *name) {
    Link h = NULL;
    int rc = create(&h, (uint32_t)nopts, opts);
    if (rc) {
        printf("%s=create failed %d\n", key, rc);
        return;
    }
    printf("%s_add=%d\n", key, add_data(h, type, bytes, len, name));
    print_log(key, h, err_size, get_err);
    destroy(&h);
}

typedef int CUresult;
typedef void *CUcontext, *CUmodule, *CUfunction;
typedef int CUdevice;
typedef unsigned long long CUdeviceptr;

int main(int argc, char **argv) {
    int rc;
    if (argc != 5) return 2;
    shim = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (!shim) {
        fprintf(stderr, "%s\n", dlerror());
        return 2;
    }
    /* Every entry point under its plain and versioned names, with the version node. */
    static const char *names[] = {"Create", "Destroy", "AddData", "AddFile", "Complete", "GetLinkedCubinSize",
                                  "GetLinkedCubin", "GetLinkedPtxSize", "GetLinkedPtx", "GetLinkedLTOIRSize",
                                  "GetLinkedLTOIR", "GetErrorLogSize", "GetErrorLog", "GetInfoLogSize", "GetInfoLog"};
    int found = 0, same = 0;
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        char plain[96];
        snprintf(plain, sizeof plain, "nvJitLink%s", names[i]);
        void *p = dlvsym(shim, plain, "libnvJitLink.so.13");
        found += p != NULL;
        for (int m = 0; m <= 5; m++) {
            char v[96];
            snprintf(v, sizeof v, "__nvJitLink%s_13_%d", names[i], m);
            void *q = dlvsym(shim, v, "libnvJitLink.so.13");
            found += q != NULL;
            same += q != NULL && q == p;
        }
    }
    found += dlvsym(shim, "nvJitLinkVersion", "libnvJitLink.so.13") != NULL;
    printf("symbols=%d,%d\n", found, same);

    create = (CreateFn)need(shim, "nvJitLinkCreate");
    destroy = (DestroyFn)need(shim, "__nvJitLinkDestroy_13_0");
    add_data = (AddDataFn)need(shim, "__nvJitLinkAddData_13_5");
    add_file = (AddFileFn)need(shim, "nvJitLinkAddFile");
    complete = (OneFn)need(shim, "nvJitLinkComplete");
    cubin_size = (SizeFn)need(shim, "nvJitLinkGetLinkedCubinSize");
    get_cubin = (GetFn)need(shim, "nvJitLinkGetLinkedCubin");
    ptx_size = (SizeFn)need(shim, "nvJitLinkGetLinkedPtxSize");
    get_ptx = (GetFn)need(shim, "nvJitLinkGetLinkedPtx");
    ltoir_size = (SizeFn)need(shim, "nvJitLinkGetLinkedLTOIRSize");
    err_size = (SizeFn)need(shim, "nvJitLinkGetErrorLogSize");
    get_err = (GetFn)need(shim, "nvJitLinkGetErrorLog");
    info_size = (SizeFn)need(shim, "nvJitLinkGetInfoLogSize");
    get_info = (GetFn)need(shim, "nvJitLinkGetInfoLog");
    VersionFn version = (VersionFn)need(shim, "nvJitLinkVersion");

    unsigned major = 0, minor = 0;
    int vrc = version(&major, &minor);
    printf("version=%d,%u.%u\n", vrc, major, minor);
    setenv("SIMTWIN_NVJITLINK_VERSION", "13.0", 1);
    vrc = version(&major, &minor);
    printf("version_env=%d,%u.%u\n", vrc, major, minor);
    unsetenv("SIMTWIN_NVJITLINK_VERSION");
    printf("version_null=%d\n", version(NULL, &minor));

    /* The link: kernel module (calls an extern function) + helper module. */
    size_t klen, hlen;
    char *kernel_ptx = read_file(argv[3], &klen);
    char *helper_ptx = read_file(argv[4], &hlen);
    const char *opts[] = {"-arch=sm_90", "-O3", "-lineinfo", "-verbose", "-time"};
    Link h = NULL;
    rc = create(&h, 5, opts);
    printf("create=%d,%d\n", rc, h != NULL);
    printf("add_kernel=%d\n", add_data(h, IN_PTX, kernel_ptx, klen, "kernel.ptx"));
    printf("add_helper=%d\n", add_file(h, IN_PTX, argv[4]));
    printf("complete=%d\n", complete(h));
    size_t n = 0;
    rc = cubin_size(h, &n);
    printf("cubin_size=%d,%d\n", rc, n > 16);
    char *image = malloc(n);
    rc = get_cubin(h, image);
    printf("cubin=%d,%.4s\n", rc, image);
    size_t pn = 0;
    printf("ptx_two_modules=%d\n", ptx_size(h, &pn));
    printf("ltoir=%d\n", ltoir_size(h, &pn));
    print_log("error_log", h, err_size, get_err);
    print_log("info_log", h, info_size, get_info);

    /* Run it on the emulated driver. */
    void *cuda = dlopen(argv[2], RTLD_NOW | RTLD_GLOBAL);
    if (!cuda) {
        fprintf(stderr, "%s\n", dlerror());
        return 2;
    }
    CUresult (*cuInit)(unsigned) = need(cuda, "cuInit");
    CUresult (*cuDeviceGet)(CUdevice *, int) = need(cuda, "cuDeviceGet");
    CUresult (*cuDevicePrimaryCtxRetain)(CUcontext *, CUdevice) = need(cuda, "cuDevicePrimaryCtxRetain");
    CUresult (*cuDevicePrimaryCtxRelease)(CUdevice) = need(cuda, "cuDevicePrimaryCtxRelease_v2");
    CUresult (*cuCtxSetCurrent)(CUcontext) = need(cuda, "cuCtxSetCurrent");
    CUresult (*cuModuleLoadData)(CUmodule *, const void *) = need(cuda, "cuModuleLoadData");
    CUresult (*cuModuleUnload)(CUmodule) = need(cuda, "cuModuleUnload");
    CUresult (*cuModuleGetFunction)(CUfunction *, CUmodule, const char *) = need(cuda, "cuModuleGetFunction");
    CUresult (*cuMemAlloc)(CUdeviceptr *, size_t) = need(cuda, "cuMemAlloc_v2");
    CUresult (*cuMemFree)(CUdeviceptr) = need(cuda, "cuMemFree_v2");
    CUresult (*cuMemcpyHtoD)(CUdeviceptr, const void *, size_t) = need(cuda, "cuMemcpyHtoD_v2");
    CUresult (*cuMemcpyDtoH)(void *, CUdeviceptr, size_t) = need(cuda, "cuMemcpyDtoH_v2");
    CUresult (*cuCtxSynchronize)(void) = need(cuda, "cuCtxSynchronize");
    CUresult (*cuLaunchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, void *,
                               void **, void **) = need(cuda, "cuLaunchKernel");
    CUdevice dev;
    CUcontext ctx;
    CUmodule mod;
    CUfunction fn;
    rc = cuInit(0);
    rc = rc ? rc : cuDeviceGet(&dev, 0);
    rc = rc ? rc : cuDevicePrimaryCtxRetain(&ctx, dev);
    rc = rc ? rc : cuCtxSetCurrent(ctx);
    printf("context=%d\n", rc);
    printf("module_load=%d\n", cuModuleLoadData(&mod, image));
    printf("get_function=%d\n", cuModuleGetFunction(&fn, mod, "scale_helper"));
    enum { N = 300 };
    float x[N], out[N];
    for (int i = 0; i < N; i++) x[i] = (float)i * 0.5f - 20.0f;
    CUdeviceptr dx, dout;
    cuMemAlloc(&dx, sizeof x);
    cuMemAlloc(&dout, sizeof out);
    cuMemcpyHtoD(dx, x, sizeof x);
    float a = 3.0f;
    unsigned count = N;
    void *params[] = {&dout, &dx, &a, &count};
    printf("launch=%d\n", cuLaunchKernel(fn, (N + 127) / 128, 1, 1, 128, 1, 1, 0, NULL, params, NULL));
    printf("sync=%d\n", cuCtxSynchronize());
    cuMemcpyDtoH(out, dout, sizeof out);
    int bad = 0;
    for (int i = 0; i < N; i++)
        if (out[i] != (x[i] * 2.0f + 1.0f) * a) bad++;
    printf("results=%s,%d\n", bad ? "wrong" : "ok", bad);
    cuMemFree(dx);
    cuMemFree(dout);
    cuModuleUnload(mod);
    cuDevicePrimaryCtxRelease(dev);
    rc = destroy(&h);
    printf("destroy=%d,%d\n", rc, h == NULL);
    printf("destroy_again=%d\n", destroy(&h));

    /* One PTX module: nvJitLinkGetLinkedPtx gives it back. */
    const char *arch_only[] = {"-arch=sm_90"};
    create(&h, 1, arch_only);
    add_data(h, IN_ANY, helper_ptx, hlen, "helper.ptx");
    complete(h);
    rc = ptx_size(h, &pn);
    printf("ptx_size=%d,%d\n", rc, pn == strlen(helper_ptx) + 1);
    char *back = malloc(pn);
    rc = get_ptx(h, back);
    printf("ptx=%d,%d\n", rc, strcmp(back, helper_ptx) == 0);
    destroy(&h);

    /* Errors. */
    const char *no_arch[] = {"-O3"};
    Link none = (Link)1;
    rc = create(&none, 1, no_arch);
    printf("missing_arch=%d,%d\n", rc, none == NULL);
    const char *bad_opt[] = {"-arch=sm_90", "-frobnicate"};
    printf("bad_option=%d\n", create(&none, 2, bad_opt));
    printf("null_handle=%d,%d,%d,%d\n", add_data(NULL, IN_PTX, helper_ptx, hlen, "x"), complete(NULL), destroy(NULL),
           create(NULL, 1, arch_only));
    printf("stale_handle=%d\n", complete((Link)0x12345670));
    const char *lto[] = {"-arch=sm_90", "-lto"};
    static const char ltoir[] = "\x7fNVVM-not-really";
    try_input("ltoir_input", arch_only, 1, IN_LTOIR, ltoir, sizeof ltoir, "kernel.ltoir");
    try_input("ltoir_lto", lto, 2, IN_LTOIR, ltoir, sizeof ltoir, "kernel.ltoir");
    static const char nvvm_ltoir[] = "\xed"
                                     "CN\x7f\x01\x43";
    try_input("any_ltoir", arch_only, 1, IN_ANY, nvvm_ltoir, sizeof nvvm_ltoir, "<cudapy-ltoir>");
    /* A truncated archive: its symbol-table member's 4 bytes are missing. */
    static const char archive[] = "!<arch>\n/               0           0     0     0       4         `\n";
    try_input("library_input", arch_only, 1, IN_LIBRARY, archive, sizeof archive, "libcudadevrt.a");
    static char elf[64] = "\x7f"
                         "ELF\x02\x01\x01";
    elf[18] = (char)190; /* EM_CUDA */
    try_input("cubin_input", arch_only, 1, IN_CUBIN, elf, sizeof elf, "sass.cubin");
    static const unsigned char fatbin[16] = {0x50, 0xed, 0x55, 0xba, 1, 0, 16, 0};
    try_input("fatbin_input", arch_only, 1, IN_FATBIN, fatbin, sizeof fatbin, "k.fatbin");
    create(&h, 1, arch_only);
    printf("empty_complete=%d\n", complete(h));
    print_log("empty_log", h, err_size, get_err);
    printf("null_out=%d\n", err_size(h, NULL));
    destroy(&h);
    return 0;
}
