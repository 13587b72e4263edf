//! Devices: count, selection, properties, attributes, synchronisation, flags, versions.
//!
//! cudaDeviceAttr and CUdevice_attribute share their numbers, so cudaDeviceGetAttribute is
//! the driver's cuDeviceGetAttribute. cudaGetDeviceProperties fills driver_types.h's
//! cudaDeviceProp ([`DeviceProp`], its layout checked against the header by
//! `cudart/tests/layout.rs`) from the same attributes, the name, total memory and UUID.

use std::ffi::c_char;

use crate::driver as d;
use crate::error::{self, check, Res};
use crate::state;

/// The runtime version this library implements (the headers it was written from:
/// CUDART_VERSION of CUDA 13.5's cuda_runtime_api.h).
pub const RUNTIME_VERSION: i32 = 13050;

/// driver_types.h's `struct cudaDeviceProp`, field for field.
#[repr(C)]
#[allow(non_snake_case)]
pub struct DeviceProp {
    pub name: [c_char; 256],
    pub uuid: [u8; 16],
    pub luid: [c_char; 8],
    pub luidDeviceNodeMask: u32,
    pub totalGlobalMem: usize,
    pub sharedMemPerBlock: usize,
    pub regsPerBlock: i32,
    pub warpSize: i32,
    pub memPitch: usize,
    pub maxThreadsPerBlock: i32,
    pub maxThreadsDim: [i32; 3],
    pub maxGridSize: [i32; 3],
    pub totalConstMem: usize,
    pub major: i32,
    pub minor: i32,
    pub textureAlignment: usize,
    pub texturePitchAlignment: usize,
    pub multiProcessorCount: i32,
    pub integrated: i32,
    pub canMapHostMemory: i32,
    pub maxTexture1D: i32,
    pub maxTexture1DMipmap: i32,
    pub maxTexture2D: [i32; 2],
    pub maxTexture2DMipmap: [i32; 2],
    pub maxTexture2DLinear: [i32; 3],
    pub maxTexture2DGather: [i32; 2],
    pub maxTexture3D: [i32; 3],
    pub maxTexture3DAlt: [i32; 3],
    pub maxTextureCubemap: i32,
    pub maxTexture1DLayered: [i32; 2],
    pub maxTexture2DLayered: [i32; 3],
    pub maxTextureCubemapLayered: [i32; 2],
    pub maxSurface1D: i32,
    pub maxSurface2D: [i32; 2],
    pub maxSurface3D: [i32; 3],
    pub maxSurface1DLayered: [i32; 2],
    pub maxSurface2DLayered: [i32; 3],
    pub maxSurfaceCubemap: i32,
    pub maxSurfaceCubemapLayered: [i32; 2],
    pub surfaceAlignment: usize,
    pub concurrentKernels: i32,
    pub ECCEnabled: i32,
    pub pciBusID: i32,
    pub pciDeviceID: i32,
    pub pciDomainID: i32,
    pub tccDriver: i32,
    pub asyncEngineCount: i32,
    pub unifiedAddressing: i32,
    pub memoryBusWidth: i32,
    pub l2CacheSize: i32,
    pub persistingL2CacheMaxSize: i32,
    pub maxThreadsPerMultiProcessor: i32,
    pub streamPrioritiesSupported: i32,
    pub globalL1CacheSupported: i32,
    pub localL1CacheSupported: i32,
    pub sharedMemPerMultiprocessor: usize,
    pub regsPerMultiprocessor: i32,
    pub managedMemory: i32,
    pub isMultiGpuBoard: i32,
    pub multiGpuBoardGroupID: i32,
    pub hostNativeAtomicSupported: i32,
    pub pageableMemoryAccess: i32,
    pub concurrentManagedAccess: i32,
    pub computePreemptionSupported: i32,
    pub canUseHostPointerForRegisteredMem: i32,
    pub cooperativeLaunch: i32,
    pub sharedMemPerBlockOptin: usize,
    pub pageableMemoryAccessUsesHostPageTables: i32,
    pub directManagedMemAccessFromHost: i32,
    pub maxBlocksPerMultiProcessor: i32,
    pub accessPolicyMaxWindowSize: i32,
    pub reservedSharedMemPerBlock: usize,
    pub hostRegisterSupported: i32,
    pub sparseCudaArraySupported: i32,
    pub hostRegisterReadOnlySupported: i32,
    pub timelineSemaphoreInteropSupported: i32,
    pub memoryPoolsSupported: i32,
    pub gpuDirectRDMASupported: i32,
    pub gpuDirectRDMAFlushWritesOptions: u32,
    pub gpuDirectRDMAWritesOrdering: i32,
    pub memoryPoolSupportedHandleTypes: u32,
    pub deferredMappingCudaArraySupported: i32,
    pub ipcEventSupported: i32,
    pub clusterLaunch: i32,
    pub unifiedFunctionPointers: i32,
    pub deviceNumaConfig: i32,
    pub deviceNumaId: i32,
    pub mpsEnabled: i32,
    pub hostNumaId: i32,
    pub gpuPciDeviceID: u32,
    pub gpuPciSubsystemID: u32,
    pub hostNumaMultinodeIpcSupported: i32,
    pub reserved: [i32; 56],
}

/// One attribute of `dev`, 0 when the driver does not answer it.
fn attr(dev: i32, a: i32) -> i32 {
    let mut v = 0;
    if d::cuDeviceGetAttribute(&mut v, a, dev) != 0 {
        return 0;
    }
    v
}

/// cudaDeviceGetAttribute.
pub fn attribute(a: i32, dev: i32) -> Res<i32> {
    state::valid_device(dev)?;
    let mut v = 0;
    check(d::cuDeviceGetAttribute(&mut v, a, dev))?;
    Ok(v)
}

/// cudaGetDeviceProperties: fills `p` (every field it does not name stays zero).
pub fn properties(dev: i32, p: &mut DeviceProp) -> Res<()> {
    state::valid_device(dev)?;
    let mut name = [0 as c_char; 256];
    check(d::cuDeviceGetName(name.as_mut_ptr(), 255, dev))?;
    p.name = name;
    let mut uuid = [0u8; 16];
    if d::cuDeviceGetUuid(uuid.as_mut_ptr(), dev) == 0 {
        p.uuid = uuid;
    }
    let mut total = 0usize;
    check(d::cuDeviceTotalMem(&mut total, dev))?;
    p.totalGlobalMem = total;
    let a = |n| attr(dev, n);
    let z = |n| attr(dev, n) as usize;
    p.sharedMemPerBlock = z(8);
    p.regsPerBlock = a(12);
    p.warpSize = a(10);
    p.memPitch = z(11);
    p.maxThreadsPerBlock = a(1);
    p.maxThreadsDim = [a(2), a(3), a(4)];
    p.maxGridSize = [a(5), a(6), a(7)];
    p.totalConstMem = z(9);
    p.major = a(75);
    p.minor = a(76);
    p.textureAlignment = z(14);
    p.texturePitchAlignment = z(51);
    p.multiProcessorCount = a(16);
    p.integrated = a(18);
    p.canMapHostMemory = a(19);
    p.maxTexture1D = a(21);
    p.maxTexture1DMipmap = a(77);
    p.maxTexture2D = [a(22), a(23)];
    p.maxTexture2DMipmap = [a(73), a(74)];
    p.maxTexture2DLinear = [a(70), a(71), a(72)];
    p.maxTexture2DGather = [a(45), a(46)];
    p.maxTexture3D = [a(24), a(25), a(26)];
    p.maxTexture3DAlt = [a(47), a(48), a(49)];
    p.maxTextureCubemap = a(52);
    p.maxTexture1DLayered = [a(42), a(43)];
    p.maxTexture2DLayered = [a(27), a(28), a(29)];
    p.maxTextureCubemapLayered = [a(53), a(54)];
    p.maxSurface1D = a(55);
    p.maxSurface2D = [a(56), a(57)];
    p.maxSurface3D = [a(58), a(59), a(60)];
    p.maxSurface1DLayered = [a(61), a(62)];
    p.maxSurface2DLayered = [a(63), a(64), a(65)];
    p.maxSurfaceCubemap = a(66);
    p.maxSurfaceCubemapLayered = [a(67), a(68)];
    p.surfaceAlignment = z(30);
    p.concurrentKernels = a(31);
    p.ECCEnabled = a(32);
    p.pciBusID = a(33);
    p.pciDeviceID = a(34);
    p.pciDomainID = a(50);
    p.tccDriver = a(35);
    p.asyncEngineCount = a(40);
    p.unifiedAddressing = a(41);
    p.memoryBusWidth = a(37);
    p.l2CacheSize = a(38);
    p.persistingL2CacheMaxSize = a(108);
    p.maxThreadsPerMultiProcessor = a(39);
    p.streamPrioritiesSupported = a(78);
    p.globalL1CacheSupported = a(79);
    p.localL1CacheSupported = a(80);
    p.sharedMemPerMultiprocessor = z(81);
    p.regsPerMultiprocessor = a(82);
    p.managedMemory = a(83);
    p.isMultiGpuBoard = a(84);
    p.multiGpuBoardGroupID = a(85);
    p.hostNativeAtomicSupported = a(86);
    p.pageableMemoryAccess = a(88);
    p.concurrentManagedAccess = a(89);
    p.computePreemptionSupported = a(90);
    p.canUseHostPointerForRegisteredMem = a(91);
    p.cooperativeLaunch = a(95);
    p.sharedMemPerBlockOptin = z(97);
    p.pageableMemoryAccessUsesHostPageTables = a(100);
    p.directManagedMemAccessFromHost = a(101);
    p.maxBlocksPerMultiProcessor = a(106);
    p.accessPolicyMaxWindowSize = a(109);
    p.reservedSharedMemPerBlock = z(111);
    p.hostRegisterSupported = a(99);
    p.sparseCudaArraySupported = a(112);
    p.hostRegisterReadOnlySupported = a(113);
    p.timelineSemaphoreInteropSupported = a(114);
    p.memoryPoolsSupported = a(115);
    p.gpuDirectRDMASupported = a(116);
    p.gpuDirectRDMAFlushWritesOptions = a(117) as u32;
    p.gpuDirectRDMAWritesOrdering = a(118);
    p.memoryPoolSupportedHandleTypes = a(119) as u32;
    p.deferredMappingCudaArraySupported = a(121);
    p.ipcEventSupported = a(125);
    p.clusterLaunch = a(120);
    p.unifiedFunctionPointers = a(129);
    p.deviceNumaConfig = a(130);
    p.deviceNumaId = a(131);
    p.mpsEnabled = a(133);
    p.hostNumaId = a(134);
    p.gpuPciDeviceID = a(139) as u32;
    p.gpuPciSubsystemID = a(140) as u32;
    p.hostNumaMultinodeIpcSupported = a(143);
    Ok(())
}

/// cudaDeviceSynchronize: the current context.
pub fn synchronize() -> Res<()> {
    state::ctx()?;
    check(d::cuCtxSynchronize(std::ptr::null_mut()))
}

/// cudaDeviceReset: the current device's primary context is reset (its memory, streams,
/// events and modules destroyed); the registered fatbins load again at their next use.
pub fn reset() -> Res<()> {
    let dev = state::reset_primary()?;
    crate::registry::forget_device(dev);
    Ok(())
}

/// cudaSetDeviceFlags: the current device's primary context flags (cudaDeviceSchedule*,
/// cudaDeviceMapHost, cudaDeviceLmemResizeToMax are CU_CTX_*'s numbers).
pub fn set_flags(flags: u32) -> Res<()> {
    state::init()?;
    if flags & !0x1f != 0 {
        return Err(error::INVALID_VALUE);
    }
    let dev = state::device();
    state::valid_device(dev)?;
    check(d::cuDevicePrimaryCtxSetFlags(dev, flags))
}

/// cudaGetDeviceFlags: the primary context's flags, with cudaDeviceMapHost (always on).
pub fn flags() -> Res<u32> {
    state::init()?;
    let dev = state::device();
    state::valid_device(dev)?;
    let (mut f, mut active) = (0u32, 0i32);
    check(d::cuDevicePrimaryCtxGetState(dev, &mut f, &mut active))?;
    Ok(f | 0x08)
}

/// cudaDriverGetVersion: 0 without a driver, as documented.
pub fn driver_version() -> Res<i32> {
    if !d::loaded() {
        return Ok(0);
    }
    let mut v = 0;
    check(d::cuDriverGetVersion(&mut v))?;
    Ok(v)
}

pub fn set_limit(limit: i32, value: usize) -> Res<()> {
    state::ctx()?;
    check(d::cuCtxSetLimit(limit, value))
}

pub fn get_limit(limit: i32) -> Res<usize> {
    state::ctx()?;
    let mut v = 0;
    check(d::cuCtxGetLimit(&mut v, limit))?;
    Ok(v)
}

pub fn can_access_peer(dev: i32, peer: i32) -> Res<i32> {
    state::valid_device(dev)?;
    state::valid_device(peer)?;
    let mut v = 0;
    check(d::cuDeviceCanAccessPeer(&mut v, dev, peer))?;
    Ok(v)
}

/// cudaProfilerStart / cudaProfilerStop: the driver's cuProfilerStart / cuProfilerStop.
pub fn profiler(start: bool) -> Res<()> {
    state::ctx()?;
    check(if start { d::cuProfilerStart() } else { d::cuProfilerStop() })
}
