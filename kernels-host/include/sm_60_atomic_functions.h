/* simtwin shim for <sm_60_atomic_functions.h>: device code compiled as host C++ (see simtwin/prelude.h). */
#ifndef __SIMTWIN_SHIM_SM_60_ATOMIC_FUNCTIONS_H
#define __SIMTWIN_SHIM_SM_60_ATOMIC_FUNCTIONS_H
#pragma GCC system_header
#include "simtwin/prelude.h"
#include "simtwin/host_types.h"
#endif
