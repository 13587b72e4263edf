//! The trace on the emulated driver: device memory is host memory, so a launch's
//! written buffers are hashed in place right after the executor returns, and a
//! device-to-host copy's bytes right after they land.

use super::{pointer_words, with, LaunchFacts, Target, Timer};
use crate::state::{AllocKind, Driver};

/// A module's globals as the trace needs them: (symbol, address, bytes).
pub type Globals = Vec<(String, u64, u64)>;

/// A launch completed on the executor (`failure`: the error it ended with).
#[allow(clippy::too_many_arguments)]
pub fn launch(
    symbol: &str,
    grid: [u32; 3],
    block: [u32; 3],
    shared: u32,
    sizes: &[u32],
    offsets: &[u32],
    args: &[u8],
    module: u64,
    globals: impl FnOnce() -> Globals,
    failure: Option<u32>,
) {
    if !super::enabled() {
        return;
    }
    let Ok(d) = crate::state::driver() else { return };
    with(|t| {
        let (n, traced) = t.next_launch(symbol);
        if !traced {
            return;
        }
        let timer = Timer::start();
        let params: Vec<[u32; 2]> = offsets.iter().zip(sizes).map(|(&o, &s)| [o, s]).collect();
        let facts = LaunchFacts { symbol, grid, block, shared, params, args };
        // Allocations the arguments point into, in order of first mention.
        let mut spans: Vec<(u64, u64)> = Vec::new();
        let mut targets: Vec<Target> = Vec::new();
        for (p, word) in pointer_words(&facts.params, args) {
            let Some(a) = d.find_alloc(word) else { continue };
            if a.kind == AllocKind::ModuleGlobal {
                continue;
            }
            match spans.iter().position(|&(b, _)| b == a.base) {
                Some(i) => {
                    if !targets[i].params.contains(&p) {
                        targets[i].params.push(p);
                    }
                }
                None => {
                    spans.push((a.base, a.size));
                    targets.push(Target {
                        name: t.alloc_name(a.base, a.kind.name(), a.size),
                        kind: a.kind.name().into(),
                        size: a.size,
                        params: vec![p],
                    });
                }
            }
        }
        let m = t.module_ordinal(module);
        let mut gl = globals();
        gl.sort();
        for (sym, addr, size) in gl {
            spans.push((addr, size));
            targets.push(Target { name: format!("g{m}:{sym}"), kind: "global".into(), size, params: Vec::new() });
        }
        let result = match failure {
            None => "ok".to_string(),
            Some(c) => crate::errors::name(c).to_string(),
        };
        super::write_launch(t, n, &facts, targets, &result, |i, out| {
            let (base, size) = spans[i];
            let view = crate::arena::host_view(base, size);
            // SAFETY: a live tracked allocation (or a module global of a loaded module)
            // of `size` bytes, read while the driver's lock keeps it from being freed;
            // the arena's host view under EMU_CUDA_CHECKS=pointers.
            out.extend_from_slice(unsafe { std::slice::from_raw_parts(view as *const u8, size as usize) });
            true
        });
        timer.stop(t);
    });
}

/// A copy landed (`host_dst`: where its bytes are now, readable by the driver). Only
/// device-to-host copies are recorded; host-to-device ones can start a frame.
pub fn copied(d: &Driver, dir: simtwin_abi::counters::Dir, src: u64, host_dst: u64, rows: Option<(u64, u64, u64)>, len: u64) {
    use simtwin_abi::counters::Dir;
    if !super::enabled() {
        return;
    }
    match dir {
        Dir::HtoD => super::htod(),
        Dir::DtoH => {
            with(|t| {
                let (n, traced) = t.next_copy();
                if !traced {
                    return;
                }
                let timer = Timer::start();
                let name = match d.find_alloc(src) {
                    Some(a) => format!("{}+{}", t.alloc_name(a.base, a.kind.name(), a.size), src - a.base),
                    None => "host".into(),
                };
                let mut bytes = Vec::with_capacity(len as usize);
                match rows {
                    Some((dpitch, width, height)) => (0..height).for_each(|r| {
                        // SAFETY: the copy just wrote these rows (dpitch apart, `width`
                        // bytes each) to the caller's host memory.
                        bytes.extend_from_slice(unsafe { std::slice::from_raw_parts((host_dst + r * dpitch) as *const u8, width as usize) })
                    }),
                    // SAFETY: the copy just wrote `len` bytes there.
                    None => bytes.extend_from_slice(unsafe { std::slice::from_raw_parts(host_dst as *const u8, len as usize) }),
                }
                super::write_copy(t, n, name, &bytes);
                timer.stop(t);
            });
        }
        _ => {}
    }
}
