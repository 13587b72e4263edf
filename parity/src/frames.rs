//! `parity frames`: run a CPU and a CUDA extractor on the same clips and compare every
//! frame and metric bit for bit.

use crate::common::{parse_proof, ClipArgs, ExtractorArgs, Proof};
use crate::compare::{compare, Comparison, Selection};
use crate::counts::{prepare_dir, Counts};
use crate::device::{check_real, emulated_env, DeviceMode};
use crate::num::g17;
use crate::output::{self, Table};
use crate::report::{self, Side};
use crate::run::{self, Spec};
use crate::template::{self, Backend};
use crate::tolerance;
use anyhow::{anyhow, bail, Result};
use serde_json::{json, Map, Value as Json};
use std::path::{Path, PathBuf};

pub const EXAMPLE: &str = "\
Examples:
  # fixture twin, CPU vs CUDA on the emulated driver, all features:
  parity frames -r clips/banded.ref.yuv -d clips/banded.dis.yuv -W 256 -H 256 \\
      --features sse,band_mask,log_stat,topk,temporal --out reports/frames/banded
  # a VMAF fork, real GPU (exit 77 without one), extractor log proves CUDA ran:
  parity frames -r ref.yuv -d dis.yuv -W 1920 -H 1080 --preset vmaf-fork \\
      --features cambi --device real --proof 'log:CUDA'
  # a custom CUDA extractor template:
  parity frames -r ref.yuv -d dis.yuv -W 640 -H 360 \\
      --cuda-cmd './my_twin --gpu -i {ref} -j {dis} -s {width}x{height} -n {frames} -o {output}'

Exit codes: 0 parity, 1 differences beyond tolerance (or driver hazards),
2 setup or input error, 77 a real device was asked for and none exists.";

#[derive(clap::Args, Debug, Clone)]
#[command(after_help = EXAMPLE)]
pub struct FramesArgs {
    #[command(flatten)]
    pub clip: ClipArgs,
    /// Frames to process (default: every frame of the clips)
    #[arg(long, short = 'n')]
    pub frames: Option<u64>,
    #[command(flatten)]
    pub ex: ExtractorArgs,
    /// CPU extractor: a command template or preset:NAME (default: the --preset's CPU command)
    #[arg(long)]
    pub cpu_cmd: Option<String>,
    /// CUDA extractor: a command template or preset:NAME (default: the --preset's CUDA command)
    #[arg(long)]
    pub cuda_cmd: Option<String>,
    /// Where the CUDA extractor runs
    #[arg(long, value_enum, default_value = "emulated")]
    pub device: DeviceMode,
    /// Tolerance table file (default: exact for every metric)
    #[arg(long)]
    pub tolerances: Option<PathBuf>,
    /// Only compare these metrics (comma separated, `*` wildcards)
    #[arg(long, value_delimiter = ',')]
    pub metrics: Vec<String>,
    /// Leave a metric out of the comparison (repeatable, `*` wildcards)
    #[arg(long = "ignore-metric")]
    pub ignore_metric: Vec<String>,
    /// Proof that the CUDA side ran on a device. Emulated runs are always proven by kernel
    /// launches in the driver's counters (auto/counts/log:TEXT); a real run needs
    /// log:TEXT (the extractor printed TEXT); none turns every proof off (reported as UNPROVEN)
    #[arg(long, default_value = "auto")]
    pub proof: String,
    /// Do not fail on hazards the emulated driver reported (divergent barriers, ...)
    #[arg(long)]
    pub allow_hazards: bool,
    /// Report directory
    #[arg(long, short = 'o', default_value = "reports/frames")]
    pub out: PathBuf,
}

struct CudaRun {
    label: String,
    device: &'static str,
    env: Vec<(String, String)>,
    counts_dir: Option<PathBuf>,
    driver: String,
}

pub fn run_frames(a: &FramesArgs) -> Result<i32> {
    match frames_inner(a) {
        Ok(c) => Ok(c),
        Err(e) => {
            let code = crate::exit_code_of(&e);
            report::write_error(&a.out, "frames", code, &format!("{e:#}"), Map::new());
            Err(e)
        }
    }
}

fn ext_for(cmd: &Option<String>) -> &'static str {
    match cmd {
        None => "json",
        Some(c) if template::PRESETS.iter().any(|p| c == p.name || c.strip_prefix("preset:") == Some(p.name)) => "json",
        Some(_) => "out",
    }
}

fn frames_inner(a: &FramesArgs) -> Result<i32> {
    let tols = match &a.tolerances {
        Some(p) => tolerance::Table::load(p)?,
        None => tolerance::Table::exact(),
    };
    let proof = parse_proof(&a.proof)?;
    let nframes = a.clip.resolve_frames(a.frames)?;
    std::fs::create_dir_all(&a.out)?;
    let out = std::fs::canonicalize(&a.out)?;
    let logs = out.join("logs");
    let (cpu_t, cpu_note) = template::resolve(a.cpu_cmd.as_deref(), &a.ex.preset, Backend::Cpu)?;
    let (cuda_t, cuda_note) = template::resolve(a.cuda_cmd.as_deref(), &a.ex.preset, Backend::Cuda)?;
    let extra_env = a.ex.cuda_extra_env()?;

    // Device setup first: a missing device or driver fails before anything runs.
    let mut cuda_runs = Vec::new();
    if matches!(a.device, DeviceMode::Real | DeviceMode::Both) {
        if proof == Proof::Auto || proof == Proof::Counts {
            bail!(
                "--device real: the real driver keeps no counters (pass-through counting is not available yet); \
                 prove that the CUDA side ran with --proof log:TEXT (a line the extractor prints when its CUDA backend is active) or accept the risk with --proof none"
            );
        }
        let info = check_real()?;
        cuda_runs.push(CudaRun {
            label: "cuda-real".into(),
            device: "real",
            env: extra_env.clone(),
            counts_dir: None,
            driver: format!("{} ({} device(s))", info.path.unwrap_or_default(), info.devices.unwrap_or(0)),
        });
    }
    if matches!(a.device, DeviceMode::Emulated | DeviceMode::Both) {
        let simtwin = a.ex.require_simtwin()?;
        let cdir = out.join("counts/cuda-emulated");
        let pattern = prepare_dir(&cdir)?;
        let emu = emulated_env(&simtwin, a.ex.kernels.as_deref(), &pattern)?;
        let mut env = emu.vars.clone();
        env.extend(extra_env.clone());
        let run = CudaRun { label: "cuda-emulated".into(), device: "emulated", env, counts_dir: Some(cdir), driver: emu.driver_path };
        cuda_runs.insert(0, run);
    }

    let ext = ext_for(&a.cpu_cmd);
    let cpu_out = out.join(format!("cpu.{ext}"));
    let cpu_argv = template::expand(&cpu_t, &a.ex.vars(&a.clip, nframes, &cpu_out, Backend::Cpu, None))?;
    let mut notes = vec![format!("cpu: {cpu_note}: `{}`", template::display(&cpu_argv))];
    eprintln!("parity: cpu extractor, {cpu_note}\n  $ {}", template::display(&cpu_argv));
    let mut runs_json = Vec::new();
    for f in [&cpu_out] {
        let _ = std::fs::remove_file(f);
    }
    let cpu_res = run::run(&Spec { label: "cpu".into(), argv: cpu_argv.clone(), env: vec![], log_dir: logs.clone(), spinner: true })?;
    runs_json.push(json!({"label": "cpu", "command": cpu_argv, "flags": cpu_note, "elapsed_s": cpu_res.elapsed.as_secs_f64(), "output": cpu_out}));
    let mut tables: Vec<(String, Table)> = vec![("cpu".into(), read_output(&cpu_out, "cpu", nframes)?)];

    let mut hazards_total = 0usize;
    let mut hazard_examples: Vec<Json> = Vec::new();
    for r in &cuda_runs {
        let ext = ext_for(&a.cuda_cmd);
        let o = out.join(format!("{}.{ext}", r.label));
        let _ = std::fs::remove_file(&o);
        let argv = template::expand(&cuda_t, &a.ex.vars(&a.clip, nframes, &o, Backend::Cuda, None))?;
        eprintln!("parity: {} extractor ({} driver {}), {cuda_note}\n  $ {}", r.label, r.device, r.driver, template::display(&argv));
        notes.push(format!("{}: {cuda_note}; {} driver `{}`: `{}`", r.label, r.device, r.driver, template::display(&argv)));
        let res = run::run(&Spec { label: r.label.clone(), argv: argv.clone(), env: r.env.clone(), log_dir: logs.clone(), spinner: true })?;
        let mut rj = json!({"label": r.label, "device": r.device, "driver": r.driver, "command": argv, "flags": cuda_note,
                            "elapsed_s": res.elapsed.as_secs_f64(), "output": o,
                            "env": r.env.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>()});
        // Proof that the CUDA side ran on a device.
        // The emulated driver's counters are the proof there (unless --proof none); a log
        // proof applies to the real device, which keeps no counters.
        let want_counts = r.counts_dir.is_some() && proof != Proof::None;
        if let Some(cdir) = &r.counts_dir {
            let counts = Counts::read_dir(cdir)?;
            let launches = counts.launches();
            rj["counts_files"] = json!(counts.files);
            rj["launches"] = json!(launches);
            rj["hazards"] = json!(counts.hazards.len());
            if want_counts {
                if counts.files.is_empty() {
                    bail!(
                        "{}: the emulated driver wrote no counters file into {}: the extractor did not load simtwin's libcuda.so.1 \
                         (a CUDA extractor that cannot load the driver may fall back to the CPU and still exit 0)",
                        r.label,
                        cdir.display()
                    );
                }
                if counts.total_launches() == 0.0 {
                    bail!(
                        "{}: the CUDA extractor launched no kernel (counters: {}); it did not run on the device \
                         (VMAF falls back to the CPU with exit status 0 when libcuda.so.1 fails to load or initialise)",
                        r.label,
                        counts.files.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(", ")
                    );
                }
                notes.push(format!(
                    "{}: proof of device execution: {} kernel launches ({})",
                    r.label,
                    counts.total_launches(),
                    launches.iter().map(|(k, v)| format!("{k} x{v}")).collect::<Vec<_>>().join(", ")
                ));
            }
            hazards_total += counts.hazards.len();
            hazard_examples.extend(counts.hazards.iter().take(20).cloned());
        }
        match &proof {
            Proof::Log(t) if r.counts_dir.is_none() => {
                if !res.logs_contain(t) {
                    bail!("{}: --proof log:{t}: the extractor's output does not contain '{t}' ({}, {}); it may have fallen back to the CPU", r.label, res.stdout.display(), res.stderr.display());
                }
                notes.push(format!("{}: proof of device execution: its log contains '{t}'", r.label));
            }
            Proof::None => notes.push(format!("{}: UNPROVEN: --proof none, nothing shows that the CUDA side ran on a device", r.label)),
            _ => {}
        }
        runs_json.push(rj);
        tables.push((r.label.clone(), read_output(&o, &r.label, nframes)?));
    }

    let sel = Selection { only: a.metrics.clone(), ignore: a.ignore_metric.clone() };
    let comps: Vec<Comparison> =
        tables[1..].iter().map(|(l, t)| compare(&tables[0].0, &tables[0].1, l, t, &tols, &sel)).collect::<Result<_>>()?;
    let sides: Vec<Side> = tables.iter().map(|(l, t)| Side::of(l, t)).collect();
    let hazard_fail = hazards_total > 0 && !a.allow_hazards;
    if hazards_total > 0 {
        notes.push(format!(
            "the emulated driver reported {hazards_total} hazard(s){}; first: {}",
            if a.allow_hazards { " (allowed by --allow-hazards)" } else { ": FAIL" },
            hazard_examples.first().map(|h| h.to_string()).unwrap_or_default()
        ));
    }
    let code = if comps.iter().all(|c| c.pass()) && !hazard_fail { 0 } else { 1 };
    let mut extra = Map::new();
    extra.insert("device".into(), json!(format!("{:?}", a.device).to_lowercase()));
    extra.insert("features".into(), json!(a.ex.features));
    extra.insert("defect".into(), json!(a.ex.defect));
    extra.insert("expected_frames".into(), json!(nframes));
    extra.insert("runs".into(), json!(runs_json));
    extra.insert("hazards".into(), json!({"count": hazards_total, "fail": hazard_fail, "reports": hazard_examples}));
    let summary = report::summary_json("frames", &sides, &comps, &tols.describe_source(), extra, code);
    report::write_all(&out, "parity frames", &summary, &sides, &comps, &notes)?;
    print_table(&comps, &summary, &out);
    Ok(code)
}

fn read_output(path: &Path, label: &str, expected: u64) -> Result<Table> {
    if !path.exists() {
        bail!("{label}: the extractor exited 0 but wrote no output file {}", path.display());
    }
    let t = output::read_file(path).map_err(|e| anyhow!("{label}: {e:#}"))?;
    if t.frames.len() as u64 != expected {
        bail!("frame-count mismatch: {label} output {} has {} frames, expected {expected}", path.display(), t.frames.len());
    }
    Ok(t)
}

/// Prints the per-metric summary table to stdout.
pub fn print_table(comps: &[Comparison], summary: &Json, out: &Path) {
    for c in comps {
        println!("{} vs {}: {}/{} frames identical in every metric", c.a_label, c.b_label, c.identical_frames, c.frames);
        println!("  {:<28} {:>11} {:>12} {:>24} {:>10} {:>10}  verdict", "metric", "identical", "beyond_tol", "max_abs", "max_ulp", "first_diff");
        for (k, m) in &c.metrics {
            println!(
                "  {:<28} {:>11} {:>12} {:>24} {:>10} {:>10}  {}",
                k,
                format!("{}/{}", m.identical, m.frames),
                m.beyond,
                g17(m.max_abs),
                m.max_ulp,
                m.first_diff_frame.map(|f| f.to_string()).unwrap_or_else(|| "-".into()),
                if m.beyond == 0 { "pass" } else { "FAIL" }
            );
        }
        if let Some(r) = c.first_beyond() {
            println!("  first difference beyond tolerance: frame {} metric {}: {} vs {} ({})", r.frame, r.metric, g17(r.a), g17(r.b), r.cell.kind.name());
        }
    }
    if let Some(cv) = summary["precision_caveat"].as_str() {
        println!("note: {cv}");
    }
    if summary["hazards"]["fail"].as_bool() == Some(true) {
        println!("FAIL: the emulated driver reported {} hazard(s) (see summary.json \"hazards\")", summary["hazards"]["count"]);
    }
    println!(
        "verdict: {} (exit {}); reports in {}",
        summary["verdict"].as_str().unwrap_or("?").to_uppercase(),
        summary["exit_code"],
        out.display()
    );
}
