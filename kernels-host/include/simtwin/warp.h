/* Block barriers and warp collectives: routed through the runtime table, whose executor
   implements their semantics (rendezvous of the participating threads). Nothing here
   computes a collective result locally.

   Every entry takes the user's call site as trailing default arguments
   (__SIMTWIN_SITE_PARAMS): __builtin_FILE/__builtin_LINE in a default argument evaluate
   at the caller, so the executor sees the source line of each __syncthreads, shuffle or
   __activemask however the compiler inlines or duplicates it. Wrappers (cooperative
   groups) forward their own caller's site (__SIMTWIN_SITE_FWD). */
#ifndef __SIMTWIN_WARP_H
#define __SIMTWIN_WARP_H
#pragma GCC system_header

#define __SIMTWIN_SITE_PARAMS const char *__simtwin_site_file = __builtin_FILE(), unsigned __simtwin_site_line = __builtin_LINE()
#define __SIMTWIN_SITE_FWD __simtwin_site_file, __simtwin_site_line
#define __SIMTWIN_SITE (::__simtwin::simtwin_site_t{__simtwin_site_file, __simtwin_site_line, 0u})

__SIMTWIN_INLINE void __syncthreads(__SIMTWIN_SITE_PARAMS) { ::__simtwin::rt->barrier(::__simtwin::SIMTWIN_BAR_SYNC, 0, __SIMTWIN_SITE); }
__SIMTWIN_INLINE int __syncthreads_count(int p, __SIMTWIN_SITE_PARAMS) { return ::__simtwin::rt->barrier(::__simtwin::SIMTWIN_BAR_COUNT, p != 0, __SIMTWIN_SITE); }
__SIMTWIN_INLINE int __syncthreads_and(int p, __SIMTWIN_SITE_PARAMS) { return ::__simtwin::rt->barrier(::__simtwin::SIMTWIN_BAR_AND, p != 0, __SIMTWIN_SITE); }
__SIMTWIN_INLINE int __syncthreads_or(int p, __SIMTWIN_SITE_PARAMS) { return ::__simtwin::rt->barrier(::__simtwin::SIMTWIN_BAR_OR, p != 0, __SIMTWIN_SITE); }
__SIMTWIN_INLINE void __syncwarp(unsigned int mask = 0xffffffffu, __SIMTWIN_SITE_PARAMS) {
    ::__simtwin::rt->warp(::__simtwin::SIMTWIN_WARP_SYNC, mask, 0, 0, 32, nullptr, __SIMTWIN_SITE);
}
__SIMTWIN_INLINE unsigned int __activemask(__SIMTWIN_SITE_PARAMS) { return ::__simtwin::rt->activemask(__SIMTWIN_SITE); }

/* 32- and 64-bit values travel as their bit pattern in the low bits of `value`. */
template <class T> __SIMTWIN_INLINE uint64_t __simtwin_to_bits(T v) {
    static_assert(sizeof(T) == 4 || sizeof(T) == 8, "warp shuffles move 32- or 64-bit values");
    typedef typename std::conditional<sizeof(T) == 8, uint64_t, uint32_t>::type U;
    return (uint64_t)__simtwin_bitcast<U>(v);
}
template <class T> __SIMTWIN_INLINE T __simtwin_from_bits(uint64_t b) {
    typedef typename std::conditional<sizeof(T) == 8, uint64_t, uint32_t>::type U;
    return __simtwin_bitcast<T>((U)b);
}
template <class T> struct __simtwin_shfl_type : std::false_type {};
#define __SIMTWIN_SHFL_OK(T) template <> struct __simtwin_shfl_type<T> : std::true_type {};
__SIMTWIN_SHFL_OK(int) __SIMTWIN_SHFL_OK(unsigned int) __SIMTWIN_SHFL_OK(long) __SIMTWIN_SHFL_OK(unsigned long)
__SIMTWIN_SHFL_OK(long long) __SIMTWIN_SHFL_OK(unsigned long long) __SIMTWIN_SHFL_OK(float) __SIMTWIN_SHFL_OK(double)
#undef __SIMTWIN_SHFL_OK

#define __SIMTWIN_SHFL(NAME, OP, ARGT) \
    template <class T> __SIMTWIN_INLINE T NAME(unsigned int mask, T var, ARGT arg, int width = 32, __SIMTWIN_SITE_PARAMS) { \
        static_assert(__simtwin_shfl_type<T>::value, #NAME ": unsupported value type"); \
        return __simtwin_from_bits<T>(::__simtwin::rt->warp(OP, mask, __simtwin_to_bits(var), (int32_t)arg, width, nullptr, __SIMTWIN_SITE)); }
__SIMTWIN_SHFL(__shfl_sync, ::__simtwin::SIMTWIN_WARP_SHFL_IDX, int)
__SIMTWIN_SHFL(__shfl_up_sync, ::__simtwin::SIMTWIN_WARP_SHFL_UP, unsigned int)
__SIMTWIN_SHFL(__shfl_down_sync, ::__simtwin::SIMTWIN_WARP_SHFL_DOWN, unsigned int)
__SIMTWIN_SHFL(__shfl_xor_sync, ::__simtwin::SIMTWIN_WARP_SHFL_XOR, int)
#undef __SIMTWIN_SHFL

__SIMTWIN_INLINE unsigned int __ballot_sync(unsigned int mask, int pred, __SIMTWIN_SITE_PARAMS) {
    return (unsigned int)::__simtwin::rt->warp(::__simtwin::SIMTWIN_WARP_BALLOT, mask, pred != 0, 0, 32, nullptr, __SIMTWIN_SITE);
}
__SIMTWIN_INLINE int __any_sync(unsigned int mask, int pred, __SIMTWIN_SITE_PARAMS) {
    return ::__simtwin::rt->warp(::__simtwin::SIMTWIN_WARP_ANY, mask, pred != 0, 0, 32, nullptr, __SIMTWIN_SITE) != 0;
}
__SIMTWIN_INLINE int __all_sync(unsigned int mask, int pred, __SIMTWIN_SITE_PARAMS) {
    return ::__simtwin::rt->warp(::__simtwin::SIMTWIN_WARP_ALL, mask, pred != 0, 0, 32, nullptr, __SIMTWIN_SITE) != 0;
}
__SIMTWIN_INLINE int __uni_sync(unsigned int mask, int pred, __SIMTWIN_SITE_PARAMS) {
    int all = __all_sync(mask, pred, __SIMTWIN_SITE_FWD), any = __any_sync(mask, pred, __SIMTWIN_SITE_FWD);
    return all || !any;
}
template <class T> __SIMTWIN_INLINE unsigned int __match_any_sync(unsigned int mask, T value, __SIMTWIN_SITE_PARAMS) {
    static_assert(__simtwin_shfl_type<T>::value, "__match_any_sync: unsupported value type");
    return (unsigned int)::__simtwin::rt->warp(::__simtwin::SIMTWIN_WARP_MATCH_ANY, mask, __simtwin_to_bits(value), (int32_t)sizeof(T), 32, nullptr, __SIMTWIN_SITE);
}
template <class T> __SIMTWIN_INLINE unsigned int __match_all_sync(unsigned int mask, T value, int *pred, __SIMTWIN_SITE_PARAMS) {
    static_assert(__simtwin_shfl_type<T>::value, "__match_all_sync: unsupported value type");
    int32_t p = 0;
    unsigned int r = (unsigned int)::__simtwin::rt->warp(::__simtwin::SIMTWIN_WARP_MATCH_ALL, mask, __simtwin_to_bits(value), (int32_t)sizeof(T), 32, &p, __SIMTWIN_SITE);
    *pred = p;
    return r;
}
#define __SIMTWIN_REDUCE(NAME, OP, T, SIGNED) \
    __SIMTWIN_INLINE T NAME(unsigned int mask, T value, __SIMTWIN_SITE_PARAMS) { \
        return (T)(uint32_t)::__simtwin::rt->warp(OP, mask, (uint64_t)(uint32_t)value, SIGNED, 32, nullptr, __SIMTWIN_SITE); }
__SIMTWIN_REDUCE(__reduce_add_sync, ::__simtwin::SIMTWIN_WARP_REDUCE_ADD, unsigned int, 0)
__SIMTWIN_REDUCE(__reduce_add_sync, ::__simtwin::SIMTWIN_WARP_REDUCE_ADD, int, 1)
__SIMTWIN_REDUCE(__reduce_min_sync, ::__simtwin::SIMTWIN_WARP_REDUCE_MIN, unsigned int, 0)
__SIMTWIN_REDUCE(__reduce_min_sync, ::__simtwin::SIMTWIN_WARP_REDUCE_MIN, int, 1)
__SIMTWIN_REDUCE(__reduce_max_sync, ::__simtwin::SIMTWIN_WARP_REDUCE_MAX, unsigned int, 0)
__SIMTWIN_REDUCE(__reduce_max_sync, ::__simtwin::SIMTWIN_WARP_REDUCE_MAX, int, 1)
__SIMTWIN_REDUCE(__reduce_and_sync, ::__simtwin::SIMTWIN_WARP_REDUCE_AND, unsigned int, 0)
__SIMTWIN_REDUCE(__reduce_or_sync, ::__simtwin::SIMTWIN_WARP_REDUCE_OR, unsigned int, 0)
__SIMTWIN_REDUCE(__reduce_xor_sync, ::__simtwin::SIMTWIN_WARP_REDUCE_XOR, unsigned int, 0)
#undef __SIMTWIN_REDUCE

#endif
