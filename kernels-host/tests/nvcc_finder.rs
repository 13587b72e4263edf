//! One toolkit finder: scripts/nvcc-path holds the search orders, kernels-host compiles it
//! in (`toolkit::FINDER`). `kernels-host nvcc-path [--include]` (the crates' `find_nvcc`,
//! `find_include`) and the script give the same answer, or both refuse, and the answers
//! follow the documented orders.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

fn fake_nvcc(dir: &Path) -> PathBuf {
    std::fs::create_dir_all(dir).unwrap();
    let p = dir.join("nvcc");
    std::fs::write(&p, "#!/bin/sh\necho fake\n").unwrap();
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    p
}

/// (stdout, exit code) of `cmd` under exactly `env` (plus PATH).
fn run(cmd: &Path, args: &[&str], env: &[(&str, &str)], path: &str) -> (String, i32) {
    let mut c = Command::new(cmd);
    c.args(args).env_clear().env("PATH", path);
    if let Some(home) = std::env::var_os("HOME") {
        c.env("HOME", home); // python3's user site, where a `pip install --user` nvcc lives
    }
    for (k, v) in env {
        c.env(k, v);
    }
    let out = c.output().unwrap();
    (String::from_utf8_lossy(&out.stdout).trim().to_string(), out.status.code().unwrap_or(-1))
}

/// (what, environment, PATH, expected: Some(path), Some("") for whatever this machine
/// has, None for a refusal).
type Case<'a> = (&'a str, Vec<(&'a str, &'a str)>, &'a str, Option<&'a str>);

#[test]
fn kernels_host_runs_scripts_nvcc_path_itself() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let script = std::fs::read_to_string(root.join("scripts/nvcc-path")).unwrap();
    assert_eq!(kernels_host::toolkit::FINDER, script, "kernels-host's finder is scripts/nvcc-path, byte for byte");
    // No other copy of the order: the crate's sources name neither place nvcc is looked for.
    for (dir, needle) in [("src", "/usr/local/cuda"), ("src", "nvidia.cu13"), ("src", "SIMTWIN_NVCC")] {
        for e in std::fs::read_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join(dir)).unwrap() {
            let p = e.unwrap().path();
            if p.extension().is_some_and(|x| x == "rs") {
                let code: String = std::fs::read_to_string(&p)
                    .unwrap()
                    .lines()
                    .filter(|l| !l.trim_start().starts_with("//"))
                    .collect::<Vec<_>>()
                    .join("\n");
                assert!(!code.contains(needle), "{} searches for the toolkit itself ({needle})", p.display());
            }
        }
    }
}

#[test]
fn the_include_directory_follows_the_one_order() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let script = root.join("scripts/nvcc-path");
    let bin = Path::new(env!("CARGO_BIN_EXE_kernels-host"));
    let tmp = tempfile::tempdir().unwrap();
    let tk = tmp.path().canonicalize().unwrap();
    // A toolkit with include/ beside bin/, one with targets/x86_64-linux/include/ only.
    let plain = fake_nvcc(&tk.join("plain/bin"));
    std::fs::create_dir_all(tk.join("plain/include")).unwrap();
    std::fs::write(tk.join("plain/include/cuda.h"), "").unwrap();
    let targets = fake_nvcc(&tk.join("targets/bin"));
    std::fs::create_dir_all(tk.join("targets/targets/x86_64-linux/include")).unwrap();
    std::fs::write(tk.join("targets/targets/x86_64-linux/include/cuda.h"), "").unwrap();
    let (plain, targets) = (plain.to_str().unwrap(), targets.to_str().unwrap());
    let sys_path = "/usr/local/bin:/usr/bin:/bin";
    let plain_inc = tk.join("plain/include").display().to_string();
    let targets_inc = tk.join("targets/targets/x86_64-linux/include").display().to_string();
    let cases: Vec<Case> = vec![
        ("$SIMTWIN_CUDA_INCLUDE first", vec![("SIMTWIN_CUDA_INCLUDE", "/some/include"), ("NVCC", plain)], sys_path, Some("/some/include")),
        ("include/ beside nvcc's bin/", vec![("NVCC", plain)], sys_path, Some(&plain_inc)),
        ("targets/x86_64-linux/include beside nvcc's bin/", vec![("NVCC", targets)], sys_path, Some(&targets_inc)),
        ("whatever this machine has", vec![], sys_path, Some("")),
    ];
    for (what, env, path, want) in cases {
        let rust = run(bin, &["nvcc-path", "--include"], &env, path);
        let shell = run(&script, &["--include"], &env, path);
        assert_eq!(rust, shell, "{what}: kernels-host nvcc-path --include and scripts/nvcc-path --include differ");
        if let Some(p) = want.filter(|p| !p.is_empty()) {
            assert_eq!(rust, (p.to_string(), 0), "{what}");
        }
    }
}

#[test]
fn the_rust_finder_and_scripts_nvcc_path_agree() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let script = root.join("scripts/nvcc-path");
    let bin = Path::new(env!("CARGO_BIN_EXE_kernels-host"));
    let tmp = tempfile::tempdir().unwrap();
    let a = fake_nvcc(&tmp.path().join("a"));
    let b = fake_nvcc(&tmp.path().join("b"));
    let on_path = fake_nvcc(&tmp.path().join("onpath"));
    let not_exe = tmp.path().join("plain");
    std::fs::write(&not_exe, "").unwrap();
    let (a, b, not_exe) = (a.to_str().unwrap(), b.to_str().unwrap(), not_exe.to_str().unwrap());
    // python3 stays reachable (the PyPI package is looked up through it).
    let sys_path = "/usr/local/bin:/usr/bin:/bin";
    let path_with_fake = format!("{}:{sys_path}", on_path.parent().unwrap().display());
    let cases: Vec<Case> = vec![
        ("$NVCC first", vec![("NVCC", a), ("SIMTWIN_NVCC", b)], sys_path, Some(a)),
        ("$SIMTWIN_NVCC next", vec![("SIMTWIN_NVCC", b)], sys_path, Some(b)),
        ("$NVCC naming no executable is refused", vec![("NVCC", not_exe), ("SIMTWIN_NVCC", b)], sys_path, None),
        ("$SIMTWIN_NVCC naming nothing is refused", vec![("SIMTWIN_NVCC", "/nonexistent/nvcc")], sys_path, None),
        // Whatever this machine has (the PyPI package, PATH, /usr/local/cuda): the same.
        ("the package or PATH", vec![], &path_with_fake, Some("")),
        ("neither variable", vec![], sys_path, Some("")),
    ];
    for (what, env, path, want) in cases {
        let rust = run(bin, &["nvcc-path"], &env, path);
        let shell = run(&script, &[], &env, path);
        assert_eq!(rust, shell, "{what}: kernels-host nvcc-path and scripts/nvcc-path differ");
        match want {
            Some("") => {}
            Some(p) => assert_eq!(rust, (p.to_string(), 0), "{what}"),
            None => assert_eq!(rust, (String::new(), 2), "{what}"),
        }
    }
    // PATH is looked at only after the package: with the fake first on PATH, the answer is
    // the fake exactly when python3 has no nvidia.cu13 package.
    let mut py = Command::new("python3");
    py.args(["-c", "import nvidia.cu13"]).env_clear().env("PATH", &path_with_fake);
    if let Some(home) = std::env::var_os("HOME") {
        py.env("HOME", home);
    }
    let pkg = py.output().map(|o| o.status.success()).unwrap_or(false);
    let got = run(bin, &["nvcc-path"], &[], &path_with_fake).0;
    assert_eq!(got == on_path.to_str().unwrap(), !pkg, "PATH's nvcc {got} with the package installed: {pkg}");
}
