//! The pinned toolkit's cuda.h against the emulated driver:
//!
//! - every function cuda.h declares is exported under every name a program can link
//!   against (the plain and `_v2`/`_v3` forms, the per-thread-default-stream `_ptds`/
//!   `_ptsz` forms, and the legacy names cuda.h declares for the driver's own build), as
//!   the real libcuda.so.1 exports them;
//! - a client compiled against that cuda.h and linked directly against libcuda.so.1 (no
//!   dlopen: cuMemCreate, cuMemMap, ... resolve at load time) uses the virtual-memory API
//!   (emu-driver/tests/clients/vmm_client.c): one physical allocation mapped three times,
//!   a fixture kernel writing through one view and the results read through the others,
//!   the allocation exported as a file descriptor to a child process.
//!
//! Both need the toolkit's headers (scripts/setup installs the PyPI nvcc); without one
//! they say so and pass. They need target/simtwin (scripts/build).

mod client_support;

use client_support::{cuda_include, fatbin, host_twins, root, run_ok, simtwin, text};
use serde_json::Value;
use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;

/// The function names cuda.h declares, preprocessed as a program sees them (no
/// definitions), with CUDA_API_PER_THREAD_DEFAULT_STREAM, and as the driver's own build
/// sees them (__CUDA_API_VERSION_INTERNAL: the legacy names too).
fn declared(cuda_h: &Path) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    for define in [None, Some("-DCUDA_API_PER_THREAD_DEFAULT_STREAM"), Some("-D__CUDA_API_VERSION_INTERNAL")] {
        let mut cmd = Command::new("cc");
        cmd.args(["-E", "-P", "-x", "c"]).args(define).arg(cuda_h);
        let o = cmd.output().expect("run cc -E (the C compiler scripts/setup installs)");
        assert!(o.status.success(), "cc -E {} failed:\n{}", cuda_h.display(), String::from_utf8_lossy(&o.stderr));
        let text = String::from_utf8_lossy(&o.stdout);
        let tokens = tokenize(&text);
        // Every driver function returns CUresult: `CUresult NAME (`; `static inline
        // CUresult NAME(...) { ... }` helpers are definitions, not exports.
        for (i, w) in tokens.iter().enumerate() {
            if *w != "CUresult" || (i > 0 && tokens[i - 1] == "inline") {
                continue;
            }
            if let (Some(name), Some(&"(")) = (tokens.get(i + 1), tokens.get(i + 2)) {
                if name.starts_with("cu") {
                    names.insert(name.to_string());
                }
            }
        }
    }
    names
}

/// C tokens: identifiers and numbers, and every other non-blank character on its own.
fn tokenize(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = None;
    for (i, c) in text.char_indices() {
        let word = c.is_ascii_alphanumeric() || c == '_';
        match (word, start) {
            (true, None) => start = Some(i),
            (false, Some(s)) => {
                out.push(&text[s..i]);
                start = None;
            }
            _ => {}
        }
        if !word && !c.is_whitespace() {
            out.push(&text[i..i + c.len_utf8()]);
        }
    }
    if let Some(s) = start {
        out.push(&text[s..]);
    }
    out
}

#[test]
fn every_function_cuda_h_declares_is_exported() {
    let Some(include) = cuda_include() else {
        eprintln!("SKIPPED: no CUDA toolkit headers found (scripts/setup installs the PyPI nvcc; or set SIMTWIN_CUDA_INCLUDE)");
        return;
    };
    let names = declared(&include.join("cuda.h"));
    assert!(names.len() > 600, "only {} function names parsed from {}", names.len(), include.join("cuda.h").display());
    for must in [
        "cuMemCreate",
        "cuMemMap",
        "cuDeviceGetProperties",
        "cuMemAlloc",
        "cuMemAlloc_v2",
        "cuMemcpyHtoD_v2_ptds",
        "cuLaunchKernel_ptsz",
        "cuGetProcAddress",
    ] {
        assert!(names.contains(must), "{must} not among the names parsed from cuda.h");
    }
    let lib_path = simtwin("lib/libcuda.so.1");
    // SAFETY: loading the emulated driver runs only its own initialisers.
    let lib = unsafe { libloading::Library::new(&lib_path) }.expect("load libcuda.so.1");
    let missing: Vec<&String> = names
        .iter()
        .filter(|n| {
            let z = format!("{n}\0");
            // SAFETY: only the address is looked up.
            unsafe { lib.get::<*mut std::ffi::c_void>(z.as_bytes()) }.is_err()
        })
        .collect();
    assert!(
        missing.is_empty(),
        "{} does not export {} of the {} functions cuda.h declares: {missing:?}",
        lib_path.display(),
        missing.len(),
        names.len()
    );
    eprintln!("{} functions of {} exported", names.len(), include.join("cuda.h").display());
}

#[test]
fn vmm_client_links_directly_and_shares_one_allocation_between_views_and_processes() {
    let Some(include) = cuda_include() else {
        eprintln!("SKIPPED: no CUDA toolkit headers found (scripts/setup installs the PyPI nvcc; or set SIMTWIN_CUDA_INCLUDE)");
        return;
    };
    let out = root().join("target/vmm").join(format!("run-{}", std::process::id()));
    std::fs::create_dir_all(&out).unwrap();
    let kernels_cu = root().join("emu-driver/tests/clients/kernels.cu");
    fatbin(&kernels_cu, &out.join("kernels.fatbin"));
    host_twins(&kernels_cu, &out.join("kernels"), &[]);
    let exe = out.join("vmm_client");
    // Linked against the emulated libcuda.so.1 like against the real one: -lcuda, no
    // dlopen, every entry point resolved by the dynamic linker.
    run_ok(
        Command::new("cc")
            .args(["-O1", "-Wall", "-Werror", "-I"])
            .arg(&include)
            .arg("-o")
            .arg(&exe)
            .arg(root().join("emu-driver/tests/clients/vmm_client.c"))
            .arg(format!("-L{}", simtwin("lib").display()))
            .arg("-l:libcuda.so.1"),
        "cc vmm_client.c -lcuda",
    );
    // The same program with deferred streams and with device memory out of host reach
    // (virtual-memory mappings stay outside the arena: docs/driver.md).
    for (var, value) in [("EMU_CUDA_ASYNC", "deferred"), ("EMU_CUDA_CHECKS", "pointers")] {
        let o = Command::new(&exe)
            .arg(out.join("kernels.fatbin"))
            .env("LD_LIBRARY_PATH", simtwin("lib"))
            .env("EMU_CUDA_KERNELS", out.join("kernels"))
            .env(var, value)
            .output()
            .expect("run vmm_client");
        let (stdout, stderr) = text(&o);
        assert!(
            o.status.success() && stdout.contains("vmm_client: all checks hold"),
            "vmm_client with {var}={value} failed ({}):\n{stdout}\n{stderr}",
            o.status
        );
    }
    let counts = out.join("counts.json");
    let o = Command::new(&exe)
        .arg(out.join("kernels.fatbin"))
        .env("LD_LIBRARY_PATH", simtwin("lib"))
        .env("EMU_CUDA_KERNELS", out.join("kernels"))
        .env("EMU_CUDA_COUNTS", &counts)
        .output()
        .expect("run vmm_client");
    let (stdout, stderr) = text(&o);
    assert!(o.status.success() && stdout.contains("vmm_client: all checks hold"), "vmm_client failed ({}):\n{stdout}\n{stderr}", o.status);
    for check in [
        "scan written through view 1, read through view 3: ok",
        "scan written through view 1, read through view 2: ok",
        "copy across the seam of two views: ok",
        "vmm_client(child): child reads the parent's scan: ok",
        "child's write seen through this process's view 2: ok",
        "handle released while mapped: memory still shared by the views: ok",
    ] {
        assert!(stdout.contains(check), "no {check:?} in\n{stdout}");
    }
    assert!(!stdout.contains("MISMATCH"), "{stdout}");
    // The counters the parent left (the child writes the same file first; the parent,
    // which exits last, overwrites it).
    let c: Value = serde_json::from_str(&std::fs::read_to_string(&counts).expect("counters written at exit")).unwrap();
    assert_eq!(c["unsupported"], serde_json::json!({}), "no unimplemented entry point was hit: {}", c["unsupported"]);
    assert_eq!(c["launches"]["warp_scan"]["count"], 1, "{}", c["launches"]);
    for (name, n) in [
        ("cuMemCreate", 1),
        ("cuMemMap", 3),
        ("cuMemSetAccess", 2),
        ("cuMemUnmap", 2),
        ("cuMemRelease", 2),
        ("cuMemExportToShareableHandle", 1),
    ] {
        assert_eq!(c["calls"][name], n, "calls of {name}: {}", c["calls"]);
    }
    assert_eq!(c["leaks"]["allocations"], 0, "leaks: {}", c["leaks"]);
}
