//! The `simtwin` front door: any command on the emulated driver, one summary.
//!
//! - `simtwin run [options] -- CMD ARGS...` puts simtwin's driver directory first on
//!   LD_LIBRARY_PATH (the user's entries kept after it) and simtwin's bin/ first on PATH,
//!   sets the `EMU_CUDA_*` settings from the options, gives every process its own
//!   counters file (`EMU_CUDA_COUNTS=DIR/counts-%p.json`), runs CMD with the terminal's
//!   stdin/stdout/stderr, and when it ends prints one summary of every process that
//!   loaded the driver ([`crate::run_summary`]). Tools that redirect the counters of
//!   their own children (parity) hand them on through `SIMTWIN_COUNTS_DIR`.
//! - `simtwin env` prints the same settings as shell `export` lines (or `$GITHUB_ENV`
//!   lines) for CI steps; `simtwin summary` summarises what those steps left.
//!
//! Exit codes (also in `simtwin --help` and docs/using-it.md): CMD's own status when it
//! fails (128 + N when it dies of signal N); when it exits 0, a documented code for
//! what simtwin saw that the device would not allow or that it does not emulate
//! ([`Gate::code`]: 80 unsupported calls, 81 hazards, 82 work that never ran, 83 leaks,
//! 84 no process loaded the driver, 85 kernel launches that failed); 125 simtwin itself
//! failed (bad option, no driver, a setting the driver refuses), 126 CMD is not
//! executable, 127 CMD not found.

use crate::counts::{hand_on, prepare_dir, HANDOFF_VAR};
use crate::device::{check_emulated_accepts, driver_env, find_simtwin, prepend_path};
use crate::junit::{Case, Outcome, Suite};
use crate::report;
use crate::run_summary::{CmdStatus, Gate, Policy, Usage};
use crate::settings::{effective, DriverSettings};
use anyhow::{bail, Context, Result};
use serde_json::json;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::time::Instant;

/// simtwin itself failed: bad option, no driver, a refused setting.
pub const EXIT_SIMTWIN: i32 = 125;
/// CMD exists but cannot be executed.
pub const EXIT_NOT_EXECUTABLE: i32 = 126;
/// CMD was not found.
pub const EXIT_NOT_FOUND: i32 = 127;

/// Where simtwin is and what the run checks (shared by run and summary).
#[derive(clap::Args, Debug, Clone, Default)]
pub struct GateArgs {
    /// Also fail on these (comma separated): hazards (even with --hazards warn), never-ran,
    /// leaks, no-driver; unsupported calls and failed launches always fail (see
    /// --allow-unsupported, --allow-failed-launches)
    #[arg(long, value_enum, value_delimiter = ',', value_name = "GATE,...")]
    pub fail_on: Vec<Gate>,
    /// Unsupported entry points that do not fail the run (comma separated, `*` wildcards),
    /// e.g. --allow-unsupported 'cuProfiler*'
    #[arg(long, value_delimiter = ',', value_name = "NAME,...")]
    pub allow_unsupported: Vec<String>,
    /// Kernels whose failed launches (a fault, trap or timeout while running) do not fail
    /// the run: a test that makes them fail on purpose (comma separated, `*` wildcards),
    /// e.g. --allow-failed-launches 'trap_*'
    #[arg(long, value_delimiter = ',', value_name = "KERNEL,...")]
    pub allow_failed_launches: Vec<String>,
}

impl GateArgs {
    fn policy(&self, env: &[(String, String)]) -> Policy {
        Policy {
            fail_on: self.fail_on.clone(),
            allow_unsupported: self.allow_unsupported.clone(),
            allow_failed_launches: self.allow_failed_launches.clone(),
            hazards_error: effective(env, "EMU_CUDA_HAZARDS").as_deref() == Some("error"),
        }
    }
}

/// The arguments of `simtwin run`.
#[derive(clap::Args, Debug, Clone)]
#[command(after_help = RUN_HELP)]
pub struct RunArgs {
    /// The driver's settings.
    #[command(flatten)]
    pub settings: DriverSettings,
    /// What fails the run.
    #[command(flatten)]
    pub gates: GateArgs,
    /// simtwin's install or build directory (default: the install this binary belongs
    /// to, else $SIMTWIN_DIR, else target/simtwin above the current directory)
    #[arg(long, value_name = "DIR")]
    pub simtwin: Option<PathBuf>,
    /// Keep the counters (DIR/counts/) and write DIR/summary.json, summary.md (for
    /// $GITHUB_STEP_SUMMARY) and junit.xml; without it the counters go to a temporary
    /// directory that is removed after the summary
    #[arg(long, value_name = "DIR")]
    pub report: Option<PathBuf>,
    /// The command and its arguments (after `--`)
    #[arg(required = true, trailing_var_arg = true, value_name = "CMD")]
    pub command: Vec<String>,
}

const RUN_HELP: &str = "\
Examples:
  simtwin run --kernels build/simtwin-kernels -- ./my-cuda-test
  simtwin run --kernels build/k --hazards error --report simtwin-report -- ctest --output-on-failure
  simtwin run --kernels build/k --fail-on leaks -- pytest -x tests/
  simtwin run --kernels target/k -- cargo test --release
  simtwin run --kernels build/k --report r -- meson test -C build
  simtwin run -- parity frames -r ref.yuv -d dis.yuv -W 576 -H 324 --features psnr --preset vmaf-fork

Exit codes: CMD's own status when it fails (128+N: killed by signal N); when it exits 0:
80 calls of entry points the emulated driver does not implement, 81 hazards (with
--hazards error, or --fail-on hazards), 82 work that never ran (--fail-on never-ran),
83 leaks (--fail-on leaks), 84 no process loaded simtwin's driver (--fail-on no-driver),
85 kernel launches that failed while running, which CMD went on from (see
--allow-failed-launches); 125 simtwin failed (bad option, no driver, a setting the driver refuses), 126 CMD not
executable, 127 CMD not found. SIGINT, SIGTERM, SIGHUP and SIGQUIT sent to simtwin are
passed on to CMD; the summary is printed when CMD ends.";

/// The arguments of `simtwin env`.
#[derive(clap::Args, Debug, Clone)]
#[command(after_help = ENV_HELP)]
pub struct EnvArgs {
    /// The driver's settings.
    #[command(flatten)]
    pub settings: DriverSettings,
    /// simtwin's install or build directory (as for `simtwin run`)
    #[arg(long, value_name = "DIR")]
    pub simtwin: Option<PathBuf>,
    /// Report directory: the counters of every later process go to DIR/counts/ (emptied
    /// now), where `simtwin summary --report DIR` reads them
    #[arg(long, value_name = "DIR", default_value = "simtwin-report")]
    pub report: PathBuf,
    /// sh: `export` lines for `eval`; github: NAME=VALUE lines for $GITHUB_ENV (PATH not
    /// included: add bin/ to $GITHUB_PATH); json: one object
    #[arg(long, value_parser = ["sh", "github", "json"], default_value = "sh")]
    pub format: String,
}

const ENV_HELP: &str = "\
Examples:
  eval \"$(simtwin env --kernels build/simtwin-kernels --hazards error)\"
  simtwin env --format github --kernels build/k --report \"$RUNNER_TEMP/simtwin\" >> \"$GITHUB_ENV\"
  # ... later steps run their tests; then:
  simtwin summary --report \"$RUNNER_TEMP/simtwin\"

Exit codes: 0, 125 no driver or a setting the driver refuses.";

/// The arguments of `simtwin summary`.
#[derive(clap::Args, Debug, Clone)]
#[command(after_help = "Examples:\n  simtwin summary --report simtwin-report\n  simtwin summary --report r --fail-on hazards,leaks\n\n\
Exit codes: as simtwin run's for a command that exited 0 (80-84), 0 otherwise, 125 unreadable counters.")]
pub struct SummaryArgs {
    /// What fails the run.
    #[command(flatten)]
    pub gates: GateArgs,
    /// The report directory `simtwin env` named (counters in DIR/counts/)
    #[arg(long, value_name = "DIR", default_value = "simtwin-report")]
    pub report: PathBuf,
}

/// What `simtwin run` writes into its report directory.
const ARTEFACTS: report::Artefacts<'static> =
    report::Artefacts { files: &["summary.json", "summary.md", "junit.xml"], dirs: &["counts"], prefixes: &[], suffixes: &[] };

/// The child being waited for (0: none yet) and whether a termination signal came first.
static CHILD: AtomicI32 = AtomicI32::new(0);
static PENDING: AtomicI32 = AtomicI32::new(0);
static FORWARDING: AtomicBool = AtomicBool::new(false);

extern "C" fn forward(sig: libc::c_int, info: *mut libc::siginfo_t, _ctx: *mut libc::c_void) {
    // SAFETY: `info` is the kernel's siginfo for this delivery (SA_SIGINFO); kill(2) is
    // async-signal-safe. A signal the terminal generated (si_code SI_KERNEL) reached CMD
    // too, since it shares simtwin's process group: only signals a process sent to
    // simtwin alone are passed on.
    unsafe {
        if !info.is_null() && (*info).si_code > 0 {
            return;
        }
        let pid = CHILD.load(Ordering::SeqCst);
        if pid > 0 {
            libc::kill(pid, sig);
        } else {
            PENDING.store(sig, Ordering::SeqCst);
        }
    }
}

fn install_forwarding() {
    if FORWARDING.swap(true, Ordering::SeqCst) {
        return;
    }
    for sig in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP, libc::SIGQUIT] {
        // SAFETY: a zeroed sigaction with a handler that only calls kill(2) and atomics.
        unsafe {
            let mut sa: libc::sigaction = std::mem::zeroed();
            sa.sa_sigaction = forward as extern "C" fn(libc::c_int, *mut libc::siginfo_t, *mut libc::c_void) as libc::sighandler_t;
            sa.sa_flags = libc::SA_SIGINFO | libc::SA_RESTART;
            libc::sigemptyset(&mut sa.sa_mask);
            libc::sigaction(sig, &sa, std::ptr::null_mut());
        }
    }
}

/// The report directory (made absolute, cleared of an earlier run's files), or a
/// temporary one that is removed afterwards.
struct ReportDir {
    dir: PathBuf,
    temporary: bool,
}

impl ReportDir {
    fn open(report: Option<&Path>) -> Result<ReportDir> {
        match report {
            Some(d) => {
                std::fs::create_dir_all(d).with_context(|| format!("cannot create report directory {}", d.display()))?;
                let dir = std::fs::canonicalize(d)?;
                report::clear_previous(&dir, &ARTEFACTS)?;
                Ok(ReportDir { dir, temporary: false })
            }
            None => {
                let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.subsec_nanos()).unwrap_or(0);
                let dir = std::env::temp_dir().join(format!("simtwin-run-{}-{nanos}", std::process::id()));
                std::fs::create_dir_all(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
                Ok(ReportDir { dir, temporary: true })
            }
        }
    }
    fn counts(&self) -> PathBuf {
        self.dir.join("counts")
    }
}

impl Drop for ReportDir {
    fn drop(&mut self) {
        if self.temporary {
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }
}

/// The environment of the programs: simtwin's driver and tools first, the settings,
/// the counters pattern. Checks that the driver loads and accepts the settings.
fn program_env(simtwin: &Path, settings: &DriverSettings, counts_dir: &Path) -> Result<Vec<(String, String)>> {
    let pattern = prepare_dir(counts_dir)?;
    let emu = driver_env(simtwin, None, &pattern)?;
    let set = settings.env()?;
    // The probe's own cuInit and cuDeviceGetCount must not be the calls a fault-injection
    // setting fails: that setting is left to the program's run.
    let probe: Vec<(String, String)> =
        set.iter().filter(|(k, v)| !(k == "EMU_CUDA_FAIL" && (v.contains("cuInit") || v.contains("cuDeviceGetCount")))).cloned().collect();
    check_emulated_accepts(&emu, &probe)?;
    let mut env = emu.vars;
    env.push(("PATH".into(), prepend_path(&simtwin.join("bin"), "PATH")));
    env.push(("SIMTWIN_DIR".into(), simtwin.display().to_string()));
    env.push((HANDOFF_VAR.into(), counts_dir.display().to_string()));
    env.extend(set);
    Ok(env)
}

/// The settings that differ from a plain run (for the report): EMU_CUDA_* and SIMTWIN_DIR.
fn shown_settings(env: &[(String, String)]) -> Vec<(String, String)> {
    let mut v: Vec<(String, String)> = std::env::vars().filter(|(k, _)| k.starts_with("EMU_CUDA_")).collect();
    for (k, val) in env.iter().filter(|(k, _)| k.starts_with("EMU_CUDA_") || k == "SIMTWIN_DIR" || k == "LD_LIBRARY_PATH") {
        v.retain(|(x, _)| x != k);
        v.push((k.clone(), val.clone()));
    }
    v.sort();
    v
}

/// Runs `simtwin run`; the exit code (errors become 125 after a message).
pub fn run(a: &RunArgs) -> i32 {
    let report = match ReportDir::open(a.report.as_deref()) {
        Ok(r) => r,
        Err(e) => return fail(None, &e),
    };
    let simtwin = match find_simtwin(a.simtwin.as_deref()) {
        Ok(s) => s,
        Err(e) => return fail(Some(&report), &e),
    };
    let env = match program_env(&simtwin, &a.settings, &report.counts()) {
        Ok(e) => e,
        Err(e) => return fail(Some(&report), &e),
    };
    let prog = &a.command[0];
    let Some(path) = crate::run::find_program(prog, &env) else {
        let why = if Path::new(prog).exists() || (!prog.contains('/') && which_any(prog, &env)) {
            (EXIT_NOT_EXECUTABLE, "not executable")
        } else {
            (EXIT_NOT_FOUND, "not found")
        };
        eprintln!("simtwin: {prog}: {}", why.1);
        return why.0;
    };
    install_forwarding();
    let t0 = Instant::now();
    let mut cmd = std::process::Command::new(path);
    cmd.arg0(prog).args(&a.command[1..]).envs(env.iter().map(|(k, v)| (k, v)));
    let status = match spawn_and_wait(&mut cmd) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("simtwin: cannot run {prog}: {e}");
            return if e.kind() == std::io::ErrorKind::PermissionDenied { EXIT_NOT_EXECUTABLE } else { EXIT_SIMTWIN };
        }
    };
    let elapsed = t0.elapsed().as_secs_f64();
    finish(&report, &a.gates.policy(&env), &a.command, &status, &shown_settings(&env), Some(elapsed))
}

use std::os::unix::process::CommandExt as _;

fn which_any(prog: &str, env: &[(String, String)]) -> bool {
    let path = crate::settings::effective(env, "PATH").unwrap_or_default();
    path.split(':').filter(|d| !d.is_empty()).any(|d| Path::new(d).join(prog).exists())
}

fn spawn_and_wait(cmd: &mut std::process::Command) -> std::io::Result<CmdStatus> {
    use std::os::unix::process::ExitStatusExt;
    let mut child = cmd.spawn()?;
    CHILD.store(child.id() as i32, Ordering::SeqCst);
    let pending = PENDING.swap(0, Ordering::SeqCst);
    if pending != 0 {
        // SAFETY: kill(2) on the child just started.
        unsafe {
            libc::kill(child.id() as i32, pending);
        }
    }
    let st = child.wait()?;
    CHILD.store(0, Ordering::SeqCst);
    Ok(match (st.code(), st.signal()) {
        (Some(c), _) => CmdStatus::Exit(c),
        (None, Some(s)) => CmdStatus::Signal(s),
        _ => CmdStatus::Exit(EXIT_SIMTWIN),
    })
}

/// Reads the counters, hands them on to an enclosing run, prints the summary, writes the
/// reports; returns the exit code.
fn finish(
    report: &ReportDir,
    policy: &Policy,
    command: &[String],
    status: &CmdStatus,
    settings: &[(String, String)],
    elapsed: Option<f64>,
) -> i32 {
    let usage = match Usage::read(&report.counts()) {
        Ok(u) => u,
        Err(e) => {
            eprintln!("simtwin: error: {e:#}");
            return if status.code() != 0 { status.code() } else { EXIT_SIMTWIN };
        }
    };
    hand_on_outer(&report.counts(), &usage);
    eprint!("{}", usage.text(policy, command, status));
    if !report.temporary {
        let written = (|| -> Result<()> {
            report::write_atomic(&report.dir.join("summary.md"), usage.markdown(policy, command, status))?;
            crate::junit::write(&report.dir.join("junit.xml"), "simtwin", &usage.junit(policy, command, status, elapsed))?;
            report::write_json(&report.dir.join("summary.json"), &usage.to_json(policy, command, status, settings, elapsed))
        })();
        match written {
            Ok(()) => eprintln!("simtwin: reports in {}", report.dir.display()),
            Err(e) => {
                eprintln!("simtwin: error: {e:#}");
                return if status.code() != 0 { status.code() } else { EXIT_SIMTWIN };
            }
        }
    }
    usage.exit_code(policy, status.code())
}

/// A `simtwin run` inside another one (or under `simtwin env`) passes its processes'
/// counters on to the outer directory, which this run's environment replaced.
fn hand_on_outer(own: &Path, usage: &Usage) {
    if std::env::var_os(HANDOFF_VAR).is_some_and(|d| Path::new(&d) != own) {
        hand_on(&usage.counts);
    }
}

/// simtwin's own failure: the message, an error report when there is a report
/// directory, exit code 125.
fn fail(report: Option<&ReportDir>, e: &anyhow::Error) -> i32 {
    eprintln!("simtwin: error: {e:#}");
    if let Some(r) = report.filter(|r| !r.temporary) {
        let msg = format!("{e:#}");
        let _ = report::write_json(
            &r.dir.join("summary.json"),
            &json!({"schema": "simtwin-run-summary/1", "verdict": "error", "exit_code": EXIT_SIMTWIN, "error": msg}),
        );
        let _ = report::write_atomic(&r.dir.join("summary.md"), format!("## simtwin run: ERROR\n\n```\n{msg}\n```\n"));
        let case = Case {
            classname: "simtwin.run".into(),
            name: "setup".into(),
            time: None,
            outcome: Outcome::Error { message: msg.lines().next().unwrap_or("").into(), text: msg.clone() },
            stdout: None,
        };
        let _ = crate::junit::write(
            &r.dir.join("junit.xml"),
            "simtwin",
            &[Suite { name: "simtwin run".into(), cases: vec![case], time: None }],
        );
    }
    EXIT_SIMTWIN
}

/// POSIX shell single quotes.
fn sh_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "'\\''"))
}

/// Runs `simtwin env`: prints the settings.
pub fn env(a: &EnvArgs) -> Result<i32> {
    let simtwin = find_simtwin(a.simtwin.as_deref())?;
    std::fs::create_dir_all(&a.report).with_context(|| format!("cannot create report directory {}", a.report.display()))?;
    let dir = std::fs::canonicalize(&a.report)?;
    report::clear_previous(&dir, &ARTEFACTS)?;
    let env = program_env(&simtwin, &a.settings, &dir.join("counts"))?;
    let lib = simtwin.join("lib").display().to_string();
    let bin = simtwin.join("bin").display().to_string();
    match a.format.as_str() {
        "sh" => {
            for (k, v) in &env {
                match k.as_str() {
                    // Expanded when the line is evaluated: entries added later are kept.
                    "LD_LIBRARY_PATH" => println!("export LD_LIBRARY_PATH={}\"${{LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}}\"", sh_quote(&lib)),
                    "PATH" => println!("export PATH={}\"${{PATH:+:$PATH}}\"", sh_quote(&bin)),
                    _ => println!("export {k}={}", sh_quote(v)),
                }
            }
        }
        "github" => {
            for (k, v) in env.iter().filter(|(k, _)| k != "PATH") {
                if v.contains('\n') {
                    bail!("{k} holds a newline: it cannot go into $GITHUB_ENV as one line");
                }
                println!("{k}={v}");
            }
        }
        _ => println!(
            "{}",
            serde_json::to_string_pretty(&env.iter().map(|(k, v)| (k.clone(), json!(v))).collect::<serde_json::Map<_, _>>())?
        ),
    }
    Ok(0)
}

/// Runs `simtwin summary`: the summary of what the processes since `simtwin env` did.
pub fn summary(a: &SummaryArgs) -> Result<i32> {
    let dir = std::fs::canonicalize(&a.report)
        .with_context(|| format!("report directory {} not found (simtwin env --report DIR makes it)", a.report.display()))?;
    let r = ReportDir { dir, temporary: false };
    let counts = r.counts();
    if !counts.is_dir() {
        bail!("{} has no counts/ directory: it was not made by simtwin env or simtwin run --report", r.dir.display());
    }
    let code = finish(&r, &a.gates.policy(&[]), &[], &CmdStatus::None, &shown_settings(&[]), None);
    Ok(code)
}
