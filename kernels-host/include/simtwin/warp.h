/* Block barriers and warp collectives: routed through the runtime table, whose executor
   implements their semantics (rendezvous of the participating threads). Nothing here
   computes a collective result locally.

   Every entry takes the user's call site as trailing default arguments
   (SIMTWIN_SITE_PARAMS): __builtin_FILE/__builtin_LINE in a default argument evaluate
   at the caller, so the executor sees the source line of each __syncthreads, shuffle or
   __activemask however the compiler inlines or duplicates it. Wrappers (cooperative
   groups) forward their own caller's site (SIMTWIN_SITE_FWD). */
#ifndef SIMTWIN_WARP_H
#define SIMTWIN_WARP_H
#pragma GCC system_header

#define SIMTWIN_SITE_PARAMS const char *simtwin_site_file = __builtin_FILE(), unsigned simtwin_site_line = __builtin_LINE()
#define SIMTWIN_SITE_FWD simtwin_site_file, simtwin_site_line
#define SIMTWIN_SITE (simtwin_site_t{simtwin_site_file, simtwin_site_line, 0u})

SIMTWIN_INLINE void __syncthreads(SIMTWIN_SITE_PARAMS) { simtwin_rt->barrier(SIMTWIN_BAR_SYNC, 0, SIMTWIN_SITE); }
SIMTWIN_INLINE int __syncthreads_count(int p, SIMTWIN_SITE_PARAMS) { return simtwin_rt->barrier(SIMTWIN_BAR_COUNT, p != 0, SIMTWIN_SITE); }
SIMTWIN_INLINE int __syncthreads_and(int p, SIMTWIN_SITE_PARAMS) { return simtwin_rt->barrier(SIMTWIN_BAR_AND, p != 0, SIMTWIN_SITE); }
SIMTWIN_INLINE int __syncthreads_or(int p, SIMTWIN_SITE_PARAMS) { return simtwin_rt->barrier(SIMTWIN_BAR_OR, p != 0, SIMTWIN_SITE); }
SIMTWIN_INLINE void __syncwarp(unsigned int mask = 0xffffffffu, SIMTWIN_SITE_PARAMS) {
    simtwin_rt->warp(SIMTWIN_WARP_SYNC, mask, 0, 0, 32, nullptr, SIMTWIN_SITE);
}
SIMTWIN_INLINE unsigned int __activemask(SIMTWIN_SITE_PARAMS) { return simtwin_rt->activemask(SIMTWIN_SITE); }

/* 32- and 64-bit values travel as their bit pattern in the low bits of `value`. */
template <class T> SIMTWIN_INLINE uint64_t simtwin_to_bits(T v) {
    static_assert(sizeof(T) == 4 || sizeof(T) == 8, "warp shuffles move 32- or 64-bit values");
    typedef typename std::conditional<sizeof(T) == 8, uint64_t, uint32_t>::type U;
    return (uint64_t)simtwin_bitcast<U>(v);
}
template <class T> SIMTWIN_INLINE T simtwin_from_bits(uint64_t b) {
    typedef typename std::conditional<sizeof(T) == 8, uint64_t, uint32_t>::type U;
    return simtwin_bitcast<T>((U)b);
}
template <class T> struct simtwin_shfl_type : std::false_type {};
#define SIMTWIN_SHFL_OK(T) template <> struct simtwin_shfl_type<T> : std::true_type {};
SIMTWIN_SHFL_OK(int) SIMTWIN_SHFL_OK(unsigned int) SIMTWIN_SHFL_OK(long) SIMTWIN_SHFL_OK(unsigned long)
SIMTWIN_SHFL_OK(long long) SIMTWIN_SHFL_OK(unsigned long long) SIMTWIN_SHFL_OK(float) SIMTWIN_SHFL_OK(double)
#undef SIMTWIN_SHFL_OK

#define SIMTWIN_SHFL(NAME, OP, ARGT) \
    template <class T> SIMTWIN_INLINE T NAME(unsigned int mask, T var, ARGT arg, int width = 32, SIMTWIN_SITE_PARAMS) { \
        static_assert(simtwin_shfl_type<T>::value, #NAME ": unsupported value type"); \
        return simtwin_from_bits<T>(simtwin_rt->warp(OP, mask, simtwin_to_bits(var), (int32_t)arg, width, nullptr, SIMTWIN_SITE)); }
SIMTWIN_SHFL(__shfl_sync, SIMTWIN_WARP_SHFL_IDX, int)
SIMTWIN_SHFL(__shfl_up_sync, SIMTWIN_WARP_SHFL_UP, unsigned int)
SIMTWIN_SHFL(__shfl_down_sync, SIMTWIN_WARP_SHFL_DOWN, unsigned int)
SIMTWIN_SHFL(__shfl_xor_sync, SIMTWIN_WARP_SHFL_XOR, int)
#undef SIMTWIN_SHFL

SIMTWIN_INLINE unsigned int __ballot_sync(unsigned int mask, int pred, SIMTWIN_SITE_PARAMS) {
    return (unsigned int)simtwin_rt->warp(SIMTWIN_WARP_BALLOT, mask, pred != 0, 0, 32, nullptr, SIMTWIN_SITE);
}
SIMTWIN_INLINE int __any_sync(unsigned int mask, int pred, SIMTWIN_SITE_PARAMS) {
    return simtwin_rt->warp(SIMTWIN_WARP_ANY, mask, pred != 0, 0, 32, nullptr, SIMTWIN_SITE) != 0;
}
SIMTWIN_INLINE int __all_sync(unsigned int mask, int pred, SIMTWIN_SITE_PARAMS) {
    return simtwin_rt->warp(SIMTWIN_WARP_ALL, mask, pred != 0, 0, 32, nullptr, SIMTWIN_SITE) != 0;
}
SIMTWIN_INLINE int __uni_sync(unsigned int mask, int pred, SIMTWIN_SITE_PARAMS) {
    int all = __all_sync(mask, pred, SIMTWIN_SITE_FWD), any = __any_sync(mask, pred, SIMTWIN_SITE_FWD);
    return all || !any;
}
template <class T> SIMTWIN_INLINE unsigned int __match_any_sync(unsigned int mask, T value, SIMTWIN_SITE_PARAMS) {
    static_assert(simtwin_shfl_type<T>::value, "__match_any_sync: unsupported value type");
    return (unsigned int)simtwin_rt->warp(SIMTWIN_WARP_MATCH_ANY, mask, simtwin_to_bits(value), (int32_t)sizeof(T), 32, nullptr, SIMTWIN_SITE);
}
template <class T> SIMTWIN_INLINE unsigned int __match_all_sync(unsigned int mask, T value, int *pred, SIMTWIN_SITE_PARAMS) {
    static_assert(simtwin_shfl_type<T>::value, "__match_all_sync: unsupported value type");
    int32_t p = 0;
    unsigned int r = (unsigned int)simtwin_rt->warp(SIMTWIN_WARP_MATCH_ALL, mask, simtwin_to_bits(value), (int32_t)sizeof(T), 32, &p, SIMTWIN_SITE);
    *pred = p;
    return r;
}
#define SIMTWIN_REDUCE(NAME, OP, T, SIGNED) \
    SIMTWIN_INLINE T NAME(unsigned int mask, T value, SIMTWIN_SITE_PARAMS) { \
        return (T)(uint32_t)simtwin_rt->warp(OP, mask, (uint64_t)(uint32_t)value, SIGNED, 32, nullptr, SIMTWIN_SITE); }
SIMTWIN_REDUCE(__reduce_add_sync, SIMTWIN_WARP_REDUCE_ADD, unsigned int, 0)
SIMTWIN_REDUCE(__reduce_add_sync, SIMTWIN_WARP_REDUCE_ADD, int, 1)
SIMTWIN_REDUCE(__reduce_min_sync, SIMTWIN_WARP_REDUCE_MIN, unsigned int, 0)
SIMTWIN_REDUCE(__reduce_min_sync, SIMTWIN_WARP_REDUCE_MIN, int, 1)
SIMTWIN_REDUCE(__reduce_max_sync, SIMTWIN_WARP_REDUCE_MAX, unsigned int, 0)
SIMTWIN_REDUCE(__reduce_max_sync, SIMTWIN_WARP_REDUCE_MAX, int, 1)
SIMTWIN_REDUCE(__reduce_and_sync, SIMTWIN_WARP_REDUCE_AND, unsigned int, 0)
SIMTWIN_REDUCE(__reduce_or_sync, SIMTWIN_WARP_REDUCE_OR, unsigned int, 0)
SIMTWIN_REDUCE(__reduce_xor_sync, SIMTWIN_WARP_REDUCE_XOR, unsigned int, 0)
#undef SIMTWIN_REDUCE

#endif
