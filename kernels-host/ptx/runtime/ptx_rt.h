/*
 * simtwin PTX mode: the semantics of PTX instructions as host C++.
 *
 * The translator (simtwin-ptx) turns every PTX instruction into a call of one of these
 * helpers (or a plain C++ operator where the two agree bit for bit), so each
 * instruction's meaning is written once, here, from the PTX ISA, with the device's
 * answers where the ISA leaves them to the machine (device-defined values measured on
 * an H200: tests/data of this crate). Compiled with -O2 -ffp-contract=off
 * -fno-fast-math -fno-strict-aliasing -fwrapv: float operators are IEEE single
 * operations, nothing fuses unless a helper calls fma.
 */
#ifndef SIMTWIN_PTX_RT_H
#define SIMTWIN_PTX_RT_H
#include <stdint.h>
#include <stddef.h>
#include <string.h>
#include <math.h>
#include <type_traits>
#include <limits>
#include <stdio.h>
#include <stdlib.h>
#include <vector>
#include <algorithm>
#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace __simtwin {
#include "simtwin/abi.h"
extern __thread simtwin_thread_ctx_t *tls_ctx __attribute__((tls_model("initial-exec")));
extern const simtwin_runtime_t *rt __attribute__((visibility("hidden")));
}
#include "simtwin/sfu.h"
#include "simtwin/device_values.h"

extern "C" {
/* The per-library runtime (kernels-host/runtime/simtwin_runtime.cpp, -frounding-math):
   one operation under a directed rounding mode. */
float __simtwin_f_op(int op, int mode, float a, float b, float c) __attribute__((visibility("hidden")));
double __simtwin_d_op(int op, int mode, double a, double b, double c) __attribute__((visibility("hidden")));
float __simtwin_i2f(int kind, int mode, uint64_t bits) __attribute__((visibility("hidden")));
double __simtwin_i2d(int kind, int mode, uint64_t bits) __attribute__((visibility("hidden")));
float __simtwin_d2f(int mode, double x) __attribute__((visibility("hidden")));
void __simtwin_trap_now(uint32_t kind, const char *msg, const char *file, uint32_t line)
    __attribute__((visibility("hidden"), noreturn));
}

#define PTX_INLINE static inline __attribute__((always_inline))
#define PTX_COLD __attribute__((noinline, cold))

namespace ptx {
typedef unsigned __int128 u128;
typedef __int128 s128;
using ::__simtwin::simtwin_thread_ctx_t;
using ::__simtwin::simtwin_site_t;
using namespace ::__simtwin;

/* ---- per-thread state ------------------------------------------------------------ */

/* What every translated function receives: the CUDA thread's context (stable for the
   thread's life: the executor gives each thread its own), the block's shared-memory
   window, and the running kernel's shared-variable offsets (device functions reach a
   module's .shared variables through it: each kernel lays out only those it uses). */
struct Thread {
    simtwin_thread_ctx_t *ctx;
    uint8_t *smem;
    const uint32_t *soff;
    uint64_t smem_size;
    uint32_t cc; /* the carry flag of add.cc / addc / sub.cc / subc / mad.cc */
    /* The block's %ctaid, %ntid, %nctaid, copied from ctx when the runner starts (fixed
       for a runner's call): read from here, the compiler may keep them in registers
       across the threads of a loop, where a store of the kernel could alias *ctx. */
    simtwin_dim3_t bidx, bdim, gdim;
    /* The loop path of a `partial` plan (simtwin-ptx `uniform`): this block's warps lost
       some of their lanes (the probe said so) or may lose them after a split point (a
       `late` plan), so its elided shuffles are split points. */
    uint32_t partial;
    /* The special-function unit's last results, one slot per call site (`sfu_memo`). */
    float (*memo_fn[8])(float);
    uint32_t memo_in[8];
    float memo_val[8];
    /* The fiber's recovery slot (the runtime's `recover_slot`), where a loop-path runner
       has vector segments and the runtime has the entry (`simd::guarded`); else null. */
    const simtwin_recover_t **recover;
};


/* ---- bits ------------------------------------------------------------------------ */

template <class To, class From> PTX_INLINE To bc(From f) {
    static_assert(sizeof(To) == sizeof(From), "bit cast of different sizes");
    To t;
    memcpy(&t, &f, sizeof t);
    return t;
}
template <size_t N> struct uint_of;
template <> struct uint_of<1> { typedef uint8_t type; };
template <> struct uint_of<2> { typedef uint16_t type; };
template <> struct uint_of<4> { typedef uint32_t type; };
template <> struct uint_of<8> { typedef uint64_t type; };
template <> struct uint_of<16> { typedef u128 type; };
template <class T> using bits_t = typename uint_of<sizeof(T)>::type;

/* An f32 special function's result for an operand this runner call already gave the same
   call site: the threads of a block often compute one value alike (a scale from the
   launch's shape), and the unit's model costs tens of instructions. Keyed by the function
   (slots are shared by number: an empty one names none) and the operand's bits; F is
   pure, so any hit is exact. */
template <float (*F)(float)> PTX_INLINE float sfu_memo(Thread &T, uint32_t k, float x) {
    const uint32_t in = bc<uint32_t>(x);
    if (T.memo_fn[k] == F && T.memo_in[k] == in) return T.memo_val[k];
    const float r = F(x);
    T.memo_fn[k] = F;
    T.memo_in[k] = in;
    T.memo_val[k] = r;
    return r;
}

/* A register of C type R read as instruction type T (PTX "operand size exceeding
   instruction-type size": a wider register is truncated to the instruction's size). */
template <class T, class R> PTX_INLINE T rd(R r) {
    if constexpr (std::is_same<T, R>::value) {
        return r;
    } else if constexpr (std::is_same<R, bool>::value) {
        return (T)(r ? 1 : 0);
    } else if constexpr (std::is_same<T, bool>::value) {
        return bc<bits_t<R>>(r) != 0;
    } else {
        bits_t<R> b = bc<bits_t<R>>(r);
        return bc<T>((bits_t<T>)b);
    }
}
/* A value of instruction type T written to a register of C type R: a wider register
   gets the value sign-extended for signed integer types, zero-extended otherwise. */
template <class R, class T> PTX_INLINE R wr(T v) {
    if constexpr (std::is_same<T, R>::value) {
        return v;
    } else if constexpr (std::is_same<R, bool>::value) {
        return bc<bits_t<T>>(v) != 0;
    } else if constexpr (std::is_same<T, bool>::value) {
        return bc<R>((bits_t<R>)(v ? 1 : 0));
    } else if constexpr (std::is_integral<T>::value && std::is_signed<T>::value && sizeof(R) > sizeof(T)) {
        typedef typename std::make_signed<bits_t<R>>::type S;
        return bc<R>((bits_t<R>)(S)v);
    } else {
        return bc<R>((bits_t<R>)bc<bits_t<T>>(v));
    }
}
/* The device requires every access to be aligned to its size and ends the launch with
   CUDA_ERROR_MISALIGNED_ADDRESS (716) otherwise; x86 would go on. Vector accesses are
   checked element by element: ptxas narrows a vector load whose lanes are partly unused
   (an ld.global.v4.u32 at an 8-byte boundary of which two lanes are used ran on the
   H200: `misaligned_load16_at8`). */
[[noreturn]] PTX_COLD static void misaligned(uint64_t a, uint32_t bytes) {
    char buf[96];
    snprintf(buf, sizeof buf, "misaligned address: access of %u bytes at 0x%llx (not a multiple of %u)", bytes,
             (unsigned long long)a, bytes);
    __simtwin_trap_now(SIMTWIN_TRAP_MISALIGNED, buf, "", 0);
}
PTX_INLINE void align_check(uint64_t a, uint32_t bytes) {
    if (__builtin_expect((a & (bytes - 1)) != 0, 0)) misaligned(a, bytes);
}
template <class T> PTX_INLINE void align_of(uint64_t a) {
    if constexpr (sizeof(T) > 1 && (sizeof(T) & (sizeof(T) - 1)) == 0) align_check(a, sizeof(T));
}
/* ALIGNED: the runner checked this access's alignment for every thread before running
   them (simtwin-ptx `align`: a pointer parameter plus a multiple of the size). */
template <class T, bool ALIGNED = false> PTX_INLINE T load(uint64_t a) {
    if (!ALIGNED) align_of<T>(a);
    T v;
    memcpy(&v, (const void *)(uintptr_t)a, sizeof v);
    return v;
}
template <class T, bool ALIGNED = false> PTX_INLINE void store(uint64_t a, T v) {
    if (!ALIGNED) align_of<T>(a);
    memcpy((void *)(uintptr_t)a, &v, sizeof v);
}
/* ld.param of the kernel's own parameter buffer at a fixed aligned offset (simtwin-ptx
   `own_param_offset`): read from the buffer, not through an integer address, so that the
   buffer never escapes and the value stays loop-invariant across a runner's threads. */
template <class T> PTX_INLINE T pload(const uint8_t *p, uint64_t off) {
    T v;
    memcpy(&v, p + off, sizeof v);
    return v;
}
template <class T> PTX_INLINE T vload(uint64_t a) {
    align_of<T>(a);
    return *(const volatile T *)(uintptr_t)a;
}
template <class T> PTX_INLINE void vstore(uint64_t a, T v) {
    align_of<T>(a);
    *(volatile T *)(uintptr_t)a = v;
}

/* ---- integers -------------------------------------------------------------------- */

template <class T> using U = typename std::make_unsigned<T>::type;
template <class T> PTX_INLINE T add(T a, T b) { return (T)((U<T>)a + (U<T>)b); }
template <class T> PTX_INLINE T sub(T a, T b) { return (T)((U<T>)a - (U<T>)b); }
template <class T> PTX_INLINE T mul_lo(T a, T b) { return (T)((U<T>)a * (U<T>)b); }
template <class T> PTX_INLINE T neg(T a) { return (T)(U<T>(0) - (U<T>)a); }
template <class T> PTX_INLINE T abs_(T a) { return a < 0 ? neg(a) : a; }
PTX_INLINE int32_t add_sat(int32_t a, int32_t b) {
    int64_t s = (int64_t)a + b;
    return s > INT32_MAX ? INT32_MAX : s < INT32_MIN ? INT32_MIN : (int32_t)s;
}
PTX_INLINE int32_t sub_sat(int32_t a, int32_t b) {
    int64_t s = (int64_t)a - b;
    return s > INT32_MAX ? INT32_MAX : s < INT32_MIN ? INT32_MIN : (int32_t)s;
}
/* The high half of the full product. */
template <class T> PTX_INLINE T mul_hi(T a, T b) {
    if constexpr (sizeof(T) == 8) {
        if constexpr (std::is_signed<T>::value) return (T)(((s128)a * (s128)b) >> 64);
        else return (T)(((u128)a * (u128)b) >> 64);
    } else if constexpr (sizeof(T) == 4) {
        if constexpr (std::is_signed<T>::value) return (T)(((int64_t)a * (int64_t)b) >> 32);
        else return (T)(((uint64_t)a * (uint64_t)b) >> 32);
    } else {
        if constexpr (std::is_signed<T>::value) return (T)(((int32_t)a * (int32_t)b) >> (8 * sizeof(T)));
        else return (T)(((uint32_t)a * (uint32_t)b) >> (8 * sizeof(T)));
    }
}
/* mul.wide: the double-width product. */
template <class W, class T> PTX_INLINE W mul_wide(T a, T b) { return (W)((W)a * (W)b); }
/* mul24: the low (or high) 32 bits of the 48-bit product of the low 24 bits. */
PTX_INLINE uint32_t mul24_lo(uint32_t a, uint32_t b, bool sgn) {
    int64_t x = sgn ? (int64_t)((int32_t)(a << 8) >> 8) : (int64_t)(a & 0xffffff);
    int64_t y = sgn ? (int64_t)((int32_t)(b << 8) >> 8) : (int64_t)(b & 0xffffff);
    return (uint32_t)(uint64_t)(x * y);
}
PTX_INLINE uint32_t mul24_hi(uint32_t a, uint32_t b, bool sgn) {
    int64_t x = sgn ? (int64_t)((int32_t)(a << 8) >> 8) : (int64_t)(a & 0xffffff);
    int64_t y = sgn ? (int64_t)((int32_t)(b << 8) >> 8) : (int64_t)(b & 0xffffff);
    return (uint32_t)((uint64_t)(x * y) >> 16);
}
/* Carry chains: the flag is Thread::cc (PTX's CC.CF). */
template <class T> PTX_INLINE T add_cc(Thread &t, T a, T b, bool cin, bool cout) {
    U<T> ua = (U<T>)a, ub = (U<T>)b, c = cin ? (U<T>)t.cc : 0;
    U<T> s = ua + ub;
    bool c1 = s < ua;
    U<T> r = s + c;
    bool c2 = r < s;
    if (cout) t.cc = (c1 || c2) ? 1 : 0;
    return (T)r;
}
/* sub.cc: borrow out; subc: a - (b + borrow in). */
template <class T> PTX_INLINE T sub_cc(Thread &t, T a, T b, bool cin, bool cout) {
    U<T> ua = (U<T>)a, ub = (U<T>)b, c = cin ? (U<T>)t.cc : 0;
    U<T> d = ua - ub;
    bool b1 = ua < ub;
    U<T> r = d - c;
    bool b2 = d < c;
    if (cout) t.cc = (b1 || b2) ? 1 : 0;
    return (T)r;
}
/* Device-defined division: x / 0 and x % 0 (device_values.h), MIN / -1. */
PTX_COLD static void report_div0(const simtwin_site_t &site);
template <class T> PTX_INLINE T div_(T a, T b, const simtwin_site_t &site) {
    if (__builtin_expect(b == 0, 0)) {
        report_div0(site);
        if constexpr (sizeof(T) <= 4) return (T)(U<T>)__SIMTWIN_DV_DIV0_32;
        else return (T)(U<T>)__SIMTWIN_DV_DIV0_64;
    }
    if constexpr (std::is_signed<T>::value) {
        if (b == (T)-1) return neg(a);
    }
    return a / b;
}
template <class T> PTX_INLINE T rem_(T a, T b, const simtwin_site_t &site) {
    if (__builtin_expect(b == 0, 0)) {
        report_div0(site);
        if constexpr (sizeof(T) <= 4) return (T)(U<T>)__SIMTWIN_DV_DIV0_32;
        else return (T)(U<T>)__SIMTWIN_DV_DIV0_64;
    }
    if constexpr (std::is_signed<T>::value) {
        if (b == (T)-1) return 0;
    }
    return a % b;
}
/* Shifts: the amount is unsigned 32 bits, clamped to the width. */
template <class T> PTX_INLINE T shl(T a, uint32_t n) {
    return n >= 8 * sizeof(T) ? (T)0 : (T)((U<T>)a << n);
}
template <class T> PTX_INLINE T shr(T a, uint32_t n) {
    if constexpr (std::is_signed<T>::value) return n >= 8 * sizeof(T) ? (a < 0 ? (T)-1 : (T)0) : (T)(a >> n);
    else return n >= 8 * sizeof(T) ? (T)0 : (T)(a >> n);
}
/* shf.l / shf.r: funnel shift of {b:a} (b high), .wrap (amount mod 32) or .clamp (min 32). */
PTX_INLINE uint32_t shf_l(uint32_t a, uint32_t b, uint32_t n, bool clamp) {
    n = clamp ? (n > 32 ? 32 : n) : (n & 31);
    uint64_t x = ((uint64_t)b << 32) | a;
    return (uint32_t)((x << n) >> 32);
}
PTX_INLINE uint32_t shf_r(uint32_t a, uint32_t b, uint32_t n, bool clamp) {
    n = clamp ? (n > 32 ? 32 : n) : (n & 31);
    uint64_t x = ((uint64_t)b << 32) | a;
    return (uint32_t)(x >> n);
}
template <class T> PTX_INLINE uint32_t popc(T a) {
    if constexpr (sizeof(T) == 8) return (uint32_t)__builtin_popcountll((uint64_t)a);
    else return (uint32_t)__builtin_popcount((uint32_t)(U<T>)a);
}
template <class T> PTX_INLINE uint32_t clz(T a) {
    if constexpr (sizeof(T) == 8) return a == 0 ? 64 : (uint32_t)__builtin_clzll((uint64_t)a);
    else return (uint32_t)a == 0 ? 32 : (uint32_t)__builtin_clz((uint32_t)a);
}
/* bfind: position of the most significant non-sign bit; 0xffffffff if none;
   .shiftamt: the left shift that would put it at the top. */
template <class T> PTX_INLINE uint32_t bfind(T a, bool shiftamt) {
    const uint32_t w = 8 * sizeof(T);
    U<T> x = (U<T>)a;
    if constexpr (std::is_signed<T>::value) {
        if (a < 0) x = ~x;
    }
    if (x == 0) return 0xffffffffu;
    uint32_t pos = w - 1 - clz(x);
    return shiftamt ? (w - 1 - pos) : pos;
}
template <class T> PTX_INLINE T brev(T a) {
    U<T> x = (U<T>)a, r = 0;
    for (uint32_t i = 0; i < 8 * sizeof(T); ++i) {
        r = (U<T>)((r << 1) | (x & 1));
        x >>= 1;
    }
    return (T)r;
}
/* bfe: extract len bits at pos (both taken mod 256), sign-extended for signed types. */
/* 32-bit forms take position and length mod 256 (PTX ISA); the 64-bit forms take them
   whole (measured on the H200: ptxas's expansion, a length of 256 is everything). */
template <class T> PTX_INLINE T bfe(T a, uint32_t pos, uint32_t len) {
    const uint32_t w = 8 * sizeof(T);
    if (w <= 32) {
        pos &= 0xff;
        len &= 0xff;
    }
    U<T> x = (U<T>)a;
    bool sbit;
    if constexpr (std::is_signed<T>::value) {
        uint64_t top = (uint64_t)pos + len - 1;
        uint32_t sp = (top >= w || len == 0) ? w - 1 : (uint32_t)top;
        sbit = len == 0 ? false : ((x >> (sp >= w ? w - 1 : sp)) & 1);
        if (len == 0) return 0;
    } else {
        sbit = false;
    }
    /* Bit i of the result: bit pos + i of a for i < len while pos + i < w, else sbit. */
    const uint32_t n = pos >= w ? 0 : (len < w - pos ? len : w - pos);
    const U<T> keep = n >= w ? (U<T>)~(U<T>)0 : (U<T>)(((U<T>)1 << n) - 1);
    const U<T> got = n == 0 ? (U<T>)0 : (U<T>)((x >> pos) & keep);
    return (T)(sbit ? (U<T>)(got | (U<T>)~keep) : got);
}
/* bfi: insert len bits of a into b at pos. */
template <class T> PTX_INLINE T bfi(T a, T b, uint32_t pos, uint32_t len) {
    const uint32_t w = 8 * sizeof(T);
    if (w <= 32) {
        pos &= 0xff;
        len &= 0xff;
    }
    /* Bits pos .. pos + len - 1 of b (those below w) take a's low bits. */
    if (pos >= w || len == 0) return b;
    const uint32_t n = len < w - pos ? len : w - pos;
    const U<T> m = (U<T>)((n >= w ? (U<T>)~(U<T>)0 : (U<T>)(((U<T>)1 << n) - 1)) << pos);
    return (T)(((U<T>)b & (U<T>)~m) | ((U<T>)((U<T>)a << pos) & m));
}
/* fns: the position of the n-th set bit of mask from base (backwards if n < 0). */
PTX_INLINE uint32_t fns(uint32_t mask, uint32_t base, int32_t offset) {
    if (base > 31) return 0xffffffffu;
    if (offset == INT32_MIN) return 0; /* measured on the H200, for every mask and base */
    if (offset == 0) return ((mask >> base) & 1) ? base : 0xffffffffu;
    int32_t n = offset;
    if (n > 0) {
        for (uint32_t i = base; i < 32; ++i)
            if (((mask >> i) & 1) && --n == 0) return i;
    } else {
        for (int32_t i = (int32_t)base; i >= 0; --i)
            if (((mask >> i) & 1) && ++n == 0) return (uint32_t)i;
    }
    return 0xffffffffu;
}
/* prmt: byte permute of {b, a} (a bytes 0-3, b bytes 4-7). mode 0 = default. Written
   without loops or arrays: nvcc packs and unpacks bytes with prmt of a literal selector,
   which then folds to a few shifts (a loop over the four bytes stayed a loop at -O2). */
PTX_INLINE uint32_t prmt_byte(uint64_t x, uint32_t s, bool sign) {
    uint32_t v = (uint32_t)(x >> (8 * (s & 7))) & 0xffu;
    if (sign && (s & 8)) v = (v & 0x80u) ? 0xffu : 0u; /* sign replicate */
    return v;
}
PTX_INLINE uint32_t prmt(uint32_t a, uint32_t b, uint32_t c, int mode) {
    const uint64_t x = ((uint64_t)b << 32) | a;
    const uint32_t s = c & 3;
    uint32_t s0, s1, s2, s3;
    switch (mode) {
    case 0:
        s0 = c & 0xf;
        s1 = (c >> 4) & 0xf;
        s2 = (c >> 8) & 0xf;
        s3 = (c >> 12) & 0xf;
        break;
    case 1: /* f4e: forward 4 extract */
        s0 = s;
        s1 = (s + 1) & 7;
        s2 = (s + 2) & 7;
        s3 = (s + 3) & 7;
        break;
    case 2: /* b4e: backward 4 extract */
        s0 = s;
        s1 = (s - 1) & 7;
        s2 = (s - 2) & 7;
        s3 = (s - 3) & 7;
        break;
    case 3: /* rc8: replicate byte */
        s0 = s1 = s2 = s3 = s;
        break;
    case 4: /* ecl: edge clamp left: bytes below the selector repeat it */
        s0 = s;
        s1 = 1 < s ? s : 1;
        s2 = 2 < s ? s : 2;
        s3 = 3;
        break;
    case 5: /* ecr: edge clamp right: bytes above the selector repeat it */
        s0 = 0;
        s1 = 1 > s ? s : 1;
        s2 = 2 > s ? s : 2;
        s3 = s;
        break;
    default: /* rc16: replicate half */
        s0 = s2 = 2 * (c & 1);
        s1 = s3 = 2 * (c & 1) + 1;
        break;
    }
    const bool sign = mode == 0;
    return prmt_byte(x, s0, sign) | prmt_byte(x, s1, sign) << 8 | prmt_byte(x, s2, sign) << 16 | prmt_byte(x, s3, sign) << 24;
}
/* lop3: the function of three inputs given by its truth table. */
PTX_INLINE uint32_t lop3(uint32_t a, uint32_t b, uint32_t c, uint32_t lut) {
    uint32_t r = 0;
    for (int i = 0; i < 8; ++i) {
        if ((lut >> i) & 1) {
            uint32_t ta = (i & 4) ? a : ~a, tb = (i & 2) ? b : ~b, tc = (i & 1) ? c : ~c;
            r |= ta & tb & tc;
        }
    }
    return r;
}
/* dp4a / dp2a: dot products of packed bytes / halves, accumulated into c. */
PTX_INLINE uint32_t dp4a(uint32_t a, uint32_t b, uint32_t c, bool as, bool bs) {
    int64_t s = (int32_t)c;
    for (int i = 0; i < 4; ++i) {
        int32_t x = as ? (int32_t)(int8_t)(a >> (8 * i)) : (int32_t)(uint8_t)(a >> (8 * i));
        int32_t y = bs ? (int32_t)(int8_t)(b >> (8 * i)) : (int32_t)(uint8_t)(b >> (8 * i));
        s += (int64_t)x * y;
    }
    return (uint32_t)s;
}
PTX_INLINE uint32_t dp2a(uint32_t a, uint32_t b, uint32_t c, bool as, bool bs, bool hi) {
    int64_t s = (int32_t)c;
    for (int i = 0; i < 2; ++i) {
        int32_t x = as ? (int32_t)(int16_t)(a >> (16 * i)) : (int32_t)(uint16_t)(a >> (16 * i));
        int k = (hi ? 2 : 0) + i;
        int32_t y = bs ? (int32_t)(int8_t)(b >> (8 * k)) : (int32_t)(uint8_t)(b >> (8 * k));
        s += (int64_t)x * y;
    }
    return (uint32_t)s;
}
/* sad: |a - b| + c. */
template <class T> PTX_INLINE T sad(T a, T b, T c) {
    U<T> d = a > b ? (U<T>)a - (U<T>)b : (U<T>)b - (U<T>)a;
    return (T)(d + (U<T>)c);
}
/* bmsk: a mask of b bits from position a (clamped to 32). */
PTX_INLINE uint32_t bmsk(uint32_t a, uint32_t b, bool clamp) {
    if (!clamp) {
        a &= 0x1f;
        b &= 0x1f;
    }
    if (a >= 32) return 0;
    uint64_t m = b >= 32 ? ~0ull : ((1ull << b) - 1);
    return (uint32_t)((m << a) & 0xffffffffull);
}
/* szext: sign- or zero-extend the low b bits of a. */
PTX_INLINE uint32_t szext(uint32_t a, uint32_t b, bool sgn, bool clamp) {
    b = clamp ? (b > 32 ? 32 : b) : (b & 31);
    if (b == 0) return 0;
    if (b >= 32) return a;
    uint32_t m = (1u << b) - 1, v = a & m;
    if (sgn && ((v >> (b - 1)) & 1)) v |= ~m;
    return v;
}

/* ---- floats ---------------------------------------------------------------------- */

/* NaN results, as the H200 writes them (the PTX suite, tests/data/suite-h200.bin.zst):
   - f32 arithmetic (add ... fma, div, sqrt, rcp, abs, neg, min/max of two NaNs, cvt to
     f32 from f32/f16, atom.add.f32) writes the canonical NaN 0x7fffffff;
   - f64 arithmetic propagates an input NaN, quieted, payload and sign kept (fma: the
     first NaN of b, c, a; div: of a, b; the others: of b, a), and an invalid operation (0/0, inf-inf,
     sqrt of a negative) writes 0xfff8000000000000, the default NaN x86 writes too;
     abs/neg of a f64 NaN quiet it and keep its sign. */
PTX_INLINE float canon(float x) { return x != x ? bc<float>(0x7fffffffu) : x; }
PTX_INLINE double quiet(double x) { return bc<double>(bc<uint64_t>(x) | 0x0008000000000000ull); }
PTX_INLINE double canon(double x) { return x != x ? bc<double>(0xfff8000000000000ull) : x; }
PTX_INLINE float ftz(float x) {
    uint32_t u = bc<uint32_t>(x);
    return (u & 0x7f800000u) == 0 ? bc<float>(u & 0x80000000u) : x;
}
PTX_INLINE double ftz(double x) {
    uint64_t u = bc<uint64_t>(x);
    return (u & 0x7ff0000000000000ull) == 0 ? bc<double>(u & 0x8000000000000000ull) : x;
}
/* .sat: clamp to [0, 1]; NaN becomes +0. */
template <class F> PTX_INLINE F sat(F x) { return x > (F)0 ? (x < (F)1 ? x : (F)1) : (F)0; }
PTX_INLINE float  fz(float x, bool on) { return on ? ftz(x) : x; }
PTX_INLINE double fz(double x, bool on) { return on ? ftz(x) : x; }

enum { RN = 0, RZ = 1, RP = 2, RM = 3 };
enum { OP_ADD = 0, OP_SUB, OP_MUL, OP_DIV, OP_SQRT, OP_RCP, OP_FMA };

/* a + b rounded toward zero, down or up without switching the host's rounding mode
   (which costs two libm calls and a pipeline flush each: 7% of upstream VMAF's vif_cuda,
   whose log2 approximation adds with __fadd_rz). The nearest sum r and its exact error e
   (Knuth's TwoSum, exact under round-to-nearest with gradual underflow); a non-zero e on
   the wrong side of r moves r one step in the mode's direction. An exact zero sum is -0
   under RM unless both operands are +0, as IEEE 754 says. Overflow and a non-finite
   error (TwoSum's intermediate overflow next to the largest finite value) go to the
   runtime's mode-switching path. */
template <class F> PTX_INLINE bool add_directed(int rm, F a, F b, F &out) {
    F r = a + b;
    if (!(r - r == 0)) return !(a - a == 0 && b - b == 0) ? (out = r, true) : false; /* inf/NaN operand: as nearest */
    F bb = r - a;
    F e = (a - (r - bb)) + (b - bb);
    if (!(e - e == 0)) return false;
    if (e == 0) {
        if (r == 0 && rm == RM) r = (std::signbit(a) || std::signbit(b)) ? -(F)0 : (F)0;
        out = r;
        return true;
    }
    const bool down = rm == RM || (rm == RZ && r > 0), up = rm == RP || (rm == RZ && r < 0);
    /* One step from the finite, non-zero r (a zero sum is exact: e is 0): its bits one
       further from zero where the step goes away from it, one nearer where toward it
       (the largest finite value steps to infinity, as nextafter does). */
    if ((down && e < 0) || (up && e > 0)) {
        const bool away = (r > 0) == up;
        r = bc<F>((bits_t<F>)(bc<bits_t<F>>(r) + (away ? 1 : (bits_t<F>)-1)));
    }
    out = r;
    return true;
}

/* One IEEE operation under rounding mode rm (the directed modes switch the host's mode
   around it, in the runtime, except for add and sub: add_directed). */
PTX_INLINE float fop(int op, int rm, float a, float b, float c) {
    float d;
    if (rm != RN && (op == OP_ADD || op == OP_SUB) && add_directed<float>(rm, a, op == OP_ADD ? b : -b, d)) return d;
    if (rm == RN) {
        switch (op) {
        case OP_ADD: return a + b;
        case OP_SUB: return a - b;
        case OP_MUL: return a * b;
        case OP_DIV: return a / b;
        case OP_SQRT: return __builtin_sqrtf(a); /* not sqrtf: in a twin that is libdevice's */
        case OP_RCP: return 1.0f / a;
        default: return fmaf(a, b, c);
        }
    }
    return __simtwin_f_op(op, rm, a, b, c);
}
PTX_INLINE double fop(int op, int rm, double a, double b, double c) {
    double d;
    if (rm != RN && (op == OP_ADD || op == OP_SUB) && add_directed<double>(rm, a, op == OP_ADD ? b : -b, d)) return d;
    if (rm == RN) {
        switch (op) {
        case OP_ADD: return a + b;
        case OP_SUB: return a - b;
        case OP_MUL: return a * b;
        case OP_DIV: return a / b;
        case OP_SQRT: return sqrt(a);
        case OP_RCP: return 1.0 / a;
        default: return fma(a, b, c);
        }
    }
    return __simtwin_d_op(op, rm, a, b, c);
}
/* An arithmetic instruction: inputs flushed (.ftz), the operation, the result flushed
   and saturated as the modifiers say, NaN canonical. */
/* .ftz flushes a result that is tiny before rounding (|exact| < 2^-126), also when it
   rounds up to the smallest normal (measured: mul.rn.ftz(2^-126, 1-2^-24) is 0). Only
   those results are checked here, exactly. */
PTX_COLD static bool tiny_before_rounding(int op, float a, float b, float c) {
    const double lim = 0x1p-126;
    switch (op) {
    case OP_MUL: return fabs((double)a * (double)b) < lim; /* exact in double */
    case OP_DIV: return fabs((double)a / (double)b) < lim; /* a/b of 24-bit values is never within 2^-53 of 2^-126 */
    case OP_RCP: return fabs((double)a) > 0x1p126;
    case OP_FMA: {
        double p = (double)a * (double)b, s = p + (double)c;
        double bp = s - (double)c, e = (p - bp) + ((double)c - (s - bp)); /* s + e == p + c exactly */
        if (fabs(s) != lim) return fabs(s) < lim;
        return (s > 0) ? e < 0 : e > 0;
    }
    default: return false;
    }
}
/* C: canonicalise an f32 NaN result. simtwin-ptx passes false where every use of the
   result is an f32 add/sub/mul/fma or setp (`nan_blind`): those give the canonical NaN
   (or an unordered compare) for any NaN operand, so its payload is never seen. */
template <class F, bool C = true> PTX_INLINE F farith(int op, int rm, bool z, bool s, F a, F b, F c) {
    if constexpr (sizeof(F) == 8) {
        /* f64: an input NaN propagates (quieted); see canon above. */
        bool na = a != a, nb = b != b, nc = op == OP_FMA && c != c;
        if (__builtin_expect(na || nb || nc, 0)) {
            if (op == OP_FMA) return quiet(nb ? b : nc ? c : a);
            if (op == OP_DIV) return quiet(na ? a : b); /* a software sequence: a first */
            return quiet(nb ? b : a);
        }
        F r = fop(op, rm, fz(a, z), fz(b, z), fz(c, z));
        r = fz(r, z);
        if (s) r = sat(r);
        return canon(r);
    } else {
        a = fz(a, z);
        b = fz(b, z);
        c = fz(c, z);
        F r = fop(op, rm, a, b, c);
        if (z) {
            r = fz(r, z);
            if (__builtin_expect(fabsf(r) == 0x1p-126f, 0) && tiny_before_rounding(op, a, b, c)) r = bc<float>(bc<uint32_t>(r) & 0x80000000u);
        }
        if (s) r = sat(r);
        return C ? canon(r) : r;
    }
}
/* The multiply a fused add takes from div.approx/full.f32: ptxas expands the division
   before contracting into the (scaled) dividend times the unit's reciprocal of the (scaled)
   divisor, and contracts that multiply (reports/ptxas-contraction/README.md 2.1, 2.7). The
   scaling is the division's own (runtime/simtwin_sfu.cpp): by 2^24 where the divisor is
   zero or subnormal (not .ftz), by 1/4 where |b| > 2^126 (div.full). */
PTX_INLINE void div_parts(bool full, bool z, float a, float b, float &ma, float &mb) {
    uint32_t m = bc<uint32_t>(b) & 0x7fffffffu;
    bool tiny = m < 0x00800000u, huge = m > 0x7e800000u && m <= 0x7f800000u;
    if (full && huge) {
        a = farith<float>(OP_MUL, RN, z, false, a, 0.25f, 0.0f);
        b = farith<float>(OP_MUL, RN, z, false, b, 0.25f, 0.0f);
    } else if (!z && tiny) {
        a = farith<float>(OP_MUL, RN, false, false, a, 16777216.0f, 0.0f);
        b = farith<float>(OP_MUL, RN, false, false, b, 16777216.0f, 0.0f);
    }
    ma = a;
    mb = __simtwin_sfu_rcp_ftz_f32(b); /* the unit's reciprocal, unscaled */
}
/* min / max: a NaN operand is ignored; both NaN gives the canonical NaN; -0 < +0.
   .NaN: any NaN operand gives the canonical NaN. */
template <class F> PTX_INLINE F fmin_(F a, F b, bool z, bool nan) {
    a = fz(a, z);
    b = fz(b, z);
    if (a != a || b != b) {
        if (nan || (a != a && b != b)) {
            if constexpr (sizeof(F) == 8) return quiet(b != b ? b : a);
            else return bc<F>(0x7fffffffu);
        }
        return a != a ? b : a;
    }
    if (a == b) return std::signbit(a) ? a : b;
    return a < b ? a : b;
}
template <class F> PTX_INLINE F fmax_(F a, F b, bool z, bool nan) {
    a = fz(a, z);
    b = fz(b, z);
    if (a != a || b != b) {
        if (nan || (a != a && b != b)) {
            if constexpr (sizeof(F) == 8) return quiet(b != b ? b : a);
            else return bc<F>(0x7fffffffu);
        }
        return a != a ? b : a;
    }
    if (a == b) return std::signbit(a) ? b : a;
    return a > b ? a : b;
}
/* testp */
template <class F> PTX_INLINE bool testp(F x, int what) {
    switch (what) {
    case 0: return isfinite(x);
    case 1: return isinf(x);
    case 2: return x == x;            /* number */
    case 3: return x != x;            /* notanumber */
    case 4: return isnormal(x) || x == (F)0; /* the device counts zeros as normal */
    default: return fpclassify(x) == FP_SUBNORMAL;
    }
}
template <class F> PTX_INLINE F copysign_(F a, F b) {
    /* copysign.f32 d, a, b: b's magnitude with a's sign */
    bits_t<F> ua = bc<bits_t<F>>(a), ub = bc<bits_t<F>>(b);
    const bits_t<F> s = (bits_t<F>)1 << (8 * sizeof(F) - 1);
    return bc<F>((bits_t<F>)((ub & ~s) | (ua & s)));
}
/* neg/abs as instructions: a NaN operand gives the canonical NaN (f32) or itself,
   quieted (f64). fneg_bits is the plain sign flip the contraction model uses. */
template <class F> PTX_INLINE F fneg_bits(F a) {
    const bits_t<F> s = (bits_t<F>)1 << (8 * sizeof(F) - 1);
    return bc<F>((bits_t<F>)(bc<bits_t<F>>(a) ^ s));
}
template <class F> PTX_INLINE F fneg(F a) {
    if (a != a) {
        if constexpr (sizeof(F) == 8) return quiet(a);
        else return canon(a);
    }
    return fneg_bits(a);
}
template <class F> PTX_INLINE F fabs_(F a) {
    if (a != a) {
        if constexpr (sizeof(F) == 8) return quiet(a);
        else return canon(a);
    }
    const bits_t<F> s = (bits_t<F>)1 << (8 * sizeof(F) - 1);
    return bc<F>((bits_t<F>)(bc<bits_t<F>>(a) & ~s));
}

/* Comparisons (setp/set/slct): ops in the order of enum cmp below. Unordered forms are
   true when either operand is NaN. */
enum { EQ, NE, LT, LE, GT, GE, LO, LS, HI, HS, EQU, NEU, LTU, LEU, GTU, GEU, NUM, NAN_ };
template <class T> PTX_INLINE bool cmp(int op, T a, T b) {
    if constexpr (std::is_floating_point<T>::value) {
        bool un = a != a || b != b;
        switch (op) {
        case EQ: return !un && a == b;
        case NE: return !un && a != b;
        case LT: return !un && a < b;
        case LE: return !un && a <= b;
        case GT: return !un && a > b;
        case GE: return !un && a >= b;
        case EQU: return un || a == b;
        case NEU: return un || a != b;
        case LTU: return un || a < b;
        case LEU: return un || a <= b;
        case GTU: return un || a > b;
        case GEU: return un || a >= b;
        case NUM: return !un;
        default: return un;
        }
    } else {
        switch (op) {
        case EQ: return a == b;
        case NE: return a != b;
        case LT: case LO: return a < b;
        case LE: case LS: return a <= b;
        case GT: case HI: return a > b;
        default: return a >= b;
        }
    }
}

/* ---- conversions ----------------------------------------------------------------- */

/* Float -> integer: round as the mode says (RNI nearest even, RZI toward zero, RMI
   down, RPI up), saturate to the destination's range; NaN as the device gives it. */
enum { RNI = 0, RZI = 1, RPI = 2, RMI = 3 };
template <class F> PTX_INLINE F round_int(F x, int rm) {
    switch (rm) {
    case RNI: return sizeof(F) == 4 ? (F)nearbyintf((float)x) : (F)nearbyint((double)x);
    case RZI: return sizeof(F) == 4 ? (F)truncf((float)x) : (F)trunc((double)x);
    case RPI: return sizeof(F) == 4 ? (F)ceilf((float)x) : (F)ceil((double)x);
    default: return sizeof(F) == 4 ? (F)floorf((float)x) : (F)floor((double)x);
    }
}
template <class I, class F> PTX_INLINE I f2i(F x, int rm, bool z) {
    x = fz(x, z);
    if (x != x) {
        /* NaN: 0 from f32 (to 8..32 bits); from f64, and from f32 to 64 bits, the
           destination's sign bit alone (measured: 0x80, 0x8000, 0x80000000, 2^63). */
        if constexpr (sizeof(I) == 8) return (I)__SIMTWIN_DV_NAN_TO_64;
        else if constexpr (sizeof(F) == 4) return (I)__SIMTWIN_DV_NAN_F32_TO_32;
        else return (I)((U<I>)1 << (8 * sizeof(I) - 1));
    }
    double r = (double)round_int(x, rm);
    if constexpr (std::is_signed<I>::value) {
        const double lo = -ldexp(1.0, 8 * sizeof(I) - 1), hi = ldexp(1.0, 8 * sizeof(I) - 1);
        if (r < lo) return std::numeric_limits<I>::min();
        if (r >= hi) return std::numeric_limits<I>::max();
        if constexpr (sizeof(F) == 4 && sizeof(I) == 8) return (I)round_int(x, rm);
        return (I)r;
    } else {
        const double hi = ldexp(1.0, 8 * sizeof(I));
        if (r <= -1.0 || r < 0) return 0;
        if (r >= hi) return std::numeric_limits<I>::max();
        return (I)r;
    }
}
/* Integer -> float under a rounding mode (exact where representable). */
template <class F, class I> PTX_INLINE F i2f(I v, int rm) {
    if (rm == RN) return (F)v;
    int kind = sizeof(I) == 8 ? (std::is_signed<I>::value ? 2 : 3) : (std::is_signed<I>::value ? 0 : 1);
    uint64_t b = std::is_signed<I>::value ? (uint64_t)(int64_t)v : (uint64_t)v;
    if (sizeof(F) == 4) return (F)__simtwin_i2f(kind, rm, b);
    return (F)__simtwin_i2d(kind, rm, b);
}
/* f64 -> f32: a NaN keeps its sign and the top of its payload, quieted (as x86's
   conversion does; measured). */
PTX_INLINE float d2f(double x, int rm, bool z) {
    if (x != x) return (float)x;
    /* .ftz: tiny before rounding is flushed (measured: 2^-126 - 2^-150 gives 0) */
    if (z && fabs(x) < 0x1p-126) return std::signbit(x) ? -0.0f : 0.0f;
    float r = rm == RN ? (float)x : __simtwin_d2f(rm, x);
    return fz(r, z);
}
/* Integer -> integer with saturation to the destination's range (cvt.sat). */
template <class D, class S> PTX_INLINE D isat(S v) {
    typedef long double W;
    if constexpr (std::is_signed<S>::value) {
        if ((s128)v < (s128)std::numeric_limits<D>::min()) return std::numeric_limits<D>::min();
        if ((s128)v > (s128)std::numeric_limits<D>::max()) return std::numeric_limits<D>::max();
    } else {
        if ((u128)v > (u128)std::numeric_limits<D>::max()) return std::numeric_limits<D>::max();
    }
    (void)sizeof(W);
    return (D)v;
}

/* half and bfloat16 (bit patterns) */
PTX_INLINE float h2f(uint16_t h) {
    uint32_t s = (uint32_t)(h >> 15) << 31, e = (h >> 10) & 0x1f, m = h & 0x3ff;
    if (e == 0x1f) return bc<float>(s | 0x7f800000u | (m << 13));
    if (e == 0) {
        float v = ldexpf((float)m, -24);
        return s ? -v : v;
    }
    return bc<float>(s | ((e + 112) << 23) | (m << 13));
}
/* float -> half under a rounding mode; NaN -> 0x7fff. */
PTX_INLINE uint16_t f2h(float f, int rm) {
    uint32_t u = bc<uint32_t>(f), s = (u >> 16) & 0x8000;
    if ((u & 0x7fffffffu) > 0x7f800000u) return 0x7fff;
    if ((u & 0x7fffffffu) == 0x7f800000u) return (uint16_t)(s | 0x7c00);
    double a = fabs((double)f);
    /* exact scaled value: a * 2^24 counts units of the smallest subnormal */
    int e;
    frexp(a, &e); /* a = m * 2^e, m in [0.5, 1) */
    int ulp_exp = e - 11; /* half has 11 significant bits */
    if (ulp_exp < -24) ulp_exp = -24;
    double q = ldexp(a, -ulp_exp); /* exact: a has 24 bits */
    double r;
    bool neg = s != 0;
    switch (rm) {
    case RZ: r = trunc(q); break;
    case RP: r = neg ? trunc(q) : ceil(q); break;
    case RM: r = neg ? ceil(q) : trunc(q); break;
    default: r = nearbyint(q); break;
    }
    double v = ldexp(r, ulp_exp);
    if (v >= 65536.0 || (v > 65504.0)) {
        /* overflow: RN and away-from-zero modes give inf, the others the largest finite */
        bool to_inf = rm == RN || (rm == RP && !neg) || (rm == RM && neg);
        return (uint16_t)(s | (to_inf ? 0x7c00 : 0x7bff));
    }
    if (v < ldexp(1.0, -14)) return (uint16_t)(s | (uint32_t)ldexp(v, 24));
    int ve;
    double vm = frexp(v, &ve); /* v = vm * 2^ve, vm in [0.5,1) */
    uint32_t hexp = (uint32_t)(ve - 1 + 15);
    uint32_t mant = (uint32_t)ldexp(vm * 2.0 - 1.0, 10);
    return (uint16_t)(s | (hexp << 10) | mant);
}
PTX_INLINE float bf2f(uint16_t h) { return bc<float>((uint32_t)h << 16); }
PTX_INLINE uint16_t f2bf(float f, int rm) {
    uint32_t u = bc<uint32_t>(f);
    if ((u & 0x7fffffffu) > 0x7f800000u) return 0x7fff;
    uint32_t h = u >> 16, rest = u & 0xffff;
    bool neg = (u >> 31) != 0;
    if ((u & 0x7fffffffu) == 0x7f800000u || rest == 0) return (uint16_t)h;
    switch (rm) {
    case RZ: return (uint16_t)h;
    case RP: return (uint16_t)(neg ? h : h + 1);
    case RM: return (uint16_t)(neg ? h + 1 : h);
    default:
        if (rest > 0x8000 || (rest == 0x8000 && (h & 1))) ++h;
        return (uint16_t)h;
    }
}
/* f64 -> f16 rounds once (through an exact path: double has enough room); a NaN keeps its
   sign and the top of its payload, quieted (measured). */
PTX_INLINE uint16_t d2h(double x, int rm) {
    if (x != x) {
        uint64_t u = bc<uint64_t>(x);
        return (uint16_t)(((u >> 48) & 0x8000) | 0x7e00 | ((u >> 42) & 0x3ff));
    }
    float f = __simtwin_d2f(RZ, x);
    /* sticky bit: make the float odd if x was not exact, so the second rounding is right */
    if ((double)f != x && x == x && !isinf(f)) {
        uint32_t u = bc<uint32_t>(f);
        u |= 1;
        f = bc<float>(u);
    }
    return f2h(f, rm);
}
PTX_INLINE uint16_t d2bf(double x, int rm) {
    float f = __simtwin_d2f(RZ, x);
    if ((double)f != x && x == x && !isinf(f)) f = bc<float>(bc<uint32_t>(f) | 1);
    return f2bf(f, rm);
}
/* integer -> half / bfloat16: rounded once (to float toward zero with a sticky bit, so
   that the rounding to 11 or 8 bits is the correctly rounded one). */
template <class I> PTX_INLINE uint16_t i2h(I v, int rm, bool bf) {
    float f = i2f<float>(v, RZ);
    if ((long double)f != (long double)v && !isinf(f)) f = bc<float>(bc<uint32_t>(f) | 1);
    return bf ? f2bf(f, rm) : f2h(f, rm);
}
/* tf32: round to 10 mantissa bits, nearest with ties away (rna); low 13 bits zero. */
PTX_INLINE uint32_t f2tf32(float f) {
    uint32_t u = bc<uint32_t>(f);
    if ((u & 0x7fffffffu) > 0x7f800000u) return u & 0xffffe000u; /* NaN: payload truncated (measured) */
    if ((u & 0x7f800000u) == 0x7f800000u) return u;
    u += 0x1000u;
    return u & 0xffffe000u;
}

/* half arithmetic: through float (exact inputs; one rounding to half is the correctly
   rounded half result for + - * / sqrt, float carrying more than 2*11+2 bits). */
PTX_INLINE uint16_t habs_neg(uint16_t h, bool neg, bool bf) {
    bool nan = bf ? ((h & 0x7f80) == 0x7f80 && (h & 0x7f)) : ((h & 0x7c00) == 0x7c00 && (h & 0x3ff));
    if (nan) return 0x7fff; /* measured: canonical */
    return neg ? (uint16_t)(h ^ 0x8000) : (uint16_t)(h & 0x7fff);
}
PTX_INLINE uint32_t habs_neg2(uint32_t h, bool neg, bool bf) {
    return (uint32_t)habs_neg((uint16_t)h, neg, bf) | ((uint32_t)habs_neg((uint16_t)(h >> 16), neg, bf) << 16);
}
PTX_INLINE uint16_t hcanon(uint16_t h) { return ((h & 0x7c00) == 0x7c00 && (h & 0x3ff)) ? 0x7fff : h; }
PTX_INLINE uint16_t hftz(uint16_t h) { return (h & 0x7c00) == 0 ? (uint16_t)(h & 0x8000) : h; }
PTX_INLINE uint16_t bfcanon(uint16_t h) { return ((h & 0x7f80) == 0x7f80 && (h & 0x7f)) ? 0x7fff : h; }
PTX_INLINE uint16_t bfftz(uint16_t h) { return (h & 0x7f80) == 0 ? (uint16_t)(h & 0x8000) : h; }
PTX_INLINE uint16_t hsat(uint16_t h) {
    float f = h2f(h);
    if (!(f > 0.0f)) return 0;
    if (f >= 1.0f) return 0x3c00;
    return h;
}
PTX_INLINE uint16_t bfsat(uint16_t h) {
    float f = bf2f(h);
    if (!(f > 0.0f)) return 0;
    if (f >= 1.0f) return 0x3f80;
    return h;
}
/* Exact fma of three halves rounded once to half (double holds a*b exactly and the sum
   with room for a sticky bit). */
PTX_INLINE uint16_t hfma_bits(uint16_t a, uint16_t b, uint16_t c, int rm, bool bf) {
    double x = bf ? (double)bf2f(a) : (double)h2f(a);
    double y = bf ? (double)bf2f(b) : (double)h2f(b);
    double z = bf ? (double)bf2f(c) : (double)h2f(c);
    double p = x * y; /* exact: 2 x 11 bits */
    double s = p + z;
    if (s != s || isinf(s)) return bf ? d2bf(s, rm) : d2h(s, rm);
    double bp = s - z, e = (p - bp) + (z - (s - bp)); /* s + e == p + z exactly */
    if (e != 0) {
        /* round to odd: the truncation of s + e toward zero, with its last bit set */
        if ((e > 0) != (s > 0)) s = nextafter(s, 0.0);
        s = bc<double>(bc<uint64_t>(s) | 1);
    }
    return bf ? d2bf(s, rm) : d2h(s, rm);
}
/* op on halves: 0 add 1 sub 2 mul 3 fma (c) */
PTX_INLINE uint16_t harith(int op, int rm, bool z, bool s, uint16_t a, uint16_t b, uint16_t c, bool bf) {
    if (z) {
        a = bf ? bfftz(a) : hftz(a);
        b = bf ? bfftz(b) : hftz(b);
        c = bf ? bfftz(c) : hftz(c);
    }
    uint16_t r;
    if (op == 3) {
        r = hfma_bits(a, b, c, rm, bf);
    } else {
        float x = bf ? bf2f(a) : h2f(a), y = bf ? bf2f(b) : h2f(b);
        double d = op == 0 ? (double)x + y : op == 1 ? (double)x - y : (double)x * y; /* exact in double */
        r = bf ? d2bf(d, rm) : d2h(d, rm);
    }
    if (z) r = bf ? bfftz(r) : hftz(r);
    if (s) r = bf ? bfsat(r) : hsat(r);
    return bf ? bfcanon(r) : hcanon(r);
}
PTX_INLINE uint32_t harith2(int op, int rm, bool z, bool s, uint32_t a, uint32_t b, uint32_t c, bool bf) {
    uint16_t lo = harith(op, rm, z, s, (uint16_t)a, (uint16_t)b, (uint16_t)c, bf);
    uint16_t hi = harith(op, rm, z, s, (uint16_t)(a >> 16), (uint16_t)(b >> 16), (uint16_t)(c >> 16), bf);
    return (uint32_t)lo | ((uint32_t)hi << 16);
}
/* cvt.{rni,rzi,rmi,rpi}.f16.f16 / .bf16.bf16: the integral value in the same format
   (exact through float); a NaN gives the canonical 0x7fff. (ptxas refuses .ftz here.) */
PTX_INLINE uint16_t hround_int(uint16_t a, int ir, bool bf) {
    float x = bf ? bf2f(a) : h2f(a);
    if (x != x) return 0x7fff;
    float r = round_int(x, ir);
    return bf ? f2bf(r, 0) : f2h(r, 0);
}
/* fma.relu on halves: a negative result (its sign bit) becomes +0; the NaN the
   arithmetic already made canonical (0x7fff) stays. */
PTX_INLINE uint16_t hrelu(uint16_t r) { return (r != 0x7fff && (r & 0x8000)) ? (uint16_t)0 : r; }
PTX_INLINE uint32_t hrelu2(uint32_t r) { return (uint32_t)hrelu((uint16_t)r) | ((uint32_t)hrelu((uint16_t)(r >> 16)) << 16); }
/* half min/max (as float: exact), NaN rules as for f32 with the half canonical NaN */
PTX_INLINE uint16_t hminmax(bool mx, uint16_t a, uint16_t b, bool z, bool nan, bool bf) {
    if (z) {
        a = bf ? bfftz(a) : hftz(a);
        b = bf ? bfftz(b) : hftz(b);
    }
    float x = bf ? bf2f(a) : h2f(a), y = bf ? bf2f(b) : h2f(b);
    if (x != x || y != y) {
        if (nan || (x != x && y != y)) return 0x7fff;
        return x != x ? b : a;
    }
    if (x == y) return (std::signbit(x) != mx) ? a : b;
    return ((x < y) != mx) ? a : b;
}
PTX_INLINE uint32_t hminmax2(bool mx, uint32_t a, uint32_t b, bool z, bool nan, bool bf) {
    return (uint32_t)hminmax(mx, (uint16_t)a, (uint16_t)b, z, nan, bf) |
           ((uint32_t)hminmax(mx, (uint16_t)(a >> 16), (uint16_t)(b >> 16), z, nan, bf) << 16);
}

/* ---- memory ---------------------------------------------------------------------- */

/* Host address of a shared-space address. */
PTX_INLINE uint64_t sh(const Thread &t, uint64_t a) { return (uint64_t)(uintptr_t)t.smem + a; }

/* Atomic read-modify-write on global memory (other workers may run other blocks at the
   same time: host atomics, sequentially consistent) or on the block's own shared memory
   (one OS thread runs a whole block: a plain read-modify-write is atomic there). */
enum { A_ADD, A_MIN, A_MAX, A_AND, A_OR, A_XOR, A_EXCH, A_INC, A_DEC, A_CAS };
template <class T> PTX_INLINE T rmw_value(int op, T old, T b, T c) {
    switch (op) {
    case A_ADD:
        /* atom.add.f32 flushes subnormal inputs and results (PTX ISA) and writes the
           canonical NaN; f64 follows the f64 add. */
        if constexpr (sizeof(T) == 4 && std::is_floating_point<T>::value) return canon(ftz(ftz(old) + ftz(b)));
        else if constexpr (std::is_floating_point<T>::value) {
            /* atom.add.f64 keeps a NaN operand as it is (not quieted; measured) */
            if (b != b) return b;
            if (old != old) return old;
            return old + b;
        }
        else return add(old, b);
    case A_MIN:
        if constexpr (std::is_floating_point<T>::value) return fmin_(old, b, false, false);
        else return old < b ? old : b;
    case A_MAX:
        if constexpr (std::is_floating_point<T>::value) return fmax_(old, b, false, false);
        else return old > b ? old : b;
    case A_AND: if constexpr (std::is_integral<T>::value) return (T)(old & b); else return old;
    case A_OR: if constexpr (std::is_integral<T>::value) return (T)(old | b); else return old;
    case A_XOR: if constexpr (std::is_integral<T>::value) return (T)(old ^ b); else return old;
    case A_EXCH: return b;
    case A_INC: if constexpr (std::is_integral<T>::value) return (old >= b) ? (T)0 : (T)(old + 1); else return old;
    case A_DEC: if constexpr (std::is_integral<T>::value) return (old == 0 || old > b) ? b : (T)(old - 1); else return old;
    default: return old == b ? c : old; /* CAS */
    }
}
template <class T> PTX_INLINE T atom(int op, bool shared, uint64_t a, T b, T c) {
    align_of<T>(a);
    T *p = (T *)(uintptr_t)a;
    if (shared) {
        T old = load<T>(a);
        store<T>(a, rmw_value(op, old, b, c));
        return old;
    }
    if constexpr (std::is_integral<T>::value) {
        switch (op) {
        case A_ADD: return (T)__atomic_fetch_add((U<T> *)p, (U<T>)b, __ATOMIC_SEQ_CST);
        case A_AND: return __atomic_fetch_and(p, b, __ATOMIC_SEQ_CST);
        case A_OR: return __atomic_fetch_or(p, b, __ATOMIC_SEQ_CST);
        case A_XOR: return __atomic_fetch_xor(p, b, __ATOMIC_SEQ_CST);
        case A_EXCH: return __atomic_exchange_n(p, b, __ATOMIC_SEQ_CST);
        case A_CAS: {
            T expected = b;
            __atomic_compare_exchange_n(p, &expected, c, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
            return expected;
        }
        default: break;
        }
    }
    typedef bits_t<T> B;
    B *q = (B *)(uintptr_t)a;
    B old = __atomic_load_n(q, __ATOMIC_SEQ_CST);
    for (;;) {
        T nv = rmw_value(op, bc<T>(old), b, c);
        if (__atomic_compare_exchange_n(q, &old, bc<B>(nv), false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) return bc<T>(old);
    }
}
/* Packed half atomics (add.noftz.f16x2 and friends): a CAS loop on the 32/16-bit word. */
template <class B> PTX_INLINE B atom_bits(bool shared, uint64_t a, B (*f)(B, B), B v) {
    align_of<B>(a);
    if (shared) {
        B old = load<B>(a);
        store<B>(a, f(old, v));
        return old;
    }
    B *q = (B *)(uintptr_t)a;
    B old = __atomic_load_n(q, __ATOMIC_SEQ_CST);
    while (!__atomic_compare_exchange_n(q, &old, f(old, v), false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) {
    }
    return old;
}
PTX_INLINE uint16_t hadd_noftz(uint16_t a, uint16_t b) { return harith(0, RN, false, false, a, b, 0, false); }
PTX_INLINE uint32_t hadd2_noftz(uint32_t a, uint32_t b) { return harith2(0, RN, false, false, a, b, 0, false); }
PTX_INLINE uint16_t bfadd_noftz(uint16_t a, uint16_t b) { return harith(0, RN, false, false, a, b, 0, true); }
PTX_INLINE uint32_t bfadd2_noftz(uint32_t a, uint32_t b) { return harith2(0, RN, false, false, a, b, 0, true); }

/* ---- the executor ---------------------------------------------------------------- */

PTX_INLINE uint32_t laneid(const Thread &t) { return t.ctx->linear_tid & 31; }

/* A warp collective through the runtime table. */
PTX_INLINE uint64_t warp(uint32_t op, uint32_t mask, uint64_t value, int32_t arg, int32_t width, int32_t *pred,
                         const simtwin_site_t &site) {
    return ::__simtwin::rt->warp(op, mask, value, arg, width, pred, site);
}
/* shfl.sync: the PTX form's source lane and validity (ISA pseudo-code: c packs the
   segment mask in bits 8-12 and the clamp value in bits 0-4), then the exchange. The
   common encodings of the CUDA intrinsics are a width; anything else goes through the
   index form with the source lane computed here. */
enum { SH_UP = 0, SH_DOWN = 1, SH_BFLY = 2, SH_IDX = 3 };
/* The source lane of `lane`'s shfl.sync (its own lane when not `ok`). */
PTX_INLINE constexpr uint32_t shfl_source(int mode, uint32_t lane, uint32_t b, uint32_t c, bool &ok) {
    const uint32_t bval = b & 31, cval = c & 31, seg = (c >> 8) & 31;
    const uint32_t maxl = (lane & seg) | (cval & ~seg), minl = lane & seg;
    int64_t j = 0;
    switch (mode) {
    case SH_UP: j = (int64_t)lane - bval; ok = j >= (int64_t)maxl; break;
    case SH_DOWN: j = (int64_t)lane + bval; ok = j <= (int64_t)maxl; break;
    case SH_BFLY: j = lane ^ bval; ok = j <= (int64_t)maxl; break;
    default: j = minl | (bval & ~seg); ok = j <= (int64_t)maxl; break;
    }
    return ok ? (uint32_t)j : lane;
}
PTX_INLINE uint32_t shfl(const Thread &t, int mode, uint32_t a, uint32_t b, uint32_t c, uint32_t mask, bool *pred,
                         const simtwin_site_t &site) {
    bool ok;
    const uint32_t j = shfl_source(mode, laneid(t), b, c, ok);
    if (pred) *pred = ok;
    int32_t p;
    /* The exchange: every lane names its source lane (width 32, index form). */
    return (uint32_t)warp(SIMTWIN_WARP_SHFL_IDX, mask, a, (int32_t)j, 32, &p, site);
}


/* %lanemask_* */
PTX_INLINE uint32_t lanemask(const Thread &t, int which) {
    uint32_t l = laneid(t);
    switch (which) {
    case 0: return 1u << l;                              /* eq */
    case 1: return (uint32_t)((2ull << l) - 1);           /* le */
    case 2: return (1u << l) - 1;                        /* lt */
    case 3: return ~((1u << l) - 1);                     /* ge */
    default: return (uint32_t)~((2ull << l) - 1);        /* gt */
    }
}

/* ---- threads of a range ------------------------------------------------------------ */

/* A thread that executes `exit` inside a device function ends here (the runner catches it). */
struct Exit {};

/* Runs threads [first, first + n) of the block one after another, as kernels-host's
   runners do (abi.h "Range runs"): thread indices advance with the linear index; no
   thread t >= range_stop starts (checked after linear_tid names t, `reserved = 1` says
   so: the executor may then preempt a thread spinning in kernel code).
   POLL false: simtwin-ptx proved that no thread of the kernel can wait or spin (`calm`:
   no loop, no recursion, no barrier, collective, fence or clock read), so nothing sets
   range_stop while the range runs and nothing needs preempting; the runner neither
   checks it nor says it would (`reserved` stays 0).
   The kernel's code reads the thread's index from `TI`; CTX_TID false: it calls no
   function (which would read `ctx->thread_idx`), so `x` is not written there per thread. */
/* Where a range's walk over the block's rows stands: the block's row length and height,
   the next thread's (x, y, z). The context's thread_idx.y and .z follow y and z. */
struct RowWalk {
    uint32_t bx, by, x, y, z;
};
PTX_INLINE RowWalk row_walk(simtwin_thread_ctx_t *ctx, uint32_t first) {
    RowWalk w{ctx->block_dim.x ? ctx->block_dim.x : 1u, ctx->block_dim.y ? ctx->block_dim.y : 1u, first, 0, 0};
    /* A range that starts in the block's first row (a whole block: the usual call) needs
       no division. */
    if (__builtin_expect(first >= w.bx, 0)) w.x = first % w.bx, w.y = (first / w.bx) % w.by, w.z = first / (w.bx * w.by);
    ctx->thread_idx.y = w.y;
    ctx->thread_idx.z = w.z;
    return w;
}
PTX_INLINE void next_row(simtwin_thread_ctx_t *ctx, RowWalk &w) {
    w.x = 0;
    if (++w.y == w.by) {
        w.y = 0;
        ctx->thread_idx.z = ++w.z;
    }
    ctx->thread_idx.y = w.y;
}

template <bool POLL = true, bool CTX_TID = true, class F>
PTX_INLINE void for_each_thread(simtwin_thread_ctx_t *ctx, uint32_t first, uint32_t n, F body) {
    RowWalk w = row_walk(ctx, first);
    uint32_t t = first;
    const uint32_t end = first + n;
    if (POLL) ctx->reserved = 1;
    while (t != end) {
        const uint32_t row = t - w.x, left = end - t;
        const uint32_t stop = t + (w.bx - w.x < left ? w.bx - w.x : left);
        for (; t != stop; ++t) {
            ctx->linear_tid = t;
            /* The executor's preemption reads linear_tid from a signal handler on this
               thread to know which thread is running: no code of thread t may move above
               the store naming it, nor below the next one (else a preempted thread's
               range is handed on from the wrong thread and a thread runs twice). */
            if (POLL) __atomic_signal_fence(__ATOMIC_SEQ_CST);
            if (POLL && t > (uint32_t)(ctx->range_stop - 1u)) return; /* 0 (no limit) wraps */
            if (CTX_TID) ctx->thread_idx.x = t - row;
            const simtwin_dim3_t TI = {t - row, w.y, w.z};
            body(TI);
            if (POLL) __atomic_signal_fence(__ATOMIC_SEQ_CST);
        }
        next_row(ctx, w);
    }
}

/* The rows of a range: `row(TI, t, xe)` for each run of threads of one row (y, z),
   TI.x its first thread's x, t its linear index, xe its end's x. */
template <class F>
PTX_INLINE void for_each_row(simtwin_thread_ctx_t *ctx, uint32_t first, uint32_t n, F row) {
    RowWalk w = row_walk(ctx, first);
    uint32_t t = first;
    const uint32_t end = first + n;
    while (t != end) {
        const uint32_t left = end - t, cnt = w.bx - w.x < left ? w.bx - w.x : left;
        row(simtwin_dim3_t{w.x, w.y, w.z}, t, w.x + cnt);
        t += cnt;
        next_row(ctx, w);
    }
}

/* Threads TI.x .. xe of a row (the first is linear index t) as vector lanes: in chunks of
   LANE_CHUNK, the context naming the chunk's first thread in linear_tid and its size in
   `lanes` (a fault inside a chunk is replayed one thread at a time by the executor, which
   then names the thread). The inner loop is the one the compiler vectorises. */
enum { LANE_CHUNK = 64 };
template <class F>
PTX_INLINE void lanes_row(simtwin_thread_ctx_t *ctx, uint32_t t, simtwin_dim3_t TI, uint32_t xe, F body) {
    for (uint32_t x = TI.x; x != xe;) {
        const uint32_t e = xe - x > LANE_CHUNK ? x + LANE_CHUNK : xe;
        ctx->linear_tid = t;
        ctx->lanes = e - x;
        /* A 64-bit counter: the lanes code's addresses are affine in it (see lanes.rs). */
        for (uint64_t i = x; i < e; ++i) body(simtwin_dim3_t{(uint32_t)i, TI.y, TI.z}, i);
        t += e - x;
        x = e;
    }
    ctx->lanes = 0;
}

/* Threads TI.x .. xe of a row one at a time, each named in linear_tid. */
template <class F>
PTX_INLINE void plain_row(simtwin_thread_ctx_t *ctx, uint32_t t, simtwin_dim3_t TI, uint32_t xe, F body) {
    for (uint32_t x = TI.x; x != xe; ++x, ++t) {
        ctx->linear_tid = t;
        body(simtwin_dim3_t{x, TI.y, TI.z});
    }
}

/* ---- Chunks of 16 threads as explicit vectors (simtwin-ptx `simd`) ----
   A barrier-free kernel whose branches depend on its lanes only where they all go the
   same way runs 16 consecutive threads of a row as one call `V<fi>`: what is the same for
   every lane (parameters, block values, loop counters) as scalars, the rest as vectors
   of 16 32-bit lanes (`vu`, predicates `vi` of 0/-1) and 64-bit addresses as a scalar
   base plus 16 signed 32-bit offsets. The chunk's result must equal the threads run one
   after another: a branch its lanes take differently, an address that cannot be a base
   plus an offset, an access whose lanes are not one after another or is misaligned, or
   memory one lane stores and another lane (or another store) touches makes it undo its
   stores (`Undo`) and answer false, and the runner runs the 16 threads one at a time. A
   fault inside a chunk is replayed one thread at a time by the executor (`ctx->lanes`,
   as for `lanes_row`). */
/* -DSIMTWIN_SIMD_STATS (SIMTWIN_CXX): each vector form's bails by line of the generated
   C++ and the loop-path warps' outcomes, printed at exit (a developer's aid). */
#ifdef SIMTWIN_SIMD_STATS
#define PTX_BAILED() ::ptx::simd::bailed_at(__LINE__)
#else
#define PTX_BAILED() ((void)0)
#endif
namespace simd {
enum { L = 16 };
#ifdef SIMTWIN_SIMD_STATS
inline void bailed_at(int line) {
    static struct H { int n[1 << 20]; ~H() { for (int k = 0; k < (1 << 20); ++k) if (n[k] > 100) fprintf(stderr, "bailed at line %d: %d\n", k, n[k]); } } h;
    ++h.n[line & ((1 << 20) - 1)];
}
#endif
typedef uint32_t vu __attribute__((vector_size(64)));
typedef int32_t vi __attribute__((vector_size(64)));
static const vi IOTA = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};
/* An operand as a vector: a vector as it is, a scalar broadcast. */
PTX_INLINE vu V(vu x) { return x; }
PTX_INLINE vu V(vi x) { return (vu)x; }
PTX_INLINE vu V(uint32_t x) { return (vu){} + x; }
PTX_INLINE vu V(int32_t x) { return (vu){} + (uint32_t)x; }
/* 16-bit values: held zero-extended in 32-bit lanes. */
PTX_INLINE vu V(uint16_t x) { return (vu){} + (uint32_t)x; }
PTX_INLINE vu V(int16_t x) { return (vu){} + (uint32_t)(uint16_t)x; }
/* An f32 register's bits. */
PTX_INLINE vu V(float x) { return (vu){} + bc<uint32_t>(x); }
PTX_INLINE vu sext16(vu x) { return (vu)((vi)(x << 16u) >> 16); }
/* A predicate as a mask of 0/-1 lanes. */
PTX_INLINE vi M(vi p) { return p; }
PTX_INLINE vi M(bool p) { return (vi){} + (p ? -1 : 0); }
/* Lane l's bit set where lane l of mask m is set. */
PTX_INLINE uint32_t bits(vi m) {
#if defined(__AVX512F__)
    return _mm512_test_epi32_mask((__m512i)m, (__m512i)m);
#elif defined(__AVX2__)
    typedef int32_t h8 __attribute__((vector_size(32)));
    const h8 a = __builtin_shufflevector(m, m, 0, 1, 2, 3, 4, 5, 6, 7), b = __builtin_shufflevector(m, m, 8, 9, 10, 11, 12, 13, 14, 15);
    const uint32_t lo = _mm256_movemask_ps((__m256)(a != 0)), hi = _mm256_movemask_ps((__m256)(b != 0));
    return lo | hi << 8;
#else
    uint32_t b = 0;
#pragma GCC unroll 16
    for (int l = 0; l < L; ++l) b |= (uint32_t)(m[l] != 0) << l;
    return b;
#endif
}
/* A branch every lane takes (1), none takes (0), or some do (-1: the chunk bails). */
PTX_INLINE int all_or_none(vi m) {
    const uint32_t b = bits(m);
    return b == 0xffffu ? 1 : b == 0 ? 0 : -1;
}
/* PTX shifts: amounts past the width give 0 (shl, shr.u) or the sign (shr.s). */
PTX_INLINE vu shl(vu a, vu n) { return n < 32u ? a << (n & 31u) : (vu){}; }
PTX_INLINE vu shr_u(vu a, vu n) { return n < 32u ? a >> (n & 31u) : (vu){}; }
PTX_INLINE vu shr_s(vu a, vu n) { return (vu)((vi)a >> (vi)(n < 32u ? n : (vu){} + 31u)); }
PTX_INLINE vu abs_s(vu a) { return (vi)a < 0 ? (vu){} - a : a; }
PTX_INLINE vu min_u(vu a, vu b) { return a < b ? a : b; }
PTX_INLINE vu max_u(vu a, vu b) { return a > b ? a : b; }
PTX_INLINE vu min_s(vu a, vu b) { return (vi)a < (vi)b ? a : b; }
PTX_INLINE vu max_s(vu a, vu b) { return (vi)a > (vi)b ? a : b; }
/* A 32-bit value widened into an offset: sign-extended as it is; zero-extended only
   where no lane is 2^31 or above (else false: the chunk bails). */
PTX_INLINE bool zext_off(vu v, vi &o) {
    o = (vi)v;
    return bits(o < 0) == 0;
}
/* 16 64-bit lanes as two halves of 8 (one vector register each where the host has 512-bit
   vectors; a 1024-bit GCC vector would go through memory). */
typedef uint64_t v8 __attribute__((vector_size(64)));
typedef int64_t v8i __attribute__((vector_size(64)));
typedef uint32_t h8u __attribute__((vector_size(32)));
typedef int32_t h8i __attribute__((vector_size(32)));
struct vw {
    v8 a, b; /* lanes 0-7, 8-15 */
};
PTX_INLINE vw X(uint64_t x) { return vw{(v8){} + x, (v8){} + x}; }
PTX_INLINE h8u lo_half(vu v) { return __builtin_shufflevector(v, v, 0, 1, 2, 3, 4, 5, 6, 7); }
PTX_INLINE h8u hi_half(vu v) { return __builtin_shufflevector(v, v, 8, 9, 10, 11, 12, 13, 14, 15); }
/* Widening and narrowing by the host's instructions where it has 512-bit vectors: GCC 12
   (tuned for 256-bit vectors) splits a `__builtin_convertvector` into quarters, and one of
   bytes into single lanes. */
PTX_INLINE vw zext(vu v) {
#if defined(__AVX512F__)
    return vw{(v8)_mm512_cvtepu32_epi64(_mm512_castsi512_si256((__m512i)v)), (v8)_mm512_cvtepu32_epi64(_mm512_extracti64x4_epi64((__m512i)v, 1))};
#else
    return vw{__builtin_convertvector(lo_half(v), v8), __builtin_convertvector(hi_half(v), v8)};
#endif
}
PTX_INLINE vw sext(vu v) {
#if defined(__AVX512F__)
    return vw{(v8)_mm512_cvtepi32_epi64(_mm512_castsi512_si256((__m512i)v)), (v8)_mm512_cvtepi32_epi64(_mm512_extracti64x4_epi64((__m512i)v, 1))};
#else
    return vw{(v8)__builtin_convertvector((h8i)lo_half(v), v8i), (v8)__builtin_convertvector((h8i)hi_half(v), v8i)};
#endif
}
/* A base plus offsets as 64-bit lanes. */
PTX_INLINE vw split(uint64_t base, vi off) {
    vw w = sext((vu)off);
    w.a += base;
    w.b += base;
    return w;
}
/* The low 32 bits of each lane. */
PTX_INLINE vu trunc(vw x) {
#if defined(__AVX512F__)
    return (vu)_mm512_inserti64x4(_mm512_castsi256_si512(_mm512_cvtepi64_epi32((__m512i)x.a)), _mm512_cvtepi64_epi32((__m512i)x.b), 1);
#else
    const h8u l = __builtin_convertvector(x.a, h8u), h = __builtin_convertvector(x.b, h8u);
    return __builtin_shufflevector(l, h, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
#endif
}
/* Two halves' 64-bit masks as one 32-bit mask per lane. */
PTX_INLINE vi narrow(v8i a, v8i b) { return (vi)trunc(vw{(v8)a, (v8)b}); }

/* ---- f32 lanes: 32-bit lanes holding an f32's bits, each operation the scalar one's
   rules (farith, cmp, round_int, f2i above) on 16 lanes at once: IEEE round-to-nearest
   arithmetic is the same on vectors, a NaN result canonical where the thread's statement
   makes it so (`c`). */
typedef float vf __attribute__((vector_size(64)));
PTX_INLINE vi fnan(vu a) { return (vf)a != (vf)a; }
PTX_INLINE vu fcanon(vu a) {
    const vi n = fnan(a);
    return (vu)((n & 0x7fffffff) | (~n & (vi)a));
}
PTX_INLINE vu fadd(vu a, vu b, bool c) { return c ? fcanon((vu)((vf)a + (vf)b)) : (vu)((vf)a + (vf)b); }
PTX_INLINE vu fsub(vu a, vu b, bool c) { return c ? fcanon((vu)((vf)a - (vf)b)) : (vu)((vf)a - (vf)b); }
PTX_INLINE vu fmul(vu a, vu b, bool c) { return c ? fcanon((vu)((vf)a * (vf)b)) : (vu)((vf)a * (vf)b); }
PTX_INLINE vu ffma(vu a, vu b, vu c, bool cn) {
#if defined(__AVX512F__)
    const vu r = (vu)_mm512_fmadd_ps((__m512)a, (__m512)b, (__m512)c);
#else
    vu r;
#pragma GCC unroll 16
    for (int l = 0; l < L; ++l) r[l] = bc<uint32_t>(__builtin_fmaf(bc<float>(a[l]), bc<float>(b[l]), bc<float>(c[l])));
#endif
    return cn ? fcanon(r) : r;
}
/* add/sub rounding toward zero, down or up (`.rz`/`.rm`/`.rp`) as add_directed: the nearest
   sum and its exact error (TwoSum), one step where the error lies on the mode's side.
   A lane whose sum or error is not finite, or (RM) whose sum is an exact zero, takes the
   scalar rule (farith), and with it the whole vector: those are rare. */
template <int OP, int R> PTX_INLINE vu fadd_dir(vu a, vu b, bool c) {
    const vf x = (vf)a, y = OP == OP_SUB ? (vf)(b ^ 0x80000000u) : (vf)b, r = x + y;
    const vf bb = r - x, e = (x - (r - bb)) + (y - bb);
    const vi odd = ~((r - r) == 0) | ~((e - e) == 0) | (R == RM ? (r == 0) : (vi){});
    if (bits(odd) != 0) {
        vu out;
#pragma GCC unroll 16
        for (int l = 0; l < L; ++l) {
            const float p = bc<float>(a[l]), q = bc<float>(b[l]);
            out[l] = bc<uint32_t>(c ? farith<float>(OP, R, false, false, p, q, 0.0f) : farith<float, false>(OP, R, false, false, p, q, 0.0f));
        }
        return out;
    }
    const vi pos = r > 0, neg = r < 0;
    const vi down = R == RM ? ~(vi){} : R == RZ ? pos : (vi){}, up = R == RP ? ~(vi){} : R == RZ ? neg : (vi){};
    const vi step = (down & (e < 0)) | (up & (e > 0));
    /* One step from the finite, non-zero sum: its bits one further from zero where the
       step goes away from it, one nearer where toward it. */
    const vi away = ~(pos ^ up);
    return (vu)r + (vu)(step & ((away & 2) - 1));
}
/* abs/neg: a NaN operand gives the canonical NaN (fabs_, fneg). */
PTX_INLINE vu fabs_v(vu a) {
    const vi n = fnan(a);
    return (vu)((n & 0x7fffffff) | (~n & (vi)(a & 0x7fffffffu)));
}
PTX_INLINE vu fneg_v(vu a) {
    const vi n = fnan(a);
    return (vu)((n & 0x7fffffff) | (~n & (vi)(a ^ 0x80000000u)));
}
/* clz / popc of 32-bit lanes (clz of 0 is 32). */
PTX_INLINE vu clz_v(vu a) {
#if defined(__AVX512CD__)
    return (vu)_mm512_lzcnt_epi32((__m512i)a);
#else
    vu r;
#pragma GCC unroll 16
    for (int l = 0; l < L; ++l) r[l] = clz(a[l]);
    return r;
#endif
}
PTX_INLINE vu popc_v(vu a) {
#if defined(__AVX512VPOPCNTDQ__)
    return (vu)_mm512_popcnt_epi32((__m512i)a);
#else
    vu r;
#pragma GCC unroll 16
    for (int l = 0; l < L; ++l) r[l] = popc(a[l]);
    return r;
#endif
}
/* copysign.f32 d, a, b: b's magnitude with a's sign. */
PTX_INLINE vu fcopysign(vu a, vu b) { return (b & 0x7fffffffu) | (a & 0x80000000u); }
/* Comparisons as cmp, on vectors of floats of either width (masks of their lanes' width):
   ordered forms false, unordered true, where either is NaN. */
template <int OP, class V> PTX_INLINE auto fcmp_lanes(V x, V y) {
    const auto un = (x != x) | (y != y);
    switch (OP) {
    case EQ: return ~un & (x == y);
    case NE: return ~un & (x != y);
    case LT: return ~un & (x < y);
    case LE: return ~un & (x <= y);
    case GT: return ~un & (x > y);
    case GE: return ~un & (x >= y);
    case EQU: return un | (x == y);
    case NEU: return un | (x != y);
    case LTU: return un | (x < y);
    case LEU: return un | (x <= y);
    case GTU: return un | (x > y);
    case GEU: return un | (x >= y);
    case NUM: return ~un;
    default: return un;
    }
}
template <int OP> PTX_INLINE vi fcmp(vu a, vu b) { return fcmp_lanes<OP>((vf)a, (vf)b); }
/* Integer -> f32, round to nearest (i2f with RN: the host's conversion). */
PTX_INLINE vu fcvt_u(vu a) { return (vu)__builtin_convertvector(a, vf); }
PTX_INLINE vu fcvt_s(vu a) { return (vu)__builtin_convertvector((vi)a, vf); }
/* ---- f64 lanes: 64-bit lanes holding an f64's bits. Where no lane holds a NaN (whose
   payload the scalar rules pick by operand) or, for conversions, a value past the
   destination's range, the host's vector operation is the thread's (IEEE to nearest, an
   invalid result the canonical NaN); otherwise every lane takes the scalar rule. */
typedef double v8d __attribute__((vector_size(64)));
PTX_INLINE bool dnan(const vw &x) { return bits(narrow((v8i)((v8d)x.a != (v8d)x.a), (v8i)((v8d)x.b != (v8d)x.b))) != 0; }
PTX_INLINE v8 dcanon(v8d r) {
    const v8i n = r != r;
    return (v8)((n & (int64_t)0xfff8000000000000ll) | (~n & (v8i)r));
}
template <int OP> PTX_INLINE v8d dop(v8d x, v8d y) {
    return OP == OP_ADD ? x + y : OP == OP_SUB ? x - y : OP == OP_MUL ? x * y : x / y;
}
template <int OP> PTX_INLINE vw darith(vw a, vw b) {
    if (dnan(a) || dnan(b)) {
        vw r;
#pragma GCC unroll 8
        for (int l = 0; l < 8; ++l) {
            r.a[l] = bc<uint64_t>(farith<double>(OP, RN, false, false, bc<double>(a.a[l]), bc<double>(b.a[l]), 0.0));
            r.b[l] = bc<uint64_t>(farith<double>(OP, RN, false, false, bc<double>(a.b[l]), bc<double>(b.b[l]), 0.0));
        }
        return r;
    }
    return vw{dcanon(dop<OP>((v8d)a.a, (v8d)b.a)), dcanon(dop<OP>((v8d)a.b, (v8d)b.b))};
}
PTX_INLINE v8d dfma8(v8d x, v8d y, v8d z) {
#if defined(__AVX512F__)
    return (v8d)_mm512_fmadd_pd((__m512d)x, (__m512d)y, (__m512d)z);
#else
    v8d r;
#pragma GCC unroll 8
    for (int l = 0; l < 8; ++l) r[l] = __builtin_fma(x[l], y[l], z[l]);
    return r;
#endif
}
PTX_INLINE vw dfma(vw a, vw b, vw c) {
    if (dnan(a) || dnan(b) || dnan(c)) {
        vw r;
#pragma GCC unroll 8
        for (int l = 0; l < 8; ++l) {
            r.a[l] = bc<uint64_t>(farith<double>(OP_FMA, RN, false, false, bc<double>(a.a[l]), bc<double>(b.a[l]), bc<double>(c.a[l])));
            r.b[l] = bc<uint64_t>(farith<double>(OP_FMA, RN, false, false, bc<double>(a.b[l]), bc<double>(b.b[l]), bc<double>(c.b[l])));
        }
        return r;
    }
    return vw{dcanon(dfma8((v8d)a.a, (v8d)b.a, (v8d)c.a)), dcanon(dfma8((v8d)a.b, (v8d)b.b, (v8d)c.b))};
}
/* min/max as fmin_/fmax_ (without .NaN): -0 below +0. */
template <bool MAX> PTX_INLINE vw dminmax(vw a, vw b) {
    if (dnan(a) || dnan(b)) {
        vw r;
#pragma GCC unroll 8
        for (int l = 0; l < 8; ++l) {
            const double x = bc<double>(a.a[l]), y = bc<double>(b.a[l]), u = bc<double>(a.b[l]), v = bc<double>(b.b[l]);
            r.a[l] = bc<uint64_t>(MAX ? fmax_(x, y, false, false) : fmin_(x, y, false, false));
            r.b[l] = bc<uint64_t>(MAX ? fmax_(u, v, false, false) : fmin_(u, v, false, false));
        }
        return r;
    }
    auto half = [](v8 p, v8 q) {
        const v8d x = (v8d)p, y = (v8d)q;
        /* Equal values (zeros of either sign): min takes the one with the sign bit, max the other. */
        const v8i eq = x == y, neg = (v8i)p < 0;
        const v8i pick_a = MAX ? ((eq & ~neg) | (~eq & (x > y))) : ((eq & neg) | (~eq & (x < y)));
        return (v8)((pick_a & (v8i)p) | (~pick_a & (v8i)q));
    };
    return vw{half(a.a, b.a), half(a.b, b.b)};
}
/* abs/neg: a NaN operand gives itself, quieted (fabs_, fneg). */
PTX_INLINE vw dabs(vw a) {
    const v8i qa = (v8d)a.a != (v8d)a.a, qb = (v8d)a.b != (v8d)a.b;
    const uint64_t s = 0x8000000000000000ull, q = 0x0008000000000000ull;
    return vw{(v8)((qa & (v8i)(a.a | q)) | (~qa & (v8i)(a.a & ~s))), (v8)((qb & (v8i)(a.b | q)) | (~qb & (v8i)(a.b & ~s)))};
}
PTX_INLINE vw dneg(vw a) {
    const v8i qa = (v8d)a.a != (v8d)a.a, qb = (v8d)a.b != (v8d)a.b;
    const uint64_t s = 0x8000000000000000ull, q = 0x0008000000000000ull;
    return vw{(v8)((qa & (v8i)(a.a | q)) | (~qa & (v8i)(a.a ^ s))), (v8)((qb & (v8i)(a.b | q)) | (~qb & (v8i)(a.b ^ s)))};
}
/* Comparisons as cmp, one 32-bit mask per lane. */
template <int OP> PTX_INLINE vi dcmp(vw a, vw b) { return narrow(fcmp_lanes<OP>((v8d)a.a, (v8d)b.a), fcmp_lanes<OP>((v8d)a.b, (v8d)b.b)); }
/* 32-bit integers to f64: exact. */
PTX_INLINE vw dcvt_s(vu a) { return vw{(v8)__builtin_convertvector((h8i)lo_half(a), v8d), (v8)__builtin_convertvector((h8i)hi_half(a), v8d)}; }
PTX_INLINE vw dcvt_u(vu a) { return vw{(v8)__builtin_convertvector(lo_half(a), v8d), (v8)__builtin_convertvector(hi_half(a), v8d)}; }
/* f64 to an integer of I by integer rounding IR as f2i: rounded, saturated, NaN the
   device's value. Lanes all inside I's range take the host's conversion of the rounded
   values, else every lane f2i. */
template <int IR> PTX_INLINE v8d dround8(v8d x) {
#if defined(__AVX512F__)
    constexpr int m = IR == RNI ? _MM_FROUND_TO_NEAREST_INT : IR == RZI ? _MM_FROUND_TO_ZERO : IR == RPI ? _MM_FROUND_TO_POS_INF : _MM_FROUND_TO_NEG_INF;
    return (v8d)_mm512_roundscale_pd((__m512d)x, m | _MM_FROUND_NO_EXC);
#else
    v8d r;
#pragma GCC unroll 8
    for (int l = 0; l < 8; ++l) r[l] = round_int(x[l], IR);
    return r;
#endif
}
template <class I> PTX_INLINE bool d_inside(v8d r) {
    const double lo = std::is_signed<I>::value ? -ldexp(1.0, 8 * sizeof(I) - 1) : 0.0;
    const double hi = std::is_signed<I>::value ? ldexp(1.0, 8 * sizeof(I) - 1) : ldexp(1.0, 8 * sizeof(I));
    /* NaN fails both comparisons. */
    const v8i ok = (r >= lo) & (r < hi);
    return bits(narrow(ok, ok)) == 0xffffu;
}
template <class I, int IR> PTX_INLINE vu d2i(vw a) {
    const v8d x = dround8<IR>((v8d)a.a), y = dround8<IR>((v8d)a.b);
    vu out;
    if (d_inside<I>(x) && d_inside<I>(y)) {
        typedef typename std::conditional<std::is_signed<I>::value, h8i, h8u>::type H;
        const H p = __builtin_convertvector(x, H), q = __builtin_convertvector(y, H);
        return (vu)__builtin_shufflevector(p, q, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
    }
#pragma GCC unroll 8
    for (int l = 0; l < 8; ++l) {
        out[l] = (uint32_t)f2i<I>(bc<double>(a.a[l]), IR, false);
        out[l + 8] = (uint32_t)f2i<I>(bc<double>(a.b[l]), IR, false);
    }
    return out;
}
template <class I, int IR> PTX_INLINE vw d2l(vw a) {
    const v8d x = dround8<IR>((v8d)a.a), y = dround8<IR>((v8d)a.b);
    if (d_inside<I>(x) && d_inside<I>(y)) {
        typedef typename std::conditional<std::is_signed<I>::value, v8i, v8>::type H;
        return vw{(v8)__builtin_convertvector(x, H), (v8)__builtin_convertvector(y, H)};
    }
    vw out;
#pragma GCC unroll 8
    for (int l = 0; l < 8; ++l) {
        out.a[l] = (uint64_t)f2i<I>(bc<double>(a.a[l]), IR, false);
        out.b[l] = (uint64_t)f2i<I>(bc<double>(a.b[l]), IR, false);
    }
    return out;
}
/* To an integral f32 as `round_int` (RNI, RZI, RPI, RMI), NaN kept. */
template <int IR> PTX_INLINE vu fround_raw(vu a) {
#if defined(__AVX512F__)
    constexpr int m = IR == RNI ? _MM_FROUND_TO_NEAREST_INT : IR == RZI ? _MM_FROUND_TO_ZERO : IR == RPI ? _MM_FROUND_TO_POS_INF : _MM_FROUND_TO_NEG_INF;
    return (vu)_mm512_roundscale_ps((__m512)a, m | _MM_FROUND_NO_EXC);
#else
    vu r;
#pragma GCC unroll 16
    for (int l = 0; l < L; ++l) r[l] = bc<uint32_t>(round_int(bc<float>(a[l]), IR));
    return r;
#endif
}
/* cvt.r?i.f32.f32: canon(round_int(x)). */
template <int IR> PTX_INLINE vu fround(vu a) { return fcanon(fround_raw<IR>(a)); }
/* cvt.r?i.u32.f32 / .s32.f32 as f2i: rounded, saturated to the range, NaN the device's
   value; only integral values in range reach the host's conversion. */
template <int IR> PTX_INLINE vu f2u(vu a) {
    const vf r = (vf)fround_raw<IR>(a);
    const vi nan = r != r, low = r < 0.0f, high = r >= 4294967296.0f;
    const vf in = (vf)((vi)r & ~(nan | low | high));
    const vu u = __builtin_convertvector(in, vu);
    return (vu)((nan & (int32_t)__SIMTWIN_DV_NAN_F32_TO_32) | (high & -1) | (~(nan | high) & (vi)u));
}
template <int IR> PTX_INLINE vu f2s(vu a) {
    const vf r = (vf)fround_raw<IR>(a);
    const vi nan = r != r, low = r < -2147483648.0f, high = r >= 2147483648.0f;
    const vf in = (vf)((vi)r & ~(nan | low | high));
    const vi s = __builtin_convertvector(in, vi);
    return (vu)((nan & (int32_t)__SIMTWIN_DV_NAN_F32_TO_32) | (low & INT32_MIN) | (high & INT32_MAX) | (~(nan | low | high) & s));
}
/* 16 elements of T (at most 4 bytes) one after another at p, each extended to 32 bits as
   T is (a float's bits as they are). */
template <class T> PTX_INLINE vu widen16(const void *p) {
    static_assert(sizeof(T) <= 4, "elements of at most 32 bits");
    constexpr bool sg = std::is_signed<T>::value;
    if constexpr (sizeof(T) == 4) {
        vu x;
        memcpy(&x, p, sizeof x);
        return x;
    }
#if defined(__AVX512F__)
    else if constexpr (sizeof(T) == 1) {
        const __m128i x = _mm_loadu_si128((const __m128i *)p);
        return (vu)(sg ? _mm512_cvtepi8_epi32(x) : _mm512_cvtepu8_epi32(x));
    } else {
        const __m256i x = _mm256_loadu_si256((const __m256i *)p);
        return (vu)(sg ? _mm512_cvtepi16_epi32(x) : _mm512_cvtepu16_epi32(x));
    }
#else
    else {
        typedef typename std::conditional<sg, int32_t, uint32_t>::type W;
        T b[L];
        memcpy(b, p, sizeof b);
        vu x;
#pragma GCC unroll 16
        for (int l = 0; l < L; ++l) x[l] = (uint32_t)(W)b[l];
        return x;
    }
#endif
}
/* The low bits of 16 lanes as 16 elements of T (at most 4 bytes) one after another at p. */
template <class T> PTX_INLINE void narrow16(void *p, vu v) {
    static_assert(sizeof(T) <= 4, "elements of at most 32 bits");
    if constexpr (sizeof(T) == 4) memcpy(p, &v, sizeof v);
#if defined(__AVX512F__)
    else if constexpr (sizeof(T) == 1) _mm_storeu_si128((__m128i *)p, _mm512_cvtepi32_epi8((__m512i)v));
    else _mm256_storeu_si256((__m256i *)p, _mm512_cvtepi32_epi16((__m512i)v));
#else
    else {
        T b[L];
#pragma GCC unroll 16
        for (int l = 0; l < L; ++l) b[l] = (T)v[l];
        memcpy(p, b, sizeof b);
    }
#endif
}
PTX_INLINE vw operator+(vw x, vw y) { return vw{x.a + y.a, x.b + y.b}; }
PTX_INLINE vw operator-(vw x, vw y) { return vw{x.a - y.a, x.b - y.b}; }
PTX_INLINE vw operator*(vw x, vw y) { return vw{x.a * y.a, x.b * y.b}; }
PTX_INLINE vw operator&(vw x, vw y) { return vw{x.a & y.a, x.b & y.b}; }
PTX_INLINE vw operator|(vw x, vw y) { return vw{x.a | y.a, x.b | y.b}; }
PTX_INLINE vw operator^(vw x, vw y) { return vw{x.a ^ y.a, x.b ^ y.b}; }
PTX_INLINE vw operator~(vw x) { return vw{~x.a, ~x.b}; }
/* PTX 64-bit shifts by an amount the same for every lane (past 63: 0, or the sign). */
/* Each 64-bit lane's low 32 bits, sign- or zero-extended (cvt.s64.s32 / cvt.u64.u32 of a
   64-bit register). */
PTX_INLINE vw wlow_s(vw x) { return vw{(v8)((v8i)(x.a << 32) >> 32), (v8)((v8i)(x.b << 32) >> 32)}; }
PTX_INLINE vw wlow_u(vw x) { return vw{x.a & 0xffffffffull, x.b & 0xffffffffull}; }
PTX_INLINE vw wshl(vw x, uint32_t n) { return n < 64 ? vw{x.a << n, x.b << n} : vw{}; }
PTX_INLINE vw wshr_u(vw x, uint32_t n) { return n < 64 ? vw{x.a >> n, x.b >> n} : vw{}; }
PTX_INLINE vw wshr_s(vw x, uint32_t n) {
    const int64_t k = n < 64 ? (int64_t)n : 63;
    return vw{(v8)((v8i)x.a >> k), (v8)((v8i)x.b >> k)};
}
/* The same by amounts that differ between lanes (32-bit lanes; past 63: 0, or the sign). */
PTX_INLINE vw wshl(vw x, vu n) {
    const vw k = zext(n);
    return vw{k.a < 64 ? x.a << (k.a & 63) : (v8){}, k.b < 64 ? x.b << (k.b & 63) : (v8){}};
}
PTX_INLINE vw wshr_u(vw x, vu n) {
    const vw k = zext(n);
    return vw{k.a < 64 ? x.a >> (k.a & 63) : (v8){}, k.b < 64 ? x.b >> (k.b & 63) : (v8){}};
}
PTX_INLINE vw wshr_s(vw x, vu n) {
    const vw k = zext(n);
    const v8i ka = k.a < 64 ? (v8i)k.a : (v8i){} + 63, kb = k.b < 64 ? (v8i)k.b : (v8i){} + 63;
    return vw{(v8)((v8i)x.a >> ka), (v8)((v8i)x.b >> kb)};
}
/* clz / popc of 64-bit lanes, as 32-bit lanes. */
PTX_INLINE vu wclz(vw x) {
#if defined(__AVX512CD__)
    return trunc(vw{(v8)_mm512_lzcnt_epi64((__m512i)x.a), (v8)_mm512_lzcnt_epi64((__m512i)x.b)});
#else
    vu r;
#pragma GCC unroll 8
    for (int l = 0; l < 8; ++l) r[l] = clz(x.a[l]), r[l + 8] = clz(x.b[l]);
    return r;
#endif
}
PTX_INLINE vu wpopc(vw x) {
    vu r;
#pragma GCC unroll 8
    for (int l = 0; l < 8; ++l) r[l] = popc(x.a[l]), r[l + 8] = popc(x.b[l]);
    return r;
}
/* mul.wide of lanes by a factor the same for every lane into an offset, where every
   lane's product fits 32 signed bits (else false: the chunk bails). */
PTX_INLINE bool wide_s(vu v, int32_t c, vi &o) {
    const vw p = sext(v) * X((uint64_t)(int64_t)c);
    o = (vi)trunc(p);
    const vw back = sext((vu)o);
    return bits(narrow((v8i)(back.a != p.a), (v8i)(back.b != p.b))) == 0;
}
PTX_INLINE bool wide_u(vu v, uint32_t c, vi &o) {
    const vw p = zext(v) * X((uint64_t)c);
    o = (vi)trunc(p);
    return bits(narrow((v8i)(p.a > (uint64_t)INT32_MAX), (v8i)(p.b > (uint64_t)INT32_MAX))) == 0;
}
PTX_INLINE vw wsel(vi m, vw x, vw y) {
    const vw w = sext((vu)m);
    return vw{(v8i)w.a != 0 ? x.a : y.a, (v8i)w.b != 0 ? x.b : y.b};
}

/* The lanes' addresses base + off: `step` bytes apart, one after another? */
PTX_INLINE bool consecutive(vi off, int32_t step) { return bits(off == off[0] + IOTA * step) == 0xffffu; }

/* The stores of one chunk, with the bytes they replaced, for `undo` and `commit`. The
   counts are volatile: after a fault inside a guarded stretch (`guarded`) they must say
   what was saved and which stores completed (`done`), whatever the compiler kept in
   registers. */
template <int NE, int NB> struct Undo {
    uint64_t at[NE > 0 ? NE : 1];
    uint32_t len[NE > 0 ? NE : 1], from[NE > 0 ? NE : 1], site[NE > 0 ? NE : 1];
    uint8_t old[NB > 0 ? NB : 1];
    volatile int n = 0, done = 0;
    volatile uint32_t used = 0;
    __attribute__((always_inline)) void save(uint32_t s, uint64_t a, uint32_t bytes) {
        const int k = n;
        const uint32_t u = used;
        at[k] = a, len[k] = bytes, from[k] = u, site[k] = s;
        memcpy(old + u, (const void *)(uintptr_t)a, bytes);
        used = u + bytes;
        n = k + 1;
    }
    __attribute__((always_inline)) void undo() {
        for (int k = n - 1; k >= 0; --k) memcpy((void *)(uintptr_t)at[k], old + from[k], len[k]);
        n = 0, done = 0, used = 0;
    }
    /* After a fault: the stores that completed are undone (the one that faulted wrote
       nothing, or the fault was in reading what it replaces). */
    void recover() {
        n = done;
        undo();
    }
    /* True where no store's bytes meet a load's range ([lo, hi) per load site) or another
       store site's: then the lanes ran as the threads one after another would have. */
    /* First each store site's bytes as one range (a site logs 16 entries at most in each
       pass over its lanes: NE / 16 sites at most): where no site's range meets another's
       or a load's, no entry can; only otherwise the entries pair by pair. Branch-free, so
       that the host compiler vectorises the pairs (a form of 20 store sites logs 40
       entries or more per warp: upstream adm's horizontal dwt pass). */
    __attribute__((always_inline)) bool commit(const uint64_t *lo, const uint64_t *hi, int nl) {
        const int m = n;
        constexpr int NS = NE / 16 > 0 ? NE / 16 : 1;
        uint64_t slo[NS], shi[NS];
        uint32_t ns = 0;
        for (int s = 0; s < NS; ++s) slo[s] = ~0ull, shi[s] = 0;
        bool meet = false;
        for (int k = 0; k < m; ++k) {
            const bool past = site[k] >= (uint32_t)NS;
            const uint32_t s = past ? 0 : site[k];
            const uint64_t a = at[k], e = at[k] + len[k];
            meet |= past;
            slo[s] = a < slo[s] ? a : slo[s];
            shi[s] = e > shi[s] ? e : shi[s];
            ns = s + 1 > ns ? s + 1 : ns;
        }
        for (uint32_t s = 0; s < ns; ++s) {
            for (int j = 0; j < nl; ++j) meet |= (lo[j] < shi[s]) & (slo[s] < hi[j]);
            for (uint32_t t = s + 1; t < ns; ++t) meet |= (slo[t] < shi[s]) & (slo[s] < shi[t]);
        }
        if (!meet) return true;
        bool bad = false;
        for (int k = 0; k < m; ++k) {
            const uint64_t a = at[k], e = at[k] + len[k];
            const uint32_t s = site[k];
            for (int j = 0; j < nl; ++j) bad |= (lo[j] < e) & (a < hi[j]);
            for (int j = k + 1; j < m; ++j) bad |= (site[j] != s) & (at[j] < e) & (a < at[j] + len[j]);
        }
        if (bad) undo();
        return !bad;
    }
};

/* A load of N elements of T per lane (`ld.v<N>`; element k of lane l into out[k][l],
   sign- or zero-extended to 32 bits as T is) at base + off, the lanes' vectors aligned to
   the whole vector and one after another (S = 1) or every other one (S = 2: a thread of
   two pixels): one load of the span; the span joins [lo, hi). False otherwise (scattered
   lanes: inserting them one by one costs more than the threads' own code; a misaligned
   address: the threads' code applies the device's rule). With S = 2 the span's gaps are
   read too, never past its last lane's vector. */
template <class T, int N, int S, bool Track> PTX_INLINE bool ld_span(uint64_t a, vu (&out)[N], uint64_t &lo, uint64_t &hi) {
    typedef typename std::conditional<std::is_signed<T>::value, int32_t, uint32_t>::type W;
    const uint32_t span = ((L - 1) * S + 1) * N * sizeof(T);
    if constexpr (N == 1) {
        /* One element per lane: whole vectors, every other element picked out of two. */
        out[0] = widen16<T>((const void *)(uintptr_t)a);
        if constexpr (S == 2) {
            /* Elements 15..30, the span's last 16: a whole load (a partial one into a
               vector waits for its bytes to reach memory). */
            const vu y = widen16<T>((const void *)(uintptr_t)(a + span - L * sizeof(T)));
            out[0] = __builtin_shufflevector(out[0], y, 0, 2, 4, 6, 8, 10, 12, 14, 17, 19, 21, 23, 25, 27, 29, 31);
        }
    } else if constexpr (N * sizeof(T) == 4) {
        /* A lane's elements are one 32-bit word (`ld.v2.u16`, `ld.v4.u8`): the words as
           one element each, then the elements shifted out of them, extended. */
        vu w = widen16<uint32_t>((const void *)(uintptr_t)a);
        if constexpr (S == 2) {
            const vu y = widen16<uint32_t>((const void *)(uintptr_t)(a + span - L * 4));
            w = __builtin_shufflevector(w, y, 0, 2, 4, 6, 8, 10, 12, 14, 17, 19, 21, 23, 25, 27, 29, 31);
        }
        constexpr int bits = 8 * sizeof(T);
#pragma GCC unroll 4
        for (int k = 0; k < N; ++k) {
            const vu f = w << (uint32_t)(32 - bits * (k + 1));
            out[k] = std::is_signed<T>::value ? (vu)((vi)f >> (32 - bits)) : f >> (uint32_t)(32 - bits);
        }
    } else {
        T buf[L * S * N];
        memcpy(buf, (const void *)(uintptr_t)a, span);
#pragma GCC unroll 16
        for (int l = 0; l < L; ++l)
            for (int k = 0; k < N; ++k) out[k][l] = (uint32_t)(W)buf[l * S * N + k];
    }
    if constexpr (Track) {
        lo = a < lo ? a : lo;
        hi = a + span > hi ? a + span : hi;
    }
    return true;
}
/* One element of T (at most 4 bytes) per lane at scattered addresses base + off (a
   mirrored index at an image's edge): the hardware's gather of the aligned 32-bit words
   that hold them (no byte outside a word a lane reads, so no page another lane does not
   touch), each lane's element shifted out. False without a gather instruction, or where
   a lane's address is misaligned (the threads' code applies the device's rule). */
template <class T, bool Track> PTX_INLINE bool ld_gather(uint64_t base, vi off, vu &out, uint64_t &lo, uint64_t &hi) {
#if defined(__AVX512F__)
    typedef typename std::conditional<std::is_signed<T>::value, int32_t, uint32_t>::type W;
    typedef W w16 __attribute__((vector_size(64)));
    const int32_t low = (int32_t)(base & 3);
    if (bits(off > INT32_MAX - 4) != 0) return false;
    const vi d = off + low;
    if (bits(d & (int32_t)(sizeof(T) - 1)) != 0) return false;
    const vu words = (vu)_mm512_i32gather_epi32((__m512i)(d & ~3), (const void *)(uintptr_t)(base & ~3ull), 1);
    const vu x = words >> (vu)((d & 3) * 8);
    /* The element in the low bits, extended as T is. */
    const uint32_t width = sizeof(T) * 8;
    if constexpr (sizeof(T) == 4) out = x;
    else out = (vu)(std::is_signed<T>::value ? ((w16)(x << (32 - width)) >> (32 - width)) : (w16)(x & ((1u << width) - 1)));
    if constexpr (Track) {
        const int32_t mn = _mm512_reduce_min_epi32((__m512i)off), mx = _mm512_reduce_max_epi32((__m512i)off);
        const uint64_t a = base + (uint64_t)(int64_t)mn, e = base + (uint64_t)(int64_t)mx + sizeof(T);
        lo = a < lo ? a : lo;
        hi = e > hi ? e : hi;
    }
    return true;
#else
    (void)base, (void)off, (void)out, (void)lo, (void)hi;
    return false;
#endif
}
/* Track: the chunk stores, so its loads' ranges are kept for the commit's check. */
template <class T, int N, bool Track = true> PTX_INLINE bool ld(uint64_t base, vi off, vu (&out)[N], uint64_t &lo, uint64_t &hi) {
    const uint32_t bytes = N * sizeof(T);
    const uint64_t a = base + (uint64_t)(int64_t)off[0];
    if ((a & (bytes - 1)) != 0) return false;
    if (consecutive(off, (int32_t)bytes)) return ld_span<T, N, 1, Track>(a, out, lo, hi);
    if (consecutive(off, 2 * (int32_t)bytes)) return ld_span<T, N, 2, Track>(a, out, lo, hi);
    if constexpr (N == 1) return ld_gather<T, Track>(base, off, out[0], lo, hi);
    return false;
}
/* shl of a base plus offsets by c (1..31), where every lane's offset stays within 32
   signed bits (else false: the chunk bails). */
PTX_INLINE bool shl_off(vi off, uint32_t c, vi &out) {
    out = (vi)((vu)off << c);
    return bits((out >> (int32_t)c) != off) == 0;
}
/* A base plus offsets times a factor the same for every lane plus another's offsets
   (`mad.lo.u64 d, u, a, b`, and `add.u64 d, a, b` with u = 1): u * a's offsets + b's,
   where every lane's sum stays within 32 signed bits (else false: the chunk bails). */
PTX_INLINE bool mad_off(uint64_t u, vi a, vi b, vi &out) {
    const vw p = sext((vu)a) * X(u) + sext((vu)b);
    out = (vi)trunc(p);
    const vw back = sext((vu)out);
    return bits(narrow((v8i)(back.a != p.a), (v8i)(back.b != p.b))) == 0;
}
/* The lanes' 32-bit shared-space addresses as the block window's host address plus
   signed offsets (false where a lane's address is at 2^31 or past: the threads' code
   takes it, as `sh` does). */
PTX_INLINE bool sh_lanes(const Thread &t, vu a, uint64_t &base, vi &off) {
    off = (vi)a;
    base = (uint64_t)(uintptr_t)t.smem;
    return bits(off < 0) == 0;
}
/* A register of a half's 16 lanes read from their frames `fr[0..16)` (member `m`), at a
   barrier's resume point: as 32-bit lanes (zero-extended), as masks, as the one value
   every lane holds (false where they differ), as a base plus 32-bit offsets (false where
   one does not fit) or as 64-bit lanes. */
template <class FR, class R> PTX_INLINE vu frame_lanes(const FR *fr, R FR::*m) {
    vu v;
#pragma GCC unroll 16
    for (int l = 0; l < L; ++l) v[l] = (uint32_t)(fr[l].*m);
    return v;
}
template <class FR> PTX_INLINE vi frame_mask(const FR *fr, bool FR::*m) {
    vi v;
#pragma GCC unroll 16
    for (int l = 0; l < L; ++l) v[l] = (fr[l].*m) ? -1 : 0;
    return v;
}
template <class FR, class R> PTX_INLINE bool frame_uniform(const FR *fr, R FR::*m, R &out) {
    out = fr[0].*m;
    bool same = true;
#pragma GCC unroll 16
    for (int l = 1; l < L; ++l) same &= (fr[l].*m) == out;
    return same;
}
template <class FR, class R> PTX_INLINE bool frame_split(const FR *fr, R FR::*m, uint64_t &base, vi &off) {
    base = (uint64_t)(fr[0].*m);
    bool fits = true;
#pragma GCC unroll 16
    for (int l = 0; l < L; ++l) {
        const int64_t d = (int64_t)((uint64_t)(fr[l].*m) - base);
        fits &= d == (int64_t)(int32_t)d;
        off[l] = (int32_t)d;
    }
    return fits;
}
template <class FR, class R> PTX_INLINE vw frame_wide(const FR *fr, R FR::*m) {
    vw v;
#pragma GCC unroll 8
    for (int l = 0; l < 8; ++l) v.a[l] = (uint64_t)(fr[l].*m), v.b[l] = (uint64_t)(fr[l + 8].*m);
    return v;
}
/* A load every lane makes at the same address: its range joins [lo, hi). */
PTX_INLINE void seen(uint64_t a, uint32_t bytes, uint64_t &lo, uint64_t &hi) {
    lo = a < lo ? a : lo;
    hi = a + bytes > hi ? a + bytes : hi;
}
/* A store of N elements of T per lane (`st.v<N>`; element k of lane l is v[k][l]) at
   base + off, the lanes' vectors one after another and aligned to the whole vector: one
   store, logged in `u` as site s. One 32-bit element per lane at scattered aligned
   addresses (a thread's record of several words): the hardware's scatter, each lane's
   word logged (lanes at one address: the last lane's value stays, as one thread after
   another leave it). False otherwise (nothing of this store written). */
template <class T, int N, class UN> PTX_INLINE bool st(UN &u, uint32_t s, uint64_t base, vi off, const vu (&v)[N]) {
    const uint32_t bytes = N * sizeof(T);
    const uint64_t a = base + (uint64_t)(int64_t)off[0];
#if defined(__AVX512F__)
    if constexpr (N == 1 && sizeof(T) == 4) {
        if (!consecutive(off, (int32_t)bytes)) {
            if (bits((off + (int32_t)(base & 3)) & 3) != 0) return false;
#pragma GCC unroll 16
            for (int l = 0; l < L; ++l) u.save(s, base + (uint64_t)(int64_t)off[l], 4);
            _mm512_i32scatter_epi32((void *)(uintptr_t)base, (__m512i)off, (__m512i)v[0], 1);
            u.done = u.n;
            return true;
        }
    }
#endif
    if (!consecutive(off, (int32_t)bytes) || (a & (bytes - 1)) != 0) return false;
    T buf[L * N];
    if constexpr (N == 1) narrow16<T>(buf, v[0]);
    else {
#pragma GCC unroll 16
        for (int l = 0; l < L; ++l)
            for (int k = 0; k < N; ++k) buf[l * N + k] = (T)v[k][l];
    }
    u.save(s, a, sizeof buf);
    memcpy((void *)(uintptr_t)a, buf, sizeof buf);
    u.done = u.n;
    return true;
}
} // namespace simd

/* Threads TI.x .. xe of a row in chunks of 16 as vectors (`vec`, answering false where
   the chunk must run one thread at a time), the rest and the refused chunks one thread
   at a time (`one`), each named in linear_tid; a chunk's `lanes` lets the executor replay
   a fault inside it one thread at a time. */
template <class FV, class FK>
PTX_INLINE void simd_row(simtwin_thread_ctx_t *ctx, uint32_t t, simtwin_dim3_t TI, uint32_t xe, FV vec, FK one) {
    /* Chunks that bail do their work twice: after a run of them the kernel's chunks go
       one thread at a time for a while (twice as long after each further bail, at most
       1024 chunks), on this OS thread. Only the speed depends on it. */
    static thread_local struct {
        uint32_t skip, fails;
    } back{0, 0};
    uint32_t x = TI.x;
    for (; xe - x >= (uint32_t)simd::L; x += simd::L, t += simd::L) {
        bool done = false;
        if (back.skip != 0) {
            --back.skip;
        } else {
            ctx->linear_tid = t;
            ctx->lanes = simd::L;
            done = vec(simtwin_dim3_t{x, TI.y, TI.z});
            ctx->lanes = 0;
            if (done) back.fails = 0;
            else if (++back.fails >= 2) back.skip = 1u << (back.fails < 12 ? back.fails - 2 : 10);
        }
        if (!done) plain_row(ctx, t, simtwin_dim3_t{x, TI.y, TI.z}, x + simd::L, one);
    }
    plain_row(ctx, t, simtwin_dim3_t{x, TI.y, TI.z}, xe, one);
}

/* isspacep.local: within this thread's fiber stack (the frames of the translated
   functions hold .local memory); the stack is at most EMU_CUDA_STACK's 64 MiB. */
__attribute__((noinline)) static bool is_local(uint64_t a) {
    uint64_t sp = (uint64_t)(uintptr_t)__builtin_frame_address(0);
    return a + (1ull << 20) >= sp && a <= sp + (64ull << 20);
}

[[noreturn]] PTX_COLD static void trap(const char *msg, const char *file, uint32_t line) {
    __simtwin_trap_now(SIMTWIN_TRAP_TRAP, msg, file, line);
}
[[noreturn]] PTX_COLD static void unsupported(const char *what, const char *file, uint32_t line) {
    char buf[256];
    snprintf(buf, sizeof buf, "PTX mode cannot do this faithfully: %s", what);
    __simtwin_trap_now(SIMTWIN_TRAP_UNSUPPORTED, buf, file, line);
}
PTX_COLD static void report_div0(const simtwin_site_t &site) {
    ::__simtwin::rt->report(SIMTWIN_REPORT_DIVISION, "integer division by zero (device-defined result)", site);
}
[[noreturn]] PTX_COLD static void assert_fail(uint64_t msg, uint64_t file, uint32_t line, const char *ptx, uint32_t ptx_line) {
    char buf[512];
    snprintf(buf, sizeof buf, "%s", msg ? (const char *)(uintptr_t)msg : "assertion failed");
    (void)ptx;
    (void)ptx_line;
    __simtwin_trap_now(SIMTWIN_TRAP_ASSERT, buf, file ? (const char *)(uintptr_t)file : ptx, line);
}

/* The thread index of linear thread t in a block of dimensions d. */
PTX_INLINE simtwin_dim3_t thread_index_of(uint32_t t, simtwin_dim3_t d) {
    return simtwin_dim3_t{t % d.x, (t / d.x) % d.y, t / (d.x * d.y)};
}

/* The loop path (simtwin-ptx's `uniform` pass proved that every barrier of the kernel is
   reached by all live threads of the block together): `step(frame, at)` runs one thread
   from resume point `at` to its next barrier (returning the barrier's number, its live
   registers saved in `frame`) or to its exit (LOOP_EXIT). A sweep runs every live thread
   so; when all are at the barrier it completes (the executor is told, for the hazard
   report of threads that exited before it) and the next sweep begins. The sweeps run
   the threads in the order the fibers would: a barrier's last arrival goes on first,
   then the others in arrival order (unless an exit completed it). */
static const uint32_t LOOP_EXIT = 0xffffffffu;
/* A lane segment's answer (`seg`) with this bit: the batch's lanes all stopped at this
   resume point (a cut of the segment's vector form, simtwin-ptx `simd::segment`), their
   live registers in their frames; the runner steps each lane on from there. */
static const uint32_t LOOP_MID = 0x80000000u;

/* ---- A warp's lanes as two vectors of 16 (the loop path's segments) ----
   A loop-path segment's vector form runs a whole warp's lanes (two halves of 16, one after
   the other, their stores in one undo log) from the resume point to a split point or to a
   cut, and scatters the live registers into the lanes' frames only when both halves went
   the same way and no store met a load of another lane. Exactness never depends on the
   form: where it cannot run the lanes as the threads one at a time would (`simd`), it
   undoes its stores and answers 0, and the runner steps each lane. A fault inside it
   (the runtime's recovery slot) does the same: the stores undone, the lanes stepped, the
   lane whose access faults then faults as it would have, named. */
namespace simd {
struct Stretch {
    simtwin_recover_t point;
    void *jb[5];
};
/* The running stretch of this OS thread (the landing finds it here: the executor clears
   the slot before it redirects). A thread runs one block's runner at a time, and a
   stretch calls nothing that could switch fibers. */
inline thread_local Stretch *stretch_now = nullptr;
[[noreturn]] __attribute__((noinline, used)) inline void landing() { __builtin_longjmp(stretch_now->jb, 1); }
/* The fiber's recovery slot, or null where the runtime has none. */
PTX_INLINE const simtwin_recover_t **recover_slot() {
    if (::__simtwin::rt->size < offsetof(simtwin_runtime_t, recover_slot) + sizeof(void *)) return nullptr;
    return ::__simtwin::rt->recover_slot();
}
/* `body(undo)` with the slot set: a fault inside undoes the stores that completed and
   answers 0. Never inlined (GCC does not inline a function with __builtin_setjmp); the
   body is, into it. */
template <class UN, class F> __attribute__((noinline)) uint32_t guarded(const simtwin_recover_t **slot, UN &undo, F body) {
    Stretch s;
    s.point.landing = &landing;
    if (__builtin_setjmp(s.jb)) {
        stretch_now = nullptr;
        undo.recover();
        return 0;
    }
    stretch_now = &s;
    *(const simtwin_recover_t *volatile *)slot = &s.point;
    const uint32_t to = body(undo);
    *(const simtwin_recover_t *volatile *)slot = nullptr;
    stretch_now = nullptr;
    return to;
}
/* How many shuffles a segment's vector form may perform for its warp before it stops at
   one (the runner's fairness budget: the links the chains may run; 0 where the runner
   has no collectives), and how many it performed, set where it answered: the runner then
   goes on as after that many completed shuffles. */
inline thread_local uint32_t pass_budget = 0, passed = 0;
/* A shuffle of literal lane operand and clamp over a whole warp: each lane's source lane
   (its own where the source is out of range) and validity mask, computed at compile
   time. */
struct ShflLanes {
    uint32_t src[32];
    int32_t ok[32];
};
constexpr ShflLanes shfl_lanes(int mode, uint32_t b, uint32_t c) {
    ShflLanes t{};
    for (uint32_t lane = 0; lane < 32; ++lane) {
        bool ok = false;
        t.src[lane] = shfl_source(mode, lane, b, c, ok);
        t.ok[lane] = ok ? -1 : 0;
    }
    return t;
}
/* The shuffle of a warp's value held as two halves `a0`, `a1`: one permute of the pair
   per half (`vpermt2d`). */
PTX_INLINE void warp_shfl(const ShflLanes &t, vu a0, vu a1, vu &d0, vu &d1) {
    vu i0, i1;
    memcpy(&i0, t.src, sizeof i0);
    memcpy(&i1, t.src + 16, sizeof i1);
    d0 = __builtin_shuffle(a0, a1, i0);
    d1 = __builtin_shuffle(a0, a1, i1);
}
PTX_INLINE void warp_shfl_ok(const ShflLanes &t, vi &p0, vi &p1) {
    memcpy(&p0, t.ok, sizeof p0);
    memcpy(&p1, t.ok + 16, sizeof p1);
}
/* A batch `ids[0..nids)` of the loop path as a warp's two vectors (`body`: the segment's
   vector form), where it is a whole warp whose halves each lie in one row of the block,
   the executor does not ask for one thread at a time and faults can be recovered; 0
   elsewhere, or where the form bailed (after a run of bails the segment goes one lane at
   a time for a while, as `simd_row` does). */
template <int NE, int NB, class F> PTX_INLINE uint32_t warp_segment(Thread &T, const uint32_t *ids, uint32_t nids, F body) {
    static thread_local struct {
        uint32_t skip, fails;
    } back{0, 0};
    if (nids != 32 || ids[31] != ids[0] + 31 || (ids[0] & 31) != 0 || (T.bdim.x & 15) != 0 || T.recover == nullptr ||
        T.ctx->lanes == SIMTWIN_LANES_ONE)
        return 0;
    if (back.skip != 0) {
        --back.skip;
        return 0;
    }
    Undo<NE, NB> undo;
    const uint32_t to = guarded(T.recover, undo, body);
#ifdef SIMTWIN_SIMD_STATS
    static struct St { uint64_t n[3]; ~St() { fprintf(stderr, "simd warp segments: %llu split, %llu cut, %llu bailed\n", (unsigned long long)n[0], (unsigned long long)n[1], (unsigned long long)n[2]); } } st;
    ++st.n[to == 0 ? 2 : (to & LOOP_MID) ? 1 : 0];
#endif
    if (to != 0) back.fails = 0;
    else if (++back.fails >= 2) back.skip = 1u << (back.fails < 12 ? back.fails - 2 : 10);
    return to;
}
/* Lane j of 64-bit lanes. */
PTX_INLINE uint64_t lane(const vw &w, uint32_t j) { return j < 8 ? w.a[j] : w.b[j - 8]; }
/* A result under a mask (a branch the lanes take apart, run both ways): the mask's lanes
   from n, the others' as they were (o). */
PTX_INLINE vu blend(vi m, vu n, vu o) { return m != 0 ? n : o; }
PTX_INLINE vi blend(vi m, vi n, vi o) { return m != 0 ? n : o; }
PTX_INLINE vw blend(vi m, vw n, vw o) {
    const vw w = sext((vu)m);
    return vw{(v8i)w.a != 0 ? n.a : o.a, (v8i)w.b != 0 ? n.b : o.b};
}
} // namespace simd
/* The address of a thread_local of the runners, taken once: each use of a thread_local
   in a shared object is a call to __tls_get_addr, which GCC issues again after every
   call in a loop (a reference to the variable is the variable to it); the empty asm
   hides where the pointer comes from. */
template <class T> PTX_INLINE T *tls_once(T &v) {
    T *p = &v;
    __asm__("" : "+r"(p));
    return p;
}
struct LoopState {
    std::vector<uint32_t> ord, arr, exited;
    std::vector<simtwin_dim3_t> idx;
    simtwin_dim3_t dims = {0, 0, 0};
};
/* A warp collective of the loop path (`kind`: simtwin-ptx's `sync_kind`: 1-4 the shfl
   modes SH_* + 1, 5-8 vote ballot/any/all/uni, 9 activemask, 10 bar.warp.sync, 11-14
   match any/all over 32/64 bits, 15-22 redux add, min.u, min.s, max.u, max.s, and, or,
   xor) over the 32 lanes of one warp (`w`: its lane 0's frame), all arrived at it with
   the full mask: the operands are in the frames' xa, xb, xc, the results go to xr, xp.
   The same values `shfl` and the executor's warp collectives (exec/warp.rs,
   warp_ops.rs) give such a group (a shuffle's source lane and validity as in `shfl`;
   the others over every lane). */
/* Added to a shuffle's kind (simtwin-ptx `LOOP_LITERAL`): its lane operand and clamp are
   literals, the same in every lane, given in the kernel's operand table (`ops`: lane
   operand, clamp); the lanes store only the value shuffled. */
static const uint8_t LOOP_LITERAL = 0x80;
/* Added to a shuffle's kind (simtwin-ptx `LOOP_NOPRED`): nothing reads its predicate
   result, so the runner does not write it. */
static const uint8_t LOOP_NOPRED = 0x40;
/* A fused shuffle's other members (simtwin-ptx `waves`): lane `to` takes the `more`
   values of its source lane `from` (results and operands are separate fields). */
template <class FR> PTX_INLINE void group_move(FR &to, const FR &from, uint32_t more) {
    if constexpr (FR::group > 0)
        for (uint32_t k = 0; k < more; ++k) to.gr[k] = from.ga[k];
    else
        (void)to, (void)from, (void)more;
}
/* An up or down shuffle with no segment mask, the same lane operand `bval` and clamp
   `maxl` in every lane: lanes [lo, hi) read lane + shift, the others keep their own value
   with the predicate false. */
struct ShflRun {
    uint32_t lo, hi;
    int32_t shift;
};
static constexpr ShflRun shfl_run(int mode, uint32_t bval, uint32_t maxl) {
    return mode == SH_UP ? ShflRun{bval + maxl < 32 ? bval + maxl : 32, 32, -(int32_t)bval}
                         : ShflRun{0, maxl >= bval ? maxl - bval + 1 : 0, (int32_t)bval};
}
/* `ops`: per split point, a literal shuffle's lane operand and clamp, and how many more
   values a fused shuffle moves (`group_move`): 0 for every other collective. */
static const uint32_t LOOP_OPS = 3;
template <class FR, bool PRED> PTX_INLINE void loop_collective_as(FR *w, uint8_t kind, const uint32_t *ops) {
    const bool literal = kind & LOOP_LITERAL;
    const uint32_t more = literal ? ops[2] : 0;
    kind &= (uint8_t)~(LOOP_LITERAL | LOOP_NOPRED);
    if (kind <= 4) {
        const int mode = kind - 1;
        /* The usual shuffle: the same lane operand and clamp in every lane (a literal or
           a uniform value), its source lanes computed without the per-lane decode. */
        uint32_t differ = 0; /* an OR of differences: no compare-and-set per lane */
        if (!literal)
            for (uint32_t lane = 1; lane < 32; ++lane) differ |= (w[lane].xb ^ w[0].xb) | (w[lane].xc ^ w[0].xc);
        const uint32_t b = literal ? ops[0] : w[0].xb, c = literal ? ops[1] : w[0].xc;
        if (differ == 0 && (c >> 8 & 31) == 0) {
            const uint32_t bval = b & 31, maxl = c & 31;
            /* Up and down read a contiguous run of lanes [lo, hi) from `lane -/+ b`; the
               others keep their own value with the predicate false. (Operands and results
               are separate fields: no copy of the operands first.) */
            auto run = [&](uint32_t lo, uint32_t hi, int32_t shift) {
                uint32_t lane = 0;
                for (; lane < lo; ++lane) {
                    w[lane].xr = (uint32_t)w[lane].xa;
                    if (PRED) w[lane].xp = false;
                    group_move(w[lane], w[lane], more);
                }
                for (; lane < hi; ++lane) {
                    w[lane].xr = (uint32_t)w[lane + shift].xa;
                    if (PRED) w[lane].xp = true;
                    group_move(w[lane], w[lane + shift], more);
                }
                for (; lane < 32; ++lane) {
                    w[lane].xr = (uint32_t)w[lane].xa;
                    if (PRED) w[lane].xp = false;
                    group_move(w[lane], w[lane], more);
                }
            };
            uint32_t v[32];
            if (mode == SH_BFLY || mode == SH_IDX)
                for (uint32_t lane = 0; lane < 32; ++lane) v[lane] = (uint32_t)w[lane].xa;
            switch (mode) {
            case SH_UP:
            case SH_DOWN: {
                const ShflRun r = shfl_run(mode, bval, maxl);
                run(r.lo, r.hi, r.shift);
                break;
            }
            case SH_BFLY:
                for (uint32_t lane = 0; lane < 32; ++lane) {
                    const uint32_t j = lane ^ bval;
                    const bool ok = j <= maxl;
                    w[lane].xr = v[ok ? j : lane];
                    if (PRED) w[lane].xp = ok;
                    group_move(w[lane], w[ok ? j : lane], more);
                }
                break;
            default: {
                const bool ok = bval <= maxl;
                const uint32_t x = v[ok ? bval : 0];
                for (uint32_t lane = 0; lane < 32; ++lane) {
                    w[lane].xr = ok ? x : v[lane];
                    if (PRED) w[lane].xp = ok;
                    group_move(w[lane], w[ok ? bval : lane], more);
                }
            }
            }
            return;
        }
        for (uint32_t lane = 0; lane < 32; ++lane) {
            bool ok;
            const uint32_t src = shfl_source(mode, lane, literal ? b : w[lane].xb, literal ? c : w[lane].xc, ok);
            w[lane].xr = (uint32_t)w[src].xa;
            if (PRED) w[lane].xp = ok;
            group_move(w[lane], w[src], more);
        }
    } else if (kind <= 8) {
        uint32_t ballot = 0;
        for (uint32_t lane = 0; lane < 32; ++lane) ballot |= (w[lane].xa != 0 ? 1u : 0u) << lane;
        uint32_t r;
        switch (kind) {
        case 5: r = ballot; break;
        case 6: r = ballot != 0; break;
        case 7: r = ballot == 0xffffffffu; break;
        default: r = ballot == 0 || ballot == 0xffffffffu; break;
        }
        for (uint32_t lane = 0; lane < 32; ++lane) w[lane].xr = r;
    } else if (kind == 9) {
        for (uint32_t lane = 0; lane < 32; ++lane) w[lane].xr = 0xffffffffu;
    } else if (kind == 10) {
        /* bar.warp.sync: only the rendezvous */
    } else if (kind <= 14) {
        const bool all = kind >= 13, wide = kind == 12 || kind == 14;
        const uint64_t keep = wide ? ~0ull : 0xffffffffull;
        if (all) {
            bool same = true;
            for (uint32_t lane = 1; lane < 32; ++lane) same &= (w[lane].xa & keep) == (w[0].xa & keep);
            for (uint32_t lane = 0; lane < 32; ++lane) {
                w[lane].xr = same ? 0xffffffffu : 0u;
                w[lane].xp = same;
            }
        } else {
            for (uint32_t lane = 0; lane < 32; ++lane) {
                uint32_t m = 0;
                for (uint32_t l = 0; l < 32; ++l) m |= ((w[l].xa & keep) == (w[lane].xa & keep) ? 1u : 0u) << l;
                w[lane].xr = m;
                w[lane].xp = false;
            }
        }
    } else {
        uint32_t r;
        switch (kind) {
        case 15: r = 0; for (uint32_t l = 0; l < 32; ++l) r += (uint32_t)w[l].xa; break;
        case 16: r = 0xffffffffu; for (uint32_t l = 0; l < 32; ++l) r = std::min(r, (uint32_t)w[l].xa); break;
        case 17: { int32_t m = INT32_MAX; for (uint32_t l = 0; l < 32; ++l) m = std::min(m, (int32_t)(uint32_t)w[l].xa); r = (uint32_t)m; break; }
        case 18: r = 0; for (uint32_t l = 0; l < 32; ++l) r = std::max(r, (uint32_t)w[l].xa); break;
        case 19: { int32_t m = INT32_MIN; for (uint32_t l = 0; l < 32; ++l) m = std::max(m, (int32_t)(uint32_t)w[l].xa); r = (uint32_t)m; break; }
        case 20: r = 0xffffffffu; for (uint32_t l = 0; l < 32; ++l) r &= (uint32_t)w[l].xa; break;
        case 21: r = 0; for (uint32_t l = 0; l < 32; ++l) r |= (uint32_t)w[l].xa; break;
        default: r = 0; for (uint32_t l = 0; l < 32; ++l) r ^= (uint32_t)w[l].xa; break;
        }
        for (uint32_t lane = 0; lane < 32; ++lane) w[lane].xr = r;
    }
}

/* A chain's exchange (simtwin-ptx `chains`): a literal shuffle of a whole warp's word
   held as an array by lane, `xp` its predicate results (or null); `xa` and `xr` are
   always different arrays. Every lane's source is a constant, so the copy is written
   as 32 moves the compiler turns into vector moves: as loops over runs of lanes, g++
   made them `memcpy`s, expanded as `rep movs` on CPUs tuned for it (rocketlake),
   ~9% of motion_cuda's blur kernel in its 4-link chain. */
template <int MODE, uint32_t B, uint32_t C>
PTX_INLINE void chain_shfl(const uint32_t *__restrict xa, uint32_t *__restrict xr, bool *__restrict xp) {
    if constexpr ((MODE == SH_UP || MODE == SH_DOWN) && (C >> 8 & 31) == 0) {
        constexpr ShflRun r = shfl_run(MODE, B & 31, C & 31);
        constexpr uint32_t lo = r.lo, hi = r.hi;
        constexpr int32_t shift = r.shift;
#pragma GCC unroll 32
        for (uint32_t lane = 0; lane < 32; ++lane) xr[lane] = xa[lane >= lo && lane < hi ? lane + shift : lane];
        if (xp) {
#pragma GCC unroll 32
            for (uint32_t lane = 0; lane < 32; ++lane) xp[lane] = lane >= lo && lane < hi;
        }
    } else {
#pragma GCC unroll 32
        for (uint32_t lane = 0; lane < 32; ++lane) {
            bool ok;
            const uint32_t src = shfl_source(MODE, lane, B, C, ok);
            xr[lane] = xa[src];
            if (xp) xp[lane] = ok;
        }
    }
}
/* A lane's view of a fused shuffle's other words in a chain: `ga[j]` is lane `l` of
   word j's array (arrays of 32). */
struct ChainWords {
    uint32_t *a;
    uint32_t l;
    inline __attribute__((always_inline)) uint32_t &operator[](uint32_t j) const { return a[j * 32 + l]; }
};

template <class FR> PTX_INLINE void loop_collective(FR *w, uint8_t kind, const uint32_t *ops) {
    if (kind & LOOP_NOPRED) loop_collective_as<FR, false>(w, kind, ops);
    else loop_collective_as<FR, true>(w, kind, ops);
}

/* `loop_collective` for a warp whose lanes `gone` exited before it (the other lanes all
   arrived): a shuffle as the fibers' `shfl` gives it, the source lane and validity
   computed by each lane, a source that exited reading 0 (exec/device_defined.rs
   `shuffle_fill`, measured on the device). Only shuffles: simtwin-ptx probes the blocks
   of kernels with other collectives and runs those with partial warps on fibers. */
template <class FR> PTX_COLD void loop_collective_gone(FR *w, uint8_t kind, const uint32_t *ops, uint32_t gone, const char *file) {
    const bool literal = kind & LOOP_LITERAL;
    kind &= (uint8_t)~(LOOP_LITERAL | LOOP_NOPRED);
    if (kind < 1 || kind > 4) unsupported("the loop path found a warp collective other than a shuffle with exited lanes (EMU_CUDA_THREAD_LOOPS=off runs it on fibers)", file, 0);
    const int mode = kind - 1;
    for (uint32_t lane = 0; lane < 32; ++lane) {
        if (gone >> lane & 1) continue;
        bool ok;
        const uint32_t src = shfl_source(mode, lane, literal ? ops[0] : w[lane].xb, literal ? ops[1] : w[lane].xc, ok);
        w[lane].xr = gone >> src & 1 ? 0u : (uint32_t)w[src].xa;
        w[lane].xp = ok;
        if constexpr (FR::group > 0)
            for (uint32_t k = 0; k < (literal ? ops[2] : 0); ++k) w[lane].gr[k] = gone >> src & 1 ? 0u : w[src].ga[k];
    }
}

/* The executor's fairness streak (emu-driver exec/scheduler.rs FAIRNESS_STREAK): after so
   many resumes from the run queue in a row, a range of threads not started yet gets a
   turn. thread_loops' warp_tickets shows it if the two differ. */
static const uint32_t LOOP_FAIRNESS_STREAK = 4096;

/* The loop path of a kernel with warp collectives (the translator proved that every
   thread of the block reaches the same barriers and full-mask collectives in the same
   order, with no exit before the last; the caller runs only blocks of whole warps).
   A collective completes per warp, so the threads cannot run in sweeps over the block
   as barriers let them: this runner runs them in the order the executor's fibers do,
   so that whatever the order shows (atomics, printf, the thread a fault names) is the
   same on both paths. The executor's order (exec/scheduler.rs, threads.rs, warp.rs,
   barrier.rs): a thread runs until it waits at a rendezvous or exits; the next one is
   the run queue's head (FIFO; at most LOOP_FAIRNESS_STREAK in a row), else the first
   thread not started yet. The last lane to arrive at a collective and the last thread
   at a barrier go on at once; a collective releases its other 31 lanes in lane order,
   a barrier its waiters in arrival order, to the run queue's tail. A thread started
   from the unstarted range holds the rest of it: when it exits, the next thread starts
   at once; when it waits, the rest becomes the unstarted range again.

   That order comes in batches: threads of one warp that run one after another from
   one resume point (the lanes a collective released, a run of a barrier's waiters, the
   next threads of the unstarted range), each to its next split point, none of them
   completing a rendezvous before the batch's last. The run queue holds such groups
   (`WarpGroup`), not threads; the runner bounds the next batch before it runs it, runs
   it in a plain loop (one resume point: the step's dispatch is the same jump every
   time), then does the bookkeeping of the arrivals in their order (for the usual case,
   every lane at the same collective, once for the batch). */
struct WarpGroup {
    uint32_t pos, end; /* the group's next and end positions: thread ids, or in `list` */
    uint32_t skip;     /* a thread id in [pos, end) not in the group (the lane that went on), or ~0 */
    uint32_t at;       /* the resume point (a released warp's collective) */
    const uint32_t *list; /* a barrier's waiters in arrival order (their own resume points), or null */
};
struct WarpLoopState {
    std::vector<uint32_t> at, bar, rel, exited, warp_sync, out, iota, gone, told, lazy_at, lazy_n;
    std::vector<uint8_t> warp_n;
    std::vector<WarpGroup> q;
    std::vector<simtwin_dim3_t> idx;
    simtwin_dim3_t dims = {0, 0, 0};
};
/* Whether the threads of the block that exit before the first split point make whole
   warps (the probe, simtwin-ptx `KP<fi>`: a thread runs from its start through
   side-effect-free code only; 1 when it exits there, 0 when it reaches anything else):
   then no warp collective misses a lane, and the loop path runs the block; otherwise it
   runs on fibers (the probe has no effect). */
template <class FR, class Step> PTX_INLINE bool whole_warp_exits(simtwin_thread_ctx_t *ctx, Step step) {
    static thread_local FR probe_frame_tls;
    FR &probe_frame = *tls_once(probe_frame_tls);
    const simtwin_dim3_t d = ctx->block_dim;
    const uint32_t n = d.x * d.y * d.z;
    bool whole = true;
    for (uint32_t base = 0; base < n && whole; base += 32) {
        uint32_t exits = 0;
        for (uint32_t t = base; t < base + 32; ++t) {
            ctx->linear_tid = t;
            ctx->thread_idx = thread_index_of(t, d);
            exits += step(probe_frame);
        }
        whole = exits == 0 || exits == 32;
    }
    return whole;
}

/* The lane of warp `base` that completes the shuffle `steps` after the one lane `t`
   completed: the chains' order, in which each batch's last lane completes its shuffle and
   goes on first (lane 31, then 30 as the last of the others, and so on alternating). */
PTX_INLINE uint32_t completer_after(uint32_t base, uint32_t t, uint32_t steps) {
    for (uint32_t s = 0; s < steps; ++s) t = t == base + 31 ? base + 30 : base + 31;
    return t;
}

/* A whole warp on from its vector form's cut to its exit, the code there reaching no
   collective, barrier or loop (simtwin-ptx: a closed tail), each lane run by `run(t)` as
   the runner would have stepped it: after `passed` shuffles the form performed, the lane
   that completed the last goes on first, then the others in lane order; else the lanes in
   lane order. The form's stores were committed before: a lane that faults here is the
   thread that faults. `passed` is never 1 (the lane that goes on first holds the range: the
   runner may start another thread before the others). */
template <class Run> PTX_INLINE uint32_t tail_lanes(Thread &T, const uint32_t *ids, const simtwin_dim3_t *idx, uint32_t passed, Run run) {
    const uint32_t base = ids[0];
    const uint32_t first = passed != 0 ? completer_after(base, base + 31, passed - 1) - base : 32u;
    for (uint32_t q = 0; q < 32; ++q) {
        const uint32_t t = base + (first == 32u ? q : q == 0 ? first : q - 1 < first ? q - 1 : q);
        T.ctx->linear_tid = t;
        T.ctx->thread_idx = idx[t];
        if (run(t) != LOOP_EXIT) unsupported("the loop path's lane from a vector form's cut stopped before its exit (an internal error; EMU_CUDA_THREAD_LOOPS=off runs it on fibers)", "", 0);
    }
    return LOOP_EXIT;
}

/* `links[r]` (simtwin-ptx `LN<fi>`): the split point the chain link from resume point r
   ends at, with this bit where r starts the chain (`KC`); 0 where r starts no link. */
static const uint32_t LOOP_CHAIN_HEAD = 0x80000000u;

template <class FR, class Step, class Seg, class Chain, class Site>
PTX_INLINE void run_warps(simtwin_thread_ctx_t *ctx, const char *file, const uint8_t *kinds, const uint32_t *ops, const uint8_t *pure, const uint32_t *links, const uint8_t *tid_reads, Step step, Seg seg, Chain chain, Site site) {
    static thread_local std::vector<FR> frames_tls;
    static thread_local WarpLoopState st_tls;
    std::vector<FR> &frames = *tls_once(frames_tls);
    WarpLoopState &st = *tls_once(st_tls);
    const simtwin_dim3_t d = ctx->block_dim;
    const uint32_t n = d.x * d.y * d.z, warps = n / 32;
    /* The run queue: a ring of groups. At most one group per warp (a warp's collective
       needs every lane, so its released lanes have all run before it releases again) and
       one barrier's waiters (likewise) are in it at a time. */
    uint32_t cap = 2;
    while (cap < warps + 2) cap <<= 1;
    if (st.dims.x != d.x || st.dims.y != d.y || st.dims.z != d.z) {
        st.idx.resize(n);
        for (uint32_t t = 0; t < n; ++t) st.idx[t] = thread_index_of(t, d);
        st.dims = d;
        st.at.resize(n);
        st.warp_n.resize(warps);
        st.warp_sync.resize(warps);
        st.gone.resize(warps);
        st.told.resize(warps);
        st.lazy_at.resize(warps);
        st.lazy_n.resize(warps);
        st.bar.resize(n);
        st.rel.resize(n);
        st.exited.resize(n);
        st.out.resize(n);
        st.iota.resize(n);
        for (uint32_t t = 0; t < n; ++t) st.iota[t] = t;
        st.q.resize(cap);
    }
    if (frames.size() < n) frames.resize(n);
    for (uint32_t w = 0; w < warps; ++w) {
        st.warp_n[w] = 0;
        st.gone[w] = 0;
        st.told[w] = 0;
        st.lazy_at[w] = 0;
    }
    WarpGroup *const qg = st.q.data();
    const uint32_t mask = cap - 1;
    ctx->reserved = 0; /* no preemption inside the runner: nothing else of the block could run */
    /* The state through local pointers and counters: a store of the kernel could alias
       a vector's fields, which would otherwise be read again at every use. */
    FR *fr = frames.data();
    uint32_t *at = st.at.data(), *bar = st.bar.data(), *rel = st.rel.data(), *exited = st.exited.data();
    uint32_t *warp_sync = st.warp_sync.data(), *out = st.out.data();
    const uint32_t *iota = st.iota.data();
    uint8_t *warp_n = st.warp_n.data();
    const simtwin_dim3_t *idx = st.idx.data();
    /* The lanes of each warp that exited (anywhere where every collective is a shuffle;
       elsewhere simtwin-ptx's `uniform` allows exits only before the first split point,
       in blocks the probe found to lose whole warps). Such a warp's collectives complete
       without those lanes, which read as 0, and the `warp-lane-exited` hazard is
       reported as the fibers report it. */
    uint32_t *gone = st.gone.data(), *told = st.told.data();
    /* Chains booked, not run: where other warps are queued between a chain's links (the
       fibers take the warps in turn, link by link: a block's warps reducing after a
       barrier), each link's batches are booked as if they ran (their lanes at the link's
       shuffle, its completion counted in `lazy_n`) and the chain runs for the warp's lanes
       at once (`KC`) when a lane of the warp goes on past its end, or the warp's frames are
       read. Nothing a link does shows (`LP`: register arithmetic and its shuffle), so the
       order of everything else is the fibers'. `lazy_at[w]`: the chain's head, 0 where
       warp w has none booked. */
    uint32_t *lazy_at = st.lazy_at.data(), *lazy_n = st.lazy_n.data();
    auto force = [&](uint32_t w) {
        if (__builtin_expect(lazy_at[w] == 0, 1)) return;
        uint32_t steps = 0;
        const uint32_t z = chain(fr + w * 32, lazy_at[w], ~0u, steps);
        if (z == 0 || steps != lazy_n[w] || links[z] != 0)
            unsupported("the loop path's booked chain of shuffles ended elsewhere than its lanes (an internal error; EMU_CUDA_THREAD_LOOPS=off runs it on fibers)", file, 0);
        lazy_at[w] = 0;
    };
    auto live = [&](uint32_t w) { return 32u - (uint32_t)__builtin_popcount(gone[w]); };
    /* The hazard of warp w's open collective at split point r, once, when the fibers
       report it: at an arrival while lanes are gone, or at an exit while lanes wait
       (exec/warp.rs `arrive`, `lanes_gone`), naming the lanes gone then. False when the
       launch stops. */
    auto tell = [&](uint32_t w, uint32_t r) -> bool {
        if (__builtin_expect(gone[w] != 0 && told[w] == 0, 0)) {
            told[w] = 1;
            /* A fused shuffle is its members' shuffles, each reporting at the fibers' site. */
            for (uint32_t k = 0; k <= ops[LOOP_OPS * (r - 1) + 2]; ++k)
                if (::__simtwin::rt->warp_exited(SIMTWIN_WARP_SHFL_IDX, site(r), 0xffffffffu, w, gone[w])) return false;
        }
        return true;
    };
    /* A group from its first lane to run: past the lane that went on and exited lanes. */
    auto first_released = [&](WarpGroup g) {
        while (g.pos < g.end && (g.pos == g.skip || (gone[g.pos >> 5] >> (g.pos & 31) & 1))) ++g.pos;
        return g;
    };
    /* Warp w's collective at split point r completes (its live lanes all arrived). */
    auto complete = [&](uint32_t w, uint32_t r) {
        warp_n[w] = 0;
        told[w] = 0;
        if (lazy_at[w] != 0) {
            /* A booked link's shuffle: its exchange is the chain's. */
            if (gone[w] != 0) unsupported("the loop path's booked chain of shuffles lost lanes (an internal error; EMU_CUDA_THREAD_LOOPS=off runs it on fibers)", file, 0);
            ++lazy_n[w];
            return;
        }
        if (__builtin_expect(gone[w] != 0, 0)) {
            loop_collective_gone(fr + w * 32, kinds[r - 1], ops + LOOP_OPS * (r - 1), gone[w], file);
        } else {
            loop_collective(fr + w * 32, kinds[r - 1], ops + LOOP_OPS * (r - 1));
        }
    };
    uint32_t nbar = 0, nexit = 0;      /* threads waiting at the barrier, threads exited */
    uint32_t head = 0, tail = 0;       /* the run queue is qg[head..tail) (mod cap) */
    uint32_t next_new = 0, streak = 0; /* threads next_new.. have not started */
    /* Exits the executor has not seen yet: threads [pend_lo, pend_hi) of the running
       range, which it accounts when the range's next thread enters the runtime or the
       range ends (exec/scheduler.rs `catch_up`, `range_ended`): then, warp by warp, the
       lanes are gone, a collective waiting for them reports it and may complete. */
    uint32_t pend_lo = 0, pend_hi = 0;
    auto flush = [&]() -> bool {
        for (uint32_t t = pend_lo; t < pend_hi;) {
            const uint32_t ew = t >> 5, e = pend_hi < ew * 32 + 32 ? pend_hi : ew * 32 + 32;
            gone[ew] |= (uint32_t)((((uint64_t)1 << (e - t)) - 1) << (t & 31));
            t = e;
            if (warp_n[ew] == 0) continue;
            if (!tell(ew, warp_sync[ew])) return false;
            if (warp_n[ew] == live(ew)) {
                /* The exits complete the warp's collective: every lane there follows in
                   lane order (none goes on at once). */
                const uint32_t ar = warp_sync[ew];
                complete(ew, ar);
                qg[tail++ & mask] = first_released(WarpGroup{ew * 32, ew * 32 + 32, ~0u, ar, nullptr});
            }
        }
        pend_lo = pend_hi = 0;
        return true;
    };
    /* After exits (flushed): where every thread left is at the barrier, it completes and
       every waiter goes on, in arrival order. False when the launch stops. */
    auto barrier_by_exits = [&]() -> bool {
        if (nbar == 0 || nbar + nexit != n) return true;
        if (::__simtwin::rt->block_barrier(SIMTWIN_BAR_SYNC, site(at[bar[0]]), nbar, exited, nexit)) return false;
        std::swap(bar, rel);
        qg[tail++ & mask] = WarpGroup{0, nbar, ~0u, 0, rel};
        nbar = 0;
        return true;
    };
    /* A thread that goes on at once (it completed a rendezvous), and whether it holds the
       unstarted range; whether an exited holder's range goes on at once. */
    uint32_t solo = 0;
    bool has_solo = false, solo_owner = false, owner_next = false;
    for (;;) {
        /* The next batch: ids[0..k), lanes of one warp, every one resuming at `cur`; `last`
           arrives last where that is not ids[k - 1] (a whole warp's batch, below). */
        const uint32_t *ids;
        uint32_t k, cur, last = ~0u, budget = 0;
        bool owner;
        if (has_solo && tail - head == 1 && qg[head & mask].skip == solo && !qg[head & mask].list && pure[at[solo]] &&
            pend_hi == pend_lo && gone[solo >> 5] == 0 && !owner_next && (next_new >= n || streak + 31 <= LOOP_FAIRNESS_STREAK)) {
            /* The lane that went on resumes at a lane segment of register arithmetic alone
               that ends at a warp collective (simtwin-ptx `LP`), and its warp's released
               lanes are all the queue holds: the fibers would run that lane, then those
               lanes in lane order, with nothing between (no exit pending, no other group,
               the fairness streak not reached before they all ran), and the last of those
               would complete the collective. Nothing in such a segment shows the lanes'
               order: one batch runs the whole warp in lane order, and that last lane
               completes it: the same results, queue and streak after. */
            const uint32_t base = solo & ~31u;
            /* A chain of such segments and shuffles from there (simtwin-ptx `KC`), run for
               the warp's lanes at once: the state the batches one by one would leave (each
               batch's last lane completes its shuffle and goes on first), where the
               fairness streak lets them all run. */
            uint32_t steps = 0;
            if (const uint32_t z = lazy_at[base >> 5] != 0 ? 0u : chain(fr + base, at[solo], next_new >= n ? ~0u : (LOOP_FAIRNESS_STREAK - streak) / 31u, steps)) {
                const uint32_t t = completer_after(base, solo, steps);
                const uint32_t w = base >> 5;
                warp_n[w] = 0;
                told[w] = 0;
                ++head;
                streak += 31u * steps;
                ctx->linear_tid = t;
                ctx->thread_idx = idx[t];
                qg[tail++ & mask] = first_released(WarpGroup{base, base + 32, t, z, nullptr});
                at[t] = z;
                solo = t;
                solo_owner = false;
                continue;
            }
            last = completer_after(base, solo, 1);
            ids = iota + base;
            k = 32;
            cur = at[solo];
            owner = false;
            has_solo = false;
            ++head;
            streak += 31;
        } else if (has_solo) {
            ids = &solo;
            k = 1;
            cur = at[solo];
            owner = solo_owner;
            has_solo = false;
        } else if (!owner_next && head != tail && (streak < LOOP_FAIRNESS_STREAK || next_new >= n)) {
            /* The run queue's head group, no further than the fairness streak (while threads
               have not started: after that it changes nothing), a barrier's completion, the
               end of a warp or of a run of waiters at one barrier. */
            WarpGroup &g = qg[head & mask];
            uint32_t kmax = n - nbar - nexit;
            if (next_new < n && kmax > LOOP_FAIRNESS_STREAK - streak) kmax = LOOP_FAIRNESS_STREAK - streak;
            if (!g.list) {
                /* A warp's released lanes: [pos, end) but the lane that went on and the
                   lanes that exited (the batch stops before either). */
                const uint32_t gw = gone[g.pos >> 5];
                uint32_t stop = g.skip > g.pos && g.skip < g.end ? g.skip : g.end;
                if (const uint32_t ahead = gw >> (g.pos & 31))
                    if (g.pos + (uint32_t)__builtin_ctz(ahead) < stop) stop = g.pos + (uint32_t)__builtin_ctz(ahead);
                if (kmax > stop - g.pos) kmax = stop - g.pos;
                ids = iota + g.pos;
                cur = g.at;
                k = kmax;
            } else {
                ids = g.list + g.pos;
                if (kmax > g.end - g.pos) kmax = g.end - g.pos;
                cur = at[ids[0]];
                const uint32_t w = ids[0] >> 5;
                k = 1;
                while (k < kmax && ids[k] >> 5 == w && at[ids[k]] == cur) ++k;
            }
            g.pos += k;
            if (!g.list) g = first_released(g);
            if (g.pos >= g.end) ++head;
            streak += k;
            owner = false;
        } else if (next_new < n) {
            /* Threads of the unstarted range, to the end of a warp, while nothing enters the
               queue (when it is not empty, only one: a waiting holder gives way to it). */
            if (!owner_next) streak = 0;
            owner_next = false;
            uint32_t kmax = head != tail ? 1 : 32 - (next_new & 31);
            if (kmax > n - next_new) kmax = n - next_new;
            if (kmax > n - nbar - nexit) kmax = n - nbar - nexit;
            ids = iota + next_new;
            k = kmax;
            cur = 0;
            next_new += k;
            owner = true;
            /* A whole warp from its start with nothing else queued or pending: the shuffles
               its vector form may perform, as many as the chains' links the fairness
               streak allows (each completes with the warp alone in the queue), and never
               more than a streak's worth: a loop through a shuffle then comes back to the
               runner (a warp that waits for another block must let it run). */
            if (k == 32 && head == tail && pend_hi == pend_lo)
                budget = next_new >= n ? LOOP_FAIRNESS_STREAK / 31u : streak < LOOP_FAIRNESS_STREAK ? (LOOP_FAIRNESS_STREAK - streak) / 31u : 0u;
        } else {
            break;
        }
        /* The batch itself: the only place the kernel's code runs. From a resume point
           that starts a lane segment (simtwin-ptx `KS`: straight-line code to the next
           split point), one loop runs the lanes there, in the same order. */
        uint32_t diff = 0; /* whether any lane stopped elsewhere than the first */
        const uint32_t bw = ids[0] >> 5, link = links[cur];
        uint32_t to;
        simd::passed = 0; /* a booked batch performs no shuffle of a form */
        if (link != 0 && budget == 0 && (lazy_at[bw] != 0 || ((link & LOOP_CHAIN_HEAD) && gone[bw] == 0 && pend_hi == pend_lo))) {
            /* A chain's link: booked, every lane of the batch at its shuffle. A chain is
               begun only by a whole warp with no exit pending (a lane gone later would
               make a booked shuffle one with lanes missing); a booked warp's lanes are all
               in its links, so none of them leaves before the chain has run. */
            if (lazy_at[bw] == 0) {
                lazy_at[bw] = cur;
                lazy_n[bw] = 0;
            }
            to = link & ~LOOP_CHAIN_HEAD;
        } else {
            force(bw);
            simd::pass_budget = budget;
            to = seg(fr, ids, k, cur, idx);
            simd::pass_budget = 0;
        }
        if (const uint32_t m = simd::passed) {
            /* The vector form performed m shuffles for the warp: the state the runner would
               have reached (the batch's last lane completes the first and goes on first; at
               each next, the last of the others: the chains' order). */
            if (to == 0 || (to == LOOP_EXIT && m == 1)) unsupported("the loop path's vector form exited after a shuffle it performed (an internal error; EMU_CUDA_THREAD_LOOPS=off runs it on fibers)", file, 0);
            const uint32_t base = ids[0], w = base >> 5;
            const uint32_t t = completer_after(base, base + 31, m - 1);
            streak += 31u * (m - 1);
            warp_n[w] = 0;
            told[w] = 0;
            if (to == LOOP_EXIT) {
                /* The form ran every lane on from its cut to its exit (simtwin-ptx
                   `tail_lanes`): that lane first, then the others in lane order, as the
                   runner would have (that lane alone, not holding the range, then the
                   others as one group within the fairness streak the budget left): their
                   exits as those batches book them, no collective of the warp open. */
                exited[nexit++] = t;
                for (uint32_t l = base; l < base + 32; ++l)
                    if (l != t) exited[nexit++] = l;
                gone[w] = ~0u;
                streak += 31u;
                const uint32_t z = t == base + 31 ? base + 30 : base + 31;
                ctx->linear_tid = z;
                ctx->thread_idx = idx[z];
                if (!barrier_by_exits()) return;
                continue;
            }
            if (to & LOOP_MID) {
                /* At a cut: that lane goes on from there first, then the others in lane order. */
                const uint32_t c = to & ~LOOP_MID;
                ctx->linear_tid = t;
                ctx->thread_idx = idx[t];
                qg[tail++ & mask] = first_released(WarpGroup{base, base + 32, t, c, nullptr});
                at[t] = c;
                solo = t;
                solo_owner = m == 1 && owner;
                has_solo = true;
                continue;
            }
            /* At a shuffle it did not perform: the lanes arrive with that lane first. */
            streak += 31u;
            last = completer_after(base, t, 1);
            owner = false;
        }
        if (to != LOOP_EXIT && (to & LOOP_MID)) {
            /* The vector form stopped at a cut: every lane goes on from there. */
            cur = to & ~LOOP_MID;
            to = 0;
        }
        if (to == LOOP_EXIT) {
            /* The vector form ran every lane to its exit: their arrivals below. */
            for (uint32_t j = 0; j < k; ++j) out[j] = LOOP_EXIT;
            ctx->linear_tid = ids[k - 1];
            ctx->thread_idx = idx[ids[k - 1]];
        } else if (to != 0) {
            out[0] = to;
            if (kinds[to - 1] == 0)
                for (uint32_t j = 1; j < k; ++j) out[j] = to;
            if (last == ~0u) last = ids[k - 1];
            ctx->linear_tid = last;
            ctx->thread_idx = idx[last];
        } else {
            for (uint32_t j = 0, tr = tid_reads[cur]; j < k; ++j) {
                const uint32_t t = ids[j];
                ctx->linear_tid = t;
                if (tr) ctx->thread_idx = idx[t];
                const uint32_t r = step(fr[t], cur, idx[t]);
                out[j] = r;
                diff |= r ^ out[0];
            }
        }
        /* The usual case: every lane at one collective, no further than a warp's 32nd. */
        const uint32_t r0 = out[0], w = ids[0] >> 5;
        if (diff == 0 && r0 != LOOP_EXIT && kinds[r0 - 1] != 0) {
            if (pend_hi != pend_lo && !flush()) return;
            if (warp_n[w] == 0) {
                warp_sync[w] = r0;
            } else if (warp_sync[w] != r0) {
                unsupported("the loop path found the lanes of a warp at different warp collectives (EMU_CUDA_THREAD_LOOPS=off runs it on fibers)", file, 0);
            }
            if (!tell(w, r0)) return;
            warp_n[w] = (uint8_t)(warp_n[w] + k);
            if (warp_n[w] < live(w)) continue;
            /* The last lane (the batch's last): the warp's collective completes, that lane
               goes on at once, the others follow in lane order. */
            const uint32_t t = last != ~0u ? last : ids[k - 1];
            complete(w, r0);
            if (live(w) > 1) qg[tail++ & mask] = first_released(WarpGroup{w * 32, w * 32 + 32, t, r0, nullptr});
            at[t] = r0;
            solo = t;
            solo_owner = owner;
            has_solo = true;
            continue;
        }
        /* Every lane of a run of one warp's exited, none of its collectives open: their
           exits at once, as the loop below books them one by one. */
        if (diff == 0 && r0 == LOOP_EXIT && ids[k - 1] == ids[0] + k - 1 && ids[k - 1] >> 5 == w && warp_n[w] == 0) {
            const uint32_t t0 = ids[0];
            memcpy(exited + nexit, ids, k * sizeof(uint32_t));
            nexit += k;
            if (pend_hi != t0 && pend_hi != pend_lo && !flush()) return;
            if (pend_hi == pend_lo) pend_lo = t0;
            pend_hi = t0 + k;
            if (owner && next_new < n) {
                owner_next = true;
                continue;
            }
            if (!flush() || !barrier_by_exits()) return;
            continue;
        }
        /* Their arrivals one by one, in their order (no rendezvous completes before the
           last). */
        for (uint32_t j = 0; j < k; ++j) {
            const uint32_t t = ids[j], r = out[j];
            if (r == LOOP_EXIT) {
                exited[nexit++] = t;
                if (pend_hi != t && pend_hi != pend_lo && !flush()) return;
                if (pend_hi == pend_lo) pend_lo = t;
                pend_hi = t + 1;
                /* A thread resumed from the run queue runs on a fiber of its own, whose end
                   the executor sees at once (exec/scheduler.rs `range_ended`): where lanes of
                   its warp wait at a collective, that shows (the hazard names the lanes gone
                   so far, the collective may complete); elsewhere it is flushed as above. */
                if (!owner && warp_n[t >> 5] != 0 && !flush()) return;
                if (j + 1 < k) continue;
                if (owner && next_new < n) {
                    owner_next = true; /* its range goes on (an exit completes nothing before) */
                    break;
                }
                if (!flush() || !barrier_by_exits()) return; /* the range ends */
                break;
            }
            at[t] = r;
            if (pend_hi != pend_lo && !flush()) return;
            const uint8_t kind = kinds[r - 1];
            if (kind != 0) {
                if (warp_n[w] == 0) {
                    warp_sync[w] = r;
                } else if (warp_sync[w] != r) {
                    unsupported("the loop path found the lanes of a warp at different warp collectives (EMU_CUDA_THREAD_LOOPS=off runs it on fibers)", file, 0);
                }
                if (!tell(w, r)) return;
                if (++warp_n[w] < live(w)) continue;
                if (j + 1 != k) unsupported("the loop path's batch ran past a completed warp collective (an internal error; EMU_CUDA_THREAD_LOOPS=off runs it on fibers)", file, 0);
                complete(w, r);
                if (live(w) > 1) qg[tail++ & mask] = first_released(WarpGroup{w * 32, w * 32 + 32, t, r, nullptr});
                solo = t;
                solo_owner = owner;
                has_solo = true;
                break;
            }
            bar[nbar++] = t;
            if (nbar + nexit < n) continue;
            if (j + 1 != k) unsupported("the loop path's batch ran past a completed barrier (an internal error; EMU_CUDA_THREAD_LOOPS=off runs it on fibers)", file, 0);
            /* The last thread at the barrier (the batch's last): it completes (the
               executor is told), the caller goes on, the others follow in arrival order. */
            for (uint32_t v = 0; v < warps; ++v)
                if (warp_n[v] != 0)
                    unsupported("the loop path found a barrier completing while lanes wait at a warp collective (EMU_CUDA_THREAD_LOOPS=off runs it on fibers)", file, 0);
            if (::__simtwin::rt->block_barrier(SIMTWIN_BAR_SYNC, site(r), nbar, exited, nexit)) return;
            std::swap(bar, rel);
            if (nbar > 1) qg[tail++ & mask] = WarpGroup{0, nbar - 1, ~0u, 0, rel};
            nbar = 0;
            solo = t;
            solo_owner = owner;
            has_solo = true;
            break;
        }
    }
    for (uint32_t w = 0; w < warps; ++w)
        if (warp_n[w] != 0 || nbar != 0 || lazy_at[w] != 0)
            unsupported("the loop path found threads left waiting at the end of a block (EMU_CUDA_THREAD_LOOPS=off runs it on fibers)", file, 0);
}

/* The first batch of a sweep's `k` threads `ids` for a kernel with a vector form: a whole
   warp in lane order (32), or the threads up to the next such warp. */
PTX_INLINE uint32_t warp_batch(const uint32_t *ids, uint32_t k) {
    auto whole = [&](uint32_t j) {
        if (k - j < 32 || (ids[j] & 31) != 0) return false;
        for (uint32_t l = 1; l < 32; ++l)
            if (ids[j + l] != ids[j] + l) return false;
        return true;
    };
    if (whole(0)) return 32;
    uint32_t j = 1;
    while (j < k && !whole(j)) ++j;
    return j;
}

/* A barrier-only kernel's runner: sweeps of the block between barriers. */
template <class FR, class Step, class Seg, class Site>
PTX_INLINE void run_sweeps(simtwin_thread_ctx_t *ctx, const char *file, const uint8_t *tid_reads, Step step, Seg seg, Site site) {
    static thread_local std::vector<FR> frames_tls;
    static thread_local LoopState st_tls;
    std::vector<FR> &frames = *tls_once(frames_tls);
    LoopState &st = *tls_once(st_tls);
    const simtwin_dim3_t d = ctx->block_dim;
    const uint32_t n = d.x * d.y * d.z;
    if (st.dims.x != d.x || st.dims.y != d.y || st.dims.z != d.z) {
        st.idx.resize(n);
        for (uint32_t t = 0; t < n; ++t) st.idx[t] = thread_index_of(t, d);
        st.dims = d;
        st.ord.resize(n);
        st.arr.resize(n);
    }
    if (frames.size() < n) frames.resize(n);
    for (uint32_t t = 0; t < n; ++t) st.ord[t] = t;
    st.exited.clear();
    ctx->reserved = 0; /* no preemption inside a sweep: nothing else of the block could run */
    uint32_t m = n;
    FR *fr = frames.data();
    uint32_t *ord = st.ord.data(), *arr = st.arr.data();
    const simtwin_dim3_t *idx = st.idx.data();
    /* Every thread of a sweep resumes at the same point: the start, then the barrier the
       previous sweep ended at (a thread at another one stops the runner below). One
       value for the sweep: the step's dispatch is the same jump for every thread. */
    uint32_t cur = 0;
    for (;;) {
        uint32_t arrived = 0, sync = 0;
        bool last_exit = false;
        /* The sweep in batches: all its threads, or (a kernel with a vector form) each
           whole warp in lane order as one batch and the threads between such warps as
           another, in the sweep's order (a warp's form runs its lanes as the threads one
           after another would). */
        for (uint32_t j = 0; j < m;) {
            const uint32_t *ids = ord + j;
            uint32_t k = m - j;
            if constexpr (FR::vectors) k = warp_batch(ids, k);
            /* From a resume point that starts a lane segment (straight-line code to the
               next barrier), one loop runs the batch's threads there, in the same order. */
            uint32_t to = seg(fr, ids, k, cur, idx);
            uint32_t from = cur;
            j += k;
            if (to == LOOP_EXIT) {
                /* The vector form ran every thread of the batch to its exit. */
                for (uint32_t q = 0; q < k; ++q) st.exited.push_back(ids[q]);
                last_exit = true;
                continue;
            }
            if (to & LOOP_MID) {
                /* The vector form stopped at a cut: every thread goes on from there. */
                from = to & ~LOOP_MID;
                to = 0;
            }
            if (to != 0) {
                if (sync == 0) sync = to;
                else if (to != sync) unsupported("the loop path found the threads of a block at different barriers (EMU_CUDA_THREAD_LOOPS=off runs it on fibers)", file, 0);
                memcpy(arr + arrived, ids, k * sizeof(uint32_t));
                arrived += k;
                last_exit = false;
                continue;
            }
            for (uint32_t q = 0, tr = tid_reads[from]; q < k; ++q) {
                /* The step reads its index from the table (`TI`); `ctx` gets it only
                   where the code calls a function, which reads it there (simtwin-ptx
                   `LT`). */
                const uint32_t t = ids[q];
                ctx->linear_tid = t;
                if (tr) ctx->thread_idx = idx[t];
                const uint32_t r = step(fr[t], from, idx[t]);
                if (r == LOOP_EXIT) {
                    st.exited.push_back(t);
                    last_exit = true;
                    continue;
                }
                if (sync == 0) {
                    sync = r;
                } else if (r != sync) {
                    unsupported("the loop path found the threads of a block at different barriers (EMU_CUDA_THREAD_LOOPS=off runs it on fibers)", file, 0);
                }
                arr[arrived++] = t;
                last_exit = false;
            }
        }
        if (arrived == 0) return;
        if (::__simtwin::rt->block_barrier(SIMTWIN_BAR_SYNC, site(sync), arrived, st.exited.data(), (uint32_t)st.exited.size())) return;
        if (last_exit) {
            memcpy(ord, arr, arrived * sizeof(uint32_t));
        } else {
            ord[0] = arr[arrived - 1];
            memcpy(ord + 1, arr, (arrived - 1) * sizeof(uint32_t));
        }
        m = arrived;
        cur = sync;
    }
}

/* The loop path's runner. One call of `step` in the instantiated code (the other
   runner's is discarded), so that the compiler inlines the kernel's loop body there:
   a call per lane per split point cost VMAF's vif horizontal filter a third of its time
   in prologues, epilogues and dispatch. */
template <class FR, class Step, class Seg, class Chain, class Site>
PTX_INLINE void run_loops(simtwin_thread_ctx_t *ctx, const char *file, const uint8_t *kinds, const uint32_t *ops, const uint8_t *pure, const uint32_t *links, const uint8_t *tid_reads, Step step, Seg seg, Chain chain, Site site) {
    if constexpr (FR::collectives) {
        run_warps<FR>(ctx, file, kinds, ops, pure, links, tid_reads, step, seg, chain, site);
    } else {
        (void)chain;
        (void)kinds;
        (void)ops;
        (void)pure;
        (void)links;
        run_sweeps<FR>(ctx, file, tid_reads, step, seg, site);
    }
}

/* Device printf: the format string and the argument buffer as the device lays it out
   (each argument at the next multiple of its size: 4 for int/char, 8 for long, pointers,
   %s and double, float arguments promoted to double). */
PTX_COLD static int32_t vprintf_(uint64_t fmt_addr, uint64_t args) {
    const char *fmt = (const char *)(uintptr_t)fmt_addr;
    if (!fmt) return -1;
    char out[4096];
    size_t len = 0;
    uint64_t at = 0;
    auto arg = [&](uint32_t size) -> uint64_t {
        at = (at + size - 1) / size * size;
        uint64_t v = 0;
        if (args) memcpy(&v, (const void *)(uintptr_t)(args + at), size);
        at += size;
        return v;
    };
    for (const char *p = fmt; *p && len < sizeof out - 1;) {
        if (*p != '%') {
            out[len++] = *p++;
            continue;
        }
        if (p[1] == '%') {
            out[len++] = '%';
            p += 2;
            continue;
        }
        /* one conversion: flags, width, precision, length, specifier */
        char spec[64];
        size_t k = 0;
        spec[k++] = *p++;
        while (*p && strchr("-+ #0", *p) && k < 40) spec[k++] = *p++;
        while (*p && ((*p >= '0' && *p <= '9') || *p == '.') && k < 40) spec[k++] = *p++;
        int longs = 0;
        bool half = false;
        while (*p && strchr("hlLqjzt", *p) && k < 44) {
            if (*p == 'l' || *p == 'L' || *p == 'q' || *p == 'j' || *p == 'z' || *p == 't') ++longs;
            if (*p == 'h') half = true;
            ++p;
        }
        char c = *p ? *p++ : 0;
        int room = (int)(sizeof out - len);
        int n = 0;
        switch (c) {
        case 'd': case 'i': {
            spec[k++] = 'l'; spec[k++] = 'l'; spec[k++] = c; spec[k] = 0;
            long long v = longs ? (long long)(int64_t)arg(8) : (long long)(int32_t)(uint32_t)arg(4);
            if (half) v = (short)v;
            n = snprintf(out + len, (size_t)room, spec, v);
            break;
        }
        case 'u': case 'x': case 'X': case 'o': {
            spec[k++] = 'l'; spec[k++] = 'l'; spec[k++] = c; spec[k] = 0;
            unsigned long long v = longs ? (unsigned long long)arg(8) : (unsigned long long)(uint32_t)arg(4);
            if (half) v = (unsigned short)v;
            n = snprintf(out + len, (size_t)room, spec, v);
            break;
        }
        case 'c': {
            spec[k++] = c; spec[k] = 0;
            n = snprintf(out + len, (size_t)room, spec, (int)(uint32_t)arg(4));
            break;
        }
        case 'f': case 'F': case 'e': case 'E': case 'g': case 'G': case 'a': case 'A': {
            spec[k++] = c; spec[k] = 0;
            n = snprintf(out + len, (size_t)room, spec, bc<double>(arg(8)));
            break;
        }
        case 'p': {
            spec[k++] = c; spec[k] = 0;
            n = snprintf(out + len, (size_t)room, spec, (void *)(uintptr_t)arg(8));
            break;
        }
        case 's': {
            spec[k++] = c; spec[k] = 0;
            const char *s = (const char *)(uintptr_t)arg(8);
            n = snprintf(out + len, (size_t)room, spec, s ? s : "(null)");
            break;
        }
        default:
            n = snprintf(out + len, (size_t)room, "%%%c", c);
            break;
        }
        if (n > 0) len += (size_t)n < (size_t)room ? (size_t)n : (size_t)room - 1;
    }
    out[len] = 0;
    ::__simtwin::rt->print(out, len);
    return (int32_t)len;
}

/* ---- textures and surfaces ------------------------------------------------------- */

/* tex, tld4, txq, suld, sust, suq: one request to the runtime table's texture entry,
   the same the host twins' texture functions call (the driver samples). */
PTX_INLINE void tex_call(simtwin_tex_request_t *r) {
    if (::__simtwin::rt->size < offsetof(simtwin_runtime_t, texture) + sizeof(void *)) {
        ::__simtwin::rt->trap(SIMTWIN_TRAP_UNSUPPORTED, "texture instruction: the driver's runtime table has no texture entry (an older simtwin)", "", 0);
        __builtin_unreachable();
    }
    ::__simtwin::rt->texture(r);
}
/* The value of type T at byte `off` of a surface load's answer. */
template <class T> PTX_INLINE T tex_part(const uint32_t *data, uint32_t off) {
    T v;
    memcpy(&v, (const char *)data + off, sizeof v);
    return v;
}
/* ---- mbarrier -------------------------------------------------------------------- */

/* mbarrier objects (PTX ISA, "mbarrier"): 64-bit words in the block's shared memory whose
   layout the ISA leaves opaque. simtwin's:
     bits  0-20  pending arrivals of the current phase
     bits 21-41  expected arrivals (the pending count a completed phase starts the next with)
     bit  62     set by mbarrier.init, cleared by mbarrier.inval (any other operation on an
                 object without it traps: used before init, or after inval)
     bit  63     the current phase's parity (0: even)
   No transaction count: the forms that use one are refused at translation.
   The state token mbarrier.arrive returns is the object's word before the arrive: bit 63
   the parity of the phase it arrived on (what test_wait/try_wait compare), bits 0-20 the
   pending count before the arrive (what mbarrier.pending_count reads).
   One OS thread runs a whole block, but a fiber can be preempted anywhere: every update
   is a compare-and-swap of the whole word. What the ISA leaves undefined and a program can
   only get wrong (a count of 0 or past 2^20 - 1, an arrive past the pending count, a
   .noComplete arrive that would complete the phase, an object outside shared memory)
   traps naming the object. */
enum : uint64_t { MB_COUNT = 0x1fffffull, MB_VALID = 1ull << 62, MB_PHASE = 1ull << 63 };

[[noreturn]] PTX_COLD static void mb_fail(const Thread &t, const char *what, uint64_t a, const char *file, uint32_t line) {
    char buf[256];
    snprintf(buf, sizeof buf, "mbarrier: %s (object at shared address 0x%llx)", what,
             (unsigned long long)(a - (uint64_t)(uintptr_t)t.smem));
    __simtwin_trap_now(SIMTWIN_TRAP_TRAP, buf, file, line);
}
/* The object at host address `a`: 8 bytes inside the block's shared window, aligned. */
PTX_INLINE uint64_t *mb_ptr(const Thread &t, uint64_t a, const char *file, uint32_t line) {
    uint64_t off = a - (uint64_t)(uintptr_t)t.smem;
    if (__builtin_expect(off >= t.smem_size || t.smem_size - off < 8, 0)) {
        char buf[160];
        snprintf(buf, sizeof buf, "mbarrier: the object's address 0x%llx is not in the block's shared memory",
                 (unsigned long long)a);
        __simtwin_trap_now(SIMTWIN_TRAP_TRAP, buf, file, line);
    }
    align_check(a, 8);
    return (uint64_t *)(uintptr_t)a;
}
/* The initialised object's word. */
PTX_INLINE uint64_t mb_word(const Thread &t, uint64_t a, const char *file, uint32_t line) {
    uint64_t w = __atomic_load_n(mb_ptr(t, a, file, line), __ATOMIC_ACQUIRE);
    if (__builtin_expect(!(w & MB_VALID), 0)) mb_fail(t, "used before mbarrier.init or after mbarrier.inval", a, file, line);
    return w;
}
/* mbarrier.init: phase 0, expected and pending counts `count`. */
PTX_INLINE void mb_init(const Thread &t, uint64_t a, uint32_t count, const char *file, uint32_t line) {
    uint64_t *p = mb_ptr(t, a, file, line);
    if (count == 0 || count >= (1u << 20)) mb_fail(t, "init count outside 1 .. 2^20 - 1", a, file, line);
    __atomic_store_n(p, MB_VALID | ((uint64_t)count << 21) | count, __ATOMIC_RELEASE);
}
PTX_INLINE void mb_inval(const Thread &t, uint64_t a, const char *file, uint32_t line) {
    __atomic_store_n(mb_ptr(t, a, file, line), (uint64_t)0, __ATOMIC_RELEASE);
}
/* mbarrier.arrive / arrive_drop (`drop`: the expected count drops by `count` first, for
   this phase and the next ones): the pending count drops by `count`; at zero the phase
   completes (parity flips, pending count = expected count). Returns the state token. */
PTX_INLINE uint64_t mb_arrive(const Thread &t, uint64_t a, uint32_t count, bool drop, bool no_complete, const char *file,
                              uint32_t line) {
    uint64_t *p = mb_ptr(t, a, file, line);
    uint64_t old = __atomic_load_n(p, __ATOMIC_ACQUIRE);
    for (;;) {
        if (!(old & MB_VALID)) mb_fail(t, "arrive on an object used before mbarrier.init or after mbarrier.inval", a, file, line);
        uint64_t pend = old & MB_COUNT, expect = (old >> 21) & MB_COUNT, phase = old & MB_PHASE;
        if (count == 0 || count >= (1u << 20)) mb_fail(t, "arrive count outside 1 .. 2^20 - 1", a, file, line);
        if (count > pend) mb_fail(t, "arrive count larger than the phase's pending count", a, file, line);
        if (drop) {
            if (count > expect) mb_fail(t, "arrive_drop count larger than the expected count", a, file, line);
            expect -= count;
        }
        pend -= count;
        if (pend == 0) {
            if (no_complete) mb_fail(t, "arrive.noComplete would complete the phase (undefined in the PTX ISA)", a, file, line);
            phase ^= MB_PHASE;
            pend = expect;
        }
        uint64_t nw = MB_VALID | phase | (expect << 21) | pend;
        if (__atomic_compare_exchange_n(p, &old, nw, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) return old;
    }
}
/* The phase a wait names, as the parity bit: from a state token, or from phaseParity. */
PTX_INLINE uint64_t mb_state_phase(uint64_t state) { return state & MB_PHASE; }
PTX_INLINE uint64_t mb_parity_phase(uint32_t parity) { return (parity & 1) ? MB_PHASE : 0; }
/* Whether the phase of parity `ph` (the current or the previous phase) has completed. */
PTX_INLINE bool mb_done(const Thread &t, uint64_t a, uint64_t ph, const char *file, uint32_t line) {
    return (mb_word(t, a, file, line) & MB_PHASE) != ph;
}
/* test_wait does not wait: not complete, the thread yields (a polling loop lets the
   others run, as nanosleep does) and gets false. try_wait may suspend the thread for a
   while: it yields once and tests again. */
PTX_INLINE bool mb_test_wait(const Thread &t, uint64_t a, uint64_t ph, simtwin_site_t site, const char *file, uint32_t line) {
    if (mb_done(t, a, ph, file, line)) return true;
    ::__simtwin::rt->yield_now(site);
    return false;
}
PTX_INLINE bool mb_try_wait(const Thread &t, uint64_t a, uint64_t ph, simtwin_site_t site, const char *file, uint32_t line) {
    if (mb_done(t, a, ph, file, line)) return true;
    ::__simtwin::rt->yield_now(site);
    return mb_done(t, a, ph, file, line);
}
PTX_INLINE uint32_t mb_pending_count(uint64_t state) { return (uint32_t)(state & MB_COUNT); }
} // namespace ptx
#endif
