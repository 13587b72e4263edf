//! Allocations (device, pitched, pinned host, managed, stream-ordered, pools), copies
//! and memsets, pointer attributes. Everything is range-checked by the tracker.

use crate::api::graph;
use crate::boundary::{CuResult, HostPtr, Opaque, Out, OutAny};
use crate::cu::*;
use crate::memory::{self, Side};
use crate::queue::{self, Work};
use crate::state::{driver, handle, handle_id, AllocKind, Pool, Tag};
use std::ffi::c_void;

pub fn mem_alloc(dptr: Out<CUdeviceptr>, size: usize) -> CuResult {
    let mut d = driver()?;
    let ctx = d.current()?;
    dptr.required()?;
    let p = memory::allocate(&mut d, ctx, size as u64, AllocKind::Device, None)?;
    dptr.set(p)
}

pub fn mem_alloc_pitch(dptr: Out<CUdeviceptr>, pitch: Out<usize>, width: usize, height: usize, elem: u32) -> CuResult {
    let mut d = driver()?;
    let ctx = d.current()?;
    dptr.required()?;
    pitch.required()?;
    if !matches!(elem, 4 | 8 | 16) || width == 0 || height == 0 {
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    let align = d.profile.attr(14).unwrap_or(512).max(1) as usize;
    let p = width.div_ceil(align) * align;
    let total = p.checked_mul(height).ok_or(CUDA_ERROR_OUT_OF_MEMORY)?;
    let base = memory::allocate(&mut d, ctx, total as u64, AllocKind::Pitched, None)?;
    pitch.set(p)?;
    dptr.set(base)
}

/// The allocation names its context: no context needs to be current (measured on an
/// H200: cuMemFree succeeds with none).
pub fn mem_free(dptr: CUdeviceptr) -> CuResult {
    let ctx = {
        let d = driver()?;
        if dptr == 0 {
            d.current()?;
            return Ok(());
        }
        d.alloc_ctx(dptr)?
    };
    // cuMemFree waits for work that may still use the memory.
    queue::force_context(ctx, "cuMemFree")?;
    let mut d = driver()?;
    memory::free_device(&mut d, dptr)
}

pub fn mem_get_info(free: Out<usize>, total: Out<usize>) -> CuResult {
    let d = driver()?;
    d.current()?;
    let t = d.profile.total_mem;
    free.set(t.saturating_sub(d.used_bytes) as usize)?;
    total.set(t as usize)
}

pub fn mem_get_address_range(base: Out<CUdeviceptr>, size: Out<usize>, dptr: CUdeviceptr) -> CuResult {
    let d = driver()?;
    d.current()?;
    let a = d.find_alloc(dptr).ok_or(CUDA_ERROR_NOT_FOUND)?;
    base.set_if_asked(a.base)?;
    size.set_if_asked(a.size as usize)
}

pub fn mem_alloc_host(pp: Out<*mut c_void>, size: usize) -> CuResult {
    mem_host_alloc(pp, size, 0)
}

pub fn mem_host_alloc(pp: Out<*mut c_void>, size: usize, flags: u32) -> CuResult {
    let mut d = driver()?;
    let ctx = d.current()?;
    pp.required()?;
    if flags & !(CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP | CU_MEMHOSTALLOC_WRITECOMBINED) != 0 {
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    let p = memory::allocate(&mut d, ctx, size as u64, AllocKind::PinnedHost, None)?;
    pp.set(p as *mut c_void)
}

/// Like cuMemFree, the allocation names its context (succeeds with none current).
pub fn mem_free_host(p: HostPtr) -> CuResult {
    let d = driver()?;
    match d.allocs.get(&p.0) {
        Some(a) if a.kind == AllocKind::PinnedHost => {
            let ctx = d.alloc_ctx(p.0)?;
            drop(d);
            queue::force_context(ctx, "cuMemFreeHost")?;
            let mut d = driver()?;
            memory::release(&mut d, p.0)
        }
        _ => {
            d.current()?;
            Err(CUDA_ERROR_INVALID_VALUE)
        }
    }
}

pub fn mem_host_get_device_pointer(dptr: Out<CUdeviceptr>, p: HostPtr, flags: u32) -> CuResult {
    let d = driver()?;
    d.current()?;
    if flags != 0 {
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    match d.find_alloc(p.0) {
        Some(a) if a.kind.is_host() => dptr.set(p.0),
        _ => Err(CUDA_ERROR_INVALID_VALUE),
    }
}

pub fn mem_host_get_flags(flags: Out<u32>, p: HostPtr) -> CuResult {
    let d = driver()?;
    d.current()?;
    match d.find_alloc(p.0) {
        Some(a) if a.kind.is_host() => flags.set(CU_MEMHOSTALLOC_DEVICEMAP),
        _ => Err(CUDA_ERROR_INVALID_VALUE),
    }
}

pub fn mem_host_register(p: HostPtr, size: usize, _flags: u32) -> CuResult {
    let mut d = driver()?;
    let ctx = d.current()?;
    if p.0 == 0 || size == 0 {
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    let (b, e) = (p.0, p.0 + size as u64);
    if d.allocs.values().any(|a| a.base < e && b < a.base + a.size) {
        return Err(CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED);
    }
    memory::track_foreign(&mut d, ctx, b, size as u64, AllocKind::Registered);
    Ok(())
}

/// The registration names its context (succeeds with none current, as on an H200).
pub fn mem_host_unregister(p: HostPtr) -> CuResult {
    let mut d = driver()?;
    d.alloc_ctx(p.0)?;
    match d.allocs.get(&p.0) {
        Some(a) if a.kind == AllocKind::Registered => {
            d.remove_alloc(p.0);
            Ok(())
        }
        _ => Err(CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED),
    }
}

pub fn mem_alloc_managed(dptr: Out<CUdeviceptr>, size: usize, flags: u32) -> CuResult {
    let mut d = driver()?;
    let ctx = d.current()?;
    dptr.required()?;
    if flags != 1 && flags != 2 {
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    let p = memory::allocate(&mut d, ctx, size as u64, AllocKind::Managed, None)?;
    dptr.set(p)
}

fn pool_id(pool: CUmemoryPool) -> CuResult<u64> {
    handle_id(Tag::Pool, pool).ok_or(CUDA_ERROR_INVALID_VALUE)
}

fn alloc_from_pool(dptr: Out<CUdeviceptr>, size: usize, pool: Option<u64>, stream: CUstream) -> CuResult {
    let mut d = driver()?;
    let ctx = d.stream_context(stream)?;
    dptr.required()?;
    if graph::active() {
        let key = queue::key_of(ctx, stream);
        if graph::involved(key) {
            drop(d);
            return graph::refuse(key, "memory allocation");
        }
    }
    let dev = d.contexts[&ctx].device as usize;
    let pool = pool.unwrap_or(d.device_pool[dev]);
    if !d.pools.contains_key(&pool) {
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    let p = memory::allocate(&mut d, ctx, size as u64, AllocKind::StreamOrdered, Some(pool))?;
    let pl = d.pools.get_mut(&pool).unwrap();
    pl.used += size as u64;
    pl.used_high = pl.used_high.max(pl.used);
    dptr.set(p)
}

/// Stream-ordered allocation: streams run their work at once, so the allocation is
/// usable in stream order by construction.
pub fn mem_alloc_async(dptr: Out<CUdeviceptr>, size: usize, stream: CUstream) -> CuResult {
    alloc_from_pool(dptr, size, None, stream)
}

pub fn mem_alloc_from_pool_async(dptr: Out<CUdeviceptr>, size: usize, pool: CUmemoryPool, stream: CUstream) -> CuResult {
    alloc_from_pool(dptr, size, Some(pool_id(pool)?), stream)
}

pub fn mem_free_async(dptr: CUdeviceptr, stream: CUstream) -> CuResult {
    let mut d = driver()?;
    let key = queue::key(&d, stream)?;
    if graph::involved(key) {
        drop(d);
        return graph::refuse(key, "memory free");
    }
    if !queue::deferred() {
        return memory::free_device(&mut d, dptr);
    }
    match d.allocs.get(&dptr) {
        Some(a) if matches!(a.kind, AllocKind::Device | AllocKind::Pitched | AllocKind::Managed | AllocKind::StreamOrdered) => {}
        _ => return Err(CUDA_ERROR_INVALID_VALUE),
    }
    drop(d);
    queue::submit(key, Work::Free { ptr: dptr }, &queue::origin("cuMemFreeAsync"))
}

pub fn mem_pool_create(pool: Out<CUmemoryPool>, props: Opaque) -> CuResult {
    let mut d = driver()?;
    pool.required()?;
    if props.is_null() {
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    let id = d.new_id();
    d.pools.insert(id, Pool { release_threshold: 0, used: 0, used_high: 0, reuse_flags: [1, 1, 1], default: false });
    pool.set(handle(Tag::Pool, id))
}

pub fn mem_pool_destroy(pool: CUmemoryPool) -> CuResult {
    let mut d = driver()?;
    let id = pool_id(pool)?;
    match d.pools.get(&id) {
        Some(p) if !p.default => {
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

/// The value's type is fixed per attribute: int for the reuse flags, cuuint64_t else.
pub fn mem_pool_set_attribute(pool: CUmemoryPool, attr: i32, value: OutAny) -> CuResult {
    let mut d = driver()?;
    value.required()?;
    let p = d.pools.get_mut(&pool_id(pool)?).ok_or(CUDA_ERROR_INVALID_VALUE)?;
    match attr {
        1..=3 => p.reuse_flags[(attr - 1) as usize] = value.get::<i32>()?,
        CU_MEMPOOL_ATTR_RELEASE_THRESHOLD => p.release_threshold = value.get::<u64>()?,
        CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH | CU_MEMPOOL_ATTR_USED_MEM_HIGH => {
            if value.get::<u64>()? != 0 {
                return Err(CUDA_ERROR_INVALID_VALUE);
            }
            p.used_high = p.used;
        }
        _ => return Err(CUDA_ERROR_INVALID_VALUE),
    }
    Ok(())
}

pub fn mem_pool_get_attribute(pool: CUmemoryPool, attr: i32, value: OutAny) -> CuResult {
    let d = driver()?;
    value.required()?;
    let p = d.pools.get(&pool_id(pool)?).ok_or(CUDA_ERROR_INVALID_VALUE)?;
    match attr {
        1..=3 => value.set(p.reuse_flags[(attr - 1) as usize]),
        CU_MEMPOOL_ATTR_RELEASE_THRESHOLD => value.set(p.release_threshold),
        CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT | CU_MEMPOOL_ATTR_USED_MEM_CURRENT => value.set(p.used),
        CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH | CU_MEMPOOL_ATTR_USED_MEM_HIGH => value.set(p.used_high),
        _ => Err(CUDA_ERROR_INVALID_VALUE),
    }
}

// ---- copies -------------------------------------------------------------------------

/// The context a copy or memset acts in: the stream's, when one is named (no context
/// needs to be current: measured on an H200 for the async copies and memsets); the
/// current context for synchronous calls and the NULL stream.
fn context_for(d: &crate::state::Driver, stream: Option<CUstream>) -> CuResult<u64> {
    match stream {
        Some(s) => d.stream_context(s),
        None => d.current(),
    }
}

/// A copy, synchronous (stream None: the legacy default stream's order, complete when
/// the call returns) or on a stream. With EMU_CUDA_ASYNC=deferred an async copy is queued:
/// from pageable memory its source is read now, to pageable memory it completes before
/// the call returns (with what it depends on), as a device's driver does.
fn copy_checked(dst: u64, src: u64, n: usize, ed: Option<Side>, es: Option<Side>, stream: Option<CUstream>) -> CuResult {
    if graph::active() {
        // A stream captures somewhere: on a capturing stream the copy becomes a node.
        let d = driver()?;
        context_for(&d, stream)?;
        let key = queue::key(&d, stream.unwrap_or(std::ptr::null_mut()))?;
        memory::check_copy(&d, dst, src, n as u64, ed, es)?;
        drop(d);
        // A synchronous copy elsewhere is allowed in every capture mode (an H100 answers
        // 0 in global and relaxed mode: reports/reference/h200/coop-graphs/), except where
        // the legacy stream would wait for a capturing blocking stream (below).
        if let Some(r) = graph::capture(key, || Ok(graph::Op::Copy { dst, src, len: n as u64 })) {
            return r;
        }
    }
    copy_checked_inner(dst, src, n, ed, es, stream)
}

fn copy_checked_inner(dst: u64, src: u64, n: usize, ed: Option<Side>, es: Option<Side>, stream: Option<CUstream>) -> CuResult {
    let d = driver()?;
    context_for(&d, stream)?;
    if !queue::deferred() {
        return memory::copy(&d, dst, src, n as u64, ed, es);
    }
    memory::check_copy(&d, dst, src, n as u64, ed, es)?;
    let len = n as u64;
    let host_src = es != Some(Side::Device) && memory::side_of(&d, src) == Side::Host;
    let host_dst = ed != Some(Side::Device) && memory::side_of(&d, dst) == Side::Host;
    let (src_pageable, dst_pageable) = (host_src && memory::is_pageable(&d, src), host_dst && memory::is_pageable(&d, dst));
    let key = queue::key(&d, stream.unwrap_or(std::ptr::null_mut()))?;
    drop(d);
    let name = if stream.is_some() { "async copy" } else { "cuMemcpy" };
    let snapshot = src_pageable.then(|| memory::snapshot(src, len));
    queue::submit(key, Work::Copy { dst, src, len, snapshot }, &queue::origin(name))?;
    if stream.is_none() || dst_pageable {
        queue::force_stream(key, name)?;
    }
    Ok(())
}

pub fn memcpy(dst: CUdeviceptr, src: CUdeviceptr, n: usize) -> CuResult {
    copy_checked(dst, src, n, None, None, None)
}
pub fn memcpy_async(dst: CUdeviceptr, src: CUdeviceptr, n: usize, s: CUstream) -> CuResult {
    copy_checked(dst, src, n, None, None, Some(s))
}
pub fn memcpy_htod(dst: CUdeviceptr, src: HostPtr, n: usize) -> CuResult {
    copy_checked(dst, src.0, n, Some(Side::Device), Some(Side::Host), None)
}
pub fn memcpy_htod_async(dst: CUdeviceptr, src: HostPtr, n: usize, s: CUstream) -> CuResult {
    copy_checked(dst, src.0, n, Some(Side::Device), Some(Side::Host), Some(s))
}
pub fn memcpy_dtoh(dst: HostPtr, src: CUdeviceptr, n: usize) -> CuResult {
    copy_checked(dst.0, src, n, Some(Side::Host), Some(Side::Device), None)
}
pub fn memcpy_dtoh_async(dst: HostPtr, src: CUdeviceptr, n: usize, s: CUstream) -> CuResult {
    copy_checked(dst.0, src, n, Some(Side::Host), Some(Side::Device), Some(s))
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

/// A 2D copy's geometry: the addresses of its first bytes, its pitches (0: the row
/// width), its width and height, and the sides of its destination and source.
struct Geometry2D {
    dst: u64,
    dp: u64,
    src: u64,
    sp: u64,
    w: u64,
    h: u64,
    ed: Option<Side>,
    es: Option<Side>,
}

fn geometry_2d(c: &CUDA_MEMCPY2D) -> CuResult<Geometry2D> {
    let es = side_for(c.src_memory_type)?;
    let ed = side_for(c.dst_memory_type)?;
    let src_base = if es == Some(Side::Host) { c.src_host as u64 } else { c.src_device };
    let dst_base = if ed == Some(Side::Host) { c.dst_host as u64 } else { c.dst_device };
    Ok(Geometry2D {
        src: src_base + c.src_x_in_bytes as u64 + c.src_y as u64 * c.src_pitch as u64,
        dst: dst_base + c.dst_x_in_bytes as u64 + c.dst_y as u64 * c.dst_pitch as u64,
        sp: if c.src_pitch == 0 { c.width_in_bytes } else { c.src_pitch } as u64,
        dp: if c.dst_pitch == 0 { c.width_in_bytes } else { c.dst_pitch } as u64,
        w: c.width_in_bytes as u64,
        h: c.height as u64,
        ed,
        es,
    })
}

fn memcpy2d_inner(p: Option<CUDA_MEMCPY2D>, stream: Option<CUstream>) -> CuResult {
    let c = p.ok_or(CUDA_ERROR_INVALID_VALUE)?;
    if c.src_memory_type == CU_MEMORYTYPE_ARRAY || c.dst_memory_type == CU_MEMORYTYPE_ARRAY {
        return crate::api::texture::memcpy_2d_arrays(&c, stream);
    }
    let d = driver()?;
    context_for(&d, stream)?;
    if graph::active() {
        let key = queue::key(&d, stream.unwrap_or(std::ptr::null_mut()))?;
        if graph::involved(key) {
            // On a capturing stream the copy becomes a memcpy node (checked now).
            let Geometry2D { dst, dp, src, sp, w, h, ed, es } = geometry_2d(&c)?;
            memory::check_copy_2d(&d, dst, dp, src, sp, w, h, ed, es)?;
            drop(d);
            let op = graph::Op::Copy2D { dst, dpitch: dp, src, spitch: sp, width: w, height: h };
            return graph::capture(key, || Ok(op)).unwrap_or(Ok(()));
        }
    }
    if queue::deferred() {
        // 2D copies are staged like 1D ones: validated now, run in stream order, and
        // complete before returning when synchronous or into pageable memory.
        let key = queue::key(&d, stream.unwrap_or(std::ptr::null_mut()))?;
        let Geometry2D { dst, dp, src, sp, w, h, ed, es } = geometry_2d(&c)?;
        memory::check_copy_2d(&d, dst, dp, src, sp, w, h, ed, es)?;
        let pageable = |p: u64| memory::side_of(&d, p) == Side::Host && memory::is_pageable(&d, p);
        let force = stream.is_none() || pageable(dst) || pageable(src);
        drop(d);
        queue::submit(key, Work::Copy2D { dst, dpitch: dp, src, spitch: sp, width: w, height: h }, &queue::origin("2D copy"))?;
        if force {
            queue::force_stream(key, "2D copy")?;
        }
        return Ok(());
    }
    let Geometry2D { dst, dp, src, sp, w, h, ed, es } = geometry_2d(&c)?;
    memory::copy_2d(&d, dst, dp, src, sp, w, h, ed, es)
}

pub fn memcpy_2d(p: Option<CUDA_MEMCPY2D>) -> CuResult {
    memcpy2d_inner(p, None)
}
pub fn memcpy_2d_async(p: Option<CUDA_MEMCPY2D>, s: CUstream) -> CuResult {
    memcpy2d_inner(p, Some(s))
}

// ---- memsets ------------------------------------------------------------------------

/// A memset of `w` x `h` elements of `elem` bytes, rows `pitch` bytes apart.
pub struct Fill {
    pub dst: CUdeviceptr,
    pub pitch: usize,
    pub value: u32,
    pub elem: u64,
    pub w: usize,
    pub h: usize,
}

impl Fill {
    /// A 1D memset of `n` elements.
    pub fn line(dst: CUdeviceptr, value: u32, elem: u64, n: usize) -> Fill {
        Fill { dst, pitch: n * elem as usize, value, elem, w: n, h: 1 }
    }
    /// A 2D memset.
    pub fn rect(dst: CUdeviceptr, pitch: usize, value: u32, elem: u64, w: usize, h: usize) -> Fill {
        Fill { dst, pitch, value, elem, w, h }
    }
}

/// cuMemsetD8/16/32 and the 2D forms, synchronous (stream None: the legacy default
/// stream) or on a stream. Memsets of device memory are asynchronous with respect to the
/// host even in their synchronous form: with EMU_CUDA_ASYNC=deferred they are queued.
pub fn memset(f: Fill, stream: Option<CUstream>) -> CuResult {
    let d = driver()?;
    context_for(&d, stream)?;
    if graph::active() {
        let key = queue::key(&d, stream.unwrap_or(std::ptr::null_mut()))?;
        if graph::involved(key) {
            memory::check_memset(&d, f.dst, f.pitch as u64, f.elem, f.w as u64, f.h as u64)?;
            drop(d);
            let op = graph::Op::Memset { dst: f.dst, pitch: f.pitch as u64, value: f.value, elem: f.elem, w: f.w as u64, h: f.h as u64 };
            return graph::capture(key, || Ok(op)).unwrap_or(Ok(()));
        }
    }
    if !queue::deferred() {
        return memory::memset(&d, f.dst, f.pitch as u64, f.value, f.elem, f.w as u64, f.h as u64);
    }
    memory::check_memset(&d, f.dst, f.pitch as u64, f.elem, f.w as u64, f.h as u64)?;
    let key = queue::key(&d, stream.unwrap_or(std::ptr::null_mut()))?;
    drop(d);
    let work = Work::Memset { dst: f.dst, pitch: f.pitch as u64, value: f.value, elem: f.elem, w: f.w as u64, h: f.h as u64 };
    queue::submit(key, work, &queue::origin("memset"))
}

// ---- pointer attributes and hints ---------------------------------------------------

fn pointer_attribute(d: &crate::state::Driver, data: &OutAny, attr: u32, ptr: CUdeviceptr) -> CuResult {
    data.required()?;
    if let Some(info) = crate::api::vmm::pointer_info(d, ptr) {
        return vm_pointer_attribute(d, data, attr, ptr, info);
    }
    let a = d.find_alloc(ptr);
    let need = || a.ok_or(CUDA_ERROR_INVALID_VALUE);
    // The attributes of CUDA 11 and later are measured for cuMemAlloc memory (and the
    // virtual-memory API's, above); other kinds keep refusing them.
    let device_memory = || match need()? {
        a if matches!(a.kind, AllocKind::Device | AllocKind::Pitched) => Ok(a),
        _ => Err(CUDA_ERROR_INVALID_VALUE),
    };
    match attr {
        // Stream-ordered (pool) allocations belong to no context: the H200 answers null.
        CU_POINTER_ATTRIBUTE_CONTEXT => {
            let a = need()?;
            data.set(if a.kind == AllocKind::StreamOrdered { std::ptr::null_mut() } else { handle(Tag::Context, a.ctx) })
        }
        CU_POINTER_ATTRIBUTE_MEMORY_TYPE => data.set::<u32>(if need()?.kind.is_host() { CU_MEMORYTYPE_HOST } else { CU_MEMORYTYPE_DEVICE }),
        // The one attribute that needs a current context (measured on an H200).
        CU_POINTER_ATTRIBUTE_DEVICE_POINTER => {
            need()?;
            d.current()?;
            data.set::<u64>(ptr)
        }
        CU_POINTER_ATTRIBUTE_HOST_POINTER => {
            let a = need()?;
            if !a.kind.is_host() && a.kind != AllocKind::Managed {
                return Err(CUDA_ERROR_INVALID_VALUE);
            }
            data.set(ptr as *mut c_void)
        }
        CU_POINTER_ATTRIBUTE_SYNC_MEMOPS => data.set::<i32>(need().map(|_| 0)?),
        CU_POINTER_ATTRIBUTE_BUFFER_ID | CU_POINTER_ATTRIBUTE_MEMORY_BLOCK_ID => data.set::<u64>(need()?.id),
        CU_POINTER_ATTRIBUTE_IS_MANAGED => data.set::<i32>(a.map(|a| a.kind == AllocKind::Managed).unwrap_or(false) as i32),
        CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL => {
            let a = need()?;
            data.set::<i32>(d.contexts.get(&a.ctx).map(|c| c.device).unwrap_or(0))
        }
        CU_POINTER_ATTRIBUTE_RANGE_START_ADDR => data.set::<u64>(need()?.base),
        CU_POINTER_ATTRIBUTE_RANGE_SIZE => data.set::<usize>(need()?.size as usize),
        CU_POINTER_ATTRIBUTE_MAPPED => data.set::<i32>(a.is_some() as i32),
        CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE => {
            let a = need()?;
            data.set::<CUmemoryPool>(a.pool.map(|p| handle(Tag::Pool, p)).unwrap_or(std::ptr::null_mut()))
        }
        // cuMemAlloc memory can be shared through legacy IPC and GPUDirect RDMA, has no
        // exportable VM handle, and is readable and writable by the device.
        CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE | CU_POINTER_ATTRIBUTE_IS_GPU_DIRECT_RDMA_CAPABLE => {
            data.set::<i32>(device_memory().map(|_| 1)?)
        }
        CU_POINTER_ATTRIBUTE_ALLOWED_HANDLE_TYPES => data.set::<u64>(device_memory().map(|_| 0)?),
        CU_POINTER_ATTRIBUTE_ACCESS_FLAGS => data.set::<i32>(device_memory().map(|_| CU_MEM_ACCESS_FLAGS_PROT_READWRITE)?),
        // The driver maps device memory in chunks of the granularity (2 MiB on the H200,
        // which answers 2 MiB for a 12 KiB allocation); modelled as the allocation
        // rounded up to it, from the allocation's start.
        CU_POINTER_ATTRIBUTE_MAPPING_SIZE => {
            let a = device_memory()?;
            data.set::<usize>(a.size.next_multiple_of(d.profile.vmm_granularity.0.max(1)) as usize)
        }
        CU_POINTER_ATTRIBUTE_MAPPING_BASE_ADDR => data.set::<u64>(device_memory()?.base),
        _ => Err(CUDA_ERROR_INVALID_VALUE),
    }
}

/// Pointer attributes of the virtual-memory API's addresses, as the H200 answers them
/// (`vmm_pointer_attrs`): no context, the reservation as the range, the mapping as the
/// mapping; a device pointer only with access; nothing at all where nothing is mapped.
fn vm_pointer_attribute(
    d: &crate::state::Driver,
    data: &OutAny,
    attr: u32,
    ptr: CUdeviceptr,
    info: crate::api::vmm::PointerInfo,
) -> CuResult {
    use crate::api::vmm::PointerInfo;
    let PointerInfo::Mapped { start, size, access, id, reservation, props, physical } = info else {
        return Err(CUDA_ERROR_INVALID_VALUE);
    };
    let device = props.location == CU_MEM_LOCATION_TYPE_DEVICE;
    match attr {
        CU_POINTER_ATTRIBUTE_CONTEXT | CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE => data.set::<*mut c_void>(std::ptr::null_mut()),
        CU_POINTER_ATTRIBUTE_MEMORY_TYPE => data.set::<u32>(if device { CU_MEMORYTYPE_DEVICE } else { CU_MEMORYTYPE_HOST }),
        CU_POINTER_ATTRIBUTE_DEVICE_POINTER => {
            if access == CU_MEM_ACCESS_FLAGS_PROT_NONE {
                return Err(CUDA_ERROR_INVALID_VALUE);
            }
            d.current()?;
            data.set::<u64>(ptr)
        }
        CU_POINTER_ATTRIBUTE_SYNC_MEMOPS | CU_POINTER_ATTRIBUTE_IS_MANAGED | CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE => {
            data.set::<i32>(0)
        }
        CU_POINTER_ATTRIBUTE_BUFFER_ID => data.set::<u64>(id),
        CU_POINTER_ATTRIBUTE_MEMORY_BLOCK_ID => data.set::<u64>(physical),
        CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL => data.set::<i32>(props.device),
        CU_POINTER_ATTRIBUTE_RANGE_START_ADDR => data.set::<u64>(reservation.0),
        CU_POINTER_ATTRIBUTE_RANGE_SIZE => data.set::<usize>(reservation.1 as usize),
        CU_POINTER_ATTRIBUTE_MAPPED => data.set::<i32>(1),
        CU_POINTER_ATTRIBUTE_ALLOWED_HANDLE_TYPES => data.set::<u64>(props.handle_types as u64),
        CU_POINTER_ATTRIBUTE_IS_GPU_DIRECT_RDMA_CAPABLE => data.set::<i32>((props.rdma != 0) as i32),
        CU_POINTER_ATTRIBUTE_ACCESS_FLAGS => data.set::<i32>(access),
        CU_POINTER_ATTRIBUTE_MAPPING_SIZE => data.set::<usize>(size as usize),
        CU_POINTER_ATTRIBUTE_MAPPING_BASE_ADDR => data.set::<u64>(start),
        _ => Err(CUDA_ERROR_INVALID_VALUE),
    }
}

pub fn pointer_get_attribute(data: OutAny, attr: u32, ptr: CUdeviceptr) -> CuResult {
    let d = driver()?;
    pointer_attribute(&d, &data, attr, ptr)
}

pub fn pointer_get_attributes(attrs: Option<Vec<u32>>, data: Option<Vec<OutAny>>, ptr: CUdeviceptr) -> CuResult {
    let d = driver()?;
    let (attrs, data) = (attrs.ok_or(CUDA_ERROR_INVALID_VALUE)?, data.ok_or(CUDA_ERROR_INVALID_VALUE)?);
    for (a, p) in attrs.iter().zip(&data) {
        pointer_attribute(&d, p, *a, ptr)?;
    }
    Ok(())
}

/// Prefetch and advise are hints; on one memory they only check the range. A prefetch
/// acts in its stream's context; advice needs a current context (as on an H200).
pub fn mem_hint(dptr: CUdeviceptr, n: usize, stream: Option<CUstream>) -> CuResult {
    let d = driver()?;
    context_for(&d, stream)?;
    match d.check_range(dptr, n as u64) {
        Ok(a) if a.kind == AllocKind::Managed => Ok(()),
        _ => Err(CUDA_ERROR_INVALID_VALUE),
    }
}
