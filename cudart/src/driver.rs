//! The driver, found at run time: `dlopen("libcuda.so.1")`, then every entry point through
//! the public `cuGetProcAddress_v2` at CUDA 13.0's ABI (so `cuMemAlloc` is the `_v2`
//! entry point, as cuda.h's macros would pick). The same library therefore runs on the
//! emulated driver and on NVIDIA's. This module holds the function table and, with
//! `exports.rs`, the crate's unsafe code: each wrapper below calls the pointer the driver
//! handed out for that name, with cuda.h's signature for it.
//!
//! Handles (contexts, modules, functions, streams, events) travel as raw pointers;
//! device addresses as `u64` (CUdeviceptr). A missing driver makes every wrapper answer
//! CUDA_ERROR_NOT_INITIALIZED's neighbour [`NO_DRIVER`], which `error` maps to
//! cudaErrorInsufficientDriver.

use std::ffi::{c_char, c_void, CStr};
use std::sync::OnceLock;

/// CUresult.
pub type CuResult = i32;
/// A driver handle (CUcontext, CUmodule, CUfunction, CUstream, CUevent).
pub type Handle = *mut c_void;

/// The pseudo-result of a call when libcuda.so.1 could not be loaded (not a driver code).
pub const NO_DRIVER: CuResult = -1;
/// The pseudo-result of a call whose entry point this driver does not have.
pub const NO_ENTRY: CuResult = -2;

/// The CUDA version whose ABI every entry point is asked for (cuGetProcAddress_v2): at
/// 13.0, cuCtxSynchronize and cuCtxGetDevice are their `_v2` forms, which name the context
/// (NULL: the current one), and are declared so below.
const ABI_VERSION: i32 = 13000;

/// The cuda.h structures this runtime passes to the driver as they are, from the
/// workspace's one Rust copy of cuda.h (simtwin-abi: no code of the driver comes with it).
/// cudaMemsetParams has CUDA_MEMSET_NODE_PARAMS' layout.
pub use simtwin_abi::cuda::{
    CUDA_ARRAY3D_DESCRIPTOR as Array3DDesc, CUDA_MEMCPY2D as Memcpy2D, CUDA_MEMCPY3D as Memcpy3D,
    CUDA_MEMSET_NODE_PARAMS as MemsetNodeParams, CUDA_TEXTURE_DESC as TextureDesc,
};

/// CU_STREAM_LEGACY and CU_STREAM_PER_THREAD, the same values as cudaStreamLegacy and
/// cudaStreamPerThread.
pub const STREAM_LEGACY: usize = 1;
pub const STREAM_PER_THREAD: usize = 2;

/// CUlaunchConfig (cuda.h); its attributes are cudaLaunchAttribute's layout and numbers.
#[repr(C)]
pub struct LaunchConfig {
    pub grid: [u32; 3],
    pub block: [u32; 3],
    pub shared_mem_bytes: u32,
    pub stream: Handle,
    pub attrs: *mut c_void,
    pub num_attrs: u32,
}

/// CUmemLocation (cuda.h), the same layout as cudaMemLocation.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct MemLocation {
    pub kind: i32,
    pub id: i32,
}

/// CUDA_RESOURCE_DESC (cuda.h): the type, the union as words, the flags.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct ResourceDesc {
    pub res_type: u32,
    pub res: [u64; 16],
    pub flags: u32,
}

/// CUDA_KERNEL_NODE_PARAMS (cuda.h, the `_v2` layout cuGraphAddKernelNode takes at 12.0+).
#[repr(C)]
#[derive(Clone, Copy)]
pub struct KernelNodeParams {
    pub func: Handle,
    pub grid: [u32; 3],
    pub block: [u32; 3],
    pub shared_mem_bytes: u32,
    pub kernel_params: *mut *mut c_void,
    pub extra: *mut *mut c_void,
    pub kern: Handle,
    pub ctx: Handle,
}

/// CUDA_HOST_NODE_PARAMS (cuda.h), cudaHostNodeParams' layout.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct HostNodeParams {
    pub f: Option<HostFn>,
    pub user: *mut c_void,
}

pub type StreamCallback = unsafe extern "C" fn(Handle, i32, *mut c_void);
pub type HostFn = unsafe extern "C" fn(*mut c_void);

type GetProc = unsafe extern "C" fn(*const c_char, *mut *mut c_void, i32, u64, *mut i32) -> CuResult;

macro_rules! driver_api {
    ($( fn $name:ident ( $($arg:ident : $ty:ty),* $(,)? ); )*) => {
        /// The driver's entry points, each None when the driver does not have it.
        #[allow(non_snake_case)]
        struct Api {
            get: Option<GetProc>,
            $( $name: Option<unsafe extern "C" fn($($ty),*) -> CuResult>, )*
        }

        impl Api {
            fn resolve(get: Option<GetProc>) -> Api {
                Api { get, $( $name: get.and_then(|g| {
                    let name = concat!(stringify!($name), "\0");
                    let mut p: *mut c_void = std::ptr::null_mut();
                    let mut status = 0i32;
                    // SAFETY: cuGetProcAddress_v2's documented signature; the name is
                    // NUL-terminated and both outputs are locals.
                    let r = unsafe { g(name.as_ptr().cast(), &mut p, ABI_VERSION, 0, &mut status) };
                    // SAFETY: the driver handed out this pointer for this name at CUDA
                    // 13.0's ABI, whose signature is the one declared here (cuda.h).
                    (r == 0 && !p.is_null()).then(|| unsafe {
                        std::mem::transmute::<*mut c_void, unsafe extern "C" fn($($ty),*) -> CuResult>(p)
                    })
                }), )* }
            }
        }

        $(
            /// The driver's entry point of this name (cuda.h).
            #[allow(non_snake_case, clippy::too_many_arguments)]
            pub fn $name($($arg: $ty),*) -> CuResult {
                let Some(api) = api() else { return NO_DRIVER };
                match api.$name {
                    // SAFETY: the pointer is the driver's entry point for this name with
                    // this signature; pointer arguments are this crate's locals or the
                    // caller's pointers, which the driver validates as it does for any
                    // program (device addresses are range-checked by the driver).
                    Some(f) => unsafe { f($($arg),*) },
                    None => NO_ENTRY,
                }
            }
        )*
    };
}

driver_api! {
    fn cuInit(flags: u32);
    fn cuDriverGetVersion(v: *mut i32);
    fn cuDeviceGetCount(n: *mut i32);
    fn cuDeviceGetName(name: *mut c_char, len: i32, dev: i32);
    fn cuDeviceGetUuid(uuid: *mut u8, dev: i32);
    fn cuDeviceTotalMem(bytes: *mut usize, dev: i32);
    fn cuDeviceGetAttribute(v: *mut i32, attrib: i32, dev: i32);
    fn cuDeviceCanAccessPeer(can: *mut i32, dev: i32, peer: i32);
    fn cuDevicePrimaryCtxRetain(ctx: *mut Handle, dev: i32);
    fn cuDevicePrimaryCtxRelease(dev: i32);
    fn cuDevicePrimaryCtxReset(dev: i32);
    fn cuDevicePrimaryCtxSetFlags(dev: i32, flags: u32);
    fn cuDevicePrimaryCtxGetState(dev: i32, flags: *mut u32, active: *mut i32);
    fn cuCtxGetCurrent(ctx: *mut Handle);
    fn cuCtxSetCurrent(ctx: Handle);
    fn cuCtxGetDevice(dev: *mut i32, ctx: Handle);
    fn cuCtxSynchronize(ctx: Handle);
    fn cuCtxGetStreamPriorityRange(least: *mut i32, greatest: *mut i32);
    fn cuCtxSetLimit(limit: i32, value: usize);
    fn cuCtxGetLimit(value: *mut usize, limit: i32);
    fn cuModuleLoadData(m: *mut Handle, image: *const c_void);
    fn cuModuleUnload(m: Handle);
    fn cuModuleGetFunction(f: *mut Handle, m: Handle, name: *const c_char);
    fn cuModuleGetGlobal(dptr: *mut u64, bytes: *mut usize, m: Handle, name: *const c_char);
    fn cuFuncGetAttribute(v: *mut i32, attrib: i32, f: Handle);
    fn cuFuncSetAttribute(f: Handle, attrib: i32, v: i32);
    fn cuFuncSetCacheConfig(f: Handle, config: i32);
    fn cuLaunchKernel(
        f: Handle, gx: u32, gy: u32, gz: u32, bx: u32, by: u32, bz: u32, smem: u32,
        stream: Handle, params: *mut *mut c_void, extra: *mut *mut c_void,
    );
    fn cuLaunchKernelEx(config: *const LaunchConfig, f: Handle, params: *mut *mut c_void, extra: *mut *mut c_void);
    fn cuLaunchCooperativeKernel(
        f: Handle, gx: u32, gy: u32, gz: u32, bx: u32, by: u32, bz: u32, smem: u32,
        stream: Handle, params: *mut *mut c_void,
    );
    fn cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(n: *mut i32, f: Handle, block: i32, smem: usize, flags: u32);
    fn cuMemAlloc(dptr: *mut u64, size: usize);
    fn cuMemAllocPitch(dptr: *mut u64, pitch: *mut usize, width: usize, height: usize, elem: u32);
    fn cuMemFree(dptr: u64);
    fn cuMemHostAlloc(p: *mut *mut c_void, size: usize, flags: u32);
    fn cuMemFreeHost(p: *mut c_void);
    fn cuMemAllocManaged(dptr: *mut u64, size: usize, flags: u32);
    fn cuMemHostRegister(p: *mut c_void, size: usize, flags: u32);
    fn cuMemHostUnregister(p: *mut c_void);
    fn cuMemHostGetDevicePointer(dptr: *mut u64, p: *mut c_void, flags: u32);
    fn cuMemGetInfo(free: *mut usize, total: *mut usize);
    fn cuMemcpy(dst: u64, src: u64, n: usize);
    fn cuMemcpyAsync(dst: u64, src: u64, n: usize, stream: Handle);
    fn cuMemcpyHtoD(dst: u64, src: *const c_void, n: usize);
    fn cuMemcpyDtoH(dst: *mut c_void, src: u64, n: usize);
    fn cuMemcpyDtoD(dst: u64, src: u64, n: usize);
    fn cuMemcpyHtoDAsync(dst: u64, src: *const c_void, n: usize, stream: Handle);
    fn cuMemcpyDtoHAsync(dst: *mut c_void, src: u64, n: usize, stream: Handle);
    fn cuMemcpyDtoDAsync(dst: u64, src: u64, n: usize, stream: Handle);
    fn cuMemcpy2D(p: *const Memcpy2D);
    fn cuMemcpy2DAsync(p: *const Memcpy2D, stream: Handle);
    fn cuMemsetD8(dst: u64, v: u8, n: usize);
    fn cuMemsetD8Async(dst: u64, v: u8, n: usize, stream: Handle);
    fn cuMemsetD2D8(dst: u64, pitch: usize, v: u8, width: usize, height: usize);
    fn cuMemsetD2D8Async(dst: u64, pitch: usize, v: u8, width: usize, height: usize, stream: Handle);
    fn cuMemPrefetchAsync(dptr: u64, count: usize, location: MemLocation, flags: u32, stream: Handle);
    fn cuPointerGetAttribute(data: *mut c_void, attrib: i32, ptr: u64);
    fn cuStreamCreate(s: *mut Handle, flags: u32);
    fn cuStreamCreateWithPriority(s: *mut Handle, flags: u32, priority: i32);
    fn cuStreamDestroy(s: Handle);
    fn cuStreamSynchronize(s: Handle);
    fn cuStreamQuery(s: Handle);
    fn cuStreamWaitEvent(s: Handle, e: Handle, flags: u32);
    fn cuStreamAddCallback(s: Handle, cb: StreamCallback, user: *mut c_void, flags: u32);
    fn cuLaunchHostFunc(s: Handle, f: HostFn, user: *mut c_void);
    fn cuStreamGetFlags(s: Handle, flags: *mut u32);
    fn cuStreamGetPriority(s: Handle, priority: *mut i32);
    fn cuEventCreate(e: *mut Handle, flags: u32);
    fn cuEventRecord(e: Handle, s: Handle);
    fn cuEventRecordWithFlags(e: Handle, s: Handle, flags: u32);
    fn cuEventSynchronize(e: Handle);
    fn cuEventQuery(e: Handle);
    fn cuEventElapsedTime(ms: *mut f32, start: Handle, end: Handle);
    fn cuEventDestroy(e: Handle);
    fn cuMemAllocAsync(dptr: *mut u64, size: usize, stream: Handle);
    fn cuMemFreeAsync(dptr: u64, stream: Handle);
    fn cuStreamBeginCapture(s: Handle, mode: u32);
    fn cuStreamEndCapture(s: Handle, graph: *mut Handle);
    fn cuStreamIsCapturing(s: Handle, status: *mut u32);
    fn cuGraphInstantiateWithFlags(exec: *mut Handle, graph: Handle, flags: u64);
    fn cuGraphLaunch(exec: Handle, s: Handle);
    fn cuGraphExecDestroy(exec: Handle);
    fn cuGraphDestroy(graph: Handle);
    fn cuLinkCreate(n: u32, options: *mut i32, values: *mut *mut c_void, state: *mut Handle);
    fn cuLinkAddData(
        state: Handle, kind: u32, data: *mut c_void, size: usize, name: *const c_char,
        n: u32, options: *mut i32, values: *mut *mut c_void,
    );
    fn cuLinkComplete(state: Handle, image: *mut *mut c_void, size: *mut usize);
    fn cuLinkDestroy(state: Handle);
    fn cuGraphCreate(graph: *mut Handle, flags: u32);
    fn cuGraphClone(clone: *mut Handle, graph: Handle);
    fn cuGraphGetNodes(graph: Handle, nodes: *mut Handle, n: *mut usize);
    fn cuGraphAddKernelNode(node: *mut Handle, graph: Handle, deps: *const Handle, n: usize, p: *const KernelNodeParams);
    fn cuGraphAddMemsetNode(node: *mut Handle, graph: Handle, deps: *const Handle, n: usize, p: *const MemsetNodeParams, ctx: Handle);
    fn cuGraphAddMemcpyNode(node: *mut Handle, graph: Handle, deps: *const Handle, n: usize, p: *const Memcpy3D, ctx: Handle);
    fn cuGraphAddHostNode(node: *mut Handle, graph: Handle, deps: *const Handle, n: usize, p: *const HostNodeParams);
    fn cuGraphAddEmptyNode(node: *mut Handle, graph: Handle, deps: *const Handle, n: usize);
    fn cuGraphExecKernelNodeSetParams(exec: Handle, node: Handle, p: *const KernelNodeParams);
    fn cuGraphExecUpdate(exec: Handle, graph: Handle, info: *mut c_void);
    fn cuProfilerStart();
    fn cuProfilerStop();
    fn cuArray3DCreate(a: *mut Handle, desc: *const Array3DDesc);
    fn cuArrayDestroy(a: Handle);
    fn cuArray3DGetDescriptor(desc: *mut Array3DDesc, a: Handle);
    fn cuTexObjectCreate(t: *mut u64, res: *const ResourceDesc, tex: *const TextureDesc, view: *const c_void);
    fn cuTexObjectDestroy(t: u64);
    fn cuSurfObjectCreate(s: *mut u64, res: *const ResourceDesc);
    fn cuSurfObjectDestroy(s: u64);
    fn cuMemcpy3D(p: *const Memcpy3D);
    fn cuMemcpy3DAsync(p: *const Memcpy3D, stream: Handle);
}

/// The table, resolved once; None when libcuda.so.1 cannot be loaded.
fn api() -> Option<&'static Api> {
    static API: OnceLock<Option<Api>> = OnceLock::new();
    API.get_or_init(|| {
        // SAFETY: dlopen/dlsym with NUL-terminated names; the handle is kept for the life
        // of the process (never dlclosed), so the pointers stay valid.
        let get = unsafe {
            let h = libc::dlopen(c"libcuda.so.1".as_ptr(), libc::RTLD_NOW | libc::RTLD_GLOBAL);
            if h.is_null() {
                let why = libc::dlerror();
                let why = if why.is_null() { "".into() } else { CStr::from_ptr(why).to_string_lossy() };
                eprintln!("simtwin libcudart: cannot load libcuda.so.1 ({why}); every runtime call answers cudaErrorInsufficientDriver");
                return None;
            }
            let p = libc::dlsym(h, c"cuGetProcAddress_v2".as_ptr());
            if p.is_null() {
                eprintln!("simtwin libcudart: libcuda.so.1 has no cuGetProcAddress_v2 (a driver older than CUDA 12.0); every runtime call answers cudaErrorInsufficientDriver");
                return None;
            }
            std::mem::transmute::<*mut c_void, GetProc>(p)
        };
        Some(Api::resolve(Some(get)))
    })
    .as_ref()
}

/// cuGetProcAddress_v2 itself, for cudaGetDriverEntryPoint: (result, the entry point's
/// address or 0, the query status).
pub fn get_proc_address(name: &CStr, version: i32, flags: u64) -> (CuResult, usize, i32) {
    let Some(get) = api().and_then(|a| a.get) else { return (NO_DRIVER, 0, 1) };
    let (mut p, mut status) = (std::ptr::null_mut(), 0i32);
    // SAFETY: cuGetProcAddress_v2's documented signature; the name is NUL-terminated (a
    // CStr) and both outputs are locals.
    let r = unsafe { get(name.as_ptr(), &mut p, version, flags, &mut status) };
    (r, p as usize, status)
}

/// Whether libcuda.so.1 was found (loading it on first use).
pub fn loaded() -> bool {
    api().is_some()
}

/// Stores a managed variable's device address into the host pointer nvcc's code reads it
/// through (`__cudaRegisterManagedVar`'s `hostVarPtrAddress`, registered by the program).
pub fn store_host_pointer(slot: usize, value: usize) {
    if slot == 0 {
        return;
    }
    // SAFETY: `slot` is the address of the pointer-sized host variable nvcc's generated
    // code registered for a managed variable (`__cudaRegisterManagedVar`); it lives as
    // long as the program's image.
    unsafe { (slot as *mut usize).write_unaligned(value) };
}
