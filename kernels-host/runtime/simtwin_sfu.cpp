/*
 * The special-function unit's approximations (simtwin/sfu.h), one function per PTX form.
 *
 * PLACEHOLDERS: every form below computes the accurate host function (glibc), with the
 * form's flush-to-zero and special-value rules, not the H200's hardware approximation.
 * None is device-exact yet; the PTX translator's list of exact forms (simtwin-ptx
 * `sfu::EXACT`) is empty, so every kernel that uses one is marked "not device-exact".
 * Bit-exact models of the H200 replace these bodies one by one (the device-math issue).
 */
#include <math.h>
#include <stdint.h>
#include <string.h>
#include "simtwin/sfu.h"

namespace {
inline uint32_t bits(float x) { uint32_t u; memcpy(&u, &x, 4); return u; }
inline float from_bits(uint32_t u) { float x; memcpy(&x, &u, 4); return x; }
inline uint64_t bits64(double x) { uint64_t u; memcpy(&u, &x, 8); return u; }
inline double from_bits64(uint64_t u) { double x; memcpy(&x, &u, 8); return x; }

/* A subnormal float becomes a zero of the same sign (PTX .ftz). */
inline float ftz(float x) { return (bits(x) & 0x7f800000u) == 0 ? from_bits(bits(x) & 0x80000000u) : x; }
inline double ftz64(double x) {
    return (bits64(x) & 0x7ff0000000000000ull) == 0 ? from_bits64(bits64(x) & 0x8000000000000000ull) : x;
}

float half_to_float(uint16_t h) {
    uint32_t s = (uint32_t)(h >> 15) << 31, e = (h >> 10) & 0x1f, m = h & 0x3ff;
    if (e == 0x1f) return from_bits(s | 0x7f800000u | (m << 13));
    if (e == 0) {
        float v = ldexpf((float)m, -24);
        return s ? -v : v;
    }
    return from_bits(s | ((e + 112) << 23) | (m << 13));
}
/* Round to nearest even; NaN -> canonical 0x7fff as the device writes it. */
uint16_t float_to_half(float f) {
    uint32_t u = bits(f), s = (u >> 16) & 0x8000;
    if ((u & 0x7fffffffu) > 0x7f800000u) return 0x7fff;
    float a = fabsf(f);
    if (a >= 65520.0f) return (uint16_t)(s | 0x7c00);
    if (a < ldexpf(1.0f, -14)) {
        /* subnormal half: scale to an integer count of 2^-24 and round to nearest even */
        float q = a * 16777216.0f; /* exact */
        float r = nearbyintf(q);
        return (uint16_t)(s | (uint32_t)r);
    }
    uint32_t au = bits(a);
    uint32_t mant = au & 0x7fffff, exp = (au >> 23) - 112;
    uint32_t h = (exp << 10) | (mant >> 13);
    uint32_t rest = mant & 0x1fff;
    if (rest > 0x1000 || (rest == 0x1000 && (h & 1))) ++h;
    return (uint16_t)(s | h);
}
float bf16_to_float(uint16_t h) { return from_bits((uint32_t)h << 16); }
uint16_t float_to_bf16(float f) {
    uint32_t u = bits(f);
    if ((u & 0x7fffffffu) > 0x7f800000u) return 0x7fff;
    uint32_t rest = u & 0xffff, h = u >> 16;
    if (rest > 0x8000 || (rest == 0x8000 && (h & 1))) ++h;
    return (uint16_t)h;
}
inline float ftz_bf16(float x) { return ftz(x); }
} // namespace

extern "C" {
float __simtwin_sfu_ex2_f32(float x) { return exp2f(x); }
float __simtwin_sfu_ex2_ftz_f32(float x) { return ftz(exp2f(ftz(x))); }
float __simtwin_sfu_lg2_f32(float x) { return log2f(x); }
float __simtwin_sfu_lg2_ftz_f32(float x) { return ftz(log2f(ftz(x))); }
float __simtwin_sfu_rcp_f32(float x) { return 1.0f / x; }
float __simtwin_sfu_rcp_ftz_f32(float x) { return ftz(1.0f / ftz(x)); }
double __simtwin_sfu_rcp_ftz_f64(double x) { return ftz64(1.0 / ftz64(x)); }
float __simtwin_sfu_rsqrt_f32(float x) { return (float)(1.0 / sqrt((double)x)); }
float __simtwin_sfu_rsqrt_ftz_f32(float x) { return ftz((float)(1.0 / sqrt((double)ftz(x)))); }
double __simtwin_sfu_rsqrt_f64(double x) { return 1.0 / sqrt(x); }
double __simtwin_sfu_rsqrt_ftz_f64(double x) { return ftz64(1.0 / sqrt(ftz64(x))); }
float __simtwin_sfu_sin_f32(float x) { return sinf(x); }
float __simtwin_sfu_sin_ftz_f32(float x) { return ftz(sinf(ftz(x))); }
float __simtwin_sfu_cos_f32(float x) { return cosf(x); }
float __simtwin_sfu_cos_ftz_f32(float x) { return ftz(cosf(ftz(x))); }
float __simtwin_sfu_tanh_f32(float x) { return tanhf(x); }
float __simtwin_sfu_sqrt_f32(float x) { return sqrtf(x); }
float __simtwin_sfu_sqrt_ftz_f32(float x) { return ftz(sqrtf(ftz(x))); }
float __simtwin_sfu_div_approx_f32(float a, float b) { return a / b; }
float __simtwin_sfu_div_approx_ftz_f32(float a, float b) { return ftz(ftz(a) / ftz(b)); }
float __simtwin_sfu_div_full_f32(float a, float b) { return a / b; }
float __simtwin_sfu_div_full_ftz_f32(float a, float b) { return ftz(ftz(a) / ftz(b)); }
uint16_t __simtwin_sfu_ex2_f16(uint16_t x) { return float_to_half(exp2f(half_to_float(x))); }
uint32_t __simtwin_sfu_ex2_f16x2(uint32_t x) {
    return (uint32_t)__simtwin_sfu_ex2_f16((uint16_t)x) | ((uint32_t)__simtwin_sfu_ex2_f16((uint16_t)(x >> 16)) << 16);
}
uint16_t __simtwin_sfu_ex2_bf16(uint16_t x) { return float_to_bf16(ftz_bf16(exp2f(ftz_bf16(bf16_to_float(x))))); }
uint32_t __simtwin_sfu_ex2_bf16x2(uint32_t x) {
    return (uint32_t)__simtwin_sfu_ex2_bf16((uint16_t)x) | ((uint32_t)__simtwin_sfu_ex2_bf16((uint16_t)(x >> 16)) << 16);
}
uint16_t __simtwin_sfu_tanh_f16(uint16_t x) { return float_to_half(tanhf(half_to_float(x))); }
uint32_t __simtwin_sfu_tanh_f16x2(uint32_t x) {
    return (uint32_t)__simtwin_sfu_tanh_f16((uint16_t)x) | ((uint32_t)__simtwin_sfu_tanh_f16((uint16_t)(x >> 16)) << 16);
}
uint16_t __simtwin_sfu_tanh_bf16(uint16_t x) { return float_to_bf16(tanhf(bf16_to_float(x))); }
uint32_t __simtwin_sfu_tanh_bf16x2(uint32_t x) {
    return (uint32_t)__simtwin_sfu_tanh_bf16((uint16_t)x) | ((uint32_t)__simtwin_sfu_tanh_bf16((uint16_t)(x >> 16)) << 16);
}
}
