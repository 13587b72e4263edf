//! End-to-end tests against the real fixtures' twin (simtwin-twin) under simtwin's
//! emulated driver. They need the build layout from scripts/build (target/simtwin) and
//! FAIL, never skip, when it is missing. Ignored until the lead enables them once the
//! build exists (scripts/build, which the test command runs first).

mod support;

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// Every feature of the fixture twin (fixtures/twin/twin.h's list).
fn all_features() -> String {
    fixtures::twin::features().join(",")
}

fn simtwin() -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().join("target/simtwin");
    for need in ["bin/simtwin-twin", "bin/fixtures", "lib/libcuda.so.1", "kernels"] {
        assert!(root.join(need).exists(), "{} is missing: run scripts/build first", root.join(need).display());
    }
    root
}

struct Clip {
    reference: String,
    distorted: String,
    width: u32,
    height: u32,
    bitdepth: u32,
}

fn clip(dir: &Path, name: &str, width: u32, height: u32, bitdepth: u32) -> Clip {
    let st = Command::new(simtwin().join("bin/fixtures")).args(["make-set", "-o"]).arg(dir).args(["--only", name]).status().unwrap();
    assert!(st.success(), "fixtures make-set --only {name} failed");
    Clip {
        reference: dir.join(format!("{name}.yuv")).display().to_string(),
        distorted: dir.join(format!("{name}-dis.yuv")).display().to_string(),
        width,
        height,
        bitdepth,
    }
}

fn textured(dir: &Path) -> Clip {
    clip(dir, "textured-256x256-8", 256, 256, 8)
}

fn parity(sub: &str, c: &Clip, out: &Path, extra: &[&str]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_parity"));
    cmd.arg(sub)
        .args(["-r", &c.reference, "-d", &c.distorted])
        .args(["-W", &c.width.to_string(), "-H", &c.height.to_string(), "-b", &c.bitdepth.to_string()])
        .arg("--simtwin")
        .arg(simtwin())
        .arg("--out")
        .arg(out)
        .args(extra)
        .env_remove("EMU_CUDA_COUNTS");
    cmd.output().unwrap()
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

/// A differences report points at a frame and a metric of the expected feature.
#[track_caller]
fn expect_difference(out: &Path, metric_prefix: &str) {
    let s = json(&out.join("summary.json"));
    assert_eq!(s["exit_code"], 1);
    let fb = &s["comparisons"][0]["first_beyond_tolerance"];
    assert!(fb["frame"].is_u64(), "no first difference in {s}");
    assert!(fb["metric"].as_str().unwrap().starts_with(metric_prefix), "first difference in {} not {metric_prefix}*: {s}", fb["metric"]);
}

#[test]
fn clean_twin_is_at_parity_on_every_feature() {
    let t = tempfile::tempdir().unwrap();
    let c = textured(t.path());
    for f in all_features().split(',') {
        let out = t.path().join(f);
        let o = parity("frames", &c, &out, &["--features", f]);
        expect(&o, 0);
        let s = json(&out.join("summary.json"));
        assert_eq!(s["identical_frames"], s["frames"], "{f}");
        assert!(s["runs"][1]["launches"].as_object().is_some_and(|l| !l.is_empty()), "{f}: no launches recorded");
        assert!(s["precision_caveat"].is_null(), "{f}: the twin prints %.17g");
    }
    let wide = clip(t.path(), "ramp-1920x64-8", 1920, 64, 8);
    let o = parity("frames", &wide, &t.path().join("wide"), &["--features", &all_features()]);
    expect(&o, 0);
}

#[test]
fn clean_twin_transfers_audit_and_bench() {
    let t = tempfile::tempdir().unwrap();
    let c = textured(t.path());
    let out = t.path().join("tr");
    let o = parity("transfers", &c, &out, &["--features", &all_features(), "--no-unsupported", "--max-allocs-per-frame", "0"]);
    expect(&o, 0);
    let s = json(&out.join("transfers.json"));
    assert!(s["per_frame"]["launches.total"].as_f64().unwrap() > 0.0);
    assert!(s["per_frame"]["copies.HtoD.bytes"].as_f64().unwrap() > 0.0, "frames are uploaded every frame");
    // temporal adds no host-to-device transfer of its own over sse
    let o =
        parity("transfers", &c, &t.path().join("tr2"), &["--features", "sse,temporal", "--baseline", "sse", "--max-dtoh-per-frame", "0"]);
    expect(&o, 0);
    let o = parity(
        "bench",
        &c,
        &t.path().join("bench"),
        &["--features", "sse", "--frames", "4", "--rounds", "1", "--backend", "cpu", "--b-backend", "cuda"],
    );
    expect(&o, 0);
}

#[test]
fn defect_clamp_borders_is_caught() {
    let t = tempfile::tempdir().unwrap();
    let c = textured(t.path());
    let o = parity("frames", &c, &t.path().join("o"), &["--features", &all_features(), "--defect", "clamp-borders"]);
    expect(&o, 1);
    expect_difference(&t.path().join("o"), "band_mask");
}

#[test]
fn defect_filter_border_rows_is_caught() {
    let t = tempfile::tempdir().unwrap();
    let c = textured(t.path());
    let o = parity("frames", &c, &t.path().join("o"), &["--features", &all_features(), "--defect", "filter-border-rows"]);
    expect(&o, 1);
    expect_difference(&t.path().join("o"), "band_mask");
}

#[test]
fn defect_missing_sync_is_caught() {
    let t = tempfile::tempdir().unwrap();
    let c = textured(t.path());
    let o = parity("frames", &c, &t.path().join("o"), &["--features", &all_features(), "--defect", "missing-sync"]);
    expect(&o, 1);
    expect_difference(&t.path().join("o"), "band_mask");
}

#[test]
fn defect_divergent_barrier_is_reported_as_a_hazard() {
    let t = tempfile::tempdir().unwrap();
    let c = textured(t.path());
    let out = t.path().join("o");
    let o = parity("frames", &c, &out, &["--features", &all_features(), "--defect", "divergent-barrier"]);
    expect(&o, 1);
    let s = json(&out.join("summary.json"));
    assert!(s["hazards"]["count"].as_u64().unwrap() > 0, "{s}");
    assert!(s["hazards"]["reports"][0].to_string().contains("temporal"), "the hazard names the temporal kernel: {s}");
}

#[test]
fn defect_big_block_fails_the_cuda_run() {
    let t = tempfile::tempdir().unwrap();
    // The sse kernel gives each thread two pixels of a row: the uncapped block size
    // passes 1024 threads only above 2048 columns.
    let wide = clip(t.path(), "ramp-3840x128-8", 3840, 128, 8);
    let out = t.path().join("o");
    let o = parity("frames", &wide, &out, &["--features", "sse", "--defect", "big-block"]);
    expect(&o, 2);
    let s = json(&out.join("summary.json"));
    let err = s["error"].as_str().unwrap();
    assert!(err.contains("cuda-emulated extractor failed"), "{s}");
    assert!(err.contains("CUDA_ERROR_INVALID_VALUE"), "the refused launch is named: {s}");
    // control: the clean twin on the same clip is at parity
    let o = parity("frames", &wide, &t.path().join("p"), &["--features", "sse"]);
    expect(&o, 0);
}

#[test]
fn defect_host_roundtrip_fails_the_transfer_gate() {
    let t = tempfile::tempdir().unwrap();
    let c = textured(t.path());
    let out = t.path().join("o");
    let o = parity(
        "transfers",
        &c,
        &out,
        &[
            "--features",
            "temporal",
            "--defect",
            "host-roundtrip",
            "--baseline",
            "temporal",
            "--max-htod-per-frame",
            "0",
            "--max-dtoh-per-frame",
            "0",
        ],
    );
    expect(&o, 1);
    let s = json(&out.join("transfers.json"));
    let failed: Vec<&Value> = s["assertions"].as_array().unwrap().iter().filter(|a| a["pass"] == false).collect();
    assert!(!failed.is_empty());
    assert!(failed.iter().all(|a| !a["calls"].as_array().unwrap().is_empty()), "the offending calls are named: {s}");
    // and the same extractor without the defect passes
    let o = parity(
        "transfers",
        &c,
        &t.path().join("p"),
        &["--features", "temporal", "--baseline", "temporal", "--max-htod-per-frame", "0", "--max-dtoh-per-frame", "0"],
    );
    expect(&o, 0);
}

/// Does the emulated driver accept `VAR=VALUE`? Its cuInit answers (through parity's
/// driver probe, the same check `parity frames` makes before running anything).
fn driver_accepts(var: &str, value: &str) -> bool {
    let st = simtwin();
    let o = Command::new(env!("CARGO_BIN_EXE_parity"))
        .args(["driver-info", "--json", "--init-emulated"])
        .env("LD_LIBRARY_PATH", st.join("lib"))
        .env("EMU_CUDA_KERNELS", st.join("kernels"))
        .env(var, value)
        .env_remove("EMU_CUDA_COUNTS")
        .output()
        .unwrap();
    let v: Value = serde_json::from_str(String::from_utf8_lossy(&o.stdout).trim()).unwrap();
    assert_eq!(v["emulated"], true, "{v}");
    match v["init"].as_i64() {
        Some(0) => true,
        Some(801) => false,
        other => panic!("cuInit with {var}={value} answered {other:?}: {v}"),
    }
}

/// The demo's clip for atomic-order (parity::demo::ATOMIC_CLIP): textured, noise of
/// amplitude 40, so that the top 10% of differences are not all ties.
fn atomic_clip(dir: &Path) -> Clip {
    let (name, w, h, frames, distort) = parity::demo::ATOMIC_CLIP;
    let mut paths = vec![];
    for (suffix, d) in [("", None), ("-dis", Some(distort))] {
        let p = dir.join(format!("{name}{suffix}.yuv"));
        let mut cmd = Command::new(simtwin().join("bin/fixtures"));
        cmd.args(["clip", "--kind", "textured", "--width", &w.to_string(), "--height", &h.to_string(), "--frames", &frames.to_string()])
            .arg("-o")
            .arg(&p);
        if let Some(d) = d {
            cmd.args(["--distort", d]);
        }
        assert!(cmd.status().unwrap().success());
        paths.push(p.display().to_string());
    }
    Clip { reference: paths[0].clone(), distorted: paths[1].clone(), width: w, height: h, bitdepth: 8 }
}

/// The atomic-order defect is caught by block orders: the float sum changes between
/// orders. A driver without EMU_CUDA_BLOCK_ORDER makes the run fail clearly (exit 2,
/// nothing run), never pass.
#[test]
fn defect_atomic_order_is_caught_by_block_orders() {
    let t = tempfile::tempdir().unwrap();
    let c = atomic_clip(t.path());
    let out = t.path().join("o");
    let orders = ["--block-orders", "forward,reverse,shuffle:1"];
    let o = parity("frames", &c, &out, &[&["--features", "topk", "--defect", "atomic-order"][..], &orders[..]].concat());
    if !driver_accepts("EMU_CUDA_BLOCK_ORDER", "reverse") {
        expect(&o, 2);
        assert!(text(&o).contains("refuses EMU_CUDA_BLOCK_ORDER=reverse") && text(&o).contains("CUDA_ERROR_NOT_SUPPORTED"), "{}", text(&o));
        assert!(!out.join("per_frame.csv").exists());
        return;
    }
    expect(&o, 1);
    let s = json(&out.join("summary.json"));
    assert_eq!(s["block_orders"]["changed"], true, "{s}");
    assert!(s["block_orders"]["metrics_changed"].as_object().unwrap().keys().all(|k| k.starts_with("topk")), "{s}");
    // control: the clean twin sums in fixed point, the same under every order and at parity
    let o = parity("frames", &c, &t.path().join("p"), &[&["--features", "topk"][..], &orders[..]].concat());
    expect(&o, 0);
    assert_eq!(json(&t.path().join("p/summary.json"))["block_orders"]["changed"], false);
}

/// The demo catches every planted defect by the mechanism fixtures/README.md names and
/// says ALL PASS; while the driver has no block orders, atomic-order is WAITING and the
/// demo fails (exit 1), never ALL PASS.
#[test]
fn demo_passes_on_the_real_build() {
    let t = tempfile::tempdir().unwrap();
    let o =
        Command::new(env!("CARGO_BIN_EXE_parity")).arg("demo").arg("--simtwin").arg(simtwin()).arg("--out").arg(t.path()).output().unwrap();
    let s = json(&t.path().join("summary.json"));
    assert!(s["checks"].as_array().unwrap().iter().all(|c| c["exit_code"] == 0), "{s}");
    let defects = s["defects"].as_array().unwrap();
    assert_eq!(defects.len(), 8);
    let orders = driver_accepts("EMU_CUDA_BLOCK_ORDER", "reverse");
    for d in defects {
        if d["defect"] == "atomic-order" && !orders {
            assert_eq!(d["result"], "WAITING", "{d}");
        } else {
            assert_eq!(d["result"], "CAUGHT", "{d}");
        }
    }
    if orders {
        expect(&o, 0);
        assert!(text(&o).contains("ALL PASS"));
    } else {
        expect(&o, 1);
        assert!(!text(&o).contains("ALL PASS") && text(&o).contains("planted defect atomic-order: WAITING"), "{}", text(&o));
    }
}

/// `parity faults` on the fixtures' CUDA twin: every driver call of a 2-frame run
/// failing in turn gives no crash and no hang. A driver without EMU_CUDA_FAIL makes the
/// campaign fail clearly (exit 2).
#[test]
fn faults_on_the_twin_give_no_crash_and_no_hang() {
    let t = tempfile::tempdir().unwrap();
    let c = textured(t.path());
    let out = t.path().join("f");
    let o = parity("faults", &c, &out, &["--features", "sse,topk", "--frames", "2"]);
    if !driver_accepts("EMU_CUDA_FAIL", "cuMemAlloc_v2:1") {
        expect(&o, 2);
        assert!(text(&o).contains("refuses EMU_CUDA_FAIL=") && text(&o).contains("CUDA_ERROR_NOT_SUPPORTED"), "{}", text(&o));
        return;
    }
    let s = json(&out.join("faults.json"));
    assert_eq!(s["totals"]["crashes"], 0, "{}", s["findings"]);
    assert_eq!(s["totals"]["hangs"], 0, "{}", s["findings"]);
    assert!(s["runs_total"].as_u64().unwrap() >= 20, "{s}");
    assert!(s["totals"]["injected"].as_u64().unwrap() > 0, "{s}");
    expect(&o, 0);
    // every run answered the failure: an error exit naming the failed call
    for r in s["runs"].as_array().unwrap().iter().filter(|r| r["injected"]["code"].is_u64()) {
        assert_ne!(r["exit_status"], 0, "{r}");
    }
}

/// The issue's acceptance check: a fixture matrix (2 clips x 2 features x 2 block orders:
/// 8 units) in 3 shards, merged, gives the unsharded run's report, file by file.
#[test]
fn a_fixture_matrix_in_three_shards_merges_into_the_unsharded_report() {
    let t = tempfile::tempdir().unwrap();
    clip(t.path(), "banded-256x256-8", 256, 256, 8);
    clip(t.path(), "textured-256x256-8", 256, 256, 8);
    std::fs::write(
        t.path().join("clips.csv"),
        "name,reference,distorted,width,height,frames\nbanded,banded-256x256-8.yuv,banded-256x256-8-dis.yuv,256,256,2\ntextured,textured-256x256-8.yuv,textured-256x256-8-dis.yuv,256,256,2\n",
    )
    .unwrap();
    let run = |extra: &[&str]| {
        let mut c = Command::new(env!("CARGO_BIN_EXE_parity"));
        c.args([
            "frames",
            "--clips",
            "clips.csv",
            "--features",
            "sse,topk",
            "--per-feature",
            "--block-orders",
            "forward,reverse",
            "--simtwin",
        ])
        .arg(simtwin())
        .args(extra)
        .current_dir(t.path())
        .env_remove("EMU_CUDA_COUNTS")
        .env_remove("EMU_CUDA_KERNELS")
        .env_remove("SIMTWIN_COUNTS_DIR");
        c.output().unwrap()
    };
    expect(&run(&["--out", "full"]), 0);
    for k in 1..=3 {
        expect(&run(&["--shard", &format!("{k}/3"), "--out", &format!("shard-{k}")]), 0);
    }
    let o = Command::new(env!("CARGO_BIN_EXE_parity"))
        .args(["merge", "shard-1", "shard-2", "shard-3", "--out", "merged"])
        .current_dir(t.path())
        .output()
        .unwrap();
    expect(&o, 0);
    let names = ["summary.json", "summary.md", "per_frame.csv", "block_orders.csv", "junit.xml", "diff.svg"];
    let dirs: Vec<PathBuf> =
        ["full", "merged", "shard-1", "shard-2", "shard-3"].iter().map(|d| t.path().join(d).canonicalize().unwrap()).collect();
    let roots: Vec<&Path> = dirs.iter().map(|p| p.as_path()).collect();
    let full = support::reports(&dirs[0], &names, &roots);
    assert_eq!(full.len(), 3 + 4 * 5, "the matrix's summary, markdown and JUnit, and 5 reports per cell: {:?}", full.keys());
    support::assert_same_reports(&full, &support::reports(&dirs[1], &names, &roots));
    let s = json(&dirs[1].join("summary.json"));
    assert_eq!((s["totals"]["cells"].as_u64(), s["totals"]["parity"].as_u64()), (Some(4), Some(4)), "{s}");
    let cell = json(&dirs[1].join("cells/textured/topk/summary.json"));
    assert_eq!(cell["block_orders"]["orders"], serde_json::json!(["forward", "reverse"]));
    assert!(cell["runs"][1]["launches"]["topk_select"].as_f64().unwrap() > 0.0, "{cell}");
}
