//! PTX mode through the driver, as a program meets it (the client dlopens the emulated
//! libcuda.so.1): kernels of features.cu (calls, recursion, function pointers, local
//! arrays, shared memory, barrier reductions, warp collectives, atomics, 64-bit math,
//! printf, malloc, assert) run from nvcc's PTX and give the values the client computes;
//! images PTX mode cannot run fail with the code and message a user can act on.

mod client_support;
use client_support::{cc_client, root, run_ok, simtwin, text};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// target/ptx-mode/run-PID with features.ptx, features.cubin (SASS only) and the client.
fn built() -> &'static PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let out = root().join("target/ptx-mode").join(format!("run-{}", std::process::id()));
        std::fs::create_dir_all(&out).unwrap();
        let src = root().join("emu-driver/tests/ptx_mode");
        let nvcc = Command::new(root().join("scripts/nvcc-path")).output().expect("scripts/nvcc-path");
        let nvcc = String::from_utf8(nvcc.stdout).unwrap().trim().to_string();
        run_ok(
            Command::new(&nvcc).args(["-ptx", "-arch=compute_90", "-o"]).arg(out.join("features.ptx")).arg(src.join("features.cu")),
            "nvcc -ptx",
        );
        run_ok(
            Command::new(&nvcc).args(["-cubin", "-arch=sm_90", "-o"]).arg(out.join("features.cubin")).arg(src.join("features.cu")),
            "nvcc -cubin",
        );
        for half in ["link_a", "link_b"] {
            run_ok(
                Command::new(&nvcc)
                    .args(["-rdc=true", "-ptx", "-arch=compute_90", "-o"])
                    .arg(out.join(format!("{half}.ptx")))
                    .arg(src.join(format!("{half}.cu"))),
                "nvcc -rdc -ptx",
            );
        }
        cc_client(&src.join("client.c"), &out.join("client"), &["-ffp-contract=off", "-fno-math-errno"]);
        cc_client(&src.join("link_client.c"), &out.join("link_client"), &[]);
        out
    })
}

/// Runs the client on `image` with the emulated driver and `env`; it must run (exit 0).
fn run(image: &Path, env: &[(&str, &str)]) -> (String, String) {
    let (ok, out, err) = run_any(image, env);
    assert!(ok, "client failed:\n{out}\n{err}");
    (out, err)
}

/// As `run`, whatever the client's exit status (and whether it was 0).
fn run_any(image: &Path, env: &[(&str, &str)]) -> (bool, String, String) {
    let dir = built();
    let mut cmd = Command::new(dir.join("client"));
    cmd.arg(image).env("LD_LIBRARY_PATH", simtwin("lib")).env_remove("EMU_CUDA_KERNELS").env_remove("EMU_CUDA_EXEC");
    for (k, v) in env {
        cmd.env(k, v);
    }
    let o = cmd.output().unwrap();
    let (out, err) = text(&o);
    (o.status.success(), out, err)
}

#[test]
fn kernels_run_from_nvcc_ptx_with_no_twin() {
    let (out, err) = run(&built().join("features.ptx"), &[]);
    for k in ["calls", "local_array", "shared_mem", "const_fold", "warp_ops", "atomics", "math64", "say"] {
        assert!(out.contains(&format!("{k}=ok")), "{k} failed:\n{out}\n{err}");
    }
    // printf through the driver, formatted as the device formats it, once per block.
    assert_eq!(out.matches("block 0 of 2: 768 ok 1.500 -42").count(), 1, "{out}");
    assert_eq!(out.matches("block 1 of 2: 768 ok 1.500 -42").count(), 1, "{out}");
    // A failed device assert is CUDA_ERROR_ASSERT, with the source's expression and line.
    assert!(out.contains("assert=710"), "{out}");
    assert!(err.contains("device assertion `n != threadIdx.x` failed at") && err.contains("features.cu:"), "{err}");
}

/// Loads of initialized `__constant__` values run as literals where the module's copies
/// hold them (the module note names them), and a program that writes other values sees
/// them at once, on the loop path and on fibers (the client checks three rounds: initial,
/// written, written back).
#[test]
fn initialized_constants_run_as_literals_until_the_program_writes_them() {
    for loops in ["auto", "off"] {
        let (out, err) = run(&built().join("features.ptx"), &[("EMU_CUDA_LOG", "info"), ("EMU_CUDA_THREAD_LOOPS", loops)]);
        assert!(out.contains("const_fold=ok"), "THREAD_LOOPS={loops}:\n{out}\n{err}");
        let note = err.lines().find(|l| l.contains("initialized .const loads as literals")).unwrap_or_else(|| panic!("no note:\n{err}"));
        for folded in ["c_taps in const_plain", "c_gain in const_plain", "c_taps in const_loops"] {
            assert!(note.contains(folded), "{folded} not folded: {note}");
        }
    }
}

#[test]
fn the_counters_say_which_modules_ran_as_ptx_and_the_cache_serves_a_second_load() {
    let dir = built();
    let cache = dir.join(format!("cache-{}", std::process::id()));
    let counts = dir.join("counts-%p.json");
    let env = [("SIMTWIN_CACHE_DIR", cache.to_str().unwrap()), ("EMU_CUDA_COUNTS", counts.to_str().unwrap())];
    let mut records = Vec::new();
    for _ in 0..2 {
        let before: Vec<_> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).collect();
        run(&dir.join("features.ptx"), &env);
        let file = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .find(|p| p.file_name().unwrap().to_string_lossy().starts_with("counts-") && !before.contains(p))
            .expect("a counters file");
        let c = simtwin_abi::counters::Counters::read(&file).unwrap();
        assert_eq!(c.modules.len(), 1, "{:?}", c.modules);
        records.push(c.modules[0].clone());
    }
    let (cold, warm) = (&records[0], &records[1]);
    assert_eq!(cold.mode, "ptx");
    assert_eq!(cold.kernels, 10);
    assert!(cold.device_exact, "features.cu uses no special-function instruction: {cold:?}");
    assert!(!cold.cached && cold.compile_us > 0, "{cold:?}");
    assert!(warm.cached && warm.compile_us == 0, "{warm:?}");
    assert_eq!(cold.library, warm.library);
    assert!(Path::new(&cold.library).starts_with(&cache), "{} is not in SIMTWIN_CACHE_DIR", cold.library);
}

#[test]
fn an_instruction_ptx_mode_cannot_run_fails_the_load_naming_it() {
    let dir = built();
    let counts = dir.join(format!("tex-{}.json", std::process::id()));
    let (out, err) = run(&root().join("emu-driver/tests/ptx_mode/tex.ptx"), &[("EMU_CUDA_COUNTS", counts.to_str().unwrap())]);
    assert!(out.contains("load=801"), "CUDA_ERROR_NOT_SUPPORTED expected:\n{out}\n{err}");
    assert!(err.contains("PTX line 14") && err.contains("tex.2d.v4.f32.f32") && err.contains("sample"), "{err}");
    let c = simtwin_abi::counters::Counters::read(&counts).unwrap();
    assert_eq!(c.unsupported.get("PTX:tex.2d.v4.f32.f32"), Some(&1), "{:?}", c.unsupported);
}

#[test]
fn invalid_ptx_is_cuda_error_invalid_ptx_naming_the_line() {
    let (out, err) = run(&root().join("emu-driver/tests/ptx_mode/broken.ptx"), &[]);
    assert!(out.contains("load=218"), "{out}\n{err}");
    assert!(err.contains("PTX line 7"), "{err}");
}

#[test]
fn a_sass_only_image_is_refused_with_the_gencode_to_embed() {
    let (out, err) = run(&built().join("features.cubin"), &[]);
    assert!(out.contains("load=209"), "{out}\n{err}");
    assert!(err.contains("holds none") && err.contains("-gencode arch=compute_90"), "{err}");
}

#[test]
fn exec_twin_refuses_a_module_without_twin_and_a_bad_exec_value_refuses_init() {
    let (out, err) = run(&built().join("features.ptx"), &[("EMU_CUDA_EXEC", "twin")]);
    assert!(out.contains("load=209"), "{out}\n{err}");
    assert!(err.contains("no host twin"), "{err}");
    let (ok, out, err) = run_any(&built().join("features.ptx"), &[("EMU_CUDA_EXEC", "sometimes")]);
    assert!(!ok && out.contains("init=failed"), "{out}\n{err}");
    assert!(err.contains("EMU_CUDA_EXEC=sometimes: expected auto, ptx or twin"), "{err}");
}

#[test]
fn the_jit_linker_joins_separately_compiled_ptx_and_libraries_load_without_a_context() {
    let dir = built();
    let o = Command::new(dir.join("link_client"))
        .arg(dir.join("link_a.ptx"))
        .arg(dir.join("link_b.ptx"))
        .arg(dir.join("features.ptx"))
        .env("LD_LIBRARY_PATH", simtwin("lib"))
        .env_remove("EMU_CUDA_KERNELS")
        .env_remove("EMU_CUDA_EXEC")
        .output()
        .unwrap();
    let (out, err) = text(&o);
    assert!(o.status.success(), "{out}\n{err}");
    for line in [
        "library_load=0",
        "library_kernels=0,10",
        "library_get_kernel=0",
        "library_missing_kernel=500",
        "param_info=0,16,4",
        "library_launch=ok",
        "kernel_get_function=0",
        "enumerate=0,1",
        "enumerate_wrong_count=1",
        "kernel_library=0,1",
        "kernel_name=0,local_array",
        "kernel_attribute=0,1024",
        "kernel_set_attribute=0",
        "library_module=0",
        "library_global=0,16",
        "library_unload=0",
        "library_from_file=0",
        "legacy_link=0,0,0",
        "link_create=0",
        "link_add_a=0",
        "link_add_b=0",
        "link_complete=0",
        "link_load=0",
        "link_run=ok",
        "link_destroy=0",
        "link_destroy_twice=400",
        "link_add_invalid=218",
        "error_log=cuLinkAddData: bad.ptx: PTX line 7",
        "link_add_cubin=801",
        "link_complete_empty=1",
    ] {
        assert!(out.lines().any(|l| l.starts_with(line)), "missing `{line}`:\n{out}\n{err}");
    }
}
