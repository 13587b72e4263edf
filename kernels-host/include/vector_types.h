/* simtwin shim for <vector_types.h>: device code compiled as host C++ (see simtwin/prelude.h). */
#ifndef __SIMTWIN_SHIM_VECTOR_TYPES_H
#define __SIMTWIN_SHIM_VECTOR_TYPES_H
#pragma GCC system_header
#include "simtwin/prelude.h"
#include "simtwin/host_types.h"
#endif
