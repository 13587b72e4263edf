//! The SIMT executor (docs/architecture.md): runs a grid of a host-compiled kernel block by
//! block, every CUDA thread on a fiber (a stack of its own from `stacks`, switched by
//! `fibers`'s own code) or, on PTX mode's loop path, a block's
//! threads as loops between barriers on one fiber (`loops`), with sm_70+ barrier and warp-collective
//! semantics, convergence for `__activemask`, structural deadlock detection, a watchdog
//! for launches that make no progress, and hazard reports.
//!
//! The driver's launch code calls [`launch`] after validating the configuration (block
//! size and dimension limits, shared memory: that is the driver's job) and hands
//! [`runtime_table`] to every kernel library's `bind`.
//!
//! Layout, one concept per file, each using only files listed before it (the layers of
//! `exec` in `tests/module_graph.rs` keep it so):
//! - `hazard`: reports; `order`: block order; `warp_ops`: collective arithmetic;
//!   `device_defined`: what reads from lanes that cannot take part give; `smem`: where
//!   a block's shared memory is (checking modes), and poisoning;
//! - `types`: what a launch is given and gives back (options, outcome, failure,
//!   statistics, CUresults), re-exported here;
//! - `threads`: a block's thread table (exits, waits, the run queue) and what every
//!   rendezvous shares; `barrier`, `warp` (matching and resolution), `convergence`
//!   (`__activemask`): each rendezvous kind on its own state and the thread table;
//!   `block` puts them together; `deadlock` describes a block where nothing can run;
//!   `race`: the shared-memory checks of a worker (`EMU_CUDA_CHECKS`: poisoning and the
//!   race detector, fed by checking libraries' accesses and the block's sync events);
//! - `fibers`: the fiber pool and the stack switches (the only stack-switching code);
//!   `current`: the running fiber as kernel code finds it (through the context slot);
//!   `fault`: signal handling, which asks a `SignalTarget` whom a signal hit;
//!   `watchdog`: forward progress; `turns`: spinning blocks take turns on the cores;
//! - `stacks`: fiber stacks, carved from chunk mappings (guard pages that do not split them);
//! - `scheduler`: a worker runs its blocks and, within a block, resumes fibers (the
//!   worker's state grouped by concern: fibers, kernel call, block, running fiber,
//!   hazard log, watchdog, statistics); it is the signal target;
//! - `loops`: what a barrier of PTX mode's loop path (a block's threads run as loops
//!   between barriers, on one fiber) tells the worker;
//! - `runtime`: the `extern "C"` table kernel code calls (raw arguments in, safe code);
//!   `parallel`: several workers on several OS threads.
//!
//! Reproducibility: with one worker (the default) a launch is deterministic: blocks run
//! in the chosen order, threads in a fixed interleaving, so the same inputs give the
//! same results, hazard reports and failures. With several workers, blocks run
//! concurrently: anything that depends on how blocks interleave (float atomics across
//! blocks, inter-block races, a kernel reading static `__shared__` memory it did not
//! write, which holds whatever the worker's previous block left) may differ between
//! runs; which failure a launch reports (the first failing block in the block order),
//! and its hazard reports up to that block, do not.

#![deny(unsafe_op_in_unsafe_fn)]
#![warn(clippy::undocumented_unsafe_blocks)]
#![warn(missing_docs)]

mod barrier;
mod block;
mod convergence;
mod current;
mod deadlock;
mod device_defined;
mod fault;
mod fibers;
mod hazard;
mod loops;
mod order;
mod parallel;
mod race;
mod runtime;
mod scheduler;
mod smem;
mod stacks;
mod threads;
mod turns;
mod types;
mod warp;
mod warp_ops;
mod watchdog;

pub use hazard::{format_threads, Hazard, HazardKind, HazardMode, MAX_REPORTED_THREADS};
pub use order::BlockOrder;
pub use smem::POISON;
pub use types::{
    Checks, ExecOptions, ExecStats, KernelRef, LaunchConfig, LaunchFailure, LaunchOutcome, CUDA_ERROR_ASSERT, CUDA_ERROR_ILLEGAL_ADDRESS,
    CUDA_ERROR_LAUNCH_FAILED, CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES, CUDA_ERROR_LAUNCH_TIMEOUT, CUDA_ERROR_OUT_OF_MEMORY, DEFAULT_PREEMPT,
    DEFAULT_STACK_SIZE, DEFAULT_WATCHDOG, HAZARD_ERROR_CODE, MAX_SPIN_HELPERS, MIN_STACK_SIZE,
};

use crate::abi;
use std::ffi::c_void;

/// The table the driver passes to each kernel library's `bind`.
pub fn runtime_table() -> &'static abi::Runtime {
    &runtime::RUNTIME
}

/// Runs every block of the grid, on the calling OS thread (and `opts.workers - 1`
/// helper threads). `params` is cuLaunchKernel's kernelParams array (the driver has
/// copied the values). Errors that arise while the kernel runs come back in the
/// outcome; nothing here panics on kernel behaviour.
pub fn launch(kernel: &KernelRef, cfg: &LaunchConfig, params: &[*mut c_void], opts: &ExecOptions) -> LaunchOutcome {
    scheduler::prepare_thread();
    if cfg.block.contains(&0) || cfg.grid.contains(&0) {
        return LaunchOutcome::refused(format!("kernel {}: empty grid or block {:?} x {:?}", kernel.name, cfg.grid, cfg.block));
    }
    if opts.workers > 1 {
        if !scheduler::worker_free() {
            return LaunchOutcome::refused(format!("kernel {}: launched from inside a running kernel", kernel.name));
        }
        return parallel::launch(kernel, cfg, params, opts);
    }
    let total = cfg.grid.iter().map(|&g| g as u64).product();
    let r = scheduler::with_worker(opts, |w| {
        let mut positions = parallel::Serial::new(kernel, cfg, params, opts, total);
        let r = w.run(kernel, cfg, params, opts, &mut positions, false);
        (r, positions.into_job())
    });
    match r {
        Ok((r, None)) => LaunchOutcome {
            result: r.failure.map_or(Ok(()), |(_, f)| Err(f)),
            hazards: r.log.map(hazard::HazardLog::into_reports).unwrap_or_default(),
        },
        // A block only spun and later blocks ran on helpers: merge as several workers.
        Ok((r, Some(job))) => parallel::finish(&job, Some((r, ExecStats::default())), kernel, opts),
        Err(why) => LaunchOutcome::refused(format!("kernel {}: {why}", kernel.name)),
    }
}

/// This OS thread's executor counters.
pub fn stats() -> ExecStats {
    scheduler::stats()
}
