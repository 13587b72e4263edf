// Issue 19, probe 2 (run on the H200): tex2DGrad level of detail, isolating
//  (1) the "diagonal" term D that wins when the two gradients are nearly parallel, and
//  (2) the anisotropic path (maxAnisotropy 1, 2, 4, 8, 16).
// Texture as in fit19.cu: 4096x4096 float mipmap, 13 levels, level L filled with L, point
// filtering inside levels, LINEAR mipmap filter, normalized coords, clamp, maxMipmapLevelClamp
// 100; one mipmapped array, six texture objects on it (maxAnisotropy 0, 1, 2, 4, 8, 16).
// Every sample is tex2DGrad at (0.5, 0.5), so a result is L + k/256.
//
// Usage:  lod2 OUTDIR            writes OUTDIR/lod2.bin (needs the GPU)
//         lod2 --inputs OUTDIR   writes OUTDIR/lod2_inputs.bin: the same input sections only,
//                                no CUDA call (regenerates the inputs on any machine)
// File: sections [name: 16 bytes, NUL padded][length: u64][bytes] (read with ../sections.py).
// Per section NAME: NAME_g = float4 gradients (dPdx.x, dPdx.y, dPdy.x, dPdy.y), normalized
// coordinates; NAME_r = float result with maxAnisotropy 0; NAME_a1/_a2/_a4/_a8/_a16 = float
// results with maxAnisotropy 1/2/4/8/16. Section "info" is ASCII text.
// All inputs are generated in texel units (texture 4096 wide) as integers times a power of two,
// then divided by 4096: every component is exact (checked; an inexact one is reported).
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
    // integer uniform in [lo, hi]
    int range(int lo, int hi) { return lo + (int)(next() % (uint32_t)(hi - lo + 1)); }
};

static const double TEX = 4096.0;   // texels per unit of normalized coordinate
static const double PI = 3.14159265358979323846;
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
static long iround(double x) { return lround(x); }
// floor(a * b / 2^s) for integers (exact, sign-safe)
static long mulshift(long a, long b, int s) {
    long p = a * b;
    return p >= 0 ? (p >> s) : -((-p + (1L << s) - 1) >> s);
}

struct Sec { std::string name; std::vector<float4> g; };

// ---------------------------------------------------------------- part 1: the term D
// par_ax: exactly parallel / antiparallel, along x. x = 256 + i/8 texels (i 0..2047), s = j/64
// (j -64..64): u = (x, 0), v = (s*x, 0).
static Sec par_ax() {
    Sec s{"par_ax", {}};
    for (int i = 0; i < 2048; i++)
        for (int j = -64; j <= 64; j++) {
            double x = 256.0 + i / 8.0;
            push(s.g, x, 0, x * j / 64.0, 0);
        }
    return s;
}
// par_ay: the same along y with the order swapped (the longer one is dPdy), i step 4:
// u = (0, s*x), v = (0, x).
static Sec par_ay() {
    Sec s{"par_ay", {}};
    for (int i = 0; i < 2048; i += 4)
        for (int j = -64; j <= 64; j++) {
            double x = 256.0 + i / 8.0;
            push(s.g, 0, x * j / 64.0, 0, x);
        }
    return s;
}
// par_dir: parallel / antiparallel in any direction. d 0..2047: theta = 2 pi d / 2048,
// R = 4096 + 64 * ((d * 37) % 64) (units 1/16 texel: length 256..508 texels),
// p = round(R cos theta), q = round(R sin theta); u = (p, q)/16; s = j/32 (j -32..32): v = s*u.
static Sec par_dir() {
    Sec s{"par_dir", {}};
    for (int d = 0; d < 2048; d++) {
        double th = 2 * PI * d / 2048.0, R = 4096 + 64 * ((d * 37) % 64);
        long p = iround(R * cos(th)), q = iround(R * sin(th));
        for (int j = -32; j <= 32; j++)
            push(s.g, p / 16.0, q / 16.0, p * j / 512.0, q * j / 512.0);
    }
    return s;
}
// sumax: the sum (or difference) of the two gradients lies exactly on an axis, the gradients
// do not. Rng seed 0x5a0a; per sample a, c in [4096, 8191], b in [-2048, 2047] (drawn in that
// order, units 1/16 texel). variant = index / 32768:
//   0: u = (a, b), v = (c, -b)   u+v = (a+c, 0)
//   1: u = (b, a), v = (-b, c)   u+v = (0, a+c)
//   2: u = (a, b), v = (-c, b)   u-v = (a+c, 0)
//   3: u = (b, a), v = (b, -c)   u-v = (0, a+c)
static Sec sumax() {
    Sec s{"sumax", {}};
    Rng r{0x5a0a};
    for (int var = 0; var < 4; var++)
        for (int i = 0; i < 32768; i++) {
            double a = r.range(4096, 8191) / 16.0, c = r.range(4096, 8191) / 16.0, b = r.range(-2048, 2047) / 16.0;
            switch (var) {
                case 0: push(s.g, a, b, c, -b); break;
                case 1: push(s.g, b, a, -b, c); break;
                case 2: push(s.g, a, b, -c, b); break;
                default: push(s.g, b, a, b, -c); break;
            }
        }
    return s;
}
// npar: nearly parallel, random. Rng seed 0x9a5; per sample p, q in [-4095, 4095] (redrawn
// while both are 0), k in [-64, 64], e1, e2 in [-16, 16] (in that order), units 1/16 texel:
// u = (p, q), v = (floor(k*p/64) + e1, floor(k*q/64) + e2)  (floor rounds toward -inf).
static Sec npar() {
    Sec s{"npar", {}};
    Rng r{0x9a5};
    for (int i = 0; i < 131072; i++) {
        long p, q;
        do { p = r.range(-4095, 4095); q = r.range(-4095, 4095); } while (p == 0 && q == 0);
        long k = r.range(-64, 64), e1 = r.range(-16, 16), e2 = r.range(-16, 16);
        long vx = mulshift(k, p, 6) + e1, vy = mulshift(k, q, 6) + e2;
        push(s.g, p / 16.0, q / 16.0, vx / 16.0, vy / 16.0);
    }
    return s;
}
// ang: the angle between the gradients swept (fine near 0), length ratios fixed.
// index = (d*512 + t)*6 + m: theta = d*pi/32 (d 0..31), phi = pi*(t/512)^2 (t 0..511),
// r = {1, 15/16, 7/8, 3/4, 1/2, 1/4}[m]; units 1/32 texel, R = 8192 (256 texels):
// u = round(R (cos theta, sin theta)), v = round(r R (cos(theta+phi), sin(theta+phi))).
// (cos/sin in double: stored inputs are the reference.)
static Sec ang() {
    Sec s{"ang", {}};
    const double rr[6] = {1, 15 / 16.0, 7 / 8.0, 3 / 4.0, 1 / 2.0, 1 / 4.0};
    const double R = 8192;
    for (int d = 0; d < 32; d++)
        for (int t = 0; t < 512; t++)
            for (int m = 0; m < 6; m++) {
                double th = d * PI / 32, ph = PI * (t / 512.0) * (t / 512.0);
                long p = iround(R * cos(th)), q = iround(R * sin(th));
                long vx = iround(rr[m] * R * cos(th + ph)), vy = iround(rr[m] * R * sin(th + ph));
                push(s.g, p / 32.0, q / 32.0, vx / 32.0, vy / 32.0);
            }
    return s;
}
// perp: 90 and 45 degree pairs. index = d*10 + m, d 0..2047: theta = 2 pi d/2048,
// p = 4*round(2048 cos theta), q = 4*round(2048 sin theta) (units 1/32 texel, 256 texels), u = (p, q):
//   m 0: v = (-q, p)        90 deg, equal      m 1: v = (q, -p)        -90 deg, equal
//   m 2: v = 3/4 (-q, p)                       m 3: v = 1/2 (-q, p)
//   m 4: v = (p-q, p+q)     45 deg, x sqrt2    m 5: v = (p-q, p+q)/2   45 deg, x 1/sqrt2
//   m 6: v = round((p-q)/sqrt2, (p+q)/sqrt2)   45 deg, equal (rounded to units)
//   m 7: v = (p+q, q-p)     -45 deg, x sqrt2   m 8: v = (p+q, q-p)/2
//   m 9: v = round((p+q)/sqrt2, (q-p)/sqrt2)
static Sec perp() {
    Sec s{"perp", {}};
    const double r2 = sqrt(2.0);
    for (int d = 0; d < 2048; d++) {
        double th = 2 * PI * d / 2048.0;
        double p = 4.0 * iround(2048 * cos(th)), q = 4.0 * iround(2048 * sin(th));
        double v[10][2] = {
            {-q, p}, {q, -p}, {-q * 0.75, p * 0.75}, {-q * 0.5, p * 0.5},
            {p - q, p + q}, {(p - q) / 2, (p + q) / 2}, {(double)iround((p - q) / r2), (double)iround((p + q) / r2)},
            {p + q, q - p}, {(p + q) / 2, (q - p) / 2}, {(double)iround((p + q) / r2), (double)iround((q - p) / r2)},
        };
        for (int m = 0; m < 10; m++) push(s.g, p / 32.0, q / 32.0, v[m][0] / 32.0, v[m][1] / 32.0);
    }
    return s;
}

// ---------------------------------------------------------------- part 2: anisotropy
// an_ax: axis aligned, major fixed, minor swept. index = (o*8 + (E-6))*4096 + (k-1):
// E 6..13, A = 2^E * (4 + E%4)/4 texels, k 1..4096, B = A*k/4096 (ratio A/B = 4096/k);
//   o 0: u = (A, 0), v = (0, B)    o 1: u = (0, A), v = (B, 0)
//   o 2: u = (B, 0), v = (0, A)    o 3: u = (0, B), v = (A, 0)
static Sec an_ax() {
    Sec s{"an_ax", {}};
    for (int o = 0; o < 4; o++)
        for (int E = 6; E <= 13; E++)
            for (int k = 1; k <= 4096; k++) {
                double A = ldexp(1.0, E) * (4 + E % 4) / 4.0, B = A * k / 4096.0;
                switch (o) {
                    case 0: push(s.g, A, 0, 0, B); break;
                    case 1: push(s.g, 0, A, B, 0); break;
                    case 2: push(s.g, B, 0, 0, A); break;
                    default: push(s.g, 0, B, A, 0); break;
                }
            }
    return s;
}
// an_rot: perpendicular, rotated. index = (d*2 + a)*256 + t: theta = d*(pi/2)/128 (d 0..127),
// A = {1024, 3072}[a] texels, B = A * 2^(-6t/256) (t 0..255, ratio 1..~63); units 1/32 texel:
// u = round(32 A (cos, sin)(theta)), v = round(32 B (-sin, cos)(theta)).
static Sec an_rot() {
    Sec s{"an_rot", {}};
    const double AA[2] = {1024, 3072};
    for (int d = 0; d < 128; d++)
        for (int a = 0; a < 2; a++)
            for (int t = 0; t < 256; t++) {
                double th = d * (PI / 2) / 128, A = 32 * AA[a], B = A * exp2(-6.0 * t / 256);
                push(s.g, iround(A * cos(th)) / 32.0, iround(A * sin(th)) / 32.0,
                     iround(-B * sin(th)) / 32.0, iround(B * cos(th)) / 32.0);
            }
    return s;
}
// an_ang: major fixed (1024 texels at alpha = {0, pi/6, pi/4}[m]), minor swept in angle and length.
// index = (m*256 + t)*96 + r: phi = pi t/256 (t 0..255), B = 1024 * 2^(-r/16) (r 0..95);
// units 1/32 texel: u = round(32*1024 (cos, sin)(alpha)), v = round(32 B (cos, sin)(alpha+phi)).
static Sec an_ang() {
    Sec s{"an_ang", {}};
    const double al[3] = {0, PI / 6, PI / 4};
    for (int m = 0; m < 3; m++)
        for (int t = 0; t < 256; t++)
            for (int r = 0; r < 96; r++) {
                double A = 32 * 1024.0, B = A * exp2(-r / 16.0), ph = al[m] + PI * t / 256;
                push(s.g, iround(A * cos(al[m])) / 32.0, iround(A * sin(al[m])) / 32.0,
                     iround(B * cos(ph)) / 32.0, iround(B * sin(ph)) / 32.0);
            }
    return s;
}
// an_len: axis aligned, major length swept at fixed ratios. index = (e*256 + i)*17 + m:
// A = (256 + i) * 2^(e-8) texels (e 0..16, i 0..255: A from 1 to ~2^17),
// B = A * K[m]/64, K = {64,56,48,40,32,24,20,16,12,10,8,6,5,4,3,2,1}; u = (A, 0), v = (0, B).
static Sec an_len() {
    Sec s{"an_len", {}};
    const int K[17] = {64, 56, 48, 40, 32, 24, 20, 16, 12, 10, 8, 6, 5, 4, 3, 2, 1};
    for (int e = 0; e <= 16; e++)
        for (int i = 0; i < 256; i++)
            for (int m = 0; m < 17; m++) {
                double A = ldexp(256.0 + i, e - 8), B = A * K[m] / 64.0;
                push(s.g, A, 0, 0, B);
            }
    return s;
}
// an_rnd: random gradients as fit19's rnd (each component +-2^U(-14, 0) in normalized units,
// random sign), Rng seed 0xa2d, 65536 samples (for validation; inputs are not grid values).
static Sec an_rnd() {
    Sec s{"an_rnd", {}};
    Rng r{0xa2d};
    auto mag = [&r]() {
        float u = (r.next() & 0xffffff) / 16777216.0f;
        float v = exp2f(-14.0f + u * 14.0f);
        return (r.next() & 1) ? -v : v;
    };
    for (int i = 0; i < 65536; i++) {
        float a = mag(), b = mag(), c = mag(), d = mag();
        s.g.push_back(make_float4(a, b, c, d));
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

static cudaTextureObject_t make_tex(cudaMipmappedArray_t m, unsigned max_aniso) {
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
    d.maxAnisotropy = max_aniso;
    cudaTextureObject_t t;
    CK(cudaCreateTextureObject(&t, &r, &d, nullptr));
    return t;
}

static const unsigned ANISO[6] = {0, 1, 2, 4, 8, 16};
static const char *SUFFIX[6] = {"_r", "_a1", "_a2", "_a4", "_a8", "_a16"};

int main(int argc, char **argv) {
    bool inputs_only = argc == 3 && !strcmp(argv[1], "--inputs");
    if (argc != 2 && !inputs_only) { fprintf(stderr, "usage: lod2 [--inputs] OUTDIR\n"); return 2; }
    std::string dir = argv[argc - 1];
    std::vector<Sec> secs;
    secs.push_back(par_ax()); secs.push_back(par_ay()); secs.push_back(par_dir());
    secs.push_back(sumax()); secs.push_back(npar()); secs.push_back(ang()); secs.push_back(perp());
    secs.push_back(an_ax()); secs.push_back(an_rot()); secs.push_back(an_ang()); secs.push_back(an_len());
    long inexact_grid = g_inexact;   // an_rnd is not a grid
    secs.push_back(an_rnd());
    if (inexact_grid) fprintf(stderr, "warning: %ld grid input components are not exact floats\n", inexact_grid);
    size_t total = 0, nmax = 0;
    for (auto &s : secs) { total += s.g.size(); nmax = std::max(nmax, s.g.size()); }
    fprintf(stderr, "%zu sections, %zu samples\n", secs.size(), total);

    std::string path = dir + (inputs_only ? "/lod2_inputs.bin" : "/lod2.bin");
    g_out = fopen(path.c_str(), "wb");
    if (!g_out) { perror(path.c_str()); return 1; }
    std::string info = "lod2 probe (fit19/probe2): tex2DGrad at (0.5,0.5), 4096x4096 float mipmap, 13 levels, "
                       "level L = L, point + linear mip, clamp; suffix _r = maxAnisotropy 0, _aN = maxAnisotropy N.";
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
    cudaTextureObject_t tex[6];
    for (int k = 0; k < 6; k++) tex[k] = make_tex(mip, ANISO[k]);

    float4 *dg; float *dr;
    CK(cudaMalloc(&dg, nmax * sizeof(float4)));
    CK(cudaMalloc(&dr, nmax * sizeof(float)));
    std::vector<float> h(nmax);
    section("info", info.data(), info.size());
    for (auto &s : secs) {
        int n = (int)s.g.size();
        CK(cudaMemcpy(dg, s.g.data(), n * sizeof(float4), cudaMemcpyHostToDevice));
        section((s.name + "_g").c_str(), s.g.data(), n * sizeof(float4));
        for (int k = 0; k < 6; k++) {
            kgrad<<<(n + 255) / 256, 256>>>(tex[k], dg, dr, n);
            CK(cudaGetLastError());
            CK(cudaMemcpy(h.data(), dr, n * sizeof(float), cudaMemcpyDeviceToHost));
            long odd = 0;
            for (int i = 0; i < n; i++) if (h[i] * 256.0f != rintf(h[i] * 256.0f)) odd++;
            section((s.name + SUFFIX[k]).c_str(), h.data(), n * sizeof(float));
            fprintf(stderr, "%-8s aniso %2u: %d samples, %ld not k/256\n", s.name.c_str(), ANISO[k], n, odd);
        }
    }
    fclose(g_out);
    for (int k = 0; k < 6; k++) CK(cudaDestroyTextureObject(tex[k]));
    CK(cudaFreeMipmappedArray(mip));
    CK(cudaFree(dg)); CK(cudaFree(dr));
    fprintf(stderr, "%s written\n", path.c_str());
    return 0;
}
