//! The C entry points (cuda_runtime_api.h and the `__cuda*` calls nvcc generates), and with
//! `driver.rs` the crate's unsafe code: reading the caller's structs and writing its
//! out-parameters. Every entry point:
//!
//! - answers cudaErrorInvalidValue for a null out-parameter instead of writing through it;
//! - records a failure as the thread's last error (cudaGetLastError);
//! - never unwinds into C: a panic answers cudaErrorUnknown.
//!
//! The pointers a program passes are its promise, as with NVIDIA's runtime: out-parameters
//! are written only when not null, in-structs read only when not null; device addresses
//! are never dereferenced here (the driver range-checks them).
//!
//! Per-thread default stream: the `_ptsz` (asynchronous) and `_ptds` (synchronous) names,
//! which `--default-stream per-thread` programs call, are the same functions with stream
//! 0 meaning `cudaStreamPerThread` (a synchronous `_ptds` copy runs on the per-thread
//! stream and waits for it).

use std::ffi::{c_char, c_int, c_uint, c_void, CStr, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};

use crate::device::{self, DeviceProp};
use crate::driver::{self as d, Handle, HostFn, HostNodeParams, MemLocation, MemsetNodeParams, StreamCallback};
use crate::error::{self, Error, Res};
use crate::graph;
use crate::launch::{self, Config, Dim3, FuncAttributes};
use crate::memory::{self, Copy2D};
use crate::registry;
use crate::state;
use crate::stream;
use crate::texture::{self, ArrayCopy2D, ChannelDesc, Extent, Memcpy3DParms, RtResourceDesc, RtTextureDesc};

type CudaError = c_int;

/// Runs an entry point: its failure becomes the thread's last error; a panic is
/// cudaErrorUnknown.
fn api(f: impl FnOnce() -> Res<()>) -> CudaError {
    match catch_unwind(AssertUnwindSafe(f)).unwrap_or(Err(error::UNKNOWN)) {
        Ok(()) => error::SUCCESS,
        Err(e) => {
            error::record(e);
            e
        }
    }
}

/// Writes an out-parameter (cudaErrorInvalidValue for null).
fn put<T>(p: *mut T, v: T) -> Res<()> {
    if p.is_null() {
        return Err(error::INVALID_VALUE);
    }
    // SAFETY: an out-parameter the C caller passed to an entry point of this file; the
    // runtime API's contract makes a non-null one valid for a write of its type.
    unsafe { p.write_unaligned(v) };
    Ok(())
}

/// Reads an in-parameter struct (cudaErrorInvalidValue for null).
fn get<T: Copy>(p: *const T) -> Res<T> {
    if p.is_null() {
        return Err(error::INVALID_VALUE);
    }
    // SAFETY: an in-parameter the C caller passed; the API's contract makes a non-null one
    // valid for a read of its type.
    Ok(unsafe { p.read_unaligned() })
}

fn sync_stream(per_thread: bool) -> Option<Handle> {
    per_thread.then_some(d::STREAM_PER_THREAD as Handle)
}

/// A synchronous call made through a `_ptds` name: the work went to the per-thread stream,
/// which is then waited for.
fn finish(per_thread: bool, r: Res<()>) -> Res<()> {
    r?;
    if per_thread {
        stream::synchronize(d::STREAM_PER_THREAD as Handle)?;
    }
    Ok(())
}

/// Defines `$name` (legacy default stream) and `$alt` (per-thread default stream) with
/// one body, in which `$pt` says which was called.
macro_rules! both {
    ($name:ident, $alt:ident, |$pt:ident| ($($a:ident: $t:ty),* $(,)?) $body:block) => {
        #[no_mangle]
        pub extern "C" fn $name($($a: $t),*) -> CudaError {
            let $pt = false;
            api(|| $body)
        }
        #[no_mangle]
        pub extern "C" fn $alt($($a: $t),*) -> CudaError {
            let $pt = true;
            api(|| $body)
        }
    };
}

// ---------------------------------------------------------------- registration

/// `__fatBinC_Wrapper_t` (fatbinary_section.h).
#[repr(C)]
#[derive(Clone, Copy)]
struct FatbinWrapper {
    magic: c_int,
    version: c_int,
    data: *const u64,
    filename_or_fatbins: *mut c_void,
}

const FATBIN_WRAPPER_MAGIC: c_int = 0x466243b1;

/// The header at the start of a fatbin (fatbinary_section.h's data): its size is the
/// header's plus `fat_size`.
#[repr(C)]
#[derive(Clone, Copy)]
struct FatbinHeader {
    magic: u32,
    version: u16,
    header_size: u16,
    fat_size: u64,
}

const FATBIN_MAGIC: u32 = 0xBA55ED50;

/// The NULL-terminated list of the translation units' fatbins a version-2 wrapper names
/// (`-rdc`: nvcc's link.stub fills `__cudaPrelinkedFatbins`), with their sizes.
fn prelinked_fatbins(list: *const *const FatbinHeader) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    if list.is_null() {
        return out;
    }
    for i in 0..4096 {
        // SAFETY: link.stub's array of fatbin pointers, terminated by NULL.
        let p = unsafe { list.add(i).read() };
        let Ok(h) = get(p) else { break };
        if h.magic != FATBIN_MAGIC {
            break;
        }
        out.push((p as usize, usize::from(h.header_size) + h.fat_size as usize));
    }
    out
}

/// `__cudaRegisterFatBinary`: the handle is a fresh heap word the generated code keeps and
/// passes back. Version 1 wrappers hold a whole program's fatbin; version 2 (`-rdc`, from
/// nvcc's link.stub) the device-linked one and, in `filename_or_fatbins`, the translation
/// units' own fatbins, linked with the driver's JIT linker when the device-linked image
/// does not load (it holds SASS only).
#[no_mangle]
pub extern "C" fn __cudaRegisterFatBinary(fat_cubin: *mut c_void) -> *mut *mut c_void {
    let handle = Box::into_raw(Box::new(std::ptr::null_mut::<c_void>()));
    let _ = catch_unwind(|| {
        let (image, prelinked) = match get(fat_cubin as *const FatbinWrapper) {
            Ok(w) if w.magic == FATBIN_WRAPPER_MAGIC && w.version == 1 && !w.data.is_null() => (w.data as usize, Vec::new()),
            Ok(w) if w.magic == FATBIN_WRAPPER_MAGIC && w.version == 2 && !w.data.is_null() => {
                (w.data as usize, prelinked_fatbins(w.filename_or_fatbins as *const *const FatbinHeader))
            }
            Ok(w) => {
                eprintln!("simtwin libcudart: a fatbin wrapper with magic {:#x} version {} is not loadable", w.magic, w.version);
                (0, Vec::new())
            }
            Err(_) => (0, Vec::new()),
        };
        registry::add_fatbin(handle as usize, image, prelinked);
    });
    handle
}

#[no_mangle]
pub extern "C" fn __cudaRegisterFatBinaryEnd(_handle: *mut *mut c_void) {}

#[no_mangle]
pub extern "C" fn __cudaUnregisterFatBinary(handle: *mut *mut c_void) {
    let _ = catch_unwind(|| registry::remove_fatbin(handle as usize));
}

fn c_name(p: *const c_char) -> Option<CString> {
    // SAFETY: nvcc's generated code passes NUL-terminated literals (checked for null).
    (!p.is_null()).then(|| unsafe { CStr::from_ptr(p) }.to_owned())
}

/// `__cudaRegisterFunction`: the stub `host_fun` launches the image's entry `device_name`.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub extern "C" fn __cudaRegisterFunction(
    handle: *mut *mut c_void,
    host_fun: *const c_char,
    _device_fun: *mut c_char,
    device_name: *const c_char,
    _thread_limit: c_int,
    _tid: *mut c_void,
    _bid: *mut c_void,
    _bdim: *mut c_void,
    _gdim: *mut c_void,
    _wsize: *mut c_int,
) {
    let _ = catch_unwind(|| {
        if let Some(name) = c_name(device_name) {
            registry::add_function(handle as usize, host_fun as usize, name);
        }
    });
}

/// `__cudaRegisterVar`: a `__device__` or `__constant__` variable shadowed at `host_var`.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub extern "C" fn __cudaRegisterVar(
    handle: *mut *mut c_void,
    host_var: *mut c_char,
    _device_address: *mut c_char,
    device_name: *const c_char,
    _ext: c_int,
    size: usize,
    _constant: c_int,
    _global: c_int,
) {
    let _ = catch_unwind(|| {
        if let Some(name) = c_name(device_name) {
            registry::add_var(handle as usize, host_var as usize, name, size, None);
        }
    });
}

/// `__cudaRegisterManagedVar`: a `__managed__` variable; the host reads it through the
/// pointer at `host_var_ptr`, which module loading sets.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub extern "C" fn __cudaRegisterManagedVar(
    handle: *mut *mut c_void,
    host_var_ptr: *mut *mut c_void,
    _device_address: *mut c_char,
    device_name: *const c_char,
    _ext: c_int,
    size: usize,
    _constant: c_int,
    _global: c_int,
) {
    let _ = catch_unwind(|| {
        if let Some(name) = c_name(device_name) {
            let slot = host_var_ptr as usize;
            registry::add_var(handle as usize, slot, name, size, Some(slot));
        }
    });
}

/// `__cudaInitModule`: called before host code touches a managed variable; loads the
/// module so that the variable's pointer is set. Answers 1 on success.
#[no_mangle]
pub extern "C" fn __cudaInitModule(handle: *mut *mut c_void) -> c_char {
    c_char::from(api(|| registry::init_module(handle as usize)) == error::SUCCESS)
}

#[no_mangle]
pub extern "C" fn __cudaPushCallConfiguration(grid: Dim3, block: Dim3, shared: usize, stream: Handle) -> c_uint {
    launch::push(Config { grid, block, shared, stream: stream as usize });
    0
}

#[no_mangle]
pub extern "C" fn __cudaPopCallConfiguration(grid: *mut Dim3, block: *mut Dim3, shared: *mut usize, stream: *mut Handle) -> CudaError {
    api(|| {
        let c = launch::pop()?;
        put(grid, c.grid)?;
        put(block, c.block)?;
        put(shared, c.shared)?;
        put(stream, c.stream as Handle)
    })
}

/// `__cudaGetKernel`: the cudaKernel_t of a kernel is its host stub's address.
#[no_mangle]
pub extern "C" fn __cudaGetKernel(kernel: *mut *mut c_void, host_fun: *const c_void) -> CudaError {
    api(|| {
        if !registry::is_function(host_fun as usize) {
            return Err(error::INVALID_RESOURCE_HANDLE);
        }
        put(kernel, host_fun as *mut c_void)
    })
}

both!(__cudaLaunchKernel, __cudaLaunchKernel_ptsz, |pt| (kernel: *const c_void, grid: Dim3, block: Dim3, args: *mut *mut c_void, shared: usize, s: Handle) {
    launch::launch(kernel as usize, grid, block, args, shared, stream::handle(s as usize, pt))
});

// ---------------------------------------------------------------- errors

#[no_mangle]
pub extern "C" fn cudaGetLastError() -> CudaError {
    error::take_last()
}

#[no_mangle]
pub extern "C" fn cudaPeekAtLastError() -> CudaError {
    error::peek_last()
}

/// Static NUL-terminated copies of the names and strings, made once.
fn c_text(e: Error, f: fn(Error) -> Option<&'static str>) -> *const c_char {
    use std::collections::HashMap;
    use std::sync::Mutex;
    static TEXT: Mutex<Option<HashMap<(Error, usize), &'static CStr>>> = Mutex::new(None);
    let mut t = TEXT.lock().unwrap_or_else(|p| p.into_inner());
    let t = t.get_or_insert_with(HashMap::new);
    let s = t.entry((e, f as usize)).or_insert_with(|| {
        let text = f(e).map(str::to_string).unwrap_or_else(|| "unrecognized error code".to_string());
        Box::leak(CString::new(text).unwrap_or_default().into_boxed_c_str())
    });
    s.as_ptr()
}

/// cudaGetErrorString: `"unrecognized error code"` for a number the header does not define
/// (NVIDIA's runtime's words, measured on an H100).
#[no_mangle]
pub extern "C" fn cudaGetErrorString(e: CudaError) -> *const c_char {
    c_text(e, error::description)
}

#[no_mangle]
pub extern "C" fn cudaGetErrorName(e: CudaError) -> *const c_char {
    c_text(e, error::name)
}

// ---------------------------------------------------------------- devices

#[no_mangle]
pub extern "C" fn cudaGetDeviceCount(count: *mut c_int) -> CudaError {
    api(|| match state::device_count() {
        Ok(n) => put(count, n),
        Err(e) => {
            let _ = put(count, 0);
            Err(e)
        }
    })
}

#[no_mangle]
pub extern "C" fn cudaSetDevice(dev: c_int) -> CudaError {
    api(|| state::set_device(dev))
}

#[no_mangle]
pub extern "C" fn cudaGetDevice(dev: *mut c_int) -> CudaError {
    api(|| {
        state::init()?;
        put(dev, state::device())
    })
}

/// cudaInitDevice: initialises the device's primary context (flags must be 0).
#[no_mangle]
pub extern "C" fn cudaInitDevice(dev: c_int, device_flags: c_uint, flags: c_uint) -> CudaError {
    api(|| {
        if flags != 0 {
            return Err(error::INVALID_VALUE);
        }
        state::valid_device(dev)?;
        if device_flags != 0 {
            error::check(d::cuDevicePrimaryCtxSetFlags(dev, device_flags))?;
        }
        state::primary(dev).map(|_| ())
    })
}

#[no_mangle]
pub extern "C" fn cudaGetDeviceProperties(prop: *mut DeviceProp, dev: c_int) -> CudaError {
    api(|| {
        if prop.is_null() {
            return Err(error::INVALID_VALUE);
        }
        // SAFETY: all-zero bytes are a valid DeviceProp (integers and arrays of them).
        let mut p: Box<DeviceProp> = Box::new(unsafe { std::mem::zeroed() });
        device::properties(dev, &mut p)?;
        put(prop, *p)
    })
}

#[no_mangle]
pub extern "C" fn cudaDeviceGetAttribute(value: *mut c_int, attr: c_int, dev: c_int) -> CudaError {
    api(|| {
        if value.is_null() {
            return Err(error::INVALID_VALUE);
        }
        put(value, device::attribute(attr, dev)?)
    })
}

#[no_mangle]
pub extern "C" fn cudaDeviceSynchronize() -> CudaError {
    api(device::synchronize)
}

#[no_mangle]
pub extern "C" fn cudaDeviceReset() -> CudaError {
    api(device::reset)
}

#[no_mangle]
pub extern "C" fn cudaSetDeviceFlags(flags: c_uint) -> CudaError {
    api(|| device::set_flags(flags))
}

#[no_mangle]
pub extern "C" fn cudaGetDeviceFlags(flags: *mut c_uint) -> CudaError {
    api(|| {
        if flags.is_null() {
            return Err(error::INVALID_VALUE);
        }
        put(flags, device::flags()?)
    })
}

#[no_mangle]
pub extern "C" fn cudaMemGetInfo(free: *mut usize, total: *mut usize) -> CudaError {
    api(|| {
        if free.is_null() || total.is_null() {
            return Err(error::INVALID_VALUE);
        }
        let (f, t) = memory::mem_get_info()?;
        put(free, f)?;
        put(total, t)
    })
}

#[no_mangle]
pub extern "C" fn cudaDriverGetVersion(v: *mut c_int) -> CudaError {
    api(|| {
        if v.is_null() {
            return Err(error::INVALID_VALUE);
        }
        put(v, device::driver_version()?)
    })
}

#[no_mangle]
pub extern "C" fn cudaRuntimeGetVersion(v: *mut c_int) -> CudaError {
    api(|| put(v, device::RUNTIME_VERSION))
}

#[no_mangle]
pub extern "C" fn cudaDeviceSetLimit(limit: c_int, value: usize) -> CudaError {
    api(|| device::set_limit(limit, value))
}

#[no_mangle]
pub extern "C" fn cudaDeviceGetLimit(value: *mut usize, limit: c_int) -> CudaError {
    api(|| {
        if value.is_null() {
            return Err(error::INVALID_VALUE);
        }
        put(value, device::get_limit(limit)?)
    })
}

#[no_mangle]
pub extern "C" fn cudaDeviceGetStreamPriorityRange(least: *mut c_int, greatest: *mut c_int) -> CudaError {
    api(|| {
        let (l, g) = stream::priority_range()?;
        if !least.is_null() {
            put(least, l)?;
        }
        if !greatest.is_null() {
            put(greatest, g)?;
        }
        Ok(())
    })
}

#[no_mangle]
pub extern "C" fn cudaDeviceCanAccessPeer(can: *mut c_int, dev: c_int, peer: c_int) -> CudaError {
    api(|| {
        if can.is_null() {
            return Err(error::INVALID_VALUE);
        }
        put(can, device::can_access_peer(dev, peer)?)
    })
}

#[no_mangle]
pub extern "C" fn cudaProfilerStart() -> CudaError {
    api(|| device::profiler(true))
}

#[no_mangle]
pub extern "C" fn cudaProfilerStop() -> CudaError {
    api(|| device::profiler(false))
}

// ---------------------------------------------------------------- memory

#[no_mangle]
pub extern "C" fn cudaMalloc(p: *mut *mut c_void, size: usize) -> CudaError {
    api(|| {
        if p.is_null() {
            return Err(error::INVALID_VALUE);
        }
        put(p, memory::malloc(size)? as *mut c_void)
    })
}

#[no_mangle]
pub extern "C" fn cudaFree(p: *mut c_void) -> CudaError {
    api(|| memory::free(p as u64))
}

#[no_mangle]
pub extern "C" fn cudaMallocHost(p: *mut *mut c_void, size: usize) -> CudaError {
    api(|| {
        if p.is_null() {
            return Err(error::INVALID_VALUE);
        }
        put(p, memory::malloc_host(size, 0)? as *mut c_void)
    })
}

/// cudaHostAlloc: cudaHostAllocPortable/Mapped/WriteCombined are CU_MEMHOSTALLOC_*.
#[no_mangle]
pub extern "C" fn cudaHostAlloc(p: *mut *mut c_void, size: usize, flags: c_uint) -> CudaError {
    api(|| {
        if p.is_null() || flags & !7 != 0 {
            return Err(error::INVALID_VALUE);
        }
        put(p, memory::malloc_host(size, flags)? as *mut c_void)
    })
}

#[no_mangle]
pub extern "C" fn cudaFreeHost(p: *mut c_void) -> CudaError {
    api(|| memory::free_host(p as usize))
}

#[no_mangle]
pub extern "C" fn cudaMallocManaged(p: *mut *mut c_void, size: usize, flags: c_uint) -> CudaError {
    api(|| {
        if p.is_null() {
            return Err(error::INVALID_VALUE);
        }
        put(p, memory::malloc_managed(size, flags)? as *mut c_void)
    })
}

#[no_mangle]
pub extern "C" fn cudaMallocPitch(p: *mut *mut c_void, pitch: *mut usize, width: usize, height: usize) -> CudaError {
    api(|| {
        if p.is_null() || pitch.is_null() {
            return Err(error::INVALID_VALUE);
        }
        let (ptr, pt) = memory::malloc_pitch(width, height)?;
        put(p, ptr as *mut c_void)?;
        put(pitch, pt)
    })
}

#[no_mangle]
pub extern "C" fn cudaHostRegister(p: *mut c_void, size: usize, flags: c_uint) -> CudaError {
    api(|| memory::host_register(p as usize, size, flags))
}

#[no_mangle]
pub extern "C" fn cudaHostUnregister(p: *mut c_void) -> CudaError {
    api(|| memory::host_unregister(p as usize))
}

#[no_mangle]
pub extern "C" fn cudaHostGetDevicePointer(dp: *mut *mut c_void, p: *mut c_void, flags: c_uint) -> CudaError {
    api(|| {
        if dp.is_null() {
            return Err(error::INVALID_VALUE);
        }
        put(dp, memory::host_device_pointer(p as usize, flags)? as *mut c_void)
    })
}

both!(cudaMemcpy, cudaMemcpy_ptds, |pt| (dst: *mut c_void, src: *const c_void, n: usize, kind: c_int) {
    finish(pt, memory::memcpy(dst as u64, src as u64, n, kind, sync_stream(pt)))
});

both!(cudaMemcpyAsync, cudaMemcpyAsync_ptsz, |pt| (dst: *mut c_void, src: *const c_void, n: usize, kind: c_int, s: Handle) {
    memory::memcpy(dst as u64, src as u64, n, kind, Some(stream::handle(s as usize, pt)))
});

both!(cudaMemset, cudaMemset_ptds, |pt| (dst: *mut c_void, value: c_int, n: usize) {
    finish(pt, memory::memset(dst as u64, value, n, sync_stream(pt)))
});

both!(cudaMemsetAsync, cudaMemsetAsync_ptsz, |pt| (dst: *mut c_void, value: c_int, n: usize, s: Handle) {
    memory::memset(dst as u64, value, n, Some(stream::handle(s as usize, pt)))
});

both!(cudaMemcpy2D, cudaMemcpy2D_ptds, |pt| (dst: *mut c_void, dpitch: usize, src: *const c_void, spitch: usize, width: usize, height: usize, kind: c_int) {
    let c = Copy2D { dst: dst as u64, dpitch, src: src as u64, spitch, width, height };
    finish(pt, memory::memcpy_2d(&c, kind, sync_stream(pt)))
});

both!(cudaMemcpy2DAsync, cudaMemcpy2DAsync_ptsz, |pt| (dst: *mut c_void, dpitch: usize, src: *const c_void, spitch: usize, width: usize, height: usize, kind: c_int, s: Handle) {
    let c = Copy2D { dst: dst as u64, dpitch, src: src as u64, spitch, width, height };
    memory::memcpy_2d(&c, kind, Some(stream::handle(s as usize, pt)))
});

both!(cudaMemset2D, cudaMemset2D_ptds, |pt| (dst: *mut c_void, pitch: usize, value: c_int, width: usize, height: usize) {
    finish(pt, memory::memset_2d(dst as u64, pitch, value, width, height, sync_stream(pt)))
});

both!(cudaMemset2DAsync, cudaMemset2DAsync_ptsz, |pt| (dst: *mut c_void, pitch: usize, value: c_int, width: usize, height: usize, s: Handle) {
    memory::memset_2d(dst as u64, pitch, value, width, height, Some(stream::handle(s as usize, pt)))
});

both!(cudaMemcpyToSymbol, cudaMemcpyToSymbol_ptds, |pt| (symbol: *const c_void, src: *const c_void, count: usize, offset: usize, kind: c_int) {
    finish(pt, memory::memcpy_to_symbol(symbol as usize, src as u64, count, offset, kind, sync_stream(pt)))
});

both!(cudaMemcpyFromSymbol, cudaMemcpyFromSymbol_ptds, |pt| (dst: *mut c_void, symbol: *const c_void, count: usize, offset: usize, kind: c_int) {
    finish(pt, memory::memcpy_from_symbol(dst as u64, symbol as usize, count, offset, kind, sync_stream(pt)))
});

both!(cudaMemcpyToSymbolAsync, cudaMemcpyToSymbolAsync_ptsz, |pt| (symbol: *const c_void, src: *const c_void, count: usize, offset: usize, kind: c_int, s: Handle) {
    memory::memcpy_to_symbol(symbol as usize, src as u64, count, offset, kind, Some(stream::handle(s as usize, pt)))
});

both!(cudaMemcpyFromSymbolAsync, cudaMemcpyFromSymbolAsync_ptsz, |pt| (dst: *mut c_void, symbol: *const c_void, count: usize, offset: usize, kind: c_int, s: Handle) {
    memory::memcpy_from_symbol(dst as u64, symbol as usize, count, offset, kind, Some(stream::handle(s as usize, pt)))
});

#[no_mangle]
pub extern "C" fn cudaGetSymbolAddress(dp: *mut *mut c_void, symbol: *const c_void) -> CudaError {
    api(|| {
        if dp.is_null() {
            return Err(error::INVALID_VALUE);
        }
        put(dp, registry::symbol(symbol as usize)?.0 as *mut c_void)
    })
}

#[no_mangle]
pub extern "C" fn cudaGetSymbolSize(size: *mut usize, symbol: *const c_void) -> CudaError {
    api(|| {
        if size.is_null() {
            return Err(error::INVALID_VALUE);
        }
        put(size, registry::symbol(symbol as usize)?.1)
    })
}

/// driver_types.h's `struct cudaPointerAttributes`.
#[repr(C)]
struct PointerAttributes {
    kind: c_int,
    device: c_int,
    device_pointer: *mut c_void,
    host_pointer: *mut c_void,
    locality_domain_ordinal: i64,
    reserved: [i64; 7],
}

#[no_mangle]
pub extern "C" fn cudaPointerGetAttributes(attr: *mut c_void, p: *const c_void) -> CudaError {
    api(|| {
        if attr.is_null() {
            return Err(error::INVALID_VALUE);
        }
        let (kind, device, dp, hp) = memory::pointer_attributes(p as u64)?;
        put(
            attr.cast::<PointerAttributes>(),
            PointerAttributes {
                kind,
                device,
                device_pointer: dp as *mut c_void,
                host_pointer: hp as *mut c_void,
                locality_domain_ordinal: -1i32 as u32 as i64,
                reserved: [0; 7],
            },
        )
    })
}

both!(cudaMemPrefetchAsync, cudaMemPrefetchAsync_ptsz, |pt| (p: *const c_void, count: usize, location: MemLocation, flags: c_uint, s: Handle) {
    memory::prefetch(p as u64, count, location, flags, stream::handle(s as usize, pt))
});

// ---------------------------------------------------------------- streams

#[no_mangle]
pub extern "C" fn cudaStreamCreate(s: *mut Handle) -> CudaError {
    api(|| {
        if s.is_null() {
            return Err(error::INVALID_VALUE);
        }
        put(s, stream::create(0, None)? as Handle)
    })
}

#[no_mangle]
pub extern "C" fn cudaStreamCreateWithFlags(s: *mut Handle, flags: c_uint) -> CudaError {
    api(|| {
        if s.is_null() {
            return Err(error::INVALID_VALUE);
        }
        put(s, stream::create(flags, None)? as Handle)
    })
}

#[no_mangle]
pub extern "C" fn cudaStreamCreateWithPriority(s: *mut Handle, flags: c_uint, priority: c_int) -> CudaError {
    api(|| {
        if s.is_null() {
            return Err(error::INVALID_VALUE);
        }
        put(s, stream::create(flags, Some(priority))? as Handle)
    })
}

#[no_mangle]
pub extern "C" fn cudaStreamDestroy(s: Handle) -> CudaError {
    api(|| stream::destroy(s))
}

both!(cudaStreamSynchronize, cudaStreamSynchronize_ptsz, |pt| (s: Handle) {
    stream::synchronize(stream::handle(s as usize, pt))
});

both!(cudaStreamQuery, cudaStreamQuery_ptsz, |pt| (s: Handle) {
    stream::query(stream::handle(s as usize, pt))
});

both!(cudaStreamWaitEvent, cudaStreamWaitEvent_ptsz, |pt| (s: Handle, e: Handle, flags: c_uint) {
    stream::wait_event(stream::handle(s as usize, pt), e, flags)
});

both!(cudaStreamAddCallback, cudaStreamAddCallback_ptsz, |pt| (s: Handle, cb: Option<StreamCallback>, user: *mut c_void, flags: c_uint) {
    stream::add_callback(stream::handle(s as usize, pt), cb, user, flags)
});

both!(cudaLaunchHostFunc, cudaLaunchHostFunc_ptsz, |pt| (s: Handle, f: Option<HostFn>, user: *mut c_void) {
    stream::launch_host_func(stream::handle(s as usize, pt), f, user)
});

both!(cudaStreamGetFlags, cudaStreamGetFlags_ptsz, |pt| (s: Handle, flags: *mut c_uint) {
    if flags.is_null() {
        return Err(error::INVALID_VALUE);
    }
    put(flags, stream::flags(stream::handle(s as usize, pt))?)
});

both!(cudaStreamGetPriority, cudaStreamGetPriority_ptsz, |pt| (s: Handle, priority: *mut c_int) {
    if priority.is_null() {
        return Err(error::INVALID_VALUE);
    }
    put(priority, stream::priority(stream::handle(s as usize, pt))?)
});

// ---------------------------------------------------------------- events

#[no_mangle]
pub extern "C" fn cudaEventCreate(e: *mut Handle) -> CudaError {
    api(|| {
        if e.is_null() {
            return Err(error::INVALID_VALUE);
        }
        put(e, stream::event_create(0)? as Handle)
    })
}

#[no_mangle]
pub extern "C" fn cudaEventCreateWithFlags(e: *mut Handle, flags: c_uint) -> CudaError {
    api(|| {
        if e.is_null() {
            return Err(error::INVALID_VALUE);
        }
        put(e, stream::event_create(flags)? as Handle)
    })
}

both!(cudaEventRecord, cudaEventRecord_ptsz, |pt| (e: Handle, s: Handle) {
    stream::event_record(e, stream::handle(s as usize, pt), None)
});

both!(cudaEventRecordWithFlags, cudaEventRecordWithFlags_ptsz, |pt| (e: Handle, s: Handle, flags: c_uint) {
    stream::event_record(e, stream::handle(s as usize, pt), Some(flags))
});

#[no_mangle]
pub extern "C" fn cudaEventSynchronize(e: Handle) -> CudaError {
    api(|| stream::event_synchronize(e))
}

#[no_mangle]
pub extern "C" fn cudaEventQuery(e: Handle) -> CudaError {
    api(|| stream::event_query(e))
}

#[no_mangle]
pub extern "C" fn cudaEventElapsedTime(ms: *mut f32, start: Handle, end: Handle) -> CudaError {
    api(|| {
        if ms.is_null() {
            return Err(error::INVALID_VALUE);
        }
        put(ms, stream::event_elapsed(start, end)?)
    })
}

#[no_mangle]
pub extern "C" fn cudaEventDestroy(e: Handle) -> CudaError {
    api(|| stream::event_destroy(e))
}

// ---------------------------------------------------------------- launches and kernels

both!(cudaLaunchKernel, cudaLaunchKernel_ptsz, |pt| (func: *const c_void, grid: Dim3, block: Dim3, args: *mut *mut c_void, shared: usize, s: Handle) {
    launch::launch(func as usize, grid, block, args, shared, stream::handle(s as usize, pt))
});

both!(cudaLaunchCooperativeKernel, cudaLaunchCooperativeKernel_ptsz, |pt| (func: *const c_void, grid: Dim3, block: Dim3, args: *mut *mut c_void, shared: usize, s: Handle) {
    launch::launch_cooperative(func as usize, grid, block, args, shared, stream::handle(s as usize, pt))
});

/// driver_types.h's `cudaLaunchConfig_t`.
#[repr(C)]
#[derive(Clone, Copy)]
struct CudaLaunchConfig {
    grid: Dim3,
    block: Dim3,
    dynamic_smem_bytes: usize,
    stream: Handle,
    attrs: *mut c_void,
    num_attrs: c_uint,
}

both!(cudaLaunchKernelExC, cudaLaunchKernelExC_ptsz, |pt| (config: *const c_void, func: *const c_void, args: *mut *mut c_void) {
    let c = get(config.cast::<CudaLaunchConfig>())?;
    let s = stream::handle(c.stream as usize, pt);
    launch::launch_ex(func as usize, c.grid, c.block, c.dynamic_smem_bytes, s, c.attrs, c.num_attrs, args)
});

#[no_mangle]
pub extern "C" fn cudaFuncGetAttributes(attr: *mut c_void, func: *const c_void) -> CudaError {
    api(|| {
        if attr.is_null() {
            return Err(error::INVALID_VALUE);
        }
        put(attr.cast::<FuncAttributes>(), launch::attributes(func as usize)?)
    })
}

#[no_mangle]
pub extern "C" fn cudaFuncSetAttribute(func: *const c_void, attr: c_int, value: c_int) -> CudaError {
    api(|| launch::set_attribute(func as usize, attr, value))
}

#[no_mangle]
pub extern "C" fn cudaFuncSetCacheConfig(func: *const c_void, config: c_int) -> CudaError {
    api(|| launch::set_cache_config(func as usize, config))
}

#[no_mangle]
pub extern "C" fn cudaOccupancyMaxActiveBlocksPerMultiprocessor(
    n: *mut c_int,
    func: *const c_void,
    block: c_int,
    shared: usize,
) -> CudaError {
    api(|| {
        if n.is_null() {
            return Err(error::INVALID_VALUE);
        }
        put(n, launch::max_active_blocks(func as usize, block, shared, 0)?)
    })
}

#[no_mangle]
pub extern "C" fn cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(
    n: *mut c_int,
    func: *const c_void,
    block: c_int,
    shared: usize,
    flags: c_uint,
) -> CudaError {
    api(|| {
        if n.is_null() {
            return Err(error::INVALID_VALUE);
        }
        put(n, launch::max_active_blocks(func as usize, block, shared, flags)?)
    })
}

// ---------------------------------------------------------------- arrays, textures, surfaces

#[no_mangle]
pub extern "C" fn cudaCreateChannelDesc(x: c_int, y: c_int, z: c_int, w: c_int, f: c_int) -> ChannelDesc {
    texture::channel_desc(x, y, z, w, f)
}

#[no_mangle]
pub extern "C" fn cudaMallocArray(array: *mut Handle, desc: *const ChannelDesc, width: usize, height: usize, flags: c_uint) -> CudaError {
    api(|| {
        if array.is_null() {
            return Err(error::INVALID_VALUE);
        }
        let desc = get(desc)?;
        put(array, texture::malloc_array(&desc, Extent { width, height, depth: 0 }, flags)? as Handle)
    })
}

#[no_mangle]
pub extern "C" fn cudaMalloc3DArray(array: *mut Handle, desc: *const ChannelDesc, extent: Extent, flags: c_uint) -> CudaError {
    api(|| {
        if array.is_null() {
            return Err(error::INVALID_VALUE);
        }
        let desc = get(desc)?;
        put(array, texture::malloc_array(&desc, extent, flags)? as Handle)
    })
}

#[no_mangle]
pub extern "C" fn cudaFreeArray(array: Handle) -> CudaError {
    api(|| texture::free_array(array))
}

#[no_mangle]
pub extern "C" fn cudaGetChannelDesc(desc: *mut ChannelDesc, array: Handle) -> CudaError {
    api(|| {
        if desc.is_null() {
            return Err(error::INVALID_VALUE);
        }
        put(desc, texture::array_channel_desc(array)?)
    })
}

#[no_mangle]
pub extern "C" fn cudaArrayGetInfo(desc: *mut ChannelDesc, extent: *mut Extent, flags: *mut c_uint, array: Handle) -> CudaError {
    api(|| {
        let (d, e, f) = texture::array_info(array)?;
        if !desc.is_null() {
            put(desc, d)?;
        }
        if !extent.is_null() {
            put(extent, e)?;
        }
        if !flags.is_null() {
            put(flags, f)?;
        }
        Ok(())
    })
}

both!(cudaMemcpy2DToArray, cudaMemcpy2DToArray_ptds, |pt| (dst: Handle, w_offset: usize, h_offset: usize, src: *const c_void, spitch: usize, width: usize, height: usize, kind: c_int) {
    let c = ArrayCopy2D { array: dst, w_offset, h_offset, linear: src as u64, pitch: spitch, width, height };
    finish(pt, texture::memcpy_2d_array(&c, true, kind, sync_stream(pt)))
});

both!(cudaMemcpy2DToArrayAsync, cudaMemcpy2DToArrayAsync_ptsz, |pt| (dst: Handle, w_offset: usize, h_offset: usize, src: *const c_void, spitch: usize, width: usize, height: usize, kind: c_int, s: Handle) {
    let c = ArrayCopy2D { array: dst, w_offset, h_offset, linear: src as u64, pitch: spitch, width, height };
    texture::memcpy_2d_array(&c, true, kind, Some(stream::handle(s as usize, pt)))
});

both!(cudaMemcpy2DFromArray, cudaMemcpy2DFromArray_ptds, |pt| (dst: *mut c_void, dpitch: usize, src: Handle, w_offset: usize, h_offset: usize, width: usize, height: usize, kind: c_int) {
    let c = ArrayCopy2D { array: src, w_offset, h_offset, linear: dst as u64, pitch: dpitch, width, height };
    finish(pt, texture::memcpy_2d_array(&c, false, kind, sync_stream(pt)))
});

both!(cudaMemcpy2DFromArrayAsync, cudaMemcpy2DFromArrayAsync_ptsz, |pt| (dst: *mut c_void, dpitch: usize, src: Handle, w_offset: usize, h_offset: usize, width: usize, height: usize, kind: c_int, s: Handle) {
    let c = ArrayCopy2D { array: src, w_offset, h_offset, linear: dst as u64, pitch: dpitch, width, height };
    texture::memcpy_2d_array(&c, false, kind, Some(stream::handle(s as usize, pt)))
});

both!(cudaMemcpyToArray, cudaMemcpyToArray_ptds, |pt| (dst: Handle, w_offset: usize, h_offset: usize, src: *const c_void, count: usize, kind: c_int) {
    finish(pt, texture::memcpy_array_1d(dst, w_offset, h_offset, src as u64, count, true, kind, sync_stream(pt)))
});

both!(cudaMemcpyFromArray, cudaMemcpyFromArray_ptds, |pt| (dst: *mut c_void, src: Handle, w_offset: usize, h_offset: usize, count: usize, kind: c_int) {
    finish(pt, texture::memcpy_array_1d(src, w_offset, h_offset, dst as u64, count, false, kind, sync_stream(pt)))
});

both!(cudaMemcpy3D, cudaMemcpy3D_ptds, |pt| (p: *const Memcpy3DParms) {
    let p = get(p)?;
    finish(pt, texture::memcpy_3d(&p, sync_stream(pt)))
});

both!(cudaMemcpy3DAsync, cudaMemcpy3DAsync_ptsz, |pt| (p: *const Memcpy3DParms, s: Handle) {
    let p = get(p)?;
    texture::memcpy_3d(&p, Some(stream::handle(s as usize, pt)))
});

#[no_mangle]
pub extern "C" fn cudaCreateTextureObject(
    obj: *mut u64,
    res: *const RtResourceDesc,
    tex: *const RtTextureDesc,
    view: *const c_void,
) -> CudaError {
    api(|| {
        if obj.is_null() {
            return Err(error::INVALID_VALUE);
        }
        let (r, t) = (get(res)?, get(tex)?);
        put(obj, texture::create_texture(&r, &t, !view.is_null())?)
    })
}

#[no_mangle]
pub extern "C" fn cudaDestroyTextureObject(obj: u64) -> CudaError {
    api(|| texture::destroy_texture(obj))
}

#[no_mangle]
pub extern "C" fn cudaCreateSurfaceObject(obj: *mut u64, res: *const RtResourceDesc) -> CudaError {
    api(|| {
        if obj.is_null() {
            return Err(error::INVALID_VALUE);
        }
        let r = get(res)?;
        put(obj, texture::create_surface(&r)?)
    })
}

#[no_mangle]
pub extern "C" fn cudaDestroySurfaceObject(obj: u64) -> CudaError {
    api(|| texture::destroy_surface(obj))
}

// ---------------------------------------------------------------- capture, graphs, allocator

both!(cudaStreamBeginCapture, cudaStreamBeginCapture_ptsz, |pt| (s: Handle, mode: c_int) {
    graph::begin_capture(stream::handle(s as usize, pt), mode)
});

both!(cudaStreamEndCapture, cudaStreamEndCapture_ptsz, |pt| (s: Handle, g: *mut Handle) {
    if g.is_null() {
        return Err(error::INVALID_VALUE);
    }
    put(g, graph::end_capture(stream::handle(s as usize, pt))? as Handle)
});

both!(cudaStreamIsCapturing, cudaStreamIsCapturing_ptsz, |pt| (s: Handle, status: *mut c_int) {
    if status.is_null() {
        return Err(error::INVALID_VALUE);
    }
    put(status, graph::is_capturing(stream::handle(s as usize, pt))?)
});

#[no_mangle]
pub extern "C" fn cudaGraphInstantiate(exec: *mut Handle, g: Handle, flags: u64) -> CudaError {
    api(|| {
        if exec.is_null() {
            return Err(error::INVALID_VALUE);
        }
        put(exec, graph::instantiate(g, flags)? as Handle)
    })
}

#[no_mangle]
pub extern "C" fn cudaGraphInstantiateWithFlags(exec: *mut Handle, g: Handle, flags: u64) -> CudaError {
    cudaGraphInstantiate(exec, g, flags)
}

both!(cudaGraphLaunch, cudaGraphLaunch_ptsz, |pt| (exec: Handle, s: Handle) {
    graph::launch(exec, stream::handle(s as usize, pt))
});

#[no_mangle]
pub extern "C" fn cudaGraphExecDestroy(exec: Handle) -> CudaError {
    api(|| graph::exec_destroy(exec))
}

#[no_mangle]
pub extern "C" fn cudaGraphDestroy(g: Handle) -> CudaError {
    api(|| graph::destroy(g))
}

both!(cudaMallocAsync, cudaMallocAsync_ptsz, |pt| (p: *mut *mut c_void, size: usize, s: Handle) {
    if p.is_null() {
        return Err(error::INVALID_VALUE);
    }
    put(p, graph::malloc_async(size, stream::handle(s as usize, pt))? as *mut c_void)
});

both!(cudaFreeAsync, cudaFreeAsync_ptsz, |pt| (p: *mut c_void, s: Handle) {
    graph::free_async(p as u64, stream::handle(s as usize, pt))
});

fn entry_point(symbol: *const c_char, f: *mut *mut c_void, version: i32, flags: u64, status: *mut c_int) -> Res<()> {
    let name = c_name(symbol).ok_or(error::INVALID_VALUE)?;
    if f.is_null() {
        return Err(error::INVALID_VALUE);
    }
    let (p, st) = graph::driver_entry_point(&name, version, flags)?;
    put(f, p as *mut c_void)?;
    if !status.is_null() {
        put(status, st)?;
    }
    Ok(())
}

both!(cudaGetDriverEntryPointByVersion, cudaGetDriverEntryPointByVersion_ptsz, |pt| (symbol: *const c_char, f: *mut *mut c_void, version: c_uint, flags: u64, status: *mut c_int) {
    let flags = if pt && flags == 0 { 2 } else { flags };
    entry_point(symbol, f, version as i32, flags, status)
});

// cudaGetDriverEntryPoint: at the runtime's own CUDA version.
both!(cudaGetDriverEntryPoint, cudaGetDriverEntryPoint_ptsz, |pt| (symbol: *const c_char, f: *mut *mut c_void, flags: u64, status: *mut c_int) {
    let flags = if pt && flags == 0 { 2 } else { flags };
    entry_point(symbol, f, device::RUNTIME_VERSION, flags, status)
});

// ---------------------------------------------------------------- graphs built node by node

/// driver_types.h's `struct cudaKernelNodeParams`.
#[repr(C)]
#[derive(Clone, Copy)]
pub(crate) struct CudaKernelNodeParams {
    func: *const c_void,
    grid: Dim3,
    block: Dim3,
    shared: c_uint,
    params: *mut *mut c_void,
    extra: *mut *mut c_void,
}

fn kernel_node(p: *const CudaKernelNodeParams) -> Res<graph::KernelNode> {
    let k = get(p)?;
    Ok(graph::KernelNode { func: k.func as usize, grid: k.grid, block: k.block, shared: k.shared, params: k.params, extra: k.extra })
}

#[no_mangle]
pub extern "C" fn cudaGraphCreate(g: *mut Handle, flags: c_uint) -> CudaError {
    api(|| {
        if g.is_null() {
            return Err(error::INVALID_VALUE);
        }
        put(g, graph::create(flags)? as Handle)
    })
}

#[no_mangle]
pub extern "C" fn cudaGraphClone(clone: *mut Handle, g: Handle) -> CudaError {
    api(|| {
        if clone.is_null() {
            return Err(error::INVALID_VALUE);
        }
        put(clone, graph::clone(g)? as Handle)
    })
}

#[no_mangle]
pub extern "C" fn cudaGraphGetNodes(g: Handle, nodes: *mut Handle, n: *mut usize) -> CudaError {
    api(|| {
        let mut count = get(n)?;
        graph::nodes(g, nodes, &mut count)?;
        put(n, count)
    })
}

/// Writes a new node's handle.
fn node_out(out: *mut Handle, node: Res<usize>) -> Res<()> {
    put(out, node? as Handle)
}

#[no_mangle]
pub extern "C" fn cudaGraphAddKernelNode(
    node: *mut Handle,
    g: Handle,
    deps: *const Handle,
    n: usize,
    p: *const CudaKernelNodeParams,
) -> CudaError {
    api(|| {
        if node.is_null() {
            return Err(error::INVALID_VALUE);
        }
        node_out(node, graph::add_kernel_node(g, deps, n, &kernel_node(p)?))
    })
}

#[no_mangle]
pub extern "C" fn cudaGraphAddMemsetNode(
    node: *mut Handle,
    g: Handle,
    deps: *const Handle,
    n: usize,
    p: *const MemsetNodeParams,
) -> CudaError {
    api(|| {
        if node.is_null() {
            return Err(error::INVALID_VALUE);
        }
        node_out(node, graph::add_memset_node(g, deps, n, &get(p)?))
    })
}

#[no_mangle]
pub extern "C" fn cudaGraphAddMemcpyNode(
    node: *mut Handle,
    g: Handle,
    deps: *const Handle,
    n: usize,
    p: *const Memcpy3DParms,
) -> CudaError {
    api(|| {
        if node.is_null() {
            return Err(error::INVALID_VALUE);
        }
        node_out(node, graph::add_memcpy_node(g, deps, n, &get(p)?))
    })
}

#[no_mangle]
pub extern "C" fn cudaGraphAddHostNode(node: *mut Handle, g: Handle, deps: *const Handle, n: usize, p: *const HostNodeParams) -> CudaError {
    api(|| {
        if node.is_null() {
            return Err(error::INVALID_VALUE);
        }
        node_out(node, graph::add_host_node(g, deps, n, &get(p)?))
    })
}

#[no_mangle]
pub extern "C" fn cudaGraphAddEmptyNode(node: *mut Handle, g: Handle, deps: *const Handle, n: usize) -> CudaError {
    api(|| {
        if node.is_null() {
            return Err(error::INVALID_VALUE);
        }
        node_out(node, graph::add_empty_node(g, deps, n))
    })
}

#[no_mangle]
pub extern "C" fn cudaGraphExecKernelNodeSetParams(exec: Handle, node: Handle, p: *const CudaKernelNodeParams) -> CudaError {
    api(|| graph::exec_kernel_node_set_params(exec, node, &kernel_node(p)?))
}

#[no_mangle]
pub extern "C" fn cudaGraphExecUpdate(exec: Handle, g: Handle, info: *mut c_void) -> CudaError {
    api(|| graph::exec_update(exec, g, info))
}

// Every entry point carries the version node `libcudart.so.13` (defined by exports.map),
// as NVIDIA's do: an executable linked against either library asks for
// `cudaMalloc@libcudart.so.13`. rustc's own version script would leave them unversioned,
// hence the `.symver` lines; `cudart/tests/runtime.rs` checks that every export has it.
macro_rules! versioned {
    ($($f:literal),* $(,)?) => {
        std::arch::global_asm!($(concat!(".symver ", $f, ", ", $f, "@@libcudart.so.13")),*);
    };
}

versioned!(
    "cudaGraphCreate",
    "cudaGraphClone",
    "cudaGraphGetNodes",
    "cudaGraphAddKernelNode",
    "cudaGraphAddMemsetNode",
    "cudaGraphAddMemcpyNode",
    "cudaGraphAddHostNode",
    "cudaGraphAddEmptyNode",
    "cudaGraphExecKernelNodeSetParams",
    "cudaGraphExecUpdate",
    "cudaGraphInstantiate",
    "cudaGraphInstantiateWithFlags",
    "cudaGraphExecDestroy",
    "cudaGraphDestroy",
    "cudaStreamBeginCapture",
    "cudaStreamBeginCapture_ptsz",
    "cudaStreamEndCapture",
    "cudaStreamEndCapture_ptsz",
    "cudaStreamIsCapturing",
    "cudaStreamIsCapturing_ptsz",
    "cudaGraphLaunch",
    "cudaGraphLaunch_ptsz",
    "cudaMallocAsync",
    "cudaMallocAsync_ptsz",
    "cudaFreeAsync",
    "cudaFreeAsync_ptsz",
    "cudaGetDriverEntryPointByVersion",
    "cudaGetDriverEntryPointByVersion_ptsz",
    "cudaGetDriverEntryPoint",
    "cudaGetDriverEntryPoint_ptsz",
    "cudaProfilerStart",
    "cudaProfilerStop",
    "cudaCreateChannelDesc",
    "cudaMallocArray",
    "cudaMalloc3DArray",
    "cudaFreeArray",
    "cudaGetChannelDesc",
    "cudaArrayGetInfo",
    "cudaMemcpy2DToArray",
    "cudaMemcpy2DToArray_ptds",
    "cudaMemcpy2DFromArray",
    "cudaMemcpy2DFromArray_ptds",
    "cudaMemcpyToArray",
    "cudaMemcpyToArray_ptds",
    "cudaMemcpyFromArray",
    "cudaMemcpyFromArray_ptds",
    "cudaMemcpy3D",
    "cudaMemcpy3D_ptds",
    "cudaMemcpy2DToArrayAsync",
    "cudaMemcpy2DToArrayAsync_ptsz",
    "cudaMemcpy2DFromArrayAsync",
    "cudaMemcpy2DFromArrayAsync_ptsz",
    "cudaMemcpy3DAsync",
    "cudaMemcpy3DAsync_ptsz",
    "cudaCreateTextureObject",
    "cudaDestroyTextureObject",
    "cudaCreateSurfaceObject",
    "cudaDestroySurfaceObject",
    "__cudaGetKernel",
    "__cudaInitModule",
    "__cudaLaunchKernel",
    "__cudaLaunchKernel_ptsz",
    "__cudaPopCallConfiguration",
    "__cudaPushCallConfiguration",
    "__cudaRegisterFatBinary",
    "__cudaRegisterFatBinaryEnd",
    "__cudaRegisterFunction",
    "__cudaRegisterManagedVar",
    "__cudaRegisterVar",
    "__cudaUnregisterFatBinary",
    "cudaDeviceCanAccessPeer",
    "cudaDeviceGetAttribute",
    "cudaDeviceGetLimit",
    "cudaDeviceGetStreamPriorityRange",
    "cudaDeviceReset",
    "cudaDeviceSetLimit",
    "cudaDeviceSynchronize",
    "cudaDriverGetVersion",
    "cudaEventCreate",
    "cudaEventCreateWithFlags",
    "cudaEventDestroy",
    "cudaEventElapsedTime",
    "cudaEventQuery",
    "cudaEventRecord",
    "cudaEventRecordWithFlags",
    "cudaEventRecordWithFlags_ptsz",
    "cudaEventRecord_ptsz",
    "cudaEventSynchronize",
    "cudaFree",
    "cudaFreeHost",
    "cudaFuncGetAttributes",
    "cudaFuncSetAttribute",
    "cudaFuncSetCacheConfig",
    "cudaGetDevice",
    "cudaGetDeviceCount",
    "cudaGetDeviceFlags",
    "cudaGetDeviceProperties",
    "cudaGetErrorName",
    "cudaGetErrorString",
    "cudaGetLastError",
    "cudaGetSymbolAddress",
    "cudaGetSymbolSize",
    "cudaHostAlloc",
    "cudaHostGetDevicePointer",
    "cudaHostRegister",
    "cudaHostUnregister",
    "cudaInitDevice",
    "cudaLaunchCooperativeKernel",
    "cudaLaunchCooperativeKernel_ptsz",
    "cudaLaunchHostFunc",
    "cudaLaunchHostFunc_ptsz",
    "cudaLaunchKernel",
    "cudaLaunchKernelExC",
    "cudaLaunchKernelExC_ptsz",
    "cudaLaunchKernel_ptsz",
    "cudaMalloc",
    "cudaMallocHost",
    "cudaMallocManaged",
    "cudaMallocPitch",
    "cudaMemGetInfo",
    "cudaMemPrefetchAsync",
    "cudaMemPrefetchAsync_ptsz",
    "cudaMemcpy",
    "cudaMemcpy2D",
    "cudaMemcpy2DAsync",
    "cudaMemcpy2DAsync_ptsz",
    "cudaMemcpy2D_ptds",
    "cudaMemcpyAsync",
    "cudaMemcpyAsync_ptsz",
    "cudaMemcpyFromSymbol",
    "cudaMemcpyFromSymbolAsync",
    "cudaMemcpyFromSymbolAsync_ptsz",
    "cudaMemcpyFromSymbol_ptds",
    "cudaMemcpyToSymbol",
    "cudaMemcpyToSymbolAsync",
    "cudaMemcpyToSymbolAsync_ptsz",
    "cudaMemcpyToSymbol_ptds",
    "cudaMemcpy_ptds",
    "cudaMemset",
    "cudaMemset2D",
    "cudaMemset2DAsync",
    "cudaMemset2DAsync_ptsz",
    "cudaMemset2D_ptds",
    "cudaMemsetAsync",
    "cudaMemsetAsync_ptsz",
    "cudaMemset_ptds",
    "cudaOccupancyMaxActiveBlocksPerMultiprocessor",
    "cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags",
    "cudaPeekAtLastError",
    "cudaPointerGetAttributes",
    "cudaRuntimeGetVersion",
    "cudaSetDevice",
    "cudaSetDeviceFlags",
    "cudaStreamAddCallback",
    "cudaStreamAddCallback_ptsz",
    "cudaStreamCreate",
    "cudaStreamCreateWithFlags",
    "cudaStreamCreateWithPriority",
    "cudaStreamDestroy",
    "cudaStreamGetFlags",
    "cudaStreamGetFlags_ptsz",
    "cudaStreamGetPriority",
    "cudaStreamGetPriority_ptsz",
    "cudaStreamQuery",
    "cudaStreamQuery_ptsz",
    "cudaStreamSynchronize",
    "cudaStreamSynchronize_ptsz",
    "cudaStreamWaitEvent",
    "cudaStreamWaitEvent_ptsz",
);

#[cfg(test)]
mod tests {
    /// The sizes g++ reports for the header's structs (`cudart/tests/layout.rs`).
    #[test]
    fn private_structs_have_the_header_sizes() {
        assert_eq!(std::mem::size_of::<super::PointerAttributes>(), 88);
        assert_eq!(std::mem::size_of::<super::CudaLaunchConfig>(), 56);
        assert_eq!(std::mem::size_of::<super::FatbinWrapper>(), 24);
        assert_eq!(std::mem::size_of::<super::CudaKernelNodeParams>(), 56);
        assert_eq!(std::mem::size_of::<crate::driver::MemsetNodeParams>(), 40);
    }
}
