//! The texture unit's arithmetic for filtering floating-point texels, as fitted to an
//! H200 (reports/reference/h200/textures.md, "Filter arithmetic"):
//!
//! 1. Every texel with a non-zero weight is aligned to the largest exponent among them,
//!    keeping the format's significand plus 4 guard bits (28 bits for float, 15 for
//!    half); bits below are truncated (the magnitude, towards zero).
//! 2. The aligned integers are multiplied by the 9-bit weights (0..=256, summing to 256)
//!    and added exactly: one sum of 2, 4 or 8 terms, not a chain of lerps.
//! 3. The sum is rounded once to the format's precision, halfway cases away from zero.
//!
//! Compared with rounding the exact weighted sum once, this differs where the terms
//! cancel (the truncated bits of a small texel show) and at ties. Float subnormal texels
//! read as zero (half ones do not); a NaN among the weighted texels, or infinities of
//! both signs, give the canonical NaN of the format (`nan_bits`); an infinity gives
//! itself. Measured with texf_pairs_* (every exponent gap 0..31, signs, specials) and
//! texf_quad_* (random 2x2 footprints): 8192 + 4096 results each, all equal.

use super::format::srgb_filter_form;

/// The precision a filter result keeps: float or half texels.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Precision {
    /// 24-bit significand, exponents down to -126 (f32).
    Single,
    /// 11-bit significand, exponents down to -14 (IEEE half).
    Half,
}

impl Precision {
    fn bits(self) -> i32 {
        match self {
            Precision::Single => 24,
            Precision::Half => 11,
        }
    }
    fn min_exp(self) -> i32 {
        match self {
            Precision::Single => -126,
            Precision::Half => -14,
        }
    }
    /// The NaN a filtered result reads (widened to f32 for half: 0x7fff).
    pub fn nan_bits(self) -> u32 {
        match self {
            Precision::Single => 0x7fff_ffff,
            Precision::Half => 0x7fff_e000,
        }
    }
    fn max_exp(self) -> i32 {
        match self {
            Precision::Single => 127,
            Precision::Half => 15,
        }
    }
}

/// Guard bits kept below the significand when texels are aligned (fitted: 4; 3 and 5
/// both fail on texs_arith_f32).
const GUARD: i32 = 4;

/// The most terms a sum takes: the 8 texels of a 3D footprint.
const MAX_TERMS: usize = 8;

/// `v` (finite, non-zero) as (significand, exponent of its lowest bit), exact.
fn decompose(v: f64) -> (u64, i32) {
    let b = v.abs().to_bits();
    let e = ((b >> 52) & 0x7ff) as i32;
    let m = b & ((1 << 52) - 1);
    let (sig, exp) = if e == 0 { (m, -1074) } else { (m | (1 << 52), e - 1075) };
    // Strip trailing zeros so the significand stays small.
    let tz = sig.trailing_zeros().min(52);
    (sig >> tz, exp + tz as i32)
}

/// The weighted sum of `terms` (value, weight; weights sum to 256) as the texture unit
/// computes it for texels of precision `p`. Values are exact f32 or half values.
pub fn weighted_sum(terms: &[(f64, u32)], p: Precision) -> f64 {
    sum(terms, p, terms.len())
}

/// Trilinear filtering and 3D footprints: `terms` are two planes of 4 texels (two mip
/// levels, or the two z-planes) with their weights; each plane's terms are aligned to
/// its own largest with [`GUARD`] bits and truncated, and the two partial sums added in
/// two's complement on a coarse grid: the unit of a plane whose largest exponent is the
/// largest of all, with that exponent's biased value rounded down to a multiple of 4
/// (`coarse_lsb`); the bits below are floored (towards minus infinity), then the sum is
/// rounded once. With one plane its own grid is never finer, so this is
/// `weighted_sum`. Fit 20 (reports/reference/h200/textures-fit/fit20/fit20.md): every
/// result of texf_cube3d_f32, texf_mip_blend_*, texf_mip_pairs_* and ptx_texx_mip on the
/// H200, and all 5 242 880 results of the tri20 probe on GH100 (two-level pairs,
/// random trilinear and 3D footprints, float and half).
pub fn trilinear_sum(terms: &[(f64, u32)], p: Precision) -> f64 {
    sum(terms, p, 4)
}

/// The lowest bit kept when two planes' partial sums are added (`trilinear_sum`), as an
/// exponent in the units the sum is kept in (`lsb - 8` of a plane aligned at `e_max`):
/// the largest texel exponent `e_max` with the low two bits of its biased value
/// cleared, less the format's significand, [`GUARD`] and weight bits.
fn coarse_lsb(e_max: i32, p: Precision) -> i32 {
    let bias = p.max_exp();
    (((e_max + bias) & !3) - bias) - (p.bits() - 1) - GUARD - 8
}

/// The blend of two mip levels' samples (`terms`: each level's value and its 8-bit
/// weight, summing to 256; point filtering inside the levels): two planes of one texel
/// each, added as `trilinear_sum` adds two planes (each value keeps all its bits; the
/// smaller's bits below the coarse grid floored), rounded once, ties away. The H200's
/// texf_mip_blend_point_f32 (4086 two-level results of 4096) fits this and the exact
/// blend alike; the coarse grid is taken from tri20's block pairs (fit 20), the same
/// arithmetic through the linear filter.
pub fn blend_levels(terms: &[(f64, u32)], p: Precision) -> f64 {
    sum(terms, p, 1)
}

/// `weighted_sum`, `trilinear_sum` and `blend_levels`: the terms before `split` and those
/// from it on each aligned to their own largest with [`GUARD`] bits (one group when
/// `split` is the length); two groups meet on the coarse grid (`coarse_lsb`). Never more
/// than 90 bits below the largest: 24-bit significands times 9-bit weights stay within an
/// i128.
fn sum(terms: &[(f64, u32)], p: Precision, split: usize) -> f64 {
    assert!(terms.len() <= MAX_TERMS, "a filter of {} texels", terms.len());
    // One pass over the terms, into the stack (this runs per texel fetch): each live
    // (weighted) non-zero term as (significand, exponent of its lowest bit, sign,
    // weight), and what decides the special cases.
    let mut t = [(0u64, 0i32, false, 0u32, 0usize); MAX_TERMS];
    let (mut n, mut live, mut negative_zeros) = (0, 0, 0);
    let (mut nan, mut pos_inf, mut neg_inf) = (false, false, false);
    let mut e_max = i32::MIN;
    let mut e_group = [i32::MIN; 2];
    for (i, &(v, w)) in terms.iter().enumerate() {
        if w == 0 {
            continue;
        }
        live += 1;
        // Float subnormals are flushed to zero (their sign kept) before anything else.
        let v = if p == Precision::Single && v != 0.0 && v.abs() < f32::MIN_POSITIVE as f64 { 0.0f64.copysign(v) } else { v };
        if v.is_nan() {
            nan = true;
        } else if v.is_infinite() {
            (pos_inf, neg_inf) = (pos_inf || v > 0.0, neg_inf || v < 0.0);
        } else if v == 0.0 {
            negative_zeros += v.is_sign_negative() as usize;
        } else {
            let (sig, lo) = decompose(v);
            // The exponent of its leading bit in the format (subnormals count as the
            // format's minimum exponent, as their exponent field does).
            let lead = (lo + 63 - sig.leading_zeros() as i32).max(p.min_exp());
            let g = (i >= split) as usize;
            e_max = e_max.max(lead);
            e_group[g] = e_group[g].max(lead);
            t[n] = (sig, lo, v < 0.0, w, g);
            n += 1;
        }
    }
    if nan {
        return f64::NAN;
    }
    match (pos_inf, neg_inf) {
        (true, true) => return f64::NAN,
        (true, false) => return f64::INFINITY,
        (false, true) => return f64::NEG_INFINITY,
        _ => {}
    }
    if n == 0 {
        // Only zeros: the sign of zeros is kept where all agree (IEEE addition).
        return if live > 0 && negative_zeros == live { -0.0 } else { 0.0 };
    }
    // Each group's terms are truncated at its own alignment; the sum keeps the lowest
    // group's bits (at most 90 below the largest: the i128 holds it).
    let group_lsb = |g: usize| e_group[g] - (p.bits() - 1) - GUARD;
    let lsb = (0..2).filter(|&g| e_group[g] != i32::MIN).map(group_lsb).min().unwrap_or(0).max(e_max - 90);
    let mut sum: i128 = 0;
    for &(sig, lo, neg, w, g) in &t[..n] {
        let cut = group_lsb(g).max(lsb);
        let mag: i128 = if lo >= cut {
            (sig as i128) << (lo - lsb)
        } else if cut - lo >= 64 {
            0
        } else {
            ((sig >> (cut - lo)) as i128) << (cut - lsb)
        };
        sum += if neg { -mag } else { mag } * w as i128;
    }
    // Two planes (trilinear, 3D): their sums meet on the coarse grid, the bits below
    // floored (an arithmetic shift of the two's complement sum). A single plane's own
    // grid is never finer than it.
    if split < terms.len() {
        let k = coarse_lsb(e_max, p);
        if k > lsb - 8 {
            // (A shift of 127 or more floors to -1 or 0, as a shift by 127 does.)
            let sh = ((k - (lsb - 8)) as u32).min(127);
            return round_away(sum >> sh, k, p);
        }
    }
    round_away(sum, lsb - 8, p)
}

/// The filter of sRGB rgb texels (byte, weight; weights summing to 256) as the H200's
/// texture unit computes it (fit19: all 16 777 216 two-texel blends, 262 144 bilinear
/// footprints per channel): each texel in its filter form (`srgb_filter_form`), the
/// significands of the texels with a non-zero weight truncated to the largest exponent
/// among them, multiplied by the weights and added exactly, the sum rounded to half
/// precision with ties up (`round_away`). A small texel beside a large one loses its low bits (21 beside
/// 248 adds nothing), which is why the device reads below the exact blend.
pub fn srgb_sum(terms: &[(u32, u32)]) -> f64 {
    let weighted = || {
        terms.iter().filter(|t| t.1 > 0).map(|&(b, w)| {
            let (m, e) = srgb_filter_form(b);
            (m, e, w)
        })
    };
    let e = weighted().map(|f| f.1).max().unwrap_or(0);
    let s: u64 = weighted().map(|(m, fe, w)| (m >> (e - fe).min(31)) as u64 * w as u64).sum();
    // The sum is in units of 2^(e - 7) / 256.
    round_away(s as i128, e - 15, Precision::Half)
}

/// `n * 2^exp` rounded to precision `p`, halfway cases away from zero; overflow gives an
/// infinity, a zero sum +0.
fn round_away(n: i128, exp: i32, p: Precision) -> f64 {
    if n == 0 {
        return 0.0;
    }
    let neg = n < 0;
    let mut mag = n.unsigned_abs();
    let mut exp = exp;
    let len = 128 - mag.leading_zeros() as i32;
    // The exponent of the lowest bit the result keeps.
    let lead = exp + len - 1;
    let keep_lo = (lead - (p.bits() - 1)).max(p.min_exp() - (p.bits() - 1));
    if keep_lo > exp {
        let sh = (keep_lo - exp) as u32;
        let half = if (1..=127).contains(&sh) { 1u128 << (sh - 1) } else { 0 };
        mag = if sh >= 128 { 0 } else { (mag + half) >> sh };
        exp = keep_lo;
    }
    let len = 128 - mag.leading_zeros() as i32;
    if mag != 0 && exp + len - 1 > p.max_exp() {
        return if neg { f64::NEG_INFINITY } else { f64::INFINITY };
    }
    // mag has at most the format's bits here (exact as f64); 2^exp is made from its
    // bits (no libm call: this runs per texel fetch).
    let scale = if (-1022..=1023).contains(&exp) { f64::from_bits(((exp + 1023) as u64) << 52) } else { 2f64.powi(exp) };
    let v = (mag as u64) as f64 * scale;
    if neg {
        -v
    } else {
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f(terms: &[(f32, u32)]) -> u32 {
        let t: Vec<(f64, u32)> = terms.iter().map(|&(v, w)| (v as f64, w)).collect();
        (weighted_sum(&t, Precision::Single) as f32).to_bits()
    }

    /// Bit patterns an H200 returned (texs_arith_f32, texs_2d_fine_f32), where rounding
    /// the exact sum once gives another value.
    #[test]
    fn h200_float_filter_results() {
        // 7.0 and 0.1 at weights 8/248: the exact sum rounds to 0x3ea1999a.
        assert_eq!(f(&[(7.0, 8), (0.1, 248)]), 0x3ea1_9999);
        // A tie (65504 and 12.125 at 252/4) rounds away from zero.
        assert_eq!(f(&[(65504.0, 252), (12.125, 4)]), 0x477b_e0b1);
        // -1.25 and 0.001 at 4/252: cancellation shows the truncated bits.
        assert_eq!(f(&[(-1.25, 4), (0.001, 252)]), 0xbc97_efa1);
    }

    /// Two planes' sums as the H200 added them (fit 20), where adding them exactly and
    /// rounding once gives the next value up: the bits of the smaller plane below the
    /// coarse grid are floored.
    #[test]
    fn h200_two_plane_results() {
        let tri = |terms: &[(f64, u32, u8)], p: Precision| -> u32 {
            let t: Vec<(f64, u32)> = terms.iter().map(|&(v, w, _)| (v, w)).collect();
            (trilinear_sum(&t, p) as f32).to_bits()
        };
        // texf_cube3d_f32 query 2868 (z-planes 0 and 1).
        let cube = [
            (0.9006747007369995, 84, 0),
            (-82.44126892089844, 5, 0),
            (0.0, 40, 0),
            (118.47343444824219, 3, 0),
            (0.24595238268375397, 78, 1),
            (-8.798171997070312, 5, 1),
            (-0.043832771480083466, 38, 1),
            (0.6802029609680176, 3, 1),
        ];
        let cube: Vec<(f64, u32, u8)> = cube.iter().map(|&(v, w, p)| ((v as f32) as f64, w, p)).collect();
        assert_eq!(tri(&cube, Precision::Single), 0xbcb1_f3c4);
        // texf_mip_pairs_half query 513: level 2 holds -7.76953125, level 3 holds 1234,
        // lod 2 + 1/256 (the exact blend rounds to 0xc03ac000).
        let pair = [
            (-7.76953125, 64, 0),
            (-7.76953125, 64, 0),
            (-7.76953125, 63, 0),
            (-7.76953125, 64, 0),
            (1234.0, 0, 1),
            (1234.0, 0, 1),
            (1234.0, 0, 1),
            (1234.0, 1, 1),
        ];
        assert_eq!(tri(&pair, Precision::Half), 0xc03a_e000);
        // texf_mip_blend_half query 3167: 1.75 ulp below the exact blend.
        let blend = [
            (74.625, 0, 0),
            (-0.0025081634521484375, 0, 0),
            (0.05352783203125, 1, 0),
            (-243.5, 1, 0),
            (1.8115234375, 8, 1),
            (2.11328125, 110, 1),
            (-0.01100921630859375, 9, 1),
            (-0.021697998046875, 127, 1),
        ];
        assert_eq!(tri(&blend, Precision::Half), 0x3b28_0000);
        // One plane: the 2D rule (the coarse grid is never finer than its own).
        assert_eq!(
            tri(
                &[(7.0, 8, 0), (0.1f32 as f64, 248, 0), (0.0, 0, 0), (0.0, 0, 0), (1.0, 0, 1), (0.0, 0, 1), (0.0, 0, 1), (0.0, 0, 1)],
                Precision::Single
            ),
            0x3ea1_9999
        );
    }

    #[test]
    fn specials() {
        assert!(weighted_sum(&[(f64::NAN, 1), (1.0, 255)], Precision::Single).is_nan());
        assert_eq!(weighted_sum(&[(f64::NAN, 0), (1.0, 256)], Precision::Single), 1.0);
        assert_eq!(weighted_sum(&[(f64::INFINITY, 1), (1.0, 255)], Precision::Single), f64::INFINITY);
        assert_eq!(weighted_sum(&[(f32::MAX as f64, 256)], Precision::Single), f32::MAX as f64);
        assert_eq!(weighted_sum(&[(65504.0, 128), (65504.0, 128)], Precision::Half), 65504.0);
        // Float subnormals flush, half ones do not.
        assert_eq!(weighted_sum(&[(1e-39, 128), (1e-39, 128)], Precision::Single), 0.0);
        assert_eq!(weighted_sum(&[(2f64.powi(-24), 256)], Precision::Half), 2f64.powi(-24));
    }
}
