//! Device-defined results: what the device computes where C++ calls the result undefined
//! (out-of-range float-to-integer conversions, division by zero, over-wide shifts, warp
//! collectives that name lanes which cannot take part, __activemask in divergent code).
//! The kernels are in kernels/conformance.cu; every input comes from device memory.
//!
//! Each case is one process with its own (primary) context, so a launch that fails (the
//! host build traps, the emulated warp deadlocks) costs only its own line. A case's line
//! holds the launch and synchronise codes, then `key=value` results as hex bit patterns;
//! long results go to sub-lines `case.sub: ...`. Lane lists print one hex value per lane,
//! `-` for a lane that wrote nothing, and `v*n` for n equal neighbours.

use crate::api::P;
use crate::cx::{pp, Case, Cx, Run};

pub fn cases() -> Vec<Case> {
    let mut v = Vec::new();
    let mut add = |name: String, run: Run| v.push(Case { name, run });
    for (k, dst) in DSTS.iter().enumerate() {
        add(format!("devres_cvt_f32_{dst}"), Box::new(move |cx| cvt_cast(cx, false, k)));
    }
    for (k, dst) in DSTS.iter().enumerate() {
        add(format!("devres_cvt_f64_{dst}"), Box::new(move |cx| cvt_cast(cx, true, k)));
    }
    add("devres_intrin_f32".into(), Box::new(|cx| cvt_intrin(cx, false)));
    add("devres_intrin_f64".into(), Box::new(|cx| cvt_intrin(cx, true)));
    for ty in ["s32", "u32", "s64", "u64"] {
        add(format!("devres_idiv_{ty}"), Box::new(move |cx| idiv(cx, ty)));
    }
    for ty in ["s32", "u32", "s64", "u64"] {
        add(format!("devres_shift_{ty}"), Box::new(move |cx| shift(cx, ty)));
    }
    for scen in ["exited", "waiting", "halves", "partial"] {
        for (op, opname) in WARP_OPS.iter().enumerate() {
            add(format!("devres_warp_{scen}_{opname}"), Box::new(move |cx| warp(cx, scen, op)));
        }
    }
    add("devres_activemask_branch".into(), Box::new(am_branch));
    add("devres_activemask_mod3".into(), Box::new(am_mod3));
    add("devres_activemask_exited".into(), Box::new(am_exited));
    add("devres_activemask_loop".into(), Box::new(am_loop));
    add("devres_activemask_aggregate".into(), Box::new(am_aggregate));
    add("devres_type_punning".into(), Box::new(type_punning));
    v
}

/// Destination types of the casts, in the kernels' `dst` order.
const DSTS: [&str; 8] = ["s8", "u8", "s16", "u16", "s32", "u32", "s64", "u64"];

/// Sentinel the runner fills output buffers with: a lane or slot that still holds it
/// wrote nothing.
pub(crate) const UNWRITTEN: u32 = 0xeeee_eeee;

impl Cx<'_> {
    /// Device memory holding `v`.
    pub(crate) fn upload<T: Copy>(&mut self, v: &[T]) -> Result<u64, String> {
        let bytes = std::mem::size_of_val(v).max(1);
        let d = self.alloc(bytes)?;
        setup!(self, cuMemcpyHtoD_v2(d, v.as_ptr() as *const std::ffi::c_void, bytes));
        Ok(d)
    }

    /// `words` 32-bit words of device memory holding UNWRITTEN.
    pub(crate) fn sentinel(&mut self, words: usize) -> Result<u64, String> {
        let d = self.alloc(words * 4)?;
        setup!(self, cuMemsetD32_v2(d, UNWRITTEN, words));
        Ok(d)
    }

    pub(crate) fn download<T: Copy + Default>(&mut self, d: u64, n: usize) -> Result<Vec<T>, String> {
        let mut v = vec![T::default(); n];
        setup!(self, cuMemcpyDtoH_v2(v.as_mut_ptr() as P, d, std::mem::size_of_val(&v[..])));
        Ok(v)
    }

    /// Loads the module and launches `kernel` once on the NULL stream; records the launch
    /// and cuCtxSynchronize codes and says whether both succeeded.
    pub(crate) fn run_kernel(&mut self, kernel: &str, grid: u32, block: u32, params: &mut [P]) -> Result<bool, String> {
        self.primary()?;
        let m = self.module()?;
        let f = self.function(m, kernel)?;
        let r = self.launch(f, [grid, 1, 1], [block, 1, 1], 0, params);
        let s = rec!(self, cuCtxSynchronize());
        Ok(r == 0 && s == 0)
    }
}

/// Hex per lane: `-` for UNWRITTEN, runs of equal values as `v*n`.
pub(crate) fn lanes(v: &[u32]) -> String {
    let mut out: Vec<String> = Vec::new();
    let mut i = 0;
    while i < v.len() {
        let mut j = i + 1;
        while j < v.len() && v[j] == v[i] {
            j += 1;
        }
        let s = if v[i] == UNWRITTEN { "-".to_string() } else { format!("{:x}", v[i]) };
        out.push(if j - i > 1 { format!("{s}*{}", j - i) } else { s });
        i = j;
    }
    out.join(",")
}

// ---------------------------------------------------------------- conversions

/// Float inputs: NaNs of both signs (and a signalling one), infinities, values around
/// every integer type's range ends (the nearest floats in and out), rounding cases.
fn f32_inputs() -> Vec<(&'static str, f32)> {
    let two = |e: i32| 2f32.powi(e);
    vec![
        ("nan", f32::from_bits(0x7fc0_0000)),
        ("-nan", f32::from_bits(0xffc0_0000)),
        ("snan", f32::from_bits(0x7f80_0001)),
        ("inf", f32::INFINITY),
        ("-inf", f32::NEG_INFINITY),
        ("1e30", 1e30),
        ("-1e30", -1e30),
        ("-0", -0.0),
        ("-1", -1.0),
        ("-0.5", -0.5),
        ("0.5", 0.5),
        ("1.5", 1.5),
        ("2.5", 2.5),
        ("127", 127.0),
        ("127.5", 127.5),
        ("128", 128.0),
        ("-128", -128.0),
        ("-128.5", -128.5),
        ("-129", -129.0),
        ("255", 255.0),
        ("255.5", 255.5),
        ("256", 256.0),
        ("32767", 32767.0),
        ("32768", 32768.0),
        ("-32768", -32768.0),
        ("-32769", -32769.0),
        ("65535", 65535.0),
        ("65535.5", 65535.5),
        ("65536", 65536.0),
        ("2^31-128", two(31) - 128.0),
        ("2^31", two(31)),
        ("-2^31", -two(31)),
        ("-2^31-256", -two(31) - 256.0),
        ("2^32-256", two(32) - 256.0),
        ("2^32", two(32)),
        ("2^63-2^39", two(63) - two(39)),
        ("2^63", two(63)),
        ("-2^63", -two(63)),
        ("-2^63-2^40", -two(63) - two(40)),
        ("2^64-2^40", two(64) - two(40)),
        ("2^64", two(64)),
    ]
}

/// Double inputs: the float list (exact in double) plus the double range ends.
fn f64_inputs() -> Vec<(&'static str, f64)> {
    let two = |e: i32| 2f64.powi(e);
    let mut v: Vec<(&'static str, f64)> =
        f32_inputs().into_iter().filter(|(k, _)| !k.contains("nan")).map(|(k, x)| (k, x as f64)).collect();
    v.splice(
        0..0,
        [
            ("nan", f64::from_bits(0x7ff8_0000_0000_0000)),
            ("-nan", f64::from_bits(0xfff8_0000_0000_0000)),
            ("snan", f64::from_bits(0x7ff0_0000_0000_0001)),
        ],
    );
    v.extend([
        ("2^31-1", two(31) - 1.0),
        ("2^31-0.5", two(31) - 0.5),
        ("-2^31-0.5", -two(31) - 0.5),
        ("-2^31-1", -two(31) - 1.0),
        ("2^32-1", two(32) - 1.0),
        ("2^32-0.5", two(32) - 0.5),
        ("2^63-1024", two(63) - 1024.0),
        ("-2^63-2048", -two(63) - 2048.0),
        ("2^64-2048", two(64) - 2048.0),
    ]);
    v
}

/// Uploads the inputs of one source type; returns (device pointer, count, labels).
fn inputs(cx: &mut Cx, f64src: bool) -> Result<(u64, u32, Vec<&'static str>), String> {
    if f64src {
        let v = f64_inputs();
        let vals: Vec<f64> = v.iter().map(|x| x.1).collect();
        Ok((cx.upload(&vals)?, v.len() as u32, v.iter().map(|x| x.0).collect()))
    } else {
        let v = f32_inputs();
        let vals: Vec<f32> = v.iter().map(|x| x.1).collect();
        Ok((cx.upload(&vals)?, v.len() as u32, v.iter().map(|x| x.0).collect()))
    }
}

fn cvt_cast(cx: &mut Cx, f64src: bool, dst: usize) -> Result<(), String> {
    cx.primary()?;
    let (mut d_in, mut n, labels) = inputs(cx, f64src)?;
    let mut d_out = cx.alloc(labels.len() * 8)?;
    let mut k = dst as i32;
    let mut params = [pp(&mut d_in), pp(&mut n), pp(&mut k), pp(&mut d_out)];
    let kernel = if f64src { "cvt_cast_f64" } else { "cvt_cast_f32" };
    if cx.run_kernel(kernel, 1, 64, &mut params)? {
        let out: Vec<u64> = cx.download(d_out, labels.len())?;
        for (l, v) in labels.iter().zip(&out) {
            cx.val(l, format!("{v:x}"));
        }
    }
    Ok(())
}

fn cvt_intrin(cx: &mut Cx, f64src: bool) -> Result<(), String> {
    cx.primary()?;
    let (mut d_in, mut n, labels) = inputs(cx, f64src)?;
    let mut d_out = cx.alloc(labels.len() * 16 * 8)?;
    let mut params = [pp(&mut d_in), pp(&mut n), pp(&mut d_out)];
    let kernel = if f64src { "cvt_intrin_f64" } else { "cvt_intrin_f32" };
    if cx.run_kernel(kernel, 1, 64, &mut params)? {
        let out: Vec<u64> = cx.download(d_out, labels.len() * 16)?;
        for (fi, fam) in ["int", "uint", "ll", "ull"].iter().enumerate() {
            for (ri, rnd) in ["rn", "rz", "ru", "rd"].iter().enumerate() {
                let k = fi * 4 + ri;
                let text: Vec<String> = labels.iter().enumerate().map(|(i, l)| format!("{l}={:x}", out[i * 16 + k])).collect();
                cx.sub(&format!("{fam}_{rnd}"), text.join(" "));
            }
        }
    }
    Ok(())
}

// ---------------------------------------------------------------- integer division, shifts

/// (label, dividend, divisor) as signed 64-bit values, truncated to the type's width;
/// `min` is the signed type's minimum (its bit pattern for the unsigned types).
const DIV_PAIRS: [(&str, i64, i64); 6] =
    [("7", 7, 0), ("-7", -7, 0), ("0", 0, 0), ("min", i64::MIN, 0), ("min", i64::MIN, -1), ("-7", -7, 2)];

fn idiv(cx: &mut Cx, ty: &str) -> Result<(), String> {
    cx.primary()?;
    let wide = ty.ends_with("64");
    let fit = |x: i64| -> u64 {
        if wide {
            x as u64
        } else if x == i64::MIN {
            0x8000_0000
        } else {
            x as u32 as u64
        }
    };
    let n = DIV_PAIRS.len();
    let (mut da, mut db) = if wide {
        let a: Vec<u64> = DIV_PAIRS.iter().map(|p| fit(p.1)).collect();
        let b: Vec<u64> = DIV_PAIRS.iter().map(|p| fit(p.2)).collect();
        (cx.upload(&a)?, cx.upload(&b)?)
    } else {
        let a: Vec<u32> = DIV_PAIRS.iter().map(|p| fit(p.1) as u32).collect();
        let b: Vec<u32> = DIV_PAIRS.iter().map(|p| fit(p.2) as u32).collect();
        (cx.upload(&a)?, cx.upload(&b)?)
    };
    let width = if wide { 8 } else { 4 };
    let mut dq = cx.alloc(n * width)?;
    let mut dr = cx.alloc(n * width)?;
    let mut nn = n as u32;
    let mut params = [pp(&mut da), pp(&mut db), pp(&mut nn), pp(&mut dq), pp(&mut dr)];
    if cx.run_kernel(&format!("idiv_{ty}"), 1, 32, &mut params)? {
        let (q, r): (Vec<u64>, Vec<u64>) = if wide {
            (cx.download(dq, n)?, cx.download(dr, n)?)
        } else {
            let q: Vec<u32> = cx.download(dq, n)?;
            let r: Vec<u32> = cx.download(dr, n)?;
            (q.into_iter().map(u64::from).collect(), r.into_iter().map(u64::from).collect())
        };
        for (i, (l, _, b)) in DIV_PAIRS.iter().enumerate() {
            cx.val(&format!("{l}/{b}"), format!("{:x}", q[i]));
            cx.val(&format!("{l}%{b}"), format!("{:x}", r[i]));
        }
    }
    Ok(())
}

const SHIFT_AMOUNTS: [i32; 9] = [1, 31, 32, 33, 63, 64, 65, 255, -1];

fn shift(cx: &mut Cx, ty: &str) -> Result<(), String> {
    cx.primary()?;
    let wide = ty.ends_with("64");
    let mut dx = if wide { cx.upload(&[0x8765_4321_8765_4321u64])? } else { cx.upload(&[0x8765_4321u32])? };
    let mut da = cx.upload(&SHIFT_AMOUNTS)?;
    let n = SHIFT_AMOUNTS.len();
    let mut dout = cx.alloc(2 * n * 8)?;
    let mut nn = n as u32;
    let mut params = [pp(&mut dx), pp(&mut da), pp(&mut nn), pp(&mut dout)];
    if cx.run_kernel(&format!("shift_{ty}"), 1, 32, &mut params)? {
        let out: Vec<u64> =
            if wide { cx.download(dout, 2 * n)? } else { cx.download::<u32>(dout, 2 * n)?.into_iter().map(u64::from).collect() };
        for (i, k) in SHIFT_AMOUNTS.iter().enumerate() {
            cx.val(&format!("<<{k}"), format!("{:x}", out[2 * i]));
            cx.val(&format!(">>{k}"), format!("{:x}", out[2 * i + 1]));
        }
    }
    Ok(())
}

// ---------------------------------------------------------------- warp collectives

/// The kernels' `op` numbers (see warp_op in conformance.cu); the first four are shuffles
/// with a width-32 and a width-8 result.
const WARP_OPS: [&str; 13] = [
    "shfl_idx",
    "shfl_up",
    "shfl_down",
    "shfl_xor",
    "ballot",
    "any",
    "all",
    "reduce_add",
    "reduce_min",
    "match_any",
    "activemask",
    "match_all",
    "match_all_diff",
];

/// One collective under one scenario: `exited` (lanes 16-31 returned, full mask),
/// `waiting` (lanes 16-31 at a barrier, mask 0x0000ffff, sources 16-31), `halves`
/// (every lane, even/odd masks, sources outside the caller's mask), `partial` (a block of
/// 10 threads, full mask: lanes 10-31 do not exist). Lane L's value is 0x100 + L. `done`
/// is the mask of lanes that finished the kernel; the match_all ops add their predicate
/// (`p`).
fn warp(cx: &mut Cx, scen: &str, op: usize) -> Result<(), String> {
    cx.primary()?;
    let vals: Vec<u32> = (0..32).map(|l| 0x100 + l).collect();
    let mut din = cx.upload(&vals)?;
    let mut dout = cx.sentinel(96)?;
    let mut opi = op as i32;
    let mut params = [pp(&mut din), pp(&mut dout), pp(&mut opi)];
    let threads = if scen == "partial" { 10 } else { 32 };
    if cx.run_kernel(&format!("warp_{scen}"), 1, threads, &mut params)? {
        let out: Vec<u32> = cx.download(dout, 96)?;
        let done = (0..32).filter(|&l| out[64 + l] == 1).fold(0u32, |m, l| m | 1 << l);
        cx.val("done", format!("{done:08x}"));
        if op < 4 {
            cx.val("w32", lanes(&out[..32]));
            cx.val("w8", lanes(&out[32..64]));
        } else {
            cx.val("r", lanes(&out[..32]));
            if op >= 11 {
                cx.val("p", lanes(&out[32..64]));
            }
        }
    }
    Ok(())
}

// ---------------------------------------------------------------- __activemask

/// Runs an activemask kernel `(const int *arg, unsigned *out)` on one warp.
fn am_simple(cx: &mut Cx, kernel: &str, arg: &[i32], words: usize) -> Result<Option<Vec<u32>>, String> {
    cx.primary()?;
    let mut darg = cx.upload(arg)?;
    let mut dout = cx.sentinel(words)?;
    let mut params = [pp(&mut darg), pp(&mut dout)];
    if cx.run_kernel(kernel, 1, 32, &mut params)? {
        return Ok(Some(cx.download(dout, words)?));
    }
    Ok(None)
}

fn am_branch(cx: &mut Cx) -> Result<(), String> {
    if let Some(out) = am_simple(cx, "am_branch", &[10], 64)? {
        cx.val("if", lanes(&out[..32]));
        cx.val("else", lanes(&out[32..]));
    }
    Ok(())
}

fn am_mod3(cx: &mut Cx) -> Result<(), String> {
    if let Some(out) = am_simple(cx, "am_mod3", &[3], 32)? {
        cx.val("r", lanes(&out));
    }
    Ok(())
}

fn am_exited(cx: &mut Cx) -> Result<(), String> {
    if let Some(out) = am_simple(cx, "am_exited", &[20], 32)? {
        cx.val("r", lanes(&out));
    }
    Ok(())
}

fn am_loop(cx: &mut Cx) -> Result<(), String> {
    let trips: Vec<i32> = (0..32).map(|l| l % 5).collect();
    if let Some(out) = am_simple(cx, "am_loop", &trips, 4 * 32)? {
        for i in 0..4 {
            cx.val(&format!("it{i}"), lanes(&out[32 * i..32 * (i + 1)]));
        }
    }
    Ok(())
}

/// Two warps; warp 0 takes the branch where lane % 3 != 1, warp 1 where (lane & 4) == 0.
/// The order in which the two leaders reach the counter is not fixed, so the slots are
/// printed as ranks within each warp (slot - the warp's lowest slot), and `slots` says
/// whether together they are exactly 1000 .. counter-1, each once.
fn am_aggregate(cx: &mut Cx) -> Result<(), String> {
    cx.primary()?;
    let pred: Vec<i32> = (0..64).map(|t| if t < 32 { (t % 3 != 1) as i32 } else { (t & 4 == 0) as i32 }).collect();
    let mut dpred = cx.upload(&pred)?;
    let mut dcounter = cx.upload(&[1000u32])?;
    let mut dout = cx.sentinel(64)?;
    let mut dmasks = cx.sentinel(64)?;
    let mut params = [pp(&mut dpred), pp(&mut dcounter), pp(&mut dout), pp(&mut dmasks)];
    if !cx.run_kernel("am_aggregate", 1, 64, &mut params)? {
        return Ok(());
    }
    let out: Vec<u32> = cx.download(dout, 64)?;
    let masks: Vec<u32> = cx.download(dmasks, 64)?;
    let counter: Vec<u32> = cx.download(dcounter, 1)?;
    let mut ranks = vec![UNWRITTEN; 64];
    for w in 0..2 {
        let lanes_w = &out[32 * w..32 * (w + 1)];
        if let Some(&base) = lanes_w.iter().filter(|&&x| x != UNWRITTEN).min() {
            for (l, &x) in lanes_w.iter().enumerate() {
                if x != UNWRITTEN {
                    ranks[32 * w + l] = x.wrapping_sub(base);
                }
            }
        }
    }
    let mut slots: Vec<u32> = out.iter().copied().filter(|&x| x != UNWRITTEN).collect();
    slots.sort_unstable();
    let exact = slots.iter().enumerate().all(|(i, &x)| x == 1000 + i as u32) && counter[0] == 1000 + slots.len() as u32;
    cx.val("masks", lanes(&masks));
    cx.val("ranks", lanes(&ranks));
    cx.val("counter", counter[0] - 1000);
    cx.val("slots", if exact { "ok" } else { "bad" });
    Ok(())
}

// ---------------------------------------------------------------- type punning

/// Loads read back through another type and arrays stored as a vector (kernel `pun`):
/// the device reads the bytes stored, where C++ (strict aliasing) lets a compiler drop them.
fn type_punning(cx: &mut Cx) -> Result<(), String> {
    cx.primary()?;
    let input: Vec<u16> = (0..32u16).map(|i| i.wrapping_mul(257).wrapping_add(3)).collect();
    let mut d_in = cx.upload(&input)?;
    let mut n = 10i32;
    let mut d_out = cx.sentinel(48)?;
    let mut params = [pp(&mut d_in), pp(&mut n), pp(&mut d_out)];
    if cx.run_kernel("pun", 1, 8, &mut params)? {
        let out: Vec<u32> = cx.download(d_out, 48)?;
        cx.val("loads", lanes(&out[..32]));
        cx.val("stores", lanes(&out[32..]));
    }
    Ok(())
}
