//! The sampler: what a texture or surface instruction answers, as an H200 answers it.
//! Both execution modes reach it through the runtime table's `texture` entry.
//!
//! Measured on an H200 (emu-driver/conformance `texs_*`, reports/reference/h200/textures.md):
//! - Linear filtering quantizes each weight to 8 fractional bits, rounding half up
//!   (`a = floor(frac * 256 + 0.5)`, 0..=256). Bilinear weights are derived from the two
//!   axis weights with one rounded product: `w11 = (a*b + 128) >> 8`, `w10 = a - w11`,
//!   `w01 = b - w11`, `w00 = 256 - a - b + w11`.
//! - 8- and 16-bit unsigned normalized texels are filtered as 16-bit integers (8-bit
//!   values replicated, v * 257): `R = (sum V*w + 128) >> 8`, read as `R / 65535`.
//! - Float and half texels are filtered with the same weights in the texture unit's
//!   block fixed point (`filter`): aligned to the largest exponent with 4 guard bits,
//!   truncated, summed exactly, rounded once (halfway away from zero) to the format's
//!   precision.
//! - Element-type reads (`CU_TRSF_READ_AS_INTEGER`, and 32-bit integer formats) are
//!   filtered too when linear filtering is asked for, on the raw integers with the same
//!   weights: 8- and 16-bit texels (signed ones as signed values) `(sum v*w + 128) >> 8`,
//!   32-bit texels exactly and truncated, `floor(sum v*w / 256)`, the result
//!   sign-extended to 32 bits for signed formats (GH100, fit 21).

use super::filter::{self, Precision};
use super::format::{self, Format};
use super::{Layout, Object, Resource, TexDesc};
use simtwin_abi::kernel::{tex, TexRequest};

/// A fault the instruction raises on the device: the CUresult and a message.
pub type Fault = (u32, String);

use crate::cu::{
    CUDA_ERROR_ILLEGAL_ADDRESS, CUDA_ERROR_LAUNCH_FAILED, CUDA_ERROR_MISALIGNED_ADDRESS, CU_TRSF_NORMALIZED_COORDINATES as NORMALIZED,
    CU_TRSF_READ_AS_INTEGER as READ_AS_INTEGER, CU_TRSF_SRGB as SRGB, CU_TR_ADDRESS_MODE_BORDER as BORDER,
    CU_TR_ADDRESS_MODE_CLAMP as CLAMP, CU_TR_ADDRESS_MODE_MIRROR as MIRROR, CU_TR_ADDRESS_MODE_WRAP as WRAP,
    CU_TR_FILTER_MODE_LINEAR as LINEAR,
};

/// Runs one request (the runtime table's `texture` entry).
pub fn execute(req: &mut TexRequest) -> Result<(), Fault> {
    let obj = super::lookup(req.handle).ok_or_else(|| {
        (CUDA_ERROR_LAUNCH_FAILED, format!("texture/surface object {} does not exist (never created or destroyed)", req.handle))
    })?;
    match (&*obj, req.op) {
        (Object::Texture { res, desc, .. }, tex::FETCH | tex::LEVEL | tex::GRAD | tex::GATHER) => {
            let words = fetch(res, desc, req)?;
            req.data = if req.result == tex::R_F16 && req.op != tex::GATHER { to_halves(words, integer_width(res, desc)) } else { words };
            Ok(())
        }
        (Object::Texture { res, desc, .. }, tex::TXQ) => {
            req.data = [query(res, Some(desc), req.query, req.icoord[0])?, 0, 0, 0];
            Ok(())
        }
        (Object::Surface { res, .. }, tex::SURF_LOAD | tex::SURF_STORE) => surface(res, req),
        (Object::Surface { res, .. }, tex::SURF_STORE_P) => {
            // Formatted: x counts elements; the words become the element's bytes.
            let l = level(res, 0);
            let elem = l.elem() as u32;
            let mut r = TexRequest { op: tex::SURF_STORE, size: elem, data: format_element(&l, req.data), ..*req };
            r.icoord[0] = req.icoord[0].wrapping_mul(elem as i32);
            surface(res, &mut r)
        }
        (Object::Surface { res, .. }, tex::SUQ) => {
            req.data = [query(res, None, req.query, req.icoord[0])?, 0, 0, 0];
            Ok(())
        }
        (_, op) => Err((
            CUDA_ERROR_LAUNCH_FAILED,
            format!(
                "object {} is not a {} object (instruction {op})",
                req.handle,
                if op >= tex::SURF_LOAD && op != tex::TXQ { "surface" } else { "texture" }
            ),
        )),
    }
}

/// How many levels a resource has (one unless mipmapped).
fn level_count(res: &Resource) -> usize {
    match res {
        Resource::Mipmap { levels, .. } => levels.len(),
        _ => 1,
    }
}

/// Level `k` (below `level_count`) of a resource as a layout, made when asked: a fetch
/// must not allocate (it runs once per thread per instruction).
fn level(res: &Resource, k: usize) -> Layout {
    match res {
        Resource::Array { array, .. } => array.layout(),
        Resource::Mipmap { levels, .. } => levels[k].layout(),
        Resource::Linear { ptr, format, channels, bytes } => {
            let f = Format::from_cu(*format).unwrap_or(Format::U8);
            let elem = f.bytes() as u64 * *channels as u64;
            Layout {
                base: *ptr,
                width: bytes / elem.max(1),
                height: 1,
                depth: 1,
                pitch: *bytes,
                slice: *bytes,
                format: f,
                channels: *channels,
            }
        }
        Resource::Pitch2D { ptr, format, channels, width, height, pitch } => {
            let f = Format::from_cu(*format).unwrap_or(Format::U8);
            Layout {
                base: *ptr,
                width: *width,
                height: *height,
                depth: 1,
                pitch: *pitch,
                slice: pitch * height,
                format: f,
                channels: *channels,
            }
        }
    }
}

/// How texel values are filtered and returned.
#[derive(Clone, Copy, PartialEq)]
enum Mode {
    /// 8/16-bit unsigned integers read as normalized floats: 16-bit fixed point.
    Unorm,
    /// 8/16-bit signed integers read as normalized floats: 16-bit signed fixed point
    /// (8-bit magnitudes widened as m * 258).
    Snorm,
    /// Float formats, signed normalized, sRGB: single precision values.
    Float,
    /// Element type of integer formats: raw integers (`Val::U`, `Val::I`, `Val::W`),
    /// filtered as integers when the descriptor asks for linear filtering.
    Int,
}

/// One channel value in the mode's domain.
#[derive(Clone, Copy)]
enum Val {
    /// An integer: a 16-bit fixed-point normalized value, or an unsigned 8/16-bit
    /// element-type texel.
    U(u32),
    /// A signed 8/16-bit element-type texel: filtered as a signed value, rounded as the
    /// unsigned ones, `(sum v*w + 128) >> 8` (GH100, fit 21: every word of s8, s8x4,
    /// s16, s16x2; raw bits blended as unsigned, truncating towards zero, or halves away
    /// from zero fail).
    I(i32),
    /// A 32-bit element-type texel (u32 zero-, s32 sign-extended; a border texel the
    /// colour's f32 bits read the same way): filtered exactly and truncated,
    /// `floor(sum v*w / 256)` (GH100, fit 21: every word of u32, u32x2, s32, s32x4;
    /// `+ 128` before the shift fails about half, 32-bit products or sums, f32 arithmetic
    /// fail more).
    W(i64),
    F(f64),
    /// A float NaN, kept as its bits: a point sample returns a NaN texel unchanged
    /// (signalling ones too, measured with halves).
    Nan(u32),
    /// An 8-bit unsigned normalized channel of a float-mode texel (the alpha of an sRGB
    /// texture), as 16 bits (v * 257): filtered as integers like `Mode::Unorm`
    /// (texf_srgb_1d.c3: all 4096 results).
    Unorm16(u32),
    /// An 8-bit signed normalized channel as the filter holds it: the exact weighted sum
    /// of the raw values (weights summing to 256; a texel alone is 256 v), widened to 16
    /// bits only at the end by `snorm8_from_sum` (H200, fit19: every one of 16 777 216
    /// two-texel blends and 1 048 576 bilinear footprints).
    Snorm8(i32),
    /// An sRGB-encoded rgb channel (its byte), decoded by the filter (`srgb_sum`).
    Srgb(u32),
}

struct Sampler<'a> {
    desc: &'a TexDesc,
    mode: Mode,
    srgb: bool,
    /// The precision float-mode values are filtered at (half for half texels).
    prec: Precision,
    /// PTX's texel offsets (`tex ..., {dx, dy}`), added to the texel indices the
    /// coordinates select before addressing, at each level read.
    off: [i64; 3],
}

impl Sampler<'_> {
    /// Channel values of the texel at (x, y, z) of `l` (already in range), in the mode's
    /// domain; missing channels read 0.
    fn texel(&self, l: &Layout, x: u64, y: u64, z: u64) -> [Val; 4] {
        let addr = l.base + z * l.slice + y * l.pitch + x * l.elem();
        let mut v = [Val::U(0); 4];
        if self.mode == Mode::Float {
            v = [Val::F(0.0); 4];
        }
        for c in 0..l.channels.min(4) {
            // SAFETY: (x, y, z) is inside the resource's extent, which the driver
            // validated against its allocation when the object was created.
            let raw = unsafe { format::read_channel(addr, l.format, c) };
            v[c as usize] = match self.mode {
                Mode::Int => int_val(raw, l.format),
                Mode::Unorm => Val::U(if l.format == Format::U8 { raw * 257 } else { raw }),
                Mode::Snorm if l.format == Format::S8 => Val::Snorm8(raw as i32 * 256),
                Mode::Snorm => Val::U(raw),
                Mode::Float => match l.format {
                    Format::Float if f32::from_bits(raw).is_nan() => Val::Nan(raw),
                    Format::Half if format::half_to_f32(raw as u16).is_nan() => Val::Nan(half_nan_bits(raw as u16)),
                    _ => Val::F(match l.format {
                        Format::Float => f32::from_bits(raw) as f64,
                        Format::Half => format::half_to_f32(raw as u16) as f64,
                        Format::U8 if self.srgb && c < 3 => {
                            v[c as usize] = Val::Srgb(raw);
                            continue;
                        }
                        Format::U8 if self.srgb => {
                            v[c as usize] = Val::Unorm16(raw * 257);
                            continue;
                        }
                        f => format::normalized(raw, f) as f64,
                    }),
                },
            };
        }
        v
    }

    /// The border colour in the mode's domain, for a texture of `l`'s format: channels
    /// the format lacks read 0; 8/16-bit unsigned normalized reads quantize it to the
    /// format (nearest, halves down: 0.5 reads 127/255); element-type reads of 8/16-bit
    /// integers read 0 and of 32-bit ones the colour's bits (measured).
    fn border(&self, l: &Layout) -> [Val; 4] {
        let b = self.desc.border;
        let mut out = [if self.mode == Mode::Float { Val::F(0.0) } else { Val::U(0) }; 4];
        for c in 0..(l.channels.min(4) as usize) {
            let v = b[c];
            out[c] = match self.mode {
                Mode::Float if self.srgb && c == 3 && l.format == Format::U8 => Val::Unorm16(unorm_border(v, 255.0) * 257),
                Mode::Float => Val::F(v as f64),
                Mode::Unorm => {
                    let q = unorm_border(v, if l.format == Format::U8 { 255.0 } else { 65535.0 });
                    Val::U(if l.format == Format::U8 { q * 257 } else { q })
                }
                Mode::Snorm => {
                    let max = if l.format == Format::S8 { 127.0 } else { 32767.0 };
                    let q = (v.clamp(-1.0, 1.0) as f64 * max).round() as i32;
                    if l.format == Format::S8 {
                        Val::Snorm8(q * 256)
                    } else {
                        Val::U(q as u32)
                    }
                }
                Mode::Int if l.format.bytes() == 4 => int_val(v.to_bits(), l.format),
                Mode::Int => int_val(0, l.format),
            };
        }
        out
    }
}

/// An element-type texel channel `raw` (sign- or zero-extended to 32 bits by
/// `read_channel`) of integer format `f` as the filter holds it.
fn int_val(raw: u32, f: Format) -> Val {
    match f {
        Format::U32 => Val::W(raw as i64),
        Format::S32 => Val::W(raw as i32 as i64),
        Format::S8 | Format::S16 => Val::I(raw as i32),
        _ => Val::U(raw),
    }
}

/// A border colour channel quantized to an unsigned normalized format of `max`
/// (nearest, halves down: 0.5 reads 127/255).
fn unorm_border(v: f32, max: f64) -> u32 {
    (v.clamp(0.0, 1.0) as f64 * max - 0.5).ceil().max(0.0) as u32
}

/// Applies an address mode to texel index `i` of an axis of `n` texels: Some(index) or
/// None for the border.
fn address(i: i64, n: u64, mode: u32) -> Option<u64> {
    let n = n as i64;
    match mode {
        WRAP => Some(i.rem_euclid(n) as u64),
        MIRROR => {
            let m = i.rem_euclid(2 * n);
            Some(if m >= n { (2 * n - 1 - m) as u64 } else { m as u64 })
        }
        BORDER => (0..n).contains(&i).then_some(i as u64),
        _ => Some(i.clamp(0, n - 1) as u64),
    }
}

/// Fractional bits a normalized coordinate keeps before it is scaled by the size: the
/// H200 truncates (a coordinate one ulp above k/n reads texel k-1 where k/n is not exact
/// in binary): 21 bits give the threshold the H200 shows at every k/n of `texs_norm_precision`.
const NORM_BITS: i32 = 21;

/// Coordinate to texel space: the texel index and the 8-bit linear weight of one axis.
fn axis(u: f32, n: u64, normalized: bool, linear: bool) -> (i64, u32) {
    // Subnormal coordinates read as zero (one below zero reads texel 0, measured).
    let u = if u.is_subnormal() { 0.0 } else { u };
    let t = if normalized && u.is_finite() {
        let scale = (1u64 << NORM_BITS) as f64;
        ((u as f64 * scale).floor() / scale * n as f64) as f32
    } else {
        u
    };
    if !t.is_finite() {
        return (
            if t.is_nan() {
                0
            } else if t > 0.0 {
                n as i64
            } else {
                -1
            },
            0,
        );
    }
    if linear {
        let b = t - 0.5;
        let i = b.floor();
        let frac = (b - i) as f64;
        let a = (frac * 256.0 + 0.5).floor() as u32;
        let i = i as i64;
        if a >= 256 {
            (i + 1, 0)
        } else {
            (i, a)
        }
    } else {
        (t.floor() as i64, 0)
    }
}

/// A half NaN as the texture unit returns it: payload shifted into place, quiet bit
/// as it was (a signalling NaN stays signalling: texs_table_half).
fn half_nan_bits(h: u16) -> u32 {
    ((h as u32 & 0x8000) << 16) | 0x7f80_0000 | ((h as u32 & 0x3ff) << 13)
}

/// The 16-bit signed value of an 8-bit signed normalized channel from the exact sum `s`
/// of its raw values times weights summing to 256, as the texture unit scales it: one
/// correction from `s` without its low 4 bits, `s + ((s >> 4) * 257 + 1024) >> 11`,
/// clamped to -32767 (H200, fit19: all 65 281 sums a two-texel blend can make; at a
/// texel centre, s = 256 v, it is `v * 258 + floor((v + 64) / 128)`: texf_s8_1d).
fn snorm8_from_sum(s: i32) -> i32 {
    (s + (((s >> 4) * 257 + 1024) >> 11)).max(-32767)
}

/// A filtered or point-sampled value to the four result words.
fn to_words(v: [Val; 4], mode: Mode) -> [u32; 4] {
    v.map(|x| match (x, mode) {
        (Val::U(u), Mode::Unorm) => ((u as f64 / 65535.0) as f32).to_bits(),
        (Val::U(u), Mode::Snorm) => ((u as i32 as f64 / 32767.0).max(-1.0) as f32).to_bits(),
        (Val::Snorm8(s), _) => ((snorm8_from_sum(s) as f64 / 32767.0).max(-1.0) as f32).to_bits(),
        (Val::Srgb(b), _) => format::srgb_to_linear(b).to_bits(),
        (Val::U(u), _) => u,
        (Val::I(i), _) => i as u32,
        (Val::W(w), _) => w as u32,
        (Val::F(f), _) => (f as f32).to_bits(),
        (Val::Nan(b), _) => b,
        (Val::Unorm16(u), _) => ((u as f64 / 65535.0) as f32).to_bits(),
    })
}

/// Weighted sum of `n` texels with integer weights summing to 256; float-mode values at
/// precision `prec`.
fn blend(t: &[[Val; 4]], w: &[u32], mode: Mode, prec: Precision) -> [Val; 4] {
    blend_with(t, w, mode, prec, filter::weighted_sum)
}

/// `blend` with the float sum `sum` (a level's filter, or the blend of two levels).
fn blend_with(t: &[[Val; 4]], w: &[u32], mode: Mode, prec: Precision, sum: fn(&[(f64, u32)], Precision) -> f64) -> [Val; 4] {
    debug_assert!(t.len() <= 8 && t.len() == w.len());
    let mut out = [Val::U(0); 4];
    for c in 0..4 {
        out[c] = match mode {
            Mode::Unorm => {
                let s: u64 = t.iter().zip(w).map(|(v, &w)| if let Val::U(u) = v[c] { u as u64 * w as u64 } else { 0 }).sum();
                Val::U(((s + 128) >> 8) as u32)
            }
            Mode::Int => {
                // Exact: at most 8 taps of 32-bit values times weights up to 256.
                let s: i64 = t
                    .iter()
                    .zip(w)
                    .map(|(v, &w)| {
                        w as i64
                            * match v[c] {
                                Val::U(u) => u as i64,
                                Val::I(i) => i as i64,
                                Val::W(x) => x,
                                _ => 0,
                            }
                    })
                    .sum();
                if t.iter().any(|v| matches!(v[c], Val::W(_))) {
                    Val::W(s >> 8)
                } else if t.iter().any(|v| matches!(v[c], Val::I(_))) {
                    Val::I(((s + 128) >> 8) as i32)
                } else {
                    Val::U(((s + 128) >> 8) as u32)
                }
            }
            Mode::Snorm if t.iter().any(|v| matches!(v[c], Val::Snorm8(_))) => {
                // Texels hold 256 v, so one level's sum is exact; the blend of two levels'
                // sums (not measured) rounds as the 16-bit formats do.
                let s: i64 = t.iter().zip(w).map(|(v, &w)| if let Val::Snorm8(s) = v[c] { s as i64 * w as i64 } else { 0 }).sum();
                Val::Snorm8(((s + 128) >> 8) as i32)
            }
            Mode::Snorm => {
                let s: i64 = t.iter().zip(w).map(|(v, &w)| if let Val::U(u) = v[c] { u as i32 as i64 * w as i64 } else { 0 }).sum();
                Val::U(((s + 128) >> 8) as i32 as u32)
            }
            _ if t.iter().zip(w).all(|(v, &w)| w == 0 || matches!(v[c], Val::Srgb(_))) => {
                let mut terms = [(0u32, 0u32); 8];
                for (slot, (v, &w)) in terms.iter_mut().zip(t.iter().zip(w)) {
                    *slot = (if let Val::Srgb(b) = v[c] { b } else { 0 }, w);
                }
                Val::F(filter::srgb_sum(&terms[..t.len().min(8)]))
            }
            _ if t.iter().zip(w).all(|(v, &w)| w == 0 || matches!(v[c], Val::Unorm16(_))) => {
                let s: u64 = t.iter().zip(w).map(|(v, &w)| if let Val::Unorm16(u) = v[c] { u as u64 * w as u64 } else { 0 }).sum();
                Val::Unorm16(((s + 128) >> 8) as u32)
            }
            _ => {
                // At most 8 taps (a 3D footprint): on the stack, a sample must not allocate.
                let mut terms = [(0.0f64, 0u32); 8];
                for (slot, (v, &w)) in terms.iter_mut().zip(t.iter().zip(w)) {
                    *slot = match v[c] {
                        Val::F(f) => (f, w),
                        Val::Nan(_) => (f64::NAN, w),
                        Val::Srgb(b) => (format::srgb_to_linear(b) as f64, w),
                        Val::U(_) | Val::I(_) | Val::W(_) | Val::Unorm16(_) | Val::Snorm8(_) => (0.0, w),
                    };
                }
                let r = sum(&terms[..t.len().min(8)], prec);
                if r.is_nan() {
                    Val::Nan(prec.nan_bits())
                } else {
                    Val::F(r)
                }
            }
        };
    }
    out
}

/// The weights of texels (i0,j0), (i1,j0), (i0,j1), (i1,j1) of a plane of total weight
/// `wz` (256 for a 2D footprint; a 3D footprint's z-planes get 256 - c and c) for 8-bit
/// fractions `a` and `b` (0..=256), as the H200 splits it (texf_3d_weights, each of 8
/// texels hot in turn: 4096 of 4096 weights): x1 = round(wz * a), x0 = wz - x1; column
/// x0 rounds its y0 weight, column x1 its y1 weight, the other takes the rest (rounding
/// halves up, every weight a multiple of 1/256). With wz = 256 this is `bilinear`.
fn plane_weights(wz: u32, a: u32, b: u32) -> [u32; 4] {
    let x1 = (wz * a + 128) >> 8;
    let x0 = wz - x1;
    let w00 = (x0 * (256 - b) + 128) >> 8;
    let w11 = (x1 * b + 128) >> 8;
    [w00, x1 - w11, x0 - w00, w11]
}

/// The 8-bit bilinear weights of texels (i0,j0), (i1,j0), (i0,j1), (i1,j1) for 8-bit
/// fractions `a` and `b` (0..=256): the plane of a 2D footprint, 256 in all. In closed
/// form (tested): `w11 = (a*b + 128) >> 8`, `w10 = a - w11`, `w01 = b - w11`,
/// `w00 = 256 + w11 - a - b`.
fn bilinear(a: u32, b: u32) -> [u32; 4] {
    plane_weights(256, a, b)
}

/// The texels a fetch reads in one level: the point sample's texel (`t[0]`), or the
/// linear footprint, x fastest, then y, then z (2, 4 or 8 texels), with the 8-bit
/// fractions along each axis.
struct Footprint {
    t: [[Val; 4]; 8],
    f: [u32; 3],
}

/// The footprint of a fetch in one level at texel-space-or-normalized coordinates (dims
/// 1..3), slice base `slice` for layered/cube faces.
fn footprint(s: &Sampler, l: &Layout, dims: usize, c: [f32; 3], slice: u64, linear: bool) -> Footprint {
    let norm = s.desc.flags & NORMALIZED != 0;
    let n = [l.width, l.height, if dims == 3 { l.depth } else { 1 }];
    // Wrap and mirror need normalized coordinates; with unnormalized ones the device
    // clamps (CUDA Programming Guide, texture fetching).
    let mode = |k: usize| {
        let m = s.desc.address[k];
        if !norm && (m == WRAP || m == MIRROR) {
            CLAMP
        } else {
            m
        }
    };
    let mut idx = [(0i64, 0u32); 3];
    for k in 0..dims {
        idx[k] = axis(c[k], n[k], norm, linear);
        idx[k].0 += s.off[k];
        // Clamping clamps the footprint, not each texel: one that reaches past an edge
        // moves inside with fraction 0. (The value of one level's filter is the same
        // either way; the weights of a 3D or trilinear footprint are not: H200,
        // texf_mip_blend_u8, 4096 of 4096 only so.)
        if linear && mode(k) == CLAMP {
            let (i, f) = &mut idx[k];
            if *i < 0 {
                (*i, *f) = (0, 0);
            } else if *i >= n[k] as i64 - 1 {
                (*i, *f) = (n[k] as i64 - 1, 0);
            }
        }
    }
    let fetch = |ix: i64, iy: i64, iz: i64| -> [Val; 4] {
        let x = address(ix, n[0], mode(0));
        let y = if dims >= 2 { address(iy, n[1], mode(1)) } else { Some(0) };
        let z = if dims >= 3 { address(iz, n[2], mode(2)) } else { Some(0) };
        match (x, y, z) {
            (Some(x), Some(y), Some(z)) => s.texel(l, x, y, z + slice),
            _ => s.border(l),
        }
    };
    let [(ix, a), (iy, b), (iz, cc)] = idx;
    let mut t = [[Val::U(0); 4]; 8];
    let taps = if linear { 1 << dims } else { 1 };
    for (k, slot) in t.iter_mut().enumerate().take(taps) {
        *slot = fetch(ix + (k & 1) as i64, iy + (k >> 1 & 1) as i64, iz + (k >> 2) as i64);
    }
    Footprint { t, f: [a, b, cc] }
}

/// Samples one level at texel-space-or-normalized coordinates (dims 1..3), slice base
/// `slice` for layered/cube faces.
fn sample_level(s: &Sampler, l: &Layout, dims: usize, c: [f32; 3], slice: u64, linear: bool) -> [Val; 4] {
    let Footprint { t, f: [a, b, cc] } = footprint(s, l, dims, c, slice, linear);
    if !linear {
        return t[0];
    }
    match dims {
        1 => blend(&t[..2], &[256 - a, a], s.mode, s.prec),
        2 => blend(&t[..4], &bilinear(a, b), s.mode, s.prec),
        _ => {
            let (lo, hi) = (plane_weights(256 - cc, a, b), plane_weights(cc, a, b));
            // One partial sum per z-plane, the two added on the coarse grid, as
            // trilinear filtering sums the levels (fit 20: texf_cube3d_f32 4096 of 4096
            // and tri20's 3D footprints; one sum of all 8: 3646).
            blend_with(&t, &[lo[0], lo[1], lo[2], lo[3], hi[0], hi[1], hi[2], hi[3]], s.mode, s.prec, filter::trilinear_sum)
        }
    }
}

/// A cubemap direction to (face, s, t) with s, t in [0, 1].
fn cube_face(d: [f32; 3]) -> (u64, f32, f32) {
    let (x, y, z) = (d[0], d[1], d[2]);
    let (ax, ay, az) = (x.abs(), y.abs(), z.abs());
    let (face, sc, tc, ma) = if az >= ax && az >= ay {
        if z >= 0.0 {
            (4, x, -y, az)
        } else {
            (5, -x, -y, az)
        }
    } else if ay >= ax {
        if y >= 0.0 {
            (2, x, z, ay)
        } else {
            (3, x, -z, ay)
        }
    } else if x >= 0.0 {
        (0, -z, -y, ax)
    } else {
        (1, z, -y, ax)
    };
    (face, (sc / ma + 1.0) * 0.5, (tc / ma + 1.0) * 0.5)
}

/// A texture fetch (`tex`, `tex.level`, `tex.grad`, `tld4`).
/// Whether a texture's texels are read as integers (element type), not as floats.
fn reads_integers(res: &Resource, desc: &TexDesc) -> bool {
    let f = level(res, 0).format;
    desc.flags & READ_AS_INTEGER != 0 || !(f.normalizable() || f.is_float())
}

/// The channel width in bytes of a texture whose texels are read as integers, None when
/// they are read as floats.
fn integer_width(res: &Resource, desc: &TexDesc) -> Option<u32> {
    reads_integers(res, desc).then(|| level(res, 0).format.bytes())
}

/// PTX's `.f16` results, as the H200 gives them (conformance `ptx_texh_*`: point and
/// linear, float, half, 8/16-bit unsigned and 8-bit signed normalized textures): each
/// f32 result rounded to half, to nearest even (overflowing to infinity), every NaN as
/// 0x7fff. Element-type reads of 8- and 16-bit integers answer 0 (u8x4, u16); of 32-bit
/// integers the word is converted as if it held an f32 (s32 and u32x2, `ptx_texh_int`:
/// every word with the sign bit set read 0x8000, the others 0). Packed two to a word,
/// low first.
fn to_halves(words: [u32; 4], integer_width: Option<u32>) -> [u32; 4] {
    if integer_width.is_some_and(|w| w < 4) {
        return [0; 4];
    }
    let h = words.map(|w| f32_to_half_rn(f32::from_bits(w)) as u32);
    [h[0] | (h[1] << 16), h[2] | (h[3] << 16), 0, 0]
}

/// An f32 to half, rounding to nearest even; NaN to 0x7fff.
fn f32_to_half_rn(f: f32) -> u16 {
    if f.is_nan() {
        return 0x7fff;
    }
    let b = f.to_bits();
    let sign = ((b >> 16) & 0x8000) as u16;
    let a = f.abs() as f64;
    // Largest finite half 65504; from 65520 on (the midpoint to 2^16) it rounds to infinity.
    if a >= 65520.0 {
        return sign | 0x7c00;
    }
    // The half's quantum: 2^(e-10) in binade e, 2^-24 below 2^-13 (subnormals and the
    // first normal binade). a / quantum is exact in f64; rounding it to an integer m
    // (0..=2048) is the rounding to half, and the bits are ((e + 14) << 10) + m (a carry
    // into the next binade included).
    let e = (((b >> 23) & 0xff) as i32 - 127).max(-14);
    let m = (a / 2f64.powi(e - 10)).round_ties_even() as u32;
    sign | ((((e + 14) as u32) << 10) + m) as u16
}

fn fetch(res: &Resource, desc: &TexDesc, req: &TexRequest) -> Result<[u32; 4], Fault> {
    let n_levels = level_count(res);
    let l0 = &level(res, 0);
    let int_read = reads_integers(res, desc);
    let mode = if int_read {
        Mode::Int
    } else if matches!(l0.format, Format::U8 | Format::U16) && !(desc.flags & SRGB != 0 && l0.format == Format::U8) {
        Mode::Unorm
    } else if l0.format == Format::S16 || (l0.format == Format::S8 && desc.filter == LINEAR) {
        // Point-sampled 8-bit signed values read v/127 exactly; filtered ones go
        // through the 16-bit form.
        Mode::Snorm
    } else {
        Mode::Float
    };
    // sRGB results keep half precision (every H200 result has 11 significant bits).
    let prec =
        if l0.format == Format::Half || (desc.flags & SRGB != 0 && l0.format == Format::U8) { Precision::Half } else { Precision::Single };
    let off = [req.offset[0] as i64, req.offset[1] as i64, req.offset[2] as i64];
    let s = Sampler { desc, mode, srgb: desc.flags & SRGB != 0, prec, off };
    // Element-type reads are filtered too when the descriptor asks for it (the CUDA guide
    // calls linear filtering of integers invalid; the device blends the raw integers with
    // the same weights: 8/16-bit (sum v*w + 128) >> 8, signed ones as signed values,
    // 32-bit floor(sum v*w / 256) exactly: H200 through FFmpeg's scale_cuda bilinear for
    // u8/u16, GH100 fit 21 for every integer format, 1 to 4 channels, clamp, border and
    // wrap; docs/textures.md).
    let linear = desc.filter == LINEAR;
    // Integer coordinates: tex1Dfetch on linear memory, or texel coordinates.
    if req.flags & tex::INT_COORDS != 0 {
        let [x, y, z, _] = req.icoord;
        let in_range = x >= 0 && (x as u64) < l0.width && y >= 0 && (y as u64) < l0.height && z >= 0 && (z as u64) < l0.depth;
        if matches!(res, Resource::Linear { .. }) {
            return Ok(if in_range { to_words(s.texel(l0, x as u64, 0, 0), mode) } else { [0; 4] });
        }
        // A texel outside the array (or a layer past the last) reads 0 in every address
        // mode: H200, `.s32` fetches of `ptx_texms_*` (float4 arrays and pitch-2D memory,
        // clamp and border, layers -1 and past the last).
        let layer_ok = match req.geometry {
            tex::G_A1D | tex::G_A2D => (req.icoord[3] as u32 as u64) < l0.depth,
            _ => true,
        };
        if !(in_range && layer_ok) {
            return Ok([0; 4]);
        }
        let dims = dims_of(req.geometry);
        let c = [x as f32 + 0.5, y as f32 + 0.5, z as f32 + 0.5];
        let plain = TexDesc { flags: desc.flags & !NORMALIZED, ..*desc };
        let s2 = Sampler { desc: &plain, ..s };
        return Ok(to_words(sample_level(&s2, l0, dims, c, layer_slice(req, l0), false), mode));
    }
    let (dims, coords, slice_of) = match req.geometry {
        tex::G_CUBE | tex::G_ACUBE => {
            let (face, u, v) = cube_face([req.coord[0], req.coord[1], req.coord[2]]);
            let layer = if req.geometry == tex::G_ACUBE { layer_index(req.icoord[3], l0.depth / 6) } else { 0 };
            (2, [u, v, 0.0], Some(layer * 6 + face))
        }
        // A 1D array is sampled as a 2D one of height 1 at y = 0, a texel edge: with
        // linear filtering half of each result comes from row -1 (the border colour in
        // border mode), as the H200 does.
        tex::G_1D | tex::G_A1D => (2, [req.coord[0], 0.0, 0.0], None),
        g => (dims_of(g), [req.coord[0], req.coord[1], req.coord[2]], None),
    };
    // Cube faces are sampled with normalized coordinates and clamped.
    let cube_desc = TexDesc { flags: desc.flags | NORMALIZED, address: [CLAMP; 3], ..*desc };
    let s = if slice_of.is_some() { Sampler { desc: &cube_desc, ..s } } else { s };
    let slice = |l: &Layout| slice_of.unwrap_or_else(|| layer_slice(req, l));
    if req.op == tex::GATHER {
        let c = req.component.min(3) as usize;
        let norm = s.desc.flags & NORMALIZED != 0;
        let (ix, _) = axis(coords[0], l0.width, norm, true);
        let (iy, _) = axis(coords[1], l0.height, norm, true);
        let at = |dx: i64, dy: i64| {
            let u = ((ix + dx) as f32 + 0.5) / if norm { l0.width as f32 } else { 1.0 };
            let v = ((iy + dy) as f32 + 0.5) / if norm { l0.height as f32 } else { 1.0 };
            let t = sample_level(&s, l0, 2, [u, v, 0.0], slice(l0), false);
            // Float and half texels go through the filter, as a footprint of weight 256:
            // f32 subnormals read 0 and NaN reads the filter's NaN (H200, tld4 of
            // ptx_texdc_point: 1e-40 read 0, NaN 0x7fffffff; ptx_texdc_forms: half NaNs
            // of either sign read 0x7fffe000, half subnormals and infinities keep their
            // value; point sampling returns NaNs as stored).
            let t = if mode == Mode::Float && !s.srgb { blend(&[t], &[256], mode, s.prec) } else { t };
            to_words(t, mode)[c]
        };
        return Ok([at(0, 1), at(1, 1), at(1, 0), at(0, 0)]);
    }
    if n_levels == 1 {
        return Ok(to_words(sample_level(&s, l0, dims, coords, slice(l0), linear), mode));
    }
    // Mipmapped: the level of detail, biased and clamped; point or linear between levels.
    let lod = match req.op {
        tex::LEVEL => req.lod,
        tex::GRAD => grad_lod(&req.grad, [l0.width, l0.height, l0.depth], dims, desc.max_anisotropy),
        _ => 0.0,
    };
    let (k, m) = level_of_detail(lod, desc, n_levels);
    let m = if req.op == tex::GRAD && dims == 2 && desc.max_anisotropy >= 2 {
        aniso_blend(m, desc.max_anisotropy, bias_steps(desc.mip_bias))
    } else {
        m
    };
    if desc.mip_filter != LINEAR {
        let lk = level(res, (k + (m >= 128) as usize).min(n_levels - 1));
        return Ok(to_words(sample_level(&s, &lk, dims, coords, slice(&lk), linear), mode));
    }
    let lk = level(res, k);
    if m == 0 || k + 1 >= n_levels {
        return Ok(to_words(sample_level(&s, &lk, dims, coords, slice(&lk), linear), mode));
    }
    let lk1 = level(res, k + 1);
    if linear && dims == 2 {
        // Trilinear: one filter of both levels' footprints, the mip weight split as a
        // 3D footprint's z weight is, each plane by its own level's fractions, one
        // partial sum per level, the two added on the coarse grid (`trilinear_sum`;
        // H200, texf_mip_blend_*: 4096 of 4096 for 8-bit, float and half, fit 20; each
        // level filtered alone and then blended, as before: about 370, 350 and 750
        // differ).
        let f0 = footprint(&s, &lk, 2, coords, slice(&lk), true);
        let f1 = footprint(&s, &lk1, 2, coords, slice(&lk1), true);
        let (w0, w1) = (plane_weights(256 - m, f0.f[0], f0.f[1]), plane_weights(m, f1.f[0], f1.f[1]));
        let t = [f0.t[0], f0.t[1], f0.t[2], f0.t[3], f1.t[0], f1.t[1], f1.t[2], f1.t[3]];
        let w = [w0[0], w0[1], w0[2], w0[3], w1[0], w1[1], w1[2], w1[3]];
        return Ok(to_words(blend_with(&t, &w, mode, s.prec, filter::trilinear_sum), mode));
    }
    // Point sampling inside the levels (or a 3D mipmap, not measured): each level's
    // sample, then the blend of the two.
    let a = sample_level(&s, &lk, dims, coords, slice(&lk), linear);
    let b = sample_level(&s, &lk1, dims, coords, slice(&lk1), linear);
    Ok(to_words(blend_with(&[a, b], &[256 - m.min(256), m.min(256)], mode, s.prec, filter::blend_levels), mode))
}

/// `256 * log2(1 + j / 256)` as the H200's level-of-detail unit has it, for the 8 bits
/// `j` after a gradient length's leading one (fit19 on the H200: `tex.grad` over 14
/// octaves, 65 536 lengths each; the same in every octave; close to the rounded log2 at
/// `j + 1/2` but 14 entries one lower, and not monotone at 112..115).
const LOG2_FRAC: [u8; 256] = [
    0, 2, 4, 5, 6, 8, 9, 11, 12, 13, 15, 16, 18, 19, 20, 22, 23, 24, 26, 27, 28, 30, 31, 32, 34, 35, 36, 38, 39, 40, 42, 43, 44, 45, 47,
    48, 49, 50, 52, 53, 54, 55, 57, 58, 59, 60, 62, 63, 64, 65, 66, 68, 69, 70, 71, 72, 74, 75, 76, 77, 78, 79, 81, 82, 83, 84, 85, 86, 88,
    89, 90, 91, 92, 93, 94, 95, 97, 98, 99, 100, 101, 102, 103, 104, 105, 106, 107, 109, 110, 111, 112, 113, 114, 115, 116, 117, 118, 119,
    120, 121, 122, 123, 124, 125, 126, 127, 128, 129, 130, 131, 132, 133, 135, 136, 137, 137, 138, 139, 140, 141, 142, 143, 144, 145, 146,
    147, 148, 149, 150, 151, 152, 153, 154, 155, 156, 157, 158, 159, 160, 161, 162, 162, 163, 164, 165, 166, 167, 168, 169, 170, 171, 172,
    173, 173, 174, 175, 176, 177, 178, 179, 180, 181, 181, 182, 183, 184, 185, 186, 187, 188, 188, 189, 190, 191, 192, 193, 194, 195, 195,
    196, 197, 198, 199, 200, 200, 201, 202, 203, 204, 205, 205, 206, 207, 208, 209, 210, 210, 211, 212, 213, 214, 214, 215, 216, 217, 218,
    218, 219, 220, 221, 222, 222, 223, 224, 225, 226, 226, 227, 228, 229, 229, 230, 231, 232, 233, 233, 234, 235, 236, 236, 237, 238, 239,
    239, 240, 241, 242, 242, 243, 244, 245, 245, 246, 247, 248, 248, 249, 250, 251, 251, 252, 253, 253, 254, 255, 255,
];

/// The level of detail `tex.grad` derives from its two gradients (normalized coordinates
/// in `g[0..3]` and `g[3..6]`), as the H200 does for 1D and 2D textures with maxAnisotropy
/// 0 or 1 (fit19 and lod2: every one of 2 810 368 queries, isotropic, axis-aligned,
/// single gradients, random, parallel and nearly parallel pairs, 45 and 90 degrees, a
/// 4096x1024 texture): each gradient in texels, axis by axis, its length
/// `max + (11 min + 4 ulp(min)) / 32` over the absolute components cut to 9 fraction bits
/// (`ulp` the unit of that 9th bit); the gradients' sum and difference from the cut
/// components (`guarded_add`), each of their components scaled by 11/16 with a bias
/// (`diagonal_length`); the footprint the largest of the four lengths; its log2 the binade
/// plus `LOG2_FRAC` of the next 8 bits. With maxAnisotropy N of 2 or more, `aniso_lod`
/// takes over from that footprint length; 3D textures (not measured) take the exact
/// Euclidean lengths.
fn grad_lod(g: &[f32; 6], size: [u64; 3], dims: usize, max_aniso: u32) -> f32 {
    let scaled = |k: usize| -> [f64; 3] { std::array::from_fn(|a| if a < dims { g[k + a] as f64 * size[a] as f64 } else { 0.0 }) };
    let (u, v) = (scaled(0), scaled(3));
    if dims >= 3 || !u.iter().chain(&v).all(|c| c.is_finite()) {
        let len = |x: [f64; 3]| (x[0] * x[0] + x[1] * x[1] + x[2] * x[2]).sqrt();
        return len(u).max(len(v)).log2() as f32;
    }
    let length = |x: f64, y: f64| {
        let (hi, lo) = (x.abs().max(y.abs()), x.abs().min(y.abs()));
        trunc_bits(hi, 9) + if lo > 0.0 { (11.0 * trunc_bits(lo, 9) + 4.0 * ulp_bits(lo, 9)) / 32.0 } else { 0.0 }
    };
    let t = [u[0], u[1], v[0], v[1]].map(|c| trunc_bits(c, 9).copysign(c));
    let sum = diagonal_length(guarded_add(t[0], t[2]), guarded_add(t[1], t[3]));
    let difference = diagonal_length(guarded_add(t[0], -t[2]), guarded_add(t[1], -t[3]));
    let l = length(u[0], u[1]).max(length(v[0], v[1])).max(sum).max(difference);
    if l == 0.0 {
        return f32::NEG_INFINITY;
    }
    let lod = if max_aniso >= 2 { aniso_lod(l, t, max_aniso) } else { log2_unit(l) };
    lod as f32 / 256.0
}

/// 256 log2 `x` (x > 0) as the level-of-detail unit has it: the binade and `LOG2_FRAC` of
/// the next 8 bits, truncated.
fn log2_unit(x: f64) -> i32 {
    let b = binade(x);
    let j = ((x * 2f64.powi(8 - b)).floor() as i64 - 256).clamp(0, 255) as usize;
    b * 256 + LOG2_FRAC[j] as i32
}

/// The anisotropic level of detail (maxAnisotropy `n` >= 2, 256ths) from the footprint
/// length `major` and the cut texel-space components `t` (ux, uy, vx, vy), as fitted to
/// the H200 (lod2, and lod3 on GH100: all 4 997 120 anisotropic results, one product, two
/// products adding, subtracting and nearly cancelling, N = 2, 4, 16, biases 0 and 1/2):
/// the minor axis as the determinant over the major, in the log domain
/// (`log2_unit(|det|) - log2_unit(major)`, at most the major), the ratio clamped to `n`
/// (the major's level less log2 `n` octaves). The determinant `ux vy - uy vx` is formed
/// from two `det_product`s: the smaller one aligned to the larger with one guard bit below
/// the larger's 9th fraction bit (bits beyond it dropped), then added or subtracted
/// exactly (lod3: with no guard bit 8% of the subtracting results are off, with two 4%,
/// aligned exactly 10%; a sum cannot tell).
fn aniso_lod(major: f64, t: [f64; 4], n: u32) -> i32 {
    let (p1, p2) = (det_product(t[0], t[3]), det_product(t[1], t[2]));
    let (big, small) = (p1.max(p2), p1.min(p2));
    let det = if big == 0.0 {
        0.0
    } else {
        let guard = 2f64.powi(binade(big) - 10);
        let small = (small / guard).floor() * guard;
        // The magnitudes subtract when the two products have the same sign.
        if (t[0] * t[3] > 0.0) == (t[1] * t[2] > 0.0) {
            big - small
        } else {
            big + small
        }
    };
    let lmaj = log2_unit(major);
    let octaves = 31 - n.leading_zeros() as i32;
    let clamp = lmaj - 256 * octaves;
    if det == 0.0 {
        return clamp;
    }
    let lmin = (log2_unit(det) - lmaj).min(lmaj);
    lmin.max(clamp)
}

/// One product `|a| |b|` of the determinant (9-bit significands), as the unit's multiplier
/// forms it: the bit products of weight below 2^-12 of the unnormalized [1, 4) product
/// dropped, 7 such units added, the result cut to 9 fraction bits (a 10-bit float). lod3:
/// exact on all 512 x 512 significand pairs; the cut to 9 bits only shows once two
/// products are added (without it, or cutting to 10 bits, 4-6% of lod3's two-product
/// results are off).
fn det_product(a: f64, b: f64) -> f64 {
    if a == 0.0 || b == 0.0 {
        return 0.0;
    }
    let (ea, eb) = (binade(a), binade(b));
    let (xa, xb) = ((a.abs() * 2f64.powi(9 - ea)) as u64, (b.abs() * 2f64.powi(9 - eb)) as u64);
    // One partial product per bit of `a`, each cut to the grid of 2^-12 (in 2^-18 units: 64).
    let p: u64 = (0..10).map(|i| (((xa >> i) & 1) * (xb << i)) >> 6).sum();
    trunc_bits((p + 7) as f64 * 2f64.powi(ea + eb - 12), 9)
}

/// The blend fraction between two mip levels (`m`, 0..=255, after the bias) in the
/// anisotropic path: the H200 sharpens it by a factor depending on maxAnisotropy,
/// `(a m - c) / 4` clamped to 0..=256 ((6, 252) for N = 2, (7, 378) for 4, (8, 512) for 8
/// and 16: lod2's constant-per-level mipmap; other N take the next power of two below,
/// not measured). With a mip level bias of 43/256 or more at N = 2, 55/256 or more at
/// N = 4, they blend as if the fraction were one step (1/256) lower: c grows by a (lod4
/// and lod5 on GH100: every query of every bias k/256, k = 1..64, 1/2 and 1, none at 8 and
/// 16, nor with negative biases; half steps truncate). `bias_steps`: the bias in 1/256.
fn aniso_blend(m: u32, n: u32, bias_steps: i64) -> u32 {
    let (a, c) = match n {
        0..=3 => (6, 252),
        4..=7 => (7, 378),
        _ => (8, 512),
    };
    // lod5: from the first bias with a * bias >= c + a (43/256 at N = 2, 55/256 at N = 4).
    let c = if n < 8 && a as i64 * bias_steps >= (c + a) as i64 { c + a } else { c };
    ((a * m as i32 - c).div_euclid(4)).clamp(0, 256) as u32
}

/// A mip level bias in steps of 1/256, truncated as `level_of_detail` truncates it.
fn bias_steps(bias: f32) -> i64 {
    (bias as f64 * 256.0).trunc().clamp(-(1 << 20) as f64, (1 << 20) as f64) as i64
}

/// `x = 1.f * 2^b` for a normal non-zero f64 (the level-of-detail unit's values are
/// products of f32 values and sizes).
fn binade(x: f64) -> i32 {
    ((x.abs().to_bits() >> 52) & 0x7ff) as i32 - 1023
}

/// The unit of the `bits`-th fraction bit of `|x|`'s significand.
fn ulp_bits(x: f64, bits: i32) -> f64 {
    2f64.powi(binade(x) - bits)
}

/// `|x|` with its significand cut (towards zero) to `bits` fraction bits; 0 stays 0.
fn trunc_bits(x: f64, bits: i32) -> f64 {
    if x == 0.0 {
        return 0.0;
    }
    let u = ulp_bits(x, bits);
    (x.abs() / u).floor() * u
}

/// `a + b` as the level-of-detail unit adds two cut gradient components: the one of smaller
/// magnitude cut towards zero to the unit of the larger one's 10th fraction bit (one guard
/// bit below the 9-bit inputs), then added exactly (lod2: plain addition misses 479 of
/// 2 810 368 queries, a guard bit of 9 or 11 bits 687 and 339).
fn guarded_add(a: f64, b: f64) -> f64 {
    let (big, small) = if a.abs() >= b.abs() { (a, b) } else { (b, a) };
    if big == 0.0 {
        return 0.0;
    }
    let g = ulp_bits(big, 10);
    big + ((small.abs() / g).floor() * g).copysign(small)
}

/// The length the unit gives the gradients' sum or difference `(x, y)`: the larger
/// component `X` as `(11 X + 4 ulp(X)) / 16` cut to 9 bits, plus the smaller `N` as
/// `(121 N + 32 ulp(N)) / 512` (X and N cut to 9 bits first): the single-gradient length
/// of the vector scaled by 11/16 per component (about 1/sqrt 2) with a bias.
fn diagonal_length(x: f64, y: f64) -> f64 {
    let (hi, lo) = (x.abs().max(y.abs()), x.abs().min(y.abs()));
    let a = if hi > 0.0 { trunc_bits((11.0 * trunc_bits(hi, 9) + 4.0 * ulp_bits(hi, 9)) / 16.0, 9) } else { 0.0 };
    let b = if lo > 0.0 { (121.0 * trunc_bits(lo, 9) + 32.0 * ulp_bits(lo, 9)) / 512.0 } else { 0.0 };
    a + b
}

/// Fraction bits the level of detail is held with (truncated) before the level and the
/// 8-bit blend fraction are taken from it: lod 1/256 - 2^-k reads level 0 alone for
/// every k up to 34 (texf_mip_lodbits), so the lod is effectively truncated; 28 bits
/// hold every f32 lod below 2^-28 as 0 and above exactly enough for the 8-bit fraction.
const LOD_BITS: u32 = 28;

/// The level (k) and the 8-bit fraction towards level k+1 (m) for a level of detail
/// `lod` (before bias), as the H200 derives them (texf_mip_lod, texf_mip_bias_clamp,
/// texf_mip_lodbits*): the lod truncated to `LOD_BITS` fraction bits; the bias and the min/max clamps each
/// truncated to 1/256; lod + bias clamped to [min, max] and to the levels there are;
/// the fraction truncated to 8 bits. NaN and -inf read level 0, +inf the last level.
fn level_of_detail(lod: f32, desc: &TexDesc, levels: usize) -> (usize, u32) {
    let one = 1i64 << LOD_BITS;
    let fixed = |v: f32| -> i64 {
        if v.is_nan() {
            0
        } else {
            (v as f64 * one as f64).floor().clamp(-(1i64 << 40) as f64, (1i64 << 40) as f64) as i64
        }
    };
    let step = |v: f32| -> i64 { bias_steps(v) << (LOD_BITS - 8) };
    let top = (levels as i64 - 1) * one;
    let (lo, hi) = (step(desc.min_lod), step(desc.max_lod));
    let l = (fixed(lod) + step(desc.mip_bias)).min(hi.max(lo)).max(lo).clamp(0, top);
    ((l >> LOD_BITS) as usize, ((l >> (LOD_BITS - 8)) & 255) as u32)
}

fn dims_of(geometry: u32) -> usize {
    match geometry {
        tex::G_1D | tex::G_A1D => 1,
        tex::G_3D => 3,
        _ => 2,
    }
}

/// The layer index of a layered fetch, clamped to the layers there are as an unsigned
/// number (layer -1 reads the last layer, measured).
fn layer_index(layer: i32, layers: u64) -> u64 {
    (layer as u32 as u64).min(layers.max(1) - 1)
}

fn layer_slice(req: &TexRequest, l: &Layout) -> u64 {
    match req.geometry {
        tex::G_A1D | tex::G_A2D => layer_index(req.icoord[3], l.depth),
        _ => 0,
    }
}

/// `suld.b` / `sust.b`: byte x, rows, slices, with the boundary mode.
fn surface(res: &Resource, req: &mut TexRequest) -> Result<(), Fault> {
    let l = level(res, 0);
    let size = req.size.clamp(1, 16) as u64;
    let [x, y, z, layer] = req.icoord;
    if (x as i64).rem_euclid(size as i64) != 0 {
        return Err((CUDA_ERROR_MISALIGNED_ADDRESS, format!("surface access of {size} bytes at byte x {x}: not aligned to its size")));
    }
    let row = l.width * l.elem();
    let dims = dims_of(req.geometry);
    // A layer is clamped as an unsigned number (layer -1 reads the last layer, measured).
    let layered = matches!(req.geometry, tex::G_A1D | tex::G_A2D);
    let zc = if layered { layer } else { z };
    let yc = if dims >= 2 { y } else { 0 };
    let zc = if dims >= 3 || matches!(req.geometry, tex::G_A1D | tex::G_A2D) { zc } else { 0 };
    let rows = if dims >= 2 { l.height } else { 1 };
    let inside = x >= 0 && (x as u64) + size <= row && yc >= 0 && (yc as u64) < rows && zc >= 0 && (zc as u64) < l.depth;
    let (bx, by, bz) = if inside {
        (x as u64, yc as u64, zc as u64)
    } else {
        match req.clamp {
            tex::CLAMP => {
                let cx = (x as i64).clamp(0, (row - size) as i64) as u64;
                let cx = cx - cx % size;
                let cz = if layered { (zc as u32 as u64).min(l.depth - 1) } else { (zc as i64).clamp(0, l.depth as i64 - 1) as u64 };
                (cx, (yc as i64).clamp(0, rows as i64 - 1) as u64, cz)
            }
            tex::ZERO => {
                if req.op == tex::SURF_LOAD {
                    req.data = [0; 4];
                }
                return Ok(());
            }
            _ => {
                return Err((
                    CUDA_ERROR_ILLEGAL_ADDRESS,
                    format!(
                        "surface access out of range in trap mode: byte x {x}, y {y}, z {z} (extent {row} bytes x {rows} x {})",
                        l.depth
                    ),
                ))
            }
        }
    };
    let addr = l.base + bz * l.slice + by * l.pitch + bx;
    let n = size as usize;
    if req.op == tex::SURF_LOAD {
        let mut bytes = [0u8; 16];
        // SAFETY: the access lies inside the surface's array (checked above).
        unsafe { std::ptr::copy_nonoverlapping(addr as *const u8, bytes.as_mut_ptr(), n) };
        for k in 0..4 {
            req.data[k] = u32::from_le_bytes([bytes[4 * k], bytes[4 * k + 1], bytes[4 * k + 2], bytes[4 * k + 3]]);
        }
    } else {
        let mut bytes = [0u8; 16];
        for k in 0..4 {
            bytes[4 * k..4 * k + 4].copy_from_slice(&req.data[k].to_le_bytes());
        }
        // SAFETY: as above.
        unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), addr as *mut u8, n) };
    }
    Ok(())
}

/// The bytes `sust.p` writes for four source words, as the H200 converts them
/// (ptx_sust_p_*): 8/16/32-bit unsigned formats saturate the word as a u32, signed
/// ones as an s32; half converts it as an f32 towards zero (`half_rz`); float stores
/// the bits. Channels the format lacks are ignored.
fn format_element(l: &Layout, words: [u32; 4]) -> [u32; 4] {
    let mut bytes = [0u8; 16];
    let n = l.format.bytes() as usize;
    for c in 0..(l.channels.min(4) as usize) {
        let w = words[c];
        let v: u32 = match l.format {
            Format::U8 => w.min(0xff),
            Format::U16 => w.min(0xffff),
            Format::S8 => (w as i32).clamp(-128, 127) as u32,
            Format::S16 => (w as i32).clamp(-32768, 32767) as u32,
            Format::Half => half_rz(f32::from_bits(w)) as u32,
            Format::U32 | Format::S32 | Format::Float => w,
        };
        bytes[c * n..c * n + n].copy_from_slice(&v.to_le_bytes()[..n]);
    }
    let mut out = [0u32; 4];
    for (k, o) in out.iter_mut().enumerate() {
        *o = u32::from_le_bytes([bytes[4 * k], bytes[4 * k + 1], bytes[4 * k + 2], bytes[4 * k + 3]]);
    }
    out
}

/// f32 to IEEE half rounding towards zero (finite values beyond 65504 give 65504),
/// NaNs keeping their sign and the top of their payload (0x7fffffff reads 0x7fff).
fn half_rz(f: f32) -> u16 {
    let b = f.to_bits();
    let s = ((b >> 16) & 0x8000) as u16;
    let e = ((b >> 23) & 0xff) as i32 - 127;
    let m = b & 0x7f_ffff;
    if e == 128 {
        return s | 0x7c00 | if m == 0 { 0 } else { ((m >> 13) as u16).max(0x200) };
    }
    if e > 15 {
        return s | 0x7bff;
    }
    if e >= -14 {
        return s | (((e + 15) as u16) << 10) | (m >> 13) as u16;
    }
    let shift = 13 + (-14 - e);
    if shift > 24 {
        s
    } else {
        s | ((m | 0x80_0000) >> shift) as u16
    }
}

/// `txq` / `suq` attributes; `level` is txq.level's mip level.
///
/// Sizes as the H200 answers them (conformance ptx_txq_*, reports/reference/h200/
/// textures-fit/run8.md): the extents the resource was made with, 0 where it has none
/// (the height of linear memory, the depth of anything 2D); a layered array's depth is its
/// layer count; a cubemap's depth is 0 to txq and 6 to suq. txq.level gives a level's
/// extents as `cuMipmappedArrayGetLevel` makes them, 0 for a level the resource does not
/// have (negative, past the last, or any but 0 of a resource that is not mipmapped).
fn query(res: &Resource, desc: Option<&TexDesc>, q: u32, level: i32) -> Result<u32, Fault> {
    let l0 = self::level(res, 0);
    let (cubemap, layered) = match res {
        Resource::Array { array, .. } => (array.cubemap(), array.layered()),
        _ => (false, false),
    };
    let surface = desc.is_none();
    let extent = |k: usize| -> Option<[u32; 3]> {
        let raw = |a: &super::Array| [a.width as u32, a.height as u32, if a.cubemap() && !surface { 0 } else { a.depth as u32 }];
        match res {
            Resource::Array { array, .. } => (k == 0).then(|| raw(array)),
            Resource::Mipmap { levels, .. } => levels.get(k).map(|a| raw(a)),
            Resource::Linear { .. } => (k == 0).then_some([l0.width as u32, 0, 0]),
            Resource::Pitch2D { width, height, .. } => (k == 0).then_some([*width as u32, *height as u32, 0]),
        }
    };
    if let tex::Q_LEVEL_WIDTH | tex::Q_LEVEL_HEIGHT | tex::Q_LEVEL_DEPTH = q {
        let e = usize::try_from(level).ok().and_then(extent).unwrap_or([0; 3]);
        return Ok(e[(q - tex::Q_LEVEL_WIDTH) as usize]);
    }
    let l = &l0;
    let e = extent(0).unwrap_or([0; 3]);
    Ok(match q {
        tex::Q_WIDTH | tex::Q_HEIGHT | tex::Q_DEPTH => e[(q - tex::Q_WIDTH) as usize],
        tex::Q_ARRAY_SIZE => {
            if layered || cubemap {
                l.depth as u32
            } else {
                0
            }
        }
        tex::Q_NUM_MIPMAP_LEVELS => level_count(res) as u32,
        tex::Q_NUM_SAMPLES => 0,
        tex::Q_NORMALIZED_COORDS => desc.map(|d| (d.flags & NORMALIZED != 0) as u32).unwrap_or(0),
        tex::Q_FILTER_MODE => desc.map(|d| d.filter).unwrap_or(0),
        tex::Q_ADDR_MODE_0 | tex::Q_ADDR_MODE_1 | tex::Q_ADDR_MODE_2 => {
            desc.map(|d| d.address[(q - tex::Q_ADDR_MODE_0) as usize]).unwrap_or(0)
        }
        _ => return Err((CUDA_ERROR_LAUNCH_FAILED, format!("txq/suq attribute {q} is not emulated"))),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    // FFmpeg 5.1's scale_cuda bilinear on the H200 (scripts/ffmpeg-filters, case
    // scale_bilinear_nv12_nv12 and scale_bilinear_p016le_p016le: testsrc2 160x120 to
    // 112x84): rows 6..9, columns 0..23 of frame 0's luma, and the device's output row 5,
    // columns 0..15. The kernel reads an 8- or 16-bit pitch-2D plane with
    // CU_TRSF_READ_AS_INTEGER and linear filtering, and averages four taps.
    const SRC8: [u8; 96] = [
        74, 74, 30, 30, 30, 30, 146, 146, 146, 146, 44, 44, 46, 46, 146, 146, 146, 146, 32, 32, 32, 32, 32, 32, 74, 74, 30, 30, 30, 146,
        146, 30, 41, 146, 146, 44, 46, 146, 146, 49, 51, 146, 146, 32, 32, 32, 32, 32, 81, 81, 34, 34, 146, 146, 39, 39, 41, 41, 146, 146,
        146, 146, 49, 49, 51, 51, 146, 146, 56, 56, 58, 146, 81, 81, 34, 34, 146, 146, 39, 39, 41, 41, 146, 146, 146, 146, 49, 49, 51, 51,
        146, 146, 56, 56, 58, 146,
    ];
    const DEV8: [u32; 16] = [77, 48, 39, 109, 106, 36, 93, 128, 82, 132, 80, 58, 124, 90, 42, 41];
    /// What point sampling gives (the emulation before integer reads were filtered).
    const POINT8: [u32; 16] = [78, 55, 32, 117, 93, 38, 67, 121, 96, 146, 73, 51, 122, 118, 44, 45];
    const SRC16: [u16; 96] = [
        18976, 18976, 7784, 7784, 7784, 7784, 37407, 37407, 37419, 37419, 11342, 11342, 11950, 11950, 37426, 37426, 37429, 37429, 8269,
        8269, 8269, 8269, 8269, 8269, 18976, 18976, 7784, 7784, 7784, 37407, 37407, 7784, 10734, 37419, 37421, 11342, 11950, 37424, 37426,
        12558, 13198, 37429, 37409, 8269, 8269, 8269, 8269, 8269, 20941, 20941, 8877, 8877, 37414, 37414, 10126, 10126, 10734, 10734,
        37421, 37421, 37424, 37424, 12558, 12558, 13198, 13198, 37431, 37431, 14415, 14415, 15023, 37436, 20941, 20941, 8877, 8877, 37414,
        37414, 10126, 10126, 10734, 10734, 37421, 37421, 37424, 37424, 12558, 12558, 13198, 13198, 37431, 37431, 14415, 14415, 15023,
        37436,
    ];
    const DEV16: [u32; 16] =
        [19679, 12287, 10070, 27892, 27270, 9376, 23868, 32726, 20915, 33883, 20548, 14878, 31864, 23164, 10803, 10605];

    /// FFmpeg's Subsample_Bilinear for output (xo, 5) through `fetch`: four taps
    /// around the source position, (2 + sum) >> 2.
    fn scale_cuda_bilinear(res: &Resource, desc: &TexDesc, xo: i32) -> u32 {
        let (hscale, vscale) = (160.0f32 / 112.0, 120.0f32 / 84.0);
        let (xi, yi) = ((xo as f32 + 0.5) * hscale, (5.0f32 + 0.5) * vscale - 6.0);
        let (wh, wv) = ((0.5 * (hscale - 1.0)).clamp(0.0, 1.0), (0.5 * (vscale - 1.0)).clamp(0.0, 1.0));
        let (dx, dy) = (wh / (0.5 + wh), wv / (0.5 + wv));
        let mut r = 2;
        for (x, y) in [(xi - dx, yi - dy), (xi + dx, yi - dy), (xi - dx, yi + dy), (xi + dx, yi + dy)] {
            let req = TexRequest { op: tex::FETCH, geometry: tex::G_2D, coord: [x, y, 0.0, 0.0], result: tex::R_U32, ..Default::default() };
            r += fetch(res, desc, &req).unwrap()[0];
        }
        r >> 2
    }

    #[test]
    fn integer_reads_of_unsigned_texels_are_filtered_as_the_h200_filters_them() {
        let linear = TexDesc { address: [CLAMP; 3], filter: LINEAR, flags: READ_AS_INTEGER, ..Default::default() };
        let point = TexDesc { filter: 0, ..linear };
        // CU_AD_FORMAT_UNSIGNED_INT8 = 1, _INT16 = 2.
        let res8 = Resource::Pitch2D { ptr: SRC8.as_ptr() as u64, format: 1, channels: 1, width: 24, height: 4, pitch: 24 };
        let got: Vec<u32> = (0..16).map(|x| scale_cuda_bilinear(&res8, &linear, x)).collect();
        assert_eq!(got, DEV8, "8-bit: the device's bytes");
        let got: Vec<u32> = (0..16).map(|x| scale_cuda_bilinear(&res8, &point, x)).collect();
        assert_eq!(got, POINT8, "point sampling gives other bytes: the check can fail");
        let res16 = Resource::Pitch2D { ptr: SRC16.as_ptr() as u64, format: 2, channels: 1, width: 24, height: 4, pitch: 48 };
        let got: Vec<u32> = (0..16).map(|x| scale_cuda_bilinear(&res16, &linear, x)).collect();
        assert_eq!(got, DEV16, "16-bit: the device's values");
    }

    #[test]
    fn bilinear_weights_sum_to_256_for_every_pair_of_fractions() {
        for a in 0..=256 {
            for b in 0..=256 {
                let w = bilinear(a, b);
                assert_eq!(w.iter().sum::<u32>(), 256, "a={a} b={b}: {w:?}");
            }
        }
        assert_eq!(bilinear(255, 255), [0, 1, 1, 254]);
        for a in 0..=256 {
            for b in 0..=256 {
                let w11 = (a * b + 128) >> 8;
                assert_eq!(bilinear(a, b), [256 + w11 - a - b, a - w11, b - w11, w11], "a={a} b={b}: the H200's 2D weights");
            }
        }
        // A 3D footprint: planes of 256 - c and c (H200, texf_3d_weights: x = 3/256,
        // y = 25/256, z = 112/256 gives 128, 2, 14, 0 and 100, 1, 11, 0).
        assert_eq!((plane_weights(144, 3, 25), plane_weights(112, 3, 25)), ([128, 2, 14, 0], [100, 1, 11, 0]));
        assert_eq!(bilinear(128, 0), [128, 128, 0, 0]);
    }

    fn layout(format: Format, channels: u32) -> Layout {
        Layout { base: 0, width: 32, height: 1, depth: 1, pitch: 0, slice: 0, format, channels }
    }

    /// Bytes an H200 stored with sust.p (reports/reference/h200/textures-fit,
    /// ptx_sust_p_*): thread 0 stores the words of 0.0, 0.2, -1.0, 65504.0; thread 16
    /// the integers 0, 128, 0x80000000, 65535; thread 1 of the half surface 0.5, NaN,
    /// 0.999, 70000.0; thread 17 the integers 1, 255, 0x7fffffff, 65536.
    #[test]
    fn sust_p_converts_as_the_h200() {
        let f = |v: [f32; 4]| v.map(f32::to_bits);
        let t0 = f([0.0, 0.2, -1.0, 65504.0]);
        let t16 = [0, 128, 0x8000_0000, 65535];
        assert_eq!(format_element(&layout(Format::U8, 4), t0)[0], 0xffff_ff00);
        assert_eq!(format_element(&layout(Format::U8, 4), t16)[0], 0xffff_8000);
        assert_eq!(format_element(&layout(Format::S8, 4), t0)[0], 0x7f80_7f00);
        assert_eq!(format_element(&layout(Format::U16, 2), t16)[0], 0x0080_0000);
        let t1 = [0.5f32.to_bits(), 0x7fc0_0000, 0.999f32.to_bits(), 70000f32.to_bits()];
        assert_eq!(format_element(&layout(Format::Half, 4), t1)[..2], [0x7e00_3800, 0x7bff_3bfd]);
        let t17 = [1, 255, 0x7fff_ffff, 65536];
        assert_eq!(format_element(&layout(Format::Half, 4), t17)[..2], [0, 0x7fff]);
        // 1e-3 truncates to 0x1418 (nearest would be 0x1419).
        assert_eq!(half_rz(1e-3), 0x1418);
        assert_eq!(format_element(&layout(Format::Float, 2), t0)[..2], [0, 0.2f32.to_bits()]);
    }

    /// Levels and fractions an H200 blended (texf_mip_lod, texf_mip_bias_clamp,
    /// texf_mip_lodbits).
    #[test]
    fn level_of_detail_as_the_h200() {
        let d = TexDesc { max_lod: 100.0, ..Default::default() };
        assert_eq!(level_of_detail(3.0 / 512.0, &d, 7), (0, 1));
        assert_eq!(level_of_detail(1.0 / 256.0 - 2f32.powi(-29), &d, 7), (0, 0));
        assert_eq!(level_of_detail(f32::NAN, &d, 7), (0, 0));
        assert_eq!(level_of_detail(f32::INFINITY, &d, 7), (6, 0));
        // Bias 0.3 and min 0.7 are each truncated to 1/256: 76 and 179.
        let b = TexDesc { mip_bias: 0.3, min_lod: 0.7, max_lod: 3.2, ..Default::default() };
        assert_eq!(level_of_detail(413.0 / 1024.0, &b, 7), (0, 179));
        assert_eq!(level_of_detail(0.40625, &b, 7), (0, 180));
        assert_eq!(level_of_detail(10.0, &b, 7), (3, 51));
    }

    /// 8-bit signed values at texel centres through the linear filter (texf_s8_1d).
    #[test]
    fn f16_results_round_as_the_h200() {
        // (f32 bits, the H200's .f16 result: ptx_texh_point)
        for (f, h) in [
            (0x477f_f000u32, 0x7c00u16),
            (0x477f_efff, 0x7bff),
            (0xc77f_f000, 0xfc00),
            (0x3300_0000, 0x0000),
            (0x3300_0001, 0x0001),
            (0xb300_0000, 0x8000),
            (0x3380_0000, 0x0001),
            (0x3340_0000, 0x0001),
            (0x3880_0000, 0x0400),
            (0x3f80_1000, 0x3c00),
            (0x3f80_3000, 0x3c02),
            (0x3f80_2fff, 0x3c01),
            (0x7fc0_0000, 0x7fff),
            (0xffc1_2345, 0x7fff),
            (0x7f80_0001, 0x7fff),
            (0xff80_0000, 0xfc00),
            (0x0000_0001, 0x0000),
            (0x8000_0000, 0x8000),
        ] {
            assert_eq!(f32_to_half_rn(f32::from_bits(f)), h, "{f:#x}");
        }
        assert_eq!(to_halves([0x3f80_0000, 0xbf80_0000, 0, 0x7fc0_0000], None), [0xbc00_3c00, 0x7fff_0000, 0, 0]);
        assert_eq!(to_halves([0x3f80_0000; 4], Some(1)), [0; 4]);
        assert_eq!(to_halves([0x3f80_0000; 4], Some(2)), [0; 4]);
        // ptx_texh_int: s32 / u32x2 words (tiny as f32 bits) read as signed zeros.
        assert_eq!(to_halves([0x8080_0100, 0x0180_0101, 0x8000_0001, 0], Some(4)), [0x0000_8000, 0x8000, 0, 0]);
    }

    #[test]
    fn srgb_blends_as_the_h200() {
        // (texel a, texel b, weight of b, the H200's result: fit19's exhaustive pairs)
        let cases = [
            (21, 248, 100, 0x3ebb_8000u32),
            (248, 21, 7, 0x3f69_8000),
            (33, 200, 128, 0x3e97_0000),
            (1, 2, 77, 0x39d0_2000),
            (136, 135, 255, 0x3e78_0000),
            (0, 255, 1, 0x3b80_0000),
            (64, 70, 3, 0x3d52_8000),
        ];
        for (a, b, w, want) in cases {
            assert_eq!((filter::srgb_sum(&[(a, 256 - w), (b, w)]) as f32).to_bits(), want, "sRGB {a} / {b} at weight {w}");
        }
        // A texel of weight 0 does not set the exponent: the other one reads as stored.
        assert_eq!(filter::srgb_sum(&[(255, 0), (7, 256)]) as f32, format::srgb_to_linear(7));
        for v in 0..256 {
            let (m, e) = format::srgb_filter_form(v);
            assert_eq!(m as f64 * 2f64.powi(e - 7), format::srgb_to_linear(v) as f64, "byte {v}");
            assert!(m < 256 && (v < 32 || m >= 105), "byte {v}: significand {m}");
        }
    }

    /// What the probes' mipmap (13 levels, level L holding L, linear mip filter) returns
    /// times 256 for gradients `g` (dPdx, dPdy) on a `w` x `h` texture with maxAnisotropy
    /// `n`: the level and the blend fraction.
    fn probe_result(g: [f32; 4], w: u64, h: u64, n: u32) -> i64 {
        probe_biased(g, w, h, n, 0)
    }

    /// `probe_result` with a mip level bias of `bias` / 256.
    fn probe_biased(g: [f32; 4], w: u64, h: u64, n: u32, bias: i64) -> i64 {
        let lod = grad_lod(&[g[0], g[1], 0.0, g[2], g[3], 0.0], [w, h, 1], 2, n);
        let l = ((lod as f64 * 256.0).floor() as i64 + bias).clamp(0, 12 * 256);
        if n >= 2 {
            (l >> 8) * 256 + aniso_blend((l & 255) as u32, n, bias) as i64
        } else {
            l
        }
    }

    #[test]
    fn gradient_level_of_detail_as_the_h200() {
        // (dPdx, dPdy as f32 bits, the H200's lod * 256 on a 4096x4096 mipmap of 13 levels:
        // fit19's iso, axis, dir and rnd sections)
        let cases: [([u32; 4], i64); 12] = [
            ([0x3db2_0e00, 0, 0, 0x3db2_0e00], 2170),
            ([0x3ea2_9080, 0, 0, 0x3ea2_9080], 2649),
            ([0x3928_9800, 0, 0, 0x3928_9800], 0),
            ([0x3e33_4fde, 0, 0, 0x3d46_7991], 2428),
            ([0x3c08_980f, 0, 0, 0x394a_45c1], 1304),
            ([0x3c4c_c089, 0, 0, 0x3e7e_f65f], 2558),
            ([0x3aae_7488, 0x3ac0_7e17, 0, 0], 763),
            ([0, 0, 0x3eac_961b, 0xbd8b_1ed6], 2695),
            ([0x3c59_22cb, 0x3b9d_593d, 0, 0], 1519),
            ([0xbee5_c685, 0xbbc0_5965, 0xbe75_51ef, 0x3970_66bb], 2796),
            ([0xba95_5c06, 0x3d5f_b682, 0x3f0c_f756, 0x3e4d_2c9d], 2894),
            ([0xbca7_8aac, 0x3dee_e79b, 0x3bb7_7667, 0x3d79_722b], 2304),
        ];
        for (g, want) in cases {
            let g = g.map(f32::from_bits);
            assert_eq!(probe_result(g, 4096, 4096, 0), want, "gradients {g:?}");
        }
    }

    /// Every line of fit19's sample (emu-driver/tests/data/fit19-samples.txt: 4096 8-bit
    /// signed and 4096 sRGB two-texel blends, 5632 gradient queries, 3232 anisotropic ones
    /// (688 of them lod3's two-product determinants, mostly ones the determinant of fit 2
    /// got wrong; 176 lod5's: the bias threshold, random gradients with a bias), drawn
    /// from the H200's and GH100's exhaustive records) is what the sampler's arithmetic
    /// gives.
    #[test]
    fn fit19_records_of_the_h200() {
        let text = include_str!("../../tests/data/fit19-samples.txt");
        let mut seen = [0usize; 5];
        for line in text.lines().filter(|l| !l.starts_with('#')) {
            let f: Vec<&str> = line.split(' ').collect();
            let int = |k: usize| f[k].parse::<i32>().unwrap();
            // Four f32 gradient components from field k on, as hex bits.
            let bits = |k: usize| -> [f32; 4] { std::array::from_fn(|i| f32::from_bits(u32::from_str_radix(f[k + i], 16).unwrap())) };
            match f[0] {
                "s8" => {
                    let (a, b, w) = (int(1), int(2), int(3));
                    assert_eq!(snorm8_from_sum(a * (256 - w) + b * w), int(4), "{line}");
                    seen[0] += 1;
                }
                "srgb" => {
                    let (a, b, w) = (int(1) as u32, int(2) as u32, int(3) as u32);
                    let want = format::half_to_f32(u16::from_str_radix(f[4], 16).unwrap());
                    assert_eq!((filter::srgb_sum(&[(a, 256 - w), (b, w)]) as f32).to_bits(), want.to_bits(), "{line}");
                    seen[1] += 1;
                }
                "grad" => {
                    assert_eq!(probe_result(bits(2), int(6) as u64, int(7) as u64, 0), int(8) as i64, "{line}");
                    seen[2] += 1;
                }
                "aniso" => {
                    assert_eq!(probe_result(bits(3), 4096, 4096, int(2) as u32), int(7) as i64, "{line}");
                    seen[3] += 1;
                }
                "anisob" => {
                    // lod4 (GH100): maxAnisotropy N with a mip level bias of BIAS/256.
                    let (n, bias) = (int(2) as u32, int(3) as i64);
                    assert_eq!(probe_biased(bits(4), 4096, 4096, n, bias), int(8) as i64, "{line}");
                    seen[4] += 1;
                }
                k => panic!("unknown record {k}"),
            }
        }
        assert_eq!(seen, [4096, 4096, 5632, 2464, 768]);
    }

    #[test]
    fn snorm8_widening_as_the_h200() {
        // Texel centres (texf_s8_1d): v * 258 + floor((v + 64) / 128), -128 clamped.
        let centre = |v: i32| snorm8_from_sum(v * 256);
        assert_eq!([centre(-128), centre(-64), centre(64), centre(126), centre(-1)], [-32767, -16512, 16513, 32509, -258]);
        // Blends (fit19, H200): (A, B, w) -> k, the result being k / 32767. Pair (0, -128)
        // reads -129 w at weight w (-128 is not clamped before the blend); (0, 127) and
        // (0, 64) read one below the rounded blend of the widened texels at these weights.
        let blend = |a: i32, b: i32, w: i32| snorm8_from_sum(a * (256 - w) + b * w);
        assert_eq!([blend(0, -128, 12), blend(0, 127, 113), blend(0, 64, 128), blend(0, -64, 1)], [-1548, 14463, 8256, -65]);
    }

    /// probe2's pseudo-random generator (reports/reference/h200/textures-fit/fit21/probe2.cpp).
    struct Lcg(u64);
    impl Lcg {
        fn next(&mut self) -> u32 {
            self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (self.0 >> 32) as u32
        }
    }

    /// Element-type reads (`CU_TRSF_READ_AS_INTEGER`) with linear filtering of every
    /// integer format, as GH100 (an H100, the H200's chip; driver 580.159.04) gave them in
    /// fit 21: 234 of its 540 672 words' lines (`fit21-records.txt`, picked by the fit's
    /// make_records.py: each channel's extremes, footprints holding the format's minimum
    /// and maximum, border taps, wrapped coordinates, and lines where each rejected rule
    /// fails), on probe2's 16x16 textures, rebuilt here with its generator.
    #[test]
    fn integer_reads_of_every_integer_format_are_filtered_as_gh100_filters_them() {
        use crate::cu::{
            CU_AD_FORMAT_SIGNED_INT16, CU_AD_FORMAT_SIGNED_INT32, CU_AD_FORMAT_SIGNED_INT8, CU_AD_FORMAT_UNSIGNED_INT16,
            CU_AD_FORMAT_UNSIGNED_INT32, CU_AD_FORMAT_UNSIGNED_INT8,
        };
        // probe2's formats, in its order: (name, format, bytes, signed, channels).
        let formats = [
            ("u8x1", CU_AD_FORMAT_UNSIGNED_INT8, 1, false, 1),
            ("s8x1", CU_AD_FORMAT_SIGNED_INT8, 1, true, 1),
            ("u16x1", CU_AD_FORMAT_UNSIGNED_INT16, 2, false, 1),
            ("s16x1", CU_AD_FORMAT_SIGNED_INT16, 2, true, 1),
            ("u32x1", CU_AD_FORMAT_UNSIGNED_INT32, 4, false, 1),
            ("s32x1", CU_AD_FORMAT_SIGNED_INT32, 4, true, 1),
            ("s8x4", CU_AD_FORMAT_SIGNED_INT8, 1, true, 4),
            ("u16x2", CU_AD_FORMAT_UNSIGNED_INT16, 2, false, 2),
            ("s16x2", CU_AD_FORMAT_SIGNED_INT16, 2, true, 2),
            ("u32x2", CU_AD_FORMAT_UNSIGNED_INT32, 4, false, 2),
            ("s32x4", CU_AD_FORMAT_SIGNED_INT32, 4, true, 4),
        ];
        let modes = [("clamp", CLAMP), ("border", BORDER), ("wrap", WRAP)];
        let records = include_str!("fit21-records.txt");
        let mut rng = Lcg(0x2545_F491_4F6C_DD1D);
        let (mut checked, mut point_differs) = (0, 0);
        for &(name, format, bytes, sgn, ch) in &formats {
            let bits = 8 * bytes;
            let mask = if bits == 32 { u32::MAX } else { (1u32 << bits) - 1 };
            let mut host = Vec::with_capacity(16 * 16 * ch * bytes);
            let mut first = Vec::new();
            for y in 0..16 {
                for _ in 0..16 * ch {
                    let r = rng.next();
                    let v = if y < 4 {
                        let (lo, hi) = if sgn { (-(1i64 << (bits - 1)), (1i64 << (bits - 1)) - 1) } else { (0, mask as i64) };
                        let c = [lo, hi, if sgn { -1 } else { 1 }, 0, if sgn { 1 } else { hi - 1 }, if sgn { lo + 1 } else { 2 }];
                        c[(r % 6) as usize] as u32 & mask
                    } else if y < 8 {
                        (if sgn { (r % 601) as i64 - 300 } else { (r % 601) as i64 }) as u32 & mask
                    } else {
                        r & mask
                    };
                    if first.len() < 8 {
                        first.push(v);
                    }
                    host.extend_from_slice(&v.to_le_bytes()[..bytes]);
                }
            }
            if name == "u8x1" {
                assert_eq!(first, [0, 0, 2, 0, 2, 0xfe, 0, 0xff], "probe2's first texels (device2.txt)");
            }
            let res = Resource::Pitch2D {
                ptr: host.as_ptr() as u64,
                format,
                channels: ch as u32,
                width: 16,
                height: 16,
                pitch: (16 * ch * bytes) as u64,
            };
            for &(mname, mode) in &modes {
                // The coordinates (the records hold their bits).
                for _ in 0..2 * 2048 {
                    rng.next();
                }
                let flags = READ_AS_INTEGER | if mode == WRAP { NORMALIZED } else { 0 };
                let desc = TexDesc { address: [mode; 3], filter: LINEAR, flags, border: [-1.5, 2.0, 0.25, 1.0], ..Default::default() };
                let point = TexDesc { filter: 0, ..desc };
                for line in records.lines().filter(|l| l.starts_with(&format!("{name} {mname} "))) {
                    let f: Vec<u32> = line.split(' ').skip(2).map(|w| u32::from_str_radix(w, 16).unwrap()).collect();
                    let coord = [f32::from_bits(f[0]), f32::from_bits(f[1]), 0.0, 0.0];
                    let req = TexRequest { op: tex::FETCH, geometry: tex::G_2D, coord, result: tex::R_S32, ..Default::default() };
                    assert_eq!(fetch(&res, &desc, &req).unwrap(), f[2..6], "{line}");
                    point_differs += (fetch(&res, &point, &req).unwrap() != f[2..6]) as u32;
                    checked += 1;
                }
            }
        }
        assert_eq!(checked, 234, "every record line read");
        // Many picked lines are texel centres or extremes where a point sample agrees.
        assert_eq!(point_differs, 109, "point sampling gives other words: the check can fail");
    }
}
