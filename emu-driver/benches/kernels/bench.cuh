// Shared by the benchmark kernels (scripts/bench-kernels): the same .cu text is built by
// nvcc (fatbin), by kernels-host (simtwin's host twins) and, through hip_cpu.cpp, by g++
// against HIP-CPU. This header maps the few names that differ; nothing else does.
#pragma once

// Block shapes the host program launches with (host.cpp reads the same constants).
#define BENCH_AXPY_THREADS 256   // (a) 1-D blocks
#define BENCH_TREE_THREADS 256   // (b) one block = one 256-wide tree
#define BENCH_WARP_LANES 32      // (c) one block = exactly one 32-lane warp
#define BENCH_TILE 16            // (d), (e) 16x16 blocks
#define BENCH_SMALL_BLOCK 32     // (f), (g), (h) small blocks: launch and block overhead
#define BENCH_REDUCE_THREADS 256 // (i) 1-D blocks, two elements per thread
#define BENCH_TRANSPOSE_TILE 32  // (j) 32x32 tiles ...
#define BENCH_TRANSPOSE_ROWS 8   //     ... moved by blocks of 32x8 threads
#define BENCH_HIST_BINS 256      // (k) one thread per bin: blocks of 256

#if defined(SIMTWIN_BENCH_HIP)
#include <hip/hip_runtime.h>

// HIP-CPU has no *_sync shuffles, its warpSize is 64, and its __shfl_down(v, d, width)
// compares the source index with `width` rather than with the end of the caller's
// width-sized segment, so with width 32 the lanes 32..63 of its 64-lane warp get their own
// value back (a wrong sum). The kernels only use __shfl_down_sync in shfl_down tree
// reductions whose result is read in lane 0 of each 32-lane group, so the mapping uses
// HIP-CPU's full width: lane 0 (and 32) of each group then reads only lanes 0..31
// (32..63) of its own group, and the sums are the CUDA ones (host.cpp checks every
// result against the plain loop). The mask is not used by HIP-CPU.
template <typename T>
inline T __shfl_down_sync(unsigned /*mask*/, T v, unsigned delta, int /*width*/ = 32)
{
    return __shfl_down(v, delta, warpSize);
}
#endif

#if !defined(BENCH_CONSTANTS_ONLY) // host.cpp takes only the constants above
__device__ __forceinline__ int bench_clamp(int v, int lo, int hi)
{
    return v < lo ? lo : (v > hi ? hi : v);
}
#endif
