//! Several workers: a launch with `workers = N` runs its blocks on the calling OS thread
//! and N-1 helper threads of a process-wide pool, each with its own worker (fibers,
//! dynamic shared memory). A block runs entirely on one OS thread, so what kernels-host
//! makes per OS thread (static `__shared__` as `thread_local`, the library's context
//! slot) stays per block.
//!
//! Blocks are handed out in the launch's block order, in small chunks from a shared
//! counter. When a block fails, no block after it in the order is started any more;
//! blocks before it still run (one of them may fail too), and the launch reports the
//! failure of the first failing block in the order, as one worker would. Hazard logs
//! are merged as one worker would have written them up to that block.
//!
//! Helpers join a launch when they are free; the launching thread runs blocks itself,
//! so a launch completes even when every helper is busy with another launch.

use super::hazard::HazardLog;
use super::scheduler::{Positions, WorkerResult};
use super::{ExecOptions, ExecStats, KernelRef, LaunchConfig, LaunchOutcome};
use std::collections::VecDeque;
use std::ffi::c_void;
use std::sync::atomic::{AtomicU64, Ordering::*};
use std::sync::{Arc, Condvar, Mutex, OnceLock};

/// Positions 0..total in order (one worker).
pub(crate) struct Serial {
    next: u64,
    total: u64,
}

impl Serial {
    pub fn new(total: u64) -> Self {
        Serial { next: 0, total }
    }
}

impl Positions for Serial {
    fn next(&mut self) -> Option<u64> {
        (self.next < self.total).then(|| {
            self.next += 1;
            self.next - 1
        })
    }

    fn failed(&mut self, _pos: u64) {
        self.next = self.total;
    }
}

/// kernelParams: pointers to the values the driver copied, alive for the launch.
struct Params(Vec<*mut c_void>);
// SAFETY: the pointed-to values are only read by kernel code, and outlive the launch
// (the launching thread waits for every helper before returning).
unsafe impl Send for Params {}
// SAFETY: as above.
unsafe impl Sync for Params {}

/// One launch shared by its workers.
struct Job {
    kernel: KernelRef,
    cfg: LaunchConfig,
    params: Params,
    opts: ExecOptions,
    total: u64,
    chunk: u64,
    next: AtomicU64,
    /// The first failing position so far (u64::MAX: none).
    fail_pos: AtomicU64,
    state: Mutex<JobState>,
    done: Condvar,
}

struct JobState {
    /// Helpers may still join.
    open: bool,
    /// Helpers running the job.
    active: usize,
    results: Vec<(WorkerResult, ExecStats)>,
}

/// A worker's share of a job's positions.
struct Share<'a> {
    job: &'a Job,
    cur: u64,
    end: u64,
}

impl Positions for Share<'_> {
    fn next(&mut self) -> Option<u64> {
        if self.cur == self.end {
            let s = self.job.next.fetch_add(self.job.chunk, Relaxed);
            if s >= self.job.total {
                return None;
            }
            self.cur = s;
            self.end = (s + self.job.chunk).min(self.job.total);
        }
        let p = self.cur;
        if p > self.job.fail_pos.load(Relaxed) {
            return None;
        }
        self.cur += 1;
        Some(p)
    }

    fn failed(&mut self, pos: u64) {
        self.job.fail_pos.fetch_min(pos, Relaxed);
    }
}

/// Runs this thread's share of the job on its worker.
fn work(job: &Job) -> Option<(WorkerResult, ExecStats)> {
    super::with_worker(&job.opts, |w| {
        let before = w.stats;
        let mut share = Share { job, cur: 0, end: 0 };
        let r = w.run(&job.kernel, &job.cfg, &job.params.0, &job.opts, &mut share, true);
        (r, w.stats.since(&before))
    })
    .ok()
}

struct Pool {
    queue: Mutex<PoolState>,
    wake: Condvar,
}

struct PoolState {
    jobs: VecDeque<Arc<Job>>,
    helpers: usize,
}

fn pool() -> &'static Pool {
    static P: OnceLock<Pool> = OnceLock::new();
    P.get_or_init(|| Pool { queue: Mutex::new(PoolState { jobs: VecDeque::new(), helpers: 0 }), wake: Condvar::new() })
}

fn helper_loop() {
    super::fault::prepare_thread();
    let p = pool();
    loop {
        let job = {
            let mut q = p.queue.lock().unwrap_or_else(|e| e.into_inner());
            loop {
                if let Some(j) = q.jobs.pop_front() {
                    break j;
                }
                q = p.wake.wait(q).unwrap_or_else(|e| e.into_inner());
            }
        };
        {
            let mut s = job.state.lock().unwrap_or_else(|e| e.into_inner());
            if !s.open {
                continue;
            }
            s.active += 1;
        }
        let r = work(&job);
        let mut s = job.state.lock().unwrap_or_else(|e| e.into_inner());
        s.results.extend(r);
        s.active -= 1;
        if s.active == 0 {
            job.done.notify_all();
        }
    }
}

/// Runs a launch on `opts.workers` OS threads.
pub(crate) fn launch(kernel: &KernelRef, cfg: &LaunchConfig, params: &[*mut c_void], opts: &ExecOptions) -> LaunchOutcome {
    let total: u64 = cfg.grid.iter().map(|&g| g as u64).product();
    let workers = opts.workers as u64;
    let job = Arc::new(Job {
        kernel: kernel.clone(),
        cfg: *cfg,
        params: Params(params.to_vec()),
        opts: *opts,
        total,
        chunk: (total / (workers * 32)).clamp(1, 64),
        next: AtomicU64::new(0),
        fail_pos: AtomicU64::new(u64::MAX),
        state: Mutex::new(JobState { open: true, active: 0, results: Vec::new() }),
        done: Condvar::new(),
    });
    let helpers = (opts.workers - 1).min(total.saturating_sub(1) as usize);
    if helpers > 0 {
        let p = pool();
        let mut q = p.queue.lock().unwrap_or_else(|e| e.into_inner());
        while q.helpers < helpers {
            if std::thread::Builder::new().name("simtwin-worker".into()).spawn(helper_loop).is_err() {
                break;
            }
            q.helpers += 1;
        }
        for _ in 0..helpers {
            q.jobs.push_back(job.clone());
        }
        p.wake.notify_all();
    }
    let mine = work(&job);
    let results = {
        let mut s = job.state.lock().unwrap_or_else(|e| e.into_inner());
        s.open = false;
        while s.active > 0 {
            s = job.done.wait(s).unwrap_or_else(|e| e.into_inner());
        }
        std::mem::take(&mut s.results)
    };
    if helpers > 0 {
        let mut q = pool().queue.lock().unwrap_or_else(|e| e.into_inner());
        q.jobs.retain(|j| !Arc::ptr_eq(j, &job));
    }
    let Some((mine, _)) = mine else {
        return super::refused(format!("kernel {}: launched from inside a running kernel", kernel.name));
    };
    let mut all = vec![mine];
    let mut helper_stats = ExecStats::default();
    for (r, st) in results {
        helper_stats.add_work(&st);
        all.push(r);
    }
    let _ = super::with_worker(opts, |w| w.stats.add_work(&helper_stats));
    let first = all.iter().filter_map(|r| r.failure.as_ref()).min_by_key(|(p, _)| *p).cloned();
    let upto = first.as_ref().map(|(p, _)| *p);
    let hazards = HazardLog::merge(all.into_iter().map(|r| r.log).collect(), upto);
    LaunchOutcome { result: first.map_or(Ok(()), |(_, f)| Err(f)), hazards }
}
