//! The export table: every driver entry point this library exports, in one list, and
//! the one place where C arguments become the typed views of `boundary`.
//!
//! The macro turns each line into an `extern "C"` symbol that counts the call (and an
//! error answer), refuses calls from inside host callbacks, applies EMU_CUDA_FAIL,
//! catches panics, logs at EMU_CUDA_LOG=calls, converts the raw arguments and runs the
//! safe implementation in `api/`. The same list serves cuGetProcAddress (the versioned
//! names, `@` the CUDA version that introduced them) and the entry-point listing
//! (ENTRY_POINTS.md).
//!
//! Three kinds of entry:
//! - `implemented`: the real semantics, in a module of `api/`.
//! - `legacy`: pre-3.2 entry points with 32-bit device pointers. A 64-bit process runs
//!   only contexts of the current (v2) API, and the real driver answers these with the
//!   code given (measured on an H200 for cuModuleGetGlobal: CUDA_ERROR_INVALID_CONTEXT).
//! - `unsupported`: exported so that loaders which resolve them (nv-codec-headers makes
//!   graphics interop mandatory) succeed; a call answers CUDA_ERROR_NOT_SUPPORTED, is
//!   counted (the counters' "unsupported" section) and logged once.

#![allow(non_snake_case, clippy::missing_safety_doc, clippy::too_many_arguments)]

use crate::api::{
    context as ctx, device as dev, graph as gr, library as lib, link, memory as mem, misc, module as modl, stream as st, texture as tex,
    vmm,
};
use crate::boundary::*;
use crate::cu::*;
use std::ffi::{c_char, c_void};

fn code(r: CuResult) -> CUresult {
    match r {
        Ok(()) => CUDA_SUCCESS,
        Err(c) => c,
    }
}

/// The wrapper every implemented entry runs through.
fn enter(id: usize, f: impl FnOnce() -> CuResult) -> CUresult {
    let name = NAMES[id];
    let counters = crate::counters::get();
    let nth = counters.call_entry(NAMES, id) + 1;
    let r = if crate::fork::in_child() {
        // A child forked after cuInit (see fork.rs): no driver state, no lock of it.
        if crate::fork::usable_in_child(name) {
            code(f())
        } else {
            CUDA_ERROR_NOT_INITIALIZED
        }
    } else if crate::callbacks::in_callback() {
        CUDA_ERROR_NOT_PERMITTED
    } else if let Some(c) = crate::config::get().ok().and_then(|cfg| crate::inject::check(&cfg.fail, name, nth)) {
        counters.injected(name, nth, c);
        crate::log_info!("EMU_CUDA_FAIL: call {nth} of {name} answered {}", crate::errors::name(c));
        c
    } else {
        match std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)) {
            Ok(r) => code(r),
            Err(_) => {
                crate::log_error!("internal error in {name}: answered CUDA_ERROR_UNKNOWN");
                CUDA_ERROR_UNKNOWN
            }
        }
    };
    if r != CUDA_SUCCESS {
        counters.failure(name);
    } else if synchronous_copy(id) {
        // A synchronous copy or memset waits for the device: a synchronisation point,
        // and a program that synchronises only so still leaves its counts behind.
        crate::counters_file::checkpoint();
    }
    crate::log_calls!("call {name} -> {}", crate::errors::name(r));
    r
}

/// Whether entry `id` is a synchronous copy or memset (`cuMemcpy*`, `cuMemset*` without
/// `Async`; the legacy and `_ptds` forms included).
fn synchronous_copy(id: usize) -> bool {
    static SYNC: std::sync::OnceLock<Vec<bool>> = std::sync::OnceLock::new();
    SYNC.get_or_init(|| NAMES.iter().map(|n| (n.starts_with("cuMemcpy") || n.starts_with("cuMemset")) && !n.contains("Async")).collect())
        .get(id)
        .copied()
        .unwrap_or(false)
}

fn unsupported(id: usize) -> CUresult {
    let name = NAMES[id];
    let counters = crate::counters::get();
    counters.call_entry(NAMES, id);
    if crate::fork::in_child() {
        counters.failure(name);
        return CUDA_ERROR_NOT_INITIALIZED;
    }
    counters.unsupported(name);
    counters.failure(name);
    static LOGGED: std::sync::Mutex<Vec<usize>> = std::sync::Mutex::new(Vec::new());
    let mut l = LOGGED.lock().unwrap_or_else(|e| e.into_inner());
    if !l.contains(&id) {
        l.push(id);
        crate::log_warn!("{name} is not implemented by the emulated driver: answered CUDA_ERROR_NOT_SUPPORTED");
    }
    CUDA_ERROR_NOT_SUPPORTED
}

/// Whether entry `id` forwards to the real driver (EMU_CUDA_REAL). cuGetProcAddress
/// stays local in pass-through: it hands out this library's counted wrappers.
fn pass_through(id: usize) -> bool {
    crate::passthrough::enabled() && !NAMES[id].starts_with("cuGetProcAddress")
}

/// Forwards a typed entry to the real driver; a synchronisation updates the counters
/// file on disk, as in the emulated driver.
fn forward(id: usize, words: &[u64], call: impl FnOnce(usize) -> CUresult) -> CUresult {
    crate::passthrough::set_entries(NAMES.len());
    let name = NAMES[id];
    let r = crate::passthrough::forward(NAMES, id, words, call);
    if r == CUDA_SUCCESS && (name.contains("Synchronize") || synchronous_copy(id)) {
        crate::counters_file::checkpoint();
    }
    r
}

/// Where a trampoline goes: the real driver's entry (counted here) or 0 for the
/// emulated one.
extern "C" fn trampoline_target(id: usize) -> usize {
    crate::passthrough::set_entries(NAMES.len());
    crate::passthrough::trampoline_target(NAMES, id)
}

/// An exported entry point without a declared signature (legacy and unimplemented
/// ones): in pass-through it jumps to the real driver's entry with every argument
/// register intact (after counting the call); otherwise it runs `untyped_entry`.
#[cfg(target_arch = "x86_64")]
macro_rules! trampoline {
    ($name:ident, $id:expr) => {
        #[unsafe(naked)]
        #[no_mangle]
        pub unsafe extern "C" fn $name() -> CUresult {
            core::arch::naked_asm!(
                // Save the argument registers (integer and vector); keep the stack
                // 16-byte aligned for the call: 8 (return address) + 48 + 136 = 192.
                "push rdi", "push rsi", "push rdx", "push rcx", "push r8", "push r9",
                "sub rsp, 136",
                "movdqu [rsp], xmm0", "movdqu [rsp + 16], xmm1", "movdqu [rsp + 32], xmm2", "movdqu [rsp + 48], xmm3",
                "movdqu [rsp + 64], xmm4", "movdqu [rsp + 80], xmm5", "movdqu [rsp + 96], xmm6", "movdqu [rsp + 112], xmm7",
                "mov edi, {id}",
                "call {target}",
                "movdqu xmm0, [rsp]", "movdqu xmm1, [rsp + 16]", "movdqu xmm2, [rsp + 32]", "movdqu xmm3, [rsp + 48]",
                "movdqu xmm4, [rsp + 64]", "movdqu xmm5, [rsp + 80]", "movdqu xmm6, [rsp + 96]", "movdqu xmm7, [rsp + 112]",
                "add rsp, 136",
                "pop r9", "pop r8", "pop rcx", "pop rdx", "pop rsi", "pop rdi",
                "test rax, rax",
                "jz 2f",
                "jmp rax",
                "2:",
                "mov edi, {id}",
                "jmp {fallback}",
                id = const $id as u32,
                target = sym trampoline_target,
                fallback = sym untyped_entry,
            )
        }
    };
}

#[cfg(not(target_arch = "x86_64"))]
macro_rules! trampoline {
    ($name:ident, $id:expr) => {
        #[no_mangle]
        pub unsafe extern "C" fn $name() -> CUresult {
            untyped_entry($id as usize)
        }
    };
}

macro_rules! exports {
    (
        implemented { $( $name:ident $(@ $since:literal)? ( $($arg:ident : $ty:ty),* ) => $imp:expr ; )* }
        legacy { $( $lname:ident $(@ $lsince:literal)? => $lcode:expr ; )* }
        unsupported { $( $uname:ident $(@ $usince:literal)? ),* $(,)? }
    ) => {
        #[allow(non_camel_case_types, dead_code, clippy::enum_variant_names)]
        #[derive(Clone, Copy)]
        #[repr(usize)]
        enum Id { $($name,)* $($lname,)* $($uname,)* }

        /// Every exported entry point, in table order.
        pub static NAMES: &[&str] = &[$(stringify!($name),)* $(stringify!($lname),)* $(stringify!($uname),)*];
        #[cfg(test)]
        const IMPLEMENTED: usize = [$(stringify!($name),)*].len();
        #[cfg(test)]
        const WITH_LEGACY: usize = [$(stringify!($name),)* $(stringify!($lname),)*].len();

        /// The CUDA version that introduced each versioned name (`_v2`, `_v3`, ...), in
        /// table order, from the table's `@` annotations.
        #[allow(clippy::vec_init_then_push)]
        fn versions() -> Vec<(&'static str, i32)> {
            let mut v = Vec::new();
            $( $( v.push((stringify!($name), $since)); )? )*
            $( $( v.push((stringify!($lname), $lsince)); )? )*
            $( $( v.push((stringify!($uname), $usince)); )? )*
            v
        }

        $(
            #[no_mangle]
            #[allow(unused_unsafe)]
            pub unsafe extern "C" fn $name($($arg: $ty),*) -> CUresult {
                let id = Id::$name as usize;
                if pass_through(id) {
                    let words = [$(crate::passthrough::word(&$arg)),*];
                    return forward(id, &words, |addr| {
                        // SAFETY: `addr` is the real driver's export of the same name,
                        // which has this C signature; the arguments are the caller's.
                        let f: unsafe extern "C" fn($($ty),*) -> CUresult = unsafe { std::mem::transmute(addr) };
                        // SAFETY: as above; the caller's arguments, unchanged.
                        unsafe { f($($arg),*) }
                    });
                }
                // SAFETY: the arguments come from a C caller under the driver API's
                // contract for this entry point (out-pointers null or writable, strings
                // NUL-terminated, arrays as long as their counts); the boundary
                // functions below turn them into the typed views the safe `api/`
                // implementations take.
                enter(id, || unsafe { $imp })
            }
        )*
        $( trampoline!($lname, Id::$lname); )*
        $( trampoline!($uname, Id::$uname); )*

        /// The emulated answer of an entry without a typed signature: the legacy code
        /// the real driver gives, or CUDA_ERROR_NOT_SUPPORTED.
        extern "C" fn untyped_entry(id: usize) -> CUresult {
            $( if id == Id::$lname as usize { return enter(id, || Err($lcode)); } )*
            unsupported(id)
        }

        /// Addresses in table order (for cuGetProcAddress).
        fn addresses() -> Vec<usize> {
            vec![$($name as *const () as usize,)* $($lname as *const () as usize,)* $($uname as *const () as usize,)*]
        }
    };
}

/// The table index of an exported name.
pub fn index_of(name: &str) -> Option<usize> {
    NAMES.iter().position(|n| *n == name)
}

fn address(i: usize) -> usize {
    static ADDR: std::sync::OnceLock<Vec<usize>> = std::sync::OnceLock::new();
    ADDR.get_or_init(addresses)[i]
}

/// A versioned export: its name, the base name the CUDA headers use, and the CUDA
/// version that introduced it.
pub struct Versioned {
    pub export: &'static str,
    pub base: String,
    pub since: i32,
}

/// Every versioned export (generated from the table).
pub fn versioned() -> &'static [Versioned] {
    static V: std::sync::OnceLock<Vec<Versioned>> = std::sync::OnceLock::new();
    V.get_or_init(|| {
        versions()
            .into_iter()
            .map(|(export, since)| {
                let base = match export.rfind("_v") {
                    Some(i) if export[i + 2..].chars().all(|c| c.is_ascii_digit()) => &export[..i],
                    _ => export,
                };
                Versioned { export, base: base.to_string(), since }
            })
            .collect()
    })
}

/// Marker that tools (parity --device real) use to recognise the emulated driver.
#[no_mangle]
pub static simtwin_emulated_driver: [u8; 32] = {
    let mut m = [0u8; 32];
    let s = simtwin_abi::EMULATED_DRIVER_MARKER.as_bytes();
    let mut i = 0;
    while i < s.len() {
        m[i] = s[i];
        i += 1;
    }
    m
};

exports! {
    implemented {
        cuInit(flags: u32) => dev::init(flags);
        cuDriverGetVersion(v: *mut i32) => dev::driver_get_version(out(v));
        cuDeviceGet(d: *mut CUdevice, ordinal: i32) => dev::device_get(out(d), ordinal);
        cuDeviceGetCount(n: *mut i32) => dev::device_get_count(out(n));
        cuDeviceGetName(name: *mut c_char, len: i32, d: CUdevice) => dev::device_get_name(out_text(name, len), d);
        cuDeviceGetUuid(u: *mut CUuuid, d: CUdevice) => dev::device_get_uuid(out(u), d);
        cuDeviceGetUuid_v2 @11040 (u: *mut CUuuid, d: CUdevice) => dev::device_get_uuid(out(u), d);
        cuDeviceTotalMem_v2 @3020 (b: *mut usize, d: CUdevice) => dev::device_total_mem(out(b), d);
        cuDeviceTotalMem(b: *mut u32, d: CUdevice) => dev::device_total_mem_v1(out(b), d);
        cuDeviceGetAttribute(v: *mut i32, a: i32, d: CUdevice) => dev::device_get_attribute(out(v), a, d);
        cuDeviceComputeCapability(ma: *mut i32, mi: *mut i32, d: CUdevice) => dev::device_compute_capability(out(ma), out(mi), d);
        cuDeviceGetPCIBusId(b: *mut c_char, len: i32, d: CUdevice) => dev::device_get_pci_bus_id(out_text(b, len), d);
        cuDeviceGetByPCIBusId(d: *mut CUdevice, id: *const c_char) => dev::device_get_by_pci_bus_id(out(d), text(id));
        cuDeviceCanAccessPeer(c: *mut i32, d: CUdevice, p: CUdevice) => dev::device_can_access_peer(out(c), d, p);
        cuDeviceGetDefaultMemPool(p: *mut CUmemoryPool, d: CUdevice) => dev::device_get_default_mem_pool(out(p), d);
        cuDeviceGetMemPool(p: *mut CUmemoryPool, d: CUdevice) => dev::device_get_mem_pool(out(p), d);
        cuDeviceSetMemPool(d: CUdevice, p: CUmemoryPool) => dev::device_set_mem_pool(d, p);
        cuDeviceGetTexture1DLinearMaxWidth(w: *mut usize, f: u32, c: u32, d: CUdevice) => dev::device_get_texture_1d_linear_max_width(out(w), f, c, d);
        cuDeviceGetProperties(p: *mut CUdevprop, d: CUdevice) => dev::device_get_properties(out(p), d);
        cuMemGetDefaultMemPool(p: *mut CUmemoryPool, l: *mut CUmemLocation, t: i32) => dev::mem_get_default_mem_pool(out(p), input(l), t);
        cuMemGetMemPool(p: *mut CUmemoryPool, l: *mut CUmemLocation, t: i32) => dev::mem_get_mem_pool(out(p), input(l), t);
        cuMemSetMemPool(l: *mut CUmemLocation, t: i32, p: CUmemoryPool) => dev::mem_set_mem_pool(input(l), t, p);

        cuDevicePrimaryCtxRetain(c: *mut CUcontext, d: CUdevice) => ctx::primary_retain(out(c), d);
        cuDevicePrimaryCtxRelease(d: CUdevice) => ctx::primary_release(d);
        cuDevicePrimaryCtxRelease_v2 @11000 (d: CUdevice) => ctx::primary_release(d);
        cuDevicePrimaryCtxSetFlags(d: CUdevice, f: u32) => ctx::primary_set_flags(d, f);
        cuDevicePrimaryCtxSetFlags_v2 @11000 (d: CUdevice, f: u32) => ctx::primary_set_flags(d, f);
        cuDevicePrimaryCtxGetState(d: CUdevice, f: *mut u32, a: *mut i32) => ctx::primary_get_state(d, out(f), out(a));
        cuDevicePrimaryCtxReset(d: CUdevice) => ctx::primary_reset(d);
        cuDevicePrimaryCtxReset_v2 @11000 (d: CUdevice) => ctx::primary_reset(d);
        cuCtxCreate_v2 @3020 (c: *mut CUcontext, f: u32, d: CUdevice) => ctx::ctx_create(out(c), f, d);
        cuCtxCreate_v3 @11040 (c: *mut CUcontext, _p: *mut c_void, n: i32, f: u32, d: CUdevice) => ctx::ctx_create_v3(out(c), n, f, d);
        cuCtxCreate_v4 @12050 (c: *mut CUcontext, p: *mut CUctxCreateParams, f: u32, d: CUdevice) => ctx::ctx_create_v4(out(c), input(p), f, d);
        cuCtxDestroy(c: CUcontext) => ctx::ctx_destroy(c);
        cuCtxDestroy_v2 @4000 (c: CUcontext) => ctx::ctx_destroy(c);
        cuCtxPushCurrent(c: CUcontext) => ctx::ctx_push(c);
        cuCtxPushCurrent_v2 @4000 (c: CUcontext) => ctx::ctx_push(c);
        cuCtxPopCurrent(c: *mut CUcontext) => ctx::ctx_pop(out(c));
        cuCtxPopCurrent_v2 @4000 (c: *mut CUcontext) => ctx::ctx_pop(out(c));
        cuCtxSetCurrent(c: CUcontext) => ctx::ctx_set_current(c);
        cuCtxGetCurrent(c: *mut CUcontext) => ctx::ctx_get_current(out(c));
        cuCtxGetDevice(d: *mut CUdevice) => ctx::ctx_get_device(out(d));
        cuCtxGetDevice_v2 @13000 (d: *mut CUdevice, c: CUcontext) => ctx::ctx_get_device_v2(out(d), c);
        cuCtxGetFlags(f: *mut u32) => ctx::ctx_get_flags(out(f));
        cuCtxSetFlags(f: u32) => ctx::ctx_set_flags(f);
        cuCtxGetId(c: CUcontext, id: *mut u64) => ctx::ctx_get_id(c, out(id));
        cuCtxGetApiVersion(c: CUcontext, v: *mut u32) => ctx::ctx_get_api_version(c, out(v));
        cuCtxSynchronize() => ctx::ctx_synchronize();
        cuCtxSynchronize_v2 @13000 (c: CUcontext) => ctx::ctx_synchronize_v2(c);
        cuCtxSetLimit(l: u32, v: usize) => ctx::ctx_set_limit(l, v);
        cuCtxGetLimit(v: *mut usize, l: u32) => ctx::ctx_get_limit(out(v), l);
        cuCtxGetCacheConfig(c: *mut u32) => ctx::ctx_get_cache_config(out(c));
        cuCtxSetCacheConfig(c: u32) => ctx::ctx_set_cache_config(c);
        cuCtxGetSharedMemConfig(c: *mut u32) => ctx::ctx_get_shared_mem_config(out(c));
        cuCtxSetSharedMemConfig(c: u32) => ctx::ctx_set_shared_mem_config(c);
        cuCtxGetStreamPriorityRange(l: *mut i32, g: *mut i32) => ctx::ctx_get_stream_priority_range(out(l), out(g));

        cuMemAlloc_v2 @3020 (p: *mut CUdeviceptr, n: usize) => mem::mem_alloc(out(p), n);
        cuMemAllocPitch_v2 @3020 (p: *mut CUdeviceptr, pitch: *mut usize, w: usize, h: usize, e: u32) => mem::mem_alloc_pitch(out(p), out(pitch), w, h, e);
        cuMemFree_v2 @3020 (p: CUdeviceptr) => mem::mem_free(p);
        cuMemGetInfo_v2 @3020 (f: *mut usize, t: *mut usize) => mem::mem_get_info(out(f), out(t));
        cuMemGetAddressRange_v2 @3020 (b: *mut CUdeviceptr, s: *mut usize, p: CUdeviceptr) => mem::mem_get_address_range(out(b), out(s), p);
        cuMemAllocHost_v2 @3020 (p: *mut *mut c_void, n: usize) => mem::mem_alloc_host(out(p), n);
        cuMemHostAlloc(p: *mut *mut c_void, n: usize, f: u32) => mem::mem_host_alloc(out(p), n, f);
        cuMemFreeHost(p: *mut c_void) => mem::mem_free_host(host(p));
        cuMemHostGetDevicePointer_v2 @3020 (d: *mut CUdeviceptr, p: *mut c_void, f: u32) => mem::mem_host_get_device_pointer(out(d), host(p), f);
        cuMemHostGetFlags(f: *mut u32, p: *mut c_void) => mem::mem_host_get_flags(out(f), host(p));
        cuMemHostRegister_v2 @6050 (p: *mut c_void, n: usize, f: u32) => mem::mem_host_register(host(p), n, f);
        cuMemHostUnregister(p: *mut c_void) => mem::mem_host_unregister(host(p));
        cuMemAllocManaged(p: *mut CUdeviceptr, n: usize, f: u32) => mem::mem_alloc_managed(out(p), n, f);
        cuMemAllocAsync(p: *mut CUdeviceptr, n: usize, s: CUstream) => mem::mem_alloc_async(out(p), n, s);
        cuMemAllocAsync_ptsz(p: *mut CUdeviceptr, n: usize, s: CUstream) => mem::mem_alloc_async(out(p), n, s);
        cuMemAllocFromPoolAsync(p: *mut CUdeviceptr, n: usize, pool: CUmemoryPool, s: CUstream) => mem::mem_alloc_from_pool_async(out(p), n, pool, s);
        cuMemAllocFromPoolAsync_ptsz(p: *mut CUdeviceptr, n: usize, pool: CUmemoryPool, s: CUstream) => mem::mem_alloc_from_pool_async(out(p), n, pool, s);
        cuMemFreeAsync(p: CUdeviceptr, s: CUstream) => mem::mem_free_async(p, s);
        cuMemFreeAsync_ptsz(p: CUdeviceptr, s: CUstream) => mem::mem_free_async(p, s);
        cuMemPoolCreate(p: *mut CUmemoryPool, props: *const c_void) => mem::mem_pool_create(out(p), opaque(props));
        cuMemPoolDestroy(p: CUmemoryPool) => mem::mem_pool_destroy(p);
        cuMemPoolTrimTo(p: CUmemoryPool, k: usize) => mem::mem_pool_trim_to(p, k);
        cuMemPoolSetAttribute(p: CUmemoryPool, a: i32, v: *mut c_void) => mem::mem_pool_set_attribute(p, a, out_any(v));
        cuMemPoolGetAttribute(p: CUmemoryPool, a: i32, v: *mut c_void) => mem::mem_pool_get_attribute(p, a, out_any(v));

        cuMemcpy(d: CUdeviceptr, s: CUdeviceptr, n: usize) => mem::memcpy(d, s, n);
        cuMemcpy_ptds(d: CUdeviceptr, s: CUdeviceptr, n: usize) => mem::memcpy(d, s, n);
        cuMemcpyAsync(d: CUdeviceptr, s: CUdeviceptr, n: usize, st: CUstream) => mem::memcpy_async(d, s, n, st);
        cuMemcpyAsync_ptsz(d: CUdeviceptr, s: CUdeviceptr, n: usize, st: CUstream) => mem::memcpy_async(d, s, n, st);
        cuMemcpyHtoD_v2 @3020 (d: CUdeviceptr, s: *const c_void, n: usize) => mem::memcpy_htod(d, host(s), n);
        cuMemcpyHtoD_v2_ptds(d: CUdeviceptr, s: *const c_void, n: usize) => mem::memcpy_htod(d, host(s), n);
        cuMemcpyDtoH_v2 @3020 (d: *mut c_void, s: CUdeviceptr, n: usize) => mem::memcpy_dtoh(host(d), s, n);
        cuMemcpyDtoH_v2_ptds(d: *mut c_void, s: CUdeviceptr, n: usize) => mem::memcpy_dtoh(host(d), s, n);
        cuMemcpyDtoD_v2 @3020 (d: CUdeviceptr, s: CUdeviceptr, n: usize) => mem::memcpy_dtod(d, s, n);
        cuMemcpyDtoD_v2_ptds(d: CUdeviceptr, s: CUdeviceptr, n: usize) => mem::memcpy_dtod(d, s, n);
        cuMemcpyHtoDAsync_v2 @3020 (d: CUdeviceptr, s: *const c_void, n: usize, st: CUstream) => mem::memcpy_htod_async(d, host(s), n, st);
        cuMemcpyHtoDAsync_v2_ptsz(d: CUdeviceptr, s: *const c_void, n: usize, st: CUstream) => mem::memcpy_htod_async(d, host(s), n, st);
        cuMemcpyDtoHAsync_v2 @3020 (d: *mut c_void, s: CUdeviceptr, n: usize, st: CUstream) => mem::memcpy_dtoh_async(host(d), s, n, st);
        cuMemcpyDtoHAsync_v2_ptsz(d: *mut c_void, s: CUdeviceptr, n: usize, st: CUstream) => mem::memcpy_dtoh_async(host(d), s, n, st);
        cuMemcpyDtoDAsync_v2 @3020 (d: CUdeviceptr, s: CUdeviceptr, n: usize, st: CUstream) => mem::memcpy_dtod_async(d, s, n, st);
        cuMemcpyDtoDAsync_v2_ptsz(d: CUdeviceptr, s: CUdeviceptr, n: usize, st: CUstream) => mem::memcpy_dtod_async(d, s, n, st);
        cuMemcpy2D_v2 @3020 (p: *const CUDA_MEMCPY2D) => mem::memcpy_2d(input(p));
        cuMemcpy2D_v2_ptds(p: *const CUDA_MEMCPY2D) => mem::memcpy_2d(input(p));
        cuMemcpy2DUnaligned_v2 @3020 (p: *const CUDA_MEMCPY2D) => mem::memcpy_2d(input(p));
        cuMemcpy2DUnaligned_v2_ptds(p: *const CUDA_MEMCPY2D) => mem::memcpy_2d(input(p));
        cuMemcpy2DAsync_v2 @3020 (p: *const CUDA_MEMCPY2D, st: CUstream) => mem::memcpy_2d_async(input(p), st);
        cuMemcpy2DAsync_v2_ptsz(p: *const CUDA_MEMCPY2D, st: CUstream) => mem::memcpy_2d_async(input(p), st);
        cuMemcpyPeer(d: CUdeviceptr, dc: CUcontext, s: CUdeviceptr, sc: CUcontext, n: usize) => mem::memcpy_peer(d, dc, s, sc, n);
        cuMemcpyPeer_ptds(d: CUdeviceptr, dc: CUcontext, s: CUdeviceptr, sc: CUcontext, n: usize) => mem::memcpy_peer(d, dc, s, sc, n);
        cuMemcpyPeerAsync(d: CUdeviceptr, dc: CUcontext, s: CUdeviceptr, sc: CUcontext, n: usize, st: CUstream) => mem::memcpy_peer_async(d, dc, s, sc, n, st);
        cuMemcpyPeerAsync_ptsz(d: CUdeviceptr, dc: CUcontext, s: CUdeviceptr, sc: CUcontext, n: usize, st: CUstream) => mem::memcpy_peer_async(d, dc, s, sc, n, st);

        cuMemsetD8_v2 @3020 (d: CUdeviceptr, v: u8, n: usize) => mem::memset(mem::Fill::line(d, v as u32, 1, n), None);
        cuMemsetD16_v2 @3020 (d: CUdeviceptr, v: u16, n: usize) => mem::memset(mem::Fill::line(d, v as u32, 2, n), None);
        cuMemsetD32_v2 @3020 (d: CUdeviceptr, v: u32, n: usize) => mem::memset(mem::Fill::line(d, v, 4, n), None);
        cuMemsetD8_v2_ptds(d: CUdeviceptr, v: u8, n: usize) => mem::memset(mem::Fill::line(d, v as u32, 1, n), None);
        cuMemsetD16_v2_ptds(d: CUdeviceptr, v: u16, n: usize) => mem::memset(mem::Fill::line(d, v as u32, 2, n), None);
        cuMemsetD32_v2_ptds(d: CUdeviceptr, v: u32, n: usize) => mem::memset(mem::Fill::line(d, v, 4, n), None);
        cuMemsetD8Async(d: CUdeviceptr, v: u8, n: usize, s: CUstream) => mem::memset(mem::Fill::line(d, v as u32, 1, n), Some(s));
        cuMemsetD16Async(d: CUdeviceptr, v: u16, n: usize, s: CUstream) => mem::memset(mem::Fill::line(d, v as u32, 2, n), Some(s));
        cuMemsetD32Async(d: CUdeviceptr, v: u32, n: usize, s: CUstream) => mem::memset(mem::Fill::line(d, v, 4, n), Some(s));
        cuMemsetD8Async_ptsz(d: CUdeviceptr, v: u8, n: usize, s: CUstream) => mem::memset(mem::Fill::line(d, v as u32, 1, n), Some(s));
        cuMemsetD16Async_ptsz(d: CUdeviceptr, v: u16, n: usize, s: CUstream) => mem::memset(mem::Fill::line(d, v as u32, 2, n), Some(s));
        cuMemsetD32Async_ptsz(d: CUdeviceptr, v: u32, n: usize, s: CUstream) => mem::memset(mem::Fill::line(d, v, 4, n), Some(s));
        cuMemsetD2D8_v2 @3020 (d: CUdeviceptr, p: usize, v: u8, w: usize, h: usize) => mem::memset(mem::Fill::rect(d, p, v as u32, 1, w, h), None);
        cuMemsetD2D16_v2 @3020 (d: CUdeviceptr, p: usize, v: u16, w: usize, h: usize) => mem::memset(mem::Fill::rect(d, p, v as u32, 2, w, h), None);
        cuMemsetD2D32_v2 @3020 (d: CUdeviceptr, p: usize, v: u32, w: usize, h: usize) => mem::memset(mem::Fill::rect(d, p, v, 4, w, h), None);
        cuMemsetD2D8_v2_ptds(d: CUdeviceptr, p: usize, v: u8, w: usize, h: usize) => mem::memset(mem::Fill::rect(d, p, v as u32, 1, w, h), None);
        cuMemsetD2D16_v2_ptds(d: CUdeviceptr, p: usize, v: u16, w: usize, h: usize) => mem::memset(mem::Fill::rect(d, p, v as u32, 2, w, h), None);
        cuMemsetD2D32_v2_ptds(d: CUdeviceptr, p: usize, v: u32, w: usize, h: usize) => mem::memset(mem::Fill::rect(d, p, v, 4, w, h), None);
        cuMemsetD2D8Async(d: CUdeviceptr, p: usize, v: u8, w: usize, h: usize, s: CUstream) => mem::memset(mem::Fill::rect(d, p, v as u32, 1, w, h), Some(s));
        cuMemsetD2D16Async(d: CUdeviceptr, p: usize, v: u16, w: usize, h: usize, s: CUstream) => mem::memset(mem::Fill::rect(d, p, v as u32, 2, w, h), Some(s));
        cuMemsetD2D32Async(d: CUdeviceptr, p: usize, v: u32, w: usize, h: usize, s: CUstream) => mem::memset(mem::Fill::rect(d, p, v, 4, w, h), Some(s));
        cuMemsetD2D8Async_ptsz(d: CUdeviceptr, p: usize, v: u8, w: usize, h: usize, s: CUstream) => mem::memset(mem::Fill::rect(d, p, v as u32, 1, w, h), Some(s));
        cuMemsetD2D16Async_ptsz(d: CUdeviceptr, p: usize, v: u16, w: usize, h: usize, s: CUstream) => mem::memset(mem::Fill::rect(d, p, v as u32, 2, w, h), Some(s));
        cuMemsetD2D32Async_ptsz(d: CUdeviceptr, p: usize, v: u32, w: usize, h: usize, s: CUstream) => mem::memset(mem::Fill::rect(d, p, v, 4, w, h), Some(s));

        cuPointerGetAttribute(data: *mut c_void, a: u32, p: CUdeviceptr) => mem::pointer_get_attribute(out_any(data), a, p);
        cuPointerGetAttributes(n: u32, a: *const u32, data: *mut *mut c_void, p: CUdeviceptr) => mem::pointer_get_attributes(array(a, n as usize), out_any_array(data, n as usize), p);
        cuMemPrefetchAsync(p: CUdeviceptr, n: usize, _d: CUdevice, s: CUstream) => mem::mem_hint(p, n, Some(s));
        cuMemPrefetchAsync_ptsz(p: CUdeviceptr, n: usize, _d: CUdevice, s: CUstream) => mem::mem_hint(p, n, Some(s));
        cuMemPrefetchAsync_v2 @12020 (p: CUdeviceptr, n: usize, _loc: u64, _f: u32, s: CUstream) => mem::mem_hint(p, n, Some(s));
        cuMemPrefetchAsync_v2_ptsz(p: CUdeviceptr, n: usize, _loc: u64, _f: u32, s: CUstream) => mem::mem_hint(p, n, Some(s));

        cuMemGetAllocationGranularity(g: *mut usize, p: *const CUmemAllocationProp, o: u32) => vmm::get_allocation_granularity(out(g), input(p), o);
        cuMemCreate(h: *mut CUmemGenericAllocationHandle, n: usize, p: *const CUmemAllocationProp, f: u64) => vmm::create(out(h), n, input(p), f);
        cuMemRelease(h: CUmemGenericAllocationHandle) => vmm::release(h);
        cuMemAddressReserve(p: *mut CUdeviceptr, n: usize, a: usize, addr: CUdeviceptr, f: u64) => vmm::address_reserve(out(p), n, a, addr, f);
        cuMemAddressFree(p: CUdeviceptr, n: usize) => vmm::address_free(p, n);
        cuMemMap(p: CUdeviceptr, n: usize, o: usize, h: CUmemGenericAllocationHandle, f: u64) => vmm::map(p, n, o, h, f);
        cuMemUnmap(p: CUdeviceptr, n: usize) => vmm::unmap(p, n);
        cuMemSetAccess(p: CUdeviceptr, n: usize, d: *const CUmemAccessDesc, c: usize) => vmm::set_access(p, n, array(d, c), c);
        cuMemGetAccess(f: *mut u64, l: *const CUmemLocation, p: CUdeviceptr) => vmm::get_access(out(f), input(l), p);
        cuMemGetAllocationPropertiesFromHandle(p: *mut CUmemAllocationProp, h: CUmemGenericAllocationHandle) => vmm::get_allocation_properties_from_handle(out(p), h);
        cuMemRetainAllocationHandle(h: *mut CUmemGenericAllocationHandle, a: *mut c_void) => vmm::retain_allocation_handle(out(h), opaque(a));
        cuMemExportToShareableHandle(s: *mut c_void, h: CUmemGenericAllocationHandle, t: i32, f: u64) => vmm::export_to_shareable_handle(out_any(s), h, t, f);
        cuMemImportFromShareableHandle(h: *mut CUmemGenericAllocationHandle, o: *mut c_void, t: i32) => vmm::import_from_shareable_handle(out(h), opaque(o), t);
        cuMemAdvise(p: CUdeviceptr, n: usize, _a: u32, _d: CUdevice) => mem::mem_hint(p, n, None);
        cuMemAdvise_v2 @12020 (p: CUdeviceptr, n: usize, _a: u32, _loc: u64) => mem::mem_hint(p, n, None);

        cuModuleLoad(m: *mut CUmodule, f: *const c_char) => modl::module_load(out(m), text(f));
        cuModuleLoadData(m: *mut CUmodule, i: *const c_void) => modl::module_load_data(out(m), image_ptr(i));
        cuModuleLoadDataEx(m: *mut CUmodule, i: *const c_void, n: u32, o: *mut u32, v: *mut *mut c_void) => modl::module_load_data_ex(out(m), image_ptr(i), jit_options(n, o, v));
        cuModuleLoadFatBinary(m: *mut CUmodule, i: *const c_void) => modl::module_load_fat_binary(out(m), image_ptr(i));
        cuModuleUnload(m: CUmodule) => modl::module_unload(m);
        cuModuleGetFunction(f: *mut CUfunction, m: CUmodule, n: *const c_char) => modl::module_get_function(out(f), m, text(n));
        cuLinkCreate(n: u32, o: *mut u32, v: *mut *mut c_void, st: *mut CUlinkState) => link::link_create(jit_options(n, o, v), out(st));
        cuLinkCreate_v2 @6050 (n: u32, o: *mut u32, v: *mut *mut c_void, st: *mut CUlinkState) => link::link_create(jit_options(n, o, v), out(st));
        cuLinkAddData(st: CUlinkState, t: u32, d: *mut c_void, sz: usize, name: *const c_char, n: u32, o: *mut u32, v: *mut *mut c_void) => link::link_add_data(st, t, host_bytes(d, sz), text(name), jit_options(n, o, v));
        cuLinkAddData_v2 @6050 (st: CUlinkState, t: u32, d: *mut c_void, sz: usize, name: *const c_char, n: u32, o: *mut u32, v: *mut *mut c_void) => link::link_add_data(st, t, host_bytes(d, sz), text(name), jit_options(n, o, v));
        cuLinkAddFile(st: CUlinkState, t: u32, p: *const c_char, n: u32, o: *mut u32, v: *mut *mut c_void) => link::link_add_file(st, t, text(p), jit_options(n, o, v));
        cuLinkAddFile_v2 @6050 (st: CUlinkState, t: u32, p: *const c_char, n: u32, o: *mut u32, v: *mut *mut c_void) => link::link_add_file(st, t, text(p), jit_options(n, o, v));
        cuLinkComplete(st: CUlinkState, img: *mut *mut c_void, sz: *mut usize) => link::link_complete(st, out(img), out(sz));
        cuLinkDestroy(st: CUlinkState) => link::link_destroy(st);
        cuLibraryLoadData(l: *mut CUlibrary, c: *const c_void, jo: *mut u32, jv: *mut *mut c_void, jn: u32, lo: *mut u32, lv: *mut *mut c_void, ln: u32) => lib::library_load_data(out(l), image_ptr(c), jit_options(jn, jo, jv), jit_options(ln, lo, lv));
        cuLibraryLoadFromFile(l: *mut CUlibrary, f: *const c_char, jo: *mut u32, jv: *mut *mut c_void, jn: u32, lo: *mut u32, lv: *mut *mut c_void, ln: u32) => lib::library_load_from_file(out(l), text(f), jit_options(jn, jo, jv), jit_options(ln, lo, lv));
        cuLibraryUnload(l: CUlibrary) => lib::library_unload(l);
        cuLibraryGetKernel(k: *mut CUkernel, l: CUlibrary, n: *const c_char) => lib::library_get_kernel(out(k), l, text(n));
        cuLibraryGetKernelCount(c: *mut u32, l: CUlibrary) => lib::library_get_kernel_count(out(c), l);
        cuLibraryEnumerateKernels(k: *mut CUkernel, n: u32, l: CUlibrary) => lib::library_enumerate_kernels(out_slice(k, n as usize), l);
        cuLibraryGetModule(m: *mut CUmodule, l: CUlibrary) => lib::library_get_module(out(m), l);
        cuLibraryGetGlobal(d: *mut CUdeviceptr, b: *mut usize, l: CUlibrary, n: *const c_char) => lib::library_get_global(out(d), out(b), l, text(n));
        cuKernelGetFunction(f: *mut CUfunction, k: CUkernel) => lib::kernel_get_function(out(f), k);
        cuKernelGetLibrary(l: *mut CUlibrary, k: CUkernel) => lib::kernel_get_library(out(l), k);
        cuKernelGetName(n: *mut *const c_char, k: CUkernel) => lib::kernel_get_name(out(n), k);
        cuKernelGetAttribute(v: *mut i32, a: i32, k: CUkernel, d: CUdevice) => lib::kernel_get_attribute(out(v), a, k, d);
        cuKernelSetAttribute(a: i32, v: i32, k: CUkernel, d: CUdevice) => lib::kernel_set_attribute(a, v, k, d);
        cuKernelGetParamInfo(k: CUkernel, i: usize, o: *mut usize, s: *mut usize) => lib::kernel_get_param_info(k, i, out(o), out(s));
        cuModuleGetFunctionCount(c: *mut u32, m: CUmodule) => modl::module_get_function_count(out(c), m);
        cuModuleGetGlobal_v2 @3020 (d: *mut CUdeviceptr, b: *mut usize, m: CUmodule, n: *const c_char) => modl::module_get_global(out(d), out(b), m, text(n));
        cuFuncGetAttribute(v: *mut i32, a: i32, f: CUfunction) => modl::func_get_attribute(out(v), a, f);
        cuFuncSetAttribute(f: CUfunction, a: i32, v: i32) => modl::func_set_attribute(f, a, v);
        cuFuncSetCacheConfig(f: CUfunction, c: u32) => modl::func_set_cache_config(f, c);
        cuFuncSetSharedMemConfig(f: CUfunction, c: u32) => modl::func_set_shared_mem_config(f, c);
        cuFuncGetName(n: *mut *const c_char, f: CUfunction) => modl::func_get_name(out(n), f);
        cuFuncGetModule(m: *mut CUmodule, f: CUfunction) => modl::func_get_module(out(m), f);
        cuLaunchKernel(f: CUfunction, gx: u32, gy: u32, gz: u32, bx: u32, by: u32, bz: u32, sh: u32, s: CUstream, p: *mut *mut c_void, e: *mut *mut c_void)
            => modl::launch_kernel(f, modl::Shape { grid: [gx, gy, gz], block: [bx, by, bz], shared: sh, stream: s }, kernel_args(p, e));
        cuLaunchKernel_ptsz(f: CUfunction, gx: u32, gy: u32, gz: u32, bx: u32, by: u32, bz: u32, sh: u32, s: CUstream, p: *mut *mut c_void, e: *mut *mut c_void)
            => modl::launch_kernel(f, modl::Shape { grid: [gx, gy, gz], block: [bx, by, bz], shared: sh, stream: s }, kernel_args(p, e));
        cuLaunchCooperativeKernel(f: CUfunction, gx: u32, gy: u32, gz: u32, bx: u32, by: u32, bz: u32, sh: u32, s: CUstream, p: *mut *mut c_void)
            => modl::launch_cooperative_kernel(f, modl::Shape { grid: [gx, gy, gz], block: [bx, by, bz], shared: sh, stream: s }, kernel_args(p, std::ptr::null_mut()));
        cuLaunchCooperativeKernel_ptsz(f: CUfunction, gx: u32, gy: u32, gz: u32, bx: u32, by: u32, bz: u32, sh: u32, s: CUstream, p: *mut *mut c_void)
            => modl::launch_cooperative_kernel(f, modl::Shape { grid: [gx, gy, gz], block: [bx, by, bz], shared: sh, stream: s }, kernel_args(p, std::ptr::null_mut()));
        cuLaunchKernelEx(c: *const CUlaunchConfig, f: CUfunction, p: *mut *mut c_void, e: *mut *mut c_void) => modl::launch_kernel_ex(launch_config(c), f, kernel_args(p, e));
        cuLaunchKernelEx_ptsz(c: *const CUlaunchConfig, f: CUfunction, p: *mut *mut c_void, e: *mut *mut c_void) => modl::launch_kernel_ex(launch_config(c), f, kernel_args(p, e));
        cuOccupancyMaxActiveBlocksPerMultiprocessor(n: *mut i32, f: CUfunction, b: i32, s: usize) => modl::occupancy_max_active_blocks(out(n), f, b, s, 0);
        cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(n: *mut i32, f: CUfunction, b: i32, s: usize, fl: u32) => modl::occupancy_max_active_blocks(out(n), f, b, s, fl);
        cuOccupancyMaxPotentialBlockSize(g: *mut i32, b: *mut i32, f: CUfunction, cb: *const c_void, s: usize, l: i32) => modl::occupancy_max_potential_block_size(out(g), out(b), f, opaque(cb), s, l);
        cuOccupancyMaxPotentialBlockSizeWithFlags(g: *mut i32, b: *mut i32, f: CUfunction, cb: *const c_void, s: usize, l: i32, _fl: u32) => modl::occupancy_max_potential_block_size(out(g), out(b), f, opaque(cb), s, l);

        cuStreamCreate(s: *mut CUstream, f: u32) => st::stream_create(out(s), f);
        cuStreamCreateWithPriority(s: *mut CUstream, f: u32, p: i32) => st::stream_create_with_priority(out(s), f, p);
        cuStreamDestroy(s: CUstream) => st::stream_destroy(s);
        cuStreamDestroy_v2 @4000 (s: CUstream) => st::stream_destroy(s);
        cuStreamQuery(s: CUstream) => st::stream_query(s);
        cuStreamQuery_ptsz(s: CUstream) => st::stream_query(s);
        cuStreamSynchronize(s: CUstream) => st::stream_synchronize(s);
        cuStreamSynchronize_ptsz(s: CUstream) => st::stream_synchronize(s);
        cuStreamWaitEvent(s: CUstream, e: CUevent, f: u32) => st::stream_wait_event(s, e, f);
        cuStreamWaitEvent_ptsz(s: CUstream, e: CUevent, f: u32) => st::stream_wait_event(s, e, f);
        cuStreamAddCallback(s: CUstream, cb: CUstreamCallback, d: *mut c_void, f: u32) => st::stream_add_callback(s, stream_callback(cb, s, d), f);
        cuStreamAddCallback_ptsz(s: CUstream, cb: CUstreamCallback, d: *mut c_void, f: u32) => st::stream_add_callback(s, stream_callback(cb, s, d), f);
        cuLaunchHostFunc(s: CUstream, f: CUhostFn, d: *mut c_void) => st::launch_host_func(s, host_func(f, d));
        cuLaunchHostFunc_ptsz(s: CUstream, f: CUhostFn, d: *mut c_void) => st::launch_host_func(s, host_func(f, d));
        cuStreamGetPriority(s: CUstream, p: *mut i32) => st::stream_get_priority(s, out(p));
        cuStreamGetPriority_ptsz(s: CUstream, p: *mut i32) => st::stream_get_priority(s, out(p));
        cuStreamGetFlags(s: CUstream, f: *mut u32) => st::stream_get_flags(s, out(f));
        cuStreamGetFlags_ptsz(s: CUstream, f: *mut u32) => st::stream_get_flags(s, out(f));
        cuStreamGetCtx(s: CUstream, c: *mut CUcontext) => st::stream_get_ctx(s, out(c));
        cuStreamGetCtx_ptsz(s: CUstream, c: *mut CUcontext) => st::stream_get_ctx(s, out(c));
        cuStreamGetDevice(s: CUstream, d: *mut CUdevice) => st::stream_get_device(s, out(d));
        cuStreamGetDevice_ptsz(s: CUstream, d: *mut CUdevice) => st::stream_get_device(s, out(d));
        cuStreamGetId(s: CUstream, id: *mut u64) => st::stream_get_id(s, out(id));
        cuStreamGetId_ptsz(s: CUstream, id: *mut u64) => st::stream_get_id(s, out(id));
        cuStreamIsCapturing(s: CUstream, c: *mut u32) => gr::stream_is_capturing(s, out(c));
        cuStreamIsCapturing_ptsz(s: CUstream, c: *mut u32) => gr::stream_is_capturing(s, out(c));
        cuStreamAttachMemAsync(s: CUstream, p: CUdeviceptr, n: usize, f: u32) => st::stream_attach_mem_async(s, p, n, f);
        cuStreamAttachMemAsync_ptsz(s: CUstream, p: CUdeviceptr, n: usize, f: u32) => st::stream_attach_mem_async(s, p, n, f);
        cuEventCreate(e: *mut CUevent, f: u32) => st::event_create(out(e), f);
        cuEventDestroy(e: CUevent) => st::event_destroy(e);
        cuEventDestroy_v2 @4000 (e: CUevent) => st::event_destroy(e);
        cuEventRecord(e: CUevent, s: CUstream) => st::event_record(e, s);
        cuEventRecord_ptsz(e: CUevent, s: CUstream) => st::event_record(e, s);
        cuEventRecordWithFlags(e: CUevent, s: CUstream, f: u32) => st::event_record_with_flags(e, s, f);
        cuEventRecordWithFlags_ptsz(e: CUevent, s: CUstream, f: u32) => st::event_record_with_flags(e, s, f);
        cuEventQuery(e: CUevent) => st::event_query(e);
        cuEventSynchronize(e: CUevent) => st::event_synchronize(e);
        cuEventElapsedTime(ms: *mut f32, a: CUevent, b: CUevent) => st::event_elapsed_time(out(ms), a, b);
        cuEventElapsedTime_v2 @12080 (ms: *mut f32, a: CUevent, b: CUevent) => st::event_elapsed_time(out(ms), a, b);

        cuStreamBeginCapture(s: CUstream) => gr::begin_capture_v1(s);
        cuStreamBeginCapture_ptsz(s: CUstream, m: u32) => gr::stream_begin_capture(s, m);
        cuStreamBeginCapture_v2 @10010 (s: CUstream, m: u32) => gr::stream_begin_capture(s, m);
        cuStreamBeginCapture_v2_ptsz(s: CUstream, m: u32) => gr::stream_begin_capture(s, m);
        cuStreamEndCapture(s: CUstream, g: *mut CUgraph) => gr::stream_end_capture(s, out(g));
        cuStreamEndCapture_ptsz(s: CUstream, g: *mut CUgraph) => gr::stream_end_capture(s, out(g));
        cuStreamGetCaptureInfo(s: CUstream, st: *mut u32, id: *mut u64)
            => gr::stream_get_capture_info(s, out(st), out(id), out(std::ptr::null_mut()), out(std::ptr::null_mut()), out(std::ptr::null_mut()), out(std::ptr::null_mut()));
        cuStreamGetCaptureInfo_ptsz(s: CUstream, st: *mut u32, id: *mut u64)
            => gr::stream_get_capture_info(s, out(st), out(id), out(std::ptr::null_mut()), out(std::ptr::null_mut()), out(std::ptr::null_mut()), out(std::ptr::null_mut()));
        cuStreamGetCaptureInfo_v2 @11030 (s: CUstream, st: *mut u32, id: *mut u64, g: *mut CUgraph, d: *mut *const CUgraphNode, n: *mut usize)
            => gr::stream_get_capture_info(s, out(st), out(id), out(g), out(d), out(std::ptr::null_mut()), out(n));
        cuStreamGetCaptureInfo_v2_ptsz(s: CUstream, st: *mut u32, id: *mut u64, g: *mut CUgraph, d: *mut *const CUgraphNode, n: *mut usize)
            => gr::stream_get_capture_info(s, out(st), out(id), out(g), out(d), out(std::ptr::null_mut()), out(n));
        cuStreamGetCaptureInfo_v3 @12030 (s: CUstream, st: *mut u32, id: *mut u64, g: *mut CUgraph, d: *mut *const CUgraphNode, e: *mut *const c_void, n: *mut usize)
            => gr::stream_get_capture_info(s, out(st), out(id), out(g), out(d), out(e), out(n));
        cuStreamGetCaptureInfo_v3_ptsz(s: CUstream, st: *mut u32, id: *mut u64, g: *mut CUgraph, d: *mut *const CUgraphNode, e: *mut *const c_void, n: *mut usize)
            => gr::stream_get_capture_info(s, out(st), out(id), out(g), out(d), out(e), out(n));
        cuThreadExchangeStreamCaptureMode(m: *mut u32) => gr::thread_exchange_mode(out(m), input(m));

        cuGraphCreate(g: *mut CUgraph, f: u32) => gr::graph_create(out(g), f);
        cuGraphDestroy(g: CUgraph) => gr::graph_destroy(g);
        cuGraphClone(c: *mut CUgraph, g: CUgraph) => gr::graph_clone(out(c), g);
        cuGraphNodeFindInClone(n: *mut CUgraphNode, o: CUgraphNode, g: CUgraph) => gr::node_find_in_clone(out(n), o, g);
        cuGraphDestroyNode(n: CUgraphNode) => gr::graph_destroy_node(n);
        cuGraphAddKernelNode(n: *mut CUgraphNode, g: CUgraph, d: *const CUgraphNode, c: usize, p: *const c_void)
            => gr::add_kernel_node(out(n), g, array(d, c), kernel_node_params(p, false));
        cuGraphAddKernelNode_v2 @12000 (n: *mut CUgraphNode, g: CUgraph, d: *const CUgraphNode, c: usize, p: *const c_void)
            => gr::add_kernel_node(out(n), g, array(d, c), kernel_node_params(p, true));
        cuGraphKernelNodeGetParams(n: CUgraphNode, p: *mut c_void) => gr::kernel_node_get(n, kernel_node_out(p, false));
        cuGraphKernelNodeGetParams_v2 @12000 (n: CUgraphNode, p: *mut c_void) => gr::kernel_node_get(n, kernel_node_out(p, true));
        cuGraphKernelNodeSetParams(n: CUgraphNode, p: *const c_void) => gr::kernel_node_set(n, kernel_node_params(p, false));
        cuGraphKernelNodeSetParams_v2 @12000 (n: CUgraphNode, p: *const c_void) => gr::kernel_node_set(n, kernel_node_params(p, true));
        cuGraphAddMemcpyNode(n: *mut CUgraphNode, g: CUgraph, d: *const CUgraphNode, c: usize, p: *const CUDA_MEMCPY3D, x: CUcontext)
            => gr::add_memcpy_node(out(n), g, array(d, c), input(p), x);
        cuGraphMemcpyNodeGetParams(n: CUgraphNode, p: *mut CUDA_MEMCPY3D) => gr::memcpy_node_get(n, out(p));
        cuGraphMemcpyNodeSetParams(n: CUgraphNode, p: *const CUDA_MEMCPY3D) => gr::memcpy_node_set(n, input(p));
        cuGraphAddMemsetNode(n: *mut CUgraphNode, g: CUgraph, d: *const CUgraphNode, c: usize, p: *const CUDA_MEMSET_NODE_PARAMS, x: CUcontext)
            => gr::add_memset_node(out(n), g, array(d, c), input(p), x);
        cuGraphMemsetNodeGetParams(n: CUgraphNode, p: *mut CUDA_MEMSET_NODE_PARAMS) => gr::memset_node_get(n, out(p));
        cuGraphMemsetNodeSetParams(n: CUgraphNode, p: *const CUDA_MEMSET_NODE_PARAMS) => gr::memset_node_set(n, input(p));
        cuGraphAddHostNode(n: *mut CUgraphNode, g: CUgraph, d: *const CUgraphNode, c: usize, p: *const CUDA_HOST_NODE_PARAMS)
            => gr::add_host_node(out(n), g, array(d, c), host_node_params(p));
        cuGraphHostNodeGetParams(n: CUgraphNode, p: *mut CUDA_HOST_NODE_PARAMS) => gr::host_node_get(n, out(p));
        cuGraphHostNodeSetParams(n: CUgraphNode, p: *const CUDA_HOST_NODE_PARAMS) => gr::host_node_set(n, host_node_params(p));
        cuGraphAddChildGraphNode(n: *mut CUgraphNode, g: CUgraph, d: *const CUgraphNode, c: usize, child: CUgraph)
            => gr::add_child_node(out(n), g, array(d, c), child);
        cuGraphChildGraphNodeGetGraph(n: CUgraphNode, g: *mut CUgraph) => gr::child_node_get_graph(n, out(g));
        cuGraphAddEmptyNode(n: *mut CUgraphNode, g: CUgraph, d: *const CUgraphNode, c: usize) => gr::add_empty_node(out(n), g, array(d, c));
        cuGraphAddEventRecordNode(n: *mut CUgraphNode, g: CUgraph, d: *const CUgraphNode, c: usize, e: CUevent)
            => gr::add_event_node(out(n), g, array(d, c), e, true);
        cuGraphEventRecordNodeGetEvent(n: CUgraphNode, e: *mut CUevent) => gr::event_node_get(n, out(e), true);
        cuGraphEventRecordNodeSetEvent(n: CUgraphNode, e: CUevent) => gr::event_node_set(n, e, true);
        cuGraphAddEventWaitNode(n: *mut CUgraphNode, g: CUgraph, d: *const CUgraphNode, c: usize, e: CUevent)
            => gr::add_event_node(out(n), g, array(d, c), e, false);
        cuGraphEventWaitNodeGetEvent(n: CUgraphNode, e: *mut CUevent) => gr::event_node_get(n, out(e), false);
        cuGraphEventWaitNodeSetEvent(n: CUgraphNode, e: CUevent) => gr::event_node_set(n, e, false);
        cuGraphAddMemAllocNode(_n: *mut CUgraphNode, _g: CUgraph, _d: *const CUgraphNode, _c: usize, _p: *mut c_void) => gr::unsupported_node("memory allocation");
        cuGraphAddMemFreeNode(_n: *mut CUgraphNode, _g: CUgraph, _d: *const CUgraphNode, _c: usize, _p: CUdeviceptr) => gr::unsupported_node("memory free");
        cuGraphAddBatchMemOpNode(_n: *mut CUgraphNode, _g: CUgraph, _d: *const CUgraphNode, _c: usize, _p: *const c_void) => gr::unsupported_node("batch memory operation");
        cuGraphAddExternalSemaphoresSignalNode(_n: *mut CUgraphNode, _g: CUgraph, _d: *const CUgraphNode, _c: usize, _p: *const c_void)
            => gr::unsupported_node("external semaphore signal");
        cuGraphAddExternalSemaphoresWaitNode(_n: *mut CUgraphNode, _g: CUgraph, _d: *const CUgraphNode, _c: usize, _p: *const c_void)
            => gr::unsupported_node("external semaphore wait");
        cuGraphConditionalHandleCreate(_h: *mut u64, _g: CUgraph, _x: CUcontext, _v: u32, _f: u32) => gr::unsupported_node("conditional");
        cuGraphAddNode(_n: *mut CUgraphNode, _g: CUgraph, _d: *const CUgraphNode, _c: usize, p: *const c_void) => gr::add_node_generic(node_params_type(p));
        cuGraphAddNode_v2 @12030 (_n: *mut CUgraphNode, _g: CUgraph, _d: *const CUgraphNode, _e: *const c_void, _c: usize, p: *const c_void)
            => gr::add_node_generic(node_params_type(p));
        cuGraphAddNode_v3 @13040 (_n: *mut CUgraphNode, _g: CUgraph, _d: *const CUgraphNode, _e: *const c_void, _c: usize, p: *const c_void)
            => gr::add_node_generic(node_params_type(p));
        cuGraphAddDependencies(g: CUgraph, f: *const CUgraphNode, t: *const CUgraphNode, c: usize)
            => gr::dependencies_change(g, array(f, c), array(t, c), true, true);
        cuGraphAddDependencies_v2 @12030 (g: CUgraph, f: *const CUgraphNode, t: *const CUgraphNode, e: *const c_void, c: usize)
            => gr::dependencies_change(g, array(f, c), array(t, c), default_edges(e, c), true);
        cuGraphRemoveDependencies(g: CUgraph, f: *const CUgraphNode, t: *const CUgraphNode, c: usize)
            => gr::dependencies_change(g, array(f, c), array(t, c), true, false);
        cuGraphRemoveDependencies_v2 @12030 (g: CUgraph, f: *const CUgraphNode, t: *const CUgraphNode, e: *const c_void, c: usize)
            => gr::dependencies_change(g, array(f, c), array(t, c), default_edges(e, c), false);
        cuGraphGetNodes(g: CUgraph, n: *mut CUgraphNode, c: *mut usize) => gr::get_nodes(g, handle_list(n, std::ptr::null_mut(), c));
        cuGraphGetRootNodes(g: CUgraph, n: *mut CUgraphNode, c: *mut usize) => gr::get_root_nodes(g, handle_list(n, std::ptr::null_mut(), c));
        cuGraphGetEdges(g: CUgraph, f: *mut CUgraphNode, t: *mut CUgraphNode, c: *mut usize) => gr::get_edges(g, edge_list(f, t, std::ptr::null_mut(), c));
        cuGraphGetEdges_v2 @12030 (g: CUgraph, f: *mut CUgraphNode, t: *mut CUgraphNode, e: *mut c_void, c: *mut usize) => gr::get_edges(g, edge_list(f, t, e, c));
        cuGraphNodeGetDependencies(n: CUgraphNode, d: *mut CUgraphNode, c: *mut usize) => gr::node_get_dependencies(n, handle_list(d, std::ptr::null_mut(), c));
        cuGraphNodeGetDependencies_v2 @12030 (n: CUgraphNode, d: *mut CUgraphNode, e: *mut c_void, c: *mut usize) => gr::node_get_dependencies(n, handle_list(d, e, c));
        cuGraphNodeGetDependentNodes(n: CUgraphNode, d: *mut CUgraphNode, c: *mut usize) => gr::node_get_dependents(n, handle_list(d, std::ptr::null_mut(), c));
        cuGraphNodeGetDependentNodes_v2 @12030 (n: CUgraphNode, d: *mut CUgraphNode, e: *mut c_void, c: *mut usize) => gr::node_get_dependents(n, handle_list(d, e, c));
        cuGraphNodeGetType(n: CUgraphNode, t: *mut u32) => gr::node_get_type(n, out(t));
        cuGraphNodeGetContainingGraph(n: CUgraphNode, g: *mut CUgraph) => gr::node_get_graph(n, out(g));
        cuGraphInstantiate(e: *mut CUgraphExec, g: CUgraph, n: *mut CUgraphNode, l: *mut c_char, sz: usize)
            => gr::graph_instantiate_legacy(out(e), g, out(n), out_text(l, sz.min(i32::MAX as usize) as i32));
        cuGraphInstantiate_v2 @11000 (e: *mut CUgraphExec, g: CUgraph, n: *mut CUgraphNode, l: *mut c_char, sz: usize)
            => gr::graph_instantiate_legacy(out(e), g, out(n), out_text(l, sz.min(i32::MAX as usize) as i32));
        cuGraphInstantiateWithFlags(e: *mut CUgraphExec, g: CUgraph, f: u64) => gr::graph_instantiate(out(e), g, f);
        cuGraphInstantiateWithParams(e: *mut CUgraphExec, g: CUgraph, p: *mut CUDA_GRAPH_INSTANTIATE_PARAMS)
            => gr::graph_instantiate_with_params(out(e), g, out(p), input(p));
        cuGraphInstantiateWithParams_ptsz(e: *mut CUgraphExec, g: CUgraph, p: *mut CUDA_GRAPH_INSTANTIATE_PARAMS)
            => gr::graph_instantiate_with_params(out(e), g, out(p), input(p));
        cuGraphExecGetFlags(e: CUgraphExec, f: *mut u64) => gr::exec_get_flags(e, out(f));
        cuGraphLaunch(e: CUgraphExec, s: CUstream) => gr::graph_launch(e, s);
        cuGraphLaunch_ptsz(e: CUgraphExec, s: CUstream) => gr::graph_launch(e, s);
        cuGraphUpload(e: CUgraphExec, s: CUstream) => gr::graph_upload(e, s);
        cuGraphUpload_ptsz(e: CUgraphExec, s: CUstream) => gr::graph_upload(e, s);
        cuGraphExecDestroy(e: CUgraphExec) => gr::graph_exec_destroy(e);
        cuGraphExecKernelNodeSetParams(e: CUgraphExec, n: CUgraphNode, p: *const c_void) => gr::exec_kernel_node_set(e, n, kernel_node_params(p, false));
        cuGraphExecKernelNodeSetParams_v2 @12000 (e: CUgraphExec, n: CUgraphNode, p: *const c_void) => gr::exec_kernel_node_set(e, n, kernel_node_params(p, true));
        cuGraphExecMemcpyNodeSetParams(e: CUgraphExec, n: CUgraphNode, p: *const CUDA_MEMCPY3D, x: CUcontext) => gr::exec_memcpy_node_set(e, n, input(p), x);
        cuGraphExecMemsetNodeSetParams(e: CUgraphExec, n: CUgraphNode, p: *const CUDA_MEMSET_NODE_PARAMS, x: CUcontext) => gr::exec_memset_node_set(e, n, input(p), x);
        cuGraphExecHostNodeSetParams(e: CUgraphExec, n: CUgraphNode, p: *const CUDA_HOST_NODE_PARAMS) => gr::exec_host_node_set(e, n, host_node_params(p));
        cuGraphExecEventRecordNodeSetEvent(e: CUgraphExec, n: CUgraphNode, ev: CUevent) => gr::exec_event_node_set(e, n, ev, true);
        cuGraphExecEventWaitNodeSetEvent(e: CUgraphExec, n: CUgraphNode, ev: CUevent) => gr::exec_event_node_set(e, n, ev, false);
        cuGraphExecUpdate(e: CUgraphExec, g: CUgraph, n: *mut CUgraphNode, r: *mut u32) => gr::exec_update_v1(e, g, out(n), out(r));
        cuGraphExecUpdate_v2 @12000 (e: CUgraphExec, g: CUgraph, i: *mut CUgraphExecUpdateResultInfo) => gr::exec_update_v2(e, g, out(i));

        cuGetErrorName(c: CUresult, s: *mut *const c_char) => misc::get_error_name(c, out(s));
        cuGetErrorString(c: CUresult, s: *mut *const c_char) => misc::get_error_string(c, out(s));
        cuGetProcAddress(n: *const c_char, p: *mut *mut c_void, v: i32, f: u64) => get_proc_address(text(n), out(p), v, f, out(std::ptr::null_mut()));
        cuGetProcAddress_v2 @12000 (n: *const c_char, p: *mut *mut c_void, v: i32, f: u64, st: *mut i32) => get_proc_address(text(n), out(p), v, f, out(st));
        cuArrayCreate_v2 @3020 (p: *mut *mut c_void, d: *const CUDA_ARRAY_DESCRIPTOR) => tex::array_create(out(p), input(d));
        cuArray3DCreate_v2 @3020 (p: *mut *mut c_void, d: *const CUDA_ARRAY3D_DESCRIPTOR) => tex::array3d_create(out(p), input(d));
        cuArrayDestroy(a: *mut c_void) => tex::array_destroy(a);
        cuArrayGetDescriptor_v2 @3020 (p: *mut CUDA_ARRAY_DESCRIPTOR, a: *mut c_void) => tex::array_get_descriptor(out(p), a);
        cuArray3DGetDescriptor_v2 @3020 (p: *mut CUDA_ARRAY3D_DESCRIPTOR, a: *mut c_void) => tex::array3d_get_descriptor(out(p), a);
        cuMipmappedArrayCreate(p: *mut *mut c_void, d: *const CUDA_ARRAY3D_DESCRIPTOR, n: u32) => tex::mipmapped_create(out(p), input(d), n);
        cuMipmappedArrayGetLevel(p: *mut *mut c_void, m: *mut c_void, l: u32) => tex::mipmapped_get_level(out(p), m, l);
        cuMipmappedArrayDestroy(m: *mut c_void) => tex::mipmapped_destroy(m);
        cuMemcpy3D_v2 @3020 (p: *const CUDA_MEMCPY3D) => gr::memcpy_3d(input(p), None);
        cuMemcpy3D_v2_ptds(p: *const CUDA_MEMCPY3D) => gr::memcpy_3d(input(p), None);
        cuMemcpy3DAsync_v2 @3020 (p: *const CUDA_MEMCPY3D, st: CUstream) => gr::memcpy_3d(input(p), Some(st));
        cuMemcpy3DAsync_v2_ptsz(p: *const CUDA_MEMCPY3D, st: CUstream) => gr::memcpy_3d(input(p), Some(st));
        cuMemcpyHtoA_v2 @3020 (a: *mut c_void, o: usize, s: *const c_void, n: usize) => tex::memcpy_htoa(a, o, host(s), n);
        cuMemcpyHtoA_v2_ptds(a: *mut c_void, o: usize, s: *const c_void, n: usize) => tex::memcpy_htoa(a, o, host(s), n);
        cuMemcpyAtoH_v2 @3020 (d: *mut c_void, a: *mut c_void, o: usize, n: usize) => tex::memcpy_atoh(host(d), a, o, n);
        cuMemcpyAtoH_v2_ptds(d: *mut c_void, a: *mut c_void, o: usize, n: usize) => tex::memcpy_atoh(host(d), a, o, n);
        cuMemcpyDtoA_v2 @3020 (a: *mut c_void, o: usize, s: CUdeviceptr, n: usize) => tex::memcpy_dtoa(a, o, s, n);
        cuMemcpyDtoA_v2_ptds(a: *mut c_void, o: usize, s: CUdeviceptr, n: usize) => tex::memcpy_dtoa(a, o, s, n);
        cuMemcpyAtoD_v2 @3020 (d: CUdeviceptr, a: *mut c_void, o: usize, n: usize) => tex::memcpy_atod(d, a, o, n);
        cuMemcpyAtoD_v2_ptds(d: CUdeviceptr, a: *mut c_void, o: usize, n: usize) => tex::memcpy_atod(d, a, o, n);
        cuTexObjectCreate(p: *mut u64, r: *const CUDA_RESOURCE_DESC, t: *const CUDA_TEXTURE_DESC, v: *const CUDA_RESOURCE_VIEW_DESC) => tex::tex_object_create(out(p), input(r), input(t), input(v));
        cuTexObjectDestroy(h: u64) => tex::tex_object_destroy(h);
        cuTexObjectGetResourceDesc(p: *mut CUDA_RESOURCE_DESC, h: u64) => tex::tex_object_get_resource_desc(out(p), h);
        cuTexObjectGetTextureDesc(p: *mut CUDA_TEXTURE_DESC, h: u64) => tex::tex_object_get_texture_desc(out(p), h);
        cuTexObjectGetResourceViewDesc(p: *mut CUDA_RESOURCE_VIEW_DESC, h: u64) => tex::tex_object_get_resource_view_desc(out(p), h);
        cuSurfObjectCreate(p: *mut u64, r: *const CUDA_RESOURCE_DESC) => tex::surf_object_create(out(p), input(r));
        cuSurfObjectDestroy(h: u64) => tex::surf_object_destroy(h);
        cuSurfObjectGetResourceDesc(p: *mut CUDA_RESOURCE_DESC, h: u64) => tex::surf_object_get_resource_desc(out(p), h);
        cuProfilerStart() => misc::profiler_start_stop();
        cuProfilerStop() => misc::profiler_start_stop();
    }
    legacy {
        cuCtxCreate => CUDA_ERROR_OUT_OF_MEMORY;
        cuMemAlloc => CUDA_ERROR_INVALID_CONTEXT;
        cuMemAllocPitch => CUDA_ERROR_INVALID_CONTEXT;
        cuMemFree => CUDA_ERROR_INVALID_CONTEXT;
        cuMemGetInfo => CUDA_ERROR_INVALID_CONTEXT;
        cuMemGetAddressRange => CUDA_ERROR_INVALID_CONTEXT;
        cuMemAllocHost => CUDA_ERROR_INVALID_CONTEXT;
        cuMemHostGetDevicePointer => CUDA_ERROR_INVALID_CONTEXT;
        cuMemcpyHtoD => CUDA_ERROR_INVALID_CONTEXT;
        cuMemcpyDtoH => CUDA_ERROR_INVALID_CONTEXT;
        cuMemcpyDtoD => CUDA_ERROR_INVALID_CONTEXT;
        cuMemcpyHtoDAsync => CUDA_ERROR_INVALID_CONTEXT;
        cuMemcpyDtoHAsync => CUDA_ERROR_INVALID_CONTEXT;
        cuMemcpyDtoDAsync => CUDA_ERROR_INVALID_CONTEXT;
        cuMemcpy2D => CUDA_ERROR_INVALID_CONTEXT;
        cuMemcpy2DAsync => CUDA_ERROR_INVALID_CONTEXT;
        cuMemcpy2DUnaligned => CUDA_ERROR_INVALID_CONTEXT;
        cuMemsetD8 => CUDA_ERROR_INVALID_CONTEXT;
        cuMemsetD16 => CUDA_ERROR_INVALID_CONTEXT;
        cuMemsetD32 => CUDA_ERROR_INVALID_CONTEXT;
        cuMemsetD2D8 => CUDA_ERROR_INVALID_CONTEXT;
        cuMemsetD2D16 => CUDA_ERROR_INVALID_CONTEXT;
        cuMemsetD2D32 => CUDA_ERROR_INVALID_CONTEXT;
        cuModuleGetGlobal => CUDA_ERROR_INVALID_CONTEXT;
        cuMemHostRegister => CUDA_ERROR_INVALID_CONTEXT;
    }
    unsupported {

        cuGLGetDevices, cuGLGetDevices_v2 @6050, cuGraphicsGLRegisterImage, cuGraphicsGLRegisterBuffer, cuGraphicsUnregisterResource,
        cuGraphicsMapResources, cuGraphicsUnmapResources, cuGraphicsSubResourceGetMappedArray,
        cuGraphicsResourceGetMappedPointer, cuGraphicsResourceGetMappedPointer_v2 @3020,
        cuImportExternalMemory, cuDestroyExternalMemory, cuExternalMemoryGetMappedBuffer,
        cuExternalMemoryGetMappedMipmappedArray,
        cuImportExternalSemaphore, cuDestroyExternalSemaphore, cuSignalExternalSemaphoresAsync, cuWaitExternalSemaphoresAsync,
        cuArrayCreate, cuArray3DCreate,
        cuEGLStreamProducerConnect, cuEGLStreamProducerDisconnect, cuEGLStreamConsumerDisconnect,
        cuEGLStreamProducerPresentFrame, cuEGLStreamProducerReturnFrame,
        cuOccupancyMaxPotentialClusterSize, cuOccupancyMaxActiveClusters, cuOccupancyAvailableDynamicSMemPerBlock,
        cuCtxEnablePeerAccess, cuCtxDisablePeerAccess, cuDeviceGetP2PAttribute,
        cuIpcGetMemHandle, cuIpcOpenMemHandle, cuIpcOpenMemHandle_v2 @11000, cuIpcCloseMemHandle, cuIpcGetEventHandle, cuIpcOpenEventHandle,
        cuCtxAttach, cuCtxDetach,
        // The rest of cuda.h (tests/cuda_h_exports.rs checks that nothing is left out).
        cuArray3DGetDescriptor, cuArrayGetDescriptor,
        cuArrayGetMemoryRequirements, cuArrayGetPlane, cuArrayGetSparseProperties, cuCheckpointOperationComplete,
        cuCheckpointProcessCheckpoint, cuCheckpointProcessGetRestoreThreadId, cuCheckpointProcessGetState,
        cuCheckpointProcessLock, cuCheckpointProcessRestore, cuCheckpointProcessUnlock,
        cuCoredumpDeregisterCompleteCallback, cuCoredumpDeregisterStartCallback, cuCoredumpGetAttribute,
        cuCoredumpGetAttributeGlobal, cuCoredumpRegisterCompleteCallback, cuCoredumpRegisterStartCallback,
        cuCoredumpSetAttribute, cuCoredumpSetAttributeGlobal, cuCtxFromGreenCtx, cuCtxGetDevResource,
        cuCtxGetExecAffinity, cuCtxRecordEvent, cuCtxResetPersistingL2Cache, cuCtxWaitEvent,
        cuDevResourceGenerateDesc, cuDevSmResourceSplit, cuDevSmResourceSplitByCount, cuDeviceGetCliqueCount,
        cuDeviceGetCliqueInfo, cuDeviceGetDevResource, cuDeviceGetExecAffinitySupport, cuDeviceGetFabricClusterUuid,
        cuDeviceGetGraphMemAttribute, cuDeviceGetHostAtomicCapabilities, cuDeviceGetLuid,
        cuDeviceGetNvSciSyncAttributes, cuDeviceGetP2PAtomicCapabilities, cuDeviceGraphMemTrim,
        cuDeviceRegisterAsyncNotification, cuDeviceSetGraphMemAttribute, cuDeviceUnregisterAsyncNotification,
        cuFabricCpyBatchAsync, cuFabricCpyBatchAsync_ptsz, cuFlushGPUDirectRDMAWrites, cuFuncGetParamCount,
        cuFuncGetParamInfo, cuFuncIsLoaded, cuFuncLoad, cuFuncSetBlockShape, cuFuncSetSharedSize,





        cuGraphBatchMemOpNodeGetParams, cuGraphBatchMemOpNodeSetParams,
        cuGraphDebugDotPrint,

        cuGraphExecBatchMemOpNodeSetParams,
        cuGraphExecChildGraphNodeSetParams,
        cuGraphExecExternalSemaphoresSignalNodeSetParams, cuGraphExecExternalSemaphoresWaitNodeSetParams,
        cuGraphExecGetId,

        cuGraphExecNodeSetParams,
        cuGraphExternalSemaphoresSignalNodeGetParams, cuGraphExternalSemaphoresSignalNodeSetParams,
        cuGraphExternalSemaphoresWaitNodeGetParams, cuGraphExternalSemaphoresWaitNodeSetParams,
        cuGraphGetId,

        cuGraphKernelNodeCopyAttributes, cuGraphKernelNodeGetAttribute,
        cuGraphKernelNodeSetAttribute,

        cuGraphMemAllocNodeGetParams, cuGraphMemFreeNodeGetParams,


        cuGraphNodeGetEnabled,
        cuGraphNodeGetLocalId, cuGraphNodeGetParams, cuGraphNodeGetToolsId,
        cuGraphNodeSetEnabled, cuGraphNodeSetParams, cuGraphNodeSetParams_v2 @13040, cuGraphReleaseUserObject,
        cuGraphRetainUserObject,
        cuGraphicsMapResources_ptsz, cuGraphicsResourceGetMappedMipmappedArray, cuGraphicsResourceSetMapFlags,
        cuGraphicsResourceSetMapFlags_v2 @6050, cuGraphicsUnmapResources_ptsz, cuGreenCtxCreate, cuGreenCtxDestroy,
        cuGreenCtxGetDevResource, cuGreenCtxGetId, cuGreenCtxRecordEvent, cuGreenCtxStreamCreate,
        cuGreenCtxWaitEvent, cuKernelGetParamCount, cuKernelSetCacheConfig, cuLaunch,
        cuLaunchCooperativeKernelMultiDevice, cuLaunchGrid, cuLaunchGridAsync,
        cuLaunchHostFunc_v2 @13010, cuLaunchHostFunc_v2_ptsz,
        cuLibraryGetManaged, cuLibraryGetUnifiedFunction, cuLogicalEndpointAddDevice,
        cuLogicalEndpointBindAddr, cuLogicalEndpointBindMem, cuLogicalEndpointCreate, cuLogicalEndpointDestroy,
        cuLogicalEndpointExport, cuLogicalEndpointGetLimits, cuLogicalEndpointIdRelease, cuLogicalEndpointIdReserve,
        cuLogicalEndpointImport, cuLogicalEndpointQuery, cuLogicalEndpointUnbind, cuLogsCurrent, cuLogsDumpToFile,
        cuLogsDumpToMemory, cuLogsRegisterCallback, cuLogsUnregisterCallback, cuMemBatchDecompressAsync,
        cuMemBatchDecompressAsync_ptsz, cuMemDiscardAndPrefetchBatchAsync, cuMemDiscardAndPrefetchBatchAsync_ptsz,
        cuMemDiscardBatchAsync, cuMemDiscardBatchAsync_ptsz, cuMemGetHandleForAddressRange, cuMemGetLocationInfo,
        cuMemMapArrayAsync, cuMemMapArrayAsync_ptsz, cuMemPoolExportPointer, cuMemPoolExportToShareableHandle,
        cuMemPoolGetAccess, cuMemPoolImportFromShareableHandle, cuMemPoolImportPointer, cuMemPoolSetAccess,
        cuMemPrefetchBatchAsync, cuMemPrefetchBatchAsync_ptsz, cuMemRangeGetAttribute, cuMemRangeGetAttributes,
        cuMemcpy3D, cuMemcpy3DAsync, cuMemcpy3DBatchAsync, cuMemcpy3DBatchAsync_ptsz,
        cuMemcpy3DBatchAsync_v2 @13000, cuMemcpy3DBatchAsync_v2_ptsz, cuMemcpy3DPeer, cuMemcpy3DPeerAsync,
        cuMemcpy3DPeerAsync_ptsz, cuMemcpy3DPeer_ptds, cuMemcpy3DWithAttributesAsync,
        cuMemcpy3DWithAttributesAsync_ptsz, cuMemcpyAtoA, cuMemcpyAtoA_v2 @3020,
        cuMemcpyAtoA_v2_ptds, cuMemcpyAtoD, cuMemcpyAtoH,
        cuMemcpyAtoHAsync, cuMemcpyAtoHAsync_v2 @3020, cuMemcpyAtoHAsync_v2_ptsz,
        cuMemcpyBatchAsync, cuMemcpyBatchAsync_ptsz, cuMemcpyBatchAsync_v2 @13000,
        cuMemcpyBatchAsync_v2_ptsz, cuMemcpyDtoA, cuMemcpyHtoA,
        cuMemcpyHtoAAsync, cuMemcpyHtoAAsync_v2 @3020, cuMemcpyHtoAAsync_v2_ptsz,
        cuMemcpyWithAttributesAsync, cuMemcpyWithAttributesAsync_ptsz,
        cuMipmappedArrayGetMemoryRequirements, cuMipmappedArrayGetSparseProperties, cuModuleEnumerateFunctions,
        cuModuleGetLoadingMode, cuModuleGetSurfRef, cuModuleGetTexRef, cuMulticastAddDevice, cuMulticastBindAddr,
        cuMulticastBindAddr_v2 @13010, cuMulticastBindMem, cuMulticastBindMem_v2 @13010, cuMulticastCreate,
        cuMulticastGetGranularity, cuMulticastUnbind, cuParamSetSize, cuParamSetTexRef, cuParamSetf, cuParamSeti,
        cuParamSetv, cuPointerSetAttribute, cuSignalExternalSemaphoresAsync_ptsz, cuStreamBatchMemOp,
        cuStreamBatchMemOp_ptsz, cuStreamBatchMemOp_v2 @11070, cuStreamBatchMemOp_v2_ptsz, cuStreamBeginCaptureToCig,
        cuStreamBeginCaptureToCig_ptsz, cuStreamBeginCaptureToGraph, cuStreamBeginCaptureToGraph_ptsz,
        cuStreamBeginRecaptureToGraph,
        cuStreamBeginRecaptureToGraph_ptsz, cuStreamCopyAttributes, cuStreamCopyAttributes_ptsz,
        cuStreamEndCaptureToCig, cuStreamEndCaptureToCig_ptsz, cuStreamGetAttribute,
        cuStreamGetAttribute_ptsz,
        cuStreamGetCtx_v2 @12050,
        cuStreamGetCtx_v2_ptsz, cuStreamGetDevResource, cuStreamGetDevResource_ptsz, cuStreamGetGreenCtx,
        cuStreamSetAttribute, cuStreamSetAttribute_ptsz, cuStreamUpdateCaptureDependencies,
        cuStreamUpdateCaptureDependencies_ptsz, cuStreamUpdateCaptureDependencies_v2 @12030,
        cuStreamUpdateCaptureDependencies_v2_ptsz, cuStreamWaitValue32, cuStreamWaitValue32_ptsz,
        cuStreamWaitValue32_v2 @11070, cuStreamWaitValue32_v2_ptsz, cuStreamWaitValue64, cuStreamWaitValue64_ptsz,
        cuStreamWaitValue64_v2 @11070, cuStreamWaitValue64_v2_ptsz, cuStreamWriteValue32, cuStreamWriteValue32_ptsz,
        cuStreamWriteValue32_v2 @11070, cuStreamWriteValue32_v2_ptsz, cuStreamWriteValue64,
        cuStreamWriteValue64_ptsz, cuStreamWriteValue64_v2 @11070, cuStreamWriteValue64_v2_ptsz,
        cuSurfRefGetArray, cuSurfRefSetArray, cuTensorMapEncodeIm2col,
        cuTensorMapEncodeIm2colWide, cuTensorMapEncodeTiled, cuTensorMapReplaceAddress,
        cuTensorMapSetAllocationClass, cuTexRefCreate,
        cuTexRefDestroy, cuTexRefGetAddress, cuTexRefGetAddressMode, cuTexRefGetAddress_v2 @3020, cuTexRefGetArray,
        cuTexRefGetBorderColor, cuTexRefGetFilterMode, cuTexRefGetFlags, cuTexRefGetFormat, cuTexRefGetMaxAnisotropy,
        cuTexRefGetMipmapFilterMode, cuTexRefGetMipmapLevelBias, cuTexRefGetMipmapLevelClamp,
        cuTexRefGetMipmappedArray, cuTexRefSetAddress, cuTexRefSetAddress2D, cuTexRefSetAddress2D_v2 @3020,
        cuTexRefSetAddress2D_v3 @4010, cuTexRefSetAddressMode, cuTexRefSetAddress_v2 @3020, cuTexRefSetArray,
        cuTexRefSetBorderColor, cuTexRefSetFilterMode, cuTexRefSetFlags, cuTexRefSetFormat, cuTexRefSetMaxAnisotropy,
        cuTexRefSetMipmapFilterMode, cuTexRefSetMipmapLevelBias, cuTexRefSetMipmapLevelClamp,
        cuTexRefSetMipmappedArray, cuUserObjectCreate, cuUserObjectRelease, cuUserObjectRetain,
        cuWaitExternalSemaphoresAsync_ptsz,
    }
}

/// cuGetExportTable answers CUDA_ERROR_NOT_SUPPORTED with a line saying why (the CUDA
/// runtime's private tables are out of scope). Kept out of the macro: it is counted as
/// unsupported but has its own message.
#[no_mangle]
pub unsafe extern "C" fn cuGetExportTable(table: *mut *const c_void, id: *const c_void) -> CUresult {
    if crate::passthrough::enabled() {
        // Forwarded always, so programs built on the CUDA runtime keep working.
        type F = unsafe extern "C" fn(*mut *const c_void, *const c_void) -> CUresult;
        let counters = crate::counters::get();
        counters.call("cuGetExportTable");
        let Some(addr) = crate::passthrough::real().ok().and_then(|r| r.symbol("cuGetExportTable")) else {
            return CUDA_ERROR_NOT_INITIALIZED;
        };
        // SAFETY: the real cuGetExportTable with the caller's arguments.
        return unsafe { std::mem::transmute::<usize, F>(addr)(table, id) };
    }
    let counters = crate::counters::get();
    counters.call("cuGetExportTable");
    counters.unsupported("cuGetExportTable");
    counters.failure("cuGetExportTable");
    code(misc::get_export_table())
}

/// cuGetProcAddress(_v2), served from this table: a base name (as the CUDA headers write
/// it, e.g. "cuMemAlloc") resolves to the newest versioned export introduced at or
/// before the requested CUDA version, the plain name otherwise; with the
/// per-thread-default-stream flag to the `_ptsz`/`_ptds` variant where one exists.
fn get_proc_address(symbol: Text, pfn: Out<*mut c_void>, version: i32, flags: u64, status: Out<i32>) -> CuResult {
    let name = symbol.get()?;
    pfn.required()?;
    if flags & !(CU_GET_PROC_ADDRESS_LEGACY_STREAM | CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) != 0 {
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    let mut chosen: Option<&str> = None;
    let mut too_new = false;
    for v in versioned() {
        if v.base == name {
            if version >= v.since {
                chosen = Some(v.export);
            } else {
                too_new = true;
            }
        }
    }
    let resolved = chosen.map(str::to_string).or_else(|| index_of(&name).map(|_| name.clone()));
    if resolved.is_none() && crate::passthrough::enabled() {
        // A name this library does not export: the real driver's own entry (not counted).
        return forward_proc_address(&name, pfn, version, flags, status);
    }
    let Some(mut resolved) = resolved else {
        // Programs probe for optional entries; the name is what a user needs when one
        // was not optional (EMU_CUDA_LOG=info).
        if name == "cuGetExportTable" {
            crate::api::misc::warn_export_tables();
        }
        crate::log_info!(
            "cuGetProcAddress: {name} (CUDA {version}) {}",
            if too_new { "is newer than that version" } else { "is not an entry point of the emulated driver" }
        );
        pfn.set(std::ptr::null_mut())?;
        let asked = !status.is_null();
        status.set_if_asked(if too_new { CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT } else { CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND })?;
        // With a status out-parameter (cuGetProcAddress_v2) the call itself succeeds and
        // the status says why (measured on an H200); without one, NOT_FOUND.
        return if asked { Ok(()) } else { Err(CUDA_ERROR_NOT_FOUND) };
    };
    if flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM != 0 {
        for suffix in ["_ptsz", "_ptds"] {
            let v = format!("{resolved}{suffix}");
            if index_of(&v).is_some() {
                resolved = v;
                break;
            }
        }
    }
    let i = index_of(&resolved).ok_or(CUDA_ERROR_NOT_FOUND)?;
    pfn.set(address(i) as *mut c_void)?;
    status.set_if_asked(CU_GET_PROC_ADDRESS_SUCCESS)
}

/// cuGetProcAddress_v2 of the real driver for a name this library does not export.
fn forward_proc_address(name: &str, pfn: Out<*mut c_void>, version: i32, flags: u64, status: Out<i32>) -> CuResult {
    type F = unsafe extern "C" fn(*const c_char, *mut *mut c_void, i32, u64, *mut i32) -> CUresult;
    let real = crate::passthrough::real().map_err(|_| CUDA_ERROR_NOT_INITIALIZED)?;
    let addr = real.symbol("cuGetProcAddress_v2").ok_or(CUDA_ERROR_NOT_FOUND)?;
    let c = std::ffi::CString::new(name).map_err(|_| CUDA_ERROR_INVALID_VALUE)?;
    let (mut p, mut st) = (std::ptr::null_mut(), 0i32);
    // SAFETY: the real cuGetProcAddress_v2 with our own out-parameters.
    let r = unsafe { std::mem::transmute::<usize, F>(addr)(c.as_ptr(), &mut p, version, flags, &mut st) };
    pfn.set(p)?;
    status.set_if_asked(st)?;
    if r == CUDA_SUCCESS {
        Ok(())
    } else {
        Err(r)
    }
}

/// The checked-in list of entry points (emu-driver/ENTRY_POINTS.md), generated from the
/// table above so that it cannot drift: `SIMTWIN_BLESS=1 cargo test -p emu-driver
/// entry_point_list` rewrites it.
#[cfg(test)]
pub fn entry_point_list() -> String {
    let mut s = String::from("# Entry points of the emulated libcuda.so.1\n\nGenerated from `emu-driver/src/exports.rs` (`SIMTWIN_BLESS=1 cargo test -p emu-driver entry_point_list`).\n\n");
    s += "## Implemented\n\n";
    for n in &NAMES[..IMPLEMENTED] {
        s += &format!("- `{n}`\n");
    }
    s += "\n## Legacy (pre-3.2, 32-bit device pointers): answer what the real driver answers in a 64-bit process (measured on an H200: CUDA_ERROR_INVALID_CONTEXT; legacy cuCtxCreate CUDA_ERROR_OUT_OF_MEMORY)\n\n";
    for n in &NAMES[IMPLEMENTED..WITH_LEGACY] {
        s += &format!("- `{n}`\n");
    }
    s += "\n## Exported, not implemented: CUDA_ERROR_NOT_SUPPORTED, counted under \"unsupported\" and logged once\n\n";
    for n in NAMES[WITH_LEGACY..].iter().chain(["cuGetExportTable"].iter()) {
        s += &format!("- `{n}`\n");
    }
    s
}

#[cfg(test)]
mod tests {
    #[test]
    fn entry_point_list_is_current() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/ENTRY_POINTS.md");
        let want = super::entry_point_list();
        if std::env::var("SIMTWIN_BLESS").is_ok() {
            std::fs::write(path, &want).unwrap();
        }
        let have = std::fs::read_to_string(path).unwrap_or_default();
        assert!(have == want, "{path} is stale: run SIMTWIN_BLESS=1 cargo test -p emu-driver entry_point_list");
    }

    #[test]
    fn names_are_unique_and_versioned_names_have_bases() {
        let mut seen = std::collections::HashSet::new();
        for n in super::NAMES {
            assert!(seen.insert(*n), "{n} twice");
        }
        let v = super::versioned();
        assert!(v.len() >= 40, "{}", v.len());
        for e in v {
            assert!(super::index_of(e.export).is_some());
            assert!(e.export.starts_with(e.base.as_str()) && e.export != e.base, "{} -> {}", e.export, e.base);
        }
        let alloc = v.iter().find(|e| e.export == "cuMemAlloc_v2").unwrap();
        assert_eq!((alloc.base.as_str(), alloc.since), ("cuMemAlloc", 3020));
    }
}
