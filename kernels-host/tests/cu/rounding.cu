// Directed-rounding intrinsics over arrays of inputs. One CUDA thread loops over n.
#include <cuda_runtime.h>

extern "C" __global__ void f_ops(const float *a, const float *b, const float *c, float *out, int n) {
    for (int i = 0; i < n; ++i) {
        float x = a[i], y = b[i], z = c[i];
        float *o = out + 28 * i;
        o[0] = __fadd_rn(x, y); o[1] = __fadd_rz(x, y); o[2] = __fadd_ru(x, y); o[3] = __fadd_rd(x, y);
        o[4] = __fsub_rn(x, y); o[5] = __fsub_rz(x, y); o[6] = __fsub_ru(x, y); o[7] = __fsub_rd(x, y);
        o[8] = __fmul_rn(x, y); o[9] = __fmul_rz(x, y); o[10] = __fmul_ru(x, y); o[11] = __fmul_rd(x, y);
        o[12] = __fdiv_rn(x, y); o[13] = __fdiv_rz(x, y); o[14] = __fdiv_ru(x, y); o[15] = __fdiv_rd(x, y);
        o[16] = __fsqrt_rn(x); o[17] = __fsqrt_rz(x); o[18] = __fsqrt_ru(x); o[19] = __fsqrt_rd(x);
        o[20] = __frcp_rn(x); o[21] = __frcp_rz(x); o[22] = __frcp_ru(x); o[23] = __frcp_rd(x);
        o[24] = __fmaf_rn(x, y, z); o[25] = __fmaf_rz(x, y, z); o[26] = __fmaf_ru(x, y, z); o[27] = __fmaf_rd(x, y, z);
    }
}

extern "C" __global__ void d_ops(const double *a, const double *b, double *out, int n) {
    for (int i = 0; i < n; ++i) {
        double x = a[i], y = b[i];
        double *o = out + 24 * i;
        o[0] = __dadd_rn(x, y); o[1] = __dadd_rz(x, y); o[2] = __dadd_ru(x, y); o[3] = __dadd_rd(x, y);
        o[4] = __dsub_rn(x, y); o[5] = __dsub_rz(x, y); o[6] = __dsub_ru(x, y); o[7] = __dsub_rd(x, y);
        o[8] = __dmul_rn(x, y); o[9] = __dmul_rz(x, y); o[10] = __dmul_ru(x, y); o[11] = __dmul_rd(x, y);
        o[12] = __ddiv_rn(x, y); o[13] = __ddiv_rz(x, y); o[14] = __ddiv_ru(x, y); o[15] = __ddiv_rd(x, y);
        o[16] = __dsqrt_rn(x); o[17] = __dsqrt_rz(x); o[18] = __dsqrt_ru(x); o[19] = __dsqrt_rd(x);
        o[20] = __drcp_rn(x); o[21] = __drcp_rz(x); o[22] = __drcp_ru(x); o[23] = __drcp_rd(x);
    }
}

extern "C" __global__ void d_fma(const double *a, const double *b, const double *c, double *out, int n) {
    for (int i = 0; i < n; ++i) {
        out[4 * i + 0] = __fma_rn(a[i], b[i], c[i]);
        out[4 * i + 1] = __fma_rz(a[i], b[i], c[i]);
        out[4 * i + 2] = __fma_ru(a[i], b[i], c[i]);
        out[4 * i + 3] = __fma_rd(a[i], b[i], c[i]);
    }
}

extern "C" __global__ void f_rsqrt(const float *a, float *out, int n) {
    for (int i = 0; i < n; ++i) out[i] = __frsqrt_rn(a[i]);
}
