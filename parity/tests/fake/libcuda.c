/* Fake libcuda.so.1 for parity's device tests. Built three ways:
 *   -DEMULATED : exports simtwin_emulated_driver (stands in for simtwin's driver)
 *   -DDEVICES=N: cuInit succeeds and cuDeviceGetCount answers N
 *   (neither)  : cuInit answers CUDA_ERROR_NO_DEVICE (100)                       */
#ifdef EMULATED
const char simtwin_emulated_driver[] = "fake";
#endif
int cuInit(unsigned flags) {
    (void)flags;
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
