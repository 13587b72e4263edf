//! `parity transfers`: per-frame audit of driver calls, copies by direction and bytes,
//! and kernel launches by symbol, measured as (count(N2) - count(N1)) / (N2 - N1) so
//! that start-up work cancels; optional baseline subtraction and assertions.

use crate::common::{ClipArgs, ExtractorArgs};
use crate::counts::{prepare_dir, state_tag, Counts};
use crate::device::{emulated_env, for_real_device, DeviceMode, RealDevice};
use crate::fidelity::{self, CountDiff};
use crate::num::g17;
use crate::report;
use crate::run::{self, Spec};
use crate::template::{self, Backend};
use anyhow::{bail, Context, Result};
use serde_json::{json, Value as Json};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// The examples and exit codes of the command's `--help`.
const EXAMPLE: &str = "\
Examples:
  # what does the temporal twin move per frame on top of the sse twin?
  parity transfers -r ref.yuv -d dis.yuv -W 256 -H 256 --features temporal \\
      --baseline sse --max-htod-per-frame 0 --max-dtoh-per-frame 0
  # gate: at most one launch of each kernel and no allocation per frame
  parity transfers -r ref.yuv -d dis.yuv -W 256 -H 256 --features sse \\
      --max-allocs-per-frame 0 --max-per-frame launches.total=2 --n1 2 --n2 8
  # the same runs on the emulated driver and on the real GPU (simtwin's pass-through
  # counts there): calls, copies and launches per frame must be equal on both
  parity transfers -r ref.yuv -d dis.yuv -W 576 -H 324 --features sse,topk --device both

Keys (from the counters files, schema simtwin-counts/2): calls.<entry point>,
failures.<entry point>, copies.<HtoD|DtoH|DtoD|HtoH>.count|bytes, memsets.count|bytes,
allocations.count|bytes|frees, launches.<symbol>.count|threads|blocks, launches.total,
failed_launches.<symbol>, zero_copy.<symbol>, synchronizations, hazards,
leaks.<allocations|pinned|modules|streams|events>, unsupported.<entry point>.
Each extractor run is killed with its process group after --timeout SECONDS (default 600).
With --device both, every per-frame counter of the families calls, failures, copies,
memsets, allocations, launches, synchronizations and leaks must be equal on the emulated
driver and the real device; each difference is listed (per frame, and in the totals).
Exit codes: 0 audit passed, 1 an assertion failed (the report names the key and the
calls behind it), the driver reported hazards or (--device both) emulated and real
counts differ per frame, 2 setup error, 77 no real device.";

/// The arguments of `parity transfers`.
#[derive(clap::Args, Debug, Clone)]
#[command(after_help = EXAMPLE)]
pub struct TransfersArgs {
    #[command(flatten)]
    pub(crate) clip: ClipArgs,
    #[command(flatten)]
    pub(crate) ex: ExtractorArgs,
    /// CUDA extractor: a command template or preset:NAME (default: the --preset's CUDA command)
    #[arg(long)]
    pub cmd: Option<String>,
    /// Smaller frame count
    #[arg(long, default_value_t = 2)]
    pub n1: u64,
    /// Larger frame count (default: every frame of the clips, at most 8)
    #[arg(long)]
    pub n2: Option<u64>,
    /// Subtract the per-frame counts of the same extractor run with these features (no defect)
    #[arg(long, value_name = "FEATURE")]
    pub baseline: Option<String>,
    /// Subtract the per-frame counts of this extractor (template or preset:NAME) instead
    #[arg(long)]
    pub baseline_cmd: Option<String>,
    /// Where the CUDA extractor runs: the emulated driver, the real device (through
    /// simtwin's pass-through, EMU_CUDA_REAL, which counts in the same schema), or both
    /// (the same runs on each, their counts compared key by key)
    #[arg(long, value_enum, default_value = "emulated")]
    pub device: DeviceMode,
    /// Fail when host-to-device copies per frame exceed this
    #[arg(long)]
    pub max_htod_per_frame: Option<f64>,
    /// Fail when device-to-host copies per frame exceed this
    #[arg(long)]
    pub max_dtoh_per_frame: Option<f64>,
    /// Fail when device-to-device copies per frame exceed this
    #[arg(long)]
    pub max_dtod_per_frame: Option<f64>,
    /// Fail when host-to-host copies per frame exceed this
    #[arg(long)]
    pub max_htoh_per_frame: Option<f64>,
    /// Fail when host-to-device bytes per frame exceed this
    #[arg(long)]
    pub max_htod_bytes_per_frame: Option<f64>,
    /// Fail when device-to-host bytes per frame exceed this
    #[arg(long)]
    pub max_dtoh_bytes_per_frame: Option<f64>,
    /// Fail when allocations per frame exceed this
    #[arg(long)]
    pub max_allocs_per_frame: Option<f64>,
    /// Fail when synchronisations per frame exceed this
    #[arg(long)]
    pub max_syncs_per_frame: Option<f64>,
    /// Fail when kernel launches (all symbols) per frame exceed this
    #[arg(long)]
    pub max_launches_per_frame: Option<f64>,
    /// Fail when calls of one entry point per frame exceed a bound, NAME=X (repeatable)
    #[arg(long, value_name = "NAME=X")]
    pub max_calls_per_frame: Vec<String>,
    /// Fail when any key's per-frame value exceeds a bound, KEY=X (repeatable)
    #[arg(long, value_name = "KEY=X")]
    pub max_per_frame: Vec<String>,
    /// Fail when the extractor called entry points the emulated driver does not
    /// implement (the default; kept for scripts that name it)
    #[arg(long)]
    pub no_unsupported: bool,
    /// Do not fail when the extractor called entry points the emulated driver does not
    /// implement (they answered CUDA_ERROR_NOT_SUPPORTED)
    #[arg(long, conflicts_with = "no_unsupported")]
    pub allow_unsupported: bool,
    /// Do not fail on hazards the emulated driver reported
    #[arg(long)]
    pub allow_hazards: bool,
    /// Report directory
    #[arg(long, short = 'o', default_value = "reports/transfers")]
    pub out: PathBuf,
}

#[derive(Debug, Clone)]
pub(crate) struct Assertion {
    pub key: String,
    pub max: f64,
    pub flag: String,
}

fn parse_kv(s: &str, what: &str) -> Result<(String, f64)> {
    let (k, v) = s.rsplit_once('=').with_context(|| format!("{what} {s}: expected KEY=X"))?;
    let x: f64 = v.parse().ok().filter(|x: &f64| x.is_finite()).with_context(|| format!("{what} {s}: '{v}' is not a number"))?;
    Ok((k.to_string(), x))
}

impl TransfersArgs {
    pub(crate) fn assertions(&self) -> Result<Vec<Assertion>> {
        let mut v = Vec::new();
        let mut add = |o: Option<f64>, key: &str, flag: &str| {
            if let Some(m) = o {
                v.push(Assertion { key: key.into(), max: m, flag: format!("{flag} {m}") });
            }
        };
        add(self.max_htod_per_frame, "copies.HtoD.count", "--max-htod-per-frame");
        add(self.max_dtoh_per_frame, "copies.DtoH.count", "--max-dtoh-per-frame");
        add(self.max_dtod_per_frame, "copies.DtoD.count", "--max-dtod-per-frame");
        add(self.max_htoh_per_frame, "copies.HtoH.count", "--max-htoh-per-frame");
        add(self.max_htod_bytes_per_frame, "copies.HtoD.bytes", "--max-htod-bytes-per-frame");
        add(self.max_dtoh_bytes_per_frame, "copies.DtoH.bytes", "--max-dtoh-bytes-per-frame");
        add(self.max_allocs_per_frame, "allocations.count", "--max-allocs-per-frame");
        add(self.max_syncs_per_frame, "synchronizations", "--max-syncs-per-frame");
        add(self.max_launches_per_frame, "launches.total", "--max-launches-per-frame");
        for s in &self.max_calls_per_frame {
            let (k, x) = parse_kv(s, "--max-calls-per-frame")?;
            v.push(Assertion { key: format!("calls.{k}"), max: x, flag: format!("--max-calls-per-frame {s}") });
        }
        for s in &self.max_per_frame {
            let (k, x) = parse_kv(s, "--max-per-frame")?;
            v.push(Assertion { key: k, max: x, flag: format!("--max-per-frame {s}") });
        }
        Ok(v)
    }
}

/// Counts of one run at N1 and N2 frames.
pub(crate) struct Measured {
    pub label: String,
    pub n1: u64,
    pub n2: u64,
    pub c1: Counts,
    pub c2: Counts,
    pub commands: Vec<Vec<String>>,
}

pub(crate) fn with_total(c: &Counts) -> BTreeMap<String, f64> {
    let mut m = c.values.clone();
    m.insert("launches.total".into(), c.total_launches());
    m
}

pub(crate) fn per_frame(m: &Measured, n1: u64, n2: u64) -> BTreeMap<String, f64> {
    let (a, b) = (with_total(&m.c1), with_total(&m.c2));
    let keys: BTreeSet<&String> = a.keys().chain(b.keys()).collect();
    let d = (n2 - n1) as f64;
    keys.into_iter().map(|k| (k.clone(), (b.get(k).copied().unwrap_or(0.0) - a.get(k).copied().unwrap_or(0.0)) / d)).collect()
}

/// Entry points that can be behind a counter key (to name the offending calls).
fn related_calls(key: &str, net: &BTreeMap<String, f64>) -> Vec<(String, f64)> {
    let calls = net.iter().filter_map(|(k, v)| k.strip_prefix("calls.").map(|n| (n.to_string(), *v))).filter(|(_, v)| *v > 0.0);
    let dirs = ["HtoD", "DtoH", "DtoD", "HtoH", "AtoH", "HtoA", "DtoA", "AtoD", "AtoA"];
    let pick: Box<dyn Fn(&str) -> bool> = if let Some(rest) = key.strip_prefix("copies.") {
        let dir = rest.split('.').next().unwrap_or("").to_string();
        Box::new(move |n: &str| n.contains(dir.as_str()) || (n.contains("Memcpy") && !dirs.iter().any(|d| n.contains(d))))
    } else if key.starts_with("allocations.") {
        Box::new(|n: &str| n.contains("Alloc"))
    } else if key.starts_with("memsets.") {
        Box::new(|n: &str| n.contains("Memset"))
    } else if key == "synchronizations" {
        Box::new(|n: &str| n.contains("Synchronize") || n.contains("StreamWait") || n.contains("EventSynchronize"))
    } else if key.starts_with("launches.") {
        Box::new(|n: &str| n.contains("Launch"))
    } else if let Some(n) = key.strip_prefix("calls.") {
        let n = n.to_string();
        Box::new(move |x: &str| x == n)
    } else if let Some(n) = key.strip_prefix("unsupported.") {
        let n = n.to_string();
        Box::new(move |x: &str| x == n)
    } else {
        Box::new(|_: &str| false)
    };
    let mut v: Vec<(String, f64)> = calls.filter(|(n, _)| pick(n)).collect();
    if key.starts_with("launches.") {
        v.extend(
            net.iter().filter(|(k, x)| k.starts_with("launches.") && k.ends_with(".count") && **x > 0.0).map(|(k, x)| (k.clone(), *x)),
        );
    }
    v
}

fn fmt_pf(x: f64) -> String {
    if x == x.round() && x.abs() < 1e15 {
        format!("{}", x as i64)
    } else {
        format!("{x:.4}")
    }
}

/// Runs `parity transfers`: the exit code, or an error (exit code per [`crate::exit::exit_code_of`]).
pub fn run_transfers(a: &TransfersArgs) -> Result<i32> {
    report::guarded("transfers", &a.out, &ARTEFACTS, || inner(a))
}

struct Job {
    label: String,
    template: String,
    features: Option<String>,
    defect: bool,
}

/// Files of `parity transfers` in its report directory.
pub const ARTEFACTS: report::Artefacts<'static> = report::Artefacts {
    files: &["transfers.csv", "transfers.json", "transfers.md", "summary.json", "summary.md", "junit.xml"],
    dirs: &["counts", "logs"],
    prefixes: &["extractor-", "baseline-"],
    suffixes: &[".out", ".failed"],
};

/// Where one set of runs happens: the emulated driver, or the real device through the
/// pass-through.
struct Dev {
    name: &'static str,
    real: Option<RealDevice>,
    /// Prefix of failures in reports (`--device both` only).
    tag: &'static str,
}

/// The checked arguments of one audit.
struct Plan {
    n1: u64,
    n2: u64,
    out: PathBuf,
    simtwin: PathBuf,
    devices: Vec<Dev>,
    note: String,
    jobs: Vec<Job>,
    asserts: Vec<Assertion>,
    extra_env: Vec<(String, String)>,
}

/// One device's runs and what they give.
struct DevResult {
    measured: Vec<Measured>,
    net: Net,
    failures: Vec<String>,
    assert_json: Vec<Json>,
    /// Every gate of this device, passed or failed (for JUnit).
    gates_json: Vec<Json>,
}

/// Per-frame counts of the extractor, of the baseline and their difference.
struct Net {
    keys: BTreeSet<String>,
    main: BTreeMap<String, f64>,
    base: Option<BTreeMap<String, f64>>,
    net: BTreeMap<String, f64>,
}

fn inner(a: &TransfersArgs) -> Result<i32> {
    let plan = plan(a)?;
    eprintln!("parity: transfers audit, {}, at {} and {} frames, device {}", plan.note, plan.n1, plan.n2, a.device.name());
    let mut results = Vec::new();
    for dev in &plan.devices {
        let measured = measure(a, &plan, dev)?;
        let net = net_per_frame(&measured, plan.n1, plan.n2);
        let (gates, assert_json) = gates(a, &plan, &measured, &net);
        let failures = gates.iter().filter(|g| !g.pass).map(|g| format!("{}{}", dev.tag, g.message)).collect();
        let gates_json = gates.iter().map(|g| json!({"device": dev.name, "name": g.name, "pass": g.pass, "message": g.message})).collect();
        results.push(DevResult { measured, net, failures, assert_json, gates_json });
    }
    let side = match results.as_slice() {
        [e, r] => Some(SideBySide::of(e, r)),
        _ => None,
    };
    let mut failures: Vec<String> = results.iter().flat_map(|r| r.failures.iter().cloned()).collect();
    if let Some(s) = &side {
        failures.extend(s.failures());
    }
    let code = if failures.is_empty() { 0 } else { 1 };
    let first = &results[0];
    write_csv(&plan.out, &results, side.as_ref())?;
    let summary = summary_json(a, &plan, &results, side.as_ref(), &failures, code);
    let mut md = markdown(&summary, &first.net.keys, &first.net.main, first.net.base.as_ref(), &first.net.net, &failures);
    if let Some(s) = &side {
        md.push_str(&s.markdown(&results[1].net));
    }
    report::write_atomic(&plan.out.join("transfers.md"), md)?;
    report::write_json(&plan.out.join("transfers.json"), &summary)?;
    crate::junit::write(
        &plan.out.join("junit.xml"),
        "parity transfers",
        &[crate::junit::Suite { name: "parity transfers".into(), cases: crate::junit::transfers_cases(&summary), time: None }],
    )?;
    print_summary(&first.net.keys, &first.net.main, first.net.base.as_ref(), &first.net.net, side.as_ref(), &failures, &plan.out, code);
    Ok(code)
}

/// `--device both`: the emulated and the real device's counts of the same runs, key by
/// key, per frame (the gate) and in the totals at N1 and N2 (listed).
struct SideBySide {
    /// (job label, differences per frame).
    per_frame: Vec<(String, Vec<CountDiff>)>,
    /// (job label, frames, differences in the totals).
    totals: Vec<(String, u64, Vec<CountDiff>)>,
    compared: usize,
}

impl SideBySide {
    fn of(e: &DevResult, r: &DevResult) -> SideBySide {
        let mut s = SideBySide { per_frame: vec![], totals: vec![], compared: 0 };
        let mut keys = BTreeSet::new();
        for (me, mr) in e.measured.iter().zip(&r.measured) {
            let (pe, pr) = (per_frame_of(&e.net, me), per_frame_of(&r.net, mr));
            keys.extend(pe.keys().chain(pr.keys()).filter(|k| fidelity::compared_key(k)).cloned());
            s.per_frame.push((me.label.clone(), fidelity::count_diffs(&pe, &pr)));
            for (n, ce, cr) in [(me.n1, &me.c1, &mr.c1), (me.n2, &me.c2, &mr.c2)] {
                s.totals.push((me.label.clone(), n, fidelity::count_diffs(&with_total(ce), &with_total(cr))));
            }
        }
        s.compared = keys.len();
        s
    }

    fn failures(&self) -> Vec<String> {
        self.per_frame
            .iter()
            .filter(|(_, d)| !d.is_empty())
            .map(|(job, d)| {
                format!(
                    "{job}: emulated and real device differ per frame in {} counter(s): {}",
                    d.len(),
                    d.iter()
                        .map(|x| format!("{} (emulated {}, real {})", x.key, fmt_pf(x.emulated), fmt_pf(x.real)))
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            })
            .collect()
    }

    fn equal(&self) -> bool {
        self.per_frame.iter().all(|(_, d)| d.is_empty())
    }

    fn to_json(&self) -> Json {
        json!({
            "compared_keys": self.compared,
            "equal_per_frame": self.equal(),
            "per_frame_differences": self.per_frame.iter().map(|(j, d)| json!({"job": j, "differences": fidelity::count_diffs_json(d)})).collect::<Vec<_>>(),
            "total_differences": self.totals.iter().map(|(j, n, d)| json!({"job": j, "frames": n, "differences": fidelity::count_diffs_json(d)})).collect::<Vec<_>>(),
        })
    }

    fn markdown(&self, real: &Net) -> String {
        let mut m = String::from("\n## Emulated driver vs real device (the same runs)\n\n");
        for (job, d) in &self.per_frame {
            m.push_str(&fidelity::count_diffs_markdown(&format!("Per frame, {job}"), d, self.compared));
        }
        for (job, n, d) in &self.totals {
            m.push_str(&fidelity::count_diffs_markdown(&format!("Totals at {n} frames, {job}"), d, self.compared));
        }
        let _ = writeln!(
            m,
            "Per frame on the real device (net of the baseline where there is one):\n\n| key | real device per frame |\n|---|---|"
        );
        for k in interesting(&real.keys, &real.main, real.base.as_ref()) {
            let _ = writeln!(m, "| {k} | {} |", fmt_pf(real.net[k]));
        }
        m
    }
}

/// The per-frame counts of one job (the extractor's, or the baseline's).
fn per_frame_of(net: &Net, m: &Measured) -> BTreeMap<String, f64> {
    if m.label == "baseline" {
        net.base.clone().unwrap_or_default()
    } else {
        net.main.clone()
    }
}

/// Validation, the report directory (cleared of an earlier run's files), the device
/// and the job list (the extractor, and the baseline when one is given).
fn plan(a: &TransfersArgs) -> Result<Plan> {
    let n2 = match a.n2 {
        Some(n) => n,
        None => a.clip.clip()?.resolve_frames(None)?.min(8),
    };
    if a.n1 < 1 || n2 <= a.n1 {
        bail!("need 1 <= --n1 < --n2 (got {} and {n2}; the clips' frame count is the default --n2)", a.n1);
    }
    a.clip.clip()?.resolve_frames(Some(n2))?;
    let asserts = a.assertions()?;
    if a.baseline.is_some() && a.baseline_cmd.is_some() {
        bail!("--baseline and --baseline-cmd exclude each other");
    }
    if let Some(o) = &a.ex.emu.block_order {
        crate::orders::check_order(o)?;
    }
    let out = std::fs::canonicalize(&a.out).with_context(|| format!("report directory {}", a.out.display()))?;
    let real = if a.device.real() { Some(RealDevice::find()?) } else { None };
    let simtwin = a.ex.require_simtwin()?;
    let mut devices = Vec::new();
    let both = a.device == DeviceMode::Both;
    if a.device.emulated() {
        devices.push(Dev { name: "emulated", real: None, tag: if both { "[emulated] " } else { "" } });
    }
    if let Some(r) = real {
        r.check_passthrough(&simtwin, a.ex.kernels.as_deref())?;
        devices.push(Dev { name: "real", real: Some(r), tag: if both { "[real device] " } else { "" } });
    }
    let (tmpl, note) = template::resolve(a.cmd.as_deref(), &a.ex.preset, Backend::Cuda)?;
    let mut jobs = vec![Job { label: "extractor".into(), template: tmpl.clone(), features: None, defect: true }];
    if let Some(f) = &a.baseline {
        jobs.push(Job { label: "baseline".into(), template: tmpl, features: Some(f.clone()), defect: false });
    } else if let Some(c) = &a.baseline_cmd {
        let (t, _) = template::resolve(Some(c), &a.ex.preset, Backend::Cuda)?;
        jobs.push(Job { label: "baseline".into(), template: t, features: None, defect: false });
    }
    let extra_env = a.ex.cuda_extra_env()?;
    Ok(Plan { n1: a.n1, n2, out, simtwin, devices, note, jobs, asserts, extra_env })
}

/// Runs every job at N1 and N2 frames on one device and reads their counters.
fn measure(a: &TransfersArgs, plan: &Plan, dev: &Dev) -> Result<Vec<Measured>> {
    let pb = indicatif::ProgressBar::new(plan.jobs.len() as u64 * 2);
    pb.set_style(indicatif::ProgressStyle::with_template("{spinner} [{pos}/{len}] {elapsed:>4} {msg}").unwrap());
    pb.enable_steady_tick(std::time::Duration::from_millis(120));
    let mut measured = Vec::new();
    for job in &plan.jobs {
        let mut cs = Vec::new();
        let mut cmds = Vec::new();
        for n in [plan.n1, plan.n2] {
            let (c, argv) = measure_one(a, plan, dev, job, n, &pb)?;
            pb.inc(1);
            cs.push(c);
            cmds.push(argv);
        }
        let c2 = cs.pop().unwrap();
        let c1 = cs.pop().unwrap();
        measured.push(Measured { label: job.label.clone(), n1: plan.n1, n2: plan.n2, c1, c2, commands: cmds });
    }
    pb.finish_and_clear();
    Ok(measured)
}

/// One run of one job at `n` frames; its counters must prove that it ran on the device.
fn measure_one(a: &TransfersArgs, plan: &Plan, dev: &Dev, job: &Job, n: u64, pb: &indicatif::ProgressBar) -> Result<(Counts, Vec<String>)> {
    let tag = if plan.devices.len() > 1 && dev.real.is_some() { format!("{}-real-n{n}", job.label) } else { format!("{}-n{n}", job.label) };
    let cdir = plan.out.join("counts").join(&tag);
    let pattern = prepare_dir(&cdir)?;
    let env = match &dev.real {
        None => {
            let mut env = emulated_env(&plan.simtwin, a.ex.kernels.as_deref(), &pattern)?.vars;
            env.extend(plan.extra_env.clone());
            env
        }
        Some(r) => {
            let mut env = r.env(&plan.simtwin, a.ex.kernels.as_deref(), &pattern)?.vars;
            env.extend(for_real_device(&plan.extra_env).0);
            env
        }
    };
    let o = plan.out.join(format!("{tag}.out"));
    let mut ex = a.ex.clone();
    if !job.defect {
        ex.defect = None;
    }
    let argv = template::expand(&job.template, &ex.vars(&a.clip.clip()?, n, &o, Backend::Cuda, job.features.as_deref()))?;
    pb.set_message(format!("{tag}: {}", template::display(&argv)));
    let spec =
        Spec { label: tag.clone(), argv: argv.clone(), env, log_dir: plan.out.join("logs"), spinner: false, timeout: a.ex.timeout() };
    if let Err(e) = run::run(&spec) {
        report::mark_failed(&o);
        return Err(e);
    }
    let c = crate::counts::collect(&cdir)?;
    if c.files.is_empty() {
        let who = if dev.real.is_some() { "simtwin's pass-through" } else { "the emulated driver" };
        bail!("{tag}: {who} wrote no counters file into {}: the extractor did not load simtwin's libcuda.so.1", cdir.display());
    }
    if c.total_launches() == 0.0 {
        bail!("{tag}: the CUDA extractor launched no kernel; it did not run on the device (a CPU fallback?)");
    }
    Ok((c, argv))
}

/// Per frame of the extractor, of the baseline, and the extractor's net of the baseline.
fn net_per_frame(measured: &[Measured], n1: u64, n2: u64) -> Net {
    let main = per_frame(&measured[0], n1, n2);
    let base = measured.get(1).map(|m| per_frame(m, n1, n2));
    let keys: BTreeSet<String> = main.keys().chain(base.iter().flat_map(|b| b.keys())).cloned().collect();
    let net = keys
        .iter()
        .map(|k| (k.clone(), main.get(k).copied().unwrap_or(0.0) - base.as_ref().and_then(|b| b.get(k)).copied().unwrap_or(0.0)))
        .collect();
    Net { keys, main, base, net }
}

/// The gates (one per assertion, the hazards, unsupported calls with --no-unsupported):
/// each passes or fails with a message naming the calls behind it.
struct GateResult {
    name: String,
    pass: bool,
    message: String,
}

/// The assertions, hazards and unsupported entry points as gates, and the assertions' JSON.
fn gates(a: &TransfersArgs, plan: &Plan, measured: &[Measured], net: &Net) -> (Vec<GateResult>, Vec<Json>) {
    let mut gates = Vec::new();
    let mut assert_json = Vec::new();
    for asr in &plan.asserts {
        let v = net.net.get(&asr.key).copied().unwrap_or(0.0);
        let pass = v <= asr.max + 1e-9;
        let calls = related_calls(&asr.key, &net.net);
        let calls_s = calls
            .iter()
            .map(|(n, x)| format!("{n} {}{}/frame", if *x > 0.0 { "+" } else { "" }, fmt_pf(*x)))
            .collect::<Vec<_>>()
            .join(", ");
        let message = format!(
            "{}: {} = {} per frame{} {} {} (calls: {})",
            asr.flag,
            asr.key,
            fmt_pf(v),
            if net.base.is_some() { " beyond the baseline" } else { "" },
            if pass { "<=" } else { ">" },
            fmt_pf(asr.max),
            if calls_s.is_empty() { "none identified".into() } else { calls_s.clone() }
        );
        gates.push(GateResult { name: asr.flag.clone(), pass, message });
        assert_json.push(json!({"flag": asr.flag, "key": asr.key, "max": asr.max, "value": v, "pass": pass,
                                 "calls": calls.iter().map(|(n, x)| json!({"name": n, "per_frame": x})).collect::<Vec<_>>()}));
    }
    let hazards = hazards_of(measured);
    gates.push(GateResult {
        name: "hazards".into(),
        pass: hazards.is_empty() || a.allow_hazards,
        message: match hazards.first() {
            None => "no hazard reported".into(),
            Some(h) => format!(
                "the emulated driver reported {} hazard(s){}; first: {h}",
                hazards.len(),
                if a.allow_hazards { " (allowed by --allow-hazards)" } else { "" }
            ),
        },
    });
    if !a.allow_unsupported {
        let unsupported = unsupported_of(measured);
        gates.push(GateResult {
            name: "unsupported".into(),
            pass: unsupported.is_empty(),
            message: if unsupported.is_empty() {
                "no unsupported entry point called".into()
            } else {
                format!(
                    "unsupported entry points called (--allow-unsupported accepts them): {}",
                    unsupported
                        .iter()
                        .map(|(k, v)| format!("{} x{v}", k.trim_start_matches("unsupported.")))
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            },
        });
    }
    (gates, assert_json)
}

fn hazards_of(measured: &[Measured]) -> Vec<Json> {
    measured.iter().flat_map(|m| m.c2.hazards().iter().chain(m.c1.hazards().iter()).map(|h| json!(h))).collect()
}

fn unsupported_of(measured: &[Measured]) -> Vec<(String, f64)> {
    measured
        .iter()
        .flat_map(|m| m.c2.values.iter().filter(|(k, v)| k.starts_with("unsupported.") && **v > 0.0).map(|(k, v)| (k.clone(), *v)))
        .collect()
}

/// `transfers.csv`: every key with its totals at both frame counts and per frame (with
/// `--device both`, the real device's columns after the emulated driver's).
fn write_csv(out: &Path, results: &[DevResult], side: Option<&SideBySide>) -> Result<()> {
    let mut w = csv::Writer::from_writer(Vec::new());
    let mut head: Vec<String> =
        ["key", "count_n1", "count_n2", "per_frame", "baseline_per_frame", "net_per_frame"].map(String::from).to_vec();
    if side.is_some() {
        head.extend(
            ["real_count_n1", "real_count_n2", "real_per_frame", "real_baseline_per_frame", "real_net_per_frame", "equal_per_frame"]
                .map(String::from),
        );
    }
    w.write_record(&head)?;
    let keys: BTreeSet<&String> = results.iter().flat_map(|r| r.net.keys.iter()).collect();
    let get = |m: &BTreeMap<String, f64>, k: &str| g17(m.get(k).copied().unwrap_or(0.0));
    for k in keys {
        let mut rec = vec![k.clone()];
        for r in results {
            let (t1, t2) = (with_total(&r.measured[0].c1), with_total(&r.measured[0].c2));
            rec.extend([
                get(&t1, k),
                get(&t2, k),
                get(&r.net.main, k),
                r.net.base.as_ref().map(|b| get(b, k)).unwrap_or_default(),
                get(&r.net.net, k),
            ]);
        }
        if let Some(s) = side {
            let equal = !s.per_frame.iter().any(|(_, d)| d.iter().any(|x| &x.key == k));
            rec.push(if fidelity::compared_key(k) { equal.to_string() } else { "not compared".into() });
        }
        w.write_record(&rec)?;
    }
    report::write_atomic(&out.join("transfers.csv"), w.into_inner().map_err(|e| anyhow::anyhow!("{e}"))?)
}

/// The per-frame figures of one device.
fn device_json(r: &DevResult) -> Json {
    let m0 = &r.measured[0];
    json!({
        "per_frame": r.net.main,
        "baseline_per_frame": r.net.base,
        "net_per_frame": r.net.net,
        "counts": {"n1": with_total(&m0.c1), "n2": with_total(&m0.c2)},
        "assertions": r.assert_json,
        "failures": r.failures,
    })
}

/// `transfers.json`: the first device's figures at the top level (the emulated driver's
/// with `--device both`), each device's under `devices`, and the comparison.
fn summary_json(a: &TransfersArgs, plan: &Plan, results: &[DevResult], side: Option<&SideBySide>, failures: &[String], code: i32) -> Json {
    let first = &results[0];
    let measured: Vec<&Measured> = results.iter().flat_map(|r| r.measured.iter()).collect();
    let hazards = hazards_of(&first.measured);
    let unclean: Vec<String> =
        measured.iter().flat_map(|m| m.c1.unclean().into_iter().chain(m.c2.unclean()).map(move |u| format!("{}: {u}", m.label))).collect();
    let mut runs = Vec::new();
    for (dev, r) in plan.devices.iter().zip(results) {
        for m in &r.measured {
            runs.push(json!({"label": m.label, "device": dev.name, "driver": dev.real.as_ref().map(|x| x.label()).unwrap_or_else(|| "emulated".into()),
                "commands": m.commands, "counts_files": m.c1.paths().into_iter().chain(m.c2.paths()).collect::<Vec<_>>(),
                "counts_state": [state_tag(&m.c1.state()), state_tag(&m.c2.state())]}));
        }
    }
    let mut j = device_json(first);
    let extra = json!({
        "schema": "simtwin-transfers/1",
        "verdict": if code == 0 { "pass" } else { "fail" },
        "exit_code": code,
        "n1": plan.n1, "n2": plan.n2,
        "features": a.ex.features, "defect": a.ex.defect,
        "baseline": a.baseline.clone().or(a.baseline_cmd.clone()),
        "flags": plan.note,
        "device": a.device.name(),
        "devices": plan.devices.iter().zip(results).map(|(d, r)| (d.name.to_string(), device_json(r))).collect::<serde_json::Map<_, _>>(),
        "emulated_vs_real": side.map(SideBySide::to_json),
        "failures": failures,
        "gates": results.iter().flat_map(|r| r.gates_json.iter().cloned()).chain(side.map(|s| json!({"device": "both", "name": "emulated-vs-real",
            "pass": s.failures().is_empty(), "message": if s.failures().is_empty() { "per-frame counts equal on the emulated driver and the real device".to_string() } else { s.failures().join("; ") }}))).collect::<Vec<_>>(),
        "hazards": {"count": hazards.len(), "reports": hazards.iter().take(20).collect::<Vec<_>>()},
        "unsupported": results.iter().flat_map(|r| unsupported_of(&r.measured)).collect::<BTreeMap<_, _>>(),
        "counts_not_from_clean_exit": unclean,
        "runs": runs,
    });
    for (k, v) in extra.as_object().into_iter().flatten() {
        j[k] = v.clone();
    }
    j
}

fn interesting<'a>(keys: &'a BTreeSet<String>, main: &BTreeMap<String, f64>, base: Option<&BTreeMap<String, f64>>) -> Vec<&'a String> {
    keys.iter()
        .filter(|k| main.get(*k).copied().unwrap_or(0.0) != 0.0 || base.is_some_and(|b| b.get(*k).copied().unwrap_or(0.0) != 0.0))
        .collect()
}

fn markdown(
    s: &Json,
    keys: &BTreeSet<String>,
    main: &BTreeMap<String, f64>,
    base: Option<&BTreeMap<String, f64>>,
    net: &BTreeMap<String, f64>,
    failures: &[String],
) -> String {
    let mut m = String::new();
    let _ = writeln!(m, "# parity transfers\n");
    let _ = writeln!(
        m,
        "**Verdict: {}** (exit code {}); per frame = (count({}) - count({})) / ({} - {}); {}\n",
        s["verdict"].as_str().unwrap_or("?").to_uppercase(),
        s["exit_code"],
        s["n2"],
        s["n1"],
        s["n2"],
        s["n1"],
        s["flags"].as_str().unwrap_or("")
    );
    for f in failures {
        let _ = writeln!(m, "- **FAIL** {f}");
    }
    for u in s["counts_not_from_clean_exit"].as_array().into_iter().flatten() {
        let _ = writeln!(m, "- **counters not from a clean exit**: {}", u.as_str().unwrap_or(""));
    }
    if !failures.is_empty() || s["counts_not_from_clean_exit"].as_array().is_some_and(|a| !a.is_empty()) {
        m.push('\n');
    }
    let _ = writeln!(m, "| key | per frame | baseline per frame | net per frame |\n|---|---|---|---|");
    for k in interesting(keys, main, base) {
        let _ = writeln!(
            m,
            "| {k} | {} | {} | {} |",
            fmt_pf(main.get(k).copied().unwrap_or(0.0)),
            base.map(|b| fmt_pf(b.get(k).copied().unwrap_or(0.0))).unwrap_or_else(|| "-".into()),
            fmt_pf(net[k])
        );
    }
    let _ = writeln!(m, "\nKeys that are zero per frame are omitted here; `transfers.csv` and `transfers.json` hold every key with the totals at both frame counts.");
    m
}

#[allow(clippy::too_many_arguments)]
fn print_summary(
    keys: &BTreeSet<String>,
    main: &BTreeMap<String, f64>,
    base: Option<&BTreeMap<String, f64>>,
    net: &BTreeMap<String, f64>,
    side: Option<&SideBySide>,
    failures: &[String],
    out: &Path,
    code: i32,
) {
    println!("  {:<48} {:>14} {:>14} {:>14}", "per frame", "extractor", "baseline", "net");
    for k in interesting(keys, main, base) {
        println!(
            "  {:<48} {:>14} {:>14} {:>14}",
            k,
            fmt_pf(main.get(k).copied().unwrap_or(0.0)),
            base.map(|b| fmt_pf(b.get(k).copied().unwrap_or(0.0))).unwrap_or_else(|| "-".into()),
            fmt_pf(net[k])
        );
    }
    if let Some(s) = side {
        if s.equal() {
            println!("emulated vs real device: all {} compared counters equal per frame", s.compared);
        }
        for (job, n, d) in &s.totals {
            for x in d {
                println!("  totals at {n} frames, {job}: {} emulated {} real {}", x.key, fmt_pf(x.emulated), fmt_pf(x.real));
            }
        }
    }
    for f in failures {
        println!("FAIL {f}");
    }
    println!("verdict: {} (exit {code}); reports in {}", if code == 0 { "PASS" } else { "FAIL" }, out.display());
}
