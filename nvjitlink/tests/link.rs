//! The shim as a program sees it: a C client (link_client.c, built here with cc) dlopens
//! the libnvJitLink cargo built and the emulated libcuda.so.1 that scripts/build put in
//! target/simtwin/lib, links two PTX modules (a kernel calling a function of the other),
//! loads the linked image with cuModuleLoadData in PTX mode, launches it and checks the
//! values; then the error cases: codes and error-log lines.

use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf()
}

/// The cdylib of this package as cargo built it for this test run: target/<profile>/deps,
/// beside the test binary (the copy one level up is refreshed only by `cargo build`).
fn shim() -> PathBuf {
    let p = std::env::current_exe().unwrap().parent().unwrap().join("libsimtwin_nvjitlink.so");
    assert!(p.exists(), "{} is missing", p.display());
    p
}

fn client() -> PathBuf {
    let out = root().join("target/nvjitlink-test").join(format!("run-{}", std::process::id()));
    std::fs::create_dir_all(&out).unwrap();
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/link_client.c");
    let bin = out.join("link_client");
    let o = Command::new("cc").args(["-O1", "-Wall", "-Werror", "-o"]).arg(&bin).arg(&src).arg("-ldl").output().unwrap();
    assert!(o.status.success(), "cc link_client.c:\n{}", String::from_utf8_lossy(&o.stderr));
    bin
}

#[test]
fn links_ptx_the_emulated_driver_runs_and_rejects_what_it_cannot_link() {
    let libcuda = root().join("target/simtwin/lib/libcuda.so.1");
    assert!(libcuda.exists(), "{} is missing: run scripts/build first", libcuda.display());
    let bin = client();
    let tests = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
    let o = Command::new(&bin)
        .arg(shim())
        .arg(&libcuda)
        .arg(tests.join("kernel.ptx"))
        .arg(tests.join("helper.ptx"))
        .env("EMU_CUDA_EXEC", "ptx")
        .env("SIMTWIN_CACHE_DIR", bin.parent().unwrap().join("cache"))
        .env_remove("EMU_CUDA_KERNELS")
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "client failed:\n{out}\n{err}");
    let line = |key: &str| -> String {
        out.lines().find_map(|l| l.strip_prefix(&format!("{key}="))).unwrap_or_else(|| panic!("no {key}= line:\n{out}\n{err}")).to_string()
    };
    // 16 entry points by plain name and 15 by 6 versioned names, all @libnvJitLink.so.13,
    // each versioned name the same function as its plain one.
    assert_eq!(line("symbols"), "106,90");
    assert_eq!(line("version"), "0,12.2");
    assert_eq!(line("version_env"), "0,13.0");
    assert_eq!(line("version_null"), "10");
    for (k, v) in [
        ("create", "0,1"),
        ("add_kernel", "0"),
        ("add_helper", "0"),
        ("complete", "0"),
        ("cubin_size", "0,1"),
        ("cubin", "0,SLNK"),
        ("ptx_two_modules", "3"),
        ("ltoir", "18"),
        ("context", "0"),
        ("module_load", "0"),
        ("get_function", "0"),
        ("launch", "0"),
        ("sync", "0"),
        ("results", "ok,0"),
        ("destroy", "0,1"),
        ("destroy_again", "10"),
        ("ptx_size", "0,1"),
        ("ptx", "0,1"),
        ("missing_arch", "2,1"),
        ("bad_option", "1"),
        ("null_handle", "10,10,10,10"),
        ("stale_handle", "3"),
        ("ltoir_input_add", "18"),
        ("any_ltoir_add", "18"),
        ("ltoir_lto_add", "5"),
        ("library_input_add", "3"),
        ("cubin_input_add", "3"),
        ("fatbin_input_add", "3"),
        ("empty_complete", "3"),
        ("null_out", "10"),
    ] {
        assert_eq!(line(k), v, "{k}:\n{out}\n{err}");
    }
    // Logs: sizes count the NUL; the lines name the input and say why.
    let log = line("error_log");
    assert!(log.starts_with("0,0,1,nvJitLinkGetLinkedPtx: 2 PTX modules were linked"), "{log}");
    assert!(log.contains("nvJitLinkGetLinkedLTOIR: linked LTO-IR needs -lto"), "{log}");
    let info = line("info_log");
    assert!(info.starts_with("0,0,1,simtwin nvJitLink: kernel.ptx: PTX module added"), "{info}");
    assert!(info.contains("linked 2 PTX module(s) (kernel.ptx,") && info.contains("for sm_90") && info.contains("link time"), "{info}");
    for (k, words) in [
        ("ltoir_input", &["kernel.ltoir", "needs -lto", "simtwin runs PTX"][..]),
        ("ltoir_lto", &["kernel.ltoir", "NVVM IR", "simtwin runs PTX", "lto=False"]),
        ("any_ltoir", &["<cudapy-ltoir>", "needs -lto"]),
        // A truncated archive (a library input is read as an ar archive: static-library
        // semantics, simtwin_abi::devrt; emu-driver/tests/coop.rs links the real one).
        ("library_input", &["libcudadevrt.a", "runs past the archive's end"]),
        ("cubin_input", &["sass.cubin", "a cubin (SASS)", "links PTX only"]),
        ("fatbin_input", &["k.fatbin", "a fatbin", "links PTX only"]),
        ("empty_log", &["nothing was added to the link"]),
    ] {
        let l = line(k);
        assert!(l.starts_with("0,0,1,"), "{k}: {l}");
        for w in words {
            assert!(l.contains(w), "{k}: {w:?} not in {l}");
        }
    }
    assert!(err.contains("simtwin nvJitLink: nvJitLinkCreate: the option -arch=sm_NN is required"), "{err}");
}
