// Kernels for PTX mode's own tests (emu-driver/tests/ptx_mode.rs): what the instruction
// suite does not reach — calls with parameters and results, recursion, function
// pointers, local arrays, static and dynamic shared memory, barrier reductions, warp
// collectives, shared and global atomics, printf, malloc/free, 64-bit and double math.
#include <cassert>
#include <cstdint>
#include <cstdio>

__device__ __noinline__ int collatz_steps(unsigned long long n, int depth) {
    if (n <= 1 || depth > 500) return 0;
    return 1 + collatz_steps((n & 1) ? 3 * n + 1 : n / 2, depth + 1);  // recursion
}

struct Pair { double a; int b; };
__device__ __noinline__ Pair mix(Pair p, float s) { return Pair{__dadd_rn(__dmul_rn(p.a, s), 1.0), p.b ^ (int)s}; }

typedef int (*op_t)(int, int);
__device__ int op_add(int a, int b) { return a + b; }
__device__ int op_mul(int a, int b) { return a * b; }
__device__ op_t ops[2] = {op_add, op_mul};

extern "C" __global__ void calls(const int *in, long long *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    Pair p = mix(Pair{(double)in[i], in[i]}, 3.0f);
    op_t f = ops[i & 1];                                   // indirect call
    out[i] = collatz_steps((unsigned long long)in[i] + 1, 0) * 1000000LL + (long long)p.a + p.b + f(in[i], 7);
}

extern "C" __global__ void local_array(const int *in, int *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    int a[32];                                             // dynamically indexed: .local
    for (int k = 0; k < 32; ++k) a[k] = in[i] * k + (k ^ i);
    int s = 0;
    for (int k = 0; k < 32; ++k) s += a[(k * 7 + in[i]) & 31];
    out[i] = s;
}

__shared__ int tile_static[64];
extern "C" __global__ void shared_mem(const int *in, int *out) {
    extern __shared__ int dyn[];
    __shared__ unsigned hist[8];
    int t = threadIdx.x;
    if (t < 8) hist[t] = 0;
    tile_static[t] = in[blockIdx.x * 64 + t];
    __syncthreads();
    dyn[t] = tile_static[63 - t] * 2;
    __syncthreads();
    atomicAdd(&hist[dyn[t] & 7], 1u);                      // shared atomics
    int cnt = __syncthreads_count(dyn[t] > 100);
    int any = __syncthreads_or(dyn[t] == 0);
    out[blockIdx.x * 64 + t] = dyn[(t + 1) & 63] + tile_static[t] + (int)hist[t & 7] * 1000 + cnt * 100000 + any * 10000000;
}

// Initialized __constant__ values read at fixed addresses: PTX mode runs those loads as
// literals while the module's copies hold the initial values (simtwin-ptx `constants`);
// the client then writes other values, which both kernels must see.
__constant__ int c_taps = 5;
__constant__ float c_gain[2] = {1.5f, -0.25f};

extern "C" __global__ void const_plain(const int *in, float *out, int n) {  // barrier-free
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    int s = 0;
    for (int k = 0; k < c_taps; ++k) s += in[(i + k) % n];
    out[i] = s * c_gain[0] + c_gain[1];
}

extern "C" __global__ void const_loops(const int *in, int *out) {  // a barrier, a shuffle
    __shared__ int tile[64];
    int t = threadIdx.x;
    tile[t] = in[blockIdx.x * 64 + t];
    __syncthreads();
    int s = 0;
    for (int k = 0; k < c_taps; ++k) s += tile[(t + k) & 63];
    s += __shfl_down_sync(0xffffffff, s, 1);
    out[blockIdx.x * 64 + t] = s;
}

extern "C" __global__ void warp_ops(const int *in, int *out) {
    int t = threadIdx.x, v = in[t];
    int s = v;
    for (int o = 16; o; o >>= 1) s += __shfl_xor_sync(0xffffffff, s, o);
    unsigned b = __ballot_sync(0xffffffff, v & 1);
    int up = __shfl_up_sync(0xffffffff, v, 3, 8);
    out[t] = s + (int)__popc(b) * 7 + up;
}

extern "C" __global__ void atomics(const float *in, float *fsum, unsigned long long *usum, int *imax, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    atomicAdd(fsum, in[i] > 0 ? 1.0f : 2.0f);              // order-independent sum
    atomicAdd(usum, (unsigned long long)(in[i] * 1000.0f));
    atomicMax(imax, (int)(in[i] * 100.0f));
}

extern "C" __global__ void math64(const double *in, double *out, unsigned long long *q, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    double x = in[i];
    out[i] = __dadd_rn(__dmul_rn(sqrt(fabs(x)), x), 1.0 / (x + 3.0));
    unsigned long long a = (unsigned long long)(fabs(x) * 1e12) + 12345;
    q[i] = a / 7 + a % 1000003 + __umul64hi(a, 0x9e3779b97f4a7c15ull);
}

extern "C" __global__ void say(int n) {
    int *p = (int *)malloc(sizeof(int) * 4);
    if (p) { p[0] = n; p[3] = n * 2; }
    if (threadIdx.x == 0) printf("block %d of %d: %d %s %.3f %lld\n", blockIdx.x, gridDim.x, p ? p[0] + p[3] : -1, "ok", 1.5, (long long)-42);
    free(p);
}

extern "C" __global__ void checks(int n) {
    assert(n != threadIdx.x);
}
