//! Allocations (device, pitched, pinned host, managed, stream-ordered, pools), copies
//! and memsets, pointer attributes. Everything is range-checked by the tracker.

use super::out;
use crate::cu::*;
use crate::memory::{self, Side};
use crate::state::{driver, handle, handle_id, AllocKind, CuResult, Pool, Tag};
use std::ffi::c_void;

pub fn mem_alloc(dptr: *mut CUdeviceptr, size: usize) -> CuResult {
    let mut d = driver()?;
    let ctx = d.current()?;
    super::nonnull(dptr)?;
    let p = memory::allocate(&mut d, ctx, size as u64, AllocKind::Device, None)?;
    out(dptr, p)
}

pub fn mem_alloc_pitch(dptr: *mut CUdeviceptr, pitch: *mut usize, width: usize, height: usize, elem: u32) -> CuResult {
    let mut d = driver()?;
    let ctx = d.current()?;
    super::nonnull(dptr)?;
    super::nonnull(pitch)?;
    if !matches!(elem, 4 | 8 | 16) || width == 0 || height == 0 {
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    let align = d.profile.attr(14).unwrap_or(512).max(1) as usize;
    let p = width.div_ceil(align) * align;
    let total = p.checked_mul(height).ok_or(CUDA_ERROR_OUT_OF_MEMORY)?;
    let base = memory::allocate(&mut d, ctx, total as u64, AllocKind::Pitched, None)?;
    out(pitch, p)?;
    out(dptr, base)
}

pub fn mem_free(dptr: CUdeviceptr) -> CuResult {
    let mut d = driver()?;
    d.current()?;
    if dptr == 0 {
        return Ok(());
    }
    memory::free_device(&mut d, dptr)
}

pub fn mem_get_info(free: *mut usize, total: *mut usize) -> CuResult {
    let d = driver()?;
    d.current()?;
    let t = d.profile.total_mem;
    out(free, t.saturating_sub(d.used_bytes) as usize)?;
    out(total, t as usize)
}

pub fn mem_get_address_range(base: *mut CUdeviceptr, size: *mut usize, dptr: CUdeviceptr) -> CuResult {
    let d = driver()?;
    d.current()?;
    let a = d.find_alloc(dptr).ok_or(CUDA_ERROR_NOT_FOUND)?;
    if !base.is_null() {
        out(base, a.base)?;
    }
    if !size.is_null() {
        out(size, a.size as usize)?;
    }
    Ok(())
}

pub fn mem_alloc_host(pp: *mut *mut c_void, size: usize) -> CuResult {
    mem_host_alloc(pp, size, 0)
}

pub fn mem_host_alloc(pp: *mut *mut c_void, size: usize, flags: u32) -> CuResult {
    let mut d = driver()?;
    let ctx = d.current()?;
    super::nonnull(pp)?;
    if flags & !(CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP | CU_MEMHOSTALLOC_WRITECOMBINED) != 0 {
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    let p = memory::allocate(&mut d, ctx, size as u64, AllocKind::PinnedHost, None)?;
    out(pp, p as *mut c_void)
}

pub fn mem_free_host(p: *mut c_void) -> CuResult {
    let mut d = driver()?;
    d.current()?;
    match d.allocs.get(&(p as u64)) {
        Some(a) if a.kind == AllocKind::PinnedHost => memory::release(&mut d, p as u64),
        _ => Err(CUDA_ERROR_INVALID_VALUE),
    }
}

pub fn mem_host_get_device_pointer(dptr: *mut CUdeviceptr, p: *mut c_void, flags: u32) -> CuResult {
    let d = driver()?;
    d.current()?;
    if flags != 0 {
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    match d.find_alloc(p as u64) {
        Some(a) if a.kind.is_host() => out(dptr, p as u64),
        _ => Err(CUDA_ERROR_INVALID_VALUE),
    }
}

pub fn mem_host_get_flags(flags: *mut u32, p: *mut c_void) -> CuResult {
    let d = driver()?;
    d.current()?;
    match d.find_alloc(p as u64) {
        Some(a) if a.kind.is_host() => out(flags, CU_MEMHOSTALLOC_DEVICEMAP),
        _ => Err(CUDA_ERROR_INVALID_VALUE),
    }
}

pub fn mem_host_register(p: *mut c_void, size: usize, _flags: u32) -> CuResult {
    let mut d = driver()?;
    let ctx = d.current()?;
    if p.is_null() || size == 0 {
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    let (b, e) = (p as u64, p as u64 + size as u64);
    if d.allocs.values().any(|a| a.base < e && b < a.base + a.size) {
        return Err(CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED);
    }
    memory::track_foreign(&mut d, ctx, b, size as u64, AllocKind::Registered);
    Ok(())
}

pub fn mem_host_unregister(p: *mut c_void) -> CuResult {
    let mut d = driver()?;
    d.current()?;
    match d.allocs.get(&(p as u64)) {
        Some(a) if a.kind == AllocKind::Registered => {
            d.allocs.remove(&(p as u64));
            Ok(())
        }
        _ => Err(CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED),
    }
}

pub fn mem_alloc_managed(dptr: *mut CUdeviceptr, size: usize, flags: u32) -> CuResult {
    let mut d = driver()?;
    let ctx = d.current()?;
    super::nonnull(dptr)?;
    if flags != 1 && flags != 2 {
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    let p = memory::allocate(&mut d, ctx, size as u64, AllocKind::Managed, None)?;
    out(dptr, p)
}

fn pool_id(pool: CUmemoryPool) -> CuResult<u64> {
    handle_id(Tag::Pool, pool).ok_or(CUDA_ERROR_INVALID_VALUE)
}

fn alloc_from_pool(dptr: *mut CUdeviceptr, size: usize, pool: Option<u64>, stream: CUstream) -> CuResult {
    let mut d = driver()?;
    let ctx = d.check_stream(stream)?;
    super::nonnull(dptr)?;
    let dev = d.contexts[&ctx].device as usize;
    let pool = pool.unwrap_or(d.device_pool[dev]);
    if !d.pools.contains_key(&pool) {
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    let p = memory::allocate(&mut d, ctx, size as u64, AllocKind::StreamOrdered, Some(pool))?;
    let pl = d.pools.get_mut(&pool).unwrap();
    pl.used += size as u64;
    pl.used_high = pl.used_high.max(pl.used);
    out(dptr, p)
}

/// Stream-ordered allocation: streams run their work at once, so the allocation is
/// usable in stream order by construction.
pub fn mem_alloc_async(dptr: *mut CUdeviceptr, size: usize, stream: CUstream) -> CuResult {
    alloc_from_pool(dptr, size, None, stream)
}

pub fn mem_alloc_from_pool_async(dptr: *mut CUdeviceptr, size: usize, pool: CUmemoryPool, stream: CUstream) -> CuResult {
    alloc_from_pool(dptr, size, Some(pool_id(pool)?), stream)
}

pub fn mem_free_async(dptr: CUdeviceptr, stream: CUstream) -> CuResult {
    let mut d = driver()?;
    d.check_stream(stream)?;
    memory::free_device(&mut d, dptr)
}

pub fn mem_pool_create(pool: *mut CUmemoryPool, _props: *const c_void) -> CuResult {
    let mut d = driver()?;
    super::nonnull(pool)?;
    super::nonnull(_props)?;
    let id = d.new_id();
    d.pools.insert(id, Pool { device: 0, release_threshold: 0, used: 0, used_high: 0, reuse_flags: [1, 1, 1], default: false });
    out(pool, handle(Tag::Pool, id))
}

pub fn mem_pool_destroy(pool: CUmemoryPool) -> CuResult {
    let mut d = driver()?;
    let id = pool_id(pool)?;
    match d.pools.get(&id) {
        Some(p) if !p.default => {
            let _ = p.device;
            d.pools.remove(&id);
            Ok(())
        }
        _ => Err(CUDA_ERROR_INVALID_VALUE),
    }
}

pub fn mem_pool_trim_to(pool: CUmemoryPool, _keep: usize) -> CuResult {
    let d = driver()?;
    d.pools.get(&pool_id(pool)?).ok_or(CUDA_ERROR_INVALID_VALUE)?;
    Ok(())
}

pub fn mem_pool_set_attribute(pool: CUmemoryPool, attr: i32, value: *mut c_void) -> CuResult {
    let mut d = driver()?;
    super::nonnull(value)?;
    let p = d.pools.get_mut(&pool_id(pool)?).ok_or(CUDA_ERROR_INVALID_VALUE)?;
    // SAFETY: the value's type is fixed per attribute (int or cuuint64_t).
    unsafe {
        match attr {
            1..=3 => p.reuse_flags[(attr - 1) as usize] = *(value as *const i32),
            CU_MEMPOOL_ATTR_RELEASE_THRESHOLD => p.release_threshold = *(value as *const u64),
            CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH | CU_MEMPOOL_ATTR_USED_MEM_HIGH => {
                if *(value as *const u64) != 0 {
                    return Err(CUDA_ERROR_INVALID_VALUE);
                }
                p.used_high = p.used;
            }
            _ => return Err(CUDA_ERROR_INVALID_VALUE),
        }
    }
    Ok(())
}

pub fn mem_pool_get_attribute(pool: CUmemoryPool, attr: i32, value: *mut c_void) -> CuResult {
    let d = driver()?;
    super::nonnull(value)?;
    let p = d.pools.get(&pool_id(pool)?).ok_or(CUDA_ERROR_INVALID_VALUE)?;
    // SAFETY: as in set_attribute.
    unsafe {
        match attr {
            1..=3 => *(value as *mut i32) = p.reuse_flags[(attr - 1) as usize],
            CU_MEMPOOL_ATTR_RELEASE_THRESHOLD => *(value as *mut u64) = p.release_threshold,
            CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT | CU_MEMPOOL_ATTR_USED_MEM_CURRENT => *(value as *mut u64) = p.used,
            CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH | CU_MEMPOOL_ATTR_USED_MEM_HIGH => *(value as *mut u64) = p.used_high,
            _ => return Err(CUDA_ERROR_INVALID_VALUE),
        }
    }
    Ok(())
}

// ---- copies -------------------------------------------------------------------------

fn copy_checked(dst: u64, src: u64, n: usize, ed: Option<Side>, es: Option<Side>, stream: Option<CUstream>) -> CuResult {
    let d = driver()?;
    match stream {
        Some(s) => d.check_stream(s)?,
        None => d.current()?,
    };
    memory::copy(&d, dst, src, n as u64, ed, es)
}

pub fn memcpy(dst: CUdeviceptr, src: CUdeviceptr, n: usize) -> CuResult {
    copy_checked(dst, src, n, None, None, None)
}
pub fn memcpy_async(dst: CUdeviceptr, src: CUdeviceptr, n: usize, s: CUstream) -> CuResult {
    copy_checked(dst, src, n, None, None, Some(s))
}
pub fn memcpy_htod(dst: CUdeviceptr, src: *const c_void, n: usize) -> CuResult {
    copy_checked(dst, src as u64, n, Some(Side::Device), Some(Side::Host), None)
}
pub fn memcpy_htod_async(dst: CUdeviceptr, src: *const c_void, n: usize, s: CUstream) -> CuResult {
    copy_checked(dst, src as u64, n, Some(Side::Device), Some(Side::Host), Some(s))
}
pub fn memcpy_dtoh(dst: *mut c_void, src: CUdeviceptr, n: usize) -> CuResult {
    copy_checked(dst as u64, src, n, Some(Side::Host), Some(Side::Device), None)
}
pub fn memcpy_dtoh_async(dst: *mut c_void, src: CUdeviceptr, n: usize, s: CUstream) -> CuResult {
    copy_checked(dst as u64, src, n, Some(Side::Host), Some(Side::Device), Some(s))
}
pub fn memcpy_dtod(dst: CUdeviceptr, src: CUdeviceptr, n: usize) -> CuResult {
    copy_checked(dst, src, n, Some(Side::Device), Some(Side::Device), None)
}
pub fn memcpy_dtod_async(dst: CUdeviceptr, src: CUdeviceptr, n: usize, s: CUstream) -> CuResult {
    copy_checked(dst, src, n, Some(Side::Device), Some(Side::Device), Some(s))
}
pub fn memcpy_peer(dst: CUdeviceptr, dctx: CUcontext, src: CUdeviceptr, sctx: CUcontext, n: usize) -> CuResult {
    {
        let d = driver()?;
        d.ctx_from_handle(dctx)?;
        d.ctx_from_handle(sctx)?;
    }
    copy_checked(dst, src, n, Some(Side::Device), Some(Side::Device), None)
}
pub fn memcpy_peer_async(dst: CUdeviceptr, dctx: CUcontext, src: CUdeviceptr, sctx: CUcontext, n: usize, s: CUstream) -> CuResult {
    {
        let d = driver()?;
        d.ctx_from_handle(dctx)?;
        d.ctx_from_handle(sctx)?;
    }
    copy_checked(dst, src, n, Some(Side::Device), Some(Side::Device), Some(s))
}

fn side_for(mt: u32) -> CuResult<Option<Side>> {
    match mt {
        CU_MEMORYTYPE_HOST => Ok(Some(Side::Host)),
        CU_MEMORYTYPE_DEVICE => Ok(Some(Side::Device)),
        CU_MEMORYTYPE_UNIFIED => Ok(None),
        CU_MEMORYTYPE_ARRAY => Err(CUDA_ERROR_NOT_SUPPORTED),
        _ => Err(CUDA_ERROR_INVALID_VALUE),
    }
}

fn memcpy2d_inner(p: *const CUDA_MEMCPY2D, stream: Option<CUstream>) -> CuResult {
    super::nonnull(p)?;
    // SAFETY: non-null pointer to the caller's descriptor.
    let c = unsafe { p.read_unaligned() };
    let d = driver()?;
    match stream {
        Some(s) => d.check_stream(s)?,
        None => d.current()?,
    };
    let es = side_for(c.src_memory_type)?;
    let ed = side_for(c.dst_memory_type)?;
    let src_base = if es == Some(Side::Host) { c.src_host as u64 } else { c.src_device };
    let dst_base = if ed == Some(Side::Host) { c.dst_host as u64 } else { c.dst_device };
    let src = src_base + c.src_x_in_bytes as u64 + c.src_y as u64 * c.src_pitch as u64;
    let dst = dst_base + c.dst_x_in_bytes as u64 + c.dst_y as u64 * c.dst_pitch as u64;
    let (sp, dp) = (if c.src_pitch == 0 { c.width_in_bytes } else { c.src_pitch }, if c.dst_pitch == 0 { c.width_in_bytes } else { c.dst_pitch });
    memory::copy_2d(&d, dst, dp as u64, src, sp as u64, c.width_in_bytes as u64, c.height as u64, ed, es)
}

pub fn memcpy_2d(p: *const CUDA_MEMCPY2D) -> CuResult {
    memcpy2d_inner(p, None)
}
pub fn memcpy_2d_async(p: *const CUDA_MEMCPY2D, s: CUstream) -> CuResult {
    memcpy2d_inner(p, Some(s))
}

// ---- memsets ------------------------------------------------------------------------

fn memset_checked(dst: u64, pitch: usize, value: u32, elem: u64, w: usize, h: usize, stream: Option<CUstream>) -> CuResult {
    let d = driver()?;
    match stream {
        Some(s) => d.check_stream(s)?,
        None => d.current()?,
    };
    memory::memset(&d, dst, pitch as u64, value, elem, w as u64, h as u64)
}

pub fn memset_d8(dst: CUdeviceptr, v: u8, n: usize) -> CuResult {
    memset_checked(dst, n, v as u32, 1, n, 1, None)
}
pub fn memset_d16(dst: CUdeviceptr, v: u16, n: usize) -> CuResult {
    memset_checked(dst, n * 2, v as u32, 2, n, 1, None)
}
pub fn memset_d32(dst: CUdeviceptr, v: u32, n: usize) -> CuResult {
    memset_checked(dst, n * 4, v, 4, n, 1, None)
}
pub fn memset_d8_async(dst: CUdeviceptr, v: u8, n: usize, s: CUstream) -> CuResult {
    memset_checked(dst, n, v as u32, 1, n, 1, Some(s))
}
pub fn memset_d16_async(dst: CUdeviceptr, v: u16, n: usize, s: CUstream) -> CuResult {
    memset_checked(dst, n * 2, v as u32, 2, n, 1, Some(s))
}
pub fn memset_d32_async(dst: CUdeviceptr, v: u32, n: usize, s: CUstream) -> CuResult {
    memset_checked(dst, n * 4, v, 4, n, 1, Some(s))
}
pub fn memset_d2d8(dst: CUdeviceptr, pitch: usize, v: u8, w: usize, h: usize) -> CuResult {
    memset_checked(dst, pitch, v as u32, 1, w, h, None)
}
pub fn memset_d2d16(dst: CUdeviceptr, pitch: usize, v: u16, w: usize, h: usize) -> CuResult {
    memset_checked(dst, pitch, v as u32, 2, w, h, None)
}
pub fn memset_d2d32(dst: CUdeviceptr, pitch: usize, v: u32, w: usize, h: usize) -> CuResult {
    memset_checked(dst, pitch, v, 4, w, h, None)
}
pub fn memset_d2d8_async(dst: CUdeviceptr, pitch: usize, v: u8, w: usize, h: usize, s: CUstream) -> CuResult {
    memset_checked(dst, pitch, v as u32, 1, w, h, Some(s))
}
pub fn memset_d2d16_async(dst: CUdeviceptr, pitch: usize, v: u16, w: usize, h: usize, s: CUstream) -> CuResult {
    memset_checked(dst, pitch, v as u32, 2, w, h, Some(s))
}
pub fn memset_d2d32_async(dst: CUdeviceptr, pitch: usize, v: u32, w: usize, h: usize, s: CUstream) -> CuResult {
    memset_checked(dst, pitch, v, 4, w, h, Some(s))
}

// ---- pointer attributes and hints ---------------------------------------------------

fn pointer_attribute(d: &crate::state::Driver, data: *mut c_void, attr: u32, ptr: CUdeviceptr) -> CuResult {
    super::nonnull(data)?;
    let a = d.find_alloc(ptr);
    // SAFETY: each attribute's value type is fixed by the API.
    unsafe {
        match attr {
            CU_POINTER_ATTRIBUTE_CONTEXT => {
                let a = a.ok_or(CUDA_ERROR_INVALID_VALUE)?;
                *(data as *mut CUcontext) = handle(Tag::Context, a.ctx);
            }
            CU_POINTER_ATTRIBUTE_MEMORY_TYPE => {
                let a = a.ok_or(CUDA_ERROR_INVALID_VALUE)?;
                *(data as *mut u32) = if a.kind.is_host() { CU_MEMORYTYPE_HOST } else { CU_MEMORYTYPE_DEVICE };
            }
            CU_POINTER_ATTRIBUTE_DEVICE_POINTER => {
                a.ok_or(CUDA_ERROR_INVALID_VALUE)?;
                *(data as *mut u64) = ptr;
            }
            CU_POINTER_ATTRIBUTE_HOST_POINTER => {
                let a = a.ok_or(CUDA_ERROR_INVALID_VALUE)?;
                if !a.kind.is_host() && a.kind != AllocKind::Managed {
                    return Err(CUDA_ERROR_INVALID_VALUE);
                }
                *(data as *mut *mut c_void) = ptr as *mut c_void;
            }
            CU_POINTER_ATTRIBUTE_IS_MANAGED => {
                *(data as *mut i32) = a.map(|a| a.kind == AllocKind::Managed).unwrap_or(false) as i32;
            }
            CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL => {
                let a = a.ok_or(CUDA_ERROR_INVALID_VALUE)?;
                *(data as *mut i32) = d.contexts.get(&a.ctx).map(|c| c.device).unwrap_or(0);
            }
            CU_POINTER_ATTRIBUTE_RANGE_START_ADDR => *(data as *mut u64) = a.ok_or(CUDA_ERROR_INVALID_VALUE)?.base,
            CU_POINTER_ATTRIBUTE_RANGE_SIZE => *(data as *mut usize) = a.ok_or(CUDA_ERROR_INVALID_VALUE)?.size as usize,
            CU_POINTER_ATTRIBUTE_MAPPED => *(data as *mut i32) = a.is_some() as i32,
            CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE => {
                let a = a.ok_or(CUDA_ERROR_INVALID_VALUE)?;
                *(data as *mut CUmemoryPool) = a.pool.map(|p| handle(Tag::Pool, p)).unwrap_or(std::ptr::null_mut());
            }
            _ => return Err(CUDA_ERROR_INVALID_VALUE),
        }
    }
    Ok(())
}

pub fn pointer_get_attribute(data: *mut c_void, attr: u32, ptr: CUdeviceptr) -> CuResult {
    let d = driver()?;
    pointer_attribute(&d, data, attr, ptr)
}

pub fn pointer_get_attributes(n: u32, attrs: *const u32, data: *mut *mut c_void, ptr: CUdeviceptr) -> CuResult {
    let d = driver()?;
    super::nonnull(attrs)?;
    super::nonnull(data)?;
    for i in 0..n as usize {
        // SAFETY: arrays of n entries per the API.
        let (a, p) = unsafe { (*attrs.add(i), *data.add(i)) };
        pointer_attribute(&d, p, a, ptr)?;
    }
    Ok(())
}

/// Prefetch/advise are hints; on one memory they only check the range.
pub fn mem_hint(dptr: CUdeviceptr, n: usize) -> CuResult {
    let d = driver()?;
    d.current()?;
    match d.check_range(dptr, n as u64) {
        Ok(a) if a.kind == AllocKind::Managed => Ok(()),
        _ => Err(CUDA_ERROR_INVALID_VALUE),
    }
}
