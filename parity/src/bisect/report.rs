//! The bisect report: summary.json (schema `simtwin-parity-summary/1`, command
//! `bisect`), summary.md, launches.csv (every aligned pair), frames.csv (--per-frame).

use super::compare::{Bisection, BufDiff, ElementDiff, FirstDiff};
use super::load::{Event, Trace};
use crate::report::{write_atomic, write_json};
use anyhow::Result;
use serde_json::{json, Value as Json};
use std::path::Path;

fn buf_json(b: &BufDiff) -> Json {
    json!({"name": b.name, "kind": b.kind, "size": b.size, "params": b.params, "hash_a": b.hash_a, "hash_b": b.hash_b, "last_agreed": b.last_agreed})
}

fn elem_json(e: &ElementDiff) -> Json {
    json!({"type": e.elem, "index": e.index, "byte_offset": e.byte_offset, "a": e.a, "b": e.b, "differing": e.differing, "of": e.total,
           "x": e.xy.map(|p| p.0), "y": e.xy.map(|p| p.1)})
}

fn event_json(e: &Event) -> Json {
    match e {
        Event::Launch(l) => json!({"launch": l.n, "kernel": l.kernel, "frame": l.frame, "grid": l.grid, "block": l.block}),
        Event::Copy(c) => json!({"copy": c.n, "bytes": c.bytes, "src": c.src, "frame": c.frame}),
    }
}

fn first_json(f: &FirstDiff) -> Json {
    json!({
        "a": event_json(&f.a),
        "b": event_json(&f.b),
        "same_kernel": f.same_kernel,
        "buffer": f.buffer.as_ref().map(buf_json),
        "other_buffers": f.other_buffers.iter().map(buf_json).collect::<Vec<_>>(),
        "element": f.element.as_ref().map(elem_json),
        "element_note": f.element_note,
    })
}

fn trace_json(t: &Trace) -> Json {
    json!({"path": t.path.display().to_string(), "driver": t.header.driver, "frame_rule": t.header.frame_rule, "settings": t.header.settings,
           "events": t.events.len(), "complete": t.end.is_some(),
           "end": t.end.as_ref().map(|e| json!({"launches": e.launches, "traced_launches": e.traced_launches, "copies": e.copies, "frames": e.frames,
                                                 "hashed_bytes": e.hashed_bytes, "trace_us": e.trace_us, "copy_back_us": e.copy_back_us}))})
}

/// Writes summary.json, summary.md, launches.csv (and frames.csv).
pub fn write(dir: &Path, la: &str, lb: &str, ta: &Trace, tb: &Trace, r: &Bisection, code: i32) -> Result<()> {
    let verdict = if code == 0 { "agree" } else { "diverge" };
    let summary = json!({
        "schema": "simtwin-parity-summary/1",
        "command": "bisect",
        "verdict": verdict,
        "exit_code": code,
        "labels": {"a": la, "b": lb},
        "traces": {"a": trace_json(ta), "b": trace_json(tb)},
        "compared": r.compared,
        "agreed": r.agreed,
        "first_divergence": r.first.as_ref().map(first_json),
        "last_agreed": r.last_agreed,
        "sequences_diverge": !r.sequence.is_empty(),
        "sequence_divergences": r.sequence.iter().map(|s| json!({"frame": s.frame, "after": s.after, "a": s.a, "b": s.b})).collect::<Vec<_>>(),
        "first_argument_difference": r.first_args.as_ref().map(|d| json!({"a": d.a, "b": d.b, "param": d.param, "value_a": d.value_a, "value_b": d.value_b})),
        "frames": r.frames.iter().map(|f| json!({"frame": f.frame, "events_a": f.events_a, "events_b": f.events_b, "sequence_divergences": f.sequence_divergences, "first": f.first})).collect::<Vec<_>>(),
        "buffer_set_mismatches": r.name_mismatches,
        "unreadable_buffers": r.unreadable,
        "notes": r.notes,
    });
    let mut csv = String::from("frame,a,b,status\n");
    for row in &r.rows {
        let q = |s: &Option<String>| format!("\"{}\"", s.clone().unwrap_or_default().replace('"', "\"\""));
        csv.push_str(&format!("{},{},{},{}\n", row.frame.map(|f| f.to_string()).unwrap_or_default(), q(&row.a), q(&row.b), row.status));
    }
    write_atomic(&dir.join("launches.csv"), csv)?;
    if !r.frames.is_empty() {
        let mut f = String::from("frame,events_a,events_b,sequence_divergences,first_divergence\n");
        for x in &r.frames {
            f.push_str(&format!(
                "{},{},{},{},\"{}\"\n",
                x.frame,
                x.events_a,
                x.events_b,
                x.sequence_divergences,
                x.first.clone().unwrap_or_default().replace('"', "\"\"")
            ));
        }
        write_atomic(&dir.join("frames.csv"), f)?;
    }
    write_atomic(&dir.join("summary.md"), markdown(la, lb, ta, tb, r, code))?;
    write_json(&dir.join("summary.json"), &summary)
}

fn markdown(la: &str, lb: &str, ta: &Trace, tb: &Trace, r: &Bisection, code: i32) -> String {
    let mut m = format!("# parity bisect\n\n**Verdict: {}** (exit code {code})\n\n", if code == 0 { "AGREE" } else { "DIVERGE" });
    m.push_str(&format!(
        "- A ({la}): `{}`, {}, {} events{}\n",
        ta.path.display(),
        ta.header.driver,
        ta.events.len(),
        if ta.end.is_none() { ", cut short" } else { "" }
    ));
    m.push_str(&format!(
        "- B ({lb}): `{}`, {}, {} events{}\n",
        tb.path.display(),
        tb.header.driver,
        tb.events.len(),
        if tb.end.is_none() { ", cut short" } else { "" }
    ));
    m.push_str(&format!("- aligned pairs compared: {}, agreeing: {}\n\n", r.compared, r.agreed));
    match &r.first {
        None => m.push_str("No written buffer or device-to-host copy differs.\n\n"),
        Some(f) => {
            m.push_str(&format!(
                "## First divergence\n\n- A: {}\n- B: {}{}\n",
                f.a.describe(),
                f.b.describe(),
                if f.same_kernel { "" } else { " (a different kernel at this place)" }
            ));
            if let Some(b) = &f.buffer {
                m.push_str(&format!(
                    "- buffer **{}** ({}, {} bytes, parameter(s) {:?}): hash A {} / B {}; {}\n",
                    b.name,
                    b.kind,
                    b.size,
                    b.params,
                    b.hash_a,
                    b.hash_b,
                    match &b.last_agreed {
                        Some(p) => format!("it last agreed at {p}"),
                        None => "not seen agreeing before".into(),
                    }
                ));
            }
            for o in &f.other_buffers {
                m.push_str(&format!("- also differs: {} ({} bytes)\n", o.name, o.size));
            }
            match &f.element {
                Some(e) => m.push_str(&format!(
                    "- first differing element: index {} ({} byte offset {}{}): A = {}, B = {}; {} of {} elements differ\n",
                    e.index,
                    e.elem,
                    e.byte_offset,
                    e.xy.map(|(x, y)| format!(", x {x} y {y}")).unwrap_or_default(),
                    e.a,
                    e.b,
                    e.differing,
                    e.total
                )),
                None => m.push_str(&format!("- element: {}\n", f.element_note.as_deref().unwrap_or("unknown"))),
            }
            m.push_str(&format!("- last launch that still agreed: {}\n\n", r.last_agreed.as_deref().unwrap_or("(none)")));
        }
    }
    if !r.sequence.is_empty() {
        m.push_str("## Launch sequences diverge\n\n| frame | after | only / instead in A | only / instead in B |\n|---|---|---|---|\n");
        for s in r.sequence.iter().take(50) {
            let cut = |v: &Vec<String>| if v.len() > 4 { format!("{} ... ({} events)", v[..4].join("; "), v.len()) } else { v.join("; ") };
            m.push_str(&format!(
                "| {} | {} | {} | {} |\n",
                s.frame.map(|f| f.to_string()).unwrap_or_default(),
                s.after.as_deref().unwrap_or("start"),
                cut(&s.a),
                cut(&s.b)
            ));
        }
        m.push('\n');
    }
    if let Some(d) = &r.first_args {
        m.push_str(&format!(
            "First value-argument difference: {} / {}: parameter {}: A = {}, B = {}\n\n",
            d.a, d.b, d.param, d.value_a, d.value_b
        ));
    }
    if !r.frames.is_empty() {
        m.push_str("## Per frame\n\n| frame | events A | events B | sequence divergences | first divergence |\n|---|---|---|---|---|\n");
        for f in &r.frames {
            m.push_str(&format!(
                "| {} | {} | {} | {} | {} |\n",
                f.frame,
                f.events_a,
                f.events_b,
                f.sequence_divergences,
                f.first.as_deref().unwrap_or("agree")
            ));
        }
        m.push('\n');
    }
    for t in [ta, tb] {
        if let Some(e) = &t.end {
            m.push_str(&format!(
                "Trace `{}`: {} launches ({} traced), {} copies, {} frames, {} bytes hashed, tracing took {} µs{}.\n\n",
                t.path.display(),
                e.launches,
                e.traced_launches,
                e.copies,
                e.frames,
                e.hashed_bytes,
                e.trace_us,
                if e.copy_back_us > 0 {
                    format!(" (of which {} µs synchronising and copying back)", e.copy_back_us)
                } else {
                    String::new()
                }
            ));
        }
    }
    if !r.notes.is_empty() {
        m.push_str("## Notes\n\n");
        for n in &r.notes {
            m.push_str(&format!("- {n}\n"));
        }
    }
    m
}

/// The short version on stdout.
pub fn print(dir: &Path, la: &str, lb: &str, r: &Bisection) {
    match &r.first {
        None if r.sequence.is_empty() => println!("bisect: {la} and {lb} agree ({} aligned pairs)", r.compared),
        None => println!(
            "bisect: every compared pair agrees, but the launch sequences diverge ({} place(s)); first: A [{}] / B [{}]",
            r.sequence.len(),
            r.sequence[0].a.join("; "),
            r.sequence[0].b.join("; ")
        ),
        Some(f) => {
            println!("bisect: first divergence at A {} / B {}", f.a.describe(), f.b.describe());
            if let Some(b) = &f.buffer {
                println!("  buffer {} ({} bytes)", b.name, b.size);
            }
            match &f.element {
                Some(e) => println!(
                    "  first differing element {} ({}{}): {la} = {}, {lb} = {} ({} of {} differ)",
                    e.index,
                    e.elem,
                    e.xy.map(|(x, y)| format!(", x {x} y {y}")).unwrap_or_default(),
                    e.a,
                    e.b,
                    e.differing,
                    e.total
                ),
                None => println!("  element: {}", f.element_note.as_deref().unwrap_or("unknown")),
            }
            println!("  last agreeing: {}", r.last_agreed.as_deref().unwrap_or("(none)"));
            if !r.sequence.is_empty() {
                println!("  launch sequences diverge at {} place(s)", r.sequence.len());
            }
        }
    }
    println!("report: {}", dir.join("summary.md").display());
}
