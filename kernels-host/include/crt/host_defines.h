/* simtwin's stand-in for the CUDA toolkit's crt/host_defines.h, which the toolkit's type
   headers (driver_types.h, cuda_runtime_api.h, ...) include by that name: kernels-host
   reads those real headers (see cuda_runtime_api.h) and this file gives them the few
   annotation macros they use. The execution-space keywords (__host__, __device__,
   __global__, ...) are deliberately not macros: kernels-host's rewriter removes them (in
   the toolkit's headers too) and records kernels and globals in the user's code. */
#ifndef __SIMTWIN_CRT_HOST_DEFINES_H
#define __SIMTWIN_CRT_HOST_DEFINES_H
#pragma GCC system_header
/* What the toolkit's own host_defines.h would define; its include guard, so that it is
   never read even if reached by another path. */
#define __HOST_DEFINES_H__
#ifndef __align__
#define __align__(n) __attribute__((aligned(n)))
#endif
#ifndef __builtin_align__
#define __builtin_align__(n) __attribute__((aligned(n)))
#endif
#ifndef __device_builtin__
#define __device_builtin__
#endif
#define __device_builtin_texture_type__
#define __device_builtin_surface_type__
#ifndef __cudart_builtin__
#define __cudart_builtin__
#endif
#define CUDARTAPI
#define CUDARTAPI_CDECL
#define __specialization_static
#define __no_return__ __attribute__((noreturn))
#define __thread__ __thread
#define __import__
#define __export__
#define __nv_pure__ __attribute__((pure))
#define __annotate__(a)
#define __location__(a)
#define __cluster_dims__(...)
#define __block_size__(...)
#define __maxnreg__(n)
#define __local_maxnreg__(n)
#define __inline_hint__
#define __NV_TL__
#define __NV_TL_BUILTIN__
#ifndef __CUDA_ARCH_HAS_FEATURE__
#define __CUDA_ARCH_HAS_FEATURE__(_FEAT) __CUDA_ARCH_FEAT_##_FEAT
#endif
#define __CUDA_HAS_ARCH_FAMILY_SPECIFIC(N) 0
#define __CUDA_HAS_ARCH_SPECIFIC(N) 0
#endif
