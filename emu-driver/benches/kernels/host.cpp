// scripts/bench-kernels' host program: runs each benchmark kernel in up to three columns
// in one process, side by side, and writes the table (stdout, table.md, table.json).
//
//   1. plain   the plain host loop (plain.cpp, g++ -O2): the baseline of every ratio;
//   2. HIP-CPU the same .cu text built as HIP source against HIP-CPU (hip_cpu.cpp), when
//              built with BENCH_WITH_HIP;
//   3. simtwin the path users take: the nvcc fatbin loaded with cuModuleLoadData from the
//              libcuda.so.1 that dlopen finds (must be simtwin's emulated driver), bound to
//              kernels-host's twins through EMU_CUDA_KERNELS, launched with cuLaunchKernel
//              and timed from the launch to the end of cuCtxSynchronize.
//
// Each column runs each kernel once to warm up, then --reps times; plain and simtwin
// alternate within a repetition, so load on the machine hits them alike; HIP-CPU runs after
// them (its runtime thread busy-polls from its first call on, see main). Medians are
// reported.
// Every column's result is checked against the plain loop's (exact: the kernels are
// integer or FMA-free float code).
//
// Exit: 0 measured (goals met or not); 1 a column failed a launch or computed a wrong
// result (the table says which); 2 setup error (bad arguments, driver or module missing).
#include "bench.h"

#include <dlfcn.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#define BENCH_CONSTANTS_ONLY
#include "bench.cuh"

namespace {

// ---------------------------------------------------------------------------------------
// Column 2: the emulated driver, through the driver API as a user program calls it.

using CUresult = int;
using CUdevice = int;
using CUdeviceptr = unsigned long long;
using CUcontext = struct CUctx_st *;
using CUmodule = struct CUmod_st *;
using CUfunction = struct CUfunc_st *;
using CUstream = struct CUstream_st *;

struct DriverApi {
    CUresult (*cuInit)(unsigned);
    CUresult (*cuDeviceGet)(CUdevice *, int);
    CUresult (*cuDevicePrimaryCtxRetain)(CUcontext *, CUdevice);
    CUresult (*cuDevicePrimaryCtxRelease)(CUdevice);
    CUresult (*cuCtxSetCurrent)(CUcontext);
    CUresult (*cuCtxSynchronize)();
    CUresult (*cuModuleLoadData)(CUmodule *, const void *);
    CUresult (*cuModuleUnload)(CUmodule);
    CUresult (*cuModuleGetFunction)(CUfunction *, CUmodule, const char *);
    CUresult (*cuMemAlloc)(CUdeviceptr *, size_t);
    CUresult (*cuMemFree)(CUdeviceptr);
    CUresult (*cuMemcpyHtoD)(CUdeviceptr, const void *, size_t);
    CUresult (*cuMemcpyDtoH)(void *, CUdeviceptr, size_t);
    CUresult (*cuLaunchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                               CUstream, void **, void **);
    CUresult (*cuGetErrorName)(CUresult, const char **);
};

std::string read_file(const std::string &path)
{
    std::ifstream f(path, std::ios::binary);
    if (!f) throw SetupError("cannot read " + path + ": " + std::strerror(errno));
    std::ostringstream s;
    s << f.rdbuf();
    return s.str();
}

class DriverColumn final : public Column {
public:
    /// Loads `lib` with dlopen (as nv-codec-headers and the CUDA runtime do) and each
    /// `fatbin_dir/<module>.fatbin` with cuModuleLoadData.
    DriverColumn(const std::string &lib, const std::string &fatbin_dir, const std::vector<std::string> &modules)
    {
        handle_ = dlopen(lib.c_str(), RTLD_NOW | RTLD_LOCAL);
        if (!handle_) throw SetupError(std::string("dlopen ") + lib + ": " + dlerror());
        if (!dlsym(handle_, "simtwin_emulated_driver"))
            throw SetupError(lib + " is not simtwin's emulated driver (no simtwin_emulated_driver symbol): "
                                   "put target/simtwin/lib first on LD_LIBRARY_PATH");
        Dl_info info{};
        if (dladdr(dlsym(handle_, "cuInit"), &info) && info.dli_fname) path_ = info.dli_fname;
        bind(api_.cuInit, "cuInit");
        bind(api_.cuDeviceGet, "cuDeviceGet");
        bind(api_.cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain");
        bind(api_.cuDevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2");
        bind(api_.cuCtxSetCurrent, "cuCtxSetCurrent");
        bind(api_.cuCtxSynchronize, "cuCtxSynchronize");
        bind(api_.cuModuleLoadData, "cuModuleLoadData");
        bind(api_.cuModuleUnload, "cuModuleUnload");
        bind(api_.cuModuleGetFunction, "cuModuleGetFunction");
        bind(api_.cuMemAlloc, "cuMemAlloc_v2");
        bind(api_.cuMemFree, "cuMemFree_v2");
        bind(api_.cuMemcpyHtoD, "cuMemcpyHtoD_v2");
        bind(api_.cuMemcpyDtoH, "cuMemcpyDtoH_v2");
        bind(api_.cuLaunchKernel, "cuLaunchKernel");
        bind(api_.cuGetErrorName, "cuGetErrorName");
        setup(api_.cuInit(0), "cuInit");
        setup(api_.cuDeviceGet(&dev_, 0), "cuDeviceGet");
        setup(api_.cuDevicePrimaryCtxRetain(&ctx_, dev_), "cuDevicePrimaryCtxRetain");
        setup(api_.cuCtxSetCurrent(ctx_), "cuCtxSetCurrent");
        for (const auto &m : modules) {
            const std::string image = read_file(fatbin_dir + "/" + m + ".fatbin");
            CUmodule mod = nullptr;
            setup(api_.cuModuleLoadData(&mod, image.data()), ("cuModuleLoadData(" + m + ".fatbin)").c_str());
            modules_.push_back(mod);
            CUfunction f = nullptr;
            setup(api_.cuModuleGetFunction(&f, mod, m.c_str()), ("cuModuleGetFunction(" + m + ")").c_str());
            functions_.push_back(f);
        }
    }
    ~DriverColumn() override
    {
        for (CUmodule m : modules_) api_.cuModuleUnload(m);
        if (ctx_) api_.cuDevicePrimaryCtxRelease(dev_);
        // The library stays loaded: the driver writes its counters at exit.
    }
    const std::string &path() const { return path_; }
    const char *name() const override { return "simtwin"; }
    uint64_t alloc(size_t bytes) override
    {
        CUdeviceptr p = 0;
        check(api_.cuMemAlloc(&p, bytes), "cuMemAlloc");
        return p;
    }
    void upload(uint64_t dst, const void *src, size_t bytes) override
    {
        check(api_.cuMemcpyHtoD(dst, src, bytes), "cuMemcpyHtoD");
    }
    void download(void *dst, uint64_t src, size_t bytes) override
    {
        check(api_.cuMemcpyDtoH(dst, src, bytes), "cuMemcpyDtoH");
    }
    void release(uint64_t buf) override { check(api_.cuMemFree(buf), "cuMemFree"); }
    double run(const Launch &l) override
    {
        // kernelParams: one pointer per argument, to a value of the size the kernel takes.
        uint64_t words[6];
        uint32_t ints[6];
        void *params[6];
        const size_t n = std::strlen(l.sig);
        for (size_t i = 0; i < n; ++i) {
            words[i] = l.args[i];
            ints[i] = (uint32_t)l.args[i];
            params[i] = l.sig[i] == 'p' ? (void *)&words[i] : (void *)&ints[i];
        }
        CUfunction f = functions_.at((size_t)l.kernel);
        auto t0 = std::chrono::steady_clock::now();
        for (unsigned r = 0; r < l.repeat; ++r)
            check(api_.cuLaunchKernel(f, l.grid.x, l.grid.y, l.grid.z, l.block.x, l.block.y, l.block.z, 0, nullptr,
                                      params, nullptr),
                  "cuLaunchKernel");
        check(api_.cuCtxSynchronize(), "cuCtxSynchronize");
        auto t1 = std::chrono::steady_clock::now();
        return std::chrono::duration<double>(t1 - t0).count();
    }

private:
    template <typename F> void bind(F &slot, const char *sym)
    {
        void *p = dlsym(handle_, sym);
        if (!p) throw SetupError(std::string(path_) + " has no " + sym);
        slot = reinterpret_cast<F>(p);
    }
    std::string describe(CUresult r, const char *what)
    {
        const char *name = nullptr;
        if (api_.cuGetErrorName(r, &name) != 0 || !name) name = "unknown error";
        return std::string(what) + " failed: " + name + " (" + std::to_string(r) + ")";
    }
    void setup(CUresult r, const char *what)
    {
        if (r != 0) throw SetupError(describe(r, what));
    }
    void check(CUresult r, const char *what)
    {
        if (r != 0) throw std::runtime_error(describe(r, what));
    }

    void *handle_ = nullptr;
    std::string path_ = "?";
    DriverApi api_{};
    CUdevice dev_ = 0;
    CUcontext ctx_ = nullptr;
    std::vector<CUmodule> modules_;
    std::vector<CUfunction> functions_;
};

// ---------------------------------------------------------------------------------------
// The benchmark cases.

/// How a column's figure is expressed and what the goal is (issue 20's "Done when").
enum class Metric {
    ratio,              // time / plain loop
    ns_per_barrier,     // ns per thread per __syncthreads
    ns_per_shuffle,     // ns per lane per shuffle
    ns_per_pixel_ratio, // ns per pixel, and time / plain loop (no goal)
    ns_per_launch,      // ns per launch (launch to the end of the synchronisation, amortised)
    ns_per_block,       // ns per block of the launch
};

struct Case {
    Kernel kernel;
    const char *id;        // a, b, ...
    const char *module;    // the .cu stem = the kernel's name
    std::string title;     // what it is, sizes included
    Metric metric;
    double goal;           // simtwin's goal in the metric's unit; 0 = none
    const char *goal_text;
    double units;          // thread-barriers, lane-shuffles or pixels per launch (0 for ratio)
    Launch launch;
    // Inputs (host) and the output's size; buffers are made per column.
    std::vector<std::vector<unsigned char>> inputs;
    size_t out_bytes;
    int out_arg;           // index of the output pointer in launch.args
    std::vector<int> in_args;
    char out_type;         // 'f' float (bit-exact compare), 'u' integers
    size_t out_elem = 8;   // bytes per result element of an integer output
    std::vector<unsigned char> reference;  // the plain loop's output, once it ran
};

uint64_t rng_state = 0x9e3779b97f4a7c15ull;
uint64_t next_rand()
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

template <typename T> std::vector<unsigned char> bytes_of(const std::vector<T> &v)
{
    std::vector<unsigned char> b(v.size() * sizeof(T));
    std::memcpy(b.data(), v.data(), b.size());
    return b;
}

struct Sizes {
    unsigned axpy_n, tree_blocks, shfl_warps;
    int shfl_rounds, img_w, img_h;
    unsigned launches, small_blocks, reduce_n;
    int transpose_n;
    unsigned hist_n, hist_blocks;
};

std::string fmt(const char *f, ...)
{
    char buf[512];
    va_list ap;
    va_start(ap, f);
    std::vsnprintf(buf, sizeof buf, f, ap);
    va_end(ap);
    return buf;
}

std::vector<Case> make_cases(const Sizes &s)
{
    std::vector<Case> cases;
    const unsigned tiles_x = (unsigned)(s.img_w + BENCH_TILE - 1) / BENCH_TILE;
    const unsigned tiles_y = (unsigned)(s.img_h + BENCH_TILE - 1) / BENCH_TILE;
    {
        Case c{};
        c.kernel = Kernel::axpy, c.id = "a", c.module = "axpy";
        c.title = fmt("c[i] = a[i]*1.5f + b[i], %u floats, blocks of %d: time / plain loop", s.axpy_n,
                      BENCH_AXPY_THREADS);
        c.metric = Metric::ratio, c.goal = 1.2, c.goal_text = "<= 1.2x plain";
        std::vector<float> a(s.axpy_n), b(s.axpy_n);
        for (unsigned i = 0; i < s.axpy_n; ++i) {
            a[i] = (float)(int32_t)(next_rand() >> 40) * 0x1p-23f;
            b[i] = (float)(int32_t)(next_rand() >> 40) * 0x1p-23f;
        }
        c.inputs = {bytes_of(a), bytes_of(b)};
        c.in_args = {0, 1};
        c.out_bytes = s.axpy_n * sizeof(float), c.out_arg = 2, c.out_type = 'f';
        c.launch = {Kernel::axpy, "axpy", "pppu", {(s.axpy_n + BENCH_AXPY_THREADS - 1) / BENCH_AXPY_THREADS},
                    {BENCH_AXPY_THREADS}, {0, 0, 0, s.axpy_n}};
        cases.push_back(std::move(c));
    }
    {
        Case c{};
        c.kernel = Kernel::tree_reduce, c.id = "b", c.module = "tree_reduce";
        c.title = fmt("%d-thread shared-memory tree reduction (9 __syncthreads), %u blocks: ns per thread per "
                      "__syncthreads",
                      BENCH_TREE_THREADS, s.tree_blocks);
        c.metric = Metric::ns_per_barrier, c.goal = 2, c.goal_text = "<= 2 ns";
        const unsigned n = s.tree_blocks * BENCH_TREE_THREADS;
        std::vector<uint32_t> in(n);
        for (auto &v : in) v = (uint32_t)next_rand();
        c.inputs = {bytes_of(in)};
        c.in_args = {0};
        c.out_bytes = s.tree_blocks * sizeof(uint64_t), c.out_arg = 1, c.out_type = 'u';
        int barriers = 1;
        for (int h = BENCH_TREE_THREADS / 2; h > 0; h >>= 1) ++barriers;
        c.units = (double)n * barriers;
        c.launch = {Kernel::tree_reduce, "tree_reduce", "pp", {s.tree_blocks}, {BENCH_TREE_THREADS}, {0, 0}};
        cases.push_back(std::move(c));
    }
    {
        Case c{};
        c.kernel = Kernel::shfl_reduce, c.id = "c", c.module = "shfl_reduce";
        c.title = fmt("%d-lane shuffle reduction (__shfl_down_sync, %d rounds of 5), %u blocks of %d: ns per lane "
                      "per shuffle",
                      BENCH_WARP_LANES, s.shfl_rounds, s.shfl_warps, BENCH_WARP_LANES);
        c.metric = Metric::ns_per_shuffle, c.goal = 3, c.goal_text = "<= 3 ns";
        const unsigned n = s.shfl_warps * BENCH_WARP_LANES;
        std::vector<uint32_t> in(n);
        for (auto &v : in) v = (uint32_t)next_rand();
        c.inputs = {bytes_of(in)};
        c.in_args = {0};
        c.out_bytes = s.shfl_warps * sizeof(uint32_t), c.out_arg = 1, c.out_type = 'u', c.out_elem = 4;
        int steps = 0;
        for (int off = BENCH_WARP_LANES / 2; off > 0; off >>= 1) ++steps;
        c.units = (double)n * steps * s.shfl_rounds;
        c.launch = {Kernel::shfl_reduce, "shfl_reduce", "ppi", {s.shfl_warps}, {BENCH_WARP_LANES},
                    {0, 0, (uint64_t)s.shfl_rounds}};
        cases.push_back(std::move(c));
    }
    {
        Case c{};
        c.kernel = Kernel::stencil3x3, c.id = "d", c.module = "stencil3x3";
        c.title = fmt("16x16 tile + 1-pixel halo in shared memory, 3x3 filter, %dx%d float: time / plain loop",
                      s.img_w, s.img_h);
        c.metric = Metric::ratio, c.goal = 0, c.goal_text = "-";
        const size_t n = (size_t)s.img_w * s.img_h;
        std::vector<float> in(n);
        for (auto &v : in) v = (float)(next_rand() % 256);
        c.inputs = {bytes_of(in)};
        c.in_args = {0};
        c.out_bytes = n * sizeof(float), c.out_arg = 1, c.out_type = 'f';
        c.launch = {Kernel::stencil3x3, "stencil3x3", "ppii", {tiles_x, tiles_y}, {BENCH_TILE, BENCH_TILE},
                    {0, 0, (uint64_t)s.img_w, (uint64_t)s.img_h}};
        cases.push_back(std::move(c));
    }
    {
        Case c{};
        c.kernel = Kernel::sse_reduce, c.id = "e", c.module = "sse_reduce";
        c.title = fmt("VMAF-like: per-16x16-block sum of 64-bit squared differences of two %dx%d 8-bit frames "
                      "(8 __shfl_down_sync + 1 __syncthreads per thread): ns per pixel, time / plain loop",
                      s.img_w, s.img_h);
        c.metric = Metric::ns_per_pixel_ratio, c.goal = 0, c.goal_text = "-";
        const size_t n = (size_t)s.img_w * s.img_h;
        std::vector<uint8_t> ref(n), dis(n);
        for (size_t i = 0; i < n; ++i) {
            ref[i] = (uint8_t)next_rand();
            dis[i] = (uint8_t)std::clamp((int)ref[i] + (int)(next_rand() % 17) - 8, 0, 255);
        }
        c.inputs = {bytes_of(ref), bytes_of(dis)};
        c.in_args = {0, 1};
        c.out_bytes = (size_t)tiles_x * tiles_y * sizeof(uint64_t), c.out_arg = 4, c.out_type = 'u';
        c.units = (double)n;
        c.launch = {Kernel::sse_reduce, "sse_reduce", "ppiip", {tiles_x, tiles_y}, {BENCH_TILE * BENCH_TILE},
                    {0, 0, (uint64_t)s.img_w, (uint64_t)s.img_h, 0}};
        cases.push_back(std::move(c));
    }
    {
        Case c{};
        c.kernel = Kernel::launch_cost, c.id = "f", c.module = "launch_cost";
        c.title = fmt("launch overhead: %u launches of 1 block of %d threads (one store each), one "
                      "synchronisation: ns per launch",
                      s.launches, BENCH_SMALL_BLOCK);
        c.metric = Metric::ns_per_launch, c.goal = 0, c.goal_text = "-";
        c.out_bytes = BENCH_SMALL_BLOCK * sizeof(uint32_t), c.out_arg = 0, c.out_type = 'u', c.out_elem = 4;
        c.units = s.launches;
        c.launch = {Kernel::launch_cost, "launch_cost", "p", {1}, {BENCH_SMALL_BLOCK}, {0}};
        c.launch.repeat = s.launches;
        cases.push_back(std::move(c));
    }
    {
        Case c{};
        c.kernel = Kernel::launch_cost, c.id = "g", c.module = "launch_cost";
        c.title = fmt("block overhead, barrier-free: %u blocks of %d threads (one store each): ns per block",
                      s.small_blocks, BENCH_SMALL_BLOCK);
        c.metric = Metric::ns_per_block, c.goal = 0, c.goal_text = "-";
        c.out_bytes = (size_t)s.small_blocks * BENCH_SMALL_BLOCK * sizeof(uint32_t), c.out_arg = 0, c.out_type = 'u',
        c.out_elem = 4;
        c.units = s.small_blocks;
        c.launch = {Kernel::launch_cost, "launch_cost", "p", {s.small_blocks}, {BENCH_SMALL_BLOCK}, {0}};
        cases.push_back(std::move(c));
    }
    {
        Case c{};
        c.kernel = Kernel::block_cost, c.id = "h", c.module = "block_cost";
        c.title = fmt("block overhead with a barrier: %u blocks of %d threads (store, __syncthreads, load, "
                      "store): ns per block",
                      s.small_blocks, BENCH_SMALL_BLOCK);
        c.metric = Metric::ns_per_block, c.goal = 0, c.goal_text = "-";
        c.out_bytes = (size_t)s.small_blocks * BENCH_SMALL_BLOCK * sizeof(uint32_t), c.out_arg = 0, c.out_type = 'u',
        c.out_elem = 4;
        c.units = s.small_blocks;
        c.launch = {Kernel::block_cost, "block_cost", "p", {s.small_blocks}, {BENCH_SMALL_BLOCK}, {0}};
        cases.push_back(std::move(c));
    }
    {
        Case c{};
        c.kernel = Kernel::reduce_sum, c.id = "i", c.module = "reduce_sum";
        c.title = fmt("not the project's: CUDA-samples-style sum reduction, %u unsigned, blocks of %d (2 loads per "
                      "thread, 3 __syncthreads, 5 shuffles): time / plain loop",
                      s.reduce_n, BENCH_REDUCE_THREADS);
        c.metric = Metric::ratio, c.goal = 0, c.goal_text = "-";
        std::vector<uint32_t> in(s.reduce_n);
        for (auto &v : in) v = (uint32_t)next_rand();
        c.inputs = {bytes_of(in)};
        c.in_args = {0};
        const unsigned blocks = s.reduce_n / (2 * BENCH_REDUCE_THREADS);
        c.out_bytes = blocks * sizeof(uint32_t), c.out_arg = 1, c.out_type = 'u', c.out_elem = 4;
        c.launch = {Kernel::reduce_sum, "reduce_sum", "pp", {blocks}, {BENCH_REDUCE_THREADS}, {0, 0}};
        cases.push_back(std::move(c));
    }
    {
        Case c{};
        c.kernel = Kernel::transpose, c.id = "j", c.module = "transpose";
        c.title = fmt("not the project's: tiled transpose (32x33 shared tile, blocks of 32x8, 1 __syncthreads), "
                      "%dx%d float: time / plain loop",
                      s.transpose_n, s.transpose_n);
        c.metric = Metric::ratio, c.goal = 0, c.goal_text = "-";
        const size_t n = (size_t)s.transpose_n * s.transpose_n;
        std::vector<float> in(n);
        for (auto &v : in) v = (float)(int32_t)(next_rand() >> 40) * 0x1p-23f;
        c.inputs = {bytes_of(in)};
        c.in_args = {0};
        c.out_bytes = n * sizeof(float), c.out_arg = 1, c.out_type = 'f';
        const unsigned tiles = (unsigned)(s.transpose_n + BENCH_TRANSPOSE_TILE - 1) / BENCH_TRANSPOSE_TILE;
        c.launch = {Kernel::transpose, "transpose", "ppii", {tiles, tiles}, {BENCH_TRANSPOSE_TILE, BENCH_TRANSPOSE_ROWS},
                    {0, 0, (uint64_t)s.transpose_n, (uint64_t)s.transpose_n}};
        cases.push_back(std::move(c));
    }
    {
        Case c{};
        c.kernel = Kernel::histogram, c.id = "k", c.module = "histogram";
        c.title = fmt("not the project's: 256-bin histogram of %u bytes, %u blocks of 256, shared-memory atomics "
                      "(2 __syncthreads): time / plain loop",
                      s.hist_n, s.hist_blocks);
        c.metric = Metric::ratio, c.goal = 0, c.goal_text = "-";
        std::vector<uint8_t> data(s.hist_n);
        // Skewed like image data: most bytes near mid-grey, so bins collide as they do there.
        for (auto &v : data) v = (uint8_t)(96 + (next_rand() % 64) + (next_rand() % 8 == 0 ? next_rand() % 96 : 0));
        c.inputs = {bytes_of(data)};
        c.in_args = {0};
        // The kernel adds into its output: every column runs it equally often (host.cpp's
        // run_case), so the accumulated bins compare exactly.
        c.out_bytes = BENCH_HIST_BINS * sizeof(uint32_t), c.out_arg = 2, c.out_type = 'u', c.out_elem = 4;
        c.launch = {Kernel::histogram, "histogram", "pup", {s.hist_blocks}, {BENCH_HIST_BINS}, {0, s.hist_n, 0}};
        cases.push_back(std::move(c));
    }
    return cases;
}

// ---------------------------------------------------------------------------------------
// Running and reporting.

struct Cell {
    bool present = false;   // the column ran (or tried to)
    std::string error;      // launch failure or wrong result; empty when fine
    std::vector<double> times;  // seconds, one per repetition
    double median = 0;
};

double median_of(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    const size_t n = v.size();
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/// Compares a column's output with the plain loop's; empty when equal.
std::string compare(const Case &c, const std::vector<unsigned char> &got, const std::vector<unsigned char> &want)
{
    const size_t elem = c.out_type == 'f' ? 4 : c.out_elem;
    const size_t n = want.size() / elem;
    size_t bad = 0, first = 0;
    for (size_t i = 0; i < n; ++i)
        if (std::memcmp(got.data() + i * elem, want.data() + i * elem, elem) != 0 && bad++ == 0) first = i;
    if (!bad) return "";
    auto value = [&](const std::vector<unsigned char> &v) -> std::string {
        if (c.out_type == 'f') {
            float f;
            std::memcpy(&f, v.data() + first * 4, 4);
            return fmt("%.9g", (double)f);
        }
        uint64_t u = 0;
        std::memcpy(&u, v.data() + first * elem, elem);
        return fmt("%llu", (unsigned long long)u);
    };
    return fmt("WRONG: %zu of %zu results differ from the plain loop (first at %zu: %s, want %s)", bad, n, first,
               value(got).c_str(), value(want).c_str());
}

enum { PLAIN = 0, HIP = 1, SIMTWIN = 2 };

/// Runs one case in the columns `which` (plain first when it is among them): buffers,
/// warm-up, repetitions alternating between the columns, then the check of each result
/// against the plain loop's (kept in `c.reference`).
void run_case(Case &c, std::vector<Column *> &cols, const std::vector<int> &which, std::vector<Cell> &cells,
              int reps, int warmups)
{
    std::vector<Launch> launches(cols.size(), c.launch);
    std::vector<std::vector<uint64_t>> bufs(cols.size());
    std::vector<bool> alive(cols.size(), false);
    for (int k : which) {
        cells[k].present = true;
        try {
            for (size_t i = 0; i < c.in_args.size(); ++i) {
                const uint64_t b = cols[k]->alloc(c.inputs[i].size());
                bufs[k].push_back(b);
                cols[k]->upload(b, c.inputs[i].data(), c.inputs[i].size());
                launches[k].args[c.in_args[i]] = b;
            }
            const uint64_t out = cols[k]->alloc(c.out_bytes);
            bufs[k].push_back(out);
            // Zeroed: a kernel that adds into its output (k) starts from the same bins everywhere.
            const std::vector<unsigned char> zeros(c.out_bytes, 0);
            cols[k]->upload(out, zeros.data(), c.out_bytes);
            launches[k].args[c.out_arg] = out;
            alive[k] = true;
        } catch (const std::exception &e) {
            cells[k].error = std::string("FAILED: ") + e.what();
        }
    }
    for (int r = -warmups; r < reps; ++r)
        for (int k : which) {
            if (!alive[k]) continue;
            try {
                const double t = cols[k]->run(launches[k]);
                if (r >= 0) cells[k].times.push_back(t);
            } catch (const std::exception &e) {
                cells[k].error = std::string("FAILED: ") + e.what();
                alive[k] = false;
            }
        }
    for (int k : which) {
        if (!alive[k]) continue;
        try {
            if (k == PLAIN) {
                c.reference.resize(c.out_bytes);
                cols[k]->download(c.reference.data(), launches[k].args[c.out_arg], c.out_bytes);
            } else if (c.reference.size() != c.out_bytes) {
                cells[k].error = "FAILED: no plain result to check against";
            } else {
                std::vector<unsigned char> got(c.out_bytes);
                cols[k]->download(got.data(), launches[k].args[c.out_arg], c.out_bytes);
                cells[k].error = compare(c, got, c.reference);
            }
        } catch (const std::exception &e) {
            cells[k].error = std::string("FAILED: ") + e.what();
        }
    }
    for (int k : which) {
        for (uint64_t b : bufs[k]) {
            try {
                cols[k]->release(b);
            } catch (const std::exception &) {
                // A failed launch leaves the context unusable; its buffers go with it.
            }
        }
        if (!cells[k].times.empty()) cells[k].median = median_of(cells[k].times);
    }
}

/// The column's figure in the case's unit (ratio to plain, or ns per unit).
double figure(const Case &c, const std::vector<Cell> &cells, int k)
{
    if (c.metric == Metric::ratio) return cells[k].median / cells[PLAIN].median;
    return cells[k].median * 1e9 / c.units;
}

bool usable(const Cell &cell) { return cell.present && cell.error.empty() && !cell.times.empty(); }

std::string ms(double s) { return s >= 0.1 ? fmt("%.0f ms", s * 1e3) : fmt("%.2f ms", s * 1e3); }

std::string cell_text(const Case &c, const std::vector<Cell> &cells, int k)
{
    const Cell &cell = cells[k];
    if (!cell.present) return "skipped";
    if (!cell.error.empty()) return cell.error.substr(0, cell.error.find(':'));
    if (k == PLAIN) return ms(cell.median);
    if (!usable(cells[PLAIN])) return ms(cell.median);
    const double f = figure(c, cells, k);
    switch (c.metric) {
    case Metric::ratio: return fmt("%.2fx (%s)", f, ms(cell.median).c_str());
    case Metric::ns_per_barrier:
    case Metric::ns_per_shuffle:
    case Metric::ns_per_launch:
    case Metric::ns_per_block: return fmt("%.1f ns (%s)", f, ms(cell.median).c_str());
    case Metric::ns_per_pixel_ratio:
        return fmt("%.1f ns/px, %.1fx (%s)", f, cell.median / cells[PLAIN].median, ms(cell.median).c_str());
    }
    return "";
}

/// "yes", "no (N.Nx over)", or "n/a" (no goal, or simtwin did not measure).
std::string met_text(const Case &c, const std::vector<Cell> &cells, bool *met)
{
    *met = false;
    if (c.goal == 0) return "n/a";
    if (!usable(cells[SIMTWIN]) || !usable(cells[PLAIN])) return "n/a";
    const double f = figure(c, cells, SIMTWIN);
    *met = f <= c.goal;
    return *met ? "yes" : fmt("no (%.1fx over)", f / c.goal);
}

std::string json_escape(const std::string &s)
{
    std::string o;
    for (char ch : s) {
        if (ch == '"' || ch == '\\') {
            o += '\\';
            o += ch;
        }
        else if ((unsigned char)ch < 0x20) o += fmt("\\u%04x", ch);
        else o += ch;
    }
    return o;
}

std::string cpu_model()
{
    std::ifstream f("/proc/cpuinfo");
    std::string line;
    while (std::getline(f, line))
        if (line.rfind("model name", 0) == 0) return line.substr(line.find(':') + 2);
    return "unknown";
}

std::string loadavg()
{
    std::ifstream f("/proc/loadavg");
    std::string a, b, c;
    f >> a >> b >> c;
    return a + " " + b + " " + c;
}

bool write_file(const std::string &path, const std::string &text)
{
    const std::string tmp = path + ".tmp";
    {
        std::ofstream f(tmp, std::ios::binary);
        if (!f) return false;
        f << text;
        if (!f) return false;
    }
    return std::rename(tmp.c_str(), path.c_str()) == 0;
}

[[noreturn]] void usage(const char *msg)
{
    std::fprintf(stderr,
                 "bench-kernels-host: %s\n"
                 "usage: bench-kernels-host --fatbin-dir DIR --out DIR [--reps N] [--quick] [--hip-cpu] "
                 "[--libcuda NAME] [--label TEXT] [--only a,b,...]\n"
                 "(run it through scripts/bench-kernels)\n",
                 msg);
    std::exit(2);
}

} // namespace

int main(int argc, char **argv)
{
    std::string fatbin_dir, out_dir, libcuda = "libcuda.so.1", label, only;
    int reps = 5;
    bool quick = false, hip = false;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        auto value = [&]() -> std::string {
            if (i + 1 >= argc) usage((a + " needs a value").c_str());
            return argv[++i];
        };
        if (a == "--fatbin-dir") fatbin_dir = value();
        else if (a == "--out") out_dir = value();
        else if (a == "--libcuda") libcuda = value();
        else if (a == "--label") label = value();
        else if (a == "--only") only = value();
        else if (a == "--reps") {
            const std::string v = value();
            char *end = nullptr;
            const long n = std::strtol(v.c_str(), &end, 10);
            if (v.empty() || *end || n < 1 || n > 1000) usage("--reps takes a number from 1 to 1000");
            reps = (int)n;
        } else if (a == "--quick") quick = true;
        else if (a == "--hip-cpu") hip = true;
        else usage(("unknown argument " + a).c_str());
    }
    if (fatbin_dir.empty() || out_dir.empty()) usage("--fatbin-dir and --out are required");
#if !defined(BENCH_WITH_HIP)
    if (hip) usage("--hip-cpu: this binary was built without HIP-CPU");
#endif
    if (quick) reps = 1;
    const int warmups = 1; // also in --quick: first-use costs (stack pools, page faults) are not what is measured
    const Sizes sizes = quick ? Sizes{1u << 16, 64, 128, 2, 100, 60, 20, 64, 1u << 14, 100, 1u << 14, 8}
                              : Sizes{1u << 24, 2048, 8192, 4, 1920, 1080, 2000, 16384, 1u << 23, 2048, 1u << 24, 256};
    std::vector<Case> cases = make_cases(sizes);
    if (!only.empty()) {
        // --only a,c: the named cases only (for profiling one shape).
        std::vector<Case> kept;
        for (Case &c : cases)
            if (("," + only + ",").find(std::string(",") + c.id + ",") != std::string::npos) kept.push_back(std::move(c));
        for (size_t i = 0; i < only.size(); ++i)
            if (only[i] != ',' && (only[i] < 'a' || only[i] > 'k' || (i + 1 < only.size() && only[i + 1] != ',')))
                usage("--only takes case letters a..k separated by commas");
        cases = std::move(kept);
    }

    std::unique_ptr<Column> plain = make_plain_column();
    std::unique_ptr<Column> hip_col;
    std::unique_ptr<DriverColumn> driver;
    try {
#if defined(BENCH_WITH_HIP)
        if (hip) hip_col = make_hip_cpu_column();
#endif
        // Every module, in Kernel's order (run() indexes the functions by Kernel).
        const std::vector<std::string> modules = {"axpy",        "tree_reduce", "shfl_reduce", "stencil3x3",
                                                  "sse_reduce",  "launch_cost", "block_cost",  "reduce_sum",
                                                  "transpose",   "histogram"};
        driver = std::make_unique<DriverColumn>(libcuda, fatbin_dir, modules);
    } catch (const std::exception &e) {
        std::fprintf(stderr, "bench-kernels: setup error: %s\n", e.what());
        return 2;
    }
    std::vector<Column *> cols = {plain.get(), hip_col.get(), driver.get()};
    const std::string load_before = loadavg();

    // HIP-CPU goes last: from its first call until the process exits, its runtime thread
    // polls its queues (a pause loop), which takes about half of the one core from anything
    // else that runs (measured: the plain loop and simtwin twice as slow). Its own launches
    // are not slowed: the poller runs them, and the caller blocks.
    std::vector<std::vector<Cell>> results(cases.size(), std::vector<Cell>(cols.size()));
    for (size_t i = 0; i < cases.size(); ++i) {
        std::fprintf(stderr, "bench-kernels: (%s) %s: plain, simtwin ...\n", cases[i].id, cases[i].module);
        run_case(cases[i], cols, {PLAIN, SIMTWIN}, results[i], reps, warmups);
    }
    if (hip_col)
        for (size_t i = 0; i < cases.size(); ++i) {
            std::fprintf(stderr, "bench-kernels: (%s) %s: HIP-CPU ...\n", cases[i].id, cases[i].module);
            run_case(cases[i], cols, {HIP}, results[i], reps, warmups);
        }

    // The table.
    std::string md, js;
    md += "| kernel | plain | HIP-CPU | simtwin | simtwin/HIP-CPU | <= 0.5 HIP-CPU? | goal | met? |\n";
    md += "|---|---|---|---|---|---|---|---|\n";
    bool failed = false;
    int goals = 0, met_count = 0;
    js += "{\n  \"schema\": \"simtwin-bench-kernels/1\",\n";
    js += fmt("  \"label\": \"%s\",\n", json_escape(label).c_str());
    js += fmt("  \"date\": %lld,\n", (long long)std::time(nullptr));
    js += fmt("  \"cpu\": \"%s\",\n", json_escape(cpu_model()).c_str());
    js += fmt("  \"loadavg_before\": \"%s\",\n  \"loadavg_after\": \"%s\",\n", load_before.c_str(), loadavg().c_str());
    js += fmt("  \"driver\": \"%s\",\n", json_escape(driver->path()).c_str());
    js += fmt("  \"quick\": %s,\n  \"repetitions\": %d,\n  \"warmups\": %d,\n", quick ? "true" : "false", reps,
              warmups);
    js += fmt("  \"hip_cpu\": %s,\n  \"kernels\": [\n", hip ? "true" : "false");
    for (size_t i = 0; i < cases.size(); ++i) {
        const Case &c = cases[i];
        const auto &cells = results[i];
        bool met = false;
        const std::string met_s = met_text(c, cells, &met);
        if (c.goal != 0) ++goals, met_count += met;
        std::string ratio = "-", half = "-";
        if (usable(cells[HIP]) && usable(cells[SIMTWIN])) {
            const double r = cells[SIMTWIN].median / cells[HIP].median;
            ratio = fmt("%.2fx", r);
            half = r <= 0.5 ? "yes" : fmt("no (%.1fx over)", r / 0.5);
        }
        md += fmt("| (%s) %s | %s | %s | %s | %s | %s | %s | %s |\n", c.id, c.title.c_str(),
                  cell_text(c, cells, PLAIN).c_str(), cell_text(c, cells, HIP).c_str(),
                  cell_text(c, cells, SIMTWIN).c_str(), ratio.c_str(), half.c_str(), c.goal_text, met_s.c_str());
        js += fmt("    {\"id\": \"%s\", \"kernel\": \"%s\", \"title\": \"%s\",\n", c.id, c.module,
                  json_escape(c.title).c_str());
        const char *unit = c.metric == Metric::ratio            ? "x plain"
                           : c.metric == Metric::ns_per_barrier ? "ns per thread per __syncthreads"
                           : c.metric == Metric::ns_per_shuffle ? "ns per lane per shuffle"
                           : c.metric == Metric::ns_per_launch  ? "ns per launch"
                           : c.metric == Metric::ns_per_block   ? "ns per block"
                                                                : "ns per pixel";
        js += fmt("     \"unit\": \"%s\", \"units_per_launch\": %.0f, \"goal\": %s, \"met\": %s,\n", unit, c.units,
                  c.goal != 0 ? fmt("%g", c.goal).c_str() : "null",
                  c.goal != 0 && usable(cells[SIMTWIN]) ? (met ? "true" : "false") : "null");
        js += "     \"columns\": {";
        const char *names[] = {"plain", "hip_cpu", "simtwin"};
        for (int k = 0; k < 3; ++k) {
            const Cell &cell = cells[k];
            js += fmt("%s\"%s\": ", k ? ", " : "", names[k]);
            if (!cell.present) {
                js += "null";
                continue;
            }
            if (!cell.error.empty()) failed = true;
            std::string times;
            for (size_t t = 0; t < cell.times.size(); ++t) times += fmt("%s%.6f", t ? ", " : "", cell.times[t] * 1e3);
            const double min = cell.times.empty() ? 0 : *std::min_element(cell.times.begin(), cell.times.end());
            js += fmt("{\"median_ms\": %.6f, \"min_ms\": %.6f, \"times_ms\": [%s]", cell.median * 1e3, min * 1e3,
                      times.c_str());
            if (k != PLAIN && usable(cell) && usable(cells[PLAIN])) {
                js += fmt(", \"x_plain\": %.4f", cell.median / cells[PLAIN].median);
                if (c.metric != Metric::ratio) js += fmt(", \"ns_per_unit\": %.4f", figure(c, cells, k));
            }
            js += fmt(", \"error\": %s}", cell.error.empty() ? "null"
                                                             : ("\"" + json_escape(cell.error) + "\"").c_str());
        }
        js += fmt("},\n     \"simtwin_over_hip_cpu\": %s}%s\n",
                  ratio == "-" ? "null" : fmt("%.4f", cells[SIMTWIN].median / cells[HIP].median).c_str(),
                  i + 1 < cases.size() ? "," : "");
    }
    js += fmt("  ],\n  \"goals\": %d,\n  \"goals_met\": %d\n}\n", goals, met_count);

    std::string notes;
    notes += fmt("Median of %d repetition%s after %d warm-up run%s, plain and simtwin alternating, HIP-CPU "
                 "after them (its runtime thread busy-polls once started, which would slow the others); one core "
                 "(taskset -c 0); EMU_CUDA_WORKERS=1. Load average before/after: %s / %s. CPU: %s.\n",
                 reps, reps == 1 ? "" : "s", warmups, warmups == 1 ? "" : "s", load_before.c_str(), loadavg().c_str(),
                 cpu_model().c_str());
    notes += "- plain: the same computation as a plain host loop (g++ -O2) in this process; the baseline of "
             "every ratio and the reference every other column's result is checked against (bit-exact).\n";
    notes += fmt("- simtwin: nvcc sm_90 fatbin, cuModuleLoadData + cuLaunchKernel + cuCtxSynchronize on %s, "
                 "kernels-host twins via EMU_CUDA_KERNELS.\n",
                 driver->path().c_str());
    notes += hip ? "- HIP-CPU: the same .cu text compiled as HIP source (g++ -O2, hipLaunchKernelGGL + "
                   "hipDeviceSynchronize).\n"
                 : "- HIP-CPU: skipped (give scripts/bench-kernels HIP-CPU's path to measure it).\n";
    auto ran = [&](const char *id) {
        for (const Case &c : cases)
            if (std::strcmp(c.id, id) == 0) return true;
        return false;
    };
    if (ran("c"))
        notes += "- (c) lane count: blocks of exactly 32 threads, so each shuffle has 32 participating lanes in "
             "both implementations (HIP-CPU's warpSize is 64 and its shuffles rendezvous the whole block). "
             "__shfl_down_sync(mask, v, d, 32) is HIP-CPU's __shfl_down(v, d, 64) (bench.cuh: its width-32 "
             "form returns the caller's own value in lanes 32..63); lane 0's sums are the same, and checked.\n";
    if (ran("e"))
        notes += "- (e) the warp-sum stage runs in every warp (HIP-CPU's shuffles are block barriers, so they "
             "cannot sit in a warp-divergent branch): 8 shuffles and 1 barrier per thread in every column; its "
             "blocks are 1-D (256 threads over a 16x16 tile) because HIP-CPU orders the lanes of a 2-D block "
             "with threadIdx.y fastest, unlike CUDA.\n";
    notes += fmt("- goals met: %d of %d (issue 20's \"Done when\"; also simtwin at most half HIP-CPU's time on "
                 "every shape%s).\n", met_count, goals,
                 "");
    if (ran("f") || ran("g") || ran("h"))
        notes += "- (f)-(h) overhead: (f) a launch of one 32-thread block, back to back, amortised over the "
                 "launches and one synchronisation; (g), (h) the whole launch divided by its blocks (each block's "
                 "32 threads' own work included: one store, or store, barrier, load, store).\n";
    if (ran("k"))
        notes += "- (k) the kernel adds into its output, so every column accumulates the histogram over its runs; "
                 "all run equally often (warm-up and repetitions) and end with the same bins.\n";

    const std::string title = fmt("# bench-kernels%s%s\n\n", label.empty() ? "" : ": ", label.c_str());
    const std::string full_md = title + md + "\n" + notes;
    std::fputs(("\n" + md + "\n" + notes).c_str(), stdout);
    std::fflush(stdout);
    if (!write_file(out_dir + "/table.md", full_md) || !write_file(out_dir + "/table.json", js)) {
        std::fprintf(stderr, "bench-kernels: cannot write %s/table.{md,json}: %s\n", out_dir.c_str(),
                     std::strerror(errno));
        return 2;
    }
    std::fprintf(stderr, "bench-kernels: wrote %s/table.md and %s/table.json\n", out_dir.c_str(), out_dir.c_str());
    for (size_t i = 0; i < cases.size(); ++i)
        for (int k = 1; k < 3; ++k)
            if (!results[i][k].error.empty())
                std::fprintf(stderr, "bench-kernels: (%s) %s: %s\n", cases[i].id, k == HIP ? "HIP-CPU" : "simtwin",
                             results[i][k].error.c_str());
    return failed ? 1 : 0;
}
