//! simtwin-fuzz: a coverage-guided fuzzer that runs on the stable toolchain, for every
//! parser of untrusted input in simtwin (module images, PTX, counters, manifests, traces,
//! parity's tables and reports). `scripts/fuzz` builds it instrumented and runs each
//! target for a given time; the test suite runs it as a smoke test.
//!
//! ```text
//! coverage   SanitizerCoverage's hooks: edge counters -> features; comparison operands
//! mutate     the mutator (bit, byte, integer, range, splice, line, dictionary, comparison)
//! crash      panics, signals, time and memory limits -> an artifact file, exit 1
//! (main.rs)  the command; targets.rs: what each target feeds its input to, its seeds,
//!            its dictionary (in the binary, which scripts/fuzz instruments with the
//!            crates under test; this library, the engine, is not instrumented)
//! ```
//!
//! The loop ([`fuzz`]): every seed is run first; then an input of the corpus is picked,
//! mutated and run, and kept (in memory and in the corpus directory) if it showed a
//! feature no input showed before. Targets run in this process (no fork per input); a
//! panic is caught, and a signal, a run past the time limit or an allocation past the
//! limit ends the process after writing the input.

#![warn(missing_docs)]

pub mod coverage;
pub mod crash;
pub mod mutate;

pub use crash::{LimitedAlloc, Limits};

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// One fuzz target.
pub struct Target {
    /// Its name (`scripts/fuzz NAME`).
    pub name: &'static str,
    /// What it feeds its input to.
    pub about: &'static str,
    /// Runs one input. Any panic is a finding; errors returned by the code under test
    /// are expected and ignored.
    pub run: fn(&[u8]),
    /// Files and directories (relative to the repository) whose files are its seeds.
    pub seed_paths: &'static [&'static str],
    /// Seeds made by the project's own writers (formats with no file in the repository).
    pub seeds: fn() -> Vec<Vec<u8>>,
    /// Tokens the mutator inserts: magic numbers, keywords.
    pub dict: &'static [&'static [u8]],
    /// Not run by default (the planted crash that proves the fuzzer finds one).
    pub hidden: bool,
}

/// How to fuzz.
#[derive(Clone, Debug)]
pub struct Config {
    /// Stop after this long.
    pub time: Duration,
    /// Or after this many runs.
    pub max_runs: Option<u64>,
    /// The random seed (runs with the same seed, corpus and build are the same).
    pub seed: u64,
    /// Inputs are never longer.
    pub max_len: usize,
    /// Where new inputs are kept (and read back next time), if anywhere.
    pub corpus_dir: Option<PathBuf>,
    /// Where a finding's input is written.
    pub artifacts: PathBuf,
    /// Extra dictionary tokens.
    pub dict: Vec<Vec<u8>>,
    /// Time and memory limits.
    pub limits: Limits,
}

/// What a fuzzing session did.
#[derive(Clone, Debug, Default)]
pub struct Stats {
    /// Inputs run.
    pub runs: u64,
    /// Wall time.
    pub seconds: f64,
    /// Instrumented edges in the build (0: not instrumented, blind mutation).
    pub edges_total: usize,
    /// Edges reached.
    pub edges: usize,
    /// Features (edge, hit-count bucket) seen.
    pub features: usize,
    /// Inputs in the corpus at the end.
    pub corpus: usize,
    /// Of those, found in this session.
    pub new_inputs: usize,
    /// Seeds run at the start.
    pub seeds: usize,
}

/// The end of a session.
#[derive(Debug)]
pub enum Outcome {
    /// Time or runs ran out and nothing failed.
    Clean(Stats),
    /// A run panicked: the message, the artifact written, the statistics so far.
    Crash {
        /// The panic's message and place.
        message: String,
        /// The input, written to the artifacts directory.
        artifact: PathBuf,
        /// Statistics up to the crash.
        stats: Stats,
    },
}

/// Runs one input, as the loop does; the panic message if it panicked.
fn exec(t: &Target, data: &[u8]) -> Option<String> {
    crash::begin(data);
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| (t.run)(data)));
    let msg = crash::end();
    match (r, msg) {
        (_, Some(m)) => Some(m),
        (Err(_), None) => Some("panic".into()),
        (Ok(()), None) => None,
    }
}

/// Writes a finding's input; its path.
fn write_artifact(dir: &Path, kind: &str, data: &[u8]) -> PathBuf {
    let _ = std::fs::create_dir_all(dir);
    let p = dir.join(format!("{kind}-{:016x}", crash::fnv(data)));
    if let Err(e) = std::fs::write(&p, data) {
        eprintln!("simtwin-fuzz: cannot write {}: {e}", p.display());
    }
    p
}

/// Reads every file under `p` (a file or a directory, recursively), sorted by path.
pub fn read_inputs(p: &Path, out: &mut Vec<Vec<u8>>, max_len: usize) {
    let mut files = Vec::new();
    fn walk(p: &Path, files: &mut Vec<PathBuf>) {
        let Ok(md) = std::fs::symlink_metadata(p) else { return };
        if md.is_dir() {
            if let Ok(rd) = std::fs::read_dir(p) {
                for e in rd.flatten() {
                    walk(&e.path(), files);
                }
            }
        } else if md.is_file() {
            files.push(p.to_path_buf());
        }
    }
    walk(p, &mut files);
    files.sort();
    for f in files {
        if let Ok(d) = std::fs::read(&f) {
            if d.len() <= max_len {
                out.push(d);
            }
        }
    }
}

/// The seeds of `t`: its files under `root`, its generated seeds.
pub fn seeds(t: &Target, root: &Path, max_len: usize) -> Vec<Vec<u8>> {
    let mut v = Vec::new();
    for p in t.seed_paths {
        read_inputs(&root.join(p), &mut v, max_len);
    }
    v.extend((t.seeds)().into_iter().filter(|s| s.len() <= max_len));
    v
}

/// Fuzzes `t` from `seeds` (and the corpus directory's inputs) until the time or run
/// budget is spent or a run fails. A panic returns [`Outcome::Crash`]; a signal, a
/// timeout or an allocation past the limit ends the process with status 1 (after writing
/// the input and saying so).
pub fn fuzz(t: &Target, cfg: &Config, mut seeds: Vec<Vec<u8>>) -> Outcome {
    let t0 = Instant::now();
    let _ = std::fs::create_dir_all(&cfg.artifacts);
    crash::install(t.name, &cfg.artifacts, cfg.limits);
    if let Some(dir) = &cfg.corpus_dir {
        let _ = std::fs::create_dir_all(dir);
        read_inputs(dir, &mut seeds, cfg.max_len);
    }
    let mut cov = coverage::Coverage::new();
    let instrumented = cov.edges_total() > 0;
    let mut dict: Vec<Vec<u8>> = t.dict.iter().map(|d| d.to_vec()).collect();
    dict.extend(cfg.dict.iter().cloned());
    let m = mutate::Mutator { dict, max_len: cfg.max_len };
    let mut rng = mutate::Rng::new(cfg.seed);
    let mut stats = Stats { edges_total: cov.edges_total(), seeds: seeds.len(), ..Stats::default() };
    let mut corpus: Vec<Vec<u8>> = Vec::new();
    let crash = |data: &[u8], message: String, mut stats: Stats, cov: &coverage::Coverage, corpus: usize| {
        stats.seconds = t0.elapsed().as_secs_f64();
        stats.edges = cov.edges();
        stats.features = cov.features();
        stats.corpus = corpus;
        Outcome::Crash { message, artifact: write_artifact(&cfg.artifacts, "crash", data), stats }
    };
    // Seeds first: each is kept if it shows something new (all are kept when blind).
    cov.clear();
    for s in seeds {
        stats.runs += 1;
        if let Some(msg) = exec(t, &s) {
            return crash(&s, msg, stats, &cov, corpus.len());
        }
        if cov.collect() > 0 || !instrumented {
            corpus.push(s);
        }
    }
    if corpus.is_empty() {
        corpus.push(Vec::new());
    }
    let mut input = Vec::with_capacity(cfg.max_len);
    loop {
        if stats.runs.is_multiple_of(64) && (t0.elapsed() >= cfg.time || cfg.max_runs.is_some_and(|n| stats.runs >= n)) {
            break;
        }
        // Recent finds are picked more often: they are where coverage is growing.
        let n = corpus.len();
        let i = if rng.one_in(3) { n - 1 - rng.below(n.min(64)) } else { rng.below(n) };
        let j = rng.below(n);
        m.mutate(&mut rng, &corpus[i], &corpus[j], &mut input);
        stats.runs += 1;
        if let Some(msg) = exec(t, &input) {
            return crash(&input, msg, stats, &cov, corpus.len());
        }
        if cov.collect() > 0 {
            if let Some(dir) = &cfg.corpus_dir {
                let _ = std::fs::write(dir.join(format!("{:016x}", crash::fnv(&input))), &input);
            }
            stats.new_inputs += 1;
            corpus.push(input.clone());
        }
    }
    stats.seconds = t0.elapsed().as_secs_f64();
    stats.edges = cov.edges();
    stats.features = cov.features();
    stats.corpus = corpus.len();
    Outcome::Clean(stats)
}

/// Runs each input once (a finding's reproduction, a regression corpus): the panic
/// messages, by input index. Signals end the process as in [`fuzz`].
pub fn check(t: &Target, artifacts: &Path, limits: Limits, inputs: &[Vec<u8>]) -> Vec<(usize, String)> {
    crash::install(t.name, artifacts, limits);
    inputs.iter().enumerate().filter_map(|(i, d)| exec(t, d).map(|m| (i, m))).collect()
}
