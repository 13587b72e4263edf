/* simtwin shim for <cuda.h>: the CUDA toolkit's own cuda.h (the driver API's handle
   types, enums, structs and declarations, as device code compiled by nvcc sees them), read
   after the device prelude. kernels-host finds the toolkit next to nvcc and puts the few
   type headers it reads after every other include directory; see README ("CUDA headers"). */
#ifndef __SIMTWIN_SHIM_CUDA_H
#define __SIMTWIN_SHIM_CUDA_H
#pragma GCC system_header
#include "simtwin/prelude.h"
#ifdef __SIMTWIN_CUDA_TOOLKIT
#include_next <cuda.h>
#else
#error "simtwin: <cuda.h> is the CUDA toolkit's header and kernels-host did not find the toolkit: set NVCC (or SIMTWIN_CUDA_INCLUDE to the directory holding cuda.h)"
#endif
#endif
