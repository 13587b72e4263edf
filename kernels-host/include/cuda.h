/* simtwin shim for <cuda.h>: device code compiled as host C++ (see simtwin/prelude.h). */
#ifndef __SIMTWIN_SHIM_CUDA_H
#define __SIMTWIN_SHIM_CUDA_H
#pragma GCC system_header
#include "simtwin/prelude.h"
#include "simtwin/host_types.h"
#endif
