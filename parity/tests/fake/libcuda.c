/* Fake libcuda.so.1 for parity's device tests. Built three ways:
 *   -DEMULATED : exports simtwin_emulated_driver (stands in for simtwin's driver): cuInit
 *                succeeds, one device; with FAKE_DRIVER_REFUSES set it refuses
 *                EMU_CUDA_BLOCK_ORDER (other than forward) and EMU_CUDA_FAIL with
 *                CUDA_ERROR_NOT_SUPPORTED (801) and a message, as a driver without them does
 *   -DDEVICES=N: cuInit succeeds and cuDeviceGetCount answers N
 *   (neither)  : cuInit answers CUDA_ERROR_NO_DEVICE (100)                       */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef EMULATED
const char simtwin_emulated_driver[] = "fake";
#define DEVICES 1
#endif
int cuInit(unsigned flags) {
    (void)flags;
#ifdef EMULATED
    if (getenv("FAKE_DRIVER_REFUSES")) {
        const char *o = getenv("EMU_CUDA_BLOCK_ORDER"), *f = getenv("EMU_CUDA_FAIL");
        if (o && *o && strcmp(o, "forward")) {
            fprintf(stderr, "simtwin: cuInit refused: EMU_CUDA_BLOCK_ORDER=%s: not built yet in this fake\n", o);
            return 801;
        }
        if (f && *f) {
            fprintf(stderr, "simtwin: cuInit refused: EMU_CUDA_FAIL=%s: fault injection is not built yet in this fake\n", f);
            return 801;
        }
    }
#endif
#ifdef DEVICES
    return 0;
#else
    return 100;
#endif
}
int cuDeviceGetCount(int *n) {
#ifdef DEVICES
    *n = DEVICES;
#else
    *n = 0;
#endif
    return 0;
}
