//! The end of the process: at exit or library unload (an ELF destructor covers both),
//! whatever the program left allocated or loaded is counted as a leak, work that never
//! ran is reported, and the final counters file is written (`counters_file`).

use crate::state::AllocKind;
use simtwin_abi::counters::State;

/// At exit: whatever is still allocated or loaded is a leak.
fn leaks_at_exit() {
    let Some(d) = crate::state::try_driver() else { return };
    let c = crate::counters::get();
    for a in d.allocs.values().filter(|a| !matches!(a.kind, AllocKind::ModuleGlobal | AllocKind::Registered) && !a.kind.is_mapping()) {
        let (pinned, size) = (a.kind == AllocKind::PinnedHost, a.size);
        c.leaked_allocation(pinned, size, format!("{} allocation of {} bytes at {:#x} still live at exit", a.kind.name(), a.size, a.base));
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
        c.leaked_allocation(false, p.size, msg);
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

/// Writes the final counters once (process exit or library unload).
pub fn at_exit() {
    if crate::counters_file::path().is_none() || crate::counters_file::final_written() {
        return;
    }
    if crate::fork::in_child() {
        // The child owns nothing of the driver's (its calls all failed).
        crate::counters_file::write(State::Exit);
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
    crate::counters_file::write(State::Exit);
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
