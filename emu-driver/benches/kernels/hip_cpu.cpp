// Column 3: the same kernel sources compiled as HIP source against HIP-CPU (ROCm's
// header-only CPU implementation of HIP) with g++ -O2. Built only when scripts/bench-kernels
// is given HIP-CPU's path (-DSIMTWIN_BENCH_HIP, -I HIP-CPU/include, -ltbb).
#define SIMTWIN_BENCH_HIP 1
#include "bench.cuh"

#include "axpy.cu"
#include "block_cost.cu"
#include "histogram.cu"
#include "launch_cost.cu"
#include "reduce_sum.cu"
#include "shfl_reduce.cu"
#include "sse_reduce.cu"
#include "stencil3x3.cu"
#include "transpose.cu"
#include "tree_reduce.cu"

#include "bench.h"

#include <chrono>
#include <string>

namespace {

void check(hipError_t e, const char *what)
{
    if (e != hipSuccess) throw std::runtime_error(std::string(what) + ": " + hipGetErrorString(e));
}

template <typename T> T arg(const Launch &l, int i) { return (T)(uintptr_t)l.args[i]; }

class HipCpuColumn final : public Column {
public:
    const char *name() const override { return "HIP-CPU"; }
    uint64_t alloc(size_t bytes) override
    {
        void *p = nullptr;
        check(hipMalloc(&p, bytes), "hipMalloc");
        return (uint64_t)(uintptr_t)p;
    }
    void upload(uint64_t dst, const void *src, size_t bytes) override
    {
        check(hipMemcpy((void *)(uintptr_t)dst, src, bytes, hipMemcpyHostToDevice), "hipMemcpy");
    }
    void download(void *dst, uint64_t src, size_t bytes) override
    {
        check(hipMemcpy(dst, (const void *)(uintptr_t)src, bytes, hipMemcpyDeviceToHost), "hipMemcpy");
    }
    void release(uint64_t buf) override { check(hipFree((void *)(uintptr_t)buf), "hipFree"); }
    double run(const Launch &l) override
    {
        const dim3 g(l.grid.x, l.grid.y, l.grid.z), b(l.block.x, l.block.y, l.block.z);
        auto t0 = std::chrono::steady_clock::now();
        for (unsigned r = 0; r < l.repeat; ++r) {
            launch(l, g, b);
            check(hipGetLastError(), "launch");
        }
        check(hipDeviceSynchronize(), "hipDeviceSynchronize");
        auto t1 = std::chrono::steady_clock::now();
        return std::chrono::duration<double>(t1 - t0).count();
    }

private:
    static void launch(const Launch &l, const dim3 &g, const dim3 &b)
    {
        switch (l.kernel) {
        case Kernel::axpy:
            hipLaunchKernelGGL(axpy, g, b, 0, nullptr, arg<const float *>(l, 0), arg<const float *>(l, 1),
                               arg<float *>(l, 2), (unsigned)l.args[3]);
            break;
        case Kernel::tree_reduce:
            hipLaunchKernelGGL(tree_reduce, g, b, 0, nullptr, arg<const unsigned *>(l, 0),
                               arg<unsigned long long *>(l, 1));
            break;
        case Kernel::shfl_reduce:
            hipLaunchKernelGGL(shfl_reduce, g, b, 0, nullptr, arg<const unsigned *>(l, 0), arg<unsigned *>(l, 1),
                               (int)l.args[2]);
            break;
        case Kernel::stencil3x3:
            hipLaunchKernelGGL(stencil3x3, g, b, 0, nullptr, arg<const float *>(l, 0), arg<float *>(l, 1),
                               (int)l.args[2], (int)l.args[3]);
            break;
        case Kernel::sse_reduce:
            hipLaunchKernelGGL(sse_reduce, g, b, 0, nullptr, arg<const unsigned char *>(l, 0),
                               arg<const unsigned char *>(l, 1), (int)l.args[2], (int)l.args[3],
                               arg<unsigned long long *>(l, 4));
            break;
        case Kernel::launch_cost: hipLaunchKernelGGL(launch_cost, g, b, 0, nullptr, arg<unsigned *>(l, 0)); break;
        case Kernel::block_cost: hipLaunchKernelGGL(block_cost, g, b, 0, nullptr, arg<unsigned *>(l, 0)); break;
        case Kernel::reduce_sum:
            hipLaunchKernelGGL(reduce_sum, g, b, 0, nullptr, arg<const unsigned *>(l, 0), arg<unsigned *>(l, 1));
            break;
        case Kernel::transpose:
            hipLaunchKernelGGL(transpose, g, b, 0, nullptr, arg<const float *>(l, 0), arg<float *>(l, 1),
                               (int)l.args[2], (int)l.args[3]);
            break;
        case Kernel::histogram:
            hipLaunchKernelGGL(histogram, g, b, 0, nullptr, arg<const unsigned char *>(l, 0), (unsigned)l.args[1],
                               arg<unsigned *>(l, 2));
            break;
        }
    }
};

} // namespace

std::unique_ptr<Column> make_hip_cpu_column() { return std::make_unique<HipCpuColumn>(); }
