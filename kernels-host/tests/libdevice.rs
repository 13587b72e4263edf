//! Twins compute libdevice's math: every function of `tests/cu/libdevice_calls.cu`, built
//! as a twin with nvcc 13.5's libdevice at default flags, with `--fmad=false` and with
//! `--use_fast_math`, and with 13.0's at `--fmad=false`, gives the H200's result on 64
//! recorded inputs each (specials, subnormals, extremes, hashed patterns;
//! `tests/data/libdevice-h200-<release>-<flag set>.txt`, written on the H200 by
//! scripts/device-math/libdevice_verify.cu, whose exhaustive comparison is in
//! reports/device-math/). A device profile without models keeps the host's libm and says
//! so in the manifest.

mod common;
use common::*;
use kernels_host::build::{build, BuildOptions, Built};
use kernels_host::module::LoadedModule;

/// The function names of libdevice_calls.cu, in `fi` order.
fn names() -> Vec<String> {
    let src = std::fs::read_to_string(cu("libdevice_calls.cu")).unwrap();
    let mut out = Vec::new();
    for list in ["#define LIST1(X)", "#define LIST2(X)"] {
        let at = src.find(list).unwrap() + list.len();
        let end = src[at..].find("\n#define").map(|e| at + e).unwrap_or(src.len());
        for part in src[at..end].split("X(").skip(1) {
            out.push(part.split(')').next().unwrap().to_string());
        }
    }
    out
}

/// (function, x, y, device result) of a recorded file.
fn samples(set: &str) -> Vec<(String, u32, u32, u32)> {
    // `set` is RELEASE-SET
    let path = format!("{}/tests/data/libdevice-h200-{set}.txt", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|l| {
            let w: Vec<&str> = l.split_whitespace().collect();
            let h = |s: &str| u32::from_str_radix(s, 16).unwrap();
            match w.len() {
                3 => (w[0].to_string(), h(w[1]), 0, h(w[2])),
                4 => (w[0].to_string(), h(w[1]), h(w[2]), h(w[3])),
                _ => panic!("{path}: bad line {l:?}"),
            }
        })
        .collect()
}

fn build_calls(what: &str, flags: &[&str], profile: &str, release: &str) -> Built {
    let (dir, lock) = shared_build_dir(what, &["libdevice_calls.cu", release], flags);
    let manifest_path = dir.join("libdevice_calls.simtwin.json");
    if lock.is_none() {
        let manifest = kernels_host::manifest::Manifest::parse(&std::fs::read_to_string(&manifest_path).unwrap()).unwrap();
        return Built { library: dir.join("libdevice_calls.so"), manifest_path, manifest };
    }
    let mut opts = BuildOptions::new(&dir, vec![cu("libdevice_calls.cu")]);
    opts.nvcc_flags = flags.iter().map(|s| s.to_string()).collect();
    opts.device_profile = profile.to_string();
    opts.libdevice_release = Some(release.to_string());
    let mut built = build(&opts).unwrap_or_else(|e| panic!("build failed: {e}"));
    std::fs::write(dir.join("done"), b"").unwrap();
    built.remove(0)
}

/// Runs every sample of `set` through the twin; returns the mismatches.
fn mismatches(b: &Built, set: &str) -> Vec<String> {
    let m = LoadedModule::open(&b.library).unwrap();
    // SAFETY: the mock runtime lives for the whole test process.
    unsafe { m.bind(&RUNTIME) };
    let names = names();
    let all = samples(set);
    assert!(all.len() >= 64 * names.len(), "{set}: {} samples for {} functions", all.len(), names.len());
    let mut bad = Vec::new();
    for (fi, name) in names.iter().enumerate() {
        let mine: Vec<&(String, u32, u32, u32)> = all.iter().filter(|s| &s.0 == name).collect();
        assert_eq!(mine.len(), 64, "{set}: samples of {name}");
        let mut x: Vec<u32> = mine.iter().map(|s| s.1).collect();
        let mut y: Vec<u32> = mine.iter().map(|s| s.2).collect();
        let mut out = vec![0u32; x.len()];
        let (mut fi32, mut n) = (fi as i32, x.len() as i32);
        let (mut px, mut py, mut po) = (x.as_mut_ptr(), y.as_mut_ptr(), out.as_mut_ptr());
        launch(&m, "calls", n as u32, &[arg(&mut fi32), arg(&mut px), arg(&mut py), arg(&mut po), arg(&mut n)], &mut []);
        for (s, got) in mine.iter().zip(&out) {
            if *got != s.3 {
                bad.push(format!("{set} {name}({:08x}, {:08x}): twin {got:08x}, H200 {:08x}", s.1, s.2, s.3));
            }
        }
    }
    bad
}

#[test]
fn twins_give_the_h200s_libdevice_results_at_default_flags() {
    let b = build_calls("ld-default", &[], "h200", "13.5");
    let dm = b.manifest.device_math.clone().expect("device_math in the manifest");
    assert!(dm.exact && dm.profile == "h200" && dm.library == "libdevice of nvcc 13.5 (ftz0-div1-sqrt1-fmad1)", "{dm:?}");
    let bad = mismatches(&b, "13.5-ftz0-div1-sqrt1-fmad1");
    assert!(bad.is_empty(), "{} differences:\n{}", bad.len(), bad.join("\n"));
}

#[test]
fn twins_give_the_h200s_libdevice_results_with_fmad_false() {
    let b = build_calls("ld-fmad", &["--fmad=false"], "h200", "13.5");
    assert!(b.manifest.device_math.as_ref().unwrap().library.contains("(ftz0-div1-sqrt1-fmad0)"));
    let bad = mismatches(&b, "13.5-ftz0-div1-sqrt1-fmad0");
    assert!(bad.is_empty(), "{} differences:\n{}", bad.len(), bad.join("\n"));
}

#[test]
fn twins_take_the_libdevice_of_their_nvcc_release() {
    // nvcc 13.0's libdevice (the H200 machine's nvcc) differs from 13.5's: the 13.0 twin
    // gives the 13.0 build's results (erff, expm1f differ among the samples), the 13.5
    // twin does not.
    let b = build_calls("ld-130", &["--fmad=false"], "h200", "13.0");
    assert_eq!(b.manifest.device_math.as_ref().unwrap().library, "libdevice of nvcc 13.0 (ftz0-div1-sqrt1-fmad0)");
    let bad = mismatches(&b, "13.0-ftz0-div1-sqrt1-fmad0");
    assert!(bad.is_empty(), "{} differences:\n{}", bad.len(), bad.join("\n"));
    let other = build_calls("ld-fmad", &["--fmad=false"], "h200", "13.5");
    let bad = mismatches(&other, "13.0-ftz0-div1-sqrt1-fmad0");
    assert!(bad.iter().any(|b| b.contains(" erff(") || b.contains(" expm1f(")), "{bad:?}");
}

#[test]
fn twins_give_the_h200s_libdevice_results_with_fast_math() {
    let b = build_calls("ld-fast", &["--use_fast_math"], "h200", "13.5");
    assert!(b.manifest.device_math.as_ref().unwrap().library.contains("(fast)"));
    let bad = mismatches(&b, "13.5-fast");
    assert!(bad.is_empty(), "{} differences:\n{}", bad.len(), bad.join("\n"));
}

#[test]
fn the_std_overloads_reach_libdevice() {
    // std::exp(float), exp(float), std::pow(float, float), std::sin(float) give what expf,
    // powf and sinf give (the recorded H200 results of those).
    let b = build_calls("ld-default", &[], "h200", "13.5");
    let m = LoadedModule::open(&b.library).unwrap();
    // SAFETY: the mock runtime lives for the whole test process.
    unsafe { m.bind(&RUNTIME) };
    let all = samples("13.5-ftz0-div1-sqrt1-fmad1");
    let find = |f: &str, x: u32| all.iter().find(|s| s.0 == f && s.1 == x).map(|s| s.3);
    let mut checked = 0;
    for s in all.iter().filter(|s| s.0 == "powf") {
        let (Some(e), Some(sn)) = (find("expf", s.1), find("sinf", s.1)) else { continue };
        let mut x = [f32::from_bits(s.1), f32::from_bits(s.2)];
        let mut out = [0f32; 4];
        let (mut px, mut po) = (x.as_mut_ptr(), out.as_mut_ptr());
        launch(&m, "overloads", 1, &[arg(&mut px), arg(&mut po)], &mut []);
        let got: Vec<u32> = out.iter().map(|v| v.to_bits()).collect();
        assert_eq!(got, vec![e, e, s.3, sn], "x {:08x} y {:08x}", s.1, s.2);
        checked += 1;
    }
    assert!(checked >= 10, "{checked} inputs shared by expf, sinf and powf");
}

#[test]
fn an_nvcc_release_without_data_says_not_device_exact() {
    let b = build_calls("ld-norelease", &[], "h200", "12.4");
    let dm = b.manifest.device_math.clone().unwrap();
    assert!(!dm.exact && dm.note.as_deref().unwrap_or("").contains("no libdevice data for nvcc 12.4"), "{dm:?}");
}

#[test]
fn a_profile_without_models_says_not_device_exact() {
    let b = build_calls("ld-other", &[], "a100", "13.5");
    let dm = b.manifest.device_math.clone().unwrap();
    assert!(!dm.exact && dm.library == "host libm", "{dm:?}");
    assert!(dm.note.as_deref().unwrap_or("").starts_with("not device-exact: no device-math models for the profile \"a100\""), "{dm:?}");
    assert!(b.manifest.warnings.iter().any(|w| w.starts_with("not device-exact")), "{:?}", b.manifest.warnings);
    // It still builds and runs: expf is the host's, which differs from the H200's
    // somewhere among the samples (a difference the H200 profile does not have).
    let bad = mismatches(&b, "13.5-ftz0-div1-sqrt1-fmad1");
    assert!(!bad.is_empty(), "host libm matched the H200 on every sample");
}

/// The checked-in libdevice data is what the generator makes with this machine's nvcc
/// (the pinned PyPI one: its release's directory). About a minute of nvcc runs:
/// `cargo test --release -p kernels-host --test libdevice -- --ignored`.
#[test]
#[ignore]
fn the_libdevice_data_is_reproducible() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf();
    let out = std::process::Command::new(root.join("scripts/libdevice/generate")).arg("--check").output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
}
