//! What the processes of one `simtwin run` (or one CI job under `simtwin env`) did with
//! the emulated driver, from their counters files (one per process, schema
//! `simtwin-counts/2`, read with [`crate::counts`]): processes, kernels launched,
//! transfers, unsupported calls, hazards, leaks, which modules ran as host twins and
//! which from their PTX; the findings that fail the run and the exit code they give.
//!
//! Modules: the counters file's optional `modules` list (`{"image", "mode": "twin" |
//! "ptx", "library", "kernels"}` per loaded module) is read when a driver writes it; a
//! driver that does not is reported as "not reported by this driver".

use crate::counts::{state_tag, Counters, Counts, State};
use crate::junit::{Case, Outcome, Suite};
use crate::tolerance::glob;
use anyhow::Result;
use serde_json::{json, Value as Json};
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// The checks that can fail a run, in the order their exit codes are chosen.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, clap::ValueEnum)]
pub enum Gate {
    /// An entry point the emulated driver exports but does not implement was called
    /// (it answered CUDA_ERROR_NOT_SUPPORTED): always checked (see --allow-unsupported)
    Unsupported,
    /// The executor reported a hazard: checked with --hazards error (EMU_CUDA_HAZARDS=error)
    /// or when asked for
    Hazards,
    /// Work still queued when a process ended (EMU_CUDA_ASYNC=deferred)
    NeverRan,
    /// A process left allocations, modules, streams or events behind (processes with
    /// injected failures are not counted: `parity faults` reports those)
    Leaks,
    /// No process loaded simtwin's driver (the program found another libcuda, or none)
    NoDriver,
    /// A kernel launch failed while it ran (a fault, a trap, a timeout: the context's
    /// error the program went on from, as programs that check no error do): always
    /// checked (see --allow-failed-launches)
    FailedLaunches,
}

impl Gate {
    /// The exit code of a run this gate fails (CMD itself exited 0).
    pub fn code(self) -> i32 {
        match self {
            Gate::Unsupported => 80,
            Gate::Hazards => 81,
            Gate::NeverRan => 82,
            Gate::Leaks => 83,
            Gate::NoDriver => 84,
            Gate::FailedLaunches => 85,
        }
    }
    /// As on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Gate::Unsupported => "unsupported",
            Gate::Hazards => "hazards",
            Gate::NeverRan => "never-ran",
            Gate::Leaks => "leaks",
            Gate::NoDriver => "no-driver",
            Gate::FailedLaunches => "failed-launches",
        }
    }
    const ALL: [Gate; 6] = [Gate::Unsupported, Gate::Hazards, Gate::NeverRan, Gate::Leaks, Gate::NoDriver, Gate::FailedLaunches];
}

/// Which findings fail the run.
#[derive(Debug, Clone, Default)]
pub struct Policy {
    /// Gates asked for with --fail-on (unsupported and failed launches are always on).
    pub fail_on: Vec<Gate>,
    /// Unsupported entry points that do not fail the run (`*` wildcards).
    pub allow_unsupported: Vec<String>,
    /// Kernels whose failed launches do not fail the run (`*` wildcards): a test that
    /// makes a kernel fault or trap on purpose.
    pub allow_failed_launches: Vec<String>,
    /// EMU_CUDA_HAZARDS=error was in force: every hazard fails.
    pub hazards_error: bool,
}

impl Policy {
    fn gating(&self, g: Gate) -> bool {
        match g {
            Gate::Unsupported | Gate::FailedLaunches => true,
            Gate::Hazards => self.hazards_error || self.fail_on.contains(&g),
            _ => self.fail_on.contains(&g),
        }
    }
}

/// One module as the driver reported it, summed over processes.
#[derive(Debug, Clone, PartialEq)]
pub struct ModuleRow {
    pub mode: String,
    pub image: String,
    pub library: String,
    pub kernels: u64,
    /// Loads (over every process).
    pub loads: u64,
    /// The driver's word on whether every result is the device's (None: not said).
    pub device_exact: Option<bool>,
    /// Why not, and the build's other notes.
    pub notes: Vec<String>,
}

/// One finding: what was seen, whether it fails the run.
#[derive(Debug, Clone)]
pub struct Finding {
    pub gate: Gate,
    pub fails: bool,
    pub message: String,
    pub details: Vec<String>,
}

/// The counters of every process of a run and what they say.
#[derive(Debug, Clone)]
pub struct Usage {
    pub dir: PathBuf,
    pub counts: Counts,
    /// Leaks of processes without injected failures.
    pub leaks_uninjected: u64,
    pub leak_details: Vec<String>,
    pub modules: Vec<ModuleRow>,
    /// At least one file carried a `modules` list.
    pub modules_reported: bool,
}

/// The `modules` list of one counters file, if the driver wrote one.
fn modules_of(path: &Path) -> Option<Vec<Json>> {
    let v: Json = serde_json::from_str(&crate::input::read_text(path, "counters file").ok()?).ok()?;
    v.get("modules")?.as_array().cloned()
}

fn text_of(v: Option<&Json>) -> String {
    match v {
        Some(Json::String(s)) => s.clone(),
        Some(Json::Null) | None => String::new(),
        Some(x) => x.to_string(),
    }
}

impl Usage {
    /// Reads every counters file in `dir` (a missing directory: no process).
    pub fn read(dir: &Path) -> Result<Usage> {
        let counts = if dir.is_dir() { Counts::read_dir(dir)? } else { Counts::default() };
        let mut leaks_uninjected = 0;
        let mut leak_details = Vec::new();
        let mut by_module: BTreeMap<(String, String, String), ModuleRow> = BTreeMap::new();
        let mut modules_reported = false;
        for f in &counts.files {
            let c: Counters = crate::counts::read_file(&f.path)?;
            if c.injected.is_empty() {
                leaks_uninjected += c.leaks.total();
                leak_details.extend(c.leaks.details.iter().map(|d| format!("pid {}: {d}", c.pid)));
            }
            if let Some(mods) = modules_of(&f.path) {
                modules_reported = true;
                for m in mods {
                    let (mode, image, library) = (text_of(m.get("mode")), text_of(m.get("image")), text_of(m.get("library")));
                    let kernels = m.get("kernels").and_then(Json::as_u64).unwrap_or(0);
                    let device_exact = m.get("device_exact").and_then(Json::as_bool);
                    let notes: Vec<String> =
                        m.get("notes").and_then(Json::as_array).map(|a| a.iter().map(|n| text_of(Some(n))).collect()).unwrap_or_default();
                    let row = by_module.entry((mode.clone(), image.clone(), library.clone())).or_insert(ModuleRow {
                        mode,
                        image,
                        library,
                        kernels,
                        loads: 0,
                        device_exact,
                        notes: notes.clone(),
                    });
                    row.loads += 1;
                    row.kernels = row.kernels.max(kernels);
                    for n in notes {
                        if !row.notes.contains(&n) {
                            row.notes.push(n);
                        }
                    }
                }
            }
        }
        Ok(Usage {
            dir: dir.to_path_buf(),
            counts,
            leaks_uninjected,
            leak_details,
            modules: by_module.into_values().collect(),
            modules_reported,
        })
    }

    fn total(&self) -> &Counters {
        &self.counts.total
    }

    /// Unsupported calls not allowed by the policy, and those allowed.
    fn unsupported(&self, p: &Policy) -> (BTreeMap<String, u64>, BTreeMap<String, u64>) {
        split_allowed(&self.total().unsupported, &p.allow_unsupported)
    }

    /// Everything worth a line, failing or not, in gate order.
    pub fn findings(&self, p: &Policy) -> Vec<Finding> {
        let t = self.total();
        let mut v = Vec::new();
        let (bad, allowed) = self.unsupported(p);
        if !bad.is_empty() {
            v.push(Finding {
                gate: Gate::Unsupported,
                fails: true,
                message: format!(
                    "{} call(s) of entry points the emulated driver does not implement (they answered CUDA_ERROR_NOT_SUPPORTED): {}",
                    bad.values().sum::<u64>(),
                    tally(bad)
                ),
                details: vec![],
            });
        }
        if !allowed.is_empty() {
            v.push(Finding {
                gate: Gate::Unsupported,
                fails: false,
                message: format!("allowed unsupported calls (--allow-unsupported): {}", tally(allowed)),
                details: vec![],
            });
        }
        if !t.hazards.is_empty() {
            let mut kinds: BTreeMap<&str, u64> = BTreeMap::new();
            for h in &t.hazards {
                *kinds.entry(h.kind.as_str()).or_default() += h.occurrences.max(1);
            }
            v.push(Finding {
                gate: Gate::Hazards,
                fails: p.gating(Gate::Hazards),
                message: format!(
                    "{} hazard report(s){}: {}",
                    t.hazards.len(),
                    if p.hazards_error { " (EMU_CUDA_HAZARDS=error)" } else { "" },
                    tally(kinds)
                ),
                details: t
                    .hazards
                    .iter()
                    .take(20)
                    .map(|h| {
                        format!(
                            "[{}] kernel {} block ({},{},{}): {}: {}",
                            h.kind, h.kernel, h.block[0], h.block[1], h.block[2], h.operation, h.message
                        )
                    })
                    .collect(),
            });
        }
        if !t.never_ran.is_empty() {
            v.push(Finding {
                gate: Gate::NeverRan,
                fails: p.gating(Gate::NeverRan),
                message: format!("{} piece(s) of asynchronous work never ran (still queued when a process ended)", t.never_ran.len()),
                details: t.never_ran.iter().take(20).cloned().collect(),
            });
        }
        if self.leaks_uninjected > 0 {
            v.push(Finding {
                gate: Gate::Leaks,
                fails: p.gating(Gate::Leaks),
                message: format!("{} object(s) leaked (allocations, pinned memory, modules, streams, events)", self.leaks_uninjected),
                details: self.leak_details.iter().take(20).cloned().collect(),
            });
        }
        if self.counts.files.is_empty() {
            v.push(Finding {
                gate: Gate::NoDriver,
                fails: p.gating(Gate::NoDriver),
                message: "no process loaded simtwin's driver (no counters file): the command did not use CUDA, or found another libcuda.so.1 (an RPATH, a dlopen of a full path, a setuid program, a test runner that clears LD_LIBRARY_PATH)".into(),
                details: vec![],
            });
        }
        let (bad, allowed) = split_allowed(&t.failed_launches, &p.allow_failed_launches);
        for (list, fails) in [(bad, true), (allowed, false)] {
            if list.is_empty() {
                continue;
            }
            v.push(Finding {
                gate: Gate::FailedLaunches,
                fails,
                message: format!(
                    "{}{} kernel launch(es) failed while running (a fault, trap or timeout; the driver's log names each): {}",
                    if fails { "" } else { "allowed (--allow-failed-launches): " },
                    list.values().sum::<u64>(),
                    tally(list)
                ),
                details: vec![],
            });
        }
        v
    }

    /// The exit code of the run: CMD's own when it failed, else the first failing
    /// gate's, else 0.
    pub fn exit_code(&self, p: &Policy, cmd_status: i32) -> i32 {
        if cmd_status != 0 {
            return cmd_status;
        }
        self.findings(p).iter().filter(|f| f.fails).map(|f| f.gate.code()).min().unwrap_or(0)
    }

    fn states(&self) -> BTreeMap<String, usize> {
        let mut m = BTreeMap::new();
        for f in &self.counts.files {
            let k = match f.state {
                State::Exit => "exit".to_string(),
                State::Signal(_) => "signal".to_string(),
                State::Checkpoint => "checkpoint".to_string(),
            };
            *m.entry(k).or_default() += 1;
        }
        m
    }

    fn drivers(&self) -> Vec<String> {
        let mut d: Vec<String> = Vec::new();
        for f in &self.counts.files {
            if let Ok(c) = crate::counts::read_file(&f.path) {
                if !d.contains(&c.driver) {
                    d.push(c.driver);
                }
            }
        }
        d
    }

    fn modules_json(&self) -> Json {
        let rows = |mode: Option<&str>| -> Vec<Json> {
            self.modules
                .iter()
                .filter(|m| match mode {
                    Some(x) => m.mode == x,
                    None => m.mode != "twin" && m.mode != "ptx",
                })
                .map(|m| json!({"image": m.image, "mode": m.mode, "library": m.library, "kernels": m.kernels, "loads": m.loads, "device_exact": m.device_exact, "notes": m.notes}))
                .collect()
        };
        json!({"reported": self.modules_reported, "twin": rows(Some("twin")), "ptx": rows(Some("ptx")), "other": rows(None)})
    }

    /// `summary.json` of the run (`command`: CMD's argv; `status`: how it ended).
    pub fn to_json(
        &self,
        p: &Policy,
        command: &[String],
        status: &CmdStatus,
        settings: &[(String, String)],
        elapsed_s: Option<f64>,
    ) -> Json {
        let t = self.total();
        let findings = self.findings(p);
        let code = self.exit_code(p, status.code());
        json!({
            "schema": "simtwin-run-summary/1",
            "command": command,
            "command_status": status.to_json(),
            "exit_code": code,
            "verdict": if code == 0 { "pass" } else if status.code() != 0 { "command-failed" } else { "fail" },
            "elapsed_s": elapsed_s,
            "settings": settings.iter().map(|(k, v)| (k.clone(), json!(v))).collect::<serde_json::Map<_, _>>(),
            "counters_dir": self.dir,
            "drivers": self.drivers(),
            "processes": {"total": self.counts.files.len(), "by_state": self.states(),
                          "not_from_clean_exit": self.counts.unclean(),
                          "files": self.counts.files.iter().map(|f| json!({"file": f.path, "state": state_tag(&f.state)})).collect::<Vec<_>>()},
            "launches": {"total": launches_total(t), "run_ns": t.launches.values().map(|l| l.run_ns).sum::<u64>(), "kernels": t.launches},
            "failed_launches": t.failed_launches,
            "copies": t.copies,
            "memsets": t.memsets,
            "allocations": t.allocations,
            "synchronizations": t.synchronizations,
            "zero_copy": t.zero_copy,
            "calls": t.calls.values().sum::<u64>(),
            "failures": t.failures,
            "unsupported": t.unsupported,
            "injected": t.injected.len(),
            "hazards": {"count": t.hazards.len(), "reports": t.hazards.iter().take(50).collect::<Vec<_>>()},
            "leaks": {"objects": self.leaks_uninjected, "all_processes": t.leaks.total(), "details": self.leak_details.iter().take(50).collect::<Vec<_>>()},
            "never_ran": t.never_ran,
            "modules": self.modules_json(),
            "findings": findings.iter().map(|f| json!({"gate": f.gate.name(), "code": f.gate.code(), "fails": f.fails, "message": f.message, "details": f.details})).collect::<Vec<_>>(),
        })
    }

    fn module_line(&self) -> String {
        if !self.modules_reported {
            return "not reported by this driver".into();
        }
        let names = |mode: &str| {
            let v: Vec<String> = self.modules.iter().filter(|m| m.mode == mode).map(module_name).collect();
            if v.is_empty() {
                "0 ".to_string()
            } else {
                format!("{} ({}) ", v.len(), v.join(", "))
            }
        };
        let other = self.modules.iter().filter(|m| m.mode != "twin" && m.mode != "ptx").count();
        let inexact = self.modules.iter().filter(|m| m.device_exact == Some(false)).count();
        format!(
            "{}as host twins, {}from PTX{}{}",
            names("twin"),
            names("ptx"),
            if other > 0 { format!(", {other} of another mode") } else { String::new() },
            if inexact > 0 { format!("; {inexact} not device-exact") } else { String::new() }
        )
    }

    /// Where the emulated time went: the executor's time over every launch (the counters'
    /// `run_ns`, measured by the emulated driver) and the kernels that took most of it,
    /// each with its share and the path its threads take (the module notes' "threads of
    /// K: PATH: why"). None when no launch was timed (pass-through, older drivers).
    fn time_line(&self, t: &Counters) -> Option<String> {
        let run_ns = self.counts.run_ns();
        let total: u64 = run_ns.values().sum();
        if total == 0 {
            return None;
        }
        let mut top: Vec<(&String, u64)> = run_ns.iter().map(|(k, &v)| (k, v)).collect();
        top.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
        let share = |ns: u64| format!("{:.0}%", ns as f64 * 100.0 / total as f64);
        let mut parts: Vec<String> = top
            .iter()
            .take(3)
            .map(|&(k, ns)| match self.thread_path(k) {
                Some(path) => format!("{k} {} ({path})", share(ns)),
                None => format!("{k} {}", share(ns)),
            })
            .collect();
        if top.len() > 3 {
            let rest: u64 = top[3..].iter().map(|&(_, ns)| ns).sum();
            parts.push(format!("{} more {}", top.len() - 3, share(rest)));
        }
        Some(format!("time in kernels: {} over {} launch(es): {}", seconds(total), launches_total(t), parts.join(", ")))
    }

    /// The path kernel `k`'s threads take in PTX mode, from the module notes.
    fn thread_path(&self, k: &str) -> Option<String> {
        crate::counts::thread_path(self.modules.iter().flat_map(|m| &m.notes), k)
    }

    /// The lines printed when the run ends.
    pub fn text(&self, p: &Policy, command: &[String], status: &CmdStatus) -> String {
        let t = self.total();
        let mut s = String::new();
        let code = self.exit_code(p, status.code());
        if command.is_empty() {
            let _ = writeln!(s, "simtwin: summary of the counters in {}", self.dir.display());
        } else {
            let _ = writeln!(s, "simtwin: summary of `{}` ({})", crate::template::display(command), status.describe());
        }
        let states = self.states();
        let _ = writeln!(
            s,
            "  processes on simtwin's driver: {}{}",
            self.counts.files.len(),
            if states.is_empty() {
                String::new()
            } else {
                format!(" ({})", states.iter().map(|(k, n)| format!("{n} {k}")).collect::<Vec<_>>().join(", "))
            }
        );
        let mut top: Vec<(&String, u64)> = t.launches.iter().map(|(k, v)| (k, v.count)).collect();
        top.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
        let _ = writeln!(
            s,
            "  kernel launches: {} of {} kernel(s){}{}",
            launches_total(t),
            t.launches.len(),
            if top.is_empty() { String::new() } else { format!(": {}", tally(top.iter().take(5).copied())) },
            if top.len() > 5 { ", ..." } else { "" }
        );
        if !t.failed_launches.is_empty() {
            let _ = writeln!(s, "  failed launches: {}", tally(&t.failed_launches));
        }
        if let Some(l) = self.time_line(t) {
            let _ = writeln!(s, "  {l}");
        }
        let c = &t.copies;
        let _ = writeln!(
            s,
            "  copies: HtoD {}, DtoH {}, DtoD {}, HtoH {}; memsets {}; allocations {} ({}), frees {}; synchronisations {}",
            traffic(&c.htod),
            traffic(&c.dtoh),
            traffic(&c.dtod),
            traffic(&c.htoh),
            traffic(&t.memsets),
            t.allocations.count,
            bytes(t.allocations.bytes),
            t.allocations.frees,
            t.synchronizations
        );
        let _ = writeln!(s, "  modules: {}", self.module_line());
        for m in self.modules.iter().filter(|m| m.device_exact == Some(false)) {
            let _ = writeln!(
                s,
                "      not device-exact: {}: {}",
                module_name(m),
                if m.notes.is_empty() { "(no reason given)".to_string() } else { m.notes.join("; ") }
            );
        }
        let _ = writeln!(s, "  unsupported calls: {}", if t.unsupported.is_empty() { "none".to_string() } else { tally(&t.unsupported) });
        let _ = writeln!(s, "  hazards: {}", t.hazards.len());
        let _ = writeln!(s, "  leaks: {}", self.leaks_uninjected);
        if !t.injected.is_empty() {
            let _ = writeln!(s, "  injected failures (EMU_CUDA_FAIL): {}", t.injected.len());
        }
        for u in self.counts.unclean() {
            let _ = writeln!(s, "  counters NOT from a clean exit: {u}");
        }
        for f in self.findings(p) {
            let _ = writeln!(s, "  {} [{}] {}", if f.fails { "FAIL" } else { "note" }, f.gate.name(), f.message);
            for d in f.details.iter().take(5) {
                let _ = writeln!(s, "      {d}");
            }
        }
        let _ = writeln!(s, "simtwin: {} (exit {code})", verdict_line(code, status.code()));
        s
    }

    /// `summary.md` (GitHub-flavoured, fit for $GITHUB_STEP_SUMMARY).
    pub fn markdown(&self, p: &Policy, command: &[String], status: &CmdStatus) -> String {
        let t = self.total();
        let code = self.exit_code(p, status.code());
        let mut m = String::new();
        let _ = writeln!(m, "## simtwin run: {}\n", verdict_line(code, status.code()));
        if !command.is_empty() {
            let _ = writeln!(m, "`{}` {} — exit code {code}\n", crate::template::display(command).replace('`', "'"), status.describe());
        }
        let _ = writeln!(m, "| | |\n|---|---|");
        let _ = writeln!(m, "| processes on simtwin's driver | {} |", self.counts.files.len());
        let _ = writeln!(m, "| kernel launches | {} ({} kernels) |", launches_total(t), t.launches.len());
        if let Some(l) = self.time_line(t) {
            let _ = writeln!(m, "| {} |", l.replacen(": ", " | ", 1).replace('`', "'"));
        }
        let c = &t.copies;
        let _ = writeln!(
            m,
            "| copies HtoD / DtoH / DtoD / HtoH | {} / {} / {} / {} ({} / {} / {} / {}) |",
            c.htod.count,
            c.dtoh.count,
            c.dtod.count,
            c.htoh.count,
            bytes(c.htod.bytes),
            bytes(c.dtoh.bytes),
            bytes(c.dtod.bytes),
            bytes(c.htoh.bytes)
        );
        let _ = writeln!(m, "| allocations / frees | {} / {} |", t.allocations.count, t.allocations.frees);
        let _ = writeln!(m, "| synchronisations | {} |", t.synchronizations);
        let _ = writeln!(m, "| modules | {} |", self.module_line().replace('|', "\\|"));
        let _ = writeln!(m, "| unsupported calls | {} |", t.unsupported.values().sum::<u64>());
        let _ = writeln!(m, "| hazards | {} |", t.hazards.len());
        let _ = writeln!(m, "| leaked objects | {} |\n", self.leaks_uninjected);
        for f in self.findings(p) {
            let _ = writeln!(m, "- {} **{}**: {}", if f.fails { "❌" } else { "ℹ️" }, f.gate.name(), f.message.replace('|', "\\|"));
            for d in f.details.iter().take(10) {
                let _ = writeln!(m, "  - `{}`", d.replace('`', "'"));
            }
        }
        if !self.modules.is_empty() {
            let _ = writeln!(m, "\n| module | mode | library | kernels | loads | device-exact |\n|---|---|---|---|---|---|");
            for r in &self.modules {
                let exact = match r.device_exact {
                    Some(true) => "yes".to_string(),
                    Some(false) => format!("no: {}", r.notes.join("; ").replace('|', "\\|")),
                    None => "-".to_string(),
                };
                let _ = writeln!(
                    m,
                    "| {} | {} | `{}` | {} | {} | {exact} |",
                    r.image.replace('|', "\\|"),
                    r.mode,
                    r.library,
                    r.kernels,
                    r.loads
                );
            }
        }
        m
    }

    /// JUnit: the command and one case per gate.
    pub fn junit(&self, p: &Policy, command: &[String], status: &CmdStatus, elapsed_s: Option<f64>) -> Vec<Suite> {
        let findings = self.findings(p);
        let mut cases = vec![Case {
            classname: "simtwin.run".into(),
            name: "command".into(),
            time: elapsed_s,
            outcome: if status.code() == 0 {
                Outcome::Pass
            } else {
                Outcome::Failure { message: status.describe(), text: crate::template::display(command) }
            },
            stdout: None,
        }];
        for g in Gate::ALL {
            let fs: Vec<&Finding> = findings.iter().filter(|f| f.gate == g).collect();
            let failing = fs.iter().find(|f| f.fails);
            let text = |f: &Finding| std::iter::once(f.message.clone()).chain(f.details.iter().cloned()).collect::<Vec<_>>().join("\n");
            let case = Case::check("simtwin.run", g.name(), failing.map(|f| (f.message.clone(), text(f))));
            cases.push(case.with_stdout(fs.iter().filter(|f| !f.fails).map(|f| text(f)).collect::<Vec<_>>().join("\n")));
        }
        vec![Suite { name: "simtwin run".into(), cases, time: elapsed_s }]
    }
}

/// The entries of `counts` no pattern of `allow` matches (`*` wildcards), and those it does.
fn split_allowed(counts: &BTreeMap<String, u64>, allow: &[String]) -> (BTreeMap<String, u64>, BTreeMap<String, u64>) {
    counts.iter().map(|(k, v)| (k.clone(), *v)).partition(|(k, _)| !allow.iter().any(|pat| glob(pat, k)))
}

/// `a x2, b x1`: named counts.
fn tally<K: std::fmt::Display, N: std::fmt::Display>(counts: impl IntoIterator<Item = (K, N)>) -> String {
    counts.into_iter().map(|(k, n)| format!("{k} x{n}")).collect::<Vec<_>>().join(", ")
}

/// A duration in nanoseconds: seconds or milliseconds to three decimals, or microseconds.
fn seconds(ns: u64) -> String {
    let ms = ns as f64 / 1e6;
    if ms >= 1000.0 {
        format!("{:.3} s", ms / 1000.0)
    } else if ms >= 1.0 {
        format!("{ms:.3} ms")
    } else {
        format!("{:.1} us", ns as f64 / 1e3)
    }
}

fn launches_total(t: &Counters) -> u64 {
    t.launches.values().map(|l| l.count).sum()
}

fn module_name(m: &ModuleRow) -> String {
    let lib = Path::new(&m.library).file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    match (m.image.is_empty(), lib.is_empty()) {
        (false, false) => format!("{} -> {lib}", m.image),
        (false, true) => m.image.clone(),
        _ => lib,
    }
}

fn verdict_line(code: i32, cmd: i32) -> String {
    match (code, cmd) {
        (0, _) => "PASS".into(),
        (_, 0) if gate_of(code) == Some(Gate::FailedLaunches) => {
            "FAIL: a kernel failed while running and the command went on (failed-launches)".into()
        }
        (_, 0) => format!(
            "FAIL: simtwin saw what the device would not allow or what it does not emulate ({})",
            gate_of(code).map(|g| g.name()).unwrap_or("?")
        ),
        _ => "FAIL: the command failed".into(),
    }
}

fn gate_of(code: i32) -> Option<Gate> {
    Gate::ALL.into_iter().find(|g| g.code() == code)
}

/// `3 (1.5 KiB)`: operations and their bytes.
fn traffic(t: &simtwin_abi::counters::Traffic) -> String {
    format!("{} ({})", t.count, bytes(t.bytes))
}

/// `1.5 KiB`, `300 B`.
pub fn bytes(b: u64) -> String {
    let units = [(1u64 << 30, "GiB"), (1 << 20, "MiB"), (1 << 10, "KiB")];
    for (u, n) in units {
        if b >= u {
            let x = format!("{:.1}", b as f64 / u as f64);
            return format!("{} {n}", x.strip_suffix(".0").unwrap_or(&x));
        }
    }
    format!("{b} B")
}

/// How the command ended.
#[derive(Debug, Clone, PartialEq)]
pub enum CmdStatus {
    /// Its exit status.
    Exit(i32),
    /// Killed by this signal.
    Signal(i32),
    /// No command (`simtwin summary`).
    None,
}

impl CmdStatus {
    /// The shell's code for it: the status, or 128 + the signal.
    pub fn code(&self) -> i32 {
        match self {
            CmdStatus::Exit(c) => *c,
            CmdStatus::Signal(s) => 128 + s,
            CmdStatus::None => 0,
        }
    }
    fn describe(&self) -> String {
        match self {
            CmdStatus::Exit(c) => format!("exit status {c}"),
            CmdStatus::Signal(s) => format!("killed by {}", crate::run::signal_name(*s)),
            CmdStatus::None => "counters only".into(),
        }
    }
    fn to_json(&self) -> Json {
        match self {
            CmdStatus::Exit(c) => json!({"exit": c}),
            CmdStatus::Signal(s) => json!({"signal": crate::run::signal_name(*s)}),
            CmdStatus::None => Json::Null,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use simtwin_abi::counters::{Hazard, LaunchCount};

    fn write(dir: &Path, c: &Counters, modules: Option<Json>) {
        let mut v: Json = serde_json::from_str(&c.to_text()).unwrap();
        if let Some(m) = modules {
            v["modules"] = m;
        }
        std::fs::write(dir.join(format!("counts-{}.json", c.pid)), v.to_string()).unwrap();
    }

    #[test]
    fn time_in_kernels_gives_shares_summed_over_processes_and_each_kernels_path() {
        let d = tempfile::tempdir().unwrap();
        let launch = |count, run_ns| LaunchCount { count, threads: 32 * count, blocks: count, run_ns };
        let mut a = Counters::new("emulated");
        a.pid = 1;
        a.launches.insert("hori".into(), launch(2, 5_000_000));
        a.launches.insert("vert".into(), launch(2, 2_000_000));
        a.launches.insert("tiny".into(), launch(1, 500_000));
        let mut b = Counters::new("emulated");
        b.pid = 2;
        b.launches.insert("hori".into(), launch(1, 1_000_000));
        b.launches.insert("reduce".into(), launch(1, 1_000_000));
        b.launches.insert("copy".into(), launch(1, 500_000));
        let m = json!([{"image": "vif.fatbin", "mode": "ptx", "library": "/c/v.so", "kernels": 2,
                        "notes": ["threads of hori: loops over threads: 5 warp collectives", "threads of vert: one after another: no barrier"]}]);
        write(d.path(), &a, Some(m));
        write(d.path(), &b, None);
        let u = Usage::read(d.path()).unwrap();
        let text = u.text(&Policy::default(), &["vmaf".into()], &CmdStatus::Exit(0));
        assert!(
            text.contains("time in kernels: 10.000 ms over 8 launch(es): hori 60% (loops over threads), vert 20% (one after another), reduce 10%, 2 more 10%"),
            "{text}"
        );
        let md = u.markdown(&Policy::default(), &["vmaf".into()], &CmdStatus::Exit(0));
        assert!(md.contains("| time in kernels | 10.000 ms over 8 launch(es): hori 60% (loops over threads), vert 20%"), "{md}");
        let j = u.to_json(&Policy::default(), &["vmaf".into()], &CmdStatus::Exit(0), &[], None);
        assert_eq!(j["launches"]["run_ns"], 10_000_000);
        assert_eq!(j["launches"]["kernels"]["hori"]["run_ns"], 6_000_000);
        // A pass-through run (no run_ns in its files) has no such line.
        let d = tempfile::tempdir().unwrap();
        let mut c = Counters::new("passthrough");
        c.launches.insert("hori".into(), launch(2, 0));
        write(d.path(), &c, None);
        let text = Usage::read(d.path()).unwrap().text(&Policy::default(), &["vmaf".into()], &CmdStatus::Exit(0));
        assert!(!text.contains("time in kernels") && text.contains("kernel launches: 2 of 1 kernel(s)"), "{text}");
        assert!(!c.to_text().contains("run_ns"), "not measured: not written");
    }

    #[test]
    fn gates_choose_the_exit_code_and_modules_are_grouped() {
        let d = tempfile::tempdir().unwrap();
        let mut a = Counters::new("emulated");
        a.pid = 1;
        a.launches.insert("k".into(), LaunchCount { count: 3, threads: 96, blocks: 3, run_ns: 0 });
        a.unsupported.insert("cuTexObjectCreate".into(), 2);
        a.hazards.push(Hazard { kind: "barrier-divergence".into(), occurrences: 4, ..Default::default() });
        let mut b = Counters::new("emulated");
        b.pid = 2;
        b.leaks.modules = 1;
        b.leaks.details.push("module 1 still loaded at exit".into());
        let mut c = Counters::new("emulated");
        c.pid = 3;
        c.leaks.streams = 5;
        c.injected.push(simtwin_abi::counters::Injected { name: "cuStreamDestroy_v2".into(), call: 1, code: 1 });
        let m = json!([{"image": "sse.fatbin#1a2b", "mode": "twin", "library": "/k/sse.so", "kernels": 3},
                       {"image": "topk.ptx", "mode": "ptx", "library": "/cache/ab.so", "kernels": 7, "device_exact": false, "notes": ["ex2.approx not modelled"]}]);
        write(d.path(), &a, Some(m.clone()));
        write(d.path(), &b, Some(json!([m[0].clone()])));
        write(d.path(), &c, None);
        let u = Usage::read(d.path()).unwrap();
        assert_eq!(u.counts.files.len(), 3);
        assert_eq!(u.leaks_uninjected, 1, "the leaking process with injected failures is left out");
        assert!(u.modules_reported);
        assert_eq!(u.modules.len(), 2);
        let twin = u.modules.iter().find(|r| r.mode == "twin").unwrap();
        assert_eq!((twin.loads, twin.kernels), (2, 3));
        let p = Policy::default();
        assert_eq!(u.exit_code(&p, 0), 80);
        assert_eq!(u.exit_code(&p, 3), 3, "the command's own failure wins");
        let p = Policy { allow_unsupported: vec!["cuTex*".into()], ..Default::default() };
        assert_eq!(u.exit_code(&p, 0), 0, "hazards in warn mode and leaks are notes");
        let p = Policy { allow_unsupported: vec!["*".into()], hazards_error: true, ..Default::default() };
        assert_eq!(u.exit_code(&p, 0), 81);
        let p = Policy { allow_unsupported: vec!["*".into()], fail_on: vec![Gate::Leaks], ..Default::default() };
        assert_eq!(u.exit_code(&p, 0), 83);
        let text = u.text(&Policy::default(), &["ctest".into()], &CmdStatus::Exit(0));
        assert!(text.contains("kernel launches: 3 of 1 kernel(s): k x3"), "{text}");
        assert!(
            text.contains("modules: 1 (sse.fatbin#1a2b -> sse.so) as host twins, 1 (topk.ptx -> ab.so) from PTX; 1 not device-exact"),
            "{text}"
        );
        assert!(text.contains("not device-exact: topk.ptx -> ab.so: ex2.approx not modelled"), "{text}");
        assert!(text.contains("FAIL [unsupported] 2 call(s)") && text.contains("cuTexObjectCreate x2"), "{text}");
        assert!(text.contains("note [hazards] 1 hazard report(s): barrier-divergence x4"), "{text}");
        assert!(text.contains("(exit 80)"), "{text}");
        let j = u.to_json(&Policy::default(), &["ctest".into()], &CmdStatus::Exit(0), &[], None);
        assert_eq!(j["exit_code"], 80);
        assert_eq!(j["modules"]["ptx"][0]["kernels"], 7);
        let x = crate::junit::render("simtwin", &u.junit(&Policy::default(), &["ctest".into()], &CmdStatus::Exit(0), None));
        assert!(x.contains("tests=\"7\" failures=\"1\""), "{x}");
        // no counters at all: a note, or exit 84 when asked for
        let e = tempfile::tempdir().unwrap();
        let u = Usage::read(&e.path().join("none")).unwrap();
        assert_eq!(u.exit_code(&Policy::default(), 0), 0);
        assert_eq!(u.exit_code(&Policy { fail_on: vec![Gate::NoDriver], ..Default::default() }, 0), 84);
        assert!(u.text(&Policy::default(), &["x".into()], &CmdStatus::Exit(0)).contains("modules: not reported by this driver"));
    }

    #[test]
    fn a_failed_launch_fails_a_run_whose_command_went_on_unless_allowed() {
        let d = tempfile::tempdir().unwrap();
        let mut a = Counters::new("emulated");
        a.pid = 7;
        a.launches.insert("ok_kernel".into(), LaunchCount { count: 2, threads: 64, blocks: 2, run_ns: 0 });
        a.failed_launches.insert("_Z11srad_cuda_1PfS_S_S_S_S_iif".into(), 1);
        a.failed_launches.insert("trap_on_purpose".into(), 3);
        write(d.path(), &a, None);
        let u = Usage::read(d.path()).unwrap();
        let p = Policy::default();
        assert_eq!(u.exit_code(&p, 0), 85);
        assert_eq!(u.exit_code(&p, 1), 1, "the command's own failure wins");
        let text = u.text(&p, &["./srad".into()], &CmdStatus::Exit(0));
        assert!(
            text.contains("FAIL [failed-launches] 4 kernel launch(es) failed while running")
                && text.contains("_Z11srad_cuda_1PfS_S_S_S_S_iif x1, trap_on_purpose x3"),
            "{text}"
        );
        assert!(text.contains("FAIL: a kernel failed while running and the command went on (failed-launches) (exit 85)"), "{text}");
        // Allowing one kernel leaves the other failing; allowing both makes them a note.
        let p = Policy { allow_failed_launches: vec!["trap_*".into()], ..Default::default() };
        assert_eq!(u.exit_code(&p, 0), 85);
        let text = u.text(&p, &["./srad".into()], &CmdStatus::Exit(0));
        assert!(text.contains("FAIL [failed-launches] 1 kernel launch(es)"), "{text}");
        assert!(text.contains("allowed (--allow-failed-launches): 3 kernel launch(es)"), "{text}");
        let p = Policy { allow_failed_launches: vec!["*".into()], ..Default::default() };
        assert_eq!(u.exit_code(&p, 0), 0);
        // A hazard that failed the launch (--hazards error) keeps its own code, the lower.
        let p = Policy { hazards_error: true, ..Default::default() };
        let mut b = a.clone();
        b.pid = 8;
        b.hazards.push(Hazard { kind: "barrier-divergence".into(), occurrences: 1, ..Default::default() });
        write(d.path(), &b, None);
        assert_eq!(Usage::read(d.path()).unwrap().exit_code(&p, 0), 81);
        let x = crate::junit::render("simtwin", &u.junit(&Policy::default(), &["./srad".into()], &CmdStatus::Exit(0), None));
        assert!(x.contains("failed-launches") && x.contains("tests=\"7\" failures=\"1\""), "{x}");
    }

    #[test]
    fn sizes_and_statuses_read_well() {
        assert_eq!(bytes(300), "300 B");
        assert_eq!(bytes(1536), "1.5 KiB");
        assert_eq!(bytes(3 << 20), "3 MiB");
        assert_eq!(CmdStatus::Signal(9).code(), 137);
        assert_eq!(CmdStatus::Exit(4).code(), 4);
    }
}
