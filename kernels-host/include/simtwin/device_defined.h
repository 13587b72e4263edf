/* Device-defined results where C++ leaves them undefined: the helpers kernels-host's GCC
   plugin (plugin/simtwin_gcc_plugin.cpp) calls in place of every float-to-integer
   conversion, integer division or remainder by a non-constant, and shift by a
   non-constant amount in user code. The common case is the plain operation behind one
   compare; the rest goes to the runtime (simtwin_runtime.cpp), which computes the
   device's value (simtwin/device_values.h) and reports it (runtime->report, a hazard).

   Only in kernel libraries built by kernels-host (the runtime is linked into them). */
#ifndef __SIMTWIN_DEVICE_DEFINED_H
#define __SIMTWIN_DEVICE_DEFINED_H
#pragma GCC system_header
#ifdef __SIMTWIN_KERNELS_HOST

extern "C" {
/* Out of line, in the runtime: the device's value, reported. */
uint64_t __simtwin_dd_cvt_slow(double x, int src_bits, int dst_bits, int dst_signed, const char *file,
                               unsigned line) __SIMTWIN_HIDDEN __attribute__((cold, nothrow));
uint64_t __simtwin_dd_div_slow(int mod, int bits, int sgn, uint64_t a, uint64_t b, const char *file,
                               unsigned line) __SIMTWIN_HIDDEN __attribute__((cold, nothrow));
uint64_t __simtwin_dd_shift_slow(int right, int bits, int sgn, uint64_t a, uint32_t n, const char *file,
                                 unsigned line) __SIMTWIN_HIDDEN __attribute__((cold, nothrow));
[[noreturn]] void __simtwin_dd_misaligned(const void *address, uint64_t size, int write, const char *file,
                                          unsigned line) __SIMTWIN_HIDDEN __attribute__((cold, nothrow));
}

/* always_inline: inlined where the plugin put the call; used: emitted even before any
   call exists (the plugin adds the calls after parsing). */
#define __SIMTWIN_DD static inline __attribute__((always_inline, used, nothrow))

/* cvt: x converted exactly when C++ defines it (lo < x < hi, bounds exact in double). */
#define __SIMTWIN_DD_CVT(SRC, SBITS, DST, T, DBITS, SGN, LO, HI) \
    __SIMTWIN_DD T __simtwin_dd_cvt_##SRC##_##DST(__simtwin_##SRC __simtwin_x, const char *__simtwin_f, \
                                                             unsigned __simtwin_l) { \
        if (__builtin_expect((double)__simtwin_x > (LO) && (double)__simtwin_x < (HI), 1)) return (T)__simtwin_x; \
        return (T)__simtwin_dd_cvt_slow((double)__simtwin_x, SBITS, DBITS, SGN, __simtwin_f, __simtwin_l); \
    }
typedef float __simtwin_f32;
typedef double __simtwin_f64;
#define __SIMTWIN_DD_CVTS(SRC, SBITS) \
    __SIMTWIN_DD_CVT(SRC, SBITS, s8, int8_t, 8, 1, -129.0, 128.0) \
    __SIMTWIN_DD_CVT(SRC, SBITS, u8, uint8_t, 8, 0, -1.0, 256.0) \
    __SIMTWIN_DD_CVT(SRC, SBITS, s16, int16_t, 16, 1, -32769.0, 32768.0) \
    __SIMTWIN_DD_CVT(SRC, SBITS, u16, uint16_t, 16, 0, -1.0, 65536.0) \
    __SIMTWIN_DD_CVT(SRC, SBITS, s32, int32_t, 32, 1, -2147483649.0, 2147483648.0) \
    __SIMTWIN_DD_CVT(SRC, SBITS, u32, uint32_t, 32, 0, -1.0, 4294967296.0) \
    __SIMTWIN_DD_CVT(SRC, SBITS, s64, int64_t, 64, 1, -9223372036854777856.0, 9223372036854775808.0) \
    __SIMTWIN_DD_CVT(SRC, SBITS, u64, uint64_t, 64, 0, -1.0, 18446744073709551616.0)
__SIMTWIN_DD_CVTS(f32, 32)
__SIMTWIN_DD_CVTS(f64, 64)
#undef __SIMTWIN_DD_CVTS
#undef __SIMTWIN_DD_CVT

/* Division and remainder: a / b when b != 0 and not (MIN / -1). */
#define __SIMTWIN_DD_DIV(TY, T, BITS, SGN, MIN) \
    __SIMTWIN_DD T __simtwin_dd_div_##TY(T __simtwin_a, T __simtwin_b, const char *__simtwin_f, \
                                                    unsigned __simtwin_l) { \
        if (__builtin_expect(__simtwin_b != 0 && !(SGN && __simtwin_b == (T)-1 && __simtwin_a == (MIN)), 1)) \
            return __simtwin_a / __simtwin_b; \
        return (T)__simtwin_dd_div_slow(0, BITS, SGN, (uint64_t)__simtwin_a, (uint64_t)__simtwin_b, __simtwin_f, \
                                        __simtwin_l); \
    } \
    __SIMTWIN_DD T __simtwin_dd_mod_##TY(T __simtwin_a, T __simtwin_b, const char *__simtwin_f, \
                                                    unsigned __simtwin_l) { \
        if (__builtin_expect(__simtwin_b != 0 && !(SGN && __simtwin_b == (T)-1 && __simtwin_a == (MIN)), 1)) \
            return __simtwin_a % __simtwin_b; \
        return (T)__simtwin_dd_div_slow(1, BITS, SGN, (uint64_t)__simtwin_a, (uint64_t)__simtwin_b, __simtwin_f, \
                                        __simtwin_l); \
    }
__SIMTWIN_DD_DIV(s32, int32_t, 32, 1, INT32_MIN)
__SIMTWIN_DD_DIV(u32, uint32_t, 32, 0, 0u)
__SIMTWIN_DD_DIV(s64, int64_t, 64, 1, INT64_MIN)
__SIMTWIN_DD_DIV(u64, uint64_t, 64, 0, 0u)
#undef __SIMTWIN_DD_DIV

/* Shifts: the plain shift for amounts below the width. */
#define __SIMTWIN_DD_SHIFT(TY, T, BITS, SGN) \
    __SIMTWIN_DD T __simtwin_dd_shl_##TY(T __simtwin_a, uint32_t __simtwin_n, const char *__simtwin_f, \
                                                    unsigned __simtwin_l) { \
        if (__builtin_expect(__simtwin_n < BITS, 1)) return (T)((typename std::make_unsigned<T>::type)__simtwin_a << __simtwin_n); \
        return (T)__simtwin_dd_shift_slow(0, BITS, SGN, (uint64_t)__simtwin_a, __simtwin_n, __simtwin_f, __simtwin_l); \
    } \
    __SIMTWIN_DD T __simtwin_dd_shr_##TY(T __simtwin_a, uint32_t __simtwin_n, const char *__simtwin_f, \
                                                    unsigned __simtwin_l) { \
        if (__builtin_expect(__simtwin_n < BITS, 1)) return __simtwin_a >> __simtwin_n; \
        return (T)__simtwin_dd_shift_slow(1, BITS, SGN, (uint64_t)__simtwin_a, __simtwin_n, __simtwin_f, __simtwin_l); \
    }
__SIMTWIN_DD_SHIFT(s32, int32_t, 32, 1)
__SIMTWIN_DD_SHIFT(u32, uint32_t, 32, 0)
__SIMTWIN_DD_SHIFT(s64, int64_t, 64, 1)
__SIMTWIN_DD_SHIFT(u64, uint64_t, 64, 0)
#undef __SIMTWIN_DD_SHIFT

/* Alignment: a scalar load or store through a pointer (and an atomic) must be aligned to
   its size on the device, which otherwise ends the launch with
   CUDA_ERROR_MISALIGNED_ADDRESS (716); x86 would do it silently. The plugin puts this
   check before each such access (`align` the alignment the access's type asks for). */
__SIMTWIN_DD void __simtwin_dd_align(const void *__simtwin_p, uint64_t __simtwin_align, int __simtwin_w,
                                     const char *__simtwin_f, unsigned __simtwin_l) {
    if (__builtin_expect(((uintptr_t)__simtwin_p & (__simtwin_align - 1)) != 0, 0))
        __simtwin_dd_misaligned(__simtwin_p, __simtwin_align, __simtwin_w, __simtwin_f, __simtwin_l);
}
#undef __SIMTWIN_DD

#endif /* __SIMTWIN_KERNELS_HOST */
#endif
