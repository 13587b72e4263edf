// H200 data for fitting the SFU models (reports/device-math/, the first device call).
//  - windows: one form over a run of inputs (consecutive bit patterns with a stride, or
//    a grid k * 2^-23), raw outputs written to <dir>/w_<name>.bin (uint32 each);
//  - samples: records (op, x, y, lo) read from samples_in.bin, outputs (hi, lo) written
//    to samples_out.bin.
// Build: nvcc -O3 -gencode arch=compute_90,code=sm_90 -o dump dump.cu
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>
#include "sfu_ops.cuh"

#define CK(x)                                                                        \
    do {                                                                             \
        cudaError_t e_ = (x);                                                        \
        if (e_ != cudaSuccess) {                                                     \
            fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
            exit(2);                                                                 \
        }                                                                            \
    } while (0)

template <int OP>
__global__ void kwin(uint32_t start, uint32_t stride, int grid, int neg, uint32_t n, uint32_t* out,
                     unsigned long long* lo_nonzero) {
    uint32_t j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j >= n) return;
    uint32_t x;
    if (grid) {
        float v = (float)(j * stride) * 1.1920928955078125e-07f; /* exact: j*stride < 2^24 */
        x = __float_as_uint(v) | (neg ? 0x80000000u : 0u);
    } else {
        x = start + j * stride;
    }
    uint32_t lo = 0;
    uint32_t r = hw_op(OP, x, 0, 0, &lo);
    if (lo) atomicAdd(lo_nonzero, 1ull);
    out[j] = r;
}

__global__ void ksamples(const uint4* in, uint2* out, uint32_t n) {
    uint32_t j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j >= n) return;
    uint4 s = in[j];
    uint32_t lo = 0, r = 0xdeadbeefu;
    switch (s.x) {
#define CASE(k, name) \
    case k: r = hw_op(k, s.y, s.z, s.w, &lo); break;
        OP_LIST(CASE)
#undef CASE
    }
    out[j] = make_uint2(r, lo);
}

struct Win {
    const char* name;
    int op, grid, neg;
    uint32_t start, stride, count;
};

static const Win WINDOWS[] = {
    {"rcp_m", 4, 0, 0, 0x3f800000u, 1, 1u << 23},
    {"rsq_m", 6, 0, 0, 0x3f800000u, 1, 1u << 24},
    {"ex2_gp", 0, 1, 0, 0, 1, 1u << 23},
    {"ex2_gn", 0, 1, 1, 0, 1, 1u << 23},
    {"lg2_e0", 2, 0, 0, 0x3f800000u, 1, 1u << 23},
    {"lg2_em1", 2, 0, 0, 0x3f000000u, 1, 1u << 23},
    {"ex2_n2", 0, 0, 0, 0xbf800000u, 1, 1u << 23},
    {"ex2h", 19, 0, 0, 0, 1, 1u << 16},
    {"ex2bf", 20, 0, 0, 0, 1, 1u << 16},
    {"tanhh", 21, 0, 0, 0, 1, 1u << 16},
    {"tanhbf", 22, 0, 0, 0, 1, 1u << 16},
    {"rcp64h", 15, 0, 0, 0x3ff00000u, 1, 1u << 20},
    {"rsq64h", 16, 0, 0, 0x3ff00000u, 1, 1u << 21},
    {"sqrt_m", 13, 0, 0, 0x3f800000u, 1, 1u << 24},
    {"sin_e0", 8, 0, 0, 0x3f800000u, 1, 1u << 23},
    {"cos_e0", 10, 0, 0, 0x3f800000u, 1, 1u << 23},
    {"tanh_e0", 12, 0, 0, 0x3f800000u, 1, 1u << 23},
    {"tanh_em1", 12, 0, 0, 0x3f000000u, 1, 1u << 23},
    {"sin_e2", 8, 0, 0, 0x40800000u, 1, 1u << 23},
    {"cos_e2", 10, 0, 0, 0x40800000u, 1, 1u << 23},
    {"lg2_e1", 2, 0, 0, 0x40000000u, 2, 1u << 22},
    {"lg2_em2", 2, 0, 0, 0x3e800000u, 2, 1u << 22},
    {"ex2_n1", 0, 0, 0, 0xbf000000u, 1, 1u << 23},
    {"tanh_lo", 12, 0, 0, 0x30000000u, 64, (0x3e800000u - 0x30000000u) / 64},
    {"tanh_hi", 12, 0, 0, 0x40800000u, 16, (0x41a00000u - 0x40800000u) / 16},
    {"tanh_e1", 12, 0, 0, 0x40000000u, 2, 1u << 22},
    {"tanh_em2", 12, 0, 0, 0x3e800000u, 2, 1u << 22},
    {"sin_e1", 8, 0, 0, 0x40000000u, 2, 1u << 22},
    {"cos_e1", 10, 0, 0, 0x40000000u, 2, 1u << 22},
    {"sin_em1", 8, 0, 0, 0x3f000000u, 2, 1u << 22},
    {"cos_em1", 10, 0, 0, 0x3f000000u, 2, 1u << 22},
};

static void launch(const Win& w, uint32_t* d_out, unsigned long long* d_lo) {
    unsigned blocks = (w.count + 255) / 256;
#define L(k)                                                                                   \
    case k:                                                                                    \
        kwin<k><<<blocks, 256>>>(w.start, w.stride, w.grid, w.neg, w.count, d_out, d_lo);      \
        break;
    switch (w.op) {
        L(0) L(2) L(4) L(6) L(8) L(10) L(12) L(13) L(15) L(16) L(19) L(20) L(21) L(22)
    default:
        fprintf(stderr, "no window kernel for op %d\n", w.op);
        exit(2);
    }
#undef L
    CK(cudaGetLastError());
}

int main(int argc, char** argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: dump DIR (reads DIR/samples_in.bin)\n");
        return 2;
    }
    const char* dir = argv[1];
    cudaDeviceProp p;
    CK(cudaGetDeviceProperties(&p, 0));
    printf("device: %s, sm_%d%d, %d SMs\n", p.name, p.major, p.minor, p.multiProcessorCount);
    uint32_t *d_out;
    unsigned long long* d_lo;
    CK(cudaMalloc(&d_out, (size_t)4 << 24));
    CK(cudaMalloc(&d_lo, 8));
    std::vector<uint32_t> h(1u << 24);
    char path[4096];
    for (const Win& w : WINDOWS) {
        CK(cudaMemset(d_lo, 0, 8));
        launch(w, d_out, d_lo);
        CK(cudaDeviceSynchronize());
        unsigned long long lo_nz = 0;
        CK(cudaMemcpy(&lo_nz, d_lo, 8, cudaMemcpyDeviceToHost));
        CK(cudaMemcpy(h.data(), d_out, (size_t)4 * w.count, cudaMemcpyDeviceToHost));
        snprintf(path, sizeof path, "%s/w_%s.bin", dir, w.name);
        FILE* f = fopen(path, "wb");
        if (!f || fwrite(h.data(), 4, w.count, f) != w.count) {
            fprintf(stderr, "cannot write %s\n", path);
            return 2;
        }
        fclose(f);
        printf("window %-9s op %2d: %u outputs%s\n", w.name, w.op, w.count,
               lo_nz ? " (f64 low words not zero!)" : "");
        if (lo_nz) printf("  low word nonzero in %llu outputs\n", lo_nz);
    }
    snprintf(path, sizeof path, "%s/samples_in.bin", dir);
    FILE* f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "cannot read %s\n", path);
        return 2;
    }
    std::vector<uint4> in;
    uint4 rec;
    while (fread(&rec, 16, 1, f) == 1) in.push_back(rec);
    fclose(f);
    uint32_t n = (uint32_t)in.size();
    uint4* d_in;
    uint2* d_s;
    CK(cudaMalloc(&d_in, 16 * (size_t)n));
    CK(cudaMalloc(&d_s, 8 * (size_t)n));
    CK(cudaMemcpy(d_in, in.data(), 16 * (size_t)n, cudaMemcpyHostToDevice));
    ksamples<<<(n + 255) / 256, 256>>>(d_in, d_s, n);
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    std::vector<uint2> out(n);
    CK(cudaMemcpy(out.data(), d_s, 8 * (size_t)n, cudaMemcpyDeviceToHost));
    snprintf(path, sizeof path, "%s/samples_out.bin", dir);
    f = fopen(path, "wb");
    if (!f || fwrite(out.data(), 8, n, f) != n) {
        fprintf(stderr, "cannot write %s\n", path);
        return 2;
    }
    fclose(f);
    printf("samples: %u records\n", n);
    return 0;
}
