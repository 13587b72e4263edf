//! Counters that survive the program's failure: on SIGTERM, SIGINT, SIGHUP, SIGQUIT and
//! SIGABRT (an assert, a timeout's kill) the counters file is written before the signal
//! takes its course.
//!
//! Writing JSON is not async-signal-safe, so the handler only wakes a writer thread
//! (through a pipe) and waits for it at most [`WAIT`]; then the signal goes on to the
//! program's own handler, or to the default action. A writer that cannot finish (the
//! interrupted thread held a lock it needs) leaves the last checkpoint on disk.
//!
//! A SIGSEGV handler (installed at cuInit; faults of kernel code never get here, the
//! executor's handler takes them first) recognises two faults of the driver's making:
//! - a copy (or the staging of an async one) that reads or writes host memory the process
//!   cannot read or write (`memory::Touching`): the real driver's copies die of SIGSEGV
//!   there (measured on an H200: `hostmem_*`), and so does this one, with a report naming
//!   the copy, the host range and the address, and the counters file;
//! - under EMU_CUDA_CHECKS=pointers, host code dereferencing a device pointer (an address
//!   in the device arena, see `arena`).
//!
//! The writer thread prints the report (address, what it belongs to, pc and symbol),
//! records it as a hazard and writes the counters file; then the fault goes to the
//! program's previous SIGSEGV handler, or the process dies of SIGSEGV as it would with a
//! discrete GPU.

use simtwin_abi::counters::State;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Once;

const SIGNALS: [libc::c_int; 5] = [libc::SIGTERM, libc::SIGINT, libc::SIGHUP, libc::SIGQUIT, libc::SIGABRT];
/// How long a handler waits for the writer.
const WAIT_MS: libc::c_int = 2000;

static INSTALL: Once = Once::new();
static WRITER: Once = Once::new();
static INSTALL_POINTERS: Once = Once::new();
/// The SIGSEGV action in place before the pointer check's.
static mut PREVIOUS_SEGV: std::mem::MaybeUninit<libc::sigaction> = std::mem::MaybeUninit::uninit();
/// The host fault being reported: address, pc, thread, whether it was a write.
static FAULT_ADDR: AtomicU64 = AtomicU64::new(0);
static FAULT_PC: AtomicU64 = AtomicU64::new(0);
static FAULT_TID: AtomicU64 = AtomicU64::new(0);
static FAULT_WRITE: AtomicBool = AtomicBool::new(false);
/// Whether the fault will end the process (no program handler to pass it to).
static FAULT_FATAL: AtomicBool = AtomicBool::new(false);
/// The copy that faulted (`what` is a static string), when the fault was a host copy's.
static FAULT_COPY: std::sync::Mutex<Option<crate::memory::Touching>> = std::sync::Mutex::new(None);
static FAULT_IN_COPY: AtomicBool = AtomicBool::new(false);
/// Set by the first report: a fault the program's handler returns from is not reported
/// again.
static REPORTED: AtomicBool = AtomicBool::new(false);
/// (wake, ack) pipes: written by the handler / by the writer thread.
static mut PIPES: [[libc::c_int; 2]; 2] = [[-1, -1], [-1, -1]];
/// The handlers in place before ours, by index into SIGNALS.
static mut PREVIOUS: [std::mem::MaybeUninit<libc::sigaction>; 5] = [const { std::mem::MaybeUninit::uninit() }; 5];

fn name(sig: libc::c_int) -> &'static str {
    match sig {
        libc::SIGTERM => "SIGTERM",
        libc::SIGINT => "SIGINT",
        libc::SIGHUP => "SIGHUP",
        libc::SIGQUIT => "SIGQUIT",
        libc::SIGABRT => "SIGABRT",
        libc::SIGSEGV => "SIGSEGV",
        _ => "signal",
    }
}

/// Starts the writer thread and its pipes (once per process); false when that failed.
fn ensure_writer() -> bool {
    WRITER.call_once(|| {
        // SAFETY: pipe() writes two descriptors into each array; PIPES is written only
        // here, before any handler that reads it is installed.
        unsafe {
            let p = &mut *std::ptr::addr_of_mut!(PIPES);
            if libc::pipe2(p[0].as_mut_ptr(), libc::O_CLOEXEC) != 0 || libc::pipe2(p[1].as_mut_ptr(), libc::O_CLOEXEC) != 0 {
                *p = [[-1, -1], [-1, -1]];
                return;
            }
        }
        // SAFETY: the wake pipe's read end, set above.
        let wake = unsafe { (*std::ptr::addr_of!(PIPES))[0][0] };
        if std::thread::Builder::new().name("simtwin-counters".into()).spawn(move || writer(wake)).is_err() {
            // SAFETY: as above; no handler uses the pipes yet.
            unsafe { *std::ptr::addr_of_mut!(PIPES) = [[-1, -1], [-1, -1]] };
        } else {
            crate::counters_file::checkpoint_writer_started();
        }
    });
    // SAFETY: PIPES is only written inside the Once above, which has completed.
    unsafe { (*std::ptr::addr_of!(PIPES))[0][1] >= 0 }
}

/// Installs the handlers (once per process, only when a counters file is asked for).
pub fn install() {
    if crate::config::counts_path().is_none() {
        return;
    }
    INSTALL.call_once(|| {
        if !ensure_writer() {
            return;
        }
        for (i, &sig) in SIGNALS.iter().enumerate() {
            // SAFETY: a plain sigaction install; the previous action is saved for chaining.
            unsafe {
                let mut sa: libc::sigaction = std::mem::zeroed();
                sa.sa_sigaction = handler as *const () as usize;
                sa.sa_flags = libc::SA_SIGINFO | libc::SA_ONSTACK;
                libc::sigemptyset(&mut sa.sa_mask);
                let mut old: libc::sigaction = std::mem::zeroed();
                libc::sigaction(sig, &sa, &mut old);
                (*std::ptr::addr_of_mut!(PREVIOUS))[i].write(old);
            }
        }
    });
}

/// Installs the SIGSEGV handler that reports faults of the driver's host copies and,
/// under EMU_CUDA_CHECKS=pointers, host code dereferencing a device pointer (once per
/// process, at cuInit, so the executor's fault handler, installed at the first launch,
/// comes first and chains to it).
pub fn install_fault_report() {
    INSTALL_POINTERS.call_once(|| {
        ensure_writer();
        // SAFETY: a plain sigaction install; PREVIOUS_SEGV holds a zeroed action (the
        // default) before ours is in place and the previous action right after.
        unsafe {
            (*std::ptr::addr_of_mut!(PREVIOUS_SEGV)).write(std::mem::zeroed());
            let mut sa: libc::sigaction = std::mem::zeroed();
            sa.sa_sigaction = pointer_fault as *const () as usize;
            sa.sa_flags = libc::SA_SIGINFO | libc::SA_ONSTACK;
            libc::sigemptyset(&mut sa.sa_mask);
            let mut old: libc::sigaction = std::mem::zeroed();
            libc::sigaction(libc::SIGSEGV, &sa, &mut old);
            (*std::ptr::addr_of_mut!(PREVIOUS_SEGV)).write(old);
        }
    });
}

/// The writer thread: one byte (the signal number) per request, one ack byte back; every
/// CHECKPOINT_GAP it writes a checkpoint left for it.
fn writer(wake: libc::c_int) {
    let mut b = [0u8; 1];
    let gap = crate::counters_file::CHECKPOINT_GAP.as_millis() as libc::c_int;
    loop {
        let mut fd = libc::pollfd { fd: wake, events: libc::POLLIN, revents: 0 };
        // SAFETY: poll on our own pipe.
        if unsafe { libc::poll(&mut fd, 1, gap) } == 0 {
            crate::counters_file::checkpoint_if_due();
            continue;
        }
        // SAFETY: reading into our own buffer from our pipe.
        let n = unsafe { libc::read(wake, b.as_mut_ptr().cast(), 1) };
        if n != 1 {
            return;
        }
        if b[0] as libc::c_int == libc::SIGSEGV {
            if FAULT_IN_COPY.load(Ordering::Acquire) {
                copy_report();
            } else {
                pointer_report();
            }
            if !FAULT_FATAL.load(Ordering::Acquire) {
                // The program's own handler takes the fault and may go on: its exit
                // writes the final file. Written now, not throttled: the handler may
                // _exit before the next checkpoint is due.
                crate::counters_file::write(State::Checkpoint);
                ack();
                continue;
            }
        }
        crate::counters_file::write(State::Signal(name(b[0] as libc::c_int).to_string()));
        ack();
    }
}

/// Tells the waiting handler the writer is done.
fn ack() {
    // SAFETY: the ack pipe's write end; writing one byte.
    unsafe {
        let ack = (*std::ptr::addr_of!(PIPES))[1][1];
        libc::write(ack, [0u8].as_ptr().cast(), 1);
    }
}

extern "C" fn handler(sig: libc::c_int, info: *mut libc::siginfo_t, uctx: *mut libc::c_void) {
    // SAFETY: only async-signal-safe calls: write, poll, read, sigaction, raise.
    unsafe {
        wake_writer(sig);
        let Some(i) = SIGNALS.iter().position(|&s| s == sig) else { return };
        let prev = (*std::ptr::addr_of!(PREVIOUS))[i].assume_init_ref();
        let h = prev.sa_sigaction;
        if h == libc::SIG_IGN {
            return;
        }
        if h == libc::SIG_DFL {
            // Take the default action as if we had never been here.
            let mut dfl: libc::sigaction = std::mem::zeroed();
            dfl.sa_sigaction = libc::SIG_DFL;
            libc::sigemptyset(&mut dfl.sa_mask);
            libc::sigaction(sig, &dfl, std::ptr::null_mut());
            if sig != libc::SIGABRT {
                libc::raise(sig);
            }
            // abort() raises SIGABRT again itself once a handler returns.
            return;
        }
        if prev.sa_flags & libc::SA_SIGINFO != 0 {
            let f: extern "C" fn(libc::c_int, *mut libc::siginfo_t, *mut libc::c_void) = std::mem::transmute(h);
            f(sig, info, uctx);
        } else {
            let f: extern "C" fn(libc::c_int) = std::mem::transmute(h);
            f(sig);
        }
    }
}

/// Asks the writer thread to act on `sig` and waits for it at most WAIT_MS.
///
/// # Safety
/// Async-signal-safe (write, poll, read); from a signal handler or anywhere.
unsafe fn wake_writer(sig: libc::c_int) {
    // SAFETY: only async-signal-safe calls on the pipes (-1 when there is no writer:
    // the write fails and nothing waits).
    unsafe {
        if crate::fork::in_child() {
            return; // no writer thread in a forked child
        }
        let p = *std::ptr::addr_of!(PIPES);
        let b = [sig as u8];
        if libc::write(p[0][1], b.as_ptr().cast(), 1) == 1 {
            let mut fd = libc::pollfd { fd: p[1][0], events: libc::POLLIN, revents: 0 };
            if libc::poll(&mut fd, 1, WAIT_MS) == 1 {
                let mut r = [0u8; 1];
                libc::read(p[1][0], r.as_mut_ptr().cast(), 1);
            }
        }
    }
}

/// The driver's SIGSEGV handler (see the module's documentation).
extern "C" fn pointer_fault(sig: libc::c_int, info: *mut libc::siginfo_t, uctx: *mut libc::c_void) {
    // SAFETY: the kernel passes a valid siginfo and ucontext to an SA_SIGINFO handler;
    // only async-signal-safe calls follow (atomics, gettid, a thread-local Cell, a
    // try_lock, the pipes, sigaction, raise).
    unsafe {
        let addr = (*info).si_addr() as u64;
        let copy = crate::memory::touching().filter(|t| {
            let within = |base: u64| base != 0 && addr >= base && addr - base < t.span;
            within(t.src) || within(t.dst)
        });
        let device = copy.is_some() || crate::arena::contains(addr);
        let prev = (*std::ptr::addr_of!(PREVIOUS_SEGV)).assume_init_ref();
        let h = prev.sa_sigaction;
        if device && !REPORTED.swap(true, Ordering::AcqRel) {
            let (pc, write) = fault_pc(uctx);
            if let (Some(c), Ok(mut slot)) = (copy, FAULT_COPY.try_lock()) {
                *slot = Some(c);
                FAULT_IN_COPY.store(true, Ordering::Release);
            }
            FAULT_ADDR.store(addr, Ordering::Release);
            FAULT_PC.store(pc, Ordering::Release);
            FAULT_WRITE.store(write, Ordering::Release);
            FAULT_TID.store(libc::gettid() as u64, Ordering::Release);
            FAULT_FATAL.store(h == libc::SIG_DFL || h == libc::SIG_IGN, Ordering::Release);
            wake_writer(sig);
        }
        if h == libc::SIG_DFL || h == libc::SIG_IGN {
            // Die of SIGSEGV as the program would have without us (a fault cannot be
            // ignored). Raised now, delivered when the handler returns: the faulting
            // access is not retried (a launch on another thread may have opened the
            // arena meanwhile).
            let mut dfl: libc::sigaction = std::mem::zeroed();
            dfl.sa_sigaction = libc::SIG_DFL;
            libc::sigemptyset(&mut dfl.sa_mask);
            libc::sigaction(sig, &dfl, std::ptr::null_mut());
            if device {
                libc::raise(sig);
            }
            // A fault elsewhere: returning retries the access, which faults again and
            // takes the default action.
        } else if prev.sa_flags & libc::SA_SIGINFO != 0 {
            let f: extern "C" fn(libc::c_int, *mut libc::siginfo_t, *mut libc::c_void) = std::mem::transmute(h);
            f(sig, info, uctx);
        } else {
            let f: extern "C" fn(libc::c_int) = std::mem::transmute(h);
            f(sig);
        }
    }
}

/// The interrupted pc and whether the access was a write (x86-64 page-fault error code
/// bit 1), from a signal's ucontext.
///
/// # Safety
/// `uctx` is the ucontext the kernel passed to an SA_SIGINFO handler.
#[cfg(all(target_os = "linux", target_arch = "x86_64"))]
unsafe fn fault_pc(uctx: *mut libc::c_void) -> (u64, bool) {
    // SAFETY: per the contract.
    let g = unsafe { &(*(uctx as *const libc::ucontext_t)).uc_mcontext.gregs };
    (g[libc::REG_RIP as usize] as u64, g[libc::REG_ERR as usize] & 2 != 0)
}

#[cfg(not(all(target_os = "linux", target_arch = "x86_64")))]
unsafe fn fault_pc(_uctx: *mut libc::c_void) -> (u64, bool) {
    (0, false)
}

/// On the writer thread: reports a fault of the driver's copy in host memory the
/// process cannot reach (stderr and a hazard in the counters). Looks at nothing the
/// faulting thread may hold (it may hold the driver's lock).
fn copy_report() {
    let Some(c) = FAULT_COPY.lock().ok().and_then(|g| *g) else { return };
    let addr = FAULT_ADDR.load(Ordering::Acquire);
    let write = FAULT_WRITE.load(Ordering::Acquire);
    let tid = FAULT_TID.load(Ordering::Acquire);
    let (side, base) =
        if c.src != 0 && addr >= c.src && addr - c.src < c.span && !write { ("source", c.src) } else { ("destination", c.dst) };
    let operation = format!(
        "{} of {} bytes {} host memory at {base:#x} on thread {tid}",
        c.what,
        c.span,
        if side == "source" { "from" } else { "into" }
    );
    let message = format!(
        "the driver's {} {} the host address {addr:#x} (byte {} of the {side}, {base:#x} + {} bytes), which the process cannot {}: \
         the real driver dies of SIGSEGV there too (measured on an H200); the program passed a host pointer that is unmapped or protected",
        c.what,
        if write { "wrote" } else { "read" },
        addr - base,
        c.span,
        if write { "write" } else { "read" }
    );
    crate::log_error!("{message}");
    crate::counters::get().hazard(simtwin_abi::counters::Hazard {
        kind: "host-memory-fault".into(),
        kernel: String::new(),
        block: [0; 3],
        threads: Vec::new(),
        operation,
        message,
        occurrences: 1,
    });
}

/// On the writer thread: reports the host fault the handler recorded (stderr and a
/// hazard in the counters).
fn pointer_report() {
    let addr = FAULT_ADDR.load(Ordering::Acquire);
    let pc = FAULT_PC.load(Ordering::Acquire);
    let access = if FAULT_WRITE.load(Ordering::Acquire) { "write to" } else { "read of" };
    let tid = FAULT_TID.load(Ordering::Acquire);
    let place = crate::arena::describe(addr, std::time::Duration::from_millis(500));
    let code = match simtwin_abi::ffi::dl_info(pc as usize as *const libc::c_void) {
        Some(i) => {
            let file = i.file.display();
            match i.symbol {
                Some((name, start)) => format!("{name}+{:#x} in {file}", pc as usize - start),
                None => format!("in {file}"),
            }
        }
        None => "unknown code".into(),
    };
    let operation = format!("host {access} {addr:#x} at pc {pc:#x} ({code}) on thread {tid}");
    let message = format!(
        "host code dereferenced a device pointer; on a discrete GPU this faults too: {operation}; {place}. \
         (EMU_CUDA_CHECKS=pointers: device memory is out of host code's reach outside launches; \
         copy it with cuMemcpy*, or use pinned or managed memory)"
    );
    crate::log_error!("{message}");
    crate::counters::get().hazard(simtwin_abi::counters::Hazard {
        kind: "host-device-pointer".into(),
        kernel: String::new(),
        block: [0; 3],
        threads: Vec::new(),
        operation,
        message,
        occurrences: 1,
    });
}
