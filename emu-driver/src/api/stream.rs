//! Streams, events and host callbacks. Work is executed when it is enqueued, so every
//! stream is in order and the legacy default stream's synchronisation with blocking
//! streams holds by construction (deferred streams are later work). Callbacks run on a
//! driver thread, as on a device; driver calls made inside them answer
//! CUDA_ERROR_NOT_PERMITTED.

use crate::api::graph;
use crate::boundary::{CuResult, HostCall, Out};
use crate::cu::*;
use crate::queue::{self, Work};
use crate::state::{driver, handle, handle_id, Event, Stream, Tag};

pub fn stream_create(s: Out<CUstream>, flags: u32) -> CuResult {
    stream_create_with_priority(s, flags, 0)
}

pub fn stream_create_with_priority(s: Out<CUstream>, flags: u32, priority: i32) -> CuResult {
    let mut d = driver()?;
    let ctx = d.current()?;
    s.required()?;
    if flags & !CU_STREAM_NON_BLOCKING != 0 {
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    // Priorities outside [greatest, least] = [-5, 0] are clamped, as the driver does.
    let priority = priority.clamp(-5, 0);
    let id = d.new_id();
    d.streams.insert(id, Stream { ctx, flags, priority });
    if flags & CU_STREAM_NON_BLOCKING != 0 {
        queue::set_non_blocking(queue::StreamKey { ctx, stream: Some(id) });
    }
    s.set(handle(Tag::Stream, id))
}

fn stream_id(s: CUstream) -> CuResult<Option<u64>> {
    let v = s as usize;
    if v == 0 || v == CU_STREAM_LEGACY || v == CU_STREAM_PER_THREAD {
        return Ok(None);
    }
    handle_id(Tag::Stream, s).map(Some).ok_or(CUDA_ERROR_INVALID_HANDLE)
}

/// A named stream carries its context: no context needs to be current (measured on an
/// H200 for destroy, query, synchronize and wait-event).
pub fn stream_destroy(s: CUstream) -> CuResult {
    let key = {
        let d = driver()?;
        let id = stream_id(s)?.ok_or(CUDA_ERROR_INVALID_HANDLE)?;
        let ctx = d.stream_context_unchecked(s)?;
        d.streams.get(&id).ok_or(CUDA_ERROR_INVALID_HANDLE)?;
        queue::StreamKey { ctx, stream: Some(id) }
    };
    // Work queued on the stream still runs (destroy does not wait on a device either, but
    // the work completes).
    queue::force_stream(key, "cuStreamDestroy")?;
    driver()?.streams.remove(&key.stream.expect("named")).ok_or(CUDA_ERROR_INVALID_HANDLE)?;
    Ok(())
}

/// CUDA_ERROR_NOT_READY while work is queued (EMU_CUDA_ASYNC=deferred); the query also
/// runs that work, so that a program polling the stream sees it finish.
pub fn stream_query(s: CUstream) -> CuResult {
    let key = queue::key(&*driver()?, s)?;
    graph::sync_stream(key, "cuStreamQuery")?;
    if queue::stream_pending(key) {
        queue::force_stream(key, "cuStreamQuery")?;
        return Err(CUDA_ERROR_NOT_READY);
    }
    Ok(())
}

pub fn stream_synchronize(s: CUstream) -> CuResult {
    let key = queue::key(&*driver()?, s)?;
    graph::sync_stream(key, "cuStreamSynchronize")?;
    queue::force_stream(key, "cuStreamSynchronize")?;
    driver()?.stream_context(s)?;
    crate::counters::get().sync();
    crate::counters_file::checkpoint();
    Ok(())
}

pub fn stream_wait_event(s: CUstream, e: CUevent, flags: u32) -> CuResult {
    let (key, id, blocking) = {
        let d = driver()?;
        let key = queue::key(&d, s)?;
        let id = handle_id(Tag::Event, e).ok_or(CUDA_ERROR_INVALID_HANDLE)?;
        d.events.get(&id).ok_or(CUDA_ERROR_INVALID_HANDLE)?;
        if flags & !1 != 0 {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        let blocking = key.stream.and_then(|i| d.streams.get(&i)).is_some_and(|st| st.flags & CU_STREAM_NON_BLOCKING == 0);
        (key, id, blocking)
    };
    if let Some(r) = graph::capture_wait(key, id, blocking) {
        return r;
    }
    queue::wait_event(key, id, &queue::origin("cuStreamWaitEvent"));
    Ok(())
}

pub fn stream_get_priority(s: CUstream, p: Out<i32>) -> CuResult {
    let d = driver()?;
    let pr = match stream_id(s)? {
        None => {
            d.current()?;
            0
        }
        Some(id) => d.streams.get(&id).ok_or(CUDA_ERROR_INVALID_HANDLE)?.priority,
    };
    p.set(pr)
}

pub fn stream_get_flags(s: CUstream, f: Out<u32>) -> CuResult {
    let d = driver()?;
    let fl = match stream_id(s)? {
        None => {
            d.current()?;
            0
        }
        Some(id) => d.streams.get(&id).ok_or(CUDA_ERROR_INVALID_HANDLE)?.flags,
    };
    f.set(fl)
}

/// cuStreamGetDevice: the device of the stream's context.
pub fn stream_get_device(s: CUstream, dev: Out<CUdevice>) -> CuResult {
    let d = driver()?;
    let ctx = d.stream_context_unchecked(s)?;
    dev.set(d.contexts[&ctx].device)
}

pub fn stream_get_ctx(s: CUstream, c: Out<CUcontext>) -> CuResult {
    let d = driver()?;
    let ctx = d.stream_context_unchecked(s)?;
    c.set(handle(Tag::Context, ctx))
}

pub fn stream_get_id(s: CUstream, idp: Out<u64>) -> CuResult {
    let d = driver()?;
    let id = match stream_id(s)? {
        Some(i) => {
            d.streams.get(&i).ok_or(CUDA_ERROR_INVALID_HANDLE)?;
            i
        }
        None => {
            d.current()?;
            s as usize as u64
        }
    };
    idp.set(id)
}

pub fn stream_attach_mem_async(s: CUstream, dptr: CUdeviceptr, _len: usize, _flags: u32) -> CuResult {
    let d = driver()?;
    d.stream_context(s)?;
    d.find_alloc(dptr).ok_or(CUDA_ERROR_INVALID_VALUE)?;
    Ok(())
}

// ---- callbacks ----------------------------------------------------------------------

/// Host functions run on the driver's callback thread in stream order.
pub fn launch_host_func(s: CUstream, f: Option<HostCall>) -> CuResult {
    let key = queue::key(&*driver()?, s)?;
    let f = f.ok_or(CUDA_ERROR_INVALID_VALUE)?;
    if let Some(r) = graph::capture(key, || Ok(graph::Op::Host(f))) {
        return r;
    }
    queue::submit(key, Work::Host(f), &queue::origin("cuLaunchHostFunc"))
}

pub fn stream_add_callback(s: CUstream, cb: Option<HostCall>, flags: u32) -> CuResult {
    let key = queue::key(&*driver()?, s)?;
    if flags != 0 {
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    let cb = cb.ok_or(CUDA_ERROR_INVALID_VALUE)?;
    if let Some(r) = graph::capture(key, || Ok(graph::Op::Host(cb))) {
        return r;
    }
    queue::submit(key, Work::Host(cb), &queue::origin("cuStreamAddCallback"))
}

// ---- events -------------------------------------------------------------------------

pub fn event_create(e: Out<CUevent>, flags: u32) -> CuResult {
    let mut d = driver()?;
    let ctx = d.current()?;
    e.required()?;
    if flags & !(CU_EVENT_BLOCKING_SYNC | CU_EVENT_DISABLE_TIMING | CU_EVENT_INTERPROCESS) != 0 {
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    if flags & CU_EVENT_INTERPROCESS != 0 && flags & CU_EVENT_DISABLE_TIMING == 0 {
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    let id = d.new_id();
    d.events.insert(id, Event { ctx, flags, recorded: None });
    e.set(handle(Tag::Event, id))
}

fn event_id(e: CUevent) -> CuResult<u64> {
    handle_id(Tag::Event, e).ok_or(CUDA_ERROR_INVALID_HANDLE)
}

/// Events carry their context: destroy, record (on a named stream), query and
/// synchronize need none current (measured on an H200).
pub fn event_destroy(e: CUevent) -> CuResult {
    let mut d = driver()?;
    let id = event_id(e)?;
    let ctx = d.events.get(&id).ok_or(CUDA_ERROR_INVALID_HANDLE)?.ctx;
    d.context_unchecked(ctx)?;
    d.events.remove(&id);
    Ok(())
}

/// The event completes when the stream's work before it has run.
pub fn event_record(e: CUevent, s: CUstream) -> CuResult {
    let (key, id) = {
        let d = driver()?;
        let id = event_id(e)?;
        let ev_ctx = d.events.get(&id).ok_or(CUDA_ERROR_INVALID_HANDLE)?.ctx;
        let key = queue::key(&d, s)?;
        d.context(ev_ctx)?;
        if ev_ctx != key.ctx {
            return Err(CUDA_ERROR_INVALID_HANDLE);
        }
        (key, id)
    };
    if let Some(r) = graph::capture_record(key, id) {
        return r;
    }
    queue::submit(key, Work::Record { event: id }, &queue::origin("cuEventRecord"))
}

pub fn event_record_with_flags(e: CUevent, s: CUstream, flags: u32) -> CuResult {
    if flags & !1 != 0 {
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    event_record(e, s)
}

/// CUDA_ERROR_NOT_READY while the event's record is queued (EMU_CUDA_ASYNC=deferred); the
/// query runs the work it waits for, so a program polling the event sees it finish.
pub fn event_query(e: CUevent) -> CuResult {
    let id = event_id(e)?;
    graph::event_captured(id)?;
    {
        let d = driver()?;
        let ctx = d.events.get(&id).ok_or(CUDA_ERROR_INVALID_HANDLE)?.ctx;
        d.context(ctx)?;
    }
    if queue::event_pending(id) {
        queue::force_event(id, "cuEventQuery")?;
        return Err(CUDA_ERROR_NOT_READY);
    }
    Ok(())
}

pub fn event_synchronize(e: CUevent) -> CuResult {
    let id = event_id(e)?;
    graph::event_captured(id)?;
    driver()?.events.get(&id).ok_or(CUDA_ERROR_INVALID_HANDLE)?;
    queue::force_event(id, "cuEventSynchronize")?;
    let d = driver()?;
    let ctx = d.events.get(&id).ok_or(CUDA_ERROR_INVALID_HANDLE)?.ctx;
    d.context(ctx)?;
    crate::counters::get().sync();
    crate::counters_file::checkpoint();
    Ok(())
}

pub fn event_elapsed_time(ms: Out<f32>, start: CUevent, end: CUevent) -> CuResult {
    let d = driver()?;
    ms.required()?;
    if queue::event_pending(event_id(start)?) || queue::event_pending(event_id(end)?) {
        return Err(CUDA_ERROR_NOT_READY);
    }
    let a = d.events.get(&event_id(start)?).ok_or(CUDA_ERROR_INVALID_HANDLE)?;
    let b = d.events.get(&event_id(end)?).ok_or(CUDA_ERROR_INVALID_HANDLE)?;
    if (a.flags | b.flags) & CU_EVENT_DISABLE_TIMING != 0 {
        return Err(CUDA_ERROR_INVALID_HANDLE);
    }
    let (Some(ta), Some(tb)) = (a.recorded, b.recorded) else { return Err(CUDA_ERROR_INVALID_HANDLE) };
    d.context(a.ctx)?;
    let v = if tb >= ta { (tb - ta).as_secs_f64() * 1e3 } else { -((ta - tb).as_secs_f64() * 1e3) };
    ms.set(v as f32)
}
