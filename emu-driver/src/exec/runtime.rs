//! The runtime table the kernel libraries call (`abi::Runtime`): each entry converts its
//! raw arguments, finds the worker and fiber it runs on, calls the worker's safe method
//! for the operation, and suspends the fiber when the answer is "wait".
//!
//! Every entry is called by kernel code on a fiber. Outside a launch (host code of a
//! library calling a device function) an entry answers neutrally and logs why.
//! While an entry runs, its fiber is marked as not in kernel code, so the watchdog
//! never redirects a fiber out of the executor's own code.

use super::current;
use super::fibers::Fiber;
use super::hazard::{key_of, Detected, HazardKind};
use super::scheduler::{self, current_worker, Worker};
use super::threads::Arrival;
use super::types::{CUDA_ERROR_ASSERT, CUDA_ERROR_LAUNCH_FAILED, CUDA_ERROR_MISALIGNED_ADDRESS};
use crate::abi;
use std::ffi::{c_char, c_void};

/// The table handed to every kernel library's `bind`.
pub(crate) static RUNTIME: abi::Runtime = abi::Runtime {
    abi_version: abi::ABI_VERSION,
    size: std::mem::size_of::<abi::Runtime>() as u32,
    barrier: rt_barrier,
    warp: RT_WARP,
    activemask: rt_activemask,
    trap: rt_trap,
    print: rt_print,
    threadfence: rt_threadfence,
    clock: rt_clock,
    yield_now: rt_yield,
    report: rt_report,
    access: rt_access,
    texture: rt_texture,
    block_barrier: rt_block_barrier,
    warp_exited: rt_warp_exited,
    grid_workspace: rt_grid_workspace,
    recover_slot: rt_recover_slot,
};

/// The worker and fiber the caller runs on, or None outside a launch. Marks the fiber
/// as running executor code.
#[inline(always)]
fn on_fiber() -> Option<(*mut Worker, *mut Fiber)> {
    if let Some((f, w)) = current::running() {
        // SAFETY: the running fiber is live.
        unsafe { (*f).set_in_kernel(false) };
        return Some((w.cast(), f));
    }
    on_fiber_slow()
}

/// `on_fiber` through the worker's thread-local (the context slot could not tell).
#[cold]
#[inline(never)]
fn on_fiber_slow() -> Option<(*mut Worker, *mut Fiber)> {
    let w = current_worker();
    if w.is_null() {
        return None;
    }
    // SAFETY: CURRENT points to this thread's worker while it runs a launch; `running`
    // is only written by the scheduler, which is suspended while a fiber runs.
    let f = unsafe { (*w).running.current };
    if f.is_null() {
        return None;
    }
    // SAFETY: the running fiber is live.
    unsafe { (*f).set_in_kernel(false) };
    Some((w, f))
}

/// Back to kernel code on fiber `f`.
#[inline(always)]
fn leave(f: *mut Fiber) {
    // SAFETY: the running fiber is live.
    unsafe { (*f).set_in_kernel(true) };
}

/// Runs `op` on the worker: the only place an entry borrows it, never across a switch.
#[inline(always)]
fn with_worker<R>(w: *mut Worker, op: impl FnOnce(&mut Worker) -> R) -> R {
    // SAFETY: the scheduler holds no reference into the worker while a fiber runs, and
    // the borrow ends before the fiber suspends.
    op(unsafe { &mut *w })
}

/// Suspends the calling thread (on fiber `f` of worker `w`) until its rendezvous
/// completes; meanwhile other threads run.
/// `INLINE_START`: see `scheduler::wait`.
#[inline(always)]
fn wait<const INLINE_START: bool>(w: *mut Worker, f: *mut Fiber) {
    // SAFETY: we run on fiber `f`, the running fiber of `w`, and hold no borrow of the
    // worker.
    unsafe { scheduler::wait::<INLINE_START>(w, f) };
}

/// Suspends for good: the scheduler stops the launch and discards this fiber.
fn stop_forever(f: *mut Fiber) -> ! {
    // SAFETY: as in `wait`.
    unsafe { scheduler::stop_forever(f) }
}

#[cold]
#[inline(never)]
fn outside_launch(what: &str) {
    crate::log_warn!("{what} called outside a kernel launch; ignored");
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
    let r = with_worker(w, |wk| wk.barrier(f, op, pred != 0, site));
    let r = if r < scheduler::BAR_STOP {
        r
    } else if r == scheduler::BAR_WAIT {
        wait::<true>(w, f);
        if op == abi::bar::SYNC {
            0
        } else {
            with_worker(w, |wk| wk.block.barrier.result(op))
        }
    } else {
        stop_forever(f)
    };
    leave(f);
    r as i32
}

/// The table's type of the warp entry.
type WarpEntry = unsafe extern "C" fn(u32, u32, u64, i32, i32, *mut i32, abi::Site) -> u64;
/// `rt_warp` as it is defined: the call site as its two words.
type WarpEntryWords = unsafe extern "C" fn(u32, u32, u64, i32, i32, *mut i32, *const c_char, u64) -> u64;

/// `rt_warp` with the table's type.
///
/// The call site is the entry's seventh argument: the six integer registers are taken,
/// so the x86-64 System V ABI passes the 16-byte struct in memory, its two eightbytes
/// where two scalar arguments after `pred_out` would be. Callers store it as two words
/// (g++ pushes them); reading it back as one 16-byte load cannot be forwarded from two
/// 8-byte stores and stalls until they reach the cache (about a quarter of a shuffle's
/// time). `rt_warp` reads the two words, each forwarded from its store.
// SAFETY: the two signatures pass every argument in the same register or stack slot (as
// said above) and return in rax; `Site` is repr(C) {file, line, column}, its second
// eightbyte line | column << 32.
const RT_WARP: WarpEntry = unsafe { std::mem::transmute::<WarpEntryWords, WarpEntry>(rt_warp) };

#[allow(clippy::too_many_arguments)]
unsafe extern "C" fn rt_warp(
    op: u32,
    mask: u32,
    value: u64,
    arg: i32,
    width: i32,
    pred_out: *mut i32,
    site_file: *const c_char,
    site_line_column: u64,
) -> u64 {
    // Most arrivals join their warp's open collective and wait (`warp_join_fast`): that
    // path keeps few values, so a suspended lane's frame stays small; the first and the
    // last lane of a group, and everything unusual, take the general path.
    if let Some((f, w)) = current::running() {
        let w = w.cast::<Worker>();
        // SAFETY: the running fiber is live.
        unsafe { (*f).set_in_kernel(false) };
        if with_worker(w, |wk| wk.warp_join_fast(f, op, mask, value, arg, width)) {
            let (r, p) = wait_in_collective(w, f);
            return deliver_warp(f, pred_out, r, p);
        }
    }
    // SAFETY: the same arguments.
    unsafe { rt_warp_general(op, mask, value, arg, width, pred_out, site_file, site_line_column) }
}

/// `rt_warp` for every arrival its fast path does not take.
#[allow(clippy::too_many_arguments)]
#[inline(never)]
unsafe fn rt_warp_general(
    op: u32,
    mask: u32,
    value: u64,
    arg: i32,
    width: i32,
    pred_out: *mut i32,
    site_file: *const c_char,
    site_line_column: u64,
) -> u64 {
    let site = abi::Site { file: site_file, line: site_line_column as u32, column: (site_line_column >> 32) as u32 };
    let Some((w, f)) = on_fiber() else {
        outside_launch("a warp collective");
        return value;
    };
    let (r, p) = match with_worker(w, |wk| wk.warp(f, op, mask, value, arg, width, site)) {
        Arrival::Done(r, p) => (r, p),
        Arrival::Wait => wait_in_collective(w, f),
        Arrival::Stop => stop_forever(f),
    };
    deliver_warp(f, pred_out, r, p)
}

/// The calling lane (on fiber `f` of worker `w`) waits until its collective resolves;
/// its result and predicate.
#[inline(always)]
fn wait_in_collective(w: *mut Worker, f: *mut Fiber) -> (u64, i32) {
    wait::<false>(w, f);
    // SAFETY: `f` runs again (its group released it); a plain read of its thread.
    with_worker(w, |wk| wk.block.warp_result(unsafe { (*f).ctx.linear_tid }))
}

/// Hands a warp collective's result back to kernel code on fiber `f`: the predicate
/// where the library asked for it.
#[inline(always)]
fn deliver_warp(f: *mut Fiber, pred_out: *mut i32, r: u64, p: i32) -> u64 {
    if !pred_out.is_null() {
        // SAFETY: the library passes null or a valid int for the predicate.
        unsafe { *pred_out = p };
    }
    leave(f);
    r
}

unsafe extern "C" fn rt_activemask(site: abi::Site) -> u32 {
    let Some((w, f)) = on_fiber() else {
        outside_launch("__activemask");
        return 0;
    };
    let m = match with_worker(w, |wk| wk.activemask(site)) {
        Arrival::Done(m, _) => m as u32,
        Arrival::Wait => {
            wait::<false>(w, f);
            with_worker(w, |wk| wk.block.activemask_result(wk.running_thread()))
        }
        Arrival::Stop => stop_forever(f),
    };
    leave(f);
    m
}

/// A spin-wait hint (`__nanosleep`, a polling load): the caller suspends and every
/// other runnable thread of the block runs first (threads released from rendezvous,
/// then threads not started yet), so a thread spinning on a flag another thread of its
/// block sets lets that thread run. A launch whose threads only yield makes no progress:
/// the watchdog ends it.
unsafe extern "C" fn rt_yield(site: abi::Site) {
    let Some((w, f)) = on_fiber() else {
        return;
    };
    match with_worker(w, |wk| wk.yield_now(site)) {
        Arrival::Wait => wait::<false>(w, f),
        Arrival::Done(..) => {}
        Arrival::Stop => stop_forever(f),
    }
    leave(f);
}

/// Stops a fiber whose launch the watchdog marked: entries that do not rendezvous are
/// where a thread spinning through the runtime can be caught.
#[inline(always)]
fn check_watchdog(w: *mut Worker, f: *mut Fiber, what: &str) {
    if with_worker(w, |wk| wk.timed_out()) {
        with_worker(w, |wk| wk.stopped_in(what));
        stop_forever(f);
    }
}

unsafe extern "C" fn rt_trap(kind: u32, message: *const c_char, file: *const c_char, line: u32) {
    // SAFETY: the library passes null or NUL-terminated strings.
    let (msg, file) = unsafe { (simtwin_abi::ffi::c_str(message), simtwin_abi::ffi::c_str(file)) };
    let Some((w, f)) = on_fiber() else {
        crate::log_error!("device trap outside a kernel launch: {msg} ({file}:{line})");
        std::process::abort();
    };
    let loc = if file.is_empty() { String::new() } else { format!(" at {file}:{line}") };
    with_worker(w, |wk| {
        let at = wk.where_(wk.running_thread());
        let (code, text) = match kind {
            abi::trap::ASSERT => (CUDA_ERROR_ASSERT, format!("{at}: device assertion `{msg}` failed{loc}")),
            abi::trap::TRAP => (
                CUDA_ERROR_LAUNCH_FAILED,
                format!("{at}: __trap(){loc}{}", if msg.is_empty() { String::new() } else { format!(": {msg}") }),
            ),
            abi::trap::UNSUPPORTED => (CUDA_ERROR_LAUNCH_FAILED, format!("{at}: unsupported operation{loc}: {msg}")),
            abi::trap::MISALIGNED => (CUDA_ERROR_MISALIGNED_ADDRESS, format!("{at}: {msg}{loc}")),
            _ => (CUDA_ERROR_LAUNCH_FAILED, format!("{at}: trap of unknown kind {kind}{loc}: {msg}")),
        };
        wk.fail(code, text)
    });
    stop_forever(f)
}

unsafe extern "C" fn rt_print(text: *const c_char, len: usize) {
    use std::io::Write;
    if text.is_null() {
        return;
    }
    let fiber = on_fiber();
    if let Some((w, f)) = fiber {
        check_watchdog(w, f, "printf");
    }
    // SAFETY: the library passes `len` bytes at `text`.
    let bytes = unsafe { std::slice::from_raw_parts(text.cast::<u8>(), len) };
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(bytes);
    let _ = out.flush();
    if let Some((_, f)) = fiber {
        leave(f);
    }
}

unsafe extern "C" fn rt_threadfence(_scope: u32) {
    std::sync::atomic::fence(std::sync::atomic::Ordering::SeqCst);
    if let Some((w, f)) = on_fiber() {
        check_watchdog(w, f, "__threadfence");
        preempt_at_call(w, f);
        leave(f);
    }
}

/// A thread that spins through this call (polling `clock64()`, fencing) is preempted
/// here when the probe found it spinning for a time slice while inside the runtime,
/// where the probe cannot suspend it: as if it had called `__nanosleep`.
fn preempt_at_call(w: *mut Worker, f: *mut Fiber) {
    let due = with_worker(w, |wk| wk.watch.as_deref().is_some_and(|s| super::watchdog::take_preempt_at_call(s, f)));
    if due {
        with_worker(w, |wk| wk.stats.preemptions_at_call += 1);
        match with_worker(w, |wk| wk.preempt(f)) {
            Arrival::Wait => wait::<false>(w, f),
            Arrival::Done(..) => {}
            Arrival::Stop => stop_forever(f),
        }
    }
}

unsafe extern "C" fn rt_clock() -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: clock_gettime writes `ts`.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    if let Some((w, f)) = on_fiber() {
        check_watchdog(w, f, "clock()");
        preempt_at_call(w, f);
        leave(f);
    }
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// A device-defined result the library emulated: reported as a hazard.
unsafe extern "C" fn rt_report(kind: u32, message: *const c_char, site: abi::Site) {
    // SAFETY: the library passes null or a NUL-terminated string.
    let msg = unsafe { simtwin_abi::ffi::c_str(message) };
    let Some((w, f)) = on_fiber() else {
        crate::log_warn!("device-defined result outside a kernel launch: {msg}");
        return;
    };
    let stop = with_worker(w, |wk| {
        let tid = wk.running_thread();
        let key = key_of(&[site.key(), kind as u64]);
        let stop = wk.log.note(HazardKind::DeviceDefinedResult, key, || Detected {
            kind: HazardKind::DeviceDefinedResult,
            key,
            threads: vec![tid],
            operation: site.describe(),
            message: msg,
        });
        wk.block.threads.stop |= stop;
        stop
    });
    if stop {
        stop_forever(f);
    }
    leave(f);
}

/// A memory access of a checking library's kernel code (`kernels-host build --checks`):
/// what falls into the running block's shared memory goes to the race detector. Most
/// accesses are not to shared memory: that test comes first, before the fiber is marked
/// as running executor code (it takes no lock and changes nothing, so a watchdog probe
/// may interrupt it).
unsafe extern "C" fn rt_access(address: *const c_void, size: u64, kind: u32, pc: *const c_void) {
    let w = current_worker();
    if w.is_null() {
        return;
    }
    let addr = address as usize;
    // SAFETY: CURRENT points to this thread's worker while it runs a launch; reading the
    // checks' ranges races nothing (only this fiber's thread changes them, between blocks).
    let watched = unsafe { (*w).checks.as_deref().is_some_and(|c| c.watches(addr)) };
    if !watched {
        return;
    }
    let Some((w, f)) = on_fiber() else { return };
    let stop = with_worker(w, |wk| {
        let tid = wk.running_thread();
        let dim = wk.call.fields.block_dim;
        let Some(c) = wk.checks.as_deref_mut() else { return false };
        let stop = c.access(tid, dim, addr, size, kind, pc as usize, &mut wk.block.threads, &mut wk.log);
        wk.block.threads.stop |= stop;
        stop
    });
    if stop {
        stop_forever(f);
    }
    leave(f);
}

/// A texture or surface instruction: the one sampler both execution modes call
/// (`texture::sample`). A fault the device would raise (a surface access out of range in
/// trap mode, a misaligned one, an unknown object) fails the launch with its code.
unsafe extern "C" fn rt_texture(req: *mut abi::TexRequest) {
    if req.is_null() {
        return;
    }
    // SAFETY: the library passes its own request, valid for the call.
    let req = unsafe { &mut *req };
    let fiber = on_fiber();
    let r = crate::texture::sample::execute(req);
    let Some((w, f)) = fiber else {
        if let Err((_, msg)) = r {
            crate::log_warn!("texture instruction outside a kernel launch: {msg}");
        }
        return;
    };
    if let Err((code, msg)) = r {
        with_worker(w, |wk| {
            let at = wk.where_(wk.running_thread());
            wk.fail(code, format!("{at}: {msg}"))
        });
        stop_forever(f);
    }
    leave(f);
}

/// PTX mode's loop path: a warp collective completed without lanes that had exited
/// (see `loops`). Does not return when the launch stops, as a fiber's would not.
unsafe extern "C" fn rt_warp_exited(op: u32, site: abi::Site, mask: u32, warp: u32, gone: u32) -> i32 {
    let Some((w, f)) = on_fiber() else {
        outside_launch("a loop-path warp collective");
        return 1;
    };
    if with_worker(w, |wk| wk.loop_warp_exited(op, site, mask, warp, gone)) {
        stop_forever(f);
    }
    leave(f);
    0
}

/// PTX mode's loop path: a barrier of the block completed (see `loops`). Does not
/// return when the launch stops (an error-mode hazard), as a fiber's barrier would not.
unsafe extern "C" fn rt_block_barrier(op: u32, site: abi::Site, arrived: u32, exited: *const u32, exited_count: u32) -> i32 {
    let Some((w, f)) = on_fiber() else {
        outside_launch("a loop-path barrier");
        return 1;
    };
    let exited: &[u32] = if exited.is_null() || exited_count == 0 {
        &[]
    } else {
        // SAFETY: the library passes `exited_count` thread indices at `exited`.
        unsafe { std::slice::from_raw_parts(exited, exited_count as usize) }
    };
    let stop = with_worker(w, |wk| wk.loop_barrier(op, site, arrived, exited));
    if stop {
        stop_forever(f);
    }
    check_watchdog(w, f, "__syncthreads");
    leave(f);
    0
}

/// The running fiber's recovery slot (`Fiber::recover`), valid while its range runs.
/// Outside a launch: a slot of this OS thread that no fault handler reads.
unsafe extern "C" fn rt_recover_slot() -> *mut *const abi::Recover {
    let Some((_, f)) = on_fiber() else {
        thread_local! {
            static NOWHERE: std::cell::Cell<*const abi::Recover> = const { std::cell::Cell::new(std::ptr::null()) };
        }
        return NOWHERE.with(|c| c.as_ptr());
    };
    leave(f);
    // SAFETY: the running fiber is live while its range runs.
    unsafe { std::ptr::addr_of_mut!((*f).recover) }
}

/// The running launch's grid workspace (0 unless cooperative): what a grid sync reads
/// through `%envreg1`/`%envreg2`. Outside a launch: 0 (a grid sync there traps).
unsafe extern "C" fn rt_grid_workspace() -> u64 {
    let Some((w, f)) = on_fiber() else {
        outside_launch("the grid workspace (%envreg1/%envreg2)");
        return 0;
    };
    let ws = with_worker(w, |wk| wk.call.grid_workspace);
    leave(f);
    ws
}
