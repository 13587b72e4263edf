// User names equal to names the generated code and the shim once used: kernels,
// variables and parameters named k, g, m, s, n, p, ctx, params, first, count, simtwin_*,
// and namespaces holding variables named like generated identifiers.
#include <cuda_runtime.h>

__device__ int g = 5;                        // once registered as the generated local `g`
__device__ int m[4] = {1, 2, 3, 4};
__device__ float s;
__constant__ int n = 7;
__device__ int p, ctx, params, first, count;
__device__ int simtwin_rt, simtwin_tls_ctx, simtwin_module, simtwin_kernel_regs;
__device__ int simtwin_kreg_0, simtwin_greg_0, simtwin_bind, simtwin_ctx_slot;

// A kernel named like the generated registration's local.
extern "C" __global__ void k(int *out, int g, int m, int s) { out[0] = g + m + s + ::g + n; }

// Parameters named like the runner's.
extern "C" __global__ void runner_names(int *params, int ctx, int first, int n, int count, int p) {
    params[0] = ctx + first + n + count + p;
    params[1] = m[3] + ::count + ::first;
}

namespace ns {
// Variables named like generated identifiers, in the namespace where the kernel's
// registration is emitted.
__device__ int simtwin_kernel_t = 1, simtwin_global_t = 2, detail = 3, uint32_t = 4;
__device__ int k = 40;
__global__ void k2(int *out) { out[0] = k + detail + uint32_t + simtwin_kernel_t; }
}
namespace detail {
// A user namespace called `detail` (the shim has __simtwin::detail).
__device__ int g = 9;
__global__ void in_detail(int *out) { out[0] = g; }
}
extern "C" __global__ void simtwin_printf(int *out) { out[0] = simtwin_rt + simtwin_tls_ctx + 1; }
