// A header shared by host and device code, as real projects have them: it names the
// driver's and the runtime's types (and declares host functions device code never calls).
#pragma once
#include <cuda.h>
#include <cuda_runtime_api.h>

typedef struct State {
    CUcontext ctx;
    CUstream str;
    CUevent ev;
    CUdevice dev;
    CUdeviceptr buf;
    CUresult last;
    CUmemorytype where;
    cudaStream_t rt_stream;
    cudaError_t rt_err;
    enum cudaMemcpyKind kind;
} State;

static inline const char *describe(CUresult r) { return r == CUDA_SUCCESS ? "ok" : "failed"; }
int state_init(State *s, CUdevice dev);
