//! Streams, events and host callbacks. Work is executed when it is enqueued, so every
//! stream is in order and the legacy default stream's synchronisation with blocking
//! streams holds by construction (deferred streams are later work). Callbacks run on a
//! driver thread, as on a device; driver calls made inside them answer
//! CUDA_ERROR_NOT_PERMITTED.

use crate::boundary::{CuResult, HostCall, Out};
use crate::cu::*;
use crate::state::{driver, handle, handle_id, Event, Stream, Tag};
use std::cell::Cell;
use std::sync::mpsc;
use std::sync::{Mutex, OnceLock};
use std::time::Instant;

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
    let mut d = driver()?;
    let id = stream_id(s)?.ok_or(CUDA_ERROR_INVALID_HANDLE)?;
    d.stream_context_unchecked(s)?;
    d.streams.remove(&id).ok_or(CUDA_ERROR_INVALID_HANDLE)?;
    Ok(())
}

pub fn stream_query(s: CUstream) -> CuResult {
    let d = driver()?;
    d.stream_context(s)?;
    Ok(())
}

pub fn stream_synchronize(s: CUstream) -> CuResult {
    let d = driver()?;
    d.stream_context(s)?;
    crate::counters::get().sync();
    crate::teardown::checkpoint();
    Ok(())
}

pub fn stream_wait_event(s: CUstream, e: CUevent, flags: u32) -> CuResult {
    let d = driver()?;
    d.stream_context(s)?;
    let id = handle_id(Tag::Event, e).ok_or(CUDA_ERROR_INVALID_HANDLE)?;
    d.events.get(&id).ok_or(CUDA_ERROR_INVALID_HANDLE)?;
    if flags & !1 != 0 {
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
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

/// No stream is ever capturing: graphs are not emulated.
pub fn stream_is_capturing(s: CUstream, status: Out<u32>) -> CuResult {
    let d = driver()?;
    d.stream_context(s)?;
    status.set(0)
}

pub fn stream_attach_mem_async(s: CUstream, dptr: CUdeviceptr, _len: usize, _flags: u32) -> CuResult {
    let d = driver()?;
    d.stream_context(s)?;
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
/// A job for the callback thread and where to say it is done.
type Request = (Job, mpsc::Sender<()>);

fn callback_thread() -> &'static Mutex<mpsc::Sender<Request>> {
    static TX: OnceLock<Mutex<mpsc::Sender<Request>>> = OnceLock::new();
    TX.get_or_init(|| {
        let (tx, rx) = mpsc::channel::<Request>();
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

/// Runs the user's host function on the callback thread and waits for it: work that
/// follows on the stream starts only after the callback returned, as the API specifies.
fn run_on_callback_thread(call: HostCall) -> CuResult {
    let (done_tx, done_rx) = mpsc::channel();
    let job: Job = Box::new(move || call.call());
    callback_thread().lock().unwrap_or_else(|e| e.into_inner()).send((job, done_tx)).map_err(|_| CUDA_ERROR_UNKNOWN)?;
    done_rx.recv().map_err(|_| CUDA_ERROR_UNKNOWN)
}

pub fn launch_host_func(s: CUstream, f: Option<HostCall>) -> CuResult {
    driver()?.stream_context(s)?;
    run_on_callback_thread(f.ok_or(CUDA_ERROR_INVALID_VALUE)?)
}

pub fn stream_add_callback(s: CUstream, cb: Option<HostCall>, flags: u32) -> CuResult {
    driver()?.stream_context(s)?;
    if flags != 0 {
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    run_on_callback_thread(cb.ok_or(CUDA_ERROR_INVALID_VALUE)?)
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

pub fn event_record(e: CUevent, s: CUstream) -> CuResult {
    let mut d = driver()?;
    let id = event_id(e)?;
    let ev_ctx = d.events.get(&id).ok_or(CUDA_ERROR_INVALID_HANDLE)?.ctx;
    let ctx = if stream_id(s)?.is_some() { d.stream_context(s)? } else { d.current()? };
    d.context(ev_ctx)?;
    if ev_ctx != ctx {
        return Err(CUDA_ERROR_INVALID_HANDLE);
    }
    d.events.get_mut(&id).expect("looked up above").recorded = Some(Instant::now());
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
    let ctx = d.events.get(&event_id(e)?).ok_or(CUDA_ERROR_INVALID_HANDLE)?.ctx;
    d.context(ctx)?;
    Ok(())
}

pub fn event_synchronize(e: CUevent) -> CuResult {
    let d = driver()?;
    let ctx = d.events.get(&event_id(e)?).ok_or(CUDA_ERROR_INVALID_HANDLE)?.ctx;
    d.context(ctx)?;
    crate::counters::get().sync();
    crate::teardown::checkpoint();
    Ok(())
}

pub fn event_elapsed_time(ms: Out<f32>, start: CUevent, end: CUevent) -> CuResult {
    let d = driver()?;
    ms.required()?;
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
