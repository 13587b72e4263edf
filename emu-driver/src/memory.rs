//! Device memory is host memory: every allocation is an anonymous mapping whose address
//! is the device pointer, so host-compiled kernels dereference it directly. Copies and
//! memsets are range-checked against the tracker before any byte moves.
//!
//! Every allocation sits between two inaccessible guard pages, its end (rounded up to
//! 256 bytes, the alignment cudaMalloc gives) against the upper one: a kernel that runs
//! past the end of a buffer, or before the page it starts in, faults, and the launch
//! ends with CUDA_ERROR_ILLEGAL_ADDRESS instead of silently corrupting a neighbour.
//! Overruns into the < 256 bytes of rounding and underruns within the first page are
//! not caught (a device would not fault on them either).
//!
//! Under EMU_CUDA_CHECKS=pointers device memory proper comes from `arena` instead (same
//! layout, out of host code's reach outside launches), and every copy and memset below
//! reaches it through the arena's host view.

use crate::counters;
use crate::cu::*;
use crate::state::{Alloc, AllocKind, CuResult, Driver};
use simtwin_abi::counters::Dir;

const PAGE: u64 = 4096;
/// The alignment of every allocation's base (and of its end, against the guard page).
pub const ALIGN: u64 = 256;

/// Maps `size` bytes (zero-filled) between guard pages and tracks them.
pub fn allocate(d: &mut Driver, ctx: u64, size: u64, kind: AllocKind, pool: Option<u64>) -> CuResult<u64> {
    if size == 0 {
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    let device_side = !kind.is_host();
    if device_side && d.used_bytes.saturating_add(size) > d.profile.total_mem {
        return Err(CUDA_ERROR_OUT_OF_MEMORY);
    }
    let span = size.checked_add(ALIGN - 1).ok_or(CUDA_ERROR_OUT_OF_MEMORY)? & !(ALIGN - 1);
    let usable = span.checked_add(PAGE - 1).ok_or(CUDA_ERROR_OUT_OF_MEMORY)? & !(PAGE - 1);
    let mapped = usable.checked_add(2 * PAGE).ok_or(CUDA_ERROR_OUT_OF_MEMORY)?;
    let base_off = PAGE + usable - span;
    let map_start = if crate::arena::enabled() && in_arena(kind) {
        // EMU_CUDA_CHECKS=pointers: out of host code's reach (see `arena`).
        crate::arena::map(mapped, usable, base_off, size, kind.name()).ok_or_else(|| {
            crate::log_error!(
                "EMU_CUDA_CHECKS=pointers: cannot place {size} bytes in the device arena (address space exhausted or memfd refused)"
            );
            CUDA_ERROR_OUT_OF_MEMORY
        })?
    } else {
        map_guarded(mapped, usable)?
    };
    let base = map_start + base_off;
    let id = d.new_id();
    d.insert_alloc(Alloc { base, size, map_start, mapped, kind, ctx, pool, id });
    crate::trace::allocated(base);
    if device_side {
        d.used_bytes += size;
    }
    counters::get().alloc(size);
    Ok(base)
}

/// Which allocations live in the device arena under EMU_CUDA_CHECKS=pointers: device
/// memory proper. Managed memory is host-accessible on a device too; pinned and
/// registered memory is host memory.
fn in_arena(kind: AllocKind) -> bool {
    matches!(kind, AllocKind::Device | AllocKind::Pitched | AllocKind::StreamOrdered)
}

/// Maps `mapped` bytes whose `usable` pages, one page in, are read-write and the rest
/// (the guard pages) inaccessible; returns the mapping's start.
fn map_guarded(mapped: u64, usable: u64) -> CuResult<u64> {
    // SAFETY: an anonymous private mapping, inaccessible at first; no existing memory is
    // touched.
    let p = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            mapped as usize,
            libc::PROT_NONE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
            -1,
            0,
        )
    };
    if p == libc::MAP_FAILED {
        return Err(CUDA_ERROR_OUT_OF_MEMORY);
    }
    let map_start = p as u64;
    // SAFETY: the pages between the two guards, inside the mapping just made.
    let ok = unsafe { libc::mprotect((map_start + PAGE) as *mut libc::c_void, usable as usize, libc::PROT_READ | libc::PROT_WRITE) };
    if ok != 0 {
        // SAFETY: the mapping just made, with its length.
        unsafe { libc::munmap(p, mapped as usize) };
        return Err(CUDA_ERROR_OUT_OF_MEMORY);
    }
    Ok(map_start)
}

/// Registers memory the driver does not own (module globals, registered host memory).
pub fn track_foreign(d: &mut Driver, ctx: u64, base: u64, size: u64, kind: AllocKind) {
    let id = d.new_id();
    d.insert_alloc(Alloc { base, size, map_start: 0, mapped: 0, kind, ctx, pool: None, id });
    if kind != AllocKind::ModuleGlobal {
        crate::trace::allocated(base);
    }
}

/// Frees a tracked allocation by its base address.
pub fn release(d: &mut Driver, base: u64) -> CuResult {
    let a = d.remove_alloc(base).ok_or(CUDA_ERROR_INVALID_VALUE)?;
    crate::trace::released(base);
    if a.mapped > 0 && crate::arena::contains(a.map_start) {
        crate::arena::unmap(a.map_start);
    } else if a.mapped > 0 {
        // SAFETY: the mapping was created by `allocate` with exactly this start and length.
        unsafe { libc::munmap(a.map_start as *mut libc::c_void, a.mapped as usize) };
    }
    if !a.kind.is_host() && a.kind != AllocKind::ModuleGlobal {
        d.used_bytes = d.used_bytes.saturating_sub(a.size);
    }
    if let Some(pool) = a.pool.and_then(|p| d.pools.get_mut(&p)) {
        pool.used = pool.used.saturating_sub(a.size);
    }
    counters::get().free();
    Ok(())
}

/// cuMemFree-style release: `ptr` must be the base of a device-side allocation of the
/// driver's own (not a module global, not pinned host memory).
pub fn free_device(d: &mut Driver, ptr: u64) -> CuResult {
    match d.allocs.get(&ptr) {
        Some(a) if matches!(a.kind, AllocKind::Device | AllocKind::Pitched | AllocKind::Managed | AllocKind::StreamOrdered) => {
            release(d, ptr)
        }
        _ => Err(CUDA_ERROR_INVALID_VALUE),
    }
}

/// Which side a pointer is on: tracked device-side memory, tracked host memory, or
/// untracked (pageable) host memory.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Side {
    Device,
    Host,
}

pub fn side_of(d: &Driver, ptr: u64) -> Side {
    match d.find_alloc(ptr) {
        Some(a) if !a.kind.is_host() => Side::Device,
        _ => Side::Host,
    }
}

fn direction(src: Side, dst: Side) -> Dir {
    match (src, dst) {
        (Side::Host, Side::Device) => Dir::HtoD,
        (Side::Device, Side::Host) => Dir::DtoH,
        (Side::Device, Side::Device) => Dir::DtoD,
        (Side::Host, Side::Host) => Dir::HtoH,
    }
}

/// Checks one side of a copy. Device-side pointers must lie inside one allocation;
/// host pointers must be non-null (pageable memory cannot be checked further, but
/// tracked pinned memory is range-checked too).
fn check_side(d: &Driver, ptr: u64, len: u64, expect: Option<Side>) -> CuResult<Side> {
    if ptr == 0 {
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    let side = side_of(d, ptr);
    if let Some(e) = expect {
        if e == Side::Device && side != Side::Device {
            // A pinned host pointer is addressable by the device (UVA), like device memory.
            match d.find_alloc(ptr) {
                Some(a) if a.kind.is_host() => {}
                _ => return Err(CUDA_ERROR_INVALID_VALUE),
            }
        }
    }
    if d.find_alloc(ptr).is_some() {
        d.check_range(ptr, len)?;
    } else if crate::arena::contains(ptr) {
        // A device address no live allocation holds (freed): refused, never touched.
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    Ok(side)
}

/// Checks a copy without doing it; returns its direction. `expect_src` / `expect_dst` say
/// what the entry point's name promises (HtoD: dst on the device, ...); None for
/// cuMemcpy's unified addressing.
pub fn check_copy(d: &Driver, dst: u64, src: u64, len: u64, expect_dst: Option<Side>, expect_src: Option<Side>) -> CuResult<Dir> {
    if len == 0 {
        // A copy of nothing succeeds wherever it points (at an allocation's end, outside
        // every allocation, at NULL: measured on an H200, `zerolen_*`), in every mode.
        return Ok(match (expect_src, expect_dst) {
            (Some(s), Some(t)) => direction(s, t),
            _ => Dir::DtoD,
        });
    }
    let ds = check_side(d, dst, len.max(1), expect_dst)?;
    d.check_writable(dst, len)?;
    let ss = check_side(d, src, len.max(1), expect_src)?;
    Ok(match (expect_src, expect_dst) {
        (Some(s), Some(t)) => direction(s, t),
        _ => direction(ss, ds),
    })
}

/// Whether a host address is pageable (not pinned or registered with the driver): an
/// async copy from such memory reads it at once, one to it completes before returning.
pub fn is_pageable(d: &Driver, ptr: u64) -> bool {
    d.find_alloc(ptr).is_none()
}

/// Reads `len` bytes of the caller's pageable host memory now (an async HtoD copy from
/// pageable memory is staged when it is called, as a device's driver does).
pub fn snapshot(src: u64, len: u64) -> Vec<u8> {
    if len == 0 {
        return Vec::new(); // `src` may be null
    }
    marked(Touching { what: "staging of an async copy", dst: 0, src, span: len }, || {
        // SAFETY: the caller's host memory, readable for `len` bytes per the API contract;
        // the copy was checked before (a fault there is reported, see `Touching`).
        unsafe { std::slice::from_raw_parts(src as *const u8, len as usize) }.to_vec()
    })
}

/// Writes staged bytes to device memory (the deferred half of a pageable HtoD copy).
pub fn write_snapshot(d: &Driver, dst: u64, bytes: &[u8]) -> CuResult {
    if bytes.is_empty() {
        return Ok(());
    }
    d.check_range(dst, bytes.len() as u64).map_err(|_| CUDA_ERROR_ILLEGAL_ADDRESS)?;
    d.check_writable(dst, bytes.len() as u64).map_err(|_| CUDA_ERROR_ILLEGAL_ADDRESS)?;
    let dst = crate::arena::host_view(dst, bytes.len() as u64);
    // SAFETY: the destination range was checked against the tracker just now (and is
    // reached through the arena's host view under EMU_CUDA_CHECKS=pointers).
    unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), dst as *mut u8, bytes.len()) };
    counters::get().copy(Dir::HtoD, bytes.len() as u64);
    crate::trace::htod();
    Ok(())
}

/// A copy or memset of the driver's that touches memory it did not check (the caller's
/// pageable host memory), as the SIGSEGV handler (`signals`) asks about it: an address
/// the process cannot read or write there kills it, as the real driver's copies do
/// (measured on an H200: `hostmem_*`), but with a report naming the copy.
#[derive(Clone, Copy, Default, Debug)]
pub struct Touching {
    /// What the driver was doing ("copy", "2D copy", "staging of an async copy").
    pub what: &'static str,
    pub dst: u64,
    pub src: u64,
    /// Bytes from `dst` and from `src` the operation covers.
    pub span: u64,
}

thread_local! {
    /// The copy this thread is doing (const-initialised, no destructor: a signal handler
    /// may read it).
    static TOUCHING: std::cell::Cell<Touching> = const { std::cell::Cell::new(Touching { what: "", dst: 0, src: 0, span: 0 }) };
}

/// The copy the calling thread is doing, if any (for the SIGSEGV handler).
pub fn touching() -> Option<Touching> {
    TOUCHING.try_with(|t| t.get()).ok().filter(|t| t.span != 0)
}

/// Runs `op` marked as the copy `t` (for the report of a fault in it).
fn marked<R>(t: Touching, op: impl FnOnce() -> R) -> R {
    TOUCHING.with(|c| c.set(t));
    let r = op();
    TOUCHING.with(|c| c.set(Touching::default()));
    r
}

/// A checked copy (see `check_copy`).
pub fn copy(d: &Driver, dst: u64, src: u64, len: u64, expect_dst: Option<Side>, expect_src: Option<Side>) -> CuResult {
    if len == 0 {
        return Ok(());
    }
    let dir = check_copy(d, dst, src, len, expect_dst, expect_src)?;
    let src_device = src;
    let (dst, src) = (crate::arena::host_view(dst, len), crate::arena::host_view(src, len));
    // SAFETY: both ranges were checked against the tracker (device side; reached through
    // the arena's host view under EMU_CUDA_CHECKS=pointers) or are the caller's host
    // memory, which the API contract makes the caller responsible for (a fault there is
    // reported, see `Touching`).
    marked(Touching { what: "copy", dst, src, span: len }, || unsafe { std::ptr::copy(src as *const u8, dst as *mut u8, len as usize) });
    counters::get().copy(dir, len);
    crate::trace::emulated::copied(d, dir, src_device, dst, None, len);
    Ok(())
}

/// Checks a 2D copy (rows of `width` bytes, `height` rows, given pitches) without doing
/// it; returns its direction.
#[allow(clippy::too_many_arguments)]
pub fn check_copy_2d(
    d: &Driver,
    dst: u64,
    dpitch: u64,
    src: u64,
    spitch: u64,
    width: u64,
    height: u64,
    expect_dst: Option<Side>,
    expect_src: Option<Side>,
) -> CuResult<Dir> {
    if width == 0 || height == 0 {
        // Nothing to copy: success wherever it points, as for 1D copies.
        return Ok(match (expect_src, expect_dst) {
            (Some(s), Some(t)) => direction(s, t),
            _ => Dir::DtoD,
        });
    }
    if (height > 1 && (dpitch < width || spitch < width)) || dst == 0 || src == 0 {
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    let span = |pitch: u64| pitch.checked_mul(height.max(1) - 1).and_then(|v| v.checked_add(width.max(1))).ok_or(CUDA_ERROR_INVALID_VALUE);
    let ds = check_side(d, dst, span(dpitch)?, expect_dst)?;
    d.check_writable(dst, span(dpitch)?)?;
    let ss = check_side(d, src, span(spitch)?, expect_src)?;
    Ok(match (expect_src, expect_dst) {
        (Some(s), Some(t)) => direction(s, t),
        _ => direction(ss, ds),
    })
}

/// A checked 2D copy (see `check_copy_2d`).
#[allow(clippy::too_many_arguments)]
pub fn copy_2d(
    d: &Driver,
    dst: u64,
    dpitch: u64,
    src: u64,
    spitch: u64,
    width: u64,
    height: u64,
    expect_dst: Option<Side>,
    expect_src: Option<Side>,
) -> CuResult {
    if width == 0 || height == 0 {
        return Ok(());
    }
    let dir = check_copy_2d(d, dst, dpitch, src, spitch, width, height, expect_dst, expect_src)?;
    let src_device = src;
    // Each span lies in one allocation (or is host memory): translated as a whole.
    let span = |pitch: u64| pitch * (height - 1) + width;
    let (dst, src) = (crate::arena::host_view(dst, span(dpitch)), crate::arena::host_view(src, span(spitch)));
    marked(Touching { what: "2D copy", dst, src, span: span(dpitch).max(span(spitch)) }, || {
        for row in 0..height {
            // SAFETY: the whole spans were checked above (host ones are the caller's; a
            // fault there is reported, see `Touching`).
            unsafe {
                std::ptr::copy((src + row * spitch) as *const u8, (dst + row * dpitch) as *mut u8, width as usize);
            }
        }
    });
    counters::get().copy(dir, width * height);
    crate::trace::emulated::copied(d, dir, src_device, dst, Some((dpitch, width, height)), width * height);
    Ok(())
}

/// Checks a memset of `width` x `height` elements of `elem` bytes (1, 2 or 4), rows
/// `pitch` bytes apart, without doing it.
pub fn check_memset(d: &Driver, dst: u64, pitch: u64, elem: u64, width: u64, height: u64) -> CuResult {
    memset_span(d, dst, pitch, elem, width, height).map(|_| ())
}

/// The checks of a memset; what it covers: (bytes from the first row's start to the last
/// row's end, bytes a row), or None when it writes nothing.
fn memset_span(d: &Driver, dst: u64, pitch: u64, elem: u64, width: u64, height: u64) -> CuResult<Option<(u64, u64)>> {
    if !dst.is_multiple_of(elem) || (height > 1 && !pitch.is_multiple_of(elem)) {
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    let row_bytes = width.checked_mul(elem).ok_or(CUDA_ERROR_INVALID_VALUE)?;
    if row_bytes == 0 || height == 0 {
        return Ok(None);
    }
    if height > 1 && pitch < row_bytes {
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    let span = pitch.checked_mul(height - 1).and_then(|v| v.checked_add(row_bytes)).ok_or(CUDA_ERROR_INVALID_VALUE)?;
    d.check_range(dst, span)?;
    d.check_writable(dst, span)?;
    Ok(Some((span, row_bytes)))
}

/// A checked memset of `count` elements of `elem` bytes (1, 2 or 4) in rows.
pub fn memset(d: &Driver, dst: u64, pitch: u64, value: u32, elem: u64, width: u64, height: u64) -> CuResult {
    let Some((span, row_bytes)) = memset_span(d, dst, pitch, elem, width, height)? else {
        return Ok(());
    };
    let dst = crate::arena::host_view(dst, span);
    for row in 0..height {
        let p = dst + row * pitch;
        // SAFETY: the span was range-checked; alignment was checked above.
        unsafe {
            match elem {
                1 => std::ptr::write_bytes(p as *mut u8, value as u8, width as usize),
                2 => std::slice::from_raw_parts_mut(p as *mut u16, width as usize).fill(value as u16),
                _ => std::slice::from_raw_parts_mut(p as *mut u32, width as usize).fill(value),
            }
        }
    }
    counters::get().memset(row_bytes * height);
    Ok(())
}
