/* simtwin shim for <cuda_runtime.h>: device code compiled as host C++ (see simtwin/prelude.h). */
#ifndef __SIMTWIN_SHIM_CUDA_RUNTIME_H
#define __SIMTWIN_SHIM_CUDA_RUNTIME_H
#pragma GCC system_header
#include "simtwin/prelude.h"
#include "simtwin/host_types.h"
#endif
