//! Running extractor commands: binary lookup with a clear error, stdout/stderr captured
//! to log files, a progress spinner while they run.

use anyhow::{bail, Context, Result};
use indicatif::{ProgressBar, ProgressStyle};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

#[derive(Debug, Clone)]
pub struct Spec {
    pub label: String,
    pub argv: Vec<String>,
    pub env: Vec<(String, String)>,
    pub log_dir: PathBuf,
    /// Show a spinner while it runs (off when the caller draws its own progress bar).
    pub spinner: bool,
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

pub fn spinner(msg: String) -> ProgressBar {
    let pb = ProgressBar::new_spinner();
    pb.set_style(ProgressStyle::with_template("{spinner} {elapsed:>4} {msg}").unwrap());
    pb.set_message(msg);
    pb.enable_steady_tick(Duration::from_millis(120));
    pb
}

/// Runs the command; a missing binary, a spawn failure or a non-zero exit status is an
/// error naming the command and showing the end of its stderr.
pub fn run(spec: &Spec) -> Result<Outcome> {
    let prog = spec.argv.first().context("empty command")?;
    if find_program(prog, &spec.env).is_none() {
        bail!("{}: extractor binary not found or not executable: {prog}", spec.label);
    }
    std::fs::create_dir_all(&spec.log_dir).with_context(|| format!("cannot create {}", spec.log_dir.display()))?;
    let safe: String = spec.label.chars().map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '_' { c } else { '_' }).collect();
    let stdout = spec.log_dir.join(format!("{safe}.stdout.log"));
    let stderr = spec.log_dir.join(format!("{safe}.stderr.log"));
    let mut cmd = Command::new(prog);
    cmd.args(&spec.argv[1..]).stdin(Stdio::null());
    cmd.stdout(std::fs::File::create(&stdout)?).stderr(std::fs::File::create(&stderr)?);
    for (k, v) in &spec.env {
        cmd.env(k, v);
    }
    let pb = if spec.spinner { spinner(format!("{}: {}", spec.label, crate::template::display(&spec.argv))) } else { ProgressBar::hidden() };
    let t0 = Instant::now();
    let status = cmd.status().with_context(|| format!("{}: cannot start {prog}", spec.label));
    let elapsed = t0.elapsed();
    pb.finish_and_clear();
    let status = status?;
    if !status.success() {
        use std::os::unix::process::ExitStatusExt;
        let how = match (status.code(), status.signal()) {
            (Some(c), _) => format!("exit status {c}"),
            (None, Some(s)) => format!("signal {s}"),
            _ => "unknown status".into(),
        };
        bail!(
            "{} extractor failed with {how}: {}\n--- last lines of {} ---\n{}",
            spec.label,
            crate::template::display(&spec.argv),
            stderr.display(),
            tail(&stderr, 15)
        );
    }
    Ok(Outcome { elapsed, stdout, stderr })
}
