//! Host-compiled device functions through the replay engine, on small ranges with
//! answers established independently (a brute-force loop over MPFR for every input).

use parity::replay::engine::{self, Options};
use parity::replay::host;
use parity::replay::reference::RefFn;
use std::path::{Path, PathBuf};

mod support;

fn write_cu(dir: &Path, name: &str, body: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, body).unwrap();
    p
}

fn compile(dir: &Path, src: &Path, func: &str, defines: &[String]) -> host::HostBatch {
    let lib = host::compile(src, func, defines, &[], &dir.join(func)).expect("host compile");
    host::HostBatch::load(&lib).unwrap()
}

fn opts() -> Options {
    Options { chunk: 4096, ..Default::default() }
}

/// Brute force: every input's result against MPFR directly (no fast path).
fn brute_force(f: &dyn Fn(f32) -> f32, r: &RefFn, from: u32, to: u32) -> Vec<u32> {
    (from..to)
        .filter(|&b| {
            let x = f32::from_bits(b);
            let got = f(x);
            let want = r.mpfr_f32(x);
            !(got.to_bits() == want.to_bits() || (got.is_nan() && want.is_nan()))
        })
        .collect()
}

#[test]
fn sqrtf_is_correctly_rounded() {
    let d = tempfile::tempdir().unwrap();
    let src = write_cu(d.path(), "s.cu", "#include <math.h>\n__device__ float my_sqrt(float x) { return sqrtf(x); }\n");
    let f = compile(d.path(), &src, "my_sqrt", &[]);
    for (a, b) in [(0x0000_0001u32, 0x0001_0000u64), (0x3f00_0000, 0x3f04_0000), (0x7f7c_0000, 0x7f80_0000)] {
        let o = engine::replay(&f, &RefFn::Sqrt, a, b, &opts(), "sqrt");
        assert_eq!(o.inputs, b - a as u64);
        assert_eq!(o.misrounded, 0, "sqrtf misrounds in [0x{a:08x}, 0x{b:08x})");
    }
}

#[test]
fn deliberately_wrong_function_counts_match_brute_force() {
    let d = tempfile::tempdir().unwrap();
    // log2 scaled by (1 + 2^-22): off by about 0.3 ulp relative, misrounds a known subset
    let src = write_cu(
        d.path(),
        "w.cu",
        "#include <math.h>\n__device__ float off_log2(float x) { return __fmul_rn((float)log2((double)x), 1.00000024f); }\n",
    );
    let f = compile(d.path(), &src, "off_log2", &[]);
    let rust = |x: f32| ((x as f64).log2() as f32) * f32::from_bits(0x3f80_0002); // 1.00000024f
    let (a, b) = (0x4000_0000u32, 0x4000_0000u32 + 40_000);
    let want = brute_force(&rust, &RefFn::Log2, a, b);
    assert!(want.len() > 1000, "the planted error should misround many inputs ({})", want.len());
    let o = engine::replay(&f, &RefFn::Log2, a, b as u64, &opts(), "off");
    assert_eq!(o.misrounded as usize, want.len());
    let listed: Vec<u32> = o.list.iter().map(|m| m.input).collect();
    assert_eq!(listed, want);
    for m in &o.list {
        // the factor is 1 + 2^-22: 2 ulps at the bottom of a binade, less above
        assert!(m.ulp_distance == 1 || m.ulp_distance == 2, "0x{:08x}: {} ulps", m.input, m.ulp_distance);
        let d = m.ulp_distance as f64;
        assert!(m.ulp_error > d - 0.5 && m.ulp_error < d + 0.5, "ulp error {} vs distance {}", m.ulp_error, d);
    }

    // x * 0.9999f against scale:0.9999 is exact-product rounding: correct; against 'x' it is not.
    let src = write_cu(d.path(), "m.cu", "__device__ float shrink(float x) { return __fmul_rn(x, 0.9999f); }\n");
    let f = compile(d.path(), &src, "shrink", &[]);
    let o = engine::replay(&f, &RefFn::Scale(0.9999), 0x3f80_0000, 0x3f80_0000 + 65536, &opts(), "shrink");
    assert_eq!(o.misrounded, 0);
    let o = engine::replay(&f, &RefFn::Scale(1.0), 0x3f80_0000, 0x3f80_0000 + 65536, &opts(), "shrink");
    assert_eq!(o.misrounded, 65536, "every input changes");
    // --max-list truncation keeps the exact count
    let o = engine::replay(&f, &RefFn::Scale(1.0), 0x3f80_0000, 0x3f80_0000 + 65536, &Options { max_list: 100, ..opts() }, "shrink");
    assert_eq!(o.misrounded, 65536);
    assert_eq!(o.list.len(), 100);
    assert!(o.list_truncated);
}

#[test]
fn subnormal_and_overflow_results() {
    let d = tempfile::tempdir().unwrap();
    let src = write_cu(
        d.path(),
        "so.cu",
        "#include <float.h>\n\
         __device__ float half(float x) { return __fmul_rn(x, 0.5f); }\n\
         __device__ float half_ftz(float x) { float y = __fmul_rn(x, 0.5f); return y < FLT_MIN ? 0.0f : y; }\n\
         __device__ float twice(float x) { return __fmul_rn(x, 2.0f); }\n\
         __device__ float twice_sat(float x) { float y = __fmul_rn(x, 2.0f); return y > FLT_MAX ? FLT_MAX : y; }\n",
    );
    // [2^-126, 2^-125): halves are subnormal; the flushing variant misrounds every one
    let (a, b) = (0x0080_0000u32, 0x0080_0000u32 + 50_000);
    let o = engine::replay(&compile(d.path(), &src, "half", &[]), &RefFn::Scale(0.5), a, b as u64, &opts(), "half");
    assert_eq!(o.misrounded, 0);
    let o = engine::replay(&compile(d.path(), &src, "half_ftz", &[]), &RefFn::Scale(0.5), a, b as u64, &opts(), "ftz");
    assert_eq!(o.misrounded, 50_000);
    // subnormal inputs: x/2 rounds to even; half is exact IEEE, so still 0 misrounded
    let o = engine::replay(&compile(d.path(), &src, "half", &[]), &RefFn::Scale(0.5), 1, 0x0002_0000, &opts(), "half");
    assert_eq!(o.misrounded, 0);
    // [2^127, 2^128): doubling overflows to inf; saturating misrounds all of them
    let o = engine::replay(&compile(d.path(), &src, "twice", &[]), &RefFn::Scale(2.0), 0x7f7f_0000, 0x7f80_0000, &opts(), "twice");
    assert_eq!(o.misrounded, 0);
    let o = engine::replay(&compile(d.path(), &src, "twice_sat", &[]), &RefFn::Scale(2.0), 0x7eff_f000, 0x7f00_1000, &opts(), "sat");
    assert_eq!(o.misrounded, 0x1000, "only the inputs >= 2^127 overflow");
    assert_eq!(o.list[0].input, 0x7f00_0000);
}

#[test]
fn run_replay_writes_reports_and_exit_code() {
    let d = tempfile::tempdir().unwrap();
    let src = write_cu(d.path(), "s.cu", "__device__ float shrink(float x) { return __fmul_rn(x, 0.9999f); }\n");
    let out = d.path().join("rep");
    let args = parity::replay::ReplayArgs {
        to: Some("0x3f800100".into()),
        chunk: None,
        max_list: 1000,
        track_max_error: false,
        ..replay_args(&src, "shrink", out.clone())
    };
    assert_eq!(parity::replay::run_replay(&args).unwrap(), 1);
    let s: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    assert_eq!(s["inputs"], 256);
    assert_eq!(s["misrounded"], 256);
    assert!(s["mpfr_decided"].is_u64());
    assert!(s["seconds"].is_f64());
    assert_eq!(s["families"]["count"], 256);
    let csv = std::fs::read_to_string(out.join("misrounded.csv")).unwrap();
    assert_eq!(csv.lines().count(), 257);
    assert!(csv.lines().nth(1).unwrap().starts_with("0x3f800000,1e0,"));
    // without --require-correct-rounding: exit 0
    let a2 = parity::replay::ReplayArgs { require_correct_rounding: false, ..args };
    assert_eq!(parity::replay::run_replay(&a2).unwrap(), 0);
}

/// `parity replay --source SRC --function FUNC` against `scale:1.0` over 4096 inputs from
/// 1.0, requiring correct rounding, reports in `out`.
fn replay_args(src: &Path, func: &str, out: PathBuf) -> parity::replay::ReplayArgs {
    parity::replay::ReplayArgs {
        source: Some(src.to_path_buf()),
        function: Some(func.into()),
        reference: "scale:1.0".into(),
        from: Some("1.0".into()),
        to: Some("0x3f801000".into()),
        out: Some(out),
        require_correct_rounding: true,
        table: None,
        defines: vec![],
        includes: vec![],
        device: "host".into(),
        builtin: None,
        image: None,
        emit_image: None,
        nvcc_flags: vec![],
        arch: "sm_90".into(),
        chunk: Some(300),
        max_list: 100_000,
        track_max_error: true,
        quiet: true,
        threads: Some(2),
        shard: None,
        device_math: Default::default(),
    }
}

/// The report files of a replay or libm run.
const REPLAY_REPORTS: &[&str] = &["summary.json", "misrounded.csv", "junit.xml"];

#[test]
fn replay_and_libm_in_shards_merge_into_the_unsharded_reports() {
    let d = tempfile::tempdir().unwrap();
    // misrounds about one input in five: several families over the range
    let src =
        write_cu(d.path(), "m.cu", "__device__ float f(float x) { return (__float_as_uint(x) % 5u == 0u) ? __fmul_rn(x, 0.9999f) : x; }\n");
    let replay = |out: PathBuf, shard: Option<&str>| parity::replay::ReplayArgs {
        shard: shard.map(|s| parity::shard::parse(s).unwrap()),
        ..replay_args(&src, "f", out)
    };
    assert_eq!(parity::replay::run_replay(&replay(d.path().join("full"), None)).unwrap(), 1);
    for k in 1..=3 {
        parity::replay::run_replay(&replay(d.path().join(format!("s{k}")), Some(&format!("{k}/3")))).unwrap();
    }
    let s2: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(d.path().join("s2/summary.json")).unwrap()).unwrap();
    assert_eq!((s2["from"].as_str(), s2["to"].as_str()), (Some("0x3f800555"), Some("0x3f800aaa")), "a contiguous third of the range");
    let merge = |dirs: &[&str], out: &str| {
        parity::merge::run_merge(&parity::merge::MergeArgs {
            dirs: dirs.iter().map(|x| d.path().join(x)).collect(),
            out: d.path().join(out),
        })
    };
    assert_eq!(merge(&["s2", "s3", "s1"], "merged").unwrap(), 1);
    let roots = [d.path().join("full"), d.path().join("merged")];
    let roots: Vec<&Path> = roots.iter().map(|p| p.as_path()).collect();
    let full = support::reports(&d.path().join("full"), REPLAY_REPORTS, &roots);
    assert_eq!(full.len(), 3);
    support::assert_same_reports(&full, &support::reports(&d.path().join("merged"), REPLAY_REPORTS, &roots));
    let m: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(d.path().join("merged/summary.json")).unwrap()).unwrap();
    assert_eq!((m["inputs"].as_u64(), m["misrounded"].as_u64()), (Some(4096), Some(819)), "{m}");
    // a shard of another range is another run; a missing shard is named
    parity::replay::run_replay(&parity::replay::ReplayArgs {
        to: Some("0x3f802000".into()),
        ..replay(d.path().join("other"), Some("3/3"))
    })
    .unwrap();
    assert!(merge(&["s1", "s2", "other"], "m2").unwrap_err().to_string().contains("shards of different runs"));
    assert!(merge(&["s1", "s3"], "m3").unwrap_err().to_string().contains("shard(s) 2/3"));

    // libm: the host's log2f over 2^13 inputs above 1, in 2 shards
    let libm = |out: PathBuf, shard: Option<&str>| parity::replay::LibmArgs {
        function: "log2f".into(),
        from: Some("1.0".into()),
        to: Some("0x3f802000".into()),
        out: Some(out),
        library: "libm.so.6".into(),
        require_correct_rounding: false,
        max_list: 1000,
        chunk: None,
        quiet: true,
        threads: Some(2),
        shard: shard.map(|s| parity::shard::parse(s).unwrap()),
    };
    assert_eq!(parity::replay::run_libm(&libm(d.path().join("lfull"), None)).unwrap(), 0);
    for k in 1..=2 {
        parity::replay::run_libm(&libm(d.path().join(format!("l{k}")), Some(&format!("{k}/2")))).unwrap();
    }
    assert_eq!(merge(&["l1", "l2"], "lmerged").unwrap(), 0);
    let roots = [d.path().join("lfull"), d.path().join("lmerged")];
    let roots: Vec<&Path> = roots.iter().map(|p| p.as_path()).collect();
    support::assert_same_reports(
        &support::reports(&d.path().join("lfull"), REPLAY_REPORTS, &roots),
        &support::reports(&d.path().join("lmerged"), REPLAY_REPORTS, &roots),
    );
}
