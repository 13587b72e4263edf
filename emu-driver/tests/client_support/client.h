/* What the driver-API test clients (tests/{checks,pointers,shared}/client.c) share.
 * They dlopen libcuda.so.1 and look entry points up by name, as a real program's loader
 * does, so that LD_LIBRARY_PATH alone picks the driver under test; and they speak the
 * tests' `key=value` protocol on stdout, so failures here are lines too, not crashes.
 * Built by client_support/mod.rs (cc_client); included by a relative path so that a
 * client also compiles by hand. */
#ifndef SIMTWIN_TEST_CLIENT_H
#define SIMTWIN_TEST_CLIENT_H

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

typedef int CUresult;
typedef unsigned long long CUdeviceptr;
static void *lib;

/* Sets `n` to the driver's entry point of that name; if the driver lacks it, prints
 * `missing=n` and returns 2 from the calling function. */
#define LOOKUP(n) if (!(n = (__typeof__(n))dlsym(lib, #n))) { printf("missing=%s\n", #n); return 2; }

/* Declares the local `n`, of type T, and looks it up (LOOKUP). */
#define SYM(T, n) __typeof__(T) n; LOOKUP(n)

/* The entry points every client calls, filled by open_driver(); a client declares the
 * rest it needs with SYM. */
static CUresult (*cuInit)(unsigned);
static CUresult (*cuDevicePrimaryCtxRetain)(void **, int);
static CUresult (*cuCtxSetCurrent)(void *);
static CUresult (*cuMemAlloc_v2)(CUdeviceptr *, size_t);
static CUresult (*cuMemcpyDtoH_v2)(void *, CUdeviceptr, size_t);
static CUresult (*cuModuleLoadData)(void **, const void *);
static CUresult (*cuModuleGetFunction)(void **, void *, const char *);
static CUresult (*cuLaunchKernel)(void *, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, void *, void **, void **);
static CUresult (*cuCtxSynchronize)(void);

/* Loads libcuda.so.1 into `lib` and the entry points above: 0, or 2 (the clients' exit
 * code for "could not run") after printing `dlopen=REASON` or `missing=NAME`. */
static int open_driver(void) {
    lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) { printf("dlopen=%s\n", dlerror()); return 2; }
    LOOKUP(cuInit);
    LOOKUP(cuDevicePrimaryCtxRetain);
    LOOKUP(cuCtxSetCurrent);
    LOOKUP(cuMemAlloc_v2);
    LOOKUP(cuMemcpyDtoH_v2);
    LOOKUP(cuModuleLoadData);
    LOOKUP(cuModuleGetFunction);
    LOOKUP(cuLaunchKernel);
    LOOKUP(cuCtxSynchronize);
    return 0;
}

/* The module image at `path`, NUL-padded (a PTX image is a C string), or NULL after
 * printing `fatbin=unreadable`. */
static void *read_image(const char *path) {
    FILE *f = fopen(path, "rb");
    char *b = 0;
    if (f) {
        fseek(f, 0, SEEK_END);
        long n = ftell(f);
        fseek(f, 0, SEEK_SET);
        b = calloc(1, n + 16);
        if (fread(b, 1, n, f) != (size_t)n) { free(b); b = 0; }
        fclose(f);
    }
    if (!b) printf("fatbin=unreadable\n");
    return b;
}

#endif
