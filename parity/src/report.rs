//! Parity reports: per-frame CSV, summary JSON and Markdown, and an SVG plot of the
//! per-frame differences per metric.
//!
//! Files written into the report directory:
//! - `per_frame.csv`: one row per frame and metric: `frame,metric`, each side's value
//!   (`%.17g`) and bit pattern (`0x...`), then per comparison `<b>_status`
//!   (identical|within|beyond), `<b>_kind`, `<b>_abs`, `<b>_rel`, `<b>_ulp`.
//! - `summary.json`: `{"schema":"simtwin-parity-summary/1","frames":N,"verdict":..,
//!   "exit_code":..,"metrics":{NAME:{"identical":K,"max_abs":X,"max_ulp":U,...}},
//!   "comparisons":[...],"sides":[...],"precision_caveat":..,...}`. With several
//!   comparisons (`--device both`) the top-level `metrics` is the worst of them.
//! - `summary.md`: the same as tables.
//! - `diff.svg`: per metric, ULP distance per frame (log2 scale); NaN/number and
//!   signed-zero mismatches are red crosses at the top.

use crate::compare::{Comparison, Kind, MetricStats};
use crate::num::g17;
use crate::output::Table;
use anyhow::{Context, Result};
use serde_json::{json, Map, Value as Json};
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

#[derive(Debug, Clone)]
pub struct Side {
    pub label: String,
    pub source: String,
    pub format: String,
    pub frames: usize,
    pub max_digits: u32,
    pub full_precision: bool,
}

impl Side {
    pub fn of(label: &str, t: &Table) -> Side {
        Side {
            label: label.into(),
            source: t.source.clone(),
            format: t.format.name().into(),
            frames: t.frames.len(),
            max_digits: t.max_digits(),
            full_precision: t.full_precision(),
        }
    }
}

pub fn precision_caveat(sides: &[Side]) -> Option<String> {
    let short: Vec<String> = sides
        .iter()
        .filter(|s| !s.full_precision)
        .map(|s| format!("{} printed at most {} significant digits", s.label, s.max_digits))
        .collect();
    if short.is_empty() {
        None
    } else {
        Some(format!(
            "fewer than 17 significant digits: {}; \"identical\" means identical at the printed precision, not bit for bit",
            short.join(", ")
        ))
    }
}

pub fn merged_metrics(comps: &[Comparison]) -> BTreeMap<String, MetricStats> {
    let mut out: BTreeMap<String, MetricStats> = BTreeMap::new();
    for c in comps {
        for (k, v) in &c.metrics {
            match out.get_mut(k) {
                Some(m) => m.merge(v),
                None => {
                    out.insert(k.clone(), v.clone());
                }
            }
        }
    }
    out
}

fn row_json(r: &crate::compare::Row) -> Json {
    json!({"frame": r.frame, "metric": r.metric, "a": g17(r.a), "b": g17(r.b), "kind": r.cell.kind.name(),
           "abs": r.cell.abs, "ulp": r.cell.ulp})
}

pub fn summary_json(
    command: &str,
    sides: &[Side],
    comps: &[Comparison],
    tolerances: &str,
    extra: Map<String, Json>,
    exit_code: i32,
) -> Json {
    let merged = merged_metrics(comps);
    let frames = comps.first().map(|c| c.frames).unwrap_or(0);
    let identical_frames = comps.iter().map(|c| c.identical_frames).min().unwrap_or(0);
    let mut root = Map::new();
    root.insert("schema".into(), json!("simtwin-parity-summary/1"));
    root.insert("command".into(), json!(command));
    root.insert(
        "verdict".into(),
        json!(match exit_code {
            0 => "parity",
            1 => "differences",
            77 => "skipped",
            _ => "error",
        }),
    );
    root.insert("exit_code".into(), json!(exit_code));
    root.insert("frames".into(), json!(frames));
    root.insert("identical_frames".into(), json!(identical_frames));
    root.insert("metrics".into(), Json::Object(merged.iter().map(|(k, v)| (k.clone(), v.to_json())).collect()));
    root.insert(
        "comparisons".into(),
        Json::Array(
            comps
                .iter()
                .map(|c| {
                    json!({
                        "a": c.a_label, "b": c.b_label, "frames": c.frames,
                        "identical_frames": c.identical_frames, "pass": c.pass(),
                        "first_difference": c.first_diff().map(row_json),
                        "first_beyond_tolerance": c.first_beyond().map(row_json),
                        "metrics": Json::Object(c.metrics.iter().map(|(k, v)| (k.clone(), v.to_json())).collect()),
                    })
                })
                .collect(),
        ),
    );
    root.insert(
        "sides".into(),
        Json::Array(
            sides
                .iter()
                .map(|s| {
                    json!({"label": s.label, "source": s.source, "format": s.format, "frames": s.frames,
                              "max_significant_digits": s.max_digits, "full_precision": s.full_precision})
                })
                .collect(),
        ),
    );
    root.insert("precision_caveat".into(), json!(precision_caveat(sides)));
    root.insert("tolerances".into(), json!(tolerances));
    for (k, v) in extra {
        root.insert(k, v);
    }
    Json::Object(root)
}

pub fn write_per_frame_csv(path: &Path, sides: &[Side], comps: &[Comparison]) -> Result<()> {
    let mut w = csv::Writer::from_writer(Vec::new());
    let mut head = vec!["frame".to_string(), "metric".to_string()];
    for s in sides {
        head.push(s.label.clone());
    }
    for s in sides {
        head.push(format!("{}_bits", s.label));
    }
    for c in comps {
        for f in ["status", "kind", "abs", "rel", "ulp"] {
            head.push(format!("{}_{f}", c.b_label));
        }
    }
    w.write_record(&head)?;
    if let Some(first) = comps.first() {
        per_frame_rows(&mut w, first, comps)?;
    }
    write_atomic(path, w.into_inner().map_err(|e| anyhow::anyhow!("{e}"))?)
}

fn per_frame_rows(w: &mut csv::Writer<Vec<u8>>, first: &Comparison, comps: &[Comparison]) -> Result<()> {
    for (j, r) in first.rows.iter().enumerate() {
        let mut rec = vec![r.frame.to_string(), r.metric.clone(), g17(r.a)];
        for c in comps {
            rec.push(g17(c.rows[j].b));
        }
        rec.push(format!("0x{:016x}", r.a.to_bits()));
        for c in comps {
            rec.push(format!("0x{:016x}", c.rows[j].b.to_bits()));
        }
        for c in comps {
            let cr = &c.rows[j];
            debug_assert!(cr.frame == r.frame && cr.metric == r.metric);
            let status = if cr.cell.kind == Kind::Identical {
                "identical"
            } else if cr.cell.within {
                "within"
            } else {
                "beyond"
            };
            rec.push(status.into());
            rec.push(cr.cell.kind.name().into());
            rec.push(cr.cell.abs.map(g17).unwrap_or_default());
            rec.push(cr.cell.rel.map(g17).unwrap_or_default());
            rec.push(cr.cell.ulp.map(|u| u.to_string()).unwrap_or_default());
        }
        w.write_record(&rec)?;
    }
    Ok(())
}

fn fmt_opt(v: Option<u64>) -> String {
    v.map(|x| x.to_string()).unwrap_or_else(|| "-".into())
}

pub fn markdown(title: &str, summary: &Json, sides: &[Side], comps: &[Comparison], notes: &[String]) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "# {title}\n");
    let verdict = summary["verdict"].as_str().unwrap_or("?");
    let _ = writeln!(
        s,
        "**Verdict: {}** (exit code {}), {} frames, tolerances: {}\n",
        verdict.to_uppercase(),
        summary["exit_code"],
        summary["frames"],
        summary["tolerances"].as_str().unwrap_or("exact")
    );
    if let Some(c) = summary["precision_caveat"].as_str() {
        let _ = writeln!(s, "> Note: {c}.\n");
    }
    let _ = writeln!(s, "| side | source | format | frames | max significant digits |\n|---|---|---|---|---|");
    for sd in sides {
        let _ = writeln!(s, "| {} | `{}` | {} | {} | {} |", sd.label, sd.source, sd.format, sd.frames, sd.max_digits);
    }
    s.push('\n');
    for c in comps {
        let _ = writeln!(s, "## {} vs {}: {}/{} frames identical in every metric\n", c.a_label, c.b_label, c.identical_frames, c.frames);
        let _ = writeln!(
            s,
            "| metric | identical | beyond tolerance | max abs | max rel | max ULP (frame) | first diff frame | NaN/number | ±0 | tolerance | verdict |\n|---|---|---|---|---|---|---|---|---|---|---|"
        );
        for (k, m) in &c.metrics {
            let _ = writeln!(
                s,
                "| {k} | {}/{} | {} | {} | {} | {} ({}) | {} | {} | {} | {} | {} |",
                m.identical,
                m.frames,
                m.beyond,
                g17(m.max_abs),
                g17(m.max_rel),
                m.max_ulp,
                fmt_opt(m.max_ulp_frame),
                fmt_opt(m.first_diff_frame),
                m.nan_mismatches,
                m.signed_zero_mismatches,
                m.tolerance,
                if m.beyond == 0 { "pass" } else { "**FAIL**" }
            );
        }
        if let Some(r) = c.first_beyond() {
            let _ = writeln!(
                s,
                "\nFirst difference beyond tolerance: frame {}, metric `{}`: {} = {}, {} = {} ({}{}).",
                r.frame,
                r.metric,
                c.a_label,
                g17(r.a),
                c.b_label,
                g17(r.b),
                r.cell.kind.name(),
                r.cell.ulp.map(|u| format!(", {u} ULP")).unwrap_or_default()
            );
        }
        s.push('\n');
    }
    if !notes.is_empty() {
        let _ = writeln!(s, "## Run notes\n");
        for n in notes {
            let _ = writeln!(s, "- {n}");
        }
        s.push('\n');
    }
    let _ = writeln!(s, "Files: `per_frame.csv` (every frame and metric, values and bit patterns), `summary.json`, `diff.svg`.");
    s
}

fn esc(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

const COLORS: [&str; 4] = ["#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd"];

/// Hand-written SVG: one panel per metric, x = frame, y = log2(ULP distance + 1).
pub fn svg(title: &str, comps: &[Comparison]) -> String {
    let Some(first) = comps.first() else { return String::new() };
    let metrics: Vec<&String> = first.metrics.keys().collect();
    let (w, ph, left, right, top) = (900.0f64, 130.0f64, 70.0f64, 20.0f64, 50.0f64);
    let h = top + ph * metrics.len() as f64 + 30.0;
    let n = first.frames.max(1) as f64;
    let plot_w = w - left - right;
    let mut s = String::new();
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}" font-family="sans-serif" font-size="11">"#
    );
    let _ = writeln!(s, r#"<rect width="100%" height="100%" fill="white"/>"#);
    let _ = writeln!(s, r#"<text x="{left}" y="20" font-size="14" font-weight="bold">{}</text>"#, esc(title));
    let mut lx = left;
    for (ci, c) in comps.iter().enumerate() {
        let col = COLORS[ci % COLORS.len()];
        let _ = writeln!(
            s,
            r#"<circle cx="{lx}" cy="36" r="4" fill="{col}"/><text x="{}" y="40">{} vs {}</text>"#,
            lx + 8.0,
            esc(&c.a_label),
            esc(&c.b_label)
        );
        lx += 200.0;
    }
    let _ = writeln!(s, r##"<text x="{lx}" y="40" fill="#d62728">x = NaN vs number / signed zero / NaN payload</text>"##);
    for (mi, m) in metrics.iter().enumerate() {
        let y0 = top + ph * mi as f64;
        let (py0, py1) = (y0 + 18.0, y0 + ph - 22.0);
        let max_ulp = comps.iter().filter_map(|c| c.metrics.get(*m)).map(|st| st.max_ulp).max().unwrap_or(0);
        let ymax = ((max_ulp as f64 + 1.0).log2()).max(1.0).ceil();
        let idents: Vec<String> =
            comps.iter().filter_map(|c| c.metrics.get(*m).map(|st| format!("{}/{}", st.identical, st.frames))).collect();
        let _ = writeln!(
            s,
            r#"<text x="{left}" y="{}" font-weight="bold">{} (identical {}; max ULP {max_ulp})</text>"#,
            y0 + 12.0,
            esc(m),
            idents.join(", ")
        );
        let _ = writeln!(s, r##"<rect x="{left}" y="{py0}" width="{plot_w}" height="{}" fill="none" stroke="#999"/>"##, py1 - py0);
        let _ = writeln!(
            s,
            r#"<text x="{}" y="{}" text-anchor="end">2^{ymax}</text><text x="{}" y="{}" text-anchor="end">0</text>"#,
            left - 4.0,
            py0 + 8.0,
            left - 4.0,
            py1
        );
        let _ = writeln!(s, r#"<text x="{}" y="{}" text-anchor="end" font-size="9">ULP+1 (log2)</text>"#, left - 4.0, (py0 + py1) / 2.0);
        let _ = writeln!(
            s,
            r#"<text x="{left}" y="{}">frame 0</text><text x="{}" y="{}" text-anchor="end">frame {}</text>"#,
            py1 + 12.0,
            w - right,
            py1 + 12.0,
            first.frames.saturating_sub(1)
        );
        for (ci, c) in comps.iter().enumerate() {
            let col = COLORS[ci % COLORS.len()];
            let mut pts = String::new();
            for r in c.rows.iter().filter(|r| &&r.metric == m) {
                let x = left + plot_w * (r.frame_index as f64 + 0.5) / n;
                match r.cell.kind {
                    Kind::NanVsNumber | Kind::SignedZero | Kind::NanPayload => {
                        let y = py0 + 5.0;
                        let _ = writeln!(
                            s,
                            r##"<path d="M{} {} L{} {} M{} {} L{} {}" stroke="#d62728" stroke-width="1.5"><title>frame {}: {}</title></path>"##,
                            x - 3.0,
                            y - 3.0,
                            x + 3.0,
                            y + 3.0,
                            x - 3.0,
                            y + 3.0,
                            x + 3.0,
                            y - 3.0,
                            r.frame,
                            r.cell.kind.name()
                        );
                    }
                    _ => {
                        let u = r.cell.ulp.unwrap_or(0) as f64;
                        let y = py1 - (py1 - py0) * ((u + 1.0).log2() / ymax);
                        let _ = write!(pts, "{x:.1},{y:.1} ");
                        if r.cell.kind != Kind::Identical {
                            let _ = writeln!(
                                s,
                                r#"<circle cx="{x:.1}" cy="{y:.1}" r="2.5" fill="{col}"><title>frame {}: {} ULP, abs {}</title></circle>"#,
                                r.frame,
                                u,
                                g17(r.cell.abs.unwrap_or(0.0))
                            );
                        }
                    }
                }
            }
            if !pts.is_empty() {
                let _ = writeln!(s, r#"<polyline points="{}" fill="none" stroke="{col}" stroke-width="1" opacity="0.6"/>"#, pts.trim_end());
            }
        }
    }
    s.push_str("</svg>\n");
    s
}

/// Writes per_frame.csv, summary.json, summary.md and diff.svg into `dir`, each
/// atomically; `extra_md` is appended to the Markdown (sections of the caller).
pub fn write_all(
    dir: &Path,
    title: &str,
    summary: &Json,
    sides: &[Side],
    comps: &[Comparison],
    notes: &[String],
    extra_md: &str,
) -> Result<()> {
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create report directory {}", dir.display()))?;
    write_per_frame_csv(&dir.join("per_frame.csv"), sides, comps)?;
    write_atomic(&dir.join("diff.svg"), svg(title, comps))?;
    write_atomic(&dir.join("summary.md"), markdown(title, summary, sides, comps, notes) + extra_md)?;
    // Last: a summary.json on disk means the other files are this run's.
    write_json(&dir.join("summary.json"), summary)
}

pub use crate::atomic_write::{write_atomic, write_json};

/// What a command leaves in its report directory, for [`clear_previous`].
pub struct Artefacts<'a> {
    /// Files by exact name.
    pub files: &'a [&'a str],
    /// Directories parity owns inside the report directory (counts/, logs/).
    pub dirs: &'a [&'a str],
    /// Extractor outputs: files named PREFIX* ending in one of `suffixes`.
    pub prefixes: &'a [&'a str],
    pub suffixes: &'a [&'a str],
}

/// Files of `parity frames` (and of `parity diff`, a subset).
pub const FRAMES_ARTEFACTS: Artefacts<'static> = Artefacts {
    files: &["per_frame.csv", "summary.json", "summary.md", "diff.svg", "block_orders.csv", "emulated_vs_real.csv", "junit.xml"],
    dirs: &["counts", "logs"],
    prefixes: &["cpu.", "cuda-"],
    suffixes: &[".json", ".out", ".failed"],
};

/// Files of `parity diff`: its reports only (its inputs may live in the same directory).
pub const DIFF_ARTEFACTS: Artefacts<'static> =
    Artefacts { files: &["per_frame.csv", "summary.json", "summary.md", "diff.svg", "junit.xml"], dirs: &[], prefixes: &[], suffixes: &[] };

/// Removes what an earlier run of the same command left in `dir`, so that nothing in
/// it can be read as the result of this run if this one fails: a failed run leaves
/// only its error summary, its logs and the outputs it wrote itself (the output of a
/// failed extractor renamed to `*.failed`). Files of other names are not touched.
pub fn clear_previous(dir: &Path, a: &Artefacts) -> Result<()> {
    let Ok(rd) = std::fs::read_dir(dir) else { return Ok(()) };
    for e in rd.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let p = e.path();
        let is_dir = e.file_type().map(|t| t.is_dir()).unwrap_or(false);
        let ours = if is_dir {
            a.dirs.contains(&name.as_str())
        } else {
            a.files.contains(&name.as_str())
                || (a.prefixes.iter().any(|x| name.starts_with(x)) && a.suffixes.iter().any(|x| name.ends_with(x)))
                || (name.starts_with('.') && name.contains(".tmp"))
        };
        if !ours {
            continue;
        }
        let r = if is_dir { std::fs::remove_dir_all(&p) } else { std::fs::remove_file(&p) };
        r.with_context(|| format!("cannot remove {} left by an earlier run", p.display()))?;
    }
    Ok(())
}

/// What `guarded` writes as `summary.json` before a command does anything else: a run
/// that is killed, or still running, reads as neither a pass nor a failure.
fn placeholder(command: &str) -> Json {
    json!({
        "schema": "simtwin-parity-summary/1",
        "command": command,
        "verdict": "incomplete",
        "exit_code": Json::Null,
        "error": "this run has not finished: it is still running, or parity was killed before it wrote its results",
    })
}

/// Runs command `command` whose reports go to `dir` (files named by `artefacts`), so
/// that whichever way it ends the directory reads as what happened: before anything
/// else (argument checks included) the files of an earlier run are removed and a
/// summary saying "incomplete" is written; an error (or a panic) leaves an error
/// summary; a command that succeeds without writing a summary of its own (bench) leaves
/// none.
pub fn guarded(command: &str, dir: &Path, artefacts: &Artefacts, run: impl FnOnce() -> Result<i32>) -> Result<i32> {
    let prepared = (|| -> Result<()> {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create report directory {}", dir.display()))?;
        clear_previous(dir, artefacts)?;
        write_json(&dir.join("summary.json"), &placeholder(command))
    })();
    let r = prepared.and_then(|_| match std::panic::catch_unwind(std::panic::AssertUnwindSafe(run)) {
        Ok(r) => r,
        Err(p) => {
            let what = p.downcast_ref::<String>().cloned().or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string())).unwrap_or_default();
            Err(anyhow::anyhow!("internal error in parity {command}: {what}"))
        }
    });
    match &r {
        Err(e) => write_error(dir, command, crate::exit::exit_code_of(e), &format!("{e:#}"), Map::new()),
        Ok(_) => {
            let s = dir.join("summary.json");
            let still = crate::input::read_text(&s, "summary").ok().and_then(|t| serde_json::from_str::<Json>(&t).ok())
                == Some(placeholder(command));
            if still {
                let _ = std::fs::remove_file(&s);
            }
        }
    }
    r
}

/// Writes the error summary of a command-line error (`parity frames -W x`): the command
/// never ran, and what an earlier run left in its report directory must not read as
/// this run's result. Only an existing directory is touched.
pub fn command_line_error(command: &str, dir: &Path, artefacts: &Artefacts, message: &str) {
    if dir.is_dir() && clear_previous(dir, artefacts).is_ok() {
        write_error(dir, command, 2, message, Map::new());
    }
}

/// Renames the output of a failed extractor run to `NAME.failed` (it is not a result).
pub fn mark_failed(output: &Path) -> Option<std::path::PathBuf> {
    if !output.exists() {
        return None;
    }
    let name = output.file_name()?.to_string_lossy().into_owned();
    let to = output.with_file_name(format!("{name}.failed"));
    std::fs::rename(output, &to).ok().map(|_| to)
}

/// Writes an error summary (exit code 2 or 77) so that a failed run still leaves a report.
pub fn write_error(dir: &Path, command: &str, code: i32, msg: &str, extra: Map<String, Json>) {
    let mut root = Map::new();
    root.insert("schema".into(), json!("simtwin-parity-summary/1"));
    root.insert("command".into(), json!(command));
    root.insert("verdict".into(), json!(if code == 77 { "skipped" } else { "error" }));
    root.insert("exit_code".into(), json!(code));
    root.insert("error".into(), json!(msg));
    for (k, v) in extra {
        root.insert(k, v);
    }
    if std::fs::create_dir_all(dir).is_ok() {
        let root = Json::Object(root);
        let cases: Vec<crate::junit::Case> = crate::junit::error_case(command, "", &root).into_iter().collect();
        let _ = crate::junit::write(
            &dir.join("junit.xml"),
            &format!("parity {command}"),
            &[crate::junit::Suite { name: format!("parity {command}"), cases, time: None }],
        );
        let _ = write_atomic(
            &dir.join("summary.md"),
            format!(
                "# parity {command}\n\n**Verdict: {}** (exit code {code})\n\n```\n{msg}\n```\n",
                if code == 77 { "SKIPPED" } else { "ERROR" }
            ),
        );
        let _ = write_json(&dir.join("summary.json"), &root);
    }
}
