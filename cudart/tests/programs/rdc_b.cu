#include "check.h"

__device__ int bias;
__device__ int scale_of(int i) { return i * 3; }

void set_bias(int b) { CK(cudaMemcpyToSymbol(bias, &b, sizeof b)); }
