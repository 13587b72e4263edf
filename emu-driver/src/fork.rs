//! fork(): what the child of a process that uses the driver may do, answered as the real
//! driver answers it (measured on an H200, the `fork_*` cases of the conformance table):
//!
//! - once the parent has called cuInit, every entry point in the child answers
//!   CUDA_ERROR_NOT_INITIALIZED (3), cuInit included, whatever the parent's contexts,
//!   memory or current context were; only the calls that need no driver state work
//!   (cuDriverGetVersion, and the error-name lookups);
//! - a child of a parent that never called cuInit initialises and uses the driver as any
//!   process does.
//!
//! So a child never needs a lock another thread of the parent may have held at the fork
//! (the driver's state, the work queue, the arena, the watchdog): whether it is such a
//! child is an atomic flag every entry point reads first. The counters are the one part
//! it keeps using: their lock is taken around the fork (`pthread_atfork`), so it is never
//! inherited held, and the child starts counting from zero. Its counters file is the
//! `EMU_CUDA_COUNTS` pattern with `%p` replaced by its own process id; a pattern without
//! `%p` names the parent's file, which the child leaves alone (it writes none).

use std::sync::atomic::{AtomicBool, Ordering};

/// cuInit was called in this process (before a fork: the child may not use the driver).
static STARTED: AtomicBool = AtomicBool::new(false);
/// This process is a child forked after its parent called cuInit.
static CHILD: AtomicBool = AtomicBool::new(false);

/// cuInit begins (called first thing, before any lock).
pub fn note_init() {
    STARTED.store(true, Ordering::SeqCst);
}

/// Whether this process is a child forked after cuInit: every entry point but those of
/// [`usable_in_child`] answers CUDA_ERROR_NOT_INITIALIZED.
#[inline(always)]
pub fn in_child() -> bool {
    CHILD.load(Ordering::Relaxed)
}

/// Entry points that work in such a child (they need no driver state).
pub fn usable_in_child(name: &str) -> bool {
    matches!(name, "cuDriverGetVersion" | "cuGetErrorName" | "cuGetErrorString")
}

/// The child's counters file: `EMU_CUDA_COUNTS` with `%p` its own process id, or None
/// (no variable, or a pattern without `%p`: that is the parent's file).
pub fn child_counts_path() -> Option<String> {
    // libc's getenv takes no lock (std's env::var does, and another thread of the
    // parent may have held it at the fork).
    // SAFETY: getenv with a NUL-terminated name; the result is read at once.
    let raw = unsafe {
        let p = libc::getenv(c"EMU_CUDA_COUNTS".as_ptr());
        if p.is_null() {
            return None;
        }
        std::ffi::CStr::from_ptr(p).to_string_lossy().into_owned()
    };
    raw.contains("%p").then(|| raw.replace("%p", &std::process::id().to_string()))
}

extern "C" fn prepare() {
    crate::counters::get().fork_prepare();
}

extern "C" fn parent() {
    crate::counters::get().fork_release(false);
}

extern "C" fn child() {
    if STARTED.load(Ordering::SeqCst) {
        CHILD.store(true, Ordering::SeqCst);
    }
    crate::counters::get().fork_release(true);
}

/// Registers the fork handlers when the library is loaded.
extern "C" fn on_load() {
    // SAFETY: registers three handlers that only take and release the counters' lock
    // and store atomics; glibc removes them if the library is unloaded.
    unsafe {
        libc::pthread_atfork(Some(prepare), Some(parent), Some(child));
    }
}

#[used]
#[link_section = ".init_array"]
static INIT: extern "C" fn() = on_load;
