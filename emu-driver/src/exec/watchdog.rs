//! Forward progress, both ways: a thread spinning on a flag another thread sets is
//! preempted so that the other runs (as on a device with independent thread scheduling,
//! sm_70+), and a launch that stops making progress ends with
//! CUDA_ERROR_LAUNCH_TIMEOUT (702) after `ExecOptions::watchdog`, with a report of where
//! each thread is, instead of hanging the process.
//!
//! Progress means threads finishing or starting: a block starting, a range of threads
//! starting on a fiber, a range ending, or (sampled) a range moving on to its next
//! thread. Rendezvous do not count: `while (!flag) __syncwarp();` with nobody left
//! to set the flag is a livelock, not progress. A block whose threads all run longer
//! than the watchdog without any of them finishing is therefore stopped too: raise the
//! limit (or set it to zero, off) for kernels that legitimately do that.
//!
//! Preemption (`ExecOptions::preempt`, a time slice): while a launch runs, the monitor
//! probes its worker every slice. The probe handler runs on the worker's thread; when the
//! same thread has been running kernel code on the same fiber since the previous probe
//! (no switch, no thread started or finished), in the kernel library's own code and on
//! the fiber's stack, and the library's runner checks `range_stop` before each thread
//! (`ThreadCtx::reserved`), the scheduler suspends the thread right there, inside the
//! handler, as if it had called `__nanosleep` (`Worker::preempt`): the rest of its range
//! moves to another fiber, every other runnable thread runs, and when it is resumed the
//! handler returns into the interrupted code (the kernel restores every register). Then a
//! block whose threads only spin is stuck on something outside it: the scheduler lets a
//! later block start on another OS thread (`Positions::help`).
//!
//! Mechanism: one monitor thread per process watches every worker that runs a launch
//! with a watchdog or a time slice. It reads each worker's progress counter; when a counter has not
//! moved for a tick (limit/8, 5 ms to 250 ms) it sends the worker's OS thread a probe
//! signal. The probe handler runs on the worker's thread, so it can look at the fiber
//! being run without racing it: it samples the running thread's index, and when neither
//! that nor the counter has moved for the whole limit it marks the launch timed out.
//! Then:
//! - a thread that spins in kernel code (no runtime call at all) is redirected, like a
//!   faulting fiber, to return to the scheduler: only when the probe lands in the
//!   kernel library's own code (not in the executor, not in libc, where a lock could be
//!   held), on the fiber's stack; the monitor keeps probing until one does;
//! - a thread that spins through the runtime (`yield_now`, `clock`, ...) is stopped at
//!   its next runtime call, and the scheduler checks the mark between resumes.
//!
//! Limits: a kernel blocked inside a system call (a read that never returns) is not
//! interrupted; a thread that blocks the probe signal (`SIGRTMAX-3`) is never probed;
//! the signal's previous handler, if the program installed one, gets every probe that
//! is not for a running launch.

use super::fault::probe_signal;
use super::fibers::Fiber;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicUsize, Ordering::*};
use std::sync::{Arc, Mutex, OnceLock};
use std::thread::Thread;
use std::time::{Duration, Instant};

/// A worker's side of the watchdog, shared with the monitor thread.
pub(crate) struct WatchState {
    /// The worker's OS thread id (probe target).
    tid: i32,
    /// Odd while a launch with a watchdog runs on the worker.
    epoch: AtomicU64,
    /// Progress events (written by the worker thread only).
    events: AtomicU64,
    /// The limit of the running launch, in nanoseconds.
    limit_ns: AtomicU64,
    /// Set when the launch made no progress for the limit.
    pub timed_out: AtomicBool,
    /// The running kernel's entry (to find its library's code).
    run_addr: AtomicUsize,
    /// The executable range of the kernel library (0, 0 until looked up).
    text_lo: AtomicUsize,
    text_hi: AtomicUsize,
    /// The probe handler's last sample and when something last moved.
    seen_events: AtomicU64,
    seen_fiber: AtomicUsize,
    seen_thread: AtomicU32,
    /// When the sample last moved; [`NOT_STAMPED`] from a launch's start to its first
    /// probe.
    seen_at_ns: AtomicU64,
    /// Where the redirected fiber was.
    pub interrupted_pc: AtomicUsize,
    /// The time slice of the running launch in nanoseconds (0: no preemption).
    slice_ns: AtomicU64,
    /// A thread of the running block was preempted: it spins, probes come at a tenth
    /// of the slice (a spinner resumed to look at its flag again gives way sooner).
    spinning: AtomicBool,
    /// The running block asked for later blocks to start elsewhere (it spins on them):
    /// blocks starting on any worker count as its progress too.
    waits_on_blocks: AtomicBool,
    /// What the previous probe saw, for preemption: fiber, thread and switch count.
    pre_fiber: AtomicUsize,
    pre_thread: AtomicU32,
    pre_switches: AtomicU64,
    /// A fiber due for preemption that the probe found inside a runtime call (a spinner
    /// polling `clock64()` or fencing spends most of its time there, where it cannot be
    /// suspended): it is preempted at its next such call ([`take_preempt_at_call`]).
    preempt_at_call: AtomicUsize,
    /// The worker waits for a turn (`turns`): it runs nothing, the monitor leaves it be.
    parked: AtomicBool,
    /// The worker's budget timer (a `timer_t`, 0 until first armed): probes its own OS
    /// thread every few tens of microseconds while spinning blocks wait for turns, so a
    /// resumed spinner gives its turn on after a short budget, not after the monitor's
    /// slice.
    budget_timer: AtomicUsize,
    /// The budget timer is armed: the block resumed its spinners for a short turn, and
    /// any probe that lands in preemptible kernel code ends it (no second probe needed to
    /// see the thread still there: the turn itself is the slice).
    on_budget: AtomicBool,
}

impl WatchState {
    fn new() -> Self {
        WatchState {
            // SAFETY: gettid has no preconditions.
            tid: unsafe { libc::syscall(libc::SYS_gettid) } as i32,
            epoch: AtomicU64::new(0),
            events: AtomicU64::new(0),
            limit_ns: AtomicU64::new(0),
            timed_out: AtomicBool::new(false),
            run_addr: AtomicUsize::new(0),
            text_lo: AtomicUsize::new(0),
            text_hi: AtomicUsize::new(0),
            seen_events: AtomicU64::new(0),
            seen_fiber: AtomicUsize::new(0),
            seen_thread: AtomicU32::new(u32::MAX),
            seen_at_ns: AtomicU64::new(0),
            interrupted_pc: AtomicUsize::new(0),
            slice_ns: AtomicU64::new(0),
            spinning: AtomicBool::new(false),
            waits_on_blocks: AtomicBool::new(false),
            pre_fiber: AtomicUsize::new(0),
            pre_thread: AtomicU32::new(u32::MAX),
            pre_switches: AtomicU64::new(0),
            preempt_at_call: AtomicUsize::new(0),
            parked: AtomicBool::new(false),
            budget_timer: AtomicUsize::new(0),
            on_budget: AtomicBool::new(false),
        }
    }

    /// Registers a watch for the calling OS thread (its worker) and starts the monitor.
    /// The probe handler must be installed first (`fault::install_probe_handler`).
    pub fn register() -> Arc<WatchState> {
        let s = Arc::new(WatchState::new());
        registry().lock().unwrap_or_else(|e| e.into_inner()).push(s.clone());
        monitor();
        s
    }

    /// Removes the watch (the worker's thread ends).
    pub fn unregister(s: &Arc<WatchState>) {
        registry().lock().unwrap_or_else(|e| e.into_inner()).retain(|x| !Arc::ptr_eq(x, s));
        let t = s.budget_timer.swap(0, Relaxed);
        if t != 0 {
            // SAFETY: a timer this watch created and nothing else deletes.
            unsafe { libc::timer_delete(t as libc::timer_t) };
        }
    }

    /// The worker waits for a turn (`true`) or runs again.
    pub fn set_parked(&self, yes: bool) {
        self.parked.store(yes, Relaxed);
    }

    /// Probes this worker's OS thread every `every` from now on (zero: stop). Called
    /// on the worker's thread (the timer targets the calling thread). False when the
    /// system has no such timer (the monitor's probes remain).
    pub fn arm_budget(&self, every: Duration) -> bool {
        let mut t = self.budget_timer.load(Relaxed);
        if t == 0 {
            if every.is_zero() {
                return true;
            }
            // SAFETY: a zeroed sigevent is valid; the fields set make it "signal this
            // thread"; timer_create writes the new timer's id into `id`.
            unsafe {
                let mut ev: libc::sigevent = std::mem::zeroed();
                ev.sigev_notify = libc::SIGEV_THREAD_ID;
                ev.sigev_signo = probe_signal();
                ev.sigev_notify_thread_id = self.tid;
                let mut id: libc::timer_t = std::ptr::null_mut();
                if libc::timer_create(libc::CLOCK_MONOTONIC, &mut ev, &mut id) != 0 {
                    return false;
                }
                t = id as usize;
            }
            self.budget_timer.store(t, Relaxed);
        }
        self.on_budget.store(!every.is_zero(), Relaxed);
        let ts = libc::timespec { tv_sec: every.as_secs() as libc::time_t, tv_nsec: every.subsec_nanos() as libc::c_long };
        let spec = libc::itimerspec { it_interval: ts, it_value: ts };
        // SAFETY: `t` is this watch's live timer; a zero value disarms it.
        unsafe { libc::timer_settime(t as libc::timer_t, 0, &spec, std::ptr::null_mut()) == 0 }
    }

    /// A launch with watchdog `limit` (zero: none) and time slice `slice` (zero: no
    /// preemption) starts on this worker; `run_addr` is its kernel's entry.
    pub fn begin(&self, limit: Duration, slice: Duration, run_addr: usize) {
        self.waits_on_blocks.store(false, Relaxed);
        let ev = self.mark();
        self.seen_events.store(ev, Relaxed);
        self.seen_fiber.store(0, Relaxed);
        self.seen_thread.store(u32::MAX, Relaxed);
        // Not a clock read per launch: the first probe stamps the time. A launch's first
        // block starts (progress) right after this, so the first probe finds the sample
        // moved and stamps it anyway, as it did when the start was stamped here; only a
        // probe within those few instructions stamps a time later than the start.
        self.seen_at_ns.store(NOT_STAMPED, Relaxed);
        self.timed_out.store(false, Relaxed);
        self.interrupted_pc.store(0, Relaxed);
        self.pre_fiber.store(0, Relaxed);
        self.limit_ns.store(limit.as_nanos().min(u64::MAX as u128) as u64, Relaxed);
        self.slice_ns.store(slice.as_nanos().min(u64::MAX as u128) as u64, Relaxed);
        self.run_addr.store(run_addr, Relaxed);
        // The kernel library's code, where a probe may take a fiber over (looked up here,
        // not in the handler: dl_iterate_phdr takes the loader's lock).
        let (lo, hi) = (self.text_lo.load(Relaxed), self.text_hi.load(Relaxed));
        if !(lo..hi).contains(&run_addr) {
            let (lo, hi) = code_range_of(run_addr).unwrap_or((0, 0));
            self.text_hi.store(hi, Relaxed);
            self.text_lo.store(lo, Release);
        }
        // Odd: running. Only this worker writes its epoch, so a store does (no
        // read-modify-write per launch); sequentially consistent with the load of PARKED
        // after it, against the monitor's store of PARKED and its load of every epoch
        // before it parks: one of the two sees the other.
        self.epoch.store(self.epoch.load(Relaxed).wrapping_add(1), SeqCst);
        if PARKED.load(SeqCst) {
            if let Some(t) = MONITOR.get() {
                t.unpark();
            }
        }
    }

    /// The launch ended.
    pub fn end(&self) {
        // Even: idle. A monitor that reads the odd value a little longer probes once
        // more; the probe handler reads the epoch on this thread and ignores it.
        self.epoch.store(self.epoch.load(Relaxed).wrapping_add(1), Release);
    }

    /// A thread finished or started: progress.
    #[inline]
    pub fn progress(&self) {
        self.events.store(self.events.load(Relaxed).wrapping_add(1), Relaxed);
    }

    /// A block starts on this worker: progress for every block that waits on others.
    pub fn block_started(&self) {
        self.progress();
        self.waits_on_blocks.store(false, Relaxed);
        count_block_event();
    }

    /// A block ended on this worker: progress for every block that waits on others (a
    /// reverse chain unwinds by blocks finishing, none starting).
    pub fn block_finished(&self) {
        count_block_event();
    }

    /// The running block spins on blocks that start elsewhere (it asked for them).
    pub fn set_waits_on_blocks(&self) {
        BLOCK_WAITERS.store(true, Relaxed);
        self.waits_on_blocks.store(true, Relaxed);
    }

    /// The progress count the watchdog compares: the worker's own events, plus the
    /// blocks started or finished anywhere while its block waits on other blocks (a chain of blocks
    /// that each wait for the next makes progress while the first one waits).
    fn mark(&self) -> u64 {
        let own = self.events.load(Relaxed);
        if self.waits_on_blocks.load(Relaxed) {
            own.wrapping_add(BLOCK_EVENTS.load(Relaxed) << 32)
        } else {
            own
        }
    }

    pub fn is_timed_out(&self) -> bool {
        self.timed_out.load(Relaxed)
    }

    pub fn limit(&self) -> Duration {
        Duration::from_nanos(self.limit_ns.load(Relaxed))
    }

    /// The time slice of the running launch (zero: no preemption), a tenth of it (at
    /// least 100 µs) while the running block has spinning threads.
    pub fn slice(&self) -> Duration {
        let slice = Duration::from_nanos(self.slice_ns.load(Relaxed));
        if self.spinning.load(Relaxed) {
            (slice / 10).max(Duration::from_micros(100)).min(slice)
        } else {
            slice
        }
    }

    /// A new block starts (`false`), or a thread of the running one was preempted.
    pub fn set_spinning(&self, yes: bool) {
        self.spinning.store(yes, Relaxed);
    }
}

/// `seen_at_ns` of a launch that no probe has sampled yet.
const NOT_STAMPED: u64 = u64::MAX;

/// Blocks started or finished by any worker of the process, counted once some block
/// has waited on others (`BLOCK_WAITERS`): until then nothing reads the count, and
/// a shared read-modify-write per block was a fifth of a small block's cost. Events of
/// other workers in the instant before they see the flag go uncounted: the waiting
/// block sees progress a few events later, never sooner.
static BLOCK_EVENTS: AtomicU64 = AtomicU64::new(0);
static BLOCK_WAITERS: AtomicBool = AtomicBool::new(false);

#[inline]
fn count_block_event() {
    if BLOCK_WAITERS.load(Relaxed) {
        BLOCK_EVENTS.fetch_add(1, Relaxed);
    }
}
static PARKED: AtomicBool = AtomicBool::new(false);
static MONITOR: OnceLock<Thread> = OnceLock::new();

fn registry() -> &'static Mutex<Vec<Arc<WatchState>>> {
    static R: OnceLock<Mutex<Vec<Arc<WatchState>>>> = OnceLock::new();
    R.get_or_init(|| Mutex::new(Vec::new()))
}

fn now_ns() -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: clock_gettime writes `ts`; it is async-signal-safe.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// Starts the monitor thread once.
fn monitor() {
    MONITOR.get_or_init(|| {
        std::thread::Builder::new().name("simtwin-watchdog".into()).spawn(monitor_loop).expect("spawn the watchdog thread").thread().clone()
    });
}

/// What the monitor last saw of a worker.
struct Seen {
    epoch: u64,
    events: u64,
    since: Instant,
}

fn monitor_loop() {
    let mut seen: HashMap<usize, Seen> = HashMap::new();
    loop {
        let states: Vec<Arc<WatchState>> = registry().lock().unwrap_or_else(|e| e.into_inner()).clone();
        // No launch running anywhere: park until a worker's `begin` wakes the monitor
        // (the epochs, of every worker registered by then, are read again after PARKED is
        // set: see `begin`).
        let none_running = |st: &[Arc<WatchState>]| st.iter().all(|s| s.epoch.load(SeqCst).is_multiple_of(2));
        if none_running(&states) {
            PARKED.store(true, SeqCst);
            if none_running(&registry().lock().unwrap_or_else(|e| e.into_inner())) {
                std::thread::park_timeout(Duration::from_secs(60));
            }
            PARKED.store(false, SeqCst);
            continue;
        }
        let running = |s: &&Arc<WatchState>| s.epoch.load(Relaxed) % 2 == 1 && !s.parked.load(Relaxed);
        let tick = states.iter().filter(running).map(|s| tick_of(s)).min().unwrap_or(Duration::from_millis(250));
        std::thread::sleep(tick);
        let now = Instant::now();
        seen.retain(|k, _| states.iter().any(|s| Arc::as_ptr(s) as usize == *k));
        for s in &states {
            let epoch = s.epoch.load(SeqCst);
            if epoch % 2 == 0 || s.parked.load(Relaxed) {
                continue;
            }
            let events = s.mark();
            let e = seen.entry(Arc::as_ptr(s) as usize).or_insert(Seen { epoch, events, since: now });
            // With a time slice every tick probes (the handler decides whether to
            // preempt); the watchdog alone probes a worker that made no progress.
            let moved = e.epoch != epoch || e.events != events;
            if moved {
                *e = Seen { epoch, events, since: now };
            }
            let stalled = !moved && !s.limit().is_zero() && now.duration_since(e.since) >= tick_for(s.limit());
            if s.slice().is_zero() && !stalled {
                continue;
            }
            // Re-check under the registry lock: a registered worker's thread is alive.
            let reg = registry().lock().unwrap_or_else(|e| e.into_inner());
            if reg.iter().any(|x| Arc::ptr_eq(x, s)) && s.epoch.load(SeqCst) == epoch {
                // SAFETY: tgkill to a live thread of this process with a handled signal.
                unsafe { libc::syscall(libc::SYS_tgkill, libc::getpid(), s.tid, probe_signal()) };
            }
        }
    }
}

fn tick_for(limit: Duration) -> Duration {
    (limit / 8).clamp(Duration::from_millis(5), Duration::from_millis(250))
}

/// How often the monitor looks at a worker: every time slice, or often enough for the
/// watchdog's limit.
fn tick_of(s: &WatchState) -> Duration {
    let slice = s.slice();
    let limit = s.limit();
    match (slice.is_zero(), limit.is_zero()) {
        (false, true) => slice,
        (false, false) => slice.min(tick_for(limit)),
        _ => tick_for(limit),
    }
}

/// The executable segments' extent of the loaded object that contains `addr`.
fn code_range_of(addr: usize) -> Option<(usize, usize)> {
    struct Find {
        addr: usize,
        found: Option<(usize, usize)>,
    }
    unsafe extern "C" fn visit(info: *mut libc::dl_phdr_info, _size: usize, data: *mut libc::c_void) -> libc::c_int {
        // SAFETY: the loader passes a valid info; `data` is our `Find`.
        let (info, find) = unsafe { (&*info, &mut *(data as *mut Find)) };
        let base = info.dlpi_addr as usize;
        // SAFETY: dlpi_phdr points to dlpi_phnum program headers of a loaded object.
        let phdrs = unsafe { std::slice::from_raw_parts(info.dlpi_phdr, info.dlpi_phnum as usize) };
        let load = |p: &&libc::Elf64_Phdr| p.p_type == libc::PT_LOAD;
        let span = |p: &libc::Elf64_Phdr| (base + p.p_vaddr as usize, base + (p.p_vaddr + p.p_memsz) as usize);
        if !phdrs.iter().filter(load).any(|p| {
            let (lo, hi) = span(p);
            (lo..hi).contains(&find.addr)
        }) {
            return 0;
        }
        let mut range: Option<(usize, usize)> = None;
        for p in phdrs.iter().filter(load).filter(|p| p.p_flags & libc::PF_X != 0) {
            let (lo, hi) = span(p);
            range = Some(match range {
                None => (lo, hi),
                Some((a, b)) => (a.min(lo), b.max(hi)),
            });
        }
        find.found = range;
        1
    }
    let mut find = Find { addr, found: None };
    // SAFETY: the callback only reads the loader's data and writes `find`.
    unsafe { libc::dl_iterate_phdr(Some(visit), (&mut find as *mut Find).cast()) };
    find.found
}

/// The probe handler's decision, on the worker's OS thread: samples progress and, once
/// the launch has made none for its limit, marks it timed out and returns true when
/// the fiber may be redirected (it runs kernel code of the kernel library, on its own
/// stack). `s` is the watch of this thread's worker and `f` the fiber it
/// runs (null between resumes); the probe interrupted code at `pc` with stack pointer
/// `sp`.
///
/// # Safety
/// Only from the probe signal handler on this thread; `f` is null or a live fiber of
/// this thread's worker.
pub(crate) unsafe fn on_probe(s: &WatchState, f: *mut Fiber, pc: usize, sp: usize) -> bool {
    if s.epoch.load(Relaxed).is_multiple_of(2) {
        return false;
    }
    let now = now_ns();
    let events = s.mark();
    let thread = if f.is_null() {
        u32::MAX
    } else {
        // SAFETY: per the contract `f` is a live fiber of this thread's worker; the
        // interrupted code may be writing the word, on this thread (no tearing).
        unsafe { std::ptr::read_volatile(std::ptr::addr_of!((*f).ctx.linear_tid)) }
    };
    // Progress: an event, or the fiber sampled last time has moved on to a later
    // thread of its range (threads finished). Fibers taking turns at rendezvous are not.
    let same_fiber = f as usize == s.seen_fiber.load(Relaxed);
    let moved = events != s.seen_events.load(Relaxed) || (same_fiber && thread != s.seen_thread.load(Relaxed));
    s.seen_events.store(events, Relaxed);
    s.seen_fiber.store(f as usize, Relaxed);
    s.seen_thread.store(thread, Relaxed);
    if moved || s.seen_at_ns.load(Relaxed) == NOT_STAMPED {
        s.seen_at_ns.store(now, Relaxed);
        return false;
    }
    let limit = s.limit_ns.load(Relaxed);
    if limit == 0 || now.saturating_sub(s.seen_at_ns.load(Relaxed)) < limit {
        return false;
    }
    s.timed_out.store(true, Relaxed);
    if f.is_null() {
        return false;
    }
    // SAFETY: as above.
    let in_kernel = unsafe { (*f).in_kernel.load(Relaxed) };
    let lo = s.text_lo.load(Acquire);
    let hi = s.text_hi.load(Relaxed);
    if !in_kernel || lo == 0 || !(lo..hi).contains(&pc) {
        return false;
    }
    // SAFETY: as above.
    if !unsafe { (*f).holds_stack_pointer(sp) } {
        return false;
    }
    s.interrupted_pc.store(pc, Relaxed);
    true
}

/// The probe handler's preemption decision, on the worker's OS thread: true when fiber
/// `f` has run kernel code since the previous probe without a switch (`switches`, the
/// worker's count of fiber resumes, unchanged) on the same thread (or its block's turn
/// is on a budget, `arm_budget`), is in the kernel
/// library's code at `pc` on its own stack `sp`, and its runner checks `range_stop`
/// before each thread (`ctx.reserved == 1`), so that suspending it here is safe.
///
/// # Safety
/// As [`on_probe`].
pub(crate) unsafe fn preempt_due(s: &WatchState, f: *mut Fiber, pc: usize, sp: usize, switches: u64) -> bool {
    if s.epoch.load(Relaxed).is_multiple_of(2) || s.slice_ns.load(Relaxed) == 0 || f.is_null() || s.is_timed_out() {
        return false;
    }
    // SAFETY: per the contract `f` is a live fiber of this thread's worker, suspended by
    // the signal (same thread: plain reads race nothing).
    let (thread, in_kernel, preemptible) = unsafe {
        (
            std::ptr::read_volatile(std::ptr::addr_of!((*f).ctx.linear_tid)),
            (*f).in_kernel.load(Relaxed),
            std::ptr::read_volatile(std::ptr::addr_of!((*f).ctx.reserved)) == 1,
        )
    };
    let same = s.pre_fiber.load(Relaxed) == f as usize && s.pre_thread.load(Relaxed) == thread && s.pre_switches.load(Relaxed) == switches;
    s.pre_fiber.store(f as usize, Relaxed);
    s.pre_thread.store(thread, Relaxed);
    s.pre_switches.store(switches, Relaxed);
    let due = same || s.on_budget.load(Relaxed);
    if due && preemptible && !in_kernel {
        s.preempt_at_call.store(f as usize, Relaxed);
    }
    if !due || !in_kernel || !preemptible {
        return false;
    }
    let (lo, hi) = (s.text_lo.load(Acquire), s.text_hi.load(Relaxed));
    // SAFETY: as above.
    lo != 0 && (lo..hi).contains(&pc) && unsafe { (*f).holds_stack_pointer(sp) }
}

/// Forgets what the previous probe saw (the fiber was just preempted: the next decision
/// needs a full slice of running again).
pub(crate) fn preempted(s: &WatchState) {
    s.pre_fiber.store(0, Relaxed);
    s.preempt_at_call.store(0, Relaxed);
}

/// Whether fiber `f`, in a runtime call that may suspend it, is due for preemption (the
/// probe found it there spinning for a slice); clears the request.
pub(crate) fn take_preempt_at_call(s: &WatchState, f: *mut Fiber) -> bool {
    s.preempt_at_call.compare_exchange(f as usize, 0, Relaxed, Relaxed).is_ok()
}

#[cfg(test)]
mod tests {
    use crate::exec::watchdog::*;

    #[test]
    fn the_code_range_of_a_function_contains_it() {
        let f = code_range_of as fn(usize) -> Option<(usize, usize)> as usize;
        let (lo, hi) = code_range_of(f).expect("this binary is loaded");
        assert!(lo <= f && f < hi);
        let m = libc::malloc as unsafe extern "C" fn(usize) -> *mut libc::c_void as usize;
        let (a, b) = code_range_of(m).expect("libc is loaded");
        assert!(a <= m && m < b && !(lo..hi).contains(&m));
    }
}
