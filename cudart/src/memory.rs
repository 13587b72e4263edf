//! Allocations, copies, memsets, symbols and pointer queries.
//!
//! Addresses travel as `u64` (the driver's CUdeviceptr; host and device share one address
//! space under unified addressing). Copies name their direction to the driver
//! (cuMemcpyHtoD, DtoH, DtoD; cudaMemcpyDefault uses the unified cuMemcpy), so a device
//! pointer that is not one answers cudaErrorInvalidValue from the driver's range checks.
//! `stream` is `None` for the synchronous calls; a `Some` stream is the handle the program
//! passed, already resolved by `stream::handle` (legacy or per-thread default stream).

use std::ffi::c_void;

use crate::driver::{self as d, Handle, Memcpy2D};
use crate::error::{self, check, Res};
use crate::state;

/// cudaMemcpyKind.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Kind {
    HostToHost,
    HostToDevice,
    DeviceToHost,
    DeviceToDevice,
    Default,
}

impl Kind {
    /// cudaErrorInvalidMemcpyDirection for a number cudaMemcpyKind does not define.
    pub fn from_raw(k: i32) -> Res<Kind> {
        Ok(match k {
            0 => Kind::HostToHost,
            1 => Kind::HostToDevice,
            2 => Kind::DeviceToHost,
            3 => Kind::DeviceToDevice,
            4 => Kind::Default,
            _ => return Err(error::INVALID_MEMCPY_DIRECTION),
        })
    }

    /// CUmemorytype of the source and destination.
    fn memory_types(self) -> (u32, u32) {
        const HOST: u32 = 1;
        const DEVICE: u32 = 2;
        const UNIFIED: u32 = 4;
        match self {
            Kind::HostToHost => (HOST, HOST),
            Kind::HostToDevice => (HOST, DEVICE),
            Kind::DeviceToHost => (DEVICE, HOST),
            Kind::DeviceToDevice => (DEVICE, DEVICE),
            Kind::Default => (UNIFIED, UNIFIED),
        }
    }
}

pub fn malloc(size: usize) -> Res<u64> {
    state::ctx()?;
    if size == 0 {
        return Ok(0);
    }
    let mut p = 0;
    check(d::cuMemAlloc(&mut p, size))?;
    Ok(p)
}

/// cudaFree: NULL is a no-op (that initialises the context, the `cudaFree(0)` idiom).
pub fn free(p: u64) -> Res<()> {
    state::ctx()?;
    if p == 0 {
        return Ok(());
    }
    check(d::cuMemFree(p))
}

pub fn malloc_host(size: usize, flags: u32) -> Res<usize> {
    state::ctx()?;
    if size == 0 {
        return Ok(0);
    }
    let mut p = std::ptr::null_mut();
    check(d::cuMemHostAlloc(&mut p, size, flags))?;
    Ok(p as usize)
}

pub fn free_host(p: usize) -> Res<()> {
    state::ctx()?;
    if p == 0 {
        return Ok(());
    }
    check(d::cuMemFreeHost(p as *mut c_void))
}

/// cudaMallocManaged: `flags` is cudaMemAttachGlobal (1) or cudaMemAttachHost (2).
pub fn malloc_managed(size: usize, flags: u32) -> Res<u64> {
    state::ctx()?;
    if flags != 1 && flags != 2 {
        return Err(error::INVALID_VALUE);
    }
    if size == 0 {
        return Err(error::INVALID_VALUE);
    }
    let mut p = 0;
    check(d::cuMemAllocManaged(&mut p, size, flags))?;
    Ok(p)
}

/// cudaMallocPitch: the pitch the driver chooses for 4-byte elements.
pub fn malloc_pitch(width: usize, height: usize) -> Res<(u64, usize)> {
    state::ctx()?;
    if width == 0 || height == 0 {
        return Ok((0, 0));
    }
    let (mut p, mut pitch) = (0, 0);
    check(d::cuMemAllocPitch(&mut p, &mut pitch, width, height, 4))?;
    Ok((p, pitch))
}

pub fn host_register(p: usize, size: usize, flags: u32) -> Res<()> {
    state::ctx()?;
    check(d::cuMemHostRegister(p as *mut c_void, size, flags))
}

pub fn host_unregister(p: usize) -> Res<()> {
    state::ctx()?;
    check(d::cuMemHostUnregister(p as *mut c_void))
}

pub fn host_device_pointer(p: usize, flags: u32) -> Res<u64> {
    state::ctx()?;
    if flags != 0 {
        return Err(error::INVALID_VALUE);
    }
    let mut dp = 0;
    check(d::cuMemHostGetDevicePointer(&mut dp, p as *mut c_void, 0))?;
    Ok(dp)
}

pub fn mem_get_info() -> Res<(usize, usize)> {
    state::ctx()?;
    let (mut free, mut total) = (0, 0);
    check(d::cuMemGetInfo(&mut free, &mut total))?;
    Ok((free, total))
}

/// cudaMemcpy / cudaMemcpyAsync.
pub fn memcpy(dst: u64, src: u64, n: usize, kind: i32, stream: Option<Handle>) -> Res<()> {
    let kind = Kind::from_raw(kind)?;
    state::ctx()?;
    if n == 0 {
        return Ok(());
    }
    // A null side is a bad argument, not a copy to attempt (the driver would read or write
    // address 0 of host memory and the process would die).
    if dst == 0 || src == 0 {
        return Err(error::INVALID_VALUE);
    }
    let (dh, sh) = (dst as *mut c_void, src as *const c_void);
    check(match (kind, stream) {
        (Kind::HostToDevice, None) => d::cuMemcpyHtoD(dst, sh, n),
        (Kind::DeviceToHost, None) => d::cuMemcpyDtoH(dh, src, n),
        (Kind::DeviceToDevice, None) => d::cuMemcpyDtoD(dst, src, n),
        (Kind::HostToHost | Kind::Default, None) => d::cuMemcpy(dst, src, n),
        (Kind::HostToDevice, Some(s)) => d::cuMemcpyHtoDAsync(dst, sh, n, s),
        (Kind::DeviceToHost, Some(s)) => d::cuMemcpyDtoHAsync(dh, src, n, s),
        (Kind::DeviceToDevice, Some(s)) => d::cuMemcpyDtoDAsync(dst, src, n, s),
        (Kind::HostToHost | Kind::Default, Some(s)) => d::cuMemcpyAsync(dst, src, n, s),
    })
}

/// cudaMemset / cudaMemsetAsync: `value` is converted to unsigned char, as documented.
pub fn memset(dst: u64, value: i32, n: usize, stream: Option<Handle>) -> Res<()> {
    state::ctx()?;
    if n == 0 {
        return Ok(());
    }
    check(match stream {
        None => d::cuMemsetD8(dst, value as u8, n),
        Some(s) => d::cuMemsetD8Async(dst, value as u8, n, s),
    })
}

/// A 2D copy's geometry.
pub struct Copy2D {
    pub dst: u64,
    pub dpitch: usize,
    pub src: u64,
    pub spitch: usize,
    pub width: usize,
    pub height: usize,
}

/// cudaMemcpy2D / cudaMemcpy2DAsync: cudaErrorInvalidPitchValue when a pitch is narrower
/// than a row.
pub fn memcpy_2d(c: &Copy2D, kind: i32, stream: Option<Handle>) -> Res<()> {
    let kind = Kind::from_raw(kind)?;
    state::ctx()?;
    if c.width == 0 || c.height == 0 {
        return Ok(());
    }
    if c.width > c.dpitch || c.width > c.spitch {
        return Err(error::INVALID_PITCH_VALUE);
    }
    if c.dst == 0 || c.src == 0 {
        return Err(error::INVALID_VALUE);
    }
    let (st, dt) = kind.memory_types();
    let p = Memcpy2D {
        src_x_in_bytes: 0,
        src_y: 0,
        src_memory_type: st,
        src_host: c.src as *const c_void,
        src_device: c.src,
        src_array: std::ptr::null_mut(),
        src_pitch: c.spitch,
        dst_x_in_bytes: 0,
        dst_y: 0,
        dst_memory_type: dt,
        dst_host: c.dst as *mut c_void,
        dst_device: c.dst,
        dst_array: std::ptr::null_mut(),
        dst_pitch: c.dpitch,
        width_in_bytes: c.width,
        height: c.height,
    };
    check(match stream {
        None => d::cuMemcpy2D(&p),
        Some(s) => d::cuMemcpy2DAsync(&p, s),
    })
}

/// cudaMemset2D / cudaMemset2DAsync.
pub fn memset_2d(dst: u64, pitch: usize, value: i32, width: usize, height: usize, stream: Option<Handle>) -> Res<()> {
    state::ctx()?;
    if width == 0 || height == 0 {
        return Ok(());
    }
    if width > pitch {
        return Err(error::INVALID_PITCH_VALUE);
    }
    check(match stream {
        None => d::cuMemsetD2D8(dst, pitch, value as u8, width, height),
        Some(s) => d::cuMemsetD2D8Async(dst, pitch, value as u8, width, height, s),
    })
}

/// The device range `[offset, offset + count)` of the symbol registered at `symbol`
/// (cudaErrorInvalidValue when it runs past the variable).
fn symbol_range(symbol: usize, count: usize, offset: usize) -> Res<u64> {
    let (addr, size) = crate::registry::symbol(symbol)?;
    match offset.checked_add(count) {
        Some(end) if end <= size => Ok(addr + offset as u64),
        _ => Err(error::INVALID_VALUE),
    }
}

/// cudaMemcpyToSymbol(Async): host-to-device, device-to-device or default.
pub fn memcpy_to_symbol(symbol: usize, src: u64, count: usize, offset: usize, kind: i32, stream: Option<Handle>) -> Res<()> {
    if !matches!(Kind::from_raw(kind)?, Kind::HostToDevice | Kind::DeviceToDevice | Kind::Default) {
        return Err(error::INVALID_MEMCPY_DIRECTION);
    }
    let dst = symbol_range(symbol, count, offset)?;
    memcpy(dst, src, count, kind, stream)
}

/// cudaMemcpyFromSymbol(Async): device-to-host, device-to-device or default.
pub fn memcpy_from_symbol(dst: u64, symbol: usize, count: usize, offset: usize, kind: i32, stream: Option<Handle>) -> Res<()> {
    if !matches!(Kind::from_raw(kind)?, Kind::DeviceToHost | Kind::DeviceToDevice | Kind::Default) {
        return Err(error::INVALID_MEMCPY_DIRECTION);
    }
    let src = symbol_range(symbol, count, offset)?;
    memcpy(dst, src, count, kind, stream)
}

/// cudaPointerAttributes' fields: (type, device, devicePointer, hostPointer).
pub fn pointer_attributes(p: u64) -> Res<(i32, i32, u64, u64)> {
    state::ctx()?;
    const MEMORY_TYPE: i32 = 2;
    const DEVICE_POINTER: i32 = 3;
    const HOST_POINTER: i32 = 4;
    const IS_MANAGED: i32 = 8;
    const DEVICE_ORDINAL: i32 = 9;
    let mut mem_type = 0u32;
    if d::cuPointerGetAttribute((&mut mem_type as *mut u32).cast(), MEMORY_TYPE, p) != 0 {
        // Memory the driver does not know: unregistered host memory (CUDA 11 onwards).
        return Ok((0, -2, 0, p));
    }
    let mut managed = 0i32;
    let _ = d::cuPointerGetAttribute((&mut managed as *mut i32).cast(), IS_MANAGED, p);
    let mut device = 0i32;
    check(d::cuPointerGetAttribute((&mut device as *mut i32).cast(), DEVICE_ORDINAL, p))?;
    let (mut dp, mut hp) = (0u64, 0u64);
    if d::cuPointerGetAttribute((&mut dp as *mut u64).cast(), DEVICE_POINTER, p) != 0 {
        dp = 0;
    }
    if d::cuPointerGetAttribute((&mut hp as *mut u64).cast(), HOST_POINTER, p) != 0 {
        hp = 0;
    }
    // cudaMemoryType: 1 host, 2 device, 3 managed (CUmemorytype: 1 host, 2 device).
    let t = if managed != 0 {
        3
    } else if mem_type == 1 {
        1
    } else {
        2
    };
    Ok((t, device, dp, hp))
}

/// cudaMemPrefetchAsync (CUDA 13's form, with a cudaMemLocation).
pub fn prefetch(p: u64, count: usize, location: d::MemLocation, flags: u32, stream: Handle) -> Res<()> {
    state::ctx()?;
    check(d::cuMemPrefetchAsync(p, count, location, flags, stream))
}
