/* Support for the registry that kernels-host appends to each rewritten source: the
   launch trampoline (`run`) deduced from each kernel's address, and the module
   descriptor. The generated part only names kernels and globals; the logic is here.

   Every name here is in namespace __simtwin and every parameter and local is
   __simtwin_-prefixed: user macros given with -D are active while this header is read,
   and a -Dfirst=1 or -Dn=4 must not change it. Calls that could find user functions by
   argument-dependent lookup are qualified. */
#ifndef __SIMTWIN_REGISTRY_SUPPORT_H
#define __SIMTWIN_REGISTRY_SUPPORT_H
#pragma GCC system_header

namespace __simtwin {
namespace detail {

template <class __simtwin_T> struct arg_slot {
    alignas(__simtwin_T) unsigned char __simtwin_bytes[sizeof(__simtwin_T)];
    __simtwin_T &get() { return *reinterpret_cast<__simtwin_T *>(__simtwin_bytes); }
};
template <size_t... __simtwin_I> struct index_seq {};
template <size_t __simtwin_N, size_t... __simtwin_I>
struct make_index_seq : make_index_seq<__simtwin_N - 1, __simtwin_N - 1, __simtwin_I...> {};
template <size_t... __simtwin_I> struct make_index_seq<0, __simtwin_I...> {
    typedef index_seq<__simtwin_I...> type;
};

template <class... __simtwin_A> struct arg_pack;
template <> struct arg_pack<> {};
template <class __simtwin_H, class... __simtwin_R> struct arg_pack<__simtwin_H, __simtwin_R...> {
    arg_slot<__simtwin_H> head;
    arg_pack<__simtwin_R...> tail;
};
template <size_t __simtwin_I, class __simtwin_P> struct pack_get;
template <class __simtwin_H, class... __simtwin_R> struct pack_get<0, arg_pack<__simtwin_H, __simtwin_R...>> {
    typedef __simtwin_H type;
    static __simtwin_H &get(arg_pack<__simtwin_H, __simtwin_R...> &__simtwin_p) { return __simtwin_p.head.get(); }
};
template <size_t __simtwin_I, class __simtwin_H, class... __simtwin_R>
struct pack_get<__simtwin_I, arg_pack<__simtwin_H, __simtwin_R...>> {
    typedef typename pack_get<__simtwin_I - 1, arg_pack<__simtwin_R...>>::type type;
    static type &get(arg_pack<__simtwin_H, __simtwin_R...> &__simtwin_p) {
        return pack_get<__simtwin_I - 1, arg_pack<__simtwin_R...>>::get(__simtwin_p.tail);
    }
};

/* (x, y, z) of linear thread index `t` in a block of bx * by * ... threads. Out of line:
   the general case divides, and is rare (see thread_xyz). */
__attribute__((noinline, cold)) inline void split_index(uint32_t __simtwin_t, uint32_t __simtwin_bx,
                                                         uint32_t __simtwin_by, uint32_t *__simtwin_xyz) {
    __simtwin_xyz[0] = __simtwin_t % __simtwin_bx;
    __simtwin_xyz[1] = (__simtwin_t / __simtwin_bx) % __simtwin_by;
    __simtwin_xyz[2] = __simtwin_t / (__simtwin_bx * __simtwin_by);
}

/* (x, y, z) of `t` for a range that starts mid-block: every thread of a block with a
   barrier starts its own range once the first one waits, so this runs once per thread
   there. The first row (any 1-D block) and power-of-two block shapes (16x16, 32x8, ...)
   need no division; three dependent divisions cost as much as a barrier. */
__attribute__((always_inline)) inline void thread_xyz(uint32_t __simtwin_t, uint32_t __simtwin_bx,
                                                      uint32_t __simtwin_by, uint32_t *__simtwin_xyz) {
    if (__simtwin_t < __simtwin_bx) {
        __simtwin_xyz[0] = __simtwin_t;
        __simtwin_xyz[1] = 0;
        __simtwin_xyz[2] = 0;
    } else if (((__simtwin_bx & (__simtwin_bx - 1)) | (__simtwin_by & (__simtwin_by - 1))) == 0) {
        const uint32_t __simtwin_sx = (uint32_t)__builtin_ctz(__simtwin_bx);
        const uint32_t __simtwin_sy = (uint32_t)__builtin_ctz(__simtwin_by);
        __simtwin_xyz[0] = __simtwin_t & (__simtwin_bx - 1);
        __simtwin_xyz[1] = (__simtwin_t >> __simtwin_sx) & (__simtwin_by - 1);
        __simtwin_xyz[2] = __simtwin_t >> (__simtwin_sx + __simtwin_sy);
    } else {
        split_index(__simtwin_t, __simtwin_bx, __simtwin_by, __simtwin_xyz);
    }
}

template <class __simtwin_F, __simtwin_F __simtwin_K> struct runner;
template <class... __simtwin_A, void (*__simtwin_K)(__simtwin_A...)>
struct runner<void (*)(__simtwin_A...), __simtwin_K> {
    typedef arg_pack<__simtwin_A...> pack;
    static constexpr uint32_t count = sizeof...(__simtwin_A);
    static const uint32_t sizes[sizeof...(__simtwin_A) + 1];
    static const uint32_t aligns[sizeof...(__simtwin_A) + 1];

    template <size_t... __simtwin_I>
    static void go(void *const *__simtwin_params, simtwin_thread_ctx_t *__simtwin_ctx, uint32_t __simtwin_first,
                   uint32_t __simtwin_n, index_seq<__simtwin_I...>) {
        pack __simtwin_p;
        /* kernelParams entries may be unaligned: copy bytes once, before the loop. */
        int __simtwin_expand[] = {0, (__builtin_memcpy(&pack_get<__simtwin_I, pack>::get(__simtwin_p),
                                                       __simtwin_params[__simtwin_I], sizeof(__simtwin_A)), 0)...};
        (void)__simtwin_expand;
        (void)__simtwin_params;
        ::__simtwin::tls_ctx = __simtwin_ctx;
        const uint32_t __simtwin_bx = __simtwin_ctx->block_dim.x ? __simtwin_ctx->block_dim.x : 1;
        const uint32_t __simtwin_by = __simtwin_ctx->block_dim.y ? __simtwin_ctx->block_dim.y : 1;
        /* Thread indices advance with the linear index: x, carrying into y, then z. */
        uint32_t __simtwin_xyz[3] = {0, 0, 0};
        if (__simtwin_first != 0) thread_xyz(__simtwin_first, __simtwin_bx, __simtwin_by, __simtwin_xyz);
        uint32_t __simtwin_x = __simtwin_xyz[0], __simtwin_y = __simtwin_xyz[1], __simtwin_z = __simtwin_xyz[2];
        const uint32_t __simtwin_end = __simtwin_first + __simtwin_n;
        /* y and z are stored when they change, x and linear_tid for every thread.
           The threads of one row run in an inner loop counted by the linear index alone
           (x = t - row base): a barrier-free kernel pays a few stores, the range_stop
           check and one compare per thread beyond its body.
           range_stop is a limit (abi.h): no thread t >= range_stop starts, checked after
           linear_tid names t, so that whatever instruction of this loop the executor
           interrupts, the thread linear_tid names is the last one this range runs
           (`reserved = 1` says this runner keeps that rule: its threads may be preempted). */
        __simtwin_ctx->reserved = 1;
        __simtwin_ctx->thread_idx.y = __simtwin_y;
        __simtwin_ctx->thread_idx.z = __simtwin_z;
        uint32_t __simtwin_t = __simtwin_first;
        while (__simtwin_t != __simtwin_end) {
            const uint32_t __simtwin_row = __simtwin_t - __simtwin_x; /* linear index of x = 0 */
            const uint32_t __simtwin_left = __simtwin_end - __simtwin_t;
            const uint32_t __simtwin_stop =
                __simtwin_t + (__simtwin_bx - __simtwin_x < __simtwin_left ? __simtwin_bx - __simtwin_x : __simtwin_left);
            for (; __simtwin_t != __simtwin_stop; ++__simtwin_t) {
                __simtwin_ctx->linear_tid = __simtwin_t;
                /* The executor's preemption reads linear_tid from a signal handler on
                   this thread: no code of a thread may move across the stores naming it
                   (else a range is handed on from the wrong thread, which runs twice). */
                __atomic_signal_fence(__ATOMIC_SEQ_CST);
                /* 0 (no limit) wraps to the largest value */
                if (__simtwin_t > (uint32_t)(__simtwin_ctx->range_stop - 1u)) return;
                __simtwin_ctx->thread_idx.x = __simtwin_t - __simtwin_row;
                __simtwin_K(pack_get<__simtwin_I, pack>::get(__simtwin_p)...); /* by value: each thread its own copy */
                __atomic_signal_fence(__ATOMIC_SEQ_CST);
            }
            __simtwin_x = 0;
            if (++__simtwin_y == __simtwin_by) {
                __simtwin_y = 0;
                __simtwin_ctx->thread_idx.z = ++__simtwin_z;
            }
            __simtwin_ctx->thread_idx.y = __simtwin_y;
        }
    }
    static void run(void *const *__simtwin_params, simtwin_thread_ctx_t *__simtwin_ctx, uint32_t __simtwin_first,
                    uint32_t __simtwin_n) {
        go(__simtwin_params, __simtwin_ctx, __simtwin_first, __simtwin_n,
           typename make_index_seq<sizeof...(__simtwin_A)>::type());
    }
};
template <class... __simtwin_A, void (*__simtwin_K)(__simtwin_A...)>
const uint32_t runner<void (*)(__simtwin_A...), __simtwin_K>::sizes[sizeof...(__simtwin_A) + 1] = {
    (uint32_t)sizeof(__simtwin_A)..., 0};
template <class... __simtwin_A, void (*__simtwin_K)(__simtwin_A...)>
const uint32_t runner<void (*)(__simtwin_A...), __simtwin_K>::aligns[sizeof...(__simtwin_A) + 1] = {
    (uint32_t)alignof(__simtwin_A)..., 0};

template <class __simtwin_F, __simtwin_F __simtwin_K>
simtwin_kernel_t kernel_entry(const char *__simtwin_name, uint32_t __simtwin_max_threads,
                              uint32_t __simtwin_min_blocks) {
    typedef runner<__simtwin_F, __simtwin_K> __simtwin_R;
    simtwin_kernel_t __simtwin_k;
    __simtwin_k.name = __simtwin_name;
    __simtwin_k.function = reinterpret_cast<const void *>(__simtwin_K);
    __simtwin_k.run = &__simtwin_R::run;
    __simtwin_k.param_count = __simtwin_R::count;
    __simtwin_k.param_sizes = __simtwin_R::sizes;
    __simtwin_k.param_aligns = __simtwin_R::aligns;
    __simtwin_k.max_threads = __simtwin_max_threads;
    __simtwin_k.min_blocks = __simtwin_min_blocks;
    return __simtwin_k;
}

typedef simtwin_kernel_t (*kernel_reg_fn)();
typedef simtwin_global_t (*global_reg_fn)();

/* Copies the per-kernel and per-global records (emitted next to each definition, where
   its names resolve as in the user's scope) into the contiguous arrays abi.h asks for,
   in registration order: the manifest lists them in the same order. */
inline const simtwin_module_t *build_module(const kernel_reg_fn *__simtwin_kr, uint32_t __simtwin_nk,
                                            const global_reg_fn *__simtwin_gr, uint32_t __simtwin_ng,
                                            const char *__simtwin_path, const char *__simtwin_hash,
                                            const char *__simtwin_build_id,
                                            void (*__simtwin_bind)(const simtwin_runtime_t *),
                                            simtwin_thread_ctx_t **(*__simtwin_slot)()) {
    simtwin_kernel_t *__simtwin_ks = new simtwin_kernel_t[__simtwin_nk ? __simtwin_nk : 1];
    for (uint32_t __simtwin_i = 0; __simtwin_i < __simtwin_nk; ++__simtwin_i)
        __simtwin_ks[__simtwin_i] = __simtwin_kr[__simtwin_i]();
    simtwin_global_t *__simtwin_gs = new simtwin_global_t[__simtwin_ng ? __simtwin_ng : 1];
    for (uint32_t __simtwin_i = 0; __simtwin_i < __simtwin_ng; ++__simtwin_i)
        __simtwin_gs[__simtwin_i] = __simtwin_gr[__simtwin_i]();
    simtwin_module_t *__simtwin_m = new simtwin_module_t;
    __simtwin_m->abi_version = SIMTWIN_ABI_VERSION;
    __simtwin_m->kernel_count = __simtwin_nk;
    __simtwin_m->kernels = __simtwin_ks;
    __simtwin_m->global_count = __simtwin_ng;
    __simtwin_m->globals = __simtwin_gs;
    __simtwin_m->source_path = __simtwin_path;
    __simtwin_m->source_hash = __simtwin_hash;
    __simtwin_m->build_id = __simtwin_build_id;
    __simtwin_m->bind = __simtwin_bind;
    __simtwin_m->ctx_slot = __simtwin_slot;
    return __simtwin_m;
}

} // namespace detail
} // namespace __simtwin

#endif
