//! Arrays, texture objects and surface objects: the driver's validation (`tex_api_*`) and
//! what the device samples (`texs_*`, `surf_*`), kernels `tex_probe` / `surf_probe` /
//! `surf_write_probe` / `surf_probe_sized` of kernels/conformance.cu.
//!
//! Sampling cases print one sub-line per result component (`name.c0` ... `name.c3`):
//! the query results in query order as hex bit patterns, runs of equal neighbours as
//! `v*n` (see `devres::lanes`). The queries are built here from the case's parameters,
//! identically for every driver, so that a line compares bit for bit. Texel data comes
//! from a fixed generator (`texels`).

mod kit;
mod texfeat;
mod texfit;

use super::devres::lanes;
use crate::api::{Array3DDesc, ArrayDesc, Memcpy2D, Memcpy3D, ResDesc, TexDesc, ViewDesc, P};
use crate::cx::{pp, Case, Cx, Run};
use kit::*;
use std::ffi::c_void;
use std::ptr::null_mut;

// ---------------------------------------------------------------- sampling cases

/// 1D float texture of 5 texels, every address mode, filter and coordinate kind.
fn s_1d(cx: &mut Cx, addr: u32, filter: u32, norm: bool) -> Result<(), String> {
    cx.primary()?;
    let w = 5;
    let a = cx.array3d(w, 0, 0, FLOAT, 1, 0)?;
    let data = texels(FLOAT, w, 1);
    cx.fill(a, &data, w * 4, 1, 1)?;
    let mut td = tdesc([addr; 3], filter, if norm { NORMALIZED } else { 0 });
    td.border_color = [0.5, -1.0, 2.0, 0.25];
    let t = cx.tex(&res_array(a), &td)?;
    let mut q: Vec<[f32; 4]> = coords_1d(-2, w as i32 + 2).into_iter().map(|x| [x, 0.0, 0.0, 0.0]).collect();
    if norm {
        scale(&mut q, w as f32, 1.0, 1.0);
    }
    let r = cx.probe(t, TP_1D, &q, None)?;
    cx.components(&r);
    Ok(())
}

/// The linear filter's weights: texels 0 and 1, x every 1/1024 across one texel.
fn s_weights(cx: &mut Cx, norm: bool, fmt: u32) -> Result<(), String> {
    cx.primary()?;
    let a = cx.array3d(2, 0, 0, fmt, 1, 0)?;
    let data: Vec<u8> = match fmt {
        FLOAT => [0f32, 1.0].iter().flat_map(|v| v.to_le_bytes()).collect(),
        U8 => vec![0, 255],
        _ => [0u16, 0xffff].iter().flat_map(|v| v.to_le_bytes()).collect(),
    };
    cx.fill(a, &data, elem_size(fmt, 1) * 2, 1, 1)?;
    let t = cx.tex(&res_array(a), &tdesc([CLAMP; 3], LINEAR, if norm { NORMALIZED } else { 0 }))?;
    let mut q: Vec<[f32; 4]> = (0..=1024).map(|k| [0.5 + k as f32 / 1024.0, 0.0, 0.0, 0.0]).collect();
    if norm {
        scale(&mut q, 2.0, 1.0, 1.0);
    }
    let r = cx.probe(t, TP_1D, &q, None)?;
    cx.components(&r);
    Ok(())
}

/// The filter's arithmetic on irregular values: 1D float texture, x every 1/64.
fn s_arith(cx: &mut Cx) -> Result<(), String> {
    cx.primary()?;
    let w = 16;
    let a = cx.array3d(w, 0, 0, FLOAT, 1, 0)?;
    let data = texels(FLOAT, w, 7);
    cx.fill(a, &data, w * 4, 1, 1)?;
    let t = cx.tex(&res_array(a), &tdesc([CLAMP; 3], LINEAR, 0))?;
    let q: Vec<[f32; 4]> = (0..=(w as i32 * 64)).map(|k| [k as f32 / 64.0, 0.0, 0.0, 0.0]).collect();
    let r = cx.probe(t, TP_1D, &q, None)?;
    cx.components(&r);
    Ok(())
}

/// Bilinear arithmetic: a 2x2 float texture of irregular values, x and y every 1/32
/// across the centre cell.
fn s_2d_fine(cx: &mut Cx, fmt: u32) -> Result<(), String> {
    cx.primary()?;
    let a = cx.array3d(2, 2, 0, fmt, 1, 0)?;
    let data = texels(fmt, 4, 13);
    cx.fill(a, &data, 2 * elem_size(fmt, 1), 2, 1)?;
    let t = cx.tex(&res_array(a), &tdesc([CLAMP; 3], LINEAR, 0))?;
    let q = grid_2d(0.5, 1.5, 0.5, 1.5, 1.0 / 32.0);
    let r = cx.probe(t, TP_2D, &q, None)?;
    cx.components(&r);
    Ok(())
}

/// Linear mipmap filtering between levels 0 and 1, lod every 1/512.
fn s_mip_fine(cx: &mut Cx) -> Result<(), String> {
    cx.primary()?;
    let desc = Array3DDesc { width: 2, height: 2, depth: 0, format: FLOAT, num_channels: 1, flags: 0 };
    let mut m: P = null_mut();
    setup!(cx, cuMipmappedArrayCreate(&mut m, &desc, 2));
    for (l, v) in [(0u32, 0.0f32), (1, 1.0)] {
        let mut lvl: P = null_mut();
        setup!(cx, cuMipmappedArrayGetLevel(&mut lvl, m, l));
        let s = 2usize >> l;
        let data: Vec<u8> = (0..s * s).flat_map(|_| v.to_le_bytes()).collect();
        cx.fill(lvl, &data, s * 4, s, 1)?;
    }
    let mut res = ResDesc { res_type: RES_MIPMAP, ..Default::default() };
    res.res[0] = m as u64;
    let mut td = tdesc([CLAMP; 3], POINT, NORMALIZED);
    td.mipmap_filter_mode = LINEAR;
    td.max_mipmap_level_clamp = 10.0;
    let t = cx.tex(&res, &td)?;
    let q: Vec<[f32; 4]> = (0..=512).map(|k| [0.5, 0.5, 0.0, k as f32 / 512.0]).collect();
    let r = cx.probe(t, TP_2D_LOD, &q, None)?;
    cx.components(&r);
    Ok(())
}

/// 2D float texture 4x3: one address mode (x, y), linear or point, normalized.
fn s_2d(cx: &mut Cx, ax: u32, ay: u32, filter: u32, norm: bool) -> Result<(), String> {
    cx.primary()?;
    let (w, h) = (4, 3);
    let a = cx.array3d(w, h, 0, FLOAT, 1, 0)?;
    let data = texels(FLOAT, w * h, 2);
    cx.fill(a, &data, w * 4, h, 1)?;
    let mut td = tdesc([ax, ay, CLAMP], filter, if norm { NORMALIZED } else { 0 });
    td.border_color = [-0.75, 0.0, 0.0, 0.0];
    let t = cx.tex(&res_array(a), &td)?;
    let mut q = grid_2d(-1.5, w as f32 + 1.5, -1.5, h as f32 + 1.5, 0.25);
    if norm {
        scale(&mut q, w as f32, h as f32, 1.0);
    }
    let r = cx.probe(t, TP_2D, &q, None)?;
    cx.components(&r);
    Ok(())
}

/// 2D integer-format texture 4x3 with `ch` channels: normalized-float or element-type
/// reads, point or linear, sRGB.
fn s_fmt(cx: &mut Cx, fmt: u32, ch: u32, flags: u32, filter: u32, addr: u32) -> Result<(), String> {
    cx.primary()?;
    let (w, h) = (4, 3);
    let a = cx.array3d(w, h, 0, fmt, ch, 0)?;
    let data = texels(fmt, w * h * ch as usize, 3 + fmt);
    cx.fill(a, &data, w * elem_size(fmt, ch), h, 1)?;
    let mut td = tdesc([addr; 3], filter, flags);
    td.border_color = [0.25, -1.5, 2.0, 0.5];
    let t = cx.tex(&res_array(a), &td)?;
    let q = grid_2d(-1.0, w as f32 + 1.0, -1.0, h as f32 + 1.0, 0.25);
    let op = if flags & READ_AS_INTEGER != 0 || matches!(fmt, U32 | S32) {
        if matches!(fmt, S8 | S16 | S32) {
            TP_2D_INT
        } else {
            TP_2D_UINT
        }
    } else {
        TP_2D
    };
    let r = cx.probe(t, op, &q, None)?;
    cx.components(&r);
    Ok(())
}

/// Every 8-bit value through the normalized-float read (and sRGB): 256 texels (v, v,
/// 255-v, v), point sampled at texel centres.
fn s_table(cx: &mut Cx, srgb: bool, signed: bool) -> Result<(), String> {
    cx.primary()?;
    let fmt = if signed { S8 } else { U8 };
    let a = cx.array3d(256, 0, 0, fmt, 4, 0)?;
    let data: Vec<u8> = (0..256u32).flat_map(|v| [v as u8, v as u8, 255 - v as u8, v as u8]).collect();
    cx.fill(a, &data, 1024, 1, 1)?;
    let t = cx.tex(&res_array(a), &tdesc([CLAMP; 3], POINT, if srgb { SRGB } else { 0 }))?;
    let q: Vec<[f32; 4]> = (0..256).map(|k| [k as f32 + 0.5, 0.0, 0.0, 0.0]).collect();
    let r = cx.probe(t, TP_1D, &q, None)?;
    cx.components(&r);
    Ok(())
}

/// 16-bit normalized reads of selected values (and half floats).
fn s_table16(cx: &mut Cx, fmt: u32) -> Result<(), String> {
    cx.primary()?;
    let vals: Vec<u16> =
        (0..512u32).map(|k| (k.wrapping_mul(40503) ^ (k << 7)) as u16).chain([0, 1, 2, 0x7fff, 0x8000, 0x8001, 0xfffe, 0xffff]).collect();
    let n = vals.len();
    let a = cx.array3d(n, 0, 0, fmt, 1, 0)?;
    let data: Vec<u8> = vals.iter().flat_map(|v| v.to_le_bytes()).collect();
    cx.fill(a, &data, n * 2, 1, 1)?;
    let t = cx.tex(&res_array(a), &tdesc([CLAMP; 3], POINT, 0))?;
    let q: Vec<[f32; 4]> = (0..n).map(|k| [k as f32 + 0.5, 0.0, 0.0, 0.0]).collect();
    let r = cx.probe(t, TP_1D, &q, None)?;
    cx.components(&r);
    Ok(())
}

/// 3D float texture 3x3x2, linear or point, clamp, normalized; a grid every 1/2.
fn s_3d(cx: &mut Cx, filter: u32, addr: u32) -> Result<(), String> {
    cx.primary()?;
    let (w, h, d) = (3, 3, 2);
    let a = cx.array3d(w, h, d, FLOAT, 1, 0)?;
    let data = texels(FLOAT, w * h * d, 4);
    cx.fill(a, &data, w * 4, h, d)?;
    let t = cx.tex(&res_array(a), &tdesc([addr; 3], filter, NORMALIZED))?;
    let mut q = Vec::new();
    for z in 0..=7 {
        for y in 0..=9 {
            for x in 0..=9 {
                q.push([(x as f32 * 0.5 - 1.0) / 3.0, (y as f32 * 0.5 - 1.0) / 3.0, (z as f32 * 0.5 - 0.75) / 2.0, 0.0]);
            }
        }
    }
    let r = cx.probe(t, TP_3D, &q, None)?;
    cx.components(&r);
    Ok(())
}

/// Layered arrays (1D and 2D, 3 layers): layers -1..4 at a grid of points, linear.
fn s_layered(cx: &mut Cx, two_d: bool) -> Result<(), String> {
    cx.primary()?;
    let (w, h, layers) = (4, if two_d { 3 } else { 0 }, 3);
    let a = cx.array3d(w, h, layers, FLOAT, 1, LAYERED)?;
    let data = texels(FLOAT, w * h.max(1) * layers, 5);
    cx.fill(a, &data, w * 4, h.max(1), layers)?;
    let t = cx.tex(&res_array(a), &tdesc([CLAMP; 3], LINEAR, 0))?;
    let mut q = Vec::new();
    for layer in -1..=4 {
        for p in grid_2d(-0.5, w as f32 + 0.5, -0.5, if two_d { h as f32 + 0.5 } else { -0.5 }, 0.5) {
            q.push([p[0], p[1], 0.0, layer as f32]);
        }
    }
    let op = if two_d { TP_2D_LAYERED } else { TP_1D_LAYERED };
    let r = cx.probe(t, op, &q, None)?;
    cx.components(&r);
    Ok(())
}

/// Cubemap 2x2 per face, float: directions over every face and across its edges.
fn s_cube(cx: &mut Cx, filter: u32, layered: bool) -> Result<(), String> {
    cx.primary()?;
    let layers = if layered { 2 } else { 1 };
    let a = cx.array3d(2, 2, 6 * layers, FLOAT, 1, CUBEMAP | if layered { LAYERED } else { 0 })?;
    let data = texels(FLOAT, 4 * 6 * layers, 6);
    cx.fill(a, &data, 8, 2, 6 * layers)?;
    let t = cx.tex(&res_array(a), &tdesc([CLAMP; 3], filter, NORMALIZED))?;
    let mut q = Vec::new();
    for layer in 0..layers {
        for axis in 0..3 {
            for sign in [-1.0f32, 1.0] {
                for j in 0..=10 {
                    for i in 0..=10 {
                        let (u, v) = (i as f32 * 0.25 - 1.25, j as f32 * 0.25 - 1.25);
                        let mut c = [0.0; 4];
                        c[axis] = sign;
                        c[(axis + 1) % 3] = u;
                        c[(axis + 2) % 3] = v;
                        c[3] = layer as f32;
                        q.push(c);
                    }
                }
            }
        }
    }
    let r = cx.probe(t, if layered { TP_CUBE_LAYERED } else { TP_CUBE }, &q, None)?;
    cx.components(&r);
    Ok(())
}

/// Mipmapped 8x8 float texture, 4 levels, level L holding distinct values per texel:
/// tex2DLod over lod -1 .. 4.5 every 1/16 at three points, or tex2DGrad.
fn s_mip(cx: &mut Cx, mip_filter: u32, filter: u32, bias: f32, clamp: (f32, f32), grad: bool) -> Result<(), String> {
    cx.primary()?;
    let desc = Array3DDesc { width: 8, height: 8, depth: 0, format: FLOAT, num_channels: 1, flags: 0 };
    let mut m: P = null_mut();
    setup!(cx, cuMipmappedArrayCreate(&mut m, &desc, 4));
    for l in 0..4u32 {
        let mut lvl: P = null_mut();
        setup!(cx, cuMipmappedArrayGetLevel(&mut lvl, m, l));
        let s = 8usize >> l;
        let data: Vec<u8> = (0..s * s).flat_map(|k| ((l * 100) as f32 + k as f32 * 0.5).to_le_bytes()).collect();
        cx.fill(lvl, &data, s * 4, s, 1)?;
    }
    let mut res = ResDesc { res_type: RES_MIPMAP, ..Default::default() };
    res.res[0] = m as u64;
    let mut td = tdesc([CLAMP; 3], filter, NORMALIZED);
    td.mipmap_filter_mode = mip_filter;
    td.mipmap_level_bias = bias;
    td.min_mipmap_level_clamp = clamp.0;
    td.max_mipmap_level_clamp = clamp.1;
    let t = cx.tex(&res, &td)?;
    let points = [[0.5f32, 0.5], [0.3, 0.7], [0.0625, 0.9]];
    let mut q = Vec::new();
    let mut g = Vec::new();
    if grad {
        for p in points {
            for k in 0..=40 {
                let s = 2f32.powf(k as f32 / 8.0 - 1.0) / 8.0;
                for aniso in [1.0f32, 0.25, 0.7] {
                    q.push([p[0], p[1], 0.0, 0.0]);
                    g.push([s, 0.0, 0.0, s * aniso]);
                }
                q.push([p[0], p[1], 0.0, 0.0]);
                g.push([s * 0.6, s * 0.8, -s * 0.8, s * 0.6]);
            }
        }
    } else {
        for p in points {
            for k in -16..=72 {
                q.push([p[0], p[1], 0.0, k as f32 / 16.0]);
            }
        }
    }
    let r = if grad { cx.probe(t, TP_2D_GRAD, &q, Some(&g))? } else { cx.probe(t, TP_2D_LOD, &q, None)? };
    cx.components(&r);
    Ok(())
}

/// tex2Dgather of every component over a grid, 4-channel float or u8 element type.
fn s_gather(cx: &mut Cx, fmt: u32, addr: u32, norm: bool) -> Result<(), String> {
    cx.primary()?;
    let (w, h) = (4, 3);
    let a = cx.array3d(w, h, 0, fmt, 4, GATHER)?;
    let data = texels(fmt, w * h * 4, 8);
    cx.fill(a, &data, w * elem_size(fmt, 4), h, 1)?;
    let flags = if fmt == FLOAT { 0 } else { READ_AS_INTEGER } | if norm { NORMALIZED } else { 0 };
    let t = cx.tex(&res_array(a), &tdesc([addr; 3], POINT, flags))?;
    let mut q = Vec::new();
    for comp in 0..4 {
        for mut p in grid_2d(-1.0, w as f32 + 1.0, -1.0, h as f32 + 1.0, 0.25) {
            if norm {
                p[0] /= w as f32;
                p[1] /= h as f32;
            }
            p[3] = comp as f32;
            q.push(p);
        }
    }
    let r = cx.probe(t, if fmt == FLOAT { TP_GATHER } else { TP_GATHER_UINT }, &q, None)?;
    cx.components(&r);
    Ok(())
}

/// tex1Dfetch over a linear resource of 10 elements, indices -3 .. 13.
fn s_fetch(cx: &mut Cx, fmt: u32, ch: u32, flags: u32) -> Result<(), String> {
    cx.primary()?;
    let n = 10;
    let data = texels(fmt, n * ch as usize, 9);
    let d = cx.upload(&data)?;
    let mut res = ResDesc { res_type: RES_LINEAR, ..Default::default() };
    res.res[0] = d;
    res.res[1] = fmt as u64 | ((ch as u64) << 32);
    res.res[2] = data.len() as u64;
    let t = cx.tex(&res, &tdesc([CLAMP; 3], POINT, flags))?;
    let q: Vec<[f32; 4]> = (-3..=13).map(|i| [i as f32, 0.0, 0.0, 0.0]).collect();
    let op = if flags & READ_AS_INTEGER != 0 || matches!(fmt, U32 | S32) {
        if matches!(fmt, S8 | S16 | S32) {
            TP_FETCH_INT
        } else {
            TP_FETCH_UINT
        }
    } else {
        TP_FETCH
    };
    let r = cx.probe(t, op, &q, None)?;
    cx.components(&r);
    Ok(())
}

/// A pitch-2D resource (u8, 5x3, pitch 64): linear filter, normalized-float read.
fn s_pitch(cx: &mut Cx, filter: u32) -> Result<(), String> {
    cx.primary()?;
    let (w, h, pitch) = (5usize, 3usize, 64usize);
    let data = texels(U8, pitch * h, 10);
    let d = cx.upload(&data)?;
    let mut res = ResDesc { res_type: RES_PITCH2D, ..Default::default() };
    res.res[0] = d;
    res.res[1] = U8 as u64 | (1u64 << 32);
    res.res[2] = w as u64;
    res.res[3] = h as u64;
    res.res[4] = pitch as u64;
    let t = cx.tex(&res, &tdesc([CLAMP; 3], filter, 0))?;
    let q = grid_2d(-1.0, w as f32 + 1.0, -1.0, h as f32 + 1.0, 0.25);
    let r = cx.probe(t, TP_2D, &q, None)?;
    cx.components(&r);
    Ok(())
}

/// Unnormalized 1D integer reads (element type) with every address mode: u8 x1.
fn s_1d_int(cx: &mut Cx, addr: u32) -> Result<(), String> {
    cx.primary()?;
    let w = 5;
    let a = cx.array3d(w, 0, 0, S16, 1, 0)?;
    let data = texels(S16, w, 11);
    cx.fill(a, &data, w * 2, 1, 1)?;
    let mut td = tdesc([addr; 3], POINT, READ_AS_INTEGER | NORMALIZED);
    td.border_color = [3.0, -1.0, 0.5, 1.0];
    let t = cx.tex(&res_array(a), &td)?;
    let mut q: Vec<[f32; 4]> = coords_1d(-2, w as i32 + 2).into_iter().map(|x| [x, 0.0, 0.0, 0.0]).collect();
    scale(&mut q, w as f32, 1.0, 1.0);
    let r = cx.probe(t, TP_1D_INT, &q, None)?;
    cx.components(&r);
    Ok(())
}

// ---------------------------------------------------------------- surfaces

/// Surface byte-x coordinates and rows around the edges of a 4x3 array of u32.
fn surf_coords(dim: u32) -> Vec<[i32; 4]> {
    let xs = [-8, -4, 0, 4, 8, 12, 16, 20, 64];
    let ys: &[i32] = if dim >= 2 { &[-2, -1, 0, 1, 2, 3, 4] } else { &[0] };
    let zs: &[i32] = if dim >= 3 { &[-1, 0, 1, 2] } else { &[0] };
    let mut v = Vec::new();
    for &z in zs {
        for &y in ys {
            for &x in &xs {
                v.push([x, y, z, 0]);
            }
        }
    }
    v
}

/// op 0: 1D (4), 1: 2D (4x3), 2: 3D (4x3x2), 3: 2D layered (4x3, 2 layers).
fn surf_array(cx: &mut Cx, op: u32) -> Result<P, String> {
    let (h, d, flags) = match op {
        0 => (0, 0, LDST),
        1 => (3, 0, LDST),
        2 => (3, 2, LDST),
        _ => (3, 2, LDST | LAYERED),
    };
    let a = cx.array3d(4, h, d, U32, 1, flags)?;
    let data: Vec<u8> = (0..4 * 3 * 2u32).flat_map(|i| (0x100 + i).to_le_bytes()).collect();
    cx.fill(a, &data[..16 * h.max(1) * d.max(1)], 16, h, d)?;
    Ok(a)
}

fn surf_read(cx: &mut Cx, op: u32, mode: u32) -> Result<(), String> {
    cx.primary()?;
    let a = surf_array(cx, op)?;
    let s = surf_obj(cx, a)?;
    let q = surf_coords(if op == 3 { 3 } else { op + 1 });
    let n = q.len();
    let dq = cx.upload(&q)?;
    let out = cx.sentinel(n)?;
    let (mut s, mut op, mut mode, mut dq, mut out_p, mut n32) = (s, op, mode, dq, out, n as u32);
    let mut params = [pp(&mut s), pp(&mut op), pp(&mut mode), pp(&mut dq), pp(&mut out_p), pp(&mut n32)];
    let m = cx.module()?;
    let f = cx.function(m, "surf_probe")?;
    cx.launch(f, [n as u32, 1, 1], [1, 1, 1], 0, &mut params);
    if rec!(cx, cuCtxSynchronize()) != 0 {
        return Ok(());
    }
    let v: Vec<u32> = cx.download(out, n)?;
    cx.sub("r", lanes(&v));
    Ok(())
}

/// Writes through the surface (one thread per coordinate, run one at a time so later
/// writes land last, as one block of one thread each would order them), then the array.
fn surf_write(cx: &mut Cx, op: u32, mode: u32) -> Result<(), String> {
    cx.primary()?;
    let a = surf_array(cx, op)?;
    let s = surf_obj(cx, a)?;
    let q = surf_coords(if op == 3 { 3 } else { op + 1 });
    let m = cx.module()?;
    let f = cx.function(m, "surf_write_probe")?;
    // One launch per coordinate: deterministic order of overlapping (clamped) writes.
    for (k, c) in q.iter().enumerate() {
        let dq = cx.upload(&[*c])?;
        let (mut s, mut op, mut mode, mut dq, mut n32, mut base) = (s, op, mode, dq, 1u32, k as u32);
        let mut params = [pp(&mut s), pp(&mut op), pp(&mut mode), pp(&mut dq), pp(&mut n32), pp(&mut base)];
        let r = call!(cx, cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, null_mut(), params.as_mut_ptr(), null_mut()));
        if r != 0 {
            cx.code(r);
            return Ok(());
        }
    }
    if rec!(cx, cuCtxSynchronize()) != 0 {
        return Ok(());
    }
    let (h, d) = match op {
        0 => (1, 1),
        1 => (3, 1),
        _ => (3, 2),
    };
    let mut back = vec![0u32; 4 * h * d];
    let mut c = Memcpy3D::zeroed();
    c.src_memory_type = MT_ARRAY;
    c.src_array = a;
    c.dst_memory_type = MT_HOST;
    c.dst_host = back.as_mut_ptr() as P;
    c.dst_pitch = 16;
    c.dst_height = h;
    c.width_in_bytes = 16;
    c.height = h;
    c.depth = d;
    setup!(cx, cuMemcpy3D_v2(&c));
    cx.sub("array", lanes(&back));
    Ok(())
}

/// Surface reads of 1-byte (u8 x1 array) and 16-byte (float x4 array) elements.
fn surf_sized(cx: &mut Cx, wide: bool) -> Result<(), String> {
    cx.primary()?;
    let (fmt, ch) = if wide { (FLOAT, 4) } else { (U8, 1) };
    let a = cx.array3d(4, 3, 0, fmt, ch, LDST)?;
    let es = elem_size(fmt, ch);
    let data = texels(fmt, 4 * 3 * ch as usize, 12);
    cx.fill(a, &data, 4 * es, 3, 1)?;
    let s = surf_obj(cx, a)?;
    let xs: Vec<i32> = if wide { vec![-16, 0, 16, 32, 48, 64] } else { vec![-1, 0, 1, 2, 3, 4, 5] };
    let mut q = Vec::new();
    for y in -1..=3 {
        for &x in &xs {
            q.push([x, y, 0, 0]);
        }
    }
    let n = q.len();
    let dq = cx.upload(&q)?;
    let out = cx.sentinel(n * 4)?;
    let (mut s, mut op, mut dq, mut out_p, mut n32) = (s, wide as u32, dq, out, n as u32);
    let mut params = [pp(&mut s), pp(&mut op), pp(&mut dq), pp(&mut out_p), pp(&mut n32)];
    let m = cx.module()?;
    let f = cx.function(m, "surf_probe_sized")?;
    cx.launch(f, [n as u32, 1, 1], [1, 1, 1], 0, &mut params);
    if rec!(cx, cuCtxSynchronize()) != 0 {
        return Ok(());
    }
    let v: Vec<u32> = cx.download(out, n * 4)?;
    let r: Vec<[u32; 4]> = v.chunks(4).map(|c| [c[0], c[1], c[2], c[3]]).collect();
    cx.components(&r);
    Ok(())
}

// ---------------------------------------------------------------- driver validation

/// The first `n` 32-bit words of a descriptor (padding after them is left out: a driver
/// may leave it as it was).
fn words_n<T: Copy>(v: &T, n: usize) -> String {
    let n = n.min(std::mem::size_of::<T>() / 4);
    // SAFETY: reads the plain-data value's first n u32 words.
    let w = unsafe { std::slice::from_raw_parts(v as *const T as *const u32, n) };
    lanes(w)
}

fn words<T: Copy>(v: &T) -> String {
    let n = std::mem::size_of::<T>() / 4;
    // SAFETY: reads the plain-data value as n u32 words (its size is a multiple of 4).
    let w = unsafe { std::slice::from_raw_parts(v as *const T as *const u32, n) };
    lanes(w)
}

fn api_array(cx: &mut Cx) -> Result<(), String> {
    cx.primary()?;
    let descs = [
        ("good", ArrayDesc { width: 4, height: 3, format: FLOAT, num_channels: 1 }),
        ("1d", ArrayDesc { width: 7, height: 0, format: U8, num_channels: 4 }),
        ("w0", ArrayDesc { width: 0, height: 3, format: FLOAT, num_channels: 1 }),
        ("fmt7", ArrayDesc { width: 4, height: 3, format: 7, num_channels: 1 }),
        ("ch3", ArrayDesc { width: 4, height: 3, format: FLOAT, num_channels: 3 }),
        ("ch0", ArrayDesc { width: 4, height: 3, format: FLOAT, num_channels: 0 }),
        ("ch8", ArrayDesc { width: 4, height: 3, format: U8, num_channels: 8 }),
        ("wide", ArrayDesc { width: 1 << 20, height: 2, format: U8, num_channels: 1 }),
        ("wide1d", ArrayDesc { width: 1 << 20, height: 0, format: U8, num_channels: 1 }),
        ("half2", ArrayDesc { width: 5, height: 5, format: HALF, num_channels: 2 }),
    ];
    for (name, d) in descs {
        let mut a: P = null_mut();
        let r = rec!(cx, cuArrayCreate_v2(&mut a, &d));
        if r == 0 {
            let mut back = ArrayDesc::default();
            rec!(cx, cuArrayGetDescriptor_v2(&mut back, a));
            let mut back3 = Array3DDesc::default();
            rec!(cx, cuArray3DGetDescriptor_v2(&mut back3, a));
            cx.sub(name, format!("{} / {}", words(&back), words_n(&back3, 9)));
            rec!(cx, cuArrayDestroy(a));
        }
    }
    Ok(())
}

/// Null and stale arguments of the array calls, one process each (a driver may crash).
fn api_array_null(cx: &mut Cx, which: u32) -> Result<(), String> {
    cx.primary()?;
    let good = ArrayDesc { width: 4, height: 3, format: FLOAT, num_channels: 1 };
    let mut a: P = null_mut();
    match which {
        0 => {
            rec!(cx, cuArrayCreate_v2(null_mut(), &good));
        }
        1 => {
            rec!(cx, cuArrayCreate_v2(&mut a, std::ptr::null()));
        }
        2 => {
            rec!(cx, cuArrayDestroy(null_mut()));
        }
        3 => {
            rec!(cx, cuArrayCreate_v2(&mut a, &good));
            rec!(cx, cuArrayGetDescriptor_v2(null_mut(), a));
        }
        _ => {
            rec!(cx, cuArrayCreate_v2(&mut a, &good));
            rec!(cx, cuArrayDestroy(a));
            rec!(cx, cuArrayDestroy(a));
        }
    }
    Ok(())
}

fn api_array3d(cx: &mut Cx) -> Result<(), String> {
    cx.primary()?;
    let descs: [(&str, [usize; 3], u32, u32, u32); 17] = [
        ("3d", [4, 3, 2], FLOAT, 1, 0),
        ("layered2d", [4, 3, 2], FLOAT, 1, LAYERED),
        ("layered1d", [4, 0, 3], FLOAT, 1, LAYERED),
        ("layered_d0", [4, 3, 0], FLOAT, 1, LAYERED),
        ("cube", [4, 4, 6], FLOAT, 1, CUBEMAP),
        ("cube_rect", [4, 3, 6], FLOAT, 1, CUBEMAP),
        ("cube_d5", [4, 4, 5], FLOAT, 1, CUBEMAP),
        ("cube_layered", [4, 4, 12], FLOAT, 1, CUBEMAP | LAYERED),
        ("cube_layered_d7", [4, 4, 7], FLOAT, 1, CUBEMAP | LAYERED),
        ("ldst", [4, 3, 0], U32, 1, LDST),
        ("gather", [4, 3, 0], U8, 4, GATHER),
        ("gather3d", [4, 3, 2], U8, 4, GATHER),
        ("depth_tex", [4, 3, 0], FLOAT, 1, 0x10),
        ("flag_100", [4, 3, 0], FLOAT, 1, 0x100),
        ("h0d2", [4, 0, 2], FLOAT, 1, 0),
        ("deep", [4, 4, 1 << 14], U8, 1, 0),
        ("ch3", [4, 3, 2], FLOAT, 3, 0),
    ];
    for (name, [w, h, d], fmt, ch, flags) in descs {
        let desc = Array3DDesc { width: w, height: h, depth: d, format: fmt, num_channels: ch, flags };
        let mut a: P = null_mut();
        let r = rec!(cx, cuArray3DCreate_v2(&mut a, &desc));
        if r == 0 {
            let mut back = Array3DDesc::default();
            rec!(cx, cuArray3DGetDescriptor_v2(&mut back, a));
            let mut back2 = ArrayDesc::default();
            rec!(cx, cuArrayGetDescriptor_v2(&mut back2, a));
            cx.sub(name, format!("{} / {}", words_n(&back, 9), words(&back2)));
            rec!(cx, cuArrayDestroy(a));
        } else {
            cx.sub(name, "refused");
        }
    }
    Ok(())
}

fn api_mipmap(cx: &mut Cx) -> Result<(), String> {
    cx.primary()?;
    let desc = Array3DDesc { width: 8, height: 8, depth: 0, format: FLOAT, num_channels: 1, flags: 0 };
    let mut m: P = null_mut();
    for levels in [0u32, 5, 6] {
        let r = rec!(cx, cuMipmappedArrayCreate(&mut m, &desc, levels));
        if r == 0 {
            rec!(cx, cuMipmappedArrayDestroy(m));
        }
    }
    rec!(cx, cuMipmappedArrayCreate(&mut m, &desc, 4));
    for l in 0..5u32 {
        let mut lvl: P = null_mut();
        let r = rec!(cx, cuMipmappedArrayGetLevel(&mut lvl, m, l));
        if r == 0 {
            let mut back = Array3DDesc::default();
            rec!(cx, cuArray3DGetDescriptor_v2(&mut back, lvl));
            cx.sub(&format!("level{l}"), words_n(&back, 9));
        }
    }
    let mut lvl: P = null_mut();
    rec!(cx, cuMipmappedArrayGetLevel(&mut lvl, m, 1));
    rec!(cx, cuArrayDestroy(lvl));
    rec!(cx, cuMipmappedArrayDestroy(m));
    rec!(cx, cuMipmappedArrayDestroy(null_mut()));
    let d3 = Array3DDesc { width: 9, height: 5, depth: 3, format: U8, num_channels: 2, flags: 0 };
    let r = rec!(cx, cuMipmappedArrayCreate(&mut m, &d3, 4));
    if r == 0 {
        for l in 0..4u32 {
            let mut lvl: P = null_mut();
            if rec!(cx, cuMipmappedArrayGetLevel(&mut lvl, m, l)) == 0 {
                let mut back = Array3DDesc::default();
                rec!(cx, cuArray3DGetDescriptor_v2(&mut back, lvl));
                cx.sub(&format!("d3level{l}"), words_n(&back, 9));
            }
        }
        rec!(cx, cuMipmappedArrayDestroy(m));
    }
    Ok(())
}

/// Copies to and from arrays: round trips with offsets, ranges past the array's end
/// (`part` 0: 2D round trip, 1: 2D out of range, 2: 3D and layered, 3: 1D HtoA/AtoH, 4:
/// a copy from a destroyed array).
fn api_copy(cx: &mut Cx, part: u32) -> Result<(), String> {
    cx.primary()?;
    let a = cx.array3d(6, 4, 0, U16, 2, 0)?; // rows of 24 bytes
    let src: Vec<u8> = (0..24 * 4).map(|i| (i * 7 + 1) as u8).collect();
    let mut c = Memcpy2D::zeroed();
    c.src_memory_type = MT_HOST;
    c.src_host = src.as_ptr() as *const c_void;
    c.src_pitch = 24;
    c.dst_memory_type = MT_ARRAY;
    c.dst_array = a;
    c.width_in_bytes = 24;
    c.height = 4;
    rec!(cx, cuMemcpy2D_v2(&c));
    // Back with an offset: x 8 bytes, y 1, 12 x 2.
    let mut back = vec![0u8; 12 * 2];
    let mut b = Memcpy2D::zeroed();
    b.src_memory_type = MT_ARRAY;
    b.src_array = a;
    b.src_x_in_bytes = 8;
    b.src_y = 1;
    b.dst_memory_type = MT_HOST;
    b.dst_host = back.as_mut_ptr() as P;
    b.dst_pitch = 12;
    b.width_in_bytes = 12;
    b.height = 2;
    rec!(cx, cuMemcpy2D_v2(&b));
    let ok = (0..2).all(|r| back[r * 12..r * 12 + 12] == src[(r + 1) * 24 + 8..(r + 1) * 24 + 20]);
    cx.val("rt", if ok { "ok" } else { "bad" });
    if part == 4 {
        rec!(cx, cuArrayDestroy(a));
        rec!(cx, cuMemcpy2D_v2(&b));
        return Ok(());
    }
    if part == 1 {
        // Past the end: width, height, x offset; an unaligned x offset (not a whole element).
        for (w, h, x, y) in [(26usize, 1usize, 0usize, 0usize), (24, 5, 0, 0), (8, 1, 20, 0), (4, 1, 1, 0), (4, 1, 0, 4), (0, 1, 0, 0)] {
            let mut e = b;
            e.width_in_bytes = w;
            e.height = h;
            e.src_x_in_bytes = x;
            e.src_y = y;
            let mut big = vec![0u8; 64 * 8];
            e.dst_host = big.as_mut_ptr() as P;
            e.dst_pitch = 64;
            rec!(cx, cuMemcpy2D_v2(&e));
        }
        return Ok(());
    }
    if part == 2 {
        // A 3D copy into a layered array and back through the 3D path; z past the end.
        let l = cx.array3d(3, 2, 4, U8, 4, LAYERED)?;
        let src3: Vec<u8> = (0..12 * 2 * 4).map(|i| (i * 13 + 5) as u8).collect();
        let mut c3 = Memcpy3D::zeroed();
        c3.src_memory_type = MT_HOST;
        c3.src_host = src3.as_ptr() as *const c_void;
        c3.src_pitch = 12;
        c3.src_height = 2;
        c3.dst_memory_type = MT_ARRAY;
        c3.dst_array = l;
        c3.width_in_bytes = 12;
        c3.height = 2;
        c3.depth = 4;
        rec!(cx, cuMemcpy3D_v2(&c3));
        let mut back3 = vec![0u8; 8 * 2];
        let mut d3 = Memcpy3D::zeroed();
        d3.src_memory_type = MT_ARRAY;
        d3.src_array = l;
        d3.src_x_in_bytes = 4;
        d3.src_z = 2;
        d3.dst_memory_type = MT_HOST;
        d3.dst_host = back3.as_mut_ptr() as P;
        d3.dst_pitch = 8;
        d3.dst_height = 1;
        d3.width_in_bytes = 8;
        d3.height = 1;
        d3.depth = 2;
        rec!(cx, cuMemcpy3D_v2(&d3));
        let ok3 = (0..2).all(|z| back3[z * 8..z * 8 + 8] == src3[(z + 2) * 24 + 4..(z + 2) * 24 + 12]);
        cx.val("rt3", if ok3 { "ok" } else { "bad" });
        let mut e3 = d3;
        e3.depth = 3;
        let mut big = vec![0u8; 8 * 4];
        e3.dst_host = big.as_mut_ptr() as P;
        rec!(cx, cuMemcpy3D_v2(&e3));
        e3.depth = 1;
        e3.src_lod = 1;
        rec!(cx, cuMemcpy3D_v2(&e3));
        // Async 3D on the NULL stream.
        rec!(cx, cuMemcpy3DAsync_v2(&d3, null_mut()));
        rec!(cx, cuCtxSynchronize());
        return Ok(());
    }
    if part != 3 {
        return Ok(());
    }
    let one = cx.array3d(16, 0, 0, U8, 1, 0)?;
    let bytes: Vec<u8> = (0..16).collect();
    rec!(cx, cuMemcpyHtoA_v2(one, 4, bytes.as_ptr() as *const c_void, 8));
    let mut got = [0u8; 4];
    rec!(cx, cuMemcpyAtoH_v2(got.as_mut_ptr() as *mut c_void, one, 6, 4));
    cx.val("atoh", format!("{:02x}{:02x}{:02x}{:02x}", got[0], got[1], got[2], got[3]));
    rec!(cx, cuMemcpyHtoA_v2(one, 12, bytes.as_ptr() as *const c_void, 8));
    Ok(())
}

/// The device-memory and per-thread-stream forms of the array copies: a round trip
/// host -> array -> device -> array -> host through each, checked byte for byte.
fn api_copy_variants(cx: &mut Cx) -> Result<(), String> {
    cx.primary()?;
    let a = cx.array3d(32, 0, 0, U8, 1, 0)?;
    let b = cx.array3d(32, 0, 0, U8, 1, 0)?;
    let d = cx.alloc(64)?;
    let src: Vec<u8> = (0..32).map(|i| (i * 9 + 3) as u8).collect();
    rec!(cx, cuMemcpyHtoA_v2_ptds(a, 0, src.as_ptr() as *const c_void, 32));
    rec!(cx, cuMemcpyAtoD_v2(d, a, 0, 16));
    rec!(cx, cuMemcpyAtoD_v2_ptds(d + 16, a, 16, 16));
    rec!(cx, cuMemcpyDtoA_v2(b, 0, d, 16));
    rec!(cx, cuMemcpyDtoA_v2_ptds(b, 16, d + 16, 16));
    let mut back = vec![0u8; 32];
    rec!(cx, cuMemcpyAtoH_v2_ptds(back.as_mut_ptr() as *mut c_void, b, 0, 32));
    cx.val("rt", if back == src { "ok" } else { "bad" });
    let mut c = Memcpy3D::zeroed();
    c.src_memory_type = MT_ARRAY;
    c.src_array = b;
    c.dst_memory_type = MT_ARRAY;
    c.dst_array = a;
    c.width_in_bytes = 32;
    c.height = 1;
    c.depth = 1;
    rec!(cx, cuMemcpy3D_v2_ptds(&c));
    rec!(cx, cuMemcpy3DAsync_v2_ptsz(&c, null_mut()));
    rec!(cx, cuCtxSynchronize());
    // Past the end: 8 bytes at offset 28 of 32.
    rec!(cx, cuMemcpyAtoD_v2(d, a, 28, 8));
    rec!(cx, cuMemcpyDtoA_v2(a, 28, d, 8));
    Ok(())
}

fn api_texobj(cx: &mut Cx) -> Result<(), String> {
    cx.primary()?;
    let a = cx.array3d(4, 3, 0, U8, 4, 0)?;
    let good = tdesc([CLAMP; 3], LINEAR, NORMALIZED);
    let mut t = 0u64;
    // Good objects over each resource kind; descriptors read back.
    let r = rec!(cx, cuTexObjectCreate(&mut t, &res_array(a), &good, std::ptr::null()));
    if r == 0 {
        let mut rd = ResDesc::default();
        rec!(cx, cuTexObjectGetResourceDesc(&mut rd, t));
        cx.val("res_same", (rd.res_type == RES_ARRAY && rd.res[0] == a as u64) as u32);
        let mut td = TexDesc::default();
        rec!(cx, cuTexObjectGetTextureDesc(&mut td, t));
        cx.sub("texdesc", words(&td));
        let mut vd = ViewDesc::default();
        rec!(cx, cuTexObjectGetResourceViewDesc(&mut vd, t));
        cx.sub("viewdesc", words(&vd));
        rec!(cx, cuTexObjectDestroy(t));
    }
    let lin = cx.alloc(4096)?;
    let linear = |ptr: u64, fmt: u32, ch: u32, size: u64| {
        let mut r = ResDesc { res_type: RES_LINEAR, ..Default::default() };
        r.res[0] = ptr;
        r.res[1] = fmt as u64 | ((ch as u64) << 32);
        r.res[2] = size;
        r
    };
    let pitch2d = |ptr: u64, fmt: u32, ch: u32, w: u64, h: u64, pitch: u64| {
        let mut r = ResDesc { res_type: RES_PITCH2D, ..Default::default() };
        r.res[0] = ptr;
        r.res[1] = fmt as u64 | ((ch as u64) << 32);
        r.res[2] = w;
        r.res[3] = h;
        r.res[4] = pitch;
        r
    };
    let point = tdesc([CLAMP; 3], POINT, 0);
    let int_point = tdesc([CLAMP; 3], POINT, READ_AS_INTEGER);
    let int_linear = tdesc([CLAMP; 3], LINEAR, READ_AS_INTEGER);
    let mut bad_addr = point;
    bad_addr.address_mode[0] = 4;
    let mut bad_filter = point;
    bad_filter.filter_mode = 2;
    let mut aniso = good;
    aniso.max_anisotropy = 20;
    let srgb = tdesc([CLAMP; 3], LINEAR, SRGB);
    let f32arr = cx.array3d(4, 3, 0, FLOAT, 1, 0)?;
    let s32arr = cx.array3d(4, 3, 0, S32, 1, 0)?;
    let u32arr = cx.array3d(4, 3, 0, U32, 1, 0)?;
    let mut mres = ResDesc { res_type: RES_MIPMAP, ..Default::default() };
    let mut m: P = null_mut();
    let md = Array3DDesc { width: 8, height: 8, depth: 0, format: FLOAT, num_channels: 1, flags: 0 };
    setup!(cx, cuMipmappedArrayCreate(&mut m, &md, 4));
    mres.res[0] = m as u64;
    let cases: Vec<(&str, ResDesc, TexDesc)> = vec![
        ("linear", linear(lin, FLOAT, 1, 4096), point),
        ("linear_u8x4_lin", linear(lin, U8, 4, 4096), good),
        ("linear_off256", linear(lin + 256, FLOAT, 1, 1024), point),
        ("linear_off4", linear(lin + 4, FLOAT, 1, 1024), point),
        ("linear_off16", linear(lin + 16, FLOAT, 1, 1024), point),
        ("linear_size0", linear(lin, FLOAT, 1, 0), point),
        ("linear_size6", linear(lin, FLOAT, 1, 6), point),
        ("linear_huge", linear(lin, FLOAT, 1, 1 << 40), point),
        ("linear_fmt7", linear(lin, 7, 1, 4096), point),
        ("linear_ch3", linear(lin, FLOAT, 3, 4096), point),
        ("linear_null", linear(0, FLOAT, 1, 4096), point),
        ("linear_host", linear(0x1000, FLOAT, 1, 4096), point),
        ("pitch", pitch2d(lin, U8, 1, 5, 3, 64), good),
        ("pitch_p16", pitch2d(lin, U8, 1, 5, 3, 16), good),
        ("pitch_p40", pitch2d(lin, U8, 1, 5, 3, 40), good),
        ("pitch_w_gt_p", pitch2d(lin, FLOAT, 1, 20, 3, 64), good),
        ("pitch_off32", pitch2d(lin + 32, U8, 1, 5, 3, 64), good),
        ("pitch_h0", pitch2d(lin, U8, 1, 5, 0, 64), good),
        ("array_null", res_array(null_mut()), good),
        ("restype4", ResDesc { res_type: 4, ..res_array(a) }, good),
        ("int_point", res_array(a), int_point),
        ("int_linear", res_array(a), int_linear),
        ("bad_addr", res_array(a), bad_addr),
        ("bad_filter", res_array(a), bad_filter),
        ("aniso20", res_array(a), aniso),
        ("srgb_u8", res_array(a), srgb),
        ("srgb_f32", res_array(f32arr), srgb),
        ("f32_linear", res_array(f32arr), good),
        ("f32_int", res_array(f32arr), int_point),
        ("s32_linear", res_array(s32arr), good),
        ("s32_point", res_array(s32arr), point),
        ("u32_linear_int", res_array(u32arr), int_linear),
        ("mipmap", mres, good),
        ("res_flags1", ResDesc { flags: 1, ..res_array(a) }, good),
    ];
    for (name, res, td) in cases {
        let mut t = 0u64;
        let r = call!(cx, cuTexObjectCreate(&mut t, &res, &td, std::ptr::null()));
        cx.val(name, r);
        if r == 0 {
            let _ = call!(cx, cuTexObjectDestroy(t));
        }
    }
    rec!(cx, cuTexObjectCreate(null_mut(), &res_array(a), &good, std::ptr::null()));
    rec!(cx, cuTexObjectCreate(&mut t, std::ptr::null(), &good, std::ptr::null()));
    rec!(cx, cuTexObjectCreate(&mut t, &res_array(a), std::ptr::null(), std::ptr::null()));
    // A resource view on an array (same format), and one on linear memory.
    let view = ViewDesc { format: 0x0a, width: 4, height: 3, depth: 0, ..Default::default() };
    let r = rec!(cx, cuTexObjectCreate(&mut t, &res_array(a), &good, &view));
    if r == 0 {
        let mut vd = ViewDesc::default();
        rec!(cx, cuTexObjectGetResourceViewDesc(&mut vd, t));
        cx.sub("view", words(&vd));
        rec!(cx, cuTexObjectDestroy(t));
    }
    rec!(cx, cuTexObjectCreate(&mut t, &linear(lin, FLOAT, 1, 4096), &point, &view));
    // Destroy twice, and calls on a destroyed object and on 0.
    rec!(cx, cuTexObjectCreate(&mut t, &res_array(a), &good, std::ptr::null()));
    rec!(cx, cuTexObjectDestroy(t));
    rec!(cx, cuTexObjectDestroy(t));
    let mut rd = ResDesc::default();
    rec!(cx, cuTexObjectGetResourceDesc(&mut rd, 0));
    rec!(cx, cuTexObjectDestroy(0));
    rec!(cx, cuTexObjectGetResourceDesc(null_mut(), t));
    // The array goes while an object uses it.
    rec!(cx, cuTexObjectCreate(&mut t, &res_array(a), &good, std::ptr::null()));
    rec!(cx, cuArrayDestroy(a));
    rec!(cx, cuTexObjectDestroy(t));
    Ok(())
}

fn api_surfobj(cx: &mut Cx, which: u32) -> Result<(), String> {
    cx.primary()?;
    if which > 0 {
        return api_surfobj_bad(cx, which);
    }
    let a = cx.array3d(4, 3, 0, U32, 1, LDST)?;
    let plain = cx.array3d(4, 3, 0, U32, 1, 0)?;
    let mut s = 0u64;
    rec!(cx, cuSurfObjectCreate(&mut s, &res_array(a)));
    let mut rd = ResDesc::default();
    rec!(cx, cuSurfObjectGetResourceDesc(&mut rd, s));
    cx.val("res_same", (rd.res_type == RES_ARRAY && rd.res[0] == a as u64) as u32);
    rec!(cx, cuSurfObjectDestroy(s));
    let _ = plain;
    Ok(())
}

/// One misuse of cuSurfObjectCreate/Destroy per process.
fn api_surfobj_bad(cx: &mut Cx, which: u32) -> Result<(), String> {
    let a = cx.array3d(4, 3, 0, U32, 1, LDST)?;
    let plain = cx.array3d(4, 3, 0, U32, 1, 0)?;
    let mut s = 0u64;
    match which {
        1 => {
            rec!(cx, cuSurfObjectCreate(&mut s, &res_array(a)));
            rec!(cx, cuSurfObjectDestroy(s));
            rec!(cx, cuSurfObjectDestroy(s));
        }
        2 => {
            rec!(cx, cuSurfObjectCreate(&mut s, &res_array(plain)));
        }
        3 => {
            let lin = cx.alloc(4096)?;
            let mut r = ResDesc { res_type: RES_LINEAR, ..Default::default() };
            r.res[0] = lin;
            r.res[1] = U32 as u64 | (1u64 << 32);
            r.res[2] = 4096;
            rec!(cx, cuSurfObjectCreate(&mut s, &r));
        }
        4 => {
            rec!(cx, cuSurfObjectCreate(null_mut(), &res_array(a)));
        }
        5 => {
            rec!(cx, cuSurfObjectCreate(&mut s, std::ptr::null()));
        }
        6 => {
            rec!(cx, cuSurfObjectCreate(&mut s, &res_array(null_mut())));
        }
        _ => {
            rec!(cx, cuSurfObjectDestroy(0));
        }
    }
    Ok(())
}

/// A 4-byte surface read at byte x 2 (zero mode): what the launch answers.
fn surf_misaligned(cx: &mut Cx) -> Result<(), String> {
    cx.primary()?;
    let a = surf_array(cx, 1)?;
    let s = surf_obj(cx, a)?;
    let dq = cx.upload(&[[2i32, 0, 0, 0]])?;
    let out = cx.sentinel(1)?;
    let m = cx.module()?;
    let f = cx.function(m, "surf_probe")?;
    let (mut s, mut op, mut mode, mut dq, mut out_p, mut n32) = (s, 1u32, 2u32, dq, out, 1u32);
    let mut params = [pp(&mut s), pp(&mut op), pp(&mut mode), pp(&mut dq), pp(&mut out_p), pp(&mut n32)];
    cx.launch(f, [1, 1, 1], [1, 1, 1], 0, &mut params);
    rec!(cx, cuCtxSynchronize());
    Ok(())
}

/// Where a normalized coordinate changes texel: textures of 3, 5 and 4096 texels (each
/// texel's value its index), point sampled at k/n and its neighbours up to 40 ulps away.
fn s_norm_precision(cx: &mut Cx) -> Result<(), String> {
    cx.primary()?;
    let mut all = Vec::new();
    for w in [3usize, 5, 4096] {
        let a = cx.array3d(w, 0, 0, FLOAT, 1, 0)?;
        let data: Vec<u8> = (0..w).flat_map(|i| (i as f32).to_le_bytes()).collect();
        cx.fill(a, &data, w * 4, 1, 1)?;
        let t = cx.tex(&res_array(a), &tdesc([CLAMP; 3], POINT, NORMALIZED))?;
        let mut q = Vec::new();
        for k in [1usize, 2, 3, 4, 1000, 2047, 4095] {
            if k >= w {
                continue;
            }
            let c = k as f32 / w as f32;
            for d in -40i32..=40 {
                q.push([f32::from_bits((c.to_bits() as i32 + d) as u32), 0.0, 0.0, 0.0]);
            }
        }
        all.extend(cx.probe(t, TP_1D, &q, None)?);
    }
    cx.components(&all);
    Ok(())
}

/// Out-of-range access in trap mode: what the launch answers.
fn surf_trap(cx: &mut Cx, write: bool) -> Result<(), String> {
    cx.primary()?;
    let a = surf_array(cx, 1)?;
    let s = surf_obj(cx, a)?;
    let q = [[16i32, 0, 0, 0]];
    let dq = cx.upload(&q)?;
    let out = cx.sentinel(1)?;
    let m = cx.module()?;
    let (mut s, mut op, mut mode, mut dq, mut out_p, mut n32) = (s, 1u32, 0u32, dq, out, 1u32);
    if write {
        let f = cx.function(m, "surf_write_probe")?;
        let mut base = 0u32;
        let mut params = [pp(&mut s), pp(&mut op), pp(&mut mode), pp(&mut dq), pp(&mut n32), pp(&mut base)];
        cx.launch(f, [1, 1, 1], [1, 1, 1], 0, &mut params);
    } else {
        let f = cx.function(m, "surf_probe")?;
        let mut params = [pp(&mut s), pp(&mut op), pp(&mut mode), pp(&mut dq), pp(&mut out_p), pp(&mut n32)];
        cx.launch(f, [1, 1, 1], [1, 1, 1], 0, &mut params);
    }
    rec!(cx, cuCtxSynchronize());
    rec!(cx, cuCtxSynchronize());
    Ok(())
}

pub fn cases() -> Vec<Case> {
    let mut v: Vec<Case> = Vec::new();
    let mut add = |name: String, run: Run| v.push(Case { name, run });
    add("tex_api_array".into(), Box::new(api_array));
    for (k, n) in ["null_out", "null_desc", "destroy_null", "get_null_out", "destroy_twice"].iter().enumerate() {
        add(format!("tex_api_array_{n}"), Box::new(move |cx| api_array_null(cx, k as u32)));
    }
    add("tex_api_array3d".into(), Box::new(api_array3d));
    add("tex_api_mipmap".into(), Box::new(api_mipmap));
    for (k, n) in ["2d", "2d_range", "3d", "1d", "destroyed"].iter().enumerate() {
        add(format!("tex_api_copy_{n}"), Box::new(move |cx| api_copy(cx, k as u32)));
    }
    add("tex_api_texobj".into(), Box::new(api_texobj));
    add("tex_api_copy_variants".into(), Box::new(api_copy_variants));
    for (k, n) in ["good", "destroy_twice", "no_ldst", "linear", "null_out", "null_desc", "null_array", "destroy_0"].iter().enumerate() {
        add(format!("tex_api_surfobj_{n}"), Box::new(move |cx| api_surfobj(cx, k as u32)));
    }
    add("surf_misaligned".into(), Box::new(surf_misaligned));
    add("texs_norm_precision".into(), Box::new(s_norm_precision));
    for (an, am) in ADDR {
        for (fname, f) in [("point", POINT), ("linear", LINEAR)] {
            for norm in [false, true] {
                let k = if norm { "norm" } else { "unnorm" };
                add(format!("texs_1d_{an}_{fname}_{k}"), Box::new(move |cx| s_1d(cx, am, f, norm)));
            }
        }
        add(format!("texs_2d_{an}_linear"), Box::new(move |cx| s_2d(cx, am, am, LINEAR, true)));
        add(format!("texs_1d_int_{an}"), Box::new(move |cx| s_1d_int(cx, am)));
    }
    add("texs_2d_clamp_point".into(), Box::new(|cx| s_2d(cx, CLAMP, CLAMP, POINT, true)));
    add("texs_2d_wrap_mirror_point".into(), Box::new(|cx| s_2d(cx, WRAP, MIRROR, POINT, true)));
    add("texs_2d_border_wrap_linear".into(), Box::new(|cx| s_2d(cx, BORDER, WRAP, LINEAR, true)));
    add("texs_2d_wrap_linear_unnorm".into(), Box::new(|cx| s_2d(cx, WRAP, WRAP, LINEAR, false)));
    add("texs_weights_f32".into(), Box::new(|cx| s_weights(cx, false, FLOAT)));
    add("texs_weights_f32_norm".into(), Box::new(|cx| s_weights(cx, true, FLOAT)));
    add("texs_weights_u8".into(), Box::new(|cx| s_weights(cx, false, U8)));
    add("texs_weights_u16".into(), Box::new(|cx| s_weights(cx, false, U16)));
    add("texs_arith_f32".into(), Box::new(s_arith));
    add("texs_2d_fine_f32".into(), Box::new(|cx| s_2d_fine(cx, FLOAT)));
    add("texs_2d_fine_u8".into(), Box::new(|cx| s_2d_fine(cx, U8)));
    add("texs_2d_fine_u16".into(), Box::new(|cx| s_2d_fine(cx, U16)));
    add("texs_mip_fine".into(), Box::new(s_mip_fine));
    let fmts: [(&str, u32, u32, u32, u32, u32); 16] = [
        ("u8x4_norm_linear", U8, 4, 0, LINEAR, CLAMP),
        ("u8x4_norm_point", U8, 4, 0, POINT, CLAMP),
        ("u8x4_srgb_linear", U8, 4, SRGB, LINEAR, CLAMP),
        ("u8x4_elem_point", U8, 4, READ_AS_INTEGER, POINT, CLAMP),
        ("u8x4_norm_border", U8, 4, 0, LINEAR, BORDER),
        ("u8x4_elem_border", U8, 4, READ_AS_INTEGER, POINT, BORDER),
        ("s8x2_norm_linear", S8, 2, 0, LINEAR, CLAMP),
        ("s8x2_elem_point", S8, 2, READ_AS_INTEGER, POINT, CLAMP),
        ("u16_norm_linear", U16, 1, 0, LINEAR, CLAMP),
        ("s16x2_norm_linear", S16, 2, 0, LINEAR, CLAMP),
        ("u16x4_elem_point", U16, 4, READ_AS_INTEGER, POINT, CLAMP),
        ("half2_linear", HALF, 2, 0, LINEAR, CLAMP),
        ("half1_border", HALF, 1, 0, LINEAR, BORDER),
        ("s32_point", S32, 1, 0, POINT, CLAMP),
        ("u32x2_border", U32, 2, 0, POINT, BORDER),
        ("f32x4_border", FLOAT, 4, 0, LINEAR, BORDER),
    ];
    for (name, fmt, ch, flags, filter, addr) in fmts {
        add(format!("texs_fmt_{name}"), Box::new(move |cx| s_fmt(cx, fmt, ch, flags, filter, addr)));
    }
    add("texs_table_u8".into(), Box::new(|cx| s_table(cx, false, false)));
    add("texs_table_srgb".into(), Box::new(|cx| s_table(cx, true, false)));
    add("texs_table_s8".into(), Box::new(|cx| s_table(cx, false, true)));
    add("texs_table_u16".into(), Box::new(|cx| s_table16(cx, U16)));
    add("texs_table_s16".into(), Box::new(|cx| s_table16(cx, S16)));
    add("texs_table_half".into(), Box::new(|cx| s_table16(cx, HALF)));
    add("texs_3d_linear".into(), Box::new(|cx| s_3d(cx, LINEAR, CLAMP)));
    add("texs_3d_point_wrap".into(), Box::new(|cx| s_3d(cx, POINT, WRAP)));
    add("texs_layered_1d".into(), Box::new(|cx| s_layered(cx, false)));
    add("texs_layered_2d".into(), Box::new(|cx| s_layered(cx, true)));
    add("texs_cube_point".into(), Box::new(|cx| s_cube(cx, POINT, false)));
    add("texs_cube_linear".into(), Box::new(|cx| s_cube(cx, LINEAR, false)));
    add("texs_cube_layered".into(), Box::new(|cx| s_cube(cx, POINT, true)));
    add("texs_mip_lod_point".into(), Box::new(|cx| s_mip(cx, POINT, POINT, 0.0, (0.0, 10.0), false)));
    add("texs_mip_lod_linear".into(), Box::new(|cx| s_mip(cx, LINEAR, LINEAR, 0.0, (0.0, 10.0), false)));
    add("texs_mip_lod_bias_clamp".into(), Box::new(|cx| s_mip(cx, LINEAR, POINT, 0.5, (0.5, 2.25), false)));
    add("texs_mip_grad_point".into(), Box::new(|cx| s_mip(cx, POINT, POINT, 0.0, (0.0, 10.0), true)));
    add("texs_mip_grad_linear".into(), Box::new(|cx| s_mip(cx, LINEAR, LINEAR, 0.0, (0.0, 10.0), true)));
    add("texs_gather_f32".into(), Box::new(|cx| s_gather(cx, FLOAT, CLAMP, false)));
    add("texs_gather_f32_wrap".into(), Box::new(|cx| s_gather(cx, FLOAT, WRAP, true)));
    add("texs_gather_u8_elem".into(), Box::new(|cx| s_gather(cx, U8, BORDER, false)));
    add("texs_fetch_f32".into(), Box::new(|cx| s_fetch(cx, FLOAT, 1, 0)));
    add("texs_fetch_u8x4_norm".into(), Box::new(|cx| s_fetch(cx, U8, 4, 0)));
    add("texs_fetch_u8x4_elem".into(), Box::new(|cx| s_fetch(cx, U8, 4, READ_AS_INTEGER)));
    add("texs_fetch_s16x2_norm".into(), Box::new(|cx| s_fetch(cx, S16, 2, 0)));
    add("texs_pitch_linear".into(), Box::new(|cx| s_pitch(cx, LINEAR)));
    add("texs_pitch_point".into(), Box::new(|cx| s_pitch(cx, POINT)));
    for (mn, mode) in [("clamp", 1u32), ("zero", 2u32)] {
        for (on, op) in [("1d", 0u32), ("2d", 1), ("3d", 2), ("layered", 3)] {
            add(format!("surf_read_{on}_{mn}"), Box::new(move |cx| surf_read(cx, op, mode)));
            add(format!("surf_write_{on}_{mn}"), Box::new(move |cx| surf_write(cx, op, mode)));
        }
    }
    add("surf_trap_read".into(), Box::new(|cx| surf_trap(cx, false)));
    add("surf_trap_write".into(), Box::new(|cx| surf_trap(cx, true)));
    add("surf_sized_u8".into(), Box::new(|cx| surf_sized(cx, false)));
    add("surf_sized_f32x4".into(), Box::new(|cx| surf_sized(cx, true)));
    texfit::cases(&mut add);
    texfeat::cases(&mut add);
    v
}
