//! Built kernel libraries, loaded and run with a mock runtime; results checked as bit
//! patterns against independent computations in Rust.

// Loops index per-thread results by thread id, as the CUDA they model does.
#![allow(clippy::needless_range_loop)]

mod common;
use common::*;
use std::cmp::Ordering;
use std::ffi::c_void;

// ---- inputs -------------------------------------------------------------------------

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

/// Floats of every class: random bit patterns, near-1 values, ties, subnormals, extremes.
fn float_inputs(n: usize, seed: u64) -> Vec<f32> {
    let mut r = Rng(seed);
    let special = [
        0.0f32,
        -0.0,
        1.0,
        -1.0,
        f32::MAX,
        -f32::MAX,
        f32::MIN_POSITIVE,
        1e-45,
        -1e-45,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::NAN,
        3.0,
        0.1,
        16777216.0,
        16777217.0,
        8388608.5,
        2.5,
        -2.5,
    ];
    let mut v: Vec<f32> = special.to_vec();
    while v.len() < n {
        let x = r.next();
        v.push(match x % 4 {
            0 => f32::from_bits(x as u32 >> 1 ^ (x >> 40) as u32),       // anything
            1 => f32::from_bits(0x3f80_0000 + ((x >> 8) as u32 & 0xff)), // near 1
            2 => f32::from_bits((x as u32) & 0x807f_ffff | (((x >> 32) as u32 % 6) << 23)), // subnormal/tiny
            _ => f32::from_bits(((x >> 16) as u32 & 0x80ff_ffff) | 0x7e00_0000), // huge
        });
    }
    v
}

// ---- independent directed rounding -------------------------------------------------

#[derive(Clone, Copy, Debug)]
enum Mode {
    Rn,
    Rz,
    Ru,
    Rd,
}
const MODES: [Mode; 4] = [Mode::Rn, Mode::Rz, Mode::Ru, Mode::Rd];

/// Rounds the exact value X, known through `cmp(y) = X.cmp(y)` for finite y, starting
/// from its round-to-nearest result `rn`. Signed zero results take `zero_sign`.
macro_rules! round_fn {
    ($name:ident, $t:ty) => {
        fn $name(rn: $t, cmp: &dyn Fn($t) -> Ordering, mode: Mode, zero: $t) -> $t {
            let positive = cmp(0.0) != Ordering::Less;
            if cmp(0.0) == Ordering::Equal {
                return zero;
            }
            let mode = match (mode, positive) {
                (Mode::Rz, true) => Mode::Rd,
                (Mode::Rz, false) => Mode::Ru,
                (m, _) => m,
            };
            if let Mode::Rn = mode {
                return rn;
            }
            let c0 = rn.clamp(<$t>::MIN, <$t>::MAX);
            let mut c = c0;
            let le = |y: $t| y.is_infinite() && y < 0.0 || (y.is_finite() && cmp(y) != Ordering::Less);
            let ge = |y: $t| y.is_infinite() && y > 0.0 || (y.is_finite() && cmp(y) != Ordering::Greater);
            match mode {
                Mode::Rd => {
                    while !le(c) {
                        c = c.next_down();
                    }
                    while le(c.next_up()) {
                        c = c.next_up();
                    }
                }
                _ => {
                    while !ge(c) {
                        c = c.next_up();
                    }
                    while ge(c.next_down()) {
                        c = c.next_down();
                    }
                }
            }
            if c == 0.0 {
                if positive {
                    0.0
                } else {
                    -0.0
                }
            } else {
                c
            }
        }
    };
}
round_fn!(round_f32, f32);
round_fn!(round_f64, f64);

fn two_sum(a: f64, b: f64) -> (f64, f64) {
    let s = a + b;
    let bb = s - a;
    (s, (a - (s - bb)) + (b - bb))
}
fn ord(a: f64, b: f64) -> Ordering {
    a.partial_cmp(&b).unwrap()
}
/// X = s + e (exact, |e| <= ulp(s)/2) compared with y.
fn cmp_sum(s: f64, e: f64, y: f64) -> Ordering {
    if s.is_infinite() {
        return if s > 0.0 { Ordering::Greater } else { Ordering::Less };
    }
    if s != y {
        ord(s, y)
    } else {
        ord(e, 0.0)
    }
}
fn same_bits32(a: f32, b: f32) -> bool {
    a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan())
}
fn same_bits64(a: f64, b: f64) -> bool {
    a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan())
}
/// Sign of an exact zero sum in `mode` (IEEE 754: +0 except in round-down).
fn zero_sum32(a: f32, b: f32, m: Mode) -> f32 {
    if a == 0.0 && b == 0.0 && a.is_sign_negative() == b.is_sign_negative() {
        a
    } else if let Mode::Rd = m {
        -0.0
    } else {
        0.0
    }
}

/// The expected f32 result of op `k` (0 add, 1 sub, 2 mul, 3 div, 4 sqrt, 5 rcp, 6 fma).
fn expect_f32(k: usize, m: Mode, a: f32, b: f32, c: f32) -> f32 {
    let (a6, b6, c6) = (a as f64, b as f64, c as f64);
    let rn = match k {
        0 => a + b,
        1 => a - b,
        2 => a * b,
        3 => a / b,
        4 => a.sqrt(),
        5 => 1.0 / a,
        _ => a.mul_add(b, c),
    };
    let finite_in = a.is_finite() && (k >= 4 && k != 6 || b.is_finite()) && (k != 6 || c.is_finite());
    if !finite_in || rn.is_nan() || (k == 3 && b == 0.0) || (k == 5 && a == 0.0) {
        return rn; // infinities, NaN and exact division by zero: the same in every mode
    }
    match k {
        0 | 1 => {
            let b6 = if k == 1 { -b6 } else { b6 };
            let (s, e) = two_sum(a6, b6);
            round_f32(rn, &|y| cmp_sum(s, e, y as f64), m, zero_sum32(a, if k == 1 { -b } else { b }, m))
        }
        2 => {
            let p = a6 * b6;
            round_f32(rn, &|y| ord(p, y as f64), m, rn)
        }
        3 => round_f32(
            rn,
            &|y| {
                let o = ord(a6, y as f64 * b6);
                if b > 0.0 {
                    o
                } else {
                    o.reverse()
                }
            },
            m,
            rn,
        ),
        4 => round_f32(rn, &|y| if y < 0.0 { Ordering::Greater } else { ord(a6, y as f64 * y as f64) }, m, rn),
        5 => round_f32(
            rn,
            &|y| {
                let o = ord(1.0, y as f64 * a6);
                if a > 0.0 {
                    o
                } else {
                    o.reverse()
                }
            },
            m,
            rn,
        ),
        _ => {
            let (s, e) = two_sum(a6 * b6, c6);
            let p = a6 * b6;
            let zero = if p == 0.0 && c == 0.0 && p.is_sign_negative() == c.is_sign_negative() {
                if c.is_sign_negative() {
                    -0.0
                } else {
                    0.0
                }
            } else if let Mode::Rd = m {
                -0.0
            } else {
                0.0
            };
            round_f32(rn, &|y| cmp_sum(s, e, y as f64), m, zero)
        }
    }
}

#[test]
fn float_directed_rounding_is_exact() {
    let m = open("rounding");
    let mut a = float_inputs(3000, 0x1234_5678);
    let mut b = float_inputs(3000, 0x9abc_def1);
    let mut c = float_inputs(3000, 0x0fed_cba9);
    // Exact ties for add: 1 + 2^-24 (half an ulp), 1 + 3*2^-24; and cancellation to zero.
    for (x, y) in [(1.0f32, 5.960_464_5e-8), (1.000_000_1, 5.960_464_5e-8), (1.5, -1.5), (-0.0, 0.0), (-0.0, -0.0), (f32::MAX, f32::MAX)] {
        a.push(x);
        b.push(y);
        c.push(-x * y);
    }
    let n = a.len();
    let mut out = vec![0f32; 28 * n];
    let (mut pa, mut pb, mut pc, mut po, mut nn) = (a.as_ptr(), b.as_ptr(), c.as_ptr(), out.as_mut_ptr(), n as i32);
    launch(&m, "f_ops", 1, &[arg(&mut pa), arg(&mut pb), arg(&mut pc), arg(&mut po), arg(&mut nn)], &mut []);
    let mut bad = Vec::new();
    for i in 0..n {
        for k in 0..7 {
            for (mi, mode) in MODES.iter().enumerate() {
                let got = out[28 * i + 4 * k + mi];
                let want = expect_f32(k, *mode, a[i], b[i], c[i]);
                if !same_bits32(got, want) {
                    bad.push(format!(
                        "op{k} {mode:?} ({:e}, {:e}, {:e}): got {:#010x} want {:#010x}",
                        a[i],
                        b[i],
                        c[i],
                        got.to_bits(),
                        want.to_bits()
                    ));
                }
            }
        }
    }
    assert!(bad.is_empty(), "{} mismatches, first: {:#?}", bad.len(), &bad[..bad.len().min(10)]);
}

fn double_inputs(n: usize, seed: u64) -> Vec<f64> {
    // Exponents kept within +-400 so that the exact residuals of the reference stay exact;
    // overflow, underflow and specials are covered by fixed cases.
    let mut r = Rng(seed);
    let mut v = vec![1.0, -1.0, 3.0, 0.1, 2.5, 9007199254740993.0, 1.0 + f64::EPSILON];
    while v.len() < n {
        let x = r.next();
        let e = ((x >> 52) % 800) + 1023 - 400;
        v.push(f64::from_bits((x & 0x800f_ffff_ffff_ffff) | (e << 52)));
    }
    v
}

#[test]
fn double_directed_rounding_is_exact() {
    let m = open("rounding");
    let a = double_inputs(3000, 77);
    let b = double_inputs(3000, 99);
    let n = a.len();
    let mut out = vec![0f64; 24 * n];
    let (mut pa, mut pb, mut po, mut nn) = (a.as_ptr(), b.as_ptr(), out.as_mut_ptr(), n as i32);
    launch(&m, "d_ops", 1, &[arg(&mut pa), arg(&mut pb), arg(&mut po), arg(&mut nn)], &mut []);
    let mut bad = 0;
    for i in 0..n {
        let (x, y) = (a[i], b[i]);
        for k in 0..6 {
            let rn = match k {
                0 => x + y,
                1 => x - y,
                2 => x * y,
                3 => x / y,
                4 => x.sqrt(),
                _ => 1.0 / x,
            };
            for (mi, mode) in MODES.iter().enumerate() {
                let want = if rn.is_nan() {
                    rn
                } else {
                    match k {
                        0 | 1 => {
                            let yy = if k == 1 { -y } else { y };
                            let (s, e) = two_sum(x, yy);
                            let zero = zero_sum32(x as f32, yy as f32, *mode) as f64; // operands here are nonzero
                            round_f64(rn, &|c| cmp_sum(s, e, c), *mode, zero)
                        }
                        2 => {
                            let e = x.mul_add(y, -rn);
                            round_f64(rn, &|c| cmp_sum(rn, e, c), *mode, rn)
                        }
                        3 => round_f64(
                            rn,
                            &|c| {
                                let r = (-c).mul_add(y, x);
                                let o = ord(r, 0.0);
                                if y > 0.0 {
                                    o
                                } else {
                                    o.reverse()
                                }
                            },
                            *mode,
                            rn,
                        ),
                        4 => round_f64(rn, &|c| if c < 0.0 { Ordering::Greater } else { ord((-c).mul_add(c, x), 0.0) }, *mode, rn),
                        _ => round_f64(
                            rn,
                            &|c| {
                                let o = ord((-c).mul_add(x, 1.0), 0.0);
                                if x > 0.0 {
                                    o
                                } else {
                                    o.reverse()
                                }
                            },
                            *mode,
                            rn,
                        ),
                    }
                };
                let got = out[24 * i + 4 * k + mi];
                if !same_bits64(got, want) {
                    bad += 1;
                    eprintln!("dop{k} {mode:?} ({x:e}, {y:e}): got {:#x} want {:#x}", got.to_bits(), want.to_bits());
                }
            }
        }
    }
    assert_eq!(bad, 0);
}

#[test]
fn double_edge_cases_overflow_underflow_zeros() {
    let m = open("rounding");
    let tiny = f64::from_bits(1); // 2^-1074
                                  // (x, y) and the expected [rn, rz, ru, rd] of x+y, x*y, x/y.
    let cases: &[(f64, f64, usize, [f64; 4])] = &[
        (f64::MAX, f64::MAX, 0, [f64::INFINITY, f64::MAX, f64::INFINITY, f64::MAX]),
        (-f64::MAX, -f64::MAX, 0, [f64::NEG_INFINITY, -f64::MAX, -f64::MAX, f64::NEG_INFINITY]),
        (1.5, -1.5, 0, [0.0, 0.0, 0.0, -0.0]),
        (tiny, 0.5, 2, [0.0, 0.0, tiny, 0.0]),
        (-tiny, 0.5, 2, [-0.0, -0.0, -0.0, -tiny]),
        (3.0 * tiny, 0.5, 2, [2.0 * tiny, tiny, 2.0 * tiny, tiny]),
        (f64::MAX, 0.5, 3, [f64::INFINITY, f64::MAX, f64::INFINITY, f64::MAX]),
        (1.0, 3.0, 3, [1.0 / 3.0, 1.0 / 3.0, (1.0f64 / 3.0).next_up(), 1.0 / 3.0]),
        (
            f64::MIN_POSITIVE,
            3.0,
            3,
            [
                f64::from_bits(0x0005555555555555),
                f64::from_bits(0x0005555555555555),
                f64::from_bits(0x0005555555555556),
                f64::from_bits(0x0005555555555555),
            ],
        ),
    ];
    for (x, y, k, want) in cases {
        let (a, b) = ([*x], [*y]);
        let mut out = [0f64; 24];
        let (mut pa, mut pb, mut po, mut nn) = (a.as_ptr(), b.as_ptr(), out.as_mut_ptr(), 1i32);
        launch(&m, "d_ops", 1, &[arg(&mut pa), arg(&mut pb), arg(&mut po), arg(&mut nn)], &mut []);
        let col = [0, 8, 12][[0, 0, 1, 2][*k]];
        for j in 0..4 {
            assert!(same_bits64(out[col + j], want[j]), "case ({x:e},{y:e}) op{k} mode {j}: got {:e} want {:e}", out[col + j], want[j]);
        }
    }
    // fma with an exact zero and with a residual below the product's ulp.
    let (a, b, c) = ([1.0 + f64::EPSILON, 2.0], [1.0 - f64::EPSILON, 3.0], [-1.0, -6.0]);
    let mut out = [0f64; 8];
    let (mut pa, mut pb, mut pc, mut po, mut nn) = (a.as_ptr(), b.as_ptr(), c.as_ptr(), out.as_mut_ptr(), 2i32);
    launch(&m, "d_fma", 1, &[arg(&mut pa), arg(&mut pb), arg(&mut pc), arg(&mut po), arg(&mut nn)], &mut []);
    let e2 = -f64::EPSILON * f64::EPSILON; // exact: (1+e)(1-e) - 1 = -e^2
    assert_eq!(out[..4], [e2, e2, e2, e2]);
    assert!(same_bits64(out[4], 0.0) && same_bits64(out[5], 0.0) && same_bits64(out[6], 0.0) && same_bits64(out[7], -0.0));
}

#[test]
fn frsqrt_rn_is_correctly_rounded() {
    let m = open("rounding");
    let mut a: Vec<f32> = float_inputs(20000, 4242).into_iter().filter(|x| x.is_finite() && *x > 0.0).collect();
    a.extend([4.0f32, 0.25, 2.0, 1e-45, f32::MAX]);
    let mut out = vec![0f32; a.len()];
    let (mut pa, mut po, mut nn) = (a.as_ptr(), out.as_mut_ptr(), a.len() as i32);
    launch(&m, "f_rsqrt", 1, &[arg(&mut pa), arg(&mut po), arg(&mut nn)], &mut []);
    for (x, r) in a.iter().zip(out.iter()) {
        // r is correct iff both neighbouring midpoints m satisfy the right side of m^2 x = 1,
        // checked with the exact f64 product (m has <= 25 bits, m^2 <= 50, times x: use two steps).
        let check = |mid: f64| -> Ordering {
            let sq = mid * mid; // exact: 50 bits
            let (p, e) = (sq * (*x as f64), sq.mul_add(*x as f64, -(sq * (*x as f64))));
            cmp_sum(p, e, 1.0)
        };
        let lo = (r.next_down() as f64 + *r as f64) / 2.0;
        let hi = (r.next_up() as f64 + *r as f64) / 2.0;
        assert!(check(lo) == Ordering::Less && check(hi) == Ordering::Greater, "rsqrt({x:e}) = {r:e}");
    }
}

// ---- conversions --------------------------------------------------------------------

#[repr(C)]
#[derive(Default, Clone, Copy, Debug, PartialEq)]
struct FloatToInt {
    i: [i32; 4],
    u: [u32; 4],
    ll: [i64; 4],
    ull: [u64; 4],
}

/// Rust's `as` saturates and maps NaN to 0, as the device does: an independent reference.
/// Rust's saturating `as`, except NaN, which gives what the H200 gives
/// (tests/data/h200-device-defined.txt, devres_intrin_*): 0 from a float to 32 bits,
/// 0x80000000 from a double to 32 bits, 0x8000000000000000 to 64 bits.
fn f2i_expect(x: f64, from_double: bool) -> FloatToInt {
    let r = [x.round_ties_even(), x.trunc(), x.ceil(), x.floor()];
    if x.is_nan() {
        let w32 = if from_double { 0x8000_0000u32 } else { 0 };
        return FloatToInt { i: [w32 as i32; 4], u: [w32; 4], ll: [i64::MIN; 4], ull: [1u64 << 63; 4] };
    }
    FloatToInt { i: r.map(|v| v as i32), u: r.map(|v| v as u32), ll: r.map(|v| v as i64), ull: r.map(|v| v as u64) }
}

#[test]
fn float_and_double_to_int_round_and_saturate() {
    let m = open("convert");
    let mut xs = float_inputs(4000, 555);
    xs.extend([
        2147483520.0f32,
        2147483648.0,
        -2147483648.0,
        -2147483904.0,
        4294967040.0,
        4294967296.0,
        9.223372e18,
        1.8446743e19,
        1.8446744e19,
        -0.5,
        0.5,
        1.5,
        -1.5,
        -0.0,
        2.5e-1,
    ]);
    let mut out = vec![FloatToInt::default(); xs.len()];
    let (mut px, mut po, mut n) = (xs.as_ptr(), out.as_mut_ptr(), xs.len() as i32);
    launch(&m, "float_to_int", 1, &[arg(&mut px), arg(&mut po), arg(&mut n)], &mut []);
    for (x, got) in xs.iter().zip(&out) {
        assert_eq!(*got, f2i_expect(*x as f64, false), "float {x:e} ({:#x})", x.to_bits());
    }
    let mut ds: Vec<f64> = xs.iter().map(|&x| x as f64).collect();
    ds.extend([
        2147483647.5,
        2147483647.4,
        -2147483648.5,
        4294967295.5,
        9.223_372_036_854_776e18,
        -9.223_372_036_854_776e18,
        1.8446744073709552e19,
        f64::NAN,
        -1e300,
    ]);
    let mut out = vec![FloatToInt::default(); ds.len()];
    let (mut px, mut po, mut n) = (ds.as_ptr(), out.as_mut_ptr(), ds.len() as i32);
    launch(&m, "double_to_int", 1, &[arg(&mut px), arg(&mut po), arg(&mut n)], &mut []);
    for (x, got) in ds.iter().zip(&out) {
        assert_eq!(*got, f2i_expect(*x, true), "double {x:e}");
    }
}

#[repr(C)]
#[derive(Default, Clone, Copy, Debug)]
struct IntToFloat {
    i: [f32; 4],
    u: [f32; 4],
    ll: [f32; 4],
    ull: [f32; 4],
    lld: [f64; 4],
    ulld: [f64; 4],
}

/// X (an integer) compared with y, exactly.
fn cmp_int(v: i128, y: f64) -> Ordering {
    if y.abs() >= 9007199254740992.0 || y.fract() == 0.0 {
        v.cmp(&(y as i128))
    } else {
        ord(v as f64, y)
    }
}

#[test]
fn int_to_float_directed_forms_are_exact() {
    let m = open("convert");
    let mut r = Rng(31337);
    let mut xs: Vec<i64> = vec![
        0,
        1,
        -1,
        16777217,
        -16777217,
        16777219,
        i32::MAX as i64,
        i32::MIN as i64,
        u32::MAX as i64,
        i64::MAX,
        i64::MIN,
        -2,
        9007199254740993,
        (1i64 << 62) + 1,
    ];
    while xs.len() < 3000 {
        let v = r.next() as i64;
        xs.push(v >> (r.next() % 63));
    }
    let mut out = vec![IntToFloat::default(); xs.len()];
    let (mut px, mut po, mut n) = (xs.as_ptr(), out.as_mut_ptr(), xs.len() as i32);
    launch(&m, "int_to_float", 1, &[arg(&mut px), arg(&mut po), arg(&mut n)], &mut []);
    for (x, got) in xs.iter().zip(&out) {
        let vals: [(i128, [f32; 4], f32); 4] = [
            (*x as i32 as i128, got.i, *x as i32 as f32),
            (*x as u32 as i128, got.u, *x as u32 as f32),
            (*x as i128, got.ll, *x as f32),
            (*x as u64 as i128, got.ull, *x as u64 as f32),
        ];
        for (v, g, rn) in vals {
            for (mi, mode) in MODES.iter().enumerate() {
                let want = round_f32(rn, &|y| cmp_int(v, y as f64), *mode, 0.0);
                assert!(same_bits32(g[mi], want), "{v} {mode:?}: got {:e} want {:e}", g[mi], want);
            }
        }
        for (v, g, rn) in [(*x as i128, got.lld, *x as f64), (*x as u64 as i128, got.ulld, *x as u64 as f64)] {
            for (mi, mode) in MODES.iter().enumerate() {
                let want = round_f64(rn, &|y| cmp_int(v, y), *mode, 0.0);
                assert!(same_bits64(g[mi], want), "{v} {mode:?} (double): got {:e} want {:e}", g[mi], want);
            }
        }
    }
}

#[test]
fn double_to_float_directed_forms_are_exact() {
    let m = open("convert");
    let mut r = Rng(2718);
    let mut xs = vec![
        f64::MAX,
        -f64::MAX,
        1e-50,
        -1e-50,
        f32::MAX as f64 * 1.0000001,
        1.0 + 1e-12,
        0.1,
        -0.0,
        f64::INFINITY,
        f64::NAN,
        1.401298464324817e-45 * 0.5,
        1.401298464324817e-45 * 1.5,
    ];
    while xs.len() < 3000 {
        let x = r.next();
        let e = ((x >> 52) % 320) + 1023 - 160;
        xs.push(f64::from_bits((x & 0x800f_ffff_ffff_ffff) | (e << 52)));
    }
    let mut out = vec![0f32; 4 * xs.len()];
    let (mut px, mut po, mut n) = (xs.as_ptr(), out.as_mut_ptr(), xs.len() as i32);
    launch(&m, "double_to_float", 1, &[arg(&mut px), arg(&mut po), arg(&mut n)], &mut []);
    for (k, x) in xs.iter().enumerate() {
        for (mi, mode) in MODES.iter().enumerate() {
            let rn = *x as f32;
            let want = if !x.is_finite() { rn } else { round_f32(rn, &|y| ord(*x, y as f64), *mode, *x as f32) };
            assert!(same_bits32(out[4 * k + mi], want), "{x:e} {mode:?}: got {:e} want {:e}", out[4 * k + mi], want);
        }
    }
}

/// All finite non-negative binary16 values, decoded independently, in order.
fn half_value(h: u16) -> f64 {
    let e = ((h >> 10) & 0x1f) as i32;
    let m = (h & 0x3ff) as f64;
    let v = if e == 0 { m * 2f64.powi(-24) } else { (1024.0 + m) * 2f64.powi(e - 25) };
    if h & 0x8000 != 0 {
        -v
    } else {
        v
    }
}

fn half_expect(x: f32, mode: Mode) -> u16 {
    if x.is_nan() {
        return 0x7fff;
    }
    let neg = x.is_sign_negative();
    let v = (x as f64).abs();
    let up = matches!((mode, neg), (Mode::Ru, false) | (Mode::Rd, true));
    let toward_zero = matches!(mode, Mode::Rz) || matches!((mode, neg), (Mode::Ru, true) | (Mode::Rd, false));
    // Largest half <= v (0x7bff = 65504 at most), and the next one (0x7c00 counts as 65536 for ties).
    let mut lo = 0u16;
    while lo < 0x7bff && half_value(lo + 1) <= v {
        lo += 1;
    }
    let lo_v = half_value(lo);
    let hi_v = if lo == 0x7bff { 65536.0 } else { half_value(lo + 1) };
    let bits = if v.is_infinite() {
        0x7c00
    } else if lo_v == v || toward_zero {
        lo
    } else if up {
        lo + 1
    } else {
        let mid = (lo_v + hi_v) / 2.0;
        if v < mid || (v == mid && lo.is_multiple_of(2)) {
            lo
        } else {
            lo + 1
        }
    };
    let bits = bits.min(0x7c00);
    if neg {
        bits | 0x8000
    } else {
        bits
    }
}

#[test]
fn float_to_half_in_every_mode() {
    let m = open("convert");
    let mut xs: Vec<f32> = vec![
        65504.0,
        65519.996,
        65520.0,
        65536.0,
        1e9,
        5.9604645e-8,
        2.9802322e-8,
        2.9802326e-8,
        8.940697e-8,
        6.1035156e-5,
        6.097555e-5,
        1.0009766,
        1.000_488_3,
        1.001_464_8,
        -1.000_488_3,
        -0.0,
        0.0,
        f32::NAN,
        f32::INFINITY,
        -65520.0,
    ];
    let mut r = Rng(99);
    while xs.len() < 1500 {
        let x = r.next();
        xs.push(f32::from_bits(((x as u32) & 0x83ff_ffff) | (((x >> 40) as u32 % 40 + 100) << 23)));
    }
    let mut out = vec![0u16; 5 * xs.len()];
    let (mut px, mut po, mut n) = (xs.as_ptr(), out.as_mut_ptr(), xs.len() as i32);
    launch(&m, "float_to_half", 1, &[arg(&mut px), arg(&mut po), arg(&mut n)], &mut []);
    for (k, x) in xs.iter().enumerate() {
        for (mi, mode) in MODES.iter().enumerate() {
            assert_eq!(out[5 * k + mi], half_expect(*x, *mode), "{x:e} ({:#x}) {mode:?}", x.to_bits());
        }
        // half -> float -> half is the identity for non-NaN patterns.
        let h = (k * 977) as u16;
        if (h & 0x7fff) <= 0x7c00 {
            assert_eq!(out[5 * k + 4], h);
        }
    }
}

#[test]
fn bit_casts() {
    let m = open("convert");
    let (mut f, mut d) = (-1.5f32, 1.0f64 / 3.0);
    let mut out = [0u32; 8];
    let mut po = out.as_mut_ptr();
    launch(&m, "bitcasts", 1, &[arg(&mut f), arg(&mut d), arg(&mut po)], &mut []);
    let b = d.to_bits();
    assert_eq!(out, [0xbfc0_0000, 0x7f80_0001, b as u32, (b >> 32) as u32, (b >> 32) as u32, b as u32, 0x4000_0000, 1]);
}

#[test]
fn integer_intrinsics() {
    let m = open("intops");
    let mut r = Rng(8080);
    let mut a: Vec<u64> = vec![0, 1, u64::MAX, 0x8000_0000, 0x8000_0000_0000_0000, 0x00ff_ff00_1234_5678, 0xffff_ffff, 0x7fff_ffff];
    let mut b: Vec<u64> = vec![0, u64::MAX, 1, 0x8000_0000, 31 << 32, 32 << 32, 33 << 32, 0xffff_ffff];
    while a.len() < 2000 {
        a.push(r.next() >> (r.next() % 64));
        b.push(r.next() >> (r.next() % 64));
    }
    let n = a.len();
    let mut out = vec![0u64; 26 * n];
    let (mut pa, mut pb, mut po, mut nn) = (a.as_ptr(), b.as_ptr(), out.as_mut_ptr(), n as i32);
    launch(&m, "int_ops", 1, &[arg(&mut pa), arg(&mut pb), arg(&mut po), arg(&mut nn)], &mut []);
    for k in 0..n {
        let (x, y) = (a[k], b[k]);
        let (xl, yl) = (x as u32, y as u32);
        let (xi, yi) = (xl as i32, yl as i32);
        let hi = (x >> 32) as u32;
        let s = (y >> 32) as u32;
        let v = ((yl as u64) << 32) | xl as u64;
        let perm = (0..4).fold(0u32, |acc, i| {
            let sel = (hi >> (4 * i)) & 7;
            acc | ((((v >> (8 * sel)) & 0xff) as u32) << (8 * i))
        });
        let s24 = |z: u32| ((z << 8) as i32 >> 8) as i64;
        let want: [u64; 26] = [
            xl.count_ones() as u64,
            x.count_ones() as u64,
            xl.leading_zeros() as u64,
            x.leading_zeros() as u64,
            if xl == 0 { 0 } else { xl.trailing_zeros() as u64 + 1 },
            if x == 0 { 0 } else { x.trailing_zeros() as u64 + 1 },
            xl.reverse_bits() as u64,
            x.reverse_bits(),
            perm as u64,
            ((v << (s & 31)) >> 32) as u32 as u64,
            (((v as u128) << s.min(32)) >> 32) as u32 as u64,
            (v >> (s & 31)) as u32 as u64,
            (v >> s.min(32)) as u32 as u64,
            ((xl as u64 * yl as u64) >> 32),
            (((xi as i64 * yi as i64) >> 32) as i32 as u32) as u64,
            ((x as u128 * y as u128) >> 64) as u64,
            ((x as i64 as i128 * y as i64 as i128) >> 64) as u64,
            ((s24(xl) * s24(yl)) as u32) as u64,
            ((xl & 0xffffff) as u64 * (yl & 0xffffff) as u64) as u32 as u64,
            ((xi as i64 - yi as i64).unsigned_abs() as u32).wrapping_add(hi) as u64,
            (xl.abs_diff(yl)).wrapping_add(hi) as u64,
            (((xi as i64 + yi as i64) >> 1) as i32 as u32) as u64,
            (((xi as i64 + yi as i64 + 1) >> 1) as i32 as u32) as u64,
            ((xl as u64 + yl as u64) >> 1),
            ((xl as u64 + yl as u64 + 1) >> 1),
            (xi.min(yi) as u32 as u64) ^ ((xl.max(yl) as u64) << 32),
        ];
        for j in 0..26 {
            assert_eq!(out[26 * k + j], want[j], "op {j} on ({x:#x}, {y:#x})");
        }
    }
}

// ---- globals, shared memory, atomics, printf, traps ---------------------------------

fn global_ptr<T>(m: &kernels_host::module::LoadedModule, name: &str) -> *mut T {
    m.global(name).unwrap_or_else(|| panic!("no global {name}")).address as *mut T
}

#[test]
fn constant_tables_and_device_globals() {
    let m = open("memory");
    let man = &libs().built.iter().find(|b| b.manifest.library == "memory.so").unwrap().manifest;
    let g: Vec<_> = man.globals.iter().map(|g| (g.name.as_str(), g.symbol.as_str(), g.size, g.constant)).collect();
    assert_eq!(
        g,
        vec![
            ("weights", "weights", 20, true),
            ("primes", "primes", 16, true),
            ("counter", "counter", 8, false),
            ("histogram", "histogram", 64, false),
            ("dsum", "dsum", 8, false),
            ("stats::fsum", "_ZN5stats4fsumE", 4, false)
        ]
    );
    unsafe {
        // Tables initialised in the source; a host write (cuMemcpyHtoD to a __constant__) is seen by kernels.
        assert_eq!(std::slice::from_raw_parts(global_ptr::<i32>(&m, "primes"), 4), &[2, 3, 5, 7]);
        *global_ptr::<f32>(&m, "weights").add(4) = 10.0;
    }
    let mut out = vec![0f32; 20];
    let mut po = out.as_mut_ptr();
    launch(&m, "use_tables", 20, &[arg(&mut po)], &mut []);
    let w = [0.5f32, 1.5, 2.5, 3.5, 10.0];
    let p = [2f32, 3.0, 5.0, 7.0];
    for t in 0..20 {
        assert_eq!(out[t].to_bits(), (w[t % 5] * p[t % 4]).to_bits());
    }
    unsafe {
        assert_eq!(*global_ptr::<u64>(&m, "counter"), 20);
        let h = std::slice::from_raw_parts(global_ptr::<i32>(&m, "histogram"), 16);
        assert_eq!(h.iter().sum::<i32>(), 20);
        assert_eq!(h[3], 2);
        assert_eq!(h[5], 1);
        assert_eq!(*global_ptr::<f64>(&m, "dsum"), 5.0);
        assert_eq!(*global_ptr::<f32>(&m, "_ZN5stats4fsumE"), 20.0);
    }
}

#[test]
fn static_and_dynamic_shared_memory() {
    let m = open("memory");
    let mut smem = vec![0u8; 256];
    smem[0] = 7; // g_smem (namespace scope) aliases the same dynamic block, as on the device
    let mut out = vec![0i32; 32];
    let mut po = out.as_mut_ptr();
    launch(&m, "shared_mem", 32, &[arg(&mut po)], &mut smem);
    for t in 0..32 {
        // dyn[t] overwrote byte 0 with 100 (thread 0) before any thread read g_smem[0].
        let g = 100;
        assert_eq!(out[t], 3 * t as i32 + (t as i32 + 100) + g, "thread {t}");
    }
    let dyn_ints: Vec<i32> = smem[..128].chunks(4).map(|c| i32::from_le_bytes(c.try_into().unwrap())).collect();
    assert_eq!(dyn_ints, (100..132).collect::<Vec<i32>>());
}

#[test]
fn atomics_have_cuda_semantics() {
    let m = open("memory");
    let mut i = [10i32, 10, 10, 10, 10, 0x3c, 1, 0x0f, 7];
    let mut u = [3u32, 0, 9, 1, 0xffff_ffff, 0];
    let mut ull = [5u64, 70, 9, 1, 0];
    let mut f = [1.25f32, 0.0];
    let mut d = [1.0f64];
    let mut ll = [3i64, 3];
    let ptrs = [
        i.as_mut_ptr() as *mut c_void,
        u.as_mut_ptr() as _,
        ull.as_mut_ptr() as _,
        f.as_mut_ptr() as _,
        d.as_mut_ptr() as _,
        ll.as_mut_ptr() as _,
    ];
    let mut p = ptrs;
    let args: Vec<*mut c_void> = p.iter_mut().map(|x| x as *mut *mut c_void as *mut c_void).collect();
    launch(&m, "atomics", 1, &args, &mut []);
    assert_eq!(i, [12, 7, 42, -5, 10, 0x0c, 0x101, 0xf0, 8]);
    // atomicInc(3 >= 3 -> 0), atomicDec(0 -> 3), min, max, add wraps, CAS.
    assert_eq!(u, [0, 3, 4, 4, 0, 5]);
    assert_eq!(ull, [5 + (1 << 40), 77, 3, 2, 9]);
    assert_eq!(f, [1.75, 2.0]);
    assert_eq!(d, [1.125]);
    assert_eq!(ll, [-7, 7]);
}

#[test]
fn atomics_are_atomic_across_os_threads() {
    let m = open("memory");
    let (mut c, mut d, mut f) = (0u64, 0f64, 0f32);
    let (pc, pd, pf) = (&mut c as *mut u64 as usize, &mut d as *mut f64 as usize, &mut f as *mut f32 as usize);
    let k = m.kernel("count_up").unwrap().run;
    let slot = unsafe { (*m.descriptor).ctx_slot };
    std::thread::scope(|s| {
        for _ in 0..4 {
            s.spawn(move || {
                let (mut a, mut b, mut e) = (pc as *mut c_void, pd as *mut c_void, pf as *mut c_void);
                let args = [arg(&mut a), arg(&mut b), arg(&mut e)];
                let mut ctx = new_ctx(1000, &mut []);
                unsafe {
                    *slot() = &mut ctx;
                    for _ in 0..10 {
                        k(args.as_ptr(), &mut ctx, 0, 1000);
                    }
                }
            });
        }
    });
    assert_eq!((c, d, f), (40_000, 40_000.0, 40_000.0));
}

#[test]
fn printf_goes_through_the_runtime() {
    let m = open("memory");
    PRINTED.lock().unwrap().clear();
    let mut v = 5i32;
    launch(&m, "speak", 2, &[arg(&mut v)], &mut []);
    assert_eq!(*PRINTED.lock().unwrap(), "thread 0 says 5\nthread 1 says 5\n");
}

#[test]
fn assert_and_trap_end_the_launch_division_and_casts_give_the_device_value_with_a_located_report() {
    let m = open("memory");
    let src = common::cu("memory.cu").canonicalize().unwrap().display().to_string();
    let run = |kernel: &'static str, mut args: Vec<Box<dyn std::any::Any>>| {
        let m = &m;
        in_child_expect_trap(move || {
            let ptrs: Vec<*mut c_void> = args
                .iter_mut()
                .map(|a| {
                    if let Some(v) = a.downcast_mut::<i32>() {
                        arg(v)
                    } else if let Some(v) = a.downcast_mut::<f32>() {
                        arg(v)
                    } else {
                        arg(a.downcast_mut::<*mut i32>().unwrap())
                    }
                })
                .collect();
            launch(m, kernel, 1, &ptrs, &mut []);
        })
    };
    let r = run("speak", vec![Box::new(13i32)]).expect("assert must trap");
    assert_eq!(r, format!("1|v != 13|{src}|49"));
    assert_eq!(run("speak", vec![Box::new(12i32)]), None);
    assert_eq!(run("trap_now", vec![Box::new(1i32)]).unwrap().split('|').take(2).collect::<Vec<_>>(), ["2", "__trap()"]);
    // Division by zero and an out-of-range cast no longer end the launch: they give the
    // device's value (tests/device_defined.rs compares every case with the H200) and
    // report it with the user's file and line.
    let _serial = serial();
    let mut out = 0i32;
    let mut p: *mut i32 = &mut out;
    let (mut a, mut b) = (7i32, 0i32);
    REPORTS.lock().unwrap().clear();
    SITES.lock().unwrap().clear();
    launch(&m, "divide", 1, &[arg(&mut p), arg(&mut a), arg(&mut b)], &mut []);
    assert_eq!(out, -1); // 0xffffffff
    let rep = REPORTS.lock().unwrap().clone();
    assert_eq!(rep.len(), 1, "{rep:?}");
    assert_eq!(rep[0].0, 2); // SIMTWIN_REPORT_DIVISION
    assert!(rep[0].1.contains("int32 division by zero") && rep[0].1.contains("0xffffffff"), "{rep:?}");
    let sites = || SITES.lock().unwrap().iter().filter(|s| s.starts_with("memory.cu:")).cloned().collect::<Vec<_>>();
    assert_eq!(sites(), ["memory.cu:52"]);
    let mut f = 3e9f32;
    launch(&m, "cast", 1, &[arg(&mut p), arg(&mut f)], &mut []);
    assert_eq!(out, i32::MAX);
    let rep = REPORTS.lock().unwrap().clone();
    assert_eq!(rep.len(), 2, "{rep:?}");
    assert_eq!(rep[1].0, 1); // SIMTWIN_REPORT_CONVERSION
    assert!(rep[1].1.contains("conversion of float 3000000000 to int32") && rep[1].1.contains("0x7fffffff"), "{rep:?}");
    assert_eq!(sites(), ["memory.cu:52", "memory.cu:53"]);
    let mut f = -3.5f32;
    launch(&m, "cast", 1, &[arg(&mut p), arg(&mut f)], &mut []);
    assert_eq!((out, REPORTS.lock().unwrap().len()), (-3, 2));
}

// ---- kernel naming ------------------------------------------------------------------

#[test]
fn symbols_match_nvcc_entry_names() {
    let man = &libs().built.iter().find(|b| b.manifest.library == "templates.so").unwrap().manifest;
    let mut syms: Vec<String> = man.entries.iter().map(|e| e.symbol.clone()).collect();
    syms.sort();
    // Recorded from `nvcc -ptx -arch=sm_90 templates.cu` (.entry names); re-checked below when nvcc is present.
    let expected: Vec<String> = std::fs::read_to_string(common::cu("templates.entries.txt")).unwrap().lines().map(String::from).collect();
    assert_eq!(syms, expected);
    let e = |n: &str| man.entries.iter().find(|e| e.symbol == n).unwrap();
    assert_eq!((e("_Z4fillIfLi128EEvPT_S0_i").max_threads, e("_Z4fillIfLi128EEvPT_S0_i").min_blocks), (128, 2));
    assert_eq!(e("_Z4fillItLi64EEvPT_S0_i").param_sizes, vec![8, 2, 4]);
    assert_eq!(e("body_chroma").max_threads, 256);
    assert_eq!(e("body_luma").max_threads, 0);
    let v = e("_ZN4feat6detail3vecEP6float4PK6uchar24dim36__half");
    assert_eq!(
        (v.name.as_str(), v.param_sizes.clone(), v.param_aligns.clone()),
        ("feat::detail::vec", vec![8, 8, 12, 2], vec![8, 8, 4, 2])
    );

    // nvcc is part of the test setup (scripts/setup installs it): found the project's way.
    let finder = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../scripts/nvcc-path");
    let nvcc = std::process::Command::new(&finder)
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string());
    match nvcc {
        Some(nvcc) => {
            let ptx = libs().dir.join("templates.ptx");
            let st = std::process::Command::new(nvcc)
                .args(["-ptx", "-arch=sm_90", "-o"])
                .arg(&ptx)
                .arg(common::cu("templates.cu"))
                .output()
                .unwrap();
            assert!(st.status.success(), "{}", String::from_utf8_lossy(&st.stderr));
            let mut entries: Vec<String> = std::fs::read_to_string(&ptx)
                .unwrap()
                .lines()
                .filter_map(|l| l.split(".entry ").nth(1))
                .map(|l| l.trim_end_matches('(').trim().to_string())
                .collect();
            entries.sort();
            assert_eq!(entries, expected);
        }
        None => panic!("nvcc not found by {} (run scripts/setup)", finder.display()),
    }
}

#[test]
fn template_kernel_runs_with_unaligned_params() {
    let m = open("templates");
    let mut out = vec![0f32; 4];
    // kernelParams pointing at unaligned copies of the values.
    let mut buf = [0u8; 64];
    let p = out.as_mut_ptr();
    buf[1..9].copy_from_slice(&(p as usize).to_ne_bytes());
    buf[10..14].copy_from_slice(&2.5f32.to_ne_bytes());
    buf[15..19].copy_from_slice(&3i32.to_ne_bytes());
    let args = [buf[1..].as_mut_ptr() as *mut c_void, buf[10..].as_mut_ptr() as _, buf[15..].as_mut_ptr() as _];
    launch(&m, "_Z4fillIfLi128EEvPT_S0_i", 4, &args, &mut []);
    assert_eq!(out, [2.5, 2.5, 2.5, 0.0]);
    let mut r = [0u32; 1];
    let mut pr = r.as_mut_ptr();
    launch(&m, "body_chroma", 1, &[arg(&mut pr)], &mut []);
    assert_eq!(r[0], 18);
}

#[test]
fn range_stop_ends_a_range_run_early() {
    let m = open("memory");
    let k = m.kernel("use_tables").unwrap();
    let mut out = vec![0f32; 8];
    let mut po = out.as_mut_ptr();
    let args = [arg(&mut po)];
    let mut ctx = new_ctx(8, &mut []);
    // A limit: threads 2 and 3 run, 4 does not start (linear_tid names it, the body
    // never saw it: thread_idx.x stays 3); the runner says it checks before each thread.
    ctx.range_stop = 4;
    unsafe {
        *m.ctx_slot() = &mut ctx;
        (k.run)(args.as_ptr(), &mut ctx, 2, 6);
    }
    assert_eq!((ctx.linear_tid, ctx.thread_idx.x, ctx.reserved), (4, 3, 1));
    assert_eq!(out.iter().filter(|x| **x != 0.0).count(), 2);
}

#[test]
fn vmaf_like_kernels_route_collectives_through_the_runtime() {
    let m = open("vmaf_like");
    let refp: Vec<u16> = (0..64).map(|i| (i * 7 % 1024) as u16).collect();
    let dis: Vec<u16> = (0..64).map(|i| (i * 5 % 1024) as u16).collect();
    let mut sse = 0u64;
    let (mut pr, mut pd, mut ps, mut w) = (refp.as_ptr(), dis.as_ptr(), &mut sse as *mut u64, 64i32);
    WARP_CALLS.lock().unwrap().clear();
    launch(&m, "sse_10bpc", 1, &[arg(&mut pr), arg(&mut pd), arg(&mut ps), arg(&mut w)], &mut []);
    let acc: u32 = refp.iter().zip(&dis).map(|(a, b)| (((*a as i32 - *b as i32).pow(2)) as u32) >> 2).sum();
    // The mock's one-lane shuffle returns the lane's own value: each of 5 steps doubles it.
    assert_eq!(sse, (acc.wrapping_mul(32)) as u64);
    let calls = WARP_CALLS.lock().unwrap().clone();
    let offs: Vec<i32> = calls.iter().map(|c| c.3).collect();
    assert_eq!(offs, [16, 8, 4, 2, 1]);
    assert!(calls.iter().all(|c| c.0 == 2 && c.1 == 0xffff_ffff && c.4 == 32), "{calls:?}");

    let mut out = [0u32; 4];
    let (mut x, mut y, mut po) = (10.0f32, 0.5f64, out.as_mut_ptr());
    launch(&m, "stats", 1, &[arg(&mut x), arg(&mut y), arg(&mut po)], &mut []);
    let l = ((10.0f32).log2() * 256.0).ceil() as u32;
    assert_eq!(out[0], l);
    assert_eq!(out[1], l.leading_zeros() + 64 + 512);
    assert_eq!(out[2], ((0.25f64 + 1.0 / 3.0).to_bits() >> 32) as u32);
    assert_eq!(out[3], 1 + 1 + 1);
}
