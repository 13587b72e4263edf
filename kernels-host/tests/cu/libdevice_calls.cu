// Every function scripts/device-math/libdevice_verify.cu compares with the H200, called
// as device code calls it: function `fi` of the list (one-operand functions first, then
// two-operand ones) on x[i] (and y[i]), bit patterns in and out.
#include <math.h>
#define LIST1(X) X(expf) X(exp2f) X(log2f) X(logf) X(sinf) X(cosf) X(rsqrtf) X(__expf) X(__log2f) X(__logf) \
    X(__sinf) X(__cosf) X(__tanf) X(exp10f) X(log10f) X(tanf) X(tanhf) X(erff) X(cbrtf) X(atanf) X(log1pf) X(expm1f) \
    X(asinf) X(sinhf) X(lgammaf) X(sqrtf)
#define LIST2(X) X(powf) X(__powf) X(__fdividef) X(atan2f) X(hypotf)
#define S1(n) if (fi == idx++) r = n(__uint_as_float(x[i]));
#define S2(n) if (fi == idx++) r = n(__uint_as_float(x[i]), __uint_as_float(y[i]));
__global__ void calls(int fi, const unsigned *x, const unsigned *y, unsigned *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    int idx = 0;
    float r = 0.f;
    LIST1(S1) LIST2(S2)
    out[i] = __float_as_uint(r);
}
// std:: overloads and the C++ float overloads reach the same functions.
__global__ void overloads(const float *x, float *out) {
    out[0] = std::exp(x[0]);
    out[1] = exp(x[0]);
    out[2] = std::pow(x[0], x[1]);
    out[3] = std::sin(x[0]);
}
