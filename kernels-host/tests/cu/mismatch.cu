// A source whose kernels differ between the host build (__SIMTWIN__ defined) and nvcc's:
// the cross-check must name all three differences.
#include <cuda_runtime.h>
#ifdef __SIMTWIN__
typedef long long count_t;
__global__ void host_only(int *p) { *p = 1; }
#else
typedef int count_t;
__global__ void nvcc_only(int *p) { *p = 2; }
#endif
__global__ void sizes(int *p, count_t n) { *p = (int)n; }
struct Opts {
#ifdef __SIMTWIN__
    double scale;
#else
    float scale;
#endif
};
extern "C" __global__ void by_value(Opts o, int *p) { *p = (int)o.scale; }
