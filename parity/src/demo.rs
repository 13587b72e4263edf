//! `parity demo`: the end-to-end demonstration the README's main command calls.
//! Builds nothing: it expects simtwin's build (target/simtwin, from scripts/build).
//! It writes the fixture clips with the `fixtures` binary, runs `parity frames` for
//! each feature on each clip under the emulated driver, a `parity transfers` audit per
//! feature, and (unless --no-defects) checks that each planted defect of the CUDA
//! twin is caught. Reports land under reports/demo/; a summary table is printed and
//! the exit code is non-zero if anything failed.

use crate::common::{ClipArgs, ExtractorArgs};
use crate::device::{find_simtwin, DeviceMode};
use crate::frames::{run_frames, FramesArgs};
use crate::transfers::{run_transfers, TransferDevice, TransfersArgs};
use anyhow::{bail, Context, Result};
use serde_json::json;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

pub const EXAMPLE: &str = "\
Examples:
  scripts/build && parity demo
  parity demo --clips banded-256x256-8,textured-256x256-8 --features sse,topk --no-defects
  parity demo --all-clips --out reports/demo-full

Exit codes: 0 everything at parity and every planted defect caught, 1 a parity
difference, a failed audit or a defect that was not caught, 2 setup error
(target/simtwin missing: run scripts/build).";

pub const FEATURES: &[&str] = &["sse", "band_mask", "log_stat", "topk", "temporal"];
pub const DEFAULT_CLIPS: &[&str] = &["banded-256x256-8", "testsrc-256x256-10", "ramp-1920x64-8", "ramp-3840x128-8", "textured-256x256-8"];
/// Planted defects and how the demo provokes them.
pub const DEFECTS: &[(&str, &str)] = &[
    ("clamp-borders", "frames"),
    ("filter-border-rows", "frames"),
    ("missing-sync", "frames"),
    ("divergent-barrier", "frames"),
    ("big-block", "frames"),
    ("host-roundtrip", "transfers"),
    ("atomic-order", "frames-reverse"),
];

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
}

struct ClipFile {
    name: String,
    reference: PathBuf,
    distorted: PathBuf,
    width: u32,
    height: u32,
    bitdepth: u32,
}

/// Parses `KIND-WxH-DEPTH`.
fn parse_name(name: &str) -> Option<(u32, u32, u32)> {
    let mut parts = name.rsplitn(3, '-');
    let depth: u32 = parts.next()?.parse().ok()?;
    let (w, h) = parts.next()?.split_once('x')?;
    Some((w.parse().ok()?, h.parse().ok()?, depth))
}

fn clip_args(c: &ClipFile) -> ClipArgs {
    ClipArgs { reference: c.reference.clone(), distorted: c.distorted.clone(), width: c.width, height: c.height, bitdepth: c.bitdepth, pixfmt: "420".into() }
}

fn ex_args(simtwin: &Path, features: &str, defect: Option<&str>, block_order: Option<&str>) -> ExtractorArgs {
    ExtractorArgs {
        preset: "twin".into(),
        features: Some(features.into()),
        defect: defect.map(String::from),
        twin: None,
        vmaf: "vmaf".into(),
        simtwin: Some(simtwin.to_path_buf()),
        kernels: None,
        block_order: block_order.map(String::from),
        workers: None,
        cuda_env: vec![],
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
        device: TransferDevice::Emulated,
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
        allow_hazards: false,
        out,
    }
}

fn code(r: &Result<i32>) -> (i32, String) {
    match r {
        Ok(c) => (*c, String::new()),
        Err(e) => (crate::exit_code_of(e), format!("{e:#}").lines().next().unwrap_or("").to_string()),
    }
}

pub fn run_demo(a: &DemoArgs) -> Result<i32> {
    let simtwin = find_simtwin(a.simtwin.as_deref()).context("parity demo needs simtwin's build; run scripts/build first")?;
    let simtwin = std::fs::canonicalize(&simtwin)?;
    for need in ["bin/fixtures", "bin/simtwin-twin", "lib/libcuda.so.1", "kernels"] {
        if !simtwin.join(need).exists() {
            bail!("{} is missing: run scripts/build first", simtwin.join(need).display());
        }
    }
    std::fs::create_dir_all(&a.out)?;
    let out = std::fs::canonicalize(&a.out)?;
    let clip_dir = out.join("clips");
    let mut cmd = Command::new(simtwin.join("bin/fixtures"));
    cmd.arg("make-set").arg("-o").arg(&clip_dir);
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
    let o = cmd.output().context("cannot run the fixtures binary")?;
    pb.finish_and_clear();
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
    let features: Vec<String> = if a.features.is_empty() { FEATURES.iter().map(|s| s.to_string()).collect() } else { a.features.clone() };

    let mut rows = Vec::new(); // (section, clip, feature, code, detail)
    let mut worst = 0;
    let mut bump = |c: i32| {
        if c != 0 {
            worst = if c == 2 || worst == 2 { 2 } else { 1 };
        }
    };
    for c in &clips {
        for f in &features {
            let dir = out.join("frames").join(&c.name).join(f);
            let r = run_frames(&frames_args(c, ex_args(&simtwin, f, None, None), dir.clone()));
            let (k, err) = code(&r);
            bump(k);
            rows.push(("frames", c.name.clone(), f.clone(), k, detail(&dir, &err)));
        }
    }
    // Transfer audit per feature on the first clip (every entry point implemented, no hazards).
    let tclip = &clips[0];
    for f in &features {
        let dir = out.join("transfers").join(f);
        let r = run_transfers(&transfers_args(tclip, ex_args(&simtwin, f, None, None), dir.clone()));
        let (k, err) = code(&r);
        bump(k);
        rows.push(("transfers", tclip.name.clone(), f.clone(), k, if err.is_empty() { transfers_detail(&dir) } else { err }));
    }
    let mut defect_rows = Vec::new();
    if !a.no_defects {
        // Border defects show on textured content (not on flat ramps); a block size that
        // is not capped at 1024 threads needs a frame wider than 2048 (the sse kernel
        // gives each thread two pixels of a row).
        let textured = clips.iter().find(|c| c.name.starts_with("textured")).unwrap_or(&clips[0]);
        let wide = clips.iter().filter(|c| c.width > 2048).min_by_key(|c| c.width as u64 * c.height as u64);
        let all = FEATURES.join(",");
        for (d, how) in DEFECTS {
            let dclip = if *d == "big-block" { wide.unwrap_or(textured) } else { textured };
            let dir = out.join("defects").join(d);
            if *how == "frames-reverse" {
                // Needs blocks in another order (EMU_CUDA_BLOCK_ORDER), which the emulated
                // driver does not have yet: reported as waiting, never as caught.
                defect_rows.push((d.to_string(), how.to_string(), -1, None,
                    "waiting: needs EMU_CUDA_BLOCK_ORDER=reverse (not built yet in the emulated driver)".to_string()));
                continue;
            }
            let r = match *how {
                "transfers" => {
                    let mut t = transfers_args(dclip, ex_args(&simtwin, "temporal", Some(d), None), dir.clone());
                    t.baseline = Some("temporal".into());
                    t.max_htod_per_frame = Some(0.0);
                    t.max_dtoh_per_frame = Some(0.0);
                    run_transfers(&t)
                }
                "frames-reverse" => run_frames(&frames_args(dclip, ex_args(&simtwin, &all, Some(d), Some("reverse")), dir.clone())),
                _ => run_frames(&frames_args(dclip, ex_args(&simtwin, &all, Some(d), None), dir.clone())),
            };
            let full = match &r { Err(e) => format!("{e:#}"), Ok(_) => String::new() };
            let (k, err) = code(&r);
            // A defect counts as caught only by the outcome that names it: a launch
            // refused with CUDA_ERROR_INVALID_VALUE for big-block, a difference, a hazard
            // or a failed gate (exit 1) for the others.
            let caught = if *d == "big-block" { k == 2 && full.contains("CUDA_ERROR_INVALID_VALUE") } else { k == 1 };
            if !caught {
                worst = worst.max(1);
            }
            let det = if *how == "transfers" && err.is_empty() { transfers_detail(&dir) } else { detail(&dir, &err) };
            defect_rows.push((d.to_string(), how.to_string(), k, Some(caught), det));
        }
    }

    // Summary table.
    let mut md = String::new();
    let _ = writeln!(md, "# simtwin parity demo\n\nsimtwin build: `{}`; clips: `{}`\n", simtwin.display(), clip_dir.display());
    let _ = writeln!(md, "| check | clip | feature | exit | result | detail |\n|---|---|---|---|---|---|");
    println!("\n{:<10} {:<22} {:<10} {:>4}  {:<10} detail", "check", "clip", "feature", "exit", "result");
    for (s, c, f, k, d) in &rows {
        let res = match k {
            0 => "PASS",
            1 => "FAIL",
            _ => "ERROR",
        };
        println!("{:<10} {:<22} {:<10} {:>4}  {:<10} {}", s, c, f, k, res, d);
        let _ = writeln!(md, "| {s} | {c} | {f} | {k} | {res} | {} |", d.replace('|', "\\|"));
    }
    if !defect_rows.is_empty() {
        println!("\n{:<20} {:<15} {:>4}  {:<10} detail", "planted defect", "caught by", "exit", "result");
        let _ = writeln!(md, "\n| planted defect | caught by | exit | result | detail |\n|---|---|---|---|---|");
        for (d, how, k, caught, det) in &defect_rows {
            let res = match caught { Some(true) => "CAUGHT", Some(false) => "MISSED", None => "WAITING" };
            println!("{:<20} {:<15} {:>4}  {:<10} {}", d, how, k, res, det);
            let _ = writeln!(md, "| {d} | {how} | {k} | {res} | {} |", det.replace('|', "\\|"));
        }
    }
    let summary = json!({
        "schema": "simtwin-demo/1",
        "exit_code": worst,
        "checks": rows.iter().map(|(s, c, f, k, d)| json!({"check": s, "clip": c, "feature": f, "exit_code": k, "detail": d})).collect::<Vec<_>>(),
        "defects": defect_rows.iter().map(|(d, h, k, c, det)| json!({"defect": d, "caught_by": h, "exit_code": k, "caught": c, "detail": det})).collect::<Vec<_>>(),
    });
    std::fs::write(out.join("summary.json"), serde_json::to_string_pretty(&summary)? + "\n")?;
    std::fs::write(out.join("summary.md"), md)?;
    println!("\ndemo: {} (exit {worst}); reports in {}", if worst == 0 { "ALL PASS" } else { "FAILURES" }, out.display());
    Ok(worst)
}

/// One line from a frames report: identical counts or the first difference.
fn detail(dir: &Path, err: &str) -> String {
    if !err.is_empty() {
        return err.to_string();
    }
    let Ok(t) = std::fs::read_to_string(dir.join("summary.json")) else { return String::new() };
    let Ok(s) = serde_json::from_str::<serde_json::Value>(&t) else { return String::new() };
    if s["hazards"]["fail"].as_bool() == Some(true) {
        return format!("{} hazard(s): {}", s["hazards"]["count"], s["hazards"]["reports"][0]);
    }
    for c in s["comparisons"].as_array().into_iter().flatten() {
        if let Some(r) = c["first_beyond_tolerance"].as_object() {
            return format!("frame {} metric {}: {} vs {} ({})", r["frame"], r["metric"].as_str().unwrap_or(""), r["a"].as_str().unwrap_or(""), r["b"].as_str().unwrap_or(""), r["kind"].as_str().unwrap_or(""));
        }
    }
    format!("{}/{} frames identical", s["identical_frames"], s["frames"])
}

fn transfers_detail(dir: &Path) -> String {
    let Ok(t) = std::fs::read_to_string(dir.join("transfers.json")) else { return String::new() };
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
