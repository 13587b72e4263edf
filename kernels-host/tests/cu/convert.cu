// Conversions with their rounding modes and the device's saturation.
#include <cuda_runtime.h>
#include <cuda_fp16.h>

#define FOUR(F, X) F##_rn(X), F##_rz(X), F##_ru(X), F##_rd(X)

struct FloatToInt { int i[4]; unsigned u[4]; long long ll[4]; unsigned long long ull[4]; };

extern "C" __global__ void float_to_int(const float *x, FloatToInt *out, int n) {
    for (int k = 0; k < n; ++k) {
        FloatToInt r = {{FOUR(__float2int, x[k])}, {FOUR(__float2uint, x[k])},
                        {FOUR(__float2ll, x[k])}, {FOUR(__float2ull, x[k])}};
        out[k] = r;
    }
}
extern "C" __global__ void double_to_int(const double *x, FloatToInt *out, int n) {
    for (int k = 0; k < n; ++k) {
        FloatToInt r = {{FOUR(__double2int, x[k])}, {FOUR(__double2uint, x[k])},
                        {FOUR(__double2ll, x[k])}, {FOUR(__double2ull, x[k])}};
        out[k] = r;
    }
}
struct IntToFloat { float i[4], u[4], ll[4], ull[4]; double lld[4], ulld[4]; };
extern "C" __global__ void int_to_float(const long long *x, IntToFloat *out, int n) {
    for (int k = 0; k < n; ++k) {
        int i = (int)x[k];
        unsigned u = (unsigned)x[k];
        unsigned long long ull = (unsigned long long)x[k];
        IntToFloat r = {{FOUR(__int2float, i)}, {FOUR(__uint2float, u)}, {FOUR(__ll2float, x[k])},
                        {FOUR(__ull2float, ull)}, {FOUR(__ll2double, x[k])}, {FOUR(__ull2double, ull)}};
        out[k] = r;
    }
}
extern "C" __global__ void double_to_float(const double *x, float *out, int n) {
    for (int k = 0; k < n; ++k) {
        float r[4] = {FOUR(__double2float, x[k])};
        for (int j = 0; j < 4; ++j) out[4 * k + j] = r[j];
    }
}
extern "C" __global__ void float_to_half(const float *x, unsigned short *out, int n) {
    for (int k = 0; k < n; ++k) {
        __half r[4] = {FOUR(__float2half, x[k])};
        for (int j = 0; j < 4; ++j) out[5 * k + j] = __half_as_ushort(r[j]);
        out[5 * k + 4] = __half_as_ushort(__float2half(__half2float(__ushort_as_half((unsigned short)(k * 977)))));
    }
}
extern "C" __global__ void bitcasts(float f, double d, unsigned *out) {
    out[0] = __float_as_uint(f);
    out[1] = (unsigned)__float_as_int(__int_as_float(0x7f800001));
    unsigned long long b = (unsigned long long)__double_as_longlong(d);
    out[2] = (unsigned)b; out[3] = (unsigned)(b >> 32);
    out[4] = (unsigned)__double2hiint(d); out[5] = (unsigned)__double2loint(d);
    out[6] = __float_as_uint(__uint_as_float(0x3f800000u) + 1.0f);
    out[7] = (unsigned)(__double_as_longlong(__hiloint2double((int)out[4], (int)out[5])) == (long long)b);
}
