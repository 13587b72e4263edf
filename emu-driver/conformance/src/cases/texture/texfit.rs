//! Cases that pin down the texture unit's arithmetic (`texf_*`: dense grids of inputs
//! chosen so that one recording decides between models of float, half, sRGB and 8-bit
//! signed filtering, and of mipmap level selection and blending), and the PTX-only
//! features nvcc 13 no longer emits from CUDA C++ (`ptx_*`: texture and surface
//! references with the cuTexRef*/cuSurfRef* entry points, formatted surface stores
//! `sust.p`, `txq`/`suq` of every attribute and `txq.level`, texture offsets, the
//! residency predicate and `tex.base`). The PTX modules are hand-written
//! (kernels/texref.ptx, sustp.ptx, texq.ptx, texx.ptx) and loaded as text.

use super::kit::*;
use crate::api::*;
use crate::cases::devres::lanes;
use crate::cx::{pp, Cx, Run};
use std::ffi::c_void;
use std::ptr::null_mut;

use std::ffi::CString;

const TEXREF_PTX: &str = include_str!("../../../kernels/texref.ptx");
const SUSTP_PTX: &str = include_str!("../../../kernels/sustp.ptx");
const TEXQ_PTX: &str = include_str!("../../../kernels/texq.ptx");
const TEXX_PTX: &str = include_str!("../../../kernels/texx.ptx");

/// A deterministic generator (xorshift64*), so every driver sees the same inputs.
pub(super) struct Rng(u64);

impl Rng {
    pub(super) fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1)
    }
    pub(super) fn next(&mut self) -> u32 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 32) as u32
    }
    pub(super) fn below(&mut self, n: u32) -> u32 {
        self.next() % n
    }
    /// A float with a random sign and mantissa and an exponent in [lo, hi].
    pub(super) fn float(&mut self, lo: i32, hi: i32) -> f32 {
        let e = lo + self.below((hi - lo + 1) as u32) as i32;
        let bits = ((self.next() & 1) << 31) | (((e + 127) as u32) << 23) | (self.next() & 0x7f_ffff);
        f32::from_bits(bits)
    }
}

pub(super) fn f32_bytes(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

pub(super) fn u16_bytes(v: &[u16]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// Pairs of texels for the two-term filter: pair k is texels (2k, 2k+1). Exponent gaps
/// 0..31 between the two, every sign combination, the larger one first or second, and
/// special pairs (exact cancellation, zeros, subnormals, infinities, NaN, the largest
/// finite values).
pub(super) fn float_pairs(r: &mut Rng) -> Vec<f32> {
    let mut v = Vec::new();
    for k in 0..128u32 {
        let gap = (k % 32) as i32;
        let e0 = r.below(21) as i32 - 10;
        let mut a = r.float(e0, e0).abs();
        let mut b = r.float(e0 - gap, e0 - gap).abs();
        if (k / 32) & 1 == 1 {
            b = -b;
        }
        if (k / 64) & 1 == 1 {
            a = -a;
        }
        if k % 3 == 1 {
            std::mem::swap(&mut a, &mut b);
        }
        let (a, b) = match k {
            5 => (1.5, -1.5),
            9 => (3.0, f32::from_bits(0xc040_0001)),
            13 => (0.0, -0.0),
            17 => (-0.0, -0.0),
            21 => (f32::from_bits(0x0000_0123), 1.0e-38),
            25 => (f32::from_bits(0x8040_0000), f32::from_bits(0x0000_0001)),
            29 => (f32::INFINITY, 1.0),
            33 => (f32::NEG_INFINITY, f32::INFINITY),
            37 => (f32::NAN, 2.0),
            41 => (f32::MAX, f32::MAX),
            45 => (f32::MAX, -f32::MAX),
            49 => (1.0, f32::from_bits(0x3f80_0001)),
            53 => (16777215.0, 16777216.0),
            57 => (f32::from_bits(0x7f80_0001), 1.0),
            _ => (a, b),
        };
        v.push(a);
        v.push(b);
    }
    v
}

/// Queries between each pair: x = 2k + 0.5 + a/256 for 64 weights a per pair (all 255
/// non-zero weights are covered across pairs), as 1D coordinates.
pub(super) fn pair_queries() -> Vec<[f32; 4]> {
    let mut q = Vec::new();
    for k in 0..128u32 {
        for j in 0..64u32 {
            let a = (j * 4 + 1 + k % 4).min(255);
            q.push([2.0 * k as f32 + 0.5 + a as f32 / 256.0, 0.0, 0.0, 0.0]);
        }
    }
    q
}

/// Random 2D (or 3D) coordinates over an n-texel extent, on a 1/1024 grid, unnormalized.
pub(super) fn random_coords(r: &mut Rng, n: u32, w: u32, h: u32, d: u32) -> Vec<[f32; 4]> {
    (0..n)
        .map(|_| {
            let c = |r: &mut Rng, s: u32| r.below(s * 1024) as f32 / 1024.0;
            [c(r, w), c(r, h), if d > 0 { c(r, d) } else { 0.0 }, 0.0]
        })
        .collect()
}

/// A float array (1D, 2D or 3D) filled with `data`, sampled linearly with clamping,
/// unnormalized coordinates.
fn float_tex(cx: &mut Cx, fmt: u32, ch: u32, dims: (usize, usize, usize), bytes: &[u8], flags: u32) -> Result<u64, String> {
    let (w, h, d) = dims;
    let a = cx.array3d(w, h, d, fmt, ch, 0)?;
    cx.fill(a, bytes, w * elem_size(fmt, ch), h.max(1), d.max(1))?;
    cx.tex(&res_array(a), &tdesc([CLAMP; 3], LINEAR, flags))
}

fn f_pairs(cx: &mut Cx, half: bool) -> Result<(), String> {
    cx.primary()?;
    let mut r = Rng::new(if half { 21 } else { 20 });
    let t = if half {
        let mut v: Vec<u16> = Vec::new();
        for k in 0..128u32 {
            let gap = k % 16;
            let e0 = 1 + r.below(30);
            let a = ((r.next() & 1) << 15) as u16 | (e0 << 10) as u16 | (r.next() & 0x3ff) as u16;
            let e1 = e0.saturating_sub(gap);
            let b = ((r.next() & 1) << 15) as u16 | (e1 << 10) as u16 | (r.next() & 0x3ff) as u16;
            let (a, b) = match k {
                5 => (0x3e00, 0xbe00),
                13 => (0x0000, 0x8000),
                21 => (0x0001, 0x03ff),
                29 => (0x7c00, 0x3c00),
                37 => (0x7e00, 0x4000),
                41 => (0x7bff, 0x7bff),
                45 => (0x7bff, 0xfbff),
                57 => (0x7d00, 0x3c00),
                _ if k % 3 == 1 => (b, a),
                _ => (a, b),
            };
            v.push(a);
            v.push(b);
        }
        float_tex(cx, HALF, 1, (256, 0, 0), &u16_bytes(&v), 0)?
    } else {
        float_tex(cx, FLOAT, 1, (256, 0, 0), &f32_bytes(&float_pairs(&mut r)), 0)?
    };
    let q = pair_queries();
    let res = cx.probe(t, TP_1D, &q, None)?;
    cx.components(&res);
    Ok(())
}

/// Random texels over a 16x16 (or 8x8x8) texture, 4096 random coordinates: the four- and
/// eight-term sums.
fn f_quad(cx: &mut Cx, fmt: u32, three: bool) -> Result<(), String> {
    cx.primary()?;
    let mut r = Rng::new(30 + fmt as u64 + three as u64);
    let (w, h, d) = if three { (8, 8, 8) } else { (16, 16, 0) };
    let n = w * h * d.max(1);
    let bytes = match fmt {
        FLOAT => f32_bytes(&(0..n).map(|k| if k % 11 == 3 { 0.0 } else { r.float(-8, 8) }).collect::<Vec<_>>()),
        _ => {
            u16_bytes(&(0..n).map(|_| (((r.next() & 1) << 15) | ((1 + r.below(30)) << 10) | (r.next() & 0x3ff)) as u16).collect::<Vec<_>>())
        }
    };
    let t = float_tex(cx, fmt, 1, (w, h, d), &bytes, 0)?;
    let q = random_coords(&mut r, 4096, w as u32, h as u32, if three { d as u32 } else { 0 });
    let res = cx.probe(t, if three { TP_3D } else { TP_2D }, &q, None)?;
    cx.components(&res);
    Ok(())
}

/// 8-bit textures read as normalized floats, linear: sRGB (u8x4) or signed (s8x2). 256
/// texels: channel 0 of texel k is k (every value; at the texel centres the filter's
/// own widening of each value shows), the other channels random; then 4096 queries
/// between random neighbours with random weights, and a 2D texture with random texels.
fn f_byte(cx: &mut Cx, srgb: bool, two_d: bool) -> Result<(), String> {
    cx.primary()?;
    let mut r = Rng::new(40 + srgb as u64 * 2 + two_d as u64);
    let (fmt, ch) = if srgb { (U8, 4u32) } else { (S8, 2u32) };
    let flags = if srgb { SRGB } else { 0 };
    let (t, q, op) = if two_d {
        let bytes: Vec<u8> = (0..16 * 16 * ch).map(|_| r.next() as u8).collect();
        let t = float_tex(cx, fmt, ch, (16, 16, 0), &bytes, flags)?;
        (t, random_coords(&mut r, 4096, 16, 16, 0), TP_2D)
    } else {
        let mut bytes = Vec::new();
        for k in 0..256u32 {
            bytes.push((k ^ if srgb { 0 } else { 0x80 }) as u8);
            for _ in 1..ch {
                bytes.push(r.next() as u8);
            }
        }
        let t = float_tex(cx, fmt, ch, (256, 0, 0), &bytes, flags)?;
        let mut q: Vec<[f32; 4]> = (0..256).map(|k| [k as f32 + 0.5, 0.0, 0.0, 0.0]).collect();
        for _ in 0..4096 {
            let k = r.below(255);
            let a = 1 + r.below(255);
            q.push([k as f32 + 0.5 + a as f32 / 256.0, 0.0, 0.0, 0.0]);
        }
        (t, q, TP_1D)
    };
    let res = cx.probe(t, op, &q, None)?;
    cx.components(&res);
    Ok(())
}

/// A mipmapped float (or u8x4) texture; `level(l, k)` gives texel k of level l.
pub(super) fn mip_tex(
    cx: &mut Cx,
    size: (usize, usize, u32),
    fmt: u32,
    ch: u32,
    td: &TexDesc,
    level: &mut dyn FnMut(u32, usize) -> Vec<u8>,
) -> Result<u64, String> {
    let (w, h, levels) = size;
    let desc = Array3DDesc { width: w, height: h, depth: 0, format: fmt, num_channels: ch, flags: 0 };
    let mut m: P = null_mut();
    setup!(cx, cuMipmappedArrayCreate(&mut m, &desc, levels));
    for l in 0..levels {
        let mut lvl: P = null_mut();
        setup!(cx, cuMipmappedArrayGetLevel(&mut lvl, m, l));
        let (lw, lh) = ((w >> l).max(1), (h >> l).max(1));
        let data: Vec<u8> = (0..lw * lh).flat_map(|k| level(l, k)).collect();
        cx.fill(lvl, &data, lw * elem_size(fmt, ch), lh, 1)?;
    }
    let mut res = ResDesc { res_type: RES_MIPMAP, ..Default::default() };
    res.res[0] = m as u64;
    cx.tex(&res, td)
}

/// Level selection: every level holds the constant L (level 0 of 64x64 holds 0.0), so a
/// linear mip blend reads back `L + fraction` exactly and a point one the level picked.
/// `which`: 0 tex2DLod over lod -1..7 every 1/1024 and special values; 1 the same with a
/// point mip filter around every half; 2 tex2DGrad over gradient lengths, anisotropy
/// and directions; 3 gradients on a 64x16 texture; 4 bias 0.3 and clamp [0.7, 3.2];
/// 5 gradients with max anisotropy 16.
fn f_mip_const(cx: &mut Cx, which: u32) -> Result<(), String> {
    cx.primary()?;
    let mut r = Rng::new(50 + which as u64);
    let (w, h) = if which == 3 { (64, 16) } else { (64, 64) };
    let mut td = tdesc([CLAMP; 3], POINT, NORMALIZED);
    td.mipmap_filter_mode = if which == 1 { POINT } else { LINEAR };
    td.max_mipmap_level_clamp = 100.0;
    if which == 4 {
        td.mipmap_level_bias = 0.3;
        td.min_mipmap_level_clamp = 0.7;
        td.max_mipmap_level_clamp = 3.2;
    }
    if which == 5 {
        td.max_anisotropy = 16;
    }
    let t = mip_tex(cx, (w, h, 7), FLOAT, 1, &td, &mut |l, _| (l as f32).to_le_bytes().to_vec())?;
    let mut q = Vec::new();
    let mut g = Vec::new();
    let p = [0.5f32, 0.5, 0.0, 0.0];
    match which {
        0 | 4 => {
            for k in 0..8192 {
                q.push([0.5, 0.5, 0.0, k as f32 / 1024.0 - 1.0]);
            }
            for v in [
                f32::NAN,
                f32::INFINITY,
                f32::NEG_INFINITY,
                -0.0,
                1e-30,
                f32::from_bits(1),
                6.999_999_5,
                1.0 / 512.0,
                3.0 / 512.0,
                0.00390625,
                0.0039062498,
            ] {
                q.push([0.5, 0.5, 0.0, v]);
            }
        }
        1 => {
            for k in 0..2048 {
                q.push([0.5, 0.5, 0.0, k as f32 / 256.0 - 1.0]);
            }
            for k in -2..8 {
                let c = k as f32 + 0.5;
                for v in [next_down(c), c, next_up(c)] {
                    q.push([0.5, 0.5, 0.0, v]);
                }
            }
        }
        _ => {
            let wf = w as f32;
            // Isotropic: lengths 2^(k/128) texels, lod -2 .. 8.
            for k in -256..=1024 {
                let s = 2f32.powf(k as f32 / 128.0) / wf;
                q.push(p);
                g.push([s, 0.0, 0.0, s]);
            }
            // Axis-aligned anisotropy.
            for ratio in [0.75f32, 0.5, 0.3, 0.1, 0.0] {
                for _ in 0..256 {
                    let s = 2f32.powf(r.below(1024) as f32 / 128.0 - 2.0) / wf;
                    q.push(p);
                    if r.next() & 1 == 0 {
                        g.push([s, 0.0, 0.0, s * ratio]);
                    } else {
                        g.push([s * ratio, 0.0, 0.0, s]);
                    }
                }
            }
            // Independent random vectors.
            for _ in 0..2048 {
                let v = |r: &mut Rng| (r.below(2001) as f32 - 1000.0) / 1000.0 * 2f32.powf(r.below(8) as f32 - 2.0) / wf;
                q.push(p);
                g.push([v(&mut r), v(&mut r), v(&mut r), v(&mut r)]);
            }
            // One gradient zero, or only one component.
            for k in 0..256 {
                let s = 2f32.powf(k as f32 / 32.0 - 2.0) / wf;
                q.push(p);
                g.push(match k % 4 {
                    0 => [s, 0.0, 0.0, 0.0],
                    1 => [0.0, 0.0, 0.0, s],
                    2 => [0.0, s, 0.0, 0.0],
                    _ => [0.0, 0.0, s, 0.0],
                });
            }
        }
    }
    let res = if g.is_empty() { cx.probe(t, TP_2D_LOD, &q, None)? } else { cx.probe(t, TP_2D_GRAD, &q, Some(&g))? };
    cx.components(&res);
    Ok(())
}

/// Blending two levels of random texels: linear filter and linear mip filter, random
/// coordinates and lods, float (wide exponents), half or u8x4 normalized.
fn f_mip_blend(cx: &mut Cx, fmt: u32) -> Result<(), String> {
    f_mip_blend_zeroing(cx, fmt, None, LINEAR)
}

/// `f_mip_blend` with every level of parity `zero` holding 0.0 (float): a blend then
/// reads one level's bilinear result scaled by its weight, which tells which level's
/// sample differs where the blend of random texels does.
fn f_mip_blend_zeroing(cx: &mut Cx, fmt: u32, zero: Option<u32>, filter: u32) -> Result<(), String> {
    cx.primary()?;
    let mut r = Rng::new(60 + fmt as u64);
    let ch = if fmt == U8 { 4 } else { 1 };
    let mut td = tdesc([CLAMP; 3], filter, NORMALIZED);
    td.mipmap_filter_mode = LINEAR;
    td.max_mipmap_level_clamp = 100.0;
    let mut r2 = Rng::new(61 + fmt as u64);
    let t = mip_tex(cx, (16, 16, 5), fmt, ch, &td, &mut |l, _| {
        if zero == Some(l % 2) {
            r2.next();
            0f32.to_le_bytes().to_vec()
        } else if fmt == FLOAT {
            r2.float(-6, 6).to_le_bytes().to_vec()
        } else if fmt == HALF {
            ((((r2.next() & 1) << 15) | ((5 + r2.below(20)) << 10) | (r2.next() & 0x3ff)) as u16).to_le_bytes().to_vec()
        } else {
            (0..4).map(|_| r2.next() as u8).collect()
        }
    })?;
    let q: Vec<[f32; 4]> =
        (0..4096).map(|_| [r.below(1024) as f32 / 1024.0, r.below(1024) as f32 / 1024.0, 0.0, r.below(4 * 256) as f32 / 256.0]).collect();
    let res = cx.probe(t, TP_2D_LOD, &q, None)?;
    cx.components(&res);
    Ok(())
}

/// Checks of the trilinear and 3D model on what it was not fitted to (fit 10): 8-bit
/// u8x4 texels (integer arithmetic: only the weights and footprints decide), random
/// coordinates reaching a quarter texture past every edge, under address mode `mode`:
/// a 16x16 mipmap with a linear mip filter read with tex2DLod (`three` false), or an
/// 8x8x8 array read with tex3D.
fn f_footprints(cx: &mut Cx, mode: u32, three: bool) -> Result<(), String> {
    cx.primary()?;
    let mut r = Rng::new(90 + mode as u64 + 8 * three as u64);
    let mut td = tdesc([mode; 3], LINEAR, NORMALIZED);
    td.mipmap_filter_mode = LINEAR;
    td.max_mipmap_level_clamp = 100.0;
    td.border_color = [0.25, 0.5, 0.75, 1.0];
    let coord = |r: &mut Rng| (r.below(1536) as f32 - 256.0) / 1024.0;
    let (t, q, op) = if three {
        let bytes: Vec<u8> = (0..8 * 8 * 8 * 4).map(|_| r.next() as u8).collect();
        let a = cx.array3d(8, 8, 8, U8, 4, 0)?;
        cx.fill(a, &bytes, 8 * 4, 8, 8)?;
        let t = cx.tex(&res_array(a), &td)?;
        let q: Vec<[f32; 4]> = (0..4096).map(|_| [coord(&mut r), coord(&mut r), coord(&mut r), 0.0]).collect();
        (t, q, TP_3D)
    } else {
        let mut r2 = Rng::new(190 + mode as u64);
        let t = mip_tex(cx, (16, 16, 5), U8, 4, &td, &mut |_, _| (0..4).map(|_| r2.next() as u8).collect())?;
        let q: Vec<[f32; 4]> = (0..4096).map(|_| [coord(&mut r), coord(&mut r), 0.0, r.below(4 * 256) as f32 / 256.0]).collect();
        (t, q, TP_2D_LOD)
    };
    let res = cx.probe(t, op, &q, None)?;
    cx.components(&res);
    Ok(())
}

/// The blend between two mip levels alone: each level holds one value (so each level's
/// bilinear result is that value exactly), and tex2DLod reads lod k + j/256 for every
/// level pair k and every 8-bit fraction j, then fractions between the 1/256 steps: what
/// the device computes from (value k, value k+1, fraction) is read off directly.
fn f_mip_pairs(cx: &mut Cx, fmt: u32) -> Result<(), String> {
    cx.primary()?;
    let mut td = tdesc([CLAMP; 3], LINEAR, NORMALIZED);
    td.mipmap_filter_mode = LINEAR;
    td.max_mipmap_level_clamp = 100.0;
    let f32s = [0.1f32, 3.3, -7.77, 1234.567, 1.0e-3, 65504.0, -0.0];
    let halves: [u16; 7] = [0x2e66, 0x4299, 0xc7c5, 0x64d2, 0x1419, 0x7bff, 0x8000];
    let bytes: [u8; 7] = [10, 250, 3, 128, 77, 255, 0];
    let t = mip_tex(cx, (64, 64, 7), fmt, 1, &td, &mut |l, _| {
        let l = l as usize;
        match fmt {
            FLOAT => f32s[l].to_le_bytes().to_vec(),
            HALF => halves[l].to_le_bytes().to_vec(),
            _ => vec![bytes[l]],
        }
    })?;
    let mut q = Vec::new();
    for k in 0..6 {
        for j in 0..256 {
            q.push([0.5, 0.5, 0.0, k as f32 + j as f32 / 256.0]);
        }
    }
    for j in 0..256 {
        q.push([0.5, 0.5, 0.0, 1.0 + (j as f32 + 0.5) / 256.0]);
    }
    let res = cx.probe(t, TP_2D_LOD, &q, None)?;
    cx.components(&res);
    Ok(())
}

// ---------------------------------------------------------------- PTX-only features

impl Cx<'_> {
    /// Loads hand-written PTX text; records the code.
    pub(super) fn ptx_module(&mut self, text: &str) -> Result<P, String> {
        let mut img = text.as_bytes().to_vec();
        img.push(0);
        self.images.push(img);
        let ptr = self.images.last().unwrap().as_ptr() as *const c_void;
        let mut m: P = null_mut();
        let r = rec!(self, cuModuleLoadData(&mut m, ptr));
        if r != 0 {
            return Err(format!("ptx module load={r}"));
        }
        Ok(m)
    }

    /// Launches `name` of module `m` over n threads (128 per block) and synchronizes.
    fn run_n(&mut self, m: P, name: &str, n: u32, params: &mut [P]) -> Result<(), String> {
        let f = self.function(m, name)?;
        self.launch(f, [n.div_ceil(128).max(1), 1, 1], [128, 1, 1], 0, params);
        rec!(self, cuCtxSynchronize());
        Ok(())
    }

    /// Runs texref_probe / surfref_probe op over `q`; returns 4 words per query.
    fn ref_probe(&mut self, m: P, kernel: &str, op: u32, q: &[[u32; 4]]) -> Result<Vec<[u32; 4]>, String> {
        let n = q.len();
        let dq = self.upload(q)?;
        let out = self.sentinel(n * 4)?;
        let (mut op, mut dq, mut out_p, mut n32) = (op, dq, out, n as u32);
        let mut params = [pp(&mut op), pp(&mut dq), pp(&mut out_p), pp(&mut n32)];
        self.run_n(m, kernel, n as u32, &mut params)?;
        let v: Vec<u32> = self.download(out, n * 4)?;
        Ok(v.chunks(4).map(|c| [c[0], c[1], c[2], c[3]]).collect())
    }
}

fn fq(q: &[[f32; 4]]) -> Vec<[u32; 4]> {
    q.iter().map(|c| c.map(f32::to_bits)).collect()
}

/// Which texture/surface reference entry points the library exports (the H200's driver
/// 580 still exports the ones cuda.h 13 declares deprecated).
fn ptx_texref_exports(cx: &mut Cx) -> Result<(), String> {
    let names = [
        "cuModuleGetTexRef",
        "cuModuleGetSurfRef",
        "cuTexRefSetArray",
        "cuTexRefSetMipmappedArray",
        "cuTexRefSetAddress",
        "cuTexRefSetAddress_v2",
        "cuTexRefSetAddress2D",
        "cuTexRefSetAddress2D_v2",
        "cuTexRefSetAddress2D_v3",
        "cuTexRefSetFormat",
        "cuTexRefSetAddressMode",
        "cuTexRefSetFilterMode",
        "cuTexRefSetMipmapFilterMode",
        "cuTexRefSetMipmapLevelBias",
        "cuTexRefSetMipmapLevelClamp",
        "cuTexRefSetMaxAnisotropy",
        "cuTexRefSetBorderColor",
        "cuTexRefSetFlags",
        "cuTexRefGetAddress",
        "cuTexRefGetAddress_v2",
        "cuTexRefGetArray",
        "cuTexRefGetMipmappedArray",
        "cuTexRefGetAddressMode",
        "cuTexRefGetFilterMode",
        "cuTexRefGetFormat",
        "cuTexRefGetMipmapFilterMode",
        "cuTexRefGetMipmapLevelBias",
        "cuTexRefGetMipmapLevelClamp",
        "cuTexRefGetMaxAnisotropy",
        "cuTexRefGetBorderColor",
        "cuTexRefGetFlags",
        "cuTexRefCreate",
        "cuTexRefDestroy",
        "cuSurfRefSetArray",
        "cuSurfRefGetArray",
        "cuParamSetTexRef",
    ];
    let missing: Vec<&str> = names.iter().copied().filter(|n| cx.api.raw(n).is_none()).collect();
    cx.val("checked", names.len());
    cx.val("missing", if missing.is_empty() { "none".to_string() } else { missing.join("+") });
    // What cuGetProcAddress answers for them at CUDA 12.0 and 13.0.
    setup!(cx, cuInit(0));
    let mut found = Vec::new();
    for name in
        ["cuTexRefSetArray", "cuModuleGetTexRef", "cuTexRefSetAddress", "cuTexRefSetAddress2D", "cuTexRefCreate", "cuSurfRefSetArray"]
    {
        for ver in [11080, 12000, 13000] {
            let c = CString::new(name).unwrap();
            let mut f: P = null_mut();
            let mut status = -1i32;
            let r = call!(cx, cuGetProcAddress_v2(c.as_ptr(), &mut f, ver, 0, &mut status));
            found.push(format!("{name}@{ver}={r}/{status}/{}", if f.is_null() { "null" } else { "fn" }));
        }
    }
    cx.sub("proc", found.join(" "));
    Ok(())
}

/// cuModuleGetTexRef/GetSurfRef and every cuTexRef* setter and getter: defaults,
/// validation, what each Get returns after a Set.
fn ptx_texref_api(cx: &mut Cx) -> Result<(), String> {
    cx.primary()?;
    let m = cx.ptx_module(TEXREF_PTX)?;
    let name = |s: &str| CString::new(s).unwrap();
    let mut tr: P = null_mut();
    let (n_tr, n_nope, n_sr) = (name("tr2d"), name("nope"), name("sr2d"));
    rec!(cx, cuModuleGetTexRef(&mut tr, m, n_tr.as_ptr()));
    let mut x: P = null_mut();
    rec!(cx, cuModuleGetTexRef(&mut x, m, n_nope.as_ptr()));
    rec!(cx, cuModuleGetTexRef(&mut x, m, n_sr.as_ptr()));
    let mut sr: P = null_mut();
    rec!(cx, cuModuleGetSurfRef(&mut sr, m, n_sr.as_ptr()));
    rec!(cx, cuModuleGetSurfRef(&mut x, m, n_tr.as_ptr()));
    let mut tr2: P = null_mut();
    rec!(cx, cuModuleGetTexRef(&mut tr2, m, n_tr.as_ptr()));
    cx.val("same_handle", (tr == tr2) as u32);
    // Defaults.
    let get = |cx: &mut Cx, tag: &str| {
        let (mut f, mut ch) = (0xeeu32, -5i32);
        let r1 = call!(cx, cuTexRefGetFormat(&mut f, &mut ch, tr));
        let mut am = [0xeeu32; 3];
        let mut ra = Vec::new();
        for (d, a) in am.iter_mut().enumerate() {
            ra.push(call!(cx, cuTexRefGetAddressMode(a, tr, d as i32)));
        }
        let (mut fm, mut mfm, mut flags) = (0xeeu32, 0xeeu32, 0xeeu32);
        let r2 = call!(cx, cuTexRefGetFilterMode(&mut fm, tr));
        let r3 = call!(cx, cuTexRefGetMipmapFilterMode(&mut mfm, tr));
        let r4 = call!(cx, cuTexRefGetFlags(&mut flags, tr));
        let (mut bias, mut lo, mut hi) = (-7.0f32, -7.0f32, -7.0f32);
        let r5 = call!(cx, cuTexRefGetMipmapLevelBias(&mut bias, tr));
        let r6 = call!(cx, cuTexRefGetMipmapLevelClamp(&mut lo, &mut hi, tr));
        let mut aniso = -5i32;
        let r7 = call!(cx, cuTexRefGetMaxAnisotropy(&mut aniso, tr));
        let mut border = [-7.0f32; 4];
        let r8 = call!(cx, cuTexRefGetBorderColor(border.as_mut_ptr(), tr));
        let mut arr: P = 1 as P;
        let r9 = call!(cx, cuTexRefGetArray(&mut arr, tr));
        let mut ptr = 0xeeu64;
        let r10 = call!(cx, cuTexRefGetAddress_v2(&mut ptr, tr));
        let mut mip: P = 1 as P;
        let r11 = call!(cx, cuTexRefGetMipmappedArray(&mut mip, tr));
        cx.sub(
            tag,
            format!(
                "fmt={r1}:{f:x},{ch} am={:?}:{am:?} filter={r2}:{fm} mipfilter={r3}:{mfm} flags={r4}:{flags:x} bias={r5}:{bias} clamp={r6}:{lo},{hi} aniso={r7}:{aniso} border={r8}:{border:?} array={r9}:{} addr={r10}:{} mip={r11}:{}",
                ra,
                if arr.is_null() { "null" } else if arr as usize == 1 { "unset" } else { "set" },
                if ptr == 0 { "0".to_string() } else if ptr == 0xee { "unset".into() } else { "set".into() },
                if mip.is_null() { "null" } else if mip as usize == 1 { "unset" } else { "set" },
            ),
        );
    };
    get(cx, "defaults");
    // Validation of each setter.
    let mut codes = Vec::new();
    for (d, mode) in [(0, WRAP), (1, MIRROR), (2, BORDER), (3, CLAMP), (-1, CLAMP), (0, 4), (1, 99)] {
        codes.push(format!("am{d},{mode}={}", call!(cx, cuTexRefSetAddressMode(tr, d, mode))));
    }
    for f in [LINEAR, 2, POINT] {
        codes.push(format!("filter{f}={}", call!(cx, cuTexRefSetFilterMode(tr, f))));
    }
    for f in [LINEAR, 3] {
        codes.push(format!("mipfilter{f}={}", call!(cx, cuTexRefSetMipmapFilterMode(tr, f))));
    }
    for (f, ch) in [(FLOAT, 1), (7, 1), (U8, 3), (U8, 0), (U8, 5), (HALF, 2), (U8, 4)] {
        codes.push(format!("fmt{f:x},{ch}={}", call!(cx, cuTexRefSetFormat(tr, f, ch))));
    }
    for fl in [NORMALIZED | READ_AS_INTEGER, 0x100, SRGB, 0x20, 0x40, 0xffff_ffff, NORMALIZED] {
        codes.push(format!("flags{fl:x}={}", call!(cx, cuTexRefSetFlags(tr, fl))));
    }
    codes.push(format!("bias={}", call!(cx, cuTexRefSetMipmapLevelBias(tr, 0.75))));
    codes.push(format!("clamp={}", call!(cx, cuTexRefSetMipmapLevelClamp(tr, 0.5, 3.25))));
    codes.push(format!("clamp_inv={}", call!(cx, cuTexRefSetMipmapLevelClamp(tr, 4.0, 1.0))));
    for a in [4u32, 0, 17, 1000] {
        codes.push(format!("aniso{a}={}", call!(cx, cuTexRefSetMaxAnisotropy(tr, a))));
    }
    let mut border = [0.25f32, -1.0, 2.0, 0.5];
    codes.push(format!("border={}", call!(cx, cuTexRefSetBorderColor(tr, border.as_mut_ptr()))));
    codes.push(format!("border_null={}", call!(cx, cuTexRefSetBorderColor(tr, null_mut()))));
    cx.sub("set", codes.join(" "));
    get(cx, "after_set");
    // Binding: an array, linear memory (byte offsets), pitch 2D.
    let mut b = Vec::new();
    let a = cx.array3d(4, 3, 0, U16, 2, 0)?;
    b.push(format!("array={}", call!(cx, cuTexRefSetArray(tr, a, 0))));
    let mut got: P = null_mut();
    let r = call!(cx, cuTexRefGetArray(&mut got, tr));
    b.push(format!("getarray={r}:{}", (got == a) as u32));
    cx.sub("bind_b", b.join(" "));
    get(cx, "after_array");
    let mut b = Vec::new();
    b.push(format!("array_override={}", call!(cx, cuTexRefSetArray(tr, a, 1))));
    b.push(format!("array_flags2={}", call!(cx, cuTexRefSetArray(tr, a, 2))));
    b.push(format!("array_null={}", call!(cx, cuTexRefSetArray(tr, null_mut(), 0))));
    let d = cx.alloc(4096)?;
    for off in [0u64, 4, 256, 16, 1000] {
        let mut bo = 0xeeeeusize;
        let r = call!(cx, cuTexRefSetAddress_v2(&mut bo, tr, d + off, 1024));
        b.push(format!("addr+{off}={r}:{bo}"));
    }
    let mut bo = 0xeeeeusize;
    b.push(format!("addr_null_out={}", call!(cx, cuTexRefSetAddress_v2(null_mut(), tr, d, 1024))));
    b.push(format!("addr_size0={}", call!(cx, cuTexRefSetAddress_v2(&mut bo, tr, d, 0))));
    b.push(format!("addr_huge={}", call!(cx, cuTexRefSetAddress_v2(&mut bo, tr, d, 1 << 40))));
    b.push(format!("addr_0={}", call!(cx, cuTexRefSetAddress_v2(&mut bo, tr, 0, 1024))));
    let mut ptr = 0u64;
    let r = call!(cx, cuTexRefGetAddress_v2(&mut ptr, tr));
    b.push(format!("getaddr={r}:{}", if ptr == 0 { "0".into() } else { format!("d+{}", ptr.wrapping_sub(d) as i64) }));
    let mut arr: P = 1 as P;
    let r = call!(cx, cuTexRefGetArray(&mut arr, tr));
    b.push(format!(
        "getarray_after_addr={r}:{}",
        if arr.is_null() {
            "null"
        } else if arr == a {
            "a"
        } else {
            "other"
        }
    ));
    for (w, h, pitch, off) in [(8usize, 4usize, 64usize, 0u64), (8, 4, 40, 0), (8, 4, 64, 32), (8, 4, 64, 4), (20, 4, 64, 0), (8, 0, 64, 0)]
    {
        let desc = ArrayDesc { width: w, height: h, format: FLOAT, num_channels: 1 };
        b.push(format!("2d{w}x{h}p{pitch}+{off}={}", call!(cx, cuTexRefSetAddress2D_v3(tr, &desc, d + off, pitch))));
    }
    let mut c1: P = null_mut();
    b.push(format!("create={}", call!(cx, cuTexRefCreate(&mut c1))));
    if !c1.is_null() {
        b.push(format!("destroy={}", call!(cx, cuTexRefDestroy(c1))));
    }
    cx.sub("bind", b.join(" "));
    get(cx, "after_bind");
    // Surface references.
    let mut s = Vec::new();
    let plain = cx.array3d(4, 3, 0, FLOAT, 1, 0)?;
    let ldst = cx.array3d(4, 3, 0, FLOAT, 1, LDST)?;
    s.push(format!("set_plain={}", call!(cx, cuSurfRefSetArray(sr, plain, 0))));
    s.push(format!("set_ldst={}", call!(cx, cuSurfRefSetArray(sr, ldst, 0))));
    s.push(format!("set_flags1={}", call!(cx, cuSurfRefSetArray(sr, ldst, 1))));
    let mut got: P = null_mut();
    let r = call!(cx, cuSurfRefGetArray(&mut got, sr));
    s.push(format!(
        "get={r}:{}",
        if got == ldst {
            "ldst"
        } else if got == plain {
            "plain"
        } else if got.is_null() {
            "null"
        } else {
            "other"
        }
    ));
    cx.sub("surf", s.join(" "));
    Ok(())
}

/// Fetches through texture references bound to an array (linear and point, normalized
/// and not, element-type reads), to linear memory (tex1Dfetch) and to pitched memory;
/// txq on the reference; a launch whose texref was never bound.
fn ptx_texref_sample(cx: &mut Cx) -> Result<(), String> {
    cx.primary()?;
    let m = cx.ptx_module(TEXREF_PTX)?;
    let n_tr = CString::new("tr2d").unwrap();
    let n_t1 = CString::new("tr1d").unwrap();
    let mut tr: P = null_mut();
    let mut t1: P = null_mut();
    setup!(cx, cuModuleGetTexRef(&mut tr, m, n_tr.as_ptr()));
    setup!(cx, cuModuleGetTexRef(&mut t1, m, n_t1.as_ptr()));
    let q0 = fq(&[[0.5, 0.5, 0.0, 0.0], [1.5, 0.5, 0.0, 0.0]]);
    let (w, h) = (4usize, 3usize);
    let a = cx.array3d(w, h, 0, FLOAT, 1, 0)?;
    let data = texels(FLOAT, w * h, 2);
    cx.fill(a, &data, w * 4, h, 1)?;
    rec!(cx, cuTexRefSetArray(tr, a, 1));
    let grid = grid_2d(-1.0, w as f32 + 1.0, -1.0, h as f32 + 1.0, 0.25);
    for (tag, filter, flags, am) in [
        ("linear", LINEAR, 0u32, CLAMP),
        ("point_norm_wrap", POINT, NORMALIZED, WRAP),
        ("linear_norm_mirror", LINEAR, NORMALIZED, MIRROR),
        ("linear_border", LINEAR, 0, BORDER),
    ] {
        rec!(cx, cuTexRefSetFilterMode(tr, filter));
        rec!(cx, cuTexRefSetFlags(tr, flags));
        rec!(cx, cuTexRefSetAddressMode(tr, 0, am));
        rec!(cx, cuTexRefSetAddressMode(tr, 1, am));
        let mut border = [-0.75f32, 0.0, 0.0, 0.0];
        rec!(cx, cuTexRefSetBorderColor(tr, border.as_mut_ptr()));
        let mut q = grid.clone();
        if flags & NORMALIZED != 0 {
            scale(&mut q, w as f32, h as f32, 1.0);
        }
        let r = cx.ref_probe(m, "texref_probe", 0, &fq(&q))?;
        cx.sub(tag, lanes(&r.iter().map(|x| x[0]).collect::<Vec<_>>()));
        let r = cx.ref_probe(m, "texref_probe", 3, &q0[..1])?;
        let r2 = cx.ref_probe(m, "texref_probe", 4, &q0[..1])?;
        cx.sub(&format!("{tag}_txq"), format!("{:x?} {:x?}", r[0], r2[0]));
    }
    // u8x4 array: normalized float, then element type.
    let a8 = cx.array3d(w, h, 0, U8, 4, 0)?;
    let d8 = texels(U8, w * h * 4, 9);
    cx.fill(a8, &d8, w * 4, h, 1)?;
    rec!(cx, cuTexRefSetArray(tr, a8, 1));
    rec!(cx, cuTexRefSetFilterMode(tr, LINEAR));
    rec!(cx, cuTexRefSetFlags(tr, 0));
    rec!(cx, cuTexRefSetAddressMode(tr, 0, CLAMP));
    rec!(cx, cuTexRefSetAddressMode(tr, 1, CLAMP));
    let q = fq(&grid_2d(-0.5, w as f32 + 0.5, -0.5, h as f32 + 0.5, 0.5));
    let r = cx.ref_probe(m, "texref_probe", 0, &q)?;
    cx.sub("u8x4_norm", lanes(&r.iter().flatten().copied().collect::<Vec<_>>()));
    rec!(cx, cuTexRefSetFilterMode(tr, POINT));
    rec!(cx, cuTexRefSetFlags(tr, READ_AS_INTEGER));
    let r = cx.ref_probe(m, "texref_probe", 2, &q)?;
    cx.sub("u8x4_elem", lanes(&r.iter().flatten().copied().collect::<Vec<_>>()));
    let r = cx.ref_probe(m, "texref_probe", 4, &q0[..1])?;
    cx.sub("u8x4_txq", format!("{:x?}", r[0]));
    // Linear memory through tr1d: format float x2, byte offset 0 and 8 elements in.
    let n = 64usize;
    let vals: Vec<f32> = (0..n * 2).map(|k| k as f32 * 0.5 - 3.0).collect();
    let d = cx.upload(&vals)?;
    rec!(cx, cuTexRefSetFormat(t1, FLOAT, 2));
    let mut bo = 0usize;
    rec!(cx, cuTexRefSetAddress_v2(&mut bo, t1, d + 64, 256));
    cx.val("byte_offset", bo);
    let q: Vec<[u32; 4]> = (-3..40).map(|k| [(k as f32).to_bits(), 0, 0, 0]).collect();
    let r = cx.ref_probe(m, "texref_probe", 1, &q)?;
    cx.sub("fetch", lanes(&r.iter().flatten().copied().collect::<Vec<_>>()));
    rec!(cx, cuTexRefSetFlags(t1, READ_AS_INTEGER));
    rec!(cx, cuTexRefSetFormat(t1, U16, 2));
    let r = cx.ref_probe(m, "texref_probe", 1, &q)?;
    cx.sub("fetch_u16_elem", lanes(&r.iter().flatten().copied().collect::<Vec<_>>()));
    // Pitched memory through tr2d.
    let pd = cx.upload(&texels(FLOAT, 64 * 4, 11).chunks(4).map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect::<Vec<f32>>())?;
    let desc = ArrayDesc { width: 5, height: 4, format: FLOAT, num_channels: 1 };
    rec!(cx, cuTexRefSetAddress2D_v3(tr, &desc, pd, 64));
    rec!(cx, cuTexRefSetFilterMode(tr, LINEAR));
    rec!(cx, cuTexRefSetFlags(tr, 0));
    let q = fq(&grid_2d(-1.0, 6.0, -1.0, 5.0, 0.5));
    let r = cx.ref_probe(m, "texref_probe", 0, &q)?;
    cx.sub("pitch2d", lanes(&r.iter().map(|x| x[0]).collect::<Vec<_>>()));
    let r = cx.ref_probe(m, "texref_probe", 3, &q0[..1])?;
    cx.sub("pitch2d_txq", format!("{:x?}", r[0]));
    Ok(())
}

/// A launch that fetches through a texture reference never bound: the launch's and the
/// synchronization's codes and what the fetch returned.
fn ptx_texref_unbound(cx: &mut Cx) -> Result<(), String> {
    cx.primary()?;
    let m = cx.ptx_module(TEXREF_PTX)?;
    let q0 = fq(&[[0.5, 0.5, 0.0, 0.0], [1.5, 0.5, 0.0, 0.0]]);
    let r = cx.ref_probe(m, "texref_probe", 0, &q0)?;
    cx.sub("fetch", lanes(&r.iter().flatten().copied().collect::<Vec<_>>()));
    let r = cx.ref_probe(m, "texref_probe", 3, &q0[..1])?;
    cx.sub("txq", format!("{:x?}", r[0]));
    Ok(())
}

/// suld/sust/suq through a surface reference bound with cuSurfRefSetArray.
fn ptx_surfref(cx: &mut Cx) -> Result<(), String> {
    cx.primary()?;
    let m = cx.ptx_module(TEXREF_PTX)?;
    let n_sr = CString::new("sr2d").unwrap();
    let mut sr: P = null_mut();
    setup!(cx, cuModuleGetSurfRef(&mut sr, m, n_sr.as_ptr()));
    let a = cx.array3d(4, 3, 0, U32, 1, LDST)?;
    let data = texels(U32, 12, 12);
    cx.fill(a, &data, 16, 3, 1)?;
    rec!(cx, cuSurfRefSetArray(sr, a, 0));
    let q: Vec<[u32; 4]> = (-1..=4).flat_map(|y: i32| (-2..=5).map(move |x: i32| [(x * 4) as u32, y as u32, 0, 0])).collect();
    let r = cx.ref_probe(m, "surfref_probe", 0, &q)?;
    cx.sub("read", lanes(&r.iter().map(|x| x[0]).collect::<Vec<_>>()));
    let r = cx.ref_probe(m, "surfref_probe", 2, &q[..1])?;
    cx.sub("suq", format!("{:x?}", r[0]));
    let _ = cx.ref_probe(m, "surfref_probe", 1, &q)?;
    let mut back = vec![0u32; 12];
    setup!(cx, cuMemcpyAtoH_v2(back.as_mut_ptr() as *mut c_void, a, 0, 48));
    cx.sub("after_write", lanes(&back));
    Ok(())
}

/// sust.p on a 1D surface of `fmt` x `ch`: 32 samples, each given 4 words mixing float
/// and integer bit patterns; the array's bytes afterwards.
fn ptx_sust_p(cx: &mut Cx, fmt: u32, ch: u32) -> Result<(), String> {
    cx.primary()?;
    let m = cx.ptx_module(SUSTP_PTX)?;
    let n = 32usize;
    let a = cx.array3d(n, 0, 0, fmt, ch, LDST)?;
    let fill: Vec<u8> = vec![0xa5; n * elem_size(fmt, ch)];
    cx.fill(a, &fill, n * elem_size(fmt, ch), 1, 1)?;
    let s = surf_obj(cx, a)?;
    let fv = [0.0f32, 0.5, 1.0, -0.5, 1.5, 0.2, f32::NAN, 1e-3, 254.6, -1.0, 0.999, 1.0 / 255.0, 0.5 / 255.0, 65504.0, 70000.0, -3.25];
    let iv =
        [0u32, 1, 127, 128, 255, 256, 0xffff_ffff, 0x8000_0000, 0x7fff_ffff, 32767, 32768, 65535, 65536, 0xffff_ff80, 0x1234_5678, 200];
    let v: Vec<[u32; 4]> = (0..n)
        .map(|i| {
            if i < 16 {
                [fv[i].to_bits(), fv[(i + 5) % 16].to_bits(), fv[(i + 9) % 16].to_bits(), fv[(i + 13) % 16].to_bits()]
            } else {
                [iv[i - 16], iv[(i + 3) % 16], iv[(i + 7) % 16], iv[(i + 11) % 16]]
            }
        })
        .collect();
    let dv = cx.upload(&v)?;
    let (mut sp, mut dvp, mut n32) = (s, dv, n as u32);
    let mut params = [pp(&mut sp), pp(&mut dvp), pp(&mut n32)];
    cx.run_n(m, "sustp_probe", n as u32, &mut params)?;
    let bytes = n * elem_size(fmt, ch);
    let mut back = vec![0u8; bytes];
    setup!(cx, cuMemcpyAtoH_v2(back.as_mut_ptr() as *mut c_void, a, 0, bytes));
    let words: Vec<u32> = back
        .chunks(4)
        .map(|c| u32::from_le_bytes([c[0], c.get(1).copied().unwrap_or(0), c.get(2).copied().unwrap_or(0), c.get(3).copied().unwrap_or(0)]))
        .collect();
    cx.sub("bytes", lanes(&words));
    Ok(())
}

/// txq (every attribute, txq.level at lods -1..5 and 12) and suq (every attribute) on
/// one kind of resource; the surface is over an LDST array of the same shape where the
/// kind allows one, else a 7x5 u8x4 array.
fn ptx_txq(cx: &mut Cx, kind: u32) -> Result<(), String> {
    cx.primary()?;
    let m = cx.ptx_module(TEXQ_PTX)?;
    let mut td = tdesc([WRAP, CLAMP, MIRROR], LINEAR, NORMALIZED);
    let (t, surf_arr) = match kind {
        0 => {
            let a = cx.array3d(5, 3, 0, FLOAT, 1, LDST)?;
            (cx.tex(&res_array(a), &td)?, a)
        }
        1 => {
            td.mipmap_filter_mode = LINEAR;
            td.max_mipmap_level_clamp = 10.0;
            let t = mip_tex(cx, (16, 8, 5), HALF, 4, &td, &mut |_, _| vec![0u8; 8])?;
            (t, cx.array3d(7, 5, 0, U8, 4, LDST)?)
        }
        2 => {
            let a = cx.array3d(4, 3, 2, U16, 2, LDST)?;
            (cx.tex(&res_array(a), &tdesc([BORDER; 3], POINT, 0))?, a)
        }
        3 => {
            let a = cx.array3d(4, 3, 5, S8, 1, LAYERED | LDST)?;
            (cx.tex(&res_array(a), &td)?, a)
        }
        4 => {
            let d = cx.alloc(1024)?;
            let mut res = ResDesc { res_type: RES_LINEAR, ..Default::default() };
            res.res[0] = d;
            res.res[1] = (FLOAT as u64) | (2u64 << 32);
            res.res[2] = 1000;
            (cx.tex(&res, &tdesc([CLAMP; 3], POINT, 0))?, cx.array3d(7, 5, 0, U8, 4, LDST)?)
        }
        5 => {
            let (d, pitch) = (cx.alloc(4096)?, 64u64);
            let mut res = ResDesc { res_type: RES_PITCH2D, ..Default::default() };
            res.res[0] = d;
            res.res[1] = (U8 as u64) | (4u64 << 32);
            res.res[2] = 9;
            res.res[3] = 7;
            res.res[4] = pitch;
            (cx.tex(&res, &tdesc([CLAMP; 3], LINEAR, SRGB))?, cx.array3d(7, 5, 0, U8, 4, LDST)?)
        }
        _ => {
            let a = cx.array3d(4, 4, 6, S32, 4, CUBEMAP | LDST)?;
            (cx.tex(&res_array(a), &tdesc([CLAMP; 3], POINT, READ_AS_INTEGER))?, a)
        }
    };
    let s = surf_obj(cx, surf_arr)?;
    let out = cx.sentinel(40)?;
    let (mut tp, mut sp, mut op) = (t, s, out);
    let mut params = [pp(&mut tp), pp(&mut sp), pp(&mut op)];
    let f = cx.function(m, "txq_probe")?;
    cx.launch(f, [1, 1, 1], [1, 1, 1], 0, &mut params);
    rec!(cx, cuCtxSynchronize());
    let v: Vec<u32> = cx.download(out, 37)?;
    cx.sub("q", v.iter().map(|x| format!("{x:x}")).collect::<Vec<_>>().join(","));
    Ok(())
}

/// Coordinate offsets (tex, tld4, tex.level), the residency predicate and tex.base on a
/// 4x3 float texture (linear, unnormalized, clamp) and on a 3-level mipmap.
fn ptx_texx(cx: &mut Cx, mip: bool) -> Result<(), String> {
    cx.primary()?;
    let m = cx.ptx_module(TEXX_PTX)?;
    let mut r = Rng::new(70 + mip as u64);
    let t = if mip {
        let mut td = tdesc([CLAMP; 3], LINEAR, NORMALIZED);
        td.mipmap_filter_mode = LINEAR;
        td.max_mipmap_level_clamp = 10.0;
        let mut r2 = Rng::new(71);
        mip_tex(cx, (8, 8, 3), FLOAT, 1, &td, &mut |l, _| ((l * 10) as f32 + r2.below(8) as f32 * 0.25).to_le_bytes().to_vec())?
    } else {
        let a = cx.array3d(4, 3, 0, FLOAT, 1, GATHER)?;
        cx.fill(a, &texels(FLOAT, 12, 2), 16, 3, 1)?;
        cx.tex(&res_array(a), &tdesc([CLAMP; 3], LINEAR, 0))?
    };
    let q: Vec<[u32; 4]> = (0..512)
        .map(|_| {
            let (x, y) = if mip {
                (r.below(1024) as f32 / 1024.0, r.below(1024) as f32 / 1024.0)
            } else {
                (r.below(6 * 64) as f32 / 64.0 - 1.0, r.below(5 * 64) as f32 / 64.0 - 1.0)
            };
            let lod = r.below(3 * 64) as f32 / 64.0;
            let off = (r.below(16) as i32 - 8) as u8 as u32 | (((r.below(16) as i32 - 8) as u8 as u32) << 8);
            [x.to_bits(), y.to_bits(), lod.to_bits(), off]
        })
        .collect();
    let ops: &[u32] = if mip { &[3, 4] } else { &[0, 1, 2] };
    for &op in ops {
        let n = q.len();
        let dq = cx.upload(&q)?;
        let out = cx.sentinel(n * 4)?;
        let (mut tp, mut opv, mut dqp, mut outp, mut n32) = (t, op, dq, out, n as u32);
        let mut params = [pp(&mut tp), pp(&mut opv), pp(&mut dqp), pp(&mut outp), pp(&mut n32)];
        cx.run_n(m, "texx_probe", n as u32, &mut params)?;
        let v: Vec<u32> = cx.download(out, n * 4)?;
        for k in 0..4 {
            let col: Vec<u32> = v.chunks(4).map(|c| c[k]).collect();
            cx.sub(&format!("op{op}.c{k}"), lanes(&col));
        }
    }
    Ok(())
}

/// One PTX feature per module: whether the driver loads it (the H200's driver 580
/// refuses some with CUDA_ERROR_NOT_SUPPORTED at load time).
const FEATURES: [(&str, &str); 14] = [
    ("texref_decl", ".global .texref t;\n.visible .entry k(.param .u64 o)\n{\n\tret;\n}\n"),
    ("surfref_decl", ".global .surfref s;\n.visible .entry k(.param .u64 o)\n{\n\tret;\n}\n"),
    ("samplerref_decl", ".global .samplerref s;\n.visible .entry k(.param .u64 o)\n{\n\tret;\n}\n"),
    ("txq_width", ".visible .entry k(.param .u64 t, .param .u64 o)\n{\n\t.reg .b32 %r<2>;\n\t.reg .b64 %rd<3>;\n\tld.param.u64 %rd1, [t];\n\tld.param.u64 %rd2, [o];\n\ttxq.width.b32 %r1, [%rd1];\n\tst.global.u32 [%rd2], %r1;\n\tret;\n}\n"),
    ("txq_num_samples", ".visible .entry k(.param .u64 t, .param .u64 o)\n{\n\t.reg .b32 %r<2>;\n\t.reg .b64 %rd<3>;\n\tld.param.u64 %rd1, [t];\n\tld.param.u64 %rd2, [o];\n\ttxq.num_samples.b32 %r1, [%rd1];\n\tst.global.u32 [%rd2], %r1;\n\tret;\n}\n"),
    ("txq_level", ".visible .entry k(.param .u64 t, .param .u64 o)\n{\n\t.reg .b32 %r<2>;\n\t.reg .b64 %rd<3>;\n\tld.param.u64 %rd1, [t];\n\tld.param.u64 %rd2, [o];\n\ttxq.level.width.b32 %r1, [%rd1], 1;\n\tst.global.u32 [%rd2], %r1;\n\tret;\n}\n"),
    ("suq_width", ".visible .entry k(.param .u64 t, .param .u64 o)\n{\n\t.reg .b32 %r<2>;\n\t.reg .b64 %rd<3>;\n\tld.param.u64 %rd1, [t];\n\tld.param.u64 %rd2, [o];\n\tsuq.width.b32 %r1, [%rd1];\n\tst.global.u32 [%rd2], %r1;\n\tret;\n}\n"),
    ("suq_memory_layout", ".visible .entry k(.param .u64 t, .param .u64 o)\n{\n\t.reg .b32 %r<2>;\n\t.reg .b64 %rd<3>;\n\tld.param.u64 %rd1, [t];\n\tld.param.u64 %rd2, [o];\n\tsuq.memory_layout.b32 %r1, [%rd1];\n\tst.global.u32 [%rd2], %r1;\n\tret;\n}\n"),
    ("suq_array_size", ".visible .entry k(.param .u64 t, .param .u64 o)\n{\n\t.reg .b32 %r<2>;\n\t.reg .b64 %rd<3>;\n\tld.param.u64 %rd1, [t];\n\tld.param.u64 %rd2, [o];\n\tsuq.array_size.b32 %r1, [%rd1];\n\tst.global.u32 [%rd2], %r1;\n\tret;\n}\n"),
    ("tex_offset", ".visible .entry k(.param .u64 t, .param .u64 o)\n{\n\t.reg .b32 %r<3>;\n\t.reg .f32 %f<6>;\n\t.reg .b64 %rd<3>;\n\tld.param.u64 %rd1, [t];\n\tld.param.u64 %rd2, [o];\n\tmov.f32 %f1, 0f3F000000;\n\tmov.s32 %r1, 1;\n\ttex.2d.v4.f32.f32 {%f2, %f3, %f4, %f5}, [%rd1, {%f1, %f1}], {%r1, %r1};\n\tst.global.f32 [%rd2], %f2;\n\tret;\n}\n"),
    ("tex_pred", ".visible .entry k(.param .u64 t, .param .u64 o)\n{\n\t.reg .pred %p<2>;\n\t.reg .f32 %f<6>;\n\t.reg .b64 %rd<3>;\n\tld.param.u64 %rd1, [t];\n\tld.param.u64 %rd2, [o];\n\tmov.f32 %f1, 0f3F000000;\n\ttex.2d.v4.f32.f32 {%f2, %f3, %f4, %f5}|%p1, [%rd1, {%f1, %f1}];\n\tselp.f32 %f2, %f2, 0f00000000, %p1;\n\tst.global.f32 [%rd2], %f2;\n\tret;\n}\n"),
    ("tex_base", ".visible .entry k(.param .u64 t, .param .u64 o)\n{\n\t.reg .f32 %f<6>;\n\t.reg .b64 %rd<3>;\n\tld.param.u64 %rd1, [t];\n\tld.param.u64 %rd2, [o];\n\tmov.f32 %f1, 0f3F000000;\n\ttex.base.2d.v4.f32.f32 {%f2, %f3, %f4, %f5}, [%rd1, {%f1, %f1}];\n\tst.global.f32 [%rd2], %f2;\n\tret;\n}\n"),
    ("tld4_offset", ".visible .entry k(.param .u64 t, .param .u64 o)\n{\n\t.reg .b32 %r<3>;\n\t.reg .f32 %f<6>;\n\t.reg .b64 %rd<3>;\n\tld.param.u64 %rd1, [t];\n\tld.param.u64 %rd2, [o];\n\tmov.f32 %f1, 0f3F000000;\n\tmov.s32 %r1, 1;\n\ttld4.r.2d.v4.f32.f32 {%f2, %f3, %f4, %f5}, [%rd1, {%f1, %f1}], {%r1, %r1};\n\tst.global.f32 [%rd2], %f2;\n\tret;\n}\n"),
    ("tex_f16", ".visible .entry k(.param .u64 t, .param .u64 o)\n{\n\t.reg .f32 %f<2>;\n\t.reg .b16 %h<5>;\n\t.reg .b64 %rd<3>;\n\tld.param.u64 %rd1, [t];\n\tld.param.u64 %rd2, [o];\n\tmov.f32 %f1, 0f3F000000;\n\ttex.2d.v4.f16.f32 {%h1, %h2, %h3, %h4}, [%rd1, {%f1, %f1}];\n\tst.global.b16 [%rd2], %h1;\n\tret;\n}\n"),
];

/// The attributes `txq`/`suq` query, each loaded alone (`ptx_feature_txq_ATTR`,
/// `ptx_feature_suq_ATTR`) beside the forms FEATURES lists.
const TXQ_ATTRS: [&str; 10] = [
    "height",
    "depth",
    "channel_data_type",
    "channel_order",
    "normalized_coords",
    "filter_mode",
    "addr_mode_0",
    "addr_mode_2",
    "array_size",
    "num_mipmap_levels",
];
const SUQ_ATTRS: [&str; 4] = ["height", "depth", "channel_data_type", "channel_order"];

/// A kernel body of one query `op` (`txq.width`, `suq.depth`, ...) on the object in param t.
fn query_feature(op: &str) -> String {
    format!(
        ".visible .entry k(.param .u64 t, .param .u64 o)\n{{\n\t.reg .b32 %r<2>;\n\t.reg .b64 %rd<3>;\n\t\
         ld.param.u64 %rd1, [t];\n\tld.param.u64 %rd2, [o];\n\t{op}.b32 %r1, [%rd1];\n\tst.global.u32 [%rd2], %r1;\n\tret;\n}}\n"
    )
}

/// More forms: tex.level with offsets, .samplerref in independent texturing mode.
const MORE_FEATURES: [(&str, &str, &str); 5] = [
    (
        "tex_level_offset",
        "",
        ".visible .entry k(.param .u64 t, .param .u64 o)\n{\n\t.reg .b32 %r<3>;\n\t.reg .f32 %f<6>;\n\t.reg .b64 %rd<3>;\n\t\
         ld.param.u64 %rd1, [t];\n\tld.param.u64 %rd2, [o];\n\tmov.f32 %f1, 0f3F000000;\n\tmov.s32 %r1, 1;\n\t\
         tex.level.2d.v4.f32.f32 {%f2, %f3, %f4, %f5}, [%rd1, {%f1, %f1}], %f1, {%r1, %r1};\n\tst.global.f32 [%rd2], %f2;\n\tret;\n}\n",
    ),
    ("samplerref_independent", ", texmode_independent", ".global .samplerref s;\n.visible .entry k(.param .u64 o)\n{\n\tret;\n}\n"),
    ("independent_plain", ", texmode_independent", ".visible .entry k(.param .u64 o)\n{\n\tret;\n}\n"),
    ("independent_texref", ", texmode_independent", ".global .texref t;\n.visible .entry k(.param .u64 o)\n{\n\tret;\n}\n"),
    (
        "samplerref_initialized",
        ", texmode_independent",
        ".global .samplerref s = { addr_mode_0 = clamp_to_edge, filter_mode = nearest };\n.visible .entry k(.param .u64 o)\n{\n\tret;\n}\n",
    ),
];

/// Every feature module by name: (name, extra .target options, body).
fn features() -> Vec<(String, String, String)> {
    let mut v: Vec<(String, String, String)> = FEATURES.iter().map(|(n, b)| (n.to_string(), String::new(), b.to_string())).collect();
    v.extend(TXQ_ATTRS.iter().map(|a| (format!("txq_{a}"), String::new(), query_feature(&format!("txq.{a}")))));
    v.extend(SUQ_ATTRS.iter().map(|a| (format!("suq_{a}"), String::new(), query_feature(&format!("suq.{a}")))));
    v.extend(MORE_FEATURES.iter().map(|(n, t, b)| (n.to_string(), t.to_string(), b.to_string())));
    v
}

fn ptx_feature(cx: &mut Cx, k: usize) -> Result<(), String> {
    cx.primary()?;
    let (_, target, body) = &features()[k];
    let text = format!(".version 7.8\n.target sm_90{target}\n.address_size 64\n\n{body}");
    let mut img = text.into_bytes();
    img.push(0);
    let mut m: P = null_mut();
    rec!(cx, cuModuleLoadData(&mut m, img.as_ptr() as *const c_void));
    Ok(())
}

/// The texture-reference entry points without a module: cuTexRefCreate and what a
/// created reference answers; cuModuleGetTexRef/GetSurfRef on a module without
/// references.
fn ptx_texref_nomodule(cx: &mut Cx) -> Result<(), String> {
    cx.primary()?;
    let mut t: P = null_mut();
    let r = rec!(cx, cuTexRefCreate(&mut t));
    if r == 0 && !t.is_null() {
        let a = cx.array3d(4, 3, 0, FLOAT, 1, 0)?;
        rec!(cx, cuTexRefSetArray(t, a, 1));
        rec!(cx, cuTexRefSetFormat(t, FLOAT, 1));
        rec!(cx, cuTexRefSetAddressMode(t, 0, WRAP));
        rec!(cx, cuTexRefSetFilterMode(t, LINEAR));
        rec!(cx, cuTexRefSetFlags(t, NORMALIZED));
        let (mut f, mut ch) = (0u32, 0i32);
        rec!(cx, cuTexRefGetFormat(&mut f, &mut ch, t));
        let mut fl = 0u32;
        rec!(cx, cuTexRefGetFlags(&mut fl, t));
        cx.val("fmt", format!("{f:x},{ch}"));
        cx.val("flags", fl);
        rec!(cx, cuTexRefDestroy(t));
    }
    let m = cx.module()?;
    let c = CString::new("fill_hash").unwrap();
    let mut x: P = null_mut();
    rec!(cx, cuModuleGetTexRef(&mut x, m, c.as_ptr()));
    rec!(cx, cuModuleGetSurfRef(&mut x, m, c.as_ptr()));
    let c = CString::new("nope").unwrap();
    rec!(cx, cuModuleGetTexRef(&mut x, m, c.as_ptr()));
    Ok(())
}

/// Setters and getters on a NULL texture reference (each may crash the real driver:
/// one case each would be safer, but a crash still records CRASHED).
fn ptx_texref_null(cx: &mut Cx) -> Result<(), String> {
    cx.primary()?;
    let mut f = 0u32;
    rec!(cx, cuTexRefGetFilterMode(&mut f, null_mut()));
    rec!(cx, cuTexRefSetFilterMode(null_mut(), LINEAR));
    rec!(cx, cuTexRefDestroy(null_mut()));
    Ok(())
}

/// Level-of-detail fraction bits: tex2DLod at 1/256 - 2^-k (k = 24..34) and 1/512 +-
/// 2^-k, on the constant-level mipmap, linear mip filter; negative bias -0.3.
fn f_mip_lodbits(cx: &mut Cx, neg_bias: bool) -> Result<(), String> {
    cx.primary()?;
    let mut td = tdesc([CLAMP; 3], POINT, NORMALIZED);
    td.mipmap_filter_mode = LINEAR;
    td.max_mipmap_level_clamp = 100.0;
    if neg_bias {
        td.mipmap_level_bias = -0.3;
    }
    let t = mip_tex(cx, (64, 64, 7), FLOAT, 1, &td, &mut |l, _| (l as f32).to_le_bytes().to_vec())?;
    let mut q = Vec::new();
    for base in [1.0f32 / 256.0, 1.0 / 512.0, 1.0, 2.5 / 256.0, 3.0 + 7.0 / 256.0] {
        for k in 20..=34 {
            let e = 2f32.powi(-k);
            for v in [base - e, base + e] {
                q.push([0.5, 0.5, 0.0, v]);
            }
        }
    }
    for k in 0..512 {
        q.push([0.5, 0.5, 0.0, k as f32 / 128.0]);
    }
    let res = cx.probe(t, TP_2D_LOD, &q, None)?;
    cx.components(&res);
    Ok(())
}

/// Trilinear weights: a 2x2x2 u16 texture with one texel 65535 and the rest 0 (one
/// texture per texel position), sampled at a grid of 3D positions: each result is that
/// texel's weight x 65535/256.
fn f_3d_weights(cx: &mut Cx) -> Result<(), String> {
    cx.primary()?;
    let mut r = Rng::new(80);
    let q: Vec<[f32; 4]> = (0..512)
        .map(|_| [0.5 + r.below(257) as f32 / 256.0, 0.5 + r.below(257) as f32 / 256.0, 0.5 + r.below(257) as f32 / 256.0, 0.0])
        .collect();
    for hot in 0..8usize {
        let data: Vec<u8> = (0..8).flat_map(|k| if k == hot { [0xff, 0xff] } else { [0, 0] }).collect();
        let t = float_tex(cx, U16, 1, (2, 2, 2), &data, 0)?;
        let res = cx.probe(t, TP_3D, &q, None)?;
        cx.sub(&format!("t{hot}"), lanes(&res.iter().map(|x| x[0]).collect::<Vec<_>>()));
    }
    Ok(())
}

pub(super) fn cases(add: &mut dyn FnMut(String, Run)) {
    add("texf_pairs_f32".into(), Box::new(|cx| f_pairs(cx, false)));
    add("texf_pairs_half".into(), Box::new(|cx| f_pairs(cx, true)));
    add("texf_quad_f32".into(), Box::new(|cx| f_quad(cx, FLOAT, false)));
    add("texf_quad_half".into(), Box::new(|cx| f_quad(cx, HALF, false)));
    add("texf_cube3d_f32".into(), Box::new(|cx| f_quad(cx, FLOAT, true)));
    add("texf_srgb_1d".into(), Box::new(|cx| f_byte(cx, true, false)));
    add("texf_srgb_2d".into(), Box::new(|cx| f_byte(cx, true, true)));
    add("texf_s8_1d".into(), Box::new(|cx| f_byte(cx, false, false)));
    add("texf_s8_2d".into(), Box::new(|cx| f_byte(cx, false, true)));
    for (k, n) in ["lod", "lod_point", "grad", "grad_rect", "bias_clamp", "grad_aniso16"].iter().enumerate() {
        add(format!("texf_mip_{n}"), Box::new(move |cx| f_mip_const(cx, k as u32)));
    }
    add("texf_mip_blend_f32".into(), Box::new(|cx| f_mip_blend(cx, FLOAT)));
    add("texf_mip_blend_u8".into(), Box::new(|cx| f_mip_blend(cx, U8)));
    add("texf_mip_blend_half".into(), Box::new(|cx| f_mip_blend(cx, HALF)));
    add("texf_mip_pairs_f32".into(), Box::new(|cx| f_mip_pairs(cx, FLOAT)));
    add("texf_mip_blend_even0_f32".into(), Box::new(|cx| f_mip_blend_zeroing(cx, FLOAT, Some(0), LINEAR)));
    add("texf_mip_blend_odd0_f32".into(), Box::new(|cx| f_mip_blend_zeroing(cx, FLOAT, Some(1), LINEAR)));
    add("texf_mip_blend_point_f32".into(), Box::new(|cx| f_mip_blend_zeroing(cx, FLOAT, None, POINT)));
    add("texf_mip_pairs_half".into(), Box::new(|cx| f_mip_pairs(cx, HALF)));
    add("texf_mip_pairs_u8".into(), Box::new(|cx| f_mip_pairs(cx, U8)));
    add("ptx_texref_exports".into(), Box::new(ptx_texref_exports));
    add("ptx_texref_api".into(), Box::new(ptx_texref_api));
    add("ptx_texref_sample".into(), Box::new(ptx_texref_sample));
    add("ptx_texref_unbound".into(), Box::new(ptx_texref_unbound));
    add("ptx_surfref".into(), Box::new(ptx_surfref));
    for (name, fmt, ch) in [
        ("u8x4", U8, 4u32),
        ("s8x4", S8, 4),
        ("u16x2", U16, 2),
        ("s16x1", S16, 1),
        ("halfx4", HALF, 4),
        ("f32x2", FLOAT, 2),
        ("u32x4", U32, 4),
        ("s32x1", S32, 1),
    ] {
        add(format!("ptx_sust_p_{name}"), Box::new(move |cx| ptx_sust_p(cx, fmt, ch)));
    }
    for (k, n) in ["array2d", "mipmap", "array3d", "layered", "linear", "pitch2d", "cubemap"].iter().enumerate() {
        add(format!("ptx_txq_{n}"), Box::new(move |cx| ptx_txq(cx, k as u32)));
    }
    add("ptx_texx_offsets".into(), Box::new(|cx| ptx_texx(cx, false)));
    add("ptx_texx_mip".into(), Box::new(|cx| ptx_texx(cx, true)));
    for (k, (n, _, _)) in features().iter().enumerate() {
        add(format!("ptx_feature_{n}"), Box::new(move |cx| ptx_feature(cx, k)));
    }
    add("ptx_texref_nomodule".into(), Box::new(ptx_texref_nomodule));
    add("ptx_texref_null".into(), Box::new(ptx_texref_null));
    add("texf_mip_lodbits".into(), Box::new(|cx| f_mip_lodbits(cx, false)));
    add("texf_mip_lodbits_negbias".into(), Box::new(|cx| f_mip_lodbits(cx, true)));
    add("texf_3d_weights".into(), Box::new(f_3d_weights));
    for (n, mode) in [("clamp", CLAMP), ("wrap", WRAP), ("mirror", MIRROR), ("border", BORDER)] {
        add(format!("texf_trilinear_{n}_u8"), Box::new(move |cx| f_footprints(cx, mode, false)));
        add(format!("texf_3d_{n}_u8"), Box::new(move |cx| f_footprints(cx, mode, true)));
    }
}
