#include <cuda_runtime.h>
// A deliberate compile error on line 5.
__global__ void k(float *p) {
    p[0] = 1.0f;
    p[1] = undefined_identifier;
}
