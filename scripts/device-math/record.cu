// The H200's record of libdevice functions for `parity replay --device-math`: each function
// below is evaluated by the GPU (nvcc's inlined libdevice, this binary's flags) over every
// input index v of 2^32 and only a hash per block of inputs leaves the machine, plus the
// device's results on one window of 4096 inputs for the functions named with --window.
//
//   nvcc -O3 -gencode arch=compute_90,code=sm_90 [FLAGS] -o record record.cu
//   ./record DIR [--fine NAME...] [--window NAME=0xSTART ...] [--coarse-shift S]
//
// Input index v: one-operand functions take the float with bits v (every pattern: both
// signs, zeros, subnormals, infinities, every NaN); two-operand ones take the pair
// (grid(v >> 16), grid(v & 0xffff)), the 65536 x 65536 grid of libdevice_verify.cu.
//
// Hash of a block: the XOR over its inputs of mix(((uint64_t)v << 32) | result), mix the
// splitmix64 finaliser (the same as libdevice_verify.cu's, so the XOR over all blocks is
// that program's "device-hash"). Functions given with --fine: blocks of 2^16 inputs, the
// low 32 bits of each hash (65536 x 4 bytes); the others: blocks of 2^S inputs (default
// S = 20), 64-bit hashes. Files: DIR/NAME.blocks (little-endian), DIR/NAME.window (4096
// little-endian results from the window's start), DIR/manifest.txt (one line a function:
// the granularity, the whole-range hash, the window).
#include <cstdio>
#include <cstdint>
#include <cstring>
#include <cstdlib>
#include <string>
#include <vector>

#define LIST1(X) X(expf) X(exp2f) X(log2f) X(logf) X(sinf) X(cosf) X(rsqrtf) X(__expf) X(__log2f) X(__logf) \
    X(__sinf) X(__cosf) X(__tanf) X(exp10f) X(log10f) X(tanf) X(tanhf) X(erff) X(cbrtf) X(atanf) X(log1pf) X(expm1f) \
    X(asinf) X(sinhf) X(lgammaf) X(sqrtf)
#define LIST2(X) X(powf) X(__powf) X(__fdividef) X(atan2f) X(hypotf)

__host__ __device__ static inline uint32_t grid(uint32_t h) {
    uint32_t m = h * 0x9e37u; m ^= m >> 7; m *= 0x2f6bu;
    return (h << 16) | ((h & 1) ? (m & 0xffffu) : 0u);
}
__host__ __device__ static inline float bf(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }
__host__ __device__ static inline uint32_t fb(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }
__host__ __device__ static inline uint64_t mix(uint64_t x) {
    x += 0x9e3779b97f4a7c15ull; x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull; return x ^ (x >> 31);
}

// One CUDA block of 256 threads per block of 2^16 inputs: out[b] = the block's hash.
#define EV1(n) fb(n(bf(v)))
#define EV2(n) fb(n(bf(grid(v >> 16)), bf(grid(v & 0xffffu))))
#define HK(n, ev) __global__ void h_##n(uint64_t *out) { \
    __shared__ unsigned long long acc; if (threadIdx.x == 0) acc = 0; __syncthreads(); \
    uint64_t hh = 0; \
    for (uint32_t k = 0; k < 256; ++k) { uint32_t v = (blockIdx.x << 16) | (k << 8) | threadIdx.x; hh ^= mix(((uint64_t)v << 32) | ev(n)); } \
    for (int o = 16; o; o >>= 1) hh ^= __shfl_xor_sync(0xffffffffu, hh, o); \
    if ((threadIdx.x & 31) == 0) atomicXor(&acc, (unsigned long long)hh); __syncthreads(); \
    if (threadIdx.x == 0) out[blockIdx.x] = acc; } \
    __global__ void w_##n(uint32_t start, uint32_t *out) { uint32_t v = start + blockIdx.x * blockDim.x + threadIdx.x; \
    out[blockIdx.x * blockDim.x + threadIdx.x] = ev(n); }
#define HK1(n) HK(n, EV1)
#define HK2(n) HK(n, EV2)
LIST1(HK1) LIST2(HK2)

struct Fn { const char *name; int args; void (*h)(uint64_t *); void (*w)(uint32_t, uint32_t *); };
#define E1(n) {#n, 1, h_##n, w_##n},
#define E2(n) {#n, 2, h_##n, w_##n},
static Fn FNS[] = {LIST1(E1) LIST2(E2)};

static bool write_le(const std::string &path, const void *data, size_t bytes) {
    FILE *f = fopen(path.c_str(), "wb");
    if (!f) { perror(path.c_str()); return false; }
    bool ok = fwrite(data, 1, bytes, f) == bytes; // x86-64 and the GPU are little-endian
    return fclose(f) == 0 && ok;
}

int main(int argc, char **argv) {
    if (argc < 2) { fprintf(stderr, "usage: record DIR [--fine NAME...] [--window NAME=0xSTART ...] [--coarse-shift S]\n"); return 2; }
    std::string dir = argv[1];
    std::vector<std::string> fine; std::vector<std::pair<std::string, uint32_t>> windows;
    int shift = 20, mode = 0;
    for (int a = 2; a < argc; ++a) {
        std::string s = argv[a];
        if (s == "--fine") mode = 1;
        else if (s == "--window") mode = 2;
        else if (s == "--coarse-shift" && a + 1 < argc) { shift = atoi(argv[++a]); mode = 0; }
        else if (mode == 1) fine.push_back(s);
        else if (mode == 2 && s.find('=') != std::string::npos) windows.push_back({s.substr(0, s.find('=')), (uint32_t)strtoul(s.c_str() + s.find('=') + 1, nullptr, 0)});
        else { fprintf(stderr, "record: bad argument %s\n", s.c_str()); return 2; }
    }
    if (shift < 16 || shift > 32) { fprintf(stderr, "record: --coarse-shift must be 16..32\n"); return 2; }
    cudaDeviceProp p; if (cudaGetDeviceProperties(&p, 0) != cudaSuccess) { fprintf(stderr, "record: no device\n"); return 2; }
    int drv = 0; cudaDriverGetVersion(&drv);
    uint64_t *d = nullptr; uint32_t *dw = nullptr;
    if (cudaMalloc(&d, 65536 * 8) != cudaSuccess || cudaMalloc(&dw, 4096 * 4) != cudaSuccess) { fprintf(stderr, "record: no device memory\n"); return 2; }
    std::vector<uint64_t> h(65536);
    FILE *m = fopen((dir + "/manifest.txt").c_str(), "w");
    if (!m) { perror("manifest.txt"); return 2; }
    fprintf(m, "# parity replay --device-math record: %s (driver API %d), scripts/device-math/record.cu\n", p.name, drv);
    fprintf(m, "# name args block_shift hash_bits total_hash64 [window_start window_len]\n");
    for (const Fn &f : FNS) {
        cudaEvent_t e0, e1; cudaEventCreate(&e0); cudaEventCreate(&e1); cudaEventRecord(e0);
        f.h<<<65536, 256>>>(d);
        cudaEventRecord(e1);
        if (cudaMemcpy(h.data(), d, 65536 * 8, cudaMemcpyDeviceToHost) != cudaSuccess) { fprintf(stderr, "%s: kernel failed\n", f.name); return 2; }
        float ms = 0; cudaEventElapsedTime(&ms, e0, e1);
        uint64_t total = 0; for (uint64_t x : h) total ^= x;
        bool is_fine = false; for (auto &n : fine) is_fine |= n == f.name;
        int bs = is_fine ? 16 : shift, bits = is_fine ? 32 : 64;
        std::vector<uint8_t> bytes;
        if (is_fine) { for (uint64_t x : h) for (int k = 0; k < 4; ++k) bytes.push_back((uint8_t)(x >> (8 * k))); }
        else {
            for (size_t b = 0; b < ((size_t)1 << (32 - bs)); ++b) {
                uint64_t x = 0; for (size_t j = 0; j < ((size_t)1 << (bs - 16)); ++j) x ^= h[(b << (bs - 16)) + j];
                for (int k = 0; k < 8; ++k) bytes.push_back((uint8_t)(x >> (8 * k)));
            }
        }
        if (!write_le(dir + "/" + f.name + ".blocks", bytes.data(), bytes.size())) return 2;
        fprintf(m, "%s %d %d %d %016llx", f.name, f.args, bs, bits, (unsigned long long)total);
        for (auto &w : windows) if (w.first == f.name) {
            std::vector<uint32_t> hw(4096);
            f.w<<<16, 256>>>(w.second, dw);
            if (cudaMemcpy(hw.data(), dw, 4096 * 4, cudaMemcpyDeviceToHost) != cudaSuccess) { fprintf(stderr, "%s: window failed\n", f.name); return 2; }
            if (!write_le(dir + "/" + f.name + ".window", hw.data(), 4096 * 4)) return 2;
            fprintf(m, " %08x 4096", w.second);
        }
        fprintf(m, "\n");
        printf("%-12s total %016llx  %.1f ms\n", f.name, (unsigned long long)total, ms);
        fflush(stdout);
    }
    fclose(m);
    return 0;
}
