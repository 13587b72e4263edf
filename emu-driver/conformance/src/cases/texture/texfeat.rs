//! PTX-only texture features the H200 accepts and PTX mode had refused (issue 19):
//! `tex` with `.f16`/`.f16x2` results (`ptx_texh_*`), the depth-compare operand of `tex`
//! and `tld4` (`ptx_texdc_*`), the multi-sample geometries `.2dms`/`.a2dms` on the
//! resources CUDA can create (`ptx_texms_*`), and when a kernel whose `txq` the driver
//! cannot compile fails (`ptx_txq_lazy`). Each probe is one small PTX module per
//! instruction form, loaded as text, so that a form the driver refuses records its code
//! without hiding the others.

use super::kit::*;
use super::texfit::{f32_bytes, float_pairs, pair_queries, random_coords, u16_bytes, Rng};
use crate::api::P;
use crate::cases::devres::lanes;
use crate::cx::{pp, Cx, Run};
use std::ffi::{c_void, CString};
use std::ptr::null_mut;

/// The probe kernel `p(tex, q, out, n)`: thread i loads q[i] as four words (%r1..%r4,
/// the same bits as floats %f1..%f4), runs `instr` (which leaves four words in
/// %r10..%r13) and stores them at out[i].
fn probe_ptx(instr: &str) -> String {
    format!(
        ".version 7.8\n.target sm_90\n.address_size 64\n\n\
         .visible .entry p(.param .u64 tex, .param .u64 q, .param .u64 out, .param .u32 n)\n{{\n\
         \t.reg .pred %p<4>;\n\t.reg .b32 %r<32>;\n\t.reg .f32 %f<16>;\n\t.reg .b16 %h<8>;\n\t.reg .b64 %rd<8>;\n\
         \tld.param.u64 %rd1, [tex];\n\tld.param.u64 %rd2, [q];\n\tld.param.u64 %rd3, [out];\n\tld.param.u32 %r30, [n];\n\
         \tmov.u32 %r25, %ctaid.x;\n\tmov.u32 %r26, %ntid.x;\n\tmov.u32 %r27, %tid.x;\n\tmad.lo.s32 %r28, %r25, %r26, %r27;\n\
         \tsetp.ge.u32 %p1, %r28, %r30;\n\t@%p1 bra $L_done;\n\
         \tcvta.to.global.u64 %rd2, %rd2;\n\tcvta.to.global.u64 %rd3, %rd3;\n\
         \tmul.wide.u32 %rd5, %r28, 16;\n\tadd.s64 %rd6, %rd2, %rd5;\n\tadd.s64 %rd7, %rd3, %rd5;\n\
         \tld.global.v4.b32 {{%r1, %r2, %r3, %r4}}, [%rd6];\n\
         \tmov.b32 %f1, %r1;\n\tmov.b32 %f2, %r2;\n\tmov.b32 %f3, %r3;\n\tmov.b32 %f4, %r4;\n\
         \tmov.b32 %r12, 0;\n\tmov.b32 %r13, 0;\n\tmov.b32 %r20, 0;\n\
         {instr}\
         \tst.global.v4.b32 [%rd7], {{%r10, %r11, %r12, %r13}};\n$L_done:\n\tret;\n}}\n"
    )
}

const F4: &str = "\tmov.b32 %r10, %f5;\n\tmov.b32 %r11, %f6;\n\tmov.b32 %r12, %f7;\n\tmov.b32 %r13, %f8;\n";
const H4: &str = "\tmov.b32 %r10, {%h1, %h2};\n\tmov.b32 %r11, {%h3, %h4};\n";

/// The instruction forms, by name: query words (x, y, compare, w) as floats for
/// float-coordinate forms; integer forms read x = q0, y = q1, layer = q2, sample = q3.
fn form(name: &str) -> String {
    let (i, tail) = match name {
        "f32" => ("tex.2d.v4.f32.f32 {%f5, %f6, %f7, %f8}, [%rd1, {%f1, %f2}];", F4),
        "f16" => ("tex.2d.v4.f16.f32 {%h1, %h2, %h3, %h4}, [%rd1, {%f1, %f2}];", H4),
        "f16x2" => ("tex.2d.v2.f16x2.f32 {%r10, %r11}, [%rd1, {%f1, %f2}];", ""),
        "f16i" => ("tex.2d.v4.f16.s32 {%h1, %h2, %h3, %h4}, [%rd1, {%r1, %r2}];", H4),
        "dc" => ("tex.2d.v4.f32.f32 {%f5, %f6, %f7, %f8}, [%rd1, {%f1, %f2}], %f3;", F4),
        "dco" => ("tex.2d.v4.f32.f32 {%f5, %f6, %f7, %f8}, [%rd1, {%f1, %f2}], {%r20, %r20}, %f3;", F4),
        "dc4" => ("tld4.r.2d.v4.f32.f32 {%f5, %f6, %f7, %f8}, [%rd1, {%f1, %f2}], %f3;", F4),
        "dch" => ("tex.2d.v4.f16.f32 {%h1, %h2, %h3, %h4}, [%rd1, {%f1, %f2}], %f3;", H4),
        "ms" => ("tex.2dms.v4.f32.s32 {%f5, %f6, %f7, %f8}, [%rd1, {%r4, %r1, %r2, %r3}];", F4),
        "ams" => ("tex.a2dms.v4.f32.s32 {%f5, %f6, %f7, %f8}, [%rd1, {%r3, %r4, %r1, %r2}];", F4),
        "i2d" => ("tex.2d.v4.f32.s32 {%f5, %f6, %f7, %f8}, [%rd1, {%r1, %r2}];", F4),
        "ia2d" => ("tex.a2d.v4.f32.s32 {%f5, %f6, %f7, %f8}, [%rd1, {%r3, %r1, %r2, %r2}];", F4),
        "g4" => ("tld4.r.2d.v4.f32.f32 {%f5, %f6, %f7, %f8}, [%rd1, {%f1, %f2}];", F4),
        "dcl" => ("tex.level.2d.v4.f32.f32 {%f5, %f6, %f7, %f8}, [%rd1, {%f1, %f2}], %f4, %f3;", F4),
        "l2d" => ("tex.level.2d.v4.f32.f32 {%f5, %f6, %f7, %f8}, [%rd1, {%f1, %f2}], %f4;", F4),
        "dca" => ("tex.a2d.v4.f32.f32 {%f5, %f6, %f7, %f8}, [%rd1, {%r4, %f1, %f2, %f2}], %f3;", F4),
        "a2d" => ("tex.a2d.v4.f32.f32 {%f5, %f6, %f7, %f8}, [%rd1, {%r4, %f1, %f2, %f2}];", F4),
        "u32" => ("tex.2d.v4.u32.f32 {%r10, %r11, %r12, %r13}, [%rd1, {%f1, %f2}];", ""),
        _ => unreachable!("form {name}"),
    };
    format!("\t{i}\n{tail}")
}

/// Runs form `f` over queries `q` on texture `t`; records the module load's code and,
/// when it loaded, one sub-line per result word (`TAGf.w0` .. `TAGf.w3`).
fn run_form(cx: &mut Cx, t: u64, tag: &str, f: &str, q: &[[u32; 4]]) -> Result<(), String> {
    let m = match cx.ptx_module(&probe_ptx(&form(f))) {
        Ok(m) => m,
        Err(_) => return Ok(()),
    };
    let c = CString::new("p").unwrap();
    let mut func: P = null_mut();
    if rec!(cx, cuModuleGetFunction(&mut func, m, c.as_ptr())) != 0 {
        return Ok(());
    }
    let n = q.len();
    let dq = cx.upload(q)?;
    let out = cx.sentinel(n * 4)?;
    let (mut tp, mut dqp, mut outp, mut n32) = (t, dq, out, n as u32);
    let mut params = [pp(&mut tp), pp(&mut dqp), pp(&mut outp), pp(&mut n32)];
    cx.launch(func, [(n as u32).div_ceil(128).max(1), 1, 1], [128, 1, 1], 0, &mut params);
    if rec!(cx, cuCtxSynchronize()) != 0 {
        return Ok(());
    }
    let v: Vec<u32> = cx.download(out, n * 4)?;
    for k in 0..4 {
        let col: Vec<u32> = v.chunks(4).map(|c| c[k]).collect();
        cx.sub(&format!("{tag}{f}.w{k}"), lanes(&col));
    }
    Ok(())
}

fn fq(q: &[[f32; 4]]) -> Vec<[u32; 4]> {
    q.iter().map(|c| c.map(f32::to_bits)).collect()
}

/// Texel-centre queries of a w x h texture in row order (unnormalized; w = integer x, y).
fn centres(w: usize, h: usize) -> Vec<[u32; 4]> {
    (0..w * h).map(|k| [((k % w) as f32 + 0.5).to_bits(), ((k / w) as f32 + 0.5).to_bits(), 0, 0]).collect()
}

/// Integer-coordinate twins of `centres` (x, y as s32) for the `.s32` forms.
fn int_centres(w: usize, h: usize) -> Vec<[u32; 4]> {
    (0..w * h).map(|k| [(k % w) as u32, (k / w) as u32, 0, 0]).collect()
}

/// Float values that decide a conversion to half: every kind of tie and near-tie between
/// two halves (normal and subnormal), the overflow edge, infinities, NaNs (quiet,
/// signalling, payloads), signed zeros, values below half's smallest subnormal.
fn half_edge_values(r: &mut Rng) -> Vec<f32> {
    let mut v = Vec::new();
    let specials: [u32; 32] = [
        0x0000_0000,
        0x8000_0000,
        0x477f_e000,
        0x477f_efff,
        0x477f_f000,
        0x477f_f001,
        0x4780_0000,
        0x501502f9,
        0x7f80_0000,
        0xff80_0000,
        0xc77f_f000,
        0xc77f_efff,
        0x7fc0_0000,
        0x7fc0_0001,
        0x7f80_0001,
        0xffc1_2345,
        0x7fbf_ffff,
        0x3880_0000,
        0x3380_0000,
        0x3300_0000,
        0x3300_0001,
        0x32ff_ffff,
        0x3340_0000,
        0x3280_0000,
        0xb300_0000,
        0xb300_0001,
        0x0000_0001,
        0x0d9b_ffe0,
        0x3f80_0000,
        0x3f80_1000,
        0x3f80_3000,
        0x3f80_2fff,
    ];
    v.extend(specials.iter().map(|&b| f32::from_bits(b)));
    // 224 random halves h (every exponent, both signs): the midpoint to the next half,
    // one f32 ulp either side of it, and a random value between.
    for k in 0..56u32 {
        let e = k % 31; // 0: subnormal halves
        let h = ((r.next() & 1) << 15) | (e << 10) | (r.next() & 0x3ff);
        let lo = half_to_f32(h as u16) as f64;
        let hi = half_to_f32((h + 1) as u16) as f64;
        let mid = ((lo + hi) / 2.0) as f32;
        v.push(mid);
        v.push(f32::from_bits(mid.to_bits() + 1));
        v.push(f32::from_bits(mid.to_bits() - 1));
        v.push((lo + (hi - lo) * (r.below(1000) as f64 / 1000.0)) as f32);
    }
    v
}

/// A half's value (for building the queries; the driver side is what is measured).
fn half_to_f32(h: u16) -> f32 {
    let s = if h & 0x8000 != 0 { -1.0f32 } else { 1.0 };
    let e = ((h >> 10) & 0x1f) as i32;
    let m = (h & 0x3ff) as f32;
    match e {
        0 => s * m * 2f32.powi(-24),
        31 if m == 0.0 => s * f32::INFINITY,
        31 => f32::NAN,
        _ => s * (1.0 + m / 1024.0) * 2f32.powi(e - 15),
    }
}

/// `.f16` results of point sampling: a 16x16 float4 texture of `half_edge_values`
/// (each channel its own value), every texel centre, with the f32 reference, `.f16`,
/// `.f16x2` and `.f16` with integer coordinates.
fn texh_point(cx: &mut Cx) -> Result<(), String> {
    cx.primary()?;
    let mut r = Rng::new(90);
    let mut vals = half_edge_values(&mut r);
    let n = 16 * 16 * 4;
    let base = vals.clone();
    while vals.len() < n {
        let k = vals.len();
        vals.push(if k.is_multiple_of(2) { base[(k * 7) % base.len()] } else { r.float(-26, 17) });
    }
    let a = cx.array3d(16, 16, 0, FLOAT, 4, 0)?;
    cx.fill(a, &f32_bytes(&vals), 16 * 16, 16, 1)?;
    let t = cx.tex(&res_array(a), &tdesc([CLAMP; 3], POINT, 0))?;
    for f in ["f32", "f16", "f16x2"] {
        run_form(cx, t, "", f, &centres(16, 16))?;
    }
    run_form(cx, t, "", "f16i", &int_centres(16, 16))
}

/// `.f16` results of linear filtering: float (texfit's pairs) and half pairs (1D rows),
/// 8192 queries between them, f32 reference and `.f16`.
fn texh_linear(cx: &mut Cx, half: bool) -> Result<(), String> {
    cx.primary()?;
    let mut r = Rng::new(91 + half as u64);
    let t = if half {
        let v: Vec<u16> = (0..256)
            .map(|k| match k {
                10 => 0x7bff,
                11 => 0x7bff,
                20 => 0x0001,
                21 => 0x8003,
                30 => 0x7d00,
                31 => 0xfe01,
                32 => 0x7c00,
                33 => 0x8000,
                _ => (((r.next() & 1) << 15) | ((1 + r.below(30)) << 10) | (r.next() & 0x3ff)) as u16,
            })
            .collect();
        let a = cx.array3d(256, 1, 0, HALF, 1, 0)?;
        cx.fill(a, &u16_bytes(&v), 512, 1, 1)?;
        // Point sampling of the same texels first (each value's conversion alone).
        let tp = cx.tex(&res_array(a), &tdesc([CLAMP; 3], POINT, 0))?;
        for f in ["f32", "f16"] {
            run_form(cx, tp, "point.", f, &centres(256, 1))?;
        }
        cx.tex(&res_array(a), &tdesc([CLAMP; 3], LINEAR, 0))?
    } else {
        let a = cx.array3d(256, 1, 0, FLOAT, 1, 0)?;
        cx.fill(a, &f32_bytes(&float_pairs(&mut r)), 1024, 1, 1)?;
        cx.tex(&res_array(a), &tdesc([CLAMP; 3], LINEAR, 0))?
    };
    let q: Vec<[f32; 4]> = pair_queries().into_iter().map(|c| [c[0], 0.5, 0.0, 0.0]).collect();
    for f in ["f32", "f16"] {
        run_form(cx, t, "", f, &fq(&q))?;
    }
    Ok(())
}

/// `.f16` results of normalized-integer textures (u8x4, u16x2, s8x2): every texel centre
/// of a random 16x16 texture (point) and 2048 random positions (linear), f32 and `.f16`;
/// and element-type reads of u8 (point) as `.f16`.
fn texh_norm(cx: &mut Cx, fmt: u32, ch: u32) -> Result<(), String> {
    cx.primary()?;
    let mut r = Rng::new(93 + fmt as u64);
    let bytes: Vec<u8> = (0..16 * 16 * elem_size(fmt, ch)).map(|k| if k < 256 && fmt != U16 { k as u8 } else { r.next() as u8 }).collect();
    let a = cx.array3d(16, 16, 0, fmt, ch, 0)?;
    cx.fill(a, &bytes, 16 * elem_size(fmt, ch), 16, 1)?;
    let tp = cx.tex(&res_array(a), &tdesc([CLAMP; 3], POINT, 0))?;
    let tl = cx.tex(&res_array(a), &tdesc([CLAMP; 3], LINEAR, 0))?;
    let q = fq(&random_coords(&mut r, 2048, 16, 16, 0));
    for f in ["f32", "f16"] {
        run_form(cx, tp, "point.", f, &centres(16, 16))?;
    }
    for f in ["f32", "f16x2"] {
        run_form(cx, tl, "linear.", f, &q)?;
    }
    if fmt == U8 {
        let ti = cx.tex(&res_array(a), &tdesc([CLAMP; 3], POINT, READ_AS_INTEGER))?;
        run_form(cx, ti, "int.", "f16", &centres(16, 16))?;
    }
    Ok(())
}

/// Depth compare at texel centres (point) of an 8x8 float4 texture: channel r the
/// texel value (a set of values and specials), g/b/a fixed 0.5, 2, -1; each texel with
/// compare values just below, at and just above r, 0.5, NaN, -inf, +inf, 0; the plain
/// fetch for reference; tex with and without an offset, tld4, `.f16` results.
fn texdc_point(cx: &mut Cx) -> Result<(), String> {
    cx.primary()?;
    let mut r = Rng::new(95);
    let special = [0.0f32, 0.25, 0.5, 0.75, 1.0, -1.0, 2.0, f32::NAN, f32::INFINITY, f32::NEG_INFINITY, 1e-40, -0.0, 0.5, 0.5];
    let rv: Vec<f32> = (0..64).map(|k| if k < special.len() { special[k] } else { r.below(1024) as f32 / 512.0 - 0.5 }).collect();
    let texels: Vec<f32> = rv.iter().flat_map(|&v| [v, 0.5, 2.0, -1.0]).collect();
    let a = cx.array3d(8, 8, 0, FLOAT, 4, GATHER)?;
    cx.fill(a, &f32_bytes(&texels), 8 * 16, 8, 1)?;
    let t = cx.tex(&res_array(a), &tdesc([CLAMP; 3], POINT, 0))?;
    let mut q = Vec::new();
    for (k, &v) in rv.iter().enumerate() {
        let (x, y) = ((k % 8) as f32 + 0.5, (k / 8) as f32 + 0.5);
        let up = if v.is_finite() { next_up(v) } else { v };
        let down = if v.is_finite() { next_down(v) } else { v };
        for c in [down, v, up, 0.5, f32::NAN, f32::NEG_INFINITY, f32::INFINITY, 0.0] {
            q.push([x, y, c, 0.0]);
        }
    }
    let q = fq(&q);
    for f in ["f32", "dc", "dco", "dc4", "dch"] {
        run_form(cx, t, "", f, &q)?;
    }
    Ok(())
}

/// Depth compare with linear filtering: random float texels (8x8, one channel) and a
/// 16-bit unorm texture, 2048 random positions and compare values; tex and tld4.
fn texdc_linear(cx: &mut Cx, fmt: u32) -> Result<(), String> {
    cx.primary()?;
    let mut r = Rng::new(96 + fmt as u64);
    let a = cx.array3d(8, 8, 0, fmt, 1, GATHER)?;
    let bytes = if fmt == FLOAT {
        f32_bytes(&(0..64).map(|_| r.below(256) as f32 / 256.0).collect::<Vec<_>>())
    } else {
        u16_bytes(&(0..64).map(|_| r.next() as u16).collect::<Vec<_>>())
    };
    cx.fill(a, &bytes, 8 * elem_size(fmt, 1), 8, 1)?;
    let t = cx.tex(&res_array(a), &tdesc([CLAMP; 3], LINEAR, 0))?;
    let mut q = random_coords(&mut r, 2048, 8, 8, 0);
    for c in q.iter_mut() {
        c[2] = r.below(256) as f32 / 256.0 + 1.0 / 512.0;
    }
    let q = fq(&q);
    for f in ["f32", "dc", "dc4"] {
        run_form(cx, t, "", f, &q)?;
    }
    Ok(())
}

/// `.2dms` on a texture object over an ordinary 8x4 float4 array (texel (x, y): r =
/// 1000 + x + 16y, g = y, b = 7, a = 1) and `.a2dms` over a layered one (r adds 256 x
/// layer): samples 0..3, 7, -1; x -1..8, y -1..4; layers -1..3; the `.s32` 2d/a2d fetch
/// of the same positions for reference.
fn texms(cx: &mut Cx, layered: bool) -> Result<(), String> {
    cx.primary()?;
    let layers = if layered { 3 } else { 1 };
    let texels: Vec<f32> = (0..8 * 4 * layers)
        .flat_map(|k| {
            [1000.0 + (k % 32) as f32 % 8.0 + 16.0 * ((k % 32) / 8) as f32 + 256.0 * (k / 32) as f32, ((k % 32) / 8) as f32, 7.0, 1.0]
        })
        .collect();
    let a = cx.array3d(8, 4, if layered { layers } else { 0 }, FLOAT, 4, if layered { LAYERED } else { 0 })?;
    cx.fill(a, &f32_bytes(&texels), 8 * 16, 4, layers)?;
    let mut q = Vec::new();
    let ls: &[i32] = if layered { &[-1, 0, 1, 2, 3] } else { &[0] };
    for &l in ls {
        for s in [0i32, 1, 2, 3, 7, -1] {
            for y in -1..=4i32 {
                for x in -1..=8i32 {
                    q.push([x as u32, y as u32, l as u32, s as u32]);
                }
            }
        }
    }
    let forms: [&str; 2] = if layered { ["ams", "ia2d"] } else { ["ms", "i2d"] };
    for (tag, mode) in [("clamp.", CLAMP), ("border.", BORDER)] {
        let t = cx.tex(&res_array(a), &tdesc([mode; 3], POINT, 0))?;
        for f in forms {
            run_form(cx, t, tag, f, &q)?;
        }
    }
    if !layered {
        // The same texels as pitch-2D memory (rows 512 bytes apart).
        let d = cx.alloc(512 * 4 + 512)?;
        let base = d.div_ceil(512) * 512;
        for y in 0..4 {
            let row = f32_bytes(&texels[y * 32..y * 32 + 32]);
            setup!(cx, cuMemcpyHtoD_v2(base + y as u64 * 512, row.as_ptr() as *const c_void, row.len()));
        }
        let mut res = crate::api::ResDesc { res_type: RES_PITCH2D, ..Default::default() };
        res.res[0] = base;
        res.res[1] = (FLOAT as u64) | (4u64 << 32);
        res.res[2] = 8;
        res.res[3] = 4;
        res.res[4] = 512;
        let t = cx.tex(&res, &tdesc([CLAMP; 3], POINT, 0))?;
        for f in forms {
            run_form(cx, t, "pitch2d.", f, &q)?;
        }
    }
    Ok(())
}

/// A module of two kernels, one of which queries a texture's channel data type (the
/// H200's driver cannot compile it): when each call answers, under whichever module
/// loading the process runs with (CUDA_MODULE_LOADING).
fn txq_lazy(cx: &mut Cx) -> Result<(), String> {
    cx.primary()?;
    let text = ".version 7.8\n.target sm_90\n.address_size 64\n\n\
                .visible .entry ok(.param .u64 o)\n{\n\t.reg .b32 %r<2>;\n\t.reg .b64 %rd<2>;\n\tld.param.u64 %rd1, [o];\n\
                \tmov.b32 %r1, 7;\n\tst.global.u32 [%rd1], %r1;\n\tret;\n}\n\n\
                .visible .entry q(.param .u64 t, .param .u64 o)\n{\n\t.reg .b32 %r<2>;\n\t.reg .b64 %rd<3>;\n\
                \tld.param.u64 %rd1, [t];\n\tld.param.u64 %rd2, [o];\n\ttxq.channel_data_type.b32 %r1, [%rd1];\n\
                \tst.global.u32 [%rd2], %r1;\n\tret;\n}\n";
    // A refused load is the answer (its code is recorded).
    let Ok(m) = cx.ptx_module(text) else { return Ok(()) };
    let mut count = 0u32;
    rec!(cx, cuModuleGetFunctionCount(&mut count, m));
    cx.val("count", count);
    let out = cx.sentinel(1)?;
    let (ok, q) = (CString::new("ok").unwrap(), CString::new("q").unwrap());
    for round in 0..3 {
        let mut f: P = null_mut();
        if rec!(cx, cuModuleGetFunction(&mut f, m, ok.as_ptr())) == 0 {
            let mut o = out;
            let mut params = [pp(&mut o)];
            cx.launch(f, [1, 1, 1], [1, 1, 1], 0, &mut params);
            rec!(cx, cuCtxSynchronize());
            let v: Vec<u32> = cx.download(out, 1)?;
            cx.val(&format!("ok{round}"), format!("{:x}", v[0]));
        }
        let mut g: P = null_mut();
        if rec!(cx, cuModuleGetFunction(&mut g, m, q.as_ptr())) == 0 {
            // What a handle the second call hands out does when launched.
            cx.val(&format!("q{round}"), if g.is_null() { "null" } else { "handle" });
            if !g.is_null() {
                let a = cx.array3d(4, 4, 0, FLOAT, 1, 0)?;
                let t = cx.tex(&res_array(a), &tdesc([CLAMP; 3], POINT, 0))?;
                let o2 = cx.sentinel(1)?;
                let (mut tp, mut op) = (t, o2);
                let mut params = [pp(&mut tp), pp(&mut op)];
                cx.launch(g, [1, 1, 1], [1, 1, 1], 0, &mut params);
                if rec!(cx, cuCtxSynchronize()) == 0 {
                    let v: Vec<u32> = cx.download(o2, 1)?;
                    cx.val(&format!("qv{round}"), format!("{:x}", v[0]));
                }
            }
        }
    }
    rec!(cx, cuModuleUnload(m));
    Ok(())
}

/// tld4 with and without a compare value over float texels with signed subnormals,
/// NaNs of both signs and payloads, infinities and zeros (one channel, 8x8), and over
/// half texels with NaNs; compare with tex.level (a 2-level mipmap) and tex.a2d (two
/// layers) beside the plain forms.
fn texdc_forms(cx: &mut Cx) -> Result<(), String> {
    cx.primary()?;
    let mut r = Rng::new(97);
    let specials: [u32; 12] = [
        0x0000_0001,
        0x8000_0001,
        0x807f_ffff,
        0x7fc0_0000,
        0xffc0_0000,
        0x7f80_0001,
        0x7fc1_2345,
        0x7f80_0000,
        0xff80_0000,
        0,
        0x8000_0000,
        0x3f80_0000,
    ];
    let v: Vec<f32> = (0..64).map(|k| if k < 12 { f32::from_bits(specials[k]) } else { r.float(-4, 4) }).collect();
    let a = cx.array3d(8, 8, 0, FLOAT, 1, GATHER)?;
    cx.fill(a, &f32_bytes(&v), 32, 8, 1)?;
    let t = cx.tex(&res_array(a), &tdesc([CLAMP; 3], POINT, 0))?;
    let q: Vec<[f32; 4]> = (0..64).map(|k| [(k % 8) as f32 + 1.0, (k / 8) as f32 + 1.0, 0.5, 0.0]).collect();
    for f in ["g4", "dc4"] {
        run_form(cx, t, "f32.", f, &fq(&q))?;
    }
    let hv: Vec<u16> = (0..64).map(|k| [0x7e00u16, 0xfe00, 0x7d01, 0x7c00, 0x0001, 0x8001, 0x3c00, 0xbc00][k % 8]).collect();
    let a = cx.array3d(8, 8, 0, HALF, 1, GATHER)?;
    cx.fill(a, &u16_bytes(&hv), 16, 8, 1)?;
    let t = cx.tex(&res_array(a), &tdesc([CLAMP; 3], POINT, 0))?;
    for f in ["g4", "dc4"] {
        run_form(cx, t, "half.", f, &fq(&q))?;
    }
    // A 2-layer float array and a 2-level mipmap, linear, random positions and compare values.
    let a = cx.array3d(8, 8, 2, FLOAT, 1, LAYERED)?;
    cx.fill(a, &f32_bytes(&(0..128).map(|_| r.below(256) as f32 / 256.0).collect::<Vec<_>>()), 32, 8, 2)?;
    let t = cx.tex(&res_array(a), &tdesc([CLAMP; 3], LINEAR, 0))?;
    let ql: Vec<[u32; 4]> = (0..512)
        .map(|_| {
            let c = random_coords(&mut r, 1, 8, 8, 0)[0];
            [c[0].to_bits(), c[1].to_bits(), (r.below(256) as f32 / 256.0).to_bits(), r.below(2)]
        })
        .collect();
    for f in ["a2d", "dca"] {
        run_form(cx, t, "layered.", f, &ql)?;
    }
    let mut td = tdesc([CLAMP; 3], LINEAR, NORMALIZED);
    td.mipmap_filter_mode = LINEAR;
    td.max_mipmap_level_clamp = 10.0;
    let mut r2 = Rng::new(98);
    let tm = super::texfit::mip_tex(cx, (8, 8, 2), FLOAT, 1, &td, &mut |_, _| (r2.below(256) as f32 / 256.0).to_le_bytes().to_vec())?;
    let qm: Vec<[u32; 4]> = (0..512)
        .map(|_| {
            [
                (r.below(1024) as f32 / 1024.0).to_bits(),
                (r.below(1024) as f32 / 1024.0).to_bits(),
                (r.below(256) as f32 / 256.0).to_bits(),
                (r.below(256) as f32 / 256.0).to_bits(),
            ]
        })
        .collect();
    for f in ["l2d", "dcl"] {
        run_form(cx, tm, "mip.", f, &qm)?;
    }
    Ok(())
}

/// `.f16` results of element-type reads of other formats: u16 (read as integer), s32 and
/// u32x2 (integer formats), at every texel centre of a 16x16 texture, with the integer
/// result for reference.
fn texh_int(cx: &mut Cx) -> Result<(), String> {
    cx.primary()?;
    let mut r = Rng::new(99);
    for (tag, fmt, ch, flags) in [("u16.", U16, 1u32, READ_AS_INTEGER), ("s32.", S32, 1, 0), ("u32x2.", U32, 2, 0)] {
        let bytes: Vec<u8> =
            (0..16 * 16 * elem_size(fmt, ch)).map(|k| if k % 4 == 0 { (k / 4) as u8 } else { r.next() as u8 & 0x81 }).collect();
        let a = cx.array3d(16, 16, 0, fmt, ch, 0)?;
        cx.fill(a, &bytes, 16 * elem_size(fmt, ch), 16, 1)?;
        let t = cx.tex(&res_array(a), &tdesc([CLAMP; 3], POINT, flags))?;
        for f in ["u32", "f16"] {
            run_form(cx, t, tag, f, &centres(16, 16))?;
        }
    }
    Ok(())
}

/// As `ptx_txq_lazy`, the txq in a device function that kernel `q` calls (a second
/// kernel `q2` calls it too).
fn txq_lazy_func(cx: &mut Cx) -> Result<(), String> {
    cx.primary()?;
    let text = ".version 7.8\n.target sm_90\n.address_size 64\n\n\
                .func (.reg .b32 r) f(.reg .b64 t)\n{\n\ttxq.filter_mode.b32 r, [t];\n\tret;\n}\n\n\
                .visible .entry ok(.param .u64 o)\n{\n\t.reg .b32 %r<2>;\n\t.reg .b64 %rd<2>;\n\tld.param.u64 %rd1, [o];\n\
                \tmov.b32 %r1, 7;\n\tst.global.u32 [%rd1], %r1;\n\tret;\n}\n\n\
                .visible .entry q(.param .u64 t, .param .u64 o)\n{\n\t.reg .b32 %r<2>;\n\t.reg .b64 %rd<3>;\n\
                \tld.param.u64 %rd1, [t];\n\tld.param.u64 %rd2, [o];\n\tcall (%r1), f, (%rd1);\n\
                \tst.global.u32 [%rd2], %r1;\n\tret;\n}\n\n\
                .visible .entry q2(.param .u64 t, .param .u64 o)\n{\n\t.reg .b32 %r<2>;\n\t.reg .b64 %rd<3>;\n\
                \tld.param.u64 %rd1, [t];\n\tld.param.u64 %rd2, [o];\n\tcall (%r1), f, (%rd1);\n\
                \tst.global.u32 [%rd2], %r1;\n\tret;\n}\n";
    // A refused load is the answer (its code is recorded).
    let Ok(m) = cx.ptx_module(text) else { return Ok(()) };
    let out = cx.sentinel(1)?;
    for name in ["ok", "q", "q2", "q", "ok"] {
        let c = CString::new(name).unwrap();
        let mut f: P = null_mut();
        if rec!(cx, cuModuleGetFunction(&mut f, m, c.as_ptr())) == 0 && name == "ok" {
            let mut o = out;
            let mut params = [pp(&mut o)];
            cx.launch(f, [1, 1, 1], [1, 1, 1], 0, &mut params);
            rec!(cx, cuCtxSynchronize());
        }
    }
    rec!(cx, cuModuleUnload(m));
    Ok(())
}

pub(super) fn cases(add: &mut dyn FnMut(String, Run)) {
    add("ptx_texdc_forms".into(), Box::new(texdc_forms));
    add("ptx_texh_int".into(), Box::new(texh_int));
    add("ptx_txq_lazy_func".into(), Box::new(txq_lazy_func));
    add("ptx_texh_point".into(), Box::new(texh_point));
    add("ptx_texh_linear_f32".into(), Box::new(|cx| texh_linear(cx, false)));
    add("ptx_texh_linear_half".into(), Box::new(|cx| texh_linear(cx, true)));
    add("ptx_texh_u8x4".into(), Box::new(|cx| texh_norm(cx, U8, 4)));
    add("ptx_texh_u16x2".into(), Box::new(|cx| texh_norm(cx, U16, 2)));
    add("ptx_texh_s8x2".into(), Box::new(|cx| texh_norm(cx, S8, 2)));
    add("ptx_texdc_point".into(), Box::new(texdc_point));
    add("ptx_texdc_linear_f32".into(), Box::new(|cx| texdc_linear(cx, FLOAT)));
    add("ptx_texdc_linear_u16".into(), Box::new(|cx| texdc_linear(cx, U16)));
    add("ptx_texms_2d".into(), Box::new(|cx| texms(cx, false)));
    add("ptx_texms_a2d".into(), Box::new(|cx| texms(cx, true)));
    add("ptx_txq_lazy".into(), Box::new(txq_lazy));
}
