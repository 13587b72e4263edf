// The PTX SFU forms under test, each as exactly one inline-asm instruction, by number.
// Shared by the H200 dump (dump.cu) and the exhaustive comparison (verify.cu).
#pragma once
#include <stdint.h>

#define OP_LIST(X)                         \
    X(0, "ex2.approx.ftz.f32")             \
    X(1, "ex2.approx.f32")                 \
    X(2, "lg2.approx.ftz.f32")             \
    X(3, "lg2.approx.f32")                 \
    X(4, "rcp.approx.ftz.f32")             \
    X(5, "rcp.approx.f32")                 \
    X(6, "rsqrt.approx.ftz.f32")           \
    X(7, "rsqrt.approx.f32")               \
    X(8, "sin.approx.ftz.f32")             \
    X(9, "sin.approx.f32")                 \
    X(10, "cos.approx.ftz.f32")            \
    X(11, "cos.approx.f32")                \
    X(12, "tanh.approx.f32")               \
    X(13, "sqrt.approx.ftz.f32")           \
    X(14, "sqrt.approx.f32")               \
    X(15, "rcp.approx.ftz.f64")            \
    X(16, "rsqrt.approx.ftz.f64")          \
    X(17, "rsqrt.approx.f64")              \
    X(19, "ex2.approx.f16")                \
    X(20, "ex2.approx.ftz.bf16")           \
    X(21, "tanh.approx.f16")               \
    X(22, "tanh.approx.bf16")              \
    X(23, "ex2.approx.f16x2")              \
    X(24, "ex2.approx.ftz.bf16x2")         \
    X(25, "tanh.approx.f16x2")             \
    X(26, "tanh.approx.bf16x2")            \
    X(30, "div.approx.f32")                \
    X(31, "div.approx.ftz.f32")            \
    X(32, "div.full.f32")                  \
    X(33, "div.full.ftz.f32")

#define F32_1(ins)                                                    \
    {                                                                 \
        float r;                                                      \
        asm volatile(ins " %0, %1;" : "=f"(r) : "f"(__uint_as_float(x))); \
        return __float_as_uint(r);                                    \
    }
#define F16_1(ins)                                                    \
    {                                                                 \
        uint16_t r, a = (uint16_t)x;                                  \
        asm volatile(ins " %0, %1;" : "=h"(r) : "h"(a));               \
        return r;                                                     \
    }
#define U32_1(ins)                                                    \
    {                                                                 \
        uint32_t r;                                                   \
        asm volatile(ins " %0, %1;" : "=r"(r) : "r"(x));               \
        return r;                                                     \
    }
/* f64 forms: x is the input's high word, low word `lo`; returns the result's high word
   (lo_out receives its low word). */
#define F64_1(ins)                                                                      \
    {                                                                                   \
        double r, a = __hiloint2double((int)x, (int)lo);                                \
        asm volatile(ins " %0, %1;" : "=d"(r) : "d"(a));                                 \
        *lo_out = (uint32_t)__double2loint(r);                                          \
        return (uint32_t)__double2hiint(r);                                             \
    }
#define F32_2(ins)                                                                        \
    {                                                                                     \
        float r;                                                                          \
        asm volatile(ins " %0, %1, %2;" : "=f"(r) : "f"(__uint_as_float(x)), "f"(__uint_as_float(y))); \
        return __float_as_uint(r);                                                        \
    }

/* One instruction of form `op` on bit pattern x (and y for two-operand forms, lo for the
   low word of f64 inputs). */
__device__ __forceinline__ uint32_t hw_op(int op, uint32_t x, uint32_t y, uint32_t lo, uint32_t* lo_out) {
    switch (op) {
    case 0: F32_1("ex2.approx.ftz.f32")
    case 1: F32_1("ex2.approx.f32")
    case 2: F32_1("lg2.approx.ftz.f32")
    case 3: F32_1("lg2.approx.f32")
    case 4: F32_1("rcp.approx.ftz.f32")
    case 5: F32_1("rcp.approx.f32")
    case 6: F32_1("rsqrt.approx.ftz.f32")
    case 7: F32_1("rsqrt.approx.f32")
    case 8: F32_1("sin.approx.ftz.f32")
    case 9: F32_1("sin.approx.f32")
    case 10: F32_1("cos.approx.ftz.f32")
    case 11: F32_1("cos.approx.f32")
    case 12: F32_1("tanh.approx.f32")
    case 13: F32_1("sqrt.approx.ftz.f32")
    case 14: F32_1("sqrt.approx.f32")
    case 15: F64_1("rcp.approx.ftz.f64")
    case 16: F64_1("rsqrt.approx.ftz.f64")
    case 17: F64_1("rsqrt.approx.f64")
    case 19: F16_1("ex2.approx.f16")
    case 20: F16_1("ex2.approx.ftz.bf16")
    case 21: F16_1("tanh.approx.f16")
    case 22: F16_1("tanh.approx.bf16")
    case 23: U32_1("ex2.approx.f16x2")
    case 24: U32_1("ex2.approx.ftz.bf16x2")
    case 25: U32_1("tanh.approx.f16x2")
    case 26: U32_1("tanh.approx.bf16x2")
    case 30: F32_2("div.approx.f32")
    case 31: F32_2("div.approx.ftz.f32")
    case 32: F32_2("div.full.f32")
    case 33: F32_2("div.full.ftz.f32")
    }
    return 0xdeadbeefu;
}
