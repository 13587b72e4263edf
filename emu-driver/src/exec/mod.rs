//! The SIMT executor (DESIGN.md §3): runs a grid of a host-compiled kernel block by
//! block, every CUDA thread a corosensei fiber, with sm_70+ barrier and warp-collective
//! semantics, structural deadlock detection and hazard reports.
//!
//! The driver's launch code calls [`launch`] after validating the configuration (block
//! size and dimension limits, shared memory: that is the driver's job) and hands
//! [`runtime_table`] to every kernel library's `bind`.
//!
//! Layout: `block` (who waits where, when rendezvous complete; safe code), `warp`
//! (collective arithmetic), `hazard` (reports), `fiber` (fibers, scheduler loop and the
//! runtime entry points: the stack-switching unsafe code), `fault` (signal handling).
//!
//! Threads of a block run on one OS thread, blocks one after another in forward order;
//! the per-thread `Worker` owning fibers and block state is what several workers would
//! each get.

mod block;
mod fault;
mod fiber;
mod hazard;
mod warp;

pub use hazard::{format_threads, Hazard, HazardKind, HazardMode, MAX_REPORTED_THREADS};

use crate::abi;
use serde::Serialize;
use std::cell::RefCell;
use std::ffi::c_void;

pub const CUDA_ERROR_OUT_OF_MEMORY: u32 = 2;
pub const CUDA_ERROR_ILLEGAL_ADDRESS: u32 = 700;
pub const CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES: u32 = 701;
pub const CUDA_ERROR_ASSERT: u32 = 710;
pub const CUDA_ERROR_LAUNCH_FAILED: u32 = 719;
/// The sticky code of a launch stopped by a hazard in `EMU_CUDA_HAZARDS=error` mode, and
/// of a deadlock: CUDA_ERROR_LAUNCH_FAILED, what a device reports for a kernel that
/// cannot go on.
pub const HAZARD_ERROR_CODE: u32 = CUDA_ERROR_LAUNCH_FAILED;

/// Default fiber stack size (EMU_CUDA_STACK unset).
pub const DEFAULT_STACK_SIZE: usize = 256 * 1024;
/// Smaller requests are raised to this.
pub const MIN_STACK_SIZE: usize = 16 * 1024;

/// A kernel entry of a bound kernel library.
#[derive(Clone)]
pub struct KernelRef {
    pub name: String,
    pub run: abi::RunFn,
    pub ctx_slot: abi::CtxSlotFn,
}

/// A validated launch configuration.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LaunchConfig {
    pub grid: [u32; 3],
    pub block: [u32; 3],
    pub dyn_smem_bytes: usize,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ExecOptions {
    pub hazards: HazardMode,
    /// Bytes per fiber stack (EMU_CUDA_STACK); at least [`MIN_STACK_SIZE`] is used.
    pub stack_size: usize,
}

impl Default for ExecOptions {
    fn default() -> Self {
        ExecOptions { hazards: HazardMode::Warn, stack_size: DEFAULT_STACK_SIZE }
    }
}

/// Why a launch failed: a CUresult and a report naming kernel, block and thread.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct LaunchFailure {
    pub code: u32,
    pub message: String,
}

#[derive(Debug)]
pub struct LaunchOutcome {
    pub result: Result<(), LaunchFailure>,
    /// Hazards seen by the launch (also on failure), deduplicated by kind and site.
    pub hazards: Vec<Hazard>,
}

/// Counters of the calling OS thread's executor, for tests and tuning. Cumulative;
/// compare differences.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct ExecStats {
    pub launches: u64,
    pub blocks: u64,
    /// Blocks whose threads never called the runtime: run as one range, one resume.
    pub fast_blocks: u64,
    pub fibers_created: u64,
    pub fiber_resumes: u64,
    /// Ranges of threads handed to a fiber (one per block, plus one per interruption).
    pub ranges_started: u64,
    pub barriers: u64,
    pub warp_collectives: u64,
}

/// The table the driver passes to each kernel library's `bind`.
pub fn runtime_table() -> &'static abi::Runtime {
    &fiber::RUNTIME
}

thread_local! {
    static WORKER: RefCell<Option<Box<fiber::Worker>>> = const { RefCell::new(None) };
}

/// Runs every block of the grid on the calling OS thread. `params` is cuLaunchKernel's
/// kernelParams array (the driver has copied the values). Errors that arise while the
/// kernel runs come back in the outcome; nothing here panics on kernel behaviour.
pub fn launch(kernel: &KernelRef, cfg: &LaunchConfig, params: &[*mut c_void], opts: &ExecOptions) -> LaunchOutcome {
    fault::prepare_thread();
    let refused = |message: String| LaunchOutcome {
        result: Err(LaunchFailure { code: CUDA_ERROR_LAUNCH_FAILED, message }),
        hazards: Vec::new(),
    };
    if cfg.block.contains(&0) || cfg.grid.contains(&0) {
        return refused(format!("kernel {}: empty grid or block {:?} x {:?}", kernel.name, cfg.grid, cfg.block));
    }
    let r = WORKER.try_with(|cell| {
        let Ok(mut slot) = cell.try_borrow_mut() else {
            return refused(format!("kernel {}: launched from inside a running kernel", kernel.name));
        };
        let w = slot.get_or_insert_with(|| Box::new(fiber::Worker::new(opts.stack_size.max(MIN_STACK_SIZE))));
        w.launch(kernel, cfg, params, opts)
    });
    r.unwrap_or_else(|_| refused(format!("kernel {}: launched while the thread exits", kernel.name)))
}

/// This OS thread's executor counters.
pub fn stats() -> ExecStats {
    WORKER
        .try_with(|cell| cell.try_borrow().ok().and_then(|w| w.as_ref().map(|w| w.stats)).unwrap_or_default())
        .unwrap_or_default()
}
