// libdevice on the host against the device, over every input: each function below is
// evaluated by the GPU (nvcc's inlined libdevice, this binary's flags) and by the host
// (kernels-host's translated libdevice of the same flag set, linked in as
// __simtwin_ld_NAME), chunk by chunk, and compared bit for bit on the machine's cores.
// Only the counts, a hash of the device's results and the first differing inputs leave
// the machine.
//
//   nvcc -O3 -gencode arch=compute_90,code=sm_90 [FLAGS] -o verify libdevice_verify.cu \
//        <the flag set's objects from kernels-host's libdevice cache> -Xcompiler -pthread
//   ./verify [--samples FILE] [NAME...]
//       default: all; one-argument functions over all 2^32 patterns, two-argument ones over
//       a 65536 x 65536 grid (see grid()); --samples also writes the device's results for
//       64 inputs of each function (sample_inputs()): kernels-host's CI compares twins with
//       them (kernels-host/tests/data/libdevice-h200-*.txt)
#include <cstdio>
#include <cstdint>
#include <cstring>
#include <cstdlib>
#include <thread>
#include <vector>
#include <atomic>
#include <string>
#include <chrono>

#define LIST1(X) X(expf) X(exp2f) X(log2f) X(logf) X(sinf) X(cosf) X(rsqrtf) X(__expf) X(__log2f) X(__logf) \
    X(__sinf) X(__cosf) X(__tanf) X(exp10f) X(log10f) X(tanf) X(tanhf) X(erff) X(cbrtf) X(atanf) X(log1pf) X(expm1f) \
    X(asinf) X(sinhf) X(lgammaf) X(sqrtf)
#define LIST2(X) X(powf) X(__powf) X(__fdividef) X(atan2f) X(hypotf)

// The per-library runtime the translated code calls reads the runtime table of a kernel
// library; this program has none (the functions need none).
namespace __simtwin { struct simtwin_runtime_t; const simtwin_runtime_t *rt = nullptr; }

extern "C" {
#define DECL1(n) float __simtwin_ld_##n(float);
#define DECL2(n) float __simtwin_ld_##n(float, float);
LIST1(DECL1) LIST2(DECL2)
}

__host__ __device__ static inline uint32_t grid(uint32_t h) {
    // 65536 values per operand: every sign, exponent and top mantissa bits; the low 16
    // bits zero for even h (so 0, 1, 2, inf, NaN and every power of two are there),
    // a hash of h for odd h.
    uint32_t m = h * 0x9e37u; m ^= m >> 7; m *= 0x2f6bu;
    return (h << 16) | ((h & 1) ? (m & 0xffffu) : 0u);
}
__host__ __device__ static inline float bf(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }
__host__ __device__ static inline uint32_t fb(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }

#define K1(n) __global__ void k1_##n(uint32_t start, uint32_t cnt, uint32_t *out) { \
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; if (i < cnt) out[i] = fb(n(bf(start + i))); }
#define K2(n) __global__ void k2_##n(uint32_t start, uint32_t cnt, uint32_t *out) { \
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; if (i < cnt) { uint32_t v = start + i; \
    out[i] = fb(n(bf(grid(v >> 16)), bf(grid(v & 0xffffu)))); } }
LIST1(K1) LIST2(K2)

#define S1(n) if (fi == idx++) r = fb(n(bf(x[i])));
#define S2(n) if (fi == idx++) r = fb(n(bf(x[i]), bf(y[i])));
__global__ void k_sample(int fi, const uint32_t *x, const uint32_t *y, uint32_t *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    int idx = 0; uint32_t r = 0;
    LIST1(S1) LIST2(S2)
    out[i] = r;
}

typedef void (*kern_t)(uint32_t, uint32_t, uint32_t *);
struct Fn { const char *name; int args; kern_t k; float (*h1)(float); float (*h2)(float, float); };
#define E1(n) {#n, 1, k1_##n, __simtwin_ld_##n, nullptr},
#define E2(n) {#n, 2, k2_##n, nullptr, __simtwin_ld_##n},
static Fn FNS[] = {LIST1(E1) LIST2(E2)};

__host__ __device__ static inline uint64_t mix(uint64_t x) {
    x += 0x9e3779b97f4a7c15ull; x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull; return x ^ (x >> 31);
}

// The sample inputs: specials, then hashed patterns; for two operands, pairs.
static void sample_inputs(int k, uint32_t *x, uint32_t *y) {
    static const uint32_t special[] = {0x00000000u, 0x80000000u, 0x3f800000u, 0xbf800000u, 0x3f000000u, 0x40000000u,
        0x7f800000u, 0xff800000u, 0x7fc00000u, 0x00000001u, 0x007fffffu, 0x00800000u, 0x7f7fffffu, 0x3fc90fdbu,
        0x40490fdbu, 0x42b17218u, 0xc2ce8ed0u, 0x42c80000u, 0xc2c80000u, 0x1e3ce508u};
    const int ns = sizeof special / sizeof special[0];
    *x = k < ns ? special[k] : (uint32_t)mix(0x51ed2700u + k);
    *y = k < ns ? special[(k * 7 + 3) % ns] : (uint32_t)mix(0x7a3e9100u + k);
}
__global__ void k_sample(int fi, const uint32_t *x, const uint32_t *y, uint32_t *out, int n);

int main(int argc, char **argv) {
    const uint32_t CHUNK = 1u << 28;
    uint32_t *d = nullptr, *h = nullptr;
    if (cudaMalloc(&d, (size_t)CHUNK * 4) != cudaSuccess || cudaMallocHost(&h, (size_t)CHUNK * 4) != cudaSuccess) {
        fprintf(stderr, "no device memory\n"); return 2;
    }
    unsigned nt = std::thread::hardware_concurrency(); if (nt == 0) nt = 1;
    cudaDeviceProp p; cudaGetDeviceProperties(&p, 0);
    printf("device %s, host threads %u\n", p.name, nt);
    int status = 0;
    const char *samples = nullptr;
    std::vector<const char *> names;
    for (int a = 1; a < argc; ++a) {
        if (!strcmp(argv[a], "--samples") && a + 1 < argc) samples = argv[++a];
        else names.push_back(argv[a]);
    }
    if (samples) {
        FILE *o = fopen(samples, "w");
        if (!o) { perror(samples); return 2; }
        uint32_t hx[64], hy[64], hr[64], *dx, *dy, *dr;
        cudaMalloc(&dx, sizeof hx); cudaMalloc(&dy, sizeof hy); cudaMalloc(&dr, sizeof hr);
        fprintf(o, "# function x [y] device-result (hex bit patterns), %s, libdevice_verify.cu\n", p.name);
        for (int fi = 0; fi < (int)(sizeof FNS / sizeof FNS[0]); ++fi) {
            for (int k = 0; k < 64; ++k) sample_inputs(k, &hx[k], &hy[k]);
            if (FNS[fi].args == 2) for (int k = 20; k < 64; ++k) { hx[k] = grid(hx[k] >> 16); hy[k] = grid(hy[k] >> 16); }
            cudaMemcpy(dx, hx, sizeof hx, cudaMemcpyHostToDevice); cudaMemcpy(dy, hy, sizeof hy, cudaMemcpyHostToDevice);
            k_sample<<<1, 64>>>(fi, dx, dy, dr, 64);
            cudaMemcpy(hr, dr, sizeof hr, cudaMemcpyDeviceToHost);
            for (int k = 0; k < 64; ++k) {
                if (FNS[fi].args == 1) fprintf(o, "%s %08x %08x\n", FNS[fi].name, hx[k], hr[k]);
                else fprintf(o, "%s %08x %08x %08x\n", FNS[fi].name, hx[k], hy[k], hr[k]);
            }
        }
        fclose(o);
    }
    for (const Fn &f : FNS) {
        if (!names.empty()) { bool want = false; for (const char *n : names) want |= !strcmp(n, f.name); if (!want) continue; }
        auto t0 = std::chrono::steady_clock::now();
        std::atomic<uint64_t> diffs{0}, nan_diffs{0}, hash{0};
        std::vector<uint32_t> first; first.reserve(32); std::atomic<int> lock{0};
        for (uint64_t lo = 0; lo < (1ull << 32); lo += CHUNK) {
            f.k<<<CHUNK / 256, 256>>>((uint32_t)lo, CHUNK, d);
            if (cudaMemcpy(h, d, (size_t)CHUNK * 4, cudaMemcpyDeviceToHost) != cudaSuccess) { fprintf(stderr, "%s: kernel failed\n", f.name); return 2; }
            std::vector<std::thread> ts;
            for (unsigned t = 0; t < nt; ++t) ts.emplace_back([&, t] {
                uint64_t a = (uint64_t)CHUNK * t / nt, b = (uint64_t)CHUNK * (t + 1) / nt, dd = 0, nd = 0, hh = 0;
                for (uint64_t i = a; i < b; ++i) {
                    uint32_t v = (uint32_t)(lo + i), dev = h[i];
                    uint32_t host = f.args == 1 ? fb(f.h1(bf(v))) : fb(f.h2(bf(grid(v >> 16)), bf(grid(v & 0xffffu))));
                    hh ^= mix(((uint64_t)v << 32) | dev);
                    if (host != dev) {
                        ++dd;
                        if ((host & 0x7fffffffu) > 0x7f800000u && (dev & 0x7fffffffu) > 0x7f800000u) ++nd;
                        if (first.size() < 8) { while (lock.exchange(1)) {} if (first.size() < 8) { first.push_back(v); first.push_back(dev); first.push_back(host); } lock = 0; }
                    }
                }
                diffs += dd; nan_diffs += nd; hash ^= hh;
            });
            for (auto &t : ts) t.join();
        }
        double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        printf("%-12s %s inputs 4294967296 differences %llu (NaN payload only %llu) device-hash %016llx %.1f s\n", f.name,
               f.args == 1 ? "every-pattern" : "grid-65536^2", (unsigned long long)diffs.load(), (unsigned long long)nan_diffs.load(),
               (unsigned long long)hash.load(), s);
        for (size_t i = 0; i + 2 < first.size(); i += 3)
            printf("  input %08x device %08x host %08x\n", first[i], first[i + 1], first[i + 2]);
        fflush(stdout);
        if (diffs) status = 1;
    }
    return status;
}
