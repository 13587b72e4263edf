//! `parity faults`: a fault-injection campaign. The program runs once under the
//! emulated driver to count its driver calls (the counters' `calls`), then once per call
//! site (entry point NAME, call index K) with that call failing
//! (EMU_CUDA_FAIL=NAME:K: the driver answers a realistic error code). For each run:
//! how it ended (exit status, crash on a signal, hang killed at the time limit), whether
//! the driver injected the failure, what it leaked (the counters' `leaks`), where its
//! counters come from (clean exit, signal, checkpoint), and stderr's first line.
//! A crash or a hang is a finding (exit code 1): a program must answer a failed call
//! with an error, not with a crash or a hang.

use crate::common::{ClipArgs, ExtractorArgs};
use crate::counts::{describe_state, prepare_dir, state_tag, Counts, State};
use crate::device::{check_emulated_accepts, emulated_env, EmulatedEnv};
use crate::report;
use crate::run::{self, fmt_secs, Ended, Spec};
use crate::template::{self, Backend};
use crate::tolerance::glob;
use anyhow::{bail, Context, Result};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value as Json};
use simtwin_abi::counters::Leaks;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The examples and exit codes of the command's `--help`.
const EXAMPLE: &str = "\
Examples:
  # every driver call of the fixtures' CUDA twin failing in turn, 2 frames per run:
  parity faults -r ref.yuv -d dis.yuv -W 256 -H 256 --features sse,topk
  # only allocations and launches, at most the first 3 calls of each, 40 runs at most:
  parity faults -r ref.yuv -d dis.yuv -W 256 -H 256 --only 'cuMemAlloc*,cuLaunchKernel' \\
      --per-entry 3 --max-runs 40
  # any program (a command template), leaks count as findings too:
  parity faults -r ref.yuv -d dis.yuv -W 640 -H 360 --fail-on-leaks \\
      --cmd './my_twin --gpu -i {ref} -j {dis} -s {width}x{height} -n {frames} -o {output}'

Each faulted run is killed with its process group after --timeout SECONDS (default:
10x the counting run, at least 10 s, at most 600 s): that is a hang.
Reports: faults.md, faults.json, faults.csv (one row per faulted run), logs/ and counts/.
Exit codes: 0 no crash and no hang, 1 a crash or a hang (or a leak with --fail-on-leaks),
2 setup error (the program fails without any fault, the driver refuses EMU_CUDA_FAIL
or injects none of the failures asked for).";

/// The arguments of `parity faults`.
#[derive(clap::Args, Debug, Clone)]
#[command(after_help = EXAMPLE)]
pub struct FaultsArgs {
    #[command(flatten)]
    pub(crate) clip: ClipArgs,
    #[command(flatten)]
    pub(crate) ex: ExtractorArgs,
    /// The program: a command template or preset:NAME (default: the --preset's CUDA command)
    #[arg(long)]
    pub cmd: Option<String>,
    /// Frames per run (default: 2, or the clips' frame count when smaller)
    #[arg(long, short = 'n')]
    pub frames: Option<u64>,
    /// Only these entry points (comma separated, `*` wildcards), e.g. --only 'cuMemAlloc*,cuLaunchKernel'
    #[arg(long, value_delimiter = ',', value_name = "NAME")]
    pub only: Vec<String>,
    /// Leave these entry points out (comma separated, `*` wildcards), e.g. --skip cuGetErrorName
    #[arg(long, value_delimiter = ',', value_name = "NAME")]
    pub skip: Vec<String>,
    /// At most the first K calls of each entry point, e.g. --per-entry 2
    #[arg(long, value_name = "K")]
    pub per_entry: Option<u64>,
    /// At most N faulted runs (first calls of every entry point first), e.g. --max-runs 50
    #[arg(long, value_name = "N")]
    pub max_runs: Option<usize>,
    /// A run that leaks more than the clean run (allocations, pinned memory, modules,
    /// streams, events) is a finding too
    #[arg(long)]
    pub fail_on_leaks: bool,
    /// Run only shard K of N of the call sites (dealt round robin in the order above;
    /// every shard makes the clean run); `auto` reads a Slurm array task, `auto/N` a
    /// Kubernetes Indexed Job; `parity merge` of the shards' directories gives the report
    #[arg(long, value_name = "K/N|auto|auto/N", value_parser = crate::shard::parse)]
    pub shard: Option<crate::shard::Shard>,
    /// Report directory
    #[arg(long, short = 'o', default_value = "reports/faults")]
    pub out: PathBuf,
}

/// Files of `parity faults` in its report directory.
pub const ARTEFACTS: report::Artefacts<'static> = report::Artefacts {
    files: &["faults.md", "faults.json", "faults.csv", "summary.json", "summary.md", "junit.xml", "faults.part.json", crate::shard::FILE],
    dirs: &["counts", "logs", "outputs"],
    prefixes: &[],
    suffixes: &[],
};

/// One call site: the K-th call of an entry point.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Site {
    pub name: String,
    pub call: u64,
}

/// The call sites to fail, from the clean run's call counts: every call of every entry
/// point, filtered by --only/--skip and --per-entry, in the order first calls of every
/// entry point, then second calls, ... (so that --max-runs keeps the widest coverage).
pub(crate) fn plan_sites(
    calls: &BTreeMap<String, u64>,
    only: &[String],
    skip: &[String],
    per_entry: Option<u64>,
    max_runs: Option<usize>,
) -> Vec<Site> {
    let wanted = |n: &str| (only.is_empty() || only.iter().any(|p| glob(p, n))) && !skip.iter().any(|p| glob(p, n));
    let mut sites: Vec<Site> = calls
        .iter()
        .filter(|(n, _)| wanted(n))
        .flat_map(|(n, c)| (1..=(*c).min(per_entry.unwrap_or(u64::MAX))).map(move |k| Site { name: n.clone(), call: k }))
        .collect();
    sites.sort_by(|a, b| a.call.cmp(&b.call).then_with(|| a.name.cmp(&b.name)));
    if let Some(m) = max_runs {
        sites.truncate(m);
    }
    sites
}

/// Was the failure injected?
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Injection {
    /// Yes, with this code.
    Yes(u32),
    /// The run made the call but the driver did not fail it.
    NotInjected,
    /// The run did not get as far as that call.
    NotReached(u64),
    /// No counters to tell (a crash before any checkpoint).
    Unknown,
}

/// One faulted run.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct FaultRun {
    pub site: Site,
    pub ended: Ended,
    pub elapsed: Duration,
    pub injection: Injection,
    /// The counters' leaks (None without counters, or from a checkpoint).
    pub leaks: Option<Leaks>,
    pub counts_state: Option<State>,
    pub stderr_first_line: String,
    pub stragglers: bool,
    pub log: PathBuf,
}

impl FaultRun {
    pub fn crash(&self) -> bool {
        matches!(self.ended, Ended::Signal(_))
    }
    pub fn hang(&self) -> bool {
        self.ended == Ended::TimedOut
    }
    /// Leaked objects beyond what the clean run leaks.
    pub fn extra_leaks(&self, clean: &Leaks) -> Option<u64> {
        self.leaks.as_ref().map(|l| l.total().saturating_sub(clean.total()))
    }
    pub fn outcome(&self, timeout: Duration) -> String {
        match self.ended {
            Ended::Exit(0) => "exit 0 (failure not reported)".into(),
            Ended::Exit(c) => format!("error exit {c}"),
            Ended::Signal(s) => format!("CRASH ({})", run::signal_name(s)),
            Ended::TimedOut => format!("HANG (killed after {})", fmt_secs(timeout)),
        }
    }
    fn injected_str(&self) -> String {
        match &self.injection {
            Injection::Yes(c) => format!("yes ({c})"),
            Injection::NotInjected => "NO: the driver did not fail the call".into(),
            Injection::NotReached(n) => format!("not reached ({n} calls)"),
            Injection::Unknown if self.counts_state.is_some() => "? (counters end earlier)".into(),
            Injection::Unknown => "? (no counters)".into(),
        }
    }
    fn leaks_str(&self) -> String {
        match (&self.leaks, &self.counts_state) {
            (Some(l), _) => leaks_short(l),
            (None, Some(State::Checkpoint)) => "? (checkpoint)".into(),
            _ => "? (no counters)".into(),
        }
    }
}

fn leaks_short(l: &Leaks) -> String {
    if l.total() == 0 {
        return "none".into();
    }
    let mut v = Vec::new();
    for (n, k) in [("alloc", l.allocations), ("pinned", l.pinned), ("modules", l.modules), ("streams", l.streams), ("events", l.events)] {
        if k > 0 {
            v.push(format!("{n} {k}"));
        }
    }
    v.join(", ")
}

fn leaks_json(l: &Leaks) -> Json {
    json!({"allocations": l.allocations, "allocation_bytes": l.allocation_bytes, "pinned": l.pinned, "modules": l.modules,
           "streams": l.streams, "events": l.events, "total": l.total()})
}

/// Runs `parity faults`: 0 no finding, 1 a crash or a hang (or a leak with
/// `--fail-on-leaks`); an error for a setup problem (written to the report too).
pub fn run_faults(a: &FaultsArgs) -> Result<i32> {
    report::guarded("faults", &a.out, &ARTEFACTS, || faults_inner(a))
}

/// What every run of the campaign shares.
struct Campaign {
    out: PathBuf,
    template: String,
    note: String,
    frames: u64,
    simtwin: PathBuf,
    extra_env: Vec<(String, String)>,
}

impl Campaign {
    /// The environment of one run (counters into `counts/<tag>`) and its command.
    fn prepare(&self, a: &FaultsArgs, tag: &str) -> Result<(EmulatedEnv, Vec<String>, PathBuf)> {
        let cdir = self.out.join("counts").join(tag);
        let pattern = prepare_dir(&cdir)?;
        let mut emu = emulated_env(&self.simtwin, a.ex.kernels.as_deref(), &pattern)?;
        emu.vars.extend(self.extra_env.iter().cloned());
        std::fs::create_dir_all(self.out.join("outputs"))?;
        let output = self.out.join("outputs").join(format!("{tag}.out"));
        let argv = template::expand(&self.template, &a.ex.vars(&a.clip.clip()?, self.frames, &output, Backend::Cuda, None))?;
        Ok((emu, argv, cdir))
    }
}

/// What a campaign (or one shard of it) found: the clean run and the faulted runs,
/// saved as `faults.part.json` by a shard so that `parity merge` reports the whole
/// campaign with the same code.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Part {
    command: Vec<String>,
    flags: String,
    frames: u64,
    features: Option<String>,
    fail_on_leaks: bool,
    clean_elapsed: Duration,
    clean_calls: BTreeMap<String, u64>,
    clean_leaks: Leaks,
    clean_files: Vec<PathBuf>,
    timeout: Duration,
    runs: Vec<FaultRun>,
}

fn faults_inner(a: &FaultsArgs) -> Result<i32> {
    let c = campaign(a)?;
    eprintln!("parity: fault injection, {}, {} frame(s) per run", c.note, c.frames);
    let (clean, clean_elapsed, argv) = counting_run(a, &c)?;
    let sites = plan_sites(&clean.total.calls, &a.only, &a.skip, a.per_entry, a.max_runs);
    if sites.is_empty() {
        bail!("no call site to fail: the clean run called {} entry point(s), none left after --only/--skip", clean.total.calls.len());
    }
    let timeout = match a.ex.timeout {
        Some(t) => Duration::from_secs_f64(t),
        None => (clean_elapsed * 10).clamp(Duration::from_secs(10), Duration::from_secs_f64(run::DEFAULT_TIMEOUT_S)),
    };
    let mine: Vec<Site> = sites.iter().enumerate().filter(|(i, _)| a.shard.is_none_or(|s| s.owns(*i))).map(|(_, s)| s.clone()).collect();
    let runs = faulted_runs(a, &c, &mine, timeout)?;
    check_injected(&runs)?;
    let part = Part {
        command: argv,
        flags: c.note.clone(),
        frames: c.frames,
        features: a.ex.features.clone(),
        fail_on_leaks: a.fail_on_leaks,
        clean_elapsed,
        clean_calls: clean.total.calls.clone(),
        clean_leaks: clean.total.leaks.clone(),
        clean_files: clean.paths().into_iter().map(Path::to_path_buf).collect(),
        timeout,
        runs,
    };
    let Some(sh) = a.shard else { return report(&c.out, &part, part.runs.clone()) };
    // The plan: what decides the campaign, the clean run's call sites included (a
    // program whose calls differ between shards is not one run).
    let clip = a.clip.clip()?;
    let plan = json!({"template": c.template, "frames": c.frames, "timeout": a.ex.timeout,
                      "clip": {"reference": clip.reference, "distorted": clip.distorted, "width": clip.width, "height": clip.height, "bitdepth": clip.bitdepth, "pixfmt": clip.pixfmt}, "features": a.ex.features, "defect": a.ex.defect, "only": a.only, "skip": a.skip,
                      "per_entry": a.per_entry, "max_runs": a.max_runs, "fail_on_leaks": a.fail_on_leaks, "env": c.extra_env,
                      "sites": sites.iter().map(|s| format!("{}:{}", s.name, s.call)).collect::<Vec<_>>()});
    let rec = crate::shard::Record::new("faults", plan, sh, sites.len(), mine.iter().map(|s| format!("{}:{}", s.name, s.call)).collect());
    report::write_json(&c.out.join("faults.part.json"), &serde_json::to_value(&part)?)?;
    rec.write(&c.out)?;
    let crashes = part.runs.iter().filter(|r| r.crash() || r.hang()).count();
    println!(
        "shard {}: {} of {} call sites failed in turn, {crashes} crash(es) or hang(s); merge with `parity merge` (run {})",
        sh,
        mine.len(),
        sites.len(),
        rec.run_key
    );
    Ok(0)
}

/// A driver that injects none of the failures asked for does not support fault injection.
fn check_injected(runs: &[FaultRun]) -> Result<()> {
    if runs.iter().all(|r| matches!(r.injection, Injection::NotInjected | Injection::NotReached(_) | Injection::Unknown))
        && runs.iter().any(|r| r.injection == Injection::NotInjected)
    {
        bail!(
            "the emulated driver injected none of the {} failures asked for with EMU_CUDA_FAIL (its counters list no injected call): it does not support fault injection",
            runs.len()
        );
    }
    Ok(())
}

/// The campaign's reports from the clean run of `part` and every faulted run.
fn report(out: &Path, part: &Part, mut runs: Vec<FaultRun>) -> Result<i32> {
    // Reported by entry point, then call index (they ran first calls first).
    runs.sort_by(|x, y| x.site.name.cmp(&y.site.name).then(x.site.call.cmp(&y.site.call)));
    let timeout = part.timeout;
    let findings = findings(part.fail_on_leaks, &runs, &part.clean_leaks, timeout);
    let code = if findings.is_empty() { 0 } else { 1 };
    let summary = summary_json(part, &runs, &findings, code);
    write_csv(out, &runs, timeout)?;
    report::write_atomic(&out.join("faults.md"), markdown(&summary, &runs, &findings, timeout, &part.clean_leaks))?;
    report::write_json(&out.join("faults.json"), &summary)?;
    crate::junit::write(
        &out.join("junit.xml"),
        "parity faults",
        &[crate::junit::Suite { name: "parity faults".into(), cases: crate::junit::faults_cases(&summary), time: None }],
    )?;
    print_summary(&runs, &findings, timeout, out, code);
    Ok(code)
}

/// `parity merge` of faults shards: shard 1's clean run, every shard's faulted runs
/// (their logs, counters and outputs brought into `out`), reported as one campaign.
pub(crate) fn merge(shards: &[(PathBuf, crate::shard::Record)], out: &Path) -> Result<i32> {
    report::clear_previous(out, &ARTEFACTS)?;
    let mut parts = Vec::new();
    for (i, (dir, _)) in shards.iter().enumerate() {
        let p = dir.join("faults.part.json");
        let part: Part = serde_json::from_str(&crate::input::read_text(&p, "faults shard part")?)
            .with_context(|| format!("{}: malformed", p.display()))?;
        // Every shard made the clean run: shard 1's is the campaign's.
        let skip: &[&str] = if i == 0 {
            &["shard.json", "faults.part.json"]
        } else {
            &["shard.json", "faults.part.json", "counts/clean", "logs/clean.stdout.log", "logs/clean.stderr.log", "outputs/clean.out"]
        };
        crate::shard::copy_tree(dir, out, skip)?;
        parts.push((dir.clone(), part));
    }
    let mut runs = Vec::new();
    for (dir, part) in &parts {
        for r in &part.runs {
            let mut r = r.clone();
            if let Ok(rel) = r.log.strip_prefix(dir) {
                r.log = out.join(rel);
            }
            runs.push(r);
        }
    }
    check_injected(&runs)?;
    let (dir0, mut first) = parts.swap_remove(0);
    first.clean_files =
        first.clean_files.iter().map(|f| f.strip_prefix(&dir0).map(|rel| out.join(rel)).unwrap_or_else(|_| f.clone())).collect();
    report(out, &first, runs)
}

/// Validation, the report directory (cleared of an earlier run's files), the template.
fn campaign(a: &FaultsArgs) -> Result<Campaign> {
    let avail = a.clip.clip()?.resolve_frames(None).ok();
    let frames = match (a.frames, avail) {
        (Some(n), _) => a.clip.clip()?.resolve_frames(Some(n))?,
        (None, Some(av)) => av.min(2),
        (None, None) => a.clip.clip()?.resolve_frames(None)?,
    };
    if a.max_runs == Some(0) || a.per_entry == Some(0) {
        bail!("--max-runs and --per-entry must be at least 1");
    }
    if let Some(o) = &a.ex.emu.block_order {
        crate::orders::check_order(o)?;
    }
    if a.ex.cuda_env.iter().any(|kv| kv.starts_with("EMU_CUDA_FAIL=")) {
        bail!("--cuda-env EMU_CUDA_FAIL=...: parity faults sets EMU_CUDA_FAIL itself, one call site per run");
    }
    let out = std::fs::canonicalize(&a.out).with_context(|| format!("report directory {}", a.out.display()))?;
    let simtwin = a.ex.require_simtwin()?;
    let (template, note) = template::resolve(a.cmd.as_deref(), &a.ex.preset, Backend::Cuda)?;
    Ok(Campaign { out, template, note, frames, simtwin, extra_env: a.ex.cuda_extra_env()? })
}

/// The clean run: it must succeed and leave counters that list its driver calls.
fn counting_run(a: &FaultsArgs, c: &Campaign) -> Result<(Counts, Duration, Vec<String>)> {
    let (emu, argv, cdir) = c.prepare(a, "clean")?;
    eprintln!("parity: counting the driver calls of a clean run\n  $ {}", template::display(&argv));
    let spec = Spec {
        label: "clean".into(),
        argv: argv.clone(),
        env: emu.vars.clone(),
        log_dir: c.out.join("logs"),
        spinner: true,
        timeout: a.ex.timeout(),
    };
    let res = run::run(&spec).context(
        "the program fails without any injected fault: fix that first (parity faults needs a clean run to count the driver calls)",
    )?;
    let counts = crate::counts::collect(&cdir)?;
    if counts.files.is_empty() {
        bail!("the clean run left no counters file in {}: the program did not load simtwin's libcuda.so.1", cdir.display());
    }
    if counts.total.calls.is_empty() {
        bail!("the clean run's counters list no driver call");
    }
    let first = plan_sites(&counts.total.calls, &a.only, &a.skip, a.per_entry, a.max_runs);
    // The driver must accept EMU_CUDA_FAIL; a probe's cuInit tells (a spec that the
    // probe itself does not reach: cuInit and cuDeviceGetCount are all it calls).
    let probe_site = first
        .iter()
        .find(|s| s.name != "cuInit" && s.name != "cuDeviceGetCount")
        .map(|s| format!("{}:{}", s.name, s.call))
        .unwrap_or_else(|| "cuMemAlloc_v2:1".into());
    check_emulated_accepts(&emu, &[("EMU_CUDA_FAIL".into(), probe_site)])?;
    Ok((counts, res.elapsed, argv))
}

fn faulted_runs(a: &FaultsArgs, c: &Campaign, sites: &[Site], timeout: Duration) -> Result<Vec<FaultRun>> {
    let pb = indicatif::ProgressBar::new(sites.len() as u64);
    pb.set_style(indicatif::ProgressStyle::with_template("{spinner} [{pos}/{len}] {elapsed:>4} {msg}").unwrap());
    pb.enable_steady_tick(Duration::from_millis(120));
    let mut runs = Vec::new();
    for s in sites {
        pb.set_message(format!("{}:{} failing", s.name, s.call));
        let r = faulted_run(a, c, s, timeout);
        pb.inc(1);
        match r {
            Ok(r) => {
                if r.crash() || r.hang() {
                    pb.println(format!("  {}:{}: {}", s.name, s.call, r.outcome(timeout)));
                }
                runs.push(r)
            }
            Err(e) => {
                pb.finish_and_clear();
                return Err(e);
            }
        }
    }
    pb.finish_and_clear();
    Ok(runs)
}

fn faulted_run(a: &FaultsArgs, c: &Campaign, s: &Site, timeout: Duration) -> Result<FaultRun> {
    let tag = format!("{}-{}", s.name, s.call);
    let (emu, argv, cdir) = c.prepare(a, &tag)?;
    let mut env = emu.vars;
    env.push(("EMU_CUDA_FAIL".into(), format!("{}:{}", s.name, s.call)));
    let spec = Spec { label: tag.clone(), argv, env, log_dir: c.out.join("logs"), spinner: false, timeout };
    let f = run::execute(&spec)?;
    let counts = crate::counts::collect(&cdir)?;
    let have = !counts.files.is_empty();
    let state = have.then(|| counts.state());
    let injection = if !have {
        Injection::Unknown
    } else if let Some(i) = counts.total.injected.iter().find(|i| i.name == s.name && i.call == s.call) {
        Injection::Yes(i.code)
    } else {
        let made = counts.total.calls.get(&s.name).copied().unwrap_or(0);
        match state {
            // A checkpoint predates the end: the call may have come later.
            Some(State::Checkpoint) => Injection::Unknown,
            _ if made >= s.call => Injection::NotInjected,
            _ => Injection::NotReached(made),
        }
    };
    let leaks = match &state {
        Some(State::Exit) | Some(State::Signal(_)) => Some(counts.total.leaks.clone()),
        _ => None,
    };
    Ok(FaultRun {
        site: s.clone(),
        ended: f.ended,
        elapsed: f.elapsed,
        injection,
        leaks,
        counts_state: state,
        stderr_first_line: run::first_line(&f.stderr),
        stragglers: f.stragglers,
        log: f.stderr,
    })
}

/// Crashes and hangs (and leaks with --fail-on-leaks), one line each.
fn findings(fail_on_leaks: bool, runs: &[FaultRun], clean: &Leaks, timeout: Duration) -> Vec<String> {
    let mut v = Vec::new();
    for r in runs {
        let at = format!("{}:{}", r.site.name, r.site.call);
        if r.crash() || r.hang() {
            v.push(format!(
                "{at}: {}; stderr: {}",
                r.outcome(timeout),
                if r.stderr_first_line.is_empty() { "(empty)" } else { &r.stderr_first_line }
            ));
        } else if fail_on_leaks && r.extra_leaks(clean).unwrap_or(0) > 0 {
            v.push(format!("{at}: leaks {} (--fail-on-leaks)", r.leaks_str()));
        }
    }
    v
}

fn summary_json(part: &Part, runs: &[FaultRun], findings: &[String], code: i32) -> Json {
    let count = |f: &dyn Fn(&FaultRun) -> bool| runs.iter().filter(|r| f(r)).count();
    let timeout = part.timeout;
    json!({
        "schema": "simtwin-faults/1",
        "verdict": if code == 0 { "pass" } else { "fail" },
        "exit_code": code,
        "flags": part.flags,
        "command": part.command,
        "frames": part.frames,
        "features": part.features,
        "timeout_s": timeout.as_secs_f64(),
        "clean_run": {"elapsed_s": part.clean_elapsed.as_secs_f64(), "calls": part.clean_calls, "leaks": leaks_json(&part.clean_leaks),
                      "counts_files": part.clean_files},
        "call_sites": part.clean_calls.values().sum::<u64>(),
        "runs_total": runs.len(),
        "totals": {
            "crashes": count(&|r| r.crash()),
            "hangs": count(&|r| r.hang()),
            "error_exits": count(&|r| matches!(r.ended, Ended::Exit(c) if c != 0)),
            "exit_0": count(&|r| r.ended == Ended::Exit(0)),
            "injected": count(&|r| matches!(r.injection, Injection::Yes(_))),
            "not_injected": count(&|r| r.injection == Injection::NotInjected),
            "leaking_runs": count(&|r| r.extra_leaks(&part.clean_leaks).unwrap_or(0) > 0),
            "counters_not_from_clean_exit": count(&|r| r.counts_state.as_ref().is_some_and(|s| *s != State::Exit)),
        },
        "findings": findings,
        "runs": runs.iter().map(|r| json!({
            "entry_point": r.site.name, "call": r.site.call,
            "fail": format!("{}:{}", r.site.name, r.site.call),
            "outcome": r.outcome(timeout),
            "exit_status": match r.ended { Ended::Exit(c) => Some(c), _ => None },
            "signal": match r.ended { Ended::Signal(s) => Some(run::signal_name(s)), _ => None },
            "crash": r.crash(), "hang": r.hang(),
            "elapsed_s": r.elapsed.as_secs_f64(),
            "injected": match &r.injection { Injection::Yes(c) => json!({"code": c}), Injection::NotInjected => json!("not injected"),
                                             Injection::NotReached(n) => json!(format!("not reached ({n} calls)")), Injection::Unknown => Json::Null },
            "leaks": r.leaks.as_ref().map(leaks_json),
            "counters": r.counts_state.as_ref().map(state_tag),
            "counters_note": r.counts_state.as_ref().filter(|s| **s != State::Exit).map(describe_state),
            "stderr_first_line": r.stderr_first_line,
            "stragglers_killed": r.stragglers,
            "stderr_log": r.log,
        })).collect::<Vec<_>>(),
    })
}

fn write_csv(out: &Path, runs: &[FaultRun], timeout: Duration) -> Result<()> {
    let mut w = csv::Writer::from_writer(Vec::new());
    w.write_record([
        "entry_point",
        "call",
        "outcome",
        "exit_status",
        "signal",
        "crash",
        "hang",
        "injected",
        "leaks",
        "counters",
        "stderr_first_line",
    ])?;
    for r in runs {
        w.write_record([
            r.site.name.clone(),
            r.site.call.to_string(),
            r.outcome(timeout),
            match r.ended {
                Ended::Exit(c) => c.to_string(),
                _ => String::new(),
            },
            match r.ended {
                Ended::Signal(s) => run::signal_name(s),
                _ => String::new(),
            },
            r.crash().to_string(),
            r.hang().to_string(),
            r.injected_str(),
            r.leaks_str(),
            r.counts_state.as_ref().map(state_tag).unwrap_or_else(|| "none".into()),
            r.stderr_first_line.clone(),
        ])?;
    }
    report::write_atomic(&out.join("faults.csv"), w.into_inner().map_err(|e| anyhow::anyhow!("{e}"))?)
}

fn md_cell(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', " ")
}

fn markdown(s: &Json, runs: &[FaultRun], findings: &[String], timeout: Duration, clean: &Leaks) -> String {
    let mut m = String::new();
    let t = &s["totals"];
    let _ = writeln!(m, "# parity faults\n");
    let _ = writeln!(
        m,
        "**Verdict: {}** (exit code {}): {} faulted runs of {} call sites; {} crash(es), {} hang(s), {} error exit(s), {} exit 0 despite the failure, {} leaking run(s).\n",
        s["verdict"].as_str().unwrap_or("?").to_uppercase(),
        s["exit_code"],
        s["runs_total"],
        s["call_sites"],
        t["crashes"],
        t["hangs"],
        t["error_exits"],
        t["exit_0"],
        t["leaking_runs"]
    );
    let _ = writeln!(
        m,
        "Program: `{}` ({}), {} frame(s) per run; time limit per faulted run {}; the clean run leaks: {}.\n",
        s["command"].as_array().map(|a| a.iter().filter_map(|x| x.as_str()).collect::<Vec<_>>().join(" ")).unwrap_or_default(),
        s["flags"].as_str().unwrap_or(""),
        s["frames"],
        fmt_secs(timeout),
        leaks_short(clean)
    );
    for f in findings {
        let _ = writeln!(m, "- **FINDING** {}", md_cell(f));
    }
    if !findings.is_empty() {
        m.push('\n');
    }
    let _ = writeln!(m, "| fails | outcome | injected | leaks | counters | stderr (first line) |\n|---|---|---|---|---|---|");
    for r in runs {
        let _ = writeln!(
            m,
            "| {}:{} | {} | {} | {} | {} | {} |",
            r.site.name,
            r.site.call,
            r.outcome(timeout),
            r.injected_str(),
            r.leaks_str(),
            r.counts_state.as_ref().map(state_tag).unwrap_or_else(|| "none".into()),
            md_cell(&r.stderr_first_line)
        );
    }
    let _ = writeln!(
        m,
        "\nCounters: `exit` = written at a clean exit; `signal:NAME` = written when the program died of that signal; `checkpoint` = the last synchronisation before the program died without writing its counters (leaks unknown); `none` = no counters (it died before any synchronisation)."
    );
    m
}

fn print_summary(runs: &[FaultRun], findings: &[String], timeout: Duration, out: &Path, code: i32) {
    println!("  {:<36} {:<30} {:<22} leaks / stderr", "fails", "outcome", "injected");
    for r in runs {
        println!(
            "  {:<36} {:<30} {:<22} {} / {}",
            format!("{}:{}", r.site.name, r.site.call),
            r.outcome(timeout),
            r.injected_str(),
            r.leaks_str(),
            r.stderr_first_line
        );
    }
    for f in findings {
        println!("FINDING {f}");
    }
    println!(
        "verdict: {} (exit {code}); {} faulted runs, {} finding(s); reports in {}",
        if code == 0 { "PASS" } else { "FAIL" },
        runs.len(),
        findings.len(),
        out.display()
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sites_cover_first_calls_first_and_honour_the_limits() {
        let calls: BTreeMap<String, u64> =
            [("cuInit", 1), ("cuLaunchKernel", 3), ("cuMemAlloc_v2", 2)].iter().map(|(k, v)| (k.to_string(), *v)).collect();
        let all = plan_sites(&calls, &[], &[], None, None);
        assert_eq!(all.len(), 6);
        let names: Vec<String> = all.iter().map(|s| format!("{}:{}", s.name, s.call)).collect();
        assert_eq!(names, ["cuInit:1", "cuLaunchKernel:1", "cuMemAlloc_v2:1", "cuLaunchKernel:2", "cuMemAlloc_v2:2", "cuLaunchKernel:3"]);
        assert_eq!(plan_sites(&calls, &[], &[], None, Some(3)).iter().map(|s| s.call).collect::<Vec<_>>(), [1, 1, 1]);
        assert_eq!(plan_sites(&calls, &["cuMem*".into()], &[], None, None).len(), 2);
        assert_eq!(plan_sites(&calls, &[], &["cuLaunch*".into(), "cuInit".into()], None, None).len(), 2);
        assert_eq!(plan_sites(&calls, &[], &[], Some(1), None).len(), 3);
    }
}
