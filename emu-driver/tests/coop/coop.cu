// Kernels of emu-driver/tests/coop.rs: grid-wide sync through cooperative_groups, as
// nvcc compiles it (the grid workspace from %envreg1:%envreg2, a barrier counter at
// workspace + 4). tests/coop.rs compiles this to PTX and client.c runs it.
#include <cooperative_groups.h>
namespace cg = cooperative_groups;

// Every round: each thread adds to its own element, the grid syncs, each thread reads
// another thread's element (one of another block, mostly), the grid syncs again. Without
// a working grid barrier the reads see stale values.
extern "C" __global__ void gridsum(unsigned *data, unsigned *out, int rounds) {
    cg::grid_group g = cg::this_grid();
    unsigned long long n = g.size();
    unsigned long long r = g.thread_rank();
    for (int k = 0; k < rounds; k++) {
        data[r] += (unsigned)k + 1;
        g.sync();
        unsigned long long o = (r + 1 + 977ull * k) % n;
        out[r] = out[r] * 31u + data[o];
        g.sync();
    }
}

// The environment registers a kernel sees: out[0..3] = %envreg0, %envreg1, %envreg2,
// %envreg3, out[4], out[5] = the workspace's first two words (when there is one).
extern "C" __global__ void envregs(unsigned *out) {
    unsigned e0, e1, e2, e3;
    asm volatile("mov.u32 %0, %%envreg0;" : "=r"(e0));
    asm volatile("mov.u32 %0, %%envreg1;" : "=r"(e1));
    asm volatile("mov.u32 %0, %%envreg2;" : "=r"(e2));
    asm volatile("mov.u32 %0, %%envreg3;" : "=r"(e3));
    if (threadIdx.x == 0 && blockIdx.x == 0) {
        out[0] = e0; out[1] = e1; out[2] = e2; out[3] = e3;
        unsigned *w = (unsigned *)(((unsigned long long)e1 << 32) | e2);
        if (w) { out[4] = w[0]; out[5] = w[1]; }
    }
}

// Block 1 leaves before the grid sync: the others wait for it for ever (on a device, a
// hang; here the watchdog's CUDA_ERROR_LAUNCH_TIMEOUT).
extern "C" __global__ void deserter(unsigned *out) {
    cg::grid_group g = cg::this_grid();
    if (blockIdx.x == 1) return;
    g.sync();
    out[blockIdx.x] = 1;
}
