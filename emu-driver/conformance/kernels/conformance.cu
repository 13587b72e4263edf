// Test kernels for driver-conformance. Built twice: by nvcc into a fatbin with an sm_90
// cubin (for the real driver, and as the module image the emulated driver parses), and by
// `kernels-host build` into a host kernel library (what the emulated driver runs).
//
// Every entry is extern "C" so the runner can look it up by a plain name.
#include <cassert>
#include <cstring>

// 32 words, initialised in the source: cuModuleGetGlobal_v2 reports 128 bytes.
__constant__ unsigned c_table[32] = {
    0x00000001u, 0x00000003u, 0x00000007u, 0x0000000fu, 0x0000001fu, 0x0000003fu, 0x0000007fu, 0x000000ffu,
    0x9e3779b9u, 0x7f4a7c15u, 0xf39cc060u, 0x5ced1ef2u, 0x85ebca6bu, 0xc2b2ae35u, 0x27d4eb2fu, 0x165667b1u,
    0xdeadbeefu, 0xcafebabeu, 0x0badf00du, 0xfeedfaceu, 0x12345678u, 0x9abcdef0u, 0x0f1e2d3cu, 0x4b5a6978u,
    0x80000000u, 0x40000000u, 0x20000000u, 0x10000000u, 0x08000000u, 0x04000000u, 0x02000000u, 0x01000000u,
};

// A __device__ variable the host writes through cuModuleGetGlobal_v2 + cuMemcpyHtoD.
__device__ unsigned d_bias;

// out[i] = i * 2654435761 + d_bias, for i < n.
extern "C" __global__ void fill_hash(unsigned *out, unsigned n)
{
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = i * 2654435761u + d_bias;
}

// Per-block sum of in[] through dynamic shared memory and a barrier tree.
// Needs blockDim.x a power of two and blockDim.x * 4 bytes of dynamic shared memory.
extern "C" __global__ void block_sum(const unsigned *in, unsigned *out)
{
    extern __shared__ unsigned s_buf[];
    unsigned t = threadIdx.x;
    s_buf[t] = in[blockIdx.x * blockDim.x + t];
    __syncthreads();
    for (unsigned half = blockDim.x / 2; half > 0; half /= 2) {
        if (t < half)
            s_buf[t] += s_buf[t + half];
        __syncthreads();
    }
    if (t == 0)
        out[blockIdx.x] = s_buf[0];
}

// out[i] = c_table[i % 32] ^ i.
extern "C" __global__ void const_lookup(unsigned *out, unsigned n)
{
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = c_table[i % 32] ^ i;
}

// At most 128 threads per block: cuFuncGetAttribute(MAX_THREADS_PER_BLOCK) answers 128;
// 2048 bytes of static shared memory: SHARED_SIZE_BYTES answers 2048.
extern "C" __global__ void __launch_bounds__(128) bounded(unsigned *out)
{
    __shared__ unsigned s_words[512];
    unsigned t = threadIdx.x;
    for (unsigned k = t; k < 512; k += blockDim.x)
        s_words[k] = k * 3u + 1u;
    __syncthreads();
    out[blockIdx.x * blockDim.x + t] = s_words[(t * 5u) % 512u];
}

// 40 KiB of static shared memory: with dynamic shared memory on top the 48 KiB limit
// is crossed sooner.
extern "C" __global__ void big_static(unsigned *out)
{
    __shared__ unsigned s_big[10240];
    unsigned t = threadIdx.x;
    for (unsigned k = t; k < 10240; k += blockDim.x)
        s_big[k] = k;
    __syncthreads();
    out[t] = s_big[(t * 37) % 10240];
}

// Uses whatever dynamic shared memory it is given: writes its size in words to out[0].
extern "C" __global__ void dyn_shared(unsigned *out, unsigned words)
{
    extern __shared__ unsigned s_dyn[];
    unsigned t = threadIdx.x;
    for (unsigned k = t; k < words; k += blockDim.x)
        s_dyn[k] = k;
    __syncthreads();
    if (t == 0) {
        unsigned acc = 0;
        for (unsigned k = 0; k < words; ++k)
            acc += s_dyn[k];
        out[0] = acc;
    }
}

// Mixed, differently aligned parameters: checks kernelParams and the `extra` buffer.
// out[0] = a, out[1..2] = bits of b, out[3] = c, out[4] = d.
extern "C" __global__ void mixed_params(char a, double b, short c, unsigned *out, unsigned d)
{
    if (threadIdx.x == 0 && blockIdx.x == 0) {
        unsigned long long bits = (unsigned long long)__double_as_longlong(b);
        out[0] = (unsigned)(int)a;
        out[1] = (unsigned)(bits & 0xffffffffu);
        out[2] = (unsigned)(bits >> 32);
        out[3] = (unsigned)(int)c;
        out[4] = d;
    }
}

// Device-side assert: fails when flag != 0 (-> CUDA_ERROR_ASSERT, sticky).
extern "C" __global__ void assert_kernel(int flag)
{
    assert(flag == 0);
}

// Writes through the pointer it is given (a wild one -> CUDA_ERROR_ILLEGAL_ADDRESS).
extern "C" __global__ void poke(unsigned *p)
{
    if (threadIdx.x == 0 && blockIdx.x == 0)
        *p = 0x600dcafeu;
}

// ================================================================ device-defined results
// What the device computes where C++ leaves the result undefined. Every input comes from
// device memory so that nvcc cannot fold anything; results are stored as bit patterns
// zero-extended to 64 bits (the runner prints them in hex).

// Plain C++ casts (nvcc: cvt.rzi) of each input to the integer type dst: 0 s8, 1 u8,
// 2 s16, 3 u16, 4 s32, 5 u32, 6 s64, 7 u64 (one type per launch: a host build that traps
// on one conversion loses only that type's line).
#define CONF_CAST(NAME, F) \
    extern "C" __global__ void NAME(const F *in, unsigned n, int dst, unsigned long long *out) \
    { \
        unsigned i = blockIdx.x * blockDim.x + threadIdx.x; \
        if (i >= n) \
            return; \
        F x = in[i]; \
        switch (dst) { \
        case 0: out[i] = (unsigned char)(signed char)x; break; \
        case 1: out[i] = (unsigned char)x; break; \
        case 2: out[i] = (unsigned short)(short)x; break; \
        case 3: out[i] = (unsigned short)x; break; \
        case 4: out[i] = (unsigned)(int)x; break; \
        case 5: out[i] = (unsigned)x; break; \
        case 6: out[i] = (unsigned long long)(long long)x; break; \
        default: out[i] = (unsigned long long)x; break; \
        } \
    }
CONF_CAST(cvt_cast_f32, float)
CONF_CAST(cvt_cast_f64, double)

// The conversion intrinsics, 16 per input: int, uint, ll, ull, each _rn, _rz, _ru, _rd.
extern "C" __global__ void cvt_intrin_f32(const float *in, unsigned n, unsigned long long *out)
{
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    float x = in[i];
    unsigned long long *o = out + 16 * i;
    o[0] = (unsigned)__float2int_rn(x);
    o[1] = (unsigned)__float2int_rz(x);
    o[2] = (unsigned)__float2int_ru(x);
    o[3] = (unsigned)__float2int_rd(x);
    o[4] = __float2uint_rn(x);
    o[5] = __float2uint_rz(x);
    o[6] = __float2uint_ru(x);
    o[7] = __float2uint_rd(x);
    o[8] = (unsigned long long)__float2ll_rn(x);
    o[9] = (unsigned long long)__float2ll_rz(x);
    o[10] = (unsigned long long)__float2ll_ru(x);
    o[11] = (unsigned long long)__float2ll_rd(x);
    o[12] = __float2ull_rn(x);
    o[13] = __float2ull_rz(x);
    o[14] = __float2ull_ru(x);
    o[15] = __float2ull_rd(x);
}

extern "C" __global__ void cvt_intrin_f64(const double *in, unsigned n, unsigned long long *out)
{
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    double x = in[i];
    unsigned long long *o = out + 16 * i;
    o[0] = (unsigned)__double2int_rn(x);
    o[1] = (unsigned)__double2int_rz(x);
    o[2] = (unsigned)__double2int_ru(x);
    o[3] = (unsigned)__double2int_rd(x);
    o[4] = __double2uint_rn(x);
    o[5] = __double2uint_rz(x);
    o[6] = __double2uint_ru(x);
    o[7] = __double2uint_rd(x);
    o[8] = (unsigned long long)__double2ll_rn(x);
    o[9] = (unsigned long long)__double2ll_rz(x);
    o[10] = (unsigned long long)__double2ll_ru(x);
    o[11] = (unsigned long long)__double2ll_rd(x);
    o[12] = __double2ull_rn(x);
    o[13] = __double2ull_rz(x);
    o[14] = __double2ull_ru(x);
    o[15] = __double2ull_rd(x);
}

// Integer division and remainder, one pair per thread: q[i] = a[i] / b[i], r[i] = a[i] % b[i].
#define CONF_IDIV(NAME, T) \
    extern "C" __global__ void NAME(const T *a, const T *b, unsigned n, T *q, T *r) \
    { \
        unsigned i = blockIdx.x * blockDim.x + threadIdx.x; \
        if (i < n) { \
            q[i] = a[i] / b[i]; \
            r[i] = a[i] % b[i]; \
        } \
    }
CONF_IDIV(idiv_s32, int)
CONF_IDIV(idiv_u32, unsigned)
CONF_IDIV(idiv_s64, long long)
CONF_IDIV(idiv_u64, unsigned long long)

// Shifts of x[0] by amt[i] (an int: also >= the width, and negative):
// out[2 * i] = x[0] << amt[i], out[2 * i + 1] = x[0] >> amt[i].
#define CONF_SHIFT(NAME, T) \
    extern "C" __global__ void NAME(const T *x, const int *amt, unsigned n, T *out) \
    { \
        unsigned i = blockIdx.x * blockDim.x + threadIdx.x; \
        if (i < n) { \
            T v = x[0]; \
            int k = amt[i]; \
            out[2 * i] = (T)(v << k); \
            out[2 * i + 1] = (T)(v >> k); \
        } \
    }
CONF_SHIFT(shift_s32, int)
CONF_SHIFT(shift_u32, unsigned)
CONF_SHIFT(shift_s64, long long)
CONF_SHIFT(shift_u64, unsigned long long)

// ---------------------------------------------------------------- warp collectives
// One collective per launch (op), called with `mask` by the lanes that reach it; results
// go to out[lane] (width 32) and out[32 + lane] (width 8, shuffles only). Lane L's value
// is in[L]; shuffle sources and deltas are odd so that, with the even/odd masks of
// warp_halves, every source lies outside the caller's mask.
//   op: 0 shfl idx (src 31 - lane), 1 shfl up (delta 9 / 3), 2 shfl down (9 / 3),
//       3 shfl xor (17 / 5), 4 ballot (lane % 3 == 0), 5 any (lane == 20),
//       6 all (lane != 20), 7 reduce_add (in), 8 reduce_min (0x200 - in),
//       9 match_any (lane % 4), 10 activemask, 11 match_all (7 in every lane; its predicate
//       in out[32 + lane]), 12 match_all (lane 2 differs; predicate as 11)
__device__ void warp_op(int op, unsigned mask, unsigned lane, unsigned v, unsigned *out)
{
    switch (op) {
    case 0:
        out[lane] = __shfl_sync(mask, v, 31 - lane);
        out[32 + lane] = __shfl_sync(mask, v, 31 - lane, 8);
        break;
    case 1:
        out[lane] = __shfl_up_sync(mask, v, 9);
        out[32 + lane] = __shfl_up_sync(mask, v, 3, 8);
        break;
    case 2:
        out[lane] = __shfl_down_sync(mask, v, 9);
        out[32 + lane] = __shfl_down_sync(mask, v, 3, 8);
        break;
    case 3:
        out[lane] = __shfl_xor_sync(mask, v, 17);
        out[32 + lane] = __shfl_xor_sync(mask, v, 5, 8);
        break;
    case 4:
        out[lane] = __ballot_sync(mask, lane % 3 == 0);
        break;
    case 5:
        out[lane] = __any_sync(mask, lane == 20);
        break;
    case 6:
        out[lane] = __all_sync(mask, lane != 20);
        break;
    case 7:
        out[lane] = __reduce_add_sync(mask, v);
        break;
    case 8:
        out[lane] = __reduce_min_sync(mask, 0x200u - v);
        break;
    case 9:
        out[lane] = __match_any_sync(mask, lane % 4);
        break;
    case 11: {
        int p = -1;
        out[lane] = __match_all_sync(mask, 7u, &p);
        out[32 + lane] = (unsigned)p;
        break;
    }
    case 12: {
        int p = -1;
        out[lane] = __match_all_sync(mask, lane == 2 ? 1u : 0u, &p);
        out[32 + lane] = (unsigned)p;
        break;
    }
    default:
        out[lane] = __activemask();
        break;
    }
}

// (a) Lanes 16-31 have returned; lanes 0-15 call with the full mask. out[64 + lane] = 1
// marks the lanes that finished.
extern "C" __global__ void warp_exited(const unsigned *in, unsigned *out, int op)
{
    unsigned lane = threadIdx.x & 31;
    unsigned v = in[lane];
    if (lane >= 16)
        return;
    warp_op(op, 0xffffffffu, lane, v, out);
    out[64 + lane] = 1;
}

// (d) A partial warp: the block has 10 threads, each calls with the full mask (lanes
// 10-31 do not exist). Numba's test_match_all_sync launches this shape.
extern "C" __global__ void warp_partial(const unsigned *in, unsigned *out, int op)
{
    unsigned lane = threadIdx.x & 31;
    warp_op(op, 0xffffffffu, lane, in[lane], out);
    out[64 + lane] = 1;
}

// (b) Lanes 16-31 wait at a block barrier while lanes 0-15 call with mask 0x0000ffff
// (their own lanes) and read lanes 16-31 as sources; then they join the barrier.
extern "C" __global__ void warp_waiting(const unsigned *in, unsigned *out, int op)
{
    unsigned lane = threadIdx.x & 31;
    unsigned v = in[lane];
    if (lane >= 16) {
        __syncthreads();
    } else {
        warp_op(op, 0x0000ffffu, lane, v, out);
        __syncthreads();
    }
    out[64 + lane] = 1;
}

// (c) Every lane calls, converged, each with the mask of its parity (even lanes
// 0x55555555, odd lanes 0xaaaaaaaa): the odd sources lie outside the caller's mask.
extern "C" __global__ void warp_halves(const unsigned *in, unsigned *out, int op)
{
    unsigned lane = threadIdx.x & 31;
    unsigned v = in[lane];
    warp_op(op, (lane & 1) ? 0xaaaaaaaau : 0x55555555u, lane, v, out);
    out[64 + lane] = 1;
}

// ---------------------------------------------------------------- __activemask
// Divergent branches: lanes below limit[0] write out[lane], the others out[32 + lane].
extern "C" __global__ void am_branch(const int *limit, unsigned *out)
{
    unsigned lane = threadIdx.x & 31;
    if ((int)lane < limit[0]) {
        out[lane] = __activemask();
    } else {
        unsigned m = __activemask();
        out[32 + lane] = m;
    }
}

// Only lanes with lane % 3 == 0 ask.
extern "C" __global__ void am_mod3(const int *div, unsigned *out)
{
    unsigned lane = threadIdx.x & 31;
    if (lane % (unsigned)div[0] == 0)
        out[lane] = __activemask();
}

// Lanes at or above limit[0] have returned.
extern "C" __global__ void am_exited(const int *limit, unsigned *out)
{
    unsigned lane = threadIdx.x & 31;
    if ((int)lane >= limit[0])
        return;
    out[lane] = __activemask();
}

// A loop whose trip count varies per lane: out[32 * i + lane] in iteration i.
extern "C" __global__ void am_loop(const int *trips, unsigned *out)
{
    unsigned lane = threadIdx.x & 31;
    int n = trips[lane];
    for (int i = 0; i < n; ++i)
        out[32 * i + lane] = __activemask();
}

// The warp-aggregated atomic: in a divergent branch the active lanes elect a leader,
// which reserves __popc(mask) slots with one atomicAdd; the base is shuffled to the
// others and each lane takes base + its rank. out[t] = slot, masks[t] = mask seen.
extern "C" __global__ void am_aggregate(const int *pred, unsigned *counter, unsigned *out,
                                        unsigned *masks)
{
    unsigned t = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned lane = threadIdx.x & 31;
    if (pred[t]) {
        unsigned mask = __activemask();
        int leader = __ffs(mask) - 1;
        unsigned base = 0;
        if ((int)lane == leader)
            base = atomicAdd(counter, (unsigned)__popc(mask));
        base = __shfl_sync(mask, base, leader);
        unsigned rank = (unsigned)__popc(mask & ((1u << lane) - 1u));
        out[t] = base + rank;
        masks[t] = mask;
    }
}

// Type punning as real CUDA code does it (a VMAF fork's filter1d.cu): a uint2 load read
// back through an unsigned short pointer, and an unsigned[2] stored as one uint2. C++'s
// strict-aliasing rule makes both undefined; the device reads the bytes stored.
// out[4t+k] = (in[4t+k] + 1) | 0x10000 (halves), then out[32 + 2t..] = the punned store.
extern "C" __global__ void pun(const unsigned short *in, int n, unsigned *out)
{
    const unsigned t = threadIdx.x;
    const uint2 v = *reinterpret_cast<const uint2 *>(&in[4 * t]);
    const unsigned short *s = reinterpret_cast<const unsigned short *>(&v);
    for (int k = 0; k < 4; ++k)
        out[4 * t + k] = ((unsigned)s[k] + 1u) | 0x10000u;
    __align__(8) unsigned acc[2] = {0u, 0u};
    for (int k = 0; k < n; ++k) {
        acc[0] += (unsigned)k + t;
        acc[1] += 3u * (unsigned)k;
    }
    acc[0] = (acc[0] + 128u) >> 1;
    *reinterpret_cast<uint2 *>(&out[32 + 2 * t]) = *reinterpret_cast<uint2 *>(&acc[0]);
}

// ================================================================ hostile programs
// What a careless program does that the device answers: misaligned accesses, threads and
// blocks that spin on flags others set (independent thread scheduling, sm_70+).

// One access by thread 0 of block 0 at p + off (p 256-byte aligned), of kind:
// 0 a 4-byte store, 1 a 4-byte load, 2 an 8-byte store, 3 a 16-byte (int4) load,
// 4 a 4-byte store into shared memory, 5 memcpy of 4 bytes (byte-wise: never misaligned),
// 6 a member of a packed struct (byte-wise too), 7 a 4-byte atomicAdd; vectors with every
// lane used (ptxas keeps them whole): 8 a float2 load, 9 an int4 store, 10 an int2 store,
// 11 an int4 load, 16 a double2 store; atomics: 12 an 8-byte atomicAdd, 13 a 4-byte
// atomicCAS, 14 a 4-byte atomicAdd in shared memory; 15 a 4-byte __ldg (ld.global.nc).
// out[0] gets what was read (or 0x5eed when nothing was).
struct __attribute__((packed)) packed_pair {
    char c;
    int i;
};
extern "C" __global__ void misaligned(char *p, int off, int kind, unsigned *out)
{
    __shared__ int s_words[16];
    if (threadIdx.x != 0 || blockIdx.x != 0)
        return;
    unsigned r = 0x5eedu;
    switch (kind) {
    case 0: *(int *)(p + off) = 0x11223344; break;
    case 1: r = (unsigned)*(const int *)(p + off); break;
    case 2: *(long long *)(p + off) = 0x1122334455667788ll; break;
    case 3: {
        const int4 v = *(const int4 *)(p + off);
        r = (unsigned)(v.x ^ v.w);
        break;
    }
    case 4: {
        s_words[0] = 0;
        *(int *)((char *)s_words + off) = 5;
        r = (unsigned)s_words[0];
        break;
    }
    case 5: {
        int v;
        memcpy(&v, p + off, 4);
        r = (unsigned)v;
        break;
    }
    case 6: {
        packed_pair *q = (packed_pair *)p;
        q->i = 0x01020304;
        r = (unsigned)q->i;
        break;
    }
    case 7: r = (unsigned)atomicAdd((int *)(p + off), 1); break;
    case 8: {
        const float2 v = *(const float2 *)(p + off);
        r = __float_as_uint(v.x) + __float_as_uint(v.y);
        break;
    }
    case 9: *(int4 *)(p + off) = make_int4(1, 2, 3, 4); break;
    case 10: *(int2 *)(p + off) = make_int2(5, 6); break;
    case 11: {
        const int4 v = *(const int4 *)(p + off);
        r = (unsigned)(v.x + v.y + v.z + v.w);
        break;
    }
    case 12: r = (unsigned)atomicAdd((unsigned long long *)(p + off), 1ull); break;
    case 13: r = (unsigned)atomicCAS((int *)(p + off), 0x11111111, 7); break;
    case 14: {
        s_words[0] = 0;
        s_words[1] = 0;
        __syncwarp();
        r = (unsigned)atomicAdd((int *)((char *)s_words + off), 1);
        break;
    }
    case 15: r = (unsigned)__ldg((const int *)(p + off)); break;
    case 16: *(double2 *)(p + off) = make_double2(1.0, 2.0); break;
    }
    out[0] = r;
}

// Thread `waiter` (grid-linear) spins until *flag is set by thread `setter`:
// mode 0 volatile reads, 1 atomic reads (atomicAdd(flag, 0)) with __threadfence(),
// 2 volatile reads bounded by clock64() (about 2 s on the device: out = 3 when it gave up).
// Every thread writes out[t]: 1, the waiter 2 once it saw the flag.
extern "C" __global__ void spin_flag(int *flag, unsigned waiter, unsigned setter, int mode, unsigned *out)
{
    const unsigned t = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned r = 1u;
    if (t == setter) {
        if (mode == 1) {
            __threadfence();
            atomicExch(flag, 1);
        } else {
            *(volatile int *)flag = 1;
        }
    }
    if (t == waiter) {
        if (mode == 1) {
            while (atomicAdd(flag, 0) == 0)
                __threadfence();
        } else if (mode == 2) {
            const long long t0 = clock64();
            while (*(volatile int *)flag == 0) {
                if (clock64() - t0 > (1ll << 32)) {
                    r = 3u;
                    break;
                }
            }
        } else {
            while (*(volatile int *)flag == 0) {
            }
        }
        if (r == 1u)
            r = 2u;
    }
    out[t] = r;
}

// Thread t (grid-linear, of n) waits until thread t+1 has set flags[t+1], then sets its
// own: the last thread goes first, the first waits for every other one.
// out[t] = 1 + how many flags it saw set (1 + 1, or 1 for the last thread).
extern "C" __global__ void spin_chain(int *flags, unsigned n, unsigned *out)
{
    const unsigned t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= n)
        return;
    unsigned seen = 0;
    if (t + 1 < n) {
        while (*(volatile int *)&flags[t + 1] == 0) {
        }
        seen = 1;
    }
    __threadfence();
    *(volatile int *)&flags[t] = 1;
    out[t] = 1u + seen;
}

// Block b waits (thread 0, spinning) until block b-1 (dir > 0) or b+1 (dir < 0) has set
// its flag, then sets its own. Forward chains complete however many blocks there are
// (earlier blocks are dispatched first); reverse chains only while every block can be
// resident at once. out[b] = 1 for the block that starts the chain, 2 for the others.
extern "C" __global__ void spin_blocks(int *flags, unsigned nb, int dir, unsigned *out)
{
    const unsigned b = blockIdx.x;
    const bool first = dir > 0 ? b == 0 : b == nb - 1;
    if (threadIdx.x == 0 && !first) {
        const unsigned dep = dir > 0 ? b - 1 : b + 1;
        while (*(volatile int *)&flags[dep] == 0) {
        }
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        __threadfence();
        *(volatile int *)&flags[b] = 1;
        out[b] = first ? 1u : 2u;
    }
}

// ---- Textures and surfaces (cases tex_* / texs_* / surf_*) ----------------------------
// One probe per query: thread i reads q[i] (x, y, z, w: w is the layer, the level of
// detail or the gather component, by op) and writes the four result words to out[i].
// `g` holds gradients for tex2DGrad (dx.x, dx.y, dy.x, dy.y). `op` picks the fetch; its
// result type must match the texture's read mode (float for normalized-float reads and
// float formats, int/unsigned for element-type reads of integer formats).
enum TexProbeOp {
    TP_1D = 0, TP_2D = 1, TP_3D = 2, TP_1D_LAYERED = 3, TP_2D_LAYERED = 4, TP_CUBE = 5,
    TP_2D_LOD = 6, TP_2D_GRAD = 7, TP_GATHER = 8, TP_FETCH = 9, TP_CUBE_LAYERED = 10,
    TP_1D_LOD = 11, TP_3D_LOD = 12,
    TP_2D_INT = 20, TP_2D_UINT = 21, TP_FETCH_INT = 22, TP_FETCH_UINT = 23, TP_GATHER_UINT = 24,
    TP_1D_INT = 25
};

template <class T>
__device__ __forceinline__ void tex_store(uint4 *o, T v)
{
    uint4 r;
    r.x = *(unsigned *)&v.x;
    r.y = *(unsigned *)&v.y;
    r.z = *(unsigned *)&v.z;
    r.w = *(unsigned *)&v.w;
    *o = r;
}

extern "C" __global__ void tex_probe(cudaTextureObject_t t, unsigned op, const float4 *q, const float4 *g,
                                     uint4 *out, unsigned n)
{
    const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    const float4 c = q[i];
    const int w = (int)c.w;
    switch (op) {
    case TP_1D: tex_store(&out[i], tex1D<float4>(t, c.x)); break;
    case TP_2D: tex_store(&out[i], tex2D<float4>(t, c.x, c.y)); break;
    case TP_3D: tex_store(&out[i], tex3D<float4>(t, c.x, c.y, c.z)); break;
    case TP_1D_LAYERED: tex_store(&out[i], tex1DLayered<float4>(t, c.x, w)); break;
    case TP_2D_LAYERED: tex_store(&out[i], tex2DLayered<float4>(t, c.x, c.y, w)); break;
    case TP_CUBE: tex_store(&out[i], texCubemap<float4>(t, c.x, c.y, c.z)); break;
    case TP_2D_LOD: tex_store(&out[i], tex2DLod<float4>(t, c.x, c.y, c.w)); break;
    case TP_2D_GRAD: {
        const float4 d = g[i];
        tex_store(&out[i], tex2DGrad<float4>(t, c.x, c.y, make_float2(d.x, d.y), make_float2(d.z, d.w)));
        break;
    }
    case TP_GATHER: tex_store(&out[i], tex2Dgather<float4>(t, c.x, c.y, w)); break;
    case TP_FETCH: tex_store(&out[i], tex1Dfetch<float4>(t, (int)c.x)); break;
    case TP_CUBE_LAYERED: tex_store(&out[i], texCubemapLayered<float4>(t, c.x, c.y, c.z, w)); break;
    case TP_1D_LOD: tex_store(&out[i], tex1DLod<float4>(t, c.x, c.w)); break;
    case TP_3D_LOD: tex_store(&out[i], tex3DLod<float4>(t, c.x, c.y, c.z, c.w)); break;
    case TP_2D_INT: tex_store(&out[i], tex2D<int4>(t, c.x, c.y)); break;
    case TP_2D_UINT: tex_store(&out[i], tex2D<uint4>(t, c.x, c.y)); break;
    case TP_FETCH_INT: tex_store(&out[i], tex1Dfetch<int4>(t, (int)c.x)); break;
    case TP_FETCH_UINT: tex_store(&out[i], tex1Dfetch<uint4>(t, (int)c.x)); break;
    case TP_GATHER_UINT: tex_store(&out[i], tex2Dgather<uint4>(t, c.x, c.y, w)); break;
    case TP_1D_INT: tex_store(&out[i], tex1D<int4>(t, c.x)); break;
    default: break;
    }
}

// Surface reads of 32-bit elements at byte x q[i].x, row q[i].y, layer/depth q[i].z,
// boundary mode `mode` (0 trap, 1 clamp, 2 zero); `op` 0: 1D, 1: 2D, 2: 3D, 3: 2D layered.
extern "C" __global__ void surf_probe(cudaSurfaceObject_t s, unsigned op, unsigned mode, const int4 *q,
                                      unsigned *out, unsigned n)
{
    const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    const int4 c = q[i];
    unsigned v = 0xeeeeeeeeu;
    const cudaSurfaceBoundaryMode m = mode == 1 ? cudaBoundaryModeClamp : mode == 2 ? cudaBoundaryModeZero : cudaBoundaryModeTrap;
    switch (op) {
    case 0: v = surf1Dread<unsigned>(s, c.x, m); break;
    case 1: v = surf2Dread<unsigned>(s, c.x, c.y, m); break;
    case 2: v = surf3Dread<unsigned>(s, c.x, c.y, c.z, m); break;
    case 3: v = surf2DLayeredread<unsigned>(s, c.x, c.y, c.z, m); break;
    default: break;
    }
    out[i] = v;
}

// Surface writes: thread i writes 0x5000 + base + i at q[i] (as surf_probe), boundary `mode`.
extern "C" __global__ void surf_write_probe(cudaSurfaceObject_t s, unsigned op, unsigned mode, const int4 *q,
                                            unsigned n, unsigned base)
{
    const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    const int4 c = q[i];
    const unsigned v = 0x5000u + base + i;
    const cudaSurfaceBoundaryMode m = mode == 1 ? cudaBoundaryModeClamp : mode == 2 ? cudaBoundaryModeZero : cudaBoundaryModeTrap;
    switch (op) {
    case 0: surf1Dwrite(v, s, c.x, m); break;
    case 1: surf2Dwrite(v, s, c.x, c.y, m); break;
    case 2: surf3Dwrite(v, s, c.x, c.y, c.z, m); break;
    case 3: surf2DLayeredwrite(v, s, c.x, c.y, c.z, m); break;
    default: break;
    }
}

// 8-bit surface reads/writes (uchar4 elements, 4 bytes) and 16-byte (float4) ones, for
// element sizes other than 4: op 0 reads uchar1 at q.x,q.y; op 1 reads float4.
extern "C" __global__ void surf_probe_sized(cudaSurfaceObject_t s, unsigned op, const int4 *q, uint4 *out, unsigned n)
{
    const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    const int4 c = q[i];
    uint4 r = make_uint4(0xeeeeeeeeu, 0xeeeeeeeeu, 0xeeeeeeeeu, 0xeeeeeeeeu);
    if (op == 0) {
        r.x = surf2Dread<unsigned char>(s, c.x, c.y, cudaBoundaryModeZero);
    } else {
        tex_store(&r, surf2Dread<float4>(s, c.x, c.y, cudaBoundaryModeZero));
    }
    out[i] = r;
}
