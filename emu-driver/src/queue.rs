//! Asynchronous work and when it runs (EMU_CUDA_ASYNC).
//!
//! Every launch, async copy, memset, stream-ordered free, host function and event record
//! is a `Work` item submitted to its stream. In the default `eager` mode an item runs
//! when it is submitted: every stream is in order and the legacy default stream's
//! synchronisation holds by construction. In `deferred` mode an item runs only when
//! something forces it — a stream, event or context synchronisation, a synchronous call,
//! a query (which answers CUDA_ERROR_NOT_READY and runs the work, so polling loops end),
//! a wait — and then only the items the forced one depends on, in an order that respects
//! every dependency the program declared (stream order, the legacy default stream's
//! implicit synchronisation with blocking streams, cuStreamWaitEvent) and nothing else.
//! A program that reads a result before synchronising sees what was there before, as it
//! may on a device; the driver reports which work ran late and which never ran.
//!
//! Deferred items run one at a time (one device executing them), on the thread that
//! forces them.

use crate::boundary::{CuResult, HostCall};
use crate::cu::*;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Mutex;

/// A stream as the queue sees it: its context and its id (None: the legacy default
/// stream of that context).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct StreamKey {
    pub ctx: u64,
    pub stream: Option<u64>,
}

/// One piece of asynchronous work.
pub enum Work {
    /// A kernel launch, validated and with its arguments captured.
    Launch(crate::launch::Prepared),
    /// A copy of `len` bytes; `snapshot` holds pageable source bytes read at submission.
    Copy { dst: u64, src: u64, len: u64, snapshot: Option<Vec<u8>> },
    /// A 2D copy (rows of `width` bytes).
    Copy2D { dst: u64, dpitch: u64, src: u64, spitch: u64, width: u64, height: u64 },
    /// A memset of `w` x `h` elements of `elem` bytes.
    Memset { dst: u64, pitch: u64, value: u32, elem: u64, w: u64, h: u64 },
    /// cuMemFreeAsync.
    Free { ptr: u64 },
    /// cuLaunchHostFunc / cuStreamAddCallback.
    Host(HostCall),
    /// cuEventRecord: the event completes when this runs.
    Record { event: u64 },
    /// cuStreamWaitEvent: nothing to do; its dependencies order the stream.
    Wait,
    /// cuGraphLaunch: an executable graph's steps, run in order (api::graph).
    Graph(Box<dyn FnOnce() -> CuResult + Send>),
}

impl Work {
    fn describe(&self) -> String {
        match self {
            Work::Launch(l) => format!("launch of {}", l.symbol()),
            Work::Copy { len, snapshot, .. } => {
                format!("copy of {len} bytes{}", if snapshot.is_some() { " (pageable source)" } else { "" })
            }
            Work::Copy2D { width, height, .. } => format!("2D copy of {width}x{height} bytes"),
            Work::Memset { w, h, elem, .. } => format!("memset of {} bytes", w * h * elem),
            Work::Free { ptr } => format!("stream-ordered free of {ptr:#x}"),
            Work::Host(_) => "host function".into(),
            Work::Record { event } => format!("record of event {event}"),
            Work::Wait => "wait for an event".into(),
            Work::Graph(_) => "graph launch".into(),
        }
    }
}

struct Item {
    key: StreamKey,
    deps: Vec<u64>,
    work: Work,
    /// What submitted it (entry point and its call number), for reports.
    origin: String,
}

#[derive(Default)]
struct Queue {
    next: u64,
    pending: BTreeMap<u64, Item>,
    /// The newest pending item of each stream.
    last: HashMap<StreamKey, u64>,
    /// Streams created non-blocking (they do not synchronise with the legacy stream).
    non_blocking: BTreeSet<StreamKey>,
    /// The pending record item of each event.
    markers: HashMap<u64, u64>,
    /// Items forced while the program had gone on past them, for the report.
    late: u64,
}

static QUEUE: Mutex<Option<Queue>> = Mutex::new(None);
/// Deferred work runs one item at a time.
static RUNNING: Mutex<()> = Mutex::new(());

fn queue() -> std::sync::MutexGuard<'static, Option<Queue>> {
    QUEUE.lock().unwrap_or_else(|e| e.into_inner())
}

/// The queue's key of a stream handle (its context must be usable).
pub fn key(d: &crate::state::Driver, stream: CUstream) -> CuResult<StreamKey> {
    Ok(key_of(d.stream_context(stream)?, stream))
}

/// The queue's key of a stream handle whose context `ctx` was already found (by
/// `Driver::stream_context`).
pub fn key_of(ctx: u64, stream: CUstream) -> StreamKey {
    let v = stream as usize;
    let named = !(v == 0 || v == CU_STREAM_LEGACY || v == CU_STREAM_PER_THREAD);
    StreamKey { ctx, stream: if named { crate::state::handle_id(crate::state::Tag::Stream, stream) } else { None } }
}

/// `name, call #N` for reports: the entry point and the process's call sequence number.
pub fn origin(name: &str) -> String {
    format!("{name}, call #{}", crate::counters::get().sequence())
}

/// Whether EMU_CUDA_ASYNC=deferred.
pub fn deferred() -> bool {
    matches!(crate::config::get(), Ok(c) if c.deferred)
}

/// Marks a stream non-blocking (created with CU_STREAM_NON_BLOCKING).
pub fn set_non_blocking(key: StreamKey) {
    queue().get_or_insert_with(Queue::default).non_blocking.insert(key);
}

/// Submits work to a stream: runs it now (eager), or queues it behind what it depends
/// on (deferred). `origin` names the call for reports.
pub fn submit(key: StreamKey, work: Work, origin: &str) -> CuResult {
    if !deferred() {
        return run(work);
    }
    let mut g = queue();
    let q = g.get_or_insert_with(Queue::default);
    let mut deps = Vec::new();
    if let Some(&p) = q.last.get(&key) {
        deps.push(p);
    }
    if key.stream.is_none() {
        // The legacy default stream waits for every blocking stream of its context.
        for (k, &id) in &q.last {
            if k.ctx == key.ctx && k.stream.is_some() && !q.non_blocking.contains(k) {
                deps.push(id);
            }
        }
    } else if !q.non_blocking.contains(&key) {
        // A blocking stream waits for the legacy default stream.
        if let Some(&id) = q.last.get(&StreamKey { ctx: key.ctx, stream: None }) {
            deps.push(id);
        }
    }
    submit_item(q, key, deps, work, origin);
    Ok(())
}

fn submit_item(q: &mut Queue, key: StreamKey, deps: Vec<u64>, work: Work, origin: &str) -> u64 {
    q.next += 1;
    let id = q.next;
    if let Work::Record { event } = &work {
        q.markers.insert(*event, id);
    }
    q.pending.insert(id, Item { key, deps, work, origin: origin.to_string() });
    q.last.insert(key, id);
    id
}

/// cuStreamWaitEvent: the stream's later work waits for the event's record (if it has
/// not run yet).
pub fn wait_event(key: StreamKey, event: u64, origin: &str) {
    if !deferred() {
        return;
    }
    let mut g = queue();
    let q = g.get_or_insert_with(Queue::default);
    let mut deps: Vec<u64> = q.markers.get(&event).copied().into_iter().collect();
    if let Some(&p) = q.last.get(&key) {
        deps.push(p);
    }
    submit_item(q, key, deps, Work::Wait, origin);
}

/// Whether an event's record is still pending.
pub fn event_pending(event: u64) -> bool {
    deferred() && queue().as_ref().is_some_and(|q| q.markers.contains_key(&event))
}

/// Whether a stream has pending work.
pub fn stream_pending(key: StreamKey) -> bool {
    deferred() && queue().as_ref().is_some_and(|q| q.last.contains_key(&key))
}

/// What must run for `targets`: their dependency closure among pending items.
fn closure(q: &Queue, targets: impl IntoIterator<Item = u64>) -> BTreeSet<u64> {
    let mut need = BTreeSet::new();
    let mut stack: Vec<u64> = targets.into_iter().filter(|t| q.pending.contains_key(t)).collect();
    while let Some(t) = stack.pop() {
        if need.insert(t) {
            if let Some(it) = q.pending.get(&t) {
                stack.extend(it.deps.iter().copied().filter(|d| q.pending.contains_key(d)));
            }
        }
    }
    need
}

/// Runs what a stream's pending work needs (cuStreamSynchronize and friends).
pub fn force_stream(key: StreamKey, why: &str) -> CuResult {
    force(|q| q.last.get(&key).copied().into_iter().collect(), why)
}

/// Runs what an event's record needs.
pub fn force_event(event: u64, why: &str) -> CuResult {
    force(|q| q.markers.get(&event).copied().into_iter().collect(), why)
}

/// Runs everything pending in a context (cuCtxSynchronize, frees, teardown).
pub fn force_context(ctx: u64, why: &str) -> CuResult {
    force(|q| q.pending.iter().filter(|(_, it)| it.key.ctx == ctx).map(|(&id, _)| id).collect(), why)
}

fn force(targets: impl FnOnce(&Queue) -> Vec<u64>, why: &str) -> CuResult {
    if !deferred() {
        return Ok(());
    }
    let _running = RUNNING.lock().unwrap_or_else(|e| e.into_inner());
    let items: Vec<(u64, Item)> = {
        let mut g = queue();
        let Some(q) = g.as_mut() else { return Ok(()) };
        let need = closure(q, targets(q));
        let mut items = Vec::new();
        for id in need {
            if let Some(it) = q.pending.remove(&id) {
                if q.last.get(&it.key) == Some(&id) {
                    q.last.remove(&it.key);
                }
                if let Work::Record { event } = &it.work {
                    if q.markers.get(event) == Some(&id) {
                        q.markers.remove(event);
                    }
                }
                items.push((id, it));
            }
        }
        q.late += items.len() as u64;
        items
    };
    if !items.is_empty() {
        let list: Vec<String> = items.iter().map(|(_, it)| format!("{} ({})", it.work.describe(), it.origin)).collect();
        crate::log_info!("EMU_CUDA_ASYNC=deferred: {why} runs {} item(s): {}", items.len(), list.join("; "));
    }
    let mut first_err = Ok(());
    for (_, it) in items {
        let (ctx, what) = (it.key.ctx, it.work.describe());
        // Work queued behind an execution error does not run, as on a device: the
        // context is dead once a kernel faulted, and what was queued after it neither
        // runs nor copies (eager mode answers such calls the error at once).
        let dead = crate::state::driver().ok().and_then(|d| d.context(ctx).err());
        if let Some(code) = dead {
            crate::log_info!(
                "EMU_CUDA_ASYNC=deferred: {what} ({}) not run: its context failed before it ({})",
                it.origin,
                crate::errors::name(code)
            );
            first_err = first_err.and(Err(code));
            continue;
        }
        if let Err(e) = run(it.work) {
            // Work that fails when it finally runs (memory freed meanwhile, ...) is an
            // execution error, as on a device: sticky on its context.
            crate::log_error!("EMU_CUDA_ASYNC=deferred: {what} ({}) failed when it ran: {}", it.origin, crate::errors::name(e));
            if let Ok(mut d) = crate::state::driver() {
                d.set_sticky(ctx, CUDA_ERROR_ILLEGAL_ADDRESS);
            }
            first_err = first_err.and(Err(CUDA_ERROR_ILLEGAL_ADDRESS));
        }
    }
    first_err
}

/// Work still pending (at exit: work the program never waited for).
pub fn pending_report() -> Vec<String> {
    let g = queue();
    let Some(q) = g.as_ref() else { return Vec::new() };
    q.pending
        .values()
        .map(|it| format!("{} ({}) never ran: the program did not synchronise after it", it.work.describe(), it.origin))
        .collect()
}

/// Runs one item now (a graph launch's steps, already in stream order).
pub fn run_now(work: Work) -> CuResult {
    run(work)
}

/// Runs one item now.
fn run(work: Work) -> CuResult {
    match work {
        Work::Launch(l) => crate::launch::run(l),
        Work::Copy { dst, src, len, snapshot } => {
            let d = crate::state::driver()?;
            match snapshot {
                Some(bytes) => crate::memory::write_snapshot(&d, dst, &bytes),
                None => crate::memory::copy(&d, dst, src, len, None, None),
            }
        }
        Work::Copy2D { dst, dpitch, src, spitch, width, height } => {
            let d = crate::state::driver()?;
            crate::memory::copy_2d(&d, dst, dpitch, src, spitch, width, height, None, None)
        }
        Work::Memset { dst, pitch, value, elem, w, h } => {
            let d = crate::state::driver()?;
            crate::memory::memset(&d, dst, pitch, value, elem, w, h)
        }
        Work::Free { ptr } => {
            let mut d = crate::state::driver()?;
            crate::memory::free_device(&mut d, ptr)
        }
        Work::Host(call) => crate::callbacks::run_host_call(call),
        Work::Record { event } => {
            let mut d = crate::state::driver()?;
            if let Some(e) = d.events.get_mut(&event) {
                e.recorded = Some(std::time::Instant::now());
            }
            Ok(())
        }
        Work::Wait => Ok(()),
        Work::Graph(steps) => steps(),
    }
}
