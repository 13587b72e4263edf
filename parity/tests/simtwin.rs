//! The `simtwin` front door (run, env, summary) against a fake simtwin layout (the fake
//! libcuda.so.1 with the emulated driver's marker) and a fake CUDA program that writes
//! the counters files a real one would (tests/fake/cuda_program.py).

mod support;

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use support::{build_lib, expect_code, fake_dir, read_json, text};

struct Fake {
    tmp: tempfile::TempDir,
}

impl Fake {
    fn new() -> Fake {
        let tmp = tempfile::tempdir().unwrap();
        build_lib(&tmp.path().join("simtwin/lib"), &["-DEMULATED"]);
        std::fs::create_dir_all(tmp.path().join("simtwin/bin")).unwrap();
        Fake { tmp }
    }
    fn p(&self, rel: &str) -> PathBuf {
        self.tmp.path().join(rel)
    }
    fn simtwin_dir(&self) -> String {
        self.p("simtwin").display().to_string()
    }
    /// `simtwin SUB --simtwin FAKE ARGS...` with a clean environment of simtwin's variables.
    fn cmd(&self, sub: &str, args: &[&str]) -> Command {
        let mut c = Command::new(env!("CARGO_BIN_EXE_simtwin"));
        c.arg(sub);
        if sub != "summary" {
            c.args(["--simtwin", &self.simtwin_dir()]);
        }
        c.args(args).current_dir(self.tmp.path());
        for v in [
            "LD_LIBRARY_PATH",
            "EMU_CUDA_COUNTS",
            "EMU_CUDA_HAZARDS",
            "EMU_CUDA_KERNELS",
            "SIMTWIN_DIR",
            "SIMTWIN_COUNTS_DIR",
            "FAKE_DRIVER_REFUSES",
        ] {
            c.env_remove(v);
        }
        c
    }
    fn run(&self, args: &[&str], env: &[(&str, &str)]) -> Output {
        let mut c = self.cmd("run", args);
        c.envs(env.iter().copied());
        c.output().unwrap()
    }
    fn summary(&self) -> Value {
        read_json(&self.p("r/summary.json"))
    }
}

fn program() -> String {
    fake_dir().join("cuda_program.py").display().to_string()
}

#[test]
fn many_processes_give_one_summary_and_the_command_status() {
    let f = Fake::new();
    let o = f.run(&["--report", "r", "--", &program(), "--children", "3", "--launches", "2"], &[]);
    expect_code(&o, 0);
    let s = f.summary();
    assert_eq!(s["processes"]["total"], 4, "{s}");
    assert_eq!(s["launches"]["total"], 8);
    assert_eq!(s["copies"]["HtoD"]["count"], 4);
    assert_eq!(s["verdict"], "pass");
    let t = text(&o);
    assert!(t.contains("processes on simtwin's driver: 4 (4 exit)") && t.contains("kernel launches: 8 of 1 kernel(s): k x8"), "{t}");
    assert!(t.contains("modules: not reported by this driver"), "{t}");
    let md = std::fs::read_to_string(f.p("r/summary.md")).unwrap();
    assert!(md.starts_with("## simtwin run: PASS") && md.contains("| kernel launches | 8 (1 kernels) |"), "{md}");
    let x = std::fs::read_to_string(f.p("r/junit.xml")).unwrap();
    assert!(x.contains("tests=\"7\" failures=\"0\" errors=\"0\""), "{x}");
    // the command's own failure is its status, and the report says so
    let o = f.run(&["--report", "r", "--", &program(), "--exit", "3"], &[]);
    expect_code(&o, 3);
    assert_eq!(f.summary()["verdict"], "command-failed");
    assert_eq!(f.summary()["processes"]["total"], 1, "the report holds this run's counters only");
}

#[test]
fn the_environment_puts_simtwin_first_and_keeps_the_users_entries() {
    let f = Fake::new();
    let o = f.run(
        &["--kernels", "k1", "--kernels", "/abs/k2", "--hazards", "error", "--workers", "2", "--set", "EMU_CUDA_EXEC=ptx", "--", "env"],
        &[("LD_LIBRARY_PATH", "/user/lib:/other"), ("EMU_CUDA_KERNELS", "/inherited")],
    );
    expect_code(&o, 0);
    let out = String::from_utf8_lossy(&o.stdout).to_string();
    let lib = f.p("simtwin/lib").canonicalize().unwrap();
    let get = |k: &str| {
        out.lines().find_map(|l| l.strip_prefix(&format!("{k}="))).unwrap_or_else(|| panic!("{k} not printed: {out}")).to_string()
    };
    assert_eq!(get("LD_LIBRARY_PATH"), format!("{}:/user/lib:/other", lib.display()));
    assert_eq!(get("EMU_CUDA_KERNELS"), format!("{}:/abs/k2:/inherited", f.p("k1").display()));
    assert_eq!(get("EMU_CUDA_HAZARDS"), "error");
    assert_eq!(get("EMU_CUDA_WORKERS"), "2");
    assert_eq!(get("EMU_CUDA_EXEC"), "ptx");
    assert!(get("PATH").starts_with(&format!("{}:", lib.parent().unwrap().join("bin").display())), "{out}");
    assert_eq!(get("SIMTWIN_DIR"), lib.parent().unwrap().display().to_string());
    assert!(get("EMU_CUDA_COUNTS").ends_with("/counts/counts-%p.json"), "{out}");
    assert!(text(&o).contains("--kernels k1: does not exist (yet)"), "{}", text(&o));
}

#[test]
fn unsupported_calls_and_hazards_give_their_documented_codes() {
    let f = Fake::new();
    let unsupported = r#"{"unsupported": {"cuTexObjectCreate": 2}}"#;
    let o = f.run(&["--report", "r", "--", &program(), "--counters", unsupported], &[]);
    expect_code(&o, 80);
    assert!(text(&o).contains("FAIL [unsupported] 2 call(s)") && text(&o).contains("cuTexObjectCreate x2"), "{}", text(&o));
    assert_eq!(f.summary()["findings"][0]["code"], 80);
    assert!(std::fs::read_to_string(f.p("r/junit.xml"))
        .unwrap()
        .contains("<testcase classname=\"simtwin.run\" name=\"unsupported\">\n      <failure"));
    expect_code(&f.run(&["--allow-unsupported", "cuTex*", "--", &program(), "--counters", unsupported], &[]), 0);
    expect_code(&f.run(&["--", &program(), "--counters", unsupported, "--exit", "5"], &[]), 5);

    let hazard = r#"{"hazards": [{"kind": "barrier-divergence", "kernel": "k", "block": [0,0,0], "threads": [1], "operation": "__syncthreads at k.cu:7", "message": "m", "occurrences": 3}]}"#;
    let o = f.run(&["--", &program(), "--counters", hazard], &[]);
    expect_code(&o, 0);
    assert!(text(&o).contains("note [hazards] 1 hazard report(s): barrier-divergence x3"), "{}", text(&o));
    expect_code(&f.run(&["--hazards", "error", "--", &program(), "--counters", hazard], &[]), 81);
    expect_code(&f.run(&["--", &program(), "--counters", hazard], &[("EMU_CUDA_HAZARDS", "error")]), 81);
    expect_code(&f.run(&["--fail-on", "hazards", "--", &program(), "--counters", hazard], &[]), 81);

    let leak = r#"{"leaks": {"allocations": 1, "allocation_bytes": 64, "pinned": 0, "modules": 0, "streams": 0, "events": 0, "details": ["device allocation of 64 bytes"]}}"#;
    expect_code(&f.run(&["--", &program(), "--counters", leak], &[]), 0);
    expect_code(&f.run(&["--fail-on", "leaks", "--", &program(), "--counters", leak], &[]), 83);
    expect_code(
        &f.run(&["--fail-on", "never-ran", "--", &program(), "--counters", r#"{"never_ran": ["launch of k on stream 1"]}"#], &[]),
        82,
    );
    let o = f.run(&["--", &program(), "--no-counters"], &[]);
    expect_code(&o, 0);
    assert!(text(&o).contains("note [no-driver] no process loaded simtwin's driver"), "{}", text(&o));
    expect_code(&f.run(&["--fail-on", "no-driver", "--", &program(), "--no-counters"], &[]), 84);
    // A kernel that faulted while the program went on (and exited 0): 85 unless allowed.
    let failed = r#"{"failed_launches": {"srad_cuda_1": 1}}"#;
    let o = f.run(&["--report", "r", "--", &program(), "--counters", failed], &[]);
    expect_code(&o, 85);
    assert!(
        text(&o).contains("FAIL [failed-launches] 1 kernel launch(es) failed while running") && text(&o).contains("srad_cuda_1 x1"),
        "{}",
        text(&o)
    );
    assert_eq!(f.summary()["findings"][0]["code"], 85);
    expect_code(&f.run(&["--allow-failed-launches", "srad_*", "--", &program(), "--counters", failed], &[]), 0);
    expect_code(&f.run(&["--", &program(), "--counters", failed, "--exit", "2"], &[]), 2);
    // several: the lowest code
    let both = r#"{"unsupported": {"cuGLGetDevices": 1}, "never_ran": ["x"]}"#;
    expect_code(&f.run(&["--fail-on", "never-ran", "--", &program(), "--counters", both], &[]), 80);
}

#[test]
fn modules_are_listed_by_mode() {
    let f = Fake::new();
    let m = r#"{"modules": [{"image": "sse.fatbin", "mode": "twin", "library": "/k/sse.so", "kernels": 3}, {"image": "a1b2", "mode": "ptx", "library": "/cache/a1b2.so", "kernels": 2}]}"#;
    let o = f.run(&["--report", "r", "--", &program(), "--children", "1", "--counters", m], &[]);
    expect_code(&o, 0);
    assert!(text(&o).contains("modules: 1 (sse.fatbin -> sse.so) as host twins, 1 (a1b2 -> a1b2.so) from PTX"), "{}", text(&o));
    let s = f.summary();
    assert_eq!(s["modules"]["twin"][0]["loads"], 2);
    assert_eq!(s["modules"]["ptx"][0]["kernels"], 2);
}

#[test]
fn simtwins_own_failures_and_missing_commands_have_their_codes() {
    let f = Fake::new();
    let o = f.run(&["--", "no-such-program-here"], &[]);
    expect_code(&o, 127);
    let script = f.p("not-exec.sh");
    std::fs::write(&script, "#!/bin/sh\nexit 0\n").unwrap();
    expect_code(&f.run(&["--", script.to_str().unwrap()], &[]), 126);
    let o = f.run(&["--bogus-option", "--", "true"], &[]);
    expect_code(&o, 125);
    // a setting the driver refuses at cuInit: nothing runs, the driver's message is shown
    let o = f.run(&["--report", "r", "--block-order", "reverse", "--", &program(), "--print-env", "X"], &[("FAKE_DRIVER_REFUSES", "1")]);
    expect_code(&o, 125);
    assert!(text(&o).contains("refuses EMU_CUDA_BLOCK_ORDER=reverse") && !text(&o).contains("X="), "{}", text(&o));
    assert_eq!(f.summary()["verdict"], "error");
    let o = Command::new(env!("CARGO_BIN_EXE_simtwin")).args(["run", "--simtwin", "/nonexistent", "--", "true"]).output().unwrap();
    expect_code(&o, 125);
    assert!(text(&o).contains("--simtwin /nonexistent: no such directory"), "{}", text(&o));
}

#[test]
fn signals_reach_the_command_and_the_summary_still_comes() {
    let f = Fake::new();
    let child = f
        .cmd("run", &["--report", "r", "--", "sh", "-c", "trap 'exit 42' TERM; sleep 30 >/dev/null 2>&1 & wait"])
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(700));
    // SAFETY: kill(2) on the simtwin process this test started.
    unsafe {
        libc::kill(child.id() as i32, libc::SIGTERM);
    }
    let t0 = std::time::Instant::now();
    let o = child.wait_with_output().unwrap();
    assert!(t0.elapsed() < std::time::Duration::from_secs(20));
    expect_code(&o, 42);
    assert!(text(&o).contains("simtwin: summary of `sh -c"), "{}", text(&o));
    // a command killed by a signal: 128 + N
    expect_code(&f.run(&["--", "sh", "-c", "kill -KILL $$"], &[]), 137);
}

#[test]
fn nested_runs_and_parity_hand_their_counters_to_the_outer_summary() {
    let f = Fake::new();
    let simtwin = env!("CARGO_BIN_EXE_simtwin");
    let sd = f.simtwin_dir();
    let o = f.run(&["--report", "r", "--", simtwin, "run", "--simtwin", &sd, "--", &program(), "--children", "2"], &[]);
    expect_code(&o, 0);
    assert_eq!(f.summary()["processes"]["total"], 3, "{}", text(&o));
    // parity frames under simtwin run: its CUDA extractor's counters reach the summary
    std::fs::create_dir_all(f.p("simtwin/kernels")).unwrap();
    std::os::unix::fs::symlink(fake_dir().join("extractor.py"), f.p("simtwin/bin/simtwin-twin")).unwrap();
    let bytes = (16 * 16 + 2 * 8 * 8) * 3;
    std::fs::write(f.p("ref.yuv"), vec![0u8; bytes]).unwrap();
    std::fs::write(f.p("dis.yuv"), vec![1u8; bytes]).unwrap();
    let o = f.run(
        &[
            "--report",
            "r",
            "--",
            env!("CARGO_BIN_EXE_parity"),
            "frames",
            "-r",
            "ref.yuv",
            "-d",
            "dis.yuv",
            "-W",
            "16",
            "-H",
            "16",
            "--features",
            "sse",
            "--out",
            "frames",
        ],
        &[("SIMTWIN_DIR", &sd)],
    );
    expect_code(&o, 0);
    let s = f.summary();
    assert_eq!(s["processes"]["total"], 1, "{}", text(&o));
    assert_eq!(s["launches"]["kernels"]["sse_kernel"]["count"], 3);
    assert!(read_json(&f.p("frames/summary.json"))["verdict"] == "parity");
}

#[test]
fn env_prints_the_settings_and_summary_reads_what_later_steps_left() {
    let f = Fake::new();
    let o =
        f.cmd("env", &["--kernels", "/k", "--hazards", "error", "--report", "rep"]).env("LD_LIBRARY_PATH", "/user/lib").output().unwrap();
    expect_code(&o, 0);
    let sh = String::from_utf8_lossy(&o.stdout).to_string();
    assert!(sh.contains("export EMU_CUDA_HAZARDS='error'") && sh.contains("export EMU_CUDA_KERNELS='/k'"), "{sh}");
    assert!(sh.contains("export LD_LIBRARY_PATH='") && sh.contains("\"${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}\""), "{sh}");
    // the lines evaluated by a shell, then a program, then the summary in another "step"
    let step = format!("{sh}\n{} --launches 2 --counters '{{\"hazards\": [{{\"kind\": \"h\", \"kernel\": \"k\", \"block\": [0,0,0], \"threads\": [], \"operation\": \"o\", \"message\": \"m\", \"occurrences\": 1}}]}}' --print-env LD_LIBRARY_PATH\n", program());
    let o2 = Command::new("sh")
        .arg("-c")
        .arg(&step)
        .current_dir(f.tmp.path())
        .env("LD_LIBRARY_PATH", "/user/lib")
        .env_remove("EMU_CUDA_COUNTS")
        .output()
        .unwrap();
    expect_code(&o2, 0);
    let lib = f.p("simtwin/lib").canonicalize().unwrap();
    assert!(String::from_utf8_lossy(&o2.stdout).contains(&format!("LD_LIBRARY_PATH={}:/user/lib", lib.display())), "{}", text(&o2));
    let o3 = f.cmd("summary", &["--report", "rep"]).env("EMU_CUDA_HAZARDS", "error").output().unwrap();
    expect_code(&o3, 81);
    let s = read_json(&f.p("rep/summary.json"));
    assert_eq!(s["launches"]["total"], 2);
    assert!(text(&o3).contains("simtwin: summary of the counters in"), "{}", text(&o3));
    // $GITHUB_ENV lines: NAME=VALUE, no PATH (the action adds bin/ to $GITHUB_PATH)
    let o = f.cmd("env", &["--format", "github", "--report", "rep"]).env("LD_LIBRARY_PATH", "/user/lib").output().unwrap();
    expect_code(&o, 0);
    let gh = String::from_utf8_lossy(&o.stdout).to_string();
    assert!(gh.lines().any(|l| l == format!("LD_LIBRARY_PATH={}:/user/lib", lib.display())), "{gh}");
    assert!(gh.lines().all(|l| !l.starts_with("PATH=") && !l.starts_with("export")), "{gh}");
    assert!(gh.lines().any(|l| l.starts_with("SIMTWIN_COUNTS_DIR=") && l.ends_with("/rep/counts")), "{gh}");
    // a summary of a directory simtwin did not make is an error
    let o = f.cmd("summary", &["--report", "nowhere"]).output().unwrap();
    expect_code(&o, 125);
    assert!(Path::new(&f.p("rep/counts")).is_dir());
}
