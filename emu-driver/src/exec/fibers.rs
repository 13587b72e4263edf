//! Fibers: the one place where the executor switches stacks.
//!
//! A worker owns a pool of corosensei fibers whose stacks are created once and reused by
//! every later block and launch. A fiber's body is a loop "run the range of threads I
//! was given, yield `Finished`, wait for the next range", so a fiber outlives the CUDA
//! threads it runs and a block that never reaches a rendezvous costs a single resume:
//! the whole block runs as plain calls inside one range `run(params, ctx, 0, n)`.
//!
//! A fiber yields an [`Event`] to the scheduler (corosensei passes it in a register):
//! `Finished` when its range is done, `Waiting` when its thread suspends at a rendezvous,
//! `Stop` when the launch must end. It returns a [`FiberExit`] only when told to quit or
//! when a signal handler redirected it (a fault, a watchdog interrupt).
//!
//! Suspended fibers hold C++ frames of the kernel library, which must never be unwound
//! (unwinding through them aborts). A fiber whose thread is abandoned (a trap, a fault,
//! a deadlock, an error-mode hazard, a timeout) is `force_reset` and gets a fresh
//! coroutine on the same stack; no destructor runs on the abandoned frames.

use crate::abi::{self, RunFn, ThreadCtx};
use corosensei::stack::{DefaultStack, Stack, StackPointer};
use corosensei::trap::CoroutineTrapHandler;
use corosensei::{Coroutine, CoroutineResult, Yielder};
use std::ffi::c_void;
use std::ptr;
use std::sync::atomic::{compiler_fence, AtomicBool, Ordering};

/// What a fiber tells the scheduler when it suspends.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Event {
    /// Its range of threads has finished.
    Finished,
    /// Its thread waits at a rendezvous (or yielded); the block state says where.
    Waiting,
    /// The launch must stop (a trap, an error-mode hazard); the fiber is abandoned.
    Stop,
}

/// What the scheduler tells a fiber when it resumes it.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Command {
    Run,
    /// End the body (only given to fibers idle at the top of their loop).
    Quit,
}

/// How a fiber's body returns (it normally never does).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum FiberExit {
    /// Told to quit.
    Quit,
    /// A signal handler redirected the fiber after a fault in kernel code.
    Faulted,
    /// The watchdog interrupted the fiber in kernel code (no progress).
    Interrupted,
}

type Co = Coroutine<Command, Event, FiberExit, ColouredStack>;

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

/// One fiber: its coroutine, the context of the CUDA thread it runs, and its range.
pub(crate) struct Fiber {
    co: Option<Co>,
    /// Redirects the fiber from a signal handler (faults, watchdog).
    pub trap: Option<CoroutineTrapHandler<FiberExit>>,
    /// Lowest address of the stack mapping (its guard page included).
    pub stack_limit: usize,
    /// Highest address a frame of this fiber uses (for prefetching).
    stack_top: usize,
    yielder: *const Yielder<Command, Event>,
    /// The context the kernel library reads through its slot.
    pub ctx: ThreadCtx,
    /// The range [cursor, end) this fiber runs; threads before `cursor` have finished.
    pub cursor: u32,
    pub end: u32,
    /// Holds a range (possibly suspended); false when idle in the pool.
    pub busy: bool,
    /// True while kernel code (not the executor) runs on this fiber: the only time the
    /// watchdog may redirect it. Read by a signal handler on the same OS thread.
    pub in_kernel: AtomicBool,
    run: Option<RunFn>,
    params: *const *mut c_void,
}

impl Fiber {
    /// Marks the switch between executor code and kernel code on this fiber.
    #[inline(always)]
    pub fn set_in_kernel(&self, yes: bool) {
        compiler_fence(Ordering::SeqCst);
        self.in_kernel.store(yes, Ordering::Relaxed);
        compiler_fence(Ordering::SeqCst);
    }
}

/// Block-level values copied into a fiber's context when it gets a range.
#[derive(Clone, Copy)]
pub(crate) struct BlockFields {
    pub block_idx: abi::Dim3,
    pub block_dim: abi::Dim3,
    pub grid_dim: abi::Dim3,
    pub dyn_smem: *mut c_void,
    pub dyn_smem_size: u64,
}

impl Default for BlockFields {
    fn default() -> Self {
        BlockFields {
            block_idx: abi::Dim3::default(),
            block_dim: abi::Dim3::default(),
            grid_dim: abi::Dim3::default(),
            dyn_smem: ptr::null_mut(),
            dyn_smem_size: 0,
        }
    }
}

/// The fibers of one worker. Each is a leaked box, freed by `retire`: a fiber never
/// moves (its coroutine refers to it), and the scheduler, the runtime entries and the
/// signal handlers reach it through raw pointers while it runs.
pub(crate) struct FiberPool {
    fibers: Vec<*mut Fiber>,
    idle: Vec<u32>,
    stack_size: usize,
    /// Fibers created since the pool was made (for statistics).
    pub created: u64,
}

impl FiberPool {
    pub fn new(stack_size: usize) -> Self {
        FiberPool { fibers: Vec::new(), idle: Vec::new(), stack_size, created: 0 }
    }

    pub fn stack_size(&self) -> usize {
        self.stack_size
    }

    /// Uses stacks of `size` bytes from now on (retiring the current ones if different).
    pub fn set_stack_size(&mut self, size: usize) {
        if size != self.stack_size {
            self.retire();
            self.stack_size = size;
        }
    }

    #[inline]
    pub fn get(&self, fi: u32) -> &Fiber {
        // SAFETY: the pool owns its fibers until `retire`; callers do not hold this
        // borrow across a switch into the fiber.
        unsafe { &*self.fibers[fi as usize] }
    }

    #[inline]
    pub fn get_mut(&mut self, fi: u32) -> &mut Fiber {
        // SAFETY: as in `get`.
        unsafe { &mut *self.fibers[fi as usize] }
    }

    /// A raw pointer to fiber `fi` (stable until `retire`).
    #[inline]
    pub fn ptr(&self, fi: u32) -> *mut Fiber {
        self.fibers[fi as usize]
    }

    /// An idle fiber (created when none is left), marked busy.
    pub fn take_idle(&mut self) -> Result<u32, String> {
        let fi = match self.idle.pop() {
            Some(fi) => fi,
            None => self.create()?,
        };
        self.get_mut(fi).busy = true;
        Ok(fi)
    }

    /// Fiber `fi` finished its range and waits at the top of its loop.
    pub fn release(&mut self, fi: u32) {
        self.get_mut(fi).busy = false;
        self.idle.push(fi);
    }

    /// Hands the range [first, end) of the block described by `fields` to fiber `fi`.
    #[allow(clippy::too_many_arguments)]
    pub fn assign(&mut self, fi: u32, first: u32, end: u32, run: RunFn, params: *const *mut c_void, fields: &BlockFields, executor: *mut c_void) {
        let f = self.get_mut(fi);
        f.cursor = first;
        f.end = end;
        f.run = Some(run);
        f.params = params;
        let c = &mut f.ctx;
        c.block_idx = fields.block_idx;
        c.block_dim = fields.block_dim;
        c.grid_dim = fields.grid_dim;
        c.dyn_smem = fields.dyn_smem;
        c.dyn_smem_size = fields.dyn_smem_size;
        c.range_stop = 0;
        c.executor = executor;
        c.linear_tid = first;
        c.lane = first % 32;
    }

    fn create(&mut self) -> Result<u32, String> {
        let stack = DefaultStack::new(self.stack_size).map_err(|e| format!("cannot allocate a {}-byte fiber stack: {e}", self.stack_size))?;
        let idx = self.fibers.len() as u32;
        let stack = ColouredStack { inner: stack, offset: (idx as usize * 7 % COLOURS) * COLOUR_STEP };
        let limit = stack.limit().get();
        let top = stack.base().get();
        self.fibers.push(Box::into_raw(Box::new(Fiber {
            co: None,
            trap: None,
            stack_limit: limit,
            stack_top: top,
            yielder: ptr::null(),
            ctx: new_ctx(),
            cursor: 0,
            end: 0,
            busy: false,
            in_kernel: AtomicBool::new(false),
            run: None,
            params: ptr::null(),
        })));
        self.install(idx, stack);
        self.created += 1;
        Ok(idx)
    }

    fn install(&mut self, idx: u32, stack: ColouredStack) {
        let co = make_coroutine(stack, self.fibers[idx as usize]);
        let f = self.get_mut(idx);
        f.trap = Some(co.trap_handler());
        f.co = Some(co);
        f.in_kernel.store(false, Ordering::Relaxed);
    }

    /// Gives fiber `idx` a fresh coroutine on its own stack (after a fault, an interrupt
    /// or when its thread is abandoned).
    pub fn renew(&mut self, idx: u32) {
        let Some(mut co) = self.get_mut(idx).co.take() else { return };
        if !co.done() {
            // SAFETY: the frames on this stack (kernel code, our runtime entry) are
            // abandoned; none is unwound or resumed again.
            unsafe { co.force_reset() };
        }
        let stack = co.into_stack();
        self.install(idx, stack);
    }

    /// After a stop: every fiber that still holds a range gets a fresh coroutine and
    /// goes back to the idle list.
    pub fn abandon_busy(&mut self) {
        for fi in 0..self.fibers.len() as u32 {
            if self.get(fi).busy {
                self.renew(fi);
                self.release(fi);
            }
        }
    }

    /// Ends every fiber (idle ones return from their loop; busy ones are reset) and
    /// frees the stacks.
    pub fn retire(&mut self) {
        for &p in &self.fibers {
            // SAFETY: the pool owns the fiber; no switch into it is in progress.
            let f = unsafe { &mut *p };
            if let Some(mut co) = f.co.take() {
                if f.busy && co.started() && !co.done() {
                    // SAFETY: abandoned kernel frames are never unwound.
                    unsafe { co.force_reset() };
                } else if co.started() && !co.done() {
                    let _ = co.resume(Command::Quit);
                }
                drop(co);
            }
            // SAFETY: made by Box::into_raw in `create`, freed once here.
            drop(unsafe { Box::from_raw(p) });
        }
        self.fibers.clear();
        self.idle.clear();
    }
}

impl Drop for FiberPool {
    fn drop(&mut self) {
        self.retire();
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

fn make_coroutine(stack: ColouredStack, f: *mut Fiber) -> Co {
    let fp = f as usize;
    Coroutine::with_stack(stack, move |y: &Yielder<Command, Event>, mut cmd: Command| {
        let f = fp as *mut Fiber;
        // SAFETY: the fiber is boxed and outlives its coroutine (the coroutine is a field
        // of it, dropped or reset before the box is freed). While the body runs, the
        // scheduler does not touch the fields used here (it is suspended in `resume`).
        unsafe { (*f).yielder = y };
        loop {
            if cmd == Command::Quit {
                return FiberExit::Quit;
            }
            // SAFETY: as above; `run` and `params` were set by `assign` for this range,
            // and the kernel library's `run` is called as its ABI specifies.
            unsafe {
                if let Some(run) = (*f).run {
                    let first = (*f).cursor;
                    let count = (*f).end - first;
                    (*f).set_in_kernel(true);
                    run((*f).params, ptr::addr_of_mut!((*f).ctx), first, count);
                    (*f).set_in_kernel(false);
                }
            }
            cmd = y.suspend(Event::Finished);
        }
    })
}

/// Resumes fiber `f` until it suspends (`Ok(event)`) or returns (`Err(exit)`).
///
/// # Safety
/// `f` is a live fiber of the calling OS thread's pool, not running, and called from
/// the scheduler (not from a fiber); nothing else holds a reference into it.
#[inline]
pub(crate) unsafe fn resume(f: *mut Fiber) -> Result<Event, FiberExit> {
    // SAFETY: per the contract `f` is valid and not aliased.
    let co = match unsafe { (*f).co.as_mut() } {
        Some(co) => co,
        None => return Err(FiberExit::Quit),
    };
    match co.resume(Command::Run) {
        CoroutineResult::Yield(e) => Ok(e),
        CoroutineResult::Return(x) => Err(x),
    }
}

/// Suspends the fiber the caller runs on, telling the scheduler `event`; returns when
/// the scheduler resumes it.
///
/// # Safety
/// Called on fiber `f` itself (from a runtime entry), which holds no reference into the
/// worker across the call.
#[inline]
pub(crate) unsafe fn suspend(f: *const Fiber, event: Event) {
    // SAFETY: the yielder was stored by this fiber's body and lives on its stack.
    let y = unsafe { &*(*f).yielder };
    y.suspend(event);
}

/// Starts loading what resuming `f` will touch: the fiber and its context, and the hot
/// top of its stack (a barrier sweep visits every fiber once, so nothing of it is still
/// in L1).
#[inline(always)]
pub(crate) fn prefetch(f: &Fiber) {
    #[cfg(target_arch = "x86_64")]
    {
        use core::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        // SAFETY: prefetches never fault; the addresses are inside the fiber and its
        // mapped stack.
        unsafe {
            _mm_prefetch::<_MM_HINT_T0>((f as *const Fiber).cast());
            _mm_prefetch::<_MM_HINT_T0>(ptr::addr_of!(f.ctx).cast::<i8>().add(64));
        }
        let top = f.stack_top as *const i8;
        // SAFETY: as above; straight-line (no loop) to keep the resume path short.
        unsafe {
            _mm_prefetch::<_MM_HINT_T0>(top.sub(64));
            _mm_prefetch::<_MM_HINT_T0>(top.sub(128));
            _mm_prefetch::<_MM_HINT_T0>(top.sub(192));
            _mm_prefetch::<_MM_HINT_T0>(top.sub(256));
            _mm_prefetch::<_MM_HINT_T0>(top.sub(320));
            _mm_prefetch::<_MM_HINT_T0>(top.sub(384));
            _mm_prefetch::<_MM_HINT_T0>(top.sub(448));
            _mm_prefetch::<_MM_HINT_T0>(top.sub(HOT_STACK_BYTES));
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = f;
}
