/* Device atomics as real host atomics (GCC __atomic builtins, sequentially consistent):
   blocks may run on several OS threads at once. Read-modify-write forms that the host
   lacks (float add, min/max, inc/dec) are compare-and-swap loops, which are atomic too.
   The _block and _system variants have the same (strongest) semantics. */
#ifndef __SIMTWIN_ATOMICS_H
#define __SIMTWIN_ATOMICS_H
#pragma GCC system_header

#define __SIMTWIN_SC __ATOMIC_SEQ_CST

/* Generic CAS loop: new = f(old). Works on the integer representation of T. */
template <class T, class F> __SIMTWIN_INLINE T __simtwin_atomic_rmw(T *addr, F f) {
    typedef typename std::conditional<sizeof(T) == 8, unsigned long long,
            typename std::conditional<sizeof(T) == 4, unsigned int, unsigned short>::type>::type U;
    U *p = reinterpret_cast<U *>(addr);
    U old = __atomic_load_n(p, __SIMTWIN_SC);
    for (;;) {
        T ov = __simtwin_bitcast<T>(old);
        U nv = __simtwin_bitcast<U>(f(ov));
        if (__atomic_compare_exchange_n(p, &old, nv, false, __SIMTWIN_SC, __SIMTWIN_SC)) return ov;
    }
}

#define __SIMTWIN_ATOMIC_ALL_SCOPES(RET, NAME, PARAMS, ARGS) \
    __SIMTWIN_INLINE RET NAME##_block PARAMS { return NAME ARGS; } \
    __SIMTWIN_INLINE RET NAME##_system PARAMS { return NAME ARGS; }

#define __SIMTWIN_ATOMIC_FETCH(NAME, T, BUILTIN) \
    __SIMTWIN_INLINE T NAME(T *a, T v) { return BUILTIN(a, v, __SIMTWIN_SC); } \
    __SIMTWIN_ATOMIC_ALL_SCOPES(T, NAME, (T *a, T v), (a, v))

__SIMTWIN_ATOMIC_FETCH(atomicAdd, int, __atomic_fetch_add)
__SIMTWIN_ATOMIC_FETCH(atomicAdd, unsigned int, __atomic_fetch_add)
__SIMTWIN_ATOMIC_FETCH(atomicAdd, unsigned long long, __atomic_fetch_add)
__SIMTWIN_ATOMIC_FETCH(atomicSub, int, __atomic_fetch_sub)
__SIMTWIN_ATOMIC_FETCH(atomicSub, unsigned int, __atomic_fetch_sub)
__SIMTWIN_ATOMIC_FETCH(atomicExch, int, __atomic_exchange_n)
__SIMTWIN_ATOMIC_FETCH(atomicExch, unsigned int, __atomic_exchange_n)
__SIMTWIN_ATOMIC_FETCH(atomicExch, unsigned long long, __atomic_exchange_n)
__SIMTWIN_ATOMIC_FETCH(atomicAnd, int, __atomic_fetch_and)
__SIMTWIN_ATOMIC_FETCH(atomicAnd, unsigned int, __atomic_fetch_and)
__SIMTWIN_ATOMIC_FETCH(atomicAnd, unsigned long long, __atomic_fetch_and)
__SIMTWIN_ATOMIC_FETCH(atomicOr, int, __atomic_fetch_or)
__SIMTWIN_ATOMIC_FETCH(atomicOr, unsigned int, __atomic_fetch_or)
__SIMTWIN_ATOMIC_FETCH(atomicOr, unsigned long long, __atomic_fetch_or)
__SIMTWIN_ATOMIC_FETCH(atomicXor, int, __atomic_fetch_xor)
__SIMTWIN_ATOMIC_FETCH(atomicXor, unsigned int, __atomic_fetch_xor)
__SIMTWIN_ATOMIC_FETCH(atomicXor, unsigned long long, __atomic_fetch_xor)
#undef __SIMTWIN_ATOMIC_FETCH

#define __SIMTWIN_ATOMIC_LOOP(NAME, T, EXPR) \
    __SIMTWIN_INLINE T NAME(T *a, T v) { return __simtwin_atomic_rmw(a, [v](T o) -> T { return EXPR; }); } \
    __SIMTWIN_ATOMIC_ALL_SCOPES(T, NAME, (T *a, T v), (a, v))
/* Float adds round to nearest, as the device's atomicAdd(float*) does. */
__SIMTWIN_ATOMIC_LOOP(atomicAdd, float, o + v)
__SIMTWIN_ATOMIC_LOOP(atomicAdd, double, o + v)
__SIMTWIN_ATOMIC_LOOP(atomicExch, float, ((void)o, v))
__SIMTWIN_ATOMIC_LOOP(atomicMin, int, o < v ? o : v)
__SIMTWIN_ATOMIC_LOOP(atomicMin, unsigned int, o < v ? o : v)
__SIMTWIN_ATOMIC_LOOP(atomicMin, long long, o < v ? o : v)
__SIMTWIN_ATOMIC_LOOP(atomicMin, unsigned long long, o < v ? o : v)
__SIMTWIN_ATOMIC_LOOP(atomicMax, int, o > v ? o : v)
__SIMTWIN_ATOMIC_LOOP(atomicMax, unsigned int, o > v ? o : v)
__SIMTWIN_ATOMIC_LOOP(atomicMax, long long, o > v ? o : v)
__SIMTWIN_ATOMIC_LOOP(atomicMax, unsigned long long, o > v ? o : v)
/* CUDA wrap semantics: inc -> (old >= v) ? 0 : old + 1; dec -> (old == 0 || old > v) ? v : old - 1. */
__SIMTWIN_ATOMIC_LOOP(atomicInc, unsigned int, o >= v ? 0u : o + 1u)
__SIMTWIN_ATOMIC_LOOP(atomicDec, unsigned int, (o == 0u || o > v) ? v : o - 1u)
#undef __SIMTWIN_ATOMIC_LOOP

#define __SIMTWIN_ATOMIC_CAS(T) \
    __SIMTWIN_INLINE T atomicCAS(T *a, T compare, T val) { \
        T expected = compare; \
        __atomic_compare_exchange_n(a, &expected, val, false, __SIMTWIN_SC, __SIMTWIN_SC); \
        return expected; } \
    __SIMTWIN_ATOMIC_ALL_SCOPES(T, atomicCAS, (T *a, T c, T v), (a, c, v))
__SIMTWIN_ATOMIC_CAS(int)
__SIMTWIN_ATOMIC_CAS(unsigned int)
__SIMTWIN_ATOMIC_CAS(unsigned long long)
__SIMTWIN_ATOMIC_CAS(unsigned short)
#undef __SIMTWIN_ATOMIC_CAS
#undef __SIMTWIN_ATOMIC_ALL_SCOPES

/* Fences: a real host fence, then the executor's hook (for when blocks run in parallel). */
__SIMTWIN_INLINE void __simtwin_fence(uint32_t scope) {
    __atomic_thread_fence(__SIMTWIN_SC);
    if (::__simtwin::rt) ::__simtwin::rt->threadfence(scope);
}
__SIMTWIN_INLINE void __threadfence_block() { __simtwin_fence(__SIMTWIN_FENCE_BLOCK); }
__SIMTWIN_INLINE void __threadfence() { __simtwin_fence(__SIMTWIN_FENCE_DEVICE); }
__SIMTWIN_INLINE void __threadfence_system() { __simtwin_fence(__SIMTWIN_FENCE_SYSTEM); }

#endif
