//! Signals: faults in kernel code and watchdog probes.
//!
//! Faults (a wild pointer, a stack overflow, an integer division by zero) must end the
//! launch, not the process. A SIGSEGV/SIGBUS/SIGFPE/SIGILL handler runs on an alternate
//! signal stack (a fiber's stack may be the thing that overflowed); when the faulting
//! stack pointer lies in the fiber this thread is running, corosensei's trap support
//! rewrites the interrupted registers so the fiber returns `Faulted` to the scheduler.
//! Any other fault goes to the handler that was installed before ours (or the default
//! action), so the program's own handlers keep working.
//!
//! The watchdog's probe signal (`SIGRTMAX-3`) uses the same redirection for a fiber that
//! spins in kernel code (see `watchdog`); a probe that is not for a running launch goes
//! to the signal's previous handler, if any.

use super::fibers::FiberExit;
use super::scheduler::fault_target;
use super::LaunchFailure;
use corosensei::trap::CoroutineTrapHandler;
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
}

/// What a fault handler saw.
#[derive(Clone, Copy, Default, Debug)]
pub(crate) struct FaultInfo {
    pub signo: i32,
    pub code: i32,
    pub addr: usize,
    pub pc: usize,
}

/// The watchdog's probe signal.
pub(crate) fn probe_signal() -> libc::c_int {
    libc::SIGRTMAX() - 3
}

/// Installs the fault handler (once per process) and makes sure the calling thread has
/// an alternate signal stack.
pub(crate) fn prepare_thread() {
    if !cfg!(all(target_os = "linux", target_arch = "x86_64")) {
        return;
    }
    // SAFETY: installs process-wide handlers once; see `install`.
    INSTALL.call_once(|| unsafe { install() });
    // SAFETY: maps and registers this thread's alternate stack if it has none.
    unsafe { ensure_altstack() };
}

/// Installs the probe handler (once per process).
pub(crate) fn install_probe_handler() {
    if !cfg!(all(target_os = "linux", target_arch = "x86_64")) {
        return;
    }
    // SAFETY: as `install`, for the probe signal.
    INSTALL_PROBE.call_once(|| unsafe { install_one(probe_signal(), 4) });
}

#[cfg(all(target_os = "linux", target_arch = "x86_64"))]
unsafe fn install() {
    for (i, &sig) in SIGNALS.iter().enumerate() {
        // SAFETY: per this function's contract (once, before any handler runs).
        unsafe { install_one(sig, i) };
    }
}

/// # Safety
/// Once per slot, before our handler can run for `sig`.
#[cfg(all(target_os = "linux", target_arch = "x86_64"))]
unsafe fn install_one(sig: libc::c_int, slot: usize) {
    // SAFETY: plain C structs and calls. PREVIOUS[slot] holds a zeroed action (SIG_DFL)
    // before our handler is installed and the previous action right after, so the
    // handler never reads uninitialised memory.
    unsafe {
        (*ptr::addr_of_mut!(PREVIOUS))[slot].write(std::mem::zeroed());
        let mut sa: libc::sigaction = std::mem::zeroed();
        sa.sa_sigaction = handler as *const () as usize;
        sa.sa_flags = libc::SA_SIGINFO | libc::SA_ONSTACK | libc::SA_RESTART;
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
unsafe fn install() {}

#[cfg(not(all(target_os = "linux", target_arch = "x86_64")))]
unsafe fn install_one(_sig: libc::c_int, _slot: usize) {}

unsafe fn ensure_altstack() {
    // SAFETY: sigaltstack/mmap with valid arguments; the mapping is kept for the
    // thread's lifetime.
    let mem = unsafe {
        let mut cur: libc::stack_t = std::mem::zeroed();
        if libc::sigaltstack(ptr::null(), &mut cur) != 0 {
            return;
        }
        if cur.ss_flags & libc::SS_DISABLE == 0 && cur.ss_size >= 16 * 1024 {
            return; // the thread has one (Rust's std gives its threads one)
        }
        let mem = libc::mmap(
            ptr::null_mut(),
            ALT_STACK_SIZE,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
            -1,
            0,
        );
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
}

#[cfg(all(target_os = "linux", target_arch = "x86_64"))]
unsafe extern "C" fn handler(sig: libc::c_int, info: *mut libc::siginfo_t, uctx: *mut libc::c_void) {
    // SAFETY: the kernel passes a valid siginfo and ucontext to an SA_SIGINFO handler.
    unsafe {
        let uc = uctx as *mut libc::ucontext_t;
        let gregs = &mut (*uc).uc_mcontext.gregs;
        let sp = gregs[libc::REG_RSP as usize] as usize;
        let pc = gregs[libc::REG_RIP as usize] as usize;
        let (target, exit) = if sig == probe_signal() {
            (super::watchdog::on_probe(pc, sp), FiberExit::Interrupted)
        } else {
            let addr = (*info).si_addr() as usize;
            (fault_target(FaultInfo { signo: sig, code: (*info).si_code, addr, pc }, sp), FiberExit::Faulted)
        };
        if let Some(trap) = target {
            redirect(trap, exit, gregs);
            return;
        }
        if sig == probe_signal() && super::scheduler::on_worker_thread() {
            return; // a probe for this thread's worker that changes nothing now
        }
        chain(sig, info, uctx);
    }
}

/// Makes the interrupted fiber return `exit` to the scheduler once the handler returns.
///
/// # Safety
/// From a signal handler whose interrupted stack pointer lies in `trap`'s fiber.
#[cfg(all(target_os = "linux", target_arch = "x86_64"))]
unsafe fn redirect(trap: CoroutineTrapHandler<FiberExit>, exit: FiberExit, gregs: &mut [libc::greg_t; 23]) {
    // SAFETY: per the contract; the fiber's frames are abandoned (never unwound).
    let regs = unsafe { trap.setup_trap_handler(move || exit) };
    gregs[libc::REG_RIP as usize] = regs.rip as i64;
    gregs[libc::REG_RSP as usize] = regs.rsp as i64;
    gregs[libc::REG_RBP as usize] = regs.rbp as i64;
    gregs[libc::REG_RDI as usize] = regs.rdi as i64;
    gregs[libc::REG_RSI as usize] = regs.rsi as i64;
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
                code: super::CUDA_ERROR_ILLEGAL_ADDRESS,
                message: format!(
                    "{at}: stack overflow (access at {:#x}, pc {:#x}); the fiber stack is {} bytes, raise EMU_CUDA_STACK",
                    fault.addr, fault.pc, stack_size
                ),
            }
        }
        libc::SIGSEGV | libc::SIGBUS => LaunchFailure {
            address: Some(fault.addr as u64),
            code: super::CUDA_ERROR_ILLEGAL_ADDRESS,
            message: format!(
                "{at}: illegal address: invalid memory access at {:#x} ({}, pc {:#x})",
                fault.addr,
                if fault.signo == libc::SIGSEGV { "SIGSEGV" } else { "SIGBUS" },
                fault.pc
            ),
        },
        libc::SIGFPE => LaunchFailure {
            address: None,
            code: super::CUDA_ERROR_LAUNCH_FAILED,
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
            code: super::CUDA_ERROR_LAUNCH_FAILED,
            message: format!("{at}: illegal instruction (signal {}) at pc {:#x}", fault.signo, fault.pc),
        },
    }
}
