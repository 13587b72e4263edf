//! Counters that survive the program's failure: on SIGTERM, SIGINT, SIGHUP, SIGQUIT and
//! SIGABRT (an assert, a timeout's kill) the counters file is written before the signal
//! takes its course.
//!
//! Writing JSON is not async-signal-safe, so the handler only wakes a writer thread
//! (through a pipe) and waits for it at most [`WAIT`]; then the signal goes on to the
//! program's own handler, or to the default action. A writer that cannot finish (the
//! interrupted thread held a lock it needs) leaves the last checkpoint on disk.

use simtwin_abi::counters::State;
use std::sync::Once;

const SIGNALS: [libc::c_int; 5] = [libc::SIGTERM, libc::SIGINT, libc::SIGHUP, libc::SIGQUIT, libc::SIGABRT];
/// How long a handler waits for the writer.
const WAIT_MS: libc::c_int = 2000;

static INSTALL: Once = Once::new();
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
        _ => "signal",
    }
}

/// Installs the handlers (once per process, only when a counters file is asked for).
pub fn install() {
    if crate::config::counts_path().is_none() {
        return;
    }
    INSTALL.call_once(|| {
        // SAFETY: pipe() writes two descriptors into each array; PIPES is written only
        // here, before any handler that reads it is installed.
        unsafe {
            let p = &mut *std::ptr::addr_of_mut!(PIPES);
            if libc::pipe2(p[0].as_mut_ptr(), libc::O_CLOEXEC) != 0 || libc::pipe2(p[1].as_mut_ptr(), libc::O_CLOEXEC) != 0 {
                return;
            }
        }
        // SAFETY: the wake pipe's read end, set above.
        let wake = unsafe { (*std::ptr::addr_of!(PIPES))[0][0] };
        let spawned = std::thread::Builder::new().name("simtwin-counters".into()).spawn(move || writer(wake));
        if spawned.is_err() {
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

/// The writer thread: one byte (the signal number) per request, one ack byte back.
fn writer(wake: libc::c_int) {
    let mut b = [0u8; 1];
    loop {
        // SAFETY: reading into our own buffer from our pipe.
        let n = unsafe { libc::read(wake, b.as_mut_ptr().cast(), 1) };
        if n != 1 {
            return;
        }
        crate::teardown::write(State::Signal(name(b[0] as libc::c_int).to_string()));
        // SAFETY: the ack pipe's write end; writing one byte.
        unsafe {
            let ack = (*std::ptr::addr_of!(PIPES))[1][1];
            libc::write(ack, b.as_ptr().cast(), 1);
        }
    }
}

extern "C" fn handler(sig: libc::c_int, info: *mut libc::siginfo_t, uctx: *mut libc::c_void) {
    // SAFETY: only async-signal-safe calls: write, poll, read, sigaction, raise.
    unsafe {
        let p = *std::ptr::addr_of!(PIPES);
        let b = [sig as u8];
        if libc::write(p[0][1], b.as_ptr().cast(), 1) == 1 {
            let mut fd = libc::pollfd { fd: p[1][0], events: libc::POLLIN, revents: 0 };
            if libc::poll(&mut fd, 1, WAIT_MS) == 1 {
                let mut r = [0u8; 1];
                libc::read(p[1][0], r.as_mut_ptr().cast(), 1);
            }
        }
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
