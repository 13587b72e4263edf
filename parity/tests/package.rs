//! simtwin without the repository: scripts/package's tarball installed into an empty
//! directory, then used from there the way a CUDA project's CI uses it (kernels-host
//! builds twins, `simtwin run` runs a driver-API client and `parity frames`), and the
//! example GitHub workflow run step by step on this machine (scripts/ci-local).
//! They need scripts/build's layout (target/simtwin) and the PyPI nvcc of scripts/setup,
//! and FAIL, never skip, without them.

mod support;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;
use support::{expect_code, read_json, text};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf()
}

fn nvcc() -> String {
    let o = Command::new(root().join("scripts/nvcc-path")).output().unwrap();
    assert!(o.status.success(), "nvcc not found (run scripts/setup): {}", text(&o));
    String::from_utf8_lossy(&o.stdout).trim().to_string()
}

/// The tarball, built once for the tests of this file from target/simtwin.
fn tarball() -> &'static Path {
    static T: OnceLock<(tempfile::TempDir, PathBuf)> = OnceLock::new();
    &T.get_or_init(|| {
        for need in ["bin/simtwin", "bin/parity", "bin/kernels-host", "bin/simtwin-twin", "bin/fixtures", "lib/libcuda.so.1"] {
            assert!(root().join("target/simtwin").join(need).exists(), "target/simtwin/{need} is missing: run scripts/build first");
        }
        let d = tempfile::tempdir().unwrap();
        let o = Command::new(root().join("scripts/package"))
            .args(["--no-build", "--version", "v0.0.0-test", "--out"])
            .arg(d.path())
            .output()
            .unwrap();
        expect_code(&o, 0);
        let t = PathBuf::from(String::from_utf8_lossy(&o.stdout).trim());
        assert_eq!(t.file_name().unwrap().to_string_lossy(), format!("simtwin-v0.0.0-test-{}-linux.tar.gz", std::env::consts::ARCH));
        let sum = std::fs::read_to_string(t.with_file_name(format!("{}.sha256", t.file_name().unwrap().to_string_lossy()))).unwrap();
        assert!(sum.ends_with(&format!("  {}\n", t.file_name().unwrap().to_string_lossy())), "{sum}");
        (d, t)
    })
    .1
}

/// A process with none of simtwin's variables, in `dir` (outside the repository).
fn clean(prog: impl AsRef<std::ffi::OsStr>, dir: &Path) -> Command {
    let mut c = Command::new(prog);
    c.current_dir(dir);
    for (k, _) in std::env::vars() {
        if k.starts_with("EMU_CUDA_") || k.starts_with("SIMTWIN_") || k == "LD_LIBRARY_PATH" {
            c.env_remove(k);
        }
    }
    c
}

fn run(c: &mut Command) -> Output {
    c.output().unwrap()
}

fn install(into: &Path) -> PathBuf {
    std::fs::create_dir_all(into).unwrap();
    expect_code(&run(Command::new("tar").arg("-xzf").arg(tarball()).arg("-C").arg(into).arg("--strip-components=1")), 0);
    into.to_path_buf()
}

#[test]
fn the_package_is_relocatable_and_complete() {
    let tmp = tempfile::tempdir().unwrap();
    let p = install(&tmp.path().join("opt/simtwin"));
    for f in [
        "bin/simtwin",
        "bin/parity",
        "bin/kernels-host",
        "lib/libcuda.so.1",
        "lib/libsimtwin_crlibm.so",
        "lib/libcudart.so.13",
        "lib/libnvJitLink.so.13",
        "include/cuda.h",
        "include/simtwin/prelude.h",
        "share/simtwin/README.md",
        "share/simtwin/VERSION",
        "share/simtwin/MANIFEST",
        "share/simtwin/action.yml",
        "share/simtwin/examples/ci/github-actions.yml",
    ] {
        assert!(p.join(f).is_file(), "{f} missing from the package");
    }
    assert_eq!(std::fs::read_link(p.join("lib/libcuda.so")).unwrap(), Path::new("libcuda.so.1"));
    let version = std::fs::read_to_string(p.join("share/simtwin/VERSION")).unwrap();
    assert!(version.starts_with("simtwin v0.0.0-test\ncommit ") && version.contains("\nglibc 2."), "{version}");
    // Nothing names this machine's source tree or build directory; no search paths.
    let needle = root().display().to_string();
    let mut files = vec![p.clone()];
    let mut checked = 0;
    while let Some(d) = files.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let path = e.path();
            let ft = e.file_type().unwrap();
            if ft.is_dir() {
                files.push(path);
            } else if ft.is_file() {
                let bytes = std::fs::read(&path).unwrap();
                assert!(!bytes.windows(needle.len()).any(|w| w == needle.as_bytes()), "{} names the build tree {needle}", path.display());
                checked += 1;
            }
        }
    }
    assert!(checked > 30, "{checked} files");
    for f in ["bin/simtwin", "bin/parity", "bin/kernels-host", "lib/libcuda.so.1"] {
        let o = run(Command::new("readelf").arg("-d").arg(p.join(f)));
        assert!(!text(&o).contains("RPATH") && !text(&o).contains("RUNPATH"), "{f}: {}", text(&o));
    }
    // Every file is in the MANIFEST with its hash.
    let manifest = std::fs::read_to_string(p.join("share/simtwin/MANIFEST")).unwrap();
    let o = run(clean("sha256sum", &p).args(["--quiet", "-c", "share/simtwin/MANIFEST"]));
    expect_code(&o, 0);
    assert!(manifest.lines().any(|l| l.ends_with("  ./bin/simtwin")), "{manifest}");
    // The tools find each other from where they are: kernels-host its headers, parity
    // and simtwin the driver (moved once more, to another directory).
    let moved = tmp.path().join("elsewhere/simtwin");
    std::fs::create_dir_all(moved.parent().unwrap()).unwrap();
    std::fs::rename(&p, &moved).unwrap();
    let o = run(clean(moved.join("bin/parity"), tmp.path()).args(["driver-info", "--json"]).env("LD_LIBRARY_PATH", moved.join("lib")));
    expect_code(&o, 0);
    let info: serde_json::Value = serde_json::from_str(String::from_utf8_lossy(&o.stdout).trim()).unwrap();
    assert_eq!(info["path"], moved.join("lib/libcuda.so.1").canonicalize().unwrap().display().to_string());
    let o = run(clean(moved.join("bin/simtwin"), tmp.path()).args(["env", "--format", "json", "--report", "r"]));
    expect_code(&o, 0);
    let env: serde_json::Value = serde_json::from_str(&String::from_utf8_lossy(&o.stdout)).unwrap();
    assert_eq!(env["SIMTWIN_DIR"], moved.canonicalize().unwrap().display().to_string(), "{env}");
}

#[test]
fn from_the_install_a_driver_api_client_and_parity_frames_run_through_simtwin_run() {
    let tmp = tempfile::tempdir().unwrap();
    let p = install(&tmp.path().join("inst"));
    let w = tmp.path().join("work");
    std::fs::create_dir_all(&w).unwrap();
    let nvcc = nvcc();
    let ex = root().join("examples/cuda-project");
    // A user's project: nvcc builds the fatbin, cc links the client with -lcuda against
    // the install's lib/libcuda.so, the install's kernels-host builds the twins.
    let make = |target: &str| {
        let o = run(clean("make", &w)
            .arg("-f")
            .arg(ex.join("Makefile"))
            .args([target, "BUILD=build"])
            .arg(format!("NVCC={nvcc}"))
            .arg(format!("KERNELS_HOST={}", p.join("bin/kernels-host").display()))
            .env("SIMTWIN_DIR", &p));
        expect_code(&o, 0);
        o
    };
    make("all");
    let o = make("twins");
    assert!(text(&o).contains("build/simtwin-kernels/saxpy.so (2 kernels"), "{}", text(&o));
    let o = run(clean(p.join("bin/simtwin"), &w).args([
        "run",
        "--kernels",
        "build/simtwin-kernels",
        "--report",
        "r",
        "--",
        "build/saxpy_test",
        "build/saxpy.fatbin",
        "5000",
    ]));
    expect_code(&o, 0);
    assert!(text(&o).contains("saxpy_test n=5000: ok"), "{}", text(&o));
    let s = read_json(&w.join("r/summary.json"));
    assert_eq!(s["processes"]["total"], 1);
    assert_eq!(s["launches"]["kernels"]["saxpy"]["count"], 1);
    assert_eq!(s["launches"]["kernels"]["block_sum"]["count"], 1);
    let lib = p.join("lib").canonicalize().unwrap().display().to_string();
    assert!(
        s["settings"]["LD_LIBRARY_PATH"].as_str().unwrap().starts_with(&format!("{lib}:"))
            || s["settings"]["LD_LIBRARY_PATH"] == lib.as_str(),
        "{s}"
    );
    assert_eq!(s["settings"]["SIMTWIN_DIR"], p.canonicalize().unwrap().display().to_string());

    // parity frames from the install on the fixtures' twin, whose kernels the installed
    // kernels-host builds; simtwin run's summary covers the CUDA extractor it ran.
    let cuda = root().join("fixtures/cuda");
    let inc = root().join("fixtures/twin/include");
    let kh = |files: &[&str], flags: &[&str]| {
        let mut c = clean(p.join("bin/kernels-host"), &w);
        c.args(["build", "-o", "fixture-kernels", "-I"])
            .arg(&cuda)
            .arg("-I")
            .arg(&inc)
            .args(files.iter().map(|f| cuda.join(f)))
            .env("NVCC", &nvcc);
        if !flags.is_empty() {
            c.arg("--").args(flags);
        }
        expect_code(&run(&mut c), 0);
    };
    kh(&["sse.cu", "band_mask.cu", "topk.cu", "temporal.cu"], &[]);
    kh(&["log_stat.cu"], &["--fmad=false"]);
    let fx = root().join("target/simtwin/bin/fixtures");
    expect_code(&run(clean(&fx, &w).args(["make-set", "-o", "clips", "--only", "textured-256x256-8"])), 0);
    let twin = root().join("target/simtwin/bin/simtwin-twin");
    let o = run(clean(p.join("bin/simtwin"), &w)
        .args([
            "run",
            "--kernels",
            "fixture-kernels",
            "--report",
            "r2",
            "--",
            "parity",
            "frames",
            "-r",
            "clips/textured-256x256-8.yuv",
            "-d",
            "clips/textured-256x256-8-dis.yuv",
            "-W",
            "256",
            "-H",
            "256",
            "--frames",
            "2",
            "--features",
            "sse,topk",
            "--out",
            "frames",
            "--twin",
        ])
        .arg(&twin));
    expect_code(&o, 0);
    let f = read_json(&w.join("frames/summary.json"));
    assert_eq!(f["verdict"], "parity", "{f}");
    assert_eq!(f["runs"][1]["driver"], format!("{lib}/libcuda.so.1"));
    let s = read_json(&w.join("r2/summary.json"));
    assert_eq!(s["processes"]["total"], 1, "the CUDA extractor's counters, handed on by parity: {s}");
    assert!(s["launches"]["kernels"]["sse_row_u8"]["count"].as_u64().unwrap() > 0, "{s}");
    assert!(w.join("frames/junit.xml").is_file() && w.join("r2/junit.xml").is_file());
}

/// scripts/ci-local on `workflow` in the workspace `ws`, this repository's action given
/// the tarball.
fn ci_local(workflow: &str, ws: &Path, artifacts: &Path, temp: &Path) -> Output {
    run(clean(root().join("scripts/ci-local"), ws)
        .arg(workflow)
        .arg("--workspace")
        .arg(ws)
        .arg("--artifacts")
        .arg(artifacts)
        .arg("--temp")
        .arg(temp)
        .arg("--action")
        .arg(format!("your-org/simtwin={},tarball={}", root().display(), tarball().display())))
}

#[test]
fn the_example_workflow_runs_here_step_by_step() {
    let tmp = tempfile::tempdir().unwrap();
    let ws = tmp.path().join("workspace");
    std::fs::create_dir_all(&ws).unwrap();
    expect_code(&run(Command::new("cp").arg("-r").arg(root().join("examples")).arg(&ws)), 0);
    let arts = tmp.path().join("artifacts");
    let o = ci_local("examples/ci/github-actions.yml", &ws, &arts, &tmp.path().join("runner-temp"));
    expect_code(&o, 0);
    let t = text(&o);
    assert!(t.contains("saxpy_test n=100000: ok") && t.contains("ci-local: every job succeeded"), "{t}");
    assert!(t.contains("--- step summary of cuda-tests:\n## simtwin run: PASS"), "{t}");
    let s = read_json(&arts.join("simtwin-report/summary.json"));
    assert_eq!(s["processes"]["total"], 3, "make test runs three processes: {s}");
    assert_eq!(s["launches"]["total"], 6);
    assert_eq!(s["settings"]["EMU_CUDA_HAZARDS"], "error", "the action's hazards input reached the tests: {s}");
    assert!(arts.join("simtwin-report/junit.xml").is_file());
}

/// The sharded examples (the GitHub matrix workflow run by scripts/ci-local, the Slurm
/// array script run once per task) give the report of an unsharded run, file by file.
#[test]
fn the_sharded_examples_merge_into_the_unsharded_report() {
    let tmp = tempfile::tempdir().unwrap();
    let ws = tmp.path().join("workspace");
    std::fs::create_dir_all(&ws).unwrap();
    expect_code(&run(Command::new("cp").arg("-r").arg(root().join("examples")).arg(&ws)), 0);
    let (arts, temp) = (tmp.path().join("artifacts"), tmp.path().join("runner-temp"));
    let o = ci_local("examples/ci/github-actions-sharded.yml", &ws, &arts, &temp);
    expect_code(&o, 0);
    let t = text(&o);
    assert!(t.contains("=== job shard (3): success") && t.contains("=== job merge: success"), "{t}");
    let merged = read_json(&arts.join("frames-report/summary.json"));
    assert_eq!((merged["totals"]["cells"].as_u64(), merged["totals"]["parity"].as_u64()), (Some(4), Some(4)), "{merged}");
    for k in 1..=3 {
        assert_eq!(read_json(&arts.join(format!("frames-shard-{k}/shard.json")))["shard"]["index"], k);
    }
    // The same matrix unsharded, with the simtwin the workflow installed.
    let inst = temp.join("simtwin");
    let o = run(clean(inst.join("bin/simtwin"), &ws).args([
        "run",
        "--kernels",
        "build/simtwin-kernels",
        "--",
        "parity",
        "frames",
        "--clips",
        "build/clips/clips.csv",
        "--twin",
        "build/extractor",
        "--features",
        "sse,sad",
        "--per-feature",
        "--block-orders",
        "forward,reverse",
        "--out",
        "full",
    ]));
    expect_code(&o, 0);
    // The Slurm script, once per task of an array 1-3.
    std::fs::remove_dir_all(ws.join("shards")).unwrap();
    for k in 1..=3 {
        let o = run(clean("bash", &ws)
            .arg("examples/ci/slurm-array.sh")
            .env("SIMTWIN", &inst)
            .env("SLURM_ARRAY_TASK_ID", k.to_string())
            .env("SLURM_ARRAY_TASK_MIN", "1")
            .env("SLURM_ARRAY_TASK_COUNT", "3"));
        expect_code(&o, 0);
    }
    let o = run(clean(inst.join("bin/parity"), &ws)
        .args(["merge"])
        .args((1..=3).map(|k| format!("shards/{k}")))
        .args(["--out", "slurm-report"]));
    expect_code(&o, 0);
    let names = ["summary.json", "summary.md", "per_frame.csv", "block_orders.csv", "junit.xml", "diff.svg"];
    let dirs: Vec<PathBuf> = [
        "full",
        "shard",
        "frames-report",
        "slurm-report",
        "shards/1",
        "shards/2",
        "shards/3",
        "shards/frames-shard-1",
        "shards/frames-shard-2",
        "shards/frames-shard-3",
    ]
    .iter()
    .map(|d| ws.join(d))
    .collect();
    let roots: Vec<&Path> = dirs.iter().map(|p| p.as_path()).collect();
    let full = support::reports(&ws.join("full"), &names, &roots);
    assert_eq!(full.len(), 3 + 4 * 5, "{:?}", full.keys());
    support::assert_same_reports(&full, &support::reports(&arts.join("frames-report"), &names, &roots));
    support::assert_same_reports(&full, &support::reports(&ws.join("slurm-report"), &names, &roots));
}
