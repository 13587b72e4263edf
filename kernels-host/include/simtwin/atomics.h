/* Device atomics as real host atomics (GCC __atomic builtins, sequentially consistent):
   blocks may run on several OS threads at once. Read-modify-write forms that the host
   lacks (float add, min/max, inc/dec) are compare-and-swap loops, which are atomic too.
   The _block and _system variants have the same (strongest) semantics. */
#ifndef SIMTWIN_ATOMICS_H
#define SIMTWIN_ATOMICS_H
#pragma GCC system_header

#define SIMTWIN_SC __ATOMIC_SEQ_CST

/* Generic CAS loop: new = f(old). Works on the integer representation of T. */
template <class T, class F> SIMTWIN_INLINE T simtwin_atomic_rmw(T *addr, F f) {
    typedef typename std::conditional<sizeof(T) == 8, unsigned long long,
            typename std::conditional<sizeof(T) == 4, unsigned int, unsigned short>::type>::type U;
    U *p = reinterpret_cast<U *>(addr);
    U old = __atomic_load_n(p, SIMTWIN_SC);
    for (;;) {
        T ov = simtwin_bitcast<T>(old);
        U nv = simtwin_bitcast<U>(f(ov));
        if (__atomic_compare_exchange_n(p, &old, nv, false, SIMTWIN_SC, SIMTWIN_SC)) return ov;
    }
}

#define SIMTWIN_ATOMIC_ALL_SCOPES(RET, NAME, PARAMS, ARGS) \
    SIMTWIN_INLINE RET NAME##_block PARAMS { return NAME ARGS; } \
    SIMTWIN_INLINE RET NAME##_system PARAMS { return NAME ARGS; }

#define SIMTWIN_ATOMIC_FETCH(NAME, T, BUILTIN) \
    SIMTWIN_INLINE T NAME(T *a, T v) { return BUILTIN(a, v, SIMTWIN_SC); } \
    SIMTWIN_ATOMIC_ALL_SCOPES(T, NAME, (T *a, T v), (a, v))

SIMTWIN_ATOMIC_FETCH(atomicAdd, int, __atomic_fetch_add)
SIMTWIN_ATOMIC_FETCH(atomicAdd, unsigned int, __atomic_fetch_add)
SIMTWIN_ATOMIC_FETCH(atomicAdd, unsigned long long, __atomic_fetch_add)
SIMTWIN_ATOMIC_FETCH(atomicSub, int, __atomic_fetch_sub)
SIMTWIN_ATOMIC_FETCH(atomicSub, unsigned int, __atomic_fetch_sub)
SIMTWIN_ATOMIC_FETCH(atomicExch, int, __atomic_exchange_n)
SIMTWIN_ATOMIC_FETCH(atomicExch, unsigned int, __atomic_exchange_n)
SIMTWIN_ATOMIC_FETCH(atomicExch, unsigned long long, __atomic_exchange_n)
SIMTWIN_ATOMIC_FETCH(atomicAnd, int, __atomic_fetch_and)
SIMTWIN_ATOMIC_FETCH(atomicAnd, unsigned int, __atomic_fetch_and)
SIMTWIN_ATOMIC_FETCH(atomicAnd, unsigned long long, __atomic_fetch_and)
SIMTWIN_ATOMIC_FETCH(atomicOr, int, __atomic_fetch_or)
SIMTWIN_ATOMIC_FETCH(atomicOr, unsigned int, __atomic_fetch_or)
SIMTWIN_ATOMIC_FETCH(atomicOr, unsigned long long, __atomic_fetch_or)
SIMTWIN_ATOMIC_FETCH(atomicXor, int, __atomic_fetch_xor)
SIMTWIN_ATOMIC_FETCH(atomicXor, unsigned int, __atomic_fetch_xor)
SIMTWIN_ATOMIC_FETCH(atomicXor, unsigned long long, __atomic_fetch_xor)
#undef SIMTWIN_ATOMIC_FETCH

#define SIMTWIN_ATOMIC_LOOP(NAME, T, EXPR) \
    SIMTWIN_INLINE T NAME(T *a, T v) { return simtwin_atomic_rmw(a, [v](T o) -> T { return EXPR; }); } \
    SIMTWIN_ATOMIC_ALL_SCOPES(T, NAME, (T *a, T v), (a, v))
/* Float adds round to nearest, as the device's atomicAdd(float*) does. */
SIMTWIN_ATOMIC_LOOP(atomicAdd, float, o + v)
SIMTWIN_ATOMIC_LOOP(atomicAdd, double, o + v)
SIMTWIN_ATOMIC_LOOP(atomicExch, float, ((void)o, v))
SIMTWIN_ATOMIC_LOOP(atomicMin, int, o < v ? o : v)
SIMTWIN_ATOMIC_LOOP(atomicMin, unsigned int, o < v ? o : v)
SIMTWIN_ATOMIC_LOOP(atomicMin, long long, o < v ? o : v)
SIMTWIN_ATOMIC_LOOP(atomicMin, unsigned long long, o < v ? o : v)
SIMTWIN_ATOMIC_LOOP(atomicMax, int, o > v ? o : v)
SIMTWIN_ATOMIC_LOOP(atomicMax, unsigned int, o > v ? o : v)
SIMTWIN_ATOMIC_LOOP(atomicMax, long long, o > v ? o : v)
SIMTWIN_ATOMIC_LOOP(atomicMax, unsigned long long, o > v ? o : v)
/* CUDA wrap semantics: inc -> (old >= v) ? 0 : old + 1; dec -> (old == 0 || old > v) ? v : old - 1. */
SIMTWIN_ATOMIC_LOOP(atomicInc, unsigned int, o >= v ? 0u : o + 1u)
SIMTWIN_ATOMIC_LOOP(atomicDec, unsigned int, (o == 0u || o > v) ? v : o - 1u)
#undef SIMTWIN_ATOMIC_LOOP

#define SIMTWIN_ATOMIC_CAS(T) \
    SIMTWIN_INLINE T atomicCAS(T *a, T compare, T val) { \
        T expected = compare; \
        __atomic_compare_exchange_n(a, &expected, val, false, SIMTWIN_SC, SIMTWIN_SC); \
        return expected; } \
    SIMTWIN_ATOMIC_ALL_SCOPES(T, atomicCAS, (T *a, T c, T v), (a, c, v))
SIMTWIN_ATOMIC_CAS(int)
SIMTWIN_ATOMIC_CAS(unsigned int)
SIMTWIN_ATOMIC_CAS(unsigned long long)
SIMTWIN_ATOMIC_CAS(unsigned short)
#undef SIMTWIN_ATOMIC_CAS
#undef SIMTWIN_ATOMIC_ALL_SCOPES

/* Fences: a real host fence, then the executor's hook (for when blocks run in parallel). */
SIMTWIN_INLINE void simtwin_fence(uint32_t scope) {
    __atomic_thread_fence(SIMTWIN_SC);
    if (simtwin_rt) simtwin_rt->threadfence(scope);
}
SIMTWIN_INLINE void __threadfence_block() { simtwin_fence(SIMTWIN_FENCE_BLOCK); }
SIMTWIN_INLINE void __threadfence() { simtwin_fence(SIMTWIN_FENCE_DEVICE); }
SIMTWIN_INLINE void __threadfence_system() { simtwin_fence(SIMTWIN_FENCE_SYSTEM); }

#endif
