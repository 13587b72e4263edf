//! `parity merge DIR...`: the shards of one `--shard K/N` run ([`crate::shard`]) put
//! back together into the report the unsharded run writes (timings aside), by the
//! command's own reporting code. Refused: directories that are not finished shards,
//! shards of different runs (another plan, another parity, another N), a shard given
//! twice, a shard missing, a unit in two shards or in none.

use crate::shard::Record;
use anyhow::{bail, Context, Result};
use std::collections::BTreeMap;
use std::path::PathBuf;

/// The arguments of `parity merge`.
#[derive(clap::Args, Debug, Clone)]
#[command(after_help = "Examples:
  parity merge shard-1 shard-2 shard-3 --out reports/frames
  parity merge artifacts/faults-*/ --out reports/faults

Exit codes: the merged report's (frames: 0 parity, 1 differences, 2 a cell that failed
to run; faults: 0, 1 a crash or hang; replay/libm: 0, 1 misrounded with
--require-correct-rounding), 2 shards that do not make one run.")]
pub struct MergeArgs {
    /// The shards' report directories (each holds shard.json)
    #[arg(required = true, value_name = "DIR")]
    pub dirs: Vec<PathBuf>,
    /// Report directory of the merged run
    #[arg(long, short = 'o', default_value = "reports/merged")]
    pub out: PathBuf,
}

/// Checks that the shards make one whole run; returns them ordered by K.
pub(crate) fn check(shards: Vec<(PathBuf, Record)>) -> Result<Vec<(PathBuf, Record)>> {
    let (d0, r0) = &shards[0];
    for (d, r) in &shards[1..] {
        if r.command != r0.command {
            bail!("{} is a shard of parity {}, {} of parity {}: not one run", d.display(), r.command, d0.display(), r0.command);
        }
        if r.parity_version != r0.parity_version {
            bail!(
                "{} was written by parity {}, {} by parity {}: not one run",
                d.display(),
                r.parity_version,
                d0.display(),
                r0.parity_version
            );
        }
        if r.run_key != r0.run_key {
            bail!(
                "{} and {} are shards of different runs (keys {} and {}): their clips, features, orders, commands, settings or tolerances differ",
                d0.display(),
                d.display(),
                r0.run_key,
                r.run_key
            );
        }
        if r.shard.count != r0.shard.count {
            bail!(
                "{} is shard {} and {} shard {}: one run is split into one number of shards",
                d0.display(),
                r0.shard,
                d.display(),
                r.shard
            );
        }
    }
    let mut by_k: BTreeMap<u32, &PathBuf> = BTreeMap::new();
    for (d, r) in &shards {
        if let Some(other) = by_k.insert(r.shard.index, d) {
            bail!("shard {} is given twice: {} and {}", r.shard, other.display(), d.display());
        }
    }
    let n = r0.shard.count;
    let missing: Vec<String> = (1..=n).filter(|k| !by_k.contains_key(k)).map(|k| format!("{k}/{n}")).collect();
    if !missing.is_empty() {
        bail!(
            "shard(s) {} of run {} missing (given: {})",
            missing.join(", "),
            r0.run_key,
            by_k.keys().map(|k| format!("{k}/{n}")).collect::<Vec<_>>().join(", ")
        );
    }
    let mut owner: BTreeMap<&str, &PathBuf> = BTreeMap::new();
    for (d, r) in &shards {
        for u in &r.units {
            if let Some(other) = owner.insert(u.as_str(), d) {
                bail!("unit {u} was run by two shards: {} and {}", other.display(), d.display());
            }
        }
    }
    if owner.len() != r0.units_total {
        bail!("the shards ran {} of the run's {} units", owner.len(), r0.units_total);
    }
    let mut shards = shards;
    shards.sort_by_key(|(_, r)| r.shard.index);
    Ok(shards)
}

/// Runs `parity merge`.
pub fn run_merge(a: &MergeArgs) -> Result<i32> {
    let mut shards = Vec::new();
    for d in &a.dirs {
        let d = std::fs::canonicalize(d).with_context(|| format!("{}: no such directory", d.display()))?;
        let r = Record::read(&d)?;
        shards.push((d, r));
    }
    let shards = check(shards)?;
    std::fs::create_dir_all(&a.out)?;
    let out = std::fs::canonicalize(&a.out)?;
    if let Some((d, _)) = shards.iter().find(|(d, _)| out.starts_with(d) || d.starts_with(&out)) {
        bail!("--out {} overlaps the shard directory {}: merge into a directory of its own", out.display(), d.display());
    }
    eprintln!("parity: merging {} shards of parity {} run {}", shards.len(), shards[0].1.command, shards[0].1.run_key);
    match shards[0].1.command.as_str() {
        "frames" => crate::frames::merge(&shards, &out),
        "faults" => crate::faults::merge(&shards, &out),
        "replay" | "libm" => crate::replay::merge(&shards, &out),
        c => bail!("shards of parity {c}: this parity does not merge that command"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shard::Shard;
    use serde_json::json;

    fn rec(k: u32, n: u32, units: &[&str], plan: serde_json::Value) -> (PathBuf, Record) {
        (
            PathBuf::from(format!("/s{k}")),
            Record::new("frames", plan, Shard { index: k, count: n }, 3, units.iter().map(|u| u.to_string()).collect()),
        )
    }

    #[test]
    fn only_the_shards_of_one_whole_run_merge() {
        let p = json!({"clips": ["a"]});
        let ok = check(vec![rec(2, 2, &["u1"], p.clone()), rec(1, 2, &["u0", "u2"], p.clone())]).unwrap();
        assert_eq!(ok[0].1.shard.index, 1);
        let e = |v: Vec<(PathBuf, Record)>| check(v).unwrap_err().to_string();
        assert!(e(vec![rec(1, 3, &["u0"], p.clone()), rec(3, 3, &["u2"], p.clone())]).contains("shard(s) 2/3 of run"));
        assert!(e(vec![rec(1, 2, &["u0"], p.clone()), rec(1, 2, &["u0"], p.clone())]).contains("shard 1/2 is given twice"));
        assert!(e(vec![rec(1, 2, &["u0"], p.clone()), rec(2, 2, &["u1"], json!({"clips": ["b"]}))]).contains("shards of different runs"));
        assert!(e(vec![rec(1, 2, &["u0", "u1"], p.clone()), rec(2, 3, &["u2"], p.clone())]).contains("one number of shards"));
        assert!(e(vec![rec(1, 2, &["u0", "u1"], p.clone()), rec(2, 2, &["u1", "u2"], p.clone())]).contains("unit u1 was run by two shards"));
        assert!(e(vec![rec(1, 2, &["u0"], p.clone()), rec(2, 2, &["u1"], p.clone())]).contains("ran 2 of the run's 3 units"));
        let mut other = rec(2, 2, &["u1"], p.clone());
        other.1.command = "faults".into();
        assert!(e(vec![rec(1, 2, &["u0", "u2"], p), other]).contains("not one run"));
    }

    #[test]
    fn trees_merge_and_collisions_are_refused() {
        use crate::shard::copy_tree;
        let d = tempfile::tempdir().unwrap();
        for (s, f) in [("a", "x/one"), ("b", "x/two")] {
            std::fs::create_dir_all(d.path().join(s).join("x")).unwrap();
            std::fs::write(d.path().join(s).join(f), s).unwrap();
            std::fs::write(d.path().join(s).join("shard.json"), "{}").unwrap();
            std::fs::write(d.path().join(s).join("x/clean.log"), "{}").unwrap();
        }
        let out = d.path().join("out");
        copy_tree(&d.path().join("a"), &out, &["shard.json"]).unwrap();
        copy_tree(&d.path().join("b"), &out, &["shard.json", "x/clean.log"]).unwrap();
        assert!(
            out.join("x/one").exists()
                && out.join("x/two").exists()
                && out.join("x/clean.log").exists()
                && !out.join("shard.json").exists()
        );
        assert!(copy_tree(&d.path().join("a"), &out, &["shard.json"]).unwrap_err().to_string().contains("more than one shard"));
    }
}
