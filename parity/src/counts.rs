//! The emulated driver's counters files (schema `simtwin-counts/1`, one file per process
//! through EMU_CUDA_COUNTS with `%p`), summed over every file of one run and flattened
//! into `key -> value`: `calls.<entry point>`, `copies.<HtoD|DtoH|DtoD|HtoH>.count|bytes`,
//! `memsets.count|bytes`, `allocations.count|bytes`, `launches.<symbol>.count|threads|blocks`,
//! `synchronizations`, `hazards` (number of reports), `unsupported.<entry point>`.
//! Numeric fields the schema adds later are flattened the same way.

use anyhow::{anyhow, bail, Context, Result};
use serde_json::Value as Json;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

#[derive(Debug, Clone, Default)]
pub struct Counts {
    pub values: BTreeMap<String, f64>,
    pub hazards: Vec<Json>,
    pub files: Vec<PathBuf>,
}

fn flatten(prefix: &str, v: &Json, out: &mut BTreeMap<String, f64>, hazards: &mut Vec<Json>) {
    match v {
        Json::Number(n) => {
            *out.entry(prefix.to_string()).or_insert(0.0) += n.as_f64().unwrap_or(0.0);
        }
        Json::Object(m) => {
            for (k, x) in m {
                let key = if prefix.is_empty() { k.clone() } else { format!("{prefix}.{k}") };
                flatten(&key, x, out, hazards);
            }
        }
        Json::Array(a) => {
            *out.entry(prefix.to_string()).or_insert(0.0) += a.len() as f64;
            if prefix == "hazards" {
                hazards.extend(a.iter().cloned());
            }
        }
        _ => {}
    }
}

impl Counts {
    pub fn parse_into(&mut self, text: &str, source: &Path) -> Result<()> {
        let v: Json = serde_json::from_str(text).with_context(|| format!("{}: malformed counters file", source.display()))?;
        let obj = v.as_object().ok_or_else(|| anyhow!("{}: counters file is not a JSON object", source.display()))?;
        let schema = obj.get("schema").and_then(|s| s.as_str()).unwrap_or("");
        if !schema.starts_with("simtwin-counts/") {
            bail!("{}: not a simtwin counters file (schema '{schema}', expected simtwin-counts/1)", source.display());
        }
        for (k, x) in obj {
            if k == "schema" || k == "pid" {
                continue;
            }
            flatten(k, x, &mut self.values, &mut self.hazards);
        }
        self.values.entry("hazards".into()).or_insert(0.0);
        self.files.push(source.to_path_buf());
        Ok(())
    }

    /// Sums every `*.json` file in `dir` (one per process of the run).
    pub fn read_dir(dir: &Path) -> Result<Counts> {
        let mut c = Counts::default();
        let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
            .with_context(|| format!("cannot read counters directory {}", dir.display()))?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "json"))
            .collect();
        files.sort();
        for f in files {
            let text = std::fs::read_to_string(&f).with_context(|| format!("cannot read {}", f.display()))?;
            c.parse_into(&text, &f)?;
        }
        Ok(c)
    }

    pub fn get(&self, k: &str) -> f64 {
        self.values.get(k).copied().unwrap_or(0.0)
    }

    /// Kernel launches by symbol.
    pub fn launches(&self) -> BTreeMap<String, f64> {
        self.values
            .iter()
            .filter_map(|(k, v)| k.strip_prefix("launches.").and_then(|r| r.strip_suffix(".count")).map(|s| (s.to_string(), *v)))
            .collect()
    }

    pub fn total_launches(&self) -> f64 {
        self.launches().values().sum()
    }
}

/// Creates (emptied) `dir` and returns the EMU_CUDA_COUNTS pattern inside it.
pub fn prepare_dir(dir: &Path) -> Result<PathBuf> {
    if dir.exists() {
        std::fs::remove_dir_all(dir).with_context(|| format!("cannot clear {}", dir.display()))?;
    }
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let abs = std::fs::canonicalize(dir)?;
    Ok(abs.join("counts-%p.json"))
}
