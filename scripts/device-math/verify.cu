// The exhaustive comparison on the H200 (reports/device-math/): every SFU form
// as one inline-asm instruction against the model of kernels-host/runtime/simtwin_sfu.cpp
// compiled for the device (SIMTWIN_SFU_DEVICE: integer arithmetic and correctly rounded
// IEEE operations only, so it computes there what it computes on the host), over every
// input: 2^32 bit patterns for single and packed forms, 2^16 for f16/bf16, the 2^32 high
// words for f64 forms (low word 0; rsqrt.approx.f64 a hash of the high word), and for
// division every divisor against 16 dividends plus every dividend against 16 divisors.
// Prints per form: inputs, differences, the first differences, and a hash of the H200's
// outputs (sum over inputs i of mix64(i << 32 | out) with the low word folded in, the hash
// that kernels-host's ignored exhaustive test recomputes on the host).
// With a second argument, also dumps tanh.approx.f32 over [2^-8, 32) there
// (w_tanh_eNNN.bin, the input of fit_tables.py's tanh tables).
// Build: nvcc -O3 --fmad=false -gencode arch=compute_90,code=sm_90 -I<kernels-host/include> -o verify verify.cu
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>
#define SIMTWIN_SFU_DEVICE
#include "simtwin_sfu.cpp"
#include "sfu_ops.cuh"

#define CK(x)                                                                        \
    do {                                                                             \
        cudaError_t e_ = (x);                                                        \
        if (e_ != cudaSuccess) {                                                     \
            fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
            exit(2);                                                                 \
        }                                                                            \
    } while (0)

__host__ __device__ inline uint64_t mix64(uint64_t z) {
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}
__host__ __device__ inline uint64_t out_hash(uint64_t i, uint32_t hi, uint32_t lo) {
    return mix64((i << 32 | hi) ^ ((uint64_t)lo * 0x9e3779b97f4a7c15ull));
}
__device__ inline uint32_t lo_word_of(uint32_t hi) { return (uint32_t)mix64(hi); }

__device__ inline float F(uint32_t u) { return __uint_as_float(u); }
__device__ inline uint32_t U(float x) { return __float_as_uint(x); }
__device__ inline double D(uint32_t hi, uint32_t lo) { return __hiloint2double((int)hi, (int)lo); }

/* The model of form OP; *lo_out the low word of f64 results. */
template <int OP>
__device__ __forceinline__ uint32_t model_op(uint32_t x, uint32_t y, uint32_t lo, uint32_t* lo_out) {
    double r;
    *lo_out = 0;
    switch (OP) {
    case 0: return U(__simtwin_sfu_ex2_ftz_f32(F(x)));
    case 1: return U(__simtwin_sfu_ex2_f32(F(x)));
    case 2: return U(__simtwin_sfu_lg2_ftz_f32(F(x)));
    case 3: return U(__simtwin_sfu_lg2_f32(F(x)));
    case 4: return U(__simtwin_sfu_rcp_ftz_f32(F(x)));
    case 5: return U(__simtwin_sfu_rcp_f32(F(x)));
    case 6: return U(__simtwin_sfu_rsqrt_ftz_f32(F(x)));
    case 7: return U(__simtwin_sfu_rsqrt_f32(F(x)));
    case 8: return U(__simtwin_sfu_sin_ftz_f32(F(x)));
    case 9: return U(__simtwin_sfu_sin_f32(F(x)));
    case 10: return U(__simtwin_sfu_cos_ftz_f32(F(x)));
    case 11: return U(__simtwin_sfu_cos_f32(F(x)));
    case 12: return U(__simtwin_sfu_tanh_f32(F(x)));
    case 13: return U(__simtwin_sfu_sqrt_ftz_f32(F(x)));
    case 14: return U(__simtwin_sfu_sqrt_f32(F(x)));
    case 15: r = __simtwin_sfu_rcp_ftz_f64(D(x, lo)); break;
    case 16: r = __simtwin_sfu_rsqrt_ftz_f64(D(x, lo)); break;
    case 17: r = __simtwin_sfu_rsqrt_f64(D(x, lo)); break;
    case 19: return __simtwin_sfu_ex2_f16((uint16_t)x);
    case 20: return __simtwin_sfu_ex2_bf16((uint16_t)x);
    case 21: return __simtwin_sfu_tanh_f16((uint16_t)x);
    case 22: return __simtwin_sfu_tanh_bf16((uint16_t)x);
    case 23: return __simtwin_sfu_ex2_f16x2(x);
    case 24: return __simtwin_sfu_ex2_bf16x2(x);
    case 25: return __simtwin_sfu_tanh_f16x2(x);
    case 26: return __simtwin_sfu_tanh_bf16x2(x);
    case 30: return U(__simtwin_sfu_div_approx_f32(F(x), F(y)));
    case 31: return U(__simtwin_sfu_div_approx_ftz_f32(F(x), F(y)));
    case 32: return U(__simtwin_sfu_div_full_f32(F(x), F(y)));
    case 33: return U(__simtwin_sfu_div_full_ftz_f32(F(x), F(y)));
    default: return 0xdeadbeefu;
    }
    *lo_out = (uint32_t)__double2loint(r);
    return (uint32_t)__double2hiint(r);
}

struct Diff { uint32_t x, y, lo, hw, hwlo, md, mdlo; };
struct Res {
    unsigned long long n, diffs, hash;
    Diff first[16];
};

__device__ inline void record(Res* res, uint32_t x, uint32_t y, uint32_t lo, uint32_t hw, uint32_t hwlo, uint32_t md,
                              uint32_t mdlo) {
    unsigned long long k = atomicAdd(&res->diffs, 1ull);
    if (k < 16) res->first[k] = Diff{x, y, lo, hw, hwlo, md, mdlo};
}

/* One-operand form over inputs [0, n); `f64` forms take x as the high word. */
template <int OP>
__global__ void kver(uint64_t n, Res* res, bool hash_only, int lo_mode) {
    uint64_t h = 0, cnt = 0;
    for (uint64_t i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; i < n; i += (uint64_t)gridDim.x * blockDim.x) {
        uint32_t x = (uint32_t)i, hwlo = 0, mdlo = 0;
        uint32_t lo = lo_mode == 1 ? lo_word_of(x) : lo_mode == 2 ? 0xffffffffu : 0;
        uint32_t hw = hw_op(OP, x, 0, lo, &hwlo);
        h += out_hash(i, hw, hwlo);
        cnt++;
        if (hash_only) continue;
        uint32_t md = model_op<OP>(x, 0, lo, &mdlo);
        if (md != hw || mdlo != hwlo) record(res, x, 0, lo, hw, hwlo, md, mdlo);
    }
    atomicAdd(&res->hash, (unsigned long long)h);
    atomicAdd(&res->n, (unsigned long long)cnt);
}

/* Division: every 32-bit `i` as divisor against dividends vals[], or as dividend against
   divisors vals[]. */
template <int OP>
__global__ void kdiv(const uint32_t* vals, int nv, bool i_is_divisor, Res* res) {
    uint64_t cnt = 0;
    for (uint64_t i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; i < (1ull << 32);
         i += (uint64_t)gridDim.x * blockDim.x) {
        for (int k = 0; k < nv; ++k) {
            uint32_t x = i_is_divisor ? vals[k] : (uint32_t)i, y = i_is_divisor ? (uint32_t)i : vals[k], l;
            uint32_t hw = hw_op(OP, x, y, 0, &l), md = model_op<OP>(x, y, 0, &l);
            if (md != hw) record(res, x, y, 0, hw, 0, md, 0);
            cnt++;
        }
    }
    atomicAdd(&res->n, (unsigned long long)cnt);
}

/* tanh.approx.f32 over bit patterns [start, start + n). */
__global__ void ktanh(uint32_t start, uint32_t n, uint32_t* out) {
    uint32_t j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j < n) out[j] = hw_op(12, start + j, 0, 0, nullptr);
}

static const char* name_of(int op) {
    switch (op) {
#define N(k, s) \
    case k: return s;
        OP_LIST(N)
#undef N
    }
    return "?";
}

static void report(FILE* out, int op, const char* what, Res* d_res, bool hash_only) {
    Res r;
    CK(cudaDeviceSynchronize());
    CK(cudaMemcpy(&r, d_res, sizeof r, cudaMemcpyDeviceToHost));
    fprintf(out, "%-24s %-34s inputs %llu differences %s hash %016llx\n", name_of(op), what, r.n,
            hash_only ? "-" : std::to_string(r.diffs).c_str(), r.hash);
    for (unsigned long long k = 0; k < r.diffs && k < 16 && !hash_only; ++k)
        fprintf(out, "    x=%08x y=%08x lo=%08x H200=%08x:%08x model=%08x:%08x\n", r.first[k].x, r.first[k].y,
                r.first[k].lo, r.first[k].hw, r.first[k].hwlo, r.first[k].md, r.first[k].mdlo);
    fflush(out);
}

template <int OP>
static void one(FILE* out, uint64_t n, const char* what, Res* d_res, bool hash_only = false, int lo_mode = 0) {
    CK(cudaMemset(d_res, 0, sizeof(Res)));
    kver<OP><<<132 * 16, 256>>>(n, d_res, hash_only, lo_mode);
    CK(cudaGetLastError());
    report(out, OP, what, d_res, hash_only);
}

template <int OP>
static void div2(FILE* out, const uint32_t* d_vals, int nv, Res* d_res) {
    for (int side = 0; side < 2; ++side) {
        CK(cudaMemset(d_res, 0, sizeof(Res)));
        kdiv<OP><<<132 * 16, 256>>>(d_vals + side * nv, nv, side == 0, d_res);
        CK(cudaGetLastError());
        report(out, OP, side == 0 ? "every divisor x 16 dividends" : "every dividend x 16 divisors", d_res, false);
    }
}

int main(int argc, char** argv) {
    if (argc != 2 && argc != 3) {
        fprintf(stderr, "usage: verify REPORT.txt [TANH_DIR]\n");
        return 2;
    }
    FILE* out = fopen(argv[1], "w");
    if (!out) {
        fprintf(stderr, "cannot write %s\n", argv[1]);
        return 2;
    }
    cudaDeviceProp p;
    CK(cudaGetDeviceProperties(&p, 0));
    fprintf(out, "device: %s, sm_%d%d, %d SMs\n", p.name, p.major, p.minor, p.multiProcessorCount);
    Res* d_res;
    CK(cudaMalloc(&d_res, sizeof(Res)));
    const uint64_t ALL = 1ull << 32, H = 1ull << 16;
    one<0>(out, ALL, "every pattern", d_res);
    one<1>(out, ALL, "every pattern", d_res);
    one<2>(out, ALL, "every pattern", d_res);
    one<3>(out, ALL, "every pattern", d_res);
    one<4>(out, ALL, "every pattern", d_res);
    one<5>(out, ALL, "every pattern", d_res);
    one<6>(out, ALL, "every pattern", d_res);
    one<7>(out, ALL, "every pattern", d_res);
    one<8>(out, ALL, "every pattern", d_res);
    one<9>(out, ALL, "every pattern", d_res);
    one<10>(out, ALL, "every pattern", d_res);
    one<11>(out, ALL, "every pattern", d_res);
    one<12>(out, ALL, "every pattern", d_res);
    one<13>(out, ALL, "every pattern", d_res);
    one<14>(out, ALL, "every pattern", d_res);
    one<15>(out, ALL, "every high word, low word 0", d_res);
    one<16>(out, ALL, "every high word, low word 0", d_res);
    one<17>(out, ALL, "every high word, low word 0", d_res);
    one<17>(out, ALL, "every high word, low word mix(hi)", d_res, false, 1);
    one<17>(out, ALL, "every high word, low word ffffffff", d_res, false, 2);
    one<19>(out, H, "every pattern", d_res);
    one<20>(out, H, "every pattern", d_res);
    one<21>(out, H, "every pattern", d_res);
    one<22>(out, H, "every pattern", d_res);
    one<23>(out, ALL, "every pattern", d_res);
    one<24>(out, ALL, "every pattern", d_res);
    one<25>(out, ALL, "every pattern", d_res);
    one<26>(out, ALL, "every pattern", d_res);
    /* 16 dividends, then 16 divisors: zeros, infinities, NaN, subnormals, extremes, and
       values whose quotients reach overflow, the subnormal range and the ftz boundary. */
    const uint32_t vals[32] = {0x00000000, 0x80000000, 0x7f800000, 0x7fc00000, 0x00000001, 0x807fffff, 0x00800000,
                               0x7f7fffff, 0x3f800000, 0xbfc00001, 0x40490fdb, 0x0ca5b3e1, 0xf2345678, 0x00c00000,
                               0x7e800001, 0x3eaaaaab,
                               0x00000000, 0x80000000, 0xff800000, 0x7fc00000, 0x00000001, 0x807fffff, 0x00800000,
                               0x7f7fffff, 0x3f800000, 0xbfc00001, 0x7e800000, 0x7e800001, 0x00400000, 0x3f7fffff,
                               0x0d000000, 0x72345678};
    uint32_t* d_vals;
    CK(cudaMalloc(&d_vals, sizeof vals));
    CK(cudaMemcpy(d_vals, vals, sizeof vals, cudaMemcpyHostToDevice));
    div2<30>(out, d_vals, 16, d_res);
    div2<31>(out, d_vals, 16, d_res);
    div2<32>(out, d_vals, 16, d_res);
    div2<33>(out, d_vals, 16, d_res);
    fclose(out);
    if (argc < 3) return 0;
    /* tanh.approx.f32 over [2^-8, 32), one file per exponent */
    uint32_t* d_t;
    CK(cudaMalloc(&d_t, 4u << 23));
    std::vector<uint32_t> ht(1u << 23);
    for (uint32_t e = 119; e < 132; ++e) {
        ktanh<<<(1u << 23) / 256, 256>>>(e << 23, 1u << 23, d_t);
        CK(cudaGetLastError());
        CK(cudaMemcpy(ht.data(), d_t, 4u << 23, cudaMemcpyDeviceToHost));
        char path[4096];
        snprintf(path, sizeof path, "%s/w_tanh_e%u.bin", argv[2], e);
        FILE* f = fopen(path, "wb");
        if (!f || fwrite(ht.data(), 4, 1u << 23, f) != 1u << 23) {
            fprintf(stderr, "cannot write %s\n", path);
            return 2;
        }
        fclose(f);
        printf("window tanh_e%u\n", e);
    }
    return 0;
}
