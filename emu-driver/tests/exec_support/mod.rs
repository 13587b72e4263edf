//! Test kernels for the executor, written the way kernels-host generates them: a `run`
//! function that loops over its range of threads, writes each thread's indices into the
//! context, runs the body, and stops early when `range_stop` is set. Bodies read their
//! context through a thread-local slot and call the runtime table, as host-compiled CUDA
//! code does.
#![allow(dead_code)]

use cuda::abi::{self, ThreadCtx};
use cuda::exec::{self, ExecOptions, HazardMode, KernelRef, LaunchConfig, LaunchOutcome};
use std::cell::Cell;
use std::ffi::c_void;
use std::ptr;

thread_local! {
    static SLOT: Cell<*mut ThreadCtx> = const { Cell::new(ptr::null_mut()) };
}

pub unsafe extern "C" fn ctx_slot() -> *mut *mut ThreadCtx {
    SLOT.with(|s| s.as_ptr())
}

/// The running CUDA thread's context.
pub fn ctx() -> &'static ThreadCtx {
    unsafe { &*SLOT.with(|s| s.get()) }
}

pub fn tid() -> u32 {
    ctx().linear_tid
}

pub fn lane() -> u32 {
    ctx().linear_tid % 32
}

pub fn rt() -> &'static abi::Runtime {
    exec::runtime_table()
}

/// Writes thread `l`'s indices into the context, as the generated `run` does.
pub unsafe fn set_thread(ctx: *mut ThreadCtx, l: u32) {
    let d = (*ctx).block_dim;
    (*ctx).thread_idx = abi::Dim3 { x: l % d.x, y: (l / d.x) % d.y, z: l / (d.x * d.y) };
    (*ctx).linear_tid = l;
}

/// Declares `unsafe extern "C" fn $name(params, ctx, first, count)` running `$body`.
#[macro_export]
macro_rules! kernel {
    ($name:ident, $body:expr) => {
        unsafe extern "C" fn $name(params: *const *mut std::ffi::c_void, ctx: *mut cuda::abi::ThreadCtx, first: u32, count: u32) {
            for l in first..first + count {
                exec_support::set_thread(ctx, l);
                let body: unsafe fn(*const *mut std::ffi::c_void) = $body;
                body(params);
                if std::ptr::read_volatile(std::ptr::addr_of!((*ctx).range_stop)) != 0 {
                    return;
                }
            }
        }
    };
}

/// As `kernel!`, with the runner kernels-host generates now: `range_stop` is a limit
/// checked before each thread, after `linear_tid` names it, and `reserved = 1` says so,
/// which lets the executor preempt a thread that spins in kernel code.
#[macro_export]
macro_rules! preemptible_kernel {
    ($name:ident, $body:expr) => {
        unsafe extern "C" fn $name(params: *const *mut std::ffi::c_void, ctx: *mut cuda::abi::ThreadCtx, first: u32, count: u32) {
            std::ptr::write_volatile(std::ptr::addr_of_mut!((*ctx).reserved), 1);
            for l in first..first + count {
                exec_support::set_thread(ctx, l);
                let stop = std::ptr::read_volatile(std::ptr::addr_of!((*ctx).range_stop));
                if stop != 0 && l >= stop {
                    return;
                }
                let body: unsafe fn(*const *mut std::ffi::c_void) = $body;
                body(params);
            }
        }
    };
}

/// Parameter `i` as a value of type T (kernelParams holds pointers to values).
pub unsafe fn param<T: Copy>(params: *const *mut c_void, i: usize) -> T {
    ptr::read_unaligned(*params.add(i) as *const T)
}

/// The call site `line` of this test file, as kernels-host's shim passes the user's
/// `__builtin_FILE()` / `__builtin_LINE()`.
pub fn site(line: u32) -> abi::Site {
    abi::Site { file: c"exec_test.rs".as_ptr(), line, column: 0 }
}

/// `__syncthreads()` at source line `line!()` of the caller.
#[macro_export]
macro_rules! syncthreads {
    () => {{
        let site = exec_support::site(line!());
        unsafe { (exec_support::rt().barrier)(cuda::abi::bar::SYNC, 0, site) };
    }};
}

/// A barrier without a known site.
pub fn syncthreads() {
    unsafe { (rt().barrier)(abi::bar::SYNC, 0, abi::Site::UNKNOWN) };
}

pub fn barrier(op: u32, pred: bool) -> i32 {
    unsafe { (rt().barrier)(op, pred as i32, abi::Site::UNKNOWN) }
}

/// A warp collective; returns (value, pred_out).
pub fn warp(op: u32, mask: u32, value: u64, arg: i32, width: i32) -> (u64, i32) {
    let mut p = -1;
    let r = unsafe { (rt().warp)(op, mask, value, arg, width, &mut p, abi::Site::UNKNOWN) };
    (r, p)
}

pub fn activemask() -> u32 {
    unsafe { (rt().activemask)(abi::Site::UNKNOWN) }
}

pub fn kref(name: &str, run: abi::RunFn) -> KernelRef {
    KernelRef { name: name.into(), run, ctx_slot, shared_in_tls: true }
}

pub fn cfg(grid: [u32; 3], block: [u32; 3], smem: usize) -> LaunchConfig {
    LaunchConfig { grid, block, dyn_smem_bytes: smem, smem_prefix: 0, grid_workspace: 0 }
}

pub fn run(k: &KernelRef, c: LaunchConfig, params: &[*mut c_void]) -> LaunchOutcome {
    exec::launch(k, &c, params, &ExecOptions::default())
}

pub fn run_strict(k: &KernelRef, c: LaunchConfig, params: &[*mut c_void]) -> LaunchOutcome {
    exec::launch(k, &c, params, &ExecOptions { hazards: HazardMode::Error, ..ExecOptions::default() })
}

/// kernelParams for a list of values that live as long as the returned holder.
pub struct Params {
    /// Boxed: `ptrs` points at each value, which must not move when the Vec grows.
    #[allow(clippy::vec_box)]
    vals: Vec<Box<u64>>,
    pub ptrs: Vec<*mut c_void>,
}

pub fn params(vals: &[u64]) -> Params {
    let mut vals: Vec<Box<u64>> = vals.iter().map(|&v| Box::new(v)).collect();
    let ptrs = vals.iter_mut().map(|b| (&mut **b) as *mut u64 as *mut c_void).collect();
    Params { vals, ptrs }
}

pub fn addr<T>(v: &mut [T]) -> u64 {
    v.as_mut_ptr() as u64
}

/// Pointer parameter `i` as `*mut T`.
pub unsafe fn out<T>(params: *const *mut c_void, i: usize) -> *mut T {
    param::<u64>(params, i) as *mut T
}

/// A warp collective at call site `line` of this test file; returns (value, pred_out).
pub fn warp_at(line: u32, op: u32, mask: u32, value: u64, arg: i32, width: i32) -> (u64, i32) {
    let mut p = -1;
    let r = unsafe { (rt().warp)(op, mask, value, arg, width, &mut p, site(line)) };
    (r, p)
}

/// `__activemask()` at call site `line`.
pub fn activemask_at(line: u32) -> u32 {
    unsafe { (rt().activemask)(site(line)) }
}

/// `__activemask()` at the caller's source line.
#[macro_export]
macro_rules! activemask {
    () => {
        exec_support::activemask_at(line!())
    };
}

/// `__shfl_sync(mask, value, src)` at the caller's source line.
#[macro_export]
macro_rules! shfl {
    ($mask:expr, $v:expr, $src:expr) => {
        exec_support::warp_at(line!(), cuda::abi::warp::SHFL_IDX, $mask, $v as u64, $src as i32, 32).0
    };
}

/// `yield_now` (what `__nanosleep` calls) at call site `line`.
pub fn yield_at(line: u32) {
    unsafe { (rt().yield_now)(site(line)) };
}

/// Runs with explicit options.
pub fn run_with(k: &KernelRef, c: LaunchConfig, params: &[*mut c_void], opts: ExecOptions) -> LaunchOutcome {
    exec::launch(k, &c, params, &opts)
}
