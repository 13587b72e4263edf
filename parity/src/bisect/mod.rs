//! `parity bisect A B`: two launch traces (`EMU_CUDA_TRACE`) aligned launch by launch;
//! the report names the first launch whose written buffers differ, the buffer, the
//! first differing element with both values (typed when the kernel's parameter types
//! are known), the last launch that still agreed, and where the launch sequences
//! themselves diverge. `--run 'CMD_A' 'CMD_B'` makes both traces (and, when they
//! diverge, runs both again dumping just the divergent launch's buffers for the
//! element); `--per-frame` aligns and bisects each frame on its own.

mod align;
mod compare;
mod load;
mod report;
pub(crate) mod types;

use anyhow::{bail, Context, Result};
use load::Trace;
use serde_json::Map;
use std::path::{Path, PathBuf};

/// Checks a trace's text (the fuzzer's entry, [`crate::untrusted`]).
pub(crate) fn parse_trace(text: &str, path: &Path) -> Result<()> {
    Trace::parse(text, path).map(|_| ())
}

/// Parses a types file's text (the fuzzer's entry, [`crate::untrusted`]).
pub(crate) fn parse_types(text: &str, path: &Path) -> Result<types::Types> {
    types::Types::parse(text, path)
}

/// The examples and exit codes of the command's `--help`.
const EXAMPLE: &str = "\
Examples:
  EMU_CUDA_TRACE=a.trace LD_LIBRARY_PATH=$(scripts/emu-env) ./prog ...
  EMU_CUDA_TRACE=b.trace EMU_CUDA_BLOCK_ORDER=reverse LD_LIBRARY_PATH=$(scripts/emu-env) ./prog ...
  parity bisect a.trace b.trace --out reports/bisect
  parity bisect --run 'EMU_CUDA_EXEC=twin ./prog ...' 'EMU_CUDA_EXEC=ptx ./prog ...' --types kernels.sig
  parity bisect --run './prog ...' './prog ... --defect clamp-borders' --per-frame --width 256

With --run each command is split into words like a shell would (quotes, escapes; no
pipes or variables); leading NAME=VALUE words set its environment. parity adds
EMU_CUDA_TRACE (and EMU_CUDA_TRACE_FRAMES/KERNELS from --frames/--kernels): the
commands must run on simtwin's driver (LD_LIBRARY_PATH, or EMU_CUDA_REAL for a GPU).

Exit codes: 0 the traces agree, 1 they diverge (a written buffer, a device-to-host copy
or the launch sequence), 2 usage or input error (unreadable or malformed trace, a
command that cannot run or reaches --timeout).";

/// The arguments of `parity bisect`.
#[derive(clap::Args, Debug, Clone)]
#[command(after_help = EXAMPLE)]
pub struct BisectArgs {
    /// Trace A (or, with --run, command A)
    pub a: String,
    /// Trace B (or, with --run, command B)
    pub b: String,
    /// A and B are commands: run each with EMU_CUDA_TRACE set and bisect their traces
    #[arg(long)]
    pub run: bool,
    /// Report directory
    #[arg(long, short = 'o', default_value = "reports/bisect")]
    pub out: PathBuf,
    /// Label of A in reports
    #[arg(long, default_value = "a")]
    pub label_a: String,
    /// Label of B in reports
    #[arg(long, default_value = "b")]
    pub label_b: String,
    /// Kernel signatures, one C declaration per line (`name(const float *x, int n)`),
    /// for kernels whose symbols carry no types (extern "C"); mangled symbols are read
    /// without it
    #[arg(long)]
    pub types: Option<PathBuf>,
    /// Align and bisect each frame on its own (frames as the trace's frame rule found them)
    #[arg(long)]
    pub per_frame: bool,
    /// Only these frames: N (the first N) or A-B (0-based, inclusive)
    #[arg(long)]
    pub frames: Option<String>,
    /// Only launches of these kernels (comma-separated, `*` wildcards)
    #[arg(long, value_delimiter = ',')]
    pub kernels: Vec<String>,
    /// Elements per row of the buffers: report the first differing element as (x, y) too
    #[arg(long)]
    pub width: Option<u64>,
    /// With --run: time limit of each command in seconds
    #[arg(long, default_value_t = crate::run::DEFAULT_TIMEOUT_S, value_parser = crate::run::parse_timeout)]
    pub timeout: f64,
    /// With --run: a kernel whose launch starts each frame (EMU_CUDA_TRACE_FRAME_START)
    /// instead of the host-to-device-after-device-to-host rule
    #[arg(long)]
    pub frame_start: Option<String>,
}

const ARTEFACTS: crate::report::Artefacts<'static> = crate::report::Artefacts {
    files: &["summary.json", "summary.md", "launches.csv", "frames.csv"],
    dirs: &["logs", "traces"],
    prefixes: &[],
    suffixes: &[],
};

/// Parses `--frames`: N or A-B.
fn parse_frames(s: &str) -> Result<(u64, u64)> {
    let r = match s.split_once('-') {
        Some((a, b)) => a.trim().parse::<u64>().ok().zip(b.trim().parse::<u64>().ok()).filter(|(a, b)| a <= b),
        None => s.trim().parse::<u64>().ok().filter(|&n| n > 0).map(|n| (0, n - 1)),
    };
    r.with_context(|| format!("--frames {s}: expected N (the first N frames) or A-B"))
}

/// Runs `parity bisect`: 0 agree, 1 diverge; an error (exit 2) for bad input.
pub fn run_bisect(a: &BisectArgs) -> Result<i32> {
    let r = (|| -> Result<i32> {
        crate::report::clear_previous(&a.out, &ARTEFACTS)?;
        std::fs::create_dir_all(&a.out).with_context(|| format!("cannot create {}", a.out.display()))?;
        let frames = a.frames.as_deref().map(parse_frames).transpose()?;
        let types = match &a.types {
            Some(p) => types::Types::load(p)?,
            None => types::Types::default(),
        };
        let (ta, tb, notes) =
            if a.run { run_both(a, frames)? } else { (Trace::load(Path::new(&a.a))?, Trace::load(Path::new(&a.b))?, Vec::new()) };
        let opts = compare::Options { frames, kernels: a.kernels.clone(), per_frame: a.per_frame };
        let mut result = compare::bisect(&ta, &tb, &types, &opts)?;
        result.notes.extend(notes);
        if a.run {
            refine_by_dump(a, &ta, &tb, &types, &mut result)?;
        } else {
            compare::element_from_dumps(&ta, &tb, &types, &mut result, a.width);
        }
        let code = if result.agree() { 0 } else { 1 };
        report::write(&a.out, &a.label_a, &a.label_b, &ta, &tb, &result, code)?;
        report::print(&a.out, &a.label_a, &a.label_b, &result);
        Ok(code)
    })();
    if let Err(e) = &r {
        crate::report::write_error(&a.out, "bisect", 2, &format!("{e:#}"), Map::new());
    }
    r
}

/// One traced run of a command: its words split, leading NAME=VALUE words as its
/// environment, EMU_CUDA_TRACE and the limits added. A non-zero exit is a note (the
/// divergence may be why it failed), a missing trace an error.
fn traced_run(
    a: &BisectArgs,
    label: &str,
    cmd: &str,
    trace: &Path,
    frames: Option<(u64, u64)>,
    dump: Option<&str>,
) -> Result<Option<String>> {
    let words = crate::template::split_words(cmd)?;
    let mut env: Vec<(String, String)> = Vec::new();
    let mut argv = Vec::new();
    for w in words {
        match w.split_once('=') {
            Some((k, v)) if argv.is_empty() && !k.is_empty() && k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') => {
                env.push((k.into(), v.into()))
            }
            _ => argv.push(w),
        }
    }
    if argv.is_empty() {
        bail!("--run: command {label} has no program: {cmd:?}");
    }
    if env.iter().any(|(k, _)| k.starts_with("EMU_CUDA_TRACE")) {
        bail!("--run: command {label} sets EMU_CUDA_TRACE itself; parity sets it (use --frames, --kernels, --frame-start)");
    }
    let _ = std::fs::remove_file(trace);
    env.push(("EMU_CUDA_TRACE".into(), trace.display().to_string()));
    if let Some((f0, f1)) = frames {
        env.push(("EMU_CUDA_TRACE_FRAMES".into(), format!("{f0}-{f1}")));
    }
    if !a.kernels.is_empty() {
        env.push(("EMU_CUDA_TRACE_KERNELS".into(), a.kernels.join(",")));
    }
    if let Some(k) = &a.frame_start {
        env.push(("EMU_CUDA_TRACE_FRAME_START".into(), k.clone()));
    }
    if let Some(d) = dump {
        env.push(("EMU_CUDA_TRACE_DUMP".into(), d.into()));
    }
    let spec = crate::run::Spec {
        label: label.into(),
        argv,
        env,
        log_dir: a.out.join("logs"),
        spinner: true,
        timeout: std::time::Duration::from_secs_f64(a.timeout),
    };
    let f = crate::run::execute(&spec)?;
    let note = match f.ended {
        crate::run::Ended::Exit(0) => None,
        crate::run::Ended::Exit(c) => Some(format!(
            "command {label} exited with status {c} (its trace is compared as far as it goes): {}",
            crate::run::first_line(&f.stderr)
        )),
        crate::run::Ended::Signal(s) => Some(format!("command {label} died of {}", crate::run::signal_name(s))),
        crate::run::Ended::TimedOut => bail!("command {label} timed out after {} s (raise --timeout)", a.timeout),
    };
    if !trace.exists() {
        bail!(
            "command {label} left no trace at {}: does it run on simtwin's libcuda.so.1 (LD_LIBRARY_PATH)? last lines of its stderr:\n{}",
            trace.display(),
            crate::run::tail(&f.stderr, 10)
        );
    }
    Ok(note)
}

fn run_both(a: &BisectArgs, frames: Option<(u64, u64)>) -> Result<(Trace, Trace, Vec<String>)> {
    let dir = a.out.join("traces");
    std::fs::create_dir_all(&dir)?;
    let (pa, pb) = (dir.join("a.trace"), dir.join("b.trace"));
    let mut notes = Vec::new();
    notes.extend(traced_run(a, &a.label_a, &a.a, &pa, frames, None)?);
    notes.extend(traced_run(a, &a.label_b, &a.b, &pb, frames, None)?);
    Ok((Trace::load(&pa)?, Trace::load(&pb)?, notes))
}

/// With --run: the divergent launch (or copy) of each side is run again with its
/// buffers dumped, and the element found; a second run whose hashes differ from the
/// first's is reported (a non-deterministic program: the element is then not given).
fn refine_by_dump(a: &BisectArgs, ta: &Trace, tb: &Trace, types: &types::Types, r: &mut compare::Bisection) -> Result<()> {
    let Some(first) = r.first.as_ref() else { return Ok(()) };
    let (da, db) = first.dump_keys();
    let dir = a.out.join("traces");
    let (pa, pb) = (dir.join("a.dump.trace"), dir.join("b.dump.trace"));
    let frames = a.frames.as_deref().map(parse_frames).transpose()?;
    traced_run(a, &a.label_a, &a.a, &pa, frames, Some(&da))?;
    traced_run(a, &a.label_b, &a.b, &pb, frames, Some(&db))?;
    let (xa, xb) = (Trace::load(&pa)?, Trace::load(&pb)?);
    let _ = (ta, tb);
    compare::element_from_rerun(&xa, &xb, types, r, a.width);
    Ok(())
}
