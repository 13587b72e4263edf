//! The end of things: a context's teardown with its leak report, and the counters file
//! (EMU_CUDA_COUNTS) — written at exit or library unload, on fatal signals, and as a
//! checkpoint at every synchronisation so that even a killed program leaves its counts
//! up to the last synchronisation.

use crate::log_info;
use crate::state::{AllocKind, Driver};
use simtwin_abi::counters::State;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

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
/// Set once the final file is written: later checkpoints must not replace it.
static FINAL: AtomicBool = AtomicBool::new(false);

/// Writes the counters file (atomically: a reader never sees half a file).
pub fn write(state: State) {
    let Some(path) = crate::config::counts_path() else { return };
    let _w = WRITING.lock().unwrap_or_else(|e| e.into_inner());
    if FINAL.load(Ordering::Acquire) {
        return;
    }
    if state != State::Checkpoint {
        FINAL.store(true, Ordering::Release);
    }
    let mut snap = crate::counters::get().snapshot(state);
    if let Some(label) = crate::passthrough::driver_label() {
        snap.driver = label;
    }
    let text = snap.to_text();
    let tmp = format!("{path}.tmp{}", std::process::id());
    if let Err(e) = std::fs::write(&tmp, text).and_then(|_| std::fs::rename(&tmp, &path)) {
        crate::log_error!("cannot write counters to {path}: {e}");
    }
}

/// A synchronisation happened: bring the file on disk up to date.
pub fn checkpoint() {
    crate::trace::synchronized();
    write(State::Checkpoint);
}

/// Writes the final counters once (process exit or library unload).
pub fn at_exit() {
    if crate::config::counts_path().is_none() || FINAL.load(Ordering::Acquire) {
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


