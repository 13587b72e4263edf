//! What the tests that run a C driver-API client on the emulated driver share (checks.rs,
//! pointers.rs, clients.rs, the PTX suite's tests, ...): where `scripts/build` put
//! target/simtwin, building a test's kernels (nvcc fatbin, kernels-host twins) and its
//! client, running the client with the emulated libcuda.so.1 first on the library path,
//! reading the PTX suite runner's files. The clients' C side shares `client.h` beside
//! this file.
#![allow(dead_code)] // each test uses its own part

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The C header every client includes: part of what a cached build depends on.
pub const CLIENT_H: &str = "emu-driver/tests/client_support/client.h";

/// The workspace root.
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf()
}

/// `rel` inside target/simtwin, which these tests take as built (they do not build it).
pub fn simtwin(rel: &str) -> PathBuf {
    let p = root().join("target/simtwin").join(rel);
    assert!(p.exists(), "{} is missing: run scripts/build first", p.display());
    p
}

/// Runs a build step; a failure panics with its output, so the cause shows in the test.
pub fn run_ok(cmd: &mut Command, what: &str) {
    let o = cmd.output().unwrap_or_else(|e| panic!("{what}: {e}"));
    assert!(
        o.status.success(),
        "{what} failed ({}):\n{}\n{}",
        o.status,
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
}

fn file_name(p: &Path) -> String {
    p.file_name().unwrap().to_string_lossy().into_owned()
}

/// `out`: the sm_90 fatbin of `src`, the image the client loads (nvcc as scripts/nvcc-path
/// finds it, so the image is a real one, not simtwin's idea of one).
pub fn fatbin(src: &Path, out: &Path) {
    fatbin_for(src, out, "arch=compute_90,code=sm_90");
}

/// As [`fatbin`], with the compute_90 PTX beside the SASS (what PTX mode runs).
pub fn fatbin_with_ptx(src: &Path, out: &Path) {
    fatbin_for(src, out, "arch=compute_90,code=[sm_90,compute_90]");
}

fn fatbin_for(src: &Path, out: &Path, gencode: &str) {
    let nvcc = Command::new(root().join("scripts/nvcc-path")).output().expect("scripts/nvcc-path");
    let nvcc = String::from_utf8(nvcc.stdout).unwrap().trim().to_string();
    run_ok(Command::new(&nvcc).args(["-fatbin", "-gencode", gencode, "-o"]).arg(out).arg(src), &format!("nvcc {}", file_name(src)));
}

/// `out`: the host twins of `src` (`kernels-host build FLAGS`), which the driver binds the
/// fatbin to.
pub fn host_twins(src: &Path, out: &Path, flags: &[&str]) {
    let what = format!("kernels-host {}{}", flags.iter().map(|f| format!("{f} ")).collect::<String>(), file_name(src));
    run_ok(Command::new(simtwin("bin/kernels-host")).arg("build").args(flags).arg("-o").arg(out).arg(src), &what);
}

/// `out`: the client `src`, warnings as errors, linked with -ldl only (it dlopens the
/// driver, see client.h); `flags` go before the rest.
pub fn cc_client(src: &Path, out: &Path, flags: &[&str]) {
    run_ok(
        Command::new("cc").args(["-O1", "-Wall", "-Werror"]).args(flags).arg("-o").arg(out).arg(src).arg("-ldl"),
        &format!("cc {}", file_name(src)),
    );
}

/// target/NAME/run-PID with NAME.fatbin, kernels/ and client, built from
/// emu-driver/tests/NAME/{NAME.cu,client.c} (`cc_flags` for the client). One directory per
/// test process: nextest runs a binary's tests in parallel processes.
pub fn build_per_process(name: &str, cc_flags: &[&str]) -> PathBuf {
    let out = root().join("target").join(name).join(format!("run-{}", std::process::id()));
    std::fs::create_dir_all(&out).unwrap();
    let tests = root().join("emu-driver/tests").join(name);
    let src = tests.join(format!("{name}.cu"));
    fatbin(&src, &out.join(format!("{name}.fatbin")));
    host_twins(&src, &out.join("kernels"), &[]);
    cc_client(&tests.join("client.c"), &out.join("client"), cc_flags);
    out
}

/// `cmd` with the emulated driver first on LD_LIBRARY_PATH and host twins from `kernels`.
pub fn on_emulated_driver<'a>(cmd: &'a mut Command, kernels: &Path) -> &'a mut Command {
    cmd.env("LD_LIBRARY_PATH", simtwin("lib")).env("EMU_CUDA_KERNELS", kernels)
}

/// The stdout and stderr of `o` as text (lossily: what the assertions match on).
pub fn text(o: &Output) -> (String, String) {
    (String::from_utf8_lossy(&o.stdout).into_owned(), String::from_utf8_lossy(&o.stderr).into_owned())
}

/// The CUDA toolkit's include directory (holding cuda.h), as the workspace's one finder
/// says (`scripts/nvcc-path --include`, the order kernels-host compiles in). None when
/// there is no toolkit.
pub fn cuda_include() -> Option<PathBuf> {
    let o = Command::new(root().join("scripts/nvcc-path")).arg("--include").output().expect("scripts/nvcc-path");
    o.status.success().then(|| PathBuf::from(String::from_utf8_lossy(&o.stdout).trim()))
}

/// The records of a file the PTX suite's runner (kernels-host/ptx/suite/runner.c) writes:
/// per case, its name, its status (the outputs file has one, the inputs file not: then 0)
/// and `width` bytes a thread (16 of outputs, 32 of inputs).
pub fn runner_records(bytes: &[u8], width: usize, with_status: bool) -> Vec<(String, i32, Vec<u8>)> {
    let mut out = Vec::new();
    let mut i = 0;
    let u32_at = |i: usize| u32::from_le_bytes(bytes[i..i + 4].try_into().unwrap());
    while i < bytes.len() {
        let nl = u32_at(i) as usize;
        let name = String::from_utf8(bytes[i + 4..i + 4 + nl].to_vec()).unwrap();
        i += 4 + nl;
        let threads = u32_at(i) as usize;
        i += 4;
        let status = if with_status {
            i += 4;
            u32_at(i - 4) as i32
        } else {
            0
        };
        out.push((name, status, bytes[i..i + threads * width].to_vec()));
        i += threads * width;
    }
    out
}

/// target/`name`/run-PID with the PTX suite's runner (kernels-host/ptx/suite/runner.c)
/// built in it as `runner`.
pub fn suite_runner_dir(name: &str) -> PathBuf {
    let d = root().join("target").join(name).join(format!("run-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    run_ok(
        Command::new("cc")
            .args(["-O2", "-Wall", "-Werror", "-o"])
            .arg(d.join("runner"))
            .arg(root().join("kernels-host/ptx/suite/runner.c"))
            .arg("-ldl"),
        "cc runner.c",
    );
    d
}

/// One run of the PTX suite's runner on the emulated driver in PTX mode.
pub struct SuiteRun {
    pub ok: bool,
    pub outputs: Vec<u8>,
    pub inputs: Vec<u8>,
    pub stderr: String,
    pub counts: serde_json::Value,
}

/// Runs `dir`/runner over `ptx` and the cases file `cases` (extra runner arguments
/// `args`) with EMU_CUDA_THREAD_LOOPS=`loops` and `env`, writing `dir`/`tag`.{bin,in,json}; the
/// hazard mode, watchdog and twins of the caller's environment are not inherited.
pub fn run_suite_runner(dir: &Path, tag: &str, ptx: &Path, cases: &Path, args: &[&str], loops: &str, env: &[(&str, &str)]) -> SuiteRun {
    let (out, inp, counts) = (dir.join(format!("{tag}.bin")), dir.join(format!("{tag}.in")), dir.join(format!("{tag}.json")));
    let mut cmd = Command::new(dir.join("runner"));
    cmd.arg(ptx).arg(cases).arg(&out).arg("--inputs").arg(&inp).args(args);
    cmd.env("LD_LIBRARY_PATH", simtwin("lib"))
        .env("EMU_CUDA_EXEC", "ptx")
        .env("EMU_CUDA_LOG", "warn")
        .env("EMU_CUDA_THREAD_LOOPS", loops)
        .env("EMU_CUDA_COUNTS", &counts)
        .env_remove("EMU_CUDA_KERNELS")
        .env_remove("EMU_CUDA_HAZARDS")
        .env_remove("EMU_CUDA_WATCHDOG");
    for (k, v) in env {
        cmd.env(k, v);
    }
    let o = cmd.output().unwrap();
    let read = |p: &PathBuf| std::fs::read(p).unwrap_or_default();
    SuiteRun {
        ok: o.status.success(),
        outputs: read(&out),
        inputs: read(&inp),
        stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
        counts: serde_json::from_slice(&read(&counts)).unwrap_or(serde_json::Value::Null),
    }
}
