//! The special-function unit's models (runtime/simtwin_sfu.cpp) against the H200: the
//! C++ checker tests/sfu/check.cpp is built with the model, as the runtime objects are
//! built (g++ -O2, IEEE flags), and compares it with results recorded on the device
//! (tests/data/sfu-h200-samples.bin: 512 per form, specials first). The ignored test
//! recomputes each one-operand form over every input and compares the hash with the one
//! the H200 gave (tests/data/sfu-h200-hashes.txt); scripts/device-math/verify.cu is the
//! exhaustive comparison itself, on the device.

use std::path::{Path, PathBuf};
use std::process::Command;

fn manifest() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Builds the checker into `dir` and returns its path.
fn build_checker(dir: &Path) -> PathBuf {
    let cxx = std::env::var("SIMTWIN_CXX").unwrap_or_else(|_| "g++".to_string());
    let exe = dir.join("sfu-check");
    let m = manifest();
    let out = Command::new(&cxx)
        .args(["-O2", "-std=c++17", "-frounding-math", "-fno-fast-math", "-ffp-contract=off", "-I"])
        .arg(m.join("include"))
        .arg(m.join("tests/sfu/check.cpp"))
        .arg(m.join("runtime/simtwin_sfu.cpp"))
        .arg("-o")
        .arg(&exe)
        .output()
        .unwrap_or_else(|e| panic!("cannot run {cxx}: {e}"));
    assert!(out.status.success(), "building the checker failed:\n{}", String::from_utf8_lossy(&out.stderr));
    exe
}

/// (form, records, differences) of each "form N: R records, D differences" line.
fn per_form(stdout: &str) -> Vec<(u32, u64, u64)> {
    stdout
        .lines()
        .filter_map(|l| {
            let rest = l.strip_prefix("form ")?;
            let (form, rest) = rest.split_once(':')?;
            let w: Vec<&str> = rest.split_whitespace().collect();
            Some((form.trim().parse().ok()?, w[0].parse().ok()?, w[2].parse().ok()?))
        })
        .collect()
}

fn samples() -> Vec<u8> {
    std::fs::read(manifest().join("tests/data/sfu-h200-samples.bin")).unwrap()
}

fn exact_forms() -> Vec<String> {
    std::fs::read_to_string(manifest().join("runtime/sfu_exact.txt"))
        .unwrap()
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(String::from)
        .collect()
}

#[test]
fn models_equal_the_h200_on_its_recorded_results() {
    let dir = tempfile::tempdir().unwrap();
    let exe = build_checker(dir.path());
    let out = Command::new(&exe).arg(manifest().join("tests/data/sfu-h200-samples.bin")).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "the models differ from the H200:\n{stdout}{}", String::from_utf8_lossy(&out.stderr));
    let forms = per_form(&stdout);
    // every form of sfu.h: 15 single, 3 double, 4 f16/bf16, 4 packed, 4 division
    assert_eq!(forms.len(), 30, "{stdout}");
    for (form, n, bad) in &forms {
        assert_eq!((*n, *bad), (512, 0), "form {form}: {stdout}");
    }
    // the list the translator reads: every form but the three f64 ones (their NaN results
    // are canonicalised by simtwin-ptx, see sfu_exact.txt)
    let exact = exact_forms();
    assert_eq!(exact.len(), 27, "{exact:?}");
    assert!(exact.iter().any(|f| f == "div.full.ftz.f32") && exact.iter().any(|f| f == "tanh.approx.bf16x2"));
    assert!(!exact.iter().any(|f| f.ends_with(".f64")), "{exact:?}");
}

#[test]
fn a_result_that_differs_is_reported() {
    let dir = tempfile::tempdir().unwrap();
    let exe = build_checker(dir.path());
    let mut data = samples();
    // record 700 (form 1, ex2.approx.f32): flip the lowest bit of the recorded result
    let at = 700 * 24 + 16;
    assert_eq!(u32::from_le_bytes(data[700 * 24..700 * 24 + 4].try_into().unwrap()), 1);
    data[at] ^= 1;
    let path = dir.path().join("bad.bin");
    std::fs::write(&path, &data).unwrap();
    let out = Command::new(&exe).arg(&path).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    let forms = per_form(&stdout);
    assert!(forms.contains(&(1, 512, 1)), "{stdout}");
    assert_eq!(forms.iter().map(|f| f.2).sum::<u64>(), 1, "{stdout}");
    assert!(stdout.contains("form 1 x="), "{stdout}");
}

#[test]
fn a_truncated_record_file_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let exe = build_checker(dir.path());
    let path = dir.path().join("short.bin");
    std::fs::write(&path, &samples()[..24 * 3 + 5]).unwrap();
    let out = Command::new(&exe).arg(&path).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("not a whole number of 24-byte records"));
    let out = Command::new(&exe).arg(dir.path().join("missing.bin")).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot open"));
}

/// Every one-operand form over every input (2^32 each; about half an hour on one core):
/// `cargo test --release -p kernels-host --test sfu -- --ignored`.
#[test]
#[ignore]
fn models_equal_the_h200_on_every_input() {
    let dir = tempfile::tempdir().unwrap();
    let exe = build_checker(dir.path());
    let text = std::fs::read_to_string(manifest().join("tests/data/sfu-h200-hashes.txt")).unwrap();
    let forms: Vec<(String, String, String)> = text
        .lines()
        .filter(|l| !l.starts_with('#'))
        .map(|l| {
            let w: Vec<&str> = l.split_whitespace().collect();
            (w[0].to_string(), w[1].to_string(), w[2].to_string())
        })
        .collect();
    assert_eq!(forms.len(), 26);
    let threads = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1);
    let next = std::sync::atomic::AtomicUsize::new(0);
    let wrong = std::sync::Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let Some((num, name, want)) = forms.get(i) else { break };
                let out = Command::new(&exe).args(["--hash", num]).output().unwrap();
                let stdout = String::from_utf8_lossy(&out.stdout);
                let got = stdout.trim().rsplit(' ').next().unwrap_or("").to_string();
                if !out.status.success() || &got != want {
                    wrong.lock().unwrap().push(format!("{name}: host {got}, H200 {want}"));
                }
            });
        }
    });
    let wrong = wrong.into_inner().unwrap();
    assert!(wrong.is_empty(), "{wrong:?}");
}
