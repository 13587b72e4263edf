//! Context resolution, entry point by entry point: which context a call that names a
//! stream, an event, a pointer, a module or a function acts on, and whether it needs a
//! current context at all. Each family of entry points runs under three states, one case
//! (process) each, named `ctxres_FAMILY_STATE`:
//!
//! - `nocur`: the handles were made in context A (cuCtxCreate), then A was popped, so no
//!   context is current;
//! - `own`: A, the handles' context, is current;
//! - `other`: a second context B (cuCtxCreate on the same device) is current.
//!
//! Codes are recorded in call order. Where a call succeeded, its effect is checked
//! afterwards with A current (the bytes arrived, the kernel ran, the callback ran, ...)
//! and printed as `key=ok|bad`; contexts a call reports are named `A`, `B`, `null` or
//! `other`.

use crate::api::{LaunchConfig, Memcpy2D, P, R};
use crate::cx::{hash, pp, Case, Cx};
use std::ffi::{c_char, c_void, CStr, CString};
use std::ptr::null_mut;
use std::sync::atomic::{AtomicI32, Ordering};

#[derive(Clone, Copy, PartialEq, Eq)]
pub enum State {
    NoCur,
    Own,
    Other,
}

type Family = fn(&mut Cx, State) -> Result<(), String>;

/// The families, in run order.
const FAMILIES: &[(&str, Family)] = &[
    ("memcpy_sync", memcpy_sync),
    ("memcpy_async", memcpy_async),
    ("memcpy_2d", memcpy_2d),
    ("memset_sync", memset_sync),
    ("memset_async", memset_async),
    ("null_stream", null_stream),
    ("free", free),
    ("alloc_async", alloc_async),
    ("pointer_query", pointer_query),
    ("managed", managed),
    ("module", module),
    ("func", func),
    ("occupancy", occupancy),
    ("launch", launch),
    ("stream", stream),
    ("callbacks", callbacks),
    ("event", event),
];

pub fn cases() -> Vec<Case> {
    let mut v = Vec::new();
    for &(fam, f) in FAMILIES {
        for (st, sname) in [(State::NoCur, "nocur"), (State::Own, "own"), (State::Other, "other")] {
            v.push(Case { name: format!("ctxres_{fam}_{sname}"), run: Box::new(move |cx| f(cx, st)) });
        }
    }
    v
}

use crate::cuda::{CU_MEMORYTYPE_DEVICE as DEVICE, CU_MEMORYTYPE_HOST as HOST};
/// CUpointer_attribute, as the runner's entry points take it (a C enum: int).
const ATTR_CONTEXT: i32 = crate::cuda::CU_POINTER_ATTRIBUTE_CONTEXT as i32;
const ATTR_MEMORY_TYPE: i32 = crate::cuda::CU_POINTER_ATTRIBUTE_MEMORY_TYPE as i32;
const ATTR_DEVICE_POINTER: i32 = crate::cuda::CU_POINTER_ATTRIBUTE_DEVICE_POINTER as i32;
const ATTR_IS_MANAGED: i32 = crate::cuda::CU_POINTER_ATTRIBUTE_IS_MANAGED as i32;
const ATTR_DEVICE_ORDINAL: i32 = crate::cuda::CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL as i32;
const ATTR_RANGE_SIZE: i32 = crate::cuda::CU_POINTER_ATTRIBUTE_RANGE_SIZE as i32;
/// CUmemLocation { type = CU_MEM_LOCATION_TYPE_DEVICE, id = 0 }, as passed by value.
const LOC_DEVICE0: u64 = 1;

fn ok(b: bool) -> &'static str {
    if b {
        "ok"
    } else {
        "bad"
    }
}

fn all_eq(v: &[u8], b: u8) -> bool {
    v.iter().all(|&x| x == b)
}

impl Cx<'_> {
    /// From A current into `st`; returns B (null unless `Other`).
    fn enter(&mut self, a: P, st: State) -> Result<P, String> {
        match st {
            State::NoCur => {
                let mut p: P = null_mut();
                setup!(self, cuCtxPopCurrent_v2(&mut p));
                let mut cur: P = 1 as P;
                setup!(self, cuCtxGetCurrent(&mut cur));
                if p != a || !cur.is_null() {
                    return Err("SETUP pop did not leave the thread without a context".into());
                }
                Ok(null_mut())
            }
            State::Own => Ok(null_mut()),
            State::Other => {
                let mut b: P = null_mut();
                setup!(self, cuCtxCreate_v2(&mut b, 0, 0));
                Ok(b)
            }
        }
    }

    /// Back to A current, with the work given to A (and B) finished.
    fn leave(&mut self, a: P, st: State) -> Result<(), String> {
        match st {
            State::NoCur => setup!(self, cuCtxPushCurrent_v2(a)),
            State::Own => {}
            State::Other => {
                call!(self, cuCtxSynchronize());
                setup!(self, cuCtxSetCurrent(a));
            }
        }
        call!(self, cuCtxSynchronize());
        Ok(())
    }

    /// `key=ok|bad` for a call that answered success; nothing for one that failed.
    fn effect(&mut self, r: R, key: &str, good: bool) {
        if r == 0 {
            self.val(key, ok(good));
        }
    }

    /// `key=value` for a call that answered success.
    fn val_if(&mut self, r: R, key: &str, v: impl std::fmt::Display) {
        if r == 0 {
            self.val(key, v);
        }
    }

    fn peek(&mut self, d: u64, n: usize) -> Result<Vec<u8>, String> {
        let mut v = vec![0u8; n];
        setup!(self, cuMemcpyDtoH_v2(v.as_mut_ptr() as P, d, n));
        Ok(v)
    }

    fn zeroed(&mut self, n: usize) -> Result<u64, String> {
        let d = self.alloc(n)?;
        setup!(self, cuMemsetD8_v2(d, 0, n));
        Ok(d)
    }

    fn filled(&mut self, n: usize, b: u8) -> Result<u64, String> {
        let d = self.alloc(n)?;
        setup!(self, cuMemsetD8_v2(d, b, n));
        Ok(d)
    }

    /// Pinned host memory (cuMemHostAlloc), zeroed; never freed (the case process exits).
    fn pinned(&mut self, n: usize) -> Result<&'static mut [u8], String> {
        let mut h: P = null_mut();
        setup!(self, cuMemHostAlloc(&mut h, n, 0));
        // SAFETY: the driver returned n writable bytes that stay allocated until exit.
        let s = unsafe { std::slice::from_raw_parts_mut(h as *mut u8, n) };
        s.fill(0);
        Ok(s)
    }

    fn stream(&mut self, flags: u32) -> Result<P, String> {
        let mut s: P = null_mut();
        setup!(self, cuStreamCreate(&mut s, flags));
        Ok(s)
    }

    fn event(&mut self) -> Result<P, String> {
        let mut e: P = null_mut();
        setup!(self, cuEventCreate(&mut e, 0));
        Ok(e)
    }

    /// The context a pointer belongs to, by CU_POINTER_ATTRIBUTE_CONTEXT.
    fn ptr_ctx(&mut self, p: u64) -> P {
        let mut c: P = null_mut();
        if call!(self, cuPointerGetAttribute(pp(&mut c), ATTR_CONTEXT, p)) != 0 {
            return usize::MAX as P;
        }
        c
    }
}

/// Names a context handle for the table.
fn who(c: P, a: P, b: P) -> &'static str {
    if c == usize::MAX as P {
        "err"
    } else if c.is_null() {
        "null"
    } else if c == a {
        "A"
    } else if c == b {
        "B"
    } else {
        "other"
    }
}

/// A 2D copy of `w` bytes x `h` rows.
fn m2d(src: (u32, u64, usize), dst: (u32, u64, usize), w: usize, h: usize) -> Memcpy2D {
    let mut m = Memcpy2D::zeroed();
    m.src_memory_type = src.0;
    if src.0 == HOST {
        m.src_host = src.1 as *const c_void;
    } else {
        m.src_device = src.1;
    }
    m.src_pitch = src.2;
    m.dst_memory_type = dst.0;
    if dst.0 == HOST {
        m.dst_host = dst.1 as P;
    } else {
        m.dst_device = dst.1;
    }
    m.dst_pitch = dst.2;
    m.width_in_bytes = w;
    m.height = h;
    m
}

// ---------------------------------------------------------------- copies and memsets

fn memcpy_sync(cx: &mut Cx, st: State) -> Result<(), String> {
    let a = cx.created()?;
    let d = cx.zeroed(7 * 256)?;
    let s1 = cx.filled(256, 0x21)?;
    let s2 = cx.filled(256, 0x22)?;
    let (h1, h2) = (vec![0x11u8; 256], vec![0x12u8; 256]);
    let (mut o1, mut o2) = (vec![0u8; 256], vec![0u8; 256]);
    let _b = cx.enter(a, st)?;
    let r = [
        rec!(cx, cuMemcpyHtoD_v2(d, h1.as_ptr() as *const c_void, 256)),
        rec!(cx, cuMemcpyHtoD_v2_ptds(d + 256, h2.as_ptr() as *const c_void, 256)),
        rec!(cx, cuMemcpyDtoH_v2(o1.as_mut_ptr() as P, s1, 256)),
        rec!(cx, cuMemcpyDtoH_v2_ptds(o2.as_mut_ptr() as P, s2, 256)),
        rec!(cx, cuMemcpyDtoD_v2(d + 512, s1, 256)),
        rec!(cx, cuMemcpyDtoD_v2_ptds(d + 768, s2, 256)),
        rec!(cx, cuMemcpy(d + 1024, s1, 256)),
        rec!(cx, cuMemcpy_ptds(d + 1280, s2, 256)),
        rec!(cx, cuMemcpyPeer(d + 1536, a, s1, a, 256)),
    ];
    cx.leave(a, st)?;
    let g = cx.peek(d, 7 * 256)?;
    let slot = |k: usize| &g[k * 256..(k + 1) * 256];
    cx.effect(r[0], "htod", all_eq(slot(0), 0x11));
    cx.effect(r[1], "htod_ptds", all_eq(slot(1), 0x12));
    cx.effect(r[2], "dtoh", all_eq(&o1, 0x21));
    cx.effect(r[3], "dtoh_ptds", all_eq(&o2, 0x22));
    cx.effect(r[4], "dtod", all_eq(slot(2), 0x21));
    cx.effect(r[5], "dtod_ptds", all_eq(slot(3), 0x22));
    cx.effect(r[6], "memcpy", all_eq(slot(4), 0x21));
    cx.effect(r[7], "memcpy_ptds", all_eq(slot(5), 0x22));
    cx.effect(r[8], "peer", all_eq(slot(6), 0x21));
    Ok(())
}

fn memcpy_async(cx: &mut Cx, st: State) -> Result<(), String> {
    let a = cx.created()?;
    let s = cx.stream(0)?;
    let d = cx.zeroed(7 * 256)?;
    let s1 = cx.filled(256, 0x21)?;
    let s2 = cx.filled(256, 0x22)?;
    let h = cx.pinned(2048)?;
    h[..256].fill(0x31);
    h[256..512].fill(0x32);
    let base = h.as_mut_ptr();
    let hp = |off: usize| base.wrapping_add(off) as P;
    let (h0, h256, h1024, h1280) = (hp(0), hp(256), hp(1024), hp(1280));
    let _b = cx.enter(a, st)?;
    let r = [
        rec!(cx, cuMemcpyHtoDAsync_v2(d, h0, 256, s)),
        rec!(cx, cuMemcpyHtoDAsync_v2_ptsz(d + 256, h256, 256, s)),
        rec!(cx, cuMemcpyDtoHAsync_v2(h1024, s1, 256, s)),
        rec!(cx, cuMemcpyDtoHAsync_v2_ptsz(h1280, s2, 256, s)),
        rec!(cx, cuMemcpyDtoDAsync_v2(d + 512, s1, 256, s)),
        rec!(cx, cuMemcpyDtoDAsync_v2_ptsz(d + 768, s2, 256, s)),
        rec!(cx, cuMemcpyAsync(d + 1024, s1, 256, s)),
        rec!(cx, cuMemcpyAsync_ptsz(d + 1280, s2, 256, s)),
        rec!(cx, cuMemcpyPeerAsync(d + 1536, a, s1, a, 256, s)),
    ];
    rec!(cx, cuStreamSynchronize(s));
    cx.leave(a, st)?;
    call!(cx, cuStreamSynchronize(s));
    let g = cx.peek(d, 7 * 256)?;
    let slot = |k: usize| &g[k * 256..(k + 1) * 256];
    cx.effect(r[0], "htod", all_eq(slot(0), 0x31));
    cx.effect(r[1], "htod_ptsz", all_eq(slot(1), 0x32));
    cx.effect(r[2], "dtoh", all_eq(&h[1024..1280], 0x21));
    cx.effect(r[3], "dtoh_ptsz", all_eq(&h[1280..1536], 0x22));
    cx.effect(r[4], "dtod", all_eq(slot(2), 0x21));
    cx.effect(r[5], "dtod_ptsz", all_eq(slot(3), 0x22));
    cx.effect(r[6], "memcpy", all_eq(slot(4), 0x21));
    cx.effect(r[7], "memcpy_ptsz", all_eq(slot(5), 0x22));
    cx.effect(r[8], "peer", all_eq(slot(6), 0x21));
    Ok(())
}

/// 2D copies of 64 bytes x 4 rows into regions of a device buffer of pitch 128 (region
/// k = rows 4k..4k+3); the bytes 64..127 of each row must stay untouched.
fn memcpy_2d(cx: &mut Cx, st: State) -> Result<(), String> {
    let a = cx.created()?;
    let s = cx.stream(0)?;
    let d = cx.zeroed(16 * 128)?;
    let src = cx.filled(4 * 64, 0x65)?;
    let (h1, h2, h3) = (vec![0x61u8; 256], vec![0x62u8; 256], vec![0x63u8; 256]);
    let hp = cx.pinned(512)?;
    hp[..256].fill(0x64);
    let hpp = hp.as_mut_ptr() as u64;
    let dst = |k: u64| (DEVICE, d + k * 4 * 128, 128usize);
    let c1 = m2d((HOST, h1.as_ptr() as u64, 64), dst(0), 64, 4);
    let c2 = m2d((HOST, h2.as_ptr() as u64, 64), dst(1), 64, 4);
    let c3 = m2d((HOST, h3.as_ptr() as u64, 64), dst(2), 64, 4);
    let c4 = m2d((HOST, hpp, 64), dst(3), 64, 4);
    let c5 = m2d((DEVICE, src, 64), (HOST, hpp + 256, 64), 64, 4);
    let _b = cx.enter(a, st)?;
    let r = [
        rec!(cx, cuMemcpy2D_v2(&c1)),
        rec!(cx, cuMemcpy2D_v2_ptds(&c2)),
        rec!(cx, cuMemcpy2DUnaligned_v2(&c3)),
        rec!(cx, cuMemcpy2DAsync_v2(&c4, s)),
        rec!(cx, cuMemcpy2DAsync_v2_ptsz(&c5, s)),
    ];
    rec!(cx, cuStreamSynchronize(s));
    cx.leave(a, st)?;
    call!(cx, cuStreamSynchronize(s));
    let g = cx.peek(d, 16 * 128)?;
    let region = |k: usize, b: u8| {
        (0..4).all(|row| {
            let o = (4 * k + row) * 128;
            all_eq(&g[o..o + 64], b) && all_eq(&g[o + 64..o + 128], 0)
        })
    };
    cx.effect(r[0], "htod", region(0, 0x61));
    cx.effect(r[1], "htod_ptds", region(1, 0x62));
    cx.effect(r[2], "unaligned", region(2, 0x63));
    cx.effect(r[3], "async_htod", region(3, 0x64));
    cx.effect(r[4], "async_dtoh_ptsz", all_eq(&hp[256..512], 0x65));
    Ok(())
}

fn memset_sync(cx: &mut Cx, st: State) -> Result<(), String> {
    let a = cx.created()?;
    let d = cx.zeroed(8 * 256)?;
    let _b = cx.enter(a, st)?;
    let r = [
        rec!(cx, cuMemsetD8_v2(d, 0x41, 256)),
        rec!(cx, cuMemsetD16_v2(d + 256, 0x4242, 128)),
        rec!(cx, cuMemsetD32_v2(d + 512, 0x4343_4343, 64)),
        rec!(cx, cuMemsetD8_v2_ptds(d + 768, 0x44, 256)),
        rec!(cx, cuMemsetD32_v2_ptds(d + 1024, 0x4545_4545, 64)),
        rec!(cx, cuMemsetD2D8_v2(d + 1280, 64, 0x46, 64, 4)),
        rec!(cx, cuMemsetD2D16_v2(d + 1536, 64, 0x4747, 32, 4)),
        rec!(cx, cuMemsetD2D32_v2(d + 1792, 64, 0x4848_4848, 16, 4)),
    ];
    cx.leave(a, st)?;
    let g = cx.peek(d, 8 * 256)?;
    for (k, key) in ["d8", "d16", "d32", "d8_ptds", "d32_ptds", "d2d8", "d2d16", "d2d32"].iter().enumerate() {
        cx.effect(r[k], key, all_eq(&g[k * 256..(k + 1) * 256], 0x41 + k as u8));
    }
    Ok(())
}

fn memset_async(cx: &mut Cx, st: State) -> Result<(), String> {
    let a = cx.created()?;
    let s = cx.stream(0)?;
    let d = cx.zeroed(8 * 256)?;
    let _b = cx.enter(a, st)?;
    let r = [
        rec!(cx, cuMemsetD8Async(d, 0x41, 256, s)),
        rec!(cx, cuMemsetD16Async(d + 256, 0x4242, 128, s)),
        rec!(cx, cuMemsetD32Async(d + 512, 0x4343_4343, 64, s)),
        rec!(cx, cuMemsetD8Async_ptsz(d + 768, 0x44, 256, s)),
        rec!(cx, cuMemsetD32Async_ptsz(d + 1024, 0x4545_4545, 64, s)),
        rec!(cx, cuMemsetD2D8Async(d + 1280, 64, 0x46, 64, 4, s)),
        rec!(cx, cuMemsetD2D16Async(d + 1536, 64, 0x4747, 32, 4, s)),
        rec!(cx, cuMemsetD2D32Async(d + 1792, 64, 0x4848_4848, 16, 4, s)),
    ];
    rec!(cx, cuStreamSynchronize(s));
    cx.leave(a, st)?;
    call!(cx, cuStreamSynchronize(s));
    let g = cx.peek(d, 8 * 256)?;
    let keys = ["d8", "d16", "d32", "d8_ptsz", "d32_ptsz", "d2d8", "d2d16", "d2d32"];
    for (k, key) in keys.iter().enumerate() {
        cx.effect(r[k], key, all_eq(&g[k * 256..(k + 1) * 256], 0x41 + k as u8));
    }
    Ok(())
}

/// The NULL stream names no context: it is the current context's legacy stream.
fn null_stream(cx: &mut Cx, st: State) -> Result<(), String> {
    let a = cx.created()?;
    let m = cx.module()?;
    let f = cx.function(m, "fill_hash")?;
    let d = cx.zeroed(512)?;
    let mut out = cx.zeroed(64 * 4)?;
    let h = cx.pinned(256)?;
    h.fill(0x71);
    let ev = cx.event()?;
    let mut n = 64u32;
    let mut params = [pp(&mut out), pp(&mut n)];
    let _b = cx.enter(a, st)?;
    let r0 = rec!(cx, cuMemcpyHtoDAsync_v2(d, h.as_ptr() as *const c_void, 256, null_mut()));
    let r1 = rec!(cx, cuMemsetD8Async(d + 256, 0x72, 256, null_mut()));
    let r2 = cx.launch(f, [1, 1, 1], [64, 1, 1], 0, &mut params);
    rec!(cx, cuEventRecord(ev, null_mut()));
    rec!(cx, cuStreamWaitEvent(null_mut(), ev, 0));
    rec!(cx, cuStreamSynchronize(null_mut()));
    rec!(cx, cuStreamQuery(null_mut()));
    cx.leave(a, st)?;
    let g = cx.peek(d, 512)?;
    cx.effect(r0, "htod", all_eq(&g[..256], 0x71));
    cx.effect(r1, "memset", all_eq(&g[256..], 0x72));
    let v = cx.dtoh_u32(out, 64)?;
    cx.effect(r2, "kernel", v.iter().enumerate().all(|(i, &w)| w == hash(i as u32)));
    Ok(())
}

// ---------------------------------------------------------------- allocations, pointers

/// A page-aligned, never freed host buffer (for cuMemHostRegister).
fn page_buffer(n: usize) -> P {
    let layout = std::alloc::Layout::from_size_align(n, 4096).unwrap();
    // SAFETY: non-zero size; the buffer is leaked on purpose (registered with the driver).
    unsafe { std::alloc::alloc_zeroed(layout) as P }
}

fn free(cx: &mut Cx, st: State) -> Result<(), String> {
    let a = cx.created()?;
    let d = cx.alloc(256)?;
    let mut h1: P = null_mut();
    setup!(cx, cuMemHostAlloc(&mut h1, 256, 0));
    let mut h2: P = null_mut();
    setup!(cx, cuMemAllocHost_v2(&mut h2, 256));
    let reg1 = page_buffer(4096);
    setup!(cx, cuMemHostRegister_v2(reg1, 4096, 0));
    let reg2 = page_buffer(4096);
    let b = cx.enter(a, st)?;
    let r = [
        rec!(cx, cuMemFree_v2(d)),
        rec!(cx, cuMemFreeHost(h1)),
        rec!(cx, cuMemFreeHost(h2)),
        rec!(cx, cuMemHostUnregister(reg1)),
        rec!(cx, cuMemHostRegister_v2(reg2, 4096, 0)),
    ];
    cx.leave(a, st)?;
    // Gone: the pointer no longer belongs to any context.
    let gone = |cx: &mut Cx, p: u64| cx.ptr_ctx(p) == usize::MAX as P;
    let g = gone(cx, d);
    cx.effect(r[0], "free", g);
    let g = gone(cx, h1 as u64);
    cx.effect(r[1], "free_host", g);
    let g = gone(cx, h2 as u64);
    cx.effect(r[2], "free_host2", g);
    let g = gone(cx, reg1 as u64);
    cx.effect(r[3], "unregister", g);
    let c = cx.ptr_ctx(reg2 as u64);
    cx.val_if(r[4], "register_ctx", who(c, a, b));
    Ok(())
}

fn alloc_async(cx: &mut Cx, st: State) -> Result<(), String> {
    let a = cx.created()?;
    let s = cx.stream(0)?;
    let mut pool: P = null_mut();
    setup!(cx, cuDeviceGetDefaultMemPool(&mut pool, 0));
    let (mut fa1, mut fa2) = (0u64, 0u64);
    setup!(cx, cuMemAllocAsync(&mut fa1, 4096, s));
    setup!(cx, cuMemAllocAsync(&mut fa2, 4096, s));
    setup!(cx, cuStreamSynchronize(s));
    let (mut p1, mut p2, mut p3) = (0u64, 0u64, 0u64);
    let b = cx.enter(a, st)?;
    let r = [
        rec!(cx, cuMemAllocAsync(&mut p1, 4096, s)),
        rec!(cx, cuMemAllocAsync_ptsz(&mut p2, 4096, s)),
        rec!(cx, cuMemAllocFromPoolAsync(&mut p3, 4096, pool, s)),
    ];
    rec!(cx, cuMemFreeAsync(fa1, s));
    rec!(cx, cuMemFreeAsync_ptsz(fa2, s));
    rec!(cx, cuStreamSynchronize(s));
    cx.leave(a, st)?;
    // Usable from A: a memset and a read back of each new allocation.
    for (k, (rk, p)) in [(r[0], p1), (r[1], p2), (r[2], p3)].into_iter().enumerate() {
        if rk != 0 {
            continue;
        }
        let c = cx.ptr_ctx(p);
        cx.val(&format!("p{}_ctx", k + 1), who(c, a, b));
        let usable = p != 0 && call!(cx, cuMemsetD8_v2(p, 0x5a, 4096)) == 0 && cx.peek(p, 4096).map(|v| all_eq(&v, 0x5a)).unwrap_or(false);
        cx.val(&format!("p{}", k + 1), ok(usable));
    }
    Ok(())
}

fn pointer_query(cx: &mut Cx, st: State) -> Result<(), String> {
    let a = cx.created()?;
    let d = cx.alloc(4096)?;
    let h = cx.pinned(256)?.as_mut_ptr() as u64;
    let mut mg = 0u64;
    setup!(cx, cuMemAllocManaged(&mut mg, 4096, 1));
    let b = cx.enter(a, st)?;
    let mut c: P = null_mut();
    let r = rec!(cx, cuPointerGetAttribute(pp(&mut c), ATTR_CONTEXT, d));
    cx.val_if(r, "d_ctx", who(c, a, b));
    let mut t = 99u32;
    let r = rec!(cx, cuPointerGetAttribute(pp(&mut t), ATTR_MEMORY_TYPE, d));
    cx.val_if(r, "d_type", t);
    let mut ord = 99i32;
    let r = rec!(cx, cuPointerGetAttribute(pp(&mut ord), ATTR_DEVICE_ORDINAL, d));
    cx.val_if(r, "d_ordinal", ord);
    let r = rec!(cx, cuPointerGetAttribute(pp(&mut c), ATTR_CONTEXT, h));
    cx.val_if(r, "h_ctx", who(c, a, b));
    let mut dp = 0u64;
    let r = rec!(cx, cuPointerGetAttribute(pp(&mut dp), ATTR_DEVICE_POINTER, h));
    cx.val_if(r, "h_dptr", if dp == h { "same" } else { "other" });
    let mut managed = 0u32; // a boolean: some drivers may write fewer than 4 bytes
    let r = rec!(cx, cuPointerGetAttribute(pp(&mut managed), ATTR_IS_MANAGED, mg));
    cx.val_if(r, "mg_managed", managed);
    let attrs = [ATTR_CONTEXT, ATTR_MEMORY_TYPE, ATTR_RANGE_SIZE];
    let (mut ac, mut at, mut asz): (P, u32, usize) = (null_mut(), 99, 0);
    let mut data = [pp(&mut ac), pp(&mut at), pp(&mut asz)];
    let r = rec!(cx, cuPointerGetAttributes(3, attrs.as_ptr(), data.as_mut_ptr(), d + 16));
    cx.val_if(r, "attrs", format!("{}/{at}/{asz}", who(ac, a, b)));
    let (mut base, mut size) = (0u64, 0usize);
    let r = rec!(cx, cuMemGetAddressRange_v2(&mut base, &mut size, d + 16));
    cx.val_if(r, "range", format!("{}/{size}", if base == d { "base" } else { "other" }));
    let r = rec!(cx, cuMemHostGetDevicePointer_v2(&mut dp, h as P, 0));
    cx.val_if(r, "h_devptr", if dp == h { "same" } else { "other" });
    let mut flags = 99u32;
    let r = rec!(cx, cuMemHostGetFlags(&mut flags, h as P));
    cx.val_if(r, "h_flags", flags);
    Ok(())
}

fn managed(cx: &mut Cx, st: State) -> Result<(), String> {
    let a = cx.created()?;
    let s = cx.stream(0)?;
    let mut mg = 0u64;
    setup!(cx, cuMemAllocManaged(&mut mg, 4096, 1));
    let _b = cx.enter(a, st)?;
    rec!(cx, cuMemPrefetchAsync(mg, 4096, 0, s));
    rec!(cx, cuMemPrefetchAsync_v2(mg, 4096, LOC_DEVICE0, 0, s));
    rec!(cx, cuMemAdvise(mg, 4096, 1, 0));
    rec!(cx, cuMemAdvise_v2(mg, 4096, 1, LOC_DEVICE0));
    rec!(cx, cuStreamAttachMemAsync(s, mg, 0, 1));
    rec!(cx, cuStreamSynchronize(s));
    cx.leave(a, st)?;
    // Still the same memory: a host write through the managed pointer reads back.
    let r = call!(cx, cuMemsetD8_v2(mg, 0x3c, 4096));
    call!(cx, cuCtxSynchronize());
    // SAFETY: managed memory is host-accessible after a synchronise.
    let host = unsafe { std::slice::from_raw_parts(mg as *const u8, 4096) };
    cx.val("readback", ok(r == 0 && all_eq(host, 0x3c)));
    Ok(())
}

// ---------------------------------------------------------------- modules, functions

fn module(cx: &mut Cx, st: State) -> Result<(), String> {
    let a = cx.created()?;
    let m = cx.module()?;
    let m2 = cx.module()?;
    let f0 = cx.function(m, "fill_hash")?;
    let name = CString::new("fill_hash").unwrap();
    let global = CString::new("d_bias").unwrap();
    let (mut g0, mut sz) = (0u64, 0usize);
    setup!(cx, cuModuleGetGlobal_v2(&mut g0, &mut sz, m, global.as_ptr()));
    let img = cx.images[0].as_ptr() as *const c_void;
    let _b = cx.enter(a, st)?;
    let mut f: P = null_mut();
    let r = rec!(cx, cuModuleGetFunction(&mut f, m, name.as_ptr()));
    cx.val_if(r, "function", if f == f0 { "same" } else { "other" });
    let (mut g, mut gsz) = (0u64, 0usize);
    let r = rec!(cx, cuModuleGetGlobal_v2(&mut g, &mut gsz, m, global.as_ptr()));
    cx.val_if(r, "global", format!("{}/{gsz}", if g == g0 { "same" } else { "other" }));
    let mut count = 0u32;
    let r = rec!(cx, cuModuleGetFunctionCount(&mut count, m));
    cx.val_if(r, "count", count);
    // A module loaded in this state (it goes to the current context, if any).
    let mut m3: P = null_mut();
    rec!(cx, cuModuleLoadData(&mut m3, img));
    rec!(cx, cuModuleUnload(m2));
    Ok(())
}

fn func(cx: &mut Cx, st: State) -> Result<(), String> {
    let a = cx.created()?;
    let m = cx.module()?;
    let fb = cx.function(m, "bounded")?;
    let fd = cx.function(m, "dyn_shared")?;
    let ff = cx.function(m, "fill_hash")?;
    let _b = cx.enter(a, st)?;
    let mut v = -1;
    let r = rec!(cx, cuFuncGetAttribute(&mut v, 0, fb));
    cx.val_if(r, "max_threads", v);
    let r_set = rec!(cx, cuFuncSetAttribute(fd, 8, 65536));
    rec!(cx, cuFuncSetCacheConfig(ff, 0));
    rec!(cx, cuFuncSetSharedMemConfig(ff, 0));
    let mut name: *const c_char = std::ptr::null();
    let r = rec!(cx, cuFuncGetName(&mut name, ff));
    if r == 0 && !name.is_null() {
        // SAFETY: the driver returns a NUL-terminated name that lives as long as the module.
        let s = unsafe { CStr::from_ptr(name) }.to_string_lossy().into_owned();
        cx.val("name", s);
    }
    let mut fm: P = null_mut();
    let r = rec!(cx, cuFuncGetModule(&mut fm, ff));
    cx.val_if(r, "module", if fm == m { "same" } else { "other" });
    cx.leave(a, st)?;
    let mut dynmax = -1;
    call!(cx, cuFuncGetAttribute(&mut dynmax, 8, fd));
    cx.effect(r_set, "set_attribute", dynmax == 65536);
    Ok(())
}

fn occupancy(cx: &mut Cx, st: State) -> Result<(), String> {
    let a = cx.created()?;
    let m = cx.module()?;
    let f = cx.function(m, "fill_hash")?;
    let _b = cx.enter(a, st)?;
    let mut n = -1;
    let r = rec!(cx, cuOccupancyMaxActiveBlocksPerMultiprocessor(&mut n, f, 128, 0));
    cx.val_if(r, "blocks", n);
    let r = rec!(cx, cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(&mut n, f, 128, 0, 0));
    cx.val_if(r, "blocks_flags", n);
    let (mut g, mut bs) = (-1, -1);
    let r = rec!(cx, cuOccupancyMaxPotentialBlockSize(&mut g, &mut bs, f, None, 0, 0));
    cx.val_if(r, "potential", format!("{g}/{bs}"));
    let r = rec!(cx, cuOccupancyMaxPotentialBlockSizeWithFlags(&mut g, &mut bs, f, None, 0, 0, 0));
    cx.val_if(r, "potential_flags", format!("{g}/{bs}"));
    Ok(())
}

fn launch(cx: &mut Cx, st: State) -> Result<(), String> {
    let a = cx.created()?;
    let m = cx.module()?;
    let f = cx.function(m, "fill_hash")?;
    let s = cx.stream(0)?;
    let mut outs = [0u64; 4];
    for o in outs.iter_mut() {
        *o = cx.zeroed(64 * 4)?;
    }
    let mut n = 64u32;
    let [mut o0, mut o1, mut o2, mut o3] = outs;
    let mut p0 = [pp(&mut o0), pp(&mut n)];
    let mut p1 = [pp(&mut o1), pp(&mut n)];
    let mut p2 = [pp(&mut o2), pp(&mut n)];
    let mut p3 = [pp(&mut o3), pp(&mut n)];
    let cfg = LaunchConfig {
        grid_dim_x: 1,
        grid_dim_y: 1,
        grid_dim_z: 1,
        block_dim_x: 64,
        block_dim_y: 1,
        block_dim_z: 1,
        shared_mem_bytes: 0,
        h_stream: s,
        attrs: null_mut(),
        num_attrs: 0,
    };
    let _b = cx.enter(a, st)?;
    let r = [
        rec!(cx, cuLaunchKernel(f, 1, 1, 1, 64, 1, 1, 0, s, p0.as_mut_ptr(), null_mut())),
        rec!(cx, cuLaunchKernel_ptsz(f, 1, 1, 1, 64, 1, 1, 0, s, p1.as_mut_ptr(), null_mut())),
        rec!(cx, cuLaunchKernelEx(&cfg, f, p2.as_mut_ptr(), null_mut())),
        rec!(cx, cuLaunchKernelEx_ptsz(&cfg, f, p3.as_mut_ptr(), null_mut())),
    ];
    rec!(cx, cuStreamSynchronize(s));
    cx.leave(a, st)?;
    call!(cx, cuStreamSynchronize(s));
    for (k, key) in ["kernel", "kernel_ptsz", "ex", "ex_ptsz"].iter().enumerate() {
        let v = cx.dtoh_u32(outs[k], 64)?;
        cx.effect(r[k], key, v.iter().enumerate().all(|(i, &w)| w == hash(i as u32)));
    }
    Ok(())
}

// ---------------------------------------------------------------- streams and events

fn stream(cx: &mut Cx, st: State) -> Result<(), String> {
    let a = cx.created()?;
    let mut s: P = null_mut();
    setup!(cx, cuStreamCreateWithPriority(&mut s, 1, -2));
    let s2 = cx.stream(0)?;
    let s3 = cx.stream(0)?;
    let ev = cx.event()?;
    setup!(cx, cuEventRecord(ev, s));
    setup!(cx, cuStreamSynchronize(s));
    let mut id0 = 0u64;
    let have_id = call!(cx, cuStreamGetId(s, &mut id0)) == 0;
    let b = cx.enter(a, st)?;
    rec!(cx, cuStreamQuery(s));
    rec!(cx, cuStreamQuery_ptsz(s));
    rec!(cx, cuStreamSynchronize(s));
    rec!(cx, cuStreamSynchronize_ptsz(s));
    rec!(cx, cuStreamWaitEvent(s, ev, 0));
    rec!(cx, cuStreamWaitEvent_ptsz(s, ev, 0));
    let mut prio = 99;
    let r = rec!(cx, cuStreamGetPriority(s, &mut prio));
    cx.val_if(r, "priority", prio);
    let mut flags = 99u32;
    let r = rec!(cx, cuStreamGetFlags(s, &mut flags));
    cx.val_if(r, "flags", flags);
    let mut c: P = null_mut();
    let r = rec!(cx, cuStreamGetCtx(s, &mut c));
    cx.val_if(r, "ctx", who(c, a, b));
    let mut id = 0u64;
    let r = rec!(cx, cuStreamGetId(s, &mut id));
    cx.val_if(r, "id", if have_id && id == id0 { "same" } else { "other" });
    let mut capturing = 99i32;
    let r = rec!(cx, cuStreamIsCapturing(s, &mut capturing));
    cx.val_if(r, "capturing", capturing);
    rec!(cx, cuStreamDestroy_v2(s2));
    rec!(cx, cuStreamDestroy(s3));
    Ok(())
}

/// Filled by the callbacks: -1 until run; a stream callback stores its status, a host
/// function 0.
static SLOTS: [AtomicI32; 4] = [AtomicI32::new(-1), AtomicI32::new(-1), AtomicI32::new(-1), AtomicI32::new(-1)];

unsafe extern "C" fn stream_cb(_s: P, status: R, user: P) {
    // SAFETY: user is &SLOTS[k], a static.
    unsafe { &*(user as *const AtomicI32) }.store(status, Ordering::SeqCst);
}

unsafe extern "C" fn host_fn(user: P) {
    // SAFETY: user is &SLOTS[k], a static.
    unsafe { &*(user as *const AtomicI32) }.store(0, Ordering::SeqCst);
}

fn callbacks(cx: &mut Cx, st: State) -> Result<(), String> {
    let a = cx.created()?;
    let s = cx.stream(0)?;
    let slot = |k: usize| &SLOTS[k] as *const AtomicI32 as P;
    let _b = cx.enter(a, st)?;
    let r = [
        rec!(cx, cuStreamAddCallback(s, Some(stream_cb), slot(0), 0)),
        rec!(cx, cuStreamAddCallback_ptsz(s, Some(stream_cb), slot(1), 0)),
        rec!(cx, cuLaunchHostFunc(s, Some(host_fn), slot(2))),
        rec!(cx, cuLaunchHostFunc_ptsz(s, Some(host_fn), slot(3))),
    ];
    rec!(cx, cuStreamSynchronize(s));
    cx.leave(a, st)?;
    call!(cx, cuStreamSynchronize(s));
    for (k, key) in ["callback", "callback_ptsz", "host_func", "host_func_ptsz"].iter().enumerate() {
        cx.effect(r[k], key, SLOTS[k].load(Ordering::SeqCst) == 0);
    }
    Ok(())
}

fn event(cx: &mut Cx, st: State) -> Result<(), String> {
    let a = cx.created()?;
    let s = cx.stream(0)?;
    let (e1, e2, e3, e4) = (cx.event()?, cx.event()?, cx.event()?, cx.event()?);
    let _b = cx.enter(a, st)?;
    rec!(cx, cuEventRecord(e1, s));
    rec!(cx, cuEventRecord_ptsz(e2, s));
    rec!(cx, cuEventRecordWithFlags(e2, s, 0));
    rec!(cx, cuEventSynchronize(e2));
    rec!(cx, cuEventQuery(e1));
    let mut ms = -1f32;
    let r = rec!(cx, cuEventElapsedTime(&mut ms, e1, e2));
    cx.val_if(r, "elapsed", ok(ms >= 0.0));
    ms = -1.0;
    let r = rec!(cx, cuEventElapsedTime_v2(&mut ms, e1, e2));
    cx.val_if(r, "elapsed_v2", ok(ms >= 0.0));
    rec!(cx, cuEventDestroy_v2(e3));
    rec!(cx, cuEventDestroy(e4));
    Ok(())
}
