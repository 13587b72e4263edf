//! What every texture case shares: CUDA's format, flag and mode numbers, the texel
//! generator, query grids, and the array / texture / surface object helpers on `Cx`.
//! Its own module so that both the sampling cases (texture.rs) and the fitting cases
//! (texfit.rs) use it without depending on each other.

use crate::api::{Array3DDesc, Memcpy3D, ResDesc, TexDesc, P};
use crate::cases::devres::lanes;
use crate::cx::{pp, Cx};
use std::ffi::c_void;
use std::ptr::null_mut;

// cuda.h's format, flag, mode and memory-type numbers (abi/src/cuda.rs), by short names.
pub(super) use crate::cuda::{
    CUDA_ARRAY3D_CUBEMAP as CUBEMAP, CUDA_ARRAY3D_LAYERED as LAYERED, CUDA_ARRAY3D_SURFACE_LDST as LDST,
    CUDA_ARRAY3D_TEXTURE_GATHER as GATHER, CU_AD_FORMAT_FLOAT as FLOAT, CU_AD_FORMAT_HALF as HALF, CU_AD_FORMAT_SIGNED_INT16 as S16,
    CU_AD_FORMAT_SIGNED_INT32 as S32, CU_AD_FORMAT_SIGNED_INT8 as S8, CU_AD_FORMAT_UNSIGNED_INT16 as U16,
    CU_AD_FORMAT_UNSIGNED_INT32 as U32, CU_AD_FORMAT_UNSIGNED_INT8 as U8, CU_MEMORYTYPE_ARRAY as MT_ARRAY, CU_MEMORYTYPE_HOST as MT_HOST,
    CU_RESOURCE_TYPE_ARRAY as RES_ARRAY, CU_RESOURCE_TYPE_LINEAR as RES_LINEAR, CU_RESOURCE_TYPE_MIPMAPPED_ARRAY as RES_MIPMAP,
    CU_RESOURCE_TYPE_PITCH2D as RES_PITCH2D, CU_TRSF_NORMALIZED_COORDINATES as NORMALIZED, CU_TRSF_READ_AS_INTEGER as READ_AS_INTEGER,
    CU_TRSF_SRGB as SRGB, CU_TR_ADDRESS_MODE_BORDER as BORDER, CU_TR_ADDRESS_MODE_CLAMP as CLAMP, CU_TR_ADDRESS_MODE_MIRROR as MIRROR,
    CU_TR_ADDRESS_MODE_WRAP as WRAP, CU_TR_FILTER_MODE_LINEAR as LINEAR, CU_TR_FILTER_MODE_POINT as POINT,
};

// tex_probe ops (kernels/conformance.cu)
pub(super) const TP_1D: u32 = 0;
pub(super) const TP_2D: u32 = 1;
pub(super) const TP_3D: u32 = 2;
pub(super) const TP_1D_LAYERED: u32 = 3;
pub(super) const TP_2D_LAYERED: u32 = 4;
pub(super) const TP_CUBE: u32 = 5;
pub(super) const TP_2D_LOD: u32 = 6;
pub(super) const TP_2D_GRAD: u32 = 7;
pub(super) const TP_GATHER: u32 = 8;
pub(super) const TP_FETCH: u32 = 9;
pub(super) const TP_CUBE_LAYERED: u32 = 10;
pub(super) const TP_2D_INT: u32 = 20;
pub(super) const TP_2D_UINT: u32 = 21;
pub(super) const TP_FETCH_INT: u32 = 22;
pub(super) const TP_FETCH_UINT: u32 = 23;
pub(super) const TP_GATHER_UINT: u32 = 24;
pub(super) const TP_1D_INT: u32 = 25;

pub(super) fn elem_size(fmt: u32, ch: u32) -> usize {
    let b = match fmt {
        U8 | S8 => 1,
        U16 | S16 | HALF => 2,
        _ => 4,
    };
    b * ch as usize
}

/// Deterministic texel bytes: a 32-bit LCG, with float formats drawn from a set of
/// values that exercise the filter (negative, fractional, large, exact halves).
pub(super) fn texels(fmt: u32, count: usize, seed: u32) -> Vec<u8> {
    let mut s = seed.wrapping_mul(2654435761).wrapping_add(12345);
    let mut next = || {
        s = s.wrapping_mul(1664525).wrapping_add(1013904223);
        s >> 8
    };
    const F: [f32; 16] = [0.0, 1.0, 0.25, -2.0, 3.7, -1.25, 100.5, 0.1, 7.0, -0.3, 0.5, 12.125, -8.0, 1e-3, 2.5, 65504.0];
    let mut v = Vec::new();
    match fmt {
        FLOAT => (0..count).for_each(|_| v.extend_from_slice(&F[next() as usize % 16].to_le_bytes())),
        HALF => (0..count).for_each(|_| {
            // Halves of the same values (exact where representable).
            const H: [u16; 16] = [
                0x0000, 0x3c00, 0x3400, 0xc000, 0x4366, 0xbd00, 0x5648, 0x2e66, 0x4700, 0xb4cd, 0x3800, 0x4a10, 0xc800, 0x1419, 0x4100,
                0x7bff,
            ];
            v.extend_from_slice(&H[next() as usize % 16].to_le_bytes())
        }),
        U8 | S8 => (0..count).for_each(|_| v.push(next() as u8)),
        U16 | S16 => (0..count).for_each(|_| v.extend_from_slice(&(next() as u16).to_le_bytes())),
        _ => (0..count).for_each(|_| v.extend_from_slice(&next().wrapping_mul(2654435761).to_le_bytes())),
    }
    v
}

impl Cx<'_> {
    pub(super) fn array3d(&mut self, w: usize, h: usize, d: usize, fmt: u32, ch: u32, flags: u32) -> Result<P, String> {
        let desc = Array3DDesc { width: w, height: h, depth: d, format: fmt, num_channels: ch, flags };
        let mut a: P = null_mut();
        setup!(self, cuArray3DCreate_v2(&mut a, &desc));
        Ok(a)
    }

    /// Copies `bytes` (rows of w elements, h rows, d slices) into array `a` (level view).
    pub(super) fn fill(&mut self, a: P, bytes: &[u8], row: usize, h: usize, d: usize) -> Result<(), String> {
        let mut c = Memcpy3D::zeroed();
        c.src_memory_type = MT_HOST;
        c.src_host = bytes.as_ptr() as *const c_void;
        c.src_pitch = row;
        c.src_height = h.max(1);
        c.dst_memory_type = MT_ARRAY;
        c.dst_array = a;
        c.width_in_bytes = row;
        c.height = h.max(1);
        c.depth = d.max(1);
        setup!(self, cuMemcpy3D_v2(&c));
        Ok(())
    }

    pub(super) fn tex(&mut self, res: &ResDesc, td: &TexDesc) -> Result<u64, String> {
        let mut t = 0u64;
        setup!(self, cuTexObjectCreate(&mut t, res, td, std::ptr::null()));
        Ok(t)
    }

    /// Runs tex_probe over `q` (and gradients `g`); returns 4 words per query.
    pub(super) fn probe(&mut self, t: u64, op: u32, q: &[[f32; 4]], g: Option<&[[f32; 4]]>) -> Result<Vec<[u32; 4]>, String> {
        let n = q.len();
        let dq = self.upload(q)?;
        let zero = vec![[0f32; 4]; n];
        let dg = self.upload(g.unwrap_or(&zero))?;
        let out = self.sentinel(n * 4)?;
        let (mut t, mut op, mut dq, mut dg, mut out_p, mut n32) = (t, op, dq, dg, out, n as u32);
        let mut params = [pp(&mut t), pp(&mut op), pp(&mut dq), pp(&mut dg), pp(&mut out_p), pp(&mut n32)];
        let m = self.module()?;
        let f = self.function(m, "tex_probe")?;
        let grid = (n as u32).div_ceil(128);
        self.launch(f, [grid, 1, 1], [128, 1, 1], 0, &mut params);
        rec!(self, cuCtxSynchronize());
        let v: Vec<u32> = self.download(out, n * 4)?;
        Ok(v.chunks(4).map(|c| [c[0], c[1], c[2], c[3]]).collect())
    }

    /// Prints the results as four component lines.
    pub(super) fn components(&mut self, r: &[[u32; 4]]) {
        self.val("n", r.len());
        for k in 0..4 {
            let col: Vec<u32> = r.iter().map(|x| x[k]).collect();
            self.sub(&format!("c{k}"), lanes(&col));
        }
    }
}

pub(super) fn res_array(a: P) -> ResDesc {
    let mut r = ResDesc { res_type: RES_ARRAY, ..Default::default() };
    r.res[0] = a as u64;
    r
}

pub(super) fn tdesc(addr: [u32; 3], filter: u32, flags: u32) -> TexDesc {
    TexDesc { address_mode: addr, filter_mode: filter, flags, ..Default::default() }
}

/// Unnormalized 1D coordinates from `lo` to `hi` every 1/32, plus one ulp either side of
/// every integer and half-integer in the range.
pub(super) fn coords_1d(lo: i32, hi: i32) -> Vec<f32> {
    let mut v: Vec<f32> = (lo * 32..=hi * 32).map(|k| k as f32 / 32.0).collect();
    for i in lo..=hi {
        for c in [i as f32, i as f32 + 0.5] {
            v.push(next_down(c));
            v.push(next_up(c));
        }
    }
    v
}

pub(super) fn next_up(x: f32) -> f32 {
    if x == 0.0 {
        f32::from_bits(1)
    } else if x > 0.0 {
        f32::from_bits(x.to_bits() + 1)
    } else {
        f32::from_bits(x.to_bits() - 1)
    }
}

pub(super) fn next_down(x: f32) -> f32 {
    -next_up(-x)
}

/// A 2D grid every `step` over [lo, hi] in x and y (unnormalized texel units).
pub(super) fn grid_2d(xlo: f32, xhi: f32, ylo: f32, yhi: f32, step: f32) -> Vec<[f32; 4]> {
    let mut v = Vec::new();
    let ny = ((yhi - ylo) / step).round() as i32;
    let nx = ((xhi - xlo) / step).round() as i32;
    for j in 0..=ny {
        for i in 0..=nx {
            v.push([xlo + i as f32 * step, ylo + j as f32 * step, 0.0, 0.0]);
        }
    }
    v
}

pub(super) fn scale(q: &mut [[f32; 4]], w: f32, h: f32, d: f32) {
    for c in q {
        c[0] /= w;
        c[1] /= h;
        c[2] /= d;
    }
}

pub(super) const ADDR: [(&str, u32); 4] = [("wrap", WRAP), ("clamp", CLAMP), ("mirror", MIRROR), ("border", BORDER)];

pub(super) fn surf_obj(cx: &mut Cx, a: P) -> Result<u64, String> {
    let mut s = 0u64;
    setup!(cx, cuSurfObjectCreate(&mut s, &res_array(a)));
    Ok(s)
}
