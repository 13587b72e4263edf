//! `parity frames`: run a CPU and a CUDA extractor on the same clips and compare every
//! frame and metric bit for bit.

use crate::common::{parse_proof, ClipArgs, ExtractorArgs, Proof};
use crate::compare::{compare, Comparison, Selection};
use crate::counts::{prepare_dir, state_tag, Counts};
use crate::device::{check_emulated_accepts, emulated_env, for_real_device, DeviceMode, RealDevice};
use crate::fidelity;
use crate::num::g17;
use crate::orders::{self, OrderCheck, OrderRuns};
use crate::output::{self, Table};
use crate::report::{self, Side};
use crate::run::{self, Spec};
use crate::template::{self, Backend};
use crate::tolerance;
use anyhow::{anyhow, bail, Context, Result};
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
  # a custom CUDA extractor template:
  parity frames -r ref.yuv -d dis.yuv -W 640 -H 360 \\
      --cuda-cmd './my_twin --gpu -i {ref} -j {dis} -s {width}x{height} -n {frames} -o {output}'

Exit codes: 0 parity, 1 differences beyond tolerance (or driver hazards, or outputs
that change between --block-orders), 2 setup or input error (an extractor that fails,
crashes or reaches --timeout; a driver that refuses a block order), 77 a real device was
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
    /// Repeat the CUDA run on the emulated driver under each block order
    /// (EMU_CUDA_BLOCK_ORDER: forward, reverse, shuffle:SEED) and flag every metric and
    /// frame whose value changes between orders (exit code 1), e.g. forward,reverse,shuffle:1
    #[arg(long, value_delimiter = ',', value_name = "ORDER,ORDER,...")]
    pub block_orders: Vec<String>,
    /// Report directory
    #[arg(long, short = 'o', default_value = "reports/frames")]
    pub out: PathBuf,
}

/// One CUDA run: the device, its environment and where its counters go.
struct CudaRun {
    label: String,
    device: &'static str,
    env: Vec<(String, String)>,
    counts_dir: Option<PathBuf>,
    driver: String,
    /// Block order of this run (`--block-orders`), if set.
    order: Option<String>,
    /// Settings of the run that the real device does not get (emulation only).
    dropped: Vec<String>,
}

/// Runs `parity frames`: the exit code, or an error (exit code per [`crate::exit_code_of`]).
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

/// What the run needs, checked before anything runs.
struct Plan {
    tols: tolerance::Table,
    proof: Proof,
    nframes: u64,
    out: PathBuf,
    logs: PathBuf,
    cpu_t: String,
    cpu_note: String,
    cuda_t: String,
    cuda_note: String,
    extra_env: Vec<(String, String)>,
}

/// What the runs produced, gathered for the reports.
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

fn frames_inner(a: &FramesArgs) -> Result<i32> {
    let plan = plan(a)?;
    let cuda_runs = cuda_runs(a, &plan)?;
    let mut rec = Record::default();
    run_cpu(a, &plan, &mut rec)?;
    for r in &cuda_runs {
        run_cuda(a, &plan, r, &mut rec)?;
    }
    finish(a, &plan, rec)
}

/// Validates the arguments, resolves the templates and clears the report directory of
/// an earlier run's files.
fn plan(a: &FramesArgs) -> Result<Plan> {
    let tols = match &a.tolerances {
        Some(p) => tolerance::Table::load(p)?,
        None => tolerance::Table::exact(),
    };
    let proof = parse_proof(&a.proof)?;
    let nframes = a.clip.resolve_frames(a.frames)?;
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
    std::fs::create_dir_all(&a.out)?;
    let out = std::fs::canonicalize(&a.out)?;
    report::clear_previous(&out, &report::FRAMES_ARTEFACTS)?;
    let (cpu_t, cpu_note) = template::resolve(a.cpu_cmd.as_deref(), &a.ex.preset, Backend::Cpu)?;
    let (cuda_t, cuda_note) = template::resolve(a.cuda_cmd.as_deref(), &a.ex.preset, Backend::Cuda)?;
    let extra_env = a.ex.cuda_extra_env()?;
    Ok(Plan { tols, proof, nframes, logs: out.join("logs"), out, cpu_t, cpu_note, cuda_t, cuda_note, extra_env })
}

/// Device setup first: a missing device or driver, or a driver that refuses a setting,
/// fails before anything runs (no real device: exit 77 before anything else). The
/// first emulated run is compared with the CPU; runs under further block orders follow
/// it; the real device's run comes second (columns cpu, cuda-emulated, cuda-real).
fn cuda_runs(a: &FramesArgs, plan: &Plan) -> Result<Vec<CudaRun>> {
    let mut runs = Vec::new();
    let real = if a.device.real() { Some(RealDevice::find()?) } else { None };
    if a.device.emulated() {
        let simtwin = a.ex.require_simtwin()?;
        let orders: Vec<Option<String>> = if a.block_orders.is_empty() { vec![None] } else { a.block_orders.iter().cloned().map(Some).collect() };
        for (i, order) in orders.iter().enumerate() {
            let label = match (i, order) {
                (0, _) | (_, None) => fidelity::EMULATED.to_string(),
                (_, Some(o)) => format!("cuda-emulated-{}", orders::slug(o)),
            };
            let cdir = plan.out.join("counts").join(&label);
            let pattern = prepare_dir(&cdir)?;
            let emu = emulated_env(&simtwin, a.ex.kernels.as_deref(), &pattern)?;
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
            runs.push(CudaRun { label, device: "emulated", env, counts_dir: Some(cdir), driver: emu.driver_path, order: order.clone(), dropped: vec![] });
        }
    }
    if let Some(real) = real {
        let simtwin = a.ex.require_simtwin()?;
        real.check_passthrough(&simtwin, a.ex.kernels.as_deref())?;
        let cdir = plan.out.join("counts").join(fidelity::REAL);
        let pattern = prepare_dir(&cdir)?;
        let mut env = real.env(&simtwin, a.ex.kernels.as_deref(), &pattern)?.vars;
        let (extra, dropped) = for_real_device(&plan.extra_env);
        env.extend(extra);
        // After the first emulated run (the comparisons' order: cpu, emulated, real).
        let at = runs.len().min(1);
        runs.insert(at, CudaRun { label: fidelity::REAL.into(), device: "real", env, counts_dir: Some(cdir), driver: real.label(), order: None, dropped });
    }
    Ok(runs)
}

/// Runs one extractor and reads its output; on failure its output (if any) is renamed
/// `*.failed`, so that nothing in the report directory reads as this run's result.
fn run_and_read(plan: &Plan, spec: &Spec, output: &Path) -> Result<(run::Outcome, Table)> {
    let r = run::run(spec).and_then(|res| read_output(output, &spec.label, plan.nframes).map(|t| (res, t)));
    if r.is_err() {
        report::mark_failed(output);
    }
    r
}

fn run_cpu(a: &FramesArgs, plan: &Plan, rec: &mut Record) -> Result<()> {
    let cpu_out = plan.out.join(format!("cpu.{}", ext_for(&a.cpu_cmd)));
    let argv = template::expand(&plan.cpu_t, &a.ex.vars(&a.clip, plan.nframes, &cpu_out, Backend::Cpu, None))?;
    rec.notes.push(format!("cpu: {}: `{}`", plan.cpu_note, template::display(&argv)));
    eprintln!("parity: cpu extractor, {}\n  $ {}", plan.cpu_note, template::display(&argv));
    let spec = Spec { label: "cpu".into(), argv: argv.clone(), env: vec![], log_dir: plan.logs.clone(), spinner: true, timeout: a.ex.timeout() };
    let (res, table) = run_and_read(plan, &spec, &cpu_out)?;
    rec.runs_json.push(json!({"label": "cpu", "command": argv, "flags": plan.cpu_note, "elapsed_s": res.elapsed.as_secs_f64(), "output": cpu_out}));
    rec.tables.push(("cpu".into(), table));
    Ok(())
}

fn run_cuda(a: &FramesArgs, plan: &Plan, r: &CudaRun, rec: &mut Record) -> Result<()> {
    let o = plan.out.join(format!("{}.{}", r.label, ext_for(&a.cuda_cmd)));
    let argv = template::expand(&plan.cuda_t, &a.ex.vars(&a.clip, plan.nframes, &o, Backend::Cuda, None))?;
    let order = r.order.as_deref().map(|o| format!(", block order {o}")).unwrap_or_default();
    eprintln!("parity: {} extractor ({} driver {}{order}), {}\n  $ {}", r.label, r.device, r.driver, plan.cuda_note, template::display(&argv));
    rec.notes.push(format!("{}: {}; {} driver `{}`{order}: `{}`", r.label, plan.cuda_note, r.device, r.driver, template::display(&argv)));
    if !r.dropped.is_empty() {
        rec.notes.push(format!("{}: not given to the real device (emulated driver only): {}", r.label, r.dropped.join(" ")));
    }
    let spec = Spec { label: r.label.clone(), argv: argv.clone(), env: r.env.clone(), log_dir: plan.logs.clone(), spinner: true, timeout: a.ex.timeout() };
    let (res, table) = run_and_read(plan, &spec, &o)?;
    let mut rj = json!({"label": r.label, "device": r.device, "driver": r.driver, "command": argv, "flags": plan.cuda_note,
                        "elapsed_s": res.elapsed.as_secs_f64(), "output": o, "block_order": r.order,
                        "env": r.env.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>()});
    let mut counts = None;
    if let Some(cdir) = &r.counts_dir {
        match check_counts(plan, r, cdir, &mut rj, rec) {
            Ok(c) => counts = Some(c),
            Err(e) => {
                report::mark_failed(&o);
                return Err(e);
            }
        }
    }
    match &plan.proof {
        Proof::Log(t) if r.device == "real" => {
            if !res.logs_contain(t) {
                report::mark_failed(&o);
                bail!("{}: --proof log:{t}: the extractor's output does not contain '{t}' ({}, {}); it may have fallen back to the CPU", r.label, res.stdout.display(), res.stderr.display());
            }
            rec.notes.push(format!("{}: proof of device execution: its log contains '{t}'", r.label));
        }
        Proof::None => rec.notes.push(format!("{}: UNPROVEN: --proof none, nothing shows that the CUDA side ran on a device", r.label)),
        _ => {}
    }
    rec.runs_json.push(rj);
    if r.order.is_some() && rec.tables.iter().any(|(l, _)| l == fidelity::EMULATED) {
        rec.order_tables.push(table);
    } else {
        rec.tables.push((r.label.clone(), table));
        if let Some(c) = counts {
            rec.counts.push((r.label.clone(), c));
        }
    }
    Ok(())
}

/// The counters of simtwin's driver (emulated, or the pass-through to the real device):
/// proof that the CUDA side ran on the device (unless --proof none), hazards, and
/// whether they come from a clean exit.
fn check_counts(plan: &Plan, r: &CudaRun, cdir: &Path, rj: &mut Json, rec: &mut Record) -> Result<Counts> {
    let counts = crate::counts::collect(cdir)?;
    let launches = counts.launches();
    rj["counts_files"] = json!(counts.paths());
    rj["counts_state"] = json!(state_tag(&counts.state()));
    rj["launches"] = json!(launches);
    rj["hazards"] = json!(counts.hazards().len());
    if plan.proof != Proof::None {
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
    rec.hazards_total += counts.hazards().len();
    rec.hazard_examples.extend(counts.hazards().iter().take(20).map(|h| json!(h)));
    Ok(counts)
}

/// Comparisons, the block-order check, the verdict and the reports.
fn finish(a: &FramesArgs, plan: &Plan, mut rec: Record) -> Result<i32> {
    let sel = Selection { only: a.metrics.clone(), ignore: a.ignore_metric.clone() };
    let (base_label, base) = (&rec.tables[0].0, &rec.tables[0].1);
    let comps: Vec<Comparison> = rec.tables[1..].iter().map(|(l, t)| compare(base_label, base, l, t, &plan.tols, &sel)).collect::<Result<_>>()?;
    let sides: Vec<Side> = rec.tables.iter().map(|(l, t)| Side::of(l, t)).collect();
    let order_check = if a.block_orders.is_empty() {
        None
    } else {
        let first = rec.tables.iter().find(|(l, _)| l == "cuda-emulated").map(|(_, t)| t.clone()).context("no emulated run to compare block orders with")?;
        let mut tables = vec![first];
        tables.append(&mut rec.order_tables);
        Some(OrderCheck::new(&OrderRuns { orders: a.block_orders.clone(), tables }, &sel)?)
    };
    let hazard_fail = rec.hazards_total > 0 && !a.allow_hazards;
    if rec.hazards_total > 0 {
        rec.notes.push(format!(
            "the emulated driver reported {} hazard(s){}; first: {}",
            rec.hazards_total,
            if a.allow_hazards { " (allowed by --allow-hazards)" } else { ": FAIL" },
            rec.hazard_examples.first().map(|h| h.to_string()).unwrap_or_default()
        ));
    }
    let order_fail = order_check.as_ref().is_some_and(|c| c.any_changed());
    let side = side_by_side(plan, &rec, &sel)?;
    let real_fail = side.as_ref().is_some_and(|s| !s.outputs.pass());
    let code = if comps.iter().all(|c| c.pass()) && !hazard_fail && !order_fail && !real_fail { 0 } else { 1 };
    let mut extra = Map::new();
    extra.insert("device".into(), json!(format!("{:?}", a.device).to_lowercase()));
    extra.insert("features".into(), json!(a.ex.features));
    extra.insert("defect".into(), json!(a.ex.defect));
    extra.insert("expected_frames".into(), json!(plan.nframes));
    extra.insert("runs".into(), json!(rec.runs_json));
    extra.insert("hazards".into(), json!({"count": rec.hazards_total, "fail": hazard_fail, "reports": rec.hazard_examples}));
    extra.insert("block_orders".into(), order_check.as_ref().map(|c| c.to_json()).unwrap_or(Json::Null));
    extra.insert("emulated_vs_real".into(), side.as_ref().map(SideBySide::to_json).unwrap_or(Json::Null));
    let summary = report::summary_json("frames", &sides, &comps, &plan.tols.describe_source(), extra, code);
    let mut extra_md = String::new();
    if let Some(c) = &order_check {
        c.write_csv(&plan.out.join("block_orders.csv"))?;
        extra_md = c.markdown();
    }
    if let Some(s) = &side {
        fidelity::write_outputs_csv(&plan.out.join("emulated_vs_real.csv"), &s.outputs)?;
        extra_md.push_str(&s.markdown());
    }
    report::write_all(&plan.out, "parity frames", &summary, &sides, &comps, &rec.notes, &extra_md)?;
    crate::junit::write(&plan.out.join("junit.xml"), "parity frames", &[crate::junit::Suite { name: "parity frames".into(), cases: crate::junit::frames_cases("", &summary), time: crate::junit::runs_time(&summary) }])?;
    print_table(&comps, &summary, &plan.out);
    if let Some(s) = &side {
        s.print();
    }
    if let Some(c) = &order_check {
        c.print();
    }
    Ok(code)
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

fn side_by_side(plan: &Plan, rec: &Record, sel: &Selection) -> Result<Option<SideBySide>> {
    let table = |l: &str| rec.tables.iter().find(|(x, _)| x == l).map(|(_, t)| t);
    let (Some(e), Some(r)) = (table(fidelity::EMULATED), table(fidelity::REAL)) else { return Ok(None) };
    let outputs = compare(fidelity::EMULATED, e, fidelity::REAL, r, &plan.tols, sel)?;
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
        fidelity::outputs_markdown(&self.outputs) + &fidelity::count_diffs_markdown("Counters of the whole run, emulated vs real device", &self.count_diffs, self.compared_counts)
    }
    fn print(&self) {
        let c = &self.outputs;
        println!("{} vs {}: {}/{} frames identical in every metric", c.a_label, c.b_label, c.identical_frames, c.frames);
        for r in c.rows.iter().filter(|r| r.cell.kind != crate::compare::Kind::Identical) {
            println!("  frame {} {}: emulated {} real {} ({}{})", r.frame, r.metric, g17(r.a), g17(r.b), r.cell.kind.name(), r.cell.ulp.map(|u| format!(", {u} ULP")).unwrap_or_default());
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
