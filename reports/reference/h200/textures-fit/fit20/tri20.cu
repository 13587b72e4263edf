// tri20 (fit20, issue 19): the rounding of two planes' partial sums in 3D linear and
// trilinear filtering of float and half textures, on a GH100.
// Sections, each written to OUTDIR/tri20_NAME.bin as raw little-endian results in query order
// (float results as f32 words; half textures' results as f32 words too):
//  pp_f32, pp_f16: "pairs": a 2-level mipmap whose level 0 (4096^2) holds one value v0 per 4x4
//     block and level 1 (2048^2) one value v1 per 2x2 block; query p (p = by*1024 + bx) reads
//     tex2DLod at u = (2bx+1)/2048, v = (2by+1)/2048, lod m/256: both footprints lie inside
//     one block (fraction 1/2 in each level), so the planes' sums are v0*(256-m) and v1*m exactly.
//  tri_f32, tri_f16: random texels, 512^2 level 0 and 256^2 level 1, tex2DLod at u, v = k/65536
//     and lod m/256 (m = 1..255): trilinear with different texels in each footprint.
//  c3_f32, c3_f16: a 64^3 3D array of random texels, tex3D at unnormalized coordinates k/256.
// All linear filtering, clamp, element-type reads. Inputs come from a splitmix64 generator
// (seeds below); `tri20 --inputs OUTDIR` writes them (tri20_inputs.bin: the sections'
// texel and query arrays as [name 16][u64 n][bytes]) without a GPU, for checking the Python
// regeneration (tri20_fit.py).
#include <cuda_runtime.h>
#include <cuda_fp16.h>
#include <cstdio>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>
#include <string>

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
    fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); exit(1); } } while (0)

struct Rng {
    uint64_t s;
    uint64_t next64() {
        s += 0x9E3779B97F4A7C15ull;
        uint64_t z = s;
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        return z ^ (z >> 31);
    }
    uint32_t next() { return (uint32_t)(next64() >> 32); }
    uint32_t below(uint32_t n) { return next() % n; }
};

// A texel of exponent e (clamped to the format's normal range), random sign and significand,
// as its storage bits (f32, or half in the low 16 bits).
static uint32_t texel(Rng &r, int e, bool half) {
    uint32_t s = r.next() & 1, m = r.next();
    if (half) {
        e = e < -14 ? -14 : e > 15 ? 15 : e;
        return (s << 15) | ((uint32_t)(e + 15) << 10) | (m & 0x3ff);
    }
    return (s << 31) | ((uint32_t)(e + 127) << 23) | (m & 0x7fffff);
}

static FILE *g_in;
static void put_in(const char *name, const void *p, uint64_t n) {
    if (!g_in) return;
    char nm[16] = {0};
    strncpy(nm, name, 15);
    fwrite(nm, 1, 16, g_in);
    fwrite(&n, 8, 1, g_in);
    fwrite(p, 1, n, g_in);
}

static void write_file(const std::string &path, const void *p, size_t n) {
    FILE *f = fopen(path.c_str(), "wb");
    if (!f) { perror(path.c_str()); exit(1); }
    fwrite(p, 1, n, f);
    fclose(f);
}

static cudaChannelFormatDesc chan(bool half) { return half ? cudaCreateChannelDescHalf() : cudaCreateChannelDesc<float>(); }

static void upload2d(cudaArray_t a, const std::vector<uint32_t> &v, int w, int h, bool half) {
    if (half) {
        std::vector<uint16_t> b(v.size());
        for (size_t i = 0; i < v.size(); i++) b[i] = (uint16_t)v[i];
        CK(cudaMemcpy2DToArray(a, 0, 0, b.data(), w * 2, w * 2, h, cudaMemcpyHostToDevice));
    } else {
        CK(cudaMemcpy2DToArray(a, 0, 0, v.data(), w * 4, w * 4, h, cudaMemcpyHostToDevice));
    }
}

static cudaTextureObject_t tex_of(const cudaResourceDesc &r, bool normalized) {
    cudaTextureDesc d = {};
    d.addressMode[0] = d.addressMode[1] = d.addressMode[2] = cudaAddressModeClamp;
    d.filterMode = cudaFilterModeLinear;
    d.mipmapFilterMode = cudaFilterModeLinear;
    d.readMode = cudaReadModeElementType;
    d.normalizedCoords = normalized;
    d.maxMipmapLevelClamp = 100.0f;
    cudaTextureObject_t t;
    CK(cudaCreateTextureObject(&t, &r, &d, nullptr));
    return t;
}

__global__ void k2d(cudaTextureObject_t t, const float4 *q, float *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = tex2DLod<float>(t, q[i].x, q[i].y, q[i].w);
}

__global__ void k3d(cudaTextureObject_t t, const float4 *q, float *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = tex3D<float>(t, q[i].x, q[i].y, q[i].z);
}

static std::vector<float> run(cudaTextureObject_t t, const std::vector<float4> &q, bool three) {
    int n = (int)q.size();
    float4 *dq; float *dr;
    CK(cudaMalloc(&dq, n * sizeof(float4)));
    CK(cudaMalloc(&dr, n * sizeof(float)));
    CK(cudaMemcpy(dq, q.data(), n * sizeof(float4), cudaMemcpyHostToDevice));
    if (three) k3d<<<(n + 255) / 256, 256>>>(t, dq, dr, n);
    else k2d<<<(n + 255) / 256, 256>>>(t, dq, dr, n);
    CK(cudaGetLastError());
    std::vector<float> h(n);
    CK(cudaMemcpy(h.data(), dr, n * sizeof(float), cudaMemcpyDeviceToHost));
    CK(cudaFree(dq)); CK(cudaFree(dr));
    return h;
}

// pp: seed 0x7070 + half. Per pair (1024^2, p = by*1024 + bx): e0 = -8 + below(17), gap =
// below(32) (half: below(16)), e1 = e0 - gap if next()&1 else e0 + gap, then texel(e0),
// texel(e1), then m = 1 + below(255).
static void pairs(const std::string &dir, bool half, bool gpu) {
    Rng r{0x7070u + half};
    const int NB = 1024;
    std::vector<uint32_t> v0(NB * NB), v1(NB * NB);
    std::vector<float4> q(NB * NB);
    for (int p = 0; p < NB * NB; p++) {
        int e0 = -8 + (int)r.below(17), gap = (int)r.below(half ? 16 : 32);
        int e1 = (r.next() & 1) ? e0 - gap : e0 + gap;
        v0[p] = texel(r, e0, half);
        v1[p] = texel(r, e1, half);
        int m = 1 + (int)r.below(255);
        int bx = p % NB, by = p / NB;
        q[p] = make_float4((2 * bx + 1) / 2048.0f, (2 * by + 1) / 2048.0f, 0.f, m / 256.0f);
    }
    std::string nm = half ? "pp_f16" : "pp_f32";
    put_in((nm + "_v0").c_str(), v0.data(), v0.size() * 4);
    put_in((nm + "_v1").c_str(), v1.data(), v1.size() * 4);
    put_in((nm + "_q").c_str(), q.data(), q.size() * sizeof(float4));
    if (!gpu) return;
    cudaChannelFormatDesc cd = chan(half);
    cudaMipmappedArray_t mip;
    CK(cudaMallocMipmappedArray(&mip, &cd, make_cudaExtent(4096, 4096, 0), 2));
    for (int l = 0; l < 2; l++) {
        cudaArray_t a;
        CK(cudaGetMipmappedArrayLevel(&a, mip, l));
        int w = 4096 >> l, sh = 2 - l;
        std::vector<uint32_t> lv((size_t)w * w);
        for (int y = 0; y < w; y++)
            for (int x = 0; x < w; x++) lv[(size_t)y * w + x] = (l ? v1 : v0)[(y >> sh) * NB + (x >> sh)];
        upload2d(a, lv, w, w, half);
    }
    cudaResourceDesc rd = {};
    rd.resType = cudaResourceTypeMipmappedArray;
    rd.res.mipmap.mipmap = mip;
    cudaTextureObject_t t = tex_of(rd, true);
    auto h = run(t, q, false);
    write_file(dir + "/tri20_" + nm + ".bin", h.data(), h.size() * 4);
    CK(cudaDestroyTextureObject(t));
    CK(cudaFreeMipmappedArray(mip));
    fprintf(stderr, "%s: %zu results\n", nm.c_str(), h.size());
}

// tri: seed 0x7272 + half. Level 0 texels (512^2, row-major) then level 1 (256^2), each
// texel(-6 + below(13)) (half: texel(-10 + below(20))); then 2^20 queries: u = below(65536),
// v = below(65536) (/65536), m = 1 + below(255).
static void trilinear(const std::string &dir, bool half, bool gpu) {
    Rng r{0x7272u + half};
    std::vector<uint32_t> l0(512 * 512), l1(256 * 256);
    for (auto &x : l0) x = texel(r, half ? -10 + (int)r.below(20) : -6 + (int)r.below(13), half);
    for (auto &x : l1) x = texel(r, half ? -10 + (int)r.below(20) : -6 + (int)r.below(13), half);
    std::vector<float4> q(1 << 20);
    for (auto &x : q) {
        float u = r.below(65536) / 65536.0f, v = r.below(65536) / 65536.0f;
        x = make_float4(u, v, 0.f, (1 + (int)r.below(255)) / 256.0f);
    }
    std::string nm = half ? "tri_f16" : "tri_f32";
    put_in((nm + "_l0").c_str(), l0.data(), l0.size() * 4);
    put_in((nm + "_l1").c_str(), l1.data(), l1.size() * 4);
    put_in((nm + "_q").c_str(), q.data(), q.size() * sizeof(float4));
    if (!gpu) return;
    cudaChannelFormatDesc cd = chan(half);
    cudaMipmappedArray_t mip;
    CK(cudaMallocMipmappedArray(&mip, &cd, make_cudaExtent(512, 512, 0), 2));
    for (int l = 0; l < 2; l++) {
        cudaArray_t a;
        CK(cudaGetMipmappedArrayLevel(&a, mip, l));
        upload2d(a, l ? l1 : l0, 512 >> l, 512 >> l, half);
    }
    cudaResourceDesc rd = {};
    rd.resType = cudaResourceTypeMipmappedArray;
    rd.res.mipmap.mipmap = mip;
    cudaTextureObject_t t = tex_of(rd, true);
    auto h = run(t, q, false);
    write_file(dir + "/tri20_" + nm + ".bin", h.data(), h.size() * 4);
    CK(cudaDestroyTextureObject(t));
    CK(cudaFreeMipmappedArray(mip));
    fprintf(stderr, "%s: %zu results\n", nm.c_str(), h.size());
}

// c3: seed 0x3333 + half. 64^3 texels (x fastest, then y, z), texel(-8 + below(17)) (half:
// texel(-10 + below(20))); then 2^19 queries x, y, z = below(16384) / 256 (unnormalized).
static void cube(const std::string &dir, bool half, bool gpu) {
    Rng r{0x3333u + half};
    const int N = 64;
    std::vector<uint32_t> v(N * N * N);
    for (auto &x : v) x = texel(r, half ? -10 + (int)r.below(20) : -8 + (int)r.below(17), half);
    std::vector<float4> q(1 << 19);
    for (auto &x : q) {
        float a = r.below(16384) / 256.0f, b = r.below(16384) / 256.0f, c = r.below(16384) / 256.0f;
        x = make_float4(a, b, c, 0.f);
    }
    std::string nm = half ? "c3_f16" : "c3_f32";
    put_in((nm + "_v").c_str(), v.data(), v.size() * 4);
    put_in((nm + "_q").c_str(), q.data(), q.size() * sizeof(float4));
    if (!gpu) return;
    cudaChannelFormatDesc cd = chan(half);
    cudaArray_t a;
    CK(cudaMalloc3DArray(&a, &cd, make_cudaExtent(N, N, N), 0));
    cudaMemcpy3DParms p = {};
    std::vector<uint16_t> b;
    if (half) {
        b.resize(v.size());
        for (size_t i = 0; i < v.size(); i++) b[i] = (uint16_t)v[i];
        p.srcPtr = make_cudaPitchedPtr(b.data(), N * 2, N, N);
    } else {
        p.srcPtr = make_cudaPitchedPtr(v.data(), N * 4, N, N);
    }
    p.dstArray = a;
    p.extent = make_cudaExtent(N, N, N);
    p.kind = cudaMemcpyHostToDevice;
    CK(cudaMemcpy3D(&p));
    cudaResourceDesc rd = {};
    rd.resType = cudaResourceTypeArray;
    rd.res.array.array = a;
    cudaTextureObject_t t = tex_of(rd, false);
    auto h = run(t, q, true);
    write_file(dir + "/tri20_" + nm + ".bin", h.data(), h.size() * 4);
    CK(cudaDestroyTextureObject(t));
    CK(cudaFreeArray(a));
    fprintf(stderr, "%s: %zu results\n", nm.c_str(), h.size());
}

int main(int argc, char **argv) {
    bool inputs_only = argc == 3 && !strcmp(argv[1], "--inputs");
    if (argc != 2 && !inputs_only) { fprintf(stderr, "usage: tri20 [--inputs] OUTDIR\n"); return 2; }
    std::string dir = argv[argc - 1];
    if (inputs_only) {
        g_in = fopen((dir + "/tri20_inputs.bin").c_str(), "wb");
        if (!g_in) { perror("inputs"); return 1; }
    } else {
        cudaDeviceProp pr;
        CK(cudaGetDeviceProperties(&pr, 0));
        int drv = 0;
        CK(cudaDriverGetVersion(&drv));
        fprintf(stderr, "device: %s, driver API %d\n", pr.name, drv);
    }
    for (bool half : {false, true}) {
        pairs(dir, half, !inputs_only);
        trilinear(dir, half, !inputs_only);
        cube(dir, half, !inputs_only);
    }
    if (g_in) fclose(g_in);
    return 0;
}
