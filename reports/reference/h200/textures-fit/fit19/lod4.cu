// lod4 (fit19): lod3.cu with a mipmap-level-bias sweep instead of lod3's six textures and
// sections (the NTEX block below); the rest of this comment is lod3's and still holds for
// the file format, the texture and the inputs. Usage: lod4 [--inputs] OUTDIR -> OUTDIR/lod4.bin.
// Issue 19, probe 3 (run on the H200): tex2DGrad anisotropic level of detail, isolating the
// rounding of the determinant det = ux*vy - uy*vx (texel-space gradients u = dPdx, v = dPdy)
// that gives the minor axis (Lmin = LOG2(det) - LOG2(major), see ../aniso2_fit.py):
//   prod0..prod4  one product (axis-aligned pair), 9-bit mantissas of both factors swept,
//                 exponent difference d = 0 (all 512 x 512) and d = 1..4 (65536 random pairs each)
//   sum           two products of the same sign (magnitudes add), the smaller one 2^-k below (k 0..15)
//   dif           two products of opposite sign (magnitudes subtract), the same layout
//   cancel        nearly cancelling products: ad - bc ~ +-ad * t, t from 0.71 down to 0.21
// Texture as in fit19.cu / probe2: 4096x4096 float mipmap, 13 levels, level L filled with L, point
// filtering inside levels, LINEAR mipmap filter, normalized coords, clamp, maxMipmapLevelClamp 100.
// One mipmapped array, six texture objects on it:
//   _r   maxAnisotropy 0  (isotropic reference: gives the major axis, exact in ../lod3_fit.py)
//   _a2  maxAnisotropy 2
//   _a4  maxAnisotropy 4
//   _a16 maxAnisotropy 16
//   _b4  maxAnisotropy 4,  mipmapLevelBias 0.5
//   _b16 maxAnisotropy 16, mipmapLevelBias 0.5
// (the aniso path sharpens the mip blend weight, which hides lod fractions near integers; the
// biased copies move those fractions to the middle of the level so that every lod is visible
// in at least one of _aN/_bN).
// Every sample is tex2DGrad at (0.5, 0.5), so a result is L + k/256.
//
// Usage:  lod3 OUTDIR            writes OUTDIR/lod3.bin (needs the GPU)
//         lod3 --inputs OUTDIR   writes OUTDIR/lod3_inputs.bin: the same input sections only,
//                                no CUDA call (regenerates the inputs on any machine)
// File: sections [name: 16 bytes, NUL padded][length: u64][bytes] (read with ../sections.py or
// ../lod3_fit.load). Per section NAME: NAME_g = float4 gradients (dPdx.x, dPdx.y, dPdy.x, dPdy.y),
// normalized coordinates; NAME_r, NAME_a2, NAME_a4, NAME_a16, NAME_b4, NAME_b16 = float results.
// Section "info" is ASCII text.
// All inputs are texel values m * 2^(E-9) with an integer m in 512..1023 (a 9-bit mantissa, so the
// hardware's 9-bit truncation of the components is the identity) or 0, divided by 4096: every
// component is an exact float (checked; an inexact one is reported).
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

static const double TEX = 4096.0;   // texels per unit of normalized coordinate
static long g_inexact = 0;

static float to_norm(double texels) {
    double v = texels / TEX;
    float f = (float)v;
    if ((double)f != v) g_inexact++;
    return f;
}
// u = dPdx, v = dPdy in texels
static void push(std::vector<float4> &g, double ux, double uy, double vx, double vy) {
    g.push_back(make_float4(to_norm(ux), to_norm(uy), to_norm(vx), to_norm(vy)));
}
// a texel value with the 9-bit mantissa 1 + m/512 (m 0..511) and exponent E: (512 + m) * 2^(E-9)
static double m9(uint32_t m, int E) { return ldexp(512.0 + (m & 511), E - 9); }
// v (> 0) truncated toward zero to a 9-bit mantissa
static double trunc9(double v) {
    int e;
    double f = frexp(v, &e);                 // v = f * 2^e, f in [0.5, 1)
    return ldexp(floor(f * 1024.0), e - 10);
}

struct Sec { std::string name; std::vector<float4> g; };

// prod0: one product, axis aligned, all mantissa pairs at equal exponents.
// index = i*512 + j (i, j 0..511): A = m9(i, 8), B = m9(j, 8) (256..511.5 texels);
// u = (A, 0), v = (0, B): det = A*B, major = max(A, B), ratio <= 2.
static Sec prod0() {
    Sec s{"prod0", {}};
    for (uint32_t i = 0; i < 512; i++)
        for (uint32_t j = 0; j < 512; j++) push(s.g, m9(i, 8), 0, 0, m9(j, 8));
    return s;
}
// prodD (D = 1..4): the same with B one to four octaves lower (ratio 2^D/2 .. 2^(D+1)).
// Rng seed 0x3d00 + D, 65536 samples, per sample i = next() & 511, then j = next() & 511:
// u = (A, 0), v = (0, B), A = m9(i, 8), B = m9(j, 8 - D).
static Sec prodd(int d) {
    Sec s{"prod" + std::to_string(d), {}};
    Rng r{0x3d00u + (uint64_t)d};
    for (int n = 0; n < 65536; n++) {
        uint32_t i = r.next() & 511, j = r.next() & 511;
        push(s.g, m9(i, 8), 0, 0, m9(j, 8 - d));
    }
    return s;
}
// sum / dif: two products, the second 2^-k (times a mantissa ratio) below the first.
// index = k*12288 + n (k 0..15, n 0..12287). Rng seed 0x5a3 (sum) / 0xd1f (dif); per sample
// a, b, c, e = next() & 511 (in that order); kc = k/2, kd = k - kc;
// A = m9(a, 8), B = m9(b, 8), C = m9(c, 8 - kc), E = m9(e, 8 - kd). flip = n & 1:
//   sum flip 0: u = (A, -C), v = (E, B)    det = A*B + C*E   (ux*vy is the larger product)
//   sum flip 1: u = (-C, A), v = (B, E)    det = -(C*E + A*B) (uy*vx is the larger product)
//   dif flip 0: u = (A, C),  v = (E, B)    det = A*B - C*E
//   dif flip 1: u = (C, A),  v = (B, E)    det = C*E - A*B
static Sec two(bool sum) {
    Sec s{sum ? "sum" : "dif", {}};
    Rng r{sum ? 0x5a3u : 0xd1fu};
    for (int k = 0; k < 16; k++)
        for (int n = 0; n < 12288; n++) {
            uint32_t a = r.next() & 511, b = r.next() & 511, c = r.next() & 511, e = r.next() & 511;
            int kc = k / 2, kd = k - kc;
            double A = m9(a, 8), B = m9(b, 8), C = m9(c, 8 - kc), E = m9(e, 8 - kd);
            double sg = sum ? -1.0 : 1.0;
            if ((n & 1) == 0) push(s.g, A, sg * C, E, B);
            else push(s.g, sg * C, A, B, E);
        }
    return s;
}
// cancel: nearly cancelling products. index = m*16384 + n (m 0..4, n 0..16383).
// Rng seed 0xca9; per sample a, b, d = next() & 511, then w = next() (in that order):
// a = m9(a, 8), b = m9(b, 8), d = m9(d, 8); t = 2^-(0.5 + 0.35*(m + w/2^32)) (t from 0.71 down to 0.21:
// beyond that the ratio major/minor passes 16 and the lod is clamped); sign = +1 for even n, -1 for odd n;
// c = trunc9(a*d/b * (1 - sign*t)) (computed in double); u = (a, b), v = (c, d): det = a*d - b*c ~ sign*a*d*t.
static Sec cancel() {
    Sec s{"cancel", {}};
    Rng r{0xca9u};
    for (int m = 0; m < 5; m++)
        for (int n = 0; n < 16384; n++) {
            uint32_t ia = r.next() & 511, ib = r.next() & 511, id = r.next() & 511, w = r.next();
            double a = m9(ia, 8), b = m9(ib, 8), d = m9(id, 8);
            double t = exp2(-(0.5 + 0.35 * (m + w / 4294967296.0))), sg = (n & 1) ? -1.0 : 1.0;
            double c = trunc9(a * d / b * (1.0 - sg * t));
            push(s.g, a, b, c, d);
        }
    return s;
}

// ---------------------------------------------------------------- device
__global__ void kgrad(cudaTextureObject_t t, const float4 *g, float *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float4 d = g[i];
    out[i] = tex2DGrad<float>(t, 0.5f, 0.5f, make_float2(d.x, d.y), make_float2(d.z, d.w));
}

static cudaTextureObject_t make_tex(cudaMipmappedArray_t m, unsigned max_aniso, float bias) {
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
    d.maxAnisotropy = max_aniso;
    cudaTextureObject_t t;
    CK(cudaCreateTextureObject(&t, &r, &d, nullptr));
    return t;
}

// lod4: the mipmap level bias on the anisotropic path. Textures: maxAnisotropy N in
// {0, 2, 4, 8, 16} x mipmapLevelBias in {1/256, 0.25, 0.5, 1.0, -0.5}; suffix _nN_bK (K the
// bias's index). Sections prod0 and prod2 only (their unbiased lod is exact in fit 2).
static const int NN = 5, NB = 5, NTEX = NN * NB;
static const unsigned NS[NN] = {0, 2, 4, 8, 16};
static const float BS[NB] = {1.0f / 256, 0.25f, 0.5f, 1.0f, -0.5f};
static unsigned ANISO[NTEX];
static float BIAS[NTEX];
static char SUFFIX[NTEX][16];

int main(int argc, char **argv) {
    bool inputs_only = argc == 3 && !strcmp(argv[1], "--inputs");
    if (argc != 2 && !inputs_only) { fprintf(stderr, "usage: lod4 [--inputs] OUTDIR\n"); return 2; }
    std::string dir = argv[argc - 1];
    for (int a = 0; a < NN; a++)
        for (int b = 0; b < NB; b++) {
            ANISO[a * NB + b] = NS[a];
            BIAS[a * NB + b] = BS[b];
            snprintf(SUFFIX[a * NB + b], sizeof SUFFIX[0], "_n%u_b%d", NS[a], b);
        }
    (void)two; (void)cancel;  // lod3's two-product sections: not in this probe
    std::vector<Sec> secs;
    secs.push_back(prod0());
    secs.push_back(prodd(2));
    if (g_inexact) fprintf(stderr, "warning: %ld input components are not exact floats\n", g_inexact);
    size_t total = 0, nmax = 0;
    for (auto &s : secs) { total += s.g.size(); nmax = std::max(nmax, s.g.size()); }
    fprintf(stderr, "%zu sections, %zu samples\n", secs.size(), total);

    std::string path = dir + (inputs_only ? "/lod4_inputs.bin" : "/lod4.bin");
    g_out = fopen(path.c_str(), "wb");
    if (!g_out) { perror(path.c_str()); return 1; }
    std::string info = "lod4 probe (fit19, bias sweep): tex2DGrad at (0.5,0.5), 4096x4096 float mipmap, 13 levels, "
                       "level L = L, point + linear mip, clamp; _r = maxAnisotropy 0, _aN = maxAnisotropy N, "
                       "_nN_bK = maxAnisotropy N with mipmapLevelBias {1/256, 0.25, 0.5, 1, -0.5}[K].";
    if (inputs_only) {
        section("info", info.data(), info.size());
        for (auto &s : secs) section((s.name + "_g").c_str(), s.g.data(), s.g.size() * sizeof(float4));
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
    cudaTextureObject_t tex[NTEX];
    for (int k = 0; k < NTEX; k++) tex[k] = make_tex(mip, ANISO[k], BIAS[k]);

    float4 *dg; float *dr;
    CK(cudaMalloc(&dg, nmax * sizeof(float4)));
    CK(cudaMalloc(&dr, nmax * sizeof(float)));
    std::vector<float> h(nmax);
    section("info", info.data(), info.size());
    for (auto &s : secs) {
        int n = (int)s.g.size();
        CK(cudaMemcpy(dg, s.g.data(), n * sizeof(float4), cudaMemcpyHostToDevice));
        section((s.name + "_g").c_str(), s.g.data(), n * sizeof(float4));
        for (int k = 0; k < NTEX; k++) {
            kgrad<<<(n + 255) / 256, 256>>>(tex[k], dg, dr, n);
            CK(cudaGetLastError());
            CK(cudaMemcpy(h.data(), dr, n * sizeof(float), cudaMemcpyDeviceToHost));
            long odd = 0;
            for (int i = 0; i < n; i++) if (h[i] * 256.0f != rintf(h[i] * 256.0f)) odd++;
            section((s.name + SUFFIX[k]).c_str(), h.data(), n * sizeof(float));
            fprintf(stderr, "%-8s aniso %2u bias %.4f: %d samples, %ld not k/256\n", s.name.c_str(), ANISO[k],
                    BIAS[k], n, odd);
        }
    }
    fclose(g_out);
    for (int k = 0; k < NTEX; k++) CK(cudaDestroyTextureObject(tex[k]));
    CK(cudaFreeMipmappedArray(mip));
    CK(cudaFree(dg)); CK(cudaFree(dr));
    fprintf(stderr, "%s written\n", path.c_str());
    return 0;
}
