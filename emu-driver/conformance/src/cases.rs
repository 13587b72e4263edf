//! The named cases. Each runs a short call sequence in a fresh process and reports one
//! line: `name: code[,code...] [key=value ...]`. Codes are CUresult numbers in call order;
//! values are normalised (no addresses, timings or free-memory figures) so that two runs,
//! or a real and an emulated driver, can be compared line by line.
//!
//! A case whose setup fails (no device, module not loadable, ...) prints
//! `name: SETUP step=code`; a case that needs an entry point the library does not export
//! prints `MISSING(symbol)` in place of that code.

use crate::api::{Api, P, R};
use crate::cx::{fmt_code, hash, pp, Case, Cx, MISSING};
use crate::opts::Opts;
use std::ffi::{c_char, c_void, CStr, CString};
use std::ptr::null_mut;

mod ctxres;
mod devres;
mod hostile;
mod texture;
mod vmm;

/// An address no allocation of either driver uses: canonical on x86-64 (so a host access
/// faults with this address), below the PIE/heap and mmap ranges; not mapped.
const UNKNOWN_DPTR: u64 = 0x0000_3ead_0000_0000;

// ---------------------------------------------------------------- init and devices

fn init_0(cx: &mut Cx) -> Result<(), String> {
    rec!(cx, cuInit(0));
    Ok(())
}

fn init_1(cx: &mut Cx) -> Result<(), String> {
    rec!(cx, cuInit(1));
    rec!(cx, cuInit(0));
    Ok(())
}

fn device_get(cx: &mut Cx) -> Result<(), String> {
    setup!(cx, cuInit(0));
    let mut d = 7;
    rec!(cx, cuDeviceGet(&mut d, -1));
    rec!(cx, cuDeviceGet(&mut d, 1));
    let r = rec!(cx, cuDeviceGet(&mut d, 0));
    if r == 0 {
        cx.val("dev0", d);
    }
    Ok(())
}

fn device_attributes(cx: &mut Cx) -> Result<(), String> {
    setup!(cx, cuInit(0));
    for id in [0, 1, 8, 75, 97, 200] {
        let mut v = -12345;
        let r = rec!(cx, cuDeviceGetAttribute(&mut v, id, 0));
        cx.val(&format!("a{id}"), if r == 0 { v.to_string() } else { "-".into() });
    }
    Ok(())
}

fn device_name(cx: &mut Cx) -> Result<(), String> {
    setup!(cx, cuInit(0));
    let mut buf = [0 as c_char; 256];
    let r = rec!(cx, cuDeviceGetName(buf.as_mut_ptr(), 256, 0));
    if r == 0 {
        // SAFETY: the driver wrote a NUL-terminated name into 256 bytes.
        let s = unsafe { CStr::from_ptr(buf.as_ptr()) }.to_string_lossy().replace(' ', "_");
        cx.val("name", s);
    }
    rec!(cx, cuDeviceGetName(buf.as_mut_ptr(), 256, 5));
    Ok(())
}

fn no_context(cx: &mut Cx) -> Result<(), String> {
    setup!(cx, cuInit(0));
    let mut d = 0u64;
    rec!(cx, cuMemAlloc_v2(&mut d, 1024));
    rec!(cx, cuCtxSynchronize());
    let mut dev = -7;
    rec!(cx, cuCtxGetDevice(&mut dev));
    Ok(())
}

fn not_initialized(cx: &mut Cx) -> Result<(), String> {
    let mut d = 0;
    rec!(cx, cuDeviceGet(&mut d, 0));
    let mut m = 0u64;
    rec!(cx, cuMemAlloc_v2(&mut m, 16));
    Ok(())
}

// ---------------------------------------------------------------- contexts

fn primary_ctx(cx: &mut Cx) -> Result<(), String> {
    setup!(cx, cuInit(0));
    let (mut flags, mut active) = (99u32, 99i32);
    rec!(cx, cuDevicePrimaryCtxGetState(0, &mut flags, &mut active));
    cx.val("before", format!("{flags}/{active}"));
    let mut ctx: P = null_mut();
    rec!(cx, cuDevicePrimaryCtxRetain(&mut ctx, 0));
    rec!(cx, cuDevicePrimaryCtxGetState(0, &mut flags, &mut active));
    cx.val("retained", format!("{flags}/{active}"));
    let mut cur: P = null_mut();
    rec!(cx, cuCtxGetCurrent(&mut cur));
    cx.val("current_is_primary", cur == ctx && !ctx.is_null());
    rec!(cx, cuDevicePrimaryCtxRelease_v2(0));
    rec!(cx, cuDevicePrimaryCtxGetState(0, &mut flags, &mut active));
    cx.val("released", format!("{flags}/{active}"));
    Ok(())
}

fn ctx_stack(cx: &mut Cx) -> Result<(), String> {
    setup!(cx, cuInit(0));
    let mut ctx: P = null_mut();
    rec!(cx, cuCtxCreate_v2(&mut ctx, 0, 0));
    let mut cur: P = null_mut();
    rec!(cx, cuCtxGetCurrent(&mut cur));
    cx.val("current_is_new", cur == ctx && !ctx.is_null());
    let mut popped: P = null_mut();
    rec!(cx, cuCtxPopCurrent_v2(&mut popped));
    cx.val("popped_is_new", popped == ctx);
    rec!(cx, cuCtxGetCurrent(&mut cur));
    cx.val("current_after_pop_null", cur.is_null());
    let mut p2: P = null_mut();
    rec!(cx, cuCtxPopCurrent_v2(&mut p2));
    rec!(cx, cuCtxPushCurrent_v2(ctx));
    rec!(cx, cuCtxGetCurrent(&mut cur));
    cx.val("current_after_push", cur == ctx);
    let mut dev = -1;
    rec!(cx, cuCtxGetDevice(&mut dev));
    rec!(cx, cuCtxDestroy_v2(ctx));
    rec!(cx, cuCtxGetCurrent(&mut cur));
    cx.val("current_after_destroy_null", cur.is_null());
    Ok(())
}

fn legacy_mem_alloc(cx: &mut Cx) -> Result<(), String> {
    cx.created()?;
    let mut d = 0u32;
    let r = rec!(cx, cuMemAlloc(&mut d, 1024));
    if r == 0 && d != 0 {
        rec!(cx, cuMemFree(d));
    }
    Ok(())
}

fn legacy_module_get_global(cx: &mut Cx) -> Result<(), String> {
    cx.created()?;
    let m = cx.module()?;
    let (mut d, mut sz) = (0u32, 0u32);
    let name = CString::new("c_table").unwrap();
    rec!(cx, cuModuleGetGlobal(&mut d, &mut sz, m, name.as_ptr()));
    Ok(())
}

fn legacy_memcpy_htod(cx: &mut Cx) -> Result<(), String> {
    cx.created()?;
    let d = cx.alloc(64)?;
    let src = [1u8; 16];
    rec!(cx, cuMemcpyHtoD(d as u32, src.as_ptr() as *const c_void, 16));
    Ok(())
}

fn legacy_ctx_create(cx: &mut Cx) -> Result<(), String> {
    cx.created()?;
    let mut c2: P = null_mut();
    let r = rec!(cx, cuCtxCreate(&mut c2, 0, 0));
    if r == 0 && !c2.is_null() {
        rec!(cx, cuCtxDestroy_v2(c2));
    }
    Ok(())
}

fn legacy_total_mem(cx: &mut Cx) -> Result<(), String> {
    cx.created()?;
    let mut t = 0u32;
    rec!(cx, cuDeviceTotalMem(&mut t, 0));
    let mut t2 = 0usize;
    rec!(cx, cuDeviceTotalMem_v2(&mut t2, 0));
    cx.val("v2_gib", t2 >> 30);
    Ok(())
}

// ---------------------------------------------------------------- memory

fn mem_alloc_sizes(cx: &mut Cx) -> Result<(), String> {
    cx.primary()?;
    let mut d = 0x55u64;
    rec!(cx, cuMemAlloc_v2(&mut d, 0));
    let mut h = 0u64;
    rec!(cx, cuMemAlloc_v2(&mut h, 1usize << 50));
    rec!(cx, cuMemAlloc_v2(null_mut(), 16));
    Ok(())
}

fn mem_free(cx: &mut Cx) -> Result<(), String> {
    cx.primary()?;
    let d = cx.alloc(4096)?;
    rec!(cx, cuMemFree_v2(d + 16));
    rec!(cx, cuMemFree_v2(d));
    rec!(cx, cuMemFree_v2(d));
    rec!(cx, cuMemFree_v2(0));
    Ok(())
}

fn memcpy_htod(cx: &mut Cx) -> Result<(), String> {
    cx.primary()?;
    let d = cx.alloc(256)?;
    let src = vec![0xabu8; 512];
    let s = src.as_ptr() as *const c_void;
    rec!(cx, cuMemcpyHtoD_v2(d, s, 256));
    rec!(cx, cuMemcpyHtoD_v2(d + 128, s, 128));
    rec!(cx, cuMemcpyHtoD_v2(d, s, 257));
    rec!(cx, cuMemcpyHtoD_v2(d + 200, s, 57));
    rec!(cx, cuMemcpyHtoD_v2(UNKNOWN_DPTR, s, 16));
    rec!(cx, cuMemcpyHtoD_v2(d, std::ptr::null(), 16));
    rec!(cx, cuMemcpyHtoD_v2(d, s, 0));
    Ok(())
}

fn memcpy_dtoh(cx: &mut Cx) -> Result<(), String> {
    cx.primary()?;
    let d = cx.alloc(256)?;
    let mut dst = vec![0u8; 512];
    let p = dst.as_mut_ptr() as P;
    rec!(cx, cuMemsetD8_v2(d, 0x5a, 256));
    rec!(cx, cuMemcpyDtoH_v2(p, d, 256));
    cx.val("bytes_ok", dst[..256].iter().all(|&b| b == 0x5a));
    rec!(cx, cuMemcpyDtoH_v2(p, d, 257));
    rec!(cx, cuMemcpyDtoH_v2(p, UNKNOWN_DPTR, 16));
    rec!(cx, cuMemcpyDtoH_v2(null_mut(), d, 16));
    Ok(())
}

fn memcpy_dtod(cx: &mut Cx) -> Result<(), String> {
    cx.primary()?;
    let a = cx.alloc(256)?;
    let b = cx.alloc(256)?;
    rec!(cx, cuMemsetD8_v2(a, 0x11, 256));
    rec!(cx, cuMemcpyDtoD_v2(b, a, 256));
    let v = cx.dtoh_u32(b, 64)?;
    cx.val("words_ok", v.iter().all(|&w| w == 0x1111_1111));
    rec!(cx, cuMemcpyDtoD_v2(b, a, 257));
    rec!(cx, cuMemcpyDtoD_v2(b + 1, a, 256));
    rec!(cx, cuMemcpyDtoD_v2(b, UNKNOWN_DPTR, 16));
    rec!(cx, cuMemcpyDtoD_v2(UNKNOWN_DPTR, a, 16));
    Ok(())
}

fn memset(cx: &mut Cx) -> Result<(), String> {
    cx.primary()?;
    let d = cx.alloc(256)?;
    rec!(cx, cuMemsetD8_v2(d, 0x7f, 256));
    rec!(cx, cuMemsetD16_v2(d, 0x1234, 128));
    rec!(cx, cuMemsetD32_v2(d, 0xdeadbeef, 64));
    let v = cx.dtoh_u32(d, 64)?;
    cx.val("d32_ok", v.iter().all(|&w| w == 0xdeadbeef));
    rec!(cx, cuMemsetD8_v2(d, 1, 257));
    rec!(cx, cuMemsetD16_v2(d, 1, 129));
    rec!(cx, cuMemsetD32_v2(d, 1, 65));
    rec!(cx, cuMemsetD16_v2(d + 1, 1, 4));
    rec!(cx, cuMemsetD32_v2(d + 2, 1, 4));
    rec!(cx, cuMemsetD8_v2(UNKNOWN_DPTR, 1, 4));
    Ok(())
}

fn alloc_pitch(cx: &mut Cx) -> Result<(), String> {
    cx.primary()?;
    for es in [3u32, 4, 8, 16] {
        let (mut d, mut pitch) = (0u64, 0usize);
        let r = rec!(cx, cuMemAllocPitch_v2(&mut d, &mut pitch, 100, 4, es));
        cx.val(&format!("pitch{es}"), if r == 0 { pitch.to_string() } else { "-".into() });
    }
    Ok(())
}

fn host_alloc(cx: &mut Cx) -> Result<(), String> {
    cx.primary()?;
    let mut h: P = null_mut();
    let r = rec!(cx, cuMemHostAlloc(&mut h, 4096, 0));
    if r == 0 {
        // SAFETY: 4096 writable bytes of pinned host memory.
        unsafe { std::ptr::write_bytes(h as *mut u8, 0x3c, 4096) };
        let d = cx.alloc(4096)?;
        rec!(cx, cuMemcpyHtoD_v2(d, h, 4096));
        rec!(cx, cuMemFreeHost(h));
        rec!(cx, cuMemFreeHost(d as P));
    }
    Ok(())
}

fn alloc_async(cx: &mut Cx) -> Result<(), String> {
    cx.primary()?;
    let mut s: P = null_mut();
    setup!(cx, cuStreamCreate(&mut s, 1));
    let mut d = 0u64;
    rec!(cx, cuMemAllocAsync(&mut d, 4096, s));
    rec!(cx, cuMemsetD32Async(d, 7, 1024, s));
    rec!(cx, cuMemFreeAsync(d, s));
    rec!(cx, cuStreamSynchronize(s));
    rec!(cx, cuStreamDestroy_v2(s));
    Ok(())
}

fn pointer_attribute(cx: &mut Cx) -> Result<(), String> {
    cx.primary()?;
    let d = cx.alloc(256)?;
    let mut h: P = null_mut();
    setup!(cx, cuMemHostAlloc(&mut h, 256, 0));
    let local = [0u8; 64];
    for (k, ptr) in [("device", d), ("pinned", h as u64), ("unknown", local.as_ptr() as u64)] {
        let mut t = 0u32;
        let r = rec!(cx, cuPointerGetAttribute(pp(&mut t), 2, ptr));
        cx.val(k, if r == 0 { t.to_string() } else { "-".into() });
    }
    Ok(())
}

// ---------------------------------------------------------------- streams and events

fn stream_flags(cx: &mut Cx) -> Result<(), String> {
    cx.primary()?;
    for f in [0u32, 1, 2] {
        let mut s: P = null_mut();
        let r = rec!(cx, cuStreamCreate(&mut s, f));
        if r == 0 {
            let mut got = 99u32;
            call!(cx, cuStreamGetFlags(s, &mut got));
            cx.val(&format!("flags{f}"), got);
            call!(cx, cuStreamDestroy_v2(s));
        }
    }
    Ok(())
}

fn stream_priority(cx: &mut Cx) -> Result<(), String> {
    cx.primary()?;
    let (mut least, mut greatest) = (99, 99);
    rec!(cx, cuCtxGetStreamPriorityRange(&mut least, &mut greatest));
    cx.val("range", format!("{least}/{greatest}"));
    for p in [-100, 100, -1] {
        let mut s: P = null_mut();
        let r = rec!(cx, cuStreamCreateWithPriority(&mut s, 1, p));
        if r == 0 {
            let mut got = 99;
            rec!(cx, cuStreamGetPriority(s, &mut got));
            cx.val(&format!("p{p}"), got);
            call!(cx, cuStreamDestroy_v2(s));
        }
    }
    Ok(())
}

fn stream_query(cx: &mut Cx) -> Result<(), String> {
    cx.primary()?;
    let mut s: P = null_mut();
    setup!(cx, cuStreamCreate(&mut s, 0));
    rec!(cx, cuStreamQuery(s));
    rec!(cx, cuStreamQuery(null_mut()));
    rec!(cx, cuStreamDestroy_v2(s));
    Ok(())
}

/// Measured on an H200 (driver 580.159.04): the second destroy crashes the process
/// (SIGSEGV), so this is its own case.
fn stream_destroy_twice(cx: &mut Cx) -> Result<(), String> {
    cx.primary()?;
    let mut s: P = null_mut();
    setup!(cx, cuStreamCreate(&mut s, 0));
    rec!(cx, cuStreamDestroy_v2(s));
    rec!(cx, cuStreamDestroy_v2(s));
    Ok(())
}

fn event_timing(cx: &mut Cx) -> Result<(), String> {
    cx.primary()?;
    let (mut a, mut b): (P, P) = (null_mut(), null_mut());
    setup!(cx, cuEventCreate(&mut a, 0));
    setup!(cx, cuEventCreate(&mut b, 0));
    let mut ms = -1f32;
    rec!(cx, cuEventElapsedTime_v2(&mut ms, a, b));
    rec!(cx, cuEventQuery(a));
    rec!(cx, cuEventRecord(a, null_mut()));
    rec!(cx, cuEventRecord(b, null_mut()));
    rec!(cx, cuEventSynchronize(b));
    let r = rec!(cx, cuEventElapsedTime_v2(&mut ms, a, b));
    cx.val("elapsed", if r == 0 && ms >= 0.0 { "ok" } else { "bad" });
    rec!(cx, cuEventQuery(b));
    // Disable timing (CU_EVENT_DISABLE_TIMING = 2): recorded, but no elapsed time.
    let (mut c, mut e): (P, P) = (null_mut(), null_mut());
    setup!(cx, cuEventCreate(&mut c, 2));
    setup!(cx, cuEventCreate(&mut e, 2));
    rec!(cx, cuEventRecord(c, null_mut()));
    rec!(cx, cuEventRecord(e, null_mut()));
    rec!(cx, cuEventSynchronize(e));
    rec!(cx, cuEventElapsedTime_v2(&mut ms, c, e));
    for ev in [a, b, c, e] {
        call!(cx, cuEventDestroy_v2(ev));
    }
    Ok(())
}

struct HostFnSlot {
    alloc: Option<unsafe extern "C" fn(*mut u64, usize) -> R>,
    inner: R,
    ran: bool,
}

unsafe extern "C" fn host_fn(user: P) {
    // SAFETY: user is the &mut HostFnSlot the case passed; the case waits for the stream.
    let slot = unsafe { &mut *(user as *mut HostFnSlot) };
    slot.ran = true;
    let mut d = 0u64;
    slot.inner = match slot.alloc {
        // SAFETY: cuMemAlloc_v2's signature.
        Some(f) => unsafe { f(&mut d, 64) },
        None => MISSING,
    };
}

fn launch_host_func(cx: &mut Cx) -> Result<(), String> {
    cx.primary()?;
    let mut s: P = null_mut();
    setup!(cx, cuStreamCreate(&mut s, 0));
    let mut slot = HostFnSlot { alloc: cx.api.cuMemAlloc_v2, inner: -1, ran: false };
    rec!(cx, cuLaunchHostFunc(s, Some(host_fn), pp(&mut slot)));
    rec!(cx, cuStreamSynchronize(s));
    cx.val("ran", slot.ran);
    cx.val("inner", fmt_code(slot.inner));
    Ok(())
}

// ---------------------------------------------------------------- modules

fn module_garbage(cx: &mut Cx) -> Result<(), String> {
    cx.primary()?;
    let mut img = vec![0u8; 4096];
    for (i, b) in img.iter_mut().take(256).enumerate() {
        *b = (i as u8).wrapping_mul(37).wrapping_add(11) | 1;
    }
    let mut m: P = null_mut();
    rec!(cx, cuModuleLoadData(&mut m, img.as_ptr() as *const c_void));
    Ok(())
}

/// Measured on an H200 (driver 580.159.04): the real driver does not return (the case
/// reads TIMEOUT); the emulated one must answer an error code.
fn module_truncated(cx: &mut Cx) -> Result<(), String> {
    cx.primary()?;
    let good = cx.read_file(cx.o.fatbin.as_ref(), "--fatbin")?;
    // The first 100 bytes, then zeros (well past the size the headers promise, so a
    // reader that trusts them stays inside the buffer): the entries are not there.
    let mut img = vec![0u8; good.len() + 65536];
    img[..100].copy_from_slice(&good[..100]);
    let mut m: P = null_mut();
    rec!(cx, cuModuleLoadData(&mut m, img.as_ptr() as *const c_void));
    Ok(())
}

fn module_nosm90(cx: &mut Cx) -> Result<(), String> {
    cx.primary()?;
    let img = cx.read_file(cx.o.fatbin_nosm90.as_ref(), "--fatbin-nosm90")?;
    let mut m: P = null_mut();
    rec!(cx, cuModuleLoadData(&mut m, img.as_ptr() as *const c_void));
    Ok(())
}

/// An image next to --fatbin (build.sh makes them all in one directory).
fn sibling(cx: &Cx, name: &str) -> Result<Vec<u8>, String> {
    let f = cx.o.fatbin.as_ref().ok_or_else(|| "SETUP needs --fatbin".to_string())?;
    let p = std::path::Path::new(f).with_file_name(name).to_string_lossy().into_owned();
    cx.read_file(Some(&p), name)
}

/// PTX of a newer ISA than the driver's (the PyPI nvcc's .version), as text and as the
/// only entry of a fatbin: a driver JIT-compiles only PTX up to its own ISA version.
fn module_ptx_newer(cx: &mut Cx) -> Result<(), String> {
    cx.primary()?;
    for name in ["newer.ptx", "ptx90_only.fatbin"] {
        let img = sibling(cx, name)?;
        let mut m: P = null_mut();
        rec!(cx, cuModuleLoadData(&mut m, img.as_ptr() as *const c_void));
    }
    Ok(())
}

fn module_good(cx: &mut Cx) -> Result<(), String> {
    cx.primary()?;
    let img = cx.read_file(cx.o.fatbin.as_ref(), "--fatbin")?;
    let mut m: P = null_mut();
    rec!(cx, cuModuleLoadData(&mut m, img.as_ptr() as *const c_void));
    let mut m2: P = null_mut();
    rec!(cx, cuModuleLoadData(&mut m2, img.as_ptr() as *const c_void));
    cx.val("distinct", m != m2);
    rec!(cx, cuModuleUnload(m2));
    rec!(cx, cuModuleUnload(m));
    Ok(())
}

fn module_get_function(cx: &mut Cx) -> Result<(), String> {
    cx.primary()?;
    let m = cx.module()?;
    let mut f: P = null_mut();
    let missing = CString::new("no_such_kernel").unwrap();
    rec!(cx, cuModuleGetFunction(&mut f, m, missing.as_ptr()));
    let good = CString::new("fill_hash").unwrap();
    rec!(cx, cuModuleGetFunction(&mut f, m, good.as_ptr()));
    rec!(cx, cuModuleGetFunction(&mut f, null_mut(), good.as_ptr()));
    Ok(())
}

fn module_get_global(cx: &mut Cx) -> Result<(), String> {
    cx.primary()?;
    let m = cx.module()?;
    for name in ["c_table", "d_bias", "no_such_global"] {
        let c = CString::new(name).unwrap();
        let (mut d, mut sz) = (0u64, 0usize);
        let r = rec!(cx, cuModuleGetGlobal_v2(&mut d, &mut sz, m, c.as_ptr()));
        if r == 0 {
            cx.val(&format!("{name}_size"), sz);
        }
    }
    // The table's contents as initialised in the source.
    let c = CString::new("c_table").unwrap();
    let (mut d, mut sz) = (0u64, 0usize);
    if call!(cx, cuModuleGetGlobal_v2(&mut d, &mut sz, m, c.as_ptr())) == 0 {
        let v = cx.dtoh_u32(d, 32)?;
        cx.val("c_table_1_8", format!("{:#x}/{:#x}", v[1], v[8]));
    }
    Ok(())
}

fn func_attributes(cx: &mut Cx) -> Result<(), String> {
    cx.primary()?;
    let m = cx.module()?;
    let f = cx.function(m, "bounded")?;
    let mut v = -1;
    let r = rec!(cx, cuFuncGetAttribute(&mut v, 0, f));
    cx.val("max_threads", if r == 0 { v.to_string() } else { "-".into() });
    let r = rec!(cx, cuFuncGetAttribute(&mut v, 4, f));
    cx.val("regs_positive", r == 0 && v > 0);
    let r = rec!(cx, cuFuncGetAttribute(&mut v, 1, f));
    cx.val("static_shared", if r == 0 { v.to_string() } else { "-".into() });
    rec!(cx, cuFuncGetAttribute(&mut v, 9999, f));
    Ok(())
}

fn func_set_attribute(cx: &mut Cx) -> Result<(), String> {
    cx.primary()?;
    let m = cx.module()?;
    let f = cx.function(m, "dyn_shared")?;
    rec!(cx, cuFuncSetAttribute(f, 8, 100000));
    let mut v = -1;
    rec!(cx, cuFuncGetAttribute(&mut v, 8, f));
    cx.val("dyn_max", v);
    rec!(cx, cuFuncSetAttribute(f, 8, 300000));
    Ok(())
}

// ---------------------------------------------------------------- launches

fn launch_good(cx: &mut Cx) -> Result<(), String> {
    cx.primary()?;
    let m = cx.module()?;
    let f = cx.function(m, "fill_hash")?;
    let n = 1000u32;
    let mut d = cx.alloc(1024 * 4)?;
    let mut nn = n;
    let mut params = [pp(&mut d), pp(&mut nn)];
    cx.launch(f, [8, 1, 1], [128, 1, 1], 0, &mut params);
    rec!(cx, cuCtxSynchronize());
    let v = cx.dtoh_u32(d, n as usize)?;
    cx.val("values", if v.iter().enumerate().all(|(i, &w)| w == hash(i as u32)) { "ok" } else { "bad" });
    Ok(())
}

fn launch_bad_dims(cx: &mut Cx) -> Result<(), String> {
    cx.primary()?;
    let m = cx.module()?;
    let f = cx.function(m, "fill_hash")?;
    let mut d = cx.alloc(4096)?;
    let mut n = 0u32;
    let mut params = [pp(&mut d), pp(&mut n)];
    cx.launch(f, [1, 1, 1], [1025, 1, 1], 0, &mut params);
    cx.launch(f, [1, 1, 1], [1, 1, 65], 0, &mut params);
    cx.launch(f, [1, 65536, 1], [1, 1, 1], 0, &mut params);
    cx.launch(f, [1, 1, 1], [0, 1, 1], 0, &mut params);
    rec!(cx, cuCtxSynchronize());
    Ok(())
}

fn launch_dyn_shared(cx: &mut Cx) -> Result<(), String> {
    cx.primary()?;
    let m = cx.module()?;
    let f = cx.function(m, "dyn_shared")?;
    let mut d = cx.alloc(64)?;
    let mut words = 49153u32 / 4;
    let mut params = [pp(&mut d), pp(&mut words)];
    cx.launch(f, [1, 1, 1], [128, 1, 1], 49153, &mut params);
    rec!(cx, cuCtxSynchronize());
    rec!(cx, cuFuncSetAttribute(f, 8, 100000));
    words = 100000 / 4;
    let mut params = [pp(&mut d), pp(&mut words)];
    cx.launch(f, [1, 1, 1], [128, 1, 1], 100000, &mut params);
    rec!(cx, cuCtxSynchronize());
    let v = cx.dtoh_u32(d, 1)?;
    let want = (0..words).fold(0u32, |a, k| a.wrapping_add(k));
    cx.val("sum", if v[0] == want { "ok" } else { "bad" });
    cx.launch(f, [1, 1, 1], [128, 1, 1], 100001, &mut params);
    rec!(cx, cuCtxSynchronize());
    Ok(())
}

fn launch_bounds_exceeded(cx: &mut Cx) -> Result<(), String> {
    cx.primary()?;
    let m = cx.module()?;
    let f = cx.function(m, "bounded")?;
    let mut d = cx.alloc(4096)?;
    let mut params = [pp(&mut d)];
    cx.launch(f, [1, 1, 1], [129, 1, 1], 0, &mut params);
    rec!(cx, cuCtxSynchronize());
    cx.launch(f, [1, 1, 1], [128, 1, 1], 0, &mut params);
    rec!(cx, cuCtxSynchronize());
    let v = cx.dtoh_u32(d, 128)?;
    let ok = v.iter().enumerate().all(|(t, &w)| w == ((t as u32 * 5) % 512) * 3 + 1);
    cx.val("values", if ok { "ok" } else { "bad" });
    Ok(())
}

/// mixed_params(char a, double b, short c, unsigned *out, unsigned d): the buffer layout
/// of the `extra` form follows the ABI alignment of each parameter.
fn mixed_buffer(out: u64) -> Vec<u8> {
    let mut b = vec![0u8; 40];
    b[0] = (-5i8) as u8;
    b[8..16].copy_from_slice(&(-1.5e300f64).to_le_bytes());
    b[16..18].copy_from_slice(&(-1234i16).to_le_bytes());
    b[24..32].copy_from_slice(&out.to_le_bytes());
    b[32..36].copy_from_slice(&0xfeed_beefu32.to_le_bytes());
    b.truncate(36);
    b
}

fn mixed_expected() -> [u32; 5] {
    let bits = (-1.5e300f64).to_bits();
    [(-5i32) as u32, bits as u32, (bits >> 32) as u32, (-1234i32) as u32, 0xfeed_beef]
}

fn launch_params_forms(cx: &mut Cx) -> Result<(), String> {
    cx.primary()?;
    let m = cx.module()?;
    let f = cx.function(m, "mixed_params")?;
    let mut out = cx.alloc(64)?;
    // kernelParams form.
    let (mut a, mut b, mut c, mut dd) = (-5i8, -1.5e300f64, -1234i16, 0xfeed_beefu32);
    let mut params = [pp(&mut a), pp(&mut b), pp(&mut c), pp(&mut out), pp(&mut dd)];
    cx.launch(f, [1, 1, 1], [32, 1, 1], 0, &mut params);
    rec!(cx, cuCtxSynchronize());
    let v = cx.dtoh_u32(out, 5)?;
    cx.val("params", if v[..] == mixed_expected()[..] { "ok" } else { "bad" });
    setup!(cx, cuMemsetD8_v2(out, 0, 64));
    // extra form.
    let mut buf = mixed_buffer(out);
    let mut size = buf.len();
    let mut extra: [P; 5] = [1 as P, buf.as_mut_ptr() as P, 2 as P, pp(&mut size), null_mut()];
    rec!(cx, cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, null_mut(), null_mut(), extra.as_mut_ptr()));
    rec!(cx, cuCtxSynchronize());
    let v = cx.dtoh_u32(out, 5)?;
    cx.val("extra", if v[..] == mixed_expected()[..] { "ok" } else { "bad" });
    // Both forms at once.
    rec!(cx, cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, null_mut(), params.as_mut_ptr(), extra.as_mut_ptr()));
    // Null function.
    rec!(cx, cuLaunchKernel(null_mut(), 1, 1, 1, 32, 1, 1, 0, null_mut(), params.as_mut_ptr(), null_mut()));
    rec!(cx, cuCtxSynchronize());
    Ok(())
}

fn launch_poke(cx: &mut Cx) -> Result<(), String> {
    cx.primary()?;
    let m = cx.module()?;
    let f = cx.function(m, "poke")?;
    let mut d = cx.alloc(64)?;
    let mut params = [pp(&mut d)];
    cx.launch(f, [1, 1, 1], [32, 1, 1], 0, &mut params);
    rec!(cx, cuCtxSynchronize());
    let v = cx.dtoh_u32(d, 1)?;
    cx.val("value", if v[0] == 0x600d_cafe { "ok" } else { "bad" });
    Ok(())
}

// ---------------------------------------------------------------- errors, proc address

fn error_strings(cx: &mut Cx) -> Result<(), String> {
    for code in [0, 1, 700, 710, 9999] {
        let mut s: *const c_char = std::ptr::null();
        let r = rec!(cx, cuGetErrorName(code, &mut s));
        let name = if r == 0 && !s.is_null() {
            // SAFETY: the driver returns a static NUL-terminated string.
            unsafe { CStr::from_ptr(s) }.to_string_lossy().into_owned()
        } else {
            "-".into()
        };
        let mut t: *const c_char = std::ptr::null();
        let r = rec!(cx, cuGetErrorString(code, &mut t));
        let text = if r == 0 && !t.is_null() {
            // SAFETY: as above.
            unsafe { CStr::from_ptr(t) }.to_string_lossy().into_owned()
        } else {
            "-".into()
        };
        cx.val(&format!("e{code}"), format!("{name}|{}", text.replace(' ', "_")));
    }
    Ok(())
}

fn proc_address(cx: &mut Cx) -> Result<(), String> {
    setup!(cx, cuInit(0));
    let probe = |cx: &mut Cx, sym: &str, ver: i32, flags: u64| -> (usize, i32) {
        let c = CString::new(sym).unwrap();
        let mut p: P = null_mut();
        let mut status = -1i32;
        let r = rec!(cx, cuGetProcAddress_v2(c.as_ptr(), &mut p, ver, flags, &mut status));
        cx.val(&format!("{sym}@{ver}/{flags}_status"), status);
        (p as usize, r)
    };
    let same = |cx: &Cx, p: usize, name: &str| -> &'static str {
        match cx.api.raw(name) {
            _ if p == 0 => "null",
            Some(q) if q == p => "same",
            Some(_) => "other",
            None => "unexported",
        }
    };
    let (p, _) = probe(cx, "cuMemAlloc", 12000, 0);
    let v = same(cx, p, "cuMemAlloc_v2");
    cx.val("cuMemAlloc@12000_is_v2", v);
    let (p, _) = probe(cx, "cuMemAlloc", 3000, 0);
    let v = same(cx, p, "cuMemAlloc");
    cx.val("cuMemAlloc@3000_is_legacy", v);
    let (p, _) = probe(cx, "cuLaunchKernel", 12000, 2);
    let v = same(cx, p, "cuLaunchKernel_ptsz");
    cx.val("cuLaunchKernel_ptds_is_ptsz", v);
    let (p, _) = probe(cx, "cuNoSuchEntryPoint", 12000, 0);
    cx.val("unknown_null", p == 0);
    Ok(())
}

// ---------------------------------------------------------------- sticky errors (last)

fn sticky_picture(cx: &mut Cx, kernel: &str, arg: u64) -> Result<(), String> {
    cx.primary()?;
    let m = cx.module()?;
    let f = cx.function(m, kernel)?;
    let d = cx.alloc(256)?;
    let mut a = arg;
    let mut flag = arg as i32;
    let mut params = [if kernel == "assert_kernel" { pp(&mut flag) } else { pp(&mut a) }];
    let r = cx.launch(f, [1, 1, 1], [32, 1, 1], 0, &mut params);
    let s = rec!(cx, cuCtxSynchronize());
    cx.val("error", if r != 0 { fmt_code(r) } else { fmt_code(s) });
    let mut d2 = 0u64;
    rec!(cx, cuMemAlloc_v2(&mut d2, 256));
    rec!(cx, cuCtxSynchronize());
    let mut host = [0u8; 64];
    rec!(cx, cuMemcpyDtoH_v2(host.as_mut_ptr() as P, d, 64));
    let mut g: P = null_mut();
    let name = CString::new("fill_hash").unwrap();
    rec!(cx, cuModuleGetFunction(&mut g, m, name.as_ptr()));
    let mut dev = -1;
    rec!(cx, cuCtxGetDevice(&mut dev));
    if cx.api.cuDevicePrimaryCtxReset_v2.is_some() {
        rec!(cx, cuDevicePrimaryCtxReset_v2(0));
    } else {
        rec!(cx, cuDevicePrimaryCtxReset(0));
    }
    rec!(cx, cuMemAlloc_v2(&mut d2, 256));
    let mut ctx: P = null_mut();
    rec!(cx, cuDevicePrimaryCtxRetain(&mut ctx, 0));
    rec!(cx, cuCtxSetCurrent(ctx));
    rec!(cx, cuMemAlloc_v2(&mut d2, 256));
    rec!(cx, cuCtxSynchronize());
    Ok(())
}

fn sticky_assert(cx: &mut Cx) -> Result<(), String> {
    sticky_picture(cx, "assert_kernel", 1)
}

fn sticky_illegal_address(cx: &mut Cx) -> Result<(), String> {
    sticky_picture(cx, "poke", UNKNOWN_DPTR)
}

fn case(name: &str, run: fn(&mut Cx) -> Result<(), String>) -> Case {
    Case { name: name.to_string(), run: Box::new(run) }
}

/// Every case, in run order: the basic driver cases, then context resolution per entry
/// point family and state (ctxres), then device-defined results (devres), then the
/// virtual-memory API and the legacy device properties (vmm).
pub fn all() -> Vec<Case> {
    let mut v = vec![
        case("init_0", init_0),
        case("init_1", init_1),
        case("not_initialized", not_initialized),
        case("device_get", device_get),
        case("device_attributes", device_attributes),
        case("device_name", device_name),
        case("no_context", no_context),
        case("primary_ctx", primary_ctx),
        case("ctx_stack", ctx_stack),
        case("legacy_mem_alloc", legacy_mem_alloc),
        case("legacy_module_get_global", legacy_module_get_global),
        case("legacy_memcpy_htod", legacy_memcpy_htod),
        case("legacy_ctx_create", legacy_ctx_create),
        case("legacy_total_mem", legacy_total_mem),
        case("mem_alloc_sizes", mem_alloc_sizes),
        case("mem_free", mem_free),
        case("memcpy_htod", memcpy_htod),
        case("memcpy_dtoh", memcpy_dtoh),
        case("memcpy_dtod", memcpy_dtod),
        case("memset", memset),
        case("alloc_pitch", alloc_pitch),
        case("host_alloc", host_alloc),
        case("alloc_async", alloc_async),
        case("pointer_attribute", pointer_attribute),
        case("stream_flags", stream_flags),
        case("stream_priority", stream_priority),
        case("stream_query", stream_query),
        case("stream_destroy_twice", stream_destroy_twice),
        case("event_timing", event_timing),
        case("launch_host_func", launch_host_func),
        case("module_garbage", module_garbage),
        case("module_truncated", module_truncated),
        case("module_nosm90", module_nosm90),
        case("module_ptx_newer", module_ptx_newer),
        case("module_good", module_good),
        case("module_get_function", module_get_function),
        case("module_get_global", module_get_global),
        case("func_attributes", func_attributes),
        case("func_set_attribute", func_set_attribute),
        case("launch_good", launch_good),
        case("launch_bad_dims", launch_bad_dims),
        case("launch_dyn_shared", launch_dyn_shared),
        case("launch_bounds_exceeded", launch_bounds_exceeded),
        case("launch_params_forms", launch_params_forms),
        case("launch_poke", launch_poke),
        case("error_strings", error_strings),
        case("proc_address", proc_address),
        case("sticky_assert", sticky_assert),
        case("sticky_illegal_address", sticky_illegal_address),
    ];
    v.extend(ctxres::cases());
    v.extend(devres::cases());
    v.extend(hostile::cases());
    v.extend(vmm::cases());
    v.extend(texture::cases());
    v
}

/// Runs one case in this process; prints `@@ line` and `@@end` for the parent.
pub fn run_child(o: &Opts, lib: &str, name: &str) -> i32 {
    let Some(case) = all().into_iter().find(|c| c.name == name) else {
        eprintln!("driver-conformance: no case named {name} (see --list)");
        return 2;
    };
    let api = match Api::load(lib) {
        Ok(a) => a,
        Err(e) => {
            println!("@@ {name}: LOAD_ERROR({e})");
            println!("@@end");
            return 0;
        }
    };
    let mut cx = Cx { api, o, name: name.to_string(), codes: Vec::new(), vals: Vec::new(), subs: Vec::new(), images: Vec::new() };
    let line = match (case.run)(&mut cx) {
        Ok(()) => cx.line(name),
        Err(e) => {
            let mut l = cx.line(name);
            l.push(' ');
            l.push_str(&e);
            l
        }
    };
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "@@ {line}");
    for l in &cx.subs {
        let _ = writeln!(out, "@@ {l}");
    }
    let _ = writeln!(out, "@@end");
    let _ = out.flush();
    drop(out);
    // Leave without running the driver's teardown (a sticky error may make it slow);
    // the parent has its line.
    // SAFETY: _exit ends the process immediately.
    unsafe { libc::_exit(0) }
}
