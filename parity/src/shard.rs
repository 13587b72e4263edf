//! `--shard K/N`: one of N deterministic parts of a long run, for the engines teams
//! already have (a CI matrix, a Slurm job array, a Kubernetes Indexed Job); `parity
//! merge` puts the parts back together ([`crate::merge`]). simtwin schedules nothing.
//!
//! K/N is given on the command line, or read with `--shard auto`: Slurm's
//! SLURM_ARRAY_TASK_ID, _MIN, _STEP and _COUNT (any `--array=A-B[:S]`), or Kubernetes'
//! JOB_COMPLETION_INDEX (0-based; Kubernetes does not tell the count, so it is given:
//! `--shard auto/N`).
//!
//! Each command numbers its units of work the same way in every shard (frames: clips x
//! features x block orders, faults: call sites, replay/libm: the input range), and a shard
//! writes `shard.json` beside its partial reports: the run's key (a hash of everything
//! that decides its results), K/N and the units it ran, so that merge can refuse shards
//! of different runs, missing or duplicated shards.

use anyhow::{bail, Context, Result};
use serde::{Deserialize, Serialize};
use serde_json::Value as Json;
use sha2::{Digest, Sha256};
use std::path::Path;

/// Shard K of N (K from 1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Shard {
    /// K, 1..=N.
    pub index: u32,
    /// N.
    pub count: u32,
}

impl std::fmt::Display for Shard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

fn env_u64(vars: &dyn Fn(&str) -> Option<String>, k: &str) -> std::result::Result<Option<u64>, String> {
    match vars(k) {
        None => Ok(None),
        Some(v) => v.trim().parse::<u64>().map(Some).map_err(|_| format!("{k}={v} is not a number")),
    }
}

/// Parses `K/N`, `auto` or `auto/N` with the given environment (for `--shard`).
pub fn parse_with(s: &str, vars: &dyn Fn(&str) -> Option<String>) -> std::result::Result<Shard, String> {
    let s = s.trim();
    let (k, n) = s.split_once('/').unwrap_or((s, ""));
    let given_n = if n.is_empty() { None } else { Some(n.parse::<u32>().map_err(|_| format!("--shard {s}: N must be a number"))?) };
    let shard = if k == "auto" {
        auto(vars, given_n).map_err(|e| format!("--shard {s}: {e}"))?
    } else {
        let k: u32 = k.parse().map_err(|_| format!("--shard {s}: expected K/N (e.g. 2/8), auto or auto/N"))?;
        let n = given_n.ok_or_else(|| format!("--shard {s}: expected K/N (e.g. 2/8), auto or auto/N"))?;
        Shard { index: k, count: n }
    };
    if shard.count == 0 || shard.index == 0 || shard.index > shard.count {
        return Err(format!("--shard {s}: K must be 1..N and N at least 1 (got {shard})"));
    }
    Ok(shard)
}

/// `--shard`'s value parser (the process environment).
pub fn parse(s: &str) -> std::result::Result<Shard, String> {
    parse_with(s, &|k| std::env::var(k).ok())
}

fn auto(vars: &dyn Fn(&str) -> Option<String>, given_n: Option<u32>) -> std::result::Result<Shard, String> {
    if let Some(id) = env_u64(vars, "SLURM_ARRAY_TASK_ID")? {
        let count = env_u64(vars, "SLURM_ARRAY_TASK_COUNT")?.ok_or("SLURM_ARRAY_TASK_ID is set but SLURM_ARRAY_TASK_COUNT is not")?;
        let min = env_u64(vars, "SLURM_ARRAY_TASK_MIN")?.unwrap_or(0);
        let step = env_u64(vars, "SLURM_ARRAY_TASK_STEP")?.unwrap_or(1).max(1);
        if id < min || (id - min) % step != 0 || (id - min) / step >= count {
            return Err(format!(
                "the Slurm array task {id} is not one of {count} tasks from {min} in steps of {step} (an array given as a list?): pass --shard K/N"
            ));
        }
        let k = ((id - min) / step + 1) as u32;
        if given_n.is_some_and(|n| n as u64 != count) {
            return Err(format!("N is {} but the Slurm array has {count} tasks", given_n.unwrap_or(0)));
        }
        return Ok(Shard { index: k, count: count as u32 });
    }
    if let Some(i) = env_u64(vars, "JOB_COMPLETION_INDEX")? {
        let n =
            given_n.ok_or("JOB_COMPLETION_INDEX is set, but Kubernetes does not give the number of completions: pass --shard auto/N")?;
        return Ok(Shard { index: i as u32 + 1, count: n });
    }
    Err("neither SLURM_ARRAY_TASK_ID (a Slurm job array) nor JOB_COMPLETION_INDEX (a Kubernetes Indexed Job) is set: pass --shard K/N"
        .into())
}

impl Shard {
    /// Whether unit `i` (0-based, in the run's order) is this shard's: units are dealt
    /// round robin, so that neighbours (a slow clip's features) spread over shards.
    pub fn owns(&self, i: usize) -> bool {
        i % self.count as usize == (self.index - 1) as usize
    }

    /// This shard's part of the range [from, to): N contiguous parts as equal as they
    /// can be.
    pub fn range(&self, from: u64, to: u64) -> (u64, u64) {
        let len = to - from;
        let part = |k: u64| from + (len as u128 * k as u128 / self.count as u128) as u64;
        (part(self.index as u64 - 1), part(self.index as u64))
    }
}

/// The file a shard writes into its report directory.
pub const FILE: &str = "shard.json";
/// Its schema.
pub const SCHEMA: &str = "simtwin-shard/1";

/// What `shard.json` holds.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Record {
    /// [`SCHEMA`]
    pub schema: String,
    /// `frames`, `faults`, `replay`, `libm`.
    pub command: String,
    /// Hash of `plan` and the parity version: shards of one run have the same.
    pub run_key: String,
    /// What decides the run's results (arguments, inputs), readable.
    pub plan: Json,
    /// parity's version.
    pub parity_version: String,
    /// K/N.
    pub shard: Shard,
    /// Units of the whole run.
    pub units_total: usize,
    /// The units this shard ran (their ids in the run's order).
    pub units: Vec<String>,
}

impl Record {
    /// The record of shard `shard` of the run `plan` that ran `units`.
    pub fn new(command: &str, plan: Json, shard: Shard, units_total: usize, units: Vec<String>) -> Record {
        let version = env!("CARGO_PKG_VERSION").to_string();
        let mut h = Sha256::new();
        h.update(command.as_bytes());
        h.update(version.as_bytes());
        h.update(plan.to_string().as_bytes());
        Record {
            schema: SCHEMA.into(),
            command: command.into(),
            run_key: format!("{:x}", h.finalize())[..16].to_string(),
            plan,
            parity_version: version,
            shard,
            units_total,
            units,
        }
    }

    /// Writes `dir/shard.json`.
    pub fn write(&self, dir: &Path) -> Result<()> {
        crate::report::write_json(&dir.join(FILE), &serde_json::to_value(self)?)
    }

    /// Reads `dir/shard.json`; a directory without one is explained with its summary.
    pub fn read(dir: &Path) -> Result<Record> {
        let p = dir.join(FILE);
        let text = match p.symlink_metadata() {
            Ok(_) => crate::input::read_text(&p, "shard record")?,
            Err(_) => {
                let why = ["summary.json", "faults.json"]
                    .iter()
                    .find_map(|f| crate::input::read_text(&dir.join(f), "summary").ok())
                    .and_then(|t| serde_json::from_str::<Json>(&t).ok())
                    .and_then(|s| s["error"].as_str().map(|e| format!(": its summary says: {e}")))
                    .unwrap_or_default();
                bail!("{} is not a finished shard (no {FILE}){why}", dir.display());
            }
        };
        Record::parse(&text, &p)
    }

    /// Checks the text of a shard record read from `p` (errors name it).
    pub fn parse(text: &str, p: &Path) -> Result<Record> {
        let r: Record = serde_json::from_str(text).with_context(|| format!("{}: malformed", p.display()))?;
        if r.schema != SCHEMA {
            bail!("{}: schema {:?}, this parity reads {SCHEMA}", p.display(), r.schema);
        }
        Ok(r)
    }
}

/// Copies the files under `from` into `to` (directories merged), leaving out the paths
/// (relative to `from`) named in `skip`; a file that is already there is an error (two
/// shards wrote the same file).
pub(crate) fn copy_tree(from: &Path, to: &Path, skip: &[&str]) -> Result<()> {
    fn walk(root: &Path, from: &Path, to: &Path, skip: &[&str]) -> Result<()> {
        std::fs::create_dir_all(to).with_context(|| format!("cannot create {}", to.display()))?;
        for e in std::fs::read_dir(from).with_context(|| format!("cannot read {}", from.display()))?.flatten() {
            let (src, dst) = (e.path(), to.join(e.file_name()));
            let rel = src.strip_prefix(root).unwrap_or(&src);
            if skip.iter().any(|s| rel == Path::new(s)) {
                continue;
            }
            if e.file_type()?.is_dir() {
                walk(root, &src, &dst, skip)?;
            } else {
                // A shard directory is input: a FIFO or a device in it is refused by name.
                crate::input::check_regular(&src, "shard file")?;
                if dst.exists() {
                    bail!("{} is in more than one shard (again in {})", dst.display(), src.display());
                }
                std::fs::copy(&src, &dst).with_context(|| format!("cannot copy {} to {}", src.display(), dst.display()))?;
            }
        }
        Ok(())
    }
    walk(from, from, to, skip)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with<'a>(env: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |k| env.iter().find(|(x, _)| *x == k).map(|(_, v)| v.to_string())
    }

    #[test]
    fn shards_parse_from_arguments_slurm_and_kubernetes() {
        let none = with(&[]);
        assert_eq!(parse_with("2/8", &none), Ok(Shard { index: 2, count: 8 }));
        for bad in ["0/3", "4/3", "1/0", "x/3", "3", "auto", "auto/x", "1/"] {
            assert!(parse_with(bad, &none).is_err(), "{bad}");
        }
        // --array=1-10: task 1 is shard 1; --array=0-20:4 (0,4,...,20): task 8 is shard 3
        let slurm = with(&[("SLURM_ARRAY_TASK_ID", "7"), ("SLURM_ARRAY_TASK_MIN", "1"), ("SLURM_ARRAY_TASK_COUNT", "10")]);
        assert_eq!(parse_with("auto", &slurm), Ok(Shard { index: 7, count: 10 }));
        assert!(parse_with("auto/9", &slurm).unwrap_err().contains("the Slurm array has 10 tasks"));
        let stepped = with(&[
            ("SLURM_ARRAY_TASK_ID", "8"),
            ("SLURM_ARRAY_TASK_MIN", "0"),
            ("SLURM_ARRAY_TASK_STEP", "4"),
            ("SLURM_ARRAY_TASK_COUNT", "6"),
        ]);
        assert_eq!(parse_with("auto", &stepped), Ok(Shard { index: 3, count: 6 }));
        let listed = with(&[("SLURM_ARRAY_TASK_ID", "7"), ("SLURM_ARRAY_TASK_MIN", "1"), ("SLURM_ARRAY_TASK_COUNT", "3")]);
        assert!(parse_with("auto", &listed).unwrap_err().contains("pass --shard K/N"));
        let k8s = with(&[("JOB_COMPLETION_INDEX", "0")]);
        assert_eq!(parse_with("auto/4", &k8s), Ok(Shard { index: 1, count: 4 }));
        assert!(parse_with("auto", &k8s).unwrap_err().contains("--shard auto/N"));
        assert!(parse_with("auto/4", &with(&[("JOB_COMPLETION_INDEX", "4")])).is_err());
    }

    #[test]
    fn units_and_ranges_are_partitioned_exactly() {
        let n = 3;
        let owners: Vec<u32> = (0..10).map(|i| (1..=n).find(|k| Shard { index: *k, count: n }.owns(i)).unwrap()).collect();
        assert_eq!(owners, [1, 2, 3, 1, 2, 3, 1, 2, 3, 1]);
        let (from, to) = (1u64, 0x7f80_0000u64);
        let mut next = from;
        for k in 1..=7 {
            let (a, b) = Shard { index: k, count: 7 }.range(from, to);
            assert_eq!(a, next);
            assert!(b >= a);
            next = b;
        }
        assert_eq!(next, to);
        assert_eq!(Shard { index: 2, count: 4 }.range(0, 3), (0, 1));
    }

    #[test]
    fn records_key_the_plan() {
        let a = Record::new("frames", serde_json::json!({"clips": ["a"]}), Shard { index: 1, count: 2 }, 4, vec!["u0".into()]);
        let b = Record::new("frames", serde_json::json!({"clips": ["a"]}), Shard { index: 2, count: 2 }, 4, vec!["u1".into()]);
        let c = Record::new("frames", serde_json::json!({"clips": ["b"]}), Shard { index: 2, count: 2 }, 4, vec!["u1".into()]);
        assert_eq!(a.run_key, b.run_key);
        assert_ne!(a.run_key, c.run_key);
        let d = tempfile::tempdir().unwrap();
        a.write(d.path()).unwrap();
        assert_eq!(Record::read(d.path()).unwrap(), a);
        let e = tempfile::tempdir().unwrap();
        std::fs::write(e.path().join("summary.json"), r#"{"error": "cpu extractor failed"}"#).unwrap();
        let err = Record::read(e.path()).unwrap_err().to_string();
        assert!(err.contains("is not a finished shard") && err.contains("cpu extractor failed"), "{err}");
    }
}
