//! `parity frames`: run a CPU and a CUDA extractor on the same clips and compare every
//! frame and metric bit for bit.

use crate::common::{parse_proof, Clip, ClipArgs, ExtractorArgs, Proof};
use crate::compare::{compare, Comparison, Selection};
use crate::counts::{prepare_dir, state_tag, Counts};
use crate::device::{check_emulated_accepts, emulated_env, for_real_device, DeviceMode, RealDevice};
use crate::fidelity;
use crate::matrix::Cell;
use crate::num::g17;
use crate::orders::{self, OrderCheck, OrderRuns};
use crate::output::{self, Table};
use crate::report::{self, Side};
use crate::run::{self, Spec};
use crate::shard::Shard;
use crate::template::{self, Backend};
use crate::tolerance;
use anyhow::{anyhow, bail, Context, Result};
use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value as Json};
use std::path::{Path, PathBuf};

/// The examples and exit codes of the command's `--help`.
const EXAMPLE: &str = "\
Examples:
  # fixture twin, CPU vs CUDA on the emulated driver, all features:
  parity frames -r clips/banded.ref.yuv -d clips/banded.dis.yuv -W 256 -H 256 \\
      --features sse,band_mask,log_stat,topk,temporal --out reports/frames/banded
  # a VMAF fork on a real GPU (exit 77 without one), through simtwin's pass-through
  # (its counters prove that kernels ran on the device; the log line must appear too):
  parity frames -r ref.yuv -d dis.yuv -W 1920 -H 1080 --preset vmaf-fork \\
      --features cambi --device real --proof 'log:CUDA'
  # CPU, emulated driver and real GPU side by side; every frame where emulated and
  # real differ is listed (summary.md, emulated_vs_real.csv):
  parity frames -r clips/textured.ref.yuv -d clips/textured.dis.yuv -W 576 -H 324 --device both
  # order-dependent results: the CUDA run under three block orders, compared bit for bit:
  parity frames -r clips/textured.ref.yuv -d clips/textured.dis.yuv -W 256 -H 256 \\
      --features topk --block-orders forward,reverse,shuffle:1
  # a run that may hang: kill it (and everything it started) after 2 minutes:
  parity frames -r ref.yuv -d dis.yuv -W 256 -H 256 --features sse --timeout 120
  # a matrix: every clip of a list x every feature x two block orders, in 3 shards
  # (one per CI job), then merged into the report of the whole run:
  parity frames --clips clips.csv --features sse,topk --per-feature \\
      --block-orders forward,reverse --shard 2/3 --out shards/2
  parity merge shards/1 shards/2 shards/3 --out reports/frames
  # a custom CUDA extractor template:
  parity frames -r ref.yuv -d dis.yuv -W 640 -H 360 \\
      --cuda-cmd './my_twin --gpu -i {ref} -j {dis} -s {width}x{height} -n {frames} -o {output}'
  # two raw video outputs (a CPU filter and its CUDA form), frame by frame and plane by
  # plane: identical frames, max |difference|, PSNR, first differing pixel:
  parity frames --video scale.cpu.yuv scale.cuda.yuv -W 160 -H 120 --pix-fmt nv12 \\
      --label-a cpu --label-b cuda --out reports/frames/scale
  parity frames --video emulated.y4m device.y4m --max-diff 1

Exit codes: 0 parity, 1 differences beyond tolerance (or driver hazards, or outputs
that change between --block-orders; --video: a sample beyond --max-diff), 2 setup or
input error (an extractor that fails, crashes or reaches --timeout; a driver that
refuses a block order; --video: an unreadable, truncated or mismatched file), 77 a real device was
asked for and none exists. The report directory never holds an earlier run's results:
they are removed when a run starts, and a failed extractor's output is renamed *.failed.";

/// The arguments of `parity frames`.
#[derive(clap::Args, Debug, Clone)]
#[command(after_help = EXAMPLE)]
pub struct FramesArgs {
    #[command(flatten)]
    pub(crate) clip: ClipArgs,
    /// Frames to process (default: every frame of the clips)
    #[arg(long, short = 'n')]
    pub frames: Option<u64>,
    #[command(flatten)]
    pub(crate) ex: ExtractorArgs,
    /// CPU extractor: a command template or preset:NAME (default: the --preset's CPU command)
    #[arg(long)]
    pub cpu_cmd: Option<String>,
    /// CUDA extractor: a command template or preset:NAME (default: the --preset's CUDA command)
    #[arg(long)]
    pub cuda_cmd: Option<String>,
    /// Where the CUDA extractor runs: the emulated driver, the real device (the system's
    /// driver reached through simtwin's pass-through, EMU_CUDA_REAL, which counts every
    /// call), or both (columns cpu, cuda-emulated, cuda-real; emulated vs real compared too)
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
    /// Proof that the CUDA side ran on a device: kernel launches in the driver's counters
    /// (auto/counts; on the real device the pass-through's counters); log:TEXT also
    /// requires the real run's output to contain TEXT; none turns every proof off
    /// (reported as UNPROVEN)
    #[arg(long, default_value = "auto")]
    pub proof: String,
    /// Do not fail on hazards the emulated driver reported (divergent barriers, ...)
    #[arg(long)]
    pub allow_hazards: bool,
    /// Do not fail when the CUDA program called entry points the emulated driver does
    /// not implement (they answered CUDA_ERROR_NOT_SUPPORTED; a program that ignores
    /// the error may still exit 0 with wrong output)
    #[arg(long)]
    pub allow_unsupported: bool,
    /// Repeat the CUDA run on the emulated driver under each block order
    /// (EMU_CUDA_BLOCK_ORDER: forward, reverse, shuffle:SEED) and flag every metric and
    /// frame whose value changes between orders (exit code 1), e.g. forward,reverse,shuffle:1
    #[arg(long, value_delimiter = ',', value_name = "ORDER,ORDER,...")]
    pub block_orders: Vec<String>,
    /// A clip list instead of -r/-d/-W/-H: a CSV file with the columns name, reference,
    /// distorted, width, height (and optionally bitdepth, pixfmt, frames), paths relative
    /// to the file; every clip x feature set is a cell with its report in OUT/cells/CLIP/FEATURES
    #[arg(long, value_name = "FILE")]
    pub clips: Option<PathBuf>,
    /// Each feature of --features is an extractor run and a report cell of its own
    #[arg(long)]
    pub per_feature: bool,
    /// Run only shard K of N of the run's units (each cell's first run, then one per
    /// further block order, dealt round robin); `auto` reads a Slurm array task
    /// (SLURM_ARRAY_TASK_ID/_COUNT), `auto/N` a Kubernetes Indexed Job (JOB_COMPLETION_INDEX).
    /// The shard's directory then holds its runs and shard.json; `parity merge` of every
    /// shard's directory gives the report of the whole run
    #[arg(long, value_name = "K/N|auto|auto/N", value_parser = crate::shard::parse)]
    pub shard: Option<Shard>,
    /// Compare two raw video outputs instead of running extractors (a filter's CPU and
    /// CUDA forms, the emulated and the real device's): raw frames with -W, -H and
    /// --pix-fmt, or .y4m files; frame by frame and component by component
    #[arg(long, num_args = 2, value_names = ["A", "B"])]
    pub video: Vec<PathBuf>,
    /// Pixel format of raw --video inputs, by FFmpeg's name (yuv420p, nv12, p010le,
    /// yuva420p, bgr0, ...; default from --pixfmt and --bitdepth: yuv420p)
    #[arg(long, value_name = "NAME")]
    pub pix_fmt: Option<String>,
    /// --video: the largest absolute sample difference that passes (default 0: identical)
    #[arg(long, default_value_t = 0, value_name = "N")]
    pub max_diff: u32,
    /// --video: the name of A in reports
    #[arg(long, default_value = "a")]
    pub label_a: String,
    /// --video: the name of B in reports
    #[arg(long, default_value = "b")]
    pub label_b: String,
    /// Report directory
    #[arg(long, short = 'o', default_value = "reports/frames")]
    pub out: PathBuf,
}

/// Where the CUDA runs of every cell go: the device, its environment (the counters
/// pattern set per cell) and the block order.
struct CudaRun {
    label: String,
    device: &'static str,
    env: Vec<(String, String)>,
    /// Counters are read (simtwin's driver, emulated or pass-through).
    counted: bool,
    driver: String,
    /// Block order of this run (`--block-orders`), if set.
    order: Option<String>,
    /// Settings of the run that the real device does not get (emulation only).
    dropped: Vec<String>,
    /// The unit it belongs to: 0 (with the CPU run) or the block order's index.
    unit: usize,
}

/// Runs `parity frames`: the exit code, or an error (exit code per [`crate::exit::exit_code_of`]).
/// (`--video` comparisons are `crate::video::run_video`, which main dispatches to.)
pub fn run_frames(a: &FramesArgs) -> Result<i32> {
    report::guarded("frames", &a.out, &report::FRAMES_ARTEFACTS, || frames_inner(a))
}

fn ext_for(cmd: &Option<String>) -> &'static str {
    match cmd {
        None => "json",
        Some(c) if template::PRESETS.iter().any(|p| c == p.name || c.strip_prefix("preset:") == Some(p.name)) => "json",
        Some(_) => "out",
    }
}

/// One cell of the plan, as shards and merge see it.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
struct CellPlan {
    id: String,
    clip: String,
    reference: PathBuf,
    distorted: PathBuf,
    /// Sizes of the clip files (a changed clip is another run).
    bytes: [u64; 2],
    width: u32,
    height: u32,
    bitdepth: u32,
    pixfmt: String,
    features: Option<String>,
    frames: u64,
}

/// Everything that decides a run's results, checked before anything runs: what shards
/// of one run share (`shard.json`'s plan) and what `parity merge` reports from.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
struct RunPlan {
    matrix: bool,
    cells: Vec<CellPlan>,
    /// `--block-orders` (empty: one CUDA run per device).
    orders: Vec<String>,
    device: String,
    tolerances: Option<String>,
    tolerances_source: Option<String>,
    metrics: Vec<String>,
    ignore_metric: Vec<String>,
    allow_hazards: bool,
    /// `--allow-unsupported` (absent in plans written before it: false).
    #[serde(default)]
    allow_unsupported: bool,
    proof: String,
    features: Option<String>,
    defect: Option<String>,
    cpu_t: String,
    cpu_note: String,
    cuda_t: String,
    cuda_note: String,
    cpu_ext: String,
    cuda_ext: String,
    extra_env: Vec<(String, String)>,
}

impl RunPlan {
    fn of(a: &FramesArgs) -> Result<RunPlan> {
        let tolerances = a.tolerances.as_ref().map(|p| crate::input::read_text(p, "tolerance table")).transpose()?;
        parse_proof(&a.proof)?;
        if !a.block_orders.is_empty() {
            orders::check_orders(&a.block_orders)?;
            if a.ex.emu.block_order.is_some() {
                bail!("--block-order and --block-orders exclude each other");
            }
            if a.device == DeviceMode::Real {
                bail!("--block-orders needs the emulated driver (--device emulated or both): a real device has no block order to choose");
            }
        }
        if let Some(o) = &a.ex.emu.block_order {
            orders::check_order(o)?;
        }
        if a.per_feature && a.ex.features.as_deref().is_none_or(|f| f.trim().is_empty()) {
            bail!("--per-feature needs --features (the features to give one run each)");
        }
        let clips: Vec<Clip> = match (&a.clips, a.clip.given()) {
            (Some(_), true) => bail!("--clips and -r/-d/-W/-H exclude each other"),
            (Some(list), false) => crate::matrix::read_clip_list(list)?,
            (None, _) => vec![a.clip.clip()?],
        };
        let mut sized = Vec::new();
        for c in &clips {
            let n = c.resolve_frames(c.frames.or(a.frames)).map_err(|e| {
                if c.name.is_empty() {
                    e
                } else {
                    e.context(format!("clip {}", c.name))
                }
            })?;
            sized.push((c.clone(), n));
        }
        let matrix = a.clips.is_some() || a.per_feature;
        let cells = crate::matrix::cells(&sized, a.ex.features.as_deref(), a.per_feature, Path::new(""), matrix)
            .into_iter()
            .map(|c| CellPlan {
                bytes: [&c.clip.reference, &c.clip.distorted].map(|p| std::fs::metadata(p).map(|m| m.len()).unwrap_or(0)),
                id: c.id,
                clip: c.clip.name,
                reference: c.clip.reference,
                distorted: c.clip.distorted,
                width: c.clip.width,
                height: c.clip.height,
                bitdepth: c.clip.bitdepth,
                pixfmt: c.clip.pixfmt,
                features: c.features,
                frames: c.frames,
            })
            .collect();
        let (cpu_t, cpu_note) = template::resolve(a.cpu_cmd.as_deref(), &a.ex.preset, Backend::Cpu)?;
        let (cuda_t, cuda_note) = template::resolve(a.cuda_cmd.as_deref(), &a.ex.preset, Backend::Cuda)?;
        let plan = RunPlan {
            matrix,
            cells,
            orders: a.block_orders.clone(),
            device: a.device.name().into(),
            tolerances,
            tolerances_source: a.tolerances.as_ref().map(|p| p.display().to_string()),
            metrics: a.metrics.clone(),
            ignore_metric: a.ignore_metric.clone(),
            allow_hazards: a.allow_hazards,
            allow_unsupported: a.allow_unsupported,
            proof: a.proof.clone(),
            features: a.ex.features.clone(),
            defect: a.ex.defect.clone(),
            cpu_t,
            cpu_note,
            cuda_t,
            cuda_note,
            cpu_ext: ext_for(&a.cpu_cmd).into(),
            cuda_ext: ext_for(&a.cuda_cmd).into(),
            extra_env: a.ex.cuda_extra_env()?,
        };
        plan.tols()?;
        Ok(plan)
    }

    fn tols(&self) -> Result<tolerance::Table> {
        match (&self.tolerances, &self.tolerances_source) {
            (Some(t), src) => {
                let mut table = tolerance::Table::parse(t).with_context(|| format!("tolerance table {}", src.as_deref().unwrap_or("")))?;
                table.source = src.clone();
                Ok(table)
            }
            (None, _) => Ok(tolerance::Table::exact()),
        }
    }

    /// The cells with their report directories under `out`.
    fn cells(&self, out: &Path) -> Vec<Cell> {
        self.cells
            .iter()
            .map(|c| Cell {
                dir: if self.matrix { out.join("cells").join(&c.id) } else { out.to_path_buf() },
                id: c.id.clone(),
                clip: Clip {
                    name: c.clip.clone(),
                    reference: c.reference.clone(),
                    distorted: c.distorted.clone(),
                    width: c.width,
                    height: c.height,
                    bitdepth: c.bitdepth,
                    pixfmt: c.pixfmt.clone(),
                    frames: Some(c.frames),
                },
                features: c.features.clone(),
                frames: c.frames,
            })
            .collect()
    }

    /// The units of work in the run's order: each cell's first unit (the CPU run and the
    /// first CUDA runs), then one per further block order.
    fn units(&self) -> Vec<(usize, usize)> {
        let per_cell = self.orders.len().max(1);
        (0..self.cells.len()).flat_map(|c| (0..per_cell).map(move |k| (c, k))).collect()
    }

    fn unit_id(&self, (c, k): (usize, usize)) -> String {
        let cell = if self.cells[c].id.is_empty() { "clip" } else { &self.cells[c].id };
        format!("{cell}:{}", self.orders.get(k).map(String::as_str).unwrap_or("run"))
    }

    /// The labels of one cell's runs in report order, with their unit.
    fn labels(&self) -> Vec<(String, usize)> {
        let mut v = vec![("cpu".to_string(), 0)];
        let device = self.device.as_str();
        if device != "real" {
            v.push((fidelity::EMULATED.to_string(), 0));
        }
        if device != "emulated" {
            v.push((fidelity::REAL.to_string(), 0));
        }
        for (k, o) in self.orders.iter().enumerate().skip(1) {
            v.push((format!("cuda-emulated-{}", orders::slug(o)), k));
        }
        v
    }
}

/// What one run left, persisted in `CELL/runs/LABEL.json` so that a cell is reported
/// the same way whether its runs happened in one process or in shards.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct RunRecord {
    label: String,
    device: String,
    order: Option<String>,
    notes: Vec<String>,
    json: Json,
    /// The output file, relative to the cell directory.
    output: String,
    /// The counters directory, relative to the cell directory.
    counts_dir: Option<String>,
    hazards: usize,
    hazard_examples: Vec<Json>,
    /// Why the run failed (the cell is then an error).
    error: Option<String>,
    error_code: i32,
}

impl RunRecord {
    fn path(dir: &Path, label: &str) -> PathBuf {
        dir.join("runs").join(format!("{label}.json"))
    }
    fn save(&self, dir: &Path) -> Result<()> {
        std::fs::create_dir_all(dir.join("runs"))?;
        report::write_json(&Self::path(dir, &self.label), &serde_json::to_value(self)?)
    }
    fn load(dir: &Path, label: &str) -> Result<Option<RunRecord>> {
        let p = Self::path(dir, label);
        if !p.exists() {
            return Ok(None);
        }
        let t = crate::input::read_text(&p, "run record")?;
        Ok(Some(serde_json::from_str(&t).with_context(|| format!("{}: malformed", p.display()))?))
    }
}

/// What the runs of one cell produced, gathered for its reports.
#[derive(Default)]
struct Record {
    notes: Vec<String>,
    runs_json: Vec<Json>,
    /// (label, output) of the CPU run, then of each CUDA run compared to it.
    tables: Vec<(String, Table)>,
    /// Outputs of the runs under the other block orders (after the first).
    order_tables: Vec<Table>,
    hazards_total: usize,
    hazard_examples: Vec<Json>,
    /// (label, counters) of each CUDA run compared with the CPU.
    counts: Vec<(String, Counts)>,
}

/// The run's setup: the plan, where reports go, the CUDA runs' devices.
struct Ctx {
    plan: RunPlan,
    out: PathBuf,
    cells: Vec<Cell>,
    cuda_runs: Vec<CudaRun>,
    proof: Proof,
    timeout: std::time::Duration,
}

/// Files and directories of `parity frames` beyond a cell's reports.
const RUN_ARTEFACTS: report::Artefacts<'static> =
    report::Artefacts { files: &[crate::shard::FILE], dirs: &["cells", "runs"], prefixes: &[], suffixes: &[] };

fn frames_inner(a: &FramesArgs) -> Result<i32> {
    let plan = RunPlan::of(a)?;
    // `run_frames` created the directory, cleared an earlier run's reports and wrote the
    // incomplete summary.
    let out = std::fs::canonicalize(&a.out).with_context(|| format!("report directory {}", a.out.display()))?;
    report::clear_previous(&out, &RUN_ARTEFACTS)?;
    let ctx = Ctx {
        cells: plan.cells(&out),
        cuda_runs: cuda_runs(a, &plan)?,
        proof: parse_proof(&plan.proof)?,
        timeout: a.ex.timeout(),
        plan,
        out,
    };
    let units = ctx.plan.units();
    // A plain run stops at its first failure, as it always has; a matrix or a shard goes
    // on and reports the failed cells as errors.
    let strict = !ctx.plan.matrix && a.shard.is_none();
    let mut mine = Vec::new();
    let mut failed = 0;
    for (i, u) in units.iter().enumerate() {
        if a.shard.is_some_and(|s| !s.owns(i)) {
            continue;
        }
        mine.push(ctx.plan.unit_id(*u));
        if ctx.plan.matrix {
            eprintln!("parity: [{}/{}] {}", i + 1, units.len(), ctx.plan.unit_id(*u));
        }
        if let Err(e) = run_unit(a, &ctx, *u) {
            if strict {
                return Err(e);
            }
            eprintln!("parity: {}: error: {e:#}", ctx.plan.unit_id(*u));
            failed += 1;
        }
    }
    match a.shard {
        Some(sh) => {
            let rec = crate::shard::Record::new("frames", serde_json::to_value(&ctx.plan)?, sh, units.len(), mine);
            write_shard_summary(&ctx.out, &rec, failed)?;
            rec.write(&ctx.out)?;
            Ok(if failed > 0 { 2 } else { 0 })
        }
        None => report_run(&ctx.plan, &ctx.out),
    }
}

fn write_shard_summary(out: &Path, rec: &crate::shard::Record, failed: usize) -> Result<()> {
    let md = format!(
        "# parity frames, shard {} (run {})\n\n{} of {} units ran here{}; `parity merge` of every shard's directory gives the report.\n\n{}\n",
        rec.shard,
        rec.run_key,
        rec.units.len(),
        rec.units_total,
        if failed > 0 { format!(", {failed} with an error") } else { String::new() },
        rec.units.iter().map(|u| format!("- `{u}`")).collect::<Vec<_>>().join("\n")
    );
    report::write_atomic(&out.join("summary.md"), md)?;
    println!(
        "shard {}: {} of {} units{}; merge with `parity merge` (run {})",
        rec.shard,
        rec.units.len(),
        rec.units_total,
        if failed > 0 { format!(", {failed} failed") } else { String::new() },
        rec.run_key
    );
    Ok(())
}

/// Device setup first: a missing device or driver, or a driver that refuses a setting,
/// fails before anything runs (no real device: exit 77 before anything else). The
/// first emulated run is compared with the CPU; runs under further block orders follow
/// it; the real device's run comes second (columns cpu, cuda-emulated, cuda-real).
fn cuda_runs(a: &FramesArgs, plan: &RunPlan) -> Result<Vec<CudaRun>> {
    let mut runs = Vec::new();
    let device = a.device;
    let real = if device.real() { Some(RealDevice::find()?) } else { None };
    // The counters pattern is set per cell; this one only stands in for the probes.
    let probe_pattern = std::env::temp_dir().join("parity-probe-%p.json");
    if device.emulated() {
        let simtwin = a.ex.require_simtwin()?;
        let orders: Vec<Option<String>> = if plan.orders.is_empty() { vec![None] } else { plan.orders.iter().cloned().map(Some).collect() };
        let emu = emulated_env(&simtwin, a.ex.kernels.as_deref(), &probe_pattern)?;
        for (i, order) in orders.iter().enumerate() {
            let label = match (i, order) {
                (0, _) | (_, None) => fidelity::EMULATED.to_string(),
                (_, Some(o)) => format!("cuda-emulated-{}", orders::slug(o)),
            };
            let mut env = emu.vars.clone();
            env.extend(plan.extra_env.clone());
            if let Some(o) = order {
                env.push(("EMU_CUDA_BLOCK_ORDER".into(), o.clone()));
            }
            let settings: Vec<(String, String)> =
                env.iter().filter(|(k, v)| (k == "EMU_CUDA_BLOCK_ORDER" && v != "forward") || k == "EMU_CUDA_CHECKS").cloned().collect();
            if !settings.is_empty() {
                check_emulated_accepts(&emu, &settings)?;
            }
            runs.push(CudaRun {
                label,
                device: "emulated",
                env,
                counted: true,
                driver: emu.driver_path.clone(),
                order: order.clone(),
                dropped: vec![],
                unit: i,
            });
        }
    }
    if let Some(real) = real {
        let simtwin = a.ex.require_simtwin()?;
        real.check_passthrough(&simtwin, a.ex.kernels.as_deref())?;
        let mut env = real.env(&simtwin, a.ex.kernels.as_deref(), &probe_pattern)?.vars;
        let (extra, dropped) = for_real_device(&plan.extra_env);
        env.extend(extra);
        // After the first emulated run (the comparisons' order: cpu, emulated, real).
        let at = runs.len().min(1);
        runs.insert(
            at,
            CudaRun {
                label: fidelity::REAL.into(),
                device: "real",
                env,
                counted: true,
                driver: real.label(),
                order: None,
                dropped,
                unit: 0,
            },
        );
    }
    Ok(runs)
}

/// Runs one unit: its runs in order, each persisted; the first failure ends the unit
/// (persisted as the failed run's record).
fn run_unit(a: &FramesArgs, ctx: &Ctx, (c, k): (usize, usize)) -> Result<()> {
    let cell = &ctx.cells[c];
    if k == 0 {
        persist(cell, "cpu", "cpu", None, run_cpu(a, ctx, cell))?;
    }
    for r in ctx.cuda_runs.iter().filter(|r| r.unit == k) {
        persist(cell, &r.label, r.device, r.order.clone(), run_cuda(a, ctx, cell, r))?;
    }
    Ok(())
}

/// Saves a run's record (or its failure) in the cell directory; a failure is returned.
fn persist(cell: &Cell, label: &str, device: &str, order: Option<String>, r: Result<RunRecord>) -> Result<()> {
    match r {
        Ok(rec) => rec.save(&cell.dir),
        Err(e) => {
            let rec = RunRecord {
                label: label.into(),
                device: device.into(),
                order,
                error: Some(format!("{e:#}")),
                error_code: crate::exit::exit_code_of(&e),
                ..Default::default()
            };
            rec.save(&cell.dir)?;
            Err(e)
        }
    }
}

/// Runs one extractor and reads its output; on failure its output (if any) is renamed
/// `*.failed`, so that nothing in the report directory reads as this run's result.
fn run_and_read(spec: &Spec, output: &Path, frames: u64) -> Result<(run::Outcome, Table)> {
    let r = run::run(spec).and_then(|res| read_output(output, &spec.label, frames).map(|t| (res, t)));
    if r.is_err() {
        report::mark_failed(output);
    }
    r
}

fn run_cpu(a: &FramesArgs, ctx: &Ctx, cell: &Cell) -> Result<RunRecord> {
    let p = &ctx.plan;
    let name = format!("cpu.{}", p.cpu_ext);
    let cpu_out = cell.dir.join(&name);
    let argv = template::expand(&p.cpu_t, &a.ex.vars(&cell.clip, cell.frames, &cpu_out, Backend::Cpu, cell.features.as_deref()))?;
    eprintln!("parity: cpu extractor, {}\n  $ {}", p.cpu_note, template::display(&argv));
    let spec =
        Spec { label: "cpu".into(), argv: argv.clone(), env: vec![], log_dir: cell.dir.join("logs"), spinner: true, timeout: ctx.timeout };
    let (res, _) = run_and_read(&spec, &cpu_out, cell.frames)?;
    Ok(RunRecord {
        label: "cpu".into(),
        device: "cpu".into(),
        notes: vec![format!("cpu: {}: `{}`", p.cpu_note, template::display(&argv))],
        json: json!({"label": "cpu", "command": argv, "flags": p.cpu_note, "elapsed_s": res.elapsed.as_secs_f64()}),
        output: name,
        ..Default::default()
    })
}

fn run_cuda(a: &FramesArgs, ctx: &Ctx, cell: &Cell, r: &CudaRun) -> Result<RunRecord> {
    let p = &ctx.plan;
    let name = format!("{}.{}", r.label, p.cuda_ext);
    let o = cell.dir.join(&name);
    let argv = template::expand(&p.cuda_t, &a.ex.vars(&cell.clip, cell.frames, &o, Backend::Cuda, cell.features.as_deref()))?;
    let order = r.order.as_deref().map(|o| format!(", block order {o}")).unwrap_or_default();
    eprintln!("parity: {} extractor ({} driver {}{order}), {}\n  $ {}", r.label, r.device, r.driver, p.cuda_note, template::display(&argv));
    let mut rec = RunRecord { label: r.label.clone(), device: r.device.into(), order: r.order.clone(), output: name, ..Default::default() };
    rec.notes.push(format!("{}: {}; {} driver `{}`{order}: `{}`", r.label, p.cuda_note, r.device, r.driver, template::display(&argv)));
    if !r.dropped.is_empty() {
        rec.notes.push(format!("{}: not given to the real device (emulated driver only): {}", r.label, r.dropped.join(" ")));
    }
    let mut env = r.env.clone();
    let cdir_rel = format!("counts/{}", r.label);
    if r.counted {
        let pattern = prepare_dir(&cell.dir.join(&cdir_rel))?;
        env.retain(|(k, _)| k != "EMU_CUDA_COUNTS");
        env.push(("EMU_CUDA_COUNTS".into(), pattern.display().to_string()));
        rec.counts_dir = Some(cdir_rel.clone());
    }
    let spec = Spec {
        label: r.label.clone(),
        argv: argv.clone(),
        env: env.clone(),
        log_dir: cell.dir.join("logs"),
        spinner: true,
        timeout: ctx.timeout,
    };
    let (res, _) = run_and_read(&spec, &o, cell.frames)?;
    rec.json = json!({"label": r.label, "device": r.device, "driver": r.driver, "command": argv, "flags": p.cuda_note,
                      "elapsed_s": res.elapsed.as_secs_f64(), "block_order": r.order,
                      "env": env.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>()});
    if r.counted {
        if let Err(e) = check_counts(ctx, r, &cell.dir.join(&cdir_rel), &mut rec) {
            report::mark_failed(&o);
            return Err(e);
        }
    }
    match &ctx.proof {
        Proof::Log(t) if r.device == "real" => {
            if !res.logs_contain(t) {
                report::mark_failed(&o);
                bail!(
                    "{}: --proof log:{t}: the extractor's output does not contain '{t}' ({}, {}); it may have fallen back to the CPU",
                    r.label,
                    res.stdout.display(),
                    res.stderr.display()
                );
            }
            rec.notes.push(format!("{}: proof of device execution: its log contains '{t}'", r.label));
        }
        Proof::None => rec.notes.push(format!("{}: UNPROVEN: --proof none, nothing shows that the CUDA side ran on a device", r.label)),
        _ => {}
    }
    Ok(rec)
}

/// The counters of simtwin's driver (emulated, or the pass-through to the real device):
/// proof that the CUDA side ran on the device (unless --proof none), hazards, and
/// whether they come from a clean exit.
fn check_counts(ctx: &Ctx, r: &CudaRun, cdir: &Path, rec: &mut RunRecord) -> Result<()> {
    let counts = crate::counts::collect(cdir)?;
    let launches = counts.launches();
    rec.json["counts_state"] = json!(state_tag(&counts.state()));
    rec.json["launches"] = json!(launches);
    rec.json["hazards"] = json!(counts.hazards().len());
    if ctx.proof != Proof::None {
        if counts.files.is_empty() {
            bail!(
                "{}: {} wrote no counters file into {}: the extractor did not load simtwin's libcuda.so.1 \
                 (a CUDA extractor that cannot load the driver may fall back to the CPU and still exit 0)",
                r.label,
                if r.device == "real" { "simtwin's pass-through" } else { "the emulated driver" },
                cdir.display()
            );
        }
        if counts.total_launches() == 0.0 {
            bail!(
                "{}: the CUDA extractor launched no kernel (counters: {}); it did not run on the device \
                 (VMAF falls back to the CPU with exit status 0 when libcuda.so.1 fails to load or initialise)",
                r.label,
                counts.paths().iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(", ")
            );
        }
        rec.notes.push(format!(
            "{}: proof of device execution: {} kernel launches ({})",
            r.label,
            counts.total_launches(),
            launches.iter().map(|(k, v)| format!("{k} x{v}")).collect::<Vec<_>>().join(", ")
        ));
    }
    let unclean = counts.unclean();
    if !unclean.is_empty() {
        rec.notes.push(format!("{}: counters NOT from a clean exit: {}", r.label, unclean.join("; ")));
    }
    rec.hazards = counts.hazards().len();
    rec.hazard_examples = counts.hazards().iter().take(20).map(|h| json!(h)).collect();
    Ok(())
}

/// The reports of every cell from its persisted runs (and, for a matrix, the run's
/// summary over its cells): what an unsharded run and `parity merge` both end with.
fn report_run(plan: &RunPlan, out: &Path) -> Result<i32> {
    let cells = plan.cells(out);
    if !plan.matrix {
        return match report_cell(plan, &cells[0])? {
            CellResult::Done(code, _) => Ok(code),
            CellResult::Failed(code, msg) => {
                report::write_error(out, "frames", code, &msg, Map::new());
                Err(if code == 77 { anyhow::Error::new(crate::exit::Skip(msg)) } else { anyhow!(msg) })
            }
        };
    }
    let mut rows = Vec::new();
    for cell in &cells {
        let (code, summary) = match report_cell(plan, cell)? {
            CellResult::Done(code, s) => (code, s),
            CellResult::Failed(code, msg) => {
                report::write_error(&cell.dir, "frames", code, &msg, Map::new());
                (code, json!({"verdict": if code == 77 { "skipped" } else { "error" }, "exit_code": code, "error": msg}))
            }
        };
        rows.push((cell, code, summary));
    }
    crate::matrix::write_report(out, &rows.iter().map(|(c, code, s)| (c.id.clone(), c.dir.clone(), *code, s.clone())).collect::<Vec<_>>())
}

/// A cell's outcome.
enum CellResult {
    /// Compared: the exit code and the summary.
    Done(i32, Json),
    /// A run failed: its exit code and message.
    Failed(i32, String),
}

fn report_cell(plan: &RunPlan, cell: &Cell) -> Result<CellResult> {
    let mut records = Vec::new();
    let mut missing = Vec::new();
    for (label, _) in plan.labels() {
        match RunRecord::load(&cell.dir, &label)? {
            Some(r) => records.push(r),
            None => missing.push(label),
        }
    }
    // The first failure in report order decides (the later runs of its unit never ran).
    if let Some(r) = records.iter().find(|r| r.error.is_some()) {
        return Ok(CellResult::Failed(r.error_code, r.error.clone().unwrap_or_default()));
    }
    if !missing.is_empty() {
        return Ok(CellResult::Failed(2, format!("no record of the run(s) {} in {}", missing.join(", "), cell.dir.display())));
    }
    let mut rec = Record::default();
    for r in records {
        let output = cell.dir.join(&r.output);
        let table = read_output(&output, &r.label, cell.frames)?;
        let mut j = r.json.clone();
        j["output"] = json!(output);
        let counts = match &r.counts_dir {
            Some(d) => {
                let c = Counts::read_dir(&cell.dir.join(d))?;
                j["counts_files"] = json!(c.paths());
                Some(c)
            }
            None => None,
        };
        rec.notes.extend(r.notes);
        rec.runs_json.push(j);
        rec.hazards_total += r.hazards;
        rec.hazard_examples.extend(r.hazard_examples);
        if r.order.is_some() && rec.tables.iter().any(|(l, _)| l == fidelity::EMULATED) {
            rec.order_tables.push(table);
        } else {
            rec.tables.push((r.label.clone(), table));
            if let Some(c) = counts {
                rec.counts.push((r.label.clone(), c));
            }
        }
    }
    let (code, summary) = finish(plan, cell, rec)?;
    Ok(CellResult::Done(code, summary))
}

/// Comparisons, the block-order check, the verdict and the reports of one cell.
fn finish(plan: &RunPlan, cell: &Cell, mut rec: Record) -> Result<(i32, Json)> {
    let tols = plan.tols()?;
    let sel = Selection { only: plan.metrics.clone(), ignore: plan.ignore_metric.clone() };
    let (base_label, base) = (&rec.tables[0].0, &rec.tables[0].1);
    let comps: Vec<Comparison> =
        rec.tables[1..].iter().map(|(l, t)| compare(base_label, base, l, t, &tols, &sel)).collect::<Result<_>>()?;
    let sides: Vec<Side> = rec.tables.iter().map(|(l, t)| Side::of(l, t)).collect();
    let order_check = if plan.orders.is_empty() {
        None
    } else {
        let first = rec
            .tables
            .iter()
            .find(|(l, _)| l == "cuda-emulated")
            .map(|(_, t)| t.clone())
            .context("no emulated run to compare block orders with")?;
        let mut tables = vec![first];
        tables.append(&mut rec.order_tables);
        Some(OrderCheck::new(&OrderRuns { orders: plan.orders.clone(), tables }, &sel)?)
    };
    let hazard_fail = rec.hazards_total > 0 && !plan.allow_hazards;
    if rec.hazards_total > 0 {
        rec.notes.push(format!(
            "the emulated driver reported {} hazard(s){}; first: {}",
            rec.hazards_total,
            if plan.allow_hazards { " (allowed by --allow-hazards)" } else { ": FAIL" },
            rec.hazard_examples.first().map(|h| h.to_string()).unwrap_or_default()
        ));
    }
    // Entry points the emulated driver answered CUDA_ERROR_NOT_SUPPORTED: the run is not
    // what the program does on a device, whatever its exit status and output.
    let mut unsupported: std::collections::BTreeMap<String, u64> = Default::default();
    for (_, c) in &rec.counts {
        for (k, n) in &c.total.unsupported {
            *unsupported.entry(k.clone()).or_default() += n;
        }
    }
    let unsupported_fail = !unsupported.is_empty() && !plan.allow_unsupported;
    if !unsupported.is_empty() {
        rec.notes.push(format!(
            "the CUDA program called entry points the emulated driver does not implement (they answered CUDA_ERROR_NOT_SUPPORTED): {}{}",
            unsupported.iter().map(|(k, n)| format!("{k} x{n}")).collect::<Vec<_>>().join(", "),
            if plan.allow_unsupported { " (allowed by --allow-unsupported)" } else { ": FAIL (--allow-unsupported accepts them)" }
        ));
        if unsupported_fail {
            eprintln!(
                "parity: FAIL: unsupported entry points called: {}",
                unsupported.iter().map(|(k, n)| format!("{k} x{n}")).collect::<Vec<_>>().join(", ")
            );
        }
    }
    let order_fail = order_check.as_ref().is_some_and(|c| c.any_changed());
    let side = side_by_side(&tols, &rec, &sel)?;
    let real_fail = side.as_ref().is_some_and(|s| !s.outputs.pass());
    let code = if comps.iter().all(|c| c.pass()) && !hazard_fail && !unsupported_fail && !order_fail && !real_fail { 0 } else { 1 };
    let mut extra = Map::new();
    if plan.matrix {
        extra.insert("cell".into(), json!(cell.id));
        extra.insert("clip".into(), json!(cell.clip.name));
    }
    extra.insert("device".into(), json!(plan.device));
    extra.insert("features".into(), json!(cell.features));
    extra.insert("defect".into(), json!(plan.defect));
    extra.insert("expected_frames".into(), json!(cell.frames));
    extra.insert("runs".into(), json!(rec.runs_json));
    extra.insert("hazards".into(), json!({"count": rec.hazards_total, "fail": hazard_fail, "reports": rec.hazard_examples}));
    extra.insert("unsupported".into(), json!({"calls": unsupported, "fail": unsupported_fail}));
    extra.insert("block_orders".into(), order_check.as_ref().map(|c| c.to_json()).unwrap_or(Json::Null));
    extra.insert("emulated_vs_real".into(), side.as_ref().map(SideBySide::to_json).unwrap_or(Json::Null));
    let summary = report::summary_json("frames", &sides, &comps, &tols.describe_source(), extra, code);
    let mut extra_md = String::new();
    if let Some(c) = &order_check {
        c.write_csv(&cell.dir.join("block_orders.csv"))?;
        extra_md = c.markdown();
    }
    if let Some(s) = &side {
        fidelity::write_outputs_csv(&cell.dir.join("emulated_vs_real.csv"), &s.outputs)?;
        extra_md.push_str(&s.markdown());
    }
    let title = if cell.id.is_empty() { "parity frames".to_string() } else { format!("parity frames {}", cell.id) };
    report::write_all(&cell.dir, &title, &summary, &sides, &comps, &rec.notes, &extra_md)?;
    if !plan.matrix {
        crate::junit::write(
            &cell.dir.join("junit.xml"),
            "parity frames",
            &[crate::junit::Suite {
                name: "parity frames".into(),
                cases: crate::junit::frames_cases("", &summary),
                time: crate::junit::runs_time(&summary),
            }],
        )?;
    }
    if plan.matrix {
        println!("== {}", cell.id);
    }
    print_table(&comps, &summary, &cell.dir);
    if let Some(s) = &side {
        s.print();
    }
    if let Some(c) = &order_check {
        c.print();
    }
    Ok((code, summary))
}

/// `parity merge` of frames shards: their cells' runs brought together in `out`, then
/// reported exactly as an unsharded run reports.
pub(crate) fn merge(shards: &[(PathBuf, crate::shard::Record)], out: &Path) -> Result<i32> {
    let plan: RunPlan = serde_json::from_value(shards[0].1.plan.clone()).context("the shards' plan is not one this parity reads")?;
    report::clear_previous(out, &report::FRAMES_ARTEFACTS)?;
    report::clear_previous(out, &RUN_ARTEFACTS)?;
    for (dir, _) in shards {
        crate::shard::copy_tree(dir, out, &["shard.json", "summary.md", "summary.json", "junit.xml"])?;
    }
    report_run(&plan, out)
}

/// `--device both`: the emulated driver's and the real device's outputs compared frame
/// by frame (the tolerance table decides the verdict; every difference is listed), and
/// their counters for the same run key by key (reported, not a verdict: `parity
/// transfers --device both` is the gate).
struct SideBySide {
    outputs: Comparison,
    count_diffs: Vec<fidelity::CountDiff>,
    compared_counts: usize,
}

fn side_by_side(tols: &tolerance::Table, rec: &Record, sel: &Selection) -> Result<Option<SideBySide>> {
    let table = |l: &str| rec.tables.iter().find(|(x, _)| x == l).map(|(_, t)| t);
    let (Some(e), Some(r)) = (table(fidelity::EMULATED), table(fidelity::REAL)) else { return Ok(None) };
    let outputs = compare(fidelity::EMULATED, e, fidelity::REAL, r, tols, sel)?;
    let counts = |l: &str| rec.counts.iter().find(|(x, _)| x == l).map(|(_, c)| crate::transfers::with_total(c)).unwrap_or_default();
    let (ce, cr) = (counts(fidelity::EMULATED), counts(fidelity::REAL));
    Ok(Some(SideBySide { outputs, count_diffs: fidelity::count_diffs(&ce, &cr), compared_counts: fidelity::compared_count(&ce, &cr) }))
}

impl SideBySide {
    fn to_json(&self) -> Json {
        let mut j = fidelity::outputs_json(&self.outputs);
        j["counters"] = json!({"compared": self.compared_counts, "differences": fidelity::count_diffs_json(&self.count_diffs)});
        j
    }
    fn markdown(&self) -> String {
        fidelity::outputs_markdown(&self.outputs)
            + &fidelity::count_diffs_markdown("Counters of the whole run, emulated vs real device", &self.count_diffs, self.compared_counts)
    }
    fn print(&self) {
        let c = &self.outputs;
        println!("{} vs {}: {}/{} frames identical in every metric", c.a_label, c.b_label, c.identical_frames, c.frames);
        for r in c.rows.iter().filter(|r| r.cell.kind != crate::compare::Kind::Identical) {
            println!(
                "  frame {} {}: emulated {} real {} ({}{})",
                r.frame,
                r.metric,
                g17(r.a),
                g17(r.b),
                r.cell.kind.name(),
                r.cell.ulp.map(|u| format!(", {u} ULP")).unwrap_or_default()
            );
        }
        if self.count_diffs.is_empty() {
            println!("  counters: all {} compared keys equal", self.compared_counts);
        } else {
            for d in &self.count_diffs {
                println!("  counter {}: emulated {} real {}", d.key, g17(d.emulated), g17(d.real));
            }
        }
    }
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
        println!(
            "  {:<28} {:>11} {:>12} {:>24} {:>10} {:>10}  verdict",
            "metric", "identical", "beyond_tol", "max_abs", "max_ulp", "first_diff"
        );
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
            println!(
                "  first difference beyond tolerance: frame {} metric {}: {} vs {} ({})",
                r.frame,
                r.metric,
                g17(r.a),
                g17(r.b),
                r.cell.kind.name()
            );
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
