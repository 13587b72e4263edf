// Issue 19 fitting probe (run on the H200): exhaustive 8-bit signed and sRGB linear blends,
// random 2D footprints of both, and tex2DGrad level selection over many gradients.
// Output: one file per part in argv[1], each a sequence of sections
// [name: 16 bytes][length: u64][bytes].
#include <cuda_runtime.h>
#include <cuda_fp16.h>
#include <cstdio>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <cmath>
#include <vector>
#include <string>

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
    fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); exit(1); } } while (0)

static FILE *g_out;
static void section(const char *name, const void *p, uint64_t n) {
    char nm[16] = {0};
    strncpy(nm, name, 15);
    fwrite(nm, 1, 16, g_out);
    fwrite(&n, 8, 1, g_out);
    fwrite(p, 1, n, g_out);
}

struct Rng {
    uint64_t s;
    uint32_t next() { s ^= s << 13; s ^= s >> 7; s ^= s << 17; return (uint32_t)(s >> 11); }
};

__global__ void k1d(cudaTextureObject_t t, float *out, int n_pairs) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n_pairs * 256) return;
    int j = i >> 8, w = i & 255;
    float x = 2.0f * j + 0.5f + w / 256.0f;
    out[i] = tex1D<float>(t, x);
}

__global__ void k1d4(cudaTextureObject_t t, float4 *out, int n_pairs) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n_pairs * 256) return;
    int j = i >> 8, w = i & 255;
    float x = 2.0f * j + 0.5f + w / 256.0f;
    out[i] = tex1D<float4>(t, x);
}

__global__ void k2d(cudaTextureObject_t t, const float2 *q, float *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    out[i] = tex2D<float>(t, q[i].x, q[i].y);
}

__global__ void k2d4(cudaTextureObject_t t, const float2 *q, float4 *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    out[i] = tex2D<float4>(t, q[i].x, q[i].y);
}

__global__ void kgrad(cudaTextureObject_t t, const float4 *g, float *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float4 d = g[i];
    out[i] = tex2DGrad<float>(t, 0.5f, 0.5f, make_float2(d.x, d.y), make_float2(d.z, d.w));
}

__global__ void klod(cudaTextureObject_t t, const float *l, float *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    out[i] = tex2DLod<float>(t, 0.5f, 0.5f, l[i]);
}

static cudaTextureObject_t tex_array(cudaArray_t a, bool srgb, cudaTextureFilterMode f, bool norm_coords) {
    cudaResourceDesc r = {};
    r.resType = cudaResourceTypeArray;
    r.res.array.array = a;
    cudaTextureDesc d = {};
    d.addressMode[0] = d.addressMode[1] = d.addressMode[2] = cudaAddressModeClamp;
    d.filterMode = f;
    d.readMode = cudaReadModeNormalizedFloat;
    d.sRGB = srgb;
    d.normalizedCoords = norm_coords;
    cudaTextureObject_t t;
    CK(cudaCreateTextureObject(&t, &r, &d, nullptr));
    return t;
}

// Part 1/2: every pair (a, b) of 8-bit values, 256 weights each. Texel 2j = a, 2j+1 = b = j.
// s8: stored as int16 k = rint(r * 32767) with a count of results that are not k/32767;
// srgb: x channel as half bits (count of results that are not halves), w (alpha) as k/65535.
static void pairs(bool srgb) {
    const int n = 256 * 256;
    float *d_out; float4 *d_out4;
    CK(cudaMalloc(&d_out, n * sizeof(float)));
    CK(cudaMalloc(&d_out4, n * sizeof(float4)));
    std::vector<float> h(n);
    std::vector<float4> h4(n);
    std::vector<int16_t> res((size_t)n * 256);
    std::vector<uint16_t> alpha((size_t)n * 256);
    std::vector<uint32_t> odd;  // index, bits of results that do not fit the storage
    for (int a = 0; a < 256; a++) {
        cudaArray_t arr;
        cudaChannelFormatDesc cd = srgb ? cudaCreateChannelDesc<uchar4>() : cudaCreateChannelDesc<signed char>();
        CK(cudaMallocArray(&arr, &cd, 512, 0));
        if (srgb) {
            std::vector<uchar4> tx(512);
            for (int j = 0; j < 256; j++) {
                tx[2 * j] = make_uchar4(a, a, j, a);
                tx[2 * j + 1] = make_uchar4(j, j, a, j);
            }
            CK(cudaMemcpy2DToArray(arr, 0, 0, tx.data(), 512 * 4, 512 * 4, 1, cudaMemcpyHostToDevice));
        } else {
            std::vector<int8_t> tx(512);
            for (int j = 0; j < 256; j++) { tx[2 * j] = (int8_t)(a - 128); tx[2 * j + 1] = (int8_t)(j - 128); }
            CK(cudaMemcpy2DToArray(arr, 0, 0, tx.data(), 512, 512, 1, cudaMemcpyHostToDevice));
        }
        cudaTextureObject_t t = tex_array(arr, srgb, cudaFilterModeLinear, false);
        if (srgb) {
            k1d4<<<n / 256, 256>>>(t, d_out4, 256);
            CK(cudaGetLastError());
            CK(cudaMemcpy(h4.data(), d_out4, n * sizeof(float4), cudaMemcpyDeviceToHost));
            for (int i = 0; i < n; i++) {
                size_t o = (size_t)a * n + i;
                float r = h4[i].x;
                __half hh = __float2half_rn(r);
                uint16_t hb; memcpy(&hb, &hh, 2);
                res[o] = (int16_t)hb;
                if (__half2float(hh) != r || h4[i].y != r) { uint32_t b; memcpy(&b, &r, 4); odd.push_back((uint32_t)o); odd.push_back(b); }
                float al = h4[i].w;
                long k = lrintf(al * 65535.0f);
                alpha[o] = (uint16_t)k;
                if ((float)k / 65535.0f != al) { uint32_t b; memcpy(&b, &al, 4); odd.push_back((uint32_t)o | 0x80000000u); odd.push_back(b); }
            }
        } else {
            k1d<<<n / 256, 256>>>(t, d_out, 256);
            CK(cudaGetLastError());
            CK(cudaMemcpy(h.data(), d_out, n * sizeof(float), cudaMemcpyDeviceToHost));
            for (int i = 0; i < n; i++) {
                size_t o = (size_t)a * n + i;
                float r = h[i];
                long k = lrintf(r * 32767.0f);
                res[o] = (int16_t)k;
                if ((float)k / 32767.0f != r) { uint32_t b; memcpy(&b, &r, 4); odd.push_back((uint32_t)o); odd.push_back(b); }
            }
        }
        CK(cudaDestroyTextureObject(t));
        CK(cudaFreeArray(arr));
    }
    // Delta-code along the weight axis so the file compresses.
    std::vector<int16_t> dres(res.size());
    for (size_t p = 0; p < (size_t)n; p++)
        for (int w = 0; w < 256; w++) {
            size_t o = p * 256 + w;
            dres[o] = w ? (int16_t)(res[o] - res[o - 1]) : res[o];
        }
    section(srgb ? "srgb_pairs_d" : "s8_pairs_d", dres.data(), dres.size() * 2);
    if (srgb) {
        std::vector<int16_t> da(alpha.size());
        for (size_t p = 0; p < (size_t)n; p++)
            for (int w = 0; w < 256; w++) {
                size_t o = p * 256 + w;
                da[o] = w ? (int16_t)(alpha[o] - alpha[o - 1]) : (int16_t)alpha[o];
            }
        section("srgb_alpha_d", da.data(), da.size() * 2);
    }
    section(srgb ? "srgb_odd" : "s8_odd", odd.data(), odd.size() * 4);
    fprintf(stderr, "%s pairs: %zu results that do not fit the storage\n", srgb ? "srgb" : "s8", odd.size() / 2);
    CK(cudaFree(d_out));
    CK(cudaFree(d_out4));
}

// Random 2D footprints: 16x16 random texels, `n` coordinates with 8-bit fractions.
static void random_2d(bool srgb, int n) {
    Rng r{srgb ? 0x5eed5u : 0x5eed8u};
    cudaChannelFormatDesc cd = srgb ? cudaCreateChannelDesc<uchar4>() : cudaCreateChannelDesc<signed char>();
    cudaArray_t arr;
    CK(cudaMallocArray(&arr, &cd, 16, 16));
    int es = srgb ? 4 : 1;
    std::vector<uint8_t> tx(16 * 16 * es);
    for (auto &b : tx) b = (uint8_t)r.next();
    CK(cudaMemcpy2DToArray(arr, 0, 0, tx.data(), 16 * es, 16 * es, 16, cudaMemcpyHostToDevice));
    cudaTextureObject_t t = tex_array(arr, srgb, cudaFilterModeLinear, false);
    std::vector<float2> q(n);
    for (auto &c : q) {
        uint32_t v = r.next();
        c.x = (float)(v % 15) + 0.5f + (float)((v >> 4) & 255) / 256.0f;
        c.y = (float)((v >> 12) % 15) + 0.5f + (float)((v >> 20) & 255) / 256.0f;
    }
    float2 *dq; float4 *d4; float *d1;
    CK(cudaMalloc(&dq, n * sizeof(float2)));
    CK(cudaMalloc(&d4, n * sizeof(float4)));
    CK(cudaMalloc(&d1, n * sizeof(float)));
    CK(cudaMemcpy(dq, q.data(), n * sizeof(float2), cudaMemcpyHostToDevice));
    section(srgb ? "srgb2d_texels" : "s82d_texels", tx.data(), tx.size());
    section(srgb ? "srgb2d_coords" : "s82d_coords", q.data(), q.size() * sizeof(float2));
    if (srgb) {
        k2d4<<<(n + 255) / 256, 256>>>(t, dq, d4, n);
        CK(cudaGetLastError());
        std::vector<float4> h(n);
        CK(cudaMemcpy(h.data(), d4, n * sizeof(float4), cudaMemcpyDeviceToHost));
        section("srgb2d_res", h.data(), h.size() * sizeof(float4));
    } else {
        k2d<<<(n + 255) / 256, 256>>>(t, dq, d1, n);
        CK(cudaGetLastError());
        std::vector<float> h(n);
        CK(cudaMemcpy(h.data(), d1, n * sizeof(float), cudaMemcpyDeviceToHost));
        section("s82d_res", h.data(), h.size() * sizeof(float));
    }
    CK(cudaDestroyTextureObject(t));
    CK(cudaFreeArray(arr));
    CK(cudaFree(dq)); CK(cudaFree(d4)); CK(cudaFree(d1));
}

// Level of detail: level L of a float mipmap holds the constant L; point sampling inside
// the levels, linear mip filter, so a result is L + fraction (8 bits) exactly.
static cudaTextureObject_t const_mip(int w, int h, int levels, float max_aniso, cudaMipmappedArray_t *m) {
    cudaChannelFormatDesc cd = cudaCreateChannelDesc<float>();
    cudaExtent e = make_cudaExtent(w, h, 0);
    CK(cudaMallocMipmappedArray(m, &cd, e, levels));
    for (int l = 0; l < levels; l++) {
        cudaArray_t a;
        CK(cudaGetMipmappedArrayLevel(&a, *m, l));
        int lw = std::max(w >> l, 1), lh = std::max(h >> l, 1);
        std::vector<float> v((size_t)lw * lh, (float)l);
        CK(cudaMemcpy2DToArray(a, 0, 0, v.data(), lw * 4, lw * 4, lh, cudaMemcpyHostToDevice));
    }
    cudaResourceDesc r = {};
    r.resType = cudaResourceTypeMipmappedArray;
    r.res.mipmap.mipmap = *m;
    cudaTextureDesc d = {};
    d.addressMode[0] = d.addressMode[1] = cudaAddressModeClamp;
    d.filterMode = cudaFilterModePoint;
    d.mipmapFilterMode = cudaFilterModeLinear;
    d.readMode = cudaReadModeElementType;
    d.normalizedCoords = 1;
    d.maxMipmapLevelClamp = 100.0f;
    d.maxAnisotropy = (unsigned)max_aniso;
    cudaTextureObject_t t;
    CK(cudaCreateTextureObject(&t, &r, &d, nullptr));
    return t;
}

static void run_grads(const char *name, cudaTextureObject_t t, const std::vector<float4> &g) {
    int n = (int)g.size();
    float4 *dg; float *d;
    CK(cudaMalloc(&dg, n * sizeof(float4)));
    CK(cudaMalloc(&d, n * sizeof(float)));
    CK(cudaMemcpy(dg, g.data(), n * sizeof(float4), cudaMemcpyHostToDevice));
    kgrad<<<(n + 255) / 256, 256>>>(t, dg, d, n);
    CK(cudaGetLastError());
    std::vector<float> h(n);
    CK(cudaMemcpy(h.data(), d, n * sizeof(float), cudaMemcpyDeviceToHost));
    std::string in = std::string(name) + "_g", out = std::string(name) + "_r";
    section(in.c_str(), g.data(), g.size() * sizeof(float4));
    section(out.c_str(), h.data(), h.size() * 4);
    CK(cudaFree(dg)); CK(cudaFree(d));
}

static float rand_mag(Rng &r, float lo_log2, float hi_log2) {
    float u = (r.next() & 0xffffff) / 16777216.0f;
    float v = exp2f(lo_log2 + u * (hi_log2 - lo_log2));
    return (r.next() & 1) ? -v : v;
}

static void lod(bool first) {
    const int W = 4096, L = 13;
    cudaMipmappedArray_t m1, m2, m3;
    cudaTextureObject_t t = const_mip(W, W, L, 0, &m1);
    cudaTextureObject_t t16 = const_mip(W, W, L, 16, &m2);
    cudaTextureObject_t tr = const_mip(W, 1024, L, 0, &m3);
    Rng r{0x10d};
    const int NR = 1 << 18;
    if (first) {
    // 1. isotropic, axis aligned: dPdx = (g, 0), dPdy = (0, g), 65536 g per octave, 14 octaves.
    {
        std::vector<float4> g;
        for (int e = -13; e <= 0; e++)
            for (int k = 0; k < 65536; k++) {
                float v = ldexpf(1.0f + k / 65536.0f, e);
                g.push_back(make_float4(v, 0, 0, v));
            }
        run_grads("iso", t, g);
    }
    // 2. axis-aligned anisotropic: every pair of 1024 log-spaced lengths.
    {
        std::vector<float4> g;
        for (int i = 0; i < 512; i++)
            for (int j = 0; j < 512; j++) {
                float a = exp2f(-13.0f + 13.0f * i / 512.0f), b = exp2f(-13.0f + 13.0f * j / 512.0f);
                g.push_back(make_float4(a, 0, 0, b));
            }
        run_grads("axis", t, g);
    }
    // 5. tex2DLod over lod -1..13 every 1/4096 (reference for the fraction's rounding).
    {
        int n = 14 * 4096 + 4096;
        std::vector<float> l(n);
        for (int i = 0; i < n; i++) l[i] = -1.0f + i / 4096.0f;
        float *dl, *d;
        CK(cudaMalloc(&dl, n * 4)); CK(cudaMalloc(&d, n * 4));
        CK(cudaMemcpy(dl, l.data(), n * 4, cudaMemcpyHostToDevice));
        klod<<<(n + 255) / 256, 256>>>(t, dl, d, n);
        CK(cudaGetLastError());
        std::vector<float> h(n);
        CK(cudaMemcpy(h.data(), d, n * 4, cudaMemcpyDeviceToHost));
        section("lod_l", l.data(), n * 4);
        section("lod_r", h.data(), n * 4);
        CK(cudaFree(dl)); CK(cudaFree(d));
    }
    } else {
    // 3. one gradient only (the other zero), any direction: length and angle.
    {
        std::vector<float4> g;
        for (int i = 0; i < NR; i++) {
            float len = fabsf(rand_mag(r, -13, 0));
            float ang = (r.next() & 0xffffff) / 16777216.0f * 6.2831853f;
            float4 v = make_float4(len * cosf(ang), len * sinf(ang), 0, 0);
            if (i & 1) v = make_float4(0, 0, v.x, v.y);
            g.push_back(v);
        }
        run_grads("dir", t, g);
    }
    // 4. random gradients (all four components), no anisotropy, aniso 16, 4096x1024.
    {
        std::vector<float4> g;
        for (int i = 0; i < NR; i++)
            g.push_back(make_float4(rand_mag(r, -14, 0), rand_mag(r, -14, 0), rand_mag(r, -14, 0), rand_mag(r, -14, 0)));
        run_grads("rnd", t, g);
        run_grads("rnd16", t16, g);
        run_grads("rndrect", tr, g);
    }
    }
    CK(cudaDestroyTextureObject(t)); CK(cudaDestroyTextureObject(t16)); CK(cudaDestroyTextureObject(tr));
    CK(cudaFreeMipmappedArray(m1)); CK(cudaFreeMipmappedArray(m2)); CK(cudaFreeMipmappedArray(m3));
}

static void lod_a() { lod(true); }
static void lod_b() { lod(false); }

int main(int argc, char **argv) {
    if (argc != 2) { fprintf(stderr, "usage: fit19 OUTDIR\n"); return 2; }
    std::string dir = argv[1];
    struct { const char *file; void (*f)(); } parts[] = {
        {"s8.bin", [] { pairs(false); random_2d(false, 1 << 20); }},
        {"srgb.bin", [] { pairs(true); random_2d(true, 1 << 18); }},
        {"loda.bin", lod_a},
        {"lodb.bin", lod_b},
    };
    for (auto &p : parts) {
        g_out = fopen((dir + "/" + p.file).c_str(), "wb");
        if (!g_out) { perror(p.file); return 1; }
        p.f();
        fclose(g_out);
        fprintf(stderr, "%s written\n", p.file);
    }
    return 0;
}
