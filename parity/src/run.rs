//! Running extractor commands: binary lookup with a clear error, stdout/stderr captured
//! to log files, a progress spinner while they run, and a time limit.
//!
//! Every command runs in a process group of its own, so that a timeout (or parity being
//! interrupted) ends the whole tree it started, not just its first process: on timeout
//! the group gets SIGTERM, then SIGKILL after [`GRACE`]. Processes of the group still
//! alive after the first one exits are ended the same way.

use anyhow::{bail, Context, Result};
use indicatif::{ProgressBar, ProgressStyle};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// Time limit of one extractor run when none is given (`--timeout`).
pub const DEFAULT_TIMEOUT_S: f64 = 600.0;
/// Between SIGTERM and SIGKILL.
pub const GRACE: Duration = Duration::from_secs(2);

#[derive(Debug, Clone)]
pub struct Spec {
    pub label: String,
    pub argv: Vec<String>,
    pub env: Vec<(String, String)>,
    pub log_dir: PathBuf,
    /// Show a spinner while it runs (off when the caller draws its own progress bar).
    pub spinner: bool,
    /// Time limit; the run is killed with its process group when it is reached.
    pub timeout: Duration,
}

/// How a run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Ended {
    /// Exit status.
    Exit(i32),
    /// Killed by this signal (not by parity).
    Signal(i32),
    /// Reached the time limit and was killed by parity.
    TimedOut,
}

/// A run that ended, successfully or not.
#[derive(Debug, Clone)]
pub struct Finished {
    pub ended: Ended,
    pub elapsed: Duration,
    pub stdout: PathBuf,
    pub stderr: PathBuf,
    /// Processes of its group were still running after it ended (and were ended).
    pub stragglers: bool,
}

#[derive(Debug, Clone)]
pub struct Outcome {
    pub elapsed: Duration,
    pub stdout: PathBuf,
    pub stderr: PathBuf,
}

impl Outcome {
    pub fn logs_contain(&self, needle: &str) -> bool {
        [&self.stdout, &self.stderr].iter().any(|p| std::fs::read_to_string(p).map(|t| t.contains(needle)).unwrap_or(false))
    }
}

/// Parses `--timeout SECONDS` (a positive number).
pub fn parse_timeout(s: &str) -> std::result::Result<f64, String> {
    match s.parse::<f64>() {
        Ok(x) if x.is_finite() && x > 0.0 && x <= 1e7 => Ok(x),
        _ => Err(format!("'{s}' is not a positive number of seconds")),
    }
}

/// `12 s`, `1.5 s`.
pub fn fmt_secs(d: Duration) -> String {
    let s = d.as_secs_f64();
    if s == s.round() {
        format!("{s:.0} s")
    } else {
        format!("{s:.1} s")
    }
}

/// Finds the program the way execvp would, for a clear error before spawning.
pub fn find_program(prog: &str, env: &[(String, String)]) -> Option<PathBuf> {
    let is_exec = |p: &Path| {
        use std::os::unix::fs::PermissionsExt;
        p.is_file() && p.metadata().map(|m| m.permissions().mode() & 0o111 != 0).unwrap_or(false)
    };
    if prog.contains('/') {
        let p = PathBuf::from(prog);
        return is_exec(&p).then_some(p);
    }
    let path = env.iter().rev().find(|(k, _)| k == "PATH").map(|(_, v)| v.clone()).or_else(|| std::env::var("PATH").ok()).unwrap_or_default();
    path.split(':').filter(|d| !d.is_empty()).map(|d| Path::new(d).join(prog)).find(|p| is_exec(p))
}

pub fn tail(path: &Path, lines: usize) -> String {
    let t = std::fs::read_to_string(path).unwrap_or_default();
    let v: Vec<&str> = t.lines().collect();
    v[v.len().saturating_sub(lines)..].join("\n")
}

/// The first non-empty line of a file ("" when there is none).
pub fn first_line(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_default().lines().map(str::trim).find(|l| !l.is_empty()).unwrap_or("").to_string()
}

pub fn spinner(msg: String) -> ProgressBar {
    let pb = ProgressBar::new_spinner();
    pb.set_style(ProgressStyle::with_template("{spinner} {elapsed:>4} {msg}").unwrap());
    pb.set_message(msg);
    pb.enable_steady_tick(Duration::from_millis(120));
    pb
}

/// The process group of the run in progress (0: none), for the signal handler.
static CURRENT_GROUP: AtomicI32 = AtomicI32::new(0);

extern "C" fn on_fatal_signal(sig: libc::c_int) {
    let pg = CURRENT_GROUP.load(Ordering::SeqCst);
    // SAFETY: kill, signal and raise are async-signal-safe; the handler ends the
    // extractor's group, then lets the signal take its default course in parity.
    unsafe {
        if pg > 0 {
            libc::kill(-pg, libc::SIGKILL);
        }
        libc::signal(sig, libc::SIG_DFL);
        libc::raise(sig);
    }
}

/// parity interrupted (Ctrl-C, SIGTERM, SIGHUP) ends the extractor's group too: it runs
/// in a group of its own, which the terminal's signals no longer reach.
fn install_signal_handlers() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        for sig in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
            // SAFETY: installs a handler that only calls async-signal-safe functions.
            unsafe {
                libc::signal(sig, on_fatal_signal as extern "C" fn(libc::c_int) as libc::sighandler_t);
            }
        }
    });
}

fn signal_group(pg: i32, sig: i32) {
    // SAFETY: plain kill(2) on the process group parity created for this run.
    unsafe {
        libc::kill(-pg, sig);
    }
}

/// A process of the group is still running (zombies waiting to be reaped do not count:
/// where nothing reaps orphans, they would stay "alive" for kill(2) forever).
fn group_alive(pg: i32) -> bool {
    // SAFETY: signal 0 only checks that a process of the group exists.
    if unsafe { libc::kill(-pg, 0) } != 0 {
        return false;
    }
    let Ok(rd) = std::fs::read_dir("/proc") else { return true };
    rd.flatten().filter(|e| e.file_name().to_string_lossy().bytes().all(|b| b.is_ascii_digit())).any(|e| {
        let stat = std::fs::read_to_string(e.path().join("stat")).unwrap_or_default();
        // pid (comm) state ppid pgrp ...: comm may hold spaces and parentheses.
        let mut f = stat.rsplit_once(')').map(|(_, rest)| rest).unwrap_or("").split_whitespace();
        let state = f.next().unwrap_or("Z");
        let pgrp = f.nth(1).and_then(|x| x.parse::<i32>().ok());
        pgrp == Some(pg) && state != "Z" && state != "X"
    })
}

/// SIGTERM to what is left of the group, SIGKILL after GRACE; true when anything was left.
fn end_stragglers(pg: i32) -> bool {
    if !group_alive(pg) {
        return false;
    }
    signal_group(pg, libc::SIGTERM);
    let t0 = Instant::now();
    while group_alive(pg) && t0.elapsed() < GRACE {
        std::thread::sleep(Duration::from_millis(20));
    }
    if group_alive(pg) {
        signal_group(pg, libc::SIGKILL);
    }
    true
}

fn ended_of(status: ExitStatus) -> Ended {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(c), _) => Ended::Exit(c),
        (None, Some(s)) => Ended::Signal(s),
        _ => Ended::Exit(-1),
    }
}

/// Runs the command to its end or its time limit. Errors only when it cannot run at
/// all (missing binary, spawn failure); how it ended is in [`Finished::ended`].
pub fn execute(spec: &Spec) -> Result<Finished> {
    let prog = spec.argv.first().context("empty command")?;
    if find_program(prog, &spec.env).is_none() {
        bail!("{}: extractor binary not found or not executable: {prog}", spec.label);
    }
    std::fs::create_dir_all(&spec.log_dir).with_context(|| format!("cannot create {}", spec.log_dir.display()))?;
    let safe: String = spec.label.chars().map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '_' { c } else { '_' }).collect();
    let stdout = spec.log_dir.join(format!("{safe}.stdout.log"));
    let stderr = spec.log_dir.join(format!("{safe}.stderr.log"));
    let mut cmd = Command::new(prog);
    cmd.args(&spec.argv[1..]).stdin(Stdio::null()).process_group(0);
    cmd.stdout(std::fs::File::create(&stdout)?).stderr(std::fs::File::create(&stderr)?);
    // Where counters go is parity's choice per run: a run it gives no counters file (the
    // CPU side) writes none, even under `simtwin run`, whose pattern it inherits.
    cmd.env_remove("EMU_CUDA_COUNTS");
    for (k, v) in &spec.env {
        cmd.env(k, v);
    }
    install_signal_handlers();
    let pb = if spec.spinner { spinner(format!("{}: {}", spec.label, crate::template::display(&spec.argv))) } else { ProgressBar::hidden() };
    let t0 = Instant::now();
    let child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) => {
            pb.finish_and_clear();
            return Err(e).with_context(|| format!("{}: cannot start {prog}", spec.label));
        }
    };
    let pg = child.id() as i32;
    CURRENT_GROUP.store(pg, Ordering::SeqCst);
    let waited = wait_limited(child, t0, pg, spec.timeout);
    let stragglers = end_stragglers(pg);
    CURRENT_GROUP.store(0, Ordering::SeqCst);
    pb.finish_and_clear();
    let (status, elapsed, timed_out) = waited?;
    let status = status.with_context(|| format!("{}: cannot wait for {prog}", spec.label))?;
    let ended = if timed_out { Ended::TimedOut } else { ended_of(status) };
    Ok(Finished { ended, elapsed, stdout, stderr, stragglers })
}

/// Waits for the child up to `limit`; past it, SIGTERM to its group, SIGKILL after
/// GRACE. Returns its status, the time to its exit and whether the limit was reached.
fn wait_limited(mut child: std::process::Child, t0: Instant, pg: i32, limit: Duration) -> Result<(std::io::Result<ExitStatus>, Duration, bool)> {
    // The waiter takes the time at the exit itself (no polling granularity in bench).
    let (tx, rx) = mpsc::channel();
    let waiter = std::thread::spawn(move || {
        let st = child.wait();
        let _ = tx.send((st, t0.elapsed()));
    });
    let r = match rx.recv_timeout(limit) {
        Ok((st, el)) => (st, el, false),
        Err(_) => {
            signal_group(pg, libc::SIGTERM);
            let (st, el) = match rx.recv_timeout(GRACE) {
                Ok(r) => r,
                Err(_) => {
                    signal_group(pg, libc::SIGKILL);
                    rx.recv().context("lost the extractor's exit status")?
                }
            };
            (st, el, true)
        }
    };
    let _ = waiter.join();
    Ok(r)
}

/// `Command::output` with a time limit (for parity's own helpers: the driver probe, the
/// fixtures binary): the command runs in its own process group, which is killed at the
/// limit; that is an error naming `what`.
pub fn output_limited(cmd: &mut Command, what: &str, limit: Duration) -> Result<std::process::Output> {
    use std::io::Read;
    cmd.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped()).process_group(0);
    install_signal_handlers();
    let t0 = Instant::now();
    let mut child = cmd.spawn().with_context(|| format!("cannot run {what}"))?;
    let pg = child.id() as i32;
    let readers: Vec<_> = [child.stdout.take().map(|o| Box::new(o) as Box<dyn Read + Send>), child.stderr.take().map(|e| Box::new(e) as Box<dyn Read + Send>)]
        .into_iter()
        .map(|r| {
            std::thread::spawn(move || {
                let mut v = Vec::new();
                if let Some(mut r) = r {
                    let _ = r.read_to_end(&mut v);
                }
                v
            })
        })
        .collect();
    CURRENT_GROUP.store(pg, Ordering::SeqCst);
    let waited = wait_limited(child, t0, pg, limit);
    end_stragglers(pg);
    CURRENT_GROUP.store(0, Ordering::SeqCst);
    let (status, _, timed_out) = waited?;
    let mut outs = readers.into_iter().map(|h| h.join().unwrap_or_default());
    let (stdout, stderr) = (outs.next().unwrap_or_default(), outs.next().unwrap_or_default());
    if timed_out {
        bail!("{what} timed out after {} (killed with its process group)", fmt_secs(limit));
    }
    Ok(std::process::Output { status: status.with_context(|| format!("cannot wait for {what}"))?, stdout, stderr })
}

/// Runs the command; a missing binary, a spawn failure, a non-zero exit status, a
/// signal or the time limit is an error naming the command and showing the end of its
/// stderr.
pub fn run(spec: &Spec) -> Result<Outcome> {
    let f = execute(spec)?;
    let how = match f.ended {
        Ended::Exit(0) => return Ok(Outcome { elapsed: f.elapsed, stdout: f.stdout, stderr: f.stderr }),
        Ended::Exit(c) => format!("failed with exit status {c}"),
        Ended::Signal(s) => format!("failed with signal {s} ({})", signal_name(s)),
        Ended::TimedOut => format!("timed out after {} (killed with its process group; raise the limit with --timeout SECONDS)", fmt_secs(spec.timeout)),
    };
    bail!(
        "{} extractor {how}: {}\n--- last lines of {} ---\n{}",
        spec.label,
        crate::template::display(&spec.argv),
        f.stderr.display(),
        tail(&f.stderr, 15)
    )
}

/// SIGSEGV, SIGABRT, ... (or `signal N`).
pub fn signal_name(s: i32) -> String {
    let n = match s {
        libc::SIGHUP => "SIGHUP",
        libc::SIGINT => "SIGINT",
        libc::SIGQUIT => "SIGQUIT",
        libc::SIGILL => "SIGILL",
        libc::SIGTRAP => "SIGTRAP",
        libc::SIGABRT => "SIGABRT",
        libc::SIGBUS => "SIGBUS",
        libc::SIGFPE => "SIGFPE",
        libc::SIGKILL => "SIGKILL",
        libc::SIGSEGV => "SIGSEGV",
        libc::SIGPIPE => "SIGPIPE",
        libc::SIGALRM => "SIGALRM",
        libc::SIGTERM => "SIGTERM",
        libc::SIGSYS => "SIGSYS",
        _ => return format!("signal {s}"),
    };
    n.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limited_output_collects_both_streams_and_kills_at_the_limit() {
        let o = output_limited(Command::new("sh").args(["-c", "echo out; echo err >&2; exit 3"]), "sh", Duration::from_secs(20)).unwrap();
        assert_eq!((o.status.code(), o.stdout.as_slice(), o.stderr.as_slice()), (Some(3), &b"out\n"[..], &b"err\n"[..]));
        let t0 = Instant::now();
        // the shell and its sleeping child share the group: both end at the limit
        let e = output_limited(Command::new("sh").args(["-c", "sleep 30 & sleep 30"]), "a sleeper", Duration::from_millis(300)).unwrap_err();
        assert!(t0.elapsed() < Duration::from_secs(10), "{:?}", t0.elapsed());
        assert_eq!(e.to_string(), "a sleeper timed out after 0.3 s (killed with its process group)");
    }

    #[test]
    fn timeouts_parse_and_print() {
        assert_eq!(parse_timeout("2.5"), Ok(2.5));
        assert!(parse_timeout("0").is_err() && parse_timeout("-1").is_err() && parse_timeout("nan").is_err() && parse_timeout("x").is_err());
        assert_eq!(fmt_secs(Duration::from_secs(600)), "600 s");
        assert_eq!(fmt_secs(Duration::from_millis(1500)), "1.5 s");
        assert_eq!(signal_name(libc::SIGSEGV), "SIGSEGV");
    }
}
