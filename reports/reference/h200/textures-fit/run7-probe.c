// Loads each PTX file given and prints cuModuleLoadData's and cuModuleGetFunction(NAME)'s codes.
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
typedef int (*F)();
int main(int argc, char **argv) {
    void *h = dlopen("libcuda.so.1", RTLD_NOW);
    if (!h) { printf("no libcuda\n"); return 1; }
    F init = (F)dlsym(h, "cuInit"), dget = (F)dlsym(h, "cuDeviceGet"), pr = (F)dlsym(h, "cuDevicePrimaryCtxRetain"),
      setc = (F)dlsym(h, "cuCtxSetCurrent"), load = (F)dlsym(h, "cuModuleLoadData"), getf = (F)dlsym(h, "cuModuleGetFunction"),
      unl = (F)dlsym(h, "cuModuleUnload");
    int dev; void *ctx;
    printf("init=%d ", init(0)); dget(&dev, 0); pr(&ctx, dev); printf("ctx=%d\n", setc(ctx));
    for (int i = 2; i < argc; i++) {
        FILE *f = fopen(argv[i], "rb"); if (!f) { printf("%s: cannot open\n", argv[i]); continue; }
        char *buf = calloc(1, 1 << 20); fread(buf, 1, (1 << 20) - 1, f); fclose(f);
        void *m = 0, *fn = 0;
        int a = load(&m, buf), b = -1;
        if (a == 0) { b = getf(&fn, m, argv[1]); unl(m); }
        printf("%s: load=%d getfunction=%d\n", argv[i], a, b);
        free(buf);
    }
    return 0;
}
