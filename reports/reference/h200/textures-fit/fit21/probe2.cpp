// Fit 21 extension: element-type (CU_TRSF_READ_AS_INTEGER) reads with linear filtering of
// every integer format, 1 to 4 channels, on a 16x16 array of pseudo-random texels (rows
// 0-3 extreme values, 4-7 small magnitudes, 8-15 the format's whole range), at 2048
// pseudo-random points per address mode (clamp and border with unnormalized coordinates,
// wrap with normalized ones), each read with the .s32 (int4) and the .u32 (uint4) forms:
// all four result words. Deterministic (an LCG): the emulator reruns the same points.
// Usage: probe2 KERNEL2.ptx > device2.txt
#include <cuda.h>
#include <cstdio>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>
static std::vector<char> slurp(const char *p) {
    FILE *f = fopen(p, "rb"); if (!f) { perror(p); exit(2); }
    std::vector<char> b; char buf[65536]; size_t n;
    while ((n = fread(buf, 1, sizeof buf, f)) > 0) b.insert(b.end(), buf, buf + n);
    fclose(f); b.push_back(0); return b;
}
static uint64_t st = 0x2545F4914F6CDD1Dull;
static uint32_t rnd() { st = st * 6364136223846793005ull + 1442695040888963407ull; return (uint32_t)(st >> 32); }
static CUmodule mod;
static CUfunction gs, gu;
struct Fmt { const char *name; CUarray_format f; int bytes; bool sgn; int ch; };
static uint32_t texel(const Fmt &F, int row) {
    const int bits = 8 * F.bytes;
    const uint32_t mask = bits == 32 ? 0xffffffffu : (1u << bits) - 1;
    uint32_t r = rnd();
    if (row < 4) {
        // Extremes: min, max, -1/0/1 (signed) or 0/1/max-1 (unsigned).
        int64_t lo = F.sgn ? -(1ll << (bits - 1)) : 0, hi = F.sgn ? (1ll << (bits - 1)) - 1 : (int64_t)mask;
        int64_t c[6] = {lo, hi, F.sgn ? -1 : 1, 0, F.sgn ? 1 : hi - 1, F.sgn ? lo + 1 : 2};
        return (uint32_t)c[r % 6] & mask;
    }
    if (row < 8) {
        int64_t v = F.sgn ? (int64_t)(r % 601) - 300 : (int64_t)(r % 601);
        return (uint32_t)v & mask;
    }
    return r & mask;
}
static void run(const Fmt &F) {
    const int W = 16, H = 16, N = 2048;
    CUDA_ARRAY_DESCRIPTOR ad = {}; ad.Width = W; ad.Height = H; ad.Format = F.f; ad.NumChannels = F.ch;
    CUarray arr; CUresult e = cuArrayCreate(&arr, &ad);
    if (e) { printf("%sx%d arraycreate %d\n", F.name, F.ch, (int)e); return; }
    std::vector<uint8_t> host(W * H * F.ch * F.bytes);
    printf("texels %sx%d:", F.name, F.ch);
    for (int y = 0; y < H; ++y)
        for (int x = 0; x < W; ++x)
            for (int c = 0; c < F.ch; ++c) {
                uint32_t v = texel(F, y);
                memcpy(&host[((y * W + x) * F.ch + c) * F.bytes], &v, F.bytes);
                printf(" %x", v);
            }
    printf("\n");
    CUDA_MEMCPY2D c = {}; c.srcMemoryType = CU_MEMORYTYPE_HOST; c.srcHost = host.data(); c.srcPitch = W * F.ch * F.bytes;
    c.dstMemoryType = CU_MEMORYTYPE_ARRAY; c.dstArray = arr; c.WidthInBytes = W * F.ch * F.bytes; c.Height = H;
    e = cuMemcpy2D(&c); if (e) printf("%sx%d memcpy2d %d\n", F.name, F.ch, (int)e);
    const char *mname[3] = {"clamp", "border", "wrap"};
    CUdeviceptr dxy, dout; cuMemAlloc(&dxy, N * 8); cuMemAlloc(&dout, N * 16);
    for (int m = 0; m < 3; ++m) {
        CUDA_RESOURCE_DESC rd = {}; rd.resType = CU_RESOURCE_TYPE_ARRAY; rd.res.array.hArray = arr;
        CUDA_TEXTURE_DESC td = {};
        CUaddress_mode am = m == 0 ? CU_TR_ADDRESS_MODE_CLAMP : m == 1 ? CU_TR_ADDRESS_MODE_BORDER : CU_TR_ADDRESS_MODE_WRAP;
        td.addressMode[0] = td.addressMode[1] = td.addressMode[2] = am;
        td.filterMode = CU_TR_FILTER_MODE_LINEAR;
        td.flags = CU_TRSF_READ_AS_INTEGER | (m == 2 ? CU_TRSF_NORMALIZED_COORDINATES : 0);
        td.borderColor[0] = -1.5f; td.borderColor[1] = 2.0f; td.borderColor[2] = 0.25f; td.borderColor[3] = 1.0f;
        CUtexObject t = 0; e = cuTexObjectCreate(&t, &rd, &td, nullptr);
        printf("create %sx%d %s %d\n", F.name, F.ch, mname[m], (int)e);
        if (e) continue;
        std::vector<float> h(2 * N);
        for (int k = 0; k < N; ++k) {
            // Texel space: fractions on a 1/1024 grid (weights' rounding), some exact
            // centres and halfway points.
            float lo = m == 1 ? -1.0f : 0.0f, span = m == 1 ? 18.0f : m == 2 ? 32.0f : 16.0f;
            for (int a = 0; a < 2; ++a) {
                uint32_t r = rnd();
                float v = lo + (float)(r % (uint32_t)(span * 1024)) / 1024.0f;
                if (k % 16 == 0) v = lo + (float)(r % (uint32_t)span) + 0.5f;
                if (m == 2) v = (v - 8.0f) / 16.0f;  // normalized, -0.5 .. 1.5
                h[2 * k + a] = v;
            }
        }
        cuMemcpyHtoD(dxy, h.data(), N * 8);
        for (int rt = 0; rt < 2; ++rt) {
            cuMemsetD8(dout, 0xee, N * 16);
            int n = N; void *args[] = {&t, &dxy, &dout, &n};
            e = cuLaunchKernel(rt ? gu : gs, N / 128, 1, 1, 128, 1, 1, 0, 0, args, nullptr);
            CUresult s = cuCtxSynchronize();
            std::vector<uint32_t> o(N * 4); cuMemcpyDtoH(o.data(), dout, N * 16);
            printf("run %sx%d %s %s launch %d sync %d\n", F.name, F.ch, mname[m], rt ? "u32" : "s32", (int)e, (int)s);
            for (int k = 0; k < N; ++k) {
                uint32_t xb, yb; memcpy(&xb, &h[2 * k], 4); memcpy(&yb, &h[2 * k + 1], 4);
                printf("%sx%d %s %s %08x %08x %x %x %x %x\n", F.name, F.ch, mname[m], rt ? "u32" : "s32", xb, yb,
                       o[4 * k], o[4 * k + 1], o[4 * k + 2], o[4 * k + 3]);
            }
        }
        cuTexObjectDestroy(t);
    }
    cuMemFree(dxy); cuMemFree(dout); cuArrayDestroy(arr);
}
int main(int argc, char **argv) {
    if (argc < 2) { fprintf(stderr, "usage: probe2 KERNEL2.ptx\n"); return 2; }
    cuInit(0); CUdevice dev; cuDeviceGet(&dev, 0); CUcontext ctx; cuCtxCreate(&ctx, nullptr, 0, dev);
    std::vector<char> ptx = slurp(argv[1]);
    CUresult e = cuModuleLoadData(&mod, ptx.data()); if (e) { printf("module %d\n", (int)e); return 1; }
    if (cuModuleGetFunction(&gs, mod, "g_s") || cuModuleGetFunction(&gu, mod, "g_u")) { printf("getfunction\n"); return 1; }
    const Fmt fs[] = {
        {"u8", CU_AD_FORMAT_UNSIGNED_INT8, 1, false, 1},  {"s8", CU_AD_FORMAT_SIGNED_INT8, 1, true, 1},
        {"u16", CU_AD_FORMAT_UNSIGNED_INT16, 2, false, 1}, {"s16", CU_AD_FORMAT_SIGNED_INT16, 2, true, 1},
        {"u32", CU_AD_FORMAT_UNSIGNED_INT32, 4, false, 1}, {"s32", CU_AD_FORMAT_SIGNED_INT32, 4, true, 1},
        {"s8", CU_AD_FORMAT_SIGNED_INT8, 1, true, 4},      {"u16", CU_AD_FORMAT_UNSIGNED_INT16, 2, false, 2},
        {"s16", CU_AD_FORMAT_SIGNED_INT16, 2, true, 2},    {"u32", CU_AD_FORMAT_UNSIGNED_INT32, 4, false, 2},
        {"s32", CU_AD_FORMAT_SIGNED_INT32, 4, true, 4},
    };
    for (const Fmt &F : fs) run(F);
    return 0;
}
