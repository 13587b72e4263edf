// Prototype (fourteenth session): motion_cuda's kernel (VMAF integer_motion, 8 bpc, 16x16
// blocks) as explicit 16-lane vectors (GCC vector extensions, AVX-512 gathers), against the
// same computation one thread at a time. Not simtwin code: a measurement of what a SIMD
// form of the loop path could reach. Build: g++ -O2 -std=c++17 -march=native -fwrapv.
// Run: ./vector_form [reps] [gather]  ("gather": every load as a gather, no contiguity test)
#include <immintrin.h>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <chrono>
#include <vector>
#include <cstring>
static uint16_t filter_d[5] = {3571, 16004, 26386, 16004, 3571};
static int filter_width_d = 5, radius_d = 2;
static bool contiguous_loads = true;  // main: argv[2] == "gather" turns it off
typedef int32_t vi __attribute__((vector_size(64)));
typedef uint32_t vu __attribute__((vector_size(64)));
struct Args { const uint8_t *src; uint16_t *blur; const uint16_t *prev; uint64_t *sad; unsigned w, h; long stride, bstride; };
static inline vi vabs(vi v) { return v < 0 ? -v : v; }
static inline vi vmirror(vi idx, int sup) { vi out = vabs(idx); return out < sup ? out : (sup - (out - sup + 1)); }
// a byte per lane, read as the aligned 32-bit word that holds it (never crosses a page)
static inline vu gather_u8(const uint8_t *base, vi off, vi mask) {
    // consecutive offsets under a full mask: one contiguous load (checked at run time per vector)
    vi lane; for (int l = 0; l < 16; ++l) lane[l] = l;
    if (contiguous_loads && _mm512_cmpeq_epi32_mask((__m512i)off, (__m512i)(off[0] + lane)) == 0xffff && _mm512_test_epi32_mask((__m512i)mask, (__m512i)mask) == 0xffff)
        return (vu)_mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *)(base + off[0])));
    __m512i o = (__m512i)off;
    __m512i addr_lo = _mm512_and_si512(o, _mm512_set1_epi32(~3));
    __mmask16 k = _mm512_test_epi32_mask((__m512i)mask, (__m512i)mask);
    __m512i w = _mm512_mask_i32gather_epi32(_mm512_setzero_si512(), k, addr_lo, base, 1);
    __m512i sh = _mm512_slli_epi32(_mm512_and_si512(o, _mm512_set1_epi32(3)), 3);
    return (vu)_mm512_and_si512(_mm512_srlv_epi32(w, sh), _mm512_set1_epi32(255));
}
__attribute__((noinline)) void vec_block(const Args &a, unsigned bx, unsigned by) {
    for (unsigned half = 0; half < 16; ++half) {   // 16 lanes = one row of the block (half a warp)
        vi lane; for (int l = 0; l < 16; ++l) lane[l] = l;
        vi X = (int)(bx * 16) + lane, Y = (vi){} + (int)(by * 16 + half);
        vi M = ((vu)X < a.w) & ((vu)Y < a.h);
        int fw = filter_width_d, r = radius_d; vu B = {};
        for (int xf = 0; xf < fw; ++xf) {
            vu BY = {};
            vi mx = vmirror(X - r + xf, a.w);
            for (int yf = 0; yf < fw; ++yf) {
                vi my = vmirror(Y - r + yf, a.h);
                vu v = gather_u8(a.src, my * (int)a.stride + mx, M);
                BY += (uint32_t)filter_d[yf] * v;
            }
            B += (uint32_t)filter_d[xf] * ((BY + 128) >> 8);
        }
        B = (B + 32768) >> 16;
        uint32_t d = 0;
        for (int l = 0; l < 16; ++l) if (M[l]) {
            long o = (long)Y[l] * a.bstride / 2 + X[l];
            a.blur[o] = (uint16_t)B[l]; d += (uint32_t)abs((int)B[l] - (int)a.prev[o]);
        }
        __atomic_fetch_add(a.sad, d, __ATOMIC_RELAXED);
    }
}
static inline int mirror(int idx, int sup) { int out = idx < 0 ? -idx : idx; return out < sup ? out : (sup - (out - sup + 1)); }
__attribute__((noinline)) void scalar_block(const Args &a, unsigned bx, unsigned by) {
    for (unsigned ty = 0; ty < 16; ++ty) { uint32_t s = 0;
        for (unsigned tx = 0; tx < 16; ++tx) {
            int x = bx * 16 + tx, y = by * 16 + ty;
            if ((unsigned)x < a.w && (unsigned)y < a.h) {
                int fw = filter_width_d, r = radius_d; uint32_t blurred = 0;
                for (int xf = 0; xf < fw; ++xf) { uint32_t b = 0;
                    for (int yf = 0; yf < fw; ++yf) b += filter_d[yf] * a.src[(long)mirror(y - r + yf, a.h) * a.stride + mirror(x - r + xf, a.w)];
                    blurred += filter_d[xf] * ((b + 128) >> 8); }
                blurred = (blurred + 32768) >> 16;
                long o = (long)y * a.bstride / 2 + x; a.blur[o] = (uint16_t)blurred; s += (uint32_t)abs((int)blurred - (int)a.prev[o]);
            } }
        __atomic_fetch_add(a.sad, s, __ATOMIC_RELAXED); }
}
int main(int argc, char **argv) {
    unsigned w = 576, h = 324; long stride = 576, bstride = 1152;
    std::vector<uint8_t> src(stride * h); std::vector<uint16_t> b1(w * h), b2(w * h), prev(w * h);
    for (size_t i = 0; i < src.size(); ++i) src[i] = (i * 2654435761u) >> 24;
    for (size_t i = 0; i < prev.size(); ++i) prev[i] = (i * 40503u) & 0xffff;
    uint64_t s1 = 0, s2 = 0;
    Args A1{src.data(), b1.data(), prev.data(), &s1, w, h, stride, bstride}, A2{src.data(), b2.data(), prev.data(), &s2, w, h, stride, bstride};
    unsigned gx = (w + 15) / 16, gy = (h + 15) / 16; int reps = argc > 1 ? atoi(argv[1]) : 20;
    contiguous_loads = !(argc > 2 && strcmp(argv[2], "gather") == 0);
    double best1 = 1e9, best2 = 1e9;
    for (int r = 0; r < reps; ++r) {
        auto t0 = std::chrono::steady_clock::now();
        for (unsigned by = 0; by < gy; ++by) for (unsigned bx = 0; bx < gx; ++bx) scalar_block(A1, bx, by);
        auto t1 = std::chrono::steady_clock::now();
        for (unsigned by = 0; by < gy; ++by) for (unsigned bx = 0; bx < gx; ++bx) vec_block(A2, bx, by);
        auto t2 = std::chrono::steady_clock::now();
        best1 = std::min(best1, std::chrono::duration<double, std::milli>(t1 - t0).count());
        best2 = std::min(best2, std::chrono::duration<double, std::milli>(t2 - t1).count());
    }
    printf("equal=%d sad %llu %llu\nscalar %.3f ms/frame, vector %.3f ms/frame, ratio %.2f\n", memcmp(b1.data(), b2.data(), b1.size() * 2) == 0, (unsigned long long)s1, (unsigned long long)s2, best1, best2, best1 / best2);
}
