//! The scheduler: a worker runs the blocks it is given, one after another, and within
//! a block resumes fibers until every thread has finished, the launch stops, or nothing
//! can run (a deadlock).
//!
//! Within a block: threads whose rendezvous completed run first, in the order they were
//! released (the run queue); then ranges of threads that have not started (a new fiber
//! each); then threads that yielded. So that a warp spinning through rendezvous cannot
//! starve threads that have not started (the thread it waits for may be one), pending
//! ranges and yielded threads also get a turn after a long streak of run-queue resumes.
//!
//! A rendezvous is cheap by construction: the runtime entry records the arrival in the
//! block state (a few stores) and, when its thread must wait, switches straight to the
//! fiber of the next thread on the run queue ([`wait`]: one switch per thread); only
//! when the run queue is empty (or after a long streak) does it switch to the scheduler
//! loop, which starts pending ranges, wakes yielded threads, finishes ranges and detects
//! deadlock. When a thread of a range reaches a rendezvous it keeps its fiber (now
//! dedicated to that thread), sets `range_stop` so the range returns right after it,
//! and hands the rest of the range to the scheduler.
//!
//! Each OS thread has one worker, kept across launches (`with_worker`); while it runs a
//! launch it is also what the signal handlers ask about a fault or a watchdog probe on
//! that thread (`impl SignalTarget for Worker`).

use super::block::Block;
use super::current;
use super::deadlock;
use super::fault::{self, fault_failure, FaultInfo, Redirect, SignalTarget};
use super::fibers::{self, BlockFields, Event, Fiber, FiberPool, Home};
use super::hazard::{HazardLog, HazardMode};
use super::order::Sequence;
use super::race::SharedChecks;
use super::threads::{entry_fiber, Arrival, PREEMPTED};
use super::turns;
use super::types::{
    ExecOptions, ExecStats, KernelRef, LaunchConfig, LaunchFailure, CUDA_ERROR_LAUNCH_FAILED, CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES,
    CUDA_ERROR_LAUNCH_TIMEOUT, HAZARD_ERROR_CODE, MIN_STACK_SIZE,
};
use super::warp_ops;
use super::watchdog::{self, WatchState};
use crate::abi::{self, RunFn, ThreadCtx};
use std::cell::{Cell, RefCell};
use std::ffi::c_void;
use std::ptr;
use std::sync::Arc;
use std::time::Duration;

/// What [`Worker::barrier`] returns when the caller must wait (no barrier result is
/// this large: counts are at most the block size).
pub(crate) const BAR_WAIT: u64 = u64::MAX;
/// What [`Worker::barrier`] returns when the launch stops.
pub(crate) const BAR_STOP: u64 = u64::MAX - 1;

/// Run-queue resumes in a row after which pending ranges and yielded threads get a turn.
const FAIRNESS_STREAK: u32 = 4096;
/// Prefetch what the next two switches will touch while switching to the next fiber.
const PREFETCH: bool = true;

/// What is being launched, as the fibers need it.
pub(crate) struct KernelCall {
    pub name: Arc<str>,
    pub run: Option<RunFn>,
    pub params: *const *mut c_void,
    /// The kernel library's context slot for this OS thread.
    pub slot: *mut *mut ThreadCtx,
    pub fields: BlockFields,
    /// Dynamic shared memory of the running block.
    smem: Vec<u128>,
    /// The launch's grid workspace (`LaunchConfig::grid_workspace`; 0: none).
    pub grid_workspace: u64,
}

/// The fiber the scheduler resumed, read by the runtime entries and signal handlers.
pub(crate) struct Running {
    pub current: *mut Fiber,
    pub index: u32,
}

/// Where blocks come from: positions in the launch's block order.
pub(crate) trait Positions {
    /// The next position to run, or None when the worker is done.
    fn next(&mut self) -> Option<u64>;
    /// The block at `pos` failed: no position after it needs to run.
    fn failed(&mut self, pos: u64);
    /// The running block only spins (what it waits for is outside it): let another OS
    /// thread start the next positions concurrently.
    fn help(&mut self) -> Help {
        Help::NothingLeft
    }
    /// The running block ended (after `help`, it no longer waits).
    fn block_ended(&mut self) {}
}

/// What asking for help got.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Help {
    /// Another OS thread will start the next positions.
    Asked,
    /// No position is left to start (or the launch has one block).
    NothingLeft,
    /// As many blocks run at once as the device could hold resident: ask again later.
    Full,
}

/// What one worker brings back from a launch.
pub(crate) struct WorkerResult {
    pub failure: Option<(u64, LaunchFailure)>,
    /// The hazards it saw; None when it saw none.
    pub log: Option<HazardLog>,
}

/// An OS thread's executor: its fibers and the state of the launch it runs.
pub(crate) struct Worker {
    pub fibers: FiberPool,
    /// Where the scheduler loop is suspended while fibers run.
    pub home: Home,
    /// Run-queue resumes since the scheduler last started a pending range or woke
    /// yielded threads (see `FAIRNESS_STREAK`).
    streak: u32,
    pub call: KernelCall,
    pub block: Block,
    pub running: Running,
    pub log: HazardLog,
    /// Why the launch stops, as far as a fiber or a signal handler said.
    pub stop: Stopping,
    /// Created at the first launch with a watchdog.
    pub watch: Option<Arc<WatchState>>,
    pub stats: ExecStats,
    /// Shared-memory checks (`EMU_CUDA_CHECKS`), created at the first checked launch.
    pub checks: Option<Box<SharedChecks>>,
    /// Where the running launch's blocks come from (null outside `run`): asked for help
    /// when a block only spins.
    positions: Option<*mut dyn Positions>,
    /// The running block's progress (live threads, completed rendezvous) when the
    /// scheduler last found only spinning threads to run (see `spinning`).
    spin_mark: (u32, u64),
    /// Help was asked for the running block.
    helped: bool,
    /// The running block's turn to resume its spinning threads (`turns`): taken when it
    /// still only spins after help came, given on at its next round or its end.
    turn: Option<turns::Turn>,
}

/// What fibers and signal handlers report about a stop, for the scheduler to turn into
/// the launch's failure.
#[derive(Default)]
pub(crate) struct Stopping {
    /// Set by a runtime entry that stops the launch (a trap, an unsupported op).
    pub failure: Option<LaunchFailure>,
    /// What the fault handler saw.
    pub fault: FaultInfo,
    /// Where the running thread was when a runtime entry stopped a timed-out launch.
    pub at: Option<(u32, String)>,
}

thread_local! {
    /// This OS thread's worker (its fibers persist across launches).
    static WORKER: RefCell<Option<Box<Worker>>> = const { RefCell::new(None) };

    /// The worker running a launch on this OS thread (null outside launches). Read by
    /// the runtime entry points and by the signal handlers (const-initialised, no
    /// destructor: safe to read from a signal handler).
    static CURRENT: Cell<*mut Worker> = const { Cell::new(ptr::null_mut()) };
}

/// How often a worker whose block holds a turn probes itself while other spinning
/// blocks wait for one: a resumed spinner is preempted at the first probe that finds it
/// in kernel code, so a turn lasts about this per spinning thread, and a pass over
/// hundreds of waiting blocks takes milliseconds (a reverse chain of 512 blocks
/// advances one block a pass).
const TURN_BUDGET: Duration = Duration::from_micros(40);

/// How long a spinning block waits for a turn before it resumes its spinners anyway (a
/// holder spinning where nothing can preempt it must not stop the others for good).
const TURN_PATIENCE: Duration = Duration::from_secs(1);

/// Runs `f` on this OS thread's worker (created on first use).
pub(crate) fn with_worker<R>(opts: &ExecOptions, f: impl FnOnce(&mut Worker) -> R) -> Result<R, &'static str> {
    WORKER
        .try_with(|cell| {
            let Ok(mut slot) = cell.try_borrow_mut() else {
                return Err("launched from inside a running kernel");
            };
            let w = slot.get_or_insert_with(|| Box::new(Worker::new(opts.stack_size.max(MIN_STACK_SIZE))));
            Ok(f(w))
        })
        .unwrap_or(Err("launched while the thread exits"))
}

/// Whether this OS thread's worker can take a launch (it is not running one).
pub(crate) fn worker_free() -> bool {
    WORKER.try_with(|cell| cell.try_borrow_mut().is_ok()).unwrap_or(false)
}

/// This OS thread's executor counters.
pub(crate) fn stats() -> ExecStats {
    WORKER.try_with(|cell| cell.try_borrow().ok().and_then(|w| w.as_ref().map(|w| w.stats)).unwrap_or_default()).unwrap_or_default()
}

/// Makes this OS thread ready to run kernels: the fault handler (answered by the
/// worker) and an alternate signal stack.
pub(crate) fn prepare_thread() {
    fault::prepare_thread::<Worker>();
}

/// The worker running a launch on this OS thread, or null.
#[inline(always)]
pub(crate) fn current_worker() -> *mut Worker {
    CURRENT.with(|c| c.get())
}

impl Worker {
    pub fn new(stack_size: usize) -> Self {
        Worker {
            fibers: FiberPool::new(stack_size),
            home: Home::new(range_end),
            streak: 0,
            call: KernelCall {
                name: Arc::from(""),
                run: None,
                params: ptr::null(),
                slot: ptr::null_mut(),
                fields: BlockFields::default(),
                smem: Vec::new(),
                grid_workspace: 0,
            },
            block: Block::new(),
            running: Running { current: ptr::null_mut(), index: 0 },
            log: HazardLog::idle(HazardMode::Warn),
            stop: Stopping::default(),
            watch: None,
            stats: ExecStats::default(),
            checks: None,
            positions: None,
            spin_mark: (0, 0),
            helped: false,
            turn: None,
        }
    }

    /// Runs the blocks `positions` hands out. `self` must stay at a fixed address (the
    /// worker lives in a Box in thread-local storage).
    pub fn run(
        &mut self,
        kernel: &KernelRef,
        cfg: &LaunchConfig,
        params: &[*mut c_void],
        opts: &ExecOptions,
        positions: &mut dyn Positions,
        several: bool,
    ) -> WorkerResult {
        self.fibers.set_stack_size(opts.stack_size.max(MIN_STACK_SIZE));
        let created = self.fibers.created;
        self.stats.launches += 1;
        self.log.begin(opts.hazards, &kernel.name, several);
        self.stop = Stopping::default();
        // SAFETY: the kernel library's ctx_slot returns the address of this OS thread's slot.
        let slot = unsafe { (kernel.ctx_slot)() };
        if slot.is_null() {
            let f = LaunchFailure {
                address: None,
                code: CUDA_ERROR_LAUNCH_FAILED,
                message: format!("kernel {}: its library returned no context slot", kernel.name),
            };
            let pos = positions.next().unwrap_or(0);
            positions.failed(pos);
            return WorkerResult { failure: Some((pos, f)), log: self.log.take() };
        }
        current::note_slot(slot);
        let c = &mut self.call;
        c.slot = slot;
        if !Arc::ptr_eq(&c.name, &kernel.name) {
            c.name = kernel.name.clone();
        }
        c.run = Some(kernel.run);
        c.params = params.as_ptr();
        c.grid_workspace = cfg.grid_workspace;
        let prefix = cfg.smem_prefix.div_ceil(16) * 16;
        let words = (prefix + cfg.dyn_smem_bytes).div_ceil(16).max(1);
        if c.smem.len() < words {
            c.smem.resize(words, 0);
        }
        let [bx, by, bz] = cfg.block;
        let [gx, gy, gz] = cfg.grid;
        c.fields.block_dim = abi::Dim3 { x: bx, y: by, z: bz };
        c.fields.grid_dim = abi::Dim3 { x: gx, y: gy, z: gz };
        // SAFETY: `prefix` bytes lie inside the buffer just sized.
        c.fields.dyn_smem = unsafe { c.smem.as_mut_ptr().cast::<u8>().add(prefix) }.cast();
        c.fields.dyn_smem_size = cfg.dyn_smem_bytes as u64;
        if opts.checks.any() || self.checks.is_some() {
            // The window (static prefix and dynamic part) is what the checks watch.
            let start = c.smem.as_ptr() as usize;
            SharedChecks::begin_launch(
                &mut self.checks,
                opts.checks,
                kernel.run as usize,
                kernel.shared_in_tls,
                start,
                prefix + cfg.dyn_smem_bytes,
                &mut self.block.threads,
            );
        }
        let n = bx * by * bz;
        let seq = Sequence::new(gx as u64 * gy as u64 * gz as u64, opts.block_order);

        let watchdog = !opts.watchdog.is_zero() || !opts.preempt.is_zero();
        if watchdog {
            let w = self.watch.get_or_insert_with(|| {
                fault::install_probe_handler::<Worker>();
                WatchState::register()
            });
            w.begin(opts.watchdog, opts.preempt, kernel.run as usize);
        }
        // SAFETY: only the lifetime is erased: the pointer is cleared before `run` returns.
        self.positions =
            Some(unsafe { std::mem::transmute::<&mut dyn Positions, &'static mut dyn Positions>(positions) } as *mut dyn Positions);
        let me: *mut Worker = self;
        let prev = CURRENT.with(|c| c.replace(me));
        let mut failure = None;
        // SAFETY: `positions` (the caller's) outlives this loop; the scheduler's own
        // uses of it (`spinning`) happen between fiber switches, never during these calls.
        while let Some(pos) = unsafe { (*self.positions.expect("set above")).next() } {
            let linear = seq.block_at(pos);
            // No division for the blocks of a grid's first row (every block of a 1-D
            // grid); two (each with its remainder) for the others.
            let (x, y, z) = if linear < gx as u64 {
                (linear as u32, 0, 0)
            } else {
                let (row, x) = (linear / gx as u64, linear % gx as u64);
                (x as u32, (row % gy as u64) as u32, (row / gy as u64) as u32)
            };
            self.call.fields.block_idx = abi::Dim3 { x, y, z };
            self.log.block = [x, y, z];
            self.log.pos = pos;
            self.block.reset(n);
            self.block.threads.lanes_one = !opts.lanes;
            if let Some(c) = self.checks.as_deref_mut().filter(|_| opts.checks.any()) {
                c.begin_block(&mut self.block.threads);
            }
            self.streak = 0;
            self.stats.blocks += 1;
            self.spin_mark = (n, self.block.threads.completed.total());
            self.helped = false;
            if let Some(w) = &self.watch {
                w.set_spinning(false);
                w.block_started();
            }
            // SAFETY: `me` is this worker at a fixed address; fibers run only inside.
            let r = unsafe { run_block(me) };
            self.end_turn();
            // SAFETY: as above.
            unsafe { (*self.positions.expect("set above")).block_ended() };
            // A block that failed (timed out, faulted) is no progress for the blocks
            // that wait on others: they time out too.
            if let Some(w) = self.watch.as_ref().filter(|_| r.is_ok()) {
                w.block_finished();
            }
            if !self.block.threads.slow {
                self.stats.fast_blocks += 1;
            }
            if let Err(f) = r {
                // SAFETY: as above.
                unsafe { (*self.positions.expect("set above")).failed(pos) };
                failure = Some((pos, f));
                break;
            }
        }
        self.positions = None;
        let done = std::mem::take(&mut self.block.threads.completed);
        self.stats.barriers += done.barriers;
        self.stats.warp_collectives += done.collectives;
        self.stats.activemask_groups += done.convergences;
        self.stats.yields += done.yields;
        self.stats.fibers_created += self.fibers.created - created;
        if watchdog {
            if let Some(w) = &self.watch {
                w.end();
            }
        }
        CURRENT.with(|c| c.set(prev));
        // SAFETY: the slot is valid for this OS thread; clear it so nothing dangles.
        unsafe { *self.call.slot = ptr::null_mut() };
        self.call.run = None;
        WorkerResult { failure, log: self.log.take() }
    }

    // ---- the runtime entries' safe side ----------------------------------------------

    /// Brings block state up to date with the running fiber: threads of its range
    /// before the caller have finished. Returns the caller's (thread, fiber).
    #[inline(always)]
    pub fn enter(&mut self) -> (u32, u32) {
        let f = self.running.current;
        // SAFETY: `current` is the running fiber of this worker (the caller runs on it).
        let (tid, cursor) = unsafe { ((*f).ctx.linear_tid, (*f).cursor) };
        if !self.block.threads.slow || tid != cursor {
            self.catch_up(tid, cursor);
        }
        (tid, self.running.index)
    }

    /// `enter` for the entries that know their fiber `f` (the running one).
    #[inline(always)]
    fn enter_on(&mut self, f: *mut Fiber) -> (u32, u32) {
        // SAFETY: `f` is the running fiber of this worker (the caller runs on it).
        let (tid, cursor, fi) = unsafe { ((*f).ctx.linear_tid, (*f).cursor, (*f).index) };
        if !self.block.threads.slow || tid != cursor {
            self.catch_up(tid, cursor);
        }
        (tid, fi)
    }

    /// The block's first runtime call sets up its state; threads [cursor, tid) of the
    /// running range have finished.
    #[cold]
    #[inline(never)]
    fn catch_up(&mut self, tid: u32, cursor: u32) {
        if !self.block.threads.slow {
            self.block.begin_slow();
        }
        if tid != cursor {
            self.block.exit_range(cursor, tid, &mut self.log);
            self.fibers.get_mut(self.running.index).cursor = tid;
        }
    }

    /// The caller waits: the rest of its range goes to the scheduler as a new range.
    #[inline(always)]
    pub fn hand_off_range(&mut self, tid: u32) {
        self.hand_off_range_on(self.running.current, tid);
    }

    /// `hand_off_range` from the running fiber `f`.
    #[inline(always)]
    fn hand_off_range_on(&mut self, f: *mut Fiber, tid: u32) {
        // SAFETY: `f` is the running fiber of this worker (the caller runs on it).
        let f = unsafe { &mut *f };
        if f.end > tid + 1 {
            self.block.threads.queues.push_pending(tid + 1, f.end);
            f.end = tid + 1;
            // SAFETY: a plain store into the fiber's context; volatile because the
            // library's range loop polls it. A limit: the range starts no thread after
            // `tid` (a runner that checks after each thread returns on any non-zero).
            unsafe { ptr::write_volatile(ptr::addr_of_mut!(f.ctx.range_stop), tid + 1) };
        }
    }

    /// Completes an arrival: a thread that must wait hands the rest of its range on.
    #[inline(always)]
    fn settle(&mut self, a: Arrival, tid: u32) -> Arrival {
        if a == Arrival::Wait {
            self.hand_off_range(tid);
        }
        a
    }

    /// `__syncthreads` and its forms, called on the running fiber `f`: the result
    /// (`Done`), or [`BAR_WAIT`] or [`BAR_STOP`] (one word, so that the entry tests it
    /// in a register).
    #[inline(always)]
    pub fn barrier(&mut self, f: *mut Fiber, op: u32, pred: bool, site: abi::Site) -> u64 {
        if op > abi::bar::OR {
            self.fail_unsupported("barrier", op);
            return BAR_STOP;
        }
        let (tid, fi) = self.enter_on(f);
        if self.block.threads.stop {
            return BAR_STOP;
        }
        match self.block.arrive_barrier(tid, fi, op, pred, site, &mut self.log) {
            Arrival::Done(r, _) => r,
            Arrival::Wait => {
                self.hand_off_range_on(f, tid);
                BAR_WAIT
            }
            Arrival::Stop => BAR_STOP,
        }
    }

    /// A warp collective, called on the running fiber `f`.
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    pub fn warp(&mut self, f: *mut Fiber, op: u32, mask: u32, value: u64, arg: i32, width: i32, site: abi::Site) -> Arrival {
        // SAFETY: `f` is the running fiber of this worker (the caller runs on it).
        let (tid, cursor, fi) = unsafe { ((*f).ctx.linear_tid, (*f).cursor, (*f).index) };
        // The common case has no call before the arrival is recorded, so the operands
        // need not be kept (spilled) across one: a smaller frame for every suspended lane.
        if !warp_ops::is_known(op) || !self.block.threads.slow || tid != cursor || self.block.threads.stop {
            return self.warp_slow(f, op, mask, value, arg, width, site);
        }
        self.warp_arrive(f, tid, fi, op, mask, value, arg, width, site)
    }

    /// The common arrival at a warp collective, on the running fiber `f`: the block is
    /// set up, nothing stops, the caller is the last thread of its range and joins its
    /// warp's open collective without completing it (`Block::join_warp_fast`). True when
    /// it was recorded as waiting (the caller then waits); false, with nothing changed,
    /// otherwise (the caller takes the general path, `warp`).
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    pub fn warp_join_fast(&mut self, f: *mut Fiber, op: u32, mask: u32, value: u64, arg: i32, width: i32) -> bool {
        // SAFETY: `f` is the running fiber of this worker (the caller runs on it).
        let (tid, cursor, end, fi) = unsafe { ((*f).ctx.linear_tid, (*f).cursor, (*f).end, (*f).index) };
        let t = &self.block.threads;
        if !t.slow || t.stop || tid != cursor || end != tid + 1 {
            return false;
        }
        self.block.join_warp_fast(tid, fi, op, mask, value, arg, width)
    }

    /// `warp` when the op is unknown, the block's state is not set up, threads of the
    /// range before the caller have finished, or the launch stops.
    #[allow(clippy::too_many_arguments)]
    #[cold]
    #[inline(never)]
    fn warp_slow(&mut self, f: *mut Fiber, op: u32, mask: u32, value: u64, arg: i32, width: i32, site: abi::Site) -> Arrival {
        if !warp_ops::is_known(op) {
            return self.fail_unsupported("warp", op);
        }
        let (tid, fi) = self.enter_on(f);
        if self.block.threads.stop {
            return Arrival::Stop;
        }
        self.warp_arrive(f, tid, fi, op, mask, value, arg, width, site)
    }

    /// Thread `tid` on fiber `f` (index `fi`) arrives at a warp collective.
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    fn warp_arrive(
        &mut self,
        f: *mut Fiber,
        tid: u32,
        fi: u32,
        op: u32,
        mask: u32,
        value: u64,
        arg: i32,
        width: i32,
        site: abi::Site,
    ) -> Arrival {
        let a = self.block.arrive_warp(tid, fi, op, mask, value, arg, width, site, &mut self.log);
        if a == Arrival::Wait {
            self.hand_off_range_on(f, tid);
        }
        a
    }

    /// `__activemask()`.
    pub fn activemask(&mut self, site: abi::Site) -> Arrival {
        let (tid, fi) = self.enter();
        if self.block.threads.stop {
            return Arrival::Stop;
        }
        let a = self.block.arrive_activemask(tid, fi, site, &mut self.log);
        self.settle(a, tid)
    }

    /// `yield_now`: the caller lets every other runnable thread of the block run first.
    pub fn yield_now(&mut self, site: abi::Site) -> Arrival {
        let (tid, fi) = self.enter();
        if self.timed_out() {
            // Stopped while spinning: the report names it with the others that yield.
            self.block.threads.queues.yielded.push((tid, site));
            self.hand_off_range(tid);
            return Arrival::Stop;
        }
        if self.block.threads.stop {
            return Arrival::Stop;
        }
        self.fibers.get_mut(fi).last_yield = Some((tid, site));
        self.block.yield_thread(tid, fi, site, &mut self.log);
        self.settle(Arrival::Wait, tid)
    }

    /// The thread running kernel code on fiber `f` is preempted (the probe handler found
    /// it spinning for a time slice): it waits as after `__nanosleep`, the rest of its
    /// range goes to another fiber. `Done` when it goes on instead (the launch stops or
    /// timed out: the stop reaches it by other means).
    pub fn preempt(&mut self, f: *mut Fiber) -> Arrival {
        // A range runner names a thread in linear_tid before it checks range_stop: one
        // interrupted between that store and its return names a thread it no longer owns
        // (handed on to another fiber). It is about to return; preempting it would make
        // that thread wait here too and run twice.
        // SAFETY: `f` is the running fiber of this worker (the caller runs on it).
        if unsafe { (*f).ctx.linear_tid >= (*f).end } {
            return Arrival::Done(0, 0);
        }
        let (tid, fi) = self.enter_on(f);
        if self.timed_out() || self.block.threads.stop {
            return Arrival::Done(0, 0);
        }
        self.block.yield_thread(tid, fi, PREEMPTED, &mut self.log);
        self.stats.preemptions += 1;
        self.hand_off_range_on(f, tid);
        if let Some(s) = &self.watch {
            watchdog::preempted(s);
            s.set_spinning(true);
        }
        Arrival::Wait
    }

    /// The scheduler found nothing to run but threads that yielded or were preempted:
    /// when no thread of the block finished or met another since it last found that,
    /// the block waits for something outside it (a later block): ask for that block to
    /// start on another OS thread, once per block (again at each round while the
    /// launch runs as many blocks as the device could hold).
    fn spinning(&mut self) {
        let t = &self.block.threads;
        let mark = (t.live, t.completed.total());
        if mark == self.spin_mark && self.helped {
            // Still waiting for blocks on other OS threads: give the processor to them
            // and to the other spinning blocks, and resume the spinners in turn.
            self.next_turn();
        }
        if mark == self.spin_mark && !self.helped {
            // SAFETY: set for the duration of `run`, which this runs inside; no other
            // reference to the positions is live between fiber switches.
            let help = self.positions.map_or(Help::NothingLeft, |p| unsafe { (*p).help() });
            self.helped = help != Help::Full;
            if help == Help::Full {
                self.next_turn();
            }
            if help == Help::Asked {
                if let Some(w) = &self.watch {
                    w.set_waits_on_blocks();
                }
                self.stats.spin_helpers += 1;
                // Hazards of blocks run elsewhere are merged by position from now on.
                self.log.track_positions = true;
            }
        }
        self.spin_mark = mark;
    }

    /// Gives the block's turn on and waits for the next (first come, first served with
    /// every other spinning block); while blocks wait for turns, the spinners resumed
    /// are probed every [`TURN_BUDGET`] so that the turn is short. Without a watchdog
    /// (no probes, nothing preempts) it only gives the processor away for a moment.
    fn next_turn(&mut self) {
        self.end_turn();
        let Some(w) = self.watch.clone() else {
            std::thread::sleep(Duration::from_micros(200));
            return;
        };
        w.set_parked(true);
        let stop = |w: &WatchState| w.is_timed_out();
        self.turn = turns::take(TURN_PATIENCE, || stop(&w));
        w.set_parked(false);
        if self.turn.is_some() {
            self.stats.spin_turns += 1;
        } else {
            self.stats.spin_turns_missed += 1;
        }
        if self.turn.is_some() && turns::contended() {
            w.arm_budget(TURN_BUDGET);
        } else {
            // Nobody waits for a turn: the spinners go on at once, but the OS thread
            // that runs what they wait for may share this core (a loaded machine).
            std::thread::yield_now();
        }
    }

    /// The block's turn, if it holds one, goes to the next waiting block; its budget
    /// probes stop.
    fn end_turn(&mut self) {
        if self.turn.is_some() {
            if let Some(w) = &self.watch {
                w.arm_budget(Duration::ZERO);
            }
            self.turn = None;
        }
    }

    /// The scheduler's suspended context, to be continued with `event`.
    #[inline(always)]
    fn home_with(&mut self, event: Event) -> usize {
        self.home.event = event;
        self.home.saved_sp()
    }

    /// The watchdog found no progress.
    #[inline]
    pub fn timed_out(&self) -> bool {
        self.watch.as_ref().is_some_and(|w| w.is_timed_out())
    }

    /// Nothing of the block is left to run, and the launch has not timed out: what
    /// `next_slow` answers with Ok(None), without its call.
    #[inline(always)]
    fn drained(&self) -> bool {
        let q = &self.block.threads.queues;
        !q.has_pending() && q.yielded.is_empty() && q.peek_run().is_none() && !self.timed_out()
    }

    /// A runtime entry (`what`) found the launch timed out: the report names the
    /// running thread there.
    #[cold]
    pub fn stopped_in(&mut self, what: &str) {
        let t = self.running_thread();
        self.stop.at = Some((t, format!("in {what}")));
    }

    /// The running thread stops the launch with `code` and `message` (about it).
    pub fn fail(&mut self, code: u32, message: String) -> Arrival {
        if self.stop.failure.is_none() {
            self.stop.failure = Some(LaunchFailure { address: None, code, message });
        }
        Arrival::Stop
    }

    /// An operation code (`kind`: "barrier" or "warp") the executor does not know.
    #[cold]
    #[inline(never)]
    fn fail_unsupported(&mut self, kind: &str, op: u32) -> Arrival {
        let at = self.where_(self.running_thread());
        self.fail(CUDA_ERROR_LAUNCH_FAILED, format!("{at}: unsupported {kind} operation {op}"))
    }

    /// The thread on the running fiber.
    #[inline(always)]
    pub fn running_thread(&self) -> u32 {
        // SAFETY: as in `enter`.
        unsafe { (*self.running.current).ctx.linear_tid }
    }

    fn thread_coords(&self, tid: u32) -> [u32; 3] {
        let d = self.call.fields.block_dim;
        [tid % d.x, (tid / d.x) % d.y, tid / (d.x * d.y)]
    }

    /// "kernel K block (x,y,z) thread (x,y,z)" for reports.
    pub fn where_(&self, tid: u32) -> String {
        let b = self.call.fields.block_idx;
        let t = self.thread_coords(tid);
        format!("kernel {} block ({},{},{}) thread ({},{},{})", self.call.name, b.x, b.y, b.z, t[0], t[1], t[2])
    }

    fn block_text(&self) -> String {
        let b = self.call.fields.block_idx;
        format!("kernel {} block ({},{},{})", self.call.name, b.x, b.y, b.z)
    }

    // ---- failures ------------------------------------------------------------------

    /// After a stop: discard every fiber that still holds kernel frames.
    fn abandon(&mut self) {
        self.fibers.abandon_busy();
        self.block.threads.queues.clear();
    }

    fn hazard_failure(&self) -> LaunchFailure {
        let message = match self.log.last() {
            Some(h) => format!("{h} (EMU_CUDA_HAZARDS=error)"),
            None => format!("kernel {}: the launch stopped", self.call.name),
        };
        LaunchFailure { address: None, code: HAZARD_ERROR_CODE, message }
    }

    fn deadlock_failure(&mut self) -> LaunchFailure {
        let d = deadlock::report(&self.block);
        let message = format!("{}: {}", self.block_text(), d.message);
        self.log.record(d);
        LaunchFailure { address: None, code: CUDA_ERROR_LAUNCH_FAILED, message }
    }

    /// The launch made no progress for the watchdog's limit; `interrupted` is the fiber
    /// the watchdog redirected out of kernel code, if it did.
    fn timeout_failure(&mut self, interrupted: Option<u32>) -> LaunchFailure {
        let limit = self.watch.as_ref().map(|w| w.limit()).unwrap_or_default();
        let running = match interrupted {
            Some(fi) => {
                let t = self.fibers.get(fi).ctx.linear_tid;
                let pc = self.watch.as_ref().map(|w| w.interrupted_pc.load(std::sync::atomic::Ordering::Relaxed)).unwrap_or(0);
                Some((t, format!("was running kernel code {}", describe_pc(pc))))
            }
            None => self.stop.at.take(),
        };
        // The rest of the running thread's range has not started.
        let rest = match (interrupted, &running) {
            (Some(fi), Some((t, _))) => Some((*t + 1, self.fibers.get(fi).end)),
            (None, Some((t, _))) => Some((*t + 1, self.fibers.get(self.running.index).end)),
            _ => None,
        };
        if let Some((a, e)) = rest {
            if a < e {
                self.block.threads.queues.push_pending(a, e);
            }
        }
        // A thread that spins through `yield_now` is reported at its yield site, though
        // the watchdog found it between two yields.
        let yielded_at = interrupted.and_then(|fi| self.fibers.get(fi).last_yield);
        let running = match (running, yielded_at) {
            (Some((t, _)), Some((y, site))) if y == t => {
                self.block.threads.queues.yielded.push((t, site));
                None
            }
            (r, _) => r,
        };
        let places = deadlock::survey(&self.block, running);
        LaunchFailure {
            address: None,
            code: CUDA_ERROR_LAUNCH_TIMEOUT,
            message: format!(
                "{}: no progress for {:.1} s (watchdog, EMU_CUDA_WATCHDOG): no thread of the block finished or \
                 started while {}; a thread spinning on a flag that nothing can set any more, or a livelock",
                self.block_text(),
                limit.as_secs_f64(),
                if places.is_empty() { "nothing could be located".to_string() } else { places.join("; ") }
            ),
        }
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        if let Some(w) = &self.watch {
            WatchState::unregister(w);
        }
    }
}

/// "at pc 0x... (symbol+0x.. in library)" for reports.
fn describe_pc(pc: usize) -> String {
    if pc == 0 {
        return String::new();
    }
    match simtwin_abi::ffi::dl_info(pc as *const c_void) {
        Some(info) => match info.symbol {
            Some((name, start)) => format!("at pc {pc:#x} ({name}+{:#x} in {})", pc - start, info.file.display()),
            None => format!("at pc {pc:#x} (in {})", info.file.display()),
        },
        None => format!("at pc {pc:#x}"),
    }
}

impl Worker {
    /// Fiber `fi`'s range has ended: its threads have exited (which may complete
    /// rendezvous that waited for them) and the fiber goes back to the pool. True when
    /// an exit recorded an error-mode hazard (the launch stops).
    #[inline]
    fn range_ended(&mut self, fi: u32) -> bool {
        let fb = self.fibers.get(fi);
        let (a, e) = (fb.cursor, fb.end);
        if self.block.threads.slow {
            if e == a + 1 {
                self.block.exit_one(a, &mut self.log);
            } else {
                self.block.exit_range(a, e, &mut self.log);
            }
        }
        self.fibers.release(fi);
        if let Some(s) = &self.watch {
            s.progress();
        }
        self.block.threads.stop
    }

    /// Starts the next pending range on an idle fiber that exists, as the scheduler's
    /// slow path would when nothing is runnable; null when that needs the slow path (no
    /// pending range, no idle fiber, or a timed-out launch). Out of line, returning one
    /// register.
    #[inline(always)]
    fn start_pending(&mut self, me: *mut Worker) -> *mut Fiber {
        if self.timed_out() || !self.block.threads.queues.has_pending() {
            return ptr::null_mut();
        }
        let Some(fi) = self.fibers.take_existing() else { return ptr::null_mut() };
        let Some((a, e)) = self.block.threads.queues.pop_pending() else { return ptr::null_mut() };
        self.streak = 0;
        self.begin_range(fi, a, e, me);
        self.fibers.ptr(fi)
    }

    /// Gives fiber `fi` the thread range `a..e` of the running launch (counted, and
    /// progress for the watchdog): what starting a pending range means on either path.
    #[inline(always)]
    fn begin_range(&mut self, fi: u32, a: u32, e: u32, me: *mut Worker) {
        let c = &self.call;
        let run = c.run.expect("a launch is running");
        let home = ptr::addr_of_mut!(self.home);
        self.fibers.assign(fi, a, e, run, c.params, &c.fields, me.cast(), home);
        if self.block.threads.lanes_one {
            self.fibers.get_mut(fi).ctx.lanes = simtwin_abi::kernel::LANES_ONE;
        }
        self.stats.ranges_started += 1;
        if let Some(s) = &self.watch {
            s.progress();
        }
    }

    /// `start_pending` out of line: for the warp entry, whose frame (what a suspended
    /// lane keeps on its stack) grows by 16 bytes with it inline; the barrier entry and
    /// `range_end` measured faster with it inline (their frames do not grow).
    #[inline(never)]
    fn start_pending_outlined(&mut self, me: *mut Worker) -> *mut Fiber {
        self.start_pending(me)
    }

    /// The scheduler's slow path: the run queue is empty or had a long streak. Starts
    /// a pending range, or makes yielded threads runnable, or takes the run queue's
    /// head; None when nothing is left to run.
    #[cold]
    #[inline(never)]
    fn next_slow(&mut self, me: *mut Worker) -> Result<Option<u32>, LaunchFailure> {
        if self.timed_out() {
            return Err(self.stop_with(|w| w.timeout_failure(None)));
        }
        if let Some((a, e)) = self.block.threads.queues.pop_pending() {
            let fi = match self.fibers.take_idle() {
                Ok(fi) => fi,
                Err(e) => {
                    let name = self.call.name.clone();
                    return Err(self.stop_with(|_| LaunchFailure {
                        address: None,
                        code: CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES,
                        message: format!("kernel {name}: {e}"),
                    }));
                }
            };
            self.begin_range(fi, a, e, me);
            return Ok(Some(fi));
        }
        if !self.block.threads.queues.yielded.is_empty() {
            self.spinning();
            self.block.threads.resume_yielded();
        }
        Ok(self.block.threads.queues.pop_run().map(entry_fiber))
    }

    /// After a resume that did not end in a wait: a range finished, or the launch stops.
    #[cold]
    #[inline(never)]
    fn after_slow(&mut self, fi: u32, ev: Event) -> Result<(), LaunchFailure> {
        match ev {
            Event::Waiting => Ok(()),
            Event::ExitHazard => Err(self.stop_with(|w| w.hazard_failure())),
            Event::Stop => Err(self.stop_with(|w| {
                if w.timed_out() {
                    w.timeout_failure(None)
                } else {
                    w.stop.failure.take().unwrap_or_else(|| w.hazard_failure())
                }
            })),
            Event::Faulted => {
                if let Some(replayed) = self.replay_lanes_fault(fi) {
                    return replayed;
                }
                let at = self.where_(self.fibers.get(fi).ctx.linear_tid);
                let f = fault_failure(self.stop.fault, &at, self.fibers.get(fi).stack_limit, self.fibers.stack_size());
                self.fibers.renew(fi);
                Err(self.stop_with(|_| f))
            }
            Event::Interrupted => {
                let f = self.timeout_failure(Some(fi));
                self.fibers.renew(fi);
                Err(self.stop_with(|_| f))
            }
        }
    }

    /// A fault of fiber `fi` inside a chunk of vector lanes (simtwin-ptx `lanes`:
    /// `ctx.lanes` holds the chunk's size, `linear_tid` its first thread) names no thread:
    /// in a block not yet replayed, the fiber's range from that thread goes back to the
    /// pending ranges, which run one thread at a time from now on (`ctx.lanes` =
    /// `LANES_ONE`), so the fault names the thread whose access makes it. None for any
    /// other fault. The threads the chunk ran before the fault run again: the launch fails
    /// either way, and a thread's own global accesses give it the same address as before
    /// unless an earlier thread of the chunk stored into the memory it reads its address
    /// from.
    fn replay_lanes_fault(&mut self, fi: u32) -> Option<Result<(), LaunchFailure>> {
        let f = self.fibers.get(fi);
        let (lanes, t, end) = (f.ctx.lanes, f.ctx.linear_tid, f.end);
        if lanes == 0 || lanes == simtwin_abi::kernel::LANES_ONE || self.block.threads.lanes_one || t < f.cursor || t >= end {
            return None;
        }
        self.block.threads.queues.push_pending(t, end);
        self.block.threads.lanes_one = true;
        // The threads before the chunk finished.
        self.fibers.get_mut(fi).end = t;
        let stop = self.range_ended(fi);
        self.fibers.renew(fi);
        Some(if stop { Err(self.stop_with(|w| w.hazard_failure())) } else { Ok(()) })
    }

    /// Builds the failure, then abandons the block's fibers.
    fn stop_with(&mut self, failure: impl FnOnce(&mut Worker) -> LaunchFailure) -> LaunchFailure {
        let f = failure(self);
        self.abandon();
        f
    }
}

/// Makes fiber `f` (index `fi`) the running one: the runtime entries and the signal
/// handlers find it through `running`, the kernel library through its context slot.
#[inline(always)]
fn make_running(w: &mut Worker, f: *mut Fiber, fi: u32) {
    // SAFETY: the slot is this OS thread's context slot of the kernel library; the
    // fiber does not move, so the context address stays valid while it runs.
    unsafe { *w.call.slot = ptr::addr_of_mut!((*f).ctx) };
    w.running = Running { current: f, index: fi };
    w.stats.fiber_resumes += 1;
}

/// The next thread on the run queue, as the fiber to continue, unless the streak of
/// run-queue resumes is long enough to give pending ranges and yielded threads a turn.
#[inline(always)]
fn next_runnable(w: &mut Worker) -> Option<(*mut Fiber, u32)> {
    if w.streak >= FAIRNESS_STREAK {
        return None;
    }
    let fi = entry_fiber(w.block.threads.queues.pop_run()?);
    w.streak += 1;
    if PREFETCH {
        // Two ahead: the fiber after next (its saved stack pointer arrives meanwhile)
        // and the stack of the next one (whose fiber the previous switch prefetched).
        let q = &w.block.threads.queues;
        if let Some(next) = q.peek_run() {
            fibers::prefetch_stack(w.fibers.ptr(entry_fiber(next)));
            if let Some(after) = q.peek_run_at(1) {
                fibers::prefetch_fiber(w.fibers.ptr(entry_fiber(after)));
            }
        }
    }
    Some((w.fibers.ptr(fi), fi))
}

/// The running thread (on fiber `f`) waits at a rendezvous: continue the next runnable
/// thread's fiber directly, or the scheduler loop when there is none. Returns when the
/// rendezvous has released this thread and something continues it.
///
/// # Safety
/// Called from a runtime entry on fiber `f`, the running fiber of worker `w`, holding
/// no reference into the worker.
/// `INLINE_START`: whether starting a pending range is inlined here (see
/// `start_pending_outlined`).
#[inline(always)]
pub(crate) unsafe fn wait<const INLINE_START: bool>(w: *mut Worker, f: *mut Fiber) {
    // SAFETY: a short borrow, ended before the switch.
    let to = unsafe {
        let wk = &mut *w;
        match next_fiber::<INLINE_START>(w, wk) {
            Some(nf) => fibers::saved_sp(&*nf),
            None => wk.home_with(Event::Waiting),
        }
    };
    // SAFETY: `to` is a suspended context of this worker (a fiber whose thread is
    // runnable, a fresh range's fiber, or the scheduler); `f` is the running fiber.
    unsafe { fibers::switch_from(f, to) };
}

/// The fiber the running one continues when it cannot go on itself: the next runnable
/// thread's, else an idle one given the next pending range; made the running fiber.
/// None when the scheduler loop must decide.
#[inline(always)]
fn next_fiber<const INLINE_START: bool>(me: *mut Worker, w: &mut Worker) -> Option<*mut Fiber> {
    let next = match next_runnable(w) {
        Some(n) => Some(n),
        None if w.streak < FAIRNESS_STREAK => {
            let nf = if INLINE_START { w.start_pending(me) } else { w.start_pending_outlined(me) };
            // SAFETY: a fiber of this worker's pool when not null.
            (!nf.is_null()).then(|| (nf, unsafe { (*nf).index }))
        }
        None => None,
    };
    let (nf, fi) = next?;
    make_running(w, nf, fi);
    Some(nf)
}

/// The `range_end` hook of every worker's home, called on fiber `f` when its range has
/// ended: note the exits, then say what to continue: the next fiber (made the running
/// one), the scheduler (told why), or 0 when `f` took the next pending range itself.
///
/// # Safety
/// Runs on fiber `f`, whose context's `executor` is its worker (set by `assign`).
unsafe fn range_end(f: *mut Fiber) -> usize {
    // SAFETY: per the contract; a short borrow of the worker, ended before the switch.
    unsafe {
        let w = (*f).ctx.executor.cast::<Worker>();
        let wk = &mut *w;
        if wk.range_ended((*f).index) {
            return wk.home_with(Event::ExitHazard);
        }
        match next_fiber::<true>(w, wk) {
            Some(nf) if nf == f => 0,
            Some(nf) => fibers::saved_sp(&*nf),
            None => wk.home_with(Event::Waiting),
        }
    }
}

/// The running thread (on fiber `f`) stops the launch: its fiber goes back to the
/// scheduler for good (the scheduler abandons it).
///
/// # Safety
/// As [`wait`].
pub(crate) unsafe fn stop_forever(f: *mut Fiber) -> ! {
    loop {
        // SAFETY: per the contract.
        unsafe { fibers::to_home(f, Event::Stop) };
    }
}

/// The scheduler of one block: continue runnable threads, start pending ranges, until
/// every thread has finished, the launch stops, or nothing can run (deadlock). Fibers
/// continue each other while threads are runnable; the loop gets control back when
/// none is, when a range finishes, or when the launch stops.
///
/// # Safety
/// `w` is the worker of this OS thread, at a fixed address, registered as CURRENT; no
/// reference into it is held by the caller. Between switches this function takes short
/// borrows of it; while a fiber runs it holds none (the fibers' runtime entries borrow
/// it then).
unsafe fn run_block(w: *mut Worker) -> Result<(), LaunchFailure> {
    loop {
        // SAFETY: per the contract, no other reference into the worker is live here.
        let wk = unsafe { &mut *w };
        let (f, fi) = match next_runnable(wk) {
            Some(next) => next,
            None => {
                wk.streak = 0;
                // Inline what the slow path would do in the usual cases: start the next
                // pending range on an idle fiber (a block's first range), or end a block
                // with nothing left to run.
                let nf = wk.start_pending(w);
                if !nf.is_null() {
                    // SAFETY: a fiber of this worker's pool.
                    (nf, unsafe { (*nf).index })
                } else if wk.drained() {
                    break;
                } else {
                    match wk.next_slow(w)? {
                        Some(fi) => (wk.fibers.ptr(fi), fi),
                        None => break,
                    }
                }
            }
        };
        make_running(wk, f, fi);
        // SAFETY: `f` is a suspended fiber of this worker's pool, its home is this
        // worker's; we hold no reference into the worker across the switch (`wk` is not
        // used again).
        let ev = unsafe {
            let home = ptr::addr_of_mut!((*w).home);
            fibers::enter(home, f);
            (*home).event
        };
        if ev != Event::Waiting {
            // SAFETY: every fiber has switched back; their borrows ended. The fiber that
            // switched back is the running one (fibers continue each other).
            unsafe {
                let fi = (*w).running.index;
                (*w).after_slow(fi, ev)?
            };
        }
    }
    // SAFETY: as above.
    let wk = unsafe { &mut *w };
    wk.running.current = ptr::null_mut();
    if wk.block.threads.slow && wk.block.threads.live > 0 {
        return Err(wk.stop_with(|w| w.deadlock_failure()));
    }
    Ok(())
}

/// The signal handlers' questions, answered from the worker running a launch on the
/// signalled thread.
impl SignalTarget for Worker {
    unsafe fn fault(info: FaultInfo, sp: usize) -> Option<Redirect> {
        let w = current_worker();
        if w.is_null() {
            return None;
        }
        // SAFETY: CURRENT points to this thread's live worker; the faulting code is
        // suspended by the signal, so reading the running fiber races nothing.
        unsafe {
            let f = ptr::read_volatile(ptr::addr_of!((*w).running.current));
            if f.is_null() || !(*f).holds_stack_pointer(sp) {
                return None;
            }
            if let Some(r) = recover(f, sp) {
                return Some(r);
            }
            ptr::write_volatile(ptr::addr_of_mut!((*w).stop.fault), info);
            Some(take_over(w, Event::Faulted))
        }
    }

    unsafe fn probe(pc: usize, sp: usize) -> Option<Redirect> {
        let w = current_worker();
        if w.is_null() {
            return None;
        }
        // SAFETY: the worker of this thread is live while CURRENT points to it; the
        // handler reads plain words the interrupted code may be writing (same thread: no
        // tearing). The watch lives as long as the worker; its borrow ends before the
        // worker is borrowed to preempt.
        let (f, due) = unsafe {
            let s = (*w).watch.as_deref()?;
            let f = ptr::read_volatile(ptr::addr_of!((*w).running.current));
            if watchdog::on_probe(s, f, pc, sp) {
                return Some(take_over(w, Event::Interrupted));
            }
            let switches = ptr::read_volatile(ptr::addr_of!((*w).stats.fiber_resumes));
            (f, watchdog::preempt_due(s, f, pc, sp, switches))
        };
        if due {
            // SAFETY: `preempt_due` checked that `f`, the running fiber, was interrupted in
            // kernel code on its own stack: no executor code is under way on this thread.
            unsafe { preempt(w, f) };
        }
        None
    }

    fn on_worker_thread() -> bool {
        !current_worker().is_null()
    }
}

/// Preempts the running fiber `f` of `w` from the probe handler that interrupted its
/// kernel code: it stays suspended here, inside the handler (whose frame is on the
/// fiber's stack and holds every register of the interrupted code), while other threads
/// run; when it is resumed the handler returns and the kernel code goes on.
///
/// # Safety
/// From the probe handler, on fiber `f`, which it interrupted in kernel code.
unsafe fn preempt(w: *mut Worker, f: *mut Fiber) {
    // Other fibers may be preempted while this one is suspended in its handler.
    fault::unblock_probe();
    // SAFETY: `f` is the running fiber; per the contract no borrow of the worker is
    // live on this thread (kernel code was running), and this one ends before the switch.
    unsafe {
        (*f).set_in_kernel(false);
        match (*w).preempt(f) {
            Arrival::Wait => wait::<false>(w, f),
            Arrival::Done(..) => {}
            Arrival::Stop => stop_forever(f),
        }
        (*f).set_in_kernel(true);
    }
}

/// Where a fault at stack pointer `sp` of the running fiber `f` continues when its kernel
/// code set a recovery point (`Fiber::recover`, through the runtime's `recover_slot`: a stretch the runner can undo and run
/// again another way, simtwin-ptx's vectors of lanes): the record's landing, entered as a
/// call would enter it, below the interrupted frame's red zone. The point is cleared
/// first, so a fault in the landing (or in what the runner does next) ends the thread as
/// any fault does; None where there is no point, the fault is in executor code, or too
/// little stack is left.
///
/// # Safety
/// From the fault handler, `f` the running fiber of this thread, `sp` on its stack.
unsafe fn recover(f: *mut Fiber, sp: usize) -> Option<Redirect> {
    // SAFETY: per the contract `f` is live and suspended by the signal on this thread.
    unsafe {
        let at = ptr::addr_of_mut!((*f).recover);
        let rec = ptr::read_volatile(at);
        if rec.is_null() || !(*f).in_kernel.load(std::sync::atomic::Ordering::Relaxed) {
            return None;
        }
        ptr::write_volatile(at, ptr::null_mut());
        let rsp = (sp.checked_sub(512)? & !15) - 8;
        if rsp < (*f).stack_limit + 2 * 4096 {
            return None;
        }
        // The record lives in the runner's frame, on this fiber's stack.
        let landing = ptr::read_volatile(ptr::addr_of!((*rec).landing));
        Some(Redirect { rip: landing as usize, rsp })
    }
}

/// A signal handler takes the running fiber of `w` over: the scheduler continues with
/// `event`, and the fiber's frames are abandoned.
///
/// # Safety
/// From a signal handler that interrupted the running fiber of `w` (on its stack).
unsafe fn take_over(w: *mut Worker, event: Event) -> Redirect {
    // SAFETY: per the contract the scheduler is suspended in its home.
    unsafe {
        let home = ptr::addr_of_mut!((*w).home);
        ptr::write_volatile(ptr::addr_of_mut!((*home).event), event);
        let (rip, rsp) = (*home).redirect();
        Redirect { rip, rsp }
    }
}
