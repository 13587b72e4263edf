//! `parity bench`: milliseconds per frame as (t(N) - t(2)) / (N - 2), median of R
//! rounds; with a second command (A/B) the runs alternate A, B, B, A, ... so that both
//! see the same machine load. Prints the B/A ratio.

use crate::common::{ClipArgs, ExtractorArgs};
use crate::counts::prepare_dir;
use crate::device::{emulated_env, for_real_device, DeviceMode, RealDevice};
use crate::report;
use crate::run::{self, Spec};
use crate::template::{self, Backend};
use anyhow::{bail, Context, Result};
use serde_json::json;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::PathBuf;

/// The examples and exit codes of the command's `--help`.
const EXAMPLE: &str = "\
Examples:
  # CUDA twin on the emulated driver, 12 frames, median of 3:
  parity bench -r ref.yuv -d dis.yuv -W 256 -H 256 --features sse --frames 12
  # A/B: CPU twin against the CUDA twin, interleaved:
  parity bench -r ref.yuv -d dis.yuv -W 256 -H 256 --features topk --backend cpu --b-backend cuda
  # CPU, emulated driver and real GPU at once (commands A, B-emulated, B-real):
  parity bench -r ref.yuv -d dis.yuv -W 1920 -H 1080 --features sse,topk --frames 6 \\
      --backend cpu --b-backend cuda --device both
  # A/B of two custom commands:
  parity bench -r ref.yuv -d dis.yuv -W 256 -H 256 --backend cpu \\
      --cmd './old --in {ref} {dis} -n {frames} -o {output}' --b-cmd './new --in {ref} {dis} -n {frames} -o {output}'

On the real device the CUDA command runs on the system's driver directly (no simtwin
in the timed runs); one extra untimed run through simtwin's pass-through proves that it
launches kernels there (a CPU fallback would not).
Reports: bench.json, bench.md, bench.csv (every timed run), written when every run is done.
Exit 0, or 2 on a setup error or a run that fails or reaches --timeout SECONDS (default
600), 77 a real device was asked for and none exists.";

/// Files of `parity bench` in its report directory (all written at the end, so a
/// failed run leaves none of them but its error summary).
pub const ARTEFACTS: report::Artefacts<'static> = report::Artefacts {
    files: &["bench.json", "bench.md", "bench.csv", "summary.json", "summary.md"],
    dirs: &["counts", "logs"],
    prefixes: &["A-", "B-"],
    suffixes: &[".out"],
};

/// The arguments of `parity bench`.
#[derive(clap::Args, Debug, Clone)]
#[command(after_help = EXAMPLE)]
pub struct BenchArgs {
    #[command(flatten)]
    pub(crate) clip: ClipArgs,
    #[command(flatten)]
    pub(crate) ex: ExtractorArgs,
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
    /// Untimed runs of each command at 2 frames before the rounds (JIT cache, page cache)
    #[arg(long, default_value_t = 1)]
    pub warmup: u32,
    /// Where CUDA commands run: the emulated driver, the real device (the system's driver),
    /// or both (each CUDA command timed on each, as CMD-emulated and CMD-real)
    #[arg(long, value_enum, default_value = "emulated")]
    pub device: DeviceMode,
    /// Report directory
    #[arg(long, short = 'o', default_value = "reports/bench")]
    pub out: PathBuf,
}

struct Cmd {
    label: String,
    template: String,
    note: String,
    backend: Backend,
    features: Option<String>,
    /// For CUDA commands: "emulated" or "real".
    device: Option<&'static str>,
}

/// The median (NaN for an empty slice).
pub(crate) fn median(v: &[f64]) -> f64 {
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

/// `parity bench`: plan the commands, time them interleaved, write the reports; the exit
/// code, or an error (exit code per [`crate::exit::exit_code_of`]).
pub fn run_bench(a: &BenchArgs) -> Result<i32> {
    report::guarded("bench", &a.out, &ARTEFACTS, || bench_inner(a))
}

fn bench_inner(a: &BenchArgs) -> Result<i32> {
    if a.frames < 3 {
        bail!("--frames must be at least 3 (the estimate is (t(N) - t(2)) / (N - 2))");
    }
    if a.rounds == 0 {
        bail!("--rounds must be at least 1");
    }
    a.clip.clip()?.resolve_frames(Some(a.frames))?;
    if let Some(o) = &a.ex.emu.block_order {
        crate::orders::check_order(o)?;
    }
    let out = std::fs::canonicalize(&a.out).with_context(|| format!("report directory {}", a.out.display()))?;
    let plan = plan(a)?;
    for c in &plan.cmds {
        eprintln!("parity: bench {}: {}{}", c.label, c.note, c.device.map(|d| format!(" ({d})")).unwrap_or_default());
    }
    if let (Some(r), Some(st)) = (&plan.real, &plan.simtwin) {
        r.check_passthrough(st, a.ex.kernels.as_deref())?;
        for c in plan.cmds.iter().filter(|c| c.device == Some("real")) {
            prove_real(a, &out, r, st, c, &plan.real_extra)?;
        }
    }
    let timing = time_rounds(a, &out, &plan)?;
    for (c, launched) in plan.cmds.iter().zip(&timing.launched) {
        if c.device == Some("emulated") && !launched {
            bail!("bench {}: the CUDA command launched no kernel on the emulated driver (a CPU fallback?)", c.label);
        }
    }
    write_reports(a, &out, &plan, timing)?;
    println!("reports in {}", out.display());
    Ok(0)
}

/// What `parity bench` runs: the commands (a CUDA command once per device), the real
/// device and simtwin's build where needed, and the extra environment of each side.
struct Plan {
    cmds: Vec<Cmd>,
    needs_cuda: bool,
    real: Option<RealDevice>,
    /// simtwin's build directory (target/simtwin), for CUDA commands.
    simtwin: Option<PathBuf>,
    /// --cuda-env for the emulated driver.
    extra: Vec<(String, String)>,
    /// The same without the emulation-only settings (for the real device).
    real_extra: Vec<(String, String)>,
    /// The emulation-only settings the real device did not get.
    dropped: Vec<String>,
}

fn plan(a: &BenchArgs) -> Result<Plan> {
    let mut specs = Vec::new();
    let ba = backend_of(&a.backend);
    let (t, n) = template::resolve(a.cmd.as_deref(), &a.ex.preset, ba)?;
    specs.push(("A", t, n, ba, a.ex.features.clone()));
    if a.b_cmd.is_some() || a.b_backend.is_some() || a.b_features.is_some() {
        let bb = backend_of(a.b_backend.as_deref().unwrap_or(&a.backend));
        let (t, n) = template::resolve(a.b_cmd.as_deref(), &a.ex.preset, bb)?;
        specs.push(("B", t, n, bb, a.b_features.clone().or(a.ex.features.clone())));
    }
    let needs_cuda = specs.iter().any(|c| c.3 == Backend::Cuda);
    let real = if needs_cuda && a.device.real() { Some(RealDevice::find()?) } else { None };
    let simtwin = if needs_cuda { Some(a.ex.require_simtwin()?) } else { None };
    let mut cmds = Vec::new();
    for (label, template, note, backend, features) in specs {
        if backend == Backend::Cpu {
            cmds.push(Cmd { label: label.into(), template, note, backend, features, device: None });
            continue;
        }
        let devices: &[&'static str] = match a.device {
            DeviceMode::Emulated => &["emulated"],
            DeviceMode::Real => &["real"],
            DeviceMode::Both => &["emulated", "real"],
        };
        for d in devices {
            let label = if a.device == DeviceMode::Both { format!("{label}-{d}") } else { label.to_string() };
            cmds.push(Cmd { label, template: template.clone(), note: note.clone(), backend, features: features.clone(), device: Some(d) });
        }
    }
    let extra = a.ex.cuda_extra_env()?;
    let (real_extra, dropped) = for_real_device(&extra);
    Ok(Plan { cmds, needs_cuda, real, simtwin, extra, real_extra, dropped })
}

/// The timed runs: per command and round, t(2) and t(N) in seconds.
struct Timing {
    /// times[cmd][round] = (t2, tN).
    times: Vec<Vec<(f64, f64)>>,
    /// Every timed run, in the order it ran (bench.csv).
    csv: csv::Writer<Vec<u8>>,
    /// Labels in run order, e.g. A2 B2 AN BN B2 A2 ...
    order_log: Vec<String>,
    /// Whether each emulated command's counters showed a kernel launch.
    launched: Vec<bool>,
    /// kernel_ns[cmd][round]: each kernel's run time in the round's two runs.
    kernel_ns: Vec<Vec<RoundKernels>>,
    /// Each emulated command's kernels' thread paths (the module notes).
    paths: Vec<BTreeMap<String, String>>,
}

/// Runs every command R rounds at 2 and N frames, interleaved: A2 B2 AN BN in even
/// rounds, B2 A2 BN AN in odd ones, so that all see the same machine load. Before the
/// rounds each command runs `--warmup` times at 2 frames, untimed: the first run of a
/// command on the emulated driver may fill the PTX JIT cache (seconds of compiling,
/// which once made a round's estimate negative), and the first read of the clips fills
/// the page cache.
fn time_rounds(a: &BenchArgs, out: &std::path::Path, plan: &Plan) -> Result<Timing> {
    let cmds = &plan.cmds;
    let total = (a.rounds as u64 * 2 + a.warmup as u64) * cmds.len() as u64;
    let pb = indicatif::ProgressBar::new(total);
    pb.set_style(indicatif::ProgressStyle::with_template("{spinner} [{pos}/{len}] {elapsed:>4} {msg}").unwrap());
    pb.enable_steady_tick(std::time::Duration::from_millis(120));
    let mut t = Timing {
        times: vec![vec![(0.0f64, 0.0f64); a.rounds as usize]; cmds.len()],
        csv: csv::Writer::from_writer(Vec::new()),
        order_log: Vec::new(),
        launched: vec![false; cmds.len()],
        kernel_ns: vec![vec![Default::default(); a.rounds as usize]; cmds.len()],
        paths: vec![BTreeMap::new(); cmds.len()],
    };
    t.csv.write_record(["command", "round", "order", "frames", "seconds"])?;
    // One run of command `ci` at `n` frames; its counters under counts/TAG. Returns its
    // time and its kernels' run times (the emulated driver's counters).
    let run_one = |t: &mut Timing, ci: usize, n: u64, tag: &str, what: &str| -> Result<(f64, BTreeMap<String, u64>)> {
        let c = &cmds[ci];
        let o = out.join(format!("{}-n{n}.out", c.label));
        let mut env = Vec::new();
        let mut cdir = None;
        match (c.device, &plan.simtwin) {
            (Some("emulated"), Some(st)) => {
                let d = out.join("counts").join(format!("{}-{tag}-n{n}", c.label));
                let pattern = prepare_dir(&d)?;
                env = emulated_env(st, a.ex.kernels.as_deref(), &pattern)?.vars;
                env.extend(plan.extra.clone());
                cdir = Some(d);
            }
            // The real device: the system's driver as the loader finds it, nothing of simtwin's.
            (Some(_), _) => env = plan.real_extra.clone(),
            _ => {}
        }
        let argv = template::expand(&c.template, &a.ex.vars(&a.clip.clip()?, n, &o, c.backend, c.features.as_deref()))?;
        pb.set_message(format!("{what} {} n={n}: {}", c.label, template::display(&argv)));
        let res = run::run(&Spec {
            label: format!("{}-n{n}", c.label),
            argv,
            env,
            log_dir: out.join("logs"),
            spinner: false,
            timeout: a.ex.timeout(),
        })?;
        whole_run(&o, n, &c.label)?;
        let mut run_ns = BTreeMap::new();
        if let Some(d) = cdir {
            let counts = crate::counts::collect(&d)?;
            if counts.total_launches() > 0.0 {
                t.launched[ci] = true;
            }
            run_ns = counts.run_ns();
            t.paths[ci].extend(counts.thread_paths());
        }
        pb.inc(1);
        Ok((res.elapsed.as_secs_f64(), run_ns))
    };
    for w in 0..a.warmup as usize {
        for ci in 0..cmds.len() {
            run_one(&mut t, ci, 2, &format!("warmup{w}"), &format!("warm-up {}", w + 1))?;
        }
    }
    for r in 0..a.rounds as usize {
        let mut order: Vec<usize> = (0..cmds.len()).collect();
        if r % 2 == 1 {
            order.reverse();
        }
        for n in [2u64, a.frames] {
            for &ci in &order {
                let (s, ns) = run_one(&mut t, ci, n, &format!("r{r}"), &format!("round {}", r + 1))?;
                if n == 2 {
                    t.times[ci][r].0 = s;
                    t.kernel_ns[ci][r].0 = ns;
                } else {
                    t.times[ci][r].1 = s;
                    t.kernel_ns[ci][r].1 = ns;
                }
                t.order_log.push(format!("{}{}", cmds[ci].label, n));
                t.csv.write_record([
                    cmds[ci].label.to_string(),
                    r.to_string(),
                    t.order_log.len().to_string(),
                    n.to_string(),
                    format!("{s:.6}"),
                ])?;
            }
        }
    }
    pb.finish_and_clear();
    Ok(t)
}

/// The estimates (median over rounds of (t(N) - t(2)) / (N - 2)), the ratios, and
/// bench.csv / bench.md / bench.json, written only now that every run is done.
fn write_reports(a: &BenchArgs, out: &std::path::Path, plan: &Plan, timing: Timing) -> Result<()> {
    let (cmds, times) = (&plan.cmds, &timing.times);
    let mut results = Vec::new();
    let mut sections = Vec::new();
    let mut md = String::new();
    let _ = writeln!(
        md,
        "# parity bench\n\nms per frame = (t({}) - t(2)) / ({} - 2), median of {} rounds, after {} untimed warm-up run{} of each command at 2 frames; runs interleaved: {}\n",
        a.frames,
        a.frames,
        a.rounds,
        a.warmup,
        if a.warmup == 1 { "" } else { "s" },
        timing.order_log.join(" ")
    );
    let _ = writeln!(md, "| command | ms/frame (median) | per round | t(2) median s | t(N) median s | flags |\n|---|---|---|---|---|---|");
    for (ci, c) in cmds.iter().enumerate() {
        let est: Vec<f64> = times[ci].iter().map(|(t2, tn)| (tn - t2) * 1000.0 / (a.frames - 2) as f64).collect();
        let m = median(&est);
        let t2m = median(&times[ci].iter().map(|x| x.0).collect::<Vec<_>>());
        let tnm = median(&times[ci].iter().map(|x| x.1).collect::<Vec<_>>());
        println!(
            "{}: {:.3} ms/frame (rounds: {}), t(2) {:.3} s, t({}) {:.3} s; {}",
            c.label,
            m,
            est.iter().map(|x| format!("{x:.3}")).collect::<Vec<_>>().join(" "),
            t2m,
            a.frames,
            tnm,
            c.note
        );
        let _ = writeln!(
            md,
            "| {} | {:.3} | {} | {:.4} | {:.4} | {} |",
            c.label,
            m,
            est.iter().map(|x| format!("{x:.3}")).collect::<Vec<_>>().join(", "),
            t2m,
            tnm,
            c.note
        );
        let kernels = kernel_times(&timing.kernel_ns[ci], &timing.paths[ci], a.frames);
        results.push(json!({"label": c.label, "flags": c.note, "backend": c.backend.name(), "device": c.device, "features": c.features,
            "ms_per_frame": m, "ms_per_frame_rounds": est, "t2_s": times[ci].iter().map(|x| x.0).collect::<Vec<_>>(),
            "tn_s": times[ci].iter().map(|x| x.1).collect::<Vec<_>>(),
            "kernels_ms_per_frame": (!kernels.is_empty()).then(|| kernels.iter().map(|k| k.ms).sum::<f64>()),
            "kernels": kernels.iter().map(|k| json!({"kernel": k.name, "ms_per_frame": k.ms, "path": k.path})).collect::<Vec<_>>()}));
        sections.push((c.label.to_string(), m, kernels));
    }
    for (label, m, kernels) in &sections {
        kernel_md(&mut md, label, *m, kernels);
    }
    let ms = |i: usize| results[i]["ms_per_frame"].as_f64().unwrap_or(f64::NAN);
    let ratio = if results.len() == 2 {
        let r = ms(1) / ms(0);
        println!("ratio B/A: {r:.3}");
        let _ = writeln!(md, "\nratio B/A: **{r:.3}**");
        Some(r)
    } else {
        None
    };
    // With more than two commands (--device both): each against the first.
    let ratios: Vec<serde_json::Value> = if results.len() > 2 {
        let _ = writeln!(md, "\n| command | ms/frame / {} |\n|---|---|", cmds[0].label);
        (1..results.len())
            .map(|i| {
                let r = ms(i) / ms(0);
                println!("ratio {}/{}: {r:.3}", cmds[i].label, cmds[0].label);
                let _ = writeln!(md, "| {} | {r:.3} |", cmds[i].label);
                json!({"command": cmds[i].label, "over": cmds[0].label, "ratio": r})
            })
            .collect()
    } else {
        vec![]
    };
    if cmds.iter().any(|c| c.device == Some("emulated")) {
        let _ = writeln!(md, "\nCommands on the emulated driver: their times measure the emulation on this machine's CPU, not a GPU.");
    }
    if let Some(r) = &plan.real {
        let _ = writeln!(md, "\nCommands on the real device ran on the system's driver {} directly ({} device(s)); an untimed run through simtwin's pass-through proved that each launches kernels there.", r.path, r.devices);
        if !plan.dropped.is_empty() {
            let _ = writeln!(md, "Not given to the real device (emulated driver only): {}.", plan.dropped.join(" "));
        }
    }
    let summary = json!({"schema": "simtwin-bench/1", "frames": a.frames, "rounds": a.rounds, "order": timing.order_log,
        "device": if plan.needs_cuda { a.device.name() } else { "none" },
        "real_driver": plan.real.as_ref().map(|r| r.path.clone()),
        "commands": results, "ratio_b_over_a": ratio, "ratios": ratios});
    report::write_atomic(&out.join("bench.csv"), timing.csv.into_inner().map_err(|e| anyhow::anyhow!("{e}"))?)?;
    report::write_atomic(&out.join("bench.md"), md)?;
    report::write_json(&out.join("bench.json"), &summary)?;
    Ok(())
}

/// A round's kernel run times (ns by kernel) in its 2-frame and its N-frame run, from the
/// emulated driver's counters (empty elsewhere).
type RoundKernels = (BTreeMap<String, u64>, BTreeMap<String, u64>);

/// One kernel's share of an emulated command's frame.
struct KernelTime {
    name: String,
    /// Its run time per frame, ms: the median over rounds of (ns(N) - ns(2)) / (N - 2).
    ms: f64,
    /// The path its threads take in PTX mode (module notes), where one is given.
    path: Option<String>,
}

/// Where an emulated command's frame goes, by kernel (longest first), the way a frame's
/// time is estimated: the emulated driver's run time of each kernel in the N-frame run
/// less the 2-frame run's, over N - 2 frames, the median over rounds. Empty where no run
/// was timed (not emulated, or a driver without `run_ns`).
fn kernel_times(rounds: &[RoundKernels], paths: &BTreeMap<String, String>, frames: u64) -> Vec<KernelTime> {
    let names: std::collections::BTreeSet<&String> = rounds.iter().flat_map(|(a, b)| a.keys().chain(b.keys())).collect();
    let mut out: Vec<KernelTime> = names
        .into_iter()
        .map(|k| {
            let per: Vec<f64> = rounds
                .iter()
                .map(|(t2, tn)| (*tn.get(k).unwrap_or(&0) as f64 - *t2.get(k).unwrap_or(&0) as f64) / 1e6 / (frames - 2) as f64)
                .collect();
            KernelTime { name: k.clone(), ms: median(&per), path: paths.get(k).cloned() }
        })
        .collect();
    out.sort_by(|a, b| b.ms.total_cmp(&a.ms).then(a.name.cmp(&b.name)));
    out
}

/// bench.md's table of where command `label`'s frame (`ms` per frame) goes by kernel.
fn kernel_md(md: &mut String, label: &str, ms: f64, kernels: &[KernelTime]) {
    if kernels.is_empty() {
        return;
    }
    let total: f64 = kernels.iter().map(|k| k.ms).sum();
    // The kernels' run times come from the driver's own clock per launch; the frame's from
    // the whole runs' wall times, which a busy machine spreads far more: where the kernels
    // come out above the frame, shares are of the kernels' time and the text says why.
    let (base, what) = if total <= ms {
        let _ = writeln!(
            md,
            "\nWhere {label}'s frame goes on the emulated driver: {total:.3} ms of its {ms:.3} ms per frame in kernels ({:.0}%; the executor's time per launch, the counters' `run_ns`); the rest is the program's host code, copies and the driver's other calls.",
            100.0 * total / ms
        );
        (ms, "share of the frame")
    } else {
        let _ = writeln!(
            md,
            "\nWhere {label}'s frame goes on the emulated driver: {total:.3} ms per frame in kernels (the executor's time per launch, the counters' `run_ns`), more than the frame's {ms:.3} ms: the runs' wall times spread (see the rounds), the kernels' own clock much less.",
        );
        (total, "share of the kernels' time")
    };
    let _ = writeln!(md, "\n| kernel | ms/frame | {what} | path of its threads |\n|---|---|---|---|");
    for k in kernels {
        let _ = writeln!(md, "| {} | {:.3} | {:.0}% | {} |", k.name, k.ms, 100.0 * k.ms / base, k.path.as_deref().unwrap_or("-"));
    }
}

/// A run's output, where it is one parity reads (VMAF's JSON, XML or CSV), must hold the
/// `n` frames asked for: a program that fails part-way and still exits 0 (VMAF's CLI after
/// a failed driver call: "problem reading pictures", no frames) would otherwise be timed
/// as if it had done the work. Outputs in other formats are the command's own business.
fn whole_run(out: &std::path::Path, n: u64, label: &str) -> Result<()> {
    let Ok(meta) = std::fs::metadata(out) else { return Ok(()) };
    if !meta.is_file() {
        return Ok(());
    }
    let bytes = crate::input::read(out, "output file")?;
    let text = String::from_utf8_lossy(&bytes);
    if crate::output::detect(&text).is_none() {
        return Ok(());
    }
    let got = match crate::output::parse(&text, &out.display().to_string()) {
        Ok(t) => t.frames.len() as u64,
        Err(e) => bail!("bench {label}: the run at {n} frames wrote no usable output, so its time measures no work: {e:#}"),
    };
    if got != n {
        bail!(
            "bench {label}: the run at {n} frames wrote {got} frame{} to {} (see its logs): its time would not measure {n} frames",
            if got == 1 { "" } else { "s" },
            out.display()
        );
    }
    Ok(())
}

/// One untimed run of a CUDA command on the real device through simtwin's pass-through:
/// its counters must show kernel launches (the timed runs then use the system's driver
/// directly, with nothing of simtwin's in the way).
fn prove_real(
    a: &BenchArgs,
    out: &std::path::Path,
    real: &RealDevice,
    simtwin: &std::path::Path,
    c: &Cmd,
    extra: &[(String, String)],
) -> Result<()> {
    let d = out.join("counts").join(format!("{}-proof", c.label));
    let pattern = prepare_dir(&d)?;
    let mut env = real.env(simtwin, a.ex.kernels.as_deref(), &pattern)?.vars;
    env.extend(extra.iter().cloned());
    let o = out.join(format!("{}-proof.out", c.label));
    let argv = template::expand(&c.template, &a.ex.vars(&a.clip.clip()?, 2, &o, c.backend, c.features.as_deref()))?;
    eprintln!("parity: bench {}: proof run through the pass-through\n  $ {}", c.label, template::display(&argv));
    run::run(&Spec { label: format!("{}-proof", c.label), argv, env, log_dir: out.join("logs"), spinner: false, timeout: a.ex.timeout() })?;
    let counts = crate::counts::collect(&d)?;
    if counts.files.is_empty() {
        bail!(
            "bench {}: simtwin's pass-through wrote no counters file into {}: the command did not load simtwin's libcuda.so.1",
            c.label,
            d.display()
        );
    }
    if counts.total_launches() == 0.0 {
        bail!("bench {}: the CUDA command launched no kernel on the real device (a CPU fallback?)", c.label);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ns(v: &[(&str, u64)]) -> BTreeMap<String, u64> {
        v.iter().map(|&(k, n)| (k.to_string(), n)).collect()
    }

    #[test]
    fn kernel_times_are_medians_of_the_n_less_2_frame_difference_and_the_text_says_whose_share() {
        // Three rounds at N = 6: per frame (tN - t2) / 4 ms; hori 2, 3, 2.5 -> median 2.5;
        // vert appears only in the 6-frame runs of two rounds: 1, 0, 1 -> 1.
        let rounds = vec![
            (ns(&[("hori", 2_000_000)]), ns(&[("hori", 10_000_000), ("vert", 4_000_000)])),
            (ns(&[("hori", 2_000_000)]), ns(&[("hori", 14_000_000)])),
            (ns(&[("hori", 2_000_000), ("vert", 1_000_000)]), ns(&[("hori", 12_000_000), ("vert", 5_000_000)])),
        ];
        let paths: BTreeMap<String, String> = [("hori".to_string(), "loops over threads".to_string())].into();
        let k = kernel_times(&rounds, &paths, 6);
        let got: Vec<(&str, f64, Option<&str>)> = k.iter().map(|k| (k.name.as_str(), k.ms, k.path.as_deref())).collect();
        assert_eq!(got, [("hori", 2.5, Some("loops over threads")), ("vert", 1.0, None)]);
        let mut md = String::new();
        kernel_md(&mut md, "A", 5.0, &k);
        assert!(md.contains("3.500 ms of its 5.000 ms per frame in kernels (70%"), "{md}");
        assert!(md.contains("| hori | 2.500 | 50% | loops over threads |") && md.contains("| vert | 1.000 | 20% | - |"), "{md}");
        // A frame estimate below the kernels' own time (wall times spread): shares of the
        // kernels' time, and the text says so.
        let mut md = String::new();
        kernel_md(&mut md, "A", 1.0, &k);
        assert!(md.contains("3.500 ms per frame in kernels") && md.contains("more than the frame's 1.000 ms"), "{md}");
        assert!(md.contains("share of the kernels' time") && md.contains("| hori | 2.500 | 71% |"), "{md}");
        let mut md = String::new();
        kernel_md(&mut md, "A", 5.0, &[]);
        assert!(md.is_empty(), "nothing timed, nothing said");
    }
}
