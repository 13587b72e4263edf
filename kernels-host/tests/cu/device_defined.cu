// Operations C++ leaves undefined and the device defines: plain float/double-to-integer
// conversions (explicit and implicit, every width), integer division and remainder by
// zero (and MIN / -1), shifts by at least the width. Compared with the H200's answers
// (tests/data/h200-device-defined.txt) by tests/device_defined.rs.
#include <cuda_runtime.h>
#include <stdint.h>

// out[2i] = (T)x[i] (explicit cast), out[2i+1] = x[i] assigned to a T (implicit).
#define CVT(SRC, DST, T)                                                                    \
    extern "C" __global__ void cvt_##SRC##_##DST(const SRC *x, unsigned long long *out, int n) { \
        for (int i = 0; i < n; ++i) {                                                       \
            out[2 * i] = (unsigned long long)(T)x[i];                                       \
            T implicit = x[i];                                                              \
            out[2 * i + 1] = (unsigned long long)implicit;                                  \
        }                                                                                   \
    }
#define CVTS(SRC)                                                                           \
    CVT(SRC, s8, int8_t) CVT(SRC, u8, uint8_t) CVT(SRC, s16, int16_t) CVT(SRC, u16, uint16_t) \
    CVT(SRC, s32, int32_t) CVT(SRC, u32, uint32_t) CVT(SRC, s64, int64_t) CVT(SRC, u64, uint64_t)
CVTS(float)
CVTS(double)

#define DIV(TY, T)                                                                          \
    extern "C" __global__ void div_##TY(const T *a, const T *b, T *q, T *r, int n) {        \
        for (int i = 0; i < n; ++i) {                                                       \
            q[i] = a[i] / b[i];                                                             \
            r[i] = a[i] % b[i];                                                             \
        }                                                                                   \
    }
DIV(s32, int32_t) DIV(u32, uint32_t) DIV(s64, int64_t) DIV(u64, uint64_t)

#define SHIFT(TY, T)                                                                        \
    extern "C" __global__ void shift_##TY(T x, const int *amount, T *l, T *r, int n) {      \
        for (int i = 0; i < n; ++i) {                                                       \
            l[i] = x << amount[i];                                                          \
            r[i] = x >> amount[i];                                                          \
        }                                                                                   \
    }
SHIFT(s32, int32_t) SHIFT(u32, uint32_t) SHIFT(s64, int64_t) SHIFT(u64, uint64_t)

// The same operations in defined cases: exact, no report.
extern "C" __global__ void defined_ops(const float *x, int a, int b, int s, long long *out) {
    out[0] = (int)x[0];
    out[1] = a / b;
    out[2] = a % b;
    out[3] = a << s;
    out[4] = a >> s;
    out[5] = (unsigned char)x[1];
    out[6] = a / 4 + (a >> 3); // constant divisors and shifts stay plain
}
// __nanosleep yields to the other threads of the block (runtime->yield_now).
extern "C" __global__ void sleepy(int *out) { __nanosleep(100); out[0] = 1; }
