/* simtwin shim for <cuda_runtime_api.h>: the CUDA toolkit's own header (the runtime API's
   types such as cudaStream_t, cudaError_t, cudaMemcpyKind and its declarations), read
   after the device prelude; see cuda.h. Kernel libraries call nothing in the runtime: the
   declarations are there because headers shared with host code name them. */
#ifndef __SIMTWIN_SHIM_CUDA_RUNTIME_API_H
#define __SIMTWIN_SHIM_CUDA_RUNTIME_API_H
#pragma GCC system_header
#include "simtwin/prelude.h"
#ifdef __SIMTWIN_CUDA_TOOLKIT
#include_next <cuda_runtime_api.h>
#else
#error "simtwin: <cuda_runtime_api.h> is the CUDA toolkit's header and kernels-host did not find the toolkit: set NVCC (or SIMTWIN_CUDA_INCLUDE to the directory holding cuda.h)"
#endif
#endif
