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

/// Keys whose values are timings (they differ between any two runs).
const TIMING_KEYS: &[&str] = &["elapsed_s", "seconds", "inputs_per_second", "timeout_s"];

fn strip_timings(v: &mut Value) {
    match v {
        Value::Object(m) => {
            for k in TIMING_KEYS {
                m.remove(*k);
            }
            m.values_mut().for_each(strip_timings);
        }
        Value::Array(a) => a.iter_mut().for_each(strip_timings),
        _ => {}
    }
}

/// `text` with every one of `roots` replaced by `<DIR>`, process ids in counters file
/// names by `PID`, and ` time="..."` attributes removed.
fn neutral(text: &str, roots: &[&Path]) -> String {
    let mut t = text.to_string();
    let mut roots: Vec<String> = roots.iter().map(|r| r.display().to_string()).collect();
    // Longer first: one root may begin with another (shard, shards/1).
    roots.sort_by_key(|r| std::cmp::Reverse(r.len()));
    for r in roots {
        t = t.replace(&r, "<DIR>");
    }
    let mut out = String::with_capacity(t.len());
    let mut rest = t.as_str();
    while let Some(i) = rest.find("counts-") {
        out.push_str(&rest[..i + 7]);
        rest = &rest[i + 7..];
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        if digits > 0 && rest[digits..].starts_with(".json") {
            out.push_str("PID");
            rest = &rest[digits..];
        }
    }
    out.push_str(rest);
    let mut o2 = String::with_capacity(out.len());
    let mut rest = out.as_str();
    while let Some(i) = rest.find(" time=\"") {
        o2.push_str(&rest[..i]);
        rest = &rest[i + 7..];
        rest = &rest[rest.find('"').map(|j| j + 1).unwrap_or(0)..];
    }
    o2.push_str(rest);
    o2
}

/// The reports under `dir` (every file named in `names`, at any depth, by relative path),
/// with timings, process ids and the directories `roots` taken out: two runs that did the
/// same work give equal maps.
pub fn reports(dir: &Path, names: &[&str], roots: &[&Path]) -> std::collections::BTreeMap<String, String> {
    let mut m = std::collections::BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
                continue;
            }
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            if !names.contains(&name.as_str()) {
                continue;
            }
            let text = std::fs::read_to_string(&p).unwrap();
            let text = if name.ends_with(".json") {
                let mut v: Value = serde_json::from_str(&text).unwrap();
                strip_timings(&mut v);
                serde_json::to_string_pretty(&v).unwrap()
            } else {
                text
            };
            m.insert(p.strip_prefix(dir).unwrap().display().to_string(), neutral(&text, roots));
        }
    }
    m
}

/// Asserts that two report maps are equal, naming the first file that differs.
#[track_caller]
pub fn assert_same_reports(a: &std::collections::BTreeMap<String, String>, b: &std::collections::BTreeMap<String, String>) {
    assert_eq!(a.keys().collect::<Vec<_>>(), b.keys().collect::<Vec<_>>(), "not the same report files");
    for (k, v) in a {
        if v != &b[k] {
            let (la, lb): (Vec<&str>, Vec<&str>) = (v.lines().collect(), b[k].lines().collect());
            let i = la.iter().zip(&lb).position(|(x, y)| x != y).unwrap_or(la.len().min(lb.len()));
            panic!("{k} differs at line {}:\n  {}\n  {}", i + 1, la.get(i).unwrap_or(&"<end>"), lb.get(i).unwrap_or(&"<end>"));
        }
    }
}
