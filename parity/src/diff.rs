//! `parity diff A B`: compare two existing outputs (VMAF JSON, XML or CSV; the format is
//! read from the content and the two may differ) without running anything.

use crate::compare::{compare, Selection};
use crate::output;
use crate::report::{self, Side};
use crate::tolerance;
use anyhow::Result;
use serde_json::Map;
use std::path::PathBuf;

/// The examples and exit codes of the command's `--help`.
const EXAMPLE: &str = "\
Examples:
  parity diff reports/frames/cpu.json reports/frames/cuda-emulated.json
  parity diff cpu.xml cuda.json --tolerances tolerances.txt --out reports/diff/run1

Tolerance file lines: `PATTERN exact|abs=X|rel=X|ulp=N|nan-any ...` (first match wins).
Exit codes: 0 identical or within tolerance, 1 differences beyond tolerance,
2 input error (unreadable or malformed output, frame-count mismatch, missing metric).";

/// The arguments of `parity diff`.
#[derive(clap::Args, Debug, Clone)]
#[command(after_help = EXAMPLE)]
pub struct DiffArgs {
    /// Reference output (e.g. the CPU extractor's)
    pub a: PathBuf,
    /// Output to compare against it (e.g. the CUDA extractor's)
    pub b: PathBuf,
    /// Tolerance table file (default: exact)
    #[arg(long)]
    pub tolerances: Option<PathBuf>,
    /// Report directory
    #[arg(long, short = 'o', default_value = "reports/diff")]
    pub out: PathBuf,
    /// Label of A in reports
    #[arg(long, default_value = "a")]
    pub label_a: String,
    /// Label of B in reports
    #[arg(long, default_value = "b")]
    pub label_b: String,
    /// Only compare these metrics (comma separated, `*` wildcards)
    #[arg(long, value_delimiter = ',')]
    pub metrics: Vec<String>,
    /// Leave a metric out (repeatable)
    #[arg(long = "ignore-metric")]
    pub ignore_metric: Vec<String>,
}

/// Runs `parity diff`: 0 within tolerance, 1 differences; an error for bad input.
pub fn run_diff(a: &DiffArgs) -> Result<i32> {
    report::guarded("diff", &a.out, &report::DIFF_ARTEFACTS, || {
        let tols = match &a.tolerances {
            Some(p) => tolerance::Table::load(p)?,
            None => tolerance::Table::exact(),
        };
        let ta = output::read_file(&a.a)?;
        let tb = output::read_file(&a.b)?;
        let sel = Selection { only: a.metrics.clone(), ignore: a.ignore_metric.clone() };
        let c = compare(&a.label_a, &ta, &a.label_b, &tb, &tols, &sel)?;
        let sides = vec![Side::of(&a.label_a, &ta), Side::of(&a.label_b, &tb)];
        let code = if c.pass() { 0 } else { 1 };
        let comps = vec![c];
        let summary = report::summary_json("diff", &sides, &comps, &tols.describe_source(), Map::new(), code);
        report::write_all(&a.out, "parity diff", &summary, &sides, &comps, &[], "")?;
        crate::frames::print_table(&comps, &summary, &a.out);
        Ok(code)
    })
}
