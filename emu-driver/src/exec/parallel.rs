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
//!
//! Block-level forward progress: a worker whose block only spins (its threads wait for
//! something outside the block, such as a flag a later block sets) asks for help
//! (`Positions::help`): one more helper thread joins the launch and starts the next
//! positions, started for it if no helper is idle, while fewer than the blocks the
//! device could hold resident run at once (`ExecOptions::resident_blocks`, at most
//! `MAX_SPIN_HELPERS` helpers asked for and still in the job); the blocks of its chunk
//! it has not started go back to the job first (the block it waits for may be one of
//! them), and are handed out before new chunks. A block refused at that limit asks
//! again at its next round. A helper asked for leaves the job before it would take a
//! new chunk while no block waits (`Job::waiting`): a chain of blocks that each wait
//! briefly for the one before (a forward chain on a loaded machine) asks for many
//! helpers over the launch, never for many at once. A launch of one worker (`Serial`)
//! turns its positions into a shared job when it first asks; until then it costs
//! nothing.

use super::hazard::HazardLog;
use super::scheduler::{self, with_worker, Help, Positions, WorkerResult};
use super::types::{ExecOptions, ExecStats, KernelRef, LaunchConfig, LaunchOutcome, MAX_SPIN_HELPERS};
use std::collections::VecDeque;
use std::ffi::c_void;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering::*};
use std::sync::{Arc, Condvar, Mutex, OnceLock};

/// kernelParams: pointers to the values the driver copied, alive for the launch.
struct Params(Vec<*mut c_void>);
// SAFETY: the pointed-to values are only read by kernel code, and outlive the launch
// (the launching thread waits for every helper before returning).
unsafe impl Send for Params {}
// SAFETY: as above.
unsafe impl Sync for Params {}

/// One launch shared by its workers.
pub(crate) struct Job {
    kernel: KernelRef,
    cfg: LaunchConfig,
    params: Params,
    opts: ExecOptions,
    total: u64,
    chunk: u64,
    next: AtomicU64,
    /// The first failing position so far (u64::MAX: none).
    fail_pos: AtomicU64,
    /// Chunks handed back unstarted by a worker whose block only spins (the blocks after
    /// it in its chunk must be able to start elsewhere), handed out before new ones.
    returned: Mutex<Vec<(u64, u64)>>,
    /// How many chunks `returned` holds (read without its lock).
    returned_n: AtomicUsize,
    /// Helpers asked for because a block only spun and still in the job (or on their
    /// way to it), and how many may be.
    summoned: AtomicUsize,
    spin_limit: usize,
    /// Blocks running now that asked for help (finished or not, their asking ends with
    /// them): while none does, helpers asked for leave.
    waiting: AtomicUsize,
    state: Mutex<JobState>,
    done: Condvar,
}

impl Job {
    /// A job for positions `start..total` handed out `chunk` at a time.
    fn new(
        kernel: &KernelRef,
        cfg: &LaunchConfig,
        params: &[*mut c_void],
        opts: &ExecOptions,
        start: u64,
        total: u64,
        chunk: u64,
    ) -> Arc<Job> {
        Arc::new(Job {
            kernel: kernel.clone(),
            cfg: *cfg,
            params: Params(params.to_vec()),
            opts: *opts,
            total,
            chunk,
            next: AtomicU64::new(start),
            fail_pos: AtomicU64::new(u64::MAX),
            returned: Mutex::new(Vec::new()),
            returned_n: AtomicUsize::new(0),
            summoned: AtomicUsize::new(0),
            waiting: AtomicUsize::new(0),
            spin_limit: (opts.resident_blocks.saturating_sub(opts.workers.max(1) as u32)).min(MAX_SPIN_HELPERS) as usize,
            state: Mutex::new(JobState { open: true, active: 0, results: Vec::new() }),
            done: Condvar::new(),
        })
    }

    /// The next position of a worker's chunk `cur..end`, taking a new chunk when it is
    /// used up; None when no position is left, or (for a helper that was asked for,
    /// `summoned`) when it would take a new chunk while no block waits and none was
    /// handed back: it leaves. (New chunks are left to the launch's own workers, of
    /// which the launching thread stays until none is left; a chunk handed back may
    /// come after they left, so it is never left behind.)
    fn next_position(&self, cur: &mut u64, end: &mut u64, summoned: bool) -> Option<u64> {
        if *cur == *end {
            if summoned && self.waiting.load(Relaxed) == 0 && self.returned_n.load(Relaxed) == 0 {
                return None;
            }
            if let Some((a, e)) = self.take_returned() {
                (*cur, *end) = (a, e);
            } else {
                let s = self.next.fetch_add(self.chunk, Relaxed);
                if s >= self.total {
                    return None;
                }
                *cur = s;
                *end = (s + self.chunk).min(self.total);
            }
        }
        let p = *cur;
        if p > self.fail_pos.load(Relaxed) {
            return None;
        }
        *cur += 1;
        Some(p)
    }
}

impl Job {
    /// The positions `cur..end` of a worker's chunk, not started, go back to the job: the
    /// worker's block spins, and a block after it in the chunk may be what it waits for.
    fn hand_back(&self, cur: &mut u64, end: &mut u64) {
        if *cur < *end {
            let mut r = self.returned.lock().unwrap_or_else(|e| e.into_inner());
            r.push((*cur, *end));
            self.returned_n.store(r.len(), Relaxed);
            *end = *cur;
        }
    }

    /// The earliest chunk handed back, if any.
    fn take_returned(&self) -> Option<(u64, u64)> {
        if self.returned_n.load(Relaxed) == 0 {
            return None;
        }
        let mut r = self.returned.lock().unwrap_or_else(|e| e.into_inner());
        let i = (0..r.len()).min_by_key(|&i| r[i].0)?;
        let c = r.swap_remove(i);
        self.returned_n.store(r.len(), Relaxed);
        Some(c)
    }

    /// Positions are left to start.
    fn positions_left(&self) -> bool {
        self.returned_n.load(Relaxed) > 0 || self.next.load(Relaxed) < self.total
    }
}

/// One more helper joins `job` because a block of it only spins. A helper thread is
/// started when none is idle, so the request never waits behind other launches.
fn summon(job: &Arc<Job>) -> Help {
    if !job.positions_left() {
        return Help::NothingLeft;
    }
    if !job.reserve_helper() {
        return Help::Full;
    }
    let p = pool();
    let mut q = p.queue.lock().unwrap_or_else(|e| e.into_inner());
    q.jobs.push_back(Entry { job: job.clone(), summoned: true });
    if q.idle < q.jobs.len() && std::thread::Builder::new().name("simtwin-worker".into()).spawn(helper_loop).is_ok() {
        q.helpers += 1;
    }
    p.wake.notify_all();
    Help::Asked
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
    job: &'a Arc<Job>,
    cur: u64,
    end: u64,
    /// This worker was asked for by a spinning block (it leaves when none waits).
    summoned: bool,
    /// The running block counts in `Job::waiting`.
    waits: bool,
}

impl Positions for Share<'_> {
    fn next(&mut self) -> Option<u64> {
        self.job.next_position(&mut self.cur, &mut self.end, self.summoned)
    }

    fn failed(&mut self, pos: u64) {
        self.job.fail_pos.fetch_min(pos, Relaxed);
    }

    fn help(&mut self) -> Help {
        self.job.ask_help(&mut self.waits, &mut self.cur, &mut self.end)
    }

    fn block_ended(&mut self) {
        self.job.block_ended(&mut self.waits);
    }
}

impl Job {
    /// The running block of a worker with chunk `cur..end` only spins: it counts as
    /// waiting (once, `waits`), its chunk's unstarted positions go back, and a helper is
    /// asked for.
    fn ask_help(self: &Arc<Self>, waits: &mut bool, cur: &mut u64, end: &mut u64) -> Help {
        if !*waits {
            *waits = true;
            self.waiting.fetch_add(1, Relaxed);
        }
        self.hand_back(cur, end);
        summon(self)
    }

    /// The running block ended: it no longer waits.
    fn block_ended(&self, waits: &mut bool) {
        if std::mem::take(waits) {
            self.waiting.fetch_sub(1, Relaxed);
        }
    }

    /// A place for one more helper asked for, while fewer than the limit are in the job.
    fn reserve_helper(&self) -> bool {
        self.summoned.fetch_update(Relaxed, Relaxed, |n| (n < self.spin_limit).then_some(n + 1)).is_ok()
    }

    /// A helper asked for has left the job (or never joined it).
    fn helper_left(&self) {
        self.summoned.fetch_sub(1, Relaxed);
    }
}

/// Positions of a launch of one worker: 0..total in order on the calling thread, until
/// a block only spins; then the rest becomes a shared job that helpers join.
pub(crate) struct Serial<'a> {
    next: u64,
    total: u64,
    failed_at: Option<u64>,
    kernel: &'a KernelRef,
    cfg: &'a LaunchConfig,
    params: &'a [*mut c_void],
    opts: &'a ExecOptions,
    /// The shared job once help was asked for; `cur..end` this thread's chunk of it.
    job: Option<Arc<Job>>,
    cur: u64,
    end: u64,
    /// The running block counts in `Job::waiting`.
    waits: bool,
}

impl<'a> Serial<'a> {
    pub fn new(kernel: &'a KernelRef, cfg: &'a LaunchConfig, params: &'a [*mut c_void], opts: &'a ExecOptions, total: u64) -> Self {
        Serial { next: 0, total, failed_at: None, kernel, cfg, params, opts, job: None, cur: 0, end: 0, waits: false }
    }

    /// The shared job, if blocks ran on helpers too.
    pub fn into_job(self) -> Option<Arc<Job>> {
        self.job
    }
}

impl Positions for Serial<'_> {
    fn next(&mut self) -> Option<u64> {
        match &self.job {
            Some(j) => j.next_position(&mut self.cur, &mut self.end, false),
            None => (self.next < self.total && self.failed_at.is_none()).then(|| {
                self.next += 1;
                self.next - 1
            }),
        }
    }

    fn failed(&mut self, pos: u64) {
        match &self.job {
            Some(j) => {
                j.fail_pos.fetch_min(pos, Relaxed);
            }
            None => self.failed_at = Some(pos),
        }
    }

    fn help(&mut self) -> Help {
        if self.job.is_none() {
            if self.next >= self.total || self.opts.resident_blocks <= 1 {
                return Help::NothingLeft;
            }
            self.job = Some(Job::new(self.kernel, self.cfg, self.params, self.opts, self.next, self.total, 1));
        }
        let job = self.job.as_ref().expect("set above");
        job.ask_help(&mut self.waits, &mut self.cur, &mut self.end)
    }

    fn block_ended(&mut self) {
        if let Some(j) = &self.job {
            j.block_ended(&mut self.waits);
        }
    }
}

/// Runs this thread's share of the job on its worker (`summoned`: asked for by a
/// spinning block).
fn work(job: &Arc<Job>, summoned: bool) -> Option<(WorkerResult, ExecStats)> {
    with_worker(&job.opts, |w| {
        let before = w.stats;
        let mut share = Share { job, cur: 0, end: 0, summoned, waits: false };
        let r = w.run(&job.kernel, &job.cfg, &job.params.0, &job.opts, &mut share, true);
        (r, w.stats.since(&before))
    })
    .ok()
}

struct Pool {
    queue: Mutex<PoolState>,
    wake: Condvar,
}

/// A job waiting for a helper; `summoned`: asked for by a spinning block.
struct Entry {
    job: Arc<Job>,
    summoned: bool,
}

struct PoolState {
    jobs: VecDeque<Entry>,
    helpers: usize,
    /// Helpers waiting for a job.
    idle: usize,
}

fn pool() -> &'static Pool {
    static P: OnceLock<Pool> = OnceLock::new();
    P.get_or_init(|| Pool { queue: Mutex::new(PoolState { jobs: VecDeque::new(), helpers: 0, idle: 0 }), wake: Condvar::new() })
}

fn helper_loop() {
    scheduler::prepare_thread();
    let p = pool();
    loop {
        let Entry { job, summoned } = {
            let mut q = p.queue.lock().unwrap_or_else(|e| e.into_inner());
            loop {
                if let Some(j) = q.jobs.pop_front() {
                    break j;
                }
                q.idle += 1;
                q = p.wake.wait(q).unwrap_or_else(|e| e.into_inner());
                q.idle -= 1;
            }
        };
        let joined = {
            let mut s = job.state.lock().unwrap_or_else(|e| e.into_inner());
            s.active += s.open as usize;
            s.open
        };
        let r = if joined { work(&job, summoned) } else { None };
        if summoned {
            job.helper_left();
        }
        if !joined {
            continue;
        }
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
    let job = Job::new(kernel, cfg, params, opts, 0, total, (total / (workers * 32)).clamp(1, 64));
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
            q.jobs.push_back(Entry { job: job.clone(), summoned: false });
        }
        p.wake.notify_all();
    }
    let mine = work(&job, false);
    finish(&job, mine, kernel, opts)
}

/// The launching thread's share is done (`mine`): waits for the job's helpers and
/// merges what every worker found, as one worker would have reported it. Helpers may
/// still join while others run (a spinning block may hand positions back and ask for
/// one after the launching thread found none left); the job closes once none runs.
pub(crate) fn finish(job: &Arc<Job>, mine: Option<(WorkerResult, ExecStats)>, kernel: &KernelRef, opts: &ExecOptions) -> LaunchOutcome {
    let results = {
        let mut s = job.state.lock().unwrap_or_else(|e| e.into_inner());
        while s.active > 0 {
            s = job.done.wait(s).unwrap_or_else(|e| e.into_inner());
        }
        s.open = false;
        std::mem::take(&mut s.results)
    };
    {
        let mut q = pool().queue.lock().unwrap_or_else(|e| e.into_inner());
        q.jobs.retain(|j| !Arc::ptr_eq(&j.job, job));
    }
    let Some((mine, _)) = mine else {
        return LaunchOutcome::refused(format!("kernel {}: launched from inside a running kernel", kernel.name));
    };
    let mut all = vec![mine];
    let mut helper_stats = ExecStats::default();
    for (r, st) in results {
        helper_stats.add_work(&st);
        all.push(r);
    }
    let _ = with_worker(opts, |w| w.stats.add_work(&helper_stats));
    let first = all.iter().filter_map(|r| r.failure.as_ref()).min_by_key(|(p, _)| *p).cloned();
    let upto = first.as_ref().map(|(p, _)| *p);
    let hazards = HazardLog::merge(all.into_iter().filter_map(|r| r.log), upto);
    LaunchOutcome { result: first.map_or(Ok(()), |(_, f)| Err(f)), hazards }
}

#[cfg(test)]
mod tests {
    use super::*;
    use simtwin_abi::kernel::ThreadCtx;

    unsafe extern "C" fn never_run(_: *const *mut c_void, _: *mut ThreadCtx, _: u32, _: u32) {
        unreachable!("the bookkeeping tests run no kernel")
    }
    unsafe extern "C" fn no_slot() -> *mut *mut ThreadCtx {
        std::ptr::null_mut()
    }

    fn job(total: u64, chunk: u64, resident: u32) -> Arc<Job> {
        let k = KernelRef { name: "k".into(), run: never_run, ctx_slot: no_slot, shared_in_tls: true };
        let cfg = LaunchConfig { grid: [total as u32, 1, 1], block: [32, 1, 1], dyn_smem_bytes: 0, smem_prefix: 0, grid_workspace: 0 };
        let opts = ExecOptions { workers: 1, resident_blocks: resident, ..ExecOptions::default() };
        Job::new(&k, &cfg, &[], &opts, 0, total, chunk)
    }

    #[test]
    fn the_helper_limit_counts_helpers_in_the_job_not_helpers_ever_asked_for() {
        // 4 resident blocks, one worker: 3 helpers at once.
        let j = job(100, 4, 4);
        assert!(j.reserve_helper() && j.reserve_helper() && j.reserve_helper());
        assert!(!j.reserve_helper(), "a fourth helper is one block more than the device holds");
        j.helper_left();
        assert!(j.reserve_helper(), "a helper left: another may be asked for");
        assert!(!j.reserve_helper());
    }

    #[test]
    fn a_helper_leaves_between_chunks_while_no_block_waits_but_never_leaves_a_chunk_handed_back() {
        let j = job(100, 4, 8);
        let (mut cur, mut end) = (0, 0);
        // The launch's own worker never leaves while positions are left.
        assert_eq!(j.next_position(&mut cur, &mut end, false), Some(0));
        // A helper asked for: no block waits, so it takes no new chunk.
        let (mut hc, mut he) = (0, 0);
        assert_eq!(j.next_position(&mut hc, &mut he, true), None);
        // The worker's block spins: its chunk's unstarted blocks go back and it waits
        // (what `ask_help` does before it summons a helper).
        j.hand_back(&mut cur, &mut end);
        j.waiting.fetch_add(1, Relaxed);
        let mut waits = true;
        assert_eq!(j.next_position(&mut hc, &mut he, true), Some(1), "the handed-back chunk first");
        // The waiting block ends; the helper finishes its chunk, then leaves.
        j.block_ended(&mut waits);
        assert_eq!(j.waiting.load(Relaxed), 0);
        assert_eq!((j.next_position(&mut hc, &mut he, true), j.next_position(&mut hc, &mut he, true)), (Some(2), Some(3)));
        assert_eq!(j.next_position(&mut hc, &mut he, true), None);
        // A chunk handed back while no block waits is still taken.
        let (mut c2, mut e2) = (0, 0);
        assert_eq!(j.next_position(&mut c2, &mut e2, false), Some(4));
        j.hand_back(&mut c2, &mut e2);
        assert_eq!(j.next_position(&mut hc, &mut he, true), Some(5));
    }
}
