//! The structs the runtime writes into a program's memory have the toolkit header's
//! layout: `programs/layout.cpp`, compiled with g++ against the pinned toolkit's
//! cuda_runtime.h, prints sizeof and every field's offset of cudaDeviceProp and
//! cudaFuncAttributes, which must equal the Rust structs'.

use std::collections::HashMap;
use std::mem::{offset_of, size_of};
use std::path::{Path, PathBuf};
use std::process::Command;

use simtwin_cudart::device::DeviceProp;
use simtwin_cudart::launch::FuncAttributes;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf()
}

fn header_layout() -> HashMap<(String, String), usize> {
    let root = root();
    let inc = Command::new(root.join("scripts/nvcc-path")).arg("--include").output().expect("scripts/nvcc-path");
    let inc = String::from_utf8(inc.stdout).unwrap().trim().to_string();
    let dir = tempfile_dir();
    let exe = dir.join("layout");
    let o = Command::new("g++")
        .arg(format!("-I{inc}"))
        .arg(root.join("cudart/tests/programs/layout.cpp"))
        .arg("-o")
        .arg(&exe)
        .output()
        .expect("g++");
    assert!(o.status.success(), "g++ layout.cpp: {}", String::from_utf8_lossy(&o.stderr));
    let o = Command::new(&exe).output().unwrap();
    String::from_utf8(o.stdout)
        .unwrap()
        .lines()
        .map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            ((f[0].to_string(), f[1].to_string()), f[2].parse().unwrap())
        })
        .collect()
}

fn tempfile_dir() -> PathBuf {
    let d = root().join("target/cudart-tests").join(format!("layout-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

#[test]
fn device_prop_and_func_attributes_match_the_header() {
    let h = header_layout();
    let rust: &[(&str, &str, usize)] = &[
        ("cudaDeviceProp", "sizeof", size_of::<DeviceProp>()),
        ("cudaDeviceProp", "name", offset_of!(DeviceProp, name)),
        ("cudaDeviceProp", "uuid", offset_of!(DeviceProp, uuid)),
        ("cudaDeviceProp", "luid", offset_of!(DeviceProp, luid)),
        ("cudaDeviceProp", "luidDeviceNodeMask", offset_of!(DeviceProp, luidDeviceNodeMask)),
        ("cudaDeviceProp", "totalGlobalMem", offset_of!(DeviceProp, totalGlobalMem)),
        ("cudaDeviceProp", "sharedMemPerBlock", offset_of!(DeviceProp, sharedMemPerBlock)),
        ("cudaDeviceProp", "regsPerBlock", offset_of!(DeviceProp, regsPerBlock)),
        ("cudaDeviceProp", "warpSize", offset_of!(DeviceProp, warpSize)),
        ("cudaDeviceProp", "memPitch", offset_of!(DeviceProp, memPitch)),
        ("cudaDeviceProp", "maxThreadsPerBlock", offset_of!(DeviceProp, maxThreadsPerBlock)),
        ("cudaDeviceProp", "maxThreadsDim", offset_of!(DeviceProp, maxThreadsDim)),
        ("cudaDeviceProp", "maxGridSize", offset_of!(DeviceProp, maxGridSize)),
        ("cudaDeviceProp", "totalConstMem", offset_of!(DeviceProp, totalConstMem)),
        ("cudaDeviceProp", "major", offset_of!(DeviceProp, major)),
        ("cudaDeviceProp", "minor", offset_of!(DeviceProp, minor)),
        ("cudaDeviceProp", "textureAlignment", offset_of!(DeviceProp, textureAlignment)),
        ("cudaDeviceProp", "texturePitchAlignment", offset_of!(DeviceProp, texturePitchAlignment)),
        ("cudaDeviceProp", "multiProcessorCount", offset_of!(DeviceProp, multiProcessorCount)),
        ("cudaDeviceProp", "integrated", offset_of!(DeviceProp, integrated)),
        ("cudaDeviceProp", "canMapHostMemory", offset_of!(DeviceProp, canMapHostMemory)),
        ("cudaDeviceProp", "maxTexture1D", offset_of!(DeviceProp, maxTexture1D)),
        ("cudaDeviceProp", "maxTexture1DMipmap", offset_of!(DeviceProp, maxTexture1DMipmap)),
        ("cudaDeviceProp", "maxTexture2D", offset_of!(DeviceProp, maxTexture2D)),
        ("cudaDeviceProp", "maxTexture2DMipmap", offset_of!(DeviceProp, maxTexture2DMipmap)),
        ("cudaDeviceProp", "maxTexture2DLinear", offset_of!(DeviceProp, maxTexture2DLinear)),
        ("cudaDeviceProp", "maxTexture2DGather", offset_of!(DeviceProp, maxTexture2DGather)),
        ("cudaDeviceProp", "maxTexture3D", offset_of!(DeviceProp, maxTexture3D)),
        ("cudaDeviceProp", "maxTexture3DAlt", offset_of!(DeviceProp, maxTexture3DAlt)),
        ("cudaDeviceProp", "maxTextureCubemap", offset_of!(DeviceProp, maxTextureCubemap)),
        ("cudaDeviceProp", "maxTexture1DLayered", offset_of!(DeviceProp, maxTexture1DLayered)),
        ("cudaDeviceProp", "maxTexture2DLayered", offset_of!(DeviceProp, maxTexture2DLayered)),
        ("cudaDeviceProp", "maxTextureCubemapLayered", offset_of!(DeviceProp, maxTextureCubemapLayered)),
        ("cudaDeviceProp", "maxSurface1D", offset_of!(DeviceProp, maxSurface1D)),
        ("cudaDeviceProp", "maxSurface2D", offset_of!(DeviceProp, maxSurface2D)),
        ("cudaDeviceProp", "maxSurface3D", offset_of!(DeviceProp, maxSurface3D)),
        ("cudaDeviceProp", "maxSurface1DLayered", offset_of!(DeviceProp, maxSurface1DLayered)),
        ("cudaDeviceProp", "maxSurface2DLayered", offset_of!(DeviceProp, maxSurface2DLayered)),
        ("cudaDeviceProp", "maxSurfaceCubemap", offset_of!(DeviceProp, maxSurfaceCubemap)),
        ("cudaDeviceProp", "maxSurfaceCubemapLayered", offset_of!(DeviceProp, maxSurfaceCubemapLayered)),
        ("cudaDeviceProp", "surfaceAlignment", offset_of!(DeviceProp, surfaceAlignment)),
        ("cudaDeviceProp", "concurrentKernels", offset_of!(DeviceProp, concurrentKernels)),
        ("cudaDeviceProp", "ECCEnabled", offset_of!(DeviceProp, ECCEnabled)),
        ("cudaDeviceProp", "pciBusID", offset_of!(DeviceProp, pciBusID)),
        ("cudaDeviceProp", "pciDeviceID", offset_of!(DeviceProp, pciDeviceID)),
        ("cudaDeviceProp", "pciDomainID", offset_of!(DeviceProp, pciDomainID)),
        ("cudaDeviceProp", "tccDriver", offset_of!(DeviceProp, tccDriver)),
        ("cudaDeviceProp", "asyncEngineCount", offset_of!(DeviceProp, asyncEngineCount)),
        ("cudaDeviceProp", "unifiedAddressing", offset_of!(DeviceProp, unifiedAddressing)),
        ("cudaDeviceProp", "memoryBusWidth", offset_of!(DeviceProp, memoryBusWidth)),
        ("cudaDeviceProp", "l2CacheSize", offset_of!(DeviceProp, l2CacheSize)),
        ("cudaDeviceProp", "persistingL2CacheMaxSize", offset_of!(DeviceProp, persistingL2CacheMaxSize)),
        ("cudaDeviceProp", "maxThreadsPerMultiProcessor", offset_of!(DeviceProp, maxThreadsPerMultiProcessor)),
        ("cudaDeviceProp", "streamPrioritiesSupported", offset_of!(DeviceProp, streamPrioritiesSupported)),
        ("cudaDeviceProp", "globalL1CacheSupported", offset_of!(DeviceProp, globalL1CacheSupported)),
        ("cudaDeviceProp", "localL1CacheSupported", offset_of!(DeviceProp, localL1CacheSupported)),
        ("cudaDeviceProp", "sharedMemPerMultiprocessor", offset_of!(DeviceProp, sharedMemPerMultiprocessor)),
        ("cudaDeviceProp", "regsPerMultiprocessor", offset_of!(DeviceProp, regsPerMultiprocessor)),
        ("cudaDeviceProp", "managedMemory", offset_of!(DeviceProp, managedMemory)),
        ("cudaDeviceProp", "isMultiGpuBoard", offset_of!(DeviceProp, isMultiGpuBoard)),
        ("cudaDeviceProp", "multiGpuBoardGroupID", offset_of!(DeviceProp, multiGpuBoardGroupID)),
        ("cudaDeviceProp", "hostNativeAtomicSupported", offset_of!(DeviceProp, hostNativeAtomicSupported)),
        ("cudaDeviceProp", "pageableMemoryAccess", offset_of!(DeviceProp, pageableMemoryAccess)),
        ("cudaDeviceProp", "concurrentManagedAccess", offset_of!(DeviceProp, concurrentManagedAccess)),
        ("cudaDeviceProp", "computePreemptionSupported", offset_of!(DeviceProp, computePreemptionSupported)),
        ("cudaDeviceProp", "canUseHostPointerForRegisteredMem", offset_of!(DeviceProp, canUseHostPointerForRegisteredMem)),
        ("cudaDeviceProp", "cooperativeLaunch", offset_of!(DeviceProp, cooperativeLaunch)),
        ("cudaDeviceProp", "sharedMemPerBlockOptin", offset_of!(DeviceProp, sharedMemPerBlockOptin)),
        ("cudaDeviceProp", "pageableMemoryAccessUsesHostPageTables", offset_of!(DeviceProp, pageableMemoryAccessUsesHostPageTables)),
        ("cudaDeviceProp", "directManagedMemAccessFromHost", offset_of!(DeviceProp, directManagedMemAccessFromHost)),
        ("cudaDeviceProp", "maxBlocksPerMultiProcessor", offset_of!(DeviceProp, maxBlocksPerMultiProcessor)),
        ("cudaDeviceProp", "accessPolicyMaxWindowSize", offset_of!(DeviceProp, accessPolicyMaxWindowSize)),
        ("cudaDeviceProp", "reservedSharedMemPerBlock", offset_of!(DeviceProp, reservedSharedMemPerBlock)),
        ("cudaDeviceProp", "hostRegisterSupported", offset_of!(DeviceProp, hostRegisterSupported)),
        ("cudaDeviceProp", "sparseCudaArraySupported", offset_of!(DeviceProp, sparseCudaArraySupported)),
        ("cudaDeviceProp", "hostRegisterReadOnlySupported", offset_of!(DeviceProp, hostRegisterReadOnlySupported)),
        ("cudaDeviceProp", "timelineSemaphoreInteropSupported", offset_of!(DeviceProp, timelineSemaphoreInteropSupported)),
        ("cudaDeviceProp", "memoryPoolsSupported", offset_of!(DeviceProp, memoryPoolsSupported)),
        ("cudaDeviceProp", "gpuDirectRDMASupported", offset_of!(DeviceProp, gpuDirectRDMASupported)),
        ("cudaDeviceProp", "gpuDirectRDMAFlushWritesOptions", offset_of!(DeviceProp, gpuDirectRDMAFlushWritesOptions)),
        ("cudaDeviceProp", "gpuDirectRDMAWritesOrdering", offset_of!(DeviceProp, gpuDirectRDMAWritesOrdering)),
        ("cudaDeviceProp", "memoryPoolSupportedHandleTypes", offset_of!(DeviceProp, memoryPoolSupportedHandleTypes)),
        ("cudaDeviceProp", "deferredMappingCudaArraySupported", offset_of!(DeviceProp, deferredMappingCudaArraySupported)),
        ("cudaDeviceProp", "ipcEventSupported", offset_of!(DeviceProp, ipcEventSupported)),
        ("cudaDeviceProp", "clusterLaunch", offset_of!(DeviceProp, clusterLaunch)),
        ("cudaDeviceProp", "unifiedFunctionPointers", offset_of!(DeviceProp, unifiedFunctionPointers)),
        ("cudaDeviceProp", "deviceNumaConfig", offset_of!(DeviceProp, deviceNumaConfig)),
        ("cudaDeviceProp", "deviceNumaId", offset_of!(DeviceProp, deviceNumaId)),
        ("cudaDeviceProp", "mpsEnabled", offset_of!(DeviceProp, mpsEnabled)),
        ("cudaDeviceProp", "hostNumaId", offset_of!(DeviceProp, hostNumaId)),
        ("cudaDeviceProp", "gpuPciDeviceID", offset_of!(DeviceProp, gpuPciDeviceID)),
        ("cudaDeviceProp", "gpuPciSubsystemID", offset_of!(DeviceProp, gpuPciSubsystemID)),
        ("cudaDeviceProp", "hostNumaMultinodeIpcSupported", offset_of!(DeviceProp, hostNumaMultinodeIpcSupported)),
        ("cudaDeviceProp", "reserved", offset_of!(DeviceProp, reserved)),
        ("cudaFuncAttributes", "sizeof", size_of::<FuncAttributes>()),
        ("cudaFuncAttributes", "sharedSizeBytes", offset_of!(FuncAttributes, sharedSizeBytes)),
        ("cudaFuncAttributes", "constSizeBytes", offset_of!(FuncAttributes, constSizeBytes)),
        ("cudaFuncAttributes", "localSizeBytes", offset_of!(FuncAttributes, localSizeBytes)),
        ("cudaFuncAttributes", "maxThreadsPerBlock", offset_of!(FuncAttributes, maxThreadsPerBlock)),
        ("cudaFuncAttributes", "numRegs", offset_of!(FuncAttributes, numRegs)),
        ("cudaFuncAttributes", "ptxVersion", offset_of!(FuncAttributes, ptxVersion)),
        ("cudaFuncAttributes", "binaryVersion", offset_of!(FuncAttributes, binaryVersion)),
        ("cudaFuncAttributes", "cacheModeCA", offset_of!(FuncAttributes, cacheModeCA)),
        ("cudaFuncAttributes", "maxDynamicSharedSizeBytes", offset_of!(FuncAttributes, maxDynamicSharedSizeBytes)),
        ("cudaFuncAttributes", "preferredShmemCarveout", offset_of!(FuncAttributes, preferredShmemCarveout)),
        ("cudaFuncAttributes", "clusterDimMustBeSet", offset_of!(FuncAttributes, clusterDimMustBeSet)),
        ("cudaFuncAttributes", "requiredClusterWidth", offset_of!(FuncAttributes, requiredClusterWidth)),
        ("cudaFuncAttributes", "requiredClusterHeight", offset_of!(FuncAttributes, requiredClusterHeight)),
        ("cudaFuncAttributes", "requiredClusterDepth", offset_of!(FuncAttributes, requiredClusterDepth)),
        ("cudaFuncAttributes", "clusterSchedulingPolicyPreference", offset_of!(FuncAttributes, clusterSchedulingPolicyPreference)),
        ("cudaFuncAttributes", "nonPortableClusterSizeAllowed", offset_of!(FuncAttributes, nonPortableClusterSizeAllowed)),
        ("cudaFuncAttributes", "deviceNodeUpdateStatus", offset_of!(FuncAttributes, deviceNodeUpdateStatus)),
        ("cudaFuncAttributes", "sharedMemoryMode", offset_of!(FuncAttributes, sharedMemoryMode)),
        ("cudaFuncAttributes", "reserved", offset_of!(FuncAttributes, reserved)),
    ];
    for &(s, f, off) in rust {
        let want = h.get(&(s.to_string(), f.to_string())).unwrap_or_else(|| panic!("the header has no {s}::{f}"));
        assert_eq!(off, *want, "{s}::{f}: Rust {off}, header {want}");
    }
    // Every header field is in the Rust struct.
    assert_eq!(h.keys().filter(|(s, _)| s == "cudaDeviceProp" || s == "cudaFuncAttributes").count(), rust.len());
    // The two structs exports.rs keeps private (checked there against these sizes).
    assert_eq!(h[&("cudaPointerAttributes".into(), "sizeof".into())], 88);
    assert_eq!(h[&("cudaLaunchConfig_t".into(), "sizeof".into())], 56);
}
