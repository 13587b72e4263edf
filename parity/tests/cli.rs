//! End-to-end tests of the `parity` CLI against fake extractors (tests/fake/): a Python
//! script that speaks the twin's and the VMAF CLI's interfaces and writes chosen
//! differences, and fake libcuda.so.1 builds (emulated marker, no device, one device).

mod support;

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use support::{assert_same_reports, build_lib, expect_code, fake_dir, read_json, reports, text};

const W: u32 = 16;
const H: u32 = 16;
const FRAMES: u64 = 5;

fn extractor() -> String {
    fake_dir().join("extractor.py").display().to_string()
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
        if matches!(sub, "frames" | "transfers" | "bench" | "faults") {
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
    /// `parity ARGS` as given (with --simtwin for the commands that run extractors).
    fn parity_args<S: AsRef<str>>(&self, args: &[S], env: &[(&str, &str)]) -> Output {
        let mut c = Command::new(env!("CARGO_BIN_EXE_parity"));
        c.args(args.iter().map(|a| a.as_ref()));
        if matches!(args[0].as_ref(), "frames" | "faults") {
            c.args(["--simtwin", &self.s("simtwin")]);
        }
        c.current_dir(self.tmp.path());
        c.env_remove("LD_LIBRARY_PATH").env_remove("EMU_CUDA_COUNTS").env_remove("SIMTWIN_DIR").env_remove("EMU_CUDA_KERNELS");
        for (k, v) in env {
            c.env(k, v);
        }
        c.output().unwrap()
    }
    fn summary(&self) -> Value {
        read_json(&self.out().join("summary.json"))
    }
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
fn frames_unsupported_calls_fail_unless_allowed() {
    let e = Env::new();
    // The extractor ignored the refused calls and exited 0 with its output: still a
    // failure, naming the entry point.
    let o = e.parity("frames", &["--defect", "unsupported"], &[]);
    expect_code(&o, 1);
    assert!(text(&o).contains("cuTexObjectCreate x2"), "{}", text(&o));
    let s = e.summary();
    assert_eq!(s["unsupported"]["calls"]["cuTexObjectCreate"], 2);
    assert_eq!(s["unsupported"]["fail"], true);
    let x = std::fs::read_to_string(e.out().join("junit.xml")).unwrap();
    assert!(
        junit_case(&x, "frames.driver", "unsupported").contains("<failure message=\"unsupported entry points called: cuTexObjectCreate x2"),
        "{x}"
    );
    let o = e.parity("frames", &["--defect", "unsupported", "--allow-unsupported"], &[]);
    expect_code(&o, 0);
    assert_eq!(e.summary()["unsupported"]["fail"], false);
}

#[test]
fn frames_checks_race_passes_the_setting_and_a_race_report_fails_the_run() {
    let e = Env::new();
    // The missing-sync defect shows only as the race detector's report.
    let o = e.parity("frames", &["--defect", "missing-sync"], &[]);
    expect_code(&o, 0);
    let o = e.parity("frames", &["--defect", "missing-sync", "--checks", "race"], &[]);
    expect_code(&o, 1);
    let s = e.summary();
    assert_eq!(s["hazards"]["reports"][0]["kind"], "shared-race-war");
    assert!(s["runs"][1]["env"].to_string().contains("EMU_CUDA_CHECKS=race"), "{}", s["runs"][1]["env"]);
    // The correct extractor under the same checks: no report, parity.
    let o = e.parity("frames", &["--checks", "race,poison"], &[]);
    expect_code(&o, 0);
    assert!(e.summary()["runs"][1]["env"].to_string().contains("EMU_CUDA_CHECKS=race,poison"));
    // A check the driver does not have is a usage error.
    let o = e.parity("frames", &["--checks", "races"], &[]);
    expect_code(&o, 2);
    assert!(text(&o).contains("expected a comma-separated list of race, poison, pointers"), "{}", text(&o));
}

#[test]
fn frames_short_printed_precision_gives_the_caveat() {
    let e = Env::new();
    let o = e.parity("frames", &[], &[("FAKE_DIGITS", "6")]);
    expect_code(&o, 0);
    let s = e.summary();
    let c = s["precision_caveat"].as_str().unwrap();
    assert!(
        c.contains("identical at the printed precision")
            && c.contains("cpu printed at most")
            && c.contains("cuda-emulated printed at most"),
        "{c}"
    );
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

/// A "GPU" driver (cuInit succeeds, one device) beside the fake simtwin layout, found
/// by the loader as the system's libcuda.so.1.
fn gpu_env(e: &Env) -> Vec<(String, String)> {
    build_lib(&e.p("gpu"), &["-DDEVICES=1"]);
    vec![("LD_LIBRARY_PATH".into(), e.s("gpu"))]
}

fn env_ref(v: &[(String, String)]) -> Vec<(&str, &str)> {
    v.iter().map(|(k, x)| (k.as_str(), x.as_str())).collect()
}

#[test]
fn real_device_runs_through_the_passthrough_with_counts_as_proof() {
    let e = Env::new();
    let env = gpu_env(&e);
    let env = env_ref(&env);
    // The pass-through's counters prove the real run: no --proof needed.
    let o = e.parity("frames", &["--device", "real"], &env);
    expect_code(&o, 0);
    let s = e.summary();
    assert_eq!(s["sides"][1]["label"], "cuda-real");
    let run = &s["runs"][1];
    assert_eq!(run["device"], "real");
    assert_eq!(run["launches"]["sse_kernel"], 5.0, "{run}");
    let gpu = std::fs::canonicalize(e.p("gpu/libcuda.so.1")).unwrap().display().to_string();
    let env_list: Vec<&str> = run["env"].as_array().unwrap().iter().map(|v| v.as_str().unwrap()).collect();
    assert!(env_list.contains(&format!("EMU_CUDA_REAL={gpu}").as_str()), "{env_list:?}");
    let simtwin_lib = std::fs::canonicalize(e.p("simtwin/lib")).unwrap().display().to_string();
    assert!(env_list.iter().any(|v| v.starts_with(&format!("LD_LIBRARY_PATH={simtwin_lib}:"))), "{env_list:?}");
    assert!(run["driver"].as_str().unwrap().starts_with(&format!("pass-through to {gpu}")), "{run}");
    // log:TEXT must appear too
    let o = e.parity("frames", &["--device", "real", "--proof", "log:NOT PRINTED"], &env);
    expect_code(&o, 2);
    assert!(text(&o).contains("does not contain 'NOT PRINTED'"), "{}", text(&o));
    let o = e.parity("frames", &["--device", "real", "--proof", "log:FAKE CUDA ACTIVE"], &env);
    expect_code(&o, 0);
    // no kernel launched on the device: not proven
    let o = e.parity("frames", &["--device", "real", "--defect", "nolaunch"], &env);
    expect_code(&o, 2);
    assert!(text(&o).contains("cuda-real: the CUDA extractor launched no kernel"), "{}", text(&o));
    // emulation-only settings do not reach the device
    let o = e.parity("frames", &["--device", "real", "--async", "deferred"], &env);
    expect_code(&o, 0);
    let s = e.summary();
    assert!(!s["runs"][1]["env"].to_string().contains("EMU_CUDA_ASYNC"), "{}", s["runs"][1]["env"]);
    let md = std::fs::read_to_string(e.out().join("summary.md")).unwrap();
    assert!(md.contains("not given to the real device (emulated driver only): EMU_CUDA_ASYNC=deferred"), "{md}");
    let o = e.parity("frames", &["--device", "real", "--checks", "race"], &env);
    expect_code(&o, 0);
    assert!(!e.summary()["runs"][1]["env"].to_string().contains("EMU_CUDA_CHECKS"));
    let md = std::fs::read_to_string(e.out().join("summary.md")).unwrap();
    assert!(md.contains("not given to the real device (emulated driver only): EMU_CUDA_CHECKS=race"), "{md}");
}

#[test]
fn both_gives_three_columns_and_compares_emulated_with_real() {
    let e = Env::new();
    let env = gpu_env(&e);
    let env = env_ref(&env);
    let o = e.parity("frames", &["--device", "both"], &env);
    expect_code(&o, 0);
    let s = e.summary();
    assert_eq!(s["comparisons"].as_array().unwrap().len(), 2);
    let evr = &s["emulated_vs_real"];
    assert_eq!(evr["identical_frames"], 5);
    assert_eq!(evr["metrics"]["m_a"]["identical"], 5);
    assert_eq!(evr["differences"].as_array().unwrap().len(), 0);
    assert_eq!(evr["counters"]["differences"].as_array().unwrap().len(), 0, "{evr}");
    assert!(evr["counters"]["compared"].as_u64().unwrap() > 10, "{evr}");
    let head = std::fs::read_to_string(e.out().join("per_frame.csv")).unwrap();
    assert!(head.lines().next().unwrap().starts_with("frame,metric,cpu,cuda-emulated,cuda-real,"), "{head}");
    let md = std::fs::read_to_string(e.out().join("summary.md")).unwrap();
    assert!(
        md.contains("## Emulated vs real device: 5/5 frames identical in every metric") && md.contains("| m_a | 5/5 | 0 | - |"),
        "{md}"
    );
    assert!(md.contains("compared counters equal"), "{md}");
    // a difference on the device only: each frame is named, exit 1
    let o = e.parity("frames", &["--device", "both"], &[env[0], ("FAKE_REAL_DEFECT", "ulp")]);
    expect_code(&o, 1);
    let s = e.summary();
    let evr = &s["emulated_vs_real"];
    assert_eq!(evr["identical_frames"], 4);
    let d = evr["differences"].as_array().unwrap();
    assert_eq!(d.len(), 1, "{evr}");
    assert_eq!((d[0]["frame"].as_u64(), d[0]["metric"].as_str(), d[0]["ulp"].as_u64()), (Some(2), Some("m_a"), Some(1)));
    assert_eq!(s["comparisons"][0]["pass"], true, "cpu vs emulated is at parity");
    assert_eq!(s["comparisons"][1]["pass"], false, "cpu vs real is not");
    assert!(text(&o).contains("frame 2 m_a: emulated 0.20000000000000001 real 0.20000000000000004 (numeric, 1 ULP)"), "{}", text(&o));
    let md = std::fs::read_to_string(e.out().join("summary.md")).unwrap();
    assert!(md.contains("| 2 | m_a | 0.20000000000000001 | 0.20000000000000004 | numeric | 1 |"), "{md}");
    let csv = std::fs::read_to_string(e.out().join("emulated_vs_real.csv")).unwrap();
    assert!(csv.contains("2,m_a,0.20000000000000001,0.20000000000000004,0x3fc999999999999a,0x3fc999999999999b,false,numeric,1"), "{csv}");
    // the counts of the whole run differ too when the device run copies more
    let o = e.parity("frames", &["--device", "both"], &[env[0], ("FAKE_REAL_DEFECT", "htod")]);
    expect_code(&o, 0);
    let c = &e.summary()["emulated_vs_real"]["counters"]["differences"];
    assert!(c.as_array().unwrap().iter().any(|d| d["key"] == "calls.cuMemcpyHtoD_v2" && d["emulated"] == 0.0 && d["real"] == 5.0), "{c}");
    // the report directory keeps no earlier emulated_vs_real.csv
    let o = e.parity("frames", &["--device", "emulated"], &[]);
    expect_code(&o, 0);
    assert!(!e.out().join("emulated_vs_real.csv").exists());
    assert!(e.summary()["emulated_vs_real"].is_null());
}

#[test]
fn real_device_and_both_exit_77_without_a_device_in_every_command() {
    let e = Env::new();
    build_lib(&e.p("nodev"), &[]);
    let nodev = e.s("nodev");
    let env = [("LD_LIBRARY_PATH", nodev.as_str())];
    for (sub, extra) in [("frames", vec![]), ("transfers", vec![]), ("bench", vec!["--frames", "3", "--rounds", "1"])] {
        for dev in ["real", "both"] {
            let mut args = vec!["--device", dev];
            args.extend(&extra);
            let o = e.parity(sub, &args, &env);
            expect_code(&o, 77);
            assert!(text(&o).contains("CUDA_ERROR_NO_DEVICE"), "{sub} {dev}: {}", text(&o));
        }
    }
    // no driver at all
    let o = e.parity("transfers", &["--device", "both"], &[("LD_LIBRARY_PATH", &e.s("nowhere"))]);
    expect_code(&o, 77);
}

#[test]
fn a_passthrough_that_fails_is_a_setup_error_naming_the_driver() {
    let e = Env::new();
    let env = gpu_env(&e);
    // simtwin's (fake) driver refuses at cuInit through the pass-through
    let o = e.parity(
        "frames",
        &["--device", "real"],
        &[(env[0].0.as_str(), env[0].1.as_str()), ("FAKE_DRIVER_REFUSES", "1"), ("EMU_CUDA_FAIL", "cuInit:1")],
    );
    expect_code(&o, 2);
    assert!(text(&o).contains("pass-through") && text(&o).contains("cuInit answered 801"), "{}", text(&o));
}

#[test]
fn transfers_both_compares_per_frame_counts_and_lists_differences() {
    let e = Env::new();
    let env = gpu_env(&e);
    let env = env_ref(&env);
    let o = e.parity("transfers", &["--device", "both", "--n1", "2", "--n2", "4"], &env);
    expect_code(&o, 0);
    let s = read_json(&e.out().join("transfers.json"));
    assert_eq!(s["device"], "both");
    assert_eq!(s["devices"]["emulated"]["per_frame"]["copies.HtoD.count"], 2.0);
    assert_eq!(s["devices"]["real"]["per_frame"]["copies.HtoD.count"], 2.0);
    assert_eq!(s["devices"]["real"]["per_frame"]["launches.sse_kernel.count"], 1.0);
    assert_eq!(s["emulated_vs_real"]["equal_per_frame"], true);
    assert!(
        s["runs"]
            .as_array()
            .unwrap()
            .iter()
            .any(|r| r["device"] == "real" && r["driver"].as_str().unwrap().starts_with("pass-through to ")),
        "{}",
        s["runs"]
    );
    assert!(e.out().join("counts/extractor-real-n4").is_dir() && e.out().join("counts/extractor-n4").is_dir());
    let csv = std::fs::read_to_string(e.out().join("transfers.csv")).unwrap();
    assert!(
        csv.lines()
            .next()
            .unwrap()
            .ends_with("real_count_n1,real_count_n2,real_per_frame,real_baseline_per_frame,real_net_per_frame,equal_per_frame"),
        "{csv}"
    );
    assert!(csv.contains("copies.HtoD.count,6,10,2,,2,6,10,2,,2,true"), "{csv}");
    assert!(std::fs::read_to_string(e.out().join("transfers.md")).unwrap().contains("Per frame, extractor: all"));
    // one extra upload per frame on the device only: every differing key is listed, exit 1
    let o = e.parity("transfers", &["--device", "both", "--n1", "2", "--n2", "4"], &[env[0], ("FAKE_REAL_DEFECT", "htod")]);
    expect_code(&o, 1);
    let t = text(&o);
    assert!(t.contains("extractor: emulated and real device differ per frame in 3 counter(s): calls.cuMemcpyHtoD_v2 (emulated 0, real 1), copies.HtoD.bytes (emulated 512, real 768), copies.HtoD.count (emulated 2, real 3)"), "{t}");
    let s = read_json(&e.out().join("transfers.json"));
    let d = &s["emulated_vs_real"]["per_frame_differences"][0]["differences"];
    assert_eq!(d.as_array().unwrap().len(), 3, "{d}");
    let totals = &s["emulated_vs_real"]["total_differences"];
    assert_eq!(totals[1]["frames"], 4);
    assert!(
        totals[1]["differences"].as_array().unwrap().iter().any(|x| x["key"] == "calls.cuMemcpyHtoD_v2" && x["real"] == 4.0),
        "{totals}"
    );
    let md = std::fs::read_to_string(e.out().join("transfers.md")).unwrap();
    assert!(md.contains("Per frame, extractor: **3 of") && md.contains("| copies.HtoD.count | 2 | 3 |"), "{md}");
    // assertions apply to each device, named by device
    let o = e.parity(
        "transfers",
        &["--device", "both", "--n1", "2", "--n2", "4", "--max-htod-per-frame", "2"],
        &[env[0], ("FAKE_REAL_DEFECT", "htod")],
    );
    expect_code(&o, 1);
    assert!(text(&o).contains("[real device] --max-htod-per-frame 2: copies.HtoD.count = 3 per frame > 2"), "{}", text(&o));
    assert!(!text(&o).contains("[emulated] --max-htod"), "{}", text(&o));
    // --device real alone
    let o = e.parity("transfers", &["--device", "real", "--n1", "2", "--n2", "4"], &env);
    expect_code(&o, 0);
    let s = read_json(&e.out().join("transfers.json"));
    assert_eq!(s["per_frame"]["copies.DtoH.bytes"], 8.0);
    assert!(s["emulated_vs_real"].is_null());
}

#[test]
fn bench_both_times_cpu_emulated_and_real() {
    let e = Env::new();
    let env = gpu_env(&e);
    let mut env = env_ref(&env);
    let log = e.s("bench.log");
    env.push(("FAKE_LOG", &log));
    let o = e.parity("bench", &["--frames", "4", "--rounds", "1", "--backend", "cpu", "--b-backend", "cuda", "--device", "both"], &env);
    expect_code(&o, 0);
    let s = read_json(&e.out().join("bench.json"));
    let labels: Vec<&str> = s["commands"].as_array().unwrap().iter().map(|c| c["label"].as_str().unwrap()).collect();
    assert_eq!(labels, ["A", "B-emulated", "B-real"]);
    assert_eq!(s["commands"][2]["device"], "real");
    assert_eq!(s["ratios"].as_array().unwrap().len(), 2);
    assert!(s["real_driver"].as_str().unwrap().ends_with("gpu/libcuda.so.1"), "{s}");
    // the proof run went through the pass-through and counted launches
    let proof = std::fs::read_dir(e.out().join("counts/B-real-proof")).unwrap().count();
    assert_eq!(proof, 1);
    // 1 proof run (2 frames) + 3 commands x (1 untimed warm-up + 2 timed runs)
    let runs = std::fs::read_to_string(&log).unwrap();
    assert_eq!(runs.lines().count(), 10, "{runs}");
    let csv = std::fs::read_to_string(e.out().join("bench.csv")).unwrap();
    assert_eq!(csv.lines().count(), 1 + 6, "the warm-ups are not timed: {csv}");
    let md = std::fs::read_to_string(e.out().join("bench.md")).unwrap();
    assert!(md.contains("| B-real |") && md.contains("ran on the system's driver"), "{md}");
    // The emulated command's frame by kernel, from its counters' run_ns (1.5 ms a frame in
    // the fake); none for the CPU and the real device.
    let k = &s["commands"][1]["kernels"];
    assert_eq!(k.as_array().map(Vec::len), Some(1), "{s}");
    assert_eq!((k[0]["kernel"].as_str(), k[0]["path"].as_str()), (Some("sse_kernel"), Some("loops over threads")));
    assert!((k[0]["ms_per_frame"].as_f64().unwrap() - 1.5).abs() < 1e-9, "{k}");
    assert!((s["commands"][1]["kernels_ms_per_frame"].as_f64().unwrap() - 1.5).abs() < 1e-9);
    for c in [0, 2] {
        assert_eq!(s["commands"][c]["kernels"], serde_json::json!([]), "{s}");
        assert!(s["commands"][c]["kernels_ms_per_frame"].is_null());
    }
    assert!(
        md.contains("Where B-emulated's frame goes on the emulated driver: 1.500 ms ") && md.contains("| sse_kernel | 1.500 |"),
        "{md}"
    );
    assert!(md.contains("| loops over threads |") && !md.contains("Where B-real's") && !md.contains("Where A's"), "{md}");
    // a CUDA command that launches nothing on the device is refused before timing
    let o = e.parity("bench", &["--frames", "3", "--rounds", "1", "--device", "real", "--defect", "nolaunch"], &env);
    expect_code(&o, 2);
    assert!(text(&o).contains("launched no kernel on the real device"), "{}", text(&o));
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
    let j = write(
        &e,
        "a.txt",
        r#"{"frames":[{"frameNum":0,"metrics":{"x":0.10000000000000001,"y":nan,"z":-inf}},{"frameNum":1,"metrics":{"x":2,"y":1e-300,"z":0}}]}"#,
    );
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
    let o = e.parity(
        "transfers",
        &["--max-calls-per-frame", "cuLaunchKernel=1", "--max-allocs-per-frame", "0", "--max-dtoh-bytes-per-frame", "8"],
        &[],
    );
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
    // an untimed warm-up of each command, then the rounds
    assert_eq!(order, "cpu 2,cuda 2,cpu 2,cuda 2,cpu 4,cuda 4,cuda 2,cpu 2,cuda 4,cpu 4");
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
fn bench_refuses_a_run_that_wrote_fewer_frames_than_asked() {
    let e = Env::new();
    let o = e.parity("bench", &["--frames", "4", "--rounds", "1", "--backend", "cpu", "--b-backend", "cuda"], &[("FAKE_SHORT", "cuda")]);
    assert_ne!(o.status.code(), Some(0), "{}", text(&o));
    let t = text(&o);
    assert!(t.contains("bench B: the run at 2 frames wrote 1 frame to") && t.contains("would not measure 2 frames"), "{t}");
    assert!(!e.out().join("bench.json").exists(), "no report that reads as a measurement");
}

#[test]
fn bench_rejects_too_few_frames() {
    let e = Env::new();
    let o = e.parity("bench", &["--frames", "2"], &[]);
    expect_code(&o, 2);
}

// ------------------------------------------------------------------ counters

#[test]
fn counters_of_another_schema_or_malformed_are_setup_errors() {
    let e = Env::new();
    let o = e.parity("frames", &[], &[("FAKE_COUNTS_SCHEMA", "simtwin-counts/1")]);
    expect_code(&o, 2);
    let t = text(&o);
    assert!(t.contains("counters file of schema simtwin-counts/1, this parity reads simtwin-counts/2") && t.contains("counts-"), "{t}");
    let o = e.parity("transfers", &[], &[("FAKE_COUNTS_SCHEMA", "other-tool/7")]);
    expect_code(&o, 2);
    assert!(text(&o).contains("not a simtwin counters file"), "{}", text(&o));
    let o = e.parity("frames", &[], &[("FAKE_COUNTS_GARBAGE", "1")]);
    expect_code(&o, 2);
    assert!(text(&o).contains("malformed counters file"), "{}", text(&o));
    assert_eq!(e.summary()["verdict"], "error");
}

#[test]
fn counters_not_from_a_clean_exit_are_named_in_the_report() {
    let e = Env::new();
    let o = e.parity("frames", &[], &[("FAKE_COUNTS_STATE", r#""checkpoint""#)]);
    expect_code(&o, 0);
    let s = e.summary();
    assert_eq!(s["runs"][1]["counts_state"], "checkpoint");
    let md = std::fs::read_to_string(e.out().join("summary.md")).unwrap();
    assert!(md.contains("cuda-emulated: counters NOT from a clean exit: counts-") && md.contains("checkpoint"), "{md}");
    let o = e.parity("transfers", &[], &[("FAKE_COUNTS_STATE", r#"{"signal":"SIGTERM"}"#)]);
    expect_code(&o, 0);
    let s = read_json(&e.out().join("transfers.json"));
    assert_eq!(s["runs"][0]["counts_state"], serde_json::json!(["signal:SIGTERM", "signal:SIGTERM"]));
    assert_eq!(s["counts_not_from_clean_exit"].as_array().unwrap().len(), 2);
    assert!(std::fs::read_to_string(e.out().join("transfers.md")).unwrap().contains("counters not from a clean exit"));
    // a clean run says exit
    let o = e.parity("frames", &[], &[]);
    expect_code(&o, 0);
    assert_eq!(e.summary()["runs"][1]["counts_state"], "exit");
}

// ------------------------------------------------------------------ timeouts and stale reports

fn alive(pid: i32) -> bool {
    Path::new(&format!("/proc/{pid}")).exists()
        && std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default().split_whitespace().nth(2).is_none_or(|st| st != "Z")
}

#[track_caller]
fn expect_killed_group(pidfile: &Path) {
    let pids: Vec<i32> = std::fs::read_to_string(pidfile).unwrap().split_whitespace().map(|x| x.parse().unwrap()).collect();
    assert_eq!(pids.len(), 2);
    let t0 = std::time::Instant::now();
    while pids.iter().any(|p| alive(*p)) && t0.elapsed().as_secs() < 5 {
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    for p in pids {
        assert!(!alive(p), "process {p} of the extractor's group survived the timeout");
    }
}

#[test]
fn a_hanging_extractor_is_killed_with_its_process_group() {
    let e = Env::new();
    let pidfile = e.p("pids");
    let t0 = std::time::Instant::now();
    let o = e.parity("frames", &["--timeout", "1"], &[("FAKE_HANG", pidfile.to_str().unwrap())]);
    expect_code(&o, 2);
    assert!(t0.elapsed().as_secs() < 20, "took {:?}", t0.elapsed());
    let t = text(&o);
    assert!(t.contains("cpu extractor timed out after 1 s") && t.contains("killed with its process group"), "{t}");
    expect_killed_group(&pidfile);
    assert_eq!(e.summary()["verdict"], "error");
    assert!(e.summary()["error"].as_str().unwrap().contains("timed out after 1 s"));
    // one that ignores SIGTERM gets SIGKILL after the grace period
    let o = e.parity("transfers", &["--timeout", "0.5"], &[("FAKE_HANG", pidfile.to_str().unwrap()), ("FAKE_IGNORE_TERM", "1")]);
    expect_code(&o, 2);
    assert!(text(&o).contains("timed out after 0.5 s"), "{}", text(&o));
    expect_killed_group(&pidfile);
    let o = e.parity("frames", &["--timeout", "0"], &[]);
    expect_code(&o, 2);
    assert!(text(&o).contains("not a positive number of seconds"), "{}", text(&o));
}

#[test]
fn a_failed_frames_run_leaves_no_result_of_an_earlier_run() {
    let e = Env::new();
    let o = e.parity("frames", &[], &[]);
    expect_code(&o, 0);
    for f in ["per_frame.csv", "diff.svg", "summary.md", "cuda-emulated.json", "cpu.json", "counts/cuda-emulated"] {
        assert!(e.out().join(f).exists(), "{f}");
    }
    std::fs::write(e.out().join("notes-of-the-user.txt"), "kept").unwrap();
    // the second run's CUDA extractor writes its output, then fails
    let o = e.parity("frames", &["--defect", "fail"], &[("FAKE_WRITE_BEFORE_FAIL", "1")]);
    expect_code(&o, 2);
    for f in ["per_frame.csv", "diff.svg", "cuda-emulated.json", "block_orders.csv"] {
        assert!(!e.out().join(f).exists(), "{f} of the earlier run is still there");
    }
    assert!(e.out().join("cuda-emulated.json.failed").exists(), "the failed run's output is marked");
    assert!(e.out().join("cpu.json").exists(), "this run's CPU output stays");
    assert!(e.out().join("notes-of-the-user.txt").exists(), "other files are not touched");
    let s = e.summary();
    assert_eq!(s["verdict"], "error");
    assert!(std::fs::read_to_string(e.out().join("summary.md")).unwrap().contains("ERROR"));
    // and a following good run does not keep the .failed file
    let o = e.parity("frames", &[], &[]);
    expect_code(&o, 0);
    assert!(!e.out().join("cuda-emulated.json.failed").exists());
}

#[test]
fn a_failed_transfers_run_leaves_no_result_of_an_earlier_run() {
    let e = Env::new();
    let o = e.parity("transfers", &["--n1", "2", "--n2", "5"], &[]);
    expect_code(&o, 0);
    assert!(e.out().join("transfers.csv").exists() && e.out().join("transfers.json").exists());
    // the second extractor run of the audit (5 frames) fails
    let o = e.parity("transfers", &["--n1", "2", "--n2", "5"], &[("FAKE_FAIL_FRAMES", "5")]);
    expect_code(&o, 2);
    assert!(text(&o).contains("extractor-n5 extractor failed with exit status 3"), "{}", text(&o));
    for f in ["transfers.csv", "transfers.json", "transfers.md", "counts/extractor-n5/x"] {
        let p = e.out().join(f);
        assert!(!p.exists() || f.ends_with("/x"), "{f} of the earlier run is still there");
    }
    assert_eq!(e.summary()["verdict"], "error");
    // bench: nothing written until every run is done
    let o = e.parity("bench", &["--frames", "4", "--rounds", "1"], &[]);
    expect_code(&o, 0);
    assert!(e.out().join("bench.json").exists());
    let o = e.parity("bench", &["--frames", "4", "--rounds", "1"], &[("FAKE_FAIL_FRAMES", "4")]);
    expect_code(&o, 2);
    for f in ["bench.json", "bench.csv", "bench.md"] {
        assert!(!e.out().join(f).exists(), "{f}");
    }
}

// ------------------------------------------------------------------ block orders

#[test]
fn block_orders_flag_outputs_that_change_between_orders() {
    let e = Env::new();
    let o = e.parity("frames", &["--defect", "order", "--block-orders", "forward,reverse,shuffle:3"], &[]);
    expect_code(&o, 1);
    let s = e.summary();
    // the first order is the one compared with the CPU: at parity there
    assert_eq!(s["comparisons"][0]["pass"], true);
    let b = &s["block_orders"];
    assert_eq!(b["changed"], true);
    assert_eq!(b["orders"], serde_json::json!(["forward", "reverse", "shuffle:3"]));
    assert_eq!(b["metrics_changed"]["m_a"]["frames"], serde_json::json!([2]));
    assert_eq!(b["metrics_changed"]["m_a"]["orders"], serde_json::json!(["reverse", "shuffle:3"]));
    assert_eq!(b["metrics_changed"]["m_a"]["max_ulp"], 1);
    assert_eq!(b["first_change"]["frame"], 2);
    assert_eq!(b["stable_metrics"], serde_json::json!(["m_b", "m_int", "m_z"]));
    let runs: Vec<&str> = s["runs"].as_array().unwrap().iter().map(|r| r["label"].as_str().unwrap()).collect();
    assert_eq!(runs, ["cpu", "cuda-emulated", "cuda-emulated-reverse", "cuda-emulated-shuffle-3"]);
    assert_eq!(s["runs"][2]["block_order"], "reverse");
    assert!(s["runs"][2]["env"].as_array().unwrap().iter().any(|v| v == "EMU_CUDA_BLOCK_ORDER=reverse"));
    let csv = std::fs::read_to_string(e.out().join("block_orders.csv")).unwrap();
    assert!(csv.starts_with("frame,metric,forward,reverse,shuffle:3,changed\n"), "{csv}");
    assert_eq!(csv.lines().filter(|l| l.ends_with(",yes")).count(), 1);
    assert!(csv.lines().any(|l| l.starts_with("2,m_a,") && l.ends_with(",yes")), "{csv}");
    let md = std::fs::read_to_string(e.out().join("summary.md")).unwrap();
    assert!(
        md.contains("## Block orders: forward, reverse, shuffle:3")
            && md.contains("ORDER-DEPENDENT")
            && md.contains("| m_a | 1 (frames 2) |"),
        "{md}"
    );
    assert!(text(&o).contains("ORDER-DEPENDENT"));
    // control: an order-independent twin
    let o = e.parity("frames", &["--block-orders", "forward,reverse,shuffle:3"], &[]);
    expect_code(&o, 0);
    assert_eq!(e.summary()["block_orders"]["changed"], false);
    assert!(std::fs::read_to_string(e.out().join("summary.md")).unwrap().contains("bit-identical under every order"));
}

#[test]
fn block_orders_fail_clearly_when_the_driver_refuses_them() {
    let e = Env::new();
    let o = e.parity("frames", &["--defect", "order", "--block-orders", "forward,reverse"], &[("FAKE_DRIVER_REFUSES", "1")]);
    expect_code(&o, 2);
    let t = text(&o);
    assert!(
        t.contains("refuses EMU_CUDA_BLOCK_ORDER=reverse: cuInit answered 801 (CUDA_ERROR_NOT_SUPPORTED)") && t.contains("not built yet"),
        "{t}"
    );
    assert!(!e.out().join("per_frame.csv").exists() && !e.out().join("cpu.json").exists(), "nothing ran");
    let o = e.parity("frames", &["--block-order", "reverse"], &[("FAKE_DRIVER_REFUSES", "1")]);
    expect_code(&o, 2);
    // bad lists
    for (args, needle) in [
        (vec!["--block-orders", "forward"], "at least two orders"),
        (vec!["--block-orders", "forward,sideways"], "'sideways'"),
        (vec!["--block-orders", "reverse,reverse"], "given twice"),
        (vec!["--block-orders", "forward,reverse", "--block-order", "reverse"], "exclude each other"),
        (vec!["--block-orders", "forward,reverse", "--device", "real", "--proof", "none"], "needs the emulated driver"),
    ] {
        let o = e.parity("frames", &args, &[]);
        expect_code(&o, 2);
        assert!(text(&o).contains(needle), "{needle}: {}", text(&o));
    }
}

// ------------------------------------------------------------------ faults

fn fault_runs(e: &Env) -> Vec<Value> {
    read_json(&e.out().join("faults.json"))["runs"].as_array().unwrap().clone()
}

fn fault_run<'a>(runs: &'a [Value], at: &str) -> &'a Value {
    runs.iter().find(|r| r["fail"] == at).unwrap_or_else(|| panic!("no run failing {at}"))
}

#[test]
fn faults_campaign_reports_crashes_hangs_and_leaks() {
    let e = Env::new();
    let o = e.parity("faults", &["--frames", "2", "--timeout", "1"], &[]);
    expect_code(&o, 1);
    let s = read_json(&e.out().join("faults.json"));
    // the clean run: 25 calls of 12 entry points, one faulted run each
    assert_eq!(s["clean_run"]["calls"]["cuMemcpyHtoDAsync_v2"], 6);
    assert_eq!(s["call_sites"], 25);
    assert_eq!(s["runs_total"], 25);
    assert_eq!(s["totals"]["crashes"], 4);
    assert_eq!(s["totals"]["hangs"], 2);
    assert_eq!(s["totals"]["exit_0"], 0);
    assert_eq!(s["findings"].as_array().unwrap().len(), 6);
    let runs = fault_runs(&e);
    let r = fault_run(&runs, "cuLaunchKernel:1");
    assert_eq!((r["crash"].clone(), r["signal"].clone(), r["counters"].clone()), (Value::Bool(true), Value::from("SIGSEGV"), Value::Null));
    assert_eq!(r["stderr_first_line"], "fake: cuLaunchKernel failed: CUDA error 719");
    let r = fault_run(&runs, "cuLaunchKernel:2");
    assert_eq!(r["counters"], "checkpoint", "a crash after the first synchronisation leaves its checkpoint");
    assert!(r["leaks"].is_null());
    let r = fault_run(&runs, "cuMemcpyDtoHAsync_v2:1");
    assert_eq!((r["signal"].clone(), r["counters"].clone()), (Value::from("SIGABRT"), Value::from("signal:SIGABRT")));
    assert_eq!(r["injected"]["code"], 1);
    assert_eq!(r["leaks"]["allocations"], 3);
    let r = fault_run(&runs, "cuStreamSynchronize:2");
    assert_eq!((r["hang"].clone(), r["counters"].clone()), (Value::Bool(true), Value::from("signal:SIGTERM")));
    assert_eq!(r["outcome"], "HANG (killed after 1 s)");
    let r = fault_run(&runs, "cuMemAlloc_v2:2");
    assert_eq!((r["exit_status"].clone(), r["crash"].clone()), (Value::from(1), Value::Bool(false)));
    assert_eq!(r["injected"]["code"], 2, "out of memory");
    assert_eq!(
        (r["leaks"]["allocations"].clone(), r["leaks"]["modules"].clone(), r["leaks"]["streams"].clone()),
        (1.into(), 1.into(), 1.into())
    );
    assert_eq!(r["stderr_first_line"], "fake: cuMemAlloc_v2 failed: CUDA error 2");
    let r = fault_run(&runs, "cuMemcpyHtoDAsync_v2:3");
    assert_eq!((r["exit_status"].clone(), r["leaks"]["total"].clone()), (Value::from(1), Value::from(0)));
    assert_eq!(fault_run(&runs, "cuMemFree_v2:3")["leaks"]["allocations"], 1);
    let md = std::fs::read_to_string(e.out().join("faults.md")).unwrap();
    assert!(md.contains("**Verdict: FAIL**") && md.contains("- **FINDING** cuLaunchKernel:1: CRASH (SIGSEGV)"), "{md}");
    assert!(md.contains("| cuMemAlloc_v2:2 | error exit 1 | yes (2) | alloc 1, modules 1, streams 1 | exit | fake: cuMemAlloc_v2 failed: CUDA error 2 |"), "{md}");
    let csv = std::fs::read_to_string(e.out().join("faults.csv")).unwrap();
    assert_eq!(csv.lines().count(), 26);
    assert!(text(&o).contains("FINDING cuStreamSynchronize:1: HANG"));
}

#[test]
fn faults_on_a_robust_program_pass_and_the_limits_apply() {
    let e = Env::new();
    let o = e.parity("faults", &["--frames", "2", "--timeout", "5", "--max-runs", "5"], &[("FAKE_ROBUST", "1")]);
    expect_code(&o, 0);
    let s = read_json(&e.out().join("faults.json"));
    assert_eq!(s["runs_total"], 5);
    assert_eq!(
        (s["totals"]["crashes"].clone(), s["totals"]["hangs"].clone(), s["totals"]["leaking_runs"].clone()),
        (0.into(), 0.into(), 0.into())
    );
    assert_eq!(s["totals"]["injected"], 5);
    // first calls of the entry points in name order
    let fails: Vec<String> = fault_runs(&e).iter().map(|r| r["fail"].as_str().unwrap().to_string()).collect();
    assert_eq!(fails, ["cuInit:1", "cuLaunchKernel:1", "cuMemAlloc_v2:1", "cuMemFree_v2:1", "cuMemcpyDtoHAsync_v2:1"]);
    let o = e.parity(
        "faults",
        &["--frames", "2", "--only", "cuMemcpy*,cuStreamSync*", "--skip", "*DtoH*", "--per-entry", "2"],
        &[("FAKE_ROBUST", "1")],
    );
    expect_code(&o, 0);
    let fails: Vec<String> = fault_runs(&e).iter().map(|r| r["fail"].as_str().unwrap().to_string()).collect();
    assert_eq!(fails, ["cuMemcpyHtoDAsync_v2:1", "cuMemcpyHtoDAsync_v2:2", "cuStreamSynchronize:1", "cuStreamSynchronize:2"]);
    // leaks are findings only when asked
    let o = e.parity("faults", &["--frames", "2", "--only", "cuMemAlloc_v2"], &[]);
    expect_code(&o, 0);
    let o = e.parity("faults", &["--frames", "2", "--only", "cuMemAlloc_v2", "--fail-on-leaks"], &[]);
    expect_code(&o, 1);
    assert!(text(&o).contains("FINDING cuMemAlloc_v2:2: leaks alloc 1, modules 1, streams 1 (--fail-on-leaks)"), "{}", text(&o));
}

#[test]
fn faults_setup_errors() {
    let e = Env::new();
    // a driver without fault injection refuses EMU_CUDA_FAIL at cuInit
    let o = e.parity("faults", &["--frames", "2"], &[("FAKE_DRIVER_REFUSES", "1")]);
    expect_code(&o, 2);
    let t = text(&o);
    assert!(t.contains("refuses EMU_CUDA_FAIL=") && t.contains("CUDA_ERROR_NOT_SUPPORTED"), "{t}");
    assert!(!e.out().join("faults.json").exists());
    assert_eq!(e.summary()["verdict"], "error");
    // one that accepts it but never injects anything
    let o = e.parity("faults", &["--frames", "2", "--only", "cuMem*"], &[("FAKE_IGNORE_FAIL", "1")]);
    expect_code(&o, 2);
    assert!(text(&o).contains("injected none of the"), "{}", text(&o));
    // a program that fails on its own
    let o = e.parity("faults", &["--frames", "2", "--defect", "fail"], &[]);
    expect_code(&o, 2);
    assert!(text(&o).contains("fails without any injected fault"), "{}", text(&o));
    let o = e.parity("faults", &["--frames", "2", "--only", "cuNothing"], &[]);
    expect_code(&o, 2);
    assert!(text(&o).contains("no call site to fail"), "{}", text(&o));
    let o = e.parity("faults", &["--max-runs", "0"], &[]);
    expect_code(&o, 2);
}

// ------------------------------------------------------------------ demo and help

#[test]
fn demo_runs_every_check_and_catches_every_defect() {
    let e = Env::new();
    let o = e.parity("demo", &["--simtwin", &e.s("simtwin"), "--features", "sse,topk"], &[]);
    expect_code(&o, 0);
    let s = e.summary();
    // frames per clip and feature, a transfer audit per feature, the race detector's
    // clean control
    assert_eq!(s["checks"].as_array().unwrap().len(), 2 * 2 + 2 + 1);
    let control = s["checks"].as_array().unwrap().iter().find(|c| c["check"] == "race").unwrap().clone();
    assert_eq!((control["feature"].as_str(), control["exit_code"].as_i64()), (Some("all"), Some(0)), "{control}");
    let defects = s["defects"].as_array().unwrap();
    assert_eq!(defects.len(), 8);
    for d in defects {
        assert_eq!(d["caught"], true, "{d}");
        assert_eq!(d["result"], "CAUGHT", "{d}");
    }
    let hr = defects.iter().find(|d| d["defect"] == "host-roundtrip").unwrap();
    assert_eq!(hr["exit_code"], 1);
    assert!(hr["detail"].as_str().unwrap().contains("cuMemcpyHtoD_v2"), "{hr}");
    // atomic-order is caught by its mechanism: outputs that change between block orders
    let ao = defects.iter().find(|d| d["defect"] == "atomic-order").unwrap();
    assert_eq!(ao["caught_by"], "block-orders");
    assert!(ao["detail"].as_str().unwrap().contains("order-dependent: m_a changed"), "{ao}");
    // missing-sync is caught by the race detector (--checks race), nothing else
    let ms = defects.iter().find(|d| d["defect"] == "missing-sync").unwrap();
    assert_eq!(ms["caught_by"], "race");
    assert!(
        ms["detail"].as_str().unwrap().contains("1 shared-memory race report(s); first: [shared-race-war] kernel band_mode_nosync_u8"),
        "{ms}"
    );
    let ms_summary = read_json(&e.out().join("defects/missing-sync/summary.json"));
    assert!(ms_summary["runs"][1]["env"].to_string().contains("EMU_CUDA_CHECKS=race"), "{ms_summary}");
    let ao_summary = read_json(&e.out().join("defects/atomic-order/summary.json"));
    assert_eq!(ao_summary["block_orders"]["orders"], serde_json::json!(["forward", "reverse", "shuffle:1"]));
    assert_eq!(ao_summary["block_orders"]["metrics_changed"]["m_a"]["frames"], serde_json::json!([2]));
    assert_eq!(s["all_pass"], true);
    assert!(text(&o).contains("ALL PASS"));
    assert!(e.out().join("frames/banded-16x16-8/sse/summary.json").exists());
}

#[test]
fn demo_never_prints_all_pass_while_a_defect_waits() {
    // A driver without block orders refuses EMU_CUDA_BLOCK_ORDER: atomic-order is then
    // WAITING, and the demo fails although every other check passes.
    let e = Env::new();
    let o = e.parity("demo", &["--simtwin", &e.s("simtwin"), "--features", "sse"], &[("FAKE_DRIVER_REFUSES", "1")]);
    expect_code(&o, 1);
    let s = e.summary();
    assert_eq!(s["all_pass"], false);
    assert!(s["checks"].as_array().unwrap().iter().all(|c| c["exit_code"] == 0), "{s}");
    let ao = s["defects"].as_array().unwrap().iter().find(|d| d["defect"] == "atomic-order").unwrap().clone();
    assert_eq!(ao["result"], "WAITING");
    assert_eq!(ao["caught"], false);
    assert!(ao["detail"].as_str().unwrap().contains("refuses EMU_CUDA_BLOCK_ORDER=reverse"), "{ao}");
    let others = s["defects"].as_array().unwrap().iter().filter(|d| d["defect"] != "atomic-order").count();
    assert_eq!(s["defects"].as_array().unwrap().iter().filter(|d| d["result"] == "CAUGHT").count(), others);
    assert_eq!(s["reasons"], serde_json::json!(["planted defect atomic-order: WAITING"]));
    let t = text(&o);
    assert!(!t.contains("ALL PASS") && t.contains("FAILURES (planted defect atomic-order: WAITING)"), "{t}");
    assert!(std::fs::read_to_string(e.out().join("summary.md")).unwrap().contains("| atomic-order | block-orders | 2 | WAITING |"));
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
    for sub in ["frames", "diff", "transfers", "bench", "faults", "demo", "driver-info", "replay", "libm"] {
        let o = Command::new(env!("CARGO_BIN_EXE_parity")).args([sub, "--help"]).output().unwrap();
        expect_code(&o, 0);
        let t = String::from_utf8_lossy(&o.stdout);
        assert!(t.contains("Example"), "{sub}: {t}");
        assert!(t.contains(&format!("parity {sub}")) || matches!(sub, "driver-info" | "libm"), "{sub}");
    }
    let o = Command::new(env!("CARGO_BIN_EXE_parity")).args(["frames"]).output().unwrap();
    expect_code(&o, 2);
}

// ------------------------------------------------------------------ hostile inputs (issue 24)

/// Kinds of file that must never be read whole: (name, how to make it at `p`).
fn hostile_files(dir: &Path) -> Vec<(&'static str, PathBuf)> {
    let fifo = dir.join("fifo.json");
    let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    let zero = dir.join("zero.json");
    std::os::unix::fs::symlink("/dev/zero", &zero).unwrap();
    let sparse = dir.join("sparse.json");
    std::fs::File::create(&sparse).unwrap().set_len(40 << 30).unwrap();
    let d = dir.join("dir.json");
    std::fs::create_dir(&d).unwrap();
    vec![
        ("FIFO", fifo),
        ("/dev/zero", PathBuf::from("/dev/zero")),
        ("symlink to /dev/zero", zero),
        ("sparse 40 GiB", sparse),
        ("directory", d),
    ]
}

#[test]
fn every_reading_command_refuses_fifos_devices_and_huge_files_at_once() {
    let e = Env::new();
    let good = e.p("good.json");
    let o = e.parity("frames", &[], &[]);
    expect_code(&o, 0);
    std::fs::copy(e.out().join("cpu.json"), &good).unwrap();
    let files = hostile_files(e.tmp.path());
    // A good launch trace (two of it agree), for bisect's other side.
    let trace = e.s("good.trace");
    std::fs::write(
        &trace,
        concat!(
            r#"{"schema":"simtwin-trace/1","driver":"emulated","hash":"st64","pid":1,"frame_rule":"htod-after-dtoh"}"#,
            "\n",
            r#"{"t":"copy","n":0,"frame":0,"src":"a0+0","bytes":4,"hash":"0123456789abcdef"}"#,
            "\n",
            r#"{"t":"end","launches":0,"traced_launches":0,"copies":1,"frames":1,"hashed_bytes":0,"trace_us":0,"copy_back_us":0}"#,
            "\n"
        ),
    )
    .unwrap();
    let o = e.parity_args(&["bisect", &trace, &trace, "--out", &e.s("rep-good")], &[]);
    expect_code(&o, 0);
    for (what, f) in &files {
        let t0 = std::time::Instant::now();
        let fs = f.to_str().unwrap();
        // diff, either side; frames' tolerance table; replay's table
        let runs: Vec<(&str, Vec<&str>)> = vec![
            ("diff", vec![fs, good.to_str().unwrap()]),
            ("diff", vec![good.to_str().unwrap(), fs]),
            ("frames", vec!["--tolerances", fs]),
            ("replay", vec!["--table", fs, "--reference", "log2"]),
        ];
        for (sub, args) in runs {
            let o = e.parity(sub, &args, &[]);
            expect_code(&o, 2);
            let t = text(&o);
            assert!(
                t.contains(fs) && (t.contains("parity reads only regular files") || t.contains("over the input size limit")),
                "{sub} {what}: {t}"
            );
        }
        // The readers of bisect (traces, types files), frames --clips, merge (shard records).
        let shard_dir = e.p(&format!("shard-{}", what.replace(['/', ' '], "_")));
        std::fs::create_dir_all(&shard_dir).unwrap();
        std::os::unix::fs::symlink(f, shard_dir.join("shard.json")).unwrap();
        let sd = shard_dir.to_str().unwrap();
        let out = e.s("rep-hostile");
        let runs: Vec<Vec<&str>> = vec![
            vec!["bisect", fs, &trace, "--out", &out],
            vec!["bisect", &trace, fs, "--out", &out],
            vec!["bisect", &trace, &trace, "--types", fs, "--out", &out],
            vec!["frames", "--clips", fs, "--out", &out],
            vec!["merge", sd, sd, "--out", &out],
        ];
        for args in runs {
            let o = e.parity_args(&args, &[]);
            expect_code(&o, 2);
            let t = text(&o);
            let named = t.contains(fs) || t.contains(&format!("{sd}/shard.json"));
            assert!(
                named && (t.contains("parity reads only regular files") || t.contains("over the input size limit")),
                "{args:?} {what}: {t}"
            );
        }
        assert!(t0.elapsed() < std::time::Duration::from_secs(60), "{what}: {:?}", t0.elapsed());
    }
    // An extractor whose output is one of them (made by the extractor itself).
    for kind in ["fifo", "devzero", "sparse", "dir", "whitespace"] {
        let o = e.parity("frames", &[], &[("FAKE_OUTPUT_KIND", kind)]);
        expect_code(&o, 2);
        let t = text(&o);
        let why = match kind {
            "fifo" => "is a FIFO",
            "devzero" => "is a character device",
            "sparse" => "over the input size limit of 512 MiB",
            "dir" => "is a directory",
            _ => "the file holds only whitespace",
        };
        assert!(t.contains(why), "{kind}: {t}");
        assert_eq!(e.summary()["verdict"], "error", "{kind}");
    }
    // The limits are adjustable and named in the errors.
    let o = e.parity("diff", &[good.to_str().unwrap(), good.to_str().unwrap(), "--max-input", "100"], &[]);
    expect_code(&o, 2);
    assert!(
        text(&o).contains("over the input size limit of 100 bytes (raise it with --max-input SIZE or PARITY_MAX_INPUT)"),
        "{}",
        text(&o)
    );
    let o = e.parity("diff", &[good.to_str().unwrap(), good.to_str().unwrap()], &[("PARITY_MAX_INPUT", "64")]);
    expect_code(&o, 2);
    assert!(text(&o).contains("limit of 64 bytes"), "{}", text(&o));
    let o = e.parity("diff", &[good.to_str().unwrap(), good.to_str().unwrap(), "--input-timeout", "x"], &[]);
    expect_code(&o, 2);
    let o = e.parity("diff", &[good.to_str().unwrap(), good.to_str().unwrap(), "--max-input", "2G", "--input-timeout", "5"], &[]);
    expect_code(&o, 0);
}

#[test]
fn every_early_error_leaves_a_report_that_reads_as_that_error() {
    let e = Env::new();
    // What every command's earlier, successful run leaves: a fake success of each.
    let seed = |dir: &Path| {
        std::fs::create_dir_all(dir.join("counts")).unwrap();
        std::fs::write(dir.join("summary.json"), r#"{"verdict": "parity", "exit_code": 0}"#).unwrap();
        for f in [
            "summary.md",
            "per_frame.csv",
            "diff.svg",
            "cpu.json",
            "cuda-emulated.json",
            "transfers.json",
            "transfers.csv",
            "bench.json",
            "faults.json",
            "block_orders.csv",
        ] {
            std::fs::write(dir.join(f), "from an earlier run").unwrap();
        }
        std::fs::write(dir.join("mine.txt"), "the user's").unwrap();
    };
    let good = e.p("good.json");
    std::fs::write(&good, "{\"frames\": [{\"frameNum\": 0, \"metrics\": {\"a\": 1}}]}").unwrap();
    let g = good.to_str().unwrap().to_string();
    let missing = e.s("missing.txt");
    let cases: Vec<(&str, Vec<String>, &str)> = vec![
        ("frames", vec!["--tolerances".into(), missing.clone()], "tolerance table"),
        ("frames", vec!["--block-orders".into(), "sideways".into()], "sideways"),
        ("frames", vec!["--proof".into(), "maybe".into()], "--proof maybe"),
        ("frames", vec!["--bitdepth".into(), "7".into()], "'7' is not a bit depth"),
        ("frames", vec!["--bogus".into()], "--bogus"),
        ("diff", vec![g.clone(), missing.clone()], "missing.txt"),
        ("diff", vec![g.clone()], "required"),
        ("transfers", vec!["--n1".into(), "9".into(), "--n2".into(), "3".into()], "--n1"),
        ("transfers", vec!["--timeout".into(), "-1".into()], "-1"),
        ("bench", vec!["--frames".into(), "1".into()], "--frames must be at least 3"),
        ("bench", vec!["--rounds".into(), "x".into()], "--rounds"),
        ("faults", vec!["--max-runs".into(), "0".into()], "--max-runs"),
        ("faults", vec!["--block-order".into(), "sideways".into()], "sideways"),
    ];
    for (sub, args, says) in cases {
        let out = e.p(&format!("rep-{sub}"));
        seed(&out);
        let mut a: Vec<&str> = args.iter().map(|s| s.as_str()).collect();
        a.extend(["--out", out.to_str().unwrap()]);
        let o = e.parity(sub, &a, &[]);
        expect_code(&o, 2);
        assert!(text(&o).contains(says), "{sub} {args:?}: {}", text(&o));
        let s = read_json(&out.join("summary.json"));
        assert_eq!(s["verdict"], "error", "{sub} {args:?}: {s}");
        assert!(s["error"].as_str().unwrap().contains(says), "{sub} {args:?}: {s}");
        for f in [
            "per_frame.csv",
            "diff.svg",
            "cpu.json",
            "cuda-emulated.json",
            "transfers.json",
            "bench.json",
            "faults.json",
            "block_orders.csv",
        ] {
            let p = out.join(f);
            // Each command removes what it writes (diff only its reports).
            let owns = match sub {
                "diff" => matches!(f, "per_frame.csv" | "diff.svg"),
                "frames" => matches!(f, "per_frame.csv" | "diff.svg" | "cpu.json" | "cuda-emulated.json" | "block_orders.csv"),
                "transfers" => f == "transfers.json",
                "bench" => f == "bench.json",
                _ => f == "faults.json",
            };
            assert!(!owns || !p.exists(), "{sub} {args:?}: {f} of the earlier run is still there");
        }
        assert!(out.join("mine.txt").exists(), "{sub}: other files are left alone");
    }
    // A report directory that cannot be made is named in the error.
    std::fs::write(e.p("afile"), "x").unwrap();
    let o = e.parity("diff", &[&g, &g, "--out", &format!("{}/sub", e.s("afile"))], &[]);
    expect_code(&o, 2);
    assert!(text(&o).contains("cannot create report directory") && text(&o).contains("afile/sub"), "{}", text(&o));
}

#[test]
fn a_killed_parity_leaves_an_incomplete_summary_and_takes_its_extractor_with_it() {
    let e = Env::new();
    let o = e.parity("frames", &[], &[]);
    expect_code(&o, 0);
    let pidfile = e.p("pids");
    let mut c = Command::new(env!("CARGO_BIN_EXE_parity"));
    c.arg("frames").args(e.clip_args()).args(["--simtwin", &e.s("simtwin"), "--features", "sse", "--out", &e.out().display().to_string()]);
    c.current_dir(e.tmp.path()).env_remove("LD_LIBRARY_PATH").env("FAKE_HANG", &pidfile);
    let mut child = c.stdout(std::process::Stdio::null()).stderr(std::process::Stdio::null()).spawn().unwrap();
    let t0 = std::time::Instant::now();
    while !pidfile.exists() && t0.elapsed().as_secs() < 20 {
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    std::thread::sleep(std::time::Duration::from_millis(200));
    let pids: Vec<i32> = std::fs::read_to_string(&pidfile).unwrap().split_whitespace().map(|x| x.parse().unwrap()).collect();
    child.kill().unwrap(); // SIGKILL: parity cannot clean up
    child.wait().unwrap();
    let t0 = std::time::Instant::now();
    while alive(pids[0]) && t0.elapsed().as_secs() < 5 {
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let extractor_alive = alive(pids[0]);
    unsafe { libc::kill(pids[1], libc::SIGKILL) }; // its own child is not ours to end
    assert!(!extractor_alive, "the extractor {} outlived parity", pids[0]);
    let s = e.summary();
    assert_eq!(s["verdict"], "incomplete", "{s}");
    assert!(!e.out().join("per_frame.csv").exists());
}

#[test]
fn a_setsid_child_of_a_hanging_extractor_is_ended_with_it() {
    let e = Env::new();
    let pidfile = e.p("pids");
    let o = e.parity("frames", &["--timeout", "4"], &[("FAKE_HANG", pidfile.to_str().unwrap()), ("FAKE_HANG_SETSID", "1")]);
    expect_code(&o, 2);
    assert!(pidfile.exists(), "the extractor did not start its child within the time limit: {}", text(&o));
    expect_killed_group(&pidfile);
}

#[test]
fn a_directory_as_a_clip_and_a_negative_width_are_named_as_such() {
    let e = Env::new();
    std::fs::create_dir(e.p("clipdir")).unwrap();
    let raw = |args: &[&str]| {
        let mut c = Command::new(env!("CARGO_BIN_EXE_parity"));
        c.arg("frames").args(args).args(["--simtwin", &e.s("simtwin"), "--features", "sse", "--out", &e.out().display().to_string()]);
        c.current_dir(e.tmp.path()).env_remove("LD_LIBRARY_PATH").output().unwrap()
    };
    let o = raw(&["-r", &e.s("clipdir"), "-d", &e.s("dis.yuv"), "-W", "16", "-H", "16"]);
    expect_code(&o, 2);
    assert!(text(&o).contains("clipdir is a directory") && !text(&o).contains("--frames"), "{}", text(&o));
    let o = raw(&["-r", &e.s("ref.yuv"), "-d", &e.s("dis.yuv"), "-W", "-6", "-H", "16"]);
    expect_code(&o, 2);
    assert!(text(&o).contains("'-6': a frame dimension is a positive number of pixels"), "{}", text(&o));
}

// ------------------------------------------------------------------ JUnit

/// The `<testcase ...>` element of `name` in a JUnit file, with what it holds.
fn junit_case(xml: &str, classname: &str, name: &str) -> String {
    let head = format!("<testcase classname=\"{classname}\" name=\"{name}\"");
    let i = xml.find(&head).unwrap_or_else(|| panic!("no case {classname}/{name} in\n{xml}"));
    let rest = &xml[i..];
    let end =
        if rest[..rest.find('>').unwrap()].ends_with('/') { rest.find('>').unwrap() + 1 } else { rest.find("</testcase>").unwrap() + 11 };
    rest[..end].to_string()
}

#[test]
fn junit_reports_one_case_per_metric_gate_and_call_site() {
    let e = Env::new();
    expect_code(&e.parity("frames", &["--defect", "ulp"], &[]), 1);
    let x = std::fs::read_to_string(e.out().join("junit.xml")).unwrap();
    assert!(x.contains("<testsuite name=\"parity frames\" tests=\"5\" failures=\"1\" errors=\"0\""), "{x}");
    let m_a = junit_case(&x, "frames.cuda-emulated", "m_a");
    assert!(
        m_a.contains("<failure message=\"4/5 frames identical, 1 beyond tolerance (exact); max abs")
            && m_a.contains("first beyond tolerance: frame 2"),
        "{m_a}"
    );
    assert!(junit_case(&x, "frames.cuda-emulated", "m_b").contains("<system-out>5/5 frames identical"), "{x}");
    assert!(junit_case(&x, "frames.driver", "hazards").ends_with("/>"), "{x}");
    expect_code(&e.parity("frames", &["--defect", "hazard"], &[]), 1);
    let x = std::fs::read_to_string(e.out().join("junit.xml")).unwrap();
    assert!(junit_case(&x, "frames.driver", "hazards").contains("<failure message=\"the emulated driver reported 1 hazard(s)\""), "{x}");

    expect_code(&e.parity("transfers", &["--max-htod-per-frame", "0", "--max-allocs-per-frame", "0"], &[]), 1);
    let x = std::fs::read_to_string(e.out().join("junit.xml")).unwrap();
    assert!(x.contains("tests=\"4\" failures=\"1\""), "{x}");
    assert!(junit_case(&x, "transfers.emulated", "unsupported").contains("no unsupported entry point called"), "{x}");
    assert!(
        junit_case(&x, "transfers.emulated", "--max-htod-per-frame 0")
            .contains("<failure message=\"--max-htod-per-frame 0: copies.HtoD.count = 2 per frame &gt; 0"),
        "{x}"
    );
    assert!(
        junit_case(&x, "transfers.emulated", "--max-allocs-per-frame 0")
            .contains("<system-out>--max-allocs-per-frame 0: allocations.count = 0 per frame &lt;= 0"),
        "{x}"
    );
    assert!(junit_case(&x, "transfers.emulated", "hazards").contains("no hazard reported"), "{x}");

    expect_code(&e.parity("faults", &["--frames", "2", "--only", "cuLaunchKernel,cuMemAlloc_v2", "--per-entry", "1"], &[]), 1);
    let x = std::fs::read_to_string(e.out().join("junit.xml")).unwrap();
    assert!(x.contains("tests=\"2\" failures=\"1\""), "{x}");
    assert!(
        junit_case(&x, "faults.cuLaunchKernel", "cuLaunchKernel:1").contains("<failure message=\"cuLaunchKernel:1: CRASH (SIGSEGV)"),
        "{x}"
    );
    assert!(junit_case(&x, "faults.cuMemAlloc_v2", "cuMemAlloc_v2:1").contains("<system-out>error exit 1; injected:"), "{x}");

    // a setup error is one errored case; a skip (no real device) one skipped case
    expect_code(&e.parity("frames", &["--defect", "fail"], &[]), 2);
    let x = std::fs::read_to_string(e.out().join("junit.xml")).unwrap();
    assert!(
        x.contains("errors=\"1\"") && junit_case(&x, "frames", "run").contains("<error message=\"cpu extractor")
            || junit_case(&x, "frames", "run").contains("<error message=\"cuda-emulated extractor failed"),
        "{x}"
    );
    expect_code(&e.parity("frames", &["--device", "real"], &[]), 77);
    let x = std::fs::read_to_string(e.out().join("junit.xml")).unwrap();
    assert!(junit_case(&x, "frames", "run").contains("<skipped message=\"no CUDA driver") || x.contains("skipped=\"1\""), "{x}");
}

// ------------------------------------------------------------------ shards and merge

/// The report files a frames run writes.
const FRAMES_REPORTS: &[&str] = &["summary.json", "summary.md", "per_frame.csv", "block_orders.csv", "junit.xml", "diff.svg"];

#[test]
fn frames_matrix_in_three_shards_merges_into_the_unsharded_report() {
    let e = Env::new();
    std::fs::write(e.p("clips.csv"), "name,reference,distorted,width,height,frames\na,ref.yuv,dis.yuv,16,16,\nb,ref.yuv,dis.yuv,16,16,3\n")
        .unwrap();
    let run = [
        "frames",
        "--clips",
        "clips.csv",
        "--features",
        "sse,topk",
        "--per-feature",
        "--block-orders",
        "forward,reverse",
        "--defect",
        "order",
    ];
    let with = |extra: &[&str]| -> Vec<String> { run.iter().chain(extra).map(|x| x.to_string()).collect() };
    let o = e.parity_args(&with(&["--out", "full"]), &[]);
    expect_code(&o, 1);
    let s = read_json(&e.p("full/summary.json"));
    assert_eq!(s["schema"], "simtwin-parity-matrix/1");
    assert_eq!(s["totals"]["cells"], 4);
    assert_eq!(s["cells"][1]["cell"], "a/topk");
    assert_eq!(s["cells"][1]["block_orders_changed"], serde_json::json!(["m_a"]), "{s}");
    assert_eq!(read_json(&e.p("full/cells/b/sse/summary.json"))["frames"], 3);
    let x = std::fs::read_to_string(e.p("full/junit.xml")).unwrap();
    assert!(
        x.contains("<testsuite name=\"parity frames a/sse\"") && x.contains("classname=\"frames.b/topk.block-orders\" name=\"m_a\""),
        "{x}"
    );
    // 2 clips x 2 features x 2 orders = 8 units, dealt round robin
    for k in 1..=3 {
        let o = e.parity_args(&with(&["--shard", &format!("{k}/3"), "--out", &format!("s{k}")]), &[]);
        expect_code(&o, 0);
        let r = read_json(&e.p(&format!("s{k}/shard.json")));
        assert_eq!((r["units_total"].clone(), r["units"].as_array().unwrap().len()), (8.into(), if k < 3 { 3 } else { 2 }), "{r}");
    }
    assert_eq!(read_json(&e.p("s2/shard.json"))["units"], serde_json::json!(["a/sse:reverse", "b/sse:forward", "b/topk:reverse"]));
    let o = e.parity_args(&["merge", "s3", "s1", "s2", "--out", "merged"], &[]);
    expect_code(&o, 1);
    let roots = [e.p("full"), e.p("merged"), e.p("s1"), e.p("s2"), e.p("s3")];
    let roots: Vec<&Path> = roots.iter().map(|p| p.as_path()).collect();
    assert_same_reports(&reports(&e.p("full"), FRAMES_REPORTS, &roots), &reports(&e.p("merged"), FRAMES_REPORTS, &roots));
    assert!(reports(&e.p("full"), FRAMES_REPORTS, &roots).len() > 20);

    // Slurm's array task gives the same shard as 2/3
    let o = e.parity_args(
        &with(&["--shard", "auto", "--out", "slurm"]),
        &[("SLURM_ARRAY_TASK_ID", "5"), ("SLURM_ARRAY_TASK_MIN", "4"), ("SLURM_ARRAY_TASK_COUNT", "3")],
    );
    expect_code(&o, 0);
    assert_eq!(read_json(&e.p("slurm/shard.json"))["units"], read_json(&e.p("s2/shard.json"))["units"]);
    // refused: a missing shard, a shard twice, a shard of another run
    let o = e.parity_args(&["merge", "s1", "s2", "--out", "m2"], &[]);
    expect_code(&o, 2);
    assert!(text(&o).contains("shard(s) 3/3 of run") && text(&o).contains("missing"), "{}", text(&o));
    let o = e.parity_args(&["merge", "s1", "s2", "slurm", "s3", "--out", "m3"], &[]);
    expect_code(&o, 2);
    assert!(text(&o).contains("shard 2/3 is given twice"), "{}", text(&o));
    let o = e.parity_args(
        &[
            "frames",
            "--clips",
            "clips.csv",
            "--features",
            "sse",
            "--per-feature",
            "--block-orders",
            "forward,reverse",
            "--shard",
            "3/3",
            "--out",
            "other",
        ],
        &[],
    );
    expect_code(&o, 0);
    let o = e.parity_args(&["merge", "s1", "s2", "other", "--out", "m4"], &[]);
    expect_code(&o, 2);
    assert!(text(&o).contains("are shards of different runs"), "{}", text(&o));
    let o = e.parity_args(&["merge", "s1", "s2", "full", "--out", "m5"], &[]);
    expect_code(&o, 2);
    assert!(text(&o).contains("is not a finished shard (no shard.json)"), "{}", text(&o));
}

#[test]
fn frames_one_clip_sharded_by_block_order_and_failed_cells_merge_as_errors() {
    let e = Env::new();
    let base = [
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
        "--block-orders",
        "forward,reverse,shuffle:3",
    ];
    let with = |extra: &[&str]| -> Vec<String> { base.iter().chain(extra).map(|x| x.to_string()).collect() };
    expect_code(&e.parity_args(&with(&["--out", "full"]), &[]), 0);
    for k in 1..=2 {
        expect_code(&e.parity_args(&with(&["--shard", &format!("{k}/2"), "--out", &format!("s{k}")]), &[]), 0);
    }
    expect_code(&e.parity_args(&["merge", "s1", "s2", "--out", "merged"], &[]), 0);
    let roots = [e.p("full"), e.p("merged"), e.p("s1"), e.p("s2")];
    let roots: Vec<&Path> = roots.iter().map(|p| p.as_path()).collect();
    let full = reports(&e.p("full"), FRAMES_REPORTS, &roots);
    assert!(full.contains_key("block_orders.csv") && full.contains_key("junit.xml"), "{:?}", full.keys());
    assert_same_reports(&full, &reports(&e.p("merged"), FRAMES_REPORTS, &roots));
    // CUDA runs that fail: the shards exit 2 and still leave shard.json; the merge is
    // the error report the unsharded run writes
    for k in 1..=2 {
        expect_code(&e.parity_args(&with(&["--defect", "fail", "--shard", &format!("{k}/2"), "--out", &format!("f{k}")]), &[]), 2);
        assert!(e.p(&format!("f{k}/shard.json")).exists());
    }
    let o = e.parity_args(&["merge", "f1", "f2", "--out", "fm"], &[]);
    expect_code(&o, 2);
    let s = read_json(&e.p("fm/summary.json"));
    assert_eq!(s["verdict"], "error");
    assert!(s["error"].as_str().unwrap().contains("cuda-emulated extractor failed with exit status 3"), "{s}");
}

#[test]
fn faults_sharded_by_call_site_merge_into_the_unsharded_campaign() {
    let e = Env::new();
    let base = [
        "faults",
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
        "--frames",
        "2",
        "--timeout",
        "20",
        "--skip",
        "cuStreamSynchronize",
    ];
    let with = |extra: &[&str]| -> Vec<String> { base.iter().chain(extra).map(|x| x.to_string()).collect() };
    let o = e.parity_args(&with(&["--out", "full"]), &[]);
    expect_code(&o, 1);
    for k in 1..=3 {
        expect_code(&e.parity_args(&with(&["--shard", &format!("{k}/3"), "--out", &format!("s{k}")]), &[]), 0);
    }
    let o = e.parity_args(&["merge", "s1", "s2", "s3", "--out", "merged"], &[]);
    expect_code(&o, 1);
    let names = ["faults.json", "faults.md", "faults.csv", "junit.xml"];
    let roots = [e.p("full"), e.p("merged"), e.p("s1"), e.p("s2"), e.p("s3")];
    let roots: Vec<&Path> = roots.iter().map(|p| p.as_path()).collect();
    let full = reports(&e.p("full"), &names, &roots);
    assert_eq!(full.len(), 4);
    assert_same_reports(&full, &reports(&e.p("merged"), &names, &roots));
    let s = read_json(&e.p("merged/faults.json"));
    assert_eq!(s["runs_total"], 23);
    // every run's log is in the merged directory
    for r in s["runs"].as_array().unwrap() {
        let log = PathBuf::from(r["stderr_log"].as_str().unwrap());
        assert!(log.starts_with(e.p("merged")) && log.exists(), "{log:?}");
    }
}
