//! `simtwin-fuzz`: the command `scripts/fuzz` runs (see the crate's documentation).

mod targets;

use simtwin_fuzz::{Config, LimitedAlloc, Limits, Outcome};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

#[global_allocator]
static ALLOC: LimitedAlloc = LimitedAlloc;

const USAGE: &str = "\
usage: simtwin-fuzz list
       simtwin-fuzz run TARGET [--seconds S] [--runs N] [--seed N] [--corpus DIR] [--artifacts DIR]
                               [--dict TOKEN]... [--max-len BYTES] [--timeout S] [--rss-limit-mb MB]
                               [--malloc-limit-mb MB] [--root DIR]
       simtwin-fuzz check TARGET FILE|DIR...

run: fuzzes TARGET (seeds: its files in the repository at --root, the corpus directory)
for S seconds (default 60) or N runs; exit 0 and a line of statistics, or exit 1 with
the input that failed written to the artifacts directory (default target/fuzz/artifacts/TARGET).
check: runs each input once; exit 1 if any fails. Exit 2: usage.";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("list") => {
            for t in targets::TARGETS {
                println!("{:10} {}{}", t.name, t.about, if t.hidden { " (not run by default)" } else { "" });
            }
            ExitCode::SUCCESS
        }
        Some("run") => run(&args[1..]),
        Some("check") => check(&args[1..]),
        _ => usage("a command: list, run or check"),
    }
}

fn usage(why: &str) -> ExitCode {
    eprintln!("simtwin-fuzz: expected {why}\n{USAGE}");
    ExitCode::from(2)
}

fn root() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/.."))
}

fn run(args: &[String]) -> ExitCode {
    let Some(t) = args.first().and_then(|n| targets::find(n)) else {
        return usage(&format!("a target (simtwin-fuzz list), not {:?}", args.first().map(String::as_str).unwrap_or("")));
    };
    let mut root = root();
    let mut cfg = Config {
        time: Duration::from_secs(60),
        max_runs: None,
        seed: 1,
        max_len: 256 << 10,
        corpus_dir: None,
        artifacts: root.join("target/fuzz/artifacts").join(t.name),
        dict: Vec::new(),
        limits: Limits { timeout: Duration::from_secs(10), rss_bytes: 4 << 30, malloc_bytes: 2 << 30 },
    };
    let mut corpus_given = false;
    let mut i = 1;
    while i < args.len() {
        let flag = args[i].as_str();
        let Some(v) = args.get(i + 1) else { return usage(&format!("a value after {flag}")) };
        let num = |v: &str| v.parse::<u64>().ok();
        let ok = match flag {
            "--seconds" => {
                v.parse::<f64>().ok().filter(|s| *s > 0.0 && s.is_finite()).map(|s| cfg.time = Duration::from_secs_f64(s)).is_some()
            }
            "--runs" => num(v).map(|n| cfg.max_runs = Some(n)).is_some(),
            "--seed" => num(v).map(|n| cfg.seed = n).is_some(),
            "--max-len" => num(v).filter(|n| *n > 0).map(|n| cfg.max_len = n as usize).is_some(),
            "--timeout" => v
                .parse::<f64>()
                .ok()
                .filter(|s| *s > 0.0 && s.is_finite())
                .map(|s| cfg.limits.timeout = Duration::from_secs_f64(s))
                .is_some(),
            "--rss-limit-mb" => num(v).filter(|n| *n > 0).map(|n| cfg.limits.rss_bytes = n << 20).is_some(),
            "--malloc-limit-mb" => num(v).filter(|n| *n > 0).map(|n| cfg.limits.malloc_bytes = n << 20).is_some(),
            "--corpus" => {
                cfg.corpus_dir = Some(PathBuf::from(v));
                corpus_given = true;
                true
            }
            "--artifacts" => {
                cfg.artifacts = PathBuf::from(v);
                true
            }
            "--dict" => {
                cfg.dict.push(v.as_bytes().to_vec());
                true
            }
            "--root" => {
                root = PathBuf::from(v);
                true
            }
            _ => return usage(&format!("an option, not {flag:?}")),
        };
        if !ok {
            return usage(&format!("a positive number after {flag}, not {v:?}"));
        }
        i += 2;
    }
    if !corpus_given {
        cfg.corpus_dir = Some(root.join("target/fuzz/corpus").join(t.name));
    }
    let seeds = simtwin_fuzz::seeds(t, &root, cfg.max_len);
    if seeds.is_empty() && !t.hidden {
        eprintln!("simtwin-fuzz: no seeds for {} under {} (is --root the repository?)", t.name, root.display());
        return ExitCode::from(2);
    }
    match simtwin_fuzz::fuzz(t, &cfg, seeds) {
        Outcome::Clean(s) => {
            let cov = if s.edges_total > 0 {
                format!("coverage {} of {} edges ({} features)", s.edges, s.edges_total, s.features)
            } else {
                "no coverage instrumentation (blind mutation: build with scripts/fuzz)".to_string()
            };
            println!(
                "fuzz {}: {} runs in {:.0} s ({:.0}/s), {cov}, corpus {} inputs ({} seeds, {} new), no crash",
                t.name,
                s.runs,
                s.seconds,
                s.runs as f64 / s.seconds.max(1e-9),
                s.corpus,
                s.seeds,
                s.new_inputs
            );
            ExitCode::SUCCESS
        }
        Outcome::Crash { message, artifact, stats } => {
            eprintln!(
                "fuzz {}: CRASH ({message}) in run {} after {:.1} s; the input ({} bytes) is in {}\nreproduce: simtwin-fuzz check {} {}",
                t.name,
                stats.runs,
                stats.seconds,
                std::fs::metadata(&artifact).map(|m| m.len()).unwrap_or(0),
                artifact.display(),
                t.name,
                artifact.display()
            );
            ExitCode::from(1)
        }
    }
}

fn check(args: &[String]) -> ExitCode {
    let Some(t) = args.first().and_then(|n| targets::find(n)) else { return usage("a target and files") };
    if args.len() < 2 {
        return usage("files or directories to check");
    }
    let mut inputs = Vec::new();
    let mut names = Vec::new();
    for a in &args[1..] {
        let before = inputs.len();
        simtwin_fuzz::read_inputs(std::path::Path::new(a), &mut inputs, usize::MAX);
        if inputs.len() == before {
            eprintln!("simtwin-fuzz: {a}: no file to check");
            return ExitCode::from(2);
        }
        names.extend(std::iter::repeat_n(a.clone(), inputs.len() - before));
    }
    let limits = Limits { timeout: Duration::from_secs(10), rss_bytes: 4 << 30, malloc_bytes: 2 << 30 };
    let fails = simtwin_fuzz::check(t, &std::env::temp_dir(), limits, &inputs);
    for (i, m) in &fails {
        eprintln!("fuzz {}: {} (input {i} of {}): {m}", t.name, names[*i], inputs.len());
    }
    println!("fuzz {}: {} inputs checked, {} failed", t.name, inputs.len(), fails.len());
    if fails.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}
