/* simtwin shim for <cuda_fp16.h>: IEEE binary16 as real kernels use it. Conversions
   are bit-exact in every rounding mode; + - * / and sqrt are computed in float and
   rounded once to half, which gives the correctly rounded half result (float has more
   than 2*11+2 bits, so the double rounding is innocuous); fma uses an exact double
   sum with round-to-odd before the final rounding. */
#ifndef __SIMTWIN_SHIM_CUDA_FP16_H
#define __SIMTWIN_SHIM_CUDA_FP16_H
#pragma GCC system_header
#include "simtwin/names_push.h"
#include "simtwin/prelude.h"

struct __half;
__SIMTWIN_INLINE __half __simtwin_h_from_bits(unsigned short b);

/* Rounds |v| (finite, >= 0) to binary16 in `mode`, `neg` giving the sign. */
template <class F> __SIMTWIN_INLINE unsigned short __simtwin_f_to_h_bits(F x, int mode) {
    if (x != x) return 0x7fff;
    unsigned short sign = std::signbit(x) ? 0x8000 : 0;
    bool neg = sign != 0;
    F v = neg ? -x : x;
    /* Toward +inf for a positive value / toward -inf for a negative one means "up" in magnitude. */
    bool up = (mode == __SIMTWIN_RU && !neg) || (mode == __SIMTWIN_RD && neg);
    bool down = mode == __SIMTWIN_RZ || (mode == __SIMTWIN_RU && neg) || (mode == __SIMTWIN_RD && !neg);
    if (std::isinf(v)) return (unsigned short)(sign | 0x7c00);
    if (v == 0) return sign;
    int k;
    std::frexp(v, &k);
    int e = k - 1; /* v in [2^e, 2^(e+1)) */
    if (e >= 16) return (unsigned short)(sign | (down ? 0x7bff : 0x7c00));
    int ulp_exp = e < -14 ? -24 : e - 10;
    F q = std::ldexp(v, -ulp_exp); /* exact: scaling by a power of two, q < 2^11 */
    F n = std::floor(q), frac = q - n;
    unsigned int m = (unsigned int)n;
    if (mode == __SIMTWIN_RN) {
        if (frac > (F)0.5 || (frac == (F)0.5 && (m & 1))) ++m;
    } else if (up && frac != 0) {
        ++m;
    }
    unsigned int bits;
    if (ulp_exp == -24) bits = m; /* subnormal; m == 1024 encodes the smallest normal */
    else bits = ((unsigned int)(e + 15) << 10) + (m - 1024); /* m == 2048 carries into the exponent */
    return (unsigned short)(sign | bits);
}
__SIMTWIN_INLINE float __simtwin_h_to_f(unsigned short h) {
    unsigned int s = (h & 0x8000u) << 16, e = (h >> 10) & 0x1f, m = h & 0x3ff;
    if (e == 31) return __simtwin_bitcast<float>(s | 0x7f800000u | (m << 13));
    float v = e == 0 ? std::ldexp((float)m, -24) : std::ldexp((float)(m | 0x400), (int)e - 25);
    return s ? -v : v;
}

struct __half {
    unsigned short __x;
    __half() = default;
    __half(float f) : __x(__simtwin_f_to_h_bits(f, __SIMTWIN_RN)) {}
    __half(double d) : __x(__simtwin_f_to_h_bits(d, __SIMTWIN_RN)) {}
    __half(int i) : __x(__simtwin_f_to_h_bits((double)i, __SIMTWIN_RN)) {}
    __half(unsigned int i) : __x(__simtwin_f_to_h_bits((double)i, __SIMTWIN_RN)) {}
    operator float() const { return __simtwin_h_to_f(__x); }
};
struct __half2 { __half x, y; };
typedef __half half;
typedef __half2 half2;
typedef struct { unsigned short x; } __half_raw;

__SIMTWIN_INLINE __half __simtwin_h_from_bits(unsigned short b) { __half h; h.__x = b; return h; }
__SIMTWIN_INLINE unsigned short __half_as_ushort(__half h) { return h.__x; }
__SIMTWIN_INLINE short __half_as_short(__half h) { return (short)h.__x; }
__SIMTWIN_INLINE __half __ushort_as_half(unsigned short b) { return __simtwin_h_from_bits(b); }
__SIMTWIN_INLINE __half __short_as_half(short b) { return __simtwin_h_from_bits((unsigned short)b); }

__SIMTWIN_INLINE __half __float2half(float f) { return __simtwin_h_from_bits(__simtwin_f_to_h_bits(f, __SIMTWIN_RN)); }
__SIMTWIN_INLINE __half __float2half_rn(float f) { return __simtwin_h_from_bits(__simtwin_f_to_h_bits(f, __SIMTWIN_RN)); }
__SIMTWIN_INLINE __half __float2half_rz(float f) { return __simtwin_h_from_bits(__simtwin_f_to_h_bits(f, __SIMTWIN_RZ)); }
__SIMTWIN_INLINE __half __float2half_ru(float f) { return __simtwin_h_from_bits(__simtwin_f_to_h_bits(f, __SIMTWIN_RU)); }
__SIMTWIN_INLINE __half __float2half_rd(float f) { return __simtwin_h_from_bits(__simtwin_f_to_h_bits(f, __SIMTWIN_RD)); }
__SIMTWIN_INLINE __half __double2half(double d) { return __simtwin_h_from_bits(__simtwin_f_to_h_bits(d, __SIMTWIN_RN)); }
__SIMTWIN_INLINE float __half2float(__half h) { return __simtwin_h_to_f(h.__x); }
__SIMTWIN_INLINE float __low2float(__half2 h) { return __half2float(h.x); }
__SIMTWIN_INLINE float __high2float(__half2 h) { return __half2float(h.y); }
__SIMTWIN_INLINE __half2 __halves2half2(__half a, __half b) { __half2 r; r.x = a; r.y = b; return r; }
__SIMTWIN_INLINE __half2 __floats2half2_rn(float a, float b) { return __halves2half2(__float2half_rn(a), __float2half_rn(b)); }
__SIMTWIN_INLINE __half2 __float2half2_rn(float a) { return __floats2half2_rn(a, a); }
__SIMTWIN_INLINE float2 __half22float2(__half2 h) { return make_float2(__half2float(h.x), __half2float(h.y)); }
__SIMTWIN_INLINE __half2 __float22half2_rn(float2 f) { return __floats2half2_rn(f.x, f.y); }
__SIMTWIN_INLINE __half __low2half(__half2 h) { return h.x; }
__SIMTWIN_INLINE __half __high2half(__half2 h) { return h.y; }

/* Arithmetic: exact float op rounded once to half. */
__SIMTWIN_INLINE __half __hadd(__half a, __half b) { return __float2half_rn(__half2float(a) + __half2float(b)); }
__SIMTWIN_INLINE __half __hsub(__half a, __half b) { return __float2half_rn(__half2float(a) - __half2float(b)); }
__SIMTWIN_INLINE __half __hmul(__half a, __half b) { return __float2half_rn(__half2float(a) * __half2float(b)); }
__SIMTWIN_INLINE __half __hdiv(__half a, __half b) { return __float2half_rn(__half2float(a) / __half2float(b)); }
__SIMTWIN_INLINE __half hsqrt(__half a) { return __float2half_rn(sqrtf(__half2float(a))); }
__SIMTWIN_INLINE __half __hneg(__half a) { return __simtwin_h_from_bits((unsigned short)(a.__x ^ 0x8000)); }
__SIMTWIN_INLINE __half __habs(__half a) { return __simtwin_h_from_bits((unsigned short)(a.__x & 0x7fff)); }
__SIMTWIN_INLINE __half __hfma(__half a, __half b, __half c) {
    double p = (double)__half2float(a) * __half2float(b); /* exact: 22 bits */
    double cc = __half2float(c), s = p + cc, bb = s - p, e = (p - (s - bb)) + (cc - bb); /* TwoSum */
    if (e != 0 && !(__simtwin_bitcast<unsigned long long>(s) & 1))        /* round to odd */
        s = std::nextafter(s, e > 0 ? HUGE_VAL : -HUGE_VAL);
    return __simtwin_h_from_bits(__simtwin_f_to_h_bits(s, __SIMTWIN_RN));
}
__SIMTWIN_INLINE bool __hisnan(__half a) { return (a.__x & 0x7fff) > 0x7c00; }
__SIMTWIN_INLINE bool __hisinf(__half a) { return (a.__x & 0x7fff) == 0x7c00; }
__SIMTWIN_INLINE bool __heq(__half a, __half b) { return __half2float(a) == __half2float(b); }
__SIMTWIN_INLINE bool __hne(__half a, __half b) { return __half2float(a) != __half2float(b); }
__SIMTWIN_INLINE bool __hlt(__half a, __half b) { return __half2float(a) < __half2float(b); }
__SIMTWIN_INLINE bool __hle(__half a, __half b) { return __half2float(a) <= __half2float(b); }
__SIMTWIN_INLINE bool __hgt(__half a, __half b) { return __half2float(a) > __half2float(b); }
__SIMTWIN_INLINE bool __hge(__half a, __half b) { return __half2float(a) >= __half2float(b); }
__SIMTWIN_INLINE __half __hmax(__half a, __half b) { return __float2half_rn(fmaxf(__half2float(a), __half2float(b))); }
__SIMTWIN_INLINE __half __hmin(__half a, __half b) { return __float2half_rn(fminf(__half2float(a), __half2float(b))); }
__SIMTWIN_INLINE __half2 __hadd2(__half2 a, __half2 b) { return __halves2half2(__hadd(a.x, b.x), __hadd(a.y, b.y)); }
__SIMTWIN_INLINE __half2 __hsub2(__half2 a, __half2 b) { return __halves2half2(__hsub(a.x, b.x), __hsub(a.y, b.y)); }
__SIMTWIN_INLINE __half2 __hmul2(__half2 a, __half2 b) { return __halves2half2(__hmul(a.x, b.x), __hmul(a.y, b.y)); }
__SIMTWIN_INLINE __half2 __h2div(__half2 a, __half2 b) { return __halves2half2(__hdiv(a.x, b.x), __hdiv(a.y, b.y)); }
__SIMTWIN_INLINE __half2 __hfma2(__half2 a, __half2 b, __half2 c) { return __halves2half2(__hfma(a.x, b.x, c.x), __hfma(a.y, b.y, c.y)); }
__SIMTWIN_INLINE __half operator+(__half a, __half b) { return __hadd(a, b); }
__SIMTWIN_INLINE __half operator-(__half a, __half b) { return __hsub(a, b); }
__SIMTWIN_INLINE __half operator*(__half a, __half b) { return __hmul(a, b); }
__SIMTWIN_INLINE __half operator/(__half a, __half b) { return __hdiv(a, b); }
__SIMTWIN_INLINE __half operator-(__half a) { return __hneg(a); }
__SIMTWIN_INLINE __half &operator+=(__half &a, __half b) { return a = __hadd(a, b); }
__SIMTWIN_INLINE __half &operator-=(__half &a, __half b) { return a = __hsub(a, b); }
__SIMTWIN_INLINE __half &operator*=(__half &a, __half b) { return a = __hmul(a, b); }
__SIMTWIN_INLINE __half &operator/=(__half &a, __half b) { return a = __hdiv(a, b); }
__SIMTWIN_INLINE bool operator==(__half a, __half b) { return __heq(a, b); }
__SIMTWIN_INLINE bool operator!=(__half a, __half b) { return __hne(a, b); }
__SIMTWIN_INLINE bool operator<(__half a, __half b) { return __hlt(a, b); }
__SIMTWIN_INLINE bool operator<=(__half a, __half b) { return __hle(a, b); }
__SIMTWIN_INLINE bool operator>(__half a, __half b) { return __hgt(a, b); }
__SIMTWIN_INLINE bool operator>=(__half a, __half b) { return __hge(a, b); }
/* Shuffles of half values move their 16-bit pattern inside a 32-bit word. */
__SIMTWIN_INLINE __half __shfl_sync(unsigned m, __half v, int l, int w = 32) {
    return __simtwin_h_from_bits((unsigned short)__shfl_sync(m, (unsigned int)v.__x, l, w)); }
__SIMTWIN_INLINE __half __shfl_xor_sync(unsigned m, __half v, int l, int w = 32) {
    return __simtwin_h_from_bits((unsigned short)__shfl_xor_sync(m, (unsigned int)v.__x, l, w)); }
__SIMTWIN_INLINE __half __shfl_down_sync(unsigned m, __half v, unsigned d, int w = 32) {
    return __simtwin_h_from_bits((unsigned short)__shfl_down_sync(m, (unsigned int)v.__x, d, w)); }
__SIMTWIN_INLINE __half __shfl_up_sync(unsigned m, __half v, unsigned d, int w = 32) {
    return __simtwin_h_from_bits((unsigned short)__shfl_up_sync(m, (unsigned int)v.__x, d, w)); }
#include "simtwin/names_pop.h"
#endif
