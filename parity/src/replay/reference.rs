//! Correctly rounded binary32 references: a fast double-precision path with a rounding
//! filter, and MPFR (through rug) for the inputs the filter does not accept.
//!
//! # Why the double path is safe
//!
//! For an input `x` (a binary32 value, exact in binary64) the reference function is
//! evaluated by the host libm in binary64: `y = f((double)x)`. glibc documents its
//! binary64 `log2`, `exp2`, `log`, `exp`, `sin`, `cos`, `cbrt`, `log10`, `exp10`, `pow`
//! with errors of at most a few ulp (libm-test-ulps lists 0-3 ulp on x86_64; `sqrt` is
//! correctly rounded), i.e. a relative error below 2^-50. The filter accepts `y` only when
//! `y*(1-2^-40)` and `y*(1+2^-40)` round to the same binary32 value: then no binary32
//! rounding boundary (a midpoint between two floats, or FLT_MAX + half an ulp, the
//! overflow threshold) lies within 2^-40 relative of `y`, and since the exact result lies
//! within 2^-50 relative of `y`, it rounds to the same float. The margin (2^10 times the
//! documented error) also covers the two roundings made while forming `y*(1±2^-40)`
//! (2^-53 each). Subnormal results are covered: binary64 represents every value of the
//! binary32 subnormal range as a normal number with full relative accuracy, and the
//! double-to-float conversion rounds them exactly as binary32 does. Everything else
//! (about 2^-15 of all inputs) goes to MPFR: the function at 24 bits, round to nearest,
//! then subnormalised with binary32's exponent range (`subnormalize_ieee_round`, which
//! accounts for the first rounding, so there is no double rounding), then converted to
//! f32 (2^128 after rounding becomes +inf: results past FLT_MAX + half an ulp overflow).
//! The test suite compares the double path with MPFR on random and boundary inputs.

use rug::float::Round;
use rug::ops::{MulAssignRound, PowAssignRound};
use rug::Float;
use std::cmp::Ordering;

/// A reference function of one binary32 argument.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum RefFn {
    /// log2 x
    Log2,
    /// 2^x
    Exp2,
    /// ln x
    Log,
    /// e^x
    Exp,
    /// sqrt x
    Sqrt,
    /// cbrt x
    Cbrt,
    /// sin x
    Sin,
    /// cos x
    Cos,
    /// log10 x
    Log10,
    /// 10^x
    Exp10,
    /// x^p for a fixed binary32 exponent p.
    Pow(f32),
    /// x * c for a fixed binary32 c (exact product, correctly rounded: a sanity reference).
    Scale(f32),
}

extern "C" {
    fn exp10(x: f64) -> f64;
}

impl RefFn {
    /// Parses a function name as `--function`/`--reference` take it: `log2` or `log2f`,
    /// `ln`, ..., `pow:P`/`powf:P`, `scale:C`.
    pub fn parse(s: &str) -> anyhow::Result<RefFn> {
        let s = s.trim();
        let base = s.strip_suffix('f').filter(|b| !b.is_empty() && *b != "p").unwrap_or(s);
        Ok(match base {
            "log2" => RefFn::Log2,
            "exp2" => RefFn::Exp2,
            "log" | "ln" => RefFn::Log,
            "exp" => RefFn::Exp,
            "sqrt" => RefFn::Sqrt,
            "cbrt" => RefFn::Cbrt,
            "sin" => RefFn::Sin,
            "cos" => RefFn::Cos,
            "log10" => RefFn::Log10,
            "exp10" => RefFn::Exp10,
            _ => {
                if let Some(p) = s.strip_prefix("powf:").or_else(|| s.strip_prefix("pow:")) {
                    let v: f32 = p.parse().map_err(|e| anyhow::anyhow!("bad exponent {p:?}: {e}"))?;
                    RefFn::Pow(v)
                } else if let Some(c) = s.strip_prefix("scale:") {
                    let v: f32 = c.parse().map_err(|e| anyhow::anyhow!("bad factor {c:?}: {e}"))?;
                    RefFn::Scale(v)
                } else {
                    anyhow::bail!(
                        "unknown reference {s:?}: expected log2, exp2, log, exp, sqrt, cbrt, sin, cos, log10, exp10, pow:<p>, scale:<c>"
                    )
                }
            }
        })
    }

    /// The name [`RefFn::parse`] reads back (`log2`, `pow:2.5`, ...).
    pub(crate) fn name(&self) -> String {
        match self {
            RefFn::Log2 => "log2".into(),
            RefFn::Exp2 => "exp2".into(),
            RefFn::Log => "log".into(),
            RefFn::Exp => "exp".into(),
            RefFn::Sqrt => "sqrt".into(),
            RefFn::Cbrt => "cbrt".into(),
            RefFn::Sin => "sin".into(),
            RefFn::Cos => "cos".into(),
            RefFn::Log10 => "log10".into(),
            RefFn::Exp10 => "exp10".into(),
            RefFn::Pow(p) => format!("pow:{p:?}"),
            RefFn::Scale(c) => format!("scale:{c:?}"),
        }
    }

    /// The function in binary64 (host libm).
    #[inline(always)]
    pub fn eval_f64(&self, x: f64) -> f64 {
        match *self {
            RefFn::Log2 => x.log2(),
            RefFn::Exp2 => x.exp2(),
            RefFn::Log => x.ln(),
            RefFn::Exp => x.exp(),
            RefFn::Sqrt => x.sqrt(),
            RefFn::Cbrt => x.cbrt(),
            RefFn::Sin => x.sin(),
            RefFn::Cos => x.cos(),
            RefFn::Log10 => x.log10(),
            // SAFETY: glibc's exp10, a pure function of a double.
            RefFn::Exp10 => unsafe { exp10(x) },
            RefFn::Pow(p) => x.powf(p as f64),
            RefFn::Scale(c) => x * c as f64,
        }
    }

    /// The correctly rounded binary32 result computed by MPFR at 24 bits with binary32's
    /// exponent range. Returns the f32 and the ternary value of the rounding.
    pub fn mpfr_f32(&self, x: f32) -> f32 {
        if x.is_nan() {
            return f32::NAN;
        }
        let mut f = Float::with_val(24, x);
        let o = self.apply_round(&mut f, Round::Nearest);
        if f.is_nan() {
            return f32::NAN;
        }
        f.subnormalize_ieee_round(o, Round::Nearest);
        f.to_f32()
    }

    /// Applies the function in place at f's precision, returning the ternary value.
    pub fn apply_round(&self, f: &mut Float, r: Round) -> Ordering {
        match *self {
            RefFn::Log2 => f.log2_round(r),
            RefFn::Exp2 => f.exp2_round(r),
            RefFn::Log => f.ln_round(r),
            RefFn::Exp => f.exp_round(r),
            RefFn::Sqrt => f.sqrt_round(r),
            RefFn::Cbrt => f.cbrt_round(r),
            RefFn::Sin => f.sin_round(r),
            RefFn::Cos => f.cos_round(r),
            RefFn::Log10 => f.log10_round(r),
            RefFn::Exp10 => f.exp10_round(r),
            RefFn::Pow(p) => {
                let e = Float::with_val(24, p);
                f.pow_assign_round(&e, r)
            }
            RefFn::Scale(c) => {
                let e = Float::with_val(24, c);
                f.mul_assign_round(&e, r)
            }
        }
    }

    /// The exact result at `prec` bits (for ulp errors and hard-case distances).
    pub fn mpfr_high(&self, x: f32, prec: u32) -> Float {
        let mut f = Float::with_val(prec, x);
        // Inputs are exact at 24 bits; raise precision before applying the function.
        self.apply_round(&mut f, Round::Nearest);
        f
    }
}

/// The relative guard of the double filter.
pub const GUARD: f64 = 1.0 / (1u64 << 40) as f64;

/// Outcome of the reference for one input.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RefResult {
    /// Correctly rounded binary32 result.
    pub expected: f32,
    /// The binary64 value (for ulp errors).
    pub approx: f64,
    /// Whether MPFR decided.
    pub mpfr: bool,
}

impl RefFn {
    /// Fast path only: Some(expected) when the double result is accepted by the filter.
    #[inline(always)]
    pub fn fast(&self, x: f32) -> (f64, Option<f32>) {
        let y = self.eval_f64(x as f64);
        if y.is_nan() {
            // NaN from a domain error (log of a negative, sqrt(-1), sin(inf)): exact.
            return (y, Some(f32::NAN));
        }
        if y.is_infinite() || y == 0.0 {
            // Poles and binary64 overflow are exact or round to inf in binary32 too; a zero
            // from the double path is an exact zero (log2(1), sin(0)) or an underflow far
            // below binary32's range. Sign kept.
            return (y, Some(y as f32));
        }
        let d = y.abs() * GUARD;
        let a = (y - d) as f32;
        let b = (y + d) as f32;
        if a.to_bits() == b.to_bits() {
            (y, Some(a))
        } else {
            (y, None)
        }
    }

    /// The correctly rounded result, fast path first.
    #[inline]
    pub fn reference(&self, x: f32) -> RefResult {
        let (y, f) = self.fast(x);
        match f {
            Some(e) => RefResult { expected: e, approx: y, mpfr: false },
            None => RefResult { expected: self.mpfr_f32(x), approx: y, mpfr: true },
        }
    }
}

/// Size of one ulp of binary32 at the magnitude of `v` (results past FLT_MAX use 2^104).
pub fn ulp_f32(v: f64) -> f64 {
    let a = v.abs();
    if a < f32::MIN_POSITIVE as f64 {
        return f64::from_bits(((1023 - 149) as u64) << 52);
    }
    if !a.is_finite() || a >= f32::MAX as f64 {
        return f64::from_bits(((1023 + 104) as u64) << 52);
    }
    // binade exponent from the binary64 bits (a is normal in binary64)
    let e = ((a.to_bits() >> 52) & 0x7ff) as i64 - 1023;
    f64::from_bits(((1023 + e - 23) as u64) << 52)
}

/// Error of `got` relative to the exact value (approximated by the binary64 result
/// `exact`), in ulps of binary32 at the exact value.
pub fn ulp_error(got: f32, exact: f64) -> f64 {
    if got.is_nan() || exact.is_nan() {
        return if got.is_nan() && exact.is_nan() { 0.0 } else { f64::INFINITY };
    }
    let g = if got.is_infinite() { got.signum() as f64 * 128f64.exp2() } else { got as f64 };
    let e = if exact.is_infinite() { exact.signum() * 128f64.exp2() } else { exact };
    (g - e).abs() / ulp_f32(e)
}

/// Ordinal distance between two binary32 values (number of floats between them).
pub fn ulp_distance(a: f32, b: f32) -> u64 {
    if a.is_nan() || b.is_nan() {
        return u64::MAX;
    }
    fn ord(v: f32) -> i64 {
        let b = v.to_bits() as i32 as i64;
        if b < 0 {
            (i32::MIN as i64) - b
        } else {
            b
        }
    }
    (ord(a) - ord(b)).unsigned_abs()
}

/// Compares a result with the expected one: identical bits, or both NaN.
#[inline(always)]
pub fn same(got: u32, expected: f32) -> bool {
    let e = expected.to_bits();
    got == e || (f32::from_bits(got).is_nan() && expected.is_nan())
}
