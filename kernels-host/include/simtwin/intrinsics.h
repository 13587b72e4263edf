/* Device intrinsics mapped to the exact host operation each one names.
   _rn forms are the plain IEEE operation (the host runs in round-to-nearest and is
   compiled with -ffp-contract=off, so nothing fuses); directed forms (_rz/_ru/_rd) call
   the per-library runtime, which switches the host rounding mode around the one
   operation, so they are exact including overflow, subnormals, infinities and NaN. */
#ifndef SIMTWIN_INTRINSICS_H
#define SIMTWIN_INTRINSICS_H
#pragma GCC system_header

/* ---- bit casts -------------------------------------------------------------------- */
template <class To, class From> SIMTWIN_INLINE To simtwin_bitcast(From v) {
    static_assert(sizeof(To) == sizeof(From), "bit cast of different sizes");
    To r; memcpy(&r, &v, sizeof r); return r;
}
SIMTWIN_INLINE int __float_as_int(float x) { return simtwin_bitcast<int>(x); }
SIMTWIN_INLINE unsigned int __float_as_uint(float x) { return simtwin_bitcast<unsigned int>(x); }
SIMTWIN_INLINE float __int_as_float(int x) { return simtwin_bitcast<float>(x); }
SIMTWIN_INLINE float __uint_as_float(unsigned int x) { return simtwin_bitcast<float>(x); }
SIMTWIN_INLINE long long __double_as_longlong(double x) { return simtwin_bitcast<long long>(x); }
SIMTWIN_INLINE double __longlong_as_double(long long x) { return simtwin_bitcast<double>(x); }
SIMTWIN_INLINE int __double2hiint(double x) { return (int)(simtwin_bitcast<unsigned long long>(x) >> 32); }
SIMTWIN_INLINE int __double2loint(double x) { return (int)(unsigned int)simtwin_bitcast<unsigned long long>(x); }
SIMTWIN_INLINE double __hiloint2double(int hi, int lo) {
    return simtwin_bitcast<double>(((unsigned long long)(unsigned int)hi << 32) | (unsigned int)lo);
}

/* ---- single precision arithmetic --------------------------------------------------- */
#define SIMTWIN_F2(NAME, OP, EXPR) \
    SIMTWIN_INLINE float NAME##_rn(float a, float b) { return EXPR; } \
    SIMTWIN_INLINE float NAME##_rz(float a, float b) { return simtwin_f_op(OP, SIMTWIN_RZ, a, b, 0.f); } \
    SIMTWIN_INLINE float NAME##_ru(float a, float b) { return simtwin_f_op(OP, SIMTWIN_RU, a, b, 0.f); } \
    SIMTWIN_INLINE float NAME##_rd(float a, float b) { return simtwin_f_op(OP, SIMTWIN_RD, a, b, 0.f); }
SIMTWIN_F2(__fadd, SIMTWIN_OP_ADD, a + b)
SIMTWIN_F2(__fsub, SIMTWIN_OP_SUB, a - b)
SIMTWIN_F2(__fmul, SIMTWIN_OP_MUL, a * b)
SIMTWIN_F2(__fdiv, SIMTWIN_OP_DIV, a / b)
#undef SIMTWIN_F2
#define SIMTWIN_F1(NAME, OP, EXPR) \
    SIMTWIN_INLINE float NAME##_rn(float a) { return EXPR; } \
    SIMTWIN_INLINE float NAME##_rz(float a) { return simtwin_f_op(OP, SIMTWIN_RZ, a, 0.f, 0.f); } \
    SIMTWIN_INLINE float NAME##_ru(float a) { return simtwin_f_op(OP, SIMTWIN_RU, a, 0.f, 0.f); } \
    SIMTWIN_INLINE float NAME##_rd(float a) { return simtwin_f_op(OP, SIMTWIN_RD, a, 0.f, 0.f); }
SIMTWIN_F1(__fsqrt, SIMTWIN_OP_SQRT, __builtin_sqrtf(a))
SIMTWIN_F1(__frcp, SIMTWIN_OP_RCP, 1.0f / a)
#undef SIMTWIN_F1
SIMTWIN_INLINE float __fmaf_rn(float a, float b, float c) { return __builtin_fmaf(a, b, c); }
SIMTWIN_INLINE float __fmaf_rz(float a, float b, float c) { return simtwin_f_op(SIMTWIN_OP_FMA, SIMTWIN_RZ, a, b, c); }
SIMTWIN_INLINE float __fmaf_ru(float a, float b, float c) { return simtwin_f_op(SIMTWIN_OP_FMA, SIMTWIN_RU, a, b, c); }
SIMTWIN_INLINE float __fmaf_rd(float a, float b, float c) { return simtwin_f_op(SIMTWIN_OP_FMA, SIMTWIN_RD, a, b, c); }
SIMTWIN_INLINE float __fmaf_ieee_rn(float a, float b, float c) { return __builtin_fmaf(a, b, c); }
/* Correctly rounded 1/sqrt(x) (exact check in the runtime). */
SIMTWIN_INLINE float __frsqrt_rn(float a) { return simtwin_frsqrt_rn(a); }

/* ---- double precision arithmetic --------------------------------------------------- */
#define SIMTWIN_D2(NAME, OP, EXPR) \
    SIMTWIN_INLINE double NAME##_rn(double a, double b) { return EXPR; } \
    SIMTWIN_INLINE double NAME##_rz(double a, double b) { return simtwin_d_op(OP, SIMTWIN_RZ, a, b, 0.0); } \
    SIMTWIN_INLINE double NAME##_ru(double a, double b) { return simtwin_d_op(OP, SIMTWIN_RU, a, b, 0.0); } \
    SIMTWIN_INLINE double NAME##_rd(double a, double b) { return simtwin_d_op(OP, SIMTWIN_RD, a, b, 0.0); }
SIMTWIN_D2(__dadd, SIMTWIN_OP_ADD, a + b)
SIMTWIN_D2(__dsub, SIMTWIN_OP_SUB, a - b)
SIMTWIN_D2(__dmul, SIMTWIN_OP_MUL, a * b)
SIMTWIN_D2(__ddiv, SIMTWIN_OP_DIV, a / b)
#undef SIMTWIN_D2
#define SIMTWIN_D1(NAME, OP, EXPR) \
    SIMTWIN_INLINE double NAME##_rn(double a) { return EXPR; } \
    SIMTWIN_INLINE double NAME##_rz(double a) { return simtwin_d_op(OP, SIMTWIN_RZ, a, 0.0, 0.0); } \
    SIMTWIN_INLINE double NAME##_ru(double a) { return simtwin_d_op(OP, SIMTWIN_RU, a, 0.0, 0.0); } \
    SIMTWIN_INLINE double NAME##_rd(double a) { return simtwin_d_op(OP, SIMTWIN_RD, a, 0.0, 0.0); }
SIMTWIN_D1(__dsqrt, SIMTWIN_OP_SQRT, __builtin_sqrt(a))
SIMTWIN_D1(__drcp, SIMTWIN_OP_RCP, 1.0 / a)
#undef SIMTWIN_D1
SIMTWIN_INLINE double __fma_rn(double a, double b, double c) { return __builtin_fma(a, b, c); }
SIMTWIN_INLINE double __fma_rz(double a, double b, double c) { return simtwin_d_op(SIMTWIN_OP_FMA, SIMTWIN_RZ, a, b, c); }
SIMTWIN_INLINE double __fma_ru(double a, double b, double c) { return simtwin_d_op(SIMTWIN_OP_FMA, SIMTWIN_RU, a, b, c); }
SIMTWIN_INLINE double __fma_rd(double a, double b, double c) { return simtwin_d_op(SIMTWIN_OP_FMA, SIMTWIN_RD, a, b, c); }

/* ---- float/double -> integer: round as named, then saturate as the device does:
        NaN -> 0, values past the range -> the range's end. ---------------------------- */
template <class I, class F> SIMTWIN_INLINE I simtwin_f2i_sat(F r) {
    /* r is already an integral value (or inf/NaN). Bounds are exact powers of two. */
    if (r != r) return 0;
    const F lo = std::is_signed<I>::value ? -(F)((unsigned long long)1 << (sizeof(I) * 8 - 1)) : (F)0;
    const F hi = std::is_signed<I>::value ? (F)((unsigned long long)1 << (sizeof(I) * 8 - 1))
                                          : (F)2 * (F)((unsigned long long)1 << (sizeof(I) * 8 - 1));
    if (r < lo) return std::numeric_limits<I>::min();
    if (r >= hi) return std::numeric_limits<I>::max();
    return (I)r;
}
#define SIMTWIN_F2I(PFX, F, I, RN, RZ, RU, RD) \
    SIMTWIN_INLINE I PFX##_rn(F x) { return simtwin_f2i_sat<I>(RN(x)); } \
    SIMTWIN_INLINE I PFX##_rz(F x) { return simtwin_f2i_sat<I>(RZ(x)); } \
    SIMTWIN_INLINE I PFX##_ru(F x) { return simtwin_f2i_sat<I>(RU(x)); } \
    SIMTWIN_INLINE I PFX##_rd(F x) { return simtwin_f2i_sat<I>(RD(x)); }
#define SIMTWIN_F2I_F(PFX, I) SIMTWIN_F2I(PFX, float, I, __builtin_roundevenf, __builtin_truncf, __builtin_ceilf, __builtin_floorf)
#define SIMTWIN_F2I_D(PFX, I) SIMTWIN_F2I(PFX, double, I, __builtin_roundeven, __builtin_trunc, __builtin_ceil, __builtin_floor)
SIMTWIN_F2I_F(__float2int, int)
SIMTWIN_F2I_F(__float2uint, unsigned int)
SIMTWIN_F2I_F(__float2ll, long long)
SIMTWIN_F2I_F(__float2ull, unsigned long long)
SIMTWIN_F2I_D(__double2int, int)
SIMTWIN_F2I_D(__double2uint, unsigned int)
SIMTWIN_F2I_D(__double2ll, long long)
SIMTWIN_F2I_D(__double2ull, unsigned long long)
#undef SIMTWIN_F2I_F
#undef SIMTWIN_F2I_D
#undef SIMTWIN_F2I
SIMTWIN_INLINE int __float2int(float x) { return __float2int_rz(x); }

/* ---- integer -> float/double, and double -> float ---------------------------------- */
#define SIMTWIN_I2F(PFX, I, KIND) \
    SIMTWIN_INLINE float PFX##_rn(I x) { return simtwin_i2f(KIND, SIMTWIN_RN, (uint64_t)x); } \
    SIMTWIN_INLINE float PFX##_rz(I x) { return simtwin_i2f(KIND, SIMTWIN_RZ, (uint64_t)x); } \
    SIMTWIN_INLINE float PFX##_ru(I x) { return simtwin_i2f(KIND, SIMTWIN_RU, (uint64_t)x); } \
    SIMTWIN_INLINE float PFX##_rd(I x) { return simtwin_i2f(KIND, SIMTWIN_RD, (uint64_t)x); }
SIMTWIN_I2F(__int2float, int, SIMTWIN_I32)
SIMTWIN_I2F(__uint2float, unsigned int, SIMTWIN_U32)
SIMTWIN_I2F(__ll2float, long long, SIMTWIN_I64)
SIMTWIN_I2F(__ull2float, unsigned long long, SIMTWIN_U64)
#undef SIMTWIN_I2F
#define SIMTWIN_I2D(PFX, I, KIND) \
    SIMTWIN_INLINE double PFX##_rn(I x) { return simtwin_i2d(KIND, SIMTWIN_RN, (uint64_t)x); } \
    SIMTWIN_INLINE double PFX##_rz(I x) { return simtwin_i2d(KIND, SIMTWIN_RZ, (uint64_t)x); } \
    SIMTWIN_INLINE double PFX##_ru(I x) { return simtwin_i2d(KIND, SIMTWIN_RU, (uint64_t)x); } \
    SIMTWIN_INLINE double PFX##_rd(I x) { return simtwin_i2d(KIND, SIMTWIN_RD, (uint64_t)x); }
SIMTWIN_I2D(__ll2double, long long, SIMTWIN_I64)
SIMTWIN_I2D(__ull2double, unsigned long long, SIMTWIN_U64)
#undef SIMTWIN_I2D
/* 32-bit integers are exact in double: one rounding-free form each. */
SIMTWIN_INLINE double __int2double_rn(int x) { return (double)x; }
SIMTWIN_INLINE double __uint2double_rn(unsigned int x) { return (double)x; }
SIMTWIN_INLINE float __double2float_rn(double x) { return (float)x; }
SIMTWIN_INLINE float __double2float_rz(double x) { return simtwin_d2f(SIMTWIN_RZ, x); }
SIMTWIN_INLINE float __double2float_ru(double x) { return simtwin_d2f(SIMTWIN_RU, x); }
SIMTWIN_INLINE float __double2float_rd(double x) { return simtwin_d2f(SIMTWIN_RD, x); }

/* ---- integer intrinsics ------------------------------------------------------------ */
SIMTWIN_INLINE int __popc(unsigned int x) { return __builtin_popcount(x); }
SIMTWIN_INLINE int __popcll(unsigned long long x) { return __builtin_popcountll(x); }
SIMTWIN_INLINE int __clz(int x) { return x == 0 ? 32 : __builtin_clz((unsigned int)x); }
SIMTWIN_INLINE int __clzll(long long x) { return x == 0 ? 64 : __builtin_clzll((unsigned long long)x); }
SIMTWIN_INLINE int __ffs(int x) { return __builtin_ffs(x); }
SIMTWIN_INLINE int __ffsll(long long x) { return __builtin_ffsll(x); }
SIMTWIN_INLINE unsigned int __brev(unsigned int x) {
    x = ((x >> 1) & 0x55555555u) | ((x & 0x55555555u) << 1);
    x = ((x >> 2) & 0x33333333u) | ((x & 0x33333333u) << 2);
    x = ((x >> 4) & 0x0f0f0f0fu) | ((x & 0x0f0f0f0fu) << 4);
    return __builtin_bswap32(x);
}
SIMTWIN_INLINE unsigned long long __brevll(unsigned long long x) {
    return ((unsigned long long)__brev((unsigned int)x) << 32) | __brev((unsigned int)(x >> 32));
}
/* Byte i of the result is byte (s >> 4i) & 7 of the 8-byte value {y:x}. */
SIMTWIN_INLINE unsigned int __byte_perm(unsigned int x, unsigned int y, unsigned int s) {
    unsigned long long v = ((unsigned long long)y << 32) | x;
    unsigned int r = 0;
    for (int i = 0; i < 4; ++i) r |= (unsigned int)((v >> (8 * ((s >> (4 * i)) & 7))) & 0xff) << (8 * i);
    return r;
}
/* Funnel shifts of the 64-bit value {hi:lo}: _l/_r take the shift mod 32, _lc/_rc clamp it to 32. */
SIMTWIN_INLINE unsigned int __funnelshift_l(unsigned int lo, unsigned int hi, unsigned int s) {
    unsigned long long v = ((unsigned long long)hi << 32) | lo; return (unsigned int)((v << (s & 31)) >> 32);
}
SIMTWIN_INLINE unsigned int __funnelshift_lc(unsigned int lo, unsigned int hi, unsigned int s) {
    unsigned long long v = ((unsigned long long)hi << 32) | lo; return (unsigned int)((v << (s > 32 ? 32 : s)) >> 32);
}
SIMTWIN_INLINE unsigned int __funnelshift_r(unsigned int lo, unsigned int hi, unsigned int s) {
    unsigned long long v = ((unsigned long long)hi << 32) | lo; return (unsigned int)(v >> (s & 31));
}
SIMTWIN_INLINE unsigned int __funnelshift_rc(unsigned int lo, unsigned int hi, unsigned int s) {
    unsigned long long v = ((unsigned long long)hi << 32) | lo; return (unsigned int)(v >> (s > 32 ? 32 : s));
}
SIMTWIN_INLINE unsigned int __umulhi(unsigned int a, unsigned int b) { return (unsigned int)(((unsigned long long)a * b) >> 32); }
SIMTWIN_INLINE int __mulhi(int a, int b) { return (int)(((long long)a * b) >> 32); }
SIMTWIN_INLINE unsigned long long __umul64hi(unsigned long long a, unsigned long long b) {
    return (unsigned long long)(((unsigned __int128)a * b) >> 64);
}
SIMTWIN_INLINE long long __mul64hi(long long a, long long b) { return (long long)(((__int128)a * b) >> 64); }
/* Low 32 bits of the product of the (sign-extended / zero-extended) low 24 bits. */
SIMTWIN_INLINE int __mul24(int a, int b) {
    long long x = (long long)((a & 0xffffff) ^ 0x800000) - 0x800000, y = (long long)((b & 0xffffff) ^ 0x800000) - 0x800000;
    return (int)(unsigned int)(unsigned long long)(x * y);
}
SIMTWIN_INLINE unsigned int __umul24(unsigned int a, unsigned int b) {
    return (unsigned int)((unsigned long long)(a & 0xffffffu) * (b & 0xffffffu));
}
SIMTWIN_INLINE unsigned int __sad(int x, int y, unsigned int z) {
    return (unsigned int)(x > y ? (long long)x - y : (long long)y - x) + z;
}
SIMTWIN_INLINE unsigned int __usad(unsigned int x, unsigned int y, unsigned int z) { return (x > y ? x - y : y - x) + z; }
SIMTWIN_INLINE int __hadd(int x, int y) { return (int)(((long long)x + y) >> 1); }
SIMTWIN_INLINE int __rhadd(int x, int y) { return (int)(((long long)x + y + 1) >> 1); }
SIMTWIN_INLINE unsigned int __uhadd(unsigned int x, unsigned int y) { return (unsigned int)(((unsigned long long)x + y) >> 1); }
SIMTWIN_INLINE unsigned int __urhadd(unsigned int x, unsigned int y) { return (unsigned int)(((unsigned long long)x + y + 1) >> 1); }
/* Four-way byte dot products with 32-bit accumulate (wrapping, as the device's). */
SIMTWIN_INLINE int __dp4a(int a, int b, int c) {
    unsigned int r = (unsigned int)c;
    for (int i = 0; i < 4; ++i) r += (unsigned int)((int)(signed char)(a >> 8 * i) * (int)(signed char)(b >> 8 * i));
    return (int)r;
}
SIMTWIN_INLINE unsigned int __dp4a(unsigned int a, unsigned int b, unsigned int c) {
    for (int i = 0; i < 4; ++i) c += ((a >> 8 * i) & 0xff) * ((b >> 8 * i) & 0xff);
    return c;
}

/* ---- min/max as the CUDA headers overload them ------------------------------------- */
SIMTWIN_INLINE int min(int a, int b) { return a < b ? a : b; }
SIMTWIN_INLINE int max(int a, int b) { return a > b ? a : b; }
SIMTWIN_INLINE unsigned int min(unsigned int a, unsigned int b) { return a < b ? a : b; }
SIMTWIN_INLINE unsigned int max(unsigned int a, unsigned int b) { return a > b ? a : b; }
SIMTWIN_INLINE unsigned int min(int a, unsigned int b) { return min((unsigned int)a, b); }
SIMTWIN_INLINE unsigned int min(unsigned int a, int b) { return min(a, (unsigned int)b); }
SIMTWIN_INLINE unsigned int max(int a, unsigned int b) { return max((unsigned int)a, b); }
SIMTWIN_INLINE unsigned int max(unsigned int a, int b) { return max(a, (unsigned int)b); }
SIMTWIN_INLINE long min(long a, long b) { return a < b ? a : b; }
SIMTWIN_INLINE long max(long a, long b) { return a > b ? a : b; }
SIMTWIN_INLINE unsigned long min(unsigned long a, unsigned long b) { return a < b ? a : b; }
SIMTWIN_INLINE unsigned long max(unsigned long a, unsigned long b) { return a > b ? a : b; }
SIMTWIN_INLINE long long min(long long a, long long b) { return a < b ? a : b; }
SIMTWIN_INLINE long long max(long long a, long long b) { return a > b ? a : b; }
SIMTWIN_INLINE unsigned long long min(unsigned long long a, unsigned long long b) { return a < b ? a : b; }
SIMTWIN_INLINE unsigned long long max(unsigned long long a, unsigned long long b) { return a > b ? a : b; }
SIMTWIN_INLINE float min(float a, float b) { return fminf(a, b); }
SIMTWIN_INLINE float max(float a, float b) { return fmaxf(a, b); }
SIMTWIN_INLINE double min(double a, double b) { return fmin(a, b); }
SIMTWIN_INLINE double max(double a, double b) { return fmax(a, b); }
SIMTWIN_INLINE unsigned int umin(unsigned int a, unsigned int b) { return a < b ? a : b; }
SIMTWIN_INLINE unsigned int umax(unsigned int a, unsigned int b) { return a > b ? a : b; }
SIMTWIN_INLINE long long llmin(long long a, long long b) { return a < b ? a : b; }
SIMTWIN_INLINE long long llmax(long long a, long long b) { return a > b ? a : b; }
SIMTWIN_INLINE unsigned long long ullmin(unsigned long long a, unsigned long long b) { return a < b ? a : b; }
SIMTWIN_INLINE unsigned long long ullmax(unsigned long long a, unsigned long long b) { return a > b ? a : b; }

/* ---- fast intrinsics: host libm stands in for the hardware approximation ----------
        (approximated: the device's SFU results differ; see README fidelity table). */
/* glibc declares these names (extern "C", noexcept) as its own aliases of the libm
   functions; the definitions below agree with those declarations. */
#define SIMTWIN_GLIBC_ALIAS extern "C" inline __attribute__((always_inline))
SIMTWIN_GLIBC_ALIAS float __expf(float x) noexcept { return expf(x); }
SIMTWIN_GLIBC_ALIAS float __exp10f(float x) noexcept { return exp10f(x); }
SIMTWIN_GLIBC_ALIAS float __logf(float x) noexcept { return logf(x); }
SIMTWIN_GLIBC_ALIAS float __log2f(float x) noexcept { return log2f(x); }
SIMTWIN_GLIBC_ALIAS float __log10f(float x) noexcept { return log10f(x); }
SIMTWIN_GLIBC_ALIAS float __sinf(float x) noexcept { return sinf(x); }
SIMTWIN_GLIBC_ALIAS float __cosf(float x) noexcept { return cosf(x); }
SIMTWIN_GLIBC_ALIAS float __tanf(float x) noexcept { return tanf(x); }
SIMTWIN_GLIBC_ALIAS void __sincosf(float x, float *s, float *c) noexcept { *s = sinf(x); *c = cosf(x); }
SIMTWIN_GLIBC_ALIAS float __powf(float x, float y) noexcept { return powf(x, y); }
#undef SIMTWIN_GLIBC_ALIAS
SIMTWIN_INLINE float __fdividef(float x, float y) { return x / y; }
SIMTWIN_INLINE float __saturatef(float x) { return x != x ? 0.0f : (x < 0.0f ? 0.0f : (x > 1.0f ? 1.0f : x)); }

/* ---- CUDA math functions that C++ lacks (host libm underneath) --------------------- */
SIMTWIN_INLINE float rsqrtf(float x) { return 1.0f / sqrtf(x); }
SIMTWIN_INLINE double rsqrt(double x) { return 1.0 / sqrt(x); }
SIMTWIN_INLINE float rcbrtf(float x) { return 1.0f / cbrtf(x); }
SIMTWIN_INLINE double rcbrt(double x) { return 1.0 / cbrt(x); }
SIMTWIN_INLINE float sinpif(float x) { return sinf((float)M_PI * x); }
SIMTWIN_INLINE float cospif(float x) { return cosf((float)M_PI * x); }
SIMTWIN_INLINE double sinpi(double x) { return sin(M_PI * x); }
SIMTWIN_INLINE double cospi(double x) { return cos(M_PI * x); }
SIMTWIN_INLINE void sincospif(float x, float *s, float *c) { *s = sinpif(x); *c = cospif(x); }
SIMTWIN_INLINE void sincospi(double x, double *s, double *c) { *s = sinpi(x); *c = cospi(x); }
SIMTWIN_INLINE float normcdff(float x) { return 0.5f * erfcf(-x * (float)M_SQRT1_2); }
SIMTWIN_INLINE double normcdf(double x) { return 0.5 * erfc(-x * M_SQRT1_2); }
SIMTWIN_INLINE double erfinv(double y) {
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
SIMTWIN_INLINE float erfinvf(float y) { return (float)erfinv((double)y); }
SIMTWIN_INLINE double erfcinv(double y) { return erfinv(1.0 - y); }
SIMTWIN_INLINE float erfcinvf(float y) { return (float)erfinv(1.0 - (double)y); }
SIMTWIN_INLINE double normcdfinv(double y) { return -M_SQRT2 * erfcinv(2.0 * y); }
SIMTWIN_INLINE float normcdfinvf(float y) { return (float)normcdfinv((double)y); }
SIMTWIN_INLINE float erfcxf(float x) { return (float)(exp((double)x * x) * erfc((double)x)); }
SIMTWIN_INLINE double erfcx(double x) { return exp(x * x) * erfc(x); }
SIMTWIN_INLINE float fdividef(float x, float y) { return x / y; }
SIMTWIN_INLINE float norm3df(float a, float b, float c) { return (float)sqrt((double)a * a + (double)b * b + (double)c * c); }
SIMTWIN_INLINE float rnorm3df(float a, float b, float c) { return 1.0f / norm3df(a, b, c); }
SIMTWIN_INLINE float rhypotf(float a, float b) { return 1.0f / hypotf(a, b); }
SIMTWIN_INLINE double rhypot(double a, double b) { return 1.0 / hypot(a, b); }

/* ---- device-only control ----------------------------------------------------------- */
/* __trap(): ends the launch (CUDA_ERROR_LAUNCH_FAILED) instead of killing the process. */
SIMTWIN_INLINE void __trap(const char *file = __builtin_FILE(), unsigned line = __builtin_LINE()) {
    simtwin_trap_now(SIMTWIN_TRAP_TRAP, "__trap()", file, line);
}
SIMTWIN_INLINE void __brkpt(const char *file = __builtin_FILE(), unsigned line = __builtin_LINE()) {
    simtwin_trap_now(SIMTWIN_TRAP_TRAP, "__brkpt()", file, line);
}
SIMTWIN_INLINE void __nanosleep(unsigned int) {}
SIMTWIN_INLINE long long clock64() { return simtwin_rt ? (long long)simtwin_rt->clock() : 0; }
/* `clock()` in device code is renamed to this by the rewriter (libc's clock() is CPU time). */
SIMTWIN_INLINE clock_t simtwin_clock() { return (clock_t)clock64(); }
SIMTWIN_INLINE unsigned long long __globaltimer() { return simtwin_rt ? simtwin_rt->clock() : 0; }

/* Cache-hinted loads and stores: plain memory accesses on the host. */
template <class T> SIMTWIN_INLINE T __ldg(const T *p) { return *p; }
template <class T> SIMTWIN_INLINE T __ldcg(const T *p) { return *p; }
template <class T> SIMTWIN_INLINE T __ldca(const T *p) { return *p; }
template <class T> SIMTWIN_INLINE T __ldcs(const T *p) { return *p; }
template <class T> SIMTWIN_INLINE T __ldlu(const T *p) { return *p; }
template <class T> SIMTWIN_INLINE T __ldcv(const T *p) { return *(const volatile T *)p; }
template <class T> SIMTWIN_INLINE void __stwb(T *p, T v) { *p = v; }
template <class T> SIMTWIN_INLINE void __stcg(T *p, T v) { *p = v; }
template <class T> SIMTWIN_INLINE void __stcs(T *p, T v) { *p = v; }
template <class T> SIMTWIN_INLINE void __stwt(T *p, T v) { *p = v; }

#endif
