//! The entry-point sweep: a C program (tests/sweep/sweep.c) linked against the emulated
//! libcuda.so.1 calls the entry points that the conformance cases and the two clients
//! leave out (device queries, context getters and setters, pools, managed and registered
//! memory, 2D copies and memsets, module/function queries, occupancy, stream and event
//! getters, callbacks), checking answers and effects. Needs target/simtwin (scripts/build).

mod client_support;
use client_support::{root, run_ok};
use serde_json::Value;
use std::process::Command;

#[test]
fn sweep_of_the_remaining_entry_points_holds() {
    let root = root();
    let lib = root.join("target/simtwin/lib");
    assert!(lib.join("libcuda.so.1").exists(), "{} missing: run scripts/build", lib.display());
    let dir = root.join("target/sweep").join(format!("run-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let nvcc = Command::new(root.join("scripts/nvcc-path")).output().expect("scripts/nvcc-path");
    assert!(nvcc.status.success(), "nvcc not found (scripts/setup)");
    let nvcc = String::from_utf8(nvcc.stdout).unwrap().trim().to_string();
    let src = root.join("emu-driver/tests/clients/kernels.cu");
    let fatbin = dir.join("kernels.fatbin");
    run_ok(
        Command::new(nvcc)
            .arg("-fatbin")
            .arg("-o")
            .arg(&fatbin)
            .args(["-gencode", "arch=compute_90,code=sm_90", "-gencode", "arch=compute_80,code=compute_80"])
            .arg(&src),
        "nvcc kernels.cu",
    );
    run_ok(
        Command::new(root.join("target/simtwin/bin/kernels-host")).arg("build").arg("-o").arg(dir.join("kernels")).arg(&src),
        "kernels-host build",
    );
    let exe = dir.join("sweep");
    run_ok(
        Command::new("cc")
            .args(["-O1", "-Wall", "-Werror", "-o"])
            .arg(&exe)
            .arg(root.join("emu-driver/tests/sweep/sweep.c"))
            .arg(format!("-L{}", lib.display()))
            .arg("-l:libcuda.so.1"),
        "cc sweep.c",
    );
    let counts = dir.join("counts.json");
    let o = Command::new(&exe)
        .arg(&fatbin)
        .env("LD_LIBRARY_PATH", &lib)
        .env("EMU_CUDA_KERNELS", dir.join("kernels"))
        .env("EMU_CUDA_COUNTS", &counts)
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success() && out.contains("sweep: all checks hold"),
        "sweep failed ({}):\n{out}\n{}",
        o.status,
        String::from_utf8_lossy(&o.stderr)
    );
    let c: Value = serde_json::from_str(&std::fs::read_to_string(&counts).expect("counters written at exit")).unwrap();
    assert_eq!(c["unsupported"], serde_json::json!({}), "no unimplemented entry point was hit");
    // Every entry point the program names was really called (one count each at least).
    let text = std::fs::read_to_string(root.join("emu-driver/tests/sweep/sweep.c")).unwrap();
    for line in text.lines().filter(|l| l.starts_with("X(CUresult, ")) {
        let name = line.trim_start_matches("X(CUresult, ").split(',').next().unwrap().trim();
        assert!(c["calls"][name].as_u64().unwrap_or(0) >= 1, "{name} was not called: {}", c["calls"]);
    }
    assert!(c["copies"]["HtoD"]["count"].as_u64().unwrap() >= 2 && c["copies"]["DtoH"]["count"].as_u64().unwrap() >= 8, "{}", c["copies"]);
    // The 24 memsets that succeed, with their bytes (16+16+32 for the 1D forms, 400+40+80
    // and 20+40+80 for the 2D ones, 16+32+16+32 and 16+16+20+40+80+20+40+80 for the
    // per-thread-stream variants, 2x256 clearing the scan output, 16 into virtual
    // memory); the refused ones move nothing.
    assert_eq!(c["launches"]["warp_scan"]["count"].as_u64(), Some(3), "{}", c["launches"]);
    assert_eq!((c["memsets"]["count"].as_u64(), c["memsets"]["bytes"].as_u64()), (Some(24), Some(1660)), "{}", c["memsets"]);
}

/// Every implemented (and legacy) entry point of ENTRY_POINTS.md is called by at least
/// one test program: this sweep, the conformance runner, or the C clients.
#[test]
fn every_implemented_entry_point_is_exercised_by_a_test_program() {
    let root = root();
    let list = std::fs::read_to_string(root.join("emu-driver/ENTRY_POINTS.md")).unwrap();
    let implemented = list.split("## Exported").next().unwrap();
    let names: Vec<&str> = implemented.lines().filter_map(|l| l.strip_prefix("- `")?.strip_suffix('`')).collect();
    assert!(names.len() > 150, "{} names", names.len());
    let mut text = String::new();
    for f in [
        "emu-driver/tests/sweep/sweep.c",
        "emu-driver/conformance/src/api.rs",
        "emu-driver/conformance/src/cases.rs",
        "emu-driver/conformance/src/cases/vmm.rs",
        "emu-driver/conformance/src/cases/texture.rs",
        "emu-driver/tests/clients/ffnv_client.c",
        "emu-driver/tests/clients/vmm_client.c",
        "emu-driver/tests/ptx_mode/link_client.c",
        "emu-driver/tests/graphs/client.c",
        "emu-driver/tests/coop/client.c",
    ] {
        text += &std::fs::read_to_string(root.join(f)).unwrap();
    }
    let words: std::collections::HashSet<&str> = text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).collect();
    let missing: Vec<&&str> = names.iter().filter(|n| !words.contains(**n)).collect();
    assert!(missing.is_empty(), "entry points no test program calls: {missing:?}");
}
