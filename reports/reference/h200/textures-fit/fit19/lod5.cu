// lod5 (fit19, issue 19): two checks of tex2DGrad's anisotropic level of detail on GH100.
//  1. Where the mip level bias starts to make N = 2 and 4 blend one step lower (lod4-run.md:
//     bias 1/256 does not, 1/4 does). Section "bq": 16384 one-product queries (the lod is exact
//     in every model since fit 2) read through textures of maxAnisotropy 2 and 4 with biases
//     k/256, k = 1..64, a few negative biases, three non-integer 256ths, and N = 8 controls.
//  2. An out-of-sample check of lod5_fit.py's determinant rule on gradients that were not built
//     for it: "rnd" (random directions and lengths, random f32 components, so the 9-bit cut of
//     the components is exercised too) and "par" (nearly parallel pairs: cancelling products),
//     32768 each, read at N = 0, 2, 4, 8, 16 unbiased and N = 4, 16 with bias 1/2.
// Texture and file format as lod3 (lod3-README.md): 4096x4096 float mipmap, 13 levels, level L
// holds L, point filtering in a level, linear between levels, normalized coordinates, clamp; every
// query is tex2DGrad at (0.5, 0.5), so a result is L + k/256. Sections [name 16 bytes][u64 length]
// [bytes]; NAME_g = float4 gradients (dPdx.x, dPdx.y, dPdy.x, dPdy.y), NAME_SUFFIX = float results,
// the suffixes listed in section "tex" (text: one "suffix maxAnisotropy bias" line per texture).
// Usage: lod5 [--inputs] OUTDIR -> OUTDIR/lod5.bin (--inputs: the input sections only, no GPU).
#include <cuda_runtime.h>
#include <cstdio>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <cmath>
#include <vector>
#include <string>
#include <algorithm>

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
    fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); exit(1); } } while (0)

static FILE *g_out;
static void put(const char *name, const void *p, uint64_t n) {
    char nm[16] = {0};
    strncpy(nm, name, 15);
    fwrite(nm, 1, 16, g_out);
    fwrite(&n, 8, 1, g_out);
    fwrite(p, 1, n, g_out);
}

// xorshift64, as the earlier probes (a u32 from the top bits)
struct Rng {
    uint64_t s;
    uint32_t next() { s ^= s << 13; s ^= s >> 7; s ^= s << 17; return (uint32_t)(s >> 11); }
    double unit() { return next() / 4294967296.0; }
};

struct Tex { std::string suffix; unsigned aniso; float bias; };
struct Sec { std::string name; std::vector<float4> g; std::vector<Tex> tex; };

static const double TEXELS = 4096.0;

// bq: u = (A, 0), v = (0, B) texels, A = (512 + i) / 2, B = (512 + j) / 2 (9-bit significands,
// 256..511.5 texels): det = A B, ratio <= 2, so the lod is log2(min(A, B)) + 8 and never clamped.
// Rng seed 0xb1a5, per query i = next() & 511, then j = next() & 511.
static Sec bias_queries() {
    Sec s{"bq", {}, {}};
    Rng r{0xb1a5};
    for (int n = 0; n < 16384; n++) {
        uint32_t i = r.next() & 511, j = r.next() & 511;
        s.g.push_back(make_float4((float)((512 + i) / 2.0 / TEXELS), 0.f, 0.f, (float)((512 + j) / 2.0 / TEXELS)));
    }
    char b[16];
    for (unsigned n : {2u, 4u}) {
        for (int k = 1; k <= 64; k++) {
            snprintf(b, sizeof b, "_n%u_p%d", n, k);
            s.tex.push_back({b, n, k / 256.0f});
        }
        for (int k : {1, 2, 4, 8, 16, 32, 48, 63, 64, 65, 96, 128}) {
            snprintf(b, sizeof b, "_n%u_m%d", n, k);
            s.tex.push_back({b, n, -k / 256.0f});
        }
        // 0.5, 63.5 and 64.5 256ths
        for (int h : {1, 127, 129}) {
            snprintf(b, sizeof b, "_n%u_h%d", n, h);
            s.tex.push_back({b, n, h / 512.0f});
        }
    }
    for (int k : {1, 32, 63, 64}) {
        snprintf(b, sizeof b, "_n8_p%d", k);
        s.tex.push_back({b, 8, k / 256.0f});
    }
    return s;
}

static std::vector<Tex> check_textures() {
    return {{"_r", 0, 0.f}, {"_a2", 2, 0.f}, {"_a4", 4, 0.f}, {"_a8", 8, 0.f}, {"_a16", 16, 0.f},
            {"_b4", 4, 0.5f}, {"_b16", 16, 0.5f}};
}

// rnd / par: u of length 2^(3 + 7 r1) texels at angle 2 pi r2; v of length |u| 2^(-3 r3) (rnd) or
// |u| 2^(-1.5 r3) (par) at the angle of u plus phi: rnd phi = 2 pi r4; par phi = +-2^-(1 + 2 r4)
// (the sign from bit 0 of a fifth draw, and v reversed when bit 1 of it is set), so that most par
// queries stay inside the ratio clamp of N = 16 while their products nearly cancel. Draws in that order (r1..r4, then the fifth for
// par), rnd seed 0x7a9d, par seed 0x9a7a. Components divided by 4096 and rounded to f32.
static Sec random_pairs(bool parallel) {
    Sec s{parallel ? "par" : "rnd", {}, check_textures()};
    Rng r{parallel ? 0x9a7au : 0x7a9du};
    const double PI = 3.14159265358979323846;
    for (int n = 0; n < 32768; n++) {
        double r1 = r.unit(), r2 = r.unit(), r3 = r.unit(), r4 = r.unit();
        double lu = exp2(3 + 7 * r1), th = 2 * PI * r2, lv = lu * exp2((parallel ? -1.5 : -3) * r3), phi;
        if (parallel) {
            uint32_t w = r.next();
            phi = ((w & 1) ? -1 : 1) * exp2(-(1 + 2 * r4)) + ((w & 2) ? PI : 0);
        } else {
            phi = 2 * PI * r4;
        }
        s.g.push_back(make_float4((float)(lu * cos(th) / TEXELS), (float)(lu * sin(th) / TEXELS),
                                  (float)(lv * cos(th + phi) / TEXELS), (float)(lv * sin(th + phi) / TEXELS)));
    }
    return s;
}

__global__ void kgrad(cudaTextureObject_t t, const float4 *g, float *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float4 d = g[i];
    out[i] = tex2DGrad<float>(t, 0.5f, 0.5f, make_float2(d.x, d.y), make_float2(d.z, d.w));
}

static cudaTextureObject_t texture(cudaMipmappedArray_t m, unsigned aniso, float bias) {
    cudaResourceDesc r = {};
    r.resType = cudaResourceTypeMipmappedArray;
    r.res.mipmap.mipmap = m;
    cudaTextureDesc d = {};
    d.addressMode[0] = d.addressMode[1] = cudaAddressModeClamp;
    d.filterMode = cudaFilterModePoint;
    d.mipmapFilterMode = cudaFilterModeLinear;
    d.readMode = cudaReadModeElementType;
    d.normalizedCoords = 1;
    d.maxMipmapLevelClamp = 100.0f;
    d.mipmapLevelBias = bias;
    d.maxAnisotropy = aniso;
    cudaTextureObject_t t;
    CK(cudaCreateTextureObject(&t, &r, &d, nullptr));
    return t;
}

int main(int argc, char **argv) {
    bool inputs_only = argc == 3 && !strcmp(argv[1], "--inputs");
    if (argc != 2 && !inputs_only) { fprintf(stderr, "usage: lod5 [--inputs] OUTDIR\n"); return 2; }
    std::string dir = argv[argc - 1];
    std::vector<Sec> secs = {bias_queries(), random_pairs(false), random_pairs(true)};
    std::string path = dir + (inputs_only ? "/lod5_inputs.bin" : "/lod5.bin");
    g_out = fopen(path.c_str(), "wb");
    if (!g_out) { perror(path.c_str()); return 1; }
    std::string info = "lod5 probe (fit19): tex2DGrad at (0.5,0.5), 4096x4096 float mipmap, 13 levels, level L = L, "
                       "point + linear mip, clamp; textures in section tex (suffix maxAnisotropy bias).";
    std::string tl;
    for (auto &s : secs)
        for (auto &t : s.tex) {
            char b[96];
            snprintf(b, sizeof b, "%s%s %u %.9g\n", s.name.c_str(), t.suffix.c_str(), t.aniso, t.bias);
            tl += b;
        }
    put("info", info.data(), info.size());
    put("tex", tl.data(), tl.size());
    if (inputs_only) {
        for (auto &s : secs) put((s.name + "_g").c_str(), s.g.data(), s.g.size() * sizeof(float4));
        fclose(g_out);
        fprintf(stderr, "%s written (inputs only)\n", path.c_str());
        return 0;
    }
    const int W = 4096, L = 13;
    cudaChannelFormatDesc cd = cudaCreateChannelDesc<float>();
    cudaMipmappedArray_t mip;
    CK(cudaMallocMipmappedArray(&mip, &cd, make_cudaExtent(W, W, 0), L));
    for (int l = 0; l < L; l++) {
        cudaArray_t a;
        CK(cudaGetMipmappedArrayLevel(&a, mip, l));
        int lw = std::max(W >> l, 1);
        std::vector<float> v((size_t)lw * lw, (float)l);
        CK(cudaMemcpy2DToArray(a, 0, 0, v.data(), lw * 4, lw * 4, lw, cudaMemcpyHostToDevice));
    }
    float4 *dg; float *dr;
    const size_t nmax = 32768;
    CK(cudaMalloc(&dg, nmax * sizeof(float4)));
    CK(cudaMalloc(&dr, nmax * sizeof(float)));
    std::vector<float> h(nmax);
    long odd_all = 0;
    for (auto &s : secs) {
        int n = (int)s.g.size();
        CK(cudaMemcpy(dg, s.g.data(), n * sizeof(float4), cudaMemcpyHostToDevice));
        put((s.name + "_g").c_str(), s.g.data(), n * sizeof(float4));
        for (auto &t : s.tex) {
            cudaTextureObject_t to = texture(mip, t.aniso, t.bias);
            kgrad<<<(n + 255) / 256, 256>>>(to, dg, dr, n);
            CK(cudaGetLastError());
            CK(cudaMemcpy(h.data(), dr, n * sizeof(float), cudaMemcpyDeviceToHost));
            CK(cudaDestroyTextureObject(to));
            long odd = 0;
            for (int i = 0; i < n; i++) if (h[i] * 256.0f != rintf(h[i] * 256.0f)) odd++;
            odd_all += odd;
            put((s.name + t.suffix).c_str(), h.data(), n * sizeof(float));
        }
        fprintf(stderr, "%s: %d queries x %zu textures\n", s.name.c_str(), n, s.tex.size());
    }
    fclose(g_out);
    CK(cudaFreeMipmappedArray(mip));
    CK(cudaFree(dg)); CK(cudaFree(dr));
    fprintf(stderr, "%s written; %ld results not k/256\n", path.c_str(), odd_all);
    return 0;
}
