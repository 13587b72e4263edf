// Integer intrinsics: one row of results per input pair.
#include <cuda_runtime.h>

extern "C" __global__ void int_ops(const unsigned long long *a, const unsigned long long *b, unsigned long long *out, int n) {
    for (int k = 0; k < n; ++k) {
        unsigned long long x = a[k], y = b[k];
        unsigned xl = (unsigned)x, yl = (unsigned)y;
        unsigned long long *o = out + 26 * k;
        o[0] = (unsigned)__popc(xl); o[1] = (unsigned)__popcll(x);
        o[2] = (unsigned)__clz((int)xl); o[3] = (unsigned)__clzll((long long)x);
        o[4] = (unsigned)__ffs((int)xl); o[5] = (unsigned)__ffsll((long long)x);
        o[6] = __brev(xl); o[7] = __brevll(x);
        o[8] = __byte_perm(xl, yl, (unsigned)(x >> 32));
        o[9] = __funnelshift_l(xl, yl, (unsigned)(y >> 32)); o[10] = __funnelshift_lc(xl, yl, (unsigned)(y >> 32));
        o[11] = __funnelshift_r(xl, yl, (unsigned)(y >> 32)); o[12] = __funnelshift_rc(xl, yl, (unsigned)(y >> 32));
        o[13] = __umulhi(xl, yl); o[14] = (unsigned)__mulhi((int)xl, (int)yl);
        o[15] = __umul64hi(x, y); o[16] = (unsigned long long)__mul64hi((long long)x, (long long)y);
        o[17] = (unsigned)__mul24((int)xl, (int)yl); o[18] = __umul24(xl, yl);
        o[19] = __sad((int)xl, (int)yl, (unsigned)(x >> 32)); o[20] = __usad(xl, yl, (unsigned)(x >> 32));
        o[21] = (unsigned)__hadd((int)xl, (int)yl); o[22] = (unsigned)__rhadd((int)xl, (int)yl);
        o[23] = __uhadd(xl, yl); o[24] = __urhadd(xl, yl);
        o[25] = (unsigned)min((int)xl, (int)yl) ^ ((unsigned long long)max(xl, yl) << 32);
    }
}
