/* Device intrinsics mapped to the exact host operation each one names.
   _rn forms are the plain IEEE operation (the host runs in round-to-nearest and is
   compiled with -ffp-contract=off, so nothing fuses); directed forms (_rz/_ru/_rd) call
   the per-library runtime, which switches the host rounding mode around the one
   operation, so they are exact including overflow, subnormals, infinities and NaN. */
#ifndef __SIMTWIN_INTRINSICS_H
#define __SIMTWIN_INTRINSICS_H
#pragma GCC system_header

/* ---- bit casts -------------------------------------------------------------------- */
template <class To, class From> __SIMTWIN_INLINE To __simtwin_bitcast(From v) {
    static_assert(sizeof(To) == sizeof(From), "bit cast of different sizes");
    To r; memcpy(&r, &v, sizeof r); return r;
}
__SIMTWIN_INLINE int __float_as_int(float x) { return __simtwin_bitcast<int>(x); }
__SIMTWIN_INLINE unsigned int __float_as_uint(float x) { return __simtwin_bitcast<unsigned int>(x); }
__SIMTWIN_INLINE float __int_as_float(int x) { return __simtwin_bitcast<float>(x); }
__SIMTWIN_INLINE float __uint_as_float(unsigned int x) { return __simtwin_bitcast<float>(x); }
__SIMTWIN_INLINE long long __double_as_longlong(double x) { return __simtwin_bitcast<long long>(x); }
__SIMTWIN_INLINE double __longlong_as_double(long long x) { return __simtwin_bitcast<double>(x); }
__SIMTWIN_INLINE int __double2hiint(double x) { return (int)(__simtwin_bitcast<unsigned long long>(x) >> 32); }
__SIMTWIN_INLINE int __double2loint(double x) { return (int)(unsigned int)__simtwin_bitcast<unsigned long long>(x); }
__SIMTWIN_INLINE double __hiloint2double(int hi, int lo) {
    return __simtwin_bitcast<double>(((unsigned long long)(unsigned int)hi << 32) | (unsigned int)lo);
}

/* ---- single precision arithmetic --------------------------------------------------- */
#define __SIMTWIN_F2(NAME, OP, EXPR) \
    __SIMTWIN_INLINE float NAME##_rn(float a, float b) { return EXPR; } \
    __SIMTWIN_INLINE float NAME##_rz(float a, float b) { return __simtwin_f_op(OP, __SIMTWIN_RZ, a, b, 0.f); } \
    __SIMTWIN_INLINE float NAME##_ru(float a, float b) { return __simtwin_f_op(OP, __SIMTWIN_RU, a, b, 0.f); } \
    __SIMTWIN_INLINE float NAME##_rd(float a, float b) { return __simtwin_f_op(OP, __SIMTWIN_RD, a, b, 0.f); }
__SIMTWIN_F2(__fadd, __SIMTWIN_OP_ADD, a + b)
__SIMTWIN_F2(__fsub, __SIMTWIN_OP_SUB, a - b)
__SIMTWIN_F2(__fmul, __SIMTWIN_OP_MUL, a * b)
__SIMTWIN_F2(__fdiv, __SIMTWIN_OP_DIV, a / b)
#undef __SIMTWIN_F2
#define __SIMTWIN_F1(NAME, OP, EXPR) \
    __SIMTWIN_INLINE float NAME##_rn(float a) { return EXPR; } \
    __SIMTWIN_INLINE float NAME##_rz(float a) { return __simtwin_f_op(OP, __SIMTWIN_RZ, a, 0.f, 0.f); } \
    __SIMTWIN_INLINE float NAME##_ru(float a) { return __simtwin_f_op(OP, __SIMTWIN_RU, a, 0.f, 0.f); } \
    __SIMTWIN_INLINE float NAME##_rd(float a) { return __simtwin_f_op(OP, __SIMTWIN_RD, a, 0.f, 0.f); }
__SIMTWIN_F1(__fsqrt, __SIMTWIN_OP_SQRT, __builtin_sqrtf(a))
__SIMTWIN_F1(__frcp, __SIMTWIN_OP_RCP, 1.0f / a)
#undef __SIMTWIN_F1
__SIMTWIN_INLINE float __fmaf_rn(float a, float b, float c) { return __builtin_fmaf(a, b, c); }
__SIMTWIN_INLINE float __fmaf_rz(float a, float b, float c) { return __simtwin_f_op(__SIMTWIN_OP_FMA, __SIMTWIN_RZ, a, b, c); }
__SIMTWIN_INLINE float __fmaf_ru(float a, float b, float c) { return __simtwin_f_op(__SIMTWIN_OP_FMA, __SIMTWIN_RU, a, b, c); }
__SIMTWIN_INLINE float __fmaf_rd(float a, float b, float c) { return __simtwin_f_op(__SIMTWIN_OP_FMA, __SIMTWIN_RD, a, b, c); }
__SIMTWIN_INLINE float __fmaf_ieee_rn(float a, float b, float c) { return __builtin_fmaf(a, b, c); }
/* Correctly rounded 1/sqrt(x) (exact check in the runtime). */
__SIMTWIN_INLINE float __frsqrt_rn(float a) { return __simtwin_frsqrt_rn(a); }

/* ---- double precision arithmetic --------------------------------------------------- */
#define __SIMTWIN_D2(NAME, OP, EXPR) \
    __SIMTWIN_INLINE double NAME##_rn(double a, double b) { return EXPR; } \
    __SIMTWIN_INLINE double NAME##_rz(double a, double b) { return __simtwin_d_op(OP, __SIMTWIN_RZ, a, b, 0.0); } \
    __SIMTWIN_INLINE double NAME##_ru(double a, double b) { return __simtwin_d_op(OP, __SIMTWIN_RU, a, b, 0.0); } \
    __SIMTWIN_INLINE double NAME##_rd(double a, double b) { return __simtwin_d_op(OP, __SIMTWIN_RD, a, b, 0.0); }
__SIMTWIN_D2(__dadd, __SIMTWIN_OP_ADD, a + b)
__SIMTWIN_D2(__dsub, __SIMTWIN_OP_SUB, a - b)
__SIMTWIN_D2(__dmul, __SIMTWIN_OP_MUL, a * b)
__SIMTWIN_D2(__ddiv, __SIMTWIN_OP_DIV, a / b)
#undef __SIMTWIN_D2
#define __SIMTWIN_D1(NAME, OP, EXPR) \
    __SIMTWIN_INLINE double NAME##_rn(double a) { return EXPR; } \
    __SIMTWIN_INLINE double NAME##_rz(double a) { return __simtwin_d_op(OP, __SIMTWIN_RZ, a, 0.0, 0.0); } \
    __SIMTWIN_INLINE double NAME##_ru(double a) { return __simtwin_d_op(OP, __SIMTWIN_RU, a, 0.0, 0.0); } \
    __SIMTWIN_INLINE double NAME##_rd(double a) { return __simtwin_d_op(OP, __SIMTWIN_RD, a, 0.0, 0.0); }
__SIMTWIN_D1(__dsqrt, __SIMTWIN_OP_SQRT, __builtin_sqrt(a))
__SIMTWIN_D1(__drcp, __SIMTWIN_OP_RCP, 1.0 / a)
#undef __SIMTWIN_D1
__SIMTWIN_INLINE double __fma_rn(double a, double b, double c) { return __builtin_fma(a, b, c); }
__SIMTWIN_INLINE double __fma_rz(double a, double b, double c) { return __simtwin_d_op(__SIMTWIN_OP_FMA, __SIMTWIN_RZ, a, b, c); }
__SIMTWIN_INLINE double __fma_ru(double a, double b, double c) { return __simtwin_d_op(__SIMTWIN_OP_FMA, __SIMTWIN_RU, a, b, c); }
__SIMTWIN_INLINE double __fma_rd(double a, double b, double c) { return __simtwin_d_op(__SIMTWIN_OP_FMA, __SIMTWIN_RD, a, b, c); }

/* ---- float/double -> integer: round as named, then saturate as the device does:
        NaN -> 0, values past the range -> the range's end. ---------------------------- */
template <class I, class F> __SIMTWIN_INLINE I __simtwin_f2i_sat(F r) {
    /* r is already an integral value (or inf/NaN). Bounds are exact powers of two. NaN
       gives what the H200 gives (simtwin/device_values.h). */
    if (r != r)
        return (I)(sizeof(I) == 8 ? __SIMTWIN_DV_NAN_TO_64
                                  : sizeof(F) == 8 ? __SIMTWIN_DV_NAN_F64_TO_32 : __SIMTWIN_DV_NAN_F32_TO_32);
    const F lo = std::is_signed<I>::value ? -(F)((unsigned long long)1 << (sizeof(I) * 8 - 1)) : (F)0;
    const F hi = std::is_signed<I>::value ? (F)((unsigned long long)1 << (sizeof(I) * 8 - 1))
                                          : (F)2 * (F)((unsigned long long)1 << (sizeof(I) * 8 - 1));
    if (r < lo) return std::numeric_limits<I>::min();
    if (r >= hi) return std::numeric_limits<I>::max();
    return (I)r;
}
#define __SIMTWIN_F2I(PFX, F, I, RN, RZ, RU, RD) \
    __SIMTWIN_INLINE I PFX##_rn(F x) { return __simtwin_f2i_sat<I>(RN(x)); } \
    __SIMTWIN_INLINE I PFX##_rz(F x) { return __simtwin_f2i_sat<I>(RZ(x)); } \
    __SIMTWIN_INLINE I PFX##_ru(F x) { return __simtwin_f2i_sat<I>(RU(x)); } \
    __SIMTWIN_INLINE I PFX##_rd(F x) { return __simtwin_f2i_sat<I>(RD(x)); }
#define __SIMTWIN_F2I_F(PFX, I) __SIMTWIN_F2I(PFX, float, I, __builtin_roundevenf, __builtin_truncf, __builtin_ceilf, __builtin_floorf)
#define __SIMTWIN_F2I_D(PFX, I) __SIMTWIN_F2I(PFX, double, I, __builtin_roundeven, __builtin_trunc, __builtin_ceil, __builtin_floor)
__SIMTWIN_F2I_F(__float2int, int)
__SIMTWIN_F2I_F(__float2uint, unsigned int)
__SIMTWIN_F2I_F(__float2ll, long long)
__SIMTWIN_F2I_F(__float2ull, unsigned long long)
__SIMTWIN_F2I_D(__double2int, int)
__SIMTWIN_F2I_D(__double2uint, unsigned int)
__SIMTWIN_F2I_D(__double2ll, long long)
__SIMTWIN_F2I_D(__double2ull, unsigned long long)
#undef __SIMTWIN_F2I_F
#undef __SIMTWIN_F2I_D
#undef __SIMTWIN_F2I
__SIMTWIN_INLINE int __float2int(float x) { return __float2int_rz(x); }

/* ---- integer -> float/double, and double -> float ---------------------------------- */
#define __SIMTWIN_I2F(PFX, I, KIND) \
    __SIMTWIN_INLINE float PFX##_rn(I x) { return __simtwin_i2f(KIND, __SIMTWIN_RN, (uint64_t)x); } \
    __SIMTWIN_INLINE float PFX##_rz(I x) { return __simtwin_i2f(KIND, __SIMTWIN_RZ, (uint64_t)x); } \
    __SIMTWIN_INLINE float PFX##_ru(I x) { return __simtwin_i2f(KIND, __SIMTWIN_RU, (uint64_t)x); } \
    __SIMTWIN_INLINE float PFX##_rd(I x) { return __simtwin_i2f(KIND, __SIMTWIN_RD, (uint64_t)x); }
__SIMTWIN_I2F(__int2float, int, __SIMTWIN_I32)
__SIMTWIN_I2F(__uint2float, unsigned int, __SIMTWIN_U32)
__SIMTWIN_I2F(__ll2float, long long, __SIMTWIN_I64)
__SIMTWIN_I2F(__ull2float, unsigned long long, __SIMTWIN_U64)
#undef __SIMTWIN_I2F
#define __SIMTWIN_I2D(PFX, I, KIND) \
    __SIMTWIN_INLINE double PFX##_rn(I x) { return __simtwin_i2d(KIND, __SIMTWIN_RN, (uint64_t)x); } \
    __SIMTWIN_INLINE double PFX##_rz(I x) { return __simtwin_i2d(KIND, __SIMTWIN_RZ, (uint64_t)x); } \
    __SIMTWIN_INLINE double PFX##_ru(I x) { return __simtwin_i2d(KIND, __SIMTWIN_RU, (uint64_t)x); } \
    __SIMTWIN_INLINE double PFX##_rd(I x) { return __simtwin_i2d(KIND, __SIMTWIN_RD, (uint64_t)x); }
__SIMTWIN_I2D(__ll2double, long long, __SIMTWIN_I64)
__SIMTWIN_I2D(__ull2double, unsigned long long, __SIMTWIN_U64)
#undef __SIMTWIN_I2D
/* 32-bit integers are exact in double: one rounding-free form each. */
__SIMTWIN_INLINE double __int2double_rn(int x) { return (double)x; }
__SIMTWIN_INLINE double __uint2double_rn(unsigned int x) { return (double)x; }
__SIMTWIN_INLINE float __double2float_rn(double x) { return (float)x; }
__SIMTWIN_INLINE float __double2float_rz(double x) { return __simtwin_d2f(__SIMTWIN_RZ, x); }
__SIMTWIN_INLINE float __double2float_ru(double x) { return __simtwin_d2f(__SIMTWIN_RU, x); }
__SIMTWIN_INLINE float __double2float_rd(double x) { return __simtwin_d2f(__SIMTWIN_RD, x); }

/* ---- integer intrinsics ------------------------------------------------------------ */
__SIMTWIN_INLINE int __popc(unsigned int x) { return __builtin_popcount(x); }
__SIMTWIN_INLINE int __popcll(unsigned long long x) { return __builtin_popcountll(x); }
__SIMTWIN_INLINE int __clz(int x) { return x == 0 ? 32 : __builtin_clz((unsigned int)x); }
__SIMTWIN_INLINE int __clzll(long long x) { return x == 0 ? 64 : __builtin_clzll((unsigned long long)x); }
__SIMTWIN_INLINE int __ffs(int x) { return __builtin_ffs(x); }
__SIMTWIN_INLINE int __ffsll(long long x) { return __builtin_ffsll(x); }
__SIMTWIN_INLINE unsigned int __brev(unsigned int x) {
    x = ((x >> 1) & 0x55555555u) | ((x & 0x55555555u) << 1);
    x = ((x >> 2) & 0x33333333u) | ((x & 0x33333333u) << 2);
    x = ((x >> 4) & 0x0f0f0f0fu) | ((x & 0x0f0f0f0fu) << 4);
    return __builtin_bswap32(x);
}
__SIMTWIN_INLINE unsigned long long __brevll(unsigned long long x) {
    return ((unsigned long long)__brev((unsigned int)x) << 32) | __brev((unsigned int)(x >> 32));
}
/* Byte i of the result is byte (s >> 4i) & 7 of the 8-byte value {y:x}. */
__SIMTWIN_INLINE unsigned int __byte_perm(unsigned int x, unsigned int y, unsigned int s) {
    unsigned long long v = ((unsigned long long)y << 32) | x;
    unsigned int r = 0;
    for (int i = 0; i < 4; ++i) r |= (unsigned int)((v >> (8 * ((s >> (4 * i)) & 7))) & 0xff) << (8 * i);
    return r;
}
/* Funnel shifts of the 64-bit value {hi:lo}: _l/_r take the shift mod 32, _lc/_rc clamp it to 32. */
__SIMTWIN_INLINE unsigned int __funnelshift_l(unsigned int lo, unsigned int hi, unsigned int s) {
    unsigned long long v = ((unsigned long long)hi << 32) | lo; return (unsigned int)((v << (s & 31)) >> 32);
}
__SIMTWIN_INLINE unsigned int __funnelshift_lc(unsigned int lo, unsigned int hi, unsigned int s) {
    unsigned long long v = ((unsigned long long)hi << 32) | lo; return (unsigned int)((v << (s > 32 ? 32 : s)) >> 32);
}
__SIMTWIN_INLINE unsigned int __funnelshift_r(unsigned int lo, unsigned int hi, unsigned int s) {
    unsigned long long v = ((unsigned long long)hi << 32) | lo; return (unsigned int)(v >> (s & 31));
}
__SIMTWIN_INLINE unsigned int __funnelshift_rc(unsigned int lo, unsigned int hi, unsigned int s) {
    unsigned long long v = ((unsigned long long)hi << 32) | lo; return (unsigned int)(v >> (s > 32 ? 32 : s));
}
__SIMTWIN_INLINE unsigned int __umulhi(unsigned int a, unsigned int b) { return (unsigned int)(((unsigned long long)a * b) >> 32); }
__SIMTWIN_INLINE int __mulhi(int a, int b) { return (int)(((long long)a * b) >> 32); }
__SIMTWIN_INLINE unsigned long long __umul64hi(unsigned long long a, unsigned long long b) {
    return (unsigned long long)(((unsigned __int128)a * b) >> 64);
}
__SIMTWIN_INLINE long long __mul64hi(long long a, long long b) { return (long long)(((__int128)a * b) >> 64); }
/* Low 32 bits of the product of the (sign-extended / zero-extended) low 24 bits. */
__SIMTWIN_INLINE int __mul24(int a, int b) {
    long long x = (long long)((a & 0xffffff) ^ 0x800000) - 0x800000, y = (long long)((b & 0xffffff) ^ 0x800000) - 0x800000;
    return (int)(unsigned int)(unsigned long long)(x * y);
}
__SIMTWIN_INLINE unsigned int __umul24(unsigned int a, unsigned int b) {
    return (unsigned int)((unsigned long long)(a & 0xffffffu) * (b & 0xffffffu));
}
__SIMTWIN_INLINE unsigned int __sad(int x, int y, unsigned int z) {
    return (unsigned int)(x > y ? (long long)x - y : (long long)y - x) + z;
}
__SIMTWIN_INLINE unsigned int __usad(unsigned int x, unsigned int y, unsigned int z) { return (x > y ? x - y : y - x) + z; }
__SIMTWIN_INLINE int __hadd(int x, int y) { return (int)(((long long)x + y) >> 1); }
__SIMTWIN_INLINE int __rhadd(int x, int y) { return (int)(((long long)x + y + 1) >> 1); }
__SIMTWIN_INLINE unsigned int __uhadd(unsigned int x, unsigned int y) { return (unsigned int)(((unsigned long long)x + y) >> 1); }
__SIMTWIN_INLINE unsigned int __urhadd(unsigned int x, unsigned int y) { return (unsigned int)(((unsigned long long)x + y + 1) >> 1); }
/* Four-way byte dot products with 32-bit accumulate (wrapping, as the device's). */
__SIMTWIN_INLINE int __dp4a(int a, int b, int c) {
    unsigned int r = (unsigned int)c;
    for (int i = 0; i < 4; ++i) r += (unsigned int)((int)(signed char)(a >> 8 * i) * (int)(signed char)(b >> 8 * i));
    return (int)r;
}
__SIMTWIN_INLINE unsigned int __dp4a(unsigned int a, unsigned int b, unsigned int c) {
    for (int i = 0; i < 4; ++i) c += ((a >> 8 * i) & 0xff) * ((b >> 8 * i) & 0xff);
    return c;
}

/* ---- min/max as the CUDA headers overload them ------------------------------------- */
__SIMTWIN_INLINE int min(int a, int b) { return a < b ? a : b; }
__SIMTWIN_INLINE int max(int a, int b) { return a > b ? a : b; }
__SIMTWIN_INLINE unsigned int min(unsigned int a, unsigned int b) { return a < b ? a : b; }
__SIMTWIN_INLINE unsigned int max(unsigned int a, unsigned int b) { return a > b ? a : b; }
__SIMTWIN_INLINE unsigned int min(int a, unsigned int b) { return min((unsigned int)a, b); }
__SIMTWIN_INLINE unsigned int min(unsigned int a, int b) { return min(a, (unsigned int)b); }
__SIMTWIN_INLINE unsigned int max(int a, unsigned int b) { return max((unsigned int)a, b); }
__SIMTWIN_INLINE unsigned int max(unsigned int a, int b) { return max(a, (unsigned int)b); }
__SIMTWIN_INLINE long min(long a, long b) { return a < b ? a : b; }
__SIMTWIN_INLINE long max(long a, long b) { return a > b ? a : b; }
__SIMTWIN_INLINE unsigned long min(unsigned long a, unsigned long b) { return a < b ? a : b; }
__SIMTWIN_INLINE unsigned long max(unsigned long a, unsigned long b) { return a > b ? a : b; }
__SIMTWIN_INLINE long long min(long long a, long long b) { return a < b ? a : b; }
__SIMTWIN_INLINE long long max(long long a, long long b) { return a > b ? a : b; }
__SIMTWIN_INLINE unsigned long long min(unsigned long long a, unsigned long long b) { return a < b ? a : b; }
__SIMTWIN_INLINE unsigned long long max(unsigned long long a, unsigned long long b) { return a > b ? a : b; }
__SIMTWIN_INLINE float min(float a, float b) { return fminf(a, b); }
__SIMTWIN_INLINE float max(float a, float b) { return fmaxf(a, b); }
__SIMTWIN_INLINE double min(double a, double b) { return fmin(a, b); }
__SIMTWIN_INLINE double max(double a, double b) { return fmax(a, b); }
__SIMTWIN_INLINE unsigned int umin(unsigned int a, unsigned int b) { return a < b ? a : b; }
__SIMTWIN_INLINE unsigned int umax(unsigned int a, unsigned int b) { return a > b ? a : b; }
__SIMTWIN_INLINE long long llmin(long long a, long long b) { return a < b ? a : b; }
__SIMTWIN_INLINE long long llmax(long long a, long long b) { return a > b ? a : b; }
__SIMTWIN_INLINE unsigned long long ullmin(unsigned long long a, unsigned long long b) { return a < b ? a : b; }
__SIMTWIN_INLINE unsigned long long ullmax(unsigned long long a, unsigned long long b) { return a > b ? a : b; }

#ifdef __SIMTWIN_DEVICE_MATH
/* ---- math functions and fast intrinsics: libdevice's, translated (kernels-host
        src/libdevice.rs), linked into the library for the build's nvcc flags. The plain
        libm names (expf, sin, ...) are defined there too, hidden, so the twin's calls bind
        to them rather than to the host's libm. ---------------------------------------- */
extern "C" {
#define __SIMTWIN_LD1(T, N) T __simtwin_ld_##N(T) __SIMTWIN_HIDDEN;
#define __SIMTWIN_LD2(T, N) T __simtwin_ld_##N(T, T) __SIMTWIN_HIDDEN;
#define __SIMTWIN_LD3(T, N) T __simtwin_ld_##N(T, T, T) __SIMTWIN_HIDDEN;
__SIMTWIN_LD1(float, __expf) __SIMTWIN_LD1(float, __exp10f) __SIMTWIN_LD1(float, __logf) __SIMTWIN_LD1(float, __log2f)
__SIMTWIN_LD1(float, __log10f) __SIMTWIN_LD1(float, __sinf) __SIMTWIN_LD1(float, __cosf) __SIMTWIN_LD1(float, __tanf)
__SIMTWIN_LD2(float, __powf) __SIMTWIN_LD2(float, __fdividef)
void __simtwin_ld___sincosf(float, float *, float *) __SIMTWIN_HIDDEN;
__SIMTWIN_LD1(float, rsqrtf) __SIMTWIN_LD1(float, rcbrtf) __SIMTWIN_LD1(float, sinpif) __SIMTWIN_LD1(float, cospif)
__SIMTWIN_LD1(float, normcdff) __SIMTWIN_LD1(float, normcdfinvf) __SIMTWIN_LD1(float, erfinvf) __SIMTWIN_LD1(float, erfcinvf)
__SIMTWIN_LD1(float, erfcxf) __SIMTWIN_LD2(float, fdividef) __SIMTWIN_LD2(float, rhypotf) __SIMTWIN_LD3(float, norm3df)
__SIMTWIN_LD3(float, rnorm3df) __SIMTWIN_LD1(float, sqrtf)
void __simtwin_ld_sincospif(float, float *, float *) __SIMTWIN_HIDDEN;
__SIMTWIN_LD1(double, rsqrt) __SIMTWIN_LD1(double, rcbrt) __SIMTWIN_LD1(double, sinpi) __SIMTWIN_LD1(double, cospi)
__SIMTWIN_LD1(double, normcdf) __SIMTWIN_LD1(double, normcdfinv) __SIMTWIN_LD1(double, erfinv) __SIMTWIN_LD1(double, erfcinv)
__SIMTWIN_LD1(double, erfcx) __SIMTWIN_LD2(double, rhypot) __SIMTWIN_LD3(double, norm3d) __SIMTWIN_LD3(double, rnorm3d)
void __simtwin_ld_sincospi(double, double *, double *) __SIMTWIN_HIDDEN;
#undef __SIMTWIN_LD1
#undef __SIMTWIN_LD2
#undef __SIMTWIN_LD3
}
/* glibc declares __expf & co. (extern "C", noexcept) as its own aliases of the libm
   functions; these definitions agree with those declarations. */
#define __SIMTWIN_GLIBC_ALIAS extern "C" inline __attribute__((always_inline))
__SIMTWIN_GLIBC_ALIAS float __expf(float x) noexcept { return __simtwin_ld___expf(x); }
__SIMTWIN_GLIBC_ALIAS float __exp10f(float x) noexcept { return __simtwin_ld___exp10f(x); }
__SIMTWIN_GLIBC_ALIAS float __logf(float x) noexcept { return __simtwin_ld___logf(x); }
__SIMTWIN_GLIBC_ALIAS float __log2f(float x) noexcept { return __simtwin_ld___log2f(x); }
__SIMTWIN_GLIBC_ALIAS float __log10f(float x) noexcept { return __simtwin_ld___log10f(x); }
__SIMTWIN_GLIBC_ALIAS float __sinf(float x) noexcept { return __simtwin_ld___sinf(x); }
__SIMTWIN_GLIBC_ALIAS float __cosf(float x) noexcept { return __simtwin_ld___cosf(x); }
__SIMTWIN_GLIBC_ALIAS float __tanf(float x) noexcept { return __simtwin_ld___tanf(x); }
__SIMTWIN_GLIBC_ALIAS void __sincosf(float x, float *s, float *c) noexcept { __simtwin_ld___sincosf(x, s, c); }
__SIMTWIN_GLIBC_ALIAS float __powf(float x, float y) noexcept { return __simtwin_ld___powf(x, y); }
#undef __SIMTWIN_GLIBC_ALIAS
__SIMTWIN_INLINE float __fdividef(float x, float y) { return __simtwin_ld___fdividef(x, y); }
__SIMTWIN_INLINE float __saturatef(float x) { return x != x ? 0.0f : (x < 0.0f ? 0.0f : (x > 1.0f ? 1.0f : x)); }
__SIMTWIN_INLINE float rsqrtf(float x) { return __simtwin_ld_rsqrtf(x); }
__SIMTWIN_INLINE double rsqrt(double x) { return __simtwin_ld_rsqrt(x); }
__SIMTWIN_INLINE float rcbrtf(float x) { return __simtwin_ld_rcbrtf(x); }
__SIMTWIN_INLINE double rcbrt(double x) { return __simtwin_ld_rcbrt(x); }
__SIMTWIN_INLINE float sinpif(float x) { return __simtwin_ld_sinpif(x); }
__SIMTWIN_INLINE float cospif(float x) { return __simtwin_ld_cospif(x); }
__SIMTWIN_INLINE double sinpi(double x) { return __simtwin_ld_sinpi(x); }
__SIMTWIN_INLINE double cospi(double x) { return __simtwin_ld_cospi(x); }
__SIMTWIN_INLINE void sincospif(float x, float *s, float *c) { __simtwin_ld_sincospif(x, s, c); }
__SIMTWIN_INLINE void sincospi(double x, double *s, double *c) { __simtwin_ld_sincospi(x, s, c); }
__SIMTWIN_INLINE float normcdff(float x) { return __simtwin_ld_normcdff(x); }
__SIMTWIN_INLINE double normcdf(double x) { return __simtwin_ld_normcdf(x); }
__SIMTWIN_INLINE double erfinv(double y) { return __simtwin_ld_erfinv(y); }
__SIMTWIN_INLINE float erfinvf(float y) { return __simtwin_ld_erfinvf(y); }
__SIMTWIN_INLINE double erfcinv(double y) { return __simtwin_ld_erfcinv(y); }
__SIMTWIN_INLINE float erfcinvf(float y) { return __simtwin_ld_erfcinvf(y); }
__SIMTWIN_INLINE double normcdfinv(double y) { return __simtwin_ld_normcdfinv(y); }
__SIMTWIN_INLINE float normcdfinvf(float y) { return __simtwin_ld_normcdfinvf(y); }
__SIMTWIN_INLINE float erfcxf(float x) { return __simtwin_ld_erfcxf(x); }
__SIMTWIN_INLINE double erfcx(double x) { return __simtwin_ld_erfcx(x); }
__SIMTWIN_INLINE float fdividef(float x, float y) { return __simtwin_ld_fdividef(x, y); }
__SIMTWIN_INLINE float norm3df(float a, float b, float c) { return __simtwin_ld_norm3df(a, b, c); }
__SIMTWIN_INLINE float rnorm3df(float a, float b, float c) { return __simtwin_ld_rnorm3df(a, b, c); }
__SIMTWIN_INLINE double norm3d(double a, double b, double c) { return __simtwin_ld_norm3d(a, b, c); }
__SIMTWIN_INLINE double rnorm3d(double a, double b, double c) { return __simtwin_ld_rnorm3d(a, b, c); }
__SIMTWIN_INLINE float rhypotf(float a, float b) { return __simtwin_ld_rhypotf(a, b); }
__SIMTWIN_INLINE double rhypot(double a, double b) { return __simtwin_ld_rhypot(a, b); }
#else
/* ---- (no device math: a device profile without models) fast intrinsics: host libm stands in for the hardware approximation ----------
        (approximated: the device's SFU results differ; see README fidelity table). */
/* glibc declares these names (extern "C", noexcept) as its own aliases of the libm
   functions; the definitions below agree with those declarations. */
#define __SIMTWIN_GLIBC_ALIAS extern "C" inline __attribute__((always_inline))
__SIMTWIN_GLIBC_ALIAS float __expf(float x) noexcept { return expf(x); }
__SIMTWIN_GLIBC_ALIAS float __exp10f(float x) noexcept { return exp10f(x); }
__SIMTWIN_GLIBC_ALIAS float __logf(float x) noexcept { return logf(x); }
__SIMTWIN_GLIBC_ALIAS float __log2f(float x) noexcept { return log2f(x); }
__SIMTWIN_GLIBC_ALIAS float __log10f(float x) noexcept { return log10f(x); }
__SIMTWIN_GLIBC_ALIAS float __sinf(float x) noexcept { return sinf(x); }
__SIMTWIN_GLIBC_ALIAS float __cosf(float x) noexcept { return cosf(x); }
__SIMTWIN_GLIBC_ALIAS float __tanf(float x) noexcept { return tanf(x); }
__SIMTWIN_GLIBC_ALIAS void __sincosf(float x, float *s, float *c) noexcept { *s = sinf(x); *c = cosf(x); }
__SIMTWIN_GLIBC_ALIAS float __powf(float x, float y) noexcept { return powf(x, y); }
#undef __SIMTWIN_GLIBC_ALIAS
__SIMTWIN_INLINE float __fdividef(float x, float y) { return x / y; }
__SIMTWIN_INLINE float __saturatef(float x) { return x != x ? 0.0f : (x < 0.0f ? 0.0f : (x > 1.0f ? 1.0f : x)); }

/* ---- CUDA math functions that C++ lacks (host libm underneath) --------------------- */
__SIMTWIN_INLINE float rsqrtf(float x) { return 1.0f / sqrtf(x); }
__SIMTWIN_INLINE double rsqrt(double x) { return 1.0 / sqrt(x); }
__SIMTWIN_INLINE float rcbrtf(float x) { return 1.0f / cbrtf(x); }
__SIMTWIN_INLINE double rcbrt(double x) { return 1.0 / cbrt(x); }
__SIMTWIN_INLINE float sinpif(float x) { return sinf((float)M_PI * x); }
__SIMTWIN_INLINE float cospif(float x) { return cosf((float)M_PI * x); }
__SIMTWIN_INLINE double sinpi(double x) { return sin(M_PI * x); }
__SIMTWIN_INLINE double cospi(double x) { return cos(M_PI * x); }
__SIMTWIN_INLINE void sincospif(float x, float *s, float *c) { *s = sinpif(x); *c = cospif(x); }
__SIMTWIN_INLINE void sincospi(double x, double *s, double *c) { *s = sinpi(x); *c = cospi(x); }
__SIMTWIN_INLINE float normcdff(float x) { return 0.5f * erfcf(-x * (float)M_SQRT1_2); }
__SIMTWIN_INLINE double normcdf(double x) { return 0.5 * erfc(-x * M_SQRT1_2); }
__SIMTWIN_INLINE double erfinv(double y) {
    /* Newton iterations on erf from a rough start; host libm erf underneath. */
    if (y <= -1.0) return y == -1.0 ? -HUGE_VAL : NAN;
    if (y >= 1.0) return y == 1.0 ? HUGE_VAL : NAN;
    if (y != y) return y;
    double w = -log((1.0 - y) * (1.0 + y)), x;
    if (w < 5.0) { w -= 2.5; x = 2.81022636e-08; x = 3.43273939e-07 + x * w; x = -3.5233877e-06 + x * w;
        x = -4.39150654e-06 + x * w; x = 0.00021858087 + x * w; x = -0.00125372503 + x * w;
        x = -0.00417768164 + x * w; x = 0.246640727 + x * w; x = 1.50140941 + x * w; }
    else { w = sqrt(w) - 3.0; x = -0.000200214257; x = 0.000100950558 + x * w; x = 0.00134934322 + x * w;
        x = -0.00367342844 + x * w; x = 0.00573950773 + x * w; x = -0.0076224613 + x * w;
        x = 0.00943887047 + x * w; x = 1.00167406 + x * w; x = 2.83297682 + x * w; }
    x *= y;
    for (int i = 0; i < 3; ++i) x -= (erf(x) - y) / (2.0 / sqrt(M_PI) * exp(-x * x));
    return x;
}
__SIMTWIN_INLINE float erfinvf(float y) { return (float)erfinv((double)y); }
__SIMTWIN_INLINE double erfcinv(double y) { return erfinv(1.0 - y); }
__SIMTWIN_INLINE float erfcinvf(float y) { return (float)erfinv(1.0 - (double)y); }
__SIMTWIN_INLINE double normcdfinv(double y) { return -M_SQRT2 * erfcinv(2.0 * y); }
__SIMTWIN_INLINE float normcdfinvf(float y) { return (float)normcdfinv((double)y); }
__SIMTWIN_INLINE float erfcxf(float x) { return (float)(exp((double)x * x) * erfc((double)x)); }
__SIMTWIN_INLINE double erfcx(double x) { return exp(x * x) * erfc(x); }
__SIMTWIN_INLINE float fdividef(float x, float y) { return x / y; }
__SIMTWIN_INLINE float norm3df(float a, float b, float c) { return (float)sqrt((double)a * a + (double)b * b + (double)c * c); }
__SIMTWIN_INLINE float rnorm3df(float a, float b, float c) { return 1.0f / norm3df(a, b, c); }
__SIMTWIN_INLINE float rhypotf(float a, float b) { return 1.0f / hypotf(a, b); }
__SIMTWIN_INLINE double rhypot(double a, double b) { return 1.0 / hypot(a, b); }

#endif /* __SIMTWIN_DEVICE_MATH */

/* ---- device-only control ----------------------------------------------------------- */
/* __trap(): ends the launch (CUDA_ERROR_LAUNCH_FAILED) instead of killing the process. */
__SIMTWIN_INLINE void __trap(const char *file = __builtin_FILE(), unsigned line = __builtin_LINE()) {
    __simtwin_trap_now(::__simtwin::SIMTWIN_TRAP_TRAP, "__trap()", file, line);
}
__SIMTWIN_INLINE void __brkpt(const char *file = __builtin_FILE(), unsigned line = __builtin_LINE()) {
    __simtwin_trap_now(::__simtwin::SIMTWIN_TRAP_TRAP, "__brkpt()", file, line);
}
/* A spin-wait hint: the other threads of the block may run before this one goes on. */
__SIMTWIN_INLINE void __nanosleep(unsigned int, const char *__simtwin_site_file = __builtin_FILE(),
                                  unsigned __simtwin_site_line = __builtin_LINE()) {
    if (::__simtwin::rt && ::__simtwin::rt->yield_now)
        ::__simtwin::rt->yield_now(::__simtwin::simtwin_site_t{__simtwin_site_file, __simtwin_site_line, 0u});
}
__SIMTWIN_INLINE long long clock64() { return ::__simtwin::rt ? (long long)::__simtwin::rt->clock() : 0; }
/* `clock()` in device code is renamed to this by the rewriter (libc's clock() is CPU time). */
__SIMTWIN_INLINE clock_t __simtwin_clock() { return (clock_t)clock64(); }
__SIMTWIN_INLINE unsigned long long __globaltimer() { return ::__simtwin::rt ? ::__simtwin::rt->clock() : 0; }

/* Cache-hinted loads and stores: plain memory accesses on the host, and the program's
   own, so checked for alignment as the plugin checks a plain access (it leaves the shim's
   code alone): __ldg of an odd address ends the launch with 716 as on the device. */
#ifdef __SIMTWIN_KERNELS_HOST
static inline void __simtwin_dd_align(const void *, uint64_t, int, const char *, unsigned);
#define __SIMTWIN_CHECK_ALIGN(P, W) __simtwin_dd_align((const void *)(P), alignof(T), W, __simtwin_f, __simtwin_l)
#else
#define __SIMTWIN_CHECK_ALIGN(P, W) ((void)__simtwin_f, (void)__simtwin_l)
#endif
#define __SIMTWIN_HINTED_LOAD(NAME, PTR)                                                                      \
    template <class T> __SIMTWIN_INLINE T NAME(const T *p, const char *__simtwin_f = __builtin_FILE(),        \
                                               unsigned __simtwin_l = __builtin_LINE()) {                     \
        __SIMTWIN_CHECK_ALIGN(p, 0);                                                                          \
        return *(PTR)p;                                                                                       \
    }
#define __SIMTWIN_HINTED_STORE(NAME)                                                                          \
    template <class T> __SIMTWIN_INLINE void NAME(T *p, T v, const char *__simtwin_f = __builtin_FILE(),      \
                                                  unsigned __simtwin_l = __builtin_LINE()) {                  \
        __SIMTWIN_CHECK_ALIGN(p, 1);                                                                          \
        *p = v;                                                                                               \
    }
__SIMTWIN_HINTED_LOAD(__ldg, const T *)
__SIMTWIN_HINTED_LOAD(__ldcg, const T *)
__SIMTWIN_HINTED_LOAD(__ldca, const T *)
__SIMTWIN_HINTED_LOAD(__ldcs, const T *)
__SIMTWIN_HINTED_LOAD(__ldlu, const T *)
__SIMTWIN_HINTED_LOAD(__ldcv, const volatile T *)
__SIMTWIN_HINTED_STORE(__stwb)
__SIMTWIN_HINTED_STORE(__stcg)
__SIMTWIN_HINTED_STORE(__stcs)
__SIMTWIN_HINTED_STORE(__stwt)
#undef __SIMTWIN_HINTED_LOAD
#undef __SIMTWIN_HINTED_STORE
#undef __SIMTWIN_CHECK_ALIGN

#endif
