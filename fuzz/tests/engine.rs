//! The fuzzer finds what it must find: a planted panic, a planted abort (a signal: the
//! process ends, the input is on disk), a planted hang; and the real targets run their
//! seeds and mutations in the test build (blind: no instrumentation here; scripts/fuzz
//! checks the coverage-guided build on a crash blind mutation cannot reach).

use simtwin_fuzz::{fuzz, Config, Limits, Outcome, Target};
use std::path::Path;
use std::process::Command;
use std::time::Duration;

fn has_token(d: &[u8]) -> bool {
    d.windows(4).any(|w| w == b"PLNT")
}

fn panics(d: &[u8]) {
    if has_token(d) && d.len() > 6 {
        panic!("planted panic");
    }
}

fn aborts(d: &[u8]) {
    if has_token(d) {
        std::process::abort();
    }
}

fn hangs(d: &[u8]) {
    if has_token(d) {
        loop {
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

fn target(run: fn(&[u8])) -> Target {
    Target { name: "test", about: "", run, seed_paths: &[], seeds: Vec::new, dict: &[], hidden: true }
}

fn config(artifacts: &Path) -> Config {
    Config {
        time: Duration::from_secs(60),
        max_runs: Some(2_000_000),
        seed: 3,
        max_len: 4096,
        corpus_dir: None,
        artifacts: artifacts.to_path_buf(),
        dict: vec![b"PLNT".to_vec()],
        limits: Limits { timeout: Duration::from_secs(1), rss_bytes: 4 << 30, malloc_bytes: 1 << 30 },
    }
}

#[test]
fn a_planted_panic_is_found_and_its_input_written() {
    let dir = tempfile::tempdir().unwrap();
    let seeds = vec![b"some seed text\n".to_vec(), vec![0u8; 32]];
    match fuzz(&target(panics), &config(dir.path()), seeds) {
        Outcome::Crash { message, artifact, stats } => {
            assert!(message.contains("planted panic"), "{message}");
            assert!(message.contains("engine.rs"), "the place of the panic is named: {message}");
            let input = std::fs::read(&artifact).unwrap();
            assert!(has_token(&input) && input.len() > 6, "the artifact is the crashing input: {input:?}");
            assert!(stats.runs > 2 && stats.runs < 2_000_000, "{stats:?}");
        }
        Outcome::Clean(s) => panic!("the planted panic was not found in {} runs", s.runs),
    }
}

#[test]
fn a_clean_target_runs_to_its_budget() {
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = config(dir.path());
    cfg.max_runs = Some(20_000);
    cfg.dict.clear();
    match fuzz(&target(panics), &cfg, vec![b"abc".to_vec()]) {
        Outcome::Clean(s) => assert!(s.runs >= 20_000 && s.runs < 20_100, "{s:?}"),
        Outcome::Crash { message, .. } => panic!("without the token nothing can crash: {message}"),
    }
}

/// In a child process (this test binary, re-run): fuzz `which` until it ends the process.
fn child(which: &str) -> (i32, String, std::path::PathBuf, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "child_process", "--nocapture", "--include-ignored"])
        .env("FUZZ_TEST_CHILD", which)
        .env("FUZZ_TEST_DIR", dir.path())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let art = std::fs::read_dir(dir.path()).unwrap().flatten().map(|e| e.path()).next().unwrap_or_default();
    (out.status.code().unwrap_or(-1), stderr, art, dir)
}

#[test]
#[ignore = "run by the tests below, in a child process"]
fn child_process() {
    let Ok(which) = std::env::var("FUZZ_TEST_CHILD") else { return };
    let dir = std::path::PathBuf::from(std::env::var("FUZZ_TEST_DIR").unwrap());
    let run = if which == "abort" { aborts } else { hangs };
    let _ = fuzz(&target(run), &config(&dir), vec![b"0123456789".to_vec()]);
    unreachable!("the planted {which} did not end the process");
}

#[test]
fn a_planted_abort_ends_the_process_with_the_input_written() {
    let (code, stderr, art, _dir) = child("abort");
    assert_eq!(code, 1, "{stderr}");
    assert!(stderr.contains("CRASH (signal SIGABRT)"), "{stderr}");
    assert!(stderr.contains("reproduce: simtwin-fuzz check test "), "{stderr}");
    assert!(art.file_name().unwrap().to_string_lossy().starts_with("crash-"), "{art:?}");
    assert!(has_token(&std::fs::read(&art).unwrap()), "the artifact holds the input that aborted");
}

#[test]
fn a_planted_hang_is_a_timeout_with_the_input_written() {
    let (code, stderr, art, _dir) = child("hang");
    assert_eq!(code, 1, "{stderr}");
    assert!(stderr.contains("CRASH (timeout: one input ran ") && stderr.contains(" s, the limit is 1 s)"), "{stderr}");
    assert!(art.file_name().unwrap().to_string_lossy().starts_with("timeout-"), "{art:?}");
    assert!(has_token(&std::fs::read(&art).unwrap()));
}

/// Every real target, a few thousand runs from its seeds (blind in this build).
#[test]
fn every_target_runs_its_seeds_and_mutations_cleanly() {
    let bin = env!("CARGO_BIN_EXE_simtwin-fuzz");
    let list = Command::new(bin).arg("list").output().unwrap();
    let list = String::from_utf8(list.stdout).unwrap();
    let names: Vec<&str> =
        list.lines().filter(|l| !l.contains("not run by default")).map(|l| l.split_whitespace().next().unwrap()).collect();
    assert_eq!(names, ["image", "image_ptr", "ptx", "abi", "parity"]);
    let dir = tempfile::tempdir().unwrap();
    for t in names {
        let out = Command::new(bin)
            .args(["run", t, "--runs", "3000", "--seconds", "120"])
            .arg("--corpus")
            .arg(dir.path().join("corpus").join(t))
            .arg("--artifacts")
            .arg(dir.path().join("art").join(t))
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "{t}: {stdout}{}", String::from_utf8_lossy(&out.stderr));
        assert!(stdout.contains(&format!("fuzz {t}: ")) && stdout.contains("no crash"), "{stdout}");
        let runs: u64 = stdout.split_whitespace().nth(2).unwrap().parse().unwrap();
        assert!(runs >= 3000, "{t}: {stdout}");
    }
}

#[test]
fn usage_errors_exit_2() {
    let bin = env!("CARGO_BIN_EXE_simtwin-fuzz");
    for args in [&["run", "nosuch"][..], &["run", "image", "--seconds", "-1"], &["run", "image", "--bogus", "1"], &["check", "image"], &[]]
    {
        let out = Command::new(bin).args(args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    }
}
