//! The real-device paths of `parity` (`--device real|both`) end to end, on the fixtures'
//! CUDA twin, against a stand-in real driver: simtwin's own emulated driver with its
//! marker and its EMU_CUDA_REAL/EMU_CUDA_COUNTS names renamed
//! (scripts/h200/make-standin), found by the loader as the system's libcuda.so.1. The
//! twin then runs through simtwin's pass-through to it, so the emulated and the "real"
//! columns must be identical and their counters equal call for call; planted defects
//! must show the same on both. Needs target/simtwin (scripts/build) and python3.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// Every feature of the fixture twin (fixtures/twin/twin.h's list).
fn all_features() -> String {
    fixtures::twin::features().join(",")
}

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf()
}

fn simtwin() -> PathBuf {
    let st = root().join("target/simtwin");
    for need in ["bin/simtwin-twin", "bin/fixtures", "lib/libcuda.so.1", "kernels"] {
        assert!(st.join(need).exists(), "{} is missing: run scripts/build first", st.join(need).display());
    }
    st
}

/// A temporary directory with the stand-in driver (`real/`) and one clip of the set.
struct Setup {
    tmp: tempfile::TempDir,
    clip: Vec<String>,
}

fn setup(name: &str, w: u32, h: u32, bitdepth: u32) -> Setup {
    let tmp = tempfile::tempdir().unwrap();
    let o = Command::new("python3")
        .arg(root().join("scripts/h200/make-standin"))
        .arg(simtwin().join("lib"))
        .arg(tmp.path().join("real"))
        .output()
        .unwrap();
    assert!(o.status.success(), "make-standin: {}", String::from_utf8_lossy(&o.stderr));
    let st = Command::new(simtwin().join("bin/fixtures")).args(["make-set", "-o"]).arg(tmp.path()).args(["--only", name]).status().unwrap();
    assert!(st.success(), "fixtures make-set --only {name}");
    let p = |s: &str| tmp.path().join(s).display().to_string();
    let clip = vec![
        "-r".into(),
        p(&format!("{name}.yuv")),
        "-d".into(),
        p(&format!("{name}-dis.yuv")),
        "-W".into(),
        w.to_string(),
        "-H".into(),
        h.to_string(),
        "-b".into(),
        bitdepth.to_string(),
    ];
    Setup { tmp, clip }
}

impl Setup {
    fn standin(&self) -> PathBuf {
        std::fs::canonicalize(self.tmp.path().join("real/libcuda.so.1")).unwrap()
    }
    fn out(&self, name: &str) -> PathBuf {
        self.tmp.path().join(name)
    }
    /// parity with the stand-in as the system's driver (EMU_CUDA_KERNELS for the stand-in
    /// itself, which the timed direct runs of bench load without simtwin in between).
    fn parity(&self, sub: &str, out: &str, extra: &[&str]) -> Output {
        let mut c = Command::new(env!("CARGO_BIN_EXE_parity"));
        c.arg(sub).args(&self.clip).arg("--simtwin").arg(simtwin()).arg("--out").arg(self.out(out)).args(extra);
        c.env("LD_LIBRARY_PATH", self.tmp.path().join("real")).env("EMU_CUDA_KERNELS", simtwin().join("kernels"));
        c.env_remove("EMU_CUDA_COUNTS").env_remove("EMU_CUDA_REAL").env_remove("SIMTWIN_DIR");
        c.output().unwrap()
    }
}

fn text(o: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr))
}

#[track_caller]
fn expect(o: &Output, code: i32) {
    assert_eq!(o.status.code(), Some(code), "output:\n{}", text(o));
}

fn json(p: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))).unwrap()
}

#[test]
fn stand_in_is_a_real_driver_to_parity_and_not_simtwin() {
    let s = setup("textured-256x256-8", 256, 256, 8);
    let o = Command::new(env!("CARGO_BIN_EXE_parity"))
        .args(["driver-info", "--json"])
        .env("LD_LIBRARY_PATH", s.tmp.path().join("real"))
        .output()
        .unwrap();
    expect(&o, 0);
    let v: Value = serde_json::from_str(String::from_utf8_lossy(&o.stdout).trim()).unwrap();
    assert_eq!(v["emulated"], false, "{v}");
    assert_eq!(v["devices"], 1, "{v}");
    assert_eq!(v["path"].as_str().unwrap(), s.standin().display().to_string());
    // the script refuses a library that is not simtwin's driver
    let o = Command::new("python3").arg(root().join("scripts/h200/make-standin")).arg(s.tmp.path()).arg(s.out("again")).output().unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
}

#[test]
fn frames_both_emulated_and_real_are_identical_on_every_feature() {
    let s = setup("textured-576x324-10", 576, 324, 10);
    let o = s.parity("frames", "both", &["--features", &all_features(), "--device", "both"]);
    expect(&o, 0);
    let j = json(&s.out("both/summary.json"));
    assert_eq!(j["frames"], 3);
    assert_eq!(j["identical_frames"], 3);
    let evr = &j["emulated_vs_real"];
    assert_eq!(evr["identical_frames"], 3, "{evr}");
    assert!(evr["differences"].as_array().unwrap().is_empty());
    for m in ["sse_y", "band_mask", "log_stat", "topk", "temporal"] {
        assert_eq!(evr["metrics"][m]["identical"], 3, "{m}: {evr}");
    }
    // the pass-through counted what the emulated driver counted, call for call
    assert_eq!(evr["counters"]["differences"].as_array().unwrap().len(), 0, "{}", evr["counters"]);
    assert!(evr["counters"]["compared"].as_u64().unwrap() > 30, "{}", evr["counters"]);
    let real = j["runs"].as_array().unwrap().iter().find(|r| r["label"] == "cuda-real").unwrap().clone();
    assert!(real["driver"].as_str().unwrap().starts_with(&format!("pass-through to {}", s.standin().display())), "{real}");
    assert!(real["launches"].as_object().unwrap().len() >= 5, "{real}");
    let counts = std::fs::read_dir(s.out("both/counts/cuda-real")).unwrap().next().unwrap().unwrap().path();
    let c = json(&counts);
    assert_eq!(c["driver"], format!("pass-through {}", s.standin().display()));
    let md = std::fs::read_to_string(s.out("both/summary.md")).unwrap();
    assert!(md.contains("## Emulated vs real device: 3/3 frames identical in every metric"), "{md}");
}

#[test]
fn frames_both_shows_a_planted_defect_on_both_sides_alike() {
    let s = setup("textured-256x256-8", 256, 256, 8);
    let o = s.parity("frames", "clamp", &["--features", "band_mask", "--device", "both", "--defect", "clamp-borders"]);
    expect(&o, 1);
    let j = json(&s.out("clamp/summary.json"));
    for c in j["comparisons"].as_array().unwrap() {
        assert_eq!(c["pass"], false, "{c}");
        assert_eq!(c["metrics"]["band_mask"]["identical"], 0, "{c}");
    }
    assert_eq!(j["emulated_vs_real"]["identical_frames"], 4, "the stand-in computes what the emulated driver computes");
}

#[test]
fn transfers_both_counts_are_equal_and_the_gate_holds_on_each_device() {
    let s = setup("textured-256x256-8", 256, 256, 8);
    let o = s.parity("transfers", "tr", &["--features", &all_features(), "--device", "both", "--n1", "2", "--n2", "4", "--no-unsupported"]);
    expect(&o, 0);
    let j = json(&s.out("tr/transfers.json"));
    let evr = &j["emulated_vs_real"];
    assert_eq!(evr["equal_per_frame"], true, "{evr}");
    for t in evr["total_differences"].as_array().unwrap() {
        assert!(t["differences"].as_array().unwrap().is_empty(), "{t}");
    }
    let (e, r) = (&j["devices"]["emulated"]["per_frame"], &j["devices"]["real"]["per_frame"]);
    assert!(e["copies.HtoD.bytes"].as_f64().unwrap() > 0.0);
    assert_eq!(e, r);
    // the host-roundtrip defect breaks the gate on both devices, and alike
    let o = s.parity(
        "transfers",
        "rt",
        &[
            "--features",
            "temporal",
            "--defect",
            "host-roundtrip",
            "--baseline",
            "temporal",
            "--max-htod-per-frame",
            "0",
            "--device",
            "both",
            "--n1",
            "2",
            "--n2",
            "4",
        ],
    );
    expect(&o, 1);
    let t = text(&o);
    assert!(t.contains("[emulated] --max-htod-per-frame 0") && t.contains("[real device] --max-htod-per-frame 0"), "{t}");
    let j = json(&s.out("rt/transfers.json"));
    assert_eq!(j["emulated_vs_real"]["equal_per_frame"], true);
    assert_eq!(j["devices"]["real"]["net_per_frame"]["copies.HtoD.bytes"], (256 * 256) as f64);
}

#[test]
fn bench_both_times_three_columns() {
    let s = setup("textured-256x256-8", 256, 256, 8);
    let o = s.parity(
        "bench",
        "bench",
        &["--features", "sse,topk", "--frames", "4", "--rounds", "1", "--backend", "cpu", "--b-backend", "cuda", "--device", "both"],
    );
    expect(&o, 0);
    let j = json(&s.out("bench/bench.json"));
    let cmds = j["commands"].as_array().unwrap();
    assert_eq!(cmds.iter().map(|c| c["label"].as_str().unwrap()).collect::<Vec<_>>(), ["A", "B-emulated", "B-real"]);
    for c in cmds {
        assert!(c["ms_per_frame"].as_f64().unwrap().is_finite(), "{c}");
    }
    assert_eq!(j["real_driver"], s.standin().display().to_string());
}
