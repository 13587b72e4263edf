/* simtwin shim for <cuda_runtime.h>, force-included into every .cu as nvcc force-includes
   the real one: the device prelude, and the runtime API's types and declarations from the
   CUDA toolkit (driver_types.h, library_types.h, cuda_runtime_api.h, driver_functions.h,
   as nvcc's cuda_runtime.h includes them; not cuda.h, which nvcc's does not include
   either). Without a toolkit (kernels-host --no-nvcc-check and no nvcc found) only the
   few types of simtwin/host_types.h are declared. */
#ifndef __SIMTWIN_SHIM_CUDA_RUNTIME_H
#define __SIMTWIN_SHIM_CUDA_RUNTIME_H
#pragma GCC system_header
#include "simtwin/prelude.h"
#ifdef __SIMTWIN_CUDA_TOOLKIT
#include <builtin_types.h>
#include <library_types.h>
#include <cuda_runtime_api.h>
#include <driver_functions.h>
#elif !defined(CUDART_VERSION)
#define CUDART_VERSION 13000
#endif
#include "simtwin/host_types.h"
#endif
