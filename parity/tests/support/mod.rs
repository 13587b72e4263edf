//! Helpers shared by parity's integration tests: the fakes of tests/fake/ and reading
//! what a command left.
#![allow(dead_code)]

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// tests/fake/.
pub fn fake_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fake")
}

/// Builds tests/fake/libcuda.c into `dir/libcuda.so.1` with `defines` (-DEMULATED: it
/// stands in for simtwin's driver).
pub fn build_lib(dir: &Path, defines: &[&str]) {
    std::fs::create_dir_all(dir).unwrap();
    let st = Command::new("cc")
        .args(["-shared", "-fPIC", "-o"])
        .arg(dir.join("libcuda.so.1"))
        .arg(fake_dir().join("libcuda.c"))
        .args(defines)
        .status()
        .expect("a C compiler (cc) is needed to build the fake libcuda.so.1");
    assert!(st.success());
}

pub fn read_json(p: &Path) -> Value {
    let t = std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    serde_json::from_str(&t).unwrap()
}

pub fn code(o: &Output) -> i32 {
    o.status.code().expect("exit status")
}

pub fn text(o: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr))
}

#[track_caller]
pub fn expect_code(o: &Output, want: i32) {
    assert_eq!(code(o), want, "unexpected exit status; output:\n{}", text(o));
}
