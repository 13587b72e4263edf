//! `parity demo`: the end-to-end demonstration the README's main command calls.
//! Builds nothing: it expects simtwin's build (target/simtwin, from scripts/build).
//! It writes the fixture clips with the `fixtures` binary, runs `parity frames` for
//! each feature on each clip under the emulated driver, a `parity transfers` audit per
//! feature, and (unless --no-defects) checks that each planted defect of the CUDA
//! twin is caught by the mechanism fixtures/README.md names (atomic-order: outputs that
//! change between block orders; missing-sync: the shared-memory race detector,
//! `--checks race`, whose clean control is the correct twin run the same way). Reports
//! land under reports/demo/; a summary table is
//! printed. ALL PASS (exit 0) only when every check passed and every defect was CAUGHT:
//! a defect WAITING for a mechanism the driver does not have yet fails the demo.

use crate::common::{ClipArgs, ExtractorArgs};
use crate::device::{find_simtwin, DeviceMode, Refused, NOT_SUPPORTED};
use crate::frames::{run_frames, FramesArgs};
use crate::transfers::{run_transfers, TransfersArgs};
use anyhow::{bail, Context, Result};
use serde_json::json;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The examples and exit codes of the command's `--help`.
const EXAMPLE: &str = "\
Examples:
  scripts/build && parity demo
  parity demo --clips banded-256x256-8,textured-256x256-8 --features sse,topk --no-defects
  parity demo --all-clips --out reports/demo-full

Exit codes: 0 everything at parity and every planted defect CAUGHT (ALL PASS), 1 a
parity difference, a failed audit or a defect MISSED or WAITING (its mechanism not built
in the driver: never reported as a pass), 2 setup error (target/simtwin missing: run
scripts/build).";

/// The clips the demo uses without `--clips`/`--all-clips` (small ones and the wide ramps).
pub(crate) const DEFAULT_CLIPS: &[&str] =
    &["banded-256x256-8", "testsrc-256x256-10", "ramp-1920x64-8", "ramp-3840x128-8", "textured-256x256-8"];

/// Time limit of the fixtures binary (every clip of the set takes seconds).
const FIXTURES_LIMIT: std::time::Duration = std::time::Duration::from_secs(600);

/// The block orders the demo compares for order-dependent results.
pub const DEMO_ORDERS: &[&str] = &["forward", "reverse", "shuffle:1"];

/// The clip of the atomic-order check: a textured pair with noise of amplitude 40, so
/// that the top 10% of differences hold many distinct values. On the set's clips (noise
/// of amplitude 2 to 6, quantisation) they are all ties at the threshold, which
/// topk_select adds once: the float atomics then add only zeros and no order shows.
pub const ATOMIC_CLIP: (&str, u32, u32, u32, &str) = ("atomic-textured-256x256-8", 256, 256, 3, "noise:5:40");

/// The arguments of `parity demo`.
#[derive(clap::Args, Debug, Clone)]
#[command(after_help = EXAMPLE)]
pub struct DemoArgs {
    /// simtwin build directory (default: target/simtwin)
    #[arg(long)]
    pub simtwin: Option<PathBuf>,
    /// Report directory
    #[arg(long, short = 'o', default_value = "reports/demo")]
    pub out: PathBuf,
    /// Clips of the fixture set to use (comma separated; see `fixtures list`)
    #[arg(long, value_delimiter = ',')]
    pub clips: Vec<String>,
    /// Use every clip of the fixture set (up to 3840x2160: slow under emulation)
    #[arg(long)]
    pub all_clips: bool,
    /// Features to check (comma separated)
    #[arg(long, value_delimiter = ',')]
    pub features: Vec<String>,
    /// Skip the planted-defect checks
    #[arg(long)]
    pub no_defects: bool,
    /// Time limit of each extractor run in seconds (default 600), e.g. --timeout 120
    #[arg(long, value_name = "SECONDS", value_parser = crate::run::parse_timeout)]
    pub timeout: Option<f64>,
}

struct ClipFile {
    name: String,
    reference: PathBuf,
    distorted: PathBuf,
    width: u32,
    height: u32,
    bitdepth: u32,
}

/// One parity or transfer check of the demo.
pub(crate) struct CheckRow {
    pub section: &'static str,
    pub clip: String,
    pub feature: String,
    pub code: i32,
    pub detail: String,
}

/// What became of a planted defect.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum DefectResult {
    /// The mechanism named for it reported it.
    Caught,
    /// It ran and the defect went unnoticed (or the run failed otherwise).
    Missed,
    /// The mechanism is not available in this build (the driver refuses the setting).
    Waiting,
}

impl DefectResult {
    pub fn name(self) -> &'static str {
        match self {
            DefectResult::Caught => "CAUGHT",
            DefectResult::Missed => "MISSED",
            DefectResult::Waiting => "WAITING",
        }
    }
}

/// One planted-defect check.
pub(crate) struct DefectRow {
    pub defect: String,
    pub how: String,
    pub code: i32,
    pub result: DefectResult,
    pub detail: String,
}

/// The demo's verdict.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Verdict {
    pub code: i32,
    /// Only when every check passed and every planted defect was CAUGHT.
    pub all_pass: bool,
    /// Why not (one line each).
    pub reasons: Vec<String>,
}

/// The demo's summary rule: ALL PASS (exit 0) only when every check passed and every
/// planted defect was caught. A defect that is WAITING (its mechanism is not built) or
/// MISSED is a failure (exit 1), never a pass; a setup error anywhere gives 2.
pub(crate) fn verdict(checks: &[CheckRow], defects: &[DefectRow]) -> Verdict {
    let mut code = 0;
    let mut reasons = Vec::new();
    for c in checks.iter().filter(|c| c.code != 0) {
        code = if c.code == 2 || code == 2 { 2 } else { 1 };
        reasons.push(format!("{} {} {}: exit {}", c.section, c.clip, c.feature, c.code));
    }
    for d in defects.iter().filter(|d| d.result != DefectResult::Caught) {
        code = code.max(1);
        reasons.push(format!("planted defect {}: {}", d.defect, d.result.name()));
    }
    Verdict { code, all_pass: code == 0, reasons }
}

/// Parses `KIND-WxH-DEPTH`.
fn parse_name(name: &str) -> Option<(u32, u32, u32)> {
    let mut parts = name.rsplitn(3, '-');
    let depth: u32 = parts.next()?.parse().ok()?;
    let (w, h) = parts.next()?.split_once('x')?;
    Some((w.parse().ok()?, h.parse().ok()?, depth))
}

fn clip_args(c: &ClipFile) -> ClipArgs {
    ClipArgs {
        reference: Some(c.reference.clone()),
        distorted: Some(c.distorted.clone()),
        width: Some(c.width),
        height: Some(c.height),
        bitdepth: c.bitdepth,
        pixfmt: "420".into(),
    }
}

/// What every run of the demo shares.
struct Ctx {
    simtwin: PathBuf,
    out: PathBuf,
    timeout: Option<f64>,
}

impl Ctx {
    fn ex(&self, features: &str, defect: Option<&str>) -> ExtractorArgs {
        ExtractorArgs {
            preset: "twin".into(),
            features: Some(features.into()),
            defect: defect.map(String::from),
            twin: None,
            vmaf: "vmaf".into(),
            simtwin: Some(self.simtwin.clone()),
            kernels: None,
            emu: Default::default(),
            cuda_env: vec![],
            timeout: self.timeout,
        }
    }
}

fn frames_args(c: &ClipFile, ex: ExtractorArgs, out: PathBuf) -> FramesArgs {
    FramesArgs {
        clip: clip_args(c),
        frames: None,
        ex,
        cpu_cmd: None,
        cuda_cmd: None,
        device: DeviceMode::Emulated,
        tolerances: None,
        metrics: vec![],
        ignore_metric: vec![],
        proof: "auto".into(),
        allow_hazards: false,
        allow_unsupported: false,
        block_orders: vec![],
        clips: None,
        per_feature: false,
        shard: None,
        video: vec![],
        pix_fmt: None,
        max_diff: 0,
        label_a: "a".into(),
        label_b: "b".into(),
        out,
    }
}

fn transfers_args(c: &ClipFile, ex: ExtractorArgs, out: PathBuf) -> TransfersArgs {
    TransfersArgs {
        clip: clip_args(c),
        ex,
        cmd: None,
        n1: 2,
        n2: None,
        baseline: None,
        baseline_cmd: None,
        device: DeviceMode::Emulated,
        max_htod_per_frame: None,
        max_dtoh_per_frame: None,
        max_dtod_per_frame: None,
        max_htoh_per_frame: None,
        max_htod_bytes_per_frame: None,
        max_dtoh_bytes_per_frame: None,
        max_allocs_per_frame: None,
        max_syncs_per_frame: None,
        max_launches_per_frame: None,
        max_calls_per_frame: vec![],
        max_per_frame: vec![],
        no_unsupported: true,
        allow_unsupported: false,
        allow_hazards: false,
        out,
    }
}

fn code(r: &Result<i32>) -> (i32, String) {
    match r {
        Ok(c) => (*c, String::new()),
        Err(e) => (crate::exit::exit_code_of(e), format!("{e:#}").lines().next().unwrap_or("").to_string()),
    }
}

/// Runs `parity demo`: the verdict's exit code (0 ALL PASS, 1 a failure, 2 a setup error
/// in one of its checks), or an error when it cannot start (no build, no clips).
pub fn run_demo(a: &DemoArgs) -> Result<i32> {
    crate::report::guarded("demo", &a.out, &DEMO_ARTEFACTS, || demo_inner(a))
}

/// The demo's own files in its report directory (each check has a directory of its own).
pub const DEMO_ARTEFACTS: crate::report::Artefacts<'static> =
    crate::report::Artefacts { files: &["summary.json", "summary.md"], dirs: &[], prefixes: &[], suffixes: &[] };

fn demo_inner(a: &DemoArgs) -> Result<i32> {
    let simtwin = check_build(a)?;
    let out = std::fs::canonicalize(&a.out).with_context(|| format!("report directory {}", a.out.display()))?;
    let ctx = Ctx { simtwin, out, timeout: a.timeout };
    let clip_dir = ctx.out.join("clips");
    let clips = make_clips(&ctx, a, &clip_dir)?;
    // The fixture twin's features and planted defects: fixtures/twin/twin.h's lists.
    let features: Vec<String> =
        if a.features.is_empty() { fixtures::twin::features().iter().map(|s| s.to_string()).collect() } else { a.features.clone() };
    let mut checks = parity_checks(&ctx, &clips, &features);
    checks.extend(transfer_checks(&ctx, &clips[0], &features));
    if !a.no_defects {
        checks.push(race_control(&ctx, &clips));
    }
    let defects = if a.no_defects { vec![] } else { defect_checks(&ctx, &clips, &atomic_clip(&ctx, &clip_dir)?) };
    let v = verdict(&checks, &defects);
    write_summary(&ctx, &clip_dir, &checks, &defects, &v)?;
    Ok(v.code)
}

/// The build the demo runs (it builds nothing itself).
fn check_build(a: &DemoArgs) -> Result<PathBuf> {
    let simtwin = find_simtwin(a.simtwin.as_deref()).context("parity demo needs simtwin's build; run scripts/build first")?;
    let simtwin = std::fs::canonicalize(&simtwin)?;
    for need in ["bin/fixtures", "bin/simtwin-twin", "lib/libcuda.so.1", "kernels"] {
        if !simtwin.join(need).exists() {
            bail!("{} is missing: run scripts/build first", simtwin.join(need).display());
        }
    }
    Ok(simtwin)
}

/// Writes the fixture clips with `fixtures make-set` and lists them.
fn make_clips(ctx: &Ctx, a: &DemoArgs, clip_dir: &Path) -> Result<Vec<ClipFile>> {
    let mut cmd = Command::new(ctx.simtwin.join("bin/fixtures"));
    cmd.arg("make-set").arg("-o").arg(clip_dir);
    let names: Vec<String> = if a.all_clips {
        vec![]
    } else if a.clips.is_empty() {
        DEFAULT_CLIPS.iter().map(|s| s.to_string()).collect()
    } else {
        a.clips.clone()
    };
    for n in &names {
        cmd.arg("--only").arg(n);
    }
    eprintln!("parity demo: writing fixture clips into {}", clip_dir.display());
    let pb = crate::run::spinner("fixtures make-set".into());
    let o = crate::run::output_limited(&mut cmd, "fixtures make-set", FIXTURES_LIMIT);
    pb.finish_and_clear();
    let o = o?;
    if !o.status.success() {
        bail!("fixtures make-set failed: {}", String::from_utf8_lossy(&o.stderr).trim());
    }
    let mut clips = Vec::new();
    for line in String::from_utf8_lossy(&o.stdout).lines() {
        let p = PathBuf::from(line.trim());
        let stem = p.file_stem().and_then(|s| s.to_str()).unwrap_or("").to_string();
        if stem.ends_with("-dis") || stem.is_empty() {
            continue;
        }
        let (width, height, bitdepth) = parse_name(&stem).with_context(|| format!("cannot read size and depth from clip name {stem}"))?;
        let dis = p.with_file_name(format!("{stem}-dis.yuv"));
        if !dis.exists() {
            bail!("fixtures make-set wrote {} but no {}", p.display(), dis.display());
        }
        clips.push(ClipFile { name: stem, reference: p, distorted: dis, width, height, bitdepth });
    }
    if clips.is_empty() {
        bail!("fixtures make-set wrote no clips");
    }
    Ok(clips)
}

/// Writes [`ATOMIC_CLIP`] with `fixtures clip` (reference, then distorted).
fn atomic_clip(ctx: &Ctx, clip_dir: &Path) -> Result<ClipFile> {
    let (name, w, h, frames, distort) = ATOMIC_CLIP;
    let reference = clip_dir.join(format!("{name}.yuv"));
    let distorted = clip_dir.join(format!("{name}-dis.yuv"));
    for (path, d) in [(&reference, None), (&distorted, Some(distort))] {
        let mut cmd = Command::new(ctx.simtwin.join("bin/fixtures"));
        cmd.args(["clip", "--kind", "textured", "--width", &w.to_string(), "--height", &h.to_string(), "--bitdepth", "8"]);
        cmd.args(["--frames", &frames.to_string()]).arg("-o").arg(path);
        if let Some(d) = d {
            cmd.args(["--distort", d]);
        }
        let o = crate::run::output_limited(&mut cmd, "fixtures clip", FIXTURES_LIMIT)?;
        if !o.status.success() {
            bail!("fixtures clip ({}) failed: {}", path.display(), String::from_utf8_lossy(&o.stderr).trim());
        }
    }
    Ok(ClipFile { name: name.into(), reference, distorted, width: w, height: h, bitdepth: 8 })
}

/// `parity frames` for each feature on each clip.
fn parity_checks(ctx: &Ctx, clips: &[ClipFile], features: &[String]) -> Vec<CheckRow> {
    let mut rows = Vec::new();
    for c in clips {
        for f in features {
            let dir = ctx.out.join("frames").join(&c.name).join(f);
            let r = run_frames(&frames_args(c, ctx.ex(f, None), dir.clone()));
            let (k, err) = code(&r);
            rows.push(CheckRow { section: "frames", clip: c.name.clone(), feature: f.clone(), code: k, detail: detail(&dir, &err) });
        }
    }
    rows
}

/// A transfer audit per feature on the first clip (every entry point implemented, no hazards).
fn transfer_checks(ctx: &Ctx, tclip: &ClipFile, features: &[String]) -> Vec<CheckRow> {
    let mut rows = Vec::new();
    for f in features {
        let dir = ctx.out.join("transfers").join(f);
        let r = run_transfers(&transfers_args(tclip, ctx.ex(f, None), dir.clone()));
        let (k, err) = code(&r);
        rows.push(CheckRow {
            section: "transfers",
            clip: tclip.name.clone(),
            feature: f.clone(),
            code: k,
            detail: if err.is_empty() { transfers_detail(&dir) } else { err },
        });
    }
    rows
}

/// The race detector's clean control: the correct twin (every feature) under
/// `--checks race` on the clip the missing-sync defect runs on reports no race and stays
/// at parity.
fn race_control(ctx: &Ctx, clips: &[ClipFile]) -> CheckRow {
    let clip = race_clip(clips);
    let dir = ctx.out.join("race").join("control");
    let mut ex = ctx.ex(&fixtures::twin::features().join(","), None);
    ex.emu.checks = Some("race".into());
    let r = run_frames(&frames_args(clip, ex, dir.clone()));
    let (k, err) = code(&r);
    CheckRow { section: "race", clip: clip.name.clone(), feature: "all".into(), code: k, detail: detail(&dir, &err) }
}

/// The clip of the missing-sync defect and its control (textured: the mask has ones).
fn race_clip(clips: &[ClipFile]) -> &ClipFile {
    clips.iter().find(|c| c.name.starts_with("textured")).unwrap_or(&clips[0])
}

/// Each planted defect of the CUDA twin, provoked and checked by the mechanism that
/// must catch it.
fn defect_checks(ctx: &Ctx, clips: &[ClipFile], atomic: &ClipFile) -> Vec<DefectRow> {
    // Border defects show on textured content (not on flat ramps); a block size that
    // is not capped at 1024 threads needs a frame wider than 2048 (the sse kernel
    // gives each thread two pixels of a row).
    let textured = clips.iter().find(|c| c.name.starts_with("textured")).unwrap_or(&clips[0]);
    let wide = clips.iter().filter(|c| c.width > 2048).min_by_key(|c| c.width as u64 * c.height as u64);
    let all = fixtures::twin::features().join(",");
    let mut rows = Vec::new();
    for fixtures::twin::Defect { name: d, caught_by: how, .. } in fixtures::twin::defects() {
        let dclip = match *d {
            "big-block" => wide.unwrap_or(textured),
            "atomic-order" => atomic,
            _ => textured,
        };
        let dir = ctx.out.join("defects").join(d);
        let r = match *how {
            "transfers" => {
                let mut t = transfers_args(dclip, ctx.ex("temporal", Some(d)), dir.clone());
                t.baseline = Some("temporal".into());
                t.max_htod_per_frame = Some(0.0);
                t.max_dtoh_per_frame = Some(0.0);
                run_transfers(&t)
            }
            "race" => {
                // The shared-memory race detector (checking libraries): the reduction's
                // missing __syncthreads is a race between threads, reported as such.
                let mut ex = ctx.ex(&all, Some(d));
                ex.emu.checks = Some("race".into());
                run_frames(&frames_args(race_clip(clips), ex, dir.clone()))
            }
            "deferred" => {
                // Asynchronous work runs only when the program synchronises: a result read
                // before that is stale, and the frame differs from the CPU's.
                let mut ex = ctx.ex(&all, Some(d));
                ex.emu.async_mode = Some("deferred".into());
                run_frames(&frames_args(dclip, ex, dir.clone()))
            }
            "block-orders" => {
                let mut f = frames_args(dclip, ctx.ex("topk", Some(d)), dir.clone());
                f.block_orders = DEMO_ORDERS.iter().map(|s| s.to_string()).collect();
                run_frames(&f)
            }
            _ => run_frames(&frames_args(dclip, ctx.ex(&all, Some(d)), dir.clone())),
        };
        let (k, err) = code(&r);
        let result = judge(d, how, &r, &dir);
        let det = if *how == "transfers" && err.is_empty() {
            transfers_detail(&dir)
        } else if *how == "block-orders" && err.is_empty() {
            orders_detail(&dir)
        } else if *how == "race" && err.is_empty() {
            race_detail(&dir)
        } else {
            detail(&dir, &err)
        };
        rows.push(DefectRow { defect: d.to_string(), how: how.to_string(), code: k, result, detail: det });
    }
    rows
}

/// A defect counts as caught only by the outcome that names it: a launch refused with
/// CUDA_ERROR_INVALID_VALUE for big-block, outputs that change between block orders for
/// atomic-order, a shared-memory race report (`shared-race-*`) for missing-sync, a
/// difference, a hazard or a failed gate (exit 1) for the others. A driver that refuses
/// the block orders (not built) leaves atomic-order WAITING.
fn judge(defect: &str, how: &str, r: &Result<i32>, dir: &Path) -> DefectResult {
    let caught = match (r, defect, how) {
        (Err(e), "big-block", _) => crate::exit::exit_code_of(e) == 2 && format!("{e:#}").contains("CUDA_ERROR_INVALID_VALUE"),
        (Err(e), _, "block-orders") => {
            return match e.downcast_ref::<Refused>() {
                Some(rf) if rf.code == NOT_SUPPORTED => DefectResult::Waiting,
                _ => DefectResult::Missed,
            }
        }
        (Ok(1), _, "block-orders") => summary_of(dir).is_some_and(|s| s["block_orders"]["changed"] == true),
        (Ok(1), _, "race") => summary_of(dir).is_some_and(|s| {
            s["hazards"]["reports"]
                .as_array()
                .into_iter()
                .flatten()
                .any(|h| h["kind"].as_str().is_some_and(|k| k.starts_with("shared-race-")))
        }),
        (_, _, "race") => false,
        (Ok(k), "big-block", _) => *k == 2,
        (Ok(k), _, _) => *k == 1,
        (Err(_), _, _) => false,
    };
    if caught {
        DefectResult::Caught
    } else {
        DefectResult::Missed
    }
}

fn summary_of(dir: &Path) -> Option<serde_json::Value> {
    serde_json::from_str(&crate::input::read_text(&dir.join("summary.json"), "summary").ok()?).ok()
}

/// summary.md/json of the demo, and the table on stdout.
fn write_summary(ctx: &Ctx, clip_dir: &Path, checks: &[CheckRow], defects: &[DefectRow], v: &Verdict) -> Result<()> {
    let mut md = String::new();
    let _ = writeln!(md, "# simtwin parity demo\n\nsimtwin build: `{}`; clips: `{}`\n", ctx.simtwin.display(), clip_dir.display());
    let _ = writeln!(md, "| check | clip | feature | exit | result | detail |\n|---|---|---|---|---|---|");
    println!("\n{:<10} {:<22} {:<10} {:>4}  {:<10} detail", "check", "clip", "feature", "exit", "result");
    for r in checks {
        let res = match r.code {
            0 => "PASS",
            1 => "FAIL",
            _ => "ERROR",
        };
        println!("{:<10} {:<22} {:<10} {:>4}  {:<10} {}", r.section, r.clip, r.feature, r.code, res, r.detail);
        let _ = writeln!(md, "| {} | {} | {} | {} | {res} | {} |", r.section, r.clip, r.feature, r.code, r.detail.replace('|', "\\|"));
    }
    if !defects.is_empty() {
        println!("\n{:<20} {:<15} {:>4}  {:<10} detail", "planted defect", "caught by", "exit", "result");
        let _ = writeln!(md, "\n| planted defect | caught by | exit | result | detail |\n|---|---|---|---|---|");
        for d in defects {
            println!("{:<20} {:<15} {:>4}  {:<10} {}", d.defect, d.how, d.code, d.result.name(), d.detail);
            let _ = writeln!(md, "| {} | {} | {} | {} | {} |", d.defect, d.how, d.code, d.result.name(), d.detail.replace('|', "\\|"));
        }
    }
    let headline = if v.all_pass { "ALL PASS".to_string() } else { format!("FAILURES ({})", v.reasons.join("; ")) };
    let _ = writeln!(md, "\n**{headline}** (exit code {})", v.code);
    let summary = json!({
        "schema": "simtwin-demo/1",
        "exit_code": v.code,
        "all_pass": v.all_pass,
        "reasons": v.reasons,
        "checks": checks.iter().map(|r| json!({"check": r.section, "clip": r.clip, "feature": r.feature, "exit_code": r.code, "detail": r.detail})).collect::<Vec<_>>(),
        "defects": defects.iter().map(|d| json!({"defect": d.defect, "caught_by": d.how, "exit_code": d.code,
            "caught": d.result == DefectResult::Caught, "result": d.result.name(), "detail": d.detail})).collect::<Vec<_>>(),
    });
    crate::report::write_atomic(&ctx.out.join("summary.md"), md)?;
    crate::report::write_json(&ctx.out.join("summary.json"), &summary)?;
    println!("\ndemo: {headline} (exit {}); reports in {}", v.code, ctx.out.display());
    Ok(())
}

/// One line from a frames report: identical counts or the first difference.
fn detail(dir: &Path, err: &str) -> String {
    if !err.is_empty() {
        return err.to_string();
    }
    let Some(s) = summary_of(dir) else { return String::new() };
    if s["hazards"]["fail"].as_bool() == Some(true) {
        return format!("{} hazard(s): {}", s["hazards"]["count"], s["hazards"]["reports"][0]);
    }
    for c in s["comparisons"].as_array().into_iter().flatten() {
        if let Some(r) = c["first_beyond_tolerance"].as_object() {
            return format!(
                "frame {} metric {}: {} vs {} ({})",
                r["frame"],
                r["metric"].as_str().unwrap_or(""),
                r["a"].as_str().unwrap_or(""),
                r["b"].as_str().unwrap_or(""),
                r["kind"].as_str().unwrap_or("")
            );
        }
    }
    format!("{}/{} frames identical", s["identical_frames"], s["frames"])
}

/// One line from a frames report with --checks race: the first race report, or why
/// there is none.
fn race_detail(dir: &Path) -> String {
    let Some(s) = summary_of(dir) else { return String::new() };
    let reports = s["hazards"]["reports"].as_array().cloned().unwrap_or_default();
    let races: Vec<&serde_json::Value> =
        reports.iter().filter(|h| h["kind"].as_str().is_some_and(|k| k.starts_with("shared-race-"))).collect();
    match races.first() {
        Some(h) => format!(
            "{} shared-memory race report(s); first: [{}] kernel {}: {}",
            races.len(),
            h["kind"].as_str().unwrap_or(""),
            h["kernel"].as_str().unwrap_or(""),
            h["operation"].as_str().unwrap_or("")
        ),
        None => format!("no shared-memory race reported; {}", detail(dir, "")),
    }
}

/// One line from a frames report with --block-orders: what changed between orders.
fn orders_detail(dir: &Path) -> String {
    let Some(s) = summary_of(dir) else { return String::new() };
    let b = &s["block_orders"];
    match b["first_change"].as_object() {
        Some(f) => format!(
            "order-dependent: {} changed between orders; first: frame {} metric {}: {} ({}) vs {} ({})",
            b["metrics_changed"].as_object().map(|m| m.keys().cloned().collect::<Vec<_>>().join(", ")).unwrap_or_default(),
            f["frame"],
            f["metric"].as_str().unwrap_or(""),
            f["a"].as_str().unwrap_or(""),
            f["order_a"].as_str().unwrap_or(""),
            f["b"].as_str().unwrap_or(""),
            f["order_b"].as_str().unwrap_or("")
        ),
        None => format!("no output changed between block orders {}; {}", DEMO_ORDERS.join(","), detail(dir, "")),
    }
}

fn transfers_detail(dir: &Path) -> String {
    let Ok(t) = crate::input::read_text(&dir.join("transfers.json"), "transfer audit") else { return String::new() };
    let Ok(s) = serde_json::from_str::<serde_json::Value>(&t) else { return String::new() };
    if let Some(f) = s["failures"].as_array().and_then(|a| a.first()) {
        return f.as_str().unwrap_or("").to_string();
    }
    let pf = &s["net_per_frame"];
    format!(
        "per frame: HtoD {} ({} B), DtoH {} ({} B), launches {}",
        pf["copies.HtoD.count"], pf["copies.HtoD.bytes"], pf["copies.DtoH.count"], pf["copies.DtoH.bytes"], pf["launches.total"]
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(code: i32) -> CheckRow {
        CheckRow { section: "frames", clip: "c".into(), feature: "sse".into(), code, detail: String::new() }
    }
    fn defect(name: &str, result: DefectResult) -> DefectRow {
        DefectRow { defect: name.into(), how: "frames".into(), code: 1, result, detail: String::new() }
    }

    #[test]
    fn all_pass_only_when_every_defect_is_caught() {
        let caught = vec![defect("a", DefectResult::Caught), defect("b", DefectResult::Caught)];
        assert_eq!(verdict(&[check(0)], &caught), Verdict { code: 0, all_pass: true, reasons: vec![] });
        let waiting = vec![defect("a", DefectResult::Caught), defect("atomic-order", DefectResult::Waiting)];
        let v = verdict(&[check(0)], &waiting);
        assert!(!v.all_pass);
        assert_eq!(v.code, 1);
        assert_eq!(v.reasons, vec!["planted defect atomic-order: WAITING".to_string()]);
        let v = verdict(&[check(0)], &[defect("a", DefectResult::Missed)]);
        assert_eq!((v.code, v.all_pass), (1, false));
        // a setup error wins over a missed defect
        let v = verdict(&[check(2), check(1)], &[defect("a", DefectResult::Waiting)]);
        assert_eq!((v.code, v.all_pass, v.reasons.len()), (2, false, 3));
        // no defects checked (--no-defects): the checks decide
        assert!(verdict(&[check(0)], &[]).all_pass);
    }
}
