//! scripts/h200-audit without a GPU: `prepare` assembles a small, complete bundle;
//! `run` against a stand-in real driver (scripts/h200/make-standin) does every step and
//! writes the tables; with no device it exits 77 and says so; scripts/h200/audit-tables
//! reads compute-sanitizer logs and names steps that did not run. Needs target/simtwin
//! (scripts/build), python3 and cc.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf()
}

fn audit(args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut c = Command::new(root().join("scripts/h200-audit"));
    c.args(args).current_dir(root()).env_remove("LD_LIBRARY_PATH").env_remove("EMU_CUDA_KERNELS").env_remove("EMU_CUDA_COUNTS");
    for (k, v) in env {
        c.env(k, v);
    }
    c.output().unwrap()
}

fn text(o: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr))
}

#[track_caller]
fn expect(o: &Output, code: i32) {
    assert_eq!(o.status.code(), Some(code), "output:\n{}", text(o));
}

fn prepare(dir: &Path) -> PathBuf {
    let b = dir.join("bundle");
    let o = audit(&["prepare", "--no-build", b.to_str().unwrap()], &[]);
    expect(&o, 0);
    assert!(text(&o).contains("carry: ["), "{}", text(&o));
    b
}

fn files(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    v.sort();
    v
}

#[test]
fn prepare_makes_a_small_complete_bundle() {
    let t = tempfile::tempdir().unwrap();
    let b = prepare(t.path());
    for f in [
        "bin/parity",
        "bin/fixtures",
        "bin/simtwin-twin",
        "bin/passthrough-overhead",
        "lib/libcuda.so.1",
        "lib/libcuda.so",
        "kernels/sse.simtwin.json",
        "kernels/sse.so",
        "MANIFEST.txt",
    ] {
        assert!(b.join(f).exists(), "{f} missing");
    }
    assert!(!b.join("kernels/.simtwin-build").exists(), "kernels-host's build directory is not carried");
    let manifest = std::fs::read_to_string(b.join("MANIFEST.txt")).unwrap();
    assert!(manifest.contains("commit: ") && manifest.contains("./bin/parity"), "{manifest}");
    let bytes: u64 = walk(&b);
    assert!(bytes < 32 << 20, "bundle is {bytes} bytes");
    // bad arguments and an incomplete bundle are setup errors
    expect(&audit(&["prepare"], &[]), 2);
    expect(&audit(&["run", t.path().join("nothing").to_str().unwrap(), t.path().join("out").to_str().unwrap()], &[]), 2);
    std::fs::remove_file(b.join("bin/passthrough-overhead")).unwrap();
    let o = audit(&["run", b.to_str().unwrap(), t.path().join("out").to_str().unwrap()], &[]);
    expect(&o, 2);
    assert!(text(&o).contains("passthrough-overhead missing"), "{}", text(&o));
    expect(&audit(&["frobnicate"], &[]), 2);
}

fn walk(p: &Path) -> u64 {
    std::fs::read_dir(p)
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            let m = std::fs::symlink_metadata(e.path()).unwrap();
            if m.is_dir() {
                walk(&e.path())
            } else {
                m.len()
            }
        })
        .sum()
}

#[test]
fn run_against_a_stand_in_does_every_step_and_writes_the_tables() {
    let t = tempfile::tempdir().unwrap();
    let b = prepare(t.path());
    let standin = t.path().join("standin");
    let o = Command::new("python3").arg(root().join("scripts/h200/make-standin")).arg(b.join("lib")).arg(&standin).output().unwrap();
    assert!(o.status.success(), "{}", text(&o));
    let out = t.path().join("out");
    let env = [
        ("H200_AUDIT_STANDIN", standin.to_str().unwrap()),
        ("H200_AUDIT_SET_CLIPS", "textured-256x256-8,ramp-1920x64-8"),
        ("H200_AUDIT_BENCH", "256x144:3"),
        ("H200_AUDIT_BENCH_ROUNDS", "1"),
        ("H200_AUDIT_DEMO_CLIPS", "banded-256x256-8,textured-256x256-8,ramp-3840x128-8"),
        ("H200_AUDIT_OVERHEAD_CALLS", "20000"),
        ("H200_AUDIT_JOBS", "2"),
        ("TMPDIR", t.path().to_str().unwrap()),
    ];
    let o = audit(&["run", b.to_str().unwrap(), out.to_str().unwrap()], &env);
    expect(&o, 0);
    assert_eq!(files(&out), ["audit.json", "h200-audit.tar.gz", "run.log", "summary.md"]);
    let md = std::fs::read_to_string(out.join("summary.md")).unwrap();
    let has = |s: &str| assert!(md.contains(s), "summary.md lacks {s:?}:\n{md}");
    has("**STAND-IN RUN**");
    has("| textured-256x256-8 | 4 | 4/4 | 4/4 | 4/4 | none | parity |");
    has("| ramp-1920x64-8 | 4 | 4/4 | 4/4 | 4/4 | none | parity |");
    has("| topk | 8 | 8 | 8 | 8 | 0 |");
    has("No frame differs between the emulated driver and the real device.");
    has("| all | yes | none | none |");
    has("[emulated] --max-htod-per-frame 0");
    has("[real device] --max-htod-per-frame 0");
    has("| cuCtxGetDevice |");
    has("compute-sanitizer skipped: a stand-in driver is not a GPU");
    has("| clamp-borders | **differs** (0/4 frames identical) | 4/4 |");
    has("| big-block | run failed: simtwin-twin: cuLaunchKernel failed: CUDA_ERROR_INVALID_VALUE (1) |");
    has("| divergent-barrier | same as CPU | 4/4 |");
    // the demo's checks: frames per clip and feature, transfer audits, the race
    // detector's clean control
    has("21/21 checks pass");
    assert!(!md.contains("| real-programs |"), "no real-programs step was asked for:\n{md}");
    let j: Value = serde_json::from_str(&std::fs::read_to_string(out.join("audit.json")).unwrap()).unwrap();
    assert_eq!(j["standin"], true);
    assert_eq!(j["bench"][0]["size"], "256x144");
    // timings of 3-frame runs on a loaded test machine: numbers, not necessarily positive ones
    for k in ["cpu_ms", "emulated_ms", "real_ms"] {
        assert!(j["bench"][0][k].as_f64().is_some_and(f64::is_finite), "{k}: {}", j["bench"]);
    }
    let ov = &j["overhead"]["entries"]["cuStreamQuery"];
    assert!(ov["passthrough_ns"].as_f64().unwrap() > 0.0 && ov["real_ns"].as_f64().unwrap() > 0.0, "{ov}");
    let defects: Vec<&str> = j["defects"].as_array().unwrap().iter().map(|d| d["defect"].as_str().unwrap()).collect();
    assert_eq!(defects.len(), 9, "{defects:?}");
    assert_eq!(j["transfers"].as_array().unwrap().len(), 7);
    // the tarball holds the reports, not the clips; the work directory is gone
    let tar = Command::new("tar").arg("tzf").arg(out.join("h200-audit.tar.gz")).output().unwrap();
    let list = String::from_utf8_lossy(&tar.stdout);
    assert!(
        list.contains("/frames/textured-256x256-8/summary.json")
            && list.contains("/transfers/all/transfers.json")
            && list.contains("/overhead.json"),
        "{list}"
    );
    assert!(!list.contains(".yuv"), "{list}");
    assert!(
        !std::fs::read_dir(t.path()).unwrap().any(|e| e.unwrap().file_name().to_string_lossy().starts_with("h200-audit.")),
        "work directory left behind"
    );
    let log = std::fs::read_to_string(out.join("run.log")).unwrap();
    assert!(log.contains("h200-audit: done in"), "{log}");
}

#[test]
fn run_refuses_a_missing_real_programs_bundle_before_anything_runs() {
    let t = tempfile::tempdir().unwrap();
    let b = prepare(t.path());
    let out = t.path().join("out");
    let not_a_bundle = t.path().join("not-a-bundle");
    std::fs::create_dir_all(&not_a_bundle).unwrap();
    for (rp, says) in
        [("/nonexistent", "real-programs bundle not found"), (not_a_bundle.to_str().unwrap(), "is not a real-programs bundle")]
    {
        let o =
            audit(&["run", b.to_str().unwrap(), out.to_str().unwrap(), "--real-programs", rp], &[("TMPDIR", t.path().to_str().unwrap())]);
        expect(&o, 2);
        assert!(text(&o).contains(says), "{}", text(&o));
        assert!(!out.exists(), "nothing is written before the arguments are checked");
    }
}

#[test]
fn run_without_a_device_exits_77_and_says_so() {
    let t = tempfile::tempdir().unwrap();
    let b = prepare(t.path());
    // a driver with no device (cuInit answers CUDA_ERROR_NO_DEVICE)
    let nodev = t.path().join("nodev");
    std::fs::create_dir_all(&nodev).unwrap();
    let st = Command::new("cc")
        .args(["-shared", "-fPIC", "-o"])
        .arg(nodev.join("libcuda.so.1"))
        .arg(root().join("parity/tests/fake/libcuda.c"))
        .status()
        .unwrap();
    assert!(st.success());
    let out = t.path().join("out");
    let o = audit(
        &["run", b.to_str().unwrap(), out.to_str().unwrap()],
        &[("H200_AUDIT_STANDIN", nodev.to_str().unwrap()), ("TMPDIR", t.path().to_str().unwrap())],
    );
    expect(&o, 77);
    let md = std::fs::read_to_string(out.join("summary.md")).unwrap();
    assert!(md.contains("**No real device**") && md.contains("CUDA_ERROR_NO_DEVICE"), "{md}");
    assert!(out.join("run.log").exists() && out.join("h200-audit.tar.gz").exists());
}

#[test]
fn tables_read_sanitizer_logs_and_name_what_did_not_run() {
    let t = tempfile::tempdir().unwrap();
    let w = t.path();
    std::fs::create_dir_all(w.join("sanitizer")).unwrap();
    std::fs::create_dir_all(w.join("logs")).unwrap();
    std::fs::write(w.join("machine.txt"), "host: gpu\nstandin: none\n").unwrap();
    std::fs::write(w.join("driver.json"), r#"{"path": "/usr/lib/libcuda.so.1", "devices": 1, "emulated": false}"#).unwrap();
    let put = |name: &str, log: &str, rc: &str| {
        std::fs::write(w.join(format!("sanitizer/{name}.log")), log).unwrap();
        std::fs::write(w.join(format!("sanitizer/{name}.rc")), format!("{rc}\n")).unwrap();
    };
    let clean = "========= COMPUTE-SANITIZER\n========= ERROR SUMMARY: 0 errors\n";
    for tool in ["memcheck", "racecheck", "synccheck", "initcheck"] {
        put(&format!("clean.{tool}"), clean, "0");
    }
    put(
        "missing-sync.racecheck",
        "========= COMPUTE-SANITIZER\n========= Error: Race reported between Write access at band_mode_nosync_u8+0x2a0 in band_mask.cu:120\n=========     and Read access at band_mode_nosync_u8+0x310 in band_mask.cu:124 [1024 hazards]\n=========\n========= RACECHECK SUMMARY: 1 hazard displayed (1 error, 0 warnings)\n",
        "86",
    );
    put(
        "big-block.memcheck",
        "========= COMPUTE-SANITIZER\n========= Program hit CUDA_ERROR_INVALID_VALUE (error 1) due to \"invalid argument\" on CUDA API call to cuLaunchKernel.\n=========     Saved host backtrace up to driver entry point at error\n========= Target application returned an error\n========= ERROR SUMMARY: 1 error\n",
        "86",
    );
    put("divergent-barrier.synccheck", "========= COMPUTE-SANITIZER\n========= ERROR SUMMARY: 0 errors\n", "0");
    put("atomic-order.initcheck", "========= COMPUTE-SANITIZER\n========= Error: Device not supported\n", "1");
    // killed at its limit: a log, no exit status
    std::fs::write(w.join("sanitizer/host-roundtrip.memcheck.log"), "========= COMPUTE-SANITIZER\n").unwrap();
    std::fs::write(
        w.join("steps.tsv"),
        "sanitizer-early-read-initcheck\t124\t150\tkilled at its 150 s limit\noverhead\tskipped\t0\tno time left in the budget\n",
    )
    .unwrap();
    let o =
        Command::new("python3").arg(root().join("scripts/h200/audit-tables")).arg(w).arg("--json").arg(w.join("a.json")).output().unwrap();
    assert!(o.status.success(), "{}", text(&o));
    let md = String::from_utf8_lossy(&o.stdout);
    let defects = &md[md.find("| defect | device alone |").expect("defects table")..];
    let row =
        |d: &str| defects.lines().find(|l| l.starts_with(&format!("| {d} |"))).unwrap_or_else(|| panic!("no row {d}:\n{md}")).to_string();
    let cells = |d: &str| row(d).split(" | ").map(str::to_string).collect::<Vec<_>>();
    // columns: defect, device alone, emulated = real, memcheck, racecheck, synccheck, initcheck, ...
    assert_eq!(&cells("clean")[3..7], ["no", "no", "no", "no"], "{}", row("clean"));
    assert_eq!(cells("missing-sync")[4], "**caught** (1)", "{}", row("missing-sync"));
    assert_eq!(cells("big-block")[3], "**caught** (1)", "{}", row("big-block"));
    assert_eq!(cells("divergent-barrier")[5], "no");
    assert_eq!(cells("early-read")[6], "-", "not run: no log");
    assert_eq!(cells("atomic-order")[6], "refused the device");
    assert!(md.contains("answered \"Device not supported\""), "{md}");
    assert_eq!(cells("host-roundtrip")[3], "killed (time limit)");
    assert!(
        md.contains(
            "| missing-sync | racecheck | `Error: Race reported between Write access at band_mode_nosync_u8+0x2a0 in band_mask.cu:120` |"
        ),
        "{md}"
    );
    assert!(md.contains("| big-block | memcheck | `Program hit CUDA_ERROR_INVALID_VALUE (error 1) due to \"invalid argument\" on CUDA API call to cuLaunchKernel.` |"), "{md}");
    assert!(md.contains("| overhead | skipped | 0 | no time left in the budget |"), "{md}");
    assert!(md.contains("Not measured: skipped: no time left in the budget"), "{md}");
    let j: Value = serde_json::from_str(&std::fs::read_to_string(w.join("a.json")).unwrap()).unwrap();
    assert_eq!(j["defects"][3]["sanitizer"]["racecheck"]["racecheck"]["errors"], 1, "{}", j["defects"][3]);
    assert_eq!(j["defects"][0]["sanitizer"]["memcheck"]["errors"], 0);
}
