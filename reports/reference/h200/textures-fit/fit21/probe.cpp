// Element-type (CU_TRSF_READ_AS_INTEGER) reads with linear filtering of the integer formats
// the conformance record does not cover (signed 8/16-bit, 32-bit signed and unsigned; 8/16-
// bit unsigned as the measured control), through the driver API. Usage: probe KERNEL.ptx
#include <cuda.h>
#include <cstdio>
#include <cstdint>
#include <cstdlib>
#include <vector>
static std::vector<char> slurp(const char *p) {
    FILE *f = fopen(p, "rb"); if (!f) { perror(p); exit(2); }
    std::vector<char> b; char buf[65536]; size_t n;
    while ((n = fread(buf, 1, sizeof buf, f)) > 0) b.insert(b.end(), buf, buf + n);
    fclose(f); b.push_back(0); return b;
}
static CUmodule mod;
template <class T>
static void run(const char *name, CUarray_format fmt, const T *vals) {
    const int W = 4, H = 2, N = 34;
    CUDA_ARRAY_DESCRIPTOR ad = {}; ad.Width = W; ad.Height = H; ad.Format = fmt; ad.NumChannels = 1;
    CUarray arr; CUresult e = cuArrayCreate(&arr, &ad);
    if (e) { printf("%s: arraycreate %d\n", name, (int)e); return; }
    CUDA_MEMCPY2D c = {}; c.srcMemoryType = CU_MEMORYTYPE_HOST; c.srcHost = vals; c.srcPitch = W * sizeof(T);
    c.dstMemoryType = CU_MEMORYTYPE_ARRAY; c.dstArray = arr; c.WidthInBytes = W * sizeof(T); c.Height = H;
    e = cuMemcpy2D(&c); if (e) printf("%s: memcpy2d %d\n", name, (int)e);
    CUDA_RESOURCE_DESC rd = {}; rd.resType = CU_RESOURCE_TYPE_ARRAY; rd.res.array.hArray = arr;
    CUDA_TEXTURE_DESC td = {}; td.addressMode[0] = td.addressMode[1] = CU_TR_ADDRESS_MODE_CLAMP;
    td.filterMode = CU_TR_FILTER_MODE_LINEAR; td.flags = CU_TRSF_READ_AS_INTEGER;
    CUtexObject t = 0; e = cuTexObjectCreate(&t, &rd, &td, nullptr);
    printf("%s: create %d", name, (int)e);
    if (e) { printf("\n"); cuArrayDestroy(arr); return; }
    float h[2 * N];
    for (int k = 0; k < 32; ++k) { h[2 * k] = 0.5f + k / 16.0f; h[2 * k + 1] = 0.5f + (k % 8) / 8.0f; }
    h[64] = 1.75f; h[65] = 1.25f; h[66] = 2.5f + 1.0f / 512; h[67] = 0.5f;
    CUdeviceptr dxy, dout; cuMemAlloc(&dxy, sizeof h); cuMemAlloc(&dout, N * 8);
    cuMemcpyHtoD(dxy, h, sizeof h); cuMemsetD8(dout, 0xee, N * 8);
    char fn[16]; snprintf(fn, sizeof fn, "f_%s", name);
    CUfunction f; e = cuModuleGetFunction(&f, mod, fn); if (e) { printf(" getfunction %d\n", (int)e); return; }
    int n = N; void *args[] = {&t, &dxy, &dout, &n};
    e = cuLaunchKernel(f, 1, 1, 1, 64, 1, 1, 0, 0, args, nullptr);
    CUresult s = cuCtxSynchronize();
    long long o[N]; cuMemcpyDtoH(o, dout, sizeof o);
    printf(" launch %d sync %d:", (int)e, (int)s);
    const unsigned long long m = sizeof(T) >= 8 ? ~0ull : ((1ull << (8 * sizeof(T))) - 1);
    for (int k = 0; k < N; ++k) printf(" %llx", (unsigned long long)o[k] & m);
    printf("\n");
    cuTexObjectDestroy(t); cuArrayDestroy(arr); cuMemFree(dxy); cuMemFree(dout);
}
int main(int argc, char **argv) {
    if (argc < 2) { fprintf(stderr, "usage: probe KERNEL.ptx\n"); return 2; }
    cuInit(0); CUdevice dev; cuDeviceGet(&dev, 0); CUcontext ctx; cuCtxCreate(&ctx, nullptr, 0, dev);
    std::vector<char> ptx = slurp(argv[1]);
    CUresult e = cuModuleLoadData(&mod, ptx.data()); if (e) { printf("module %d\n", (int)e); return 1; }
    const int8_t s8[8] = {-128, 127, -1, 0, 100, -100, 55, -3};
    const uint8_t u8[8] = {0, 255, 1, 254, 100, 200, 55, 3};
    const int16_t s16[8] = {-32768, 32767, -1, 0, 1000, -1000, 12345, -3};
    const uint16_t u16[8] = {0, 65535, 1, 65534, 1000, 50000, 12345, 3};
    const int32_t s32[8] = {INT32_MIN, INT32_MAX, -1, 0, 100000, -100000, 123456789, -3};
    const uint32_t u32[8] = {0, 0xffffffffu, 1, 0xfffffffeu, 100000, 3000000000u, 123456789, 3};
    run("u8", CU_AD_FORMAT_UNSIGNED_INT8, u8);
    run("s8", CU_AD_FORMAT_SIGNED_INT8, s8);
    run("u16", CU_AD_FORMAT_UNSIGNED_INT16, u16);
    run("s16", CU_AD_FORMAT_SIGNED_INT16, s16);
    run("u32", CU_AD_FORMAT_UNSIGNED_INT32, u32);
    run("s32", CU_AD_FORMAT_SIGNED_INT32, s32);
    return 0;
}
