//! Rust mirror of `kernels-host/include/simtwin/abi.h`, the device runtime ABI between
//! host-compiled kernel libraries and the executor. Layouts must match the header
//! exactly; `SIMTWIN_ABI_VERSION` is checked when a library is bound.

use std::ffi::{c_char, c_void};

pub const SIMTWIN_ABI_VERSION: u32 = 1;
pub const SIMTWIN_MODULE_SYMBOL: &[u8] = b"simtwin_module_v1\0";

#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Dim3 {
    pub x: u32,
    pub y: u32,
    pub z: u32,
}

#[repr(C)]
#[derive(Debug)]
pub struct ThreadCtx {
    pub thread_idx: Dim3,
    pub block_idx: Dim3,
    pub block_dim: Dim3,
    pub grid_dim: Dim3,
    pub linear_tid: u32,
    pub lane: u32,
    pub dyn_smem: *mut c_void,
    pub dyn_smem_size: u64,
    pub range_stop: u32,
    pub reserved0: u32,
    pub executor: *mut c_void,
}

pub const BAR_SYNC: u32 = 0;
pub const BAR_COUNT: u32 = 1;
pub const BAR_AND: u32 = 2;
pub const BAR_OR: u32 = 3;

pub const WARP_SHFL_IDX: u32 = 0;
pub const WARP_SHFL_UP: u32 = 1;
pub const WARP_SHFL_DOWN: u32 = 2;
pub const WARP_SHFL_XOR: u32 = 3;
pub const WARP_BALLOT: u32 = 4;
pub const WARP_ANY: u32 = 5;
pub const WARP_ALL: u32 = 6;
pub const WARP_MATCH_ANY: u32 = 7;
pub const WARP_MATCH_ALL: u32 = 8;
pub const WARP_REDUCE_ADD: u32 = 9;
pub const WARP_REDUCE_MIN: u32 = 10;
pub const WARP_REDUCE_MAX: u32 = 11;
pub const WARP_REDUCE_AND: u32 = 12;
pub const WARP_REDUCE_OR: u32 = 13;
pub const WARP_REDUCE_XOR: u32 = 14;
pub const WARP_SYNC: u32 = 15;

pub const TRAP_ASSERT: u32 = 1;
pub const TRAP_TRAP: u32 = 2;
pub const TRAP_UNSUPPORTED: u32 = 3;

pub type RunFn = unsafe extern "C" fn(*const *mut c_void, *mut ThreadCtx, u32, u32);
pub type CtxSlotFn = unsafe extern "C" fn() -> *mut *mut ThreadCtx;

#[repr(C)]
pub struct Runtime {
    pub abi_version: u32,
    pub size: u32,
    pub barrier: unsafe extern "C" fn(op: u32, pred: i32) -> i32,
    pub warp: unsafe extern "C" fn(op: u32, mask: u32, value: u64, arg: i32, width: i32, pred_out: *mut i32) -> u64,
    pub activemask: unsafe extern "C" fn() -> u32,
    pub trap: unsafe extern "C" fn(kind: u32, message: *const c_char, file: *const c_char, line: u32),
    pub print: unsafe extern "C" fn(text: *const c_char, len: usize),
    pub threadfence: unsafe extern "C" fn(scope: u32),
    pub clock: unsafe extern "C" fn() -> u64,
}

#[repr(C)]
pub struct Kernel {
    pub name: *const c_char,
    pub function: *const c_void,
    pub run: RunFn,
    pub param_count: u32,
    pub param_sizes: *const u32,
    pub param_aligns: *const u32,
    pub max_threads: u32,
    pub min_blocks: u32,
}

#[repr(C)]
pub struct Global {
    pub name: *const c_char,
    pub address: *mut c_void,
    pub size: u64,
    pub is_constant: u32,
    pub reserved: u32,
}

#[repr(C)]
pub struct Module {
    pub abi_version: u32,
    pub kernel_count: u32,
    pub kernels: *const Kernel,
    pub global_count: u32,
    pub globals: *const Global,
    pub source_path: *const c_char,
    pub source_hash: *const c_char,
    pub bind: unsafe extern "C" fn(runtime: *const Runtime),
    pub ctx_slot: CtxSlotFn,
}

pub type ModuleFn = unsafe extern "C" fn() -> *const Module;
