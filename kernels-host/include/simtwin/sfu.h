/*
 * The special-function unit (SFU) of the emulated device: one host function per PTX
 * instruction form that the device computes with a hardware approximation.
 *
 * The PTX translator (PTX mode) calls exactly one of these per instruction, and twins'
 * fast intrinsics may call them too. runtime/simtwin_sfu.cpp models every one bit for bit
 * on the H200 (0 differences over every input, reports/device-math/);
 * runtime/sfu_exact.txt lists the exact forms for the translator, which marks a kernel
 * using any other form "not device-exact".
 *
 * f16/bf16 operands and results are their bit patterns (uint16_t, packed pairs uint32_t
 * with the first element in the low half, as PTX packs .f16x2).
 */
#ifndef SIMTWIN_SFU_H
#define SIMTWIN_SFU_H
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SIMTWIN_SFU_API __attribute__((visibility("hidden")))

/* ex2.approx.f32, ex2.approx.ftz.f32 */
float __simtwin_sfu_ex2_f32(float x) SIMTWIN_SFU_API;
float __simtwin_sfu_ex2_ftz_f32(float x) SIMTWIN_SFU_API;
/* lg2.approx.f32, lg2.approx.ftz.f32 */
float __simtwin_sfu_lg2_f32(float x) SIMTWIN_SFU_API;
float __simtwin_sfu_lg2_ftz_f32(float x) SIMTWIN_SFU_API;
/* rcp.approx.f32, rcp.approx.ftz.f32, rcp.approx.ftz.f64 */
float __simtwin_sfu_rcp_f32(float x) SIMTWIN_SFU_API;
float __simtwin_sfu_rcp_ftz_f32(float x) SIMTWIN_SFU_API;
double __simtwin_sfu_rcp_ftz_f64(double x) SIMTWIN_SFU_API;
/* rsqrt.approx.f32, rsqrt.approx.ftz.f32, rsqrt.approx.f64, rsqrt.approx.ftz.f64 */
float __simtwin_sfu_rsqrt_f32(float x) SIMTWIN_SFU_API;
float __simtwin_sfu_rsqrt_ftz_f32(float x) SIMTWIN_SFU_API;
double __simtwin_sfu_rsqrt_f64(double x) SIMTWIN_SFU_API;
double __simtwin_sfu_rsqrt_ftz_f64(double x) SIMTWIN_SFU_API;
/* sin.approx.f32, sin.approx.ftz.f32, cos.approx.f32, cos.approx.ftz.f32 */
float __simtwin_sfu_sin_f32(float x) SIMTWIN_SFU_API;
float __simtwin_sfu_sin_ftz_f32(float x) SIMTWIN_SFU_API;
float __simtwin_sfu_cos_f32(float x) SIMTWIN_SFU_API;
float __simtwin_sfu_cos_ftz_f32(float x) SIMTWIN_SFU_API;
/* tanh.approx.f32 */
float __simtwin_sfu_tanh_f32(float x) SIMTWIN_SFU_API;
/* sqrt.approx.f32, sqrt.approx.ftz.f32 */
float __simtwin_sfu_sqrt_f32(float x) SIMTWIN_SFU_API;
float __simtwin_sfu_sqrt_ftz_f32(float x) SIMTWIN_SFU_API;
/* div.approx.f32, div.approx.ftz.f32, div.full.f32, div.full.ftz.f32 */
float __simtwin_sfu_div_approx_f32(float a, float b) SIMTWIN_SFU_API;
float __simtwin_sfu_div_approx_ftz_f32(float a, float b) SIMTWIN_SFU_API;
float __simtwin_sfu_div_full_f32(float a, float b) SIMTWIN_SFU_API;
float __simtwin_sfu_div_full_ftz_f32(float a, float b) SIMTWIN_SFU_API;
/* ex2.approx.f16, ex2.approx.f16x2, ex2.approx.ftz.bf16, ex2.approx.ftz.bf16x2 */
uint16_t __simtwin_sfu_ex2_f16(uint16_t x) SIMTWIN_SFU_API;
uint32_t __simtwin_sfu_ex2_f16x2(uint32_t x) SIMTWIN_SFU_API;
uint16_t __simtwin_sfu_ex2_bf16(uint16_t x) SIMTWIN_SFU_API;
uint32_t __simtwin_sfu_ex2_bf16x2(uint32_t x) SIMTWIN_SFU_API;
/* tanh.approx.f16, .f16x2, .bf16, .bf16x2 */
uint16_t __simtwin_sfu_tanh_f16(uint16_t x) SIMTWIN_SFU_API;
uint32_t __simtwin_sfu_tanh_f16x2(uint32_t x) SIMTWIN_SFU_API;
uint16_t __simtwin_sfu_tanh_bf16(uint16_t x) SIMTWIN_SFU_API;
uint32_t __simtwin_sfu_tanh_bf16x2(uint32_t x) SIMTWIN_SFU_API;

#ifdef __cplusplus
}
#endif
#endif /* SIMTWIN_SFU_H */
