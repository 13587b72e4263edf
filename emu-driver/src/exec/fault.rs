//! Signals: faults in kernel code and watchdog probes.
//!
//! Faults (a wild pointer, a stack overflow, an integer division by zero) must end the
//! launch, not the process. A SIGSEGV/SIGBUS/SIGFPE/SIGILL handler runs on an alternate
//! signal stack (a fiber's stack may be the thing that overflowed); when the faulting
//! stack pointer lies in the fiber this thread is running, the handler rewrites the
//! interrupted registers so that the thread continues in the scheduler's suspended
//! context, which learns that the fiber faulted (its frames are abandoned).
//! Any other fault goes to the handler that was installed before ours (or the default
//! action), so the program's own handlers keep working.
//!
//! The watchdog's probe signal (`SIGRTMAX-3`) uses the same redirection for a fiber that
//! spins in kernel code past the watchdog's limit, and preempts one that spins for a time
//! slice (see `watchdog`); a probe that is not for a running launch goes to the signal's
//! previous handler, if any.
//!
//! This module knows signals, not workers: which fiber a signal concerns is answered by
//! a [`SignalTarget`], which the scheduler implements (it knows the running fiber) and
//! names when it installs the handlers.

use super::types::{LaunchFailure, CUDA_ERROR_ILLEGAL_ADDRESS, CUDA_ERROR_LAUNCH_FAILED};
use std::cell::Cell;
use std::ptr;
use std::sync::Once;

const SIGNALS: [libc::c_int; 4] = [libc::SIGSEGV, libc::SIGBUS, libc::SIGFPE, libc::SIGILL];
const ALT_STACK_SIZE: usize = 64 * 1024;

static INSTALL: Once = Once::new();
static INSTALL_PROBE: Once = Once::new();
/// The handlers that were in place before ours, by index into SIGNALS (the last slot
/// is the probe signal's). Written once under `INSTALL`/`INSTALL_PROBE` before our
/// handler can run.
static mut PREVIOUS: [std::mem::MaybeUninit<libc::sigaction>; 5] = [const { std::mem::MaybeUninit::uninit() }; 5];

thread_local! {
    /// The alternate signal stack this module mapped for this thread, if any.
    static ALT: Cell<*mut libc::c_void> = const { Cell::new(ptr::null_mut()) };
    /// This thread was seen with a usable alternate signal stack (its own or the one
    /// mapped here): later launches skip the `sigaltstack` query, a system call per
    /// launch otherwise.
    static ALT_SEEN: Cell<bool> = const { Cell::new(false) };
}

/// What a fault handler saw.
#[derive(Clone, Copy, Default, Debug)]
pub(crate) struct FaultInfo {
    pub signo: i32,
    pub code: i32,
    pub addr: usize,
    pub pc: usize,
}

/// Where a signal handler sends the thread it interrupted: the registers to continue
/// with (the scheduler's suspended context, which takes the fiber over).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Redirect {
    pub rip: usize,
    pub rsp: usize,
}

/// What the signal handlers ask the executor, on the OS thread the signal hit. Each
/// answer is where to redirect the interrupted fiber, or None when the signal is not
/// for a fiber this thread runs.
pub(crate) trait SignalTarget {
    /// A fault (`info`) with stack pointer `sp`: when it hit the stack of the fiber
    /// this thread is running, record it for the launch's report and return where the
    /// fiber's thread goes instead (the executor then knows it faulted).
    ///
    /// # Safety
    /// Only from a synchronous signal handler on this thread.
    unsafe fn fault(info: FaultInfo, sp: usize) -> Option<Redirect>;

    /// A watchdog probe that interrupted code at `pc` with stack pointer `sp` (see
    /// `watchdog::on_probe`).
    ///
    /// # Safety
    /// Only from the probe signal handler on this thread.
    unsafe fn probe(pc: usize, sp: usize) -> Option<Redirect>;

    /// Whether this OS thread is running a launch (a probe for it that changes nothing
    /// now is dropped, not passed on).
    fn on_worker_thread() -> bool;
}

/// The watchdog's probe signal.
pub(crate) fn probe_signal() -> libc::c_int {
    libc::SIGRTMAX() - 3
}

/// Lets probes reach this thread again: a probe handler that suspends its fiber (a
/// preemption) calls it before other fibers run; the handler's return restores the mask
/// the interrupted code had.
pub(crate) fn unblock_probe() {
    // SAFETY: pthread_sigmask on a set built here; async-signal-safe.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, probe_signal());
        libc::pthread_sigmask(libc::SIG_UNBLOCK, &set, ptr::null_mut());
    }
}

/// Installs the fault handler, answering through `T` (once per process), and makes sure
/// the calling thread has an alternate signal stack (looked at until the thread is seen
/// with one: a program that takes its thread's alternate stack away after that thread's
/// first launch is not noticed).
pub(crate) fn prepare_thread<T: SignalTarget>() {
    if !cfg!(all(target_os = "linux", target_arch = "x86_64")) {
        return;
    }
    // SAFETY: installs process-wide handlers once; see `install`.
    INSTALL.call_once(|| unsafe { install::<T>() });
    // SAFETY: maps and registers this thread's alternate stack if it has none.
    unsafe { ensure_altstack() };
}

/// Installs the probe handler, answering through `T` (once per process).
pub(crate) fn install_probe_handler<T: SignalTarget>() {
    if !cfg!(all(target_os = "linux", target_arch = "x86_64")) {
        return;
    }
    // SAFETY: as `install`, for the probe signal.
    INSTALL_PROBE.call_once(|| unsafe { install_one::<T>(probe_signal(), 4) });
}

#[cfg(all(target_os = "linux", target_arch = "x86_64"))]
unsafe fn install<T: SignalTarget>() {
    for (i, &sig) in SIGNALS.iter().enumerate() {
        // SAFETY: per this function's contract (once, before any handler runs).
        unsafe { install_one::<T>(sig, i) };
    }
}

/// # Safety
/// Once per slot, before our handler can run for `sig`.
#[cfg(all(target_os = "linux", target_arch = "x86_64"))]
unsafe fn install_one<T: SignalTarget>(sig: libc::c_int, slot: usize) {
    // SAFETY: plain C structs and calls. PREVIOUS[slot] holds a zeroed action (SIG_DFL)
    // before our handler is installed and the previous action right after, so the
    // handler never reads uninitialised memory.
    unsafe {
        (*ptr::addr_of_mut!(PREVIOUS))[slot].write(std::mem::zeroed());
        let mut sa: libc::sigaction = std::mem::zeroed();
        sa.sa_sigaction = handler::<T> as *const () as usize;
        // Faults run on the alternate stack (the fiber's may have overflowed). A probe
        // runs on the stack it interrupted: a preempted fiber stays suspended inside the
        // handler (its frame on the fiber's own stack) while other fibers run, and they
        // may be probed meanwhile.
        sa.sa_flags = libc::SA_SIGINFO | libc::SA_RESTART | if sig == probe_signal() { 0 } else { libc::SA_ONSTACK };
        libc::sigemptyset(&mut sa.sa_mask);
        // A probe must not land inside the fault handler, nor a fault-handling decision
        // inside a probe.
        libc::sigaddset(&mut sa.sa_mask, probe_signal());
        let mut old: libc::sigaction = std::mem::zeroed();
        libc::sigaction(sig, &sa, &mut old);
        (*ptr::addr_of_mut!(PREVIOUS))[slot].write(old);
    }
}

#[cfg(not(all(target_os = "linux", target_arch = "x86_64")))]
unsafe fn install<T: SignalTarget>() {}

#[cfg(not(all(target_os = "linux", target_arch = "x86_64")))]
unsafe fn install_one<T: SignalTarget>(_sig: libc::c_int, _slot: usize) {}

unsafe fn ensure_altstack() {
    if ALT_SEEN.try_with(|s| s.get()).unwrap_or(false) {
        return;
    }
    // SAFETY: sigaltstack/mmap with valid arguments; the mapping is kept for the
    // thread's lifetime.
    let mem = unsafe {
        let mut cur: libc::stack_t = std::mem::zeroed();
        if libc::sigaltstack(ptr::null(), &mut cur) != 0 {
            return;
        }
        if cur.ss_flags & libc::SS_DISABLE == 0 && cur.ss_size >= 16 * 1024 {
            let _ = ALT_SEEN.try_with(|s| s.set(true));
            return; // the thread has one (Rust's std gives its threads one)
        }
        let mem =
            libc::mmap(ptr::null_mut(), ALT_STACK_SIZE, libc::PROT_READ | libc::PROT_WRITE, libc::MAP_PRIVATE | libc::MAP_ANONYMOUS, -1, 0);
        if mem == libc::MAP_FAILED {
            return;
        }
        let st = libc::stack_t { ss_sp: mem, ss_flags: 0, ss_size: ALT_STACK_SIZE };
        if libc::sigaltstack(&st, ptr::null_mut()) != 0 {
            libc::munmap(mem, ALT_STACK_SIZE);
            return;
        }
        mem
    };
    // Mapped for the lifetime of the thread: a thread-local destructor could run while
    // a signal still needs the stack.
    ALT.with(|a| a.set(mem));
    let _ = ALT_SEEN.try_with(|s| s.set(true));
}

#[cfg(all(target_os = "linux", target_arch = "x86_64"))]
unsafe extern "C" fn handler<T: SignalTarget>(sig: libc::c_int, info: *mut libc::siginfo_t, uctx: *mut libc::c_void) {
    // SAFETY: the kernel passes a valid siginfo and ucontext to an SA_SIGINFO handler.
    unsafe {
        let uc = uctx as *mut libc::ucontext_t;
        let gregs = &mut (*uc).uc_mcontext.gregs;
        let sp = gregs[libc::REG_RSP as usize] as usize;
        let pc = gregs[libc::REG_RIP as usize] as usize;
        let target = if sig == probe_signal() {
            T::probe(pc, sp)
        } else {
            let addr = (*info).si_addr() as usize;
            T::fault(FaultInfo { signo: sig, code: (*info).si_code, addr, pc }, sp)
        };
        if let Some(r) = target {
            gregs[libc::REG_RIP as usize] = r.rip as i64;
            gregs[libc::REG_RSP as usize] = r.rsp as i64;
            return;
        }
        if sig == probe_signal() && T::on_worker_thread() {
            return; // a probe for this thread's worker that changes nothing now
        }
        chain(sig, info, uctx);
    }
}

/// Passes a signal that is not ours to the previous handler; with none, restores the
/// default action so that returning re-raises a fault the way it would have been.
#[cfg(all(target_os = "linux", target_arch = "x86_64"))]
unsafe fn chain(sig: libc::c_int, info: *mut libc::siginfo_t, uctx: *mut libc::c_void) {
    let slot = if sig == probe_signal() {
        4
    } else {
        match SIGNALS.iter().position(|&s| s == sig) {
            Some(i) => i,
            None => return,
        }
    };
    // SAFETY: PREVIOUS[slot] was written before our handler was installed for `sig`.
    let prev = unsafe { (*ptr::addr_of!(PREVIOUS))[slot].assume_init_ref() };
    let h = prev.sa_sigaction;
    if h == libc::SIG_IGN || (h == libc::SIG_DFL && slot == 4) {
        // An ignored signal, or a stray probe (its default action would kill).
    } else if h == libc::SIG_DFL {
        // SAFETY: restoring the default action for a fault signal.
        unsafe {
            let mut dfl: libc::sigaction = std::mem::zeroed();
            dfl.sa_sigaction = libc::SIG_DFL;
            libc::sigemptyset(&mut dfl.sa_mask);
            libc::sigaction(sig, &dfl, ptr::null_mut());
        }
    } else if prev.sa_flags & libc::SA_SIGINFO != 0 {
        // SAFETY: the program installed this three-argument handler for `sig`.
        unsafe {
            let f: extern "C" fn(libc::c_int, *mut libc::siginfo_t, *mut libc::c_void) = std::mem::transmute(h);
            f(sig, info, uctx);
        }
    } else {
        // SAFETY: the program installed this one-argument handler for `sig`.
        unsafe {
            let f: extern "C" fn(libc::c_int) = std::mem::transmute(h);
            f(sig);
        }
    }
}

/// The launch failure for a fault of thread `at` (a "kernel K block B thread T" text).
pub(crate) fn fault_failure(fault: FaultInfo, at: &str, stack_limit: usize, stack_size: usize) -> LaunchFailure {
    let page = 4096usize;
    match fault.signo {
        libc::SIGSEGV | libc::SIGBUS if fault.addr >= stack_limit.saturating_sub(64 * 1024) && fault.addr < stack_limit + page => {
            LaunchFailure {
                address: None,
                code: CUDA_ERROR_ILLEGAL_ADDRESS,
                message: format!(
                    "{at}: stack overflow (access at {:#x}, pc {:#x}); the fiber stack is {} bytes, raise EMU_CUDA_STACK",
                    fault.addr, fault.pc, stack_size
                ),
            }
        }
        // A general-protection fault (si_code SI_KERNEL): an access through a
        // non-canonical address, for which x86 reports no address at all.
        libc::SIGSEGV if fault.code == libc::SI_KERNEL => LaunchFailure {
            address: None,
            code: CUDA_ERROR_ILLEGAL_ADDRESS,
            message: format!(
                "{at}: illegal address: invalid memory access through a non-canonical address (bits 48-63 not copies of bit 47; \
                 x86 reports no address for these: general-protection fault, SIGSEGV, pc {:#x})",
                fault.pc
            ),
        },
        libc::SIGSEGV | libc::SIGBUS => LaunchFailure {
            address: Some(fault.addr as u64),
            code: CUDA_ERROR_ILLEGAL_ADDRESS,
            message: format!(
                "{at}: illegal address: invalid memory access at {:#x} ({}, pc {:#x})",
                fault.addr,
                if fault.signo == libc::SIGSEGV { "SIGSEGV" } else { "SIGBUS" },
                fault.pc
            ),
        },
        libc::SIGFPE => LaunchFailure {
            address: None,
            code: CUDA_ERROR_LAUNCH_FAILED,
            message: format!(
                "{at}: arithmetic exception ({}) at pc {:#x}; a device would not trap here, host code does",
                match fault.code {
                    1 /* FPE_INTDIV */ => "integer division by zero",
                    2 /* FPE_INTOVF */ => "integer overflow",
                    _ => "SIGFPE",
                },
                fault.pc
            ),
        },
        _ => LaunchFailure {
            address: None,
            code: CUDA_ERROR_LAUNCH_FAILED,
            message: format!("{at}: illegal instruction (signal {}) at pc {:#x}", fault.signo, fault.pc),
        },
    }
}

#[cfg(test)]
mod tests {
    use crate::exec::fault::*;

    const LIMIT: usize = 0x7f00_0000_0000; // lowest address of a fiber's stack mapping

    fn segv(addr: usize) -> FaultInfo {
        FaultInfo { signo: libc::SIGSEGV, code: 2 /* SEGV_ACCERR */, addr, pc: 0x1234 }
    }

    #[test]
    fn a_fault_on_the_guard_page_is_a_stack_overflow_report() {
        // The guard page itself, and a frame that jumped below it (a large local array).
        for addr in [LIMIT, LIMIT + 4095, LIMIT - 1000] {
            let f = fault_failure(segv(addr), "kernel k block (0,0,0) thread (3,0,0)", LIMIT, 65536);
            assert_eq!((f.code, f.address), (CUDA_ERROR_ILLEGAL_ADDRESS, None));
            assert_eq!(
                f.message,
                format!("kernel k block (0,0,0) thread (3,0,0): stack overflow (access at {addr:#x}, pc 0x1234); the fiber stack is 65536 bytes, raise EMU_CUDA_STACK")
            );
        }
    }

    #[test]
    fn a_fault_elsewhere_is_an_illegal_address_with_the_address() {
        for addr in [LIMIT + 4096, 0x10, LIMIT - 64 * 1024 - 1] {
            let f = fault_failure(segv(addr), "t", LIMIT, 65536);
            assert_eq!((f.code, f.address), (CUDA_ERROR_ILLEGAL_ADDRESS, Some(addr as u64)));
            assert!(f.message.starts_with(&format!("t: illegal address: invalid memory access at {addr:#x} (SIGSEGV")), "{}", f.message);
        }
        let f = fault_failure(FaultInfo { signo: libc::SIGFPE, code: 1, addr: 0, pc: 8 }, "t", LIMIT, 65536);
        assert_eq!(f.code, CUDA_ERROR_LAUNCH_FAILED);
        assert!(f.message.contains("integer division by zero"), "{}", f.message);
    }
}
