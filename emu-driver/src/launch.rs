//! Kernel launches: validation exactly where the real driver validates (the call itself
//! answers configuration errors and runs nothing), parameter capture at launch time, the
//! run on the SIMT executor, and sticky execution errors: a kernel that fails makes the
//! launch return CUDA_SUCCESS (as the asynchronous launch on an H200 does) and every
//! later call of the context answer the error (measured: cuCtxSynchronize gives 710 after
//! a device assert, and so do cuMemAlloc_v2, cuMemcpyDtoH_v2, cuModuleGetFunction).

use crate::boundary::{ArgBuf, CuResult, KernelArgs};
use crate::counters;
use crate::cu::*;
use crate::exec;
use crate::state::{driver, handle_id, Tag};
use std::ffi::c_void;

pub struct Launch {
    pub f: CUfunction,
    pub grid: [u32; 3],
    pub block: [u32; 3],
    pub shared: u32,
    pub stream: CUstream,
    pub args: KernelArgs,
    /// A cooperative launch (cuLaunchCooperativeKernel, or cuLaunchKernelEx with
    /// CU_LAUNCH_ATTRIBUTE_COOPERATIVE): every block must fit on the device at once, and
    /// the context's grid workspace is made if it has none yet.
    pub cooperative: bool,
}

/// A validated launch with its arguments captured: what runs later (deferred mode) or at
/// once.
pub struct Prepared {
    func: crate::module::FunctionRef,
    ctx: u64,
    opts: exec::ExecOptions,
    grid: [u32; 3],
    block: [u32; 3],
    shared: u32,
    /// The arguments, 8-byte aligned, laid out at the kernel's parameter offsets.
    args: ArgBuf,
    /// The launch is in its kernel's tally already (`prepare` with `count`): taken back
    /// if it fails.
    counted: bool,
    /// The context's grid workspace (0: none yet); it lives as long as the context,
    /// which outlives the launches queued on it.
    workspace: u64,
}

// SAFETY: the argument buffer holds plain values (device pointers are addresses); the
// function reference is Send (its module is).
unsafe impl Send for Prepared {}

impl Prepared {
    /// The context the launch runs in (its stream's).
    pub fn ctx(&self) -> u64 {
        self.ctx
    }

    /// The kernel's symbol.
    pub fn symbol(&self) -> &str {
        &self.func.kernel().symbol
    }
}

/// Validates a launch where the real driver validates it (the call itself answers
/// configuration errors) and captures its arguments, in one hold of the driver lock;
/// `count`: the launch runs right after (not deferred), so it joins its kernel's tally
/// under this hold (every tally is written under the driver's lock).
pub fn prepare(l: Launch, count: bool) -> CuResult<Prepared> {
    let mut d = driver()?;
    // A named stream carries the context (cuLaunchKernel on a stream succeeds with
    // none current, measured on an H200).
    let ctx = d.stream_context(l.stream)?;
    let id = match handle_id(Tag::Function, l.f) {
        Some(id) => id,
        // cuLaunchKernel takes a library's kernel (CUkernel) for its function too.
        None => d.kernel_function(l.f)?,
    };
    let func = d.functions.get(&id).ok_or(CUDA_ERROR_INVALID_HANDLE)?.clone();
    if func.module.ctx != ctx {
        return Err(CUDA_ERROR_INVALID_HANDLE);
    }
    // A kernel the device's driver could not compile (cuModuleGetFunction answered its
    // code once, then handed out this handle): the launch fails, nothing sticky (H200,
    // ptx_txq_lazy).
    if let Some(r) = &func.kernel().refused {
        crate::log_error!("launch of {}: {}", func.kernel().symbol, r.message);
        return Err(CUDA_ERROR_UNKNOWN);
    }
    let p = Limits::of(d.profile);
    let (g, b) = (l.grid, l.block);
    if g.contains(&0) || b.contains(&0) {
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    let (mb, mg) = (p.max_block, p.max_grid);
    if (0..3).any(|i| b[i] > mb[i] || g[i] > mg[i]) {
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    let threads = b[0] as u64 * b[1] as u64 * b[2] as u64;
    if threads > p.max_threads_per_block as u64 {
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    let k = func.kernel();
    let attrs = k.attrs.as_ref();
    let static_shared = k.static_shared();
    if l.shared > func.max_dynamic_shared || static_shared as u64 + l.shared as u64 > p.shared_per_block_optin as u64 {
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    // What the device's resources allow per block: __launch_bounds__ (from the
    // cubin, else from the host twin) and registers.
    let bound = k.thread_bound();
    // More threads than __launch_bounds__ allows: CUDA_ERROR_INVALID_VALUE (measured
    // on an H200; not "out of resources").
    if let Some(m) = bound {
        if threads > m as u64 {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
    }
    if let Some(a) = attrs {
        if a.num_regs as u64 * threads.div_ceil(32) * 32 > p.regs_per_block as u64 {
            return Err(CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES);
        }
    }
    let c = &d.config;
    let opts = exec::ExecOptions {
        hazards: c.hazards,
        stack_size: c.stack_size,
        workers: c.workers,
        block_order: c.block_order,
        watchdog: c.watchdog,
        checks: crate::exec::Checks { race: c.checks.race, poison: c.checks.poison },
        preempt: c.preempt,
        lanes: c.thread_loops != crate::config::ThreadLoops::Off,
        resident_blocks: {
            let shape = (threads, static_shared as u64 + l.shared as u64, attrs.map_or(0, |a| a.num_regs));
            match d.resident_memo.get() {
                Some((s, r)) if s == shape => r,
                _ => {
                    let r = resident_blocks(&p, shape.0, shape.1, shape.2);
                    d.resident_memo.set(Some((shape, r)));
                    r
                }
            }
        },
    };
    // A cooperative grid must be resident at once (its blocks wait for each other at a
    // grid sync): more blocks than occupancy x SMs allows is refused by the call, as the
    // device refuses it (CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE).
    if l.cooperative {
        let blocks = g.iter().map(|&v| v as u64).product::<u64>();
        if blocks > opts.resident_blocks as u64 {
            crate::log_warn!(
                "cooperative launch of {}: {blocks} blocks, but at most {} of {} threads ({} bytes of shared memory) fit on the device at once",
                k.symbol,
                opts.resident_blocks,
                threads,
                static_shared as u64 + l.shared as u64
            );
            return Err(CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE);
        }
    }
    let args = l.args.capture(&k.param_sizes, &k.param_offsets, k.param_bytes)?;
    count_zero_copy(&d, k, &args);
    if count {
        let (threads, blocks) = totals(l.grid, l.block);
        k.tally.add_locked(threads, blocks);
    }
    let workspace = workspace_of(&mut d, ctx, l.cooperative);
    drop(d);
    Ok(Prepared { func, ctx, opts, grid: l.grid, block: l.block, shared: l.shared, args, counted: count, workspace })
}

/// Threads and blocks of a launch.
fn totals(grid: [u32; 3], block: [u32; 3]) -> (u64, u64) {
    let blocks = grid.iter().map(|&v| v as u64).product::<u64>();
    (block.iter().map(|&v| v as u64).product::<u64>() * blocks, blocks)
}

/// The device limits a launch is validated against, read once from the profile's
/// attribute table (a tree lookup each: a tenth of a small launch's cost when read per
/// launch).
#[derive(Clone, Copy)]
struct Limits {
    max_block: [u32; 3],
    max_grid: [u32; 3],
    max_threads_per_block: u32,
    shared_per_block_optin: u32,
    regs_per_block: u32,
    sm_count: u32,
    /// Per SM (attributes 39, 106, 81, 82): threads, blocks, shared memory, registers.
    sm_threads: u64,
    sm_blocks: u64,
    sm_shared: u64,
    sm_regs: u64,
}

impl Limits {
    fn read(p: &crate::profile::Profile) -> Limits {
        let per = |id: i32, dflt: u64| p.attr(id).map_or(dflt, |v| v.max(0) as u64);
        Limits {
            max_block: p.max_block(),
            max_grid: p.max_grid(),
            max_threads_per_block: p.max_threads_per_block(),
            shared_per_block_optin: p.shared_per_block_optin(),
            regs_per_block: p.regs_per_block(),
            sm_count: p.sm_count(),
            sm_threads: per(39, 2048),
            sm_blocks: per(106, 32),
            sm_shared: per(81, 233_472),
            sm_regs: per(82, 65_536),
        }
    }

    /// The limits of `p`: cached for the process's device profile (profiles are static
    /// and the driver has one), read afresh for any other.
    fn of(p: &'static crate::profile::Profile) -> Limits {
        static CACHE: std::sync::OnceLock<(usize, Limits)> = std::sync::OnceLock::new();
        let key = p as *const _ as usize;
        let &(k, l) = CACHE.get_or_init(|| (key, Limits::read(p)));
        if k == key {
            l
        } else {
            Limits::read(p)
        }
    }
}

/// Blocks of this shape the device holds resident at once: per SM the fewest allowed by
/// threads, blocks, shared memory (with the 1 KiB the device reserves per block) and
/// registers, times the SMs (block-level forward progress: a block that spins on a later
/// one sees it start only if both fit).
fn resident_blocks(p: &Limits, threads: u64, shared: u64, regs: u32) -> u32 {
    let warps = threads.div_ceil(32).max(1);
    let mut per_sm = (p.sm_threads / (warps * 32)).min(p.sm_blocks);
    per_sm = per_sm.min(p.sm_shared / (shared + 1024));
    if regs > 0 {
        per_sm = per_sm.min(p.sm_regs / (regs as u64 * warps * 32).max(1));
    }
    (per_sm * p.sm_count as u64).clamp(1, u32::MAX as u64) as u32
}

/// Where a faulting address lies: the nearest allocation and the offset from its base.
fn describe_address(addr: u64) -> String {
    let Ok(d) = driver() else { return String::new() };
    match d.nearest_alloc(addr) {
        Some((a, off)) => {
            let side = if off < 0 {
                "before its start"
            } else if off as u64 >= a.size {
                "past its end"
            } else {
                "inside it"
            };
            format!("; nearest allocation: offset {off} ({side}) of the {} allocation of {} bytes at {:#x}", a.kind.name(), a.size, a.base)
        }
        None => "; no allocation is near".into(),
    }
}

/// A launch with an argument pointing into pinned, registered or managed host memory
/// moves data without a copy call: the transfer audit must see it (counters'
/// `zero_copy`, by kernel). Every 8-byte-aligned word of every argument of 8 bytes or
/// more is looked at, so a pointer inside a struct passed by value counts too (a
/// pointer field is 8-aligned in its struct, and the struct's parameter offset is at
/// least as aligned). Not seen: host pointers the kernel reads from memory (a device
/// buffer or a module global holding them) or computes.
fn count_zero_copy(d: &crate::state::Driver, k: &crate::module::Kernel, args: &[u64]) {
    if d.zero_copy_allocs == 0 {
        return;
    }
    let host = k.param_sizes.iter().zip(&k.param_offsets).any(|(&size, &off)| {
        let (start, end) = (off as usize, off as usize + size as usize);
        (start.next_multiple_of(8)..end.saturating_sub(7)).step_by(8).any(|at| {
            let v = args.get(at / 8).copied().unwrap_or(0);
            d.find_alloc(v).is_some_and(|a| a.kind.is_zero_copy())
        })
    });
    if host {
        counters::get().zero_copy(&k.symbol);
    }
}

/// Context `ctx`'s grid workspace for a launch: made by a cooperative launch, 0 for a
/// plain one before any was.
fn workspace_of(d: &mut crate::state::Driver, ctx: u64, cooperative: bool) -> u64 {
    // Most programs never launch cooperatively: no lookup per launch for them.
    static ANY: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
    if !cooperative && !ANY.load(std::sync::atomic::Ordering::Relaxed) {
        return 0;
    }
    let Some(c) = d.contexts.get_mut(&ctx) else { return 0 };
    if cooperative && c.grid_workspace.is_none() {
        c.grid_workspace = Some(crate::state::GridWorkspace::new());
        ANY.store(true, std::sync::atomic::Ordering::Relaxed);
    }
    c.grid_workspace.as_ref().map_or(0, |w| w.0.as_ptr() as u64)
}

/// Runs a prepared launch on the executor. An error while the kernel runs does not fail
/// the call: as on a device it reaches the program at the next call of the context, and
/// stays.
pub fn run(mut p: Prepared) -> CuResult {
    let base = p.args.as_mut_ptr() as *mut u8;
    let args = &p.args;
    let k = p.func.kernel();
    // kernelParams on the stack for the usual few parameters (no allocation per launch).
    let mut few = [std::ptr::null_mut::<c_void>(); 16];
    let many: Vec<*mut c_void>;
    let ptrs: &[*mut c_void] = if k.param_offsets.len() <= few.len() {
        for (p, &o) in few.iter_mut().zip(&k.param_offsets) {
            *p = base.wrapping_add(o as usize) as *mut c_void;
        }
        &few[..k.param_offsets.len()]
    } else {
        many = k.param_offsets.iter().map(|&o| base.wrapping_add(o as usize) as *mut c_void).collect();
        &many
    };
    let cfg = exec::LaunchConfig {
        grid: p.grid,
        block: p.block,
        dyn_smem_bytes: p.shared as usize,
        smem_prefix: k.smem_prefix as usize,
        grid_workspace: p.workspace,
    };
    // Each kernel's run time goes into the counters file when one is asked for (two
    // clock reads a launch; none otherwise: bench-kernels' (f) launches take ~200 ns).
    let start = crate::config::get().is_ok_and(|c| c.counts.is_some()).then(std::time::Instant::now);
    let outcome = {
        // EMU_CUDA_CHECKS=pointers: device memory is accessible while the kernel runs.
        let _window = crate::arena::window();
        exec::launch(&k.exec, &cfg, ptrs, &p.opts)
    };
    let run_ns = start.map_or(0, |t| u64::try_from(t.elapsed().as_nanos()).unwrap_or(u64::MAX));
    let (l, ctx) = (&p, p.ctx);
    if crate::trace::enabled() {
        // SAFETY: the argument buffer's `param_bytes` bytes (it holds at least that many).
        let bytes = unsafe { std::slice::from_raw_parts(args.as_ptr() as *const u8, (k.param_bytes as usize).min(args.len() * 8)) };
        let globals = || p.func.module.globals.iter().map(|(n, &(a, s))| (n.clone(), a, s)).collect();
        crate::trace::emulated::launch(
            &k.symbol,
            l.grid,
            l.block,
            l.shared,
            &k.param_sizes,
            &k.param_offsets,
            bytes,
            p.func.module_id,
            globals,
            outcome.result.as_ref().err().map(|f| f.code),
        );
    }
    let c = counters::get();
    for h in &outcome.hazards {
        crate::log_warn!("{h}");
        c.hazard(h.to_record());
    }
    match outcome.result {
        Ok(()) => {
            if !p.counted || run_ns > 0 {
                if let Ok(_held) = driver() {
                    if !p.counted {
                        let (threads, blocks) = totals(l.grid, l.block);
                        k.tally.add_locked(threads, blocks);
                    }
                    if run_ns > 0 {
                        k.tally.add_run_locked(run_ns);
                    }
                }
            }
            Ok(())
        }
        Err(failure) => {
            c.failed_launch(&k.symbol);
            let near = failure.address.map(describe_address).unwrap_or_default();
            crate::log_error!("kernel {} failed: {} ({}){near}", k.symbol, crate::errors::name(failure.code), failure.message);
            // As on a device the launch itself succeeded (it is asynchronous there); the
            // error reaches the program at the next call of the context, and stays.
            if let Ok(mut d) = driver() {
                d.set_sticky(ctx, failure.code);
                if p.counted {
                    let (threads, blocks) = totals(l.grid, l.block);
                    k.tally.retract_locked(threads, blocks);
                }
            }
            Ok(())
        }
    }
}
