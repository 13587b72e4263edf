/* simtwin shim for <device_launch_parameters.h>: device code compiled as host C++ (see simtwin/prelude.h). */
#ifndef __SIMTWIN_SHIM_DEVICE_LAUNCH_PARAMETERS_H
#define __SIMTWIN_SHIM_DEVICE_LAUNCH_PARAMETERS_H
#pragma GCC system_header
#include "simtwin/prelude.h"
#include "simtwin/host_types.h"
#endif
