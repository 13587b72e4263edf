//! The export table: every driver entry point this library exports, in one list.
//! The macro turns each line into an `extern "C"` symbol that counts the call, refuses
//! calls from inside host callbacks, catches panics, and runs the implementation; the
//! same list serves cuGetProcAddress and the implemented-entry-points listing.
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

use crate::api::{context as ctx, device as dev, memory as mem, misc, module as modl, stream as st};
use crate::cu::*;
use crate::state::CuResult;
use std::ffi::{c_char, c_void};

fn code(r: CuResult) -> CUresult {
    match r {
        Ok(()) => CUDA_SUCCESS,
        Err(c) => c,
    }
}

/// The wrapper every implemented entry runs through.
fn enter(id: usize, f: impl FnOnce() -> CuResult) -> CUresult {
    crate::counters::get().call(id);
    if st::in_callback() {
        return CUDA_ERROR_NOT_PERMITTED;
    }
    let r = match std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)) {
        Ok(r) => code(r),
        Err(_) => {
            crate::log_error!("internal error in {}: answered CUDA_ERROR_UNKNOWN", NAMES[id]);
            CUDA_ERROR_UNKNOWN
        }
    };
    if crate::log::level() >= crate::config::LogLevel::Calls {
        eprintln!("simtwin: call {} -> {}", NAMES[id], crate::errors::name(r));
    }
    r
}

fn unsupported(id: usize) -> CUresult {
    crate::counters::get().call(id);
    static LOGGED: std::sync::Mutex<Vec<usize>> = std::sync::Mutex::new(Vec::new());
    let mut l = LOGGED.lock().unwrap_or_else(|e| e.into_inner());
    if !l.contains(&id) {
        l.push(id);
        eprintln!("simtwin: {} is not implemented by the emulated driver: answered CUDA_ERROR_NOT_SUPPORTED", NAMES[id]);
    }
    CUDA_ERROR_NOT_SUPPORTED
}

macro_rules! exports {
    (
        implemented { $( $name:ident ( $($arg:ident : $ty:ty),* ) => $imp:expr ; )* }
        legacy { $( $lname:ident => $lcode:expr ; )* }
        unsupported { $( $uname:ident ),* $(,)? }
    ) => {
        #[allow(non_camel_case_types, dead_code)]
        #[derive(Clone, Copy)]
        #[repr(usize)]
        enum Id { $($name,)* $($lname,)* $($uname,)* }

        /// Every exported entry point, in table order.
        pub static NAMES: &[&str] = &[$(stringify!($name),)* $(stringify!($lname),)* $(stringify!($uname),)*];
        const IMPLEMENTED: usize = [$(stringify!($name),)* $(stringify!($lname),)*].len();

        $(
            #[no_mangle]
            pub unsafe extern "C" fn $name($($arg: $ty),*) -> CUresult {
                enter(Id::$name as usize, || $imp)
            }
        )*
        $(
            #[no_mangle]
            pub unsafe extern "C" fn $lname() -> CUresult {
                enter(Id::$lname as usize, || Err($lcode))
            }
        )*
        $(
            #[no_mangle]
            pub unsafe extern "C" fn $uname() -> CUresult {
                unsupported(Id::$uname as usize)
            }
        )*

        /// Addresses in table order (for cuGetProcAddress).
        pub fn addresses() -> Vec<usize> {
            vec![$($name as *const () as usize,)* $($lname as *const () as usize,)* $($uname as *const () as usize,)*]
        }
    };
}

pub fn names() -> &'static [&'static str] {
    NAMES
}

pub fn implemented(i: usize) -> bool {
    i < IMPLEMENTED
}

pub fn index_of(name: &str) -> Option<usize> {
    NAMES.iter().position(|n| *n == name)
}

pub fn address(i: usize) -> usize {
    static ADDR: std::sync::OnceLock<Vec<usize>> = std::sync::OnceLock::new();
    ADDR.get_or_init(addresses)[i]
}

/// Versioned exports: (exported name, base name, CUDA version that introduced it).
pub static VERSIONED: &[(&str, &str, i32)] = &[
    ("cuDeviceTotalMem_v2", "cuDeviceTotalMem", 3020),
    ("cuCtxCreate_v2", "cuCtxCreate", 3020),
    ("cuCtxCreate_v3", "cuCtxCreate", 11040),
    ("cuCtxCreate_v4", "cuCtxCreate", 12050),
    ("cuCtxDestroy_v2", "cuCtxDestroy", 4000),
    ("cuCtxPushCurrent_v2", "cuCtxPushCurrent", 4000),
    ("cuCtxPopCurrent_v2", "cuCtxPopCurrent", 4000),
    ("cuDevicePrimaryCtxRelease_v2", "cuDevicePrimaryCtxRelease", 11000),
    ("cuDevicePrimaryCtxSetFlags_v2", "cuDevicePrimaryCtxSetFlags", 11000),
    ("cuDevicePrimaryCtxReset_v2", "cuDevicePrimaryCtxReset", 11000),
    ("cuDeviceGetUuid_v2", "cuDeviceGetUuid", 11040),
    ("cuMemGetInfo_v2", "cuMemGetInfo", 3020),
    ("cuMemAlloc_v2", "cuMemAlloc", 3020),
    ("cuMemAllocPitch_v2", "cuMemAllocPitch", 3020),
    ("cuMemFree_v2", "cuMemFree", 3020),
    ("cuMemGetAddressRange_v2", "cuMemGetAddressRange", 3020),
    ("cuMemAllocHost_v2", "cuMemAllocHost", 3020),
    ("cuMemHostGetDevicePointer_v2", "cuMemHostGetDevicePointer", 3020),
    ("cuMemHostRegister_v2", "cuMemHostRegister", 6050),
    ("cuMemcpyHtoD_v2", "cuMemcpyHtoD", 3020),
    ("cuMemcpyDtoH_v2", "cuMemcpyDtoH", 3020),
    ("cuMemcpyDtoD_v2", "cuMemcpyDtoD", 3020),
    ("cuMemcpyHtoDAsync_v2", "cuMemcpyHtoDAsync", 3020),
    ("cuMemcpyDtoHAsync_v2", "cuMemcpyDtoHAsync", 3020),
    ("cuMemcpyDtoDAsync_v2", "cuMemcpyDtoDAsync", 3020),
    ("cuMemcpy2D_v2", "cuMemcpy2D", 3020),
    ("cuMemcpy2DAsync_v2", "cuMemcpy2DAsync", 3020),
    ("cuMemcpy2DUnaligned_v2", "cuMemcpy2DUnaligned", 3020),
    ("cuMemsetD8_v2", "cuMemsetD8", 3020),
    ("cuMemsetD16_v2", "cuMemsetD16", 3020),
    ("cuMemsetD32_v2", "cuMemsetD32", 3020),
    ("cuMemsetD2D8_v2", "cuMemsetD2D8", 3020),
    ("cuMemsetD2D16_v2", "cuMemsetD2D16", 3020),
    ("cuMemsetD2D32_v2", "cuMemsetD2D32", 3020),
    ("cuModuleGetGlobal_v2", "cuModuleGetGlobal", 3020),
    ("cuStreamDestroy_v2", "cuStreamDestroy", 4000),
    ("cuEventDestroy_v2", "cuEventDestroy", 4000),
    ("cuEventElapsedTime_v2", "cuEventElapsedTime", 12080),
    ("cuMemPrefetchAsync_v2", "cuMemPrefetchAsync", 12020),
    ("cuMemAdvise_v2", "cuMemAdvise", 12020),
    ("cuGetProcAddress_v2", "cuGetProcAddress", 12000),
    ("cuStreamBeginCapture_v2", "cuStreamBeginCapture", 10010),
    ("cuGraphicsResourceGetMappedPointer_v2", "cuGraphicsResourceGetMappedPointer", 3020),
    ("cuGLGetDevices_v2", "cuGLGetDevices", 6050),
    ("cuArray3DCreate_v2", "cuArray3DCreate", 3020),
    ("cuArrayCreate_v2", "cuArrayCreate", 3020),
    ("cuLinkCreate_v2", "cuLinkCreate", 6050),
    ("cuLinkAddData_v2", "cuLinkAddData", 6050),
];

/// Marker that tools (parity --device real) use to recognise the emulated driver.
#[no_mangle]
pub static simtwin_emulated_driver: [u8; 32] = *b"simtwin emulated libcuda.so.1\0\0\0";


type Cptr = *const c_void;
type Mptr = *mut c_void;

exports! {
    implemented {
        cuInit(flags: u32) => dev::init(flags);
        cuDriverGetVersion(v: *mut i32) => dev::driver_get_version(v);
        cuDeviceGet(d: *mut CUdevice, ordinal: i32) => dev::device_get(d, ordinal);
        cuDeviceGetCount(n: *mut i32) => dev::device_get_count(n);
        cuDeviceGetName(name: *mut c_char, len: i32, d: CUdevice) => dev::device_get_name(name, len, d);
        cuDeviceGetUuid(u: *mut CUuuid, d: CUdevice) => dev::device_get_uuid(u, d);
        cuDeviceGetUuid_v2(u: *mut CUuuid, d: CUdevice) => dev::device_get_uuid(u, d);
        cuDeviceTotalMem_v2(b: *mut usize, d: CUdevice) => dev::device_total_mem(b, d);
        cuDeviceTotalMem(b: *mut u32, d: CUdevice) => dev::device_total_mem_v1(b, d);
        cuDeviceGetAttribute(v: *mut i32, a: i32, d: CUdevice) => dev::device_get_attribute(v, a, d);
        cuDeviceComputeCapability(ma: *mut i32, mi: *mut i32, d: CUdevice) => dev::device_compute_capability(ma, mi, d);
        cuDeviceGetPCIBusId(b: *mut c_char, len: i32, d: CUdevice) => dev::device_get_pci_bus_id(b, len, d);
        cuDeviceGetByPCIBusId(d: *mut CUdevice, id: *const c_char) => dev::device_get_by_pci_bus_id(d, id);
        cuDeviceCanAccessPeer(c: *mut i32, d: CUdevice, p: CUdevice) => dev::device_can_access_peer(c, d, p);
        cuDeviceGetDefaultMemPool(p: *mut CUmemoryPool, d: CUdevice) => dev::device_get_default_mem_pool(p, d);
        cuDeviceGetMemPool(p: *mut CUmemoryPool, d: CUdevice) => dev::device_get_mem_pool(p, d);
        cuDeviceSetMemPool(d: CUdevice, p: CUmemoryPool) => dev::device_set_mem_pool(d, p);
        cuDeviceGetTexture1DLinearMaxWidth(w: *mut usize, f: u32, c: u32, d: CUdevice) => dev::device_get_texture_1d_linear_max_width(w, f, c, d);

        cuDevicePrimaryCtxRetain(c: *mut CUcontext, d: CUdevice) => ctx::primary_retain(c, d);
        cuDevicePrimaryCtxRelease(d: CUdevice) => ctx::primary_release(d);
        cuDevicePrimaryCtxRelease_v2(d: CUdevice) => ctx::primary_release(d);
        cuDevicePrimaryCtxSetFlags(d: CUdevice, f: u32) => ctx::primary_set_flags(d, f);
        cuDevicePrimaryCtxSetFlags_v2(d: CUdevice, f: u32) => ctx::primary_set_flags(d, f);
        cuDevicePrimaryCtxGetState(d: CUdevice, f: *mut u32, a: *mut i32) => ctx::primary_get_state(d, f, a);
        cuDevicePrimaryCtxReset(d: CUdevice) => ctx::primary_reset(d);
        cuDevicePrimaryCtxReset_v2(d: CUdevice) => ctx::primary_reset(d);
        cuCtxCreate_v2(c: *mut CUcontext, f: u32, d: CUdevice) => ctx::ctx_create(c, f, d);
        cuCtxCreate_v3(c: *mut CUcontext, p: Mptr, n: i32, f: u32, d: CUdevice) => ctx::ctx_create_v3(c, p, n, f, d);
        cuCtxCreate_v4(c: *mut CUcontext, p: Mptr, f: u32, d: CUdevice) => ctx::ctx_create_v4(c, p, f, d);
        cuCtxDestroy(c: CUcontext) => ctx::ctx_destroy(c);
        cuCtxDestroy_v2(c: CUcontext) => ctx::ctx_destroy(c);
        cuCtxPushCurrent(c: CUcontext) => ctx::ctx_push(c);
        cuCtxPushCurrent_v2(c: CUcontext) => ctx::ctx_push(c);
        cuCtxPopCurrent(c: *mut CUcontext) => ctx::ctx_pop(c);
        cuCtxPopCurrent_v2(c: *mut CUcontext) => ctx::ctx_pop(c);
        cuCtxSetCurrent(c: CUcontext) => ctx::ctx_set_current(c);
        cuCtxGetCurrent(c: *mut CUcontext) => ctx::ctx_get_current(c);
        cuCtxGetDevice(d: *mut CUdevice) => ctx::ctx_get_device(d);
        cuCtxGetFlags(f: *mut u32) => ctx::ctx_get_flags(f);
        cuCtxSetFlags(f: u32) => ctx::ctx_set_flags(f);
        cuCtxGetId(c: CUcontext, id: *mut u64) => ctx::ctx_get_id(c, id);
        cuCtxGetApiVersion(c: CUcontext, v: *mut u32) => ctx::ctx_get_api_version(c, v);
        cuCtxSynchronize() => ctx::ctx_synchronize();
        cuCtxSetLimit(l: u32, v: usize) => ctx::ctx_set_limit(l, v);
        cuCtxGetLimit(v: *mut usize, l: u32) => ctx::ctx_get_limit(v, l);
        cuCtxGetCacheConfig(c: *mut u32) => ctx::ctx_get_cache_config(c);
        cuCtxSetCacheConfig(c: u32) => ctx::ctx_set_cache_config(c);
        cuCtxGetSharedMemConfig(c: *mut u32) => ctx::ctx_get_shared_mem_config(c);
        cuCtxSetSharedMemConfig(c: u32) => ctx::ctx_set_shared_mem_config(c);
        cuCtxGetStreamPriorityRange(l: *mut i32, g: *mut i32) => ctx::ctx_get_stream_priority_range(l, g);

        cuMemAlloc_v2(p: *mut CUdeviceptr, n: usize) => mem::mem_alloc(p, n);
        cuMemAllocPitch_v2(p: *mut CUdeviceptr, pitch: *mut usize, w: usize, h: usize, e: u32) => mem::mem_alloc_pitch(p, pitch, w, h, e);
        cuMemFree_v2(p: CUdeviceptr) => mem::mem_free(p);
        cuMemGetInfo_v2(f: *mut usize, t: *mut usize) => mem::mem_get_info(f, t);
        cuMemGetAddressRange_v2(b: *mut CUdeviceptr, s: *mut usize, p: CUdeviceptr) => mem::mem_get_address_range(b, s, p);
        cuMemAllocHost_v2(p: *mut Mptr, n: usize) => mem::mem_alloc_host(p, n);
        cuMemHostAlloc(p: *mut Mptr, n: usize, f: u32) => mem::mem_host_alloc(p, n, f);
        cuMemFreeHost(p: Mptr) => mem::mem_free_host(p);
        cuMemHostGetDevicePointer_v2(d: *mut CUdeviceptr, p: Mptr, f: u32) => mem::mem_host_get_device_pointer(d, p, f);
        cuMemHostGetFlags(f: *mut u32, p: Mptr) => mem::mem_host_get_flags(f, p);
        cuMemHostRegister_v2(p: Mptr, n: usize, f: u32) => mem::mem_host_register(p, n, f);
        cuMemHostUnregister(p: Mptr) => mem::mem_host_unregister(p);
        cuMemAllocManaged(p: *mut CUdeviceptr, n: usize, f: u32) => mem::mem_alloc_managed(p, n, f);
        cuMemAllocAsync(p: *mut CUdeviceptr, n: usize, s: CUstream) => mem::mem_alloc_async(p, n, s);
        cuMemAllocAsync_ptsz(p: *mut CUdeviceptr, n: usize, s: CUstream) => mem::mem_alloc_async(p, n, s);
        cuMemAllocFromPoolAsync(p: *mut CUdeviceptr, n: usize, pool: CUmemoryPool, s: CUstream) => mem::mem_alloc_from_pool_async(p, n, pool, s);
        cuMemFreeAsync(p: CUdeviceptr, s: CUstream) => mem::mem_free_async(p, s);
        cuMemFreeAsync_ptsz(p: CUdeviceptr, s: CUstream) => mem::mem_free_async(p, s);
        cuMemPoolCreate(p: *mut CUmemoryPool, props: Cptr) => mem::mem_pool_create(p, props);
        cuMemPoolDestroy(p: CUmemoryPool) => mem::mem_pool_destroy(p);
        cuMemPoolTrimTo(p: CUmemoryPool, k: usize) => mem::mem_pool_trim_to(p, k);
        cuMemPoolSetAttribute(p: CUmemoryPool, a: i32, v: Mptr) => mem::mem_pool_set_attribute(p, a, v);
        cuMemPoolGetAttribute(p: CUmemoryPool, a: i32, v: Mptr) => mem::mem_pool_get_attribute(p, a, v);

        cuMemcpy(d: CUdeviceptr, s: CUdeviceptr, n: usize) => mem::memcpy(d, s, n);
        cuMemcpy_ptds(d: CUdeviceptr, s: CUdeviceptr, n: usize) => mem::memcpy(d, s, n);
        cuMemcpyAsync(d: CUdeviceptr, s: CUdeviceptr, n: usize, st: CUstream) => mem::memcpy_async(d, s, n, st);
        cuMemcpyAsync_ptsz(d: CUdeviceptr, s: CUdeviceptr, n: usize, st: CUstream) => mem::memcpy_async(d, s, n, st);
        cuMemcpyHtoD_v2(d: CUdeviceptr, s: Cptr, n: usize) => mem::memcpy_htod(d, s, n);
        cuMemcpyHtoD_v2_ptds(d: CUdeviceptr, s: Cptr, n: usize) => mem::memcpy_htod(d, s, n);
        cuMemcpyDtoH_v2(d: Mptr, s: CUdeviceptr, n: usize) => mem::memcpy_dtoh(d, s, n);
        cuMemcpyDtoH_v2_ptds(d: Mptr, s: CUdeviceptr, n: usize) => mem::memcpy_dtoh(d, s, n);
        cuMemcpyDtoD_v2(d: CUdeviceptr, s: CUdeviceptr, n: usize) => mem::memcpy_dtod(d, s, n);
        cuMemcpyDtoD_v2_ptds(d: CUdeviceptr, s: CUdeviceptr, n: usize) => mem::memcpy_dtod(d, s, n);
        cuMemcpyHtoDAsync_v2(d: CUdeviceptr, s: Cptr, n: usize, st: CUstream) => mem::memcpy_htod_async(d, s, n, st);
        cuMemcpyHtoDAsync_v2_ptsz(d: CUdeviceptr, s: Cptr, n: usize, st: CUstream) => mem::memcpy_htod_async(d, s, n, st);
        cuMemcpyDtoHAsync_v2(d: Mptr, s: CUdeviceptr, n: usize, st: CUstream) => mem::memcpy_dtoh_async(d, s, n, st);
        cuMemcpyDtoHAsync_v2_ptsz(d: Mptr, s: CUdeviceptr, n: usize, st: CUstream) => mem::memcpy_dtoh_async(d, s, n, st);
        cuMemcpyDtoDAsync_v2(d: CUdeviceptr, s: CUdeviceptr, n: usize, st: CUstream) => mem::memcpy_dtod_async(d, s, n, st);
        cuMemcpyDtoDAsync_v2_ptsz(d: CUdeviceptr, s: CUdeviceptr, n: usize, st: CUstream) => mem::memcpy_dtod_async(d, s, n, st);
        cuMemcpy2D_v2(p: *const CUDA_MEMCPY2D) => mem::memcpy_2d(p);
        cuMemcpy2D_v2_ptds(p: *const CUDA_MEMCPY2D) => mem::memcpy_2d(p);
        cuMemcpy2DUnaligned_v2(p: *const CUDA_MEMCPY2D) => mem::memcpy_2d(p);
        cuMemcpy2DAsync_v2(p: *const CUDA_MEMCPY2D, st: CUstream) => mem::memcpy_2d_async(p, st);
        cuMemcpy2DAsync_v2_ptsz(p: *const CUDA_MEMCPY2D, st: CUstream) => mem::memcpy_2d_async(p, st);
        cuMemcpyPeer(d: CUdeviceptr, dc: CUcontext, s: CUdeviceptr, sc: CUcontext, n: usize) => mem::memcpy_peer(d, dc, s, sc, n);
        cuMemcpyPeerAsync(d: CUdeviceptr, dc: CUcontext, s: CUdeviceptr, sc: CUcontext, n: usize, st: CUstream) => mem::memcpy_peer_async(d, dc, s, sc, n, st);

        cuMemsetD8_v2(d: CUdeviceptr, v: u8, n: usize) => mem::memset_d8(d, v, n);
        cuMemsetD16_v2(d: CUdeviceptr, v: u16, n: usize) => mem::memset_d16(d, v, n);
        cuMemsetD32_v2(d: CUdeviceptr, v: u32, n: usize) => mem::memset_d32(d, v, n);
        cuMemsetD8_v2_ptds(d: CUdeviceptr, v: u8, n: usize) => mem::memset_d8(d, v, n);
        cuMemsetD32_v2_ptds(d: CUdeviceptr, v: u32, n: usize) => mem::memset_d32(d, v, n);
        cuMemsetD8Async(d: CUdeviceptr, v: u8, n: usize, s: CUstream) => mem::memset_d8_async(d, v, n, s);
        cuMemsetD16Async(d: CUdeviceptr, v: u16, n: usize, s: CUstream) => mem::memset_d16_async(d, v, n, s);
        cuMemsetD32Async(d: CUdeviceptr, v: u32, n: usize, s: CUstream) => mem::memset_d32_async(d, v, n, s);
        cuMemsetD8Async_ptsz(d: CUdeviceptr, v: u8, n: usize, s: CUstream) => mem::memset_d8_async(d, v, n, s);
        cuMemsetD32Async_ptsz(d: CUdeviceptr, v: u32, n: usize, s: CUstream) => mem::memset_d32_async(d, v, n, s);
        cuMemsetD2D8_v2(d: CUdeviceptr, p: usize, v: u8, w: usize, h: usize) => mem::memset_d2d8(d, p, v, w, h);
        cuMemsetD2D16_v2(d: CUdeviceptr, p: usize, v: u16, w: usize, h: usize) => mem::memset_d2d16(d, p, v, w, h);
        cuMemsetD2D32_v2(d: CUdeviceptr, p: usize, v: u32, w: usize, h: usize) => mem::memset_d2d32(d, p, v, w, h);
        cuMemsetD2D8Async(d: CUdeviceptr, p: usize, v: u8, w: usize, h: usize, s: CUstream) => mem::memset_d2d8_async(d, p, v, w, h, s);
        cuMemsetD2D16Async(d: CUdeviceptr, p: usize, v: u16, w: usize, h: usize, s: CUstream) => mem::memset_d2d16_async(d, p, v, w, h, s);
        cuMemsetD2D32Async(d: CUdeviceptr, p: usize, v: u32, w: usize, h: usize, s: CUstream) => mem::memset_d2d32_async(d, p, v, w, h, s);

        cuPointerGetAttribute(data: Mptr, a: u32, p: CUdeviceptr) => mem::pointer_get_attribute(data, a, p);
        cuPointerGetAttributes(n: u32, a: *const u32, data: *mut Mptr, p: CUdeviceptr) => mem::pointer_get_attributes(n, a, data, p);
        cuMemPrefetchAsync(p: CUdeviceptr, n: usize, _d: CUdevice, _s: CUstream) => mem::mem_hint(p, n);
        cuMemPrefetchAsync_v2(p: CUdeviceptr, n: usize, _loc: u64, _f: u32, _s: CUstream) => mem::mem_hint(p, n);
        cuMemAdvise(p: CUdeviceptr, n: usize, _a: u32, _d: CUdevice) => mem::mem_hint(p, n);
        cuMemAdvise_v2(p: CUdeviceptr, n: usize, _a: u32, _loc: u64) => mem::mem_hint(p, n);

        cuModuleLoad(m: *mut CUmodule, f: *const c_char) => modl::module_load(m, f);
        cuModuleLoadData(m: *mut CUmodule, i: Cptr) => modl::module_load_data(m, i);
        cuModuleLoadDataEx(m: *mut CUmodule, i: Cptr, n: u32, o: *mut u32, v: *mut Mptr) => modl::module_load_data_ex(m, i, n, o, v);
        cuModuleLoadFatBinary(m: *mut CUmodule, i: Cptr) => modl::module_load_fat_binary(m, i);
        cuModuleUnload(m: CUmodule) => modl::module_unload(m);
        cuModuleGetFunction(f: *mut CUfunction, m: CUmodule, n: *const c_char) => modl::module_get_function(f, m, n);
        cuModuleGetFunctionCount(c: *mut u32, m: CUmodule) => modl::module_get_function_count(c, m);
        cuModuleGetGlobal_v2(d: *mut CUdeviceptr, b: *mut usize, m: CUmodule, n: *const c_char) => modl::module_get_global(d, b, m, n);
        cuFuncGetAttribute(v: *mut i32, a: i32, f: CUfunction) => modl::func_get_attribute(v, a, f);
        cuFuncSetAttribute(f: CUfunction, a: i32, v: i32) => modl::func_set_attribute(f, a, v);
        cuFuncSetCacheConfig(f: CUfunction, c: u32) => modl::func_set_cache_config(f, c);
        cuFuncSetSharedMemConfig(f: CUfunction, c: u32) => modl::func_set_shared_mem_config(f, c);
        cuFuncGetName(n: *mut *const c_char, f: CUfunction) => modl::func_get_name(n, f);
        cuFuncGetModule(m: *mut CUmodule, f: CUfunction) => modl::func_get_module(m, f);
        cuLaunchKernel(f: CUfunction, gx: u32, gy: u32, gz: u32, bx: u32, by: u32, bz: u32, sh: u32, s: CUstream, p: *mut Mptr, e: *mut Mptr)
            => modl::launch_kernel(f, gx, gy, gz, bx, by, bz, sh, s, p, e);
        cuLaunchKernel_ptsz(f: CUfunction, gx: u32, gy: u32, gz: u32, bx: u32, by: u32, bz: u32, sh: u32, s: CUstream, p: *mut Mptr, e: *mut Mptr)
            => modl::launch_kernel(f, gx, gy, gz, bx, by, bz, sh, s, p, e);
        cuLaunchKernelEx(c: *const CUlaunchConfig, f: CUfunction, p: *mut Mptr, e: *mut Mptr) => modl::launch_kernel_ex(c, f, p, e);
        cuLaunchKernelEx_ptsz(c: *const CUlaunchConfig, f: CUfunction, p: *mut Mptr, e: *mut Mptr) => modl::launch_kernel_ex(c, f, p, e);
        cuOccupancyMaxActiveBlocksPerMultiprocessor(n: *mut i32, f: CUfunction, b: i32, s: usize) => modl::occupancy_max_active_blocks(n, f, b, s, 0);
        cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(n: *mut i32, f: CUfunction, b: i32, s: usize, fl: u32) => modl::occupancy_max_active_blocks(n, f, b, s, fl);
        cuOccupancyMaxPotentialBlockSize(g: *mut i32, b: *mut i32, f: CUfunction, cb: Cptr, s: usize, l: i32) => modl::occupancy_max_potential_block_size(g, b, f, cb, s, l);
        cuOccupancyMaxPotentialBlockSizeWithFlags(g: *mut i32, b: *mut i32, f: CUfunction, cb: Cptr, s: usize, l: i32, _fl: u32) => modl::occupancy_max_potential_block_size(g, b, f, cb, s, l);

        cuStreamCreate(s: *mut CUstream, f: u32) => st::stream_create(s, f);
        cuStreamCreateWithPriority(s: *mut CUstream, f: u32, p: i32) => st::stream_create_with_priority(s, f, p);
        cuStreamDestroy(s: CUstream) => st::stream_destroy(s);
        cuStreamDestroy_v2(s: CUstream) => st::stream_destroy(s);
        cuStreamQuery(s: CUstream) => st::stream_query(s);
        cuStreamQuery_ptsz(s: CUstream) => st::stream_query(s);
        cuStreamSynchronize(s: CUstream) => st::stream_synchronize(s);
        cuStreamSynchronize_ptsz(s: CUstream) => st::stream_synchronize(s);
        cuStreamWaitEvent(s: CUstream, e: CUevent, f: u32) => st::stream_wait_event(s, e, f);
        cuStreamWaitEvent_ptsz(s: CUstream, e: CUevent, f: u32) => st::stream_wait_event(s, e, f);
        cuStreamAddCallback(s: CUstream, cb: CUstreamCallback, d: Mptr, f: u32) => st::stream_add_callback(s, cb, d, f);
        cuStreamAddCallback_ptsz(s: CUstream, cb: CUstreamCallback, d: Mptr, f: u32) => st::stream_add_callback(s, cb, d, f);
        cuLaunchHostFunc(s: CUstream, f: CUhostFn, d: Mptr) => st::launch_host_func(s, f, d);
        cuLaunchHostFunc_ptsz(s: CUstream, f: CUhostFn, d: Mptr) => st::launch_host_func(s, f, d);
        cuStreamGetPriority(s: CUstream, p: *mut i32) => st::stream_get_priority(s, p);
        cuStreamGetFlags(s: CUstream, f: *mut u32) => st::stream_get_flags(s, f);
        cuStreamGetCtx(s: CUstream, c: *mut CUcontext) => st::stream_get_ctx(s, c);
        cuStreamGetId(s: CUstream, id: *mut u64) => st::stream_get_id(s, id);
        cuStreamIsCapturing(s: CUstream, c: *mut u32) => st::stream_is_capturing(s, c);
        cuStreamAttachMemAsync(s: CUstream, p: CUdeviceptr, n: usize, f: u32) => st::stream_attach_mem_async(s, p, n, f);
        cuEventCreate(e: *mut CUevent, f: u32) => st::event_create(e, f);
        cuEventDestroy(e: CUevent) => st::event_destroy(e);
        cuEventDestroy_v2(e: CUevent) => st::event_destroy(e);
        cuEventRecord(e: CUevent, s: CUstream) => st::event_record(e, s);
        cuEventRecord_ptsz(e: CUevent, s: CUstream) => st::event_record(e, s);
        cuEventRecordWithFlags(e: CUevent, s: CUstream, f: u32) => st::event_record_with_flags(e, s, f);
        cuEventQuery(e: CUevent) => st::event_query(e);
        cuEventSynchronize(e: CUevent) => st::event_synchronize(e);
        cuEventElapsedTime(ms: *mut f32, a: CUevent, b: CUevent) => st::event_elapsed_time(ms, a, b);
        cuEventElapsedTime_v2(ms: *mut f32, a: CUevent, b: CUevent) => st::event_elapsed_time(ms, a, b);

        cuGetErrorName(c: CUresult, s: *mut *const c_char) => misc::get_error_name(c, s);
        cuGetErrorString(c: CUresult, s: *mut *const c_char) => misc::get_error_string(c, s);
        cuGetProcAddress(n: *const c_char, p: *mut Mptr, v: i32, f: u64) => misc::get_proc_address(n, p, v, f, std::ptr::null_mut());
        cuGetProcAddress_v2(n: *const c_char, p: *mut Mptr, v: i32, f: u64, st: *mut i32) => misc::get_proc_address(n, p, v, f, st);
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
        cuLinkCreate, cuLinkCreate_v2, cuLinkAddData, cuLinkAddData_v2, cuLinkAddFile, cuLinkAddFile_v2,
        cuLinkComplete, cuLinkDestroy,
        cuTexObjectCreate, cuTexObjectDestroy, cuTexObjectGetResourceDesc, cuSurfObjectCreate, cuSurfObjectDestroy,
        cuGLGetDevices, cuGLGetDevices_v2, cuGraphicsGLRegisterImage, cuGraphicsGLRegisterBuffer, cuGraphicsUnregisterResource,
        cuGraphicsMapResources, cuGraphicsUnmapResources, cuGraphicsSubResourceGetMappedArray,
        cuGraphicsResourceGetMappedPointer, cuGraphicsResourceGetMappedPointer_v2,
        cuImportExternalMemory, cuDestroyExternalMemory, cuExternalMemoryGetMappedBuffer,
        cuExternalMemoryGetMappedMipmappedArray, cuMipmappedArrayGetLevel, cuMipmappedArrayDestroy,
        cuImportExternalSemaphore, cuDestroyExternalSemaphore, cuSignalExternalSemaphoresAsync, cuWaitExternalSemaphoresAsync,
        cuArrayCreate, cuArrayCreate_v2, cuArray3DCreate, cuArray3DCreate_v2, cuArrayDestroy, cuMemcpy3D_v2, cuMemcpy3DAsync_v2,
        cuEGLStreamProducerConnect, cuEGLStreamProducerDisconnect, cuEGLStreamConsumerDisconnect,
        cuEGLStreamProducerPresentFrame, cuEGLStreamProducerReturnFrame,
        cuStreamBeginCapture, cuStreamBeginCapture_v2, cuStreamEndCapture, cuStreamGetCaptureInfo, cuStreamGetCaptureInfo_v2,
        cuGraphCreate, cuGraphInstantiate, cuGraphInstantiateWithFlags, cuGraphLaunch, cuGraphDestroy, cuGraphExecDestroy, cuGraphUpload,
        cuLaunchCooperativeKernel, cuOccupancyMaxPotentialClusterSize, cuOccupancyMaxActiveClusters, cuOccupancyAvailableDynamicSMemPerBlock,
        cuLibraryLoadData, cuLibraryLoadFromFile, cuLibraryUnload, cuLibraryGetKernel, cuLibraryGetModule, cuKernelGetFunction,
        cuMemCreate, cuMemRelease, cuMemMap, cuMemUnmap, cuMemAddressReserve, cuMemAddressFree, cuMemSetAccess,
        cuMemGetAllocationGranularity, cuCtxEnablePeerAccess, cuCtxDisablePeerAccess, cuDeviceGetP2PAttribute,
        cuIpcGetMemHandle, cuIpcOpenMemHandle, cuIpcOpenMemHandle_v2, cuIpcCloseMemHandle, cuIpcGetEventHandle, cuIpcOpenEventHandle,
        cuThreadExchangeStreamCaptureMode, cuCtxAttach, cuCtxDetach,
    }
}

/// cuGetExportTable answers CUDA_ERROR_NOT_SUPPORTED with a line saying why (the CUDA
/// runtime's private tables are out of scope). Kept out of the macro: it is counted as
/// unsupported but has its own message.
#[no_mangle]
pub unsafe extern "C" fn cuGetExportTable(table: *mut *const c_void, id: *const c_void) -> CUresult {
    crate::counters::get().export_table_call();
    code(misc::get_export_table(table, id))
}

/// The checked-in list of entry points (emu-driver/ENTRY_POINTS.md), generated from the
/// table above so that it cannot drift: `SIMTWIN_BLESS=1 cargo test -p emu-driver
/// entry_point_list` rewrites it.
pub fn entry_point_list() -> String {
    let legacy_start = NAMES.iter().position(|n| *n == "cuCtxCreate").unwrap_or(IMPLEMENTED);
    let mut s = String::from("# Entry points of the emulated libcuda.so.1\n\nGenerated from `emu-driver/src/exports.rs` (`SIMTWIN_BLESS=1 cargo test -p emu-driver entry_point_list`).\n\n");
    s += "## Implemented\n\n";
    for n in &NAMES[..legacy_start] {
        s += &format!("- `{n}`\n");
    }
    s += "\n## Legacy (pre-3.2, 32-bit device pointers): answer what the real driver answers in a 64-bit process (measured on an H200: CUDA_ERROR_INVALID_CONTEXT; legacy cuCtxCreate CUDA_ERROR_OUT_OF_MEMORY)\n\n";
    for n in &NAMES[legacy_start..IMPLEMENTED] {
        s += &format!("- `{n}`\n");
    }
    s += "\n## Exported, not implemented: CUDA_ERROR_NOT_SUPPORTED, counted under \"unsupported\" and logged once\n\n";
    for n in NAMES[IMPLEMENTED..].iter().chain(["cuGetExportTable"].iter()) {
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
    fn names_are_unique_and_versioned_names_exist() {
        let mut seen = std::collections::HashSet::new();
        for n in super::NAMES {
            assert!(seen.insert(*n), "{n} twice");
        }
        for (export, _, _) in super::VERSIONED {
            assert!(super::index_of(export).is_some(), "{export} is versioned but not exported");
        }
    }
}
