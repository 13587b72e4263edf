/* cudaProfilerStart / cudaProfilerStop, as the CUDA runtime API reference declares them,
 * for toolkits installed without NVIDIA's profiler-API header (the PyPI nvcc this
 * repository pins ships it in a separate wheel, nvidia-cuda-profiler-api).
 * scripts/runtime-samples-check puts this directory on the include path only when the
 * toolkit has no cuda_profiler_api.h; simtwin's libcudart.so.13 implements both calls. */
#ifndef SIMTWIN_CUDA_PROFILER_API_H
#define SIMTWIN_CUDA_PROFILER_API_H
#include <driver_types.h>
#ifdef __cplusplus
extern "C" {
#endif
extern cudaError_t cudaProfilerStart(void);
extern cudaError_t cudaProfilerStop(void);
#ifdef __cplusplus
}
#endif
#endif
