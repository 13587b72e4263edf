//! The driver entry points the runner uses, each looked up in the library under test by
//! its exact exported name. Legacy names (`cuMemAlloc`, `cuModuleGetGlobal`, ...) are
//! separate entries with their legacy (32-bit) ABI, as declared in cuda.h's
//! `__CUDA_API_VERSION_INTERNAL` section; they are never aliases of the `_v2` forms.
//!
//! A symbol the library does not export is `None`; a case that needs it reports
//! `MISSING(name)` instead of calling through a null pointer.
#![allow(non_snake_case, clippy::type_complexity, dead_code)]

use std::ffi::{c_char, c_void};

pub type R = i32;
pub type P = *mut c_void;
pub type HostFn = Option<unsafe extern "C" fn(P)>;
pub type StreamCb = Option<unsafe extern "C" fn(P, R, P)>;
pub type B2DSize = Option<unsafe extern "C" fn(i32) -> usize>;

/// CUDA_MEMCPY2D, for cuMemcpy2D_v2 and friends.
pub use crate::cuda::CUDA_MEMCPY2D as Memcpy2D;

impl Memcpy2D {
    pub fn zeroed() -> Self {
        // SAFETY: plain integers and raw pointers; all-zero is a valid value.
        unsafe { std::mem::zeroed() }
    }
}

// cuda.h's structs, as simtwin-abi declares them (abi/src/cuda.rs, whose layouts
// abi/tests/cuda_h.rs checks against cuda.h), under the runner's short names.
pub use crate::cuda::{
    CUdevprop as DevProp, CUlaunchConfig as LaunchConfig, CUmemAccessDesc as AccessDesc, CUmemAllocationProp as AllocProp,
    CUmemLocation as MemLocation, CUDA_ARRAY3D_DESCRIPTOR as Array3DDesc, CUDA_ARRAY_DESCRIPTOR as ArrayDesc,
    CUDA_RESOURCE_DESC as ResDesc, CUDA_RESOURCE_VIEW_DESC as ViewDesc, CUDA_TEXTURE_DESC as TexDesc,
};

/// CUDA_MEMCPY3D, for cuMemcpy3D_v2 and friends.
pub use crate::cuda::CUDA_MEMCPY3D as Memcpy3D;

impl Memcpy3D {
    pub fn zeroed() -> Self {
        // SAFETY: plain integers and raw pointers; all-zero is a valid value.
        unsafe { std::mem::zeroed() }
    }
}

macro_rules! api {
    ($($name:ident : fn($($arg:ty),*);)*) => {
        /// Function pointers resolved from the library under test.
        pub struct Api {
            pub lib: libloading::Library,
            $(pub $name: Option<unsafe extern "C" fn($($arg),*) -> R>,)*
        }

        impl Api {
            pub fn load(path: &str) -> Result<Api, String> {
                // SAFETY: loading a CUDA driver library runs its initialisers; that is
                // what we are here to test.
                let lib = unsafe { libloading::Library::new(path) }
                    .map_err(|e| format!("cannot load {path}: {e}"))?;
                $(
                    // SAFETY: the type is the entry point's documented C signature.
                    let $name = unsafe {
                        lib.get::<unsafe extern "C" fn($($arg),*) -> R>(
                            concat!(stringify!($name), "\0").as_bytes())
                    }.ok().map(|s| *s);
                )*
                Ok(Api { lib, $($name,)* })
            }

            /// Names of every entry point in the table (for --list-symbols).
            pub fn names() -> &'static [&'static str] {
                &[$(stringify!($name),)*]
            }

            /// The address `dlsym` gives for `name`, if the library exports it.
            pub fn raw(&self, name: &str) -> Option<usize> {
                let mut z = name.as_bytes().to_vec();
                z.push(0);
                // SAFETY: only the address is read, nothing is called.
                unsafe { self.lib.get::<*mut c_void>(z.as_slice()) }.ok().map(|s| *s as usize)
            }
        }
    };
}

api! {
    cuInit: fn(u32);
    cuDriverGetVersion: fn(*mut i32);
    cuDeviceGet: fn(*mut i32, i32);
    cuDeviceGetCount: fn(*mut i32);
    cuDeviceGetName: fn(*mut c_char, i32, i32);
    cuDeviceGetAttribute: fn(*mut i32, i32, i32);
    cuDeviceTotalMem_v2: fn(*mut usize, i32);
    cuDeviceTotalMem: fn(*mut u32, i32);
    cuDeviceComputeCapability: fn(*mut i32, *mut i32, i32);
    cuDeviceGetUuid: fn(*mut u8, i32);
    cuDevicePrimaryCtxRetain: fn(*mut P, i32);
    cuDevicePrimaryCtxRelease: fn(i32);
    cuDevicePrimaryCtxRelease_v2: fn(i32);
    cuDevicePrimaryCtxSetFlags: fn(i32, u32);
    cuDevicePrimaryCtxSetFlags_v2: fn(i32, u32);
    cuDevicePrimaryCtxGetState: fn(i32, *mut u32, *mut i32);
    cuDevicePrimaryCtxReset: fn(i32);
    cuDevicePrimaryCtxReset_v2: fn(i32);
    cuCtxCreate_v2: fn(*mut P, u32, i32);
    cuCtxCreate: fn(*mut P, u32, i32);
    cuCtxDestroy_v2: fn(P);
    cuCtxPushCurrent_v2: fn(P);
    cuCtxPopCurrent_v2: fn(*mut P);
    cuCtxGetCurrent: fn(*mut P);
    cuCtxSetCurrent: fn(P);
    cuCtxGetDevice: fn(*mut i32);
    cuCtxSynchronize: fn();
    cuCtxGetStreamPriorityRange: fn(*mut i32, *mut i32);
    cuCtxSetLimit: fn(i32, usize);
    cuCtxGetLimit: fn(*mut usize, i32);
    cuCtxGetApiVersion: fn(P, *mut u32);
    cuCtxGetFlags: fn(*mut u32);
    cuMemAlloc_v2: fn(*mut u64, usize);
    cuMemAlloc: fn(*mut u32, u32);
    cuMemFree_v2: fn(u64);
    cuMemFree: fn(u32);
    cuMemGetInfo_v2: fn(*mut usize, *mut usize);
    cuMemGetAddressRange_v2: fn(*mut u64, *mut usize, u64);
    cuMemAllocPitch_v2: fn(*mut u64, *mut usize, usize, usize, u32);
    cuMemAllocHost_v2: fn(*mut P, usize);
    cuMemHostAlloc: fn(*mut P, usize, u32);
    cuMemFreeHost: fn(P);
    cuMemHostGetDevicePointer_v2: fn(*mut u64, P, u32);
    cuMemHostGetFlags: fn(*mut u32, P);
    cuMemAllocAsync: fn(*mut u64, usize, P);
    cuMemFreeAsync: fn(u64, P);
    cuDeviceGetDefaultMemPool: fn(*mut P, i32);
    cuMemPoolGetAttribute: fn(P, i32, P);
    cuMemcpyHtoD_v2: fn(u64, *const c_void, usize);
    cuMemcpyHtoD: fn(u32, *const c_void, u32);
    cuMemcpyDtoH_v2: fn(P, u64, usize);
    cuMemcpyDtoD_v2: fn(u64, u64, usize);
    cuMemcpyHtoDAsync_v2: fn(u64, *const c_void, usize, P);
    cuMemcpyDtoHAsync_v2: fn(P, u64, usize, P);
    cuMemcpyDtoDAsync_v2: fn(u64, u64, usize, P);
    cuMemcpy: fn(u64, u64, usize);
    cuMemcpyAsync: fn(u64, u64, usize, P);
    cuMemcpy2D_v2: fn(*const Memcpy2D);
    cuMemcpy2DAsync_v2: fn(*const Memcpy2D, P);
    cuMemcpy2DUnaligned_v2: fn(*const Memcpy2D);
    cuMemsetD8_v2: fn(u64, u8, usize);
    cuMemsetD16_v2: fn(u64, u16, usize);
    cuMemsetD32_v2: fn(u64, u32, usize);
    cuMemsetD8Async: fn(u64, u8, usize, P);
    cuMemsetD16Async: fn(u64, u16, usize, P);
    cuMemsetD32Async: fn(u64, u32, usize, P);
    cuMemsetD2D8_v2: fn(u64, usize, u8, usize, usize);
    cuMemsetD2D16_v2: fn(u64, usize, u16, usize, usize);
    cuMemsetD2D32_v2: fn(u64, usize, u32, usize, usize);
    cuMemsetD2D8Async: fn(u64, usize, u8, usize, usize, P);
    cuMemsetD2D32Async: fn(u64, usize, u32, usize, usize, P);
    cuPointerGetAttribute: fn(P, i32, u64);
    cuStreamCreate: fn(*mut P, u32);
    cuStreamCreateWithPriority: fn(*mut P, u32, i32);
    cuStreamGetPriority: fn(P, *mut i32);
    cuStreamGetFlags: fn(P, *mut u32);
    cuStreamGetCtx: fn(P, *mut P);
    cuStreamQuery: fn(P);
    cuStreamSynchronize: fn(P);
    cuStreamDestroy_v2: fn(P);
    cuStreamWaitEvent: fn(P, P, u32);
    cuStreamAddCallback: fn(P, StreamCb, P, u32);
    cuLaunchHostFunc: fn(P, HostFn, P);
    cuEventCreate: fn(*mut P, u32);
    cuEventRecord: fn(P, P);
    cuEventQuery: fn(P);
    cuEventSynchronize: fn(P);
    cuEventElapsedTime: fn(*mut f32, P, P);
    cuEventElapsedTime_v2: fn(*mut f32, P, P);
    cuEventDestroy_v2: fn(P);
    cuModuleLoadData: fn(*mut P, *const c_void);
    cuModuleLoadDataEx: fn(*mut P, *const c_void, u32, *mut i32, *mut P);
    cuModuleLoadFatBinary: fn(*mut P, *const c_void);
    cuModuleLoad: fn(*mut P, *const c_char);
    cuModuleUnload: fn(P);
    cuModuleGetFunction: fn(*mut P, P, *const c_char);
    cuModuleGetGlobal_v2: fn(*mut u64, *mut usize, P, *const c_char);
    cuModuleGetGlobal: fn(*mut u32, *mut u32, P, *const c_char);
    cuFuncGetAttribute: fn(*mut i32, i32, P);
    cuFuncSetAttribute: fn(P, i32, i32);
    cuFuncSetCacheConfig: fn(P, i32);
    cuLaunchKernel: fn(P, u32, u32, u32, u32, u32, u32, u32, P, *mut P, *mut P);
    cuLaunchKernelEx: fn(*const LaunchConfig, P, *mut P, *mut P);
    cuGetErrorName: fn(i32, *mut *const c_char);
    cuGetErrorString: fn(i32, *mut *const c_char);
    cuGetProcAddress_v2: fn(*const c_char, *mut P, i32, u64, *mut i32);
    cuGetProcAddress: fn(*const c_char, *mut P, i32, u64);
    cuOccupancyMaxActiveBlocksPerMultiprocessor: fn(*mut i32, P, i32, usize);
    cuOccupancyMaxPotentialBlockSize: fn(*mut i32, *mut i32, P, B2DSize, usize, i32);
    cuOccupancyAvailableDynamicSMemPerBlock: fn(*mut usize, P, i32, i32);
    // Per-thread default stream (_ptds / _ptsz) forms and the rest of the entry points
    // that name a stream, an event, a pointer, a module or a function (ctxres cases).
    cuMemcpy_ptds: fn(u64, u64, usize);
    cuMemcpyAsync_ptsz: fn(u64, u64, usize, P);
    cuMemcpyHtoD_v2_ptds: fn(u64, *const c_void, usize);
    cuMemcpyDtoH_v2_ptds: fn(P, u64, usize);
    cuMemcpyDtoD_v2_ptds: fn(u64, u64, usize);
    cuMemcpyHtoDAsync_v2_ptsz: fn(u64, *const c_void, usize, P);
    cuMemcpyDtoHAsync_v2_ptsz: fn(P, u64, usize, P);
    cuMemcpyDtoDAsync_v2_ptsz: fn(u64, u64, usize, P);
    cuMemcpy2D_v2_ptds: fn(*const Memcpy2D);
    cuMemcpy2DAsync_v2_ptsz: fn(*const Memcpy2D, P);
    cuMemcpyPeer: fn(u64, P, u64, P, usize);
    cuMemcpyPeerAsync: fn(u64, P, u64, P, usize, P);
    cuMemsetD8_v2_ptds: fn(u64, u8, usize);
    cuMemsetD32_v2_ptds: fn(u64, u32, usize);
    cuMemsetD8Async_ptsz: fn(u64, u8, usize, P);
    cuMemsetD32Async_ptsz: fn(u64, u32, usize, P);
    cuMemsetD2D16Async: fn(u64, usize, u16, usize, usize, P);
    cuPointerGetAttributes: fn(u32, *const i32, *mut P, u64);
    cuMemAllocManaged: fn(*mut u64, usize, u32);
    cuMemPrefetchAsync: fn(u64, usize, i32, P);
    cuMemPrefetchAsync_v2: fn(u64, usize, u64, u32, P);
    cuMemAdvise: fn(u64, usize, i32, i32);
    cuMemAdvise_v2: fn(u64, usize, i32, u64);
    cuMemAllocAsync_ptsz: fn(*mut u64, usize, P);
    cuMemFreeAsync_ptsz: fn(u64, P);
    cuMemAllocFromPoolAsync: fn(*mut u64, usize, P, P);
    cuMemHostRegister_v2: fn(P, usize, u32);
    cuMemHostUnregister: fn(P);
    cuModuleGetFunctionCount: fn(*mut u32, P);
    cuFuncSetSharedMemConfig: fn(P, i32);
    cuFuncGetName: fn(*mut *const c_char, P);
    cuFuncGetModule: fn(*mut P, P);
    cuLaunchKernel_ptsz: fn(P, u32, u32, u32, u32, u32, u32, u32, P, *mut P, *mut P);
    cuLaunchKernelEx_ptsz: fn(*const LaunchConfig, P, *mut P, *mut P);
    cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags: fn(*mut i32, P, i32, usize, u32);
    cuOccupancyMaxPotentialBlockSizeWithFlags: fn(*mut i32, *mut i32, P, B2DSize, usize, i32, u32);
    cuStreamQuery_ptsz: fn(P);
    cuStreamSynchronize_ptsz: fn(P);
    cuStreamWaitEvent_ptsz: fn(P, P, u32);
    cuStreamAddCallback_ptsz: fn(P, StreamCb, P, u32);
    cuLaunchHostFunc_ptsz: fn(P, HostFn, P);
    cuStreamGetId: fn(P, *mut u64);
    cuStreamIsCapturing: fn(P, *mut i32);
    cuStreamDestroy: fn(P);
    cuStreamAttachMemAsync: fn(P, u64, usize, u32);
    cuEventRecord_ptsz: fn(P, P);
    cuEventRecordWithFlags: fn(P, P, u32);
    cuEventDestroy: fn(P);
    // The virtual-memory API (vmm cases) and the legacy device properties.
    cuMemGetAllocationGranularity: fn(*mut usize, *const AllocProp, i32);
    cuMemCreate: fn(*mut u64, usize, *const AllocProp, u64);
    cuMemRelease: fn(u64);
    cuMemAddressReserve: fn(*mut u64, usize, usize, u64, u64);
    cuMemAddressFree: fn(u64, usize);
    cuMemMap: fn(u64, usize, usize, u64, u64);
    cuMemUnmap: fn(u64, usize);
    cuMemSetAccess: fn(u64, usize, *const AccessDesc, usize);
    cuMemGetAccess: fn(*mut u64, *const MemLocation, u64);
    cuMemGetAllocationPropertiesFromHandle: fn(*mut AllocProp, u64);
    cuMemRetainAllocationHandle: fn(*mut u64, P);
    cuMemExportToShareableHandle: fn(P, u64, i32, u64);
    cuMemImportFromShareableHandle: fn(*mut u64, P, i32);
    cuDeviceGetProperties: fn(*mut DevProp, i32);
    // Entry points CUDA 13.0 added that the emulated driver answers (entries_13_0).
    cuCtxGetDevice_v2: fn(*mut i32, P);
    cuCtxSynchronize_v2: fn(P);
    cuStreamGetDevice: fn(P, *mut i32);
    cuDeviceGetMemPool: fn(*mut P, i32);
    cuMemGetDefaultMemPool: fn(*mut P, *mut MemLocation, i32);
    cuMemGetMemPool: fn(*mut P, *mut MemLocation, i32);
    cuMemSetMemPool: fn(*mut MemLocation, i32, P);
    // Arrays, textures and surfaces (src/cases/texture.rs).
    cuArrayCreate_v2: fn(*mut P, *const ArrayDesc);
    cuArray3DCreate_v2: fn(*mut P, *const Array3DDesc);
    cuArrayDestroy: fn(P);
    cuArrayGetDescriptor_v2: fn(*mut ArrayDesc, P);
    cuArray3DGetDescriptor_v2: fn(*mut Array3DDesc, P);
    cuMipmappedArrayCreate: fn(*mut P, *const Array3DDesc, u32);
    cuMipmappedArrayGetLevel: fn(*mut P, P, u32);
    cuMipmappedArrayDestroy: fn(P);
    cuMemcpy3D_v2: fn(*const Memcpy3D);
    cuMemcpy3DAsync_v2: fn(*const Memcpy3D, P);
    cuMemcpyHtoA_v2: fn(P, usize, *const c_void, usize);
    cuMemcpyAtoH_v2: fn(*mut c_void, P, usize, usize);
    cuMemcpyDtoA_v2: fn(P, usize, u64, usize);
    cuMemcpyAtoD_v2: fn(u64, P, usize, usize);
    cuMemcpy3D_v2_ptds: fn(*const Memcpy3D);
    cuMemcpy3DAsync_v2_ptsz: fn(*const Memcpy3D, P);
    cuMemcpyHtoA_v2_ptds: fn(P, usize, *const c_void, usize);
    cuMemcpyAtoH_v2_ptds: fn(*mut c_void, P, usize, usize);
    cuMemcpyDtoA_v2_ptds: fn(P, usize, u64, usize);
    cuMemcpyAtoD_v2_ptds: fn(u64, P, usize, usize);
    cuTexObjectCreate: fn(*mut u64, *const ResDesc, *const TexDesc, *const ViewDesc);
    cuTexObjectDestroy: fn(u64);
    cuTexObjectGetResourceDesc: fn(*mut ResDesc, u64);
    cuTexObjectGetTextureDesc: fn(*mut TexDesc, u64);
    cuTexObjectGetResourceViewDesc: fn(*mut ViewDesc, u64);
    cuSurfObjectCreate: fn(*mut u64, *const ResDesc);
    cuSurfObjectDestroy: fn(u64);
    cuSurfObjectGetResourceDesc: fn(*mut ResDesc, u64);
    // Texture and surface references (src/cases/texfit.rs): deprecated, still in cuda.h 13.
    cuModuleGetTexRef: fn(*mut P, P, *const c_char);
    cuModuleGetSurfRef: fn(*mut P, P, *const c_char);
    cuTexRefSetArray: fn(P, P, u32);
    cuTexRefSetMipmappedArray: fn(P, P, u32);
    cuTexRefSetAddress_v2: fn(*mut usize, P, u64, usize);
    cuTexRefSetAddress2D_v3: fn(P, *const ArrayDesc, u64, usize);
    cuTexRefSetFormat: fn(P, u32, i32);
    cuTexRefSetAddressMode: fn(P, i32, u32);
    cuTexRefSetFilterMode: fn(P, u32);
    cuTexRefSetMipmapFilterMode: fn(P, u32);
    cuTexRefSetMipmapLevelBias: fn(P, f32);
    cuTexRefSetMipmapLevelClamp: fn(P, f32, f32);
    cuTexRefSetMaxAnisotropy: fn(P, u32);
    cuTexRefSetBorderColor: fn(P, *mut f32);
    cuTexRefSetFlags: fn(P, u32);
    cuTexRefGetAddress_v2: fn(*mut u64, P);
    cuTexRefGetArray: fn(*mut P, P);
    cuTexRefGetMipmappedArray: fn(*mut P, P);
    cuTexRefGetAddressMode: fn(*mut u32, P, i32);
    cuTexRefGetFilterMode: fn(*mut u32, P);
    cuTexRefGetFormat: fn(*mut u32, *mut i32, P);
    cuTexRefGetMipmapFilterMode: fn(*mut u32, P);
    cuTexRefGetMipmapLevelBias: fn(*mut f32, P);
    cuTexRefGetMipmapLevelClamp: fn(*mut f32, *mut f32, P);
    cuTexRefGetMaxAnisotropy: fn(*mut i32, P);
    cuTexRefGetBorderColor: fn(*mut f32, P);
    cuTexRefGetFlags: fn(*mut u32, P);
    cuTexRefCreate: fn(*mut P);
    cuTexRefDestroy: fn(P);
    cuSurfRefSetArray: fn(P, P, u32);
    cuSurfRefGetArray: fn(*mut P, P);
    cuParamSetTexRef: fn(P, i32, P);
}
