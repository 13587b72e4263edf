// Compares the SFU models (runtime/simtwin_sfu.cpp, linked in) with results recorded on
// the H200. Input: records of six little-endian uint32 (form number, x, y, x's low word,
// result, result's low word); the form numbers are those of scripts/device-math/sfu_ops.cuh.
// Prints one line per form (records, differences, the first differences) and exits 1 if
// any record differs, 2 on bad input.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <stdint.h>
#include <vector>
#include "simtwin/sfu.h"

static float f(uint32_t u) { float x; memcpy(&x, &u, 4); return x; }
static uint32_t u(float x) { uint32_t r; memcpy(&r, &x, 4); return r; }
static double d(uint32_t hi, uint32_t lo) {
    uint64_t b = (uint64_t)hi << 32 | lo;
    double x;
    memcpy(&x, &b, 8);
    return x;
}
static uint64_t ud(double x) { uint64_t r; memcpy(&r, &x, 8); return r; }

/* The model's (result, low word) for form `op`; false for an unknown form. */
static bool model(uint32_t op, uint32_t x, uint32_t y, uint32_t lo, uint32_t* hi_out, uint32_t* lo_out) {
    uint64_t r64 = 0;
    *lo_out = 0;
    switch (op) {
    case 0: *hi_out = u(__simtwin_sfu_ex2_ftz_f32(f(x))); return true;
    case 1: *hi_out = u(__simtwin_sfu_ex2_f32(f(x))); return true;
    case 2: *hi_out = u(__simtwin_sfu_lg2_ftz_f32(f(x))); return true;
    case 3: *hi_out = u(__simtwin_sfu_lg2_f32(f(x))); return true;
    case 4: *hi_out = u(__simtwin_sfu_rcp_ftz_f32(f(x))); return true;
    case 5: *hi_out = u(__simtwin_sfu_rcp_f32(f(x))); return true;
    case 6: *hi_out = u(__simtwin_sfu_rsqrt_ftz_f32(f(x))); return true;
    case 7: *hi_out = u(__simtwin_sfu_rsqrt_f32(f(x))); return true;
    case 8: *hi_out = u(__simtwin_sfu_sin_ftz_f32(f(x))); return true;
    case 9: *hi_out = u(__simtwin_sfu_sin_f32(f(x))); return true;
    case 10: *hi_out = u(__simtwin_sfu_cos_ftz_f32(f(x))); return true;
    case 11: *hi_out = u(__simtwin_sfu_cos_f32(f(x))); return true;
    case 12: *hi_out = u(__simtwin_sfu_tanh_f32(f(x))); return true;
    case 13: *hi_out = u(__simtwin_sfu_sqrt_ftz_f32(f(x))); return true;
    case 14: *hi_out = u(__simtwin_sfu_sqrt_f32(f(x))); return true;
    case 15: r64 = ud(__simtwin_sfu_rcp_ftz_f64(d(x, lo))); break;
    case 16: r64 = ud(__simtwin_sfu_rsqrt_ftz_f64(d(x, lo))); break;
    case 17: r64 = ud(__simtwin_sfu_rsqrt_f64(d(x, lo))); break;
    case 19: *hi_out = __simtwin_sfu_ex2_f16((uint16_t)x); return true;
    case 20: *hi_out = __simtwin_sfu_ex2_bf16((uint16_t)x); return true;
    case 21: *hi_out = __simtwin_sfu_tanh_f16((uint16_t)x); return true;
    case 22: *hi_out = __simtwin_sfu_tanh_bf16((uint16_t)x); return true;
    case 23: *hi_out = __simtwin_sfu_ex2_f16x2(x); return true;
    case 24: *hi_out = __simtwin_sfu_ex2_bf16x2(x); return true;
    case 25: *hi_out = __simtwin_sfu_tanh_f16x2(x); return true;
    case 26: *hi_out = __simtwin_sfu_tanh_bf16x2(x); return true;
    case 30: *hi_out = u(__simtwin_sfu_div_approx_f32(f(x), f(y))); return true;
    case 31: *hi_out = u(__simtwin_sfu_div_approx_ftz_f32(f(x), f(y))); return true;
    case 32: *hi_out = u(__simtwin_sfu_div_full_f32(f(x), f(y))); return true;
    case 33: *hi_out = u(__simtwin_sfu_div_full_ftz_f32(f(x), f(y))); return true;
    default: return false;
    }
    *hi_out = (uint32_t)(r64 >> 32);
    *lo_out = (uint32_t)r64;
    return true;
}

/* The hash of a form's results over every input that scripts/device-math/verify.cu
   prints for the H200: sum over inputs i of mix64((i << 32 | hi) ^ lo * golden). */
static uint64_t mix64(uint64_t z) {
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}
static int exhaustive_hash(uint32_t op) {
    uint64_t n = (op >= 19 && op <= 22) ? 1ull << 16 : 1ull << 32, h = 0;
    for (uint64_t i = 0; i < n; ++i) {
        uint32_t x = (uint32_t)i, lo = op == 17 ? (uint32_t)mix64(x) : 0, hi, lo_out;
        if (!model(op, x, 0, lo, &hi, &lo_out) || op >= 30) {
            fprintf(stderr, "check: form %u has no exhaustive hash (one-operand forms only)\n", op);
            return 2;
        }
        h += mix64((i << 32 | hi) ^ ((uint64_t)lo_out * 0x9e3779b97f4a7c15ull));
    }
    printf("form %2u: %llu inputs, hash %016llx\n", op, (unsigned long long)n, (unsigned long long)h);
    return 0;
}

int main(int argc, char** argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: check RECORDS.bin [FORM...]   (only the listed forms when given)\n"
                        "       check --hash FORM             (the form's hash over every input)\n");
        return 2;
    }
    if (!strcmp(argv[1], "--hash")) return argc == 3 ? exhaustive_hash((uint32_t)atoi(argv[2])) : 2;
    FILE* fp = fopen(argv[1], "rb");
    if (!fp) {
        fprintf(stderr, "check: cannot open %s\n", argv[1]);
        return 2;
    }
    std::map<uint32_t, bool> only;
    for (int i = 2; i < argc; ++i) only[(uint32_t)atoi(argv[i])] = true;
    struct Stat { uint64_t n = 0, bad = 0; };
    std::map<uint32_t, Stat> st;
    uint32_t r[6];
    size_t got;
    while ((got = fread(r, 4, 6, fp)) == 6) {
        if (!only.empty() && !only.count(r[0])) continue;
        uint32_t hi, lo;
        if (!model(r[0], r[1], r[2], r[3], &hi, &lo)) {
            fprintf(stderr, "check: unknown form %u in %s\n", r[0], argv[1]);
            return 2;
        }
        Stat& s = st[r[0]];
        s.n++;
        if (hi != r[4] || lo != r[5]) {
            if (s.bad++ < 4)
                printf("  form %u x=%08x y=%08x lo=%08x: H200 %08x:%08x model %08x:%08x\n", r[0], r[1], r[2],
                       r[3], r[4], r[5], hi, lo);
        }
    }
    fclose(fp);
    if (got != 0) {
        fprintf(stderr, "check: %s is not a whole number of 24-byte records\n", argv[1]);
        return 2;
    }
    uint64_t bad = 0;
    for (auto& [op, s] : st) {
        printf("form %2u: %llu records, %llu differences\n", op, (unsigned long long)s.n, (unsigned long long)s.bad);
        bad += s.bad;
    }
    return bad ? 1 : 0;
}
