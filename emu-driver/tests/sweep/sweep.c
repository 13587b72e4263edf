/* Calls the driver entry points that the conformance cases and the two clients do not
 * reach, each with valid arguments and (where there is one) a bad one, and checks the
 * answers and effects. Linked against libcuda.so.1 (the emulated one under test).
 * Exit 0 only if every check holds; each failed check prints one line. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int CUresult;
typedef int CUdevice;
typedef unsigned long long CUdeviceptr;
typedef void *CUcontext, *CUmodule, *CUfunction, *CUstream, *CUevent, *CUmemoryPool;
typedef struct { size_t srcX, srcY; int srcType; const void *srcHost; CUdeviceptr srcDev; void *srcArr; size_t srcPitch;
                 size_t dstX, dstY; int dstType; void *dstHost; CUdeviceptr dstDev; void *dstArr; size_t dstPitch;
                 size_t width, height; } MEMCPY2D;

#define X(ret, name, args) ret name args;
X(CUresult, cuInit, (unsigned))
X(CUresult, cuDriverGetVersion, (int *))
X(CUresult, cuDeviceGetCount, (int *))
X(CUresult, cuDeviceGetUuid, (unsigned char *, CUdevice))
X(CUresult, cuDeviceGetUuid_v2, (unsigned char *, CUdevice))
X(CUresult, cuDeviceTotalMem_v2, (size_t *, CUdevice))
X(CUresult, cuDeviceGetPCIBusId, (char *, int, CUdevice))
X(CUresult, cuDeviceGetByPCIBusId, (CUdevice *, const char *))
X(CUresult, cuDeviceCanAccessPeer, (int *, CUdevice, CUdevice))
X(CUresult, cuDeviceGetDefaultMemPool, (CUmemoryPool *, CUdevice))
X(CUresult, cuDeviceGetMemPool, (CUmemoryPool *, CUdevice))
X(CUresult, cuDeviceSetMemPool, (CUdevice, CUmemoryPool))
X(CUresult, cuDevicePrimaryCtxRetain, (CUcontext *, CUdevice))
X(CUresult, cuDevicePrimaryCtxRelease_v2, (CUdevice))
X(CUresult, cuDevicePrimaryCtxSetFlags_v2, (CUdevice, unsigned))
X(CUresult, cuDevicePrimaryCtxGetState, (CUdevice, unsigned *, int *))
X(CUresult, cuCtxSetCurrent, (CUcontext))
X(CUresult, cuCtxCreate_v3, (CUcontext *, void *, int, unsigned, CUdevice))
X(CUresult, cuCtxCreate_v4, (CUcontext *, void *, unsigned, CUdevice))
X(CUresult, cuCtxDestroy_v2, (CUcontext))
X(CUresult, cuCtxPushCurrent_v2, (CUcontext))
X(CUresult, cuCtxPopCurrent_v2, (CUcontext *))
X(CUresult, cuCtxGetDevice, (CUdevice *))
X(CUresult, cuCtxGetFlags, (unsigned *))
X(CUresult, cuCtxSetFlags, (unsigned))
X(CUresult, cuCtxGetId, (CUcontext, unsigned long long *))
X(CUresult, cuCtxGetApiVersion, (CUcontext, unsigned *))
X(CUresult, cuCtxSetLimit, (int, size_t))
X(CUresult, cuCtxGetLimit, (size_t *, int))
X(CUresult, cuCtxGetCacheConfig, (int *))
X(CUresult, cuCtxSetCacheConfig, (int))
X(CUresult, cuMemAlloc_v2, (CUdeviceptr *, size_t))
X(CUresult, cuMemFree_v2, (CUdeviceptr))
X(CUresult, cuMemGetInfo_v2, (size_t *, size_t *))
X(CUresult, cuMemGetAddressRange_v2, (CUdeviceptr *, size_t *, CUdeviceptr))
X(CUresult, cuMemAllocHost_v2, (void **, size_t))
X(CUresult, cuMemFreeHost, (void *))
X(CUresult, cuMemHostGetDevicePointer_v2, (CUdeviceptr *, void *, unsigned))
X(CUresult, cuMemHostGetFlags, (unsigned *, void *))
X(CUresult, cuMemHostRegister_v2, (void *, size_t, unsigned))
X(CUresult, cuMemHostUnregister, (void *))
X(CUresult, cuMemAllocManaged, (CUdeviceptr *, size_t, unsigned))
X(CUresult, cuMemAllocFromPoolAsync, (CUdeviceptr *, size_t, CUmemoryPool, CUstream))
X(CUresult, cuMemFreeAsync, (CUdeviceptr, CUstream))
X(CUresult, cuMemPoolTrimTo, (CUmemoryPool, size_t))
X(CUresult, cuMemPoolSetAttribute, (CUmemoryPool, int, void *))
X(CUresult, cuMemPoolGetAttribute, (CUmemoryPool, int, void *))
X(CUresult, cuMemcpy, (CUdeviceptr, CUdeviceptr, size_t))
X(CUresult, cuMemcpyAsync, (CUdeviceptr, CUdeviceptr, size_t, CUstream))
X(CUresult, cuMemcpyHtoD_v2, (CUdeviceptr, const void *, size_t))
X(CUresult, cuMemcpyDtoH_v2, (void *, CUdeviceptr, size_t))
X(CUresult, cuMemcpyDtoDAsync_v2, (CUdeviceptr, CUdeviceptr, size_t, CUstream))
X(CUresult, cuMemcpy2D_v2, (const MEMCPY2D *))
X(CUresult, cuMemcpy2DAsync_v2, (const MEMCPY2D *, CUstream))
X(CUresult, cuMemcpy2DUnaligned_v2, (const MEMCPY2D *))
X(CUresult, cuMemsetD16_v2, (CUdeviceptr, unsigned short, size_t))
X(CUresult, cuMemsetD16Async, (CUdeviceptr, unsigned short, size_t, CUstream))
X(CUresult, cuMemsetD32Async, (CUdeviceptr, unsigned, size_t, CUstream))
X(CUresult, cuMemsetD2D8_v2, (CUdeviceptr, size_t, unsigned char, size_t, size_t))
X(CUresult, cuMemsetD2D16_v2, (CUdeviceptr, size_t, unsigned short, size_t, size_t))
X(CUresult, cuMemsetD2D32_v2, (CUdeviceptr, size_t, unsigned, size_t, size_t))
X(CUresult, cuMemsetD2D8Async, (CUdeviceptr, size_t, unsigned char, size_t, size_t, CUstream))
X(CUresult, cuMemsetD2D16Async, (CUdeviceptr, size_t, unsigned short, size_t, size_t, CUstream))
X(CUresult, cuMemsetD2D32Async, (CUdeviceptr, size_t, unsigned, size_t, size_t, CUstream))
X(CUresult, cuPointerGetAttributes, (unsigned, int *, void **, CUdeviceptr))
X(CUresult, cuMemPrefetchAsync, (CUdeviceptr, size_t, CUdevice, CUstream))
X(CUresult, cuMemAdvise, (CUdeviceptr, size_t, int, CUdevice))
X(CUresult, cuModuleLoad, (CUmodule *, const char *))
X(CUresult, cuModuleLoadDataEx, (CUmodule *, const void *, unsigned, int *, void **))
X(CUresult, cuModuleLoadFatBinary, (CUmodule *, const void *))
X(CUresult, cuModuleUnload, (CUmodule))
X(CUresult, cuModuleGetFunction, (CUfunction *, CUmodule, const char *))
X(CUresult, cuModuleGetFunctionCount, (unsigned *, CUmodule))
X(CUresult, cuFuncGetName, (const char **, CUfunction))
X(CUresult, cuFuncGetModule, (CUmodule *, CUfunction))
X(CUresult, cuFuncSetCacheConfig, (CUfunction, int))
X(CUresult, cuOccupancyMaxActiveBlocksPerMultiprocessor, (int *, CUfunction, int, size_t))
X(CUresult, cuOccupancyMaxPotentialBlockSize, (int *, int *, CUfunction, void *, size_t, int))
X(CUresult, cuStreamCreate, (CUstream *, unsigned))
X(CUresult, cuStreamDestroy_v2, (CUstream))
X(CUresult, cuStreamGetPriority, (CUstream, int *))
X(CUresult, cuStreamGetFlags, (CUstream, unsigned *))
X(CUresult, cuStreamGetCtx, (CUstream, CUcontext *))
X(CUresult, cuStreamGetId, (CUstream, unsigned long long *))
X(CUresult, cuStreamIsCapturing, (CUstream, int *))
X(CUresult, cuStreamAddCallback, (CUstream, void (*)(CUstream, CUresult, void *), void *, unsigned))
X(CUresult, cuStreamSynchronize, (CUstream))
X(CUresult, cuEventCreate, (CUevent *, unsigned))
X(CUresult, cuEventDestroy_v2, (CUevent))
X(CUresult, cuEventRecordWithFlags, (CUevent, CUstream, unsigned))
X(CUresult, cuEventQuery, (CUevent))
X(CUresult, cuEventSynchronize, (CUevent))
X(CUresult, cuEventElapsedTime_v2, (float *, CUevent, CUevent))
X(CUresult, cuProfilerStart, (void))
X(CUresult, cuProfilerStop, (void))
X(CUresult, cuCtxPushCurrent, (CUcontext))
X(CUresult, cuCtxPopCurrent, (CUcontext *))
X(CUresult, cuStreamDestroy, (CUstream))
X(CUresult, cuEventDestroy, (CUevent))
X(CUresult, cuEventRecord, (CUevent, CUstream))
X(CUresult, cuEventElapsedTime, (float *, CUevent, CUevent))
X(CUresult, cuDevicePrimaryCtxSetFlags, (CUdevice, unsigned))
X(CUresult, cuMemcpy_ptds, (CUdeviceptr, CUdeviceptr, size_t))
X(CUresult, cuMemcpyAsync_ptsz, (CUdeviceptr, CUdeviceptr, size_t, CUstream))
X(CUresult, cuMemcpyHtoD_v2_ptds, (CUdeviceptr, const void *, size_t))
X(CUresult, cuMemcpyDtoH_v2_ptds, (void *, CUdeviceptr, size_t))
X(CUresult, cuMemcpyDtoD_v2_ptds, (CUdeviceptr, CUdeviceptr, size_t))
X(CUresult, cuMemcpyHtoDAsync_v2_ptsz, (CUdeviceptr, const void *, size_t, CUstream))
X(CUresult, cuMemcpyDtoHAsync_v2_ptsz, (void *, CUdeviceptr, size_t, CUstream))
X(CUresult, cuMemcpyDtoDAsync_v2_ptsz, (CUdeviceptr, CUdeviceptr, size_t, CUstream))
X(CUresult, cuMemcpy2D_v2_ptds, (const MEMCPY2D *))
X(CUresult, cuMemcpy2DAsync_v2_ptsz, (const MEMCPY2D *, CUstream))
X(CUresult, cuMemsetD8_v2_ptds, (CUdeviceptr, unsigned char, size_t))
X(CUresult, cuMemsetD32_v2_ptds, (CUdeviceptr, unsigned, size_t))
X(CUresult, cuMemsetD8Async_ptsz, (CUdeviceptr, unsigned char, size_t, CUstream))
X(CUresult, cuMemsetD32Async_ptsz, (CUdeviceptr, unsigned, size_t, CUstream))
X(CUresult, cuStreamQuery_ptsz, (CUstream))
X(CUresult, cuStreamSynchronize_ptsz, (CUstream))
X(CUresult, cuStreamWaitEvent_ptsz, (CUstream, CUevent, unsigned))
X(CUresult, cuEventRecord_ptsz, (CUevent, CUstream))
X(CUresult, cuStreamAddCallback_ptsz, (CUstream, void (*)(CUstream, CUresult, void *), void *, unsigned))
X(CUresult, cuLaunchHostFunc_ptsz, (CUstream, void (*)(void *), void *))
X(CUresult, cuMemAllocAsync_ptsz, (CUdeviceptr *, size_t, CUstream))
X(CUresult, cuMemFreeAsync_ptsz, (CUdeviceptr, CUstream))
X(CUresult, cuMemPoolCreate, (CUmemoryPool *, const void *))
X(CUresult, cuMemPoolDestroy, (CUmemoryPool))
X(CUresult, cuMemcpyPeer, (CUdeviceptr, CUcontext, CUdeviceptr, CUcontext, size_t))
X(CUresult, cuMemcpyPeerAsync, (CUdeviceptr, CUcontext, CUdeviceptr, CUcontext, size_t, CUstream))
X(CUresult, cuCtxGetSharedMemConfig, (int *))
X(CUresult, cuCtxSetSharedMemConfig, (int))
X(CUresult, cuFuncSetSharedMemConfig, (CUfunction, int))
X(CUresult, cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags, (int *, CUfunction, int, size_t, unsigned))
X(CUresult, cuOccupancyMaxPotentialBlockSizeWithFlags, (int *, int *, CUfunction, void *, size_t, int, unsigned))
X(CUresult, cuDeviceGetTexture1DLinearMaxWidth, (size_t *, int, unsigned, CUdevice))
X(CUresult, cuStreamAttachMemAsync, (CUstream, CUdeviceptr, size_t, unsigned))
X(CUresult, cuMemPrefetchAsync_v2, (CUdeviceptr, size_t, unsigned long long, unsigned, CUstream))
X(CUresult, cuMemAdvise_v2, (CUdeviceptr, size_t, int, unsigned long long))
X(CUresult, cuGetProcAddress, (const char *, void **, int, unsigned long long))
typedef struct { unsigned gx, gy, gz, bx, by, bz, shared; CUstream stream; void *attrs; unsigned nattrs; } LAUNCHCONFIG;
X(CUresult, cuLaunchKernelEx, (const LAUNCHCONFIG *, CUfunction, void **, void **))
X(CUresult, cuLaunchKernelEx_ptsz, (const LAUNCHCONFIG *, CUfunction, void **, void **))
X(CUresult, cuLaunchKernel_ptsz, (CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, CUstream, void **, void **))
X(CUresult, cuCtxCreate_v2, (CUcontext *, unsigned, CUdevice))
X(CUresult, cuCtxDestroy, (CUcontext))
X(CUresult, cuMemsetD32_v2, (CUdeviceptr, unsigned, size_t))
X(CUresult, cuDevicePrimaryCtxRelease, (CUdevice))
X(CUresult, cuDevicePrimaryCtxReset, (CUdevice))
X(CUresult, cuMemsetD16_v2_ptds, (CUdeviceptr, unsigned short, size_t))
X(CUresult, cuMemsetD16Async_ptsz, (CUdeviceptr, unsigned short, size_t, CUstream))
X(CUresult, cuMemsetD2D8_v2_ptds, (CUdeviceptr, size_t, unsigned char, size_t, size_t))
X(CUresult, cuMemsetD2D16_v2_ptds, (CUdeviceptr, size_t, unsigned short, size_t, size_t))
X(CUresult, cuMemsetD2D32_v2_ptds, (CUdeviceptr, size_t, unsigned, size_t, size_t))
X(CUresult, cuMemsetD2D8Async_ptsz, (CUdeviceptr, size_t, unsigned char, size_t, size_t, CUstream))
X(CUresult, cuMemsetD2D16Async_ptsz, (CUdeviceptr, size_t, unsigned short, size_t, size_t, CUstream))
X(CUresult, cuMemsetD2D32Async_ptsz, (CUdeviceptr, size_t, unsigned, size_t, size_t, CUstream))
X(CUresult, cuMemcpy2DUnaligned_v2_ptds, (const MEMCPY2D *))
X(CUresult, cuMemcpyPeer_ptds, (CUdeviceptr, CUcontext, CUdeviceptr, CUcontext, size_t))
X(CUresult, cuMemcpyPeerAsync_ptsz, (CUdeviceptr, CUcontext, CUdeviceptr, CUcontext, size_t, CUstream))
X(CUresult, cuStreamGetPriority_ptsz, (CUstream, int *))
X(CUresult, cuStreamGetFlags_ptsz, (CUstream, unsigned *))
X(CUresult, cuStreamGetCtx_ptsz, (CUstream, CUcontext *))
X(CUresult, cuStreamGetId_ptsz, (CUstream, unsigned long long *))
X(CUresult, cuStreamIsCapturing_ptsz, (CUstream, int *))
X(CUresult, cuStreamGetDevice, (CUstream, CUdevice *))
X(CUresult, cuStreamGetDevice_ptsz, (CUstream, CUdevice *))
X(CUresult, cuStreamAttachMemAsync_ptsz, (CUstream, CUdeviceptr, size_t, unsigned))
X(CUresult, cuEventRecordWithFlags_ptsz, (CUevent, CUstream, unsigned))
X(CUresult, cuMemAllocFromPoolAsync_ptsz, (CUdeviceptr *, size_t, CUmemoryPool, CUstream))
X(CUresult, cuMemPrefetchAsync_ptsz, (CUdeviceptr, size_t, CUdevice, CUstream))
X(CUresult, cuMemPrefetchAsync_v2_ptsz, (CUdeviceptr, size_t, unsigned long long, unsigned, CUstream))
X(CUresult, cuCtxGetDevice_v2, (CUdevice *, CUcontext))
X(CUresult, cuCtxSynchronize_v2, (CUcontext))
X(CUresult, cuMemGetDefaultMemPool, (CUmemoryPool *, void *, int))
X(CUresult, cuMemGetMemPool, (CUmemoryPool *, void *, int))
X(CUresult, cuMemSetMemPool, (void *, int, CUmemoryPool))
X(CUresult, cuDeviceGetProperties, (int *, CUdevice))
typedef struct { int type, handleTypes, locType, locId; void *win32; unsigned char comp, rdma; unsigned short usage; unsigned char res[4]; } MEMPROP;
typedef struct { int locType, locId, flags; } ACCESSDESC;
X(CUresult, cuMemGetAllocationGranularity, (size_t *, const MEMPROP *, int))
X(CUresult, cuMemCreate, (unsigned long long *, size_t, const MEMPROP *, unsigned long long))
X(CUresult, cuMemRelease, (unsigned long long))
X(CUresult, cuMemAddressReserve, (CUdeviceptr *, size_t, size_t, CUdeviceptr, unsigned long long))
X(CUresult, cuMemAddressFree, (CUdeviceptr, size_t))
X(CUresult, cuMemMap, (CUdeviceptr, size_t, size_t, unsigned long long, unsigned long long))
X(CUresult, cuMemUnmap, (CUdeviceptr, size_t))
X(CUresult, cuMemSetAccess, (CUdeviceptr, size_t, const ACCESSDESC *, size_t))
#undef X

/* Legacy (pre-3.2, 32-bit pointer) names: no prototypes, as their argument types differ. */
CUresult cuMemAllocPitch();
CUresult cuMemGetInfo();
CUresult cuMemGetAddressRange();
CUresult cuMemAllocHost();
CUresult cuMemHostGetDevicePointer();
CUresult cuMemcpyDtoD();
CUresult cuMemcpyDtoDAsync();
CUresult cuMemcpy2D();
CUresult cuMemcpy2DAsync();
CUresult cuMemcpy2DUnaligned();
CUresult cuMemsetD8();
CUresult cuMemsetD16();
CUresult cuMemsetD32();
CUresult cuMemsetD2D8();
CUresult cuMemsetD2D16();
CUresult cuMemsetD2D32();
CUresult cuMemHostRegister();

static int failures;
#define CHECK(expr, want) do { CUresult r_ = (expr); if (r_ != (want)) { printf("FAIL %s:%d %s -> %d, want %d\n", __FILE__, __LINE__, #expr, r_, (want)); failures++; } } while (0)
#define TRUE(cond) do { if (!(cond)) { printf("FAIL %s:%d %s\n", __FILE__, __LINE__, #cond); failures++; } } while (0)

static int callback_ran, host_ran;
static void on_host(void *data) { host_ran = data == &host_ran; }
static void on_stream(CUstream s, CUresult status, void *data) { (void)s; callback_ran = (status == 0) && data == &callback_ran; }

int main(int argc, char **argv) {
    if (argc != 2) { fprintf(stderr, "usage: sweep FATBIN\n"); return 2; }
    CHECK(cuInit(0), 0);
    int v = 0, n = 0;
    CHECK(cuDriverGetVersion(&v), 0); TRUE(v == 13000);
    CHECK(cuDeviceGetCount(&n), 0); TRUE(n == 1);
    unsigned char uuid[16], uuid2[16];
    CHECK(cuDeviceGetUuid(uuid, 0), 0); CHECK(cuDeviceGetUuid_v2(uuid2, 0), 0); TRUE(memcmp(uuid, uuid2, 16) == 0);
    size_t total = 0; CHECK(cuDeviceTotalMem_v2(&total, 0), 0); TRUE(total == 150109880320ull);
    char bus[32]; CUdevice d = -1;
    CHECK(cuDeviceGetPCIBusId(bus, sizeof bus, 0), 0); CHECK(cuDeviceGetByPCIBusId(&d, bus), 0); TRUE(d == 0);
    int peer = 7; CHECK(cuDeviceCanAccessPeer(&peer, 0, 0), 0); TRUE(peer == 0);
    CHECK(cuDeviceCanAccessPeer(&peer, 0, 3), 101);
    CUmemoryPool pool = 0, pool2 = 0;
    CHECK(cuDeviceGetDefaultMemPool(&pool, 0), 0); CHECK(cuDeviceGetMemPool(&pool2, 0), 0); TRUE(pool == pool2 && pool);
    CHECK(cuDeviceSetMemPool(0, pool), 0); CHECK(cuDeviceSetMemPool(0, (CUmemoryPool)0x1234), 1);

    CHECK(cuDevicePrimaryCtxSetFlags_v2(0, 4), 0);
    unsigned flags = 0; int active = 1;
    CHECK(cuDevicePrimaryCtxGetState(0, &flags, &active), 0); TRUE(flags == 4 && active == 0);
    CUcontext ctx = 0; CHECK(cuDevicePrimaryCtxRetain(&ctx, 0), 0); CHECK(cuCtxSetCurrent(ctx), 0);
    CHECK(cuDevicePrimaryCtxGetState(0, &flags, &active), 0); TRUE(active == 1);
    CHECK(cuCtxGetFlags(&flags), 0); TRUE(flags == 4);
    CHECK(cuCtxSetFlags(1), 0); CHECK(cuCtxGetFlags(&flags), 0); TRUE(flags == 1);
    unsigned long long id1 = 0, id2 = 0; CHECK(cuCtxGetId(ctx, &id1), 0);
    unsigned api = 0; CHECK(cuCtxGetApiVersion(ctx, &api), 0); TRUE(api == 3020);
    size_t lim = 0; CHECK(cuCtxSetLimit(2, 1 << 24), 0); CHECK(cuCtxGetLimit(&lim, 2), 0); TRUE(lim == (1 << 24));
    CHECK(cuCtxGetLimit(&lim, 99), 215);
    int cc = -1; CHECK(cuCtxSetCacheConfig(2), 0); CHECK(cuCtxGetCacheConfig(&cc), 0); TRUE(cc == 2);
    CUcontext c3 = 0, c4 = 0, popped = 0;
    CHECK(cuCtxCreate_v3(&c3, 0, 0, 0, 0), 0); CHECK(cuCtxGetId(c3, &id2), 0); TRUE(id1 != id2);
    CHECK(cuCtxPopCurrent_v2(&popped), 0); TRUE(popped == c3);
    CHECK(cuCtxCreate_v4(&c4, 0, 0, 0), 0); CHECK(cuCtxPopCurrent_v2(&popped), 0); TRUE(popped == c4);
    CHECK(cuCtxPushCurrent_v2(c4), 0); CUdevice cd = -1; CHECK(cuCtxGetDevice(&cd), 0); TRUE(cd == 0);
    CHECK(cuCtxPopCurrent_v2(0), 0);
    CHECK(cuCtxDestroy_v2(c3), 0); CHECK(cuCtxDestroy_v2(c4), 0); CHECK(cuCtxDestroy_v2(c4), 201);

    /* memory */
    size_t fr = 0, tot = 0; CHECK(cuMemGetInfo_v2(&fr, &tot), 0); TRUE(tot == total && fr <= tot);
    CUdeviceptr a = 0, b = 0, base = 0; size_t sz = 0;
    CHECK(cuMemAlloc_v2(&a, 4096), 0); CHECK(cuMemAlloc_v2(&b, 4096), 0);
    size_t fr2 = 0; CHECK(cuMemGetInfo_v2(&fr2, &tot), 0); TRUE(fr - fr2 == 8192);
    CHECK(cuMemGetAddressRange_v2(&base, &sz, a + 100), 0); TRUE(base == a && sz == 4096);
    CHECK(cuMemGetAddressRange_v2(&base, &sz, 16), 500);
    void *h = 0; CUdeviceptr hd = 0; unsigned hf = 0;
    CHECK(cuMemAllocHost_v2(&h, 4096), 0); CHECK(cuMemHostGetDevicePointer_v2(&hd, h, 0), 0); TRUE(hd == (CUdeviceptr)(uintptr_t)h);
    CHECK(cuMemHostGetFlags(&hf, h), 0);
    static unsigned char reg[8192];
    CHECK(cuMemHostRegister_v2(reg, sizeof reg, 0), 0); CHECK(cuMemHostRegister_v2(reg, 16, 0), 712);
    CHECK(cuMemHostUnregister(reg), 0); CHECK(cuMemHostUnregister(reg), 713);
    CUdeviceptr m = 0; CHECK(cuMemAllocManaged(&m, 1024, 1), 0); CHECK(cuMemAllocManaged(&m, 1024, 7), 1);
    CHECK(cuMemPrefetchAsync(m, 1024, 0, 0), 0); CHECK(cuMemAdvise(m, 1024, 1, 0), 0); CHECK(cuMemAdvise(a, 16, 1, 0), 1);
    CUstream s = 0; CHECK(cuStreamCreate(&s, 1), 0);
    CUdeviceptr p = 0; unsigned long long used = 0, zero = 0;
    CHECK(cuMemAllocFromPoolAsync(&p, 1000, pool, s), 0);
    CHECK(cuMemPoolGetAttribute(pool, 7 /* USED_MEM_CURRENT */, &used), 0); TRUE(used == 1000);
    CHECK(cuMemFreeAsync(p, s), 0);
    CHECK(cuMemPoolGetAttribute(pool, 7, &used), 0); TRUE(used == 0);
    CHECK(cuMemPoolGetAttribute(pool, 8 /* USED_MEM_HIGH */, &used), 0); TRUE(used == 1000);
    CHECK(cuMemPoolSetAttribute(pool, 8, &zero), 0); CHECK(cuMemPoolGetAttribute(pool, 8, &used), 0); TRUE(used == 0);
    unsigned long long thr = 1 << 20; CHECK(cuMemPoolSetAttribute(pool, 4, &thr), 0);
    CHECK(cuMemPoolGetAttribute(pool, 4, &used), 0); TRUE(used == thr);
    CHECK(cuMemPoolTrimTo(pool, 0), 0);

    unsigned char in[4096], out[4096];
    for (int i = 0; i < 4096; i++) in[i] = (unsigned char)(i * 7 + 3);
    CHECK(cuMemcpyHtoD_v2(a, in, 4096), 0);
    CHECK(cuMemcpy(b, a, 4096), 0); memset(out, 0, sizeof out); CHECK(cuMemcpyDtoH_v2(out, b, 4096), 0); TRUE(memcmp(in, out, 4096) == 0);
    CHECK(cuMemcpy(b, a, 4097), 1);
    CHECK(cuMemcpyAsync((CUdeviceptr)(uintptr_t)out, a + 1, 100, s), 0); TRUE(out[0] == in[1] && out[99] == in[100]);
    CHECK(cuMemcpyDtoDAsync_v2(b, a + 2048, 2048, s), 0); CHECK(cuMemcpyDtoH_v2(out, b, 16), 0); TRUE(out[0] == in[2048]);
    /* 2D: 8 rows of 40 bytes from a host image with pitch 64 into the device at pitch 128, and back */
    unsigned char img[64 * 8], back[40 * 8];
    for (int i = 0; i < 64 * 8; i++) img[i] = (unsigned char)(i ^ 0x5a);
    MEMCPY2D c2; memset(&c2, 0, sizeof c2);
    c2.srcType = 1; c2.srcHost = img; c2.srcPitch = 64; c2.dstType = 2; c2.dstDev = a; c2.dstPitch = 128; c2.width = 40; c2.height = 8;
    CHECK(cuMemcpy2D_v2(&c2), 0);
    MEMCPY2D r2; memset(&r2, 0, sizeof r2);
    r2.srcType = 2; r2.srcDev = a; r2.srcPitch = 128; r2.dstType = 1; r2.dstHost = back; r2.dstPitch = 40; r2.width = 40; r2.height = 8;
    CHECK(cuMemcpy2DAsync_v2(&r2, s), 0);
    int ok2d = 1; for (int y = 0; y < 8; y++) for (int x = 0; x < 40; x++) ok2d &= back[y * 40 + x] == img[y * 64 + x];
    TRUE(ok2d);
    CHECK(cuMemcpy2DUnaligned_v2(&c2), 0);
    c2.height = 40; CHECK(cuMemcpy2D_v2(&c2), 1); /* 40 rows of pitch 128 overrun the 4096-byte allocation */
    /* memsets */
    unsigned short s16[8]; unsigned u32[8];
    CHECK(cuMemsetD16_v2(a, 0xbeef, 8), 0); CHECK(cuMemcpyDtoH_v2(s16, a, 16), 0); TRUE(s16[0] == 0xbeef && s16[7] == 0xbeef);
    CHECK(cuMemsetD16Async(a, 0x1234, 8, s), 0); CHECK(cuMemcpyDtoH_v2(s16, a, 16), 0); TRUE(s16[3] == 0x1234);
    CHECK(cuMemsetD32Async(a, 0xdeadbeef, 8, s), 0); CHECK(cuMemcpyDtoH_v2(u32, a, 32), 0); TRUE(u32[7] == 0xdeadbeef);
    CHECK(cuMemsetD2D8_v2(a, 256, 0x11, 100, 4), 0); CHECK(cuMemcpyDtoH_v2(out, a, 1024), 0);
    TRUE(out[0] == 0x11 && out[99] == 0x11 && out[100] != 0x11 && out[768 + 99] == 0x11);
    CHECK(cuMemsetD2D16_v2(a, 256, 0x2222, 10, 2), 0); CHECK(cuMemsetD2D32_v2(a, 256, 0x33333333, 10, 2), 0);
    CHECK(cuMemcpyDtoH_v2(u32, a + 256, 32), 0); TRUE(u32[9 - 2] == 0x33333333);
    CHECK(cuMemsetD2D8Async(a, 256, 1, 10, 2, s), 0); CHECK(cuMemsetD2D16Async(a, 256, 2, 10, 2, s), 0);
    CHECK(cuMemsetD2D32Async(a, 256, 3, 10, 2, s), 0); CHECK(cuMemsetD2D32Async(a, 256, 3, 10, 20, s), 1);
    int attrs[2] = {2 /* MEMORY_TYPE */, 12 /* RANGE_SIZE */}; unsigned mt = 0; size_t rs = 0; void *data[2] = {&mt, &rs};
    CHECK(cuPointerGetAttributes(2, attrs, data, a + 8), 0); TRUE(mt == 2 && rs == 4096);

    /* modules and functions */
    FILE *f = fopen(argv[1], "rb"); if (!f) { perror(argv[1]); return 2; }
    static unsigned char image[1 << 20]; size_t len = fread(image, 1, sizeof image, f); fclose(f); TRUE(len > 0);
    CUmodule mod = 0, mod2 = 0, mod3 = 0, fm = 0;
    CHECK(cuModuleLoad(&mod, argv[1]), 0); CHECK(cuModuleLoad(&mod2, "/nonexistent/x.fatbin"), 301);
    CHECK(cuModuleLoadDataEx(&mod2, image, 0, 0, 0), 0); CHECK(cuModuleLoadFatBinary(&mod3, image), 0);
    unsigned nf = 0; CHECK(cuModuleGetFunctionCount(&nf, mod), 0); TRUE(nf >= 1);
    CUfunction fn = 0; CHECK(cuModuleGetFunction(&fn, mod, "weigh"), 0);
    const char *name = 0; CHECK(cuFuncGetName(&name, fn), 0); TRUE(name && strcmp(name, "weigh") == 0);
    CHECK(cuFuncGetModule(&fm, fn), 0); TRUE(fm == mod);
    CHECK(cuFuncSetCacheConfig(fn, 1), 0); CHECK(cuFuncSetCacheConfig(fn, 9), 1);
    int blocks = 0, minGrid = 0, bs = 0;
    CHECK(cuOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, fn, 256, 0), 0); TRUE(blocks >= 1 && blocks <= 32);
    CHECK(cuOccupancyMaxPotentialBlockSize(&minGrid, &bs, fn, 0, 0, 0), 0); TRUE(bs >= 32 && bs <= 1024 && minGrid >= 132);
    CHECK(cuModuleUnload(mod2), 0); CHECK(cuModuleUnload(mod3), 0); CHECK(cuModuleUnload(mod3), 400);

    /* streams and events */
    int prio = 9; unsigned sfl = 9; CUcontext sc = 0; unsigned long long sid = 0; int cap = 9;
    CHECK(cuStreamGetPriority(s, &prio), 0); TRUE(prio == 0);
    CHECK(cuStreamGetFlags(s, &sfl), 0); TRUE(sfl == 1);
    CHECK(cuStreamGetCtx(s, &sc), 0); TRUE(sc == ctx);
    CHECK(cuStreamGetId(s, &sid), 0);
    CHECK(cuStreamIsCapturing(s, &cap), 0); TRUE(cap == 0);
    CHECK(cuStreamAddCallback(s, on_stream, &callback_ran, 0), 0); TRUE(callback_ran);
    CHECK(cuStreamAddCallback(s, on_stream, &callback_ran, 1), 1);
    CUevent e0 = 0, e1 = 0; float ms = -1;
    CHECK(cuEventCreate(&e0, 0), 0); CHECK(cuEventCreate(&e1, 0), 0);
    CHECK(cuEventRecordWithFlags(e0, s, 0), 0); CHECK(cuStreamSynchronize(s), 0); CHECK(cuEventRecordWithFlags(e1, s, 0), 0);
    CHECK(cuEventQuery(e1), 0); CHECK(cuEventSynchronize(e1), 0);
    CHECK(cuEventElapsedTime_v2(&ms, e0, e1), 0); TRUE(ms >= 0.0f && ms < 1000.0f);
    CHECK(cuEventDestroy_v2(e0), 0); CHECK(cuEventDestroy_v2(e1), 0); CHECK(cuEventQuery(e1), 400);
    CHECK(cuProfilerStart(), 0); CHECK(cuProfilerStop(), 0);


    /* legacy-named (same ABI) and per-thread-default-stream variants, pools, peers, hints */
    {
        CUstream t = 0; CHECK(cuStreamCreate(&t, 0), 0);
        CHECK(cuMemcpyHtoD_v2_ptds(a, in, 64), 0); CHECK(cuMemcpy_ptds(b, a, 64), 0); CHECK(cuMemcpyDtoD_v2_ptds(b + 64, a, 64), 0);
        memset(out, 0, 128); CHECK(cuMemcpyDtoH_v2_ptds(out, b, 128), 0); TRUE(memcmp(out, in, 64) == 0 && memcmp(out + 64, in, 64) == 0);
        CHECK(cuMemcpyHtoDAsync_v2_ptsz(a, in + 1, 32, t), 0); CHECK(cuMemcpyDtoDAsync_v2_ptsz(b, a, 32, t), 0);
        CHECK(cuMemcpyAsync_ptsz(b + 32, a, 32, t), 0); CHECK(cuMemcpyDtoHAsync_v2_ptsz(out, b, 64, t), 0);
        TRUE(out[0] == in[1] && out[32] == in[1]);
        MEMCPY2D q; memset(&q, 0, sizeof q);
        q.srcType = 2; q.srcDev = a; q.srcPitch = 128; q.dstType = 1; q.dstHost = back; q.dstPitch = 40; q.width = 40; q.height = 8;
        CHECK(cuMemcpy2D_v2_ptds(&q), 0); CHECK(cuMemcpy2DAsync_v2_ptsz(&q, t), 0);
        CHECK(cuMemsetD8_v2_ptds(a, 9, 16), 0); CHECK(cuMemsetD32_v2_ptds(a, 9, 8), 0);
        CHECK(cuMemsetD8Async_ptsz(a, 9, 16, t), 0); CHECK(cuMemsetD32Async_ptsz(a, 9, 8, t), 0);
        CHECK(cuStreamQuery_ptsz(t), 0); CHECK(cuStreamSynchronize_ptsz(t), 0);
        CUevent ev = 0, ev2 = 0; float el = -1; CHECK(cuEventCreate(&ev, 0), 0); CHECK(cuEventCreate(&ev2, 0), 0);
        CHECK(cuEventRecord_ptsz(ev, t), 0); CHECK(cuEventRecord(ev2, t), 0); CHECK(cuStreamWaitEvent_ptsz(t, ev, 0), 0);
        CHECK(cuEventElapsedTime(&el, ev, ev2), 0); TRUE(el >= 0.0f);
        callback_ran = 0; CHECK(cuStreamAddCallback_ptsz(t, on_stream, &callback_ran, 0), 0); TRUE(callback_ran);
        CHECK(cuLaunchHostFunc_ptsz(t, on_host, &host_ran), 0); TRUE(host_ran);
        CUdeviceptr z = 0; CHECK(cuMemAllocAsync_ptsz(&z, 512, t), 0); CHECK(cuMemFreeAsync_ptsz(z, t), 0); CHECK(cuMemFreeAsync_ptsz(z, t), 1);
        unsigned char props[88]; memset(props, 0, sizeof props); props[0] = 1; /* CU_MEM_ALLOCATION_TYPE_PINNED */
        CUmemoryPool own = 0; CHECK(cuMemPoolCreate(&own, props), 0); CHECK(cuMemPoolDestroy(own), 0); CHECK(cuMemPoolDestroy(pool), 1);
        CHECK(cuMemcpyPeer(b, ctx, a, ctx, 64), 0); CHECK(cuMemcpyPeerAsync(b, ctx, a, ctx, 64, t), 0);
        int smc = -1; CHECK(cuCtxSetSharedMemConfig(2), 0); CHECK(cuCtxGetSharedMemConfig(&smc), 0); TRUE(smc == 2);
        CUmodule mm = 0; CUfunction ff = 0; CHECK(cuModuleLoad(&mm, argv[1]), 0); CHECK(cuModuleGetFunction(&ff, mm, "weigh"), 0);
        CHECK(cuFuncSetSharedMemConfig(ff, 1), 0); CHECK(cuFuncSetSharedMemConfig(ff, 7), 1);
        /* warp_scan: inclusive prefix sums per warp; with all ones, out[i] = lane + 1 */
        CUfunction scan = 0; CHECK(cuModuleGetFunction(&scan, mm, "warp_scan"), 0);
        static unsigned ones[64], res[64]; for (int i = 0; i < 64; i++) ones[i] = 1;
        CUdeviceptr din = 0, dout = 0; unsigned cnt = 64;
        CHECK(cuMemAlloc_v2(&din, sizeof ones), 0); CHECK(cuMemAlloc_v2(&dout, sizeof res), 0);
        CHECK(cuMemcpyHtoD_v2(din, ones, sizeof ones), 0);
        void *params[3] = {&din, &dout, &cnt};
        LAUNCHCONFIG lc = {2, 1, 1, 32, 1, 1, 0, t, 0, 0};
        int lanes_ok;
        CHECK(cuLaunchKernelEx(&lc, scan, params, 0), 0); CHECK(cuMemcpyDtoH_v2(res, dout, sizeof res), 0);
        lanes_ok = 1; for (int i = 0; i < 64; i++) lanes_ok &= res[i] == (unsigned)(i % 32 + 1); TRUE(lanes_ok);
        CHECK(cuMemsetD32_v2(dout, 0, 64), 0);
        CHECK(cuLaunchKernelEx_ptsz(&lc, scan, params, 0), 0); CHECK(cuMemcpyDtoH_v2(res, dout, sizeof res), 0); TRUE(res[63] == 32);
        CHECK(cuMemsetD32_v2(dout, 0, 64), 0);
        CHECK(cuLaunchKernel_ptsz(scan, 2, 1, 1, 32, 1, 1, 0, 0, params, 0), 0); CHECK(cuMemcpyDtoH_v2(res, dout, sizeof res), 0); TRUE(res[31] == 32 && res[32] == 1);
        lc.bx = 2048; CHECK(cuLaunchKernelEx(&lc, scan, params, 0), 1);
        CHECK(cuMemFree_v2(din), 0); CHECK(cuMemFree_v2(dout), 0);
        int nb = 0, g2 = 0, b2 = 0;
        CHECK(cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(&nb, ff, 128, 0, 0), 0); TRUE(nb >= 1);
        CHECK(cuOccupancyMaxPotentialBlockSizeWithFlags(&g2, &b2, ff, 0, 0, 256, 0), 0); TRUE(b2 >= 32 && b2 <= 256);
        CHECK(cuModuleUnload(mm), 0);
        size_t w1 = 0; CHECK(cuDeviceGetTexture1DLinearMaxWidth(&w1, 1, 1, 0), 0); TRUE(w1 == 268435456);
        CHECK(cuStreamAttachMemAsync(t, m, 0, 1), 0);
        CHECK(cuMemPrefetchAsync_v2(m, 64, 1ull, 0, t), 0); CHECK(cuMemAdvise_v2(m, 64, 1, 1ull), 0);
        void *fp = 0; CHECK(cuGetProcAddress("cuMemAlloc", &fp, 12000, 0), 0); TRUE(fp == (void *)cuMemAlloc_v2);
        CHECK(cuGetProcAddress("cuNoSuchThing", &fp, 12000, 0), 500);
        /* the remaining per-thread-stream forms, and entry points CUDA 13.0 added */
        unsigned short h16[8];
        CHECK(cuMemsetD16_v2_ptds(a, 0x5151, 8), 0); CHECK(cuMemsetD16Async_ptsz(a + 16, 0x6161, 8, t), 0);
        CHECK(cuMemcpyDtoH_v2(h16, a + 8, 16), 0); TRUE(h16[0] == 0x5151 && h16[3] == 0x5151 && h16[4] == 0x6161 && h16[7] == 0x6161);
        CHECK(cuMemsetD2D8_v2_ptds(a, 256, 0x71, 10, 2), 0); CHECK(cuMemsetD2D16_v2_ptds(a, 256, 0x7272, 10, 2), 0);
        CHECK(cuMemsetD2D32_v2_ptds(a, 256, 0x73737373, 10, 2), 0);
        CHECK(cuMemcpyDtoH_v2(u32, a + 256, 32), 0); TRUE(u32[0] == 0x73737373 && u32[7] == 0x73737373);
        CHECK(cuMemsetD2D8Async_ptsz(a, 256, 0x81, 10, 2, t), 0); CHECK(cuMemsetD2D16Async_ptsz(a, 256, 0x8282, 10, 2, t), 0);
        CHECK(cuMemsetD2D32Async_ptsz(a, 256, 0x83838383, 10, 2, t), 0); CHECK(cuStreamSynchronize(t), 0);
        CHECK(cuMemcpyDtoH_v2(u32, a, 32), 0); TRUE(u32[0] == 0x83838383 && u32[7] == 0x83838383);
        CHECK(cuMemcpy2DUnaligned_v2_ptds(&q), 0); TRUE(back[0] == 0x83);
        CHECK(cuMemcpyPeer_ptds(b, ctx, a, ctx, 64), 0); CHECK(cuMemcpyPeerAsync_ptsz(b + 64, ctx, a, ctx, 64, t), 0);
        CHECK(cuMemcpyDtoH_v2(out, b, 128), 0); TRUE(memcmp(out, out + 64, 64) == 0 && out[0] == 0x83);
        int tpr = 9; unsigned tfl = 9; CUcontext tctx = 0; unsigned long long tid = 0, tid2 = 1; int tcap = 9; CUdevice sdev = -1;
        CHECK(cuStreamGetPriority_ptsz(t, &tpr), 0); TRUE(tpr == 0);
        CHECK(cuStreamGetFlags_ptsz(t, &tfl), 0); TRUE(tfl == 0);
        CHECK(cuStreamGetCtx_ptsz(t, &tctx), 0); TRUE(tctx == ctx);
        CHECK(cuStreamGetId(t, &tid), 0); CHECK(cuStreamGetId_ptsz(t, &tid2), 0); TRUE(tid == tid2);
        CHECK(cuStreamIsCapturing_ptsz(t, &tcap), 0); TRUE(tcap == 0);
        CHECK(cuStreamGetDevice(t, &sdev), 0); TRUE(sdev == 0);
        sdev = -1; CHECK(cuStreamGetDevice_ptsz(0, &sdev), 0); TRUE(sdev == 0);
        CHECK(cuStreamAttachMemAsync_ptsz(t, m, 0, 1), 0);
        CHECK(cuEventRecordWithFlags_ptsz(ev, t, 0), 0);
        CUdeviceptr pz = 0; CHECK(cuMemAllocFromPoolAsync_ptsz(&pz, 256, pool, t), 0); CHECK(cuMemFreeAsync(pz, t), 0);
        CHECK(cuMemPrefetchAsync_ptsz(m, 64, 0, t), 0); CHECK(cuMemPrefetchAsync_v2_ptsz(m, 64, 1ull, 0, t), 0);
        CUdevice cd2 = -1; CHECK(cuCtxGetDevice_v2(&cd2, 0), 0); TRUE(cd2 == 0);
        cd2 = -1; CHECK(cuCtxGetDevice_v2(&cd2, ctx), 0); TRUE(cd2 == 0);
        CHECK(cuCtxSynchronize_v2(0), 0); CHECK(cuCtxSynchronize_v2(ctx), 0);
        struct { int type, id; } loc = {1 /* CU_MEM_LOCATION_TYPE_DEVICE */, 0};
        CUmemoryPool dpool = 0, cpool = 0;
        CHECK(cuMemGetDefaultMemPool(&dpool, &loc, 1 /* PINNED */), 0); CHECK(cuMemGetMemPool(&cpool, &loc, 1), 0);
        TRUE(dpool == pool && cpool == pool);
        CHECK(cuMemSetMemPool(&loc, 1, pool), 0);
        int dprop[14]; CHECK(cuDeviceGetProperties(dprop, 0), 0);
        TRUE(dprop[0] == 1024 && dprop[3] == 64 && dprop[4] == 2147483647 && dprop[9] == 32 && dprop[12] == 1980000 && dprop[13] == 512);
        CHECK(cuEventDestroy(ev), 0); CHECK(cuEventDestroy_v2(ev2), 0);
        CHECK(cuStreamDestroy(t), 0);
        CUcontext top = 0; CHECK(cuCtxPushCurrent(ctx), 0); CHECK(cuCtxPopCurrent(&top), 0); TRUE(top == ctx);
        CHECK(cuDevicePrimaryCtxSetFlags(0, 0), 0);
    }

    /* virtual memory made read-only: reads work, copies and memsets into it are refused
     * (not measured on the H200: the host pages are read-only, a write would fault) */
    {
        MEMPROP vp; memset(&vp, 0, sizeof vp); vp.type = 1; vp.locType = 1;
        size_t g = 0; CHECK(cuMemGetAllocationGranularity(&g, &vp, 0), 0); TRUE(g == 2u << 20);
        unsigned long long vh = 0; CUdeviceptr va = 0;
        CHECK(cuMemCreate(&vh, g, &vp, 0), 0); CHECK(cuMemAddressReserve(&va, g, 0, 0, 0), 0); CHECK(cuMemMap(va, g, 0, vh, 0), 0);
        ACCESSDESC rwd = {1, 0, 3}, rod = {1, 0, 1};
        CHECK(cuMemSetAccess(va, g, &rwd, 1), 0); CHECK(cuMemsetD32_v2(va, 0x600df00d, 4), 0);
        CHECK(cuMemSetAccess(va, g, &rod, 1), 0);
        CHECK(cuMemcpyDtoH_v2(u32, va, 16), 0); TRUE(u32[0] == 0x600df00d && u32[3] == 0x600df00d);
        CHECK(cuMemcpyHtoD_v2(va, in, 16), 1); CHECK(cuMemsetD32_v2(va, 0, 4), 1); CHECK(cuMemcpy(va, a, 16), 1);
        CHECK(cuMemcpyDtoH_v2(u32, va, 16), 0); TRUE(u32[0] == 0x600df00d);
        CHECK(cuMemUnmap(va, g), 0); CHECK(cuMemRelease(vh), 0); CHECK(cuMemAddressFree(va, g), 0);
    }

    /* legacy 32-bit-pointer entry points answer CUDA_ERROR_INVALID_CONTEXT in a v2 context, as on an H200 */
    {
        unsigned l32a = 0, l32b = 0;
        CHECK(cuMemAllocPitch(&l32a, &l32b, 0, 0, 0), 201);
        CHECK(cuMemGetInfo(&l32a, &l32b, 0, 0, 0), 201);
        CHECK(cuMemGetAddressRange(&l32a, &l32b, 0, 0, 0), 201);
        CHECK(cuMemAllocHost(&l32a, &l32b, 0, 0, 0), 201);
        CHECK(cuMemHostGetDevicePointer(&l32a, &l32b, 0, 0, 0), 201);
        CHECK(cuMemcpyDtoD(&l32a, &l32b, 0, 0, 0), 201);
        CHECK(cuMemcpyDtoDAsync(&l32a, &l32b, 0, 0, 0), 201);
        CHECK(cuMemcpy2D(&l32a, &l32b, 0, 0, 0), 201);
        CHECK(cuMemcpy2DAsync(&l32a, &l32b, 0, 0, 0), 201);
        CHECK(cuMemcpy2DUnaligned(&l32a, &l32b, 0, 0, 0), 201);
        CHECK(cuMemsetD8(&l32a, &l32b, 0, 0, 0), 201);
        CHECK(cuMemsetD16(&l32a, &l32b, 0, 0, 0), 201);
        CHECK(cuMemsetD32(&l32a, &l32b, 0, 0, 0), 201);
        CHECK(cuMemsetD2D8(&l32a, &l32b, 0, 0, 0), 201);
        CHECK(cuMemsetD2D16(&l32a, &l32b, 0, 0, 0), 201);
        CHECK(cuMemsetD2D32(&l32a, &l32b, 0, 0, 0), 201);
        CHECK(cuMemHostRegister(&l32a, &l32b, 0, 0, 0), 201);
    }
    CHECK(cuStreamDestroy_v2(s), 0);
    CHECK(cuModuleUnload(mod), 0);
    CHECK(cuMemFree_v2(a), 0); CHECK(cuMemFree_v2(b), 0); CHECK(cuMemFree_v2(m), 0); CHECK(cuMemFreeHost(h), 0);
    CUcontext own = 0; CHECK(cuCtxCreate_v2(&own, 0, 0), 0); CHECK(cuCtxDestroy(own), 0); CHECK(cuCtxDestroy(own), 201);
    CHECK(cuCtxSetCurrent(ctx), 0);
    CHECK(cuDevicePrimaryCtxRelease(0), 0); CHECK(cuDevicePrimaryCtxRelease_v2(0), 201);
    CHECK(cuDevicePrimaryCtxReset(0), 0);
    if (failures) { printf("sweep: %d check(s) failed\n", failures); return 1; }
    printf("sweep: all checks hold\n");
    return 0;
}
