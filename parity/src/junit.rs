//! JUnit XML, the report format GitHub (through test-report actions), GitLab (`artifacts:
//! reports: junit`) and Jenkins (the JUnit plugin) display natively: one `<testsuites>`
//! of `<testsuite>`s, each `<testcase>` passed, failed (`<failure>`: the check found a
//! difference), errored (`<error>`: the check could not run) or skipped.
//!
//! Every command builds its cases from its own summary JSON (see `cases_*` in the
//! command modules and [`crate::merge`]), so a merged report and an unsharded run write
//! the same XML, times aside.

use anyhow::Result;
use serde_json::Value as Json;
use std::fmt::Write as _;
use std::path::Path;

/// How a test case ended.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// The check passed.
    Pass,
    /// The check ran and failed: `message` in one line, `text` the details.
    Failure { message: String, text: String },
    /// The check could not run (setup error, crash).
    Error { message: String, text: String },
    /// Not run.
    Skipped { message: String },
}

/// One test case.
#[derive(Debug, Clone, PartialEq)]
pub struct Case {
    /// Dotted group (what CI systems show as the class), e.g. `parity.frames.cuda-emulated`.
    pub classname: String,
    /// The check, e.g. a metric name.
    pub name: String,
    /// Seconds, when known.
    pub time: Option<f64>,
    pub outcome: Outcome,
    /// Details shown beside a passed case too.
    pub stdout: Option<String>,
}

impl Case {
    /// A case that passes or fails with `message` / `text`.
    pub fn check(classname: impl Into<String>, name: impl Into<String>, failure: Option<(String, String)>) -> Case {
        Case {
            classname: classname.into(),
            name: name.into(),
            time: None,
            outcome: match failure {
                None => Outcome::Pass,
                Some((message, text)) => Outcome::Failure { message, text },
            },
            stdout: None,
        }
    }

    /// The same case with details beside it.
    pub fn with_stdout(mut self, s: impl Into<String>) -> Case {
        let s = s.into();
        self.stdout = (!s.is_empty()).then_some(s);
        self
    }
}

/// One test suite.
#[derive(Debug, Clone, PartialEq)]
pub struct Suite {
    pub name: String,
    pub cases: Vec<Case>,
    /// Seconds, when known.
    pub time: Option<f64>,
}

/// XML text: the five entities escaped; characters XML 1.0 cannot hold (control
/// characters other than tab, newline and carriage return, e.g. a terminal escape in a
/// program's stderr) become U+FFFD.
fn esc(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&apos;"),
            '\t' | '\n' | '\r' => o.push(c),
            c if (c as u32) < 0x20 || c == '\u{fffe}' || c == '\u{ffff}' => o.push('\u{fffd}'),
            c => o.push(c),
        }
    }
    o
}

fn time_attr(t: Option<f64>) -> String {
    t.map(|t| format!(" time=\"{t:.3}\"")).unwrap_or_default()
}

/// The document: `<testsuites name=...>` with counts summed over the suites.
pub fn render(name: &str, suites: &[Suite]) -> String {
    let count = |f: &dyn Fn(&Outcome) -> bool| suites.iter().flat_map(|s| &s.cases).filter(|c| f(&c.outcome)).count();
    let tests = count(&|_| true);
    let failures = count(&|o| matches!(o, Outcome::Failure { .. }));
    let errors = count(&|o| matches!(o, Outcome::Error { .. }));
    let skipped = count(&|o| matches!(o, Outcome::Skipped { .. }));
    let total_time: Option<f64> = suites.iter().map(|s| s.time).sum();
    let mut x = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let _ = writeln!(
        x,
        "<testsuites name=\"{}\" tests=\"{tests}\" failures=\"{failures}\" errors=\"{errors}\" skipped=\"{skipped}\"{}>",
        esc(name),
        time_attr(total_time)
    );
    for s in suites {
        let n = |f: &dyn Fn(&Outcome) -> bool| s.cases.iter().filter(|c| f(&c.outcome)).count();
        let _ = writeln!(
            x,
            "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{}\" errors=\"{}\" skipped=\"{}\"{}>",
            esc(&s.name),
            s.cases.len(),
            n(&|o| matches!(o, Outcome::Failure { .. })),
            n(&|o| matches!(o, Outcome::Error { .. })),
            n(&|o| matches!(o, Outcome::Skipped { .. })),
            time_attr(s.time)
        );
        for c in &s.cases {
            let _ = write!(x, "    <testcase classname=\"{}\" name=\"{}\"{}", esc(&c.classname), esc(&c.name), time_attr(c.time));
            if c.outcome == Outcome::Pass && c.stdout.is_none() {
                x.push_str("/>\n");
                continue;
            }
            x.push_str(">\n");
            match &c.outcome {
                Outcome::Pass => {}
                Outcome::Failure { message, text } => {
                    let _ = writeln!(x, "      <failure message=\"{}\" type=\"difference\">{}</failure>", esc(message), esc(text));
                }
                Outcome::Error { message, text } => {
                    let _ = writeln!(x, "      <error message=\"{}\" type=\"error\">{}</error>", esc(message), esc(text));
                }
                Outcome::Skipped { message } => {
                    let _ = writeln!(x, "      <skipped message=\"{}\"/>", esc(message));
                }
            }
            if let Some(o) = &c.stdout {
                let _ = writeln!(x, "      <system-out>{}</system-out>", esc(o));
            }
            x.push_str("    </testcase>\n");
        }
        x.push_str("  </testsuite>\n");
    }
    x.push_str("</testsuites>\n");
    x
}

/// Writes `junit.xml` (atomically).
pub fn write(path: &Path, name: &str, suites: &[Suite]) -> Result<()> {
    crate::atomic_write::write_atomic(path, render(name, suites))
}

/// A JSON value as one short line (strings without quotes).
fn show(v: &Json) -> String {
    match v {
        Json::String(s) => s.clone(),
        Json::Null => "-".into(),
        x => x.to_string(),
    }
}

/// `frames.<cell>`: the class prefix of a cell (dots would split it into packages).
fn class(parts: &[&str]) -> String {
    parts.iter().filter(|p| !p.is_empty()).map(|p| p.replace('.', "_")).collect::<Vec<_>>().join(".")
}

/// The one case of a command that ended with an error (exit 2) or was skipped (77).
pub fn error_case(command: &str, cell: &str, summary: &Json) -> Option<Case> {
    let msg = summary["error"].as_str()?;
    let first = msg.lines().next().unwrap_or("").to_string();
    let outcome = if summary["exit_code"] == 77 {
        Outcome::Skipped { message: first }
    } else {
        Outcome::Error { message: first, text: msg.to_string() }
    };
    Some(Case { classname: class(&[command, cell]), name: "run".into(), time: None, outcome, stdout: None })
}

/// Cases of one `parity frames` summary (one cell): one per comparison x metric, the
/// hazards, one per metric under --block-orders and --device both.
pub fn frames_cases(cell: &str, s: &Json) -> Vec<Case> {
    if let Some(c) = error_case("frames", cell, s) {
        return vec![c];
    }
    let mut cases = Vec::new();
    for c in s["comparisons"].as_array().into_iter().flatten() {
        let first = &c["first_beyond_tolerance"];
        for (metric, m) in c["metrics"].as_object().into_iter().flatten() {
            let pass = m["pass"].as_bool().unwrap_or(false);
            let line = format!(
                "{}/{} frames identical, {} beyond tolerance ({}); max abs {}, max ULP {} (frame {}); first difference at frame {}",
                show(&m["identical"]),
                show(&m["frames"]),
                show(&m["beyond_tolerance"]),
                show(&m["tolerance"]),
                show(&m["max_abs"]),
                show(&m["max_ulp"]),
                show(&m["max_ulp_frame"]),
                show(&m["first_diff_frame"])
            );
            let text = if first["metric"].as_str() == Some(metric) {
                format!(
                    "{line}\nfirst beyond tolerance: frame {}: {} = {}, {} = {} ({})",
                    show(&first["frame"]),
                    show(&c["a"]),
                    show(&first["a"]),
                    show(&c["b"]),
                    show(&first["b"]),
                    show(&first["kind"])
                )
            } else {
                line.clone()
            };
            let case = Case::check(class(&["frames", cell, &show(&c["b"])]), metric.as_str(), (!pass).then(|| (line.clone(), text)));
            cases.push(if pass { case.with_stdout(line) } else { case });
        }
    }
    let h = &s["hazards"];
    if h.is_object() {
        let n = h["count"].as_u64().unwrap_or(0);
        let reports: Vec<String> = h["reports"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|r| format!("[{}] {}: {}", show(&r["kind"]), show(&r["operation"]), show(&r["message"])))
            .collect();
        let fail = h["fail"].as_bool() == Some(true);
        let case = Case::check(
            class(&["frames", cell, "driver"]),
            "hazards",
            fail.then(|| (format!("the emulated driver reported {n} hazard(s)"), reports.join("\n"))),
        );
        cases.push(if fail {
            case
        } else {
            case.with_stdout(if n > 0 {
                format!("{n} hazard(s), allowed by --allow-hazards\n{}", reports.join("\n"))
            } else {
                String::new()
            })
        });
    }
    // Calls the emulated driver answered CUDA_ERROR_NOT_SUPPORTED (a case only when there
    // were some: failed, or allowed by --allow-unsupported).
    let u = &s["unsupported"];
    if let Some(calls) = u["calls"].as_object().filter(|c| !c.is_empty()) {
        let list = calls.iter().map(|(k, n)| format!("{k} x{n}")).collect::<Vec<_>>().join(", ");
        let fail = u["fail"].as_bool() == Some(true);
        let case = Case::check(
            class(&["frames", cell, "driver"]),
            "unsupported",
            fail.then(|| (format!("unsupported entry points called: {list}"), String::new())),
        );
        cases.push(if fail { case } else { case.with_stdout(format!("{list}, allowed by --allow-unsupported")) });
    }
    let o = &s["block_orders"];
    if o.is_object() {
        let orders = o["orders"].as_array().map(|a| a.iter().map(show).collect::<Vec<_>>().join(", ")).unwrap_or_default();
        for m in o["stable_metrics"].as_array().into_iter().flatten() {
            cases.push(
                Case::check(class(&["frames", cell, "block-orders"]), show(m), None).with_stdout(format!("identical under {orders}")),
            );
        }
        for (metric, c) in o["metrics_changed"].as_object().into_iter().flatten() {
            let msg = format!(
                "changes between block orders ({orders}) on {} frame(s), max ULP {}",
                show(&c["frames_changed"]),
                show(&c["max_ulp"])
            );
            cases.push(Case::check(
                class(&["frames", cell, "block-orders"]),
                metric.as_str(),
                Some((msg.clone(), format!("{msg}; frames {}", show(&c["frames"])))),
            ));
        }
    }
    let r = &s["emulated_vs_real"];
    if r.is_object() {
        for (metric, m) in r["metrics"].as_object().into_iter().flatten() {
            let beyond = m["beyond_tolerance"].as_u64().unwrap_or(0);
            let line = format!(
                "{}/{} frames identical, max ULP {}, first difference at frame {}",
                show(&m["identical"]),
                show(&m["frames"]),
                show(&m["max_ulp"]),
                show(&m["first_diff_frame"])
            );
            cases.push(Case::check(
                class(&["frames", cell, "emulated-vs-real"]),
                metric.as_str(),
                (beyond > 0).then(|| (line.clone(), line)),
            ));
        }
    }
    cases
}

/// Seconds the runs of a frames summary took (its `runs[].elapsed_s`).
pub fn runs_time(s: &Json) -> Option<f64> {
    let v: Vec<f64> = s["runs"].as_array()?.iter().filter_map(|r| r["elapsed_s"].as_f64()).collect();
    (!v.is_empty()).then(|| v.iter().sum())
}

/// Cases of a `parity transfers` summary: one per gate (`gates`).
pub fn transfers_cases(s: &Json) -> Vec<Case> {
    if let Some(c) = error_case("transfers", "", s) {
        return vec![c];
    }
    s["gates"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|g| {
            let pass = g["pass"].as_bool().unwrap_or(false);
            let msg = show(&g["message"]);
            let case =
                Case::check(class(&["transfers", &show(&g["device"])]), show(&g["name"]), (!pass).then(|| (msg.clone(), msg.clone())));
            if pass {
                case.with_stdout(msg)
            } else {
                case
            }
        })
        .collect()
}

/// Cases of a `parity faults` summary: one per call site (a crash or a hang fails it,
/// a leak too with --fail-on-leaks; a site the run did not reach is skipped).
pub fn faults_cases(s: &Json) -> Vec<Case> {
    if let Some(c) = error_case("faults", "", s) {
        return vec![c];
    }
    let findings: Vec<String> = s["findings"].as_array().into_iter().flatten().map(show).collect();
    s["runs"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|r| {
            let at = show(&r["fail"]);
            let finding = findings.iter().find(|f| f.starts_with(&format!("{at}: ")));
            let detail = format!("{}; injected: {}; stderr: {}", show(&r["outcome"]), show(&r["injected"]), show(&r["stderr_first_line"]));
            let not_reached = r["injected"].as_str().is_some_and(|i| i.starts_with("not reached"));
            Case {
                classname: class(&["faults", &show(&r["entry_point"])]),
                name: at.clone(),
                time: r["elapsed_s"].as_f64(),
                outcome: match finding {
                    Some(f) => Outcome::Failure { message: f.clone(), text: detail.clone() },
                    None if not_reached => Outcome::Skipped { message: format!("the program did not make call {at}") },
                    None => Outcome::Pass,
                },
                stdout: finding.is_none().then_some(detail),
            }
        })
        .collect()
}

/// The case of a `parity replay` / `parity libm` summary: the range checked.
pub fn replay_cases(tool: &str, s: &Json) -> Vec<Case> {
    if let Some(c) = error_case(tool, "", s) {
        return vec![c];
    }
    let name = show(&s["function"]);
    let mis = s["misrounded"].as_u64().unwrap_or(0);
    let line = format!("{} inputs, {mis} misrounded, max ulp error {}", show(&s["inputs"]), show(&s["max_ulp_error"]));
    let fail = mis > 0 && s["require_correct_rounding"].as_bool() == Some(true);
    let first: Vec<String> = s["families"]["groups"]
        .as_array()
        .into_iter()
        .flatten()
        .take(5)
        .map(|g| format!("mantissa {} x{}: {}", show(&g["mantissa"]), show(&g["count"]), show(&g["inputs"])))
        .collect();
    let case = Case::check(
        class(&[tool, &name]),
        format!("{}..{}", show(&s["from"]), show(&s["to"])),
        fail.then(|| (line.clone(), format!("{line}\n{}", first.join("\n")))),
    );
    vec![if fail { case } else { case.with_stdout(line) }]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_counts_outcomes_and_escapes() {
        let suites = vec![Suite {
            name: "s<1>".into(),
            time: Some(1.5),
            cases: vec![
                Case::check("a.b", "m1", None),
                Case::check("a.b", "m&2", Some(("frame 3: 1 ULP".into(), "x \"y\" \u{1b}[0m".into()))),
                Case {
                    classname: "a".into(),
                    name: "e".into(),
                    time: Some(0.25),
                    outcome: Outcome::Error { message: "no".into(), text: String::new() },
                    stdout: None,
                },
                Case {
                    classname: "a".into(),
                    name: "s".into(),
                    time: None,
                    outcome: Outcome::Skipped { message: "later".into() },
                    stdout: None,
                },
                Case::check("a", "o", None).with_stdout("max ULP 0"),
            ],
        }];
        let x = render("parity", &suites);
        assert!(x.contains("<testsuites name=\"parity\" tests=\"5\" failures=\"1\" errors=\"1\" skipped=\"1\" time=\"1.500\">"), "{x}");
        assert!(x.contains("<testsuite name=\"s&lt;1&gt;\" tests=\"5\" failures=\"1\" errors=\"1\" skipped=\"1\" time=\"1.500\">"), "{x}");
        assert!(x.contains("<testcase classname=\"a.b\" name=\"m1\"/>"), "{x}");
        assert!(x.contains("<failure message=\"frame 3: 1 ULP\" type=\"difference\">x &quot;y&quot; \u{fffd}[0m</failure>"), "{x}");
        assert!(x.contains("name=\"m&amp;2\""), "{x}");
        assert!(x.contains("time=\"0.250\">\n      <error message=\"no\""), "{x}");
        assert!(x.contains("<skipped message=\"later\"/>"), "{x}");
        assert!(x.contains("<system-out>max ULP 0</system-out>"), "{x}");
        assert!(!x.chars().any(|c| (c as u32) < 0x20 && c != '\n'), "no raw control characters");
    }
}
