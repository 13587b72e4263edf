//! Runtime-API programs (`programs/*.cu`) built by nvcc with `-cudart shared`, linked
//! against simtwin's libcudart.so.13 (a `libcudart.so` symlink to it is the only runtime
//! on the link path, so the link also proves our symbol versions are the ones nvcc's code
//! asks for), and run with LD_LIBRARY_PATH=target/simtwin/lib on the emulated driver. Each
//! test checks the program's exit status and the lines it prints: results bit for bit
//! (the programs compare them and print the count of mismatches), and the cudaError_t of
//! each careless call.
//!
//! Needs `scripts/build` to have produced target/simtwin/lib (libcuda.so.1 and
//! libcudart.so.13).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf()
}

fn lib_dir() -> PathBuf {
    let d = root().join("target/simtwin/lib");
    for f in ["libcuda.so.1", "libcudart.so.13"] {
        assert!(d.join(f).exists(), "{} is missing: run scripts/build first", d.join(f).display());
    }
    d
}

/// This process's build directory, holding `link/libcudart.so` -> our libcudart.so.13.
fn out_dir() -> &'static PathBuf {
    static D: OnceLock<PathBuf> = OnceLock::new();
    D.get_or_init(|| {
        let d = root().join("target/cudart-tests").join(format!("run-{}", std::process::id()));
        let link = d.join("link");
        std::fs::create_dir_all(&link).unwrap();
        let so = link.join("libcudart.so");
        let _ = std::fs::remove_file(&so);
        std::os::unix::fs::symlink(lib_dir().join("libcudart.so.13"), &so).unwrap();
        d
    })
}

fn nvcc() -> String {
    let o = Command::new(root().join("scripts/nvcc-path")).output().expect("scripts/nvcc-path");
    String::from_utf8(o.stdout).unwrap().trim().to_string()
}

/// Builds `sources` (relative to the repository) into the executable `name`.
fn build(name: &str, sources: &[&str], extra: &[&str]) -> PathBuf {
    let exe = out_dir().join(name);
    let o = Command::new(nvcc())
        .args(["-arch=sm_90", "-cudart", "shared"])
        .arg("-L")
        .arg(out_dir().join("link"))
        .args(extra)
        .arg("-o")
        .arg(&exe)
        .args(sources.iter().map(|s| root().join(s)))
        .output()
        .expect("nvcc");
    assert!(o.status.success(), "nvcc {name}: {}", String::from_utf8_lossy(&o.stderr));
    exe
}

/// Runs a program on the emulated driver: (exit code, stdout, stderr).
fn run(exe: &Path) -> (Option<i32>, String, String) {
    let o = Command::new(exe).env("LD_LIBRARY_PATH", lib_dir()).env_remove("EMU_CUDA_LOG").output().expect("run");
    (o.status.code(), String::from_utf8_lossy(&o.stdout).into_owned(), String::from_utf8_lossy(&o.stderr).into_owned())
}

/// Builds and runs a program of `programs/`, which must exit 0 and print every line of
/// `expected`.
fn check(name: &str, sources: &[&str], extra: &[&str], expected: &[&str]) -> String {
    let sources: Vec<String> = sources.iter().map(|s| format!("cudart/tests/programs/{s}")).collect();
    let sources: Vec<&str> = sources.iter().map(String::as_str).collect();
    let exe = build(name, &sources, extra);
    let (code, out, err) = run(&exe);
    assert_eq!(code, Some(0), "{name} failed:\n{out}\n{err}");
    for line in expected {
        assert!(out.lines().any(|l| l == *line), "{name}: no line `{line}` in:\n{out}\n{err}");
    }
    out
}

fn objdump_t(path: &Path) -> String {
    let o = Command::new("objdump").arg("-T").arg(path).output().expect("objdump");
    String::from_utf8(o.stdout).unwrap()
}

#[test]
fn every_export_has_the_version_node_and_no_driver_symbol_is_exported() {
    let lib = lib_dir().join("libcudart.so.13");
    let table = objdump_t(&lib);
    let defined: Vec<(&str, &str)> = table
        .lines()
        .filter(|l| l.contains(" g ") && l.contains(".text"))
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            Some((f[f.len() - 2], *f.last()?))
        })
        .collect();
    assert!(defined.len() > 100, "{table}");
    for (version, name) in &defined {
        assert_eq!(*version, "libcudart.so.13", "{name} is not versioned");
        assert!(name.starts_with("cuda") || name.starts_with("__cuda"), "{name} is exported");
    }
    for needed in
        ["__cudaRegisterFatBinary", "__cudaLaunchKernel", "__cudaLaunchKernel_ptsz", "cudaMalloc", "cudaMemcpy_ptds", "cudaLaunchKernelExC"]
    {
        assert!(defined.iter().any(|(_, n)| *n == needed), "{needed} missing");
    }
    let o = Command::new("objdump").arg("-p").arg(&lib).output().unwrap();
    assert!(String::from_utf8_lossy(&o.stdout).contains("SONAME               libcudart.so.13"));
}

#[test]
fn the_emu_driver_runtime_client_runs_when_linked_shared() {
    let exe = build("runtime_client", &["emu-driver/tests/clients/runtime_client.cu"], &[]);
    let imports = objdump_t(&exe);
    assert!(imports.contains("(libcudart.so.13) cudaMalloc"), "{imports}");
    let (code, out, err) = run(&exe);
    assert_eq!(code, Some(0), "{out}\n{err}");
    assert_eq!(out.trim(), "runtime_client: no error");
}

#[test]
fn memory_launches_and_error_codes() {
    check(
        "basics",
        &["basics.cu"],
        &[],
        &[
            "runtime version: 13050",
            "axpy mismatches: 0",
            "iota mismatches: 0",
            "attributes of device memory: type 2 device 0",
            "attributes of pinned memory: type 1",
            "attributes of unregistered memory: type 0",
            "attributes of managed memory: type 3",
            "2D mismatches: 0",
            "memcpy2D with a pitch narrower than a row: cudaErrorInvalidPitchValue",
            "last error of the pitch error: cudaErrorInvalidPitchValue",
            "last error after success: cudaSuccess",
            "memcpy to a bad device pointer: cudaErrorInvalidValue",
            "last error after it: cudaErrorInvalidValue",
            "last error read again: cudaSuccess",
            "host-to-host memcpy: cudaSuccess",
            "memcpy host to device named DeviceToHost: cudaErrorInvalidValue",
            "memcpy from NULL: cudaErrorInvalidValue",
            "memcpy to NULL: cudaErrorInvalidValue",
            "memcpy with kind 9: cudaErrorInvalidMemcpyDirection",
            "free of a pointer never allocated: cudaErrorInvalidValue",
            "set device 99: cudaErrorInvalidDevice",
            "malloc into NULL: cudaErrorInvalidValue",
            "peek after a launch of 2048 threads: cudaErrorInvalidValue",
            "last error after it: cudaErrorInvalidValue",
            "then: cudaSuccess",
            "launch of a host function: cudaErrorInvalidResourceHandle",
            "synchronize after the errors: cudaSuccess",
            "error string: invalid argument",
            "error string of 12345: unrecognized error code",
            "basics: done",
        ],
    );
}

#[test]
fn device_constant_and_managed_symbols() {
    check(
        "symbols",
        &["symbols.cu"],
        &[],
        &[
            "size of coeffs: 16",
            "size of unused_var: 8",
            "polynomial mismatches: 0",
            "counters: 8 8 8 8 8 8 8 8",
            "managed total: 2016",
            "counters[7] after an offset copy: 41",
            "copy past the end of counters: cudaErrorInvalidValue",
            "copy to a symbol never registered: cudaErrorInvalidSymbol",
            "copy to a symbol with kind DeviceToHost: cudaErrorInvalidMemcpyDirection",
            "coeffs[3] after async copies: 3",
            "symbols: done",
        ],
    );
}

#[test]
fn streams_events_and_host_callbacks() {
    check(
        "streams",
        &["streams.cu"],
        &[],
        &[
            "flags of a non-blocking stream: 1",
            "query of a finished stream: cudaSuccess",
            "query of a recorded event: cudaSuccess",
            "elapsed time is a number >= 0: 1",
            "elapsed time from an event without timing: cudaErrorInvalidResourceHandle",
            "stream results mismatches: 0",
            "callbacks: 4 with status cudaSuccess, host functions: 40",
            "destroy of the legacy stream: cudaErrorInvalidResourceHandle",
            "streams: done",
        ],
    );
}

#[test]
fn per_thread_default_stream_program() {
    check(
        "ptds",
        &["ptds.cu"],
        &["--default-stream", "per-thread"],
        &["threads: 0 0 0 0", "per-thread stream query: cudaSuccess", "ptds: done"],
    );
    let imports = objdump_t(&out_dir().join("ptds"));
    for name in ["__cudaLaunchKernel_ptsz", "cudaMemcpyAsync_ptsz", "cudaMemcpy_ptds", "cudaMemset_ptds", "cudaStreamSynchronize_ptsz"] {
        assert!(imports.contains(&format!("(libcudart.so.13) {name}")), "the program does not call {name}:\n{imports}");
    }
}

#[test]
fn two_translation_units_both_registered() {
    check("mtu", &["mtu_a.cu", "mtu_b.cu"], &[], &["two translation units: mismatches 0"]);
}

#[test]
fn launch_api_attributes_occupancy_and_cooperative_launch() {
    check(
        "launch",
        &["launch.cu"],
        &[],
        &[
            "cudaLaunchKernel sum matches: 1",
            "cudaLaunchKernelEx sum matches: 1",
            "sum: maxThreadsPerBlock 256, ptxVersion>0 1",
            "sum: maxDynamicSharedSizeBytes 65536",
            "attributes of a host function: cudaErrorInvalidResourceHandle",
            "launch beyond the kernel's launch bounds: cudaErrorInvalidValue",
            "occupancy blocks > 0: 1",
            "potential block size in (0, 256]: 1",
            "cooperative launch: every element is the total: 1",
            "launch: done",
        ],
    );
}

#[test]
fn an_execution_error_is_sticky() {
    check(
        "sticky",
        &["sticky.cu"],
        &[],
        &[
            "launch: cudaSuccess",
            "synchronize: cudaErrorIllegalAddress",
            "last error: cudaErrorIllegalAddress",
            "a later malloc: cudaErrorIllegalAddress",
            "a later synchronize: cudaErrorIllegalAddress",
        ],
    );
}

#[test]
fn device_properties_agree_with_attributes_and_reset_starts_again() {
    check(
        "props",
        &["props.cu"],
        &[],
        &[
            "name: NVIDIA H200",
            "compute capability: 9.0, SMs: 132, warp: 32, totalGlobalMem > 0: 1",
            "properties of device 7: cudaErrorInvalidDevice",
            "attribute of device -1: cudaErrorInvalidDevice",
            "props: done",
        ],
    );
}

#[test]
fn arrays_texture_and_surface_objects() {
    check(
        "textures",
        &["textures.cu"],
        &["-Xcompiler", "-Wno-deprecated-declarations"],
        &[
            "channel desc of float: 32 0 0 0 kind 2",
            "array round trip mismatches: 0",
            "row from offset matches: 1",
            "linear sampling at texel centres mismatches: 0",
            "halfway sample: 306.8750 (texels 306.2500 and 307.5000)",
            "halfway between 0.0000 and 1.2500: 0.6250",
            "surface write mismatches: 0",
            "pitched texture mismatches: 0",
            "layered sampling mismatches: 0",
            "layered array info: 16x0x3 flags 1, 32-bit kind 2",
            "array of 3 channels: cudaErrorInvalidChannelDescriptor",
            "textures: done",
        ],
    );
}

#[test]
fn stream_capture_graphs_async_allocator_and_driver_entry_points() {
    check(
        "graphs",
        &["graphs.cu"],
        &[],
        &[
            "capturing: 1",
            "capturing after the end: 0",
            "captured work did not run: 1",
            "graph launched three times: mismatches 0, host calls 3",
            "graph of 5 nodes built by hand: mismatches 0, host calls 1",
            "kernel node of a host function: cudaErrorInvalidResourceHandle",
            "driver entry point: status 0, device counts agree: 1",
            "unknown entry point: status 1, null: 1",
            "graphs: done",
        ],
    );
}

#[test]
fn relocatable_device_code_linked_across_translation_units() {
    check("rdc", &["rdc_a.cu", "rdc_b.cu"], &["-rdc=true"], &["relocatable device code: mismatches 0"]);
}
