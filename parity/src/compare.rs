//! Per-frame, per-metric comparison of extractor outputs as f64 bit patterns.

use crate::num::ulp_distance;
use crate::output::Table;
use crate::tolerance::{self, Tol};
use anyhow::{bail, Result};
use serde_json::{json, Value as Json};
use std::collections::BTreeMap;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Same bit pattern.
    Identical,
    /// Two non-NaN numbers that differ (not just by the sign of zero).
    Numeric,
    /// NaN on one side, a number on the other.
    NanVsNumber,
    /// +0 against -0.
    SignedZero,
    /// Both NaN, but sign or payload differ.
    NanPayload,
}

impl Kind {
    pub fn name(self) -> &'static str {
        match self {
            Kind::Identical => "identical",
            Kind::Numeric => "numeric",
            Kind::NanVsNumber => "nan-vs-number",
            Kind::SignedZero => "signed-zero",
            Kind::NanPayload => "nan-payload",
        }
    }
}

#[derive(Debug, Clone)]
pub struct Cell {
    pub kind: Kind,
    pub abs: Option<f64>,
    pub rel: Option<f64>,
    pub ulp: Option<u64>,
    pub within: bool,
}

pub fn compare_values(a: f64, b: f64, tol: &Tol) -> Cell {
    if a.to_bits() == b.to_bits() {
        return Cell { kind: Kind::Identical, abs: Some(0.0), rel: Some(0.0), ulp: Some(0), within: true };
    }
    match (a.is_nan(), b.is_nan()) {
        (true, true) => return Cell { kind: Kind::NanPayload, abs: None, rel: None, ulp: None, within: tol.nan_any },
        (true, false) | (false, true) => return Cell { kind: Kind::NanVsNumber, abs: None, rel: None, ulp: None, within: false },
        _ => {}
    }
    if a == 0.0 && b == 0.0 {
        return Cell { kind: Kind::SignedZero, abs: Some(0.0), rel: Some(0.0), ulp: Some(0), within: false };
    }
    let abs = (a - b).abs();
    let m = a.abs().max(b.abs());
    let rel = if m == 0.0 { 0.0 } else { abs / m };
    let ulp = ulp_distance(a, b);
    let finite = a.is_finite() && b.is_finite();
    let within = finite
        && (tol.abs.is_some_and(|t| abs <= t) || tol.rel.is_some_and(|t| rel <= t) || tol.ulp.is_some_and(|t| ulp.is_some_and(|u| u <= t)));
    Cell { kind: Kind::Numeric, abs: Some(abs), rel: Some(rel), ulp, within }
}

/// Statistics of one metric in one comparison.
#[derive(Debug, Clone, Default)]
pub struct MetricStats {
    pub frames: usize,
    pub identical: usize,
    pub within: usize,
    pub beyond: usize,
    pub max_abs: f64,
    pub max_abs_frame: Option<u64>,
    pub max_rel: f64,
    pub max_ulp: u64,
    pub max_ulp_frame: Option<u64>,
    pub first_diff_frame: Option<u64>,
    pub first_beyond_frame: Option<u64>,
    pub nan_mismatches: usize,
    pub signed_zero_mismatches: usize,
    pub nan_payload_mismatches: usize,
    pub tolerance: String,
}

impl MetricStats {
    pub fn to_json(&self) -> Json {
        json!({
            "frames": self.frames,
            "identical": self.identical,
            "within_tolerance": self.within,
            "beyond_tolerance": self.beyond,
            "max_abs": self.max_abs,
            "max_abs_frame": self.max_abs_frame,
            "max_rel": self.max_rel,
            "max_ulp": self.max_ulp,
            "max_ulp_frame": self.max_ulp_frame,
            "first_diff_frame": self.first_diff_frame,
            "first_beyond_frame": self.first_beyond_frame,
            "nan_mismatches": self.nan_mismatches,
            "signed_zero_mismatches": self.signed_zero_mismatches,
            "nan_payload_mismatches": self.nan_payload_mismatches,
            "tolerance": self.tolerance,
            "pass": self.beyond == 0,
        })
    }

    /// Merges another comparison's stats of the same metric (worst of both).
    pub fn merge(&mut self, o: &MetricStats) {
        self.frames = self.frames.max(o.frames);
        self.identical = self.identical.min(o.identical);
        self.within = self.within.max(o.within);
        self.beyond = self.beyond.max(o.beyond);
        if o.max_abs > self.max_abs || (o.max_abs.is_nan() && !self.max_abs.is_nan()) {
            self.max_abs = o.max_abs;
            self.max_abs_frame = o.max_abs_frame;
        }
        self.max_rel = self.max_rel.max(o.max_rel);
        if o.max_ulp > self.max_ulp {
            self.max_ulp = o.max_ulp;
            self.max_ulp_frame = o.max_ulp_frame;
        }
        self.first_diff_frame = min_opt(self.first_diff_frame, o.first_diff_frame);
        self.first_beyond_frame = min_opt(self.first_beyond_frame, o.first_beyond_frame);
        self.nan_mismatches = self.nan_mismatches.max(o.nan_mismatches);
        self.signed_zero_mismatches = self.signed_zero_mismatches.max(o.signed_zero_mismatches);
        self.nan_payload_mismatches = self.nan_payload_mismatches.max(o.nan_payload_mismatches);
    }
}

fn min_opt(a: Option<u64>, b: Option<u64>) -> Option<u64> {
    match (a, b) {
        (Some(x), Some(y)) => Some(x.min(y)),
        (x, None) => x,
        (None, y) => y,
    }
}

/// One frame/metric cell of a comparison.
#[derive(Debug, Clone)]
pub struct Row {
    pub frame_index: usize,
    pub frame: u64,
    pub metric: String,
    pub a: f64,
    pub b: f64,
    pub cell: Cell,
}

/// The comparison of side `b` against reference side `a`.
#[derive(Debug, Clone)]
pub struct Comparison {
    pub a_label: String,
    pub b_label: String,
    pub frames: usize,
    pub identical_frames: usize,
    pub metrics: BTreeMap<String, MetricStats>,
    pub rows: Vec<Row>,
}

impl Comparison {
    pub fn pass(&self) -> bool {
        self.metrics.values().all(|m| m.beyond == 0)
    }
    pub fn first_beyond(&self) -> Option<&Row> {
        self.rows.iter().find(|r| !r.cell.within)
    }
    pub fn first_diff(&self) -> Option<&Row> {
        self.rows.iter().find(|r| r.cell.kind != Kind::Identical)
    }
}

/// Which metrics to compare.
#[derive(Debug, Clone, Default)]
pub struct Selection {
    pub only: Vec<String>,
    pub ignore: Vec<String>,
}

impl Selection {
    pub fn wants(&self, name: &str) -> bool {
        (self.only.is_empty() || self.only.iter().any(|p| tolerance::glob(p, name)))
            && !self.ignore.iter().any(|p| tolerance::glob(p, name))
    }
}

/// Compares two outputs frame by frame. Frame-count or frame-number mismatches and
/// metrics present on one side only are input errors.
pub fn compare(a_label: &str, a: &Table, b_label: &str, b: &Table, tols: &tolerance::Table, sel: &Selection) -> Result<Comparison> {
    if a.frames.len() != b.frames.len() {
        bail!(
            "frame-count mismatch: {a_label} has {} frames ({}), {b_label} has {} frames ({})",
            a.frames.len(),
            a.source,
            b.frames.len(),
            b.source
        );
    }
    let mut metrics: BTreeMap<String, MetricStats> = BTreeMap::new();
    let mut rows = Vec::new();
    let mut identical_frames = 0;
    let names: Vec<&String> = a.names.iter().filter(|n| sel.wants(n)).collect();
    for n in b.names.iter().filter(|n| sel.wants(n)) {
        if !a.names.contains(n) {
            bail!(
                "metric '{n}' is in {b_label} ({}) but not in {a_label} ({}); select metrics with --metrics/--ignore-metric",
                b.source,
                a.source
            );
        }
    }
    if names.is_empty() {
        bail!("no metrics to compare (after --metrics/--ignore-metric selection)");
    }
    for (i, (fa, fb)) in a.frames.iter().zip(&b.frames).enumerate() {
        if fa.num != fb.num {
            bail!("frame numbers differ at position {i}: {a_label} has frame {}, {b_label} has frame {}", fa.num, fb.num);
        }
        let mut all_ident = true;
        for &name in &names {
            let tol = tols.for_metric(name);
            let (va, vb) = match (fa.metrics.get(name), fb.metrics.get(name)) {
                (Some(x), Some(y)) => (x.v, y.v),
                (Some(_), None) => bail!("metric '{name}' is missing from {b_label} at frame {} ({})", fa.num, b.source),
                (None, Some(_)) => bail!("metric '{name}' is missing from {a_label} at frame {} ({})", fa.num, a.source),
                (None, None) => bail!("metric '{name}' is missing from both outputs at frame {}", fa.num),
            };
            let cell = compare_values(va, vb, &tol);
            let st = metrics.entry(name.clone()).or_insert_with(|| MetricStats { tolerance: tol.describe(), ..Default::default() });
            st.frames += 1;
            match cell.kind {
                Kind::Identical => st.identical += 1,
                Kind::NanVsNumber => st.nan_mismatches += 1,
                Kind::SignedZero => st.signed_zero_mismatches += 1,
                Kind::NanPayload => st.nan_payload_mismatches += 1,
                Kind::Numeric => {}
            }
            if cell.kind != Kind::Identical {
                all_ident = false;
                st.first_diff_frame.get_or_insert(fa.num);
                if cell.within {
                    st.within += 1;
                } else {
                    st.beyond += 1;
                    st.first_beyond_frame.get_or_insert(fa.num);
                }
            }
            if let Some(x) = cell.abs {
                if x > st.max_abs || (x.is_infinite() && !st.max_abs.is_infinite()) {
                    st.max_abs = x;
                    st.max_abs_frame = Some(fa.num);
                }
            }
            if let Some(r) = cell.rel {
                st.max_rel = st.max_rel.max(r);
            }
            if let Some(u) = cell.ulp {
                if u > st.max_ulp {
                    st.max_ulp = u;
                    st.max_ulp_frame = Some(fa.num);
                }
            }
            rows.push(Row { frame_index: i, frame: fa.num, metric: name.clone(), a: va, b: vb, cell });
        }
        if all_ident {
            identical_frames += 1;
        }
    }
    Ok(Comparison { a_label: a_label.into(), b_label: b_label.into(), frames: a.frames.len(), identical_frames, metrics, rows })
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn kinds() {
        let ex = Tol::default();
        assert_eq!(compare_values(1.0, 1.0, &ex).kind, Kind::Identical);
        let c = compare_values(0.0, -0.0, &Tol { abs: Some(1.0), ..Default::default() });
        assert_eq!(c.kind, Kind::SignedZero);
        assert!(!c.within);
        assert_eq!(compare_values(f64::NAN, 1.0, &ex).kind, Kind::NanVsNumber);
        assert_eq!(compare_values(f64::NAN, -f64::NAN, &ex).kind, Kind::NanPayload);
        let c = compare_values(1.0, 1.0 + f64::EPSILON, &Tol { ulp: Some(1), ..Default::default() });
        assert!(c.within && c.ulp == Some(1));
        let c = compare_values(1.0, 1.0 + 2.0 * f64::EPSILON, &Tol { ulp: Some(1), ..Default::default() });
        assert!(!c.within && c.ulp == Some(2));
        assert!(!compare_values(f64::INFINITY, f64::MAX, &Tol { ulp: Some(5), ..Default::default() }).within);
    }
}
