// Globals, constant tables, static and dynamic shared memory, atomics, printf, assert.
#include <cuda.h>
#include <assert.h>

#ifdef DEVICE_CODE
__constant__ float weights[5] = {0.5f, 1.5f, 2.5f, 3.5f, 4.5f};
__constant__ const int primes[4] = {2, 3, 5, 7};
__device__ unsigned long long counter;
__device__ int histogram[16];
static __device__ double dsum;
namespace stats { __device__ float fsum; }
#endif

extern __shared__ unsigned char g_smem[];

extern "C" __global__ void use_tables(float *out) {
    unsigned t = threadIdx.x;
    out[t] = weights[t % 5] * (float)primes[t % 4];
    atomicAdd(&counter, 1ull);
    atomicAdd(&histogram[t % 16], 1);
    atomicAdd(&dsum, 0.25);
    atomicAdd(&stats::fsum, 1.0f);
}

extern "C" __global__ void shared_mem(int *out) {
    extern __shared__ __align__(16) int dyn[];
    __shared__ int st[32];
    unsigned t = threadIdx.x;
    st[t] = (int)t * 3;
    dyn[t] = (int)t + 100;
    out[t] = st[t] + dyn[t] + (int)g_smem[0];
}

extern "C" __global__ void atomics(int *i, unsigned *u, unsigned long long *ull, float *f, double *d, long long *ll) {
    atomicAdd(&i[0], 2); atomicSub(&i[1], 3); atomicExch(&i[2], 42); atomicMin(&i[3], -5); atomicMax(&i[4], 9);
    atomicAnd(&i[5], 0x0f); atomicOr(&i[6], 0x100); atomicXor(&i[7], 0xff);
    atomicCAS(&i[8], 7, 8);
    atomicInc(&u[0], 3u); atomicDec(&u[1], 3u); atomicMin(&u[2], 4u); atomicMax(&u[3], 4u);
    atomicAdd(&u[4], 1u); atomicCAS_block(&u[5], 0u, 5u);
    atomicAdd(&ull[0], 1ull << 40); atomicMax(&ull[1], 77ull); atomicMin(&ull[2], 3ull);
    atomicCAS(&ull[3], 1ull, 2ull); atomicExch_system(&ull[4], 9ull);
    atomicAdd(&f[0], 0.5f); atomicExch(&f[1], 2.0f);
    atomicAdd(&d[0], 0.125);
    atomicMin(&ll[0], -7ll); atomicMax(&ll[1], 7ll);
}

extern "C" __global__ void speak(int v) {
    printf("thread %u says %d\n", threadIdx.x, v);
    assert(v != 13);
}
extern "C" __global__ void trap_now(int v) { if (v) __trap(); }
extern "C" __global__ void divide(int *out, int a, int b) { out[0] = a / b; }
extern "C" __global__ void cast(int *out, float f) { out[0] = (int)f; }
extern "C" __global__ void count_up(unsigned long long *c, double *d, float *f) {
    atomicAdd(c, 1ull);
    atomicAdd(d, 1.0);
    atomicAdd(f, 1.0f);
}
