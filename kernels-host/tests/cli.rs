//! The `kernels-host` command line: exit codes, error locations, the manifest.

mod common;
use sha2::Digest;
use std::process::Command;

fn kh() -> Command {
    Command::new(env!("CARGO_BIN_EXE_kernels-host"))
}
fn run(c: &mut Command) -> (i32, String, String) {
    let o = c.output().unwrap();
    (o.status.code().unwrap_or(-1), String::from_utf8_lossy(&o.stdout).into(), String::from_utf8_lossy(&o.stderr).into())
}

#[test]
fn usage_errors_exit_2() {
    let d = tempfile::tempdir().unwrap();
    assert_eq!(run(&mut kh()).0, 2);
    assert_eq!(run(kh().args(["build", "-o"]).arg(d.path())).0, 2, "no files");
    let (code, _, err) = run(kh().args(["build", "-o"]).arg(d.path()).arg("/nonexistent/k.cu"));
    assert_eq!(code, 2);
    assert!(err.contains("/nonexistent/k.cu"), "{err}");
    assert_eq!(run(kh().args(["build", "--arch", "ampere", "-o"]).arg(d.path()).arg(common::cu("tiny.cu"))).0, 2);
    assert_eq!(run(kh().args(["build", "-o"]).arg(d.path()).arg(common::cu("templates.entries.txt"))).0, 2);
    assert_eq!(run(kh().args(["build", "-o"]).arg(d.path()).arg(common::cu("tiny.cu")).args(["--", "--fmad=perhaps"])).0, 2);
    let (code, out, _) = run(kh().args(["build", "--help"]));
    assert_eq!(code, 0);
    assert!(out.contains("Example:") && out.contains("kernels-host build -o"), "{out}");
}

#[test]
fn inline_asm_is_a_build_error_naming_file_and_line() {
    let d = tempfile::tempdir().unwrap();
    let (code, _, err) = run(kh().args(["build", "-o"]).arg(d.path()).arg(common::cu("asm.cu")));
    assert_eq!(code, 1, "{err}");
    let src = common::cu("asm.cu").canonicalize().unwrap();
    assert!(err.contains(&format!("{}:4: inline PTX `asm`", src.display())), "{err}");
    assert!(!d.path().join("asm.so").exists());
}

#[test]
fn compile_errors_point_at_the_original_line() {
    let d = tempfile::tempdir().unwrap();
    let (code, _, err) = run(kh().args(["build", "-o"]).arg(d.path()).arg(common::cu("broken.cu")));
    assert_eq!(code, 1);
    let src = common::cu("broken.cu").canonicalize().unwrap();
    assert!(err.contains(&format!("{}:5:", src.display())) && err.contains("undefined_identifier"), "{err}");
}

#[test]
fn manifest_records_entries_globals_flags_and_hash() {
    let d = tempfile::tempdir().unwrap();
    let tiny = common::cu("tiny.cu");
    let (code, out, err) = run(kh()
        .args(["build", "--arch", "sm_80", "-o"])
        .arg(d.path())
        .args(["-D", "EXPECT_ARCH=800", "--", "--std", "c++20", "-DDEVICE_CODE"])
        .arg(&tiny));
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("tiny.so (1 kernels, 1 globals)"), "{out}");
    assert!(err.contains("warning") && err.contains("FMA"), "{err}");
    let text = std::fs::read_to_string(d.path().join("tiny.simtwin.json")).unwrap();
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    // Top-level fields in the documented order.
    let order = [
        "schema",
        "library",
        "source",
        "source_hash",
        "build_id",
        "nvcc_flags",
        "fma_contraction_differs",
        "entries",
        "globals",
        "warnings",
        "device_math",
    ];
    let pos: Vec<usize> = order.iter().map(|k| text.find(&format!("\n  \"{k}\":")).unwrap_or_else(|| panic!("{k} missing"))).collect();
    assert!(pos.windows(2).all(|w| w[0] < w[1]), "{text}");
    assert_eq!(v.as_object().unwrap().len(), order.len());
    let hash = format!("{:x}", sha2::Sha256::digest(std::fs::read(&tiny).unwrap()));
    assert_eq!(v["schema"], "simtwin-kernels/2");
    assert_eq!(v["library"], "tiny.so");
    assert_eq!(v["source"], tiny.canonicalize().unwrap().to_str().unwrap());
    assert_eq!(v["source_hash"], hash.as_str());
    // The build id is the one the library's descriptor carries.
    let lib = kernels_host::module::LoadedModule::open(&d.path().join("tiny.so")).unwrap();
    assert_eq!(v["build_id"], lib.build_id.as_str());
    assert_eq!(lib.build_id.len(), 64);
    assert_eq!(v["nvcc_flags"], serde_json::json!(["--std", "c++20", "-DDEVICE_CODE"]));
    assert_eq!(v["device_math"]["profile"], "h200");
    assert_eq!(v["device_math"]["exact"], true);
    assert!(v["device_math"]["library"].as_str().unwrap().starts_with("libdevice of nvcc 13."), "{text}");
    assert_eq!(v["fma_contraction_differs"], true);
    assert_eq!(
        v["entries"],
        serde_json::json!([{"name": "axpy", "symbol": "axpy", "param_sizes": [4, 8, 8, 4],
        "param_aligns": [4, 8, 8, 4], "max_threads": 0, "min_blocks": 0}])
    );
    assert_eq!(v["globals"], serde_json::json!([{"name": "lut", "symbol": "lut", "size": 24, "constant": true}]));
    assert!(d.path().join("tiny.so").is_file());

    // With --fmad=false there is no contraction difference; fast math is warned about.
    let (code, _, err) =
        run(kh().args(["build", "-o"]).arg(d.path()).arg(&tiny).args(["--", "-DDEVICE_CODE", "--fmad=false", "--use_fast_math"]));
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(d.path().join("tiny.simtwin.json")).unwrap()).unwrap();
    assert_eq!(v["fma_contraction_differs"], false);
    let w = v["warnings"].as_array().unwrap();
    assert_eq!(w.len(), 1, "{w:?}");
    assert!(w[0].as_str().unwrap().contains("--use_fast_math"));

    // Without DEVICE_CODE the source's own #error fires: exit 1 with its line.
    let (code, _, err) = run(kh().args(["build", "-o"]).arg(d.path()).arg(&tiny));
    assert_eq!(code, 1);
    assert!(err.contains("tiny.cu:7:") && err.contains("DEVICE_CODE comes from the nvcc flags"), "{err}");
}
