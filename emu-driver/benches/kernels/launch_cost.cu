// (f), (g) Launch and block overhead: each thread stores one word, nothing else, so what
// is measured is the cost of a launch (f: one block of 32 threads, launched many times
// back to back, one synchronisation) and of a block (g: thousands of 32-thread blocks in
// one launch; the shape of VMAF's many small per-tile blocks).
#include "bench.cuh"

extern "C" __global__ void launch_cost(unsigned *out)
{
    const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    out[i] = i ^ 0x5a5a5a5au;
}
