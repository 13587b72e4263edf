//! `parity replay --device-math`: twins' libdevice against the H200's recorded results
//! (reports/device-math/h200-record). Sampled runs only (one block and one window per
//! function); the exhaustive run is `--exhaustive` (reports/device-math/replay-exhaustive).

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn record(set: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../reports/device-math/h200-record").join(set)
}

fn replay(args: &[&str], out: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_parity")).arg("replay").arg("--device-math").args(args).arg("--out").arg(out).output().unwrap()
}

fn text(o: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr))
}

fn summary(out: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(out.join("summary.json")).unwrap()).unwrap()
}

#[test]
fn twins_libdevice_equals_the_h200_on_the_recorded_sample() {
    let tmp = tempfile::tempdir().unwrap();
    let rec = record("13.5-ftz0-div1-sqrt1-fmad1");
    let fns = "expf,exp2f,powf,log2f,sinf,rsqrtf,__expf,__log2f,__sinf,__fdividef";
    let o = replay(&["--record", rec.to_str().unwrap(), "--function", fns], tmp.path());
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let s = summary(tmp.path());
    assert_eq!(s["differences"], false, "{s}");
    let list = s["functions"].as_array().unwrap();
    assert_eq!(list.len(), 10, "{s}");
    for f in list {
        assert_eq!(f["differing_blocks"], 0, "{f}");
        assert!(f["blocks"].as_u64().unwrap() >= 1, "{f}");
        // The window's 4096 results are compared one by one.
        assert_eq!(f["window_inputs"], 4096, "{f}");
        assert_eq!(f["window_differing_inputs"], 0, "{f}");
    }
}

#[test]
fn other_records_fast_math_and_fmad_false_equal_the_h200_too() {
    for set in ["13.5-fast", "13.0-ftz0-div1-sqrt1-fmad0"] {
        let tmp = tempfile::tempdir().unwrap();
        let rec = record(set);
        let o = replay(&["--record", rec.to_str().unwrap(), "--function", "expf,__sinf"], tmp.path());
        assert_eq!(o.status.code(), Some(0), "{set}: {}", text(&o));
        assert_eq!(summary(tmp.path())["differences"], false, "{set}");
    }
}

#[test]
fn host_libm_is_caught_with_the_differing_inputs_named() {
    let tmp = tempfile::tempdir().unwrap();
    let rec = record("13.5-ftz0-div1-sqrt1-fmad1");
    let o = replay(&["--record", rec.to_str().unwrap(), "--function", "__sinf,expf", "--model", "host-libm"], tmp.path());
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let t = text(&o);
    assert!(t.contains("DIFFERS"), "{t}");
    let s = summary(tmp.path());
    assert_eq!(s["differences"], true);
    let sinf = s["functions"].as_array().unwrap().iter().find(|f| f["function"] == "__sinf").unwrap();
    // __sinf is sin.approx on the device: the accurate host sine differs inside the window.
    assert!(sinf["window_differing_inputs"].as_u64().unwrap() > 0, "{sinf}");
    let first = &sinf["first_differing_inputs"][0];
    assert_ne!(first["device"], first["emulated"], "{sinf}");
}

#[test]
fn bad_records_and_arguments_are_input_errors_that_name_the_file() {
    let tmp = tempfile::tempdir().unwrap();
    // A record whose block file is cut short.
    let src = record("13.5-ftz0-div1-sqrt1-fmad1");
    let bad = tmp.path().join("13.5-ftz0-div1-sqrt1-fmad1");
    std::fs::create_dir_all(&bad).unwrap();
    for e in std::fs::read_dir(&src).unwrap() {
        let e = e.unwrap();
        std::fs::copy(e.path(), bad.join(e.file_name())).unwrap();
    }
    let blocks = bad.join("expf.blocks");
    let len = std::fs::metadata(&blocks).unwrap().len();
    std::fs::OpenOptions::new().write(true).open(&blocks).unwrap().set_len(len - 4).unwrap();
    let o = replay(&["--record", bad.to_str().unwrap(), "--function", "expf"], &tmp.path().join("o1"));
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("expf.blocks"), "{}", text(&o));
    // A block hash changed: the manifest's total no longer adds up.
    std::fs::copy(src.join("expf.blocks"), &blocks).unwrap();
    let mut b = std::fs::read(src.join("log2f.blocks")).unwrap();
    b[5] ^= 1;
    std::fs::write(bad.join("log2f.blocks"), b).unwrap();
    let o = replay(&["--record", bad.to_str().unwrap(), "--function", "log2f"], &tmp.path().join("o2"));
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("log2f.blocks"), "{}", text(&o));
    // No record there; a function the record does not have; an unknown model.
    let o = replay(&["--record", tmp.path().join("none").to_str().unwrap()], &tmp.path().join("o3"));
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("none"), "{}", text(&o));
    let o = replay(&["--record", src.to_str().unwrap(), "--function", "nosuchf"], &tmp.path().join("o4"));
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("nosuchf") && text(&o).contains("expf"), "{}", text(&o));
    let o = replay(&["--record", src.to_str().unwrap(), "--model", "gpu"], &tmp.path().join("o5"));
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
}
