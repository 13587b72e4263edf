//! The executor's vocabulary, shared by its parts and re-exported by `exec`: what a
//! launch is given (kernel, configuration, options), what it gives back (outcome,
//! failure, hazards, statistics) and the CUresults it can end with. Plain data: no part
//! of the executor is below it but hazard reports and the block order it names.

use super::hazard::{Hazard, HazardMode};
use super::order::BlockOrder;
use crate::abi;
use serde::Serialize;
use std::sync::Arc;
use std::time::Duration;

/// The CUresults a launch can end with (defined once, in the driver's `cu`).
pub use crate::cu::{
    CUDA_ERROR_ASSERT, CUDA_ERROR_ILLEGAL_ADDRESS, CUDA_ERROR_LAUNCH_FAILED, CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES, CUDA_ERROR_LAUNCH_TIMEOUT,
    CUDA_ERROR_MISALIGNED_ADDRESS, CUDA_ERROR_OUT_OF_MEMORY,
};
/// The sticky code of a launch stopped by a hazard in `EMU_CUDA_HAZARDS=error` mode, and
/// of a deadlock: CUDA_ERROR_LAUNCH_FAILED, what a device reports for a kernel that
/// cannot go on.
pub const HAZARD_ERROR_CODE: u32 = CUDA_ERROR_LAUNCH_FAILED;

pub use crate::config::{DEFAULT_PREEMPT, DEFAULT_STACK_SIZE, DEFAULT_WATCHDOG, MIN_STACK_SIZE};
/// At most this many more OS threads run blocks of one launch concurrently so that a
/// block spinning on a later block sees it start (block-level forward progress): the
/// most blocks a Hopper device holds resident at once (32 per SM, 132 SMs), so that a
/// cooperative grid sized by the occupancy API fits whatever its block shape. The launch's
/// own limit is its occupancy x SMs (`ExecOptions::resident_blocks`). Each helper is an
/// OS thread with its block's fibers (stacks mapped a chunk at a time, touched only as
/// used: `stacks`).
pub const MAX_SPIN_HELPERS: u32 = 32 * 132;

/// A kernel entry of a bound kernel library.
#[derive(Clone)]
pub struct KernelRef {
    /// The kernel's name, for reports (shared: cloning it allocates nothing).
    pub name: Arc<str>,
    /// Runs a range of threads of the current block.
    pub run: abi::RunFn,
    /// The library's per-OS-thread context slot.
    pub ctx_slot: abi::CtxSlotFn,
    /// Whether the kernel's static shared memory is its library's thread-locals (a twin:
    /// kernels-host makes `__shared__` variables `static thread_local`). PTX mode puts it
    /// in the window in front of the dynamic part, and its library's thread-locals are
    /// the runners' own state, which the shared-memory checks must not touch.
    pub shared_in_tls: bool,
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
    /// Bytes of static shared memory the kernel library keeps in the same window, in front
    /// of the dynamic part (PTX mode; 0 for twins, whose static shared variables are
    /// thread-locals of their library).
    pub smem_prefix: usize,
    /// The context's grid workspace (`state::GridWorkspace`: the grid barrier's counter
    /// is its word at offset 4), handed to kernels by the runtime's `grid_workspace`
    /// (PTX: `%envreg1`:`%envreg2`); 0 before the context's first cooperative launch,
    /// where a grid sync traps as on the device.
    pub grid_workspace: u64,
}

/// The shared-memory checks a launch runs with (`EMU_CUDA_CHECKS`; see `race`, `smem`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Checks {
    /// Report shared-memory races (needs a checking library, `kernels-host build --checks`).
    pub race: bool,
    /// Fill shared memory with 0xFF bytes before each block starts.
    pub poison: bool,
}

impl Checks {
    /// Any check is on.
    pub fn any(&self) -> bool {
        self.race || self.poison
    }
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
    /// Shared-memory checks (`EMU_CUDA_CHECKS`); off by default.
    pub checks: Checks,
    /// Time slice (`EMU_CUDA_PREEMPT`): a thread that runs kernel code this long without
    /// a runtime call while its block's other threads wait is preempted (as a device
    /// with independent thread scheduling lets them progress); zero: never.
    pub preempt: Duration,
    /// Blocks of this launch the device could hold resident at once (occupancy x SMs):
    /// a block whose threads only spin lets up to this many blocks run concurrently
    /// (at most [`MAX_SPIN_HELPERS`] + 1); 1: never.
    pub resident_blocks: u32,
    /// Whether a PTX-mode runner may run threads as vector lanes (simtwin-ptx `lanes`);
    /// off with `EMU_CUDA_THREAD_LOOPS=off`, where every range runs one thread at a time.
    pub lanes: bool,
}

impl Default for ExecOptions {
    fn default() -> Self {
        ExecOptions {
            hazards: HazardMode::Warn,
            stack_size: DEFAULT_STACK_SIZE,
            workers: 1,
            block_order: BlockOrder::Forward,
            watchdog: DEFAULT_WATCHDOG,
            checks: Checks::default(),
            preempt: DEFAULT_PREEMPT,
            resident_blocks: 132,
            lanes: true,
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

impl LaunchOutcome {
    /// A launch refused before any block ran (CUDA_ERROR_LAUNCH_FAILED, no hazards).
    pub(crate) fn refused(message: String) -> LaunchOutcome {
        LaunchOutcome { result: Err(LaunchFailure { address: None, code: CUDA_ERROR_LAUNCH_FAILED, message }), hazards: Vec::new() }
    }
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
    /// Threads preempted after a time slice of kernel code (spin-waits).
    pub preemptions: u64,
    /// Of those, threads preempted at a runtime call (`clock64()`, a fence) because the
    /// probe found them spinning inside the runtime.
    pub preemptions_at_call: u64,
    /// Extra OS threads a launch asked to run blocks because a block only spun.
    pub spin_helpers: u64,
    /// Turns a spinning block took to resume its spinners (`turns`).
    pub spin_turns: u64,
    /// Waits for a turn that ended without one (patience ran out, or the launch timed
    /// out): the block resumed its spinners anyway.
    pub spin_turns_missed: u64,
}

impl ExecStats {
    /// Adds what a helper worker did in a launch (not its launch count).
    pub(crate) fn add_work(&mut self, d: &ExecStats) {
        self.blocks += d.blocks;
        self.fast_blocks += d.fast_blocks;
        self.fibers_created += d.fibers_created;
        self.fiber_resumes += d.fiber_resumes;
        self.ranges_started += d.ranges_started;
        self.barriers += d.barriers;
        self.warp_collectives += d.warp_collectives;
        self.activemask_groups += d.activemask_groups;
        self.yields += d.yields;
        self.preemptions += d.preemptions;
        self.preemptions_at_call += d.preemptions_at_call;
        self.spin_helpers += d.spin_helpers;
        self.spin_turns += d.spin_turns;
        self.spin_turns_missed += d.spin_turns_missed;
    }

    /// `self - before`, field by field.
    pub(crate) fn since(&self, before: &ExecStats) -> ExecStats {
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
            preemptions: self.preemptions - before.preemptions,
            preemptions_at_call: self.preemptions_at_call - before.preemptions_at_call,
            spin_helpers: self.spin_helpers - before.spin_helpers,
            spin_turns: self.spin_turns - before.spin_turns,
            spin_turns_missed: self.spin_turns_missed - before.spin_turns_missed,
        }
    }
}
