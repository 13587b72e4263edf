//! Streams, events and host callbacks. Work is executed when it is enqueued, so every
//! stream is in order and the legacy default stream's synchronisation with blocking
//! streams holds by construction (deferred streams are later work). Callbacks run on a
//! driver thread, as on a device; driver calls made inside them answer
//! CUDA_ERROR_NOT_PERMITTED.

use super::out;
use crate::cu::*;
use crate::state::{driver, handle, handle_id, CuResult, Event, Stream, Tag};
use std::cell::Cell;
use std::ffi::c_void;
use std::sync::mpsc;
use std::sync::{Mutex, OnceLock};
use std::time::Instant;

pub fn stream_create(s: *mut CUstream, flags: u32) -> CuResult {
    stream_create_with_priority(s, flags, 0)
}

pub fn stream_create_with_priority(s: *mut CUstream, flags: u32, priority: i32) -> CuResult {
    let mut d = driver()?;
    let ctx = d.current()?;
    super::nonnull(s)?;
    if flags & !CU_STREAM_NON_BLOCKING != 0 {
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    // Priorities outside [greatest, least] = [-5, 0] are clamped, as the driver does.
    let priority = priority.clamp(-5, 0);
    let id = d.new_id();
    d.streams.insert(id, Stream { ctx, flags, priority });
    out(s, handle(Tag::Stream, id))
}

fn stream_id(s: CUstream) -> CuResult<Option<u64>> {
    let v = s as usize;
    if v == 0 || v == CU_STREAM_LEGACY || v == CU_STREAM_PER_THREAD {
        return Ok(None);
    }
    handle_id(Tag::Stream, s).map(Some).ok_or(CUDA_ERROR_INVALID_HANDLE)
}

pub fn stream_destroy(s: CUstream) -> CuResult {
    let mut d = driver()?;
    d.current_unchecked()?;
    let id = stream_id(s)?.ok_or(CUDA_ERROR_INVALID_HANDLE)?;
    d.streams.remove(&id).ok_or(CUDA_ERROR_INVALID_HANDLE)?;
    Ok(())
}

pub fn stream_query(s: CUstream) -> CuResult {
    let d = driver()?;
    d.check_stream(s)?;
    Ok(())
}

pub fn stream_synchronize(s: CUstream) -> CuResult {
    let d = driver()?;
    d.check_stream(s)?;
    crate::counters::get().sync();
    Ok(())
}

pub fn stream_wait_event(s: CUstream, e: CUevent, flags: u32) -> CuResult {
    let d = driver()?;
    d.check_stream(s)?;
    let id = handle_id(Tag::Event, e).ok_or(CUDA_ERROR_INVALID_HANDLE)?;
    d.events.get(&id).ok_or(CUDA_ERROR_INVALID_HANDLE)?;
    if flags & !1 != 0 {
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    Ok(())
}

pub fn stream_get_priority(s: CUstream, p: *mut i32) -> CuResult {
    let d = driver()?;
    d.current()?;
    let pr = match stream_id(s)? {
        None => 0,
        Some(id) => d.streams.get(&id).ok_or(CUDA_ERROR_INVALID_HANDLE)?.priority,
    };
    out(p, pr)
}

pub fn stream_get_flags(s: CUstream, f: *mut u32) -> CuResult {
    let d = driver()?;
    d.current()?;
    let fl = match stream_id(s)? {
        None => 0,
        Some(id) => d.streams.get(&id).ok_or(CUDA_ERROR_INVALID_HANDLE)?.flags,
    };
    out(f, fl)
}

pub fn stream_get_ctx(s: CUstream, c: *mut CUcontext) -> CuResult {
    let d = driver()?;
    let cur = d.current()?;
    let ctx = match stream_id(s)? {
        None => cur,
        Some(id) => d.streams.get(&id).ok_or(CUDA_ERROR_INVALID_HANDLE)?.ctx,
    };
    out(c, handle(Tag::Context, ctx))
}

pub fn stream_get_id(s: CUstream, idp: *mut u64) -> CuResult {
    let d = driver()?;
    d.current()?;
    let id = stream_id(s)?.unwrap_or(s as usize as u64);
    if let Some(i) = stream_id(s)? {
        d.streams.get(&i).ok_or(CUDA_ERROR_INVALID_HANDLE)?;
    }
    out(idp, id)
}

/// No stream is ever capturing: graphs are not emulated.
pub fn stream_is_capturing(s: CUstream, status: *mut u32) -> CuResult {
    let d = driver()?;
    d.check_stream(s)?;
    out(status, 0)
}

pub fn stream_attach_mem_async(s: CUstream, dptr: CUdeviceptr, _len: usize, _flags: u32) -> CuResult {
    let d = driver()?;
    d.check_stream(s)?;
    d.find_alloc(dptr).ok_or(CUDA_ERROR_INVALID_VALUE)?;
    Ok(())
}

// ---- callbacks ----------------------------------------------------------------------

thread_local! {
    static IN_CALLBACK: Cell<bool> = const { Cell::new(false) };
}

/// True on the driver's callback thread while a host function runs.
pub fn in_callback() -> bool {
    IN_CALLBACK.with(|c| c.get())
}

type Job = Box<dyn FnOnce() + Send>;

fn callback_thread() -> &'static Mutex<mpsc::Sender<(Job, mpsc::Sender<()>)>> {
    static TX: OnceLock<Mutex<mpsc::Sender<(Job, mpsc::Sender<()>)>>> = OnceLock::new();
    TX.get_or_init(|| {
        let (tx, rx) = mpsc::channel::<(Job, mpsc::Sender<()>)>();
        std::thread::Builder::new()
            .name("simtwin-callbacks".into())
            .spawn(move || {
                IN_CALLBACK.with(|c| c.set(true));
                for (job, done) in rx {
                    job();
                    let _ = done.send(());
                }
            })
            .expect("spawn the callback thread");
        Mutex::new(tx)
    })
}

struct SendPtr(*mut c_void);
// SAFETY: the user data pointer is handed back to the user's callback untouched.
unsafe impl Send for SendPtr {}

/// Runs `job` on the callback thread and waits for it: work that follows on the stream
/// starts only after the callback returned, as the API specifies.
fn run_on_callback_thread(job: Job) -> CuResult {
    let (done_tx, done_rx) = mpsc::channel();
    callback_thread().lock().unwrap_or_else(|e| e.into_inner()).send((job, done_tx)).map_err(|_| CUDA_ERROR_UNKNOWN)?;
    done_rx.recv().map_err(|_| CUDA_ERROR_UNKNOWN)
}

pub fn launch_host_func(s: CUstream, f: CUhostFn, data: *mut c_void) -> CuResult {
    {
        let d = driver()?;
        d.check_stream(s)?;
    }
    let f = f.ok_or(CUDA_ERROR_INVALID_VALUE)?;
    let data = SendPtr(data);
    run_on_callback_thread(Box::new(move || {
        let data = data;
        // SAFETY: the user's host function with the user's data.
        unsafe { f(data.0) }
    }))
}

pub fn stream_add_callback(s: CUstream, cb: CUstreamCallback, data: *mut c_void, flags: u32) -> CuResult {
    {
        let d = driver()?;
        d.check_stream(s)?;
    }
    if flags != 0 {
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    let cb = cb.ok_or(CUDA_ERROR_INVALID_VALUE)?;
    let (data, stream) = (SendPtr(data), SendPtr(s));
    run_on_callback_thread(Box::new(move || {
        let (data, stream) = (data, stream);
        // SAFETY: the user's callback with the user's data and stream.
        unsafe { cb(stream.0, CUDA_SUCCESS, data.0) }
    }))
}

// ---- events -------------------------------------------------------------------------

pub fn event_create(e: *mut CUevent, flags: u32) -> CuResult {
    let mut d = driver()?;
    let ctx = d.current()?;
    super::nonnull(e)?;
    if flags & !(CU_EVENT_BLOCKING_SYNC | CU_EVENT_DISABLE_TIMING | CU_EVENT_INTERPROCESS) != 0 {
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    if flags & CU_EVENT_INTERPROCESS != 0 && flags & CU_EVENT_DISABLE_TIMING == 0 {
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    let id = d.new_id();
    d.events.insert(id, Event { ctx, flags, recorded: None });
    out(e, handle(Tag::Event, id))
}

fn event_id(e: CUevent) -> CuResult<u64> {
    handle_id(Tag::Event, e).ok_or(CUDA_ERROR_INVALID_HANDLE)
}

pub fn event_destroy(e: CUevent) -> CuResult {
    let mut d = driver()?;
    d.current_unchecked()?;
    d.events.remove(&event_id(e)?).ok_or(CUDA_ERROR_INVALID_HANDLE)?;
    Ok(())
}

pub fn event_record(e: CUevent, s: CUstream) -> CuResult {
    let mut d = driver()?;
    let ctx = d.check_stream(s)?;
    let ev = d.events.get_mut(&event_id(e)?).ok_or(CUDA_ERROR_INVALID_HANDLE)?;
    if ev.ctx != ctx {
        return Err(CUDA_ERROR_INVALID_HANDLE);
    }
    ev.recorded = Some(Instant::now());
    Ok(())
}

pub fn event_record_with_flags(e: CUevent, s: CUstream, flags: u32) -> CuResult {
    if flags & !1 != 0 {
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    event_record(e, s)
}

pub fn event_query(e: CUevent) -> CuResult {
    let d = driver()?;
    d.current()?;
    d.events.get(&event_id(e)?).ok_or(CUDA_ERROR_INVALID_HANDLE)?;
    Ok(())
}

pub fn event_synchronize(e: CUevent) -> CuResult {
    let d = driver()?;
    d.current()?;
    d.events.get(&event_id(e)?).ok_or(CUDA_ERROR_INVALID_HANDLE)?;
    crate::counters::get().sync();
    Ok(())
}

pub fn event_elapsed_time(ms: *mut f32, start: CUevent, end: CUevent) -> CuResult {
    let d = driver()?;
    d.current()?;
    super::nonnull(ms)?;
    let a = d.events.get(&event_id(start)?).ok_or(CUDA_ERROR_INVALID_HANDLE)?;
    let b = d.events.get(&event_id(end)?).ok_or(CUDA_ERROR_INVALID_HANDLE)?;
    if (a.flags | b.flags) & CU_EVENT_DISABLE_TIMING != 0 {
        return Err(CUDA_ERROR_INVALID_HANDLE);
    }
    let (Some(ta), Some(tb)) = (a.recorded, b.recorded) else { return Err(CUDA_ERROR_INVALID_HANDLE) };
    let v = if tb >= ta { (tb - ta).as_secs_f64() * 1e3 } else { -((ta - tb).as_secs_f64() * 1e3) };
    out(ms, v as f32)
}
