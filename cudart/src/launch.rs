//! Kernel launches and kernel queries.
//!
//! `kernel<<<g, b, s, st>>>(args)` compiles (nvcc 13) to `__cudaPushCallConfiguration(g, b,
//! s, st)`, then the kernel's host stub, which pops the configuration
//! (`__cudaPopCallConfiguration`), looks the kernel up once (`__cudaGetKernel`: the handle
//! this library hands out is the stub's own address) and calls `__cudaLaunchKernel` with
//! an array of pointers to the arguments: exactly cuLaunchKernel's `kernelParams`. The
//! configuration is a per-thread stack, so a launch inside an argument's evaluation nests.
//!
//! Launch errors, as NVIDIA's runtime answers them on an H100
//! (reports/reference/h200/runtime/): the driver answers a bad configuration (a zero or
//! too large dimension, more than 1024 threads or than `__launch_bounds__` allows, too
//! much shared memory) with CUDA_ERROR_INVALID_VALUE, which a launch reports as
//! cudaErrorInvalidValue; a host address that is not a registered kernel is
//! cudaErrorInvalidResourceHandle; a stub called without `<<<>>>` is
//! cudaErrorInvalidConfiguration.

use std::cell::RefCell;
use std::ffi::c_void;

use crate::driver::{self as d, Handle, LaunchConfig};
use crate::error::{self, check, Res};
use crate::registry;

/// dim3 / uint3: the workspace's one definition (simtwin-abi).
pub use simtwin_abi::kernel::Dim3;

/// One `<<<...>>>` configuration.
#[derive(Clone, Copy)]
pub struct Config {
    pub grid: Dim3,
    pub block: Dim3,
    pub shared: usize,
    pub stream: usize,
}

thread_local! {
    static CONFIGS: RefCell<Vec<Config>> = const { RefCell::new(Vec::new()) };
}

pub fn push(c: Config) {
    CONFIGS.with(|s| s.borrow_mut().push(c));
}

/// The innermost configuration (cudaErrorInvalidConfiguration without one: a stub called
/// without `<<<>>>`).
pub fn pop() -> Res<Config> {
    CONFIGS.with(|s| s.borrow_mut().pop()).ok_or(error::INVALID_CONFIGURATION)
}

fn shared_bytes(n: usize) -> Res<u32> {
    u32::try_from(n).map_err(|_| error::INVALID_CONFIGURATION)
}

/// `__cudaLaunchKernel` / cudaLaunchKernel: the kernel whose host stub is `host_fn`.
pub fn launch(host_fn: usize, grid: Dim3, block: Dim3, args: *mut *mut c_void, shared: usize, stream: Handle) -> Res<()> {
    let f = registry::function(host_fn)?;
    let smem = shared_bytes(shared)?;
    // The driver's answer as it is (the module's comment: NVIDIA's runtime does the same).
    check(d::cuLaunchKernel(f, grid.x, grid.y, grid.z, block.x, block.y, block.z, smem, stream, args, std::ptr::null_mut()))
}

/// cudaLaunchCooperativeKernel.
pub fn launch_cooperative(host_fn: usize, grid: Dim3, block: Dim3, args: *mut *mut c_void, shared: usize, stream: Handle) -> Res<()> {
    let f = registry::function(host_fn)?;
    let smem = shared_bytes(shared)?;
    check(d::cuLaunchCooperativeKernel(f, grid.x, grid.y, grid.z, block.x, block.y, block.z, smem, stream, args))
}

/// cudaLaunchKernelExC: cudaLaunchAttribute has CUlaunchAttribute's layout and numbers,
/// so the attributes pass through.
#[allow(clippy::too_many_arguments)] // cudaLaunchConfig_t's fields, unpacked by exports
pub fn launch_ex(
    host_fn: usize,
    grid: Dim3,
    block: Dim3,
    shared: usize,
    stream: Handle,
    attrs: *mut c_void,
    num_attrs: u32,
    args: *mut *mut c_void,
) -> Res<()> {
    let f = registry::function(host_fn)?;
    if num_attrs > 0 && attrs.is_null() {
        return Err(error::INVALID_VALUE);
    }
    let c = LaunchConfig {
        grid: [grid.x, grid.y, grid.z],
        block: [block.x, block.y, block.z],
        shared_mem_bytes: shared_bytes(shared)?,
        stream,
        attrs,
        num_attrs,
    };
    check(d::cuLaunchKernelEx(&c, f, args, std::ptr::null_mut()))
}

/// driver_types.h's `struct cudaFuncAttributes`.
#[repr(C)]
#[derive(Default)]
#[allow(non_snake_case)]
pub struct FuncAttributes {
    pub sharedSizeBytes: usize,
    pub constSizeBytes: usize,
    pub localSizeBytes: usize,
    pub maxThreadsPerBlock: i32,
    pub numRegs: i32,
    pub ptxVersion: i32,
    pub binaryVersion: i32,
    pub cacheModeCA: i32,
    pub maxDynamicSharedSizeBytes: i32,
    pub preferredShmemCarveout: i32,
    pub clusterDimMustBeSet: i32,
    pub requiredClusterWidth: i32,
    pub requiredClusterHeight: i32,
    pub requiredClusterDepth: i32,
    pub clusterSchedulingPolicyPreference: i32,
    pub nonPortableClusterSizeAllowed: i32,
    pub deviceNodeUpdateStatus: i32,
    pub sharedMemoryMode: i32,
    pub reserved: [i32; 14],
}

/// cudaFuncGetAttributes, from cuFuncGetAttribute (CU_FUNC_ATTRIBUTE_* 0..=17).
pub fn attributes(host_fn: usize) -> Res<FuncAttributes> {
    let f = registry::function(host_fn)?;
    let get = |a: i32| -> Res<i32> {
        let mut v = 0;
        check(d::cuFuncGetAttribute(&mut v, a, f))?;
        Ok(v)
    };
    let opt = |a: i32| get(a).unwrap_or(0);
    Ok(FuncAttributes {
        maxThreadsPerBlock: get(0)?,
        sharedSizeBytes: get(1)? as usize,
        constSizeBytes: get(2)? as usize,
        localSizeBytes: get(3)? as usize,
        numRegs: get(4)?,
        ptxVersion: get(5)?,
        binaryVersion: get(6)?,
        cacheModeCA: opt(7),
        maxDynamicSharedSizeBytes: opt(8),
        preferredShmemCarveout: opt(9),
        clusterDimMustBeSet: opt(10),
        requiredClusterWidth: opt(11),
        requiredClusterHeight: opt(12),
        requiredClusterDepth: opt(13),
        nonPortableClusterSizeAllowed: opt(14),
        clusterSchedulingPolicyPreference: opt(15),
        deviceNodeUpdateStatus: opt(16),
        sharedMemoryMode: opt(17),
        reserved: [0; 14],
    })
}

/// cudaFuncSetAttribute: cudaFuncAttribute 8..=15 are CU_FUNC_ATTRIBUTE_*'s numbers;
/// cudaFuncAttributeSharedMemoryMode (16) is the driver's 17.
pub fn set_attribute(host_fn: usize, attr: i32, value: i32) -> Res<()> {
    let a = match attr {
        8..=15 => attr,
        16 => 17,
        _ => return Err(error::INVALID_VALUE),
    };
    let f = registry::function(host_fn)?;
    check(d::cuFuncSetAttribute(f, a, value))
}

/// cudaFuncSetCacheConfig (cudaFuncCache is CUfunc_cache).
pub fn set_cache_config(host_fn: usize, config: i32) -> Res<()> {
    if !(0..=3).contains(&config) {
        return Err(error::INVALID_VALUE);
    }
    let f = registry::function(host_fn)?;
    check(d::cuFuncSetCacheConfig(f, config))
}

/// cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags.
pub fn max_active_blocks(host_fn: usize, block: i32, shared: usize, flags: u32) -> Res<i32> {
    let f = registry::function(host_fn)?;
    let mut n = 0;
    check(d::cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(&mut n, f, block, shared, flags))?;
    Ok(n)
}
