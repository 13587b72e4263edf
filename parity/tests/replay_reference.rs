//! The reference path: the binary64 filter agrees with MPFR, MPFR rounding honours
//! binary32's subnormal range and overflow threshold, and exact midpoints go to MPFR.

use parity::replay::reference::{ulp_distance, ulp_f32, RefFn};

fn lcg(state: &mut u64) -> u32 {
    *state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
    (*state >> 32) as u32
}

#[test]
fn fast_path_agrees_with_mpfr_on_random_inputs() {
    let fns = [
        RefFn::Log2,
        RefFn::Exp2,
        RefFn::Log,
        RefFn::Exp,
        RefFn::Sqrt,
        RefFn::Cbrt,
        RefFn::Sin,
        RefFn::Cos,
        RefFn::Log10,
        RefFn::Exp10,
        RefFn::Pow(2.5),
    ];
    let mut s = 12345u64;
    for f in fns {
        let mut accepted = 0;
        for _ in 0..3000 {
            let x = f32::from_bits(lcg(&mut s) & 0x7fff_ffff);
            let x = if matches!(f, RefFn::Exp | RefFn::Exp2 | RefFn::Exp10) { x.clamp(-200.0, 200.0) } else { x };
            let (_, fast) = f.fast(x);
            let m = f.mpfr_f32(x);
            if let Some(v) = fast {
                accepted += 1;
                assert!(
                    v.to_bits() == m.to_bits() || (v.is_nan() && m.is_nan()),
                    "{f:?}({x:e} = 0x{:08x}): fast {v:e} mpfr {m:e}",
                    x.to_bits()
                );
            }
        }
        assert!(accepted > 2900, "{f:?}: the filter accepted only {accepted} of 3000");
    }
}

#[test]
fn mpfr_rounds_subnormal_results_as_binary32() {
    // x * 2^-3 for x = 2^-146 * (1 + k 2^-23): an exact product, so the correctly rounded
    // binary32 result is what the hardware multiply gives, including subnormal rounding
    // (ties to even).
    let r = RefFn::Scale(0.125);
    for bits in (0x0080_0000u32..0x0080_0000 + 4096).chain(0x0000_0001..0x0000_1000) {
        let x = f32::from_bits(bits);
        let want = x * 0.125;
        assert_eq!(r.mpfr_f32(x).to_bits(), want.to_bits(), "scale 0.125 of 0x{bits:08x}");
        assert_eq!(r.reference(x).expected.to_bits(), want.to_bits());
    }
    // exp2 at -149.5: 2^-149.5 lies above the midpoint 2^-150 -> 2^-149; exp2(-150) = 2^-150
    // exactly is a tie -> 0 (even); exp2(-151) -> 0.
    assert_eq!(RefFn::Exp2.mpfr_f32(-149.5).to_bits(), 1);
    assert_eq!(RefFn::Exp2.mpfr_f32(-150.0).to_bits(), 0);
    assert_eq!(RefFn::Exp2.mpfr_f32(-150.0).to_bits(), RefFn::Exp2.reference(-150.0).expected.to_bits());
    assert!(RefFn::Exp2.reference(-150.0).mpfr, "an exact midpoint must be decided by MPFR");
    assert_eq!(RefFn::Exp2.mpfr_f32(-151.0).to_bits(), 0);
    // 2^-126 * (1 - 2^-24)...: exp2(-126 - tiny) rounds to the largest subnormal or min normal
    let x = f32::from_bits(0xc2fc_0001); // -126.00001
    let got = RefFn::Exp2.mpfr_f32(x);
    let y = (x as f64).exp2();
    assert_eq!(got.to_bits(), (y as f32).to_bits());
    assert!(got < f32::MIN_POSITIVE);
}

#[test]
fn mpfr_overflows_past_flt_max_plus_half_ulp() {
    // x * 2 for x in [2^127, 2^128): every product overflows to +inf.
    let r = RefFn::Scale(2.0);
    for bits in [0x7f00_0000u32, 0x7f00_0001, 0x7f7f_fffe, 0x7f7f_ffff] {
        assert_eq!(r.mpfr_f32(f32::from_bits(bits)), f32::INFINITY);
    }
    // Products near the top: exact in binary64 (48 bits), so one binary64-to-binary32
    // conversion is the correctly rounded result; both FLT_MAX and inf outcomes occur.
    let mut saw = (0, 0);
    for xb in 0x7f7f_fff0u32..=0x7f7f_ffff {
        for cb in [0x3f7f_fffeu32, 0x3f7f_ffff, 0x3f80_0000, 0x3f80_0001] {
            let (x, c) = (f32::from_bits(xb), f32::from_bits(cb));
            let want = ((x as f64) * (c as f64)) as f32;
            let got = RefFn::Scale(c).mpfr_f32(x);
            assert_eq!(got.to_bits(), want.to_bits(), "0x{xb:08x} * 0x{cb:08x}");
            if got.is_infinite() {
                saw.0 += 1
            } else if got == f32::MAX {
                saw.1 += 1
            }
        }
    }
    assert!(saw.0 > 0 && saw.1 > 0, "{saw:?}");
    // FLT_MAX * (1 - 2^-24) = 2^128 - 2^105 + 2^80: just above FLT_MAX - ulp
    assert_eq!(RefFn::Scale(f32::from_bits(0x3f7f_ffff)).mpfr_f32(f32::MAX).to_bits(), 0x7f7f_fffe);
    // exp2 just below 128 is finite, 128 is not
    let x = f32::from_bits(0x42ff_ffff); // 128 - 2^-17
    let got = RefFn::Exp2.mpfr_f32(x);
    assert!(got.is_finite() && got > 3.4e38, "exp2(128 - 2^-17) = {got:e}");
    assert_eq!(got.to_bits(), ((x as f64).exp2() as f32).to_bits());
    assert_eq!(RefFn::Exp2.mpfr_f32(128.0), f32::INFINITY);
}

#[test]
fn exact_midpoints_go_to_mpfr_and_round_to_even() {
    // (1 + 2^-12)^2 = 1 + 2^-11 + 2^-24: the midpoint between 1 + 2^-11 (even) and the next float.
    let x = f32::from_bits(0x3f80_0800);
    let r = RefFn::Pow(2.0);
    let res = r.reference(x);
    assert!(res.mpfr, "a tie must not be accepted by the filter");
    assert_eq!(res.expected.to_bits(), 0x3f80_1000);
    // (1 + 3 2^-12)^2 = 1 + 3 2^-11 + 9 2^-24: 9 2^-24 = 4.5 ulp -> not a tie; check vs product
    let x = f32::from_bits(0x3f80_1800);
    let res = r.reference(x);
    assert_eq!(res.expected.to_bits(), (((x as f64) * (x as f64)) as f32).to_bits());
    // sqrt of a perfect square is exact and accepted by the fast path
    let s = RefFn::Sqrt.reference(9.0);
    assert_eq!(s.expected, 3.0);
    assert!(!s.mpfr);
}

#[test]
fn near_boundary_inputs_are_decided_by_mpfr() {
    // scan a range and check every input the filter rejected against MPFR and against a
    // 128-bit evaluation's own rounding
    let r = RefFn::Log2;
    let mut decided = 0;
    for bits in 0x3f80_0000u32..0x3f80_0000 + (1 << 20) {
        let x = f32::from_bits(bits);
        let res = r.reference(x);
        if res.mpfr {
            decided += 1;
            let hi = r.mpfr_high(x, 128);
            assert_eq!(hi.to_f32().to_bits(), res.expected.to_bits(), "0x{bits:08x}");
            // and the binary64 value is within 2^-40 relative of a rounding boundary
            let y = res.approx;
            let f = res.expected as f64;
            let u = ulp_f32(f);
            let to_mid = ((y - f).abs() - u / 2.0).abs();
            assert!(to_mid <= y.abs() * 2f64.powi(-40) * 1.01, "0x{bits:08x} was not near a boundary");
        }
    }
    assert!(decided > 5 && decided < 200, "{decided} MPFR-decided inputs in 2^20 (expected about 2^20 * 2^-15)");
}

#[test]
fn ulp_helpers() {
    assert_eq!(ulp_f32(1.0), 2f64.powi(-23));
    assert_eq!(ulp_f32(1.9999), 2f64.powi(-23));
    assert_eq!(ulp_f32(2.0), 2f64.powi(-22));
    assert_eq!(ulp_f32(1e-40), 2f64.powi(-149));
    assert_eq!(ulp_distance(1.0, f32::from_bits(0x3f80_0003)), 3);
    assert_eq!(ulp_distance(f32::from_bits(1), -f32::from_bits(1)), 2);
    assert!(RefFn::parse("powf:2.5").unwrap() == RefFn::Pow(2.5));
    assert!(RefFn::parse("log2f").unwrap() == RefFn::Log2);
    assert!(RefFn::parse("bogus").is_err());
}
