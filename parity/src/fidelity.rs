//! The emulated driver against the real device, for the same runs: outputs frame by
//! frame and metric by metric (`frames --device both`), and counters key by key (the
//! calls by name, copies by direction and bytes, launches by symbol, ... that simtwin's
//! pass-through counted on the device against what the emulated driver counted:
//! `frames` and `transfers --device both`). Every difference is listed.

use crate::compare::{Comparison, Kind};
use crate::num::g17;
use anyhow::Result;
use serde_json::{json, Value as Json};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::Path;

/// Labels of the two sides.
pub const EMULATED: &str = "cuda-emulated";
pub const REAL: &str = "cuda-real";

/// Counter families the emulated driver and the pass-through count the same way: calls
/// and failures by entry point, copies, memsets, allocations, launches by symbol (and
/// `launches.total`), synchronisations, leaks at exit. Left out: hazards, zero-copy
/// launches, failed launches and deferred work (only the emulated driver sees them),
/// unsupported entries and injected failures (properties of the driver, not the program).
pub fn compared_key(k: &str) -> bool {
    const FAMILIES: &[&str] = &["calls.", "failures.", "copies.", "memsets.", "allocations.", "launches.", "leaks."];
    k == "synchronizations" || FAMILIES.iter().any(|f| k.starts_with(f))
}

/// One counter whose emulated and real values differ.
#[derive(Debug, Clone, PartialEq)]
pub struct CountDiff {
    pub key: String,
    pub emulated: f64,
    pub real: f64,
}

/// Every compared key whose values differ (a key missing on one side counts 0 there).
pub fn count_diffs(emulated: &BTreeMap<String, f64>, real: &BTreeMap<String, f64>) -> Vec<CountDiff> {
    let keys: BTreeSet<&String> = emulated.keys().chain(real.keys()).filter(|k| compared_key(k)).collect();
    keys.into_iter()
        .filter_map(|k| {
            let (e, r) = (emulated.get(k).copied().unwrap_or(0.0), real.get(k).copied().unwrap_or(0.0));
            (e != r).then(|| CountDiff { key: k.clone(), emulated: e, real: r })
        })
        .collect()
}

pub fn count_diffs_json(d: &[CountDiff]) -> Json {
    Json::Array(d.iter().map(|x| json!({"key": x.key, "emulated": x.emulated, "real": x.real})).collect())
}

/// A Markdown table of counter differences (or a line saying there are none).
pub fn count_diffs_markdown(what: &str, d: &[CountDiff], compared: usize) -> String {
    let mut m = String::new();
    if d.is_empty() {
        let _ = writeln!(m, "{what}: all {compared} compared counters equal (calls by name, copies by direction and bytes, launches by symbol, memsets, allocations, synchronisations, leaks).\n");
        return m;
    }
    let _ =
        writeln!(m, "{what}: **{} of {compared} compared counters differ**:\n\n| key | emulated | real device |\n|---|---|---|", d.len());
    for x in d {
        let _ = writeln!(m, "| {} | {} | {} |", x.key, g17(x.emulated), g17(x.real));
    }
    m.push('\n');
    m
}

/// The number of compared keys present on either side.
pub fn compared_count(emulated: &BTreeMap<String, f64>, real: &BTreeMap<String, f64>) -> usize {
    emulated.keys().chain(real.keys()).filter(|k| compared_key(k)).collect::<BTreeSet<_>>().len()
}

/// The outputs' comparison (emulated = side a, real = side b) as JSON: identical frames
/// per metric and every differing frame/metric.
pub fn outputs_json(c: &Comparison) -> Json {
    json!({
        "frames": c.frames,
        "identical_frames": c.identical_frames,
        "pass": c.pass(),
        "metrics": c.metrics.iter().map(|(k, m)| (k.clone(), json!({"identical": m.identical, "frames": m.frames,
            "max_ulp": m.max_ulp, "max_abs": m.max_abs, "beyond_tolerance": m.beyond, "first_diff_frame": m.first_diff_frame}))).collect::<serde_json::Map<_, _>>(),
        "differences": c.rows.iter().filter(|r| r.cell.kind != Kind::Identical).map(|r| json!({
            "frame": r.frame, "metric": r.metric, "emulated": g17(r.a), "real": g17(r.b),
            "emulated_bits": format!("0x{:016x}", r.a.to_bits()), "real_bits": format!("0x{:016x}", r.b.to_bits()),
            "kind": r.cell.kind.name(), "ulp": r.cell.ulp, "within_tolerance": r.cell.within})).collect::<Vec<_>>(),
    })
}

/// Markdown: identical frames per metric, then each frame where emulated and real differ.
pub fn outputs_markdown(c: &Comparison) -> String {
    let mut m = String::new();
    let _ = writeln!(m, "## Emulated vs real device: {}/{} frames identical in every metric\n", c.identical_frames, c.frames);
    let _ = writeln!(m, "| metric | identical frames | max ULP | first differing frame |\n|---|---|---|---|");
    for (k, s) in &c.metrics {
        let _ = writeln!(
            m,
            "| {k} | {}/{} | {} | {} |",
            s.identical,
            s.frames,
            s.max_ulp,
            s.first_diff_frame.map(|f| f.to_string()).unwrap_or_else(|| "-".into())
        );
    }
    let diffs: Vec<_> = c.rows.iter().filter(|r| r.cell.kind != Kind::Identical).collect();
    if diffs.is_empty() {
        let _ = writeln!(m, "\nThe emulated driver and the real device gave the same bits for every frame and metric.\n");
        return m;
    }
    let _ = writeln!(m, "\nFrames where the emulated driver and the real device differ ({}):\n", diffs.len());
    let _ = writeln!(m, "| frame | metric | emulated | real device | kind | ULP |\n|---|---|---|---|---|---|");
    for r in diffs {
        let _ = writeln!(
            m,
            "| {} | {} | {} | {} | {} | {} |",
            r.frame,
            r.metric,
            g17(r.a),
            g17(r.b),
            r.cell.kind.name(),
            r.cell.ulp.map(|u| u.to_string()).unwrap_or_else(|| "-".into())
        );
    }
    m.push('\n');
    m
}

/// `emulated_vs_real.csv`: every frame and metric, both values and bit patterns, whether
/// they are identical.
pub fn write_outputs_csv(path: &Path, c: &Comparison) -> Result<()> {
    let mut w = csv::Writer::from_writer(Vec::new());
    w.write_record(["frame", "metric", "emulated", "real", "emulated_bits", "real_bits", "identical", "kind", "ulp"])?;
    for r in &c.rows {
        w.write_record([
            r.frame.to_string(),
            r.metric.clone(),
            g17(r.a),
            g17(r.b),
            format!("0x{:016x}", r.a.to_bits()),
            format!("0x{:016x}", r.b.to_bits()),
            (r.cell.kind == Kind::Identical).to_string(),
            r.cell.kind.name().to_string(),
            r.cell.ulp.map(|u| u.to_string()).unwrap_or_default(),
        ])?;
    }
    crate::report::write_atomic(path, w.into_inner().map_err(|e| anyhow::anyhow!("{e}"))?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_shared_families_are_compared_and_missing_keys_count_zero() {
        let e: BTreeMap<String, f64> =
            [("calls.cuInit", 1.0), ("copies.HtoD.bytes", 64.0), ("hazards", 2.0), ("zero_copy.k", 1.0), ("launches.k.count", 3.0)]
                .into_iter()
                .map(|(k, v)| (k.to_string(), v))
                .collect();
        let mut r = e.clone();
        r.insert("hazards".into(), 0.0);
        r.remove("zero_copy.k");
        assert!(count_diffs(&e, &r).is_empty());
        r.insert("copies.HtoD.bytes".into(), 128.0);
        r.remove("launches.k.count");
        r.insert("calls.cuMemcpyHtoD_v2".into(), 1.0);
        let d = count_diffs(&e, &r);
        assert_eq!(
            d,
            vec![
                CountDiff { key: "calls.cuMemcpyHtoD_v2".into(), emulated: 0.0, real: 1.0 },
                CountDiff { key: "copies.HtoD.bytes".into(), emulated: 64.0, real: 128.0 },
                CountDiff { key: "launches.k.count".into(), emulated: 3.0, real: 0.0 },
            ]
        );
        assert_eq!(compared_count(&e, &r), 4);
        assert!(count_diffs_markdown("x", &d, 4).contains("3 of 4 compared counters differ"));
    }
}
