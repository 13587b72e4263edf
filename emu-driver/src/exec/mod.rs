//! The SIMT executor (DESIGN.md §3): runs a grid of a host-compiled kernel block by
//! block, every CUDA thread a corosensei fiber, with sm_70+ barrier and warp-collective
//! semantics, convergence for `__activemask`, structural deadlock detection, a watchdog
//! for launches that make no progress, and hazard reports.
//!
//! The driver's launch code calls [`launch`] after validating the configuration (block
//! size and dimension limits, shared memory: that is the driver's job) and hands
//! [`runtime_table`] to every kernel library's `bind`.
//!
//! Layout, one concept per file:
//! - `scheduler`: a worker runs its blocks and, within a block, resumes fibers (the
//!   worker's state grouped by concern: fibers, kernel call, block, running fiber,
//!   hazard log, watchdog, statistics);
//! - `fibers`: the fiber pool and the stack switches (the only stack-switching code);
//! - `block`: who has exited, who waits, who runs next; `barrier`, `warp` (matching and
//!   resolution), `warp_ops` (collective arithmetic), `device_defined` (what reads from
//!   lanes that cannot take part give), `convergence` (`__activemask`), `deadlock`;
//! - `runtime`: the `extern "C"` table kernel code calls (raw arguments in, safe code);
//! - `hazard`: reports; `fault`: signal handling; `watchdog`: forward progress;
//! - `order`: block order; `parallel`: several workers on several OS threads.
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
mod deadlock;
mod device_defined;
mod fault;
mod fibers;
mod hazard;
mod order;
mod parallel;
mod runtime;
mod scheduler;
mod warp;
mod warp_ops;
mod watchdog;

pub use hazard::{format_threads, Hazard, HazardKind, HazardMode, MAX_REPORTED_THREADS};
pub use order::BlockOrder;

use crate::abi;
use serde::Serialize;
use std::cell::RefCell;
use std::ffi::c_void;
use std::time::Duration;

/// The CUresults a launch can end with (defined once, in the driver's `cu`).
pub use crate::cu::{
    CUDA_ERROR_ASSERT, CUDA_ERROR_ILLEGAL_ADDRESS, CUDA_ERROR_LAUNCH_FAILED, CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES,
    CUDA_ERROR_LAUNCH_TIMEOUT, CUDA_ERROR_OUT_OF_MEMORY,
};
/// The sticky code of a launch stopped by a hazard in `EMU_CUDA_HAZARDS=error` mode, and
/// of a deadlock: CUDA_ERROR_LAUNCH_FAILED, what a device reports for a kernel that
/// cannot go on.
pub const HAZARD_ERROR_CODE: u32 = CUDA_ERROR_LAUNCH_FAILED;

/// Default fiber stack size (EMU_CUDA_STACK unset).
pub const DEFAULT_STACK_SIZE: usize = 256 * 1024;
/// Smaller requests are raised to this.
pub const MIN_STACK_SIZE: usize = 16 * 1024;
/// Default watchdog: a launch in which no thread finishes or starts for this long ends
/// with [`CUDA_ERROR_LAUNCH_TIMEOUT`].
pub const DEFAULT_WATCHDOG: Duration = Duration::from_secs(10);

/// A kernel entry of a bound kernel library.
#[derive(Clone)]
pub struct KernelRef {
    /// The kernel's name, for reports.
    pub name: String,
    /// Runs a range of threads of the current block.
    pub run: abi::RunFn,
    /// The library's per-OS-thread context slot.
    pub ctx_slot: abi::CtxSlotFn,
}

/// A validated launch configuration.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LaunchConfig {
    /// gridDim.
    pub grid: [u32; 3],
    /// blockDim.
    pub block: [u32; 3],
    /// Bytes of dynamic shared memory per block.
    pub dyn_smem_bytes: usize,
}

/// How launches run (the driver maps `EMU_CUDA_*` variables to these).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ExecOptions {
    /// Report hazards and go on, or fail the launch (`EMU_CUDA_HAZARDS`).
    pub hazards: HazardMode,
    /// Bytes per fiber stack (`EMU_CUDA_STACK`); at least [`MIN_STACK_SIZE`] is used.
    pub stack_size: usize,
    /// OS threads running blocks concurrently (`EMU_CUDA_WORKERS`); 0 and 1 mean one,
    /// the calling thread (deterministic).
    pub workers: usize,
    /// The order blocks run in (`EMU_CUDA_BLOCK_ORDER`).
    pub block_order: BlockOrder,
    /// How long a launch may go without any thread finishing or starting before it
    /// ends with [`CUDA_ERROR_LAUNCH_TIMEOUT`] (`EMU_CUDA_WATCHDOG`); zero disables it.
    pub watchdog: Duration,
}

impl Default for ExecOptions {
    fn default() -> Self {
        ExecOptions {
            hazards: HazardMode::Warn,
            stack_size: DEFAULT_STACK_SIZE,
            workers: 1,
            block_order: BlockOrder::Forward,
            watchdog: DEFAULT_WATCHDOG,
        }
    }
}

/// Why a launch failed: a CUresult and a report naming kernel, block and thread.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct LaunchFailure {
    /// The CUresult the launch ends with (sticky for the context).
    pub code: u32,
    /// Kernel, block, thread and what happened.
    pub message: String,
    /// The faulting address of an illegal access (the driver names the nearest
    /// allocation).
    pub address: Option<u64>,
}

/// What a launch did.
#[derive(Debug)]
pub struct LaunchOutcome {
    /// Ok, or the failure of the first failing block (in the block order).
    pub result: Result<(), LaunchFailure>,
    /// Hazards seen by the launch (also on failure), deduplicated by kind and site.
    pub hazards: Vec<Hazard>,
}

/// Counters of the calling OS thread's executor, for tests and tuning. Cumulative;
/// compare differences. A launch on several workers counts everything its workers did
/// in the launching thread's counters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct ExecStats {
    /// Launches run.
    pub launches: u64,
    /// Blocks run.
    pub blocks: u64,
    /// Blocks whose threads never called the runtime: run as one range, one resume.
    pub fast_blocks: u64,
    /// Fibers (stacks) created.
    pub fibers_created: u64,
    /// Fiber resumes.
    pub fiber_resumes: u64,
    /// Ranges of threads handed to a fiber (one per block, plus one per interruption).
    pub ranges_started: u64,
    /// Barrier generations completed.
    pub barriers: u64,
    /// Warp collectives completed.
    pub warp_collectives: u64,
    /// `__activemask` groups completed.
    pub activemask_groups: u64,
    /// `yield_now` calls.
    pub yields: u64,
}

impl ExecStats {
    /// Adds what a helper worker did in a launch (not its launch count).
    fn add_work(&mut self, d: &ExecStats) {
        self.blocks += d.blocks;
        self.fast_blocks += d.fast_blocks;
        self.fibers_created += d.fibers_created;
        self.fiber_resumes += d.fiber_resumes;
        self.ranges_started += d.ranges_started;
        self.barriers += d.barriers;
        self.warp_collectives += d.warp_collectives;
        self.activemask_groups += d.activemask_groups;
        self.yields += d.yields;
    }

    /// `self - before`, field by field.
    fn since(&self, before: &ExecStats) -> ExecStats {
        ExecStats {
            launches: self.launches - before.launches,
            blocks: self.blocks - before.blocks,
            fast_blocks: self.fast_blocks - before.fast_blocks,
            fibers_created: self.fibers_created - before.fibers_created,
            fiber_resumes: self.fiber_resumes - before.fiber_resumes,
            ranges_started: self.ranges_started - before.ranges_started,
            barriers: self.barriers - before.barriers,
            warp_collectives: self.warp_collectives - before.warp_collectives,
            activemask_groups: self.activemask_groups - before.activemask_groups,
            yields: self.yields - before.yields,
        }
    }
}

/// The table the driver passes to each kernel library's `bind`.
pub fn runtime_table() -> &'static abi::Runtime {
    &runtime::RUNTIME
}

thread_local! {
    /// This OS thread's worker (its fibers persist across launches).
    static WORKER: RefCell<Option<Box<scheduler::Worker>>> = const { RefCell::new(None) };
}

/// Runs every block of the grid, on the calling OS thread (and `opts.workers - 1`
/// helper threads). `params` is cuLaunchKernel's kernelParams array (the driver has
/// copied the values). Errors that arise while the kernel runs come back in the
/// outcome; nothing here panics on kernel behaviour.
pub fn launch(kernel: &KernelRef, cfg: &LaunchConfig, params: &[*mut c_void], opts: &ExecOptions) -> LaunchOutcome {
    fault::prepare_thread();
    if cfg.block.contains(&0) || cfg.grid.contains(&0) {
        return refused(format!("kernel {}: empty grid or block {:?} x {:?}", kernel.name, cfg.grid, cfg.block));
    }
    if opts.workers > 1 {
        if !worker_free() {
            return refused(format!("kernel {}: launched from inside a running kernel", kernel.name));
        }
        return parallel::launch(kernel, cfg, params, opts);
    }
    let total = cfg.grid.iter().map(|&g| g as u64).product();
    let r = with_worker(opts, |w| {
        let mut positions = parallel::Serial::new(total);
        w.run(kernel, cfg, params, opts, &mut positions, false)
    });
    match r {
        Ok(r) => LaunchOutcome { result: r.failure.map_or(Ok(()), |(_, f)| Err(f)), hazards: r.log.into_reports() },
        Err(why) => refused(format!("kernel {}: {why}", kernel.name)),
    }
}

fn refused(message: String) -> LaunchOutcome {
    LaunchOutcome { result: Err(LaunchFailure { address: None, code: CUDA_ERROR_LAUNCH_FAILED, message }), hazards: Vec::new() }
}

/// Runs `f` on this OS thread's worker (created on first use).
fn with_worker<R>(opts: &ExecOptions, f: impl FnOnce(&mut scheduler::Worker) -> R) -> Result<R, &'static str> {
    WORKER
        .try_with(|cell| {
            let Ok(mut slot) = cell.try_borrow_mut() else {
                return Err("launched from inside a running kernel");
            };
            let w = slot.get_or_insert_with(|| Box::new(scheduler::Worker::new(opts.stack_size.max(MIN_STACK_SIZE))));
            Ok(f(w))
        })
        .unwrap_or(Err("launched while the thread exits"))
}

/// Whether this OS thread's worker can take a launch (it is not running one).
fn worker_free() -> bool {
    WORKER.try_with(|cell| cell.try_borrow_mut().is_ok()).unwrap_or(false)
}

/// This OS thread's executor counters.
pub fn stats() -> ExecStats {
    WORKER
        .try_with(|cell| cell.try_borrow().ok().and_then(|w| w.as_ref().map(|w| w.stats)).unwrap_or_default())
        .unwrap_or_default()
}
