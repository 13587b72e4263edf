//! Pass-through (EMU_CUDA_REAL): a client program loads simtwin's libcuda.so.1, which
//! forwards every call to a stand-in real driver (tests/passthrough/fake_real.c: host
//! memory, a kernel run in C). The client checks the real driver's results arrived
//! (typed forwards, register-preserving trampolines for unimplemented and legacy entries,
//! cuGetProcAddress); the test checks the counters simtwin wrote. Also: simtwin refuses
//! itself as the real driver.
//!
//! Needs `scripts/build` to have produced target/simtwin/.

use simtwin_abi::counters::{Counters, State};
use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf()
}

fn lib_dir() -> PathBuf {
    let p = root().join("target/simtwin/lib");
    assert!(p.join("libcuda.so.1").exists(), "{} is missing: run scripts/build first", p.display());
    p
}

fn cc(out: &Path, args: &[&str], src: &str) {
    let st = Command::new("cc").args(["-O1", "-Wall", "-Werror", "-o"]).arg(out).arg(root().join(src)).args(args).status().unwrap();
    assert!(st.success(), "cc {src}");
}

fn built(dir: &Path) -> (PathBuf, PathBuf) {
    let fake = dir.join("libfake_real.so");
    cc(&fake, &["-shared", "-fPIC"], "emu-driver/tests/passthrough/fake_real.c");
    let client = dir.join("client");
    cc(&client, &["-ldl"], "emu-driver/tests/passthrough/client.c");
    (fake, client)
}

#[test]
fn calls_reach_the_real_driver_and_are_counted() {
    let d = tempfile::tempdir().unwrap();
    let (fake, client) = built(d.path());
    let counts = d.path().join("counts.json");
    let o = Command::new(&client)
        .env("LD_LIBRARY_PATH", lib_dir())
        .env("EMU_CUDA_REAL", &fake)
        .env("EMU_CUDA_COUNTS", &counts)
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "client failed ({}):\n{out}\n{}", o.status, String::from_utf8_lossy(&o.stderr));
    assert!(!out.contains("FAIL"), "{out}");
    let c = Counters::read(&counts).unwrap();
    assert_eq!(c.driver, format!("pass-through {}", fake.display()));
    assert_eq!(c.state, State::Exit);
    let calls = |n: &str| c.calls.get(n).copied().unwrap_or(0);
    assert_eq!(calls("cuInit"), 1);
    assert_eq!(calls("cuModuleGetFunction"), 3);
    assert_eq!(calls("cuGraphGetId"), 1, "trampolined calls are counted");
    assert_eq!(calls("cuLinkAddData_v2"), 1);
    assert_eq!(calls("cuMemAlloc"), 1);
    assert_eq!(calls("cuMemcpyHtoD_v2"), 2, "the call through cuGetProcAddress's pointer counts");
    assert_eq!(c.failures.get("cuModuleGetFunction"), Some(&1), "{:?}", c.failures);
    assert_eq!((c.copies.htod.count, c.copies.htod.bytes), (2, 68));
    assert_eq!((c.copies.dtoh.count, c.copies.dtoh.bytes), (1, 64));
    assert_eq!((c.memsets.count, c.memsets.bytes), (1, 8));
    assert_eq!((c.allocations.count, c.allocations.bytes, c.allocations.frees), (2, 1064, 1));
    let l = c.launches.get("fill").expect("launch counted by the real driver's kernel name");
    assert_eq!((l.count, l.threads, l.blocks), (1, 16, 2));
    assert_eq!(l.run_ns, 0, "the device runs pass-through launches: simtwin does not time them");
    assert!(!std::fs::read_to_string(&counts).unwrap().contains("run_ns"), "and writes no run_ns");
    assert_eq!(c.synchronizations, 1);
    assert_eq!((c.leaks.allocations, c.leaks.allocation_bytes, c.leaks.modules, c.leaks.streams), (1, 1000, 1, 1), "{:?}", c.leaks);
    assert!(c.unsupported.is_empty(), "{:?}", c.unsupported);
}

#[test]
fn simtwin_itself_is_refused_as_the_real_driver() {
    let d = tempfile::tempdir().unwrap();
    let (_, client) = built(d.path());
    let o = Command::new(&client).env("LD_LIBRARY_PATH", lib_dir()).env("EMU_CUDA_REAL", lib_dir().join("libcuda.so.1")).output().unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(out.contains("FAIL cuInit"), "{out}");
    assert!(err.contains("simtwin's emulated driver itself"), "{err}");
    // A path that does not exist is a configuration error too.
    let o = Command::new(&client).env("LD_LIBRARY_PATH", lib_dir()).env("EMU_CUDA_REAL", "/nonexistent/libcuda.so.1").output().unwrap();
    assert!(String::from_utf8_lossy(&o.stdout).contains("FAIL cuInit"));
    assert!(String::from_utf8_lossy(&o.stderr).contains("EMU_CUDA_REAL"), "{}", String::from_utf8_lossy(&o.stderr));
}
