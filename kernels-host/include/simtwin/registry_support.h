/* Support for the registry that kernels-host appends to each rewritten source: the
   launch trampoline (`run`) deduced from each kernel's address, and the module
   descriptor. The generated part only names kernels and globals; the logic is here. */
#ifndef SIMTWIN_REGISTRY_SUPPORT_H
#define SIMTWIN_REGISTRY_SUPPORT_H
#pragma GCC system_header

namespace simtwin {
namespace detail {

template <class T> struct arg_slot {
    alignas(T) unsigned char bytes[sizeof(T)];
    T &get() { return *reinterpret_cast<T *>(bytes); }
};
template <size_t... I> struct index_seq {};
template <size_t N, size_t... I> struct make_index_seq : make_index_seq<N - 1, N - 1, I...> {};
template <size_t... I> struct make_index_seq<0, I...> { typedef index_seq<I...> type; };

template <class... A> struct arg_pack;
template <> struct arg_pack<> {};
template <class H, class... R> struct arg_pack<H, R...> { arg_slot<H> head; arg_pack<R...> tail; };
template <size_t I, class P> struct pack_get;
template <class H, class... R> struct pack_get<0, arg_pack<H, R...>> {
    typedef H type;
    static H &get(arg_pack<H, R...> &p) { return p.head.get(); }
};
template <size_t I, class H, class... R> struct pack_get<I, arg_pack<H, R...>> {
    typedef typename pack_get<I - 1, arg_pack<R...>>::type type;
    static type &get(arg_pack<H, R...> &p) { return pack_get<I - 1, arg_pack<R...>>::get(p.tail); }
};

template <class F, F K> struct runner;
template <class... A, void (*K)(A...)> struct runner<void (*)(A...), K> {
    typedef arg_pack<A...> pack;
    static constexpr uint32_t count = sizeof...(A);
    static const uint32_t sizes[sizeof...(A) + 1];
    static const uint32_t aligns[sizeof...(A) + 1];

    template <size_t... I>
    static void go(void *const *params, simtwin_thread_ctx_t *ctx, uint32_t first, uint32_t n,
                   index_seq<I...>) {
        pack p;
        /* kernelParams entries may be unaligned: copy bytes once, before the loop. */
        int expand[] = {0, (memcpy(&pack_get<I, pack>::get(p), params[I], sizeof(A)), 0)...};
        (void)expand; (void)params;
        simtwin_tls_ctx = ctx;
        const uint32_t bx = ctx->block_dim.x ? ctx->block_dim.x : 1;
        const uint32_t by = ctx->block_dim.y ? ctx->block_dim.y : 1;
        for (uint32_t t = first; t != first + n; ++t) {
            ctx->linear_tid = t;
            ctx->lane = t & 31u;
            ctx->thread_idx.x = t % bx;
            ctx->thread_idx.y = (t / bx) % by;
            ctx->thread_idx.z = t / (bx * by);
            K(pack_get<I, pack>::get(p)...); /* by value: each thread gets its own copy */
            if (ctx->range_stop) break;
        }
    }
    static void run(void *const *params, simtwin_thread_ctx_t *ctx, uint32_t first, uint32_t n) {
        go(params, ctx, first, n, typename make_index_seq<sizeof...(A)>::type());
    }
};
template <class... A, void (*K)(A...)>
const uint32_t runner<void (*)(A...), K>::sizes[sizeof...(A) + 1] = {(uint32_t)sizeof(A)..., 0};
template <class... A, void (*K)(A...)>
const uint32_t runner<void (*)(A...), K>::aligns[sizeof...(A) + 1] = {(uint32_t)alignof(A)..., 0};

/* Kernels must return void, as __global__ functions do. */
template <class F> struct is_kernel_type : std::false_type {};
template <class... A> struct is_kernel_type<void (*)(A...)> : std::true_type {};

template <class F, F K>
simtwin_kernel_t kernel_entry(const char *name, uint32_t max_threads, uint32_t min_blocks) {
    typedef runner<F, K> R;
    simtwin_kernel_t k;
    k.name = name;
    k.function = reinterpret_cast<const void *>(K);
    k.run = &R::run;
    k.param_count = R::count;
    k.param_sizes = R::sizes;
    k.param_aligns = R::aligns;
    k.max_threads = max_threads;
    k.min_blocks = min_blocks;
    return k;
}


typedef const simtwin_kernel_t *(*kernel_reg_fn)();
typedef simtwin_global_t (*global_reg_fn)();

/* Copies the per-kernel and per-global records (emitted next to each definition, where
   its names resolve as in the user's scope) into the contiguous arrays abi.h asks for. */
inline const simtwin_module_t *build_module(const kernel_reg_fn *kr, uint32_t nk,
                                            const global_reg_fn *gr, uint32_t ng,
                                            const char *path, const char *hash,
                                            const char *build_id,
                                            void (*bind)(const simtwin_runtime_t *),
                                            simtwin_thread_ctx_t **(*slot)()) {
    simtwin_kernel_t *ks = new simtwin_kernel_t[nk ? nk : 1];
    for (uint32_t i = 0; i < nk; ++i) ks[i] = *kr[i]();
    simtwin_global_t *gs = new simtwin_global_t[ng ? ng : 1];
    for (uint32_t i = 0; i < ng; ++i) gs[i] = gr[i]();
    simtwin_module_t *m = new simtwin_module_t;
    m->abi_version = SIMTWIN_ABI_VERSION;
    m->kernel_count = nk;
    m->kernels = ks;
    m->global_count = ng;
    m->globals = gs;
    m->source_path = path;
    m->source_hash = hash;
    m->build_id = build_id;
    m->bind = bind;
    m->ctx_slot = slot;
    return m;
}

} // namespace detail
} // namespace simtwin

#endif
