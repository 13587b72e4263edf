//! The end of things: a context's teardown with its leak report, and the counters file
//! (EMU_CUDA_COUNTS) — written at exit or library unload, on fatal signals, and as a
//! checkpoint at every synchronisation (stream, event and context synchronisations, and
//! the synchronous copies and memsets, which synchronise too) so that even a killed
//! program leaves its counts up to its last synchronisation. Checkpoints closer than
//! [`CHECKPOINT_GAP`] to the previous one are left to the counters' writer thread, which
//! writes them that much later (a program that synchronises thousands of times a second
//! does not write thousands of files).
//!
//! The file is written whole into an unnamed file of its directory (`O_TMPFILE`), which
//! is then linked under a temporary name and renamed over the file: a reader never sees
//! half a file, and a process killed while writing leaves no temporary file (at most one,
//! when killed between the link and the rename). A path that cannot be written is
//! reported once. In a child forked after cuInit (see `fork`), the file is the child's
//! own (`%p` its process id) and nothing else of the parent's state is looked at.

use crate::log_info;
use crate::state::{AllocKind, Driver};
use simtwin_abi::counters::State;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

/// Frees everything context `ctx` owns (destroy, primary release to zero, primary
/// reset); with `report`, what the program left behind is counted as leaks.
pub fn context(d: &mut Driver, ctx: u64, report: bool) {
    let counters = crate::counters::get();
    let leaked: Vec<u64> =
        d.allocs.values().filter(|a| a.ctx == ctx && a.kind != AllocKind::ModuleGlobal).map(|a| a.base).collect();
    for base in leaked {
        if let (true, Some(a)) = (report, d.allocs.get(&base)) {
            let msg = format!("{} allocation of {} bytes at {:#x} still live at context destroy", a.kind.name(), a.size, a.base);
            log_info!("leak: {msg}");
            let (pinned, size) = (a.kind == AllocKind::PinnedHost, a.size);
            counters.leak(|l| count_alloc(l, pinned, size), msg);
        }
        let _ = crate::memory::release(d, base);
    }
    let mods: Vec<u64> = d.modules.iter().filter(|(_, m)| m.ctx == ctx).map(|(k, _)| *k).collect();
    for m in mods {
        if report {
            counters.leak(|l| l.modules += 1, format!("module {m} still loaded at context destroy"));
        }
        crate::module::load::unload(d, m);
    }
    let streams: Vec<u64> = d.streams.iter().filter(|(_, s)| s.ctx == ctx).map(|(k, _)| *k).collect();
    for s in streams {
        if report {
            counters.leak(|l| l.streams += 1, format!("stream {s} not destroyed at context destroy"));
        }
        d.streams.remove(&s);
    }
    let events: Vec<u64> = d.events.iter().filter(|(_, e)| e.ctx == ctx).map(|(k, _)| *k).collect();
    for e in events {
        if report {
            counters.leak(|l| l.events += 1, format!("event {e} not destroyed at context destroy"));
        }
        d.events.remove(&e);
    }
    d.contexts.remove(&ctx);
}

fn count_alloc(l: &mut simtwin_abi::counters::Leaks, pinned: bool, size: u64) {
    if pinned {
        l.pinned += 1;
    } else {
        l.allocations += 1;
        l.allocation_bytes += size;
    }
}

/// At exit: whatever is still allocated or loaded is a leak.
fn leaks_at_exit() {
    let Some(d) = crate::state::try_driver() else { return };
    let c = crate::counters::get();
    for a in d.allocs.values().filter(|a| !matches!(a.kind, AllocKind::ModuleGlobal | AllocKind::Registered) && !a.kind.is_mapping()) {
        let (pinned, size) = (a.kind == AllocKind::PinnedHost, a.size);
        c.leak(|l| count_alloc(l, pinned, size), format!("{} allocation of {} bytes at {:#x} still live at exit", a.kind.name(), a.size, a.base));
    }
    // The virtual-memory API: a physical allocation lives while a handle or a mapping
    // holds it.
    for p in d.vmm.physical.values() {
        let msg = format!(
            "virtual-memory allocation of {} bytes (cuMemCreate{}) still live at exit: {} unreleased handle(s), {} mapping(s)",
            p.size,
            if p.imported { ", imported" } else { "" },
            p.refs,
            p.maps
        );
        c.leak(|l| count_alloc(l, false, p.size), msg);
    }
    for (id, m) in &d.modules {
        c.leak(|l| l.modules += 1, format!("module {id} ({}) still loaded at exit", m.library_name()));
    }
    for id in d.streams.keys() {
        c.leak(|l| l.streams += 1, format!("stream {id} not destroyed at exit"));
    }
    for id in d.events.keys() {
        c.leak(|l| l.events += 1, format!("event {id} not destroyed at exit"));
    }
}

/// Serialises writers of the counters file (checkpoints from several threads, exit).
static WRITING: Mutex<()> = Mutex::new(());
/// The same in a forked child (the parent's may have been held at the fork).
static CHILD_WRITING: Mutex<()> = Mutex::new(());
/// Set once the final file is written: later checkpoints must not replace it.
static FINAL: AtomicBool = AtomicBool::new(false);
static CHILD_FINAL: AtomicBool = AtomicBool::new(false);
/// A failed write was reported (once per process).
static REPORTED: AtomicBool = AtomicBool::new(false);
/// Nanoseconds (monotonic) of the last checkpoint written, and whether one is due.
static LAST_NS: AtomicU64 = AtomicU64::new(0);
static DUE: AtomicBool = AtomicBool::new(false);

/// Checkpoints closer together than this are written once, this much after the first.
pub const CHECKPOINT_GAP: Duration = Duration::from_millis(50);

fn now_ns() -> u64 {
    static T0: OnceLock<Instant> = OnceLock::new();
    T0.get_or_init(Instant::now).elapsed().as_nanos() as u64 + 1
}

/// The counters file of this process (a forked child's own, see `fork`).
fn path() -> Option<String> {
    if crate::fork::in_child() {
        crate::fork::child_counts_path()
    } else {
        crate::config::counts_path()
    }
}

/// Writes the counters file (atomically: a reader never sees half a file).
pub fn write(state: State) {
    let Some(path) = path() else { return };
    let child = crate::fork::in_child();
    let (writing, fin) = if child { (&CHILD_WRITING, &CHILD_FINAL) } else { (&WRITING, &FINAL) };
    let _w = writing.lock().unwrap_or_else(|e| e.into_inner());
    if fin.load(Ordering::Acquire) {
        return;
    }
    if state != State::Checkpoint {
        fin.store(true, Ordering::Release);
    }
    DUE.store(false, Ordering::Relaxed);
    LAST_NS.store(now_ns(), Ordering::Relaxed);
    let mut snap = crate::counters::get().snapshot(state);
    if let Some(label) = crate::passthrough::driver_label() {
        snap.driver = label;
    }
    if let Err(e) = replace_file(&path, snap.to_text().as_bytes()) {
        if !REPORTED.swap(true, Ordering::Relaxed) {
            crate::log_error!("cannot write counters to {path}: {e} (said once; the program goes on without a counters file)");
        }
    }
}

/// Replaces `path` with `bytes`: written into an unnamed file of its directory, linked
/// under a temporary name, renamed over `path` (the temporary name exists only between
/// the two calls). Where O_TMPFILE is not supported, a named temporary file is written.
fn replace_file(path: &str, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    use std::os::unix::io::AsRawFd;
    let p = std::path::Path::new(path);
    let dir = match p.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => std::path::Path::new("."),
    };
    let tmp = format!("{path}.tmp{}", std::process::id());
    match std::fs::OpenOptions::new().write(true).mode(0o644).custom_flags(libc::O_TMPFILE).open(dir) {
        Ok(mut f) => {
            f.write_all(bytes)?;
            let proc_path = std::ffi::CString::new(format!("/proc/self/fd/{}", f.as_raw_fd())).expect("no NUL");
            let c_tmp = std::ffi::CString::new(tmp.clone()).map_err(|_| std::io::Error::from(std::io::ErrorKind::InvalidInput))?;
            let _ = std::fs::remove_file(&tmp);
            // SAFETY: linkat with two NUL-terminated paths.
            if unsafe { libc::linkat(libc::AT_FDCWD, proc_path.as_ptr(), libc::AT_FDCWD, c_tmp.as_ptr(), libc::AT_SYMLINK_FOLLOW) } != 0 {
                return Err(std::io::Error::last_os_error());
            }
        }
        Err(e) if e.raw_os_error() == Some(libc::EOPNOTSUPP) || e.raw_os_error() == Some(libc::EISDIR) || e.raw_os_error() == Some(libc::EINVAL) => {
            std::fs::write(&tmp, bytes)?;
        }
        Err(e) => return Err(e),
    }
    std::fs::rename(&tmp, path).inspect_err(|_| {
        let _ = std::fs::remove_file(&tmp);
    })
}

/// Set once the signal module's writer thread runs: it writes checkpoints left due.
static CHECKPOINT_WRITER: AtomicBool = AtomicBool::new(false);

/// The signal module's writer thread has started (it calls [`checkpoint_if_due`] every
/// CHECKPOINT_GAP).
pub fn checkpoint_writer_started() {
    CHECKPOINT_WRITER.store(true, Ordering::Release);
}

/// Whether that thread runs in this process (threads do not survive fork).
fn checkpoint_writer_running() -> bool {
    !crate::fork::in_child() && CHECKPOINT_WRITER.load(Ordering::Acquire)
}

/// A synchronisation happened: bring the file on disk up to date (now, or within
/// CHECKPOINT_GAP when the last checkpoint is more recent than that).
pub fn checkpoint() {
    crate::trace::synchronized();
    if path().is_none() {
        return;
    }
    let last = LAST_NS.load(Ordering::Relaxed);
    if last != 0 && now_ns().saturating_sub(last) < CHECKPOINT_GAP.as_nanos() as u64 && checkpoint_writer_running() {
        DUE.store(true, Ordering::Relaxed);
        return;
    }
    write(State::Checkpoint);
}

/// The counters' writer thread, every CHECKPOINT_GAP: writes a checkpoint that was
/// left for it.
pub fn checkpoint_if_due() {
    if DUE.load(Ordering::Relaxed) {
        write(State::Checkpoint);
    }
}

/// Writes the final counters once (process exit or library unload).
pub fn at_exit() {
    if path().is_none() || (if crate::fork::in_child() { &CHILD_FINAL } else { &FINAL }).load(Ordering::Acquire) {
        return;
    }
    if crate::fork::in_child() {
        // The child owns nothing of the driver's (its calls all failed).
        write(State::Exit);
        return;
    }
    if crate::passthrough::enabled() {
        crate::passthrough::leaks_at_exit();
    } else {
        leaks_at_exit();
        let pending = crate::queue::pending_report();
        for p in &pending {
            crate::log_warn!("EMU_CUDA_ASYNC=deferred: {p}");
        }
        crate::counters::get().never_ran(pending);
    }
    write(State::Exit);
}

/// Runs when the process exits and when the library is dlclose'd (nv-codec-headers'
/// loader unloads libcuda.so.1 before exit): ELF destructors cover both.
extern "C" fn on_unload() {
    crate::trace::at_exit();
    at_exit();
}

#[used]
#[link_section = ".fini_array"]
static FINI: extern "C" fn() = on_unload;


