//! Correctly rounded replacements for host libm float functions, for LD_PRELOAD:
//! `log2f`, `logf`, `exp2f`, `expf`.
//!
//! ```text
//! LD_PRELOAD=target/simtwin/lib/libsimtwin_crlibm.so ./cpu_reference ...
//! ```
//!
//! Each function evaluates in binary64 (a table-free method: log via
//! ln z = 2 atanh((z-1)/(z+1)) with z in [sqrt(1/2), sqrt(2)], exp via a Taylor
//! polynomial after reduction to |r| <= ln2/2), whose relative error is below 2^-50. A
//! rounding test then accepts the binary64 result only when `y(1-2^-46)` and `y(1+2^-46)`
//! round to the same binary32 value (no rounding boundary within 2^-46 of y, 16 times the
//! error bound). Otherwise (about 2^-21 of inputs) a double-double evaluation of the same
//! formulas (relative error about 2^-100) is rounded to binary32 exactly (ties and
//! midpoints handled on the pair). Correctness on every input is established by replaying
//! all binary32 inputs through `parity libm --library ... --function NAME` against MPFR
//! (parity/tests/replay_preload.rs; the exhaustive runs are ignored tests).
//!
//! Nothing here calls a float libm function (so the preload cannot recurse); `f64::mul_add`
//! is IEEE fma (hardware or glibc's exact software fma).

#![warn(missing_docs)]
#![allow(clippy::excessive_precision)]

#[derive(Clone, Copy, Debug)]
struct Dd {
    h: f64,
    l: f64,
}

const LN2: Dd = Dd { h: f64::from_bits(0x3FE6_2E42_FEFA_39EF), l: f64::from_bits(0x3C7A_BC9E_3B39_803F) };
const LOG2E: Dd = Dd { h: f64::from_bits(0x3FF7_1547_652B_82FE), l: f64::from_bits(0x3C77_77D0_FFDA_0D24) };
/// ln 2 split so that k * LN2_HI is exact for |k| < 2^20 (32 significant bits).
const LN2_HI: f64 = f64::from_bits(0x3FE6_2E42_FEE0_0000);
const LN2_LO: f64 = f64::from_bits(0x3DEA_39EF_3579_3C76);
const SQRT2: f64 = std::f64::consts::SQRT_2;
const GUARD: f64 = 1.0 / (1u64 << 46) as f64;

#[inline(always)]
fn two_sum(a: f64, b: f64) -> Dd {
    let s = a + b;
    let bb = s - a;
    Dd { h: s, l: (a - (s - bb)) + (b - bb) }
}
#[inline(always)]
fn fast_two_sum(a: f64, b: f64) -> Dd {
    let s = a + b;
    Dd { h: s, l: b - (s - a) }
}
#[inline(always)]
fn two_prod(a: f64, b: f64) -> Dd {
    let p = a * b;
    Dd { h: p, l: a.mul_add(b, -p) }
}
fn dd_add(a: Dd, b: Dd) -> Dd {
    let s = two_sum(a.h, b.h);
    let t = two_sum(a.l, b.l);
    let s = fast_two_sum(s.h, s.l + t.h);
    fast_two_sum(s.h, s.l + t.l)
}
fn dd_mul(a: Dd, b: Dd) -> Dd {
    let p = two_prod(a.h, b.h);
    fast_two_sum(p.h, p.l + (a.h * b.l + a.l * b.h))
}
fn dd_mul_d(a: Dd, b: f64) -> Dd {
    let p = two_prod(a.h, b);
    fast_two_sum(p.h, p.l + a.l * b)
}
fn dd_div_d(a: Dd, b: f64) -> Dd {
    let q1 = a.h / b;
    let r = dd_add(a, dd_mul_d(Dd { h: -q1, l: 0.0 }, b));
    let q2 = r.h / b;
    let r2 = dd_add(r, dd_mul_d(Dd { h: -q2, l: 0.0 }, b));
    let q3 = r2.h / b;
    let s = fast_two_sum(q1, q2);
    fast_two_sum(s.h, s.l + q3)
}
/// n/d for doubles, as a pair.
fn div_dd(n: f64, d: f64) -> Dd {
    let q1 = n / d;
    let r = (-q1).mul_add(d, n);
    let q2 = r / d;
    let r2 = dd_add(Dd { h: n, l: 0.0 }, dd_add(dd_mul_d(Dd { h: -q1, l: 0.0 }, d), dd_mul_d(Dd { h: -q2, l: 0.0 }, d)));
    let q3 = r2.h / d;
    let s = fast_two_sum(q1, q2);
    fast_two_sum(s.h, s.l + q3)
}

fn pow2(k: i32) -> f64 {
    f64::from_bits(((k + 1023) as u64) << 52)
}

/// Next binary32 value away from `f` toward `toward` (both finite).
fn neighbour(f: f32, up: bool) -> f32 {
    let b = f.to_bits();
    if f == 0.0 {
        return if up { f32::from_bits(1) } else { -f32::from_bits(1) };
    }
    let away = (f > 0.0) == up;
    f32::from_bits(if away { b + 1 } else { b - 1 })
}

/// Correct rounding of the pair h + l (|l| <= ulp(h)/2) to binary32.
fn round_dd(v: Dd) -> f32 {
    let f = v.h as f32;
    if v.l == 0.0 || !f.is_finite() || (f as f64) == v.h {
        // h is a float (then h + l rounds to it unless l crosses a midpoint, impossible:
        // |l| <= ulp64(h)/2 is far below half a binary32 ulp), or no correction possible.
        return f;
    }
    // The other neighbour of h.
    let g = neighbour(f, v.h > f as f64);
    let mid = (f as f64 + g as f64) * 0.5;
    if mid == v.h {
        // h is exactly a midpoint: the sign of l decides.
        let up = v.l > 0.0;
        let (lo, hi) = if (f as f64) < (g as f64) { (f, g) } else { (g, f) };
        return if up { hi } else { lo };
    }
    f
}

#[inline(always)]
fn accept(y: f64) -> Option<f32> {
    let d = y.abs() * GUARD;
    let a = (y - d) as f32;
    let b = (y + d) as f32;
    if a.to_bits() == b.to_bits() {
        Some(a)
    } else {
        None
    }
}

/// x (positive, finite, nonzero) = 2^e * z with z in [sqrt(1/2), sqrt(2)).
#[inline(always)]
fn split_log(x: f32) -> (i32, f64) {
    let xd = x as f64; // exact, and normal in binary64 even for subnormal x
    let b = xd.to_bits();
    let mut e = ((b >> 52) & 0x7ff) as i32 - 1023;
    let mut z = f64::from_bits((b & 0x000f_ffff_ffff_ffff) | 0x3ff0_0000_0000_0000);
    if z >= SQRT2 {
        z *= 0.5;
        e += 1;
    }
    (e, z)
}

/// ln z for z in [sqrt(1/2), sqrt(2)) in binary64: 2u(1 + u^2/3 + ... + u^20/21).
#[inline(always)]
fn ln_z_fast(z: f64) -> f64 {
    const INV_ODD: [f64; 11] = {
        let mut a = [0.0f64; 11];
        let mut i = 0;
        while i < 11 {
            a[i] = 1.0 / (2 * i + 1) as f64;
            i += 1;
        }
        a
    };
    let u = (z - 1.0) / (z + 1.0);
    let w = u * u;
    let mut s = INV_ODD[10];
    let mut i = 10;
    while i > 0 {
        i -= 1;
        s = s.mul_add_plain(w, INV_ODD[i]);
    }
    2.0 * u * s
}

trait MulAddPlain {
    fn mul_add_plain(self, a: f64, b: f64) -> f64;
}
impl MulAddPlain for f64 {
    #[inline(always)]
    fn mul_add_plain(self, a: f64, b: f64) -> f64 {
        self * a + b
    }
}

/// ln z as a pair, relative error about 2^-104.
fn ln_z_dd(z: f64) -> Dd {
    // z - 1 and z + 1 are exact (z has 24 significant bits, z in [0.7, 1.42)).
    let u = div_dd(z - 1.0, z + 1.0);
    let w = dd_mul(u, u);
    let mut s = div_dd(1.0, 43.0);
    let mut k = 41.0;
    while k >= 1.0 {
        s = dd_add(dd_mul(s, w), div_dd(1.0, k));
        k -= 2.0;
    }
    dd_mul_d(dd_mul(u, s), 2.0)
}

/// exp(r) for |r| <= 0.35 in binary64 (Taylor, degree 13).
#[inline(always)]
fn exp_small_fast(r: f64) -> f64 {
    const INV_FACT: [f64; 14] = {
        let mut a = [1.0f64; 14];
        let mut i = 1;
        while i < 14 {
            a[i] = a[i - 1] / i as f64;
            i += 1;
        }
        a
    };
    let mut p = INV_FACT[13];
    let mut i = 13;
    while i > 0 {
        i -= 1;
        p = p * r + INV_FACT[i];
    }
    p
}

/// exp(w) for |w| <= 0.36 as a pair (Taylor to degree 27).
fn exp_small_dd(w: Dd) -> Dd {
    let mut sum = Dd { h: 1.0, l: 0.0 };
    let mut term = Dd { h: 1.0, l: 0.0 };
    for n in 1..=27 {
        term = dd_div_d(dd_mul(term, w), n as f64);
        sum = dd_add(sum, term);
    }
    sum
}

/// A logarithm's result where x is not positive and finite: -inf at zero (either sign),
/// +inf at +inf, NaN below zero and at NaN; None for the rest.
#[inline(always)]
fn log_special(x: f32) -> Option<f32> {
    let ix = x.to_bits();
    if ix.wrapping_sub(1) < 0x7f7f_ffff {
        return None; // positive, finite, not zero
    }
    Some(if ix << 1 == 0 {
        f32::NEG_INFINITY
    } else if ix == 0x7f80_0000 {
        x
    } else {
        f32::NAN
    })
}

/// Correctly rounded log2f.
pub fn cr_log2f(x: f32) -> f32 {
    if let Some(special) = log_special(x) {
        return special;
    }
    let (e, z) = split_log(x);
    let y = e as f64 + ln_z_fast(z) * LOG2E.h;
    if let Some(f) = accept(y) {
        return f;
    }
    let l = dd_mul(ln_z_dd(z), LOG2E);
    round_dd(dd_add(Dd { h: e as f64, l: 0.0 }, l))
}

/// Correctly rounded logf.
pub fn cr_logf(x: f32) -> f32 {
    if let Some(special) = log_special(x) {
        return special;
    }
    let (e, z) = split_log(x);
    let y = (e as f64).mul_add_plain(LN2.h, ln_z_fast(z));
    if let Some(f) = accept(y) {
        return f;
    }
    let ek = dd_mul_d(LN2, e as f64);
    round_dd(dd_add(ek, ln_z_dd(z)))
}

/// Correctly rounded exp2f.
pub fn cr_exp2f(x: f32) -> f32 {
    if x.is_nan() {
        return x + x;
    }
    if x >= 128.0 {
        return f32::INFINITY;
    }
    if x < -151.0 {
        return 0.0;
    }
    let xd = x as f64;
    let k = xd.round();
    let f = xd - k; // exact, |f| <= 1/2
    let s = pow2(k as i32);
    let y = exp_small_fast(f * LN2.h) * s;
    if let Some(r) = accept(y) {
        return r;
    }
    let w = dd_mul_d(LN2, f);
    let p = exp_small_dd(w);
    round_dd(Dd { h: p.h * s, l: p.l * s })
}

/// Correctly rounded expf.
pub fn cr_expf(x: f32) -> f32 {
    if x.is_nan() {
        return x + x;
    }
    if x >= 89.0 {
        return f32::INFINITY;
    }
    if x <= -104.0 {
        return 0.0;
    }
    let xd = x as f64;
    let k = (xd * LOG2E.h).round();
    // r = x - k ln2, |r| <= ~0.35
    let r = (xd - k * LN2_HI) - k * LN2_LO;
    let s = pow2(k as i32);
    let y = exp_small_fast(r) * s;
    if let Some(v) = accept(y) {
        return v;
    }
    let kl = dd_mul_d(LN2, -k);
    let w = dd_add(Dd { h: xd, l: 0.0 }, kl);
    let p = exp_small_dd(w);
    round_dd(Dd { h: p.h * s, l: p.l * s })
}

/// The libm symbol `log2f`, interposed under LD_PRELOAD: [`cr_log2f`].
#[no_mangle]
pub extern "C" fn log2f(x: f32) -> f32 {
    cr_log2f(x)
}
/// The libm symbol `logf`, interposed under LD_PRELOAD: [`cr_logf`].
#[no_mangle]
pub extern "C" fn logf(x: f32) -> f32 {
    cr_logf(x)
}
/// The libm symbol `exp2f`, interposed under LD_PRELOAD: [`cr_exp2f`].
#[no_mangle]
pub extern "C" fn exp2f(x: f32) -> f32 {
    cr_exp2f(x)
}
/// The libm symbol `expf`, interposed under LD_PRELOAD: [`cr_expf`].
#[no_mangle]
pub extern "C" fn expf(x: f32) -> f32 {
    cr_expf(x)
}

/// The pair constants (0: ln 2, 1: log2 e), for the test suite to check against MPFR.
///
/// # Safety
/// `hi` and `lo` are null or writable.
#[no_mangle]
pub unsafe extern "C" fn simtwin_crlibm_constant(which: u32, hi: *mut f64, lo: *mut f64) -> i32 {
    let c = match which {
        0 => LN2,
        1 => LOG2E,
        _ => return -1,
    };
    if hi.is_null() || lo.is_null() {
        return -1;
    }
    // SAFETY: both non-null and writable per the contract above.
    unsafe {
        *hi = c.h;
        *lo = c.l;
    }
    0
}

/// Which functions this library replaces (NUL-separated list, for reports).
#[no_mangle]
pub static simtwin_crlibm_functions: [u8; 26] = *b"log2f\0logf\0exp2f\0expf\0\0\0\0\0";
