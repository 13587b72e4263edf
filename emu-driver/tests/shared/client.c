/* Driver-API client for the shared-memory check tests (tests/shared_checks.rs):
 * `client FATBIN KERNEL MODE THREADS DYN_BYTES [REPEAT]` launches KERNEL(int *out, int
 * mode) on one block of THREADS threads with DYN_BYTES of dynamic shared memory, REPEAT
 * times (default 1), and prints `key=value` lines: the codes of the launch and the
 * synchronisation (CUresults), whether a checking library (`*.checks.so`) is mapped, and
 * out[0..THREADS) as hex words. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../client_support/client.h"

/* Whether a file whose name ends in `suffix` is mapped into this process. */
static int mapped(const char *suffix) {
    FILE *f = fopen("/proc/self/maps", "r");
    char line[4096];
    int found = 0;
    size_t k = strlen(suffix);
    while (f && fgets(line, sizeof line, f)) {
        size_t n = strcspn(line, "\n");
        line[n] = 0;
        if (n >= k && strcmp(line + n - k, suffix) == 0) found = 1;
    }
    if (f) fclose(f);
    return found;
}

int main(int argc, char **argv) {
    setvbuf(stdout, NULL, _IONBF, 0);
    if (argc != 6 && argc != 7) { printf("usage: client FATBIN KERNEL MODE THREADS DYN_BYTES [REPEAT]\n"); return 2; }
    int mode = atoi(argv[3]), threads = atoi(argv[4]), dyn = atoi(argv[5]), repeat = argc == 7 ? atoi(argv[6]) : 1;
    if (open_driver()) return 2;
    SYM(CUresult (*)(CUdeviceptr, unsigned char, size_t), cuMemsetD8_v2);
    void *img = read_image(argv[1]);
    if (!img) return 2;
    void *ctx, *mod, *f;
    CUresult rc;
    if (cuInit(0) || cuDevicePrimaryCtxRetain(&ctx, 0) || cuCtxSetCurrent(ctx)) { printf("setup=failed\n"); return 2; }
    if ((rc = cuModuleLoadData(&mod, img))) { printf("load=%d\n", rc); return 1; }
    printf("checks_library_mapped=%d\n", mapped(".checks.so"));
    if ((rc = cuModuleGetFunction(&f, mod, argv[2]))) { printf("function=%d\n", rc); return 1; }
    CUdeviceptr out;
    cuMemAlloc_v2(&out, 4 * (size_t)threads);
    cuMemsetD8_v2(out, 0, 4 * (size_t)threads);
    void *params[] = {&out, &mode};
    for (int i = 0; i < repeat; i++) printf("launch=%d\n", cuLaunchKernel(f, 1, 1, 1, threads, 1, 1, dyn, 0, params, 0));
    printf("sync=%d\n", cuCtxSynchronize());
    int *host = calloc(threads, 4);
    cuMemcpyDtoH_v2(host, out, 4 * (size_t)threads);
    printf("out=");
    for (int i = 0; i < threads; i++) printf("%s%08x", i ? "," : "", (unsigned)host[i]);
    printf("\n");
    return 0;
}
