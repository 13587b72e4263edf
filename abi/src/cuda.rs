//! CUDA driver API types and constants, as the public `cuda.h` defines them (values are
//! the documented ABI; only what the emulated driver uses is listed).

#![allow(non_camel_case_types, missing_docs)] // cuda.h's names; cuda.h documents them

use std::ffi::c_void;

pub type CUresult = u32;
pub type CUdevice = i32;
pub type CUdeviceptr = u64;
pub type CUcontext = *mut c_void;
pub type CUmodule = *mut c_void;
pub type CUfunction = *mut c_void;
pub type CUstream = *mut c_void;
pub type CUevent = *mut c_void;
pub type CUmemoryPool = *mut c_void;
pub type CUlinkState = *mut c_void;
pub type CUlibrary = *mut c_void;
pub type CUkernel = *mut c_void;
pub type CUhostFn = Option<unsafe extern "C" fn(user_data: *mut c_void)>;
pub type CUstreamCallback = Option<unsafe extern "C" fn(stream: CUstream, status: CUresult, user_data: *mut c_void)>;

pub const CUDA_SUCCESS: CUresult = 0;
pub const CUDA_ERROR_INVALID_VALUE: CUresult = 1;
/// An allocation could not be made (or its size does not fit in memory).
pub const CUDA_ERROR_OUT_OF_MEMORY: CUresult = 2;
pub const CUDA_ERROR_NOT_INITIALIZED: CUresult = 3;
pub const CUDA_ERROR_NO_DEVICE: CUresult = 100;
pub const CUDA_ERROR_INVALID_DEVICE: CUresult = 101;
pub const CUDA_ERROR_INVALID_CONTEXT: CUresult = 201;
pub const CUDA_ERROR_NO_BINARY_FOR_GPU: CUresult = 209;
pub const CUDA_ERROR_UNSUPPORTED_LIMIT: CUresult = 215;
/// PTX that does not parse (PTX mode).
pub const CUDA_ERROR_INVALID_PTX: CUresult = 218;
/// No C++ compiler for PTX mode.
pub const CUDA_ERROR_JIT_COMPILER_NOT_FOUND: CUresult = 221;
pub const CUDA_ERROR_UNSUPPORTED_PTX_VERSION: CUresult = 222;
pub const CUDA_ERROR_FILE_NOT_FOUND: CUresult = 301;
pub const CUDA_ERROR_INVALID_HANDLE: CUresult = 400;
pub const CUDA_ERROR_NOT_FOUND: CUresult = 500;
pub const CUDA_ERROR_NOT_READY: CUresult = 600;
/// A kernel touched memory outside every allocation (sticky for the context).
pub const CUDA_ERROR_ILLEGAL_ADDRESS: CUresult = 700;
pub const CUDA_ERROR_MISALIGNED_ADDRESS: CUresult = 716;
/// A launch needs more registers per block than the device has, or the executor could
/// not allocate its fibers' stacks.
pub const CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES: CUresult = 701;
/// A launch ran past the watchdog without progress (sticky).
pub const CUDA_ERROR_LAUNCH_TIMEOUT: CUresult = 702;
pub const CUDA_ERROR_CONTEXT_IS_DESTROYED: CUresult = 709;
/// A device-side `assert` failed (sticky).
pub const CUDA_ERROR_ASSERT: CUresult = 710;
pub const CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED: CUresult = 712;
pub const CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED: CUresult = 713;
/// A kernel could not go on (trap, deadlock, a hazard under EMU_CUDA_HAZARDS=error; sticky).
pub const CUDA_ERROR_LAUNCH_FAILED: CUresult = 719;
pub const CUDA_ERROR_NOT_PERMITTED: CUresult = 800;
pub const CUDA_ERROR_NOT_SUPPORTED: CUresult = 801;
pub const CUDA_ERROR_UNKNOWN: CUresult = 999;

/// cuLaunchKernel's `extra` markers.
pub const CU_LAUNCH_PARAM_END: usize = 0;
pub const CU_LAUNCH_PARAM_BUFFER_POINTER: usize = 1;
pub const CU_LAUNCH_PARAM_BUFFER_SIZE: usize = 2;

/// Special stream handles.
pub const CU_STREAM_LEGACY: usize = 0x1;
pub const CU_STREAM_PER_THREAD: usize = 0x2;
pub const CU_STREAM_NON_BLOCKING: u32 = 0x1;

pub const CU_EVENT_BLOCKING_SYNC: u32 = 0x1;
pub const CU_EVENT_DISABLE_TIMING: u32 = 0x2;
pub const CU_EVENT_INTERPROCESS: u32 = 0x4;

pub const CU_MEMHOSTALLOC_PORTABLE: u32 = 0x1;
pub const CU_MEMHOSTALLOC_DEVICEMAP: u32 = 0x2;
pub const CU_MEMHOSTALLOC_WRITECOMBINED: u32 = 0x4;

pub const CU_GET_PROC_ADDRESS_LEGACY_STREAM: u64 = 1;
pub const CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM: u64 = 2;
pub const CU_GET_PROC_ADDRESS_SUCCESS: i32 = 0;
pub const CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND: i32 = 1;
pub const CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT: i32 = 2;

/// CUmemorytype
pub const CU_MEMORYTYPE_HOST: u32 = 1;
pub const CU_MEMORYTYPE_DEVICE: u32 = 2;
pub const CU_MEMORYTYPE_ARRAY: u32 = 3;
pub const CU_MEMORYTYPE_UNIFIED: u32 = 4;

/// CUpointer_attribute (the ones answered).
pub const CU_POINTER_ATTRIBUTE_CONTEXT: u32 = 1;
pub const CU_POINTER_ATTRIBUTE_MEMORY_TYPE: u32 = 2;
pub const CU_POINTER_ATTRIBUTE_DEVICE_POINTER: u32 = 3;
pub const CU_POINTER_ATTRIBUTE_HOST_POINTER: u32 = 4;
pub const CU_POINTER_ATTRIBUTE_SYNC_MEMOPS: u32 = 6;
pub const CU_POINTER_ATTRIBUTE_BUFFER_ID: u32 = 7;
pub const CU_POINTER_ATTRIBUTE_IS_MANAGED: u32 = 8;
pub const CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL: u32 = 9;
pub const CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE: u32 = 10;
pub const CU_POINTER_ATTRIBUTE_RANGE_START_ADDR: u32 = 11;
pub const CU_POINTER_ATTRIBUTE_RANGE_SIZE: u32 = 12;
pub const CU_POINTER_ATTRIBUTE_MAPPED: u32 = 13;
pub const CU_POINTER_ATTRIBUTE_ALLOWED_HANDLE_TYPES: u32 = 14;
pub const CU_POINTER_ATTRIBUTE_IS_GPU_DIRECT_RDMA_CAPABLE: u32 = 15;
pub const CU_POINTER_ATTRIBUTE_ACCESS_FLAGS: u32 = 16;
pub const CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE: u32 = 17;
pub const CU_POINTER_ATTRIBUTE_MAPPING_SIZE: u32 = 18;
pub const CU_POINTER_ATTRIBUTE_MAPPING_BASE_ADDR: u32 = 19;
pub const CU_POINTER_ATTRIBUTE_MEMORY_BLOCK_ID: u32 = 20;

/// CUfunction_attribute
pub const CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK: i32 = 0;
pub const CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES: i32 = 1;
pub const CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES: i32 = 2;
pub const CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES: i32 = 3;
pub const CU_FUNC_ATTRIBUTE_NUM_REGS: i32 = 4;
pub const CU_FUNC_ATTRIBUTE_PTX_VERSION: i32 = 5;
pub const CU_FUNC_ATTRIBUTE_BINARY_VERSION: i32 = 6;
pub const CU_FUNC_ATTRIBUTE_CACHE_MODE_CA: i32 = 7;
pub const CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES: i32 = 8;
pub const CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT: i32 = 9;

/// CUlimit
pub const CU_LIMIT_STACK_SIZE: u32 = 0;
pub const CU_LIMIT_PRINTF_FIFO_SIZE: u32 = 1;
pub const CU_LIMIT_MALLOC_HEAP_SIZE: u32 = 2;
pub const CU_LIMIT_DEV_RUNTIME_SYNC_DEPTH: u32 = 3;
pub const CU_LIMIT_DEV_RUNTIME_PENDING_LAUNCH_COUNT: u32 = 4;
pub const CU_LIMIT_MAX_L2_FETCH_GRANULARITY: u32 = 5;
pub const CU_LIMIT_PERSISTING_L2_CACHE_SIZE: u32 = 6;

/// CUmemPool_attribute
pub const CU_MEMPOOL_ATTR_RELEASE_THRESHOLD: i32 = 4;
pub const CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT: i32 = 5;
pub const CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH: i32 = 6;
pub const CU_MEMPOOL_ATTR_USED_MEM_CURRENT: i32 = 7;
pub const CU_MEMPOOL_ATTR_USED_MEM_HIGH: i32 = 8;

/// `CUDA_MEMCPY2D` (v2 layout).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct CUDA_MEMCPY2D {
    pub src_x_in_bytes: usize,
    pub src_y: usize,
    pub src_memory_type: u32,
    pub src_host: *const c_void,
    pub src_device: CUdeviceptr,
    pub src_array: *mut c_void,
    pub src_pitch: usize,
    pub dst_x_in_bytes: usize,
    pub dst_y: usize,
    pub dst_memory_type: u32,
    pub dst_host: *mut c_void,
    pub dst_device: CUdeviceptr,
    pub dst_array: *mut c_void,
    pub dst_pitch: usize,
    pub width_in_bytes: usize,
    pub height: usize,
}

/// `CUuuid`
#[repr(C)]
#[derive(Clone, Copy)]
pub struct CUuuid {
    pub bytes: [u8; 16],
}

/// `CUlaunchConfig` for cuLaunchKernelEx.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct CUlaunchConfig {
    pub grid_dim_x: u32,
    pub grid_dim_y: u32,
    pub grid_dim_z: u32,
    pub block_dim_x: u32,
    pub block_dim_y: u32,
    pub block_dim_z: u32,
    pub shared_mem_bytes: u32,
    pub h_stream: CUstream,
    pub attrs: *mut CUlaunchAttribute,
    pub num_attrs: u32,
}

/// `CUlaunchAttribute`: id + a 64-byte value union (8-byte aligned, padded).
#[repr(C)]
#[derive(Clone, Copy)]
pub struct CUlaunchAttribute {
    pub id: u32,
    pub pad: [u8; 4],
    pub value: [u64; 8],
}

/// `CUctxCreateParams` (cuCtxCreate_v4).
#[repr(C)]
#[derive(Clone, Copy)]
pub struct CUctxCreateParams {
    pub exec_affinity_params: *mut c_void,
    pub num_exec_affinity_params: i32,
    pub cig_params: *mut c_void,
}

/// CUmemGenericAllocationHandle: a physical allocation of the virtual-memory API.
pub type CUmemGenericAllocationHandle = u64;

/// CUmemLocationType
pub const CU_MEM_LOCATION_TYPE_DEVICE: i32 = 1;
/// CUmemAllocationType
pub const CU_MEM_ALLOCATION_TYPE_PINNED: i32 = 1;
/// CUmemAllocationHandleType
pub const CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR: i32 = 1;
/// CUmemAccess_flags
pub const CU_MEM_ACCESS_FLAGS_PROT_NONE: i32 = 0;
pub const CU_MEM_ACCESS_FLAGS_PROT_READ: i32 = 1;
pub const CU_MEM_ACCESS_FLAGS_PROT_READWRITE: i32 = 3;

/// `CUmemLocation`: a location type and an id (device ordinal, NUMA node).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CUmemLocation {
    pub type_: i32,
    pub id: i32,
}

/// `CUmemAllocationProp`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct CUmemAllocationProp {
    pub type_: i32,
    pub requested_handle_types: i32,
    pub location: CUmemLocation,
    pub win32_handle_meta_data: *mut c_void,
    pub compression_type: u8,
    pub gpu_direct_rdma_capable: u8,
    pub usage: u16,
    pub reserved: [u8; 4],
}

/// `CUmemAccessDesc`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct CUmemAccessDesc {
    pub location: CUmemLocation,
    pub flags: i32,
}

/// `CUdevprop` (legacy device properties).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct CUdevprop {
    pub max_threads_per_block: i32,
    pub max_threads_dim: [i32; 3],
    pub max_grid_size: [i32; 3],
    pub shared_mem_per_block: i32,
    pub total_constant_memory: i32,
    pub simd_width: i32,
    pub mem_pitch: i32,
    pub regs_per_block: i32,
    pub clock_rate: i32,
    pub texture_align: i32,
}

/// `CUDA_ARRAY_DESCRIPTOR` (v2).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct CUDA_ARRAY_DESCRIPTOR {
    pub width: usize,
    pub height: usize,
    pub format: u32,
    pub num_channels: u32,
}

/// `CUDA_ARRAY3D_DESCRIPTOR` (v2).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct CUDA_ARRAY3D_DESCRIPTOR {
    pub width: usize,
    pub height: usize,
    pub depth: usize,
    pub format: u32,
    pub num_channels: u32,
    pub flags: u32,
}

/// `CUDA_MEMCPY3D` (v2).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct CUDA_MEMCPY3D {
    pub src_x_in_bytes: usize,
    pub src_y: usize,
    pub src_z: usize,
    pub src_lod: usize,
    pub src_memory_type: u32,
    pub src_host: *const c_void,
    pub src_device: CUdeviceptr,
    pub src_array: *mut c_void,
    pub reserved0: *mut c_void,
    pub src_pitch: usize,
    pub src_height: usize,
    pub dst_x_in_bytes: usize,
    pub dst_y: usize,
    pub dst_z: usize,
    pub dst_lod: usize,
    pub dst_memory_type: u32,
    pub dst_host: *mut c_void,
    pub dst_device: CUdeviceptr,
    pub dst_array: *mut c_void,
    pub reserved1: *mut c_void,
    pub dst_pitch: usize,
    pub dst_height: usize,
    pub width_in_bytes: usize,
    pub height: usize,
    pub depth: usize,
}

/// `CUDA_RESOURCE_DESC`: the type, the 128-byte union as words, flags.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct CUDA_RESOURCE_DESC {
    pub res_type: u32,
    pub pad: u32,
    pub res: [u64; 16],
    pub flags: u32,
    pub pad2: u32,
}

/// `CUDA_TEXTURE_DESC`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct CUDA_TEXTURE_DESC {
    pub address_mode: [u32; 3],
    pub filter_mode: u32,
    pub flags: u32,
    pub max_anisotropy: u32,
    pub mipmap_filter_mode: u32,
    pub mipmap_level_bias: f32,
    pub min_mipmap_level_clamp: f32,
    pub max_mipmap_level_clamp: f32,
    pub border_color: [f32; 4],
    pub reserved: [i32; 12],
}

/// `CUDA_RESOURCE_VIEW_DESC`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct CUDA_RESOURCE_VIEW_DESC {
    pub format: u32,
    pub width: usize,
    pub height: usize,
    pub depth: usize,
    pub first_mipmap_level: u32,
    pub last_mipmap_level: u32,
    pub first_layer: u32,
    pub last_layer: u32,
    pub reserved: [u32; 16],
}
