//! The counters file (EMU_CUDA_COUNTS), written at exit or library unload (`teardown`),
//! on fatal signals (`signals`), and as a checkpoint at every synchronisation (stream,
//! event and context synchronisations, and the synchronous copies and memsets, which
//! synchronise too) so that even a killed program leaves its counts up to its last
//! synchronisation. Checkpoints closer than [`CHECKPOINT_GAP`] to the previous one are
//! left to the counters' writer thread (`signals`), which writes them that much later (a
//! program that synchronises thousands of times a second does not write thousands of
//! files).
//!
//! The file is written whole into an unnamed file of its directory (`O_TMPFILE`), which
//! is then linked under a temporary name and renamed over the file: a reader never sees
//! half a file, and a process killed while writing leaves no temporary file (at most one,
//! when killed between the link and the rename). A path that cannot be written is
//! reported once. In a child forked after cuInit (see `fork`), the file is the child's
//! own (`%p` its process id).

use simtwin_abi::counters::State;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

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
pub fn path() -> Option<String> {
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
        Err(e)
            if e.raw_os_error() == Some(libc::EOPNOTSUPP)
                || e.raw_os_error() == Some(libc::EISDIR)
                || e.raw_os_error() == Some(libc::EINVAL) =>
        {
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

/// Whether the final file of this process (a forked child's own) is written: nothing
/// replaces it after that.
pub fn final_written() -> bool {
    (if crate::fork::in_child() { &CHILD_FINAL } else { &FINAL }).load(Ordering::Acquire)
}
