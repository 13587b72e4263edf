//! driver-conformance: runs a table of named driver-API cases against a libcuda.so.1
//! loaded by path and prints what the driver answered, one line per observation:
//!
//! ```text
//! case_name: CUDA_SUCCESS
//! case_name.detail: CUDA_ERROR_INVALID_VALUE value=...
//! ```
//!
//! The same binary runs against the real driver (to record ground truth) and against the
//! emulated one (to compare with it). Values that legitimately differ between two runs or
//! two devices (timings, addresses, free memory, PCI location) are normalised here, by the
//! runner, into words such as `ok`, `in-range`, `nonzero`.
//!
//! Every case runs in its own child process (the runner re-executes itself with
//! `--case NAME`), so sticky errors, crashes and hangs stay inside one case. Lines that a
//! child writes to stdout without the `@@ ` marker (e.g. a device assert's message, which
//! the real driver prints to stdout) go to stderr. Lines starting with `#` are comments.

mod api;
#[macro_use]
mod cx;
mod cases;
mod opts;
use opts::Opts;
/// cuda.h's codes, types and structs: the workspace's one list (simtwin-abi's), included
/// as a file so that this runner stays a standalone crate with two dependencies.
#[allow(dead_code)]
#[path = "../../../abi/src/cuda.rs"]
mod cuda;

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

const USAGE: &str = "\
usage: driver-conformance --lib PATH [--fatbin FILE] [--fatbin-nosm90 FILE] [--kernels DIR]
                          [--out FILE] [--only NAME[,NAME...]] [--timeout SECONDS]
                          [--jobs N]
       driver-conformance --list
       driver-conformance --lib PATH --case NAME [...]   (one case, in this process)

  --lib PATH            the libcuda.so.1 to test (real or emulated), loaded by path
  --fatbin FILE         fatbin built by nvcc from kernels/conformance.cu with an sm_90
                        cubin (see build.sh); module and launch cases need it
  --fatbin-nosm90 FILE  fatbin with only an sm_80 cubin and compute_120 PTX
                        (default: nosm90.fatbin next to --fatbin)
  --kernels DIR         host kernel libraries (kernels-host build); exported to the
                        cases as EMU_CUDA_KERNELS (harmless for the real driver)
  --out FILE            write the result lines there instead of stdout
  --only LIST           run only these cases (comma separated; NAME* selects every
                        case whose name starts with NAME, e.g. ctxres_*,devres_*)
  --timeout SECONDS     per-case limit (default 60); a case over it reads TIMEOUT
  --jobs N              run up to N case processes at once (default 1); the output
                        keeps the case order

example (on the GPU machine):
  ./driver-conformance --lib /usr/lib/x86_64-linux-gnu/libcuda.so.1 \\
      --fatbin out/conformance.fatbin --out h200-conformance.txt";

fn parse_args() -> Result<Opts, String> {
    let mut o = Opts { timeout: 60, jobs: 1, ..Default::default() };
    let mut it = std::env::args().skip(1);
    while let Some(a) = it.next() {
        let mut val = |name: &str| it.next().ok_or_else(|| format!("{name} needs a value"));
        match a.as_str() {
            "--lib" => o.lib = Some(val("--lib")?),
            "--fatbin" => o.fatbin = Some(val("--fatbin")?),
            "--fatbin-nosm90" => o.fatbin_nosm90 = Some(val("--fatbin-nosm90")?),
            "--kernels" => o.kernels = Some(val("--kernels")?),
            "--out" => o.out = Some(val("--out")?),
            "--only" => o.only = Some(val("--only")?.split(',').map(|s| s.trim().to_string()).collect()),
            "--case" => o.case = Some(val("--case")?),
            "--timeout" => o.timeout = val("--timeout")?.parse().map_err(|_| "--timeout needs a number of seconds".to_string())?,
            "--jobs" => {
                o.jobs = val("--jobs")?.parse().ok().filter(|&n: &usize| n >= 1).ok_or_else(|| "--jobs needs a number >= 1".to_string())?
            }
            "--list" => o.list = true,
            "-h" | "--help" => {
                println!("{USAGE}");
                std::process::exit(0);
            }
            other => return Err(format!("unknown argument {other}")),
        }
    }
    if o.fatbin_nosm90.is_none() {
        if let Some(f) = &o.fatbin {
            let p = std::path::Path::new(f).with_file_name("nosm90.fatbin");
            if p.exists() {
                o.fatbin_nosm90 = Some(p.to_string_lossy().into_owned());
            }
        }
    }
    Ok(o)
}

fn main() {
    let o = match parse_args() {
        Ok(o) => o,
        Err(e) => {
            eprintln!("driver-conformance: {e}\n{USAGE}");
            std::process::exit(2);
        }
    };
    if o.list {
        for c in cases::all() {
            println!("{}", c.name);
        }
        return;
    }
    let Some(lib) = o.lib.clone() else {
        eprintln!("driver-conformance: --lib is required\n{USAGE}");
        std::process::exit(2);
    };
    if let Some(name) = &o.case {
        std::process::exit(cases::run_child(&o, &lib, name));
    }
    // Parent: check the library loads at all before spawning anything, so a wrong path is
    // one clear error rather than a table of failures.
    if let Err(e) = api::Api::load(&lib) {
        eprintln!("driver-conformance: {e}");
        std::process::exit(2);
    }
    let all = cases::all();
    let selected: Vec<&cx::Case> = match &o.only {
        None => all.iter().collect(),
        Some(names) => {
            let mut v = Vec::new();
            for n in names {
                let picked: Vec<&cx::Case> = match n.strip_suffix('*') {
                    Some(prefix) => all.iter().filter(|c| c.name.starts_with(prefix)).collect(),
                    None => all.iter().filter(|c| &c.name == n).collect(),
                };
                if picked.is_empty() {
                    eprintln!("driver-conformance: no case named {n} (see --list)");
                    std::process::exit(2);
                }
                v.extend(picked);
            }
            v
        }
    };
    let mut lines: Vec<String> =
        vec![format!("# driver-conformance {} ({} cases); lib={}", env!("CARGO_PKG_VERSION"), selected.len(), lib)];
    for case_lines in run_all(&o, &selected) {
        lines.extend(case_lines);
    }
    let mut text = lines.join("\n");
    text.push('\n');
    match &o.out {
        Some(path) => {
            if let Err(e) = std::fs::write(path, &text) {
                eprintln!("driver-conformance: cannot write {path}: {e}");
                std::process::exit(2);
            }
        }
        None => {
            let _ = std::io::stdout().write_all(text.as_bytes());
        }
    }
}

/// Runs the cases, up to `o.jobs` child processes at a time; returns their lines in
/// case order.
fn run_all(o: &Opts, cases: &[&cx::Case]) -> Vec<Vec<String>> {
    let names: Vec<&str> = cases.iter().map(|c| c.name.as_str()).collect();
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Mutex;
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<Vec<String>>>> = Mutex::new(vec![None; cases.len()]);
    std::thread::scope(|scope| {
        for _ in 0..o.jobs.min(cases.len().max(1)) {
            scope.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::SeqCst);
                let Some(name) = names.get(i) else { break };
                let lines = run_isolated(o, name);
                results.lock().unwrap()[i] = Some(lines);
            });
        }
    });
    results.into_inner().unwrap().into_iter().map(|r| r.unwrap_or_default()).collect()
}

/// Runs one case in a child process and returns its lines (plus a CRASHED / TIMEOUT /
/// EXITED line when the child did not finish normally).
fn run_isolated(o: &Opts, name: &str) -> Vec<String> {
    let exe = std::env::current_exe().expect("current_exe");
    let mut cmd = Command::new(exe);
    cmd.arg("--lib").arg(o.lib.as_ref().unwrap()).arg("--case").arg(name);
    if let Some(f) = &o.fatbin {
        cmd.arg("--fatbin").arg(f);
    }
    if let Some(f) = &o.fatbin_nosm90 {
        cmd.arg("--fatbin-nosm90").arg(f);
    }
    if let Some(k) = &o.kernels {
        cmd.arg("--kernels").arg(k);
        cmd.env("EMU_CUDA_KERNELS", k);
    }
    cmd.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::inherit());
    let mut child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) => return vec![format!("{name}: RUNNER_ERROR(spawn: {e})")],
    };
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = mpsc::channel::<String>();
    let reader = std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let deadline = Instant::now() + Duration::from_secs(o.timeout);
    let mut out = Vec::new();
    let mut ended = false;
    let mut timed_out = false;
    loop {
        match rx.recv_timeout(Duration::from_millis(50)) {
            Ok(line) => {
                if let Some(l) = line.strip_prefix("@@ ") {
                    let ok = l.starts_with(name) && matches!(l.as_bytes().get(name.len()), Some(b':') | Some(b'.'));
                    out.push(if ok { l.to_string() } else { format!("{name}: {l}") });
                } else if line == "@@end" {
                    ended = true;
                } else {
                    eprintln!("[{name} stdout] {line}");
                }
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
            Err(mpsc::RecvTimeoutError::Timeout) => {
                if Instant::now() > deadline {
                    timed_out = true;
                    let _ = child.kill();
                    break;
                }
            }
        }
    }
    let status = child.wait();
    let _ = reader.join();
    if timed_out {
        out.push(format!("{name}: TIMEOUT"));
    } else if !ended {
        use std::os::unix::process::ExitStatusExt;
        match status {
            Ok(s) if s.signal().is_some() => out.push(format!("{name}: CRASHED(signal {})", s.signal().unwrap())),
            Ok(s) => out.push(format!("{name}: EXITED({})", s.code().unwrap_or(-1))),
            Err(e) => out.push(format!("{name}: RUNNER_ERROR(wait: {e})")),
        }
    }
    if out.is_empty() {
        out.push(format!("{name}: NO_OUTPUT"));
    }
    out
}
