// Small kernels for the shared-memory checks (tests/shared_checks.rs). Every kernel
// takes (int *out, int mode): mode 0 leaves out the synchronisation it needs (a race),
// other modes are the variants described at each kernel. Lines marked `// @name` are
// the call sites the tests expect in the reports.

// Read-after-write across a missing barrier: thread t reads what thread t-1 wrote.
// mode 1: with the barrier.
extern "C" __global__ void raw_race(int *out, int mode) {
    __shared__ int s[64];
    const int t = threadIdx.x;
    s[t] = 10 * t; // @raw-write
    if (mode) __syncthreads();
    if (t > 0) out[t] = s[t - 1]; // @raw-read
}

// Write-after-read: thread t reads s[t+1], then writes s[t] (which thread t-1 read).
// mode 1: a barrier between the reads and the writes.
extern "C" __global__ void war_race(int *out, int mode) {
    __shared__ int s[65];
    const int t = threadIdx.x;
    s[t] = t;
    if (t == 0) s[64] = 64;
    __syncthreads();
    const int v = s[t + 1]; // @war-read
    if (mode) __syncthreads();
    s[t] = v + 1; // @war-write
    out[t] = v;
}

// Write-after-write: every thread writes the one flag. mode 1: thread 0 writes it,
// then after a barrier thread 1 does.
extern "C" __global__ void waw_race(int *out, int mode) {
    __shared__ int flag;
    const int t = threadIdx.x;
    if (mode == 0) {
        flag = t; // @waw-write
    } else {
        if (t == 0) flag = 1;
        __syncthreads();
        if (t == 1) flag = 2;
    }
    __syncthreads();
    out[t] = flag;
}

// Lanes of one warp exchange values through shared memory. mode 0: nothing between the
// write and the read; 1: only a __shfl_sync (which does not order memory); 2: a
// __syncwarp (which does). mode 3: __syncwarp, but the block has two warps and each
// thread reads its counterpart in the other warp (a __syncwarp does not order them).
extern "C" __global__ void warp_exchange(int *out, int mode) {
    __shared__ int s[64];
    const int t = threadIdx.x;
    s[t] = t + 100; // @warp-write
    int k = t;
    if (mode == 1) k = __shfl_sync(0xffffffffu, t, (t + 1) & 31);
    if (mode >= 2) __syncwarp();
    const int src = mode == 3 ? (t ^ 32) : (t ^ 1);
    out[t] = s[src] + 0 * k; // @warp-read
}

// Atomics only: every thread adds to one counter; thread 0 reads it after a barrier.
// mode 0 (race): thread 0 reads it without the barrier, while other threads add.
extern "C" __global__ void atomic_count(int *out, int mode) {
    __shared__ int count;
    const int t = threadIdx.x;
    if (t == 0) count = 0;
    __syncthreads();
    atomicAdd(&count, 1); // @atomic-add
    if (mode) __syncthreads();
    if (t == 0) out[0] = count; // @atomic-read
}

// Dynamic shared memory: thread t reads what thread t-1 wrote. mode 1: with the barrier.
extern "C" __global__ void dyn_race(int *out, int mode) {
    extern __shared__ int d[];
    const int t = threadIdx.x;
    d[t] = t; // @dyn-write
    if (mode) __syncthreads();
    if (t > 0) out[t] = d[t - 1]; // @dyn-read
}

// Reads shared memory nobody wrote (poison mode shows it): out[0..3] the bits of a
// static float, out[4..7] a static int, out[8..11] dynamic shared memory. mode 1 writes
// them first (the tests use mode 0; a variable no code ever writes would be folded to
// its zero initialiser by the host compiler).
extern "C" __global__ void read_unwritten(int *out, int mode) {
    __shared__ float f[4];
    __shared__ int i[4];
    extern __shared__ int d[];
    const int t = threadIdx.x;
    if (mode == 1 && t < 4) {
        f[t] = 1.0f;
        i[t] = 1;
        d[t] = 1;
    }
    __syncthreads();
    if (t < 4) {
        out[t] = __float_as_int(f[t]);
        out[4 + t] = i[t];
        out[8 + t] = d[t];
    }
}
