//! Streams and events. A cudaStream_t is the driver's CUstream and a cudaEvent_t its
//! CUevent (as in NVIDIA's runtime, so handles pass between the two APIs); flags and
//! priorities have the same numbers in both headers.
//!
//! The default stream: stream 0 means the legacy default stream for the plain entry points
//! and the calling thread's per-thread stream for the `_ptsz`/`_ptds` ones
//! (`--default-stream per-thread`); `cudaStreamLegacy` (1) and `cudaStreamPerThread` (2) are
//! the driver's CU_STREAM_LEGACY and CU_STREAM_PER_THREAD and pass through.

use std::ffi::c_void;

use crate::driver::{self as d, Handle, HostFn, StreamCallback};
use crate::error::{self, check, Res};
use crate::state;

/// The driver stream for the stream a program passed (`per_thread`: called through a
/// `_ptsz`/`_ptds` entry point).
pub fn handle(s: usize, per_thread: bool) -> Handle {
    if s == 0 && per_thread {
        d::STREAM_PER_THREAD as Handle
    } else {
        s as Handle
    }
}

/// Streams that name no context need the current one (the default streams).
fn needs_ctx(s: Handle) -> Res<()> {
    let v = s as usize;
    if v == 0 || v == d::STREAM_LEGACY || v == d::STREAM_PER_THREAD {
        state::ctx()?;
    } else {
        state::init()?;
    }
    Ok(())
}

pub fn create(flags: u32, priority: Option<i32>) -> Res<usize> {
    state::ctx()?;
    if flags > 1 {
        return Err(error::INVALID_VALUE);
    }
    let mut s = std::ptr::null_mut();
    check(match priority {
        None => d::cuStreamCreate(&mut s, flags),
        Some(p) => d::cuStreamCreateWithPriority(&mut s, flags, p),
    })?;
    Ok(s as usize)
}

pub fn destroy(s: Handle) -> Res<()> {
    state::init()?;
    if s.is_null() || s as usize == d::STREAM_LEGACY || s as usize == d::STREAM_PER_THREAD {
        return Err(error::INVALID_RESOURCE_HANDLE);
    }
    check(d::cuStreamDestroy(s))
}

pub fn synchronize(s: Handle) -> Res<()> {
    needs_ctx(s)?;
    check(d::cuStreamSynchronize(s))
}

/// cudaStreamQuery: cudaErrorNotReady while work is pending.
pub fn query(s: Handle) -> Res<()> {
    needs_ctx(s)?;
    check(d::cuStreamQuery(s))
}

pub fn wait_event(s: Handle, e: Handle, flags: u32) -> Res<()> {
    needs_ctx(s)?;
    check(d::cuStreamWaitEvent(s, e, flags))
}

/// cudaStreamAddCallback: the callback is handed to the driver as it is; its status
/// argument is a CUresult, whose numbers are the cudaError_t's (`error`'s table).
pub fn add_callback(s: Handle, cb: Option<StreamCallback>, user: *mut c_void, flags: u32) -> Res<()> {
    needs_ctx(s)?;
    let cb = cb.ok_or(error::INVALID_VALUE)?;
    if flags != 0 {
        return Err(error::INVALID_VALUE);
    }
    check(d::cuStreamAddCallback(s, cb, user, 0))
}

pub fn launch_host_func(s: Handle, f: Option<HostFn>, user: *mut c_void) -> Res<()> {
    needs_ctx(s)?;
    let f = f.ok_or(error::INVALID_VALUE)?;
    check(d::cuLaunchHostFunc(s, f, user))
}

pub fn flags(s: Handle) -> Res<u32> {
    needs_ctx(s)?;
    let mut f = 0;
    check(d::cuStreamGetFlags(s, &mut f))?;
    Ok(f)
}

pub fn priority(s: Handle) -> Res<i32> {
    needs_ctx(s)?;
    let mut p = 0;
    check(d::cuStreamGetPriority(s, &mut p))?;
    Ok(p)
}

pub fn priority_range() -> Res<(i32, i32)> {
    state::ctx()?;
    let (mut least, mut greatest) = (0, 0);
    check(d::cuCtxGetStreamPriorityRange(&mut least, &mut greatest))?;
    Ok((least, greatest))
}

/// cudaEventCreateWithFlags: cudaEventDefault 0, BlockingSync 1, DisableTiming 2,
/// Interprocess 4 (with DisableTiming), as CU_EVENT_*.
pub fn event_create(flags: u32) -> Res<usize> {
    state::ctx()?;
    if flags & !7 != 0 {
        return Err(error::INVALID_VALUE);
    }
    let mut e = std::ptr::null_mut();
    check(d::cuEventCreate(&mut e, flags))?;
    Ok(e as usize)
}

pub fn event_record(e: Handle, s: Handle, flags: Option<u32>) -> Res<()> {
    needs_ctx(s)?;
    if e.is_null() {
        return Err(error::INVALID_RESOURCE_HANDLE);
    }
    check(match flags {
        None => d::cuEventRecord(e, s),
        Some(f) => d::cuEventRecordWithFlags(e, s, f),
    })
}

fn event_handle(e: Handle) -> Res<Handle> {
    state::init()?;
    if e.is_null() {
        return Err(error::INVALID_RESOURCE_HANDLE);
    }
    Ok(e)
}

pub fn event_synchronize(e: Handle) -> Res<()> {
    check(d::cuEventSynchronize(event_handle(e)?))
}

pub fn event_query(e: Handle) -> Res<()> {
    check(d::cuEventQuery(event_handle(e)?))
}

pub fn event_elapsed(start: Handle, end: Handle) -> Res<f32> {
    let (a, b) = (event_handle(start)?, event_handle(end)?);
    let mut ms = 0f32;
    check(d::cuEventElapsedTime(&mut ms, a, b))?;
    Ok(ms)
}

pub fn event_destroy(e: Handle) -> Res<()> {
    check(d::cuEventDestroy(event_handle(e)?))
}
