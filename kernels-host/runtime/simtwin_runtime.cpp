/*
 * Per-library runtime of a simtwin kernel library. kernels-host compiles this file
 * with -frounding-math (and links it into every library it builds), because the
 * directed-rounding intrinsics switch the host rounding mode around one operation:
 * the SSE instruction then rounds exactly as the device's .rz/.ru/.rd forms do, with
 * overflow, subnormals, infinities and NaN handled by the hardware, not by emulation.
 * Operands and results pass through volatile objects so that the operation cannot move
 * across the fesetround calls.
 *
 * Also here: device printf / assert / __trap routed to the runtime table, and the
 * handlers for the checks kernels-host compiles in (-fsanitize=integer-divide-by-zero,
 * shift-exponent, float-cast-overflow): where the host would crash or silently compute
 * something else than the device, the launch ends with an error naming file and line.
 */
#include <fenv.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <stddef.h>
/* As in the kernel translation units (simtwin/prelude.h): the ABI in namespace __simtwin. */
namespace __simtwin {
#include "simtwin/abi.h"
}

#include "simtwin/device_values.h"

#define HIDDEN __attribute__((visibility("hidden")))
namespace __simtwin {
extern const simtwin_runtime_t *rt HIDDEN;
}

namespace {
enum { ADD = 0, SUB, MUL, DIV, SQRT, RCP, FMA };
enum { I32 = 0, U32, I64, U64 };

int fe_mode(int mode) {
    switch (mode) {
    case 1: return FE_TOWARDZERO;
    case 2: return FE_UPWARD;
    case 3: return FE_DOWNWARD;
    default: return FE_TONEAREST;
    }
}

/* Switches the rounding mode for the lifetime of the object. */
struct Rounding {
    int saved;
    explicit Rounding(int mode) : saved(fegetround()) { fesetround(fe_mode(mode)); }
    ~Rounding() { fesetround(saved); }
};

template <class F> F op_in_mode(int op, int mode, F a, F b, F c) {
    volatile F va = a, vb = b, vc = c;
    volatile F r;
    Rounding guard(mode);
    switch (op) {
    case ADD: r = va + vb; break;
    case SUB: r = va - vb; break;
    case MUL: r = va * vb; break;
    case DIV: r = va / vb; break;
    /* The builtins (with -fno-math-errno: the SSE instruction alone), not calls of sqrtf:
       a kernel library defines its own sqrtf, libdevice's (src/libdevice.rs). */
    case SQRT: r = sizeof(F) == 4 ? (F)__builtin_sqrtf((float)va) : (F)__builtin_sqrt((double)va); break;
    case RCP: r = (F)1 / va; break;
    case FMA: r = sizeof(F) == 4 ? (F)fmaf((float)va, (float)vb, (float)vc)
                                 : (F)fma((double)va, (double)vb, (double)vc); break;
    default: r = (F)NAN; break;
    }
    return r;
}

template <class F> F int_in_mode(int kind, int mode, uint64_t bits) {
    volatile uint64_t vb = bits;
    volatile F r;
    Rounding guard(mode);
    switch (kind) {
    case I32: r = (F)(int32_t)(uint32_t)vb; break;
    case U32: r = (F)(uint32_t)vb; break;
    case I64: r = (F)(int64_t)vb; break;
    default: r = (F)(uint64_t)vb; break;
    }
    return r;
}

/* Exact sign of m*m*x - 1 for positive finite doubles m, x (m with <= 26 and x with
   <= 24 significant bits), in integer arithmetic. */
int cmp_sq_times(double m, double x) {
    int em, ex;
    uint64_t M = (uint64_t)ldexp(frexp(m, &em), 53), X = (uint64_t)ldexp(frexp(x, &ex), 53);
    em -= 53; ex -= 53;
    while (!(M & 1)) { M >>= 1; ++em; }
    while (!(X & 1)) { X >>= 1; ++ex; }
    unsigned __int128 p = (unsigned __int128)M * M * X;
    int k = 2 * em + ex; /* value = p * 2^k */
    if (k >= 0) return (p == 1 && k == 0) ? 0 : 1;
    if (-k >= 127) return -1;
    unsigned __int128 one = (unsigned __int128)1 << (-k);
    return p > one ? 1 : (p < one ? -1 : 0);
}

[[noreturn]] void trap(uint32_t kind, const char *msg, const char *file, uint32_t line) {
    if (::__simtwin::rt && ::__simtwin::rt->trap) ::__simtwin::rt->trap(kind, msg, file, line);
    /* The table's trap does not return; without a bound runtime there is no launch to
       end, so say why and stop. */
    fprintf(stderr, "simtwin: %s at %s:%u (no runtime bound)\n", msg, file ? file : "?", line);
    abort();
}

struct SourceLocation { const char *file; uint32_t line; uint32_t column; };
} // namespace

extern "C" {
HIDDEN float __simtwin_f_op(int op, int mode, float a, float b, float c) { return op_in_mode<float>(op, mode, a, b, c); }
HIDDEN double __simtwin_d_op(int op, int mode, double a, double b, double c) { return op_in_mode<double>(op, mode, a, b, c); }
HIDDEN float __simtwin_i2f(int kind, int mode, uint64_t bits) { return int_in_mode<float>(kind, mode, bits); }
HIDDEN double __simtwin_i2d(int kind, int mode, uint64_t bits) { return int_in_mode<double>(kind, mode, bits); }
HIDDEN float __simtwin_d2f(int mode, double x) {
    volatile double vx = x;
    volatile float r;
    Rounding guard(mode);
    r = (float)vx;
    return r;
}

/* Correctly rounded 1/sqrt(x): a double estimate, then exact midpoint checks. */
HIDDEN float __simtwin_frsqrt_rn(float x) {
    if (x != x) return x;
    if (x == 0.0f) return signbit(x) ? -INFINITY : INFINITY;
    if (x < 0.0f) return NAN;
    if (isinf(x)) return 0.0f;
    float r = (float)(1.0 / sqrt((double)x));
    for (int i = 0; i < 4; ++i) {
        double lo = ((double)nextafterf(r, 0.0f) + r) / 2, hi = ((double)nextafterf(r, INFINITY) + r) / 2;
        /* r is right iff lo < 1/sqrt(x) < hi, i.e. lo^2 x < 1 < hi^2 x (no ties exist). */
        if (cmp_sq_times(hi, x) <= 0) { /* hi <= 1/sqrt(x): the result is above r */
            r = nextafterf(r, INFINITY);
        } else if (cmp_sq_times(lo, x) >= 0) { /* lo >= 1/sqrt(x) */
            r = nextafterf(r, 0.0f);
        } else {
            break;
        }
    }
    return r;
}

HIDDEN void __simtwin_trap_now(uint32_t kind, const char *msg, const char *file, uint32_t line) {
    trap(kind, msg, file, line);
}

HIDDEN void __simtwin_assert_fail(const char *expr, const char *file, unsigned line, const char *) {
    trap(::__simtwin::SIMTWIN_TRAP_ASSERT, expr, file, line);
}

/* Device printf: formatted on the host, handed to the runtime as one piece of text. */
HIDDEN int __simtwin_printf(const char *fmt, ...) {
    char small[512];
    va_list ap, ap2;
    va_start(ap, fmt);
    va_copy(ap2, ap);
    int n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n < 0) { va_end(ap2); return n; }
    char *text = small;
    if ((size_t)n >= sizeof small) {
        text = (char *)malloc((size_t)n + 1);
        if (!text) { va_end(ap2); return -1; }
        vsnprintf(text, (size_t)n + 1, fmt, ap2);
    }
    va_end(ap2);
    if (::__simtwin::rt && ::__simtwin::rt->print) ::__simtwin::rt->print(text, (size_t)n);
    else fwrite(text, 1, (size_t)n, stdout);
    if (text != small) free(text);
    return n;
}

/* ---- device-defined results (simtwin/device_defined.h's slow paths) ----------------- */

namespace {
void report(uint32_t kind, const char *file, unsigned line, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
void report(uint32_t kind, const char *file, unsigned line, const char *fmt, ...) {
    if (!::__simtwin::rt || !::__simtwin::rt->report) return;
    char msg[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    ::__simtwin::rt->report(kind, msg, ::__simtwin::simtwin_site_t{file, line, 0});
}
const char *int_name(int bits, int sgn) {
    switch (bits) {
    case 8: return sgn ? "int8" : "uint8";
    case 16: return sgn ? "int16" : "uint16";
    case 32: return sgn ? "int32" : "uint32";
    default: return sgn ? "int64" : "uint64";
    }
}
uint64_t mask(int bits) { return bits >= 64 ? ~0ull : (1ull << bits) - 1; }
} // namespace

/* A misaligned access (the plugin's check found it): the device ends the launch with
   CUDA_ERROR_MISALIGNED_ADDRESS. */
[[noreturn]] HIDDEN void __simtwin_dd_misaligned(const void *address, uint64_t size, int write, const char *file, unsigned line) {
    char msg[160];
    snprintf(msg, sizeof msg, "misaligned address: %s of %llu bytes at %p (not a multiple of %llu)",
             write ? "store" : "load", (unsigned long long)size, address, (unsigned long long)size);
    trap(::__simtwin::SIMTWIN_TRAP_MISALIGNED, msg, file, line);
}

/* The device's float/double -> integer conversion of a value C++ leaves undefined: NaN,
   or outside the destination's range. */
HIDDEN uint64_t __simtwin_dd_cvt_slow(double x, int src_bits, int dst_bits, int sgn, const char *file, unsigned line) {
    const int w = dst_bits <= 32 ? 32 : 64;
    uint64_t v;
    if (x != x) {
        v = w == 64 ? __SIMTWIN_DV_NAN_TO_64 : (src_bits == 64 ? __SIMTWIN_DV_NAN_F64_TO_32 : __SIMTWIN_DV_NAN_F32_TO_32);
    } else {
        /* Saturate to the w-bit range of the destination's signedness (exact bounds). */
        const double t = trunc(x);
        if (sgn) {
            const double lo = -ldexp(1.0, w - 1), hi = ldexp(1.0, w - 1);
            const int64_t min = w == 64 ? INT64_MIN : INT32_MIN, max = w == 64 ? INT64_MAX : INT32_MAX;
            v = (uint64_t)(t < lo ? min : t >= hi ? max : (int64_t)t);
        } else {
            const double hi = ldexp(1.0, w);
            v = t < 0 ? 0 : t >= hi ? mask(w) : (uint64_t)t;
        }
    }
    v &= mask(dst_bits);
    report(__simtwin::SIMTWIN_REPORT_CONVERSION, file, line,
           "conversion of %s %.17g to %s: %s in C++; the device's cvt gives 0x%llx",
           src_bits == 64 ? "double" : "float", x, int_name(dst_bits, sgn),
           x != x ? "NaN is undefined" : "out of range is undefined", (unsigned long long)v);
    return v;
}

/* The device's integer division or remainder by zero, and of MIN by -1. */
HIDDEN uint64_t __simtwin_dd_div_slow(int mod, int bits, int sgn, uint64_t a, uint64_t b, const char *file, unsigned line) {
    uint64_t v;
    const char *what;
    if ((b & mask(bits)) == 0) {
        v = bits == 32 ? __SIMTWIN_DV_DIV0_32 : (a <= 0xffffffffull ? __SIMTWIN_DV_DIV0_64_NARROW : __SIMTWIN_DV_DIV0_64);
        what = "by zero";
    } else {
        v = mod ? 0 : (bits == 32 ? 0x80000000ull : 0x8000000000000000ull); /* MIN / -1 == MIN, MIN % -1 == 0 */
        what = "of the minimum by -1 (overflow)";
    }
    report(__simtwin::SIMTWIN_REPORT_DIVISION, file, line, "%s %s %s: undefined in C++; the device gives 0x%llx",
           int_name(bits, sgn), mod ? "remainder" : "division", what, (unsigned long long)v);
    return v;
}

/* The device's shift by at least the operand's width (the amount clamped to it). */
HIDDEN uint64_t __simtwin_dd_shift_slow(int right, int bits, int sgn, uint64_t a, uint32_t n, const char *file,
                                        unsigned line) {
    uint64_t v = 0;
    if (right && sgn) {
        const bool negative = bits == 32 ? (int32_t)(uint32_t)a < 0 : (int64_t)a < 0;
        v = negative ? mask(bits) : 0;
    }
    report(__simtwin::SIMTWIN_REPORT_SHIFT, file, line,
           "%s of a %d-bit value by %u (as unsigned): undefined in C++; the device clamps the amount to %d and gives 0x%llx",
           right ? "right shift" : "left shift", bits, n, bits, (unsigned long long)v);
    return v;
}

/* ---- checks compiled into device code (GCC's -fsanitize instrumentation calls these) */
#define __SIMTWIN_CHECK(NAME, MSG) \
    HIDDEN void NAME(void *data, void *, void *) { \
        const SourceLocation *loc = (const SourceLocation *)data; \
        trap(::__simtwin::SIMTWIN_TRAP_UNSUPPORTED, MSG, loc->file, loc->line); } \
    HIDDEN void NAME##_abort(void *data, void *a, void *b) { NAME(data, a, b); }
__SIMTWIN_CHECK(__ubsan_handle_divrem_overflow,
              "integer division by zero (the device returns an unspecified value; the host would crash)")
__SIMTWIN_CHECK(__ubsan_handle_shift_out_of_bounds,
              "shift by a negative amount or by at least the operand's width (device and host disagree)")
#undef __SIMTWIN_CHECK
HIDDEN void __ubsan_handle_float_cast_overflow(void *data, void *) {
    const SourceLocation *loc = (const SourceLocation *)data;
    trap(::__simtwin::SIMTWIN_TRAP_UNSUPPORTED,
         "float-to-integer conversion of NaN or an out-of-range value: the device saturates, the host "
         "does not (use __float2int_rz and friends)", loc->file, loc->line);
}
HIDDEN void __ubsan_handle_float_cast_overflow_abort(void *data, void *from) {
    __ubsan_handle_float_cast_overflow(data, from);
}
}
