// Column 1: the plain host loops, compiled with g++ -O2 into the benchmark process. Each
// computes what its kernel computes, in the order a CPU programmer would write it;
// host.cpp checks the other columns against these results.
#include "bench.h"

#include <chrono>
#include <cstdlib>
#include <cstring>

namespace {

#define BENCH_PLAIN_TILE 16

void axpy(const float *a, const float *b, float *c, unsigned n)
{
    for (unsigned i = 0; i < n; ++i) c[i] = a[i] * 1.5f + b[i];
}

void tree_reduce(const unsigned *in, unsigned long long *sums, unsigned blocks, unsigned threads)
{
    for (unsigned b = 0; b < blocks; ++b) {
        unsigned long long s = 0;
        for (unsigned t = 0; t < threads; ++t) {
            unsigned long long v = in[b * threads + t];
            s += v * v;
        }
        sums[b] = s;
    }
}

void shfl_reduce(const unsigned *in, unsigned *sums, unsigned warps, unsigned lanes, int rounds)
{
    for (unsigned w = 0; w < warps; ++w) {
        unsigned s = 0;
        for (unsigned l = 0; l < lanes; ++l) s += in[w * lanes + l];
        unsigned acc = 0;
        for (int r = 0; r < rounds; ++r) acc += s + lanes * (unsigned)r;
        sums[w] = acc;
    }
}

inline int clampi(int v, int lo, int hi) { return v < lo ? lo : (v > hi ? hi : v); }

void stencil3x3(const float *in, float *out, int w, int h)
{
    for (int y = 0; y < h; ++y) {
        const float *r0 = in + clampi(y - 1, 0, h - 1) * w;
        const float *r1 = in + y * w;
        const float *r2 = in + clampi(y + 1, 0, h - 1) * w;
        for (int x = 0; x < w; ++x) {
            const int xl = clampi(x - 1, 0, w - 1), xr = clampi(x + 1, 0, w - 1);
            float s = r0[xl] + 2.0f * r0[x] + r0[xr]
                    + 2.0f * r1[xl] + 4.0f * r1[x] + 2.0f * r1[xr]
                    + r2[xl] + 2.0f * r2[x] + r2[xr];
            out[y * w + x] = s * 0.0625f;
        }
    }
}

void sse_reduce(const unsigned char *ref, const unsigned char *dis, int w, int h, unsigned long long *sums)
{
    const int bw = (w + BENCH_PLAIN_TILE - 1) / BENCH_PLAIN_TILE;
    const int bh = (h + BENCH_PLAIN_TILE - 1) / BENCH_PLAIN_TILE;
    for (int i = 0; i < bw * bh; ++i) sums[i] = 0;
    for (int y = 0; y < h; ++y) {
        unsigned long long *row = sums + (y / BENCH_PLAIN_TILE) * bw;
        for (int bx = 0; bx < bw; ++bx) {
            const int x1 = (bx + 1) * BENCH_PLAIN_TILE < w ? (bx + 1) * BENCH_PLAIN_TILE : w;
            unsigned long long s = 0;
            for (int x = bx * BENCH_PLAIN_TILE; x < x1; ++x) {
                const int d = (int)ref[y * w + x] - (int)dis[y * w + x];
                s += (unsigned long long)(d * d);
            }
            row[bx] += s;
        }
    }
}

void touch(unsigned *out, unsigned n)
{
    for (unsigned i = 0; i < n; ++i) out[i] = i ^ 0x5a5a5a5au;
}

void block_cost(unsigned *out, unsigned blocks, unsigned threads)
{
    for (unsigned b = 0; b < blocks; ++b)
        for (unsigned t = 0; t < threads; ++t) out[b * threads + t] = (b * threads + (t + 1) % threads) ^ 0x5a5a5a5au;
}

void reduce_sum(const unsigned *in, unsigned *sums, unsigned blocks, unsigned per_block)
{
    for (unsigned b = 0; b < blocks; ++b) {
        unsigned s = 0;
        for (unsigned i = 0; i < per_block; ++i) s += in[b * per_block + i];
        sums[b] = s;
    }
}

void transpose(const float *in, float *out, int w, int h)
{
    // Tiled as a CPU programmer would, so that neither side streams against the cache.
    for (int y0 = 0; y0 < h; y0 += 32)
        for (int x0 = 0; x0 < w; x0 += 32)
            for (int y = y0; y < (y0 + 32 < h ? y0 + 32 : h); ++y)
                for (int x = x0; x < (x0 + 32 < w ? x0 + 32 : w); ++x) out[x * h + y] = in[y * w + x];
}

/// Adds the byte histogram of `data` to `bins` (every column accumulates over its runs:
/// the kernel adds into its output, so all columns, run equally often, end equal).
void histogram(const unsigned char *data, unsigned n, unsigned *bins)
{
    unsigned h[256] = {};
    for (unsigned i = 0; i < n; ++i) ++h[data[i]];
    for (int b = 0; b < 256; ++b) bins[b] += h[b];
}

template <typename T> T arg(const Launch &l, int i) { return (T)(uintptr_t)l.args[i]; }

class PlainColumn final : public Column {
public:
    const char *name() const override { return "plain"; }
    uint64_t alloc(size_t bytes) override
    {
        void *p = std::aligned_alloc(64, (bytes + 63) / 64 * 64);
        if (!p) throw std::runtime_error("out of host memory");
        return (uint64_t)(uintptr_t)p;
    }
    void upload(uint64_t dst, const void *src, size_t bytes) override { std::memcpy((void *)dst, src, bytes); }
    void download(void *dst, uint64_t src, size_t bytes) override { std::memcpy(dst, (const void *)src, bytes); }
    void release(uint64_t buf) override { std::free((void *)buf); }
    double run(const Launch &l) override
    {
        auto t0 = std::chrono::steady_clock::now();
        for (unsigned r = 0; r < l.repeat; ++r) once(l);
        auto t1 = std::chrono::steady_clock::now();
        return std::chrono::duration<double>(t1 - t0).count();
    }

private:
    static void once(const Launch &l)
    {
        switch (l.kernel) {
        case Kernel::axpy:
            axpy(arg<const float *>(l, 0), arg<const float *>(l, 1), arg<float *>(l, 2), (unsigned)l.args[3]);
            break;
        case Kernel::tree_reduce:
            tree_reduce(arg<const unsigned *>(l, 0), arg<unsigned long long *>(l, 1), l.grid.x, l.block.x);
            break;
        case Kernel::shfl_reduce:
            shfl_reduce(arg<const unsigned *>(l, 0), arg<unsigned *>(l, 1), l.grid.x, l.block.x, (int)l.args[2]);
            break;
        case Kernel::stencil3x3:
            stencil3x3(arg<const float *>(l, 0), arg<float *>(l, 1), (int)l.args[2], (int)l.args[3]);
            break;
        case Kernel::sse_reduce:
            sse_reduce(arg<const unsigned char *>(l, 0), arg<const unsigned char *>(l, 1), (int)l.args[2],
                       (int)l.args[3], arg<unsigned long long *>(l, 4));
            break;
        case Kernel::launch_cost: touch(arg<unsigned *>(l, 0), l.grid.x * l.block.x); break;
        case Kernel::block_cost: block_cost(arg<unsigned *>(l, 0), l.grid.x, l.block.x); break;
        case Kernel::reduce_sum:
            reduce_sum(arg<const unsigned *>(l, 0), arg<unsigned *>(l, 1), l.grid.x, 2 * l.block.x);
            break;
        case Kernel::transpose:
            transpose(arg<const float *>(l, 0), arg<float *>(l, 1), (int)l.args[2], (int)l.args[3]);
            break;
        case Kernel::histogram:
            histogram(arg<const unsigned char *>(l, 0), (unsigned)l.args[1], arg<unsigned *>(l, 2));
            break;
        }
    }
};

} // namespace

std::unique_ptr<Column> make_plain_column() { return std::make_unique<PlainColumn>(); }
