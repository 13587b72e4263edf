// Prototype (fourteenth session), not simtwin code: motion_cuda's kernel in "SIMD form" (a warp's 32 lanes as arrays, one loop over
// the lanes per basic block, uniform loops outside) against the same per-thread scalar code.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <chrono>
#include <vector>
#include <cstring>
static uint16_t filter_d[5] = {3571, 16004, 26386, 16004, 3571};
static int filter_width_d = 5, radius_d = 2;
static inline int mirror(int idx, int sup) { int out = idx < 0 ? -idx : idx; return out < sup ? out : (sup - (out - sup + 1)); }

struct Args { const uint8_t *src; uint16_t *blur; const uint16_t *prev; uint64_t *sad; unsigned w, h; long stride, bstride; };

// scalar: one thread at a time (what the loop path does, minus its frame handling)
__attribute__((noinline)) void scalar_block(const Args &a, unsigned bx, unsigned by) {
    for (unsigned ty = 0; ty < 16; ++ty) {
        uint32_t warp_sum[8] = {0};
        for (unsigned tx = 0; tx < 16; ++tx) {
            int x = bx * 16 + tx, y = by * 16 + ty;
            uint32_t d = 0;
            if ((unsigned)x < a.w && (unsigned)y < a.h) {
                int fw = filter_width_d, r = radius_d; uint32_t blurred = 0;
                for (int xf = 0; xf < fw; ++xf) {
                    uint32_t by_ = 0;
                    for (int yf = 0; yf < fw; ++yf)
                        by_ += filter_d[yf] * a.src[(long)mirror(y - r + yf, a.h) * a.stride + mirror(x - r + xf, a.w)];
                    blurred += filter_d[xf] * ((by_ + 128) >> 8);
                }
                blurred = (blurred + 32768) >> 16;
                a.blur[(long)y * a.bstride / 2 + x] = (uint16_t)blurred;
                int pv = a.prev[(long)y * a.bstride / 2 + x];
                d = (uint32_t)abs((int)blurred - pv);
            }
            warp_sum[0] += d;
        }
        __atomic_fetch_add(a.sad, warp_sum[0], __ATOMIC_RELAXED);
    }
}

// SIMD form: a warp = 32 lanes (two rows of 16), registers as lane arrays
__attribute__((noinline, optimize("vect-cost-model=dynamic"))) void simd_block(const Args &a, unsigned bx, unsigned by) {
    constexpr int W = 32;
    const uint8_t *__restrict src = a.src;
    for (unsigned warp = 0; warp < 8; ++warp) {
        int32_t X[W], Y[W]; bool M[W]; uint32_t B[W], BY[W], D[W];
        for (int l = 0; l < W; ++l) {
            unsigned tx = l & 15, ty = warp * 2 + (l >> 4);
            X[l] = bx * 16 + tx; Y[l] = by * 16 + ty;
            M[l] = (unsigned)X[l] < a.w && (unsigned)Y[l] < a.h;
            B[l] = 0; D[l] = 0;
        }
        // uniform loop bounds (constant memory): one value for the warp
        int fw = filter_width_d, r = radius_d;
        for (int xf = 0; xf < fw; ++xf) {
            for (int l = 0; l < W; ++l) BY[l] = 0;
            for (int yf = 0; yf < fw; ++yf) {
                uint32_t f = filter_d[yf];
                for (int l = 0; l < W; ++l) {
                    int my = mirror(Y[l] - r + yf, a.h), mx = mirror(X[l] - r + xf, a.w);
                    int32_t ix = M[l] ? my * (int32_t)a.stride + mx : 0; uint32_t v = src[ix];
                    BY[l] += f * v;
                }
            }
            uint32_t f = filter_d[xf];
            for (int l = 0; l < W; ++l) B[l] += f * ((BY[l] + 128) >> 8);
        }
        for (int l = 0; l < W; ++l) {
            uint32_t bl = (B[l] + 32768) >> 16;
            if (M[l]) {
                a.blur[(long)Y[l] * a.bstride / 2 + X[l]] = (uint16_t)bl;
                int pv = a.prev[(long)Y[l] * a.bstride / 2 + X[l]];
                D[l] = (uint32_t)abs((int)bl - pv);
            }
        }
        // shuffle reduction as lane-array exchanges
        for (int s = 16; s >= 1; s >>= 1) {
            uint32_t T[W];
            for (int l = 0; l < W; ++l) T[l] = D[l] + (l + s < W ? D[l + s] : D[l]);
            memcpy(D, T, sizeof T);
        }
        __atomic_fetch_add(a.sad, D[0], __ATOMIC_RELAXED);
    }
}

int main(int argc, char **argv) {
    unsigned w = 576, h = 324; long stride = 576, bstride = 1152;
    std::vector<uint8_t> src(stride * h); std::vector<uint16_t> b1(w * h), b2(w * h), prev(w * h);
    for (size_t i = 0; i < src.size(); ++i) src[i] = (i * 2654435761u) >> 24;
    for (size_t i = 0; i < prev.size(); ++i) prev[i] = (i * 40503u) & 0xffff;
    uint64_t s1 = 0, s2 = 0;
    Args A1{src.data(), b1.data(), prev.data(), &s1, w, h, stride, bstride}, A2{src.data(), b2.data(), prev.data(), &s2, w, h, stride, bstride};
    unsigned gx = (w + 15) / 16, gy = (h + 15) / 16;
    int reps = argc > 1 ? atoi(argv[1]) : 20;
    double best1 = 1e9, best2 = 1e9;
    for (int r = 0; r < reps; ++r) {
        auto t0 = std::chrono::steady_clock::now();
        for (unsigned by = 0; by < gy; ++by) for (unsigned bx = 0; bx < gx; ++bx) scalar_block(A1, bx, by);
        auto t1 = std::chrono::steady_clock::now();
        for (unsigned by = 0; by < gy; ++by) for (unsigned bx = 0; bx < gx; ++bx) simd_block(A2, bx, by);
        auto t2 = std::chrono::steady_clock::now();
        best1 = std::min(best1, std::chrono::duration<double, std::milli>(t1 - t0).count());
        best2 = std::min(best2, std::chrono::duration<double, std::milli>(t2 - t1).count());
    }
    printf("equal=%d sad %llu %llu\nscalar %.3f ms/frame, simd %.3f ms/frame, ratio %.2f\n", memcmp(b1.data(), b2.data(), b1.size() * 2) == 0, (unsigned long long)s1, (unsigned long long)s2, best1, best2, best1 / best2);
}
