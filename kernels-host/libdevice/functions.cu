// The math functions and fast intrinsics that kernels-host's twins take from libdevice:
// one non-inlined wrapper per function, compiled by nvcc to PTX once per flag set
// (scripts/libdevice/generate), then translated to host C++ by simtwin-ptx. What nvcc
// inlines into each wrapper is exactly libdevice's code under those flags (nvvm-reflect's
// __CUDA_FTZ, __CUDA_PREC_DIV, __CUDA_PREC_SQRT; contraction as --fmad says).
#define F1(n) extern "C" __device__ __noinline__ float __simtwin_ld_##n(float x) { return n(x); }
#define F2(n) extern "C" __device__ __noinline__ float __simtwin_ld_##n(float x, float y) { return n(x, y); }
#define F3(n) extern "C" __device__ __noinline__ float __simtwin_ld_##n(float x, float y, float z) { return n(x, y, z); }
#define D1(n) extern "C" __device__ __noinline__ double __simtwin_ld_##n(double x) { return n(x); }
#define D2(n) extern "C" __device__ __noinline__ double __simtwin_ld_##n(double x, double y) { return n(x, y); }
#define D3(n) extern "C" __device__ __noinline__ double __simtwin_ld_##n(double x, double y, double z) { return n(x, y, z); }

F1(expf) F1(exp2f) F1(exp10f) F1(expm1f) F1(logf) F1(log2f) F1(log10f) F1(log1pf)
F2(powf) F1(sinf) F1(cosf) F1(tanf) F1(asinf) F1(acosf) F1(atanf) F2(atan2f)
F1(sinhf) F1(coshf) F1(tanhf) F1(asinhf) F1(acoshf) F1(atanhf)
F1(erff) F1(erfcf) F1(erfinvf) F1(erfcinvf) F1(erfcxf) F1(normcdff) F1(normcdfinvf)
F1(cbrtf) F1(rcbrtf) F1(rsqrtf) F1(sqrtf) F2(hypotf) F2(rhypotf) F3(norm3df) F3(rnorm3df)
F2(fmodf) F2(remainderf) F1(lgammaf) F1(tgammaf) F1(sinpif) F1(cospif) F2(fdividef)
extern "C" __device__ __noinline__ void __simtwin_ld_sincosf(float x, float *s, float *c) { sincosf(x, s, c); }
extern "C" __device__ __noinline__ void __simtwin_ld_sincospif(float x, float *s, float *c) { sincospif(x, s, c); }

F1(__expf) F1(__exp10f) F1(__logf) F1(__log2f) F1(__log10f) F1(__sinf) F1(__cosf) F1(__tanf)
F2(__powf) F2(__fdividef)
extern "C" __device__ __noinline__ void __simtwin_ld___sincosf(float x, float *s, float *c) { __sincosf(x, s, c); }

D1(exp) D1(exp2) D1(exp10) D1(expm1) D1(log) D1(log2) D1(log10) D1(log1p)
D2(pow) D1(sin) D1(cos) D1(tan) D1(asin) D1(acos) D1(atan) D2(atan2)
D1(sinh) D1(cosh) D1(tanh) D1(asinh) D1(acosh) D1(atanh)
D1(erf) D1(erfc) D1(erfinv) D1(erfcinv) D1(erfcx) D1(normcdf) D1(normcdfinv)
D1(cbrt) D1(rcbrt) D1(rsqrt) D2(hypot) D2(rhypot) D3(norm3d) D3(rnorm3d)
D2(fmod) D2(remainder) D1(lgamma) D1(tgamma) D1(sinpi) D1(cospi)
extern "C" __device__ __noinline__ void __simtwin_ld_sincos(double x, double *s, double *c) { sincos(x, s, c); }
extern "C" __device__ __noinline__ void __simtwin_ld_sincospi(double x, double *s, double *c) { sincospi(x, s, c); }
