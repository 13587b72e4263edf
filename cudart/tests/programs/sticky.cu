// An execution error is sticky: a kernel that faults poisons the context, and every later
// call answers the error, as on a device.
#include "check.h"

__global__ void wild(int *p) { p[threadIdx.x * 1000000] = 1; }

int main() {
    int *d;
    CK(cudaMalloc(&d, 64));
    wild<<<1, 32>>>(d);
    SHOW("launch", cudaGetLastError());
    SHOW("synchronize", cudaDeviceSynchronize());
    SHOW("last error", cudaGetLastError());
    SHOW("a later malloc", cudaMalloc(&d, 64));
    SHOW("a later synchronize", cudaDeviceSynchronize());
    return 0;
}
