/* The few driver/runtime types that device-side sources name. Host API functions are
   deliberately absent: kernel libraries call nothing in the driver. */
#ifndef __SIMTWIN_HOST_TYPES_H
#define __SIMTWIN_HOST_TYPES_H
#pragma GCC system_header
#include "simtwin/prelude.h"
typedef unsigned long long CUdeviceptr;
typedef unsigned long long cudaTextureObject_t;
typedef unsigned long long cudaSurfaceObject_t;
#include "simtwin/texture.h"
#endif
