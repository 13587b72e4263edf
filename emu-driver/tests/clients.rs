//! Unmodified client programs on the emulated driver: a C program using nv-codec-headers'
//! loader (emu-driver/tests/clients/ffnv_client.c) and a cudarc safe-API program
//! (emu-driver/tests/clients/cudarc-client), each run as a subprocess with
//! LD_LIBRARY_PATH=target/simtwin/lib. Checks their exit status and output, and the
//! counters they leave in EMU_CUDA_COUNTS. Also checks that the driver exports every entry
//! point the two client libraries can resolve (emu-driver/tests/data/client-symbols.txt).
//!
//! Needs `scripts/build` to have produced target/simtwin/.

mod client_support;
use client_support::{root, run_ok, simtwin};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

const N: u64 = 4096;

/// target/clients: kernels.fatbin (nvcc), kernels/ (kernels-host). Built once.
fn kernels() -> &'static PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let root = root();
        // One directory per test process: nextest runs the tests in parallel processes.
        let out = root.join("target/clients").join(format!("run-{}", std::process::id()));
        std::fs::create_dir_all(&out).unwrap();
        let src = root.join("emu-driver/tests/clients/kernels.cu");
        let nvcc = Command::new(root.join("scripts/nvcc-path")).output().expect("scripts/nvcc-path");
        let nvcc = String::from_utf8(nvcc.stdout).unwrap().trim().to_string();
        run_ok(
            Command::new(&nvcc)
                .arg("-fatbin")
                .arg("-o")
                .arg(out.join("kernels.fatbin"))
                .args(["-gencode", "arch=compute_90,code=sm_90", "-gencode", "arch=compute_80,code=compute_80"])
                .arg(&src),
            "nvcc kernels.cu",
        );
        let _ = std::fs::remove_dir_all(out.join("kernels"));
        run_ok(
            Command::new(simtwin("bin/kernels-host")).arg("build").arg("-o").arg(out.join("kernels")).arg(&src),
            "kernels-host build kernels.cu",
        );
        out
    })
}

/// Runs a client under the emulated driver; returns its output and counters.
fn run_client(exe: &Path, tag: &str) -> (Output, Value) {
    let dir = kernels();
    let counts = dir.join(format!("{tag}-counts.json"));
    let _ = std::fs::remove_file(&counts);
    let start = std::time::Instant::now();
    let o = Command::new(exe)
        .arg(dir.join("kernels.fatbin"))
        .env("LD_LIBRARY_PATH", simtwin("lib"))
        .env("EMU_CUDA_KERNELS", dir.join("kernels"))
        .env("EMU_CUDA_COUNTS", &counts)
        .output()
        .unwrap_or_else(|e| panic!("run {}: {e}", exe.display()));
    let elapsed_ns = start.elapsed().as_nanos() as u64;
    let text = std::fs::read_to_string(&counts).unwrap_or_else(|e| {
        panic!(
            "{tag}: no counters at {} ({e}); status {}\n{}\n{}",
            counts.display(),
            o.status,
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        )
    });
    let c: Value = serde_json::from_str(&text).expect("counters JSON");
    // The emulated driver times every launch it runs for the counters file: nanoseconds,
    // within the client's own run.
    let run_ns: u64 = c["launches"].as_object().map_or(0, |l| l.values().filter_map(|v| v["run_ns"].as_u64()).sum());
    assert!(run_ns > 0 && run_ns < elapsed_ns, "{tag}: launches' run_ns {run_ns} against the run's {elapsed_ns} ns: {}", c["launches"]);
    (o, c)
}

fn check_common(tag: &str, o: &Output, c: &Value, htod: (u64, u64), dtoh: (u64, u64)) {
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{tag} exited {}:\n{stdout}\n{}", o.status, String::from_utf8_lossy(&o.stderr));
    assert!(stdout.contains("all results match"), "{tag} output:\n{stdout}");
    assert!(!stdout.contains("MISMATCH"), "{tag} output:\n{stdout}");
    for k in ["warp_scan: ok", "block_total: ok", "ballot_stats: ok", "weigh: ok"] {
        assert!(stdout.contains(k), "{tag}: no {k:?} in\n{stdout}");
    }
    assert_eq!(c["schema"], "simtwin-counts/2", "{tag} counters schema");
    for k in ["warp_scan", "block_total", "ballot_stats", "weigh"] {
        assert_eq!(c["launches"][k]["count"], 1, "{tag}: launches of {k}: {}", c["launches"]);
        assert!(c["launches"][k]["run_ns"].as_u64().is_some_and(|n| n > 0), "{tag}: run_ns of {k}: {}", c["launches"]);
    }
    assert_eq!(c["launches"].as_object().unwrap().len(), 4, "{tag}: launches {}", c["launches"]);
    let pair = |d: &str| (c["copies"][d]["count"].as_u64().unwrap(), c["copies"][d]["bytes"].as_u64().unwrap());
    assert_eq!(pair("HtoD"), htod, "{tag}: HtoD (count, bytes)");
    assert_eq!(pair("DtoH"), dtoh, "{tag}: DtoH (count, bytes)");
    assert_eq!(pair("DtoD"), (0, 0), "{tag}: DtoD");
    assert_eq!(c["unsupported"], serde_json::json!({}), "{tag}: unsupported entry points hit");
    assert_eq!(c["hazards"], serde_json::json!([]), "{tag}: hazards");
}

#[test]
fn ffnv_loader_client() {
    let out = kernels().join("ffnv_client");
    run_ok(
        Command::new("cc")
            .args(["-O1", "-Wall", "-Werror", "-o"])
            .arg(&out)
            .arg(root().join("emu-driver/tests/clients/ffnv_client.c"))
            .arg("-ldl"),
        "cc ffnv_client.c",
    );
    let (o, c) = run_client(&out, "ffnv");
    // HtoD: the input (async) and the replaced weights. DtoH: the initial weights, the
    // scan, the total (u64), the 3 counters and the weighed values.
    check_common("ffnv_client", &o, &c, (2, N * 4 + 64), (5, 64 + N * 4 + 8 + 12 + N * 4));
    for (name, n) in [
        ("cuModuleGetGlobal_v2", 1),
        ("cuStreamWaitEvent", 1),
        ("cuStreamCreateWithPriority", 1),
        ("cuMemHostAlloc", 1),
        ("cuMemFreeHost", 1),
        ("cuCtxSynchronize", 1),
        ("cuLaunchKernel", 4),
    ] {
        assert_eq!(c["calls"][name], n, "ffnv_client: calls of {name}");
    }
    // The legacy cuModuleGetGlobal the loader resolves is never called by the client.
    assert!(c["calls"].get("cuModuleGetGlobal").is_none(), "legacy cuModuleGetGlobal was called");
}

#[test]
fn cudarc_safe_api_client() {
    let dir = root().join("emu-driver/tests/clients/cudarc-client");
    let target = root().join("target/clients/cudarc-target");
    let build = |offline: bool| {
        let mut cmd = Command::new(env!("CARGO"));
        cmd.args(["build", "--release", "--locked", "--quiet"]).current_dir(&dir).env("CARGO_TARGET_DIR", &target);
        if offline {
            cmd.arg("--offline");
        }
        cmd.status().map(|s| s.success()).unwrap_or(false)
    };
    assert!(build(true) || build(false), "cargo build of emu-driver/tests/clients/cudarc-client failed");
    let (o, c) = run_client(&target.join("release/cudarc-client"), "cudarc");
    // HtoD: the input. DtoH: scan, total, counters, weighed values.
    check_common("cudarc-client", &o, &c, (1, N * 4), (4, N * 4 + 8 + 12 + N * 4));
    // With memory pools reported, cudarc allocates stream-ordered.
    assert_eq!(c["calls"]["cuMemAllocAsync"], 4 + 1, "cudarc-client: cuMemAllocAsync calls");
    assert_eq!(c["calls"]["cuMemFreeAsync"], 5, "cudarc-client: cuMemFreeAsync calls");
}

#[test]
fn driver_exports_every_client_symbol() {
    let list = root().join("emu-driver/tests/data/client-symbols.txt");
    let text = std::fs::read_to_string(&list).unwrap_or_else(|e| panic!("{}: {e}", list.display()));
    let names: Vec<&str> =
        text.lines().filter(|l| !l.trim().is_empty() && !l.starts_with('#')).map(|l| l.split_whitespace().next().unwrap()).collect();
    assert!(names.len() > 100, "{} lists only {} names", list.display(), names.len());
    for must in ["cuInit", "cuModuleGetGlobal", "cuModuleGetGlobal_v2", "cuMemAllocAsync", "cuLaunchKernel"] {
        assert!(names.contains(&must), "{must} not in {}", list.display());
    }
    let lib_path = simtwin("lib/libcuda.so.1");
    // SAFETY: loading the emulated driver runs only its own initialisers.
    let lib = unsafe { libloading::Library::new(&lib_path) }.expect("load libcuda.so.1");
    let missing: Vec<&str> = names
        .iter()
        .copied()
        .filter(|n| {
            let mut z = n.as_bytes().to_vec();
            z.push(0);
            // SAFETY: only the address is looked up.
            unsafe { lib.get::<*mut std::ffi::c_void>(z.as_slice()) }.is_err()
        })
        .collect();
    assert!(missing.is_empty(), "{} does not export: {missing:?}", lib_path.display());
}

/// A CUDA runtime-API program (cudart looks cuGetExportTable up through cuGetProcAddress
/// and fails its first call with "API call is not supported in the installed CUDA
/// driver", naming nothing): the emulated driver says which part is missing and why.
#[test]
fn a_runtime_api_program_is_told_why_it_fails() {
    let root = root();
    let out = root.join("target/clients").join(format!("runtime-{}", std::process::id()));
    std::fs::create_dir_all(&out).unwrap();
    let nvcc = Command::new(root.join("scripts/nvcc-path")).output().expect("scripts/nvcc-path");
    let nvcc = String::from_utf8(nvcc.stdout).unwrap().trim().to_string();
    let exe = out.join("runtime_client");
    run_ok(
        Command::new(&nvcc).arg("-arch=sm_90").arg("-o").arg(&exe).arg(root.join("emu-driver/tests/clients/runtime_client.cu")),
        "nvcc runtime_client.cu",
    );
    let o = Command::new(&exe).env("LD_LIBRARY_PATH", simtwin("lib")).env_remove("EMU_CUDA_LOG").output().expect("run runtime_client");
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(3), "the first runtime call fails: {err}");
    assert!(err.contains("cuGetExportTable: the driver's private tables are not emulated"), "no reason given:\n{err}");
    assert!(err.contains("-cudart shared"), "the warning says how to run it: {err}");
    assert!(err.contains("libcudart.so.13"), "{err}");
}
