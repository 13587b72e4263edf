//! The emulated driver's counters files (one per process through EMU_CUDA_COUNTS with
//! `%p`), read with the one typed reader of the contract, [`simtwin_abi::counters`]
//! (schema `simtwin-counts/2`), summed over every process of one run
//! ([`Counters::merge`]) and flattened into `key -> value` ([`Counters::flatten`]):
//! `calls.<entry point>`, `copies.<HtoD|DtoH|DtoD|HtoH>.count|bytes`,
//! `memsets.count|bytes`, `allocations.count|bytes|frees`,
//! `launches.<symbol>.count|threads|blocks`, `failed_launches.<symbol>`,
//! `synchronizations`, `hazards` (number of reports), `leaks.<kind>`,
//! `unsupported.<entry point>`, `injected` (number of injected failures).
//!
//! A file that is not valid JSON of that schema is an error (exit code 2) naming the
//! file. Files written on a signal or at a checkpoint (the process did not exit
//! normally) are accepted and reported by [`Counts::unclean`].

use anyhow::{bail, Result};
use serde::Deserialize;
pub use simtwin_abi::counters::{Counters, Hazard, State, SCHEMA};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// One counters file of a run.
#[derive(Debug, Clone)]
pub struct CountsFile {
    pub path: PathBuf,
    pub state: State,
}

/// The counters of one run: every process's file, their sum and its flat form.
#[derive(Debug, Clone, Default)]
pub struct Counts {
    /// The sum of every process's counters.
    pub total: Counters,
    /// `total` flattened (see the module doc).
    pub values: BTreeMap<String, f64>,
    pub files: Vec<CountsFile>,
}

/// The path kernel `k`'s threads take in PTX mode (`loops over threads`, `one after
/// another`, `fibers`, ...), from a module record's notes: "threads of K: PATH: why"
/// (emu-driver `module/ptx.rs`); one after another with the form that runs several at
/// once where the note names one (`vector lanes`, `16 at a time as vectors`).
pub fn thread_path<'a>(notes: impl IntoIterator<Item = &'a String>, k: &str) -> Option<String> {
    let prefix = format!("threads of {k}: ");
    let rest = notes.into_iter().find_map(|n| n.strip_prefix(prefix.as_str()))?;
    let path = rest.split(": ").next()?;
    Some(if rest.contains("; as vectors of 16 threads (`simd`") {
        format!("{path}, 16 at a time as vectors")
    } else if rest.contains("; as vector lanes (") {
        format!("{path}, as vector lanes")
    } else {
        path.to_string()
    })
}

/// How a file's `state` reads in a report.
pub fn describe_state(s: &State) -> String {
    match s {
        State::Exit => "exit".into(),
        State::Signal(sig) => format!("signal {sig} (counts up to the signal)"),
        State::Checkpoint => {
            "checkpoint (the process ended without writing its exit counters, e.g. killed; counts up to its last synchronisation)".into()
        }
    }
}

/// Short name of a state for tables: `exit`, `signal:SIGTERM`, `checkpoint`.
pub fn state_tag(s: &State) -> String {
    match s {
        State::Exit => "exit".into(),
        State::Signal(sig) => format!("signal:{sig}"),
        State::Checkpoint => "checkpoint".into(),
    }
}

/// Only the schema field, to explain why a file of another schema does not parse.
#[derive(Deserialize)]
struct SchemaOnly {
    schema: Option<String>,
}

/// Reads one counters file; errors name the file and, for another version of the
/// schema, say which one was found.
pub fn read_file(path: &Path) -> Result<Counters> {
    parse_file(&crate::input::read_text(path, "counters file")?, path)
}

/// A counters file's text read from `path` (errors name it).
pub fn parse_file(text: &str, path: &Path) -> Result<Counters> {
    match Counters::parse(text) {
        Ok(c) => Ok(c),
        Err(e) => {
            let found = serde_json::from_str::<SchemaOnly>(text).ok().and_then(|s| s.schema);
            match found {
                Some(s) if s != SCHEMA && s.starts_with("simtwin-counts/") => bail!(
                    "{}: counters file of schema {s}, this parity reads {SCHEMA}: the driver that wrote it is not the one built with this parity (rebuild with scripts/build)",
                    path.display()
                ),
                _ => bail!("{}: {e}", path.display()),
            }
        }
    }
}

fn rank(s: &State) -> u8 {
    match s {
        State::Exit => 2,
        State::Signal(_) => 1,
        State::Checkpoint => 0,
    }
}

impl Counts {
    /// Sums the counters of `files` (one per process). Two files of one process (a
    /// checkpoint beside its final file) count once: the most complete one.
    pub fn from_files(paths: &[PathBuf]) -> Result<Counts> {
        let mut by_pid: BTreeMap<u32, (PathBuf, Counters)> = BTreeMap::new();
        for p in paths {
            let c = read_file(p)?;
            match by_pid.get(&c.pid) {
                Some((_, old)) if rank(&old.state) >= rank(&c.state) => {}
                _ => {
                    by_pid.insert(c.pid, (p.clone(), c));
                }
            }
        }
        let mut total = Counters { schema: SCHEMA.into(), ..Default::default() };
        let mut files = Vec::new();
        for (path, c) in by_pid.into_values() {
            total.merge(&c);
            files.push(CountsFile { path, state: c.state.clone() });
        }
        files.sort_by(|a, b| a.path.cmp(&b.path));
        let mut values = total.flatten();
        values.entry("hazards".into()).or_insert(0.0);
        Ok(Counts { total, values, files })
    }

    /// Sums every `*.json` file in `dir` (one per process of the run).
    pub fn read_dir(dir: &Path) -> Result<Counts> {
        let rd = std::fs::read_dir(dir).map_err(|e| anyhow::anyhow!("cannot read counters directory {}: {e}", dir.display()))?;
        let mut paths: Vec<PathBuf> =
            rd.filter_map(|e| e.ok().map(|e| e.path())).filter(|p| p.extension().is_some_and(|x| x == "json")).collect();
        paths.sort();
        Counts::from_files(&paths)
    }

    /// The flat value of key `k`, 0 when absent (for the unit tests).
    #[cfg(test)]
    pub(crate) fn get(&self, k: &str) -> f64 {
        self.values.get(k).copied().unwrap_or(0.0)
    }

    /// The files' paths (for reports).
    pub fn paths(&self) -> Vec<&Path> {
        self.files.iter().map(|f| f.path.as_path()).collect()
    }

    /// Kernel launches by symbol.
    pub fn launches(&self) -> BTreeMap<String, f64> {
        self.total.launches.iter().map(|(k, v)| (k.clone(), v.count as f64)).collect()
    }

    /// Each kernel's run time on the emulated driver in ns (the counters' `run_ns`), for
    /// the kernels that have one.
    pub fn run_ns(&self) -> BTreeMap<String, u64> {
        self.total.launches.iter().filter(|(_, v)| v.run_ns > 0).map(|(k, v)| (k.clone(), v.run_ns)).collect()
    }

    /// The path each launched kernel's threads take in PTX mode, from the module notes.
    pub fn thread_paths(&self) -> BTreeMap<String, String> {
        let notes: Vec<&String> = self.total.modules.iter().flat_map(|m| &m.notes).collect();
        self.total.launches.keys().filter_map(|k| Some((k.clone(), thread_path(notes.iter().copied(), k)?))).collect()
    }

    pub fn total_launches(&self) -> f64 {
        self.total.launches.values().map(|v| v.count as f64).sum()
    }

    pub fn hazards(&self) -> &[Hazard] {
        &self.total.hazards
    }

    /// One line per file that was not written at a clean exit (on a signal, or a
    /// checkpoint left by a process that was killed).
    pub fn unclean(&self) -> Vec<String> {
        self.files
            .iter()
            .filter(|f| f.state != State::Exit)
            .map(|f| {
                format!(
                    "{}: {}",
                    f.path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default(),
                    describe_state(&f.state)
                )
            })
            .collect()
    }

    /// `exit` when every file is from a clean exit, else the least complete state.
    pub fn state(&self) -> State {
        self.files.iter().map(|f| f.state.clone()).min_by_key(rank).unwrap_or(State::Exit)
    }
}

/// The variable `simtwin run` and `simtwin env` set to the directory their counters go
/// to. A tool that gives its children counters files of their own (parity does, one
/// directory per extractor run) copies each run's files there with [`hand_on`], so that
/// the enclosing run's one summary covers every process.
pub const HANDOFF_VAR: &str = "SIMTWIN_COUNTS_DIR";

/// Reads the counters of one run (every `*.json` in `dir`) and hands them on to the
/// enclosing `simtwin run`, if there is one.
pub fn collect(dir: &Path) -> Result<Counts> {
    let c = Counts::read_dir(dir)?;
    hand_on(&c);
    Ok(c)
}

/// Copies the files of `c` into `$SIMTWIN_COUNTS_DIR` (when set, and not the directory
/// they are in), each under a name no other process uses. Best effort: a copy that
/// fails is reported on stderr, never fails the run that produced the counters.
pub fn hand_on(c: &Counts) {
    static SEQ: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let Some(to) = std::env::var_os(HANDOFF_VAR).filter(|v| !v.is_empty()).map(PathBuf::from) else { return };
    for f in &c.files {
        let same_dir = f.path.parent().and_then(|p| std::fs::canonicalize(p).ok()) == std::fs::canonicalize(&to).ok();
        if same_dir {
            continue;
        }
        let n = SEQ.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let name = f.path.file_name().map(|x| x.to_string_lossy().into_owned()).unwrap_or_default();
        let dest = to.join(format!("handed-{}-{n}-{name}", std::process::id()));
        if let Err(e) = std::fs::copy(&f.path, &dest) {
            eprintln!("simtwin: cannot hand {} on to {}: {e}", f.path.display(), dest.display());
        }
    }
}

/// Creates (emptied) `dir` and returns the EMU_CUDA_COUNTS pattern inside it.
pub fn prepare_dir(dir: &Path) -> Result<PathBuf> {
    if dir.exists() {
        std::fs::remove_dir_all(dir).map_err(|e| anyhow::anyhow!("cannot clear {}: {e}", dir.display()))?;
    }
    std::fs::create_dir_all(dir).map_err(|e| anyhow::anyhow!("cannot create {}: {e}", dir.display()))?;
    let abs = std::fs::canonicalize(dir)?;
    Ok(abs.join("counts-%p.json"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_kernel_path_names_the_form_that_runs_several_threads_at_once() {
        let notes: Vec<String> = [
            "threads of a: loops over threads: 1 barrier reached by every thread together",
            "threads of b: one after another: no barrier or warp collective: threads run one after another (no loop); as vector lanes (a row's affine indices below 2^31)",
            "threads of c: one after another: no barrier (a loop, PTX line 9); not as vector lanes: its threads may wait or spin in a loop, PTX line 9; as vectors of 16 threads (`simd`: its loops end alike for every lane, none waits for another)",
            "threads of d: one after another: no barrier; not as vector lanes: x; nor as vectors of 16 threads: call (PTX line 3)",
        ]
        .map(String::from)
        .to_vec();
        let path = |k: &str| thread_path(&notes, k);
        assert_eq!(path("a").as_deref(), Some("loops over threads"));
        assert_eq!(path("b").as_deref(), Some("one after another, as vector lanes"));
        assert_eq!(path("c").as_deref(), Some("one after another, 16 at a time as vectors"));
        assert_eq!(path("d").as_deref(), Some("one after another"));
        assert_eq!(path("e"), None);
    }

    fn write(dir: &Path, name: &str, c: &Counters) -> PathBuf {
        let p = dir.join(name);
        std::fs::write(&p, c.to_text()).unwrap();
        p
    }

    #[test]
    fn sums_processes_and_prefers_the_exit_file_over_a_checkpoint() {
        let d = tempfile::tempdir().unwrap();
        let mut a = Counters::new("emulated");
        a.pid = 10;
        a.calls.insert("cuInit".into(), 1);
        a.launches.insert("k".into(), simtwin_abi::counters::LaunchCount { count: 3, threads: 96, blocks: 3, run_ns: 0 });
        let mut ck = a.clone();
        ck.state = State::Checkpoint;
        ck.calls.insert("cuInit".into(), 1);
        ck.launches.get_mut("k").unwrap().count = 1;
        let mut b = Counters::new("emulated");
        b.pid = 11;
        b.state = State::Signal("SIGTERM".into());
        b.calls.insert("cuInit".into(), 1);
        write(d.path(), "counts-10.json", &a);
        write(d.path(), "counts-10.checkpoint.json", &ck);
        write(d.path(), "counts-11.json", &b);
        std::fs::write(d.path().join("counts-12.json.tmp12"), "half a fi").unwrap();
        let c = Counts::read_dir(d.path()).unwrap();
        assert_eq!(c.files.len(), 2);
        assert_eq!(c.get("calls.cuInit"), 2.0);
        assert_eq!(c.total_launches(), 3.0);
        assert_eq!(c.get("hazards"), 0.0);
        assert_eq!(c.state(), State::Signal("SIGTERM".into()));
        let u = c.unclean();
        assert_eq!(u.len(), 1);
        assert!(u[0].starts_with("counts-11.json: signal SIGTERM"), "{u:?}");
    }

    #[test]
    fn foreign_old_and_malformed_files_are_errors_naming_the_file() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("old.json");
        std::fs::write(&p, r#"{"schema":"simtwin-counts/1","pid":1,"calls":{},"leaks":[]}"#).unwrap();
        let e = format!("{:#}", Counts::from_files(std::slice::from_ref(&p)).unwrap_err());
        assert!(e.contains("old.json") && e.contains("schema simtwin-counts/1") && e.contains("scripts/build"), "{e}");
        std::fs::write(&p, r#"{"schema":"something-else/3"}"#).unwrap();
        let e = format!("{:#}", Counts::from_files(std::slice::from_ref(&p)).unwrap_err());
        assert!(e.contains("old.json") && e.contains("not a simtwin counters file"), "{e}");
        std::fs::write(&p, "{\"schema\": \"simtwin-counts/2\", \"calls\": ").unwrap();
        let e = format!("{:#}", Counts::from_files(std::slice::from_ref(&p)).unwrap_err());
        assert!(e.contains("old.json") && e.contains("malformed"), "{e}");
    }
}
