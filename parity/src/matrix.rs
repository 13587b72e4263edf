//! The cells of a `parity frames` run: clips (one pair, or a clip list with `--clips`)
//! x features (one extractor run of them all, or one each with `--per-feature`). Each
//! cell is compared on its own and has its own report directory (`OUT/cells/CLIP/FEATURES`
//! in a matrix; `OUT` itself for the one cell of a plain run).
//!
//! Clip list (`--clips FILE`): CSV with a header row; columns `name`, `reference`,
//! `distorted`, `width`, `height` (required), `bitdepth` (8), `pixfmt` (420), `frames`
//! (every frame); paths relative to the list's directory, e.g.
//!
//! ```text
//! name,reference,distorted,width,height,bitdepth
//! ramp-1080p,clips/ramp.yuv,clips/ramp-dis.yuv,1920,1080,10
//! ```

use crate::common::Clip;
use anyhow::{bail, Context, Result};
use serde_json::{json, Value as Json};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// Columns a clip list may have.
const COLUMNS: &[&str] = &["name", "reference", "distorted", "width", "height", "bitdepth", "pixfmt", "frames"];

/// Reads a clip list (see the module doc); errors name the file, row and column.
pub fn read_clip_list(path: &Path) -> Result<Vec<Clip>> {
    let text = crate::input::read(path, "clip list")?;
    parse_clip_list(&text, path)
}

/// A clip list's bytes (read from `path`: errors name it, clip paths are relative to its
/// directory).
pub fn parse_clip_list(text: &[u8], path: &Path) -> Result<Vec<Clip>> {
    let base = path.parent().map(Path::to_path_buf).unwrap_or_default();
    let mut r = csv::ReaderBuilder::new().trim(csv::Trim::All).comment(Some(b'#')).from_reader(text);
    let head: Vec<String> = r.headers().with_context(|| format!("{}: no header row", path.display()))?.iter().map(String::from).collect();
    for h in &head {
        if !COLUMNS.contains(&h.as_str()) {
            bail!("{}: unknown column {h:?} (columns: {})", path.display(), COLUMNS.join(", "));
        }
    }
    for need in &COLUMNS[..5] {
        if !head.iter().any(|h| h == need) {
            bail!("{}: the column {need:?} is missing", path.display());
        }
    }
    let mut clips: Vec<Clip> = Vec::new();
    let mut names = BTreeSet::new();
    for (i, rec) in r.records().enumerate() {
        let row = i + 2;
        let rec = rec.with_context(|| format!("{}: row {row}", path.display()))?;
        let get = |c: &str| head.iter().position(|h| h == c).and_then(|k| rec.get(k)).filter(|v| !v.is_empty());
        let need = |c: &str| get(c).with_context(|| format!("{}: row {row}: {c} is empty", path.display()));
        let num = |c: &str, v: &str| {
            v.parse::<u64>()
                .ok()
                .filter(|x| *x > 0)
                .with_context(|| format!("{}: row {row}: {c} {v:?} is not a positive number", path.display()))
        };
        let name = need("name")?.to_string();
        if !name.bytes().all(|b| b.is_ascii_alphanumeric() || b"-_+.".contains(&b)) || name.starts_with('.') {
            bail!("{}: row {row}: clip name {name:?}: use letters, digits and - _ + . only", path.display());
        }
        if !names.insert(name.clone()) {
            bail!("{}: row {row}: clip name {name:?} appears twice", path.display());
        }
        let bitdepth = match get("bitdepth").unwrap_or("8") {
            b @ ("8" | "10" | "12" | "16") => b.parse().unwrap_or(8),
            b => bail!("{}: row {row}: bitdepth {b:?} (8, 10, 12 or 16)", path.display()),
        };
        let pixfmt = match get("pixfmt").unwrap_or("420") {
            p @ ("420" | "422" | "444") => p.to_string(),
            p => bail!("{}: row {row}: pixfmt {p:?} (420, 422 or 444)", path.display()),
        };
        clips.push(Clip {
            name,
            reference: base.join(need("reference")?),
            distorted: base.join(need("distorted")?),
            width: num("width", need("width")?)? as u32,
            height: num("height", need("height")?)? as u32,
            bitdepth,
            pixfmt,
            frames: get("frames").map(|f| num("frames", f)).transpose()?,
        });
    }
    if clips.is_empty() {
        bail!("{}: the clip list holds no clip", path.display());
    }
    Ok(clips)
}

/// A name fit for a directory: letters, digits and `-_+.,` kept, anything else `_`.
pub fn slug(s: &str) -> String {
    let t: String = s.chars().map(|c| if c.is_ascii_alphanumeric() || "-_+.,".contains(c) { c } else { '_' }).collect();
    if t.is_empty() || t.starts_with('.') {
        format!("_{t}")
    } else {
        t
    }
}

/// One cell: a clip and the features of one extractor run.
#[derive(Debug, Clone)]
pub struct Cell {
    /// `CLIP/FEATURES` in a matrix, empty for the one cell of a plain run.
    pub id: String,
    pub clip: Clip,
    /// The features of its extractor runs (None: the extractor's default).
    pub features: Option<String>,
    /// Its report directory.
    pub dir: PathBuf,
    /// Frames it compares.
    pub frames: u64,
}

/// The cells of `clips` x features, in the run's order (clip-major). `matrix`: each cell
/// in `out/cells/CLIP/FEATURES`; else the one cell in `out`.
pub fn cells(clips: &[(Clip, u64)], features: Option<&str>, per_feature: bool, out: &Path, matrix: bool) -> Vec<Cell> {
    let sets: Vec<Option<String>> = match features {
        Some(f) if per_feature => f.split(',').map(str::trim).filter(|x| !x.is_empty()).map(|x| Some(x.to_string())).collect(),
        f => vec![f.map(String::from)],
    };
    let mut v = Vec::new();
    for (clip, frames) in clips {
        for f in &sets {
            let fname = slug(f.as_deref().unwrap_or("default"));
            let (id, dir) = if matrix {
                (format!("{}/{fname}", clip.name), out.join("cells").join(&clip.name).join(&fname))
            } else {
                (String::new(), out.to_path_buf())
            };
            v.push(Cell { id, clip: clip.clone(), features: f.clone(), dir, frames: *frames });
        }
    }
    v
}

/// The report of a matrix over its cells (each with its own report in its directory):
/// `summary.json` (schema `simtwin-parity-matrix/1`), `summary.md` and `junit.xml` (one
/// suite per cell) in `out`; prints a table. Returns the run's exit code: 2 if a cell
/// failed to run, else 1 if a cell has differences, else 0 (77 when every cell was a skip).
pub fn write_report(out: &Path, cells: &[(String, PathBuf, i32, Json)]) -> Result<i32> {
    let codes: Vec<i32> = cells.iter().map(|c| c.2).collect();
    let code = if codes.contains(&2) {
        2
    } else if codes.contains(&1) {
        1
    } else if !codes.is_empty() && codes.iter().all(|c| *c == 77) {
        77
    } else {
        0
    };
    let names = |m: &Json, pred: &dyn Fn(&Json) -> bool| -> Vec<String> {
        m.as_object().into_iter().flatten().filter(|(_, v)| pred(v)).map(|(k, _)| k.clone()).collect()
    };
    let rows: Vec<Json> = cells
        .iter()
        .map(|(id, dir, code, s)| {
            json!({
                "cell": id,
                "dir": dir.strip_prefix(out).unwrap_or(dir),
                "verdict": s["verdict"],
                "exit_code": code,
                "frames": s["frames"],
                "identical_frames": s["identical_frames"],
                "metrics_beyond_tolerance": names(&s["metrics"], &|m| m["beyond_tolerance"].as_u64().unwrap_or(0) > 0),
                "hazards": s["hazards"]["count"],
                "block_orders_changed": names(&s["block_orders"]["metrics_changed"], &|_| true),
                "error": s["error"],
            })
        })
        .collect();
    let count = |v: &str| rows.iter().filter(|r| r["verdict"] == v).count();
    let summary = json!({
        "schema": "simtwin-parity-matrix/1",
        "command": "frames",
        "verdict": match code { 0 => "parity", 1 => "differences", 77 => "skipped", _ => "error" },
        "exit_code": code,
        "cells": rows,
        "totals": {"cells": cells.len(), "parity": count("parity"), "differences": count("differences"), "errors": count("error"), "skipped": count("skipped")},
    });
    let mut md = format!(
        "# parity frames: {} cells\n\n**Verdict: {}** (exit code {code}): {} at parity, {} with differences, {} errors.\n\n| cell | verdict | identical frames | beyond tolerance | hazards | order-dependent |\n|---|---|---|---|---|---|\n",
        cells.len(),
        summary["verdict"].as_str().unwrap_or("?").to_uppercase(),
        count("parity"),
        count("differences"),
        count("error")
    );
    println!("{:<40} {:<12} {:>10}  beyond tolerance / error", "cell", "verdict", "identical");
    for r in &rows {
        let show = |v: &Json| v.as_array().map(|a| a.iter().filter_map(|x| x.as_str()).collect::<Vec<_>>().join(", ")).unwrap_or_default();
        let beyond = if r["error"].is_string() {
            r["error"].as_str().unwrap_or("").lines().next().unwrap_or("").to_string()
        } else {
            show(&r["metrics_beyond_tolerance"])
        };
        let ident = format!(
            "{}/{}",
            r["identical_frames"].as_u64().map(|x| x.to_string()).unwrap_or("-".into()),
            r["frames"].as_u64().map(|x| x.to_string()).unwrap_or("-".into())
        );
        md.push_str(&format!(
            "| {} | {} | {ident} | {} | {} | {} |\n",
            r["cell"].as_str().unwrap_or(""),
            r["verdict"].as_str().unwrap_or(""),
            beyond.replace('|', "\\|"),
            r["hazards"].as_u64().unwrap_or(0),
            show(&r["block_orders_changed"])
        ));
        println!(
            "{:<40} {:<12} {:>10}  {beyond}",
            r["cell"].as_str().unwrap_or(""),
            r["verdict"].as_str().unwrap_or("").to_uppercase(),
            ident
        );
    }
    md.push_str("\nEach cell's report (per_frame.csv, summary.md, summary.json, diff.svg) is in cells/CLIP/FEATURES/.\n");
    crate::report::write_atomic(&out.join("summary.md"), md)?;
    let suites: Vec<crate::junit::Suite> = cells
        .iter()
        .map(|(id, _, _, s)| crate::junit::Suite {
            name: format!("parity frames {id}"),
            cases: crate::junit::frames_cases(id, s),
            time: crate::junit::runs_time(s),
        })
        .collect();
    crate::junit::write(&out.join("junit.xml"), "parity frames", &suites)?;
    crate::report::write_json(&out.join("summary.json"), &summary)?;
    println!("verdict: {} (exit {code}); reports in {}", summary["verdict"].as_str().unwrap_or("?").to_uppercase(), out.display());
    Ok(code)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clip_lists_are_read_and_checked() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("clips.csv");
        std::fs::write(&p, "# the set\nname, reference, distorted, width, height, bitdepth, frames\na,a.yuv,a-dis.yuv,16,8,10,3\nb,/abs/b.yuv,b-dis.yuv,32,32,,\n").unwrap();
        let c = read_clip_list(&p).unwrap();
        assert_eq!(c.len(), 2);
        assert_eq!(
            (c[0].reference.clone(), c[0].bitdepth, c[0].frames, c[0].pixfmt.as_str()),
            (d.path().join("a.yuv"), 10, Some(3), "420")
        );
        assert_eq!((c[1].reference.clone(), c[1].bitdepth, c[1].frames), (PathBuf::from("/abs/b.yuv"), 8, None));
        for (text, why) in [
            ("name,reference,distorted,width\n", "\"height\" is missing"),
            ("name,reference,distorted,width,height,fps\n", "unknown column \"fps\""),
            ("name,reference,distorted,width,height\na,x,y,0,8\n", "row 2: width \"0\""),
            ("name,reference,distorted,width,height\na,x,y,8,8\na,x,y,8,8\n", "row 3: clip name \"a\" appears twice"),
            ("name,reference,distorted,width,height\na/b,x,y,8,8\n", "use letters"),
            ("name,reference,distorted,width,height,bitdepth\na,x,y,8,8,9\n", "bitdepth \"9\""),
            ("name,reference,distorted,width,height\n", "holds no clip"),
        ] {
            std::fs::write(&p, text).unwrap();
            let e = format!("{:#}", read_clip_list(&p).unwrap_err());
            assert!(e.contains(why) && e.contains("clips.csv"), "{text}: {e}");
        }
    }

    #[test]
    fn cells_are_clips_times_features() {
        let clip = |n: &str| (Clip { name: n.into(), ..Default::default() }, 4);
        let out = Path::new("/o");
        let c = cells(&[clip("a"), clip("b")], Some("sse,topk"), true, out, true);
        assert_eq!(c.iter().map(|c| c.id.as_str()).collect::<Vec<_>>(), ["a/sse", "a/topk", "b/sse", "b/topk"]);
        assert_eq!(c[1].dir, Path::new("/o/cells/a/topk"));
        let c = cells(&[clip("a")], Some("sse,topk"), false, out, false);
        assert_eq!((c.len(), c[0].id.as_str(), c[0].dir.as_path(), c[0].features.as_deref()), (1, "", out, Some("sse,topk")));
        assert_eq!(cells(&[clip("a")], None, true, out, true)[0].id, "a/default");
        assert_eq!(slug("x y/z"), "x_y_z");
    }
}
