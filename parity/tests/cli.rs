//! End-to-end tests of the `parity` CLI against fake extractors (tests/fake/): a Python
//! script that speaks the twin's and the VMAF CLI's interfaces and writes chosen
//! differences, and fake libcuda.so.1 builds (emulated marker, no device, one device).

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const W: u32 = 16;
const H: u32 = 16;
const FRAMES: u64 = 5;

fn fake_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fake")
}

fn extractor() -> String {
    fake_dir().join("extractor.py").display().to_string()
}

fn build_lib(dir: &Path, defines: &[&str]) {
    std::fs::create_dir_all(dir).unwrap();
    let st = Command::new("cc")
        .args(["-shared", "-fPIC", "-o"])
        .arg(dir.join("libcuda.so.1"))
        .arg(fake_dir().join("libcuda.c"))
        .args(defines)
        .status()
        .expect("a C compiler (cc) is needed to build the fake libcuda.so.1");
    assert!(st.success());
}

struct Env {
    tmp: tempfile::TempDir,
}

impl Env {
    /// A fake simtwin layout (lib/libcuda.so.1 with the marker, kernels/, bin/simtwin-twin)
    /// and a 5-frame 16x16 clip pair.
    fn new() -> Env {
        let tmp = tempfile::tempdir().unwrap();
        let st = tmp.path().join("simtwin");
        build_lib(&st.join("lib"), &["-DEMULATED"]);
        std::fs::create_dir_all(st.join("kernels")).unwrap();
        std::fs::create_dir_all(st.join("bin")).unwrap();
        std::os::unix::fs::symlink(fake_dir().join("extractor.py"), st.join("bin/simtwin-twin")).unwrap();
        std::os::unix::fs::symlink(fake_dir().join("fixtures.py"), st.join("bin/fixtures")).unwrap();
        let bytes = (W * H + 2 * (W / 2) * (H / 2)) as usize * FRAMES as usize;
        std::fs::write(tmp.path().join("ref.yuv"), vec![0u8; bytes]).unwrap();
        std::fs::write(tmp.path().join("dis.yuv"), vec![1u8; bytes]).unwrap();
        Env { tmp }
    }
    fn p(&self, rel: &str) -> PathBuf {
        self.tmp.path().join(rel)
    }
    fn s(&self, rel: &str) -> String {
        self.p(rel).display().to_string()
    }
    fn out(&self) -> PathBuf {
        self.p("out")
    }
    fn clip_args(&self) -> Vec<String> {
        vec!["-r".into(), self.s("ref.yuv"), "-d".into(), self.s("dis.yuv"), "-W".into(), W.to_string(), "-H".into(), H.to_string()]
    }
    fn parity(&self, sub: &str, extra: &[&str], env: &[(&str, &str)]) -> Output {
        let mut c = Command::new(env!("CARGO_BIN_EXE_parity"));
        c.arg(sub);
        if matches!(sub, "frames" | "transfers" | "bench") {
            c.args(self.clip_args());
            c.args(["--simtwin", &self.s("simtwin")]);
            c.args(["--features", "sse"]);
        }
        if !extra.iter().any(|a| *a == "--out" || *a == "-o") && sub != "driver-info" {
            c.args(["--out", &self.out().display().to_string()]);
        }
        c.args(extra);
        c.current_dir(self.tmp.path());
        c.env_remove("LD_LIBRARY_PATH").env_remove("EMU_CUDA_COUNTS").env_remove("SIMTWIN_DIR");
        for (k, v) in env {
            c.env(k, v);
        }
        c.output().unwrap()
    }
    fn summary(&self) -> Value {
        read_json(&self.out().join("summary.json"))
    }
}

fn read_json(p: &Path) -> Value {
    let t = std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    serde_json::from_str(&t).unwrap()
}

fn code(o: &Output) -> i32 {
    o.status.code().expect("exit status")
}

fn text(o: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr))
}

#[track_caller]
fn expect_code(o: &Output, want: i32) {
    assert_eq!(code(o), want, "unexpected exit status; output:\n{}", text(o));
}

// ------------------------------------------------------------------ frames

#[test]
fn frames_identical_outputs_pass_and_write_every_report() {
    let e = Env::new();
    let o = e.parity("frames", &[], &[]);
    expect_code(&o, 0);
    let s = e.summary();
    assert_eq!(s["frames"], 5);
    assert_eq!(s["verdict"], "parity");
    assert_eq!(s["identical_frames"], 5);
    for m in ["m_a", "m_b", "m_z", "m_int"] {
        assert_eq!(s["metrics"][m]["identical"], 5, "{m}");
        assert_eq!(s["metrics"][m]["max_ulp"], 0);
        assert_eq!(s["metrics"][m]["max_abs"], 0.0);
    }
    assert!(s["precision_caveat"].is_null());
    // proof of device execution from the counters
    assert_eq!(s["runs"][1]["launches"]["sse_kernel"], 5.0);
    let csv = std::fs::read_to_string(e.out().join("per_frame.csv")).unwrap();
    assert_eq!(csv.lines().count(), 1 + 5 * 4);
    assert!(csv.lines().next().unwrap().starts_with("frame,metric,cpu,cuda-emulated,cpu_bits,cuda-emulated_bits,cuda-emulated_status"));
    let svg = std::fs::read_to_string(e.out().join("diff.svg")).unwrap();
    assert!(svg.starts_with("<svg") && svg.contains("m_a"));
    let md = std::fs::read_to_string(e.out().join("summary.md")).unwrap();
    assert!(md.contains("PARITY") && md.contains("| m_a | 5/5 |"), "{md}");
    assert!(text(&o).contains("--backend cuda"), "flags are printed");
}

#[test]
fn frames_one_ulp_difference_fails_and_points_at_frame_and_metric() {
    let e = Env::new();
    let o = e.parity("frames", &["--defect", "ulp"], &[]);
    expect_code(&o, 1);
    let s = e.summary();
    assert_eq!(s["verdict"], "differences");
    assert_eq!(s["metrics"]["m_a"]["identical"], 4);
    assert_eq!(s["metrics"]["m_a"]["max_ulp"], 1);
    assert_eq!(s["metrics"]["m_a"]["first_diff_frame"], 2);
    assert_eq!(s["metrics"]["m_b"]["identical"], 5);
    let fb = &s["comparisons"][0]["first_beyond_tolerance"];
    assert_eq!(fb["frame"], 2);
    assert_eq!(fb["metric"], "m_a");
    assert!(text(&o).contains("frame 2 metric m_a"));
    let csv = std::fs::read_to_string(e.out().join("per_frame.csv")).unwrap();
    let row = csv.lines().find(|l| l.starts_with("2,m_a,")).unwrap();
    assert!(row.contains(",beyond,numeric,") && row.ends_with(",1"), "{row}");
}

#[test]
fn frames_tolerance_table_accepts_one_ulp() {
    let e = Env::new();
    std::fs::write(e.p("tol.txt"), "# allow one ULP on m_a\nm_a ulp=1\n* exact\n").unwrap();
    let o = e.parity("frames", &["--defect", "ulp", "--tolerances", &e.s("tol.txt")], &[]);
    expect_code(&o, 0);
    let s = e.summary();
    assert_eq!(s["metrics"]["m_a"]["within_tolerance"], 1);
    assert_eq!(s["metrics"]["m_a"]["tolerance"], "ulp<=1");
    std::fs::write(e.p("tol0.txt"), "m_a abs=1e-30\n").unwrap();
    let o = e.parity("frames", &["--defect", "ulp", "--tolerances", &e.s("tol0.txt")], &[]);
    expect_code(&o, 1);
}

#[test]
fn frames_nan_against_number_is_a_difference() {
    let e = Env::new();
    let o = e.parity("frames", &["--defect", "nan"], &[]);
    expect_code(&o, 1);
    let s = e.summary();
    assert_eq!(s["metrics"]["m_b"]["nan_mismatches"], 1);
    assert_eq!(s["metrics"]["m_b"]["first_beyond_frame"], 1);
    assert_eq!(s["comparisons"][0]["first_beyond_tolerance"]["kind"], "nan-vs-number");
}

#[test]
fn frames_negative_zero_is_a_difference_even_with_a_tolerance() {
    let e = Env::new();
    std::fs::write(e.p("tol.txt"), "* abs=1 ulp=100\n").unwrap();
    let o = e.parity("frames", &["--defect", "negzero", "--tolerances", &e.s("tol.txt")], &[]);
    expect_code(&o, 1);
    let s = e.summary();
    assert_eq!(s["metrics"]["m_z"]["signed_zero_mismatches"], 1);
    assert_eq!(s["comparisons"][0]["first_beyond_tolerance"]["b"], "-0");
}

#[test]
fn frames_short_output_is_a_frame_count_error() {
    let e = Env::new();
    let o = e.parity("frames", &["--defect", "short"], &[]);
    expect_code(&o, 2);
    assert!(text(&o).contains("frame-count mismatch"), "{}", text(&o));
    assert_eq!(e.summary()["verdict"], "error");
}

#[test]
fn frames_malformed_output_is_an_input_error() {
    let e = Env::new();
    let o = e.parity("frames", &["--defect", "malformed"], &[]);
    expect_code(&o, 2);
    assert!(text(&o).contains("malformed VMAF json output"), "{}", text(&o));
}

#[test]
fn frames_missing_binary_is_a_setup_error() {
    let e = Env::new();
    let o = e.parity("frames", &["--twin", "/nonexistent/simtwin-twin"], &[]);
    expect_code(&o, 2);
    assert!(text(&o).contains("extractor binary not found"), "{}", text(&o));
}

#[test]
fn frames_extractor_failure_is_reported_with_its_stderr() {
    let e = Env::new();
    let o = e.parity("frames", &["--defect", "fail"], &[]);
    expect_code(&o, 2);
    let t = text(&o);
    assert!(t.contains("cuda-emulated extractor failed with exit status 3") && t.contains("CUDA_ERROR_INVALID_VALUE"), "{t}");
}

#[test]
fn frames_cuda_run_without_kernel_launches_is_an_error() {
    let e = Env::new();
    let o = e.parity("frames", &["--defect", "nolaunch"], &[]);
    expect_code(&o, 2);
    assert!(text(&o).contains("launched no kernel"), "{}", text(&o));
    let o = e.parity("frames", &["--defect", "nocounts"], &[]);
    expect_code(&o, 2);
    assert!(text(&o).contains("wrote no counters file"), "{}", text(&o));
}

#[test]
fn frames_driver_hazards_fail_unless_allowed() {
    let e = Env::new();
    let o = e.parity("frames", &["--defect", "hazard"], &[]);
    expect_code(&o, 1);
    let s = e.summary();
    assert_eq!(s["hazards"]["count"], 1);
    assert_eq!(s["hazards"]["reports"][0]["kernel"], "temporal_sad_div_u8");
    let o = e.parity("frames", &["--defect", "hazard", "--allow-hazards"], &[]);
    expect_code(&o, 0);
}

#[test]
fn frames_short_printed_precision_gives_the_caveat() {
    let e = Env::new();
    let o = e.parity("frames", &[], &[("FAKE_DIGITS", "6")]);
    expect_code(&o, 0);
    let s = e.summary();
    let c = s["precision_caveat"].as_str().unwrap();
    assert!(c.contains("identical at the printed precision") && c.contains("cpu printed at most") && c.contains("cuda-emulated printed at most"), "{c}");
    assert!(text(&o).contains("printed precision"));
}

#[test]
fn frames_custom_templates_with_xml_and_csv_outputs() {
    let e = Env::new();
    let x = extractor();
    let cpu = format!("{x} --backend cpu --reference {{ref}} --distorted {{dis}} --width {{width}} --height {{height}} --bitdepth {{bitdepth}} --frames {{frames}} --format csv --output {{output}}");
    let cuda = format!("{x} --backend cuda --reference {{ref}} --distorted {{dis}} --width {{width}} --height {{height}} --bitdepth {{bitdepth}} --frames {{frames}} --format xml {{defect_arg}} --output {{output}}");
    let o = e.parity("frames", &["--cpu-cmd", &cpu, "--cuda-cmd", &cuda], &[]);
    expect_code(&o, 0);
    let s = e.summary();
    assert_eq!(s["sides"][0]["format"], "csv");
    assert_eq!(s["sides"][1]["format"], "xml");
    let o = e.parity("frames", &["--cpu-cmd", &cpu, "--cuda-cmd", &cuda, "--defect", "ulp"], &[]);
    expect_code(&o, 1);
    let o = e.parity("frames", &["--cpu-cmd", "tool {nope}"], &[]);
    expect_code(&o, 2);
    assert!(text(&o).contains("unknown placeholder {nope}"));
}

#[test]
fn frames_vmaf_presets_use_each_flavours_flags() {
    let e = Env::new();
    let o = e.parity("frames", &["--preset", "vmaf-fork", "--vmaf", &extractor()], &[]);
    expect_code(&o, 0);
    let t = text(&o);
    assert!(t.contains("--backend cuda --precision max --json") && t.contains("--frame_cnt 5") && t.contains("--feature sse"), "{t}");
    assert!(e.summary()["precision_caveat"].is_null());
    let o = e.parity("frames", &["--preset", "vmaf-upstream", "--vmaf", &extractor()], &[]);
    expect_code(&o, 0);
    let t = text(&o);
    assert!(t.contains("--gpumask 0") && t.contains("--gpumask -1") && !t.contains("--backend"), "{t}");
    assert!(e.summary()["precision_caveat"].as_str().unwrap().contains("printed precision"));
}

#[test]
fn frames_metric_selection() {
    let e = Env::new();
    let o = e.parity("frames", &["--defect", "ulp", "--ignore-metric", "m_a"], &[]);
    expect_code(&o, 0);
    assert!(e.summary()["metrics"].get("m_a").is_none());
    let o = e.parity("frames", &["--defect", "ulp", "--metrics", "m_b,m_z"], &[]);
    expect_code(&o, 0);
    assert_eq!(e.summary()["metrics"].as_object().unwrap().len(), 2);
}

#[test]
fn frames_bad_clip_size_and_frame_count() {
    let e = Env::new();
    let o = e.parity("frames", &["--frames", "9"], &[]);
    expect_code(&o, 2);
    assert!(text(&o).contains("hold only 5 frames"));
    let o = e.parity("frames", &["--frames", "3"], &[]);
    expect_code(&o, 0);
    assert_eq!(e.summary()["frames"], 3);
    std::fs::write(e.p("ref.yuv"), vec![0u8; 100]).unwrap();
    let o = e.parity("frames", &[], &[]);
    expect_code(&o, 2);
    assert!(text(&o).contains("not a whole number"), "{}", text(&o));
}

// ------------------------------------------------------------------ devices

#[test]
fn real_device_absent_exits_77() {
    let e = Env::new();
    build_lib(&e.p("nodev"), &[]);
    let o = e.parity("frames", &["--device", "real", "--proof", "log:FAKE CUDA ACTIVE"], &[("LD_LIBRARY_PATH", &e.s("nodev"))]);
    expect_code(&o, 77);
    assert!(text(&o).contains("CUDA_ERROR_NO_DEVICE"), "{}", text(&o));
    assert_eq!(e.summary()["verdict"], "skipped");
}

#[test]
fn real_device_refuses_the_emulated_driver() {
    let e = Env::new();
    let o = e.parity("frames", &["--device", "real", "--proof", "none"], &[("LD_LIBRARY_PATH", &e.s("simtwin/lib"))]);
    expect_code(&o, 2);
    assert!(text(&o).contains("refusing --device real") && text(&o).contains("simtwin_emulated_driver"), "{}", text(&o));
}

#[test]
fn real_device_runs_with_log_proof_and_both_gives_three_columns() {
    let e = Env::new();
    build_lib(&e.p("gpu"), &["-DDEVICES=1"]);
    let env = [("LD_LIBRARY_PATH", e.s("gpu"))];
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let o = e.parity("frames", &["--device", "real"], &env);
    expect_code(&o, 2);
    assert!(text(&o).contains("--proof log:TEXT"), "{}", text(&o));
    let o = e.parity("frames", &["--device", "real", "--proof", "log:NOT PRINTED"], &env);
    expect_code(&o, 2);
    let o = e.parity("frames", &["--device", "real", "--proof", "log:FAKE CUDA ACTIVE"], &env);
    expect_code(&o, 0);
    assert_eq!(e.summary()["sides"][1]["label"], "cuda-real");
    // both: the counters prove the emulated run, the log line the real one
    let o = e.parity("frames", &["--device", "both", "--proof", "log:FAKE CUDA ACTIVE"], &env);
    expect_code(&o, 0);
    let o = e.parity("frames", &["--device", "both", "--proof", "log:FAKE CUDA ACTIVE", "--defect", "nolaunch"], &env);
    expect_code(&o, 2);
    assert!(text(&o).contains("launched no kernel"));
    let o = e.parity("frames", &["--device", "both", "--proof", "none", "--defect", "ulp"], &env);
    expect_code(&o, 1);
    let s = e.summary();
    assert_eq!(s["comparisons"].as_array().unwrap().len(), 2);
    let head = std::fs::read_to_string(e.out().join("per_frame.csv")).unwrap();
    assert!(head.lines().next().unwrap().starts_with("frame,metric,cpu,cuda-emulated,cuda-real,"), "{head}");
}

#[test]
fn driver_info_reports_the_emulated_marker() {
    let e = Env::new();
    let o = e.parity("driver-info", &["--json"], &[("LD_LIBRARY_PATH", &e.s("simtwin/lib"))]);
    expect_code(&o, 0);
    let v: Value = serde_json::from_str(String::from_utf8_lossy(&o.stdout).trim()).unwrap();
    assert_eq!(v["emulated"], true);
    assert!(v["path"].as_str().unwrap().ends_with("libcuda.so.1"));
}

#[test]
fn emulated_mode_needs_the_driver_build() {
    let e = Env::new();
    std::fs::remove_file(e.p("simtwin/lib/libcuda.so.1")).unwrap();
    let o = e.parity("frames", &[], &[]);
    expect_code(&o, 2);
    assert!(text(&o).contains("run scripts/build"), "{}", text(&o));
}

// ------------------------------------------------------------------ diff

fn write(e: &Env, name: &str, body: &str) -> String {
    std::fs::write(e.p(name), body).unwrap();
    e.s(name)
}

#[test]
fn diff_reads_json_xml_and_csv_from_content() {
    let e = Env::new();
    let j = write(&e, "a.txt", r#"{"frames":[{"frameNum":0,"metrics":{"x":0.10000000000000001,"y":nan,"z":-inf}},{"frameNum":1,"metrics":{"x":2,"y":1e-300,"z":0}}]}"#);
    let x = write(&e, "b.out", "<VMAF><frames><frame frameNum=\"0\" x=\"0.1\" y=\"nan\" z=\"-inf\"/><frame frameNum=\"1\" x=\"2.0\" y=\"1e-300\" z=\"0\"/></frames></VMAF>");
    let c = write(&e, "c.dat", "Frame,x,y,z,\n0,0.10000000000000001,nan,-inf,\n1,2,1.0000000000000001e-300,0,\n");
    let o = e.parity("diff", &[&j, &x], &[]);
    expect_code(&o, 0);
    let s = e.summary();
    assert_eq!(s["frames"], 2);
    assert_eq!(s["metrics"]["x"]["identical"], 2);
    assert_eq!(s["sides"][1]["format"], "xml");
    let o = e.parity("diff", &[&j, &c], &[]);
    expect_code(&o, 0);
    assert_eq!(e.summary()["sides"][1]["format"], "csv");
}

#[test]
fn diff_differences_and_nan_sign() {
    let e = Env::new();
    let a = write(&e, "a.json", r#"{"frames":[{"frameNum":0,"metrics":{"x":1,"y":nan}}]}"#);
    let b = write(&e, "b.json", r#"{"frames":[{"frameNum":0,"metrics":{"x":1.0000000000000002,"y":-nan}}]}"#);
    let o = e.parity("diff", &[&a, &b, "--label-a", "cpu", "--label-b", "gpu"], &[]);
    expect_code(&o, 1);
    let s = e.summary();
    assert_eq!(s["metrics"]["x"]["max_ulp"], 1);
    assert_eq!(s["metrics"]["y"]["nan_payload_mismatches"], 1);
    assert_eq!(s["comparisons"][0]["b"], "gpu");
    std::fs::write(e.p("t.txt"), "x ulp=1\ny nan-any\n").unwrap();
    let o = e.parity("diff", &[&a, &b, "--tolerances", &e.s("t.txt")], &[]);
    expect_code(&o, 0);
}

#[test]
fn diff_input_errors_exit_2() {
    let e = Env::new();
    let a = write(&e, "a.json", r#"{"frames":[{"frameNum":0,"metrics":{"x":1}},{"frameNum":1,"metrics":{"x":1}}]}"#);
    let one = write(&e, "one.json", r#"{"frames":[{"frameNum":0,"metrics":{"x":1}}]}"#);
    let other = write(&e, "other.json", r#"{"frames":[{"frameNum":0,"metrics":{"x":1,"w":2}},{"frameNum":1,"metrics":{"x":1,"w":2}}]}"#);
    let bad = write(&e, "bad.json", r#"{"frames":[{"frameNum":0,"metrics":{"x":1.2.3}}]}"#);
    let junk = write(&e, "junk.txt", "hello\n");
    for (b, needle) in [
        (one.as_str(), "frame-count mismatch"),
        (other.as_str(), "metric 'w'"),
        (bad.as_str(), "invalid number"),
        (junk.as_str(), "unrecognised output format"),
        ("/nonexistent.json", "cannot read"),
    ] {
        let o = e.parity("diff", &[&a, b], &[]);
        expect_code(&o, 2);
        assert!(text(&o).contains(needle), "{needle}: {}", text(&o));
    }
    std::fs::write(e.p("t.txt"), "x abs=oops\n").unwrap();
    let o = e.parity("diff", &[&a, &a, "--tolerances", &e.s("t.txt")], &[]);
    expect_code(&o, 2);
}

// ------------------------------------------------------------------ transfers

#[test]
fn transfers_reports_per_frame_counts() {
    let e = Env::new();
    let o = e.parity("transfers", &["--n1", "2", "--n2", "5"], &[]);
    expect_code(&o, 0);
    let s = read_json(&e.out().join("transfers.json"));
    let pf = &s["per_frame"];
    assert_eq!(pf["calls.cuMemcpyHtoDAsync_v2"], 2.0);
    assert_eq!(pf["copies.HtoD.count"], 2.0);
    assert_eq!(pf["copies.HtoD.bytes"], (2 * W * H) as f64);
    assert_eq!(pf["copies.DtoH.bytes"], 8.0);
    assert_eq!(pf["allocations.count"], 0.0);
    assert_eq!(pf["launches.sse_kernel.count"], 1.0);
    assert_eq!(pf["launches.sse_kernel.threads"], 256.0);
    assert_eq!(pf["launches.total"], 1.0);
    assert_eq!(s["counts"]["n2"]["allocations.count"], 3.0);
    let csv = std::fs::read_to_string(e.out().join("transfers.csv")).unwrap();
    assert!(csv.contains("copies.HtoD.count,6,12,2,,2"), "{csv}");
    assert!(std::fs::read_to_string(e.out().join("transfers.md")).unwrap().contains("| copies.HtoD.count | 2 |"));
}

#[test]
fn transfers_assertions_fail_naming_the_call() {
    let e = Env::new();
    let o = e.parity("transfers", &["--max-htod-per-frame", "0"], &[]);
    expect_code(&o, 1);
    let t = text(&o);
    assert!(t.contains("copies.HtoD.count = 2 per frame > 0") && t.contains("cuMemcpyHtoDAsync_v2 +2/frame"), "{t}");
    let s = read_json(&e.out().join("transfers.json"));
    assert_eq!(s["assertions"][0]["pass"], false);
    assert_eq!(s["assertions"][0]["calls"][0]["name"], "cuMemcpyHtoDAsync_v2");
    let o = e.parity("transfers", &["--max-per-frame", "launches.total=0"], &[]);
    expect_code(&o, 1);
    let o = e.parity("transfers", &["--max-calls-per-frame", "cuLaunchKernel=1", "--max-allocs-per-frame", "0", "--max-dtoh-bytes-per-frame", "8"], &[]);
    expect_code(&o, 0);
}

#[test]
fn transfers_baseline_subtraction() {
    let e = Env::new();
    // The same extractor without the defect adds nothing over the baseline.
    let o = e.parity("transfers", &["--baseline", "sse", "--max-htod-per-frame", "0"], &[]);
    expect_code(&o, 0);
    // With one extra host-to-device copy per frame the gate names it.
    let o = e.parity("transfers", &["--defect", "htod", "--baseline", "sse", "--max-htod-per-frame", "0"], &[]);
    expect_code(&o, 1);
    let t = text(&o);
    assert!(t.contains("beyond the baseline") && t.contains("cuMemcpyHtoD_v2 +1/frame"), "{t}");
    let s = read_json(&e.out().join("transfers.json"));
    assert_eq!(s["net_per_frame"]["copies.HtoD.count"], 1.0);
    assert_eq!(s["baseline_per_frame"]["copies.HtoD.count"], 2.0);
}

#[test]
fn transfers_setup_errors() {
    let e = Env::new();
    let o = e.parity("transfers", &["--defect", "nolaunch"], &[]);
    expect_code(&o, 2);
    assert!(text(&o).contains("launched no kernel"));
    let o = e.parity("transfers", &["--n1", "3", "--n2", "3"], &[]);
    expect_code(&o, 2);
    let o = e.parity("transfers", &["--n1", "5"], &[]);
    expect_code(&o, 2);
    assert!(text(&o).contains("need 1 <= --n1 < --n2"), "{}", text(&o));
    let o = e.parity("transfers", &["--n2", "9"], &[]);
    expect_code(&o, 2);
    assert!(text(&o).contains("hold only 5 frames"));
    let o = e.parity("transfers", &["--defect", "hazard"], &[]);
    expect_code(&o, 1);
    assert!(text(&o).contains("hazard"));
}

// ------------------------------------------------------------------ bench

#[test]
fn bench_ab_alternates_and_reports_ratio() {
    let e = Env::new();
    let log = e.p("order.log");
    let o = e.parity(
        "bench",
        &["--frames", "4", "--rounds", "2", "--backend", "cpu", "--b-backend", "cuda"],
        &[("FAKE_LOG", log.to_str().unwrap()), ("FAKE_SLEEP_MS", "2")],
    );
    expect_code(&o, 0);
    let order = std::fs::read_to_string(&log).unwrap().lines().map(String::from).collect::<Vec<_>>().join(",");
    assert_eq!(order, "cpu 2,cuda 2,cpu 4,cuda 4,cuda 2,cpu 2,cuda 4,cpu 4");
    let s = read_json(&e.out().join("bench.json"));
    assert_eq!(s["commands"].as_array().unwrap().len(), 2);
    assert_eq!(s["commands"][0]["ms_per_frame_rounds"].as_array().unwrap().len(), 2);
    assert!(s["commands"][1]["ms_per_frame"].as_f64().unwrap().is_finite());
    assert!(s["ratio_b_over_a"].as_f64().unwrap().is_finite());
    assert!(text(&o).contains("ratio B/A"));
    let csv = std::fs::read_to_string(e.out().join("bench.csv")).unwrap();
    assert_eq!(csv.lines().count(), 9);
}

#[test]
fn bench_rejects_too_few_frames() {
    let e = Env::new();
    let o = e.parity("bench", &["--frames", "2"], &[]);
    expect_code(&o, 2);
}

// ------------------------------------------------------------------ demo and help

#[test]
fn demo_runs_every_check_and_catches_every_defect() {
    let e = Env::new();
    let o = e.parity("demo", &["--simtwin", &e.s("simtwin"), "--features", "sse,topk"], &[]);
    expect_code(&o, 0);
    let s = e.summary();
    assert_eq!(s["checks"].as_array().unwrap().len(), 2 * 2 + 2);
    let defects = s["defects"].as_array().unwrap();
    assert_eq!(defects.len(), 7);
    for d in defects {
        // atomic-order waits for block orders in the emulated driver: never counted as caught
        let want = if d["defect"] == "atomic-order" { Value::Null } else { Value::Bool(true) };
        assert_eq!(d["caught"], want, "{d}");
    }
    let hr = defects.iter().find(|d| d["defect"] == "host-roundtrip").unwrap();
    assert_eq!(hr["exit_code"], 1);
    assert!(hr["detail"].as_str().unwrap().contains("cuMemcpyHtoD_v2"), "{hr}");
    assert!(text(&o).contains("ALL PASS"));
    assert!(e.out().join("frames/banded-16x16-8/sse/summary.json").exists());
}

#[test]
fn demo_fails_when_a_defect_is_missed_or_the_build_is_missing() {
    let e = Env::new();
    let o = e.parity("demo", &["--simtwin", &e.s("simtwin"), "--features", "sse"], &[("FAKE_IGNORE_DEFECTS", "1")]);
    expect_code(&o, 1);
    assert!(text(&o).contains("MISSED"));
    let o = e.parity("demo", &["--simtwin", &e.s("nothing")], &[]);
    expect_code(&o, 2);
    assert!(text(&o).contains("scripts/build"));
}

#[test]
fn every_command_has_help_with_an_example() {
    for sub in ["frames", "diff", "transfers", "bench", "demo", "driver-info", "replay", "libm"] {
        let o = Command::new(env!("CARGO_BIN_EXE_parity")).args([sub, "--help"]).output().unwrap();
        expect_code(&o, 0);
        let t = String::from_utf8_lossy(&o.stdout);
        assert!(t.contains("Example"), "{sub}: {t}");
        assert!(t.contains(&format!("parity {sub}")) || matches!(sub, "driver-info" | "libm"), "{sub}");
    }
    let o = Command::new(env!("CARGO_BIN_EXE_parity")).args(["frames"]).output().unwrap();
    expect_code(&o, 2);
}
