//! Running extractor commands: binary lookup with a clear error, stdout/stderr captured
//! to log files, a progress spinner while they run, and a time limit.
//!
//! Every command runs in a process group of its own, so that a timeout (or parity being
//! interrupted) ends the whole tree it started, not just its first process: on timeout
//! the group gets SIGTERM, then SIGKILL after [`GRACE`]. Processes of the group still
//! alive after the first one exits are ended the same way.
//!
//! What leaves the group (`setsid`, a daemon's double fork) is still a descendant: parity
//! is a child subreaper (`PR_SET_CHILD_SUBREAPER`), so such a process becomes parity's
//! child once its parent exits, and every run ends by ending (and reaping) parity's
//! children that are not its own runs. The extractor gets SIGKILL if parity itself dies
//! (`PR_SET_PDEATHSIG`), even of SIGKILL. Its stdout and stderr reach their log files
//! through pipes that parity copies, at most [`LOG_CAP`] bytes each (the rest is counted
//! and dropped, with a note at the end of the log).

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
/// Bytes of an extractor's stdout (and of its stderr) kept in its log.
pub const LOG_CAP: u64 = 64 << 20;

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
        [&self.stdout, &self.stderr]
            .iter()
            .any(|p| crate::input::read(p, "log").map(|t| String::from_utf8_lossy(&t).contains(needle)).unwrap_or(false))
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
    let path =
        env.iter().rev().find(|(k, _)| k == "PATH").map(|(_, v)| v.clone()).or_else(|| std::env::var("PATH").ok()).unwrap_or_default();
    path.split(':').filter(|d| !d.is_empty()).map(|d| Path::new(d).join(prog)).find(|p| is_exec(p))
}

/// The last `lines` lines of a log (at most its last 64 KiB are read).
pub fn tail(path: &Path, lines: usize) -> String {
    let t = crate::input::read_tail(path, 64 << 10);
    let v: Vec<&str> = t.lines().collect();
    v[v.len().saturating_sub(lines)..].join("\n")
}

/// The first non-empty line of a log ("" when there is none; its first 64 KiB are read).
pub fn first_line(path: &Path) -> String {
    crate::input::read_head(path, 64 << 10).lines().map(str::trim).find(|l| !l.is_empty()).unwrap_or("").to_string()
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
    cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
    let logs = [
        std::fs::File::create(&stdout).with_context(|| format!("cannot create {}", stdout.display()))?,
        std::fs::File::create(&stderr).with_context(|| format!("cannot create {}", stderr.display()))?,
    ];
    // Where counters go is parity's choice per run: a run it gives no counters file (the
    // CPU side) writes none, even under `simtwin run`, whose pattern it inherits.
    cmd.env_remove("EMU_CUDA_COUNTS");
    for (k, v) in &spec.env {
        cmd.env(k, v);
    }
    install_signal_handlers();
    die_with_parity(&mut cmd);
    let pb =
        if spec.spinner { spinner(format!("{}: {}", spec.label, crate::template::display(&spec.argv))) } else { ProgressBar::hidden() };
    let t0 = Instant::now();
    let child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) => {
            pb.finish_and_clear();
            return Err(e).with_context(|| format!("{}: cannot start {prog}", spec.label));
        }
    };
    let mut child = child;
    let [log_out, log_err] = logs;
    let copiers = [copy_capped(child.stdout.take(), log_out, "stdout"), copy_capped(child.stderr.take(), log_err, "stderr")];
    let pg = child.id() as i32;
    CURRENT_GROUP.store(pg, Ordering::SeqCst);
    let waited = wait_limited(child, t0, pg, spec.timeout);
    let stragglers = end_stragglers(pg) | end_orphans();
    for c in copiers {
        // Whatever still holds the pipes has been ended; a copier that does not finish
        // is left behind rather than waited for.
        let _ = c.recv_timeout(GRACE);
    }
    CURRENT_GROUP.store(0, Ordering::SeqCst);
    pb.finish_and_clear();
    let (status, elapsed, timed_out) = waited?;
    let status = status.with_context(|| format!("{}: cannot wait for {prog}", spec.label))?;
    let ended = if timed_out { Ended::TimedOut } else { ended_of(status) };
    Ok(Finished { ended, elapsed, stdout, stderr, stragglers })
}

/// Makes parity a child subreaper (once): descendants that leave a run's process group
/// become its children when their parent exits, so `end_orphans` finds them.
fn become_subreaper() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    // SAFETY: prctl with integer arguments.
    ONCE.call_once(|| unsafe {
        libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
    });
}

/// The command's first process gets SIGKILL when parity dies (of any signal, SIGKILL
/// included), and parity becomes a subreaper.
fn die_with_parity(cmd: &mut Command) {
    become_subreaper();
    // SAFETY: getpid has no preconditions.
    let parent = unsafe { libc::getpid() };
    // SAFETY: the closure runs in the child between fork and exec and only calls
    // async-signal-safe functions (prctl, getppid, raise).
    unsafe {
        cmd.pre_exec(move || {
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0);
            if libc::getppid() != parent {
                libc::raise(libc::SIGKILL); // parity died before the prctl took effect
            }
            Ok(())
        });
    }
}

/// Copies a child's stdout or stderr (`what`) into its log, at most [`LOG_CAP`] bytes;
/// the rest is read and counted, and the log ends with a note saying how much was
/// dropped. The receiver gets a message when the pipe has closed and the log is written.
fn copy_capped(from: Option<impl std::io::Read + Send + 'static>, mut to: std::fs::File, what: &'static str) -> mpsc::Receiver<()> {
    use std::io::Write;
    let (tx, rx) = mpsc::channel();
    let Some(mut from) = from else {
        let _ = tx.send(());
        return rx;
    };
    let spawned = std::thread::Builder::new().name("parity-log".into()).spawn(move || {
        let (mut kept, mut dropped) = (0u64, 0u64);
        let mut buf = vec![0u8; 64 << 10];
        loop {
            let n = match from.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(_) => break,
            };
            let keep = (LOG_CAP - kept).min(n as u64) as usize;
            if keep > 0 && to.write_all(&buf[..keep]).is_err() {
                dropped += keep as u64;
            } else {
                kept += keep as u64;
            }
            dropped += (n - keep) as u64;
        }
        if dropped > 0 {
            let _ = writeln!(to, "\n[parity: {dropped} more bytes of {what} dropped: logs keep the first {} MiB]", LOG_CAP >> 20);
        }
        let _ = tx.send(());
    });
    if spawned.is_err() {
        // No copier: the pipe closes and the extractor gets SIGPIPE on its next write.
        let (tx, rx) = mpsc::channel();
        let _ = tx.send(());
        return rx;
    }
    rx
}

/// `pid -> (ppid, state)` of every process (from /proc).
fn process_table() -> std::collections::HashMap<i32, (i32, char)> {
    let mut t = std::collections::HashMap::new();
    let Ok(rd) = std::fs::read_dir("/proc") else { return t };
    for e in rd.flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<i32>() else { continue };
        let stat = std::fs::read_to_string(e.path().join("stat")).unwrap_or_default();
        let mut f = stat.rsplit_once(')').map(|(_, rest)| rest).unwrap_or("").split_whitespace();
        let state = f.next().and_then(|s| s.chars().next()).unwrap_or('X');
        if let Some(ppid) = f.next().and_then(|x| x.parse::<i32>().ok()) {
            t.insert(pid, (ppid, state));
        }
    }
    t
}

/// Ends every child of parity (processes that left a run's group and were re-parented
/// to parity, the subreaper) and their descendants: SIGTERM, then SIGKILL after GRACE;
/// reaps them. Called when a run has ended (runs are sequential: parity has no other
/// child then). True when there were any.
fn end_orphans() -> bool {
    // SAFETY: getpid has no preconditions.
    let me = unsafe { libc::getpid() };
    let t0 = Instant::now();
    let mut any = false;
    loop {
        let table = process_table();
        let mut tree: Vec<i32> = table.iter().filter(|(_, (pp, _))| *pp == me).map(|(p, _)| *p).collect();
        let mut i = 0;
        while i < tree.len() {
            let p = tree[i];
            tree.extend(table.iter().filter(|(_, (pp, _))| *pp == p).map(|(c, _)| *c));
            i += 1;
        }
        // Reap what has exited; signal the rest.
        let mut live = false;
        for &p in &tree {
            if table.get(&p).is_some_and(|(pp, st)| *pp == me && (*st == 'Z' || *st == 'X')) {
                // SAFETY: p is our own (zombie) child.
                unsafe { libc::waitpid(p, std::ptr::null_mut(), libc::WNOHANG) };
                continue;
            }
            live = true;
            let sig = if t0.elapsed() < GRACE { libc::SIGTERM } else { libc::SIGKILL };
            // SAFETY: kill(2) on a descendant of ours.
            unsafe { libc::kill(p, sig) };
        }
        if tree.is_empty() || (!live && t0.elapsed() > Duration::from_millis(100)) {
            break;
        }
        any |= live;
        if t0.elapsed() > GRACE * 3 {
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    any
}

/// Waits for the child up to `limit`; past it, SIGTERM to its group, SIGKILL after
/// GRACE. Returns its status, the time to its exit and whether the limit was reached.
fn wait_limited(
    mut child: std::process::Child,
    t0: Instant,
    pg: i32,
    limit: Duration,
) -> Result<(std::io::Result<ExitStatus>, Duration, bool)> {
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
    die_with_parity(cmd);
    let t0 = Instant::now();
    let mut child = cmd.spawn().with_context(|| format!("cannot run {what}"))?;
    let pg = child.id() as i32;
    let readers: Vec<_> = [
        child.stdout.take().map(|o| Box::new(o) as Box<dyn Read + Send>),
        child.stderr.take().map(|e| Box::new(e) as Box<dyn Read + Send>),
    ]
    .into_iter()
    .map(|r| {
        std::thread::spawn(move || {
            let mut v = Vec::new();
            if let Some(r) = r {
                let mut r = r.take(LOG_CAP);
                let _ = r.read_to_end(&mut v);
                // The rest is read and dropped, so the command does not block on a full pipe.
                let _ = std::io::copy(&mut r.into_inner(), &mut std::io::sink());
            }
            v
        })
    })
    .collect();
    CURRENT_GROUP.store(pg, Ordering::SeqCst);
    let waited = wait_limited(child, t0, pg, limit);
    end_stragglers(pg);
    end_orphans();
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
        Ended::TimedOut => {
            format!("timed out after {} (killed with its process group; raise the limit with --timeout SECONDS)", fmt_secs(spec.timeout))
        }
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
        let e =
            output_limited(Command::new("sh").args(["-c", "sleep 30 & sleep 30"]), "a sleeper", Duration::from_millis(300)).unwrap_err();
        assert!(t0.elapsed() < Duration::from_secs(10), "{:?}", t0.elapsed());
        assert_eq!(e.to_string(), "a sleeper timed out after 0.3 s (killed with its process group)");
    }

    fn spec(dir: &Path, script: &str, timeout: Duration) -> Spec {
        Spec {
            label: "t".into(),
            argv: vec!["sh".into(), "-c".into(), script.into()],
            env: vec![],
            log_dir: dir.to_path_buf(),
            spinner: false,
            timeout,
        }
    }

    fn alive(pid: i32) -> bool {
        // A zombie is not alive (nothing reaps it in a test process's namespace, maybe).
        std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .map(|s| !s.rsplit_once(')').is_some_and(|(_, r)| r.trim_start().starts_with('Z')))
            .unwrap_or(false)
    }

    #[test]
    fn processes_that_leave_the_group_are_ended_with_the_run() {
        let d = tempfile::tempdir().unwrap();
        let pids = d.path().join("pids");
        // One daemonised with setsid, one in the background of the group, one double-forked.
        let script = format!(
            "setsid sleep 300 & echo $! >> {p}; sleep 300 & echo $! >> {p}; (setsid sh -c 'sleep 300 & echo $! >> {p}; wait' &); sleep 0.2; exit 0",
            p = pids.display()
        );
        let f = execute(&spec(d.path(), &script, Duration::from_secs(30))).unwrap();
        assert_eq!(f.ended, Ended::Exit(0));
        assert!(f.stragglers);
        let list: Vec<i32> = std::fs::read_to_string(&pids).unwrap().split_whitespace().map(|x| x.parse().unwrap()).collect();
        assert_eq!(list.len(), 3, "{list:?}");
        for p in list {
            assert!(!alive(p), "process {p} outlived its run");
        }
    }

    #[test]
    fn a_run_past_its_limit_takes_its_setsid_children_with_it() {
        let d = tempfile::tempdir().unwrap();
        let pids = d.path().join("pids");
        let script = format!("setsid sleep 300 & echo $! > {p}; sleep 300", p = pids.display());
        let f = execute(&spec(d.path(), &script, Duration::from_millis(500))).unwrap();
        assert_eq!(f.ended, Ended::TimedOut);
        let p: i32 = std::fs::read_to_string(&pids).unwrap().trim().parse().unwrap();
        assert!(!alive(p), "the setsid child {p} outlived the timed-out run");
    }

    #[test]
    fn logs_are_capped_and_say_how_much_was_dropped() {
        let d = tempfile::tempdir().unwrap();
        let n = LOG_CAP + 3_000_000;
        let f = execute(&spec(d.path(), &format!("head -c {n} /dev/zero; echo err >&2"), Duration::from_secs(60))).unwrap();
        assert_eq!(f.ended, Ended::Exit(0));
        let len = std::fs::metadata(&f.stdout).unwrap().len();
        assert!(len > LOG_CAP && len < LOG_CAP + 200, "{len}");
        assert!(tail(&f.stdout, 1).contains("[parity: 3000000 more bytes of stdout dropped"), "{}", tail(&f.stdout, 1));
        assert_eq!(first_line(&f.stderr), "err");
    }

    #[test]
    fn timeouts_parse_and_print() {
        assert_eq!(parse_timeout("2.5"), Ok(2.5));
        assert!(
            parse_timeout("0").is_err() && parse_timeout("-1").is_err() && parse_timeout("nan").is_err() && parse_timeout("x").is_err()
        );
        assert_eq!(fmt_secs(Duration::from_secs(600)), "600 s");
        assert_eq!(fmt_secs(Duration::from_millis(1500)), "1.5 s");
        assert_eq!(signal_name(libc::SIGSEGV), "SIGSEGV");
    }
}
