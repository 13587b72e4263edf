//! What a careless program does around the driver, on the emulated driver (C client
//! tests/hostile/client.c, dlopening target/simtwin's libcuda.so.1):
//! - fork() after cuInit: the child's calls answer CUDA_ERROR_NOT_INITIALIZED as the
//!   H200's do (cuDriverGetVersion works), the parent goes on, and the child counts into
//!   a file of its own (EMU_CUDA_COUNTS's %p) starting from zero, never into the parent's;
//! - a program that synchronises only through synchronous copies and is killed leaves its
//!   counters (checkpoints at synchronous copies);
//! - an unwritable counters path is reported once, not at every synchronisation;
//! - killing a program at any moment leaves no temporary file beside the counters;
//! - a copy from host memory the process cannot read dies of SIGSEGV (as on the H200:
//!   the `hostmem_*` lines of the conformance table), with a report naming the copy and
//!   the address, and the counters file.
//!
//! - a trace path (EMU_CUDA_TRACE) that is a FIFO, a device or a directory is refused at
//!   once, in one line: the program neither hangs on the FIFO nor writes to the device.
//!
//! (fork while another thread is inside the driver: the `fork_during_calls` case of the
//! conformance table.)

mod client_support;
use client_support::*;
use serde_json::Value;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::Duration;

fn client() -> &'static PathBuf {
    static C: OnceLock<PathBuf> = OnceLock::new();
    C.get_or_init(|| {
        let out = root().join("target/hostile").join(format!("run-{}", std::process::id()));
        std::fs::create_dir_all(&out).unwrap();
        let exe = out.join("client");
        cc_client(&root().join("emu-driver/tests/hostile/client.c"), &exe, &["-Wno-unused-function"]);
        exe
    })
}

fn cmd(args: &[&str], counts: Option<&str>) -> Command {
    let mut c = Command::new(client());
    c.args(args).env("LD_LIBRARY_PATH", simtwin("lib")).env_remove("EMU_CUDA_COUNTS");
    if let Some(p) = counts {
        c.env("EMU_CUDA_COUNTS", p);
    }
    c
}

fn kv(out: &str) -> std::collections::BTreeMap<String, String> {
    out.lines().filter_map(|l| l.split_once('=')).map(|(k, v)| (k.to_string(), v.to_string())).collect()
}

fn json(p: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))).unwrap()
}

fn files(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    v.sort();
    v
}

#[test]
fn a_child_forked_after_cuinit_answers_not_initialized_and_the_parent_goes_on() {
    let o = cmd(&["fork"], None).output().unwrap();
    let (out, err) = text(&o);
    assert!(o.status.success(), "{out}\n{err}");
    let m = kv(&out);
    for k in ["child_alloc", "child_copy", "child_init"] {
        assert_eq!(m[k], "3", "{k}: {out}");
    }
    assert_eq!((m["child_version"].as_str(), m["child_status"].as_str()), ("0", "0"), "{out}");
    assert_eq!((m["parent_alloc"].as_str(), m["parent_copy"].as_str()), ("0", "0"), "{out}");
}

#[test]
fn a_forked_child_counts_into_a_file_of_its_own() {
    let dir = tempfile::tempdir().unwrap();
    let pattern = dir.path().join("c-%p.json");
    let o = cmd(&["forkexit"], Some(pattern.to_str().unwrap())).output().unwrap();
    let (out, err) = text(&o);
    assert!(o.status.success(), "{out}\n{err}");
    let child: u32 = kv(&out)["child_pid"].parse().unwrap();
    let parent = json(&dir.path().join(format!("c-{}.json", find_parent(dir.path(), child))));
    let kid = json(&dir.path().join(format!("c-{child}.json")));
    assert_eq!(kid["pid"], child);
    assert_eq!(kid["calls"], serde_json::json!({"cuMemAlloc_v2": 4, "cuDriverGetVersion": 1}), "{kid}");
    assert_eq!(kid["failures"], serde_json::json!({"cuMemAlloc_v2": 4}), "{kid}");
    assert_eq!(kid["state"], "exit");
    // The parent's file has the parent's calls only: two allocations, one copy.
    assert_eq!(parent["calls"]["cuMemAlloc_v2"], 2, "{parent}");
    assert_eq!(parent["copies"]["HtoD"]["count"], 1, "{parent}");
    assert!(parent["calls"].get("cuDriverGetVersion").is_none(), "{parent}");
    // Without %p the child writes nothing: the one file is the parent's.
    let fixed = dir.path().join("fixed.json");
    let o = cmd(&["forkexit"], Some(fixed.to_str().unwrap())).output().unwrap();
    assert!(o.status.success());
    let f = json(&fixed);
    assert_eq!(f["calls"]["cuMemAlloc_v2"], 2, "{f}");
    assert_ne!(f["pid"], kv(&text(&o).0)["child_pid"].parse::<u32>().unwrap());
}

/// The pid in the name of the counters file in `dir` that is not `child`'s.
fn find_parent(dir: &Path, child: u32) -> u32 {
    files(dir)
        .iter()
        .filter_map(|f| f.strip_prefix("c-").and_then(|r| r.strip_suffix(".json")).and_then(|p| p.parse::<u32>().ok()))
        .find(|&p| p != child)
        .expect("the parent's counters file")
}

/// Starts the client, waits for its "ready" line, lets `after` pass, kills it (SIGKILL).
fn kill_when_ready(args: &[&str], counts: &str, after: Duration) {
    let mut c = cmd(args, Some(counts)).stdout(Stdio::piped()).stderr(Stdio::null()).spawn().unwrap();
    let mut line = String::new();
    BufReader::new(c.stdout.take().unwrap()).read_line(&mut line).unwrap();
    assert_eq!(line.trim(), "ready");
    std::thread::sleep(after);
    c.kill().unwrap();
    c.wait().unwrap();
}

#[test]
fn a_program_killed_after_synchronous_copies_only_leaves_its_counters() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("c.json");
    kill_when_ready(&["syncs", "5"], path.to_str().unwrap(), Duration::from_millis(300));
    let c = json(&path);
    assert_eq!(c["state"], "checkpoint");
    assert_eq!(c["copies"]["HtoD"]["count"], 5, "{c}");
    assert_eq!(c["calls"]["cuMemcpyHtoD_v2"], 5, "{c}");
}

#[test]
fn an_unwritable_counters_path_is_reported_once() {
    let o = cmd(&["syncs", "40", "exit"], Some("/proc/simtwin-no-such-dir/c.json")).output().unwrap();
    let (out, err) = text(&o);
    assert!(o.status.success(), "{out}\n{err}");
    assert_eq!(err.matches("cannot write counters to /proc/simtwin-no-such-dir/c.json").count(), 1, "{err}");
}

#[test]
fn kills_at_any_moment_leave_no_temporary_file() {
    let dir = tempfile::tempdir().unwrap();
    let pattern = dir.path().join("c-%p.json");
    for i in 0..8u64 {
        kill_when_ready(&["copies"], pattern.to_str().unwrap(), Duration::from_millis(20 + 37 * i));
    }
    let names = files(dir.path());
    assert_eq!(names.len(), 8, "{names:?}");
    for n in &names {
        assert!(n.starts_with("c-") && n.ends_with(".json"), "left behind: {n} ({names:?})");
        assert_eq!(json(&dir.path().join(n))["state"], "checkpoint");
    }
}

#[test]
fn a_copy_from_unreadable_host_memory_dies_of_sigsegv_with_a_report_and_counters() {
    use std::os::unix::process::ExitStatusExt;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("c.json");
    let o = cmd(&["hostmem"], Some(path.to_str().unwrap())).output().unwrap();
    let (out, err) = text(&o);
    assert_eq!(o.status.signal(), Some(libc::SIGSEGV), "{out}\n{err}");
    assert!(out.contains("copying") && !out.contains("copy="), "{out}");
    assert!(err.contains("the driver's copy read the host address 0x") && err.contains("(byte 0 of the source"), "{err}");
    let c = json(&path);
    assert_eq!(c["state"], serde_json::json!({"signal": "SIGSEGV"}), "{c}");
    let h = &c["hazards"][0];
    assert_eq!(h["kind"], "host-memory-fault", "{c}");
    assert!(h["operation"].as_str().unwrap().starts_with("copy of 4096 bytes from host memory at 0x"), "{h}");
}

/// Runs `c` to its end, at most `limit`: its output, or None if it had to be killed.
fn run_within(mut c: Command, limit: Duration) -> Option<std::process::Output> {
    let mut child = c.stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    let t0 = std::time::Instant::now();
    while t0.elapsed() < limit {
        if child.try_wait().unwrap().is_some() {
            return Some(child.wait_with_output().unwrap());
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let _ = child.kill();
    let _ = child.wait();
    None
}

#[test]
fn a_trace_path_that_is_not_a_regular_file_is_refused_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("t.fifo");
    let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: mkfifo with a NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    let d = dir.path().to_str().unwrap().to_string();
    for (path, says) in [
        (fifo.to_str().unwrap(), "it is a FIFO (named pipe) with no reader"),
        ("/dev/full", "it is a character device"),
        (&d, "Is a directory"),
    ] {
        let mut c = cmd(&["syncs", "3", "exit"], None);
        c.env("EMU_CUDA_TRACE", path);
        let o = run_within(c, Duration::from_secs(60)).unwrap_or_else(|| panic!("EMU_CUDA_TRACE={path}: the program hung"));
        let (out, err) = text(&o);
        assert!(o.status.success() && out.contains("ready"), "{path}: {out}\n{err}");
        let line = format!("EMU_CUDA_TRACE={path}: cannot create the trace file: ");
        assert_eq!(err.matches(&line).count(), 1, "{path}: {err}");
        assert!(err.contains(says), "{path}: {err}");
    }
    use std::os::unix::fs::FileTypeExt;
    assert!(std::fs::metadata(&fifo).unwrap().file_type().is_fifo(), "the FIFO is left alone");
}
