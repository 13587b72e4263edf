//! `simtwin_abi::cuda` against the pinned toolkit's cuda.h (the one `scripts/nvcc-path
//! --include` finds, as scripts/setup installs it): every result code of cuda.h, in its
//! order and with its value; every integer constant of cuda.rs; the size, alignment and
//! every field offset of each struct, checked by a C program compiled against cuda.h.

use simtwin_abi::cuda::*;
use std::mem::{align_of, offset_of, size_of};
use std::path::{Path, PathBuf};
use std::process::Command;

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf()
}

/// The include directory holding the pinned toolkit's cuda.h, as the workspace's one
/// finder says (`scripts/nvcc-path --include`).
fn cuda_include() -> PathBuf {
    let out = Command::new(workspace().join("scripts/nvcc-path")).arg("--include").output().expect("run scripts/nvcc-path");
    assert!(out.status.success(), "no CUDA toolkit (scripts/setup installs it): {}", String::from_utf8_lossy(&out.stderr));
    PathBuf::from(String::from_utf8_lossy(&out.stdout).trim())
}

#[test]
fn every_result_code_of_cuda_h_is_listed_once_with_its_value() {
    let h = std::fs::read_to_string(cuda_include().join("cuda.h")).unwrap();
    let start = h.find("typedef enum cudaError_enum {").expect("cudaError_enum in cuda.h");
    let body = &h[start..start + h[start..].find("} CUresult;").unwrap()];
    let mut from_h = Vec::new();
    for line in body.lines() {
        let t = line.trim();
        if let Some((name, rest)) = t.split_once('=') {
            let name = name.trim();
            if name.starts_with("CUDA_") {
                let v: u32 = rest.trim().trim_end_matches(',').trim().parse().unwrap_or_else(|_| panic!("cuda.h: {t}"));
                from_h.push((v, name.to_string()));
            }
        }
    }
    let ours: Vec<(u32, String)> = RESULTS.iter().map(|r| (r.0, r.1.trim_end_matches('\0').to_string())).collect();
    assert!(from_h.len() > 100, "{} codes read from cuda.h", from_h.len());
    assert_eq!(ours, from_h);
    for r in RESULTS {
        assert!(r.1.ends_with('\0') && r.2.is_none_or(|d| d.ends_with('\0') && d.len() > 1), "{r:?}");
    }
    assert_eq!(CUDA_ERROR_LAUNCH_FAILED, 719);
}

/// (Rust name, C type, size, alignment, [(C member, offset)]).
type Layout = (&'static str, &'static str, usize, usize, Vec<(&'static str, usize)>);

macro_rules! layout {
    ($t:ident as $c:literal { $($f:ident => $cf:literal),* $(,)? }) => {
        (stringify!($t), $c, size_of::<$t>(), align_of::<$t>(), vec![$(($cf, offset_of!($t, $f))),*])
    };
}

fn layouts() -> Vec<Layout> {
    vec![
        layout!(CUDA_MEMCPY2D as "CUDA_MEMCPY2D" {
            src_x_in_bytes => "srcXInBytes", src_y => "srcY", src_memory_type => "srcMemoryType", src_host => "srcHost",
            src_device => "srcDevice", src_array => "srcArray", src_pitch => "srcPitch", dst_x_in_bytes => "dstXInBytes",
            dst_y => "dstY", dst_memory_type => "dstMemoryType", dst_host => "dstHost", dst_device => "dstDevice",
            dst_array => "dstArray", dst_pitch => "dstPitch", width_in_bytes => "WidthInBytes", height => "Height",
        }),
        layout!(CUDA_MEMCPY3D as "CUDA_MEMCPY3D" {
            src_x_in_bytes => "srcXInBytes", src_y => "srcY", src_z => "srcZ", src_lod => "srcLOD",
            src_memory_type => "srcMemoryType", src_host => "srcHost", src_device => "srcDevice", src_array => "srcArray",
            reserved0 => "reserved0", src_pitch => "srcPitch", src_height => "srcHeight", dst_x_in_bytes => "dstXInBytes",
            dst_y => "dstY", dst_z => "dstZ", dst_lod => "dstLOD", dst_memory_type => "dstMemoryType", dst_host => "dstHost",
            dst_device => "dstDevice", dst_array => "dstArray", reserved1 => "reserved1", dst_pitch => "dstPitch",
            dst_height => "dstHeight", width_in_bytes => "WidthInBytes", height => "Height", depth => "Depth",
        }),
        layout!(CUuuid as "CUuuid" { bytes => "bytes" }),
        layout!(CUDA_KERNEL_NODE_PARAMS_v2 as "CUDA_KERNEL_NODE_PARAMS_v2" {
            func => "func", grid_dim_x => "gridDimX", grid_dim_y => "gridDimY", grid_dim_z => "gridDimZ",
            block_dim_x => "blockDimX", block_dim_y => "blockDimY", block_dim_z => "blockDimZ",
            shared_mem_bytes => "sharedMemBytes", kernel_params => "kernelParams", extra => "extra", kern => "kern", ctx => "ctx",
        }),
        layout!(CUDA_KERNEL_NODE_PARAMS_v1 as "CUDA_KERNEL_NODE_PARAMS_v1" {
            func => "func", grid_dim_x => "gridDimX", shared_mem_bytes => "sharedMemBytes", kernel_params => "kernelParams", extra => "extra",
        }),
        layout!(CUDA_MEMSET_NODE_PARAMS as "CUDA_MEMSET_NODE_PARAMS" {
            dst => "dst", pitch => "pitch", value => "value", element_size => "elementSize", width => "width", height => "height",
        }),
        layout!(CUDA_HOST_NODE_PARAMS as "CUDA_HOST_NODE_PARAMS" { func => "fn", user_data => "userData" }),
        layout!(CUDA_GRAPH_INSTANTIATE_PARAMS as "CUDA_GRAPH_INSTANTIATE_PARAMS" {
            flags => "flags", h_upload_stream => "hUploadStream", h_err_node_out => "hErrNode_out", result_out => "result_out",
        }),
        layout!(CUgraphExecUpdateResultInfo as "CUgraphExecUpdateResultInfo" {
            result => "result", error_node => "errorNode", error_from_node => "errorFromNode",
        }),
        layout!(CUlaunchConfig as "CUlaunchConfig" {
            grid_dim_x => "gridDimX", grid_dim_y => "gridDimY", grid_dim_z => "gridDimZ", block_dim_x => "blockDimX",
            block_dim_y => "blockDimY", block_dim_z => "blockDimZ", shared_mem_bytes => "sharedMemBytes", h_stream => "hStream",
            attrs => "attrs", num_attrs => "numAttrs",
        }),
        layout!(CUlaunchAttribute as "CUlaunchAttribute" { id => "id", pad => "pad", value => "value" }),
        layout!(CUctxCreateParams as "CUctxCreateParams" {
            exec_affinity_params => "execAffinityParams", num_exec_affinity_params => "numExecAffinityParams", cig_params => "cigParams",
        }),
        layout!(CUmemLocation as "CUmemLocation" { type_ => "type", id => "id" }),
        layout!(CUmemAllocationProp as "CUmemAllocationProp" {
            type_ => "type", requested_handle_types => "requestedHandleTypes", location => "location",
            win32_handle_meta_data => "win32HandleMetaData", compression_type => "allocFlags.compressionType",
            gpu_direct_rdma_capable => "allocFlags.gpuDirectRDMACapable", usage => "allocFlags.usage", reserved => "allocFlags.reserved",
        }),
        layout!(CUmemAccessDesc as "CUmemAccessDesc" { location => "location", flags => "flags" }),
        layout!(CUdevprop as "CUdevprop" {
            max_threads_per_block => "maxThreadsPerBlock", max_threads_dim => "maxThreadsDim", max_grid_size => "maxGridSize",
            shared_mem_per_block => "sharedMemPerBlock", total_constant_memory => "totalConstantMemory", simd_width => "SIMDWidth",
            mem_pitch => "memPitch", regs_per_block => "regsPerBlock", clock_rate => "clockRate", texture_align => "textureAlign",
        }),
        layout!(CUDA_ARRAY_DESCRIPTOR as "CUDA_ARRAY_DESCRIPTOR" {
            width => "Width", height => "Height", format => "Format", num_channels => "NumChannels",
        }),
        layout!(CUDA_ARRAY3D_DESCRIPTOR as "CUDA_ARRAY3D_DESCRIPTOR" {
            width => "Width", height => "Height", depth => "Depth", format => "Format", num_channels => "NumChannels", flags => "Flags",
        }),
        layout!(CUDA_RESOURCE_DESC as "CUDA_RESOURCE_DESC" { res_type => "resType", res => "res", flags => "flags" }),
        layout!(CUDA_TEXTURE_DESC as "CUDA_TEXTURE_DESC" {
            address_mode => "addressMode", filter_mode => "filterMode", flags => "flags", max_anisotropy => "maxAnisotropy",
            mipmap_filter_mode => "mipmapFilterMode", mipmap_level_bias => "mipmapLevelBias",
            min_mipmap_level_clamp => "minMipmapLevelClamp", max_mipmap_level_clamp => "maxMipmapLevelClamp",
            border_color => "borderColor", reserved => "reserved",
        }),
        layout!(CUDA_RESOURCE_VIEW_DESC as "CUDA_RESOURCE_VIEW_DESC" {
            format => "format", width => "width", height => "height", depth => "depth", first_mipmap_level => "firstMipmapLevel",
            last_mipmap_level => "lastMipmapLevel", first_layer => "firstLayer", last_layer => "lastLayer", reserved => "reserved",
        }),
    ]
}

/// The integer constants of cuda.rs (`pub const NAME: T = literal;`), read from its text.
fn constants() -> Vec<(String, i64)> {
    let src = std::fs::read_to_string(workspace().join("abi/src/cuda.rs")).unwrap();
    let mut out = Vec::new();
    for line in src.lines() {
        let Some(rest) = line.trim().strip_prefix("pub const ") else { continue };
        let (name, rest) = rest.split_once(':').unwrap();
        let v = rest.split_once('=').unwrap().1.trim().trim_end_matches(';').replace('_', "");
        let v = if let Some(h) = v.strip_prefix("0x") { i64::from_str_radix(h, 16).ok() } else { v.parse::<i64>().ok() };
        if let Some(v) = v {
            out.push((name.to_string(), v));
        }
    }
    out
}

#[test]
fn every_struct_and_constant_matches_cuda_h() {
    let mut c = String::from("#include <stddef.h>\n#include <cuda.h>\n#define CHECK(e) _Static_assert(e, #e)\n");
    let all = layouts();
    for (_, ct, size, align, fields) in &all {
        c += &format!("CHECK(sizeof({ct}) == {size});\nCHECK(_Alignof({ct}) == {align});\n");
        for (f, off) in fields {
            c += &format!("CHECK(offsetof({ct}, {f}) == {off});\n");
        }
    }
    let consts = constants();
    assert!(consts.len() >= 60, "{} constants read from cuda.rs", consts.len());
    for (name, v) in &consts {
        c += &format!("CHECK((long long){name} == {v}LL);\n");
    }
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("layout.c");
    std::fs::write(&file, &c).unwrap();
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    let out =
        Command::new(&cc).arg("-fsyntax-only").arg("-std=c11").arg("-I").arg(cuda_include()).arg(&file).output().expect("a C compiler");
    let errors: Vec<&str> = std::str::from_utf8(&out.stderr).unwrap().lines().filter(|l| l.contains("error")).collect();
    assert!(out.status.success() && errors.is_empty(), "cuda.rs differs from cuda.h:\n{}", errors.join("\n"));
    // The check has teeth: a wrong number is refused.
    std::fs::write(&file, format!("#include <cuda.h>\n_Static_assert(sizeof(CUDA_MEMCPY2D) == {}, \"size\");\n", all[0].2 + 8)).unwrap();
    let out = Command::new(&cc).arg("-fsyntax-only").arg("-I").arg(cuda_include()).arg(&file).output().unwrap();
    assert!(!out.status.success(), "a wrong size was not refused");
}
