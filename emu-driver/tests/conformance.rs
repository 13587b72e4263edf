//! Ground truth for the driver's answers: builds the driver-conformance runner
//! (emu-driver/conformance/build.sh into target/conformance), runs it against the emulated
//! target/simtwin/lib/libcuda.so.1 and compares every line with the table a real H200
//! produced (emu-driver/tests/data/h200-conformance.txt). The emulated output is kept in
//! target/conformance/emulated-twin.txt (and emulated-ptx.txt) for diffing.
//!
//! A line the table does not hold yet (a case added since the H200 run, or a sub-line of
//! one) is printed as "not recorded" and does not fail: it becomes binding when a new
//! device run (emu-driver/conformance/device-run.sh) is checked in. Every line the table
//! holds must be matched exactly.
//!
//! Needs `scripts/build` to have produced target/simtwin/ (the driver and kernels-host).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf()
}

/// Builds the runner and runs it once; returns the emulated output text.
fn emulated() -> &'static str {
    static OUT: OnceLock<String> = OnceLock::new();
    OUT.get_or_init(|| run_conformance("twin", &[], None))
}

/// The emulated driver's answers in PTX mode (EMU_CUDA_EXEC=ptx: every module from its
/// PTX, no twin).
fn emulated_ptx() -> &'static str {
    static OUT: OnceLock<String> = OnceLock::new();
    OUT.get_or_init(|| run_conformance("ptx", &[], None))
}

/// PTX mode with every kernel's threads on fibers (EMU_CUDA_THREAD_LOOPS=off: no loop
/// path for barrier-uniform kernels).
fn emulated_ptx_fibers() -> &'static str {
    static OUT: OnceLock<String> = OnceLock::new();
    OUT.get_or_init(|| run_conformance("ptx", &[("EMU_CUDA_THREAD_LOOPS", "off")], None))
}

/// Runs the conformance runner on the emulated driver with the profile of the H200 the
/// table was recorded on (`h200-580`: that driver refuses PTX newer than ISA 9.0).
fn run_conformance(exec: &str, env: &[(&str, &str)], only: Option<&str>) -> String {
    {
        let root = root();
        let lib = root.join("target/simtwin/lib/libcuda.so.1");
        assert!(
            lib.exists() && root.join("target/simtwin/bin/kernels-host").exists(),
            "{} or target/simtwin/bin/kernels-host is missing: run scripts/build first",
            lib.display()
        );
        // One directory per test process (nextest runs tests in parallel processes);
        // the runner's cargo build is shared (cargo locks it).
        let out_dir = run_dir();
        let st = Command::new(root.join("emu-driver/conformance/build.sh"))
            .arg(&out_dir)
            .env("CARGO_TARGET_DIR", root.join("target/conformance/cargo-target"))
            .status()
            .expect("run emu-driver/conformance/build.sh");
        assert!(st.success(), "emu-driver/conformance/build.sh failed: {st}");
        let variant = env.iter().map(|(k, v)| format!("-{}-{v}", k.trim_start_matches("EMU_CUDA_").to_lowercase())).collect::<String>();
        let emulated = out_dir.join(format!("emulated-{exec}{variant}.txt"));
        let mut cmd = Command::new(out_dir.join("driver-conformance"));
        cmd.envs(env.iter().copied());
        if let Some(only) = only {
            cmd.arg("--only").arg(only);
        }
        let o = cmd
            .arg("--lib")
            .arg(&lib)
            .arg("--fatbin")
            .arg(out_dir.join("conformance.fatbin"))
            .arg("--fatbin-nosm90")
            .arg(out_dir.join("nosm90.fatbin"))
            .arg("--kernels")
            .arg(out_dir.join("kernels"))
            .arg("--timeout")
            .arg("60")
            .arg("--out")
            .arg(&emulated)
            .env_remove("EMU_CUDA_COUNTS")
            .env("EMU_CUDA_DEVICE", "h200-580")
            .env("EMU_CUDA_EXEC", exec)
            .output()
            .expect("run driver-conformance");
        assert!(o.status.success(), "driver-conformance failed ({}):\n{}", o.status, String::from_utf8_lossy(&o.stderr));
        let _ = std::fs::copy(&emulated, root.join(format!("target/conformance/emulated-{exec}{variant}.txt")));
        std::fs::read_to_string(&emulated).expect("read emulated.txt")
    }
}

fn run_dir() -> PathBuf {
    root().join("target/conformance").join(format!("run-{}", std::process::id()))
}

/// `name -> rest of line` for every result line (comments and blank lines skipped).
fn parse(text: &str) -> BTreeMap<String, String> {
    let mut m = BTreeMap::new();
    for l in text.lines() {
        let l = l.trim_end();
        if l.is_empty() || l.starts_with('#') {
            continue;
        }
        let (name, rest) = l.split_once(": ").unwrap_or((l, ""));
        m.insert(name.to_string(), rest.to_string());
    }
    m
}

/// The recorded table (EMU_CONFORMANCE_TABLE=FILE compares with another recording, e.g. a
/// fresh device run), or None when the file is missing.
fn table() -> (PathBuf, Option<BTreeMap<String, String>>) {
    let path = std::env::var_os("EMU_CONFORMANCE_TABLE")
        .map(PathBuf::from)
        .unwrap_or_else(|| root().join("emu-driver/tests/data/h200-conformance.txt"));
    let t = std::fs::read_to_string(&path).ok().map(|text| parse(&text));
    (path, t)
}

fn case_names() -> Vec<String> {
    emulated();
    let o = Command::new(run_dir().join("driver-conformance")).arg("--list").output().expect("driver-conformance --list");
    String::from_utf8_lossy(&o.stdout).lines().map(str::to_string).collect()
}

/// A line that records no answer: the case's process crashed, hung or exited early.
fn real_driver_failed(rest: &str) -> bool {
    ["CRASHED(", "TIMEOUT", "EXITED("].iter().any(|w| rest.starts_with(w))
}

/// tests/data/known-differences.txt: case -> (the exact emulated line, why).
fn known_differences() -> BTreeMap<String, (String, String)> {
    let text = std::fs::read_to_string(root().join("emu-driver/tests/data/known-differences.txt")).unwrap_or_default();
    text.lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .map(|l| {
            let f: Vec<&str> = l.splitn(3, " | ").collect();
            assert_eq!(f.len(), 3, "known-differences.txt: bad line {l}");
            (f[0].to_string(), (f[1].to_string(), f[2].to_string()))
        })
        .collect()
}

#[test]
fn emulated_driver_matches_h200_table() {
    matches_h200_table(emulated(), "twin");
}

#[test]
fn emulated_driver_in_ptx_mode_matches_h200_table() {
    matches_h200_table(emulated_ptx(), "ptx");
}

/// The loop path changes nothing a program can see: every case answers the same with
/// it (the default) and with every thread on a fiber.
#[test]
fn ptx_mode_answers_every_case_the_same_with_the_loop_path_off() {
    let loops = parse(emulated_ptx());
    let fibers = parse(emulated_ptx_fibers());
    assert!(loops.len() > 100, "only {} cases ran", loops.len());
    let differ: Vec<String> = loops
        .iter()
        .filter(|(k, v)| fibers.get(*k) != Some(*v))
        .map(|(k, v)| format!("{k}: loops {v} / fibers {}", fibers.get(k).map(String::as_str).unwrap_or("(missing)")))
        .collect();
    assert!(differ.is_empty() && loops.len() == fibers.len(), "{} cases differ:\n{}", differ.len(), differ.join("\n"));
}

fn matches_h200_table(text: &str, exec: &str) {
    let got = parse(text);
    let (table, expected) = table();
    let Some(expected) = expected else {
        panic!(
            "{} is missing: it is the real driver's answers, recorded on an H200 with \
             emu-driver/conformance/device-run.sh (see emu-driver/conformance/README.md; \
             the emulated answers are in target/conformance/emulated-{exec}.txt)",
            table.display()
        );
    };
    assert!(!expected.is_empty(), "{} holds no result lines", table.display());
    let known = known_differences();
    let mut mismatches = Vec::new();
    for (name, want) in &expected {
        let listed = known.get(&format!("{name}@{exec}")).or_else(|| known.get(name));
        match got.get(name) {
            Some(g) if g == want => {}
            // A documented difference (`CASE@MODE` for one execution mode only): the
            // emulated line must be exactly the one listed.
            Some(g) if listed.is_some_and(|(line, _)| line == g) => {
                eprintln!("known difference: {name}: {}", listed.map_or("", |k| k.1.as_str()));
            }
            // Twin mode runs host twins only: a module of PTX text (the ptx_* cases load
            // theirs so) has none and fails to load with CUDA_ERROR_NO_BINARY_FOR_GPU by
            // design (docs/driver.md, EMU_CUDA_EXEC); PTX mode answers those cases.
            _ if exec == "twin"
                && name.starts_with("ptx_")
                && got.get(name.split('.').next().unwrap_or(name)).is_some_and(|g| g.starts_with("209")) =>
            {
                eprintln!("twin mode: {name}: a PTX-text module has no twin (209); PTX mode answers it");
            }
            // Where the real driver crashes or hangs there is no code to match: the
            // emulated driver must answer (with codes), not crash or hang.
            Some(g) if real_driver_failed(want) && !real_driver_failed(g) && !g.is_empty() => {
                eprintln!("note: {name}: the real driver gave {want}; emulated answers {g}");
            }
            Some(g) => mismatches.push(format!("{name}\n    expected: {want}\n    got:      {g}")),
            None => mismatches.push(format!("{name}\n    expected: {want}\n    got:      (no line)")),
        }
    }
    // A listed difference that no longer differs (the emulated line now equals the
    // device's) is a stale entry: it would excuse a later regression to its old line.
    for (key, _) in known.iter() {
        let (name, mode) = key.split_once('@').map_or((key.as_str(), None), |(n, m)| (n, Some(m)));
        if mode.is_some_and(|m| m != exec) {
            continue;
        }
        if let (Some(g), Some(want)) = (got.get(name), expected.get(name)) {
            if g == want {
                let hint = if mode.is_none() { " (or list it as CASE@MODE for the mode that still differs)" } else { "" };
                mismatches.push(format!(
                    "{key}: listed in known-differences.txt, but the emulated line ({exec}) now equals the H200's: remove the entry{hint}"
                ));
            }
        }
    }
    let mut unrecorded = 0;
    for (name, g) in &got {
        if !expected.contains_key(name) {
            unrecorded += 1;
            eprintln!("not recorded: {name}: {g}");
        }
    }
    for m in &mismatches {
        eprintln!("MISMATCH {m}");
    }
    eprintln!(
        "{} recorded lines, {} differ; {unrecorded} emulated lines not recorded in {}",
        expected.len(),
        mismatches.len(),
        table.display()
    );
    assert!(
        mismatches.is_empty(),
        "{} of {} cases differ from {} (EMU_CUDA_EXEC={exec}; full emulated output: target/conformance/emulated-{exec}.txt)",
        mismatches.len(),
        expected.len(),
        table.display()
    );
}

/// Independent of the table's values: every case ran to its end under the emulated driver
/// (no crash, hang, failed setup or missing export) and the value checks passed. A line
/// equal to the recorded device line is accepted as it is (the device may lack an export
/// too), as is a line known-differences.txt lists for the case; a case the table does
/// not record yet is reported, not failed (see the top).
#[test]
fn emulated_driver_runs_every_case_cleanly() {
    let got = parse(emulated());
    let names = case_names();
    let (_, expected) = table();
    let recorded = |n: &str| expected.as_ref().is_none_or(|t| t.contains_key(n));
    // A documented difference is accepted with exactly its listed line (any mode's).
    let known = known_differences();
    let documented = |n: &str, l: &str| known.iter().any(|(k, (line, _))| (k == n || k.split('@').next() == Some(n)) && line == l);
    assert!(names.len() >= 40, "runner lists only {} cases", names.len());
    let mut bad = Vec::new();
    for n in &names {
        let problem = match got.get(n) {
            None => Some(format!("{n}: no line")),
            Some(l) if expected.as_ref().and_then(|t| t.get(n)) == Some(l) => None,
            Some(l) if documented(n, l) => None,
            Some(l) => ["CRASHED", "TIMEOUT", "SETUP", "MISSING", "EXITED", "=bad", "NO_OUTPUT"]
                .iter()
                .any(|w| l.contains(w))
                .then(|| format!("{n}: {l}")),
        };
        match problem {
            Some(p) if recorded(n) => bad.push(p),
            Some(p) => eprintln!("not recorded (not failed): {p}"),
            None => {}
        }
    }
    // Answers the driver fixes regardless of the table (docs/driver.md).
    let must = [
        ("launch_good", "0,0 values=ok"),
        ("module_nosm90", "209"),
        ("legacy_module_get_global", "201"),
        ("launch_host_func", "0,0 ran=true inner=800"),
    ];
    for (n, want) in must {
        if got.get(n).map(String::as_str) != Some(want) {
            bad.push(format!("{n}: want {want:?}, got {:?}", got.get(n)));
        }
    }
    assert!(bad.is_empty(), "emulated run problems:\n{}", bad.join("\n"));
}

/// The same call answers the same in every mode: the copy and memset cases (zero-length
/// copies at an allocation's end, outside it and at NULL included), the copies from
/// unreadable host memory and the faults across contexts, run again with
/// EMU_CUDA_ASYNC=deferred, must give the table's lines too.
#[test]
fn deferred_mode_answers_as_the_table_does() {
    emulated();
    let (table_path, Some(expected)) = table() else { panic!("no conformance table") };
    let root = root();
    let dir = run_dir();
    let out = dir.join("deferred.txt");
    let o = Command::new(dir.join("driver-conformance"))
        .arg("--lib")
        .arg(root.join("target/simtwin/lib/libcuda.so.1"))
        .arg("--fatbin")
        .arg(dir.join("conformance.fatbin"))
        .arg("--kernels")
        .arg(dir.join("kernels"))
        .args(["--only", "zerolen_*,memcpy_*,memset,hostmem_*,sticky_*", "--timeout", "60", "--out"])
        .arg(&out)
        .env("EMU_CUDA_ASYNC", "deferred")
        .env_remove("EMU_CUDA_COUNTS")
        .output()
        .expect("run driver-conformance");
    assert!(o.status.success(), "driver-conformance failed: {}", String::from_utf8_lossy(&o.stderr));
    let got = parse(&std::fs::read_to_string(&out).unwrap());
    assert!(got.len() >= 15, "only {} lines", got.len());
    let bad: Vec<String> = got
        .iter()
        .filter(|(n, g)| expected.get(*n).is_some_and(|w| w != *g))
        .map(|(n, g)| format!("{n}\n    table ({}): {}\n    deferred: {g}", table_path.display(), expected[n]))
        .collect();
    assert!(bad.is_empty(), "EMU_CUDA_ASYNC=deferred answers differently:\n{}", bad.join("\n"));
}

/// Under CUDA_MODULE_LOADING=EAGER a kernel the device's driver cannot compile (a txq of
/// a texture's format) fails its module's load with CUDA_ERROR_NOT_FOUND, where the
/// default lazy loading fails only cuModuleGetFunction of that kernel: every line the
/// H200 answered under eager loading in run 11 (reports/reference/h200/textures-fit/
/// run11-eager.txt, run11b-eager.txt; run 12: run12-eager.txt) is the emulated driver's in PTX mode.
#[test]
fn eager_module_loading_answers_as_the_h200_did() {
    let dir = root().join("reports/reference/h200/textures-fit");
    let mut want = BTreeMap::new();
    for f in ["run11-eager.txt", "run11b-eager.txt", "run12-eager.txt"] {
        want.extend(parse(&std::fs::read_to_string(dir.join(f)).expect("run 11's eager records")));
    }
    let only = want.keys().filter(|k| !k.contains('.')).cloned().collect::<Vec<_>>().join(",");
    let got = parse(&run_conformance("ptx", &[("CUDA_MODULE_LOADING", "EAGER")], Some(&only)));
    let differ: Vec<String> =
        want.iter().filter(|(k, v)| got.get(*k) != Some(*v)).map(|(k, v)| format!("{k}: H200 {v} / emulated {:?}", got.get(k))).collect();
    assert!(differ.is_empty(), "{} lines differ under CUDA_MODULE_LOADING=EAGER:\n{}", differ.len(), differ.join("\n"));
}
