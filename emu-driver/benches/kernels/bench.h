// The benchmark harness's shared declarations (host.cpp, plain.cpp, hip_cpu.cpp).
// A Column is one way to run the kernels: the plain host loops, HIP-CPU, or simtwin
// through the emulated driver. Buffers are 64-bit handles (a device pointer for the
// driver, a host pointer otherwise) so one launch description serves every column.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>

enum class Kernel { axpy, tree_reduce, shfl_reduce, stencil3x3, sse_reduce, launch_cost, block_cost, reduce_sum, transpose, histogram };

struct Dim {
    unsigned x = 1, y = 1, z = 1;
};

/// One launch: grid, block and the arguments as 64-bit words. `sig[i]` is the type of
/// argument i as the kernel declares it: 'p' a pointer, 'u' unsigned, 'i' int.
struct Launch {
    Kernel kernel;
    const char *symbol;
    const char *sig;
    Dim grid, block;
    uint64_t args[6];
    /// Launches back to back before the one synchronisation (the launch-overhead case).
    unsigned repeat = 1;
};

/// The environment is not usable (a library, module or symbol missing): exit 2.
struct SetupError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

class Column {
public:
    virtual ~Column() = default;
    virtual const char *name() const = 0;
    virtual uint64_t alloc(size_t bytes) = 0;
    virtual void upload(uint64_t dst, const void *src, size_t bytes) = 0;
    virtual void download(void *dst, uint64_t src, size_t bytes) = 0;
    virtual void release(uint64_t buf) = 0;
    /// Runs the launch to completion and returns its wall time in seconds (launch to
    /// synchronisation included). Throws std::runtime_error when the launch fails.
    virtual double run(const Launch &launch) = 0;
};

/// The plain host loops (plain.cpp, g++ -O2): the baseline of every ratio.
std::unique_ptr<Column> make_plain_column();
/// HIP-CPU (hip_cpu.cpp, built only when the script is given HIP-CPU's path).
std::unique_ptr<Column> make_hip_cpu_column();
