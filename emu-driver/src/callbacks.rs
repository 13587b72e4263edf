//! Host functions enqueued on streams (cuLaunchHostFunc, cuStreamAddCallback) run on a
//! driver thread of their own, as on a device; driver calls made inside them answer
//! CUDA_ERROR_NOT_PERMITTED (the export table asks `in_callback`).

use crate::boundary::{CuResult, HostCall};
use crate::cu::*;
use std::cell::Cell;
use std::sync::mpsc;
use std::sync::{Mutex, OnceLock};

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
pub fn run_host_call(call: HostCall) -> CuResult {
    let (done_tx, done_rx) = mpsc::channel();
    let job: Job = Box::new(move || call.call());
    callback_thread().lock().unwrap_or_else(|e| e.into_inner()).send((job, done_tx)).map_err(|_| CUDA_ERROR_UNKNOWN)?;
    done_rx.recv().map_err(|_| CUDA_ERROR_UNKNOWN)
}
