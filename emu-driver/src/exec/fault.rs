//! Faults in kernel code (a wild pointer, a stack overflow, an integer division by zero)
//! must end the launch, not the process. A SIGSEGV/SIGBUS/SIGFPE/SIGILL handler runs on
//! an alternate signal stack (a fiber's stack may be the thing that overflowed); when the
//! faulting stack pointer lies in the fiber this thread is running, corosensei's trap
//! support rewrites the interrupted registers so the fiber returns `Faulted` to the
//! scheduler. Any other fault goes to the handler that was installed before ours (or the
//! default action), so the program's own handlers keep working.

use super::fiber::{fault_target, FiberExit};
use std::cell::Cell;
use std::ptr;
use std::sync::Once;

const SIGNALS: [libc::c_int; 4] = [libc::SIGSEGV, libc::SIGBUS, libc::SIGFPE, libc::SIGILL];
const ALT_STACK_SIZE: usize = 64 * 1024;

static INSTALL: Once = Once::new();
/// The handlers that were in place before ours, by index into SIGNALS. Written once
/// under `INSTALL` before our handler can run.
static mut PREVIOUS: [std::mem::MaybeUninit<libc::sigaction>; 4] = [const { std::mem::MaybeUninit::uninit() }; 4];

thread_local! {
    /// The alternate signal stack this module mapped for this thread, if any.
    static ALT: Cell<*mut libc::c_void> = const { Cell::new(ptr::null_mut()) };
}

/// Installs the fault handler (once per process) and makes sure the calling thread has
/// an alternate signal stack.
pub(crate) fn prepare_thread() {
    if !cfg!(all(target_os = "linux", target_arch = "x86_64")) {
        return;
    }
    INSTALL.call_once(|| unsafe { install() });
    unsafe { ensure_altstack() };
}

#[cfg(all(target_os = "linux", target_arch = "x86_64"))]
unsafe fn install() {
    for (i, &sig) in SIGNALS.iter().enumerate() {
        let mut sa: libc::sigaction = std::mem::zeroed();
        sa.sa_sigaction = handler as *const () as usize;
        sa.sa_flags = libc::SA_SIGINFO | libc::SA_ONSTACK;
        libc::sigemptyset(&mut sa.sa_mask);
        let mut old: libc::sigaction = std::mem::zeroed();
        libc::sigaction(sig, &sa, &mut old);
        (*ptr::addr_of_mut!(PREVIOUS))[i].write(old);
    }
}

#[cfg(not(all(target_os = "linux", target_arch = "x86_64")))]
unsafe fn install() {}

unsafe fn ensure_altstack() {
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
    // Mapped for the lifetime of the thread: a thread-local destructor could run while
    // a signal still needs the stack.
    ALT.with(|a| a.set(mem));
}

#[cfg(all(target_os = "linux", target_arch = "x86_64"))]
unsafe extern "C" fn handler(sig: libc::c_int, info: *mut libc::siginfo_t, uctx: *mut libc::c_void) {
    let uc = uctx as *mut libc::ucontext_t;
    let gregs = &mut (*uc).uc_mcontext.gregs;
    let sp = gregs[libc::REG_RSP as usize] as usize;
    let pc = gregs[libc::REG_RIP as usize] as usize;
    let addr = (*info).si_addr() as usize;
    let code = (*info).si_code;
    if let Some(trap) = fault_target(sig, code, addr, pc, sp) {
        let regs = trap.setup_trap_handler(|| FiberExit::Faulted);
        gregs[libc::REG_RIP as usize] = regs.rip as i64;
        gregs[libc::REG_RSP as usize] = regs.rsp as i64;
        gregs[libc::REG_RBP as usize] = regs.rbp as i64;
        gregs[libc::REG_RDI as usize] = regs.rdi as i64;
        gregs[libc::REG_RSI as usize] = regs.rsi as i64;
        return;
    }
    chain(sig, info, uctx);
}

/// Passes a fault that is not ours to the previous handler; with none, restores the
/// default action so that returning re-raises the fault the way it would have been.
#[cfg(all(target_os = "linux", target_arch = "x86_64"))]
unsafe fn chain(sig: libc::c_int, info: *mut libc::siginfo_t, uctx: *mut libc::c_void) {
    let Some(i) = SIGNALS.iter().position(|&s| s == sig) else { return };
    let prev = (*ptr::addr_of!(PREVIOUS))[i].assume_init_ref();
    let h = prev.sa_sigaction;
    if h == libc::SIG_DFL || h == libc::SIG_IGN {
        let mut dfl: libc::sigaction = std::mem::zeroed();
        dfl.sa_sigaction = libc::SIG_DFL;
        libc::sigemptyset(&mut dfl.sa_mask);
        libc::sigaction(sig, &dfl, ptr::null_mut());
    } else if prev.sa_flags & libc::SA_SIGINFO != 0 {
        let f: extern "C" fn(libc::c_int, *mut libc::siginfo_t, *mut libc::c_void) = std::mem::transmute(h);
        f(sig, info, uctx);
    } else {
        let f: extern "C" fn(libc::c_int) = std::mem::transmute(h);
        f(sig);
    }
}
