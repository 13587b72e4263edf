// Device code that sees the CUDA toolkit's types through <cuda.h>, <cuda_runtime_api.h>
// and a header shared with host code, as it does with nvcc; struct members and
// parameters named like the built-in variables.
#include "toolkit/state.h"
#include <cuComplex.h>

struct Shape { dim3 gridDim; dim3 blockDim; };

extern "C" __global__ void read_state(State s, int *out) {
    out[0] = s.last == CUDA_ERROR_INVALID_VALUE;
    out[1] = (int)sizeof(State);
    out[2] = (int)s.dev;
    out[3] = s.rt_err == cudaErrorInvalidValue;
    out[4] = s.kind == cudaMemcpyDeviceToHost;
    out[5] = s.where == CU_MEMORYTYPE_DEVICE;
    out[6] = (int)(s.buf >> 32);
    cuFloatComplex c = make_cuFloatComplex(1.0f, 2.0f);
    out[7] = (int)cuCrealf(cuCmulf(c, c)); // (1+2i)^2 = -3+4i
    out[8] = CUDA_VERSION >= 12000 && CUDART_VERSION >= 12000;
}

extern "C" __global__ void shape(Shape sh, dim3 gridDim, int *out) {
    out[0] = (int)(sh.gridDim.x + sh.blockDim.y + gridDim.z + blockDim.x + threadIdx.x);
}
