//! Fibers and the runtime table: the one place where the executor switches stacks and
//! touches raw pointers.
//!
//! Each OS thread that launches kernels owns a `Worker`: a pool of corosensei fibers
//! (stacks created once and reused by every later block and launch) and the state of the
//! block it is running. A fiber's body is a loop "run the range of threads I was given,
//! report Finished, wait for the next range", so a fiber outlives the CUDA threads it
//! runs and a block that never reaches a rendezvous costs a single resume: the whole
//! block runs as plain calls inside one range `run(params, ctx, 0, n)`.
//!
//! When a thread k of a range reaches a rendezvous it suspends its fiber (which is now
//! dedicated to thread k), sets `range_stop` so the range returns right after thread k,
//! and hands threads k+1.. to the scheduler as a new range on another fiber.
//!
//! Suspended fibers hold C++ frames of the kernel library, which must never be unwound
//! (unwinding through them aborts). After a trap, a fault, a deadlock or an error-mode
//! hazard the launch is abandoned: suspended fibers are `force_reset` and their stacks
//! get fresh coroutines, without running any destructor on them.

use super::block::{Arrival, BlockState};
use super::hazard::HazardLog;
use super::{ExecStats, LaunchFailure};
use crate::abi::{self, RunFn, ThreadCtx};
use corosensei::stack::{DefaultStack, Stack, StackPointer};
use corosensei::trap::CoroutineTrapHandler;
use corosensei::{Coroutine, CoroutineResult, Yielder};
use std::cell::Cell;
use std::ffi::{c_char, c_void, CStr};
use std::ptr;

/// How a fiber's body returns (it normally never does).
#[derive(Clone, Copy)]
pub(crate) enum FiberExit {
    /// The worker is being torn down.
    Quit,
    /// A signal handler redirected the fiber after a fault in kernel code.
    Faulted,
}

type Co = Coroutine<(), (), FiberExit, ColouredStack>;

/// A pooled stack whose top is moved down by a per-fiber "colour" (a multiple of 128
/// bytes within a page). Stacks are page aligned, so without this the hot top-of-stack
/// lines of every fiber fall into the same few cache sets and a barrier sweep over 256
/// fibers misses on each switch.
pub(crate) struct ColouredStack {
    inner: DefaultStack,
    offset: usize,
}

// SAFETY: base stays inside the inner stack (offset < one page, 16-byte aligned) and the
// limit, guard page included, is the inner stack's.
unsafe impl Stack for ColouredStack {
    fn base(&self) -> StackPointer {
        StackPointer::new(self.inner.base().get() - self.offset).expect("stack base")
    }
    fn limit(&self) -> StackPointer {
        self.inner.limit()
    }
}

const COLOURS: usize = 32;
const COLOUR_STEP: usize = 128;
/// Bytes below a fiber's stack top that a resume typically touches (saved registers and
/// the frames of run -> body -> runtime entry); prefetched before the switch.
const HOT_STACK_BYTES: usize = 512;

pub(crate) struct Fiber {
    co: Option<Co>,
    pub(crate) trap: Option<CoroutineTrapHandler<FiberExit>>,
    /// Lowest address of the stack mapping (its guard page included).
    pub(crate) stack_limit: usize,
    /// Highest address a frame of this fiber uses (for prefetching).
    stack_top: usize,
    yielder: *const Yielder<(), ()>,
    pub(crate) ctx: ThreadCtx,
    /// The range [cursor, end) this fiber runs; threads before `cursor` have finished.
    cursor: u32,
    end: u32,
    busy: bool,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Event {
    None,
    Finished,
    Waiting,
    Stop,
}

/// What a fault handler saw.
#[derive(Clone, Copy, Default, Debug)]
pub(crate) struct FaultInfo {
    pub signo: i32,
    pub code: i32,
    pub addr: usize,
    pub pc: usize,
}

/// Block-level fields copied into a fiber's context when it gets a range.
#[derive(Clone, Copy)]
struct BlockFields {
    block_idx: abi::Dim3,
    block_dim: abi::Dim3,
    grid_dim: abi::Dim3,
    dyn_smem: *mut c_void,
    dyn_smem_size: u64,
}

pub(crate) struct Worker {
    fibers: Vec<Box<Fiber>>,
    idle: Vec<u32>,
    stack_size: usize,
    quit: bool,
    run: Option<RunFn>,
    params: *const *mut c_void,
    slot: *mut *mut ThreadCtx,
    fields: BlockFields,
    kernel: String,
    pub(crate) block: BlockState,
    pub(crate) log: HazardLog,
    failure: Option<LaunchFailure>,
    current: *mut Fiber,
    current_index: u32,
    event: Event,
    pub(crate) fault: FaultInfo,
    pub(crate) stats: ExecStats,
    smem: Vec<u128>,
}

thread_local! {
    /// The worker running a launch on this OS thread (null outside launches). Read by
    /// the runtime entry points and by the fault handler (const-initialised, no
    /// destructor: safe to read from a signal handler).
    static CURRENT: Cell<*mut Worker> = const { Cell::new(ptr::null_mut()) };
}

pub(crate) fn current_worker() -> *mut Worker {
    CURRENT.with(|c| c.get())
}

impl Worker {
    pub(crate) fn new(stack_size: usize) -> Self {
        Worker {
            fibers: Vec::new(),
            idle: Vec::new(),
            stack_size,
            quit: false,
            run: None,
            params: ptr::null(),
            slot: ptr::null_mut(),
            fields: BlockFields {
                block_idx: abi::Dim3::default(),
                block_dim: abi::Dim3::default(),
                grid_dim: abi::Dim3::default(),
                dyn_smem: ptr::null_mut(),
                dyn_smem_size: 0,
            },
            kernel: String::new(),
            block: BlockState::new(),
            log: HazardLog::new(super::HazardMode::Warn, ""),
            failure: None,
            current: ptr::null_mut(),
            current_index: 0,
            event: Event::None,
            fault: FaultInfo::default(),
            stats: ExecStats::default(),
            smem: Vec::new(),
        }
    }

    /// Runs one launch on this worker. `self` must stay at a fixed address (the worker
    /// lives in a Box in thread-local storage).
    pub(crate) fn launch(
        &mut self,
        kernel: &super::KernelRef,
        cfg: &super::LaunchConfig,
        params: &[*mut c_void],
        opts: &super::ExecOptions,
    ) -> super::LaunchOutcome {
        let stack_size = opts.stack_size.max(super::MIN_STACK_SIZE);
        if stack_size != self.stack_size {
            self.retire_fibers();
            self.stack_size = stack_size;
        }
        let w: *mut Worker = self;
        self.stats.launches += 1;
        self.run = Some(kernel.run);
        self.params = params.as_ptr();
        self.kernel = kernel.name.clone();
        self.log = HazardLog::new(opts.hazards, &kernel.name);
        self.failure = None;
        // SAFETY: the kernel library's ctx_slot returns the address of this OS thread's slot.
        self.slot = unsafe { (kernel.ctx_slot)() };
        if self.slot.is_null() {
            return super::LaunchOutcome {
                result: Err(LaunchFailure { code: super::CUDA_ERROR_LAUNCH_FAILED, message: format!("kernel {}: its library returned no context slot", kernel.name) }),
                hazards: Vec::new(),
            };
        }
        let words = cfg.dyn_smem_bytes.div_ceil(16).max(1);
        if self.smem.len() < words {
            self.smem.resize(words, 0);
        }
        let [bx, by, bz] = cfg.block;
        let [gx, gy, gz] = cfg.grid;
        self.fields.block_dim = abi::Dim3 { x: bx, y: by, z: bz };
        self.fields.grid_dim = abi::Dim3 { x: gx, y: gy, z: gz };
        self.fields.dyn_smem = self.smem.as_mut_ptr().cast();
        self.fields.dyn_smem_size = cfg.dyn_smem_bytes as u64;
        let n = bx * by * bz;

        let prev = CURRENT.with(|c| c.replace(w));
        let mut result = Ok(());
        // Forward block order, one worker. Other orders and several workers would hand
        // each worker its own sequence of linear block indices.
        let total = gx as u64 * gy as u64 * gz as u64;
        for linear in 0..total {
            let x = (linear % gx as u64) as u32;
            let y = ((linear / gx as u64) % gy as u64) as u32;
            let z = (linear / (gx as u64 * gy as u64)) as u32;
            self.fields.block_idx = abi::Dim3 { x, y, z };
            self.log.block = [x, y, z];
            self.block.reset(n);
            self.block.pending.push((0, n));
            self.stats.blocks += 1;
            // SAFETY: `w` is this worker; fibers only run inside `run_block`.
            let r = unsafe { run_block(w) };
            if !self.block.slow {
                self.stats.fast_blocks += 1;
            }
            if let Err(f) = r {
                result = Err(f);
                break;
            }
        }
        self.stats.barriers += std::mem::take(&mut self.block.barriers_completed);
        self.stats.warp_collectives += std::mem::take(&mut self.block.collectives_completed);
        CURRENT.with(|c| c.set(prev));
        // SAFETY: the slot is valid for this OS thread; clear it so nothing dangles.
        unsafe { *self.slot = ptr::null_mut() };
        self.run = None;
        super::LaunchOutcome { result, hazards: std::mem::take(&mut self.log.reports) }
    }

    /// Ends every idle fiber (they wait at the top of their loop, with only our own
    /// frames on their stacks) so their stacks can be freed.
    fn retire_fibers(&mut self) {
        self.quit = true;
        for f in &mut self.fibers {
            if let Some(mut co) = f.co.take() {
                if f.busy && co.started() && !co.done() {
                    // SAFETY: abandoned kernel frames are never unwound.
                    unsafe { co.force_reset() };
                } else if co.started() && !co.done() {
                    let _ = co.resume(());
                }
                drop(co);
            }
        }
        self.fibers.clear();
        self.idle.clear();
        self.quit = false;
    }

    fn new_fiber(&mut self) -> Result<u32, LaunchFailure> {
        let stack = DefaultStack::new(self.stack_size).map_err(|e| LaunchFailure {
            code: super::CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES,
            message: format!("kernel {}: cannot allocate a {}-byte fiber stack: {e}", self.kernel, self.stack_size),
        })?;
        let idx = self.fibers.len() as u32;
        let stack = ColouredStack { inner: stack, offset: (idx as usize * 7 % COLOURS) * COLOUR_STEP };
        let limit = stack.limit().get();
        let top = stack.base().get();
        self.fibers.push(Box::new(Fiber {
            co: None,
            trap: None,
            stack_limit: limit,
            stack_top: top,
            yielder: ptr::null(),
            ctx: new_ctx(),
            cursor: 0,
            end: 0,
            busy: false,
        }));
        self.install_coroutine(idx, stack);
        self.stats.fibers_created += 1;
        Ok(idx)
    }

    fn install_coroutine(&mut self, idx: u32, stack: ColouredStack) {
        let co = make_coroutine(stack, self as *mut Worker, idx);
        let f = &mut self.fibers[idx as usize];
        f.trap = Some(co.trap_handler());
        f.co = Some(co);
    }

    /// Gives fiber `idx` a fresh coroutine on its own stack (after a fault or an abandon).
    fn renew(&mut self, idx: u32) {
        let f = &mut self.fibers[idx as usize];
        let Some(mut co) = f.co.take() else { return };
        if !co.done() {
            // SAFETY: the frames on this stack (kernel code, our runtime entry) are
            // abandoned; none is unwound or resumed again.
            unsafe { co.force_reset() };
        }
        let stack = co.into_stack();
        self.install_coroutine(idx, stack);
    }

    fn take_idle(&mut self) -> Result<u32, LaunchFailure> {
        let fi = match self.idle.pop() {
            Some(fi) => fi,
            None => self.new_fiber()?,
        };
        self.fibers[fi as usize].busy = true;
        Ok(fi)
    }

    fn assign(&mut self, fi: u32, first: u32, end: u32) {
        let fl = self.fields;
        let w: *mut Worker = self;
        let f = &mut self.fibers[fi as usize];
        f.cursor = first;
        f.end = end;
        let c = &mut f.ctx;
        c.block_idx = fl.block_idx;
        c.block_dim = fl.block_dim;
        c.grid_dim = fl.grid_dim;
        c.dyn_smem = fl.dyn_smem;
        c.dyn_smem_size = fl.dyn_smem_size;
        c.range_stop = 0;
        c.executor = w.cast();
        c.linear_tid = first;
        c.lane = first % 32;
        self.stats.ranges_started += 1;
    }

    /// After a stop: discard every fiber that still holds kernel frames.
    fn abandon(&mut self) {
        for fi in 0..self.fibers.len() as u32 {
            if self.fibers[fi as usize].busy {
                self.renew(fi);
                self.fibers[fi as usize].busy = false;
                self.idle.push(fi);
            }
        }
        self.block.runq.clear();
        self.block.pending.clear();
    }

    fn thread_coords(&self, tid: u32) -> [u32; 3] {
        let d = self.fields.block_dim;
        [tid % d.x, (tid / d.x) % d.y, tid / (d.x * d.y)]
    }

    fn where_(&self, tid: u32) -> String {
        let b = self.fields.block_idx;
        let t = self.thread_coords(tid);
        format!("kernel {} block ({},{},{}) thread ({},{},{})", self.kernel, b.x, b.y, b.z, t[0], t[1], t[2])
    }

    fn fault_failure(&self, fi: u32) -> LaunchFailure {
        let tid = self.fibers[fi as usize].ctx.linear_tid;
        let fi_ = self.fault;
        let limit = self.fibers[fi as usize].stack_limit;
        let page = 4096usize;
        let at = self.where_(tid);
        match fi_.signo {
            libc::SIGSEGV | libc::SIGBUS
                if fi_.addr >= limit.saturating_sub(64 * 1024) && fi_.addr < limit + page =>
            {
                LaunchFailure {
                    code: super::CUDA_ERROR_ILLEGAL_ADDRESS,
                    message: format!(
                        "{at}: stack overflow (access at {:#x}, pc {:#x}); the fiber stack is {} bytes, raise EMU_CUDA_STACK",
                        fi_.addr, fi_.pc, self.stack_size
                    ),
                }
            }
            libc::SIGSEGV | libc::SIGBUS => LaunchFailure {
                code: super::CUDA_ERROR_ILLEGAL_ADDRESS,
                message: format!(
                    "{at}: illegal address: invalid memory access at {:#x} ({}, pc {:#x})",
                    fi_.addr,
                    if fi_.signo == libc::SIGSEGV { "SIGSEGV" } else { "SIGBUS" },
                    fi_.pc
                ),
            },
            libc::SIGFPE => LaunchFailure {
                code: super::CUDA_ERROR_LAUNCH_FAILED,
                message: format!(
                    "{at}: arithmetic exception ({}) at pc {:#x}; a device would not trap here, host code does",
                    match fi_.code {
                        1 /* FPE_INTDIV */ => "integer division by zero",
                        2 /* FPE_INTOVF */ => "integer overflow",
                        _ => "SIGFPE",
                    },
                    fi_.pc
                ),
            },
            _ => LaunchFailure {
                code: super::CUDA_ERROR_LAUNCH_FAILED,
                message: format!("{at}: illegal instruction (signal {}) at pc {:#x}", fi_.signo, fi_.pc),
            },
        }
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        self.retire_fibers();
    }
}

fn new_ctx() -> ThreadCtx {
    ThreadCtx {
        thread_idx: abi::Dim3::default(),
        block_idx: abi::Dim3::default(),
        block_dim: abi::Dim3::default(),
        grid_dim: abi::Dim3::default(),
        linear_tid: 0,
        lane: 0,
        dyn_smem: ptr::null_mut(),
        dyn_smem_size: 0,
        range_stop: 0,
        pad: 0,
        executor: ptr::null_mut(),
    }
}

fn make_coroutine(stack: ColouredStack, w: *mut Worker, idx: u32) -> Co {
    let wp = w as usize;
    Coroutine::with_stack(stack, move |y: &Yielder<(), ()>, ()| {
        let w = wp as *mut Worker;
        // SAFETY: the worker outlives its fibers and does not move; the fiber's Box does
        // not move either. The scheduler only touches other fields while we run.
        unsafe {
            let f: *mut Fiber = &mut **(*w).fibers.as_mut_ptr().add(idx as usize);
            (*f).yielder = y;
            loop {
                if (*w).quit {
                    return FiberExit::Quit;
                }
                if let Some(run) = (*w).run {
                    let first = (*f).cursor;
                    let count = (*f).end - first;
                    run((*w).params, ptr::addr_of_mut!((*f).ctx), first, count);
                }
                (*w).event = Event::Finished;
                y.suspend(());
            }
        }
    })
}

/// Resumes fiber `fi` with its context in the kernel library's slot.
#[inline]
unsafe fn resume(w: *mut Worker, fi: u32) -> Option<FiberExit> {
    let f: *mut Fiber = &mut **(*w).fibers.as_mut_ptr().add(fi as usize);
    *(*w).slot = ptr::addr_of_mut!((*f).ctx);
    (*w).current = f;
    (*w).current_index = fi;
    (*w).event = Event::None;
    (*w).stats.fiber_resumes += 1;
    let co: *mut Co = match (*f).co.as_mut() {
        Some(co) => co,
        None => return Some(FiberExit::Quit),
    };
    let r = (*co).resume(());
    (*w).current = ptr::null_mut();
    match r {
        CoroutineResult::Yield(()) => None,
        CoroutineResult::Return(x) => Some(x),
    }
}

/// Starts loading what resuming thread `t` will touch: its fiber's context and the hot
/// top of its stack (the scheduler knows who runs next; a barrier sweep visits every
/// fiber once, so nothing of it is still in L1).
#[inline(always)]
unsafe fn prefetch_thread(w: *mut Worker, t: u32) {
    #[cfg(target_arch = "x86_64")]
    {
        use core::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        let fi = (&(*w).block.threads)[t as usize].fiber;
        if let Some(f) = (&(*w).fibers).get(fi as usize) {
            let f: &Fiber = f;
            _mm_prefetch::<_MM_HINT_T0>((f as *const Fiber).cast());
            _mm_prefetch::<_MM_HINT_T0>(ptr::addr_of!(f.ctx).cast::<i8>().add(64));
            let mut a = f.stack_top - HOT_STACK_BYTES;
            while a < f.stack_top {
                _mm_prefetch::<_MM_HINT_T0>(a as *const i8);
                a += 64;
            }
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (w, t);
}

/// The scheduler of one block: resume runnable threads, start pending ranges, until
/// every thread has finished, the launch stops, or nothing can run (deadlock).
unsafe fn run_block(w: *mut Worker) -> Result<(), LaunchFailure> {
    loop {
        let b = &mut (*w).block;
        let fi = if let Some(t) = b.runq.pop_front() {
            if let Some(&next) = b.runq.front() {
                prefetch_thread(w, next);
            }
            b.threads[t as usize].fiber
        } else if let Some((a, e)) = b.pending.pop() {
            let fi = match (*w).take_idle() {
                Ok(fi) => fi,
                Err(f) => {
                    (*w).abandon();
                    return Err(f);
                }
            };
            (*w).assign(fi, a, e);
            fi
        } else {
            break;
        };
        match resume(w, fi) {
            None => {}
            Some(FiberExit::Faulted) => {
                let f = (*w).fault_failure(fi);
                (*w).renew(fi);
                (*w).abandon();
                return Err(f);
            }
            Some(FiberExit::Quit) => {
                (*w).abandon();
                return Err(LaunchFailure { code: super::CUDA_ERROR_LAUNCH_FAILED, message: "executor fiber ended unexpectedly".into() });
            }
        }
        match (*w).event {
            Event::Finished => {
                let f = &mut *(&mut (*w).fibers)[fi as usize];
                if (*w).block.slow {
                    (*w).block.exit_range(f.cursor, f.end, &mut (*w).log);
                }
                f.busy = false;
                (*w).idle.push(fi);
            }
            Event::Waiting => {}
            Event::Stop | Event::None => {
                let f = (*w).failure.take().unwrap_or_else(|| hazard_failure(w));
                (*w).abandon();
                return Err(f);
            }
        }
        if (*w).block.stop {
            let f = hazard_failure(w);
            (*w).abandon();
            return Err(f);
        }
    }
    let b = &(*w).block;
    if b.slow && b.live > 0 {
        let d = b.deadlock_report();
        let message = format!("kernel {} block ({},{},{}): {}", (*w).kernel, (*w).log.block[0], (*w).log.block[1], (*w).log.block[2], d.message);
        (*w).log.record(d);
        (*w).abandon();
        return Err(LaunchFailure { code: super::CUDA_ERROR_LAUNCH_FAILED, message });
    }
    Ok(())
}

unsafe fn hazard_failure(w: *mut Worker) -> LaunchFailure {
    let message = match (*w).log.reports.last() {
        Some(h) => format!("{h} (EMU_CUDA_HAZARDS=error)"),
        None => format!("kernel {}: the launch stopped", (*w).kernel),
    };
    LaunchFailure { code: super::HAZARD_ERROR_CODE, message }
}

// ---- runtime entry points (called by kernel code, on the fiber) ------------------------

/// The running fiber, or None when a runtime function is called outside a launch.
#[inline]
unsafe fn on_fiber() -> Option<(*mut Worker, *mut Fiber)> {
    let w = current_worker();
    if w.is_null() || (*w).current.is_null() {
        return None;
    }
    Some((w, (*w).current))
}

/// Brings block state up to date with a range fiber: threads of its range before the
/// caller have finished. Returns the caller's linear thread index.
#[inline]
unsafe fn enter(w: *mut Worker, f: *mut Fiber) -> u32 {
    let tid = (*f).ctx.linear_tid;
    let b = &mut (*w).block;
    if !b.slow {
        b.begin_slow();
    }
    if tid != (*f).cursor {
        b.exit_range((*f).cursor, tid, &mut (*w).log);
        (*f).cursor = tid;
    }
    b.mark_running(tid, (*w).current_index);
    tid
}

/// Suspends the calling thread until its rendezvous completes. A range fiber first
/// hands the rest of its range to the scheduler.
#[inline]
unsafe fn wait(w: *mut Worker, f: *mut Fiber, tid: u32) {
    if (*f).end > tid + 1 {
        (*w).block.pending.push((tid + 1, (*f).end));
        (*f).end = tid + 1;
        ptr::write_volatile(ptr::addr_of_mut!((*f).ctx.range_stop), 1);
    }
    (*w).event = Event::Waiting;
    (*(*f).yielder).suspend(());
}

/// Suspends for good: the scheduler stops the launch and discards this fiber.
unsafe fn stop_forever(w: *mut Worker, f: *mut Fiber) -> ! {
    loop {
        (*w).event = Event::Stop;
        (*(*f).yielder).suspend(());
    }
}

unsafe fn fail(w: *mut Worker, f: *mut Fiber, code: u32, message: String) -> ! {
    if (*w).failure.is_none() {
        (*w).failure = Some(LaunchFailure { code, message });
    }
    stop_forever(w, f)
}

fn outside_launch(what: &str) {
    eprintln!("simtwin: {what} called outside a kernel launch; ignored");
}

/// `__syncthreads` and its _count/_and/_or forms.
///
/// The barrier's call site, used for divergence reports, is the source location the
/// library passes (kernels-host: the user's `__syncthreads` line). Return addresses are
/// not used: optimising compilers duplicate one source barrier into several paths (tail
/// duplication, unrolling), which would report divergence that is not there.
unsafe extern "C" fn rt_barrier(op: u32, pred: i32, site: abi::Site) -> i32 {
    let Some((w, f)) = on_fiber() else {
        outside_launch("__syncthreads");
        return 0;
    };
    if op > abi::bar::OR {
        let tid = (*f).ctx.linear_tid;
        let at = (*w).where_(tid);
        fail(w, f, super::CUDA_ERROR_LAUNCH_FAILED, format!("{at}: unsupported barrier operation {op}"));
    }
    let tid = enter(w, f);
    if (*w).block.stop {
        stop_forever(w, f);
    }
    let site = if site.line == 0 { 0 } else { site.key() as usize };
    match (*w).block.arrive_barrier(tid, op, pred, site, &mut (*w).log) {
        Arrival::Done(r, _) => r as i32,
        Arrival::Wait => {
            wait(w, f, tid);
            (&(*w).block.threads)[tid as usize].result as i32
        }
        Arrival::Stop => stop_forever(w, f),
    }
}

unsafe extern "C" fn rt_warp(op: u32, mask: u32, value: u64, arg: i32, width: i32, pred_out: *mut i32, _site: abi::Site) -> u64 {
    let Some((w, f)) = on_fiber() else {
        outside_launch("a warp collective");
        return value;
    };
    if !super::warp::is_known(op) {
        let tid = (*f).ctx.linear_tid;
        let at = (*w).where_(tid);
        fail(w, f, super::CUDA_ERROR_LAUNCH_FAILED, format!("{at}: unsupported warp operation {op}"));
    }
    let tid = enter(w, f);
    if (*w).block.stop {
        stop_forever(w, f);
    }
    let (r, p) = match (*w).block.arrive_warp(tid, op, mask, value, arg, width, &mut (*w).log) {
        Arrival::Done(r, p) => (r, p),
        Arrival::Wait => {
            wait(w, f, tid);
            let t = &(&(*w).block.threads)[tid as usize];
            (t.result, t.pred_out)
        }
        Arrival::Stop => stop_forever(w, f),
    };
    if !pred_out.is_null() {
        *pred_out = p;
    }
    r
}

unsafe extern "C" fn rt_activemask(_site: abi::Site) -> u32 {
    let Some((w, f)) = on_fiber() else {
        outside_launch("__activemask");
        return 0;
    };
    let tid = enter(w, f);
    if (*w).block.stop {
        stop_forever(w, f);
    }
    (*w).block.activemask(tid)
}

unsafe fn c_text(p: *const c_char) -> String {
    if p.is_null() {
        String::new()
    } else {
        CStr::from_ptr(p).to_string_lossy().into_owned()
    }
}

unsafe extern "C" fn rt_trap(kind: u32, message: *const c_char, file: *const c_char, line: u32) {
    let msg = c_text(message);
    let file = c_text(file);
    let Some((w, f)) = on_fiber() else {
        eprintln!("simtwin: device trap outside a kernel launch: {msg} ({file}:{line})");
        std::process::abort();
    };
    let tid = (*f).ctx.linear_tid;
    let at = (*w).where_(tid);
    let loc = if file.is_empty() { String::new() } else { format!(" at {file}:{line}") };
    let (code, text) = match kind {
        abi::trap::ASSERT => (super::CUDA_ERROR_ASSERT, format!("{at}: device assertion `{msg}` failed{loc}")),
        abi::trap::TRAP => (super::CUDA_ERROR_LAUNCH_FAILED, format!("{at}: __trap(){loc}{}", if msg.is_empty() { String::new() } else { format!(": {msg}") })),
        abi::trap::UNSUPPORTED => (super::CUDA_ERROR_LAUNCH_FAILED, format!("{at}: unsupported operation{loc}: {msg}")),
        _ => (super::CUDA_ERROR_LAUNCH_FAILED, format!("{at}: trap of unknown kind {kind}{loc}: {msg}")),
    };
    fail(w, f, code, text)
}

unsafe extern "C" fn rt_print(text: *const c_char, len: usize) {
    use std::io::Write;
    if text.is_null() {
        return;
    }
    let bytes = std::slice::from_raw_parts(text.cast::<u8>(), len);
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(bytes);
    let _ = out.flush();
}

unsafe extern "C" fn rt_threadfence(_scope: u32) {
    std::sync::atomic::fence(std::sync::atomic::Ordering::SeqCst);
}

unsafe extern "C" fn rt_clock() -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts);
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// A spin-wait hint. One worker runs a block's threads one after another, so a thread
/// that polls cannot let another run without suspending; for now this is a no-op.
unsafe extern "C" fn rt_yield(_site: abi::Site) {}

/// A device-defined result the library emulated: reported as a hazard.
unsafe extern "C" fn rt_report(kind: u32, message: *const c_char, site: abi::Site) {
    let msg = c_text(message);
    let Some((w, f)) = on_fiber() else {
        eprintln!("simtwin: device-defined result outside a kernel launch: {msg}");
        return;
    };
    let tid = (*f).ctx.linear_tid;
    let d = super::hazard::Detected {
        kind: super::hazard::HazardKind::DeviceDefinedResult,
        site: site.key() ^ kind as u64,
        threads: vec![tid],
        operation: site.describe(),
        message: msg,
    };
    if (*w).log.record(d) {
        (*w).block.stop = true;
        stop_forever(w, f);
    }
}

pub(crate) static RUNTIME: abi::Runtime = abi::Runtime {
    abi_version: abi::ABI_VERSION,
    size: std::mem::size_of::<abi::Runtime>() as u32,
    barrier: rt_barrier,
    warp: rt_warp,
    activemask: rt_activemask,
    trap: rt_trap,
    print: rt_print,
    threadfence: rt_threadfence,
    clock: rt_clock,
    yield_now: rt_yield,
    report: rt_report,
};

// ---- fault handling hook ----------------------------------------------------------------

/// Called from the signal handler: when the fault happened on the stack of the fiber
/// this OS thread is running, records it and returns that fiber's trap handler.
///
/// # Safety
/// Only from a synchronous signal handler on this thread.
pub(crate) unsafe fn fault_target(signo: i32, code: i32, addr: usize, pc: usize, sp: usize) -> Option<CoroutineTrapHandler<FiberExit>> {
    let w = current_worker();
    if w.is_null() {
        return None;
    }
    let f = (*w).current;
    if f.is_null() {
        return None;
    }
    let trap = (*f).trap?;
    if !trap.stack_ptr_in_bounds(sp) {
        return None;
    }
    ptr::write_volatile(ptr::addr_of_mut!((*w).fault), FaultInfo { signo, code, addr, pc });
    Some(trap)
}
