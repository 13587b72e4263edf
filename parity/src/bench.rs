//! `parity bench`: milliseconds per frame as (t(N) - t(2)) / (N - 2), median of R
//! rounds; with a second command (A/B) the runs alternate A, B, B, A, ... so that both
//! see the same machine load. Prints the B/A ratio.

use crate::common::{ClipArgs, ExtractorArgs};
use crate::counts::{prepare_dir, Counts};
use crate::device::{check_real, emulated_env};
use crate::report;
use crate::run::{self, Spec};
use crate::template::{self, Backend};
use anyhow::{bail, Result};
use serde_json::json;
use std::fmt::Write as _;
use std::path::PathBuf;

pub const EXAMPLE: &str = "\
Examples:
  # CUDA twin on the emulated driver, 12 frames, median of 3:
  parity bench -r ref.yuv -d dis.yuv -W 256 -H 256 --features sse --frames 12
  # A/B: CPU twin against the CUDA twin, interleaved:
  parity bench -r ref.yuv -d dis.yuv -W 256 -H 256 --features topk --backend cpu --b-backend cuda
  # A/B of two custom commands:
  parity bench -r ref.yuv -d dis.yuv -W 256 -H 256 --backend cpu \\
      --cmd './old --in {ref} {dis} -n {frames} -o {output}' --b-cmd './new --in {ref} {dis} -n {frames} -o {output}'

Reports: bench.json, bench.md, bench.csv (every timed run), written when every run is done.
Exit 0, or 2 on a setup error or a run that fails or reaches --timeout SECONDS (default 600).";

/// Files of `parity bench` in its report directory (all written at the end, so a
/// failed run leaves none of them).
const ARTEFACTS: report::Artefacts<'static> = report::Artefacts {
    files: &["bench.json", "bench.md", "bench.csv"],
    dirs: &["counts", "logs"],
    prefixes: &["A-n", "B-n"],
    suffixes: &[".out"],
};

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum BenchDevice {
    Emulated,
    Real,
}

#[derive(clap::Args, Debug, Clone)]
#[command(after_help = EXAMPLE)]
pub struct BenchArgs {
    #[command(flatten)]
    pub clip: ClipArgs,
    #[command(flatten)]
    pub ex: ExtractorArgs,
    /// Command A: a template or preset:NAME (default: the --preset's command for --backend)
    #[arg(long)]
    pub cmd: Option<String>,
    /// Backend of command A (cuda runs get the --device environment)
    #[arg(long, default_value = "cuda", value_parser = ["cpu", "cuda"])]
    pub backend: String,
    /// Command B (turns on A/B mode)
    #[arg(long)]
    pub b_cmd: Option<String>,
    /// Backend of command B (turns on A/B mode; default: --backend)
    #[arg(long, value_parser = ["cpu", "cuda"])]
    pub b_backend: Option<String>,
    /// Features for command B (turns on A/B mode; default: --features)
    #[arg(long)]
    pub b_features: Option<String>,
    /// N: the larger frame count (the smaller is 2)
    #[arg(long, short = 'n', default_value_t = 10)]
    pub frames: u64,
    /// Rounds (the estimate is their median)
    #[arg(long, default_value_t = 3)]
    pub rounds: u32,
    /// Where CUDA commands run
    #[arg(long, value_enum, default_value = "emulated")]
    pub device: BenchDevice,
    /// Report directory
    #[arg(long, short = 'o', default_value = "reports/bench")]
    pub out: PathBuf,
}

struct Cmd {
    label: &'static str,
    template: String,
    note: String,
    backend: Backend,
    features: Option<String>,
}

pub fn median(v: &[f64]) -> f64 {
    let mut s = v.to_vec();
    s.sort_by(|a, b| a.total_cmp(b));
    let n = s.len();
    if n == 0 {
        f64::NAN
    } else if n % 2 == 1 {
        s[n / 2]
    } else {
        (s[n / 2 - 1] + s[n / 2]) / 2.0
    }
}

fn backend_of(s: &str) -> Backend {
    if s == "cpu" {
        Backend::Cpu
    } else {
        Backend::Cuda
    }
}

#[allow(clippy::needless_range_loop)] // rounds index both the order and the times table
pub fn run_bench(a: &BenchArgs) -> Result<i32> {
    if a.frames < 3 {
        bail!("--frames must be at least 3 (the estimate is (t(N) - t(2)) / (N - 2))");
    }
    if a.rounds == 0 {
        bail!("--rounds must be at least 1");
    }
    a.clip.resolve_frames(Some(a.frames))?;
    if let Some(o) = &a.ex.block_order {
        crate::orders::check_order(o)?;
    }
    std::fs::create_dir_all(&a.out)?;
    let out = std::fs::canonicalize(&a.out)?;
    report::clear_previous(&out, &ARTEFACTS)?;
    let mut cmds = Vec::new();
    let ba = backend_of(&a.backend);
    let (t, n) = template::resolve(a.cmd.as_deref(), &a.ex.preset, ba)?;
    cmds.push(Cmd { label: "A", template: t, note: n, backend: ba, features: a.ex.features.clone() });
    if a.b_cmd.is_some() || a.b_backend.is_some() || a.b_features.is_some() {
        let bb = backend_of(a.b_backend.as_deref().unwrap_or(&a.backend));
        let (t, n) = template::resolve(a.b_cmd.as_deref(), &a.ex.preset, bb)?;
        cmds.push(Cmd { label: "B", template: t, note: n, backend: bb, features: a.b_features.clone().or(a.ex.features.clone()) });
    }
    let needs_cuda = cmds.iter().any(|c| c.backend == Backend::Cuda);
    let mut real_ok = false;
    if needs_cuda && a.device == BenchDevice::Real {
        check_real()?;
        real_ok = true;
    }
    let simtwin = if needs_cuda && !real_ok { Some(a.ex.require_simtwin()?) } else { None };
    let extra = a.ex.cuda_extra_env()?;
    for c in &cmds {
        eprintln!("parity: bench {}: {}", c.label, c.note);
    }
    let total = a.rounds as u64 * cmds.len() as u64 * 2;
    let pb = indicatif::ProgressBar::new(total);
    pb.set_style(indicatif::ProgressStyle::with_template("{spinner} [{pos}/{len}] {elapsed:>4} {msg}").unwrap());
    pb.enable_steady_tick(std::time::Duration::from_millis(120));
    // times[cmd][round] = (t2, tN)
    let mut times = vec![vec![(0.0f64, 0.0f64); a.rounds as usize]; cmds.len()];
    let mut csv = csv::Writer::from_writer(Vec::new());
    csv.write_record(["command", "round", "order", "frames", "seconds"])?;
    let mut order_log = Vec::new();
    let mut launched = vec![false; cmds.len()];
    for r in 0..a.rounds as usize {
        let mut order: Vec<usize> = (0..cmds.len()).collect();
        if r % 2 == 1 {
            order.reverse();
        }
        // A2 B2 AN BN in even rounds, B2 A2 BN AN in odd ones.
        for n in [2u64, a.frames] {
            for &ci in &order {
                let c = &cmds[ci];
                let o = out.join(format!("{}-n{n}.out", c.label));
                let mut env = Vec::new();
                let mut cdir = None;
                if c.backend == Backend::Cuda {
                    if let Some(st) = &simtwin {
                        let d = out.join("counts").join(format!("{}-r{r}-n{n}", c.label));
                        let pattern = prepare_dir(&d)?;
                        env = emulated_env(st, a.ex.kernels.as_deref(), &pattern)?.vars;
                        cdir = Some(d);
                    }
                    env.extend(extra.clone());
                }
                let argv = template::expand(&c.template, &a.ex.vars(&a.clip, n, &o, c.backend, c.features.as_deref()))?;
                pb.set_message(format!("round {} {} n={n}: {}", r + 1, c.label, template::display(&argv)));
                let res = run::run(&Spec { label: format!("{}-n{n}", c.label), argv, env, log_dir: out.join("logs"), spinner: false, timeout: a.ex.timeout() })?;
                if let Some(d) = cdir {
                    let counts = Counts::read_dir(&d)?;
                    if counts.total_launches() > 0.0 {
                        launched[ci] = true;
                    }
                }
                let s = res.elapsed.as_secs_f64();
                if n == 2 {
                    times[ci][r].0 = s;
                } else {
                    times[ci][r].1 = s;
                }
                order_log.push(format!("{}{}", c.label, n));
                csv.write_record([c.label.to_string(), r.to_string(), order_log.len().to_string(), n.to_string(), format!("{s:.6}")])?;
                pb.inc(1);
            }
        }
    }
    pb.finish_and_clear();
    for (ci, c) in cmds.iter().enumerate() {
        if c.backend == Backend::Cuda && simtwin.is_some() && !launched[ci] {
            bail!("bench {}: the CUDA command launched no kernel on the emulated driver (a CPU fallback?)", c.label);
        }
    }
    let mut results = Vec::new();
    let mut md = String::new();
    let _ = writeln!(md, "# parity bench\n\nms per frame = (t({}) - t(2)) / ({} - 2), median of {} rounds; runs interleaved: {}\n", a.frames, a.frames, a.rounds, order_log.join(" "));
    let _ = writeln!(md, "| command | ms/frame (median) | per round | t(2) median s | t(N) median s | flags |\n|---|---|---|---|---|---|");
    for (ci, c) in cmds.iter().enumerate() {
        let est: Vec<f64> = times[ci].iter().map(|(t2, tn)| (tn - t2) * 1000.0 / (a.frames - 2) as f64).collect();
        let m = median(&est);
        let t2m = median(&times[ci].iter().map(|x| x.0).collect::<Vec<_>>());
        let tnm = median(&times[ci].iter().map(|x| x.1).collect::<Vec<_>>());
        println!("{}: {:.3} ms/frame (rounds: {}), t(2) {:.3} s, t({}) {:.3} s; {}", c.label, m,
            est.iter().map(|x| format!("{x:.3}")).collect::<Vec<_>>().join(" "), t2m, a.frames, tnm, c.note);
        let _ = writeln!(md, "| {} | {:.3} | {} | {:.4} | {:.4} | {} |", c.label, m, est.iter().map(|x| format!("{x:.3}")).collect::<Vec<_>>().join(", "), t2m, tnm, c.note);
        results.push(json!({"label": c.label, "flags": c.note, "backend": c.backend.name(), "features": c.features,
            "ms_per_frame": m, "ms_per_frame_rounds": est, "t2_s": times[ci].iter().map(|x| x.0).collect::<Vec<_>>(),
            "tn_s": times[ci].iter().map(|x| x.1).collect::<Vec<_>>()}));
    }
    let ratio = if results.len() == 2 {
        let r = results[1]["ms_per_frame"].as_f64().unwrap_or(f64::NAN) / results[0]["ms_per_frame"].as_f64().unwrap_or(f64::NAN);
        println!("ratio B/A: {r:.3}");
        let _ = writeln!(md, "\nratio B/A: **{r:.3}**");
        Some(r)
    } else {
        None
    };
    if simtwin.is_some() {
        let _ = writeln!(md, "\nCUDA commands ran on the emulated driver: their times measure the emulation, not a GPU.");
    }
    let summary = json!({"schema": "simtwin-bench/1", "frames": a.frames, "rounds": a.rounds, "order": order_log,
        "device": if needs_cuda { format!("{:?}", a.device).to_lowercase() } else { "none".into() },
        "commands": results, "ratio_b_over_a": ratio});
    report::write_atomic(&out.join("bench.csv"), csv.into_inner().map_err(|e| anyhow::anyhow!("{e}"))?)?;
    report::write_atomic(&out.join("bench.md"), md)?;
    report::write_json(&out.join("bench.json"), &summary)?;
    println!("reports in {}", out.display());
    Ok(0)
}
