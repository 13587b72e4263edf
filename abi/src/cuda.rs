//! The CUDA driver API's result codes, types, constants and structs as the pinned
//! toolkit's `cuda.h` defines them: the one list of every crate (the emulated driver;
//! the conformance runner includes this file). Every result code of cuda.h is here;
//! of the rest, what the emulated driver uses. tests/cuda_h.rs checks the codes, and the
//! size and every field offset of each struct, against cuda.h.

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

/// Declares every `CUresult` of cuda.h once: a constant each, and [`RESULTS`].
macro_rules! results {
    ($($(#[$doc:meta])* $name:ident = $code:literal $(, $desc:literal)?;)*) => {
        $($(#[$doc])* pub const $name: CUresult = $code;)*
        /// Every `CUresult` of cuda.h, in its order: (code, name, the driver's description
        /// where it is recorded here), NUL-terminated so that cuGetErrorName and
        /// cuGetErrorString hand them out as C strings.
        pub static RESULTS: &[(CUresult, &str, Option<&str>)] = &[$(($code, concat!(stringify!($name), "\0"), results!(@desc $($desc)?))),*];
    };
    (@desc $d:literal) => { Some(concat!($d, "\0")) };
    (@desc) => { None };
}

results! {
    CUDA_SUCCESS = 0, "no error";
    CUDA_ERROR_INVALID_VALUE = 1, "invalid argument";
    /// An allocation could not be made (or its size does not fit in memory).
    CUDA_ERROR_OUT_OF_MEMORY = 2, "out of memory";
    CUDA_ERROR_NOT_INITIALIZED = 3, "initialization error";
    CUDA_ERROR_DEINITIALIZED = 4, "driver shutting down";
    CUDA_ERROR_PROFILER_DISABLED = 5, "profiler disabled while using external profiling tool";
    CUDA_ERROR_PROFILER_NOT_INITIALIZED = 6, "profiler not initialized: call cudaProfilerInitialize()";
    CUDA_ERROR_PROFILER_ALREADY_STARTED = 7, "profiler already started";
    CUDA_ERROR_PROFILER_ALREADY_STOPPED = 8, "profiler already stopped";
    CUDA_ERROR_STUB_LIBRARY = 34, "CUDA driver is a stub library";
    CUDA_ERROR_CALL_REQUIRES_NEWER_DRIVER = 36;
    CUDA_ERROR_DEVICE_UNAVAILABLE = 46, "CUDA-capable device(s) is/are busy or unavailable";
    CUDA_ERROR_MULTICAST_RESOURCE_FULL = 47;
    CUDA_ERROR_NO_DEVICE = 100, "no CUDA-capable device is detected";
    CUDA_ERROR_INVALID_DEVICE = 101, "invalid device ordinal";
    CUDA_ERROR_DEVICE_NOT_LICENSED = 102, "device doesn't have valid Grid license";
    CUDA_ERROR_INVALID_IMAGE = 200, "device kernel image is invalid";
    CUDA_ERROR_INVALID_CONTEXT = 201, "invalid device context";
    CUDA_ERROR_CONTEXT_ALREADY_CURRENT = 202, "context already current";
    CUDA_ERROR_MAP_FAILED = 205, "mapping of buffer object failed";
    CUDA_ERROR_UNMAP_FAILED = 206, "unmapping of buffer object failed";
    CUDA_ERROR_ARRAY_IS_MAPPED = 207, "array is mapped";
    CUDA_ERROR_ALREADY_MAPPED = 208, "resource already mapped";
    CUDA_ERROR_NO_BINARY_FOR_GPU = 209, "no kernel image is available for execution on the device";
    CUDA_ERROR_ALREADY_ACQUIRED = 210, "resource already acquired";
    CUDA_ERROR_NOT_MAPPED = 211, "resource not mapped";
    CUDA_ERROR_NOT_MAPPED_AS_ARRAY = 212, "resource not mapped as array";
    CUDA_ERROR_NOT_MAPPED_AS_POINTER = 213, "resource not mapped as pointer";
    CUDA_ERROR_ECC_UNCORRECTABLE = 214, "uncorrectable ECC error encountered";
    CUDA_ERROR_UNSUPPORTED_LIMIT = 215, "limit is not supported on this architecture";
    CUDA_ERROR_CONTEXT_ALREADY_IN_USE = 216, "exclusive-thread device already in use by a different thread";
    CUDA_ERROR_PEER_ACCESS_UNSUPPORTED = 217, "peer access is not supported between these two devices";
    /// PTX that does not parse (PTX mode).
    CUDA_ERROR_INVALID_PTX = 218, "a PTX JIT compilation failed";
    CUDA_ERROR_INVALID_GRAPHICS_CONTEXT = 219, "invalid OpenGL or DirectX context";
    CUDA_ERROR_NVLINK_UNCORRECTABLE = 220, "uncorrectable NVLink error detected during the execution";
    /// No C++ compiler for PTX mode.
    CUDA_ERROR_JIT_COMPILER_NOT_FOUND = 221, "PTX JIT compiler library not found";
    CUDA_ERROR_UNSUPPORTED_PTX_VERSION = 222, "the provided PTX was compiled with an unsupported toolchain.";
    CUDA_ERROR_JIT_COMPILATION_DISABLED = 223, "PTX JIT compilation was disabled";
    CUDA_ERROR_UNSUPPORTED_EXEC_AFFINITY = 224, "the provided execution affinity is not supported";
    CUDA_ERROR_UNSUPPORTED_DEVSIDE_SYNC = 225, "the provided PTX contains unsupported call to cudaDeviceSynchronize";
    CUDA_ERROR_CONTAINED = 226;
    CUDA_ERROR_INSUFFICIENT_LOADER_VERSION = 227;
    CUDA_ERROR_INVALID_SOURCE = 300, "device kernel image is invalid";
    CUDA_ERROR_FILE_NOT_FOUND = 301, "file not found";
    CUDA_ERROR_SHARED_OBJECT_SYMBOL_NOT_FOUND = 302, "shared object symbol not found";
    CUDA_ERROR_SHARED_OBJECT_INIT_FAILED = 303, "shared object initialization failed";
    CUDA_ERROR_OPERATING_SYSTEM = 304, "OS call failed or operation not supported on this OS";
    CUDA_ERROR_INVALID_HANDLE = 400, "invalid resource handle";
    CUDA_ERROR_ILLEGAL_STATE = 401, "the operation cannot be performed in the present state";
    CUDA_ERROR_LOSSY_QUERY = 402, "attempted introspection would be semantically lossy";
    CUDA_ERROR_NOT_FOUND = 500, "named symbol not found";
    CUDA_ERROR_NOT_READY = 600, "device not ready";
    /// A kernel touched memory outside every allocation (sticky for the context).
    CUDA_ERROR_ILLEGAL_ADDRESS = 700, "an illegal memory access was encountered";
    /// A launch needs more registers per block than the device has, or the executor could
    /// not allocate its fibers' stacks.
    CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES = 701, "too many resources requested for launch";
    /// A launch ran past the watchdog without progress (sticky).
    CUDA_ERROR_LAUNCH_TIMEOUT = 702, "the launch timed out and was terminated";
    CUDA_ERROR_LAUNCH_INCOMPATIBLE_TEXTURING = 703, "launch uses incompatible texturing mode";
    CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED = 704, "peer access is already enabled";
    CUDA_ERROR_PEER_ACCESS_NOT_ENABLED = 705, "peer access has not been enabled";
    CUDA_ERROR_PRIMARY_CONTEXT_ACTIVE = 708, "cannot set while device is active in this process";
    CUDA_ERROR_CONTEXT_IS_DESTROYED = 709, "context is destroyed";
    /// A device-side `assert` failed (sticky).
    CUDA_ERROR_ASSERT = 710, "device-side assert triggered";
    CUDA_ERROR_TOO_MANY_PEERS = 711, "peer mapping resources exhausted";
    CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED = 712, "part or all of the requested memory range is already mapped";
    CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED = 713, "pointer does not correspond to a registered memory region";
    CUDA_ERROR_HARDWARE_STACK_ERROR = 714, "hardware stack error";
    CUDA_ERROR_ILLEGAL_INSTRUCTION = 715, "an illegal instruction was encountered";
    CUDA_ERROR_MISALIGNED_ADDRESS = 716, "misaligned address";
    CUDA_ERROR_INVALID_ADDRESS_SPACE = 717, "operation not supported on global/shared address space";
    CUDA_ERROR_INVALID_PC = 718, "invalid program counter";
    /// A kernel could not go on (trap, deadlock, a hazard under EMU_CUDA_HAZARDS=error; sticky).
    CUDA_ERROR_LAUNCH_FAILED = 719, "unspecified launch failure";
    CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE = 720, "too many blocks in cooperative launch";
    CUDA_ERROR_TENSOR_MEMORY_LEAK = 721, "tensor memory not completely freed";
    CUDA_ERROR_NOT_PERMITTED = 800, "operation not permitted";
    CUDA_ERROR_NOT_SUPPORTED = 801, "operation not supported";
    CUDA_ERROR_SYSTEM_NOT_READY = 802, "system not yet initialized";
    CUDA_ERROR_SYSTEM_DRIVER_MISMATCH = 803, "system has unsupported display driver / cuda driver combination";
    CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE = 804, "forward compatibility was attempted on non supported HW";
    CUDA_ERROR_MPS_CONNECTION_FAILED = 805, "MPS client failed to connect to the MPS control daemon or the MPS server";
    CUDA_ERROR_MPS_RPC_FAILURE = 806, "the remote procedural call between the MPS server and the MPS client failed";
    CUDA_ERROR_MPS_SERVER_NOT_READY = 807, "MPS server is not ready to accept new MPS client requests";
    CUDA_ERROR_MPS_MAX_CLIENTS_REACHED = 808, "the hardware resources required to create MPS client have been exhausted";
    CUDA_ERROR_MPS_MAX_CONNECTIONS_REACHED = 809, "the hardware resources required to support device connections have been exhausted";
    CUDA_ERROR_MPS_CLIENT_TERMINATED = 810, "the MPS client has been terminated by the server";
    CUDA_ERROR_CDP_NOT_SUPPORTED = 811, "is using CUDA Dynamic Parallelism, but the current configuration, like MPS, does not support it";
    CUDA_ERROR_CDP_VERSION_MISMATCH = 812, "unsupported interaction between different versions of CUDA Dynamic Parallelism";
    CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED = 900, "operation not permitted when stream is capturing";
    CUDA_ERROR_STREAM_CAPTURE_INVALIDATED = 901, "operation failed due to a previous error during capture";
    CUDA_ERROR_STREAM_CAPTURE_MERGE = 902, "operation would result in a merge of separate capture sequences";
    CUDA_ERROR_STREAM_CAPTURE_UNMATCHED = 903, "capture was not ended in the same stream as it began";
    CUDA_ERROR_STREAM_CAPTURE_UNJOINED = 904, "capturing stream has unjoined work";
    CUDA_ERROR_STREAM_CAPTURE_ISOLATION = 905, "dependency created on uncaptured work in another stream";
    CUDA_ERROR_STREAM_CAPTURE_IMPLICIT = 906, "operation would make the legacy stream depend on a capturing blocking stream";
    CUDA_ERROR_CAPTURED_EVENT = 907, "operation not permitted on an event last recorded in a capturing stream";
    CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD = 908, "attempt to terminate a thread-local capture sequence from another thread";
    CUDA_ERROR_TIMEOUT = 909, "wait operation timed out";
    CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE = 910, "the graph update was not performed because it included changes which violated constraints specific to instantiated graph update";
    CUDA_ERROR_EXTERNAL_DEVICE = 911, "an async error has occurred in a device outside of CUDA";
    CUDA_ERROR_INVALID_CLUSTER_SIZE = 912, "a kernel launch error has occurred due to cluster misconfiguration";
    CUDA_ERROR_FUNCTION_NOT_LOADED = 913, "the function handle is not loaded when calling an API that requires a loaded function";
    CUDA_ERROR_INVALID_RESOURCE_TYPE = 914, "one or more resources passed in are not valid resource types for the operation";
    CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION = 915, "one or more resources are insufficient or non-applicable for the operation";
    CUDA_ERROR_KEY_ROTATION = 916, "an error happened during the key rotation sequence";
    CUDA_ERROR_STREAM_DETACHED = 917;
    CUDA_ERROR_GRAPH_RECAPTURE_FAILURE = 918;
    CUDA_ERROR_FABRIC_NOT_READY = 919;
    CUDA_ERROR_UNKNOWN = 999, "unknown error";
}

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
pub const CU_MEM_LOCATION_TYPE_INVALID: i32 = 0;
pub const CU_MEM_LOCATION_TYPE_DEVICE: i32 = 1;
pub const CU_MEM_LOCATION_TYPE_HOST: i32 = 2;
pub const CU_MEM_LOCATION_TYPE_HOST_NUMA: i32 = 3;
pub const CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT: i32 = 4;
/// CUmemAllocationType
pub const CU_MEM_ALLOCATION_TYPE_PINNED: i32 = 1;
pub const CU_MEM_ALLOCATION_TYPE_MANAGED: i32 = 2;
/// CUmemAllocationHandleType
pub const CU_MEM_HANDLE_TYPE_NONE: i32 = 0;
pub const CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR: i32 = 1;
pub const CU_MEM_HANDLE_TYPE_WIN32: i32 = 2;
pub const CU_MEM_HANDLE_TYPE_WIN32_KMT: i32 = 4;
pub const CU_MEM_HANDLE_TYPE_FABRIC: i32 = 8;
/// CUmemAccess_flags
pub const CU_MEM_ACCESS_FLAGS_PROT_NONE: i32 = 0;
pub const CU_MEM_ACCESS_FLAGS_PROT_READ: i32 = 1;
pub const CU_MEM_ACCESS_FLAGS_PROT_READWRITE: i32 = 3;
/// CUmemAllocationGranularity_flags
pub const CU_MEM_ALLOC_GRANULARITY_MINIMUM: u32 = 0;
pub const CU_MEM_ALLOC_GRANULARITY_RECOMMENDED: u32 = 1;

/// CUjit_option: the options the driver acts on.
pub const CU_JIT_WALL_TIME: u32 = 2;
pub const CU_JIT_INFO_LOG_BUFFER: u32 = 3;
pub const CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES: u32 = 4;
pub const CU_JIT_ERROR_LOG_BUFFER: u32 = 5;
pub const CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES: u32 = 6;
pub const CU_JIT_OPTIMIZATION_LEVEL: u32 = 7;
/// CUjitInputType
pub const CU_JIT_INPUT_CUBIN: u32 = 0;
pub const CU_JIT_INPUT_PTX: u32 = 1;
pub const CU_JIT_INPUT_FATBINARY: u32 = 2;
pub const CU_JIT_INPUT_OBJECT: u32 = 3;
pub const CU_JIT_INPUT_LIBRARY: u32 = 4;
pub const CU_JIT_INPUT_NVVM: u32 = 5;

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

/// CUarray_format: the classic element formats (the block-compressed and planar ones
/// are not listed: the emulation refuses them).
pub const CU_AD_FORMAT_UNSIGNED_INT8: u32 = 0x01;
pub const CU_AD_FORMAT_UNSIGNED_INT16: u32 = 0x02;
pub const CU_AD_FORMAT_UNSIGNED_INT32: u32 = 0x03;
pub const CU_AD_FORMAT_SIGNED_INT8: u32 = 0x08;
pub const CU_AD_FORMAT_SIGNED_INT16: u32 = 0x09;
pub const CU_AD_FORMAT_SIGNED_INT32: u32 = 0x0a;
pub const CU_AD_FORMAT_HALF: u32 = 0x10;
pub const CU_AD_FORMAT_FLOAT: u32 = 0x20;
/// `CUDA_ARRAY3D_DESCRIPTOR::flags`
pub const CUDA_ARRAY3D_LAYERED: u32 = 0x01;
pub const CUDA_ARRAY3D_SURFACE_LDST: u32 = 0x02;
pub const CUDA_ARRAY3D_CUBEMAP: u32 = 0x04;
pub const CUDA_ARRAY3D_TEXTURE_GATHER: u32 = 0x08;
pub const CUDA_ARRAY3D_DEPTH_TEXTURE: u32 = 0x10;
pub const CUDA_ARRAY3D_SPARSE: u32 = 0x40;
pub const CUDA_ARRAY3D_DEFERRED_MAPPING: u32 = 0x80;
/// CUresourcetype (`CUDA_RESOURCE_DESC::res_type`)
pub const CU_RESOURCE_TYPE_ARRAY: u32 = 0;
pub const CU_RESOURCE_TYPE_MIPMAPPED_ARRAY: u32 = 1;
pub const CU_RESOURCE_TYPE_LINEAR: u32 = 2;
pub const CU_RESOURCE_TYPE_PITCH2D: u32 = 3;
/// CUaddress_mode (`CUDA_TEXTURE_DESC::address_mode`)
pub const CU_TR_ADDRESS_MODE_WRAP: u32 = 0;
pub const CU_TR_ADDRESS_MODE_CLAMP: u32 = 1;
pub const CU_TR_ADDRESS_MODE_MIRROR: u32 = 2;
pub const CU_TR_ADDRESS_MODE_BORDER: u32 = 3;
/// CUfilter_mode (`CUDA_TEXTURE_DESC::filter_mode`, `mipmap_filter_mode`)
pub const CU_TR_FILTER_MODE_POINT: u32 = 0;
pub const CU_TR_FILTER_MODE_LINEAR: u32 = 1;
/// `CUDA_TEXTURE_DESC::flags`
pub const CU_TRSF_READ_AS_INTEGER: u32 = 0x01;
pub const CU_TRSF_NORMALIZED_COORDINATES: u32 = 0x02;
pub const CU_TRSF_SRGB: u32 = 0x10;

/// `CUDA_RESOURCE_DESC`: the type, the 128-byte union as words, flags.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct CUDA_RESOURCE_DESC {
    pub res_type: u32,
    pub pad: u32,
    pub res: [u64; 16],
    pub flags: u32,
    pub pad2: u32,
}

/// `CUDA_TEXTURE_DESC`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
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
#[derive(Clone, Copy, Debug, Default, PartialEq)]
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

// ---- graphs and stream capture -------------------------------------------------------

/// CUgraph, CUgraphNode, CUgraphExec: opaque handles.
pub type CUgraph = *mut c_void;
pub type CUgraphNode = *mut c_void;
pub type CUgraphExec = *mut c_void;

/// `CUDA_KERNEL_NODE_PARAMS_v1` (cuGraphAddKernelNode, cuGraphKernelNodeGetParams).
#[repr(C)]
#[derive(Clone, Copy)]
pub struct CUDA_KERNEL_NODE_PARAMS_v1 {
    pub func: CUfunction,
    pub grid_dim_x: u32,
    pub grid_dim_y: u32,
    pub grid_dim_z: u32,
    pub block_dim_x: u32,
    pub block_dim_y: u32,
    pub block_dim_z: u32,
    pub shared_mem_bytes: u32,
    pub kernel_params: *mut *mut c_void,
    pub extra: *mut *mut c_void,
}

/// `CUDA_KERNEL_NODE_PARAMS_v2` (the `_v2` kernel-node entry points): v1 plus a library
/// kernel and a context.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct CUDA_KERNEL_NODE_PARAMS_v2 {
    pub func: CUfunction,
    pub grid_dim_x: u32,
    pub grid_dim_y: u32,
    pub grid_dim_z: u32,
    pub block_dim_x: u32,
    pub block_dim_y: u32,
    pub block_dim_z: u32,
    pub shared_mem_bytes: u32,
    pub kernel_params: *mut *mut c_void,
    pub extra: *mut *mut c_void,
    pub kern: CUkernel,
    pub ctx: CUcontext,
}

/// `CUDA_MEMSET_NODE_PARAMS`
#[repr(C)]
#[derive(Clone, Copy)]
pub struct CUDA_MEMSET_NODE_PARAMS {
    pub dst: CUdeviceptr,
    pub pitch: usize,
    pub value: u32,
    pub element_size: u32,
    pub width: usize,
    pub height: usize,
}

/// `CUDA_HOST_NODE_PARAMS`
#[repr(C)]
#[derive(Clone, Copy)]
pub struct CUDA_HOST_NODE_PARAMS {
    pub func: CUhostFn,
    pub user_data: *mut c_void,
}

/// `CUDA_GRAPH_INSTANTIATE_PARAMS` (cuGraphInstantiateWithParams).
#[repr(C)]
#[derive(Clone, Copy)]
pub struct CUDA_GRAPH_INSTANTIATE_PARAMS {
    pub flags: u64,
    pub h_upload_stream: CUstream,
    pub h_err_node_out: CUgraphNode,
    pub result_out: u32,
}

/// `CUgraphExecUpdateResultInfo` (cuGraphExecUpdate_v2).
#[repr(C)]
#[derive(Clone, Copy)]
pub struct CUgraphExecUpdateResultInfo {
    pub result: u32,
    pub error_node: CUgraphNode,
    pub error_from_node: CUgraphNode,
}

/// CUgraphNodeType
pub const CU_GRAPH_NODE_TYPE_KERNEL: u32 = 0;
pub const CU_GRAPH_NODE_TYPE_MEMCPY: u32 = 1;
pub const CU_GRAPH_NODE_TYPE_MEMSET: u32 = 2;
pub const CU_GRAPH_NODE_TYPE_HOST: u32 = 3;
pub const CU_GRAPH_NODE_TYPE_GRAPH: u32 = 4;
pub const CU_GRAPH_NODE_TYPE_EMPTY: u32 = 5;
pub const CU_GRAPH_NODE_TYPE_WAIT_EVENT: u32 = 6;
pub const CU_GRAPH_NODE_TYPE_EVENT_RECORD: u32 = 7;

/// CUstreamCaptureStatus and CUstreamCaptureMode
pub const CU_STREAM_CAPTURE_STATUS_NONE: u32 = 0;
pub const CU_STREAM_CAPTURE_STATUS_ACTIVE: u32 = 1;
pub const CU_STREAM_CAPTURE_STATUS_INVALIDATED: u32 = 2;
pub const CU_STREAM_CAPTURE_MODE_GLOBAL: u32 = 0;
pub const CU_STREAM_CAPTURE_MODE_THREAD_LOCAL: u32 = 1;
pub const CU_STREAM_CAPTURE_MODE_RELAXED: u32 = 2;

/// CUgraphExecUpdateResult (the values used)
pub const CU_GRAPH_EXEC_UPDATE_SUCCESS: u32 = 0;
pub const CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED: u32 = 2;
pub const CU_GRAPH_EXEC_UPDATE_ERROR_NODE_TYPE_CHANGED: u32 = 3;
pub const CU_GRAPH_EXEC_UPDATE_ERROR_PARAMETERS_CHANGED: u32 = 5;

/// CUgraphInstantiateResult (the values used) and the instantiation flags
pub const CUDA_GRAPH_INSTANTIATE_SUCCESS: u32 = 0;
pub const CUDA_GRAPH_INSTANTIATE_ERROR: u32 = 1;
pub const CUDA_GRAPH_INSTANTIATE_INVALID_STRUCTURE: u32 = 2;
pub const CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH: u64 = 1;
pub const CUDA_GRAPH_INSTANTIATE_FLAG_UPLOAD: u64 = 2;
pub const CUDA_GRAPH_INSTANTIATE_FLAG_DEVICE_LAUNCH: u64 = 4;
pub const CUDA_GRAPH_INSTANTIATE_FLAG_USE_NODE_PRIORITY: u64 = 8;
