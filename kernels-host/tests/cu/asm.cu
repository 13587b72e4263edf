#include <cuda_runtime.h>
__global__ void k(unsigned *p) {
    unsigned lane;
    asm volatile("mov.u32 %0, %%laneid;" : "=r"(lane));
    *p = lane;
}
