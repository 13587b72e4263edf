/* The device's results where C++ leaves a result undefined, as measured on an NVIDIA
   H200 (driver 580.159.04, sm_90 code from nvcc 13.5; kernels-host/tests/data/
   h200-device-defined.txt, compared case by case by tests/device_defined.rs). Every
   helper that emulates them (simtwin/device_defined.h, the runtime's slow paths, the
   conversion intrinsics) reads them here. Plain C: the runtime includes it too. */
#ifndef __SIMTWIN_DEVICE_VALUES_H
#define __SIMTWIN_DEVICE_VALUES_H

/* float or double -> integer (cvt.rzi and the __float2int_rn... intrinsics): out of range
   saturates to the range's end; 8- and 16-bit destinations are converted to 32 bits of
   the same signedness, saturating, then truncated. NaN gives: */
#define __SIMTWIN_DV_NAN_F32_TO_32 0x0u                   /* float NaN -> (unsigned) int */
#define __SIMTWIN_DV_NAN_F64_TO_32 0x80000000u            /* double NaN -> (unsigned) int */
#define __SIMTWIN_DV_NAN_TO_64 0x8000000000000000ull      /* NaN -> (unsigned) long long */

/* x / 0 and x % 0: all ones of 32 bits for 32-bit types; for 64-bit types all ones of 32
   bits when the dividend, as an unsigned 64-bit value, fits in 32 bits (the device's
   64-bit division takes its 32-bit path), else all ones of 64 bits. INT_MIN / -1 is
   INT_MIN and INT_MIN % -1 is 0 (for 32 and 64 bits). */
#define __SIMTWIN_DV_DIV0_32 0xffffffffu
#define __SIMTWIN_DV_DIV0_64_NARROW 0xffffffffull
#define __SIMTWIN_DV_DIV0_64 0xffffffffffffffffull

/* Shifts by at least the operand's width (a negative amount counts as unsigned): << gives
   0, >> gives 0 (unsigned) or the sign (signed): the device clamps the amount to the
   width. The amount is a 32-bit operand of the device's shift, so a 64-bit amount is
   taken modulo 2^32 first (from the PTX ISA, not measured). */

#endif
