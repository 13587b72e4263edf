//! `parity bisect` end to end on the fixtures' CUDA twin under the emulated driver
//! (EMU_CUDA_TRACE): the planted border defects are named by their kernel and first
//! differing pixel, a block-order-dependent float sum by its kernel and both values,
//! PTX mode agrees with twin mode, a pass-through trace (to a stand-in driver) agrees
//! with the emulated one, launch sequences that differ are realigned, and broken
//! traces are input errors. Needs target/simtwin (scripts/build) and python3.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

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

/// Clips in a temporary directory: a textured 256x256 pair (noise 13:5) and the
/// atomic-order pair (noise 5:40, as the demo uses).
struct Clips {
    dir: tempfile::TempDir,
}

fn clips() -> Clips {
    let dir = tempfile::tempdir().unwrap();
    let f = simtwin().join("bin/fixtures");
    for (name, distort) in [("ref.yuv", None), ("dis.yuv", Some("noise:13:5")), ("dis40.yuv", Some("noise:5:40"))] {
        let mut c = Command::new(&f);
        c.args(["clip", "--kind", "textured", "--width", "256", "--height", "256", "--bitdepth", "8", "--frames", "3", "-o"])
            .arg(dir.path().join(name));
        if let Some(d) = distort {
            c.args(["--distort", d]);
        }
        assert!(c.output().unwrap().status.success());
    }
    Clips { dir }
}

impl Clips {
    /// The twin's command line (for --run) with extra words.
    fn twin(&self, dis: &str, extra: &str) -> String {
        let st = simtwin();
        format!(
            "EMU_CUDA_KERNELS={k} LD_LIBRARY_PATH={l} {t} --backend cuda --reference {r} --distorted {d} --width 256 --height 256 --bitdepth 8 --output {o} {extra}",
            k = st.join("kernels").display(),
            l = st.join("lib").display(),
            t = st.join("bin/simtwin-twin").display(),
            r = self.dir.path().join("ref.yuv").display(),
            d = self.dir.path().join(dis).display(),
            o = self.dir.path().join("out.json").display(),
        )
    }
    fn out(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }
}

/// Runs parity bisect; returns (exit code, summary.json, stdout).
fn bisect(args: &[&str], out: &Path) -> (i32, Value, String) {
    let o = Command::new(env!("CARGO_BIN_EXE_parity"))
        .arg("bisect")
        .args(args)
        .arg("--out")
        .arg(out)
        .env_remove("EMU_CUDA_TRACE")
        .output()
        .unwrap();
    let summary: Value = serde_json::from_str(
        &std::fs::read_to_string(out.join("summary.json")).unwrap_or_else(|_| panic!("no summary: {}", String::from_utf8_lossy(&o.stderr))),
    )
    .unwrap();
    (o.status.code().unwrap_or(-1), summary, String::from_utf8_lossy(&o.stdout).into_owned() + &String::from_utf8_lossy(&o.stderr))
}

fn sig() -> String {
    root().join("fixtures/kernels.sig").display().to_string()
}

#[test]
fn clamp_borders_is_named_by_the_mask_kernel_and_its_first_pixel() {
    let c = clips();
    let (a, b) = (c.twin("dis.yuv", "--features band_mask"), c.twin("dis.yuv", "--features band_mask --defect clamp-borders"));
    let (code, s, out) = bisect(&["--run", &a, &b, "--types", &sig(), "--width", "256"], &c.out("r"));
    assert_eq!(code, 1, "{out}");
    let f = &s["first_divergence"];
    assert_eq!(f["a"]["kernel"], "band_box", "{s}");
    assert_eq!(f["b"]["kernel"], "band_box_clamp", "{s}");
    assert_eq!(f["same_kernel"], false);
    // The mask m0 (parameter 3), u8 per pixel: the clamped box sum differs first at the
    // top-left corner, and only along the borders.
    assert_eq!(f["buffer"]["params"], serde_json::json!([3]), "{s}");
    let e = &f["element"];
    assert_eq!((e["type"].as_str(), e["index"].as_u64(), e["x"].as_u64(), e["y"].as_u64()), (Some("u8"), Some(0), Some(0), Some(0)), "{s}");
    assert_ne!(e["a"], e["b"]);
    let n = e["differing"].as_u64().unwrap();
    assert!(n > 0 && n <= 4 * 256 * 3, "border pixels only: {n}");
    assert!(s["last_agreed"].as_str().unwrap().contains("band_zero_u8"), "{s}");
    assert_eq!(s["sequences_diverge"], true, "band_box_clamp replaces band_box in every frame");
    assert_eq!(s["sequence_divergences"].as_array().unwrap().len(), 3, "{s}");
}

#[test]
fn filter_border_rows_is_named_by_the_mode_filter_kernel() {
    let c = clips();
    let (a, b) = (c.twin("dis.yuv", "--features band_mask"), c.twin("dis.yuv", "--features band_mask --defect filter-border-rows"));
    let (code, s, out) = bisect(&["--run", &a, &b, "--types", &sig()], &c.out("r"));
    assert_eq!(code, 1, "{out}");
    let f = &s["first_divergence"];
    assert_eq!((f["a"]["kernel"].as_str(), f["b"]["kernel"].as_str()), (Some("band_mode_u8"), Some("band_mode_rows_u8")), "{s}");
    // The mode filter reduces into its u64 accumulators (parameter 5): no per-pixel
    // output buffer exists, so the element is the first accumulator that differs.
    assert_eq!(f["buffer"]["params"], serde_json::json!([5]), "{s}");
    assert_eq!(f["element"]["type"], "u64", "{s}");
    assert_ne!(f["element"]["a"], f["element"]["b"]);
    assert!(s["last_agreed"].as_str().unwrap().contains("band_box"), "{s}");
}

#[test]
fn a_block_order_dependent_sum_is_named_with_both_values_and_a_clean_twin_agrees() {
    let c = clips();
    let run =
        |extra: &str, order: &str| format!("EMU_CUDA_BLOCK_ORDER={order} {}", c.twin("dis40.yuv", &format!("--features topk {extra}")));
    let (code, s, out) = bisect(
        &["--run", &run("--defect atomic-order", "forward"), &run("--defect atomic-order", "reverse"), "--types", &sig()],
        &c.out("r1"),
    );
    assert_eq!(code, 1, "{out}");
    let f = &s["first_divergence"];
    assert_eq!(f["a"]["kernel"], "topk_sum_float_u8", "{s}");
    assert_eq!(f["same_kernel"], true);
    assert_eq!(f["element"]["type"], "f32", "{s}");
    assert_ne!(f["element"]["a"], f["element"]["b"]);
    assert_eq!(s["sequences_diverge"], false);
    let (code, s, out) = bisect(&["--run", &run("", "forward"), &run("", "reverse")], &c.out("r2"));
    assert_eq!(code, 0, "{out}");
    assert_eq!(s["verdict"], "agree");
    assert!(s["compared"].as_u64().unwrap() >= 10, "{s}");
}

#[test]
fn per_frame_mode_finds_the_defect_in_every_frame() {
    let c = clips();
    let (a, b) = (c.twin("dis.yuv", "--features sse,band_mask"), c.twin("dis.yuv", "--features sse,band_mask --defect clamp-borders"));
    let (code, s, out) = bisect(&["--run", &a, &b, "--per-frame"], &c.out("r"));
    assert_eq!(code, 1, "{out}");
    let frames = s["frames"].as_array().unwrap();
    assert_eq!(frames.len(), 3, "one frame per picture (host-to-device after device-to-host): {s}");
    for f in frames {
        assert!(f["first"].as_str().unwrap().contains("band_box_clamp"), "{f}");
    }
    assert!(std::fs::read_to_string(c.out("r/frames.csv")).unwrap().lines().count() == 4);
    // --frames limits the trace itself.
    let (code, s, _) = bisect(&["--run", &a, &b, "--frames", "1"], &c.out("r1"));
    assert_eq!(code, 1);
    assert_eq!(s["sequence_divergences"].as_array().unwrap().len(), 1, "{s}");
    // So does --kernels: only sse's launches are recorded (they agree); the copies still
    // are, and the mask's results, copied back, are what differs first.
    let (code, s, _) = bisect(&["--run", &a, &b, "--kernels", "sse_*"], &c.out("r2"));
    assert_eq!(code, 1);
    let end = &s["traces"]["a"]["end"];
    assert!(end["traced_launches"].as_u64().unwrap() < end["launches"].as_u64().unwrap(), "{end}");
    assert!(!std::fs::read_to_string(c.out("r2/traces/a.trace")).unwrap().contains("\"kernel\":\"band_"));
    assert!(s["first_divergence"]["a"]["copy"].is_u64(), "{s}");
    assert_eq!(s["sequences_diverge"], false);
}

#[test]
fn different_launch_sequences_are_reported_and_realigned() {
    let c = clips();
    // B runs band_mask between sse and topk: its launches are extra, and topk's pair
    // up again after them.
    let (a, b) = (c.twin("dis.yuv", "--features sse,topk --frames 1"), c.twin("dis.yuv", "--features sse,band_mask,topk --frames 1"));
    let (code, s, out) = bisect(&["--run", &a, &b], &c.out("r"));
    assert_eq!(code, 1, "{out}");
    assert_eq!(s["sequences_diverge"], true);
    let d = &s["sequence_divergences"][0];
    assert!(d["a"].as_array().unwrap().is_empty(), "{d}");
    let only_b: Vec<&str> = d["b"].as_array().unwrap().iter().map(|x| x.as_str().unwrap()).collect();
    assert!(only_b.iter().any(|x| x.contains("band_zero_u8")) && only_b.iter().any(|x| x.contains("band_mode_u8")), "{only_b:?}");
    let csv = std::fs::read_to_string(c.out("r/launches.csv")).unwrap();
    let topk_pair = csv
        .lines()
        .find(|l| l.contains("topk_hist_u8") && l.matches("topk_hist_u8").count() == 2)
        .expect("topk launches paired after the extra ones");
    assert!(topk_pair.ends_with("agree"), "{topk_pair}");
}

#[test]
fn ptx_mode_agrees_with_twin_mode_on_the_fixture() {
    let c = clips();
    let cache = c.out("cache");
    let (a, b) = (
        format!("EMU_CUDA_EXEC=twin {}", c.twin("dis.yuv", "--features sse,band_mask --frames 2")),
        format!("SIMTWIN_CACHE_DIR={} EMU_CUDA_EXEC=ptx {}", cache.display(), c.twin("dis.yuv", "--features sse,band_mask --frames 2")),
    );
    let (code, s, out) = bisect(&["--run", &a, &b], &c.out("r"));
    assert_eq!(code, 0, "{out}");
    assert_eq!(s["traces"]["b"]["settings"]["EMU_CUDA_EXEC"], "ptx");
    assert!(s["compared"].as_u64().unwrap() >= 10, "{s}");
}

#[test]
fn a_pass_through_trace_agrees_with_the_emulated_one() {
    let c = clips();
    let o = Command::new("python3")
        .arg(root().join("scripts/h200/make-standin"))
        .arg(simtwin().join("lib"))
        .arg(c.out("real"))
        .output()
        .unwrap();
    assert!(o.status.success(), "make-standin: {}", String::from_utf8_lossy(&o.stderr));
    let real = c.out("real/libcuda.so.1");
    let a = c.twin("dis.yuv", "--frames 2");
    let b = format!("EMU_CUDA_REAL={} {}", real.display(), c.twin("dis.yuv", "--frames 2"));
    let (code, s, out) = bisect(&["--run", &a, &b], &c.out("r"));
    assert_eq!(code, 0, "{out}");
    assert!(s["traces"]["b"]["driver"].as_str().unwrap().starts_with("pass-through"), "{s}");
    // Module globals the program looked up (cuModuleGetGlobal) are hashed too.
    let bt = std::fs::read_to_string(c.out("r/traces/b.trace")).unwrap();
    assert!(bt.contains("\"name\":\"g3:c_topk\""), "c_topk (looked up by the twin) is in the pass-through trace");
    let end = &s["traces"]["b"]["end"];
    assert!(end["copy_back_us"].as_u64().unwrap() > 0 && end["traced_launches"].as_u64().unwrap() > 10, "{end}");
    // The same defect through the pass-through.
    let b = format!("EMU_CUDA_REAL={} {}", real.display(), c.twin("dis.yuv", "--frames 2 --defect clamp-borders"));
    let (code, s, _) = bisect(&["--run", &a, &b, "--types", &sig()], &c.out("r2"));
    assert_eq!(code, 1);
    assert_eq!(s["first_divergence"]["b"]["kernel"], "band_box_clamp");
    assert_eq!(s["first_divergence"]["element"]["type"], "u8");
}

#[test]
fn broken_or_missing_traces_are_input_errors() {
    let c = clips();
    let good = c.out("good.trace");
    let cmd = c.twin("dis.yuv", "--features sse --frames 1");
    // A good trace, made by hand the way a user would.
    let mut words = cmd.split_whitespace();
    let (k, l) = (words.next().unwrap(), words.next().unwrap());
    let st = Command::new(words.next().unwrap())
        .args(words)
        .env(k.split_once('=').unwrap().0, k.split_once('=').unwrap().1)
        .env(l.split_once('=').unwrap().0, l.split_once('=').unwrap().1)
        .env("EMU_CUDA_TRACE", &good)
        .status()
        .unwrap();
    assert!(st.success());
    let g = good.display().to_string();
    let (code, s, _) = bisect(&[&g, &g], &c.out("same"));
    assert_eq!((code, s["verdict"].as_str()), (0, Some("agree")));

    let cases: Vec<(&str, String, &str)> = vec![
        ("missing", "/nonexistent/x.trace".into(), "cannot read trace"),
        ("garbage", "not json at all\n".into(), "not a simtwin trace header"),
        (
            "schema",
            "{\"schema\":\"simtwin-trace/9\",\"driver\":\"x\",\"hash\":\"st64\",\"pid\":1,\"frame_rule\":\"x\"}\n".into(),
            "simtwin-trace/9",
        ),
        (
            "cut",
            {
                let t = std::fs::read_to_string(&good).unwrap();
                t[..t.len() - 40].to_string()
            },
            "cut short",
        ),
        ("empty", String::new(), "empty file"),
    ];
    for (name, text, want) in cases {
        let path = if name == "missing" {
            text.clone()
        } else {
            let p = c.out(&format!("{name}.trace"));
            std::fs::write(&p, &text).unwrap();
            p.display().to_string()
        };
        let (code, s, out) = bisect(&[&g, &path], &c.out(name));
        assert_eq!(code, 2, "{name}: {out}");
        assert_eq!(s["verdict"], "error", "{name}");
        assert!(s["error"].as_str().unwrap().contains(want), "{name}: {}", s["error"]);
    }
    // parity sets the trace variables itself: a command that sets them is refused.
    let o = Command::new(env!("CARGO_BIN_EXE_parity"))
        .args(["bisect", "--run", &format!("EMU_CUDA_TRACE_FRAMES=2 {cmd}"), &cmd, "--out"])
        .arg(c.out("bad"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", String::from_utf8_lossy(&o.stderr));
    // A bad limit is refused by the driver's cuInit, with a message, not ignored; so is a
    // limit without EMU_CUDA_TRACE.
    for (env, want) in [
        (vec![("EMU_CUDA_TRACE", good.display().to_string()), ("EMU_CUDA_TRACE_FRAMES", "x".into())], "EMU_CUDA_TRACE_FRAMES=x: expected"),
        (
            vec![("EMU_CUDA_TRACE", good.display().to_string()), ("EMU_CUDA_TRACE_DUMP", "seven".into())],
            "EMU_CUDA_TRACE_DUMP=seven: expected",
        ),
        (vec![("EMU_CUDA_TRACE_KERNELS", "sse*".into())], "EMU_CUDA_TRACE (the trace file) is not set"),
    ] {
        let o = Command::new(simtwin().join("bin/simtwin-twin"))
            .args(["--backend", "cuda", "--reference"])
            .arg(c.out("ref.yuv"))
            .arg("--distorted")
            .arg(c.out("dis.yuv"))
            .args(["--width", "256", "--height", "256", "--bitdepth", "8", "--frames", "1", "--features", "sse", "--output"])
            .arg(c.out("x.json"))
            .env("EMU_CUDA_KERNELS", simtwin().join("kernels"))
            .env("LD_LIBRARY_PATH", simtwin().join("lib"))
            .envs(env)
            .output()
            .unwrap();
        assert!(!o.status.success(), "{want}");
        assert!(String::from_utf8_lossy(&o.stderr).contains(want), "{want}: {}", String::from_utf8_lossy(&o.stderr));
    }
}
