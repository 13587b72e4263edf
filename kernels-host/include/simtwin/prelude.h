/*
 * simtwin device prelude: what nvcc makes implicitly available to device code, for
 * CUDA C++ compiled as host C++ by kernels-host. Force-included (-include) into every
 * .cu, as nvcc force-includes cuda_runtime.h.
 *
 * The CUDA keywords (__global__, __device__, __host__, __constant__, __shared__,
 * __managed__, __launch_bounds__, __forceinline__, __noinline__, __grid_constant__) are
 * NOT macros: the kernels-host source rewriter sees them in the preprocessed source and
 * replaces them, because it must record kernels, globals and launch bounds, and because
 * macros named like GCC attribute spellings would break the C++ standard library headers.
 *
 * Everything the device does at run time (barriers, warp collectives, traps, printf,
 * clocks) goes through the runtime table handed over by `bind` (see abi.h); the library
 * has no undefined symbols toward the driver.
 */
#ifndef __SIMTWIN_PRELUDE_H
#define __SIMTWIN_PRELUDE_H
#pragma GCC system_header
#include "simtwin/names_push.h"

#ifndef __cplusplus
#error "simtwin: CUDA sources are compiled as C++"
#endif
#if __cplusplus < 201103L
#error "simtwin: C++11 or later is required"
#endif

#include <stdint.h>
#include <stddef.h>
#include <string.h>
#include <stdio.h>
#include <stdarg.h>
#include <stdlib.h>
#include <limits.h>
#include <float.h>
#include <math.h>
#include <cmath>
#include <new>
#include <limits>
#include <utility>
#include <type_traits>

/* The ABI's types live in namespace __simtwin, so that no name of the shim can collide
   with a name of the user's code (every other shim identifier is __simtwin_-prefixed or
   in that namespace: names the implementation reserves). */
namespace __simtwin {
#include "simtwin/abi.h"
}

#ifndef __CUDACC__
#define __CUDACC__ 1
#endif
#ifndef __NVCC__
#define __NVCC__ 1
#endif
#ifndef __CUDA_ARCH__
#define __CUDA_ARCH__ 900
#endif
#ifndef __SIMTWIN__
#define __SIMTWIN__ 1
#endif
#ifndef __CUDACC_VER_MAJOR__
#define __CUDACC_VER_MAJOR__ 13
#define __CUDACC_VER_MINOR__ 0
#define __CUDACC_VER_BUILD__ 0
#endif

#define __align__(n) __attribute__((aligned(n)))
#define __builtin_align__(n) __attribute__((aligned(n)))
#define __device_builtin__
#define __cudart_builtin__
#define __CUDA_ALIGN__(n) __attribute__((aligned(n)))

#define __SIMTWIN_INLINE static inline __attribute__((always_inline))
#define __SIMTWIN_HIDDEN __attribute__((visibility("hidden")))

/* ---- runtime hooks (defined once per library by the generated registry) ---------- */

namespace __simtwin {
/* The current CUDA thread's context, stored by the executor before every resume.
   initial-exec: threadIdx & co. are a plain %fs-relative load, no __tls_get_addr call.
   It is defined in a tiny library of its own (libsimtwin-tls.so.2, beside the kernel
   libraries, see runtime/simtwin_tls.cpp): an initial-exec access puts the *defining*
   module's whole TLS block into the process's small static TLS reserve, and a kernel
   library's own TLS holds its __shared__ arrays (tens of KiB), which would not fit. */
extern __thread simtwin_thread_ctx_t *tls_ctx __attribute__((tls_model("initial-exec")));
/* The runtime table handed over by bind(). */
extern const simtwin_runtime_t *rt __SIMTWIN_HIDDEN;
}

/* Memory fence scopes passed to runtime->threadfence (abi.h leaves them open). */
#define __SIMTWIN_FENCE_BLOCK 0u
#define __SIMTWIN_FENCE_DEVICE 1u
#define __SIMTWIN_FENCE_SYSTEM 2u

extern "C" {
/* Implemented in the per-library runtime (simtwin_runtime.cpp, -frounding-math). */
float __simtwin_f_op(int op, int mode, float a, float b, float c) __SIMTWIN_HIDDEN;
double __simtwin_d_op(int op, int mode, double a, double b, double c) __SIMTWIN_HIDDEN;
float __simtwin_i2f(int kind, int mode, uint64_t bits) __SIMTWIN_HIDDEN;
double __simtwin_i2d(int kind, int mode, uint64_t bits) __SIMTWIN_HIDDEN;
float __simtwin_d2f(int mode, double x) __SIMTWIN_HIDDEN;
float __simtwin_frsqrt_rn(float x) __SIMTWIN_HIDDEN;
void __simtwin_trap_now(uint32_t kind, const char *msg, const char *file, uint32_t line)
    __SIMTWIN_HIDDEN __attribute__((noreturn));
int __simtwin_printf(const char *fmt, ...) __SIMTWIN_HIDDEN __attribute__((format(printf, 1, 2)));
void __simtwin_assert_fail(const char *expr, const char *file, unsigned line, const char *fn)
    __SIMTWIN_HIDDEN __attribute__((noreturn));
}
/* Operation and rounding-mode codes shared with simtwin_runtime.cpp. */
enum { __SIMTWIN_OP_ADD = 0, __SIMTWIN_OP_SUB, __SIMTWIN_OP_MUL, __SIMTWIN_OP_DIV, __SIMTWIN_OP_SQRT,
       __SIMTWIN_OP_RCP, __SIMTWIN_OP_FMA };
enum { __SIMTWIN_RN = 0, __SIMTWIN_RZ = 1, __SIMTWIN_RU = 2, __SIMTWIN_RD = 3 };
enum { __SIMTWIN_I32 = 0, __SIMTWIN_U32 = 1, __SIMTWIN_I64 = 2, __SIMTWIN_U64 = 3 };

#include "simtwin/device_values.h"
#include "simtwin/vector_types.h"
#include "simtwin/intrinsics.h"
#include "simtwin/atomics.h"
#include "simtwin/warp.h"
#include "simtwin/registry_support.h"
#include "simtwin/device_defined.h"

#include "simtwin/names_pop.h"
#endif /* __SIMTWIN_PRELUDE_H */
