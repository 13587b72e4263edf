//! Fibers: the one place where the executor switches stacks.
//!
//! A worker owns a pool of fibers whose stacks (`stacks`: carved from chunk mappings,
//! each with a guard page) are created once and reused by every later block and launch. A
//! fiber's body is a loop "run the range of threads I was given, note that it ended,
//! continue something else, wait for the next range", so a fiber outlives the threads it runs
//! and a block that never reaches a rendezvous costs a single resume: the whole block
//! runs as plain calls inside one range `run(params, ctx, 0, n)`.
//!
//! The switch is symmetric ([`switch`]): any context (the scheduler's or a fiber's)
//! saves itself and continues another, so a thread that waits at a rendezvous switches
//! straight to the next runnable thread's fiber, one switch per thread instead of a
//! round trip through the scheduler (a coroutine library's coroutines only switch between
//! a coroutine and the one that resumed it, which costs twice as much at a barrier). When
//! a fiber's range is done it calls its home's `range_end` hook, which notes the exits
//! and continues whatever runs next. A fiber switches to the scheduler (its [`Home`])
//! with an [`Event`] only when nothing it may run is left or the launch must stop.
//!
//! A suspended context is its stack pointer, pointing at a three-word record: the address
//! to continue at, then the saved rbx and rbp (every other register is declared
//! clobbered by the switch, so the compiler saves what is live around it). A fresh fiber
//! gets a record that continues at `fiber_start` (`reset`).
//!
//! Suspended fibers hold C++ frames of the kernel library, which are never unwound: a
//! fiber whose thread is abandoned (a trap, a fault, a deadlock, an error-mode hazard, a
//! timeout) is `renew`ed, its stack pointer set back to a fresh record; no destructor runs
//! on the abandoned frames. A signal handler takes a fiber over by continuing the
//! scheduler's suspended context ([`Home::redirect`]).

#[cfg(not(all(target_arch = "x86_64", unix)))]
compile_error!("simtwin's fiber switch (exec/fibers.rs) is written for x86-64 System V (Linux)");

use super::stacks::StackChunks;
use crate::abi::{self, RunFn, ThreadCtx};
use std::arch::{asm, naked_asm};
use std::ffi::c_void;
use std::ptr;
use std::sync::atomic::{compiler_fence, AtomicBool, Ordering};

/// What a context tells the scheduler when it switches back to it.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Event {
    /// Nothing the fiber may run is left (its thread waits at a rendezvous, yielded, or
    /// its range ended), or the run queue had a long streak: the scheduler picks what
    /// runs next.
    Waiting,
    /// The launch must stop (a trap, an error-mode hazard at a rendezvous); the fiber is
    /// abandoned.
    Stop,
    /// A range ended and its threads' exits recorded an error-mode hazard: the launch
    /// stops.
    ExitHazard,
    /// A signal handler took the fiber over after a fault in kernel code.
    Faulted,
    /// The watchdog took the fiber over in kernel code (no progress).
    Interrupted,
}

/// The scheduler's side of the switches: where it is suspended while fibers run, what
/// the context that switched back to it said, and what a fiber does when its range
/// ends. One per worker, at a fixed address.
pub(crate) struct Home {
    sp: usize,
    pub event: Event,
    /// Called on a fiber whose range has ended: notes the exits and says which
    /// suspended context to continue, or 0 when the fiber got the next range itself.
    range_end: unsafe fn(*mut Fiber) -> usize,
}

impl Home {
    pub fn new(range_end: unsafe fn(*mut Fiber) -> usize) -> Self {
        Home { sp: 0, event: Event::Waiting, range_end }
    }

    /// The scheduler's suspended context (to continue it).
    #[inline(always)]
    pub fn saved_sp(&self) -> usize {
        self.sp
    }

    /// Where a signal handler that takes the running fiber over continues: the
    /// scheduler's suspended context, as `(rip, rsp)` for the interrupted registers.
    /// The caller sets `event` first.
    ///
    /// # Safety
    /// Only while a fiber of this worker runs (the scheduler is suspended).
    pub unsafe fn redirect(&self) -> (usize, usize) {
        // SAFETY: the record at `sp` is the scheduler's: its first word is where it
        // continues, the next two are what that code pops.
        (unsafe { *(self.sp as *const usize) }, self.sp + 8)
    }
}

/// One fiber: its stack, its saved context, the context of the CUDA thread it runs, and
/// its range. Laid out so that what a switch and a runtime entry touch (the saved stack
/// pointer, the range, `in_kernel`, and the context's `linear_tid`, `range_stop` and
/// `executor`) shares the second cache line: `ctx` starts 16 bytes in, the switch's
/// fields follow it. The first line holds the context's dim3s (what kernel code reads
/// for threadIdx/blockIdx/...), the rest what only starting a range needs.
#[repr(C, align(64))]
pub(crate) struct Fiber {
    /// The scheduler it goes back to (its worker's).
    home: *mut Home,
    run: Option<RunFn>,
    /// The context the kernel library reads through its slot.
    pub ctx: ThreadCtx,
    /// The saved stack pointer while suspended.
    sp: usize,
    /// The range [cursor, end) this fiber runs; threads before `cursor` have finished.
    pub cursor: u32,
    pub end: u32,
    /// Its index in the pool.
    pub index: u32,
    /// True while kernel code (not the executor) runs on this fiber: the only time the
    /// watchdog may redirect it. Read by a signal handler on the same OS thread.
    pub in_kernel: AtomicBool,
    /// Holds a range (possibly suspended); false when idle in the pool.
    pub busy: bool,
    params: *const *mut c_void,
    /// Lowest address of the stack mapping (its guard page included).
    pub stack_limit: usize,
    /// Highest address a frame of this fiber uses (16-byte aligned, below the colour
    /// offset).
    stack_top: usize,
    /// One past the highest address of the stack.
    stack_base: usize,
    /// The thread of this fiber's range that last called `yield_now`, and where (None
    /// since the range was assigned): a timed-out spinner the watchdog finds between two
    /// yields is reported at its yield site.
    pub last_yield: Option<(u32, abi::Site)>,
    /// The runner's recovery point (the runtime's `recover_slot`), null unless kernel code
    /// set one: a fault then continues at its landing (`scheduler::recover`).
    pub recover: *const abi::Recover,
}

impl Fiber {
    /// Marks the switch between executor code and kernel code on this fiber.
    #[inline(always)]
    pub fn set_in_kernel(&self, yes: bool) {
        compiler_fence(Ordering::SeqCst);
        self.in_kernel.store(yes, Ordering::Relaxed);
        compiler_fence(Ordering::SeqCst);
    }

    /// Whether `sp` lies in this fiber's stack mapping (guard page included).
    pub fn holds_stack_pointer(&self, sp: usize) -> bool {
        sp >= self.stack_limit && sp < self.stack_base
    }

    /// A fresh context: the next switch to this fiber enters `fiber_start`.
    fn reset(&mut self) {
        let top = self.stack_top as *mut usize;
        let me = self as *mut Fiber as usize;
        // SAFETY: the three words below the top are inside the writable stack mapping;
        // nothing runs on this stack now (fresh, or its frames abandoned).
        unsafe {
            *top.sub(1) = 0;
            *top.sub(2) = me;
            *top.sub(3) = fiber_start as *const () as usize;
        }
        self.sp = self.stack_top - 24;
        self.in_kernel.store(false, Ordering::Relaxed);
        self.recover = ptr::null();
    }
}

/// The cache line of `Fiber` that a switch and a runtime entry touch.
const HOT_LINE: usize = std::mem::offset_of!(Fiber, sp) / 64;
const _: () = {
    use std::mem::offset_of;
    let ctx = offset_of!(Fiber, ctx);
    assert!(HOT_LINE == 1);
    assert!((ctx + offset_of!(ThreadCtx, linear_tid)) / 64 == HOT_LINE);
    assert!((ctx + offset_of!(ThreadCtx, range_stop)) / 64 == HOT_LINE);
    assert!((ctx + offset_of!(ThreadCtx, executor) + 7) / 64 == HOT_LINE);
    assert!((offset_of!(Fiber, busy)) / 64 == HOT_LINE);
};

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

/// A pooled stack's top is moved down by a per-fiber "colour" (a multiple of 128 bytes
/// within a page). Stacks are page aligned, so without this the hot top-of-stack lines
/// of every fiber fall into the same few cache sets and a barrier sweep over 256
/// fibers misses on each switch.
const COLOURS: usize = 32;
const COLOUR_STEP: usize = 128;
/// Bytes above a suspended fiber's stack pointer that resuming it typically touches (the
/// switch record and the frames of the runtime entry, the kernel body and its range
/// loop); prefetched before the switch. 256: the switch record and rt_barrier's frame
/// (120 bytes) and a small kernel's; 512 was 5% slower on the tree reduction (b), where
/// the extra lines crowd out the next fibers', 192 slower on the stencil (d).
const HOT_STACK_BYTES: usize = 256;

/// Most fibers one worker holds: one per thread of its block that is suspended (a block
/// has at most 1024 threads), and margin for the running one.
pub(crate) const MAX_FIBERS: usize = 1024 + 64;

/// The fibers of one worker, in one slab allocated when the pool is made: fiber `i`
/// lives at `slab + i` and never moves (its stack holds a pointer to it), so finding a
/// fiber from its index is an address computation, not a load (the scheduler does it for
/// every thread it continues). The scheduler, the runtime entries and the signal
/// handlers reach fibers through raw pointers while they run; `retire` drops them.
pub(crate) struct FiberPool {
    slab: *mut Fiber,
    /// Fibers made in the slab (the first `len` slots hold one).
    len: u32,
    idle: Vec<u32>,
    stack_size: usize,
    stacks: StackChunks,
    /// Fibers created since the pool was made (for statistics).
    pub created: u64,
}

impl FiberPool {
    pub fn new(stack_size: usize) -> Self {
        let layout = Self::layout();
        // SAFETY: the layout has a non-zero size.
        let slab = unsafe { std::alloc::alloc(layout) }.cast::<Fiber>();
        if slab.is_null() {
            std::alloc::handle_alloc_error(layout);
        }
        FiberPool { slab, len: 0, idle: Vec::new(), stack_size, stacks: StackChunks::new(), created: 0 }
    }

    fn layout() -> std::alloc::Layout {
        std::alloc::Layout::array::<Fiber>(MAX_FIBERS).expect("the fiber slab's size fits")
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
        assert!(fi < self.len, "fiber {fi} of {}", self.len);
        // SAFETY: slot `fi` holds a fiber until `retire`; callers do not hold this
        // borrow across a switch into the fiber.
        unsafe { &*self.slab.add(fi as usize) }
    }

    #[inline]
    pub fn get_mut(&mut self, fi: u32) -> &mut Fiber {
        assert!(fi < self.len, "fiber {fi} of {}", self.len);
        // SAFETY: as in `get`.
        unsafe { &mut *self.slab.add(fi as usize) }
    }

    /// A raw pointer to fiber `fi` (stable until `retire`). `fi` comes from the run
    /// queue or the pool, so it names a fiber that exists (checked in debug builds).
    #[inline(always)]
    pub fn ptr(&self, fi: u32) -> *mut Fiber {
        debug_assert!(fi < self.len);
        self.slab.wrapping_add(fi as usize)
    }

    /// An idle fiber that exists already, marked busy.
    #[inline]
    pub fn take_existing(&mut self) -> Option<u32> {
        let fi = self.idle.pop()?;
        self.get_mut(fi).busy = true;
        Some(fi)
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

    /// Hands the range [first, end) of the block described by `fields` to fiber `fi`,
    /// which switches back to `home`.
    #[allow(clippy::too_many_arguments)]
    pub fn assign(
        &mut self,
        fi: u32,
        first: u32,
        end: u32,
        run: RunFn,
        params: *const *mut c_void,
        fields: &BlockFields,
        executor: *mut c_void,
        home: *mut Home,
    ) {
        let f = self.get_mut(fi);
        f.cursor = first;
        f.end = end;
        f.run = Some(run);
        f.params = params;
        f.home = home;
        f.last_yield = None;
        f.recover = ptr::null();
        let c = &mut f.ctx;
        c.block_idx = fields.block_idx;
        c.block_dim = fields.block_dim;
        c.grid_dim = fields.grid_dim;
        c.dyn_smem = fields.dyn_smem;
        c.dyn_smem_size = fields.dyn_smem_size;
        c.range_stop = 0;
        c.reserved = 0;
        c.lanes = 0;
        c.executor = executor;
        c.linear_tid = first;
    }

    fn create(&mut self) -> Result<u32, String> {
        let idx = self.len;
        if idx as usize >= MAX_FIBERS {
            return Err(format!("more than {MAX_FIBERS} fibers on one worker"));
        }
        let stack = self.stacks.take(self.stack_size)?;
        let colour = (idx as usize * 7 % COLOURS) * COLOUR_STEP;
        let top = (stack.base - colour) & !15;
        let f = self.slab.wrapping_add(idx as usize);
        // SAFETY: slot `idx` is inside the slab and empty (slots below `len` hold fibers).
        unsafe {
            f.write(Fiber {
                sp: 0,
                home: ptr::null_mut(),
                cursor: 0,
                end: 0,
                index: idx,
                in_kernel: AtomicBool::new(false),
                busy: false,
                ctx: new_ctx(),
                run: None,
                params: ptr::null(),
                stack_limit: stack.limit,
                stack_top: top,
                stack_base: stack.base,
                last_yield: None,
                recover: ptr::null(),
            });
        }
        self.len += 1;
        // SAFETY: just made, owned by the pool.
        unsafe { (*f).reset() };
        self.created += 1;
        Ok(idx)
    }

    /// Gives fiber `idx` a fresh context on its own stack (after a fault, an interrupt
    /// or when its thread is abandoned): its frames are abandoned, never unwound.
    pub fn renew(&mut self, idx: u32) {
        self.get_mut(idx).reset();
    }

    /// After a stop: every fiber that still holds a range gets a fresh context and goes
    /// back to the idle list.
    pub fn abandon_busy(&mut self) {
        for fi in 0..self.len {
            if self.get(fi).busy {
                self.renew(fi);
                self.release(fi);
            }
        }
    }

    /// Frees every fiber and its stack (suspended frames are abandoned: nothing on a
    /// fiber stack owns anything).
    pub fn retire(&mut self) {
        for fi in 0..self.len {
            // SAFETY: slot `fi` holds a fiber made by `create`, dropped once here; no
            // switch into it is in progress.
            unsafe { ptr::drop_in_place(self.slab.add(fi as usize)) };
        }
        self.len = 0;
        self.idle.clear();
        self.stacks.release_all();
    }
}

impl Drop for FiberPool {
    fn drop(&mut self) {
        self.retire();
        // SAFETY: allocated in `new` with this layout; every fiber is dropped.
        unsafe { std::alloc::dealloc(self.slab.cast(), Self::layout()) };
    }
}

fn new_ctx() -> ThreadCtx {
    ThreadCtx {
        thread_idx: abi::Dim3::default(),
        block_idx: abi::Dim3::default(),
        block_dim: abi::Dim3::default(),
        grid_dim: abi::Dim3::default(),
        linear_tid: 0,
        reserved: 0,
        dyn_smem: ptr::null_mut(),
        dyn_smem_size: 0,
        range_stop: 0,
        lanes: 0,
        executor: ptr::null_mut(),
    }
}

/// Saves the running context into `*save` and continues the context suspended at `to`;
/// returns when something switches back to the saved context.
///
/// The saved record is [continue address, rbx, rbp]; the continue address is the `2:`
/// label, which pops rbx and rbp. Every other register is declared clobbered, so the
/// compiler keeps nothing live in one across the switch. Going on with `pop; jmp` (not
/// `ret`) lets the branch predictor learn where waiting fibers continue (the return
/// stack buffer would mispredict every switch).
///
/// # Safety
/// `save` is where the running context's stack pointer is kept until it is continued;
/// `to` is a suspended context (a record made by this function or by `reset`) that is
/// not running. The caller holds no reference that another context may invalidate.
#[inline(always)]
pub(crate) unsafe fn switch(save: *mut usize, to: usize) {
    // SAFETY: per the contract; the asm saves and restores rbx/rbp itself and declares
    // every other register clobbered (clobber_abi covers the caller-saved ones).
    unsafe {
        asm!(
            "push rbp",
            "push rbx",
            "lea rax, [rip + 2f]",
            "push rax",
            "mov [rdi], rsp",
            "mov rsp, rsi",
            "pop rax",
            "jmp rax",
            "2:",
            "pop rbx",
            "pop rbp",
            in("rdi") save,
            in("rsi") to,
            out("r12") _,
            out("r13") _,
            out("r14") _,
            out("r15") _,
            clobber_abi("C"),
        );
    }
}

/// Continues the context suspended at `to` from fiber `f`, whose own context is saved.
///
/// # Safety
/// As [`switch`]; runs on fiber `f`.
#[inline(always)]
pub(crate) unsafe fn switch_from(f: *mut Fiber, to: usize) {
    // SAFETY: per the contract.
    unsafe { switch(ptr::addr_of_mut!((*f).sp), to) }
}

/// The scheduler continues fiber `f` until a context switches back to `home` (`home`'s
/// event says why; it may be another fiber than `f`).
///
/// # Safety
/// `f` is a suspended fiber of the calling OS thread's pool whose `home` is `home`;
/// called from the scheduler (not from a fiber).
#[inline(always)]
pub(crate) unsafe fn enter(home: *mut Home, f: *const Fiber) {
    // SAFETY: per the contract.
    unsafe { switch(ptr::addr_of_mut!((*home).sp), (*f).sp) }
}

/// The running fiber `f` goes back to its scheduler with `event`; returns when
/// something continues it.
///
/// # Safety
/// Runs on fiber `f`, which holds no reference into the worker across the call.
#[inline(always)]
pub(crate) unsafe fn to_home(f: *mut Fiber, event: Event) {
    // SAFETY: `home` was set by `assign` for the range this fiber runs.
    unsafe {
        let home = (*f).home;
        (*home).event = event;
        switch_from(f, (*home).sp);
    }
}

/// The saved stack pointer of suspended fiber `f` (what continuing it starts from).
#[inline(always)]
pub(crate) fn saved_sp(f: &Fiber) -> usize {
    f.sp
}

/// Where a fresh fiber starts: the record made by `reset` holds the fiber's address just
/// above the continue address; call `fiber_main(fiber)` with the stack aligned as the
/// ABI wants at a call (16 bytes).
#[unsafe(naked)]
unsafe extern "C" fn fiber_start() -> ! {
    naked_asm!("mov rdi, [rsp]", "call {main}", "ud2", main = sym fiber_main)
}

/// A fiber's body: run the assigned range, ask the home's `range_end` hook what runs
/// next, continue it (unless it is this fiber with a new range). Never returns; owns
/// nothing (its frames may be abandoned at any switch). The switch is here, not in the
/// hook, so that a fiber continued with a new range goes straight on with its loop.
unsafe extern "C" fn fiber_main(f: *mut Fiber) -> ! {
    loop {
        // SAFETY: `f` is this fiber (the scheduler only enters it after `assign`, which
        // set `run`, `params` and `home`); the library's `run` is called as its ABI
        // specifies, with this fiber's context.
        unsafe {
            if let Some(run) = (*f).run {
                let first = (*f).cursor;
                let count = (*f).end - first;
                (*f).set_in_kernel(true);
                run((*f).params, ptr::addr_of_mut!((*f).ctx), first, count);
                (*f).set_in_kernel(false);
            }
            let to = ((*(*f).home).range_end)(f);
            if to != 0 {
                switch_from(f, to);
            }
        }
    }
}

/// Starts loading fiber `f` itself (its saved stack pointer and its context): a
/// barrier sweep visits every fiber once, so nothing of it is still in L1.
#[inline(always)]
pub(crate) fn prefetch_fiber(f: *const Fiber) {
    use core::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
    // SAFETY: prefetches never fault.
    unsafe {
        _mm_prefetch::<_MM_HINT_T0>(f.cast::<i8>().add(HOT_LINE * 64));
    }
}

/// Starts loading the stack above suspended fiber `f`'s saved stack pointer, what
/// continuing it touches first. Reads `f.sp`: best when `prefetch_fiber(f)` ran a
/// switch earlier.
#[inline(always)]
pub(crate) fn prefetch_stack(f: *const Fiber) {
    use core::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
    // SAFETY: prefetches never fault; `f` is a live fiber that is not running (a plain
    // read of its saved stack pointer).
    unsafe {
        let sp = (*f).sp as *const i8;
        let mut off = 0;
        while off < HOT_STACK_BYTES {
            _mm_prefetch::<_MM_HINT_T0>(sp.add(off));
            off += 64;
        }
    }
}

#[cfg(test)]
mod tests {
    //! The switch and the pool on their own, without a scheduler: a test home whose
    //! `range_end` goes back to it, and kernels (`RunFn`s) that switch home mid-range.
    use crate::exec::fibers::*;

    const SCHED_RBX: u64 = 0x0123_4567_89ab_cdef;
    const SCHED_RBP: u64 = 0x0fed_cba9_8765_4321;
    const FIBER_RBX: u64 = 0x1111_2222_3333_4444;
    const FIBER_RBP: u64 = 0x5555_6666_7777_8888;

    unsafe extern "C" fn enter_c(home: *mut Home, f: *const Fiber) {
        // SAFETY: forwarded contract (`enter`).
        unsafe { enter(home, f) }
    }

    unsafe extern "C" fn to_home_c(f: *mut Fiber) {
        // SAFETY: forwarded contract (`to_home`); runs on `f`.
        unsafe { to_home(f, Event::Waiting) }
    }

    /// Calls `enter(home, f)` with rbx and rbp holding marks; returns 1 when both still
    /// hold them after the switch back, else 0. Compiled code between the marks and the
    /// switch is only `enter_c`, which saves and restores neither unless it uses them.
    #[unsafe(naked)]
    unsafe extern "C" fn enter_marked(home: *mut Home, f: *const Fiber) -> u64 {
        naked_asm!(
            "push rbx", "push rbp", "sub rsp, 8",
            "mov rbx, {a}", "mov rbp, {b}",
            "call {enter}",
            "xor eax, eax",
            "mov rcx, {a}", "cmp rbx, rcx", "jne 3f",
            "mov rcx, {b}", "cmp rbp, rcx", "jne 3f",
            "mov eax, 1",
            "3:",
            "add rsp, 8", "pop rbp", "pop rbx", "ret",
            a = const SCHED_RBX, b = const SCHED_RBP, enter = sym enter_c,
        )
    }

    /// The same on the fiber's side: switches home with other marks in rbx and rbp, and
    /// says whether they are back when the fiber is continued.
    #[unsafe(naked)]
    unsafe extern "C" fn to_home_marked(f: *mut Fiber) -> u64 {
        naked_asm!(
            "push rbx", "push rbp", "sub rsp, 8",
            "mov rbx, {a}", "mov rbp, {b}",
            "call {to_home}",
            "xor eax, eax",
            "mov rcx, {a}", "cmp rbx, rcx", "jne 3f",
            "mov rcx, {b}", "cmp rbp, rcx", "jne 3f",
            "mov eax, 1",
            "3:",
            "add rsp, 8", "pop rbp", "pop rbx", "ret",
            a = const FIBER_RBX, b = const FIBER_RBP, to_home = sym to_home_c,
        )
    }

    /// The fiber running a kernel, from its context (`ctx` is a field of `Fiber`).
    fn fiber_of(ctx: *mut ThreadCtx) -> *mut Fiber {
        ctx.cast::<u8>().wrapping_sub(std::mem::offset_of!(Fiber, ctx)).cast()
    }

    /// What the test kernels record: params[0] points at these counters.
    #[derive(Default)]
    struct Log {
        starts: u64,
        resumed: u64,
        fiber_marks_kept: u64,
    }

    /// Starts, switches home once, and notes whether its own rbx/rbp came back.
    unsafe extern "C" fn switching_kernel(params: *const *mut c_void, ctx: *mut ThreadCtx, _first: u32, _count: u32) {
        // SAFETY: params[0] is the test's `Log`, alive for the test; `ctx` is this fiber's.
        unsafe {
            let log = &mut *(*params).cast::<Log>();
            log.starts += 1;
            let kept = to_home_marked(fiber_of(ctx));
            let log = &mut *(*params).cast::<Log>();
            log.resumed += 1;
            log.fiber_marks_kept += kept;
        }
    }

    /// The test home's `range_end`: back to the scheduler.
    unsafe fn back_home(f: *mut Fiber) -> usize {
        // SAFETY: `f` is a fiber whose home was set by `assign`.
        unsafe { (*(*f).home).saved_sp() }
    }

    fn start(pool: &mut FiberPool, home: *mut Home, log: *mut Log, params: &mut [*mut c_void; 1]) -> u32 {
        params[0] = log.cast();
        let fi = pool.take_idle().unwrap();
        pool.assign(fi, 0, 1, switching_kernel, params.as_ptr(), &BlockFields::default(), ptr::null_mut(), home);
        fi
    }

    #[test]
    fn a_switch_keeps_the_callee_saved_registers_of_both_sides() {
        let mut pool = FiberPool::new(64 * 1024);
        let mut home = Home::new(back_home);
        // The kernels write the log through params[0]; the test reads it between switches.
        let (log, mut params) = (Box::into_raw(Box::<Log>::default()), [ptr::null_mut(); 1]);
        let fi = start(&mut pool, &mut home, log, &mut params);
        // SAFETY: `log` lives until the end of the test; no kernel runs while it is read.
        let log = || unsafe { &*log };
        // SAFETY: fiber `fi` is suspended (fresh) and belongs to this thread's pool.
        let kept = unsafe { enter_marked(&mut home, pool.ptr(fi)) };
        assert_eq!((kept, log().starts, log().resumed), (1, 1, 0), "the scheduler's rbx/rbp after the fiber switched home");
        // SAFETY: as above; the fiber is suspended in `to_home_marked`.
        let kept = unsafe { enter_marked(&mut home, pool.ptr(fi)) };
        assert_eq!(kept, 1, "the scheduler's rbx/rbp after the range ended");
        assert_eq!((log().starts, log().resumed, log().fiber_marks_kept), (1, 1, 1), "the fiber's rbx/rbp when it was continued");
        assert_eq!(home.event, Event::Waiting);
    }

    #[test]
    fn a_renewed_fiber_starts_fresh() {
        let mut pool = FiberPool::new(64 * 1024);
        let mut home = Home::new(back_home);
        // The kernels write the log through params[0]; the test reads it between switches.
        let (log, mut params) = (Box::into_raw(Box::<Log>::default()), [ptr::null_mut(); 1]);
        let fi = start(&mut pool, &mut home, log, &mut params);
        // SAFETY: `log` lives until the end of the test; no kernel runs while it is read.
        let log = || unsafe { &*log };
        let fresh_sp = saved_sp(pool.get(fi));
        // SAFETY: fiber `fi` is suspended and belongs to this thread's pool.
        unsafe { enter(&mut home, pool.ptr(fi)) };
        assert_eq!((log().starts, log().resumed), (1, 0));
        assert_ne!(saved_sp(pool.get(fi)), fresh_sp, "suspended inside the kernel");
        // Abandon the suspended range: the fiber goes back to its first record, and the
        // next range runs the kernel from its start (the abandoned frames never resume).
        pool.renew(fi);
        assert_eq!(saved_sp(pool.get(fi)), fresh_sp);
        assert!(!pool.get(fi).in_kernel.load(Ordering::Relaxed));
        pool.assign(fi, 5, 6, switching_kernel, params.as_ptr(), &BlockFields::default(), ptr::null_mut(), &mut home);
        // SAFETY: as above.
        unsafe { enter(&mut home, pool.ptr(fi)) };
        assert_eq!((log().starts, log().resumed), (2, 0), "started again, not continued");
        assert_eq!(pool.get(fi).ctx.linear_tid, 5);
        // SAFETY: as above.
        unsafe { enter(&mut home, pool.ptr(fi)) };
        assert_eq!((log().starts, log().resumed), (2, 1));
    }

    #[test]
    fn a_fiber_stack_ends_in_a_guard_page() {
        let mut pool = FiberPool::new(64 * 1024);
        let fi = pool.take_idle().unwrap();
        let f = pool.get(fi);
        assert!(f.holds_stack_pointer(f.stack_limit) && f.holds_stack_pointer(f.stack_top - 8));
        assert!(!f.holds_stack_pointer(f.stack_limit - 1));
        // The lowest page is inaccessible, so an overflow faults there (and
        // `fault::fault_failure` reports it as a stack overflow); the page above is the
        // stack. process_vm_readv on this process answers EFAULT instead of faulting.
        let readable = |addr: usize| {
            let mut b = 0u8;
            let local = libc::iovec { iov_base: (&mut b as *mut u8).cast(), iov_len: 1 };
            let remote = libc::iovec { iov_base: addr as *mut libc::c_void, iov_len: 1 };
            // SAFETY: reads one byte into `b`; the kernel checks the remote address.
            unsafe { libc::process_vm_readv(libc::getpid(), &local, 1, &remote, 1, 0) == 1 }
        };
        assert!(!readable(f.stack_limit) && !readable(f.stack_limit + 4095), "guard page");
        assert!(readable(f.stack_limit + 4096), "the page above the guard is the stack");
    }
}
